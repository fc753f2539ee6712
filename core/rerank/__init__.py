"""Packed cross-encoder reranking: packing levels (`packing`), the model (`cross_encoder`), device choice
(`device`), training (`training`), score fusion (`fusion`), all behind the `Reranker` protocol (`base`).

A plain package face: importing it loads nothing (no torch), so a module that only needs the protocol
does not pay for the model stack. Import the module you need.
"""
