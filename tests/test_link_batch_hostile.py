"""link-batch against a hostile or damaged output folder (issue 24): a manifest naming files outside its
folder, symbolic links inside it, shards emptied by PubMed's DeleteCitation and a kill in the middle of
that rewrite, and a project whose curators taught it synonyms since it linked the folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.resources import demo_dir
from bench.synthetic.shards import write_pubmed_xml, write_shards
from core.batch import job, run_batch
from core.batch.deletions import apply_deletions
from core.batch.manifest import Manifest
from core.batch.plan import file_sha256
from core.errors import CuralinkError, InputError
from core.formats import read_corpus
from core.progress import NEVER_CANCELLED
from core.store import Project

DEMO_DOCUMENTS = list(read_corpus(demo_dir() / "abstracts.pubtator", "pubtator"))


@pytest.fixture
def project(demo_template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(demo_template, copy, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    return copy


def _edit_manifest(folder: Path, edit) -> None:
    path = folder / "manifest.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def test_a_manifest_cannot_name_files_outside_its_folder(project: Path, tmp_path: Path) -> None:
    write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=6, per_shard=3, formats=["pubtator"])
    out = tmp_path / "out"
    run_batch([tmp_path / "in"], out, project)
    victim = tmp_path / "victim.txt"
    victim.write_text("not the batch's")
    outside = tmp_path / "elsewhere.linked.jsonl"
    outside.write_text("mine too")
    entry = {"status": "done", "out_format": "jsonl", "documents": 1}
    inside = {"status": "done", "out_format": "text", "documents": 1}  # a linked shard is never plain text
    shards = {"../victim.txt": entry, str(outside): entry, "notes.linked.jsonl": inside}
    _edit_manifest(out, lambda data: data["shards"].update(shards))
    with pytest.raises(InputError) as refused:
        run_batch([tmp_path / "in"], out, project, overwrite=True)  # --overwrite unlinks every listed shard
    message = str(refused.value)
    assert str(out / "manifest.json") in message
    assert "'../victim.txt'" in message and repr(str(outside)) in message, "every bad entry is named"
    assert "'notes.linked.jsonl': out_format must be one of" in message
    assert victim.read_text() == "not the batch's" and outside.read_text() == "mine too"
    assert sorted(p.name for p in out.glob("*.linked.jsonl")) == [
        "shard0000.pubtator.linked.jsonl",
        "shard0001.pubtator.linked.jsonl",
    ], "nothing of the folder was deleted either"


@pytest.fixture
def linked_elsewhere(tmp_path: Path) -> tuple[Path, Path]:
    """(an output folder, a folder outside it) and one input shard."""
    write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=3, per_shard=3, formats=["pubtator"])
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere").mkdir()
    return tmp_path / "out", tmp_path / "elsewhere"


def test_the_lock_is_not_created_through_a_link(project: Path, tmp_path: Path, linked_elsewhere) -> None:
    out, elsewhere = linked_elsewhere
    (out / ".link-batch.lock").symlink_to(elsewhere / "lock")
    with pytest.raises(CuralinkError, match="link-batch.lock.*symbolic link"):
        run_batch([tmp_path / "in"], out, project)
    assert not (elsewhere / "lock").exists(), "no lock file created outside the folder"


def test_the_name_index_is_not_built_through_a_link(project: Path, tmp_path: Path, linked_elsewhere) -> None:
    out, elsewhere = linked_elsewhere
    for saved in (project / "index").glob("*"):  # no saved name index: the batch builds one into .index
        saved.unlink()
    (out / ".index").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(CuralinkError, match=r"\.index.*symbolic link"):
        run_batch([tmp_path / "in"], out, project)
    assert list(elsewhere.iterdir()) == [], "no index built through the link"


def test_a_shard_emptied_by_later_deletions_is_a_valid_shard(project: Path, tmp_path: Path) -> None:
    first = write_pubmed_xml(DEMO_DOCUMENTS[:2], tmp_path / "in" / "pubmed24n0001.xml")
    doomed = [d.doc_id for d in DEMO_DOCUMENTS[:2]]
    second = write_pubmed_xml(DEMO_DOCUMENTS[2:5], tmp_path / "in" / "pubmed24n0002.xml", deleted=doomed)
    out = tmp_path / "out"
    summary = run_batch([first, second], out, project, detect=True)
    assert summary.removed_by_deletions == 2
    entry = Manifest.load(out).done()["pubmed24n0001.xml.linked.jsonl"]
    emptied = out / "pubmed24n0001.xml.linked.jsonl"
    assert (entry["documents"], entry["mentions"], entry["removed_by_later_deletions"]) == (
        0,
        0,
        sorted(doomed),
    )
    assert emptied.stat().st_size == 0 and entry["output_sha256"] == file_sha256(emptied)

    again = run_batch([first, second], out, project, detect=True)  # the same command, resumed
    assert (again.linked, again.already_done, again.removed_by_deletions) == (0, 2, 0)

    from app.cli import main

    assert main(["init", str(tmp_path / "desk")]) == 0
    assert (
        main(["-p", str(tmp_path / "desk"), "kb", "import", str(demo_dir() / "kb.tsv"), "--format", "tsv"])
        == 0
    )
    assert main(["-p", str(tmp_path / "desk"), "import-linked", str(out)]) == 0
    with Project.open(tmp_path / "desk") as desk:
        assert sorted(d.doc_id for d in desk.documents.documents()) == sorted(d.doc_id for d in DEMO_DOCUMENTS[2:5])


class _Killed(BaseException):
    """A kill -9 at a chosen manifest record (nothing after it runs)."""


@pytest.mark.parametrize("killed_at_save", [1, 2])
def test_a_kill_during_the_deletion_rewrite_never_leaves_the_manifest_stale(
    project: Path, tmp_path: Path, monkeypatch, killed_at_save: int
) -> None:
    first = write_pubmed_xml(DEMO_DOCUMENTS[:3], tmp_path / "in" / "pubmed24n0001.xml")
    doomed = DEMO_DOCUMENTS[1].doc_id
    second = write_pubmed_xml(DEMO_DOCUMENTS[3:], tmp_path / "in" / "pubmed24n0002.xml", deleted=[doomed])
    out = tmp_path / "out"
    with monkeypatch.context() as patch:  # linked, the deletion pass not yet run
        patch.setattr(job, "apply_deletions", lambda manifest, cancel: 0)
        run_batch([first, second], out, project, detect=True)
    manifest = Manifest.load(out)
    saves = {"count": 0}
    real_record = Manifest.record  # the pass records each rewrite in the journal (issue 33)

    def record_then_die(self, name: str) -> None:
        saves["count"] += 1
        if saves["count"] == killed_at_save:
            raise _Killed
        real_record(self, name)

    with monkeypatch.context() as patch, pytest.raises(_Killed):
        patch.setattr(Manifest, "record", record_then_die)
        apply_deletions(manifest, NEVER_CANCELLED)

    run_batch([first, second], out, project, detect=True)  # the same command, resumed
    shard = out / "pubmed24n0001.xml.linked.jsonl"
    entry = Manifest.load(out).done()[shard.name]
    documents = list(read_corpus(shard, "jsonl"))
    assert [d.doc_id for d in documents] == [d.doc_id for d in DEMO_DOCUMENTS[:3] if d.doc_id != doomed]
    assert entry["documents"] == 2 and entry["mentions"] == sum(len(d.mentions) for d in documents)
    assert entry["output_sha256"] == file_sha256(shard)
    assert entry["removed_by_later_deletions"] == [doomed]
    assert "rewrite" not in entry


def test_curator_synonyms_learnt_since_do_not_refuse_the_folder(project: Path, tmp_path: Path) -> None:
    shards = write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=6, per_shard=3, formats=["pubtator"])
    out = tmp_path / "out"
    run_batch([shards[0]], out, project)
    with Project.open(project) as opened:  # what the desk's learning stores for an accepted mention
        opened.kb.add_names("D006816", ["Huntington's illness"], source="curator")
    resumed = run_batch(shards, out, project)
    assert (resumed.already_done, resumed.linked) == (1, 1), "resumed, not refused"
    assert any("curator synonyms" in note and "0 then, 1 now" in note for note in resumed.notes)
    manifest = Manifest.load(out)
    assert manifest.identity["curator_synonyms"]["names"] == 1
    assert [e["curator_synonyms"]["names"] for e in manifest.done().values()] == [0, 1]


def test_empty_utf16_and_binary_inputs_are_malformed_for_what_they_are(project: Path, tmp_path: Path) -> None:
    write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=3, per_shard=3, formats=["pubtator"])
    (tmp_path / "in" / "empty.pubtator").write_bytes(b"")
    (tmp_path / "in" / "wide.pubtator").write_bytes("12345|t|Huntington disease\n".encode("utf-16"))
    (tmp_path / "in" / "binary.pubtator").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    summary = run_batch([tmp_path / "in"], tmp_path / "out", project)
    assert summary.linked == 1
    problems = {Path(e["input"]).name: e["problems"] for e in summary.malformed}
    assert problems["empty.pubtator"] == [
        f"{tmp_path / 'in' / 'empty.pubtator'}: the file is empty (0 bytes): no documents to read"
    ]
    assert "UTF-16" in problems["wide.pubtator"][0] and "binary file" in problems["binary.pubtator"][0]
