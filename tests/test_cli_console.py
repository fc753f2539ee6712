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
