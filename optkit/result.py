"""The one result type every algorithm and solver produces.

In the spirit of Pyomo's solver results: a status, the objective value of the returned solution
(always computed by the formulation's ``evaluate``, never by the algorithm), the proven bound
where one exists, the gap, the wall time, the solution itself, every metric ``evaluate``
reports, and the algorithm's name, parameters and seed.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

__all__ = ["Status", "Result", "relative_gap", "scalar_objective", "OBJECTIVE_KEY_PREFIX"]

OBJECTIVE_KEY_PREFIX = "objective_key."
"""Lexicographic objectives. A formulation whose objective is lexicographic has ``evaluate``
return it as a list (compared element by element, every entry minimised), and reports in its
metrics ``objective_key.<objective name>``: a scalar that orders solutions exactly as the lists
do (e.g. ``idle·(M+1) + used``). The key is what gaps and bounds are measured in: ``bound`` of a
run with a list objective is a lower bound on the key, and ``gap`` compares the key with it."""


class Status(str, Enum):
    """Outcome of one run.

    * ``optimal``: the solution is proven optimal (exact solvers only).
    * ``feasible``: a feasible solution without an optimality proof (every heuristic).
    * ``infeasible``: the instance was proven to have no feasible solution (exact solvers, or a
      check that is itself a proof, such as fewer free GPUs than workers).
    * ``no_solution``: the algorithm ran correctly and found nothing feasible; nothing is proven
      (heuristics and baselines). ``message`` says why.
    * ``time_limit``: the time limit cut the run short; a solution may still be attached.
    * ``error``: the run failed: a crash, a bug, or a solution that ``evaluate`` rejected.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    NO_SOLUTION = "no_solution"
    TIME_LIMIT = "time_limit"
    ERROR = "error"

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """Relative optimality gap of a minimisation: ``(objective - bound) / |objective|``.

    Zero when both are zero; ``None`` when either is unknown. Never negative by more than
    rounding: a caller that sees ``objective < bound`` has found a bug (or a wrong bound).
    """
    if objective is None or bound is None:
        return None
    if not (math.isfinite(objective) and math.isfinite(bound)):
        return None
    diff = objective - bound
    scale = abs(objective)
    if scale == 0.0:
        return 0.0 if abs(diff) <= 1e-12 else math.inf
    return diff / scale


def scalar_objective(objective: Any, metrics: dict[str, Any] | None, name: str) -> float | None:
    """The number gaps are measured on: ``objective`` itself when it is a number; for a list
    (lexicographic) objective the metric ``objective_key.<name>``; ``None`` otherwise."""
    if isinstance(objective, (list, tuple)):
        objective = (metrics or {}).get(OBJECTIVE_KEY_PREFIX + name)
    if isinstance(objective, numbers.Real) and not isinstance(objective, bool):
        return float(objective)
    return None


@dataclass
class Result:
    """What one (instance, algorithm, parameters, seed) run produced.

    Attributes
    ----------
    status
        See :class:`Status`.
    objective
        Value of ``solution`` on the selected objective, computed by ``evaluate``; a list
        for a lexicographic objective (see :data:`OBJECTIVE_KEY_PREFIX`).
    bound
        Proven lower bound on the optimum (minimisation) known to this run, if any (on the
        scalar key for a lexicographic objective).
    gap
        ``(objective - bound) / objective`` against ``bound``; the harness recomputes it
        against the best bound known for the instance.
    wall_time_s
        Wall-clock seconds of the algorithm alone (not of ``evaluate``).
    solution
        The solution as a JSON-ready dict, or ``None``.
    metrics
        Every metric ``evaluate`` reports for the solution.
    algorithm
        The algorithm's name.
    problem
        The problem's name.
    objective_name
        The objective it was asked to minimise.
    params
        The algorithm's keyword parameters and readings.
    seed
        The seed it was given.
    message
        Free text: a solver's own status string, or the error of a failed run.
    info
        The algorithm's own diagnostics (a solver's status name, whether METIS needed a
        repair, ...); never an objective value, which only ``evaluate`` supplies.
    anytime
        The run's incumbent and bound over time, ``[[seconds, incumbent, bound], ...]`` in
        the objective's units (the scalar key for a lexicographic objective), ending with the
        run's final ``[wall_time_s, objective, bound]`` (:mod:`optkit.anytime`); ``None`` when
        not recorded.
    """

    status: Status
    objective: float | list[float] | None = None
    bound: float | None = None
    gap: float | None = None
    wall_time_s: float | None = None
    solution: dict[str, Any] | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    algorithm: str = ""
    problem: str = ""
    objective_name: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    message: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    anytime: list[list[float | None]] | None = None

    def __post_init__(self) -> None:
        self.status = Status(self.status)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status.value
        return d

    def to_json_summary(self) -> dict[str, Any]:
        """The object ``optkit solve --json`` prints."""
        return {
            "problem": self.problem,
            "algorithm": self.algorithm,
            "status": self.status.value,
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "wall_time_s": self.wall_time_s,
            "solution": self.solution,
            "metrics": self.metrics,
            "params": self.params,
            "message": self.message,
        }
