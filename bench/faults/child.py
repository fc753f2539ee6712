"""One operation of a fault trial, in its own process (the harness kills it with SIGKILL, fills its disk,
or runs it beside other writers).

    python -m bench.faults.child OPERATION PROJECT [options]

It prints `ready` once its imports are done and the project is open (the harness times kills from there),
then runs the operation through the same code the `curalink` command runs. A decision burst prints
`committed {...}` right after each store call returned: those decisions are committed and must survive
any kill. `check` loads the models in force and links one document, then prints `health {...}`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

CLI_OPERATIONS = {
    "corpus-import": lambda a: ["corpus", "import", a.file, "--format", "pubtator"],
    "kb-import": lambda a: ["kb", "import", a.file, "--format", "tsv"],
    "link": lambda a: ["link", "--device", "cpu"],
    "train": lambda a: ["train", "retriever", "--max-seconds", str(a.seconds), "--epochs", "40"],
    "retrain": lambda a: [
        "retrain",
        "--max-seconds",
        str(a.seconds),
        "--promote",
        "always",
        "--device",
        "cpu",
    ],
}
MODEL_OPERATIONS = ("link", "train", "retrain", "check")


def say(kind: str, payload: object = None) -> None:
    sys.stdout.write(kind + ("" if payload is None else " " + json.dumps(payload)) + "\n")
    sys.stdout.flush()


def _warm(operation: str) -> None:
    """Import what the operation needs before `ready`, so a kill lands in the work, not in start-up."""
    import app.cli  # noqa: F401
    import core.formats  # noqa: F401
    import core.kb  # noqa: F401
    from core.store import Project  # noqa: F401

    if operation in MODEL_OPERATIONS:
        import core.jobs.models.retrain  # noqa: F401
        import core.jobs.models.versions  # noqa: F401
        import core.pipeline  # noqa: F401
        import core.rerank.cross_encoder  # noqa: F401
        import core.retrieve.rescnn_retriever  # noqa: F401


def run_cli(args) -> int:
    from app.cli import main

    say("ready")
    code = main(["-p", args.project, *CLI_OPERATIONS[args.operation](args)])
    say("done", {"rc": code})
    return code


def _choices(project) -> list[tuple[int, list, tuple]]:
    ids = [m for _, mention_ids in project.documents.documents_with_mention_ids() for m in mention_ids]
    sets = project.curation.suggestion_sets(ids)
    return [(m, [c.concept_id for c in sets[m].candidates], sets[m].key) for m in ids if m in sets]


def _one_burst(rng: random.Random, choices: list, curator: str):
    """A single decision (most of the time) or a bulk accept of a few, as the desk would write them."""
    from core.store.curation_log import NewDecision

    if rng.random() < 0.15:
        picked = rng.sample(choices, k=min(8, len(choices)))
        return [
            NewDecision(m, "accept", concept_id=ids[0], curator=curator, suggested_for=key)
            for m, ids, key in picked
            if ids
        ]
    mention_id, ids, key = rng.choice(choices)
    action = rng.choice(["accept", "accept", "correct", "reject", "nil", "ambiguous", "revert"])
    if action == "accept" and ids:
        return [NewDecision(mention_id, "accept", concept_id=ids[0], curator=curator, suggested_for=key)]
    if action == "correct" and ids:
        return [NewDecision(mention_id, "correct", concept_id=rng.choice(ids), curator=curator)]
    if action in ("accept", "correct"):
        action = "nil"
    return [NewDecision(mention_id, action, curator=curator)]


def run_decisions(args) -> int:
    """Write decisions until `--count` are made (or `--seconds` pass); with `--patient`, a locked database
    is reported (`locked ...`) and the same decision tried again, as a careful script would."""
    from core.errors import ProjectError
    from core.store import Project

    rng = random.Random(args.seed)
    project = Project.open(args.project)
    choices = _choices(project)
    say("ready")
    if args.wait_go:
        sys.stdin.readline()
    made = 0
    deadline = time.monotonic() + args.seconds if args.seconds else None
    while made < args.count and (deadline is None or time.monotonic() < deadline):
        burst = _one_burst(rng, choices, args.curator)
        while True:
            try:
                ids = project.curation.record_decisions(burst)
                break
            except ProjectError as exc:
                if not args.patient or "locked" not in str(exc):
                    raise
                say("locked", str(exc))
                if deadline is not None and time.monotonic() > deadline + 120:
                    raise
                time.sleep(0.2)
        say("committed", {"ids": ids, "rows": [[d.mention_id, d.action, d.concept_id] for d in burst]})
        made += len(burst)
        if args.pause:
            time.sleep(args.pause)
    project.close()
    say("done", {"made": made})
    return 0


def run_check(args) -> int:
    """Open the project, load the models in force, link one document: is the project usable?"""
    from core.jobs.linking.suggestions import ProjectLinker
    from core.store import Project

    say("ready")
    health: dict = {"opens": False, "loads": False, "links": False}
    try:
        with Project.open(args.project) as project:
            health["opens"] = True
            health["retriever"] = getattr(project.models.active_model("retriever"), "version", None)
            health["reranker"] = getattr(project.models.active_model("reranker"), "version", None)
            linker = ProjectLinker.for_project(project, device="cpu")
            health["loads"] = True
            summary = linker.link_project(project, ids=[args.document])
            health["links"] = summary.suggestions > 0
    except Exception as exc:  # noqa: BLE001 - the harness wants the reason, whatever it is
        health["error"] = f"{type(exc).__name__}: {exc}"[:500]
    say("health", health)
    return 0 if health["links"] else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.faults.child")
    parser.add_argument("operation", choices=[*CLI_OPERATIONS, "decisions", "check"])
    parser.add_argument("project")
    parser.add_argument("--file", help="the file an import reads")
    parser.add_argument("--seconds", type=float, default=0.0, help="training budget, or a burst's length")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=400, help="decisions in a burst")
    parser.add_argument("--curator", default="fault-burst")
    parser.add_argument("--patient", action="store_true", help="retry a decision the lock refused")
    parser.add_argument("--pause", type=float, default=0.0, help="seconds between two decisions")
    parser.add_argument("--wait-go", action="store_true", help="start once a line arrives on stdin")
    parser.add_argument("--document", help="check: the document to link")
    args = parser.parse_args(argv)
    _warm(args.operation)
    if args.operation == "decisions":
        return run_decisions(args)
    if args.operation == "check":
        return run_check(args)
    return run_cli(args)


if __name__ == "__main__":
    raise SystemExit(main())
