"""Predictors of a numeric job attribute (training iterations, by default) from tabular job records.

Engine-level and paper-agnostic: a *record* is any mapping (a job dict of an instance, a row of a
trace); the target is one of its keys (``"iterations"`` unless told otherwise). Every predictor
has the same two-call interface::

    p = RandomForestPredictor(seed=0).fit(history_records)   # records that carry the target
    predictions = p.predict(new_records)                      # numpy float array, one per record

Predictors
----------
* :class:`RandomForestPredictor`: scikit-learn ``RandomForestRegressor`` (100 trees, squared-error
  splits) on the categorical features ``group`` and ``user``, each encoded as an ordinal code in
  order of first appearance in the history (a code unseen in training becomes -1). A record whose
  ``group`` never appeared in the history (or has no group) is predicted **0** (the A-SRPT
  paper's rule, Sec. IV-C-3: an unseen job is treated as immediately complete). Keyword
  ``model`` picks the forest implementation (:data:`FOREST_MODELS`): ``"hist"`` (default), the same
  forest grown on the distinct feature rows by the compiled presorted tree builder
  (:mod:`optkit.binned_forest`, :mod:`optkit.presorted_cart`; identical trees, up to
  floating-point ties), ``"hist-sklearn"``, the same with scikit-learn's tree builder, or
  ``"random-forest"``, scikit-learn's ``RandomForestRegressor`` on every row.
* :class:`GroupMeanPredictor`, :class:`GroupMedianPredictor`: the mean / median target of the
  history records with the same key (``by=("group",)`` by default), 0 for an unseen key.
  ``by=()`` gives the global mean / median of the history.
* :class:`PerfectPredictor`: the record's own target (an oracle, for "perfect prediction" runs).
* :class:`ColumnForestPredictor`: a random forest on whatever columns a trace has (for traces
  without groups): numeric columns as they are, any other column ordinal-encoded (unseen value
  -1, missing value -2); no zero rule.

:func:`fill_predictions` writes predictions into an instance dict (train on the first 80% by
release, predict the rest); :func:`mean_absolute_error` and :func:`make_predictor` complete it. Fitting is
deterministic for a given ``seed``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import repeat
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from optkit.binned_forest import BinnedForestRegressor
from optkit.errors import InputError

__all__ = [
    "Predictor", "RandomForestPredictor", "GroupMeanPredictor", "GroupMedianPredictor", "PerfectPredictor",
    "ColumnForestPredictor", "PREDICTORS", "FOREST_MODELS", "make_predictor", "mean_absolute_error", "fill_predictions",
]


_PLAIN_NUMBERS = {int, float, np.int64, np.float64, np.int32, np.float32}


def _targets(records: Sequence[Mapping[str, Any]], target: str) -> np.ndarray:
    try:  # fast path: every record has a finite (non-boolean) number
        vals = [r[target] for r in records]
        if set(map(type, vals)) <= _PLAIN_NUMBERS:
            fast = np.array(vals, dtype=float)
            if fast.ndim == 1 and np.isfinite(fast).all():
                return fast
    except KeyError:
        pass
    out = np.empty(len(records), dtype=float)
    for i, r in enumerate(records):
        if target not in r:
            raise InputError(f"records[{i}].{target}", "is required to fit a predictor")
        v = r[target]
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
            raise InputError(f"records[{i}].{target}", f"must be a finite number, got {v!r}")
        out[i] = float(v)
    return out


def mean_absolute_error(actual: Iterable[float], predicted: Iterable[float]) -> float:
    """Mean of |actual - predicted| (0.0 for no records)."""
    a = np.asarray(list(actual), dtype=float)
    p = np.asarray(list(predicted), dtype=float)
    if a.shape != p.shape:
        raise InputError("predicted", f"has {p.size} values for {a.size} records")
    return float(np.abs(a - p).mean()) if a.size else 0.0


class Predictor:
    """Base class: ``fit(records)`` on history that carries ``target``, ``predict(records)``."""

    name = "predictor"

    def __init__(self, target: str = "iterations") -> None:
        self.target = target
        self._fitted = False

    def fit(self, records: Sequence[Mapping[str, Any]]) -> "Predictor":
        self._fit(list(records))
        self._fitted = True
        return self

    def predict(self, records: Sequence[Mapping[str, Any]]) -> np.ndarray:
        if not self._fitted:
            raise RuntimeError(f"{type(self).__name__}.predict called before fit")
        records = list(records)
        if not records:
            return np.zeros(0)
        return np.asarray(self._predict(records), dtype=float)

    def _fit(self, records: list[Mapping[str, Any]]) -> None:
        raise NotImplementedError

    def _predict(self, records: list[Mapping[str, Any]]) -> np.ndarray:
        raise NotImplementedError


class _Encoder:
    """Ordinal codes in order of first appearance; unseen -> -1, missing (None) -> -2."""

    def __init__(self, values: Iterable[Any]) -> None:
        first = dict.fromkeys(values)  # keeps the order of first appearance
        first.pop(None, None)
        self.codes: dict[Any, int] = dict(zip(first, range(len(first))))
        self._lookup: dict[Any, int] = {**self.codes, None: -2}

    def __call__(self, v: Any) -> int:
        return self._lookup.get(v, -1)

    def encode(self, values: Sequence[Any]) -> np.ndarray:
        """The codes of ``values`` as floats (one C-level dict look-up each)."""
        return np.fromiter(map(self._lookup.get, values, repeat(-1)), dtype=float, count=len(values))


FOREST_MODELS = ("hist", "hist-sklearn", "random-forest")
"""The forest implementations a forest predictor takes (keyword ``model``): ``"hist"``, the same
random forest grown on the distinct (binned) feature rows (:mod:`optkit.binned_forest`: the cost
of the distinct rows instead of all rows, trees from the compiled presorted builder
:mod:`optkit.presorted_cart`, in threads, ``n_jobs=None`` = every core); ``"hist-sklearn"``, the
same with each tree grown by scikit-learn's ``DecisionTreeRegressor`` (``builder="sklearn"``: the
``"hist"`` of optkit before the presorted builder, ~9x slower; the two differ only where
floating-point ties between features go the other way); and ``"random-forest"``, scikit-learn's
``RandomForestRegressor`` on every row (the paper's model as written; ``n_jobs=None`` = one core,
scikit-learn's default)."""


def _check_model(model: str) -> str:
    if model not in FOREST_MODELS:
        raise InputError("model", f"must be one of {', '.join(FOREST_MODELS)}, got {model!r}")
    return model


class _Forest(Predictor):
    def __init__(self, target: str, seed: int, n_estimators: int, n_jobs: int | None, min_samples_leaf: int,
                 model: str = "hist") -> None:
        super().__init__(target)
        self.model_name = _check_model(model)
        self.seed = seed
        self.n_estimators = n_estimators
        self.n_jobs = n_jobs
        self.min_samples_leaf = min_samples_leaf
        self.model: Any = None
        self.columns: list[str] = []
        self.encoders: dict[str, _Encoder] = {}

    def _matrix(self, records: list[Mapping[str, Any]]) -> np.ndarray:
        x = np.empty((len(records), len(self.columns)), dtype=float)
        for j, c in enumerate(self.columns):
            enc = self.encoders.get(c)
            if enc is not None:
                x[:, j] = enc.encode([r.get(c) for r in records])
            else:
                x[:, j] = np.fromiter((-2.0 if (v := r.get(c)) is None else float(v) for r in records),
                                      dtype=float, count=len(records))
        return x

    def _fit_matrix(self, records: list[Mapping[str, Any]]) -> None:
        y = _targets(records, self.target)
        if not records:
            raise InputError("records", "a forest needs at least one history record")
        if self.model_name in ("hist", "hist-sklearn"):
            self.model = BinnedForestRegressor(n_estimators=self.n_estimators, random_state=self.seed,
                                               n_jobs=self.n_jobs, min_samples_leaf=self.min_samples_leaf,
                                               builder="presorted" if self.model_name == "hist" else "sklearn")
        else:
            from sklearn.ensemble import RandomForestRegressor

            self.model = RandomForestRegressor(n_estimators=self.n_estimators, criterion="squared_error",
                                               random_state=self.seed, n_jobs=self.n_jobs,
                                               min_samples_leaf=self.min_samples_leaf)
        self.model.fit(self._matrix(records), y)


class RandomForestPredictor(_Forest):
    """The A-SRPT paper's predictor (Sec. IV-C-3): a random forest of ``n_estimators`` = 100
    squared-error regression trees on (group, user), ordinal-encoded; 0 for an unseen group.

    ``features`` may name other categorical columns instead of ``("group", "user")``;
    ``unseen_key`` is the column whose unseen values are predicted 0 (``None``: no zero rule)."""

    name = "rf"

    def __init__(self, *, seed: int = 0, target: str = "iterations", features: Sequence[str] = ("group", "user"),
                 unseen_key: str | None = "group", n_estimators: int = 100, n_jobs: int | None = None,
                 min_samples_leaf: int = 1, model: str = "hist") -> None:
        super().__init__(target, seed, n_estimators, n_jobs, min_samples_leaf, model)
        self.columns = list(features)
        self.unseen_key = unseen_key

    def _fit(self, records: list[Mapping[str, Any]]) -> None:
        self.encoders = {c: _Encoder([r.get(c) for r in records]) for c in self.columns}
        if self.unseen_key is not None and self.unseen_key not in self.encoders:
            self.encoders[self.unseen_key] = _Encoder([r.get(self.unseen_key) for r in records])
        self._fit_matrix(records)

    def _predict(self, records: list[Mapping[str, Any]]) -> np.ndarray:
        out = self.model.predict(self._matrix(records))
        if self.unseen_key is not None:
            key = self.encoders[self.unseen_key].encode([r.get(self.unseen_key) for r in records])
            out = np.where(key < 0, 0.0, out)
        return out


class ColumnForestPredictor(_Forest):
    """A random forest on arbitrary columns (for traces without groups): numeric columns used as
    they are, others ordinal-encoded. ``columns=None``: every key of the first history record
    except the target and ``exclude`` (ids by default)."""

    name = "rf-columns"

    def __init__(self, columns: Sequence[str] | None = None, *, seed: int = 0, target: str = "iterations",
                 exclude: Sequence[str] = ("id", "job_id", "job_name", "predicted_iterations"),
                 n_estimators: int = 100, n_jobs: int | None = None, min_samples_leaf: int = 1,
                 model: str = "hist") -> None:
        super().__init__(target, seed, n_estimators, n_jobs, min_samples_leaf, model)
        self._columns_arg = list(columns) if columns is not None else None
        self.exclude = tuple(exclude)

    def _fit(self, records: list[Mapping[str, Any]]) -> None:
        if not records:
            raise InputError("records", "a forest needs at least one history record")
        if self._columns_arg is not None:
            self.columns = list(self._columns_arg)
        else:
            self.columns = [k for k in records[0] if k != self.target and k not in self.exclude]
        if not self.columns:
            raise InputError("columns", "no feature column left to train on")
        self.encoders = {}
        for c in self.columns:
            vals = [r.get(c) for r in records]
            numeric = all(v is None or (isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool))
                          for v in vals)
            if not numeric:
                self.encoders[c] = _Encoder(vals)
        self._fit_matrix(records)

    def _predict(self, records: list[Mapping[str, Any]]) -> np.ndarray:
        return self.model.predict(self._matrix(records))


