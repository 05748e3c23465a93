"""Comparison sweeps, and optimality gaps against the best proven bound.

:func:`compare` runs every (instance, algorithm, objective, seed) of a sweep that the result
store has not finished yet, writing each row as it arrives, and returns the summary of the
sweep's rows. Gaps are never stored: :func:`annotate_gaps` computes them whenever a report is
made, from every stored row, so a new exact run tightens the gaps of rows recorded before it.

Best proven bound of an (instance, objective)
    the largest of every stored row's ``bound`` (rows that did not end in ``error`` or
    ``infeasible``; exact solvers report one when optimal or cut off, heuristics report none)
    and the formulation's ``lower_bound(instance, objective)`` when it has one. Every
    objective is minimised, so a bound above a feasible objective (beyond a tolerance) is
    impossible: :func:`annotate_gaps` reports each as a :class:`BoundConflict` (a bug in a
    solver, a bound or ``evaluate``), and the report shows them; they are never hidden.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from optkit import registry
from optkit.errors import InputError
from optkit.formulation import Formulation
from optkit.harness.bounds import formulation_bounds
from optkit.harness.executors import Executor, LocalExecutor
from optkit.harness.store import ResultStore
from optkit.harness.tasks import Task, build_tasks
from optkit.result import relative_gap, scalar_objective
from optkit.solve import check_algorithm

if TYPE_CHECKING:
    from optkit.report import Report

__all__ = [
    "BOUND_REL_TOL", "BOUND_ABS_TOL", "BoundConflict", "validate_instances", "resolve_algorithms",
    "resolve_objectives", "plan", "compare", "best_bounds", "annotate_gaps",
]

BOUND_REL_TOL = 1e-6
"""A bound may exceed a feasible objective by this relative amount (solver tolerances)."""
BOUND_ABS_TOL = 1e-9
"""... plus this absolute amount."""

_BOUND_STATUSES = ("optimal", "feasible", "time_limit")


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


# ----------------------------------------------------------------------------- input checks
def validate_instances(
    formulation: Formulation, instances: Sequence[tuple[str, Mapping[str, Any]]]
) -> list[tuple[str, dict[str, Any]]]:
    """Build every instance through the formulation; the first bad one raises.

    The :class:`InputError` names the instance (its file or suite name) and the field:
    ``gpu-mapping: path/x.json: job.stages[0].in_bytes must be 0, got 5``.
    """
    if not instances:
        raise InputError("instances", "none given: pass instance files or folders, or --problem with --suite")
    out = []
    for name, data in instances:
        if not isinstance(data, Mapping):
            raise InputError(f"{name}", f"must be a JSON object, got {type(data).__name__}", problem=formulation.name)
        problem = data.get("problem", formulation.name)
        if problem != formulation.name:
            raise InputError(f"{name}: problem", f"is {problem!r}, but this sweep is of {formulation.name!r}",
                             problem=formulation.name)
        try:
            formulation.instance_from_dict(dict(data))
        except InputError as exc:
            raise InputError(f"{name}: {exc.field}" if exc.field else name, exc.message,
                             problem=exc.problem or formulation.name) from None
        out.append((name, dict(data)))
    return out


def resolve_algorithms(formulation: Formulation, algorithms: Sequence[str] | str | None) -> list[str]:
    """``None`` or ``"all"``: every algorithm whose ``available()`` is true; else the names given,
    each checked (an unknown or unavailable one is an :class:`InputError`)."""
    if algorithms is None or algorithms == "all" or list(algorithms) == ["all"]:
        names = [n for n, a in formulation.algorithms.items() if a.available()]
        if not names:
            raise InputError("algorithms", f"none of {formulation.name}'s algorithms is available")
        return names
    if isinstance(algorithms, str):
        algorithms = [a.strip() for a in algorithms.split(",") if a.strip()]
    names = list(dict.fromkeys(algorithms))
    if not names:
        raise InputError("algorithms", "must name at least one algorithm")
    for n in names:
        if n not in formulation.algorithms:
            raise InputError("algorithms", f"{n!r} is unknown for {formulation.name} (known: {', '.join(formulation.algorithms)})")
        a = formulation.algorithms[n]
        if not a.available():
            raise InputError("algorithms", f"{n} needs the optional packages {', '.join(a.requires)}; install optkit[peers]")
    return names


def resolve_objectives(formulation: Formulation, objectives: Sequence[str] | str | None) -> list[str]:
    """``None``: the formulation's default objective; ``"all"``: every objective; else the names given."""
    if objectives is None:
        return [formulation.default_objective]
    if objectives == "all" or list(objectives) == ["all"]:
        return list(formulation.objectives)
    if isinstance(objectives, str):
        objectives = [o.strip() for o in objectives.split(",") if o.strip()]
    names = list(dict.fromkeys(objectives))
    if not names:
        raise InputError("objective", "must name at least one objective")
    for o in names:
        if o not in formulation.objectives:
            raise InputError("objective", f"is unknown for {formulation.name}: {o!r} (known: {', '.join(formulation.objectives)})")
    return names


