"""Proven lower bounds on both gpu-mapping objectives, for any feasible mapping.

Notation (as in :mod:`.model`): stages s = 0..S-1 with k_s replicas, n = sum k_s vertices,
servers m = 0..M-1 with c_m free GPUs (sum c_m = n, 1 <= c_m <= g); a feasible mapping puts
exactly c_m vertices on server m, so every server holds at least one vertex.

``alpha`` (eq. 7, seconds)
--------------------------
For stage s and a server holding ``a = x_{s-1}^m``, ``b = x_s^m >= 1``, ``d = x_{s+1}^m``,
``beta_s^m`` depends on (a, b, d) only (eqs. 4-6; :func:`.model.stage_times` row s reads rows
s-1, s, s+1 of the count matrix and nothing else). Let ``rest_s = n - k_{s-1} - k_s - k_{s+1}``
(the replicas of all other stages; missing neighbours count 0). On a server of capacity c,
any feasible mapping has ``0 <= a <= k_{s-1}``, ``0 <= d <= k_{s+1}``, ``a + b + d <= c`` and
``a + b + d >= c - rest_s`` (the other stages fill at most ``rest_s`` of its GPUs), so

    beta_s^m >= phi_s(b, c) := min { beta_s(a, b, d) : a, d as above }.           (i)

Likewise ``b >= c - (n - k_s)``, so a server may hold no replica of s only if
``c <= n - k_s``. Let ``A_m(t) = {b : max(0, c_m - (n - k_s)) <= b <= min(k_s, c_m),
b = 0 or phi_s(b, c_m) <= t}``. In any feasible mapping with ``alpha <= t``, every server m has
``x_s^m`` in ``A_m(t)`` (by (i), since alpha >= beta_s^m whenever x_s^m > 0) and
``sum_m x_s^m = k_s``. Hence

    alpha >= LB_s := min { t : k_s is a sum of one element of each A_m(t) },

and ``alpha >= max_s LB_s``. LB_s is computed exactly: a bitset subset-sum over the servers
for each candidate t (the finitely many values phi_s takes), bisected because A_m(t) grows with
t. It captures the largest free-GPU count (b <= c_m), the stages that must be split (k_s >
max c_m forces several servers, each with x < k, paying eq. 6's NIC term) and the best
neighbours a stage can have on a server.

*Stages that cannot all stay whole.* Let ``LBsplit_s`` be the same minimum over distributions
that use at least two servers (infinite if k_s = 1). If a mapping has ``alpha <= t``, every
stage with ``LBsplit_s > t`` sits whole on one server, so these stages' sizes pack whole into
the servers, which requires (a) for every q, at most ``sum_m floor(c_m/q)`` of them have size
>= q (a server holds at most floor(c_m/q) such stages), and (b) their total size is at most
``sum_m maxfill_m``, maxfill_m being the largest sum of a sub-multiset of their sizes that is
<= c_m (what server m receives is such a sub-multiset). Both conditions only get easier as t
grows (fewer stages are forced whole), so

    alpha >= min { t >= max_s LB_s : the stages with LBsplit_s > t pass (a) and (b) },

found by bisection over the candidate values. This is what makes the bound bite on GPT-175B
(16 stages x 2 replicas): with odd free-GPU counts some pair must be split, and every split
pair pays eq. (6) over the NIC. The phi values are computed by :func:`.model.stage_times`
itself on a count matrix with one column per (a, b, d): the very floating-point operations
``evaluate`` performs, so the bound is never above an optimum by round-off.

``cut`` (bytes per iteration)
-----------------------------
Let ``W`` be the job graph's symmetric weight matrix (parallel edges summed), ``W_v`` vertex
v's weighted degree and ``P(v)`` the set of vertices on v's server. Every cut edge has its two
ends on different servers, so ``cut = 1/2 sum_v w(v, V \\ P(v))``.

1. *Degree bound.* ``w(v, V \\ P(v)) = W_v - w(v, P(v) - v) >= W_v - top_{c-1}(v) =: r_v(c)``,
   where c = |P(v)| is v's server's capacity and ``top_j(v)`` the sum of the j largest entries
   of row v of W (P(v) - v has c - 1 distinct vertices). The mapping is a bijection from the
   vertices to the n GPU slots (server m offers c_m slots), so
   ``cut >= 1/2 min over bijections of sum_v r_v(c(slot(v)))``: a linear assignment problem,
   solved exactly with ``scipy.optimize.linear_sum_assignment``.
2. *Min-cut bound.* If M >= 2, every server's vertex set P_m is a non-empty proper subset of V,
   so ``w(delta(P_m)) >= lambda``, the global minimum cut (Stoer-Wagner; 0 if the graph is
   disconnected). Each cut edge lies in exactly two of the delta(P_m), so
   ``cut = 1/2 sum_m w(delta(P_m)) >= M lambda / 2``.

3. *Forced splits.* The intra-stage edge sets (ring or trees) of different stages and the
   inter-stage edges are disjoint, so ``cut = sum_s cut_s + cut_inter``. A stage spread over
   >= 2 servers cuts at least ``lambda_s``, the minimum cut of its own intra-stage graph; the
   stages kept whole must pack whole into the servers, so (as for alpha, with maxfill taken
   over all stage sizes, which only loosens it) (a) the split stages' sizes add up to at least
   ``n - sum_m maxfill_m``, and (b) for every q at least ``#{s: k_s >= q} - sum_m floor(c_m/q)``
   stages of size >= q are split. Each condition alone gives a least total ``lambda`` over the
   split stages (a min-cost covering knapsack over the sizes, solved by dynamic programming;
   the sum of the cheapest ``lambda_s`` for (b)); the larger of the two plus bound 1 computed on
   the inter-stage edges only bounds the cut.

The cut bound is ``max(1, 2, 3)`` (0 when M = 1, where the cut is 0), reduced by a relative
1e-12 so round-off in the different summation orders cannot lift it above an optimal cut.

Quality (tests): on the ``small`` suite instances of <= 8 replicas the alpha bound equals the
brute-force optimum on 21 of 30 and the cut bound on 18 of 30; on 400 random synthetic
instances (:func:`.generate.random_small`) 331 and 242 of 400.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np

from .model import GpuMappingInstance, stage_compute, stage_times
from .unit_bound import unit_cut_bound

__all__ = ["lower_bound", "alpha_lower_bound", "cut_lower_bound", "degree_bound", "stage_phi"]

ROUNDOFF = 1e-12


# ----------------------------------------------------------------------------- alpha
def stage_phi(instance: GpuMappingInstance, s: int) -> dict[int, dict[int, float]]:
    """``phi[c][b]`` of the module docstring for stage ``s``: the least eq. (7) time a server of
    capacity c holding b replicas of s can give it (missing keys: b impossible there)."""
    job = instance.job
    k = job.replicas
    S = len(k)
    n = job.n_replicas
    kp = int(k[s - 1]) if s > 0 else 0
    kn = int(k[s + 1]) if s + 1 < S else 0
    ks = int(k[s])
    rest = n - kp - ks - kn
    cols: list[tuple[int, int, int, int]] = []  # (c, a, b, d)
    for c in sorted(set(instance.servers)):
        for b in range(1, min(ks, c) + 1):
            for a in range(0, min(kp, c - b) + 1):
                d_lo = max(0, c - rest - a - b)
                for d in range(d_lo, min(kn, c - a - b) + 1):
                    cols.append((c, a, b, d))
    phi: dict[int, dict[int, float]] = {}
    if not cols:
        return phi
    x = np.zeros((S, len(cols)), dtype=float)
    for j, (_, a, b, d) in enumerate(cols):
        x[s, j] = b
        if s > 0:
            x[s - 1, j] = a
        if s + 1 < S:
            x[s + 1, j] = d
    beta = stage_times(job, instance.cluster, x)[s]
    for (c, _, b, _), v in zip(cols, beta.tolist()):
        row = phi.setdefault(c, {})
        if b not in row or v < row[b]:
            row[b] = v
    return phi


def _stage_bounds(instance: GpuMappingInstance, s: int) -> tuple[list[float], float, float]:
    """``(candidate values, LB_s, LBsplit_s)`` for stage s (module docstring)."""
    job = instance.job
    ks = int(job.replicas[s])
    n = job.n_replicas
    phi = stage_phi(instance, s)
    caps = list(instance.servers)
    mask = (1 << (ks + 1)) - 1

    def feasible(t: float, split: bool) -> bool:
        # reach[j]: sums reachable using j servers (j = 2 means ">= 2")
        reach = [1, 0, 0]
        for c in caps:
            lo = max(0, c - (n - ks))
            allowed = [b for b in range(lo, min(ks, c) + 1) if b == 0 or phi.get(c, {}).get(b, math.inf) <= t]
            new = [0, 0, 0]
            for b in allowed:
                for j in range(3):
                    if reach[j]:
                        jj = j if b == 0 else min(j + 1, 2)
                        new[jj] |= (reach[j] << b) & mask
            reach = new
            if not any(reach):
                return False
        if split:
            return bool((reach[2] >> ks) & 1)
        return bool(((reach[1] | reach[2]) >> ks) & 1)

    values = sorted({v for row in phi.values() for v in row.values()})
    if not values or not feasible(values[-1], False):  # cannot happen for a valid instance
        raise AssertionError(f"stage {s}: no feasible distribution of its replicas")

    def least(split: bool) -> float:
        if not feasible(values[-1], split):
            return math.inf
        lo, hi = 0, len(values) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if feasible(values[mid], split):
                hi = mid
            else:
                lo = mid + 1
        return values[lo]

    return values, least(False), least(True)


def _packable(sizes: list[int], caps: list[int]) -> bool:
    """Necessary conditions for packing items of ``sizes`` whole into bins of ``caps``:
    (a) for every q, the items of size >= q are at most ``sum_m floor(c_m / q)``;
    (b) their volume is at most ``sum_m maxfill_m``, the largest sum of a sub-multiset of the
    sizes that fits in c_m (the items each bin receives are such a sub-multiset)."""
    if not sizes:
        return True
    for q in sorted(set(sizes)):
        if sum(1 for k in sizes if k >= q) > sum(c // q for c in caps):
            return False
    cmax = max(caps)
    reach = 1
    for k in sizes:
        reach |= (reach << k) & ((1 << (cmax + 1)) - 1)
    fill = {c: max(j for j in range(c + 1) if (reach >> j) & 1) for c in set(caps)}
    return sum(sizes) <= sum(fill[c] for c in caps)


def alpha_lower_bound(instance: GpuMappingInstance) -> float:
    """The least t with ``LB_s <= t`` for every stage and the stages that cannot be split within
    t (``LBsplit_s > t``) passing :func:`_packable` (module docstring): a lower bound on eq.
    (7)'s alpha of every feasible mapping, in seconds."""
    job = instance.job
    caps = list(instance.servers)
    per = [_stage_bounds(instance, s) for s in range(len(job.stages))]
    base = max(lb for _, lb, _ in per)
    cands = sorted({v for vals, _, _ in per for v in vals if v >= base})
    k = [int(x) for x in job.replicas]

    def ok(t: float) -> bool:
        return _packable([k[s] for s, (_, _, sp) in enumerate(per) if sp > t], caps)

    lo, hi = 0, len(cands) - 1  # ok(max value) holds: every stage splits or packs as in any mapping
    if not ok(cands[hi]):
        raise AssertionError("no candidate threshold is feasible")
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(cands[mid]):
            hi = mid
        else:
            lo = mid + 1
    return cands[lo]


