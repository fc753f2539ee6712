"""Desk start-up order (issue 23): the KB search index is built once the models are ready, not while the
window first paints and the linking process loads (its Python work in a thread of the desk doubled the
first paint's event-loop stall and took CPU from the load). The first Ctrl+F still finds it built."""

from __future__ import annotations

from app.gui import kb_search
from app.gui.workers import MODELS_LOADING

CEILING_MS = 600_000
"""How long a wait for an event may take before the test gives up: a hang, never a slow machine."""


def test_the_search_index_is_built_after_the_models_are_ready(qtbot, demo_project, app_settings, monkeypatch):
    from app.gui.main_window import MainWindow

    real = kb_search.warm_search_index
    labels: list[str] = []

    def recording(project):
        labels.append(window.device_label.text())  # what the status bar said when the build started
        return real(project)

    monkeypatch.setattr(kb_search, "warm_search_index", recording)
    window = MainWindow(demo_project, app_settings, background=True)
    qtbot.addWidget(window)
    assert labels == []  # not during start-up
    with qtbot.waitSignal(window.service.linkerReady, timeout=CEILING_MS) as ready:
        window.show()  # the window's own slot was connected first: it has run when this returns
    assert labels == [ready.args[0]] and labels[0] != MODELS_LOADING
    # the index is the one a search uses: built from the stored names, found again without a rebuild
    qtbot.waitUntil(lambda: getattr(demo_project, "_name_index", None) is not None, timeout=CEILING_MS)
    assert demo_project.name_index() is demo_project._name_index[1]
    window.service.reset()
    with qtbot.waitSignal(window.service.linkerReady, timeout=CEILING_MS):
        window.service.preload()
    assert len(labels) == 1  # a reload does not build it again
