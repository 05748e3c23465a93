"""Titan (formulations/nimp/titan.py): the default ``repaired`` (Alg. 1's check as each worker
joins, Alg. 2 line 18 repaired), Algorithms 1-3 as written (``pseudo-code``), step 2, the tie-break
readings, the merge rule, the no-solution status of every heuristic, and the (1 - 1/e) check.

Oracles are independent of Titan: a brute force over every placement (numpy, per machine count
and worker count), an enumeration of machine subsets (without bandwidth the lexicographic optimum
depends only on which machines are used), hand-worked cases in the docstrings, and the
exhaustive search of ``exact.brute_force``."""

from __future__ import annotations

import functools
import itertools
import json
import math

import numpy as np
import pytest

from optkit.formulations.nimp.approximation import (BINDING_SETS, instances, line18_breaks, random_instance, ratios,
                                                    submodular_values, trials)
from optkit.formulations.nimp.bounds import RATIO
from optkit.formulations.nimp.exact import brute_force
from optkit.formulations.nimp.model import NimpInstance, criteria, evaluate, halving_doubling_phases, ring_phases
from optkit.formulations.nimp.generate import tiny
from optkit.formulations.nimp.titan import (Collective, _place, alg3_deployment, choose, feasible_worker_set,
                                              place_unchecked, place_with_and_without_capacity, run_titan,
                                              submodular_greedy, titan)
from optkit.solve import solve

K = 1.0e8
TIE_BREAKS = ("least-traffic", "best-fit", "worst-fit")


def _inst(idle: list[int], gpus: list[int], n: int, cap: object = 1e30) -> dict:
    return {"problem": "nimp", "machines": [{"gpus": g, "idle_gpus": r} for g, r in zip(gpus, idle)],
            "pair_capacity_bytes": cap, "job": {"workers": n, "collective": "halving-doubling", "param_bytes": K}}


def _subset_oracle(gpus: list[int], idle: list[int], n: int) -> tuple[tuple[int, int], int] | None:
    """Lexicographic optimum (idle used, used) when only the resource constraint binds: the best
    machine subset whose idle GPUs reach n (every machine of a minimal subset hosts a worker), and
    the fewest idle GPUs over the optimal subsets (what best fit leaves the smallest)."""
    best: tuple[tuple[int, int], int] | None = None
    usable = [s for s in range(len(idle)) if idle[s] > 0]
    for k in range(1, len(usable) + 1):
        for sub in itertools.combinations(usable, k):
            tot = sum(idle[s] for s in sub)
            if tot < n:
                continue
            key = (sum(1 for s in sub if idle[s] == gpus[s]), k)
            if best is None or (key, tot) < best:
                best = (key, tot)
    return best


def _titan(gpus: list[int], idle: list[int], n: int, cap: object = math.inf, **kw: str) -> list[int] | None:
    """Titan under its default ``titan_algorithm="repaired"`` (the tests of the readings
    ``titan_step2`` and ``titan_tie_break``, which ``repaired`` and ``pair-grouping`` share; with
    an infinite P the two place alike, :func:`test_repaired_is_the_lexicographic_optimum_where_bandwidth_cannot_bind`);
    ``kw`` may override it."""
    return titan(gpus, idle, cap, halving_doubling_phases(n, K), workers=n, **kw)


def _lex(gpus: list[int], idle: list[int], m: list[int]) -> tuple[int, int]:
    used = set(m)
    return sum(1 for s in used if idle[s] == gpus[s]), len(used)


# ----------------------------------------------------------------------------- repaired (the default)
@functools.lru_cache(maxsize=None)
def _placements(M: int, n: int) -> np.ndarray:
    """Every one of the M^n placements of n workers on M machines, one per row."""
    return np.array(list(itertools.product(range(M), repeat=n)), dtype=np.int8).reshape(-1, n)


def _brute_force_lex(gpus: list[int], idle: list[int], n: int) -> tuple[int, int]:
    """The lexicographic optimum (idle machines used, machines used) over every placement that
    meets the resource constraint (at most R_s workers on machine s), all at once in numpy: the
    optimum of Eq. (1) where no bandwidth constraint binds."""
    M = len(idle)
    load = (_placements(M, n)[:, :, None] == np.arange(M)).sum(axis=1)
    used = load > 0
    key = (used & (np.asarray(idle) == np.asarray(gpus))).sum(axis=1) * (M + 1) + used.sum(axis=1)
    best = int(key[(load <= np.asarray(idle)).all(axis=1)].min())
    return best // (M + 1), best % (M + 1)


def test_repaired_is_the_lexicographic_optimum_where_bandwidth_cannot_bind() -> None:
    """240 seeded instances (2-5 machines of 2, 4 or 8 GPUs, some idle, some full; 1-6 workers,
    halving-doubling or ring; P = 1e30 B, which no phase reaches, so Alg. 1's check runs and never
    refuses): the default Titan's (idle used, used) is the brute force's optimum on every one,
    under every tie-break; ``pair-grouping`` places exactly as ``repaired`` there (no check
    refuses, no placement breaks P); the pseudo-code misses the optimum on some (the oracle tells
    them apart)."""
    rng = np.random.default_rng(34)
    checked = missed = 0
    while checked < 240:
        M = int(rng.integers(2, 6))
        gpus = [int(g) for g in rng.choice([2, 4, 8], size=M)]
        idle = [g if u < 0.3 else (0 if u < 0.4 else int(rng.integers(1, g))) for g, u in zip(gpus, rng.random(M))]
        n = int(rng.integers(1, min(6, sum(idle)) + 1)) if sum(idle) else 0
        if n == 0 or M ** n > 20_000:
            continue
        ph = halving_doubling_phases(n, K) if rng.random() < 0.5 else ring_phases(n, K)
        best = _brute_force_lex(gpus, idle, n)
        m = titan(gpus, idle, 1e30, ph, workers=n)
        assert m is not None and _lex(gpus, idle, m) == best, (gpus, idle, n)
        assert all(np.bincount(m, minlength=M) <= idle)
        for tb in ("best-fit", "worst-fit"):
            other = titan(gpus, idle, 1e30, ph, workers=n, titan_tie_break=tb)
            assert other is not None and _lex(gpus, idle, other) == best, (gpus, idle, n, tb)
        assert titan(gpus, idle, 1e30, ph, workers=n, titan_algorithm="pair-grouping") == m
        literal = titan(gpus, idle, 1e30, ph, workers=n, titan_algorithm="pseudo-code")
        missed += literal is None or _lex(gpus, idle, literal) != best
        checked += 1
    assert missed >= 10


