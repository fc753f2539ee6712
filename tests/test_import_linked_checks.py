"""import-linked against a damaged or hostile link-batch folder (issue 24): every record of a shard is
checked before anything of it is stored (ids in the project's KB, each once, finite scores, at most
--candidates, the recorded sha256), each problem named with the shard and its line; a manifest cannot
make it read a file outside its folder; curator synonyms learnt since linking do not refuse the folder."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from app.cli import EXIT_ERROR, main
from app.resources import demo_dir
from bench.synthetic.shards import write_shards
from core.batch import run_batch
from core.batch.manifest import Manifest
from core.batch.plan import file_sha256
from core.formats import read_corpus
from core.store import Project

DEMO = demo_dir()
DEMO_DOCUMENTS = list(read_corpus(DEMO / "abstracts.pubtator", "pubtator"))
SHARDS = ("shard0000.pubtator.linked.jsonl", "shard0001.pubtator.linked.jsonl")


@pytest.fixture
def linked(demo_template: Path, tmp_path: Path) -> Path:
    """Two linked JSONL shards of six documents each, linked with the demo project."""
    source = tmp_path / "source"
    shutil.copytree(demo_template, source, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=12, per_shard=6, formats=["pubtator"])
    run_batch([tmp_path / "in"], tmp_path / "out", source)
    return tmp_path / "out"


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    """A fresh project with the demo KB (the same base KB the folder was linked against)."""
    path = tmp_path / "desk"
    assert main(["init", str(path)]) == 0
    assert main(["-p", str(path), "kb", "import", str(DEMO / "kb.tsv"), "--format", "tsv"]) == 0
    return path


def _rewrite(shard: Path, edit) -> list[dict]:
    """Edit the shard's JSON lines in place; returns them."""
    rows = [json.loads(line) for line in shard.read_text().splitlines()]
    edit(rows)
    shard.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return rows


def _record_hash(folder: Path, name: str) -> None:
    """As if link-batch had written the edited shard: the manifest records its hash."""
    path = folder / "manifest.json"
    data = json.loads(path.read_text())
    data["shards"][name]["output_sha256"] = file_sha256(folder / name)
    path.write_text(json.dumps(data))


def _stored_ids(project_dir: Path) -> set[str]:
    with Project.open(project_dir) as project:
        return {d.doc_id for d in project.documents.documents()}


def test_every_bad_record_is_reported_with_shard_and_line_and_its_shard_imports_nothing(
    linked: Path, desk: Path, capsys
) -> None:
    with Project.open(desk) as project:
        known = [c.concept_id for c in project.kb.knowledge_base()]
    limit = Manifest.load(linked).identity["candidates"]
    bad = linked / SHARDS[0]

    def damage(rows: list[dict]) -> None:
        mentions = [(r, m) for r in rows for m in r["mentions"] if m["infons"]["candidates"]]
        mentions[0][1]["infons"]["candidates"][0]["retriever_score"] = float("nan")
        mentions[1][1]["infons"]["candidates"][0]["concept_id"] = "D999999"
        mentions[2][1]["infons"]["candidates"][0]["concept_id"] = ""
        twice = mentions[3][1]["infons"]["candidates"]
        twice[1]["concept_id"] = twice[0]["concept_id"]
        mentions[4][1]["infons"]["candidates"][0]["reranker_score"] = float("inf")
        mentions[5][1]["infons"]["candidates"] = [
            {"concept_id": concept_id, "name": "x", "matched_name": "x", "retriever_score": 0.5}
            for concept_id in known[: limit + 5]
        ]
        expected.extend((rows.index(row) + 1, f"mention {m['start']}-{m['end']}") for row, m in mentions[:6])

    expected: list[tuple[int, str]] = []
    rows = _rewrite(bad, damage)
    _record_hash(linked, SHARDS[0])
    capsys.readouterr()

    assert main(["-p", str(desk), "import-linked", str(linked)]) == EXIT_ERROR
    out = capsys.readouterr().out
    problems = [line.strip() for line in out.splitlines() if line.strip().startswith(str(bad))]
    assert len(problems) == 6, out
    for (line, mention), problem, reason in zip(
        expected,
        problems,
        [
            "(?i)finite",
            "D999999.*not in this project's KB",
            "empty concept id",
            "listed twice",
            "(?i)finite",
            f"{limit + 5} candidates.*at most {limit}",
        ],
        strict=True,
    ):
        assert problem.startswith(f"{bad}, line {line}, ") and mention in problem, problem
        assert re.search(reason, problem), problem
    assert not _stored_ids(desk) & {row["doc_id"] for row in rows}, "nothing of the bad shard is stored"
    good = {d.doc_id for d in read_corpus(linked / SHARDS[1])}
    assert _stored_ids(desk) == good, "the good shard is imported"


def test_a_shard_changed_since_it_was_linked_is_not_imported(linked: Path, desk: Path, capsys) -> None:
    _rewrite(linked / SHARDS[1], lambda rows: rows.pop())  # one document fewer, the hash not updated
    assert main(["-p", str(desk), "import-linked", str(linked)]) == EXIT_ERROR
    assert f"{linked / SHARDS[1]}: not the file link-batch wrote" in capsys.readouterr().out
    assert _stored_ids(desk) == {d.doc_id for d in read_corpus(linked / SHARDS[0])}


def test_a_manifest_cannot_make_import_read_outside_its_folder(
    linked: Path, desk: Path, tmp_path: Path, capsys
) -> None:
    secret = tmp_path / "secret.linked.jsonl"
    shutil.copy(linked / SHARDS[0], secret)  # a readable linked shard, but not this folder's
    path = linked / "manifest.json"
    data = json.loads(path.read_text())
    data["shards"][str(secret)] = {**data["shards"][SHARDS[0]], "output_sha256": file_sha256(secret)}
    path.write_text(json.dumps(data))
    assert main(["-p", str(desk), "import-linked", str(linked)]) == EXIT_ERROR
    assert f"{path}" in capsys.readouterr().err.replace("\n", "")
    assert _stored_ids(desk) == set()

    del data["shards"][str(secret)]
    path.write_text(json.dumps(data))
    (linked / SHARDS[0]).unlink()
    (linked / SHARDS[0]).symlink_to(secret)  # a shard that is a link to a file elsewhere
    assert main(["-p", str(desk), "import-linked", str(linked)]) == EXIT_ERROR
    assert "symbolic link" in capsys.readouterr().out
    assert _stored_ids(desk) == {d.doc_id for d in read_corpus(linked / SHARDS[1])}


def test_curator_synonyms_learnt_in_the_project_do_not_refuse_its_folder(
    linked: Path, desk: Path, capsys
) -> None:
    with Project.open(desk) as project:  # what the desk's learning stores for an accepted mention
        project.kb.add_names("D006816", ["Huntington's illness"], source="curator")
    assert main(["-p", str(desk), "import-linked", str(linked)]) == 0
    out = capsys.readouterr().out
    assert "2 shard(s) linked with other curator synonyms" in out and "0 then, 1 now" in out
    assert len(_stored_ids(desk)) == 12
