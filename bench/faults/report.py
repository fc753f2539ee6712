"""The fault harness's figures as Markdown tables (the CLI prints them; docs/faults.md keeps them)."""

from __future__ import annotations


def _cell(value) -> str:
    text = str(value).replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= 160 else text[:157] + "…"


def _table(header: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines + [""]


def crash_section(crash: dict) -> list[str]:
    keys = ("trials", "killed", "committed_decisions", "decisions_lost", "unusable", "partial_imports")
    rows, totals = [], dict.fromkeys(keys, 0)
    for name, entry in crash.items():
        for key in keys:
            totals[key] += entry[key]
        rows.append([name, entry["work_seconds"], *(entry[k] for k in keys), entry["with_leftovers"]])
    rows.append(["**all**", "", *(f"**{totals[k]}**" for k in keys), ""])
    lines = ["### kill -9 during work", ""]
    lines += _table(
        [
            "operation",
            "work (s)",
            "trials",
            "killed mid-work",
            "committed decisions",
            "decisions lost",
            "projects unusable",
            "partial imports",
            "runs leaving scratch files",
        ],
        rows,
    )
    for name, entry in crash.items():
        for row in entry["rows"]:
            if row["lost"] or not row["usable"] or row["partial_import"]:
                lines.append(
                    f"- {name}, killed after {row['kill_after_s']} s: "
                    + "; ".join(
                        filter(None, [", ".join(row["lost"][:3]), row["reason"], row["partial_import"]])
                    )
                )
    scratch = sorted({item for e in crash.values() for r in e["rows"] for item in r["leftovers"]})
    if scratch:
        lines.append(f"- scratch files left by killed runs: {', '.join(scratch[:6])}")
    return lines + [""]


def disk_full_section(disk: dict) -> list[str]:
    lines = ["### Full disk (tmpfs)", ""]
    if disk.get("skipped"):
        return lines + [f"Skipped: {disk['skipped']}.", ""]
    rows = []
    for r in disk["rows"]:
        outcome = (
            "completed (fitted)" if r["completed"] else ("clear error" if r["clear_error"] else "UNCLEAR")
        )
        rows.append(
            [
                r["operation"],
                r["free_kb"],
                outcome,
                r["message"] or "-",
                "yes" if r["traceback"] else "no",
                len(r["lost"]),
                "yes" if r["usable"] else f"NO: {r['reason']}",
                r["partial_import"] or "-",
                ", ".join(r["leftovers"]) or "-",
            ]
        )
    return lines + _table(
        [
            "operation",
            "KiB free at start",
            "outcome",
            "message",
            "traceback",
            "decisions lost",
            "usable after freeing space",
            "partial import",
            "left behind",
        ],
        rows,
    )


def contention_section(c: dict) -> list[str]:
    desk = c["desk"]
    rows = [
        [
            "long import",
            f"exit {c['import']['returncode']}; {c['import']['documents_added']} documents added in "
            f"{c['import']['seconds']} s ({'complete' if c['import']['complete'] else 'INCOMPLETE'})",
        ]
    ]
    for number, w in enumerate(c["writers"], 1):
        rows.append(
            [
                f"writer {number}",
                f"exit {w['returncode']}; {w['committed']} decisions committed; {w['lock_messages']} lock "
                f"refusals, {w['clear_lock_messages']} of them clear (e.g. “{w['example']}”)",
            ]
        )
    rows.append(
        [
            "desk",
            f"exit {desk.get('returncode')}; {desk.get('saved', 0)} decisions saved at once, "
            f"{desk.get('pending', 0)} waited for the lock, {desk.get('refused', 0)} refused; "
            f"{desk.get('stalls', 0)} stalls, {desk.get('retries', 0)} Retry presses",
        ]
    )
    rows.append(
        [
            "desk, after",
            f"{desk.get('pending_left', '?')} left unsaved; undo stack {desk.get('undo')}, store "
            f"{desk['rows_in_store']}: {'equal' if desk['undo_matches_store'] else 'DIFFERENT'}; longest "
            f"event-loop stall while deciding {desk.get('longest_stall_ms', '?')} ms",
        ]
    )
    rows.append(
        [
            "all",
            f"{c['decisions_committed']} decisions committed, {c['decisions_lost']} lost; "
            f"{c['crashes']} processes exited with an error; project usable: {'yes' if c['usable'] else 'NO'}",
        ]
    )
    return [
        "### Two writers and a desk during a long import",
        "",
        *_table(["process", "what happened"], rows),
    ]


def hostile_section(h: dict) -> list[str]:
    rows = []
    for r in h["rows"]:
        if r.get("skipped"):
            rows.append([r["variant"], r["what"], "skipped", "", "", "", ""])
            continue
        link, desk = r["link"], r["desk"]
        expected = link.get("expected")
        rows.append(
            [
                r["variant"],
                r["what"],
                "**RAN**" if link["executed"] else "no",
                "**yes**" if link.get("outside_touched") or desk.get("outside_touched") else "no",
                "-" if expected is None else ("yes" if expected else "**no**"),
                link["message"] or f"exit {link['returncode']}",
                ("**RAN**; " if desk["executed"] else "") + (desk["message"] or f"exit {desk['returncode']}"),
            ]
        )
    lines = ["### Hostile projects", "", f"Variants: 4 of the harness's own; {h['found']}.", ""]
    lines += _table(
        [
            "variant",
            "what",
            "code ran (curalink)",
            "outside touched",
            "expected answer (safety's judge)",
            "curalink said",
            "desk said",
        ],
        rows,
    )
    return lines + [
        f"{h['variants']} variants, {h['probes']} probes (curalink and the desk): code executed "
        f"{h['code_executed']}, files outside the project touched {h['outside_touched']}, "
        f"expected answers {h['expected_answers']} of {h['judged_by_safety']} judged by safety's rules, "
        f"tracebacks {h['tracebacks']}.",
        "",
    ]


def bad_inputs_section(b: dict) -> list[str]:
    rows = []
    for r in b["rows"]:
        if "skipped" in r:
            rows.append([r["builder"], "-", "-", "-", "skipped", "-", r["skipped"]])
            continue
        verdict = "clear" if r["clear"] else ("ACCEPTED" if r["returncode"] == 0 else "UNCLEAR")
        if r["clear"] and r["lines"] > 1:
            verdict += f" ({r['lines']} lines)"
        rows.append(
            [
                r["builder"],
                r["file"],
                f"{r['kind']} {r['format']}",
                r["returncode"] if not r["hung"] else "hung",
                verdict,
                "yes" if r["unchanged"] else "NO",
                r["message"] or "-",
            ]
        )
    lines = ["### Bad input files", "", f"Files: 7 of the harness's own; {b['found']}.", ""]
    lines += _table(["case", "file", "import", "exit", "error", "store unchanged", "first line"], rows)
    return lines + [
        f"{b['files']} files: {b['clear_errors']} clear errors naming the file (and the line or element "
        f"where the case names one), {b['one_line']} of them one line; {b['accepted']} accepted, "
        f"{b['tracebacks']} tracebacks, {b['hung']} hung; the store changed by {b['store_changed']}.",
        "",
    ]


def render_markdown(result: dict, command: str = "curalink bench faults") -> str:
    lines = [f"Command: `{command}` ({result['seconds']:.0f} s on {result['machine']}).", ""]
    sections = (
        ("crash", crash_section),
        ("disk_full", disk_full_section),
        ("contention", contention_section),
        ("hostile", hostile_section),
        ("bad_inputs", bad_inputs_section),
    )
    from bench.faults.report_batch import SECTIONS as BATCH_SECTIONS

    for key, render in sections + BATCH_SECTIONS:
        if key in result:
            lines += render(result[key])
    return "\n".join(lines)
