"""The row: what the harness records of one finished run.

A row is a plain JSON-ready dict with the keys :data:`ROW_FIELDS`, made by :func:`make_row`
from the run's :class:`~optkit.harness.tasks.Task` and outcome. Every way a run can end makes
one: a task's child (:mod:`optkit.harness.worker`), the task server
(:mod:`optkit.harness.server`), an executor that lost a task
(:mod:`optkit.harness.executors`); the result store (:mod:`optkit.harness.store`) keeps them,
one column per field.
"""

from __future__ import annotations

import datetime as _dt
import math
from enum import Enum
from typing import Any, Mapping

from optkit.harness.tasks import Task

__all__ = ["ROW_FIELDS", "make_row"]

ROW_FIELDS = (
    "key", "problem", "instance_name", "instance_hash", "source", "algorithm", "objective_name",
    "params", "seed", "time_limit", "status", "objective", "bound", "wall_time_s", "solution",
    "metrics", "info", "message", "finished_at", "anytime",
)
"""The keys of every row :func:`~optkit.harness.worker.run_task` returns (and the columns of
the result store). ``anytime`` is the run's trajectory (:mod:`optkit.anytime`); a row whose run
recorded none (a killed child, a crash, a measurement) gets its final point, or ``[]`` without
objective and bound. Only rows stored before the store's schema 2 have none (``NULL``)."""


def _json_safe(value: Any) -> Any:
    """``value`` made of dicts, lists, str, int, float, bool and None only (numpy included)."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, Enum):
        return _json_safe(value.value)
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_json_safe(v) for v in value]
    tolist = getattr(value, "tolist", None)  # numpy scalars and arrays
    if callable(tolist):
        return _json_safe(tolist())
    return repr(value)


def _number_or_none(value: Any) -> float | list[float] | None:
    value = _json_safe(value)
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) or value is None:
        return None if value is None else float(value)
    if isinstance(value, list):  # a lexicographic objective
        return value
    return None


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def make_row(
    task: Task,
    *,
    status: str,
    objective: Any = None,
    bound: Any = None,
    wall_time_s: float | None = None,
    solution: Any = None,
    metrics: Mapping[str, Any] | None = None,
    info: Mapping[str, Any] | None = None,
    message: str = "",
    anytime: Any = None,
) -> dict[str, Any]:
    """The row (a plain JSON-ready dict with :data:`ROW_FIELDS`) recording one finished task."""
    return {
        "key": task.key,
        "problem": task.problem,
        "instance_name": task.instance_name,
        "instance_hash": task.instance_hash,
        "source": task.source,
        "algorithm": task.algorithm,
        "objective_name": task.objective,
        "params": _json_safe(task.params),
        "seed": task.seed,
        "time_limit": task.time_limit,
        "status": str(getattr(status, "value", status)),
        "objective": _number_or_none(objective),
        "bound": _number_or_none(bound),
        "wall_time_s": None if wall_time_s is None else float(wall_time_s),
        "solution": _json_safe(solution),
        "metrics": _json_safe(dict(metrics or {})),
        "info": _json_safe(dict(info or {})),
        "message": str(message or ""),
        "finished_at": _now(),
        "anytime": _json_safe(anytime) if anytime is not None else _final_point(task, status, objective, bound,
                                                                                 wall_time_s, metrics),
    }


def _final_point(task: Task, status: Any, objective: Any, bound: Any, wall_time_s: float | None,
                 metrics: Mapping[str, Any] | None) -> list[list[float | None]]:
    """The trajectory of a row whose run recorded none (a heuristic's own row, a killed or failed
    run, a measurement): its final point, or ``[]`` (nothing found, nothing proven)."""
    from optkit.result import scalar_objective

    st = str(getattr(status, "value", status))
    if st in ("error", "infeasible", "no_solution"):
        objective, bound = None, (None if st != "infeasible" else bound)
    key = scalar_objective(_json_safe(objective), dict(metrics or {}), task.objective)
    b = _number_or_none(bound)
    b = b if isinstance(b, float) and math.isfinite(b) else None
    if key is None and b is None:
        return []
    return [[float(wall_time_s or 0.0), key, b]]
