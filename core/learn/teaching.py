"""What the curators let the linker learn: the project's switch for live learning, the decisions taken
without teaching, and the learnt synonyms a curator removed (vetoed).

Kept as project settings (core.store.settings_store), so every curator of the project works under the same
rules and a removed synonym stays removed after a reload or a retrain: `curated_synonyms`
(core.learn.synonyms) skips a decision whose detail says `{"teach": false}` and a (concept, string) pair
that is vetoed, and yields nothing while learning is off. What it no longer yields is withdrawn from the
store, the KB and the name index by the usual withdrawal (live, at load and before a retrain).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from core.errors import CuralinkError
from core.store.settings_store import write_setting
from core.text.normalize import normalize_name

if TYPE_CHECKING:
    from core.store.project import Project

LEARNING_KEY = "learn.from_decisions"  # bool, default True
VETOED_KEY = "learn.vetoed"  # [[concept id, normalised string], ...]
VETO_CHANGES_KEY = "learn.veto_changes"  # how many times a veto was set or lifted (core.project_models)
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
    value = project.settings.setting(VETOED_KEY, [])
    if not isinstance(value, list) or not all(
        isinstance(v, list) and len(v) == 2 and all(isinstance(s, str) for s in v) for v in value
    ):
        raise CuralinkError(
            f"project setting {VETOED_KEY!r} is not a list of [concept id, string]: {value!r}"
        )
    return {(c, s) for c, s in value}


def set_veto(project: Project, concept_id: str, string: str, on: bool) -> None:
    """Veto (or allow again) one learnt synonym, inside the caller's `Project.transaction()` (an undoable
    step writes it with its step). `string` is normalised here."""
    pairs = vetoed(project)
    key = veto_key(concept_id, string)
    pairs = pairs | {key} if on else pairs - {key}
    changes = project.settings.setting(VETO_CHANGES_KEY, 0)
    with project.transaction() as session:
        write_setting(session, VETOED_KEY, sorted([c, s] for c, s in pairs))
        # a veto set and lifted leaves the list as it was, but not the names it removed meanwhile
        write_setting(session, VETO_CHANGES_KEY, (changes if isinstance(changes, int) else 0) + 1)


def teaches(detail_json: str | None) -> bool:
    """False for a decision taken without teaching (its detail says `"teach": false`)."""
    if not detail_json or TEACH not in detail_json:
        return True
    return json.loads(detail_json).get(TEACH, True) is not False


def veto_key(concept_id: str, string: str) -> tuple[str, str]:
    return concept_id, normalize_name(string)
