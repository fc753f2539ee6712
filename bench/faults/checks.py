"""What a trial checks afterwards: is the project usable, is every committed decision still there, was an
import all or nothing, is the store unchanged, what did the run leave behind.

Storage checks read the database with the plain `sqlite3` module (no Curalink code between the file and
the verdict); the model check runs `bench.faults.child check` in its own process (open the project, load
the models in force, link one document), so a crash there cannot take the harness down.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bench.fuzz.bad_inputs import store_digest as core_store_digest

CHECK_TIMEOUT_S = 300


@dataclass
class StoreState:
    """What the store holds, read straight from the database file."""

    integrity: str
    decisions: dict[int, tuple] = field(default_factory=dict)  # id -> (mention, action, concept, curator)
    documents: int = 0
    concepts: int = 0
    error: str = ""


def read_store(project: Path) -> StoreState:
    db = project / "curalink.db"
    try:
        connection = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=30)
        try:
            integrity = "; ".join(row[0] for row in connection.execute("PRAGMA integrity_check"))
            decisions = {
                row[0]: tuple(row[1:])
                for row in connection.execute(
                    "SELECT id, mention_id, action, concept_id, curator FROM decisions"
                )
            }
            documents = connection.execute("SELECT count(*) FROM documents").fetchone()[0]
            concepts = connection.execute("SELECT count(*) FROM concepts").fetchone()[0]
        finally:
            connection.close()
    except sqlite3.Error as exc:
        return StoreState(integrity="unreadable", error=f"{type(exc).__name__}: {exc}")
    return StoreState(integrity, decisions, documents, concepts)


def store_digest(project: Path) -> str:
    """A digest of every row of every table: equal digests mean the store did not change."""
    return core_store_digest(project / "curalink.db")


def lost_decisions(before: dict[int, tuple], after: dict[int, tuple], committed: list[dict]) -> list[str]:
    """Decisions stored before the run, or reported committed during it, that the store no longer has."""
    lost = [f"decision {i} (stored before the run)" for i, row in before.items() if after.get(i) != row]
    for entry in committed:
        for decision_id, (mention_id, action, concept_id) in zip(entry["ids"], entry["rows"], strict=True):
            row = after.get(decision_id)
            if row is None or tuple(row[:3]) != (mention_id, action, concept_id):
                lost.append(f"decision {decision_id} ({action} of mention {mention_id}, committed)")
    return lost


def leftovers(project: Path) -> list[str]:
    """Scratch files a run should have removed: training folders and temporary index or model files."""
    found = [p for p in (project / "models").glob("*/.training-*")]
    found += [p for p in (project / "index").glob("*") if p.name.startswith(".") or ".tmp" in p.name]
    return sorted(str(p.relative_to(project)) for p in found)


def model_health(project: Path, document: str, *, python: str = sys.executable) -> dict:
    """Open, load the models in force, link one document (in a child process)."""
    try:
        done = subprocess.run(
            [python, "-m", "bench.faults.child", "check", str(project), "--document", document],
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return {"opens": False, "loads": False, "links": False, "error": "the check hung"}
    for line in done.stdout.splitlines():
        if line.startswith("health "):
            return json.loads(line[len("health ") :])
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {
        "opens": False,
        "loads": False,
        "links": False,
        "error": f"check crashed ({done.returncode}): {tail}",
    }


def usable(state: StoreState, health: dict) -> tuple[bool, str]:
    """A project is usable when it opens, its integrity check is ok, its models load and link works."""
    if state.integrity != "ok":
        return False, f"integrity_check: {state.integrity} {state.error}".strip()
    if not (health.get("opens") and health.get("loads") and health.get("links")):
        return False, health.get("error") or "link stored no suggestion"
    return True, ""


def one_line_error(stderr: str, file: Path) -> dict:
    """How a command refused a file: its first line, whether it names the file, and whether a traceback or
    SQL leaked out."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    starts = [i for i, line in enumerate(lines) if line.startswith("error:")]
    first = lines[starts[0]] if starts else (lines[-1] if lines else "")
    return {
        "message": first[:300],
        "names_file": file.name in first,
        "traceback": "Traceback (most recent call last)" in stderr,
        "sql": "[SQL:" in stderr,
        "lines": len(lines) - starts[0] if starts else len(lines),  # the error and what it lists after it
    }
