"""Bounds on what one input file can make Curalink hold, shared by every corpus and vocabulary reader.

A tiny file must not allocate gigabytes, and an id that no export can write must not get in:
- ids: a document or concept id is non-empty, has no control characters (C0, DEL, C1, Unicode line
  and paragraph separators) and no surrounding whitespace, and is at most `MAX_ID_LENGTH` characters;
  a mention's concept-id string (composites and tmVar's structured ids are long) at most
  `MAX_CONCEPT_ID_LENGTH`. Every export writes the doc_id as a PubTator PMID, a file name or a BioC
  id, so an empty or control-character id would make every later export of the project fail.
- offsets: `Document.text` lays passages out at their offsets and fills gaps with spaces, and the
  store keeps that text, so a passage offset of 500,000,000 in a 70-byte file would store 478 MB.
  `LayoutBudget` allows the gap characters of a file (before the first passage of a document and
  between passages) to total at most `GAP_FACTOR` times the passage text the file has given so far
  plus `GAP_ALLOWANCE`: real files have gaps of a few characters (1 between PMC passages, 27 in the
  largest of the real-world samples), and a document of which only some passages are given still fits.
- integers: an offset is a JSON integer, an integral JSON number, or a string of ASCII digits; 1.5
  is an error, never silently 1.
- nesting: JSON values nested deeper than `MAX_JSON_DEPTH` are refused (the store serialises infons
  and metadata again, and Python's recursion limit is about 1,000).
- lines: every line-based reader (PubTator, brat .ann, JSONL, MEDIC, CTD, TSV, RRF) reads through
  `bounded_lines`, which refuses a line longer than `MAX_LINE_BYTES` without holding it: a 4.5 MB
  gzip file can hold one 3 GB line, and iterating a file object would read all of it at once.
  The longest real lines are JSONL documents and NLM-Chem's full-text paragraphs, far below it.
- XML: the readers stream with lxml's own limits (no huge_tree: a text node of at most 10 MB, at
  most 256 levels deep, no amplifying entities) and core.formats.xml_guard bounds the tags and bytes
  of one citation, article or document and of the stretch between two (`MAX_XML_TAGS`,
  `MAX_XML_BYTES`): a 2 MB gzip file can hold 512 million empty elements, and lxml builds every
  element it is given (about 125 bytes each).
- whole files: the formats a reader parses whole (a BioC JSON collection, a plain-text or brat `.txt`
  document, a safetensors header, an E-utilities answer, a link-batch manifest) are read through
  `read_bounded`, which stops at `limit(...)` bytes of the *decompressed* stream: a 2 MB gzip file can
  hold 2 GB. A BioC JSON collection is also refused before parsing when it has more JSON values than
  `MAX_JSON_NODES` (counted from its '{', '[' and ',' bytes): json builds every value whole, and a
  `{}` is 64 bytes of Python from 3 bytes of file.
- mentions: a PubTator document (one run of blocks) holds at most `MAX_MENTIONS_PER_DOCUMENT`
  annotation lines (a 221 KB gzip file can hold 2 million for one PMID).

The bounds real data could reach are options (`LIMITS`): `curalink --limit NAME=VALUE ...` or the
environment variable `CURALINK_LIMIT_<NAME>` (NAME upper-cased, '-' as '_'), read at each file, so a
link-batch worker process inherits what its driver was given. Every refusal names the option.
"""

from __future__ import annotations

import json
import math
import os
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from core.errors import InputError

MAX_ID_LENGTH = 200
MAX_CONCEPT_ID_LENGTH = 1000
GAP_FACTOR = 10
GAP_ALLOWANCE = 1_000_000
MAX_JSON_DEPTH = 64
MAX_LINE_BYTES = 16 * 1024 * 1024
MAX_XML_TAGS = 2_000_000  # '<' of start and end tags: at most ~250 MB of lxml nodes
MAX_XML_BYTES = 64 * 1024 * 1024  # a large PMC article is a few MB, a PubMed citation a few KB
MAX_TEXT_BYTES = 256 * 1024 * 1024  # whole-file reads; the largest real BioC JSON sample is a few MB
MAX_JSON_NODES = 5_000_000  # values of one parsed-whole JSON file: at most a few hundred MB of Python
MAX_MENTIONS_PER_DOCUMENT = 200_000  # a PMC full text in PubTator3 has a few thousand
MAX_MANIFEST_BYTES = 64 * 1024 * 1024  # a link-batch manifest: about 1 KB a shard, so 60,000 shards
MAX_ANSWER_BYTES = 256 * 1024 * 1024  # one E-utilities answer: 200 citations are a few MB
MAX_HEADER_BYTES = 100 * 1024 * 1024  # a safetensors header (the safetensors library's own bound)
_SKIP_CHUNK = 1 << 16
_READ_CHUNK = 1 << 20


