"""`bench quality`'s cross-corpus rows and calibration rule on a fixed small cross-corpus set: real slices
of NCBI-disease and BioRED (diseases) against a MEDIC slice, TF-IDF as the retriever, rankers fitted on
each slice. Every figure is checked against one computed independently: the desk's own ranking path
(`RankingStage.rank`), correctness by the KB's ids, ECE by a separate binning, the rule by hand, and the
bulk-accept promise (issue 25: the held-out precision's one-sided 95 % lower bound, the dialog starting
where it reaches 98 %) by scipy's Wilson interval over the held-out top-1 counted by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.quality_cross import (
    BIORED_TRAINDEV,
    ECE_TARGET,
    PROMISE_SLACK,
    Corpus,
    biored_split,
    choose_calibration,
    cross_corpus_table,
    halves,
    of_types,
    promise,
)
from core.errors import ModelError
from core.formats.pubtator import read
from core.jobs.models.ranker import DEFAULT_CANDIDATES, examples
from core.kb.knowledge_base import KnowledgeBase
from core.kb.medic import read_medic
from core.pipeline import Linker
from core.rank.calibration import apply_calibration, check_calibration, fit_calibration
from core.rank.model import CALIBRATION_METHOD, fit_ranker
from core.rank.stage import RankingStage, annotation_prior
from core.retrieve.tfidf import TfidfRetriever

NCBI_DOCS = 40
BIORED_DOCS = 50


@pytest.fixture(scope="module")
def fixed_set(shared_data: Path, vocab_dir: Path, ncbi_dir: Path):
    biored = shared_data / BIORED_TRAINDEV
    if not biored.is_file():
        pytest.skip(f"{biored} not found")
    ncbi_train = of_types(list(read(ncbi_dir / "NCBItrainset_corpus.txt"))[:NCBI_DOCS])
    ncbi_dev = of_types(list(read(ncbi_dir / "NCBIdevelopset_corpus.txt"))[:20])
    dev_a, dev_b = halves(ncbi_dev)
    train, dev = biored_split(list(read(biored))[: BIORED_DOCS * 5 // 4])
    bio_train, bio_dev = of_types(train, ("Disease",)), of_types(dev, ("Disease",))
    medic = list(read_medic(vocab_dir / "medic_06Jul2012.txt"))
    whole = KnowledgeBase(medic)
    gold = {
        i
        for docs in (ncbi_train, ncbi_dev, bio_train, bio_dev)
        for d in docs
        for m in d.mentions
        for c in m.concept_ids
        for i in whole.ids_of(c)
    }
    # the slices' gold concepts and every 8th other MEDIC concept as distractors
    kb = KnowledgeBase(c for n, c in enumerate(medic) if c.concept_id in gold or n % 8 == 0)
    retriever = TfidfRetriever()
    retriever.index(kb)
    linker = Linker(retriever, candidates=DEFAULT_CANDIDATES)
    corpora = [
        Corpus(  # as bench quality does: dev half A trains the ranker, unseen by the retriever (TF-IDF learns none)
            "NCBI slice",
            ncbi_train + dev_a,
            {"NCBI dev half B": (dev_b, False, False), "BioRED slice": (bio_train + bio_dev, True, False)},
            frozenset(d.doc_id for d in dev_a),
        ),
        Corpus(
            "BioRED train slice",
            bio_train,
            {"BioRED dev slice": (bio_dev, False, False), "NCBI dev slice": (ncbi_dev, True, False)},
        ),
    ]
    table = cross_corpus_table(kb, linker, corpora, methods=("isotonic", "platt", "beta"))
    return kb, linker, corpora, table


def _ece(probability: np.ndarray, right: np.ndarray) -> float:
    """10 equal-width bins, the last closed: sum of |accuracy - confidence| weighted by the bin's share."""
    which = np.clip(np.digitize(probability, np.linspace(0.1, 0.9, 9)), 0, 9)
    counts = np.bincount(which, minlength=10)
    hits = np.bincount(which, weights=right.astype(float), minlength=10)
    confidence = np.bincount(which, weights=probability, minlength=10)
    filled = counts > 0
    return float(np.sum(np.abs(hits[filled] - confidence[filled])) / len(probability))


def _wilson_low(right: int, accepted: int) -> float:
    """scipy's Wilson interval: its two-sided 90 % interval's low end is the one-sided 95 % bound."""
    from scipy.stats import binomtest

    return 100 * binomtest(right, accepted).proportion_ci(confidence_level=0.90, method="wilson").low


