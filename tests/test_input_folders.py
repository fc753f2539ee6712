"""Issue 33, item 4: symbolic links, FIFOs and devices in an input folder are skipped with a note by every
reader that lists a folder (link-batch followed a link to /etc/passwd into a shard), and one named as an
input is refused in one line before a byte is read (reading a FIFO blocks; /dev/zero never ends)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from core.batch.plan import plan_shards
from core.errors import InputError
from core.formats import read_corpus
from core.jobs.io.fetch_pubmed import read_pmid_file
from core.kb import load_kb

PUBTATOR = "1|t|Breast cancer\n1|a|A study.\n1\t0\t13\tBreast cancer\tDisease\tD001943\n\n"


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "passwd"
    path.parent.mkdir()
    path.write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    return path


def _folder(tmp_path: Path, secret: Path, suffix: str, good: str) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / f"a{suffix}").write_text(good, encoding="utf-8")
    (folder / f"link{suffix}").symlink_to(secret)
    os.mkfifo(folder / f"pipe{suffix}")
    return folder


@pytest.mark.parametrize("fmt", ["text", "brat"])
def test_a_corpus_folder_reads_its_regular_files_only_and_notes_the_rest(
    tmp_path: Path, secret: Path, fmt: str, caplog: pytest.LogCaptureFixture
) -> None:
    folder = _folder(tmp_path, secret, ".txt", "Breast cancer.\n")
    with caplog.at_level(logging.WARNING):
        documents = list(read_corpus(folder, fmt))
    assert [d.doc_id for d in documents] == ["a"]
    assert "root:x" not in " ".join(d.text for d in documents)
    notes = " ".join(r.getMessage() for r in caplog.records)
    assert "link.txt: a symbolic link to" in notes and "pipe.txt: a FIFO (named pipe)" in notes


def test_link_batch_plans_the_regular_files_and_names_the_skipped_ones(tmp_path: Path, secret: Path) -> None:
    folder = _folder(tmp_path, secret, ".pubtator", PUBTATOR)
    notes: list[str] = []
    tasks = plan_shards([folder], "pubtator", "jsonl", notes)
    assert [Path(t.input).name for t in tasks] == ["a.pubtator"]
    assert len(notes) == 2 and all("skipped" in note for note in notes)


def test_a_fifo_or_device_named_as_input_is_refused_in_one_line(tmp_path: Path) -> None:
    fifo = tmp_path / "c.pubtator"
    os.mkfifo(fifo)  # reading it would block this test forever
    with pytest.raises(InputError, match="a FIFO \\(named pipe\\), not a regular file"):
        list(read_corpus(fifo, "pubtator"))
    with pytest.raises(InputError, match="a FIFO"):
        list(load_kb(fifo, "obo"))
    with pytest.raises(InputError, match="/dev/zero: a device, not a file of PMIDs"):
        read_pmid_file("/dev/zero")  # never ends
    with pytest.raises(InputError, match="a FIFO"):
        plan_shards([fifo], "pubtator", "jsonl")
