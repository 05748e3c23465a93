"""One battery of checks for every registered algorithm of every problem (issues 17 and 24).

The general checks are :func:`optkit.testing.check_algorithm`'s, which anyone can run on their
own algorithm; ``test_check_algorithm_passes`` runs all of them on one registered algorithm (one
call, so that under pytest-xdist an algorithm's runs are made in one process; the failure names
each failed check), with one :class:`optkit.testing.RunCache` for the whole module so that every
exact reference is solved once per process. The two checks of exact solvers' internals (a run cut short keeps a valid bound; the time
limit and seed reach CP-SAT and the MILP) need this repository's test hooks and stay here.

Modelled on scikit-learn's ``parametrize_with_checks``: the module walks the registry
(:func:`optkit.registry.all_formulations`) when pytest collects it and runs the same checks on
every available algorithm, so an algorithm registered later is covered by being registered.
Test ids read ``problem/algorithm``; an unavailable algorithm (a missing optional package) is
a skip naming the package (``-rs``), and a failure in CI (:mod:`tests.needs`).

Instances: :func:`optkit.testing.default_cases`, the instances ``check_algorithm`` runs by
default: every size class the formulation declares (``SIZE_CLASSES`` of its ``generate``
module), each up to the largest size all its exact solvers prove in seconds; seeded, so the
same in every run. Seeds :data:`SEEDS` (``check_algorithm``'s defaults, one of them >= 2), and
the ``PYTHONHASHSEED`` values of its ``hash_seed_independent`` check, whose worker processes
:data:`CACHE` starts once for the whole module. No time limit is given to any run (no clock
decides a verdict); a hang is a failure raised by pytest-timeout.

Oracles, none of them the algorithm under test:

* ``evaluate`` of the formulation, called afresh on the returned solution, for feasibility and
  the objective;
* the proven optimum: the exact oracle (brute force where it holds the instance, CP-SAT, the
  MILP; the first proof wins, never the algorithm under test), so every exact algorithm is
  checked against the others; nothing may beat it; where no exact algorithm supports an
  objective, the formulation's proven ``lower_bound`` stands in;
* any feasible solution found by any algorithm disproves ``infeasible``;
* exact solvers are also stopped at their first incumbent (a deterministic work limit): the
  bound they then report must not exceed the optimum;
* the declared readings (:mod:`optkit.readings`) for the parameter checks;
* a spy on CP-SAT (``CpSolver.Solve``) and on the Pyomo MILP interface: the time limit and seed
  given to ``solve`` reach every solve of an exact algorithm.

The status discipline (:class:`optkit.result.Status`): ``optimal`` only from exact algorithms;
``infeasible`` only when true (no algorithm finds a solution and the exact oracle proves it);
heuristics, peers and baselines return ``feasible`` or ``no_solution`` (with a message and no
solution); nothing returns ``error`` on a valid instance.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

import pytest

from optkit import registry
from optkit.errors import InputError
from optkit.formulation import Algorithm, Formulation
from optkit.readings import accepted_params
from optkit.result import Result, Status, scalar_objective
from optkit.solve import solve
from optkit.testing import RunCache, _checks as checks, check_algorithm, default_cases
from tests.deterministic import stop_at_first_solution
from tests.needs import needs_modules

N_INSTANCES = int(os.environ.get("OPTKIT_BATTERY_INSTANCES", "0"))
"""0 (default): the instances of :func:`optkit.testing.default_cases`. The environment variable
``OPTKIT_BATTERY_INSTANCES`` widens the sweep for a manual run: the first N of the first suite
instead (the whole suite: 1000)."""
SEEDS = checks.DEFAULT_SEEDS
SOLVER_REL_TOL = checks.SOLVER_REL_TOL
CACHE = RunCache()
"""Runs and exact references shared by every check of every algorithm (solved once)."""


def _formulations() -> dict[str, Formulation]:
    return registry.all_formulations()


def _cases() -> list[Any]:
    """One pytest param per (problem, algorithm)."""
    return [pytest.param(problem, name, id=f"{problem}/{name}")
            for problem, f in _formulations().items() for name in f.algorithms]


CASES = _cases()


@lru_cache(maxsize=None)
def _instances(problem: str) -> tuple[tuple[str, Any], ...]:
    """``(name, instance object)``: :func:`optkit.testing.default_cases`, or the first
    :data:`N_INSTANCES` of the first suite."""
    f = registry.get(problem)
    if not N_INSTANCES:
        return tuple(default_cases(problem))
    assert f.suites, f"{problem} declares no suite: the battery needs small seeded instances"
    suite = f.suites[next(iter(f.suites))]
    items = suite.build()[:N_INSTANCES]
    assert items, f"suite {suite.name} of {problem} is empty"
    return tuple((name, f.instance_from_dict(data)) for name, data in items)


def _first_class(problem: str) -> list[int]:
    """Indices of the instances of the first size class (all of them under
    ``OPTKIT_BATTERY_INSTANCES``): the two checks of exact solvers' internals run there, as
    ``check_algorithm`` repeats an exact algorithm there only."""
    names = [name.split("/")[0] for name, _ in _instances(problem)]
    return [i for i, n in enumerate(names) if n == names[0] or N_INSTANCES]


def _params(problem: str, algorithm: str) -> dict[str, Any]:
    """One search worker where the algorithm takes ``workers``: parallel CP-SAT is documented
    as not repeatable (:func:`optkit.solvers.cpsat.solve_cp_model`), one worker is."""
    return {"workers": 1} if "workers" in accepted_params(registry.get(problem), algorithm) else {}


def _solve(problem: str, algorithm: str, index: int, objective: str, seed: int | None) -> Result:
    """``solve`` without a time limit."""
    _, inst = _instances(problem)[index]
    return solve(problem, inst, algorithm, objective=objective, seed=seed, params=_params(problem, algorithm))


def _key(res: Result) -> float | None:
    return scalar_objective(res.objective, res.metrics, res.objective_name)


@lru_cache(maxsize=None)
def _reference(problem: str, index: int, objective: str) -> tuple[float | None, bool, str]:
    """``(optimum, proven_infeasible, who)`` from the exact oracle (the first proof among the
    exact algorithms supporting ``objective``), through :func:`optkit.testing.check_algorithm`'s
    cache."""
    opt, infeasible, who, trouble = checks.reference_optimum(problem, [inst for _, inst in _instances(problem)], index,
                                                             objective, cache=CACHE, seed=SEEDS[0])
    assert not trouble, f"{problem} instance {index} ({objective}): {trouble}"
    return opt, infeasible, who


# ----------------------------------------------------------------------------- the checks
@pytest.mark.parametrize("problem,algorithm", CASES)
def test_check_algorithm_passes(problem: str, algorithm: str) -> None:
    """Every check of :func:`optkit.testing.check_algorithm` (one call per algorithm, so that its
    runs are made once in one process; the report names each failed check), none skipped:

    * ``solution_passes_evaluate``: every returned solution is feasible for a fresh
      ``evaluate`` call on the instance as given, and the objective ``solve`` reports, and any
      objective the algorithm itself put in its result, equal ``evaluate``'s value; the
      algorithm leaves its input unchanged and returns JSON data;
    * ``same_seed_same_result``: two runs with the same seed (each of :data:`SEEDS`) return the
      same status, solution and objective; an algorithm not declared ``randomized`` returns the
      same for every seed;
    * ``hash_seed_independent``: the first seed's runs give the same status and solution in
      fresh processes under ``PYTHONHASHSEED`` 0 and 1 as in this one;
    * ``never_beats_optimum``: no solution beats the optimum the exact oracle proves, nor the
      formulation's proven lower bound; an ``optimal`` result equals the optimum; a result's
      own ``bound`` never exceeds it;
    * ``status_discipline``: ``optimal`` only from exact algorithms with a proof;
      ``infeasible`` only where it is true (the exact oracle proves it and no algorithm finds a
      solution); ``no_solution`` carries a message and no solution; no ``error`` and no
      ``time_limit`` (no limit was set) on a valid instance;
    * ``bad_parameter_is_input_error``: ``params={"no_such_key": 1}`` and a value outside a
      reading's options are an :class:`InputError` naming the key, raised before the algorithm
      runs; every reading the algorithm takes is an explicit keyword of its run function with
      the reading's default."""
    f = registry.get(problem)
    needs_modules(*f.algorithms[algorithm].requires)
    given = {"instances": [inst for _, inst in _instances(problem)]} if N_INSTANCES else {}
    report = check_algorithm(problem, algorithm, seeds=SEEDS, params=_params(problem, algorithm), cache=CACHE,
                             raise_on_failure=False, **given)
    assert report.passed, str(report)
    assert [r.name for r in report.results] == list(checks.CHECKS)
    assert not [r.name for r in report.results if r.skipped], str(report)  # every registered algorithm is checked


