"""rar-ddls readings (formulations/rar_ddls/readings.py): declared, wired as keywords, and each
option pinned by a hand-worked case; the horizon extension and its flag.

Hand cases use jobs with no gradient (tau = xi2·servers + bwd = 0.05·n + 0.05 s): 60 iterations
take 6 slots on one server (phi = 10), 10 slots on two (phi = 6).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

from optkit.formulations.rar_ddls import FORMULATION
from optkit.formulations.rar_ddls.baselines import ff, ls, plan_baseline, rand, run_ff, run_ls, run_rand
from optkit.formulations.rar_ddls.model import RarInstance, evaluate, schedule_dict
from optkit.formulations.rar_ddls.plan import (ClusterIndex, Estimates, NoPlanError, Plan, pick_first_fit,
                                        pick_least_busy, pick_packing, place_job, run_planner)
from optkit.formulations.rar_ddls.readings import DEFAULTS, READINGS
from optkit.formulations.rar_ddls.sjf_bco import run_sjf_bco, sjf_bco
from optkit.errors import InputError
from optkit.readings import accepted_params
from optkit.result import Status
from optkit.solve import solve

NET = {"inter_bandwidth": 1.25e9, "intra_bandwidth": 3.0e11, "compute_speed": 5.0e10,
       "xi1": 1.0, "xi2": 0.05, "degradation": 0.2}


def hand(servers: list[int], gpus: list[int], *, horizon: int = 100, iterations: int = 60) -> dict[str, Any]:
    jobs = [{"id": f"j{i}", "gpus": g, "iterations": iterations, "grad_bytes": 0.0, "batch": 1,
             "fwd_time_per_sample": 0.0, "bwd_time": 0.05} for i, g in enumerate(gpus)]
    return {"problem": "rar-ddls", "servers": servers, "network": dict(NET), "horizon": horizon, "jobs": jobs}


PLAIN = {"sjf-bco": (sjf_bco, run_sjf_bco), "ff": (ff, run_ff), "ls": (ls, run_ls), "rand": (rand, run_rand)}


# ----------------------------------------------------------------------------- declared and wired
def test_the_four_issue_readings_are_declared_with_both_options() -> None:
    names = {r.name: r for r in FORMULATION.readings}
    assert set(names["available"].options) == {"accumulated", "idle-now"}
    assert set(names["kappa_select"].options) == {"estimate", "simulated"}
    assert set(names["theta_search"].options) == {"bisection", "minimum-feasible"}
    assert set(names["fa_ffp"].options) == {"least-loaded", "packing"}
    assert set(names["kappa_tie"].options) == {"first", "last"}
    assert FORMULATION.readings is READINGS


@pytest.mark.parametrize("algorithm", sorted(PLAIN))
def test_every_reading_is_an_explicit_keyword_with_the_reading_default(algorithm: str) -> None:
    taken = [r for r in READINGS if r.takes(algorithm)]
    assert taken, algorithm
    for fn in PLAIN[algorithm]:
        params = inspect.signature(fn).parameters
        for r in taken:
            assert r.name in params, (fn.__name__, r.name)
            assert params[r.name].kind is inspect.Parameter.KEYWORD_ONLY
            assert params[r.name].default == r.default, (fn.__name__, r.name)
            assert r.name in (fn.__doc__ or ""), (fn.__name__, r.name)
    accepted = accepted_params(FORMULATION, algorithm)
    assert {r.name for r in taken} <= set(accepted)


def test_bad_reading_value_is_an_input_error_naming_it() -> None:
    d = hand([4], [1, 2])
    with pytest.raises(InputError, match="available"):
        solve("rar-ddls", d, "ff", params={"available": "now"})
    with pytest.raises(InputError, match="fa_ffp"):
        sjf_bco(d, fa_ffp="best-fit")
    with pytest.raises(InputError, match="kappa_tie"):
        sjf_bco(d, kappa_tie="middle")
    with pytest.raises(InputError, match="theta_search"):
        solve("rar-ddls", d, "rand", params={"theta_search": "bisection"})  # RAND has no search


# (algorithm, reading, its non-default value, instance): found by search over tiny_instance(0..11) and
# contention_case(0..29, jobs=4) as the first case where the value changes the algorithm's schedule.
CHANGES = [
    ("sjf-bco", "available", "accumulated", "tiny", 2), ("sjf-bco", "kappa_select", "estimate", "contention", 12),
    ("sjf-bco", "theta_search", "bisection", "tiny", 2), ("sjf-bco", "fa_ffp", "least-loaded", "tiny", 8),
    ("sjf-bco", "kappa_tie", "last", "tiny", 0), ("sjf-bco", "rho_hat", "fastest", "tiny", 2),
    ("sjf-bco", "u", 2.0, "contention", 11),
    ("ff", "available", "accumulated", "tiny", 0), ("ff", "theta_search", "bisection", "tiny", 0),
    ("ff", "rho_hat", "fastest", "tiny", 0), ("ff", "u", 2.0, "contention", 9),
    ("ls", "available", "accumulated", "tiny", 2), ("ls", "theta_search", "bisection", "tiny", 1),
    ("ls", "rho_hat", "fastest", "tiny", 1), ("ls", "u", 2.0, "tiny", 6),
    ("rand", "available", "accumulated", "tiny", 0), ("rand", "rho_hat", "fastest", "tiny", 7),
    ("rand", "u", 2.0, "tiny-h5", 0),
]


@pytest.mark.parametrize("algorithm,name,value,kind,seed", CHANGES,
                         ids=[f"{a}-{n}-{k}{s}" for a, n, _, k, s in CHANGES])
def test_every_reading_reaches_its_algorithm_through_solve(algorithm: str, name: str, value: Any, kind: str,
                                                           seed: int) -> None:
    """A reading passed to ``solve`` reaches the planner: the schedule is the plain function's
    with that value, and differs from the default's on this instance (so a table entry that
    dropped the keyword would answer the default's schedule)."""
    from tests.rar_ddls_cases import contention_case
    from tests.test_rar_ddls_sjf_bco import tiny_instance

    d = (contention_case(seed, jobs=4) if kind == "contention"
         else tiny_instance(seed, horizon=5) if kind == "tiny-h5" else tiny_instance(seed))
    inst = RarInstance.from_dict(d)
    got = solve("rar-ddls", d, algorithm, seed=0, params={name: value})
    default = solve("rar-ddls", d, algorithm, seed=0)
    y, res = PLAIN[algorithm][0](inst, **{name: value}, **({"seed": 0} if algorithm == "rand" else {}))
    assert got.solution == schedule_dict(inst, y, res.outcome)
    assert got.solution != default.solution


