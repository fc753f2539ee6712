"""The room map of architecture.md, checked from the source: every `import` in core/ and app/ (at module
level and inside functions, relative imports resolved) is read with `ast`, each module is put in a room,
and the room graph must have no cycle among core's rooms, and app/ must reach the stages only through
core.jobs. The graph is computed here from the files, so a new import that breaks the map fails the test."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import networkx as nx

REPO = Path(__file__).resolve().parents[1]

# core's top-level modules are not a folder of their own: each is placed in a room explicitly.
# "base" is the foundation every room may use (data classes, errors, progress, files, paths).
CORE_TOP_LEVEL_ROOMS = {
    "core": "base",
    "core.documents": "base",
    "core.errors": "base",
    "core.progress": "base",
    "core.atomic_files": "base",
    "core.limits": "base",
    "core.locations": "base",
    "core.safe_models": "base",
    "core.child_process": "base",
    "core.housekeeping": "base",
    "core.link_summary": "base",
    "core.memory": "base",  # peak memory of this process (the batch worker reports it)
    "core.pipeline": "pipeline",
    # loads a project's models into a Linker: above the stages and learn, below evaluate and jobs
    "core.project_models": "models",
    # chooses a project's detector and builds its dictionary from the links its annotations teach
    "core.project_detector": "models",
    # the model kinds' registry and their loaders' dispatch: load_linker loads through it
    "core.model_kinds": "models",
}

# Benchmarks, synthetic data builders, the fault harness and fuzz targets are leaving core/ and app/
# for a bench/ package of their own, which may import everything: they are not part of the room map.
BENCH_PREFIXES = (
    "bench",
    "app.faults",
    "core.evaluate.bench_",
    "core.evaluate.synthetic_",
    "core.evaluate.hostile_projects",
    "core.evaluate.bad_input",
    "core.evaluate.fuzz_",
    "app.gui.bench_",
    "app.cli.bench_commands",
    "app.cli.desk_bench",
    "app.cli.index_bench",
    "app.gui.screenshot",
    "core.evaluate.desk_projects",  # builds the desk benchmark's projects; only app.cli.desk_bench uses it
)

# The stage-side rooms the front ends must not reach past core.jobs.
BEHIND_JOBS = {"retrieve", "rerank", "rank", "detect", "learn", "pipeline", "models", "batch"}


def _is_bench(module: str) -> bool:
    return any(
        module == p or module.startswith(p + ".") or (p.endswith("_") and module.startswith(p))
        for p in BENCH_PREFIXES
    )


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _source_modules() -> dict[str, Path]:
    modules = {}
    for top in ("core", "app"):
        for path in sorted((REPO / top).rglob("*.py")):
            name = _module_name(path)
            if not _is_bench(name):
                modules[name] = path
    return modules


def _imported(node: ast.AST, module: str, is_package: bool, known: set[str]) -> list[str]:
    """The project modules one import statement names (`from x import y` names x.y when that is a module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        base = package[: len(package) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    names = [target]
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        if sub in known:
            names.append(sub)
    return names


def room_of(module: str) -> str | None:
    """core.<folder>... -> the folder's room; core's top-level modules by the table; app.<folder> -> app.<folder>."""
    parts = module.split(".")
    if parts[0] == "core":
        if module in CORE_TOP_LEVEL_ROOMS:
            return CORE_TOP_LEVEL_ROOMS[module]
        if len(parts) >= 2 and (REPO / "core" / parts[1]).is_dir():
            return parts[1]
        raise AssertionError(f"{module}: a core top-level module with no room in CORE_TOP_LEVEL_ROOMS")
    if parts[0] == "app":
        return "app." + parts[1] if len(parts) >= 2 and (REPO / "app" / parts[1]).is_dir() else "app"
    return None


def import_sites() -> list[tuple[str, int, str, str, str]]:
    """(importing module, line, imported module, from room, to room) for every project import."""
    modules = _source_modules()
    known = set(modules)
    # modules that exist on disk but are outside the map (bench ones) still resolve `from x import y`
    known |= {_module_name(p) for top in ("core", "app") for p in (REPO / top).rglob("*.py")}
    sites = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            for target in _imported(node, module, is_package, known):
                if target.split(".")[0] not in ("core", "app") or _is_bench(target):
                    continue
                source_room, target_room = room_of(module), room_of(target)
                if source_room != target_room:
                    sites.append((module, node.lineno, target, source_room, target_room))
    return sites


def room_graph(sites) -> nx.DiGraph:
    graph = nx.DiGraph()
    edges = defaultdict(list)
    for module, line, target, source, dest in sites:
        edges[(source, dest)].append(f"{module}:{line} -> {target}")
    for (source, dest), where in edges.items():
        graph.add_edge(source, dest, where=where)
    return graph


def _core_rooms(graph: nx.DiGraph) -> nx.DiGraph:
    return graph.subgraph([room for room in graph if not room.startswith("app")]).copy()


def _describe_cycles(graph: nx.DiGraph) -> str:
    lines = []
    for component in nx.strongly_connected_components(graph):
        if len(component) < 2:
            continue
        cycle = nx.find_cycle(graph.subgraph(component))
        lines.append("cycle among " + ", ".join(sorted(component)) + ":")
        for source, dest in cycle:
            lines.append(f"  {source} -> {dest}: " + "; ".join(graph.edges[source, dest]["where"][:3]))
    return "\n".join(lines)


def test_the_map_covers_every_module():
    """Every core module is placed in a room (a new top-level module must be given one)."""
    for module in _source_modules():
        assert room_of(module) is not None, module


def test_the_reader_sees_imports_inside_functions_and_relative_ones(tmp_path):
    """The parser counts an import inside a function and resolves `from .x import y` (checked on a
    hand-written module, not on the project)."""
    source = (
        "from .base import Retriever\n\ndef f():\n    from core.learn import live\n    import core.jobs\n"
    )
    node_targets = []
    for node in ast.walk(ast.parse(source)):
        node_targets += _imported(node, "core.retrieve.exact", False, {"core.learn.live"})
    assert node_targets == ["core.retrieve.base", "core.learn", "core.learn.live", "core.jobs"]
    package_targets = []
    for node in ast.walk(ast.parse("from . import base\nfrom ..rank import stage\n")):
        package_targets += _imported(node, "core.rerank", True, {"core.rerank.base"})
    assert package_targets == ["core.rerank", "core.rerank.base", "core.rank"]


def test_no_cycle_among_core_rooms():
    graph = _core_rooms(room_graph(import_sites()))
    cyclic = [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not cyclic, _describe_cycles(graph)


STAGE_EXCEPTIONS: set[tuple[str, str]] = set()  # none left; a new one needs a reason here, and may only go


def test_stages_never_import_learn_jobs_pipeline_or_evaluate():
    found = {
        (module, target): line
        for module, line, target, source, dest in import_sites()
        if source in {"detect", "retrieve", "rerank", "rank"}
        and dest in {"learn", "jobs", "pipeline", "evaluate"}
    }
    bad = [
        f"{module}:{line} -> {target}"
        for (module, target), line in found.items()
        if (module, target) not in STAGE_EXCEPTIONS
    ]
    assert not bad, "\n".join(bad)
    gone = STAGE_EXCEPTIONS - set(found)
    assert not gone, f"no longer imported, remove from STAGE_EXCEPTIONS: {sorted(gone)}"


def test_stages_never_import_the_store():
    """Stages compute on what they are given; core.jobs (and the models room's loaders) read and write the
    store for them. An import of core.store anywhere in a stage module, inside a function too, fails."""
    bad = [
        f"{module}:{line} -> {target}"
        for module, line, target, source, dest in import_sites()
        if source in {"detect", "retrieve", "rerank", "rank"} and dest == "store"
    ]
    assert not bad, "stage modules importing the store:\n" + "\n".join(bad)


def test_app_reaches_the_stages_only_through_jobs():
    bad = [
        f"{module}:{line} -> {target}"
        for module, line, target, source, dest in import_sites()
        if source.startswith("app") and dest in BEHIND_JOBS
    ]
    assert not bad, f"{len(bad)} import sites in app/ reach past core.jobs:\n" + "\n".join(bad)


# The store's ORM rows and its sessions stay behind its services (issue 34 item 2).
STORE_ROWS = "core.store.schema"


def schema_imports(sites) -> list[str]:
    """The import sites, among (module, line, target, from room, to room), naming the store's ORM rows from
    outside the store."""
    return [
        f"{module}:{line} -> {target}"
        for module, line, target, source, _ in sites
        if source != "store" and (target == STORE_ROWS or target.startswith(STORE_ROWS + "."))
    ]


def _sites_of(source: str, module: str) -> list[tuple[str, int, str, str, str]]:
    known = {STORE_ROWS, "core.store", "core.store.project"}
    return [
        (module, node.lineno, target, room_of(module), room_of(target))
        for node in ast.walk(ast.parse(source))
        for target in _imported(node, module, False, known)
    ]


def test_the_schema_check_sees_every_way_of_naming_the_rows():
    """Checked on hand-written modules, not on the project: each spelling of an import of the rows from a
    jobs module is found, inside a function too; the store's own import and a service import are not."""
    spellings = [
        "from core.store.schema import MentionRow\n",
        "import core.store.schema\n",
        "import core.store.schema as rows\n",
        "from core.store import schema\n",
        "def f():\n    from core.store.schema import DocumentRow\n",
    ]
    for source in spellings:
        assert len(schema_imports(_sites_of(source, "core.jobs.curation.undo"))) == 1, source
    assert schema_imports(_sites_of("from core.store.schema import MentionRow\n", "core.store.kb_store")) == []
    assert schema_imports(_sites_of("from core.store.project import Project\n", "core.jobs.curation.undo")) == []


def test_no_module_outside_the_store_imports_its_rows():
    """Jobs, learning, models and the front ends go through the store's services (`project.documents`,
    `project.undo`, ...): an import of core.store.schema anywhere in core/ or app/ outside core/store
    fails, inside a function too."""
    bad = schema_imports(import_sites())
    assert not bad, "ORM rows imported outside core/store:\n" + "\n".join(bad)


def test_no_module_outside_the_store_opens_a_session():
    """`project.session()` hands out the database itself: only core/store opens one. (`transaction()`,
    which groups service calls into one commit, stays open to the operations.)"""
    bad = []
    for module, path in _source_modules().items():
        if module == "core.store" or module.startswith("core.store."):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "session":
                bad.append(f"{module}:{node.lineno}")
    assert not bad, "store sessions opened outside core/store:\n" + "\n".join(bad)
