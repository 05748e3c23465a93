"""Instances built from integer draws, for property tests (:mod:`optkit.testing.strategies`).

:func:`sample` takes ``draw(lo, hi) -> int`` (Hypothesis's ``integers(lo, hi)`` shrinks toward
``lo``) and returns a valid instance dict within the caller's limits; the smallest draws give
the simplest instance: one idle one-GPU machine and a one-worker job. The job never has more
workers than the cluster has idle GPUs (a bandwidth limit may still make it infeasible).
"""

from __future__ import annotations

from typing import Any, Callable

from optkit.errors import InputError
from optkit.validation import integer

from .model import MAX_MACHINES

__all__ = ["sample", "PAIR_CAPACITIES"]

PAIR_CAPACITIES = ("any", "scalar", "matrix")


def sample(draw: Callable[[int, int], int], *, max_workers: int = 8, max_machines: int = 6,
           max_gpus_per_machine: int = 4, pair_capacity: str = "any") -> dict[str, Any]:
    """A nimp instance: at most ``max_workers`` workers, at most ``max_machines`` machines of
    ``1..max_gpus_per_machine`` GPUs (idle, non-idle or full), and a pair capacity
    (``pair_capacity``: ``"scalar"``, ``"matrix"`` or ``"any"``) from a tight 1/8 of K to
    twice K, K the job's parameter bytes (the smallest draw: twice K, no bandwidth limit in
    practice). A limit out of range is an ``InputError`` naming it."""
    max_workers = integer(max_workers, "max_workers", low=1, high=MAX_MACHINES)
    max_machines = integer(max_machines, "max_machines", low=1, high=MAX_MACHINES)
    max_gpus_per_machine = integer(max_gpus_per_machine, "max_gpus_per_machine", low=1, high=1_000_000)
    if pair_capacity not in PAIR_CAPACITIES:
        raise InputError("pair_capacity", f"must be one of {', '.join(PAIR_CAPACITIES)}, got {pair_capacity!r}")
    machines = []
    for _ in range(draw(1, max_machines)):
        gpus = draw(1, max_gpus_per_machine)
        machines.append({"gpus": gpus, "idle_gpus": gpus - draw(0, gpus)})
    idle = sum(m["idle_gpus"] for m in machines)
    if idle == 0:
        machines[0]["idle_gpus"] = machines[0]["gpus"]
        idle = machines[0]["gpus"]
    k = 1e8 * draw(1, 4)
    job = {"workers": draw(1, min(max_workers, idle)), "collective": ("halving-doubling", "ring")[draw(0, 1)],
           "param_bytes": k}
    M = len(machines)
    kind = pair_capacity if pair_capacity != "any" else ("scalar", "matrix")[draw(0, 1)]
    if kind == "scalar":
        cap: Any = k * (16 - draw(0, 15)) / 8
    else:
        cap = [[0.0] * M for _ in range(M)]
        for a in range(M):
            for b in range(a + 1, M):
                cap[a][b] = cap[b][a] = k * (16 - draw(0, 15)) / 8
    return {"problem": "nimp", "machines": machines, "pair_capacity_bytes": cap, "job": job}