@pytest.mark.parametrize("label,runs", BINDING_SETS, ids=["seed-0", "seeds-1000-1004"])
def test_repaired_places_wherever_pair_grouping_places(label: str, runs: tuple[tuple[int, int], ...]) -> None:
    """The bandwidth-binding sets of benchmarks/nimp_approximation.py (``approximation.BINDING_SETS``,
    drawn by ``approximation.instances``: P in {1/8, 1/4, 1/2} K, scalar or per pair): per set, the
    default places at least as many instances feasibly (``evaluate``) as ``pair-grouping``, and on
    every instance where pair-grouping places, the default places too (titan.py's proof: same
    selections in the same order, and on a selection where pair-grouping's placement meets P the
    checked deployment is that placement). Every placement either returns meets Eq. (1), and the
    default places on some instances where pair-grouping finds nothing (a checked worker goes where
    P allows)."""
    placed = {"repaired": 0, "pair-grouping": 0}
    more = 0
    for seed, count in runs:
        for d in instances(count, seed):
            inst = NimpInstance.from_dict(d)
            if sum(x.idle_gpus for x in inst.machines) < inst.N:
                continue
            got = {}
            for algorithm in placed:
                sol = run_titan(inst, titan_algorithm=algorithm).solution
                got[algorithm] = sol is not None
                if sol is not None:
                    assert evaluate(inst, sol).feasible, (algorithm, d)
                    placed[algorithm] += 1
            assert got["repaired"] or not got["pair-grouping"], (label, d)
            more += got["repaired"] and not got["pair-grouping"]
    assert placed["repaired"] >= placed["pair-grouping"], (label, placed)
    assert more >= 3, (label, placed)


def test_repaired_checks_each_worker_as_it_joins() -> None:
    """Three non-idle machines with 3, 2, 2 idle GPUs of 4; a 4-worker HD job (K = 100 MB: the
    a^2 pairs (W0, W2), (W1, W3) carry 50 MB in phases 1 and 4, the a^1 pairs (W0, W1), (W2, W3)
    25 MB in phases 2-3); P01 = P12 = 25 MB, P02 = 50 MB. The sets are {W0, W2} and {W1, W3}.

    * Two machines (3 + 2 or 2 + 2) never work: with the sets apart, their two a^1 pairs cross the
      same machine pair in one phase (50 MB); a set split puts an a^2 pair (50 MB) on a 25 MB pair.
      ``pair-grouping`` then takes all three machines and places {W0, W2} on machine 0 and
      {W1, W3} on machine 1, first fit, which breaks P01 (50 MB), and finds nothing.
    * ``repaired`` (Alg. 1's check as each worker joins): {W0, W2} on machine 0; W3 is refused on
      machine 1 (25 MB + 25 MB over P01 = 25 MB), so the set {W1, W3} goes whole to machine 2 (50 MB
      over P02 = 50 MB): [0, 2, 0, 2], (0 idle, 2 used), the optimum by brute force."""
    cap = [[0.0, 25 * MB, 50 * MB], [25 * MB, 0.0, 25 * MB], [50 * MB, 25 * MB, 0.0]]
    gpus, idle = [4, 4, 4], [3, 2, 2]
    ph = halving_doubling_phases(4, K)
    assert titan(gpus, idle, cap, ph, workers=4) == [0, 2, 0, 2]
    assert titan(gpus, idle, cap, ph, workers=4, titan_algorithm="pair-grouping") is None
    best, at = _independent_optimum(gpus, idle, cap, [(p.pairs, p.volume) for p in ph], 4)
    assert best == (0, 2) and [0, 2, 0, 2] in at
    # on machines 0 and 1 alone (the worst-fit pair) the check refuses W3 everywhere: no placement
    pt = Collective(4, ph)
    assert _place(pt, [0, 1], idle, np.asarray(cap)) is None
    assert list(_place(pt, [0, 1], idle)) == [0, 1, 0, 1]  # unchecked: pair-grouping's, which breaks P01


# ----------------------------------------------------------------------------- pseudo-code (the literal line 18)
MB = 1.0e6
# Halving-doubling of 6 workers (gloo's binary blocks 4 + 2, model.halving_doubling_phases), written
# out so that the brute force below does not rest on the model: reduce-scatter inside the blocks,
# block exchange (K/4 per pair, twice), then the reduce-scatter phases in reverse.
HD6 = [(((0, 2), (1, 3), (4, 5)), K / 2), (((0, 1), (2, 3)), K / 4), (((0, 4), (1, 4), (2, 5), (3, 5)), K / 4),
       (((0, 4), (1, 4), (2, 5), (3, 5)), K / 4), (((0, 1), (2, 3)), K / 4), (((0, 2), (1, 3), (4, 5)), K / 2)]
# Halving-doubling of 3 workers (blocks 2 + 1): (0,1) at K/2; (0,2), (1,2) at K/2 twice; (0,1) at K/2.
HD3 = [(((0, 1),), K / 2), (((0, 2), (1, 2)), K / 2), (((0, 2), (1, 2)), K / 2), (((0, 1),), K / 2)]


def _independent_optimum(gpus: list[int], idle: list[int], cap: list[list[float]],
                         phases: list[tuple[tuple[tuple[int, int], ...], float]], n: int
                         ) -> tuple[tuple[int, int], list[list[int]]]:
    """Every one of the M^N placements, checked against Eq. (1) in plain Python (resource: at
    most R_s workers; bandwidth: per phase and machine pair, the bytes of the split pairs at most
    P). Returns the lexicographic optimum (idle used, used) and every placement reaching it."""
    M = len(idle)
    best: tuple[int, int] | None = None
    at: list[list[int]] = []
    for m in itertools.product(range(M), repeat=n):
        if any(m.count(s) > idle[s] for s in range(M)):
            continue
        ok = True
        for pairs, v in phases:
            load: dict[tuple[int, int], float] = {}
            for a, b in pairs:
                if m[a] != m[b]:
                    k = (min(m[a], m[b]), max(m[a], m[b]))
                    load[k] = load.get(k, 0.0) + v
            if any(x > cap[s][u] * (1 + 1e-9) for (s, u), x in load.items()):
                ok = False
                break
        if not ok:
            continue
        used = set(m)
        key = (sum(1 for s in used if idle[s] == gpus[s]), len(used))
        if best is None or key < best:
            best, at = key, [list(m)]
        elif key == best:
            at.append(list(m))
    assert best is not None
    return best, at


def _issue_a() -> tuple[list[int], list[int], list[list[float]]]:
    """Issue 23, first instance: machines of 4 GPUs with idle GPUs [1, 4, 2, 2, 4] (machines 1
    and 4 idle). Per-pair capacities in {12.5, 25, 50} MB, reconstructed so the issue's statement
    holds: the placement [0, 4, 1, 4, 4, 4] splits (W0, W2) over machines 0-1 in the first
    reduce-scatter phase (50 MB), and (W0, W1) / (W0, W4) over 0-4 and (W2, W3) / (W2, W5) over
    1-4 at 25 MB each in one phase; so P01 = 50 MB, P04 = P14 = 25 MB, and every other pair gets the
    smallest value, 12.5 MB. (pair-grouping, optkit <= 0.2, finds nothing for every one of the
    3^7 * 2 * 2 = 8,748 matrices over {12.5, 25, 50} MB with P01 = 50 and P04, P14 >= 25.)"""
    cap = [[12.5 * MB] * 5 for _ in range(5)]
    for s, u, v in ((0, 1, 50), (0, 4, 25), (1, 4, 25)):
        cap[s][u] = cap[u][s] = v * MB
    return [4] * 5, [1, 4, 2, 2, 4], cap


