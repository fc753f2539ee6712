"""MeSH XML as NLM ships it: descriptors (desc20XX.xml) and supplementary concepts (supp20XX.xml).

A descriptor file is ~300 MB, so we stream with lxml iterparse and clear each record once read.
Names come only from the record's own paths (DescriptorName/String, and every
ConceptList/Concept/TermList/Term/String as a synonym), never from the many nested
DescriptorReferredTo/QualifierName strings (see-related, pharmacological actions, qualifiers).
The definition is the preferred concept's ScopeNote (an SCR without one falls back to its Note).
Descriptors get their tree numbers; supplementary records get the descriptors they are mapped
to (HeadingMappedTo, the leading `*` of a major mapping dropped) as parents. The DTD named by the
DOCTYPE is never fetched or loaded (no network, no entity expansion).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from core.errors import InputError
from core.formats.xml_guard import Meter
from core.kb.concept import Concept
from core.kb.source_file import open_binary, require_file
from core.limits import check_id
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

logger = logging.getLogger(__name__)

VOCABULARY = "MESH"
RECORD_SETS = {"DescriptorRecordSet": "DescriptorRecord", "SupplementalRecordSet": "SupplementalRecord"}
BATCH_RECORDS = 500
_PARSER_OPTIONS = {"resolve_entities": False, "load_dtd": False, "no_network": True, "huge_tree": True}


def read_mesh_xml(
    path: str | Path,
    *,
    permuted_terms: bool = True,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> Iterator[Concept]:
    """Stream the descriptors or supplementary concept records of a MeSH XML file.

    `permuted_terms=False` drops entry terms NLM flags IsPermutedTermYN="Y" (word-order
    permutations from MeSH releases before 2019).
    """
    path = require_file(path)
    root = mesh_root_element(path)
    if root not in RECORD_SETS:
        hint = " (qualifiers are not concepts)" if root == "QualifierRecordSet" else ""
        raise InputError(
            path,
            f"root element <{root}>{hint}; expected <DescriptorRecordSet> or <SupplementalRecordSet>",
            line=None,
        )
    record_tag = RECORD_SETS[root]
    message = f"reading {path.name}"
    count = 0
    last = ""
    cancel.raise_if_cancelled()
    with open_binary(path) as (stream, position):
        progress(0, position.size, message)
        meter = Meter(stream, path, record_tag)  # bounds the tags and bytes of a record, or between two
        events = etree.iterparse(meter, events=("end",), tag=record_tag, remove_comments=True, **_PARSER_OPTIONS)
        try:
            for _, element in events:
                count += 1
                if record_tag == "DescriptorRecord":
                    concept = _descriptor(path, element, count, permuted_terms)
                else:
                    concept = _supplemental(path, element, count, permuted_terms)
                last = f"after <{record_tag}> {concept.concept_id}"
                yield concept
                element.clear(keep_tail=True)
                while element.getprevious() is not None:
                    del element.getparent()[0]
                meter.stretch(None)
                if count % BATCH_RECORDS == 0:
                    cancel.raise_if_cancelled()
                    progress(position.done(), position.size, message)
        except etree.XMLSyntaxError as exc:
            raise _syntax_error(path, exc, last) from exc
        progress(position.size, position.size, message)
    if count == 0:
        logger.warning("%s: no <%s> elements", path, record_tag)
    logger.info("%s: %d MeSH %s elements", path, count, record_tag)


def mesh_root_element(path: str | Path) -> str:
    """The tag of the document element, read from the first bytes only."""
    parser = etree.XMLPullParser(events=("start",), **_PARSER_OPTIONS)
    try:
        with open_binary(path) as (stream, _):
            while chunk := stream.read(16_384):
                parser.feed(chunk)
                for _, element in parser.read_events():
                    return str(element.tag)
            parser.close()
    except etree.XMLSyntaxError as exc:
        raise _syntax_error(Path(path), exc) from exc
    raise InputError(path, "no XML element found")


def _syntax_error(path: Path, exc: etree.XMLSyntaxError, after: str = "") -> InputError:
    problem = str(exc.msg or exc).strip()
    line = exc.lineno or None
    if f", line {line}, column " in problem:  # lxml repeats the position in the message
        problem = problem[: problem.index(f", line {line}, column ")]
    if "Document is empty" in problem or "Start tag expected" in problem:
        problem += " (not XML?)"
    elif "encoding" in problem.lower():
        problem += " (the bytes are not in the declared encoding, UTF-8 unless the XML header says otherwise)"
    elif line is not None and line >= _line_count(path):
        problem += "; the file ends before the XML is complete (truncated?)"
    return InputError(path, f"malformed XML: {problem}", line=line, item=after or None)


def _line_count(path: Path) -> int:
    """Lines in the file, a last line without a newline included (only on the error path)."""
    newlines = 0
    last = b"\n"
    with open_binary(path) as (stream, _):
        while chunk := stream.read(1 << 20):
            newlines += chunk.count(b"\n")
            last = chunk[-1:]
    return newlines + (last != b"\n")


def _clean(text: str | None) -> str:
    """Element text with NLM's line breaks and indentation collapsed."""
    return " ".join(text.split()) if text else ""


