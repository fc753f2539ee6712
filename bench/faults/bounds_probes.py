"""The `bounds` section (issue 33): the hostile tester's probes, each run as the `curalink` command in its
own process with the default limits. Each outcome is judged from what the harness sees: the exit status,
the lines on stderr (one line, naming the file; no traceback), the child's peak resident memory (VmHWM of
its own address space, written at exit: none means it aborted) against 1,500 MB, and for link-batch the
folder itself (the good shards linked, the poison one recorded, a resume completing).

Probes: a BioC JSON `.json.gz`, a `.txt.gz` as text and a gzip behind a brat `.txt` that expand past the
text-bytes limit; a PubTator `.gz` of 250,000 mentions for one document; an OBO `.gz` with a 100 MB
`name:` line (fastobo aborted the process); 3 million empty elements in MeSH XML; a safetensors header of
100 MB of empty lists; `fetch-pubmed --file /dev/zero`; an endless E-utilities answer; `--eutils-url
file:///etc/`; FIFOs as inputs; `--candidates 0` and `-5`; `--out` naming a file or a path under one;
manifests with `position: "x"`, `deleted: 5`, `deleted: "10192393"`, a rewrite without `removed`,
`documents: 0` on a real shard, 50,000 done entries whose files are missing; a link-batch input folder
holding a link to /etc/passwd; a BioC JSON bomb among good shards (recorded, resumed); a NUL byte in
PubTator text; full-width digits as PMIDs.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from bench.faults.batch_setup import REPO_ROOT, BatchSetup, child_env, has_traceback
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

PEAK_TARGET_MB = 1500
TIMEOUT_S = 600
MB = 1 << 20

_CHILD = (  # the CLI, and the child's own high-water RSS at exit (none when it aborted)
    "import atexit, os, sys\n"
    "def peak():\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            open(os.environ['BOUNDS_PEAK'], 'w').write(line.split()[1])\n"
    "atexit.register(peak)\n"
    "if os.environ.get('BOUNDS_ENDLESS'):\n"
    "    import http.server, threading\n"
    "    class Endless(http.server.BaseHTTPRequestHandler):\n"
    "        def do_POST(self):\n"
    "            self.send_response(200); self.end_headers()\n"
    "            block = b'<PubmedArticleSet>' + b' ' * (1 << 20)\n"
    "            try:\n"
    "                while True: self.wfile.write(block)\n"
    "            except OSError: pass\n"
    "        def log_message(self, *a): pass\n"
    "    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Endless)\n"
    "    threading.Thread(target=server.serve_forever, daemon=True).start()\n"
    "    sys.argv += ['--eutils-url', f'http://127.0.0.1:{server.server_port}/']\n"
    "if sys.argv[1] == '--header':\n"
    "    from core.errors import CuralinkError\n"
    "    from core.safe_models import safetensors_header\n"
    "    from pathlib import Path\n"
    "    try:\n"
    "        safetensors_header(Path(sys.argv[2]))\n"
    "    except CuralinkError as error:\n"
    "        print(f'error: {error}', file=sys.stderr); sys.exit(2)\n"
    "    sys.exit(0)\n"
    "from app.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def _run(work: Path, *args: str | Path, endless: bool = False) -> dict:
    peak_file = work / "peak.kb"
    peak_file.unlink(missing_ok=True)
    env = {**child_env(), "BOUNDS_PEAK": str(peak_file), **({"BOUNDS_ENDLESS": "1"} if endless else {})}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, *map(str, args)],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return {"returncode": None, "stderr": "timed out", "stdout": "", "peak_mb": None, "traceback": False}
    peak = peak_file.read_text().strip() if peak_file.is_file() else ""
    return {
        "returncode": done.returncode,
        "stderr": done.stderr,
        "stdout": done.stdout,
        "peak_mb": round(int(peak) / 1024, 1) if peak else None,
        "traceback": has_traceback(done),
    }


def _gzip(path: Path, head: bytes, body: bytes, times: int, tail: bytes = b"") -> Path:
    with gzip.open(path, "wb", compresslevel=1) as handle:
        handle.write(head)
        for _ in range(times):
            handle.write(body)
        handle.write(tail)
    return path


def _bombs(folder: Path) -> list[tuple[str, list, str]]:
    """(probe, argv after -p PROJECT, what the one line must name)."""
    folder.mkdir(parents=True, exist_ok=True)
    spaces = b" " * MB
    bioc = _gzip(folder / "bomb.json.gz", b'{"documents": [', spaces, 300)
    text = _gzip(folder / "bomb.txt.gz", b"", b"a" * MB, 300)
    brat = folder / "brat"
    brat.mkdir(exist_ok=True)
    _gzip(brat / "d1.txt", b"", b"b" * MB, 300)
    (brat / "d1.ann").write_text("", encoding="utf-8")
    mention = b"1\t0\t6\tBreast\tDisease\tD001943\n" * 10_000
    pubtator = _gzip(
        folder / "mentions.pubtator.gz", b"1|t|Breast cancer\n1|a|A study.\n", mention, 25, b"\n"
    )
    obo = _gzip(
        folder / "line.obo.gz", b"format-version: 1.4\n\n[Term]\nid: X:1\nname: ", b"a" * MB, 100, b"\n"
    )
    mesh = _gzip(
        folder / "flood.xml.gz",
        b"<DescriptorRecordSet>\n",
        b"<a/>" * 100_000,
        30,
        b"</DescriptorRecordSet>\n",
    )
    header = b'{"a": [' + b"[]," * (34 * MB) + b"[]]}"
    safetensors = folder / "model.safetensors"
    safetensors.write_bytes(len(header).to_bytes(8, "little") + header)
    nul = folder / "nul.pubtator"
    nul.write_bytes(b"1|t|Breast\x00 cancer\n1|a|A study.\n\n")
    pmids = folder / "pmids.txt"
    pmids.write_text("１２３４５\n١٢٣\n", encoding="utf-8")
    fifo = folder / "fifo.pubtator"
    if not fifo.exists():
        os.mkfifo(fifo)
    return [
        ("BioC JSON .json.gz, 300 MB inside", ["corpus", "import", bioc, "--format", "bioc-json"], str(bioc)),
        ("text .txt.gz, 300 MB inside", ["corpus", "import", text, "--format", "text"], str(text)),
        ("gzip behind a brat .txt", ["corpus", "import", brat, "--format", "brat"], "d1.txt"),
        (
            "PubTator: 250,000 mentions of one document",
            ["corpus", "import", pubtator, "--format", "pubtator"],
            str(pubtator),
        ),
        ("OBO: a 100 MB name: line", ["kb", "import", obo, "--format", "obo"], str(obo)),
        ("MeSH XML: 3 million empty elements", ["kb", "import", mesh, "--format", "mesh-xml"], str(mesh)),
        ("safetensors header: 100 MB of empty lists", ["--header", safetensors], str(safetensors)),
        ("fetch-pubmed --file /dev/zero", ["corpus", "fetch-pubmed", "--file", "/dev/zero"], "/dev/zero"),
        ("an endless E-utilities answer", ["corpus", "fetch-pubmed", "12345"], "answer-bytes"),
        (
            "--eutils-url file:///etc/",
            ["corpus", "fetch-pubmed", "1", "--eutils-url", "file:///etc/"],
            "file:///etc/",
        ),
        ("a FIFO as a corpus", ["corpus", "import", fifo, "--format", "pubtator"], str(fifo)),
        ("a FIFO as a KB", ["kb", "import", fifo, "--format", "obo"], str(fifo)),
        ("a NUL byte in PubTator text", ["corpus", "import", nul, "--format", "pubtator"], str(nul)),
        ("full-width and Arabic-Indic PMIDs", ["corpus", "fetch-pubmed", "--file", pmids], str(pmids)),
    ]


def _judge(probe: str, done: dict, names: str, *, refused: bool = True) -> dict:
    lines = [
        line
        for line in done["stderr"].splitlines()
        if line.strip() and not line.startswith(("INFO", "WARNING"))
    ]
    return {
        "probe": probe,
        "returncode": done["returncode"],
        "refused": done["returncode"] == 2 if refused else done["returncode"] == 0,
        "one_line": len(lines) <= 1 if refused else True,
        "names_it": names in done["stderr"] + done["stdout"],
        "traceback": done["traceback"],
        "peak_mb": done["peak_mb"],
        "message": (lines or done["stdout"].strip().splitlines()[-1:] or [""])[0][:300],
    }


def _linked_folder(setup: BatchSetup, work: Path) -> Path:
    """A link-batch folder of two shards (for the manifest probes), linked once and copied per probe."""
    from bench.faults.batch_setup import demo_documents
    from bench.synthetic.shards import write_shards

    folder = work / "linked"
    if not (folder / "manifest.json").is_file():
        write_shards(demo_documents(), work / "linked-in", total=6, per_shard=3, formats=["pubtator"])
        done = _run(work, "-p", setup.project, "link-batch", work / "linked-in", "--out", folder)
        if done["returncode"] != 0:
            raise RuntimeError(f"link-batch for the manifest probes failed: {done['stderr'][-300:]}")
    return folder


def _manifest_probes(setup: BatchSetup, work: Path) -> list[dict]:
    base = _linked_folder(setup, work)
    first = "shard0000.pubtator.linked.jsonl"
    edits = {
        'position: "x"': lambda d: d["shards"][first].update(position="x"),
        "deleted: 5": lambda d: d["shards"][first].update(deleted=5),
        'deleted: "10192393"': lambda d: d["shards"][first].update(deleted="10192393"),
        "a pending rewrite without removed": lambda d: d["shards"][first].update(
            rewrite={"documents": 1, "mentions": 1, "output_sha256": "0" * 64}
        ),
        "documents: 0 on a real shard": lambda d: d["shards"][first].update(documents=0),
        "50,000 done entries, files missing": lambda d: d["shards"].update(
            {f"gone{n:06d}.linked.jsonl": {**d["shards"][first], "position": n + 10} for n in range(50_000)}
        ),
    }
    rows = []
    for probe, edit in edits.items():
        folder = work / "tampered"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(base, folder)
        data = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        edit(data)
        (folder / "manifest.json").write_text(json.dumps(data), encoding="utf-8")
        desk = (
            setup.fresh_desk(work / "desk-copy") if not (work / "desk-copy").exists() else work / "desk-copy"
        )
        done = _run(work, "-p", desk, "import-linked", folder)
        row = _judge(f"manifest: {probe}", done, str(folder))
        printed = len((done["stdout"] + done["stderr"]).splitlines())
        row["one_line"] = printed <= 60  # a refusal, or at most 20 shards listed (and logged): not one a shard
        row["lines_printed"] = printed
        rows.append(row)
        shutil.rmtree(work / "desk-copy", ignore_errors=True)
    return rows


def _batch_probes(setup: BatchSetup, work: Path) -> list[dict]:
    from bench.faults.batch_setup import demo_documents
    from bench.synthetic.shards import write_shards

    rows = []
    inputs = work / "batch-in"
    shutil.rmtree(inputs, ignore_errors=True)
    write_shards(demo_documents(), inputs, total=6, per_shard=3, formats=["pubtator"])
    (inputs / "passwd.pubtator").symlink_to("/etc/passwd")
    out = work / "batch-out"
    shutil.rmtree(out, ignore_errors=True)
    done = _run(work, "-p", setup.project, "link-batch", inputs, "--out", out, "--detect")
    linked_text = " ".join(p.read_text(errors="replace") for p in out.glob("*.linked.jsonl"))
    row = _judge(
        "link-batch: a link to /etc/passwd in the input folder", done, "passwd.pubtator", refused=False
    )
    row["refused"] = done["returncode"] == 0 and "root:" not in linked_text and "skipped" in done["stdout"]
    rows.append(row)

    _gzip(inputs / "bomb.json.gz", b'{"documents": [', b" " * MB, 300)
    (inputs / "passwd.pubtator").unlink()
    out = work / "poison-out"
    shutil.rmtree(out, ignore_errors=True)
    done = _run(work, "-p", setup.project, "link-batch", inputs, "--out", out)
    resumed = _run(work, "-p", setup.project, "link-batch", "--resume", "--out", out)
    row = _judge("link-batch: a BioC JSON bomb among good shards", done, "bomb.json.gz", refused=False)
    row["refused"] = (
        done["returncode"] == 0 and resumed["returncode"] == 0 and len(list(out.glob("*.linked.jsonl"))) == 2
    )
    row["traceback"] = done["traceback"] or resumed["traceback"]
    rows.append(row)

    for probe, argv, names in (
        ("--candidates 0", ["--candidates", "0"], "--candidates"),
        ("--candidates -5", ["--candidates", "-5"], "--candidates"),
        ("--out naming a file", ["--out", inputs / "shard0000.pubtator"], "--out"),
        ("--out under a file", ["--out", inputs / "shard0000.pubtator" / "x"], "--out"),
    ):
        full = ["--out", work / "never"] + argv if argv[0] != "--out" else argv
        done = _run(work, "-p", setup.project, "link-batch", inputs, *full)
        rows.append(_judge(f"link-batch {probe}", done, names))
    return rows


def bounds_trials(
    setup: BatchSetup,
    *,
    trials: int = 1,
    seed: int = 0,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """Every probe once (they are deterministic; `trials` and `seed` are the sections' common signature)."""
    work = setup.work / "bounds"
    work.mkdir(parents=True, exist_ok=True)
    desk = work / "desk"
    shutil.rmtree(desk, ignore_errors=True)
    setup.fresh_desk(desk)
    rows = []
    for probe, argv, names in _bombs(work / "files"):
        if cancel.cancelled:
            break
        progress(len(rows), None, f"bounds: {probe}")
        args = argv if argv[0] == "--header" else ["-p", desk, *argv]
        row = _judge(probe, _run(work, *args, endless="endless" in probe), names)
        if "PMIDs" in probe:  # a list of bad items: one line a PMID, under one error line
            row["one_line"] = row["message"].startswith("error:") and "2 items are not PMIDs" in row["message"]
        rows.append(row)
    if not cancel.cancelled:
        rows += _manifest_probes(setup, work)
    if not cancel.cancelled:
        rows += _batch_probes(setup, work)
    shutil.rmtree(work / "files", ignore_errors=True)
    return {
        "probes": len(rows),
        "as_expected": sum(r["refused"] and r["one_line"] and not r["traceback"] for r in rows),
        "tracebacks": sum(r["traceback"] for r in rows),
        "peak_mb": max((r["peak_mb"] or 0.0 for r in rows), default=0.0),
        "over_target": sum(r["peak_mb"] is None or r["peak_mb"] > PEAK_TARGET_MB for r in rows),
        "rows": rows,
    }
