"""Bad input files, each imported with the real `curalink` command into a copy of the base project.

Counted: files tried; clear errors (exit code 2, an `error:` line naming the file and, where the case
says which, the line or element; no traceback, no SQL); one-line errors among them; the store unchanged
(a digest of every row); no hang (a time limit) and no runaway memory (4 GiB of address space).

Files come from the builders below and from every case of `bench.fuzz.bad_input_cases` (the
"badinput" work) when it is there: `CASES[name](folder) -> (path, format)`, with `WHERE[name]` the line
or element its error must name (or None). Whether a file is a corpus or a vocabulary follows from its
format.
"""

from __future__ import annotations

import importlib
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.faults.checks import one_line_error, store_digest
from bench.faults.workload import Workload, copy_project, demo_resources
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

IMPORT_TIMEOUT_S = 60
MEMORY_LIMIT = 4 << 30  # an import may not take more than 4 GiB of address space


def _demo_block() -> list[str]:
    """The demo's first abstract under an id the base project does not have."""
    lines = (demo_resources() / "abstracts.pubtator").read_text(encoding="utf-8").splitlines()
    block = lines[: lines.index("")] if "" in lines else lines
    old = block[0].split("|", 1)[0]
    return ["98000001" + line[len(old) :] for line in block]


def build_truncated_pubtator(folder: Path):
    """A PubTator file cut in the middle of its last concept id (`D006816` -> `D006`)."""
    block = _demo_block()
    path = folder / "truncated.pubtator"
    path.write_text("\n".join(block)[: len("\n".join(block)) - 3], encoding="utf-8")
    return path, "pubtator"


def build_jsonl_huge_offset(folder: Path):
    """A 70-byte JSONL line whose passage offset would make a 500 MB document."""
    path = folder / "huge-offset.jsonl"
    line = {"doc_id": "1", "passages": [{"offset": 500_000_000, "text": "x"}]}
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path, "jsonl"


def build_deep_bioc_json(folder: Path):
    """BioC JSON nested 100,000 levels deep."""
    path = folder / "deep.bioc.json"
    path.write_text('{"documents": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    return path, "bioc-json"


def build_empty_doc_id_jsonl(folder: Path):
    """A JSONL document with an empty `doc_id`."""
    path = folder / "empty-id.jsonl"
    path.write_text(
        json.dumps({"doc_id": "", "passages": [{"offset": 0, "text": "Huntington disease"}]}) + "\n"
    )
    return path, "jsonl"


def build_binary_obo(folder: Path):
    """Random bytes named .obo."""
    path = folder / "binary.obo"
    path.write_bytes(random.Random(7).randbytes(4096))
    return path, "obo"


def build_utf16_obo(folder: Path):
    """An OBO file encoded as UTF-16."""
    path = folder / "utf16.obo"
    text = 'format-version: 1.2\n\n[Term]\nid: DOID:0001\nname: disease\nsynonym: "illness" EXACT []\n'
    path.write_bytes(text.encode("utf-16"))
    return path, "obo"


def build_truncated_tsv_kb(folder: Path):
    """A TSV KB cut in the middle of its last line (inside a name, never at a line break: a file cut
    exactly after a line break cannot be told from a complete one)."""
    text = (demo_resources() / "kb.tsv").read_text(encoding="utf-8")
    path = folder / "truncated-kb.tsv"
    cut = text.index("\t", len(text) // 2) + 4
    path.write_text(text[:cut], encoding="utf-8")
    return path, "tsv"


OWN_BUILDERS: dict[str, Callable] = {
    "truncated-pubtator": build_truncated_pubtator,
    "jsonl-huge-offset": build_jsonl_huge_offset,
    "bioc-json-100k-deep": build_deep_bioc_json,
    "jsonl-empty-doc-id": build_empty_doc_id_jsonl,
    "obo-binary": build_binary_obo,
    "obo-utf16": build_utf16_obo,
    "tsv-kb-truncated": build_truncated_tsv_kb,
}


def _badinput_cases(name: str = "bench.fuzz.bad_input_cases") -> tuple[dict, dict, str]:
    """The badinput work's cases and where each error must point, when present; and a note."""
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError:
        return {}, {}, f"{name}: not present"
    cases, where = getattr(module, "CASES", None), getattr(module, "WHERE", {})
    if not isinstance(cases, dict):
        return {}, {}, f"{name}: present, but without CASES (not used)"
    return cases, where if isinstance(where, dict) else {}, f"{name}: {len(cases)} cases"


def _kind(fmt: str) -> str:
    from core.formats import FORMATS as CORPUS_FORMATS

    return "corpus" if fmt in CORPUS_FORMATS else "kb"


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def import_file(project: Path, path: Path, fmt: str, where: str | None = None) -> dict:
    kind = _kind(fmt)
    before = store_digest(project)
    argv = [sys.executable, "-m", "app.cli", "-p", str(project), kind, "import", str(path), "--format", fmt]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=IMPORT_TIMEOUT_S, preexec_fn=_limit_memory
        )
        returncode, stderr = done.returncode, done.stderr
    except subprocess.TimeoutExpired:
        returncode, stderr = None, ""
    error = one_line_error(stderr, path)
    unchanged = store_digest(project) == before
    names_where = where is None or where in stderr
    return {
        "kind": kind,
        "returncode": returncode,
        **error,
        "names_where": names_where,
        "hung": returncode is None,
        "unchanged": unchanged,
        "clear": returncode == 2
        and error["names_file"]
        and names_where
        and not error["traceback"]
        and not error["sql"]
        and unchanged,
    }


def bad_input_trials(
    workload: Workload,
    *,
    limit: int | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    theirs, where, note = _badinput_cases()
    builders = {
        **{f"own/{k}": v for k, v in OWN_BUILDERS.items()},
        **{f"badinput/{k}": v for k, v in theirs.items()},
    }
    rows = []
    with tempfile.TemporaryDirectory(prefix="curalink-bad-inputs-") as scratch:
        project = copy_project(workload.base, Path(scratch) / "project")
        items = list(builders.items())[:limit]
        for number, (name, builder) in enumerate(items):
            cancel.raise_if_cancelled()
            progress(number, len(items), f"bad input: {name}")
            folder = Path(scratch) / "files" / f"{number:03d}"
            folder.mkdir(parents=True)
            try:
                path, fmt = builder(folder)
            except Exception as exc:  # noqa: BLE001 - reported, not fatal
                rows.append({"builder": name, "skipped": f"{type(exc).__name__}: {exc}"[:300]})
                continue
            case_where = where.get(name.removeprefix("badinput/")) if name.startswith("badinput/") else None
            row = {"builder": name, "file": Path(path).name, "format": fmt}
            row.update(import_file(project, Path(path), fmt, case_where))
            rows.append(row)
            if not row["unchanged"]:  # the next file meets the base project, not what this one left
                shutil.rmtree(project)
                copy_project(workload.base, project)
        files = [r for r in rows if "skipped" not in r]
    progress(len(files), len(files), "bad inputs: done")
    tried = [r for r in rows if "skipped" not in r]
    return {
        "found": note,
        "files": len(tried),
        "skipped_cases": len(rows) - len(tried),
        "clear_errors": sum(r["clear"] for r in tried),
        "one_line": sum(r["clear"] and r["lines"] == 1 for r in tried),
        "accepted": sum(r["returncode"] == 0 for r in tried),
        "tracebacks": sum(r["traceback"] for r in tried),
        "hung": sum(r["hung"] for r in tried),
        "store_changed": sum(not r["unchanged"] for r in tried),
        "rows": rows,
    }
