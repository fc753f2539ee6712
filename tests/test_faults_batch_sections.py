"""The issue-24 sections of the fault harness (`curalink bench faults --section batch-... / bombs /
hostile-db`), one trial each: the figures the product promises, as the harness observed them (victim
files outside the folder snapshotted, processes alive after a kill, rows read from the database with
sqlite3, documents compared with a from-scratch run, the child's peak RSS from the kernel)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.faults import BATCH_SECTIONS
from bench.faults.batch_folders import (
    MANIFEST_VARIANTS,
    OPERATIONS,
    TAMPERS,
    manifest_trials,
    tampered_trials,
)
from bench.faults.batch_runs import deletion_trials, kill_trials
from bench.faults.batch_setup import build_setup, snapshot, touched
from bench.faults.bombs_db import PEAK_TARGET_MB, VARIANTS, bomb_trials, hostile_db_trials
from bench.faults.report import render_markdown

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def setup(demo_template: Path, tmp_path_factory):
    return build_setup(tmp_path_factory.mktemp("batch-faults"), template=demo_template)


def test_the_snapshot_sees_a_touched_victim(tmp_path: Path) -> None:
    """The judge of 'outside touched' is not blind: a write, a new file and a removal are each seen."""
    (tmp_path / "a").write_text("x")
    (tmp_path / "b").write_text("y")
    before = snapshot(tmp_path)
    (tmp_path / "a").write_text("z")
    (tmp_path / "b").unlink()
    (tmp_path / "c").symlink_to(tmp_path / "a")
    assert touched(before, snapshot(tmp_path)) == ["a", "b", "c"]


def test_crafted_manifests_touch_nothing_outside_the_folder(setup) -> None:
    figures = manifest_trials(setup, trials=1, seed=11)
    assert figures["runs"] == len(MANIFEST_VARIANTS) * len(OPERATIONS)
    assert figures["outside_touched"] == 0 and figures["tracebacks"] == 0
    refused = {(r["variant"], r["operation"]) for r in figures["rows"] if r["refused"]}
    for variant in ("dot-dot", "absolute", "done-as-text", "symlinked-manifest"):
        assert all((variant, operation) in refused for operation in OPERATIONS), variant
    assert ("symlinked-shard", "import-linked") in refused


def test_tampered_shards_store_nothing(setup) -> None:
    figures = tampered_trials(setup, trials=1, seed=11)
    assert figures["shards"] == len(TAMPERS)
    assert figures["stored_from_bad_shards"] == 0 and figures["good_shards_lost"] == 0
    assert figures["refused"] == len(TAMPERS), [r["message"] for r in figures["rows"]]


def test_deletion_sequences_killed_mid_rewrite_equal_a_run_on_the_survivors(setup) -> None:
    figures = deletion_trials(setup, trials=1, seed=11)
    (row,) = figures["rows"]
    assert row["survivors_stored"] == row["survivors"] > 0
    assert row["emptied_shards"] >= 1, "every sequence empties a shard"
    assert figures["resume_failed"] == figures["import_failed"] == 0
    assert figures["mismatches"] == 0, row


def test_a_killed_driver_leaves_no_orphans_and_no_unlisted_shards(setup) -> None:
    figures = kill_trials(setup, trials=1, seed=11)
    (row,) = figures["rows"]
    assert row["killed_mid_run"] and row["children_at_kill"] >= 2, "the driver was killed with its workers"
    assert figures["orphans"] == 0 and figures["resume_failed"] == 0
    # the driver records a shard before its file takes the shard's name (core/batch/job.py): no kill
    # leaves a file the manifest does not list
    assert row["unlisted_shards"] == [] and figures["unlisted_after_resume"] == 0, row


def test_bombs_are_refused_in_one_line_within_the_memory_target(setup) -> None:
    figures = bomb_trials(setup, trials=1, seed=11)
    assert figures["files"] == 5
    assert figures["refused"] == figures["one_line"] == 5, [r["message"] for r in figures["rows"]]
    assert 0 < figures["peak_mb"] <= PEAK_TARGET_MB


def test_hostile_databases_are_refused_and_rewrite_nothing(setup) -> None:
    figures = hostile_db_trials(setup, trials=1, seed=11)
    assert figures["opens"] == figures["refused"] == len(VARIANTS)
    assert figures["rewritten"] == 0 and figures["decisions_stored"] == 0


def test_every_section_is_registered_and_rendered() -> None:
    assert set(BATCH_SECTIONS) == {
        "batch-manifests",
        "batch-tampered",
        "batch-deletions",
        "batch-kills",
        "bombs",
        "hostile-db",
        "bounds",
    }
    rows = {"rows": [], "seconds": 0.0, "trials": 0}
    result = {
        "seconds": 1.0,
        "machine": "test",
        "batch_manifests": {**rows, "runs": 0, "outside_touched": 0, "refused": 0, "tracebacks": 0},
        "hostile_db": {**rows, "opens": 0, "refused": 0, "rewritten": 0, "decisions_stored": 0},
        "bounds": {**rows, "probes": 0, "as_expected": 0, "tracebacks": 0, "peak_mb": 0.0, "over_target": 0},
    }
    text = render_markdown(result)
    assert "### Crafted link-batch folders" in text and "### Hostile project databases" in text
    assert "### Issue 33 probes" in text
