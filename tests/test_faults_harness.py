"""Smoke test of the fault harness (`curalink bench faults`, issue 11): every section runs end to end on a
small budget and the figures that must be zero are zero. About 7 minutes on 2 cores, so it is not in the
default suite: `CURALINK_FAULTS=1 pytest -m slow tests/test_faults_harness.py`.

The figures that depend on fixes in other work of issue 11 (hostile-project code, projects left
unusable by a damaged index) are checked in tests marked xfail until that work is merged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("CURALINK_FAULTS") != "1",
        reason="the fault harness smoke test takes about 7 minutes; CURALINK_FAULTS=1 runs it",
    ),
]


@pytest.fixture(scope="module")
def figures(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("faults")
    out = work / "figures.json"
    command = [sys.executable, "-m", "app.cli", "bench", "faults", "--trials", "1", "--limit", "2"]
    command += ["--contention-seconds", "8", "--work", str(work / "work"), "--out", str(out)]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "### kill -9 during work" in done.stdout  # the Markdown tables were printed
    return json.loads(out.read_text(encoding="utf-8"))


def test_no_committed_decision_is_lost_and_imports_are_all_or_nothing(figures):
    crash = figures["crash"]
    assert set(crash) == {"corpus-import", "kb-import", "decisions", "link", "train", "retrain"}
    assert all(entry["trials"] == 1 for entry in crash.values())
    assert crash["decisions"]["committed_decisions"] > 0
    assert sum(entry["decisions_lost"] for entry in crash.values()) == 0
    assert sum(entry["partial_imports"] for entry in crash.values()) == 0


def test_two_writers_and_a_desk_during_a_long_import(figures):
    contention = figures["contention"]
    assert contention["import"]["complete"] and contention["crashes"] == 0
    assert contention["decisions_lost"] == 0 and contention["usable"]
    desk = contention["desk"]
    assert desk["pending_left"] == 0 and desk["undo_matches_store"] and desk["rows_in_store"] > 0
    assert all(w["lock_messages"] == w["clear_lock_messages"] for w in contention["writers"])


def test_a_full_disk_loses_nothing_and_the_desk_says_so(figures):
    disk = figures["disk_full"]
    if disk.get("skipped"):
        pytest.skip(disk["skipped"])
    assert disk["decisions_lost"] == 0 and disk["partial_imports"] == 0 and disk["unusable"] == 0
    desk = next(row for row in disk["rows"] if row["operation"] == "desk-decision")
    assert desk["clear_error"], desk


def test_bad_inputs_and_hostile_projects_were_tried(figures):
    assert figures["bad_inputs"]["files"] == 2 and figures["bad_inputs"]["hung"] == 0
    assert figures["hostile"]["variants"] == 2 and figures["hostile"]["probes"] == 4


@pytest.mark.xfail(reason="issue 11 item 3 (index sidecar written atomically): the safety work", strict=False)
def test_no_project_is_left_unusable(figures):
    assert sum(entry["unusable"] for entry in figures["crash"].values()) == 0


@pytest.mark.xfail(reason="issue 11 item 1 (trust_remote_code=False): the safety work", strict=False)
def test_no_hostile_project_runs_code(figures):
    assert figures["hostile"]["code_executed"] == 0
