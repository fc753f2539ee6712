"""The project's annotated mentions as plain rows: what the dictionary's type choice learns from
(core.detect.mention_type and core.detect.typed_names take these rows; core.project_detector reads them
here), so the detection stage never reads the store itself.

Plain functions over `Project.session()`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, NamedTuple

from sqlalchemy import case, or_, select

from core.store.curation import LINKING_ACTIONS
from core.store.schema import DocumentRow, MentionRow, MentionStateRow

if TYPE_CHECKING:
    from core.store.project import Project


class AnnotatedMention(NamedTuple):
    doc_id: str
    split: str
    text: str
    type: str
    concept_id: str


def annotated_mentions(project: Project) -> list[AnnotatedMention]:
    """Every live, typed mention a person vouched for, with its document's id and split: imported gold,
    curator-drawn, and detected ones a curator accepted or corrected (their type as the curator left it,
    their concept the decision's), so the dictionary learns its types from curation too. A detected span
    nobody linked, or one rejected, is left out."""
    linked = MentionStateRow.action.in_(LINKING_ACTIONS)
    query = (
        select(
            DocumentRow.external_id,
            DocumentRow.split,
            MentionRow.text,
            MentionRow.type,
            case((linked, MentionStateRow.concept_id), else_=MentionRow.concept_id),
        )
        .join(DocumentRow, DocumentRow.id == MentionRow.document_id)
        .outerjoin(MentionStateRow, MentionStateRow.mention_id == MentionRow.id)
        .where(
            or_(MentionRow.origin != "detected", linked),
            MentionRow.removed.is_(False),
            MentionRow.type != "",
        )
    )
    with project.session() as session:
        return [
            AnnotatedMention(doc_id, split or "", text, mention_type, concept_id or "")
            for doc_id, split, text, mention_type, concept_id in session.execute(query)
        ]


def annotated_semantic_types(project: Project, splits: Collection[str] = ("train", "dev")) -> dict[str, str]:
    """Concept id -> the semantic type its annotated mentions of `splits` give it (mesh-tsv import of
    records without tree numbers: core.kb.mesh_typing); an evaluated split's gold must not be among them."""
    from core.kb.mesh_typing import annotation_semantic_types
    from core.kb.routing import SETTING_KEY

    rows = [(m.type, m.concept_id) for m in annotated_mentions(project) if m.split in splits and m.concept_id]
    return annotation_semantic_types(rows, project.settings.setting(SETTING_KEY))
