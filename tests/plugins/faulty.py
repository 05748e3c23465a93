"""Deliberately faulty nimp plug-ins, one fault each, for ``tests/test_pristine.py`` (issue 35).

Each is the bug class issue 35 says optkit's answers and :func:`optkit.testing.check_algorithm`'s
defaults let through; every one is a module-level function, so a worker process rebuilds it
(``OPTKIT_ALGORITHMS=tests.plugins.faulty:ALGORITHMS`` registers them all).

spread: makes the instance's pair-capacity array writable again, sets it to infinity and
    spreads its workers over as many machines as it can (``evaluate`` on the altered instance
    sees no bandwidth violation).
numpy-ints: Titan's placement with ``numpy.int64`` machine indices (``solve --json`` printed
    them as strings, which ``validate`` rejects).
set-order: fills machines first-fit in the iteration order of a set of machine names (strings),
    so the placement follows ``PYTHONHASHSEED``; returns it when ``evaluate`` accepts it.
big-only: Titan up to 8 workers; above, every worker on machine 0 (over its idle GPUs).
seed-two: declared randomized; Titan for seeds 0 and 1, every worker on machine 0 from seed 2 on.
greedy-exact: "exact": ``infeasible`` whenever first-fit (in index order, checked by
    ``evaluate``) fails, else CP-SAT's proven optimum.
clock: Titan's placement, with the workers' order reversed when the clock's nanoseconds are odd:
    two runs with the same seed return different solutions of the same objective.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from optkit.formulation import Algorithm
from optkit.result import Result, Status

PROBLEM = "nimp"
OBJECTIVES = ("lex", "lex-cross")


def _titan(instance: Any, objective: str, seed: int | None) -> Result:
    from optkit.formulations.nimp.titan import run_titan

    return run_titan(instance, objective=objective, time_limit=None, seed=seed)


def _fill(instance: Any, order: list[int]) -> list[int] | None:
    """Workers first-fit over the machines in ``order`` (bandwidth ignored)."""
    out: list[int] = []
    for s in order:
        out += [s] * min(instance.machines[s].idle_gpus, instance.N - len(out))
    return out if len(out) == instance.N else None


def _checked(instance: Any, m: list[int] | None) -> Result:
    from optkit.formulations.nimp.model import evaluate

    if m is None or not evaluate(instance, {"machine_of_worker": m}).feasible:
        return Result(Status.NO_SOLUTION, message="first fit found no feasible placement")
    return Result(Status.FEASIBLE, solution={"machine_of_worker": m})


def spread(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    cap = instance.capacity
    cap.setflags(write=True)
    cap[...] = np.inf
    free = [m.idle_gpus for m in instance.machines]
    out: list[int] = []
    while len(out) < instance.N and any(free):
        for s in range(instance.M):
            if free[s] > 0 and len(out) < instance.N:
                free[s] -= 1
                out.append(s)
    if len(out) < instance.N:
        return Result(Status.NO_SOLUTION, message="too few idle GPUs")
    return Result(Status.FEASIBLE, solution={"machine_of_worker": out})


def numpy_ints(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    res = _titan(instance, objective, seed)
    if res.solution is not None:
        res.solution = {"machine_of_worker": list(np.asarray(res.solution["machine_of_worker"], dtype=np.int64))}
    return res


def set_order(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    names = {f"machine-{s}" for s in range(instance.M)}
    return _checked(instance, _fill(instance, [int(n.rpartition("-")[2]) for n in names]))


def big_only(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    if instance.N <= 8:
        return _titan(instance, objective, seed)
    return Result(Status.FEASIBLE, solution={"machine_of_worker": [0] * instance.N})


def seed_two(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    if seed is None or seed < 2:
        return _titan(instance, objective, seed)
    return Result(Status.FEASIBLE, solution={"machine_of_worker": [0] * instance.N})


def greedy_exact(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    from optkit.formulations.nimp.exact import run_cpsat

    if _checked(instance, _fill(instance, list(range(instance.M)))).solution is None:
        return Result(Status.INFEASIBLE, message="first fit failed, so nothing fits (wrongly)")
    return run_cpsat(instance, objective=objective, time_limit=time_limit, seed=seed, workers=1)


def clock(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    res = _titan(instance, objective, seed)
    if res.solution is not None and time.perf_counter_ns() % 2:
        res.solution = {"machine_of_worker": res.solution["machine_of_worker"][::-1]}
    return res


def _algo(name: str, fn: Any, kind: str = "heuristic", randomized: bool = False) -> Algorithm:
    return Algorithm(name, fn, kind, f"deliberately faulty: {name}", OBJECTIVES, randomized=randomized,
                     problem=PROBLEM)


ALGORITHMS = [
    _algo("spread", spread),
    _algo("numpy-ints", numpy_ints),
    _algo("set-order", set_order),
    _algo("big-only", big_only),
    _algo("seed-two", seed_two, randomized=True),
    _algo("greedy-exact", greedy_exact, kind="exact"),
    _algo("clock", clock),
]
"""Every faulty plug-in (``OPTKIT_ALGORITHMS=tests.plugins.faulty:ALGORITHMS``)."""
FAULTY = {a.name: a for a in ALGORITHMS}
"""Name -> plug-in."""
