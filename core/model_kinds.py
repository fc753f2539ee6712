"""The model kinds a project trains: the registry every front end and job reads, and loading a version.

Each kind declares, as "module:function" names resolved only when called (reading the registry loads
no model code), how it is trained, retrained, evaluated and loaded, the CLI options of its `train` and
`evaluate` subcommands, the phases of its retrain step, what training needs and which held-out metric
the promotion rule (core.jobs.models.promotion) compares. Adding a kind is its own module in
core/jobs/models/ and an entry here.

The registry sits in the models room, below the jobs, because `load_linker` (core.project_models) loads the
linking kinds through `load_version`: the loaders are in this room too (core.project_models,
core.project_detector), the trainers in core/jobs/models/ (their verbs: core.jobs.models.kinds).

The kinds' functions share a leading signature (checked by tests/test_train_via_registry.py):
- train: `(project, *, promote: bool, progress, cancel, **options) -> TrainedVersion`;
- retrain: `(project, step: RetrainStep) -> KindReport` (fine-tune from the version in force, judged on the
  held-out slice; core.jobs.models.retrain_report.RetrainStep holds the KB, training set, rule and bounds);
- evaluate: `(project, split, **options) -> dict`;
- load: `(project, version_row, **options) -> the loaded model`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import CuralinkError

if TYPE_CHECKING:
    from core.store.project import Project


@dataclass(frozen=True)
class Option:
    """One option of a kind's `train` or `evaluate` subcommand, as data: the CLI (app/cli/kind_options.py)
    makes it an argument its parser checks, and hands its value to the kind's job as `keyword`."""

    flag: str
    value: str = "text"
    """"whole", "number", "folder", "candidates" (a whole number up to the CLI's bound), "choice", "switch"
    (a flag without a value), "text"."""
    default: object = None
    help: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    above: bool = False
    """A number strictly above `minimum`."""
    choices: tuple[str, ...] = ()
    keyword: str = ""
    """The job's keyword (default: the flag's name with underscores); "-" for the CLI's own (--json)."""

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class KindCommands:
    """A kind's `train KIND` and `evaluate NAME` subcommands (the CLI builds them from here)."""

    train_help: str
    train_options: tuple[Option, ...]
    evaluate_help: str = ""
    evaluate_options: tuple[Option, ...] = ()
    evaluate_name: str | None = ""
    """The `evaluate` subcommand's name ("": the kind's name; None: none of its own, as the tagger, which
    `evaluate detect` measures with the detector)."""
    train_keywords: str = ""
    """"module:function" turning the options' values into the trainer's keywords where they are not one
    to one (a "promote" it returns is `train`'s rule); "" when they are."""
    train_lines: str = ""
    """"module:function" `(trained, wall_seconds) -> lines` saying what the training did, after the line
    naming the version."""


@dataclass(frozen=True)
class ModelKind:
    name: str
    score: str
    """The held-out metric `promotion_decision` compares (higher is better)."""
    score_name: str
    """How a promotion reason names that metric."""
    held_out: str
    """What the held-out slice must hold for a comparison (named when it holds none)."""
    needs: str
    """What training needs, for the message when the project lacks it."""
    train: str
    retrain: str
    evaluate: str
    load: str
    commands: KindCommands
    """Its `train KIND` and `evaluate` subcommands' help and options."""
    phases: tuple[tuple[str, float], ...]
    """The retrain step's phases (`name`, share of one model's training budget); a phase "" is the kind's
    one phase, named by the kind (core.jobs.models.retrain_plan.retrain_phases)."""
    retrained_by_default: bool = True
    """Whether `retrain` without named kinds trains it (the detector: only when one is in force)."""
    offered: str = "always"
    """When a front end offers it for retraining: "always", or "in-force" (only when a version is)."""
    wants_gpu: bool = False
    """Left out of a retrain by default where no GPU makes training it worthwhile (the cross-encoder)."""

    def job(self, which: str) -> Callable:
        """The function behind `train`, `retrain`, `evaluate` or `load` (or a "module:function" `which`
        names itself), imported now."""
        module, name = (which if ":" in which else getattr(self, which)).split(":")
        target = importlib.import_module(module)
        for part in name.split("."):
            target = getattr(target, part)
        return target

    def phase_names(self) -> list[str]:
        return [f"{self.name}: {phase}" if phase else self.name for phase, _ in self.phases]


