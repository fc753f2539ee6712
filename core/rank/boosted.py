"""The boosted scorer: gradient-boosted trees (LightGBM) over the ranker's standardised features.

Why trees: the features interact (a high prior matters less when the string was seen twice; a tree
depth matters only beside an ancestor among the top five), which a linear score cannot express; on
the selection sets (NCBI dev, BioRED diseases: data the retriever never trained on) boosted trees
ranked about one point more mentions right than the logistic model, with a worse calibrated top-1
ECE on BioRED, so they are an option (`train ranker --scorer lightgbm`), not the default
(docs/ranker.md, "Scorer").

Why LightGBM's own text model: it is LightGBM's documented, versioned save format
(`Booster.model_to_string`), read back by `lgb.Booster(model_str=...)` into the same trees, so the
scores after loading equal the scores at fitting; it is plain text (no pickle, no code) and lives as
one string inside ranker.json. The library is imported only when a boosted ranker is fitted or
applied, so a logistic ranker never needs it.

Rounds: at most MAX_ROUNDS, stopped once the log loss on a held-out tenth of the training documents
(grouped: a document's candidates are all in or all out) has not fallen for EARLY_STOPPING_ROUNDS.
That one count serves the calibration's fold models and the final model alike (core.rank.model), so the
out-of-fold scores the calibration is fitted on have the scale of the scores it is applied to.
"""

from __future__ import annotations

import numpy as np

from core.errors import ModelError

SCORER = "lightgbm"
NUM_LEAVES = 63
LEARNING_RATE = 0.05
MIN_DATA_IN_LEAF = 20
MAX_ROUNDS = 3000
EARLY_STOPPING_ROUNDS = 50
HELD_OUT_SHARE = 0.1
THREADS = 2
"""Fitting and scoring threads: the desk and the linker run on ordinary laptops beside other work."""


def parameters(seed: int, num_leaves: int = NUM_LEAVES, learning_rate: float = LEARNING_RATE) -> dict:
    """LightGBM's training parameters: binary log loss, deterministic for a seed."""
    return {
        "objective": "binary",
        "num_leaves": num_leaves,
        "learning_rate": learning_rate,
        "min_data_in_leaf": MIN_DATA_IN_LEAF,
        "seed": seed,
        "deterministic": True,
        "force_row_wise": True,
        "num_threads": THREADS,
        "verbose": -1,
    }


def stopping_round(
    rows: np.ndarray,
    labels: np.ndarray,
    groups: np.ndarray,
    seed: int,
    *,
    num_leaves: int = NUM_LEAVES,
    learning_rate: float = LEARNING_RATE,
) -> int:
    """The round count at which the log loss on a held-out tenth of the documents stopped falling."""
    import lightgbm as lgb
    from sklearn.model_selection import GroupShuffleSplit

    if len(np.unique(groups)) < 2:
        return MAX_ROUNDS // 10
    split = GroupShuffleSplit(n_splits=1, test_size=HELD_OUT_SHARE, random_state=seed)
    fit, held = next(split.split(rows, labels, groups))
    if labels[fit].min() == labels[fit].max() or labels[held].min() == labels[held].max():
        return MAX_ROUNDS // 10
    stopped = lgb.train(
        parameters(seed, num_leaves, learning_rate),
        lgb.Dataset(rows[fit], labels[fit]),
        num_boost_round=MAX_ROUNDS,
        valid_sets=[lgb.Dataset(rows[held], labels[held])],
        callbacks=[lgb.early_stopping(EARLY_STOPPING_ROUNDS, verbose=False)],
    )
    return max(1, stopped.best_iteration)


def fit_trees(
    rows: np.ndarray,
    labels: np.ndarray,
    seed: int,
    rounds: int,
    *,
    num_leaves: int = NUM_LEAVES,
    learning_rate: float = LEARNING_RATE,
) -> str:
    """LightGBM's text model of `rounds` trees fitted on the rows."""
    import lightgbm as lgb

    booster = lgb.train(
        parameters(seed, num_leaves, learning_rate), lgb.Dataset(rows, labels), num_boost_round=rounds
    )
    return booster.model_to_string()


class Trees:
    """A stored text model, checked, parsed once, scoring rows into log-odds (before calibration)."""

    def __init__(self, text: str, width: int):
        import lightgbm as lgb

        if not isinstance(text, str) or not text.startswith("tree"):
            raise ModelError("the boosted scorer's trees are not a LightGBM text model")
        check_structure(text, width)
        try:
            self.booster = lgb.Booster(model_str=text)
        except lgb.basic.LightGBMError as exc:
            raise ModelError(f"the boosted scorer's trees do not parse ({exc})") from exc
        if self.booster.num_feature() != width:
            raise ModelError(
                f"the boosted scorer reads {self.booster.num_feature()} features, the file names {width}"
            )

    def scores(self, standard: np.ndarray) -> np.ndarray:
        return self.booster.predict(
            np.asarray(standard, dtype=np.float64), raw_score=True, num_threads=THREADS
        )


def check_structure(text: str, width: int) -> None:
    """Refuse a text model whose trees LightGBM's parser would trust blindly: a child outside its tree or
    pointing back up (a loop), a split on a feature the file does not name, a categorical split (never
    fitted here), or arrays of the wrong length. A ranker file is untrusted input (core.safe_models)."""
    blocks = text.split("\nTree=")[1:]
    if not blocks:
        raise ModelError("the boosted scorer's trees: the text model holds no tree")
    for number, block in enumerate(blocks):
        fields = dict(line.split("=", 1) for line in block.splitlines()[1:] if "=" in line)
        try:
            leaves = int(fields["num_leaves"])
            arrays = {
                key: [float(v) for v in fields.get(key, "").split()]
                for key in (
                    "split_feature",
                    "threshold",
                    "decision_type",
                    "left_child",
                    "right_child",
                    "leaf_value",
                )
            }
        except (KeyError, ValueError) as exc:
            raise ModelError(f"the boosted scorer's tree {number} is incomplete ({exc})") from exc
        internal = leaves - 1
        if (
            leaves < 1
            or len(arrays["leaf_value"]) != leaves
            or any(
                len(arrays[key]) != internal
                for key in ("split_feature", "threshold", "decision_type", "left_child", "right_child")
            )
        ):
            raise ModelError(f"the boosted scorer's tree {number}: arrays do not match its {leaves} leaves")
        for node in range(internal):
            if not 0 <= arrays["split_feature"][node] < width or int(arrays["decision_type"][node]) & 1:
                raise ModelError(
                    f"the boosted scorer's tree {number}: node {node} splits on an unknown feature"
                )
            for child in (int(arrays["left_child"][node]), int(arrays["right_child"][node])):
                if not (-leaves <= child < 0 or node < child < internal):
                    raise ModelError(
                        f"the boosted scorer's tree {number}: node {node} has a child out of place"
                    )
