"""Issue 11: the `curalink` command on a full disk (a real tmpfs; root only, skipped elsewhere) says so in
an `error:` line, with no traceback, no SQL and no logging noise, and stores nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.store import Project

REPO_ROOT = Path(__file__).resolve().parents[1]
ABSTRACT = (
    "{pmid}|t|Huntington disease in a cohort\n"
    "{pmid}|a|Patients with Huntington disease showed chorea early.\n"
    "{pmid}\t0\t18\tHuntington disease\tDisease\tD006816\n\n"
)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a full disk needs a tmpfs mount (root)")
    mount = tmp_path / "disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], check=False).returncode:
        pytest.skip("mounting a tmpfs failed")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(filler: Path, leave_kb: int) -> None:
    with filler.open("wb", buffering=0) as out:
        for block in (1 << 16, 512, 1):
            try:
                while True:
                    out.write(b"\0" * block)
            except OSError:
                pass
    os.truncate(filler, max(0, filler.stat().st_size - leave_kb * 1024))


def curalink(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, cwd=REPO_ROOT, timeout=300
    )


def test_an_import_that_fills_the_disk_is_one_clear_error_and_stores_nothing(small_disk, tmp_path):
    project = small_disk / "p"
    Project.create(project).close()
    corpus = tmp_path / "many.pubtator"  # outside the small disk: only the project fills it
    corpus.write_text("".join(ABSTRACT.format(pmid=10_000 + n) for n in range(3000)), encoding="utf-8")
    fill(small_disk / "filler", leave_kb=96)

    done = curalink("-p", str(project), "corpus", "import", str(corpus), "--format", "pubtator")

    assert done.returncode == 2, done.stderr
    assert (
        "Traceback" not in done.stderr and "[SQL:" not in done.stderr and "Logging error" not in done.stderr
    )
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "the disk is full; nothing of this change was saved" in errors[0]
    (small_disk / "filler").unlink()
    with Project.open(project) as reopened:
        assert reopened.documents.document_ids() == []


def test_opening_a_project_on_a_full_disk_says_the_disk_is_full(small_disk):
    project = small_disk / "p"
    Project.create(project).close()
    for leftover in project.glob("curalink.db-*"):
        leftover.unlink()
    fill(small_disk / "filler", leave_kb=0)

    done = curalink("-p", str(project), "stats")

    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        "the disk is full or failing" in done.stderr and "not a readable SQLite database" not in done.stderr
    )
