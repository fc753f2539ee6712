"""The ranker: a scorer over `FEATURE_NAMES`, its calibration table, stored as one JSON file.

Scorers: scikit-learn's LogisticRegression on standardised features (`logistic`, the default, and
every ranker saved before boosted trees), or gradient-boosted trees on the same standardised features
(`lightgbm`, core.rank.boosted; `train ranker --scorer lightgbm`). The file names its scorer.

The calibration is fitted on out-of-fold scores (documents split into folds, each fold scored by a
model that never saw it), then the final model is fitted on everything; so the table maps scores of
unseen documents to how often such a candidate was right.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from core.atomic_files import write_text_atomic
from core.errors import ModelError
from core.rank import boosted
from core.rank.calibration import apply_calibration, check_calibration, fit_calibration
from core.rank.features import FEATURE_NAMES, FEATURE_SET_VERSION
from core.rank.held_out import (
    COUNTED_WHOLE,
    MEASURED_ON_ALL,
    MEASURED_ON_UNSEEN,
    METRICS_KEY,
    MIN_MENTIONS,
    bulk_accept_curve,
    held_out_top1,
)
from core.safe_models import read_json_file

log = logging.getLogger(__name__)

RANKER_FILE = "ranker.json"
FORMAT = "curalink-ranker"
CALIBRATION_FOLDS = 3
REGULARISATION_C = 1.0
LOGISTIC = "logistic"
SCORERS = (boosted.SCORER, LOGISTIC)
DEFAULT_SCORER = LOGISTIC
"""Chosen on the selection sets (NCBI dev, BioRED diseases; docs/ranker.md, "Scorer"): boosted trees ranked
about one point more mentions right, but their calibrated top-1 ECE on BioRED was worse and two of
eight grid points lost up to 2.7 points, so logistic stays the default."""
READABLE_FEATURE_SETS = (1, FEATURE_SET_VERSION)
"""Feature sets whose stored rankers still apply: set 2 added columns and left set 1's sixteen unchanged,
so a set-1 ranker scores on exactly the columns it was trained on."""
CALIBRATION_METHOD = "auto"
"""The calibration shape rankers store (core.rank.calibration), chosen by `bench quality`'s cross-corpus
comparison on development sets (README, "Calibration across corpora")."""


@dataclass
class RankerModel:
    features: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    calibration: dict
    feature_set: int = FEATURE_SET_VERSION
    uses_cross_encoder: bool = False
    tfidf_union: int = 0
    prior_smoothing: float = 1.0
    version: str = ""
    metrics: dict = field(default_factory=dict)
    scorer: str = LOGISTIC  # a file without the key was written by the logistic-only versions
    trees: str = ""  # the boosted scorer's LightGBM text model (core.rank.boosted)

    def raw_scores(self, rows: np.ndarray) -> np.ndarray:
        """The score (log-odds before calibration); it orders the candidates. `rows` hold this
        version's `FEATURE_NAMES`; a ranker trained on an earlier feature set reads the columns it names."""
        if self.features != list(FEATURE_NAMES):
            rows = rows[:, [FEATURE_NAMES.index(name) for name in self.features]]
        standard = (rows - np.asarray(self.mean)) / np.asarray(self.scale)
        if self.scorer == boosted.SCORER:
            return self._trees().scores(standard)
        return standard @ np.asarray(self.coef) + self.intercept

    def _trees(self) -> boosted.Trees:
        """The parsed trees, kept on the instance (not a field: never saved)."""
        parsed = self.__dict__.get("_parsed_trees")
        if parsed is None:
            parsed = self.__dict__["_parsed_trees"] = boosted.Trees(self.trees, len(self.features))
        return parsed

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        return apply_calibration(self.calibration, self.raw_scores(rows))

    def save(self, folder: str | Path) -> Path:
        payload = {"format": FORMAT, **asdict(self)}
        return write_text_atomic(Path(folder) / RANKER_FILE, json.dumps(payload, indent=1))

    @classmethod
    def load(cls, folder: str | Path, project_path: str | Path = "P") -> RankerModel:
        """The stored ranker, or a ModelError naming the file and what to do (retrain) when it was
        written for another feature set or is damaged."""
        path = Path(folder) / RANKER_FILE
        data = read_json_file(path, "ranker file")
        retrain = f"retrain it with `curalink -p {project_path} train ranker`"
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ModelError(f"{path}: not a Curalink ranker file; {retrain}")
        stored_set, names = data.get("feature_set"), data.get("features")
        if stored_set not in READABLE_FEATURE_SETS or not _computed_here(names):
            raise ModelError(
                f"{path}: ranker trained on feature set {stored_set!r}, this Curalink computes "
                f"feature set {FEATURE_SET_VERSION}; it is not applied: {retrain}"
            )
        try:
            model = cls(**{k: v for k, v in data.items() if k != "format"})
            n = len(names)
            if model.scorer not in SCORERS:
                raise ValueError(f"unknown scorer {model.scorer!r} (this Curalink has {', '.join(SCORERS)})")
            linear = model.scorer == LOGISTIC
            arrays = [np.asarray(a, dtype=np.float64) for a in (model.mean, model.scale, model.coef)]
            if (
                any(a.shape != (n,) or not np.isfinite(a).all() for a in arrays[: 3 if linear else 2])
                or (arrays[1] <= 0).any()
            ):
                raise ValueError(
                    f"mean, scale{' and coef' if linear else ''} must be {n} finite numbers, scale > 0"
                )
            if not linear:
                model._trees()
            model.intercept = float(model.intercept)
            if not np.isfinite(model.intercept):
                raise ValueError("the intercept is not a finite number")
            check_calibration(model.calibration)
        except (TypeError, ValueError, ModelError) as exc:
            raise ModelError(f"{path}: damaged ranker file ({exc}); {retrain}") from exc
        return model


