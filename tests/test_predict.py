"""Iteration predictors (optkit/predict.py)."""

from __future__ import annotations

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.predict import (
    ColumnForestPredictor, GroupMeanPredictor, GroupMedianPredictor, PerfectPredictor, RandomForestPredictor,
    fill_predictions, make_predictor, mean_absolute_error,
)


def grouped_records(n: int = 600, groups: int = 30, seed: int = 0) -> list[dict]:
    """Strong group structure: each group has its own scale (log-uniform 10..10^4), jobs +-10%."""
    rng = np.random.default_rng(seed)
    base = np.exp(rng.uniform(np.log(10), np.log(1e4), size=groups))
    out = []
    for i in range(n):
        g = int(rng.integers(groups))
        out.append({"id": f"j{i}", "release": float(i), "group": f"g{g}", "user": f"u{g % 7}",
                    "iterations": int(round(base[g] * rng.uniform(0.9, 1.1)))})
    return out


def test_rf_beats_global_mean_and_tracks_group_mean() -> None:
    recs = grouped_records()
    train, test = recs[:480], recs[480:]
    seen = {r["group"] for r in train}
    test = [r for r in test if r["group"] in seen]
    y = [r["iterations"] for r in test]
    rf = RandomForestPredictor(seed=0).fit(train)
    mae_rf = mean_absolute_error(y, rf.predict(test))
    mae_global = mean_absolute_error(y, GroupMeanPredictor(by=()).fit(train).predict(test))
    mae_group = mean_absolute_error(y, GroupMeanPredictor().fit(train).predict(test))
    assert mae_rf < 0.2 * mae_global
    assert mae_rf < 2.0 * mae_group + 1.0


def test_unseen_group_predicts_zero() -> None:
    train = [{"group": "a", "user": "u", "iterations": 10}, {"group": "b", "user": "u", "iterations": 20}]
    new = [{"group": "c", "user": "u"}, {"group": None, "user": "u"}, {"user": "u"}, {"group": "a", "user": "v"}]
    for p in (RandomForestPredictor(seed=0), GroupMeanPredictor(), GroupMedianPredictor()):
        out = p.fit(train).predict(new)
        assert out[:3].tolist() == [0.0, 0.0, 0.0], type(p).__name__
        assert out[3] > 0


def test_group_statistics_hand_case() -> None:
    train = [{"group": "a", "iterations": v} for v in (1, 2, 9)] + [{"group": "b", "iterations": 4}]
    new = [{"group": "a"}, {"group": "b"}]
    assert GroupMeanPredictor().fit(train).predict(new).tolist() == [4.0, 4.0]
    assert GroupMedianPredictor().fit(train).predict(new).tolist() == [2.0, 4.0]
    assert GroupMedianPredictor(by=()).fit(train).predict(new).tolist() == [3.0, 3.0]


def test_mae_hand_case() -> None:
    assert mean_absolute_error([10, 20, 30], [12, 20, 25]) == pytest.approx(7 / 3)
    assert mean_absolute_error([], []) == 0.0
    with pytest.raises(InputError):
        mean_absolute_error([1, 2], [1])


def test_fill_predictions_split_and_mae_hand_case() -> None:
    # releases out of list order: the split is by release; 5 jobs -> 4 history, 1 predicted
    jobs = [{"id": "e", "release": 9.0, "iterations": 7, "group": "a"},
            {"id": "a", "release": 0.0, "iterations": 10, "group": "a"},
            {"id": "b", "release": 1.0, "iterations": 20, "group": "a"},
            {"id": "c", "release": 2.0, "iterations": 5, "group": "b"},
            {"id": "d", "release": 3.0, "iterations": 6, "group": "b"}]
    inst = {"jobs": [dict(j) for j in jobs]}
    mae = fill_predictions(inst, "mean")
    by_id = {j["id"]: j["predicted_iterations"] for j in inst["jobs"]}
    assert by_id["e"] == 15.0 and mae == pytest.approx(8.0)
    assert by_id["a"] == by_id["b"] == 15.0 and by_id["c"] == by_id["d"] == 5.5  # in-sample history
    assert inst["meta"]["prediction"]["trained_on"] == 4 and inst["meta"]["prediction"]["mae"] == mae
    inst = {"jobs": [dict(j) for j in jobs]}
    assert fill_predictions(inst, "median", history="perfect") == pytest.approx(8.0)
    assert {j["id"]: j["predicted_iterations"] for j in inst["jobs"]}["a"] == 10.0
    inst = {"jobs": [dict(j) for j in jobs]}
    assert fill_predictions(inst, "perfect") == 0.0
    assert all(j["predicted_iterations"] == j["iterations"] for j in inst["jobs"])


def test_fill_predictions_rf_on_grouped_workload() -> None:
    inst = {"jobs": grouped_records(300, 15, seed=3)}
    mae_rf = fill_predictions(inst, "rf", seed=0)
    inst2 = {"jobs": grouped_records(300, 15, seed=3)}
    mae_global = fill_predictions(inst2, GroupMeanPredictor(by=()))
    assert 0 < mae_rf < mae_global


def test_seeds_reproducible() -> None:
    recs = grouped_records(200, 40, seed=1)
    # few records per group: bootstrap makes the forest's output depend on the seed
    a = RandomForestPredictor(seed=5).fit(recs[:150]).predict(recs[150:])
    b = RandomForestPredictor(seed=5).fit(recs[:150]).predict(recs[150:])
    assert np.array_equal(a, b)
    i1 = {"jobs": grouped_records(100, 10, seed=2)}
    i2 = {"jobs": grouped_records(100, 10, seed=2)}
    assert fill_predictions(i1, "rf", seed=3) == fill_predictions(i2, "rf", seed=3)
    assert i1 == i2


def test_column_forest_on_trace_without_groups() -> None:
    rng = np.random.default_rng(0)
    recs = []
    for i in range(300):
        gpus = int(rng.choice([1, 2, 4, 8]))
        cluster = f"c{int(rng.integers(3))}"
        recs.append({"job_id": f"x{i}", "num_gpu": gpus, "cluster": cluster,
                     "iterations": 100 * gpus + (500 if cluster == "c1" else 0) + float(rng.normal(0, 5))})
    p = ColumnForestPredictor(seed=0).fit(recs[:240])
    assert p.columns == ["num_gpu", "cluster"]
    y = [r["iterations"] for r in recs[240:]]
    assert mean_absolute_error(y, p.predict(recs[240:])) < 20
    assert p.predict([{"num_gpu": 4, "cluster": "new"}]).shape == (1,)


def test_errors() -> None:
    with pytest.raises(InputError, match="predictor"):
        make_predictor("nope")
    with pytest.raises(InputError, match=r"records\[1\].iterations"):
        GroupMeanPredictor().fit([{"group": "a", "iterations": 1}, {"group": "a"}])
    with pytest.raises(RuntimeError):
        PerfectPredictor().predict([{"iterations": 1}])
    with pytest.raises(InputError, match="train_fraction"):
        fill_predictions({"jobs": []}, "mean", train_fraction=1.5)
