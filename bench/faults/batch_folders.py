"""Hostile link-batch output folders (issue 24): crafted manifests and links, and tampered shards.

`batch-manifests`: each trial links two shards, then for every variant (a manifest entry `../x`, an
absolute path, a `done` entry with out_format text, a shard / the manifest / `.index` / the lock that is
a symbolic link into a sibling folder) runs `link-batch --overwrite`, `link-batch` (resume) and
`import-linked` against a fresh copy; the sibling folder of victim files is snapshotted (existence,
size, mtime, hash) before and after, so "touched outside" is what the harness saw.

`batch-tampered`: each trial damages one shard of a linked folder (a score NaN or inf, an unknown id, a
concept twice, too many candidates, its bytes changed without the manifest) and imports the folder
into a fresh desk; the harness counts the bad shard's documents found in the desk's database (must be
0), the good shard's (all), and the problems printed naming the bad shard.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

from bench.faults.batch_setup import (
    BatchSetup,
    cli,
    demo_documents,
    first_error_line,
    has_traceback,
    snapshot,
    stored_documents,
    touched,
)
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

MANIFEST_VARIANTS = (
    "dot-dot",
    "absolute",
    "done-as-text",
    "symlinked-shard",
    "symlinked-manifest",
    "symlinked-index",
    "symlinked-lock",
)
OPERATIONS = ("link-batch --overwrite", "link-batch (resume)", "import-linked")
TAMPERS = ("nan-score", "inf-score", "unknown-id", "duplicate", "too-many", "bytes-changed")


def _pristine(setup: BatchSetup, folder: Path, *, no_index: bool = False) -> tuple[Path, Path, Path]:
    """(inputs, linked folder, project) under `folder`, linked once and reused by the trials."""
    from bench.synthetic.shards import write_shards

    inputs, linked = folder / "in", folder / "linked"
    project = folder / "project-no-index" if no_index else setup.project
    if no_index and not project.is_dir():  # no saved name index: link-batch builds one into .index
        shutil.copytree(setup.project, project, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
        for saved in (project / "index").glob("*"):
            saved.unlink()
    if not (linked / "manifest.json").is_file():
        write_shards(demo_documents(), inputs, total=12, per_shard=6, formats=["pubtator"])
        done = cli("-p", setup.project, "link-batch", inputs, "--out", linked)
        if done.returncode != 0:
            raise RuntimeError(f"link-batch of the pristine folder: {first_error_line(done)}")
    return inputs, linked, project


def _edit_manifest(folder: Path, edit) -> None:
    path = folder / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _craft(variant: str, out: Path, victims: Path, rng: random.Random) -> None:
    """Make `out` (a copy of a linked folder) hostile; victims are files in the sibling folder."""
    shards = sorted(p.name for p in out.glob("*.linked.jsonl"))
    target = rng.choice(shards)
    entry = {"status": "done", "out_format": "jsonl", "documents": 1}
    if variant == "dot-dot":
        _edit_manifest(out, lambda d: d["shards"].update({f"../{victims.name}/victim.linked.jsonl": entry}))
    elif variant == "absolute":
        _edit_manifest(out, lambda d: d["shards"].update({str(victims / "absolute.linked.jsonl"): entry}))
    elif variant == "done-as-text":
        _edit_manifest(out, lambda d: d["shards"][target].update({"out_format": "text"}))
    elif variant == "symlinked-shard":
        shutil.copy(out / target, victims / "linked-to.linked.jsonl")
        (out / target).unlink()
        (out / target).symlink_to(victims / "linked-to.linked.jsonl")
    elif variant == "symlinked-manifest":
        shutil.copy(out / "manifest.json", victims / "manifest.json")
        (out / "manifest.json").unlink()
        (out / "manifest.json").symlink_to(victims / "manifest.json")
    elif variant == "symlinked-index":
        shutil.rmtree(out / ".index", ignore_errors=True)
        (victims / "index").mkdir()
        (out / ".index").symlink_to(victims / "index", target_is_directory=True)
    elif variant == "symlinked-lock":
        (out / ".link-batch.lock").unlink(missing_ok=True)
        (out / ".link-batch.lock").symlink_to(victims / "lock")


def _victims(folder: Path, rng: random.Random) -> Path:
    folder.mkdir(parents=True)
    for name in ("victim.linked.jsonl", "absolute.linked.jsonl", "notes.txt"):
        (folder / name).write_text(f"{name}: not the batch's ({rng.random()})\n", encoding="utf-8")
    return folder


def manifest_trials(
    setup: BatchSetup,
    *,
    trials: int,
    seed: int,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    rng = random.Random(seed)
    root = setup.work / "manifests"
    rows = []
    total = trials * len(MANIFEST_VARIANTS) * len(OPERATIONS)
    for trial in range(trials):
        for variant in MANIFEST_VARIANTS:
            inputs, linked, project = _pristine(setup, root, no_index=variant == "symlinked-index")
            for operation in OPERATIONS:
                if cancel.cancelled:
                    break
                progress(len(rows), total, f"crafted manifests: {variant}, {operation}")
                place = (
                    root / f"t{trial}" / variant / operation.split()[0] / operation.split()[-1].strip("-()")
                )
                shutil.rmtree(place, ignore_errors=True)
                place.mkdir(parents=True)
                out, victims = place / "out", _victims(place / "victims", rng)
                shutil.copytree(linked, out, symlinks=True)
                _craft(variant, out, victims, rng)
                before = snapshot(victims)
                if operation == "import-linked":
                    desk = setup.fresh_desk(place / "desk")
                    done = cli("-p", desk, "import-linked", out)
                else:
                    extra = ["--overwrite"] if "overwrite" in operation else []
                    done = cli("-p", project, "link-batch", inputs, "--out", out, *extra)
                changed = touched(before, snapshot(victims))
                rows.append(
                    {
                        "trial": trial,
                        "variant": variant,
                        "operation": operation,
                        "returncode": done.returncode,
                        "refused": done.returncode != 0,
                        "message": first_error_line(done) if done.returncode else "",
                        "traceback": has_traceback(done),
                        "outside_touched": changed,
                    }
                )
    return {
        "trials": trials,
        "runs": len(rows),
        "outside_touched": sum(bool(r["outside_touched"]) for r in rows),
        "refused": sum(r["refused"] for r in rows),
        "tracebacks": sum(r["traceback"] for r in rows),
        "rows": rows,
    }


def _tamper(kind: str, shard: Path, rng: random.Random, known: list[str], limit: int) -> None:
    if kind == "bytes-changed":
        rows = shard.read_text(encoding="utf-8").splitlines()
        del rows[rng.randrange(len(rows))]
        shard.write_text("".join(row + "\n" for row in rows), encoding="utf-8")
        return
    rows = [json.loads(line) for line in shard.read_text(encoding="utf-8").splitlines()]
    mentions = [m for r in rows for m in r["mentions"] if len(m["infons"].get("candidates") or []) >= 2]
    candidates = rng.choice(mentions)["infons"]["candidates"]
    pick = candidates[rng.randrange(len(candidates))]
    if kind == "nan-score":
        pick["retriever_score"] = float("nan")
    elif kind == "inf-score":
        pick["retriever_score"] = float("inf")
    elif kind == "unknown-id":
        pick["concept_id"] = f"D9{rng.randrange(10**6):06d}X"
    elif kind == "duplicate":
        candidates[1]["concept_id"] = candidates[0]["concept_id"]
    elif kind == "too-many":
        candidates[:] = [
            {"concept_id": c, "name": "x", "matched_name": "x", "retriever_score": 0.5}
            for c in known[: limit + 1 + rng.randrange(5)]
        ]
    shard.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def tampered_trials(
    setup: BatchSetup,
    *,
    trials: int,
    seed: int,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    from core.batch.plan import file_sha256
    from core.formats import read_corpus
    from core.store import Project

    rng = random.Random(seed + 1)
    root = setup.work / "tampered"
    _, linked, _ = _pristine(setup, setup.work / "manifests")
    with Project.open(setup.desk) as desk:
        known = [c.concept_id for c in desk.kb.knowledge_base()]
    limit = json.loads((linked / "manifest.json").read_text(encoding="utf-8"))["identity"]["candidates"]
    rows = []
    for trial in range(trials):
        for kind in TAMPERS:
            if cancel.cancelled:
                break
            progress(len(rows), trials * len(TAMPERS), f"tampered shards: {kind}")
            place = root / f"t{trial}" / kind
            shutil.rmtree(place, ignore_errors=True)
            out = place / "out"
            shutil.copytree(linked, out)
            shards = sorted(out.glob("*.linked.jsonl"))
            bad = rng.choice(shards)
            bad_ids = {d.doc_id for d in read_corpus(bad, "jsonl")}
            good_ids = {d.doc_id for s in shards if s != bad for d in read_corpus(s, "jsonl")}
            _tamper(kind, bad, rng, known, limit)
            if kind != "bytes-changed":  # as if link-batch had written it: the manifest records its hash
                _edit_manifest(out, lambda d, b=bad: d["shards"][b.name].update(output_sha256=file_sha256(b)))
            desk = setup.fresh_desk(place / "desk")
            done = cli("-p", desk, "import-linked", out)
            stored = set(stored_documents(desk))
            printed = [line for line in (done.stdout + done.stderr).splitlines() if str(bad) in line]
            rows.append(
                {
                    "trial": trial,
                    "tamper": kind,
                    "returncode": done.returncode,
                    "stored_from_bad_shard": len(stored & bad_ids),
                    "good_shards_stored": len(stored & good_ids) == len(good_ids),
                    "problems_reported": len(printed),
                    "message": printed[0].strip() if printed else first_error_line(done),
                    "traceback": has_traceback(done),
                }
            )
    return {
        "trials": trials,
        "shards": len(rows),
        "stored_from_bad_shards": sum(r["stored_from_bad_shard"] for r in rows),
        "refused": sum(r["stored_from_bad_shard"] == 0 and r["problems_reported"] > 0 for r in rows),
        "good_shards_lost": sum(not r["good_shards_stored"] for r in rows),
        "tracebacks": sum(r["traceback"] for r in rows),
        "rows": rows,
    }
