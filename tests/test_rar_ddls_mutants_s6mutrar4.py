"""rar-ddls functions where the survivors of the seed-3 training draw (at bd7bec7) lived, pinned
whole on tiny hand-made inputs (issue 36 item 5, session 6, second round): the MILP's early
answers (a job longer than the horizon, a lower bound past it) with their info, the greedy
warm start it offers to a deadline, its build stopping at the call's deadline, its symmetry
cut's weights; the canonical schedule's weight limit; brute force's objective check;
``lemma_checks`` at a 2-s slot; ``run_policy``, ``measure_fig4`` and ``measure_fig5`` whole;
the Sec. 7 iteration draw at both ends of its estimate range; every batch size of the sampler;
``plan_theta``'s keywords.

Expected values are worked by hand in the comments (or come by a second route: brute force,
the estimates built directly), never read from the function under test.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from optkit.deadline import DeadlineReached, within
from optkit.errors import InputError
from optkit.formulations.rar_ddls import bounds, claims, exact, generate, model, plan
from optkit.formulations.rar_ddls.model import Job, Network, RarInstance, SimOutcome
from optkit.formulations.rar_ddls.plan import Estimates
from optkit.formulations.rar_ddls.sample import sample
from optkit.formulations.rar_ddls.sjf_bco import plan_theta
from optkit.result import Result, Status
from tests.rar_ddls_cases import pair_case, tiny_case

NET0 = {"inter_bandwidth": 1.25e9, "intra_bandwidth": 3.0e11, "compute_speed": 5.0e10, "xi1": 1.0, "xi2": 0.0,
        "degradation": 0.2}
SWEPT = {"available": "accumulated", "kappa_select": "estimate", "theta_search": "bisection", "fa_ffp": "packing"}


def _hand(servers: list[int], iterations: list[int], *, slot: float = 1.0, horizon: int = 50,
          gpus: list[int] | None = None) -> dict:
    """Jobs with no gradient, xi2 = 0 and Δb = 0.25 s: tau = 0.25 s on any servers (eq. 8),
    phi = floor(slot / 0.25) (eq. 9): 4 iterations per 1-s slot, 8 per 2-s slot."""
    gpus = gpus or [1] * len(iterations)
    jobs = [{"id": f"j{k}", "gpus": g, "iterations": f, "grad_bytes": 0.0, "batch": 2, "fwd_time_per_sample": 0.0,
             "bwd_time": 0.25} for k, (f, g) in enumerate(zip(iterations, gpus))]
    return {"problem": "rar-ddls", "servers": servers, "network": dict(NET0), "slot_seconds": slot,
            "horizon": horizon, "jobs": jobs}


class _Built(Exception):
    """Stops run_highs once its model is built (the test inspects the model, not a solve)."""


# --------------------------------------------------------------------------------------------- MILP
def test_milp_refuses_a_job_longer_than_the_horizon() -> None:
    # j1: 20 iterations at 4 per slot = 5 slots alone, more than the 4-slot horizon
    inst = RarInstance.from_dict(_hand([2], [10, 20], horizon=4))
    r = exact.run_highs(inst)
    assert (r.status, r.objective, r.bound, r.solution, r.problem, r.objective_name) == (
        Status.INFEASIBLE, None, None, None, "rar-ddls", "makespan")
    assert r.message == "no schedule completes within the horizon of 4 slots"
    assert set(r.info) == {"upper_bound_greedy_slots", "options", "upper_bound_heuristic_slots",
                           "upper_bound_heuristic", "horizon_slots", "build_and_solve_s"}
    assert r.info["horizon_slots"] == 4 and r.info["build_and_solve_s"] >= 0.0


def test_milp_refuses_a_lower_bound_past_the_horizon() -> None:
    # two 3-slot jobs (12 iterations) on one 1-GPU server: LB_area = 6 slots > the 4-slot horizon >= 3
    inst = RarInstance.from_dict(_hand([1], [12, 12], horizon=4))
    r = exact.run_highs(inst)
    assert (r.status, r.objective, r.bound, r.solution) == (Status.INFEASIBLE, None, None, None)
    assert r.message == "no schedule completes within the horizon of 4 slots (lower bound 6 slots)"
    assert r.info["lower_bound_slots"] == 6 and r.info["horizon_slots"] == 4 and r.info["build_and_solve_s"] >= 0.0


@pytest.mark.parametrize("servers, iterations, lb", [
    ([2], [10, 20], 5),  # j1 alone 5 slots (LB_job) > the 4-slot horizon
    ([1], [12, 12], 6),  # LB_area = 3 + 3 slots on one GPU > the 4-slot horizon
])
def test_cpsat_refuses_what_cannot_fit_the_horizon(servers, iterations, lb) -> None:
    r = exact.run_cpsat(RarInstance.from_dict(_hand(servers, iterations, horizon=4)))
    assert (r.status, r.objective, r.bound, r.solution, r.problem, r.objective_name) == (
        Status.INFEASIBLE, None, None, None, "rar-ddls", "makespan")
    assert r.message == f"no schedule completes within the horizon of 4 slots (lower bound {lb} slots)"
    assert set(r.info) == {"upper_bound_greedy_slots", "options", "upper_bound_heuristic_slots", "upper_bound_heuristic",
                           "horizon_slots", "lower_bound_slots", "build_and_solve_s"}
    assert (r.info["horizon_slots"], r.info["lower_bound_slots"]) == (4, lb) and r.info["build_and_solve_s"] >= 0.0


def test_milp_cut_while_solving_returns_the_offered_greedy_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    import optkit.solvers.milp as milp

    def cut(m, **kw):
        raise DeadlineReached("solving", 30.0)

    monkeypatch.setattr(milp, "solve_pyomo_model", cut)
    inst = RarInstance.from_dict(pair_case(0.2))
    r = exact.run_highs(inst, time_limit=30)
    # the warm start: both jobs at once, 10 slots (the optimum, brute force in
    # test_rar_ddls_mutants_s6mutrarX); the bound is the lower bound, 8 s (each job alone 8 slots)
    assert (r.status, r.objective, r.bound, r.gap) == (Status.TIME_LIMIT, 10.0, 8.0, 0.2)
    assert r.message == "time limit of 30 s reached while solving"
    assert (r.info["incumbent"], r.info["cut_while"], r.info["horizon_slots"]) == ("greedy warm start", "solving", 10)
    assert [e["start"] for e in r.solution["jobs"]] == [0, 0]


@pytest.mark.parametrize("second, status, objective, message", [
    # the retry without presolve solves it: the optimum, 10 slots (brute force)
    (None, Status.OPTIMAL, 10.0, None),
    # the retry says infeasible too, but the greedy schedule (10 slots) fits the horizon: a fault
    (Status.INFEASIBLE, Status.ERROR, None,
     "highs reported the model infeasible, but the greedy schedule (makespan 10 slots) satisfies it"),
])
def test_milp_retries_an_infeasible_answer_without_presolve(second, status, objective, message,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """HiGHS issue #3090: an "infeasible" from the first solve is retried with presolve off,
    within what is left of the time limit, and the retry's answer is the one kept."""
    import optkit.solvers.milp as milp
    from optkit.solvers import SolverOutcome

    real, calls = milp.solve_pyomo_model, []

    def solve(m, **kw):
        calls.append(kw)
        if len(calls) == 1 or second is not None:
            return SolverOutcome(Status.INFEASIBLE, solver_status="infeasible")
        return real(m, **kw)

    monkeypatch.setattr(milp, "solve_pyomo_model", solve)
    r = exact.run_highs(RarInstance.from_dict(pair_case(0.2)), time_limit=30, seed=3)
    assert (r.status, r.objective) == (status, objective)
    if message is not None:
        assert r.message == message
    assert r.info["presolve_off_retry"] is True and r.info["solver_status"] == (
        "infeasible" if second is not None else r.message)
    assert [kw.get("options") for kw in calls] == [None, {"presolve": "off"}]
    assert [(kw["solver"], kw["seed"]) for kw in calls] == [("highs", 3), ("highs", 3)]
    assert all(25.0 < kw["time_limit"] <= 30.0 for kw in calls)  # the rest of the 30 s
    assert calls[1]["time_limit"] <= calls[0]["time_limit"]