def _computed_here(names: object) -> bool:
    """Whether every feature a stored ranker names is one this version computes (so an upgrade keeps a
    project's ranker working until it is retrained, instead of leaving the desk without one)."""
    return isinstance(names, list) and bool(names) and all(name in FEATURE_NAMES for name in names)


def fit_ranker(
    rows: np.ndarray,
    labels: np.ndarray,
    groups: np.ndarray,
    *,
    mentions: np.ndarray | None = None,
    unseen: np.ndarray | None = None,
    whole: np.ndarray | None = None,
    seed: int = 13,
    calibration_method: str = CALIBRATION_METHOD,
    scorer: str = DEFAULT_SCORER,
    boosting: dict | None = None,
) -> RankerModel:
    """Fit the ranker on candidate rows (labels 0/1, groups = document of each row). With `mentions` (the
    mention of each row), its metrics keep the held-out bulk-accept curve (core.rank.held_out), measured
    on the rows `unseen` flags (documents the retriever did not train on) when they hold MIN_MENTIONS
    mentions or more; `whole` (per row: the candidate is the mention's whole link) is what the curve
    counts as right, as curators count a composite (core.rank.held_out.held_out_top1).
    `boosting`: options of core.rank.boosted.fit_trees (num_leaves, learning_rate) for comparisons."""
    if scorer not in SCORERS:
        raise ValueError(f"unknown ranker scorer {scorer!r}; one of {', '.join(SCORERS)}")
    if len(rows) == 0 or labels.min() == labels.max():
        raise ModelError("the ranker needs candidates that are right and candidates that are wrong")
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    scale[scale < 1e-9] = 1.0  # a constant column (no cross-encoder, say) stays 0 after centring
    standard = (rows - mean) / scale
    if scorer == boosted.SCORER and "rounds" not in (boosting or {}):
        # one round count for the fold models and the final one: out-of-fold scores then have the scale
        # of the scores the calibration table will map
        boosting = {
            **(boosting or {}),
            "rounds": boosted.stopping_round(standard, labels, groups, seed, **(boosting or {})),
        }
    out_of_fold = np.zeros(len(rows))
    fold_of = np.zeros(len(rows), dtype=int)
    folds = min(CALIBRATION_FOLDS, len(np.unique(groups)))
    if folds >= 2:
        from sklearn.model_selection import GroupKFold  # fitting only: loading a ranker never imports sklearn

        for number, (train, held) in enumerate(GroupKFold(n_splits=folds).split(standard, labels, groups)):
            fold_of[held] = number
            if labels[train].min() == labels[train].max():
                out_of_fold[held] = 0.0
                continue
            _, fold = _fit_scorer(scorer, standard[train], labels[train], groups[train], seed, boosting)
            out_of_fold[held] = fold(standard[held])
        calibration = fit_calibration(out_of_fold, labels, calibration_method)
    else:
        calibration = {}
    fitted, final = _fit_scorer(scorer, standard, labels, groups, seed, boosting)
    if not calibration:  # one document: Platt on its own scores, the best there is
        calibration = fit_calibration(final(standard), labels, calibration_method)
    metrics = {}
    if folds >= 2 and mentions is not None:
        metrics[METRICS_KEY] = _held_out_curve(
            out_of_fold, labels, mentions, fold_of, unseen, calibration_method, whole
        )
    rounds = fitted.pop("rounds", None)
    if rounds is not None:
        metrics["boosting_rounds"] = rounds
    return RankerModel(
        features=list(FEATURE_NAMES),
        mean=[float(v) for v in mean],
        scale=[float(v) for v in scale],
        calibration=calibration,
        metrics=metrics,
        **fitted,
    )


