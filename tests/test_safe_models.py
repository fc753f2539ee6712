"""Model folders are checked before anything is built from them (issue 11, items 1 and 6)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
import torch

from core.errors import ModelError, ProjectError
from core.locations import packaged_model_folder
from core.retrieve.rescnn import RescnnConfig
from core.store import Project

BASE = packaged_model_folder()


@pytest.fixture
def base_copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(BASE, tmp_path / "base"))


def _set(folder: Path, **values) -> None:
    config = json.loads((folder / "config.json").read_text())
    config.update(values)
    (folder / "config.json").write_text(json.dumps(config))


def test_a_config_that_does_not_match_its_weights_is_refused(base_copy: Path) -> None:
    """Before, 48 layers were built (random ones for the 42 the weights lack) and only a load report
    mentioned it: a model silently not the one saved, and a crafted size allocates what it says."""
    from core.rerank.cross_encoder import CrossEncoder

    _set(base_copy, num_hidden_layers=48)
    with pytest.raises(ModelError, match=r"config\.json: num_hidden_layers \[48\] does not match"):
        CrossEncoder.from_base(base_copy)
    _set(base_copy, num_hidden_layers=6, vocab_size=3_000_000)
    with pytest.raises(ModelError, match="vocab_size x hidden_size"):
        CrossEncoder.from_base(base_copy)


def test_a_truncated_safetensors_file_is_a_one_line_error(base_copy: Path) -> None:
    from core.rerank.cross_encoder import CrossEncoder

    weights = base_copy / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100_000])
    with pytest.raises(ModelError, match=r"model\.safetensors: tensor .* lies outside the file"):
        CrossEncoder.from_base(base_copy)
    weights.write_bytes(b"\x00" * 4)
    with pytest.raises(ModelError, match=r"model\.safetensors: not a safetensors file"):
        CrossEncoder.from_base(base_copy)


@pytest.mark.parametrize("key", ["depth", "hidden", "filters", "max_length"])
def test_a_crafted_rescnn_size_is_refused_before_the_model_is_built(key: str) -> None:
    with pytest.raises(ModelError, match=f"{key} must be a whole number"):
        RescnnConfig.from_json({key: 10**7}, "models/retriever/v1/config.json")


def test_a_failed_upgrade_changes_nothing(demo_template: Path, tmp_path: Path) -> None:
    """alembic_version says 0001 over tables that are partly 0002. Before, pysqlite had committed the
    upgrade's first two steps (columns added) and the traceback showed SQL; now the schema check refuses
    the database before the upgrade starts, and nothing is changed."""
    project = Path(shutil.copytree(demo_template, tmp_path / "p"))
    with sqlite3.connect(project / "curalink.db") as db:
        db.execute("UPDATE alembic_version SET version_num = '0001'")
        db.execute("ALTER TABLE passages DROP COLUMN infons_json")
        db.execute("ALTER TABLE relations DROP COLUMN infons_json")
        db.execute("ALTER TABLE relations DROP COLUMN roles_json")
    with sqlite3.connect(project / "curalink.db") as db:
        before = db.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
    # Tables partly of 0002 under a 0001 stamp are not what 0001's migrations make: refused before the
    # upgrade starts (core/store/schema_check.py), which changes nothing either.
    with pytest.raises(ProjectError, match="ix_concept_ids_concept_id.*nothing was changed"):
        Project.open(project)
    with sqlite3.connect(project / "curalink.db") as db:
        assert db.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall() == before
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [("0001",)]


def test_a_half_precision_base_folder_trains_in_float32(base_copy: Path) -> None:
    """Base folders are often saved in float16 or bfloat16; transformers 5 loads a checkpoint in the dtype
    it was saved in, and fine-tuning half-precision weights with AdamW loses most updates. The reranker,
    the span model and the bi-encoder load in float32 whatever the folder holds."""
    from safetensors.torch import load_file, save_file

    from core.rerank.cross_encoder import CrossEncoder
    from core.safe_models import load_bert_encoder

    weights = base_copy / "model.safetensors"
    full = load_file(weights)
    save_file({name: tensor.half() for name, tensor in full.items()}, weights, metadata={"format": "pt"})
    encoder = CrossEncoder.from_base(base_copy)
    assert {p.dtype for p in encoder.model.parameters()} == {torch.float32}
    loaded = load_bert_encoder(base_copy)
    assert {p.dtype for p in loaded.parameters()} == {torch.float32}
    name, tensor = next((n, t) for n, t in full.items() if n.endswith("word_embeddings.weight"))
    assert torch.allclose(loaded.embeddings.word_embeddings.weight, tensor.half().float())
