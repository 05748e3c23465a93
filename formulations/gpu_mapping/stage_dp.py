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

Pruning, all of it exact: a branch stops when its closed cells, or a lower bound, reach the
best alpha known (the search looks only for strictly better mappings); the bounds are, for the
stage just placed, the least value its cells can take whatever the next stage does, and for the
stages left, the q-th smallest of their split bounds (:func:`_split_bounds`) when the free GPUs
can hold at most ``rest - q`` of them whole; a state already searched at a value at most the
current one is skipped. A node budget bounds the work: a search that hits it claims nothing
beyond the mapping it found. Deterministic (no randomness; children in a fixed order).

Measured on Table II's GPT-175B cases (2026-11-25): with a budget of 300 nodes the search
completes, and so proves its answer optimal, on the fragmented free-GPU patterns (5 of 20) in
2-3 ms; on the other patterns it does not complete within that budget, nor find the optimum
where Heavy-Edge misses it, and :mod:`.refine` falls back to its leximax descent.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .model import Cluster, PipelineJob, stage_times

__all__ = ["stage_dfs_alpha", "DEFAULT_STAGE_NODES"]

DEFAULT_STAGE_NODES = 300


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


def _splits(groups: list[tuple[tuple[int, int, int], list[int]]], need: int) -> list[list[tuple[int, int]]]:
    """Every way to place ``need`` replicas on the servers up to symmetry: ``groups`` lists
    (triple, servers with that triple); servers of one group take non-increasing amounts, each
    at most its free GPUs. Returns lists of (server, amount > 0)."""
    out: list[list[tuple[int, int]]] = []
    flat: list[tuple[int, int, bool]] = []  # (server, free, same group as the previous entry)
    for (free, _a, _b), members in groups:
        for j, m in enumerate(members):
            flat.append((m, free, j > 0))
    # capacity still available from position i on, to cut branches that cannot place the rest
    tail = [0] * (len(flat) + 1)
    for i in range(len(flat) - 1, -1, -1):
        tail[i] = tail[i + 1] + flat[i][1]

    def rec(i: int, left: int, prev: int, acc: list[tuple[int, int]]) -> None:
        if left == 0:
            out.append(list(acc))
            return
        if i == len(flat) or tail[i] < left:
            return
        m, free, same = flat[i]
        top = min(free, left, prev if same else left)
        for amt in range(top, -1, -1):
            if amt:
                acc.append((m, amt))
            rec(i + 1, left - amt, amt, acc)
            if amt:
                acc.pop()

    rec(0, need, need, [])
    return out


def _split_bounds(k: list[int], tab: list) -> list[float]:
    """Per stage, a lower bound on alpha when the stage is split over two or more servers: the
    least, over splits of its k replicas into parts b_i (two parts or more) and over shares a_i,
    c_i of the neighbour stages' replicas (sum a_i <= k[s-1], sum c_i <= k[s+1]), of
    max_i beta(a_i, b_i, c_i); enumerated for k <= 4 and neighbours of at most 8 replicas, else the least beta of any split
    cell."""
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
    # for a cell of stage s with x[s-1] = a, x[s] = b: the least beta over x[s+1]
    low = [[[min(row) for row in plane] for plane in t] for t in tab]
    split_lb = _split_bounds(k, tab)
    # per suffix s..S-1: the least k and the split bounds sorted (the q-th smallest bounds alpha
    # when at least q of those stages must split)
    kmin = [min(k[s:]) for s in range(n_st)] + [1]
    suffix = [sorted(split_lb[s:]) for s in range(n_st)] + [[]]
    best = [float(upper), None]
    cols: list[list[int]] = []
    failed: dict[tuple, float] = {}
    nodes = [0]

    def children(s: int, value: float, servers: tuple) -> list[tuple[float, int, tuple, list[int]]]:
        by: dict[tuple[int, int, int], list[int]] = {}
        for m, tri in enumerate(servers):
            if tri[0] > 0 or tri[2] > 0:
                by.setdefault(tri, []).append(m)
        out = []
        t_prev = tab[s - 1] if s > 0 else None
        lo = low[s]
        for split in _splits([(tri, by[tri]) for tri in sorted(by)], k[s]):
            col = [0] * n_m
            for m, amt in split:
                col[m] = amt
            v = value
            if t_prev is not None:
                for m, (_f, a, b) in enumerate(servers):
                    if b:
                        c = t_prev[a][b][col[m]]
                        if c > v:
                            v = c
            if v >= best[0]:
                continue
            bound = v
            for m, amt in split:
                c = lo[servers[m][2]][amt]
                if c > bound:
                    bound = c
            if bound >= best[0]:
                continue
            new = tuple((f - col[m], b, col[m]) for m, (f, _a, b) in enumerate(servers))
            rest = n_st - s - 1
            if rest:
                q = rest - sum(f // kmin[s + 1] for f, _b, _c in new)
                if q > 0 and suffix[s + 1][q - 1] > bound:
                    bound = suffix[s + 1][q - 1]
                    if bound >= best[0]:
                        continue
            out.append((bound, len(split), v, new, col))
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
            return
        key = (s, tuple(sorted(servers)))
        seen = failed.get(key)
        if seen is not None and value >= seen:
            return
        for bound, _n, v, new, col in children(s, value, servers):
            if bound >= best[0]:
                break
            cols.append(col)
            rec(s + 1, v, new)
            cols.pop()
            if nodes[0] >= max_nodes:
                return
        if seen is None or value < seen:
            failed[key] = value

    rec(0, -np.inf, tuple((int(c), 0, 0) for c in caps))
    complete = nodes[0] < max_nodes
    x = None if best[1] is None else np.asarray(best[1], dtype=np.int64)
    return float(best[0]), x, complete