class _GroupStat(Predictor):
    stat = staticmethod(np.mean)

    def __init__(self, by: Sequence[str] = ("group",), *, target: str = "iterations") -> None:
        super().__init__(target)
        self.by = tuple(by)
        self.table: dict[tuple[Any, ...], float] = {}

    def _key(self, r: Mapping[str, Any]) -> tuple[Any, ...] | None:
        key = tuple(r.get(c) for c in self.by)
        return None if any(v is None for v in key) else key

    def _fit(self, records: list[Mapping[str, Any]]) -> None:
        y = _targets(records, self.target)
        groups: dict[tuple[Any, ...], list[float]] = defaultdict(list)
        for r, v in zip(records, y):
            key = self._key(r)
            if key is not None:
                groups[key].append(v)
        self.table = {k: float(self.stat(np.array(v))) for k, v in groups.items()}

    def _predict(self, records: list[Mapping[str, Any]]) -> np.ndarray:
        out = []
        for r in records:
            key = self._key(r)
            out.append(self.table.get(key, 0.0) if key is not None else 0.0)
        return np.array(out)


class GroupMeanPredictor(_GroupStat):
    """Mean target of the history records with the same ``by`` key; 0 for an unseen key."""

    name = "mean"
    stat = staticmethod(np.mean)


