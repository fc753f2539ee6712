"""Which detector tags raw text in a project: the span model in force, else the dictionary tagger.

The dictionary stays the fast fallback for projects without training data; with a trained detector,
detected mentions carry the type the span model predicts (unless the user names one) and their span
probability (infons "probability"), which the store keeps with the mention.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.detect.mention_type import choose_mention_type


@dataclass
class ChosenDetector:
    detector: object
    description: str


def detector_for_project(
    project, kb, *, requested_type: str | None = None, device: str = "auto"
) -> ChosenDetector:
    """The detector `link --detect` uses; refuses (CuralinkError) before anything is stored."""
    from core.detect.dictionary import DictionaryDetector
    from core.detect.project_jobs import load_span_detector
    from core.kb.routing import TypeRouter

    span = load_span_detector(project, kb=kb, device=device)
    if span is not None:
        if requested_type is not None:
            span.mention_type = choose_mention_type(project, kb, requested_type).name
            types = f"type {span.mention_type!r} as asked"
        else:
            types = "types predicted: " + ", ".join(span.config.types)
        return ChosenDetector(span, f"span model {span.version} ({types})")
    mention_type = choose_mention_type(project, kb, requested_type)
    # tag only names of concepts the type may link to: all of MeSH as "Disease" would tag chemicals
    typed_kb = TypeRouter.for_project(project, kb).restricted_kb(mention_type.name)
    return ChosenDetector(
        DictionaryDetector.from_kb(typed_kb, mention_type=mention_type.name),
        f"dictionary (type {mention_type.name!r}: {mention_type.reason}; --type to choose; "
        "`train detector` for the span model)",
    )
