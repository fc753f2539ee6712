"""The real vocabularies in shared/data/vocab (skipped when absent): counts from the data README."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from core.errors import InputError
from core.kb import load_kb, sniff_kb_format
from core.kb.knowledge_base import KnowledgeBase

MEDIC = "medic_06Jul2012.txt"
CTD = "CTD_diseases.tsv.gz"


def test_medic_2012_counts_and_kb_within_ten_seconds(vocab_dir: Path) -> None:
    start = time.perf_counter()
    concepts = list(load_kb(vocab_dir / MEDIC, "medic"))
    kb = KnowledgeBase(concepts)
    seconds = time.perf_counter() - start

    assert len(concepts) == len(kb) == 11_915
    # "76,237 name strings": preferred name + synonyms as written; no line repeats a name exactly,
    # so the count is the same with or without exact duplicates
    assert sum(len(c.names) - len(c.variants) for c in concepts) == 76_237
    assert sum(1 + len(c.synonyms) for c in concepts) == 76_237
    assert sum(len(c.synonyms) for c in concepts) == 64_322
    assert sum(1 for c in concepts if c.alt_ids) == 3_026
    kinds = Counter("OMIM" if c.concept_id.startswith("OMIM:") else c.concept_id[0] for c in concepts)
    assert kinds == {"C": 6_058, "D": 4_495, "OMIM": 1_362}
    assert kb.get("D006816").preferred_name == "Huntington Disease"
    assert kb.resolve("OMIM:613097") == "C567755"  # an alternative id
    # names that only differ in case or punctuation collapse in the index; variants come on top
    as_written = KnowledgeBase(replace(c, variants=()) for c in concepts)
    assert 70_000 < len(as_written.names) < 76_237 < len(kb.names)
    assert seconds <= 10, f"MEDIC load + KnowledgeBase took {seconds:.1f} s"


def test_ctd_diseases_2017_counts_and_kb_within_ten_seconds(vocab_dir: Path) -> None:
    start = time.perf_counter()
    concepts = list(load_kb(vocab_dir / CTD, "ctd"))
    kb = KnowledgeBase(concepts)
    seconds = time.perf_counter() - start

    assert len(concepts) == len(kb) == 11_865
    omim = [c for c in concepts if c.concept_id.startswith("OMIM:")]
    assert len(omim) == 532
    assert len(concepts) - len(omim) == 11_333  # MESH: ids, stored bare
    assert all(c.concept_id[0] in "CD" for c in concepts if not c.concept_id.startswith("OMIM:"))
    assert sum(len(c.synonyms) for c in concepts) == 66_129
    assert sum(1 for c in concepts if c.alt_ids) == 5_487
    alt_ids = [alt for c in concepts for alt in c.alt_ids]
    assert sum(alt.startswith("OMIM:") for alt in alt_ids) == 3_430
    assert sum(alt.startswith("DOID:") for alt in alt_ids) == 3_407
    assert sum(1 for c in concepts if c.definition) == 4_691
    assert all(c.tree_numbers for c in concepts)
    t2dm = kb.get("MESH:D003924")
    assert t2dm.preferred_name == "Diabetes Mellitus, Type 2"
    assert "NIDDM" in t2dm.synonyms
    assert kb.resolve("OMIM:125853") == "D003924"
    assert seconds <= 10, f"CTD load + KnowledgeBase took {seconds:.1f} s"


def test_mesh_dhimmel_tables(vocab_dir: Path) -> None:
    terms = list(load_kb(vocab_dir / "mesh-dhimmel" / "terms.tsv", "tsv"))
    trees = list(load_kb(vocab_dir / "mesh-dhimmel" / "tree-numbers.tsv", "tsv"))

    assert len(terms) == len({c.concept_id for c in terms}) == 27_455
    assert terms[0].concept_id == "D000001" and terms[0].preferred_name == "Calcimycin"
    assert all(c.vocabulary == "MESH" and c.synonyms == () for c in terms)
    assert len(trees) == 27_453
    assert sum(len(c.tree_numbers) for c in trees) == 56_341
    assert sum(1 for c in trees if any(t.startswith("C") for t in c.tree_numbers)) == 4_663
    assert sum(1 for c in trees if any(t.startswith("D") for t in c.tree_numbers)) == 9_352


def test_real_files_are_sniffed_and_the_wrong_format_is_refused(vocab_dir: Path) -> None:
    assert sniff_kb_format(vocab_dir / MEDIC) == "medic"
    assert sniff_kb_format(vocab_dir / CTD) == "ctd"
    assert sniff_kb_format(vocab_dir / "mesh-dhimmel" / "terms.tsv") == "tsv"

    with pytest.raises(InputError, match="looks like medic, not ctd"):
        load_kb(vocab_dir / MEDIC, "ctd")
    with pytest.raises(InputError, match="looks like ctd, not medic"):
        load_kb(vocab_dir / CTD, "medic")
    with pytest.raises(InputError, match="looks like ctd, not tsv"):
        load_kb(vocab_dir / CTD, "tsv")


def test_medic_names_are_read_as_written_not_xml_escaped(vocab_dir: Path) -> None:
    """The 2012 MEDIC writes "Wissler&apos;s Syndrome" and "Sj&#246;gren": the desk showed them raw."""
    path = vocab_dir / MEDIC
    raw_lines = [line for line in path.read_text(encoding="utf-8").splitlines() if "&apos;" in line]
    assert raw_lines, "the file no longer has escaped names: this test has nothing to check"
    concepts = list(load_kb(path, "medic"))
    names = [name for concept in concepts for name in concept.names]
    assert not [name for name in names if "&apos;" in name or "&#" in name or "&amp;" in name]
    assert any(name == "Wissler's Syndrome" for name in names)
    assert any("Sjögren" in name for name in names)