# ----------------------------------------------------------------------------- cut
def degree_bound(instance: GpuMappingInstance, w: np.ndarray | None = None) -> float:
    """Bound 1 on the graph with weight matrix ``w`` (default: the whole job graph)."""
    from scipy.optimize import linear_sum_assignment

    if w is None:
        w = instance.job.adjacency
    n = w.shape[0]
    deg = w.sum(axis=1)
    desc = -np.sort(-w, axis=1)  # each row's weights, largest first (the diagonal is 0)
    top = np.concatenate([np.zeros((n, 1)), np.cumsum(desc, axis=1)], axis=1)  # top[v, j]
    slots = np.repeat(np.asarray(instance.servers, dtype=np.int64), instance.servers)
    caps = sorted(set(instance.servers))
    r = {c: np.maximum(deg - top[:, min(c - 1, n)], 0.0) for c in caps}
    cost = np.stack([r[int(c)] for c in slots], axis=1)  # cost[v, slot]
    rows, cols = linear_sum_assignment(cost)
    return 0.5 * float(cost[rows, cols].sum())


def _min_cut(w: np.ndarray) -> float:
    """Global minimum cut of the graph with symmetric weight matrix ``w`` (0 if disconnected)."""
    n = w.shape[0]
    if n < 2:
        return math.inf
    if n == 2:
        return float(w[0, 1])
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_weighted_edges_from((i, j, float(w[i, j])) for i in range(n) for j in range(i + 1, n) if w[i, j] > 0)
    if not nx.is_connected(g):
        return 0.0
    return float(nx.stoer_wagner(g, weight="weight")[0])


