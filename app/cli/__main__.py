"""`python -m app.cli` runs the `curalink` command (the packaged app's entry point too)."""

from app.cli import main

raise SystemExit(main())
