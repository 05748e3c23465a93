"""Prediction without leakage: features a scheduler knows when a job is submitted.

A job's duration (and so its iteration count) is the target; nothing derived from it may be a
feature. :data:`SUBMISSION_FEATURES` are the only columns :func:`fill_submission_predictions`
trains on, each read from a job record by :func:`submission_features`:

* ``user``: the submitting user (PAI ``user``; absent in ITP and Philly);
* ``vc``: the virtual cluster the job was submitted to (Philly ``cluster``; ITP's file name is
  one cluster per trace, so it carries no information there);
* ``gpus``: the requested GPUs (``num_gpu`` of the trace, the job's ``gpus`` otherwise);
* ``model``: the job's model and configuration (the script a user submits; in optkit's
  trace-driven workloads it is drawn at random without looking at the duration,
  :mod:`optkit.formulations.ddlwmp.workloads`);
* ``name_tok0``, ``name_tok1``, ``name_tok2``: the first three tokens of the job name (``job_name``
  or ``name``), split at every character that is not a letter, with digits removed
  (``"bert_ft-lr3e-4"`` -> ``bert``, ``ft``, ``lr``; missing tokens are ``None``). None of the
  public traces here has job names; PAI's ``job_name`` is a hash and gives one token.

Training uses the past only: the jobs are ordered by release, the first ``train_fraction`` are the
history, the rest are predicted (the A-SRPT paper's 80/20 split, Sec. V-A-1-c). The model is the
paper's: a random forest of 100 squared-error trees (:class:`optkit.predict.ColumnForestPredictor`,
categorical columns ordinal-encoded, a value unseen in training encoded -1, a missing one -2). No
zero rule: with no recurrence key there is no "unseen group".
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping, Sequence

import numpy as np

from optkit.errors import InputError
from optkit.predict import ColumnForestPredictor, mean_absolute_error

__all__ = ["SUBMISSION_FEATURES", "submission_features", "name_tokens", "fill_submission_predictions"]

SUBMISSION_FEATURES = ("user", "vc", "gpus", "model", "name_tok0", "name_tok1", "name_tok2")

_TOKEN = re.compile(r"[A-Za-z]+")


def name_tokens(name: str | None, k: int = 3) -> list[str | None]:
    """The first ``k`` letter runs of ``name``, lower-cased; ``None`` fills the rest."""
    toks = [t.lower() for t in _TOKEN.findall(name or "")][:k]
    return toks + [None] * (k - len(toks))


def submission_features(record: Mapping[str, Any]) -> dict[str, Any]:
    """The :data:`SUBMISSION_FEATURES` of one job record (module docstring); never reads
    ``duration``, ``iterations``, ``completion`` or anything derived from them."""
    gpus = record.get("num_gpu", record.get("gpus"))
    toks = name_tokens(record.get("job_name") or record.get("name"))
    vc = record.get("vc", record.get("cluster"))
    return {"user": None if record.get("user") is None else str(record["user"]),
            "vc": None if vc is None else str(vc),
            "gpus": None if gpus is None else float(gpus),
            "model": None if record.get("model") is None else str(record["model"]),
            "name_tok0": toks[0], "name_tok1": toks[1], "name_tok2": toks[2]}


def fill_submission_predictions(jobs: Sequence[dict[str, Any]], *, seed: int = 0, train_fraction: float = 0.8,
                                target: str = "iterations", field: str = "predicted_iterations",
                                features: Sequence[str] = SUBMISSION_FEATURES) -> dict[str, Any]:
    """Write ``field`` into every job (dicts with ``release``, ``target`` and the raw columns of
    :func:`submission_features`), trained on the first ``train_fraction`` by release (the
    history gets the forest's in-sample prediction), and return a summary: the features used,
    the split and the held-out mean absolute error (``mae``), its ratio to the held-out mean
    target (``relative_mae``) and the MAE of predicting the history's mean (``mae_of_mean``)."""
    bad = [f for f in features if f not in SUBMISSION_FEATURES]
    if bad:
        raise InputError("features", f"{', '.join(bad)} are not submission-time features ({', '.join(SUBMISSION_FEATURES)})")
    if not 0.0 < train_fraction < 1.0:
        raise InputError("train_fraction", f"must lie in (0, 1), got {train_fraction!r}")
    order = sorted(range(len(jobs)), key=lambda i: (float(jobs[i]["release"]), i))
    n_train = int(math.floor(train_fraction * len(jobs) + 1e-9))
    if n_train < 1 or n_train >= len(jobs):
        raise InputError("jobs", f"need at least one history and one held-out job, got {len(jobs)} jobs")
    rows = [{f: sf[f] for f in features} for sf in (submission_features(jobs[i]) for i in order)]
    y = np.array([float(jobs[i][target]) for i in order])
    train_rows = [dict(r, **{target: float(v)}) for r, v in zip(rows[:n_train], y[:n_train])]
    forest = ColumnForestPredictor(columns=list(features), seed=seed, target=target).fit(train_rows)
    pred = forest.predict(rows)
    for i, v in zip(order, pred):
        jobs[i][field] = float(max(0.0, v))
    test_y, test_p = y[n_train:], np.maximum(pred[n_train:], 0.0)
    mae = mean_absolute_error(test_y, test_p)
    return {"predictor": "rf on submission-time features", "features": list(features), "trained_on": n_train,
            "predicted": len(jobs) - n_train, "mae": mae,
            "relative_mae": mae / float(test_y.mean()) if test_y.mean() > 0 else None,
            "mae_of_mean": mean_absolute_error(test_y, np.full(len(test_y), y[:n_train].mean())), "seed": seed}
