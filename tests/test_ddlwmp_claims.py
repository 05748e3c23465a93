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
        assert e.problem == "ddlwmp" and e.paper == ("llm" if e.id.startswith("llm-") else "a-srpt"), e.id
        assert set(e.readings) <= names, e.id
        for key, values in e.sweep.items():
            reading = FORMULATION.reading(key)
            for v in values:
                reading.validate(v)
        module, fn = e.measure.split(":")
        assert callable(getattr(importlib.import_module(module), fn))
    from optkit.formulations.ddlwmp.readings import TAU_DEFAULT

    assert set(EXPERIMENTS["a-srpt-sec5-tau"].sweep["tau"]) == {0, 1, 3, 5, 10, 50, 500, TAU_DEFAULT}
    # issue 34: every Sec. V experiment measures its claims as curves over the unstated operating points
    for eid in ("a-srpt-sec5-fig6", "a-srpt-sec5-tau", "a-srpt-sec5-fig7", "a-srpt-sec5-fig8", "a-srpt-sec5-fig9",
                "a-srpt-sec5-prediction"):
        curves = EXPERIMENTS[eid].curves
        assert set(curves) == {"load", "unstated_batch_factor"}, eid
        assert curves["load"]["paper"] == (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0), eid


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
    # beside the values, what shows a collapse (issue 34): A-SRPT's readout and the baselines' worst inflation
    diag = out["_diagnostics"]
    assert diag["a-srpt inflation"] == pytest.approx(runs["a-srpt"]["inflation"], rel=1e-5)
    assert diag["a-srpt split share"] == pytest.approx(runs["a-srpt"]["split_share"], rel=1e-5)
    assert diag["a-srpt delayed starts"] == runs["a-srpt"]["delayed_starts"]
    assert diag["baselines' max inflation"] == pytest.approx(max(runs[b]["inflation"] for b in case["reduction_pct"]),
                                                             rel=1e-5)
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


def _split_instance() -> DdlwmpInstance:
    """Two servers of 2 GPUs. a and b (1 GPU, 100 s) at 0; c (2 GPUs, AllReduce of 1 GB) at 1 s, when
    each server has one GPU free; d (2 GPUs, same model) at 500 s, when both are empty."""
    one = {"allreduce": "ring", "stages": [{"replicas": 1, "fwd_time": 0.4, "bwd_time": 0.6, "in_bytes": 0,
                                            "out_bytes": 0, "param_bytes": 1e6}]}
    two = {"allreduce": "ring", "stages": [{"replicas": 2, "fwd_time": 0.004, "bwd_time": 0.006, "in_bytes": 0,
                                            "out_bytes": 0, "param_bytes": 1e9}]}
    jobs = [{"id": "a", "release": 0, "model": "one", "iterations": 100},
            {"id": "b", "release": 0, "model": "one", "iterations": 100},
            {"id": "c", "release": 1, "model": "two", "iterations": 10},
            {"id": "d", "release": 500, "model": "two", "iterations": 10}]
    return DdlwmpInstance.from_dict({"problem": "ddlwmp", "models": {"one": one, "two": two}, "cluster": {
        "servers": 2, "gpus_per_server": 2, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11},
        "jobs": [dict(j, predicted_iterations=j["iterations"]) for j in jobs]})


def test_readout_counts_split_jobs_and_the_largest_job_inflation() -> None:
    """With consolidation (most-free servers) a takes server 0 and b server 1, so c must split over
    both; d finds them empty and runs on one. Split share 1/2 (c of the multi-GPU c, d), the largest
    job's inflation c's α over α̃min (Heavy-Edge on one server), and the GPU-time inflation their
    weighted sum over the ideal."""
    from optkit.formulations.ddlwmp.placement import Placer
    from optkit.formulations.ddlwmp.simulate import simulate
    from optkit.formulations.ddlwmp.sec5 import policy_for

    inst = _split_instance()
    r = run_policy_readout(inst, "wcs-subtime", {"consolidate": True}, 0)
    schedule = simulate(inst, policy_for(inst, "wcs-subtime", {"consolidate": True}, 0))
    alpha = {e["id"]: e["alpha_s"] for e in schedule["jobs"]}
    servers = {e["id"]: {m for stage in e["assignment"] for m in stage} for e in schedule["jobs"]}
    assert servers["a"] != servers["b"] and len(servers["c"]) == 2 and len(servers["d"]) == 1
    amin = Placer(inst.cluster, inst.models, seed=0).alpha_min("two")
    assert alpha["c"] > 10 * amin and alpha["d"] == pytest.approx(amin)
    assert r["split_share"] == 0.5
    assert r["inflation_max"] == pytest.approx(alpha["c"] / amin)
    ideal = 2 * 100 * 1.0 + 2 * 10 * amin * 2
    assert r["inflation"] == pytest.approx((2 * 100 * 1.0 + 2 * 10 * (alpha["c"] + amin)) / ideal)


def test_diagnostics_beside_each_point() -> None:
    from optkit.formulations.ddlwmp.claims import diagnostics

    runs = [{"inflation": 1.5, "inflation_max": 20.0, "split_share": 0.1, "delayed_starts": 3, "drain": 1.2},
            {"inflation": 4.0, "inflation_max": 200.0, "split_share": 0.5, "delayed_starts": None, "drain": 9.0}]
    base = [{"inflation": 2.0}, {"inflation": 15.0}]
    assert diagnostics(runs, base) == {"a-srpt inflation": 4.0, "a-srpt max job inflation": 200.0,
                                       "a-srpt split share": 0.5, "a-srpt delayed starts": 3.0, "a-srpt drain": 9.0,
                                       "baselines' max inflation": 15.0}
    assert "baselines' max inflation" not in diagnostics(runs)


