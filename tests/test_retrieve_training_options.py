"""ResCNN training options (device choice, hard negatives) and saved candidate files, on a real MEDIC slice."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import torch

from core.errors import InputError
from core.kb.knowledge_base import KnowledgeBase
from core.kb.medic import read_medic
from core.retrieve.candidate_file import CandidateFileRetriever, save_candidates
from core.retrieve.rescnn import RescnnConfig, build_model, load_tokenizer
from core.retrieve.tfidf import TfidfRetriever
from core.retrieve.train import TrainOptions, _mine_hard_negatives, train_rescnn

TINY = dict(hidden=64, filters=32, depth=2)


@pytest.fixture(scope="module")
def medic_kb(vocab_dir: Path) -> KnowledgeBase:
    """60 real MEDIC concepts with at least two names."""
    kept = [c for c in read_medic(vocab_dir / "medic_06Jul2012.txt") if len(c.names) >= 2][:60]
    return KnowledgeBase(kept)


def test_hard_negatives_are_wrong_concepts_ranked_by_the_model(medic_kb: KnowledgeBase) -> None:
    torch.manual_seed(0)
    model = build_model(RescnnConfig(**TINY))
    tokenizer = load_tokenizer(model.config.base_model)
    anchors = [(c.names[-1], c.concept_id) for c in list(medic_kb)[:20]]
    hard = _mine_hard_negatives(model, tokenizer, medic_kb, anchors, top_k=5, threads=1)
    assert set(hard) == {f"{t}\x00{c}" for t, c in anchors}
    for text, concept_id in anchors:
        wrong = hard[f"{text}\x00{concept_id}"]
        # up to 5: the 4 x 5 names fetched may cover fewer concepts when one concept has many names
        assert 1 <= len(wrong) <= 5 and len(set(wrong)) == len(wrong)
        assert concept_id not in wrong and all(w in medic_kb.concepts for w in wrong)


def test_training_with_hard_negatives_records_them(medic_kb: KnowledgeBase, tmp_path: Path) -> None:
    pairs = [(c.names[-1], c.concept_id) for c in list(medic_kb)[:30]]
    options = TrainOptions(batch_size=32, hard_negative_every=1, max_hard_negatives=3, device="cpu")
    result = train_rescnn(medic_kb, pairs, RescnnConfig(**TINY), tmp_path / "v1", epochs=2, options=options)
    assert result.steps > 0
    metrics = json.loads((tmp_path / "v1" / "metrics.json").read_text())
    assert metrics["device"] == "cpu" and metrics["options"]["hard_negative_every"] == 1


def test_device_choice_is_checked(medic_kb: KnowledgeBase, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown device"):
        train_rescnn(
            medic_kb, [], RescnnConfig(**TINY), tmp_path / "a", epochs=1, options=TrainOptions(device="tpu")
        )
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="sees no GPU"):
            train_rescnn(
                medic_kb,
                [],
                RescnnConfig(**TINY),
                tmp_path / "b",
                epochs=1,
                options=TrainOptions(device="cuda"),
            )
    # "auto" falls back to the CPU here and trains
    result = train_rescnn(
        medic_kb, [], RescnnConfig(**TINY), tmp_path / "c", epochs=1, options=TrainOptions(batch_size=32)
    )
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert result.metrics["device"] == expected and not (tmp_path / "c" / "model.onnx").exists()


def test_saved_candidates_serve_the_same_lists(medic_kb: KnowledgeBase, tmp_path: Path) -> None:
    retriever = TfidfRetriever()
    retriever.index(medic_kb)
    rng = random.Random(4)
    mentions = [rng.choice(c.names) for c in list(medic_kb)[:15]] + ["no such disease at all"]
    path = save_candidates(tmp_path / "cands.json", retriever, medic_kb, mentions + mentions[:3], k=8)
    served = CandidateFileRetriever(path)
    served.index(medic_kb)
    assert served.retrieve(mentions, 8) == retriever.retrieve(mentions, 8)
    assert served.retrieve(mentions[:2], 3) == [row[:3] for row in retriever.retrieve(mentions[:2], 8)]
    assert "tfidf" in served.name

    with pytest.raises(InputError, match="top 8 candidates; 9 were asked"):
        served.retrieve(mentions, 9)
    with pytest.raises(InputError, match="no candidates saved") as error:
        served.retrieve(["an unseen mention"], 5)
    assert "an unseen mention" in str(error.value)
    other = KnowledgeBase(list(medic_kb)[:10])
    with pytest.raises(InputError, match="another knowledge base"):
        served.index(other)


def test_a_file_that_is_not_a_candidate_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="not a readable candidate file"):
        CandidateFileRetriever(bad)
    bad.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(InputError, match="not a candidate file"):
        CandidateFileRetriever(bad)
