"""Anytime evidence: a run's incumbent and proven bound over time, and their integrals.

Recording
---------
:func:`optkit.solve.solve` opens a :func:`recording` around every algorithm. The solver adapters
(:func:`optkit.solvers.cpsat.solve_cp_model`, :func:`optkit.solvers.milp.solve_pyomo_model`)
collect ``(time, incumbent, bound)`` points in the model's own units, at every improving
solution and every bound improvement the solver reports (CP-SAT: its solution callback and
``best_bound_callback``; HiGHS: highspy's ``kCallbackMipImprovingSolution`` and
``kCallbackMipLogging`` callbacks, see :mod:`optkit.solvers.milp`). The formulation that built the
model knows how model units map to its objective (a time resolution, a constant offset, the
scalar key of a lexicographic objective) and hands the points over with :func:`add_solver_points`
and that map. :func:`optkit.solve.finish_result` then closes the trajectory with the run's own
final point: ``(wall_time_s, objective as evaluate computed it, the run's bound)``.

A stored trajectory (``Result.anytime``, the ``anytime`` column of the result store) is a list
of ``[t, incumbent, bound]`` triples: ``t`` in seconds since the algorithm started (the clock of
``wall_time_s``), ``incumbent`` and ``bound`` in the formulation's objective units (``None``
when there is none yet), made monotone (the best incumbent and best bound so far), the last
point being the run's final one. A heuristic's trajectory is that one final point: heuristics
count as a point at their finishing time. A run whose solution ``evaluate`` rejected keeps no
solver value (its trajectory is the final point without incumbent or bound); a run that returned
no solution keeps the solver's bounds only. ``None`` (not ``[]``) means "not recorded": rows
written before optkit recorded anytime evidence.

Lexicographic objectives (nimp's ``lex`` and ``lex_cross``) are recorded on their scalar key
(:data:`optkit.result.OBJECTIVE_KEY_PREFIX`), which orders solutions exactly as the lists do:
one trajectory per run, not one per objective stage (nimp's models optimise the key in one
solve, so there are no stages to record).

Integrals
---------
:func:`primal_gap` is Berthold's primal gap function, :func:`primal_integral` its integral over
time (Berthold 2013), :func:`primal_dual_integral` the same integral of the gap between the
run's incumbent and its own bound.
"""

from __future__ import annotations

import contextvars
import math
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Sequence

__all__ = [
    "Point", "recording", "add_solver_points", "finish_trajectory", "monotone", "primal_gap",
    "primal_integral", "primal_dual_integral", "step_value",
]

Point = tuple[float, "float | None", "float | None"]
"""``(seconds, incumbent, bound)``."""


class _Recorder:
    def __init__(self, start: float) -> None:
        self.start = start
        self.points: list[Point] = []


_CURRENT: contextvars.ContextVar[_Recorder | None] = contextvars.ContextVar("optkit_anytime", default=None)


@contextmanager
def recording(start: float | None = None) -> Iterator[list[Point]]:
    """Collect the solver points of the algorithm run inside the ``with`` block.

    ``start`` is the :func:`time.perf_counter` reading the run's clock starts at (default: now).
    Yields the list the points are appended to (times relative to ``start``).
    """
    rec = _Recorder(time.perf_counter() if start is None else start)
    token = _CURRENT.set(rec)
    try:
        yield rec.points
    finally:
        _CURRENT.reset(token)


def add_solver_points(points: Iterable[tuple[float, float | None, float | None]],
                      convert: Callable[[float], float | None] | None = None) -> None:
    """Hand a solver's points to the run being recorded (no-op outside :func:`recording`).

    ``points`` are ``(perf_counter time, incumbent, bound)`` in model units, as
    :attr:`optkit.solvers.SolverOutcome.trajectory` holds them; ``convert`` maps a model value to
    the formulation's objective units (identity when ``None``). Values that are not finite are
    dropped (``None``).
    """
    rec = _CURRENT.get()
    if rec is None:
        return
    for t, inc, bnd in points:
        rec.points.append((max(0.0, t - rec.start), _convert(inc, convert), _convert(bnd, convert)))


def _convert(v: float | None, convert: Callable[[float], float | None] | None) -> float | None:
    if v is None or not math.isfinite(v):
        return None
    out = convert(v) if convert is not None else v
    return None if out is None or not math.isfinite(out) else float(out)


