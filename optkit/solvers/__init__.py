"""Engine-level solver adapters: they know models and solvers, never a paper.

* :mod:`optkit.solvers.cpsat`: :func:`~optkit.solvers.cpsat.solve_cp_model` runs an OR-Tools
  CP-SAT ``CpModel``.
* :mod:`optkit.solvers.milp`: :func:`~optkit.solvers.milp.solve_pyomo_model` runs a Pyomo model
  with HiGHS (or any installed Pyomo solver); HiGHS gets the model through
  :mod:`optkit.solvers.highs_direct` (highspy, the model Pyomo's own HiGHS interface would build).

Both return a :class:`SolverOutcome` whose ``status`` is an :class:`optkit.result.Status`, so a
formulation maps a solver's verdict the same way whichever solver ran. Neither module is imported
here: importing :mod:`optkit.solvers` needs neither OR-Tools nor Pyomo.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from optkit.result import Status

__all__ = ["SOLVER_LIBRARIES", "SolverOutcome", "preload_libraries"]

SOLVER_LIBRARIES = ("ortools.sat.python.cp_model", "pyomo.environ")
"""The solver libraries the exact algorithms import (CP-SAT; Pyomo for the MILPs)."""


def preload_libraries() -> None:
    """Import :data:`SOLVER_LIBRARIES` (those installed) now, once per process: what
    :func:`optkit.solve.solve` does before an exact algorithm's clock starts, so its time limit
    is spent on the solve, not on a second of imports."""
    import importlib

    for name in SOLVER_LIBRARIES:
        try:
            importlib.import_module(name)
        except ImportError:  # an optional solver that is not installed: its algorithms say so
            pass


@dataclass
class SolverOutcome:
    """What one solver call returned, in the engine's terms.

    Attributes
    ----------
    status
        :class:`~optkit.result.Status` (``optimal``, ``feasible``, ``infeasible``,
        ``time_limit`` with or without a solution, ``error``).
    objective
        The solver's objective value of its incumbent (model units), ``None`` without one.
    bound
        The proven bound on the optimum (a lower bound when minimising), ``None`` if unknown.
    wall_time_s
        Wall-clock seconds of the solve call.
    solver_status
        The solver's own status name (``OPTIMAL``, ``maxTimeLimit``, ...).
    has_solution
        Whether an incumbent exists (its values are readable through ``raw``
        for CP-SAT, loaded into the Pyomo model's variables for a MILP).
    raw
        The solver object (``CpSolver``) or results object (Pyomo ``SolverResults``).
    trajectory
        ``(time.perf_counter() reading, incumbent, bound)`` at each improving solution
        and bound the solver reported, in model units, ending with the final outcome (see
        :mod:`optkit.anytime`; a formulation hands it on with
        :func:`optkit.anytime.add_solver_points`).
    """

    status: Status
    objective: float | None = None
    bound: float | None = None
    wall_time_s: float = 0.0
    solver_status: str = ""
    has_solution: bool = False
    raw: Any = field(default=None, repr=False)
    trajectory: list[tuple[float, float | None, float | None]] = field(default_factory=list, repr=False)
