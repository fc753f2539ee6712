"""Corpus formats: one module per format, each a `read(path, report=None) -> Iterator[Document]`
generator and a `write(docs, path, report=None) -> int` pair; this registry is how the CLI, the store
and the GUI pick one. PubMed citation XML and JATS are read-only (`writable` False): asking to
export in them is a one-line error before anything is opened.

`read_corpus` checks the file against the requested format first (by extension and first
bytes), so a wrong `--format` fails with "looks like X" before any parsing. With a `FormatReport`
(core.formats.report) readers skip bad items and record them, and writers record what the target
format cannot hold; without one readers raise at the first problem.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from core.documents import Document
from core.errors import InputError
from core.formats import bioc_json, bioc_xml, brat, jats, jsonl, pubmed_xml, pubtator, text
from core.formats.files import require_regular, require_text
from core.formats.report import FormatReport, InvalidItemsError, write_problem_report
from core.formats.sniff import guess_format

# Formats asked for often that Curalink does not read yet, with what to do instead.
NOT_YET: dict[str, str] = {}


@dataclass(frozen=True)
class CorpusFormat:
    name: str
    read: Callable[..., Iterator[Document]]
    write: Callable[..., int]
    description: str
    folder: bool = False
    writable: bool = True


FORMATS: dict[str, CorpusFormat] = {
    f.name: f
    for f in (
        CorpusFormat("pubtator", pubtator.read, pubtator.write, "PubTator title/abstract/annotation lines"),
        CorpusFormat("bioc-xml", bioc_xml.read, bioc_xml.write, "BioC XML collection"),
        CorpusFormat("bioc-json", bioc_json.read, bioc_json.write, "BioC JSON collection"),
        CorpusFormat("brat", brat.read, brat.write, "brat standoff folder of .txt + .ann", folder=True),
        CorpusFormat("jsonl", jsonl.read, jsonl.write, "Curalink JSON lines, lossless"),
        CorpusFormat("text", text.read, text.write, "plain text files, no annotations"),
        CorpusFormat(
            "pubmed-xml",
            pubmed_xml.read,
            pubmed_xml.write,
            "PubMed / MEDLINE citation XML (PubmedArticleSet), read-only",
            writable=False,
        ),
        CorpusFormat(
            "jats", jats.read, jats.write, "JATS / PMC full-text XML (.nxml), read-only", writable=False
        ),
    )
}
WRITABLE_FORMATS = tuple(name for name, f in FORMATS.items() if f.writable)

# Pairs (requested, guessed) that are not a mistake: a brat .txt read as plain text (annotations
# ignored) and a folder of bare .txt files read as brat (documents without annotations).
_COMPATIBLE = {("text", "brat"), ("brat", "text")}


def get_format(fmt: str, source: Path | str | None = None, *, writing: bool = False) -> CorpusFormat:
    """The registered format, or an InputError (naming `source`) listing the known names; `writing`
    refuses a read-only format."""
    try:
        found = FORMATS[fmt]
    except KeyError:
        hint = f": {NOT_YET[fmt]}" if fmt in NOT_YET else ""
        raise InputError(
            source, f"unknown corpus format {fmt!r}{hint}; known formats: {', '.join(FORMATS)}"
        ) from None
    if writing and not found.writable:
        raise InputError(
            source,
            f"{fmt} is read-only in Curalink (it is imported, never exported); export formats: "
            + ", ".join(WRITABLE_FORMATS),
        )
    return found


def check_format(path: Path | str, fmt: str) -> None:
    """Raise when the file plainly is another format than the one requested."""
    path = Path(path)
    get_format(fmt, path)
    guessed = guess_format(path)
    if guessed is None or guessed == fmt or (fmt, guessed) in _COMPATIBLE:
        return
    raise InputError(path, f"given as {fmt}, but the file looks like {guessed}: try --format {guessed}")


def read_corpus(
    path: Path | str, fmt: str | None = None, report: FormatReport | None = None
) -> Iterator[Document]:
    """Documents from `path`; `fmt` None guesses the format. With `report`, bad items are skipped and
    recorded there; without, the first problem raises."""
    path = Path(path)
    require_regular(path)  # before any byte is read: a FIFO or a device blocks or never ends
    if not path.exists():
        raise InputError(path, "file or folder not found")
    if fmt is None:
        fmt = guess_format(path)
        if fmt is None:
            if path.is_file():
                require_text(path)  # empty, UTF-16 or binary: say which, not "cannot tell"
            raise InputError(path, f"cannot tell the corpus format; give one of: {', '.join(FORMATS)}")
    else:
        check_format(path, fmt)
    return FORMATS[fmt].read(path, report=report)


def write_corpus(
    docs: Iterable[Document], path: Path | str, fmt: str, report: FormatReport | None = None
) -> int:
    """Write documents in `fmt`; returns how many were written. `report` counts what was not written."""
    return get_format(fmt, path, writing=True).write(docs, Path(path), report=report)


__all__ = [
    "FORMATS",
    "WRITABLE_FORMATS",
    "CorpusFormat",
    "FormatReport",
    "InvalidItemsError",
    "write_problem_report",
    "check_format",
    "get_format",
    "guess_format",
    "read_corpus",
    "write_corpus",
]
