"""Issue 33, item 3: a link-batch manifest is checked against its schema on every read (each bad field the
hostile tester found is refused in one line naming the entry and the field), the documents it records
are counted against the shard's file, it has a size bound, recording a shard appends one journal line
(the whole manifest is rewritten a fixed number of times a run, not once a shard), and import-linked
refuses a folder whose DeleteCitation pass did not finish, saying how to finish it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.cli import EXIT_ERROR, main
from app.resources import demo_dir
from bench.synthetic.shards import write_pubmed_xml, write_shards
from core.batch import run_batch
from core.batch.manifest import JOURNAL, MANIFEST, Manifest
from core.errors import InputError
from core.formats import read_corpus
from core.progress import CancelToken
from core.store import Project

DEMO = demo_dir()
DEMO_DOCUMENTS = list(read_corpus(DEMO / "abstracts.pubtator", "pubtator"))
FIRST = "shard0000.pubtator.linked.jsonl"


@pytest.fixture
def project(demo_template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(demo_template, copy, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    return copy


@pytest.fixture
def linked(project: Path, tmp_path: Path) -> Path:
    write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=12, per_shard=6, formats=["pubtator"])
    run_batch([tmp_path / "in"], tmp_path / "out", project)
    return tmp_path / "out"


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    path = tmp_path / "desk"
    assert main(["init", str(path)]) == 0
    assert main(["-p", str(path), "kb", "import", str(DEMO / "kb.tsv"), "--format", "tsv"]) == 0
    return path


def _edit(folder: Path, edit) -> None:
    path = folder / MANIFEST
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data["shards"][FIRST])
    path.write_text(json.dumps(data), encoding="utf-8")


BAD_FIELDS = {
    "position-text": (lambda e: e.update(position="x"), "position must be a whole number"),
    "position-negative": (lambda e: e.update(position=-1), "position must be a whole number"),
    "deleted-number": (lambda e: e.update(deleted=5), "deleted must be a list of ids"),
    "deleted-string": (lambda e: e.update(deleted="10192393"), "deleted must be a list of ids"),
    "documents-text": (lambda e: e.update(documents="6"), "documents must be a whole number"),
    "mentions-negative": (lambda e: e.update(mentions=-3), "mentions must be a whole number"),
    "sha-short": (lambda e: e.update(output_sha256="abc"), "output_sha256 must be a sha256"),
    "rewrite-without-removed": (
        lambda e: e.update(rewrite={"documents": 1, "mentions": 1, "output_sha256": "0" * 64}),
        "rewrite.removed is missing",
    ),
    "rewrite-bad-documents": (
        lambda e: e.update(rewrite={"removed": ["1"], "documents": "1", "mentions": 1, "output_sha256": "0" * 64}),
        "rewrite.documents must be a whole number",
    ),
    "malformed-without-problems": (lambda e: e.update(status="malformed"), "lists its problems"),
    "status": (lambda e: e.update(status="finished"), "status must be done or malformed"),
}


@pytest.mark.parametrize("case", sorted(BAD_FIELDS))
def test_the_schema_refuses_each_bad_field_in_one_line(linked: Path, case: str) -> None:
    edit, words = BAD_FIELDS[case]
    _edit(linked, edit)
    with pytest.raises(InputError) as refused:
        Manifest.load(linked)
    message = str(refused.value)
    assert words in message and f"shard entry {FIRST!r}" in message and "\n" not in message
    assert message.startswith(str(linked / MANIFEST))


def test_the_sound_manifest_of_a_run_passes_the_schema(linked: Path) -> None:
    manifest = Manifest.load(linked)
    assert manifest is not None and len(manifest.done()) == 2 and manifest.deletions == "done"
    assert not (linked / JOURNAL).exists(), "a finished run folds its journal into the manifest"


def test_documents_are_counted_against_the_file(linked: Path, desk: Path, capsys) -> None:
    _edit(linked, lambda e: e.update(documents=0))  # a real shard of 6 documents said to be empty
    assert main(["-p", str(desk), "import-linked", str(linked)]) == EXIT_ERROR
    out = capsys.readouterr().out
    assert "holds 6 document(s) but" in out and "records 0" in out
    with Project.open(desk) as opened:  # the other shard is imported, this one not at all
        assert len(list(opened.documents.documents())) == 6


def test_a_manifest_over_the_size_bound_is_refused_in_one_line(linked: Path, monkeypatch) -> None:
    monkeypatch.setenv("CURALINK_LIMIT_MANIFEST_BYTES", "1000")
    with pytest.raises(InputError, match="passes the limit manifest-bytes=1,000"):
        Manifest.load(linked)


def test_recording_a_shard_is_one_journal_line_at_any_batch_size(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = {"rewrites": 0, "appends": 0}
    save, append = Manifest.save, Manifest._append

    def counted_save(self) -> None:
        counts["rewrites"] += 1
        save(self)

    def counted_append(self, record) -> None:
        counts["appends"] += 1
        append(self, record)

    monkeypatch.setattr(Manifest, "save", counted_save)
    monkeypatch.setattr(Manifest, "_append", counted_append)
    seen = {}
    for shards in (2, 8):
        counts.update(rewrites=0, appends=0)
        folder = tmp_path / f"in{shards}"
        write_shards(DEMO_DOCUMENTS, folder, total=shards, per_shard=1, formats=["pubtator"])
        summary = run_batch([folder], tmp_path / f"out{shards}", project)
        assert summary.linked == shards
        seen[shards] = dict(counts)
    assert seen[2]["appends"] == 2 and seen[8]["appends"] == 8, seen  # one line a shard
    assert seen[2]["rewrites"] == seen[8]["rewrites"] <= 3, seen  # start and end of the run, any size


def test_a_journal_line_cut_by_a_kill_is_dropped_and_the_rest_replayed(linked: Path) -> None:
    manifest = Manifest.load(linked)
    entry = dict(manifest.shards[FIRST], documents=6)
    manifest.shards[FIRST] = entry
    manifest.record(FIRST)
    with (linked / JOURNAL).open("a", encoding="utf-8") as handle:
        handle.write('{"generation": 0, "shard": "x.linked.jsonl", "entr')  # the kill, mid-line
    again = Manifest.load(linked)
    assert again.shards[FIRST] == entry and "x.linked.jsonl" not in again.shards


def test_import_linked_refuses_a_folder_whose_deletion_pass_did_not_finish(
    project: Path, tmp_path: Path, desk: Path, capsys
) -> None:
    first = write_pubmed_xml(DEMO_DOCUMENTS[:3], tmp_path / "in" / "pubmed24n0001.xml")
    doomed = DEMO_DOCUMENTS[1].doc_id
    second = write_pubmed_xml(DEMO_DOCUMENTS[3:6], tmp_path / "in" / "pubmed24n0002.xml", deleted=[doomed])
    out = tmp_path / "out"
    cancel = CancelToken()

    def stop_after_the_last_shard(done: int, total: int | None, message: str = "") -> None:
        if total and done == total and message != "shards":
            cancel.cancel()  # the shards are linked; the deletion pass sees the cancel

    run_batch([first, second], out, project, detect=True, progress=stop_after_the_last_shard, cancel=cancel)
    assert Manifest.load(out).deletions_unfinished()
    assert main(["-p", str(desk), "import-linked", str(out)]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "DeleteCitation pass did not finish" in err and f"link-batch --resume --out {out}" in err
    with Project.open(desk) as opened:
        assert not list(opened.documents.documents()), "nothing imported"

    assert main(["-p", str(project), "link-batch", "--resume", "--out", str(out)]) == 0
    assert main(["-p", str(desk), "import-linked", str(out)]) == 0
    with Project.open(desk) as opened:
        stored = {d.doc_id for d in opened.documents.documents()}
    assert doomed not in stored and stored == {d.doc_id for d in DEMO_DOCUMENTS[:6]} - {doomed}
    capsys.readouterr()
    assert main(["-p", str(project), "link-batch", str(first), "--resume", "--out", str(out)]) == EXIT_ERROR
    assert "give no INPUT with it" in capsys.readouterr().err
