"""The project's log file: one project at a time, and a log that fails (full disk) takes nothing else down.

Before: a failing project log removed itself from the root logger while the logger was handing the record
round, which skipped the next handler, so the warning that the index could not be saved never reached the
console (or a test's capture); and a desk that opened a second project went on writing into the first
project's log.
"""

from __future__ import annotations

import logging
import resource
import signal
from pathlib import Path

from app.console import ProjectLogHandler, log_to_project


def _project_handlers() -> list[logging.Handler]:
    return [h for h in logging.getLogger().handlers if isinstance(h, ProjectLogHandler)]


def _cleanup() -> None:
    root = logging.getLogger()
    for handler in _project_handlers():
        root.removeHandler(handler)
        handler.close()


def test_opening_a_second_project_stops_logging_into_the_first(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    root, level = logging.getLogger(), logging.getLogger().level
    root.setLevel(logging.INFO)
    try:
        log_to_project(first)
        logging.getLogger("core.test").info("while A is open")
        log_to_project(second)
        logging.getLogger("core.test").info("while B is open")
        assert len(_project_handlers()) == 1
    finally:
        root.setLevel(level)
        _cleanup()
    a_log = (first / "logs" / "curalink.log").read_text(encoding="utf-8")
    b_log = (second / "logs" / "curalink.log").read_text(encoding="utf-8")
    assert "while A is open" in a_log and "while B is open" not in a_log
    assert "while B is open" in b_log and "while A is open" not in b_log


def test_a_failing_project_log_does_not_hide_the_record_from_the_next_handler(tmp_path: Path) -> None:
    class Collect(logging.Handler):
        def __init__(self) -> None:
            super().__init__(logging.DEBUG)
            self.messages: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.messages.append(record.getMessage())

    root = logging.getLogger()
    log_to_project(tmp_path)
    after = Collect()
    root.addHandler(after)  # placed after the project log in the root's list
    log_file = tmp_path / "logs" / "curalink.log"
    log_file.write_bytes(b"x" * 200)  # the log is already past the limit below
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100, hard))
    try:
        logging.getLogger("core.test").warning("the index could not be written")
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
        root.removeHandler(after)
    try:
        assert after.messages == ["the index could not be written"]
        assert _project_handlers() == []  # the failed log stopped, once
        logging.getLogger("core.test").warning("later")
        assert log_file.read_bytes() == b"x" * 200
    finally:
        _cleanup()
