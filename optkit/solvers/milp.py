"""Run a Pyomo model with HiGHS (default) or any installed Pyomo solver, in the engine's terms.

Solver choice
-------------
``solver="highs"`` (the default) hands the model to HiGHS in-process through ``highspy``,
:class:`optkit.solvers.highs_direct.DirectHighs`: the very HiGHS model Pyomo's ``highs``
interface (``pyomo.contrib.solver``) builds, call for call, without its bookkeeping for
updating a model in place, which cost two thirds of a small MILP's solve (that module's
docstring). ``solver="appsi_highs"`` is Pyomo's own HiGHS interface. Any other name goes to
``pyomo.environ.SolverFactory``; a name Pyomo does not know, or a solver that is not installed,
raises :class:`optkit.errors.InputError` (field ``solver``).

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
MIP dual bound for HiGHS), ``None`` when the solver reports none (``±inf``). ``raw`` of the
outcome is Pyomo's results object, or :class:`~optkit.solvers.highs_direct.DirectHighsResults`
for ``highs``.

Anytime evidence
----------------
With ``highs`` and ``appsi_highs`` the adapter calls the interface's ``set_instance``
itself before ``solve`` (which then solves the instance it already holds), so the
``highspy.Highs`` object it solves with (its ``_solver_model``) exists before the solve
starts, and subscribes two highspy callbacks to it: ``cbMipImprovingSolution``
(``kCallbackMipImprovingSolution``: the new incumbent's ``objective_function_value`` and the
``mip_dual_bound`` at that moment) and ``cbMipLogging`` (``kCallbackMipLogging``, at each line
of HiGHS' MIP log: ``mip_primal_bound`` and ``mip_dual_bound``). Both interfaces hand HiGHS the
objective's constant as HiGHS' objective offset, so these values are in the Pyomo objective's
units. The callbacks are highspy's, so no log is parsed. Options (time limit, seed,
gaps) are passed exactly as without them. Other solvers (through ``SolverFactory``, in a
separate process) record only the final point. ``trajectory`` ends with the final objective
and bound.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import time
from typing import Any, Mapping

from optkit import deadline
from optkit.deadline import DeadlineReached, solver_limit
from optkit.errors import InputError
from optkit.result import Status
from optkit.solvers import SolverOutcome
from optkit.solvers.highs_direct import DirectHighsResults
from optkit.validation import check_time_limit

__all__ = ["solve_pyomo_model", "solver_available", "WORK_LIMITS"]

class _NotWhileCut(logging.Filter):
    """Drop Pyomo's "Rule failed when generating expression" error when the rule stopped at the
    call's deadline (:class:`~optkit.deadline.DeadlineReached`, not a failure): the exact solve
    reports it as its ``time_limit`` result."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not isinstance(sys.exc_info()[1], DeadlineReached)


logging.getLogger("pyomo.core").addFilter(_NotWhileCut())

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
    """The solver object: :class:`~optkit.solvers.highs_direct.DirectHighs` for ``highs``,
    Pyomo's ``SolverFactory`` for any other name."""
    if solver == "highs":
        from optkit.solvers.highs_direct import DirectHighs

        return DirectHighs()
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
        Wall-clock seconds; ``None`` for no limit. Inside an exact solve with a deadline
        (:mod:`optkit.deadline`) the solver gets at most what is left of it, and the model's
        translation to HiGHS stops at it.
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
        Pyomo's results object (:class:`~optkit.solvers.highs_direct.DirectHighsResults` for
        ``highs``).
    """
    time_limit = check_time_limit(time_limit)
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
    if opts:
        kwargs["options"] = opts

    trajectory: list[tuple[float, float | None, float | None]] = []
    if solver in ("highs", "appsi_highs"):
        _subscribe_highs(opt, model, trajectory)
    time_limit = solver_limit(time_limit)  # what the translation left of the call's deadline
    if time_limit is not None:
        kwargs["timelimit"] = float(time_limit)

    start = time.perf_counter()
    results = opt.solve(model, **kwargs)
    wall = time.perf_counter() - start

    direct = isinstance(results, DirectHighsResults)
    condition = results.termination_condition if direct else str(results.solver.termination_condition)
    has_solution = results.has_solution if direct else len(results.solution) > 0
    if has_solution and direct:
        results.load()
    elif has_solution:
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
    if direct:
        objective, bound = _finite(results.incumbent) if has_solution else None, _finite(results.bound)
    else:
        objective = _finite(results.problem.upper_bound if minimise else results.problem.lower_bound) if has_solution else None
        bound = _finite(results.problem.lower_bound if minimise else results.problem.upper_bound)
    if has_solution and objective is None:
        objective = _objective_value(model)
    if status == Status.INFEASIBLE:
        bound = None
    trajectory.append((start + wall, objective, bound))
    return SolverOutcome(
        status=status, objective=objective, bound=bound, wall_time_s=wall, solver_status=condition,
        has_solution=has_solution, raw=results, trajectory=sorted(trajectory, key=lambda p: p[0]),
    )


TRANSLATION_CHUNK = 2000
"""Constraints translated to HiGHS between two checks of the call's deadline (module docstring)."""


def _set_instance(opt: Any, model: Any) -> None:
    """``opt.set_instance(model)``; inside an exact solve with a deadline
    (:mod:`optkit.deadline`) the constraints are handed over :data:`TRANSLATION_CHUNK` at a time
    through the interface's ``add_constraints`` (in the model's order, so HiGHS sees
    the same rows and columns in the same order), then the objective, with a deadline check
    between chunks: a model too large to translate in the time left stops there. The model is
    left as it was (the same components active) either way."""
    import pyomo.environ as pyo

    add, set_objective = getattr(opt, "add_constraints", None), getattr(opt, "set_objective", None)
    cons = list(model.component_data_objects(pyo.Constraint, active=True, descend_into=True))
    objs = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    d = deadline.current()
    if (d is None or d.end is None or not callable(add) or not callable(set_objective) or len(objs) != 1
            or len(cons) <= TRANSLATION_CHUNK):
        opt.set_instance(model)
        return
    for item in (*cons, *objs):
        item.deactivate()
    done = 0
    try:
        opt.set_instance(model)  # nothing active: an empty HiGHS model
        while done < len(cons):
            deadline.check("translating the MILP for HiGHS")
            chunk = cons[done:done + TRANSLATION_CHUNK]
            for con in chunk:
                con.activate()
            done += len(chunk)
            add(chunk)
        objs[0].activate()
        set_objective(objs[0])
    finally:
        for item in (*cons[done:], *objs):
            item.activate()


def _subscribe_highs(opt: Any, model: Any, trajectory: list[tuple[float, float | None, float | None]]) -> None:
    """Build Pyomo's HiGHS instance now (:func:`_set_instance`) and subscribe the recording
    callbacks (module docstring)."""
    if not callable(getattr(opt, "set_instance", None)):  # a wrapper without it: final point only
        return
    _set_instance(opt, model)
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
