"""The ranker's word features (feature set 2) and its LambdaMART scorer stored as JSON.

Feature values are checked against outcomes worked out by hand from the names, not against the code's
own helpers; the LambdaMART model must round-trip through its JSON file with identical scores."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from core.documents import Candidate  # noqa: E402
from core.errors import ModelError  # noqa: E402
from core.kb.concept import Concept  # noqa: E402
from core.kb.knowledge_base import KnowledgeBase  # noqa: E402
from core.rank.features import FEATURE_NAMES, FEATURE_SET_VERSION  # noqa: E402
from core.rank.model import RankerModel, fit_ranker  # noqa: E402
from core.rank.prior import AnnotationPrior  # noqa: E402
from core.rank.query import MentionQuery  # noqa: E402
from core.rank.stage import RankingStage  # noqa: E402
from core.rank.tokens import fold_word, word_form, word_match  # noqa: E402

# MeSH D060825 and D003072 as MEDIC 2012 names them; NCBI-disease test writes "cognitive impairment".
MILD = Concept("D060825", "MESH", "Mild Cognitive Impairment", ("Cognitive Impairment, Mild",))
COGNITION = Concept("D003072", "MESH", "Cognition Disorders", ("Disorder, Cognition", "Overinclusion"))
TUMOURS = Concept("D003110", "MESH", "Colonic Neoplasms", ("Colon Tumors", "Tumor of the Colon"))


def test_words_fold_plurals_and_british_spellings_but_not_latin_endings():
    assert [fold_word(w) for w in ("tumours", "anomalies", "leukaemia", "fibrosis", "status")] == [
        "tumor",
        "anomaly",
        "leukemia",
        "fibrosis",
        "status",
    ]


def test_head_word_of_phrases_and_inverted_names():
    assert word_form("deficiency of factor X").head == "deficiency"
    assert word_form("Lymphoma, B-Cell").head == "lymphoma"  # inverted: head before the comma
    assert word_form("B-cell non-Hodgkins lymphomas").head == "lymphoma"
    assert word_form("Tumor of the Colon").words == frozenset({"tumor", "colon"})


def test_word_match_against_hand_counts():
    mention = [word_form("cognitive impairment")]
    # {cognitive, impairment} vs {mild, cognitive, impairment}: 2 shared of 3, all mention words, 1 extra of 3
    mild = word_match(mention, [word_form(n) for n in MILD.names])
    assert (mild.jaccard, mild.coverage, mild.extra, mild.head_match) == pytest.approx((2 / 3, 1.0, 1 / 3, 1))
    # "cognition" is not "cognitive": no shared word, every name word extra, heads disorder/overinclusion
    other = word_match(mention, [word_form(n) for n in COGNITION.names])
    assert (other.jaccard, other.coverage, other.extra, other.head_match) == (0.0, 0.0, 1.0, False)


def test_stage_rows_carry_the_word_features(tmp_path):
    kb = KnowledgeBase([MILD, COGNITION, TUMOURS])
    stage = RankingStage(None, kb, AnnotationPrior())
    query = MentionQuery("1", "colonic tumours", ("colonic tumours",))
    found = [
        Candidate("D003110", "Colonic Neoplasms", "Colon Tumors", 0.8),
        Candidate("D003072", "x", "x", 0.3),
    ]
    ((merged, rows),) = stage.features([query], [found], use_cross_encoder=False, union=0)
    assert len(FEATURE_NAMES) == rows.shape[1] and FEATURE_SET_VERSION == 2
    column = {name: rows[:, i] for i, name in enumerate(FEATURE_NAMES)}
    # mention words {colonic, tumor}; best name "Colon Tumors" {colon, tumor}: 1 shared, union 3
    assert column["token_jaccard"][0] == pytest.approx(1 / 3)
    assert column["mention_token_coverage"][0] == pytest.approx(1 / 2)
    assert column["name_extra_tokens"][0] == pytest.approx(1 / 2)
    assert column["head_word_match"][0] == 1.0  # tumor is the head of "Colon Tumors"
    # distinct wordings: "Colon Tumors" and "Tumor of the Colon" are one ({colon, tumor}, head tumor)
    assert column["concept_log_name_count"][0] == pytest.approx(math.log1p(2))
    assert column["token_jaccard"][1] == 0.0 and column["head_word_match"][1] == 0.0
    # "Cognition Disorders" and "Disorder, Cognition" are one wording, "Overinclusion" another
    assert column["concept_log_name_count"][1] == pytest.approx(math.log1p(2))


def _synthetic(seed: int = 5):
    """60 documents x 3 mentions x 6 candidates; the right one has a higher score and shares words."""
    rng = np.random.default_rng(seed)
    rows, labels, groups, mentions = [], [], [], []
    width = len(FEATURE_NAMES)
    for mention in range(180):
        right = rng.integers(6)
        for candidate in range(6):
            row = rng.normal(size=width) * 0.3
            row[0] += 1.0 if candidate == right else 0.0
            row[FEATURE_NAMES.index("token_jaccard")] += 0.8 if candidate == right else 0.0
            rows.append(row)
            labels.append(int(candidate == right))
            groups.append(mention // 3)
            mentions.append(mention)
    return np.array(rows), np.array(labels), np.array(groups), np.array(mentions)


def test_lambdarank_ranker_round_trips_through_json_and_ranks(tmp_path):
    rows, labels, groups, mentions = _synthetic()
    model = fit_ranker(rows, labels, groups, mentions=mentions, method="lambdarank")
    model.save(tmp_path)
    stored = json.loads((tmp_path / "ranker.json").read_text())
    assert stored["method"] == "lambdarank" and stored["booster"].startswith("tree")
    loaded = RankerModel.load(tmp_path)
    np.testing.assert_array_equal(loaded.raw_scores(rows), model.raw_scores(rows))
    top = [int(np.argmax(loaded.raw_scores(rows[m * 6 : m * 6 + 6]))) for m in range(180)]
    assert np.mean([labels[m * 6 + t] for m, t in enumerate(top)]) > 0.9
    p = loaded.probabilities(rows)
    assert ((p >= 0) & (p <= 1)).all()
    assert p[labels == 1].mean() > p[labels == 0].mean() + 0.5
    (tmp_path / "ranker.json").write_text(json.dumps({**stored, "booster": "not trees"}))
    with pytest.raises(ModelError, match="damaged ranker file.*LightGBM"):
        RankerModel.load(tmp_path)


def test_lambdarank_needs_the_mention_of_each_row():
    rows, labels, groups, _ = _synthetic()
    with pytest.raises(ValueError, match="mention of each row"):
        fit_ranker(rows, labels, groups, method="lambdarank")
    logistic = fit_ranker(rows, labels, groups, method="logistic")
    assert logistic.method == "logistic" and logistic.booster == ""
