"""The binned (merged-rows) random forest against scikit-learn's RandomForestRegressor (the old path),
and its presorted tree builder against scikit-learn's DecisionTreeRegressor."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from optkit.binned_forest import BinnedForestRegressor, bootstrap_counts, tree_seeds, unique_rows
from optkit.presorted_cart import RAND_R_MAX, grow_tree
from optkit.errors import InputError
from optkit.predict import RandomForestPredictor, fill_predictions, mean_absolute_error


def _data(n: int = 3000, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """100 x 6 categorical codes, continuous targets (no exactly tied split gains)."""
    rng = np.random.default_rng(seed)
    g, u = rng.integers(0, 100, n), rng.integers(0, 6, n)
    y = np.exp(rng.uniform(2, 9, 100))[g] * (1 + 0.3 * u) * np.exp(0.2 * rng.standard_normal(n))
    return np.c_[g, u].astype(float), y


def sk_forest(**kw: Any) -> Any:
    """scikit-learn's ``RandomForestRegressor(**kw)``, imported when a test first needs it (an
    import at the top of this module cost every pytest-xdist worker about 2 CPU seconds at
    collection, whether or not it ran this file)."""
    from sklearn.ensemble import RandomForestRegressor as cls
    return cls(**kw)


def sk_tree(**kw: Any) -> Any:
    """scikit-learn's ``DecisionTreeRegressor(**kw)``, imported when first needed (as :func:`sk_forest`)."""
    from sklearn.tree import DecisionTreeRegressor as cls
    return cls(**kw)


def test_tree_seeds_and_bootstrap_are_scikit_learns() -> None:
    x, y = _data(200)
    rf = sk_forest(n_estimators=4, random_state=7).fit(x, y)
    assert [e.random_state for e in rf.estimators_] == tree_seeds(7, 4)
    c = bootstrap_counts(tree_seeds(7, 1)[0], 200)
    assert c.sum() == 200 and (c == 0).sum() > 0  # a bootstrap leaves rows out


def test_same_trees_and_predictions_as_random_forest_regressor() -> None:
    """Merging equal feature rows (weight = bootstrap count, target = weighted mean) leaves every
    split gain unchanged, so each tree has the same features and thresholds as scikit-learn's,
    and the forest predicts the same everywhere, unseen codes (-1, 100, 6) included."""
    x, y = _data()
    rf = sk_forest(n_estimators=10, random_state=4).fit(x, y)
    bf = BinnedForestRegressor(n_estimators=10, random_state=4, n_jobs=2).fit(x, y)
    assert bf.n_distinct_ <= 600 < bf.n_rows_
    for a, b in zip(rf.estimators_, bf.estimators_):
        inner = a.tree_.children_left >= 0
        assert np.array_equal(np.where(inner, a.tree_.feature, -1), b.feature)
        assert np.array_equal(a.tree_.threshold[inner], b.split_or_value[inner])
        np.testing.assert_allclose(b.split_or_value[~inner], a.tree_.value[~inner, 0, 0], rtol=1e-12)
        assert np.array_equal(a.tree_.children_left, b.left) and np.array_equal(a.tree_.children_right, b.right)
        np.testing.assert_allclose(b.predict(x[:50].astype(np.float32)), a.predict(x[:50]), rtol=1e-12)
    rng = np.random.default_rng(9)
    xt = np.c_[rng.integers(-1, 101, 2000), rng.integers(-1, 7, 2000)].astype(float)
    np.testing.assert_allclose(bf.predict(xt), rf.predict(xt), rtol=1e-12)
    np.testing.assert_allclose(bf.predict(x), rf.predict(x), rtol=1e-12)


def _presorted(x: np.ndarray, w: np.ndarray, y: np.ndarray, seed: int, msl: int) -> tuple[np.ndarray, ...]:
    xt = np.ascontiguousarray(x.astype(np.float32).T)
    order = np.ascontiguousarray([np.argsort(c, kind="stable") for c in xt], dtype=np.int32)
    return grow_tree(xt, order, w, y, int(np.random.RandomState(seed).randint(0, RAND_R_MAX)), msl)


@pytest.mark.parametrize("msl", [1, 3])
def test_presorted_tree_is_scikit_learns_on_tied_features(msl: int) -> None:
    """Columns a, a, 0, 2a + 1 and 1e-9 a: every split of a is a tie of three features, decided
    only by the order scikit-learn's splitter visits them (its rand_r draws and its bookkeeping of
    constant features, column 2), and the last column's values lie closer than FEATURE_THRESHOLD
    (never split). Same nodes, features, thresholds and values as DecisionTreeRegressor, zero
    weights (rows out of the bag) included; the rows out of the bag are routed like its predict."""
    rng = np.random.default_rng(0)
    for seed in range(1000, 1010):
        a = rng.permutation(400).astype(float)
        x = np.c_[a, a, np.zeros(400), 2 * a + 1, 1e-9 * a]
        y, w = rng.lognormal(5, 1, 400), rng.integers(0, 4, 400).astype(float)
        keep = w > 0
        sk = sk_tree(random_state=seed, min_samples_leaf=msl).fit(
            x[keep].astype(np.float32), y[keep], sample_weight=w[keep]).tree_
        feature, split_or_value, left, right, at_rows = _presorted(x, w, y, seed, msl)
        assert np.array_equal(sk.children_left, left) and np.array_equal(sk.children_right, right)
        inner = left >= 0
        assert np.array_equal(sk.feature[inner], feature[inner]) and (feature[~inner] == -1).all()
        assert np.array_equal(sk.threshold[inner], split_or_value[inner])
        np.testing.assert_allclose(split_or_value[~inner], sk.value[~inner, 0, 0], rtol=1e-12)
        tree = sk_tree(random_state=seed, min_samples_leaf=msl).fit(
            x[keep].astype(np.float32), y[keep], sample_weight=w[keep])
        np.testing.assert_allclose(at_rows[~keep], tree.predict(x[~keep].astype(np.float32)), rtol=1e-12)
        assert np.array_equal(at_rows[keep], y[keep])


