"""Paragraph-split PubTator (issue 10, item 7): blocks of one PMID are passages of one document; a
document the file repeats whole is an in-file duplicate, apart from documents already in the project."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from app.cli import main
from core.formats import pubtator, read_corpus
from core.store import Project

# Two paragraphs of PMID 1 (offsets counted from each block), then PMID 2, then PMID 1's third paragraph.
PARAGRAPHS = (
    "1|t|Lithium and tremor.\n1|a|\n1\t0\t7\tLithium\tChemical\tD008094\n\n"
    "1|t|Tremor followed lithium in two cases.\n1|a|\n1\t0\t6\tTremor\tDisease\tD014202\n"
    "1\t16\t23\tlithium\tChemical\tD008094\n\n"
    "2|t|Another abstract.\n2|a|\n\n"
    "1|t|Discussion\n1|a|Lithium again.\n1\t11\t18\tLithium\tChemical\tD008094\n"
)


def _write(tmp_path: Path, content: str, name: str = "in.pubtator") -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


def test_blocks_of_one_pmid_are_passages_of_one_document(tmp_path: Path) -> None:
    first, second = pubtator.read(_write(tmp_path, PARAGRAPHS))
    assert [first.doc_id, second.doc_id] == ["2", "1"]  # PMID 1 is complete only at its last block
    # the document text is the blocks laid end to end, one space apart; every annotation is kept
    expected = "Lithium and tremor. Tremor followed lithium in two cases. Discussion Lithium again."
    assert second.text == expected
    assert [(m.text, m.start) for m in second.mentions] == [
        ("Lithium", expected.index("Lithium")),
        ("Tremor", expected.index("Tremor")),
        ("lithium", expected.index("lithium")),
        ("Lithium", expected.rindex("Lithium")),
    ]
    assert [(p.kind, p.infons["pubtator_block"]) for p in second.passages] == [
        ("title", 0),
        ("paragraph", 1),
        ("paragraph", 2),
        ("abstract", 2),
    ]
    # and it is written back one block per paragraph (the blocks of PMID 1 together)
    out = tmp_path / "out.pubtator"
    pubtator.write([second], out)
    assert out.read_text() == PARAGRAPHS.split("2|t|")[0] + "1|t|" + PARAGRAPHS.split("\n\n1|t|")[-1]


def test_nlm_chem_keeps_every_annotation(shared_data: Path, tmp_path: Path) -> None:
    source = shared_data / "realworld" / "pubtator" / "aioner_NLMchem_Test.PubTator"
    if not source.is_file():
        pytest.skip(f"{source} not found")
    raw = source.read_text(encoding="utf-8")
    # counted from the file itself: annotation lines, PMIDs, blocks
    annotations = [line.split("\t") for line in raw.splitlines() if line.count("\t") >= 5]
    pmids = {line.split("|", 1)[0] for line in raw.splitlines() if "|t|" in line}
    blocks = raw.count("|t|")
    docs = list(pubtator.read(source))
    assert len(docs) == len(pmids) == 50
    assert sum(len(d.mentions) for d in docs) == len(annotations) == 12411
    assert sum(len(d.passages) for d in docs) == blocks == 3428  # every abstract line is empty
    assert all(not d.mention_text_mismatches() for d in docs)
    assert sorted(m.text for d in docs for m in d.mentions) == sorted(f[3] for f in annotations)
    out = tmp_path / "again.pubtator"
    pubtator.write(docs, out)
    assert out.read_text(encoding="utf-8") == raw.rstrip("\n") + "\n"  # all but the final blank line


def test_ncbi_train_repeat_is_an_in_file_duplicate(ncbi_dir: Path, tmp_path: Path, capsys) -> None:
    project_dir = tmp_path / "p"
    Project.create(project_dir).close()
    train = [
        "-p",
        str(project_dir),
        "corpus",
        "import",
        str(ncbi_dir / "NCBItrainset_corpus.txt"),
        "--format",
        "pubtator",
    ]
    assert main(train) == 0
    out = capsys.readouterr().out.replace("\n", " ")
    assert "592 documents (5134 mentions) added" in out
    assert "1 repeated in the file exactly, skipped: 8528200" in out
    assert "already in the project" not in out
    # importing the same file again: now every document is already in the project, named as such
    assert main(train) == 0
    out = capsys.readouterr().out.replace("\n", " ")
    assert "592 skipped as duplicates of documents already in the project" in out
    assert "10192393" in out  # the first PMID of the file is named


def test_store_summary_separates_file_repeats_from_project_duplicates(ncbi_dir: Path, tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as project:
        summary = project.documents.import_documents(read_corpus(ncbi_dir / "NCBItrainset_corpus.txt", "pubtator"))
        assert (summary.added, summary.skipped, summary.in_file_duplicates) == (592, 0, ["8528200"])
        again = project.documents.import_documents(read_corpus(ncbi_dir / "NCBIdevelopset_corpus.txt", "pubtator"))
        assert (again.added, again.skipped, again.in_file_duplicates) == (100, 0, [])


def test_repeated_block_of_a_joined_document_is_skipped_and_reported(tmp_path: Path) -> None:
    """A later stretch of blocks that repeats an earlier stretch of the same PMID exactly is a
    duplicate; repeated paragraphs inside one stretch (NLM-Chem's section headings) are not."""
    repeat = "1|t|Discussion\n1|a|Lithium again.\n1\t11\t18\tLithium\tChemical\tD008094\n"
    from core.formats.report import FormatReport

    content = PARAGRAPHS + "\n3|t|Third.\n3|a|\n\n" + repeat
    report = FormatReport()
    docs = list(pubtator.read(_write(tmp_path, content), report))
    assert [d.doc_id for d in docs] == ["2", "1", "3"]
    assert len(docs[1].mentions) == 4 and docs[1].text.endswith("Discussion Lithium again.")
    assert [(d.doc_id, d.line) for d in report.duplicates] == [("1", content.count("\n") - 2)]


def test_abstract_only_blocks(shared_data: Path) -> None:
    """GNormPlus input: `PMID|a|` with no title line is a document whose abstract starts at 1."""
    source = shared_data / "realworld" / "pubtator" / "gnormplus_sample_data_pubtator.txt"
    if not source.is_file():
        pytest.skip(f"{source} not found")
    docs = list(pubtator.read(source))
    lines = [line for line in source.read_text().splitlines() if line]
    assert [d.doc_id for d in docs] == [line.split("|")[0] for line in lines]
    assert [d.text[1:] for d in docs] == [line.split("|", 2)[2] for line in lines]


def test_gzipped_pubtator(tmp_path: Path) -> None:
    plain = _write(tmp_path, PARAGRAPHS)
    packed = tmp_path / "in.pubtator.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert list(read_corpus(packed)) == list(pubtator.read(plain))  # format guessed through the gzip


def test_first_document_arrives_before_a_bad_tail(tmp_path: Path) -> None:
    """Streaming: a document is yielded as soon as its blocks end, before later lines are read."""
    path = _write(tmp_path, "1|t|Fever.\n1|a|\n\n1|t|More.\n1|a|\n\n2|t|Rash.\n2|a|\n2\tbroken\n")
    reader = pubtator.read(path)
    first = next(reader)
    assert (first.doc_id, first.text) == ("1", "Fever. More.")
    with pytest.raises(Exception, match="line 9"):
        next(reader)
