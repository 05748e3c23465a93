"""One battery of checks for every registered algorithm of every problem (issue 17).

Modelled on scikit-learn's ``parametrize_with_checks``: the module walks the registry
(:func:`optkit.registry.all_formulations`) when pytest collects it and runs the same checks on
every available algorithm, so an algorithm registered later is covered by being registered.
Test ids read ``problem/algorithm``; an unavailable algorithm (a missing optional package) is
a skip naming the package (``-rs``), and a failure in CI (:mod:`tests.needs`).

Instances: the first :data:`N_INSTANCES` instances of each formulation's first suite (by
convention a formulation declares its smallest, exact-solvable suite first: ``tiny`` or
``small``); the suites are seeded, so the instances are the same in every run. Seeds
:data:`SEEDS`. No time limit is given to any run (no clock decides a verdict); a hang is a
failure raised by pytest-timeout.

Oracles, none of them the algorithm under test:

* ``evaluate`` of the formulation, called afresh on the returned solution, for feasibility and
  the objective;
* the proven optimum: every available *exact* algorithm supporting the objective solves the
  instance; their ``optimal`` values must agree with each other (two independent models, e.g.
  CP-SAT and a MILP, or brute force), and nothing may beat the smallest of them; where no exact
  algorithm supports an objective, the formulation's proven ``lower_bound`` stands in;
* any feasible solution found by any algorithm disproves ``infeasible``;
* exact solvers are also stopped at their first incumbent (a deterministic work limit): the
  bound they then report must not exceed the optimum;
* the declared readings (:mod:`optkit.readings`) for the parameter checks;
* a spy on CP-SAT (``CpSolver.Solve``) and on the Pyomo MILP interface: the time limit and seed
  given to ``solve`` reach every solve of an exact algorithm.

The status discipline (:class:`optkit.result.Status`): ``optimal`` only from exact algorithms;
``infeasible`` only when true (no algorithm finds a solution and every exact solver agrees);
heuristics, peers and baselines return ``feasible`` or ``no_solution`` (with a message and no
solution); nothing returns ``error`` on a valid instance.
"""

from __future__ import annotations

import inspect
import math
import os
from functools import lru_cache
from typing import Any

import pytest

from optkit import registry
from optkit.errors import InputError
from optkit.formulation import Algorithm, Formulation
from optkit.readings import accepted_params, readings_for, resolve_params
from optkit.result import Result, Status, scalar_objective
from optkit.solve import solve
from tests.deterministic import stop_at_first_solution
from tests.needs import needs_modules

N_INSTANCES = int(os.environ.get("OPTKIT_BATTERY_INSTANCES", "6"))
"""Instances per problem: the first ones of its first (smallest) suite. The environment
variable ``OPTKIT_BATTERY_INSTANCES`` widens the sweep for a manual run (the whole suite: 1000)."""
SEEDS = (0, 1)
REL_TOL = 1e-6
"""Relative tolerance of objective comparisons (evaluate recomputes sums in another order)."""
SOLVER_REL_TOL = 1e-4
"""Exact solvers may disagree by their own MIP gap tolerance (HiGHS: 1e-4 relative)."""


def _formulations() -> dict[str, Formulation]:
    return registry.all_formulations()


def _cases() -> list[Any]:
    """One pytest param per (problem, algorithm)."""
    return [pytest.param(problem, name, id=f"{problem}/{name}")
            for problem, f in _formulations().items() for name in f.algorithms]


CASES = _cases()


@lru_cache(maxsize=None)
def _instances(problem: str) -> tuple[tuple[str, Any], ...]:
    """``(name, instance object)`` for the first :data:`N_INSTANCES` of the first suite."""
    f = registry.get(problem)
    assert f.suites, f"{problem} declares no suite: the battery needs small seeded instances"
    suite = f.suites[next(iter(f.suites))]
    items = suite.build()[:N_INSTANCES]
    assert items, f"suite {suite.name} of {problem} is empty"
    return tuple((name, f.instance_from_dict(data)) for name, data in items)


