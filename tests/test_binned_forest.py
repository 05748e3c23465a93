"""The binned (merged-rows) random forest against scikit-learn's RandomForestRegressor (the old path)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor

from optkit.binned_forest import BinnedForestRegressor, bootstrap_counts, tree_seeds
from optkit.errors import InputError
from optkit.predict import RandomForestPredictor, fill_predictions, mean_absolute_error


def _data(n: int = 3000, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """100 x 6 categorical codes, continuous targets (no exactly tied split gains)."""
    rng = np.random.default_rng(seed)
    g, u = rng.integers(0, 100, n), rng.integers(0, 6, n)
    y = np.exp(rng.uniform(2, 9, 100))[g] * (1 + 0.3 * u) * np.exp(0.2 * rng.standard_normal(n))
    return np.c_[g, u].astype(float), y


def test_tree_seeds_and_bootstrap_are_scikit_learns() -> None:
    x, y = _data(200)
    rf = RandomForestRegressor(n_estimators=4, random_state=7).fit(x, y)
    assert [e.random_state for e in rf.estimators_] == tree_seeds(7, 4)
    c = bootstrap_counts(tree_seeds(7, 1)[0], 200)
    assert c.sum() == 200 and (c == 0).sum() > 0  # a bootstrap leaves rows out


def test_same_trees_and_predictions_as_random_forest_regressor() -> None:
    """Merging equal feature rows (weight = bootstrap count, target = weighted mean) leaves every
    split gain unchanged, so each tree has the same features and thresholds as scikit-learn's,
    and the forest predicts the same everywhere, unseen codes (-1, 100, 6) included."""
    x, y = _data()
    rf = RandomForestRegressor(n_estimators=10, random_state=4).fit(x, y)
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
