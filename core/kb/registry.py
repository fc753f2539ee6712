"""One entry point for every vocabulary format, checked before the first concept is read.

`load_kb` is a plain function (not a generator): the format check, the missing / empty file
check and the option check all happen when it is called, so a caller that opens a database
transaction afterwards never starts one for a file that was going to be refused.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from pathlib import Path

from core.errors import InputError
from core.kb.concept import Concept
from core.kb.concept_stream import ConceptStream
from core.kb.ctd import read_ctd
from core.kb.medic import read_medic
from core.kb.mesh_tables import read_mesh_tables
from core.kb.mesh_xml import read_mesh_xml
from core.kb.obo import read_obo
from core.kb.sniff import sniff_kb_format
from core.kb.source_file import require_file
from core.kb.tsv import read_tsv
from core.kb.umls_rrf import read_umls_rrf
from core.kb.variants import concepts_with_variants
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

KB_FORMATS: tuple[str, ...] = ("mesh-xml", "umls-rrf", "ctd", "medic", "obo", "tsv", "mesh-tsv")

LOADERS: dict[str, Callable[..., Iterator[Concept]]] = {
    "mesh-xml": read_mesh_xml,
    "mesh-tsv": read_mesh_tables,
    "umls-rrf": read_umls_rrf,
    "ctd": read_ctd,
    "medic": read_medic,
    "obo": read_obo,
    "tsv": read_tsv,
}


def load_kb(
    path: str | Path,
    fmt: str,
    *,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
    check_format: bool = True,
    **options: object,
) -> Iterator[Concept]:
    """The concepts of a vocabulary file, streamed by the loader of `fmt`.

    `options` go to that loader (e.g. `languages=` for umls-rrf, `kind=` for ctd);
    `check_format=False` skips the sniffing for a file the sniffer misjudges. Progress is in bytes of
    the file, with the concept count in the message (core.kb.concept_stream). Every concept comes with
    the variants of its names (core.kb.variants: uninverted, possessive and singular forms).
    """
    if fmt not in LOADERS:
        raise InputError(
            path, f"unknown knowledge-base format {fmt!r}; choose one of {', '.join(KB_FORMATS)}"
        )
    path = Path(path)
    if not (fmt == "umls-rrf" and path.is_dir()):
        require_file(path)
    loader = LOADERS[fmt]
    accepted = inspect.signature(loader).parameters
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise InputError(path, f"option(s) {', '.join(unknown)} do not apply to format {fmt}")
    if check_format:
        sniffed = sniff_kb_format(path)
        if sniffed is not None and sniffed != fmt:
            raise InputError(path, f"looks like {sniffed}, not {fmt} (use --format {sniffed})")
    return ConceptStream(
        lambda report: concepts_with_variants(loader(path, progress=report, cancel=cancel, **options)),
        progress,
    )
