"""Run a Pyomo model with HiGHS (default) or any installed Pyomo solver, in the engine's terms.

Solver choice
-------------
``solver="highs"`` is Pyomo's ``highs`` interface (``pyomo.contrib.solver``, in-process through
``highspy``; with Pyomo 6.10 and highspy 1.14 both ``highs`` and ``appsi_highs`` work, ``highs``
is the maintained one). Any other name goes to ``pyomo.environ.SolverFactory``; a name Pyomo
does not know, or a solver that is not installed, raises
:class:`optkit.errors.InputError` (field ``solver``).

Tolerances
----------
HiGHS stops at a relative MIP gap of 1e-4 by default, which would call a 0.01 %-suboptimal
incumbent "optimal". This adapter sets ``mip_rel_gap`` (default 1e-9) and ``mip_abs_gap``
(``mip_rel_gap`` as well, in objective units) so that ``optimal`` means optimal to solver
precision. For the other solvers it knows (Gurobi, CPLEX, CBC, GLPK, SCIP) it passes the same
gap and the seed under their own option names; for an unknown solver only ``time_limit`` and
``options`` are passed.

Status mapping (Pyomo ``TerminationCondition`` -> :class:`optkit.result.Status`)
----------------------------------------------------------------------------------
``optimal`` -> ``optimal``; ``maxTimeLimit`` (and the other resource limits: iterations,
evaluations, user interrupt) -> ``time_limit``, with or without an incumbent;
``infeasible`` and ``infeasibleOrUnbounded`` -> ``infeasible`` (the latter is what HiGHS'
presolve reports for an infeasible MILP whose variables are all bounded); anything else ->
``feasible`` when an incumbent exists, ``error`` otherwise.

Deterministic work limits
-------------------------
:data:`WORK_LIMITS` (a test hook, empty in normal use) holds solver options merged into every
solve after all others, e.g. HiGHS' ``mip_max_improving_sols`` or ``mip_max_nodes``. HiGHS
reports such a stop as ``maxIterations``, hence ``time_limit``: a test of "cut short" runs
stops at the same point on any machine instead of racing a wall-clock limit.

The bound is the solver's proven bound (``results.problem.lower_bound`` when minimising, the
MIP dual bound for HiGHS), ``None`` when the solver reports none (``±inf``).

Anytime evidence
----------------
With ``highs`` and ``appsi_highs`` the adapter calls the Pyomo interface's ``set_instance``
itself before ``solve`` (which then only updates the instance it already holds), so the
``highspy.Highs`` object Pyomo solves with (its ``_solver_model``) exists before the solve
starts, and subscribes two highspy callbacks to it: ``cbMipImprovingSolution``
(``kCallbackMipImprovingSolution``: the new incumbent's ``objective_function_value`` and the
``mip_dual_bound`` at that moment) and ``cbMipLogging`` (``kCallbackMipLogging``, at each line
of HiGHS' MIP log: ``mip_primal_bound`` and ``mip_dual_bound``). Pyomo hands HiGHS the
objective's constant as HiGHS' objective offset, so these values are in the Pyomo objective's
units. The callbacks reach HiGHS through Pyomo, so no log is parsed. Options (time limit, seed,
gaps) are passed exactly as without them. Other solvers (through ``SolverFactory``, in a
separate process) record only the final point. ``trajectory`` ends with the final objective
and bound.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, Mapping

from optkit.errors import InputError
from optkit.result import Status
from optkit.solvers import SolverOutcome

__all__ = ["solve_pyomo_model", "solver_available", "WORK_LIMITS"]

WORK_LIMITS: dict[str, Any] = {}
"""Solver options applied to every solve after all others (module docstring); a test hook."""

# Option names (relative gap, absolute gap, seed) of the solvers this adapter knows.
_OPTION_NAMES: dict[str, tuple[str | None, str | None, str | None]] = {
    "highs": ("mip_rel_gap", "mip_abs_gap", "random_seed"),
    "appsi_highs": ("mip_rel_gap", "mip_abs_gap", "random_seed"),
    "gurobi": ("MIPGap", "MIPGapAbs", "Seed"),
    "gurobi_direct": ("MIPGap", "MIPGapAbs", "Seed"),
    "gurobi_persistent": ("MIPGap", "MIPGapAbs", "Seed"),
    "appsi_gurobi": ("MIPGap", "MIPGapAbs", "Seed"),
    "cplex": ("mip_tolerances_mipgap", "mip_tolerances_absmipgap", "randomseed"),
    "cplex_direct": ("mip_tolerances_mipgap", "mip_tolerances_absmipgap", "randomseed"),
    "cbc": ("ratioGap", "allowableGap", "randomCbcSeed"),
    "glpk": ("mipgap", None, None),
    "scip": ("limits/gap", "limits/absgap", "randomization/randomseedshift"),
}

_LIMIT_CONDITIONS = {"maxTimeLimit", "maxIterations", "maxEvaluations", "userInterrupt", "resourceInterrupt"}
_INFEASIBLE_CONDITIONS = {"infeasible", "infeasibleOrUnbounded"}


def solver_available(solver: str) -> bool:
    """Whether Pyomo knows ``solver`` and it is installed."""
    try:
        return bool(_factory(solver).available(exception_flag=False))
    except Exception:  # an unknown plugin may raise anything while probing
        return False


def _factory(solver: str) -> Any:
    import pyomo.environ as pyo

    return pyo.SolverFactory(solver)


def solve_pyomo_model(
    model: Any,
    *,
    solver: str = "highs",
    time_limit: float | None = None,
    seed: int | None = None,
    mip_rel_gap: float = 1e-9,
    write: str | os.PathLike[str] | None = None,
    options: Mapping[str, Any] | None = None,
) -> SolverOutcome:
    """Solve a Pyomo ``ConcreteModel`` with one active objective.

    Parameters
    ----------
    solver
        Pyomo solver name (default ``highs``).
    time_limit
        Wall-clock seconds; ``None`` for no limit.
    seed
        The solver's random seed (HiGHS ``random_seed``), where the adapter knows its name.
    mip_rel_gap
        Relative MIP gap at which the solver may declare optimality; the absolute gap
        is set to the same number (objective units).
    write
        Write the model to this file before solving; the format follows the extension
        (``.mps``, ``.lp``, and any other format Pyomo writes).
    options
        Solver options passed through verbatim; they override the ones set here.

    Returns
    -------
    SolverOutcome
        When ``has_solution`` the incumbent is loaded into the model's variables. ``raw`` is
        Pyomo's results object.
    """
    if time_limit is not None and not time_limit > 0:
        raise InputError("time_limit", f"must be > 0 seconds, got {time_limit!r}")
    if not mip_rel_gap >= 0:
        raise InputError("mip_rel_gap", f"must be >= 0, got {mip_rel_gap!r}")
    try:
        opt = _factory(solver)
        available = bool(opt.available(exception_flag=False))
    except Exception as exc:  # pragma: no cover - depends on installed plugins
        raise InputError("solver", f"{solver!r} cannot be loaded by Pyomo: {exc}") from None
    if not available:
        raise InputError("solver", f"{solver!r} is not a Pyomo solver installed here (try 'highs')")

    if write is not None:
        path = os.fspath(write)
        ext = os.path.splitext(path)[1].lower().lstrip(".")
        if not ext:
            raise InputError("write", f"needs a file extension naming the format (.mps, .lp), got {path!r}")
        try:
            model.write(path, io_options={"symbolic_solver_labels": True})
        except (ValueError, RuntimeError) as exc:
            raise InputError("write", f"cannot write {path!r}: {exc}") from None

    opts: dict[str, Any] = {}
    rel_name, abs_name, seed_name = _OPTION_NAMES.get(solver, (None, None, None))
    if rel_name is not None:
        opts[rel_name] = float(mip_rel_gap)
    if abs_name is not None:
        opts[abs_name] = float(mip_rel_gap)
    if seed_name is not None and seed is not None:
        opts[seed_name] = int(seed) % (2**31 - 1)
    if options:
        opts.update(options)
    opts.update(WORK_LIMITS)

    kwargs: dict[str, Any] = {"load_solutions": False}
    if time_limit is not None:
        kwargs["timelimit"] = float(time_limit)
    if opts:
        kwargs["options"] = opts

    trajectory: list[tuple[float, float | None, float | None]] = []
    if solver in ("highs", "appsi_highs"):
        _subscribe_highs(opt, model, trajectory)

    start = time.perf_counter()
    results = opt.solve(model, **kwargs)
    wall = time.perf_counter() - start

    condition = str(results.solver.termination_condition)
    has_solution = len(results.solution) > 0
    if has_solution:
        _load(model, results)

    if condition == "optimal" and has_solution:
        status = Status.OPTIMAL
    elif condition in _LIMIT_CONDITIONS:
        status = Status.TIME_LIMIT
    elif condition in _INFEASIBLE_CONDITIONS:
        status = Status.INFEASIBLE
    elif has_solution:
        status = Status.FEASIBLE
    else:
        status = Status.ERROR

    minimise = _is_minimise(model)
    objective = _finite(results.problem.upper_bound if minimise else results.problem.lower_bound) if has_solution else None
    if has_solution and objective is None:
        objective = _objective_value(model)
    bound = _finite(results.problem.lower_bound if minimise else results.problem.upper_bound)
    if status == Status.INFEASIBLE:
        bound = None
    trajectory.append((start + wall, objective, bound))
    return SolverOutcome(
        status=status, objective=objective, bound=bound, wall_time_s=wall, solver_status=condition,
        has_solution=has_solution, raw=results, trajectory=sorted(trajectory, key=lambda p: p[0]),
    )


def _subscribe_highs(opt: Any, model: Any, trajectory: list[tuple[float, float | None, float | None]]) -> None:
    """Build Pyomo's HiGHS instance now and subscribe the recording callbacks (module docstring)."""
    if not callable(getattr(opt, "set_instance", None)):  # a wrapper without it: final point only
        return
    opt.set_instance(model)
    highs = getattr(opt, "_solver_model", None)
    if highs is None or not hasattr(highs, "cbMipImprovingSolution"):  # pragma: no cover - old highspy
        return

    def improving(event: Any) -> None:
        out = event.data_out
        trajectory.append((time.perf_counter(), _finite(out.objective_function_value), _finite(out.mip_dual_bound)))

    def logging(event: Any) -> None:
        out = event.data_out
        trajectory.append((time.perf_counter(), _finite(out.mip_primal_bound), _finite(out.mip_dual_bound)))

    highs.cbMipImprovingSolution.subscribe(improving)
    highs.cbMipLogging.subscribe(logging)


def _load(model: Any, results: Any) -> None:
    """Load the incumbent into the model's variables. Pyomo warns when loading a solution from
    results with an ``aborted`` (time-limit) status; the status has been read already, so it is
    set to ``ok`` while loading and restored afterwards."""
    from pyomo.opt import SolverStatus

    saved = results.solver.status
    results.solver.status = SolverStatus.ok
    try:
        model.solutions.load_from(results)
    finally:
        results.solver.status = saved


def _is_minimise(model: Any) -> bool:
    import pyomo.environ as pyo

    objs = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objs) != 1:
        raise InputError("model", f"must have exactly one active objective, has {len(objs)}")
    return objs[0].sense == pyo.minimize


def _objective_value(model: Any) -> float | None:
    import pyomo.environ as pyo

    obj = next(iter(model.component_data_objects(pyo.Objective, active=True)))
    try:
        return float(pyo.value(obj))
    except (ValueError, TypeError):
        return None


def _finite(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None
