"""Sentence splitting: offsets, biomedical abbreviations, passages, and mentions that cross a boundary."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.documents import Document, Mention, Passage, Span, document_from_title_abstract
from core.errors import InputError
from core.text.sentences import sentence_spans_for_mentions, sentences_of, split_sentences


def texts(text: str) -> list[str]:
    return [text[s.start : s.end] for s in split_sentences(text)]


def test_plain_sentences_keep_their_offsets() -> None:
    text = "  Mutations were found. Two were new!  Why?\n"
    spans = split_sentences(text)
    assert spans == [Span(2, 23), Span(24, 37), Span(39, 43)]
    assert texts(text) == ["Mutations were found.", "Two were new!", "Why?"]


@pytest.mark.parametrize(
    "text",
    [
        "Several dystrophies, e.g. Duchenne and Becker, were studied.",
        "Several dystrophies (e.g. Duchenne and Becker) were studied.",
        "A founder effect, i.e. one ancestral mutation, explains it.",
        "Ashkenazi Jews, i. e. Jews of European birth, carry it.",
        "As shown by Smith et al. Mutations in BRCA1 were common.",
        "Risk was higher in carriers vs. non-carriers of the allele.",
        "The deletion is shown in Fig. 2 and in Fig. S1 of the appendix.",
        "The gene spans approx. 200 kilobases of genomic DNA.",
        "The cDNA was first cloned by J. Smith in a large pedigree.",
        "Infections with E. coli and S. aureus were excluded.",
        "Patients received 2.5 mg of the drug and improved.",
        "The difference was significant (p < 0.05. Controls were not) in the cohort.",
        "The HFE gene lies 4. 5 Mb telomeric to HLA-A in all of them.",
        "Linkage was strong (LOD 3.2. See Table 1.) for the marker.",
        "The mutation c. 38T>C was found in two families.",
        "The carrier frequency of. 0327 was low in the population.",
        "Cases were seen in the U.S. and in Canada.",
    ],
)
def test_no_split_inside_abbreviations_decimals_and_brackets(text: str) -> None:
    assert texts(text) == [text]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "It was hepatitis B. The virus was cleared.",
            ["It was hepatitis B.", "The virus was cleared."],
        ),
        (
            "Alleles were always haplotype A. To find an origin we sequenced.",
            ["Alleles were always haplotype A.", "To find an origin we sequenced."],
        ),
        (
            'He said "the gene is mutated." Then he left.',
            ['He said "the gene is mutated."', "Then he left."],
        ),
        (
            "Mutations were found (in 5 of 8 families.) Controls were normal.",
            ["Mutations were found (in 5 of 8 families.)", "Controls were normal."],
        ),
        (
            "Levels fell in 1995. p53 mutations were then sought.",
            ["Levels fell in 1995.", "p53 mutations were then sought."],
        ),
        (
            "Recombination fraction was 0. 04. 18 families were informative.",
            ["Recombination fraction was 0. 04.", "18 families were informative."],
        ),
        (
            "The deletion was 2.5 kb long. mRNA levels were low.",
            ["The deletion was 2.5 kb long.", "mRNA levels were low."],
        ),
        (
            "BACKGROUND\n\nThe first paragraph has no full stop",
            ["BACKGROUND", "The first paragraph has no full stop"],
        ),
        ("Is it linked? Yes!! It is.", ["Is it linked?", "Yes!!", "It is."]),
    ],
)
def test_splits_where_a_sentence_really_ends(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


def test_unmatched_bracket_does_not_block_later_splits() -> None:
    text = "Exon 3) was deleted. The (second allele was normal. Both parents were carriers."
    assert texts(text) == [
        "Exon 3) was deleted.",
        "The (second allele was normal.",
        "Both parents were carriers.",
    ]


def test_empty_and_blank_text_have_no_sentences() -> None:
    assert split_sentences("") == []
    assert split_sentences(" \n\t ") == []


def test_non_text_input_is_an_input_error() -> None:
    with pytest.raises(InputError, match="needs a str"):
        split_sentences(None)  # type: ignore[arg-type]


def test_sentences_of_splits_each_passage_on_its_own() -> None:
    # the title has no full stop: without passages it would run into the abstract
    doc = document_from_title_abstract(
        "1",
        "Myotonic dystrophy in Northern Ireland",
        "Myotonic dystrophy (DM) is dominant. It shows anticipation.",
    )
    spans = sentences_of(doc)
    assert [doc.text[s.start : s.end] for s in spans] == [
        "Myotonic dystrophy in Northern Ireland",
        "Myotonic dystrophy (DM) is dominant.",
        "It shows anticipation.",
    ]
    assert spans[1].start == len(doc.title) + 1


def test_sentences_of_handles_gaps_and_overlapping_passages() -> None:
    doc = Document(
        "2", (Passage(0, "First one. Second one."), Passage(30, "Third one."), Passage(35, "one. Extra."))
    )
    text = doc.text
    assert [text[s.start : s.end] for s in sentences_of(doc)] == [
        "First one.",
        "Second one.",
        "Third one.",
        "Extra.",
    ]


def test_mention_crossing_a_boundary_merges_the_two_sentences() -> None:
    doc = document_from_title_abstract(
        "3", "A title.", "He has hepatitis B. Virus load was high. Liver was fine."
    )
    text = doc.text
    start = text.index("hepatitis B. Virus")
    crossing = Mention(start, start + len("hepatitis B. Virus"), "hepatitis B. Virus")
    inside = Mention(text.index("Liver"), text.index("Liver") + 5, "Liver")
    merged = sentence_spans_for_mentions(doc.with_mentions([crossing, inside]))
    assert [text[s.start : s.end] for s in merged] == [
        "A title.",
        "He has hepatitis B. Virus load was high.",
        "Liver was fine.",
    ]
    for mention in (crossing, inside):
        assert sum(s.start <= mention.start and mention.end <= s.end for s in merged) == 1


def test_mention_spanning_three_sentences_and_chained_merges() -> None:
    doc = Document("4", (Passage(0, "One a. Two b. Three c. Four d. Five e."),))
    text = doc.text
    across = Mention(text.index("a."), text.index("Three") + 5, "a. Two b. Three")
    chained = Mention(text.index("c."), text.index("Four") + 4, "c. Four")
    merged = sentence_spans_for_mentions(doc.with_mentions([across, chained]))
    assert [text[s.start : s.end] for s in merged] == ["One a. Two b. Three c. Four d.", "Five e."]


def test_without_mentions_merged_spans_are_the_sentences() -> None:
    doc = document_from_title_abstract("5", "Title here.", "One. Two.")
    assert sentence_spans_for_mentions(doc) == sentences_of(doc)


def test_mention_outside_the_text_is_an_input_error() -> None:
    doc = document_from_title_abstract("6", "Short.", "").with_mentions([Mention(3, 40, "x")])
    with pytest.raises(InputError, match="6.*outside the text"):
        sentence_spans_for_mentions(doc)


_TRICKY = st.text(
    alphabet=st.sampled_from(
        list("aZ e.g. J. E. coli 2.5 ( ) [ ] ? ! \" ' \n\n\t al. vs p53 0. 1\u201d\u00a0x")
    ),
    max_size=120,
)


def _check_span_properties(text: str, spans: list[Span]) -> None:
    previous_end = 0
    covered = [False] * len(text)
    for span in spans:
        assert 0 <= span.start < span.end <= len(text)
        assert span.start >= previous_end
        assert not text[span.start].isspace() and not text[span.end - 1].isspace()
        previous_end = span.end
        for position in range(span.start, span.end):
            covered[position] = True
    assert all(covered[i] for i, char in enumerate(text) if not char.isspace())


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=200), _TRICKY))
def test_split_sentences_spans_are_ordered_disjoint_and_cover_all_non_space(text: str) -> None:
    _check_span_properties(text, split_sentences(text))


@settings(max_examples=150, deadline=None)
@given(_TRICKY, _TRICKY)
def test_sentences_of_has_the_same_properties_on_documents(title: str, abstract: str) -> None:
    doc = document_from_title_abstract("h", title, abstract)
    _check_span_properties(doc.text, sentences_of(doc))


@pytest.mark.timeout(20)
def test_deeply_nested_and_run_on_text_stays_linear() -> None:
    nested = "[(" * 30000 + ")]" * 30000
    assert split_sentences(nested) == [Span(0, len(nested))]
    run_on = "x" * 100000 + ". Y" + " a." * 30000
    assert len(split_sentences(run_on)) == 2
