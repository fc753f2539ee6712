"""The compressed name index (issue 15, item 4): recall against exact search computed here with numpy,
the choice of kind at its size thresholds, the saved pair, damaged files rebuilt, and parallel
encoding giving the vectors a serial encode gives."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import faiss
import numpy as np
import pytest

from core.errors import Cancelled
from core.kb.knowledge_base import KnowledgeBase, NameEntry
from core.progress import CancelToken
from core.retrieve.index import NameIndex
from core.retrieve.index_build import build_streaming
from core.retrieve.index_file import IndexDamaged, file_digest

TINY = dict(hidden=64, filters=32, depth=2)


def clustered(count: int, dim: int = 32, clusters: int = 300, seed: int = 0) -> np.ndarray:
    """Unit vectors in tight groups, as a thesaurus's names are (a concept's names lie close)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim)).astype(np.float32)
    vectors = centres[rng.integers(0, clusters, count)] + 0.35 * rng.standard_normal((count, dim)).astype(
        np.float32
    )
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def rows_for(count: int) -> list[NameEntry]:
    return [NameEntry(f"name {i}", f"C{i // 3}", i % 3 == 0) for i in range(count)]


def numpy_top(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(-(queries @ vectors.T), axis=1, kind="stable")[:, :k]


def lookup_encoder(vectors: np.ndarray, chunk: int = 700):
    """A chunk encoder over known vectors (row i is the name "name i"): the build path without a model."""

    def encode_chunks(texts):
        for start in range(0, len(texts), chunk):
            yield vectors[[int(t.split()[1]) for t in texts[start : start + chunk]]]

    return encode_chunks


@pytest.mark.parametrize("kind", ["ivf-sq8", "ivf-sq6"])
def test_the_compressed_index_keeps_95_percent_of_the_exact_top_64(tmp_path: Path, caplog, kind: str) -> None:
    vectors = clustered(12_000)
    rng = np.random.default_rng(1)
    queries = vectors[rng.choice(len(vectors), 200, replace=False)] + 0.2 * rng.standard_normal((200, 32))
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    with caplog.at_level(logging.INFO, logger="core.retrieve.index_build"):
        index, report = build_streaming(rows_for(len(vectors)), lookup_encoder(vectors), 32, kind=kind)
    assert isinstance(index.faiss, faiss.IndexIVFScalarQuantizer)
    exact = numpy_top(vectors, queries, 64)
    _, found = index.search(queries, 256)
    recall = np.mean([len(set(a[:64]) & set(b)) / 64 for a, b in zip(found.tolist(), exact.tolist())])
    assert recall >= 0.95
    assert index.search_params["nprobe"] < index.faiss.nlist  # tuned, not an exhaustive scan
    stated = index.recall["recall_at_64_vs_exact"]
    assert stated >= 0.97 and report.recall == index.recall
    assert any("keeps" in r.message and "exact top-64" in r.message for r in caplog.records)
    index.save(tmp_path, "stem")
    sidecar = json.loads((tmp_path / "stem.json").read_text())
    assert sidecar["kind"] == kind and sidecar["recall"]["recall_at_64_vs_exact"] == stated
    assert sidecar["search"] == index.search_params


@pytest.mark.parametrize(
    ("size", "kind"),
    [(99, "flat"), (100, "hnsw"), (999, "hnsw"), (1000, "ivf-sq8"), (2499, "ivf-sq8"), (2500, "ivf-sq6")],
)
def test_the_kind_is_chosen_at_the_thresholds(size: int, kind: str) -> None:
    vectors = clustered(size, clusters=40)
    index, _ = build_streaming(
        rows_for(size),
        lookup_encoder(vectors),
        32,
        threshold=100,
        compressed_threshold=1000,
        laptop_threshold=2500,
    )
    assert index.kind == kind and len(index) == size and index.faiss.ntotal == size
    expected = {
        "flat": faiss.IndexFlatIP,
        "hnsw": faiss.IndexHNSWFlat,
        "ivf-sq8": faiss.IndexIVFScalarQuantizer,
        "ivf-sq6": faiss.IndexIVFScalarQuantizer,
    }
    assert isinstance(index.faiss, expected[kind])
    # the training sample goes in first and the rest after it, yet each row keeps its own vector
    picks = np.arange(0, size, max(1, size // 25))
    _, found = index.search(vectors[picks], 1)
    assert (found[:, 0] == picks).mean() >= 0.9  # SQ8 codes: a near copy may tie with the name itself


@pytest.mark.parametrize("kind", ["ivf-sq8", "ivf-sq6", "ivf-pq"])
def test_a_compressed_index_round_trips_with_its_setting_and_recall(tmp_path: Path, kind: str) -> None:
    vectors = clustered(2000)
    index = NameIndex.build(vectors, rows_for(2000), kind=kind)
    index.save(tmp_path, "stem")
    loaded = NameIndex.load(tmp_path, "stem", dim=32)
    assert loaded.kind == kind and loaded.search_params == index.search_params
    assert loaded.faiss.nprobe == index.faiss.nprobe and loaded.recall == index.recall
    queries = vectors[:50]
    assert (loaded.search(queries, 64)[1] == index.search(queries, 64)[1]).all()
    loaded.add(clustered(10, seed=5), rows_for(10))  # new synonyms join a loaded compressed index
    assert loaded.faiss.ntotal == len(loaded) == 2010


@pytest.mark.parametrize("kind", ["ivf-sq8", "ivf-sq6", "ivf-pq", "ivf"])
def test_a_truncated_compressed_file_is_refused_by_the_walk_not_by_faiss(tmp_path: Path, kind: str) -> None:
    """The sidecar is rewritten to match each cut file (length and hash), so only the structure walk
    can tell; FAISS never sees it."""
    NameIndex.build(clustered(2000), rows_for(2000), kind=kind).save(tmp_path, "stem")
    path, sidecar_path = tmp_path / "stem.faiss", tmp_path / "stem.json"
    whole, sidecar = path.read_bytes(), json.loads(sidecar_path.read_text())
    for cut in (4, 40, 60, 200, len(whole) // 3, len(whole) // 2, len(whole) - 9, len(whole) - 1):
        path.write_bytes(whole[:cut])
        sidecar.update(faiss_bytes=cut, faiss_sha256=file_digest(path))
        sidecar_path.write_text(json.dumps(sidecar))
        with pytest.raises(IndexDamaged) as caught:
            NameIndex.load(tmp_path, "stem")
        assert "FAISS cannot read" not in str(caught.value), cut


def test_a_crafted_list_size_is_refused(tmp_path: Path) -> None:
    NameIndex.build(clustered(2000), rows_for(2000), kind="ivf-sq8").save(tmp_path, "stem")
    path = tmp_path / "stem.faiss"
    data = bytearray(path.read_bytes())
    at = data.rindex(b"ilar")
    layout = bytes(data[at + 20 : at + 24])
    first = at + 24 + 8 + (8 if layout == b"sprs" else 0)  # the first list's entry count
    data[first : first + 8] = (1 << 40).to_bytes(8, "little")
    path.write_bytes(bytes(data))
    sidecar = json.loads((tmp_path / "stem.json").read_text())
    sidecar.update(faiss_bytes=len(data), faiss_sha256=file_digest(path))
    (tmp_path / "stem.json").write_text(json.dumps(sidecar))
    with pytest.raises(IndexDamaged, match="do not add up"):
        NameIndex.load(tmp_path, "stem")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    """An untrained tiny ResCNN (MiniLM embeddings): vectors need not be good to be compared."""
    import torch

    from core.retrieve.rescnn import RescnnConfig, build_model, save_model

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("models") / "tiny"
    save_model(build_model(RescnnConfig(**TINY)), folder)
    return folder


@pytest.fixture(scope="module")
def umls_kb(tmp_path_factory) -> KnowledgeBase:
    from bench.synthetic.umls import write_synthetic_mrconso
    from core.kb.umls_rrf import read_umls_rrf

    path = tmp_path_factory.mktemp("umls") / "MRCONSO.RRF"
    write_synthetic_mrconso(path, 5000, words=("renal", "cortical", "ductal", "ocular", "vascular", "spinal"))
    return KnowledgeBase(read_umls_rrf(path))


def test_a_truncated_compressed_index_is_rebuilt_by_the_retriever(
    tiny_model, umls_kb, tmp_path, caplog
) -> None:
    from core.retrieve.rescnn_retriever import RescnnRetriever

    index_dir = tmp_path / "index"
    retriever = RescnnRetriever.load(tiny_model, index_dir=index_dir, index_kind="ivf-sq8")
    retriever.index(umls_kb)
    before = [c.concept_id for c in retriever.retrieve(["renal cardiitis"], 5)[0]]
    faiss_file = next(index_dir.glob("*.faiss"))
    faiss_file.write_bytes(faiss_file.read_bytes()[: faiss_file.stat().st_size // 2])
    again = RescnnRetriever.load(tiny_model, index_dir=index_dir, index_kind="ivf-sq8")
    with caplog.at_level(logging.WARNING):
        again.index(umls_kb)
    assert any(faiss_file.name in r.message and "rebuilding" in r.message for r in caplog.records)
    assert again.name_index.kind == "ivf-sq8"
    assert [c.concept_id for c in again.retrieve(["renal cardiitis"], 5)[0]] == before
    caplog.clear()
    third = RescnnRetriever.load(tiny_model, index_dir=index_dir)
    with caplog.at_level(logging.INFO):
        third.index(umls_kb)  # the rebuilt pair loads (as ivf-sq8, whatever the size rule says)
    assert third.name_index.kind == "ivf-sq8" and not any("rebuilding" in r.message for r in caplog.records)


def test_parallel_encoding_gives_the_serial_vectors(tiny_model, umls_kb) -> None:
    from core.retrieve.encoder import RescnnEncoder
    from core.retrieve.parallel_encode import ParallelEncoder
    from core.retrieve.rescnn_retriever import RescnnRetriever

    names = [e.name for e in umls_kb.names]
    serial = RescnnEncoder.load(tiny_model).encode(names)
    retriever = RescnnRetriever.load(tiny_model, encode_workers=2, index_kind="flat")
    index = retriever.build_index(list(umls_kb.names))  # two worker processes, chunks merged in order
    merged = index.faiss.reconstruct_n(0, len(names))
    assert merged.shape == serial.shape
    np.testing.assert_allclose(merged, serial, atol=1e-5)  # thread count changes summation order only
    cancel = CancelToken()
    cancel.cancel()
    with ParallelEncoder(tiny_model, workers=2, chunk=100, cancel=cancel) as parallel:
        with pytest.raises(Cancelled):
            list(parallel.encode_chunks(names))


def test_ray_encoding_matches_when_ray_is_installed(tiny_model, umls_kb) -> None:
    pytest.importorskip("ray", reason="Ray is an optional extra")
    from core.retrieve.encoder import RescnnEncoder
    from core.retrieve.parallel_encode import ParallelEncoder

    names = [e.name for e in umls_kb.names][:600]
    with ParallelEncoder(tiny_model, workers=2, engine="ray", chunk=200) as parallel:
        merged = np.vstack(list(parallel.encode_chunks(names)))
    np.testing.assert_allclose(merged, RescnnEncoder.load(tiny_model).encode(names), atol=1e-5)


def test_an_index_saved_before_tuning_loads_with_its_defaults_and_a_wrong_kind_is_never_misread(
    tmp_path: Path,
) -> None:
    """Sidecars of format 2 (no search setting, no recall) keep loading; a sidecar naming another kind
    than its file holds is refused (and rebuilt by the retriever), never read as that kind."""
    NameIndex.build(clustered(2000), rows_for(2000), kind="ivf").save(tmp_path, "stem")
    sidecar_path = tmp_path / "stem.json"
    sidecar = json.loads(sidecar_path.read_text())
    older = {k: v for k, v in sidecar.items() if k not in ("search", "recall")} | {"format": 2}
    sidecar_path.write_text(json.dumps(older))
    loaded = NameIndex.load(tmp_path, "stem")
    assert loaded.kind == "ivf" and loaded.faiss.nprobe == 32 and loaded.recall is None
    sidecar_path.write_text(json.dumps(older | {"kind": "ivf-sq8"}))
    with pytest.raises(IndexDamaged, match="not a FAISS index of the kind its sidecar names"):
        NameIndex.load(tmp_path, "stem")
    sidecar_path.write_text(json.dumps(sidecar | {"search": {"efSearch": 64}}))
    with pytest.raises(IndexDamaged, match="search setting"):
        NameIndex.load(tmp_path, "stem")
