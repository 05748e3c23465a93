"""rar-ddls experiments (formulations/rar_ddls/claims.py): wired into the formulation, every claim
measured by its function at ci scale, deterministic per seed, and the shape counters checked on
hand-worked curves."""

from __future__ import annotations

import importlib

import pytest

from optkit.formulations.rar_ddls import FORMULATION
from optkit.formulations.rar_ddls.claims import EXPERIMENTS, _drop_rise_drop, run_policy, turning_points
from optkit.formulations.rar_ddls.generate import paper_sec7
from optkit.formulations.rar_ddls.readings import DEFAULTS, READINGS

SWEPT = {k: DEFAULTS[k] for k in ("available", "kappa_select", "theta_search", "fa_ffp")}


def _measure(eid: str):
    mod, fn = EXPERIMENTS[eid].measure.split(":")
    return getattr(importlib.import_module(mod), fn)


def test_experiments_are_wired_and_name_declared_readings() -> None:
    assert set(FORMULATION.experiments) == set(EXPERIMENTS) == {
        "sjf-bco-fig4", "sjf-bco-fig5", "sjf-bco-fig6", "sjf-bco-fig7", "sjf-bco-bounds"}
    names = {r.name for r in READINGS}
    ids = [c.id for e in EXPERIMENTS.values() for c in e.claims]
    assert len(ids) == len(set(ids))
    for e in EXPERIMENTS.values():
        assert e.problem == "rar-ddls" and e.paper == "sjf-bco" and e.seeded
        assert set(e.readings) == set(SWEPT) and set(e.readings) <= names


def test_turning_points_and_shape_on_hand_curves() -> None:
    """Fig. 5's shape: 10, 8, 8, 9, 7 drops, stays, rises, drops: 2 turning points, drop-rise-drop.
    5, 6, 7 only rises: 0; 9, 8, 9 drops then rises: 1, not the paper's shape."""
    assert turning_points([10, 8, 8, 9, 7]) == 2 and _drop_rise_drop([10, 8, 8, 9, 7])
    assert turning_points([5, 6, 7]) == 0 and not _drop_rise_drop([5, 6, 7])
    assert turning_points([9, 8, 9]) == 1 and not _drop_rise_drop([9, 8, 9])


@pytest.mark.parametrize("eid", ["sjf-bco-fig4", "sjf-bco-bounds"])
def test_measure_returns_every_claim_and_is_deterministic(eid: str) -> None:
    fn = _measure(eid)
    a = fn(readings=SWEPT, seed=1, scale="ci")
    assert {c.id for c in EXPERIMENTS[eid].claims} <= set(a)
    assert all(isinstance(a[c.id], (int, float)) for c in EXPERIMENTS[eid].claims)
    b = fn(readings=SWEPT, seed=1, scale="ci")
    assert {k: v for k, v in a.items() if not k.startswith("_")} == {k: v for k, v in b.items() if not k.startswith("_")}


def test_fig4_ratio_is_recomputed_from_evaluate() -> None:
    """The Fig. 4 claim is SJF-BCO's evaluated makespan over the smallest evaluated baseline
    makespan, recomputed here from run_policy (which takes evaluate's numbers)."""
    out = _measure("sjf-bco-fig4")(readings=SWEPT, seed=2, scale="ci")
    runs = out["_details"]["policies"]
    best = min(runs[p]["makespan"] for p in ("ff", "ls", "rand"))
    assert out["sjf-bco-fig4-makespan-vs-best-baseline"] == pytest.approx(runs["sjf-bco"]["makespan"] / best)
    again = run_policy("ff", paper_sec7(2), SWEPT, 2)
    assert again["makespan"] == runs["ff"]["makespan"]


def test_run_policy_reports_slots_whatever_the_slot_length() -> None:
    """Figs. 4-7 plot makespan and mean JCT in slots: with 2-s slots, run_policy's values are
    the schedule's largest and mean completion slot, not seconds."""
    import numpy as np

    from optkit.solve import solve

    data = dict(paper_sec7(2), slot_seconds=2.0)
    got = run_policy("ff", data, SWEPT, 2)
    completion = [j["completion"] for j in solve("rar-ddls", data, "ff", seed=2, params={
        k: SWEPT[k] for k in ("available", "theta_search")}).solution["jobs"]]
    assert got["makespan"] == max(completion)
    assert got["jct"] == pytest.approx(float(np.mean(completion)), rel=1e-12)