def _split_bound(instance: GpuMappingInstance) -> float:
    """Bound 3: forced splits of stages (intra-stage edges) plus bound 1 on the inter-stage
    edges (module docstring)."""
    job = instance.job
    caps = list(instance.servers)
    n = job.n_replicas
    w = job.adjacency
    off = job.offsets
    k = [int(x) for x in job.replicas]
    inter = w.copy()
    lam = []
    for s in range(len(k)):
        a, b = int(off[s]), int(off[s + 1])
        lam.append(_min_cut(w[a:b, a:b]))
        inter[a:b, a:b] = 0.0
    # (a) volume: the unsplit stages fit whole, so sum_{split} k_s >= n - F
    cmax = max(caps)
    reach = 1
    for ks in k:
        reach |= (reach << ks) & ((1 << (cmax + 1)) - 1)
    fill = {c: max(j for j in range(c + 1) if (reach >> j) & 1) for c in set(caps)}
    need = n - sum(fill[c] for c in caps)
    best_a = 0.0
    if need > 0:
        INF = math.inf
        dp = [0.0] + [INF] * need  # dp[v]: least cost of split stages with volume >= v (capped)
        for ks, ls in zip(k, lam):
            if ks < 2:
                continue
            for v in range(need, -1, -1):
                if dp[v] < INF:
                    t = min(need, v + ks)
                    dp[t] = min(dp[t], dp[v] + ls)
        best_a = dp[need]
    # (b) for each q: at most sum_m floor(c_m/q) unsplit stages of size >= q
    best_b = 0.0
    for q in sorted(set(x for x in k if x >= 2)):
        big = sorted(ls for ks, ls in zip(k, lam) if ks >= q)
        must = len(big) - sum(c // q for c in caps)
        if must > 0:
            best_b = max(best_b, float(sum(big[:must])))
    forced = max(best_a, best_b)
    if math.isinf(forced):  # cannot happen for a valid instance
        raise AssertionError("no feasible set of split stages")
    return forced + degree_bound(instance, inter)


def _mincut_bound(instance: GpuMappingInstance) -> float:
    M = len(instance.servers)
    if M < 2:
        return 0.0
    job = instance.job
    g = nx.Graph()
    g.add_nodes_from(range(job.n_replicas))
    u, v, w = job.edges
    g.add_weighted_edges_from((int(a), int(b), float(x)) for a, b, x in zip(u, v, w) if x > 0)
    if job.n_replicas < 2 or not nx.is_connected(g):
        return 0.0
    lam, _ = nx.stoer_wagner(g, weight="weight")
    return 0.5 * M * float(lam)


def cut_lower_bound(instance: GpuMappingInstance) -> float:
    """``max(degree bound, M * lambda / 2)`` (module docstring), bytes per iteration."""
    if len(instance.servers) < 2:
        return 0.0
    return max(degree_bound(instance), _mincut_bound(instance), _split_bound(instance)) * (1.0 - ROUNDOFF)


def lower_bound(instance: GpuMappingInstance, objective: str) -> float | None:
    """A proven lower bound on ``objective`` (``cut`` or ``alpha``) over all feasible mappings
    of ``instance``; ``None`` for any other objective.

    A job with tensor-parallel / MoE stages (Sec. VI) gets the bounds that need no count argument:
    ``alpha >= max_s comp'_s`` (every GPU of stage s computes for :func:`.model.stage_compute`;
    comm and AllReduce are >= 0) and, for the cut, the degree bound refined by placement units and
    computed on the stage structure (:func:`.unit_bound.unit_cut_bound`: bound 1 above, which needs
    only that server m holds c_m vertices, with a tensor-parallel replica's slices counted together;
    the min-cut and split bounds assume the paper's replicas and are not claimed for slices and
    expert groups)."""
    if not instance.job.is_plain and objective in ("alpha", "cut"):
        if objective == "cut":
            return unit_cut_bound(instance)
        return float(stage_compute(instance.job, instance.cluster).max()) * (1.0 - ROUNDOFF)
    if objective == "alpha":
        return alpha_lower_bound(instance)
    if objective == "cut":
        return cut_lower_bound(instance)
    return None
