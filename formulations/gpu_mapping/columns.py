"""The cut objective as a server-column (pattern) programme, for jobs whose cut is a function of the counts.

An equivalent reformulation of the stage-count model of :mod:`.exact` for the ``cut`` objective
when no stage has tree edges (``allreduce = ring``, or every stage of one replica): CP-SAT on it
proves the ``large`` suite's ring cases that the count model leaves open.

Why the cut separates by server
-------------------------------
With counts ``x[s, m]`` (replicas of stage s on server m), :mod:`.exact` shows (module docstring,
"cut") that the least cut over the assignments with those counts is

    cut(x) = sum_s w_s (k_{s-1} k_s - sum_m x[s-1,m] x[s,m]) + sum_s W_s (n_s - [n_s = 1]),

and ``n_s - [n_s = 1]`` is the number of servers that hold *part* of stage s (``0 < x[s,m] <
k_s``): n_s parts if n_s >= 2, none if n_s = 1. So

    cut(x) = C + sum_m F(x[:, m]),   C = sum_s w_s k_{s-1} k_s,
    F(col) = sum_s W_s [0 < col_s < k_s] - sum_{s>=1} w_s col_{s-1} col_s:

a constant plus one term per server that depends on that server's column alone. Servers with the
same free GPUs are interchangeable, so a count matrix is, up to relabelling those servers, a
multiset of columns: for every size c (with N_c servers of c free GPUs) ``n[c, p]`` servers take
column p, where p ranges over the columns with ``sum_s p_s = c`` and ``0 <= p_s <= min(k_s, c)``:

    minimise C + sum_{c,p} F(p) n[c,p]
    s.t. sum_p n[c,p] = N_c (every c),  sum_{c,p} p_s n[c,p] = k_s (every s),  n integer >= 0.

Its solutions and the count matrices correspond one to one up to the relabelling (which changes
no cut), with equal objective: this programme *is* the count model with the server symmetry
removed (``test_gpu_mapping_columns`` checks the optimum against the count model and the brute force).

Which columns are needed (exact pricing, then enumeration)
----------------------------------------------------------
For any multipliers ``pi`` (one per stage) let ``r_c = min_p (F(p) - pi.p)`` over the columns of
size c. For every feasible n,

    C + sum F(p) n[c,p] = C + pi.k + sum_{c,p} (F(p) - pi.p) n[c,p] >= LB = C + pi.k + sum_c N_c r_c

(the row sums are k), and a column p used by a solution of value <= UB satisfies
``F(p) - pi.p - r_c <= UB - LB`` (every other server contributes at least its r_c). So, with UB the
value of a known mapping, **every mapping better than UB uses only columns whose reduced cost
``F(p) - pi.p - r_c`` is at most ``UB - LB``**: the programme over those columns alone has the
same optimum (or none better than UB). This holds for *any* pi; good multipliers (the duals of the
linear relaxation, found by column generation: Dantzig & Wolfe 1960, Gilmore & Gomory 1961) make
LB the linear relaxation's value and the enumerated set small. The pricing problem
``min_p F(p) - pi.p`` is a chain (F couples only consecutive stages): a dynamic programme over the
stages with state (count of the last stage, GPUs used), exact. The enumeration is a depth-first
search over the stages pruned by the same programme run backwards (the least completion of a
partial column), so it lists exactly the columns within the threshold.

Steps: column generation from the Heavy-Edge columns to the LP optimum (LB); the integer
programme over the generated columns gives a mapping (UB, often optimal already); the columns
within ``UB - LB`` of their class's minimum are enumerated (threshold widened by a relative
1e-9 against rounding: more columns never hurt); CP-SAT solves the programme over them with
integer objective coefficients ``floor((F(p) - pi.p - r_c) / delta)`` (nonnegative; the
constant ``LB`` is added back, so, as in :mod:`.exact`, delta times CP-SAT's bound is a valid
lower bound and a proven optimum is exact up to delta per server). When the enumeration would
exceed ``max_columns`` the caller falls back to the count model.

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
from typing import Any

import numpy as np

__all__ = ["ColumnProblem", "applies", "column_problem", "solve_columns", "DEFAULT_MAX_COLUMNS"]

DEFAULT_MAX_COLUMNS = 200_000
_WORK = {"deterministic_time": 0.0}  # CP-SAT's deterministic time summed over the integer solves of one call
_RESOLUTION_BITS = 30


def applies(co: Any) -> bool:
    """Whether the cut of this instance is a function of the counts alone (no tree edges)."""
    return not any(co.tree_edges)


@dataclass
class ColumnProblem:
    """The column programme of one instance: per size c, N_c servers; F's data per stage."""

    k: np.ndarray                 # replicas per stage
    ring: np.ndarray              # W_s
    pair: np.ndarray              # w_s (pair[0] = 0)
    sizes: list[int]              # the distinct server sizes, ascending
    n_servers: dict[int, int]     # N_c
    const: float                  # C
    columns: dict[int, set[tuple[int, ...]]] = field(default_factory=dict)
    last_lp: Any = None
    rhs: np.ndarray | None = None  # replicas still to place per stage (the dive); None: k
    servers_left: dict[int, int] | None = None  # servers still to fill per size (the dive); None: N_c

    @property
    def row_rhs(self) -> np.ndarray:
        return self.k if self.rhs is None else self.rhs

    @property
    def size_rhs(self) -> dict[int, int]:
        return self.n_servers if self.servers_left is None else self.servers_left

    def value(self, col: tuple[int, ...]) -> float:
        """F(col)."""
        k, W, w = self.k, self.ring, self.pair
        out = 0.0
        prev = 0
        for s, v in enumerate(col):
            if 0 < v < k[s]:
                out += W[s]
            if s:
                out -= w[s] * prev * v
            prev = v
        return out