# ----------------------------------------------------------------------------- Figs. 5-7 at a tiny scale
def _tiny_sec7(monkeypatch: pytest.MonkeyPatch, data=None) -> None:
    """The measuring functions' own code path at a tiny scale: each seed's Sec. 7 workload
    replaced by ``tiny_instance(seed)`` of the SJF-BCO tests (or by ``data``), Fig. 6 on the
    first 2 and all 3 servers instead of 10 and 20."""
    from optkit.formulations.rar_ddls import claims
    from tests.test_rar_ddls_sjf_bco import tiny_instance

    monkeypatch.setattr(claims, "_sec7", (lambda seed, **kw: tiny_instance(seed, **kw)) if data is None
                        else (lambda seed, **kw: dict(data, **kw)))
    monkeypatch.setitem(claims.FIG6_SERVERS, "ci", (2, 3))


def _stalling_pair() -> dict:
    """Two 3-GPU jobs on three 2-GPU servers: each must split, and run together they share a
    server (6 of 6 GPUs), p = 2. Alone (2 servers, f = 1): 2·3.125e8/1.25e9 + 3.125e8/5e10 +
    2·0.002 = 0.51025 s, phi = 1; together (k = 2, f = 2.2) 1.11025 s, phi = 0 (eq. 9): every
    planner starts both at slot 0 and neither ever progresses, so no policy returns a schedule."""
    net = {"inter_bandwidth": 1.25e9, "intra_bandwidth": 3.0e11, "compute_speed": 5.0e10, "xi1": 1.0,
           "xi2": 0.002, "degradation": 0.2}
    job = {"gpus": 3, "iterations": 2, "grad_bytes": 4.6875e8, "batch": 1, "fwd_time_per_sample": 0.0,
           "bwd_time": 0.0}
    return {"problem": "rar-ddls", "servers": [2, 2, 2], "network": net, "horizon": 10,
            "jobs": [dict(job, id="a"), dict(job, id="b")]}


def test_fig5_is_the_kappa_curve_of_sjf_bco(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fig. 5's measure on tiny_instance(1) (servers 4, 8, 8; jobs of 1, 2, 2, 4 GPUs): its curve
    is SJF-BCO's makespan with kappa fixed to each of 1, 2, 4, 8, 16, 32, and the two shape
    statistics are read off that curve. kappa matters here: the loop's makespan differs from
    kappa = 1's."""
    from optkit.formulations.rar_ddls.claims import FIG5_KAPPAS, measure_fig5
    from tests.test_rar_ddls_sjf_bco import tiny_instance

    _tiny_sec7(monkeypatch)
    out = measure_fig5(readings=SWEPT, seed=1, scale="ci")
    curve = [run_policy("sjf-bco", tiny_instance(1), SWEPT, 1, kappa=k)["makespan"] for k in FIG5_KAPPAS]
    assert run_policy("sjf-bco", tiny_instance(1), SWEPT, 1)["makespan"] != curve[0]
    assert out["_details"] == {"kappa": list(FIG5_KAPPAS), "makespan": curve, "past_horizon": [False] * 6}
    assert out["sjf-bco-fig5-turning-points"] == turning_points(curve)
    assert out["sjf-bco-fig5-drop-rise-drop"] == (1.0 if _drop_rise_drop(curve) else 0.0)


def test_fig7_is_the_lambda_curve_at_kappa_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fig. 7's measure on tiny_instance(1): SJF-BCO with kappa = 1 (not the kappa loop, not
    kappa = 2, whose makespans at lambda = 1 differ here) at lambda = 1, 2, 4, 8; the count of
    rises and the relative reduction from lambda = 1 to 8 are read off that curve."""
    from optkit.formulations.rar_ddls.claims import FIG7_LAMBDAS, measure_fig7
    from tests.test_rar_ddls_sjf_bco import tiny_instance

    _tiny_sec7(monkeypatch)
    out = measure_fig7(readings=SWEPT, seed=1, scale="ci")
    data = tiny_instance(1)
    curve = [run_policy("sjf-bco", data, SWEPT, 1, kappa=1, lam=float(lam))["makespan"] for lam in FIG7_LAMBDAS]
    others = [run_policy("sjf-bco", data, SWEPT, 1, lam=1.0, **kw)["makespan"] for kw in ({}, {"kappa": 2})]
    assert curve[0] not in others
    assert out["_details"] == {"lambda": list(FIG7_LAMBDAS), "makespan": curve, "past_horizon": [False] * 4}
    assert out["sjf-bco-fig7-increases"] == sum(1 for a, b in zip(curve, curve[1:]) if b > a)
    assert out["sjf-bco-fig7-reduction"] == (curve[0] - curve[-1]) / curve[0]


def test_fig6_compares_the_fewest_and_the_most_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fig. 6's measure on tiny_instance(1) with T = 1500, on its first 2 servers and on all 3:
    per policy the makespans recomputed here, the relative reduction (first - last) / first,
    and FF's absolute reduction minus the larger of SJF-BCO's and LS's."""
    from optkit.formulations.rar_ddls.claims import measure_fig6
    from tests.test_rar_ddls_sjf_bco import tiny_instance

    _tiny_sec7(monkeypatch)
    out = measure_fig6(readings=SWEPT, seed=1, scale="ci")
    full = tiny_instance(1, horizon=1500)
    runs = {p: [run_policy(p, dict(full, servers=full["servers"][:n]), SWEPT, 1) for n in (2, 3)]
            for p in ("sjf-bco", "ff", "ls")}
    curves = {p: [r["makespan"] for r in rs] for p, rs in runs.items()}
    assert out["_details"] == {"servers": [2, 3], "makespan": curves,
                               "past_horizon": {p: [r["past_horizon"] for r in rs] for p, rs in runs.items()}}
    for p in curves:
        a, b = curves[p]
        assert out[f"sjf-bco-fig6-{p}-reduction"] == (a - b) / a
    drop = {p: curves[p][0] - curves[p][1] for p in curves}
    assert out["sjf-bco-fig6-ff-largest-reduction"] == drop["ff"] - max(drop["sjf-bco"], drop["ls"])


