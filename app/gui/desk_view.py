"""The desk's View menu: queue filters and order by key, go to a document, search the text, zoom, the
theme hook; and the queue's filters, order and current document remembered per project.

Where the view state lives: in the user's QSettings (app/gui/settings.py), keyed by a random project
identity stored once in the project's settings table (core.store.desk_queries, `project.desk.project_identity`). The key
moves with the folder (a path would not), and the state stays each curator's own: two curators on one
shared project keep their own place, and moving between documents never writes to the project database
(no contention with decisions for its lock).
"""

from __future__ import annotations

import html
import logging

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from sqlalchemy.exc import SQLAlchemyError

from app.gui.abstract_view import AbstractView
from app.gui.candidate_panel import CandidatePanel
from app.gui.desk_host import DeskHost
from app.gui.desk_model import DeskModel
from app.gui.document_queue import DocumentQueue
from app.gui.navigation_dialogs import GoToDialog, TextSearchDialog
from app.gui.queue_order import SORTS
from app.gui.settings import AppSettings
from app.gui.states import is_dark, legend_html, muted
from app.gui.type_colours import UNTYPED, type_legend_html, type_slots
from core.errors import CuralinkError
from core.store.desk_queries import TextHit

log = logging.getLogger(__name__)


class DeskView:
    """The View menu and the remembered view of the window (`host`): its queue, abstract, legend and
    candidate panes, the open document in `model`."""

    def __init__(
        self,
        host: DeskHost,
        model: DeskModel,
        settings: AppSettings,
        *,
        queue: DocumentQueue,
        abstract: AbstractView,
        legend: QLabel,
        candidates: CandidatePanel,
    ):
        self.host, self.model, self.settings = host, model, settings
        self.project = model.project
        self.queue, self.abstract, self.legend, self.candidates = queue, abstract, legend, candidates
        self.view_key: str | None = None
        self.view_restored = False
        self.by_type = False  # mentions coloured by type (state by weight and lines), else by state
        self.hidden_types: set[str] = set()
        legend.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        legend.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # a click on a type chip leaves the keys to the desk
        legend.linkActivated.connect(self._legend_link)

    def build_menu(self, menu) -> None:
        self.act_goto = self.host.key_action("Go to document…", ["Ctrl+G"], self.open_go_to)
        self.act_find_text = self.host.key_action(
            "Search documents' text…", ["Ctrl+Shift+F"], self.open_text_search
        )
        self.act_cycle = {
            which: self.host.key_action(label, [keys], lambda which=which: self.cycle_queue(which))
            for which, label, keys in (
                ("status", "Next status filter", "Alt+1"),
                ("split", "Next split filter", "Alt+2"),
                ("type", "Next mention-type filter", "Alt+3"),
                ("sort", "Other queue order", "Alt+4"),
            )
        }
        self.act_clear_filters = self.host.key_action(
            "Show every document", ["Alt+0"], self.clear_queue_filters
        )
        self.act_zoom_in = self.host.key_action(
            "Larger text", ["Ctrl+=", "Ctrl++"], lambda: self.zoom_abstract(1)
        )
        self.act_zoom_out = self.host.key_action("Smaller text", ["Ctrl+-"], lambda: self.zoom_abstract(-1))
        self.act_zoom_reset = self.host.key_action(
            "Default text size", ["Ctrl+0"], lambda: self.zoom_abstract(None)
        )
        menu.addActions([self.act_goto, self.act_find_text])
        menu.addSeparator()
        menu.addActions([*self.act_cycle.values(), self.act_clear_filters])
        menu.addSeparator()
        menu.addActions([self.act_zoom_in, self.act_zoom_out, self.act_zoom_reset])
        menu.addSeparator()
        self.act_by_type = self.host.key_action(
            "Colour mentions by type", ["Alt+5"], lambda: self.colour_by_type(not self.by_type)
        )
        self.act_by_type.setCheckable(True)
        menu.addAction(self.act_by_type)
        self.types_menu = menu.addMenu("Show mention types")
        self.types_menu.aboutToShow.connect(self._fill_types_menu)

    # --- type colours, hidden types -----------------------------------------------------------------

    def project_types(self) -> set[str]:
        """The mention types in the project, as the queue's type filter knows them."""
        return {t for facets in self.queue.model.facets.values() for t in facets.types}

    def colour_by_type(self, on: bool) -> None:
        """Colour mentions by type (PubTator's way; the state then shows by weight and lines) or by state."""
        self.by_type = bool(on)
        self.act_by_type.setChecked(self.by_type)
        self.apply_type_view()
        self.remember_view()
        self.host.statusBar().showMessage(
            "mentions coloured by type: click a type in the legend to hide or show it (Alt+5: by state)"
            if self.by_type
            else "mentions coloured by state (Alt+5: by type)",
            5000,
        )

    def toggle_type(self, name: str) -> None:
        """Hide a mention type (drawn plain, still reachable by keys) or show it again."""
        self.hidden_types ^= {name}
        if not self.by_type:
            self.by_type = True  # hiding is a type view's: switch to it
            self.act_by_type.setChecked(True)
        self.apply_type_view()
        self.remember_view()

    def apply_type_view(self) -> None:
        types = self.project_types()
        slots = type_slots(types | self.hidden_types)
        self.abstract.set_type_view(slots if self.by_type else None, self.hidden_types)
        if self.by_type:
            self.legend.setText(type_legend_html(slots, types, self.hidden_types, is_dark()))
        else:
            self.legend.setText(
                legend_html()
                + f" &nbsp; <span style='color:{muted()}'>Alt+5:&nbsp;colour&nbsp;by&nbsp;type</span>"
            )

    def _legend_link(self, link: str) -> None:
        if link.startswith("type:"):
            self.toggle_type(html.unescape(link[len("type:") :]))

    def _fill_types_menu(self) -> None:
        self.types_menu.clear()
        for name in sorted(self.project_types() | self.hidden_types):
            action = self.types_menu.addAction(name or UNTYPED)
            action.setCheckable(True)
            action.setChecked(name not in self.hidden_types)
            action.triggered.connect(lambda _checked=False, name=name: self.toggle_type(name))

    # --- remembered view ---------------------------------------------------------------------------

    def _view_key(self) -> str:
        if self.view_key is None:
            try:
                self.view_key = self.project.desk.project_identity()
            except (CuralinkError, SQLAlchemyError, OSError) as exc:  # locked or read-only: this run only
                log.warning("no project identity for the desk view (%s); using the folder path", exc)
                self.view_key = "path:" + str(self.project.path.resolve())
        return self.view_key

    def restore_view(self) -> None:
        """Filters, order and current document as left in this project (else all, by id, the first);
        the abstract's zoom. Changes are remembered from here on."""
        state = self.settings.view_state(self._view_key())
        if state.get("sort") in SORTS:
            self.queue.set_sort(state["sort"])
        filters = state.get("filters")
        if isinstance(filters, dict):
            self.queue.set_filters(
                **{k: str(v) for k, v in filters.items() if k in ("status", "split", "type")}
            )
        self.abstract.set_zoom(self.settings.abstract_zoom)
        types = state.get("types")
        if isinstance(types, dict):
            self.by_type = types.get("by_type") is True
            hidden = types.get("hidden")
            self.hidden_types = {str(t) for t in hidden} if isinstance(hidden, list) else set()
        self.act_by_type.setChecked(self.by_type)
        self.apply_type_view()
        target = state.get("current")
        # the document left open, even where the filters now hide it: shown while open (QueueModel.hold)
        if not isinstance(target, str) or self.queue.entry(target) is None:
            target = next(iter(self.queue.visible_from(None, 1)), None)
        if target is not None:
            mention = state.get("mention") if state.get("current") == target else None
            self.host.document.open_document(target, mention_id=mention if isinstance(mention, int) else None)
        elif self.queue.model.entries:
            self.host.statusBar().showMessage(
                "No document matches the queue's filters; Alt+0 shows every one."
            )
        self.queue.viewChanged.connect(self.remember_view)
        self.queue.view.selectionModel().currentRowChanged.connect(lambda *_: self.remember_view())
        self.view_restored = True

    def remember_view(self) -> None:
        """Also the mention the curator is on, so a restart goes back to it rather than to mention 1."""
        if not self.view_restored:
            return
        current = self.queue.current_id() or (self.model.doc.doc_id if self.model.doc is not None else None)
        state = {
            "sort": self.queue.sort_key(),
            "filters": self.queue.filters(),
            "current": current,
            "types": {"by_type": self.by_type, "hidden": sorted(self.hidden_types)},
        }
        if self.model.doc is not None and self.model.doc.doc_id == current:
            state["mention"] = self.model.current_mention_id()
        self.settings.set_view_state(self._view_key(), state)

    # --- queue filters by key ---------------------------------------------------------------------

    def cycle_queue(self, which: str) -> None:
        label = self.queue.cycle(which)
        names = {"status": "Show", "split": "Split", "type": "Type", "sort": "Sort"}
        self.host.statusBar().showMessage(
            f"{names[which]}: {label} · {self.queue.shown_count()} documents", 4000
        )

    def clear_queue_filters(self) -> None:
        self.queue.set_filters()
        self.host.statusBar().showMessage(f"All {self.queue.shown_count()} documents shown", 4000)

    # --- go to, search ----------------------------------------------------------------------------

    def go_to_document(self, doc_id: str) -> str | None:
        """Open a document by id; None when done, else why not. A document the filters hide is shown
        while it is open, the filters as they were (said in the status bar): clearing them silently
        left the curator in another view than the one chosen (issue 31)."""
        entry = self.queue.entry(doc_id)
        if entry is None:
            return f"No document with id “{doc_id}” in this project."
        self.host.document.open_document(doc_id)
        if not self.queue.model.passes(entry):
            chosen = ", ".join(f"{k} {v}" for k, v in self.queue.filters().items() if v != "all")
            self.host.statusBar().showMessage(
                f"{doc_id} is shown while it is open; the queue's filters ({chosen}) hide it", 8000
            )
        return None

    def open_go_to(self) -> GoToDialog:
        dialog = GoToDialog(self.go_to_document, self.host)
        self.host.menu_dialog = dialog
        dialog.open()
        return dialog

    def open_text_search(self) -> TextSearchDialog:
        dialog = TextSearchDialog(
            lambda query: self.project.desk.search_text(query), self.open_at_match, self.host
        )
        self.host.menu_dialog = dialog
        dialog.open()
        return dialog

    def open_at_match(self, hit: TextHit) -> None:
        """Open the hit's document and select (and scroll to) the first match in the abstract."""
        if self.go_to_document(hit.doc_id) is None:
            self.abstract.select_text(hit.offset, hit.offset + hit.length)
            self.abstract.ensureCursorVisible()

    # --- zoom, theme ------------------------------------------------------------------------------

    def zoom_abstract(self, step: int | None) -> None:
        """One point larger or smaller (None: back to the default); remembered for every project."""
        zoom = self.abstract.set_zoom(0 if step is None else self.abstract.zoom + step)
        self.settings.abstract_zoom = zoom
        self.host.statusBar().showMessage(f"Abstract text {self.abstract.text_size():.0f} pt", 3000)

    def theme_changed(self) -> None:
        """Redraw what was painted with the previous theme's colours."""
        self.apply_type_view()  # the legend and the abstract's colours, in the new theme's
        self.abstract.repaint_marks()
        if self.model.doc is not None:
            self.host.document.select_mention(self.model.current)
        self.candidates.update()
