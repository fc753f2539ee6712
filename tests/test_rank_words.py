"""The ranker's word features (feature set 2), checked against outcomes worked out by hand from the
names, not against the code's own helpers."""

from __future__ import annotations

import math
import os

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from core.documents import Candidate  # noqa: E402
from core.kb.concept import Concept  # noqa: E402
from core.kb.knowledge_base import KnowledgeBase  # noqa: E402
from core.rank.features import FEATURE_NAMES, FEATURE_SET_VERSION  # noqa: E402
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
