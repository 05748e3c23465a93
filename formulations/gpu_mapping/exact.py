"""Exact gpu-mapping solvers: CP-SAT and MILP on the stage-count model, and brute force.

All three minimise either objective of :func:`.model.evaluate` exactly: ``alpha`` (eq. 7,
seconds per iteration) or ``cut`` (bytes per iteration on job-graph edges between servers).

The stage-count model
=====================
Notation: stages ``s = 0..S-1`` with ``k_s`` replicas; servers ``m = 0..M-1`` with ``c_m`` free
GPUs, ``sum_m c_m = sum_s k_s``; ``g`` GPUs per server; ``B_inter``, ``B_intra``. The decision is
the integer matrix ``x[s, m]`` = replicas of stage s on server m (``x_s^m`` of the paper) with

    sum_m x[s, m] = k_s,   sum_s x[s, m] = c_m,   0 <= x[s, m] <= U[s, m] = min(k_s, c_m).

Each x[s, m] is also encoded one-hot: binaries ``z[s, m, v]``, ``v = 0..U[s, m]``, exactly one
of them 1, ``x[s, m] = sum_v v z[s, m, v]``. Every replica assignment has a count matrix, and
every count matrix is realised by some assignment, so minimising over x (plus, for the cut, over
the arrangement inside each stage, below) is minimising over all assignments.

alpha (eqs. 4-7)
----------------
Eq. (7) is ``alpha = max { beta[s, m] : x[s, m] > 0 }`` with ``beta = comp + comm + AllReduce``.
For one replica of stage s on server m:

* eq. (4): ``comp_s = p^f_s + p^b_s``, a constant.
* eq. (5) (the package README's reading, x[s, m] cancels)::

      comm = g (2 d^in_s (k_{s-1} - x[s-1,m]) / k_{s-1} + 2 d^out_s (k_{s+1} - x[s+1,m]) / k_{s+1}) / B_inter
             + (2 d^in_s x[s-1,m] / k_{s-1} + 2 d^out_s x[s+1,m] / k_{s+1}) / B_intra
           = c_s + b^-_s x[s-1, m] + b^+_s x[s+1, m]

  with ``c_s = 2 g (d^in_s + d^out_s) / B_inter``, ``b^-_s = (2 d^in_s / k_{s-1}) (1/B_intra - g/B_inter)``,
  ``b^+_s = (2 d^out_s / k_{s+1}) (1/B_intra - g/B_inter)`` (the missing neighbour's terms dropped
  for the first and last stage): **linear** in the neighbours' counts.
* eq. (6): ``AR_s(v) = 2(k_s-1) h_s g / (k_s v B_inter)`` for ``0 < v < k_s``,
  ``2(k_s-1) h_s / (k_s B_intra)`` for ``v = k_s``, 0 when ``k_s = 1``: nonlinear (1/v) in the
  stage's own count, but a constant per value v, so it is ``sum_v AR_s(v) z[s, m, v]``.

So ``beta[s, m] = a_s + AR_s(x[s,m]) + b^-_s x[s-1,m] + b^+_s x[s+1,m]`` (``a_s = comp_s + c_s``), and
``alpha >= beta[s, m]`` must hold exactly for the (s, m) with ``z[s, m, 0] = 0``:

* CP-SAT: for every ``v >= 1``, ``alpha >= a_s + AR_s(v) + b^- x[s-1,m] + b^+ x[s+1,m]`` enforced by
  the literal ``z[s, m, v]``.
* MILP: one row ``alpha >= sum_{v>=1} (a_s + AR_s(v)) z[s,m,v] + b^- x[s-1,m] + b^+ x[s+1,m] - M_sm z[s,m,0]``
  with ``M_sm = max(0, b^-) k_{s-1} + max(0, b^+) k_{s+1}``. When ``z[s,m,0] = 1`` the right-hand
  side is at most 0 <= alpha (so the row is void); otherwise it is beta[s, m]. With the usual
  ``g/B_inter > 1/B_intra`` both b are negative and ``M_sm = 0``.

Minimising alpha under these rows gives exactly ``max beta`` over the occupied (s, m).

cut
---
The job graph (Sec. IV-B, :func:`.model.job_edges`) has three kinds of edges.

* **Inter-stage** edges join every replica of stage s-1 to every replica of stage s, each of
  weight ``w_s = 2 d^out_{s-1} / k_s``: complete bipartite with a uniform weight. The pairs on a
  common server number ``sum_m x[s-1,m] x[s,m]``, so their cut is
  ``w_s (k_{s-1} k_s - sum_m x[s-1,m] x[s,m])``, a function of the counts alone. CP-SAT: an
  ``AddMultiplicationEquality`` per product. MILP: ``P[s,m] = sum_v v q[s,m,v]`` with continuous
  ``q[s,m,v] >= 0``, ``q[s,m,v] <= min(k_{s-1}, c_m - v) z[s,m,v]`` and
  ``sum_v q[s,m,v] <= x[s-1,m]``. Since P enters the objective with coefficient ``-w_s <= 0`` it
  is maximised, and the maximum of ``sum_v v q_v`` under these rows is ``v* x[s-1,m]`` for the one
  ``v*`` with ``z_{v*} = 1`` (``x[s-1,m] <= c_m - v*`` by the server's capacity, so the cap is
  not binding): the linearisation is exact.
* **Ring AllReduce** (``allreduce = ring``, k_s >= 2): the ring edges ``(r, r+1 mod k_s)``, each
  of weight ``W_s = 2(k_s-1) h_s / k_s`` (for k_s = 2 the two parallel edges are summed into one of
  weight 2W_s). The arrangement inside a stage changes neither the counts nor any other stage's
  edges, so it can be chosen per stage to minimise the ring cut. Let the stage use
  ``n_s = #{m : x[s,m] > 0}`` servers. If ``n_s = 1`` nothing is cut. If ``n_s >= 2`` the cut ring
  edges are the colour changes around the cycle; every server's replicas form at least one
  maximal arc, and a cycle with ``a >= 2`` maximal arcs has exactly ``a`` changes, so at least
  ``n_s`` edges are cut, and exactly ``n_s`` when each server holds one contiguous arc. For k_s = 2
  (n_s = 2) the one summed edge of weight 2 W_s is cut: again ``n_s W_s``. (Under the job's
  ``two_replica_ring = one-edge`` reading a two-replica stage has one edge of weight W_s, cut
  iff n_s = 2: the same formula with W_s halved.) Hence the minimum
  ring cut is ``W_s (n_s - [n_s = 1])``, and ``[n_s = 1] = sum_m z[s, m, k_s]`` (a stage sits on
  one server iff some x[s, m] = k_s, at most one m can), ``n_s = sum_m (1 - z[s, m, 0])``:
  **linear in z**. The replica assignment gives server m a contiguous block of x[s, m] replicas.
* **Tree AllReduce** (``allreduce = tree``, k_s >= 2): the double-binary-tree edges of
  :func:`.model.double_binary_tree_edges`, each ``(k_s-1) h_s / k_s`` (parallel ones summed).
  Replicas are not interchangeable here, so tree stages get replica-level binaries ``y[r, m]``
  (replica r of the stage on server m) with ``sum_m y[r, m] = 1`` and ``sum_r y[r, m] = x[s, m]``,
  and per tree edge (a, b) a cut indicator ``e_ab >= y[a, m] - y[b, m]`` for every m (CP-SAT: the
  clause ``not y[a,m] or y[b,m] or e_ab``). If a and b sit on different servers the row of a's
  server forces e_ab = 1; otherwise e_ab = 0 is allowed, and minimisation takes it. These are
  only built for the cut objective (alpha depends on x alone).

So ``cut = sum_s w_s (k_{s-1} k_s - sum_m x[s-1,m] x[s,m]) + sum_{ring s} W_s (n_s - [n_s=1])
+ sum_{tree s} sum_ab w_ab e_ab``, minimised exactly by the models.

Symmetry
--------
Servers with equal free GPUs are interchangeable: permuting them (the columns of x, and the
server index of y) changes neither the constraints nor beta[s, m] (which depends on the column
x[:, m] only) nor any cut term. So some optimum has the columns of every class of equal servers
in non-increasing lexicographic order, and it is valid to require that order. Both models
impose it on the first L stages, for consecutive servers m < m' of one class, as
``sum_{s<L} x[s,m] B^(L-1-s) >= sum_{s<L} x[s,m'] B^(L-1-s)`` with ``B = 1 + max entry`` (a base-B
number comparison, which is the lexicographic comparison; a lexicographically sorted matrix has
sorted prefixes too). L is the number of stages CP-SAT's int64 (``B^L <= 2^40``) or the MILP's
numerics (``B^(L-1) <= 10^4``) allow.

Strengthening (valid inequalities, both models)
-----------------------------------------------
The relaxations of the count model are weak where integrality (parity) decides: with k_s = 2,
``x[s, m] = 1`` on two servers is half of "all on m" plus half of "all on m'" for the LP, and
then the ring term ``W_s (n_s - [n_s = 1])`` (which is ``W_s`` times the number of servers
holding part of the stage) relaxes to 0. Two families of cuts close this:

* **Partial stages.** If no stage is split on server m (every x[s, m] is 0 or k_s), then
  ``c_m = sum of the k_s of the stages wholly on m``, a subset sum of the k_s. So when ``c_m`` is
  no subset sum of the k_s, some stage must be split on m:
  ``sum_s sum_{1 <= v < k_s} z[s, m, v] >= 1``. (For GPT-175B's 16 x 2 replicas: every server with
  an odd number of free GPUs holds a lone replica of some stage.)
* **Tree stages.** Each of the two trees of the double binary tree spans the stage's k_s
  replicas (checked per instance; only the trees that do count). A spanning tree whose vertices
  are split over ``n_s`` servers has at least ``n_s - 1`` edges between them (contract every
  server's part: the contracted tree is connected on n_s vertices). So the stage's tree cut is
  at least ``w0 (number of spanning trees) (n_s - 1)`` with ``w0 = (k_s-1) h_s / k_s`` and
  ``n_s = sum_m (1 - z[s, m, 0])``. (In CP-SAT the right-hand side uses ``floor(w0/delta)`` per
  edge, which the rounded-down weight of every tree edge, single or two merged, is at least.)

Numbers
-------
CP-SAT needs integer coefficients. Every coefficient is scaled by ``1/delta`` and rounded
**down** (each multiplies a nonnegative integer quantity: a count, a binary, or
``k_{s-1}k_s - sum_m x x``), so the integer objective is ``<= true/delta`` for every solution,
and ``delta * (CP-SAT's best bound)`` is a valid lower bound on the true optimum: that is the
reported ``bound``. The resolution is ``delta = UB / 2^30`` with UB the Heavy-Edge value (the warm
start), i.e. about 1e-9 relative; a solution CP-SAT proves optimal is within
``delta * (number of rounded terms)`` of the optimum (a few 1e-9 relative). Coefficients above
``2^50`` (terms that are far beyond UB) are clipped down to ``2^50``, which keeps the bound valid.
The MILP uses the float coefficients, with the objective in milliseconds (alpha) or megabytes
(cut) for HiGHS' tolerances, and reports both objective and bound back in seconds/bytes.

Both models are solved with the Heavy-Edge mapping (columns permuted into the symmetry order)
as the initial upper bound (CP-SAT also gets it as a hint). When a time limit stops a solver
before it found any solution, the Heavy-Edge mapping is returned as the incumbent, with status
``time_limit`` and the solver's bound (``info["incumbent"] = "heavy-edge warm start"``).

The coefficients above are derived here from the equations, not taken from
:func:`.model.stage_times`; the brute force below uses the model's own functions (the referee),
so the tests' agreement between CP-SAT, the MILP and the brute force checks the derivation.

Brute force
===========
Enumerates every count matrix (contingency table with row sums k_s and column sums c_m). alpha
is :func:`.model.alpha_from_counts` of the table. For the cut, the inter-stage part depends on
the counts alone and each stage's intra-stage (ring or tree) edges on that stage's arrangement
alone, so for every table and stage it enumerates the arrangements of the stage's replicas
with those counts (multiset permutations) and keeps the best; the cut is then
:func:`.model.cut_weight` of the assembled assignment. Two reductions keep this small, both
mere relabellings of servers: the best arrangement depends only on the multiset of the row's
nonzero counts (it is cached per multiset), and servers holding equally many replicas of the
stage are interchangeable, so only arrangements in which those labels first appear in order are
enumerated (each partition of the replicas into blocks of the given sizes once). It refuses instances with
more than :data:`BRUTE_FORCE_MAX_TABLES` count matrices or (for the cut) a stage with more than
:data:`BRUTE_FORCE_MAX_ARRANGEMENTS` arrangements. :func:`naive_enumeration` (all replica
assignments, at most :data:`NAIVE_MAX_REPLICAS` replicas) cross-checks the brute force in tests.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from optkit.anytime import add_solver_points
from optkit.deadline import bounded, check as check_deadline, current as current_deadline, offer as offer_incumbent
from optkit.errors import InputError
from optkit.result import Result, Status

from .arrangements import arrangements, n_arrangements
from .bound_proof import bound_proves, llm_bound, proven_by_bound
from .heavy_edge import heavy_edge_job
from .model import (
    GpuMappingInstance, alpha_from_counts, alpha_of_assignment, cut_weight, double_binary_tree_edges, placement_units,
    stage_counts, vertex_servers,
)

__all__ = [
    "run_cpsat", "run_highs", "run_brute_force", "brute_force", "naive_enumeration",
    "build_cp_model", "build_pyomo_model", "BRUTE_FORCE_MAX_TABLES", "BRUTE_FORCE_MAX_ARRANGEMENTS",
    "NAIVE_MAX_REPLICAS", "BRUTE_FORCE_MAX_PLACEMENTS", "count_tables", "Coefficients", "coefficients",

]

OBJECTIVES = ("cut", "alpha")
BRUTE_FORCE_MAX_TABLES = 200_000
BRUTE_FORCE_MAX_ARRANGEMENTS = 250_000
NAIVE_MAX_REPLICAS = 8
BRUTE_FORCE_MAX_PLACEMENTS = 20_000
"""Most placements brute force enumerates for a job with tensor-parallel / MoE stages (each is
measured by the model's vertex-level functions, ~0.1 ms)."""
_CP_RESOLUTION_BITS = 30          # delta = UB / 2**30
_CP_MAX_COEF = 2**50
_CP_LEX_LIMIT = 2**40
_MILP_LEX_LIMIT = 10**4
_MILP_SCALE = {"alpha": 1e3, "cut": 1e-6}  # objective units: ms, MB


def _check_objective(objective: str) -> None:
    if objective not in OBJECTIVES:
        raise InputError("objective", f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}")


# ============================================================================= coefficients
@dataclass(frozen=True)
class Coefficients:
    """The count model's data, derived from eqs. (4)-(7) and the job graph's definition."""

    k: tuple[int, ...]
    caps: tuple[int, ...]
    upper: tuple[tuple[int, ...], ...]          # U[s][m] = min(k_s, c_m)
    base: tuple[float, ...]                     # a_s = comp_s + c_s  (s)
    coef_prev: tuple[float, ...]                # b^-_s (s per replica of s-1 on the server)
    coef_next: tuple[float, ...]                # b^+_s
    allreduce: tuple[tuple[float, ...], ...]    # AR_s(v), v = 0..k_s (AR_s(0) = 0, unused)
    pair_weight: tuple[float, ...]              # w_s, s >= 1 (w_0 = 0)
    ring_weight: tuple[float, ...]              # W_s for ring stages with k_s >= 2, else 0
    tree_edges: tuple[tuple[tuple[int, int, float], ...], ...]  # per stage, summed (a, b, w)
    tree_edge_weight: tuple[float, ...]         # w0 = (k_s-1) h_s / k_s of one tree edge (tree stages)
    tree_spanning: tuple[int, ...]              # how many of the two trees span the stage (0..2)
    needs_partial: tuple[bool, ...]             # c_m is no subset sum of the k_s (<= c_m)
    gpus: tuple[int, ...] = ()                  # t_s: GPUs of one replica (tensor slices); () = all 1

    @property
    def t(self) -> tuple[int, ...]:
        """GPUs of one replica per stage: the capacity weight of x[s, m] (1 for the paper's jobs)."""
        return self.gpus or (1,) * len(self.k)

    @property
    def n_stages(self) -> int:
        return len(self.k)

    @property
    def n_servers(self) -> int:
        return len(self.caps)


def coefficients(instance: GpuMappingInstance) -> Coefficients:
    job, cl = instance.job, instance.cluster
    st = job.stages
    S = len(st)
    k = tuple(s.replicas for s in st)
    caps = tuple(int(c) for c in instance.servers)
    g, bi, ba = float(cl.gpus_per_server), cl.inter_bandwidth, cl.intra_bandwidth
    if not job.is_plain:
        if job.has_experts:
            raise InputError("instance", "has MoE stages: the stage-count model does not hold them (their time and "
                             "cut depend on which expert groups share a server); cpsat solves them on the vertex "
                             "model (exact_vertices.py)")
        return _tp_coefficients(instance)
    base, cprev, cnext, ar = [], [], [], []
    for s in range(S):
        a = st[s].fwd_time + st[s].bwd_time                     # eq. (4)
        bp = bn = 0.0
        if s > 0:                                               # eq. (5), previous stage
            a += g * 2.0 * st[s].in_bytes / bi
            bp = (2.0 * st[s].in_bytes / k[s - 1]) * (1.0 / ba - g / bi)
        if s < S - 1:                                           # eq. (5), next stage
            a += g * 2.0 * st[s].out_bytes / bi
            bn = (2.0 * st[s].out_bytes / k[s + 1]) * (1.0 / ba - g / bi)
        base.append(a)
        cprev.append(bp)
        cnext.append(bn)
        data = 2.0 * (k[s] - 1) * st[s].param_bytes / k[s]      # eq. (6)
        ar.append(_allreduce_row(k[s], data, g, ba, bi, 1))
    pair = [0.0] + [2.0 * st[s - 1].out_bytes / k[s] for s in range(1, S)]
    ring, tree, span_w, span_n = [], [], [], []
    for s in range(S):
        if job.allreduce == "ring" and k[s] >= 2:
            # one-edge reading of a two-replica ring: the single edge h = W_s is cut iff n_s = 2,
            # i.e. (W_s / 2)(n_s - [n_s = 1]) (module docstring)
            half = k[s] == 2 and job.two_replica_ring == "one-edge"
            ring.append(2.0 * (k[s] - 1) * st[s].param_bytes / k[s] / (2.0 if half else 1.0))
        else:
            ring.append(0.0)
        edges: dict[tuple[int, int], float] = {}
        span, w0 = 0, 0.0
        if job.allreduce == "tree" and k[s] >= 2 and st[s].param_bytes > 0:
            w0 = w = (k[s] - 1) * st[s].param_bytes / k[s]
            listed = double_binary_tree_edges(k[s])
            for a_, b_ in listed:
                key = (min(a_, b_), max(a_, b_))
                edges[key] = edges.get(key, 0.0) + w
            for part in (listed[:k[s] - 1], listed[k[s] - 1:]):
                if _spans(k[s], part):
                    span += 1
        tree.append(tuple((a_, b_, w_) for (a_, b_), w_ in sorted(edges.items())))
        span_n.append(span)
        span_w.append(w0)
    upper = tuple(tuple(min(ks, c) for c in caps) for ks in k)
    sums = {0}
    for ks in k:
        sums |= {v + ks for v in sums}
    needs = tuple(c not in sums for c in caps)
    return Coefficients(k, caps, upper, tuple(base), tuple(cprev), tuple(cnext), tuple(ar),
                         tuple(pair), tuple(ring), tuple(tree), tuple(span_w), tuple(span_n), needs)


def _allreduce_row(k: int, data: float, g: float, ba: float, bi: float, t: int) -> tuple[float, ...]:
    """AR_s(v), v = 0..k (eq. 6): ``data/B_intra`` at v = k, ``data·g/(t·v·B_inter)`` below (the
    stage's t·v GPUs share the NIC; t = 1 for the paper's jobs), 0 when k = 1; AR_s(0) = 0 unused."""
    row = [0.0]
    for v in range(1, k + 1):
        if k == 1:
            row.append(0.0)
        elif v == k:
            row.append(data / ba)
        else:
            row.append(data * g / (t * v * bi))
    return tuple(row)


def _tp_coefficients(instance: GpuMappingInstance) -> Coefficients:
    """The count model of a job with tensor-parallel stages (module docstring, "Tensor
    parallelism"): x[s, m] counts replicas (each t_s GPUs, its slices on one server), the servers'
    rows weigh them by t_s, eqs. (5)-(6) take a slice's share, eq. (4) the TP all-reduce."""
    from .model import stage_compute

    plain_job = type(instance.job)(stages=tuple(type(st)(st.replicas, st.fwd_time, st.bwd_time, st.in_bytes,
                                                         st.out_bytes, st.param_bytes) for st in instance.job.stages),
                                   allreduce=instance.job.allreduce, two_replica_ring=instance.job.two_replica_ring)
    # the paper's job over replicas gives the cut's terms (module docstring: unchanged in replica counts)
    plain = coefficients(type(instance)(cluster=instance.cluster, job=plain_job, servers=_replica_servers(instance)))
    job, cl = instance.job, instance.cluster
    st = job.stages
    S = len(st)
    t = tuple(int(s.tensor_parallel) for s in st)
    k = plain.k
    caps = tuple(int(c) for c in instance.servers)
    g, bi, ba = float(cl.gpus_per_server), cl.inter_bandwidth, cl.intra_bandwidth
    comp = stage_compute(job, cl)
    base, cprev, cnext, ar = [], [], [], []
    for s in range(S):
        a = float(comp[s])                                      # eq. (4) with the TP all-reduce
        bp = bn = 0.0
        if s > 0:                                               # eq. (5), a slice's share
            a += g * 2.0 * st[s].in_bytes / bi / t[s]
            bp = (2.0 * st[s].in_bytes / k[s - 1]) * (1.0 / ba - g / bi) / t[s]
        if s < S - 1:
            a += g * 2.0 * st[s].out_bytes / bi / t[s]
            bn = (2.0 * st[s].out_bytes / k[s + 1]) * (1.0 / ba - g / bi) / t[s]
        base.append(a)
        cprev.append(bp)
        cnext.append(bn)
        data = 2.0 * (k[s] - 1) * st[s].param_bytes / (k[s] * t[s])   # eq. (6), a slice's bytes
        ar.append(_allreduce_row(k[s], data, g, ba, bi, t[s]))
    upper = tuple(tuple(min(ks, c // ts) for c in caps) for ks, ts in zip(k, t))
    sums = {0}
    for ks, ts in zip(k, t):
        sums |= {v + ks * ts for v in sums}
    needs = tuple(c not in sums for c in caps)
    return Coefficients(k, caps, upper, tuple(base), tuple(cprev), tuple(cnext), tuple(ar), plain.pair_weight,
                        plain.ring_weight, plain.tree_edges, plain.tree_edge_weight, plain.tree_spanning, needs, t)


def _replica_servers(instance: GpuMappingInstance) -> tuple[int, ...]:
    """Servers for the replica-level twin of a tensor-parallel instance (only its job-graph terms
    are read, which do not depend on the servers): one server per replica."""
    return (1,) * sum(st.replicas for st in instance.job.stages)


def _has_partial(co: Coefficients, m: int) -> bool:
    """Whether some stage can be split on server m (0 < x[s, m] < k_s): always for the paper's jobs
    where the partial-stage row is needed."""
    return any(min(co.k[s] - 1, co.upper[s][m]) >= 1 for s in range(co.n_stages))


def _packing_impossible(co: Coefficients) -> str | None:
    """A proof that no mapping keeps every tensor-parallel replica on one server, from the count
    model's rows alone, or ``None``: a stage whose replicas fit on no servers' GPUs
    (``sum_m U[s, m] < k_s``), or a server whose free GPUs are no sum of whole stages while no stage
    can be split on it (the partial-stage row of "Strengthening" with no literal)."""
    for s in range(co.n_stages):
        if sum(co.upper[s]) < co.k[s]:
            return f"stage {s}'s {co.k[s]} replicas of {co.t[s]} GPUs fit on no set of the servers (at most " \
                   f"{sum(co.upper[s])} whole replicas)"
    for m in range(co.n_servers):
        if co.needs_partial[m] and not _has_partial(co, m):
            return f"server {m}'s {co.caps[m]} free GPUs are no sum of whole stages' GPUs and no stage can be split on it"
    return None


def _spans(n: int, edges: Sequence[tuple[int, int]]) -> bool:
    """Whether ``edges`` (n - 1 of them) form a spanning tree of vertices 0..n-1."""
    if len(edges) != n - 1:
        return False
    parent = list(range(n))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra == rb:
            return False
        parent[ra] = rb
    return True


def _server_classes(caps: Sequence[int]) -> list[list[int]]:
    """Servers grouped by free GPUs (each class in index order), classes of size >= 2 only."""
    by: dict[int, list[int]] = {}
    for m, c in enumerate(caps):
        by.setdefault(int(c), []).append(m)
    return [ms for _, ms in sorted(by.items()) if len(ms) >= 2]


def _lex_weights(co: Coefficients, cls: list[int], limit: int, exponent_offset: int) -> list[int]:
    """Base-B weights ``B^(L-1-s)`` of the first L stages for a class of equal servers.

    L is the largest length with ``B^(L - exponent_offset) <= limit``."""
    cap = co.caps[cls[0]]
    B = 1 + max(min(ks, cap) for ks in co.k)
    L = 0
    while L < co.n_stages and B ** (L + 1 - exponent_offset) <= limit:
        L += 1
    L = max(L, 1)
    return [B ** (L - 1 - s) for s in range(L)]


def _canonical_assignment(instance: GpuMappingInstance, assignment: list[list[int]]) -> list[list[int]]:
    """Relabel equal servers so the count columns of each class are lexicographically non-increasing
    (the symmetry order both models impose); the objective values do not change."""
    x = stage_counts(instance.job, assignment, len(instance.servers))
    perm = list(range(len(instance.servers)))
    for cls in _server_classes(instance.servers):
        order = sorted(cls, key=lambda m: tuple(-int(v) for v in x[:, m]))
        for new, old in zip(cls, order):
            perm[old] = new
    return [[perm[m] for m in row] for row in assignment]


def _expand(instance: GpuMappingInstance, rows: list[list[int]]) -> list[list[int]]:
    """Replica-level rows (one server per replica) as the solution's rows: each replica's server
    repeated for its t slices (the identity for the paper's jobs)."""
    if instance.job.is_plain:
        return rows
    return [[m for m in row for _ in range(st.tensor_parallel)] for row, st in zip(rows, instance.job.stages)]


def _replica_counts(instance: GpuMappingInstance, assignment: list[list[int]]) -> np.ndarray:
    """x[s, m] in replicas (GPU counts divided by t_s)."""
    xs = stage_counts(instance.job, assignment, len(instance.servers))
    if instance.job.is_plain:
        return xs
    return xs // np.array([st.tensor_parallel for st in instance.job.stages], dtype=np.int64)[:, None]


def _contiguous_row(counts: Sequence[int]) -> list[int]:
    """Replicas 0..k-1 in blocks: server m gets one contiguous arc of counts[m] replicas."""
    row: list[int] = []
    for m, c in enumerate(counts):
        row.extend([m] * int(c))
    return row


def _warm_start(instance: GpuMappingInstance, objective: str, seed: int | None) -> tuple[list[list[int]], float]:
    """Heavy-Edge's mapping in the symmetry order, with contiguous arcs for the count-only
    stages, and its objective value (by the model's own functions)."""
    if not instance.job.is_plain:
        from .colocation import feasible_mapping

        start = feasible_mapping(instance, seed=seed)
        if start is None:
            return None, _count_model_upper_bound(instance, objective)
        assignment = _canonical_assignment(instance, start)
    else:
        assignment = _canonical_assignment(instance, heavy_edge_job(instance.job, instance.servers, seed=seed))
    x = _replica_counts(instance, assignment)
    if instance.job.allreduce == "ring" or objective == "alpha":
        assignment = _expand(instance, [_contiguous_row(x[s]) for s in range(len(instance.job.stages))])
    return assignment, _objective_of(instance, assignment, objective)


def _count_model_upper_bound(instance: GpuMappingInstance, objective: str) -> float:
    """A value no feasible mapping exceeds (the count model's scale when no start mapping is
    known): every job-graph edge cut, or every stage's largest beta term."""
    if objective == "cut":  # every edge cut: each vertex on its own server (no pipeline edge list)
        return cut_weight(instance.job, np.arange(instance.job.n_replicas)) or 1.0
    co = coefficients(instance)
    worst = 0.0
    for s in range(co.n_stages):
        lin = (max(0.0, co.coef_prev[s]) * co.k[s - 1] if s > 0 else 0.0) + \
              (max(0.0, co.coef_next[s]) * co.k[s + 1] if s < co.n_stages - 1 else 0.0)
        worst = max(worst, co.base[s] + max(co.allreduce[s]) + lin)
    return worst or 1.0


def _objective_of(instance: GpuMappingInstance, assignment: list[list[int]], objective: str) -> float:
    job = instance.job
    if objective == "alpha":
        if not job.is_plain:
            return alpha_of_assignment(job, instance.cluster, assignment)
        return alpha_from_counts(job, instance.cluster, stage_counts(job, assignment, len(instance.servers)))
    return cut_weight(job, vertex_servers(job, assignment))


def _model_size_info(n_vars: int, n_cons: int) -> dict[str, int]:
    return {"variables": int(n_vars), "constraints": int(n_cons)}


# ============================================================================= CP-SAT
@dataclass
class _CpModel:
    model: Any
    x: dict[tuple[int, int], Any]
    z: dict[tuple[int, int, int], Any]
    y: dict[tuple[int, int, int], Any]      # (s, r, m) for tree stages (cut objective)
    delta: float
    hint: dict[Any, int]


def build_cp_model(instance: GpuMappingInstance, objective: str, *, symmetry: bool = True,
                   warm_start: list[list[int]] | None = None, upper_bound: float | None = None) -> _CpModel:
    """The CP-SAT stage-count model of the module docstring (integer coefficients, resolution
    ``delta = upper_bound / 2^30``)."""
    from ortools.sat.python import cp_model

    _check_objective(objective)
    co = coefficients(instance)
    S, M = co.n_stages, co.n_servers
    ub = upper_bound if upper_bound is not None and upper_bound > 0 else 1.0
    delta = ub / 2.0**_CP_RESOLUTION_BITS

    def scaled(value: float) -> int:
        """floor(value / delta), clipped to +-2^50 (downwards: stays a lower bound)."""
        q = math.floor(value / delta)
        return int(max(-_CP_MAX_COEF, min(_CP_MAX_COEF, q)))

    stage = "building the CP-SAT model"
    md = cp_model.CpModel()
    x: dict[tuple[int, int], Any] = {}
    z: dict[tuple[int, int, int], Any] = {}
    for s in range(S):
        check_deadline(stage)
        for m in range(M):
            U = co.upper[s][m]
            x[s, m] = md.NewIntVar(0, U, f"x[{s},{m}]")
            lits = [md.NewBoolVar(f"z[{s},{m},{v}]") for v in range(U + 1)]
            for v, lit in enumerate(lits):
                z[s, m, v] = lit
            md.AddExactlyOne(lits)
            md.Add(x[s, m] == sum(v * lit for v, lit in enumerate(lits)))
    for s in range(S):
        md.Add(sum(x[s, m] for m in range(M)) == co.k[s])
    for m in range(M):  # a replica of a tensor-parallel stage takes t_s GPUs
        md.Add(sum(x[s, m] if co.t[s] == 1 else co.t[s] * x[s, m] for s in range(S)) == co.caps[m])
    if symmetry:
        for cls in _server_classes(co.caps):
            wts = _lex_weights(co, cls, _CP_LEX_LIMIT, 0)
            for m, m2 in zip(cls, cls[1:]):
                md.Add(sum(w * x[s, m] for s, w in enumerate(wts)) >= sum(w * x[s, m2] for s, w in enumerate(wts)))

    for m in range(M):  # valid inequality: see "Strengthening" in the module docstring
        if co.needs_partial[m] and _has_partial(co, m):  # (without one: _packing_impossible)
            # a linear row, not a clause: CP-SAT's LP relaxation then sees it
            md.Add(sum(z[s, m, v] for s in range(S) for v in range(1, min(co.k[s] - 1, co.upper[s][m]) + 1)) >= 1)

    y: dict[tuple[int, int, int], Any] = {}
    if objective == "alpha":
        alpha = md.NewIntVar(0, int(math.floor(ub / delta)) + 2, "alpha")
        for s in range(S):
            check_deadline(stage)
            for m in range(M):
                lin = 0
                if s > 0 and co.coef_prev[s] != 0.0:
                    lin = lin + scaled(co.coef_prev[s]) * x[s - 1, m]
                if s < S - 1 and co.coef_next[s] != 0.0:
                    lin = lin + scaled(co.coef_next[s]) * x[s + 1, m]
                for v in range(1, co.upper[s][m] + 1):
                    const = scaled(co.base[s] + co.allreduce[s][v])
                    md.Add(alpha >= const + lin).OnlyEnforceIf(z[s, m, v])
        md.Minimize(alpha)
    else:
        terms: list[Any] = []
        const = 0
        for s in range(1, S):
            w = scaled(co.pair_weight[s])
            if w == 0:
                continue
            const += w * co.k[s - 1] * co.k[s]
            check_deadline(stage)
            for m in range(M):
                hi = min(co.upper[s - 1][m] * co.upper[s][m], co.caps[m] ** 2 // 4)
                p = md.NewIntVar(0, hi, f"p[{s},{m}]")
                md.AddMultiplicationEquality(p, [x[s - 1, m], x[s, m]])
                terms.append(-w * p)
        for s in range(S):
            W = scaled(co.ring_weight[s])
            if W == 0:
                continue
            for m in range(M):
                terms.append(W * (1 - z[s, m, 0]))
                if co.upper[s][m] == co.k[s]:
                    terms.append(-W * z[s, m, co.k[s]])
        for s in range(S):
            if not co.tree_edges[s]:
                continue
            check_deadline(stage)
            for r in range(co.k[s]):
                lits = []
                for m in range(M):
                    y[s, r, m] = md.NewBoolVar(f"y[{s},{r},{m}]")
                    lits.append(y[s, r, m])
                md.AddExactlyOne(lits)
            for m in range(M):
                md.Add(sum(y[s, r, m] for r in range(co.k[s])) == x[s, m])
            tree_terms = []
            for a, b, wf in co.tree_edges[s]:
                w = scaled(wf)
                if w == 0:
                    continue
                e = md.NewBoolVar(f"e[{s},{a},{b}]")
                for m in range(M):
                    md.AddBoolOr([y[s, a, m].Not(), y[s, b, m], e])
                tree_terms.append(w * e)
            terms.extend(tree_terms)
            # a spanning tree cut into n parts loses >= n-1 edges; each edge's scaled weight is
            # >= floor(w0/delta) (merged parallel edges: floor(2 w0/delta) >= 2 floor(w0/delta))
            span = co.tree_spanning[s] * scaled(co.tree_edge_weight[s])
            if span > 0 and tree_terms:
                md.Add(sum(tree_terms) >= span * (sum(1 - z[s, m, 0] for m in range(M)) - 1))
        md.Minimize(const + sum(terms))

    hint: dict[Any, int] = {}
    if warm_start is not None:
        xs = _replica_counts(instance, warm_start)
        for s in range(S):
            for m in range(M):
                hint[x[s, m]] = int(xs[s, m])
                for v in range(co.upper[s][m] + 1):
                    hint[z[s, m, v]] = int(xs[s, m] == v)
        for (s, r, m), var in y.items():
            hint[var] = int(warm_start[s][r * co.t[s]] == m)
    return _CpModel(md, x, z, y, delta, hint)


def _assignment_from_counts(instance: GpuMappingInstance, x: np.ndarray,
                            tree_rows: dict[int, list[int]]) -> list[list[int]]:
    return _expand(instance, [tree_rows[s] if s in tree_rows else _contiguous_row(x[s])
                              for s in range(len(instance.job.stages))])


def _result(out: Any, assignment: list[list[int]] | None, warm: list[list[int]], bound: float | None,
            info: dict[str, Any], solver_name: str) -> Result:
    """The Result of an exact solve: the solver's incumbent, else (cut short before it found one)
    the Heavy-Edge warm start, with the proven bound either way."""
    if assignment is not None:
        solution: dict[str, Any] | None = {"assignment": assignment}
        info["incumbent"] = "solver"
    elif out.status == Status.TIME_LIMIT:
        solution = {"assignment": warm}
        info["incumbent"] = "heavy-edge warm start"
    else:
        solution = None
    if out.status == Status.INFEASIBLE and not info.get("packing"):  # every paper instance has a mapping: a bug
        return Result(Status.ERROR, message=f"{solver_name} reported the count model infeasible", info=info)
    if out.status == Status.INFEASIBLE:  # no server set holds every tensor-parallel replica whole: proven
        return Result(Status.INFEASIBLE, bound=None, message=f"{solver_name}: no mapping keeps every replica's "
                      "tensor slices on one server", info=info)
    return Result(out.status, solution=solution, bound=bound, message=out.solver_status, info=info)


def _offer_warm_start(warm: list[list[int]] | None) -> None:
    """A run cut by its time limit from now on returns the warm start (:mod:`optkit.deadline`)."""
    if warm is None:  # no start mapping known (a tensor-parallel job the packers could not place)
        return
    offer_incumbent(lambda message: Result(Status.TIME_LIMIT, solution={"assignment": warm},
                                           info={"incumbent": "heavy-edge warm start"}, message=message))


@bounded
def run_cpsat(instance: GpuMappingInstance, *, objective: str = "cut", time_limit: float | None = None,
              seed: int | None = None, workers: int | None = None, symmetry: bool = True, log: bool = False,
              model: str = "auto") -> Result:
    """Solve the stage-count model with CP-SAT (see the module docstring).

    ``model``: ``"auto"`` (default) solves the ``cut`` as the server-column programme of
    :mod:`.columns` (the same optimum, with the server symmetry removed and a Dantzig-Wolfe
    relaxation; ``info["model"] = "columns"``) when every stage's intra-stage cut is a known
    function of its counts (ring stages, and tree stages :func:`.columns.stage_tree_table` tabulates:
    k_s <= 8, or no server able to take more than two of the stage's replicas), falling back to the count model for the time left when more than
    :data:`.columns.DEFAULT_MAX_COLUMNS` columns lie within the gap (``info["columns"]`` then
    holds the programme's account); ``"counts"`` always solves the count model. ``info`` has
    CP-SAT's ``deterministic_time`` (summed over the programme's integer solves).

    ``bound`` is ``delta`` times CP-SAT's best bound: a proven lower bound on the true optimum
    (coefficients rounded down). ``info`` holds the solver status, the model size, ``delta`` and
    whether the incumbent is the solver's or the Heavy-Edge warm start.

    References
    ----------
    Luo et al., "Prediction-Assisted Online Distributed Deep Learning Workload Scheduling in GPU
    Clusters": Sec. III-B, eqs. (4)-(7) (``alpha``) and Sec. IV-B (the job graph's ``cut``),
    solved as the CP-SAT stage-count model of the module docstring.

    Notes
    -----
    Guarantee: status ``optimal`` is a proven optimum of ``objective`` (up to ``delta``, the
    rounding of the objective's coefficients); at the time limit the status is ``time_limit`` and
    ``bound`` a proven lower bound.

    Units: ``alpha`` in seconds per iteration, ``cut`` in bytes per iteration, ``bound`` in the
    objective's unit (rounded down by ``delta``); ``time_limit`` in seconds.

    Examples
    --------
    >>> from optkit.formulations.gpu_mapping import Cluster, GpuMappingInstance, PipelineJob, Stage, evaluate
    >>> job = PipelineJob((Stage(2, .1, .2, 0, 1e6, 2e7), Stage(2, .1, .2, 1e6, 0, 2e7)), "ring")
    >>> inst = GpuMappingInstance(Cluster(8, 1.25e9, 3e11), job, (2, 1, 1))
    >>> r = run_cpsat(inst, objective="alpha", time_limit=30, seed=0)
    >>> r.status.value, evaluate(inst, r.solution).objectives["alpha"]
    ('optimal', 0.4408)
    """
    from optkit.solvers.cpsat import solve_cp_model

    _check_objective(objective)
    if model not in ("auto", "counts"):
        raise InputError("model", f"must be one of auto, counts, got {model!r}")
    if instance.job.has_experts:  # MoE stages: the vertex model (exact_vertices.py)
        from .exact_vertices import solve_vertex_model

        return solve_vertex_model(instance, objective=objective, time_limit=time_limit, seed=seed, workers=workers,
                                symmetry=symmetry, log=log)
    start = time.perf_counter()
    if not instance.job.is_plain:
        impossible = _packing_impossible(coefficients(instance))
        if impossible:
            return Result(Status.INFEASIBLE, message=f"no mapping keeps every replica's tensor slices on one server: "
                          f"{impossible}", info={"model": "counts", "packing": True})
    warm, warm_value = _warm_start(instance, objective, seed)
    _offer_warm_start(warm)
    early = llm_bound(instance, objective)
    if warm is not None and early is not None and bound_proves(warm_value, early):
        return proven_by_bound(warm, early, {"model": "counts", "packing": True})
    column_info: dict[str, Any] = {}
    column_bound = 0.0
    if model == "auto" and objective == "cut" and instance.job.is_plain:
        from .columns import applies, assignment as column_assignment, column_problem, solve_columns
        from .columns import value_of_counts as column_value

        co = coefficients(instance)
        if applies(co):
            xs = stage_counts(instance.job, warm, len(instance.servers))
            # anytime record: the warm start, then the programme's steps (columns._record)
            add_solver_points([(time.perf_counter(), warm_value, None)])
            got = solve_columns(co, xs, time_limit=time_limit, seed=seed, workers=workers)
            column_info = dict(got.info)
            column_bound = got.bound or 0.0
            cp = column_problem(co)
            assignment = column_assignment(cp, got.counts)
            value = _objective_of(instance, assignment, objective)
            # the programme's value of its mapping must be evaluate's cut of it (module docstring
            # of columns.py); were it not, its proof would be of something else: count model instead
            agrees = math.isclose(value, column_value(cp, got.counts), rel_tol=1e-9, abs_tol=1e-6)
            column_info["agrees_with_evaluate"] = agrees
            if not agrees:
                column_bound = 0.0
            elif got.status != "too_many_columns" or (time_limit is not None
                                                      and time.perf_counter() - start >= time_limit):
                status = Status.OPTIMAL if got.status == "optimal" else Status.TIME_LIMIT
                info = {**column_info, "incumbent": "solver", "symmetry_breaking": "columns"}
                add_solver_points([(time.perf_counter(), value, column_bound)])  # the programme's end
                return Result(status, solution={"assignment": assignment}, bound=max(0.0, min(column_bound, value)),
                              message=str(column_info.get("solver_status", got.status)), info=info)
            # too many columns: the count model for the time left, from the better mapping
            if value < warm_value:
                warm, warm_value = _canonical_assignment(instance, assignment), value
                _offer_warm_start(warm)
    if time_limit is not None:
        time_limit = max(1e-3, time_limit - (time.perf_counter() - start))
    cm = build_cp_model(instance, objective, symmetry=symmetry, warm_start=warm, upper_bound=warm_value)
    out = solve_cp_model(cm.model, time_limit=time_limit, workers=workers, seed=seed, hint=cm.hint, log=log)
    proto = cm.model.Proto()
    info: dict[str, Any] = {
        "solver_status": out.solver_status, "solver_time_s": out.wall_time_s,
        **_model_size_info(len(proto.variables), len(proto.constraints)),
        "resolution": cm.delta, "symmetry_breaking": symmetry, "model": "counts",
        "deterministic_time": out.raw.deterministic_time,
    }
    if not instance.job.is_plain:
        info["packing"] = True  # tensor-parallel replicas: infeasibility is possible and proven
    if column_info:
        info["columns"] = column_info
    # both objectives are sums/maxima of nonnegative terms, so 0 is always a valid bound; the
    # column programme's bound (when it ran first) is valid too
    bound = max(0.0, cm.delta * out.bound, column_bound) if out.bound is not None else None
    if early is not None and (bound is None or early > bound) and out.status != Status.INFEASIBLE:
        bound, info["bound_from"] = early, "bounds.lower_bound"
    add_solver_points(out.trajectory, lambda v: cm.delta * v)  # rounded-down coefficients: within delta
    assignment: list[list[int]] | None = None
    if out.has_solution:
        solver = out.raw
        S, M = len(instance.job.stages), len(instance.servers)
        x = np.array([[solver.Value(cm.x[s, m]) for m in range(M)] for s in range(S)], dtype=np.int64)
        tree_rows: dict[int, list[int]] = {}
        for s in {s for (s, _, _) in cm.y}:
            tree_rows[s] = [next(m for m in range(M) if solver.Value(cm.y[s, r, m]))
                            for r in range(instance.job.stages[s].replicas)]
        assignment = _assignment_from_counts(instance, x, tree_rows)
    return _result(out, assignment, warm, bound, info, "CP-SAT")


# ============================================================================= MILP (Pyomo)
@dataclass
class _PyomoModel:
    model: Any
    scale: float
    tree_stages: tuple[int, ...]


def build_pyomo_model(instance: GpuMappingInstance, objective: str, *, symmetry: bool = True,
                      upper_bound: float | None = None) -> _PyomoModel:
    """The MILP stage-count model of the module docstring (objective in ms or MB)."""
    import pyomo.environ as pyo

    _check_objective(objective)
    co = coefficients(instance)
    S, M = co.n_stages, co.n_servers
    scale = _MILP_SCALE[objective]
    md = pyo.ConcreteModel(name=f"gpu_mapping_{objective}")
    zidx = [(s, m, v) for s in range(S) for m in range(M) for v in range(co.upper[s][m] + 1)]
    md.z = pyo.Var(zidx, domain=pyo.Binary)

    def xe(s: int, m: int) -> Any:
        check_deadline("building the MILP")  # xe is in nearly every row: a check per row
        return sum(v * md.z[s, m, v] for v in range(1, co.upper[s][m] + 1))

    md.one_hot = pyo.Constraint([(s, m) for s in range(S) for m in range(M)],
                                rule=lambda b, s, m: sum(md.z[s, m, v] for v in range(co.upper[s][m] + 1)) == 1)
    def trivial(expr: Any, rhs: int) -> Any:
        """A row without variables (a tensor-parallel stage no server can hold, a server no stage
        fits): Pyomo wants Infeasible / Skip instead of a Boolean. Never met by the paper's jobs."""
        if isinstance(expr, (int, float)):
            return pyo.Constraint.Skip if expr == rhs else pyo.Constraint.Infeasible
        return expr == rhs

    md.stage_sum = pyo.Constraint(range(S), rule=lambda b, s: trivial(sum(xe(s, m) for m in range(M)), co.k[s]))
    md.server_sum = pyo.Constraint(range(M), rule=lambda b, m: trivial(
        sum(xe(s, m) if co.t[s] == 1 else co.t[s] * xe(s, m) for s in range(S)), co.caps[m]))
    md.lex = pyo.ConstraintList()
    if symmetry:
        for cls in _server_classes(co.caps):
            wts = _lex_weights(co, cls, _MILP_LEX_LIMIT, 1)
            for m, m2 in zip(cls, cls[1:]):
                md.lex.add(sum(w * xe(s, m) for s, w in enumerate(wts)) >= sum(w * xe(s, m2) for s, w in enumerate(wts)))

    md.partial = pyo.ConstraintList()  # valid inequality: see "Strengthening"
    for m in range(M):
        if co.needs_partial[m] and _has_partial(co, m):
            md.partial.add(sum(md.z[s, m, v] for s in range(S)
                               for v in range(1, min(co.k[s] - 1, co.upper[s][m]) + 1)) >= 1)

    tree_stages: list[int] = []
    if objective == "alpha":
        ub = upper_bound * scale * (1 + 1e-7) + 1e-9 if upper_bound is not None else None
        md.alpha = pyo.Var(domain=pyo.NonNegativeReals, bounds=(0.0, ub))
        md.beta = pyo.ConstraintList()
        for s in range(S):
            check_deadline("building the MILP")
            for m in range(M):
                big_m = 0.0
                rhs = sum((co.base[s] + co.allreduce[s][v]) * scale * md.z[s, m, v]
                          for v in range(1, co.upper[s][m] + 1))
                if s > 0:
                    rhs = rhs + co.coef_prev[s] * scale * xe(s - 1, m)
                    big_m += max(0.0, co.coef_prev[s] * scale) * co.k[s - 1]
                if s < S - 1:
                    rhs = rhs + co.coef_next[s] * scale * xe(s + 1, m)
                    big_m += max(0.0, co.coef_next[s] * scale) * co.k[s + 1]
                if big_m > 0.0:
                    rhs = rhs - big_m * md.z[s, m, 0]
                md.beta.add(md.alpha >= rhs)
        md.obj = pyo.Objective(expr=md.alpha, sense=pyo.minimize)
    else:
        qidx = [(s, m, v) for s in range(1, S) if co.pair_weight[s] > 0 for m in range(M)
                for v in range(1, co.upper[s][m] + 1)]
        md.q = pyo.Var(qidx, domain=pyo.NonNegativeReals)
        md.q_cap = pyo.Constraint(qidx, rule=lambda b, s, m, v:
                                  md.q[s, m, v] <= min(co.k[s - 1], (co.caps[m] - co.t[s] * v) // co.t[s - 1])
                                  * md.z[s, m, v])
        pm = sorted({(s, m) for (s, m, _) in qidx})
        md.q_sum = pyo.Constraint(pm, rule=lambda b, s, m:
                                  sum(md.q[s, m, v] for v in range(1, co.upper[s][m] + 1)) <= xe(s - 1, m))
        expr: Any = 0.0
        for s in range(1, S):
            w = co.pair_weight[s] * scale
            if w <= 0.0:
                continue
            pairs = sum(v * md.q[s, m, v] for m in range(M) for v in range(1, co.upper[s][m] + 1))
            expr = expr + w * co.k[s - 1] * co.k[s] - w * pairs
        for s in range(S):
            W = co.ring_weight[s] * scale
            if W <= 0.0:
                continue
            n_used = sum(1 - md.z[s, m, 0] for m in range(M))
            single = sum(md.z[s, m, co.k[s]] for m in range(M) if co.upper[s][m] == co.k[s])
            expr = expr + W * (n_used - single)
        tree_stages = [s for s in range(S) if co.tree_edges[s]]
        yidx = [(s, r, m) for s in tree_stages for r in range(co.k[s]) for m in range(M)]
        eidx = [(s, a, b) for s in tree_stages for (a, b, _) in co.tree_edges[s]]
        md.y = pyo.Var(yidx, domain=pyo.Binary)
        md.e = pyo.Var(eidx, domain=pyo.NonNegativeReals, bounds=(0.0, 1.0))
        md.y_one = pyo.Constraint([(s, r) for s in tree_stages for r in range(co.k[s])],
                                  rule=lambda b, s, r: sum(md.y[s, r, m] for m in range(M)) == 1)
        md.y_count = pyo.Constraint([(s, m) for s in tree_stages for m in range(M)],
                                    rule=lambda b, s, m: sum(md.y[s, r, m] for r in range(co.k[s])) == xe(s, m))
        def e_cut(blk: Any, s: int, a: int, b: int, m: int) -> Any:
            check_deadline("building the MILP")
            return md.e[s, a, b] >= md.y[s, a, m] - md.y[s, b, m]

        md.e_cut = pyo.Constraint([(s, a, b, m) for (s, a, b) in eidx for m in range(M)], rule=e_cut)
        md.tree_lb = pyo.ConstraintList()
        for s in tree_stages:
            tree_cut = sum(w * scale * md.e[s, a, b] for a, b, w in co.tree_edges[s])
            expr = expr + tree_cut
            if co.tree_spanning[s] > 0:
                md.tree_lb.add(tree_cut >= co.tree_spanning[s] * co.tree_edge_weight[s] * scale
                               * (sum(1 - md.z[s, m, 0] for m in range(M)) - 1))
        if upper_bound is not None and not isinstance(expr, (int, float)):  # (a constant: nothing can be cut)
            md.cut_ub = pyo.Constraint(expr=expr <= upper_bound * scale * (1 + 1e-7) + 1e-9)
        md.obj = pyo.Objective(expr=expr, sense=pyo.minimize)
    return _PyomoModel(md, scale, tuple(tree_stages))


@bounded
def run_highs(instance: GpuMappingInstance, *, objective: str = "cut", time_limit: float | None = None,
              seed: int | None = None, solver: str = "highs", write: str | None = None, symmetry: bool = True,
              mip_rel_gap: float = 1e-9) -> Result:
    """Solve the stage-count MILP with HiGHS (or another Pyomo solver by name).

    ``bound`` is the solver's MIP dual bound converted back to seconds or bytes. ``write``
    writes the model (``.mps`` / ``.lp``) before solving.

    References
    ----------
    Luo et al., "Prediction-Assisted Online Distributed Deep Learning Workload Scheduling in GPU
    Clusters": the objectives of Sec. III-B, eqs. (4)-(7) and Sec. IV-B, solved as the
    stage-count MILP of the module docstring (the paper solves it with Gurobi, Table II).

    Notes
    -----
    Guarantee: status ``optimal`` is a proven optimum of ``objective`` (within ``mip_rel_gap``,
    1e-9 by default); at the time limit the status is ``time_limit`` and ``bound`` the solver's
    proven lower bound.

    Units: ``bound`` and the objective in seconds per iteration (``alpha``) or bytes per
    iteration (``cut``); ``time_limit`` in seconds; ``mip_rel_gap`` relative.

    Examples
    --------
    >>> from optkit.formulations.gpu_mapping import Cluster, GpuMappingInstance, PipelineJob, Stage, evaluate
    >>> job = PipelineJob((Stage(2, .1, .2, 0, 1e6, 2e7), Stage(2, .1, .2, 1e6, 0, 2e7)), "ring")
    >>> inst = GpuMappingInstance(Cluster(8, 1.25e9, 3e11), job, (2, 1, 1))
    >>> r = run_highs(inst, objective="cut", time_limit=30)
    >>> r.status.value, r.bound, evaluate(inst, r.solution).objectives["cut"]
    ('optimal', 44000000.0, 44000000.0)
    """
    import pyomo.environ as pyo

    from optkit.solvers.milp import solve_pyomo_model

    _check_objective(objective)
    if not instance.job.is_plain:
        impossible = _packing_impossible(coefficients(instance))
        if impossible:
            return Result(Status.INFEASIBLE, message=f"no mapping keeps every replica's tensor slices on one server: "
                          f"{impossible}", info={"solver": solver, "packing": True})
    warm, warm_value = _warm_start(instance, objective, seed)
    _offer_warm_start(warm)
    early = llm_bound(instance, objective)
    if warm is not None and early is not None and bound_proves(warm_value, early):
        return proven_by_bound(warm, early, {"solver": solver, "packing": True})
    pm = build_pyomo_model(instance, objective, symmetry=symmetry, upper_bound=warm_value)
    out = solve_pyomo_model(pm.model, solver=solver, time_limit=time_limit, seed=seed,
                            mip_rel_gap=mip_rel_gap, write=write)
    md = pm.model
    info: dict[str, Any] = {
        "solver": solver, "solver_status": out.solver_status, "solver_time_s": out.wall_time_s,
        **_model_size_info(md.nvariables(), md.nconstraints()),
        "objective_unit": "ms" if objective == "alpha" else "MB", "symmetry_breaking": symmetry,
    }
    if not instance.job.is_plain:
        info["packing"] = True  # tensor-parallel replicas: infeasibility is possible and proven
    bound = max(0.0, out.bound / pm.scale) if out.bound is not None else None
    if early is not None and (bound is None or early > bound) and out.status != Status.INFEASIBLE:
        bound, info["bound_from"] = early, "bounds.lower_bound"
    add_solver_points(out.trajectory, lambda v: v / pm.scale)
    S, M = len(instance.job.stages), len(instance.servers)
    co_upper = coefficients(instance).upper
    assignment: list[list[int]] | None = None
    if out.has_solution:
        x = np.array([[sum(v * round(pyo.value(md.z[s, m, v])) for v in range(1, co_upper[s][m] + 1))
                       for m in range(M)] for s in range(S)], dtype=np.int64)
        tree_rows = {s: [max(range(M), key=lambda m: pyo.value(md.y[s, r, m]))
                         for r in range(instance.job.stages[s].replicas)] for s in pm.tree_stages}
        assignment = _assignment_from_counts(instance, x, tree_rows)
    return _result(out, assignment, warm, bound, info, solver)


# ============================================================================= brute force
def _compositions(total: int, limits: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """All tuples t with 0 <= t[i] <= limits[i] and sum t = total."""
    n = len(limits)
    if n == 0:
        if total == 0:
            yield ()
        return
    room = sum(limits[1:])
    for v in range(max(0, total - room), min(total, limits[0]) + 1):
        for rest in _compositions(total - v, limits[1:]):
            yield (v,) + rest


class _TooMany(Exception):
    pass


def count_tables(k: Sequence[int], caps: Sequence[int], cap: int | None = None) -> int:
    """Number of count matrices (row sums ``k``, column sums ``caps``).

    Dynamic programming over the stages; the number of completions from a stage depends only on
    the multiset of remaining capacities, which is the memo key. Every partial table completes
    (the last row is forced), so with ``cap`` the count stops as soon as it exceeds ``cap`` and
    returns ``cap + 1``: the work is then O(cap) even for huge instances."""
    S = len(k)
    memo: dict[tuple[int, tuple[int, ...]], int] = {}

    def rec(s: int, rem: tuple[int, ...]) -> int:
        if s == S - 1:
            return 1
        key = (s, rem)
        if key not in memo:
            total = 0
            for row in _compositions(k[s], rem):
                total += rec(s + 1, tuple(sorted(r - t for r, t in zip(rem, row))))
                if cap is not None and total > cap:
                    raise _TooMany
            memo[key] = total
        return memo[key]

    if sum(k) != sum(caps):
        return 0
    try:
        return rec(0, tuple(sorted(caps)))
    except _TooMany:
        return int(cap) + 1  # type: ignore[arg-type]


def _tables(k: Sequence[int], caps: Sequence[int]) -> Iterator[np.ndarray]:
    S = len(k)
    rows: list[tuple[int, ...]] = []

    def rec(s: int, rem: tuple[int, ...]) -> Iterator[np.ndarray]:
        if s == S - 1:
            if sum(rem) == k[s]:
                yield np.array(rows + [rem], dtype=np.int64)
            return
        for row in _compositions(k[s], rem):
            rows.append(row)
            yield from rec(s + 1, tuple(r - t for r, t in zip(rem, row)))
            rows.pop()

    yield from rec(0, tuple(caps))


def _placements(instance: GpuMappingInstance, limit: int | None) -> Iterator[np.ndarray]:
    """Every server-per-vertex vector that keeps each placement unit whole and fills every server
    exactly, up to relabelling servers of equal free GPUs (an empty server is opened only when no
    lower-indexed empty server of its size is left: the objectives do not see server labels).
    With ``limit``, raises :class:`_TooMany` after ``limit`` vectors."""
    units = placement_units(instance.job)
    caps = list(instance.servers)
    rem = list(caps)
    sv = np.zeros(instance.job.n_replicas, dtype=np.int64)
    count = 0

    def rec(p: int) -> Iterator[np.ndarray]:
        nonlocal count
        if p == len(units):
            count += 1
            if limit is not None and count > limit:
                raise _TooMany
            yield sv
            return
        size = len(units[p])
        opened: set[int] = set()
        for m in range(len(caps)):
            if rem[m] < size:
                continue
            if rem[m] == caps[m]:  # an empty server: the first empty one of its size stands for all
                if caps[m] in opened:
                    continue
                opened.add(caps[m])
            rem[m] -= size
            sv[units[p]] = m
            yield from rec(p + 1)
            rem[m] += size

    yield from rec(0)


def _brute_force_units(instance: GpuMappingInstance, objective: str, expired: Callable[[], bool] | None
                       ) -> tuple[float, list[list[int]] | None, bool]:
    """Brute force for jobs with tensor-parallel / MoE stages: every placement of
    :func:`_placements`, measured by the model's own functions (``cut_weight``,
    :func:`.model.vertex_times` through ``alpha_of_assignment``): the referee, independent of the
    count model and of the vertex model. ``None`` when no placement exists (infeasible)."""
    job = instance.job
    best_val, best_sv, complete = math.inf, None, True
    for i, sv in enumerate(_placements(instance, None)):
        if i % 64 == 0:
            if expired is None:
                check_deadline("enumerating placements")
            elif best_sv is not None and expired():
                complete = False
                break
        if objective == "alpha":
            from .model import vertex_times

            val = float(vertex_times(job, instance.cluster, sv).max())
        else:
            val = cut_weight(job, sv)
        if val < best_val:
            best_val, best_sv = val, sv.copy()
    if best_sv is None:
        return math.inf, None, complete
    off = job.offsets
    return best_val, [best_sv[off[s]:off[s + 1]].tolist() for s in range(len(job.stages))], complete


def _check_brute_force_size(instance: GpuMappingInstance, objective: str) -> int:
    if not instance.job.is_plain:
        try:
            return sum(1 for _ in _placements(instance, BRUTE_FORCE_MAX_PLACEMENTS))
        except _TooMany:
            raise InputError("instance", f"is too large for brute-force: more than {BRUTE_FORCE_MAX_PLACEMENTS} "
                             "placements of its replicas, slices and expert groups; use cpsat") from None
    k = [s.replicas for s in instance.job.stages]
    caps = list(instance.servers)
    n_tables = count_tables(k, caps, cap=BRUTE_FORCE_MAX_TABLES)
    if n_tables > BRUTE_FORCE_MAX_TABLES:
        raise InputError("instance", f"is too large for brute-force: more than {BRUTE_FORCE_MAX_TABLES} "
                         "count matrices; use cpsat or highs")
    if objective == "cut":
        for s, ks in enumerate(k):
            worst = max(n_arrangements([c for c in row if c])
                        for row in _compositions(ks, [min(ks, c) for c in caps]))
            if worst > BRUTE_FORCE_MAX_ARRANGEMENTS:
                raise InputError("instance", f"is too large for brute-force: stage {s} has up to {worst} "
                                 f"arrangements per count matrix (limit {BRUTE_FORCE_MAX_ARRANGEMENTS}); "
                                 "use cpsat or highs")
    return n_tables


def _brute_force(instance: GpuMappingInstance, objective: str, expired: Callable[[], bool] | None
                 ) -> tuple[float, list[list[int]], bool]:
    job = instance.job
    k = [s.replicas for s in job.stages]
    u, v, w = job.edges
    stage_of = job.vertex_stage
    off = job.offsets
    intra: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for s in range(len(k)):
        sel = (stage_of[u] == s) & (stage_of[v] == s)
        intra.append((u[sel] - off[s], v[sel] - off[s], w[sel]))
    best_blocks: dict[tuple[int, tuple[int, ...]], list[int]] = {}

    def best_arrangement(s: int, counts: tuple[int, ...]) -> list[int]:
        """The stage's cheapest arrangement (intra-stage edges only) with these counts."""
        used = sorted((m for m, c in enumerate(counts) if c), key=lambda m: (-counts[m], m))
        sizes = tuple(counts[m] for m in used)
        key = (s, sizes)
        if key not in best_blocks:
            a, b, ww = intra[s]
            arr = np.array(list(arrangements(sizes)), dtype=np.int64)
            if len(ww):
                cost = (arr[:, a] != arr[:, b]).astype(float) @ ww
                best_blocks[key] = arr[int(np.argmin(cost))].tolist()
            else:
                best_blocks[key] = arr[0].tolist()
        return [used[j] for j in best_blocks[key]]

    best_val, best_assign, complete = math.inf, None, True
    for i, x in enumerate(_tables(k, instance.servers)):
        if i % 64 == 0:
            if expired is None:
                check_deadline("enumerating count matrices")  # an enclosing solve's deadline, if any
            elif best_assign is not None and expired():
                complete = False
                break
        if objective == "alpha":
            val = alpha_from_counts(job, instance.cluster, x)
            if val < best_val:
                best_val, best_assign = val, [_contiguous_row(x[s]) for s in range(len(k))]
        else:
            assignment = [best_arrangement(s, tuple(int(c) for c in x[s])) for s in range(len(k))]
            val = cut_weight(job, vertex_servers(job, assignment))
            if val < best_val:
                best_val, best_assign = val, assignment
    assert best_assign is not None
    return best_val, best_assign, complete


def brute_force(instance: GpuMappingInstance, objective: str) -> tuple[float, list[list[int]]]:
    """The optimum of ``objective`` and one optimal assignment, by enumeration (module docstring).

    Raises :class:`InputError` (field ``instance``) beyond :data:`BRUTE_FORCE_MAX_TABLES` count
    matrices or :data:`BRUTE_FORCE_MAX_ARRANGEMENTS` arrangements of one stage.

    References
    ----------
    Luo et al., "Prediction-Assisted Online Distributed Deep Learning Workload Scheduling in GPU
    Clusters": the optimum of Sec. III-B's ``alpha`` (eq. 7) or Sec. IV-B's ``cut`` by
    enumeration; Table II's gaps of Heavy-Edge are measured against this optimum.

    Notes
    -----
    Guarantee: the optimum (every count matrix, and every arrangement inside a stage where the
    objective depends on it, is enumerated); independent of both solver models, so the three
    agreeing is a check of each.

    Units: the value is seconds per iteration (``alpha``) or bytes per iteration (``cut``).

    Examples
    --------
    >>> from optkit.formulations.gpu_mapping import Cluster, GpuMappingInstance, PipelineJob, Stage, evaluate
    >>> job = PipelineJob((Stage(2, .1, .2, 0, 1e6, 2e7), Stage(2, .1, .2, 1e6, 0, 2e7)), "ring")
    >>> inst = GpuMappingInstance(Cluster(8, 1.25e9, 3e11), job, (2, 1, 1))
    >>> brute_force(inst, "cut")
    (44000000.0, [[1, 2], [0, 0]])
    """
    _check_objective(objective)
    _check_brute_force_size(instance, objective)
    if not instance.job.is_plain:
        value, found, _ = _brute_force_units(instance, objective, None)
        if found is None:
            raise InputError("instance", "has no feasible mapping: no placement keeps every replica's tensor slices "
                             "on one server")
        return value, found
    value, assignment, _ = _brute_force(instance, objective, None)
    return value, assignment


@bounded(teardown=0.0)  # an enumeration: nothing built to free
def run_brute_force(instance: GpuMappingInstance, *, objective: str = "cut", time_limit: float | None = None,
                    seed: int | None = None) -> Result:
    """Brute force as an algorithm: ``optimal`` with ``bound`` = the optimum, or ``time_limit``
    with the best mapping seen (no bound) when the time limit stops the enumeration.

    References
    ----------
    Luo et al., "Prediction-Assisted Online Distributed Deep Learning Workload Scheduling in GPU
    Clusters", Sec. III-B / IV-B: :func:`brute_force` behind the algorithm table's entry
    ``brute-force``.

    Notes
    -----
    Guarantee: status ``optimal`` is the optimum (:func:`brute_force`); a run stopped by the time
    limit proves nothing.

    Units: the optimum (``bound``) in seconds per iteration (``alpha``) or bytes per iteration
    (``cut``); ``time_limit`` in seconds.

    Examples
    --------
    >>> from optkit.formulations.gpu_mapping import Cluster, GpuMappingInstance, PipelineJob, Stage, evaluate
    >>> job = PipelineJob((Stage(2, .1, .2, 0, 1e6, 2e7), Stage(2, .1, .2, 1e6, 0, 2e7)), "ring")
    >>> inst = GpuMappingInstance(Cluster(8, 1.25e9, 3e11), job, (2, 1, 1))
    >>> r = run_brute_force(inst, objective="alpha")
    >>> r.status.value, r.bound
    ('optimal', 0.4408)
    """
    _check_objective(objective)
    n_tables = _check_brute_force_size(instance, objective)
    limit = current_deadline()  # the call's (optkit.deadline): time_limit from its start
    if not instance.job.is_plain:
        value, found, complete = _brute_force_units(instance, objective, None if limit is None else limit.expired)
        info = {"placements": n_tables}
        if found is None:
            return Result(Status.INFEASIBLE, info=info, message="no placement keeps every replica's tensor slices on "
                          "one server (all enumerated)")
        if complete:
            return Result(Status.OPTIMAL, solution={"assignment": found}, bound=value, info=info)
        return Result(Status.TIME_LIMIT, solution={"assignment": found}, info=info | {"cut_while": "enumerating"},
                      message="the time limit stopped the enumeration")
    value, assignment, complete = _brute_force(instance, objective, None if limit is None else limit.expired)
    info = {"count_matrices": n_tables}
    if complete:
        return Result(Status.OPTIMAL, solution={"assignment": assignment}, bound=value, info=info)
    return Result(Status.TIME_LIMIT, solution={"assignment": assignment}, info=info | {"cut_while": "enumerating"},
                  message="the time limit stopped the enumeration")


def naive_enumeration(instance: GpuMappingInstance, objective: str) -> tuple[float, list[list[int]]]:
    """Every replica-to-server assignment that fills each server exactly (no count model, no
    arrangement argument): the test oracle for :func:`brute_force`. At most
    :data:`NAIVE_MAX_REPLICAS` replicas."""
    _check_objective(objective)
    job = instance.job
    n = job.n_replicas
    if n > NAIVE_MAX_REPLICAS:
        raise InputError("instance", f"is too large for the naive enumeration: {n} replicas "
                         f"(limit {NAIVE_MAX_REPLICAS})")
    caps = list(instance.servers)
    best_val, best = math.inf, None
    left = list(caps)
    seq: list[int] = []

    def rec() -> None:
        nonlocal best_val, best
        if len(seq) == n:
            flat = np.asarray(seq)
            if not job.is_plain:
                from .model import colocation_violations, vertex_times

                if colocation_violations(job, flat):
                    return
                val = float(vertex_times(job, instance.cluster, flat).max()) if objective == "alpha" \
                    else cut_weight(job, flat)
                if val < best_val:
                    best_val, best = val, list(seq)
                return
            if objective == "alpha":
                x = np.zeros((len(job.stages), len(caps)), dtype=np.int64)
                np.add.at(x, (job.vertex_stage, flat), 1)
                val = alpha_from_counts(job, instance.cluster, x)
            else:
                val = cut_weight(job, flat)
            if val < best_val:
                best_val, best = val, list(seq)
            return
        for m in range(len(caps)):
            if left[m]:
                left[m] -= 1
                seq.append(m)
                rec()
                seq.pop()
                left[m] += 1

    rec()
    assert best is not None
    off = job.offsets
    return best_val, [best[off[s]:off[s + 1]] for s in range(len(job.stages))]