def test_hd_phases_written_out_are_the_models() -> None:
    for n, written in ((6, HD6), (3, HD3)):
        assert [(ph.pairs, ph.volume) for ph in halving_doubling_phases(n, K)] == written


def test_issue_instance_a_pseudo_code_finds_nothing_where_two_idle_machines_do() -> None:
    """Brute force (and CP-SAT, and exact.brute_force): optimum (2 idle, 3 used), reached by
    [0, 4, 1, 4, 4, 4]. Every reading of Titan finds nothing. The pseudo-code, by hand:

    * step 1, Alg. 2 over S_n = {1, 4}: K - 1 = 1 iteration; both feasible sets are {W0..W3} (no
      worker placed yet), H ties, machine 1 (index order, line 10); line 18 puts W4, W5 on machine
      4 unchecked (the block exchange sends 4 x 25 MB over P14 = 25 MB): Phi_n = {1, 4};
    * step 2 over {0, 2, 3} ∪ {1, 4}, non-idle machines first: machine 2 takes {W0, W1} (3 ties);
      every other machine's pair with machine 2 has P = 12.5 MB, and W2, W3, W4 each send more to
      W0, W1 in one phase (W2: (W0, W2) 50 MB; W3: (W1, W3) 50 MB; W4: (W0, W4) + (W1, W4) 50 MB),
      so every feasible set is {W5}: machine 0 (index order among the non-idle); then no machine
      can take W2-W4 (the same pairs), and line 18 puts them on machine 1: [2, 2, 1, 1, 1, 0],
      which breaks P12. Titan returns nothing."""
    gpus, idle, cap = _issue_a()
    best, at = _independent_optimum(gpus, idle, cap, HD6, 6)
    assert best == (2, 3) and [0, 4, 1, 4, 4, 4] in at
    d = {**_inst(idle, gpus, 6), "pair_capacity_bytes": cap}
    inst = NimpInstance.from_dict(d)
    bf = brute_force(inst)
    assert bf is not None and bf[1] == (2, 3)
    exact = solve("nimp", d, "cpsat", params={"workers": 1, "bound_shortcut": False}, time_limit=60)
    assert exact.status.value == "optimal" and list(exact.objective) == [2, 3]
    P = np.asarray(cap)
    ph = halving_doubling_phases(6, K)
    pt = Collective(6, ph)
    is_idle = [r == g for r, g in zip(idle, gpus)]
    assert submodular_greedy([1, 4], idle, is_idle, P, pt, keep_idle=False) == [1, 1, 1, 1, 4, 4]
    step2 = submodular_greedy([0, 1, 2, 3, 4], idle, is_idle, P, pt, keep_idle=True)
    assert step2 == [2, 2, 1, 1, 1, 0]
    assert not evaluate(inst, {"machine_of_worker": step2}).feasible
    assert titan(gpus, idle, P, ph, workers=6, titan_algorithm="pseudo-code") is None
    assert titan(gpus, idle, P, ph, workers=6, titan_algorithm="pair-grouping") is None
    # repaired finds nothing either: the merged sets put W0-W3 (4 GPUs) on idle machine 1 in every
    # selection, and then W4 (25 MB to each of W0, W1 in one phase) and W5 pass Alg. 1's check on no
    # other machine with room (P = 12.5 MB or 25 MB to machine 1, 50 MB only from the 1-GPU machine 0)
    assert titan(gpus, idle, P, ph, workers=6) is None
    res = solve("nimp", d, "titan")
    assert res.status.value == "no_solution" and "not a proof" in res.message


def test_issue_instance_b_pseudo_code_finds_nothing_where_no_idle_machine_is_needed() -> None:
    """Machines of 4 GPUs with idle GPUs [1, 4, 2] (machine 1 idle), N = 3, P = 50 MB for every
    pair, so every pair of HD3 (50 MB) may cross alone, but W2's two exchange pairs (W0, W2),
    (W1, W2) may not cross together. Brute force, CP-SAT and exact.brute_force: optimum
    (0 idle, 2 used), reached by [0, 2, 2] (W2 with one partner). The pseudo-code: step 1 puts
    all three on machine 1 (Phi_n = {1}); step 2 over {0, 1, 2}, non-idle first: machine 2 takes
    the first two workers in index order, {W0, W1}; W2 then has both partners on machine 2 (100 MB
    over any pair), so no machine can take it, and line 18 puts it on machine 1 unchecked: [2, 2, 1]
    breaks P. Titan returns nothing. ``repaired`` (and pair-grouping): step 2's selection {2, 0}
    gets the sets {W0, W1} (the heaviest pair first) and {W2}; Alg. 1 refuses W2 on machine 0 (both
    its partners on machine 2) and machine 2 is full, so the selection fails and no other non-idle
    one exists; step 1's [1, 1, 1], one idle machine, is the answer: feasible, not optimal."""
    gpus, idle = [4, 4, 4], [1, 4, 2]
    cap = [[50 * MB] * 3 for _ in range(3)]
    best, at = _independent_optimum(gpus, idle, cap, HD3, 3)
    assert best == (0, 2) and [0, 2, 2] in at
    d = _inst(idle, gpus, 3, 50 * MB)
    inst = NimpInstance.from_dict(d)
    bf = brute_force(inst)
    assert bf is not None and bf[1] == (0, 2)
    exact = solve("nimp", d, "cpsat", params={"workers": 1, "bound_shortcut": False}, time_limit=60)
    assert exact.status.value == "optimal" and list(exact.objective) == [0, 2]
    ph = halving_doubling_phases(3, K)
    pt = Collective(3, ph)
    is_idle = [False, True, False]
    assert submodular_greedy([0, 1, 2], idle, is_idle, 50 * MB, pt, keep_idle=True) == [2, 2, 1]
    assert titan(gpus, idle, 50 * MB, ph, workers=3, titan_algorithm="pseudo-code") is None
    grouped = titan(gpus, idle, 50 * MB, ph, workers=3, titan_algorithm="pair-grouping")
    assert grouped == [1, 1, 1] and _lex(gpus, idle, grouped) == (1, 1) > best
    assert titan(gpus, idle, 50 * MB, ph, workers=3) == [1, 1, 1]


