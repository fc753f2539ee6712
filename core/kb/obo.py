"""OBO ontologies (MONDO, HPO, ChEBI, DOID) through fastobo, the Rust OBO 1.4 parser pronto uses.

We use `fastobo.iter` rather than pronto: it yields one frame at a time, so memory stays nearly
flat on ChEBI (hundreds of MB), while `pronto.Ontology` builds the whole graph first. fastobo
also reports syntax errors with their line. Its single-threaded reader is as fast here as the
threaded one, which reads ahead without bound (335 MB peak on a 74 MB file against 64 MB).

Kept: name, def, alt_id, is_a parents, and synonyms of the scopes in `synonym_scopes`
(EXACT and RELATED by default: HPO's lay terms are RELATED; BROAD and NARROW synonyms name
other, wider or narrower, concepts and would send mentions to the wrong term). xrefs are
ignored, obsolete terms and Typedef / Instance frames are dropped, a term without a name is
skipped with a warning. `import:` header lines (MS imports PATO and UO) are not followed: the
imported ontology's terms are not read, and each such line is warned about (and passed to
`on_warning`, so a command can show it in its summary); import that file on its own.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import fastobo

from core.errors import InputError
from core.kb.concept import Concept
from core.kb.identifiers import canonical_id
from core.kb.source_file import first_undecodable_line, open_binary, require_file
from core.limits import CUT_LAST_LINE, check_id, limit, not_text, too_long_line
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

logger = logging.getLogger(__name__)

DEFAULT_SCOPES = frozenset({"EXACT", "RELATED"})
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
BATCH_FRAMES = 1_000


def read_obo(
    path: str | Path,
    *,
    synonym_scopes: Collection[str] = DEFAULT_SCOPES,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
    on_warning: Callable[[str], None] | None = None,
) -> Iterator[Concept]:
    """Stream the live terms of an OBO file (plain or gzip) as concepts."""
    path = require_file(path)
    _check_text(path)
    scopes = {scope.upper() for scope in synonym_scopes}
    message = f"reading {path.name}"
    frames = count = obsolete = unnamed = 0
    last = ""
    cancel.raise_if_cancelled()
    with open_binary(path) as (raw_stream, position), _guard_errors(stream := LineGuard(raw_stream, path)):
        progress(0, position.size, message)
        try:
            reader = fastobo.iter(stream, ordered=True, threads=1)
            _warn_imports(path, reader.header(), on_warning)
            for frame in reader:
                frames += 1
                last = str(getattr(frame, "id", ""))
                if frames % BATCH_FRAMES == 0:
                    cancel.raise_if_cancelled()
                    progress(position.done(), position.size, message)
                if not isinstance(frame, fastobo.term.TermFrame):
                    continue
                if _is_obsolete(frame):
                    obsolete += 1
                    continue
                concept = _concept(path, frame, scopes)
                if concept is None:
                    unnamed += 1
                    logger.warning("%s: term %s has no name; skipped", path, frame.id)
                else:
                    count += 1
                    yield concept
        except SyntaxError as exc:
            cut = _cut_last_line(path)
            near_end = cut is not None and (exc.lineno is None or cut <= exc.lineno)
            problem = CUT_LAST_LINE if near_end else f"not valid OBO: {exc.msg}"
            raise InputError(path, problem, line=exc.lineno or cut) from exc
        except (OSError, TypeError) as exc:
            # fastobo raises TypeError ("expected path or binary file handle", caused by "stream did not
            # contain valid UTF-8") when the header is not UTF-8, OSError when a later line is not
            if "UTF-8" not in f"{exc} {exc.__cause__}":
                raise
            located = first_undecodable_line(path)
            raise located or InputError(path, "not valid UTF-8") from exc
        except BaseException as exc:
            # fastobo is Rust: where it panics (an id of control characters reaches "unreachable code",
            # found by `curalink bench fuzz`), pyo3 raises a PanicException, a BaseException
            if type(exc).__name__ != "PanicException":
                raise
            raise _panic_error(path, exc, last) from None
        progress(position.size, position.size, message)
    if count == 0:
        logger.warning("%s: no live [Term] frames among %d frames", path, frames)
    logger.info("%s: %d terms kept, %d obsolete dropped, %d without a name", path, count, obsolete, unnamed)


class LineGuard(io.RawIOBase):
    """The stream fastobo reads, refusing a line over the line-bytes limit before the parser sees it:
    fastobo holds a line whole, and a 2 GB `name:` line aborts the process ("memory allocation of
    4283957248 bytes failed"), which no Python handler can catch. The refusal is kept in `error`,
    since fastobo reports a failed read only as a TypeError."""

    def __init__(self, stream: BinaryIO, path: Path):
        super().__init__()
        self.stream, self.path = stream, path
        self.bound = limit("line-bytes")
        self.line = 1  # the line being read
        self.run = 0  # its bytes so far
        self.error: InputError | None = None

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        chunk = self.stream.read(size)
        if len(chunk) <= self.bound:  # fastobo reads 8 KB: only the line it continues can be too long
            first = chunk.find(b"\n")
            if first < 0:
                self.run += len(chunk)
            elif self.run + first <= self.bound:
                self.line += chunk.count(b"\n")
                self.run = len(chunk) - chunk.rfind(b"\n") - 1
            else:
                self.run += first
        else:
            self._walk(chunk)
        if self.run > self.bound:
            self.error = InputError(self.path, too_long_line(self.bound), line=self.line)
            raise self.error
        return chunk

    def _walk(self, chunk: bytes) -> None:
        """Count a chunk longer than the bound line by line, stopping at a line over it."""
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0 and self.run + end - start <= self.bound:
            self.line, self.run, start = self.line + 1, 0, end + 1
        self.run += (len(chunk) if end < 0 else end) - start

    def readinto(self, buffer) -> int:  # type: ignore[override]
        chunk = self.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)


@contextmanager
def _guard_errors(guard: LineGuard) -> Iterator[None]:
    """A failure caused by the guard's refusal is that refusal, whatever fastobo made of it."""
    try:
        yield
    except BaseException:
        if guard.error is not None:
            raise guard.error from None
        raise


def _check_text(path: Path) -> None:
    """Refuse UTF-16 and binary files up front, with what they are (fastobo only says "not UTF-8")."""
    with open_binary(path) as (stream, _):
        found = not_text(stream.read(4096))
    if found is not None:
        raise InputError(path, found[0], line=found[1])


def _panic_error(path: Path, exc: BaseException, last: str) -> InputError:
    """The error for a fastobo panic: the first control character when the file has one (the cause seen
    so far), else the parser's own words and the last term read."""
    with open_binary(path) as (stream, _):
        for number, raw in enumerate(stream, start=1):
            found = _CONTROL.search(raw)
            if found:
                return InputError(
                    path, f"control character U+{raw[found.start()]:04X}: not valid in OBO", line=number
                )
    where = f"after term {last}" if last else "in the header or the first frame"
    return InputError(path, f"not valid OBO: the OBO parser failed {where} ({exc})")


def _cut_last_line(path: Path) -> int | None:
    """The number of the last line when the (decompressed) file does not end with a line break, else
    None (read only on the error path: fastobo's error on such a line is "expected EOL")."""
    last, breaks = b"\n", 0
    with open_binary(path) as (stream, _):
        while chunk := stream.read(1 << 20):
            last, breaks = chunk[-1:], breaks + chunk.count(b"\n")
    return breaks + 1 if last != b"\n" else None


def _warn_imports(path: Path, header: fastobo.header.HeaderFrame, on_warning) -> None:
    for clause in header:
        if isinstance(clause, fastobo.header.ImportClause):
            message = (
                f"{path}: 'import: {clause.reference}' is not followed; the terms of {clause.reference} "
                "are not imported (import that ontology on its own)"
            )
            logger.warning(message)
            if on_warning is not None:
                on_warning(message)


def _is_obsolete(frame: fastobo.term.TermFrame) -> bool:
    return any(isinstance(clause, fastobo.term.IsObsoleteClause) and clause.obsolete for clause in frame)


def _concept(path: Path, frame: fastobo.term.TermFrame, scopes: set[str]) -> Concept | None:
    """The concept of a live term frame; None when it has no name."""
    name = definition = ""
    synonyms: list[str] = []
    alt_ids: list[str] = []
    parents: list[str] = []
    for clause in frame:
        if isinstance(clause, fastobo.term.NameClause):
            name = clause.name.strip()
        elif isinstance(clause, fastobo.term.DefClause):
            definition = str(clause.definition).strip()
        elif isinstance(clause, fastobo.term.SynonymClause):
            synonym = clause.synonym
            if str(synonym.scope).upper() in scopes and synonym.desc.strip():
                synonyms.append(synonym.desc.strip())
        elif isinstance(clause, fastobo.term.AltIdClause):
            alt_ids.append(canonical_id(str(clause.alt_id)))
        elif isinstance(clause, fastobo.term.IsAClause):
            parents.append(canonical_id(str(clause.term)))
    if not name:
        return None
    concept_id = canonical_id(check_id(str(frame.id), "term id", source=path))
    prefix, separator, _ = concept_id.partition(":")
    return Concept(
        concept_id=concept_id,
        vocabulary=prefix.upper() if separator else "OBO",
        preferred_name=name,
        synonyms=tuple(synonym for synonym in dict.fromkeys(synonyms) if synonym != name),
        alt_ids=tuple(dict.fromkeys(alt_ids)),
        definition=definition,
        parents=tuple(dict.fromkeys(parents)),
    )
