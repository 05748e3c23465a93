"""rar-ddls baselines of Sec. 7 (FF, LS, RAND): hand-checked picks, the bisection and Lemma 2's
invariant, instance job order, seeded RAND, and runs through optkit.solve."""

from __future__ import annotations

import numpy as np
import pytest

from optkit.formulations.rar_ddls.baselines import ff, ls, plan_baseline, rand
from optkit.formulations.rar_ddls.model import RarInstance, evaluate, schedule_dict
from optkit.formulations.rar_ddls.plan import (ClusterIndex, Estimates, Plan, pick_first_fit, pick_list, pick_random,
                                        place_job)
from optkit.result import Status
from optkit.solve import solve
from tests.test_rar_ddls_sjf_bco import tiny_instance, xi2_instance


def _plan_with(cluster: ClusterIndex, U: list[float], rng: np.random.Generator | None = None) -> Plan:
    plan = Plan.empty(cluster, rng)
    plan.U[:] = U
    plan.free[:] = U
    return plan


def test_first_fit_takes_the_first_eligible_gpus_server_to_server() -> None:
    inst = xi2_instance([2, 3], [3])
    c = ClusterIndex.of(inst.servers)  # s0: 0, 1   s1: 2, 3, 4
    plan = _plan_with(c, [0, 5, 0, 0, 0])
    # theta = 10: fastest estimate (one server of 3) 6 -> GPU 1 (5 + 6) ineligible. First fit
    # {0, 2, 3}: two servers, rho-hat 10, all within 10. Least-U rules would pick the same U's
    # but FF takes them in flat order, and never looks at load.
    assert pick_first_fit(plan, 0, 3, np.array([0, 2, 3, 4])).tolist() == [0, 2, 3]
    assert place_job(plan, Estimates(inst), 0, 10, pick_first_fit)
    assert plan.gpus[0].tolist() == [0, 2, 3] and plan.U.tolist() == [10, 5, 10, 10, 0]
    assert plan.finish[0] == 10
    assert pick_first_fit(plan, 0, 3, np.array([1, 4])) is None


def test_list_scheduling_least_u_ties_by_least_loaded_server() -> None:
    inst = xi2_instance([2, 3], [2])
    c = ClusterIndex.of(inst.servers)
    plan = _plan_with(c, [1, 4, 1, 0, 0])
    # Least U: GPUs 3, 4 (U = 0) -> [3, 4]. Then with G = 3 the tie at U = 1 between GPU 0
    # (server 0, mean 2.5) and GPU 2 (server 1, mean 1/3) goes to the least-loaded server: GPU 2.
    assert pick_list(plan, 0, 2, np.arange(5)).tolist() == [3, 4]
    assert pick_list(plan, 0, 3, np.arange(5)).tolist() == [3, 4, 2]
    # Equal server means: server index decides (GPU 0 before GPU 2).
    plan2 = _plan_with(c, [1, 1, 1, 0.5, 1.5])
    assert pick_list(plan2, 0, 1, np.array([0, 2])).tolist() == [0]
    assert place_job(plan, Estimates(inst), 0, 20, pick_list)
    assert plan.gpus[0].tolist() == [3, 4] and plan.U.tolist() == [1, 4, 1, 6, 6] and plan.finish[0] == 6


def test_random_pick_is_seeded_and_eligible_only() -> None:
    c = ClusterIndex.of([4, 4, 4])
    picks = set()
    for seed in range(10):
        a = pick_random(_plan_with(c, [0] * 12, np.random.default_rng(seed)), 0, 3, np.arange(0, 12, 2))
        b = pick_random(_plan_with(c, [0] * 12, np.random.default_rng(seed)), 0, 3, np.arange(0, 12, 2))
        assert a.tolist() == b.tolist() and set(a.tolist()) <= set(range(0, 12, 2)) and len(set(a)) == 3
        # Server to server: the GPUs taken fill one server before the next (2 eligible per server).
        servers = c.server_of[a].tolist()
        assert servers[0] == servers[1]
        picks.add(tuple(a.tolist()))
    assert len(picks) > 1
    # The server order is random too: a 1-GPU job on an empty cluster lands on every server.
    first = {int(c.server_of[pick_random(_plan_with(c, [0] * 12, np.random.default_rng(s)), 0, 1, np.arange(12))[0]])
             for s in range(30)}
    assert first == {0, 1, 2}


