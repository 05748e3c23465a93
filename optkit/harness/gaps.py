"""Optimality gaps against the best proven bound of each (instance, objective).

Gaps are never stored: :func:`annotate_gaps` computes them whenever a report is made, from every
stored row, so a new exact run tightens the gaps of rows recorded before it. ``compare`` writes
rows, :mod:`optkit.report` reads them and calls this module; neither imports the other's way back.

Best proven bound of an (instance, objective)
    the largest of every stored row's ``bound`` (rows that did not end in ``error``,
    ``no_solution`` or ``infeasible``; exact solvers report one when optimal or cut off,
    heuristics report none) and the formulation's ``lower_bound(instance, objective)`` when it
    has one. Every objective is minimised, so a bound above a feasible objective (beyond a
    tolerance) is impossible: :func:`annotate_gaps` reports each as a :class:`BoundConflict` (a
    bug in a solver, a bound or ``evaluate``), and the report shows them; they are never hidden.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping, Sequence

from optkit.harness.bounds import formulation_bounds
from optkit.result import relative_gap, scalar_objective

__all__ = ["BOUND_REL_TOL", "BOUND_ABS_TOL", "BoundConflict", "best_bounds", "annotate_gaps"]

BOUND_REL_TOL = 1e-6
"""A bound may exceed a feasible objective by this relative amount (solver tolerances)."""
BOUND_ABS_TOL = 1e-9
"""... plus this absolute amount."""

_BOUND_STATUSES = ("optimal", "feasible", "time_limit")
_NO_OBJECTIVE = ("error", "infeasible", "no_solution")


@dataclass(frozen=True)
class BoundConflict:
    """A "proven" bound above a feasible objective of the same (instance, objective)."""

    problem: str
    instance_name: str
    instance_hash: str
    objective_name: str
    bound: float
    bound_source: str  # "algorithm (seed s, row key)" or "formulation lower_bound"
    objective: float
    objective_source: str

    def describe(self) -> str:
        """One line for the terminal and the Markdown report."""
        return (f"{self.problem} {self.instance_name} [{self.objective_name}]: bound {self.bound:.10g} from "
                f"{self.bound_source} exceeds the feasible objective {self.objective:.10g} of {self.objective_source}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _scalar(r: Mapping[str, Any]) -> float | None:
    """A row's objective as a number: itself, or the key of a lexicographic (list) objective
    (:func:`optkit.result.scalar_objective`)."""
    v = scalar_objective(r.get("objective"), r.get("metrics"), r.get("objective_name", ""))
    return v if v is not None and math.isfinite(v) else None


def _exceeds(bound: float, objective: float) -> bool:
    return bound > objective + BOUND_ABS_TOL + BOUND_REL_TOL * max(abs(bound), abs(objective))


def best_bounds(
    rows: Iterable[Mapping[str, Any]],
    instances: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    notes: list[str] | None = None,
) -> dict[tuple[str, str], tuple[float, str]]:
    """``{(instance_hash, objective_name): (best bound, where it came from)}``.

    ``instances`` (``ResultStore.instances()``) lets the formulation's ``lower_bound`` take
    part, under a time limit and cached (:func:`optkit.harness.bounds.formulation_bounds`); a
    formulation whose ``lower_bound`` fails or times out gets one line in ``notes`` instead.
    """
    best: dict[tuple[str, str], tuple[float, str]] = {}

    def offer(key: tuple[str, str], value: float, where: str) -> None:
        if key not in best or value > best[key][0]:
            best[key] = (float(value), where)

    pairs: dict[tuple[str, str], str] = {}
    for r in rows:
        key = (r["instance_hash"], r["objective_name"])
        pairs.setdefault(key, r["problem"])
        if r["status"] in _BOUND_STATUSES and _is_number(r.get("bound")):
            offer(key, r["bound"], f"{r['algorithm']} (seed {r['seed']}, row {r['key'][:12]})")
    for key, (lb, where) in formulation_bounds(pairs, instances, notes=notes).items():  # time-limited, cached
        offer(key, lb, where)
    return best


def annotate_gaps(
    rows: Sequence[Mapping[str, Any]],
    instances: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    gap_rows: Sequence[Mapping[str, Any]] | None = None,
    notes: list[str] | None = None,
) -> tuple[list[dict[str, Any]], list[BoundConflict]]:
    """Copies of ``rows`` with ``best_bound``, ``best_bound_source`` and ``gap`` added, and the
    bound conflicts found.

    Bounds and conflicts are taken over ``gap_rows`` (default ``rows``): pass every stored row
    of the problem to annotate a subset against the best bound of the whole store. ``gap`` is
    :func:`optkit.result.relative_gap` of the row's objective against the best bound; a
    negative gap belongs to a conflict.
    """
    pool = list(gap_rows) if gap_rows is not None else list(rows)
    best = best_bounds(pool, instances, notes=notes)
    conflicts: list[BoundConflict] = []
    seen: set[tuple[str, str]] = set()
    for r in pool:
        key = (r["instance_hash"], r["objective_name"])
        if key in seen or key not in best or r["status"] in _NO_OBJECTIVE or _scalar(r) is None:
            continue
        bound, where = best[key]
        if _exceeds(bound, _scalar(r)):  # type: ignore[arg-type]
            # report the lowest feasible objective of this pair: the strongest evidence
            cands = [x for x in pool if (x["instance_hash"], x["objective_name"]) == key
                     and x["status"] not in _NO_OBJECTIVE and _scalar(x) is not None]
            low = min(cands, key=lambda x: _scalar(x))  # type: ignore[arg-type, return-value]
            conflicts.append(BoundConflict(
                problem=r["problem"], instance_name=r["instance_name"], instance_hash=key[0], objective_name=key[1],
                bound=bound, bound_source=where, objective=float(_scalar(low)),  # type: ignore[arg-type]
                objective_source=f"{low['algorithm']} (seed {low['seed']}, row {low['key'][:12]})",
            ))
            seen.add(key)
    out = []
    for r in rows:
        d = dict(r)
        b = best.get((r["instance_hash"], r["objective_name"]))
        d["best_bound"] = b[0] if b else None
        d["best_bound_source"] = b[1] if b else ""
        obj = _scalar(r)
        d["gap"] = relative_gap(obj, b[0]) if (b and obj is not None and r["status"] not in _NO_OBJECTIVE) else None
        out.append(d)
    return out, conflicts

