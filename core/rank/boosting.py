"""The ranker's gradient-boosted scorer: LightGBM LambdaMART over the same feature rows.

Why boosting: near-identical names are told apart by interactions a linear score cannot express
(word overlap matters when the character cosines are close, the prior matters when the string is
frequent). Why LambdaMART: the ranker's job is the order of one mention's candidates, which is what
its listwise objective optimises. The trees are kept as LightGBM's own text format inside the ranker's
JSON file and rebuilt with `lgb.Booster(model_str=...)`: no pickle.
"""

from __future__ import annotations

import numpy as np

from core.errors import ModelError

ROUNDS = 200
PARAMS = {
    "objective": "lambdarank",
    "learning_rate": 0.05,
    "num_leaves": 15,
    "min_data_in_leaf": 40,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "lambdarank_truncation_level": 20,
    "verbose": -1,
    "num_threads": 2,
    "deterministic": True,
    "force_row_wise": True,
}


def fit_booster(rows: np.ndarray, labels: np.ndarray, mentions: np.ndarray, seed: int = 13):
    """A LambdaMART booster; `mentions` says which mention each row is a candidate of (its query)."""
    import lightgbm as lgb

    order = np.argsort(mentions, kind="stable")  # LightGBM wants each query's rows together
    _, sizes = np.unique(mentions[order], return_counts=True)
    data = lgb.Dataset(rows[order], labels[order], group=sizes, free_raw_data=True)
    params = dict(PARAMS, seed=seed)
    return lgb.train(params, data, num_boost_round=ROUNDS)


def booster_text(booster) -> str:
    return booster.model_to_string()


def load_booster(text: object, features: int):
    """The booster stored in a ranker file, or a ModelError saying why it cannot be used."""
    import lightgbm as lgb

    if not isinstance(text, str) or not text:
        raise ModelError("the boosted ranker has no trees (booster text missing)")
    try:
        booster = lgb.Booster(model_str=text)
    except lgb.basic.LightGBMError as exc:
        raise ModelError(f"the booster text is not a LightGBM model ({exc})") from exc
    if booster.num_feature() != features:
        raise ModelError(
            f"the booster reads {booster.num_feature()} features, this Curalink computes {features}"
        )
    return booster


def booster_scores(booster, rows: np.ndarray) -> np.ndarray:
    """Raw LambdaMART scores (they order one mention's candidates; calibration makes them probabilities)."""
    if len(rows) == 0:
        return np.zeros(0)
    return np.asarray(booster.predict(rows, raw_score=True, num_threads=1), dtype=np.float64)
