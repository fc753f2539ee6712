"""`train KIND`: one subcommand per registered model kind (core.model_kinds), its options declared there."""

from __future__ import annotations

import time

from app.cli.kind_options import add_options, keywords
from app.console import cancellable, open_project, progress_bar, stdout
from core.jobs.models.kinds import KINDS, ModelKind


def cmd_train(args) -> int:
    from core.jobs.models.kinds import train

    spec = KINDS[args.train_command]
    options = keywords(args, spec.commands.train_options)
    if spec.commands.train_keywords:
        options = spec.job(spec.commands.train_keywords)(**options)
    promote = options.pop("promote", "always")
    started = time.perf_counter()
    with (
        open_project(args) as project,
        cancellable() as cancel,
        progress_bar(f"training the {spec.name}") as bar,
    ):
        trained = train(project, spec.name, promote=promote, progress=bar, cancel=cancel, **options)
    stdout.print(trained.message or f"{spec.name} {trained.version} saved in {trained.path} and {trained.verdict}")
    if trained.trained and spec.commands.train_lines:
        for line in spec.job(spec.commands.train_lines)(trained, time.perf_counter() - started):
            stdout.print(line)
    return 0


def add_train_command(train, spec: ModelKind) -> None:
    parser = train.add_parser(spec.name, help=spec.commands.train_help)
    add_options(parser, spec.commands.train_options)
    parser.set_defaults(handler=cmd_train)


def register(commands) -> None:
    """Add `train KIND` for every registered kind to the `curalink` parser."""
    train = commands.add_parser("train", help="train a model").add_subparsers(dest="train_command", required=True)
    for spec in KINDS.values():
        add_train_command(train, spec)
