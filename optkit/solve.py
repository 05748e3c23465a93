"""Run one algorithm on one instance in this process and measure what it returned.

This is the single place where an algorithm's output becomes a :class:`~optkit.result.Result`:
the algorithm is timed, its solution is handed to the formulation's ``evaluate``, and the
objective and metrics come from there. An algorithm's own bookkeeping is never trusted.
"""

from __future__ import annotations

import math
import time
from typing import Any, Sequence

from optkit import registry
from optkit.anytime import Point, finish_trajectory, recording
from optkit.errors import InputError
from optkit.formulation import Formulation
from optkit.pristine import InputWatch
from optkit.readings import resolve_params
from optkit.result import Result, Status, relative_gap, scalar_objective

__all__ = ["solve", "finish_result", "check_algorithm"]


def check_algorithm(formulation: Formulation, algorithm: str, objective: str | None) -> str:
    """Validate the algorithm and objective names; returns the objective to use."""
    if algorithm not in formulation.algorithms:
        known = ", ".join(formulation.algorithms)
        raise InputError("algorithm", f"is unknown for {formulation.name}: {algorithm!r} (known: {known})")
    objective = objective or formulation.default_objective
    if objective not in formulation.objectives:
        raise InputError("objective", f"is unknown for {formulation.name}: {objective!r} (known: {', '.join(formulation.objectives)})")
    algo = formulation.algorithms[algorithm]
    if objective not in algo.objectives:
        raise InputError("objective", f"{objective!r} is not supported by {algorithm} (it supports {', '.join(algo.objectives)})")
    if not algo.available():
        raise InputError("algorithm", f"{algorithm} needs the optional packages {', '.join(algo.requires)}; install optkit[peers]")
    return objective


def _check_finite(problem: str, objective: str, value: Any) -> None:
    """A feasible solution's objective must be finite: instances hold finite numbers only, so an
    infinite or NaN objective means the instance's numbers overflow double precision (a bandwidth
    of 1e-300 B/s, times of 1e308 s). That is bad input, named as such."""
    parts = value if isinstance(value, (list, tuple)) else [value]
    for v in parts:
        if isinstance(v, (int, float)) and not math.isfinite(v):
            raise InputError("instance", f"gives the non-finite {objective} {v!r}: its numbers overflow double "
                                         "precision; give times, bytes and bandwidths in SI units of realistic size",
                             problem=problem)


def finish_result(
    formulation: Formulation,
    instance: Any,
    result: Result,
    *,
    algorithm: str,
    objective: str,
    params: dict[str, Any],
    seed: int | None,
    wall_time_s: float,
    solver_points: Sequence[Point] | None = None,
) -> Result:
    """Fill in what the engine owns: name, parameters, time, ``evaluate``'s verdict, and the
    anytime trajectory (``solver_points`` closed by the run's final point, see
    :func:`optkit.anytime.finish_trajectory`)."""
    result.algorithm = algorithm
    result.problem = formulation.name
    result.objective_name = objective
    result.params = dict(params)
    result.seed = seed
    result.wall_time_s = wall_time_s
    if result.solution is not None:
        ev = formulation.evaluate(instance, result.solution)
        result.metrics = {**ev.metrics, **{f"objective.{k}": v for k, v in ev.objectives.items()}}
        if not ev.feasible:
            result.status = Status.ERROR
            result.objective = None
            result.message = "evaluate rejected the solution: " + "; ".join(ev.violations[:5])
        else:
            for name, v in ev.objectives.items():
                _check_finite(formulation.name, name, v)
            value = ev.objectives[objective]
            result.objective = list(value) if isinstance(value, (list, tuple)) else value
    else:
        result.objective = None  # no solution, no objective: an algorithm's own number is never passed on
        if result.status in (Status.OPTIMAL, Status.FEASIBLE):
            result.status = Status.ERROR
            result.message = result.message or "the algorithm returned no solution"
    key = scalar_objective(result.objective, result.metrics, objective)
    if result.status == Status.OPTIMAL and key is not None:
        # A proof of optimality is a bound equal to the objective (up to the solver's tolerance).
        if result.bound is None or result.bound > key:
            result.bound = key
    result.gap = relative_gap(key, result.bound)
    bound = result.bound if result.status not in (Status.INFEASIBLE, Status.ERROR) else None
    points = list(solver_points or [])
    if result.status == Status.ERROR:  # a rejected or missing solution: no solver value is evidence
        points = []
    elif key is None:  # no solution returned: the solver's bounds stand, its incumbents do not
        points = [(t, None, b) for t, _, b in points]
    result.anytime = finish_trajectory(points, wall_time_s, key, bound)
    return result


def solve(
    problem: str | Formulation,
    instance: Any,
    algorithm: str,
    *,
    objective: str | None = None,
    time_limit: float | None = None,
    seed: int | None = None,
    params: dict[str, Any] | None = None,
) -> Result:
    """Run ``algorithm`` on ``instance`` (an instance object or dict) and evaluate its solution.

    ``params`` are validated against the algorithm's keywords and the problem's readings
    (:func:`optkit.readings.resolve_params`): an unknown key or an option outside a reading's
    options is an :class:`InputError`; every reading the algorithm takes and ``params`` leaves
    out is filled with its default, so ``Result.params`` names every choice the run made.

    Exceptions other than :class:`InputError` propagate; the harness turns them into ``error``
    rows, the CLI into exit status 1.

    ``problem`` is a registered problem's name, or a :class:`Formulation` object (what
    :func:`optkit.testing.check_algorithm` passes to run an algorithm it was handed directly).

    The algorithm gets a copy of ``instance`` re-parsed from its canonical JSON, never the
    object the solution is judged against (:mod:`optkit.pristine`): an algorithm that changes
    its copy gets status ``error`` with the message ``mutated its input: field ...`` naming the
    first changed field; the solution is judged in its JSON form (what ``optkit solve --json``
    prints), and one JSON cannot hold as such (a numpy integer) is an ``error`` naming its path.
    """
    formulation = problem if isinstance(problem, Formulation) else registry.get(problem)
    problem = formulation.name
    if isinstance(instance, dict):
        try:
            instance = formulation.instance_from_dict(instance)
        except InputError as exc:
            raise exc.with_problem(problem) from None
    objective = check_algorithm(formulation, algorithm, objective)
    params = resolve_params(formulation, algorithm, params)
    algo = formulation.algorithms[algorithm]
    target = getattr(algo.run, "target", None)
    if callable(target):  # a lazy_run entry: import its module (a solver library: ~1 s) before the clock
        target()  # starts, so the time limit and wall time are the algorithm's own
    watch = InputWatch(formulation, instance)  # the algorithm runs on its own copy; `instance` stays as given
    start = time.perf_counter()
    with recording(start) as points:
        result = algo.run(watch.copy, objective=objective, time_limit=time_limit, seed=seed, **params)
    elapsed = time.perf_counter() - start
    watch.judge(result)  # a changed copy or a solution JSON cannot hold: an error naming it
    return finish_result(
        formulation, instance, result, algorithm=algorithm, objective=objective,
        params=params, seed=seed, wall_time_s=elapsed, solver_points=points,
    )
