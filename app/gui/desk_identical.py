"""Ctrl+D: the selected mention's decision applied to every identical unreviewed mention, in this document
or the whole queue, after a confirm dialog that counts them ("N mentions in M documents"). One write, one
Ctrl+Z (core.jobs.curation.operations.apply_to_identical)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QCheckBox, QFormLayout, QLabel

from app.gui.desk_host import DeskHost
from app.gui.desk_model import DeskModel
from app.gui.desk_saving import DeskSaving
from app.gui.dialogs import ScopedCountDialog
from core.store.curation import action_words, shown_link
from core.store.identical_mentions import IdenticalMentions

if TYPE_CHECKING:
    from core.store.project import Project


class IdenticalDialog(ScopedCountDialog):
    """Scope and type choice, with the count of mentions the decision would reach, kept up to date."""

    def __init__(self, parent, project: Project, mention_id: int, document: str, summary: str, kind: str):
        super().__init__(parent, "Apply to identical mentions", "the whole queue", "identicalCount")
        self.project, self.mention_id, self.document = project, mention_id, document
        self.same_type = QCheckBox(f"only mentions typed {kind}" if kind else "only untyped mentions")
        form = QFormLayout()
        form.addRow("Decision", QLabel(summary))
        form.addRow("In", self.scope)
        form.addRow("", self.same_type)
        self.lay_out(form, "Only mentions without a decision are touched. One Ctrl+Z undoes the lot.", wrap=False)
        self.same_type.toggled.connect(self.recount)
        self.found: IdenticalMentions | None = None
        self.recount()

    @property
    def whole_queue(self) -> bool:
        return self.wide

    def recount(self) -> None:
        self.found = self.project.identical.find(
            self.mention_id,
            document=None if self.whole_queue else self.document,
            same_type=self.same_type.isChecked(),
        )
        self.show_count(f"<b>{self.found.describe()}</b> will get this decision", found=bool(self.found.mention_ids))


class ApplyToIdentical:
    """Ctrl+D for the window (`host`, which runs the write): the selected mention of `model`."""

    def __init__(self, host: DeskHost, model: DeskModel, saving: DeskSaving):
        self.host, self.model, self.project, self.saving = host, model, model.project, saving

    def apply_identical_dialog(self) -> IdenticalDialog | None:
        mention_id = self.model.current_mention_id()
        if mention_id is None or self.model.doc is None or self.model.current is None:
            self.host.statusBar().showMessage("select a mention first", 3000)
            return None
        decision = self.model.decisions.get(mention_id)
        if decision is None:
            self.host.statusBar().showMessage(
                "decide this mention first, then apply it to identical ones", 4000
            )
            return None
        mention = self.model.doc.mentions[self.model.current]
        summary = f"{action_words(decision.action)} “{mention.text}”" + (
            f" → {self.model.link_text(decision.concept_id)}"
            if shown_link(decision.action, decision.concept_id)
            else ""
        )
        dialog = IdenticalDialog(
            self.host, self.project, mention_id, self.model.doc.doc_id, summary, mention.type
        )
        dialog.accepted.connect(lambda: self.apply_identical(mention_id, dialog.found, summary))
        dialog.finished.connect(lambda _result: self.host.activateWindow())
        self.host.menu_dialog = dialog
        dialog.open()
        return dialog

    def apply_identical(self, mention_id: int, found: IdenticalMentions | None, summary: str) -> bool:
        if (
            not found
            or not found.mention_ids
            or self.saving.waiting_for_writes("applying to identical mentions")
        ):
            return False
        label = f"{summary} for {found.describe()}"
        targets = list(found.mention_ids)
        op = self.model.apply_to_identical(mention_id, targets, label)
        outcome = self.saving.perform(op.label, op.run)
        if outcome == "saved":
            written = len(self.saving.last_changes.decision_ids)
            self.host.statusBar().showMessage(f"saved: {label} ({written} written)", 6000)
        if outcome != "refused":  # off the source mention: Enter there would not re-decide it, but on
            following = self.model.next_undecided(mention_id)  # to what is left to do
            if following is not None:
                self.host.document.select_mention(following)
        return outcome != "refused"
