"""A bounded coverage-guided fuzzing run of the corpus and vocabulary readers with atheris (libFuzzer).

Run it as `curalink bench fuzz --seconds 60` (PubTator, BioC XML, BioC JSON) or
`curalink bench fuzz --seconds 120 --formats all --json fuzz.json`. Each format is fuzzed in its own
process (`python -m bench.fuzz.readers --worker FORMAT ...`: libFuzzer ends the process it runs
in) for its share of the seconds, starting from the valid seed file of bench.fuzz.targets. An
input that makes the reader raise anything but a CuralinkError, or exceed the memory or per-input time
limit, is a crash, saved under the artifacts folder. atheris is an optional dependency (the `fuzz` extra).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.fuzz.targets import SEEDS
from core.errors import CuralinkError
from core.progress import ProgressFn, no_progress

DEFAULT_FORMATS = ("pubtator", "bioc-xml", "bioc-json")
MAX_INPUT_BYTES = 8192
RSS_LIMIT_MB = 2048
INPUT_TIMEOUT_S = 30


@dataclass
class FormatRun:
    fmt: str
    seconds: int
    executions: int = 0
    coverage: int = 0
    crashes: int = 0
    crash_files: list[str] = field(default_factory=list)
    crash_summary: str = ""
    returncode: int = 0


def _stat(output: str, name: str) -> int:
    found = re.findall(rf"stat::{name}:\s*(\d+)", output)
    return int(found[-1]) if found else 0


def run_format(fmt: str, seconds: int, artifacts: Path) -> FormatRun:
    """Fuzz one format in a child process (libFuzzer ends its process when it stops)."""
    artifacts.mkdir(parents=True, exist_ok=True)
    earlier = set(artifacts.glob(f"{fmt}-*"))
    with tempfile.TemporaryDirectory(prefix="curalink-fuzz-") as work:
        corpus, scratch = Path(work) / "corpus", Path(work) / "scratch"
        corpus.mkdir()
        scratch.mkdir()
        (corpus / "seed").write_bytes(SEEDS[fmt][1])
        command = [
            sys.executable,
            "-m",
            "bench.fuzz.readers",
            "--worker",
            fmt,
            str(scratch),
            str(corpus),
            f"-max_total_time={seconds}",
            f"-max_len={MAX_INPUT_BYTES}",
            f"-rss_limit_mb={RSS_LIMIT_MB}",
            f"-timeout={INPUT_TIMEOUT_S}",
            f"-artifact_prefix={artifacts}/{fmt}-",
            "-print_final_stats=1",
        ]
        done = subprocess.run(command, capture_output=True, text=True, errors="replace", check=False)
    output = done.stdout + done.stderr
    result = FormatRun(fmt, seconds, returncode=done.returncode)
    result.executions = _stat(output, "number_of_executed_units")
    result.coverage = max((int(n) for n in re.findall(r"\bcov: (\d+)", output)), default=0)
    result.crash_files = sorted(str(p) for p in set(artifacts.glob(f"{fmt}-*")) - earlier)
    result.crashes = len(result.crash_files)
    if done.returncode != 0 and not result.crashes:
        result.crashes = 1
    if result.crashes:
        lines = [line for line in output.splitlines() if line.strip()]
        start = next((i for i, line in enumerate(lines) if "Uncaught Python exception" in line), 0)
        result.crash_summary = "\n".join(lines[start : start + 25])
    return result


def _worker(fmt: str, scratch: str, libfuzzer_args: list[str]) -> None:
    """The child: atheris over `read_all(fmt)`, the readers instrumented for coverage; each input is
    written into the (parent's temporary) `scratch` folder."""
    import atheris

    with atheris.instrument_imports(include=["core", "bioc"]):
        import core.formats  # noqa: F401  (first imported here, so instrumented: the readers and bioc)
        import core.kb  # noqa: F401
    from bench.fuzz.targets import read_all, write_input

    folder = Path(scratch)

    def one_input(data: bytes) -> None:
        for child in folder.iterdir():
            child.unlink()
        lenient = bool(data[:1]) and data[0] & 1 == 1
        read_all(write_input(folder, fmt, data), fmt, lenient=lenient)

    atheris.Setup([sys.argv[0], *libfuzzer_args], one_input)
    atheris.Fuzz()


def atheris_available() -> bool:
    try:
        import atheris  # noqa: F401
    except ImportError:
        return False
    return True


def fuzz_readers(
    formats: list[str], seconds: int, artifacts: Path, progress: ProgressFn = no_progress
) -> dict:
    """Fuzz each format for its share of `seconds`; the figures, per format and in total."""
    if not atheris_available():
        raise CuralinkError("atheris is not installed: pip install atheris (or the 'fuzz' extra)")
    unknown = sorted(set(formats) - set(SEEDS))
    if unknown:
        raise CuralinkError(f"unknown format(s) {', '.join(unknown)}; choose from {', '.join(SEEDS)}")
    share = max(1, seconds // max(1, len(formats)))
    runs = []
    for number, fmt in enumerate(formats):
        progress(number, len(formats), f"fuzzing {fmt} for {share} s")
        runs.append(run_format(fmt, share, artifacts))
    progress(len(formats), len(formats), "done")
    return {
        "seconds": share * len(formats),
        "executions": sum(run.executions for run in runs),
        "crashes": sum(run.crashes for run in runs),
        "formats": [asdict(run) for run in runs],
    }


if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    _worker(sys.argv[2], sys.argv[3], sys.argv[4:])
