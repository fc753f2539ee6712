"""Issue 23 item 10: what the command line shows. faiss's instruction-set lines are not printed on every
command; a training's progress bar has its total (and a time estimate) from its first moments, says what it
waits for before the first step, and the dev accuracy of each epoch is a sentence, not a dictionary."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

REPO = Path(__file__).resolve().parents[1]


def test_importing_faiss_after_the_cli_set_up_logging_prints_no_loader_lines() -> None:
    script = (
        "import logging\n"
        "from app.console import configure_logging\n"
        "configure_logging('info')\n"
        "import faiss\n"
        "logging.getLogger('curalink.check').info('still shown')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "still shown" in done.stderr  # INFO lines of our own still reach the terminal
    assert "faiss" not in done.stderr.lower() and "AVX" not in done.stderr


def test_the_progress_bar_shows_a_time_estimate(monkeypatch) -> None:
    from rich.console import Console

    import app.console as console

    out = io.StringIO()
    monkeypatch.setattr(console, "stderr", Console(file=out, force_terminal=True, width=160))
    with console.progress_bar("training") as update:
        update(0, None, "preparing")
        update(3, 10, "epoch 1/2")
    shown = out.getvalue()
    assert "3/10" in shown and "left" in shown and "-:--:--" in shown  # no speed yet: the estimate's place


def _tiny_kb():
    from core.kb.concept import Concept
    from core.kb.knowledge_base import KnowledgeBase

    words = ["heart", "lung", "liver", "kidney", "brain", "skin", "bone", "blood"]
    return KnowledgeBase(
        Concept(f"C{i}", "TEST", f"{w} disease", (f"{w} disorder", f"disease of the {w}", f"{w} illness"))
        for i, w in enumerate(words)
    )


def test_training_reports_its_total_before_the_first_step_and_dev_accuracy_as_text(tmp_path, caplog) -> None:
    from core.retrieve.rescnn import RescnnConfig
    from core.retrieve.train import TrainOptions, train_rescnn

    kb = _tiny_kb()
    calls: list[tuple[int, int | None, str]] = []
    script = iter([(40.0, 70.0), (55.0, 80.0), (50.0, 85.0)])

    def dev(_model) -> dict:
        acc1, acc5 = next(script)
        return {"acc@1": acc1, "acc@5": acc5}

    caplog.set_level(logging.INFO, logger="core")
    train_rescnn(
        kb,
        [("cardiac disease", "C0")],
        RescnnConfig(hidden=32, filters=16, depth=1),
        tmp_path / "v1",
        epochs=2,
        options=TrainOptions(batch_size=16, device="cpu"),
        epoch_eval=dev,
        progress=lambda done, total, message="": calls.append((done, total, message)),
    )
    # independent of the code: 1 pair + 32 KB names per epoch, in batches of 16, for 2 epochs
    total = 2 * -(-(1 + 32) // 16)
    first_step = next(i for i, (done, _, _) in enumerate(calls) if done >= 1)
    assert first_step > 0 and all(t == total for _, t, _ in calls[: first_step + 1])  # never "0/?"
    before = [message for _, _, message in calls[:first_step]]
    assert "dev check before training" in before
    said = [r.getMessage() for r in caplog.records]
    assert "retriever before training: dev acc@1 40.00, acc@5 70.00" in said
    assert any(
        m.startswith("retriever epoch 1: dev acc@1 55.00 (best 55.00 at epoch 1), acc@5 80.00") for m in said
    )
    assert any(
        m.startswith("retriever epoch 2: dev acc@1 50.00 (best 55.00 at epoch 1), acc@5 85.00") for m in said
    )
    assert not [m for m in said if "{'acc@1'" in m or "'acc@5':" in m], "dev accuracy printed as a dictionary"


def _last_frame(shown: str, needle: str) -> str:
    """The last drawn line of a live bar that contains `needle`, without terminal control sequences."""
    import re

    lines = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line) for line in re.split(r"[\r\n]", shown)]
    return [line for line in lines if needle in line][-1]


def test_the_training_bar_is_readable_at_80_columns(monkeypatch) -> None:
    """Issue 31 item 8: at 80 columns every column was cut ("╸━━ 7… 0… left 0:0…")."""
    from rich.console import Console

    import app.console as console

    out = io.StringIO()
    monkeypatch.setattr(
        console, "stderr", Console(file=out, force_terminal=True, width=80, color_system=None)
    )
    with console.progress_bar("training the retriever") as update:
        update(0, 350, "preparing")
        update(105, 350, "epoch 3/10, loss 0.412")
    line = _last_frame(out.getvalue(), "epoch 3/10")
    assert "training the retriever epoch 3/10, loss 0.412" in line  # the whole message
    assert " 30% " in line and "left " in line  # 105 of 350 steps, and the estimate's place
    assert "…" not in line and len(line.rstrip()) <= 80


def test_the_dev_check_on_the_bar_names_the_epoch_the_log_names(tmp_path, caplog) -> None:
    """Issue 31 item 8: with a time cap the bar said "epoch 1/2: dev accuracy" while the log's line for the
    same check said "epoch 0.6". Both now name the epoch as a fraction of the steps of one epoch."""
    import re
    import time

    from core.retrieve.rescnn import RescnnConfig
    from core.retrieve.train import TrainOptions, train_rescnn

    said: list[str] = []

    class Said(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage())

    def progress(done: int, total: int | None, message: str = "") -> None:
        said.append(message)
        if done == 3 and "loss" in message:
            time.sleep(1.2)  # past the 1 s cap: the next step is not taken

    handler = Said()
    logging.getLogger("core.retrieve.train").addHandler(handler)
    caplog.set_level(logging.INFO, logger="core")
    try:
        result = train_rescnn(
            _tiny_kb(),
            [("cardiac disease", "C0")],
            RescnnConfig(hidden=32, filters=16, depth=1),
            tmp_path / "v1",
            epochs=2,
            options=TrainOptions(batch_size=8, device="cpu"),
            epoch_eval=lambda _model: {"acc@1": 50.0, "acc@5": 75.0},
            progress=progress,
            max_seconds=1.0,
        )
    finally:
        logging.getLogger("core.retrieve.train").removeHandler(handler)
    # independent of the code: 1 pair + 32 KB names in batches of 8 is 5 steps an epoch; 3 were taken
    assert result.steps == 3 and result.stopped_by == "max_seconds"
    checks = [i for i, m in enumerate(said) if m.startswith("dev check after epoch")]
    assert len(checks) == 1
    shown = re.match(r"dev check after epoch ([\d.]+)/2$", said[checks[0]])
    logged = next(
        re.match(r"retriever epoch ([\d.]+):", m)
        for m in said[checks[0] :]
        if m.startswith("retriever epoch")
    )
    assert shown and logged and shown.group(1) == logged.group(1) == "0.6"
