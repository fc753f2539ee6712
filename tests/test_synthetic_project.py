"""The synthetic desk project (bench desk): its PubTator file is well-formed (every annotation is the text at
its offsets), the import stores what the files hold, and the simulated curator's decisions give the
reviewed count replayed here by hand."""

from __future__ import annotations

from pathlib import Path

from bench.desk_store import CuratorSimulation, summary
from bench.synthetic.project import TOP_K, SyntheticSizes, build_synthetic_project
from core.store import Project


def _blocks(path: Path) -> list[list[str]]:
    return [block.splitlines() for block in path.read_text(encoding="utf-8").split("\n\n") if block.strip()]


def test_synthetic_files_import_and_decisions(tmp_path: Path):
    sizes = SyntheticSizes(documents=30, mentions_per_document=6, concepts=60)
    root = build_synthetic_project(tmp_path, sizes, seed=3)
    annotations = 0
    for name, expected in (("synthetic-train.pubtator", 24), ("synthetic-test.pubtator", 6)):
        blocks = _blocks(tmp_path / name)
        assert len(blocks) == expected
        for lines in blocks:
            title, abstract = lines[0].split("|t|", 1)[1], lines[1].split("|a|", 1)[1]
            text = f"{title} {abstract}"
            for line in lines[2:]:
                _pmid, start, end, mention, kind, concept = line.split("\t")
                assert text[int(start) : int(end)] == mention and kind == "Disease"
                assert concept.startswith("SYN")
                annotations += 1
    assert build_synthetic_project(tmp_path, sizes, seed=3) == root  # reused, not rebuilt
    with Project.open(root) as project:
        stats = project.desk.stats()
        assert stats["documents"] == 30 and stats["documents_by_split"] == {"train": 24, "test": 6}
        assert stats["mentions"] == annotations
        assert stats["suggestions"] == TOP_K * annotations
        simulation = CuratorSimulation(project)
        assert simulation.write(40, batch=15) == 40
        made = project.curation.current_decisions()
        log = sorted(_all_decisions(project))  # in the order written
    reviewed: set[int] = set()
    for _id, mention_id, action in log:
        if action == "revert":
            reviewed.discard(mention_id)
        else:
            reviewed.add(mention_id)
    assert {a for _i, _m, a in log} >= {"accept", "revert"}
    assert set(made) == reviewed


def _all_decisions(project) -> list[tuple[int, int, str]]:
    from sqlalchemy import select

    from core.store.schema import DecisionRow

    with project.session() as session:
        return [
            tuple(row)
            for row in session.execute(select(DecisionRow.id, DecisionRow.mention_id, DecisionRow.action))
        ]


def test_summary_percentiles():
    figures = summary([float(n) for n in range(1, 101)])  # 1..100 ms
    assert figures == {"n": 100, "p50": 50.5, "p95": 95.0, "max": 100.0}
    assert summary([])["p95"] is None
