"""Instances built from integer draws, for property tests (:mod:`optkit.testing.strategies`).

:func:`sample` takes ``draw(lo, hi) -> int`` (an integer in ``[lo, hi]``; Hypothesis's
``integers(lo, hi)`` shrinks toward ``lo``) and returns a valid instance dict within the
caller's limits. Every choice is an integer whose smallest value is the simplest instance: one
server, one GPU, one stage, no bytes to send, a ring AllReduce. No randomness of its own, no
Hypothesis import: the engine's strategy wraps it.
"""

from __future__ import annotations

from typing import Any, Callable

from optkit.generators import draw_sizes
from optkit.validation import MAX_COUNT, integer

__all__ = ["sample", "stages", "BYTES"]

Draw = Callable[[int, int], int]

BYTES = (0.0, 1e3, 3.3e5, 1e6, 2.5e7, 4e8)
"""Byte sizes a drawn stage sends or holds (index 0, no bytes, is the simplest)."""


def stages(draw: Draw, reps: list[int]) -> list[dict[str, Any]]:
    """Pipeline stages of ``reps`` replicas each; eq. (4)'s balance holds: the activations a
    stage sends equal what the next receives (``replicas · out_bytes = next replicas · in_bytes``)."""
    out: list[dict[str, Any]] = []
    for s, k in enumerate(reps):
        fwd = 0.005 * draw(1, 20)
        out_bytes = 0.0 if s == len(reps) - 1 else BYTES[draw(0, len(BYTES) - 1)]
        in_bytes = 0.0 if s == 0 else out[-1]["out_bytes"] * reps[s - 1] / k
        out.append({"replicas": k, "fwd_time": fwd, "bwd_time": fwd * draw(1, 3), "in_bytes": in_bytes,
                    "out_bytes": out_bytes, "param_bytes": BYTES[draw(0, len(BYTES) - 1)]})
    return out


def split(draw: Draw, total: int, parts: int) -> list[int]:
    """``total`` as ``parts`` positive integers (shrinks toward everything in the last part)."""
    reps = [1] * parts
    extra = total - parts
    for s in range(parts - 1):
        e = draw(0, extra)
        reps[s] += e
        extra -= e
    reps[-1] += extra
    return reps


def sample(draw: Draw, *, max_replicas: int = 8, max_stages: int = 3, max_servers: int = 4,
           max_gpus_per_server: int = 8) -> dict[str, Any]:
    """A gpu-mapping instance: at most ``max_replicas`` replicas (= free GPUs) in at most
    ``max_stages`` stages, on at most ``max_servers`` servers of ``1..max_gpus_per_server`` GPUs.
    A limit below 1 or above the validator's range is an ``InputError`` naming it."""
    max_replicas = integer(max_replicas, "max_replicas", low=1, high=MAX_COUNT)
    max_stages = integer(max_stages, "max_stages", low=1, high=MAX_COUNT)
    max_servers = integer(max_servers, "max_servers", low=1, high=MAX_COUNT)
    max_gpus_per_server = integer(max_gpus_per_server, "max_gpus_per_server", low=1, high=MAX_COUNT)
    g = draw(1, max_gpus_per_server)
    free = draw_sizes(draw, max_servers, g, max_replicas)
    total = sum(free)
    reps = split(draw, total, draw(1, min(max_stages, total)))
    return {"problem": "gpu-mapping",
            "cluster": {"gpus_per_server": g, "inter_bandwidth": (1.25e9, 1.25e8, 1.25e10)[draw(0, 2)],
                        "intra_bandwidth": (3e11, 3e10)[draw(0, 1)]},
            "job": {"allreduce": ("ring", "tree")[draw(0, 1)], "stages": stages(draw, reps)},
            "servers": free}
