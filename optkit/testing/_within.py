"""The ratio check against the exact optimum: :func:`assert_within` (see :mod:`optkit.testing`)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from optkit import registry
from optkit.errors import InputError
from optkit.formulation import Formulation
from optkit.result import Result, scalar_objective
from optkit.solve import solve

from .guarantees import Guarantee, guarantee_for
from .oracle import Optimum, optimum

__all__ = ["assert_within", "Within"]


@dataclass(frozen=True)
class Within:
    """What :func:`assert_within` measured (returned when the check passes)."""

    measured: float
    bound: float | None
    sense: str
    optimum: Optimum
    result: Result
    guarantee: str


def _ratio(value: float, opt: float) -> float:
    """ALG / OPT of two minimised keys (1.0 when both are 0; inf when only OPT is 0)."""
    if opt == 0:
        return 1.0 if value == 0 else math.inf
    return value / opt


def assert_within(
    problem: str | Formulation,
    algorithm: str,
    instance: Any,
    ratio: float | Callable[[Any], float | None] | None = None,
    *,
    objective: str | None = None,
    seed: int | None = 0,
    params: Mapping[str, Any] | None = None,
    time_limit: float | None = None,
) -> Within:
    """Solve ``instance`` exactly, run ``algorithm`` on it, and assert its ratio to the optimum.

    Parameters
    ----------
    problem
        A problem name or a :class:`~optkit.formulation.Formulation`.
    algorithm
        A registered algorithm of the problem (a plug-in too).
    instance
        An instance object or dict.
    ratio
        The largest ALG / OPT allowed (a number, or a function of the instance object). ``None``:
        the paper's proven guarantee declared for the algorithm
        (:mod:`optkit.testing.guarantees`: A-SRPT's Theorem 1, SJF-BCO's Theorem 5, Titan's
        Theorems 4-5); an :class:`~optkit.errors.InputError` names ``ratio`` for an algorithm
        without one (Heavy-Edge, every baseline and peer: no paper proves a ratio for them).
    objective
        Default: the guarantee's objective, else the problem's default.
    seed
        The algorithm's seed.
    params
        The algorithm's keywords and readings (the guarantee may read them, e.g. A-SRPT's
        ``tau``).
    time_limit
        Seconds per exact solver call (:func:`optkit.testing.oracle.optimum`: brute force
        where it holds the instance, then CP-SAT, then the others); ``None``: no limit.

    Returns
    -------
    Within
        The measured ratio, the bound, the optimum and the algorithm's result.

    Raises
    ------
    AssertionError
        The ratio exceeds the bound (or falls below it, for an ``at_least`` guarantee), or the
        algorithm returns no solution on a feasible instance. The message holds the measured
        ratio, the guarantee with its citation, both objective values and the instance as
        JSON, with the ``optkit solve`` command that replays it.
    optkit.errors.InputError
        ``ratio`` missing for an algorithm without a proven guarantee, or not a number > 0;
        no proven optimum within ``time_limit`` (a ratio against a lower bound proves nothing
        when it fails: raise the limit or shrink the instance); an unknown problem, algorithm
        or objective.

    References
    ----------
    The guarantees' papers (see ``citation`` in the message); the exact models of each
    formulation's ``exact.py``.

    Notes
    -----
    Both values come from the formulation's ``evaluate``: the algorithm's through ``solve``,
    the optimum's from the exact solver's solution. A lexicographic objective (nimp) is
    compared by its scalar key unless the guarantee measures its own form (Titan's
    remaining-machines ratio, an ``at_least`` bound). A guarantee whose assumptions fail on the
    instance (``ratio`` function returns ``None``) says nothing: the check passes and reports
    ``bound=None``. An infeasible instance passes when the algorithm finds no solution either.

    Guarantee: none of its own; it checks another's.

    Units: a ratio (dimensionless).

    Examples
    --------
    >>> from optkit.testing import assert_within
    >>> inst = {"problem": "nimp", "job": {"workers": 2, "collective": "ring", "param_bytes": 1e8},
    ...         "machines": [{"gpus": 2, "idle_gpus": 2}, {"gpus": 2, "idle_gpus": 1},
    ...                      {"gpus": 2, "idle_gpus": 1}], "pair_capacity_bytes": 1e12}
    >>> within = assert_within("nimp", "titan", inst)   # Theorems 4-5: at least 1 - 1/e
    >>> round(within.measured, 3), round(within.bound, 3)
    (1.0, 0.632)
    """
    f = problem if isinstance(problem, Formulation) else registry.get(problem)
    if algorithm not in f.algorithms:
        raise InputError("algorithm", f"is unknown for {f.name}: {algorithm!r} (known: {', '.join(f.algorithms)})")
    if isinstance(instance, dict):
        try:
            instance = f.instance_from_dict(instance)
        except InputError as exc:
            raise exc.with_problem(f.name) from None
    params = dict(params or {})
    guarantee: Guarantee | None
    if ratio is None:
        guarantee = guarantee_for(f, algorithm)
        if guarantee is None:
            raise InputError("ratio", f"must be given: no paper proves a guarantee for {algorithm} "
                                      "(optkit.testing.guarantees lists those that do)", problem=f.name)
        bound = guarantee.ratio(instance, params)
        sense, where = guarantee.sense, f"{guarantee.citation}: {guarantee.statement}"
    else:
        guarantee = None
        bound = ratio(instance) if callable(ratio) else ratio
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, (int, float)) or not bound > 0):
            raise InputError("ratio", f"must be a number > 0 (the largest ALG / OPT allowed), got {bound!r}")
        sense, where = "at_most", f"the ratio given, ALG / OPT <= {bound}"
    objective = objective or (guarantee.objective if guarantee else None) or f.default_objective
    opt = optimum(f, instance, objective=objective, time_limit=time_limit)
    result = solve(f, instance, algorithm, objective=objective, seed=seed, params=params)
    data = f.instance_to_dict(instance)

    def fail(what: str) -> AssertionError:
        text = json.dumps(data, separators=(",", ":"), default=str)
        return AssertionError(
            f"{f.name}/{algorithm} ({objective}): {what}\n  guarantee: {where}\n"
            f"  algorithm: {result.status.value}, objective {result.objective} (seed {seed}, params {params})\n"
            f"  optimum: {opt.objective} ({opt.source})\n"
            f"  replay: save the instance below as instance.json, then `optkit solve {f.name} instance.json "
            f"--algorithm {algorithm} --objective {objective}" + (f" --seed {seed}" if seed is not None else "")
            + "".join(f" --param {k}={json.dumps(v)}" for k, v in params.items()) + "`\n"
            f"  instance: {text}")

    if opt.infeasible:
        if result.solution is not None:
            raise fail(f"the algorithm found a solution of an instance {opt.source} proves infeasible")
        return Within(1.0, bound, sense, opt, result, where)
    if not opt.proven or opt.value is None:
        raise InputError("time_limit", f"is too short for a proven optimum of this instance ({opt.source} gives only "
                                       f"the bound {opt.value}): raise it or shrink the instance", problem=f.name)
    if result.solution is None:
        raise fail(f"no solution ({result.status.value}: {result.message}) on an instance whose optimum is "
                   f"{opt.objective}")
    if guarantee is not None and guarantee.measure is not None:
        measured = guarantee.measure(instance, result.objective, opt.objective)
    else:
        value = scalar_objective(result.objective, result.metrics, objective)
        assert value is not None
        measured = _ratio(value, opt.value)
    check = guarantee if guarantee is not None else Guarantee(algorithm, objective, lambda i, p: bound, "", "")
    if not check.holds(measured, bound):
        op = ">" if sense == "at_most" else "<"
        raise fail(f"ratio {measured:.6g} {op} the guaranteed {bound:.6g}")
    return Within(measured, bound, sense, opt, result, where)
