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

__all__ = ["sample", "sample_llm", "stages", "BYTES"]

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
           max_gpus_per_server: int = 8, max_tensor_parallel: int = 1, max_experts: int = 1) -> dict[str, Any]:
    """A gpu-mapping instance: at most ``max_replicas`` replicas (= free GPUs) in at most
    ``max_stages`` stages, on at most ``max_servers`` servers of ``1..max_gpus_per_server`` GPUs.
    With ``max_tensor_parallel`` or ``max_experts`` above 1 (default 1: the paper's jobs, drawn
    exactly as before), stages may be tensor-parallel (t slices per replica, one server each) or
    MoE (e expert groups per replica): :func:`sample_llm`; ``max_replicas`` then bounds the GPUs.
    A limit below 1 or above the validator's range is an ``InputError`` naming it."""
    max_replicas = integer(max_replicas, "max_replicas", low=1, high=MAX_COUNT)
    max_stages = integer(max_stages, "max_stages", low=1, high=MAX_COUNT)
    max_servers = integer(max_servers, "max_servers", low=1, high=MAX_COUNT)
    max_gpus_per_server = integer(max_gpus_per_server, "max_gpus_per_server", low=1, high=MAX_COUNT)
    max_tensor_parallel = integer(max_tensor_parallel, "max_tensor_parallel", low=1, high=MAX_COUNT)
    max_experts = integer(max_experts, "max_experts", low=1, high=MAX_COUNT)
    if max_tensor_parallel > 1 or max_experts > 1:
        return sample_llm(draw, max_gpus=max_replicas, max_stages=max_stages, max_servers=max_servers,
                          max_gpus_per_server=max_gpus_per_server, max_tensor_parallel=max_tensor_parallel,
                          max_experts=max_experts)
    g = draw(1, max_gpus_per_server)
    free = draw_sizes(draw, max_servers, g, max_replicas)
    total = sum(free)
    reps = split(draw, total, draw(1, min(max_stages, total)))
    return {"problem": "gpu-mapping",
            "cluster": {"gpus_per_server": g, "inter_bandwidth": (1.25e9, 1.25e8, 1.25e10)[draw(0, 2)],
                        "intra_bandwidth": (3e11, 3e10)[draw(0, 1)]},
            "job": {"allreduce": ("ring", "tree")[draw(0, 1)], "stages": stages(draw, reps)},
            "servers": free}


def sample_llm(draw: Draw, *, max_gpus: int, max_stages: int, max_servers: int, max_gpus_per_server: int,
               max_tensor_parallel: int, max_experts: int) -> dict[str, Any]:
    """An instance whose stages may be tensor-parallel or MoE (Sec. VI), feasible by construction:
    each replica (a tensor-parallel replica's t slices together; an MoE replica's groups one by one)
    is placed as it is drawn, on a server opened or already open with room, and the free GPUs are
    the servers' loads. A replica that finds no room (all ``max_servers`` servers full) is not
    added; a stage left without replicas ends the job (the first stage always has one: every
    server starts empty). Every choice shrinks toward the paper's
    plain one-replica stage (kind index 0, sizes at their lower bound)."""
    g = draw(1, max_gpus_per_server)
    loads: list[int] = []
    reps: list[int] = []
    extra: list[dict[str, Any]] = []

    def place(size: int) -> bool:
        fits = [m for m in range(len(loads)) if loads[m] + size <= g]
        can_open = len(loads) < max_servers and size <= g
        if not fits and not can_open:
            return False
        choice = draw(0, len(fits) - (0 if can_open else 1))
        if choice == len(fits):
            loads.append(size)
        else:
            loads[fits[choice]] += size
        return True

    for _ in range(draw(1, max_stages)):
        room = max_gpus - sum(loads)
        if room < 1:
            break
        kind = draw(0, 2)  # 0 plain, 1 tensor-parallel, 2 MoE
        t = draw(2, min(max_tensor_parallel, g, room)) if kind == 1 and min(max_tensor_parallel, g, room) >= 2 else 1
        e = draw(2, min(max_experts, room)) if kind == 2 and min(max_experts, room) >= 2 else 1
        want = draw(1, max(1, room // (t * e)))
        k = 0
        for _ in range(want):
            if t > 1:
                if not place(t):
                    break
            else:  # an MoE replica's e groups (one GPU each) fit iff e GPUs are free or openable
                if sum(g - c for c in loads) + (max_servers - len(loads)) * g < e:
                    break
                for _ in range(e):
                    place(1)
            k += 1
        if k == 0:
            break
        fields: dict[str, Any] = {}
        if t > 1:
            fields = {"tensor_parallel": t, "tp_bytes": BYTES[draw(0, len(BYTES) - 1)]}
        elif e > 1:
            fields = {"experts": e, "expert_bytes": BYTES[draw(0, len(BYTES) - 1)]}
            if draw(0, 1):
                fields.update(routing="zipf", routing_skew=float(draw(1, 3)) / 2)
        reps.append(k)
        extra.append(fields)
    built = stages(draw, reps)
    for st, fields in zip(built, extra):
        st.update(fields)
    return {"problem": "gpu-mapping",
            "cluster": {"gpus_per_server": g, "inter_bandwidth": (1.25e9, 1.25e8, 1.25e10)[draw(0, 2)],
                        "intra_bandwidth": (3e11, 3e10)[draw(0, 1)]},
            "job": {"allreduce": ("ring", "tree")[draw(0, 1)], "stages": built},
            "servers": loads}