def test_default_cases_of_gpu_mapping_hold_tensor_parallel_and_moe_jobs() -> None:
    """Issue 37 item 2: ``check_algorithm``'s default instances of gpu-mapping (so every
    algorithm's battery run above, and a researcher's plug-in) include the size class
    ``llm-small``: jobs with a tensor-parallel stage (a replica's t = 2 slices on one server) and
    jobs with an MoE stage (expert groups, uniform and zipf routing), every one of them solved to a
    proven optimum by the exact oracle (CP-SAT or brute force; the MILP refuses MoE jobs) on both
    objectives."""
    cases = [(label, inst) for label, inst in _instances("gpu-mapping") if label.startswith("llm-small/")]
    assert [label for label, _ in cases] == ["llm-small/llm-tp-s0", "llm-small/llm-tp-s1", "llm-small/llm-moe-s0",
                                             "llm-small/llm-moe-s2", "llm-small/llm-mixed-s1"]
    stages = [st for _, inst in cases for st in inst.job.stages]
    assert sum(st.tensor_parallel > 1 for st in stages) >= 3 and sum(st.experts > 1 for st in stages) >= 4
    assert {st.routing for st in stages if st.experts > 1} == {"uniform", "zipf"}
    index = {label: i for i, (label, _) in enumerate(_instances("gpu-mapping"))}
    for label, _ in cases:
        for objective in ("alpha", "cut"):
            opt, infeasible, who = _reference("gpu-mapping", index[label], objective)
            assert opt is not None and opt > 0 and not infeasible, (label, objective, who)