def _terms(record: etree._Element, permuted_terms: bool) -> list[str]:
    terms = []
    for term in record.iterfind("ConceptList/Concept/TermList/Term"):
        if not permuted_terms and term.get("IsPermutedTermYN") == "Y":
            continue
        text = _clean(term.findtext("String"))
        if text:
            terms.append(text)
    return terms


def _preferred_scope_note(record: etree._Element) -> str:
    concept = record.find("ConceptList/Concept[@PreferredConceptYN='Y']")
    return _clean(concept.findtext("ScopeNote")) if concept is not None else ""


def _semantic_types(record: etree._Element) -> tuple[str, ...]:
    """Semantic type UIs, present in releases up to 2018 only."""
    found = record.iterfind("ConceptList/Concept/SemanticTypeList/SemanticType/SemanticTypeUI")
    return tuple(dict.fromkeys(_clean(ui.text) for ui in found if _clean(ui.text)))


def _identity(
    path: Path, record: etree._Element, number: int, ui_tag: str, name_path: str
) -> tuple[str, str]:
    ui = _clean(record.findtext(ui_tag))
    where = f"<{record.tag}> #{number}"
    if not ui:
        raise InputError(path, f"no <{ui_tag}>", line=record.sourceline, item=where)
    check_id(ui, f"<{ui_tag}>", source=path, line=record.sourceline, item=where)
    name = _clean(record.findtext(name_path))
    if not name:
        raise InputError(path, f"no <{name_path}> text", line=record.sourceline, item=f"{where} {ui}")
    return ui, name


def _descriptor(path: Path, record: etree._Element, number: int, permuted_terms: bool) -> Concept:
    ui, name = _identity(path, record, number, "DescriptorUI", "DescriptorName/String")
    synonyms = [term for term in dict.fromkeys(_terms(record, permuted_terms)) if term != name]
    tree_numbers = (_clean(tree.text) for tree in record.iterfind("TreeNumberList/TreeNumber"))
    return Concept(
        concept_id=ui,
        vocabulary=VOCABULARY,
        preferred_name=name,
        synonyms=tuple(synonyms),
        semantic_types=_semantic_types(record),
        definition=_preferred_scope_note(record),
        tree_numbers=tuple(tree for tree in tree_numbers if tree),
    )


def _supplemental(path: Path, record: etree._Element, number: int, permuted_terms: bool) -> Concept:
    ui, name = _identity(path, record, number, "SupplementalRecordUI", "SupplementalRecordName/String")
    synonyms = [term for term in dict.fromkeys(_terms(record, permuted_terms)) if term != name]
    mapped = record.iterfind("HeadingMappedToList/HeadingMappedTo/DescriptorReferredTo/DescriptorUI")
    parents = [_clean(descriptor.text).lstrip("*") for descriptor in mapped]
    return Concept(
        concept_id=ui,
        vocabulary=VOCABULARY,
        preferred_name=name,
        synonyms=tuple(synonyms),
        semantic_types=_semantic_types(record),
        definition=_preferred_scope_note(record) or _clean(record.findtext("Note")),
        parents=tuple(dict.fromkeys(parent for parent in parents if parent)),
    )
