"""`curalink bench index`'s extrapolation to 15 M names, on a hand-made 1 M run: the code bytes of each
compressed kind, the mapped rows capped by their file, and the memory target judged for the kind the
size rule picks there (IVF-SQ6), each figure worked out here by hand."""

from __future__ import annotations

from bench.index import _summarise

RUN = {
    "names": 1_000_000,
    "index_kind": "ivf-sq8",
    "names_per_s_end_to_end": 1000.0,
    "build_parts_s": {"encode_wait": 500.0, "train": 40.0, "add": 20.0, "tune": 30.0},
    "float_vectors_mb": 1_000_000 * 256 * 4 / 2**20,  # 256 dimensions
    "rows_file_mb": 50.0,
    "load_faiss_only": {"before_load_mb": 50.0, "peak_mb": 50.0 + 256.0},
    "load_with_rows": {"before_load_mb": 50.0, "peak_mb": 50.0 + 256.0 + 60.0},  # more than the file
    "recall@64_vs_exact": 0.97,
    "query_p50_ms": 40.0,
}


def test_extrapolation_to_a_full_umls() -> None:
    report = {"runs": [dict(RUN)]}
    _summarise(report, 15_000_000)
    last = report["extrapolated_15000000"]
    lists = int(4 * 15_000_000**0.5)  # 15,491 centroids of 1 KB
    assert last["ivf_sq8_index_gib"] == round((15e6 * (256 + 8) + lists * 1024) / 2**30, 2) == 3.70
    assert last["ivf_sq6_index_gib"] == round((15e6 * (192 + 8) + lists * 1024) / 2**30, 2) == 2.81
    assert last["loaded_faiss_gib"] == round(256 * 15 / 1024, 2) == 3.75
    assert last["name_rows_resident_gib_at_most"] == round(50 * 15 / 1024, 2)  # the file caps the 60 MB
    assert last["encode_h_at_measured_rate"] == round(15e6 / 1000 / 3600, 2)
    assert last["index_build_s"] == round(40 * 15 + 20 * 15**1.5 + 30 * 15**0.5)
    assert last["query_p50_ms_if_lists_grow_as_sqrt_n"] == round(40 * 15**0.5, 1)
    assert last["kind_chosen"] == "ivf-sq6"
    sq6_loaded = 3.75 * 2.81 / 3.70  # the SQ8 process share scaled to SQ6's bytes
    assert last["loaded_faiss_gib_chosen_kind"] == round(sq6_loaded, 2)
    assert report["targets"]["loaded_index_with_rows_15M<=4GiB"] == (sq6_loaded + 50 * 15 / 1024 <= 4.0)
    assert report["targets"]["recall@64>=0.95_every_size"]
