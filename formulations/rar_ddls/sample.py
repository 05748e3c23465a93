"""Instances built from integer draws, for property tests (:mod:`optkit.testing.strategies`).

:func:`sample` takes ``draw(lo, hi) -> int`` (Hypothesis's ``integers(lo, hi)`` shrinks toward
``lo``) and returns a valid instance dict within the caller's limits; the smallest draws give
the simplest instance: one server of one GPU, one one-GPU job of one iteration. The horizon is
the sum of every job's contention-free time at its fastest server count (the serial schedule
fits it: the exact solvers then prove the optimum, as for the ``tiny`` suite).
"""

from __future__ import annotations

from typing import Any, Callable

from optkit.generators import draw_sizes
from optkit.validation import MAX_COUNT, integer

from .generate import B_INTER, network_dict
from .model import RarInstance, fastest_servers, solo_slots

__all__ = ["sample"]


def sample(draw: Callable[[int, int], int], *, max_jobs: int = 3, max_gpus: int = 8, max_servers: int = 3,
           max_gpus_per_server: int = 4, max_iterations: int = 30) -> dict[str, Any]:
    """A rar-ddls instance: at most ``max_jobs`` jobs of ``1..max_iterations`` iterations on at
    most ``max_servers`` servers of ``1..max_gpus_per_server`` GPUs, at most ``max_gpus`` GPUs in
    all. A limit out of range is an ``InputError`` naming it."""
    max_jobs = integer(max_jobs, "max_jobs", low=1, high=MAX_COUNT)
    max_gpus = integer(max_gpus, "max_gpus", low=1, high=MAX_COUNT)
    max_servers = integer(max_servers, "max_servers", low=1, high=MAX_COUNT)
    max_gpus_per_server = integer(max_gpus_per_server, "max_gpus_per_server", low=1, high=MAX_COUNT)
    max_iterations = integer(max_iterations, "max_iterations", low=1, high=MAX_COUNT)
    caps = draw_sizes(draw, max_servers, max_gpus_per_server, max_gpus)
    n = sum(caps)
    jobs = []
    for k in range(draw(1, max_jobs)):
        gpus = draw(1, min(4, n))
        tau0 = 0.05 * draw(2, 5)
        batch = (16, 32, 64, 128)[draw(0, 3)]
        share = 0.05 * draw(5, 9)
        grad = share * tau0 * B_INTER * gpus / (2.0 * (gpus - 1)) if gpus > 1 else 1e6 * draw(1, 100)
        jobs.append({"id": f"j{k}", "gpus": gpus, "iterations": draw(1, max_iterations), "grad_bytes": float(grad),
                     "batch": batch, "fwd_time_per_sample": 0.4 * tau0 / batch, "bwd_time": 0.6 * tau0})
    d = {"problem": "rar-ddls", "servers": caps, "network": network_dict((1.0, 0.5)[draw(0, 1)], 0.01, 0.2),
         "slot_seconds": 1.0, "horizon": 1, "jobs": jobs}
    inst = RarInstance.from_dict(d)
    d["horizon"] = max(1, sum(solo_slots(inst, j, fastest_servers(inst.servers, j.gpus, j, inst.network))
                              for j in inst.jobs))
    return d