# ----------------------------------------------------------------------------- available
def test_available_idle_now_uses_the_idle_gpu_accumulated_queues_behind_the_busy_one() -> None:
    """Server of 2 GPUs, two 1-GPU jobs of 6 slots, FF under theta = 100.

    accumulated: j0 -> GPU 0 (U = 6); j1: the first eligible GPU is GPU 0 again (6 + 6 <= 100), so
    it queues behind j0: planned 6..12, plan makespan 12, schedule makespan 12.
    idle-now: at now = 0 GPU 0 is busy, GPU 1 idle: j1 -> GPU 1, planned 0..6, makespan 6.
    """
    inst = RarInstance.from_dict(hand([2], [1, 1]))
    acc = plan_baseline(inst, 100, pick_first_fit, available="accumulated")
    idle = plan_baseline(inst, 100, pick_first_fit, available="idle-now")
    assert acc.gpus[1].tolist() == [0] and acc.makespan == 12
    assert idle.gpus[1].tolist() == [1] and idle.makespan == 6
    assert ff(inst, available="accumulated", theta_search="bisection")[1].outcome.completion.tolist() == [6, 12]
    assert ff(inst, available="idle-now", theta_search="bisection")[1].outcome.completion.tolist() == [6, 6]


def test_idle_now_waits_for_the_next_exit_and_fails_only_with_nothing_running() -> None:
    """Server of 2 GPUs: j0 (1 GPU) planned 0..6, then a 2-GPU job. Only GPU 1 is idle at 0, so
    the plan waits for j0's exit (now = 6) and starts the job at 6 on GPUs 0, 1 (T = 12).
    Under theta = 11, GPU 0 (U = 6) is not eligible (6 + 6 > 11): after waiting nothing runs,
    so the job gets no GPUs (Alg. 2 line 10) and the plan is unchanged except for the clock."""
    inst = RarInstance.from_dict(hand([2], [1, 2]))
    est = Estimates(inst)
    plan = Plan.empty(ClusterIndex.of(inst.servers), available="idle-now")
    assert place_job(plan, est, 0, 100, pick_least_busy)
    assert place_job(plan, est, 1, 100, pick_least_busy)
    assert plan.now == 6 and plan.finish[1] == 12 and plan.gpus[1].tolist() == [0, 1] and plan.preds[1] == [0]
    plan = Plan.empty(ClusterIndex.of(inst.servers), available="idle-now")
    assert place_job(plan, est, 0, 11, pick_least_busy)
    assert not place_job(plan, est, 1, 11, pick_least_busy)
    assert plan.order == [0] and plan.U.tolist() == [6, 0]


