"""The cross-encoder, its training loop, device and engine choice, on a tiny BERT built in the test."""

from __future__ import annotations

import copy
import random

import pytest
import torch
from transformers import AutoTokenizer, BertForTokenClassification, PreTrainedTokenizerFast

from core.documents import Candidate, Document, Mention, document_from_title_abstract
from core.errors import ModelError
from core.kb.concept import Concept
from core.kb.knowledge_base import KnowledgeBase
from core.rerank import device as device_module
from core.rerank.cross_encoder import CrossEncoder, RerankerConfig, default_base_model, preload_architecture
from core.rerank.device import choose_engine, select_device
from core.rerank.packing import PACKING_LEVELS
from core.rerank.reranker import CrossEncoderReranker
from core.rerank.training import TrainingConfig, rerank_accuracy, train

DISEASES = ["fever", "cough", "asthma", "anemia", "ataxia", "cancer", "tumour", "leukemia"]
N_NEG = 1
TRAIN_DOCS = 24
EPOCHS = 8
LEARNING_RATE = 1e-3
COMPACT_LEARNING_RATE = 5e-4
OBJECTS = ["table", "river", "guitar", "window", "bicycle", "garden", "pencil", "ladder"]


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(default_base_model(), local_files_only=True)


@pytest.fixture(scope="module")
def tiny_base():
    """A one-layer cut of the packaged MiniLM (no download), word embeddings frozen, built once.

    Packed levels need "score the candidate right after this [MASK]"; a randomly initialised BERT
    takes hundreds of steps to learn that position link (measured: < 0.75 dev acc@1 after 170 steps),
    while one pretrained layer already attends to neighbours, so every level learns in a few dozen
    steps. Freezing the 30k x 384 word embeddings keeps each step cheap.
    """
    return _cut_of_minilm(layers=1)


@pytest.fixture(scope="module")
def two_layer_base():
    """Compact packing needs two hops (candidate -> its [MASK] -> the mention stated several candidates
    back): with one layer it hovered at 0.5-0.8 dev acc@1 after 8-14 epochs whatever the learning rate,
    and failed this test on another torch build; two layers reached 1.0 by epoch 2 (seed 42, lr 5e-4)."""
    return _cut_of_minilm(layers=2)


def _cut_of_minilm(layers: int):
    torch.manual_seed(0)
    model = BertForTokenClassification.from_pretrained(
        default_base_model(), num_labels=2, num_hidden_layers=layers, local_files_only=True
    )
    model.bert.embeddings.word_embeddings.requires_grad_(False)
    return model


def tiny_encoder(tokenizer, base, packing: str) -> CrossEncoder:
    return CrossEncoder(copy.deepcopy(base), tokenizer, RerankerConfig(packing=packing, max_length=96))


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase(
        Concept(f"D{i:06d}", "MESH", w.capitalize()) for i, w in enumerate(DISEASES + OBJECTS)
    )


def synthetic(
    kb: KnowledgeBase, n_docs: int, seed: int
) -> tuple[list[Document], list[list[list[Candidate]]]]:
    """Each mention is a disease word; its gold is that disease, the negative a household object."""
    rng = random.Random(seed)
    ids = {c.preferred_name.lower(): c.concept_id for c in kb}
    documents, candidates = [], []
    for d in range(n_docs):
        words = rng.sample(DISEASES, 2)
        doc = document_from_title_abstract(
            str(d), f"Study of {words[0]}.", f"Patients with {words[1]} were seen."
        )
        mentions = [
            Mention(doc.text.index(w), doc.text.index(w) + len(w), w, concept_id=ids[w]) for w in words
        ]
        doc = doc.with_mentions(mentions)
        per_doc = []
        for mention in doc.mentions:
            names = [mention.text] + rng.sample(OBJECTS, N_NEG)
            rng.shuffle(names)
            per_doc.append([Candidate(ids[n], n.capitalize()) for n in names])
        documents.append(doc)
        candidates.append(per_doc)
    return documents, candidates


@pytest.mark.parametrize("level", PACKING_LEVELS)
def test_tiny_bert_learns_synthetic_ranking(tokenizer, tiny_base, two_layer_base, kb, level):
    encoder = tiny_encoder(tokenizer, two_layer_base if level == "compact" else tiny_base, level)
    train_docs, train_cands = synthetic(kb, TRAIN_DOCS, seed=1)
    dev_docs, dev_cands = synthetic(kb, 8, seed=2)
    reranker = CrossEncoderReranker(encoder, device="cpu")
    before = rerank_accuracy(reranker, dev_docs, dev_cands, kb)
    result = train(
        encoder,
        train_docs,
        train_cands,
        dev_docs,
        dev_cands,
        kb,
        TrainingConfig(
            learning_rate=COMPACT_LEARNING_RATE if level == "compact" else LEARNING_RATE,
            max_epochs=EPOCHS,
            patience=EPOCHS,
            batch_tokens=128 if level == "pair" else 64,  # pair inputs are short: fewer, fuller steps
        ),
        device="cpu",
    )
    after = rerank_accuracy(reranker, dev_docs, dev_cands, kb)
    assert after > before and after >= 0.75, (level, before, after, result.history)
    assert result.best_dev_acc == pytest.approx(after)  # the best weights were restored
    assert result.examples_per_s > 0 and result.train_mentions >= 2 * TRAIN_DOCS and result.history


