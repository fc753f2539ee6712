"""Input bombs and hostile databases (issue 24).

`bombs`: small gzip files that expand to what no reader should hold: a million empty elements between
two PubMed citations, two million inside one, two million in a JATS body, a 40 MB PubTator line, and a
gzip bomb (a 1 GB abstract in kilobytes). Each is read by `read_corpus` in a child process; the harness
takes the child's peak resident memory from the kernel (VmHWM of the child's own address space, so it
is measured, not the reader's own account) and judges its error: refused, one line, naming the file. Target: ≤ 1,500 MB each.

`hostile-db`: copies of a project whose database gained a trigger that rewrites decisions (after insert,
after update), a view, an extra index or table, or lost an index. Each copy is opened by a child that
records an accept (what the desk does); the harness then reads the decisions table with sqlite3 itself
and counts the ones whose concept is not the one accepted (rewritten, must be 0) and the opens refused.
"""

from __future__ import annotations

import gzip
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from bench.faults.batch_setup import REPO_ROOT, BatchSetup, child_env
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

PEAK_TARGET_MB = 1500
READ_TIMEOUT_S = 300

_READ = (  # the child's own high-water RSS (VmHWM: its address space only, reset at exec) on its last line
    "import sys\n"
    "from core.errors import CuralinkError\n"
    "from core.formats import read_corpus\n"
    "def peak():\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            print('peak_kb', line.split()[1], flush=True)\n"
    "try:\n"
    "    n = sum(1 for _ in read_corpus(sys.argv[1], sys.argv[2]))\n"
    "except CuralinkError as error:\n"
    "    print(str(error), file=sys.stderr)\n"
    "    peak()\n"
    "    sys.exit(2)\n"
    "print(f'read {n} documents')\n"
    "peak()\n"
)


