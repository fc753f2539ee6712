"""Property tests of every corpus and vocabulary reader (issue 11): on any bytes - mutations of a valid
file, raw binary, valid JSON with values of the wrong kind - a reader reads the file or raises a
CuralinkError naming it; nothing else escapes, nothing hangs, and its memory stays bounded.

The default suite runs a modest number of examples per format; `CURALINK_FUZZ_EXAMPLES=2000 pytest -m slow
tests/test_readers_fuzz.py` runs the slow variant with that many per format and strategy.
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.fuzz.targets import CORPUS_FORMATS, KB_FORMATS, SEEDS, read_all, write_input

FORMATS = CORPUS_FORMATS + KB_FORMATS
DEFAULT_EXAMPLES = 30
SLOW_EXAMPLES = int(os.environ.get("CURALINK_FUZZ_EXAMPLES", "0"))
HANG_SECONDS = 30  # a hang guard, not a timing test: a read of a 4 KB file that runs this long is stuck
MEMORY_MB = 64  # Python allocations while reading a file of at most a few KB

# bytes that mean something to one reader or another
TOKENS = [
    b"\x00", b"\xff\xfe", b"\xfe\xff", b"\xc3", b"\xe2\x80\xa8", b"\xef\xbb\xbf", b"\t", b"|", b"||", b"\n",
    b"\r\n", b"\r", b" ", b"<", b">", b"/>", b"</", b"&", b"&x;", b"&amp;", b"&#0;", b"<!ENTITY e 'x'>",
    b"<![CDATA[", b"]]>", b'"', b"{", b"}", b"[", b"]", b":", b",", b"99999999999999999999", b"-1", b"1.5",
    b"1e308", b"NaN", b"null", b"true", b"0", b"[Term]\n", b"id: ", b"name: ", b"is_a: ", b";", b"+",
    b"T1\t", b"N1\tReference ", b"|t|", b"|a|", b"MESH:", b"C0000001|", b"#",
]  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """The seed with 1-4 edits: a slice replaced, deleted or repeated, tokens inserted, a cut."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(data)))
        end = draw(st.integers(start, min(len(data), start + 64)))
        action = draw(st.sampled_from(["replace", "delete", "repeat", "token", "truncate"]))
        if action == "replace":
            data[start:end] = draw(st.binary(max_size=16))
        elif action == "delete":
            del data[start:end]
        elif action == "repeat":
            data[start:start] = data[start:end] * draw(st.integers(1, 50))
        elif action == "token":
            data[start:start] = b"".join(draw(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=4)))
        else:
            del data[start:]
    return bytes(data)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
# numbers a reader must not trust: offsets far beyond the text, fractions, negatives, numeric strings
SUSPECT_NUMBERS = st.sampled_from([10**8, 10**12, 2**63, -5, 1.5, 1e300, "7", "1.5", True])


@st.composite
def retyped_json(draw: st.DrawFn, fmt: str) -> bytes:
    """The JSON seed with values at random places replaced by JSON values of any kind."""
    text = SEEDS[fmt][1].decode()
    value = json.loads(text.splitlines()[0]) if fmt == "jsonl" else json.loads(text)
    for _ in range(draw(st.integers(1, 4))):
        node = value
        for _ in range(8):
            children = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
            if not children:
                break
            key, child = draw(st.sampled_from(children))
            if isinstance(child, dict | list) and draw(st.booleans()):
                node = child
                continue
            node[key] = draw(SUSPECT_NUMBERS | JSON_VALUES)
            break
    dumped = json.dumps(value)
    return (dumped + "\n").encode() if fmt == "jsonl" else dumped.encode()


class Hang(Exception):
    pass


@contextmanager
def hang_guard(seconds: int):
    def alarm(signum, frame):
        raise Hang(f"a reader ran for {seconds} s on a small file")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check_reader(fmt: str, data: bytes, lenient: bool = False) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = write_input(Path(folder), fmt, data)
        tracemalloc.start()
        try:
            with hang_guard(HANG_SECONDS):
                result = read_all(path, fmt, lenient=lenient)  # anything but a CuralinkError fails the test
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < MEMORY_MB * 1e6, (
            f"{peak / 1e6:.0f} MB of Python allocations for a {len(data)}-byte file"
        )
        if result.error:
            assert folder in result.error, result.error  # the error names the file (or the brat folder)


def _settings(examples: int):
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=examples == DEFAULT_EXAMPLES,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_readers_survive_mutated_files(fmt: str) -> None:
    @_settings(DEFAULT_EXAMPLES)
    @given(mutated(SEEDS[fmt][1]), st.booleans())
    def run(data: bytes, lenient: bool) -> None:
        check_reader(fmt, data, lenient)

    run()


@pytest.mark.parametrize("fmt", FORMATS)
def test_readers_survive_random_bytes(fmt: str) -> None:
    @_settings(DEFAULT_EXAMPLES // 2)
    @given(st.binary(max_size=600))
    def run(data: bytes) -> None:
        check_reader(fmt, data)

    run()


@pytest.mark.parametrize("fmt", ["jsonl", "bioc-json"])
def test_json_readers_survive_values_of_the_wrong_kind(fmt: str) -> None:
    @_settings(DEFAULT_EXAMPLES * 2)
    @given(retyped_json(fmt), st.booleans())
    def run(data: bytes, lenient: bool) -> None:
        check_reader(fmt, data, lenient)

    run()


@pytest.mark.slow
@pytest.mark.skipif(not SLOW_EXAMPLES, reason="set CURALINK_FUZZ_EXAMPLES to run the long variant")
@pytest.mark.parametrize("fmt", FORMATS)
def test_readers_survive_many_inputs(fmt: str) -> None:
    strategy = mutated(SEEDS[fmt][1]) | st.binary(max_size=2000)
    if fmt in ("jsonl", "bioc-json"):
        strategy = strategy | retyped_json(fmt)

    @_settings(SLOW_EXAMPLES)
    @given(strategy, st.booleans())
    def run(data: bytes, lenient: bool) -> None:
        check_reader(fmt, data, lenient)

    run()
