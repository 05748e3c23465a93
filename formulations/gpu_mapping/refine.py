"""Heavy-Edge + Kernighan-Lin style refinement for gpu-mapping (``heavy-edge-refine``).

Start from the paper's Heavy-Edge mapping (Luo et al., Sec. IV-B; :func:`.heavy_edge_job`), then
improve it by **pairwise swaps** of two replicas on different servers. A swap keeps every
server's replica count, so every intermediate mapping is feasible. The search depends on the
objective:

``cut`` (bytes per iteration across servers) - Kernighan & Lin (1970) passes, generalised to k
    parts: within a pass, repeatedly make the best swap among unlocked vertices (even a worsening
    one), lock both, and remember the cumulative gain; at the end of the pass roll back to the
    best prefix. A pass whose best prefix gains nothing (up to a relative tolerance of 1e-12 of
    the total edge weight) is rolled back entirely and the search stops. The gain of swapping
    u (on a) and v (on b) is ``conn(u,b) - conn(u,a) + conn(v,a) - conn(v,b) - 2 w(u,v)``,
    ``conn(x, m)`` the weight of x's edges into server m, evaluated for all pairs at once as an
    n x n numpy array from the n x k matrix ``conn = A @ onehot(server)``, which is updated in
    O(nk) per swap.

``alpha`` (eq. 7, seconds per iteration) - alpha depends only on the stage counts ``x[s, m]``,
    so only swaps between replicas of *different* stages s != t change it; such a swap moves
    one unit of stage s from server a to b and one unit of t from b to a. Each column m of
    eq. (7)'s beta depends only on column m of x, so the new beta column of every
    "(server m loses a replica of s, gains one of t)" change is computed once per step with
    one vectorised :func:`.stage_times` call on an S x (M S^2) matrix, and every candidate swap
    (a, b, s, t) is scored from two such columns and the untouched columns. The search is a
    steepest descent on the **leximax** order: the beta values of all occupied (stage, server)
    cells sorted in decreasing order, compared lexicographically (values quantised to
    1e-12 x the starting alpha, so comparisons are exact on integers and the search cannot
    cycle). The first entry is alpha itself, so a leximax improvement never increases alpha;
    the later entries break alpha's plateaus (a max over many cells rarely drops with one swap:
    each swap lowers the number of cells at the max, or the runner-up, until alpha itself
    drops). Moves are accepted only when strictly leximax-better: pure descent, no tentative
    moves. Among the replicas realising a count swap, the pair with the best cut gain is used;
    when the descent ends, cut-KL passes restricted to swaps of replicas of the *same* stage
    (which leave x and hence alpha unchanged) lower the cut as a secondary objective.

    When the job's count space is small (``prod_s (k_s + 1) <= exact_states``, 20,000 by default;
    VGG19's Table II configuration has 1,500), the count matrix is instead the exact alpha
    optimum of a dynamic programme over the servers (:mod:`.count_dp`), and only the cut polish
    runs after it. Otherwise, when every stage has at most 4 replicas (GPT-175B's 16 x 2), a
    branch and bound over the stages (:mod:`.stage_dp`) runs first, within a node budget
    (``stage_nodes``, 20,000 by default): when it completes, its answer is the proven optimum
    and the descent is skipped (all 20 of GPT-175B's Table II cases, median ~1 ms); when it
    hits the budget, the descent starts from the best mapping it found.

**Co-location** (``colocate``, groups of vertices that must each stay on one server: A-SRPT
paper Sec. VI's tensor slices of a layer; Heavy-Edge's keyword, :mod:`.heavy_edge`). Heavy-Edge
starts with every group on one server; the searches then move a group as a whole or not at all:
each group is one *unit* (every other vertex a unit of one), and a move swaps two units of
equal size on different servers, so every server keeps its count and every group its server.
``cut``: the KL passes above on the graph of units (a group contracted to one vertex, its inner
edges dropped: they are never cut), swaps restricted to units of equal size. ``alpha``: a
steepest descent on the same leximax order by swaps of equal-size units of different stage
compositions (:func:`unit_alpha_descent`), then the cut polish by swaps of units of the same
composition (which leave the counts, hence alpha, unchanged). The exact count searches
(:mod:`.count_dp`, :mod:`.stage_dp`) do not know groups and do not run. A swap of a group with
vertices outside groups of the same total is not in this neighbourhood.

Either way the result is never worse than Heavy-Edge on the chosen objective: only improving
moves (or improving pass prefixes) are kept, and a final check with the exact objective
(:func:`.cut_weight` / :func:`.alpha_from_counts`) returns the Heavy-Edge mapping if floating
point had it otherwise. Deterministic for a seed (the seed only reaches Heavy-Edge; swaps break
ties by lowest vertex / stage / server index).

Guarantee: for ``alpha`` when the dynamic programme ran or the stage search completed
(``info["exact_counts"]``), optimal; otherwise none beyond "no worse than Heavy-Edge" (the problem
is NP-hard, a balanced graph cut; KL finds a local optimum of the swap neighbourhood).

References
----------
* B. W. Kernighan, S. Lin, *An efficient heuristic procedure for partitioning graphs*, Bell
  System Technical Journal 49(2), 1970.
* Luo, Liu, Lee, Shroff, *Prediction-Assisted Online Distributed Deep Learning Workload
  Scheduling in GPU Clusters*, Sec. IV-B (Heavy-Edge).

Example
-------
>>> from optkit.formulations.gpu_mapping.model import Cluster, GpuMappingInstance, PipelineJob, Stage
>>> job = PipelineJob((Stage(2, .1, .2, 0, 1e6, 2e7), Stage(2, .1, .2, 1e6, 1e6, 2e7),
...                    Stage(2, .1, .2, 1e6, 0, 2e7)), "ring")
>>> inst = GpuMappingInstance(Cluster(8, 1.25e9, 3e11), job, (4, 1, 1))
>>> a = heavy_edge_refine(inst, objective="cut")
>>> [sorted(row) for row in a]
[[0, 0], [0, 0], [1, 2]]
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from optkit.errors import InputError
from optkit.result import Result, Status
from optkit.validation import check_seed, check_time_limit

from .count_dp import DEFAULT_MAX_STATES, assignment_from_counts, optimal_alpha_counts
from .stage_dp import DEFAULT_STAGE_NODES, MAX_STAGE_REPLICAS, stage_dfs_alpha
from .heavy_edge import check_colocate, heavy_edge_job
from .model import (
    PROBLEM, GpuMappingInstance, PipelineJob, alpha_from_counts, assignment_from_vertex_servers, cut_weight,
    colocation_groups, stage_times, vertex_servers, vertex_times,
)

__all__ = ["heavy_edge_refine", "refine_mapping", "run_heavy_edge_refine", "kl_cut", "alpha_kl",
           "leximax_key", "unit_alpha_descent", "vertex_alpha_descent"]

OBJECTIVES = ("cut", "alpha")
_QUANTUM = 1e-12
_CHUNK_CELLS = 2_000_000  # candidate-key cells scored per numpy batch


# ----------------------------------------------------------------------------- cut: KL passes
def kl_cut(adjacency: np.ndarray, servers: np.ndarray, k: int, *, max_passes: int = 20,
           same_stage: np.ndarray | None = None, deadline: float | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Kernighan-Lin passes of pairwise swaps minimising the weighted cut.

    ``servers`` is the server of each vertex (numbered 0..k-1). With ``same_stage`` (the stage of
    each vertex) only vertices of the same stage may swap (used to lower the cut without
    changing alpha). Returns the improved server vector and ``{"passes", "swaps", "gain"}``.
    Never worse than the input: each pass keeps only its best prefix, and only if it gains more
    than ``1e-12`` of the total weight.
    """
    a = np.asarray(adjacency, dtype=float)
    sv = np.asarray(servers, dtype=np.int64).copy()
    n = len(sv)
    stats: dict[str, Any] = {"passes": 0, "swaps": 0, "gain": 0.0}
    if n < 2 or k < 2:
        return sv, stats
    tol = _QUANTUM * max(float(a.sum()) / 2.0, 1e-300)
    onehot = np.zeros((n, k))
    onehot[np.arange(n), sv] = 1.0
    conn = a @ onehot
    rows = np.arange(n)
    allowed = np.ones((n, n), dtype=bool) if same_stage is None else (same_stage[:, None] == same_stage[None, :])
    np.fill_diagonal(allowed, False)

    def swap(u: int, v: int) -> None:
        su, s_v = sv[u], sv[v]
        conn[:, su] += a[:, v] - a[:, u]
        conn[:, s_v] += a[:, u] - a[:, v]
        sv[u], sv[v] = s_v, su

    for _ in range(max_passes):
        if deadline is not None and time.perf_counter() > deadline:
            break
        stats["passes"] += 1
        free = np.ones(n, dtype=bool)
        history: list[tuple[int, int]] = []
        gains: list[float] = []
        while True:
            own = conn[rows, sv]
            cs = conn[:, sv]  # cs[u, v] = conn(u, server of v)
            gain = cs + cs.T - own[:, None] - own[None, :] - 2.0 * a
            mask = allowed & free[:, None] & free[None, :] & (sv[:, None] != sv[None, :])
            if not mask.any():
                break
            gain = np.where(mask, gain, -np.inf)
            u, v = np.unravel_index(int(np.argmax(gain)), gain.shape)
            gains.append(float(gain[u, v]))
            history.append((int(u), int(v)))
            swap(int(u), int(v))
            free[u] = free[v] = False
            if deadline is not None and time.perf_counter() > deadline:
                break
        if not gains:
            break
        cum = np.cumsum(gains)
        best = int(np.argmax(cum))
        keep = best + 1 if cum[best] > tol else 0
        for u, v in reversed(history[keep:]):
            swap(u, v)
        if keep == 0:
            break
        stats["swaps"] += keep
        stats["gain"] += float(cum[best])
    return sv, stats