def test_idle_now_waits_for_the_earliest_exit_not_a_later_one() -> None:
    """Server of 3 GPUs: j0 (1 GPU, 6 slots) on GPU 0, j1 (1 GPU, 100 iterations: 10 slots) on
    GPU 1, then a 2-GPU job of 6 slots. At now = 0 only GPU 2 is idle; the earliest exit is j0's
    at 6, where GPUs 0 and 2 are idle: the job runs 6..12 (waiting for j1's exit at 10 would end
    it at 16)."""
    d = hand([3], [1, 1, 2])
    d["jobs"][1]["iterations"] = 100
    inst = RarInstance.from_dict(d)
    est = Estimates(inst)
    plan = Plan.empty(ClusterIndex.of(inst.servers), available="idle-now")
    for j in range(3):
        assert place_job(plan, est, j, 100, pick_least_busy)
    assert plan.finish == {0: 6.0, 1: 10.0, 2: 12.0} and plan.now == 6.0
    assert plan.gpus[2].tolist() == [0, 2] and plan.preds[2] == [0]


# ----------------------------------------------------------------------------- fa_ffp
def test_fa_ffp_packing_uses_one_server_where_least_loaded_splits() -> None:
    """Servers of 2 and 4 GPUs; GPU 0 (server 0) has U = 6. A 3-GPU job under theta = 100:
    least-loaded takes the three GPUs with U = 0 in flat order, 1 (server 0), 2, 3 (server 1):
    two servers. packing: only server 1 holds 3 eligible GPUs: GPUs 2, 3, 4, one server."""
    c = ClusterIndex.of([2, 4])
    plan = Plan.empty(c)
    plan.U[0] = 6.0
    cand = np.arange(6)
    assert pick_least_busy(plan, 0, 3, cand).tolist() == [1, 2, 3]
    assert pick_packing(plan, 0, 3, cand).tolist() == [2, 3, 4]


def test_fa_ffp_packing_prefers_the_occupied_server_and_fewest_servers() -> None:
    """Servers 4 + 4; GPU 4 (server 1) has U = 6 (occupied). A 2-GPU job: least-loaded takes
    GPUs 0, 1 (server 0, U = 0); packing fills the occupied server 1 first: GPUs 5, 6.
    A 6-GPU job when server 0 has 3 eligible GPUs (0, 1, 2) and server 1 four (4-7): packing takes
    the server with more eligible GPUs first (4 from server 1, by least U: 5, 6, 7, 4), then the 2
    least-U of server 0 (0, 1): two servers, the fewest possible."""
    c = ClusterIndex.of([4, 4])
    plan = Plan.empty(c)
    plan.U[4] = 6.0
    assert pick_least_busy(plan, 0, 2, np.arange(8)).tolist() == [0, 1]
    assert pick_packing(plan, 0, 2, np.arange(8)).tolist() == [5, 6]
    cand = np.array([0, 1, 2, 4, 5, 6, 7])
    assert sorted(pick_packing(plan, 0, 6, cand).tolist()) == [0, 1, 4, 5, 6, 7]
    # any planned load occupies a server under accumulated, however small: GPU 2 (server 1) busy
    # until slot 1 (U = 1): a 1-GPU job goes to server 1's free GPU 3, not to server 0
    busy = Plan.empty(ClusterIndex.of([2, 2], [[], [1]]), available="accumulated")
    assert busy.U.tolist() == [0, 0, 1, 0] and busy.occupied_servers().tolist() == [False, True]
    assert pick_packing(busy, 0, 1, np.arange(4)).tolist() == [3]


# ----------------------------------------------------------------------------- kappa_tie (issue 17 item 3)
@pytest.mark.parametrize("kappa_select", ["estimate", "simulated"])
def test_kappa_tie_first_keeps_the_smallest_kappa_last_the_largest(kappa_select: str) -> None:
    """One server of 4 GPUs; a 1-GPU and a 2-GPU job of 6 slots each (60 iterations, one server).
    kappa = 1 (the 2-GPU job by LBSGF) and kappa = 2 (both by FA-FFP) both put the jobs side by
    side on the one server: makespan 6 for either, a tie at every theta. Line 17's strict
    ``m_theta^kappa < m_theta`` keeps the first: kappa = 1. With ``<=`` (kappa_tie = last) the
    last kappa of the loop 1..max G_j = 2 wins. Editing ``<`` into ``<=`` in the ``first``
    branch makes the first assertion fail."""
    d = hand([4], [1, 2])
    _, first = sjf_bco(d, kappa_select=kappa_select)
    _, last = sjf_bco(d, kappa_select=kappa_select, kappa_tie="last")
    assert first.kappa == 1 and last.kappa == 2
    assert first.outcome.completion.max() == last.outcome.completion.max() == 6
    # Through the engine the default is the paper's strict '<'.
    assert solve("rar-ddls", d, "sjf-bco").info["kappa"] == 1


