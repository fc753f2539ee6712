"""The ranker's feature groups on real MEDIC, CTD and NCBI-disease slices: specificity (head word, the
words a name adds or lacks), hierarchy (tree depth, ancestor relations), document coherence, the
mention's name variants as TF-IDF queries, and a ranker saved with the old feature set (still applied on its own columns)."""

from __future__ import annotations

import gzip
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from core.documents import Candidate  # noqa: E402
from core.errors import ModelError  # noqa: E402
from core.formats.pubtator import read  # noqa: E402
from core.kb.concept import Concept  # noqa: E402
from core.kb.ctd import read_ctd  # noqa: E402
from core.kb.knowledge_base import KnowledgeBase  # noqa: E402
from core.kb.medic import read_medic  # noqa: E402
from core.rank.coherence import COHERENCE_FEATURES, DocumentContext  # noqa: E402
from core.rank.features import FEATURE_NAMES, NameSimilarity  # noqa: E402
from core.rank.hierarchy import HIERARCHY_FEATURES, ConceptHierarchy, with_tree_numbers  # noqa: E402
from core.rank.query import MentionQuery  # noqa: E402
from core.rank.specificity import (  # noqa: E402
    SHARED_NAME_FEATURES,
    SPECIFICITY_FEATURES,
    head_word,
    name_words,
    specificity_rows,
)
from core.rank.stage import RankingStage, annotation_prior  # noqa: E402

DATA = Path(os.environ.get("CURALINK_SHARED_DATA", "/work/shared/data"))
MEDIC = DATA / "vocab" / "medic_06Jul2012.txt"
CTD = DATA / "vocab" / "CTD_diseases.tsv.gz"
NCBI_TRAIN = DATA / "ncbi-disease" / "NCBItrainset_corpus.txt"
needs_data = pytest.mark.skipif(
    not (MEDIC.is_file() and CTD.is_file() and NCBI_TRAIN.is_file()), reason="shared data not present"
)

COLORECTAL, HNPCC, NEOPLASMS, BREAST = "D015179", "D003123", "D009369", "D001943"


def _medic_slice(tmp_path: Path, ids: tuple[str, ...]) -> KnowledgeBase:
    """The MEDIC 2012 lines of these MeSH ids, read by the MEDIC loader."""
    lines = [
        line
        for line in MEDIC.read_text(encoding="utf-8").splitlines()
        if set(line.partition("||")[0].split("|")) & set(ids)
    ]
    path = tmp_path / "medic-slice.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return KnowledgeBase(read_medic(path))


def _ctd_slice(tmp_path: Path, ids: tuple[str, ...]) -> Path:
    """CTD's header and the rows of these MeSH ids."""
    wanted = {f"MESH:{i}" for i in ids}
    with gzip.open(CTD, "rt", encoding="utf-8") as source:
        lines = [line for line in source if line.startswith("#") or line.split("\t")[1] in wanted]
    path = tmp_path / "ctd-slice.tsv"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_head_word_of_known_phrases():
    assert head_word("cancer of the breast") == "cancer"
    assert head_word("hereditary nonpolyposis colorectal cancers") == "cancer"
    assert head_word("Deficiency of mitochondrial very-long-chain acyl-CoA dehydrogenase") == "deficiency"
    assert head_word("Ataxia-telangiectasia") == "telangiectasia"
    assert head_word("of") == ""


@needs_data
def test_specificity_of_colorectal_cancer_against_the_specific_and_the_general_concept(tmp_path):
    kb = _medic_slice(tmp_path, (COLORECTAL, HNPCC))
    general = next(c for c in kb if COLORECTAL in (c.concept_id, *c.alt_ids))
    specific = next(c for c in kb if HNPCC in (c.concept_id, *c.alt_ids))
    rows = specificity_rows(["colorectal cancer"], [name_words(general.names), name_words(specific.names)])
    column = {name: i for i, name in enumerate(SPECIFICITY_FEATURES)}
    # "Colorectal Cancer" is a name of D015179: same words, same head
    assert rows[0].tolist() == [1.0, 1.0, 0.0, 0.0]
    # D003123's closest names ("Hereditary Nonpolyposis Colorectal Cancer") share 2 of 4 words, add 2
    assert rows[1, column["head_word_match"]] == 1.0
    assert rows[1, column["name_word_jaccard"]] == pytest.approx(0.5)
    assert rows[1, column["name_words_added"]] == pytest.approx(math.log1p(2))
    assert rows[1, column["name_words_missing"]] == 0.0
    # the more specific mention against the general concept: its best name lacks two of the words
    back = specificity_rows(["hereditary nonpolyposis colorectal cancer"], [name_words(general.names)])
    assert back[0, column["name_words_missing"]] == pytest.approx(math.log1p(2))