def test_milp_build_stops_at_the_calls_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The call's deadline (a `within` block on its own clock) passes once the model's inputs are
    prepared, while the run's own time limit (real clock) is far: the build stops at its first
    check, with the greedy schedule and the lower bound."""
    now = [0.0]
    real = exact._prepare

    def prepare(*args, **kw):
        out = real(*args, **kw)
        now[0] = 1000.0
        return out

    monkeypatch.setattr(exact, "_prepare", prepare)
    inst = RarInstance.from_dict(pair_case(0.2))
    with within(100.0, clock=lambda: now[0]):
        r = exact.run_highs(inst)
    assert (r.status, r.objective, r.bound) == (Status.TIME_LIMIT, 10.0, 8.0)
    assert r.message == "time limit reached while building the MILP: the greedy schedule and the lower bound"
    assert (r.info["cut_while"], r.info["stopped"]) == ("building the MILP", "time limit reached while building the MILP")


def test_milp_symmetry_cut_weights_the_first_jobs_by_powers_of_the_capacity(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two 9-GPU servers (one class), three 1-GPU jobs: weights B^2, B, 1 with B = 9 + 1 = 10
    (B^(L-1) = 100 <= 10^4), so the cut is 100 z0 + 10 z1 + z2 on server 0 >= the same on server
    1, each job's options being (1, 0) and (0, 1)."""
    import optkit.solvers.milp as milp
    from pyomo.repn import generate_standard_repn

    models = []

    def spy(m, **kw):
        models.append(m)
        raise _Built

    monkeypatch.setattr(milp, "solve_pyomo_model", spy)
    inst = RarInstance.from_dict(_hand([9, 9], [10, 20, 30]))
    opts = exact.placement_options(inst)
    with pytest.raises(_Built):
        exact.run_highs(inst)
    m = models[0]
    assert len(m.c_sym) == 1
    con = m.c_sym[1]
    repn = generate_standard_repn(con.body)
    coef = {v.index(): c for v, c in zip(repn.linear_vars, repn.linear_coefs)}
    sign = 1 if con.lower is not None else -1  # body >= 0 or body <= 0
    want = {(j, k): w * (o.y[0] - o.y[1]) for j, w in enumerate([100, 10, 1]) for k, o in enumerate(opts[j])}
    assert {k: sign * c for k, c in coef.items()} == want


