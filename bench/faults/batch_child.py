"""A link-batch step in its own process, for the harness to kill at a chosen point (issue 24).

    python -m bench.faults.batch_child link-only PROJECT OUT INPUT...   link, the deletion pass not run
    python -m bench.faults.batch_child deletions OUT SAVE WHEN           the deletion pass, SIGKILL at the
                                                                        SAVE-th manifest save (WHEN:
                                                                        before or after it writes)

A real SIGKILL of this process, so no `finally` or atexit of the product runs: what a kill -9 leaves.
"""

from __future__ import annotations

import os
import signal
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv: list[str]) -> int:
    from core.batch import job
    from core.batch.deletions import apply_deletions
    from core.batch.manifest import Manifest
    from core.progress import NEVER_CANCELLED

    if argv[0] == "link-only":
        project, out, *inputs = argv[1:]
        job.apply_deletions = lambda manifest, cancel: 0  # this process links; the pass is killed later
        job.run_batch(inputs, out, project, detect=True)
        return 0
    out, kill_at, when = argv[1], int(argv[2]), argv[3]
    saves = {"count": 0}
    real_save = Manifest.save

    def save_then_die(self) -> None:
        saves["count"] += 1
        if saves["count"] == kill_at and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        real_save(self)
        if saves["count"] == kill_at and when == "after":
            os.kill(os.getpid(), signal.SIGKILL)

    Manifest.save = save_then_die
    manifest = Manifest.load(out)
    apply_deletions(manifest, NEVER_CANCELLED)
    sys.stdout.write(f"saves {saves['count']}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
