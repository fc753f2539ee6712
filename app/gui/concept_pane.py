"""What a concept is: preferred name, synonyms, definition and tree numbers, to judge a candidate."""

from __future__ import annotations

import html

from PySide6.QtWidgets import QTextBrowser

from app.gui.states import muted
from core.kb.concept import Concept

MAX_SYNONYMS = 40


class ConceptPane(QTextBrowser):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setOpenLinks(False)
        self.concept: Concept | None = None
        self.show_concept(None)

    def show_concept(self, concept: Concept | None) -> None:
        self.concept = concept
        if concept is None:
            self.setHtml(
                f"<p style='color:{muted()}'>Select a candidate to see its synonyms, definition and tree.</p>"
            )
            return
        esc = html.escape
        parts = [
            f"<h3 style='margin:0'>{esc(concept.preferred_name)}</h3>",
            f"<p style='color:{muted()};margin-top:2px'>{esc(concept.concept_id)}"
            + (f" &middot; {esc(concept.vocabulary)}" if concept.vocabulary else "")
            + "</p>",
        ]
        if concept.definition:
            parts.append(f"<p>{esc(concept.definition)}</p>")
        if concept.tree_numbers:
            parts.append("<p><b>Tree numbers</b><br>" + ", ".join(map(esc, concept.tree_numbers)) + "</p>")
        if concept.semantic_types:
            parts.append(
                "<p><b>Semantic types</b><br>" + ", ".join(map(esc, concept.semantic_types)) + "</p>"
            )
        synonyms = list(concept.synonyms)
        if synonyms:
            shown = synonyms[:MAX_SYNONYMS]
            more = f" &hellip; and {len(synonyms) - len(shown)} more" if len(synonyms) > len(shown) else ""
            parts.append(
                f"<p><b>Synonyms ({len(synonyms)})</b><br>" + "<br>".join(map(esc, shown)) + more + "</p>"
            )
        if concept.alt_ids:
            parts.append("<p><b>Also known as</b> " + ", ".join(map(esc, concept.alt_ids)) + "</p>")
        self.setHtml("".join(parts))
