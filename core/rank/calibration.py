"""Raw ranker scores to probabilities that mean what they say, fitted on held-out decisions.

Isotonic regression (a monotone step function, stored as its breakpoints and applied by linear
interpolation) when there is enough held-out evidence, else Platt scaling (a logistic curve on the
score). Beta calibration (Kull et al. 2017: a logistic curve on ln s and ln(1 - s), s the sigmoid of
the score) is the third shape `bench quality` compares across corpora. All are stored as plain JSON
tables.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.errors import ModelError

MIN_ISOTONIC_POSITIVES = 50
"""Below this many held-out positives an isotonic step function overfits; Platt's two numbers do not."""


CALIBRATION_METHODS = ("auto", "isotonic", "platt", "beta")
"""`auto`: isotonic with at least MIN_ISOTONIC_POSITIVES positives, else Platt (what rankers store)."""


def fit_calibration(scores: Sequence[float], labels: Sequence[int], method: str = "auto") -> dict:
    """A calibration table from out-of-sample scores and 0/1 outcomes, of the shape `method` names."""
    if method not in CALIBRATION_METHODS:
        raise ValueError(f"unknown calibration method {method!r}; one of {', '.join(CALIBRATION_METHODS)}")
    x = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if len(x) == 0 or y.min() == y.max():
        rate = float(y.mean()) if len(y) else 0.0
        return {"method": "constant", "p": rate}
    # scikit-learn only where a table is fitted: applying one (the linking process) never imports it
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    if method == "beta":
        beta = LogisticRegression(C=1e6).fit(_beta_columns(x), y.astype(int))
        a, b = (float(v) for v in beta.coef_[0])
        return {"method": "beta", "a": a, "b": b, "c": float(beta.intercept_[0])}
    if method == "isotonic" or (method == "auto" and y.sum() >= MIN_ISOTONIC_POSITIVES):
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
    if method == "beta":
        logit = _beta_columns(scores) @ np.array([table["a"], table["b"]]) + table["c"]
        return 1.0 / (1.0 + np.exp(-logit))
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
        elif method == "beta":
            if not np.isfinite([float(table["a"]), float(table["b"]), float(table["c"])]).all():
                raise ModelError("beta calibration: a, b and c must be finite numbers")
        elif method == "constant":
            if not 0.0 <= float(table["p"]) <= 1.0:
                raise ModelError("constant calibration: p must lie in [0, 1]")
        else:
            raise ModelError(f"unknown calibration method {method!r}")
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{method} calibration table is incomplete ({exc})") from exc
    return table


def _beta_columns(scores: np.ndarray) -> np.ndarray:
    """ln s and -ln(1 - s) for s = sigmoid(score), computed without overflow (log-sigmoid)."""
    return np.column_stack([-np.logaddexp(0.0, -scores), np.logaddexp(0.0, scores)])


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
