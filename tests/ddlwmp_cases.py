"""Small seeded ddlwmp instances for the exact-solver tests.

2-3 servers of 4 GPUs (1 s slots), up to 6 jobs of 1-4 GPUs drawn from a few synthetic pipeline
models (1-2 stages; per-iteration times of roughly 0.05-0.5 s depending on the placement),
5-60 iterations, integer releases 0-10: schedules fit in a few tens of one-second slots. Each
stage boundary's total activation bytes T sets ``d^out_{s-1} = T/k_{s-1}``, ``d^in_s = T/k_s``
(the model's validation rule).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _model(rng: np.random.Generator, gpus: int) -> dict[str, Any]:
    n_stages = 1 if gpus == 1 else int(rng.integers(1, 3))
    if n_stages == 1:
        k = [gpus]
    else:
        first = int(rng.integers(1, gpus))
        k = [first, gpus - first]
    total = float(rng.uniform(1e6, 2e7))
    stages = []
    for s in range(n_stages):
        stages.append({
            "replicas": k[s],
            "fwd_time": float(rng.uniform(0.015, 0.12)),
            "bwd_time": float(rng.uniform(0.03, 0.24)),
            "in_bytes": total / k[s] if s > 0 else 0.0,
            "out_bytes": total / k[s] if s < n_stages - 1 else 0.0,
            "param_bytes": float(rng.uniform(1e6, 3e7)),
        })
    return {"allreduce": "ring" if rng.random() < 0.5 else "tree", "stages": stages}


def random_instance_dict(seed: int, *, servers: int | None = None, jobs: int | None = None,
                         max_iterations: int = 60, max_gpus: int = 4) -> dict[str, Any]:
    """A seeded instance: ``servers`` (default 2-3) servers of 4 GPUs, ``jobs`` (default 2-6)
    jobs of 1..``max_gpus`` GPUs, iterations 5..``max_iterations``, integer releases 0-10."""
    rng = np.random.default_rng(seed)
    n_servers = servers if servers is not None else int(rng.integers(2, 4))
    n_jobs = jobs if jobs is not None else int(rng.integers(2, 7))
    n_models = int(rng.integers(1, 4))
    models = {f"m{j}": _model(rng, int(rng.integers(1, max_gpus + 1))) for j in range(n_models)}
    names = sorted(models)
    job_list = []
    for i in range(n_jobs):
        job_list.append({
            "id": f"j{i}",
            "release": int(rng.integers(0, 11)),
            "model": names[int(rng.integers(0, len(names)))],
            "iterations": int(rng.integers(5, max_iterations + 1)),
            "predicted_iterations": float(rng.integers(5, max_iterations + 1)),
        })
    return {
        "problem": "ddlwmp",
        "cluster": {"servers": n_servers, "gpus_per_server": 4,
                    "inter_bandwidth": float(rng.choice([1.25e9, 3.125e9, 1.25e10])),
                    "intra_bandwidth": 3e11},
        "models": models,
        "jobs": job_list,
        "name": f"random-{seed}",
    }


def random_instance(seed: int, **kwargs: Any) -> Any:
    from optkit.formulations.ddlwmp.model import DdlwmpInstance

    return DdlwmpInstance.from_dict(random_instance_dict(seed, **kwargs))
