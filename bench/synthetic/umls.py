"""A synthetic MRCONSO.RRF in the real format, to measure the UMLS loader at release scale.

UMLS is licensed, so no real MRCONSO can ship with the project or its tests. This writes rows
that look like a release to the loader: sorted by CUI, 18 fields and a trailing `|`, several
atoms per CUI from several sources (MSH, SNOMEDCT_US, NCI, ...) with their term types, about
12% non-English rows, a few suppressed (O / E / Y) atoms, exactly one TS=P / STT=PF / ISPREF=Y
row per CUI and language, and ASCII plus some accented strings. The same seed writes the same
bytes.

The built-in word list makes a few tens of thousands of distinct names, repeated across CUIs: enough
for a loader, not for a name index (a million names would be mostly exact duplicates, and "the exact
top-64" a tie among hundreds). `words` (a real vocabulary, e.g. every word of MEDIC's names) makes each
concept's base name from one to three of them plus the built-in parts, so names are as varied as a
real thesaurus while keeping its structure (a concept's atoms are variants of one base name).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from core.kb.umls_rrf import read_umls_rrf
from core.memory import peak_rss_mb

_SOURCES = (  # (SAB, term types, source restriction level)
    ("MSH", ("MH", "ET", "PM", "ET"), "0"),
    ("SNOMEDCT_US", ("PT", "FN", "SY", "SY"), "9"),
    ("NCI", ("PT", "SY", "AB"), "0"),
    ("MEDLINEPLUS", ("PT", "SY"), "0"),
    ("HPO", ("PT", "SY"), "0"),
    ("OMIM", ("PT", "ETAL"), "0"),
    ("RXNORM", ("IN", "SY"), "0"),
    ("ICD10CM", ("PT", "HT"), "3"),
    ("LNC", ("LN", "LC"), "0"),
    ("MTH", ("PN",), "0"),
)
_FOREIGN = (("SPA", "MSHSPA"), ("FRE", "MSHFRE"), ("GER", "MSHGER"), ("POR", "MSHPOR"), ("JPN", "MSHJPN"))
_STEMS = (
    "cardi", "hepat", "nephr", "neur", "oste", "derm", "gastr", "pulmon", "my", "encephal",
    "arthr", "angi", "lymph", "thyr", "pancreat", "retin", "col", "cyst", "aden", "hem",
)  # fmt: skip
_SUFFIXES = ("itis", "opathy", "oma", "algia", "osis", "ectasia", "emia", "plasia", "ology", "otoxicity")
_MODIFIERS = (
    "acute", "chronic", "congenital", "familial", "juvenile", "primary", "secondary", "hereditary",
    "idiopathic", "malignant", "benign", "autoimmune", "diffuse", "focal", "severe", "recurrent",
)  # fmt: skip
_QUALIFIERS = (
    "type 1",
    "type 2",
    "type II",
    "with complications",
    "NOS",
    "(disorder)",
    "syndrome",
    "disease",
)
_ACCENTED = ("é", "è", "ü", "ö", "ñ", "ç")


@dataclass(frozen=True)
class LoadMeasurement:
    rows: int
    concepts: int
    names: int
    seconds: float
    peak_rss_mb: float


def write_synthetic_mrconso(
    path: str | Path, rows: int = 1_000_000, seed: int = 0, words: Sequence[str] = (), cui_gap: int = 40
) -> int:
    """Write exactly `rows` MRCONSO rows to `path`; returns the number of distinct CUIs written.
    CUIs advance by 1 to `cui_gap` (UMLS leaves gaps; a small gap fits a UMLS-size file in C0000000)."""
    rng = random.Random(seed)
    words = tuple(words)
    path = Path(path)
    cui = 1_000
    counters = {"L": 1_000, "S": 1_000, "A": 1_000}
    written = cuis = 0
    buffer: list[str] = []
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        while written < rows:
            cui += rng.randint(1, cui_gap)
            if cui >= 10_000_000:
                raise ValueError(f"{rows} rows do not fit in the CUI space; ask for fewer")
            block = _concept_rows(rng, f"C{cui:07d}", counters, words)
            block = block[: rows - written]
            buffer.extend(block)
            written += len(block)
            cuis += 1
            if len(buffer) >= 20_000:
                handle.write("".join(buffer))
                buffer.clear()
        handle.write("".join(buffer))
    return cuis


def _next(counters: dict[str, int], kind: str) -> str:
    counters[kind] += 1
    return f"{kind}{counters[kind]:07d}"


def _base_name(rng: random.Random, vocabulary: tuple[str, ...] = ()) -> str:
    words = [rng.choice(_STEMS) + rng.choice(_SUFFIXES)]
    if vocabulary:
        picked = [rng.choice(vocabulary) for _ in range(rng.choice((1, 2, 2, 3)))]
        words = picked if rng.random() < 0.5 else picked + words
    if rng.random() < 0.6:
        words.insert(0, rng.choice(_MODIFIERS))
    if rng.random() < 0.3:
        words.append(rng.choice(_QUALIFIERS))
    name = " ".join(words)
    return name[0].upper() + name[1:]


def mention_like(names: Sequence[str], seed: int = 0) -> list[str]:
    """One variant per name, made as the thesaurus makes its atoms (reordered, re-cased, qualified,
    abbreviated): query strings near a concept's names without being copies of the one drawn."""
    rng = random.Random(seed)
    return [_variant(rng, name) for name in names]