# name -> (the module constant holding its default, what it bounds): the options of `--limit`
LIMITS: dict[str, tuple[str, str]] = {
    "line-bytes": (
        "MAX_LINE_BYTES",
        "bytes of one line of a line-based file (PubTator, brat .ann, JSONL, MEDIC, CTD, TSV, RRF, OBO)",
    ),
    "text-bytes": (
        "MAX_TEXT_BYTES",
        "bytes of a file read whole (BioC JSON, plain text, brat .txt), decompressed",
    ),
    "json-nodes": ("MAX_JSON_NODES", "JSON values of a file parsed whole (BioC JSON, a link-batch manifest, a safetensors header)"),
    "xml-tags": ("MAX_XML_TAGS", "XML tags of one citation, article, document or record, or between two"),
    "xml-bytes": ("MAX_XML_BYTES", "XML bytes of one citation, article, document or record, or between two"),
    "mentions-per-document": ("MAX_MENTIONS_PER_DOCUMENT", "annotation lines of one PubTator document"),
    "manifest-bytes": ("MAX_MANIFEST_BYTES", "bytes of a link-batch manifest"),
    "answer-bytes": ("MAX_ANSWER_BYTES", "bytes of one NCBI E-utilities answer"),
    "header-bytes": ("MAX_HEADER_BYTES", "bytes of a safetensors file's header"),
}


def _variable(name: str) -> str:
    return "CURALINK_LIMIT_" + name.upper().replace("-", "_")


def limit(name: str) -> int:
    """The bound `name` of `LIMITS` in force: its environment variable when set, else its default."""
    constant, _ = LIMITS[name]
    given = os.environ.get(_variable(name))
    if given:
        try:
            return parse_limit_value(name, given)
        except ValueError:
            raise InputError(None, f"{_variable(name)}={given!r}: not a positive whole number") from None
    return default_limit(name)


def default_limit(name: str) -> int:
    """The bound `name` has when no option or environment variable sets it."""
    return int(globals()[LIMITS[name][0]])


def parse_limit_value(name: str, value: str) -> int:
    """A positive integer; 'k', 'M' and 'G' suffixes (1,000 powers for counts, 1,024 for bytes)."""
    text = value.strip().replace("_", "").replace(",", "")
    scale = 1
    if text[-1:].lower() in ("k", "m", "g"):
        power = "kmg".index(text[-1].lower()) + 1
        scale = (1024 if name.endswith("bytes") else 1000) ** power
        text = text[:-1]
    if not text.isascii() or not text.isdigit() or int(text) <= 0:
        raise ValueError(value)
    return int(text) * scale


def set_limit(name: str, value: int) -> None:
    """Put a bound in force for this process and the worker processes it starts."""
    if name not in LIMITS:
        raise KeyError(name)
    os.environ[_variable(name)] = str(value)


def over_limit(name: str, what: str, bound: int | None = None) -> str:
    """The words of a refusal: what passed which bound, and how to raise it."""
    bound = limit(name) if bound is None else bound
    return (
        f"{what} passes the limit {name}={bound:,}, refused (no real file comes close: a damaged or "
        "hostile file?)" + raise_hint(name)
    )


def read_bounded(
    stream: BinaryIO, source: Path | str | None, name: str = "text-bytes", what: str = "the file"
) -> bytes:
    """All of `stream`, read in 1 MB pieces and refused (an InputError naming `source` and the limit)
    as soon as it passes `limit(name)` bytes: never more than the bound is held (and never twice: the
    buffer itself is returned, a bytearray, which decodes and searches as bytes do)."""
    bound = limit(name)
    data = bytearray()
    while chunk := stream.read(min(_READ_CHUNK, bound + 1 - len(data))):
        data += chunk
        if len(data) > bound:
            raise InputError(source, over_limit(name, f"{what} (decompressed)", bound))
    return data  # type: ignore[return-value]