def _held_out_curve(
    out_of_fold: np.ndarray,
    labels: np.ndarray,
    mentions: np.ndarray,
    fold_of: np.ndarray,
    unseen: np.ndarray | None,
    method: str,
    whole: np.ndarray | None = None,
) -> dict:
    """The bulk-accept curve on the documents the retriever did not train on, when they are enough to
    measure it on (their folds are not flattered by a retriever that learnt their strings), else on all;
    with `whole`, a composite's part is not counted right."""
    counted = COUNTED_WHOLE if whole is not None else ""
    if unseen is not None and np.asarray(unseen, dtype=bool).any():
        probability, right = held_out_top1(
            out_of_fold, labels, mentions, fold_of, method, kept=unseen, whole=whole
        )
        if len(probability) >= MIN_MENTIONS:
            return bulk_accept_curve(probability, right, MEASURED_ON_UNSEEN, counted)
    return bulk_accept_curve(
        *held_out_top1(out_of_fold, labels, mentions, fold_of, method, whole=whole), MEASURED_ON_ALL, counted
    )


def _fit_scorer(
    scorer: str,
    standard: np.ndarray,
    labels: np.ndarray,
    groups: np.ndarray,
    seed: int,
    boosting: dict | None,
) -> tuple[dict, Callable[[np.ndarray], np.ndarray]]:
    """The fitted scorer's RankerModel fields and its scoring function (standardised rows to log-odds)."""
    if scorer == boosted.SCORER:
        options = dict(boosting or {})
        rounds = options.pop("rounds")
        text = boosted.fit_trees(standard, labels, seed, rounds, **options)
        trees = boosted.Trees(text, standard.shape[1])
        return {"scorer": scorer, "trees": text, "coef": [], "intercept": 0.0, "rounds": rounds}, trees.scores
    model = _logistic(seed).fit(standard, labels)
    fields = {
        "scorer": LOGISTIC,
        "coef": [float(v) for v in model.coef_[0]],
        "intercept": float(model.intercept_[0]),
    }
    return fields, model.decision_function


def _logistic(seed: int):
    """scikit-learn is imported here, not with the module: it takes 1-2 s, and the linking process, which
    only applies a saved ranker, would pay it on every desk start."""
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=REGULARISATION_C, max_iter=1000, random_state=seed)
