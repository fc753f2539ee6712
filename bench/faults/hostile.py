"""Hostile project variants: a project someone else made, opened with `curalink` and with the desk, with
"y" waiting on stdin (the answer transformers' "run the custom code? [y/N]" prompt would take).
Counted: code executed (must be 0), files outside the project touched, and whether the answer was the
expected clear one.

Variants come from two places. The four builders below (protocol: `build(project, canary)`, on the base
project with both models in force; code that runs creates `canary`; probes: `link` of one document and
the desk loading its models). And every variant of `bench.faults.hostile_projects` (the "safety" work)
when it is there: `VARIANTS[name](project) -> HostileProject` on a copy of the plain demo project, each of
its commands run as `curalink -p COPY ...` with its `STDIN`, judged by its own `judge`; the desk then
opens the copy too, and its marker and outside files are checked again.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pickle
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.faults.workload import Workload, copy_project
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

PROBE_TIMEOUT_S = 240
CANARY_NAMES = ("canary", "marker", "sentinel", "witness", "proof")
PROJECT_NAMES = ("project", "root", "folder", "path", "directory", "dest", "target")

EVIL_MODULE = """
import pathlib
pathlib.Path({canary!r}).write_text("code from the project ran")
from transformers import BertConfig, BertForTokenClassification, BertTokenizerFast


class EvilConfig(BertConfig):
    model_type = "curalink-evil"


class EvilModel(BertForTokenClassification):
    config_class = EvilConfig


class EvilTokenizer(BertTokenizerFast):
    pass
"""


def _active_folder(project: Path, kind: str) -> Path:
    folders = sorted((project / "models" / kind).glob("v*"), key=lambda p: int(p.name[1:]))
    return folders[-1]


def _edit_json(path: Path, **changes) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def build_reranker_auto_map(project: Path, canary: Path) -> str:
    """The issue's variant: the reranker's config names its own model type and code (auto_map)."""
    folder = _active_folder(project, "reranker")
    (folder / "evil.py").write_text(EVIL_MODULE.format(canary=str(canary)), encoding="utf-8")
    _edit_json(
        folder / "config.json",
        model_type="curalink-evil",
        auto_map={"AutoConfig": "evil.EvilConfig", "AutoModelForTokenClassification": "evil.EvilModel"},
    )
    return "reranker config.json: model_type of its own + auto_map to evil.py"


def build_reranker_tokenizer_auto_map(project: Path, canary: Path) -> str:
    """The reranker's tokenizer config asks for a tokenizer class from the project's code."""
    folder = _active_folder(project, "reranker")
    (folder / "evil.py").write_text(EVIL_MODULE.format(canary=str(canary)), encoding="utf-8")
    _edit_json(folder / "tokenizer_config.json", auto_map={"AutoTokenizer": [None, "evil.EvilTokenizer"]})
    return "reranker tokenizer_config.json: auto_map to evil.py"


def build_retriever_base_auto_map(project: Path, canary: Path) -> str:
    """The retriever's base model is a folder inside the project whose tokenizer config has auto_map (its
    recorded hash updated to match, as a forger would)."""
    from core.locations import content_hash, packaged_model_folder

    base = project / "models" / "base-evil"
    shutil.copytree(packaged_model_folder(), base)
    (base / "evil.py").write_text(EVIL_MODULE.format(canary=str(canary)), encoding="utf-8")
    _edit_json(base / "tokenizer_config.json", auto_map={"AutoTokenizer": [None, "evil.EvilTokenizer"]})
    _edit_json(base / "config.json", auto_map={"AutoConfig": "evil.EvilConfig"})
    retriever = _active_folder(project, "retriever")
    _edit_json(retriever / "config.json", base_model="../../base-evil", base_model_hash=content_hash(base))
    return "retriever base model inside the project with auto_map (hash forged)"


class _Pickled:
    def __init__(self, canary: Path):
        self.canary = str(canary)

    def __reduce__(self):
        return (Path.write_text, (Path(self.canary), "pickle from the project ran"))


def build_reranker_pickle(project: Path, canary: Path) -> str:
    """The reranker's weights as a pickle (pytorch_model.bin) whose loading would run code."""
    folder = _active_folder(project, "reranker")
    (folder / "model.safetensors").unlink()
    with (folder / "pytorch_model.bin").open("wb") as out:
        pickle.dump({"weights": _Pickled(canary)}, out)
    return "reranker weights as a pickle (pytorch_model.bin) instead of safetensors"


OWN_BUILDERS: dict[str, Callable] = {
    "reranker-auto-map": build_reranker_auto_map,
    "reranker-tokenizer-auto-map": build_reranker_tokenizer_auto_map,
    "retriever-base-auto-map": build_retriever_base_auto_map,
    "reranker-pickle-weights": build_reranker_pickle,
}


def call_builder(builder: Callable, project: Path, canary: Path) -> str:
    """Call a builder with the project and canary paths matched to its parameters by name."""
    parameters = list(inspect.signature(builder).parameters.values())
    args, kwargs = [], {}
    for parameter in parameters:
        name = parameter.name.lower()
        value = (
            canary
            if any(word in name for word in CANARY_NAMES)
            else project
            if any(word in name for word in PROJECT_NAMES) or not args and not kwargs
            else None
        )
        if value is None:
            if parameter.default is inspect.Parameter.empty:
                raise TypeError(f"cannot fill parameter {parameter.name!r}")
            continue
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            kwargs[parameter.name] = value
        else:
            args.append(value)
    described = builder(*args, **kwargs)
    return described if isinstance(described, str) else (builder.__doc__ or "").strip().split("\n")[0]