def _params(problem: str, algorithm: str) -> dict[str, Any]:
    """One search worker where the algorithm takes ``workers``: parallel CP-SAT is documented
    as not repeatable (:func:`optkit.solvers.cpsat.solve_cp_model`), one worker is."""
    return {"workers": 1} if "workers" in accepted_params(registry.get(problem), algorithm) else {}


def _solve(problem: str, algorithm: str, index: int, objective: str, seed: int | None) -> Result:
    """``solve`` without a time limit."""
    _, inst = _instances(problem)[index]
    return solve(problem, inst, algorithm, objective=objective, seed=seed, params=_params(problem, algorithm))


@lru_cache(maxsize=None)
def _run(problem: str, algorithm: str, index: int, objective: str, seed: int | None) -> Result:
    """:func:`_solve`, cached: several checks read the same run."""
    return _solve(problem, algorithm, index, objective, seed)


def _key(res: Result) -> float | None:
    return scalar_objective(res.objective, res.metrics, res.objective_name)


def _close(a: float, b: float, rel: float = REL_TOL) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


def _runs(problem: str, algorithm: str, seed: int | None = SEEDS[0]):
    """Every (index, instance name, objective, result) of the algorithm on the battery's instances."""
    f = registry.get(problem)
    needs_modules(*f.algorithms[algorithm].requires)
    for i, (name, _) in enumerate(_instances(problem)):
        for objective in f.algorithms[algorithm].objectives:
            yield i, name, objective, _run(problem, algorithm, i, objective, seed)


@lru_cache(maxsize=None)
def _reference(problem: str, index: int, objective: str) -> tuple[float | None, bool, str]:
    """``(optimum, proven_infeasible, who)`` from every available exact algorithm supporting
    ``objective``. The ``optimal`` values must agree within :data:`SOLVER_REL_TOL`; the
    smallest is returned. ``optimum`` is None when no exact algorithm proves one."""
    f = registry.get(problem)
    exact = [n for n, a in f.algorithms.items() if a.kind == "exact" and objective in a.objectives and a.available()]
    values: dict[str, float] = {}
    infeasible: list[str] = []
    for name in exact:
        res = _run(problem, name, index, objective, SEEDS[0])
        if res.status is Status.OPTIMAL:
            key = _key(res)
            assert key is not None, f"{name} proved optimality without a scalar objective"
            values[name] = key
        elif res.status is Status.INFEASIBLE:
            infeasible.append(name)
    if values:
        lo, hi = min(values.values()), max(values.values())
        assert _close(lo, hi, SOLVER_REL_TOL), (
            f"exact solvers disagree on the optimum of {problem} instance {index} ({objective}): {values}")
        assert not infeasible, f"{infeasible} proved infeasible what {sorted(values)} solved to optimality"
        return lo, False, ", ".join(sorted(values))
    return None, bool(infeasible) and len(infeasible) == len(exact), ", ".join(infeasible)


def _proven_lower_bound(problem: str, index: int, objective: str) -> float | None:
    f = registry.get(problem)
    if f.lower_bound is None:
        return None
    return f.lower_bound(_instances(problem)[index][1], objective)


# ----------------------------------------------------------------------------- the checks
@pytest.mark.parametrize("problem,algorithm", CASES)
def test_solution_passes_evaluate_and_objective_is_evaluates(problem: str, algorithm: str) -> None:
    """Every returned solution is feasible for a fresh ``evaluate`` call, and the objective
    ``solve`` reports, and any objective the algorithm itself put in its result, equal
    ``evaluate``'s value of that solution."""
    f = registry.get(problem)
    algo = f.algorithms[algorithm]
    params = resolve_params(f, algorithm, _params(problem, algorithm))
    for i, name, objective, res in _runs(problem, algorithm):
        if res.solution is None:
            continue
        inst = _instances(problem)[i][1]
        ev = f.evaluate(inst, res.solution)
        assert ev.feasible, f"{name}/{objective}: evaluate rejects the solution: {ev.violations[:3]}"
        want = ev.objectives[objective]
        assert res.objective == (list(want) if isinstance(want, (list, tuple)) else want), f"{name}/{objective}"
        raw = algo.run(inst, objective=objective, time_limit=None, seed=SEEDS[0], **params)
        if raw.objective is not None and raw.solution is not None:
            raw_ev = f.evaluate(inst, raw.solution)
            mine, theirs = raw.objective, raw_ev.objectives[objective]
            if isinstance(theirs, (list, tuple)):
                assert len(mine) == len(theirs) and all(_close(a, b) for a, b in zip(mine, theirs)), (
                    f"{name}/{objective}: the algorithm reports {mine}, evaluate {theirs}")
            else:
                assert _close(mine, theirs), f"{name}/{objective}: the algorithm reports {mine}, evaluate {theirs}"