def _held_out_top1_by_hand(rows, model, unseen) -> tuple[np.ndarray, np.ndarray]:
    """Per training mention, refitted apart from fit_ranker: 3 document folds (scikit-learn's GroupKFold),
    each scored by a logistic model fitted without it and calibrated by an isotonic table fitted on the other
    folds' scores; the top candidate's probability and whether it is right; only the unseen documents'
    mentions when they are 100 or more."""
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    x = (rows.rows - np.asarray(model.mean)) / np.asarray(model.scale)
    raw, fold = np.zeros(len(x)), np.zeros(len(x), dtype=int)
    for number, (train, held) in enumerate(GroupKFold(n_splits=3).split(x, rows.labels, rows.groups)):
        fitted = LogisticRegression(C=1.0, max_iter=1000, random_state=13).fit(x[train], rows.labels[train])
        raw[held], fold[held] = fitted.decision_function(x[held]), number
    probability = np.zeros(len(x))
    for number in range(3):
        out = fold != number
        iso = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(raw[out], rows.labels[out])
        probability[~out] = np.interp(raw[~out], iso.X_thresholds_, iso.y_thresholds_)
    tops, rights, kept = [], [], []
    for mention in np.unique(rows.mention_of_row):
        at = np.flatnonzero(rows.mention_of_row == mention)
        best = at[np.argmax(raw[at])]
        tops.append(probability[best])
        rights.append(bool(rows.labels[best]))
        kept.append(unseen is None or bool(unseen[best]))
    kept = np.array(kept)
    if kept.sum() < 100:
        kept[:] = True
    return np.array(tops)[kept], np.array(rights)[kept]


def _expected_promise(probability: np.ndarray, right: np.ndarray) -> tuple[float, float]:
    """The smallest threshold (0.01 steps) whose Wilson bound reaches 98 % and that bound; none: 0.90."""
    for step in range(101):
        accepted = probability >= step / 100
        if accepted.any() and _wilson_low(int(right[accepted].sum()), int(accepted.sum())) >= 98.0:
            return step / 100, _wilson_low(int(right[accepted].sum()), int(accepted.sum()))
    accepted = probability >= 0.90
    return 0.90, _wilson_low(int(right[accepted].sum()), int(accepted.sum()))


def _desk_top1(model, kb, linker, train, documents):
    """Per linked mention: the top suggestion's probability (None: no suggestion) and whether it is
    right, through the stage the desk runs; and whether the gold is among the 20 listed."""
    stage = RankingStage(model, kb, annotation_prior(train))
    ranked = stage.rank(linker.plan(documents), linker.retrieve(documents), DEFAULT_CANDIDATES)
    out = []
    for document, per_document in zip(documents, ranked, strict=True):
        for mention, listed in zip(document.mentions, per_document, strict=True):
            gold = {i for c in mention.concept_ids for i in kb.ids_of(c)}
            hits = [bool(kb.ids_of(c.concept_id) & gold) for c in listed]
            top = listed[0].reranker_score if listed else None
            out.append((top, bool(hits and hits[0]), any(hits)))
    return out


def test_cross_corpus_figures_match_the_desks_ranking_and_an_independent_ece(fixed_set):
    kb, linker, corpora, table = fixed_set
    for method, sets in table["comparison"].items():
        for corpus in corpora:
            stage = RankingStage(None, kb, annotation_prior(corpus.train))
            rows = examples(
                stage,
                linker,
                corpus.train,
                linker.retrieve(corpus.train),
                use_cross_encoder=False,
                union=8,
            )
            unseen = corpus.unseen_rows(rows)
            model = fit_ranker(
                rows.rows,
                rows.labels,
                rows.groups,
                mentions=rows.mention_of_row,
                unseen=unseen,
                calibration_method=method,
            )
            model.tfidf_union = 8
            if method == "isotonic":  # the promise, by hand from the held-out top-1 (auto is isotonic here)
                expected = _expected_promise(*_held_out_top1_by_hand(rows, model, unseen))
                assert promise(model)[0] == expected[0]
                assert promise(model)[1] == pytest.approx(expected[1], abs=0.005)
            for label, (documents, cross, _) in corpus.measured_on.items():
                figures = sets[f"{corpus.name} → {label}"]
                desk = _desk_top1(model, kb, linker, corpus.train, documents)
                scored = [(p, right) for p, right, _ in desk if p is not None]
                probability = np.array([p for p, _ in scored])
                right = np.array([r for _, r in scored])
                assert figures["cross"] is cross
                assert figures["mentions"] == len(desk)
                assert figures["acc@1"] == pytest.approx(
                    100 * sum(r for _, r, _ in desk) / len(desk), abs=0.01
                )
                assert figures["recall@20"] == pytest.approx(
                    100 * sum(a for *_, a in desk) / len(desk), abs=0.01
                )
                assert figures["top1_ece"] == pytest.approx(_ece(probability, right), abs=1e-4)
                threshold, promised = promise(model)
                accepted = probability >= threshold
                assert figures["threshold"] == threshold
                assert figures["promised_precision"] == promised
                if accepted.any():
                    realised = 100 * right[accepted].mean()
                    assert figures["realised_precision"] == pytest.approx(realised, abs=0.01)
                    if promised is not None:
                        holds = bool(realised >= promised - PROMISE_SLACK - 0.005)
                        assert figures["promise_holds"] is holds


