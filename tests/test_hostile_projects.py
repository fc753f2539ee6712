"""A project from someone else runs no code, touches nothing outside its folder, and each planted fault
is a one-line error naming the file (or, for an index, a logged rebuild).

Every variant of bench.faults.hostile_projects is planted in a copy of the demo project (a retriever
really trained on its KB) and run through the CLI with "y" lines on stdin, so a trust prompt, if one
appeared, would be answered yes; the planted code would write a marker file beside the project.
"""

from __future__ import annotations

import io
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from bench.faults.hostile_projects import STDIN, VARIANTS, judge, reranker_auto_map, snapshot

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(demo_template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(demo_template, tmp_path / "p"))


def _run_cli(project: Path, commands, monkeypatch, capsys) -> tuple[list[int], str]:
    root = logging.getLogger()
    handlers = list(root.handlers)
    codes = []
    try:
        for command in commands:
            monkeypatch.setattr(sys, "stdin", io.StringIO(STDIN))
            codes.append(main(["-p", str(project), *command]))
    finally:
        for handler in root.handlers[len(handlers) :]:  # the project's log file handler
            root.removeHandler(handler)
            handler.close()
    captured = capsys.readouterr()
    return codes, captured.out + captured.err


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_hostile_project_variant(name: str, project: Path, monkeypatch, capsys, caplog) -> None:
    caplog.set_level(logging.INFO)  # as the CLI logs: a forged line must not appear at INFO either
    variant = VARIANTS[name](project)
    before = snapshot(variant.outside)
    codes, output = _run_cli(project, variant.commands, monkeypatch, capsys)
    verdict = judge(variant, project, codes, output, before)
    assert not verdict.code_executed, f"{name}: the project's code ran"
    assert not verdict.outside_touched, f"{name}: a file outside the project changed"
    assert verdict.usable, f"{name}: {verdict.detail}\n{output[-3000:]}"


def test_the_issue_project_with_y_piped_to_a_real_process(project: Path) -> None:
    """The exact reproduction of issue 11: `echo y | curalink -p P link` on a reranker whose config has
    auto_map and a model_type of its own. Before, transformers asked and then imported evil.py."""
    variant = reranker_auto_map(project)
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "-p", str(project), "link"],
        input=STDIN,
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=300,
    )
    assert not variant.marker.exists(), "the project's evil.py ran"
    assert done.returncode == 2, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "models/reranker/v1/config.json" in last, last
    assert "auto_map" in last and "Traceback" not in done.stderr


def test_the_desk_preload_runs_no_project_code(project: Path) -> None:
    """The desk imports the reranker's architecture before its event loop (preload_architecture) and
    loads it in a worker (CrossEncoder.load): neither may import the folder's code."""
    from core.errors import ModelError
    from core.rerank.cross_encoder import CrossEncoder, preload_architecture

    variant = reranker_auto_map(project)
    folder = project / "models" / "reranker" / "v1"
    sys.stdin, saved = io.StringIO(STDIN), sys.stdin
    try:
        with pytest.raises(ModelError, match="config.json: asks to run code"):
            preload_architecture(folder)
        with pytest.raises(ModelError, match="config.json: asks to run code"):
            CrossEncoder.load(folder)
    finally:
        sys.stdin = saved
    assert not variant.marker.exists()