def first_fit_ignoring_slices(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    """A plug-in that knows only pipeline jobs: every GPU-vertex of every stage (slices and expert
    groups alike) to the first server with a free GPU left, in stage order, as if each were a
    replica of its own (it ignores that a replica's tensor slices must share a server)."""
    free = list(instance.servers)
    assignment = []
    for st in instance.job.stages:
        row = []
        for _ in range(st.replicas * st.tensor_parallel * st.experts):
            m = next(i for i, left in enumerate(free) if left > 0)
            free[m] -= 1
            row.append(m)
        assignment.append(row)
    return Result(Status.FEASIBLE, solution={"assignment": assignment})


def test_a_plugin_that_splits_tensor_slices_fails_check_algorithm_by_default() -> None:
    """The default cases alone (no ``instances`` given) catch a plug-in that splits a
    tensor-parallel replica over servers: it passes on every pipeline job of the first three size
    classes and fails ``solution_passes_evaluate`` on the ``llm-small`` jobs only."""
    algo = Algorithm("first-fit-slices", first_fit_ignoring_slices, "heuristic", "first fit, slices ignored",
                     ("alpha", "cut"))
    report = check_algorithm("gpu-mapping", algo, seeds=(0,), hash_seeds=(), checks=["solution_passes_evaluate"],
                             raise_on_failure=False, cache=CACHE)
    assert report.failed == ["solution_passes_evaluate"]
    text = str(report)
    assert "llm-small/llm-tp-s0" in text and "replicas/" not in text, text


EXACT_CASES = [c for c in CASES if _formulations()[c.values[0]].algorithms[c.values[1]].kind == "exact"]


@pytest.mark.parametrize("problem,algorithm", EXACT_CASES)
def test_exact_run_cut_short_keeps_a_valid_bound(problem: str, algorithm: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An exact solver stopped at its first incumbent (a deterministic work limit,
    :mod:`tests.deterministic`), on the first size class, returns ``time_limit`` (or a proof, if it has one by then) with
    a feasible incumbent no better than the optimum and a bound no higher than it. (A run that
    ends ``optimal`` has its bound set by the engine, so only a cut run shows the solver's own.)"""
    f = registry.get(problem)
    needs_modules(*f.algorithms[algorithm].requires)
    cases = [(i, name, objective, _reference(problem, i, objective))
             for i, (name, _) in enumerate(_instances(problem)) if i in _first_class(problem)
             for objective in f.algorithms[algorithm].objectives]
    stop_at_first_solution(monkeypatch)  # after the references: they are full solves
    for i, name, objective, (opt, _, who) in cases:
        try:
            res = _solve(problem, algorithm, i, objective, SEEDS[0])
        except InputError:  # beyond a brute force's size limit: not its case
            assert algorithm == "brute-force", f"{algorithm} refused {name}"
            continue
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
    for i in _first_class(problem):
        name, inst = _instances(problem)[i]
        for objective in f.algorithms[algorithm].objectives:
            try:
                solve(problem, inst, algorithm, objective=objective, seed=_SPY_SEED, time_limit=_SPY_LIMIT_S,
                      params={**_params(problem, algorithm)})
            except InputError:  # beyond a brute force's size limit: not its case
                assert algorithm == "brute-force", f"{algorithm} refused {name}"
    if algorithm == "brute-force":
        assert not calls, f"brute force called a solver: {calls[:3]}"
        return
    assert calls, f"{algorithm} made no solver call on the battery's instances"
    for solver, limit, seed in calls:
        assert limit is not None and 0 < limit <= _SPY_LIMIT_S + 1e-9, f"{solver} ran with time limit {limit}"
        assert seed == _SPY_SEED, f"{solver} ran with seed {seed}, not the {_SPY_SEED} given to solve"


def test_battery_covers_every_registered_algorithm() -> None:
    """The parametrisation is the registry: one case per (problem, algorithm), at least the four
    paper problems."""
    want = {f"{p}/{a}" for p, f in _formulations().items() for a in f.algorithms}
    assert {c.id for c in CASES} == want
    assert {"gpu-mapping", "ddlwmp", "rar-ddls", "nimp"} <= set(_formulations())
