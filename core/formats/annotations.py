"""How a source annotation becomes a `Mention` and back, the same way in every format.

Rules (so every reader agrees and every writer can restore the source):
- `Mention.text` is always the document text at the mention's offsets. When the source's own
  text column differs from it only in whitespace (the NCBI-disease train file has one annotation
  with two trailing spaces in its column), the mention is accepted, and the column is kept verbatim
  in `infons["source_text"]` so writers reproduce the file's content. Any other difference is an
  error: offsets that do not match the text are never imported silently.
- A discontinuous annotation (brat `0 5;9 14`, BioC with several locations) becomes one mention
  over the covering span, with the fragments in `infons["fragments"]` (`"0 5;9 14"`) and the
  fragment text in `infons["source_text"]`; writers give the fragments back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from unicodedata import normalize

from core.documents import Mention
from core.errors import InputError

SOURCE_TEXT = "source_text"
FRAGMENTS = "fragments"
INDIVIDUAL_MENTIONS = "individual_mentions"

_FRAGMENT = re.compile(r"^\s*(\d+)\s+(\d+)\s*$")


def text_at(
    doc_text: str,
    start: int,
    end: int,
    *,
    source: Path | str,
    line: int | None = None,
    item: str | None = None,
) -> str:
    """The document text under [start, end), or an error naming the bad offsets."""
    if start < 0 or end < 0:
        raise InputError(source, f"negative offset in {start}-{end}", line=line, item=item)
    if start > end:
        raise InputError(source, f"start offset {start} is after end offset {end}", line=line, item=item)
    if end > len(doc_text):
        raise InputError(
            source,
            f"offsets {start}-{end} run past the end of the document text ({len(doc_text)} characters)",
            line=line,
            item=item,
        )
    return doc_text[start:end]


def same_but_whitespace(a: str, b: str) -> bool:
    """True when two strings have the same words and differ only in spacing."""
    return a.split() == b.split()


def build_mention(
    doc_text: str,
    fragments: Sequence[tuple[int, int]],
    column_text: str | None,
    *,
    source: Path | str,
    line: int | None = None,
    item: str | None = None,
    type: str = "",
    concept_id: str = "",
    mention_id: str = "",
    origin: str = "gold",
    infons: dict[str, str] | None = None,
) -> Mention:
    """A checked mention; `column_text` None means the source gave no text to check against."""
    if not fragments:
        raise InputError(source, "annotation without any location", line=line, item=item)
    pieces = [text_at(doc_text, s, e, source=source, line=line, item=item) for s, e in fragments]
    start = min(s for s, _ in fragments)
    end = max(e for _, e in fragments)
    covering = doc_text[start:end]
    expected = " ".join(pieces)
    extra: dict[str, str] = dict(infons or {})
    if len(fragments) > 1:
        extra[FRAGMENTS] = format_fragments(fragments)
    if column_text is not None and column_text != expected:
        if not same_but_whitespace(column_text, expected):
            raise InputError(
                source,
                f"mention text {column_text!r} does not match the document text at offsets "
                f"{', '.join(f'{s}-{e}' for s, e in fragments)}: {expected!r}"
                + _unseen_difference(column_text, expected),
                line=line,
                item=item,
            )
        extra[SOURCE_TEXT] = column_text
    elif len(fragments) > 1:
        extra[SOURCE_TEXT] = expected
    return Mention(
        start=start,
        end=end,
        text=covering,
        type=type,
        concept_id=concept_id,
        mention_id=mention_id,
        origin=origin,
        infons=extra,
    )


def _unseen_difference(column: str, text: str) -> str:
    """The code points where two strings that may print alike first differ (an NFD column against NFC
    text, a look-alike letter), and the normalisation that would make them equal; '' when the first
    difference is plain ASCII, which shows in the strings themselves."""
    at = next(
        (i for i, (a, b) in enumerate(zip(column, text, strict=False)) if a != b), min(len(column), len(text))
    )
    column_part, text_part = column[at : at + 3], text[at : at + 3]
    if (column_part + text_part).isascii():
        return ""
    normalised = next(
        (form for form in ("NFC", "NFKC") if normalize(form, column) == normalize(form, text)), None
    )
    return (
        f" (they differ at character {at + 1}: {_code_points(column_part)} in the column, "
        f"{_code_points(text_part)} in the text"
        + (
            f"; the same text in Unicode {normalised} form: normalise the file to {normalised}"
            if normalised
            else ""
        )
        + ")"
    )


def _code_points(text: str) -> str:
    return " ".join(f"U+{ord(char):04X}" for char in text) or "nothing"


def source_text(mention: Mention) -> str:
    """The text a writer puts in the source's text column."""
    return mention.infons.get(SOURCE_TEXT, mention.text)


def fragments_of(mention: Mention) -> list[tuple[int, int]]:
    """The mention's fragments; its own span unless a valid fragment list inside it is kept."""
    raw = mention.infons.get(FRAGMENTS)
    if raw:
        try:
            parts = parse_fragments(raw)
        except ValueError:
            parts = []
        if parts and all(mention.start <= s <= e <= mention.end for s, e in parts):
            return parts
    return [(mention.start, mention.end)]


def parse_fragments(raw: str) -> list[tuple[int, int]]:
    """`"0 5;9 14"` -> [(0, 5), (9, 14)]; ValueError on anything else."""
    parts: list[tuple[int, int]] = []
    for chunk in raw.split(";"):
        match = _FRAGMENT.match(chunk)
        if not match:
            raise ValueError(f"bad fragment {chunk!r} (expected 'start end')")
        parts.append((int(match.group(1)), int(match.group(2))))
    return parts


def format_fragments(fragments: Sequence[tuple[int, int]]) -> str:
    return ";".join(f"{s} {e}" for s, e in fragments)


def assign_ids(existing: Sequence[str], prefix: str, acceptable: Callable[[str], bool]) -> list[str]:
    """Unique ids for writers: keep each acceptable, not yet used id; number the rest `prefix<n>`."""
    used: set[str] = set()
    kept: list[str | None] = []
    for current in existing:
        if current and acceptable(current) and current not in used:
            used.add(current)
            kept.append(current)
        else:
            kept.append(None)
    counter = 0
    result: list[str] = []
    for value in kept:
        if value is None:
            counter += 1
            while f"{prefix}{counter}" in used:
                counter += 1
            value = f"{prefix}{counter}"
            used.add(value)
        result.append(value)
    return result


def id_mapping(old: Sequence[str], new: Sequence[str]) -> dict[str, str]:
    """old id -> written id, first occurrence wins, for rewriting relation arguments."""
    mapping: dict[str, str] = {}
    for before, after in zip(old, new):
        if before:
            mapping.setdefault(before, after)
    return mapping
