"""Seeded nimp instances (``numpy.random.default_rng``); every dict is in the issue's format.

* :func:`tiny` (suite ``tiny``, 36 instances): 1-8 workers (halving-doubling when N is a power
  of two and the seed says so, ring otherwise), 2-6 machines of 2 or 4 GPUs with a random number
  idle (some machines idle, some full), ``param_bytes`` K = 1e8 and P a multiple of K drawn from
  {0, 1/8, 1/4, 1/2, 1, 4}·K; every fifth instance has a random symmetric P matrix, and every
  ninth (seed = 8 mod 9) has fewer idle GPUs than workers; where seed = 4 mod 9, P = 0 and no
  machine holds the whole job (infeasible through the bandwidth constraint alone; machines are
  turned into 4-GPU machines with 3 idle, or one is added to a 2-machine cluster, so that the
  idle GPUs suffice). Others are infeasible by chance.
* :func:`medium` (suite ``medium``, 5 instances): a 16-worker halving-doubling job on 16 machines
  of 8 GPUs, 3-5 of them idle, the others with 1-7 idle GPUs; P in {1/2, 1, 2}·K. The exact
  solvers' benchmark size.
* :func:`cluster` (suite ``cluster``, 3 instances): the paper's Sec. V-B cluster, 512 machines of
  8 GPUs (64 racks x 8), 30% idle, 10% full, the rest with 1-7 idle GPUs, a 64-worker HD job,
  K = 1e8 B, P = 2K. Titan's timing size (too large for the exact solvers).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from optkit.errors import InputError
from optkit.formulation import Suite

from .model import PROBLEM, NimpInstance

__all__ = ["tiny", "medium", "cluster", "replay_workload", "generate", "GENERATORS", "SUITES", "SIZE_CLASSES"]

K_BYTES = 1.0e8


def _count(v: Any, name: str, low: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise InputError(name, f"must be an integer >= {low}, got {v!r}")
    return v


def _job(n: int, rng: np.random.Generator, hd: bool) -> dict[str, Any]:
    coll = "halving-doubling" if hd and n & (n - 1) == 0 else "ring"
    job: dict[str, Any] = {"workers": n, "collective": coll, "param_bytes": K_BYTES}
    pick = int(rng.integers(3))
    if pick == 1:
        job["model"] = str(rng.choice(["vgg16", "resnet50", "alexnet", "inception3"]))
    elif pick == 2:
        job["placement_sensitive"] = bool(rng.integers(2))
    return job


def pair_capacity(rng: np.random.Generator, machines: int, factors: list[float], k_bytes: float, *,
                  per_pair: bool) -> Any:
    """A pair capacity P drawn as ``factor x k_bytes`` from ``factors``: one scalar, or (``per_pair``)
    a symmetric matrix with one draw per machine pair (zero diagonal)."""
    if not per_pair:
        return float(rng.choice(factors)) * k_bytes
    mat = np.zeros((machines, machines))
    for s in range(machines):
        for t in range(s + 1, machines):
            mat[s, t] = mat[t, s] = float(rng.choice(factors)) * k_bytes
    return mat.tolist()


def tiny(seed: int, *, workers: int | None = None, machines: int | None = None) -> dict[str, Any]:
    """An exact-solvable instance (module docstring)."""
    _count(seed, "seed", 0)
    rng = np.random.default_rng(50_000 + seed)
    n = workers if workers is not None else int(rng.choice([1, 2, 3, 4, 4, 5, 6, 8, 8]))
    M = machines if machines is not None else int(rng.integers(2, 7))
    _count(n, "workers", 1)
    _count(M, "machines", 1)
    ms = []
    for _ in range(M):
        k = int(rng.choice([2, 4]))
        u = rng.random()
        r = k if u < 0.2 else (0 if u < 0.3 else int(rng.integers(1, k)))
        ms.append({"gpus": k, "idle_gpus": r})
    if seed % 9 == 8:  # capacity-infeasible: trim idle GPUs below N
        while sum(m["idle_gpus"] for m in ms) >= n and n > 1:
            s = int(np.argmax([m["idle_gpus"] for m in ms]))
            ms[s]["idle_gpus"] -= 1
        if n == 1:
            for m in ms:
                m["idle_gpus"] = 0
    cap = pair_capacity(rng, M, [0.0, 0.125, 0.25, 0.5, 1.0, 4.0], K_BYTES, per_pair=seed % 5 == 4)
    if seed % 9 == 4 and n > 1:  # bandwidth-infeasible: no machine holds the job, P = 0
        for m in ms:
            m["idle_gpus"] = min(m["idle_gpus"], n - 1, m["gpus"] - 1)
        for m in ms:  # enough idle GPUs on non-idle machines of 4 GPUs
            if sum(x["idle_gpus"] for x in ms) >= n:
                break
            m.update(gpus=4, idle_gpus=min(3, n - 1))
        while sum(x["idle_gpus"] for x in ms) < n:  # only with 2 machines and 7-8 workers
            ms.append({"gpus": 4, "idle_gpus": min(3, n - 1)})
        cap = 0.0
    d = {"problem": PROBLEM, "machines": ms, "pair_capacity_bytes": cap, "job": _job(n, rng, bool(rng.integers(4)))}
    NimpInstance.from_dict(d)
    return d


def medium(seed: int, *, workers: int = 16, machines: int = 16) -> dict[str, Any]:
    """A 16-worker HD job on 16 machines of 8 GPUs (module docstring)."""
    _count(seed, "seed", 0)
    rng = np.random.default_rng(60_000 + seed)
    n_idle = int(rng.integers(3, 6))
    idle = set(rng.choice(machines, size=n_idle, replace=False).tolist())
    ms = [{"gpus": 8, "idle_gpus": 8 if s in idle else int(rng.integers(1, 8))} for s in range(machines)]
    cap = float(rng.choice([0.5, 1.0, 2.0])) * K_BYTES
    d = {"problem": PROBLEM, "name": f"medium-{seed}", "machines": ms, "pair_capacity_bytes": cap,
         "job": {"workers": workers, "collective": "halving-doubling", "param_bytes": K_BYTES}}
    NimpInstance.from_dict(d)
    return d


def cluster(seed: int, *, workers: int = 64, racks: int = 64, machines_per_rack: int = 8,
            gpus: int = 8, capacity_factor: float = 2.0) -> dict[str, Any]:
    """The Sec. V-B cluster with a random occupancy and one HD job (module docstring)."""
    _count(seed, "seed", 0)
    rng = np.random.default_rng(70_000 + seed)
    M = racks * machines_per_rack
    u = rng.random(M)
    idle_gpus = np.where(u < 0.3, gpus, np.where(u < 0.4, 0, rng.integers(1, gpus, size=M)))
    d = {"problem": PROBLEM, "name": f"cluster-{seed}",
         "machines": [{"gpus": gpus, "idle_gpus": int(r)} for r in idle_gpus],
         "pair_capacity_bytes": capacity_factor * K_BYTES,
         "job": {"workers": workers, "collective": "halving-doubling", "param_bytes": K_BYTES}}
    NimpInstance.from_dict(d)
    return d


def replay_workload(seed: int, *, jobs: int = 200, racks: int = 4, machines_per_rack: int = 4,
                    gpus_per_machine: int = 8, mean_interarrival_s: float = 600.0,
                    median_duration_s: float = 7200.0) -> dict[str, Any]:
    """A replay workload of ``optkit simulate nimp`` (:func:`.replay.generate_workload`), checked
    by :func:`.replay.workload_from_dict`."""
    from .replay import generate_workload, workload_from_dict

    _count(seed, "seed", 0)
    for key, v in (("jobs", jobs), ("racks", racks), ("machines_per_rack", machines_per_rack),
                   ("gpus_per_machine", gpus_per_machine)):
        _count(v, key, 1)
    d = generate_workload(seed, jobs=jobs, racks=racks, machines_per_rack=machines_per_rack,
                          gpus_per_machine=gpus_per_machine, mean_interarrival_s=mean_interarrival_s,
                          median_duration_s=median_duration_s)
    workload_from_dict(d)
    return d


GENERATORS = {"tiny": tiny, "medium": medium, "cluster": cluster, "replay": replay_workload}
"""``kind`` of :func:`generate`: a single-job instance (tiny, medium, cluster) or a replay workload."""


def generate(*, kind: str = "tiny", seed: int = 0, **params: Any) -> dict[str, Any]:
    """``optkit generate nimp``: ``kind`` ``tiny``, ``medium`` or ``cluster`` (an instance of
    ``optkit solve``), or ``replay`` (a workload of ``optkit simulate nimp``)."""
    if kind not in GENERATORS:
        raise InputError("kind", f"must be one of {', '.join(GENERATORS)}, got {kind!r}")
    return GENERATORS[kind](seed, **params)


def _named(prefix: str, items: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for s, d in enumerate(items):
        d = dict(d)
        d["name"] = f"{prefix}-{s:02d}"
        out.append((d["name"], d))
    return out


SUITES: dict[str, Suite] = {
    "tiny": Suite("tiny", "36 exact-solvable instances: 1-8 workers (HD/ring) on 2-6 machines of 2-4 GPUs, "
                  "scalar or matrix P, some infeasible", lambda: _named("tiny", [tiny(s) for s in range(36)])),
    "medium": Suite("medium", "5 instances: 16-worker HD job on 16 machines of 8 GPUs (exact-solver benchmark)",
                    lambda: _named("medium", [medium(s) for s in range(5)])),
    "cluster": Suite("cluster", "3 instances: 64-worker HD job on 512 machines of 8 GPUs (Sec. V-B cluster)",
                     lambda: _named("cluster", [cluster(s) for s in range(3)])),
}


def _sized(name: str, seed: int, **size: int) -> tuple[str, dict[str, Any]]:
    d = tiny(seed, **size)
    d["name"] = name
    return name, d


SIZE_CLASSES: dict[str, Suite] = {
    "1-8 workers": Suite("1-8 workers", "tiny-00..05 (2-8 workers on 3-6 machines; tiny-04 infeasible through the "
                         "bandwidth constraint), tiny-08 (fewer idle GPUs than workers) and three feasible instances "
                         "a greedy rule misses: tiny-02 (Tiresias' spread), tiny-15 (Titan, HiveD, Tiresias) and "
                         "tiny-21 (first fit in index order); brute force, CP-SAT and HiGHS prove each in well under "
                         "a second",
                         lambda: [_sized(f"tiny-{s:02d}", s) for s in (0, 1, 2, 3, 4, 5, 8, 15, 21)]),
    "9-10 workers": Suite("9-10 workers", "tiny's rules at 9 workers on 4 machines (seeds 2 and 5, feasible) and 10 "
                          "on 5 (seed 4: infeasible through the bandwidth constraint); brute force, CP-SAT and HiGHS "
                          "prove each in about a second (measured: brute force takes 6-10 s on feasible 10-worker "
                          "instances of 5 machines, HiGHS minutes on lex-cross at 12-16 workers)",
                          lambda: [_sized("w9-m4-s2", 2, workers=9, machines=4),
                                   _sized("w9-m4-s5", 5, workers=9, machines=4),
                                   _sized("w10-m5-s4", 4, workers=10, machines=5)]),
}
"""The size classes :func:`optkit.testing.check_algorithm` covers by default (``size_classes``
of the formulation): every exact solver (brute force where it holds, CP-SAT, HiGHS) proves each
instance in seconds; the larger class is above 8 workers (more workers than any machine has
GPUs), where a bug that only shows with more than 8 workers is seen."""
