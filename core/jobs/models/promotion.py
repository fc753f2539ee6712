"""The one promotion rule: whether a new version of a kind goes in force, and putting chosen versions in force.

Every promotion goes through `promotion_decision`: a retrain's step (core.jobs.models.retrain_report), `train`
(core.jobs.models.kinds, with "always" or "never"), `train retriever` against the version in force, `train
detector` against the dictionary, and the tagger per mention type (core.jobs.models.tagger). Relinking
the stored suggestions after a promotion is core.jobs.models.relinking.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from core.errors import CuralinkError

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

PROMOTION_RULES = ("if-not-worse", "always", "never")


def promotion_decision(kind: str, new: dict, old: dict, rule: str = "if-not-worse") -> tuple[bool, str]:
    """Whether a new version of `kind` goes in force, and why. "if-not-worse": its held-out score
    (`new`) at least that of the version in force (`old`; empty when none is); "always"; "never"."""
    if rule not in PROMOTION_RULES:
        raise CuralinkError(f"unknown promotion rule {rule!r}; use one of {', '.join(PROMOTION_RULES)}")
    if rule == "always":
        return True, "promoted by explicit choice"
    if rule == "never":
        return False, "kept as a candidate by explicit choice"
    from core.model_kinds import model_kind

    spec = model_kind(kind)
    if not new or spec.score not in new:
        return False, f"no held-out {spec.held_out} to compare on (decide some mentions in more documents)"
    if not old or spec.score not in old:
        return True, f"no {kind} in force to compare with"
    if new[spec.score] >= old[spec.score]:
        return True, f"{spec.score_name} {new[spec.score]:.2f} >= {old[spec.score]:.2f}"
    return False, f"{spec.score_name} {new[spec.score]:.2f} < {old[spec.score]:.2f} of the version in force"


def promote_versions(project: Project, versions: Mapping[str, str]) -> dict[str, str]:
    """Put each kind's chosen version in force; returns those that changed (kind -> version)."""
    changed = {}
    for kind, version in versions.items():
        known = {row.version for row in project.models.model_versions(kind)}
        if version not in known:
            raise CuralinkError(
                f"{project.path}: no {kind} version {version!r} (known: {', '.join(sorted(known))})"
            )
        active = project.models.active_model(kind)
        if active is None or active.version != version:
            project.models.promote_model(kind, version)
            changed[kind] = version
            log.info("%s %s put in force", kind, version)
    return changed
