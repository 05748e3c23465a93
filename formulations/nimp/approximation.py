"""The (1 - 1/e) claim of Theorems 4-5: the one measure optkit checks it with, and trials.

The measure (decided here; every checker uses it)
=================================================
Theorem 4: "For the first objective, our proposed algorithm can achieve a (1 - 1/e)
approximation factor"; Theorem 5 says the same "for the second objective". Each proof shows
that Def. 1's set function H, "the reduction of deployed machine number achieved by merging",
is non-decreasing and submodular and applies Lemma 3 (the greedy keeps (1 - 1/e) of the
maximum of such a function) to it: what the proofs bound is H. Read as the machines saved by
merging the N one-worker sets (one machine each) into the placement's machines, H is

* Theorem 4 (first objective, Alg. 3 step 1 runs Alg. 2 over the idle machines S_n):
  ``N - idle machines used``;
* Theorem 5 (second objective, step 2 over S_f and Phi_n): ``N - machines used``,

i.e. ``N - O_k`` with O_k Eq. (1)'s k-th objective. The measure is ``(N - O_k^Titan) / (N -
O_k^opt)`` for k = 1, 2 (:func:`submodular_values`, :func:`ratios`), each to be at least
``1 - 1/e``; the optimum is the lexicographic optimum (of Eq. (1), proven by an exact solver);
Titan finding no placement has value 0 (ratio 0); an optimum of value 0 (every worker alone on
its own machine) is never a violation (any value is >= (1 - 1/e)·0: ratio 1 by convention).

The theorems state the factor "for the problem of Eq. (3)", whose objectives are
``C_max - O_k`` with ``C_max = max(|S|, |N|)``: that is ``H + (C_max - N)``, H plus a constant
``c = C_max - N >= 0``. So the measure here implies the stated form (``H_alg >= (1 - 1/e) H_opt``
gives ``H_alg + c >= (1 - 1/e)(H_opt + c)`` because ``c >= (1 - 1/e) c``), and every instance
that breaks the stated form breaks this one: this is the strongest statement the proofs claim,
and the only quantity their argument (Lemma 3 applied to H) is about.

Why not the other forms:

* **Eq. (3) with C_max** (:func:`.bounds.approximation_check`): the constant c makes it
  vacuous on a large cluster. Any feasible placement uses at most N machines, so
  ``O_2^alg >= C_max - N`` while ``O_2^opt <= C_max - 1``; with ``|S| >= N`` the ratio is at least
  ``(|S| - N)/(|S| - 1)``, which is ``>= 1 - 1/e`` whenever ``|S| >= e·N - (e - 1)`` (about 2.72 N).
  On the paper's cluster (Sec. V-B: 64 x 8 = 512 machines) every placement of every job of up to
  188 workers, a random one included, meets it: ``(512 - 188)/511 = 0.634 >= 0.632``. The same
  holds for O_1 (``idle used <= N``). A check that no placement can fail measures nothing.
* **Remaining machines without N** (``|S_n| - idle used``, this claim's Theorem-4 measure until
  issue 24, and ``|S| - used``: the counts of unused machines the paper's text names): the same
  vacuity with ``|S_n|`` or ``|S|`` in place of C_max (a cluster with many idle machines leaves most of
  them unused whatever the placement), and it is not what Lemma 3 is applied to.
* **max(O_1^opt / O_1^alg, O_2^opt / O_2^alg) of Eq. (3)** (the worst-case search's former
  ratio): the C_max form again, inverted.

:func:`worst_case_ratio` is the same measure as the worst-case search's ratio (``optkit
worst-case``, ``benchmarks/results/worst-case.md``), inverted so that larger is worse:
``max_k (N - O_k^opt) / (N - O_k^alg)`` = ``1 / min_k ratio_k`` (infinite where Titan keeps 0 of
a positive optimum), and the guarantee becomes ``<= e/(e - 1)``. The guarantee table
(:data:`.bounds.GUARANTEES`, read by :func:`optkit.testing.assert_within`), the
``titan-approximation`` claim (:mod:`.claims`) and the search all call :func:`ratios`.

Trials
======
:func:`trials` keeps two questions apart:

* **Where Titan fails** (the instances as drawn, bandwidth binding): on the instances with a
  placement, how often Titan finds none (``titan_found_none``: a feasible placement exists and
  Titan returns nothing; its ratio is 0, a violation unless the optimum's value is 0) or places
  lexicographically worse than the optimum (``titan_worse``), the distribution of the ratios
  where it places (``ratios_placed_theorem4/5``: ratio -> instances) and the violations among
  those (``violations_placed_theorem4/5``); ``violations_theorem4/5`` counts both;
  ``by_capacity`` splits the instances compared and those where Titan found nothing by a scalar
  P or a matrix.
* **Where the proof's assumptions break.** The proofs apply Lemma 3, the greedy (1 - 1/e) bound
  for a monotone submodular function maximised over every worker subset (H's domain U is the
  power set of N), to H: they leave out both constraints that decide which subsets a machine
  may take, Eq. (1)'s capacity R_s and Eq. (5)'s bandwidth P. Each instance where Titan fails is
  put down to the one that breaks (``failures_cause``; the violations likewise,
  ``violations_cause_theorem4/5``): ``bandwidth`` when Titan's own placement without P (the same
  readings, ``P = infinity``) breaks P, so Eq. (5) changed what the greedy may do; ``capacity``
  when it meets P, so only the capacity was in play. ``failures_optimum_unbound`` counts the
  failures whose optimum under P is the resource relaxation's (P leaves the optimum's value
  unchanged, so a placement as good as without P exists and the greedy under P misses it).
  Under the default ``titan_algorithm="repaired"`` Titan's placement without P is the
  lexicographic optimum of the resource relaxation, so a ``capacity`` failure needs that
  placement to meet P while Titan under P misses its value; the proof of
  :func:`.titan.place_with_and_without_capacity` excludes it whenever step 1's placement without
  P meets P too, and none has been measured (``benchmarks/perf/nimp_approximation.md``). Under
  ``"pseudo-code"`` every instance where Titan finds nothing is also traced to the constraint
  that Alg. 2 line 18's unchecked deployment breaks (``found_none_breaks``: ``bandwidth``,
  ``resource`` or both). ``without_bandwidth`` repeats the comparison on the same instances with
  P removed (the resource relaxation's exact optimum, :func:`.bounds.resource_relaxation`): what
  is left there is the greedy's own behaviour under the capacity constraint.
"""