def _literal_bisection(inst: RarInstance, rule) -> tuple[int | None, float]:
    """Sec. 5's search: the smallest theta in [1, T] whose plan places every job (by bisection)."""
    T = inst.horizon
    m, best, left, right = float("inf"), None, 1, T
    while left <= right:
        theta = (left + right) // 2
        p = plan_baseline(inst, theta, rule)
        if p is not None:
            m, best, right = p.makespan, theta, theta - 1
        else:
            left = theta + 1
    return best, m


@pytest.mark.parametrize("seed", range(6))
def test_ff_ls_bisection_lemma2_and_schedule(seed: int) -> None:
    inst = RarInstance.from_dict(tiny_instance(300 + seed, horizon=3000))
    for fn, rule in ((ff, pick_first_fit), (ls, pick_list)):
        y, res = fn(inst)
        assert (res.theta, res.plan_makespan) == _literal_bisection(inst, rule)
        assert res.max_busy <= res.theta + 1e-9
        assert plan_baseline(inst, res.theta - 1, rule) is None  # the smallest theta with a complete plan
        assert res.order == list(range(len(inst.jobs)))  # instance order, no SJF sort
        assert res.kappa is None and res.bisection_steps >= 1
        ev = evaluate(inst, schedule_dict(inst, y, res.outcome))
        assert ev.feasible, ev.violations
        start, comp = res.outcome.start, res.outcome.completion
        last_on: dict[tuple[int, int], int] = {}
        for j in res.order:
            preds = {last_on[g] for g in res.gpus[j] if g in last_on}
            assert start[j] == max((comp[p] for p in preds), default=0)
            for g in res.gpus[j]:
                last_on[g] = j


@pytest.mark.parametrize("seed", range(4))
def test_rand_seeded_theta_T(seed: int) -> None:
    inst = RarInstance.from_dict(tiny_instance(400 + seed, horizon=3000))
    y1, r1 = rand(inst, seed=7)
    y2, r2 = rand(inst, seed=7)
    assert np.array_equal(y1, y2) and r1.gpus == r2.gpus
    assert np.array_equal(r1.outcome.start, r2.outcome.start)
    assert r1.theta == inst.horizon and r1.bisection_steps == 0 and r1.max_busy <= inst.horizon
    assert r1.timed_out is False  # one plan, no search: the clock never stops RAND
    assert evaluate(inst, schedule_dict(inst, y1, r1.outcome)).feasible
    others = {tuple(sorted((j, tuple(g)) for j, gs in rand(inst, seed=s)[1].gpus.items() for g in gs))
              for s in range(8)}
    assert len(others) > 1  # different seeds can differ


@pytest.mark.parametrize("algorithm", ["ff", "ls", "rand"])
@pytest.mark.parametrize("seed", range(3))
def test_run_through_solve(algorithm: str, seed: int) -> None:
    d = tiny_instance(500 + seed, horizon=3000)
    res = solve("rar-ddls", d, algorithm, seed=seed)
    assert res.status == Status.FEASIBLE, res.message
    ev = evaluate(RarInstance.from_dict(d), res.solution)
    assert ev.feasible and res.objective == ev.objectives["makespan"]
    assert res.info["max_busy_slots"] <= res.info["theta_u"]
    if algorithm == "rand":
        again = solve("rar-ddls", d, algorithm, seed=seed)
        assert again.solution == res.solution


def test_short_horizon_extends_the_search_and_flags_the_schedule() -> None:
    d = tiny_instance(2, horizon=2)
    for algorithm in ("ff", "ls", "rand"):
        res = solve("rar-ddls", d, algorithm, seed=0)
        assert res.status == Status.FEASIBLE, res.message
        ev = evaluate(RarInstance.from_dict(d), res.solution)
        assert ev.feasible and ev.metrics["past_horizon"] and res.info["past_horizon"]
        assert res.info["search_horizon_slots"] > 2
