"""`link-batch` on the local engine with the demo project (a real retriever, KB and FAISS index):
outputs against the Linker run directly, resume, malformed shards, refusals, PubMed XML with
DeleteCitation across shards."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from app.resources import demo_dir
from bench.synthetic.shards import write_pubmed_xml, write_shards
from core.batch import run_batch
from core.batch.linked import candidates_of
from core.batch.manifest import Manifest
from core.errors import CuralinkError
from core.formats import read_corpus
from core.store import Project

DEMO_DOCUMENTS = list(read_corpus(demo_dir() / "abstracts.pubtator", "pubtator"))


@pytest.fixture
def project(demo_template: Path, tmp_path: Path) -> Path:
    """A copy of the demo project (the batch opens it read-only; tests that change it change a copy)."""
    copy = tmp_path / "project"
    shutil.copytree(demo_template, copy, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    return copy


def _linked(folder: Path) -> dict[str, list]:
    """doc id -> [(mention start, end, [candidate ids])] read from every linked shard of a folder."""
    found = {}
    for path in sorted(p for p in folder.glob("*.linked.*") if not p.name.startswith(".")):
        for document in read_corpus(path):
            found[document.doc_id] = [
                (m.start, m.end, [c.concept_id for c in candidates_of(m)]) for m in document.mentions
            ]
    return found


def test_shards_are_linked_as_the_linker_links_them(project: Path, tmp_path: Path) -> None:
    from core.jobs.linking.suggestions import ProjectLinker

    shards = write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=18, per_shard=5, gzip_every=2)
    summary = run_batch([tmp_path / "in"], tmp_path / "out", project)
    assert (summary.linked, summary.documents, summary.malformed) == (4, 18, [])
    assert summary.figures["index_loads"] == 1
    with Project.open(project) as opened:
        linker = ProjectLinker.for_project(opened, read_only=True)
        documents = [d for shard in shards for d in read_corpus(shard)]
        expected = {
            d.doc_id: [
                (m.start, m.end, [c.concept_id for c in ranked]) for m, ranked in zip(d.mentions, found)
            ]
            for d, found in zip(documents, linker.linker.suggest(documents), strict=True)
        }
    assert _linked(tmp_path / "out") == expected
    manifest = Manifest.load(tmp_path / "out")
    assert [e["documents"] for e in manifest.done().values()] == [5, 5, 5, 3]
    assert sum(e["mentions"] for e in manifest.done().values()) == sum(len(d.mentions) for d in documents)

    again = run_batch([tmp_path / "in"], tmp_path / "out", project)
    assert (again.linked, again.already_done) == (0, 4), "finished shards with the same input are skipped"
    shards[0].write_text(shards[0].read_text().replace("Huntington", "Huntingtox"))
    changed = run_batch([tmp_path / "in"], tmp_path / "out", project)
    assert (changed.linked, changed.already_done) == (1, 3), "a changed input is linked again"


def test_a_malformed_shard_is_skipped_listed_and_the_others_finish(project: Path, tmp_path: Path) -> None:
    shards = write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=9, per_shard=3, formats=["pubtator"])
    lines = shards[1].read_text().splitlines()
    bad_line = next(i for i, line in enumerate(lines, 1) if line.count("\t") >= 4)
    fields = lines[bad_line - 1].split("\t")
    fields[1] = "x12"  # an offset that is not a number
    lines[bad_line - 1] = "\t".join(fields)
    shards[1].write_text("\n".join(lines) + "\n")
    broken = tmp_path / "in" / "shard0003.bioc.xml"
    broken.write_text(
        '<?xml version="1.0"?>\n<collection><source>x</source>\n<document><id>1</id>\n<passage>'
    )

    summary = run_batch([tmp_path / "in"], tmp_path / "out", project)
    assert summary.linked == 2
    manifest = Manifest.load(tmp_path / "out")
    malformed = manifest.malformed()
    assert sorted(malformed) == ["shard0001.pubtator.linked.jsonl", "shard0003.bioc.xml.linked.jsonl"]
    assert any(
        f"{shards[1]}, line {bad_line}" in p for p in malformed["shard0001.pubtator.linked.jsonl"]["problems"]
    )
    assert any(str(broken) in p for p in malformed["shard0003.bioc.xml.linked.jsonl"]["problems"])
    outputs = sorted(p.name for p in (tmp_path / "out").iterdir() if not p.name.startswith("."))
    assert outputs == ["manifest.json", "shard0000.pubtator.linked.jsonl", "shard0002.pubtator.linked.jsonl"]
    assert len(_linked(tmp_path / "out")) == 6


def test_a_folder_linked_with_other_models_or_kb_is_refused(project: Path, tmp_path: Path) -> None:
    write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=6, per_shard=3)
    run_batch([tmp_path / "in"], tmp_path / "out", project)
    with pytest.raises(CuralinkError, match="candidates: 16 there, 8 now"):
        run_batch([tmp_path / "in"], tmp_path / "out", project, candidates=8)
    with Project.open(project) as opened:  # a KB name (not a curator synonym): another KB
        opened.kb.add_names("D006816", ["Huntington's illness"], source="kb")
    with pytest.raises(CuralinkError, match="another knowledge base.*kb_fingerprint"):
        run_batch([tmp_path / "in"], tmp_path / "out", project)
    replaced = run_batch([tmp_path / "in"], tmp_path / "out", project, overwrite=True)
    assert replaced.linked == 2
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine")
    with pytest.raises(CuralinkError, match="not a link-batch output folder"):
        run_batch([tmp_path / "in"], stranger, project)


def test_pubmed_xml_with_detection_and_a_later_delete_citation(project: Path, tmp_path: Path) -> None:
    first = write_pubmed_xml(DEMO_DOCUMENTS[:4], tmp_path / "in" / "pubmed24n0001.xml", deleted=())
    doomed, survivor = DEMO_DOCUMENTS[1].doc_id, DEMO_DOCUMENTS[2].doc_id
    write_pubmed_xml(DEMO_DOCUMENTS[4:], tmp_path / "in" / "pubmed24n0002.xml", deleted=[doomed])
    with pytest.raises(CuralinkError, match="carries no mentions to link: add --detect"):
        run_batch([first], tmp_path / "out", project)

    summary = run_batch(
        [first, tmp_path / "in" / "pubmed24n0002.xml"], tmp_path / "out", project, detect=True
    )
    assert summary.linked == 2 and summary.detected > 0 and summary.removed_by_deletions == 1
    linked = _linked(tmp_path / "out")
    assert doomed not in linked and survivor in linked
    assert sorted(linked) == sorted(d.doc_id for d in DEMO_DOCUMENTS if d.doc_id != doomed)
    # detected where the demo's gold annotations are (the dictionary holds their names), each with candidates
    gold = {(m.start, m.end) for m in DEMO_DOCUMENTS[2].mentions}
    spans = {(start, end) for start, end, _ in linked[survivor]}
    assert spans & gold and all(ids for _, _, ids in linked[survivor])
    entry = Manifest.load(tmp_path / "out").done()["pubmed24n0001.xml.linked.jsonl"]
    assert entry["removed_by_later_deletions"] == [doomed] and entry["documents"] == 3
    again = run_batch([first, tmp_path / "in" / "pubmed24n0002.xml"], tmp_path / "out", project, detect=True)
    assert (again.linked, again.removed_by_deletions) == (0, 0)


def test_bioc_output_keeps_the_candidates(project: Path, tmp_path: Path) -> None:
    write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=6, per_shard=6, formats=["pubtator"])
    run_batch([tmp_path / "in"], tmp_path / "jsonl", project)
    run_batch([tmp_path / "in"], tmp_path / "bioc", project, out_format="bioc-xml")
    assert _linked(tmp_path / "bioc") == _linked(tmp_path / "jsonl")


def test_ray_missing_and_unreachable_addresses_are_one_clear_error(
    project: Path, tmp_path: Path, monkeypatch
) -> None:
    import socket

    write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=3, per_shard=3)
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(CuralinkError, match=f"cannot reach the Ray cluster at 127.0.0.1:{port}"):
        run_batch([tmp_path / "in"], tmp_path / "out", project, engine="ray", address=f"127.0.0.1:{port}")
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(CuralinkError, match=r"pip install 'curalink\[cluster\]'"):
        run_batch([tmp_path / "in"], tmp_path / "out", project, engine="ray")
    assert not (tmp_path / "out" / "manifest.json").exists()


def test_a_cancel_stops_at_a_shard_boundary(project: Path, tmp_path: Path) -> None:
    from core.progress import CancelToken

    write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=12, per_shard=3, formats=["pubtator"])
    cancel = CancelToken()

    def first_shard_then_cancel(done: int, total: int | None, message: str = "") -> None:
        if done >= 1:
            cancel.cancel()  # as Ctrl-C does, from the CLI's signal handler

    stopped = run_batch(
        [tmp_path / "in"], tmp_path / "out", project, progress=first_shard_then_cancel, cancel=cancel
    )
    assert stopped.cancelled and stopped.linked == 1
    assert len(Manifest.load(tmp_path / "out").done()) == 1
    assert len(_linked(tmp_path / "out")) == 3
    resumed = run_batch([tmp_path / "in"], tmp_path / "out", project)
    assert (resumed.already_done, resumed.linked, resumed.cancelled) == (1, 3, False)
