"""An in-memory knowledge base: concepts by id and the flat (name, concept) list retrievers index."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from core.kb.concept import Concept
from core.kb.identifiers import canonical_id
from core.text.normalize import normalize_name


@dataclass(frozen=True, slots=True)
class NameEntry:
    """One indexed name: retrievers score names, then keep each concept's best name."""

    name: str
    concept_id: str
    preferred: bool


class KnowledgeBase:
    def __init__(self, concepts: Iterable[Concept]):
        self.concepts: dict[str, Concept] = {}
        for concept in concepts:
            previous = self.concepts.get(concept.concept_id)
            if previous is not None:
                merged = tuple(dict.fromkeys(previous.synonyms + concept.names))
                concept = Concept(**{**previous.__dict__, "synonyms": merged})
            self.concepts[concept.concept_id] = concept
        self._alt_to_primary: dict[str, str] = {}
        for concept in self.concepts.values():
            for alt in concept.alt_ids:
                self._alt_to_primary.setdefault(canonical_id(alt, concept.vocabulary), concept.concept_id)
        self.names: list[NameEntry] = []
        seen: set[tuple[str, str]] = set()
        for concept in self.concepts.values():
            for name in concept.names:
                key = (normalize_name(name), concept.concept_id)
                if key in seen or not key[0]:
                    continue
                seen.add(key)
                self.names.append(NameEntry(name, concept.concept_id, name == concept.preferred_name))

    def __len__(self) -> int:
        return len(self.concepts)

    def __iter__(self) -> Iterator[Concept]:
        return iter(self.concepts.values())

    def __contains__(self, concept_id: str) -> bool:
        return self.resolve(concept_id) is not None

    def get(self, concept_id: str) -> Concept | None:
        resolved = self.resolve(concept_id)
        return self.concepts[resolved] if resolved else None

    def resolve(self, concept_id: str) -> str | None:
        """The primary id for an id or one of its alternative ids (MEDIC lists OMIM ids as alternatives)."""
        if concept_id in self.concepts:
            return concept_id
        canonical = canonical_id(concept_id)
        if canonical in self.concepts:
            return canonical
        return self._alt_to_primary.get(canonical)

    def ids_of(self, concept_id: str) -> set[str]:
        """Every id a concept answers to: its own and its alternative ids, canonical."""
        concept = self.get(concept_id)
        if concept is None:
            return {canonical_id(concept_id)}
        return {concept.concept_id} | {canonical_id(alt, concept.vocabulary) for alt in concept.alt_ids}

    def add_names(self, concept_id: str, names: Iterable[str]) -> list[NameEntry]:
        """Add synonyms (curator-sourced, training mentions) and return the entries actually new."""
        concept = self.concepts[concept_id]
        # the concept's own names (kept in step with `names`), not a pass over every name of the KB: a
        # desk loading on MEDIC re-checked 500 curated concepts against 73,000 names each (6.6 s)
        existing = {normalize_name(n) for n in concept.names}
        added: list[NameEntry] = []
        for name in names:
            key = normalize_name(name)
            if key and key not in existing:
                existing.add(key)
                entry = NameEntry(name, concept_id, False)
                self.names.append(entry)
                added.append(entry)
        if added:
            merged = tuple(dict.fromkeys(concept.synonyms + tuple(e.name for e in added)))
            self.concepts[concept_id] = Concept(**{**concept.__dict__, "synonyms": merged})
        return added

    def remove_names(self, concept_id: str, names: Iterable[str]) -> list[NameEntry]:
        """Take synonyms out again (a curator's link was undone) and return the entries removed. The
        preferred name is never removed: a concept always keeps the name it is shown by."""
        concept = self.concepts.get(concept_id)
        wanted = {normalize_name(n) for n in names}
        if concept is None or not wanted:
            return []
        removed = [
            e
            for e in self.names
            if e.concept_id == concept_id and not e.preferred and normalize_name(e.name) in wanted
        ]
        if removed:
            gone = {id(e) for e in removed}
            self.names = [e for e in self.names if id(e) not in gone]
            keys = {normalize_name(e.name) for e in removed}  # every spelling of them: `add_names` reads
            kept = tuple(n for n in concept.synonyms if normalize_name(n) not in keys)  # the concept's names
            self.concepts[concept_id] = Concept(**{**concept.__dict__, "synonyms": kept})
        return removed

    def fingerprint(self) -> str:
        """Changes whenever an id or a name changes: indexes and models record it."""
        digest = hashlib.sha256()
        for entry in sorted((e.concept_id, e.name) for e in self.names):
            digest.update(entry[0].encode())
            digest.update(b"\x00")
            digest.update(entry[1].encode())
            digest.update(b"\x01")
        return digest.hexdigest()[:16]
