"""Comparison sweeps: run what the result store has not finished yet, write each row as it
arrives, and hand the sweep's rows to :mod:`optkit.report`.

The dependency is one way: this module writes stored runs and calls :func:`optkit.report.build_report`
at the end; the report reads stored runs and computes gaps with :mod:`optkit.harness.gaps`
(re-exported here: ``best_bounds``, ``annotate_gaps``, ``BoundConflict``).

Readings and sweeps: ``sweep`` (the cross product of ``--param key=v1,v2``) gives every
algorithm one run per setting of the keys it takes; every run's parameters name every reading
its algorithm takes (see :func:`optkit.harness.tasks.build_tasks`).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from optkit import registry
from optkit.errors import InputError
from optkit.formulation import Formulation
from optkit.harness.environment import environment
from optkit.harness.executors import Executor, LocalExecutor
from optkit.harness.store import ResultStore
from optkit.harness.tasks import Task, build_tasks
from optkit.harness.gaps import BOUND_ABS_TOL, BOUND_REL_TOL, BoundConflict, annotate_gaps, best_bounds
from optkit.solve import check_algorithm

if TYPE_CHECKING:
    from optkit.report import Report

__all__ = [
    "BOUND_REL_TOL", "BOUND_ABS_TOL", "BoundConflict", "validate_instances", "resolve_algorithms",
    "resolve_objectives", "plan", "compare", "best_bounds", "annotate_gaps", "check_sweep",
]


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
    sweep: Mapping[str, Sequence[Any]] | None = None,
) -> list[Task]:
    """Validate everything and return the sweep's tasks (nothing runs, nothing is written).

    ``sweep`` maps a parameter name to the values to run (``{"tie_break": ["best-fit",
    "worst-fit"]}``); several keys run their cross product (:func:`check_sweep`)."""
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
    settings = check_sweep(formulation, algos, sweep)
    return build_tasks(formulation, valid, algos, objs, seeds, time_limit, params=params, source=source,
                       sweep=settings)


def check_sweep(formulation: Formulation, algorithms: Sequence[str],
                sweep: Mapping[str, Sequence[Any]] | None) -> list[dict[str, Any]]:
    """Validate a sweep against the selected algorithms and return its settings (cross product).

    Every key must be accepted by at least one selected algorithm (a reading it takes or one of
    its keywords), and every value must be valid for each algorithm that takes it; otherwise an
    :class:`InputError` names the key and lists the valid ones.
    """
    from difflib import get_close_matches

    from optkit.readings import accepted_params, check_params, expand_sweep

    sweep = dict(sweep or {})
    accepted = {a: accepted_params(formulation, a) for a in algorithms}
    for key, values in sweep.items():
        takers = [a for a in algorithms if key in accepted[a]]
        if not takers:
            valid = sorted({k for acc in accepted.values() for k in acc})
            close = get_close_matches(key, valid, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            readings = [r.name for r in formulation.readings]
            extra = f"; readings of {formulation.name}: {', '.join(readings)}" if readings else ""
            raise InputError(f"--param {key}", f"is not taken by any of {', '.join(algorithms)}{hint}; "
                                               f"valid: {', '.join(valid) or 'none'}{extra}", problem=formulation.name)
        for a in takers:
            for v in values:
                check_params(formulation, a, {key: v})
    return expand_sweep(sweep)


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
    sweep: Mapping[str, Sequence[Any]] | None = None,
    source: str | Mapping[str, str] = "",
    on_row: Callable[[dict[str, Any]], None] | None = None,
    log: Callable[[str], None] | None = None,
) -> "Report":
    """Run a comparison sweep, resuming whatever the store already holds; return its report.

    Parameters
    ----------
    problem
        Formulation name.
    instances
        ``[(name, instance dict)]``; all validated before anything runs or is written.
    algorithms
        Names, ``"all"`` or ``None`` (every available algorithm).
    objectives
        Names, ``"all"`` or ``None`` (the formulation's default objective).
    seeds
        Seeds of randomized algorithms (deterministic ones run with the first seed only).
    time_limit
        Seconds each run is given; the worker kills it at ``1.2 *`` that plus a grace.
    db
        SQLite path or an open :class:`ResultStore`.
    executor
        Default ``LocalExecutor()`` (``os.cpu_count()`` tasks at a time).
    progress
        Show a tqdm bar on stderr (only when it is a terminal).
    retry_failed
        Also redo runs stored with status ``time_limit`` or ``error``.
    params
        Per-algorithm keyword parameters, ``{"heavy-edge-refine": {"max_passes": 3}}``.
    sweep
        Parameter values shared by the algorithms that take them, ``{"tau": [1, 3]}``; every
        algorithm runs once per setting of the keys it takes (cross product of several keys).
    source
        A label (suite name, folder) per sweep or per instance name.
    on_row
        Called with each new row after it is stored.
    log
        Called with one-line progress messages (runs planned, runs skipped).

    Returns
    -------
    optkit.report.Report
        The report of every stored row of this sweep's tasks, old and new, with gaps against
        the best proven bounds of the whole store: ``.summary`` is the table (see
        :func:`optkit.report.summarize`), ``.rows``, ``.conflicts`` and ``.notes`` the rest.
    """
    from optkit import report

    tasks = plan(problem, instances, algorithms, objectives, seeds, time_limit, params=params, source=source,
                 sweep=sweep)
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
            sweep_id = store.add_sweep(environment(jobs=getattr(executor, "jobs", None), executor=executor.description,
                                                   time_limit=time_limit))
            counts: Counter[str] = Counter()
            bar = _progress(len(todo), progress, problem)
            try:
                for row in executor.run(todo):
                    store.put_row(row, sweep=sweep_id)
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