@needs_data
def test_a_name_medic_gives_two_concepts(tmp_path):
    # MEDIC 2012: "MUCKLE-WELLS SYNDROME" is OMIM:191900's preferred name and a synonym of OMIM:607115
    kb = _medic_slice(tmp_path, ("191900", "607115", BREAST))
    stage = RankingStage(None, kb, annotation_prior([]), groups=("base", "shared_names"))
    found = [
        Candidate("OMIM:607115", "", "", 0.9),
        Candidate("OMIM:191900", "", "", 0.8),
        Candidate("OMIM:114480", "", "", 0.3),  # Breast Neoplasms: no name matches
    ]
    query = MentionQuery("1", "Muckle-Wells syndrome", ("Muckle-Wells syndrome",))
    ((merged, rows),) = stage.features([query], [found], use_cross_encoder=False, union=0)
    assert [c.concept_id for c in merged] == ["OMIM:607115", "OMIM:191900", "OMIM:114480"]
    shared = rows[:, -len(SHARED_NAME_FEATURES) :]
    assert shared[:, 0].tolist() == [0.0, 1.0, 0.0]  # whose preferred name it is
    # two candidates match: each matching one has one other, the third has two
    assert shared[:, 1].tolist() == pytest.approx([math.log(2), math.log(2), math.log(3)])


@needs_data
def test_tree_depth_and_ancestors_from_real_ctd_rows(tmp_path):
    hierarchy = ConceptHierarchy.from_concepts(
        read_ctd(_ctd_slice(tmp_path, (COLORECTAL, HNPCC, NEOPLASMS, BREAST)))
    )
    # D015179's shallowest tree numbers are C06.405.469.158.356 and C06.405.469.860.180: 5 levels;
    # D003123 has C04.700.250 (3 levels); Neoplasms is C04 (1)
    assert [hierarchy.depth(i) for i in (COLORECTAL, HNPCC, NEOPLASMS)] == [5, 3, 1]
    assert hierarchy.depth("D000000") == 0
    # C04.588.274.476.411.307 (colorectal) is above C04.588.274.476.411.307.190 (HNPCC)
    assert hierarchy.is_ancestor(COLORECTAL, HNPCC) and not hierarchy.is_ancestor(HNPCC, COLORECTAL)
    assert hierarchy.is_ancestor(NEOPLASMS, BREAST) and not hierarchy.is_ancestor(COLORECTAL, BREAST)
    rows = hierarchy.rows([HNPCC, COLORECTAL, BREAST, "D000000"])
    column = {name: i for i, name in enumerate(HIERARCHY_FEATURES)}
    assert rows[:, column["ancestor_of_other_top"]].tolist() == [0.0, 1.0, 0.0, 0.0]
    assert rows[:, column["descendant_of_other_top"]].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert rows[:, column["hierarchy_known"]].tolist() == [1.0, 1.0, 1.0, 0.0]
    # MEDIC 2012 (DNorm format) writes no tree numbers: every hierarchy feature is 0
    assert not ConceptHierarchy.from_concepts(_medic_slice(tmp_path, (COLORECTAL,))).rows([COLORECTAL]).any()


@needs_data
def test_medic_2012_takes_ctds_tree_and_the_stage_reads_it_from_the_kb(tmp_path):
    ctd = ConceptHierarchy.from_concepts(read_ctd(_ctd_slice(tmp_path, (COLORECTAL, HNPCC))))
    medic = list(_medic_slice(tmp_path, (COLORECTAL, HNPCC)))
    assert not any(c.tree_numbers for c in medic)  # the DNorm format has no tree
    kb = KnowledgeBase(with_tree_numbers(medic, ctd))
    hnpcc = next(c for c in kb if c.concept_id == HNPCC)
    assert "C04.700.250" in hnpcc.tree_numbers
    assert hnpcc.names == next(c for c in medic if c.concept_id == HNPCC).names  # names untouched
    stage = RankingStage(None, kb, annotation_prior([]), groups=("base", "hierarchy"))
    found = [Candidate(HNPCC, "", "", 0.9), Candidate(COLORECTAL, "", "", 0.8)]
    query = MentionQuery("1", "colorectal cancer", ("colorectal cancer",))
    ((_, rows),) = stage.features([query], [found], use_cross_encoder=False, union=0)
    tree = rows[:, -len(HIERARCHY_FEATURES) :]
    column = {name: i for i, name in enumerate(HIERARCHY_FEATURES)}
    assert tree[:, column["tree_depth"]].tolist() == [3.0, 5.0]
    assert tree[:, column["ancestor_of_other_top"]].tolist() == [0.0, 1.0]