def plan(
    problem: str,
    instances: Sequence[tuple[str, Mapping[str, Any]]],
    algorithms: Sequence[str] | str | None = None,
    objectives: Sequence[str] | str | None = None,
    seeds: Sequence[int] = (0,),
    time_limit: float = 60.0,
    *,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    source: str | Mapping[str, str] = "",
) -> list[Task]:
    """Validate everything and return the sweep's tasks (nothing runs, nothing is written)."""
    formulation = registry.get(problem)
    if time_limit is None:
        raise InputError("time_limit", "is required: the harness always enforces a hard limit")
    valid = validate_instances(formulation, instances)
    algos = resolve_algorithms(formulation, algorithms)
    objs = resolve_objectives(formulation, objectives)
    for a in algos:  # the engine's own checks (unsupported pairs are skipped by build_tasks)
        for o in objs:
            if o in formulation.algorithms[a].objectives:
                check_algorithm(formulation, a, o)
    return build_tasks(formulation, valid, algos, objs, seeds, time_limit, params=params, source=source)


# ----------------------------------------------------------------------------- the sweep
def _progress(total: int, enabled: bool, desc: str) -> Any:
    from tqdm.auto import tqdm

    disable = (not enabled) or not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())
    return tqdm(total=total, desc=desc, unit="run", disable=disable, dynamic_ncols=True, leave=True)


def compare(
    problem: str,
    instances: Sequence[tuple[str, Mapping[str, Any]]],
    algorithms: Sequence[str] | str | None = None,
    objectives: Sequence[str] | str | None = None,
    seeds: Sequence[int] = (0,),
    time_limit: float = 60.0,
    db: str | Path | ResultStore = "optkit-results.sqlite",
    executor: Executor | None = None,
    progress: bool = True,
    retry_failed: bool = False,
    *,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    source: str | Mapping[str, str] = "",
    on_row: Callable[[dict[str, Any]], None] | None = None,
    log: Callable[[str], None] | None = None,
) -> "Report":
    """Run a comparison sweep, resuming whatever the store already holds; return its report.

    Parameters
    ----------
    problem: formulation name.
    instances: ``[(name, instance dict)]``; all validated before anything runs or is written.
    algorithms: names, ``"all"`` or ``None`` (every available algorithm).
    objectives: names, ``"all"`` or ``None`` (the formulation's default objective).
    seeds: seeds of randomized algorithms (deterministic ones run with the first seed only).
    time_limit: seconds each run is given; the worker kills it at ``1.2 *`` that plus a grace.
    db: SQLite path or an open :class:`ResultStore`.
    executor: default ``LocalExecutor()`` (``os.cpu_count()`` tasks at a time).
    progress: show a tqdm bar on stderr (only when it is a terminal).
    retry_failed: also redo runs stored with status ``time_limit`` or ``error``.
    params: per-algorithm keyword parameters, ``{"heavy-edge-refine": {"passes": 3}}``.
    source: a label (suite name, folder) per sweep or per instance name.
    on_row: called with each new row after it is stored.
    log: called with one-line progress messages (runs planned, runs skipped).

    Returns
    -------
    The :class:`optkit.report.Report` of every stored row of this sweep's tasks, old and new,
    with gaps against the best proven bounds of the whole store: ``.summary`` is the table
    (see :func:`optkit.report.summarize`), ``.rows``, ``.conflicts`` and ``.notes`` the rest.
    """
    from optkit import report

    tasks = plan(problem, instances, algorithms, objectives, seeds, time_limit, params=params, source=source)
    own_store = not isinstance(db, ResultStore)
    store = ResultStore(db) if own_store else db
    own_executor = executor is None
    executor = executor or LocalExecutor()
    try:
        store.add_instances(_unique_instances(tasks))
        done = store.done_keys(include_failed=not retry_failed)
        todo = [t for t in tasks if t.key not in done]
        if log is not None:
            log(f"{problem}: {len(tasks)} runs, {len(tasks) - len(todo)} already in {store.path}, "
                f"{len(todo)} to run ({executor.description})")
            if algorithms is None or algorithms == "all" or list(algorithms) == ["all"]:
                for a in registry.get(problem).algorithms.values():
                    if not a.available():
                        log(f"{problem}: skipped {a.name}: needs {', '.join(a.requires)} (pip install optkit[peers])")
        if todo:
            counts: Counter[str] = Counter()
            bar = _progress(len(todo), progress, problem)
            try:
                for row in executor.run(todo):
                    store.put_row(row)
                    counts[row["status"]] += 1
                    bar.update(1)
                    bar.set_postfix(dict(sorted(counts.items())), refresh=False)
                    if on_row is not None:
                        on_row(row)
            finally:
                bar.close()
        return report.build_report(store, problem=problem, keys=[t.key for t in tasks])
    finally:
        if own_executor:
            executor.close()
        if own_store:
            store.close()


def _unique_instances(tasks: Iterable[Task]) -> list[tuple[str, str, str, dict[str, Any]]]:
    seen: dict[str, tuple[str, str, str, dict[str, Any]]] = {}
    for t in tasks:
        seen.setdefault(t.instance_hash, (t.instance_hash, t.problem, t.instance_name, t.instance))
    return list(seen.values())


# ----------------------------------------------------------------------------- gaps
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
        if key in seen or key not in best or r["status"] in ("error", "infeasible") or _scalar(r) is None:
            continue
        bound, where = best[key]
        if _exceeds(bound, _scalar(r)):  # type: ignore[arg-type]
            # report the lowest feasible objective of this pair: the strongest evidence
            cands = [x for x in pool if (x["instance_hash"], x["objective_name"]) == key
                     and x["status"] not in ("error", "infeasible") and _scalar(x) is not None]
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
        d["gap"] = relative_gap(obj, b[0]) if (b and obj is not None and r["status"] not in ("error", "infeasible")) else None
        out.append(d)
    return out, conflicts

