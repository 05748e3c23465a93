"""alpha (eq. 7) by a depth-first branch and bound over the *stages*, for jobs with few replicas
per stage (GPT-175B's 16 x 2 in Table II), whatever the number of servers.

alpha is ``max { beta[s, m] : x[s, m] > 0 }`` and ``beta[s, m]`` reads only x[s-1, m], x[s, m]
and x[s+1, m] (eqs. 4-6, :func:`.model.stage_times`). Placing the stages in order, the cells of
stage s-1 are final once stage s is placed, so the state after placing stage s is, per server,
the triple (free GPUs left, x[s-1, m], x[s, m]); servers with equal triples are interchangeable
(every server has the same g and bandwidths), so states are compared as *sorted* tuples of
triples, and a stage's k replicas are split over the servers in every way up to that symmetry
(equal servers take non-increasing amounts). The cell values come from
:func:`.model.stage_times` itself, tabulated once per (job, cluster) for every neighbour triple.
This complements :mod:`.count_dp`, whose state is the vector of replicas left per stage
(``prod_s (k_s + 1)`` states, 43 million for 16 x 2).

Pruning, all of it exact (each bound is a lower bound on the alpha of every completion): a
branch stops when its closed cells or a bound reach the best alpha known (the search looks
only for strictly better mappings). The bounds of a child state are

* per server, the least largest cell it can still get from its own future column
  (:func:`_future_tables`: one server alone, a min-max over its later counts, which also
  charges a server whose free GPUs cannot hold a stage's replicas together);
* the cells of the stage just placed sharing the next stage's replicas (:func:`_joint_cells`);
* servers with one free GPU and none of the stage just placed: each will hold one replica of a
  later stage alone, at most k_t of them per stage t, so the n-th smallest of those isolated
  cells bounds alpha;
* the stages left: when the free GPUs can hold at most ``rest - q`` of them whole, the q-th
  smallest of their split bounds (:func:`_split_bounds`);

and a state already searched at a value at most the current one is skipped. The search stops
as soon as it meets the same bounds taken at the root (optimal). A node budget bounds the work:
a search that hits it claims nothing beyond the mapping it found. Deterministic (no
randomness; children in a fixed order: bound, then fewer servers used, then smaller free
GPUs first).

Measured on Table II's GPT-175B cases (2026-11-25, 2-core machine at load 2.5-3.5), as
heavy-edge-refine runs it (Heavy-Edge's alpha, seed 0, as the bound to beat): all 20 searches
complete, so all 20 answers are proven optimal (and equal CP-SAT's): 18 within 2,000 nodes, 19
within 5,000, 20 within 10,000 (the default budget is 20,000); median ~1 ms, the three slowest
(whose optimum 147.357 s is above the root bound 147.102 s) 25-100 ms. On the shipped medium
and large suites' jobs of at most 4 replicas per stage it completes on 7 of 8 (2.8-21 ms,
against the descent's 11-700 ms) and hits the budget on the 42-server ``t5-11b_pipe16x4`` job
(~0.7 s spent before the descent runs).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .model import Cluster, PipelineJob, stage_times

__all__ = ["stage_dfs_alpha", "DEFAULT_STAGE_NODES", "MAX_STAGE_REPLICAS"]

DEFAULT_STAGE_NODES = 20_000
MAX_STAGE_REPLICAS = 4
"""The search runs only on jobs whose stages all have at most this many replicas: a stage's
splits over the servers are enumerated at every node, and their number grows as
``servers ** replicas``."""


@lru_cache(maxsize=32)
def _cell_tables(job: PipelineJob, cluster: Cluster) -> list[np.ndarray]:
    """``tab[s][a, b, c]``: beta of one cell of stage s with x[s-1] = a, x[s] = b >= 1,
    x[s+1] = c on its server (a, c range over 0..k of the neighbour stage, 0 where it has none),
    computed by :func:`.model.stage_times` itself on one column per triple."""
    k = [int(v) for v in job.replicas]
    n_st = len(k)
    out = []
    for s in range(n_st):
        ka = k[s - 1] if s > 0 else 0
        kc = k[s + 1] if s + 1 < n_st else 0
        grid = np.stack(np.meshgrid(np.arange(ka + 1), np.arange(k[s] + 1), np.arange(kc + 1), indexing="ij"),
                        axis=-1).reshape(-1, 3)
        cols = np.zeros((n_st, len(grid)), dtype=np.int64)
        if s > 0:
            cols[s - 1] = grid[:, 0]
        cols[s] = grid[:, 1]
        if s + 1 < n_st:
            cols[s + 1] = grid[:, 2]
        beta = stage_times(job, cluster, cols)[s]
        out.append(np.nan_to_num(beta, nan=-np.inf).reshape(ka + 1, k[s] + 1, kc + 1))
    return [t.tolist() for t in out]  # nested lists: scalar look-ups in the search are faster


@lru_cache(maxsize=32)
def _future_tables(job: PipelineJob, cluster: Cluster, r_max: int) -> list:
    """``fut[s][a][b][r]``: a lower bound on the largest cell a server can still get from stage s
    on, when it holds x[s-1] = a, x[s] = b and has r free GPUs left for the later stages: the
    least, over the server's own future column (x[t] <= k_t, summing to r), of the largest of its
    cells of stages s.. (``-inf`` when it holds none; ``inf`` when r cannot be filled). Each
    server's cells depend only on its own column, so this is exact for one server alone and a
    bound for all of them (the servers' columns compete for the replicas). Computed backwards
    over the stages (min-max over the next stage's count c)."""
    k = [int(v) for v in job.replicas]
    n_st = len(k)
    tab = [np.asarray(t, dtype=float) for t in _cell_tables(job, cluster)]
    r = np.arange(r_max + 1)
    out: list = [None] * n_st
    # last stage: no later stage, r must be 0
    t = tab[-1][:, :, 0].copy()  # (a, b)
    t[:, 0] = -np.inf
    last = np.where(r[None, None, :] == 0, t[:, :, None], np.inf)
    out[-1] = last
    for s in range(n_st - 2, -1, -1):
        cell = tab[s].copy()  # (a, b, c)
        cell[:, 0, :] = -np.inf
        nxt = out[s + 1]  # (b, c, r)
        best = np.full(cell.shape[:2] + (r_max + 1,), np.inf)
        for c in range(min(k[s + 1], r_max) + 1):  # more than r_max replicas never fit
            shifted = np.full((nxt.shape[0], r_max + 1), np.inf)  # (b, r): nxt[b, c, r - c]
            shifted[:, c:] = nxt[:, c, :r_max + 1 - c]
            best = np.minimum(best, np.maximum(cell[:, :, c][:, :, None], shifted[None, :, :]))
        out[s] = best
    return [o.tolist() for o in out]


@lru_cache(maxsize=4096)
def _patterns(groups: tuple[tuple[int, int], ...], need: int) -> tuple[tuple[tuple[int, int, int], ...], ...]:
    """Every way to place ``need`` replicas on servers up to symmetry: ``groups`` lists (free
    GPUs, number of interchangeable servers); the servers of one group take non-increasing
    amounts, each at most its free GPUs. Returns tuples of (group, member, amount > 0), the
    largest amounts first in each group, groups in the given order."""
    out: list[tuple[tuple[int, int, int], ...]] = []
    flat = [(g, j, free) for g, (free, count) in enumerate(groups) for j in range(count)]
    tail = [0] * (len(flat) + 1)  # free GPUs from position i on
    for i in range(len(flat) - 1, -1, -1):
        tail[i] = tail[i + 1] + flat[i][2]

    def rec(i: int, left: int, prev: int, acc: list[tuple[int, int, int]]) -> None:
        if left == 0:
            out.append(tuple(acc))
            return
        if i == len(flat) or tail[i] < left:
            return
        g, j, free = flat[i]
        top = min(free, left, prev if j > 0 else left)
        for amt in range(top, -1, -1):
            if amt:
                acc.append((g, j, amt))
            rec(i + 1, left - amt, amt, acc)
            if amt:
                acc.pop()

    rec(0, need, need, [])
    return tuple(out)


def _split_bounds(k: list[int], tab: list) -> list[float]:
    """Per stage, a lower bound on alpha when the stage is split over two or more servers: the
    least, over splits of its k replicas into parts b_i (two parts or more) and over shares a_i,
    c_i of the neighbour stages' replicas (sum a_i <= k[s-1], sum c_i <= k[s+1]), of
    max_i beta(a_i, b_i, c_i); enumerated for k <= 4 and neighbours of at most 8 replicas, else
    the least beta of any split cell."""
    out = []
    for s, t in enumerate(tab):
        ks = k[s]
        if ks == 1:
            out.append(np.inf)
            continue
        ka, kc = len(t) - 1, len(t[0][0]) - 1
        cell = min(t[a][b][c] for a in range(ka + 1) for b in range(1, ks) for c in range(kc + 1))
        if ks > 4 or ka > 8 or kc > 8:
            out.append(cell)
            continue
        best = np.inf

        def parts(left: int, top: int) -> list[list[int]]:
            if left == 0:
                return [[]]
            return [[p] + r for p in range(min(left, top), 0, -1) for r in parts(left - p, p)]

        for split in parts(ks, ks - 1):
            # each part's cell takes some a_i, c_i; the max is least when the shares are spread:
            # enumerate the shares (small: k <= 4 parts, neighbours' k small in practice)
            def rec(i: int, la: int, lc: int, cur: float) -> None:
                nonlocal best
                if cur >= best:
                    return
                if i == len(split):
                    best = cur
                    return
                for a in range(min(la, ka) + 1):
                    for c in range(min(lc, kc) + 1):
                        rec(i + 1, la - a, lc - c, max(cur, t[a][split[i]][c]))

            rec(0, ka, kc, -np.inf)
        out.append(max(best, cell))
    return out


def _joint_cells(t: list, cells: list[tuple[int, int, int]], k_next: int, floor_: float,
                 cap: float) -> float:
    """A lower bound on the largest of a stage's cells ``(a, b, free left)`` on several servers:
    the least, over shares c_i of the next stage's k_next replicas (sum c_i <= k_next,
    c_i <= the server's free GPUs left), of max_i beta(a_i, b_i, c_i); at least ``floor_``;
    returns ``cap`` as soon as the bound reaches it."""
    best = cap

    def rec(i: int, left: int, cur: float) -> None:
        nonlocal best
        if cur >= best:
            return
        if i == len(cells):
            best = cur
            return
        a, b, free = cells[i]
        row = t[a][b]
        for c in range(min(left, free) + 1):
            v = row[c]
            rec(i + 1, left - c, v if v > cur else cur)

    rec(0, k_next, floor_)
    return best


def stage_dfs_alpha(job: PipelineJob, cluster: Cluster, caps: list[int] | tuple[int, ...], *,
                    upper: float = float("inf"),
                    max_nodes: int = DEFAULT_STAGE_NODES) -> tuple[float, np.ndarray | None, bool]:
    """The branch and bound over stages of this module, for the least alpha below ``upper``.

    Children are tried in order of their lower bound (the closed cells of stage s-1 and, for stage
    s, the least beta any later stage could give its cells), then fewer servers used; every
    mapping found lowers ``upper``; a state already exhausted at a value at most the current one
    is skipped. Stops after ``max_nodes`` expanded states. Returns ``(value, x, complete)``: x
    the best count matrix found with alpha ``value`` < the initial ``upper`` (``None`` and
    ``upper`` when none was found), and ``complete`` True when the search ran to its end (then
    ``value`` is the optimum, provided a mapping with alpha ``upper`` exists).

    References
    ----------
    Luo, Liu, Lee, Shroff, "Prediction-Assisted Online Distributed Deep Learning Workload
    Scheduling in GPU Clusters", Sec. III-B, eqs. (4)-(7) (the objective searched).

    Notes
    -----
    Guarantee: when ``complete``, no mapping has alpha below ``value`` (exact, by exhaustion with
    exact bounds); otherwise none beyond "x, if not None, has alpha ``value`` < ``upper``".

    Units: ``upper`` and ``value`` in seconds per iteration; ``caps`` in GPUs.

    Examples
    --------
    >>> from optkit.formulations.gpu_mapping.model import Cluster, PipelineJob, Stage, alpha_from_counts
    >>> job = PipelineJob((Stage(2, .1, .2, 0, 1e6, 2e9), Stage(2, .1, .2, 1e6, 0, 2e9)), "ring")
    >>> cluster = Cluster(8, 1.25e9, 3e11)
    >>> value, x, complete = stage_dfs_alpha(job, cluster, [2, 2])
    >>> complete, x.tolist(), value == alpha_from_counts(job, cluster, x)
    (True, [[2, 0], [0, 2]], True)
    """
    k = [int(v) for v in job.replicas]
    n_st, n_m = len(k), len(caps)
    tab = _cell_tables(job, cluster)
    split_lb = _split_bounds(k, tab)
    # per suffix s..S-1: the least k and the split bounds sorted (the q-th smallest bounds alpha
    # when at least q of those stages must split)
    kmin = [min(k[s:]) for s in range(n_st)] + [1]
    suffix = [sorted(split_lb[s:]) for s in range(n_st)] + [[]]
    fut = _future_tables(job, cluster, max(int(c) for c in caps))
    # a server with one free GPU and none of the last stage placed holds one replica of a later
    # stage t alone (a cell with no neighbour): per suffix, those cells' values sorted, each
    # stage k_t times (its replicas fill at most k_t such servers)
    isolated = [sorted(v for t in range(s, n_st) for v in [tab[t][0][1][0]] * k[t]) for s in range(n_st)] + [[]]
    best = [float(upper), None]
    cols: list[list[int]] = []
    failed: dict[tuple, float] = {}
    nodes = [0]

    def children(s: int, value: float, servers: tuple) -> list[tuple[float, int, float, tuple]]:
        by: dict[tuple[int, int, int], list[int]] = {}
        for m, tri in enumerate(servers):
            if tri[0] > 0 or tri[2] > 0:
                by.setdefault(tri, []).append(m)
        keys = sorted(by)
        members = [by[tri] for tri in keys]
        placed = [m for m, tri in enumerate(servers) if tri[2]]  # servers holding stage s-1
        t_prev = tab[s - 1] if s > 0 else None
        t_s = tab[s]
        rest = n_st - s - 1
        kk = kmin[s + 1]
        whole = sum(f // kk for f, _a, _b in servers) if rest else 0
        sfx = suffix[s + 1]
        cap = best[0]
        fut_s = fut[s]
        # each server's future bound if it takes nothing of stage s, largest first
        idle = sorted(((fut_s[tri[2]][0][tri[0]], m) for m, tri in enumerate(servers)), reverse=True)[:k[s] + 1]
        ones = sum(1 for tri in servers if tri[0] == 1)
        iso = isolated[s + 1]
        out = []
        for pat in _patterns(tuple((tri[0], len(by[tri])) for tri in keys), k[s]):
            split = [(members[g][j], amt) for g, j, amt in pat]
            col = dict(split)
            v = value
            if t_prev is not None:  # close stage s-1's cells
                for m in placed:
                    _f, a, b = servers[m]
                    c = t_prev[a][b][col.get(m, 0)]
                    if c > v:
                        v = c
                if v >= cap:
                    continue
            bound = v
            for m, amt in split:
                f = servers[m][0]
                c = fut_s[servers[m][2]][amt][f - amt]
                if c > bound:
                    bound = c
            for c, m in idle:
                if m not in col:
                    if c > bound:
                        bound = c
                    break
            if bound >= cap:
                continue
            n1 = ones - sum(1 for m, _amt in split if servers[m][0] == 1)
            if n1 and iso[min(n1, len(iso)) - 1] > bound:
                bound = iso[min(n1, len(iso)) - 1]
                if bound >= cap:
                    continue
            if rest:
                # this stage's cells share the next stage's replicas, within the free GPUs left
                bound = _joint_cells(t_s, [(servers[m][2], amt, servers[m][0] - amt) for m, amt in split],
                                     k[s + 1], bound, cap)
                if bound >= cap:
                    continue
                w = whole - sum(servers[m][0] // kk - (servers[m][0] - amt) // kk for m, amt in split)
                q = rest - w
                if q > 0 and sfx[q - 1] > bound:
                    bound = sfx[q - 1]
                    if bound >= cap:
                        continue
            out.append((bound, len(split), v, split))
        out.sort(key=lambda z: (z[0], z[1]))
        return out

    def rec(s: int, value: float, servers: tuple) -> None:
        if nodes[0] >= max_nodes:
            return
        nodes[0] += 1
        if s == n_st:
            v = value
            t_last = tab[n_st - 1]
            for _f, a, b in servers:
                if b:
                    c = t_last[a][b][0]
                    if c > v:
                        v = c
            if v < best[0]:
                best[0], best[1] = v, [list(c) for c in cols]
                if v <= root:  # meets the lower bound: optimal, stop
                    done[0] = True
            return
        key = (s, tuple(sorted(servers)))
        seen = failed.get(key)
        if seen is not None and value >= seen:
            return
        for bound, _n, v, split in children(s, value, servers):
            if bound >= best[0]:
                break
            col = [0] * n_m
            for m, amt in split:
                col[m] = amt
            new = tuple((f - col[m], b, col[m]) for m, (f, _a, b) in enumerate(servers))
            cols.append(col)
            rec(s + 1, v, new)
            cols.pop()
            if nodes[0] >= max_nodes or done[0]:
                return
        if seen is None or value < seen:
            failed[key] = value

    # a lower bound at the root: every stage's least cell (split only, if no server holds it
    # whole), and the q-th smallest split bound when the servers can hold at most n - q stages whole
    root = -np.inf
    for s, t in enumerate(tab):
        whole = min(v for plane in t for v in plane[k[s]]) if max(caps) >= k[s] else np.inf
        root = max(root, min(whole, split_lb[s]))
    q = n_st - sum(int(c) // kmin[0] for c in caps)
    if q > 0:
        root = max(root, suffix[0][q - 1])
    for c in caps:  # each server alone (its own best column)
        root = max(root, min(fut[0][0][b][int(c) - b] for b in range(min(k[0], int(c)) + 1)))
    n1 = sum(1 for c in caps if c == 1)
    if n1:
        root = max(root, isolated[0][min(n1, len(isolated[0])) - 1])
    done = [best[0] <= root]
    if not done[0]:
        rec(0, -np.inf, tuple((int(c), 0, 0) for c in caps))
    complete = done[0] or nodes[0] < max_nodes
    x = None if best[1] is None else np.asarray(best[1], dtype=np.int64)
    return float(best[0]), x, complete