def test_alg1_checks_each_worker_as_it_joins() -> None:
    """Alg. 1 for machine 1, 4-worker HD (phase 1: (0,2), (1,3) at K/2), W0 and W1 placed on
    machine 0. W2 alone sends K/2 over 0-1 in phase 1, W3 too: with P = K/2, W2 joins and W3 is
    refused (K/2 + K/2 > P, counting W2, who joined before it); with P = K both join; with room
    for one worker only W2. With P01 = K/4 and P12 = K, W0 on machine 0 and W1 on machine 2:
    W2 is refused (K/2 over 0-1) and the scan goes on to W3 (K/2 over 1-2): {W3}."""
    pt = Collective(4, halving_doubling_phases(4, K))
    placed = [0, 0, -1, -1]
    assert feasible_worker_set(1, [2, 3], placed, 2, K / 2, {}, pt) == [2]
    assert feasible_worker_set(1, [2, 3], placed, 2, K, {}, pt) == [2, 3]
    assert feasible_worker_set(1, [2, 3], placed, 1, K, {}, pt) == [2]
    cap = np.full((3, 3), K)
    cap[0, 1] = cap[1, 0] = K / 4
    assert feasible_worker_set(1, [2, 3], [0, 2, -1, -1], 2, cap, {}, pt) == [3]
    # the existing overhead C_{f,f'} of line 5 counts: K/2 already between 0 and 1 in phase 1 (t = 0)
    assert feasible_worker_set(1, [2, 3], placed, 2, K, {(0, 0, 1): K / 2}, pt) == [2]


def test_alg2_runs_k_minus_1_iterations_and_line_18_does_not_check() -> None:
    """Two machines with 3 idle GPUs, N = 4, P = 0: one iteration (K - 1 = 1) puts W0-W2 on
    machine 0 (the largest feasible set, index order), and line 18 puts W3 on machine 1 although
    its pairs break P = 0; Titan then returns nothing. Three machines with R = (4, 1, 1), N = 6,
    no bandwidth limit: machine 0 takes W0-W3, machine 1 W4, line 18 W5 on machine 2."""
    pt4 = Collective(4, halving_doubling_phases(4, K))
    assert submodular_greedy([0, 1], [3, 3], [False, False], 0.0, pt4, keep_idle=True) == [0, 0, 0, 1]
    assert titan([4, 4], [3, 3], 0.0, halving_doubling_phases(4, K), workers=4, titan_algorithm="pseudo-code") is None
    pt6 = Collective(6, halving_doubling_phases(6, K))
    assert submodular_greedy([0, 1, 2], [4, 1, 1], [False] * 3, math.inf, pt6, keep_idle=True) == [0, 0, 0, 0, 1, 2]
    # Line 18's machine: the greedy stops when no machine can take W3 (P = 0); of the unused
    # machines 1 (non-idle) and 2 (idle), both with 2 idle GPUs, the idle one ("one idle machine").
    assert submodular_greedy([0, 1, 2], [3, 2, 2], [False, False, True], 0.0, pt4, keep_idle=True) == [0, 0, 0, 2]
    # ... and the one with the most idle GPUs first: machine 1 (3) over machine 2 (2, idle).
    assert submodular_greedy([0, 1, 2], [3, 3, 2], [False, False, True], 0.0, pt4, keep_idle=True) == [0, 0, 0, 1]


def _naive_greedy(pool: list[int], R: list[int], is_idle: list[bool], cap: np.ndarray, col: Collective,
                  keep_idle: bool) -> list[int]:
    """Alg. 2 without the pruning of ``submodular_greedy``: every unused machine's feasible set,
    every iteration; the best by (non-idle first if ``keep_idle``, size, lower index)."""
    m = [-1] * col.workers
    unused = list(pool)
    for _ in range(len(pool) - 1):
        avail = [n for n in range(col.workers) if m[n] < 0]
        cands = [(s, feasible_worker_set(s, avail, m, R[s], cap, {}, col)) for s in unused]
        cands = [(s, a) for s, a in cands if a]
        if not avail or not cands:
            break
        s, a = max(cands, key=lambda c: (keep_idle and not is_idle[c[0]], len(c[1]), -c[0]))
        for n in a:
            m[n] = s
        unused.remove(s)
    rest = [n for n in range(col.workers) if m[n] < 0]
    if rest and unused:
        last = min(unused, key=lambda s: (-R[s], not is_idle[s], s))
        for n in rest:
            m[n] = last
    return m


def test_alg2_pruning_changes_nothing() -> None:
    """``submodular_greedy`` evaluates A(s) only where min(R_s, |N_c|) can still win; on 300
    seeded instances (approximation.random_instance) it returns what the unpruned greedy returns,
    in both passes."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        inst = NimpInstance.from_dict(random_instance(rng))
        R = [x.idle_gpus for x in inst.machines]
        is_idle = [x.idle for x in inst.machines]
        col = Collective(inst.N, inst.phases())
        pool = [s for s in range(inst.M) if R[s] > 0]
        for keep in (False, True):
            assert submodular_greedy(pool, R, is_idle, inst.capacity, col, keep_idle=keep) == \
                _naive_greedy(pool, R, is_idle, inst.capacity, col, keep)


def test_pseudo_code_fig1_and_the_step2_preference() -> None:
    """Fig. 1 (idle GPUs 4, 3, 2, 1 of 4): step 1 puts the job on machine 0 (Phi_n = {0}); step 2,
    non-idle first, fills machine 1's three GPUs with W0-W2 and W3 goes to machine 2 (index order
    among the one-worker sets): (0 idle, 2 machines) as the figure, but cross traffic 3K/2
    ((W1, W3) K/2 and (W2, W3) K/4, twice each), not Fig. 1(c)'s K. Without the non-idle
    preference (keep_idle=False), the greedy takes the idle machine 0's four GPUs: 1 idle machine."""
    inst = NimpInstance.from_dict(_inst([4, 3, 2, 1], [4] * 4, 4))
    ph = inst.phases()
    m = titan([4] * 4, [4, 3, 2, 1], math.inf, ph, workers=4, titan_algorithm="pseudo-code")
    assert m == [1, 1, 1, 2] and criteria(inst, m) == (0, 2, pytest.approx(1.5 * K))
    pt = Collective(4, ph)
    assert submodular_greedy([0, 1, 2, 3], [4, 3, 2, 1], [True, False, False, False], math.inf, pt,
                             keep_idle=False) == [0, 0, 0, 0]


def test_pseudo_code_tiny_33_uses_three_machines_where_one_suffices() -> None:
    """generate's tiny-33: machines (2 of 4, 4 of 4, 2 of 2, 1 of 4 idle), 4-worker ring (every
    neighbour pair 25 MB in every phase), P = 50 MB. Step 1: Phi_n = {1} (it holds all four);
    step 2, non-idle first: machine 0 takes {W0, W1}, machine 3 W2 ((W1, W2) 25 MB <= P), line 18
    puts W3 on the idle machine 1: (1 idle, 3 used), feasible, where (1, 1) is optimal. Even the
    paper's remaining-machines form of Theorem 5 fails: (C_max - 3) / (C_max - 1) = 1/3."""
    d = tiny(33)
    inst = NimpInstance.from_dict(d)
    res = run_titan(inst, titan_algorithm="pseudo-code")
    assert res.solution == {"machine_of_worker": [0, 0, 3, 1]} and evaluate(inst, res.solution).feasible
    assert criteria(inst, [0, 0, 3, 1])[:2] == (1, 3)
    bf = brute_force(inst)
    assert bf is not None and bf[1] == (1, 1)
    # the default: the non-idle machines hold 3 < 4 GPUs, so one idle machine (machine 1, 4 GPUs)
    # is needed and holds all four: (1, 1)
    assert run_titan(inst).solution == {"machine_of_worker": [1, 1, 1, 1]}