def test_presorted_and_sklearn_builders_grow_the_same_forest() -> None:
    """builder="presorted" (default) and builder="sklearn" (scikit-learn's tree builder on the
    merged rows): the same node arrays in every tree and the same predictions, in-sample, at
    unseen codes and from the fitted row values."""
    x, y = _data(2000, seed=5)
    fast = BinnedForestRegressor(n_estimators=8, random_state=11, n_jobs=2).fit(x, y)
    slow = BinnedForestRegressor(n_estimators=8, random_state=11, n_jobs=2, builder="sklearn").fit(x, y)
    for a, b in zip(fast.estimators_, slow.estimators_):
        assert np.array_equal(a.feature, b.feature) and np.array_equal(a.left, b.left)
        assert np.array_equal(a.right, b.right)
        np.testing.assert_allclose(a.split_or_value, b.split_or_value, rtol=1e-12)
    np.testing.assert_allclose(fast.row_values_, slow.row_values_, rtol=1e-12)
    rng = np.random.default_rng(3)
    xt = np.c_[rng.integers(-2, 102, 3000), rng.integers(-2, 8, 3000)].astype(float)
    np.testing.assert_allclose(fast.predict(xt), slow.predict(xt), rtol=1e-12)


def test_missing_values_go_to_scikit_learns_builder() -> None:
    """A NaN feature value: both builders give scikit-learn's trees (NaN routed as it learnt)."""
    x, y = _data(600, seed=8)
    x[::7, 1] = np.nan
    a = BinnedForestRegressor(n_estimators=4, random_state=1).fit(x, y)
    b = BinnedForestRegressor(n_estimators=4, random_state=1, builder="sklearn").fit(x, y)
    assert np.array_equal(a.predict(x), b.predict(x)) and np.isfinite(a.predict(x)).all()


def test_unique_rows_is_numpys() -> None:
    rng = np.random.default_rng(2)
    for _ in range(30):
        x = rng.integers(-2, 4, (int(rng.integers(1, 200)), int(rng.integers(1, 4)))).astype(float)
        rows, inv = np.unique(x, axis=0, return_inverse=True)
        mine, mine_inv = unique_rows(x)
        assert np.array_equal(rows, mine) and np.array_equal(inv.ravel(), mine_inv)


def test_threads_do_not_change_the_forest() -> None:
    x, y = _data(500)
    a = BinnedForestRegressor(n_estimators=6, random_state=2, n_jobs=1).fit(x, y).predict(x)
    b = BinnedForestRegressor(n_estimators=6, random_state=2, n_jobs=3).fit(x, y).predict(x)
    assert np.array_equal(a, b)


def test_max_bins_hand_case() -> None:
    """Values 0,1,...,9 (one row each) with max_bins=3: cuts at the 1/3 and 2/3 quantiles
    ('nearest': positions 3 and 6, values 3 and 6), each between its value and the next distinct
    one: edges 3.5 and 6.5; a 3-valued column stays exact (values kept as they are)."""
    x = np.c_[np.arange(10.0), np.arange(10) % 3]
    bf = BinnedForestRegressor(n_estimators=2, max_bins=3).fit(x, np.arange(10.0))
    assert bf.edges_[1] is None
    np.testing.assert_array_equal(bf.edges_[0], [3.5, 6.5])
    assert bf._binned(np.array([[3.4, 0.0], [3.6, 2.0], [9.0, 1.0]])).tolist() == [[0, 0], [1, 2], [2, 1]]


def test_predictor_models_agree() -> None:
    """The paper's predictor on (group, user): both models give the same in-sample fit and a
    held-out MAE within 1% of each other on the same split."""
    from tests.test_predict import grouped_records

    recs = grouped_records(1500, 60, seed=4)
    train, test = recs[:1200], recs[1200:]
    y = [r["iterations"] for r in test]
    fast = RandomForestPredictor(seed=3, model="hist").fit(train)
    slow = RandomForestPredictor(seed=3, model="random-forest").fit(train)
    np.testing.assert_allclose(fast.predict(train), slow.predict(train), rtol=1e-9)
    # the previous hist (scikit-learn's tree builder on the merged rows): the same predictions
    old = RandomForestPredictor(seed=3, model="hist-sklearn").fit(train)
    assert np.array_equal(old.predict(test), fast.predict(test))
    assert np.array_equal(old.predict(train), fast.predict(train))
    m_fast, m_slow = mean_absolute_error(y, fast.predict(test)), mean_absolute_error(y, slow.predict(test))
    assert abs(m_fast - m_slow) <= 0.01 * m_slow
    inst = {"jobs": [dict(r, release=float(i)) for i, r in enumerate(recs[:300])]}
    fill_predictions(inst, "rf", model="random-forest")
    assert inst["meta"]["prediction"]["model"] == "random-forest"


def test_bad_model_and_input() -> None:
    with pytest.raises(InputError, match="model"):
        RandomForestPredictor(model="gbm")
    with pytest.raises(InputError, match="model"):
        fill_predictions({"jobs": []}, "rf", model="nope")
    with pytest.raises(InputError, match="x"):
        BinnedForestRegressor().fit(np.zeros((0, 2)), np.zeros(0))
    with pytest.raises(InputError, match="builder"):
        BinnedForestRegressor(builder="exact")
