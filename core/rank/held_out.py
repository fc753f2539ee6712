"""The bulk-accept curve a ranker measured on data it never saw, kept with the ranker version.

Bulk accept takes the top candidate of every undecided mention whose calibrated probability reaches a
threshold; the curator needs to know what a threshold buys: the share of mentions it accepts
(coverage) and how many of those are right (precision). Both are measured when the ranker is fitted,
on the same document folds as its calibration: each document's candidates are scored by a model fitted
without that document, and turned into probabilities by a calibration table fitted without that fold
too (fitting the table on the very scores it maps would flatter the figures). Per mention, the
candidate with the highest held-out score is the one bulk accept would take; it is right when it is
the mention's gold concept (a mention whose gold is not among the candidates counts as wrong).

The curve is stored in the ranker's metrics (`ranker.json`, key METRICS_KEY) at thresholds 0.00 to
1.00 in steps of 0.01, so the desk can read, for the threshold chosen, the precision and coverage
measured, and default to the smallest threshold whose held-out precision reaches the target.
"""

from __future__ import annotations

import numpy as np

from core.rank.calibration import apply_calibration, fit_calibration, precision_coverage

METRICS_KEY = "bulk_accept_held_out"
TARGET_PRECISION = 98.0  # percent: the default threshold is the smallest that reached it
FALLBACK_THRESHOLD = 0.90  # when the ranker in force measured no curve
MIN_MENTIONS = 100  # fewer held-out mentions than this cannot vouch for a precision of 98 %
STEPS = 100  # thresholds 0.00, 0.01, ..., 1.00


def thresholds() -> list[float]:
    return [round(i / STEPS, 2) for i in range(STEPS + 1)]


def held_out_top1(
    raw: np.ndarray, labels: np.ndarray, mentions: np.ndarray, folds: np.ndarray, method: str = "auto"
) -> tuple[np.ndarray, np.ndarray]:
    """Per mention: the held-out probability of its top candidate and whether that candidate is right.

    `raw` are out-of-fold scores, `folds` each row's fold; each fold's probabilities come from a table
    fitted on the other folds' scores (of the shape `method` names, core.rank.calibration)."""
    probability = np.zeros(len(raw))
    for fold in np.unique(folds):
        inside = folds == fold
        table = (
            fit_calibration(raw[~inside], labels[~inside], method)
            if (~inside).any()
            else {"method": "constant", "p": 0.0}
        )
        probability[inside] = apply_calibration(table, raw[inside])
    order = np.lexsort((-raw, mentions))  # by mention, best score first
    first = order[np.r_[True, mentions[order][1:] != mentions[order][:-1]]]
    return probability[first], labels[first].astype(bool)


def bulk_accept_curve(probability: np.ndarray, right: np.ndarray) -> dict:
    """Precision and coverage (percent) at every threshold of `thresholds()`, and the mentions counted."""
    points = [precision_coverage(probability, right, t) for t in thresholds()]
    return {
        "mentions": int(len(probability)),
        "thresholds": [p["threshold"] for p in points],
        "precision": [p["precision"] for p in points],
        "coverage": [p["coverage"] for p in points],
        "measured_on": "out-of-fold: documents scored and calibrated by models fitted without them",
    }


def curve_point(curve: dict, threshold: float) -> tuple[float | None, float] | None:
    """(precision, coverage) measured at `threshold` (rounded to the curve's step); None off the curve."""
    try:
        index = curve["thresholds"].index(round(threshold, 2))
    except (KeyError, ValueError, AttributeError):
        return None
    return curve["precision"][index], curve["coverage"][index]


def default_threshold(
    curve: dict | None, target: float = TARGET_PRECISION, min_mentions: int = MIN_MENTIONS
) -> float | None:
    """The smallest threshold whose held-out precision reached `target` (None: no curve, one measured on
    fewer than `min_mentions` mentions, or no threshold reached it). 46 of 46 right is 100 %, but the
    95 % Wilson interval of that goes down to 92 %: too little to lower the threshold on."""
    if not curve or curve.get("mentions", 0) < min_mentions:
        return None
    for threshold, precision in zip(curve.get("thresholds", []), curve.get("precision", [])):
        if precision is not None and precision >= target:
            return threshold
    return None


def valid_curve(curve: object) -> dict | None:
    """The curve as stored, when it is one (a ranker trained before it was kept has none)."""
    if not isinstance(curve, dict):
        return None
    columns = [curve.get(k) for k in ("thresholds", "precision", "coverage")]
    if not all(isinstance(c, list) for c in columns) or len({len(c) for c in columns}) != 1 or not columns[0]:
        return None
    return curve


def describe(curve: dict | None) -> str:
    """One line for the training summary: the default threshold and what it measured."""
    if not curve:
        return "no held-out bulk-accept curve (too few documents for folds)"
    threshold = default_threshold(curve)
    head = f"bulk accept on {curve['mentions']:,} held-out mentions: "
    if threshold is None:
        return head + (
            f"too few to set the threshold by (at least {MIN_MENTIONS}); the desk starts at {FALLBACK_THRESHOLD:.2f}"
            if curve["mentions"] < MIN_MENTIONS
            else f"no threshold reached {TARGET_PRECISION:g} % precision; the desk starts at {FALLBACK_THRESHOLD:.2f}"
        )
    precision, coverage = curve_point(curve, threshold)
    return head + f"threshold {threshold:.2f} is {precision:.2f} % right at {coverage:.2f} % coverage"
