"""Run one child process of a trial: wait for its `ready`, then let it finish or SIGKILL it after a delay,
and collect what it reported on the way (committed decisions, lock messages, its exit)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

READY_TIMEOUT_S = 180
RUN_TIMEOUT_S = 600


@dataclass
class ChildRun:
    """What one child did: its protocol lines, exit code, stderr, and timing from `ready`."""

    argv: list[str]
    ready: bool = False
    killed: bool = False
    returncode: int | None = None
    seconds: float = 0.0  # from `ready` to the exit or the kill
    committed: list[dict] = field(default_factory=list)
    locked: list[str] = field(default_factory=list)
    reports: dict[str, dict] = field(default_factory=dict)  # other `kind {json}` lines, the last of each
    stdout: list[str] = field(default_factory=list)
    stderr: str = ""


def child_command(operation: str, project: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "bench.faults.child", operation, str(project), *options]


class Child:
    """A started child process whose stdout is read line by line in a thread."""

    def __init__(self, argv: list[str], *, stdin: bool = False, env: dict | None = None):
        self.run = ChildRun(argv)
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
            start_new_session=True,
        )
        self._ready = threading.Event()
        self._lines = threading.Condition()
        self._ready_at = 0.0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            line = line.rstrip("\n")
            with self._lines:
                self.run.stdout.append(line)
                kind, _, payload = line.partition(" ")
                if kind == "ready":
                    self._ready_at = time.monotonic()
                    self.run.ready = True
                    self._ready.set()
                elif kind == "committed":
                    self.run.committed.append(json.loads(payload))
                elif kind == "locked":
                    self.run.locked.append(json.loads(payload))
                elif payload.startswith("{"):
                    try:
                        self.run.reports[kind] = json.loads(payload)
                    except json.JSONDecodeError:
                        pass
                self._lines.notify_all()

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> bool:
        return self._ready.wait(timeout)

    def wait_report(self, kind: str, timeout: float) -> dict | None:
        """Block until the child printed `kind {...}` (or exited, or the time ran out)."""
        deadline = time.monotonic() + timeout
        with self._lines:
            while kind not in self.run.reports:
                left = deadline - time.monotonic()
                if left <= 0 or (self.process.poll() is not None and not self._reader.is_alive()):
                    break
                self._lines.wait(min(left, 0.2))
            return self.run.reports.get(kind)

    def send(self, line: str) -> None:
        if self.process.poll() is None:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)  # the child and anything it started
            self.run.killed = True

    def finish(self, timeout: float = RUN_TIMEOUT_S) -> ChildRun:
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.process.wait()
            self.run.stderr = "the harness killed it: no exit within the time limit\n"
        end = time.monotonic()
        self._reader.join(timeout=30)
        self.run.returncode = self.process.returncode
        self.run.seconds = end - self._ready_at if self._ready_at else 0.0
        self._stderr.seek(0)
        self.run.stderr += self._stderr.read()
        self._stderr.close()
        return self.run


def run_child(
    argv: list[str], *, kill_after: float | None = None, timeout: float = RUN_TIMEOUT_S
) -> ChildRun:
    """Start a child; once it is ready, SIGKILL it after `kill_after` seconds (None: let it finish)."""
    child = Child(argv)
    if not child.wait_ready():
        child.kill()
        return child.finish()
    if kill_after is not None:
        try:
            child.process.wait(kill_after)
        except subprocess.TimeoutExpired:
            child.kill()
    return child.finish(timeout)
