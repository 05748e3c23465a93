"""The (1 - 1/e) claim of Theorems 4-5, measured so that it can fail.

The paper's remaining-machines form (Eq. 3, :func:`.bounds.approximation_check`) divides by
``C_max = max(|S|, |N|)``, so on a large cluster every placement scores close to 1 and the check
cannot fail. Here the objectives are the *submodular* quantities the greedy maximises, computed
exactly and with no constant added:

* Theorem 5 (second objective): ``H = N - machines used``, the machines saved by merging the N
  one-worker sets (Def. 1: the "reduction of deployed machine number achieved by merging");
* Theorem 4 (first objective): ``|S_n| - idle machines used``, the idle machines left unused.

Ratio = Titan's value / the optimum's value. An instance whose optimum value is 0 is never a
violation (any value is >= (1 - 1/e)·0; ratio 1 by convention). The optimum is the lexicographic
optimum of an exhaustive search (:func:`.exact.brute_force`, independent of Titan).

:func:`trials` keeps two questions apart:

* **What the paper's algorithm does** (the instances as drawn, bandwidth binding): on the
  instances with a placement, how often Titan finds none (``titan_found_none``; its ratio is 0,
  a violation unless the optimum's value is 0), the distribution of the ratios where it places
  (``ratios_placed_theorem4/5``: ratio -> instances) and the violations among those
  (``violations_placed_theorem4/5``); ``violations_theorem4/5`` counts both; ``by_capacity``
  splits the instances compared and those where Titan found nothing by a scalar P or a matrix.
* **Where the proof's assumptions break.** The proof applies the greedy (1 - 1/e) bound for
  monotone submodular maximisation (Lemma 3) without the capacity and bandwidth constraints, and
  Alg. 2's line 18 deploys the remaining workers on one machine regardless of them. Under the
  reading ``titan_algorithm="pseudo-code"``, every instance where Titan finds nothing is traced
  to the constraint that line 18's deployment breaks (``found_none_breaks``: ``bandwidth``,
  ``resource`` or both). ``without_bandwidth`` repeats the comparison on the same instances with
  P removed (the resource relaxation's exact optimum, :func:`.bounds.resource_relaxation`): what
  is left there is the greedy's own behaviour under the capacity constraint.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .bounds import RATIO
from .generate import pair_capacity
from .model import NimpInstance, bandwidth_violations, criteria

__all__ = ["submodular_values", "ratios", "trials", "random_instance", "line18_breaks"]


def submodular_values(instance: NimpInstance, idle_used: int, used: int) -> tuple[int, int]:
    """(idle machines left unused, machines saved by merging) = (|S_n| - idle used, N - used)."""
    n_idle = sum(1 for m in instance.machines if m.usable and m.idle)
    return n_idle - idle_used, instance.N - used


def ratios(instance: NimpInstance, heuristic: Sequence[int] | None, optimum: Sequence[int]) -> dict[str, Any]:
    """Ratios of :func:`submodular_values` (heuristic / optimum) for Theorems 4 and 5, and whether
    each holds (>= 1 - 1/e). ``heuristic`` = (idle used, used) or ``None`` (found nothing: ratio 0).
    An optimum value of 0: ratio 1, holds (even when the heuristic found nothing)."""
    o = submodular_values(instance, optimum[0], optimum[1])
    h = submodular_values(instance, heuristic[0], heuristic[1]) if heuristic is not None else (0, 0)
    out: dict[str, Any] = {"optimum_values": list(o), "heuristic_values": list(h)}
    for k, name in ((0, "theorem4"), (1, "theorem5")):
        r = 1.0 if o[k] <= 0 else (0.0 if heuristic is None else h[k] / o[k])
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


def line18_breaks(instance: NimpInstance, deployment: Sequence[int]) -> str:
    """Which constraint of Eq. (1) Alg. 3's unchecked deployment breaks: ``"resource"``,
    ``"bandwidth"``, ``"resource+bandwidth"``, ``"no machine"`` (a worker left without one) or
    ``"none"``."""
    m = np.asarray(deployment, dtype=np.int64)
    if np.any(m < 0):
        return "no machine"
    load = np.bincount(m, minlength=instance.M)
    res = bool(np.any(load > np.array([x.idle_gpus for x in instance.machines])))
    bw = bool(bandwidth_violations(instance, m, limit=1))
    return {(True, True): "resource+bandwidth", (True, False): "resource", (False, True): "bandwidth"}.get(
        (res, bw), "none")


def _lex(instance: NimpInstance, m: Sequence[int] | None) -> tuple[int, int] | None:
    """(idle machines used, machines used) of a placement, ``None`` for none."""
    if m is None:
        return None
    idle, used, _cross = criteria(instance, m)
    return idle, used


def _tally(counter: dict[str, int], r: float) -> None:
    key = f"{r:.4f}"
    counter[key] = counter.get(key, 0) + 1


def trials(count: int, seed: int, **titan_readings: Any) -> dict[str, Any]:
    """Titan (with ``titan_readings``) against the exhaustive optimum on ``count`` instances of
    :func:`random_instance` (``numpy.random.default_rng(seed)``); the counters of the module
    docstring, the worst ratios (``worst_ratio_*``: 0 where Titan found nothing and the optimum's
    value is positive; ``worst_ratio_placed_*``: where it placed) and up to 5 violating instances."""
    from .bounds import resource_relaxation
    from .exact import brute_force
    from .titan import alg3_deployment, titan

    as_written = titan_readings.get("titan_algorithm", "pseudo-code") == "pseudo-code"
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {"tried": 0, "compared": 0, "titan_placed": 0, "titan_found_none": 0, "titan_optimal": 0,
                           "found_none_breaks": {}, "optimum_zero_theorem4": 0, "optimum_zero_theorem5": 0,
                           "violations_theorem4": 0, "violations_theorem5": 0,
                           "violations_placed_theorem4": 0, "violations_placed_theorem5": 0,
                           "ratios_placed_theorem4": {}, "ratios_placed_theorem5": {},
                           "worst_ratio_theorem4": 1.0, "worst_ratio_theorem5": 1.0,
                           "worst_ratio_placed_theorem4": 1.0, "worst_ratio_placed_theorem5": 1.0,
                           "without_bandwidth": {"titan_found_none": 0, "titan_optimal": 0, "violations_theorem4": 0,
                                                 "violations_theorem5": 0, "worst_ratio_theorem4": 1.0,
                                                 "worst_ratio_theorem5": 1.0},
                           "by_capacity": {"scalar": {"compared": 0, "titan_found_none": 0},
                                           "matrix": {"compared": 0, "titan_found_none": 0}},
                           "examples": []}
    free = out["without_bandwidth"]
    while out["tried"] < count:
        d = random_instance(rng)
        inst = NimpInstance.from_dict(d)
        out["tried"] += 1
        best = brute_force(inst)
        if best is None:
            continue
        out["compared"] += 1
        kind = out["by_capacity"]["scalar" if inst.capacity_is_scalar else "matrix"]
        kind["compared"] += 1
        opt = (int(best[1][0]), int(best[1][1]))  # (idle used, used) of the lexicographic optimum
        gpus, idle = [x.gpus for x in inst.machines], [x.idle_gpus for x in inst.machines]
        cap = float(inst.capacity[0, 0]) if inst.capacity_is_scalar else inst.capacity
        m = titan(gpus, idle, cap, inst.phases(), workers=inst.N, **titan_readings)
        heur = _lex(inst, m)
        r = ratios(inst, heur, opt)
        if heur is None:
            out["titan_found_none"] += 1
            kind["titan_found_none"] += 1
            if as_written:
                why = line18_breaks(inst, alg3_deployment(gpus, idle, cap, inst.phases(), workers=inst.N))
                out["found_none_breaks"][why] = out["found_none_breaks"].get(why, 0) + 1
        else:
            out["titan_placed"] += 1
            out["titan_optimal"] += heur == opt
        bad = False
        for k, name in ((0, "theorem4"), (1, "theorem5")):
            if r["optimum_values"][k] <= 0:
                out[f"optimum_zero_{name}"] += 1
            out[f"worst_ratio_{name}"] = min(out[f"worst_ratio_{name}"], r[f"ratio_{name}"])
            if heur is not None:
                _tally(out[f"ratios_placed_{name}"], r[f"ratio_{name}"])
                out[f"worst_ratio_placed_{name}"] = min(out[f"worst_ratio_placed_{name}"], r[f"ratio_{name}"])
            if not r[f"holds_{name}"]:
                out[f"violations_{name}"] += 1
                out[f"violations_placed_{name}"] += heur is not None
                bad = True
        if bad and len(out["examples"]) < 5:
            out["examples"].append({"instance": d, "titan": None if heur is None else list(heur),
                                    "optimum": list(opt), **r})
        # The same instance with P removed: the proof's setting but for the capacity constraint.
        relax = resource_relaxation(inst)
        assert relax is not None  # a placement exists, so the idle GPUs suffice
        mf = titan(gpus, idle, math.inf, inst.phases(), workers=inst.N, **titan_readings)
        hf = _lex(inst, mf)
        rf = ratios(inst, hf, relax[:2])
        free["titan_found_none"] += hf is None
        free["titan_optimal"] += hf is not None and tuple(hf) == tuple(relax[:2])
        for name in ("theorem4", "theorem5"):
            free[f"worst_ratio_{name}"] = min(free[f"worst_ratio_{name}"], rf[f"ratio_{name}"])
            free[f"violations_{name}"] += not rf[f"holds_{name}"]
    for name in ("theorem4", "theorem5"):
        out[f"ratios_placed_{name}"] = dict(sorted(out[f"ratios_placed_{name}"].items()))
    return out
