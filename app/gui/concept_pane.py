"""What a concept is: preferred name, synonyms, definition, semantic types, tree numbers, parents (by
name) and its pages on MeSH / OMIM / UMLS, to judge a candidate.

Links open in the system browser. Where there is none (no `xdg-open` on Linux, or opening failed) the
addresses are shown as plain text, so they can still be copied.
"""

from __future__ import annotations

import html
import shutil
import sys
from collections.abc import Callable

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QTextBrowser

from app.gui.states import muted
from core.kb.concept import Concept
from core.kb.links import link_outs

MAX_SYNONYMS = 40
MAX_PARENTS = 12


def browser_available() -> bool:
    """Whether QDesktopServices has something to open a web page with."""
    return sys.platform in ("win32", "darwin") or shutil.which("xdg-open") is not None


class ConceptPane(QTextBrowser):
    def __init__(self, parent=None, *, names: Callable[[str], str] | None = None):
        """`names` gives a concept id's preferred name ("" when unknown), to show parents by name."""
        super().__init__(parent)
        self.setOpenLinks(False)
        self.names = names or (lambda _concept_id: "")
        self.links_open = browser_available()
        self.anchorClicked.connect(self.open_link)
        self.concept: Concept | None = None
        self.show_concept(None)

    def open_link(self, url: QUrl) -> None:
        """Open in the system browser; if that fails, show the addresses as text from now on."""
        if not QDesktopServices.openUrl(url):
            self.links_open = False
            self.show_concept(self.concept)

    def show_concept(self, concept: Concept | None) -> None:
        self.concept = concept
        if concept is None:
            self.setHtml(
                f"<p style='color:{muted()}'>Select a candidate to see its synonyms, definition and tree.</p>"
            )
            self.verticalScrollBar().setValue(0)
            return
        esc = html.escape
        parts = [
            f"<h3 style='margin:0'>{esc(concept.preferred_name)}</h3>",
            f"<p style='color:{muted()};margin-top:2px'>{esc(concept.concept_id)}"
            + (f" &middot; {esc(concept.vocabulary)}" if concept.vocabulary else "")
            + "</p>",
        ]
        links = link_outs(concept)
        if links:
            joiner = " &middot; " if self.links_open else "<br>"  # plain addresses: one a line
            parts.append("<p>" + joiner.join(self._link_html(*link) for link in links) + "</p>")
        if concept.alt_ids:
            parts.append("<p><b>Also known as</b> " + ", ".join(map(esc, concept.alt_ids)) + "</p>")
        if concept.definition:
            parts.append(f"<p>{esc(concept.definition)}</p>")
        if concept.semantic_types:
            parts.append(
                "<p><b>Semantic types</b><br>" + ", ".join(map(esc, concept.semantic_types)) + "</p>"
            )
        if concept.tree_numbers:
            parts.append("<p><b>Tree numbers</b><br>" + ", ".join(map(esc, concept.tree_numbers)) + "</p>")
        if concept.parents:
            parts.append(self._parents_html(concept.parents))
        synonyms = list(concept.synonyms)
        if synonyms:
            shown = synonyms[:MAX_SYNONYMS]
            more = f" &hellip; and {len(synonyms) - len(shown)} more" if len(synonyms) > len(shown) else ""
            parts.append(
                f"<p><b>Synonyms ({len(synonyms)})</b><br>" + "<br>".join(map(esc, shown)) + more + "</p>"
            )
        self.setHtml("".join(parts))
        self.verticalScrollBar().setValue(0)  # a new concept is read from its name down

    def _parents_html(self, parents: tuple[str, ...]) -> str:
        shown = [
            f"{html.escape(name)} <span style='color:#777'>({html.escape(parent)})</span>"
            if (name := self.names(parent))
            else html.escape(parent)
            for parent in parents[:MAX_PARENTS]
        ]
        more = f"<br>&hellip; and {len(parents) - MAX_PARENTS} more" if len(parents) > MAX_PARENTS else ""
        return "<p><b>Parents</b><br>" + "<br>".join(shown) + more + "</p>"

    def _link_html(self, label: str, url: str) -> str:
        if self.links_open:
            return f"<a href='{html.escape(url)}'>{html.escape(label)}</a>"
        return f"{html.escape(label)}: {html.escape(url)}"
