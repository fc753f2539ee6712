"""The curator features of issue 12 item 4 wired into the desk: their keys (also in the F1 help and the
Curate menu), word-wise span edges, today's statistics, and the undo history shown as the project keeps it
(core.jobs.curation.undo: Ctrl+Z after a restart undoes the last step made before closing, a note or mark too).

Keys: Ctrl+D identical mentions; Ctrl+Shift+A every occurrence of a string (app/gui/desk_occurrences.py); E / Shift+E note; F / Shift+F flag; D document done; Alt+Shift+← / →
the end by a word, Ctrl+Alt+← / → the start by a word (Shift+← / → and Ctrl+Shift+← / → keep moving by
a character); Ctrl+Shift+T today's statistics.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout

from app.gui.desk_history import DeskHistory
from app.gui.desk_host import DeskHost
from app.gui.desk_identical import ApplyToIdentical
from app.gui.desk_marks import CurationMarks
from app.gui.desk_model import DeskModel
from app.gui.desk_occurrences import AnnotateOccurrences
from app.gui.desk_saving import DeskSaving
from app.gui.settings import AppSettings
from core.jobs.curation import operations as curation
from core.store.day_stats import day_stats
from core.text import words

WORD_MOVES = {  # (edge, direction) -> the function giving the new offset
    ("end", -1): words.end_word_left,
    ("end", 1): words.end_word_right,
    ("start", -1): words.start_word_left,
    ("start", 1): words.start_word_right,
}


class CuratorExtras:
    """The curator features' keys and menu entries for the window (`host`, which runs the writes): word
    moves of the selected mention of `model`, notes and flags (`marks`), Ctrl+D (`identical`), Ctrl+Shift+A
    (`occurrences`), today's statistics, and the undo history the `undo_stack` shows after a restart."""

    def __init__(
        self,
        host: DeskHost,
        model: DeskModel,
        settings: AppSettings,
        undo_stack: DeskHistory,
        saving: DeskSaving,
        *,
        legend: QLabel,
        marks: CurationMarks,
        identical: ApplyToIdentical,
        occurrences: AnnotateOccurrences,
    ):
        self.host, self.model, self.settings, self.undo_stack = host, model, settings, undo_stack
        self.project, self.legend, self.saving = model.project, legend, saving
        self.marks, self.identical, self.occurrences = marks, identical, occurrences

    def _build_extra_actions(self) -> list:
        K, M = Qt.Key, Qt.KeyboardModifier
        alt_shift, ctrl_alt = M.AltModifier | M.ShiftModifier, M.ControlModifier | M.AltModifier
        self.act_word_end_left = self.host.key_action(
            "Shrink end by a word", [alt_shift | K.Key_Left], lambda: self.move_word("end", -1)
        )
        self.act_word_end_right = self.host.key_action(
            "Extend end by a word", [alt_shift | K.Key_Right], lambda: self.move_word("end", 1)
        )
        self.act_word_start_left = self.host.key_action(
            "Extend start by a word", [ctrl_alt | K.Key_Left], lambda: self.move_word("start", -1)
        )
        self.act_word_start_right = self.host.key_action(
            "Shrink start by a word", [ctrl_alt | K.Key_Right], lambda: self.move_word("start", 1)
        )
        self.act_identical = self.host.key_action(
            "Apply to identical mentions…", ["Ctrl+D"], self.identical.apply_identical_dialog
        )
        self.act_occurrences = self.host.key_action(
            "Annotate every occurrence…", ["Ctrl+Shift+A"], self.occurrences.annotate_occurrences_dialog
        )
        self.act_note = self.host.key_action("Note on the mention…", [K.Key_E], self.marks.edit_note)
        self.act_doc_note = self.host.key_action(
            "Note on the document…", [M.ShiftModifier | K.Key_E], lambda: self.marks.edit_note(True)
        )
        self.act_flag = self.host.key_action("Flag the mention for later", [K.Key_F], self.marks.toggle_flag)
        self.act_doc_flag = self.host.key_action(
            "Flag the document for later", [M.ShiftModifier | K.Key_F], lambda: self.marks.toggle_flag(True)
        )
        self.act_done = self.host.key_action("Mark the document done", [K.Key_D], self.marks.toggle_done)
        self.act_today = self.host.key_action("Today's statistics…", ["Ctrl+Shift+T"], self.show_day_stats)
        return [
            self.act_word_end_left,
            self.act_word_end_right,
            self.act_word_start_left,
            self.act_word_start_right,
            None,
            self.act_identical,
            self.act_occurrences,
            self.act_note,
            self.act_doc_note,
            self.act_flag,
            self.act_doc_flag,
            self.act_done,
            self.act_today,
        ]

    def install(self, menu) -> None:
        """Once, while the window builds its menus: the keys (also in `menu`), the marks strip under the
        legend, and the undo stack filled from the log."""
        layout = self.legend.parentWidget().layout()
        layout.insertWidget(layout.indexOf(self.legend) + 1, self.marks.marks_strip)
        menu.addSeparator()
        for action in self._build_extra_actions():
            if action is None:
                menu.addSeparator()
            else:
                menu.addAction(action)
        self.restore_undo_history()

    # --- word-wise span edges ---------------------------------------------------------------------

    def move_word(self, edge: str, direction: int) -> bool:
        """Move the selected mention's start or end by one word; one undo step, suggested again."""
        mention_id = self.model.current_mention_id()
        if mention_id is None or self.model.doc is None or self.model.current is None:
            return False
        mention = self.model.doc.mentions[self.model.current]
        moved = WORD_MOVES[(edge, direction)](self.model.doc.text, mention.start, mention.end)
        if moved is None:
            self.host.statusBar().showMessage(f"no word to move the {edge} to", 3000)
            return False
        new = (moved, mention.end) if edge == "start" else (mention.start, moved)
        if self.saving.waiting_for_writes("a span edit"):
            return False
        label = f"move the {edge} of “{mention.text}” by a word"
        op = self.model.edit_span(mention_id, new, merge=False, label=label)  # one undo step per word move
        return self.saving.perform(op.label, op.run) != "refused"

    # --- statistics ---------------------------------------------------------------------------------

    def show_day_stats(self) -> QDialog:
        """Today's decisions, rate and top-1 share: the curator's own and everyone's."""
        mine = day_stats(self.project, curator=self.settings.curator).as_dict()
        everyone = day_stats(self.project).as_dict()

        def cell(value) -> str:
            return "–" if value is None else html.escape(str(value))

        def rate(shown) -> str:
            if shown["top1_rate"] is None:
                return "–"
            return f"{shown['top1_rate']:.0%} ({shown['top1_accepts']})"

        rows = [
            ("Decisions (not undone)", cell(mine["decisions"]), cell(everyone["decisions"])),
            ("Active minutes", cell(mine["active_minutes"]), cell(everyone["active_minutes"])),
            (
                "Decisions per active hour",
                cell(mine["decisions_per_hour"]),
                cell(everyone["decisions_per_hour"]),
            ),
            ("Top suggestion accepted", rate(mine), rate(everyone)),
        ]
        table = "".join(
            f"<tr><td style='padding:3px 16px 3px 0'>{label}</td><td align='right' style='padding:3px 12px'>"
            f"{a}</td><td align='right' style='padding:3px 0'>{b}</td></tr>"
            for label, a, b in rows
        )
        who = html.escape(self.settings.curator or "(no name)")
        label = QLabel(
            f"<h3>Today, {mine['day']}</h3><table><tr><td></td><td align='right'><b>{who}</b></td>"
            f"<td align='right'><b>everyone</b></td></tr>{table}</table>"
            "<p style='color:#5f6b7a'>Pauses over 5 minutes are not active time. "
            "Also: <code>curalink -p DIR stats --today</code></p>"
        )
        label.setObjectName("dayStats")
        label.setTextFormat(Qt.TextFormat.RichText)
        dialog = QDialog(self.host)
        dialog.setWindowTitle("Today's statistics")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(dialog.reject)
        layout = QVBoxLayout(dialog)
        layout.addWidget(label)
        layout.addWidget(buttons)
        dialog.finished.connect(lambda _result: self.host.activateWindow())
        self.host.menu_dialog = dialog
        dialog.open()
        return dialog

    # --- undo across restarts -----------------------------------------------------------------------

    def restore_undo_history(self) -> int:
        """Show the curator's history as the project holds it (core.jobs.curation.undo): after a restart Ctrl+Z
        undoes the newest step whatever it was (a decision, a bulk accept, a note, a done mark), and the
        Edit menu says which."""
        found = curation.history_of(self.project, self.settings.curator)
        self.undo_stack.set(found)
        if found.done:
            self.host.statusBar().showMessage(f"Ctrl+Z undoes: {found.undo_text}", 5000)
        return found.done