class GroupMedianPredictor(_GroupStat):
    """Median target of the history records with the same ``by`` key; 0 for an unseen key."""

    name = "median"
    stat = staticmethod(np.median)


class PerfectPredictor(Predictor):
    """The record's own target value (needs the target in the records it predicts)."""

    name = "perfect"

    def _fit(self, records: list[Mapping[str, Any]]) -> None:
        pass

    def _predict(self, records: list[Mapping[str, Any]]) -> np.ndarray:
        return _targets(records, self.target)


PREDICTORS = ("rf", "mean", "median", "perfect", "rf-columns")


def make_predictor(name: str, *, seed: int = 0, target: str = "iterations", **kw: Any) -> Predictor:
    """A predictor by name: ``rf``, ``mean``, ``median``, ``perfect`` or ``rf-columns``."""
    if name == "rf":
        return RandomForestPredictor(seed=seed, target=target, **kw)
    if name == "rf-columns":
        return ColumnForestPredictor(seed=seed, target=target, **kw)
    if name == "mean":
        return GroupMeanPredictor(target=target, **kw)
    if name == "median":
        return GroupMedianPredictor(target=target, **kw)
    if name == "perfect":
        return PerfectPredictor(target=target)
    raise InputError("predictor", f"must be one of {', '.join(PREDICTORS)}, got {name!r}")


