"""Importing the rerank package, or its protocol, does not load torch (core/rerank/__init__.py is a plain
package face): checked in a fresh interpreter, where nothing else has imported torch yet."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _loads_torch(statement: str) -> bool:
    probe = f"import sys\n{statement}\nprint('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1] == "True"


def test_the_rerank_package_and_its_protocol_do_not_load_torch():
    assert not _loads_torch("import core.rerank")
    assert not _loads_torch("from core.rerank.base import Reranker")
    assert not _loads_torch("from core.rank.base import Ranker")
    assert not _loads_torch("import core.pipeline")


def test_the_probe_sees_torch_when_it_is_loaded():
    """The same probe answers True for the model module, so a False above is not a blind spot."""
    assert _loads_torch("import core.rerank.cross_encoder")
