"""Desk start-up order (issue 23): the KB search index is built once the models are loaded and the link
service is idle (the first suggestions shown), not while the window first paints and the linking process
loads: its Python work in a thread of the desk doubled the first paint's event-loop stall and took CPU
from the load. A search still finds it built."""

from __future__ import annotations

CEILING_MS = 600_000
"""How long a wait for an event may take before the test gives up: a hang, never a slow machine."""


def test_the_search_index_is_built_once_the_models_are_loaded_and_idle(
    qtbot, demo_project, app_settings, monkeypatch
):
    from app.gui.main_window import MainWindow

    real = demo_project.kb.name_index
    seen: list[tuple[bool, bool]] = []  # (models loaded, link service busy) at each build

    def recording(**options):
        if window is None:  # still in the window's constructor
            seen.append((False, True))
        else:
            seen.append((window.service.models_loaded and not window.service._loading, window.service.busy()))
        return real(**options)

    window = None
    monkeypatch.setattr(demo_project.kb, "name_index", recording)
    window = MainWindow(demo_project, app_settings, background=True)
    qtbot.addWidget(window)
    window.show()
    linking = window.links.prefetch(force=[window.queue.model.entries[0].doc_id])  # a job after the load
    assert linking is not None
    qtbot.waitUntil(lambda: bool(seen), timeout=CEILING_MS)
    assert seen == [(True, False)]
    assert linking.done.is_set()
    # the index is the one a search uses: built from the stored names, found again without a rebuild
    qtbot.waitUntil(lambda: getattr(demo_project.kb, "_name_index", None) is not None, timeout=CEILING_MS)
    assert real() is demo_project.kb._name_index[1]


def test_a_window_without_background_work_leaves_the_search_index_to_the_first_search(
    qtbot, demo_project, app_settings, monkeypatch
):
    """As before the change: `background=False` (benchmarks, tests) builds nothing on its own, so a later
    window on the same project does not find a build from an earlier one running through its start."""
    from app.gui.main_window import MainWindow

    builds: list[int] = []
    real = demo_project.kb.name_index
    monkeypatch.setattr(demo_project.kb, "name_index", lambda **options: builds.append(1) or real(**options))
    window = MainWindow(demo_project, app_settings, background=False)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.service.linkerReady, timeout=CEILING_MS):
        loading = window.service.preload()
    qtbot.waitUntil(loading.done.is_set, timeout=CEILING_MS)
    assert not window.links._search_warmed  # no deferred build is waiting either
    assert builds == []
