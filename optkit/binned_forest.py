"""A random-forest regressor on binned features: the same forest as scikit-learn's
``RandomForestRegressor``, grown on the distinct rows of the (binned) feature matrix.

Why it is the same forest
-------------------------
scikit-learn grows tree t of a forest seeded ``s`` as follows (``sklearn/ensemble/_forest.py``,
``_parallel_build_trees``): the tree's seed is the t-th ``RandomState(s).randint(2**31 - 1)``;
the bootstrap is ``RandomState(tree seed).randint(0, n, n)``, passed to the tree as per-row
weights ``c_i`` (how often row i was drawn; rows drawn 0 times leave the tree); the tree then
splits greedily on the squared error of the weighted rows. The squared-error gain of a split
depends on the rows only through, per side, sum_i c_i and sum_i c_i·y_i (the within-row
variance is the same for every candidate split and cancels), and every candidate threshold lies
between two distinct feature values. So rows with the same feature vector can be merged into
one row of weight W_u = sum c_i and target S_u / W_u (S_u = sum c_i·y_i): the tree grown on the
merged rows, with the same tree seed, makes the same splits and the same leaf values (weighted
means), up to floating-point summation order. With two categorical features (the A-SRPT paper's
predictor on (group, user)) the 700,000 rows of the A-SRPT benchmark merge into 157,000 (one per
group), and every tree is grown on those. During ``fit`` the forest's value on every distinct
training row is recorded (an in-bag row is alone in its leaf, so its value is its own weighted
mean; only out-of-bag rows go down the tree); ``predict`` looks query rows up there and sends only
rows never seen in training down the trees, once per distinct row.

Binning
-------
By default (``max_bins=None``) every feature is kept exactly (every distinct value its own bin:
no approximation; ordinal codes of categorical columns must not be binned, a quantile bin would
lump unrelated groups together). With ``max_bins`` set, a feature with at most ``max_bins``
distinct training values is still kept exactly, and one with more is replaced by the index of its
quantile bin (``max_bins`` bins, edges at the midpoints of the distinct training
values nearest the quantiles), the histogram rule of gradient-boosting libraries; only then does
the forest differ from scikit-learn's (thresholds restricted to bin edges).

Differences from ``RandomForestRegressor`` that remain: ``min_samples_leaf`` counts merged rows
(distinct feature vectors), not samples (the default 1 is unaffected); a node whose merged rows
all have the same mean target is a leaf here, where scikit-learn may split it further into
children that predict the same value.

Tree builders
-------------
``builder="presorted"`` (default) grows each tree with :func:`optkit.presorted_cart.grow_tree`:
compiled (numba), each feature's rows sorted once for the whole forest and kept in order down the
tree, scikit-learn's splitter replicated step by step (feature order from its ``rand_r``
generator, thresholds, leaf rule). ``builder="sklearn"`` hands the merged rows to scikit-learn's
``DecisionTreeRegressor``, which sorts the rows of every node (on the A-SRPT benchmark's 157,000
distinct rows, a tree ~90 levels deep: ~0.7 s a tree against ~0.08 s); it also grows the trees
of data with missing values (NaN), which the presorted builder does not handle. The two give the
same trees except where two features split a node's rows identically and the floating-point sums,
accumulated in a different order, rank them differently (:mod:`optkit.presorted_cart`): then the threshold of
the other feature is kept, the training rows are split the same way, and only rows routed through
that node from outside the bag or never seen can get another leaf.

Trees are grown in a thread pool (both builders release the GIL) and kept as
:class:`CompactTree` arrays (a forest of 100 fully grown trees on 25,000 distinct rows holds about
5 million nodes: 360 MB as scikit-learn trees, 85 MB compact).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import numpy as np

from optkit.errors import InputError

__all__ = ["BinnedForestRegressor", "CompactTree", "TREE_BUILDERS", "tree_seeds", "bootstrap_counts"]

_MAX_INT = np.iinfo(np.int32).max

TREE_BUILDERS = ("presorted", "sklearn")
"""How :class:`BinnedForestRegressor` grows each tree (keyword ``builder``): ``"presorted"``
(default), :func:`optkit.presorted_cart.grow_tree`, compiled, no sorting at the nodes;
``"sklearn"``, scikit-learn's ``DecisionTreeRegressor`` on the merged rows. The same trees up to
floating-point ties (:mod:`optkit.presorted_cart`)."""


def tree_seeds(seed: int, n_trees: int) -> list[int]:
    """The seed of each tree, as ``RandomForestRegressor(random_state=seed)`` draws them."""
    rs = np.random.RandomState(seed)
    return [int(rs.randint(_MAX_INT)) for _ in range(n_trees)]


def bootstrap_counts(tree_seed: int, n: int) -> np.ndarray:
    """How often each of the n rows is drawn by the bootstrap of the tree seeded ``tree_seed``
    (scikit-learn's ``_generate_sample_indices`` then ``np.bincount``)."""
    idx = np.random.RandomState(tree_seed).randint(0, n, n)
    return np.bincount(idx, minlength=n).astype(float)


class CompactTree:
    """A fitted scikit-learn regression tree kept as four small arrays (about 17 bytes a node
    instead of scikit-learn's 72): ``feature`` (-1 at a leaf), ``left``/``right`` children and
    ``split_or_value`` (the threshold at an inner node, the prediction at a leaf). ``predict``
    compares like scikit-learn: the row's value as float32, ``<= threshold`` goes left."""

    __slots__ = ("feature", "left", "right", "split_or_value")

    def __init__(self, tree: Any) -> None:
        t = tree.tree_
        leaf = t.children_left < 0
        dtype = np.int8 if t.n_features < 127 else np.int32
        self.feature = np.where(leaf, -1, t.feature).astype(dtype)
        self.left = t.children_left.astype(np.int32)
        self.right = t.children_right.astype(np.int32)
        self.split_or_value = np.where(leaf, t.value[:, 0, 0], t.threshold)

    @classmethod
    def from_arrays(cls, feature: np.ndarray, left: np.ndarray, right: np.ndarray, split_or_value: np.ndarray,
                    n_features: int) -> "CompactTree":
        """A tree from its node arrays (``feature`` -1 at a leaf; children -1 at a leaf)."""
        self = cls.__new__(cls)
        self.feature = feature.astype(np.int8 if n_features < 127 else np.int32)
        self.left = left.astype(np.int32)
        self.right = right.astype(np.int32)
        self.split_or_value = split_or_value.astype(float)
        return self

    @property
    def node_count(self) -> int:
        return len(self.feature)

    def predict(self, x32: np.ndarray) -> np.ndarray:
        """Predictions for the float32 rows ``x32`` (:func:`optkit.presorted_cart.predict_tree`)."""
        from optkit.presorted_cart import predict_tree

        x = np.ascontiguousarray(x32, dtype=np.float32)
        return predict_tree(x, self.feature, self.split_or_value, self.left, self.right)


def unique_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of the 2-D ``x`` in lexicographic order and, for each row of ``x``, the
    index of its distinct row: ``np.unique(x, axis=0, return_inverse=True)``, by one ``lexsort``."""
    if len(x) == 0:
        return x[:0].copy(), np.zeros(0, dtype=np.int64)
    order = np.lexsort(x.T[::-1])
    xs = x[order]
    new = np.empty(len(x), dtype=bool)
    new[0] = True
    np.any(xs[1:] != xs[:-1], axis=1, out=new[1:])
    inv = np.empty(len(x), dtype=np.int64)
    inv[order] = np.cumsum(new) - 1
    return xs[new], inv


def _workers(n_jobs: int | None) -> int:
    cpus = os.cpu_count() or 1
    if n_jobs is None or n_jobs == 0:
        return cpus
    return max(1, cpus + 1 + n_jobs) if n_jobs < 0 else int(n_jobs)


class BinnedForestRegressor:
    """``n_estimators`` squared-error regression trees with bootstrap (scikit-learn's defaults
    otherwise: every feature considered at each split, grown to purity), on binned features and
    merged rows (see the module docstring). ``n_jobs``: threads (None: every core)."""

    def __init__(self, *, n_estimators: int = 100, random_state: int = 0, n_jobs: int | None = None,
                 min_samples_leaf: int = 1, max_bins: int | None = None, builder: str = "presorted") -> None:
        if n_estimators < 1:
            raise InputError("n_estimators", f"must be >= 1, got {n_estimators!r}")
        if max_bins is not None and max_bins < 2:
            raise InputError("max_bins", f"must be >= 2, got {max_bins!r}")
        if builder not in TREE_BUILDERS:
            raise InputError("builder", f"must be one of {', '.join(TREE_BUILDERS)}, got {builder!r}")
        self.builder = builder
        self.n_estimators = n_estimators
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.min_samples_leaf = min_samples_leaf
        self.max_bins = max_bins
        self.edges_: list[np.ndarray | None] = []
        self.estimators_: list[CompactTree] = []
        self.rows_ = np.zeros((0, 0))
        self.row_values_ = np.zeros(0)
        self.n_rows_: int = 0
        self.n_distinct_: int = 0

    # ------------------------------------------------------------------ binning
    def _fit_bins(self, x: np.ndarray) -> None:
        self.edges_ = []
        for j in range(x.shape[1]):
            vals = np.unique(x[:, j])
            if self.max_bins is None or len(vals) <= self.max_bins:
                self.edges_.append(None)
                continue
            q = np.quantile(x[:, j], np.linspace(0, 1, self.max_bins + 1)[1:-1], method="nearest")
            cuts = np.unique(q)
            # cut between a quantile value and the next distinct value
            nxt = vals[np.minimum(np.searchsorted(vals, cuts, side="right"), len(vals) - 1)]
            self.edges_.append(np.unique((cuts + nxt) / 2.0))

    def _binned(self, x: np.ndarray) -> np.ndarray:
        if all(e is None for e in self.edges_):
            return x
        out = x.copy()
        for j, e in enumerate(self.edges_):
            if e is not None:
                out[:, j] = np.searchsorted(e, x[:, j], side="right")
        return out

    # ------------------------------------------------------------------ fit / predict
    def fit(self, x: np.ndarray, y: np.ndarray) -> "BinnedForestRegressor":
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.ndim != 2 or len(x) != len(y) or len(y) == 0:
            raise InputError("x", f"must be a non-empty 2-D array with one row per target, got shape {x.shape}")
        self._fit_bins(x)
        xb = self._binned(x)
        rows, inv = unique_rows(xb)
        n, u = len(y), len(rows)
        self.n_rows_, self.n_distinct_ = n, u
        rows32 = np.ascontiguousarray(rows, dtype=np.float32)  # the dtype the tree builder works in
        # missing values (NaN) go to scikit-learn's builder, which sends them down the side it learns
        presorted = self.builder == "presorted" and not np.isnan(rows32).any()
        grow_one = self._presorted_grower(rows32) if presorted else self._sklearn_grower(rows32)

        def grow(seed: int) -> tuple[CompactTree, np.ndarray]:
            c = bootstrap_counts(seed, n)
            w = np.bincount(inv, weights=c, minlength=u)
            s = np.bincount(inv, weights=c * y, minlength=u)
            keep = w > 0
            y_rows = np.zeros(u)
            y_rows[keep] = s[keep] / w[keep]
            return grow_one(seed, w, y_rows)

        seeds = tree_seeds(self.random_state, self.n_estimators)
        workers = min(_workers(self.n_jobs), self.n_estimators)
        total = np.zeros(u)
        self.estimators_ = []
        if workers == 1:
            results: Any = map(grow, seeds)
        else:
            pool = ThreadPoolExecutor(workers)
            results = pool.map(grow, seeds)
        try:
            for tree, at_rows in results:  # in tree order: the same sum whatever the threads
                self.estimators_.append(tree)
                total += at_rows
        finally:
            if workers > 1:
                pool.shutdown()
        self.rows_ = rows
        self.row_values_ = total / self.n_estimators
        return self

    def _presorted_grower(self, rows32: np.ndarray) -> Callable[[int, np.ndarray, np.ndarray],
                                                                  tuple[CompactTree, np.ndarray]]:
        """Trees from :func:`optkit.presorted_cart.grow_tree`: each feature's rows sorted once
        for the whole forest; the splitter's seed is scikit-learn's (``RandomState(tree
        seed).randint(0, RAND_R_MAX)``, the first draw of the tree's generator)."""
        from optkit.presorted_cart import RAND_R_MAX, grow_tree

        xt = np.ascontiguousarray(rows32.T)
        order = np.ascontiguousarray(np.stack([np.argsort(col, kind="stable") for col in xt]), dtype=np.int32)
        msl = self.min_samples_leaf

        def grow_one(seed: int, w: np.ndarray, y_rows: np.ndarray) -> tuple[CompactTree, np.ndarray]:
            split_seed = int(np.random.RandomState(seed).randint(0, RAND_R_MAX))
            feature, split_or_value, left, right, at_rows = grow_tree(xt, order, w, y_rows, split_seed, msl)
            return CompactTree.from_arrays(feature, left, right, split_or_value, len(xt)), at_rows

        return grow_one

    def _sklearn_grower(self, rows32: np.ndarray) -> Callable[[int, np.ndarray, np.ndarray],
                                                                tuple[CompactTree, np.ndarray]]:
        """Trees from scikit-learn's ``DecisionTreeRegressor`` on the in-bag merged rows."""
        from sklearn.tree import DecisionTreeRegressor

        msl = self.min_samples_leaf

        def grow_one(seed: int, w: np.ndarray, y_rows: np.ndarray) -> tuple[CompactTree, np.ndarray]:
            keep = w > 0
            tree = DecisionTreeRegressor(criterion="squared_error", random_state=seed, min_samples_leaf=msl)
            tree.fit(rows32[keep], y_rows[keep], sample_weight=w[keep])
            # the tree's value on every distinct training row: an in-bag row is alone in its leaf
            # (the tree is grown until each leaf holds one feature vector, or equal targets), so
            # its value is its own weighted mean; the out-of-bag rows go down the tree
            at_rows = y_rows.copy()
            if not keep.all():
                at_rows[~keep] = tree.predict(rows32[~keep])
            return CompactTree(tree), at_rows

        return grow_one

    def _predict_trees(self, rows: np.ndarray) -> np.ndarray:
        rows32 = np.ascontiguousarray(rows, dtype=np.float32)
        total = np.zeros(len(rows))
        for tree in self.estimators_:
            total += tree.predict(rows32)
        return total / len(self.estimators_)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Mean over the trees. A query row equal to a (binned) training row takes the forest's
        value there, computed during ``fit``; only the other distinct query rows go down the trees."""
        if not self.estimators_:
            raise RuntimeError("BinnedForestRegressor.predict called before fit")
        x = np.asarray(x, dtype=float)
        if len(x) == 0:
            return np.zeros(0)
        q_rows, q_inv = unique_rows(self._binned(x))
        both, both_inv = unique_rows(np.vstack([self.rows_, q_rows]))
        train_of = np.full(len(both), -1, dtype=np.int64)
        train_of[both_inv[:len(self.rows_)]] = np.arange(len(self.rows_))
        hit = train_of[both_inv[len(self.rows_):]]
        out = np.empty(len(q_rows))
        seen = hit >= 0
        out[seen] = self.row_values_[hit[seen]]
        if not seen.all():
            out[~seen] = self._predict_trees(q_rows[~seen])
        return out[q_inv]
