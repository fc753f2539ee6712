"""`bench quality`'s table assembly on a real slice (3 NCBI-disease test abstracts against MEDIC), checked
against an independent computation: exact dictionary lookup and brute-force TF-IDF cosines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from bench.quality import QualityInputs, plot_bulk_accept, quality_table
from core.formats.pubtator import read
from core.kb.knowledge_base import KnowledgeBase
from core.kb.medic import read_medic
from core.retrieve.exact import ExactMatchRetriever
from core.retrieve.query_plan import plan_document
from core.retrieve.tfidf import TfidfRetriever
from core.text.normalize import normalize_name


@pytest.fixture(scope="module")
def slice_inputs(vocab_dir: Path, ncbi_dir: Path) -> QualityInputs:
    kb = KnowledgeBase(read_medic(vocab_dir / "medic_06Jul2012.txt"))
    train = list(read(ncbi_dir / "NCBItrainset_corpus.txt"))
    test = []  # the first abstracts whose linked mentions are not composite-split (a plan of one query)
    for document in read(ncbi_dir / "NCBItestset_corpus.txt"):
        plans = [p for m, p in zip(document.mentions, plan_document(document)) if m.concept_ids]
        if plans and not any(p.is_split for p in plans):
            test.append(document)
        if len(test) == 3:
            break
    return QualityInputs(kb, train, test)


@pytest.fixture(scope="module")
def table(slice_inputs: QualityInputs) -> dict:
    retrievers = {"exact": ExactMatchRetriever(), "tfidf": TfidfRetriever()}
    return quality_table(slice_inputs, retrievers, rescnn=None, with_ranker=False)


def _names(inputs: QualityInputs, setting: str) -> list[tuple[str, str]]:
    """(name, concept) in index order: MEDIC's names, then (with train strings) each new training string."""
    kb = inputs.kb
    names = [(e.name, e.concept_id) for e in kb.names]
    if setting == "medic":
        return names
    owned = {(normalize_name(n), c) for n, c in names}
    for document in inputs.train_documents:
        for mention, plan in zip(document.mentions, plan_document(document)):
            if len(mention.concept_ids) != 1 or mention.is_composite:
                continue
            concept = kb.resolve(mention.concept_ids[0])
            if concept is not None and (normalize_name(plan.query), concept) not in owned:
                owned.add((normalize_name(plan.query), concept))
                names.append((plan.query, concept))
    return names


def _gold_mentions(inputs: QualityInputs):
    kb = inputs.kb
    for document in inputs.test_documents:
        for mention, plan in zip(document.mentions, plan_document(document)):
            if mention.concept_ids:
                yield plan.query, {i for c in mention.concept_ids for i in kb.ids_of(c)}


def _exact_expected(inputs: QualityInputs, setting: str) -> dict:
    by_key: dict[str, list[str]] = {}
    for name, concept in _names(inputs, setting):
        found = by_key.setdefault(normalize_name(name), [])
        if concept not in found:
            found.append(concept)
    hits = {1: 0, 5: 0, 20: 0}
    total = 0
    for query, gold in _gold_mentions(inputs):
        total += 1
        listed = by_key.get(normalize_name(query), [])
        for k in hits:
            hits[k] += any(inputs.kb.ids_of(c) & gold for c in listed[:k])
    return {"acc@1": hits[1], "acc@5": hits[5], "recall@20": hits[20], "mentions": total}


@pytest.mark.parametrize("setting", ["medic", "medic+traindev"])
def test_exact_row_matches_a_plain_dictionary_lookup(table: dict, slice_inputs: QualityInputs, setting):
    expected = _exact_expected(slice_inputs, setting)
    row = table["rows"]["exact"][setting]
    assert row["mentions"] == expected["mentions"] > 10
    for key in ("acc@1", "acc@5", "recall@20"):
        assert row[key] == round(100 * expected[key] / expected["mentions"], 2), key
    assert row["train_s"] is None and row["mentions_per_s"] > 0


def test_train_strings_help_exact_match_on_this_slice(table: dict) -> None:
    rows = table["rows"]["exact"]
    assert rows["medic+traindev"]["recall@20"] >= rows["medic"]["recall@20"]


@pytest.mark.parametrize("setting", ["medic", "medic+traindev"])
def test_tfidf_row_lies_within_brute_force_cosine_ranks(table: dict, slice_inputs: QualityInputs, setting):
    """Per mention, the gold concept's rank by best-name cosine, ties counted for (best) and against (worst)."""
    names = _names(slice_inputs, setting)
    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 3), sublinear_tf=True)
    matrix = vectorizer.fit_transform([normalize_name(n) for n, _ in names])
    concepts = sorted({c for _, c in names})
    column = {c: i for i, c in enumerate(concepts)}
    owner = np.array([column[c] for _, c in names])
    best_hits = {1: 0, 20: 0}
    worst_hits = {1: 0, 20: 0}
    total = 0
    for query, gold in _gold_mentions(slice_inputs):
        total += 1
        cosine = (matrix @ vectorizer.transform([normalize_name(query)]).T).toarray().ravel()
        per_concept = np.zeros(len(concepts))
        np.maximum.at(per_concept, owner, cosine)
        right = np.array([bool(slice_inputs.kb.ids_of(c) & gold) for c in concepts])
        top = per_concept[right].max() if right.any() and per_concept[right].max() > 0 else None
        for k in best_hits:
            if top is None:
                continue
            best_hits[k] += int((per_concept[~right] > top).sum()) + 1 <= k
            worst_hits[k] += int((per_concept >= top).sum()) <= k
    row = table["rows"]["tfidf"][setting]
    assert row["mentions"] == total
    for k, key in ((1, "acc@1"), (20, "recall@20")):
        low, high = 100 * worst_hits[k] / total, 100 * best_hits[k] / total
        assert low - 0.01 <= row[key] <= high + 0.01, (key, low, row[key], high)


def test_rows_without_a_rescnn_leave_out_union_ranker_and_calibration(table: dict) -> None:
    assert set(table["rows"]) == {"exact", "tfidf"}
    assert table["calibration"] == {} and table["ranker"] == {}


def test_bulk_accept_plot_is_a_png(tmp_path: Path) -> None:
    curve = [{"threshold": t, "coverage": 100 - 40 * t, "precision": 80 + 19 * t} for t in (0.0, 0.5, 1.0)]
    figures = {"medic": {"curve": curve, "bulk_accept": curve[1:2]}}
    path = plot_bulk_accept(figures, tmp_path / "docs" / "curve.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
