"""`bench reranker` never reports an untrained cross-encoder as a result (issue 13): by default each row
trains to its stated stopping rule (epochs, dev patience); a row the optional time cap cut short is marked
untrained and flagged in the table; `train_seconds=0` measures speed and leaves accuracy out; a given
trained model is measured as it is. Tiny real slices: NCBI-disease and MEDIC from the shared data, a
1-layer BERT."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

SLICE = {
    "packings": ["compact"],
    "candidate_counts": (4,),
    "speed_docs": 2,
    "dev_docs": 2,
    "train_docs_limit": 3,
}


@pytest.fixture(scope="module")
def tfidf(vocab_dir):
    """One TF-IDF retriever over MEDIC for every run (its index is made again per run, from the same KB)."""
    from core.retrieve.tfidf import TfidfRetriever

    return TfidfRetriever()


def _run(ncbi_dir, vocab_dir, tiny_bert, retriever, **options) -> dict:
    from bench.rerank import run_benchmark

    return run_benchmark(
        ncbi_dir,
        vocab_dir / "medic_06Jul2012.txt",
        base_model=tiny_bert,
        retriever=retriever,
        **SLICE,
        **options,
    )


def test_rows_train_to_the_stopping_rule_and_a_cut_row_is_no_result(ncbi_dir, vocab_dir, tiny_bert, tfidf):
    from bench.rerank import render_markdown

    trained = _run(ncbi_dir, vocab_dir, tiny_bert, tfidf, max_epochs=1)
    row = trained["rows"][0]
    # patience (3 dev evaluations) cannot end a 1-epoch run: the epoch bound did, after a full pass
    assert row["trained"] is True and row["stopped_by"] == "max_epochs"
    assert row["train_epochs"] > 0.9 and row["train_steps"] > 0
    assert "at most 1 epochs" in trained["stopping_rule"] and "cut" not in trained["stopping_rule"]
    assert "†" not in render_markdown(trained)

    cut = _run(ncbi_dir, vocab_dir, tiny_bert, tfidf, max_epochs=50, train_seconds=1e-6)
    row = cut["rows"][0]
    assert row["trained"] is False and row["stopped_by"] == "max_seconds" and row["train_epochs"] < 1
    table = render_markdown(cut)
    assert f"| {row['acc@1']} † |" in table and "not a trained result" in table

    speed = _run(ncbi_dir, vocab_dir, tiny_bert, tfidf, train_seconds=0)
    assert "acc@1" not in speed["rows"][0] and speed["rows"][0]["mentions_per_s"] > 0
    assert "accuracy not measured" in speed["stopping_rule"]


def test_a_given_model_is_measured_as_it_is(ncbi_dir, vocab_dir, tiny_bert, tfidf, tmp_path):
    from core.rerank.cross_encoder import CrossEncoder

    model = tmp_path / "ce"
    CrossEncoder.from_base(tiny_bert, packing="sentence", max_length=128).save(model)
    result = _run(ncbi_dir, vocab_dir, tiny_bert, tfidf, model=model)
    row = result["rows"][0]
    assert row["packing"] == "sentence"  # the model's own level, not the ones asked
    assert row["stopped_by"] == "loaded ce" and "train_steps" not in row and "acc@1" in row
    assert result["model"] == str(model) and "measured as it is" in result["stopping_rule"]
