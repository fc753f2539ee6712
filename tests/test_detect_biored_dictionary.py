"""The dictionary tagger on real BioRED abstracts with real MeSH names: class words the annotators never
mark are learnt from the annotated documents and left out, and a long form the text defines for a
short form is tagged whole when it ends in a name ("chronic kidney disease (CKD)")."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from core.detect.dictionary import DictionaryDetector
from core.formats import read_corpus


@pytest.fixture(scope="module")
def biored(shared_data: Path):
    return list(read_corpus(shared_data / "biored" / "BioRED_TrainDev.PubTator", "pubtator"))


@pytest.fixture(scope="module")
def mesh_names(shared_data: Path) -> list[tuple[str, str, str]]:
    """(name, id, type) of every MeSH 2015 descriptor: tree C (and F03) diseases, tree D chemicals."""
    with open(shared_data / "vocab" / "mesh-dhimmel" / "tree-numbers.tsv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    names = {}
    for row in rows:
        tree = row["mesh_tree_number"]
        kind = "Disease" if tree.startswith(("C", "F03")) else "Chemical" if tree.startswith("D") else ""
        if kind:
            names.setdefault(row["mesh_id"], (row["mesh_name"], row["mesh_id"], kind))
    return list(names.values())


def _overlaps(start: int, end: int, spans) -> bool:
    return any(start < e and s < end for s, e in spans)


def test_names_the_annotators_pass_over_are_learnt_and_left_out(biored, mesh_names) -> None:
    from core.detect.unmarked_names import unmarked_names

    annotated, evaluated = biored[:300], biored[300:]
    detector = DictionaryDetector(mesh_names)
    unmarked = unmarked_names(detector, annotated)
    # checked against the corpus itself: each word's occurrences in the annotated abstracts and how
    # many of them lie inside an annotated mention
    for word in ("DNA", "placebo"):
        pattern = re.compile(rf"(?<!\w){word}(?!\w)", re.IGNORECASE)
        seen = marked = 0
        for document in annotated:
            gold = [(m.start, m.end) for m in document.mentions]
            for found in pattern.finditer(document.text):
                seen += 1
                marked += _overlaps(found.start(), found.end(), gold)
        assert seen >= 5 and marked <= 0.2 * seen, (word, seen, marked)
        assert word.lower() in unmarked
    # names the annotators mark stay: every gold Chemical/Disease text met at least 3 times in the
    # annotated abstracts, marked each time it is a mention
    gold_texts = {m.text.lower() for d in annotated for m in d.mentions if m.type in ("Chemical", "Disease")}
    for frequent in ("hypertension", "cocaine", "seizures"):
        assert frequent in gold_texts and frequent not in unmarked
    # and on the abstracts not read, leaving them out drops false spans, not gold ones
    kept = DictionaryDetector(mesh_names, stop_names=unmarked)
    lost_gold = dropped = 0
    for document in evaluated:
        gold = {(m.start, m.end) for m in document.mentions}
        before = {(m.start, m.end) for m in detector.detect_text(document.text)}
        after = {(m.start, m.end) for m in kept.detect_text(document.text)}
        dropped += len(before - after - gold)
        lost_gold += len((before & gold) - after)
    assert dropped >= 50 and lost_gold <= dropped / 10, (dropped, lost_gold)


@pytest.mark.parametrize(
    ("pmid", "long_form", "short_form", "kind"),
    [
        ("21903317", "chronic kidney disease", "CKD", "Disease"),
        ("27663860", "deoxycorticosterone acetate", "DOCA", "Chemical"),
    ],
)
def test_a_defined_long_form_ending_in_a_name_is_tagged_whole_with_its_short_form(
    biored, mesh_names, pmid, long_form, short_form, kind
) -> None:
    document = next(d for d in biored if d.doc_id == pmid)
    gold = {
        (m.start, m.end) for m in document.mentions if m.type == kind and m.text in (long_form, short_form)
    }
    assert {document.text[s:e] for s, e in gold} == {long_form, short_form}
    found = DictionaryDetector(mesh_names).detect(_raw(document))[0]
    tagged = {(m.start, m.end): m.type for m in found}
    missing = sorted(document.text[s:e] + f"@{s}" for s, e in gold if tagged.get((s, e)) != kind)
    assert not missing, f"gold {kind} spans not tagged as {kind}: {missing}"
    # the whole long form is tagged, not the name inside it, and is no concept's link yet
    long_mentions = [m for m in found if m.text == long_form]
    assert long_mentions and all(m.concept_id == "" for m in long_mentions)


def _raw(document):
    return [document.with_mentions([])]


def test_the_project_dictionary_leaves_out_what_its_annotated_documents_never_mark(
    biored, shared_data: Path, tmp_path: Path
) -> None:
    """`link --detect`'s dictionary (core.project_detector) learns the names to leave out from the
    project's train gold: "DNA" and "placebo" (MeSH descriptors) are no longer tagged in raw text,
    annotated names still are, and so is the adjective of a condition ("psoriatic")."""
    from core.kb import load_kb
    from core.project_detector import dictionary_for_project
    from core.store import Project

    train, raw = biored[:300], biored[300:330]
    wanted = {m.concept_id for d in train + raw for m in d.mentions if m.type in ("Chemical", "Disease")}
    lines = (
        (shared_data / "vocab" / "mesh-dhimmel" / "tree-numbers.tsv").read_text(encoding="utf-8").splitlines()
    )
    kept = [lines[0]] + [
        line
        for line in lines[1:]
        if line.split("\t")[0] in wanted or line.split("\t")[1] in ("DNA", "Placebos", "Psoriasis")
    ]
    kb_file = tmp_path / "mesh-slice.tsv"
    kb_file.write_text("\n".join(kept) + "\n", encoding="utf-8")
    with Project.create(tmp_path / "project") as project:
        project.kb.import_concepts(load_kb(kb_file, "tsv"))
        project.documents.import_documents(train, split="train")
        project.documents.import_documents([d.with_mentions([]) for d in raw], split="test")
        detector = dictionary_for_project(project, project.kb.knowledge_base()).detector
    text = "Placebo-controlled trial: DNA damage in psoriatic patients with hypertension given cocaine or placebo."
    tagged = {m.text: m.type for m in detector.detect_text(text)}
    assert tagged == {"psoriatic": "Disease", "hypertension": "Disease", "cocaine": "Chemical"}, tagged


def test_a_short_form_before_its_parenthesis_gives_the_parenthesis_no_type(biored, mesh_names) -> None:
    """ "apoE (arginine 150 proline)": the parenthesis is no long form of a name (the corpus marks it a
    variant), though it ends in the chemical "proline"; it is not tagged whole as a chemical, and apoE
    keeps the concept of the long form the text defines first ("apolipoprotein E (apoE)")."""
    document = next(d for d in biored if d.doc_id == "18046082")
    assert "apoE (arginine 150 proline)" in document.text
    variant = [m for m in document.mentions if m.text == "arginine 150 proline"]
    assert variant and {m.type for m in variant} == {"Variant"}
    found = DictionaryDetector(mesh_names).detect(_raw(document))[0]
    assert not [m for m in found if m.text == "arginine 150 proline"]
    apolipoprotein_e = next(name[1] for name in mesh_names if name[0] == "Apolipoproteins E")
    assert {m.concept_id for m in found if m.text == "apoE"} == {apolipoprotein_e}


@pytest.mark.parametrize(
    ("pmid", "adjective", "noun"),
    [("16225977", "schizophrenic", "Schizophrenia"), ("19880293", "psoriatic", "Psoriasis")],
)
def test_the_adjective_of_a_one_word_condition_is_tagged_as_that_condition(
    biored, mesh_names, pmid, adjective, noun
) -> None:
    """BioRED marks "schizophrenic" and "psoriatic" as the disease; MeSH names only the noun."""
    from core.detect.adjectives import with_adjectives

    document = next(d for d in biored if d.doc_id == pmid)
    gold = {(m.start, m.end) for m in document.mentions if m.text == adjective and m.type == "Disease"}
    assert gold
    wanted = next(concept for name, concept, _ in mesh_names if name == noun)
    assert wanted in {m.concept_id for m in document.mentions if m.text == adjective}
    found = DictionaryDetector(with_adjectives(mesh_names)).detect(_raw(document))[0]
    tagged = {(m.start, m.end): m for m in found}
    assert all(s in tagged and tagged[s].type == "Disease" for s in gold), sorted(gold - tagged.keys())


def test_an_ion_keeps_its_charge_and_a_formula_its_parenthesis(biored, mesh_names) -> None:
    """Names and text tokens drop "+" and ")", so a dictionary that learnt "Ca(2+)" and "CaCl(2)" from
    one abstract's gold matched "Ca(2" and "CaCl(2" in another: the span now ends where the gold's does."""
    taught = next(d for d in biored if d.doc_id == "19721134")  # Ca(2+)
    learnt = [(m.text, m.concept_id, m.type) for m in taught.mentions if m.text == "Ca(2+)"]
    learnt += [("CaCl(2)", "D002122", "Chemical")]
    detector = DictionaryDetector(learnt + mesh_names)
    for pmid, surfaces in (("15184369", {"Ca(2+)"}), ("20621845", {"CaCl(2)"})):
        document = next(d for d in biored if d.doc_id == pmid)
        # not after a prefix ("non-CaCl(2)-treated"): a match never starts inside a word
        gold = {
            (m.start, m.end)
            for m in document.mentions
            if m.text in surfaces and document.text[m.start - 1] != "-"
        }
        assert len(gold) >= 5
        found = {(m.start, m.end) for m in detector.detect(_raw(document))[0]}
        missing = sorted(document.text[s : e + 2] + f"@{s}" for s, e in gold - found)
        assert not missing, missing


@pytest.mark.parametrize(
    ("pmid", "acid"),
    [
        ("19445921", "salvianolic acid A"),
        ("27729412", "retinoic acid"),
        ("17608141", "3,4-dihydroxyphenylacetic acid"),
    ],
)
def test_an_ic_acid_is_one_chemical_not_the_class_acids(biored, mesh_names, pmid, acid) -> None:
    """MeSH names the class "Acids" but not these acids (or not so): the whole name is the chemical."""
    document = next(d for d in biored if d.doc_id == pmid)
    gold = {
        (m.start, m.end)
        for m in document.mentions
        if m.text == acid and m.type == "Chemical" and document.text[m.start - 1] != "-"  # all-trans-
    }
    assert len(gold) >= 2
    found = {(m.start, m.end): m.type for m in DictionaryDetector(mesh_names).detect(_raw(document))[0]}
    assert all(found.get(span) == "Chemical" for span in gold), sorted(gold - found.keys())