def monotone(points: Iterable[Point]) -> list[Point]:
    """Points sorted by time with the best incumbent (lowest) and best bound (highest) so far;
    a point that changes neither is dropped (the last point is always kept)."""
    pts = sorted(points, key=lambda p: p[0])
    out: list[Point] = []
    best_inc: float | None = None
    best_bnd: float | None = None
    for i, (t, inc, bnd) in enumerate(pts):
        new_inc = inc if inc is not None and (best_inc is None or inc < best_inc) else best_inc
        new_bnd = bnd if bnd is not None and (best_bnd is None or bnd > best_bnd) else best_bnd
        changed = new_inc != best_inc or new_bnd != best_bnd
        best_inc, best_bnd = new_inc, new_bnd
        if changed or i == len(pts) - 1:
            out.append((float(t), best_inc, best_bnd))
    return out


def finish_trajectory(points: Sequence[Point], wall_time_s: float | None, objective: float | None,
                      bound: float | None) -> list[list[float | None]]:
    """The stored trajectory: ``points`` made :func:`monotone`, closed by the run's final point
    ``(wall_time_s, objective, bound)``, whose values replace any solver value (the final
    incumbent is ``evaluate``'s objective, so the curve ends where the run's row does)."""
    end = float(wall_time_s) if wall_time_s is not None else max((p[0] for p in points), default=0.0)
    body = [p for p in monotone(points) if p[0] <= end]
    if objective is not None:  # an earlier model incumbent cannot beat the evaluated final one
        body = [(t, None if inc is None else max(inc, objective), bnd) for t, inc, bnd in body]
    if bound is not None:
        body = [(t, inc, None if bnd is None else min(bnd, bound)) for t, inc, bnd in body]
    final = (end, objective, bound)
    return [list(p) for p in monotone([*body, final])[:-1]] + [list(final)]


# ----------------------------------------------------------------------------- integrals
def primal_gap(value: float | None, reference: float | None) -> float:
    """Berthold's primal gap of ``value`` against ``reference`` (the optimum or best known value).

    ``1`` without a value (or a reference); ``0`` when both are zero; ``1`` when their signs
    differ; otherwise ``|reference - value| / max(|reference|, |value|)``, in [0, 1].

    References
    ----------
    T. Berthold, "Measuring the impact of primal heuristics", Oper. Res. Letters 41 (2013) 611-614.
    """
    if value is None or reference is None or not (math.isfinite(value) and math.isfinite(reference)):
        return 1.0
    if value == 0.0 and reference == 0.0:
        return 0.0
    if value * reference < 0.0:
        return 1.0
    return min(1.0, abs(reference - value) / max(abs(reference), abs(value)))


def step_value(points: Sequence[Sequence[Any]], t: float, index: int) -> float | None:
    """Value ``index`` (1 incumbent, 2 bound) of the last point at or before ``t`` (``None`` before the first)."""
    out = None
    for p in points:
        if p[0] <= t:
            out = p[index]
        else:
            break
    return out


def _integral(points: Sequence[Sequence[Any]], horizon: float, gap: Callable[[Sequence[Any] | None], float]) -> float:
    """Integral over [0, horizon] of ``gap`` of the step function the points define."""
    pts = sorted((p for p in points if p[0] < horizon), key=lambda p: p[0])
    total = 0.0
    t_prev, current = 0.0, None
    for p in pts:
        total += gap(current) * (max(p[0], 0.0) - t_prev)
        t_prev, current = max(p[0], 0.0), p
    return total + gap(current) * (horizon - t_prev)


def primal_integral(points: Sequence[Sequence[Any]], reference: float | None, horizon: float) -> float:
    """Berthold's primal integral of a trajectory up to ``horizon`` seconds.

    ``P(T) = sum_i p(t_{i-1}) (t_i - t_{i-1})``: the step function of :func:`primal_gap` of the
    incumbent (``1`` before the first incumbent) integrated from 0 to ``T``; after the last point
    the last incumbent holds. Units: seconds (``P(T) / T`` is the average primal gap, in [0, 1]).

    References
    ----------
    T. Berthold, "Measuring the impact of primal heuristics", Oper. Res. Letters 41 (2013) 611-614.
    """
    return _integral(points, horizon, lambda p: primal_gap(None if p is None else p[1], reference))


def primal_dual_integral(points: Sequence[Sequence[Any]], horizon: float) -> float:
    """Integral up to ``horizon`` seconds of the gap between a run's incumbent and its own bound.

    At each time the gap is :func:`primal_gap` of the incumbent against the bound (``1`` while
    either is missing, ``0`` once they meet). Units: seconds.
    """
    return _integral(points, horizon, lambda p: 1.0 if p is None else primal_gap(p[1], p[2]))
