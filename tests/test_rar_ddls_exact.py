"""rar-ddls exact solvers: CP-SAT = MILP = brute force, every schedule re-measured by ``evaluate``.

Instances: :mod:`tests.rar_ddls_cases` (seeded). CP-SAT runs with one worker and seed 0.
"""

from __future__ import annotations

import json
from typing import Any
from pathlib import Path

import numpy as np
import pytest

from optkit.formulations.rar_ddls import exact
from optkit.formulations.rar_ddls.bounds import lower_bound, rho_min
from optkit.formulations.rar_ddls.model import RarInstance, evaluate, simulate
from optkit.cli import main
from optkit.errors import InputError
from optkit.result import Status
from tests.rar_ddls_cases import brute_cases, cpsat_result, exact_cases, pair_case, share_cpsat_results, tiny_case


@pytest.fixture(scope="module", autouse=True)
def _shared_cpsat_results(tmp_path_factory: pytest.TempPathFactory) -> None:
    """CP-SAT's optima of the shared cases, solved once per run (:func:`tests.rar_ddls_cases.share_cpsat_results`)."""
    share_cpsat_results(tmp_path_factory)


EXACT = exact_cases()
BRUTE = brute_cases() + [(f"tiny-{s:02d}", tiny_case(s)) for s in (1, 9, 17, 33)]


def _check_schedule(inst: RarInstance, res) -> None:
    """The returned schedule is feasible, its completions are the simulator's, the reported
    objective is evaluate's makespan, and at a proven optimum the model's own objective and
    bound agree with it (Fact 2 of exact.py)."""
    ev = evaluate(inst, res.solution)
    assert ev.feasible, ev.violations
    assert res.objective == ev.objectives["makespan"]
    y = np.array([e["gpus_per_server"] for e in res.solution["jobs"]])
    out = simulate(inst, y, starts=[e["start"] for e in res.solution["jobs"]])
    assert [e["completion"] for e in res.solution["jobs"]] == out.completion.tolist()
    assert ev.metrics["within_horizon"]
    if res.status is Status.OPTIMAL:
        assert res.info["model_objective_s"] == pytest.approx(res.objective)
        assert res.bound == pytest.approx(res.objective, abs=1e-6)


@pytest.mark.parametrize("name,data", EXACT, ids=[n for n, _ in EXACT])
def test_cpsat_equals_highs(name: str, data: dict) -> None:
    inst = RarInstance.from_dict(data)
    c = cpsat_result(name, data)
    h = exact.run_highs(inst, seed=0, time_limit=None)
    assert c.status is Status.OPTIMAL, c.message
    assert h.status is Status.OPTIMAL, h.message
    assert c.objective == h.objective
    _check_schedule(inst, c)
    _check_schedule(inst, h)
    assert c.objective >= lower_bound(inst, "makespan") - 1e-9


def test_cases_exercise_contention() -> None:
    """The suite is not contention free: some optimum runs two split jobs on a shared server."""
    hit = [n for n, d in EXACT if cpsat_result(n, d).metrics["max_contention"] >= 2]
    assert len(hit) >= 2, hit


@pytest.mark.parametrize("name,data", BRUTE, ids=[n for n, _ in BRUTE])
def test_brute_force_agrees(name: str, data: dict) -> None:
    inst = RarInstance.from_dict(data)
    got = exact.brute_force(inst)
    assert got is not None
    value, sol = got
    ev = evaluate(inst, sol)
    assert ev.feasible and ev.objectives["makespan"] == value
    assert cpsat_result(name, data).objective == value
    # EXACT's cases meet HiGHS in test_cpsat_equals_highs; pair-in-turn in
    # test_pair_runs_in_turn_when_contention_is_heavy (HiGHS optimal at 16.0, this brute force's value)
    assert name != "pair-in-turn" or value == 16.0  # the value that test asserts of HiGHS
    if name not in dict(EXACT) and name != "pair-in-turn":
        h = exact.run_highs(inst, seed=0, time_limit=None)
        assert h.status is Status.OPTIMAL and h.objective == value


