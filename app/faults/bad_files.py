"""Bad input files, each imported with the real `curalink` command into a copy of the base project.

Counted: files tried; clear errors (exit code 2, the first line `error: ...` names the file, no
traceback, no SQL); the store unchanged (a digest of every row); no hang (each import has a time limit).

Files come from the builders below and from every builder `core.evaluate.bad_inputs` offers (the
"badinput" work), found at run time. Protocol: `build(folder: Path)` writes its file(s) into `folder`
and returns one `(path, kind, format)` or a list of them (`kind` is "corpus" or "kb", `format` the
`--format` value); a module may list builders in `BUILDERS` (name -> callable) or name them `build_*`.
A builder that returns something else is reported as skipped, with what it returned.
"""

from __future__ import annotations

import importlib
import inspect
import json
import random
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from app.faults.checks import one_line_error, store_digest
from app.faults.workload import Workload, copy_project, demo_resources
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
    return path, "corpus", "pubtator"


def build_jsonl_huge_offset(folder: Path):
    """A 70-byte JSONL line whose passage offset would make a 500 MB document."""
    path = folder / "huge-offset.jsonl"
    line = {"doc_id": "1", "passages": [{"offset": 500_000_000, "text": "x"}]}
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path, "corpus", "jsonl"


def build_deep_bioc_json(folder: Path):
    """BioC JSON nested 100,000 levels deep."""
    path = folder / "deep.bioc.json"
    path.write_text('{"documents": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    return path, "corpus", "bioc-json"


def build_empty_doc_id_jsonl(folder: Path):
    """A JSONL document with an empty `doc_id`."""
    path = folder / "empty-id.jsonl"
    path.write_text(
        json.dumps({"doc_id": "", "passages": [{"offset": 0, "text": "Huntington disease"}]}) + "\n"
    )
    return path, "corpus", "jsonl"


def build_binary_obo(folder: Path):
    """Random bytes named .obo."""
    path = folder / "binary.obo"
    path.write_bytes(random.Random(7).randbytes(4096))
    return path, "kb", "obo"


def build_utf16_obo(folder: Path):
    """An OBO file encoded as UTF-16."""
    path = folder / "utf16.obo"
    text = 'format-version: 1.2\n\n[Term]\nid: DOID:0001\nname: disease\nsynonym: "illness" EXACT []\n'
    path.write_bytes(text.encode("utf-16"))
    return path, "kb", "obo"


def build_truncated_tsv_kb(folder: Path):
    """A TSV KB cut in the middle of its last line."""
    text = (demo_resources() / "kb.tsv").read_text(encoding="utf-8")
    path = folder / "truncated-kb.tsv"
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    return path, "kb", "tsv"


OWN_BUILDERS: dict[str, Callable] = {
    "truncated-pubtator": build_truncated_pubtator,
    "jsonl-huge-offset": build_jsonl_huge_offset,
    "bioc-json-100k-deep": build_deep_bioc_json,
    "jsonl-empty-doc-id": build_empty_doc_id_jsonl,
    "obo-binary": build_binary_obo,
    "obo-utf16": build_utf16_obo,
    "tsv-kb-truncated": build_truncated_tsv_kb,
}


def discovered_builders(module_name: str = "core.evaluate.bad_inputs") -> tuple[dict[str, Callable], str]:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError:
        return {}, f"{module_name}: not present"
    found: dict[str, Callable] = {}
    listed = getattr(module, "BUILDERS", None)
    if isinstance(listed, dict):
        found.update({str(k): v for k, v in listed.items() if callable(v)})
    for name, value in vars(module).items():
        if name.startswith("build_") and callable(value) and getattr(value, "__module__", "") == module_name:
            found.setdefault(name.removeprefix("build_").replace("_", "-"), value)
    return found, f"{module_name}: {len(found)} builder(s)"


def built_files(builder: Callable, folder: Path) -> list[tuple[Path, str, str]]:
    """Run a builder; its answer as a list of (path, kind, format), or a TypeError saying what it was."""
    required = [
        p
        for p in inspect.signature(builder).parameters.values()
        if p.default is inspect.Parameter.empty and p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    answer = builder(folder) if required else builder()
    items = answer if isinstance(answer, list) else [answer]
    files = []
    for item in items:
        if not (isinstance(item, tuple) and len(item) == 3 and item[1] in ("corpus", "kb")):
            raise TypeError(f"expected (path, 'corpus'|'kb', format), got {item!r}"[:200])
        files.append((Path(item[0]), item[1], str(item[2])))
    return files


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def import_file(project: Path, path: Path, kind: str, fmt: str) -> dict:
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
    return {
        "returncode": returncode,
        **error,
        "hung": returncode is None,
        "unchanged": unchanged,
        "clear": returncode == 2 and error["names_file"] and not error["traceback"] and not error["sql"],
    }


def bad_input_trials(
    workload: Workload,
    *,
    limit: int | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    theirs, note = discovered_builders()
    builders = {
        **{f"own/{k}": v for k, v in OWN_BUILDERS.items()},
        **{f"badinput/{k}": v for k, v in theirs.items()},
    }
    rows = []
    with tempfile.TemporaryDirectory(prefix="curalink-bad-inputs-") as scratch:
        project = copy_project(workload.base, Path(scratch) / "project")
        files: list[tuple[str, Path, str, str]] = []
        for name, builder in builders.items():
            folder = Path(scratch) / "files" / name.replace("/", "-")
            folder.mkdir(parents=True)
            try:
                files += [(name, *built) for built in built_files(builder, folder)]
            except Exception as exc:  # noqa: BLE001 - reported, not fatal
                rows.append({"builder": name, "skipped": f"{type(exc).__name__}: {exc}"[:300]})
        files = files[:limit]
        for number, (name, path, kind, fmt) in enumerate(files):
            cancel.raise_if_cancelled()
            progress(number, len(files), f"bad input: {path.name}")
            rows.append(
                {
                    "builder": name,
                    "file": path.name,
                    "kind": kind,
                    "format": fmt,
                    **import_file(project, path, kind, fmt),
                }
            )
    progress(len(files), len(files), "bad inputs: done")
    tried = [r for r in rows if "skipped" not in r]
    return {
        "found": note,
        "files": len(tried),
        "skipped_builders": len(rows) - len(tried),
        "clear_errors": sum(r["clear"] for r in tried),
        "accepted": sum(r["returncode"] == 0 for r in tried),
        "tracebacks": sum(r["traceback"] for r in tried),
        "hung": sum(r["hung"] for r in tried),
        "store_changed": sum(not r["unchanged"] for r in tried),
        "rows": rows,
    }
