"""An export or an import's problem report cut by a full disk leaves the previous file whole and says so
in one line (issue 11, item 3: every file Curalink writes goes through a temporary name and a rename).

The full disk is made real with RLIMIT_FSIZE: the kernel refuses every byte past the limit, which is what
ENOSPC does to a writer at that point.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.atomic_files import TEMP_PREFIX, FileWriteError
from core.documents import Mention, document_from_title_abstract
from core.errors import InputError
from core.formats import FormatReport, read_corpus, write_corpus, write_problem_report
from tests.test_index_files import file_size_limit


def _documents(count: int):
    docs = []
    for number in range(count):
        document = document_from_title_abstract(
            str(1000 + number), "Huntington disease in twins", "Chorea and dementia were seen in both. " * 20
        )
        start = document.text.index("Huntington disease")
        docs.append(
            document.with_mentions([Mention(start, start + 18, "Huntington disease", "Disease", "D006816")])
        )
    return docs


@pytest.mark.parametrize(
    "fmt,name", [("pubtator", "out.txt"), ("bioc-xml", "out.xml"), ("jsonl", "out.jsonl")]
)
def test_export_cut_by_a_full_disk_keeps_the_previous_file(tmp_path: Path, fmt: str, name: str) -> None:
    target = tmp_path / name
    write_corpus(_documents(2), target, fmt)
    before = target.read_bytes()
    assert len(before) < 60_000
    with pytest.raises(FileWriteError) as failed, file_size_limit(60_000):
        write_corpus(_documents(200), target, fmt)  # about 200 kB: cut at 60 kB
    message = str(failed.value)
    assert "\n" not in message and str(target) in message and "File too large" in message
    assert target.read_bytes() == before  # the old export, whole
    assert [doc.doc_id for doc in read_corpus(target, fmt)] == ["1000", "1001"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(TEMP_PREFIX)]


def test_problem_report_cut_by_a_full_disk_keeps_the_previous_report(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "report.tsv"
    write_problem_report(FormatReport(), path)
    before = path.read_text(encoding="utf-8")
    assert before == "file\tline\titem\treason\n"
    big = FormatReport()
    for line in range(5000):
        big.invalid(InputError("corpus.txt", "offsets outside the text " * 3, line + 1, f"mention {line}"))
    with pytest.raises(FileWriteError), file_size_limit(20_000):
        write_problem_report(big, path)
    assert path.read_text(encoding="utf-8") == before
