"""Raw ranker scores to probabilities that mean what they say, fitted on held-out decisions.

Isotonic regression (a monotone step function, stored as its breakpoints and applied by linear
interpolation) when there is enough held-out evidence, else Platt scaling (a logistic curve on the
score). Both are stored as plain JSON tables.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.errors import ModelError

MIN_ISOTONIC_POSITIVES = 50
"""Below this many held-out positives an isotonic step function overfits; Platt's two numbers do not."""


def fit_calibration(scores: Sequence[float], labels: Sequence[int]) -> dict:
    """A calibration table from out-of-sample scores and 0/1 outcomes."""
    x = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if len(x) == 0 or y.min() == y.max():
        rate = float(y.mean()) if len(y) else 0.0
        return {"method": "constant", "p": rate}
    # scikit-learn only where a table is fitted: applying one (the linking process) never imports it
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    if y.sum() >= MIN_ISOTONIC_POSITIVES:
        iso = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(x, y)
        return {
            "method": "isotonic",
            "x": [float(v) for v in iso.X_thresholds_],
            "y": [float(v) for v in iso.y_thresholds_],
        }
    platt = LogisticRegression(C=1e6).fit(x.reshape(-1, 1), y.astype(int))
    return {"method": "platt", "a": float(platt.coef_[0, 0]), "b": float(platt.intercept_[0])}


def apply_calibration(table: dict, scores: np.ndarray) -> np.ndarray:
    """Probabilities for raw scores under a table from `fit_calibration`."""
    scores = np.asarray(scores, dtype=np.float64)
    method = table.get("method")
    if method == "isotonic":
        return np.interp(scores, np.asarray(table["x"]), np.asarray(table["y"]))
    if method == "platt":
        return 1.0 / (1.0 + np.exp(-(table["a"] * scores + table["b"])))
    if method == "constant":
        return np.full(scores.shape, float(table["p"]))
    raise ModelError(f"unknown calibration method {method!r}")


def check_calibration(table: object) -> dict:
    """The table as read from a file, or a ModelError saying what is wrong with it."""
    if not isinstance(table, dict):
        raise ModelError("the calibration table is not a JSON object")
    method = table.get("method")
    try:
        if method == "isotonic":
            x, y = np.asarray(table["x"], dtype=float), np.asarray(table["y"], dtype=float)
            if x.ndim != 1 or x.shape != y.shape or len(x) < 1 or np.any(np.diff(x) < 0):
                raise ModelError("isotonic calibration: x and y must be equal-length, x ascending")
            if not (np.isfinite(x).all() and np.isfinite(y).all()) or np.any((y < 0) | (y > 1)):
                raise ModelError("isotonic calibration: probabilities outside [0, 1]")
        elif method == "platt":
            if not np.isfinite([float(table["a"]), float(table["b"])]).all():
                raise ModelError("platt calibration: a and b must be finite numbers")
        elif method == "constant":
            if not 0.0 <= float(table["p"]) <= 1.0:
                raise ModelError("constant calibration: p must lie in [0, 1]")
        else:
            raise ModelError(f"unknown calibration method {method!r}")
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{method} calibration table is incomplete ({exc})") from exc
    return table


def expected_calibration_error(
    probabilities: Sequence[float], correct: Sequence[bool], bins: int = 10
) -> float:
    """Sum over equal-width probability bins of |accuracy - mean confidence| weighted by the bin's share."""
    p = np.asarray(probabilities, dtype=np.float64)
    c = np.asarray(correct, dtype=np.float64)
    if len(p) == 0:
        return 0.0
    which = np.minimum((p * bins).astype(int), bins - 1)
    error = 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            error += inside.mean() * abs(c[inside].mean() - p[inside].mean())
    return float(error)


def precision_coverage(probabilities: Sequence[float], correct: Sequence[bool], threshold: float) -> dict:
    """Bulk accept at p >= threshold: the share of mentions it covers and how many of those are right."""
    p = np.asarray(probabilities, dtype=np.float64)
    c = np.asarray(correct, dtype=bool)
    chosen = p >= threshold
    return {
        "threshold": threshold,
        "coverage": round(100 * float(chosen.mean()), 2) if len(p) else 0.0,
        "precision": round(100 * float(c[chosen].mean()), 2) if chosen.any() else None,
    }