def test_series_of_a_plug_in_through_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    """The extra series for one more algorithm (LS here, run through ``solve``): Fig. 4's
    makespan and mean JCT in slots with SJF-BCO's over them, and Fig. 6's makespans on the
    fewest and the most servers with their relative reduction."""
    from optkit.formulations.rar_ddls.claims import series_fig4, series_fig6
    from tests.test_rar_ddls_sjf_bco import tiny_instance

    _tiny_sec7(monkeypatch)
    data = tiny_instance(1)
    ls, sjf = (run_policy(p, data, SWEPT, 1) for p in ("ls", "sjf-bco"))
    assert series_fig4("ls", readings=SWEPT, seed=1, scale="ci") == {
        "makespan_slots": ls["makespan"], "mean_jct_slots": pytest.approx(ls["jct"], rel=1e-12),
        "sjf_bco_makespan_over_it": sjf["makespan"] / ls["makespan"],
        "sjf_bco_jct_over_it": pytest.approx(sjf["jct"] / ls["jct"], rel=1e-12), "_details": {"status": "feasible"}}
    full = tiny_instance(1, horizon=1500)
    a, b = (run_policy("ls", dict(full, servers=full["servers"][:n]), SWEPT, 1)["makespan"] for n in (2, 3))
    assert series_fig6("ls", readings=SWEPT, seed=1, scale="ci") == {
        "makespan_slots_2_servers": a, "makespan_slots_3_servers": b, "reduction": (a - b) / a,
        "_details": {"servers": [2, 3], "makespan": [a, b]}}


def test_figures_without_a_schedule_measure_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the stalling pair no policy returns a schedule: every figure's statistic is ``None``
    (not a number made up from missing makespans), the curves list the ``None``s. (On its first
    two servers the jobs cannot overlap, so Fig. 6's first point has one: 2 + 2 slots.)"""
    from optkit.formulations.rar_ddls.claims import (measure_fig5, measure_fig6, measure_fig7, series_fig4,
                                                     series_fig6)

    _tiny_sec7(monkeypatch, _stalling_pair())
    kw = {"readings": SWEPT, "seed": 0, "scale": "ci"}
    f5 = measure_fig5(**kw)
    assert f5["sjf-bco-fig5-turning-points"] is None and f5["sjf-bco-fig5-drop-rise-drop"] is None
    assert f5["_details"]["makespan"] == [None] * 6
    assert measure_fig7(**kw) == {"sjf-bco-fig7-increases": None, "sjf-bco-fig7-reduction": None,
                                  "_details": {"lambda": [1, 2, 4, 8], "makespan": [None] * 4}}
    f6 = measure_fig6(**kw)  # on the first 2 servers the jobs cannot overlap: one after the other, 4 slots
    assert [f6[k] for k in f6 if not k.startswith("_")] == [None] * 4
    assert f6["_details"]["makespan"] == {p: [4.0, None] for p in ("sjf-bco", "ff", "ls")}
    assert series_fig4("ls", **kw) == {"makespan_slots": None, "mean_jct_slots": None,
                                       "sjf_bco_makespan_over_it": None, "sjf_bco_jct_over_it": None,
                                       "_details": {"status": "no_solution"}}
    assert series_fig6("ls", **kw)["reduction"] is None
