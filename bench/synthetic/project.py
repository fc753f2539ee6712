"""A large synthetic curation project in the real formats, to measure the desk at 20,000 abstracts.

The files are written as a user would bring them (PubTator abstracts with disease mentions, a TSV
vocabulary) and imported through `Project.kb.import_concepts` / `Project.documents.import_documents`, the path
`curalink corpus import` takes. Suggestions are synthetic but shaped like the retriever's (16 ranked
candidates per mention, the gold concept usually first, stored with `store_suggestions` and the span
they were computed for); decisions are written through `Project.curation.decide` in batches, as the desk writes
them. The same seed writes the same bytes.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.synthetic.umls import _base_name, _variant
from core.documents import Candidate
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

MENTION_TYPE = "Disease"
TOP_K = 16
_GENES = ("BRCA1", "TP53", "CFTR", "HTT", "APC", "MLH1", "PTEN", "RB1", "ATM", "DMD", "FBN1", "NF1")
_COHORTS = ("children", "adults", "elderly patients", "women", "families", "twins", "carriers")
_WITH_ONE = (
    "We studied {n} {cohort} with {m}.",
    "Mutations in the {gene} gene cause {m} in a subset of {cohort}.",
    "Patients with {m} showed reduced survival after {n} months.",
    "No cases of {m} were observed after treatment.",
    "The prevalence of {m} was {n} per 100,000 {cohort}.",
    "Screening for {m} is recommended in {cohort} carrying {gene} variants.",
)
_WITH_TWO = (
    "{M} is frequently associated with {m2}.",
    "The incidence of {m} was higher than that of {m2} ({n} vs {n2} cases).",
    "These findings suggest a common mechanism for {m} and {m2}.",
    "Unlike {m}, {m2} did not respond to {gene}-targeted therapy.",
)
_FILLER = (
    "Clinical data were collected over {n} years.",
    "Statistical analysis used a mixed-effects model adjusted for age and sex.",
    "Written informed consent was obtained from all participants.",
    "Expression of {gene} was measured by quantitative PCR.",
    "The study was approved by the local ethics committee.",
)


@dataclass(frozen=True)
class SyntheticSizes:
    """How big the project is: abstracts, mentions per abstract on average, vocabulary size."""

    documents: int = 20_000
    mentions_per_document: int = 10
    concepts: int = 8_000
    test_share: float = 0.2  # the last fifth of the abstracts is imported as split "test"


def write_kb(path: Path, concepts: int, seed: int = 0) -> list[tuple[str, list[str]]]:
    """A TSV vocabulary (`id<TAB>name<TAB>syn|syn`); returns every concept's id and names."""
    rng = random.Random(seed)
    seen: set[str] = set()
    kb: list[tuple[str, list[str]]] = []
    with path.open("w", encoding="utf-8") as out:
        out.write("# synthetic disease vocabulary written by curalink bench desk\n")
        while len(kb) < concepts:
            name = _base_name(rng)
            if name.lower() in seen:
                continue
            seen.add(name.lower())
            synonyms = sorted({_variant(rng, name) for _ in range(rng.randint(1, 4))} - {name})
            concept_id = f"SYN{len(kb) + 1:06d}"
            out.write(f"{concept_id}\t{name}\t{'|'.join(synonyms)}\n")
            kb.append((concept_id, [name, *synonyms]))
    return kb


def _abstract(rng: random.Random, pmid: int, kb: list[tuple[str, list[str]]], mentions: int) -> list[str]:
    """One PubTator block: title, abstract, and one annotation line per mention (document offsets)."""
    focus = [kb[rng.randrange(len(kb))] for _ in range(3)]  # an abstract is about a few diseases

    def pick() -> tuple[str, str]:
        concept_id, names = rng.choice(focus) if rng.random() < 0.7 else kb[rng.randrange(len(kb))]
        return concept_id, rng.choice(names)

    annotations: list[tuple[int, int, str, str]] = []
    text = ""

    def fill(template: str, starting: bool) -> None:
        nonlocal text
        values = {
            "n": str(rng.randint(3, 400)),
            "n2": str(rng.randint(3, 400)),
            "gene": rng.choice(_GENES),
            "cohort": rng.choice(_COHORTS),
        }
        pieces = template.replace("{M}", "{m}").split("{")
        out = pieces[0]
        for piece in pieces[1:]:
            slot, rest = piece.split("}", 1)
            if slot in ("m", "m2"):
                concept_id, name = pick()
                if starting and not out:
                    name = name[0].upper() + name[1:]
                start = len(text) + len(out)
                annotations.append((start, start + len(name), name, concept_id))
                out += name
            else:
                out += values[slot]
            out += rest
        text += out

    fill(
        rng.choice(("{M} in {cohort}: a cohort study.", "{gene} variants and {m}.", "Outcomes of {m}.")), True
    )
    title_length = len(text)
    text += " "
    while len(annotations) < mentions:
        roll = rng.random()
        template = rng.choice(_FILLER if roll < 0.25 else _WITH_TWO if roll < 0.55 else _WITH_ONE)
        if text[-1] != " ":
            text += " "
        fill(template, True)
    title, abstract = text[:title_length], text[title_length + 1 :]
    lines = [f"{pmid}|t|{title}", f"{pmid}|a|{abstract}"]
    lines += [f"{pmid}\t{s}\t{e}\t{name}\t{MENTION_TYPE}\t{c}" for s, e, name, c in annotations]
    return lines


