"""Open a project in the real window, grab it from the screen and save a PNG (for the README and the
Xvfb test): `python -m bench.gui.screenshot PROJECT OUT.png`. With `--retrain`, a retrain runs in the
background (status-bar progress) when the window is grabbed; it is cancelled before the window closes.
With `--find-mentions DOC`, that raw abstract is opened, its mentions found (Ctrl+Shift+M) and linked,
and the window grabbed with the detected spans and the first uncertain one selected. With `--bulk-accept`,
the bulk-accept dialog (Ctrl+B) is grabbed instead of the window."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PySide6.QtCore import QTimer

from app.gui.launch import application, open_project_window
from app.gui.states import uncertain_span


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("project", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--delay-ms", type=int, default=1500)
    parser.add_argument("--models-timeout-ms", type=int, default=30000, help="wait this long for the models")
    parser.add_argument(
        "--retrain", action="store_true", help="grab while a retrain runs (once its bar is past 15 %%)"
    )
    parser.add_argument("--find-mentions", metavar="DOC", help="find mentions in this raw abstract first")
    parser.add_argument(
        "--bulk-accept",
        nargs="?",
        const="",
        metavar="DOC",
        help="grab the bulk-accept dialog (Ctrl+B), on this document (default: the one the desk opens)",
    )
    parser.add_argument("--width", type=int, help="resize the window to this many pixels wide first")
    parser.add_argument("--by-type", action="store_true", help="colour the mentions by type (Alt+5)")
    parser.add_argument("--help-overlay", action="store_true", help="grab with the key help (F1) shown")
    args = parser.parse_args(argv)
    app = application()
    window = open_project_window(args.project)
    window.background = False
    if args.width:
        window.resize(args.width, window.height())
    if args.by_type and not window.view.by_type:
        window.view.colour_by_type(True)
    status = {"code": 1}
    if args.find_mentions:
        window.document.open_document(args.find_mentions)
        job = window.detect.find_mentions_here()
        if job is None:
            return 1
        job.signals.returned.connect(
            lambda _found: QTimer.singleShot(args.delay_ms, _select_uncertain(window))
        )
        job.signals.returned.connect(lambda _found: QTimer.singleShot(2 * args.delay_ms, lambda: grab()))
        job.signals.errored.connect(lambda exc: (sys.stderr.write(f"{exc}\n"), app.quit()))
    elif args.bulk_accept is not None:  # the dialog counts the undecided mentions: none decided for it
        if args.bulk_accept:
            window.document.open_document(args.bulk_accept)
    else:
        # Show a little curation so every state colour is on screen: accept, correct, reject, not in KB.
        window.curation.accept_rank(1)
        window.curation.accept_rank(1)
        window.curation.decide("reject")
        window.curation.decide("nil")
        window.document.select_mention(0)

    def grab() -> None:
        if (
            args.retrain
            and window.retrain.retrain_job is not None
            and window.retrain.retrain_status.fraction < 0.15
        ):
            QTimer.singleShot(500, grab)  # until the bar shows the retrain well under way
            return
        target = window
        if args.help_overlay and not window.help_overlay.isVisible():
            window.help_overlay.toggle()
            QTimer.singleShot(300, grab)
            return
        if args.bulk_accept is not None:
            if window.menu_dialog is None or not window.menu_dialog.isVisible():
                window.curation.bulk_accept_dialog()
                QTimer.singleShot(args.delay_ms, grab)  # once it is shown and laid out
                return
            target = window.menu_dialog
        screen = target.screen()
        pixmap = screen.grabWindow(target.winId()) if screen is not None else target.grab()
        if pixmap.isNull() or pixmap.width() < 100:
            pixmap = target.grab()
        args.out.parent.mkdir(parents=True, exist_ok=True)
        status["code"] = 0 if pixmap.save(str(args.out)) else 1
        window.retrain.cancel_retrain()
        window.close()
        app.quit()

    # Grab once the models are loaded (the status bar names the device), or after the timeout.
    waited = {"done": False}

    def grab_later() -> None:
        if not waited["done"]:
            waited["done"] = True
            QTimer.singleShot(args.delay_ms, grab)

    if args.retrain and not args.find_mentions:
        window.retrain.start_retrain(
            {"kinds": ("retriever", "ranker"), "max_seconds": 120.0, "epochs": 50, "promote": "never"}
        )
    if args.find_mentions:
        pass  # the find-mentions job grabs once its mentions are linked
    elif window.service.busy():
        window.service.linkerReady.connect(lambda _description: grab_later())
        QTimer.singleShot(args.models_timeout_ms, grab_later)
    else:
        grab_later()
    app.exec()
    return status["code"]


def _select_uncertain(window):
    """Select the first detected span drawn as uncertain (else the first mention), for the picture."""

    def select() -> None:
        marks = window.abstract.marks
        chosen = next((i for i, m in enumerate(marks) if uncertain_span(m.probability)), 0)
        window.document.select_mention(chosen)

    return select


if __name__ == "__main__":
    sys.exit(main())