def test_milp_symmetry_default_on() -> None:
    import inspect

    assert inspect.signature(exact.run_highs).parameters["symmetry"].default is True
    assert inspect.signature(exact.run_highs).parameters["tighten"].default is True


# --------------------------------------------------------------------------------------------- canonical form
def _wide() -> RarInstance:
    """Two 1023-GPU servers (B = 1024 = 2^10): B^4 = 2^40 is the last power within the limit
    2^40, so the weights cover the first L = 5 jobs only; five 2-GPU jobs and a 1-GPU one."""
    return RarInstance.from_dict(_hand([1023, 1023], [10] * 6, gpus=[2] * 5 + [1]))


def test_canonical_schedule_weighs_only_the_jobs_within_2_to_the_40() -> None:
    inst = _wide()
    y = np.array([[1, 1]] * 5 + [[0, 1]])
    starts, out = exact.canonical_schedule(inst, [0] * 6, y)
    # the first five jobs tie on both servers; the sixth is not weighted: no swap
    assert starts == [0] * 6 and out.tolist() == y.tolist()
    y = np.array([[1, 1]] * 4 + [[0, 2], [1, 0]])
    starts, out = exact.canonical_schedule(inst, [0] * 6, y)
    # job 4 (weight 1) puts server 1 ahead: the columns swap
    assert starts == [0] * 6 and out.tolist() == [[1, 1]] * 4 + [[2, 0], [0, 1]]


