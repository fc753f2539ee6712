"""Curalink's test harness: benchmarks, synthetic-data builders, the fault harness and the fuzz targets.

Not part of the product: the packaged app leaves it out, and nothing in core/ or app/ imports it
(tests/test_harness_out_of_product.py checks both). `curalink bench ...` loads it from a clone
(`pip install -e .`); it may import core and app, never the reverse.
"""
