"""The queue read from `queue_summary` (issue 31 item 9): after every kind of write (decisions and undo,
suggestions replaced, mentions deleted and added, "done" marks, another program's raw SQL) its rows, its
order by uncertainty and its status filters equal a computation from the raw rows with sqlite3 alone, on
real NCBI-disease abstracts; and migration 0005 fills the table on a project made by 3a10820."""

from __future__ import annotations

import gzip
import itertools
import json
import random
import re
import sqlite3
from pathlib import Path

import pytest

from core.documents import Candidate
from core.formats import read_corpus
from core.store import Project
from core.store.curation_log import NewDecision, mention_key
from core.store.queue_summary import TRIGGERS

LINKS = ("accept", "nil", "reject")
EDITS = ("adjust_span", "change_type", "add_mention", "delete_mention")


def _expected(db_path: Path) -> dict[str, tuple]:
    """Per document: (mentions, reviewed, unsuggested, margin, done), from plain rows. Its own replay:
    link decisions stack per mention, a revert pops, edits are skipped; the newest "done" mark counts."""
    with sqlite3.connect(db_path) as db:
        stacks: dict[int, list[str]] = {}
        for mention_id, action in db.execute("SELECT mention_id, action FROM decisions ORDER BY id"):
            stack = stacks.setdefault(mention_id, [])
            if action == "revert":
                stack[-1:] = []
            elif action not in EDITS:
                stack.append(action)
        decided = {m for m, stack in stacks.items() if stack}
        scores: dict[int, list[float]] = {}
        for mention_id, retrieved, reranked in db.execute(
            "SELECT mention_id, retriever_score, reranker_score FROM suggestions ORDER BY mention_id, rank"
        ):
            scores.setdefault(mention_id, []).append(retrieved if reranked is None else reranked)
        done: dict[int, str] = {}
        for document_id, value in db.execute(
            "SELECT document_id, value FROM curation_marks WHERE kind = 'done' AND mention_id IS NULL ORDER BY id"
        ):
            done[document_id] = value
        docs = dict(db.execute("SELECT id, external_id FROM documents ORDER BY id"))
        rows = {doc: [0, 0, 0, 1.0, bool(done.get(i))] for i, doc in docs.items()}
        for mention_id, document_id in db.execute("SELECT id, document_id FROM mentions WHERE removed = 0"):
            row = rows[docs[document_id]]
            row[0] += 1
            row[1] += mention_id in decided
            ranked = scores.get(mention_id)
            if not ranked:
                row[2] += 1
            elif mention_id not in decided:
                row[3] = min(row[3], abs(ranked[0] - ranked[1]) if len(ranked) > 1 else 1.0)
    return {doc: tuple(row) for doc, row in rows.items()}


def _numeric(doc_id: str) -> tuple:
    return (0, int(doc_id), doc_id) if doc_id.isdigit() else (1, 0, doc_id)


def _order_and_filters(rows: dict[str, tuple]) -> tuple[list[str], dict[str, list[str]]]:
    """The desk's order by uncertainty (margin at two decimals, more open mentions first, then id) and
    its status filters, written out from the figures."""
    order = sorted(rows, key=lambda d: (round(rows[d][3], 2), -(rows[d][0] - rows[d][1]), _numeric(d)))
    status = {
        d: "done" if r[4] or (r[0] and r[1] >= r[0]) else "in progress" if r[1] else "unreviewed"
        for d, r in rows.items()
    }
    return order, {s: sorted(d for d in rows if status[d] == s) for s in ("done", "in progress", "unreviewed")}


def _check(project: Project, db_path: Path, some: list[str]) -> None:
    expected = _expected(db_path)
    entries = project.desk.queue()
    assert [e.doc_id for e in entries] == list(expected), "documents in store order"
    got = {e.doc_id: (e.mentions, e.reviewed, e.unsuggested, e.margin, e.marked_done) for e in entries}
    for doc, row in expected.items():
        assert got[doc][:3] == row[:3] and got[doc][4] == row[4], doc
        assert got[doc][3] == pytest.approx(row[3]), doc
    order, filters = _order_and_filters(expected)
    assert [d for d in order] == _order_and_filters(got)[0]
    by_status = {s: sorted(e.doc_id for e in entries if e.status == s) for s in filters}
    assert by_status == filters
    subset = {e.doc_id: e for e in project.desk.queue(doc_ids=some)}
    assert {d: (e.mentions, e.reviewed, e.unsuggested, e.margin, e.marked_done) for d, e in subset.items()} == {
        d: got[d] for d in some if d in got
    }


def _stale(db_path: Path) -> int:
    with sqlite3.connect(db_path) as db:
        return db.execute("SELECT count(*) FROM queue_stale").fetchone()[0]


