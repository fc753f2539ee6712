"""The model kinds a project trains, and the one rule that decides whether a new version goes in force.

Each kind declares how it is trained, evaluated and loaded (as "module:function" names, resolved only
when called, so reading the registry loads no model code), what training needs, and which held-out
metric the promotion rule compares. Every trainer publishes its version through
`core.jobs.versions.publish_version`, and every retrain step decides with `promotion_decision`: the
rule is written once, here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from core.errors import CuralinkError

PROMOTION_RULES = ("if-not-worse", "always", "never")


@dataclass(frozen=True)
class ModelKind:
    name: str
    score: str
    """The held-out metric `promotion_decision` compares (higher is better)."""
    score_name: str
    """How a promotion reason names that metric."""
    held_out: str
    """What the held-out slice must hold for a comparison (named when it holds none)."""
    needs: str
    """What training needs, for the message when the project lacks it."""
    train: str
    evaluate: str
    load: str
    retrained_by_default: bool = True
    """Whether `retrain` without named kinds trains it (the detector: only when one is in force)."""

    def job(self, which: str) -> Callable:
        """The function behind `train`, `evaluate` or `load`, imported now."""
        module, name = getattr(self, which).split(":")
        target = importlib.import_module(module)
        for part in name.split("."):
            target = getattr(target, part)
        return target


KINDS: dict[str, ModelKind] = {
    kind.name: kind
    for kind in (
        ModelKind(
            "retriever",
            score="acc@1",
            score_name="held-out acc@1",
            held_out="mentions",
            needs="a knowledge base (its synonyms are the training pairs), plus gold or curated links",
            train="core.jobs.retriever:train_retriever",
            evaluate="core.evaluate.retrieval:evaluate_project_retriever",
            load="core.retrieve.rescnn_retriever:RescnnRetriever.load",
        ),
        ModelKind(
            "reranker",
            score="acc@1",
            score_name="held-out acc@1",
            held_out="mentions",
            needs="a retriever in force and gold or curated links in train documents",
            train="core.jobs.reranker:train_reranker_for_project",
            evaluate="core.jobs.reranker:evaluate_reranker_for_project",
            load="core.rerank.cross_encoder:CrossEncoder.load",
        ),
        ModelKind(
            "ranker",
            score="acc@1",
            score_name="held-out acc@1",
            held_out="mentions",
            needs="a retriever in force and imported gold or accepted / corrected decisions",
            train="core.jobs.ranker:train_ranker_for_project",
            evaluate="core.jobs.evaluate_ranker:evaluate_ranker_for_project",
            load="core.project_models:load_ranking_stage",
        ),
        ModelKind(
            "detector",
            score="score",
            score_name="held-out span/end-to-end F1",
            held_out="documents with spans",
            needs="gold or curator-checked mention spans",
            train="core.jobs.detector:train_detector_for_project",
            evaluate="core.evaluate.detection:evaluate_detectors",
            load="core.detect.in_force:load_span_detector",
            retrained_by_default=False,
        ),
    )
}

LINKING_KINDS = tuple(name for name, kind in KINDS.items() if kind.retrained_by_default)
"""Retrained in this order: the retriever first (the reranker trains on its candidates), the ranker
last (on the candidates of the models then in force)."""


def model_kind(name: str) -> ModelKind:
    try:
        return KINDS[name]
    except KeyError:
        raise CuralinkError(f"unknown model kind {name!r}; kinds are {', '.join(KINDS)}") from None


def promotion_decision(kind: str, new: dict, old: dict, rule: str = "if-not-worse") -> tuple[bool, str]:
    """Whether a new version of `kind` goes in force, and why. "if-not-worse": its held-out score
    (`new`) at least that of the version in force (`old`; empty when none is); "always"; "never"."""
    if rule not in PROMOTION_RULES:
        raise CuralinkError(f"unknown promotion rule {rule!r}; use one of {', '.join(PROMOTION_RULES)}")
    if rule == "always":
        return True, "promoted by explicit choice"
    if rule == "never":
        return False, "kept as a candidate by explicit choice"
    spec = model_kind(kind)
    if not new or spec.score not in new:
        return False, f"no held-out {spec.held_out} to compare on (decide some mentions in more documents)"
    if not old or spec.score not in old:
        return True, f"no {kind} in force to compare with"
    if new[spec.score] >= old[spec.score]:
        return True, f"{spec.score_name} {new[spec.score]:.2f} >= {old[spec.score]:.2f}"
    return False, f"{spec.score_name} {new[spec.score]:.2f} < {old[spec.score]:.2f} of the version in force"