def write_corpus(
    folder: Path, sizes: SyntheticSizes, kb: list[tuple[str, list[str]]], seed: int = 0
) -> dict[str, Path]:
    """PubTator files, one per split (train, test); returns split -> file."""
    rng = random.Random(seed + 1)
    test_from = int(sizes.documents * (1 - sizes.test_share))
    files = {"train": folder / "synthetic-train.pubtator", "test": folder / "synthetic-test.pubtator"}
    outs = {split: path.open("w", encoding="utf-8") for split, path in files.items()}
    try:
        for n in range(sizes.documents):
            count = max(2, int(rng.gauss(sizes.mentions_per_document, 3)))
            block = _abstract(rng, 30_000_000 + n, kb, count)
            outs["test" if n >= test_from else "train"].write("\n".join(block) + "\n\n")
    finally:
        for out in outs.values():
            out.close()
    return files


def ranked_candidates(
    rng: random.Random, gold: str, kb: list[tuple[str, list[str]]], names: dict[str, str]
) -> list[Candidate]:
    """16 candidates as a retriever ranks them: the gold concept first about 65 % of the time, lower
    in 20 %, missing in the rest; scores fall with rank, the top-two margin varies (the queue's order)."""
    concepts = {gold} if rng.random() < 0.85 else set()
    while len(concepts) < TOP_K:
        concepts.add(kb[rng.randrange(len(kb))][0])
    others = [c for c in concepts if c != gold]
    rng.shuffle(others)
    order = others
    if gold in concepts:
        order.insert(0 if rng.random() < 0.76 else rng.randint(1, 4), gold)
    score = rng.uniform(0.55, 0.98)
    ranked = []
    for concept_id in order:
        ranked.append(Candidate(concept_id, names[concept_id], names[concept_id], round(score, 4)))
        score -= rng.uniform(0.0, 0.06)
    return ranked


def suggestion_batches(
    project, kb: list[tuple[str, list[str]]], batch: int = 4000, seed: int = 0
) -> Iterator[tuple[dict, dict]]:
    """(mention id -> candidates, mention id -> span and type) per batch of mentions, in document order."""
    rng = random.Random(seed + 2)
    names = {concept_id: synonyms[0] for concept_id, synonyms in kb}
    suggestions: dict[int, list[Candidate]] = {}
    keys: dict[int, tuple[int, int, str]] = {}
    for document, mention_ids in project.documents.documents_with_mention_ids():
        for mention, mention_id in zip(document.mentions, mention_ids, strict=True):
            suggestions[mention_id] = ranked_candidates(rng, mention.concept_id, kb, names)
            keys[mention_id] = (mention.start, mention.end, mention.type)
        if len(suggestions) >= batch:
            yield suggestions, keys
            suggestions, keys = {}, {}
    if suggestions:
        yield suggestions, keys


def build_synthetic_project(
    folder: Path,
    sizes: SyntheticSizes = SyntheticSizes(),  # noqa: B008 - frozen
    *,
    seed: int = 0,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> Path:
    """Write the files and import them into `folder/project` with stored suggestions and no decisions.

    Reused when a finished one is there (a marker file is written last, so a cancelled or failed build
    is started again, never used half-made). Returns the project folder."""
    import shutil

    from core.formats import read_corpus
    from core.kb import load_kb
    from core.store import Project

    root = folder / "project"
    marker = folder / "project.done"
    if marker.is_file() and (root / "curalink.db").is_file():
        return root
    shutil.rmtree(root, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    progress(0, None, f"writing a {sizes.concepts:,}-concept TSV vocabulary")
    kb_path = folder / "synthetic-kb.tsv"
    kb = write_kb(kb_path, sizes.concepts, seed)
    progress(0, None, f"writing {sizes.documents:,} PubTator abstracts")
    files = write_corpus(folder, sizes, kb, seed)
    cancel.raise_if_cancelled()
    with Project.create(root) as project:
        progress(0, None, "importing the vocabulary")
        project.kb.import_concepts(load_kb(kb_path, "tsv"), source=str(kb_path), fmt="tsv")
        for split, path in files.items():
            project.documents.import_documents(
                read_corpus(path, "pubtator"),
                source=str(path),
                fmt="pubtator",
                split=split,
                progress=lambda done, total, message="", s=split: progress(
                    done, None, f"importing {s} abstracts {message}".strip()
                ),
                cancel=cancel,
            )
        stored = 0
        for suggestions, keys in suggestion_batches(project, kb, seed=seed):
            cancel.raise_if_cancelled()
            stored += project.curation.store_suggestions(suggestions, computed_for=keys, retriever_version="synthetic")
            progress(stored, None, f"storing synthetic suggestions ({stored:,} rows)")
    marker.write_text("ok\n", encoding="utf-8")
    return root
