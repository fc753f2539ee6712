"""Shared fixtures: where the benchmark data lives, and a clean skip when it does not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _shared_data_dir() -> Path:
    configured = os.environ.get("CURALINK_SHARED_DATA")
    return Path(configured) if configured else REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data (or $CURALINK_SHARED_DATA); tests that need it skip on a fresh clone."""
    path = _shared_data_dir()
    if not (path / "ncbi-disease").is_dir():
        pytest.skip(f"benchmark data not found at {path} (set CURALINK_SHARED_DATA)")
    return path


@pytest.fixture(scope="session")
def ncbi_dir(shared_data: Path) -> Path:
    return shared_data / "ncbi-disease"


@pytest.fixture(scope="session")
def vocab_dir(shared_data: Path) -> Path:
    return shared_data / "vocab"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES
