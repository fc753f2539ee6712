"""app/gui has no import cycle, counting the imports made inside functions (a deferred import hides a
cycle from Python, not from the design): read from the source, not from what happens to be loaded."""

from __future__ import annotations

import ast
from pathlib import Path

GUI = Path(__file__).resolve().parents[2] / "app" / "gui"


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module name -> the modules of the same package it imports, anywhere in its source."""
    prefix = "app.gui"
    names = {f"{prefix}.{path.stem}" for path in package.glob("*.py") if path.stem != "__init__"}
    graph: dict[str, set[str]] = {}
    for path in package.glob("*.py"):
        if path.stem == "__init__":
            continue
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
                found |= {f"{node.module}.{alias.name}" for alias in node.names}
        graph[f"{prefix}.{path.stem}"] = (found & names) - {f"{prefix}.{path.stem}"}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_imports_inside_functions():
    graph = import_graph(GUI)
    assert "app.gui.main_window" in graph["app.gui.launch"]  # imported inside `main()`
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_app_gui_has_no_import_cycle():
    assert cycles(import_graph(GUI)) == []


def test_the_window_inherits_only_qmainwindow():
    from PySide6.QtWidgets import QMainWindow

    from app.gui.main_window import MainWindow

    assert MainWindow.__bases__ == (QMainWindow,)
