"""link-batch runs cut short (issue 24): PubMed DeleteCitation sequences killed mid-rewrite, and the
driver of `--workers 2` killed with SIGKILL.

`batch-deletions`: each trial writes a random PubMed baseline and update files whose DeleteCitations
may empty whole earlier files, links them (deletion pass not run) in a child, runs the deletion pass in
another child killed with SIGKILL at a random manifest save (before or after it writes), then resumes
with `curalink link-batch` and imports the folder with `curalink import-linked`. The harness links the
surviving citations from scratch into another folder and desk and compares, document by document,
the linked records of both folders and the documents of both desks: mismatches must be 0.

`batch-kills`: each trial starts `curalink link-batch --workers 2`, kills the driver alone with SIGKILL
at a random moment (0-0.2 s) after a random shard (1-45 of 60) is recorded, and counts the worker (and resource
tracker) processes still alive 30 s later (orphans, must be 0) and the shard files in the folder the manifest
does not list as done with their hash (unlisted); then the same command resumes, and the unlisted
files are counted again (must be 0).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench.faults.batch_setup import (
    REPO_ROOT,
    BatchSetup,
    child_env,
    cli,
    demo_documents,
    first_error_line,
    stored_documents,
)
from core.errors import InputError
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

ORPHAN_WAIT_S = 30.0


def _child(*args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bench.faults.batch_child", *map(str, args)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(),
    )


def _sequence(rng: random.Random, folder: Path) -> tuple[list[Path], list[str]]:
    """A baseline of two files and two or three update files; returns (files in order, surviving PMIDs).
    An update's DeleteCitation names citations of earlier files: a few, or every one left of one file
    (at least one update file does that, so a shard is emptied in every trial)."""
    from bench.synthetic.shards import replicate, write_pubmed_xml

    documents = list(replicate(demo_documents(), 30))
    rng.shuffle(documents)
    files: list[Path] = []
    present: list[tuple[int, str]] = []  # (number of the file it came from, PMID) still in force
    cut = 0
    count = rng.randint(4, 5)
    emptying = rng.randrange(2, count)  # this update file deletes every citation left of an earlier file
    for number in range(count):
        size = rng.randint(2, 6)
        batch = documents[cut : cut + size]
        cut += size
        deleted: list[str] = []
        if number >= 2 and present:  # an update file
            if number == emptying or rng.random() < 0.25:
                origin = rng.choice(sorted({o for o, _ in present}))
                deleted = [pmid for o, pmid in present if o == origin]
            else:
                deleted = rng.sample([pmid for _, pmid in present], k=rng.randint(1, min(3, len(present))))
        files.append(write_pubmed_xml(batch, folder / f"pubmed24n{number + 1:04d}.xml", deleted=deleted))
        present = [(o, pmid) for o, pmid in present if pmid not in deleted]
        present += [(number, d.doc_id) for d in batch]
    return files, [pmid for _, pmid in present]


def _records(folder: Path) -> dict[str, dict]:
    """doc id -> its linked JSON record, over every shard the manifest lists as done."""
    manifest = _shards(folder)
    records = {}
    for name, entry in manifest.items():
        if entry.get("status") != "done":
            continue
        for line in (folder / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                records[row["doc_id"]] = row
    return records


def deletion_trials(
    setup: BatchSetup,
    *,
    trials: int,
    seed: int,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    from bench.synthetic.shards import write_pubmed_xml
    from core.formats import read_corpus

    rng = random.Random(seed + 2)
    rows = []
    for trial in range(trials):
        if cancel.cancelled:
            break
        progress(trial, trials, "DeleteCitation sequences")
        place = setup.work / "deletions" / f"t{trial}"
        shutil.rmtree(place, ignore_errors=True)
        files, survivors = _sequence(rng, place / "in")
        out = place / "out"
        linked = _child("link-only", setup.project, out, *files)
        if linked.returncode != 0:
            rows.append({"trial": trial, "error": first_error_line(linked), "mismatches": 1})
            continue
        kill_at, when = rng.randint(1, 4), rng.choice(["before", "after"])
        pass_run = _child("deletions", out, kill_at, when)
        killed = pass_run.returncode == -signal.SIGKILL
        resumed = cli("-p", setup.project, "link-batch", *files, "--out", out, "--detect")
        desk = setup.fresh_desk(place / "desk")
        imported = cli("-p", desk, "import-linked", out)

        documents = {d.doc_id: d for f in files for d in read_corpus(f, "pubmed-xml")}
        scratch_in = write_pubmed_xml(
            [documents[i] for i in survivors], place / "scratch-in" / "survivors.xml"
        )
        scratch = place / "scratch"
        cli("-p", setup.project, "link-batch", scratch_in, "--out", scratch, "--detect")
        scratch_desk = setup.fresh_desk(place / "scratch-desk")
        cli("-p", scratch_desk, "import-linked", scratch)

        ours, theirs = _records(out), _records(scratch)
        record_mismatches = sorted(i for i in ours.keys() | theirs.keys() if ours.get(i) != theirs.get(i))
        desk_docs, scratch_docs = stored_documents(desk), stored_documents(scratch_desk)
        desk_mismatches = sorted(
            i for i in desk_docs.keys() | scratch_docs.keys() if desk_docs.get(i) != scratch_docs.get(i)
        )
        emptied = sum(e.get("documents") == 0 for e in _shards(out).values())
        rows.append(
            {
                "trial": trial,
                "files": len(files),
                "survivors": len(survivors),
                "deleted": len(documents) - len(survivors),
                "emptied_shards": emptied,
                "kill": f"save {kill_at}, {when} it writes",
                "killed": killed,
                "resume_ok": resumed.returncode == 0,
                "import_ok": imported.returncode == 0,
                "message": ""
                if resumed.returncode == imported.returncode == 0
                else first_error_line(resumed if resumed.returncode else imported),
                "record_mismatches": record_mismatches[:10],
                "desk_mismatches": desk_mismatches[:10],
                "mismatches": len(record_mismatches) + len(desk_mismatches),
                "survivors_stored": len(set(desk_docs) & set(survivors)),
            }
        )
    return {
        "trials": trials,
        "killed_mid_pass": sum(r.get("killed", False) for r in rows),
        "emptied_shards": sum(r.get("emptied_shards", 0) for r in rows),
        "resume_failed": sum(not r.get("resume_ok", False) for r in rows),
        "import_failed": sum(not r.get("import_ok", False) for r in rows),
        "mismatches": sum(r["mismatches"] for r in rows),
        "rows": rows,
    }


def _alive(processes: list) -> list:
    import psutil

    living = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                living.append(process)
        except psutil.NoSuchProcess:
            pass
    return living


def kill_trials(
    setup: BatchSetup,
    *,
    trials: int,
    seed: int,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    import psutil

    from bench.synthetic.shards import write_shards
    from core.batch.plan import file_sha256

    rng = random.Random(seed + 3)
    inputs = setup.work / "kills" / "in"
    if not inputs.is_dir():
        write_shards(demo_documents(), inputs, total=240, per_shard=4, formats=["pubtator"])
    rows = []
    for trial in range(trials):
        if cancel.cancelled:
            break
        progress(trial, trials, "driver kills")
        out = setup.work / "kills" / f"t{trial}"
        shutil.rmtree(out, ignore_errors=True)
        command = [sys.executable, "-m", "app.cli", "-p", str(setup.project), "link-batch", str(inputs)]
        driver = subprocess.Popen(
            [*command, "--out", str(out), "--workers", "2"],
            cwd=REPO_ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env=child_env(),
        )
        started: list = []
        target, delay = rng.randint(1, 45), rng.uniform(0.0, 0.2)  # a random shard of 60, a moment after
        try:
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline and driver.poll() is None:
                if _done_count(out) >= target:
                    break
                time.sleep(0.05)
            time.sleep(delay)
            if driver.poll() is None:
                started = psutil.Process(driver.pid).children(recursive=True)
                os.kill(driver.pid, signal.SIGKILL)  # the driver alone, as the OOM killer would
            driver.wait(30)
            deadline = time.monotonic() + ORPHAN_WAIT_S
            while _alive(started) and time.monotonic() < deadline:
                time.sleep(0.1)
            orphans = len(_alive(started))
        finally:
            for process in _alive(started):  # what this trial started, should any be left
                process.kill()
            if driver.poll() is None:
                driver.kill()
                driver.wait(30)
        unlisted, listed = _unlisted(out, file_sha256)
        resumed = cli("-p", setup.project, "link-batch", inputs, "--out", out, "--workers", "2")
        unlisted_after, _ = _unlisted(out, file_sha256)
        rows.append(
            {
                "trial": trial,
                "kill_after_shards": target,
                "killed_mid_run": bool(started) and len(listed) < len(list(inputs.iterdir())),
                "children_at_kill": len(started),
                "shards_done_at_kill": len(listed),
                "orphans": orphans,
                "unlisted_shards": unlisted,
                "unlisted_after_resume": unlisted_after,
                "resumed_to_end": resumed.returncode == 0 and _done_count(out) == len(list(inputs.iterdir())),
            }
        )
    return {
        "trials": trials,
        "killed_mid_run": sum(r["killed_mid_run"] for r in rows),
        "orphans": sum(r["orphans"] for r in rows),
        "unlisted_shards": sum(len(r["unlisted_shards"]) for r in rows),
        "unlisted_after_resume": sum(len(r["unlisted_after_resume"]) for r in rows),
        "resume_failed": sum(not r["resumed_to_end"] for r in rows),
        "rows": rows,
    }


def _unlisted(out: Path, file_sha256) -> tuple[list[str], dict]:
    """Shard files in the folder the manifest does not list as done with their hash, and those listed.
    (The driver renames a shard into place just before it saves the manifest that lists it: a kill in
    that window leaves one such file, which the next run links again.)"""
    listed = {n: e for n, e in _shards(out).items() if e.get("status") == "done"}
    present = [p for p in out.glob("*.linked.*") if not p.name.startswith(".")]
    unlisted = [
        p.name
        for p in present
        if p.name not in listed or file_sha256(p) != listed[p.name].get("output_sha256")
    ]
    return unlisted, listed


def _done_count(out: Path) -> int:
    try:
        shards = _shards(out)
    except (OSError, ValueError, KeyError, InputError):
        return 0
    return sum(e.get("status") == "done" for e in shards.values())


def _shards(out: Path) -> dict[str, dict]:
    """The folder's shard entries as the manifest and its journal give them (core.batch.manifest)."""
    from core.batch.manifest import Manifest

    manifest = Manifest.load(out)
    return manifest.shards if manifest is not None else {}