def _gzip(path: Path, *parts: bytes, repeat: tuple[bytes, int] | None = None, tail: bytes = b"") -> Path:
    with gzip.open(path, "wb", compresslevel=6) as handle:
        for part in parts:
            handle.write(part)
        if repeat:
            chunk, times = repeat
            block = chunk * max(1, (1 << 20) // len(chunk))
            whole, rest = divmod(times * len(chunk), len(block))
            for _ in range(whole):
                handle.write(block)
            handle.write(chunk * (rest // len(chunk)))
        handle.write(tail)
    return path


def _citation(pmid: int, inside: bytes = b"") -> bytes:
    return (
        (
            f"<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article><ArticleTitle>Title {pmid}"
            "</ArticleTitle><Abstract><AbstractText>An abstract.</AbstractText>"
        ).encode()
        + inside
        + b"</Abstract></Article></MedlineCitation></PubmedArticle>\n"
    )


_PUBMED_HEAD = b'<?xml version="1.0"?>\n<PubmedArticleSet>\n'
_PUBMED_TAIL = b"</PubmedArticleSet>\n"
_OPEN_CITATION = _citation(2).split(b"</Abstract>")[0]
_CLOSE_CITATION = b"</Abstract></Article></MedlineCitation></PubmedArticle>\n"


def _bombs(folder: Path, rng: random.Random) -> list[tuple[str, Path, str]]:
    """(case, file, format); sizes vary a little between trials."""
    folder.mkdir(parents=True, exist_ok=True)
    extra = rng.randrange(1000, 50_000)
    jats_head = (
        b'<?xml version="1.0"?>\n<article><front><article-meta><article-id pub-id-type="pmc">PMC1'
        b"</article-id><title-group><article-title>A title</article-title></title-group></article-meta>"
        b"</front>\n<body><p>text</p>"
    )
    return [
        (
            "elements between citations",
            _gzip(
                folder / "between.xml.gz",
                _PUBMED_HEAD,
                _citation(1),
                repeat=(b"<x></x>", 1_010_000 + extra),
                tail=_citation(2) + _PUBMED_TAIL,
            ),
            "pubmed-xml",
        ),
        (
            "elements inside one citation",
            _gzip(
                folder / "inside.xml.gz",
                _PUBMED_HEAD,
                _OPEN_CITATION,
                repeat=(b"<x/>", 2_010_000 + extra),
                tail=_CLOSE_CITATION + _PUBMED_TAIL,
            ),
            "pubmed-xml",
        ),
        (
            "elements in a JATS body",
            _gzip(
                folder / "body.jats.xml.gz",
                jats_head,
                repeat=(b"<x/>", 2_010_000 + extra),
                tail=b"</body></article>\n",
            ),
            "jats",
        ),
        (
            "40 MB PubTator line (gzip)",
            _gzip(
                folder / "line.pubtator.gz",
                b"1|t|Breast cancer\n1|a|A study.\n\n2|t|",
                repeat=(b"a", 40_000_000 + extra),
                tail=b"\n",
            ),
            "pubtator",
        ),
        (
            "gzip bomb: 1 GB abstract",
            _gzip(
                folder / "gzip-bomb.xml.gz",
                _PUBMED_HEAD,
                _OPEN_CITATION,
                b"<AbstractText>",
                repeat=(b"a", 1_000_000_000 + extra),
                tail=b"</AbstractText>" + _CLOSE_CITATION + _PUBMED_TAIL,
            ),
            "pubmed-xml",
        ),
    ]


def _read_measured(path: Path, fmt: str) -> dict:
    """Read the file in a child; its peak RSS is the kernel's VmHWM of the child's own address space
    (wait4's ru_maxrss is not used: across exec it keeps the parent's high-water mark at the fork)."""
    done = subprocess.run(
        [sys.executable, "-c", _READ, str(path), fmt],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=READ_TIMEOUT_S,
        env=child_env(),
    )
    peaks = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("peak_kb ")]
    return {
        "returncode": done.returncode,
        "peak_mb": round(int(peaks[-1]) / 1024, 1) if peaks else None,  # None: killed before it said
        "stdout": done.stdout,
        "stderr": done.stderr,
    }


def bomb_trials(
    setup: BatchSetup,
    *,
    trials: int,
    seed: int,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    rng = random.Random(seed + 4)
    rows = []
    for trial in range(trials):
        folder = setup.work / "bombs" / f"t{trial}"
        shutil.rmtree(folder, ignore_errors=True)
        for case, path, fmt in _bombs(folder, rng):
            if cancel.cancelled:
                break
            progress(len(rows), trials * 5, f"bombs: {case}")
            read = _read_measured(path, fmt)
            lines = [line for line in read["stderr"].splitlines() if line.strip()]
            rows.append(
                {
                    "trial": trial,
                    "case": case,
                    "file_kb": round(path.stat().st_size / 1024, 1),
                    "refused": read["returncode"] == 2,
                    "peak_mb": read["peak_mb"],
                    "one_line": len(lines) == 1,
                    "names_file": bool(lines) and lines[0].startswith(str(path)),
                    "message": lines[0] if lines else read["stdout"].strip(),
                }
            )
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "trials": trials,
        "files": len(rows),
        "refused": sum(r["refused"] for r in rows),
        "one_line": sum(r["refused"] and r["one_line"] and r["names_file"] for r in rows),
        "peak_mb": max((r["peak_mb"] or 0.0 for r in rows), default=0.0),
        "over_target": sum(r["peak_mb"] is None or r["peak_mb"] > PEAK_TARGET_MB for r in rows),
        "rows": rows,
    }


_REWRITTEN = "D999999"
VARIANTS = {
    "trigger after insert": (
        "CREATE TRIGGER rewrite AFTER INSERT ON decisions BEGIN "
        f"UPDATE decisions SET concept_id = '{_REWRITTEN}' WHERE id = NEW.id; END",
    ),
    "trigger after update": (
        "CREATE TRIGGER rewrite_update AFTER UPDATE ON decisions BEGIN "
        f"UPDATE decisions SET concept_id = '{_REWRITTEN}' WHERE id = NEW.id AND concept_id != '{_REWRITTEN}'; END",
    ),
    "view": ("CREATE VIEW accepted AS SELECT * FROM decisions",),
    "extra index": ("CREATE INDEX ix_sneaky ON decisions (curator)",),
    "extra table": ("CREATE TABLE extra (x)",),
    "index dropped": ("DROP INDEX ix_decisions_mention_id",),
}

_DECIDE = (
    "import sys\n"
    "from core.errors import CuralinkError\n"
    "from core.store import Project\n"
    "try:\n"
    "    with Project.open(sys.argv[1]) as project:\n"
    "        (_, ids), *_ = project.documents.documents_with_mention_ids(None)\n"
    "        project.curation.record_decision(ids[0], 'accept', concept_id=sys.argv[2], curator='hostile-db')\n"
    "except CuralinkError as error:\n"
    "    print(str(error), file=sys.stderr)\n"
    "    sys.exit(2)\n"
)


def _decisions(db: Path) -> list[tuple[str, str | None]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        return connection.execute(
            "SELECT curator, concept_id FROM decisions WHERE curator = 'hostile-db'"
        ).fetchall()


def hostile_db_trials(
    setup: BatchSetup,
    *,
    trials: int,
    seed: int,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    from core.store import Project

    rng = random.Random(seed + 5)
    with Project.open(setup.project) as project:
        concepts = [c.concept_id for c in project.kb.knowledge_base()][:50]
    rows = []
    for trial in range(trials):
        for variant, statements in VARIANTS.items():
            if cancel.cancelled:
                break
            progress(len(rows), trials * len(VARIANTS), f"hostile databases: {variant}")
            copy = setup.work / "hostile-db" / f"t{trial}" / variant.replace(" ", "-")
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(setup.project, copy, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
            with sqlite3.connect(copy / "curalink.db") as connection:
                for statement in statements:
                    connection.execute(statement)
            concept = rng.choice(concepts)
            done = subprocess.run(
                [sys.executable, "-c", _DECIDE, str(copy), concept],
                cwd=REPO_ROOT,
                capture_output=True,
                text=True,
                timeout=READ_TIMEOUT_S,
                env=child_env(),
            )
            stored = _decisions(copy / "curalink.db")
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            rows.append(
                {
                    "trial": trial,
                    "variant": variant,
                    "refused": done.returncode == 2,
                    "one_line": len(lines) == 1,
                    "decisions_stored": len(stored),
                    "rewritten": sum(c != concept for _, c in stored),
                    "message": lines[0] if lines else f"exit {done.returncode}",
                }
            )
    return {
        "trials": trials,
        "opens": len(rows),
        "refused": sum(r["refused"] for r in rows),
        "rewritten": sum(r["rewritten"] for r in rows),
        "decisions_stored": sum(r["decisions_stored"] for r in rows),
        "rows": rows,
    }