def test_pseudo_code_is_feasible_when_it_places_and_never_beats_the_optimum() -> None:
    """400 seeded instances of approximation.random_instance (3-6 machines of 4 GPUs, HD of 2-8
    workers, binding P, scalar or per pair): every placement Titan returns meets Eq. (1)
    (``evaluate``), is never lexicographically better than the exhaustive optimum, and exists only
    where the optimum does."""
    rng = np.random.default_rng(23)
    placed = 0
    for _ in range(400):
        d = random_instance(rng)
        inst = NimpInstance.from_dict(d)
        res = run_titan(inst, titan_algorithm="pseudo-code")
        bf = brute_force(inst)
        if res.solution is None:
            continue
        placed += 1
        ev = evaluate(inst, res.solution)
        assert ev.feasible and bf is not None, d
        assert tuple(ev.objectives["lex"]) >= tuple(bf[1]), d
    assert placed > 100


# ----------------------------------------------------------------------------- pair-grouping: step 2
def test_step2_issue_example_one_idle_three_machines() -> None:
    """Idle GPUs (3, 8, 5, 3) on four 8-GPU machines, N = 16. The non-idle machines hold
    3 + 5 + 3 = 11 < 16, so one idle machine is needed (8 GPUs); it leaves 8, which 5 + 3 cover:
    optimum (1 idle machine, 3 machines). The old step 2 (pool 'non-idle first, then Phi_n') takes
    all three non-idle machines before the idle one: (1, 4)."""
    gpus, idle = [8, 8, 8, 8], [3, 8, 5, 3]
    for tb in TIE_BREAKS:
        m = _titan(gpus, idle, 16, titan_tie_break=tb)
        assert m is not None and _lex(gpus, idle, m) == (1, 3), tb
        assert sorted(set(m)) in ([0, 1, 2], [1, 2, 3])
    old = _titan(gpus, idle, 16, titan_step2="pool-prefix")
    assert old is not None and _lex(gpus, idle, old) == (1, 4)


@functools.lru_cache(maxsize=1)
def _unbound_draws() -> list[tuple[list[int], list[int], int, tuple[tuple[int, int], int] | None]]:
    """The 3,000 seeded draws of :func:`test_titan_is_lexicographically_optimal_when_bandwidth_cannot_bind`
    (``default_rng(12)``; draws with no idle GPU left out) with the subset oracle of each: drawn
    and solved once for the three tie-breaks, which check Titan against the same oracle values."""
    rng = np.random.default_rng(12)
    out = []
    for _ in range(3000):
        M = int(rng.integers(2, 8))
        gpus = [int(g) for g in rng.choice([4, 8], size=M)]
        idle = []
        for g in gpus:
            u = rng.random()
            idle.append(g if u < 0.3 else (0 if u < 0.4 else int(rng.integers(1, g))))
        if sum(idle) == 0:
            continue
        n = int(rng.integers(1, sum(idle) + 1))
        out.append((gpus, idle, n, _subset_oracle(gpus, idle, n)))
    return out


@pytest.mark.parametrize("tie_break", TIE_BREAKS)
def test_titan_is_lexicographically_optimal_when_bandwidth_cannot_bind(tie_break: str) -> None:
    """3,000 seeded random instances (2-7 machines of 4 or 8 GPUs, mixed, some idle, some full;
    N from 1 to all idle GPUs; P = 1e30 B, which no phase reaches): Titan's (idle used, used) is
    the subset oracle's on every one; with best fit, the machines it uses also hold the fewest idle
    GPUs among the optimal subsets when the idle machines are alike (the paper's clusters: "each
    equipped with K GPUs"; Titan takes Phi_n, the largest idle machines, in step 1)."""
    checked = 0
    for gpus, idle, n, oracle in _unbound_draws():
        M = len(gpus)
        m = _titan(gpus, idle, n, 1e30, titan_tie_break=tie_break)
        assert m is not None and oracle is not None
        assert len(m) == n and all(np.bincount(m, minlength=M) <= idle)
        assert _lex(gpus, idle, m) == oracle[0], (gpus, idle, n)
        if tie_break == "best-fit" and len({g for g, r in zip(gpus, idle) if g == r}) <= 1:
            assert sum(idle[s] for s in set(m)) == oracle[1], (gpus, idle, n)
        checked += 1
    assert checked > 2900


def test_old_step2_is_not_optimal_on_random_instances() -> None:
    """The declared old reading ``pool-prefix`` misses the optimum on some of the same instances
    (the reason for the fix): at least one of 3,000."""
    rng = np.random.default_rng(12)
    misses = 0
    for _ in range(3000):
        M = int(rng.integers(2, 8))
        gpus = [8] * M
        idle = [8 if u < 0.3 else int(rng.integers(1, 8)) for u in rng.random(M)]
        n = int(rng.integers(1, sum(idle) + 1))
        m = _titan(gpus, idle, n, titan_step2="pool-prefix")
        assert m is not None
        misses += _lex(gpus, idle, m) != _subset_oracle(gpus, idle, n)[0]
    assert misses >= 1


# ----------------------------------------------------------------------------- pair-grouping: tie-break
def test_choose_best_and_worst_fit_by_hand() -> None:
    """Machines with R = (7, 2, 5, 3, 1); need 6 with 2 machines. Worst fit: the two largest,
    7 + 5 = 12 (machines 0, 2). Best fit: the pair with the smallest sum >= 6: 5 + 1 = 6
    (machines 2, 4). Need 6 with 1 machine: only 7 (machine 0). Need 13 with 2: none."""
    R = [7, 2, 5, 3, 1]
    assert choose(range(5), R, 2, 6, "worst-fit") == [0, 2]
    assert choose(range(5), R, 2, 6, "best-fit") == [2, 4]
    assert choose(range(5), R, 1, 6, "best-fit") == [0]
    assert choose(range(5), R, 2, 13, "best-fit") is None


def test_tie_break_fig1_least_traffic_takes_the_papers_machines() -> None:
    """Fig. 1: idle GPUs (4, 3, 2, 1) on 4-GPU machines, N = 4. Best fit takes machines 2 and 4
    (3 + 1 = 4 idle GPUs) and must split 3 + 1: cross traffic 3K/2. Worst fit takes 2 and 3 (3 + 2),
    {W1, W3} | {W2, W4}: K, the paper's Fig. 1(c). least-traffic picks the latter."""
    gpus, idle = [4, 4, 4, 4], [4, 3, 2, 1]
    inst = NimpInstance.from_dict(_inst(idle, gpus, 4))
    got = {tb: _titan(gpus, idle, 4, titan_tie_break=tb) for tb in TIE_BREAKS}
    assert sorted(set(got["best-fit"])) == [1, 3] and criteria(inst, got["best-fit"])[2] == pytest.approx(1.5 * K)
    assert got["worst-fit"] == [1, 2, 1, 2] and criteria(inst, got["worst-fit"])[2] == pytest.approx(K)
    assert got["least-traffic"] == got["worst-fit"]


