"""The actions other modules put in the window's menus, as one typed value the window keeps (`menus`).

Each module installs its actions with a function that returns them (`install_fetch_pubmed`,
`install_curator`, `install_learnt`); none sets attributes on the window, so what the window holds is
read in one place (app/gui/main_window.py) and a test reaches an action as `window.menus.learnt.no_teach`.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QAction

from app.gui.curator_identity import CuratorActions
from app.gui.desk_learnt import LearntActions


@dataclass(frozen=True)
class MenuActions:
    """What the install functions returned, kept by the window as `menus`."""

    fetch_pubmed: QAction  # File ▸ Add PubMed abstracts by PMID… (app/gui/fetch_pubmed_dialog.py)
    curator: CuratorActions  # Curate ▸ Switch curator…, and the status bar's name
    learnt: LearntActions  # Alt+Enter, Decide without teaching, Learn from decisions
