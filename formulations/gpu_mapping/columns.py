"""The cut objective as a server-column (pattern) programme: an exact reformulation of the count model.

An equivalent reformulation of the stage-count model of :mod:`.exact` for the ``cut`` objective,
used by ``cpsat`` when every stage's intra-stage cut is known as a function of its counts: ring
stages, stages of one replica, and tree stages whose partition costs are tabulated
(:func:`stage_tree_table`: by enumeration for k_s <= 8 always, by a matching per realisable
partition when no server can take more than two of the stage's replicas, and k_s = 16 and 32
from tables computed once, by CP-SAT and by an exact dynamic programme along the ranks,
:mod:`.tree_tables`). It removes the server symmetry and has
the linear relaxation of a Dantzig-Wolfe decomposition by server, which proves the ``large``
suite's cases the count model left open.

Why the cut separates by server
-------------------------------
With counts ``x[s, m]`` (replicas of stage s on server m), :mod:`.exact` shows (module docstring,
"cut") that the inter-stage edges cut are ``w_s (k_{s-1} k_s - sum_m x[s-1,m] x[s,m])`` and that
the least ring cut of stage s over the arrangements with those counts is
``W_s (n_s - [n_s = 1])``; ``n_s - [n_s = 1]`` is the number of servers that hold *part* of the
stage (``0 < x[s,m] < k_s``: n_s of them if n_s >= 2, none if n_s = 1). A tree stage's
arrangement is free as well (it changes no other edge's cut), so its least tree cut is
``w0_s T_k(P_s)``: T_k(P) the fewest double-binary-tree edges (an edge of both trees twice) between
blocks over the partitions of the k replicas into blocks of the sizes P, P_s the multiset of the
stage's nonzero counts, ``w0_s = (k_s-1) h_s / k_s``. :func:`tree_table` tabulates T_k and a best
arrangement per P by enumeration; when every server's share of the stage is at most two (parts of
P at most 2), :func:`tree_table_by_matching` gets T_k(P) as ``2(k-1)`` minus the heaviest
matching of at most (parts of two) edges of the merged trees, for the partitions the servers can
realise only (a table of those suffices: every count matrix has one of them). Write ``w0 T_k(P) = sum_{v in P} tau_s(v) + D_s(P)`` with
``D_s >= 0`` (tau from a small LP over the table, :func:`_separable_part`). Then

    cut(x) = C + sum_m F(x[:, m]) + sum_{tree s} D_s(P_s),   C = sum_s w_s k_{s-1} k_s,
    F(col) = sum_s (W_s [0 < col_s < k_s] + tau_s(col_s)) - sum_{s>=1} w_s col_{s-1} col_s:

a constant, one term per server depending on its column alone, and a remainder per tree stage.
Servers with the same free GPUs are interchangeable, so a count matrix is, up to relabelling
those servers, a multiset of columns: ``n[c, p]`` servers of size c take column p (``sum_s p_s =
c``, ``0 <= p_s <= min(k_s, c)``), ``sum_p n[c,p] = N_c`` (the servers of size c),
``sum_{c,p} p_s n[c,p] = k_s``, minimising ``C + sum F(p) n[c,p] + sum_s D_s``. Solutions and count
matrices correspond one to one up to the relabelling, which changes no cut: this programme *is*
the count model with the server symmetry removed. The remainder is exact in the integer
programme: one literal per partition P of a tree stage (exactly one true), the number of servers
holding v replicas of s (``sum_p [p_s = v] n[c,p]``) equal to the number of parts v of the chosen P,
and ``D_s = sum_P D_s(P) b_P``. The mapping returned puts a ring stage in contiguous arcs and a
tree stage in its partition's tabulated arrangement; its cut, by :func:`.model.evaluate`, is the
programme's value (``test_gpu_mapping_columns`` checks the optimum against the count model on
the small and medium suites and against the brute force).

Split rows (valid inequalities)
-------------------------------
A stage is either whole on one server or on at least two: ``sum_{c,p} g_s(p_s) n[c,p] >= 2`` with
``g_s(v) = 2`` for v = k_s, 1 for 0 < v < k_s, 0 for v = 0. Every mapping satisfies it, and it
cuts the relaxation's fractional covers of a stage by a part of one server (which would pay the
ring term of one partial server instead of two).

Partition rows (a decomposition by stage)
-----------------------------------------
Every mapping gives each stage s with k_s >= 2 a partition P_s of k_s: the multiset of its
nonzero counts (parts at most ``top_s = min(k_s, largest server)``). With one binary ``b[s,P]``
per partition (exactly one true per stage) the rows

    sum_{c,p} [p_s = v] n[c,p] = sum_P mult_v(P) b[s,P],   v = 1..top_s,

hold for every mapping (both sides count the servers holding v replicas of s), so adding them
and the b columns to the linear relaxation keeps it a relaxation and can only raise it. A tree
stage's remainder ``D_s(P)`` is the cost of its column b[s,P] (0 for other stages), so the LP
now sees it. The rows force the pieces a stage is cut into to form *one* partition of k_s; the
server-column LP alone mixed pieces no partition has (the 32 x 8 ring job of the ``large`` suite:
a stage covered by 0.8 of a 7-piece and 1.2 of a 2-piece, no 1-piece, which no (7, 1) partition
gives), and its bound rose from 1039.9e9 to 1068.4e9 (the optimum: 1077.8e9); on the k = 16 tree
job from 62.48e9 to 72.578e9 (optimum 72.579e9), and on the small suite to the optimum in every case.

Which columns are needed (exact pricing, then enumeration)
----------------------------------------------------------
For multipliers ``pi`` (stage rows, free), ``sigma >= 0`` (split rows) and ``lam`` (partition rows,
free; ``lam(p) = sum_s lam[s, p_s]`` with ``lam[s, 0] = 0``, ``lam_s(P) = sum_{v in P} lam[s, v]``)
let ``r_c = min_p (F(p) - pi.p - sigma.g(p) - lam(p))`` over the columns of size c and
``e_s = min_P (D_s(P) + lam_s(P))`` over the partitions of stage s. For every mapping (n, b), the
rows being met with equality and ``sum g(p) n >= 2``, sigma >= 0,

    cut = C + sum F(p) n + sum_s D_s(P_s)
        = C + pi.k + sum_{c,p} (F(p) - pi.p - lam(p)) n[c,p] + sum_s (D_s(P_s) + lam_s(P_s))
       >= LB = C + pi.k + 2 sum_s sigma_s + sum_c N_c r_c + sum_s e_s

(add ``pi.(k - sum p n) = 0`` and ``sum_s sum_v lam[s,v] (sum_P mult_v(P) b - sum [p_s = v] n) = 0``;
subtract ``sigma.(sum g(p) n - 2) >= 0``; every server's term is at least its r_c, every stage's
at least its e_s). And a column p used by a mapping of cut <= UB has reduced cost
``F(p) - pi.p - sigma.g(p) - lam(p) - r_c <= UB - LB``, a partition ``D_s(P) + lam_s(P) - e_s <= UB - LB``
(every other term is at least its least). So **every mapping better than UB uses only columns
and partitions whose reduced cost is at most UB - LB**, for *any* pi, sigma >= 0 and lam; LB is a
proven lower bound. Good multipliers are the duals of the linear relaxation, found by column generation
(Dantzig & Wolfe 1960, Gilmore & Gomory 1961). The pricing problem is a chain (F couples only
consecutive stages; lam is a term per (stage, count) like the ring's): a dynamic programme over
the stages with state (count of the last stage, GPUs used), exact; the enumeration is a
depth-first search over the stages pruned by the same programme run backwards (the least
completion of a partial column), so it lists exactly the columns within a threshold t. The
partitions: a tree stage's table is scanned; for another stage (D = 0) the least ``lam_s(P)``
over the partitions of k_s into parts of at most top_s is an unbounded knapsack over the part
sizes (:func:`_partition_bounds`, exact), and the listing a depth-first search over parts in
non-increasing order pruned by it (:func:`stage_partitions`).

Steps: column generation (server and partition columns) from the Heavy-Edge mapping's to the LP
optimum (LB); the integer programme over the generated columns (a tree stage's partition literals:
the LP's partition columns and the incumbent's only, a heuristic) gives a mapping (UB; when UB - LB
is within the models' 1e-9 resolution it is optimal); then for t = (UB - LB)/16, 4 times that,
..., up to UB - LB: list the columns and partitions within t, and solve the integer programme
over them (:func:`_solve_integer`: the partition literals and rows above for every tree stage
and every stage with at most :data:`PARTITION_LITERALS` partitions listed, the objective the cut
rewritten by the rows with coefficients ``floor(. / delta) >= 0``, the constant added back, so
delta times the integer programme's bound plus the constant is a lower bound, as in :mod:`.exact`).
When that solve proves its optimum and ``UB - LB <= t`` (UB updated by it), every better mapping
would use listed columns and partitions only: UB is the optimum. When the columns within t
number more than ``max_columns``, the caller falls back to the count model.

The integer solves run on HiGHS' branch and cut (:data:`INTEGER_SOLVER`; ``scipy.optimize.milp``,
relative gap 0, the objective in integer units of delta so that its absolute gap tolerance is
below one unit; its proof rests on floating-point LPs, exact up to their feasibility tolerances
of about 1e-7, as the ``highs`` solver's does; a solution that misses a row is discarded) or on
CP-SAT (exact integer arithmetic): the same integer programme, and tests check that both prove
the same optima. HiGHS is the default because it closes the ring job's last half piece at its root
(0.2 s, one node) where CP-SAT's search, on the same 1,802 columns and 259 partition literals, did
not within 20 s with two workers (with one worker: 4.5-5.1 deterministic seconds for seeds 0 and
1, not within 15 s for seed 2).

References
----------
* G. B. Dantzig, P. Wolfe, *Decomposition principle for linear programs*, Operations Research 8(1), 1960.
* P. C. Gilmore, R. E. Gomory, *A linear programming approach to the cutting-stock problem*,
  Operations Research 9(6), 1961.
* Luo, Liu, Lee, Shroff, *Prediction-Assisted Online Distributed Deep Learning Workload
  Scheduling in GPU Clusters*, Sec. IV-B (the job graph whose cut this is).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from optkit.deadline import check as check_deadline, solver_limit

from .arrangements import arrangements, n_arrangements, partitions
from .model import double_binary_tree_edges

__all__ = ["ColumnProblem", "applies", "assignment", "column_problem", "solve_columns", "stage_tree_table",
           "tree_table", "tree_table_by_matching",
           "value_of_counts", "DEFAULT_MAX_COLUMNS", "TREE_TABLE_MAX_ARRANGEMENTS"]

DEFAULT_MAX_COLUMNS = 200_000
_WORK = {"deterministic_time": 0.0, "highs_seconds": 0.0}  # CP-SAT's deterministic time, HiGHS' seconds: the integer solves of one call
_RESOLUTION_BITS = 30


TREE_TABLE_MAX_ARRANGEMENTS = 300_000
"""A tree stage joins the column programme when the arrangements of all its partitions (parts at
most the largest server) number at most this many (k_s <= 8 always does); else the count model runs."""


@lru_cache(maxsize=64)
def tree_table(k: int, largest: int) -> dict[tuple[int, ...], tuple[int, tuple[int, ...]]] | None:
    """For every partition P of a tree stage's k replicas into blocks of at most ``largest``: the
    least number of double-binary-tree edges (an edge of both trees counted twice) between
    different blocks, and an arrangement attaining it (block index per replica, blocks numbered
    in P's order). By enumeration of the arrangements (:func:`.arrangements.arrangements`); None when
    they number more than :data:`TREE_TABLE_MAX_ARRANGEMENTS` in all."""
    parts = partitions(k, largest)
    if sum(n_arrangements(q) for q in parts) > TREE_TABLE_MAX_ARRANGEMENTS:
        return None
    mult: dict[tuple[int, int], int] = {}
    for a, b in double_binary_tree_edges(k):
        key = (min(a, b), max(a, b))
        mult[key] = mult.get(key, 0) + 1
    ea = np.array([a for a, _ in mult], dtype=np.int64)
    eb = np.array([b for _, b in mult], dtype=np.int64)
    ew = np.array(list(mult.values()), dtype=np.int64)
    out: dict[tuple[int, ...], tuple[int, tuple[int, ...]]] = {}
    for q in parts:
        arr = np.array(list(arrangements(q)), dtype=np.int64)
        cost = (arr[:, ea] != arr[:, eb]).astype(np.int64) @ ew
        i = int(np.argmin(cost))
        out[q] = (int(cost[i]), tuple(int(v) for v in arr[i]))
    return out


PARTITION_LITERALS = 5_000
"""A stage other than a tree stage gets partition literals in the integer solves when at most this
many of its partitions lie within the threshold (else its partition rows stay in the bound only)."""


MATCHING_TIME_LIMIT = 5.0
"""Seconds of CP-SAT per partition for :func:`tree_table_by_matching` (a precomputation: over it,
the stage is not tabulated and the count model runs)."""
MATCHING_MAX_PARTITIONS = 64
"""At most this many realisable partitions are solved by :func:`tree_table_by_matching`."""


@lru_cache(maxsize=64)
def tree_table_by_matching(k: int, caps: tuple[int, ...]) -> dict[tuple[int, ...], tuple[int, tuple[int, ...]]] | None:
    """:func:`tree_table`'s entries for a tree stage of k replicas on servers whose largest share
    of the stage is at most 2 (``min(k, max(caps)) <= 2``), for the partitions the servers can
    realise only, by a small exact solve per partition instead of enumeration.

    A partition is ``(2,)*a + (1,)*b`` with ``2a + b = k``; the servers (free GPUs ``caps``) realise
    it only if ``a`` of them take two replicas and ``a + b`` of them take some (``a <=`` the servers
    with >= 2 free GPUs, ``a + b <=`` all servers): every count matrix of the stage has one of
    these partitions, so the table covers every mapping. A block of two keeps inside exactly the
    edge units between its two replicas (0, 1, or 2 when the edge is in both trees), a block of one
    none, so the least cut is ``2(k-1)`` minus the heaviest matching of at most ``a`` edges of the
    merged double binary tree (the remaining blocks of two pair unmatched replicas, which keeps
    no more inside). CP-SAT solves that matching exactly (one Boolean per merged edge, each replica
    in at most one); None if a solve is not proven within :data:`MATCHING_TIME_LIMIT` s or more
    than :data:`MATCHING_MAX_PARTITIONS` partitions are realisable. The arrangement: the matched
    pairs are blocks 0.., the other blocks of two pair the unmatched replicas in rank order,
    the singletons last (blocks in the partition's order, as :func:`tree_table`)."""
    from ortools.sat.python import cp_model

    from .tree_tables import merged_tree_edges

    if not caps or min(k, max(caps)) > 2:
        return None
    two = sum(1 for c in caps if c >= 2)
    sizes = [a for a in range(k // 2 + 1) if a <= two and k - a <= len(caps)]   # a + b = k - a servers
    if len(sizes) > MATCHING_MAX_PARTITIONS:
        return None
    mult = merged_tree_edges(k)
    out: dict[tuple[int, ...], tuple[int, tuple[int, ...]]] = {}
    for a in sizes:
        md = cp_model.CpModel()
        e = {key: md.NewBoolVar(f"e{key}") for key in mult}
        touching: dict[int, list[Any]] = {}
        for (x, y), var in e.items():
            touching.setdefault(x, []).append(var)
            touching.setdefault(y, []).append(var)
        for lits in touching.values():
            md.AddAtMostOne(lits)
        md.Add(sum(e.values()) <= a)
        md.Maximize(sum(mult[key] * var for key, var in e.items()))
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = 0
        solver.parameters.max_time_in_seconds = MATCHING_TIME_LIMIT
        if solver.Solve(md) != cp_model.OPTIMAL:
            return None
        pairs = sorted(key for key, var in e.items() if solver.Value(var))
        block = [-1] * k
        for j, (x, y) in enumerate(pairs):
            block[x] = block[y] = j
        rest = [r for r in range(k) if block[r] < 0]
        j = len(pairs)
        for i in range(0, 2 * (a - len(pairs)), 2):
            block[rest[i]] = block[rest[i + 1]] = j
            j += 1
        for r in rest[2 * (a - len(pairs)):]:
            block[r] = j
            j += 1
        kept = sum(w for (x, y), w in mult.items() if block[x] == block[y])
        assert kept == round(solver.ObjectiveValue())
        out[(2,) * a + (1,) * (k - 2 * a)] = (2 * (k - 1) - kept, tuple(block))
    return out


def stage_tree_table(k: int, caps: Sequence[int]) -> dict[tuple[int, ...], tuple[int, tuple[int, ...]]] | None:
    """The partition table of a tree stage of k replicas on servers with ``caps`` free GPUs:
    :func:`tree_table` (every partition, by enumeration) when it applies, else
    :func:`tree_table_by_matching` (the realisable partitions, when no server takes more than two
    replicas), else a shipped table (:data:`.tree_tables.TABLES`, k = 16 and k = 32 with parts up
    to 8: its partitions with parts up to ``largest``), else None (the count model runs)."""
    from .tree_tables import TABLES

    largest = min(k, max(caps))
    table = tree_table(k, largest)
    if table is None and largest <= 2:
        table = tree_table_by_matching(k, tuple(sorted(caps, reverse=True)))
    if table is None:
        shipped = next((t for (kk, top), t in sorted(TABLES.items()) if kk == k and top >= largest), None)
        if shipped is not None:
            table = {q: v for q, v in shipped.items() if q[0] <= largest}
    return table


def _separable_part(table: dict[tuple[int, ...], tuple[int, tuple[int, ...]]], k: int, largest: int) -> np.ndarray:
    """tau[v], v = 0..largest, with sum_{v in P} tau[v] <= T(P) for every partition P (an LP
    maximising the sum over all P): the separable part of the tree cost the columns carry.
    Cached by the table's values (an LP over the 3,319 partitions of a k = 32 stage is ~0.08 s)."""
    return _separable_part_of(k, largest, tuple((q, table[q][0]) for q in table)).copy()


@lru_cache(maxsize=64)
def _separable_part_of(k: int, largest: int, entries: tuple[tuple[tuple[int, ...], int], ...]) -> np.ndarray:
    from scipy.optimize import linprog

    parts = [q for q, _ in entries]
    a = np.zeros((len(parts), largest))
    for i, q in enumerate(parts):
        for v in q:
            a[i, v - 1] += 1.0
    cost = np.array([c for _, c in entries], dtype=float)
    # a table of some partitions only (tree_table_by_matching) leaves the LP unbounded or its
    # optimum a ray: bounded by the largest cut, 2(k-1) (every partition's tabulated otherwise)
    full = len(parts) == len(partitions(k, largest))
    bounds = (None, None) if full else (-2.0 * k, 2.0 * k)
    res = linprog(-a.sum(axis=0), A_ub=a, b_ub=cost, bounds=bounds, method="highs")
    tau = np.zeros(largest + 1)
    if res.status == 0:
        tau[1:] = res.x
        # repair rounding: never above T(P) (lowering every tau by the largest excess lowers every
        # partition's sum by at least that much: each has at least one part)
        over = max(0.0, float((a @ tau[1:] - cost).max()))
        tau[1:] -= over
    return tau


def applies(co: Any) -> bool:
    """Whether the column programme takes this instance's cut: every stage's intra-stage cut is
    a function of its counts that the programme knows (ring stages, stages of one replica, and
    tree stages whose partitions :func:`tree_table` can tabulate)."""
    return all(not co.tree_edges[s] or stage_tree_table(co.k[s], co.caps) is not None for s in range(co.n_stages))


@dataclass
class ColumnProblem:
    """The column programme of one instance: per size c, N_c servers; F's data per stage."""

    k: np.ndarray                 # replicas per stage
    ring: np.ndarray              # W_s
    pair: np.ndarray              # w_s (pair[0] = 0)
    sizes: list[int]              # the distinct server sizes, ascending
    n_servers: dict[int, int]     # N_c
    const: float                  # C
    tree: np.ndarray              # tree[s, v] = w0_s tau_s[v]: the separable part of a tree stage's cost
    tree_stages: dict[int, tuple[float, dict[tuple[int, ...], tuple[int, tuple[int, ...]]]]]  # s: (w0, table)
    columns: dict[int, set[tuple[int, ...]]] = field(default_factory=dict)
    partitions: dict[int, set[tuple[int, ...]]] = field(default_factory=dict)   # s: the LP's partition columns
    _tree_arrays: dict[int, tuple[list[tuple[int, ...]], np.ndarray, np.ndarray, dict[tuple[int, ...], float]]] = field(
        default_factory=dict, repr=False)
    _values: dict[tuple[int, ...], float] = field(default_factory=dict, repr=False)   # F per column, once

    def tree_partition_arrays(self, s: int) -> tuple[list[tuple[int, ...]], np.ndarray, np.ndarray,
                                                       dict[tuple[int, ...], float]]:
        """Tree stage s's table as arrays, computed once: its partitions, their remainders
        D_s(P), the multiplicity of each part size v in each (rows: partitions, columns: v =
        0..largest) and the remainders by partition (a k = 32 stage has 3,319 partitions)."""
        got = self._tree_arrays.get(s)
        if got is None:
            qs = list(self.tree_stages[s][1])
            d = np.array([self.remainder(s, q) for q in qs])
            a = np.zeros((len(qs), self.tree.shape[1]))
            for i, q in enumerate(qs):
                for v in q:
                    a[i, v] += 1.0
            got = (qs, d, a, dict(zip(qs, d.tolist())))
            self._tree_arrays[s] = got
        return got

    @property
    def top(self) -> np.ndarray:
        """The largest share of each stage one server can take, min(k_s, largest server)."""
        return np.minimum(self.k, max(self.sizes))

    @property
    def partition_stages(self) -> list[int]:
        """The stages with partition rows (k_s >= 2)."""
        return [s for s in range(len(self.k)) if self.k[s] >= 2]

    def partition_cost(self, s: int, q: tuple[int, ...]) -> float:
        """The cost a partition column of stage s carries: the tree remainder D_s(P), 0 for other stages."""
        return self.tree_partition_arrays(s)[3][q] if s in self.tree_stages else 0.0

    @property
    def split_rows(self) -> np.ndarray:
        """The stages with a split row (k_s >= 2: whole on one server or on >= 2 servers)."""
        return self.k >= 2

    def remainder(self, s: int, row: Sequence[int]) -> float:
        """D_s(P) = w0 T(P) - sum_{v in P} tree[s, v] >= 0 for tree stage s with counts ``row``."""
        w0, table = self.tree_stages[s]
        q = tuple(sorted((int(v) for v in row if v), reverse=True))
        return max(0.0, w0 * table[q][0] - float(sum(self.tree[s, v] for v in q)))

    def value(self, col: tuple[int, ...]) -> float:
        """F(col), computed once per column (the master LP prices every column at each of its
        solves; the stage data do not change once the programme is built)."""
        got = self._values.get(col)
        if got is None:
            got = self._values[col] = self._value(col)
        return got

    def _value(self, col: tuple[int, ...]) -> float:
        k, W, w = self.k, self.ring, self.pair
        out = 0.0
        prev = 0
        for s, v in enumerate(col):
            if 0 < v < k[s]:
                out += W[s]
            out += self.tree[s, v]
            if s:
                out -= w[s] * prev * v
            prev = v
        return out


def _split(k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """g_s(v): 1 for part of the stage (0 < v < k_s), 2 for all of it, 0 for none."""
    return np.where(v >= k, 2.0, np.where(v > 0, 1.0, 0.0))


def column_problem(co: Any) -> ColumnProblem:
    """The column programme of :mod:`.exact`'s coefficients (``applies(co)`` must hold)."""
    S = co.n_stages
    sizes = sorted(set(co.caps))
    const = sum(co.pair_weight[s] * co.k[s - 1] * co.k[s] for s in range(1, S))
    largest = max(co.caps)
    tree = np.zeros((S, largest + 1))
    tree_stages = {}
    for s in range(S):
        if co.tree_edges[s]:
            top = min(co.k[s], largest)
            table = stage_tree_table(co.k[s], co.caps)
            assert table is not None, "applies(co) must hold"
            w0 = co.tree_edge_weight[s]
            tree[s, :top + 1] = w0 * _separable_part(table, co.k[s], top)
            tree_stages[s] = (w0, table)
    return ColumnProblem(np.array(co.k, dtype=np.int64), np.array(co.ring_weight, dtype=float),
                         np.array(co.pair_weight, dtype=float), sizes,
                         {c: co.caps.count(c) for c in sizes}, float(const), tree, tree_stages)


def _unary(cp: ColumnProblem, pi: np.ndarray, sigma: np.ndarray, c: int, lam: np.ndarray | None = None) -> np.ndarray:
    """u[s, v]: the part of F(p) - pi.p - sigma.g(p) - lam(p) of x_s = v alone (inf above min(k_s, c));
    ``lam[s, v]`` the multiplier of the partition row (s, v) (lam(p) = sum_s lam[s, p_s], lam[s, 0] = 0)."""
    S = len(cp.k)
    v = np.arange(c + 1, dtype=float)[None, :]
    k = cp.k[:, None]
    u = (np.where((v > 0) & (v < k), cp.ring[:, None], 0.0) + cp.tree[:, :c + 1] - pi[:, None] * v
         - sigma[:, None] * _split(k, v))
    if lam is not None:
        u = u - lam[:, :c + 1]
    return np.where(v <= np.minimum(cp.k, c)[:, None], u, np.inf).reshape(S, c + 1)


def _completion(cp: ColumnProblem, pi: np.ndarray, sigma: np.ndarray, c: int,
                lam: np.ndarray | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
    """``h[s][x, r]``: the least reduced cost of stages s+1.. given x_s = x and r GPUs left for
    them (inf if they cannot take exactly r); and u. ``min_x u[0, x] + h[0][x, c - x]`` is r_c."""
    S = len(cp.k)
    u = _unary(cp, pi, sigma, c, lam)
    V = c + 1
    vals = np.arange(V, dtype=float)
    h: list[np.ndarray] = [np.empty(0)] * S
    last = np.full((V, V), np.inf)
    last[:, 0] = 0.0
    h[S - 1] = last
    # tail[xn, r] = h[s+1][xn, r - xn] for r >= xn, else inf: the GPUs left after x_{s+1} = xn
    shift = np.arange(V)[None, :] - np.arange(V)[:, None]
    behind = shift < 0
    shift[behind] = 0
    for s in range(S - 2, -1, -1):
        nxt = h[s + 1]
        xs = np.flatnonzero(np.isfinite(u[s + 1]))  # holds 0 and 1: u[s+1, v] is finite for v <= min(k, c)
        tail = np.where(behind[xs], np.inf, nxt[xs[:, None], shift[xs]])
        # (x, r) with r >= xn: u[s+1, xn] - w_{s+1} x xn + h[s+1][xn, r - xn], least over xn; the
        # same floating-point operations per entry as one xn at a time, and a minimum is exact
        cand = (u[s + 1, xs][:, None, None] - (cp.pair[s + 1] * vals[:, None])[None, :, :] * xs[:, None, None]
                + tail[:, None, :])
        h[s] = cand.min(axis=0)
    return u, h


def price(cp: ColumnProblem, pi: np.ndarray, c: int, sigma: np.ndarray | None = None,
          lam: np.ndarray | None = None) -> tuple[float, tuple[int, ...]]:
    """``(r_c, p)``: the least reduced cost F(p) - pi.p - sigma.g(p) - lam(p) over the columns of
    size c, and a column attaining it (the chain programme of the module docstring)."""
    sigma = np.zeros(len(cp.k)) if sigma is None else sigma
    u, h = _completion(cp, pi, sigma, c, lam)
    S = len(cp.k)
    first = np.array([u[0, x] + h[0][x, c - x] for x in range(c + 1)])
    x = int(np.argmin(first))
    col = [x]
    rem = c - x
    for s in range(1, S):
        cand = [u[s, v] - cp.pair[s] * col[-1] * v + h[s][v, rem - v] if v <= rem else np.inf for v in range(c + 1)]
        v = int(np.argmin(cand))
        col.append(v)
        rem -= v
    return float(first[x]), tuple(col)


def enumerate_columns(cp: ColumnProblem, pi: np.ndarray, c: int, limit: float, cap: int,
                      sigma: np.ndarray | None = None, lam: np.ndarray | None = None) -> list[tuple[int, ...]] | None:
    """Every column of size c with reduced cost F(p) - pi.p - sigma.g(p) - lam(p) <= limit (None
    if more than ``cap``)."""
    sigma = np.zeros(len(cp.k)) if sigma is None else sigma
    u, h = _completion(cp, pi, sigma, c, lam)
    S = len(cp.k)
    ul = u.tolist()
    hl = [x.tolist() for x in h]
    kk = [int(min(x, c)) for x in cp.k]
    pair = cp.pair.tolist()
    out: list[tuple[int, ...]] = []
    col = [0] * S

    def rec(s: int, rem: int, acc: float, prev: int) -> bool:
        us, hs, ws = ul[s], hl[s], pair[s]
        for v in range(min(rem, kk[s]) + 1):
            a = acc + us[v] - ws * prev * v
            if a + hs[v][rem - v] > limit:
                continue
            col[s] = v
            if s == S - 1:
                out.append(tuple(col))
                if len(out) > cap:
                    return False
            elif not rec(s + 1, rem - v, a, v):
                return False
        col[s] = 0
        return True

    return out if rec(0, c, 0.0, 0) else None


def _partition_bounds(lam_s: np.ndarray, k: int, top: int) -> np.ndarray:
    """``best[m, j]``: the least ``sum_{v in Q} lam_s[v]`` over the partitions Q of j into parts of
    at most m (inf where there is none): an unbounded knapsack by largest part, exact."""
    best = np.full((top + 1, k + 1), np.inf)
    best[:, 0] = 0.0
    for m in range(1, top + 1):
        best[m] = best[m - 1]
        for j in range(m, k + 1):   # the largest part is m, the rest has parts of at most m
            best[m, j] = min(best[m, j], lam_s[m] + best[m, j - m])
    return best


def stage_partitions(cp: ColumnProblem, s: int, lam_s: np.ndarray, limit: float | None = None,
                     cap: int = 10**6) -> tuple[float, list[tuple[int, ...]] | None]:
    """``(least, listed)`` for stage s: the least partition cost ``D_s(P) + sum_{v in P} lam_s[v]``
    over the partitions P of k_s a mapping can give the stage (tree stages: the table's; other
    stages: every partition into parts of at most ``top_s``), and, when ``limit`` is given, every
    partition whose cost is at most ``limit`` (None if more than ``cap``); else ``[a least one]``.
    Tree stages scan the table; the others run :func:`_partition_bounds` and a depth-first search
    over parts in non-increasing order pruned by it (exact: the bound is the least completion)."""
    if s in cp.tree_stages:
        qs, d, a, _ = cp.tree_partition_arrays(s)
        cost = d + a @ np.asarray(lam_s, dtype=float)[:a.shape[1]]
        least = float(cost.min())
        if limit is None:
            return least, [min(qs[i] for i in np.flatnonzero(cost == least))]
        got = [qs[i] for i in np.flatnonzero(cost <= limit)]
        return least, (got if len(got) <= cap else None)
    k, top = int(cp.k[s]), int(cp.top[s])
    best = _partition_bounds(lam_s, k, top)
    least = float(best[top, k])
    out: list[tuple[int, ...]] = []
    parts: list[int] = []
    bound = least if limit is None else limit

    def rec(j: int, m: int, acc: float) -> bool:
        if j == 0:
            out.append(tuple(parts))
            return len(out) <= cap and (limit is not None or len(out) < 1)
        for v in range(min(m, j), 0, -1):
            a = acc + float(lam_s[v])
            if a + best[v, j - v] > bound + 1e-9 * max(1.0, abs(bound)):
                continue
            parts.append(v)
            going = rec(j - v, v, a)
            parts.pop()
            if not going:
                return False
        return True

    finished = rec(k, top, 0.0)
    if limit is None:
        return least, out[:1]
    return least, (out if finished else None)


@dataclass
class Duals:
    """Multipliers of the stage rows (pi, free), the split rows (sigma >= 0) and the partition rows
    (lam, free; ``lam[s, v]`` for the servers holding v replicas of stage s), each size's least
    reduced cost r_c, each stage's least partition cost, and the bound LB they prove."""

    pi: np.ndarray
    sigma: np.ndarray
    r: dict[int, float]
    lb: float
    lam: np.ndarray
    part_min: dict[int, float] = field(default_factory=dict)


def lagrangian_bound(cp: ColumnProblem, pi: np.ndarray, sigma: np.ndarray | None = None,
                     lam: np.ndarray | None = None) -> tuple[Duals, dict[int, tuple[float, tuple[int, ...]]]]:
    """LB = C + pi.k + 2 sum sigma + sum_c N_c r_c + sum_s min_P (D_s(P) + lam_s(P)), valid for any
    pi, any sigma >= 0 and any lam (module docstring, "Partition rows"), with each size's (r_c, argmin)."""
    sigma = np.zeros(len(cp.k)) if sigma is None else np.maximum(sigma, 0.0) * cp.split_rows
    if lam is None:
        lam = np.zeros((len(cp.k), max(cp.sizes) + 1))
    priced = {c: price(cp, pi, c, sigma, lam) for c in cp.sizes}
    part_min = {s: stage_partitions(cp, s, lam[s])[0] for s in cp.partition_stages}
    lb = (cp.const + float(pi @ cp.k) + 2.0 * float(sigma.sum()) + sum(cp.n_servers[c] * priced[c][0] for c in cp.sizes)
          + sum(part_min.values()))
    return Duals(pi, sigma, {c: priced[c][0] for c in cp.sizes}, lb, lam, part_min), priced


def _master_lp(cp: ColumnProblem, partition_rows: bool = True
               ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, dict[int, float], dict[int, float]]:
    """The linear relaxation over the current columns and partition columns, with the split rows
    and penalised slack on the equality rows (so that it is feasible whatever the columns):
    (value without C, pi, sigma, lam, mu, rho). Without ``partition_rows``: the server columns
    alone (lam = 0)."""
    from scipy.optimize import linprog

    S = len(cp.k)
    width = max(cp.sizes) + 1
    lst = [(c, p) for c in cp.sizes for p in sorted(cp.columns[c])]
    pst = cp.partition_stages if partition_rows else []
    plist = [(s, q) for s in pst for q in sorted(cp.partitions.get(s, ()))]
    link = [(s, v) for s in pst for v in range(1, int(cp.top[s]) + 1)]
    link_row = {sv: i for i, sv in enumerate(link)}
    cost = np.array([cp.value(p) for _, p in lst] + [cp.partition_cost(s, q) for s, q in plist])
    scale = max(1.0, float(np.abs(cost).max()), float(cp.ring.max()), float(cp.pair.max()))
    penalty = 1e3 * scale * (1 + int(cp.k.max()))
    R0 = S + len(cp.sizes)
    R = R0 + len(link) + len(pst)
    nv = len(lst) + len(plist)
    a = np.zeros((R, nv + 2 * R))
    rows = np.flatnonzero(cp.split_rows)
    a_ub = np.zeros((len(rows), nv + 2 * R))
    for j, (c, p) in enumerate(lst):
        a[:S, j] = p
        a[S + cp.sizes.index(c), j] = 1.0
        a_ub[:, j] = -_split(cp.k[rows], np.asarray(p)[rows])
        for s in pst:
            if p[s]:
                a[R0 + link_row[s, p[s]], j] = 1.0
    for i, (s, q) in enumerate(plist):
        j = len(lst) + i
        for v in q:
            a[R0 + link_row[s, v], j] -= 1.0
        a[R0 + len(link) + pst.index(s), j] = 1.0
    a[:, nv:nv + R] = np.eye(R)
    a[:, nv + R:] = -np.eye(R)
    a_ub[:, nv:nv + S][np.arange(len(rows)), rows] = -2.0   # slack: the stage row's artificial
    b = np.concatenate([cp.k.astype(float), [float(cp.n_servers[c]) for c in cp.sizes], np.zeros(len(link)),
                        np.ones(len(pst))])
    full = np.concatenate([cost, np.full(2 * R, penalty)])
    res = linprog(full / scale, A_ub=a_ub if len(rows) else None, b_ub=-2.0 * np.ones(len(rows)) if len(rows) else None,
                  A_eq=a, b_eq=b, bounds=(0, None), method="highs")
    if res.status != 0:  # pragma: no cover - the slack makes it feasible
        raise RuntimeError(f"column LP: {res.message}")
    y = np.asarray(res.eqlin.marginals) * scale
    sigma = np.zeros(S)
    if len(rows):
        sigma[rows] = -np.asarray(res.ineqlin.marginals) * scale
    lam = np.zeros((S, width))
    for (s, v), i in link_row.items():
        lam[s, v] = y[R0 + i]
    rho = {s: float(y[R0 + len(link) + i]) for i, s in enumerate(pst)}
    return (float(res.fun) * scale, y[:S], sigma, lam, {c: float(y[S + i]) for i, c in enumerate(cp.sizes)}, rho)


def column_generation(cp: ColumnProblem, *, deadline: float | None = None, max_rounds: int = 500,
                      partition_rows: bool = True) -> tuple[Duals, int]:
    """Column generation to the LP optimum (or the deadline): the best duals seen and the rounds.
    Server columns and partition columns are priced in every round (without ``partition_rows``:
    the server columns alone, the LP before the partition rows, kept for comparison)."""
    best: Duals | None = None
    rounds = 0
    for rounds in range(1, max_rounds + 1):
        check_deadline("generating columns")  # the enclosing exact solve's deadline (optkit.deadline)
        lp, pi, sigma, lam, mu, rho = _master_lp(cp, partition_rows)
        duals, priced = lagrangian_bound(cp, pi, sigma, lam)
        if best is None or duals.lb > best.lb:
            best = duals
        tol = 1e-9 * max(1.0, abs(lp))
        added = 0
        for c, (r, p) in priced.items():
            if r < mu[c] - tol and p not in cp.columns[c]:
                cp.columns[c].add(p)
                added += 1
        for s in (cp.partition_stages if partition_rows else []):
            least, qs = stage_partitions(cp, s, lam[s])
            if least < rho[s] - tol and qs and qs[0] not in cp.partitions.setdefault(s, set()):
                cp.partitions[s].add(qs[0])
                added += 1
        if not added or (deadline is not None and time.perf_counter() > deadline):
            break
    assert best is not None
    return best, rounds


@dataclass
class ColumnOutcome:
    status: str                         # "optimal", "time_limit", "too_many_columns"
    counts: np.ndarray                  # S x M count matrix of the best mapping found
    bound: float                        # a proven lower bound on the optimal cut
    info: dict[str, Any]


INTEGER_SOLVERS = ("highs", "cpsat")
INTEGER_SOLVER = "highs"
"""The engine of the programme's integer solves: HiGHS' branch and cut (``scipy.optimize.milp``,
relative gap 0) or CP-SAT. Both solve the same integer programme (integer objective coefficients,
integer rows) to proven optimality; HiGHS closes the ``large`` suite's ring gaps at its root (the
32 x 8 ring job: 0.2 s, one node) where CP-SAT's search does not within 10 s, so it is the
default (``tests/test_gpu_mapping_columns.py`` checks that both engines give the same optima)."""


@dataclass
class _IntegerOutcome:
    solver_status: str                  # "OPTIMAL", "FEASIBLE", "INFEASIBLE" or "UNKNOWN"
    values: list[int] | None            # per variable, when a solution was found
    bound: float | None                 # the proven bound on the integer objective


def _solve_integer(cp: ColumnProblem, cols: dict[int, list[tuple[int, ...]]], duals: Duals, ub: float, *,
                   time_limit: float | None, seed: int | None, workers: int | None,
                   hint: dict[int, dict[tuple[int, ...], int]] | None,
                   parts: dict[int, list[tuple[int, ...]]] | None = None
                   ) -> tuple[Any, dict[int, dict[tuple[int, ...], int]] | None, float | None]:
    """The programme over ``cols``, with one literal per listed partition of the stages in
    ``parts`` (every tree stage is there: its table, or the part of it ``parts`` lists), solved by
    :data:`INTEGER_SOLVER`.

    For a stage with partition literals, exactly one holds, and the number of servers holding v
    of its replicas is the number of parts v of that partition (both true of every mapping).
    With L the stages with literals and ``lam_L`` the partition multipliers of those stages, the
    objective is the cut rewritten by the rows (which every solution meets with equality):

        cut = C + pi.k + sum n[c,p] (F(p) - pi.p - lam_L(p)) + sum_{s in L} (D_s(P_s) + lam_s(P_s)),

    each coefficient less its least over the listed columns of the size (resp. partitions of the
    stage), so every one is >= 0 and the constant ``C + pi.k + sum_c N_c base_c + sum_s base_s``
    is the programme's trivial bound, close to the Lagrangian bound; coefficients rounded down to
    integer multiples of delta (so delta times a proven bound of the integer objective, plus the
    constant, is a lower bound). Returns the outcome, the solution and the bound it proves over
    these columns (in bytes)."""
    parts = dict(parts or {})
    for s, (_, table) in cp.tree_stages.items():
        parts.setdefault(s, list(table))
    lam = np.zeros_like(duals.lam)
    for s in parts:
        lam[s] = duals.lam[s]
    lin = {c: {p: cp.value(p) - float(duals.pi @ np.asarray(p, dtype=float)) - float(sum(lam[s, v] for s, v in enumerate(p)))
               for p in cols[c]} for c in cp.sizes}
    base = {c: min(lin[c].values()) for c in cp.sizes}
    plin = {s: {q: cp.partition_cost(s, q) + float(sum(lam[s, v] for v in q)) for q in qs} for s, qs in parts.items()}
    pbase = {s: min(v.values()) for s, v in plin.items()}
    offset = (cp.const + float(duals.pi @ cp.k) + sum(cp.n_servers[c] * base[c] for c in cp.sizes)
              + sum(pbase.values()))
    delta = max(abs(ub), abs(offset), 1.0) / 2.0**_RESOLUTION_BITS
    # variables: n[c, p] in 0..N_c, then b[s, q] in 0..1; objective floor(coefficient / delta) >= 0
    keys: list[tuple[str, int, tuple[int, ...]]] = []
    upper: list[int] = []
    obj: list[int] = []
    for c in cp.sizes:
        for p in cols[c]:
            keys.append(("n", c, p))
            upper.append(cp.n_servers[c])
            obj.append(max(0, math.floor((lin[c][p] - base[c]) / delta)))
    for s, qs in parts.items():
        for q in qs:
            keys.append(("b", s, q))
            upper.append(1)
            obj.append(max(0, math.floor((plin[s][q] - pbase[s]) / delta)))
    # equality rows: sizes, stages, and per stage with literals exactly one partition and, for each
    # v, the servers holding v of its replicas = the parts v of the partition
    rows: list[tuple[dict[int, int], int]] = []
    nidx = [(i, key[1], key[2]) for i, key in enumerate(keys) if key[0] == "n"]
    by_size: dict[int, dict[int, int]] = {c: {} for c in cp.sizes}
    by_count: dict[tuple[int, int], dict[int, int]] = {}   # (s, v): the columns holding v of stage s
    for i, c, p in nidx:
        by_size[c][i] = 1
        for s, v in enumerate(p):
            if v:
                by_count.setdefault((s, v), {})[i] = 1
    for c in cp.sizes:
        rows.append((by_size[c], cp.n_servers[c]))
    for s in range(len(cp.k)):
        rows.append(({i: v for v in range(1, int(cp.top[s]) + 1) for i in by_count.get((s, v), {})}, int(cp.k[s])))
    literals: dict[int, list[tuple[int, tuple[int, ...]]]] = {s: [] for s in parts}
    for i, key in enumerate(keys):
        if key[0] == "b":
            literals[key[1]].append((i, key[2]))
    for s, lits in literals.items():
        rows.append(({i: 1 for i, _ in lits}, 1))
        for v in range(1, int(cp.top[s]) + 1):
            row = dict(by_count.get((s, v), {}))
            row.update({i: -q.count(v) for i, q in lits if v in q})
            rows.append((row, 0))
    start = None
    if hint is not None:
        start = [hint.get(key[1], {}).get(key[2], 0) if key[0] == "n" else 0 for key in keys]
    engine = _integer_highs if INTEGER_SOLVER == "highs" else _integer_cpsat
    out = engine(obj, upper, rows, start, time_limit=time_limit, seed=seed, workers=workers)
    bound = offset + delta * out.bound if out.bound is not None else None
    if out.values is None:
        return out, None, bound
    sol: dict[int, dict[tuple[int, ...], int]] = {c: {} for c in cp.sizes}
    for i, c, p in nidx:
        if out.values[i]:
            sol[c][p] = int(out.values[i])
    return out, sol, bound


def _integer_cpsat(obj: list[int], upper: list[int], rows: list[tuple[dict[int, int], int]],
                   start: list[int] | None, *, time_limit: float | None, seed: int | None,
                   workers: int | None) -> _IntegerOutcome:
    """CP-SAT on ``min obj.x, rows, 0 <= x <= upper`` (integers), ``start`` as the hint."""
    from ortools.sat.python import cp_model

    from optkit.solvers.cpsat import solve_cp_model

    md = cp_model.CpModel()
    x = [md.NewIntVar(0, u, f"x{i}") for i, u in enumerate(upper)]
    for row, rhs in rows:
        md.Add(sum(a * x[i] for i, a in row.items()) == rhs)
    md.Minimize(sum(q * x[i] for i, q in enumerate(obj) if q))
    hints = {x[i]: v for i, v in enumerate(start)} if start is not None else {}
    got = solve_cp_model(md, time_limit=time_limit, workers=workers, seed=seed, hint=hints)
    _WORK["deterministic_time"] += got.raw.deterministic_time
    values = [int(got.raw.Value(v)) for v in x] if got.has_solution else None
    return _IntegerOutcome(got.solver_status, values, got.bound)


def _integer_highs(obj: list[int], upper: list[int], rows: list[tuple[dict[int, int], int]],
                   start: list[int] | None, *, time_limit: float | None, seed: int | None,
                   workers: int | None) -> _IntegerOutcome:
    """HiGHS (``scipy.optimize.milp``, relative gap 0) on ``min obj.x, rows, 0 <= x <= upper``.
    HiGHS is deterministic (one thread), so ``seed`` and ``workers`` are not used; nor is the
    start (scipy passes none): the caller keeps its incumbent. The objective stays in integer
    units (of delta), so HiGHS' absolute gap tolerance (1e-6) is below one unit."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    r_i, c_i, a_v, rhs = [], [], [], []
    for j, (row, b) in enumerate(rows):
        for i, a in row.items():
            r_i.append(j)
            c_i.append(i)
            a_v.append(float(a))
        rhs.append(float(b))
    a_mat = coo_matrix((a_v, (r_i, c_i)), shape=(len(rows), len(obj))).tocsr()
    c = np.asarray(obj, dtype=float)
    options: dict[str, Any] = {"disp": False, "mip_rel_gap": 0.0}
    time_limit = solver_limit(time_limit)  # at most what is left of the call's deadline
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    started = time.perf_counter()
    res = milp(c, constraints=LinearConstraint(a_mat, rhs, rhs), integrality=np.ones(len(obj)),
               bounds=Bounds(0.0, np.asarray(upper, dtype=float)), options=options)
    _WORK["highs_seconds"] += time.perf_counter() - started
    values = None if res.x is None else [int(round(v)) for v in res.x]
    dual = getattr(res, "mip_dual_bound", None)
    bound = None if dual is None or not np.isfinite(dual) else float(dual)
    if res.status == 0:
        status = "OPTIMAL"
    elif res.status == 2:
        status = "INFEASIBLE"
    else:
        status = "FEASIBLE" if values is not None else "UNKNOWN"
    if values is not None and any(sum(a * values[i] for i, a in row.items()) != b for row, b in rows):
        values, status = None, "UNKNOWN"    # HiGHS' rounding tolerance: never hand back an infeasible point
    return _IntegerOutcome(status, values, bound)


def _partition_of(row: Sequence[int]) -> tuple[int, ...]:
    """The multiset of a stage's nonzero counts, parts in non-increasing order."""
    return tuple(sorted((int(v) for v in row if v), reverse=True))


def _counts_from(cp: ColumnProblem, caps: tuple[int, ...], sol: dict[int, dict[tuple[int, ...], int]]) -> np.ndarray:
    """The count matrix: the servers of size c, in index order, take the chosen columns in order."""
    x = np.zeros((len(cp.k), len(caps)), dtype=np.int64)
    queue = {c: [p for p in sorted(sol.get(c, {}), reverse=True) for _ in range(sol[c][p])] for c in cp.sizes}
    for m, c in enumerate(caps):
        x[:, m] = queue[c].pop(0)
    return x


def _solution_of(cp: ColumnProblem, caps: tuple[int, ...], x: np.ndarray) -> dict[int, dict[tuple[int, ...], int]]:
    out: dict[int, dict[tuple[int, ...], int]] = {c: {} for c in cp.sizes}
    for m, c in enumerate(caps):
        p = tuple(int(v) for v in x[:, m])
        out[c][p] = out[c].get(p, 0) + 1
    return out


def value_of_counts(cp: ColumnProblem, x: np.ndarray) -> float:
    """C + sum_m F(x[:, m]): the least cut over the assignments with counts x."""
    return (cp.const + sum(cp.value(tuple(int(v) for v in x[:, m])) for m in range(x.shape[1]))
            + sum(cp.remainder(s, x[s]) for s in cp.tree_stages))


def assignment(cp: ColumnProblem, x: np.ndarray) -> list[list[int]]:
    """An assignment with counts x whose cut is :func:`value_of_counts` (x): every ring (or one-replica)
    stage in contiguous arcs, server by server; a tree stage as its partition's best arrangement
    (:func:`tree_table`), its blocks (sizes in non-increasing order) on the servers holding that
    many replicas (in index order)."""
    out = []
    for s in range(len(cp.k)):
        row = [int(v) for v in x[s]]
        if s not in cp.tree_stages:
            out.append([m for m, c in enumerate(row) for _ in range(c)])
            continue
        servers = sorted((m for m, c in enumerate(row) if c), key=lambda m: (-row[m], m))
        q = tuple(row[m] for m in servers)
        out.append([servers[j] for j in cp.tree_stages[s][1][q][1]])
    return out


def solve_columns(co: Any, start_counts: np.ndarray, *, time_limit: float | None = None, seed: int | None = None,
                  workers: int | None = None, max_columns: int = DEFAULT_MAX_COLUMNS) -> ColumnOutcome:
    """The exact cut optimum over count matrices by the column programme (module docstring).

    ``co`` is :mod:`.exact`'s coefficients of the instance (``applies(co)`` must hold);
    ``start_counts`` a feasible count matrix (the Heavy-Edge mapping's), whose columns seed the
    column generation and whose value is the first upper bound. Returns a
    :class:`ColumnOutcome`: ``status`` ``optimal``, ``time_limit`` or ``too_many_columns`` (more
    than ``max_columns`` columns within the gap: the caller falls back to the count model), the
    best count matrix found (:func:`assignment` turns it into a mapping), a proven lower bound,
    and ``info`` (LP bound, columns generated and enumerated, partitions enumerated, the last
    threshold, ``integer_solver`` (:data:`INTEGER_SOLVER`), ``deterministic_time``: CP-SAT's
    deterministic time summed over the integer solves, ``highs_seconds``: HiGHS' wall time
    summed over them).

    References
    ----------
    Luo et al., "Prediction-Assisted Online Distributed Deep Learning Workload Scheduling in GPU
    Clusters", Sec. IV-B (the cut of the job graph); Dantzig & Wolfe, Operations Research 8(1),
    1960 and Gilmore & Gomory, Operations Research 9(6), 1961 (the decomposition by server and
    column generation).

    Notes
    -----
    Guarantee: status ``optimal`` is a proven optimum of the cut (up to the integer programme's
    resolution, about 1e-9 relative per server, and, with the HiGHS engine, up to HiGHS' LP
    tolerances in its branch and cut); ``bound`` is a proven lower bound whatever the status.

    Units: the bound and the objective in bytes per iteration; ``time_limit`` in seconds.

    Examples
    --------
    >>> from optkit.formulations.gpu_mapping import Cluster, GpuMappingInstance, PipelineJob, Stage, evaluate
    >>> from optkit.formulations.gpu_mapping.exact import coefficients
    >>> job = PipelineJob((Stage(2, .1, .2, 0, 1e6, 2e7), Stage(2, .1, .2, 1e6, 0, 2e7)), "ring")
    >>> inst = GpuMappingInstance(Cluster(8, 1.25e9, 3e11), job, (2, 1, 1))
    >>> co = coefficients(inst)
    >>> got = solve_columns(co, np.array([[0, 1, 1], [2, 0, 0]]), seed=0, workers=1)
    >>> got.status, got.counts.tolist()
    ('optimal', [[0, 1, 1], [2, 0, 0]])
    >>> evaluate(inst, {"assignment": assignment(column_problem(co), got.counts)}).objectives["cut"]
    44000000.0
    """
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    _WORK["deterministic_time"] = 0.0
    _WORK["highs_seconds"] = 0.0
    got = _solve_columns(co, start_counts, deadline, max_columns, seed, workers)
    got.info["deterministic_time"] = _WORK["deterministic_time"]
    got.info["integer_solver"] = INTEGER_SOLVER
    got.info["highs_seconds"] = _WORK["highs_seconds"]
    return got


def _record(ub: float, bound: float) -> None:
    """An anytime point of the run being recorded (:mod:`optkit.anytime`): the best mapping's cut
    and the proven bound so far, both in bytes per iteration (the cut's own unit)."""
    from optkit.anytime import add_solver_points

    add_solver_points([(time.perf_counter(), ub, bound)])


def _solve_columns(co: Any, start_counts: np.ndarray, deadline: float | None, max_columns: int,
                   seed: int | None, workers: int | None) -> ColumnOutcome:
    def left() -> float | None:
        return None if deadline is None else max(1e-3, deadline - time.perf_counter())

    cp = column_problem(co)
    caps = tuple(co.caps)
    cp.columns = {c: set() for c in cp.sizes}
    for m, c in enumerate(caps):
        cp.columns[c].add(tuple(int(v) for v in start_counts[:, m]))
    cp.partitions = {s: {_partition_of(start_counts[s])} for s in cp.partition_stages}
    best_x = np.asarray(start_counts, dtype=np.int64)
    ub = value_of_counts(cp, best_x)
    duals, rounds = column_generation(cp, deadline=deadline)
    lb = duals.lb
    _record(ub, lb)
    info: dict[str, Any] = {"model": "columns", "cg_rounds": rounds, "lp_bound": lb,
                            "generated_columns": sum(len(v) for v in cp.columns.values())}
    # a better mapping than Heavy-Edge's: the programme over the columns generated so far, the
    # tree stages with the partitions the LP generated (and the incumbent's) only: a heuristic for
    # the upper bound (the threshold loop below lists every partition a better mapping may use);
    # all 3,319 partitions of a k = 32 stage as literals cost HiGHS seconds here
    gen = {c: sorted(cp.columns[c]) for c in cp.sizes}
    first_parts: dict[int, list[tuple[int, ...]]] = {}
    for s in cp.tree_stages:
        first_parts[s] = sorted(cp.partitions.get(s, set()) | {_partition_of(best_x[s])})
    budget = left()
    out, sol, _ = _solve_integer(cp, gen, duals, ub, time_limit=None if budget is None else budget / 4,
                                 seed=seed, workers=workers, hint=_solution_of(cp, caps, best_x), parts=first_parts)
    if sol is not None and value_of_counts(cp, _counts_from(cp, caps, sol)) < ub:
        best_x = _counts_from(cp, caps, sol)
        ub = value_of_counts(cp, best_x)
    info["first_upper_bound"] = ub
    _record(ub, lb)
    tol = 1e-9 * max(abs(ub), abs(lb), 1.0)
    if ub - lb <= tol:  # the mapping meets the bound (to the models' 1e-9 resolution)
        info.update(enumerated_columns=0, threshold=0.0, solver_status="bound met")
        return ColumnOutcome("optimal", best_x, min(lb, ub), info)
    # widen the threshold t until the best mapping over the columns within t is within t of LB
    t = (ub - lb) / 64.0
    bound = lb
    while True:
        check_deadline("enumerating columns")
        t = min(ub - lb, 4.0 * t)
        cols: dict[int, list[tuple[int, ...]]] = {}
        total = 0
        for c in cp.sizes:
            got = enumerate_columns(cp, duals.pi, c, duals.r[c] + t + tol, max_columns - total, duals.sigma, duals.lam)
            if got is None:
                info.update(enumerated_columns=f"> {max_columns}", threshold=t)
                return ColumnOutcome("too_many_columns", best_x, bound, info)
            cols[c] = got
            total += len(got)
        # the partitions within t of their stage's least (as the columns: no better mapping uses
        # another); a ring stage with more than PARTITION_LITERALS of them gets no literals
        parts: dict[int, list[tuple[int, ...]]] = {}
        for s in cp.partition_stages:
            _, qs = stage_partitions(cp, s, duals.lam[s], duals.part_min[s] + t + tol,
                                     10**9 if s in cp.tree_stages else PARTITION_LITERALS)
            if qs is not None:
                parts[s] = qs
        info.update(enumerated_columns=total, threshold=t,
                    enumerated_partitions=sum(len(q) for q in parts.values()))
        for m, c in enumerate(caps):  # the incumbent's columns, so that the hint is feasible
            p = tuple(int(v) for v in best_x[:, m])
            if p not in cols[c]:
                cols[c].append(p)
        for s, qs in parts.items():
            q = _partition_of(best_x[s])
            if q not in qs:
                qs.append(q)
        if deadline is not None and time.perf_counter() > deadline:
            return ColumnOutcome("time_limit", best_x, bound, info)
        out, sol, ip_bound = _solve_integer(cp, cols, duals, ub, time_limit=left(), seed=seed, workers=workers,
                                            hint=_solution_of(cp, caps, best_x), parts=parts)
        info["solver_status"] = out.solver_status
        if sol is not None and value_of_counts(cp, _counts_from(cp, caps, sol)) < ub:
            best_x = _counts_from(cp, caps, sol)
            ub = value_of_counts(cp, best_x)
        proven = out.solver_status == "OPTIMAL"
        exhaustive = ub - lb <= t + tol   # every mapping better than ub uses only listed columns
        if exhaustive and ip_bound is not None:
            bound = max(bound, min(ip_bound, ub))
        _record(ub, bound)
        if proven and exhaustive:
            return ColumnOutcome("optimal", best_x, bound, info)
        if not proven:
            return ColumnOutcome("time_limit", best_x, bound, info)
