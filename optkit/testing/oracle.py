"""The exact reference: the proven optimum of one instance, for ratio checks and worst-case searches.

One oracle serves both users: :func:`optkit.testing.assert_within` and the worst-case search
(:mod:`optkit.worst_case`). :func:`optimum` asks the problem's exact solvers in turn, and the
first proof wins:

1. the registered ``brute-force`` (gpu-mapping, nimp). It declares its own size limit and
   refuses a larger instance at once (an :class:`~optkit.errors.InputError`, taken as "not its
   case"); within it, enumerating a tiny instance is faster than building a CP-SAT model (the
   worst-case search asks thousands of them) and exact without a solver's tolerance;
2. ``cpsat``;
3. the formulation's ``exact.run_brute_force`` where it has one but does not register it
   (ddlwmp, rar-ddls). It is for small instances and cannot stop at a time limit, so it is asked
   only when ``time_limit`` is ``None`` (a caller that sets a limit is never held past it);
4. any other registered exact algorithm (a MILP).

``solvers`` narrows the list (the order stays this one). Without a proof, the answer is the best
proven lower bound (the solvers' bounds and the formulation's ``lower_bound``), marked
``proven=False``; ``fallback_to_bound=False`` returns no value instead.

Every value is the scalar key the engine compares solutions by
(:func:`optkit.result.scalar_objective`: the objective itself, or for a lexicographic objective
its ``objective_key``), computed by ``evaluate`` from the solver's solution; the objective
itself (nimp's lexicographic list) is :attr:`Optimum.objective`.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from optkit import registry
from optkit.errors import InputError
from optkit.formulation import Formulation
from optkit.pristine import InputWatch
from optkit.readings import accepted_params
from optkit.result import Result, Status, scalar_objective
from optkit.solve import check_algorithm as _check_names, finish_result, solve

__all__ = ["Optimum", "optimum", "exact_order"]

PREFERENCE = ("brute-force", "cpsat")
"""Registered exact algorithms asked first, in this order; the formulation's unregistered brute
force (without a time limit only) and the other registered exact algorithms follow (module
docstring)."""


@dataclass(frozen=True)
class Optimum:
    """What :func:`optimum` found. Unpacks as ``value, proven, source``.

    Attributes
    ----------
    value
        The optimum's scalar key (``proven``), or the best proven lower bound (not ``proven``);
        ``None`` when the instance is infeasible or nothing is known.
    proven
        Whether ``value`` is the proven optimum (or ``infeasible`` is proven).
    source
        Who proved it (``cpsat``, ``brute-force``, ``lower_bound``...).
    objective
        The optimum's objective value as ``evaluate`` gives it (nimp's lexicographic pair is
        a list, whose scalar key is ``value``); ``None`` without a proven solution.
    infeasible
        The instance is proven infeasible.
    result
        The exact solver's :class:`~optkit.result.Result` (``None`` if none ran).
    """

    value: float | None
    proven: bool
    source: str
    objective: Any = None
    infeasible: bool = False
    result: Result | None = field(default=None, repr=False)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.value, self.proven, self.source))


def exact_order(formulation: Formulation, objective: str) -> list[str]:
    """The registered, available exact algorithms supporting ``objective``, in the order
    :func:`optimum` asks them (:data:`PREFERENCE` first; plug-ins never)."""
    names = [n for n, a in formulation.algorithms.items()
             if a.kind == "exact" and not a.plugin and objective in a.objectives and a.available()]
    return sorted(names, key=lambda n: PREFERENCE.index(n) if n in PREFERENCE else len(PREFERENCE))


def _unregistered_brute_force(formulation: Formulation) -> Any:
    """The formulation's ``exact.run_brute_force`` when it does not register one (None otherwise)."""
    if "brute-force" in formulation.algorithms:
        return None
    package = getattr(formulation.evaluate, "__module__", "").rpartition(".")[0]
    try:
        return getattr(importlib.import_module(package + ".exact"), "run_brute_force", None)
    except ImportError:
        return None


def _params(formulation: Formulation, name: str) -> dict[str, Any]:
    return {"workers": 1} if "workers" in accepted_params(formulation, name) else {}