def json_nodes_problem(data: bytes | str, source: Path | str | None) -> None:
    """Refuse JSON text with more values than the json-nodes limit before it is parsed (an upper bound:
    every '{', '[' and ',' counts, those inside strings too)."""
    bound = limit("json-nodes")
    marks = (b"{", b"[", b",") if isinstance(data, bytes | bytearray) else ("{", "[", ",")
    nodes = sum(data.count(mark) for mark in marks)  # type: ignore[arg-type]
    if nodes > bound:
        raise InputError(source, over_limit("json-nodes", f"about {nodes:,} JSON values", bound))


# A line-based file (PubTator, brat .ann, MEDIC, CTD, TSV, RRF) whose last line has no line break may
# have been cut short (an interrupted download or copy), and a cut line often still parses: `D006331`
# cut to `D006`, 28 of 50 MEDIC concepts. Every real file of these formats ends with a line break.
CUT_LAST_LINE = (
    "the file ends in the middle of this line (no line break after it), so it may have been cut short "
    "(an interrupted download or copy?); if the line is complete, end the file with a line break"
)

_DIGITS = re.compile(r"^[+-]?[0-9]+$")


def not_text(head: bytes) -> tuple[str, int] | None:
    """(problem, line) when the first bytes of a file are UTF-16 or binary rather than UTF-8 text, else
    None: said up front, instead of "not valid UTF-8 at column 1" or "no documents found"."""
    half = max(1, len(head) // 2)
    even, odd = head[0::2].count(0), head[1::2].count(0)  # UTF-16 ASCII: every other byte is NUL
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or (
        max(even, odd) >= 0.4 * half and min(even, odd) <= 0.05 * half
    ):
        return "the file is UTF-16 text, not UTF-8: save it as UTF-8", 1
    if b"\x00" in head and not _utf8(head):  # NUL bytes and not UTF-8: binary (UTF-8 text may hold a NUL)
        line = head.count(b"\n", 0, head.index(b"\x00")) + 1
        return "a NUL byte: this is a binary file, not a text file", line
    return None


def _utf8(head: bytes) -> bool:
    """True when `head` is UTF-8, but for a character cut at its end."""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.reason == "unexpected end of data" and error.start >= len(head) - 3
    return True


def cr_only_lines(head: bytes) -> bool:
    """True when the first bytes of a file break lines with CR alone (classic Mac OS): no LF at all but
    CRs inside the text, so every line reader would see the whole file as one unfinished line."""
    return b"\n" not in head and b"\r" in head.rstrip(b"\r")


CR_ONLY = (
    "the lines end in CR alone (classic Mac OS line ends), so the file reads as one unfinished line: "
    "save it with LF (or CR LF) line ends"
)


def too_long_line(bound: int | None = None) -> str:
    """The problem of a line over `bound` bytes (default the line-bytes limit), worded for a curator."""
    return (
        f"the line is longer than {bound or limit('line-bytes'):,} bytes, refused (no real line of these formats "
        "comes close: a damaged or hostile file?)" + raise_hint("line-bytes")
    )


def raise_hint(name: str) -> str:
    return f"; if it is real, raise the limit with --limit {name}=N"


def bounded_lines(stream: BinaryIO, bound: int | None = None) -> Iterator[bytes | None]:
    """Each line's bytes with its line break, as iterating `stream` gives them, but None for a line of
    more than `bound` bytes (default the line-bytes limit, its break not counted), which is read past in
    64 KB pieces and never held."""
    bound = bound or limit("line-bytes")
    while raw := stream.readline(bound + 1):
        if len(raw) <= bound or raw.endswith(b"\n"):
            yield raw
            continue
        yield None  # before reading past it: a reader that stops here does not read the rest
        while (rest := stream.readline(_SKIP_CHUNK)) and not rest.endswith(b"\n"):
            pass


def control_character(value: str) -> str | None:
    """The first control character (category Cc, or a Unicode line / paragraph separator), else None."""
    for char in value:
        if unicodedata.category(char) in ("Cc", "Zl", "Zp"):
            return char
    return None


def id_problem(value: object, what: str = "id", *, max_length: int = MAX_ID_LENGTH) -> str | None:
    """Why `value` cannot be an id (non-empty, no control characters or surrounding spaces, short), or None."""
    if not isinstance(value, str):
        return f"{what} must be a string, got {type(value).__name__}"
    if not value:
        return f"empty {what}"
    if len(value) > max_length:
        return f"{what} is {len(value):,} characters long; at most {max_length:,} are allowed"
    char = control_character(value)
    if char is not None:
        return f"{what} {value[:60]!r} contains the control character U+{ord(char):04X}"
    if value != value.strip():
        return f"{what} {value[:60]!r} begins or ends with whitespace"
    return None


def check_id(
    value: object,
    what: str,
    *,
    source: Path | str | None,
    line: int | None = None,
    item: str | None = None,
    max_length: int = MAX_ID_LENGTH,
) -> str:
    """`value` when it is a valid id, else an InputError naming the file, line or item and the problem."""
    problem = id_problem(value, what, max_length=max_length)
    if problem is not None:
        raise InputError(source, problem, line=line, item=item)
    return value  # type: ignore[return-value]


def check_optional_id(
    value: str,
    what: str,
    *,
    source: Path | str | None,
    line: int | None = None,
    item: str | None = None,
    max_length: int = MAX_ID_LENGTH,
) -> str:
    """Like `check_id`, for ids that may be empty (an unlinked mention, an annotation without an id)."""
    if value == "":
        return value
    if len(value) > max_length:
        raise InputError(
            source,
            f"{what} is {len(value):,} characters long; at most {max_length:,} are allowed",
            line,
            item,
        )
    char = control_character(value)
    if char is not None:
        raise InputError(
            source, f"{what} {value[:60]!r} contains the control character U+{ord(char):04X}", line, item
        )
    return value


def strict_integer(value: Any, what: str, *, source: Path | str | None, line: int | None, item: str) -> int:
    """An integer from JSON or XML text without rounding: 7, 7.0 and "7" are 7; 1.5, "1.5", "1e3",
    true and "٣" are errors."""
    if isinstance(value, bool):
        pass
    elif isinstance(value, int):
        return value
    elif isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return int(value)
    elif isinstance(value, str) and _DIGITS.match(value.strip()):
        return int(value.strip())
    raise InputError(source, f"{what} must be an integer, got {value!r}", line=line, item=item)


class LayoutBudget:
    """The gap characters one file may still make a reader lay out (see the module docstring)."""

    def __init__(self, factor: int = GAP_FACTOR, allowance: int = GAP_ALLOWANCE):
        self.factor = factor
        self.allowance = allowance
        self.text = 0
        self.gaps = 0

    def check(
        self,
        spans: list[tuple[int, int]],
        *,
        source: Path | str | None,
        line: int | None = None,
        item: str | None = None,
    ) -> None:
        """Count one document's passages, given as (offset, text length); raise when its offsets reach
        further than the file's text can account for (nothing is laid out before this check)."""
        cursor = 0
        gaps = 0
        text = 0
        for offset, length in sorted(spans):
            if offset < 0:
                raise InputError(source, f"negative passage offset {offset}", line=line, item=item)
            gaps += max(0, offset - cursor)
            cursor = max(cursor, offset + length)
            text += length
        self.text += text
        self.gaps += gaps
        allowed = self.factor * self.text + self.allowance
        if self.gaps > allowed:
            last = max((offset for offset, _ in spans), default=0)
            raise InputError(
                source,
                f"passage offsets reach {last:,} but the file gives only {self.text:,} characters of "
                f"passage text so far: {self.gaps:,} characters would be blank padding between passages "
                f"(at most {self.factor} times the text plus {self.allowance:,}); the offsets look wrong",
                line=line,
                item=item,
            )


def json_depth_problem(value: Any, limit: int = MAX_JSON_DEPTH) -> str | None:
    """'nested N levels deep ...' when a parsed JSON value is nested deeper than `limit`, else None."""
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        current, depth = stack.pop()
        if depth > limit:
            return f"JSON nested more than {limit} levels deep"
        children = current.values() if isinstance(current, dict) else current
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return None


def parse_json(
    text: str, *, source: Path | str | None, line: int | None = None, item: str | None = None
) -> Any:
    """`json.loads`, with nesting too deep for Python (a RecursionError) or for `MAX_JSON_DEPTH` an
    InputError; a syntax error stays a `json.JSONDecodeError` for the caller to word."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise InputError(
            source, f"JSON nested more than {MAX_JSON_DEPTH} levels deep", line=line, item=item
        ) from None
    problem = json_depth_problem(value)
    if problem is not None:
        raise InputError(source, problem, line=line, item=item)
    return value