def test_tie_break_one_worker_goes_best_fit() -> None:
    """A 1-worker job on non-idle machines with R = (5, 1, 3): best fit and least-traffic take the
    machine with 1 idle GPU, worst fit the one with 5."""
    gpus, idle = [8, 8, 8], [5, 1, 3]
    assert _titan(gpus, idle, 1, titan_tie_break="best-fit") == [1]
    assert _titan(gpus, idle, 1, titan_tie_break="least-traffic") == [1]
    assert _titan(gpus, idle, 1, titan_tie_break="worst-fit") == [0]
    assert _titan(gpus, idle, 1, titan_step2="pool-prefix") == [0]  # head of the pool: most idle GPUs
    # no non-idle machine with an idle GPU: the idle machine with the most idle GPUs (step 1)
    assert _titan([4, 8, 8, 2], [4, 0, 8, 2], 1) == [2]
    assert _titan([4, 8], [0, 0], 1) is None


def test_readings_through_the_engine() -> None:
    d = _inst([5, 1, 3], [8, 8, 8], 1)
    pg = {"titan_algorithm": "pair-grouping"}
    assert solve("nimp", d, "titan", params={**pg, "titan_tie_break": "worst-fit"}).solution["machine_of_worker"] == [0]
    assert solve("nimp", d, "titan", params=pg).solution["machine_of_worker"] == [1]
    with pytest.raises(Exception, match="titan_tie_break"):
        solve("nimp", d, "titan", params={"titan_tie_break": "first-fit"})
    with pytest.raises(Exception, match="titan_algorithm"):
        solve("nimp", d, "titan", params={"titan_algorithm": "grouping"})
    # titan_step2 reaches the algorithm too: the old pool-prefix step takes the head of the pool
    # (most idle GPUs, machine 0), as the direct call in test_tie_break_one_worker_goes_best_fit.
    assert solve("nimp", d, "titan", params={**pg, "titan_step2": "pool-prefix"}).solution["machine_of_worker"] == [0]
    # The pseudo-code: every machine's feasible set is {W0}, H ties, and Alg. 2's strict
    # 'tmp > opt' (line 10) keeps the first machine in index order: machine 0.
    assert solve("nimp", d, "titan", params={"titan_algorithm": "pseudo-code"}).solution["machine_of_worker"] == [0]
    # The default, repaired: a one-worker job goes best fit (no traffic for least-traffic to weigh)
    assert solve("nimp", d, "titan").solution["machine_of_worker"] == [1]


def test_max_attempts_reaches_titan_through_the_engine() -> None:
    """generate.tiny(104): Titan's first placement breaks the bandwidth limit and a later one
    meets it, so with one attempt it finds nothing (``no_solution``) and without a cap it finds a
    placement that ``evaluate`` accepts (a mutant that drops ``max_attempts`` on the way fails)."""
    from optkit.formulations.nimp.generate import tiny

    d = tiny(104)
    for pg in ({"titan_algorithm": "pair-grouping"}, {}):
        free = solve("nimp", d, "titan", params=pg)
        assert free.status.value == "feasible"
        assert evaluate(NimpInstance.from_dict(d), free.solution).feasible
        one = solve("nimp", d, "titan", params={**pg, "max_attempts": 1})
        assert one.status.value == "no_solution" and one.solution is None
        assert "not a proof" in one.message


# ----------------------------------------------------------------------------- pair-grouping: merge rule
def test_merge_lets_a_set_exactly_fill_the_largest_machine() -> None:
    """8-worker HD on two non-idle 8-GPU machines with 4 idle GPUs each (and nothing else).
    Traffic per sync: pairs a^4 carry K (K/2 in two phases), a^2 K/2, a^1 K/4. Merging heaviest
    first: {0,4},{1,5},{2,6},{3,7}; then (0,2) joins {0,4}+{2,6} = 4 workers, exactly the largest
    machine's 4 idle GPUs, and (1,3) joins {1,5}+{3,7}: {0,2,4,6} | {1,3,5,7}, split only in the a^1
    phases: 4 pairs x K/8 x 2 = K. If a set could not exactly fill the machine (``<`` instead of
    ``<=``), the pairs {0,4},{1,5} | {2,6},{3,7} would split the a^2 phases: 4 x K/4 x 2 = 2K.
    With P = K/2 (4 pairs of K/8, 2 of K/4, 1 of K/2 per phase) only the first is feasible.
    The lex-cross optimum by exhaustive search is (0, 2, K)."""
    gpus, idle = [8, 8], [4, 4]
    for cap in (math.inf, K / 2):
        m = _titan(gpus, idle, 8, cap)
        assert m is not None
        inst = NimpInstance.from_dict(_inst(idle, gpus, 8, K / 2))
        assert criteria(inst, m) == (0, 2, pytest.approx(K))
        assert sorted({m[a] for a in (0, 2, 4, 6)}) != sorted({m[a] for a in (1, 3, 5, 7)})
    inst = NimpInstance.from_dict(_inst(idle, gpus, 8, K / 2))
    best = brute_force(inst, objective="lex-cross")
    assert best is not None and best[1] == (0, 2, pytest.approx(K))
    res = run_titan(inst, titan_algorithm="pair-grouping")
    assert res.status.value == "feasible" and evaluate(inst, res.solution).feasible


# ----------------------------------------------------------------------------- no_solution
HEURISTICS = ("titan", "elasticflow", "hived", "tiresias")


@pytest.mark.parametrize("algorithm", HEURISTICS)
def test_heuristic_without_placement_returns_no_solution(algorithm: str) -> None:
    """4 workers on two non-idle 4-GPU machines with 2 idle GPUs each and P = 0: the idle GPUs
    suffice, but every placement splits the job and some pair crosses, which P = 0 forbids. The
    exact search proves it infeasible; a heuristic that finds nothing says ``no_solution`` (no
    proof) with a message, never ``error``."""
    d = _inst([2, 2], [4, 4], 4, 0.0)
    assert brute_force(NimpInstance.from_dict(d)) is None
    res = solve("nimp", d, algorithm)
    assert res.status.value == "no_solution", res
    assert res.solution is None and "found no feasible placement" in res.message
    assert solve("nimp", d, "brute-force").status.value == "infeasible"


@pytest.mark.parametrize("algorithm", HEURISTICS)
def test_too_few_idle_gpus_is_infeasible(algorithm: str) -> None:
    assert solve("nimp", _inst([1, 2], [4, 4], 4), algorithm).status.value == "infeasible"


