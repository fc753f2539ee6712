"""normalize_name: the one normalisation KB names and mentions must share."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.text.normalize import normalize_name


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Crohn's disease", "crohns disease"),
        ("CROHN\u2019S  Disease", "crohns disease"),  # curly apostrophe, double space
        ("non-Hodgkin lymphoma", "non hodgkin lymphoma"),
        ("Non Hodgkin Lymphoma", "non hodgkin lymphoma"),
        ("  breast/ovarian cancer.  ", "breast ovarian cancer"),
        ("type_2 diabetes", "type 2 diabetes"),
        ("\uff28\uff24", "hd"),  # full-width letters fold under NFKC
        ("Stra\u00dfe", "strasse"),  # casefold, not lower
        ("alpha-1-antitrypsin deficiency", "alpha 1 antitrypsin deficiency"),
        ("", ""),
        ("---", ""),
    ],
)
def test_normalize_name_examples(raw: str, expected: str) -> None:
    assert normalize_name(raw) == expected


def test_mention_and_kb_spellings_meet() -> None:
    assert normalize_name("Wilms' tumor") == normalize_name("wilms tumor")
    assert normalize_name("Huntington's Disease") == normalize_name("huntingtons disease")


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_normalize_name_is_idempotent(text: str) -> None:
    once = normalize_name(text)
    assert normalize_name(once) == once


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aB's-_ .,\u2019`\u00c5\u212b\uff41"))))
def test_normalize_name_output_has_single_spaces_and_no_upper_case(text: str) -> None:
    result = normalize_name(text)
    assert result == result.strip()
    assert "  " not in result
    assert result == result.casefold()
