"""Applying a decision to identical mentions (issue 12 item 4.1): the matches are those a reader sees as the
same words (case, hyphens, punctuation aside), decided mentions are never overwritten, the lot is written
in one transaction and undone by one transaction of reverts."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import CuralinkError
from core.formats import read_corpus
from core.store import Project
from core.store.schema import DecisionRow

# Three documents; the mention texts are written out by hand, and so are the expected matches below.
DOCS = {
    "1": ("Lymphoma cases", "A non-Hodgkin lymphoma and a Non Hodgkin lymphoma; Hodgkin lymphoma differs."),
    "2": ("More cases", "NON-HODGKIN LYMPHOMA was seen, then non-Hodgkin lymphoma again."),
    "3": ("Other", "No lymphoma here: non-Hodgkin lymphomas are plural."),
}
MENTIONS = {  # (document, text, type)
    ("1", "non-Hodgkin lymphoma", "Disease"),
    ("1", "Non Hodgkin lymphoma", "Disease"),
    ("1", "Hodgkin lymphoma", "Disease"),
    ("2", "NON-HODGKIN LYMPHOMA", "Disease"),
    ("2", "non-Hodgkin lymphoma", "Neoplasm"),
    ("3", "non-Hodgkin lymphomas", "Disease"),
}


def _project(tmp_path: Path) -> Project:
    lines = []
    for pmid, (title, abstract) in DOCS.items():
        lines += [f"{pmid}|t|{title}", f"{pmid}|a|{abstract}"]
        text = f"{title} {abstract}"
        for doc, mention, kind in sorted(MENTIONS):
            if doc == pmid:
                start = text.index(mention)
                lines.append(f"{pmid}\t{start}\t{start + len(mention)}\t{mention}\t{kind}\t-1")
        lines.append("")
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    project = Project.create(tmp_path / "p")
    project.documents.import_documents(read_corpus(path, "pubtator"))
    return project


def _ids(project: Project) -> dict[tuple[str, str], int]:
    found = {}
    for document, ids in project.documents.documents_with_mention_ids():
        for mention, mention_id in zip(document.mentions, ids, strict=True):
            found[(document.doc_id, mention.text)] = mention_id
    return found


def test_identical_mentions_are_found_decided_in_one_step_and_undone_in_one(tmp_path: Path) -> None:
    project = _project(tmp_path)
    ids = _ids(project)
    source = ids[("1", "non-Hodgkin lymphoma")]
    already = ids[("2", "non-Hodgkin lymphoma")]
    project.curation.record_decision(already, "correct", concept_id="D999", curator="ann")
    project.curation.record_decision(source, "correct", concept_id="D008228", curator="bob")

    in_document = project.identical.find(source, document="1")
    assert set(in_document.mention_ids) == {ids[("1", "Non Hodgkin lymphoma")]}
    assert in_document.describe() == "1 mention in 1 document"

    whole = project.identical.find(source)
    # By hand: the spaced and the upper-case spellings; not "Hodgkin lymphoma", not the plural, not the
    # one "ann" decided already.
    expected = {ids[("1", "Non Hodgkin lymphoma")], ids[("2", "NON-HODGKIN LYMPHOMA")]}
    assert set(whole.mention_ids) == expected
    assert whole.describe() == "2 mentions in 2 documents"
    assert project.identical.find(source, same_type=True).mention_ids == whole.mention_ids

    with project.session() as session:
        before = session.query(DecisionRow).count()
    changes = project.identical.apply(source, [*whole.mention_ids, already], curator="bob")
    assert set(changes.mentions) == expected and changes.newly_decided == 2
    assert changes.documents == {"1", "2"}
    state = project.curation.current_decisions()
    assert {m for m, row in state.items() if row.concept_id == "D008228"} == expected | {source}
    assert state[already].concept_id == "D999" and state[already].curator == "ann"  # never overwritten
    with project.session() as session:
        assert session.query(DecisionRow).count() == before + 2

    undone = project.identical.revert_all(changes.mentions, curator="bob")
    assert undone.undecided == 2
    state = project.curation.current_decisions()
    assert set(state) == {source, already}


def test_a_mention_without_a_decision_has_nothing_to_apply(tmp_path: Path) -> None:
    project = _project(tmp_path)
    ids = _ids(project)
    with pytest.raises(CuralinkError, match="no decision"):
        project.identical.apply(ids[("1", "Hodgkin lymphoma")], [ids[("2", "NON-HODGKIN LYMPHOMA")]])