def test_pair_overlaps_when_contention_is_mild() -> None:
    """Two 4-GPU jobs on 3 x 3 GPUs: alone 8 slots each; together p = 2 (eq. 6) and phi 4 -> 3
    (eq. 9), 10 slots; in turn 16. The optimum overlaps them."""
    inst = RarInstance.from_dict(pair_case(0.2))
    res = exact.run_cpsat(inst, workers=1, seed=0)
    assert res.status is Status.OPTIMAL and res.objective == 10.0
    assert res.metrics["max_contention"] == 2
    assert [e["start"] for e in res.solution["jobs"]] == [0, 0]


def test_pair_runs_in_turn_when_contention_is_heavy() -> None:
    """Same jobs with degradation 3 (f(2) = 5): together phi 4 -> 1, 30 slots; in turn 16 is
    optimal, and a model blind to contention would overlap them."""
    inst = RarInstance.from_dict(pair_case(3.0))
    for res in (exact.run_cpsat(inst, workers=1, seed=0), exact.run_highs(inst, seed=0)):
        assert res.status is Status.OPTIMAL and res.objective == 16.0
        assert res.metrics["max_contention"] == 1
        assert res.info["incumbent"] == "solver" and res.info["lower_bound_slots"] == 8
        _check_schedule(inst, res)


def test_equal_servers_that_no_option_uses_are_left_unordered() -> None:
    """Servers 2, 2, 8 and two 6-GPU jobs of 4 iterations with 1 GB of gradient: split over two
    or three servers an iteration takes 2·(5/6)·1e9/1.25e9 + ... = 1.454 s > 1 slot (phi = 0, the
    option is dropped), so each job's only option is 6 GPUs on the 8-GPU server (0.124 s,
    phi = 8: one slot), and the two run in turn: 2 slots. The equal servers 0 and 1 form a
    symmetric pair whose columns are empty in every option; the MILP's ordering of them is
    0 >= 0, which Pyomo refuses as a constraint, so it is left out (before, run_highs raised)."""
    net = {"inter_bandwidth": 1.25e9, "intra_bandwidth": 3.0e11, "compute_speed": 5.0e10, "xi1": 1.0,
           "xi2": 0.002, "degradation": 0.2}
    job = {"gpus": 6, "iterations": 4, "grad_bytes": 1e9, "batch": 1, "fwd_time_per_sample": 0.0, "bwd_time": 0.1}
    inst = RarInstance.from_dict({"problem": "rar-ddls", "servers": [2, 2, 8], "network": net, "horizon": 10,
                                  "jobs": [dict(job, id="a"), dict(job, id="b")]})
    assert [[o.y for o in lst] for lst in exact.placement_options(inst)] == [[(0, 0, 6)], [(0, 0, 6)]]
    for res in (exact.run_cpsat(inst, workers=1, seed=0), exact.run_highs(inst, seed=0)):
        assert res.status is Status.OPTIMAL and res.objective == 2.0, res.message
        _check_schedule(inst, res)
    assert exact.brute_force(inst)[0] == 2.0


@pytest.mark.parametrize("name", ["tiny-03", "contention-7"])
def test_without_symmetry_breaking_and_horizon_cap_same_optimum(name: str) -> None:
    data = dict(EXACT)[name]
    inst = RarInstance.from_dict(data)
    ref = cpsat_result(name, data).objective
    res = exact.run_cpsat(inst, workers=1, seed=0, symmetry=False, tighten=False, time_limit=None)
    assert res.status is Status.OPTIMAL and res.objective == ref
    assert res.info["horizon_slots"] == inst.horizon
    res = exact.run_highs(inst, seed=0, symmetry=False, time_limit=None)
    assert res.status is Status.OPTIMAL and res.objective == ref


def test_greedy_schedule_is_feasible_and_an_upper_bound() -> None:
    for name, data in EXACT[:12]:
        inst = RarInstance.from_dict(data)
        starts, y, mk = exact.greedy_schedule(inst)
        out = simulate(inst, y, starts=starts)
        ev = evaluate(inst, {"jobs": [{"id": j.id, "start": int(starts[k]), "gpus_per_server": [int(v) for v in y[k]]}
                                      for k, j in enumerate(inst.jobs)]})
        assert ev.feasible and ev.metrics["makespan_slots"] == mk == int(out.completion.max())
        assert mk <= sum(rho_min(inst, j) for j in inst.jobs)
        assert mk * inst.slot_seconds >= cpsat_result(name, data).objective
        assert y.dtype == np.int64  # GPU counts