def column_problem(co: Any) -> ColumnProblem:
    """The column programme of :mod:`.exact`'s coefficients (``applies(co)`` must hold)."""
    S = co.n_stages
    sizes = sorted(set(co.caps))
    const = sum(co.pair_weight[s] * co.k[s - 1] * co.k[s] for s in range(1, S))
    return ColumnProblem(np.array(co.k, dtype=np.int64), np.array(co.ring_weight, dtype=float),
                         np.array(co.pair_weight, dtype=float), sizes,
                         {c: co.caps.count(c) for c in sizes}, float(const))


def _unary(cp: ColumnProblem, pi: np.ndarray, c: int) -> np.ndarray:
    """u[s, v]: the part of F(p) - pi.p of x_s = v alone (inf above min(k_s, c))."""
    S = len(cp.k)
    v = np.arange(c + 1, dtype=float)
    u = np.where((v[None, :] > 0) & (v[None, :] < cp.k[:, None]), cp.ring[:, None], 0.0) - pi[:, None] * v[None, :]
    return np.where(v[None, :] <= np.minimum(cp.row_rhs, c)[:, None], u, np.inf).reshape(S, c + 1)


def _completion(cp: ColumnProblem, pi: np.ndarray, c: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """``h[s][x, r]``: the least F - pi.p over stages s+1.. given x_s = x and r GPUs left for
    them (inf if they cannot take exactly r); and u. ``min_x u[0, x] + h[0][x, c - x]`` is r_c."""
    S = len(cp.k)
    u = _unary(cp, pi, c)
    V = c + 1
    vals = np.arange(V, dtype=float)
    h: list[np.ndarray] = [np.empty(0)] * S
    last = np.full((V, V), np.inf)
    last[:, 0] = 0.0
    h[S - 1] = last
    rem = np.arange(V)
    for s in range(S - 2, -1, -1):
        nxt = h[s + 1]
        cur = np.full((V, V), np.inf)
        for xn in range(V):
            if not np.isfinite(u[s + 1, xn]):
                continue
            # value for (x, r) with r >= xn: u + pair + nxt[xn, r - xn]
            part = u[s + 1, xn] - cp.pair[s + 1] * vals[:, None] * xn + np.concatenate(
                [np.full(xn, np.inf), nxt[xn, :V - xn]])[None, :]
            cur = np.minimum(cur, part)
        del rem
        rem = np.arange(V)
        h[s] = cur
    return u, h


def price(cp: ColumnProblem, pi: np.ndarray, c: int) -> tuple[float, tuple[int, ...]]:
    """``(r_c, p)``: the least reduced cost F(p) - pi.p over columns of size c and a column attaining it."""
    u, h = _completion(cp, pi, c)
    S = len(cp.k)
    first = np.array([u[0, x] + h[0][x, c - x] for x in range(c + 1)])
    x = int(np.argmin(first))
    best = float(first[x])
    col = [x]
    rem = c - x
    for s in range(1, S):
        cand = [u[s, v] - cp.pair[s] * col[-1] * v + h[s][v, rem - v] if v <= rem else np.inf for v in range(c + 1)]
        v = int(np.argmin(cand))
        col.append(v)
        rem -= v
    return best, tuple(col)


def enumerate_columns(cp: ColumnProblem, pi: np.ndarray, c: int, limit: float, cap: int) -> list[tuple[int, ...]] | None:
    """Every column of size c with F(p) - pi.p <= limit (None if more than ``cap``)."""
    u, h = _completion(cp, pi, c)
    S = len(cp.k)
    ul = u.tolist()
    hl = [x.tolist() for x in h]
    kk = [int(min(x, c)) for x in cp.row_rhs]
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


def _master_lp(cp: ColumnProblem) -> tuple[float, np.ndarray, dict[int, float], dict[tuple[int, tuple[int, ...]], float], bool]:
    """The linear relaxation over the current columns, on the remaining rows (``row_rhs``,
    ``size_rhs``), with penalised slack on every row so that it is always feasible:
    (value without C, pi, mu, the columns' values, whether the slack is zero)."""
    from scipy.optimize import linprog

    S = len(cp.k)
    sizes = [c for c in cp.sizes if cp.size_rhs[c] > 0]
    rhs = cp.row_rhs
    lst = [(c, p) for c in sizes for p in sorted(cp.columns[c]) if all(a <= b for a, b in zip(p, rhs))]
    cost = np.array([cp.value(p) for _, p in lst])
    scale = max(1.0, float(np.abs(cost).max()) if len(cost) else 1.0, float(cp.ring.max()), float(cp.pair.max()))
    penalty = 1e3 * scale * (1 + int(cp.k.max()))
    R = S + len(sizes)
    a = np.zeros((R, len(lst) + 2 * R))
    for j, (c, p) in enumerate(lst):
        a[:S, j] = p
        a[S + sizes.index(c), j] = 1.0
    a[:, len(lst):len(lst) + R] = np.eye(R)
    a[:, len(lst) + R:] = -np.eye(R)
    b = np.concatenate([rhs.astype(float), [float(cp.size_rhs[c]) for c in sizes]])
    full = np.concatenate([cost, np.full(2 * R, penalty)])
    res = linprog(full / scale, A_eq=a, b_eq=b, bounds=(0, None), method="highs")
    if res.status != 0:  # pragma: no cover - the slack makes it feasible
        raise RuntimeError(f"column LP: {res.message}")
    y = np.asarray(res.eqlin.marginals) * scale
    mu = {c: float(y[S + i]) for i, c in enumerate(sizes)}
    values = {lst[j]: float(res.x[j]) for j in range(len(lst)) if res.x[j] > 1e-9}
    clean = bool(res.x[len(lst):].max(initial=0.0) < 1e-9)
    return float(res.fun) * scale, y[:S], mu, values, clean


def lagrangian_bound(cp: ColumnProblem, pi: np.ndarray) -> tuple[float, dict[int, tuple[float, tuple[int, ...]]]]:
    """LB(pi) = C + pi.k + sum_c N_c r_c (valid for any pi) and each size's (r_c, argmin)."""
    sizes = [c for c in cp.sizes if cp.size_rhs[c] > 0]
    priced = {c: price(cp, pi, c) for c in sizes}
    lb = cp.const + float(pi @ cp.row_rhs) + sum(cp.size_rhs[c] * priced[c][0] for c in sizes)
    return lb, priced


def column_generation(cp: ColumnProblem, *, deadline: float | None = None, max_rounds: int = 500
                      ) -> tuple[float, np.ndarray, int]:
    """Column generation to the LP optimum (or the deadline): (best LB, its pi, rounds)."""
    best_lb, best_pi = -math.inf, np.zeros(len(cp.k))
    rounds = 0
    values: dict[tuple[int, tuple[int, ...]], float] = {}
    clean = False
    for rounds in range(1, max_rounds + 1):
        lp, pi, mu, values, clean = _master_lp(cp)
        lb, priced = lagrangian_bound(cp, pi)
        if lb > best_lb:
            best_lb, best_pi = lb, pi
        tol = 1e-9 * max(1.0, abs(lp))
        added = 0
        for c in priced:
            r, p = priced[c]
            if r < mu[c] - tol and p not in cp.columns[c]:
                cp.columns[c].add(p)
                added += 1
        if not added or (deadline is not None and time.perf_counter() > deadline):
            break
    cp.last_lp = (values, clean)
    return best_lb, best_pi, rounds


def dive(cp: ColumnProblem, *, deadline: float | None = None) -> dict[int, dict[tuple[int, ...], int]] | None:
    """A mapping by diving on the linear relaxation (a heuristic: it only supplies the upper
    bound): fix every column the LP uses at value >= 1 (its integer part), else the largest one
    once; re-price the remaining rows; repeat. None if the remaining LP needs slack or time runs out."""
    chosen: dict[int, dict[tuple[int, ...], int]] = {c: {} for c in cp.sizes}
    cp.rhs = cp.k.copy()
    cp.servers_left = dict(cp.n_servers)
    try:
        while any(cp.servers_left.values()):
            if deadline is not None and time.perf_counter() > deadline:
                return None
            column_generation(cp, deadline=deadline)
            values, clean = cp.last_lp
            if not clean or not values:
                return None
            fix = {key: math.floor(v + 1e-9) for key, v in values.items() if v >= 1 - 1e-9}
            if not fix:
                key = max(values, key=lambda kv: (values[kv], kv))
                fix = {key: 1}
            for (c, p), times in fix.items():
                times = min(times, cp.servers_left[c])
                if times <= 0 or any(a * times > b for a, b in zip(p, cp.rhs)):
                    continue
                chosen[c][p] = chosen[c].get(p, 0) + times
                cp.servers_left[c] -= times
                cp.rhs = cp.rhs - times * np.asarray(p, dtype=np.int64)
        return chosen if not cp.rhs.any() else None
    finally:
        cp.rhs, cp.servers_left = None, None


@dataclass
class ColumnOutcome:
    status: str                         # "optimal", "time_limit", "too_many_columns"
    counts: np.ndarray | None           # S x M count matrix of the best mapping found
    bound: float | None
    info: dict[str, Any]


def _solve_integer(cp: ColumnProblem, cols: dict[int, list[tuple[int, ...]]], pi: np.ndarray,
                   r: dict[int, float], lb: float, ub: float, *, time_limit: float | None,
                   seed: int | None, workers: int | None, hint: dict[int, dict[tuple[int, ...], int]] | None
                   ) -> tuple[Any, dict[int, dict[tuple[int, ...], int]] | None, float | None]:
    """CP-SAT on the programme over ``cols``; objective LB + sum n (F - pi.p - r_c), scaled."""
    from ortools.sat.python import cp_model

    from optkit.solvers.cpsat import solve_cp_model

    delta = max(ub, abs(lb), 1.0) / 2.0**_RESOLUTION_BITS
    md = cp_model.CpModel()
    n: dict[tuple[int, tuple[int, ...]], Any] = {}
    obj = []
    for c in cp.sizes:
        for p in cols[c]:
            var = md.NewIntVar(0, cp.n_servers[c], f"n[{c},{p}]")
            n[c, p] = var
            rc = cp.value(p) - float(pi @ np.asarray(p)) - r[c]
            q = max(0, math.floor(rc / delta))       # rc >= 0 up to rounding; floor keeps a lower bound
            if q:
                obj.append(q * var)
        md.Add(sum(n[c, p] for p in cols[c]) == cp.n_servers[c])
    S = len(cp.k)
    for s in range(S):
        md.Add(sum(p[s] * var for (c, p), var in n.items() if p[s]) == int(cp.k[s]))
    md.Minimize(sum(obj))
    hints = {}
    if hint is not None:
        for (c, p), var in n.items():
            hints[var] = hint.get(c, {}).get(p, 0)
    out = solve_cp_model(md, time_limit=time_limit, workers=workers, seed=seed, hint=hints)
    _WORK["deterministic_time"] += out.raw.deterministic_time
    if not out.has_solution:
        return out, None, (lb + delta * out.bound if out.bound is not None else None)
    sol = {c: {p: int(out.raw.Value(n[c, p])) for p in cols[c] if out.raw.Value(n[c, p])} for c in cp.sizes}
    bound = lb + delta * out.bound if out.bound is not None else None
    return out, sol, bound


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


def solve_columns(co: Any, start_counts: np.ndarray, *, time_limit: float | None = None, seed: int | None = None,
                  workers: int | None = None, max_columns: int = DEFAULT_MAX_COLUMNS) -> ColumnOutcome:
    """The exact cut optimum over count matrices by the column programme (module docstring).

    ``start_counts`` is a feasible count matrix (the Heavy-Edge mapping's); its columns seed the
    column generation and its value is the first upper bound.
    """
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    _WORK["deterministic_time"] = 0.0
    try:
        got = _solve_columns(co, start_counts, deadline, max_columns, seed, workers)
    finally:
        got_work = _WORK["deterministic_time"]
    got.info["deterministic_time"] = got_work
    return got


def _solve_columns(co: Any, start_counts: np.ndarray, deadline: float | None, max_columns: int,
                   seed: int | None, workers: int | None) -> ColumnOutcome:
    def left() -> float | None:
        return None if deadline is None else max(1e-3, deadline - time.perf_counter())

    cp = column_problem(co)
    caps = tuple(co.caps)
    cp.columns = {c: set() for c in cp.sizes}
    for m, c in enumerate(caps):
        cp.columns[c].add(tuple(int(v) for v in start_counts[:, m]))
    best_x = np.asarray(start_counts, dtype=np.int64)
    ub = cp.const + sum(cp.value(tuple(int(v) for v in best_x[:, m])) for m in range(len(caps)))
    lb, pi, rounds = column_generation(cp, deadline=deadline)
    info: dict[str, Any] = {"model": "columns", "cg_rounds": rounds, "lp_bound": lb,
                            "generated_columns": sum(len(v) for v in cp.columns.values())}
    _, priced = lagrangian_bound(cp, pi)
    r = {c: priced[c][0] for c in cp.sizes}
    # a better mapping than Heavy-Edge's: the programme over the columns generated so far
    gen = {c: sorted(cp.columns[c]) for c in cp.sizes}
    budget = left()
    out, sol, _ = _solve_integer(cp, gen, pi, r, lb, ub, time_limit=None if budget is None else budget / 4,
                                 seed=seed, workers=workers, hint=_solution_of(cp, caps, best_x))
    if sol is not None:
        x = _counts_from(cp, caps, sol)
        val = _value_of(cp, x)
        if val < ub:
            ub, best_x = val, x
    info["first_upper_bound"] = ub
    tol = 1e-9 * max(abs(ub), abs(lb), 1.0)
    # widen the threshold t until the best mapping over the columns within t is within t of LB
    t = (ub - lb) / 64.0
    bound = lb
    while True:
        t = min(ub - lb, 4.0 * t) if t < ub - lb else ub - lb
        cols: dict[int, list[tuple[int, ...]]] = {}
        total = 0
        for c in cp.sizes:
            got = enumerate_columns(cp, pi, c, r[c] + t + tol, max_columns - total)
            if got is None:
                info["enumerated_columns"] = f"> {max_columns}"
                info["threshold"] = t
                return ColumnOutcome("too_many_columns", best_x, bound, info)
            cols[c] = got
            total += len(got)
        info["enumerated_columns"] = total
        info["threshold"] = t
        for m, c in enumerate(caps):  # the incumbent's columns, so that the hint is feasible
            p = tuple(int(v) for v in best_x[:, m])
            if p not in cols[c]:
                cols[c].append(p)
        if deadline is not None and time.perf_counter() > deadline:
            return ColumnOutcome("time_limit", best_x, bound, info)
        out, sol, ip_bound = _solve_integer(cp, cols, pi, r, lb, ub, time_limit=left(), seed=seed,
                                            workers=workers, hint=_solution_of(cp, caps, best_x))
        info["solver_status"] = out.solver_status
        if sol is not None:
            x = _counts_from(cp, caps, sol)
            val = _value_of(cp, x)
            if val < ub:
                ub, best_x = val, x
        proven = out.solver_status == "OPTIMAL"
        if proven and ub - lb <= t + tol:
            # every mapping better than ub uses columns within ub - lb <= t: all were listed
            return ColumnOutcome("optimal", best_x, ub if ip_bound is None else min(ub, max(lb, ip_bound)), info)
        if ip_bound is not None and t >= ub - lb - tol:
            bound = max(bound, ip_bound)
        if not proven:
            return ColumnOutcome("time_limit", best_x, bound, info)


def _value_of(cp: ColumnProblem, x: np.ndarray) -> float:
    """C + sum_m F(x[:, m]): the least cut over the assignments with counts x."""
    return cp.const + sum(cp.value(tuple(int(v) for v in x[:, m])) for m in range(x.shape[1]))
