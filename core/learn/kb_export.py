"""Export the project's KB, curator synonyms included, as the TSV that `core.kb.tsv.read_tsv` reads.

Layout `id<TAB>name<TAB>syn|syn`: tabs, line breaks and `|` inside a name would break a row, so they
are replaced by spaces (the name stays findable; normalisation ignores them anyway).
"""

from __future__ import annotations

import re
from pathlib import Path

from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

_UNSAFE = re.compile(r"[\t\r\n|]+")


def _clean(name: str) -> str:
    return _UNSAFE.sub(" ", name).strip()


def export_kb(
    project,
    path: str | Path,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> int:
    """Write every concept (preferred name, then all synonyms) to `path`; returns the concept count."""
    kb = project.knowledge_base()
    path = Path(path)
    tmp = path.with_name(path.name + ".part")
    count = 0
    with tmp.open("w", encoding="utf-8", newline="\n") as out:
        out.write("# Curalink KB export: id<TAB>name<TAB>synonyms (| separated), curator synonyms included\n")
        for concept in kb:
            if count % 5000 == 0:
                cancel.raise_if_cancelled()
                progress(count, len(kb), "concepts exported")
            name = _clean(concept.preferred_name)
            synonyms = [s for s in dict.fromkeys(_clean(s) for s in concept.synonyms) if s and s != name]
            out.write(f"{concept.concept_id}\t{name}\t{'|'.join(synonyms)}\n")
            count += 1
    tmp.replace(path)
    progress(count, len(kb), "concepts exported")
    return count