def test_the_rule_picks_by_worst_cross_corpus_ece_among_those_calibrated_in_corpus(fixed_set):
    *_, table = fixed_set
    comparison = table["comparison"]
    # by hand, from the independently checked figures above
    worst = {
        m: (
            max(f["top1_ece"] for f in sets.values() if not f["cross"]),
            max(f["top1_ece"] for f in sets.values() if f["cross"]),
            max(f["top1_ece"] for f in sets.values()),
        )
        for m, sets in comparison.items()
    }
    qualified = sorted((w[1], m) for m, w in worst.items() if w[0] <= ECE_TARGET)
    expected = qualified[0][1] if qualified else sorted((w[2], m) for m, w in worst.items())[0][1]
    assert table["chosen"] == expected
    assert table["in_force"] == CALIBRATION_METHOD
    assert set(comparison) == {CALIBRATION_METHOD, "isotonic", "platt", "beta"}
    # the rows carry the calibration in force, the same figures as its comparison entry
    for row in table["rows"]:
        entry = comparison[CALIBRATION_METHOD][f"{row['trained_on']} → {row['measured_on']}"]
        assert row["top1_ece"] == entry["top1_ece"] and row["acc@1"] == entry["acc@1"]


def test_choose_calibration_on_hand_made_figures():
    def sets(inside: float, across: float) -> dict:
        return {"a": {"top1_ece": inside, "cross": False}, "b": {"top1_ece": across, "cross": True}}

    # platt travels best but is off in-corpus; of the two calibrated in-corpus, beta travels better
    assert (
        choose_calibration(
            {"isotonic": sets(0.02, 0.06), "platt": sets(0.05, 0.01), "beta": sets(0.03, 0.04)}
        )
        == "beta"
    )
    # none within the in-corpus target: the lowest worst ECE over every set
    assert choose_calibration({"isotonic": sets(0.05, 0.06), "platt": sets(0.04, 0.07)}) == "isotonic"


def test_beta_calibration_recovers_a_known_curve():
    # outcomes drawn from p = sigmoid(a ln s - b ln(1 - s) + c), s = sigmoid(score), with a, b, c known
    rng = np.random.default_rng(5)
    scores = rng.normal(0.0, 2.5, 40_000)
    s = 1.0 / (1.0 + np.exp(-scores))
    truth = 1.0 / (1.0 + np.exp(-(0.6 * np.log(s) - 1.4 * np.log(1 - s) - 0.3)))
    labels = (rng.random(len(scores)) < truth).astype(int)
    table = fit_calibration(scores, labels, "beta")
    assert table["method"] == "beta"
    assert [table["a"], table["b"], table["c"]] == pytest.approx([0.6, 1.4, -0.3], abs=0.1)
    grid = np.linspace(-6, 6, 13)
    sg = 1.0 / (1.0 + np.exp(-grid))
    expected = 1.0 / (1.0 + np.exp(-(0.6 * np.log(sg) - 1.4 * np.log(1 - sg) - 0.3)))
    assert apply_calibration(table, grid) == pytest.approx(expected, abs=0.03)
    with pytest.raises(ValueError, match="unknown calibration method 'temperature'"):
        fit_calibration(scores, labels, "temperature")
    assert check_calibration(table) is table  # what RankerModel.load checks a stored table with
    with pytest.raises(ModelError, match="beta calibration: a, b and c must be finite"):
        check_calibration({"method": "beta", "a": 0.6, "b": float("nan"), "c": 0.0})
    with pytest.raises(ModelError, match="beta calibration table is incomplete"):
        check_calibration({"method": "beta", "a": 0.6, "b": 1.4})


def test_sections_without_their_data_say_which_file_is_missing(tmp_path: Path):
    from bench.quality_cross import MEDIC, MESH_TABLE, run_cross_corpus, run_per_type

    assert run_per_type(tmp_path, tmp_path / "no-model") == {
        "skipped": f"{tmp_path / BIORED_TRAINDEV} not found"
    }
    (tmp_path / BIORED_TRAINDEV).parent.mkdir(parents=True)
    (tmp_path / BIORED_TRAINDEV).write_text("1|t|x\n\n", encoding="utf-8")
    assert run_per_type(tmp_path, tmp_path / "no-model") == {"skipped": f"{tmp_path / MESH_TABLE} not found"}
    assert run_cross_corpus(tmp_path, tmp_path / "no-model") == {"skipped": f"{tmp_path / MEDIC} not found"}
