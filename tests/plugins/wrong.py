"""Deliberately wrong rar-ddls algorithms, one fault each, for ``tests/test_testing.py``.

Each wraps the List-Scheduling baseline (:func:`optkit.formulations.rar_ddls.baselines.run_ls`,
a correct algorithm) and breaks one rule of :func:`optkit.testing.check_algorithm`:

beats: claims the makespan 0.5 s in its own result, below every proven optimum of the instances.
seedless: declared randomized, but draws its seed from a counter: the same seed gives another
    schedule on the next call (a seed ignored in favour of hidden state).
unproven: a heuristic returning ``optimal`` (it proves nothing).
error: returns ``error`` on every (valid) instance.
crash: raises ``RuntimeError``.
honest: List Scheduling under another name: passes every check.
"""

from __future__ import annotations

import itertools
from typing import Any

from optkit.formulation import Algorithm
from optkit.result import Result, Status

PROBLEM = "rar-ddls"
_calls = itertools.count()


def _ls(instance: Any, objective: str, seed: int | None) -> Result:
    from optkit.formulations.rar_ddls.baselines import run_ls

    return run_ls(instance, objective=objective, time_limit=None, seed=seed)


def beats(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    res = _ls(instance, objective, seed)
    res.objective = 0.5
    return res


def seedless(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    from optkit.formulations.rar_ddls.baselines import run_rand

    return run_rand(instance, objective=objective, time_limit=None, seed=1000 + next(_calls))


def unproven(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    res = _ls(instance, objective, seed)
    res.status = Status.OPTIMAL
    return res


def error(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    return Result(Status.ERROR, message="gave up (by design)")


def crash(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    raise RuntimeError("boom (by design)")


def honest(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    return _ls(instance, objective, seed)


def _algo(name: str, fn: Any, randomized: bool = False) -> Algorithm:
    return Algorithm(f"wrong-{name}", fn, "heuristic", f"deliberately wrong: {name}", ("makespan",),
                     randomized=randomized, problem=PROBLEM)


ALGORITHMS = {
    "beats": _algo("beats", beats),
    "seedless": _algo("seedless", seedless, randomized=True),
    "unproven": _algo("unproven", unproven),
    "error": _algo("error", error),
    "crash": _algo("crash", crash),
    "honest": _algo("honest", honest),
}
"""Fault -> the algorithm that has it."""
