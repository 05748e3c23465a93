"""The (1 - 1/e) claim of Theorems 4-5, measured so that it can fail.

The paper's remaining-machines form (Eq. 3, :func:`.bounds.approximation_check`) divides by
``C_max = max(|S|, |N|)``, so on a large cluster every placement scores close to 1 and the check
cannot fail. Here the objectives are the *submodular* quantities the greedy maximises, computed
exactly and with no constant added:

* Theorem 5 (second objective): ``H = N - machines used``, the machines saved by merging the N
  one-worker sets (Def. 1: the "reduction of deployed machine number achieved by merging");
* Theorem 4 (first objective): ``|S_n| - idle machines used``, the idle machines left unused.

Ratio = heuristic value / optimal value (1 when the optimum is 0); the claim is violated when the
ratio is below ``1 - 1/e``. The optimum is the lexicographic optimum of an exhaustive search
(:func:`.exact.brute_force`, independent of Titan). :func:`trials` draws small instances whose
bandwidth constraint binds (so Titan is not trivially optimal), counts the instances tried, those
where both found a placement, and the violations; an instance where Titan finds nothing although a
placement exists counts as a violation of both theorems (ratio 0).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .bounds import RATIO
from .generate import pair_capacity
from .model import NimpInstance, criteria

__all__ = ["submodular_values", "ratios", "trials", "random_instance"]


def submodular_values(instance: NimpInstance, idle_used: int, used: int) -> tuple[int, int]:
    """(idle machines left unused, machines saved by merging) = (|S_n| - idle used, N - used)."""
    n_idle = sum(1 for m in instance.machines if m.usable and m.idle)
    return n_idle - idle_used, instance.N - used


def ratios(instance: NimpInstance, heuristic: Sequence[int] | None, optimum: Sequence[int]) -> dict[str, Any]:
    """Ratios of :func:`submodular_values` (heuristic / optimum) for Theorems 4 and 5, and whether
    each holds (>= 1 - 1/e). ``heuristic`` = (idle used, used) or ``None`` (found nothing: ratio 0)."""
    o = submodular_values(instance, optimum[0], optimum[1])
    h = submodular_values(instance, heuristic[0], heuristic[1]) if heuristic is not None else (0, 0)
    out: dict[str, Any] = {"optimum_values": list(o), "heuristic_values": list(h)}
    for k, name in ((0, "theorem4"), (1, "theorem5")):
        r = 0.0 if heuristic is None else (1.0 if o[k] <= 0 else h[k] / o[k])
        out[f"ratio_{name}"] = r
        out[f"holds_{name}"] = r >= RATIO - 1e-12
    return out


def random_instance(rng: np.random.Generator) -> dict[str, Any]:
    """A small instance with a binding pair capacity: 3-6 machines of 4 GPUs (some idle), a
    halving-doubling job of 2-8 workers, K = 1e8 B, P in {1/8, 1/4, 1/2}·K (scalar or a matrix)."""
    M = int(rng.integers(3, 7))
    ms = []
    for _ in range(M):
        u = rng.random()
        ms.append({"gpus": 4, "idle_gpus": 4 if u < 0.3 else int(rng.integers(1, 4))})
    n = int(rng.choice([2, 3, 4, 5, 6, 8]))
    K = 1.0e8
    cap = pair_capacity(rng, M, [0.125, 0.25, 0.5], K, per_pair=bool(rng.random() < 0.3))
    return {"problem": "nimp", "machines": ms, "pair_capacity_bytes": cap,
            "job": {"workers": n, "collective": "halving-doubling", "param_bytes": K}}


def trials(count: int, seed: int, **titan_readings: str) -> dict[str, Any]:
    """Titan (with ``titan_readings``) against the exhaustive optimum on ``count`` instances of
    :func:`random_instance` (``numpy.random.default_rng(seed)``): instances tried, feasible ones
    compared, violations of each theorem, the worst ratios and up to 5 violating instances."""
    from .exact import brute_force
    from .titan import titan

    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {"tried": 0, "compared": 0, "titan_found_none": 0, "titan_optimal": 0,
                           "violations_theorem4": 0, "violations_theorem5": 0,
                           "worst_ratio_theorem4": 1.0, "worst_ratio_theorem5": 1.0, "examples": []}
    while out["tried"] < count:
        d = random_instance(rng)
        inst = NimpInstance.from_dict(d)
        out["tried"] += 1
        best = brute_force(inst)
        if best is None:
            continue
        out["compared"] += 1
        opt = best[1]
        cap = float(inst.capacity[0, 0]) if inst.capacity_is_scalar else inst.capacity
        m = titan([x.gpus for x in inst.machines], [x.idle_gpus for x in inst.machines], cap, inst.phases(),
                  workers=inst.N, **titan_readings)
        heur = criteria(inst, m)[:2] if m is not None else None
        if heur is None:
            out["titan_found_none"] += 1
        elif tuple(heur) == tuple(opt[:2]):
            out["titan_optimal"] += 1
        r = ratios(inst, heur, opt)
        bad = False
        for name in ("theorem4", "theorem5"):
            out[f"worst_ratio_{name}"] = min(out[f"worst_ratio_{name}"], r[f"ratio_{name}"])
            if not r[f"holds_{name}"]:
                out[f"violations_{name}"] += 1
                bad = True
        if bad and len(out["examples"]) < 5:
            out["examples"].append({"instance": d, "titan": None if heur is None else list(heur),
                                    "optimum": list(opt[:2]), **r})
    return out
