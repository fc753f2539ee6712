"""Issue 33, item 5: every CLI argument is validated by the parser. The test walks the argparse parser over
every subcommand: each argument that takes a value is a checked kind (app.cli.arguments) or a listed
free-text one, and for each checked argument a value out of its range, not of its kind, or a path of the
wrong kind (a FIFO as input, a file as an output folder, a path under a file) ends in one line on stderr
naming the argument, exit status 2, before any work: no traceback (`--candidates 0` was an
AssertionError, `--out` naming a file an OSError)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from app.cli import build_parser, main
from app.cli.arguments import Checked

# Arguments whose value is free text or checked by the command against the project (with the reason).
FREE_TEXT = {
    "project",  # -p: the project folder; opening it says what is wrong in one line
    "log_level",  # configure_logging names the levels
    "format",  # kb/corpus formats: the registry refuses an unknown name in one line
    "query", "text", "string", "concept", "version", "namespaces", "action", "pmids",  # text, checked later
    "address",  # a Ray address: checked by connecting
    "type", "split", "device", "mention_type", "source", "label", "kinds", "model",
    "bench_args",  # the harness parses its own
    "curator", "document", "documents",  # names and ids: checked against the project
    "language", "sab", "email", "api_key", "eutils_url", "name", "route", "spec", "origin", "status",
}
NO_VALUE = (
    argparse._StoreTrueAction,
    argparse._StoreFalseAction,
    argparse._HelpAction,
    argparse._CountAction,
    argparse._StoreConstAction,
    argparse._AppendConstAction,
    argparse._VersionAction,
)


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """(argv prefix, parser) of the top parser and every subcommand, depth first."""
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if name != "bench":
                    yield from _commands(sub, (*prefix, name))


def _valued(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, (*NO_VALUE, argparse._SubParsersAction)):
            continue
        yield action


@pytest.fixture
def places(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "file.txt").write_text("x\n", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    return {
        "file": str(tmp_path / "file.txt"),
        "folder": str(tmp_path / "folder"),
        "fifo": str(tmp_path / "fifo"),
        "new": str(tmp_path / "new-folder"),
        "under-file": str(tmp_path / "file.txt" / "below"),
    }


def _good(action: argparse.Action, places: dict[str, str]) -> str:
    if action.choices:
        return str(next(iter(action.choices)))
    kind = getattr(action.type, "kind", "")
    if kind.startswith("input"):
        return places["folder"] if kind == "input folder" else places["file"]
    if kind.startswith("output"):
        return places["new"]
    if kind == "day":
        return "2024-01-31"
    if kind in ("whole number", "number"):
        return str(max(1, int(action.type.minimum or 1)))
    return "D000001"


def _required(parser: argparse.ArgumentParser, places: dict[str, str]) -> list[str]:
    argv: list[str] = []
    for action in _valued(parser):
        if not action.option_strings and action.nargs not in ("*", "?", argparse.REMAINDER):
            argv.append(_good(action, places))
        elif action.option_strings and action.required:
            argv += [action.option_strings[0], _good(action, places)]
    return argv


def _bad_values(action: argparse.Action, places: dict[str, str]) -> list[str]:
    kind = action.type.kind
    if kind == "whole number":
        below = [str(int(action.type.minimum) - 1)] if action.type.minimum is not None else []
        return [*below, "x", "٣", "1.5"]
    if kind == "number":
        return [*([str(action.type.minimum - 1)] if action.type.minimum is not None else []), "x", "nan", "inf"]
    if kind.startswith("input"):
        return [places["fifo"], places["new"], *([places["file"]] if kind == "input folder" else [])]
    if kind == "output folder":
        return [places["file"], places["under-file"]]
    if kind == "output path":
        return [places["under-file"], places["fifo"]]
    if kind == "day":
        return ["2024-13-01", "yesterday"]
    if kind == "limit":
        return ["nolimit=3", "text-bytes=0", "text-bytes=x"]
    raise AssertionError(f"no bad values for the kind {kind!r}")


def test_every_argument_that_takes_a_value_is_checked_or_listed_as_free_text() -> None:
    unchecked = []
    for prefix, parser in _commands(build_parser()):
        for action in _valued(parser):
            if action.choices or isinstance(action.type, Checked) or action.dest in FREE_TEXT:
                continue
            unchecked.append(f"{' '.join(prefix) or 'curalink'} {action.option_strings or action.dest}")
    assert not unchecked, f"arguments the parser does not check: {unchecked}"


def test_each_bad_value_is_one_line_and_exit_2_before_any_work(places, capsys) -> None:
    checked = 0
    for prefix, parser in _commands(build_parser()):
        base = [*prefix, *_required(parser, places)] if prefix else []
        for action in _valued(parser):
            if not isinstance(action.type, Checked):
                continue
            for bad in _bad_values(action, places):
                if action.option_strings:
                    argv = [*base, action.option_strings[0], bad] if prefix else [action.option_strings[0], bad]
                else:
                    argv = [*prefix, *(bad if a is action else _good(a, places) for a in _positional(parser))]
                    argv += _required_options(parser, places)
                code = main(argv)
                err = capsys.readouterr().err
                assert code == 2, (argv, err)
                lines = [line for line in err.splitlines() if line.strip()]
                assert len(lines) == 1 and "Traceback" not in err, (argv, err)
                assert "error: argument" in lines[0], (argv, err)
                checked += 1
    assert checked > 80, checked  # every subcommand's numbers and paths were tried


def _positional(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a
        for a in _valued(parser)
        if not a.option_strings and a.nargs not in ("*", "?", argparse.REMAINDER)
        or (not a.option_strings and a.nargs == "*" and isinstance(a.type, Checked))
    ]


def _required_options(parser: argparse.ArgumentParser, places: dict[str, str]) -> list[str]:
    argv: list[str] = []
    for action in _valued(parser):
        if action.option_strings and action.required:
            argv += [action.option_strings[0], _good(action, places)]
    return argv


def test_the_issue_examples_are_one_line(places, capsys) -> None:
    for argv, words in (
        (["link-batch", places["file"], "--out", places["new"], "--candidates", "0"], "--candidates: 0 is below"),
        (["link-batch", places["file"], "--out", places["new"], "--candidates", "-5"], "--candidates: -5 is below"),
        (["link-batch", places["file"], "--out", places["file"]], "names a file; give a folder"),
        (["link-batch", places["file"], "--out", places["under-file"]], "cannot be created"),
        (["corpus", "fetch-pubmed", "--file", "/dev/zero"], "a device"),
    ):
        code = main(argv)
        err = capsys.readouterr().err.strip()
        assert code == 2 and "\n" not in err and words in err, err


def test_no_subcommand_option_overwrites_a_global_one() -> None:
    """A subcommand's option with a global option's dest replaces it in the namespace (`kb search
    --limit` once replaced the global --limit list, and every command then failed to apply it)."""
    top = build_parser()
    shared = {a.dest for a in _valued(top)} - {"help"}
    clashes = [
        f"{' '.join(prefix)} {a.option_strings}"
        for prefix, parser in _commands(top)
        if prefix
        for a in _valued(parser)
        if a.dest in shared
    ]
    assert not clashes, clashes