# --------------------------------------------------------------------------------------------- brute force
def test_run_brute_force_checks_its_objective() -> None:
    inst = RarInstance.from_dict(_hand([2], [10, 20]))
    with pytest.raises(InputError) as err:
        exact.run_brute_force(inst, objective="total_completion")
    assert (err.value.field, err.value.message) == (
        "objective", "the exact rar-ddls solvers minimise 'makespan' only, got 'total_completion'")
    r = exact.run_brute_force(inst)  # both at slot 0 on their own GPU: 5 slots (j1: 20 / 4)
    assert (r.status, r.objective, r.bound) == (Status.OPTIMAL, 5.0, 5.0)


# --------------------------------------------------------------------------------------------- bounds
def test_lemma_checks_reference_in_slots_at_a_two_second_slot() -> None:
    """Slots of 2 s: phi = 8, F = 10, 20 -> 2 and 3 slots on one server of two GPUs. LB =
    max(LB_job = 3 slots, LB_area = ceil(5 / 2) = 3 slots) = 6 s = 3 slots: the reference of
    Theorem 5 (no optimum given), so the makespan 3 meets it (ratio 1)."""
    inst = RarInstance.from_dict(_hand([2], [10, 20], slot=2.0))
    assert bounds.lower_bound(inst) == 6.0
    res = SimpleNamespace(outcome=SimOutcome(np.array([0, 0]), np.array([2, 3]), np.array([0, 0]), []),
                          max_busy=3.0, theta=3.0, gpus={0: [(0, 0)], 1: [(0, 1)]})
    got = bounds.lemma_checks(inst, res)
    assert got == {"makespan_slots": 3.0, "n_g": 1, "theta": 3.0, "w_max": 3.0, "busy_max": 3.0,
                   "lemma2_gap": 0.0, "lemma2_holds": True, "lemma3_bound": 3.0, "lemma3_holds": True,
                   "lemma3_busy_bound": 3.0, "lemma3_busy_holds": True,
                   "theorem5_ratio": 1.0, "theorem5_phi": 1.0, "theorem5_l": 1.0,
                   "theorem5_reference": 3.0, "theorem5_reference_is_optimum": False,
                   "theorem5_holds": True, "theorem5_conclusive": True, "realised_ratio": 1.0}


# --------------------------------------------------------------------------------------------- claims
def test_run_policy_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """LS on one server of two GPUs, j0 3 slots (F = 10), j1 5 slots (F = 20): both at slot 0 on
    their own GPU (LS takes the least-loaded GPU), makespan 5, mean JCT (3 + 5) / 2 = 4 slots."""
    data = _hand([2], [10, 20])
    got = claims.run_policy("ls", data, SWEPT, 7)
    assert {k: got[k] for k in ("makespan", "jct", "status", "past_horizon", "kappa")} == {
        "makespan": 5.0, "jct": 4.0, "status": "feasible", "past_horizon": False, "kappa": None}
    assert set(got) == {"makespan", "jct", "status", "past_horizon", "theta_u", "kappa"}
    # what the runner is given: the makespan objective, the seed, the readings it takes, the tuning
    calls = []

    def runner(inst, **kw):
        calls.append(kw)
        return Result(Status.TIME_LIMIT, problem="rar-ddls", objective_name="makespan")

    monkeypatch.setattr(claims, "_runner", lambda policy: runner)
    got = claims.run_policy("rand", data, dict(SWEPT, kappa_tie="first"), 7, lam=2.0)
    assert got == {"makespan": None, "jct": None, "status": "time_limit", "past_horizon": None}
    assert calls == [{"objective": "makespan", "seed": 7, "available": "accumulated", "lam": 2.0}]


