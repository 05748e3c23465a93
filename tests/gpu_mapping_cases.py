"""Small seeded random gpu-mapping instances for the exact-solver tests.

Deliberately simple: pick g, 2-4 servers with 1..g free GPUs each (4-12 GPUs in all), split
the replicas over 1-4 stages, draw each stage boundary's total activation bytes T and set
``d^out_{s-1} = T/k_{s-1}``, ``d^in_s = T/k_s`` (so ``k_{s-1} d^out_{s-1} = k_s d^in_s``, the
model's validation rule), ``d^in`` of the first and ``d^out`` of the last stage 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def random_instance_dict(seed: int, *, allreduce: str | None = None, min_replicas: int = 4,
                         max_replicas: int = 12) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    while True:
        g = int(rng.integers(4, 9))
        n_servers = int(rng.integers(2, 5))
        servers = [int(c) for c in rng.integers(1, g + 1, size=n_servers)]
        if min_replicas <= sum(servers) <= max_replicas:
            break
    n = sum(servers)
    n_stages = int(rng.integers(1, min(4, n) + 1))
    # k_s >= 1 summing to n: cut points of 1..n-1
    cuts = sorted(rng.choice(np.arange(1, n), size=n_stages - 1, replace=False).tolist()) if n_stages > 1 else []
    bounds = [0] + cuts + [n]
    k = [bounds[i + 1] - bounds[i] for i in range(n_stages)]
    totals = [float(rng.uniform(1e6, 2e8)) for _ in range(n_stages - 1)]
    stages = []
    for s in range(n_stages):
        stages.append({
            "replicas": k[s],
            "fwd_time": float(rng.uniform(0.005, 0.1)),
            "bwd_time": float(rng.uniform(0.01, 0.2)),
            "in_bytes": totals[s - 1] / k[s] if s > 0 else 0.0,
            "out_bytes": totals[s] / k[s] if s < n_stages - 1 else 0.0,
            "param_bytes": float(rng.uniform(1e6, 2e9)),
        })
    return {
        "problem": "gpu-mapping",
        "cluster": {"gpus_per_server": g, "inter_bandwidth": float(rng.choice([1.25e9, 3.125e9, 1.25e10])),
                    "intra_bandwidth": 3e11},
        "job": {"allreduce": allreduce or ("ring" if rng.random() < 0.5 else "tree"), "stages": stages},
        "servers": servers,
        "name": f"random-{seed}",
    }
