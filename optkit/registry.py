"""Formulation and algorithm registry.

Formulations are found through the entry point group ``optkit.formulations`` (each entry point
names a :class:`~optkit.formulation.Formulation` object), plus the modules listed in the
environment variable ``OPTKIT_FORMULATIONS`` (``package.module:attribute``, comma separated),
which lets a user try a new problem without packaging it, and plus :func:`register` for
objects built at run time. Worker processes started by the harness see the first two.

Algorithms for an existing problem come the same way: the entry point group
``optkit.algorithms`` and the environment variable ``OPTKIT_ALGORITHMS`` (``module:attribute``,
comma separated), and :func:`register_algorithm` at run time. Each names an
:class:`~optkit.formulation.Algorithm` whose ``problem`` field says which problem it belongs
to, an :class:`~optkit.formulation.OnlinePolicyPlugin` (an online policy, driven by the
problem's own driver), or a list or tuple of these. The registry adds each to its problem's
``algorithms``, so ``optkit list``, ``solve``, ``compare``, ``simulate`` and ``reproduce``
(:mod:`optkit.reproduce`), the run keys and the reports treat it like the problem's own
algorithms; :attr:`~optkit.formulation.Algorithm.plugin` records where it came from. A plug-in
whose name is one of the problem's own algorithms, or another plug-in's, or whose problem is
unknown, is an :class:`~optkit.errors.InputError` naming it (raised by every registry call, so
``optkit list`` says it in one line, exit status 2).
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from importlib.metadata import entry_points
from typing import Any

from optkit.errors import InputError
from optkit.formulation import Algorithm, Formulation, OnlinePolicyPlugin

__all__ = [
    "register", "register_algorithm", "get", "all_formulations", "plugin_algorithms", "ensure_registered",
    "ENTRY_POINT_GROUP", "ALGORITHM_ENTRY_POINT_GROUP", "ALGORITHMS_ENV",
]

ENTRY_POINT_GROUP = "optkit.formulations"
ALGORITHM_ENTRY_POINT_GROUP = "optkit.algorithms"
ALGORITHMS_ENV = "OPTKIT_ALGORITHMS"
_registered: dict[str, Formulation] = {}
_plugins: dict[str, dict[str, Algorithm]] = {}  # problem -> name -> plug-in algorithm
_loaded = False
_load_error: InputError | None = None


def register(formulation: Formulation) -> None:
    """Add ``formulation`` to this process's registry (replacing one of the same name); the
    plug-in algorithms registered for its problem are added to its ``algorithms``."""
    _registered[formulation.name] = _with_plugins(formulation)


def _with_plugins(f: Formulation) -> Formulation:
    extra = _plugins.get(f.name)
    if not extra:
        return f
    for name, algo in extra.items():
        own = f.algorithms.get(name)
        if own is not None and own is not algo:
            raise InputError("algorithm", f"{name!r} of the plug-in {algo.plugin or 'registered at run time'} "
                                          f"clashes with an algorithm of {f.name} of the same name; rename the plug-in",
                             problem=f.name)
    return dataclasses.replace(f, algorithms={**f.algorithms, **extra})


def _resolve(target: str, default_attr: str) -> Any:
    module_name, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in (attr or default_attr).split("."):
        obj = getattr(obj, part)
    return obj


def _load_target(target: str) -> Formulation:
    obj = _resolve(target, "FORMULATION")
    if not isinstance(obj, Formulation):
        raise TypeError(f"{target} is a {type(obj).__name__}, not an optkit Formulation")
    return obj


def _policy_algorithm(p: OnlinePolicyPlugin, driver: Any) -> Algorithm:
    """An online policy plug-in as an :class:`Algorithm` of its problem (see the class)."""
    import inspect

    def run(instance: Any, *, objective: str, time_limit: float | None, seed: int | None, **params: Any) -> Any:
        return driver(instance, p.make(instance, seed=seed, **params), time_limit=time_limit)

    run.__name__ = run.__qualname__ = f"run_{p.name}"
    run.policy_plugin = p  # type: ignore[attr-defined]  # a driver of many jobs (nimp's replay) makes the policy itself
    run.__doc__ = f"The online policy {p.name} ({p.summary}), driven by {p.problem}'s driver."
    try:
        sig = inspect.signature(p.make)
        keys = tuple(n for n, q in sig.parameters.items() if q.kind == q.KEYWORD_ONLY and n != "seed")
    except (TypeError, ValueError):
        keys = ()
    return Algorithm(p.name, run, p.kind, p.summary, (), randomized=p.randomized, params=keys, problem=p.problem)


def _as_algorithms(obj: Any, source: str) -> list[Algorithm]:
    """The plug-in object ``obj`` (loaded from ``source``) as algorithms with problem and source set."""
    if isinstance(obj, (list, tuple)):
        return [a for item in obj for a in _as_algorithms(item, source)]
    if isinstance(obj, OnlinePolicyPlugin):
        if not callable(obj.make):
            raise InputError("make", f"of the online policy {obj.name!r} of {source} must be a callable "
                                     f"make(instance, *, seed, **params) -> policy, got {type(obj.make).__name__}",
                             problem=obj.problem)
        f = _registered.get(obj.problem)
        if f is None:
            raise _unknown_problem(obj.problem, source)
        if f.run_policy is None:
            raise InputError("algorithm", f"the online policy {obj.name!r} of {source} is for {obj.problem}, which has "
                                          "no policy driver (Formulation.run_policy); register an Algorithm instead",
                             problem=obj.problem)
        algo = _policy_algorithm(obj, f.run_policy)
        algo = dataclasses.replace(algo, objectives=f.objectives)
    elif isinstance(obj, Algorithm):
        algo = obj
    else:
        raise InputError("algorithm", f"{source} is of type {type(obj).__name__}, not an optkit Algorithm or "
                                      "OnlinePolicyPlugin")
    if not algo.problem:
        raise InputError("algorithm", f"{algo.name!r} of {source} does not say its problem: set Algorithm(problem=...)")
    if algo.problem not in _registered:
        raise _unknown_problem(algo.problem, source)
    f = _registered[algo.problem]
    if not algo.objectives:
        algo = dataclasses.replace(algo, objectives=f.objectives)
    bad = [o for o in algo.objectives if o not in f.objectives]
    if bad:
        raise InputError("algorithm", f"{algo.name!r} of {source} lists objectives {bad} that {f.name} does not have "
                                      f"(it has {', '.join(f.objectives)})", problem=f.name)
    return [dataclasses.replace(algo, plugin=algo.plugin or source)]


def _unknown_problem(problem: str, source: str) -> InputError:
    known = ", ".join(sorted(_registered)) or "none installed"
    return InputError("algorithm", f"{source} is for the unknown problem {problem!r} (known: {known})")


def _add(algo: Algorithm) -> None:
    """Record the plug-in ``algo`` and add it to its (registered) formulation."""
    problem = algo.problem
    assert problem is not None
    mine = _plugins.setdefault(problem, {})
    old = mine.get(algo.name)
    if old is not None and old.run is algo.run:
        return  # the same plug-in again (an entry point and OPTKIT_ALGORITHMS, or a worker's reload)
    if old is not None:
        raise InputError("algorithm", f"{algo.name!r} is registered twice for {problem}: by {old.plugin} and by "
                                      f"{algo.plugin}; rename one", problem=problem)
    mine[algo.name] = algo
    _registered[problem] = _with_plugins(_registered[problem])


def register_algorithm(obj: Any) -> None:
    """Add a plug-in algorithm (an :class:`Algorithm` with ``problem`` set, an
    :class:`OnlinePolicyPlugin`, or a list of them) to its problem in this process; the same
    checks as for entry points (a name clash is an :class:`InputError`). Worker processes do
    not see it: use the entry point group or ``OPTKIT_ALGORITHMS`` for the harness."""
    _load()
    for algo in _as_algorithms(obj, "register_algorithm"):
        _add(algo)


def algorithm_targets(value: str | None) -> list[str]:
    """The ``module:attribute`` targets of an ``OPTKIT_ALGORITHMS`` value."""
    return [t.strip() for t in (value or "").split(",") if t.strip()]


def _resolve_plugin(target: str) -> Any:
    """The object an ``OPTKIT_ALGORITHMS`` target names; an import failure is bad input."""
    try:
        return _resolve(target, "ALGORITHM")
    except (ImportError, AttributeError) as exc:
        raise InputError(ALGORITHMS_ENV, f"names {target!r}, which cannot be loaded: {type(exc).__name__}: {exc}") from None


def load_algorithm_targets(value: str | None) -> None:
    """Register the plug-ins named by an ``OPTKIT_ALGORITHMS``-style value (worker processes:
    the parent passes its current value, which a forkserver started earlier did not see)."""
    _load()
    for target in algorithm_targets(value):
        for algo in _as_algorithms(_resolve_plugin(target), f"{ALGORITHMS_ENV} {target}"):
            if _plugins.get(algo.problem or "", {}).get(algo.name) is None:
                _add(algo)


def ensure_registered(problem: str, targets: str | None) -> None:
    """Make ``problem`` known in this process, loading ``OPTKIT_FORMULATIONS``-style ``targets``
    (``module:attribute``, comma separated) when it is not.

    A worker process started from a forkserver keeps the environment the server was started
    with; the parent passes its current ``OPTKIT_FORMULATIONS`` so a formulation registered
    after the server started is found too. Only the target whose
    :class:`~optkit.formulation.Formulation` is named ``problem`` is registered; without one,
    the :class:`InputError` of :func:`get` naming the known problems.
    """
    try:
        get(problem)
        return
    except InputError:
        if not targets:
            raise
    for target in filter(None, (t.strip() for t in targets.split(","))):
        obj = _resolve(target, "FORMULATION")
        if isinstance(obj, Formulation) and obj.name == problem:
            register(obj)
            return
    get(problem)  # raises the InputError naming the known problems


def _load() -> None:
    global _loaded, _load_error
    if _loaded:
        if _load_error is not None:
            raise _load_error
        return
    _loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        f = ep.load()
        _registered.setdefault(f.name, f)
    for target in filter(None, (t.strip() for t in os.environ.get("OPTKIT_FORMULATIONS", "").split(","))):
        f = _load_target(target)
        _registered.setdefault(f.name, f)
    try:
        for ep in entry_points(group=ALGORITHM_ENTRY_POINT_GROUP):
            for algo in _as_algorithms(ep.load(), f"entry point {ep.name} = {ep.value}"):
                _add(algo)
        for target in algorithm_targets(os.environ.get(ALGORITHMS_ENV)):
            for algo in _as_algorithms(_resolve_plugin(target), f"{ALGORITHMS_ENV} {target}"):
                _add(algo)
    except InputError as exc:
        _load_error = exc
        raise


def plugin_algorithms(problem: str | None = None) -> dict[str, dict[str, Algorithm]]:
    """The plug-in algorithms known to this process, by problem and name (``problem``: only its)."""
    _load()
    out = {p: dict(a) for p, a in sorted(_plugins.items()) if a}
    return out if problem is None else {problem: out.get(problem, {})}


def all_formulations() -> dict[str, Formulation]:
    """Every formulation known to this process, by problem name."""
    _load()
    return dict(sorted(_registered.items()))


def get(problem: str) -> Formulation:
    """The formulation of ``problem``; :class:`InputError` naming the known ones otherwise."""
    _load()
    try:
        return _registered[problem]
    except KeyError:
        known = ", ".join(sorted(_registered)) or "none installed"
        raise InputError("problem", f"is unknown: {problem!r} (known: {known})") from None