def test_kappa_tie_last_reports_the_largest_kappa_of_the_winning_class() -> None:
    """Sizes 1 and 4 on one server of 8: kappa classes {1} and {4} (kappa 2, 3 plan as 1).
    Both tie (every job alone on the one server, 6 slots), so ``last`` reports kappa 4 and
    ``first`` kappa 1; a fixed kappa 3 gives kappa 1's plan."""
    d = hand([8], [1, 4])
    assert sjf_bco(d, kappa_tie="last")[1].kappa == 4
    assert sjf_bco(d)[1].kappa == 1


# ----------------------------------------------------------------------------- theta_search, kappa_select, rho_hat
def test_theta_search_minimum_feasible_gives_the_smallest_complete_theta() -> None:
    """Two 1-GPU jobs of 6 slots on one server of 2 GPUs, T = 100. Any theta >= 6 places both
    (side by side under idle-now): minimum-feasible converges on theta = 6. The literal
    bisection accepts the first midpoint, 50 (makespan 6 < T), and no smaller theta beats 6."""
    d = hand([2], [1, 1])
    for fn in (sjf_bco, ff, ls):
        assert fn(d)[1].theta == 6
        assert fn(d, theta_search="bisection")[1].theta == 50


def test_kappa_select_simulated_scores_the_contention_model() -> None:
    inst = RarInstance.from_dict(hand([2, 2], [2, 2, 1]))
    y, res = sjf_bco(inst)
    assert res.outcome.completion.max() == evaluate(inst, {"jobs": [
        {"id": j.id, "start": int(res.outcome.start[k]), "gpus_per_server": [int(v) for v in y[k]]}
        for k, j in enumerate(inst.jobs)]}).objectives["makespan"]


def test_rho_hat_fastest_is_one_number_per_job() -> None:
    """A 2-GPU job on servers 2 + 3: placement reading 6 slots on one server, 10 on two;
    fastest reading 6 on either."""
    inst = RarInstance.from_dict(hand([2, 3], [2]))
    assert Estimates(inst).w[0, 1:3].tolist() == [6.0, 10.0]
    assert Estimates(inst, rho_hat="fastest").w[0, 1:3].tolist() == [6.0, 6.0]


# ----------------------------------------------------------------------------- horizon (issue 13 item 2)
ALGOS = ("sjf-bco", "ff", "ls", "rand")


@pytest.mark.parametrize("available", ["idle-now", "accumulated"])
@pytest.mark.parametrize("algorithm", ALGOS)
def test_horizon_60_optimum_10_every_heuristic_finds_a_schedule_within_T(algorithm: str, available: str) -> None:
    """Servers 2 + 2, two 2-GPU jobs of 100 iterations: 10 slots each on one server (phi = 10),
    run side by side the optimum is 10 (= LB_job). With T = 60 every heuristic returns a feasible
    schedule inside the horizon, not flagged."""
    d = hand([2, 2], [2, 2], horizon=60, iterations=100)
    res = solve("rar-ddls", d, algorithm, seed=1, params={"available": available})
    assert res.status == Status.FEASIBLE, res.message
    ev = evaluate(RarInstance.from_dict(d), res.solution)
    assert ev.feasible and not ev.metrics["past_horizon"] and not res.info["past_horizon"]
    assert res.info["search_horizon_slots"] == 60
    if algorithm != "rand":
        assert ev.objectives["makespan"] == 10


@pytest.mark.parametrize("available", ["idle-now", "accumulated"])
@pytest.mark.parametrize("algorithm", ALGOS)
def test_horizon_shorter_than_the_search_extends_it_and_flags_past_T(algorithm: str, available: str) -> None:
    """The same instance with T = 5 (below the optimum 10): no theta in [1, 5] places a 10-slot
    job, so the search goes on over [1, 10], [1, 20], ...; the schedule is feasible, ends at
    >= 10 > T and is flagged by the result and by evaluate. Never an error."""
    d = hand([2, 2], [2, 2], horizon=5, iterations=100)
    res = solve("rar-ddls", d, algorithm, seed=1, params={"available": available})
    assert res.status == Status.FEASIBLE, res.message
    ev = evaluate(RarInstance.from_dict(d), res.solution)
    assert ev.feasible and ev.metrics["past_horizon"] and res.info["past_horizon"]
    assert res.info["search_horizon_slots"] >= 10 and res.info["theta_u"] >= 10
    if algorithm != "rand":
        assert ev.objectives["makespan"] == 10


def test_a_planner_that_finds_nothing_reports_no_solution() -> None:
    def nothing(instance: Any, **kw: Any) -> Any:
        raise NoPlanError("found nothing")

    res = run_planner(nothing, RarInstance.from_dict(hand([2], [1])), None)
    assert res.status == Status.NO_SOLUTION and res.solution is None
