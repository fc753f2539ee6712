"""The undo history read back from the log (issue 12 item 4.6): the curator's own decisions still in force,
newest last, a batch as one step, at most `limit` steps."""

from __future__ import annotations

from pathlib import Path

from core.formats import read_corpus
from core.store import Project


def test_recent_decisions_are_the_curators_own_in_force_with_batches_as_one_step(tmp_path: Path) -> None:
    words = ["alpha", "beta", "alpha", "gamma", "alpha", "delta"]
    lines = ["1|t|T", "1|a|" + " ".join(words)]
    offset = 2
    for word in words:
        lines.append(f"1\t{offset}\t{offset + len(word)}\t{word}\tDisease\t-1")
        offset += len(word) + 1
    (tmp_path / "c.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    project = Project.create(tmp_path / "p")
    project.documents.import_documents(read_corpus(tmp_path / "c.txt", "pubtator"))
    a1, b, a2, g, a3, d = next(iter(project.documents.documents_with_mention_ids()))[1]

    project.curation.record_decision(b, "nil", curator="me")
    project.curation.record_decision(g, "reject", curator="me")
    project.curation.record_decision(g, "revert", curator="me")  # undone: not a step
    project.curation.record_decision(d, "nil", curator="other")  # not mine
    project.curation.record_decision(a1, "correct", concept_id="D1", curator="me")
    project.identical.apply(a1, [a2, a3], curator="me")  # one batch of two

    steps = project.undo.recent_decisions("me")
    assert [[(m, action) for m, action, *_ in step.decisions] for step in steps] == [
        [(b, "nil")],
        [(a1, "correct")],
        [(a3, "correct"), (a2, "correct")],
    ]
    assert [len(step.decisions) for step in project.undo.recent_decisions("me", limit=2)] == [1, 2]
    assert project.undo.recent_decisions("nobody") == []
