"""Sec. V claims of the A-SRPT paper (formulations/ddlwmp/claims.py) and their measuring core
(formulations/ddlwmp/sec5.py)."""

from __future__ import annotations

import importlib

import pytest

from optkit.formulations.ddlwmp import FORMULATION
from optkit.formulations.ddlwmp.claims import EXPERIMENTS, fig6_jobs, measure_tau
from optkit.formulations.ddlwmp.model import DdlwmpInstance
from optkit.formulations.ddlwmp.sec5 import instance_of, reductions, run_policy_readout


def test_experiments_are_well_formed() -> None:
    names = {r.name for r in FORMULATION.readings}
    ids = [c.id for e in EXPERIMENTS.values() for c in e.claims]
    assert len(ids) == len(set(ids))
    assert set(FORMULATION.experiments) == set(EXPERIMENTS)
    for e in EXPERIMENTS.values():
        assert e.problem == "ddlwmp" and e.paper == "a-srpt"
        assert set(e.readings) <= names, e.id
        for key, values in e.sweep.items():
            reading = FORMULATION.reading(key)
            for v in values:
                reading.validate(v)
        module, fn = e.measure.split(":")
        assert callable(getattr(importlib.import_module(module), fn))
    assert EXPERIMENTS["a-srpt-sec5-tau"].sweep["tau"] == (0, 1, 3, 5, 10)


def test_readout_of_a_hand_worked_run() -> None:
    """One server of 4 GPUs; two 1-GPU jobs (alpha 0.1 s, 100 iterations: 10 s each) released at
    0 and 10 s. A baseline starts them at 0 and 10: makespan 20 s, TCT 30, GPU-seconds 20,
    utilisation 20 / (4 x 20) = 0.25, inflation 1, no job waits past the last release (10 s),
    drain 20/10 = 2. A-SRPT-Perfect waits for each Ã1 completion (size (1/4)·100·0.1 = 2.5 s):
    a joins at slot 3 (ends 13), b runs in Ã1 over 10-12.5, joins at 13 (ends 23): TCT 36,
    utilisation 20 / (4 x 23), b starts after the last release (backlog 1/2), drain 2.3."""
    model = {"allreduce": "ring", "stages": [{"replicas": 1, "fwd_time": 0.04, "bwd_time": 0.06, "in_bytes": 0,
                                              "out_bytes": 0, "param_bytes": 1e6}]}
    inst = DdlwmpInstance.from_dict({"problem": "ddlwmp", "models": {"m": model}, "cluster": {
        "servers": 1, "gpus_per_server": 4, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11},
        "jobs": [{"id": "a", "release": 0, "model": "m", "iterations": 100, "predicted_iterations": 100},
                 {"id": "b", "release": 10, "model": "m", "iterations": 100, "predicted_iterations": 100}]})
    want = {"spjf": (30.0, 20.0, 0.0), "wcs-subtime": (30.0, 20.0, 0.0), "a-srpt-perfect": (36.0, 23.0, 0.5)}
    for policy, (tct, makespan, backlog) in want.items():
        r = run_policy_readout(inst, policy, {"tau": 1.0}, 0)
        assert r["total_completion"] == pytest.approx(tct) and r["makespan"] == pytest.approx(makespan)
        assert r["utilisation"] == pytest.approx(20.0 / (4 * makespan))
        assert r["drain"] == pytest.approx(makespan / 10.0) and r["backlog_at_end"] == backlog
        assert r["inflation"] == pytest.approx(1.0)


def test_reduction_is_the_papers_measure() -> None:
    runs = {"a-srpt": {"total_completion": 30.0}, "spjf": {"total_completion": 100.0},
            "wcs-duration": {"total_completion": 20.0}}
    assert reductions(runs, ("spjf", "wcs-duration")) == {"spjf": 70.0, "wcs-duration": -50.0}