# ----------------------------------------------------------------------------- alpha: leximax descent
def leximax_key(beta: np.ndarray, quantum: float, depth: int | None = None) -> np.ndarray:
    """The occupied cells' beta values sorted in decreasing order, quantised to ``quantum``
    (unoccupied cells, ``nan``, become ``-inf`` at the end), truncated to ``depth`` entries.
    Lexicographically smaller is better; entry 0 is alpha / quantum."""
    flat = np.where(np.isnan(beta), -np.inf, np.round(beta / quantum)).ravel()
    key = -np.sort(-flat)
    return key if depth is None else key[:depth]


def _lex_better(a: np.ndarray, b: np.ndarray) -> bool:
    """``a`` lexicographically smaller than ``b`` (equal length)."""
    diff = np.nonzero(a != b)[0]
    return bool(diff.size and a[diff[0]] < b[diff[0]])


class _CountState:
    """Servers of the vertices, the count matrix x, beta and ``conn = A @ onehot(server)``."""

    def __init__(self, job: PipelineJob, cluster: Any, sv: np.ndarray, k: int) -> None:
        self.job, self.cluster, self.k = job, cluster, k
        self.st = job.vertex_stage
        self.a = job.adjacency
        self.sv = np.asarray(sv, dtype=np.int64).copy()
        self.x = np.zeros((len(job.stages), k), dtype=np.int64)
        np.add.at(self.x, (self.st, self.sv), 1)
        onehot = np.zeros((len(self.sv), k))
        onehot[np.arange(len(self.sv)), self.sv] = 1.0
        self.conn = self.a @ onehot
        self.beta = stage_times(job, cluster, self.x)

    def swap_vertices(self, u: int, v: int) -> None:
        su, s_v = int(self.sv[u]), int(self.sv[v])
        self.conn[:, su] += self.a[:, v] - self.a[:, u]
        self.conn[:, s_v] += self.a[:, u] - self.a[:, v]
        self.sv[u], self.sv[v] = s_v, su
        for w, old, new in ((u, su, s_v), (v, s_v, su)):
            self.x[self.st[w], old] -= 1
            self.x[self.st[w], new] += 1
        self.beta = stage_times(self.job, self.cluster, self.x)

    def count_swap(self, a_: int, b_: int, s_: int, t_: int) -> tuple[int, int]:
        """Swap a replica of stage s on a with one of stage t on b, the pair with the best cut
        gain (ties: lowest indices); returns the two vertices."""
        st, sv, conn = self.st, self.sv, self.conn
        us = np.nonzero((st == s_) & (sv == a_))[0]
        vs = np.nonzero((st == t_) & (sv == b_))[0]
        g = ((conn[us, b_] - conn[us, a_])[:, None] + (conn[vs, a_] - conn[vs, b_])[None, :]
             - 2.0 * self.a[np.ix_(us, vs)])
        i, j = np.unravel_index(int(np.argmax(g)), g.shape)
        u, v = int(us[i]), int(vs[j])
        self.swap_vertices(u, v)
        return u, v