DEVICE = Option("--device", "choice", "auto", choices=("auto", "cpu", "cuda"))
SPLIT = Option("--split", "choice", "test", choices=("train", "dev", "test"))
JSON = Option("--json", "switch", False, keyword="-")
BASE_MODEL = Option(
    "--base-model", "folder", help="a local BERT-family folder (default: packaged all-MiniLM-L6-v2)"
)
MAX_SECONDS = Option(
    "--max-seconds", "number", None, "optional time limit (default: none)", minimum=0, above=True
)
PACKINGS = ("pair", "mention", "sentence", "document", "compact")
RETRIEVER_EPOCHS = 10
RETRIEVER_PATIENCE = 3
"""`train retriever`'s defaults (core.jobs.models.retriever says why)."""

RETRIEVER_EVAL_SHARE = 0.25  # indexing the KB with the new retriever, scoring the held-out slice
RERANKER_CANDIDATES_SHARE = 0.15  # the retriever's candidates for the training documents
RERANKER_EVAL_SHARE = 0.15
RANKER_SHARE = 0.10  # the learned ranker fits in seconds

KINDS: dict[str, ModelKind] = {
    kind.name: kind
    for kind in (
        ModelKind(
            "retriever",
            score="acc@1",
            score_name="held-out acc@1",
            held_out="mentions",
            needs="a knowledge base (its synonyms are the training pairs), plus gold or curated links",
            train="core.jobs.models.retriever:train_retriever",
            retrain="core.jobs.models.retriever:retrain_retriever",
            evaluate="core.evaluate.retrieval:evaluate_project_retriever",
            load="core.project_models:load_retriever",
            commands=KindCommands(
                "train a ResCNN retriever (KB synonyms + gold + curator links)",
                (
                    BASE_MODEL,
                    Option(
                        "--epochs",
                        "whole",
                        RETRIEVER_EPOCHS,
                        f"at most this many epochs (default {RETRIEVER_EPOCHS})",
                        minimum=1,
                    ),
                    Option(
                        "--patience",
                        "whole",
                        RETRIEVER_PATIENCE,
                        "stop after this many epochs without a held-out recall@20 gain (acc@1 breaks a tie), "
                        f"keeping the best (default {RETRIEVER_PATIENCE}; held out: the dev split, else a tenth "
                        "of train; 0: no early stopping, train on all)",
                        minimum=0,
                    ),
                    MAX_SECONDS,
                    Option("--pooling", "choice", "max", choices=("max", "mean", "attention")),
                    Option("--seed", "whole", 13),
                ),
                "acc@1/5/10, recall@20/64 of the active retriever",
                (
                    SPLIT,
                    Option(
                        "--with-train-strings",
                        "switch",
                        False,
                        "add train+dev gold mention strings as synonyms (reference protocol)",
                    ),
                    JSON,
                ),
                train_lines="core.jobs.models.versions:training_lines",
            ),
            phases=(("training", 1.0), ("evaluating", RETRIEVER_EVAL_SHARE)),
        ),
        ModelKind(
            "reranker",
            score="acc@1",
            score_name="held-out acc@1",
            held_out="mentions",
            needs="a retriever in force and gold or curated links in train documents",
            train="core.jobs.models.reranker:train_reranker_for_project",
            retrain="core.jobs.models.reranker:retrain_reranker",
            evaluate="core.jobs.models.reranker:evaluate_reranker_for_project",
            load="core.project_models:load_reranker",
            commands=KindCommands(
                "train a packed cross-encoder on the retriever's candidates",
                (
                    Option("--packing", "choice", "compact", choices=PACKINGS),
                    BASE_MODEL,
                    Option("--max-epochs", "whole", 16, "at most this many epochs (default 16)", minimum=1),
                    Option(
                        "--patience",
                        "whole",
                        3,
                        "stop after this many dev checks without a gain (default 3)",
                        minimum=0,
                    ),
                    MAX_SECONDS,
                    Option("--candidates", "candidates", 16),
                    DEVICE,
                ),
                "acc@1 of retriever + reranker (pure and fused)",
                (
                    SPLIT,
                    Option("--packing", "choice", None, choices=PACKINGS),
                    Option("--candidates", "candidates", 16),
                    DEVICE,
                    JSON,
                ),
                train_lines="core.jobs.models.versions:training_lines",
            ),
            phases=(
                ("candidates", RERANKER_CANDIDATES_SHARE),
                ("training", 1.0),
                ("evaluating", RERANKER_EVAL_SHARE),
            ),
            wants_gpu=True,
        ),
        ModelKind(
            "ranker",
            score="acc@1",
            score_name="held-out acc@1",
            held_out="mentions",
            needs="a retriever in force and imported gold or accepted / corrected decisions",
            train="core.jobs.models.ranker:train_ranker_for_project",
            retrain="core.jobs.models.ranker:retrain_ranker",
            evaluate="core.jobs.models.ranker:evaluate_ranker_for_project",
            load="core.project_models:load_ranker",
            commands=KindCommands(
                "fit the learned ranker on gold and curator decisions (seconds, CPU)",
                (
                    Option("--candidates", "candidates", 20, "retriever candidates per mention"),
                    Option(
                        "--with-reranker",
                        "switch",
                        False,
                        "use the cross-encoder in force as a feature (it then runs before the ranker when linking)",
                        keyword="use_cross_encoder",
                    ),
                    Option(
                        "--scorer",
                        "choice",
                        "logistic",
                        "lightgbm: boosted trees",
                        choices=("logistic", "lightgbm"),
                    ),
                    DEVICE,
                ),
                "acc@1/5, recall@20 without and with the ranker; calibration of its probabilities",
                (SPLIT, Option("--candidates", "candidates", 20), DEVICE, JSON),
                train_lines="core.jobs.models.ranker:training_lines",
            ),
            phases=(("", RANKER_SHARE),),
        ),
        ModelKind(
            "detector",
            score="score",
            score_name="held-out span/end-to-end F1",
            held_out="documents with spans",
            needs="gold or curator-checked mention spans",
            train="core.jobs.models.detector:train_detector_for_project",
            retrain="core.jobs.models.detector:retrain_detector",
            evaluate="core.evaluate.detection:evaluate_detectors",
            load="core.project_detector:load_detector_version",
            commands=KindCommands(
                "train the span model (collective dual encoder) on gold and curator-checked spans",
                (
                    BASE_MODEL,
                    Option("--epochs", "whole", None, "at most this many epochs (default 4)", minimum=1),
                    Option(
                        "--patience",
                        "whole",
                        None,
                        "stop after this many epochs without a dev gain (default 2)",
                        minimum=0,
                    ),
                    Option(
                        "--trainable-layers",
                        "whole",
                        None,
                        "fine-tune only the top N encoder layers (default: the CPU recipe; 0: all)",
                        minimum=0,
                    ),
                    DEVICE,
                    Option(
                        "--promote",
                        "choice",
                        "if-better",
                        "if-better (default): in force only if link --detect links the held-out documents at least "
                        "as well end to end with it as with the dictionary alone; always: in force regardless",
                        choices=("if-better", "always"),
                    ),
                ),
                "span and end-to-end P/R/F1, overall and per type, of what `link --detect` would store on the "
                "split's raw text (and of each detector's own concepts; neleval's definitions)",
                (
                    SPLIT,
                    Option("--device", "choice", "cpu", choices=("auto", "cpu", "cuda")),
                    Option("--candidates", "candidates", 16, "as link --candidates (default 16)"),
                    Option(
                        "--type",
                        help="as link --detect --type: tag only this mention type",
                        keyword="requested_type",
                    ),
                    JSON,
                ),
                evaluate_name="detect",
                train_keywords="core.jobs.models.detector:train_keywords",
                train_lines="core.jobs.models.detector:training_lines",
            ),
            phases=(("", 1.0),),  # bounded by epochs, not the budget: minutes on a CPU
            retrained_by_default=False,
            offered="in-force",
        ),
        ModelKind(
            "tagger",
            score="score",
            score_name="held-out end-to-end strict F1",
            held_out="documents with spans",
            needs="gold or curator-checked mention spans",
            train="core.jobs.models.tagger:train_tagger_for_project",
            retrain="core.jobs.models.tagger:retrain_tagger",
            evaluate="core.evaluate.detection:evaluate_detectors",
            load="core.project_detector:load_tagger_version",
            commands=KindCommands(
                "train the CRF tagger on gold and curator-checked spans, with the project's dictionary as "
                "features; the held-out documents decide, per type, whether it goes in force",
                (
                    Option("--c1", "number", 0.05, "L1 penalty (default 0.05)", minimum=0),
                    Option("--c2", "number", 0.01, "L2 penalty (default 0.01)", minimum=0),
                    Option(
                        "--iterations",
                        "whole",
                        150,
                        "at most this many L-BFGS iterations",
                        minimum=1,
                        maximum=100_000,
                        keyword="max_iterations",
                    ),
                    Option(
                        "--folds",
                        "whole",
                        4,
                        "dictionaries that leave out each fold's annotations (default 4)",
                        minimum=1,
                        maximum=50,
                    ),
                    Option("--device", "choice", "cpu", "for the linker", choices=("auto", "cpu", "cuda")),
                    Option(
                        "--promote",
                        "choice",
                        "if-better",
                        "if-better (default): in force for the types where link --detect links the held-out "
                        "documents at least as well end to end with it as with the detector in force; always; never",
                        choices=("if-better", "always", "never"),
                    ),
                ),
                evaluate_name=None,
                train_keywords="core.jobs.models.tagger:train_keywords",
                train_lines="core.jobs.models.tagger:training_lines",
            ),
            phases=(("", 1.0),),  # a CRF bounded by its iterations, then judged on held-out documents
            retrained_by_default=False,
        ),
    )
}