@pytest.mark.parametrize("problem,algorithm", CASES)
def test_status_discipline(problem: str, algorithm: str) -> None:
    """``optimal`` only from exact algorithms; ``infeasible`` only where it is true (every exact
    solver agrees and no algorithm finds a solution); heuristics, peers and baselines return
    ``feasible`` or ``no_solution``; ``no_solution`` carries a message and no solution; no
    ``error`` and no ``time_limit`` (no limit was set) on a valid instance."""
    f = registry.get(problem)
    kind = f.algorithms[algorithm].kind
    for i, name, objective, res in _runs(problem, algorithm):
        where = f"{name}/{objective}: {res.status.value} ({res.message[:200]})"
        assert res.status not in (Status.ERROR, Status.TIME_LIMIT), where
        if kind == "exact":
            assert res.status in (Status.OPTIMAL, Status.INFEASIBLE), where
        else:
            assert res.status in (Status.FEASIBLE, Status.NO_SOLUTION, Status.INFEASIBLE), where
        if res.status is Status.NO_SOLUTION:
            assert res.solution is None and res.message.strip(), where
        if res.status is Status.INFEASIBLE:
            assert res.solution is None, where
            _, proven, who = _reference(problem, i, objective)
            assert proven, f"{where}: not every exact solver proves infeasibility"
            found = [a for a in f.algorithms if f.algorithms[a].available() and objective in f.algorithms[a].objectives
                     and _run(problem, a, i, objective, SEEDS[0]).solution is not None]
            assert not found, f"{where}: {found} found a feasible solution"
        if res.status is Status.OPTIMAL:
            assert res.bound is not None and res.gap is not None and res.gap <= SOLVER_REL_TOL, where


@pytest.mark.parametrize("problem,algorithm", CASES)
@pytest.mark.parametrize("seed", SEEDS)
def test_same_seed_same_result(problem: str, algorithm: str, seed: int) -> None:
    """Two runs with the same seed return the same status, solution and objective; an
    algorithm not declared ``randomized`` returns the same for every seed."""
    f = registry.get(problem)
    algo = f.algorithms[algorithm]
    for i, name, objective, first in _runs(problem, algorithm, seed):
        again = _solve(problem, algorithm, i, objective, seed)
        assert (again.status, again.solution, again.objective) == (first.status, first.solution, first.objective), (
            f"{name}/{objective}, seed {seed}")
        if not algo.randomized and algo.kind != "exact":
            other = _run(problem, algorithm, i, objective, SEEDS[0] if seed != SEEDS[0] else SEEDS[1])
            assert (other.status, other.solution) == (first.status, first.solution), (
                f"{name}/{objective}: not declared randomized, but the seed changes the result")


