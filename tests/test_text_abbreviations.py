"""Schwartz & Hearst abbreviation definitions and their expansion inside mentions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.documents import Span, document_from_title_abstract
from core.text.abbreviations import (
    Abbreviation,
    AbbreviationMap,
    find_abbreviations,
    is_short_form,
    long_form_start,
)


def pairs(text: str) -> list[tuple[str, str]]:
    return [(a.short, a.long) for a in find_abbreviations(text)]


def test_long_form_then_short_form_with_offsets() -> None:
    text = "The major cause is a dysfunctional ATP7B gene, causing Wilson disease (WD). WD is rare."
    [found] = find_abbreviations(text)
    assert found == Abbreviation("WD", "Wilson disease", Span(71, 73), Span(55, 69))
    assert text[found.short_span.start : found.short_span.end] == "WD"
    assert text[found.long_span.start : found.long_span.end] == "Wilson disease"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the first short-form letter must start a word: not the "h" inside "the"
        ("In the heterozygous state (HS) it is mild.", [("HS", "heterozygous state")]),
        # letters may come from inside words, and hyphenated words count as one
        (
            "Patients with X-linked adrenoleukodystrophy (X-ALD) were seen.",
            [("X-ALD", "X-linked adrenoleukodystrophy")],
        ),
        ("It causes Prader-Willi syndrome (PWS) in most cases.", [("PWS", "Prader-Willi syndrome")]),
        # text after "; " or ", " in the parenthesis is not part of the short form
        ("Cowden disease (CD; MIM 158350) is rare.", [("CD", "Cowden disease")]),
        ("the 3-untranslated region (UTR), shortly", [("UTR", "3-untranslated region")]),
        # a long form never crosses a "/": the short form names the second thing
        ("of SCA3/Machado-Joseph disease (MJD) in them", [("MJD", "Machado-Joseph disease")]),
        # short form (long form) when the parenthesis holds more than two words
        (
            "We studied HNPCC (hereditary nonpolyposis colorectal cancer) families.",
            [("HNPCC", "hereditary nonpolyposis colorectal cancer")],
        ),
        # a definition nested inside another parenthesis
        ("(familial adenomatous polyposis (FAP) and others)", [("FAP", "familial adenomatous polyposis")]),
    ],
)
def test_schwartz_hearst_definitions(text: str, expected: list[tuple[str, str]]) -> None:
    assert pairs(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Risk was raised (P < 0.05) in carriers.",  # three words, no capital word before it
        "The study (1995) found nothing.",  # no letter
        "Seven patients (n = 12) were studied.",  # lower-case word before a long parenthesis
        "It is a myotonic dystrophy (DM) gene.",  # Latin abbreviation: D never starts a word before M
        "This gene (see below) is long.",  # two words, no long form spelt by them
        "The alpha-subunit was then transiently co-expressed with the beta-subunit to produce Hex A (alphabeta).",
        "A test (ABCDEFGHIJK) of a long token.",  # eleven characters: too long for a short form
        "Nothing before it: (HD).",
    ],
)
def test_no_false_definitions(text: str) -> None:
    assert pairs(text) == []


def test_long_form_window_is_limited_to_min_of_length_plus_five_and_twice_length() -> None:
    # |SF| = 2 allows min(7, 4) = 4 words; "Hereditary ... disease" needs 5
    assert pairs("Hereditary and very long progressive disease (HD) is fatal.") == []
    assert pairs("Hereditary long progressive disease (HD) is fatal.") == [
        ("HD", "Hereditary long progressive disease")
    ]


def test_long_form_is_bounded_by_its_sentence() -> None:
    assert pairs("Huntington families were seen. Disease (HD) onset varies.") == []


def test_long_form_start_is_the_backward_character_match() -> None:
    candidate = "the dominant inheritance of adenomatous polyposis coli"
    start = long_form_start("APC", candidate)
    assert start is not None and candidate[start:] == "adenomatous polyposis coli"
    assert long_form_start("XYZ", candidate) is None
    assert long_form_start("DM", "myotonic dystrophy") is None


def test_short_form_rules() -> None:
    assert is_short_form("HD") and is_short_form("5-HT") and is_short_form("MPS IVA")
    assert not is_short_form("H") and not is_short_form("-HD") and not is_short_form("1995")
    assert not is_short_form("ABCDEFGHIJK") and not is_short_form("a b c")


def test_plural_short_form_falls_back_to_the_singular() -> None:
    text = "Germline mutations of adenomatous polyposis coli (APCs) cause polyposis."
    assert pairs(text) == [("APCs", "adenomatous polyposis coli")]
    mapping = AbbreviationMap.from_text(text)
    assert mapping.expand("APCs") == "adenomatous polyposis coli"
    assert mapping.expand("APC") == "adenomatous polyposis coli"
    assert mapping.expand("APC mutations") == "adenomatous polyposis coli mutations"


def test_plural_short_form_matched_with_its_s_gives_a_singular_long_form() -> None:
    text = "Loss of tumor suppressor genes (TSGs) and monoclonal antibodies (mAbs) were studied."
    assert pairs(text) == [("TSGs", "tumor suppressor genes"), ("mAbs", "monoclonal antibodies")]
    mapping = AbbreviationMap.from_text(text)
    assert mapping.expand("TSGs") == "tumor suppressor genes"
    assert mapping.expand("TSG") == "tumor suppressor gene"
    assert mapping.expand("mAb") == "monoclonal antibody"


def test_singular_definition_expands_a_plural_token() -> None:
    mapping = AbbreviationMap.from_text("Familial adenomatous polyposis (FAP) is dominant.")
    assert mapping.expand("FAPs") == "Familial adenomatous polyposis"
    assert mapping.long_form("FAPs") == "Familial adenomatous polyposis"
    assert mapping.long_form("XYZ") is None


def test_expand_whole_mentions_and_tokens_inside_mentions() -> None:
    doc = document_from_title_abstract(
        "1",
        "Huntington disease in Venezuela",
        "Huntington disease (HD) is dominant. HD patients and HD-like cases were seen; HDAC was not.",
    )
    mapping = AbbreviationMap.from_document(doc)
    assert "HD" in mapping and len(mapping) == 1
    assert mapping.expand("HD") == "Huntington disease"
    assert mapping.expand("HD patients") == "Huntington disease patients"
    assert mapping.expand("HD-like") == "Huntington disease-like"
    assert mapping.expand("HDAC") == "HDAC"  # token-bounded only
    assert mapping.expand("sHD") == "sHD"
    assert mapping.expand("hd") == "hd"  # short forms are case-sensitive
    assert mapping.expand("Huntington disease (HD)") == "Huntington disease (HD)"


def test_document_offsets_point_into_the_document_text() -> None:
    doc = document_from_title_abstract("2", "Title.", "Spinocerebellar ataxia type 1 (SCA1) is common.")
    [found] = AbbreviationMap.from_document(doc).abbreviations
    assert doc.text[found.short_span.start : found.short_span.end] == "SCA1"
    assert doc.text[found.long_span.start : found.long_span.end] == "Spinocerebellar ataxia type 1"


def test_first_definition_wins() -> None:
    mapping = AbbreviationMap.from_text("Computed tomography (CT) was used. Copper toxicosis (CT) is rare.")
    assert mapping.expand("CT") == "Computed tomography"
    assert len(mapping.abbreviations) == 2


def test_empty_map_expands_nothing() -> None:
    mapping = AbbreviationMap()
    assert len(mapping) == 0 and mapping.expand("HD") == "HD" and mapping.as_dict() == {}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aAbBcC (),; -s/HD.")), max_size=100))
def test_found_spans_always_match_the_text(text: str) -> None:
    for abbreviation in find_abbreviations(text):
        assert text[abbreviation.short_span.start : abbreviation.short_span.end] == abbreviation.short
        assert text[abbreviation.long_span.start : abbreviation.long_span.end] == abbreviation.long
        assert is_short_form(abbreviation.short)
        assert len(abbreviation.long) > len(abbreviation.short)


@pytest.mark.timeout(20)
def test_pathological_parentheses_stay_linear() -> None:
    assert find_abbreviations("X" * 100000 + "(AB)" * 2000) == []
    assert find_abbreviations("[(" * 30000 + ")]" * 30000) == []
    assert len(find_abbreviations("Hello world (HW)! " * 5000)) == 5000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # NCBI-disease test 9585611: the character match took the second A from inside "adenomatous"
        # and named classic APC; the author's words spell A-A-P-C by their initials
        (
            "Germ-line mutations of the tumor suppressor APC are implicated in attenuated adenomatous "
            "polyposis coli (AAPC), a variant of familial adenomatous polyposis (FAP).",
            [("AAPC", "attenuated adenomatous polyposis coli"), ("FAP", "familial adenomatous polyposis")],
        ),
        # function words between the initials are passed over
        (
            "The Agency for Healthcare Research and Quality (AHRQ) funds it.",
            [("AHRQ", "Agency for Healthcare Research and Quality")],
        ),
        # parts of hyphenated words count as words
        (
            "In non-insulin-dependent diabetes mellitus (NIDDM) it rises.",
            [("NIDDM", "non-insulin-dependent diabetes mellitus")],
        ),
        # no words spell it: the character match as before
        ("Boys with X-linked adrenoleukodystrophy (ALD) were seen.", [("ALD", "adrenoleukodystrophy")]),
    ],
)
def test_words_spelling_the_short_form_by_their_initials_come_first(text, expected) -> None:
    assert pairs(text) == expected
