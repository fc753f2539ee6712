"""The engines agree, and a killed run resumes: link-batch on a local Ray (two CPU actors) and in spawned
worker processes writes the same bytes as one process; a `curalink link-batch` killed mid-shard leaves
no partial output and the next run finishes the rest, byte-identical to an uninterrupted run."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.resources import demo_dir
from bench.synthetic.shards import write_shards
from core.atomic_files import TEMP_PREFIX
from core.batch import run_batch
from core.batch.manifest import Manifest
from core.batch.plan import file_sha256
from core.formats import read_corpus

DEMO_DOCUMENTS = list(read_corpus(demo_dir() / "abstracts.pubtator", "pubtator"))


@pytest.fixture
def project(demo_template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(demo_template, copy, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    return copy


def _outputs(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.linked.*")) if not p.name.startswith(".")}


@pytest.fixture
def local_ray():
    ray = pytest.importorskip("ray", reason="Ray is the `cluster` extra: pip install -e '.[cluster]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_local_ray_and_worker_processes_write_identical_shards(
    project: Path, tmp_path: Path, local_ray
) -> None:
    write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=24, per_shard=4, gzip_every=3)
    one = run_batch([tmp_path / "in"], tmp_path / "one", project)
    on_ray = run_batch([tmp_path / "in"], tmp_path / "ray", project, engine="ray", workers=2)
    assert one.linked == on_ray.linked == 6
    assert _outputs(tmp_path / "ray") == _outputs(tmp_path / "one")
    assert on_ray.figures["index_loads"] == on_ray.figures["workers"] <= 2, "one index load per actor"
    assert Manifest.load(tmp_path / "ray").runs[-1]["actors"] == 2

    two = run_batch([tmp_path / "in"], tmp_path / "two", project, workers=2)
    assert _outputs(tmp_path / "two") == _outputs(tmp_path / "one")
    assert two.figures["index_loads"] == two.figures["workers"] <= 2


def test_a_run_killed_mid_shard_leaves_no_partial_output_and_resumes(project: Path, tmp_path: Path) -> None:
    write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=360, per_shard=60, formats=["pubtator"])
    command = [sys.executable, "-m", "app.cli", "-p", str(project), "link-batch", str(tmp_path / "in")]
    out = tmp_path / "out"
    child = subprocess.Popen(
        [*command, "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"},
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None:
            manifest = Manifest.load(out) if (out / "manifest.json").is_file() else None
            writing = any(p.name.startswith(TEMP_PREFIX) for p in out.iterdir()) if out.is_dir() else False
            if manifest is not None and manifest.done() and writing:
                break
            time.sleep(0.02)
        assert child.poll() is None, "the run ended before it could be killed mid-shard"
        os.killpg(child.pid, signal.SIGKILL)
    finally:
        child.wait(30)

    manifest = Manifest.load(out)
    finished = manifest.done()
    assert 1 <= len(finished) < 6
    visible = {p.name for p in out.glob("*.linked.*") if not p.name.startswith(".")}
    assert visible == set(finished), (
        "every output present is a finished shard (the killed one's is a temporary)"
    )
    for name, entry in finished.items():
        assert file_sha256(out / name) == entry["output_sha256"]

    resumed = run_batch([tmp_path / "in"], out, project)
    assert (resumed.already_done, resumed.linked) == (len(finished), 6 - len(finished))
    assert not [p for p in out.iterdir() if p.name.startswith(TEMP_PREFIX)], (
        "the killed run's temporary is gone"
    )
    run_batch([tmp_path / "in"], tmp_path / "whole", project)
    assert _outputs(out) == _outputs(tmp_path / "whole")


def test_workers_end_with_a_killed_driver_and_publish_nothing_unrecorded(
    project: Path, tmp_path: Path
) -> None:
    """kill -9 of the driver of `--workers 2`: both workers and the resource tracker end, and no shard
    appears that the manifest does not list."""
    import psutil

    write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=96, per_shard=4, formats=["pubtator"])
    out = tmp_path / "out"
    command = [sys.executable, "-m", "app.cli", "-p", str(project), "link-batch", str(tmp_path / "in")]
    driver = subprocess.Popen(
        [*command, "--out", str(out), "--workers", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"},
    )
    started: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and driver.poll() is None:
            manifest = Manifest.load(out) if (out / "manifest.json").is_file() else None
            if manifest is not None and manifest.done():
                break  # the workers are loaded and linking
            time.sleep(0.05)
        assert driver.poll() is None, "the run ended before its driver could be killed"
        started = psutil.Process(driver.pid).children(recursive=True)
        assert len(started) >= 2, "two workers (and the resource tracker) run under the driver"
        os.kill(driver.pid, signal.SIGKILL)  # the driver alone, as the OOM killer or kill -9 would
        driver.wait(30)

        def alive() -> list[psutil.Process]:
            return [p for p in started if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]

        deadline = time.monotonic() + 60
        while alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert alive() == [], "no worker (or resource tracker) outlives its driver"
    finally:
        for process in started:  # what this test started, should any be left
            if process.is_running():
                process.kill()
        if driver.poll() is None:
            driver.kill()
            driver.wait(30)

    finished = Manifest.load(out).done()
    visible = {p.name for p in out.glob("*.linked.*") if not p.name.startswith(".")}
    assert visible <= set(finished), "every shard in the folder is one the manifest lists as done"
