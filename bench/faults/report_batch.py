"""The issue-24 sections' figures as Markdown tables (bench/faults/report.py prints them after the rest)."""

from __future__ import annotations

from bench.faults.report import _table


def manifests_section(m: dict) -> list[str]:
    rows = [
        [
            r["trial"],
            r["variant"],
            r["operation"],
            "refused" if r["refused"] else "ran",
            "**" + ", ".join(r["outside_touched"]) + "**" if r["outside_touched"] else "none",
            r["message"] or "-",
        ]
        for r in m["rows"]
    ]
    return [
        "### Crafted link-batch folders",
        "",
        *_table(["trial", "variant", "operation", "outcome", "outside touched", "message"], rows),
        f"{m['runs']} runs ({m['trials']} trials): files outside the folder touched {m['outside_touched']}, "
        f"refused {m['refused']}, tracebacks {m['tracebacks']} ({m['seconds']} s).",
        "",
    ]


def tampered_section(t: dict) -> list[str]:
    rows = [
        [
            r["trial"],
            r["tamper"],
            r["stored_from_bad_shard"],
            "yes" if r["good_shards_stored"] else "**NO**",
            r["problems_reported"],
            r["message"],
        ]
        for r in t["rows"]
    ]
    return [
        "### Tampered linked shards (import-linked)",
        "",
        *_table(
            ["trial", "tamper", "documents stored from it", "good shard stored", "problems", "first"], rows
        ),
        f"{t['shards']} tampered shards: documents stored from them {t['stored_from_bad_shards']}, refused "
        f"with problems named {t['refused']}, good shards lost {t['good_shards_lost']}, tracebacks "
        f"{t['tracebacks']} ({t['seconds']} s).",
        "",
    ]


def deletions_section(d: dict) -> list[str]:
    rows = [
        [
            r["trial"],
            r.get("files", "-"),
            r.get("deleted", "-"),
            r.get("emptied_shards", "-"),
            r.get("kill", r.get("error", "-")),
            "yes" if r.get("resume_ok") and r.get("import_ok") else f"**NO** {r.get('message', '')}",
            r["mismatches"],
        ]
        for r in d["rows"]
    ]
    return [
        "### DeleteCitation sequences, killed mid-rewrite",
        "",
        *_table(
            [
                "trial",
                "files",
                "citations deleted",
                "shards emptied",
                "SIGKILL at",
                "resume + import",
                "mismatches",
            ],
            rows,
        ),
        f"{d['trials']} sequences ({d['killed_mid_pass']} killed in the deletion pass, {d['emptied_shards']} "
        f"shards emptied): resume failed {d['resume_failed']}, import failed {d['import_failed']}, documents "
        f"differing from a from-scratch run on the survivors {d['mismatches']} ({d['seconds']} s).",
        "",
    ]


def kills_section(k: dict) -> list[str]:
    rows = [
        [
            r["trial"],
            r["kill_after_shards"],
            r["children_at_kill"],
            r["shards_done_at_kill"],
            r["orphans"],
            len(r["unlisted_shards"]),
            len(r.get("unlisted_after_resume", [])),
            "yes" if r["resumed_to_end"] else "**NO**",
        ]
        for r in k["rows"]
    ]
    return [
        "### link-batch --workers 2: driver killed with SIGKILL",
        "",
        *_table(
            [
                "trial",
                "killed after shard",
                "children",
                "shards done",
                "orphans",
                "unlisted shards",
                "unlisted after resume",
                "resumed",
            ],
            rows,
        ),
        f"{k['trials']} kills ({k['killed_mid_run']} mid-run): orphans left {k['orphans']}, unlisted shards "
        f"{k['unlisted_shards']} (after the resume {k.get('unlisted_after_resume', 0)}), resumes failed {k['resume_failed']} ({k['seconds']} s).",
        "",
    ]


def bombs_section(b: dict) -> list[str]:
    rows = [
        [
            r["trial"],
            r["case"],
            r["file_kb"],
            r["peak_mb"],
            "refused" if r["refused"] else "**READ**",
            "yes" if r["one_line"] and r["names_file"] else "**no**",
            r["message"],
        ]
        for r in b["rows"]
    ]
    return [
        "### Input bombs (read in a child; peak RSS: the child's VmHWM)",
        "",
        *_table(
            ["trial", "case", "file KB", "peak MB", "outcome", "one line naming the file", "message"], rows
        ),
        f"{b['files']} bombs: refused {b['refused']}, one-line errors {b['one_line']}, highest peak "
        f"{b['peak_mb']} MB, over 1,500 MB {b['over_target']} ({b['seconds']} s).",
        "",
    ]


def hostile_db_section(h: dict) -> list[str]:
    rows = [
        [r["trial"], r["variant"], "refused" if r["refused"] else "**opened**", r["rewritten"], r["message"]]
        for r in h["rows"]
    ]
    return [
        "### Hostile project databases (open, then accept a concept)",
        "",
        *_table(["trial", "variant", "open", "decisions rewritten", "message"], rows),
        f"{h['opens']} opens: refused {h['refused']}, decisions stored {h['decisions_stored']}, rewritten "
        f"{h['rewritten']} ({h['seconds']} s).",
        "",
    ]


def bounds_section(b: dict) -> list[str]:
    rows = [
        [
            r["probe"],
            r["returncode"],
            r["peak_mb"],
            "as expected" if r["refused"] and r["one_line"] else "**no**",
            "**yes**" if r["traceback"] else "no",
            r["message"],
        ]
        for r in b["rows"]
    ]
    return [
        "### Issue 33 probes (each the `curalink` command in a child; peak RSS: its VmHWM)",
        "",
        *_table(["probe", "exit", "peak MB", "outcome", "traceback", "message"], rows),
        f"{b['probes']} probes: as expected {b['as_expected']}, tracebacks {b['tracebacks']}, highest peak "
        f"{b['peak_mb']} MB, over 1,500 MB (or no peak: aborted) {b['over_target']} ({b['seconds']} s).",
        "",
    ]


SECTIONS = (
    ("batch_manifests", manifests_section),
    ("batch_tampered", tampered_section),
    ("batch_deletions", deletions_section),
    ("batch_kills", kills_section),
    ("bombs", bombs_section),
    ("hostile_db", hostile_db_section),
    ("bounds", bounds_section),
)