@pytest.mark.parametrize("horizon", [9, 5])
def test_no_schedule_within_the_horizon_is_infeasible(horizon: int) -> None:
    """pair_case(0.2) needs 10 slots: horizon 9 is refuted by the solvers, 5 by the lower bound."""
    data = dict(pair_case(0.2), horizon=horizon)
    inst = RarInstance.from_dict(data)
    for res in (exact.run_cpsat(inst, workers=1, seed=0), exact.run_highs(inst, seed=0)):
        assert res.status is Status.INFEASIBLE and res.solution is None and res.objective_name == "makespan"
        assert "horizon" in res.message
        if horizon == 9:  # the solver's refutation, reported with the model's facts
            assert res.info["lower_bound_slots"] == 8 and res.info["solver_status"]
            assert res.info["variables"] > 0 and res.info["constraints"] > 0
    assert exact.brute_force(inst) is None


def test_a_lower_bound_past_the_horizon_refutes_it_before_any_model() -> None:
    """Three 4-GPU jobs on 3 + 3 GPUs (test_rar_ddls_bounds' hand case: 8, 5 and 3 slots alone,
    every pair conflicts, LB_conflict = 16) with horizon 10: each job fits alone (8 <= 10), but
    the lower bound does not; both models answer infeasible without solving."""
    from tests.rar_ddls_cases import _job

    net = {"inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11, "compute_speed": 5e10, "xi1": 1.0, "xi2": 0.005,
           "degradation": 0.2}
    inst = RarInstance.from_dict({"problem": "rar-ddls", "servers": [3, 3], "network": net, "horizon": 10,
                                  "jobs": [_job("a", 4, 30, 0.15, 0.5, 16), _job("b", 4, 20, 0.15, 0.5, 16),
                                           _job("c", 4, 12, 0.15, 0.5, 16)]})
    for res in (exact.run_cpsat(inst, workers=1, seed=0), exact.run_highs(inst, seed=0)):
        assert (res.status, res.solution, res.objective_name) == (Status.INFEASIBLE, None, "makespan")
        assert res.message == "no schedule completes within the horizon of 10 slots (lower bound 16 slots)"
        assert res.info["lower_bound_slots"] == 16 and "solver_status" not in res.info
        assert res.info["build_and_solve_s"] >= 0


