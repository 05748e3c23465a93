"""Seeded gpu-mapping instances with tensor-parallel and MoE stages (Sec. VI, issue 37), small enough
for brute force: the exact solvers are checked against each other on them, and the battery runs
every algorithm on them (suite ``llm-small``, size class ``llm``).

A job of 1-3 stages, each drawn as plain (1-3 replicas), tensor-parallel (t = 2, 1-2 replicas)
or MoE (e = 2 or 3 expert groups, 1-2 replicas, routing uniform or zipf with exponent 1.0), with
at most ``max_gpus`` GPUs in all; servers of ``g = 4`` GPUs whose free GPUs are the loads of a
random placement that keeps every tensor-parallel replica on one server (so every instance is
feasible). Bytes and times are drawn from short lists; the inter-stage balance
``k_{s-1} d^out_{s-1} = k_s d^in_s`` holds. Everything from ``numpy.random.default_rng(seed)``:
same seed, same dict.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from optkit.errors import InputError
from optkit.formulation import Suite
from optkit.validation import integer

from .model import PROBLEM

__all__ = ["llm_instance", "KINDS", "SUITES", "SIZE_CLASS", "size_class_cases", "random_free_gpus"]

KINDS = ("tp", "moe", "mixed")
"""``tp``: tensor-parallel and plain stages; ``moe``: MoE and plain stages; ``mixed``: any."""
_BYTES = (1e6, 2.5e7, 4e8)


def _stage_kind(rng: np.random.Generator, kind: str) -> str:
    pool = {"tp": ("plain", "tp"), "moe": ("plain", "moe"), "mixed": ("plain", "tp", "moe")}[kind]
    return pool[int(rng.integers(len(pool)))]


def _draw_stages(rng: np.random.Generator, kind: str) -> tuple[list[dict[str, Any]], list[int]]:
    """1-3 stages of the module docstring's kinds; the placement units' sizes, stage by stage."""
    stages: list[dict[str, Any]] = []
    units: list[int] = []
    for _ in range(int(rng.integers(1, 4))):
        sk = _stage_kind(rng, kind)
        k = int(rng.integers(1, 3)) if sk != "plain" else int(rng.integers(1, 4))
        fwd = 0.005 * int(rng.integers(1, 10))
        st: dict[str, Any] = {"replicas": k, "fwd_time": fwd, "bwd_time": 2 * fwd, "in_bytes": 0.0,
                              "out_bytes": 0.0, "param_bytes": _BYTES[int(rng.integers(len(_BYTES)))]}
        if sk == "tp":
            st["tensor_parallel"] = 2
            st["tp_bytes"] = _BYTES[int(rng.integers(len(_BYTES)))]
            units.extend([2] * k)
        elif sk == "moe":
            e = int(rng.integers(2, 4))
            st["experts"] = e
            st["expert_bytes"] = _BYTES[int(rng.integers(len(_BYTES)))]
            if rng.integers(2):
                st["routing"], st["routing_skew"] = "zipf", 1.0
            units.extend([1] * (k * e))
        else:
            units.extend([1] * k)
        stages.append(st)
    return stages, units


def llm_instance(seed: int, *, kind: str = "mixed", max_gpus: int = 8, gpus_per_server: int = 4,
                 allreduce: str | None = None) -> dict[str, Any]:
    """A feasible instance dict (module docstring) with at least one tensor-parallel (``tp``) or
    MoE (``moe``) stage, or either (``mixed``)."""
    if kind not in KINDS:
        raise InputError("kind", f"must be one of {', '.join(KINDS)}, got {kind!r}", problem=PROBLEM)
    seed = integer(seed, "seed", low=0)
    max_gpus = integer(max_gpus, "max_gpus", low=2, high=64)
    g = integer(gpus_per_server, "gpus_per_server", low=2, high=64)
    rng = np.random.default_rng(seed)
    while True:  # redraw until the job fits max_gpus and has a stage of the kind asked for (same rng: seeded)
        stages, units = _draw_stages(rng, kind)
        gpus = sum(st["replicas"] * st.get("tensor_parallel", st.get("experts", 1)) for st in stages)
        if gpus <= max_gpus and any("tensor_parallel" in st or "experts" in st for st in stages):
            break
    for s in range(len(stages) - 1):
        out = _BYTES[int(rng.integers(len(_BYTES)))]
        stages[s]["out_bytes"] = out
        stages[s + 1]["in_bytes"] = out * stages[s]["replicas"] / stages[s + 1]["replicas"]
    servers = random_free_gpus(units, g, rng)
    return {"problem": PROBLEM,
            "name": f"llm-{kind}-s{seed}",
            "cluster": {"gpus_per_server": g, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11},
            "job": {"allreduce": allreduce or ("ring", "tree")[int(rng.integers(2))], "stages": stages},
            "servers": servers}


def random_free_gpus(units: Sequence[int], g: int, rng: np.random.Generator) -> list[int]:
    """Free GPUs per server that a job of these placement ``units`` (a tensor-parallel replica:
    t GPUs that share a server; any other vertex: 1) fills exactly: the loads of a random
    placement of the units, largest first, each on a uniformly drawn server of ``g`` GPUs it fits
    on or on a new one, the servers then in a random order. Every such instance is feasible."""
    loads: list[int] = []
    for size in sorted(units, reverse=True):
        fits = [m for m in range(len(loads)) if loads[m] + size <= g]
        choice = int(rng.integers(len(fits) + 1))
        if choice == len(fits):
            loads.append(size)
        else:
            loads[fits[choice]] += size
    order = rng.permutation(len(loads))
    return [loads[int(m)] for m in order]


def _build_llm_small() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for kind in ("tp", "moe", "mixed"):
        for seed in range(4):
            d = llm_instance(seed, kind=kind)
            out.append((d["name"], d))
    return out


SUITES: dict[str, Suite] = {
    "llm-small": Suite("llm-small", "12 jobs of 2-8 GPUs with tensor-parallel (t = 2) and MoE (e = 2-3) stages on "
                       "servers of 4 GPUs (brute-force checkable)", _build_llm_small),
}

SIZE_CLASS = (("tp", 0), ("tp", 1), ("moe", 0), ("moe", 2), ("mixed", 1))
"""``(kind, seed)`` of the ``llm-small`` instances in gpu-mapping's size class ``llm-small``
(:data:`.generate.SIZE_CLASSES`), the jobs with tensor-parallel and MoE stages that
:func:`optkit.testing.check_algorithm` runs every algorithm on by default: two tensor-parallel
jobs (one of them with two tensor-parallel stages), three MoE jobs (one with a zipf-routed
stage; the ``mixed`` draw of seed 1 has an MoE stage only), five of the suite's twelve so that the default battery stays within the test budget (every exact solver proves or
refuses each in well under a second)."""


def size_class_cases() -> list[tuple[str, dict[str, Any]]]:
    """``(name, instance dict)`` of :data:`SIZE_CLASS`, in its order."""
    out = []
    for kind, seed in SIZE_CLASS:
        d = llm_instance(seed, kind=kind)
        out.append((d["name"], d))
    return out