LINKING_KINDS = tuple(name for name, kind in KINDS.items() if kind.retrained_by_default)
"""Retrained in this order: the retriever first (the reranker trains on its candidates), the ranker
last (on the candidates of the models then in force)."""


def model_kind(name: str) -> ModelKind:
    try:
        return KINDS[name]
    except KeyError:
        raise CuralinkError(f"unknown model kind {name!r}; kinds are {', '.join(KINDS)}") from None


def load_version(project: Project, kind: str, row, **options):
    """The registry row `row` of `kind`, loaded by the kind's loader (`options`: the loader's own)."""
    return model_kind(kind).job("load")(project, row, **options)


def load(project: Project, kind: str, version: str | None = None, **options):
    """A version of `kind` (the one in force when `version` is None), loaded and ready to use."""
    spec = model_kind(kind)
    if version is None:
        row = project.models.active_model(kind)
        if row is None:
            raise CuralinkError(f"{project.path}: no {kind} in force (training one needs {spec.needs})")
    else:
        rows = [row for row in project.models.model_versions(kind) if row.version == version]
        if not rows:
            known = ", ".join(row.version for row in project.models.model_versions(kind)) or "none"
            raise CuralinkError(f"{project.path}: no {kind} version {version!r} (versions: {known})")
        row = rows[0]
    return load_version(project, kind, row, **options)