def _probe(argv: list[str], canary_dir: Path) -> dict:
    try:
        done = subprocess.run(
            argv, input="y\ny\ny\n", capture_output=True, text=True, timeout=PROBE_TIMEOUT_S
        )
        returncode, stderr, stdout = done.returncode, done.stderr, done.stdout
    except subprocess.TimeoutExpired as exc:
        returncode, stderr, stdout = None, f"hung for {PROBE_TIMEOUT_S} s", str(exc.stdout or "")
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    said = next((line for line in stdout.splitlines() if "opened " in line or "linked " in line), "")
    said = said[said.find("opened ") + 7 :] if "opened " in said else said[said.find("linked ") :]
    return {
        "returncode": returncode,
        "executed": any(canary_dir.iterdir()),
        "message": (errors[0] if errors else said or (lines[-1] if lines else ""))[:300],
        "traceback": "Traceback (most recent call last)" in stderr,
    }


def _run_theirs(module, name: str, build: Callable, demo: Path, scratch: Path) -> dict:
    """One variant of bench.faults.hostile_projects, judged by its own rules, then opened by the desk."""
    project = copy_project(demo, scratch / "project")
    row: dict = {"variant": f"safety/{name}", "what": (build.__doc__ or name).strip().split("\n")[0]}
    variant = build(project)
    before = module.snapshot(variant.outside)
    codes, output = [], ""
    for command in variant.commands:
        argv = [sys.executable, "-m", "app.cli", "-p", str(project), *command]
        try:
            done = subprocess.run(
                argv, input=module.STDIN, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S
            )
            codes.append(done.returncode)
            output += done.stdout + done.stderr
        except subprocess.TimeoutExpired:
            codes.append(-1)
            output += f"hung for {PROBE_TIMEOUT_S} s\n"
    verdict = module.judge(variant, project, codes, output, before)
    row["link"] = {
        "returncode": codes[-1] if codes else None,
        "executed": bool(verdict.code_executed),
        "outside_touched": bool(verdict.outside_touched),
        "expected": bool(verdict.usable),
        "message": str(verdict.detail)[:300],
        "traceback": "Traceback (most recent call last)" in output,
    }
    desk_argv = [sys.executable, "-m", "bench.faults.desk", "open", str(project)]
    try:
        done = subprocess.run(
            desk_argv, input=module.STDIN, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S
        )
        said = next((line[7:] for line in done.stdout.splitlines() if line.startswith("opened ")), "")
        returncode, traceback = done.returncode, "Traceback (most recent call last)" in done.stderr
    except subprocess.TimeoutExpired:
        said, returncode, traceback = f"hung for {PROBE_TIMEOUT_S} s", None, False
    row["desk"] = {
        "returncode": returncode,
        "executed": variant.marker is not None and variant.marker.exists(),
        "outside_touched": module.snapshot(variant.outside) != before,
        "message": said[:300],
        "traceback": traceback,
    }
    return row


def hostile_trials(
    workload: Workload,
    *,
    limit: int | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    module, note = _safety_module()
    items: list[tuple[str, Callable, bool]] = [(f"own/{k}", v, False) for k, v in OWN_BUILDERS.items()]
    if module is not None:
        items += [(name, build, True) for name, build in module.VARIANTS.items()]
    items = items[:limit]
    rows = []
    for number, (name, builder, theirs) in enumerate(items):
        cancel.raise_if_cancelled()
        progress(number, len(items), f"hostile project: {name}")
        with tempfile.TemporaryDirectory(prefix="curalink-hostile-") as scratch:
            try:
                if theirs:
                    rows.append(_run_theirs(module, name, builder, workload.demo, Path(scratch)))
                else:
                    rows.append(_run_own(name, builder, workload.base, Path(scratch)))
            except Exception as exc:  # noqa: BLE001 - a builder we cannot use is reported, not fatal
                rows.append(
                    {
                        "variant": name,
                        "what": f"builder failed: {type(exc).__name__}: {exc}"[:300],
                        "skipped": True,
                    }
                )
    progress(len(items), len(items), "hostile projects: done")
    tried = [r for r in rows if not r.get("skipped")]
    probes = [r[side] for r in tried for side in ("link", "desk")]
    return {
        "found": note,
        "variants": len(tried),
        "skipped": len(rows) - len(tried),
        "probes": len(probes),
        "code_executed": sum(p["executed"] for p in probes),
        "outside_touched": sum(p.get("outside_touched", False) for p in probes),
        "expected_answers": sum(
            r["link"].get("expected", False) for r in tried if r["variant"].startswith("safety/")
        ),
        "judged_by_safety": sum(r["variant"].startswith("safety/") for r in tried),
        "tracebacks": sum(p["traceback"] for p in probes),
        "rows": rows,
    }


def _run_own(name: str, builder: Callable, base: Path, scratch: Path) -> dict:
    project = copy_project(base, scratch / "project")
    canary_dir = scratch / "canary"
    canary_dir.mkdir()
    row: dict = {"variant": name, "what": call_builder(builder, project, canary_dir / "executed")}
    cli = [sys.executable, "-m", "app.cli", "-p", str(project), "link", "--device", "cpu"]
    row["link"] = _probe([*cli, "--documents", "90000001"], canary_dir)
    for leftover in canary_dir.iterdir():
        leftover.unlink()
    row["desk"] = _probe([sys.executable, "-m", "bench.faults.desk", "open", str(project)], canary_dir)
    return row


def _safety_module(name: str = "bench.faults.hostile_projects"):
    """The safety work's variants, when present and of the expected shape; and a note saying so."""
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError:
        return None, f"{name}: not present"
    needed = ("VARIANTS", "judge", "snapshot", "STDIN")
    missing = [attribute for attribute in needed if not hasattr(module, attribute)]
    if missing:
        return None, f"{name}: present, but without {', '.join(missing)} (not used)"
    return module, f"{name}: {len(module.VARIANTS)} variants"
