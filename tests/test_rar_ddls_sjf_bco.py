"""rar-ddls SJF-BCO (Algorithms 1-3) and the shared planning machinery (optkit.formulations.rar_ddls.plan).

Hand-checked FA-FFP and LBSGF picks (including the rho-hat fixed point), Lemma 2's invariant
max U <= theta, the literal bisection of Alg. 1 lines 4-23, the kappa loop against fixed kappa,
lambda and the servers LBSGF opens, plan -> schedule (gang starts after every GPU predecessor),
and runs through optkit.solve.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from optkit.formulations.rar_ddls.model import RarInstance, evaluate, schedule_dict, solo_slots
from optkit.formulations.rar_ddls.plan import (ClusterIndex, Estimates, Plan, lbsgf_servers, pick_lbsgf,
                                        pick_least_busy, place_job)
from optkit.formulations.rar_ddls.sjf_bco import kappa_classes, plan_theta, sjf_bco, sjf_bco_order
from optkit.errors import InputError
from optkit.result import Status
from optkit.solve import solve
from tests.deterministic import TickingClock

NET = {"inter_bandwidth": 1.25e9, "intra_bandwidth": 3.0e11, "compute_speed": 5.0e10,
       "xi1": 1.0, "xi2": 0.002, "degradation": 0.2}


def tiny_instance(seed: int, *, horizon: int = 400) -> dict[str, Any]:
    """2-4 servers of 2, 4 or 8 GPUs; 4-10 jobs of 1-8 GPUs (at most the cluster), 50-600
    iterations, per-iteration times about 0.01-0.05 s; communication heavy enough that
    contention matters."""
    rng = np.random.default_rng(seed)
    servers = [int(x) for x in rng.choice([2, 4, 8], size=int(rng.integers(2, 5)))]
    jobs = []
    for i in range(int(rng.integers(4, 11))):
        g = int(min(rng.choice([1, 1, 2, 2, 3, 4, 8]), sum(servers)))
        tau = float(rng.uniform(0.01, 0.04))
        jobs.append({"id": f"j{i}", "gpus": g, "iterations": int(rng.integers(50, 601)),
                     "grad_bytes": float(rng.uniform(1e6, 2e7)), "batch": 32,
                     "fwd_time_per_sample": 0.3 * tau / 32, "bwd_time": 0.6 * tau})
    return {"problem": "rar-ddls", "servers": servers, "network": dict(NET), "slot_seconds": 1.0,
            "horizon": horizon, "jobs": jobs}


def xi2_instance(servers: list[int], gpus: list[int], iterations: int = 60) -> RarInstance:
    """No gradient (tau = xi2·servers + bwd): tau = 0.1, 0.15, 0.2 s on 1, 2, 3 servers, so
    rho-hat = 6, 10, 12 slots for 60 iterations (phi = 10, 6, 5)."""
    net = {**NET, "xi2": 0.05}
    jobs = [{"id": f"j{i}", "gpus": g, "iterations": iterations, "grad_bytes": 0.0, "batch": 1,
             "fwd_time_per_sample": 0.0, "bwd_time": 0.05} for i, g in enumerate(gpus)]
    return RarInstance.from_dict({"problem": "rar-ddls", "servers": servers, "network": net,
                                  "horizon": 100, "jobs": jobs})


LITERAL_PLAN = {"available": "accumulated", "fa_ffp": "least-loaded"}
"""The plan readings optkit took before they were declared: the literal-text tests below pin them."""
LITERAL = {**LITERAL_PLAN, "kappa_select": "estimate", "theta_search": "bisection"}


def _plan_with(cluster: ClusterIndex, U: list[float]) -> Plan:
    plan = Plan.empty(cluster)
    plan.U[:] = U
    plan.free[:] = U
    return plan


# ----------------------------------------------------------------------------- the estimate
def test_rho_hat_is_solo_slots_over_u() -> None:
    inst = xi2_instance([2, 3, 1], [2])
    assert [solo_slots(inst, inst.jobs[0], n) for n in (1, 2, 3)] == [6, 10, 12]
    est = Estimates(inst, u=2.0)
    assert est.w[0, 1] == 3.0 and est.w[0, 2] == 5.0 and np.isinf(est.w[0, 3])  # 3 servers > G_j
    assert est.first[0] == 3.0  # fastest placement: one server of 3
    with pytest.raises(InputError, match="u"):
        Estimates(inst, u=0.5)


# ----------------------------------------------------------------------------- FA-FFP (Alg. 2)
def test_fa_ffp_pick_least_busy_first_fit_ties() -> None:
    inst = xi2_instance([2, 3], [2])
    c = ClusterIndex.of(inst.servers)  # GPUs 0,1 on server 0; 2,3,4 on server 1
    plan = _plan_with(c, [3, 1, 1, 0, 5])
    # least U: GPU 3 (0), then GPUs 1 and 2 (U = 1) tie: first fit takes server 0's GPU 1.
    assert pick_least_busy(plan, 0, 2, np.arange(5)).tolist() == [3, 1]
    # place_job: 2 servers -> rho-hat = 10; T_j = max free (0, 1) + 10 = 11.
    assert place_job(plan, Estimates(inst), 0, 20, pick_least_busy)
    assert plan.U.tolist() == [3, 11, 1, 10, 5]
    assert plan.finish[0] == 11 and plan.free.tolist() == [3, 11, 1, 11, 5]
    assert plan.gpus[0].tolist() == [1, 3]


def test_fa_ffp_fixed_point_drops_violating_gpus() -> None:
    inst = xi2_instance([2, 3], [2])
    c = ClusterIndex.of(inst.servers)
    plan = _plan_with(c, [3, 1, 1, 0, 5])
    # theta = 10: with the fastest estimate (6) GPUs 0-3 are eligible; the pick {3, 1} spans two
    # servers (rho-hat 10) and GPU 1 then violates (1 + 10 > 10): dropped. Re-pick {3, 2}: one
    # server, rho-hat 6, consistent.
    assert place_job(plan, Estimates(inst), 0, 10, pick_least_busy)
    assert plan.gpus[0].tolist() == [2, 3]
    assert plan.U.tolist() == [3, 1, 7, 6, 5]
    assert plan.finish[0] == 7  # max free (1, 0) + 6
    # Again: only GPUs 0 (U = 3) and 1 (U = 1) have U + 6 <= 10: server 0, rho-hat 6, T = 3 + 6.
    assert place_job(plan, Estimates(inst), 0, 10, pick_least_busy)
    assert plan.gpus[0].tolist() == [0, 1] and plan.U.tolist() == [9, 7, 7, 6, 5] and plan.finish[0] == 9
    # A third time nothing is eligible (every U > 4): the plan is left unchanged.
    before = plan.U.copy()
    assert not place_job(plan, Estimates(inst), 0, 10, pick_least_busy)
    assert np.array_equal(plan.U, before)


# ----------------------------------------------------------------------------- LBSGF (Alg. 3)
def test_lbsgf_pick_by_server_load_then_least_u() -> None:
    inst = xi2_instance([2, 3, 2], [2])
    c = ClusterIndex.of(inst.servers)  # s0: 0,1  s1: 2,3,4  s2: 5,6
    plan = _plan_with(c, [4, 0, 1, 1, 1, 0, 2])
    # Mean U: s0 = 2, s1 = 1, s2 = 1 -> order s1, s2 (tie by index), s0.
    assert lbsgf_servers(plan.server_load(), c.capacity, 2, 1.0).tolist() == [1]
    assert lbsgf_servers(plan.server_load(), c.capacity, 2, 2.0).tolist() == [1, 2]
    assert lbsgf_servers(plan.server_load(), c.capacity, 2, 8.0).tolist() == [1, 2, 0]
    # lambda = 1: only s1 (3 GPUs >= 2); its GPUs all have U = 1 -> GPUs 2, 3.
    assert pick_lbsgf(1.0)(plan, 0, 2, np.arange(7)).tolist() == [2, 3]
    # lambda = 2: s1 + s2 (5 >= 4); appended [2, 3, 4 | 5, 6]; least U: GPU 5 (0), then GPU 2.
    assert pick_lbsgf(2.0)(plan, 0, 2, np.arange(7)).tolist() == [5, 2]
    # GPU 1 (U = 0) is never taken: its server s0 is the busiest.
    assert place_job(plan, Estimates(inst), 0, 50, pick_lbsgf(2.0))
    assert plan.U.tolist() == [4, 0, 11, 1, 1, 10, 2]  # two servers: rho-hat 10
    assert plan.finish[0] == 11  # max free (1, 0) + 10


def test_lbsgf_infeasible_when_selected_servers_lack_gpus() -> None:
    inst = xi2_instance([2, 3, 2], [2])
    c = ClusterIndex.of(inst.servers)
    plan = _plan_with(c, [4, 0, 1, 9, 9, 0, 2])
    # s1 (mean 19/3) is now busiest; s2 (mean 1) then s0 (mean 2). lambda = 1: s2 alone; under
    # theta = 7 only GPU 5 is eligible there (2 + 6 > 7 for GPU 6): fewer than 2 -> no pick.
    assert not place_job(plan, Estimates(inst), 0, 7, pick_lbsgf(1.0))
    assert place_job(plan, Estimates(inst), 0, 8, pick_lbsgf(1.0))
    assert plan.gpus[0].tolist() == [5, 6]


@pytest.mark.parametrize("servers", [[2, 4, 8], [8, 4, 2, 2], [4, 4, 4]])
def test_larger_lambda_opens_at_least_as_many_servers_on_an_empty_cluster(servers: list[int]) -> None:
    c = ClusterIndex.of(servers)
    for G in range(1, sum(servers) + 1):
        inst = xi2_instance(servers, [G])
        selected, used = [], []
        for lam in (1.0, 2.0, 4.0, 8.0):
            plan = Plan.empty(c)
            selected.append(len(lbsgf_servers(plan.server_load(), c.capacity, G, lam)))
            assert place_job(plan, Estimates(inst), 0, 1000, pick_lbsgf(lam))
            used.append(len(set(c.server_of[plan.gpus[0]].tolist())))
        assert selected == sorted(selected) and used == sorted(used), (servers, G, selected, used)
        assert sum(c.capacity[:selected[0]]) >= G


# ----------------------------------------------------------------------------- Algorithm 1
def _literal_bisection(inst: RarInstance, kappas: list[int]) -> tuple[int | None, float]:
    """Alg. 1 lines 4-23 written out again over plan_theta (an independent driver)."""
    T = inst.horizon
    m, best, left, right = float(T), None, 1, T
    while left <= right:
        theta = (left + right) // 2
        m_theta = float(T)
        for k in kappas:
            p = plan_theta(inst, theta, kappa=k, **LITERAL_PLAN)
            if p is not None and p.makespan < m_theta:
                m_theta = p.makespan
        if m_theta < m:
            m, best, right = m_theta, theta, theta - 1
        else:
            left = theta + 1
    return best, m


@pytest.mark.parametrize("seed", range(8))
def test_bisection_lemma2_and_schedule(seed: int) -> None:
    inst = RarInstance.from_dict(tiny_instance(seed))
    y, res = sjf_bco(inst, **LITERAL)
    # The literal bisection over every kappa 1..max G agrees (the class speed-up is exact).
    theta, m = _literal_bisection(inst, list(range(1, max(j.gpus for j in inst.jobs) + 1)))
    assert (res.theta, res.plan_makespan) == (theta, m)
    # Lemma 2's invariant: no GPU's accumulated time exceeds theta_u; the plan is below T.
    assert res.max_busy <= res.theta + 1e-9
    plan = plan_theta(inst, res.theta, kappa=res.kappa, **LITERAL_PLAN)
    assert plan is not None and plan.makespan == res.plan_makespan
    assert plan.U.max() <= res.theta + 1e-9
    assert res.plan_makespan < inst.horizon
    # Plan order is SJF: G_j non-decreasing.
    sizes = [inst.jobs[j].gpus for j in res.order]
    assert sizes == sorted(sizes) and res.order == sjf_bco_order(inst)
    # The schedule: accepted by evaluate; the same completions the plan's simulation gave.
    sched = schedule_dict(inst, y, res.outcome)
    ev = evaluate(inst, sched)
    assert ev.feasible, ev.violations
    start, comp = res.outcome.start, res.outcome.completion
    # Gang and per-GPU order: a job starts exactly when the last job planned before it on any
    # of its GPUs completes (slot 0 if none); no GPU ever holds two jobs at once.
    last_on: dict[tuple[int, int], int] = {}
    for j in res.order:
        preds = {last_on[g] for g in res.gpus[j] if g in last_on}
        assert start[j] == max((comp[p] for p in preds), default=0)
        for g in res.gpus[j]:
            last_on[g] = j
        assert sum(y[j]) == inst.jobs[j].gpus and len(res.gpus[j]) == inst.jobs[j].gpus
    for j in range(len(inst.jobs)):
        for k in range(j + 1, len(inst.jobs)):
            if set(res.gpus[j]) & set(res.gpus[k]):
                assert comp[j] <= start[k] or comp[k] <= start[j]


@pytest.mark.parametrize("seed", range(6))
def test_kappa_loop_beats_every_fixed_kappa(seed: int) -> None:
    inst = RarInstance.from_dict(tiny_instance(100 + seed))
    _, res = sjf_bco(inst, **LITERAL)
    n_g = max(j.gpus for j in inst.jobs)
    complete = 0
    for k in range(1, n_g + 1):
        p = plan_theta(inst, res.theta, kappa=k, **LITERAL_PLAN)
        if p is not None:
            complete += 1
            assert res.plan_makespan <= p.makespan
            # kappa's class representative gives the identical plan.
            rep = max(c for c in kappa_classes(inst) if c <= k)
            q = plan_theta(inst, res.theta, kappa=rep, **LITERAL_PLAN)
            assert q is not None and np.array_equal(p.y(len(inst.jobs)), q.y(len(inst.jobs)))
            assert p.makespan == q.makespan
    assert complete >= 1
    # A fixed kappa runs the same bisection with that kappa only.
    _, fixed = sjf_bco(inst, kappa=res.kappa, **LITERAL)
    assert fixed.kappa == res.kappa and fixed.plan_makespan >= res.plan_makespan


def test_parameters_validated() -> None:
    inst = tiny_instance(0)
    with pytest.raises(InputError, match="lam"):
        sjf_bco(inst, lam=0.5)
    for bad in ("2", math.inf, True):  # lambda_j is a finite number >= 1
        with pytest.raises(InputError) as err:
            sjf_bco(inst, lam=bad)
        assert err.value.field == "lam" and err.value.message == (
            f"must be a number >= 1 (lambda_j >= 1, Alg. 3), got {bad!r}")
    with pytest.raises(InputError, match="kappa"):
        sjf_bco(inst, kappa=0)
    with pytest.raises(InputError, match="u"):
        sjf_bco(inst, u=0.0)


# ----------------------------------------------------------------------------- through the engine
@pytest.mark.parametrize("seed", range(4))
def test_run_through_solve(seed: int) -> None:
    d = tiny_instance(200 + seed)
    res = solve("rar-ddls", d, "sjf-bco", seed=seed, params={"lam": 2.0})
    assert res.status == Status.FEASIBLE, res.message
    inst = RarInstance.from_dict(d)
    ev = evaluate(inst, res.solution)
    assert ev.feasible and res.objective == ev.objectives["makespan"]
    assert {"theta_u", "kappa", "plan_makespan_estimate_slots", "bisection_steps"} <= set(res.info)
    assert res.info["max_busy_slots"] <= res.info["theta_u"]
    tc = solve("rar-ddls", d, "sjf-bco", objective="total_completion", params={"lam": 2.0})
    assert tc.status == Status.FEASIBLE and tc.objective == ev.objectives["total_completion"]


def test_reading_u_reaches_the_planner_through_solve() -> None:
    """``u`` (eq. 15, W = rho-hat/u) passed to ``solve`` reaches the planner: on
    ``contention_case(11, jobs=4)`` u = 2 rescales W against the theta grid and the planner
    places the jobs differently from u = 1 (found by search over 20 cases; the makespan happens
    to be the same), matching the direct call :func:`sjf_bco` with each u. Both are feasible."""
    from tests.rar_ddls_cases import contention_case

    d = contention_case(11, jobs=4)
    inst = RarInstance.from_dict(d)
    got = {u: solve("rar-ddls", d, "sjf-bco", params={"u": u}) for u in (1.0, 2.0)}
    assert got[1.0].solution != got[2.0].solution
    for u, res in got.items():
        assert evaluate(inst, res.solution).feasible
        y, plan = sjf_bco(d, u=u)
        assert res.solution == schedule_dict(inst, y, plan.outcome), u

def test_horizon_too_short_extends_the_search_and_flags_the_schedule() -> None:
    d = tiny_instance(3, horizon=3)
    res = solve("rar-ddls", d, "sjf-bco")
    assert res.status == Status.FEASIBLE, res.message
    ev = evaluate(RarInstance.from_dict(d), res.solution)
    assert ev.feasible and ev.metrics["past_horizon"] and res.info["past_horizon"]
    assert res.info["search_horizon_slots"] > 3 and res.info["theta_u"] > 3


def test_a_time_limit_not_reached_changes_nothing() -> None:
    """A limit far from reached (an hour) leaves the search alone: the schedule of the run
    without a limit, status ``feasible``, not flagged as timed out."""
    d = tiny_instance(5)
    free, limited = solve("rar-ddls", d, "sjf-bco"), solve("rar-ddls", d, "sjf-bco", time_limit=3600.0)
    assert limited.status == Status.FEASIBLE and "timed_out" not in limited.info
    assert limited.solution == free.solution


def test_time_limit_stops_the_bisection_with_the_plan_so_far(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock is injected (1 s per reading): a 0.5 s limit has passed at the first check."""
    TickingClock(step=1.0).install(monkeypatch)
    d = tiny_instance(5, horizon=4000)
    res = solve("rar-ddls", d, "sjf-bco", time_limit=0.5)
    # One bisection step ran (theta = 2000 accepts any complete plan below T), then the clock.
    assert res.status == Status.TIME_LIMIT and res.info["bisection_steps"] == 1
    assert res.info["theta_u"] == 2000 and res.info["timed_out"] is True
    assert evaluate(RarInstance.from_dict(d), res.solution).feasible


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("available,fa_ffp", [("idle-now", "packing"), ("accumulated", "least-loaded")])
def test_kappa_plans_shared_prefix_equals_planning_each_kappa_from_scratch(seed: int, available: str,
                                                                          fa_ffp: str) -> None:
    """kappa_plans (one FA-FFP prefix shared by every kappa) gives, for every kappa class and
    several theta, exactly the plan that plan_theta builds from an empty cluster."""
    from optkit.formulations.rar_ddls.plan import pick_lbsgf, pick_least_busy, pick_packing
    from optkit.formulations.rar_ddls.sjf_bco import kappa_plans

    inst = RarInstance.from_dict(tiny_instance(600 + seed))
    est = Estimates(inst)
    kappas = kappa_classes(inst)
    small = pick_packing if fa_ffp == "packing" else pick_least_busy
    n = len(inst.jobs)
    for theta in (10, 25, 60, 400):
        got = dict(kappa_plans(est, ClusterIndex.of(inst.servers), sjf_bco_order(inst), theta, kappas, small,
                               pick_lbsgf(1.0), available))
        assert list(got) == kappas
        for k in kappas:
            ref = plan_theta(inst, theta, kappa=k, available=available, fa_ffp=fa_ffp)
            assert (got[k] is None) == (ref is None), (theta, k)
            if ref is not None:
                assert np.array_equal(got[k].y(n), ref.y(n)) and got[k].finish == ref.finish
                assert got[k].predecessors(n) == ref.predecessors(n) and np.array_equal(got[k].U, ref.U)