def test_run_policy_refuses_an_infeasible_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model, "evaluate", lambda inst, sol: model.Evaluation(False, violations=["a", "b", "c"]))
    with pytest.raises(AssertionError) as err:
        claims.run_policy("ff", _hand([2], [10, 20]), SWEPT, 0)
    assert str(err.value) == "ff: infeasible schedule: ['a', 'b']"


def test_measure_fig4_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """On :func:`test_run_policy_whole`'s instance SJF-BCO and LS run both jobs at slot 0 (5
    slots, JCT 4); FF's first fit puts both on GPU (0, 0) (its theta_u holds 3 + 5 slots): 8
    slots, JCT (3 + 8) / 2 = 5.5. The best baseline is LS: both ratios 1."""
    calls = []
    monkeypatch.setattr(claims, "_sec7", lambda seed, **kw: calls.append((seed, kw)) or _hand([2], [10, 20]))
    got = claims.measure_fig4(readings=SWEPT, seed=1, scale="ci")
    assert calls == [(1, {})]
    assert set(got) == {"sjf-bco-fig4-makespan-vs-best-baseline", "sjf-bco-fig4-jct-vs-best-baseline", "_details"}
    assert (got["sjf-bco-fig4-makespan-vs-best-baseline"], got["sjf-bco-fig4-jct-vs-best-baseline"]) == (1.0, 1.0)
    d = got["_details"]
    assert set(d) == {"policies", "unit"} and d["unit"] == "slots (1 s)"
    runs = {p: (r["makespan"], r["jct"], r["status"], r["past_horizon"]) for p, r in d["policies"].items()}
    assert runs.pop("rand") in [(5.0, 4.0, "feasible", False), (8.0, 5.5, "feasible", False)]
    assert runs == {"sjf-bco": (5.0, 4.0, "feasible", False), "ls": (5.0, 4.0, "feasible", False),
                    "ff": (8.0, 5.5, "feasible", False)}


@pytest.mark.parametrize("curve, turns, shape", [
    ([9.0, 7.0, 8.0, 8.0, 6.0, 6.0], 2, 1.0),  # drop, rise, drop
    ([9.0, 7.0, 7.0, 6.0, 6.0, 5.0], 0, 0.0),  # drops only
    ([6.0, 7.0, 5.0, 5.0, 5.0, 5.0], 1, 0.0),  # rise, drop
    ([9.0, 7.0, None, 8.0, 6.0, 6.0], None, None),  # kappa = 4 gave no schedule
])
def test_measure_fig5_whole(curve, turns, shape, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claims, "_sec7", lambda seed, **kw: {"seed": seed, **kw})
    calls = []

    def run(policy, data, readings, seed, **tuning):
        calls.append((policy, data, seed, tuning))
        mk = curve[claims.FIG5_KAPPAS.index(tuning["kappa"])]
        return {"makespan": mk, "jct": None, "status": "feasible", "past_horizon": mk == 8.0}

    monkeypatch.setattr(claims, "run_policy", run)
    got = claims.measure_fig5(readings=SWEPT, seed=5, scale="ci")
    assert calls == [("sjf-bco", {"seed": 5}, 5, {"kappa": k}) for k in (1, 2, 4, 8, 16, 32)]
    assert got == {"sjf-bco-fig5-turning-points": turns, "sjf-bco-fig5-drop-rise-drop": shape,
                   "_details": {"kappa": [1, 2, 4, 8, 16, 32], "makespan": curve,
                                "past_horizon": [v == 8.0 for v in curve]}}