from __future__ import annotations

import math
from typing import Any, Iterator, Sequence

import numpy as np

from .bounds import RATIO, ratios, submodular_values, worst_case_ratio
from .generate import pair_capacity
from .model import NimpInstance, bandwidth_violations, criteria

__all__ = ["submodular_values", "ratios", "worst_case_ratio", "trials", "random_instance", "instances",
           "BINDING_SETS", "line18_breaks"]

#: The seeded sets of :func:`random_instance` (bandwidth binding) that ``benchmarks/nimp_approximation.py``
#: measures and ``tests/test_nimp_titan.py`` compares Titan's readings on: (label, ((seed, count), ...)),
#: each (seed, count) being :func:`instances`'s draw. Seed 0 with 300 instances is the set the formulation
#: README quotes; seeds 1000..1004 with 150 each are those the claim ``titan-approximation`` measures at
#: ``ci`` scale (its seed s draws from 1000 + s).
BINDING_SETS: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    ("seed 0, 300 instances", ((0, 300),)),
    ("seeds 1000-1004, 150 each (claim titan-approximation, ci)", tuple((1000 + s, 150) for s in range(5))),
)


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


def instances(count: int, seed: int) -> Iterator[dict[str, Any]]:
    """The ``count`` instances :func:`trials` draws for ``seed``: :func:`random_instance` called
    ``count`` times on ``numpy.random.default_rng(seed)``, as instance dicts."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield random_instance(rng)


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


def _count(counter: dict[str, int], key: str) -> None:
    counter[key] = counter.get(key, 0) + 1


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
    from .readings import TITAN_ALGORITHM
    from .titan import alg3_deployment, capacity_argument, titan

    as_written = titan_readings.get("titan_algorithm", TITAN_ALGORITHM.default) == "pseudo-code"
    out: dict[str, Any] = {"tried": 0, "compared": 0, "titan_placed": 0, "titan_found_none": 0, "titan_optimal": 0,
                           "titan_worse": 0, "failures_cause": {}, "failures_optimum_unbound": 0,
                           "found_none_breaks": {}, "optimum_zero_theorem4": 0, "optimum_zero_theorem5": 0,
                           "violations_theorem4": 0, "violations_theorem5": 0,
                           "violations_placed_theorem4": 0, "violations_placed_theorem5": 0,
                           "violations_cause_theorem4": {}, "violations_cause_theorem5": {},
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
    for d in instances(count, seed):
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
        cap = capacity_argument(inst)
        m = titan(gpus, idle, cap, inst.phases(), workers=inst.N, **titan_readings)
        heur = _lex(inst, m)
        r = ratios(inst, heur, opt)
        # The same instance with P removed: the proof's setting but for the capacity constraint.
        relax = resource_relaxation(inst)
        assert relax is not None  # a placement exists, so the idle GPUs suffice
        mf = titan(gpus, idle, math.inf, inst.phases(), workers=inst.N, **titan_readings)
        cause = "bandwidth" if mf is None or bandwidth_violations(inst, np.asarray(mf), limit=1) else "capacity"
        if heur is None:
            out["titan_found_none"] += 1
            kind["titan_found_none"] += 1
            if as_written:
                why = line18_breaks(inst, alg3_deployment(gpus, idle, cap, inst.phases(), workers=inst.N))
                out["found_none_breaks"][why] = out["found_none_breaks"].get(why, 0) + 1
        else:
            out["titan_placed"] += 1
            out["titan_optimal"] += heur == opt
            out["titan_worse"] += heur != opt
        if heur != opt:
            _count(out["failures_cause"], cause)
            out["failures_optimum_unbound"] += opt == tuple(relax[:2])
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
                _count(out[f"violations_cause_{name}"], cause)
                bad = True
        if bad and len(out["examples"]) < 5:
            out["examples"].append({"instance": d, "titan": None if heur is None else list(heur),
                                    "optimum": list(opt), "cause": cause, **r})
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
