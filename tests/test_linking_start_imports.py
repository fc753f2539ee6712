"""The linking process starts on every desk start: what it imports is start-up time (issue 23). Applying
a saved ranker or reading its features never needs scikit-learn (1-2 s to import, with scipy and pandas);
only fitting one does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _imported(statement: str, modules: tuple[str, ...]) -> list[str]:
    probe = f"import sys\n{statement}\nprint(' '.join(m for m in {modules!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1].split() if out.stdout.strip() else []


def test_the_linking_process_imports_no_scikit_learn():
    statement = (
        "import core.jobs.linking.linker_process, core.jobs.linking.suggestions, core.project_models, core.rank.stage\n"
        "from core.jobs.linking.linker_process import _serve"
    )
    assert _imported(statement, ("sklearn", "scipy", "pandas")) == []


def test_loading_a_projects_linker_without_a_reranker_imports_no_transformers(demo_template, tmp_path):
    """transformers (about a second to import) only for the retriever's tokenizer was issue 23's largest
    share of the encoder's load: the `tokenizers` library builds the same WordPiece without it."""
    import shutil

    copy = tmp_path / "demo"
    shutil.copytree(demo_template, copy, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    statement = (
        "from core.store import Project\nfrom core.project_models import load_linker\n"
        f"project = Project.open({str(copy)!r})\nlinker = load_linker(project, use_reranker=False)\n"
        "assert linker.retriever is not None\nproject.close()"
    )
    assert _imported(statement, ("transformers",)) == []