# --------------------------------------------------------------------------------------------- generate
class _LowRng:
    """Records ``integers(lo, hi)`` and returns ``lo`` (the draw's lower end)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def integers(self, lo, hi):
        self.calls.append((lo, hi))
        return lo


def _phi_job(phi: int) -> Job:
    """A 1-GPU job with tau = 1 / (phi + 0.5) s alone: phi iterations per 1-s slot (eq. 9)."""
    return Job(id="j", gpus=1, iterations=1000, grad_bytes=0.0, batch=16, fwd_time_per_sample=0.0,
               bwd_time=1.0 / (phi + 0.5))


@pytest.mark.parametrize("phi, draws, f", [
    # rho-hat in [max(50, ceil(1000 / phi)), min(300, 6000 // phi)]; F in [max(1000, (rho - 1) phi + 1), min(6000, rho phi)]
    (19, [(53, 301), (1000, 1008)], 1000),  # ceil(1000 / 19) = 53; F <= 53 * 19 = 1007
    (20, [(50, 301), (1000, 1001)], 1000),  # 1000 / 20 = 50 exactly: F = 1000 only
    (120, [(50, 51), (5881, 6001)], 5881),  # 6000 // 120 = 50 = the low end: one estimate; F > 49 * 120
])
def test_sec7_iterations_draw_bounds(phi, draws, f) -> None:
    net = Network.from_dict(generate.network_dict(0.5, 0.0))
    rng = _LowRng()
    assert generate._sec7_iterations(_phi_job(phi), [4], net, rng) == f
    assert rng.calls == draws
    assert all(type(v) is int for call in rng.calls for v in call)


def test_sec7_iterations_refuses_a_phi_without_an_estimate_in_range() -> None:
    net = Network.from_dict(generate.network_dict(0.5, 0.0))
    with pytest.raises(InputError) as err:  # 6000 // 121 = 49 < 50
        generate._sec7_iterations(_phi_job(121), [4], net, _LowRng())
    assert (err.value.field, err.value.message) == (
        "jobs", "no F in (1000, 6000) gives an estimate in (50, 300) at phi = 121")


# --------------------------------------------------------------------------------------------- sample
@pytest.mark.parametrize("index, batch", [(0, 16), (1, 32), (2, 64), (3, 128)])
def test_sample_batch_sizes(index: int, batch: int) -> None:
    """Every draw at its low end but the batch's: the simplest instance (tests/test_rar_ddls_sample.py)
    with M = 16, 32, 64 or 128 and Δf = 0.4·tau0 / M (tau0 = 0.1 s), so tau and the horizon stay."""
    d = sample(lambda lo, hi: index if (lo, hi) == (0, 3) else lo)
    assert d["jobs"] == [{"id": "j0", "gpus": 1, "iterations": 1, "grad_bytes": 1e6, "batch": batch,
                          "fwd_time_per_sample": 0.4 * 0.1 / batch, "bwd_time": 0.6 * 0.1}]
    assert (d["servers"], d["horizon"]) == ([1], 1)


# --------------------------------------------------------------------------------------------- sjf_bco
def test_plan_theta_passes_u_and_rho_hat_to_its_estimates() -> None:
    """tiny seed 2 (servers of 4 and 3 GPUs; jobs of 2, 3, 4, 4 GPUs), theta 20, kappa 1: with
    the fastest estimate for every server count the plan is found, with the placement's (the
    default) no plan. Each keyword gives the plan of the estimates built with it (a second route)."""
    inst = RarInstance.from_dict(tiny_case(2))

    def same(a, b) -> bool:
        return (a is None and b is None) or (a is not None and b is not None and a.U.tolist() == b.U.tolist()
                                             and a.finish == b.finish and a.order == b.order)

    default = plan_theta(inst, 20, kappa=1)
    fastest = plan_theta(inst, 20, kappa=1, rho_hat="fastest")
    assert default is None and fastest is not None
    assert same(fastest, plan_theta(inst, 20, kappa=1, est=Estimates(inst, rho_hat="fastest")))
    assert same(default, plan_theta(inst, 20, kappa=1, est=Estimates(inst)))
    twice = plan_theta(inst, 40, kappa=1, u=2.0)
    assert twice is not None and same(twice, plan_theta(inst, 40, kappa=1, est=Estimates(inst, u=2.0)))
    assert not same(twice, plan_theta(inst, 40, kappa=1))


# --------------------------------------------------------------------------------------------- more helpers
def test_area_bound_with_busy_gpus_against_its_definition() -> None:
    """LB_area with GPUs busy until slots 0, 3 (server 0) and 5 (server 1): the least M with
    sum_g max(0, M - r_g) >= work, found here by counting M up (the definition); e.g. work 2:
    M = 2 (the free GPU alone), work 3: M = 3, work 6: M = 5 (4 + 1 = 5 < 6 at 4; 5 + 2 = 7 at 5),
    work 10: M = 6 (7 < 10 at 5; 6 + 3 + 1 = 10 at 6)."""
    d = _hand([2, 1], [10])
    d["busy_until"] = [[0, 3], [5]]
    inst = RarInstance.from_dict(d)

    def least(work: int) -> int:
        m = 0
        while sum(max(0, m - r) for r in (0, 3, 5)) < work:
            m += 1
        return m

    assert [least(w) for w in (2, 3, 6, 10)] == [2, 3, 5, 6]
    assert [bounds._area_bound(inst, w) for w in range(0, 16)] == [least(w) for w in range(0, 16)]


def test_phi_tables_cover_one_to_min_gpus_servers() -> None:
    """One table per server count n = 1 .. min(G_j, S), each eq. (9)'s rate table (a second route:
    :func:`.model.rate_table`): a 1-GPU job has n = 1 only, a 2-GPU job n = 1, 2 on 3 servers, a
    4-GPU job n = 1 .. 3."""
    inst = RarInstance.from_dict(_hand([2, 2, 2], [10, 10, 10], gpus=[1, 2, 4]))
    tabs = exact._phi_tables(inst)
    assert [sorted(t) for t in tabs] == [[1], [1, 2], [1, 2, 3]]
    for job, t in zip(inst.jobs, tabs):
        for n, tab in t.items():
            assert tab.tolist() == model.rate_table(inst, job, n).tolist()


def test_greedy_checks_its_sequential_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = RarInstance.from_dict(pair_case(0.2))
    assert exact.greedy_schedule(inst)[2] == 10  # both at once (brute force's optimum)
    monkeypatch.setattr(exact, "_sim", lambda instance, y, starts: (17, None))  # 8 + 8 slots expected
    with pytest.raises(AssertionError) as err:
        exact.greedy_schedule(inst)
    assert str(err.value) == "the sequential schedule is contention free"


@pytest.mark.parametrize("now, occupied", [
    (5.0, [False, False]),  # GPU 0 frees exactly now: idle (the job on it exits at this slot)
    (5.0 - 0.5e-9, [False, False]),  # within TOL (1e-9 slots) of now: idle too
    (5.0 - 2e-9, [True, False]),  # more than TOL before its free time: still busy
    (6.0, [False, False]),
])
def test_occupied_servers_under_idle_now_at_the_free_time(now: float, occupied: list[bool]) -> None:
    p = plan.Plan.empty(plan.ClusterIndex.of([2, 2]), available="idle-now")
    p.U[:] = [5.0, 0, 0, 0]
    p.free[:] = [5.0, 0, 0, 0]
    p.now = now
    assert p.occupied_servers().tolist() == occupied
    p = plan.Plan.empty(plan.ClusterIndex.of([2, 2]))  # accumulated: any planned load occupies
    p.U[:] = [0, 0, 0, 1e-12]
    assert p.occupied_servers().tolist() == [False, True]
