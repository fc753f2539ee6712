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
measured, and what it promises.

The promise is not the precision measured but its lower confidence bound (Wilson score interval,
one-sided, PROMISE_CONFIDENCE): 46 of 46 right is 100 % measured, yet all it vouches for is 94.4 %. The
dialog starts at the smallest threshold whose bound reaches TARGET_PRECISION.

Held-out folds flatter a ranker whose retriever learnt the very mentions they hold: a ResCNN trained on a
document's strings scores them well, so its folds measured 98 % where new text got 94 % (README, "Per
entity type and across corpora"). When the ranker is told which of its documents the retriever did not
train on (`train retriever` holds the dev split out) and they hold MIN_MENTIONS mentions or more, the
curve is measured on those alone.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from core.rank.calibration import apply_calibration, fit_calibration, precision_coverage

METRICS_KEY = "bulk_accept_held_out"
TARGET_PRECISION = 98.0  # percent: the default threshold is the smallest that reached it
FALLBACK_THRESHOLD = 0.90  # when the ranker in force measured no curve
MIN_MENTIONS = 100  # fewer held-out mentions than this cannot vouch for a precision of 98 %
STEPS = 100  # thresholds 0.00, 0.01, ..., 1.00
PROMISE_CONFIDENCE = 0.95
"""The promise is the precision's one-sided lower bound at this level: 19 rankers in 20 do at least this well
on text like the held-out documents."""
MEASURED_ON_ALL = "out-of-fold: documents scored and calibrated by models fitted without them"
MEASURED_ON_UNSEEN = (
    "out-of-fold, on the documents the retriever did not train on: scored and calibrated by models fitted "
    "without them"
)
COUNTED_WHOLE = "a top candidate is right when it is the mention's whole link (one part of a composite is not)"


def thresholds() -> list[float]:
    return [round(i / STEPS, 2) for i in range(STEPS + 1)]


def held_out_top1(
    raw: np.ndarray,
    labels: np.ndarray,
    mentions: np.ndarray,
    folds: np.ndarray,
    method: str = "auto",
    *,
    kept: np.ndarray | None = None,
    whole: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per mention: the held-out probability of its top candidate and whether that candidate is right.

    `raw` are out-of-fold scores, `folds` each row's fold; each fold's probabilities come from a table
    fitted on the other folds' scores (of the shape `method` names, core.rank.calibration). `kept`
    (one flag per row): only the mentions whose rows are flagged are returned. `whole` (one flag per
    row): whether the candidate is the mention's whole link, as a curator counts it: one concept of a
    composite gold ("A|B") is a label for fitting but not a right bulk accept (issue 31: counted as
    right, the promise was 1 point above what the test documents then measured)."""
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
    if kept is not None:
        first = first[np.asarray(kept, dtype=bool)[first]]
    right = labels if whole is None else np.asarray(whole)
    return probability[first], right[first].astype(bool)


def bulk_accept_curve(
    probability: np.ndarray, right: np.ndarray, measured_on: str = MEASURED_ON_ALL, counted: str = ""
) -> dict:
    """Precision, coverage and the promised precision (percent) at every threshold of `thresholds()`,
    with the counts behind them and the mentions counted."""
    probability = np.asarray(probability, dtype=np.float64)
    right = np.asarray(right, dtype=bool)
    points = [precision_coverage(probability, right, t) for t in thresholds()]
    accepted = [int((probability >= t).sum()) for t in thresholds()]
    correct = [int(right[probability >= t].sum()) for t in thresholds()]
    return {
        "mentions": int(len(probability)),
        "thresholds": [p["threshold"] for p in points],
        "precision": [p["precision"] for p in points],
        "coverage": [p["coverage"] for p in points],
        "accepted": accepted,
        "right": correct,
        "promised": [_bound_or_none(k, n) for k, n in zip(correct, accepted, strict=True)],
        "promise": f"Wilson lower bound, one-sided {100 * PROMISE_CONFIDENCE:g} %",
        "measured_on": measured_on,
        **({"counted": counted} if counted else {}),
    }


def precision_bound(right: int, accepted: int, confidence: float = PROMISE_CONFIDENCE) -> float:
    """The one-sided lower confidence bound of a precision of `right` of `accepted` (Wilson score
    interval), in percent: what that many right answers vouch for, not what they happened to be.

    Written out rather than scipy.stats.binomtest(...).proportion_ci (the test compares the two): the
    desk's bulk-accept dialog reads old curves through here, and importing scipy.stats took 0.5-0.7 s
    in that process, which otherwise never loads it."""
    if accepted <= 0:
        raise ValueError("a precision bound needs at least one accepted mention")
    z = NormalDist().inv_cdf(confidence)
    p = right / accepted
    centre = p + z * z / (2 * accepted)
    spread = z * np.sqrt(p * (1 - p) / accepted + z * z / (4 * accepted * accepted))
    return float(100 * max(0.0, (centre - spread) / (1 + z * z / accepted)))


def _bound_or_none(right: int, accepted: int) -> float | None:
    return round(precision_bound(right, accepted), 2) if accepted else None


def promised_precisions(curve: dict) -> list[float | None]:
    """The promised precision at every threshold of the curve. A curve stored before promises were kept
    has none: its counts are read back from coverage x mentions and precision (rounded to 0.01 %), so
    every ranker file is read by the one rule."""
    stored = curve.get("promised")
    if isinstance(stored, list) and len(stored) == len(curve["thresholds"]):
        return stored
    mentions = int(curve.get("mentions", 0))
    out: list[float | None] = []
    for precision, coverage in zip(curve["precision"], curve["coverage"], strict=True):
        accepted = round((coverage or 0.0) * mentions / 100)
        if precision is None or accepted == 0:
            out.append(None)
            continue
        out.append(_bound_or_none(round(precision * accepted / 100), accepted))
    return out


def curve_point(curve: dict, threshold: float) -> tuple[float | None, float] | None:
    """(precision, coverage) measured at `threshold` (rounded to the curve's step); None off the curve."""
    try:
        index = curve["thresholds"].index(round(threshold, 2))
    except (KeyError, ValueError, AttributeError):
        return None
    return curve["precision"][index], curve["coverage"][index]


def promise_point(curve: dict, threshold: float) -> float | None:
    """The precision promised at `threshold`: the lower bound of the one measured there (None: off the
    curve, or nothing accepted there)."""
    try:
        index = curve["thresholds"].index(round(threshold, 2))
    except (KeyError, ValueError, AttributeError):
        return None
    return promised_precisions(curve)[index]


def default_threshold(
    curve: dict | None, target: float = TARGET_PRECISION, min_mentions: int = MIN_MENTIONS
) -> float | None:
    """The smallest threshold whose promised precision (the held-out precision's lower bound) reached
    `target` (None: no curve, one measured on fewer than `min_mentions` mentions, or none reached it)."""
    if not curve or curve.get("mentions", 0) < min_mentions:
        return None
    for threshold, promised in zip(curve.get("thresholds", []), promised_precisions(curve)):
        if promised is not None and promised >= target:
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
            else f"no threshold vouches for {TARGET_PRECISION:g} % precision; the desk starts at {FALLBACK_THRESHOLD:.2f}"
        )
    precision, coverage = curve_point(curve, threshold)
    promised = promise_point(curve, threshold)
    return head + (
        f"threshold {threshold:.2f} promises {promised:.2f} % right ({precision:.2f} % measured) "
        f"at {coverage:.2f} % coverage"
    )
