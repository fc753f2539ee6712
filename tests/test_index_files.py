"""Name indexes and model files survive a write that fails half-way, and damaged or crafted index files
are rebuilt, never fatal (issue 11, items 3 and 6).

A write that fails half-way is made real with RLIMIT_FSIZE: the kernel refuses every byte past the
limit (EFBIG, "File too large"), which is what a full disk does to a writer (ENOSPC) at that point.
"""

from __future__ import annotations

import json
import logging
import resource
import shutil
import signal
import struct
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from core.atomic_files import TEMP_PREFIX, FileWriteError
from core.kb.knowledge_base import NameEntry
from core.retrieve.index import NameIndex
from core.retrieve.index_file import IndexDamaged, file_digest


@contextmanager
def file_size_limit(limit: int):
    """Every write of this process past `limit` bytes of a file fails, as on a full disk."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


def _index(count: int, dim: int = 16, kind: str = "flat", name_length: int = 8, seed: int = 0) -> NameIndex:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = [NameEntry(f"{i:0{name_length}d}", f"C{i % 97}", i % 3 == 0) for i in range(count)]
    return NameIndex.build(vectors, rows, kind=kind)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(TEMP_PREFIX))


def test_an_index_write_that_fails_half_way_leaves_the_previous_index(tmp_path: Path) -> None:
    _index(50).save(tmp_path, "stem")
    bigger = _index(5000)  # 320 KB of vectors: cut off at 100 KB
    with file_size_limit(100_000), pytest.raises(FileWriteError, match=r"stem\.faiss: could not be written"):
        bigger.save(tmp_path, "stem")
    again = NameIndex.load(tmp_path, "stem")
    assert len(again) == 50 and again.faiss.ntotal == 50
    assert _leftovers(tmp_path) == []


def test_a_sidecar_write_that_fails_half_way_is_detected_not_trusted(tmp_path: Path) -> None:
    """The issue's case: a write after the .faiss fails (the names, now in the .rows file written before
    the sidecar). The .faiss went first, so the old sidecar no longer matches it: the index is refused as
    damaged (and rebuilt by the retriever), never half-read."""
    _index(50, name_length=8).save(tmp_path, "stem")
    long_names = _index(60, name_length=4000, seed=1)  # 4 KB of vectors, 240 KB of names
    with file_size_limit(100_000), pytest.raises(FileWriteError, match=r"stem\.rows: could not be written"):
        long_names.save(tmp_path, "stem")
    json.loads((tmp_path / "stem.json").read_text())  # never truncated
    with pytest.raises(IndexDamaged, match="its sidecar recorded"):
        NameIndex.load(tmp_path, "stem")
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf", "ivf-sq8", "ivf-sq6", "ivf-pq"])
def test_every_kind_round_trips_and_every_truncation_is_refused(tmp_path: Path, kind: str) -> None:
    index = _index(400, kind=kind)
    index.save(tmp_path, "stem")
    loaded = NameIndex.load(tmp_path, "stem")
    queries = np.ascontiguousarray(index.faiss.reconstruct_n(0, 5))
    assert (loaded.search(queries, 3)[1] == index.search(queries, 3)[1]).all()
    whole = (tmp_path / "stem.faiss").read_bytes()
    sidecar = json.loads((tmp_path / "stem.json").read_text())
    for cut in (0, 3, 40, len(whole) // 3, len(whole) - 1):
        (tmp_path / "stem.faiss").write_bytes(whole[:cut])
        for recorded in (True, False):  # with the length and hash, and as an older sidecar without
            data = sidecar if recorded else {k: v for k, v in sidecar.items() if not k.startswith("faiss_")}
            (tmp_path / "stem.json").write_text(json.dumps(data))
            with pytest.raises(IndexDamaged):
                NameIndex.load(tmp_path, "stem")


def test_a_crafted_hnsw_size_field_is_refused_before_faiss_allocates_it(tmp_path: Path) -> None:
    """FAISS trusts each size field (a billion `levels` entries: 4 GB and 5 s before it failed here);
    the file is walked first, with every size bounded by the bytes there. The sidecar is rewritten to
    match the crafted file, so only the structure check can tell."""
    _index(300, kind="hnsw").save(tmp_path, "stem")
    path = tmp_path / "stem.faiss"
    data = bytearray(path.read_bytes())
    offset = 37  # after the common header: assign_probas, cum_nneighbor_per_level, then levels
    for width in (8, 4):
        (length,) = struct.unpack_from("<Q", data, offset)
        offset += 8 + width * length
    data[offset : offset + 8] = struct.pack("<Q", 1 << 30)
    path.write_bytes(bytes(data))
    sidecar = json.loads((tmp_path / "stem.json").read_text())
    sidecar.update(faiss_bytes=len(data), faiss_sha256=file_digest(path))
    (tmp_path / "stem.json").write_text(json.dumps(sidecar))
    with pytest.raises(IndexDamaged, match="levels of 1073741824 entries does not fit"):
        NameIndex.load(tmp_path, "stem")


def test_an_older_sidecar_is_checked_and_then_records_the_hash(tmp_path: Path) -> None:
    index = _index(50)
    index.save(tmp_path, "stem")
    sidecar = json.loads((tmp_path / "stem.json").read_text())
    rows = [[r.name, r.concept_id, int(r.preferred)] for r in index.rows]
    old = {"kind": sidecar["kind"], "dim": sidecar["dim"], "rows": rows}  # what issue 10 wrote: rows inline
    (tmp_path / "stem.json").write_text(json.dumps(old))
    (tmp_path / "stem.rows").unlink()
    again = NameIndex.load(tmp_path, "stem")
    assert [[r.name, r.concept_id, int(r.preferred)] for r in again.rows] == rows
    rewritten = json.loads((tmp_path / "stem.json").read_text())
    assert rewritten["faiss_sha256"] == file_digest(tmp_path / "stem.faiss")
    assert "rows" not in rewritten and (tmp_path / "stem.rows").is_file(), "upgraded to the rows file"
    assert [[r.name, r.concept_id, int(r.preferred)] for r in NameIndex.load(tmp_path, "stem").rows] == rows


@pytest.fixture
def demo_copy(demo_template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(demo_template, tmp_path / "p"))


def _retriever(project: Path):
    from core.retrieve.rescnn_retriever import RescnnRetriever
    from core.store import Project

    with Project.open(project) as opened:
        kb = opened.kb.knowledge_base()
        folder = Path(opened.models.active_model("retriever").path)
    return RescnnRetriever.load(folder, index_dir=project / "index"), kb


def test_a_truncated_sidecar_is_rebuilt_once_and_then_loads(demo_copy: Path, caplog) -> None:
    """Before: every later `link` failed with "not valid JSON" and nothing ever rebuilt it."""
    retriever, kb = _retriever(demo_copy)
    sidecar = next((demo_copy / "index").glob("*.json"))
    expected = retriever.retrieve  # bound after indexing below
    sidecar.write_bytes(sidecar.read_bytes()[: sidecar.stat().st_size // 2])
    with caplog.at_level(logging.WARNING):
        retriever.index(kb)
    assert any(sidecar.name in r.message and "rebuilding" in r.message for r in caplog.records)
    found = expected(["breast cancer"], 3)[0]
    assert found and found[0].concept_id
    caplog.clear()
    again, _ = _retriever(demo_copy)
    with caplog.at_level(logging.INFO):
        again.index(kb)
    assert not any("rebuilding" in r.message for r in caplog.records)
    assert [c.concept_id for c in again.retrieve(["breast cancer"], 3)[0]] == [c.concept_id for c in found]


def test_linking_goes_on_when_the_index_cannot_be_saved(demo_copy: Path, caplog) -> None:
    """A full disk while the index is written: the run links with the index in memory and says so;
    nothing half-written is left for the next run."""
    retriever, kb = _retriever(demo_copy)
    for item in (demo_copy / "index").iterdir():
        item.unlink()
    with caplog.at_level(logging.WARNING), file_size_limit(20_000):
        retriever.index(kb)
    assert any("could not be written" in r.message and "in memory" in r.message for r in caplog.records)
    assert retriever.retrieve(["breast cancer"], 3)[0]
    assert sorted(p.name for p in (demo_copy / "index").iterdir()) == []


def test_model_files_on_a_full_disk_are_one_line_errors(demo_copy: Path, tmp_path: Path) -> None:
    from transformers import BertForTokenClassification, BertTokenizer

    from core.locations import packaged_model_folder
    from core.rerank.cross_encoder import CrossEncoder, RerankerConfig
    from core.retrieve.rescnn import load_model, save_model

    folder = demo_copy / "models" / "retriever" / "v1"
    model = load_model(folder)
    weights_before = (folder / "model.safetensors").read_bytes()
    with (
        file_size_limit(50_000),
        pytest.raises(FileWriteError, match=r"model\.safetensors: could not be written"),
    ):
        save_model(model, folder)
    assert (folder / "model.safetensors").read_bytes() == weights_before
    assert _leftovers(folder) == []

    base = packaged_model_folder()
    bert = BertForTokenClassification.from_pretrained(str(base), num_labels=2, num_hidden_layers=1)
    encoder = CrossEncoder(bert, BertTokenizer.from_pretrained(str(base)), RerankerConfig(packing="compact"))
    target = demo_copy / "models" / "reranker" / "v1"
    with file_size_limit(200_000), pytest.raises(FileWriteError, match="reranker/v1: could not be written"):
        encoder.save(target)
    assert sorted(p.name for p in target.iterdir()) == []  # no half-written weights left to load


def test_hidden_rows_are_saved_with_the_index_and_crafted_ones_refused(tmp_path: Path) -> None:
    """Issue 23 item 1: a withdrawn name's row is hidden and saved so (the sidecar lists it); a sidecar
    whose hidden rows are not row numbers of the index is refused like any damaged index."""
    index = _index(50)
    assert index.hide([3, 7, 7]) == 2 and index.hide([3]) == 0
    index.add(np.eye(16, dtype=np.float32)[:1], [NameEntry("appended", "C1", False)])
    index.save(tmp_path, "stem")
    again = NameIndex.load(tmp_path, "stem")
    assert np.flatnonzero(again.hidden).tolist() == [3, 7] and len(again) == 51
    assert [r.name for r in again.visible_rows()] == [f"{i:08d}" for i in range(50) if i not in (3, 7)] + [
        "appended"
    ]
    scores, ids = again.search(index.faiss.reconstruct_n(3, 1), 5)  # FAISS itself still has the vector
    assert ids[0][0] == 3  # the search skips it where results are made (search_concepts' `hidden`)
    sidecar = json.loads((tmp_path / "stem.json").read_text())
    assert sidecar["hidden"] == [3, 7]
    for crafted in ([7, 3], [3, 3], [51], [-1], ["3"], {"3": 1}):
        (tmp_path / "stem.json").write_text(json.dumps({**sidecar, "hidden": crafted}))
        with pytest.raises(IndexDamaged, match="hidden rows"):
            NameIndex.load(tmp_path, "stem")
