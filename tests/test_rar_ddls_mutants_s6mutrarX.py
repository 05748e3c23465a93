"""rar-ddls exact.py: the helpers where the seed-1 mutation draw's survivors lived, pinned whole
(issue 36 item 5): ``_finish``'s full Result, the time-limit arithmetic, ``_sub_instance``,
``_prepare``'s info, the phi monotonicity check, the MILP as built (variable sets, bounds,
sense) and its unit conversions at a slot of 2 s, brute force's limits and the greedy packing
pass's deadline boundary.

Expected values come from hand computations on :func:`tests.rar_ddls_cases.pair_case` (its
docstring: each job alone 4 iterations per slot, 30 iterations -> 8 slots; both at once 3 per
slot -> 10 slots, the optimum) confirmed by brute force, never from the function under test.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

from optkit.anytime import recording
from optkit.deadline import DeadlineReached, within
from optkit.errors import InputError
from optkit.formulations.rar_ddls import exact
from optkit.formulations.rar_ddls.model import RarInstance, rate_table
from optkit.result import Status
from tests.rar_ddls_cases import pair_case


def _pair(slot: float = 1.0) -> RarInstance:
    d = pair_case(0.2)
    d["slot_seconds"] = slot
    return RarInstance.from_dict(d)


# --------------------------------------------------------------------------------------------- _finish
def test_finish_returns_the_whole_result_of_a_feasible_schedule() -> None:
    inst = _pair()
    y = np.array([[3, 1, 0], [0, 2, 2]])  # both split, sharing server 1: 3 iterations/slot -> 10 slots
    r = exact._finish(inst, Status.FEASIBLE, y, [0, 0], 5.0, {"k": 1}, "msg")
    assert (r.status, r.objective, r.bound, r.gap) == (Status.FEASIBLE, 10.0, 5.0, 0.5)  # (10 - 5) / 10
    assert (r.problem, r.objective_name, r.message, r.info) == ("rar-ddls", "makespan", "msg", {"k": 1})
    assert [(e["start"], e["gpus_per_server"], e["completion"]) for e in r.solution["jobs"]] == [
        (0, [3, 1, 0], 10), (0, [0, 2, 2], 10)]
    assert r.metrics["makespan_slots"] == 10 and r.metrics["max_contention"] == 2
    # optimal: the bound is capped at the value (a bound above it would be a solver's rounding)
    r = exact._finish(inst, Status.OPTIMAL, y, [0, 0], 12.0, {}, "m")
    assert (r.objective, r.bound, r.gap) == (10.0, 10.0, 0.0)
    r = exact._finish(inst, Status.TIME_LIMIT, y, [0, 0], None, {}, "m")
    assert (r.objective, r.bound, r.gap) == (10.0, None, None)


def test_finish_without_schedule_and_with_a_rejected_one() -> None:
    inst = _pair()
    r = exact._finish(inst, Status.INFEASIBLE, None, None, 3.0, {"k": 2}, "none")
    assert (r.status, r.objective, r.bound, r.solution, r.problem, r.objective_name, r.message, r.info) == (
        Status.INFEASIBLE, None, 3.0, None, "rar-ddls", "makespan", "none", {"k": 2})
    y = np.array([[3, 1, 0], [3, 1, 0]])  # 6 GPUs on the 3-GPU server 0
    r = exact._finish(inst, Status.OPTIMAL, y, [0, 0], 5.0, {"k": 3}, "ignored")
    assert (r.status, r.objective, r.bound, r.problem, r.objective_name, r.info) == (
        Status.ERROR, None, None, "rar-ddls", "makespan", {"k": 3})
    assert r.message == "server 0 holds 6 GPUs in slot 0 (capacity O_s = 3)"
    assert [e["gpus_per_server"] for e in r.solution["jobs"]] == [[3, 1, 0], [3, 1, 0]]


# --------------------------------------------------------------------------------------------- time-limit arithmetic
def test_warm_start_gets_half_the_time_limit() -> None:
    assert exact._precompute_deadline(10.0, 4.0) == 12.0
    assert exact._precompute_deadline(10.0, None) is None


@pytest.mark.parametrize("limit, left", [(5.0, 2.0), (3.0, 1e-3), (3.0005, 1e-3), (None, None)])
def test_time_left_is_the_rest_of_the_limit_at_least_1_ms(limit, left, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exact.time, "perf_counter", lambda: 13.0)  # 3 s after t0 = 10
    assert exact._time_left(10.0, limit) == left


# --------------------------------------------------------------------------------------------- _sub_instance
def test_sub_instance_keeps_everything_but_the_other_jobs() -> None:
    d = pair_case(0.2)
    d["jobs"].append(dict(d["jobs"][0], id="c"))
    d["busy_until"] = [[2], [], [1, 3]]
    inst = RarInstance.from_dict(d)
    sub = exact._sub_instance(inst, [2, 0])
    assert [j.id for j in sub.jobs] == ["c", "a"]
    assert (sub.servers, sub.network, sub.slot_seconds, sub.busy_until, sub.horizon) == (
        inst.servers, inst.network, inst.slot_seconds, inst.busy_until, 10**9)


# --------------------------------------------------------------------------------------------- _prepare
def test_prepare_info_counts_options_and_records_the_heuristic() -> None:
    inst = _pair()
    # options of a 4-GPU job on three 3-GPU servers: y with sum 4, 0 <= y_s <= 3: 15 vectors
    # minus the three (4,0,0)-like ones = 12 per job (every one progresses)
    *_, opts, greedy, H, rmin, info = exact._prepare(inst, "makespan", True)
    assert [len(lst) for lst in opts] == [12, 12] and rmin == [8, 8]
    assert info["options"] == 24
    assert info["upper_bound_heuristic_slots"] == 10 and info["upper_bound_heuristic"] in (
        "sjf-bco", "sjf-bco(accumulated,least-loaded)", "ls", "ff")
    assert info["upper_bound_greedy_slots"] == 10 and H == 10 == info["horizon_slots"]
    *_, info = exact._prepare(inst, "makespan", False)
    assert set(info) == {"upper_bound_greedy_slots", "options", "horizon_slots"} and info["horizon_slots"] == 20


def test_heuristic_runs_stop_at_the_solve_deadline_naming_the_stage() -> None:
    ticks = iter([0.0] + [5.0] * 100)
    with pytest.raises(DeadlineReached) as err:
        with within(1.0, clock=lambda: next(ticks)):
            exact._heuristic_incumbent(_pair())
    assert err.value.stage == "running the heuristics for a warm start"


# --------------------------------------------------------------------------------------------- _phi_tables
@pytest.mark.parametrize("rise", [1, 2])
def test_phi_tables_refuse_a_rate_that_rises_with_contention(rise: int, monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _pair()
    monkeypatch.setattr(exact, "rate_table", lambda i, job, n: np.array([4, 4, 4 + rise]) if n == 2 else
                        rate_table(i, job, n))
    with pytest.raises(ValueError, match=r"^phi of job a on 2 servers increases with contention$"):
        exact._phi_tables(inst)
    monkeypatch.setattr(exact, "rate_table", lambda i, job, n: np.array([4, 4, 4]))
    assert all(t[n].tolist() == [4, 4, 4] for t in exact._phi_tables(inst) for n in (1, 2, 3))


# --------------------------------------------------------------------------------------------- the MILP
def test_milp_as_built_and_its_units_at_a_two_second_slot(monkeypatch: pytest.MonkeyPatch) -> None:
    import optkit.solvers.milp as milp

    inst = _pair(2.0)  # per 2-s slot: 8 iterations alone (30 -> 4 slots), 6 when both share a server (5 slots)
    value, _ = exact.brute_force(inst)
    assert value == 10.0  # 5 slots of 2 s (brute force)
    real, models = milp.solve_pyomo_model, []
    monkeypatch.setattr(milp, "solve_pyomo_model", lambda m, **kw: models.append(m) or real(m, **kw))
    with recording() as pts:
        r = exact.run_highs(inst, time_limit=30)
    assert (r.status, r.objective, r.bound, r.gap) == (Status.OPTIMAL, 10.0, 10.0, 0.0)
    assert r.info["model_objective_s"] == 10.0
    assert pts and pts[-1][1] == 10.0 and all(b is None or b <= 10.0 for _, _, b in pts)
    assert all(inc is None or inc == 10.0 for _, inc, _ in pts)  # the greedy warm start is already optimal
    m = models[0]
    H, rmin = 5, 4  # horizon = the heuristics' 5 slots; each job alone needs 4 slots
    assert sorted(m.x.keys()) == [(j, t) for j in range(2) for t in range(H - rmin + 1)]
    assert sorted(m.e.keys()) == [(j, t) for j in range(2) for t in range(rmin, H + 1)]
    assert all(m.cnt[k].lb == 0 and m.cnt[k].ub is None for k in m.cnt)
    # the rate drops (8 -> 6 iterations per slot) at contention level 2 only: h for p = 2
    assert sorted(m.h.keys()) == [(s, t, 2) for s in range(3) for t in range(H)]
    assert m.obj.sense == 1  # pyomo.minimize
    assert (m.Z.lb, m.Z.ub) == (4, 5)  # lower bound 8 s = 4 slots; horizon 5 slots


# --------------------------------------------------------------------------------------------- brute force
def _one_gpu_jobs(horizon: int) -> RarInstance:
    job = {"gpus": 1, "iterations": 1, "grad_bytes": 0.0, "batch": 1, "fwd_time_per_sample": 0.0, "bwd_time": 0.1}
    return RarInstance.from_dict({"problem": "rar-ddls", "servers": [1], "network": pair_case()["network"],
                                  "horizon": horizon, "jobs": [dict(job, id=f"j{k}") for k in range(4)]})


def test_brute_force_limits_name_the_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    # four 1-slot jobs, 1001 starts each: 1001^4 = 1.004e12 > 10^12 combinations (< 11^12)
    with pytest.raises(InputError) as err:
        exact.brute_force(_one_gpu_jobs(1001))
    assert (err.value.field, err.value.message) == ("instance", "is too large for brute force; use cpsat or highs")
    monkeypatch.setattr(exact, "BRUTE_FORCE_MAX_NODES", 5)
    with pytest.raises(InputError) as err:
        exact.brute_force(_one_gpu_jobs(4))
    assert (err.value.field, err.value.message) == (
        "instance", "is too large for brute force: more than 5 partial (option, start) assignments; use cpsat or highs")


# --------------------------------------------------------------------------------------------- greedy
def test_greedy_packing_runs_up_to_its_deadline_inclusive(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _pair()
    opts = exact.placement_options(inst)
    monkeypatch.setattr(exact.time, "perf_counter", lambda: 100.0)
    assert exact.greedy_schedule(inst, opts, deadline=100.0)[2] == 10  # packing: both at once, 10 slots
    assert exact.greedy_schedule(inst, opts, deadline=99.0)[2] == 16  # sequential: 8 + 8 slots


class _Built(Exception):
    """Stops run_highs once its model is built (the test inspects the model, not a solve)."""


@pytest.mark.parametrize("jobs, deg, xi1, levels", [
    (3, 0.5, 1.0, [2]),  # phi on 2-3 servers [4, 4, 2, 2]: one drop, at p = 2 (flat from there on)
    (2, 3.0, 1.0, [2]),  # phi on 2-3 servers [4, 4, 1]
])
def test_milp_level_indicators_are_the_contention_levels_where_a_rate_drops(
        jobs: int, deg: float, xi1: float, levels: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    import optkit.solvers.milp as milp

    d = pair_case(deg)
    d["network"]["xi1"] = xi1
    d["jobs"] += [dict(d["jobs"][0], id=f"x{k}") for k in range(jobs - 2)]
    inst = RarInstance.from_dict(d)
    # a second route to the levels: the rate tables of eq. (9) read directly
    drops = {p for job in inst.jobs for n in (2, 3) for p in range(2, jobs + 1)
             if rate_table(inst, job, n)[p - 1] > rate_table(inst, job, n)[p]}
    assert sorted(drops) == levels
    models = []

    def spy(m, **kw):
        models.append(m)
        raise _Built

    monkeypatch.setattr(milp, "solve_pyomo_model", spy)
    with pytest.raises(_Built):
        exact.run_highs(inst, tighten=False)
    m = models[0]
    H = inst.horizon  # tighten=False: the instance's horizon
    # every 4-GPU job splits over the 3-GPU servers, so up to min(3, jobs) split jobs share a server
    assert sorted(m.h.keys()) == [(s, t, p) for s in range(3) for t in range(H) for p in levels]


@pytest.mark.parametrize("seed", [0, 24])
def test_greedy_keeps_the_sequential_schedule_when_packing_only_ties(seed: int) -> None:
    from tests.rar_ddls_cases import tiny_case

    inst = RarInstance.from_dict(tiny_case(seed))
    opts = exact.placement_options(inst)
    # the sequential schedule (docstring): instance order, each job alone on its fastest option
    # (fewest slots, then most GPUs on one server), one after another
    best = [min(lst, key=lambda o: (o.solo, -max(o.y))) for lst in opts]
    seq_starts = [sum(o.solo for o in best[:k]) for k in range(len(best))]
    seq_mk = sum(o.solo for o in best)
    starts, y, mk = exact.greedy_schedule(inst, opts)
    assert mk == seq_mk  # these two instances: packing finds no shorter schedule (a tie)
    assert (starts, y.tolist()) == (seq_starts, [list(o.y) for o in best])


def test_brute_force_node_budget_is_inclusive(monkeypatch: pytest.MonkeyPatch) -> None:
    # one 1-slot job on one GPU, horizon 1: the search visits the root and one leaf (start 0), 2 nodes
    job = {"id": "j", "gpus": 1, "iterations": 1, "grad_bytes": 0.0, "batch": 1, "fwd_time_per_sample": 0.0,
           "bwd_time": 0.1}
    inst = RarInstance.from_dict({"problem": "rar-ddls", "servers": [1], "network": pair_case()["network"],
                                  "horizon": 1, "slot_seconds": 2.0, "jobs": [job]})
    monkeypatch.setattr(exact, "BRUTE_FORCE_MAX_NODES", 2)
    value, sol = exact.brute_force(inst)
    assert value == 2.0 and sol["jobs"][0]["start"] == 0  # one slot of 2 s
    monkeypatch.setattr(exact, "BRUTE_FORCE_MAX_NODES", 1)
    with pytest.raises(InputError, match="more than 1 partial"):
        exact.brute_force(inst)


# --------------------------------------------------------------------------------------------- small model helpers
def test_vectors_enumerate_every_placement_in_decreasing_order() -> None:
    # sum 4 over caps (3, 3, 3): C(6, 2) = 15 compositions minus the three with a 4 = 12, by hand
    assert list(exact._vectors(4, [3, 3, 3])) == [
        (3, 1, 0), (3, 0, 1), (2, 2, 0), (2, 1, 1), (2, 0, 2), (1, 3, 0), (1, 2, 1), (1, 1, 2), (1, 0, 3),
        (0, 3, 1), (0, 2, 2), (0, 1, 3)]
    assert list(exact._vectors(2, [2, 0])) == [(2, 0)]
    assert list(exact._vectors(3, [1, 1])) == []
    assert list(exact._vectors(0, [])) == [()] and list(exact._vectors(1, [])) == []


@pytest.mark.parametrize("n_jobs, base, limit, weights", [
    (3, 4, 10**4, [16, 4, 1]),  # every job fits under the limit
    (5, 10, 1000, [1000, 100, 10, 1]),  # 10^3 <= 1000: four jobs
    (5, 10, 999, [100, 10, 1]),  # 10^3 > 999: three
    (1, 10, 5, [1]),
])
def test_lex_weights(n_jobs: int, base: int, limit: int, weights: list[int]) -> None:
    assert exact._lex_weights(n_jobs, base, limit) == weights


def _mixed(gpus: tuple[int, ...] = (4, 4, 1)) -> RarInstance:
    d = pair_case(0.2)
    d["servers"] = [3, 2, 3, 3]
    d["busy_until"] = [[], [], [2], []]  # one GPU of server 2 busy in slots 0 and 1
    d["jobs"] = [dict(d["jobs"][0], id=f"j{k}", gpus=g) for k, g in enumerate(gpus)]
    return RarInstance.from_dict(d)


def test_server_classes_pairs_and_busy_counts() -> None:
    inst = _mixed()
    # keys (O_s, busy slots): (2, 0 0) -> [1]; (3, 0 0 0) -> [0, 3]; (3, 0 0 2) -> [2]
    assert exact._server_classes(inst) == [[1], [0, 3], [2]]
    assert exact._symmetric_pairs(inst) == [(0, 3)]
    assert [exact._busy_count(inst, 2, t) for t in (0, 1, 2)] == [1, 1, 0]
    assert [exact._busy_count(inst, None, t) for t in (0, 1, 2)] == [1, 1, 0]
    assert exact._busy_count(inst, 0, 0) == 0


@pytest.mark.parametrize("gpus, contention", [
    ((4, 4, 1), [2, 2, 2, 2]),  # the 1-GPU job never splits
    ((4, 4, 3), [3, 2, 3, 3]),  # three may split; server 1 holds 2 GPUs
])
def test_max_contention_counts_the_jobs_that_can_split_on_a_server(gpus, contention) -> None:
    inst = _mixed(gpus)
    assert exact._max_contention(inst, exact.placement_options(inst)) == contention


def test_identical_job_groups_ignore_the_id_only() -> None:
    d = pair_case(0.2)
    d["jobs"] = [dict(d["jobs"][0], id=f"j{k}", gpus=g) for k, g in enumerate((4, 1, 4, 4, 1, 2))]
    for field in ("iterations", "grad_bytes", "batch", "fwd_time_per_sample", "bwd_time"):
        d["jobs"].append(dict(d["jobs"][0], id=f"d-{field}"))
        d["jobs"][-1][field] = d["jobs"][0][field] * 2  # differs from j0 in this field only
    inst = RarInstance.from_dict(d)
    assert exact.identical_job_groups(inst) == [[0, 2, 3], [1, 4]]


def test_horizon_and_objective_check() -> None:
    inst = _pair()  # horizon 20
    assert (exact._horizon(inst, 10, True), exact._horizon(inst, 25, True), exact._horizon(inst, 10, False)) == (
        10, 20, 20)
    assert exact._check_objective("makespan") is None
    with pytest.raises(InputError) as err:
        exact._check_objective("mean_jct")
    assert (err.value.field, err.value.message) == (
        "objective", "the exact rar-ddls solvers minimise 'makespan' only, got 'mean_jct'")


def test_infeasible_answer_depends_on_the_greedy_schedule_fitting() -> None:
    inst = _pair()
    r = exact._infeasible(inst, 10, 10, {"k": 1}, "highs")
    assert (r.status, r.objective, r.solution, r.problem, r.objective_name, r.info) == (
        Status.ERROR, None, None, "rar-ddls", "makespan", {"k": 1})
    assert r.message == ("highs reported the model infeasible, but the greedy schedule (makespan 10 slots) "
                         "satisfies it")
    r = exact._infeasible(inst, 11, 10, {"k": 2}, "cp-sat")
    assert (r.status, r.objective, r.bound, r.solution, r.problem, r.objective_name, r.info) == (
        Status.INFEASIBLE, None, None, None, "rar-ddls", "makespan", {"k": 2})
    assert r.message == "no schedule completes within the horizon of 10 slots (cp-sat: infeasible)"


@pytest.mark.parametrize("ub", [20, 21])  # the instance's horizon is 20 slots
def test_greedy_or_nothing_at_the_horizon(ub: int) -> None:
    inst = _pair()
    out = types.SimpleNamespace(status=Status.TIME_LIMIT, solver_status="time limit")
    y = np.array([[3, 1, 0], [0, 2, 2]])  # both at once: 10 slots (the stated ub only gates)
    r = exact._greedy_or_nothing(inst, out, ([0, 0], y, ub), 8.0, {"k": 1})
    assert (r.status, r.bound, r.message, r.problem) == (Status.TIME_LIMIT, 8.0, "time limit", "rar-ddls")
    if ub <= 20:
        assert (r.objective, r.gap, r.info) == (10.0, 0.2, {"k": 1, "incumbent": "greedy warm start"})
    else:
        assert (r.objective, r.solution, r.info) == (None, None, {"k": 1})


@pytest.mark.parametrize("case", ["pair", "contention12"])
def test_heuristic_incumbent_until_an_instant(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.rar_ddls_cases import contention_case

    # contention_case(12): each of three runs improves on the one before (the best is the last found)
    inst = _pair() if case == "pair" else RarInstance.from_dict(contention_case(12))
    free = exact.heuristic_incumbent(inst)
    if case == "pair":
        assert free[2] == 10  # both at once, 10 slots (the optimum, brute force)
    monkeypatch.setattr(exact.time, "perf_counter", lambda: 50.0)
    assert exact.heuristic_incumbent(inst, until=50.0) is None  # no time left: nothing run
    got = exact.heuristic_incumbent(inst, until=50.5)  # a frozen clock never reaches it: all four run
    assert (got[0], got[1].tolist(), got[2], got[3]) == (free[0], free[1].tolist(), free[2], free[3])
