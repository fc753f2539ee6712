"""A retrain cancelled in any of its phases leaves the models in force as they were: nothing of the
cancelled model is registered and its scratch folder is gone (checked on the files, not on the report)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from core.errors import Cancelled  # noqa: E402
from core.housekeeping import SCRATCH_PREFIX  # noqa: E402
from core.jobs.models.retrain import KINDS, retrain  # noqa: E402
from core.jobs.models.retrain_plan import retrain_phases  # noqa: E402
from core.progress import CancelToken  # noqa: E402

PHASES = [name for name, _ in retrain_phases(KINDS, 1.0)]


def model_files(project) -> dict[str, set[str]]:
    return {
        kind: {p.name for p in (project.models_dir / kind).iterdir()}
        if (project.models_dir / kind).is_dir()
        else set()
        for kind in KINDS
    }


@pytest.mark.parametrize("phase", PHASES)
def test_cancel_in_each_phase_keeps_the_models_in_force(demo, tiny_bert, phase):
    for document, ids in demo.documents.documents_with_mention_ids():
        for mention, mention_id in zip(document.mentions, ids, strict=True):
            if len(mention.concept_ids) == 1:
                demo.curation.record_decision(mention_id, "accept", concept_id=mention.concept_id, curator="ann")
    in_force = {kind: (row.version if (row := demo.models.active_model(kind)) else None) for kind in KINDS}
    registered = {(v.kind, v.version) for v in demo.models.model_versions()}
    files = model_files(demo)
    token = CancelToken()
    seen: list[str] = []

    def progress(done, total, message=""):
        seen.append(message)
        if message.startswith(phase):
            token.cancel()  # the curator presses Cancel while this phase runs

    with pytest.raises(Cancelled):
        retrain(
            demo,
            kinds=KINDS,
            promote="always",  # a model finished before the cancel would be put in force
            max_seconds=1.0,
            epochs=1,
            held_out_fraction=0.34,
            device="cpu",
            base_model=str(tiny_bert),
            progress=progress,
            cancel=token,
        )
    assert any(m.startswith(phase) for m in seen)
    cancelled_kind = phase.split(":")[0]
    finished = [] if phase == "preparing" else list(KINDS[: KINDS.index(cancelled_kind)])
    after = {kind: (row.version if (row := demo.models.active_model(kind)) else None) for kind in KINDS}
    new = {(v.kind, v.version) for v in demo.models.model_versions()} - registered
    assert {kind for kind, _ in new} == set(finished)  # only models completed before the cancel
    for kind in KINDS:
        if kind in finished:
            continue
        assert after[kind] == in_force[kind]  # the model in force is untouched
        assert model_files(demo)[kind] == files[kind]  # no new version folder, no scratch left
    assert not any(name.startswith(SCRATCH_PREFIX) for names in model_files(demo).values() for name in names)
