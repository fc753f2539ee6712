"""`bench_learning` end to end on a small real slice of NCBI-disease and MEDIC (shared data)."""

from __future__ import annotations

import json
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def test_bench_learning_small(shared_data, tmp_path):
    from core.evaluate.bench_learning import ORDERS, bench_learning

    seen = []
    summary = bench_learning(
        shared_data,
        tmp_path,
        pool=6,
        step=3,
        seconds_per_retrain=1.0,
        kb_concepts=300,
        eval_documents=8,
        progress=lambda done, total, message="": seen.append((done, total)),
    )
    assert seen[-1] == (5, 5)
    assert set(summary["curves"]) == set(ORDERS)
    for points in summary["curves"].values():
        assert [p["documents"] for p in points] == [0, 3, 6]
        assert all(0.0 <= p["acc@1"] <= 100.0 for p in points)
        assert points[-1]["mentions"] > points[1]["mentions"] > 0
    # both orders start from the same zero-shot model
    assert summary["curves"]["uncertainty"][0] == summary["curves"]["random"][0]
    assert summary["rest_documents"] == 8 and summary["kb_concepts"] >= 300
    assert json.loads((tmp_path / "learning_curves.json").read_text())["curves"] == summary["curves"]
    assert (tmp_path / "learning_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