def _best_count_swap(state: _CountState, quantum: float, depth: int, up_ok: np.ndarray,
                     down_ok: np.ndarray) -> tuple[np.ndarray, tuple[int, int, int, int]] | None:
    """The leximax-best swap (a, b, s, t): one replica of s from a to b, one of t from b to a,
    with s != t and a != b, among swaps whose cells may move that way (``down_ok[s, m]``: x[s, m]
    may decrease; ``up_ok``: may increase). Returns (its key, the swap) or None."""
    job, x, k = state.job, state.x, state.k
    n_st = x.shape[0]
    eye = np.eye(n_st, dtype=np.int64)
    delta = -eye[:, None, :] + eye[None, :, :]  # delta[s, t] = -e_s + e_t
    ms = np.arange(k)
    # new column of server m after losing one replica of s and gaining one of t: (M, S, S, depth)
    cols = np.maximum(x.T[:, None, None, :] + delta[None, :, :, :], 0)
    nb = stage_times(job, state.cluster, cols.reshape(-1, n_st).T).T.reshape(k, n_st, n_st, n_st)
    nb = -np.sort(-np.where(np.isnan(nb), -np.inf, np.round(nb / quantum)), axis=-1)
    if nb.shape[-1] < depth:
        nb = np.concatenate([nb, np.full(nb.shape[:-1] + (depth - nb.shape[-1],), -np.inf)], axis=-1)
    nb = nb[..., :depth]
    valid = (x.T[:, :, None] >= 1) & ~np.eye(n_st, dtype=bool)[None, :, :]  # (m, s_out, t_in)
    valid &= down_ok.T[:, :, None] & up_ok.T[:, None, :]
    # the untouched columns' values for every pair (a, b), sorted, truncated to depth
    cur = np.where(np.isnan(state.beta), -np.inf, np.round(state.beta / quantum))  # (S, M)
    other = np.broadcast_to(cur.T[None, None, :, :], (k, k, k, n_st)).copy()
    other[ms, :, ms, :] = -np.inf
    other[:, ms, ms, :] = -np.inf
    other = -np.sort(-other.reshape(k, k, k * n_st), axis=-1)
    if other.shape[-1] < depth:
        other = np.concatenate([other, np.full((k, k, depth - other.shape[-1]), -np.inf)], axis=-1)
    other = other[..., :depth]
    ok = ((ms[:, None] != ms[None, :])[:, :, None, None] & valid[:, None, :, :]
          & valid[None, :, :, :].transpose(0, 1, 3, 2))
    lead = np.maximum(np.maximum(other[:, :, 0][:, :, None, None], nb[:, None, :, :, 0]),
                      nb[None, :, :, :, 0].transpose(0, 1, 3, 2))
    lead = np.where(ok, lead, np.inf)
    best_lead = lead.min()
    if not np.isfinite(best_lead):
        return None
    cand = np.argwhere(lead == best_lead)  # rows (a, b, s, t), lexicographic order
    best_key: np.ndarray | None = None
    best_cand: np.ndarray | None = None
    chunk = max(1, _CHUNK_CELLS // (3 * depth))
    for lo in range(0, len(cand), chunk):  # bounded memory on large instances
        ca, cb, cs_, ct = cand[lo:lo + chunk].T
        keys = np.concatenate([other[ca, cb], nb[ca, cs_, ct], nb[cb, ct, cs_]], axis=1)
        keys = -np.sort(-keys, axis=1)[:, :depth]
        i_best = int(np.lexsort(keys.T[::-1])[0])
        if best_key is None or _lex_better(keys[i_best], best_key):
            best_key, best_cand = keys[i_best], cand[lo + i_best]
    assert best_key is not None and best_cand is not None
    a_, b_, s_, t_ = (int(z) for z in best_cand)
    return best_key, (a_, b_, s_, t_)


def alpha_kl(job: PipelineJob, cluster: Any, servers: np.ndarray, k: int, *, max_passes: int = 20,
             lex_depth: int = 8, pair_moves: bool = True, deadline: float | None = None,
             quantum: float | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Kernighan-Lin style passes over count swaps on the truncated leximax order.

    A pass makes up to n tentative count swaps, each the leximax-best among the allowed ones
    (possibly worsening), and then rolls back to the best prefix if it is strictly leximax-better
    than the pass's start (otherwise rolls back everything and stops). KL locks vertices; the
    analogue here locks *directions*: once x[s, m] has decreased in a pass it may not increase in
    that pass, and vice versa, so a pass cannot undo its own moves and ends after at most
    ``sum_s k_s * M`` steps. ``lex_depth`` entries of the leximax vector are compared (entry 0 is
    alpha). Returns the server vector and ``{"passes", "moves"}``.
    """
    state = _CountState(job, cluster, servers, k)
    if quantum is None:
        quantum = _QUANTUM * max(float(np.nanmax(state.beta)), 1e-300)
    info: dict[str, Any] = {"passes": 0, "moves": 0, "lex_depth": lex_depth}
    n_st = len(job.stages)
    if n_st < 2 or k < 2:
        return state.sv, info
    n = len(state.sv)
    lex_depth = max(1, min(int(lex_depth), n_st * k))  # keys never longer than the S*M cells
    info["lex_depth"] = lex_depth
    info["pair_moves"] = 0
    for _round in range(max_passes):
        _kl_passes(state, quantum, lex_depth, n, max_passes, deadline, info)
        if not pair_moves:
            break
        changed = pair_reoptimise(state, quantum, lex_depth, deadline=deadline)
        info["pair_moves"] += changed
        if changed == 0 or (deadline is not None and time.perf_counter() > deadline):
            break
    return state.sv, info


def _kl_passes(state: _CountState, quantum: float, lex_depth: int, n: int, max_passes: int,
               deadline: float | None, info: dict[str, Any]) -> int:
    """The KL passes of :func:`alpha_kl`; returns the number of moves kept."""
    n_st, k = state.x.shape
    kept = 0
    for _ in range(max_passes):
        if deadline is not None and time.perf_counter() > deadline:
            break
        info["passes"] += 1
        start_key = leximax_key(state.beta, quantum, lex_depth)
        best_key, best_len = start_key, 0
        history: list[tuple[int, int]] = []
        up_ok = np.ones((n_st, k), dtype=bool)
        down_ok = np.ones((n_st, k), dtype=bool)
        for _step in range(n):
            found = _best_count_swap(state, quantum, lex_depth, up_ok, down_ok)
            if found is None:
                break
            key, (a_, b_, s_, t_) = found
            history.append(state.count_swap(a_, b_, s_, t_))
            down_ok[s_, b_] = down_ok[t_, a_] = False
            up_ok[s_, a_] = up_ok[t_, b_] = False
            if _lex_better(key, best_key):
                best_key, best_len = key, len(history)
            if deadline is not None and time.perf_counter() > deadline:
                break
        for u, v in reversed(history[best_len:]):
            state.swap_vertices(u, v)
        info["moves"] += best_len
        kept += best_len
        if best_len == 0:
            break
    return kept


def _set_column_pair(state: _CountState, a_: int, b_: int, xa_new: np.ndarray) -> None:
    """Move replicas between servers a and b so that column a of x becomes ``xa_new`` (column b
    follows, the pair's totals being fixed); each replica moved is the one whose move changes
    the cut least at that moment (ties: lowest vertex)."""
    st, sv = state.st, state.sv
    for s_ in np.nonzero(xa_new != state.x[:, a_])[0]:
        d = int(xa_new[s_] - state.x[s_, a_])
        src, dst = (b_, a_) if d > 0 else (a_, b_)
        for _ in range(abs(d)):
            vs = np.nonzero((st == s_) & (sv == src))[0]
            inc = state.conn[vs, src] - state.conn[vs, dst]
            v = int(vs[int(np.argmin(inc))])
            state.conn[:, src] -= state.a[:, v]
            state.conn[:, dst] += state.a[:, v]
            sv[v] = dst
            state.x[s_, src] -= 1
            state.x[s_, dst] += 1
    state.beta = stage_times(state.job, state.cluster, state.x)


def pair_reoptimise(state: _CountState, quantum: float, depth: int, *, max_splits: int = 20_000,
                    deadline: float | None = None) -> int:
    """One sweep over server pairs (a < b): replace columns a and b of x by the leximax-best
    split of their combined stage counts (all splits enumerated, vectorised, when there are at
    most ``max_splits`` of them), if strictly leximax-better. A move of this neighbourhood can do
    what several swaps would have to do at once (e.g. gather a stage while pushing out two
    others). Returns the number of pairs changed."""
    job, k = state.job, state.k
    n_st = state.x.shape[0]
    changed = 0
    for a_ in range(k):
        for b_ in range(a_ + 1, k):
            if deadline is not None and time.perf_counter() > deadline:
                return changed
            x = state.x
            y = x[:, a_] + x[:, b_]
            ca = int(x[:, a_].sum())
            cb = int(x[:, b_].sum())
            lo = np.maximum(0, y - cb)
            hi = np.minimum(y, ca)
            free = np.nonzero(hi > lo)[0]
            if free.size == 0 or float(np.prod((hi[free] - lo[free] + 1).astype(float))) > max_splits:
                continue
            grids = np.meshgrid(*[np.arange(lo[s_], hi[s_] + 1) for s_ in free], indexing="ij")
            splits = np.tile(lo, (grids[0].size, 1))
            for j, s_ in enumerate(free):
                splits[:, s_] = grids[j].ravel()
            splits = splits[splits.sum(axis=1) == ca]
            if len(splits) <= 1:
                continue
            cols_a = splits.T
            cols_b = y[:, None] - cols_a
            ba = stage_times(job, state.cluster, cols_a)
            bb = stage_times(job, state.cluster, cols_b)
            qa = np.where(np.isnan(ba), -np.inf, np.round(ba / quantum)).T
            qb = np.where(np.isnan(bb), -np.inf, np.round(bb / quantum)).T
            cur = np.where(np.isnan(state.beta), -np.inf, np.round(state.beta / quantum))
            rest = np.delete(cur, [a_, b_], axis=1).ravel()
            keys = np.concatenate([np.broadcast_to(rest, (len(splits), rest.size)), qa, qb], axis=1)
            keys = -np.sort(-keys, axis=1)[:, :depth]
            i_best = int(np.lexsort(keys.T[::-1])[0])
            if _lex_better(keys[i_best], leximax_key(state.beta, quantum, depth)):
                _set_column_pair(state, a_, b_, splits[i_best])
                changed += 1
    return changed


# ----------------------------------------------------------------------------- co-location: units
def _units(n: int, groups: list[list[int]]) -> tuple[list[list[int]], np.ndarray]:
    """The placement units: each ``colocate`` group, then every other vertex alone; and the unit
    of each vertex."""
    unit_of = np.full(n, -1, dtype=np.int64)
    units: list[list[int]] = []
    for g in groups:
        unit_of[g] = len(units)
        units.append(g)
    for v in np.nonzero(unit_of < 0)[0]:
        unit_of[v] = len(units)
        units.append([int(v)])
    return units, unit_of


def unit_alpha_descent(job: PipelineJob, cluster: Any, unit_servers: np.ndarray, composition: np.ndarray, k: int, *,
                       lex_depth: int = 8, deadline: float | None = None) -> tuple[np.ndarray, int]:
    """Steepest descent on the truncated leximax order of eq. (7)'s beta by swaps of two units of
    equal size and different stage compositions (``composition[u, s]``: unit u's replicas of
    stage s) on different servers; each move is the leximax-best such swap, taken only when
    strictly better (so alpha never rises and the search ends). Of the units of one composition
    on a server, the lowest-numbered moves. Scores every (server pair, class pair) per move:
    O(k^2) calls of :func:`.stage_times`. Returns the units' servers and the moves made."""
    sv = np.asarray(unit_servers, dtype=np.int64).copy()
    classes, cls = np.unique(composition, axis=0, return_inverse=True)
    cls = np.asarray(cls).ravel()
    size = classes.sum(axis=1)
    pairs = [(c1, c2) for c1 in range(len(classes)) for c2 in range(len(classes))
             if c1 != c2 and size[c1] == size[c2]]
    n_st = composition.shape[1]
    x = np.zeros((n_st, k), dtype=np.int64)
    np.add.at(x.T, sv, composition)
    beta = stage_times(job, cluster, x)
    if not pairs or k < 2:
        return sv, 0
    quantum = _QUANTUM * max(float(np.nanmax(beta)), 1e-300)
    depth = max(1, min(int(lex_depth), n_st * k))
    delta = np.array([classes[c2] - classes[c1] for c1, c2 in pairs])  # server a: loses c1, gains c2
    moves = 0
    while deadline is None or time.perf_counter() <= deadline:
        present = np.zeros((len(classes), k), dtype=np.int64)
        np.add.at(present, (cls, sv), 1)
        cur = np.where(np.isnan(beta), -np.inf, np.round(beta / quantum))
        best: tuple[np.ndarray, int, int, int] | None = None
        for a_ in range(k):
            for b_ in range(k):
                ok = [i for i, (c1, c2) in enumerate(pairs) if a_ != b_ and present[c1, a_] and present[c2, b_]]
                if not ok:
                    continue
                cols_a = x[:, a_][:, None] + delta[ok].T
                cols_b = x[:, b_][:, None] - delta[ok].T
                qa = np.where(np.isnan(ba := stage_times(job, cluster, cols_a)), -np.inf, np.round(ba / quantum)).T
                qb = np.where(np.isnan(bb := stage_times(job, cluster, cols_b)), -np.inf, np.round(bb / quantum)).T
                rest = np.delete(cur, [a_, b_], axis=1).ravel()
                keys = np.concatenate([np.broadcast_to(rest, (len(ok), rest.size)), qa, qb], axis=1)
                keys = -np.sort(-keys, axis=1)[:, :depth]
                i = int(np.lexsort(keys.T[::-1])[0])
                if best is None or _lex_better(keys[i], best[0]):
                    best = (keys[i], a_, b_, ok[i])
        if best is None or not _lex_better(best[0], leximax_key(beta, quantum, depth)):
            break
        _key, a_, b_, i = best
        c1, c2 = pairs[i]
        u = int(np.nonzero((cls == c1) & (sv == a_))[0][0])
        v = int(np.nonzero((cls == c2) & (sv == b_))[0][0])
        sv[u], sv[v] = b_, a_
        x[:, a_] += delta[i]
        x[:, b_] -= delta[i]
        beta = stage_times(job, cluster, x)
        moves += 1
    return sv, moves


def vertex_alpha_descent(job: PipelineJob, cluster: Any, sv: np.ndarray, groups: list[list[int]], *,
                         lex_depth: int = 8, deadline: float | None = None) -> tuple[np.ndarray, int]:
    """Steepest descent on the truncated leximax order of the vertices' beta
    (:func:`.model.vertex_times`: eq. (7) extended, Sec. VI) by swaps of two placement units of
    equal size on different servers (each ``groups`` entry a unit, every other vertex a unit of
    one), so every server keeps its count and every group its server; each move is the
    leximax-best such swap, taken only when strictly better (alpha never rises; the search ends).
    For a job with MoE stages, whose alpha depends on which expert groups share a server and not
    only on the counts. O(U^2) calls of ``vertex_times`` per move (U units). Returns the
    vertices' servers and the moves made."""
    units, unit_of = _units(len(sv), groups)
    sv = np.asarray(sv, dtype=np.int64).copy()
    size = np.array([len(u) for u in units])
    beta = vertex_times(job, cluster, sv)
    quantum = _QUANTUM * max(float(beta.max()), 1e-300)
    depth = max(1, min(int(lex_depth), len(sv)))
    cur = leximax_key(beta, quantum, depth)
    moves = 0
    while deadline is None or time.perf_counter() <= deadline:
        best: tuple[np.ndarray, int, int] | None = None
        for a_ in range(len(units)):
            for b_ in range(a_ + 1, len(units)):
                m_a, m_b = int(sv[units[a_][0]]), int(sv[units[b_][0]])
                if size[a_] != size[b_] or m_a == m_b:
                    continue
                trial = sv.copy()
                trial[units[a_]] = m_b
                trial[units[b_]] = m_a
                key = leximax_key(vertex_times(job, cluster, trial), quantum, depth)
                if best is None or _lex_better(key, best[0]):
                    best = (key, a_, b_)
        if best is None or not _lex_better(best[0], cur):
            break
        cur, a_, b_ = best
        m_a, m_b = int(sv[units[a_][0]]), int(sv[units[b_][0]])
        sv[units[a_]] = m_b
        sv[units[b_]] = m_a
        moves += 1
    return sv, moves


def _refine_units(job: PipelineJob, cluster: Any, sv0: np.ndarray, k: int, groups: list[list[int]], objective: str,
                  *, max_passes: int, polish: bool, lex_depth: int,
                  deadline: float | None) -> tuple[np.ndarray, dict[str, Any]]:
    """The searches under co-location (module docstring): on the graph of units (each group
    contracted to one vertex, its inner edges dropped, so a unit's cut is its vertices'), only
    swaps of two units of equal size, so every server keeps its count and every group stays whole."""
    units, unit_of = _units(len(sv0), groups)
    member = np.zeros((len(sv0), len(units)))
    member[np.arange(len(sv0)), unit_of] = 1.0
    a_u = member.T @ job.adjacency @ member
    np.fill_diagonal(a_u, 0.0)
    size = np.array([len(u) for u in units])
    sv_u = sv0[[u[0] for u in units]]
    info: dict[str, Any] = {"units": len(units)}
    if objective == "cut":
        sv_u, stats = kl_cut(a_u, sv_u, k, max_passes=max_passes, same_stage=size, deadline=deadline)
        info.update(passes=stats["passes"], swaps=stats["swaps"])
    else:
        composition = np.zeros((len(units), len(job.stages)), dtype=np.int64)
        np.add.at(composition, (unit_of, job.vertex_stage), 1)
        sv_u, moves = unit_alpha_descent(job, cluster, sv_u, composition, k, lex_depth=lex_depth, deadline=deadline)
        info.update(passes=0, moves=moves, exact_counts=False, stage_search="not run")
        if polish:  # swaps of units of one composition leave the counts, hence alpha, as they are
            same = np.asarray(np.unique(composition, axis=0, return_inverse=True)[1]).ravel()
            sv_u, pst = kl_cut(a_u, sv_u, k, max_passes=max_passes, same_stage=same, deadline=deadline)
            info.update(polish_swaps=pst["swaps"])
    return sv_u[unit_of], info


# ----------------------------------------------------------------------------- driver
def refine_mapping(instance: GpuMappingInstance, *, objective: str = "cut", seed: int | None = None,
                   max_passes: int = 20, time_limit: float | None = None,
                   polish: bool = True, lex_depth: int = 8,
                   exact_states: int = DEFAULT_MAX_STATES,
                   stage_nodes: int = DEFAULT_STAGE_NODES,
                   colocate: Sequence[Sequence[int]] | None = None) -> tuple[list[list[int]], dict[str, Any]]:
    """Heavy-Edge then refinement; returns ``(assignment, info)``. See :func:`heavy_edge_refine`.

    ``colocate``: groups of vertex indices that must each stay on one server (Heavy-Edge's
    keyword, :mod:`.heavy_edge`); the searches then move whole groups only (module docstring,
    "Co-location"), and the exact count searches do not run. ``None`` on a job with
    tensor-parallel stages means the job's own groups, each replica's slices
    (:func:`.model.colocation_groups`, Sec. VI's one-server rule). On ``alpha``, a job with MoE
    stages (whose alpha depends on which expert groups share a server, not only on the counts the
    other alpha searches see) takes :func:`vertex_alpha_descent` instead, timed by
    :func:`.model.vertex_times`; the final check times such jobs by ``vertex_times`` too.

    ``exact_states`` (alpha only): when the job's count space ``prod_s (k_s + 1)`` has at most
    this many states, the count matrix is the exact optimum of :mod:`.count_dp` instead of the
    leximax descent (0 disables it); ``info["exact_counts"]`` says which ran. Otherwise the branch
    and bound over stages of :mod:`.stage_dp` runs first, within ``stage_nodes`` nodes (0 disables
    it; ``info["stage_search"]``: ``complete``, ``budget`` or ``not run``; it runs only when
    every stage has at most ``stage_dp.MAX_STAGE_REPLICAS`` replicas): when it completes, its
    answer is the proven optimum (``exact_counts`` True) and the descent is skipped; when it
    hits the budget, the descent starts from the best mapping it found (Heavy-Edge's if none).
    The stage search is bounded by its node budget (deterministic), not by ``time_limit``.

    ``info``: ``start_objective`` and ``objective`` (the chosen objective of the Heavy-Edge start
    and of the result), ``improved``, ``passes``/``swaps`` (cut) or ``moves``/``polish_swaps``
    (alpha), ``fallback`` (True if the exact re-evaluation rejected the refined mapping).

    References
    ----------
    Kernighan, Lin, "An Efficient Heuristic Procedure for Partitioning Graphs", Bell System
    Technical Journal 49(2), 1970 (the swaps on ``cut``); on ``alpha``, eq. (7) of Luo et al.,
    "Prediction-Assisted Online Distributed Deep Learning Workload Scheduling in GPU Clusters",
    Sec. III-B, a leximax descent or the exact count DP of :mod:`.count_dp`; started from that
    paper's Heavy-Edge (Sec. IV-B).

    Notes
    -----
    Guarantee: ``info["objective"] <= info["start_objective"]``, the Heavy-Edge start's value
    (same ``seed``); optimal counts on ``alpha`` when ``info["exact_counts"]``; no approximation
    bound otherwise.

    Units: ``alpha`` in seconds per iteration, ``cut`` in bytes per iteration, and ``info``'s
    objectives in the same unit; ``time_limit`` in seconds.

    Examples
    --------
    >>> from optkit.formulations.gpu_mapping.model import Cluster, GpuMappingInstance, PipelineJob, Stage
    >>> job = PipelineJob((Stage(4, .1, .2, 0, 0, 1e8),), "ring")
    >>> inst = GpuMappingInstance(Cluster(8, 1.25e9, 3e11), job, (2, 2))
    >>> a, info = refine_mapping(inst, objective="cut", seed=0)
    >>> sorted(a[0]), info["objective"] <= info["start_objective"]
    ([0, 0, 1, 1], True)
    """
    if objective not in OBJECTIVES:
        raise InputError("objective", f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}", problem=PROBLEM)
    time_limit = check_time_limit(time_limit, problem=PROBLEM)  # the checks of every entry (optkit.validation)
    seed = check_seed(seed, problem=PROBLEM)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    job, cluster = instance.job, instance.cluster
    if colocate is None and not job.is_plain:  # Sec. VI: each tensor-parallel replica's slices on one server
        colocate = colocation_groups(job) or None
    k = len(instance.servers)
    start = heavy_edge_job(job, instance.servers, seed=seed, colocate=colocate)
    sv0 = vertex_servers(job, start)
    groups = check_colocate(colocate, job.n_replicas)[0] if colocate is not None else []

    def value(sv: np.ndarray) -> float:
        if objective == "cut":
            return cut_weight(job, sv)
        if not job.is_plain:  # eq. (7) extended (Sec. VI), the function evaluate times such a job with
            return float(vertex_times(job, cluster, sv).max())
        x = np.zeros((len(job.stages), k), dtype=np.int64)
        np.add.at(x, (job.vertex_stage, sv), 1)
        return alpha_from_counts(job, cluster, x)

    info: dict[str, Any] = {"objective_name": objective}
    if objective == "alpha" and job.has_experts:  # alpha depends on which expert groups share a server
        sv, moves = vertex_alpha_descent(job, cluster, sv0, groups, lex_depth=lex_depth, deadline=deadline)
        info.update(passes=0, moves=moves, exact_counts=False, stage_search="not run")
    elif groups:
        sv, unit_info = _refine_units(job, cluster, sv0, k, groups, objective, max_passes=max_passes, polish=polish,
                                      lex_depth=lex_depth, deadline=deadline)
        info.update(unit_info)
    elif objective == "cut":
        sv, stats = kl_cut(job.adjacency, sv0, k, max_passes=max_passes, deadline=deadline)
        info.update(passes=stats["passes"], swaps=stats["swaps"])
    else:
        exact = optimal_alpha_counts(job, cluster, list(instance.servers), max_states=exact_states) \
            if exact_states > 0 else None
        info["stage_search"] = "not run"
        start_sv = sv0
        if exact is None and stage_nodes > 0 and int(job.replicas.max()) <= MAX_STAGE_REPLICAS:
            # the branch and bound over stages (stage_dp.py), for a mapping better than Heavy-Edge's
            x0 = np.zeros((len(job.stages), k), dtype=np.int64)
            np.add.at(x0, (job.vertex_stage, sv0), 1)
            found_alpha, x_found, complete = stage_dfs_alpha(job, cluster, list(instance.servers),
                                                             upper=alpha_from_counts(job, cluster, x0),
                                                             max_nodes=stage_nodes)
            info["stage_search"] = "complete" if complete else "budget"
            if x_found is not None:
                start_sv = vertex_servers(job, assignment_from_counts(job, x_found))
            if complete:  # proven: the optimum is x_found's, or Heavy-Edge's counts when none is better
                exact = (found_alpha, x_found)
        info["exact_counts"] = exact is not None
        if exact is not None:
            sv = start_sv if exact[1] is None else vertex_servers(job, assignment_from_counts(job, exact[1]))
            info.update(passes=0, moves=0)
        else:  # the leximax descent, from the stage search's mapping when it found a better one
            sv, stats = alpha_kl(job, cluster, start_sv, k, max_passes=max_passes, lex_depth=lex_depth,
                                 deadline=deadline)
            info.update(passes=stats["passes"], moves=stats["moves"])
        if polish:
            sv, pst = kl_cut(job.adjacency, sv, k, max_passes=max_passes, same_stage=job.vertex_stage,
                             deadline=deadline)
            info.update(polish_swaps=pst["swaps"])
    v0, v1 = value(sv0), value(sv)
    fallback = bool(v1 > v0)
    if fallback:
        sv, v1 = sv0, v0
    info.update(start_objective=v0, objective=v1, improved=bool(v1 < v0), fallback=fallback,
                wall_time_s=time.perf_counter() - t0,
                hit_time_limit=bool(deadline is not None and time.perf_counter() > deadline))
    return assignment_from_vertex_servers(job, sv), info


def heavy_edge_refine(instance: GpuMappingInstance, *, objective: str = "cut", seed: int | None = None,
                      max_passes: int = 20, time_limit: float | None = None,
                      exact_states: int = DEFAULT_MAX_STATES,
                      colocate: Sequence[Sequence[int]] | None = None) -> list[list[int]]:
    """Heavy-Edge, then Kernighan-Lin (1970) style swaps on ``objective`` (``cut`` or ``alpha``).

    See the module docstring for the two searches. ``max_passes`` bounds the KL passes (cut, and
    the same-stage cut polish after the alpha descent); ``time_limit`` (seconds) stops the
    search early, keeping the best mapping so far. ``colocate``: groups of vertex indices that
    must each stay on one server (module docstring, "Co-location"). Returns the solution's
    ``assignment``.

    References
    ----------
    Kernighan, Lin, "An Efficient Heuristic Procedure for Partitioning Graphs", Bell System
    Technical Journal 49(2), 1970 (the swap passes); started from Heavy-Edge, Luo et al.,
    "Prediction-Assisted Online Distributed Deep Learning Workload Scheduling in GPU Clusters",
    Sec. IV-B, on the objectives of Sec. III-B eq. (7) (``alpha``) and Sec. IV-B (``cut``).

    Notes
    -----
    Guarantee: the result is never worse than Heavy-Edge's (same ``seed``) on ``objective``; no
    approximation bound is proven.

    Units: ``alpha`` in seconds per iteration, ``cut`` in bytes per iteration; ``time_limit`` in
    seconds; the assignment is a server index per replica, per stage.

    Examples
    --------
    >>> from optkit.formulations.gpu_mapping.model import Cluster, GpuMappingInstance, PipelineJob, Stage
    >>> job = PipelineJob((Stage(4, .1, .2, 0, 0, 1e8),), "ring")
    >>> inst = GpuMappingInstance(Cluster(8, 1.25e9, 3e11), job, (2, 2))
    >>> sorted(heavy_edge_refine(inst, objective="alpha")[0])
    [0, 0, 1, 1]
    """
    return refine_mapping(instance, objective=objective, seed=seed, max_passes=max_passes,
                          time_limit=time_limit, exact_states=exact_states, colocate=colocate)[0]


def run_heavy_edge_refine(instance: GpuMappingInstance, *, objective: str = "cut", time_limit: float | None = None,
                          seed: int | None = None, max_passes: int = 20, polish: bool = True, lex_depth: int = 8,
                          exact_states: int = DEFAULT_MAX_STATES, stage_nodes: int = DEFAULT_STAGE_NODES) -> Result:
    """Algorithm-table entry ``heavy-edge-refine``: :func:`refine_mapping` with its tuning keywords."""
    assignment, info = refine_mapping(instance, objective=objective, seed=seed, time_limit=time_limit,
                                      max_passes=max_passes, polish=polish, lex_depth=lex_depth,
                                      exact_states=exact_states, stage_nodes=stage_nodes)
    return Result(Status.FEASIBLE, solution={"assignment": assignment}, info=info)
