"""A model kind's CLI options, declared as data in the registry (core.model_kinds.Option), made parser
arguments the parser checks (app.cli.arguments), and read back as the kind's job keywords."""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from app.cli.arguments import MAX_CANDIDATES, input_path, number, whole
from core.jobs.models.kinds import Option


def add_options(parser: argparse.ArgumentParser, options: Iterable[Option]) -> None:
    for option in options:
        if option.value == "switch":
            parser.add_argument(option.flag, action="store_true", help=option.help)
            continue
        extra: dict = {}
        if option.value == "choice":
            extra["choices"] = list(option.choices)
        elif option.value == "whole":
            extra["type"] = whole(_bound(option.minimum), _bound(option.maximum))
        elif option.value == "candidates":
            extra["type"] = whole(1, MAX_CANDIDATES)
        elif option.value == "number":
            extra["type"] = number(option.minimum, option.maximum, above=option.above)
        elif option.value == "folder":
            extra["type"] = input_path("folder")
        parser.add_argument(option.flag, default=option.default, help=option.help, **extra)


def _bound(value: float | None) -> int | None:
    return None if value is None else int(value)


def keywords(args: argparse.Namespace, options: Iterable[Option]) -> dict:
    """The parsed values of `options` under the job's keywords (the CLI's own, --json, left out)."""
    return {
        option.keyword or option.dest: getattr(args, option.dest)
        for option in options
        if option.keyword != "-"
    }
