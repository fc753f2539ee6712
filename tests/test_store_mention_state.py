"""The current-state table: kept with every appended decision, equal to a full replay of the log, filled
by the 0003 migration on a project made by the landed version, and rebuilt on open when out of step."""

from __future__ import annotations

import gzip
import json
import logging
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from core.errors import CuralinkError
from core.formats import read_corpus
from core.store import Project
from core.store.curation import replay
from core.store.curation_log import NewDecision
from core.store.schema import DecisionRow

DEMO = Path(__file__).resolve().parents[1] / "resources" / "demo"
LINKS = ("correct", "nil", "reject", "ambiguous")


def _pubtator(path: Path, documents: int, mentions: int) -> Path:
    """A PubTator file in the real format: title and abstract lines, then one line per mention."""
    lines = []
    for d in range(documents):
        pmid = str(1000 + d)
        title = f"Case {d} of disease."
        words = [f"word{d}x{m}" for m in range(mentions)]
        abstract = " ".join(words) + "."
        lines += [f"{pmid}|t|{title}", f"{pmid}|a|{abstract}"]
        offset = len(title) + 1
        for word in words:
            lines.append(f"{pmid}\t{offset}\t{offset + len(word)}\t{word}\tDisease\tD00{d % 7}")
            offset += len(word) + 1
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _all_mention_ids(project: Project) -> list[int]:
    return [m for _doc, ids in project.documents.documents_with_mention_ids(None) for m in ids]


def _state(project: Project) -> dict[int, int]:
    return {m: row.id for m, row in project.curation.current_decisions().items()}


def _full_replay(project: Project) -> dict[int, int]:
    with project.session() as session:
        rows = session.query(DecisionRow).order_by(DecisionRow.id).all()
        return {m: row.id for m, row in replay(rows).items()}