def test_the_queue_equals_a_computation_from_raw_rows_after_every_kind_of_write(
    tmp_path: Path, ncbi_dir: Path
) -> None:
    root = tmp_path / "p"
    db_path = root / "curalink.db"
    project = Project.create(root)
    documents = itertools.islice(read_corpus(ncbi_dir / "NCBIdevelopset_corpus.txt", "pubtator"), 40)
    project.documents.import_documents(documents, split="dev")
    rng = random.Random(31)
    keyed = {
        m: mention_key(mention)
        for d, ids in project.documents.documents_with_mention_ids(None)
        for mention, m in zip(d.mentions, ids, strict=True)
    }
    ids = sorted(keyed)
    docs = [d.doc_id for d, _ in project.documents.documents_with_mention_ids(None)]
    some = [docs[0], docs[7], docs[-1], "not-a-document"]
    assert len(docs) == 40 and len(ids) > 200
    _check(project, db_path, some)

    def suggest(mentions: list[int]) -> None:
        ranked = {
            m: [
                Candidate(f"D{rng.randrange(900):06d}", "n", "n", rng.random(), rng.choice([None, rng.random()]))
                for _ in range(rng.choice([1, 2, 2, 5]))
            ]
            for m in mentions
        }
        project.curation.store_suggestions(ranked, computed_for={m: keyed[m] for m in ranked})

    suggest([m for m in ids if rng.random() < 0.8])
    _check(project, db_path, some)
    assert _stale(db_path) == 0, "the writing transaction folded what it made stale"
    for _ in range(6):
        project.curation.record_decisions(
            [NewDecision(rng.choice(ids), rng.choice(LINKS), "D000001") for _ in range(30)]
        )
        project.curation.record_decisions([NewDecision(rng.choice(ids), "revert") for _ in range(8)])
        _check(project, db_path, some)
    suggest(rng.sample(ids, 60))  # a relink replaces lists: ranks 1-2 move
    project.curation.store_suggestions({m: [] for m in rng.sample(ids, 15)})  # lists cleared
    _check(project, db_path, some)
    project.documents.set_mention_removed(ids[3], curator="ann")
    project.documents.set_mention_removed(ids[4])
    project.documents.set_mention_removed(ids[4], False)
    project.documents.add_mention(docs[5], 0, 4, type="Disease", curator="ann")
    _check(project, db_path, some)
    project.marks.set_mark("done", "true", document=docs[7], curator="ann")
    project.marks.set_mark("done", "true", document=docs[8], curator="ann")
    project.marks.set_mark("done", "", document=docs[8], curator="ann")  # cleared: the newest counts
    project.marks.set_mark("flag", "true", document=docs[9], curator="ann")  # not a done mark
    _check(project, db_path, some)
    assert _stale(db_path) == 0
    # another program writes with plain SQL: the triggers mark the documents, nobody folds them, and the
    # queue aggregates them live until the next write through the store folds them
    with sqlite3.connect(db_path) as db:
        db.execute("DELETE FROM suggestions WHERE mention_id IN (?, ?)", (ids[10], ids[40]))
        db.execute("UPDATE suggestions SET retriever_score = 0.5, reranker_score = NULL WHERE rank = 2")
        db.execute("UPDATE mentions SET removed = 1 WHERE id = ?", (ids[80],))
        db.execute(
            "INSERT INTO curation_marks (document_id, kind, value, curator, created_at) "
            "SELECT id, 'done', 'true', 'sql', '2026-12-04' FROM documents WHERE external_id = ?",
            (docs[20],),
        )
    assert _stale(db_path) > 0
    _check(project, db_path, some)
    project.curation.record_decisions([NewDecision(ids[100], "nil")])
    assert _stale(db_path) == 0
    _check(project, db_path, some)
    project.close()


def test_the_triggers_are_those_migration_0005_makes(tmp_path: Path) -> None:
    """core.store.queue_summary.TRIGGERS (made again with a rebuilt current-state table) and the
    migration's frozen copy are the same SQL: the schema check compares a project with the migrations."""
    project = Project.create(tmp_path / "p")
    with sqlite3.connect(tmp_path / "p" / "curalink.db") as db:
        made = dict(db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
    project.close()
    space = re.compile(r"\s+")
    assert {name: space.sub(" ", sql) for name, sql in made.items()} == dict(TRIGGERS)


def test_migration_0005_fills_the_table_on_a_project_made_by_3a10820(tmp_path: Path, fixtures_dir: Path) -> None:
    root = tmp_path / "landed"
    root.mkdir()
    with gzip.open(fixtures_dir / "projects" / "landed-0004.db.gz") as packed:
        (root / "curalink.db").write_bytes(packed.read())
    landed = json.loads((fixtures_dir / "projects" / "landed-0004-queue.json").read_text())
    project = Project.open(root)
    with sqlite3.connect(root / "curalink.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchone()[0] >= "0005"
        stored = db.execute("SELECT count(*) FROM queue_summary").fetchone()[0]
    assert stored == len(landed) and _stale(root / "curalink.db") == 0
    got = [[e.doc_id, e.mentions, e.reviewed, e.unsuggested, e.margin, e.marked_done] for e in project.desk.queue()]
    assert [row[0] for row in got] == [row[0] for row in landed]
    for mine, theirs in zip(got, landed, strict=True):
        assert mine[:4] == theirs[:4] and mine[5] == theirs[5], mine[0]
        assert mine[4] == pytest.approx(theirs[4]), mine[0]
    assert {d: tuple(r) for d, *r in got} == {
        d: (r[0], r[1], r[2], pytest.approx(r[3]), r[4]) for d, r in _expected(root / "curalink.db").items()
    }
    project.close()