# ----------------------------------------------------------------------------- (1 - 1/e)
def test_submodular_values_by_hand() -> None:
    """Def. 1's H, N - O_k (approximation.py): N = 6 on 4 machines (3 idle). Optimum (1 idle, 2
    used): values (6-1, 6-2) = (5, 4). A heuristic at (3, 3): (3, 3), ratios 3/5 (< 1 - 1/e =
    0.632: Theorem 4 violated) and 3/4 (holds); at (2, 3): 4/5 and 3/4, both hold. A heuristic
    that found nothing: ratio 0."""
    inst = NimpInstance.from_dict(_inst([4, 4, 4, 2], [4, 4, 4, 4], 6))
    assert submodular_values(inst, 1, 2) == (5, 4)
    r = ratios(inst, (3, 3), (1, 2))
    assert r["ratio_theorem4"] == pytest.approx(0.6) and not r["holds_theorem4"]
    assert r["ratio_theorem5"] == pytest.approx(0.75) and r["holds_theorem5"]
    r2 = ratios(inst, (2, 3), (1, 2))
    assert r2["ratio_theorem4"] == pytest.approx(0.8) and r2["holds_theorem4"] and r2["holds_theorem5"]
    r0 = ratios(inst, None, (1, 2))
    assert r0["ratio_theorem4"] == 0 and not r0["holds_theorem4"] and not r0["holds_theorem5"]
    assert RATIO == pytest.approx(1 - 1 / math.e)
    # An optimum of value 0 is no violation: two idle 1-GPU machines and N = 2, every placement
    # uses both (2 idle, 2 used): H = (0, 0); a heuristic that found nothing holds there.
    one = NimpInstance.from_dict(_inst([1, 1], [1, 1], 2))
    rz = ratios(one, None, (2, 2))
    assert rz["optimum_values"] == [0, 0] and rz["ratio_theorem4"] == rz["ratio_theorem5"] == 1.0
    assert rz["holds_theorem4"] and rz["holds_theorem5"]
    # Eq. (3)'s C_max form is H + (C_max - N); here C_max = N, so it equals H
    from optkit.formulations.nimp.bounds import remaining_machines

    assert remaining_machines(inst, 3, 3) == (3, 3) and remaining_machines(one, 2, 2) == (0, 0)