def test_fig6_job_counts() -> None:
    assert fig6_jobs("synthetic", "paper") == [37_500, 75_000, 112_500, 150_000]
    assert fig6_jobs("philly", "paper", 82_244) == [4112, 8224, 12337, 16449]
    assert fig6_jobs("itp", "ci", 69_351) == [900, 1800, 2700, 3600]
    assert fig6_jobs("itp", "ci", 20_000) == [900, 1800, 2700, 3600] and fig6_jobs("itp", "ci", 10_000) == [500, 1000, 1500, 2000]


def test_measure_tau_at_ci_scale_returns_every_claim_from_its_details() -> None:
    out = measure_tau(readings={"tau": 3}, seed=0, scale="ci")
    exp = EXPERIMENTS["a-srpt-sec5-tau"]
    assert {c.id for c in exp.claims} <= set(out)
    case = out["_details"]["cases"][0]
    runs = case["runs"]
    assert case["jobs"] == 3600 and out["_details"]["servers"] == 6
    ta = runs["a-srpt"]["total_completion"]
    reds = [100 * (runs[b]["total_completion"] - ta) / runs[b]["total_completion"] for b in case["reduction_pct"]]
    assert out["a-srpt-tau-min-reduction"] == pytest.approx(min(reds), rel=1e-6)
    assert out["a-srpt-tau-max-reduction"] == pytest.approx(max(reds), rel=1e-6)
    worst = max(case["reduction_pct"], key=lambda b: runs[b]["total_completion"])
    assert out["a-srpt-tau-spjf-worst"] == (1.0 if worst == "spjf" else 0.0)
    for r in runs.values():
        assert 0 < r["utilisation"] <= 1 and r["inflation"] >= 1 - 1e-9 and 0 <= r["backlog_at_end"] <= 1


def test_same_seed_same_values() -> None:
    from optkit.formulations.ddlwmp.sec5 import compare
    from optkit.formulations.ddlwmp.workloads import sec5_workload

    def once() -> dict:
        data = sec5_workload("synthetic", jobs=200, servers=2, load=0.8, seed=4)
        runs = compare(instance_of(data), {"tau": 3}, 4)
        return {p: {k: v for k, v in r.items() if k != "wall_s"} for p, r in runs.items()}

    assert once() == once()


def test_measure_fig9_at_ci_scale_is_its_details() -> None:
    from optkit.formulations.ddlwmp.claims import measure_fig9

    out = measure_fig9(readings={}, seed=1, scale="ci")
    runs = out["_details"]["runs"]
    assert {c.id for c in EXPERIMENTS["a-srpt-sec5-fig9"].claims} <= set(out)
    perfect = runs["perfect"]["total_completion"]
    assert out["a-srpt-fig9-rf-vs-perfect"] == pytest.approx(100 * (runs["rf"]["total_completion"] / perfect - 1))
    assert out["a-srpt-fig9-mean-vs-rf"] == pytest.approx(
        100 * (runs["mean"]["total_completion"] / runs["rf"]["total_completion"] - 1))
    assert out["a-srpt-fig9-mae-rf"] == out["_details"]["mae"]["rf"] > 0


def test_measure_prediction_on_a_trace_at_ci_scale() -> None:
    from optkit.formulations.ddlwmp.claims import measure_prediction
    from optkit.traces import philly_file

    if philly_file() is None:
        pytest.skip("Philly-derived trace not found (../shared/data/traces)")
    assert measure_prediction(readings={"workload": "synthetic"}, seed=0, scale="ci")["a-srpt-prediction-mae"] is None
    out = measure_prediction(readings={"workload": "philly", "load": 0.5}, seed=0, scale="ci")
    d = out["_details"]
    assert d["jobs"] == 1800 and d["prediction"]["predicted"] == 360
    assert out["a-srpt-prediction-mae"] == d["prediction"]["mae"]
    tct = {p: r["total_completion"] for p, r in d["runs"].items()}
    assert out["a-srpt-prediction-vs-perfect"] == pytest.approx(100 * (tct["a-srpt"] / tct["a-srpt-perfect"] - 1))