def fill_predictions(instance: dict[str, Any], predictor: str | Predictor = "rf", *, train_fraction: float = 0.8,
                     seed: int = 0, history: str = "in-sample", target: str = "iterations",
                     field: str = "predicted_iterations", model: str = "hist") -> float:
    """Write ``predicted_iterations`` into every job of ``instance`` (a dict with a ``jobs`` list
    of records carrying ``release`` and the target) and return the mean absolute error on the
    predicted (held-out) part.

    ``model`` (``"hist"``, ``"hist-sklearn"`` or ``"random-forest"``, :data:`FOREST_MODELS`) is the forest
    implementation of a forest predictor named by string (``rf``, ``rf-columns``); other
    predictors, and a predictor object, ignore it.

    The jobs are ordered by (release, position in the list); the first
    ``floor(train_fraction * n)`` of them are the history the predictor is fitted on (the A-SRPT
    paper trains on the first 80% of the trace, Sec. V-A-1-c); the rest are predicted.

    ``history`` decides what the history jobs get:

    * ``"in-sample"`` (default): the fitted predictor's own prediction for them (for ``rf`` the
      forest's in-sample fit, for ``mean``/``median`` their group's statistic), so no job of the
      instance carries oracle knowledge unless the predictor is ``perfect``;
    * ``"perfect"``: their actual target (they are finished history, their size is known).

    The dict is modified in place; ``instance["meta"]["prediction"]`` (created if needed)
    records the predictor, split, history rule and the returned MAE.
    """
    jobs = instance.get("jobs")
    if not isinstance(jobs, list):
        raise InputError("jobs", "must be a list of job records")
    if not 0.0 <= train_fraction <= 1.0:
        raise InputError("train_fraction", f"must be in [0, 1], got {train_fraction!r}")
    if history not in ("in-sample", "perfect"):
        raise InputError("history", f"must be 'in-sample' or 'perfect', got {history!r}")
    _check_model(model)
    if isinstance(predictor, str):
        p = make_predictor(predictor, seed=seed, target=target, **({"model": model} if predictor in
                                                                     ("rf", "rf-columns") else {}))
    else:
        p = predictor
    order = sorted(range(len(jobs)), key=lambda i: (float(jobs[i].get("release", 0.0)), i))
    n_train = int(math.floor(train_fraction * len(jobs) + 1e-9))
    train = [jobs[i] for i in order[:n_train]]
    test = [jobs[i] for i in order[n_train:]]
    if train or isinstance(p, PerfectPredictor):
        p.fit(train)
        pred_test = p.predict(test)
    else:  # nothing seen yet: every job is unseen
        pred_test = np.zeros(len(test))
    if history == "perfect":
        pred_train = _targets(train, target)
    else:
        pred_train = p.predict(train) if train else np.zeros(0)
    for r, v in zip(train, pred_train):
        r[field] = float(v)
    for r, v in zip(test, pred_test):
        r[field] = float(v)
    mae = mean_absolute_error(_targets(test, target), pred_test)
    meta = instance.setdefault("meta", {})
    if isinstance(meta, dict):
        meta["prediction"] = {"predictor": getattr(p, "name", type(p).__name__), **(
                                  {"model": p.model_name} if isinstance(p, _Forest) else {}),
                              "train_fraction": train_fraction,
                              "trained_on": n_train, "predicted": len(test), "history": history, "seed": seed,
                              "mae": mae}
    return mae