def test_approximation_trials_count_and_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeded trials with a binding P (the pseudo-code): the counters add up, every instance where
    Titan finds nothing is traced to the constraint line 18 broke (bandwidth, on these instances),
    the ratio distribution covers the instances where Titan places, every failure is put down to
    one constraint, and the check does fail (ratio 0 where Titan finds nothing although a placement
    exists; below 1 - 1/e where it places, Theorem 5)."""
    import optkit.formulations.nimp.exact as nimp_exact

    # the three trials below draw the same 120 instances: each optimum is searched once
    searched: dict[str, tuple[list[int], tuple[float, ...]] | None] = {}

    def brute_force_once(inst: NimpInstance, **kw: str) -> tuple[list[int], tuple[float, ...]] | None:
        key = json.dumps([inst.to_dict(), kw], sort_keys=True)
        if key not in searched:
            searched[key] = brute_force(inst, **kw)
        return searched[key]

    monkeypatch.setattr(nimp_exact, "brute_force", brute_force_once)
    out = trials(120, 0, titan_algorithm="pseudo-code")
    assert out["tried"] == 120 and 0 < out["compared"] <= 120
    assert out["titan_placed"] + out["titan_found_none"] == out["compared"]
    assert out["titan_optimal"] <= out["titan_placed"]
    bc = out["by_capacity"]
    assert bc["scalar"]["compared"] + bc["matrix"]["compared"] == out["compared"]
    assert bc["scalar"]["titan_found_none"] + bc["matrix"]["titan_found_none"] == out["titan_found_none"] >= 1
    assert sum(out["found_none_breaks"].values()) == out["titan_found_none"]
    assert set(out["found_none_breaks"]) == {"bandwidth"}
    for name in ("theorem4", "theorem5"):
        assert sum(out[f"ratios_placed_{name}"].values()) == out["titan_placed"]
        assert out[f"violations_placed_{name}"] <= out[f"violations_{name}"]
        assert out[f"violations_{name}"] <= out[f"violations_placed_{name}"] + out["titan_found_none"]
    assert out["violations_placed_theorem5"] >= 1 and out["worst_ratio_theorem5"] == 0.0
    assert out["titan_optimal"] + out["titan_worse"] == out["titan_placed"]
    failures = out["titan_found_none"] + out["titan_worse"]
    assert sum(out["failures_cause"].values()) == failures and out["failures_cause"].get("capacity", 0) >= 1
    assert 0 < out["failures_optimum_unbound"] <= failures
    for name in ("theorem4", "theorem5"):
        assert sum(out[f"violations_cause_{name}"].values()) == out[f"violations_{name}"]
    ex = out["examples"][0]
    inst = NimpInstance.from_dict(ex["instance"])
    best = brute_force(inst)
    assert best is not None and list(best[1]) == ex["optimum"]
    grouped = trials(120, 0, titan_algorithm="pair-grouping")
    assert grouped["compared"] == out["compared"] and grouped["found_none_breaks"] == {}
    assert grouped["without_bandwidth"]["titan_optimal"] == grouped["compared"]
    # the default: optimal with P removed, so every failure and violation is one of bandwidth (its
    # placement without P meets P only where it is the placement under P, the optimum)
    repaired = trials(120, 0)
    assert repaired["compared"] == out["compared"] and repaired["found_none_breaks"] == {}
    assert repaired["without_bandwidth"]["titan_optimal"] == repaired["compared"]
    assert set(repaired["failures_cause"]) == {"bandwidth"}
    assert repaired["titan_found_none"] < grouped["titan_found_none"] <= out["titan_found_none"]
    assert len(searched) == 120


def test_line18_breaks_names_the_constraint() -> None:
    """Issue instance (a): step 2's deployment [2, 2, 1, 1, 1, 0] breaks P12 only; three workers
    on a machine with 2 idle GPUs break the resource constraint; -1 is a worker without machine."""
    gpus, idle, cap = _issue_a()
    inst = NimpInstance.from_dict({**_inst(idle, gpus, 6), "pair_capacity_bytes": cap})
    assert line18_breaks(inst, [2, 2, 1, 1, 1, 0]) == "bandwidth"
    assert line18_breaks(inst, alg3_deployment(gpus, idle, np.asarray(cap), inst.phases(), workers=6)) == "bandwidth"
    assert line18_breaks(inst, [0, 4, 1, 4, 4, 4]) == "none"
    assert line18_breaks(inst, [2, 2, 2, 4, 4, 4]) == "resource+bandwidth"
    free = NimpInstance.from_dict(_inst(idle, gpus, 6))
    assert line18_breaks(free, [2, 2, 2, 4, 4, 4]) == "resource"
    assert line18_breaks(free, [2, 2, -1, 4, 4, 4]) == "no machine"


def test_choose_best_fit_matches_enumeration() -> None:
    """``choose(..., "best-fit")`` against every subset of the given size (random R_s, seeded),
    including need <= 0 (extra machines tried after a bandwidth violation)."""
    rng = np.random.default_rng(5)
    for _ in range(400):
        M = int(rng.integers(1, 9))
        R = [int(r) for r in rng.integers(1, 8, size=M)]
        count = int(rng.integers(0, M + 1))
        need = int(rng.integers(-3, sum(R) + 2))
        got = choose(range(M), R, count, need, "best-fit")
        sums = [sum(R[s] for s in c) for c in itertools.combinations(range(M), count)
                if sum(R[s] for s in c) >= need]
        if not sums:
            assert got is None
        else:
            assert got is not None and len(set(got)) == count and sum(R[s] for s in got) == min(sums)


def test_titan_equals_cpsat_when_bandwidth_cannot_bind() -> None:
    """150 seeded instances (3-8 machines of 8 GPUs, HD jobs of 1-16 workers, P = 1e30 B): the
    engine's ``titan`` returns CP-SAT's proven lexicographic optimum on every one."""
    rng = np.random.default_rng(99)
    for _ in range(150):
        M = int(rng.integers(3, 9))
        idle = [8 if u < 0.3 else int(rng.integers(0, 8)) for u in rng.random(M)]
        if sum(idle) == 0:
            continue
        d = _inst(idle, [8] * M, int(rng.integers(1, min(16, sum(idle)) + 1)))
        exact = solve("nimp", d, "cpsat", params={"workers": 1, "bound_shortcut": False}, time_limit=60)
        res = solve("nimp", d, "titan", params={"titan_algorithm": "pair-grouping"})
        assert exact.status.value == "optimal" and res.status.value == "feasible"
        assert list(res.objective) == list(exact.objective), d


def test_one_worker_closed_form_equals_the_pseudo_codes_greedy() -> None:
    """Titan's N = 1 shortcut (``_one_worker_pseudo_code``) against Alg. 3 run in full
    (``_alg3`` with its feasibility check) on 500 seeded clusters, some with no idle GPU."""
    from optkit.formulations.nimp.titan import Collective, _alg3, _meets_eq1, _one_worker_pseudo_code

    rng = np.random.default_rng(11)
    col = Collective(1, [])
    for _ in range(500):
        M = int(rng.integers(1, 12))
        K = rng.integers(1, 9, size=M)
        R = np.minimum(K, rng.integers(0, 9, size=M) * (rng.random(M) < 0.8))
        full = np.asarray(_alg3(col, R, K, 1e9), dtype=np.int64)
        want = [int(full[0])] if _meets_eq1(col, full, R.tolist(), 1e9, M) else None
        assert _one_worker_pseudo_code(R, K) == want


@pytest.mark.parametrize("readings", [{}, {"titan_algorithm": "pseudo-code"}, {"titan_step2": "pool-prefix"}])
def test_one_run_for_both_capacities_equals_two_runs(readings: dict[str, str]) -> None:
    """``place_with_and_without_capacity`` (the replay's Titan, one run where its proof allows)
    returns exactly what two runs of Titan return, under P and under P = infinity, on 400 seeded
    instances with a binding P (scalar or per pair), for the default (with either step 2) and the
    pseudo-code; both of its paths are taken."""
    rng = np.random.default_rng(11)
    shortcut = rerun = 0
    for _ in range(400):
        inst = NimpInstance.from_dict(random_instance(rng))
        K = np.array([x.gpus for x in inst.machines], dtype=np.int64)
        R = np.array([x.idle_gpus for x in inst.machines], dtype=np.int64)
        if R.sum() < inst.N:
            continue
        cap = float(inst.capacity[0, 0]) if inst.capacity_is_scalar else inst.capacity
        want = (place_unchecked(K, R, cap, inst.phases(), workers=inst.N, **readings),
                place_unchecked(K, R, math.inf, inst.phases(), workers=inst.N, **readings))
        got = place_with_and_without_capacity(K, R, cap, inst.phases(), workers=inst.N, **readings)
        assert got == want
        if want[1] is not None and want[0] == want[1]:
            shortcut += 1
        else:
            rerun += 1
    assert shortcut > 20 and rerun > 20


def test_feasible_worker_set_under_infinite_capacity_takes_the_first_room_workers() -> None:
    """P = infinity short-cuts Alg. 1's tests; a huge finite P runs them all: the same sets."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        inst = NimpInstance.from_dict(random_instance(rng))
        col = Collective(inst.N, inst.phases())
        machine_of = [int(rng.integers(-1, inst.M)) for _ in range(inst.N)]
        available = [n for n in range(inst.N) if machine_of[n] < 0]
        for s in range(inst.M):
            room = int(rng.integers(0, 5))
            assert feasible_worker_set(s, available, machine_of, room, math.inf, {}, col) == \
                feasible_worker_set(s, available, machine_of, room, 1e300, {}, col)


def test_trials_over_no_instance_and_the_optimum_of_value_zero() -> None:
    """Over no instance every counter is 0 and every worst ratio 1 (nothing seen is worse); over a
    few, the instances whose optimum has value 0 (every worker alone: N idle machines, or N
    machines) are counted per theorem, recounted here from the brute-force optimum."""
    from optkit.formulations.nimp.bounds import submodular_values

    none = trials(0, 4)
    assert none["tried"] == none["compared"] == none["titan_placed"] == 0 and none["examples"] == []
    for k in ("theorem4", "theorem5"):
        assert none[f"worst_ratio_{k}"] == none[f"worst_ratio_placed_{k}"] == 1.0
        assert none[f"violations_{k}"] == none[f"violations_placed_{k}"] == none[f"optimum_zero_{k}"] == 0
        assert none["without_bandwidth"][f"worst_ratio_{k}"] == 1.0 and none["without_bandwidth"][f"violations_{k}"] == 0
    assert none["by_capacity"] == {"scalar": {"compared": 0, "titan_found_none": 0},
                                   "matrix": {"compared": 0, "titan_found_none": 0}}
    out = trials(20, 11)  # seed 11: one optimum of value 0 (Theorem 5), seven of value 1
    zeros = [0, 0]
    for d in instances(20, 11):
        inst = NimpInstance.from_dict(d)
        best = brute_force(inst)
        if best is not None:
            values = submodular_values(inst, int(best[1][0]), int(best[1][1]))
            zeros = [z + (v <= 0) for z, v in zip(zeros, values)]
    assert [out["optimum_zero_theorem4"], out["optimum_zero_theorem5"]] == zeros == [0, 1]


def test_run_titan_reports_its_own_time() -> None:
    """The algorithm entry reports the seconds Titan itself took (``info["algorithm_s"]``), as
    every nimp algorithm entry does."""
    from optkit.formulations.nimp.titan import run_titan

    r = run_titan(NimpInstance.from_dict(tiny(0)))
    assert r.info["algorithm_s"] >= 0.0 and r.solution is not None