def test_rerank_sorts_and_passes_through(tokenizer, tiny_base, kb):
    encoder = tiny_encoder(tokenizer, tiny_base, "document")
    docs, cands = synthetic(kb, 3, seed=3)
    empty = Document("empty", ())
    lonely = document_from_title_abstract("x", "Fever.", "")
    lonely = lonely.with_mentions([Mention(0, 5, "Fever", concept_id="D000000")])
    ranked = CrossEncoderReranker(encoder, device="cpu").rerank(docs + [empty, lonely], cands + [[], [[]]])
    assert ranked[3] == [] and ranked[4] == [[]]
    for per_doc, original in zip(ranked[:3], cands):
        for got, given in zip(per_doc, original):
            assert sorted(c.concept_id for c in got) == sorted(c.concept_id for c in given)
            scores = [c.reranker_score for c in got]
            assert all(s is not None and 0.0 <= s <= 1.0 for s in scores)
            assert scores == sorted(scores, reverse=True)


def test_save_and_load_round_trip(tokenizer, tiny_base, kb, tmp_path):
    encoder = tiny_encoder(tokenizer, tiny_base, "compact")
    docs, cands = synthetic(kb, 2, seed=4)
    before = CrossEncoderReranker(encoder, device="cpu").rerank(docs, cands)
    folder = encoder.save(tmp_path / "models" / "reranker" / "v1", metrics={"acc@1": 0.5})
    names = {p.name for p in folder.iterdir()}
    assert {"config.json", "model.safetensors", "reranker.json"} <= names
    assert not any(n.endswith((".bin", ".pt", ".pkl")) for n in names)
    loaded = CrossEncoder.load(folder)
    assert loaded.config.packing == "compact" and loaded.config.metrics == {"acc@1": 0.5}
    after = CrossEncoderReranker(loaded, device="cpu").rerank(docs, cands)
    for a, b in zip(before, after):
        for x, y in zip(a, b):
            assert [c.concept_id for c in x] == [c.concept_id for c in y]
            assert [c.reranker_score for c in x] == pytest.approx([c.reranker_score for c in y], abs=1e-6)
    with pytest.raises(ModelError, match="reranker.json"):
        CrossEncoder.load(tmp_path)


def test_base_model_without_mask_token_is_a_model_error(tokenizer, tiny_base, tmp_path):
    """A folder's tokenizer is always loaded as BertTokenizer (Curalink's choice, never the folder's),
    which defines [MASK]; a tokenizer object without one is still refused before any packing."""
    encoder = tiny_encoder(tokenizer, tiny_base, "pair")
    no_mask = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer.backend_tokenizer,
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        pad_token="[PAD]",
    )
    with pytest.raises(ModelError, match=r"no \[MASK\] token"):
        CrossEncoder(encoder.model, no_mask, RerankerConfig(packing="pair"))
    with pytest.raises(ModelError, match="not a model folder"):
        CrossEncoder.from_base(tmp_path / "missing", packing="pair")


def test_device_falls_back_to_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert select_device("auto").device == "cpu"
    assert select_device("cuda").device == "cpu"
    assert select_device("auto").amp_dtype is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: "fake GPU")
    choice = select_device("auto")
    assert choice.device == "cuda" and choice.amp_dtype == torch.float16
    assert select_device("cpu").device == "cpu"


def test_cpu_engine_choice_is_measured(tokenizer, tiny_base, kb, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    encoder = tiny_encoder(tokenizer, tiny_base, "sentence")
    docs, cands = synthetic(kb, 6, seed=5)
    reranker = CrossEncoderReranker(encoder, device="auto")
    report = reranker.tune_engine(docs, cands)
    assert [r["engine"] for r in report] == list(device_module.CPU_ENGINES)
    onnx = next(r for r in report if r["engine"] == "onnx")
    assert onnx["accepted"] and onnx["max_score_change"] < 1e-4  # fp32 ONNX equals torch
    assert reranker.device_description.startswith("cpu")
    assert any(r["engine"] in reranker.device_description for r in report if r["accepted"])
    ranked = reranker.rerank(docs, cands)
    assert all(c.reranker_score is not None for per_doc in ranked for row in per_doc for c in row)
    engine, _ = choose_engine(encoder, [], select_device("cpu"))
    assert engine.name == "torch"


def test_preload_architecture_imports_the_model_class_without_weights(tmp_path):
    saved = CrossEncoder.from_base(packing="compact", max_length=64).save(tmp_path / "reranker")
    assert preload_architecture(saved).__name__ == "BertForTokenClassification"
    with pytest.raises(ModelError, match="not a model folder"):
        preload_architecture(tmp_path / "missing")
