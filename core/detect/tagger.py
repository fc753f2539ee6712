"""A trained sequence tagger: a linear-chain CRF (python-crfsuite) over tokens, BIO labels per type, with
the project's lexicon as features (core.detect.tagger_features).

Why a CRF and not only the dictionary: the dictionary finds the names it holds, whole; the annotators
mark what the names do not cover ("breast and ovarian cancer" as one composite, "type 2 diabetes
mellitus", a chemical with its locants and salt, a disease the KB names differently) and pass over names
in contexts they do not annotate. A CRF learns both from the annotations, using the dictionary's
matches as evidence rather than as the answer (TaggerOne's lesson, Leaman & Lu 2016). It runs on the CPU
at hundreds of abstracts a second.

The model is crfsuite's own binary file (`tagger.crfsuite`, not a pickle) beside `tagger.json` (the
types, training options and figures). Detection needs the project's dictionary, given at load time
(core.project_detector builds it, leaving out an evaluated split's annotations), because its matches
are features. After decoding, a short form the text defines takes its long form's label everywhere it
is used, as the dictionary does for its own matches. With `gap_filler` (the dictionary), its mentions
are kept where the tagger found nothing overlapping: "tagger ∪ dictionary".
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pycrfsuite

from core.atomic_files import write_text_atomic
from core.detect.tagger_features import Token, sequence_features
from core.documents import Document, Mention
from core.errors import CuralinkError
from core.progress import NEVER_CANCELLED, CancelToken

log = logging.getLogger(__name__)

MODEL_FILE = "tagger.crfsuite"
SETTINGS_FILE = "tagger.json"
FORMAT = 1


@dataclass
class TaggerSettings:
    """What `tagger.json` keeps: the labels' types and how the CRF was trained."""

    types: list[str]
    c1: float = 0.05
    c2: float = 0.01
    max_iterations: int = 150
    folds: int = 4
    """Training documents' dictionary features come from a dictionary that never learnt from their own
    annotations (one per fold): else the CRF learns that a dictionary match is always right."""
    repeats: bool = False
    """After decoding, label a labelled string at its every repetition in the text (off: on NCBI-disease
    dev it cost 0.24 points of span F1)."""
    format: int = FORMAT
    metrics: dict = field(default_factory=dict)


def labels_of(document: Document, tokens: list[Token]) -> list[str]:
    """BIO labels of the document's mentions over `tokens`; a mention boundary inside a token takes the
    whole token. Overlapping mentions: the first (in offset order) wins."""
    labels = ["O"] * len(tokens)
    for mention in sorted(document.mentions, key=lambda m: (m.start, -m.end)):
        covered = [i for i, t in enumerate(tokens) if t.start < mention.end and mention.start < t.end]
        if not covered or any(labels[i] != "O" for i in covered):
            continue
        labels[covered[0]] = f"B-{mention.type}"
        for i in covered[1:]:
            labels[i] = f"I-{mention.type}"
    return labels


def _spans(labels: Sequence[str]) -> list[tuple[int, int, str]]:
    """(first token, last token, type) of each labelled run; an I- after O or another type starts one."""
    spans: list[tuple[int, int, str]] = []
    for i, label in enumerate(labels):
        if label == "O":
            continue
        kind = label[2:]
        if label.startswith("I-") and spans and spans[-1][1] == i - 1 and spans[-1][2] == kind:
            spans[-1] = (spans[-1][0], i, kind)
        else:
            spans.append((i, i, kind))
    return spans


