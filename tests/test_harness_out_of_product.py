"""The harness stays out of the product (issue 22 item 4): benchmarks, synthetic-data builders, the fault
harness and the fuzz targets live in the top-level package bench/, which core/ and app/ never import,
the packaged app leaves out, and `curalink bench` loads only when asked for.

Computed from the source with `ast` (imports inside functions count too), not from a list of files.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PRODUCT = ("core", "app")

HARNESS_NAME = re.compile(
    r"^(bench|benchmarks?|faults|fuzz|synthetic|screenshot)$"  # a whole package or module by that name
    r"|^(bench|fuzz|synthetic|hostile|bad_inputs?)_"  # bench_retrieval, fuzz_targets, synthetic_umls, ...
    r"|_(bench|benchmarks?|fuzz)$"  # desk_bench, index_bench
)
"""A path component (folder, or module without .py) that names a harness module."""

THE_ENTRY = ("app/cli/__init__.py", "_run_bench", "bench.cli")
"""The one import of bench/ the product may hold: `curalink bench`'s handler, inside a function."""


def product_modules() -> list[Path]:
    return sorted(path for top in PRODUCT for path in (REPO / top).rglob("*.py"))


def harness_names(paths: list[Path], root: Path = REPO) -> list[str]:
    found = []
    for path in paths:
        parts = path.relative_to(root).with_suffix("").parts
        if any(HARNESS_NAME.search(part) for part in parts):
            found.append(path.relative_to(root).as_posix())
    return found


def _absolute(node: ast.ImportFrom, module: Path) -> str:
    """The module an ImportFrom names, relative imports resolved against `module`'s package."""
    if node.level == 0:
        return node.module or ""
    package = list(module.parts)
    package = package[: len(package) - node.level]
    return ".".join(package + ([node.module] if node.module else []))


def bench_imports(paths: list[Path], root: Path = REPO) -> list[tuple[str, str, str]]:
    """(file, outermost enclosing function or "<module>", module) for every import of bench/, however
    nested."""
    found = []
    for path in paths:
        module = path.relative_to(root).with_suffix("")
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        scopes: dict[ast.AST, str] = {}
        for node in ast.walk(tree):  # breadth first: outer functions before the ones inside them
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for inner in ast.walk(node):
                    if inner is not node:
                        scopes.setdefault(inner, node.name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, module)
                modules = [base] + [f"{base}.{alias.name}".lstrip(".") for alias in node.names]
            elif (  # importlib.import_module("bench...") / __import__("bench...")
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", "__import__")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                modules = [node.args[0].value]
            else:
                continue
            hits = [m for m in modules if m == "bench" or m.startswith("bench.")]
            if hits:
                found.append((path.relative_to(root).as_posix(), scopes.get(node, "<module>"), hits[0]))
    return found


def test_no_benchmark_fault_fuzz_or_synthetic_module_in_core_or_app():
    paths = product_modules()
    assert len(paths) > 100, "the walk found too few modules: wrong root?"
    assert harness_names(paths) == []


def test_core_and_app_import_bench_only_from_the_bench_command():
    found = bench_imports(product_modules())
    assert found == [THE_ENTRY]  # core never; app/cli only inside the handler (not at module level)


def test_the_rules_catch_what_they_are_for(tmp_path: Path):
    """The checks themselves, on sources written here: a name, a nested import, a relative import."""
    assert harness_names([REPO / "core/evaluate/bench_x.py", REPO / "app/faults/crash.py"]) == [
        "core/evaluate/bench_x.py",
        "app/faults/crash.py",
    ]
    assert harness_names([REPO / "core/store/write_faults.py", REPO / "app/gui/smoke.py"]) == []
    source = tmp_path / "core" / "probe.py"
    source.parent.mkdir()
    source.write_text(
        "import json\n"
        "def f():\n    if True:\n        from bench.synthetic import umls\n"
        "def g():\n    import importlib\n    importlib.import_module('bench.faults')\n"
        "import bench.gui.desk as desk\n"
        "from . import benchmarks\n",  # core.benchmarks: not bench/
        encoding="utf-8",
    )
    assert bench_imports([source], tmp_path) == [
        ("core/probe.py", "<module>", "bench.gui.desk"),
        ("core/probe.py", "f", "bench.synthetic"),
        ("core/probe.py", "g", "bench.faults"),
    ]


def test_the_harness_is_installed_from_a_clone_and_left_out_of_the_package():
    found = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    assert "bench" in found["include"] and "bench.*" in found["include"]
    spec = ast.parse((REPO / "packaging" / "curalink.spec").read_text())
    excludes = [
        keyword.value
        for node in ast.walk(spec)
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Analysis"
        for keyword in node.keywords
        if keyword.arg == "excludes"
    ]
    assert len(excludes) == 1 and "bench" in ast.literal_eval(excludes[0])


def test_bench_without_the_harness_says_so_in_one_line():
    """As in the packaged app: bench/ cannot be imported, so `curalink bench ...` is a one-line error."""
    code = (
        "import sys; sys.modules['bench'] = None\n"  # what an install without bench/ answers
        "from app.cli import main; raise SystemExit(main(['bench', '--help']))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert lines[0].startswith("error: `curalink bench` needs the benchmark harness (the bench/ package)")


def test_bench_help_lists_the_benchmarks_and_the_product_never_loads_them():
    code = (
        "import sys\n"
        "from app.cli import build_parser\n"
        "build_parser().parse_known_args(['stats'])\n"
        "import app.gui.launch, core.pipeline, core.batch.worker\n"
        "print(sorted(m for m in sys.modules if m == 'bench' or m.startswith('bench.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    shown = subprocess.run(
        [sys.executable, "-m", "app.cli", "bench", "--help"], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("usage: curalink bench")
    for benchmark in ("faults", "fuzz", "bad-inputs", "desk", "batch", "retriever", "quality"):
        assert re.search(rf"^\s+{re.escape(benchmark)}\b", shown.stdout, re.M), benchmark