@pytest.mark.parametrize("problem,algorithm", CASES)
def test_never_better_than_the_proven_optimum(problem: str, algorithm: str) -> None:
    """No solution beats the optimum the exact solvers prove (who agree with each other), nor
    the formulation's proven lower bound; an ``optimal`` result equals the optimum; a result's
    own ``bound`` never exceeds it."""
    for i, name, objective, res in _runs(problem, algorithm):
        key = _key(res)
        opt, _, who = _reference(problem, i, objective)
        lb = _proven_lower_bound(problem, i, objective)
        if opt is not None and lb is not None:
            assert lb <= opt + REL_TOL * abs(opt) + 1e-9, f"{name}/{objective}: lower_bound {lb} > optimum {opt} ({who})"
        floor = opt if opt is not None else lb
        if floor is None:
            continue
        slack = SOLVER_REL_TOL * abs(floor) + 1e-9
        if key is not None:
            assert key >= floor - slack, f"{name}/{objective}: {key} beats the proven {floor} ({who or 'lower_bound'})"
            if res.status is Status.OPTIMAL and opt is not None:
                assert _close(key, opt, SOLVER_REL_TOL), f"{name}/{objective}: 'optimal' {key}, optimum {opt} ({who})"
        if res.bound is not None and opt is not None:
            assert res.bound <= opt + slack, f"{name}/{objective}: bound {res.bound} above the optimum {opt} ({who})"


EXACT_CASES = [c for c in CASES if _formulations()[c.values[0]].algorithms[c.values[1]].kind == "exact"]