def test_single_gpu_draw_reaches_the_fig7_job_sets() -> None:
    """Until issue 34 workloads.sec5_workload dropped the reading, so both options gave the same jobs."""
    from optkit.formulations.ddlwmp.claims import _r, fig7_job_set

    per_job = fig7_job_set(_r({}), jobs=150, scale="ci", seed=2, share=0.4)
    per_group = fig7_job_set(_r({"single_gpu_draw": "per-group"}), jobs=150, scale="ci", seed=2, share=0.4)
    assert per_job["meta"]["params"]["single_gpu_draw"] == "per-job"
    assert "single_gpu_draw" not in per_group["meta"]["params"]
    assert [j["model"] for j in per_job["jobs"]] != [j["model"] for j in per_group["jobs"]]


def test_unstated_batch_factor_scales_only_the_batches_table_one_leaves_blank() -> None:
    from optkit.errors import InputError
    from optkit.formulations.ddlwmp.claims import _r, _workload
    from optkit.formulations.ddlwmp.catalog import UNSTATED_BATCH, model_dict

    assert set(UNSTATED_BATCH) == {"resnet152", "bert-large", "xlnet-large", "t5-11b"}
    for name, scaled in (("resnet152:dp8", True), ("t5-11b:pipe8x1", True), ("vgg19:dp4", False),
                         ("gpt-175b:pipe4x2", False)):
        one, two = model_dict(name, "ring"), model_dict(name, "ring", 2.0)
        for s1, s2 in zip(one["stages"], two["stages"]):
            assert s2["fwd_time"] == pytest.approx(s1["fwd_time"] * (2.0 if scaled else 1.0)), name
            assert s2["param_bytes"] == s1["param_bytes"]
    data = _workload(_r({"unstated_batch_factor": 4.0}), jobs=200, scale="ci", seed=1)
    base = _workload(_r({}), jobs=200, scale="ci", seed=1)
    assert data["meta"]["params"]["unstated_batch_factor"] == 4.0
    resnets = [m for m in data["meta"]["alpha_min_s"] if m.startswith("resnet152")]
    assert resnets and all(data["meta"]["alpha_min_s"][m] > base["meta"]["alpha_min_s"][m] for m in resnets)
    with pytest.raises(InputError, match="unstated_batch_factor"):
        _workload(_r({"unstated_batch_factor": 0.0}), jobs=20, scale="ci", seed=1)


def test_every_sec5_measurement_reports_its_delayed_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34 §3: beside each Sec. V value, A-SRPT's delayed starts (the `_diagnostics` the page's
    'Beside each result' and curve tables print). The workloads and policy runs are stand-ins that
    number each A-SRPT run's delayed starts, so the test reads how each measure function passes
    them on: the sum over its cases (Figs. 6-8, tau), each variant's own (Fig. 9, the trace experiment)."""
    from optkit.formulations.ddlwmp import claims

    counter = iter(range(1, 10_000))

    def run(policy: str) -> dict:
        delayed = next(counter) if policy.startswith("a-srpt") else None
        return {"total_completion": 100.0 + (delayed or 0), "inflation": 1.0, "inflation_max": 1.0,
                "split_share": 0.0, "delayed_starts": delayed, "drain": 1.0}

    jobs = [{"release": float(i), "iterations": 10 + i} for i in range(10)]
    monkeypatch.setattr(claims, "_workload", lambda r, **kw: {"jobs": [dict(j) for j in jobs],
                                                               "cluster": {"inter_bandwidth": 1.25e9},
                                                               "meta": {"prediction": {"mae": 1.0}}})
    monkeypatch.setattr(claims, "instance_of", lambda data: data)
    monkeypatch.setattr(claims, "trace_records", lambda workload: [{}] * 1000)
    monkeypatch.setattr(claims, "compare", lambda inst, r, seed: {p: run(p) for p in ("a-srpt", *claims.PAPER_BASELINES)})
    monkeypatch.setattr(claims, "run_policy_readout", lambda inst, p, r, seed: run(p))
    monkeypatch.setattr("optkit.predict.fill_predictions", lambda data, pred, seed: 1.0)
    for name in ("measure_fig6", "measure_tau", "measure_fig7", "measure_fig8"):
        out = getattr(claims, name)(readings={}, seed=0, scale="ci")
        per_case = [c["runs"]["a-srpt"]["delayed_starts"] for c in out["_details"]["cases"]]
        assert len(per_case) > 0 and out["_diagnostics"]["a-srpt delayed starts"] == sum(per_case), name
    out = claims.measure_fig9(readings={}, seed=0, scale="ci")
    runs = out["_details"]["runs"]
    assert out["_diagnostics"]["a-srpt delayed starts"] == runs["rf"]["delayed_starts"]
    assert out["_diagnostics"]["perfect delayed starts"] == runs["perfect"]["delayed_starts"] != runs["rf"]["delayed_starts"]
    out = claims.measure_prediction(readings={"workload": "itp"}, seed=0, scale="ci")
    runs = out["_details"]["runs"]
    assert out["_diagnostics"]["a-srpt delayed starts"] == runs["a-srpt"]["delayed_starts"]
    assert out["_diagnostics"]["perfect delayed starts"] == runs["a-srpt-perfect"]["delayed_starts"]
