"""A long curating session driven through a real X server, as a new user's fingers would drive it (issue 31's
"done when"): the desk is started as `curalink -p PROJECT` is, keys and clicks go to its window through
`xdotool` (focus wherever the last click or dialog left it), and the desk is quit and started again
several times. At the end the project's own log and decisions are compared by `bench desk-opened`:
nothing may be stored on a document the desk never opened.

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m bench.gui.session PROJECT --minutes 30 --restarts 6

A benchmark harness, not a test: it takes as long as it is told, and prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from app.console import print_json, stderr

# keys a curator presses, with how often; dialogs they open are closed by the Escape that follows some
KEYS: list[tuple[tuple[str, ...], int]] = [
    (("Return",), 12),
    (("1",), 5),
    (("2",), 4),
    (("3",), 2),
    (("j",), 6),
    (("k",), 3),
    (("Tab",), 4),
    (("r",), 2),
    (("n",), 1),
    (("d",), 2),
    (("ctrl+Down",), 4),
    (("ctrl+Up",), 1),
    (("Next",), 1),
    (("ctrl+z",), 2),
    (("ctrl+shift+z",), 1),
    (("shift+e",), 1),
    (("f",), 1),
    (("b",), 1),
    (("x",), 1),
    (("alt+1",), 1),
    (("alt+4",), 1),
    (("ctrl+shift+m",), 1),
    (("ctrl+d", "Escape"), 1),
    (("ctrl+b", "Escape"), 1),
    (("ctrl+f", "type:cancer", "Return"), 2),
    (("ctrl+f", "type:deficiency", "Escape"), 1),
    (("ctrl+g", "Escape"), 1),
    (("e", "type:check", "Escape"), 1),
    (("Escape",), 2),
    (("click-queue",), 4),
    (("click-text",), 3),
]


def _xdotool(*args: str) -> str:
    done = subprocess.run(["xdotool", *args], capture_output=True, text=True, timeout=30)
    return done.stdout.strip()


def _window(timeout_s: float) -> str:
    """The desk's main window id, once it is mapped."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ids = _xdotool("search", "--onlyvisible", "--name", "Curalink").split()
        if ids:
            return ids[-1]
        time.sleep(1.0)
    raise RuntimeError(f"no Curalink window within {timeout_s:.0f} s")


def _press(window: str, action: tuple[str, ...], rng: random.Random) -> None:
    geometry = dict(
        line.split("=")
        for line in _xdotool("getwindowgeometry", "--shell", window).splitlines()
        if "=" in line
    )
    width, height = int(geometry.get("WIDTH", 1500)), int(geometry.get("HEIGHT", 880))
    for step in action:
        if step == "click-queue":  # a row of the document queue, left pane
            _xdotool(
                "mousemove", "--window", window, str(int(width * 0.12)), str(rng.randint(170, height - 120))
            )
            _xdotool("click", "1")
        elif step == "click-text":  # somewhere in the abstract
            _xdotool(
                "mousemove",
                "--window",
                window,
                str(int(width * rng.uniform(0.3, 0.55))),
                str(rng.randint(160, height - 80)),
            )
            _xdotool("click", "1")
        elif step.startswith("type:"):
            _xdotool("type", "--delay", "60", step[5:])
        else:
            _xdotool("key", "--clearmodifiers", step)
        time.sleep(0.25)


def run_session(project: Path, minutes: float, restarts: int, seed: int, curalink: list[str]) -> dict:
    rng = random.Random(seed)
    actions = [a for a, weight in KEYS for _ in range(weight)]
    env = {**os.environ, "CURALINK_CURATOR": os.environ.get("CURALINK_CURATOR", "session")}
    started = time.monotonic()
    deadline = started + minutes * 60
    per_run = minutes * 60 / (restarts + 1)
    runs: list[dict] = []
    begun = time.strftime("%Y-%m-%dT%H:%M:%S")
    while time.monotonic() < deadline:
        desk = subprocess.Popen([*curalink, "-p", str(project)], env=env)
        run_start = time.monotonic()
        pressed = 0
        try:
            window = _window(180)
            time.sleep(3.0)
            stop = min(deadline, run_start + per_run)
            while time.monotonic() < stop and desk.poll() is None:
                _press(window, rng.choice(actions), rng)
                pressed += 1
                time.sleep(rng.uniform(0.2, 1.5))
        finally:
            if desk.poll() is None:
                _xdotool("key", "--clearmodifiers", "Escape")
                _xdotool("key", "--clearmodifiers", "ctrl+q")
                try:
                    desk.wait(60)
                except subprocess.TimeoutExpired:
                    desk.send_signal(signal.SIGTERM)
                    desk.wait(60)
        runs.append(
            {"seconds": round(time.monotonic() - run_start), "actions": pressed, "exit": desk.returncode}
        )
    check = subprocess.run(
        [*curalink, "-p", str(project), "bench", "desk-opened", "--since", begun, "--json"],
        capture_output=True,
        text=True,
    )
    return {
        "project": str(project),
        "minutes": round((time.monotonic() - started) / 60, 1),
        "starts": len(runs),
        "runs": runs,
        "desk_opened_exit": check.returncode,
        "desk_opened": json.loads(check.stdout)
        if check.stdout.strip().startswith("{")
        else check.stdout[-2000:],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--restarts", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if shutil.which("xdotool") is None or not os.environ.get("DISPLAY"):
        stderr.print("needs xdotool and an X display (run it under xvfb-run)")
        return 2
    curalink = [sys.executable, "-m", "app.cli"]
    result = run_session(args.project, args.minutes, args.restarts, args.seed, curalink)
    print_json(result)
    return 0 if result["desk_opened_exit"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
