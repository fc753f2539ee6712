"""Issue 33, item 2: a poison shard is recorded, not fatal. A BioC JSON bomb among good shards (and a
reader that fails in a way no InputError foresaw: out of memory) is marked malformed in the manifest with
its reason, the other shards finish, the same command resumes to a completed batch, the summary names it,
and the good shards are byte-identical to a run without the bad one."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

import core.batch.worker
from app.resources import demo_dir
from bench.synthetic.shards import write_shards
from core.batch import run_batch
from core.batch.manifest import Manifest
from core.formats import read_corpus

DEMO_DOCUMENTS = list(read_corpus(demo_dir() / "abstracts.pubtator", "pubtator"))


@pytest.fixture
def project(demo_template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(demo_template, copy, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    return copy


def _outputs(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.linked.jsonl"))}


def test_a_poison_shard_is_recorded_and_a_resume_completes_the_batch(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CURALINK_LIMIT_TEXT_BYTES", str(1 << 20))
    good = tmp_path / "good"
    write_shards(DEMO_DOCUMENTS, good, total=9, per_shard=3, formats=["pubtator"])
    inputs = tmp_path / "in"
    shutil.copytree(good, inputs)
    bomb = inputs / "shard0001b.json.gz"  # 8 MB of JSON whitespace in 8 KB
    with gzip.open(bomb, "wb") as handle:
        handle.write(b'{"documents": [' + b" " * (8 << 20))
    oom = inputs / "shard0000b.pubtator"
    oom.write_text("1|t|x\n1|a|y\n\n", encoding="utf-8")
    reader = core.batch.worker.read_corpus

    def failing(path, fmt, report=None):  # the reader of one shard runs out of memory half way
        documents = reader(path, fmt, report=report)
        if Path(path).name != oom.name:
            return documents

        def broken():
            yield from documents
            raise MemoryError

        return broken()

    monkeypatch.setattr(core.batch.worker, "read_corpus", failing)

    summary = run_batch([inputs], tmp_path / "out", project, fmt=None)
    assert summary.linked == 3
    named = {Path(e["input"]).name: e["problems"][0] for e in summary.malformed}
    assert set(named) == {bomb.name, oom.name}
    assert "text-bytes=1,048,576" in named[bomb.name] and str(bomb) in named[bomb.name]
    assert "ran out of memory reading it (MemoryError" in named[oom.name]

    entries = Manifest.load(tmp_path / "out").malformed()
    assert {Path(e["input"]).name for e in entries.values()} == {bomb.name, oom.name}
    assert all(e["problems"] and e["problem_count"] == 1 for e in entries.values())

    again = run_batch([inputs], tmp_path / "out", project)  # the resume completes: nothing left to link
    assert (again.linked, again.already_done, len(again.malformed)) == (0, 3, 2)

    clean = run_batch([good], tmp_path / "clean", project)
    assert clean.linked == 3
    assert _outputs(tmp_path / "out") == _outputs(tmp_path / "clean")