@pytest.mark.parametrize("problem,algorithm", EXACT_CASES)
def test_exact_run_cut_short_keeps_a_valid_bound(problem: str, algorithm: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An exact solver stopped at its first incumbent (a deterministic work limit,
    :mod:`tests.deterministic`) returns ``time_limit`` (or a proof, if it has one by then) with
    a feasible incumbent no better than the optimum and a bound no higher than it. (A run that
    ends ``optimal`` has its bound set by the engine, so only a cut run shows the solver's own.)"""
    f = registry.get(problem)
    needs_modules(*f.algorithms[algorithm].requires)
    cases = [(i, name, objective, _reference(problem, i, objective))
             for i, (name, _) in enumerate(_instances(problem)) for objective in f.algorithms[algorithm].objectives]
    stop_at_first_solution(monkeypatch)  # after the references: they are full solves
    for i, name, objective, (opt, _, who) in cases:
        res = _solve(problem, algorithm, i, objective, SEEDS[0])
        where = f"{name}/{objective}: {res.status.value} ({res.message[:200]})"
        assert res.status in (Status.OPTIMAL, Status.TIME_LIMIT, Status.INFEASIBLE), where
        if opt is None:
            continue
        slack = SOLVER_REL_TOL * abs(opt) + 1e-9
        key = _key(res)
        assert key is None or key >= opt - slack, f"{where}: {key} beats the optimum {opt} ({who})"
        if res.status is Status.TIME_LIMIT:
            # Every exact solver here keeps a dual bound while it searches (CP-SAT's best bound,
            # the MILP's best bound; brute force's enumeration has none), so a cut run reports it.
            assert res.bound is not None or algorithm == "brute-force", f"{where}: no bound"
        assert res.bound is None or res.bound <= opt + slack, f"{where}: bound {res.bound} above the optimum {opt} ({who})"


_SPY_LIMIT_S = 987.0
"""A time limit no battery instance comes near (they solve in well under a second), so it
never decides a result: the check is only that it reaches the solver."""
_SPY_SEED = 7


def _spy_on_solvers(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float | None, int | None]]:
    """Record ``(solver, time limit, seed)`` of every CP-SAT solve and every Pyomo MILP solve."""
    from ortools.sat.python import cp_model

    from optkit.solvers import milp

    calls: list[tuple[str, float | None, int | None]] = []
    solve_cp = cp_model.CpSolver.Solve

    def cp_spy(self: Any, model: Any, *args: Any, **kwargs: Any) -> Any:
        p = self.parameters
        calls.append(("cp-sat", p.max_time_in_seconds, p.random_seed))  # unset: inf and 1
        return solve_cp(self, model, *args, **kwargs)

    factory = milp._factory

    def factory_spy(solver: str) -> Any:
        opt = factory(solver)
        solve_milp = opt.solve

        def milp_spy(model: Any, **kwargs: Any) -> Any:
            seed_name = milp._OPTION_NAMES.get(solver, (None, None, None))[2]
            calls.append((solver, kwargs.get("timelimit"), (kwargs.get("options") or {}).get(seed_name)))
            return solve_milp(model, **kwargs)

        opt.solve = milp_spy
        return opt

    monkeypatch.setattr(cp_model.CpSolver, "Solve", cp_spy)
    monkeypatch.setattr(milp, "_factory", factory_spy)
    return calls


@pytest.mark.parametrize("problem,algorithm", EXACT_CASES)
def test_exact_solver_receives_the_time_limit_and_seed(problem: str, algorithm: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``time_limit`` and ``seed`` given to ``solve`` reach every CP-SAT or MILP solve an
    exact algorithm makes (a limit may be split among several solves, never exceeded; the seed
    is passed as given). An algorithm that calls no solver (brute force) has nothing to check
    here; one that calls a solver on no battery instance (every instance settled before the
    model, e.g. by a bound) is not covered by this check, and the test says so by failing:
    such an algorithm must make at least one solve on the battery's instances."""
    f = registry.get(problem)
    needs_modules(*f.algorithms[algorithm].requires)
    calls = _spy_on_solvers(monkeypatch)
    for i, (name, inst) in enumerate(_instances(problem)):
        for objective in f.algorithms[algorithm].objectives:
            solve(problem, inst, algorithm, objective=objective, seed=_SPY_SEED, time_limit=_SPY_LIMIT_S,
                  params={**_params(problem, algorithm)})
    if algorithm == "brute-force":
        assert not calls, f"brute force called a solver: {calls[:3]}"
        return
    assert calls, f"{algorithm} made no solver call on the battery's instances"
    for solver, limit, seed in calls:
        assert limit is not None and 0 < limit <= _SPY_LIMIT_S + 1e-9, f"{solver} ran with time limit {limit}"
        assert seed == _SPY_SEED, f"{solver} ran with seed {seed}, not the {_SPY_SEED} given to solve"


def _run_function(algo: Algorithm) -> Any:
    target = getattr(algo.run, "target", None)
    return target() if callable(target) else algo.run


def _bad_value(reading: Any) -> Any:
    """A value the reading must refuse: outside an open reading's range (or not a number), or
    an option no closed reading declares."""
    if reading.open:
        if reading.maximum is not None:
            return reading.maximum + 1
        if reading.minimum is not None:
            return reading.minimum - 1
        return "not-a-number"
    return "no-such-option-" + reading.name


@pytest.mark.parametrize("problem,algorithm", CASES)
def test_unknown_parameter_and_bad_reading_are_input_errors(problem: str, algorithm: str) -> None:
    """``params={"no_such_key": 1}`` and a value outside a reading's options are an
    :class:`InputError` naming the key, raised before the algorithm runs; every reading the
    algorithm takes is an explicit keyword of its run function with the reading's default."""
    f = registry.get(problem)
    needs_modules(*f.algorithms[algorithm].requires)
    _, inst = _instances(problem)[0]
    with pytest.raises(InputError, match="no_such_key"):
        solve(problem, inst, algorithm, params={"no_such_key": 1})
    signature = inspect.signature(_run_function(f.algorithms[algorithm]))
    for reading in readings_for(f, algorithm):
        with pytest.raises(InputError, match=reading.name):
            solve(problem, inst, algorithm, params={reading.name: _bad_value(reading)})
        p = signature.parameters.get(reading.name)
        assert p is not None and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD), (
            f"reading {reading.name} is not a keyword parameter of {algorithm}'s run function")
        assert p.default == reading.default, (
            f"{algorithm}: keyword {reading.name} defaults to {p.default!r}, the reading to {reading.default!r}")


def test_battery_covers_every_registered_algorithm() -> None:
    """The parametrisation is the registry: one case per (problem, algorithm), at least the four
    paper problems."""
    want = {f"{p}/{a}" for p, f in _formulations().items() for a in f.algorithms}
    assert {c.id for c in CASES} == want
    assert {"gpu-mapping", "ddlwmp", "rar-ddls", "nimp"} <= set(_formulations())
