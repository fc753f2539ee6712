"""Guessing a vocabulary file's format from its first bytes.

`load_kb` compares the guess with the format the user gave, so `--format medic` on a CTD file
fails at once with "looks like ctd, not medic" instead of storing nonsense. The tests are
conservative: every data line in the first 64 KB must fit, and an unsure guess is None.
"""

from __future__ import annotations

import re
from pathlib import Path

from core.errors import InputError
from core.kb.mesh_tables import table_kind
from core.kb.source_file import head_text

_SPACE = re.compile(r"\s")
_XML_ROOT = re.compile(r"<(DescriptorRecordSet|SupplementalRecordSet)[\s>]")
_OBO = re.compile(r"^(format-version:|\[Term\]\s*$)", re.MULTILINE)
_CTD_HEADER = re.compile(r"^#\s*(DiseaseName\tDiseaseID|ChemicalName\tChemicalID)", re.MULTILINE)
_CURIE_ID = re.compile(r"^(MESH|OMIM):\S+$")
_SAMPLE_LINES = 50


def sniff_kb_format(path: str | Path) -> str | None:
    """One of core.kb.KB_FORMATS when the first bytes leave no doubt, else None."""
    path = Path(path)
    if path.is_dir():
        names = {"MRCONSO.RRF", "MRCONSO.RRF.gz"}
        return "umls-rrf" if any((path / name).is_file() for name in names) else None
    if not path.is_file() or path.stat().st_size == 0:
        return None
    try:
        text = head_text(path)
    except InputError:
        return None
    if text.lstrip().startswith("<"):
        return "mesh-xml" if _XML_ROOT.search(text) else None
    if _OBO.search(text):
        return "obo"
    if _CTD_HEADER.search(text):
        return "ctd"
    lines = text.splitlines()
    if lines and table_kind(lines[0]) is not None:
        return "mesh-tsv"  # MeSH descriptor terms, supplementary names (or its action table: the reader says)
    if len(text) >= 65_536 and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut
    data = [line for line in lines if line.strip() and not line.startswith("#")][:_SAMPLE_LINES]
    if not data:
        return None
    for fmt, fits in (("umls-rrf", _is_rrf), ("ctd", _is_ctd), ("medic", _is_medic), ("tsv", _is_tsv)):
        if all(fits(line) for line in data):
            return fmt
    return None


def _is_rrf(line: str) -> bool:
    """18 fields each followed by '|' (the CUI is checked by the reader, which names a bad one's line:
    a file with one bad CUI is still an MRCONSO, not a MEDIC file)."""
    fields = line.split("|")
    return len(fields) == 19 and fields[-1] == "" and "\t" not in line


def _is_ctd(line: str) -> bool:
    fields = line.split("\t")
    return len(fields) >= 8 and bool(_CURIE_ID.match(fields[1]))


def _is_medic(line: str) -> bool:
    """`ID[|altID...]||names`, and not an RRF row (whose empty fields also make '||')."""
    ids, separator, _ = line.partition("||")
    return (
        bool(separator)
        and "\t" not in line
        and bool(ids)
        and _SPACE.search(ids) is None
        and not _is_rrf(line)
    )


def _is_tsv(line: str) -> bool:
    fields = line.split("\t")
    return 2 <= len(fields) <= 3 and bool(fields[0]) and _SPACE.search(fields[0]) is None
