"""The exact alpha optimum by dynamic programming over the servers, for small count spaces.

alpha (eq. 7) is ``max { beta[s, m] : x[s, m] > 0 }``, and column m of beta depends only on column
m of the count matrix x (eqs. 4-6 read x[s-1, m], x[s, m], x[s+1, m]; :func:`.model.stage_times`).
So ``alpha(x) = max_m F(x[:, m])`` with ``F(col)`` the largest beta over the stages the column
holds, and the optimum is a min-max over ways to split the replica vector k into one column per
server (column m summing to the server's free GPUs c_m).

Dynamic programme: the state is the vector r of replicas still to place (0 <= r_s <= k_s),
numbered in mixed radix (k_s + 1); ``V_m(r)`` is the least possible max F over the first m
servers that leaves r. From r, server m may take any column ``col <= r`` with ``sum col = c_m``:
``V_{m+1}(r - col) = min over (r, col) of max(V_m(r), F(col))``. ``V_M(0)`` is the optimum (every
server is filled: sum c_m = sum k_s), and back-pointers give an optimal x. Each step is one
vectorised pass over (reachable states x columns of that size).

It runs only when the state space ``prod_s (k_s + 1)`` is at most ``max_states`` (VGG19's
Table II configuration: 1,500 states), else returns ``None``. heavy-edge-refine uses it for the
alpha objective (not registered as an algorithm of its own: every gpu-mapping algorithm takes
both objectives, and this one solves alpha only).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .model import Cluster, PipelineJob, stage_times

__all__ = ["optimal_alpha_counts", "assignment_from_counts", "DEFAULT_MAX_STATES"]

DEFAULT_MAX_STATES = 20_000


@lru_cache(maxsize=32)
def _tables(job: PipelineJob, cluster: Cluster) -> dict:
    """Per (job, cluster) (both immutable and compared by value, so equal jobs parsed from
    different instances share it): every state's digits, and per server size its columns
    (:func:`_columns`, filled on demand)."""
    radix = np.asarray(job.replicas, dtype=np.int64) + 1
    n_states = int(np.prod(radix))
    digits = np.stack(np.unravel_index(np.arange(n_states), tuple(radix)), axis=1).astype(np.int64)
    return {"digits": digits, "sums": digits.sum(axis=1), "columns": {}}


def _columns(tables: dict, job: PipelineJob, cluster: Cluster, c: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The columns of size c (a column is a state read as counts: its index is its offset), their
    F (the largest beta of the stages they hold, by :func:`.model.stage_times`) and which states
    can give each (``fits[state, column]``: the column is at most the state, componentwise)."""
    hit = tables["columns"].get(c)
    if hit is None:
        digits = tables["digits"]
        idx = np.flatnonzero(tables["sums"] == c)
        beta = stage_times(job, cluster, digits[idx].T)  # (S, columns), nan where the column holds none
        cols = digits[idx]
        fits = np.ones((len(digits), len(idx)), dtype=bool)
        for s in range(digits.shape[1]):   # componentwise, a stage at a time (no states x columns x stages array)
            fits &= digits[:, s, None] >= cols[None, :, s]
        hit = tables["columns"][c] = (idx, np.nanmax(beta, axis=0), fits)
    return hit


def optimal_alpha_counts(job: PipelineJob, cluster: Cluster, caps: list[int] | tuple[int, ...],
                         *, max_states: int = DEFAULT_MAX_STATES) -> tuple[float, np.ndarray] | None:
    """``(alpha*, x)``: the least alpha over all mappings of ``job`` onto servers with ``caps``
    free GPUs and an optimal count matrix x (S x M), or ``None`` when the state space exceeds
    ``max_states``. Ties: the first optimal column in the order of the enumeration."""
    k = np.asarray(job.replicas, dtype=np.int64)
    radix = k + 1
    n_states = int(np.prod(radix))
    if n_states > max_states:
        return None
    tables = _tables(job, cluster)
    digits = tables["digits"]
    columns = {int(c): _columns(tables, job, cluster, int(c)) for c in set(caps)}
    value = np.full(n_states, np.inf)
    start = n_states - 1  # r = k
    value[start] = 0.0
    back: list[tuple[np.ndarray, np.ndarray]] = []  # per server: for each new state, (previous state, column)
    for c in caps:
        col_idx, f, fits = columns[int(c)]
        reach = np.flatnonzero(np.isfinite(value))
        ri, cj = np.nonzero(fits[reach])
        prev = reach[ri]
        new = prev - col_idx[cj]
        val = np.maximum(value[prev], f[cj])
        order = np.lexsort((val, new))  # by new state, then value: the first of each group is its best
        new_s, first = np.unique(new[order], return_index=True)
        best = order[first]
        value = np.full(n_states, np.inf)
        value[new_s] = val[best]
        prev_of = np.full(n_states, -1, dtype=np.int64)
        col_of = np.full(n_states, -1, dtype=np.int64)
        prev_of[new_s] = prev[best]
        col_of[new_s] = col_idx[cj[best]]
        back.append((prev_of, col_of))
    if not np.isfinite(value[0]):  # pragma: no cover - sum caps = sum k always reaches 0
        return None
    x = np.zeros((len(k), len(caps)), dtype=np.int64)
    state = 0
    for m in range(len(caps) - 1, -1, -1):
        prev_of, col_of = back[m]
        x[:, m] = digits[col_of[state]]
        state = int(prev_of[state])
    return float(value[0]), x


def assignment_from_counts(job: PipelineJob, x: np.ndarray) -> list[list[int]]:
    """An assignment with count matrix x: stage s's replicas, in order, fill server 0's x[s, 0]
    slots, then server 1's, ..."""
    return [np.repeat(np.arange(x.shape[1]), x[s]).tolist() for s in range(len(job.stages))]