def _variant(rng: random.Random, base: str) -> str:
    words = base.split()
    choice = rng.random()
    if choice < 0.25:
        return base.upper()
    if choice < 0.45 and len(words) > 1:
        return f"{' '.join(words[1:])}, {words[0].lower()}"
    if choice < 0.6:
        return base.lower()
    if choice < 0.7:
        return "".join(word[0] for word in words).upper()
    if choice < 0.85:
        return f"{base} {rng.choice(_QUALIFIERS)}"
    return f"{rng.choice(_MODIFIERS).capitalize()} {base.lower()}"


def _row(fields: list[str]) -> str:
    return "|".join(fields) + "|\n"


def _concept_rows(
    rng: random.Random, cui: str, counters: dict[str, int], vocabulary: tuple[str, ...] = ()
) -> list[str]:
    """One CUI's atoms: the preferred English atom first, then variants, then foreign names."""
    base = _base_name(rng, vocabulary)
    lines: list[str] = []
    atoms = min(1 + int(rng.expovariate(1 / 5)), 40)
    preferred_lui = _next(counters, "L")
    strings: dict[str, tuple[str, str, str, str]] = {}  # name -> TS, LUI, STT, SUI: one SUI a string
    for index in range(atoms):
        sab, ttys, srl = rng.choice(_SOURCES)
        tty = rng.choice(ttys)
        name = base if index == 0 else _variant(rng, base)
        known = strings.get(name)
        if known is not None:
            (ts, lui, stt, sui), ispref = known, "N"
        elif index == 0:
            ts, lui, stt, sui, ispref = "P", preferred_lui, "PF", _next(counters, "S"), "Y"
        elif name.lower() == base.lower():
            ts, lui, stt, sui, ispref = (
                "P",
                preferred_lui,
                "VC" if name != base else "VO",
                _next(counters, "S"),
                "Y",
            )
        else:
            ts, lui, stt, sui, ispref = "S", _next(counters, "L"), "PF", _next(counters, "S"), "Y"
        strings.setdefault(name, (ts, lui, stt, sui))
        code = f"D{rng.randint(0, 999_999):06d}" if sab == "MSH" else str(rng.randint(10_000, 99_999_999))
        suppress = rng.choices(("N", "O", "E", "Y"), weights=(92, 4, 2, 2))[0]
        scui, sdui = ("", code) if sab == "MSH" else (code, "")
        cvf = rng.choice(("", "", "", "256", "4096"))
        lines.append(
            _row(
                [cui, "ENG", ts, lui, stt, sui, ispref, _next(counters, "A"), "", scui, sdui]
                + [sab, tty, code, name, srl, suppress, cvf]
            )
        )
    for _ in range(rng.choice((0, 0, 0, 1, 2))):
        lat, sab = rng.choice(_FOREIGN)
        name = base.lower().replace("e", rng.choice(_ACCENTED), 1).capitalize()
        descriptor = f"D{rng.randint(0, 999_999):06d}"
        lines.append(
            _row(
                [
                    cui,
                    lat,
                    "P",
                    _next(counters, "L"),
                    "PF",
                    _next(counters, "S"),
                    "Y",
                    _next(counters, "A"),
                    "",
                ]
                + ["", descriptor, sab, "MH", descriptor, name, "3", "N", ""]
            )
        )
    return lines


def measure_umls_load(path: str | Path, **options: object) -> LoadMeasurement:
    """Stream every concept of an MRCONSO file, keeping none: time and peak memory of the loader.

    The peak is the whole process's, so call this in a fresh interpreter for a clean figure.
    """
    concepts = names = rows = 0
    with open(path, "rb") as handle:
        rows = sum(1 for _ in handle)
    start = time.perf_counter()
    for concept in read_umls_rrf(path, **options):  # type: ignore[arg-type]
        concepts += 1
        names += 1 + len(concept.synonyms)
    seconds = time.perf_counter() - start
    return LoadMeasurement(
        rows=rows, concepts=concepts, names=names, seconds=seconds, peak_rss_mb=peak_rss_mb()
    )
