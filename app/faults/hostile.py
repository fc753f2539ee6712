"""Hostile project variants: a project someone else made, opened with `curalink link` and with the desk,
with "y" waiting on stdin (the answer transformers' "run the custom code? [y/N]" prompt would take).
Counted: code executed (must be 0), detected by a canary file the variant's code would create.

Variants come from two places: the builders below, and every builder `core.evaluate.hostile_projects`
offers (the "safety" work), found at run time. A builder turns a copy of the base project into a hostile
one. Protocol: `build(project: Path, canary: Path) -> str | None` (the returned text describes the
variant); parameters are matched by name (`canary`/`marker`/`sentinel`/`witness` get the canary path,
`project`/`root`/`folder`/`path` the project), and a module may list builders in `BUILDERS` (name ->
callable) or name them `build_*`. Any new file in the canary's folder counts as code executed.
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

from app.faults.workload import Workload, copy_project
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


def discovered_builders(
    module_name: str = "core.evaluate.hostile_projects",
) -> tuple[dict[str, Callable], str]:
    """Builders another module offers (none when it is not there); and a note on what was found."""
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError:
        return {}, f"{module_name}: not present"
    found: dict[str, Callable] = {}
    for attribute in ("BUILDERS", "VARIANTS", "HOSTILE_PROJECTS"):
        listed = getattr(module, attribute, None)
        if isinstance(listed, dict):
            found.update({str(k): v for k, v in listed.items() if callable(v)})
    for name, value in vars(module).items():
        if name.startswith("build_") and callable(value) and getattr(value, "__module__", "") == module_name:
            found.setdefault(name.removeprefix("build_").replace("_", "-"), value)
    return found, f"{module_name}: {len(found)} builder(s)"


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
    said = next((line for line in stdout.splitlines() if line.startswith(("opened ", "linked "))), "")
    said = said.removeprefix("opened ")
    return {
        "returncode": returncode,
        "executed": any(canary_dir.iterdir()),
        "message": (errors[0] if errors else said or (lines[-1] if lines else ""))[:300],
        "traceback": "Traceback (most recent call last)" in stderr,
    }


def hostile_trials(
    workload: Workload,
    *,
    limit: int | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    theirs, note = discovered_builders()
    builders = {
        **{f"own/{k}": v for k, v in OWN_BUILDERS.items()},
        **{f"safety/{k}": v for k, v in theirs.items()},
    }
    items = list(builders.items())[:limit]
    rows = []
    for number, (name, builder) in enumerate(items):
        cancel.raise_if_cancelled()
        progress(number, len(items), f"hostile project: {name}")
        with tempfile.TemporaryDirectory(prefix="curalink-hostile-") as scratch:
            project = copy_project(workload.base, Path(scratch) / "project")
            canary_dir = Path(scratch) / "canary"
            canary_dir.mkdir()
            row: dict = {"variant": name}
            try:
                row["what"] = call_builder(builder, project, canary_dir / "executed")
            except Exception as exc:  # noqa: BLE001 - a builder we cannot call is reported, not fatal
                row.update(what=f"builder failed: {type(exc).__name__}: {exc}"[:300], skipped=True)
                rows.append(row)
                continue
            cli = [sys.executable, "-m", "app.cli", "-p", str(project), "link", "--device", "cpu"]
            row["link"] = _probe([*cli, "--documents", "90000001"], canary_dir)
            for leftover in canary_dir.iterdir():
                leftover.unlink()
            row["desk"] = _probe([sys.executable, "-m", "app.faults.desk", "open", str(project)], canary_dir)
            rows.append(row)
    progress(len(items), len(items), "hostile projects: done")
    tried = [r for r in rows if not r.get("skipped")]
    return {
        "found": note,
        "variants": len(tried),
        "skipped": len(rows) - len(tried),
        "probes": 2 * len(tried),
        "code_executed": sum(r["link"]["executed"] + r["desk"]["executed"] for r in tried),
        "tracebacks": sum(r["link"]["traceback"] + r["desk"]["traceback"] for r in tried),
        "rows": rows,
    }
