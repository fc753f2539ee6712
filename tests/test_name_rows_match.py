"""A saved name index is used only when its rows, less the hidden ones, are the KB's names (issue 23:
the check is made on the files' arrays, not row by row in Python). Each case is checked against the
rows themselves, compared as Python pairs."""

from __future__ import annotations

import numpy as np
import pytest

from core.kb.knowledge_base import NameEntry
from core.retrieve.name_rows import NameRows, same_rows

ENTRIES = [
    NameEntry("Crohn's disease", "D003424", True),
    NameEntry("maladie de Crohn", "D003424", False),
    NameEntry("Sjögren syndrome", "D012859", True),
    NameEntry("β-thalassemia", "D017086", True),
    NameEntry("ileitis", "D003424", False),
]


def _pairs(rows, hidden=None) -> list[tuple[str, str]]:
    return [(r.concept_id, r.name) for i, r in enumerate(rows) if hidden is None or not hidden[i]]


def _saved(tmp_path, entries) -> NameRows:
    path = tmp_path / "x.rows"
    NameRows.of(entries).save(path)
    return NameRows.load(path, len(entries))


def test_the_same_rows_match_in_order_and_in_another_order(tmp_path):
    rows = _saved(tmp_path, ENTRIES)
    assert _pairs(rows) == _pairs(ENTRIES)
    assert same_rows(rows, None, ENTRIES) is True
    shuffled = [ENTRIES[i] for i in (4, 2, 0, 3, 1)]
    assert sorted(_pairs(rows)) == sorted(_pairs(shuffled))
    assert same_rows(rows, None, shuffled) is True


@pytest.mark.parametrize(
    "changed",
    [
        NameEntry("Crohn's diseasf", "D003424", True),  # one byte of a name
        NameEntry("Crohn's disease", "D012859", True),  # the same name under another concept
        NameEntry("Crohn’s disease", "D003424", True),  # a non-ASCII apostrophe: other bytes, same length in
    ],
)
def test_a_changed_row_does_not_match(tmp_path, changed):
    rows = _saved(tmp_path, ENTRIES)
    kb = [changed, *ENTRIES[1:]]
    assert sorted(_pairs(rows)) != sorted(_pairs(kb))
    assert same_rows(rows, None, kb) is False


def test_hidden_rows_are_left_out_and_appended_rows_count(tmp_path):
    rows = _saved(tmp_path, ENTRIES)
    rows.extend([NameEntry("regional enteritis", "D003424", False)])
    hidden = np.array([False, True, False, False, False, False])
    kb = [ENTRIES[0], *ENTRIES[2:], NameEntry("regional enteritis", "D003424", False)]
    assert _pairs(rows, hidden) == _pairs(kb)
    assert same_rows(rows, hidden, kb) is True
    assert same_rows(rows, None, kb) is False  # the withdrawn name is still in the rows
    assert same_rows(rows, hidden, [*kb, NameEntry("more", "D003424", False)]) is False
    assert same_rows(rows, hidden, kb[:-1] + [NameEntry("regional enteritiS", "D003424", False)]) is False
