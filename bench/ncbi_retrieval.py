"""The README retrieval table: NCBI-disease test against MEDIC 2012, ResCNN vs baselines.

ResCNN is trained on NCBI train+dev mentions plus MEDIC synonyms, then every retriever is evaluated
on the test set twice: with MEDIC alone, and with the train+dev mention strings added to the
dictionary as synonyms (the BioSyn/ResCNN convention, methods.md A.6).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from core.documents import Document
from core.evaluate.retrieval import mention_pairs, with_mention_synonyms
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.retrieve.rescnn import RescnnConfig
from core.retrieve.train import TrainOptions, train_rescnn

log = logging.getLogger(__name__)


def load_ncbi_inputs(data_dir: str | Path) -> tuple[KnowledgeBase, list[Document], list[Document]]:
    """MEDIC 2012 (with CTD's tree numbers where the data folder has CTD), NCBI train+dev and NCBI test
    through the shared loaders."""
    from core.formats.pubtator import read
    from core.kb.medic import read_medic

    data_dir = Path(data_dir)
    concepts = read_medic(data_dir / "vocab" / "medic_06Jul2012.txt")
    ctd = data_dir / "vocab" / "CTD_diseases.tsv.gz"
    if ctd.is_file():  # MEDIC 2012 has no tree; the ranker's hierarchy features read CTD's (same ids)
        from core.kb.ctd import read_ctd
        from core.rank.hierarchy import ConceptHierarchy, with_tree_numbers

        concepts = with_tree_numbers(concepts, ConceptHierarchy.from_concepts(read_ctd(ctd)))
    kb = KnowledgeBase(concepts)
    ncbi = data_dir / "ncbi-disease"
    train = list(read(ncbi / "NCBItrainset_corpus.txt")) + list(read(ncbi / "NCBIdevelopset_corpus.txt"))
    test = list(read(ncbi / "NCBItestset_corpus.txt"))
    return kb, train, test


def train_ncbi_rescnn(
    kb: KnowledgeBase,
    train_documents: Sequence[Document],
    out_dir: str | Path,
    *,
    config: RescnnConfig | None = None,
    options: TrainOptions | None = None,
    epochs: int = 10,
    seed: int = 13,
    max_seconds: float = 600,
    init_from: str | Path | None = None,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
):
    """ResCNN on NCBI train+dev mentions + MEDIC synonyms, bounded by `max_seconds`.

    `init_from` continues a saved version (e.g. one pre-trained on synonyms alone, with no documents).
    """
    options = options or TrainOptions(kb_names_per_epoch=6000, pair_repeats=2)
    return train_rescnn(
        kb,
        mention_pairs(train_documents),
        None if init_from is not None else (config or RescnnConfig()),
        out_dir,
        epochs=epochs,
        seed=seed,
        options=options,
        max_seconds=max_seconds,
        init_from=init_from,
        progress=progress,
        cancel=cancel,
    )


def ncbi_table(
    kb: KnowledgeBase,
    train_documents: Sequence[Document],
    test_documents: Sequence[Document],
    retrievers: dict,
    *,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict[str, dict[str, dict]]:
    """{retriever name: {"medic": metrics, "medic+traindev": metrics}} for already-built retrievers."""
    from core.evaluate.retrieval import evaluate_retriever

    extended = with_mention_synonyms(kb, mention_pairs(train_documents))
    table: dict[str, dict[str, dict]] = {}
    for label, retriever in retrievers.items():
        table[label] = {}
        for dictionary, knowledge in (("medic", kb), ("medic+traindev", extended)):
            cancel.raise_if_cancelled()
            table[label][dictionary] = evaluate_retriever(
                retriever,
                test_documents,
                knowledge,
                progress=progress,
                cancel=cancel,
            )
    return table