def test_50000_decisions_keep_the_table_equal_to_a_full_replay(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p")
    project.documents.import_documents(read_corpus(_pubtator(tmp_path / "c.pubtator", 400, 5), "pubtator"))
    ids = _all_mention_ids(project)
    assert len(ids) == 2000
    rng = random.Random(11)
    stacks: dict[int, list[int]] = {m: [] for m in ids}  # the test's own model: revert pops, edits skip
    written = 0
    while written < 50_000:
        size = rng.choice([1, 1, 3, 40, 400, 1500])
        batch = []
        for _ in range(size):
            action = rng.choice([*LINKS, "revert", "revert", "adjust_span"])
            concept = f"D00{rng.randrange(7)}" if action == "correct" else ""
            batch.append(NewDecision(rng.choice(ids), action, concept, rng.choice(["ann", "bob"])))
        decision_ids = project.curation.record_decisions(batch)
        for decision, decision_id in zip(batch, decision_ids, strict=True):
            stack = stacks[decision.mention_id]
            if decision.action == "revert":
                if stack:
                    stack.pop()
            elif decision.action != "adjust_span":
                stack.append(decision_id)
        written += size
    expected = {m: stack[-1] for m, stack in stacks.items() if stack}
    assert len(expected) > 1000
    assert _state(project) == expected
    assert _full_replay(project) == expected
    project.close()


def test_decide_says_what_changed(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p")
    project.documents.import_documents(read_corpus(_pubtator(tmp_path / "c.pubtator", 3, 2), "pubtator"))
    docs = list(project.documents.documents_with_mention_ids(None))
    (doc_a, (a1, a2)), (doc_b, (b1, _b2)) = docs[0], docs[1]
    changes = project.curation.decide([NewDecision(a1, "nil"), NewDecision(a2, "reject"), NewDecision(b1, "nil")])
    assert changes.mentions == {a1, a2, b1}
    assert changes.documents == {doc_a.doc_id, doc_b.doc_id}
    assert (changes.newly_decided, changes.undecided) == (3, 0)
    again = project.curation.decide([NewDecision(a1, "correct", "D001")])
    assert (again.newly_decided, again.undecided, again.documents) == (0, 0, {doc_a.doc_id})
    undo = project.curation.decide([NewDecision(b1, "revert")])
    assert (undo.newly_decided, undo.undecided, undo.mentions) == (0, 1, {b1})
    assert set(project.curation.current_decisions()) == {a1, a2}
    project.close()


def test_a_decision_on_a_mention_deleted_elsewhere_is_refused(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p")
    project.documents.import_documents(read_corpus(_pubtator(tmp_path / "c.pubtator", 1, 2), "pubtator"))
    first, second = _all_mention_ids(project)
    other = Project.open(tmp_path / "p")  # another process's view of the same folder
    other.documents.set_mention_removed(first, curator="bob")
    other.close()
    with pytest.raises(CuralinkError, match=f"mention {first} was deleted"):
        project.curation.record_decisions([NewDecision(second, "nil"), NewDecision(first, "nil")])
    assert project.curation.current_decisions() == {}, "nothing of the refused bulk decision was written"
    with project.session() as session:
        assert session.query(DecisionRow).filter(DecisionRow.action == "nil").count() == 0
    project.close()


def test_the_migration_fills_the_table_on_a_project_made_by_the_landed_version(
    tmp_path: Path, fixtures_dir: Path
) -> None:
    root = tmp_path / "landed"
    root.mkdir()
    with gzip.open(fixtures_dir / "projects" / "landed-0002.db.gz") as packed:
        (root / "curalink.db").write_bytes(packed.read())
    landed_state = json.loads((fixtures_dir / "projects" / "landed-0002-state.json").read_text())
    project = Project.open(root)
    state = {
        str(m): [row.id, row.action, row.concept_id, row.curator]
        for m, row in project.curation.current_decisions().items()
    }
    assert state == landed_state
    with sqlite3.connect(root / "curalink.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchone()[0] >= "0003"
    project.close()


@pytest.fixture
def decided(tmp_path: Path) -> Path:
    project = Project.create(tmp_path / "p")
    project.documents.import_documents(read_corpus(DEMO / "abstracts.pubtator", "pubtator"))
    ids = _all_mention_ids(project)
    project.curation.record_decisions([NewDecision(m, "nil") for m in ids[:5]])
    project.curation.record_decision(ids[0], "revert")
    project.close()
    return tmp_path / "p"


def _expected_after_raw_writes(path: Path) -> dict[int, int]:
    """The state a plain replay of the rows in the file gives, computed with sqlite3 alone."""
    stacks: dict[int, list[int]] = {}
    with sqlite3.connect(path / "curalink.db") as db:
        for decision_id, mention_id, action in db.execute(
            "SELECT id, mention_id, action FROM decisions ORDER BY id"
        ):
            stack = stacks.setdefault(mention_id, [])
            if action == "revert":
                stack[-1:] = []
            elif action not in ("adjust_span", "change_type", "add_mention", "delete_mention"):
                stack.append(decision_id)
    return {m: s[-1] for m, s in stacks.items() if s}


def _tamper(path: Path, *statements: str) -> None:
    with sqlite3.connect(path / "curalink.db") as db:
        for statement in statements:
            db.execute(statement)


@pytest.mark.parametrize(
    "statements",
    [
        pytest.param(("DROP TABLE mention_state",), id="missing"),
        pytest.param(
            (
                "INSERT INTO decisions (mention_id, action, concept_id, curator, model_version, detail_json, "
                "created_at) SELECT mention_id, 'nil', '', 'x', '', '{}', created_at FROM decisions "
                "WHERE action = 'revert'",
            ),
            id="behind-the-log",
        ),
        pytest.param(("DELETE FROM settings WHERE key = 'curation.state_through_decision'",), id="no-mark"),
    ],
)
def test_a_table_out_of_step_is_rebuilt_on_open(decided: Path, statements, caplog) -> None:
    _tamper(decided, *statements)
    expected = _expected_after_raw_writes(decided)
    with caplog.at_level(logging.WARNING, logger="core.store.mention_state"):
        project = Project.open(decided)
    assert "rebuilt it from the decision log" in caplog.text
    assert _state(project) == expected
    project.close()
    caplog.clear()
    copy = decided.parent / "again"
    shutil.copytree(decided, copy)
    with caplog.at_level(logging.WARNING, logger="core.store.mention_state"):
        Project.open(copy).close()
    assert "rebuilt" not in caplog.text, "once rebuilt, the table is current"


def test_queue_counts_and_margins_match_a_computation_from_the_raw_rows(tmp_path: Path) -> None:
    """The queue is one SQL aggregate; here the same figures come from plain rows read with sqlite3."""
    from core.documents import Candidate
    from core.store.curation_log import mention_key

    project = Project.create(tmp_path / "p")
    project.documents.import_documents(read_corpus(_pubtator(tmp_path / "c.pubtator", 30, 4), "pubtator"))
    rng = random.Random(5)
    keyed = {
        m: mention_key(mention)
        for d, ids in project.documents.documents_with_mention_ids(None)
        for mention, m in zip(d.mentions, ids, strict=True)
    }
    suggested = {
        m: [
            Candidate(f"D{c}", "n", "n", rng.random(), rng.choice([None, rng.random()]))
            for c in range(rng.choice([1, 2, 5]))
        ]
        for m in keyed
        if rng.random() < 0.8
    }
    project.curation.store_suggestions(suggested, computed_for={m: keyed[m] for m in suggested})
    ids = list(keyed)
    project.curation.record_decisions([NewDecision(rng.choice(ids), rng.choice(LINKS[1:])) for _ in range(40)])
    project.curation.record_decisions([NewDecision(rng.choice(ids), "revert") for _ in range(10)])
    project.documents.set_mention_removed(ids[3])
    expected: dict[str, list] = {}
    with sqlite3.connect(tmp_path / "p" / "curalink.db") as db:
        docs = dict(db.execute("SELECT id, external_id FROM documents"))
        for doc in docs.values():
            expected[doc] = [0, 0, 0, 1.0]
        decided = _expected_after_raw_writes(tmp_path / "p")
        scores: dict[int, list] = {}
        for mention_id, _rank, retrieved, reranked in db.execute(
            "SELECT mention_id, rank, retriever_score, reranker_score FROM suggestions ORDER BY mention_id, rank"
        ):
            scores.setdefault(mention_id, []).append(retrieved if reranked is None else reranked)
        for mention_id, document_id in db.execute("SELECT id, document_id FROM mentions WHERE removed = 0"):
            row = expected[docs[document_id]]
            row[0] += 1
            row[1] += mention_id in decided
            ranked = scores.get(mention_id)
            if not ranked:
                row[2] += 1
            elif mention_id not in decided:
                row[3] = min(row[3], abs(ranked[0] - ranked[1]) if len(ranked) > 1 else 1.0)
    got = {e.doc_id: [e.mentions, e.reviewed, e.unsuggested, e.margin] for e in project.desk.queue()}
    assert got.keys() == expected.keys()
    for doc, row in expected.items():
        assert got[doc][:3] == row[:3], doc
        assert got[doc][3] == pytest.approx(row[3]), doc
    some = sorted(expected)[:3]
    assert {
        e.doc_id: [e.mentions, e.reviewed, e.unsuggested, e.margin] for e in project.desk.queue(doc_ids=some)
    } == {d: got[d] for d in some}
    project.close()


def test_span_type_and_mention_edits_do_not_put_the_table_behind_the_log(decided: Path, caplog) -> None:
    """Edits are logged as decisions but never enter the table: after a span edit, a type change, an added
    and a deleted mention (what a curator does between decisions), reopening finds the table current
    (issue 31: a false "current-state table … rebuilt" warning followed every span edit)."""
    project = Project.open(decided)
    ids = _all_mention_ids(project)
    doc_id = next(iter(project.documents.documents_with_mention_ids(None)))[0].doc_id
    project.documents.set_mention_span(ids[1], *_span_shrunk(project, ids[1]), curator="c")
    project.documents.set_mention_type(ids[2], "Other", curator="c")
    added = project.documents.add_mention(doc_id, 0, 3, type="Disease", curator="c")
    project.documents.set_mention_removed(added, curator="c")
    project.close()
    with caplog.at_level(logging.WARNING, logger="core.store.mention_state"):
        project = Project.open(decided)
    assert "rebuilt" not in caplog.text
    assert _state(project) == _expected_after_raw_writes(decided)
    project.close()


def _span_shrunk(project: Project, mention_id: int) -> tuple[int, int]:
    _doc, _start, _end, text, _origin = project.documents.mention_positions()[mention_id]
    start, end = _start, _end
    return (start, end - 1) if len(text) > 1 else (start, end)