@pytest.mark.parametrize("case", ["pair", "lemma3-pair"])
def test_cpsat_warm_start_is_a_complete_feasible_assignment(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hint CP-SAT gets from the greedy schedule gives every variable of the model a value,
    and fixing every variable to it leaves a feasible model whose makespan is the greedy
    schedule's. pair_case(0.2): both jobs split, contending on server 1; the lemma-3 pair: split
    options exist but the greedy schedule runs both jobs on server 1, unsplit."""
    import optkit.solvers.cpsat
    from ortools.sat.python import cp_model
    from tests.test_rar_ddls_lemmas import lemma3_pair

    real = optkit.solvers.cpsat.solve_cp_model
    seen: dict[str, Any] = {}

    def spy(model: Any, **kw: Any) -> Any:
        seen["model"], seen["hint"] = model, dict(kw["hint"])
        return real(model, **kw)

    monkeypatch.setattr(optkit.solvers.cpsat, "solve_cp_model", spy)
    inst = RarInstance.from_dict(pair_case(0.2) if case == "pair" else lemma3_pair())
    res = exact.run_cpsat(inst, workers=1, seed=0, shortcut=False)
    assert res.status is Status.OPTIMAL and res.info["incumbent"] == "solver"
    model, hint = seen["model"], seen["hint"]
    assert len(hint) == len(model.Proto().variables)
    for var, value in hint.items():
        model.Add(var == value)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    assert solver.Solve(model) == cp_model.OPTIMAL
    assert solver.ObjectiveValue() == exact.greedy_schedule(inst)[2] == res.objective


def test_cpsat_model_starts_identical_jobs_in_index_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lemma-3 pair's two jobs are identical: with symmetry breaking the model admits no
    schedule in which b starts before a (S_b < S_a is infeasible); without it, it does (swapping
    two identical jobs is another schedule of the same makespan)."""
    import optkit.solvers.cpsat
    from ortools.sat.python import cp_model
    from tests.test_rar_ddls_lemmas import lemma3_pair

    real = optkit.solvers.cpsat.solve_cp_model
    models: list[Any] = []

    def spy(model: Any, **kw: Any) -> Any:
        models.append(model)
        return real(model, **kw)

    monkeypatch.setattr(optkit.solvers.cpsat, "solve_cp_model", spy)
    inst = RarInstance.from_dict(lemma3_pair())
    assert exact.identical_job_groups(inst) == [[0, 1]]
    verdicts = []
    for symmetry in (True, False):
        exact.run_cpsat(inst, workers=1, seed=0, shortcut=False, symmetry=symmetry)
        model = models[-1]
        names = [v.name for v in model.Proto().variables]
        s0, s1 = (model.GetIntVarFromProtoIndex(names.index(n)) for n in ("S0", "S1"))
        model.Add(s1 + 1 <= s0)
        model.ClearHints()
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        verdicts.append(solver.Solve(model))
    assert verdicts == [cp_model.INFEASIBLE, cp_model.OPTIMAL]


def test_brute_force_entry_the_oracle_asks() -> None:
    """run_brute_force on pair_case(0.2) (optimum 10, the two jobs overlapping from slot 0):
    ``optimal`` with the enumerated schedule and bound = optimum; the oracle asks it when told
    to (it is not in the algorithm table); with horizon 9 nothing fits: ``infeasible``."""
    from optkit.testing.oracle import optimum

    inst = RarInstance.from_dict(pair_case(0.2))
    res = exact.run_brute_force(inst)
    assert (res.status, res.objective, res.bound, res.message) == (Status.OPTIMAL, 10.0, 10.0, "enumeration")
    assert [e["start"] for e in res.solution["jobs"]] == [0, 0]
    assert evaluate(inst, res.solution).objectives["makespan"] == 10.0
    assert tuple(optimum("rar-ddls", pair_case(0.2), solvers=("brute-force",)))[:3] == (10.0, True, "brute-force")
    none = exact.run_brute_force(RarInstance.from_dict(dict(pair_case(0.2), horizon=9)))
    assert (none.status, none.solution) == (Status.INFEASIBLE, None)
    assert none.message == "no schedule completes within the horizon of 9 slots"


@pytest.mark.parametrize("run", [exact.run_cpsat, exact.run_highs])
def test_a_solve_without_incumbent_falls_back_to_the_greedy_schedule(run, monkeypatch: pytest.MonkeyPatch) -> None:
    """A solver that stops without an incumbent (here a stand-in answering ``time_limit``,
    ``UNKNOWN``, bound 9 slots, no solution): the answer is the greedy warm start when it fits
    the horizon (pair_case(0.2): both jobs from slot 0, makespan 10), the solver's status, name
    and bound kept; with horizon 9 the greedy schedule does not fit and there is no solution."""
    import optkit.solvers.cpsat
    import optkit.solvers.milp
    from optkit.solvers import SolverOutcome

    def stopped(*args: object, **kwargs: object) -> SolverOutcome:
        return SolverOutcome(Status.TIME_LIMIT, bound=9.0, solver_status="UNKNOWN")

    monkeypatch.setattr(optkit.solvers.cpsat, "solve_cp_model", stopped)
    monkeypatch.setattr(optkit.solvers.milp, "solve_pyomo_model", stopped)
    inst = RarInstance.from_dict(pair_case(0.2))
    res = run(inst, seed=0)
    assert (res.status, res.objective, res.bound, res.message) == (Status.TIME_LIMIT, 10.0, 9.0, "UNKNOWN")
    assert res.info["incumbent"] == "greedy warm start" and res.info["solver_status"] == "UNKNOWN"
    assert [e["start"] for e in res.solution["jobs"]] == [0, 0]
    _check_schedule(inst, res)
    none = run(RarInstance.from_dict(dict(pair_case(0.2), horizon=9)), seed=0)
    assert (none.status, none.solution, none.bound, none.message) == (Status.TIME_LIMIT, None, 9.0, "UNKNOWN")
    assert "incumbent" not in none.info


@pytest.mark.parametrize("run", [exact.run_cpsat, exact.run_highs])
def test_objective_other_than_makespan_rejected(run) -> None:
    inst = RarInstance.from_dict(pair_case())
    with pytest.raises(InputError) as err:
        run(inst, objective="total_completion")
    assert err.value.field == "objective"
    with pytest.raises(InputError) as err:
        exact.brute_force(inst, "bogus")
    assert err.value.field == "objective"


def test_brute_force_refuses_large_instances(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = RarInstance.from_dict(tiny_case(0, jobs=6, servers=3))  # > 10^12 combinations
    with pytest.raises(InputError) as err:
        exact.brute_force(inst)
    assert err.value.field == "instance"
    monkeypatch.setattr(exact, "BRUTE_FORCE_MAX_NODES", 50)  # the node budget
    with pytest.raises(InputError, match="more than 50"):
        exact.brute_force(RarInstance.from_dict(pair_case(3.0)))
    # four 1-slot jobs on one GPU with horizon 1000: 1000 starts each, exactly 10^12 combinations,
    # not above the limit: the enumeration starts and stops at the node budget
    job = {"gpus": 1, "iterations": 1, "grad_bytes": 0.0, "batch": 1, "fwd_time_per_sample": 0.0, "bwd_time": 0.1}
    net = pair_case()["network"]
    edge = RarInstance.from_dict({"problem": "rar-ddls", "servers": [1], "network": net, "horizon": 1000,
                                  "jobs": [dict(job, id=f"j{k}") for k in range(4)]})
    with pytest.raises(InputError, match="more than 50"):
        exact.brute_force(edge)


@pytest.mark.parametrize("algorithm", ["cpsat", "highs"])
def test_cli_solve_json_optimal(algorithm: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name, data = EXACT[3]
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(data))
    sol = tmp_path / "sol.json"
    argv = ["solve", "rar-ddls", str(path), "--algorithm", algorithm, "--json", "--out", str(sol),
            "--time-limit", "60", "--seed", "0"]
    if algorithm == "cpsat":
        argv += ["--param", "workers=1"]
    assert main(argv) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["status"] == "optimal" and obj["gap"] <= 1e-6
    ev = evaluate(RarInstance.from_dict(data), json.loads(sol.read_text()))
    assert ev.feasible and obj["objective"] == ev.objectives["makespan"]
    assert obj["objective"] == cpsat_result(name, data).objective


def test_cli_bad_objective_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(pair_case()))
    assert main(["solve", "rar-ddls", str(path), "--algorithm", "cpsat", "--objective", "total_completion"]) == 2
    assert "objective" in capsys.readouterr().err


def test_incumbent_meeting_the_lower_bound_is_returned_as_proven_optimal() -> None:
    """Servers 2 + 2, two identical 2-GPU jobs of 10 slots alone on one server (no gradient,
    tau = xi2 + bwd = 0.1 s, 100 iterations): LB_job = 10 and side by side they finish at 10, so
    the heuristics' schedule is optimal by the bound; the shortcut says so without a model, and
    the model agrees."""
    net = {"inter_bandwidth": 1.25e9, "intra_bandwidth": 3.0e11, "compute_speed": 5.0e10,
           "xi1": 1.0, "xi2": 0.05, "degradation": 0.2}
    jobs = [{"id": f"j{i}", "gpus": 2, "iterations": 100, "grad_bytes": 0.0, "batch": 1,
             "fwd_time_per_sample": 0.0, "bwd_time": 0.05} for i in range(2)]
    inst = RarInstance.from_dict({"problem": "rar-ddls", "servers": [2, 2], "network": net, "horizon": 60,
                                  "jobs": jobs})
    fast = exact.run_cpsat(inst, workers=1, seed=0)
    assert fast.status is Status.OPTIMAL and fast.objective == 10 and fast.message == "incumbent meets the lower bound"
    assert fast.info["proof"] == "the heuristic incumbent's makespan equals the proven lower bound"
    assert fast.info["incumbent"] == "heuristic" and fast.info["upper_bound_heuristic"] == "sjf-bco"
    assert fast.info["upper_bound_heuristic_slots"] == 10 and fast.info["lower_bound_slots"] == 10
    _check_schedule(inst, fast)
    full = exact.run_cpsat(inst, workers=1, seed=0, shortcut=False)
    assert full.status is Status.OPTIMAL and full.objective == 10 and "proof" not in full.info
    assert exact.identical_job_groups(inst) == [[0, 1]]
    # Without the tightening heuristics the greedy incumbent of the model's preparation meets
    # the bound too (the second shortcut, ub <= lb): proven without a model as well.
    plain = exact.run_cpsat(inst, workers=1, seed=0, tighten=False)
    assert plain.status is Status.OPTIMAL and plain.objective == 10 and plain.info["incumbent"] == "heuristic"
    assert plain.info["proof"] == "the incumbent's makespan equals the proven lower bound"
    # also when the incumbent ends exactly at the horizon (10 slots)
    tight = exact.run_cpsat(RarInstance.from_dict(dict(inst.to_dict(), horizon=10)), workers=1, seed=0, tighten=False)
    assert tight.info["proof"] == "the incumbent's makespan equals the proven lower bound" and tight.objective == 10
    _check_schedule(inst, plain)


@pytest.mark.parametrize("name,data", EXACT[::4], ids=[n for n, _ in EXACT[::4]])
def test_canonical_schedule_is_equivalent_and_ordered(name: str, data: dict) -> None:
    """The canonical form of an optimal schedule has the same makespan and sorted completions,
    identical jobs start in index order, and equal-capacity servers' columns are in
    non-increasing lexicographic order (what the symmetry breaking keeps)."""
    inst = RarInstance.from_dict(data)
    sol = cpsat_result(name, data).solution["jobs"]
    y = np.array([e["gpus_per_server"] for e in sol])
    starts = [e["start"] for e in sol]
    s2, y2 = exact.canonical_schedule(inst, starts, y[:, ::-1] if len(set(inst.servers)) == 1 else y)
    before = simulate(inst, y, starts=starts).completion
    after = simulate(inst, y2, starts=s2).completion
    assert sorted(before.tolist()) == sorted(after.tolist())
    for grp in exact.identical_job_groups(inst):
        assert [s2[j] for j in grp] == sorted(s2[j] for j in grp)
    for cap in set(inst.servers):
        idx = [s for s, o in enumerate(inst.servers) if o == cap]
        cols = [tuple(y2[:, s]) for s in idx]
        assert cols == sorted(cols, reverse=True)


def test_a_time_limit_passed_while_preparing_returns_the_greedy_schedule_and_the_bound() -> None:
    """Both exact models bound their preparation by the run's time limit: with a limit already
    past (1 ns), the heuristic warm starts do not run, the greedy warm start keeps its
    sequential schedule (the horizon is set above its makespan, so it is a schedule of the
    instance), the MILP stops before its model is built, CP-SAT before its model is; each
    answers ``time_limit`` with that schedule, which evaluate accepts, never better than the
    proven bound."""
    from optkit import Status, solve
    from optkit.formulations.rar_ddls.bounds import lower_bound
    from optkit.formulations.rar_ddls.generate import paper_sec7
    from optkit.formulations.rar_ddls.model import RarInstance

    d = paper_sec7(0, servers=4, mix={1: 4, 2: 2, 4: 2, 8: 2}, horizon=1100)
    inst = RarInstance.from_dict(d)
    lb = lower_bound(inst, "makespan")
    assert exact.greedy_schedule(inst)[2] == 222
    for algorithm in ("highs", "cpsat"):
        r = solve("rar-ddls", d, algorithm, time_limit=1e-9, seed=0, params={"shortcut": False}
                  if algorithm == "cpsat" else None)
        assert r.status in (Status.TIME_LIMIT, Status.FEASIBLE), (algorithm, r.status, r.message)
        assert r.objective is not None and r.objective >= lb - 1e-9
        # the greedy warm start stopped before its packing pass: the sequential schedule (the sum of
        # the jobs' fastest solo times, 1086 slots; packed, 222)
        assert r.info["upper_bound_greedy_slots"] == sum(rho_min(inst, j) for j in inst.jobs) == 1086
    r = solve("rar-ddls", d, "highs", time_limit=1e-9, seed=0)
    assert r.status is Status.TIME_LIMIT and r.info["stopped"] == "time limit reached while building the MILP"
    assert r.message == "time limit reached while building the MILP: the greedy schedule and the lower bound"
    assert r.bound == pytest.approx(lb)


def test_an_option_of_exactly_one_iteration_per_slot_is_kept() -> None:
    """Two 1-GPU servers and one 2-GPU job without gradient: it must split, an iteration takes
    xi2·2 + bwd = 0.1 + 0.6 = 0.7 s, so phi = 1 (eq. 9): 3 iterations take 3 slots. Every exact
    solver finds that schedule (an option is dropped only at phi = 0)."""
    net = dict(pair_case()["network"], xi2=0.05)
    inst = RarInstance.from_dict({"problem": "rar-ddls", "servers": [1, 1], "network": net, "horizon": 5,
                                  "jobs": [{"id": "a", "gpus": 2, "iterations": 3, "grad_bytes": 0.0, "batch": 1,
                                            "fwd_time_per_sample": 0.0, "bwd_time": 0.6}]})
    assert [(o.y, o.n, o.solo) for o in exact.placement_options(inst)[0]] == [((1, 1), 2, 3)]
    for res in (exact.run_cpsat(inst, workers=1, seed=0, shortcut=False), exact.run_highs(inst, seed=0)):
        assert res.status is Status.OPTIMAL and res.objective == 3.0
    assert exact.brute_force(inst)[0] == 3.0


HEURISTIC_WINNERS = [("tiny", 0, "sjf-bco"), ("tiny", 19, "sjf-bco(accumulated,least-loaded)"), ("tiny", 11, "ls"),
                     ("generator", 2, "ff")]


@pytest.mark.parametrize("kind,seed,name", HEURISTIC_WINNERS, ids=[w[2] for w in HEURISTIC_WINNERS])
def test_heuristic_incumbent_is_the_best_of_the_four_first_on_ties(kind: str, seed: int, name: str) -> None:
    """The exact models' incumbent: the schedule of smallest makespan among SJF-BCO (default
    readings), SJF-BCO (accumulated, least-loaded), LS and FF, in that order on ties, named;
    each case is one where the named heuristic wins (found by search over 40 seeds)."""
    from optkit.formulations.rar_ddls.baselines import ff, ls
    from optkit.formulations.rar_ddls.model import schedule_dict
    from optkit.formulations.rar_ddls.sjf_bco import sjf_bco
    from tests.test_rar_ddls_sjf_bco import tiny_instance

    inst = RarInstance.from_dict(tiny_case(seed) if kind == "tiny" else tiny_instance(seed))
    runs = {"sjf-bco": sjf_bco(inst), "sjf-bco(accumulated,least-loaded)": sjf_bco(inst, available="accumulated",
                                                                                  fa_ffp="least-loaded"),
            "ls": ls(inst), "ff": ff(inst)}
    makespans = {k: evaluate(inst, schedule_dict(inst, y, r.outcome)).metrics["makespan_slots"]
                 for k, (y, r) in runs.items()}
    starts, y, mk, which = exact.heuristic_incumbent(inst)
    assert which == name and mk == makespans[name] == min(makespans.values())
    assert all(makespans[k] > mk for k in list(runs)[:list(runs).index(name)])
    assert starts == runs[name][1].outcome.start.tolist() and np.array_equal(y, runs[name][0])


def test_reported_build_time_is_a_span_of_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """``build_and_solve_s`` is the clock's advance from the call's start to the answer: with a
    fake clock advancing 1 µs per reading, positive and at most the span read during the call,
    for CP-SAT's model, its two shortcuts (the bound-meeting pair: the heuristics' incumbent, and
    without them the greedy one) and the MILP."""
    from tests.deterministic import TickingClock

    clock = TickingClock(step=1e-6).install(monkeypatch)
    net = dict(pair_case()["network"], xi2=0.05)
    meets = {"problem": "rar-ddls", "servers": [2, 2], "network": net, "horizon": 60,
             "jobs": [{"id": f"j{i}", "gpus": 2, "iterations": 100, "grad_bytes": 0.0, "batch": 1,
                       "fwd_time_per_sample": 0.0, "bwd_time": 0.05} for i in range(2)]}
    for run, data, kw in ((exact.run_cpsat, pair_case(0.2), {"workers": 1, "shortcut": False}),
                          (exact.run_cpsat, meets, {"workers": 1}),
                          (exact.run_cpsat, meets, {"workers": 1, "tighten": False}),
                          (exact.run_highs, pair_case(0.2), {})):
        before = clock.readings
        res = run(RarInstance.from_dict(data), seed=0, **kw)
        assert res.status is Status.OPTIMAL
        assert 0 < res.info["build_and_solve_s"] <= (clock.readings - before) * clock.step
