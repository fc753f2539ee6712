"""The knowledge base in the store: concepts, names, type-ahead search."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import replace

from sqlalchemy import delete, func, insert, select
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from core.errors import CuralinkError
from core.kb.concept import Concept
from core.kb.concept_stream import ConceptStream
from core.kb.identifiers import canonical_id
from core.kb.knowledge_base import KnowledgeBase
from core.kb.name_search import NameIndex
from core.kb.namespaces import SETTING_KEY, parse_namespaces
from core.kb.variants import SOURCE as VARIANT_SOURCE
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.store.access import StoreAccess
from core.store.documents_store import ImportSummary
from core.store.kb_rekey import rekey_concepts
from core.store.schema import ConceptIdRow, ConceptRow, ImportRunRow, NameRow
from core.store.settings_store import SettingsStore, write_setting
from core.text.normalize import normalize_name

_MULTI = "|"
_INDEX_LOCK = threading.Lock()  # one build of the forgiving-search index at a time
ID_PREFIX_MIN = 3  # characters of an id typed before ids starting with them are listed


class KnowledgeBaseStore:
    """The knowledge base: concepts, names, ids and the name index (`project.kb`)."""

    def __init__(self, store: StoreAccess, settings: SettingsStore):
        self._store = store
        self._settings = settings  # the preferred id namespaces

    def import_concepts(
        self,
        concepts: Iterable[Concept],
        *,
        source: str = "",
        fmt: str = "",
        batch_size: int = 5000,
        names_only: bool = False,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> ImportSummary:
        """Store concepts and their names atomically; a concept already stored gains the new names only.

        Every id of a concept (primary and alternatives) goes to the id table, and concepts are then
        keyed by the project's preferred id namespaces (`summary.rekeyed` counts those re-keyed).
        Progress counts concepts, or, for `load_kb`'s stream, bytes of its file as the stream does.

        `names_only`: a second vocabulary's synonyms for the concepts already stored (MEDIC's disease
        entry terms onto MeSH descriptors of the same id); a concept is matched by any of its ids that
        the project's concepts answer to, and one matched nowhere is not added (`summary.unmatched`).
        """
        summary = ImportSummary()
        preference = self._settings.id_namespaces()
        stream = concepts if isinstance(concepts, ConceptStream) else None
        with self._store.session() as session:
            known = set(session.scalars(select(ConceptRow.id)))
            answers = _answering_ids(session) if names_only else {}
            concept_rows: list[dict] = []
            name_rows: list[dict] = []
            id_rows: list[dict] = []
            for concept in concepts:
                cancel.raise_if_cancelled()
                if names_only:
                    target = _stored_concept(concept, known, answers)
                    if target is None:
                        summary.unmatched += 1
                        continue
                    concept = replace(concept, concept_id=target, alt_ids=())
                    summary.skipped += 1
                elif concept.concept_id in known:
                    summary.skipped += 1
                else:
                    known.add(concept.concept_id)
                    concept_rows.append(_concept_row(concept))
                    summary.added += 1
                id_rows += [
                    {"id": i, "concept_id": concept.concept_id}
                    for i in dict.fromkeys([concept.concept_id, *concept.alt_ids])
                ]  # names_only: the stored concept's own ids only (alt_ids cleared above)
                seen: set[str] = set()
                own = {concept.preferred_name, *concept.synonyms}
                for name in concept.names:
                    if name and name not in seen:
                        seen.add(name)
                        name_rows.append(
                            {
                                "concept_id": concept.concept_id,
                                "name": name,
                                "normalized": normalize_name(name),
                                "preferred": name == concept.preferred_name and not names_only,
                                # a generated variant (core.kb.variants) is told from the file's names
                                "source": "kb" if name in own else VARIANT_SOURCE,
                            }
                        )
                if len(name_rows) >= batch_size:
                    summary.names += self._flush_concepts(session, concept_rows, name_rows, id_rows)
                    concept_rows, name_rows, id_rows = [], [], []
                    _report(progress, stream, summary)
            summary.names += self._flush_concepts(session, concept_rows, name_rows, id_rows)
            cancel.raise_if_cancelled()
            _report(progress, stream, summary, "read; storing")
            summary.rekeyed = rekey_concepts(session, preference)
            session.add(
                ImportRunRow(
                    kind="kb", source_file=source, format=fmt, added=summary.added, skipped=summary.skipped
                )
            )
        self._names_changed()
        _report(progress, stream, summary, "stored")
        return summary

    @staticmethod
    def _flush_concepts(
        session: Session, concept_rows: list[dict], name_rows: list[dict], id_rows: list[dict]
    ) -> int:
        if concept_rows:
            session.execute(insert(ConceptRow), concept_rows)
        if id_rows:
            session.connection().execute(
                sqlite_insert(ConceptIdRow.__table__).on_conflict_do_nothing(), id_rows
            )
        if not name_rows:
            return 0
        result = session.connection().execute(
            sqlite_insert(NameRow.__table__).on_conflict_do_nothing(), name_rows
        )
        return max(result.rowcount, 0)

    def add_names(self, concept_id: str, names: Iterable[str], *, source: str = "curator") -> int:
        """Add synonyms to a stored concept (curator-sourced or from training mentions)."""
        rows = [
            {
                "concept_id": concept_id,
                "name": n,
                "normalized": normalize_name(n),
                "preferred": False,
                "source": source,
            }
            for n in dict.fromkeys(names)
            if n.strip()
        ]
        with self._store.session() as session:
            if session.get(ConceptRow, concept_id) is None:
                raise CuralinkError(f"no concept {concept_id!r} in the project's knowledge base")
            if not rows:
                return 0
            result = session.connection().execute(
                sqlite_insert(NameRow.__table__).on_conflict_do_nothing(), rows
            )
        self._names_changed()
        return max(result.rowcount, 0)

    def names_from_source(self, source: str) -> dict[str, set[str]]:
        """Concept id -> its names added with `source` ("curator": synonyms learnt from decisions)."""
        with self._store.session() as session:
            found: dict[str, set[str]] = {}
            rows = session.execute(select(NameRow.concept_id, NameRow.name).where(NameRow.source == source))
            for concept_id, name in rows:
                found.setdefault(concept_id, set()).add(name)
        return found

    def remove_names(self, names: dict[str, set[str]], *, source: str) -> int:
        """Remove names of `source` (concept id -> names); names of any other source are never touched."""
        removed = 0
        with self._store.session() as session:
            for concept_id, wanted in names.items():
                result = session.execute(
                    delete(NameRow).where(
                        NameRow.source == source,
                        NameRow.concept_id == concept_id,
                        NameRow.name.in_(sorted(wanted)),
                    )
                )
                removed += max(result.rowcount, 0)
        self._names_changed()
        return removed

    def _names_changed(self) -> None:
        """Names were written here: the forgiving-search index is stale (see `name_index`)."""
        self._names_generation = getattr(self, "_names_generation", 0) + 1

    def knowledge_base(self, vocabulary: str | None = None) -> KnowledgeBase:
        """The stored KB in memory, names in insertion order (stable, so fingerprints are too)."""
        with self._store.session() as session:
            names: dict[str, list[str]] = {}
            for concept_id, name in session.execute(
                select(NameRow.concept_id, NameRow.name).order_by(NameRow.id)
            ):
                names.setdefault(concept_id, []).append(name)
            # plain rows, not ORM objects: the same attributes at a third of the cost (MEDIC's 12,000
            # concepts took ~0.6 s as ORM objects, read by the linking process on every desk start)
            query = select(*(getattr(ConceptRow, c) for c in _CONCEPT_COLUMNS))
            if vocabulary:
                query = query.where(ConceptRow.vocabulary == vocabulary)
            concepts = [_row_concept(row, names.get(row.id, [])) for row in session.execute(query)]
        return KnowledgeBase(concepts)

    def concept(self, concept_id: str) -> Concept | None:
        """The concept for any id it answers to (its primary id or an alternative, any spelling)."""
        with self._store.session() as session:
            primary = _resolve_id(session, concept_id)
            if primary is None:
                return None
            row = session.get(ConceptRow, primary)
            names = list(
                session.scalars(
                    select(NameRow.name).where(NameRow.concept_id == primary).order_by(NameRow.id)
                )
            )
            return _row_concept(row, names)

    def concepts(self, concept_ids: Iterable[str]) -> dict[str, Concept | None]:
        """`concept` for many ids in three statements (a mention's candidates are shown together; one
        lookup each was 48 statements a mention). Ids that are not primary ids go through `concept`."""
        wanted = list(dict.fromkeys(concept_ids))
        found: dict[str, Concept | None] = {}
        with self._store.session() as session:
            for i in range(0, len(wanted), 500):  # SQLite caps bound parameters per statement
                chunk = wanted[i : i + 500]
                rows = {
                    row.id: row for row in session.scalars(select(ConceptRow).where(ConceptRow.id.in_(chunk)))
                }
                names: dict[str, list[str]] = {}
                for concept_id, name in session.execute(
                    select(NameRow.concept_id, NameRow.name)
                    .where(NameRow.concept_id.in_(list(rows)))
                    .order_by(NameRow.id)
                ):
                    names.setdefault(concept_id, []).append(name)
                found.update((key, _row_concept(row, names.get(key, []))) for key, row in rows.items())
        return {key: found[key] if key in found else self.concept(key) for key in wanted}

    def resolve_concept_id(self, concept_id: str) -> str | None:
        """The stored primary id of the concept that answers to `concept_id`, or None."""
        with self._store.session() as session:
            return _resolve_id(session, concept_id)

    def set_id_namespaces(self, namespaces: Sequence[str]) -> int:
        """Store the preferred id namespaces and re-key the stored KB by them; returns concepts re-keyed."""
        preference = list(parse_namespaces(namespaces))
        if not preference:
            raise CuralinkError("give at least one id namespace, for example MESH OMIM")
        with self._store.session() as session:
            write_setting(session, SETTING_KEY, preference)
            session.flush()
            return rekey_concepts(session, preference)

    def search_names(self, query: str, limit: int = 50) -> list[tuple[str, str, str]]:
        """Type-ahead over names and ids: (concept_id, matched name, preferred name), best first.

        Tiers, each only adding concepts not listed yet: the concept answering to the query as an id
        (its own or an alternative, any spelling), concepts with an id starting with it, names
        starting with it (shortest first, so an exact name leads), then forgiving matches
        (`NameIndex`: a word of a longer name, spelling variants, word order, typos), which ranks
        "Anemia" for "anaemia" above "Congenital Sideroblastic Anaemia" where a substring scan would not.
        """
        key = normalize_name(query)
        if not key:
            return []
        results: list[tuple[str, str, str]] = []
        with self._store.session() as session:
            primary = _resolve_id(session, query)
            if primary is not None:
                exact_id = session.get(ConceptRow, primary)
                results.append((exact_id.id, exact_id.preferred_name, exact_id.preferred_name))
            id_rows = _id_prefix_rows(session, query, limit)
            typed_an_id = primary is not None or bool(id_rows)
            rows = list(id_rows)
            prefix = key.replace("%", "").replace("_", "")
            rows += session.execute(
                select(NameRow.concept_id, NameRow.name, ConceptRow.preferred_name)
                .join(ConceptRow, ConceptRow.id == NameRow.concept_id)
                .where(NameRow.normalized >= prefix, NameRow.normalized < prefix + "\uffff")
                .order_by(func.length(NameRow.normalized))
                .limit(limit * 3)
            ).all()
        _add_new(results, rows, limit)
        if len(results) < limit and not typed_an_id:
            hits = self.name_index().search(query, limit + len(results))  # not for ids: typos of numbers
            _add_new(results, self._name_rows([hit.row for hit in hits]), limit)
        return results

    def name_index_built(self) -> bool:
        """Whether a forgiving search would find its index built, without waiting for it (the desk builds
        it in a thread and keeps its window taking keys meanwhile)."""
        return getattr(self, "_name_index", None) is not None

    def name_index(self, *, rebuild: bool = False) -> NameIndex:
        """The forgiving-search index of every stored name, built on first use (about 0.5 s for MEDIC)
        and again once names were added here (a generation this store bumps) or by another program
        (a higher last row id; counting 75,000 rows would cost a keystroke 15 ms). A name removed
        elsewhere stays indexed but is never shown: hits are read back from the table."""
        with self._store.session() as session:
            state = (getattr(self, "_names_generation", 0), session.scalar(select(func.max(NameRow.id))))
        with _INDEX_LOCK:
            cached = getattr(self, "_name_index", None)
            if cached is not None and cached[0] == state and not rebuild:
                return cached[1]
            with self._store.session() as session:
                index = NameIndex(
                    session.execute(
                        select(NameRow.id, NameRow.concept_id, NameRow.normalized, NameRow.preferred)
                    )
                )
            self._name_index = (state, index)
            return index

    def _name_rows(self, row_ids: list[int]) -> list[tuple[str, str, str]]:
        """(concept id, name, preferred name) of name rows, in the order asked (the concept as it is
        keyed now, even if it was re-keyed after the index was built)."""
        if not row_ids:
            return []
        with self._store.session() as session:
            found = {
                row_id: (concept_id, name, preferred)
                for row_id, concept_id, name, preferred in session.execute(
                    select(NameRow.id, NameRow.concept_id, NameRow.name, ConceptRow.preferred_name)
                    .join(ConceptRow, ConceptRow.id == NameRow.concept_id)
                    .where(NameRow.id.in_(row_ids))
                )
            }
        return [found[row_id] for row_id in row_ids if row_id in found]

    def concept_names(self, concept_ids: Iterable[str]) -> dict[str, str]:
        """Preferred names of the concepts answering to these ids (a parent list shown by name);
        ids not in the KB are left out."""
        names: dict[str, str] = {}
        with self._store.session() as session:
            for concept_id in dict.fromkeys(concept_ids):
                primary = _resolve_id(session, concept_id)
                if primary is not None:
                    names[concept_id] = session.get(ConceptRow, primary).preferred_name
        return names


def _add_new(results: list[tuple[str, str, str]], rows: Iterable[Sequence[str]], limit: int) -> None:
    """Append rows of concepts not listed yet, up to `limit` in all."""
    seen = {r[0] for r in results}
    for concept_id, name, preferred in rows:
        if len(results) >= limit:
            return
        if concept_id not in seen:
            seen.add(concept_id)
            results.append((concept_id, name, preferred))


def _looks_like_id(query: str) -> bool:
    """One token holding a digit (D001943, OMIM:1144): typed as an id, not a name with a typo."""
    raw = query.strip()
    return bool(raw) and " " not in raw and any(c.isdigit() for c in raw)


def _id_prefix_rows(session: Session, query: str, limit: int) -> list[tuple[str, str, str]]:
    """Concepts with an id (own or alternative) starting with the query, as typed or upper-cased."""
    raw = query.strip()
    if len(raw) < ID_PREFIX_MIN or len(raw) > 200 or not _looks_like_id(raw):
        return []
    rows: list[tuple[str, str, str]] = []
    for spelling in dict.fromkeys([raw, raw.upper(), canonical_id(raw.upper())]):
        rows += session.execute(
            select(ConceptIdRow.concept_id, ConceptRow.preferred_name, ConceptRow.preferred_name)
            .join(ConceptRow, ConceptRow.id == ConceptIdRow.concept_id)
            .where(ConceptIdRow.id >= spelling, ConceptIdRow.id < spelling + "\uffff")
            .order_by(ConceptIdRow.id)
            .limit(limit)
        ).all()
    return rows


def _answering_ids(session: Session) -> dict[str, set[str]]:
    """Every id the stored concepts answer to (primary and alternative) -> those concepts."""
    answers: dict[str, set[str]] = {}
    for identifier, concept_id in session.execute(select(ConceptIdRow.id, ConceptIdRow.concept_id)):
        answers.setdefault(identifier, set()).add(concept_id)
    return answers


def _stored_concept(concept: Concept, known: set[str], answers: dict[str, set[str]]) -> str | None:
    """The one stored concept `concept` is: its own id when stored, else the one concept its ids answer
    to; None when none does, or when they answer to two (a synonym must not land on a guess)."""
    if concept.concept_id in known:
        return concept.concept_id
    matched = set().union(*(answers.get(i, set()) for i in (concept.concept_id, *concept.alt_ids)))
    return next(iter(matched)) if len(matched) == 1 else None


def _report(
    progress: ProgressCallback, stream: ConceptStream | None, summary: ImportSummary, what: str = ""
) -> None:
    """Concepts stored so far, or, for a `load_kb` stream, its position in its file (bytes: the unit its
    own reading progress is in, so one bar never divides concepts by bytes) with the count in the message."""
    if stream is None:
        progress(summary.added + summary.skipped, None, f"concepts {what}".strip())
    else:
        progress(stream.done, stream.total, stream.describe(what))


def _resolve_id(session: Session, concept_id: str) -> str | None:
    """Primary id for an id as typed: exact, canonical (`MESH:D001943` -> `D001943`), or an alternative."""
    raw = concept_id.strip()
    if not raw or len(raw) > 200:
        return None
    spellings = list(dict.fromkeys([raw, canonical_id(raw), canonical_id(raw.upper())]))
    for spelling in spellings:
        if session.get(ConceptRow, spelling) is not None:
            return spelling
    return session.scalar(
        select(ConceptIdRow.concept_id)
        .where(ConceptIdRow.id.in_(spellings))
        .order_by(ConceptIdRow.concept_id)
    )


def _concept_row(concept: Concept) -> dict:
    return {
        "id": concept.concept_id,
        "vocabulary": concept.vocabulary,
        "preferred_name": concept.preferred_name,
        "semantic_types": _MULTI.join(concept.semantic_types),
        "definition": concept.definition,
        "tree_numbers": _MULTI.join(concept.tree_numbers),
        "parents": _MULTI.join(concept.parents),
        "alt_ids": _MULTI.join(concept.alt_ids),
    }


def _split(value: str) -> tuple[str, ...]:
    return tuple(v for v in value.split(_MULTI) if v) if value else ()


_CONCEPT_COLUMNS = (
    "id",
    "vocabulary",
    "preferred_name",
    "alt_ids",
    "semantic_types",
    "definition",
    "tree_numbers",
    "parents",
)
"""What `_row_concept` reads of a concept row (selected as plain columns where many are read)."""


def _row_concept(row, names: list[str]) -> Concept:
    """A ConceptRow, or a plain row of `_CONCEPT_COLUMNS`, as a Concept."""
    return Concept(
        concept_id=row.id,
        vocabulary=row.vocabulary,
        preferred_name=row.preferred_name,
        synonyms=tuple(n for n in names if n != row.preferred_name),
        alt_ids=_split(row.alt_ids),
        semantic_types=_split(row.semantic_types),
        definition=row.definition,
        tree_numbers=_split(row.tree_numbers),
        parents=_split(row.parents),
    )
