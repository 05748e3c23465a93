"""``sleepy``: a tiny test-only formulation whose algorithms sleep, hang, crash or lie.

Registered in worker processes with ``OPTKIT_FORMULATIONS=tests.plugins.sleepy:FORMULATION``
(the repository root must be importable). Instance::

    {"problem": "sleepy", "size": 4, "sleep": 0.0, "log": "/optional/run-log.txt", "bound_sleep": 0.0,
     "gate": "/optional/gate-file"}

A solution is ``{"x": int}`` with ``0 <= x <= size``. Objectives (minimised):
``cost = 2 * size - x`` (optimum ``size`` at ``x = size``) and ``x = x + 1`` (optimum 1).
:func:`lower_bound` proves the weak bounds ``cost >= size / 2`` and ``x >= 1``, after sleeping
``bound_sleep`` seconds (a bound that takes hours, for the harness's bound time limit); it
appends ``"lower_bound <size> <objective>"`` to ``<log>.bounds`` first.
:func:`quick_lower_bound` proves ``cost >= size / 4`` and ``x >= 1`` at once.

Algorithms
----------
nap: waits until the file ``gate`` exists (when given), sleeps ``sleep`` s, returns ``x = 0``
    (feasible, worst cost). The gate lets a test stop a sweep at a known task, without a clock.
exact: returns the optimum, status optimal.
partial: returns ``x = size // 2`` with status ``time_limit`` and the proven bound ``size - 1``.
wrong-bound: a wrong "proof": ``x = 0`` with status ``time_limit`` and bound ``2 * size`` (above
    the optimum ``size``), for the harness's bound-conflict check.
random: ``x`` uniform in ``0..size`` from ``seed``.
hang: sleeps forever, ignoring its time limit.
crash: raises ``RuntimeError("boom")``.
die: the process exits with code 7 without a word.
bad: returns ``x = -1``, which ``evaluate`` rejects.
picky: raises :class:`InputError` for its parameter ``k``.

Every algorithm appends ``"<algorithm> <size> <seed> <process id>"`` to the instance's ``log``
file (when given) before doing anything else, so a test can count runs and find the process.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from optkit.errors import InputError
from optkit.formulation import Algorithm, Evaluation, Formulation, Suite
from optkit.result import Result, Status

PROBLEM = "sleepy"
OBJECTIVES = ("cost", "x")


@dataclass(frozen=True)
class SleepyInstance:
    """``size`` >= 1, ``sleep`` seconds >= 0, ``log``: optional path of the run log, ``gate``:
    optional path of a file ``nap`` waits for."""

    size: int
    sleep: float = 0.0
    log: str | None = None
    bound_sleep: float = 0.0
    gate: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "SleepyInstance":
        size = d.get("size")
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise InputError("size", f"must be an integer >= 1, got {size!r}")
        sleep = d.get("sleep", 0.0)
        if isinstance(sleep, bool) or not isinstance(sleep, (int, float)) or not math.isfinite(sleep) or sleep < 0:
            raise InputError("sleep", f"must be a number of seconds >= 0, got {sleep!r}")
        log = d.get("log")
        if log is not None and not isinstance(log, str):
            raise InputError("log", f"must be a file path, got {log!r}")
        bound_sleep = d.get("bound_sleep", 0.0)
        if isinstance(bound_sleep, bool) or not isinstance(bound_sleep, (int, float)) or not bound_sleep >= 0:
            raise InputError("bound_sleep", f"must be a number of seconds >= 0, got {bound_sleep!r}")
        gate = d.get("gate")
        if gate is not None and not isinstance(gate, str):
            raise InputError("gate", f"must be a file path, got {gate!r}")
        return cls(size=size, sleep=float(sleep), log=log, bound_sleep=float(bound_sleep), gate=gate)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"problem": PROBLEM, "size": self.size, "sleep": self.sleep}
        if self.log is not None:
            d["log"] = self.log
        if self.bound_sleep:
            d["bound_sleep"] = self.bound_sleep
        if self.gate is not None:
            d["gate"] = self.gate
        return d


def evaluate(instance: SleepyInstance, solution: Mapping[str, Any]) -> Evaluation:
    """Feasible when ``solution["x"]`` is an integer in ``0..size``."""
    x = solution.get("x") if isinstance(solution, Mapping) else None
    if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= instance.size:
        return Evaluation(feasible=False, violations=[f"x must be an integer in 0..{instance.size}, got {x!r}"])
    return Evaluation(feasible=True, objectives={"cost": float(2 * instance.size - x), "x": float(x + 1)},
                      metrics={"x": x})


def lower_bound(instance: SleepyInstance, objective: str) -> float | None:
    """Weak proven bounds: ``cost >= size / 2``, ``x >= 1`` (after ``bound_sleep`` seconds)."""
    if instance.log:
        with open(f"{instance.log}.bounds", "a") as fh:
            fh.write(f"lower_bound {instance.size} {objective}\n")
    time.sleep(instance.bound_sleep)
    return instance.size / 2 if objective == "cost" else 1.0


def quick_lower_bound(instance: SleepyInstance, objective: str) -> float | None:
    """Weaker, instant: ``cost >= size / 4``, ``x >= 1``."""
    return instance.size / 4 if objective == "cost" else 1.0


def _log(instance: SleepyInstance, name: str, seed: int | None) -> None:
    if instance.log:
        with open(instance.log, "a") as fh:
            fh.write(f"{name} {instance.size} {seed} {os.getpid()}\n")
            fh.flush()
            os.fsync(fh.fileno())


def _best_x(instance: SleepyInstance, objective: str) -> int:
    return instance.size if objective == "cost" else 0


def nap(instance: SleepyInstance, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    _log(instance, "nap", seed)
    while instance.gate and not os.path.exists(instance.gate):
        time.sleep(0.02)
    time.sleep(instance.sleep)
    return Result(Status.FEASIBLE, solution={"x": 0})


def exact(instance: SleepyInstance, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    _log(instance, "exact", seed)
    return Result(Status.OPTIMAL, solution={"x": _best_x(instance, objective)})


def partial(instance: SleepyInstance, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    _log(instance, "partial", seed)
    return Result(Status.TIME_LIMIT, solution={"x": instance.size // 2}, bound=float(instance.size - 1),
                  message="stopped at the time limit")


def wrong_bound(instance: SleepyInstance, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    _log(instance, "wrong-bound", seed)
    return Result(Status.TIME_LIMIT, solution={"x": 0}, bound=float(2 * instance.size + 1))


def random_x(instance: SleepyInstance, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    _log(instance, "random", seed)
    return Result(Status.FEASIBLE, solution={"x": int(np.random.default_rng(seed).integers(0, instance.size + 1))})


def hang(instance: SleepyInstance, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    _log(instance, "hang", seed)
    while True:
        time.sleep(0.05)


def crash(instance: SleepyInstance, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    _log(instance, "crash", seed)
    raise RuntimeError("boom")


def die(instance: SleepyInstance, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    _log(instance, "die", seed)
    os._exit(7)


def bad(instance: SleepyInstance, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    _log(instance, "bad", seed)
    return Result(Status.FEASIBLE, solution={"x": -1})


def picky(instance: SleepyInstance, *, objective: str, time_limit: float | None, seed: int | None,
          k: int = 0) -> Result:
    _log(instance, "picky", seed)
    if k < 1:
        raise InputError("params.k", f"must be >= 1, got {k}")
    return Result(Status.FEASIBLE, solution={"x": min(k, instance.size)})


_ALGORITHMS = [
    Algorithm("nap", nap, "heuristic", "sleep, then the worst solution", OBJECTIVES),
    Algorithm("exact", exact, "exact", "the optimum", OBJECTIVES),
    Algorithm("partial", partial, "exact", "an incumbent and a proven bound, cut off", OBJECTIVES),
    Algorithm("wrong-bound", wrong_bound, "exact", "a bound above the optimum (a bug to find)", ("cost",)),
    Algorithm("random", random_x, "baseline", "seeded random x", OBJECTIVES, randomized=True),
    Algorithm("hang", hang, "heuristic", "never returns", OBJECTIVES),
    Algorithm("crash", crash, "heuristic", "raises", OBJECTIVES),
    Algorithm("die", die, "heuristic", "exits the process", OBJECTIVES),
    Algorithm("bad", bad, "heuristic", "an infeasible solution", OBJECTIVES),
    Algorithm("picky", picky, "heuristic", "rejects its parameter", OBJECTIVES),
    Algorithm("missing-dep", nap, "peer", "needs a module that does not exist", OBJECTIVES,
              requires=("optkit_no_such_module",)),
]

def _tiny() -> list[tuple[str, dict[str, Any]]]:
    """Three instances of sizes 2, 3 and 4 that do not sleep."""
    return [(f"tiny-{n}", {"problem": PROBLEM, "size": n, "sleep": 0.0}) for n in (2, 3, 4)]


FORMULATION = Formulation(
    name=PROBLEM,
    summary="test-only: algorithms that sleep, hang, crash or lie",
    instance_from_dict=SleepyInstance.from_dict,
    instance_to_dict=SleepyInstance.to_dict,
    evaluate=evaluate,
    objectives=OBJECTIVES,
    algorithms={a.name: a for a in _ALGORITHMS},
    suites={"tiny": Suite("tiny", "sizes 2, 3, 4", _tiny)},
    lower_bound=lower_bound,
    quick_lower_bound=quick_lower_bound,
)
