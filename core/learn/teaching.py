"""What the curators let the linker learn: the project's switch for live learning, the decisions taken
without teaching, and the learnt synonyms a curator removed (vetoed).

Kept in the project (the switch as a setting, core.store.settings_store; the vetoes in their own table,
core.store.synonym_vetoes), so every curator of the project works under the same rules and a removed
synonym stays removed after a reload or a retrain: `curated_synonyms`
(core.learn.synonyms) skips a decision whose detail says `{"teach": false}` and a (concept, string) pair
that is vetoed, and yields nothing while learning is off. What it no longer yields is withdrawn from the
store, the KB and the name index by the usual withdrawal (live, at load and before a retrain).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from core.errors import CuralinkError
from core.text.normalize import normalize_name

if TYPE_CHECKING:
    from core.store.project import Project

LEARNING_KEY = "learn.from_decisions"  # bool, default True
TEACH = "teach"  # decision detail: False = decide without teaching


def learning_on(project: Project) -> bool:
    """Whether decisions teach the KB curator synonyms (the project's setting, default on)."""
    value = project.settings.setting(LEARNING_KEY, True)
    if not isinstance(value, bool):
        raise CuralinkError(f"project setting {LEARNING_KEY!r} is not true or false: {value!r}")
    return value


def set_learning(project: Project, on: bool) -> None:
    project.settings.set_setting(LEARNING_KEY, bool(on))


def vetoed(project: Project) -> set[tuple[str, str]]:
    """(concept id, normalised string) pairs a curator removed from the learnt synonyms."""
    return project.vetoes.vetoed()


def set_veto(project: Project, concept_id: str, string: str, on: bool) -> None:
    """Veto (or allow again) one learnt synonym, inside the caller's `Project.transaction()` (an undoable
    step writes it with its step). `string` is normalised here."""
    project.vetoes.set_veto(*veto_key(concept_id, string), on)


def veto_changes(project: Project) -> int:
    """How many times a veto was set or lifted: a veto set and lifted leaves the vetoes as they were, but
    not the names it withdrew meanwhile (core.project_models reads everything again when it changed)."""
    return project.vetoes.changes()


def teaches(detail_json: str | None) -> bool:
    """False for a decision taken without teaching (its detail says `"teach": false`)."""
    if not detail_json or TEACH not in detail_json:
        return True
    return json.loads(detail_json).get(TEACH, True) is not False


def veto_key(concept_id: str, string: str) -> tuple[str, str]:
    return concept_id, normalize_name(string)
