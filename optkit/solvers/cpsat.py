"""Run an OR-Tools CP-SAT model and report the outcome in the engine's terms.

Status mapping (CP-SAT ``CpSolverStatus`` -> :class:`optkit.result.Status`):

=================  ==========================================================================
``OPTIMAL``        ``optimal``
``FEASIBLE``       ``time_limit`` when a time limit was set and the solve ran up to it
                   (the only way a plain search stops with an unproven incumbent), or when a
                   :data:`WORK_LIMITS` entry is set; otherwise ``feasible`` (another limit the
                   caller set on the model's parameters)
``INFEASIBLE``     ``infeasible``
``UNKNOWN``        ``time_limit`` without a solution (the limit stopped the search first)
``MODEL_INVALID``  ``error``
=================  ==========================================================================

The bound is CP-SAT's ``BestObjectiveBound`` (a lower bound when minimising), in the model's
own (integer) objective units; scaling back to physical units is the caller's business.

Anytime evidence: every solve with an objective runs under a ``CpSolverSolutionCallback`` that
records ``(time, ObjectiveValue, BestObjectiveBound)`` at each improving solution, and sets
``CpSolver.best_bound_callback`` to record each bound improvement; the outcome's ``trajectory``
ends with the final objective and bound. The callbacks only read; parameters (time limit,
seed, workers) are set as without them.
"""

from __future__ import annotations

import os
import time
from typing import Any, Mapping

from optkit.errors import InputError
from optkit.result import Status
from optkit.solvers import SolverOutcome

__all__ = ["solve_cp_model", "default_workers", "WORK_LIMITS"]

WORK_LIMITS: dict[str, Any] = {}
"""Deterministic work limits, a test hook (empty in normal use): CP-SAT parameters such as
``max_deterministic_time`` or ``stop_after_first_solution`` set on every solve after optkit's own.
While one is set, a search that stops with an unproven incumbent is reported ``time_limit``, as
a wall-clock cut is, so a test of "cut short" runs stops at the same point on any machine
(``monkeypatch.setitem(cpsat.WORK_LIMITS, "stop_after_first_solution", True)``)."""

# A solve that stopped within this fraction of its time limit is taken to have been cut by it.
_LIMIT_FRACTION = 0.9


def default_workers() -> int:
    """CP-SAT search workers: ``min(os.cpu_count(), 8)`` (at least 1)."""
    return max(1, min(os.cpu_count() or 1, 8))


def solve_cp_model(
    model: Any,
    *,
    time_limit: float | None = None,
    workers: int | None = None,
    seed: int | None = None,
    hint: Mapping[Any, int] | None = None,
    log: bool = False,
) -> SolverOutcome:
    """Solve ``model`` (an ``ortools.sat.python.cp_model.CpModel``) with CP-SAT.

    Parameters
    ----------
    time_limit
        Wall-clock seconds (``max_time_in_seconds``); ``None`` for no limit.
    workers
        ``num_workers``; default :func:`default_workers`.
    seed
        CP-SAT's ``random_seed``; ``None`` keeps CP-SAT's default (0), so runs are repeatable
        with one worker. With several workers the search is parallel and the incumbent may vary
        between runs (the optimum and its proof do not).
    hint
        ``{variable: value}`` passed to ``AddHint`` (a warm start, repaired if infeasible).
    log
        Print CP-SAT's search log.

    Returns
    -------
    SolverOutcome
        ``raw`` is the ``CpSolver`` (read the incumbent with ``raw.Value``).
    """
    from ortools.sat.python import cp_model

    if time_limit is not None and not time_limit > 0:
        raise InputError("time_limit", f"must be > 0 seconds, got {time_limit!r}")
    if workers is not None and workers < 1:
        raise InputError("workers", f"must be >= 1, got {workers!r}")
    if hint:
        for var, value in hint.items():
            model.AddHint(var, int(value))
    solver = cp_model.CpSolver()
    params = solver.parameters
    params.num_workers = int(workers) if workers is not None else default_workers()
    if time_limit is not None:
        params.max_time_in_seconds = float(time_limit)
    if seed is not None:
        params.random_seed = int(seed) % (2**31 - 1)
    params.log_search_progress = bool(log)
    for name, value in WORK_LIMITS.items():
        setattr(params, name, value)

    has_objective = bool(model.HasObjective())
    trajectory: list[tuple[float, float | None, float | None]] = []
    callback = None
    if has_objective:
        class _Record(cp_model.CpSolverSolutionCallback):  # type: ignore[misc]
            def on_solution_callback(self) -> None:
                trajectory.append((time.perf_counter(), float(self.ObjectiveValue()),
                                   float(self.BestObjectiveBound())))

        callback = _Record()
        solver.best_bound_callback = lambda b: trajectory.append((time.perf_counter(), None, float(b)))

    start = time.perf_counter()
    code = solver.Solve(model, callback)
    wall = time.perf_counter() - start
    name = solver.StatusName(code)

    has_solution = code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    if code == cp_model.OPTIMAL:
        status = Status.OPTIMAL
    elif code == cp_model.FEASIBLE:
        cut = bool(WORK_LIMITS) or (time_limit is not None and wall >= _LIMIT_FRACTION * time_limit)
        status = Status.TIME_LIMIT if cut else Status.FEASIBLE
    elif code == cp_model.INFEASIBLE:
        status = Status.INFEASIBLE
    elif code == cp_model.UNKNOWN:
        status = Status.TIME_LIMIT
    else:  # MODEL_INVALID
        status = Status.ERROR

    objective = solver.ObjectiveValue() if (has_solution and has_objective) else None
    bound: float | None = None
    if has_objective and code in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.UNKNOWN):
        bound = solver.BestObjectiveBound()
    if has_objective:
        trajectory.append((start + wall, objective, bound))
    return SolverOutcome(
        status=status, objective=objective, bound=bound, wall_time_s=wall, solver_status=name,
        has_solution=has_solution, raw=solver, trajectory=sorted(trajectory, key=lambda p: p[0]),
    )