@needs_data
def test_coherence_in_a_real_abstract_with_a_second_spelling():
    # PMID 10425038 writes "ataxia-telangiectasia" and "A-T" (no definition the abbreviation finder
    # accepts, so A-T is searched as written); both are D001260
    document = next(d for d in read(NCBI_TRAIN) if d.doc_id == "10425038")
    assert [m.text for m in document.mentions] == ["ataxia-telangiectasia", "A-T"]
    from core.pipeline import Linker

    class _Unused:
        pass

    queries = Linker(_Unused()).plan([document])[0]
    ataxia = [Candidate("D001260", "Ataxia Telangiectasia", "", 0.9), Candidate("D001259", "Ataxia", "", 0.5)]
    short = [
        Candidate("D020389", "Aicardi Syndrome", "", 0.4),
        Candidate("D001260", "Ataxia Telangiectasia", "", 0.3),
    ]
    context = DocumentContext(queries, [ataxia, short])
    top, listed = (COHERENCE_FEATURES.index(n) for n in COHERENCE_FEATURES)
    rows = context.rows(queries[1], ["D020389", "D001260"])
    # for A-T: D001260 is the first concept of one other-string mention and listed by it; D020389 neither
    assert rows[:, top].tolist() == [0.0, pytest.approx(math.log(2))]
    assert rows[:, listed].tolist() == [0.0, pytest.approx(math.log(2))]
    own = context.rows(queries[0], ["D001260", "D001259"])
    # for ataxia-telangiectasia: A-T ranks D001260 second (listed, not first); D001259 it does not list
    assert own[:, top].tolist() == [0.0, 0.0]
    assert own[:, listed].tolist() == [pytest.approx(math.log(2)), 0.0]
    # another document's mentions are no evidence
    elsewhere = MentionQuery("1", "A-T", ("A-T",))
    assert not context.rows(elsewhere, ["D001260"]).any()


def test_name_variants_of_the_mention_reach_the_exact_name():
    # MEDIC 2012's preferred names of D006816 and D001943 as written, without the loader's variants
    kb = KnowledgeBase(
        [Concept("D006816", "MESH", "Huntington Disease"), Concept("D001943", "MESH", "Breast Neoplasms")]
    )
    query = MentionQuery("1", "Huntington's disease", ("Huntington's disease",))
    found = [Candidate("D001943", "", "", 0.5), Candidate("D006816", "", "", 0.4)]
    with_variants = NameSimilarity(kb, variants=True)
    plain = NameSimilarity(kb)  # the default: as written only
    assert with_variants.strings(query) == ("Huntington's disease", "Huntington disease")
    # the variant without the possessive is the concept's name: cosine 1; the mention as written is not
    assert with_variants.scores([query], [found])[0][1] == pytest.approx(1.0)
    assert plain.scores([query], [found])[0][1] < 0.99
    inverted = MentionQuery("1", "Neoplasms, Breast", ("Neoplasms, Breast",))
    assert with_variants.strings(inverted)[1] == "Breast Neoplasms"
    ((merged, missing),) = with_variants.union([inverted], [[]], 1)
    assert [c.concept_id for c in merged] == ["D001943"] and missing == [True]


def test_a_ranker_saved_with_the_old_feature_set_still_scores_on_its_own_columns(tmp_path):
    """An upgrade keeps a project's set-1 ranker working: it reads the sixteen columns it was trained on,
    scoring exactly as the set-1 formula computed by hand; a ranker naming a feature this version does
    not compute is refused with retrain advice."""
    from core.rank.model import FORMAT, RANKER_FILE, RankerModel

    old_names = list(FEATURE_NAMES[:16])  # feature set 1: the sixteen base features, nothing else
    assert len(FEATURE_NAMES) > len(old_names)
    n = len(old_names)
    rng = np.random.default_rng(3)
    mean, scale, coef = rng.normal(size=n), rng.uniform(0.5, 2.0, size=n), rng.normal(size=n)
    stored = {
        "format": FORMAT,
        "features": old_names,
        "mean": mean.tolist(),
        "scale": scale.tolist(),
        "coef": coef.tolist(),
        "intercept": 0.25,
        "calibration": {"method": "platt", "a": 1.0, "b": 0.0},
        "feature_set": 1,
    }
    (tmp_path / RANKER_FILE).write_text(json.dumps(stored), encoding="utf-8")
    model = RankerModel.load(tmp_path, "P")
    rows = rng.normal(size=(5, len(FEATURE_NAMES)))
    by_hand = [
        sum((row[j] - mean[j]) / scale[j] * coef[j] for j in range(n)) + 0.25 for row in rows.tolist()
    ]
    assert np.allclose(model.raw_scores(rows), by_hand)

    stored["features"] = old_names[:-1] + ["a_feature_from_the_future"]
    (tmp_path / RANKER_FILE).write_text(json.dumps(stored), encoding="utf-8")
    with pytest.raises(ModelError, match=r"feature set 1.*not applied.*train ranker") as refused:
        RankerModel.load(tmp_path, "P")
    assert str(tmp_path / RANKER_FILE) in str(refused.value)
