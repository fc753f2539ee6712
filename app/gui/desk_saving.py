"""How the desk saves: every change is one core curation operation run through one `DeskWriter`; the
window (and the undo history it shows) moves only after the store confirmed, from the OpChanges the
operation returned, and a change the store does not have yet is always on screen.

The save bar above the panes lists the waiting changes: amber while the writer retries (another program
holds the database's lock; the desk stays usable, and new decisions queue behind), red once it stalls
(the retries ran out, the disk is full, or the disk failed), with Retry and Discard. A full or failing disk
also opens a dialog. Undo, redo and mention edits wait until nothing is pending (they build on the state
the store holds); decisions on other mentions may queue. Closing the window with changes waiting asks first.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QMessageBox, QPushButton, QVBoxLayout, QWidget

from app.gui.desk_changes import DeskChanges, Shown
from app.gui.desk_history import DeskHistory
from app.gui.desk_host import DeskHost
from app.gui.desk_linking import BackgroundLinking
from app.gui.desk_model import DeskModel
from app.gui.desk_writer import DeskWriter, Write
from app.gui.dialogs import show_error
from app.gui.settings import AppSettings
from app.gui.workers import LinkService
from core.jobs.curation import operations as curation
from core.store.op_changes import OpChanges
from core.store.write_faults import StoreWriteError, WriteFault

SHOWN_LABELS = 3  # waiting changes named in the bar; the rest are counted (all are in the tooltip)


class SaveBar(QFrame):
    """A strip that shows what the store does not have yet, and offers Retry / Discard when stalled."""

    retryClicked = Signal()
    discardClicked = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("saveBar")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.retry = QPushButton("Retry")
        self.discard = QPushButton("Discard")
        self.retry.clicked.connect(self.retryClicked.emit)
        self.discard.clicked.connect(self.discardClicked.emit)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 10, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.retry)
        layout.addWidget(self.discard)
        self.hide()

    def show_state(self, pending: list[Write], error: StoreWriteError | None) -> None:
        if not pending:
            self.hide()
            return
        names = "; ".join(html.escape(w.label) for w in pending[:SHOWN_LABELS])
        if len(pending) > SHOWN_LABELS:
            names += f"; and {len(pending) - SHOWN_LABELS} more"
        count = f"{len(pending)} change{'s' if len(pending) != 1 else ''}"
        if error is None:
            text = (
                f"<b>Saving {count}…</b> {names}<br>The database is locked by another program; "
                "retrying. Keep working: decisions queue and are saved in order."
            )
            colours = "background:#fff4d6; border:1px solid #d9a400;"
        else:
            text = f"<b>Not saved: {count}.</b> {names}<br>{html.escape(str(error))}"
            colours = "background:#fde2e1; border:1px solid #c62828;"
        self.setStyleSheet(f"#saveBar {{{colours}}}")
        self.label.setText(text)
        self.setToolTip("\n".join(w.label for w in pending))
        self.retry.setVisible(error is not None)
        self.discard.setVisible(error is not None)
        self.show()


class LostProject(Protocol):
    """The project watch (app/gui/desk_watch.py), as far as the writer needs it: a folder gone."""

    lost_dialog: QMessageBox | None

    def project_lost(self) -> QMessageBox: ...


class SavingHost(DeskHost, Protocol):
    """The window as its writer sees it: its project watch (the folder gone), its linking (an edited
    mention suggested again at once), and closing."""

    watch: LostProject
    links: BackgroundLinking

    def close(self) -> bool: ...


class DeskSaving:
    """Saving for the window (`host`): one `DeskWriter` runs the curation operations in the curator's
    name (`settings`); what each changed is emitted once on `changes` (app/gui/desk_changes.py), where
    the window's parts redraw from it, the `undo_stack` follows the store and decisions reach the loaded
    models (`learn`, through `service`); the save bar shows what waits."""

    def __init__(
        self,
        host: SavingHost,
        model: DeskModel,
        settings: AppSettings,
        service: LinkService,
        undo_stack: DeskHistory,
        changes: DeskChanges,
    ):
        self.host, self.model, self.settings, self.service = host, model, settings, service
        self.project, self.undo_stack, self.changes = model.project, undo_stack, changes
        self.save_dialog = self.close_box = None
        self.last_changes: OpChanges | None = None  # what the newest operation the desk saw through changed
        service.learned.connect(self.on_learned)

    def report_refusal(self, exc: Exception) -> None:
        """A write the store refused: say why in the status bar (it is also in the log)."""
        self.host.statusBar().showMessage(f"not saved: {exc}", 10000)

    def with_save_bar(self, panes: QWidget) -> QWidget:
        """The window's central widget: the save bar (hidden while nothing waits) above the panes."""
        self.writer = DeskWriter(self.project, parent=self.host)
        self.save_bar = SaveBar()
        self.writer.changed.connect(self._show_saving)
        self.writer.stalled.connect(self._on_stalled)
        self.save_bar.retryClicked.connect(self.retry_writes)
        self.save_bar.discardClicked.connect(self.discard_writes)
        self._closing = False
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.save_bar)
        layout.addWidget(panes, 1)
        return central

    def perform(self, label: str, operation: Callable[[str], OpChanges], *, advance: bool = False) -> str:
        """Run one curation operation (core.jobs.curation.operations) with the curator's name, through the
        writer; the `OpChanges` it returns is emitted once (`advance`: a decision, the selection moves on to
        the next undecided mention in the same redraw, unless it was saved late). Returns the writer's
        answer: "saved", "pending" (waiting for the lock, or behind a change that is) or "refused"."""
        if self.host.watch.lost_dialog is not None:  # the project folder went away (desk_watch)
            self.host.watch.lost_dialog.open()  # said again, and nothing new is queued for a project that is not there
            return "refused"
        curator = self.settings.curator

        def saved(changes: OpChanges) -> None:
            self.last_changes = changes
            self.changes.emit(Shown(changes, follow=not write.late, advance=advance and not write.late))
            if write.late:
                self.host.statusBar().showMessage(f"saved: {changes.label or label}", 4000)

        write = Write(label, lambda: operation(curator), saved, self.report_refusal)
        return self.writer.submit(write)

    def undo(self) -> str | None:
        """Ctrl+Z: the newest step of the curator's history (core.jobs.curation.undo), whatever it was;
        the desk goes to the document and mention it changed and says what was undone."""
        return self._step("undo")

    def redo(self) -> str | None:
        return self._step("redo")

    def _step(self, verb: str) -> str | None:
        if self.waiting_for_writes(verb) or not getattr(self.undo_stack, f"can{verb.title()}")():
            return None
        curator = self.settings.curator
        text = self.undo_stack.undoText() if verb == "undo" else self.undo_stack.redoText()

        def saved(changes: OpChanges) -> None:
            self.last_changes = changes
            self.changes.emit(Shown(changes, navigate=True))
            self.host.statusBar().showMessage(
                f"{verb}ne: {changes.label[len(verb) + 1 :]}" if changes.label else f"nothing to {verb}",
                6000,
            )

        def refused(exc: Exception) -> None:  # e.g. its mention was deleted since: the step is dropped
            self.report_refusal(exc)
            self.undo_stack.set(curation.history_of(self.project, curator))

        op = getattr(self.model, verb)(text)
        return self.writer.submit(Write(op.label, lambda: op.run(curator), saved, refused))

    def learn(self, shown: Shown) -> None:
        """Subscribed to the desk's change signal after the document view (an edited mention is
        suggested again once the document shows its new span)."""
        self.learn_decided(shown.changes)

    def learn_decided(self, changes: OpChanges) -> None:
        """Decisions stored, undone or redone reach the loaded models at once (LinkService.learn): the
        identical mentions still to review are suggested again with what the curator just taught."""
        taught = set(changes.mentions) if changes.decision_ids else set()
        taught |= changes.relearn  # a learnt synonym removed or restored: learn from its decisions again
        if taught:  # the linker reads the project's switch in the worker (ProjectLinker.learn)
            self.service.learn(sorted(taught))
        for mention_id in sorted(changes.edited):  # a span, type or new mention: new suggestions at once
            if mention_id in self.model.mention_ids and not self.model.suggestions.get(mention_id):
                self.host.links.resuggest(mention_id)

    def on_learned(self, outcome) -> None:
        learned, resuggested = outcome
        said = learned.describe()
        if resuggested:
            said = ", ".join(p for p in (said, f"{resuggested} identical mention(s) suggested again") if p)
        if said:
            self.host.statusBar().showMessage(said, 4000)

    def waiting_for_writes(self, what: str) -> bool:
        """True (and says so) when changes wait to be saved: `what` must build on the stored state."""
        if not self.writer.busy():
            return False
        count = len(self.writer.pending)
        self.host.statusBar().showMessage(
            f"{what} waits: {count} change{'s' if count != 1 else ''} not saved yet (see the bar above)", 5000
        )
        return True

    def retry_writes(self) -> None:
        self.writer.retry()

    def discard_writes(self) -> None:
        dropped = self.writer.discard()
        if dropped:
            self.host.document.refresh(None)
            self.host.statusBar().showMessage(
                f"discarded {len(dropped)} change(s) that were never saved: "
                + "; ".join(w.label for w in dropped),
                10000,
            )

    def _show_saving(self) -> None:
        self.save_bar.show_state(list(self.writer.pending), self.writer.error)

    def _on_stalled(self, error: StoreWriteError) -> None:
        self.host.statusBar().showMessage(f"not saved: {error}", 10000)
        if error.fault is WriteFault.GONE:  # the project folder went away: said once, with a way back
            self.host.watch.project_lost()
        elif error.fault is not WriteFault.BUSY:
            self.save_dialog = show_error(self.host, error, context="saving your change")

    def close_guard(self, event: QCloseEvent) -> bool:
        """Refuse to close while changes wait, unless the curator chose to discard them."""
        if not self.writer.busy() or self._closing:
            self.writer.shutdown()
            return True
        event.ignore()
        count = len(self.writer.pending)
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Changes not saved",
            f"{count} change{'s are' if count != 1 else ' is'} not saved yet:\n"
            + "\n".join(w.label for w in self.writer.pending[:10])
            + (f"\n{self.writer.error}" if self.writer.error else ""),
            QMessageBox.StandardButton.NoButton,
            self.host,
        )
        box.addButton("Keep the desk open", QMessageBox.ButtonRole.RejectRole)
        close = box.addButton("Discard them and close", QMessageBox.ButtonRole.DestructiveRole)
        box.buttonClicked.connect(lambda button: self._close_discarding() if button is close else None)
        self.close_box = box
        box.open()
        return False

    def _close_discarding(self) -> None:
        self._closing = True
        self.writer.shutdown()
        self.writer.pending.clear()
        self.host.close()
