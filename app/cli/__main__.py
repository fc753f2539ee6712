"""`python -m app.cli` runs the `curalink` command (the packaged app's entry point too)."""

import multiprocessing

# The desk links in a child process started with "spawn": in the packaged app that child is this same
# executable, which must hand it to multiprocessing before doing anything else.
multiprocessing.freeze_support()

from app.cli import main  # noqa: E402

raise SystemExit(main())
