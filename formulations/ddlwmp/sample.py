"""Instances built from integer draws, for property tests (:mod:`optkit.testing.strategies`).

:func:`sample` takes ``draw(lo, hi) -> int`` (Hypothesis's ``integers(lo, hi)`` shrinks toward
``lo``) and returns a valid instance dict within the caller's limits; the smallest draws give
the simplest instance: one server of one GPU, one one-stage model, one job released at 0 that
runs one iteration, predicted exactly. No randomness, no Hypothesis import.
"""

from __future__ import annotations

from typing import Any, Callable

from optkit.formulations.gpu_mapping.sample import split, stages
from optkit.validation import MAX_COUNT, integer

__all__ = ["sample"]


def sample(draw: Callable[[int, int], int], *, max_jobs: int = 4, max_gpus: int = 8, max_servers: int = 4,
           max_models: int = 2, max_stages: int = 2, max_iterations: int = 20, max_release: int = 10) -> dict[str, Any]:
    """A ddlwmp instance: at most ``max_jobs`` jobs (releases ``0..max_release`` s, ``1..
    max_iterations`` iterations, predictions off by at most ``max_iterations``) of at most ``max_models``
    pipeline models (at most ``max_stages`` stages each, every model fits the cluster), on at
    most ``max_servers`` servers of one size g with at most ``max_gpus`` GPUs in all. A limit
    out of range is an ``InputError`` naming it."""
    max_jobs = integer(max_jobs, "max_jobs", low=1, high=MAX_COUNT)
    max_gpus = integer(max_gpus, "max_gpus", low=1, high=MAX_COUNT)
    max_servers = integer(max_servers, "max_servers", low=1, high=MAX_COUNT)
    max_models = integer(max_models, "max_models", low=1, high=MAX_COUNT)
    max_stages = integer(max_stages, "max_stages", low=1, high=MAX_COUNT)
    max_iterations = integer(max_iterations, "max_iterations", low=1, high=MAX_COUNT)
    max_release = integer(max_release, "max_release", low=0, high=MAX_COUNT)
    g = draw(1, min(8, max_gpus))
    servers = draw(1, max(1, min(max_servers, max_gpus // g)))
    total = g * servers
    models = {}
    for m in range(draw(1, max_models)):
        need = draw(1, min(total, 4))
        models[f"m{m}"] = {"allreduce": ("ring", "tree")[draw(0, 1)],
                           "stages": stages(draw, split(draw, need, draw(1, min(max_stages, need))))}
    names = list(models)
    jobs = []
    for i in range(draw(1, max_jobs)):
        iterations = draw(1, max_iterations)
        off = draw(0, max_iterations)  # the prediction's error (0: exact)
        predicted = iterations - off if draw(0, 1) else iterations + off
        jobs.append({"id": f"j{i}", "release": float(draw(0, max_release)), "model": names[draw(0, len(names) - 1)],
                     "iterations": iterations, "predicted_iterations": float(max(0, predicted))})
    return {"problem": "ddlwmp",
            "cluster": {"servers": servers, "gpus_per_server": g, "inter_bandwidth": (1.25e9, 1.25e8)[draw(0, 1)],
                        "intra_bandwidth": 3e11},
            "models": models, "jobs": jobs}