def train_tagger(
    sequences: Sequence[tuple[list[list[str]], list[str]]],
    folder: Path,
    settings: TaggerSettings,
    *,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """Fit the CRF on (features, labels) sequences and write the model and settings into `folder`."""
    if not any(label != "O" for _, labels in sequences for label in labels):
        raise CuralinkError("no labelled mention in the tagger's training documents")
    trainer = pycrfsuite.Trainer(verbose=False)
    for features, labels in sequences:
        cancel.raise_if_cancelled()
        trainer.append(pycrfsuite.ItemSequence(features), labels)
    trainer.set_params(
        {
            "c1": settings.c1,
            "c2": settings.c2,
            "max_iterations": settings.max_iterations,
            "feature.possible_transitions": True,
        }
    )
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    trainer.train(str(folder / MODEL_FILE))
    figures = {
        "train_seconds": round(time.perf_counter() - started, 1),
        "sequences": len(sequences),
        "tokens": sum(len(labels) for _, labels in sequences),
        "iterations": trainer.logparser.iterations[-1]["num"] if trainer.logparser.iterations else 0,
    }
    settings.metrics = {**settings.metrics, **figures}
    save_settings(settings, folder)
    return figures


def save_settings(settings: TaggerSettings, folder: Path) -> None:
    write_text_atomic(folder / SETTINGS_FILE, json.dumps(asdict(settings), indent=2))


def load_settings(folder: Path) -> TaggerSettings:
    path = Path(folder) / SETTINGS_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CuralinkError(f"{path}: cannot read the tagger's settings ({error})") from None
    if raw.get("format") != FORMAT:
        raise CuralinkError(f"{path}: tagger format {raw.get('format')!r}, this version reads {FORMAT}")
    return TaggerSettings(**raw)


class CrfTagger:
    """Detector protocol (core.detect.base): tag raw documents with a trained CRF."""

    name = "tagger"

    def __init__(self, folder: str | Path, dictionary, *, version: str = "", gap_filler=None):
        folder = Path(folder)
        if not (folder / MODEL_FILE).is_file():
            raise CuralinkError(f"{folder / MODEL_FILE}: no tagger model file")
        self.folder = folder
        self.settings = load_settings(folder)
        self.dictionary = dictionary
        self.version = version
        self.gap_filler = gap_filler
        self.types = tuple(self.settings.types)
        self._tagger = pycrfsuite.Tagger()
        self._tagger.open(str(folder / MODEL_FILE))

    def detect(
        self, documents: Sequence[Document], *, cancel: CancelToken = NEVER_CANCELLED
    ) -> list[list[Mention]]:
        out = []
        for document in documents:
            cancel.raise_if_cancelled()
            found = self.detect_text(document.text)
            if self.gap_filler is not None:
                found = fill_gaps(found, self.gap_filler.detect_text(document.text, abbreviations=True))
            out.append(found)
        return out

    def detect_text(self, text: str) -> list[Mention]:
        tokens, features, reading = sequence_features(text, self.dictionary)
        if not tokens:
            return []
        labels = self._tagger.tag(pycrfsuite.ItemSequence(features))
        found = []
        for first, last, kind in _spans(labels):
            probability = min(self._tagger.marginal(labels[i], i) for i in range(first, last + 1))
            start, end = tokens[first].start, tokens[last].end
            found.append(
                Mention(
                    start,
                    end,
                    text[start:end],
                    kind,
                    origin="detected",
                    infons={"probability": round(probability, 4)},
                )
            )
        found = _with_short_forms(text, found, reading.definitions)
        if self.settings.repeats:
            found = _with_repeats(text, found)
        return _with_dictionary_ids(found, reading.raw)


def _with_short_forms(text: str, found: list[Mention], definitions) -> list[Mention]:
    """A short form whose definition the tagger labelled (long or short form) is labelled wherever the
    text uses it: "Cystic fibrosis (CF) ... CF patients" tags both CFs, as the dictionary does."""
    if not found:
        return found
    by_span = {(m.start, m.end): m for m in found}
    extra: list[Mention] = []
    for definition in definitions:
        source = by_span.get((definition.long_span.start, definition.long_span.end)) or by_span.get(
            (definition.short_span.start, definition.short_span.end)
        )
        if source is None:
            continue
        pattern = re.compile(rf"(?<!\w){re.escape(definition.short)}(?!\w)")
        for use in pattern.finditer(text):
            extra.append(
                Mention(
                    use.start(),
                    use.end(),
                    use.group(),
                    source.type,
                    origin="detected",
                    infons={"probability": source.infons.get("probability", 1.0)},
                )
            )
    return fill_gaps(found, extra) if extra else found


def _with_repeats(text: str, found: list[Mention]) -> list[Mention]:
    """A string the tagger labelled once is labelled wherever else the abstract repeats it (annotators
    mark every occurrence; the CRF, reading each in its own context, may pass one over)."""
    extra: list[Mention] = []
    seen: set[str] = set()
    for mention in found:
        if mention.text in seen or len(mention.text) < 3:
            continue
        seen.add(mention.text)
        flags = 0 if mention.text.isupper() or len(mention.text) <= 5 else re.IGNORECASE
        for again in re.finditer(rf"(?<![\w-]){re.escape(mention.text)}(?![\w-])", text, flags):
            extra.append(
                Mention(
                    again.start(),
                    again.end(),
                    again.group(),
                    mention.type,
                    origin="detected",
                    infons={"probability": mention.infons.get("probability", 1.0)},
                )
            )
    return fill_gaps(found, extra) if extra else found


def _with_dictionary_ids(found: list[Mention], raw) -> list[Mention]:
    """A tagged span the dictionary also matched carries the dictionary's ids (as its own mentions do)."""
    if not raw or not found:
        return found
    ids = {(s, e): i for s, e, i, _ in raw}
    out = []
    for mention in found:
        known = ids.get((mention.start, mention.end))
        if known:
            mention = Mention(
                mention.start,
                mention.end,
                mention.text,
                mention.type,
                concept_id=next(iter(known)) if len(known) == 1 else "",
                origin="detected",
                infons={**mention.infons, "dictionary_ids": "|".join(sorted(known))},
            )
        out.append(mention)
    return out


def fill_gaps(primary: list[Mention], filler: list[Mention]) -> list[Mention]:
    """`primary`'s mentions, and `filler`'s where no primary mention overlaps them, in offset order."""
    kept = list(primary)
    for mention in filler:
        if not any(mention.start < m.end and m.start < mention.end for m in kept):
            kept.append(mention)
    return sorted(kept, key=lambda m: (m.start, m.end))


def training_sequences(
    documents: Sequence[Document],
    dictionary_for: Callable[[Document], object],
    types: Sequence[str],
) -> list[tuple[list[list[str]], list[str]]]:
    """(features, labels) of each document: features read with `dictionary_for(document)` (a dictionary
    that did not learn from it), labels of its mentions of `types` (the others are outside)."""
    wanted = set(types)
    out = []
    for document in documents:
        tokens, features, _ = sequence_features(document.text, dictionary_for(document))
        labelled = document.with_mentions([m for m in document.mentions if m.type in wanted])
        out.append((features, labels_of(labelled, tokens)))
    return out
