"""Ctrl+Shift+A: annotate every occurrence of the selected text (or of the selected mention's text) in this
document or the whole project, word-bounded, after a dialog that counts them ("N occurrences in M
documents"); started from a decided mention, the new mentions get its decision. One write, one Ctrl+Z
(core.jobs.curation.occurrences). Ctrl+D reaches only mentions that exist; this draws the missing ones.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QLineEdit,
)

from app.gui.abstract_view import AbstractView
from app.gui.desk_host import DeskHost
from app.gui.desk_model import DeskModel
from app.gui.desk_saving import DeskSaving
from app.gui.dialogs import ScopedCountDialog
from app.gui.workers import LinkService
from core.errors import CuralinkError
from core.jobs.curation.occurrences import Occurrences, mention_text, preview_occurrences
from core.text.normalize import normalize_name
from core.text.words import snap_to_words

RECOUNT_DELAY_MS = 150  # the count follows typing; a project-wide count per keystroke would stall the window


class OccurrencesDialog(ScopedCountDialog):
    """The string, scope, type and decision, with the count of occurrences it would annotate. The count
    and the decision follow the Text field as it is typed: the source mention's decision is offered only
    while the text is still that mention's (issue 31: an edited "tumors" was created as the source's
    accepted Retinoblastoma), and OK counts once more, so what is written is what the field says."""

    def __init__(self, window, text: str, kind: str, source: int | None, summary: str):
        super().__init__(window, "Annotate every occurrence", "the whole project", "occurrenceCount")
        self.project, self.document, self.source = window.project, window.model.doc.doc_id, source
        self.source_key = normalize_name(text) if source is not None else ""
        self.summary = summary
        self.text = QLineEdit(text)
        self.type = QLineEdit(kind)
        self.link = QCheckBox(f"with the decision {summary}") if summary else None
        self.wanted_link = True  # the curator's choice while the decision applies
        form = QFormLayout()
        form.addRow("Text", self.text)
        form.addRow("In", self.scope)
        form.addRow("Type", self.type)
        if self.link is not None:
            self.link.setChecked(True)
            form.addRow("", self.link)
        self.lay_out(
            form,
            "Whole words, any case; occurrences already inside a mention are left as they are. "
            "One Ctrl+Z undoes the lot.",
        )
        self.setMinimumWidth(480)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(RECOUNT_DELAY_MS)
        self.timer.timeout.connect(self.recount)
        self.text.textChanged.connect(self._text_changed)
        if self.link is not None:
            self.link.toggled.connect(self._link_toggled)
        self.found: Occurrences | None = None
        self.recount()

    @property
    def decision_applies(self) -> bool:
        """The source mention's decision is offered for its own text only."""
        return self.link is not None and normalize_name(self.text.text()) == self.source_key

    @property
    def linked_source(self) -> int | None:
        """The mention whose decision the new mentions get, or None."""
        return self.source if self.decision_applies and self.link.isChecked() else None

    def _link_toggled(self, on: bool) -> None:
        if self.decision_applies:
            self.wanted_link = on

    def _text_changed(self) -> None:
        """The count is stale at once (OK waits for it) and the decision is offered or withdrawn."""
        self.found = None
        self.show_count("counting…", found=False)
        if self.link is not None:
            applies = self.decision_applies
            self.link.blockSignals(True)
            self.link.setChecked(applies and self.wanted_link)
            self.link.blockSignals(False)
            self.link.setEnabled(applies)
            self.link.setText(
                f"with the decision {self.summary}"
                if applies
                else f"no decision: {self.summary} was taken for another text"
            )
        self.timer.start()

    def accept(self) -> None:
        """OK (or Enter in a field): counted again for the text as it is now, then closed."""
        self.timer.stop()
        self.recount()
        if self.found and self.found.spans:
            super().accept()

    @property
    def whole_project(self) -> bool:
        return self.wide

    def recount(self) -> None:
        self.timer.stop()
        try:
            self.found = preview_occurrences(
                self.project, self.text.text(), document=None if self.whole_project else self.document
            )
            said = f"<b>{self.found.describe()}</b> will become mentions"
        except CuralinkError as exc:
            self.found, said = None, str(exc)
        self.show_count(said, found=bool(self.found and self.found.spans))


class AnnotateOccurrences:
    """Ctrl+Shift+A for the window (`host`, which runs the write): the selection in `abstract` or the
    selected mention of `model`; the new mentions elsewhere are suggested for through `service`."""

    def __init__(
        self,
        host: DeskHost,
        model: DeskModel,
        saving: DeskSaving,
        service: LinkService,
        abstract: AbstractView,
    ):
        self.host, self.model, self.project, self.saving = host, model, model.project, saving
        self.service, self.abstract = service, abstract

    def annotate_occurrences_dialog(self) -> OccurrencesDialog | None:
        if self.model.doc is None:
            self.host.statusBar().showMessage("open a document first", 3000)
            return None
        span = self.abstract.selection_span()
        span = snap_to_words(self.model.doc.text, *span) if span is not None else None
        source, summary, kind = None, "", ""
        if span is not None:
            text = self.model.doc.text[span[0] : span[1]]
            types = [m.type for m in self.model.doc.mentions if m.type]
            kind = max(set(types), key=types.count) if types else ""
        else:
            source = self.model.current_mention_id()
            if source is None:
                self.host.statusBar().showMessage("select some text or a mention first", 3000)
                return None
            text, kind = mention_text(self.project, source)
            decision = self.model.decisions.get(source)
            if decision is not None and decision.action != "reject":
                summary = decision.action + (
                    f" → {self.model.link_text(decision.concept_id)}" if decision.concept_id else ""
                )
        dialog = OccurrencesDialog(self.host, " ".join(text.split()), kind, source, summary)
        dialog.accepted.connect(lambda: self.annotate_occurrences(dialog))
        dialog.finished.connect(lambda _result: self.host.activateWindow())
        self.host.menu_dialog = dialog
        dialog.open()
        return dialog

    def annotate_occurrences(self, dialog: OccurrencesDialog) -> str:
        found = dialog.found
        if not found or not found.spans or self.saving.waiting_for_writes("annotating every occurrence"):
            return "refused"
        text, kind = dialog.text.text(), dialog.type.text().strip()
        document = None if dialog.whole_project else dialog.document
        source = dialog.linked_source
        op = self.model.annotate_occurrences(
            text, document=document, kind=kind, source=source, label=f"annotate “{text}”: {found.describe()}"
        )
        outcome = self.saving.perform(op.label, op.run)
        if outcome == "saved":
            added = sorted(self.saving.last_changes.edited)
            undecided = [  # this document's are suggested for as edited mentions (learn_decided)
                m
                for m in added
                if self.saving.last_changes.decisions.get(m) is None and m not in self.model.mention_ids
            ]
            if undecided:  # suggestions for the new mentions, wherever they are
                self.service.resuggest(undecided)
            self.host.statusBar().showMessage(f"saved: {self.saving.last_changes.label}", 6000)
        return outcome