def optimum(problem: str | Formulation, instance: Any, *, objective: str | None = None,
            time_limit: float | None = None, seed: int = 0, solvers: Sequence[str] | None = None,
            fallback_to_bound: bool = True) -> Optimum:
    """The proven optimum of ``instance`` (or the best proven lower bound), from the exact solvers.

    Parameters
    ----------
    problem
        A problem name or a :class:`~optkit.formulation.Formulation`.
    instance
        An instance object or dict.
    objective
        Default: the problem's default objective.
    time_limit
        Seconds per solver call (brute force, CP-SAT, then the others: module docstring);
        ``None``: no limit (and the formulation's unregistered brute force may be asked).
    seed
        Seed of the solvers (one CP-SAT worker: repeatable).
    solvers
        Ask only these exact algorithms (names as in ``source``: ``brute-force``, ``cpsat``,
        ``highs``...), still in the oracle's order; ``None``: all of them. A filter: names
        the problem lacks are skipped (``("brute-force", "cpsat")`` on ddlwmp under a time limit
        asks CP-SAT alone).
    fallback_to_bound
        Without a proof, return the best proven lower bound as ``value`` (``proven=False``);
        ``False``: ``value`` is ``None`` then (``source`` ``"none"``).

    Returns
    -------
    Optimum
        ``value, proven, source = optimum(...)`` unpacks it.

    Raises
    ------
    optkit.errors.InputError
        An unknown problem or objective, or an invalid instance.

    References
    ----------
    The exact models of each formulation's ``exact.py`` (CP-SAT: Perron and Didier, OR-Tools;
    brute force: enumeration of the formulation's solution space).

    Notes
    -----
    Guarantee: ``proven=True`` means a solver proved optimality (or infeasibility); the value
    is exact up to the solvers' tolerance (CP-SAT: exact on integers; a MILP: 1e-4 relative).

    Units: those of the objective (seconds, bytes, counts).

    Examples
    --------
    Two workers on one idle 2-GPU machine, or on one GPU of each of two non-idle machines
    (the lexicographic optimum: no idle machine, two machines; key ``0·(M+1) + 2``):

    >>> from optkit.testing.oracle import optimum
    >>> value, proven, source = optimum("nimp", {"problem": "nimp",
    ...     "job": {"workers": 2, "collective": "ring", "param_bytes": 1e8},
    ...     "machines": [{"gpus": 2, "idle_gpus": 2}, {"gpus": 2, "idle_gpus": 1}, {"gpus": 2, "idle_gpus": 1}],
    ...     "pair_capacity_bytes": 1e12})
    >>> value, proven, source
    (2.0, True, 'brute-force')
    """
    f = problem if isinstance(problem, Formulation) else registry.get(problem)
    if isinstance(instance, dict):
        try:
            instance = f.instance_from_dict(instance)
        except InputError as exc:
            raise exc.with_problem(f.name) from None
    objective = objective or f.default_objective
    if objective not in f.objectives:
        raise InputError("objective", f"is unknown for {f.name}: {objective!r} (known: {', '.join(f.objectives)})")
    order = exact_order(f, objective)
    attempts: list[tuple[str, Any]] = [(n, None) for n in order]
    brute = _unregistered_brute_force(f) if time_limit is None else None
    if brute is not None:  # after the registered solvers that honour a time limit (CP-SAT, brute force)
        at = sum(1 for n in order if n in PREFERENCE)
        attempts.insert(at, ("brute-force", brute))
    if solvers is not None:  # a filter: a name the problem lacks (here) is skipped
        attempts = [(n, fn) for n, fn in attempts if n in solvers]
    bounds: list[tuple[float, str]] = []
    last: Result | None = None
    for name, fn in attempts:
        if fn is None:
            _check_names(f, name, objective)
            try:
                res = solve(f, instance, name, objective=objective, time_limit=time_limit, seed=seed,
                            params=_params(f, name))
            except InputError:  # the solver refuses this instance (a brute force beyond its size limit)
                continue
        else:
            watch = InputWatch(f, instance)  # as solve does: its own copy, the solution in JSON form
            start = time.perf_counter()
            try:
                raw = watch.judge(fn(watch.copy, objective=objective, time_limit=time_limit, seed=seed))
            except (TypeError, ValueError, InputError):  # this objective or size is not its case
                continue
            res = finish_result(f, instance, raw, algorithm=name, objective=objective, params={}, seed=seed,
                                wall_time_s=time.perf_counter() - start)
        last = res
        if res.status is Status.OPTIMAL:
            key = scalar_objective(res.objective, res.metrics, objective)
            return Optimum(key, True, name, res.objective, False, res)
        if res.status is Status.INFEASIBLE:
            return Optimum(None, True, name, None, True, res)
        if res.bound is not None:
            bounds.append((float(res.bound), f"{name} bound"))
    if not fallback_to_bound:
        return Optimum(None, False, "none", None, False, last)
    if f.lower_bound is not None:
        lb = f.lower_bound(instance, objective)
        if lb is not None:
            bounds.append((float(lb), "lower_bound"))
    if bounds:
        value, source = max(bounds)
        return Optimum(value, False, source, None, False, last)
    return Optimum(None, False, "none", None, False, last)
