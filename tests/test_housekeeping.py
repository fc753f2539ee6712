"""What killed runs leave behind is cleaned up, and nothing a live run uses is (issue 11, item 3)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.store import Project

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "HF_HUB_OFFLINE": "1"}
CLAIM = "import sys, time; from pathlib import Path; from core.housekeeping import claim_scratch; "


@pytest.fixture
def project(demo_template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(demo_template, tmp_path / "p"))


def _scratch(project: Path, name: str) -> Path:
    folder = project / "models" / "retriever" / f".training-{name}"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"half-trained")
    return folder


def _claimed_by_a_child(folder: Path, then: str) -> subprocess.Popen:
    """A real process claims `folder` as its scratch folder, then exits or keeps running."""
    code = CLAIM + f"claim_scratch(Path(sys.argv[1])); print('claimed', flush=True); {then}"
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(folder)], cwd=REPO, env=ENV, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "claimed"
    return child


def test_opening_a_project_removes_dead_runs_scratch_folders_only(project: Path) -> None:
    dead = _scratch(project, "dead")
    _claimed_by_a_child(dead, "").wait()
    live = _scratch(project, "live")
    runner = _claimed_by_a_child(live, "time.sleep(120)")
    old_unowned = _scratch(project, "older-curalink")  # left by a version without owner files
    an_hour_ago = time.time() - 3600
    os.utime(old_unowned, (an_hour_ago, an_hour_ago))
    fresh_unowned = _scratch(project, "just-made")  # between mkdtemp and its claim: keep
    try:
        Project.open(project).close()
        assert not dead.exists() and not old_unowned.exists()
        assert live.is_dir() and fresh_unowned.is_dir()
        assert (live / "model.safetensors").read_bytes() == b"half-trained"
    finally:
        runner.kill()
        runner.wait()
    Project.open(project).close()
    assert not live.exists()
    leftovers = sorted(p.name for p in (project / "models" / "retriever").iterdir())
    assert leftovers == [".training-just-made", "v1"]


def test_a_training_run_killed_with_sigkill_leaves_nothing_after_the_next_open(project: Path) -> None:
    """kill -9 during `curalink train retriever`: the scratch folder stays while the process could
    still be writing, and is gone at the next open; the model in force is untouched."""
    models = project / "models" / "retriever"
    before = sorted(p.name for p in models.iterdir())
    command = [sys.executable, "-m", "app.cli", "-p", str(project), "train", "retriever"]
    run = subprocess.Popen(
        [*command, "--epochs", "50", "--max-seconds", "120"],
        cwd=REPO,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 240
        while not list(models.glob(".training-*")) and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.2)
        scratch = [p for p in models.glob(".training-*") if p.is_dir()]
        assert scratch, "the training run never made its scratch folder"
        Project.open(project).close()  # the run is alive: its folder is kept
        assert all(p.is_dir() for p in scratch)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    assert all(p.is_dir() for p in scratch), "kill -9 runs no cleanup: the folder is still there"
    Project.open(project).close()
    assert sorted(p.name for p in models.iterdir()) == before


def test_training_prunes_indexes_no_model_in_use_needs(project: Path) -> None:
    """An index per retrain stayed for good: a killed retrain's scratch version, a retired version, an
    older knowledge base. After training only indexes of versions in use (and other files) remain."""
    from core.jobs.models.retriever import train_retriever

    index = project / "index"
    (current,) = sorted(p.stem for p in index.glob("*.faiss"))
    kb_part, model_part = current.split("-")
    planted = {
        "orphan": f"{kb_part}-0123456789ab",  # a scratch version killed after its evaluation
        "old-kb": f"{'f' * 16}-{model_part}",  # the same model over a knowledge base since changed
    }
    for stem in planted.values():
        for suffix in (".faiss", ".json"):
            shutil.copy(index / f"{current}{suffix}", index / f"{stem}{suffix}")
    (index / "notes.txt").write_text("not an index", encoding="utf-8")
    with Project.open(project) as opened:
        trained = train_retriever(opened, epochs=1, max_seconds=2, include_gold=False)
        assert opened.models.active_model("retriever").version == trained.version == "v2"
    left = sorted(p.name for p in index.iterdir())
    assert left == ["notes.txt"], left  # v1 is retired; v2 builds its index when it first links


def test_a_candidate_version_keeps_its_index(project: Path) -> None:
    from core.jobs.models.versions import prune_project_indexes

    index = project / "index"
    names = sorted(p.name for p in index.iterdir())
    with Project.open(project) as opened:
        kb = opened.kb.knowledge_base()
        for row in opened.models.model_versions("retriever"):
            assert row.status == "active"
        assert prune_project_indexes(opened, kb.fingerprint()) == 0
    assert sorted(p.name for p in index.iterdir()) == names
