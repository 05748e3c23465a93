"""Exact offline optimum of ddlwmp (clairvoyant: releases and n_i known): CP-SAT, a time-indexed
MILP (Pyomo + HiGHS) and a brute force for tiny instances.

The decision per job i is a start slot t_i (>= ceil(r_i / slot)) and a *placement option*.

Placement options
=================
An option of job i is a vector y of GPUs per server, ``sum_m y_m = g_i``, ``0 <= y_m <= g``.
Given y, the best replica assignment with y_m replicas on server m is a gpu-mapping instance
(servers = the nonzero y_m), whose minimum alpha (eq. 7) depends only on the *multiset* of the
nonzero y_m (permuting servers permutes the columns of the count matrix; beta[s, m] depends on
its own column only). It is computed once per (model, multiset) by gpu-mapping's exact
enumeration (:func:`optkit.formulations.gpu_mapping.exact.brute_force`, tiny models) or its CP-SAT
solver (larger ones), and the optimal assignment is mapped to the global servers of y. The
option's alpha is then recomputed from that global assignment with
:func:`~optkit.formulations.gpu_mapping.model.alpha_from_counts` -- the referee's own function -- so the
durations of the models are bit-identical to the ones ``evaluate`` recomputes.

Tensor-parallel and MoE jobs (:mod:`.tensor`, A-SRPT paper Sec. VI) are supported: a
tensor-parallel job's options are the y in multiples of t (each replica's t slices on one server,
the constraint ``evaluate`` checks), and the best split of an option is gpu-mapping's exact
optimum of ``alpha`` on those free GPUs, as for every job (its brute force, else its CP-SAT model,
both of which keep a replica's slices on one server and time an MoE job by which expert group sits
where); the option's alpha is recomputed by
:func:`~optkit.formulations.gpu_mapping.model.alpha_of_assignment`, the function ``evaluate``
times such a job with.

Every option y is kept: no dominance pruning (a ``single_node`` job keeps the options on one
server only: its constraint, not a pruning). (Two options with the same multiset on different
servers are not comparable -- server identity matters for capacity -- and two different vectors
with the same sum are never componentwise ordered, so no option uses a subset of another's
GPUs.) Choosing, for each y, a min-alpha assignment loses nothing: for a fixed y, the
occupied GPUs per server are the same for every assignment and the duration is n_i·alpha, so a
smaller alpha is never worse for a regular objective (below).

Durations and occupancy
-----------------------
``d = n_i · alpha(y)`` (seconds); the job holds its GPUs over ``[t·slot, slot_ceil(t·slot + d))``,
i.e. for ``p = slot_ceil(d)/slot`` slots (``model.slot_ceil``; t·slot is a slot boundary). The
referee's rounding tolerance (1e-9 relative to (t·slot+d)/slot) is at least the one used for p,
so the referee never sees a longer occupancy than the models (a schedule of the models is
always accepted); only when d/slot lies within ~1e-9 of an integer could the models hold GPUs
one slot longer than needed (never met with real-valued random data).

Objectives: ``total_completion`` = sum_i (t_i·slot + d_i), ``total_flow`` = that minus sum r_i
(a constant), ``makespan`` = max_i (t_i·slot + d_i). All three are *regular* (nondecreasing in
every C_i).

Horizon (the models are never cut off)
--------------------------------------
1. Global: ``H = R + sum_i max_o p_{i,o}`` slots, ``R = max_i ceil(r_i/slot)``. Proof: take an
   optimal schedule; if at some slot t >= R no job holds any GPU while some job starts after t,
   move every job starting after t one slot earlier (all are released by R <= t, and the load
   pattern after t just shifts left into the idle slot): feasible, no C_i grows (the objective is
   regular) and sum t_i drops, so repeating ends at an optimal schedule in which every slot in
   [R, last start) is busy. Busy slots are covered by occupancies, so the last start is <=
   R + sum of the other jobs' occupancies, and every job ends by H.
2. Per job, from an upper bound UB (the value of the greedy schedule :func:`greedy_schedule`,
   feasible by construction): an optimum has objective <= UB, and ``C_j >= LBC_j =
   ceil(r_j)·slot + n_j·alpha_j^min`` for every j, so for ``total_completion``
   ``C_i <= UB - sum_{j != i} LBC_j`` (total_flow: the same after adding sum r_j back to UB), for
   ``makespan`` ``C_i <= UB``. Starts (and, in the MILP, (option, start) pairs) violating the
   deadline are left out of the models; a 1e-9 relative slack keeps float noise from cutting
   the optimum.

CP-SAT model
------------
One integer start var per job (slots), one presence literal per option (exactly one per job),
per option an optional interval [t_i, t_i + p_o) present with its literal, and per server m an
``AddCumulative`` over the intervals of options with y_m > 0 (demand y_m, capacity g). The
objective is in units of ``delta = slot / RESOLUTION`` (``RESOLUTION = 10^6``, i.e. 1 µs for
1 s slots): ``C_i/delta = RESOLUTION·t_i + sum_o floor(d_o/delta)·lit_o``. Every coefficient is
exact (slot term) or rounded down, so for every schedule the integer objective is <= true/delta
and ``delta × (CP-SAT's best bound)`` is a valid lower bound on the true optimum (the reported
``bound``, conservative). A schedule CP-SAT proves optimal is within ``I·delta`` of the true
optimum (options whose durations differ by less than delta may tie); the reported objective is
always the referee's exact value of the returned schedule. The greedy schedule is the hint.
A redundant ``AddCumulative`` over the whole cluster (one interval per job of size
``sum_o p_o lit_o``, demand g_i, capacity M·g) is implied by the per-server ones and speeds up the
proof a lot (6 jobs of 3-4 GPUs on 3 servers: 50 s -> 0.2 s).

Server symmetry (both models, ``symmetry=True``)
------------------------------------------------
All servers have g GPUs, so permuting the server indices of a whole schedule (every job's y and
assignment) keeps it feasible, and keeps every alpha -- beta[s, m] depends on column m of the
count matrix only, and each option's alpha is the best for its multiset -- hence every C_i. So
some optimum has the columns of the matrix ``Y[i, m]`` (GPUs of job i on server m, jobs in
instance order) in non-increasing lexicographic order, and the models require it on the first
L jobs: ``sum_{i<L} Y[i,m] B^(L-1-i) >= sum_{i<L} Y[i,m+1] B^(L-1-i)``, ``B = g + 1`` (a base-B
number comparison is the lexicographic comparison; sorted columns have sorted prefixes). L is
the most jobs with ``B^(L-1) <= 2^40`` (CP-SAT) or ``<= 10^4`` (MILP numerics).

Time-indexed MILP
-----------------
Binary ``w[i, o, t]`` for every job, option and allowed start slot (horizon as above);
``sum_{o,t} w[i,o,t] = 1``; per server m and slot tau ``sum y_{o,m} w[i,o,t] <= g`` over the
(i, o, t) with ``y_{o,m} > 0`` and ``t <= tau < t + p_o``. Objective in seconds:
``sum (t·slot + d_o) w`` (minus sum r_i for flow); makespan: ``z >= sum_{o,t} (t·slot + d_o)
w[i,o,t]`` for every i, minimise z. Solved by :func:`optkit.solvers.milp.solve_pyomo_model`
(relative and absolute gap 1e-9).

Brute force
-----------
:func:`brute_force` enumerates every job order and every option vector, placing each job in
that order at its *earliest feasible start* (the first slot >= its release at which its
occupancy fits beside the jobs already placed). Why this contains an optimum: take an optimal
schedule S (starts t_i, options o_i) and order its jobs by t_i. Place them greedily in that
order with the same options; by induction t'_j <= t_j for every job placed before k. For such a
j (t'_j <= t_j <= t_k), the part of j's occupancy at times >= t_k is [t_k, t'_j + p_j), inside
[t_k, t_j + p_j), what j occupied in S; so at every time >= t_k the earlier jobs' load on each
server is at most their load in S, starting k at t_k fits, and the greedy start t'_k <= t_k. All
C'_i <= C_i and the objective is regular, so the greedy schedule of that (order, options) is
optimal too, and the enumeration (which includes it) finds an optimum.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np

from optkit.formulations.ddlwmp.model import OBJECTIVES, DdlwmpInstance, evaluate, slot_ceil
from optkit.formulations.ddlwmp.tensor import is_llm, tensor_parallel_of
from optkit.formulations.gpu_mapping import exact as gm_exact
from optkit.formulations.gpu_mapping.model import (
    GpuMappingInstance, PipelineJob, alpha_from_counts, alpha_of_assignment, stage_counts,
)
from optkit import deadline
from optkit.anytime import add_solver_points
from optkit.deadline import bounded
from optkit.errors import InputError
from optkit.result import Result, Status, relative_gap

__all__ = [
    "RESOLUTION", "Option", "placement_options", "alpha_min_exact", "greedy_schedule",
    "run_cpsat", "run_highs", "brute_force", "run_brute_force", "schedule_objective",
]

RESOLUTION = 10**6          # CP-SAT objective units per slot
BRUTE_FORCE_MAX_LEAVES = 2_000_000
_REL_SLACK = 1e-9


# ============================================================================= options
@dataclass(frozen=True)
class Option:
    """One placement option of a job: GPUs per server ``y``, the min-alpha assignment on it
    (global server indices), alpha (s/iteration), duration d (s) and occupancy p (slots)."""

    y: tuple[int, ...]
    assignment: tuple[tuple[int, ...], ...]
    alpha: float
    duration: float
    slots: int


def _check_objective(objective: str) -> None:
    if objective not in OBJECTIVES:
        raise InputError("objective", f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}")


def _vectors(total: int, n: int, cap: int) -> Iterator[tuple[int, ...]]:
    """All y in {0..cap}^n with sum y = total (lexicographically decreasing)."""
    if n == 0:
        if total == 0:
            yield ()
        return
    for v in range(min(cap, total), max(0, total - cap * (n - 1)) - 1, -1):
        for rest in _vectors(total - v, n - 1, cap):
            yield (v,) + rest


def _best_local_assignment(job: PipelineJob, instance: DdlwmpInstance, caps: tuple[int, ...]) -> list[list[int]]:
    """A min-alpha assignment of ``job`` onto servers with ``caps`` free GPUs (local indices)."""
    gm = GpuMappingInstance(instance.cluster.mapping_cluster, job, caps)
    try:
        _, assignment = gm_exact.brute_force(gm, "alpha")
        return assignment
    except InputError:  # too large to enumerate: the exact CP-SAT solver
        res = gm_exact.run_cpsat(gm, objective="alpha", time_limit=None, seed=0, workers=1)
        if res.status != Status.OPTIMAL or res.solution is None:
            deadline.check("proving each placement option's best split")  # cut by the call's limit
            raise RuntimeError(  # pragma: no cover - defensive
                f"gpu-mapping CP-SAT did not prove the best split on {caps}: {res.status}")
        return res.solution["assignment"]


def placement_options(instance: DdlwmpInstance) -> dict[str, list[Option]]:
    """Every placement option of every model used by the instance, keyed by model name."""
    cl = instance.cluster
    M, g, slot = cl.servers, cl.gpus_per_server, cl.slot_seconds
    out: dict[str, list[Option]] = {}
    for name in sorted({j.model for j in instance.jobs}):
        job = instance.models[name]
        llm = is_llm(job)  # tensor-parallel or MoE (tensor.py): y in multiples of t, gpu-mapping's alpha
        t = tensor_parallel_of(job)
        local: dict[tuple[int, ...], list[list[int]]] = {}
        opts = []
        for y in _vectors(job.n_replicas, M, g):
            deadline.check("enumerating placement options")
            if t > 1 and any(v % t for v in y):
                continue  # a replica's t slices on one server
            used = [m for m in range(M) if y[m]]
            key = tuple(sorted((y[m] for m in used), reverse=True))
            if key not in local:
                local[key] = _best_local_assignment(job, instance, key)
            # map local server index (position in key) to a global server with that count
            order = sorted(used, key=lambda m: (-y[m], m))
            glob = [[order[m] for m in row] for row in local[key]]
            alpha = (alpha_of_assignment(job, cl.mapping_cluster, glob) if llm
                     else alpha_from_counts(job, cl.mapping_cluster, stage_counts(job, glob, M)))
            opts.append(Option(y=y, assignment=tuple(tuple(r) for r in glob), alpha=alpha, duration=0.0, slots=0))
        out[name] = opts
    return out


def _job_options(instance: DdlwmpInstance) -> list[list[Option]]:
    """Per job (instance order), its options with duration and occupancy filled in; a
    ``single_node`` job keeps only its one-server options (y with one nonzero entry)."""
    slot = instance.cluster.slot_seconds
    per_model = placement_options(instance)
    res = []
    for j in instance.jobs:
        lst = []
        for o in per_model[j.model]:
            if j.single_node and sum(1 for v in o.y if v) > 1:
                continue
            d = j.iterations * o.alpha
            lst.append(Option(o.y, o.assignment, o.alpha, d, int(round(slot_ceil(d, slot) / slot))))
        res.append(lst)
    return res


def alpha_min_exact(instance: DdlwmpInstance, model: str) -> float:
    """alpha_i^min: the true minimum of eq. (7) over every placement of ``model`` on the empty
    cluster (all options, exact best split per option)."""
    return min(o.alpha for o in placement_options(instance)[model])


# ============================================================================= helpers
def _release_slot(release: float, slot: float) -> int:
    return int(round(slot_ceil(release, slot) / slot))


def _schedule_dict(instance: DdlwmpInstance, opts: list[list[Option]], starts: Sequence[int],
                   choice: Sequence[int]) -> dict[str, Any]:
    slot = instance.cluster.slot_seconds
    jobs = []
    for i, j in enumerate(instance.jobs):
        o = opts[i][choice[i]]
        start = float(starts[i] * slot)
        jobs.append({"id": j.id, "start": start, "completion": start + j.iterations * o.alpha,
                     "alpha_s": o.alpha, "assignment": [list(r) for r in o.assignment]})
    return {"jobs": jobs}


def schedule_objective(instance: DdlwmpInstance, opts: list[list[Option]], starts: Sequence[int],
                       choice: Sequence[int], objective: str) -> float:
    slot = instance.cluster.slot_seconds
    c = [starts[i] * slot + opts[i][choice[i]].duration for i in range(len(instance.jobs))]
    if objective == "makespan":
        return max(c)
    total = sum(c)
    if objective == "total_flow":
        total -= sum(j.release for j in instance.jobs)
    return total


class _Profile:
    """Per-server GPU load per slot (a Python list per server, ``rows``: a few servers and slots
    per call, where numpy's per-call cost outweighs its arithmetic), growing on demand (doubling)."""

    def __init__(self, servers: int, cap: int) -> None:
        self.rows = [[0] * 64 for _ in range(servers)]
        self.cap = cap

    @property
    def load(self) -> np.ndarray:
        """The profile as a servers x slots array (a copy)."""
        return np.array(self.rows, dtype=np.int64)

    def _ensure(self, end: int) -> None:
        size = len(self.rows[0]) if self.rows else 0
        if end > size:
            extra = max(end, 2 * size) - size
            for row in self.rows:
                row.extend([0] * extra)

    def fits(self, y: Sequence[int], t: int, p: int) -> bool:
        self._ensure(t + p)
        for m, c in enumerate(y):
            if c and max(self.rows[m][t:t + p], default=0) + c > self.cap:
                return False
        return True

    def earliest(self, y: Sequence[int], t0: int, p: int) -> int:
        """The first slot t >= t0 at which :meth:`fits` holds. A slot u is *blocked* when some
        server m of ``y`` has ``load[m][u] + y[m] > cap``; t fits iff no blocked slot lies in
        [t, t + p), and every t' up to the last blocked slot u of that window holds u too, so
        the search goes on at u + 1 (the slot-by-slot search's answer, with fewer windows
        read). The slot-by-slot search remains where a demand exceeds the capacity or p < 1. The
        profile is not grown here (slots past its end hold no load; :meth:`add` grows it)."""
        rows = [(self.rows[m], self.cap - c) for m, c in enumerate(y) if c]
        if p < 1 or any(room < 0 for _, room in rows):
            t = t0
            while not self.fits(y, t, p):
                t += 1
            return t
        t = t0
        while True:
            last = -1
            for row, room in rows:  # slots past a row's end hold no load: never blocked
                for u in range(min(t + p, len(row)) - 1, max(t, last + 1) - 1, -1):
                    if row[u] > room:
                        last = u
                        break
            if last < 0:
                break
            t = last + 1
        return t

    def add(self, y: Sequence[int], t: int, p: int, sign: int = 1) -> None:
        self._ensure(t + p)
        for m, c in enumerate(y):
            if c:
                row = self.rows[m]
                for u in range(t, t + p):
                    row[u] += sign * c


def greedy_schedule(instance: DdlwmpInstance, opts: list[list[Option]] | None = None
                    ) -> tuple[list[int], list[int]]:
    """A feasible schedule (the upper bound and warm start): jobs in order of (release slot,
    shortest minimum duration), each at the (option, earliest start) with the earliest
    completion. Returns (start slots, option indices)."""
    cl = instance.cluster
    opts = opts if opts is not None else _job_options(instance)
    slot = cl.slot_seconds
    order = sorted(range(len(instance.jobs)), key=lambda i: (
        _release_slot(instance.jobs[i].release, slot), min(o.duration for o in opts[i]), i))
    prof = _Profile(cl.servers, cl.gpus_per_server)
    starts, choice = [0] * len(opts), [0] * len(opts)
    for i in order:
        r = _release_slot(instance.jobs[i].release, slot)
        best = None
        for k, o in enumerate(opts[i]):
            deadline.check("building the greedy warm start")
            t = prof.earliest(o.y, r, o.slots)
            c = t * slot + o.duration
            if best is None or c < best[0]:
                best = (c, t, k)
        assert best is not None
        _, t, k = best
        prof.add(opts[i][k].y, t, opts[i][k].slots)
        starts[i], choice[i] = t, k
    return starts, choice


def _lex_weights(n_jobs: int, g: int, limit: int) -> list[int]:
    """Weights B^(L-1-i), B = g + 1, of the first L jobs, with B^(L-1) <= limit (symmetry)."""
    B, L = g + 1, 1
    while L < n_jobs and B ** L <= limit:
        L += 1
    return [B ** (L - 1 - i) for i in range(L)]


@dataclass
class _Windows:
    release: list[int]          # earliest start slot per job
    horizon: int                # global horizon H (slots): every job ends by H
    deadline: list[float]       # latest completion (s) per job from the UB
    ub: float
    warm: tuple[list[int], list[int]]


def _windows(instance: DdlwmpInstance, opts: list[list[Option]], objective: str, tighten: bool = True) -> _Windows:
    slot = instance.cluster.slot_seconds
    rel = [_release_slot(j.release, slot) for j in instance.jobs]
    horizon = max(rel) + sum(max(o.slots for o in lst) for lst in opts)
    warm = greedy_schedule(instance, opts)
    ub = schedule_objective(instance, opts, *warm, objective)
    lbc = [rel[i] * slot + min(o.duration for o in opts[i]) for i in range(len(opts))]
    if objective == "makespan":
        dl = [ub] * len(opts)
    else:
        total_ub = ub + (sum(j.release for j in instance.jobs) if objective == "total_flow" else 0.0)
        dl = [total_ub - (sum(lbc) - lbc[i]) for i in range(len(opts))]
    dl = [d + _REL_SLACK * max(1.0, abs(d)) for d in dl]
    if not tighten:  # only the global horizon H
        dl = [math.inf] * len(opts)
    return _Windows(rel, horizon, dl, ub, warm)


def _allowed_starts(w: _Windows, opts: list[list[Option]], slot: float, i: int, k: int) -> range:
    """Start slots t for (job i, option k): t >= release, t + p <= H, t·slot + d <= deadline."""
    o = opts[i][k]
    last = w.horizon - o.slots
    if math.isfinite(w.deadline[i]):
        last = min(last, math.floor((w.deadline[i] - o.duration) / slot))
    return range(w.release[i], last + 1)


def _offer_greedy(instance: DdlwmpInstance, objective: str, opts: list[list[Option]], w: _Windows,
                  info: dict[str, Any]) -> None:
    """What a run cut by its time limit from now on returns: the greedy schedule
    (:mod:`optkit.deadline`), status ``time_limit``, no bound."""
    deadline.offer(lambda message: _finish(instance, objective, Status.TIME_LIMIT,
                                           _schedule_dict(instance, opts, *w.warm), None,
                                           {**info, "incumbent": "greedy warm start"}, message))


def _finish(instance: DdlwmpInstance, objective: str, status: Status, solution: dict[str, Any] | None,
            bound: float | None, info: dict[str, Any], message: str) -> Result:
    """The Result, with ``objective`` (and ``gap``) computed by the referee ``evaluate``."""
    value = None
    if solution is not None:
        ev = evaluate(instance, solution)
        if not ev.feasible:  # pragma: no cover - a bug
            return Result(Status.ERROR, solution=solution, message="; ".join(ev.violations[:3]), info=info)
        value = ev.objectives[objective]
    return Result(status, objective=value, bound=bound, gap=relative_gap(value, bound), solution=solution,
                  metrics=dict(ev.metrics) if solution is not None else {}, problem="ddlwmp",
                  objective_name=objective, message=message, info=info)


# ============================================================================= CP-SAT
@bounded
def run_cpsat(instance: DdlwmpInstance, *, objective: str = "total_completion", time_limit: float | None = None,
              seed: int | None = None, workers: int | None = None, log: bool = False,
              tighten: bool = True, symmetry: bool = True) -> Result:
    """Solve the interval model with CP-SAT (module docstring).

    ``bound`` is delta × CP-SAT's best bound (rounded-down coefficients: a valid lower bound),
    plus sum r_i subtracted for ``total_flow``. Without an incumbent at the time limit, the greedy
    schedule is returned. ``tighten=False`` drops the per-job deadlines from the greedy upper
    bound (global horizon only): a larger model, for cross-checks.

    References
    ----------
    Luo et al., "Prediction-Assisted Online Distributed Deep Learning Workload Scheduling in GPU
    Clusters": Sec. III, constraints (1)-(3) and the total completion time, with alpha from eqs.
    (4)-(7); the clairvoyant offline optimum that A-SRPT (Algorithm 1) is measured against, as
    the CP-SAT interval model of the module docstring.

    Notes
    -----
    Guarantee: status ``optimal`` is a proven optimum of ``objective`` (within ``I·delta``, the
    rounding of the durations; the objective reported is the referee's exact value); at the time
    limit, ``time_limit`` with a proven lower bound.

    Units: completion times, ``bound`` and the objectives in seconds (``bound`` rounded down by
    ``delta``); starts on slot boundaries; ``time_limit`` in seconds.

    Examples
    --------
    >>> from optkit.formulations.ddlwmp import DdlwmpInstance, evaluate
    >>> from optkit.formulations.ddlwmp.generate import SUITES
    >>> inst = DdlwmpInstance.from_dict(next(iter(SUITES["tiny"].build()))[1])   # 3 jobs, 2 servers of 2 GPUs
    >>> r = run_cpsat(inst, time_limit=30, seed=0)
    >>> r.status.value, round(evaluate(inst, r.solution).objectives["total_completion"], 6)
    ('optimal', 18.426876)
    """
    from ortools.sat.python import cp_model

    from optkit.solvers.cpsat import solve_cp_model

    _check_objective(objective)
    t0 = time.perf_counter()
    cl = instance.cluster
    slot, M, g = cl.slot_seconds, cl.servers, cl.gpus_per_server
    opts = _job_options(instance)
    w = _windows(instance, opts, objective, tighten)
    _offer_greedy(instance, objective, opts, w, {"horizon_slots": w.horizon, "upper_bound_greedy": w.ub})
    delta = slot / RESOLUTION
    model = cp_model.CpModel()
    starts, lits, comps = [], [], []
    per_server: list[tuple[list[Any], list[int]]] = [([], []) for _ in range(M)]
    hint: dict[Any, int] = {}
    for i, lst in enumerate(opts):
        deadline.check("building the CP-SAT model")
        ranges = [_allowed_starts(w, opts, slot, i, k) for k in range(len(lst))]
        hi = max((r.stop - 1 for r in ranges if len(r)), default=w.release[i])
        t = model.NewIntVar(w.release[i], hi, f"t{i}")
        starts.append(t)
        row = []
        for k, o in enumerate(lst):
            lit = model.NewBoolVar(f"x{i}_{k}")
            if not len(ranges[k]):
                model.Add(lit == 0)
            else:
                model.Add(t <= ranges[k].stop - 1).OnlyEnforceIf(lit)
            iv = model.NewOptionalFixedSizeIntervalVar(t, o.slots, lit, f"iv{i}_{k}")
            for m in range(M):
                if o.y[m]:
                    per_server[m][0].append(iv)
                    per_server[m][1].append(o.y[m])
            row.append(lit)
        model.AddExactlyOne(row)
        lits.append(row)
        comps.append(RESOLUTION * t + sum(int(math.floor(o.duration / delta)) * lit for o, lit in zip(lst, row)))
        hint[t] = w.warm[0][i]
        for k, lit in enumerate(row):
            hint[lit] = int(k == w.warm[1][i])
    for m in range(M):
        if per_server[m][0]:
            model.AddCumulative(per_server[m][0], per_server[m][1], g)
    # Redundant: the whole cluster as one resource of M·g GPUs (job i holds g_i of them).
    whole = []
    for i, lst in enumerate(opts):
        lo, hi_p = min(o.slots for o in lst), max(o.slots for o in lst)
        p = model.NewIntVar(lo, hi_p, f"p{i}")
        model.Add(p == sum(o.slots * lit for o, lit in zip(lst, lits[i])))
        end = model.NewIntVar(0, w.horizon + hi_p, f"e{i}")
        whole.append(model.NewIntervalVar(starts[i], p, end, f"job{i}"))
    model.AddCumulative(whole, [instance.gpus(j) for j in instance.jobs], M * g)
    if symmetry:
        weights = _lex_weights(len(opts), g, 2**40)
        cols = [sum(wt * o.y[m] * lit for i, wt in enumerate(weights) for o, lit in zip(opts[i], lits[i]))
                for m in range(M)]
        for m in range(M - 1):
            model.Add(cols[m] >= cols[m + 1])
    if objective == "makespan":
        hi = int(math.ceil(w.ub / delta)) + 1
        z = model.NewIntVar(0, hi, "makespan")
        model.AddMaxEquality(z, comps)
        model.Minimize(z)
    else:
        model.Minimize(sum(comps))
    out = solve_cp_model(model, time_limit=time_limit, workers=workers, seed=seed, hint=hint, log=log)
    proto = model.Proto()
    info: dict[str, Any] = {
        "solver_status": out.solver_status, "solver_time_s": out.wall_time_s,
        "variables": len(proto.variables), "constraints": len(proto.constraints),
        "options": sum(len(lst) for lst in opts), "horizon_slots": w.horizon,
        "resolution_s": delta, "upper_bound_greedy": w.ub,
    }
    offset = sum(j.release for j in instance.jobs) if objective == "total_flow" else 0.0
    add_solver_points(out.trajectory, lambda v: delta * v - offset)  # slots -> seconds (anytime record)
    bound = None
    if out.bound is not None:
        bound = max(0.0, delta * out.bound - offset)
    if out.status == Status.INFEASIBLE:  # the greedy schedule satisfies the model: a bug
        return Result(Status.ERROR, message="CP-SAT reported the model infeasible", info=info)
    if out.has_solution:
        solver = out.raw
        st = [int(solver.Value(t)) for t in starts]
        ch = [next(k for k, lit in enumerate(row) if solver.Value(lit)) for row in lits]
        info["incumbent"] = "solver"
    else:
        st, ch = w.warm
        info["incumbent"] = "greedy warm start"
    solution = _schedule_dict(instance, opts, st, ch)
    info["build_and_solve_s"] = time.perf_counter() - t0
    return _finish(instance, objective, out.status, solution, bound, info, out.solver_status)


# ============================================================================= MILP
@bounded
def run_highs(instance: DdlwmpInstance, *, objective: str = "total_completion", time_limit: float | None = None,
              seed: int | None = None, solver: str = "highs", tighten: bool = True,
              symmetry: bool = True) -> Result:
    """Solve the time-indexed MILP (module docstring) through Pyomo. Without an incumbent at the
    time limit the greedy schedule is returned, with the solver's bound.

    References
    ----------
    Luo et al., "Prediction-Assisted Online Distributed Deep Learning Workload Scheduling in GPU
    Clusters": Sec. III, constraints (1)-(3) with alpha from eqs. (4)-(7), as the time-indexed
    MILP of the module docstring (offline, clairvoyant).

    Notes
    -----
    Guarantee: status ``optimal`` is a proven optimum of ``objective``; at the time limit,
    ``time_limit`` with the solver's proven lower bound.

    Units: the objectives and ``bound`` in seconds; the model's time index in slots of
    ``cluster.slot_seconds``; ``time_limit`` in seconds.

    Examples
    --------
    >>> from optkit.formulations.ddlwmp import DdlwmpInstance, evaluate
    >>> from optkit.formulations.ddlwmp.generate import SUITES
    >>> inst = DdlwmpInstance.from_dict(next(iter(SUITES["tiny"].build()))[1])   # 3 jobs, 2 servers of 2 GPUs
    >>> r = run_highs(inst, time_limit=30)
    >>> r.status.value, round(r.bound, 6)
    ('optimal', 18.426876)
    """
    import pyomo.environ as pyo

    from optkit.solvers.milp import solve_pyomo_model

    _check_objective(objective)
    t0 = time.perf_counter()
    cl = instance.cluster
    slot, M, g = cl.slot_seconds, cl.servers, cl.gpus_per_server
    opts = _job_options(instance)
    w = _windows(instance, opts, objective, tighten)
    _offer_greedy(instance, objective, opts, w, {"horizon_slots": w.horizon, "upper_bound_greedy": w.ub})
    stage = "building the time-indexed MILP"
    keys = [(i, k, t) for i, lst in enumerate(opts) for k in range(len(lst))
            for t in deadline.checked(_allowed_starts(w, opts, slot, i, k), stage)]
    cost = {key: key[2] * slot + opts[key[0]][key[1]].duration for key in deadline.checked(keys, stage)}
    m = pyo.ConcreteModel()
    m.W = pyo.Set(dimen=3)
    for start in range(0, len(keys), 4096):  # in chunks, between checks of the deadline
        deadline.check(stage)
        m.W.update(keys[start:start + 4096])
    m.w = pyo.Var(m.W, domain=pyo.Binary, dense=False)  # each variable made at its first use
    by_job: dict[int, list[tuple[int, int, int]]] = {}
    usage: dict[tuple[int, int], list[tuple[int, tuple[int, int, int]]]] = {}
    for key in keys:
        deadline.check(stage)
        i, k, t = key
        by_job.setdefault(i, []).append(key)
        o = opts[i][k]
        for mm in range(M):
            if o.y[mm]:
                for tau in range(t, t + o.slots):
                    usage.setdefault((mm, tau), []).append((o.y[mm], key))
    m.one = pyo.Constraint(range(len(opts)))
    for i in range(len(opts)):
        m.one[i] = sum(m.w[key] for key in deadline.checked(by_job[i], stage)) == 1
    cap_keys = [key for key, lst in usage.items() if sum(c for c, _ in lst) > g]
    m.cap = pyo.Constraint(cap_keys)
    for mm, tau in cap_keys:  # one capacity row at a time, between checks of the deadline
        deadline.check(stage)
        m.cap[mm, tau] = sum(c * m.w[key] for c, key in usage[mm, tau]) <= g
    if symmetry:
        weights = _lex_weights(len(opts), g, 10**4)

        def col(mm: int) -> Any:
            return sum(weights[i] * opts[i][k].y[mm] * m.w[i, k, t] for (i, k, t) in deadline.checked(keys, stage)
                       if i < len(weights))

        m.lex = pyo.Constraint(range(M - 1))
        for mm in range(M - 1):
            m.lex[mm] = col(mm) >= col(mm + 1)
    offset = sum(j.release for j in instance.jobs) if objective == "total_flow" else 0.0
    if objective == "makespan":
        m.z = pyo.Var(bounds=(0, None))
        m.mk = pyo.Constraint(range(len(opts)))
        for i in range(len(opts)):
            m.mk[i] = m.z >= sum(cost[key] * m.w[key] for key in deadline.checked(by_job[i], stage))
        m.obj = pyo.Objective(expr=m.z, sense=pyo.minimize)
    else:
        m.obj = pyo.Objective(expr=sum(cost[key] * m.w[key] for key in deadline.checked(keys, stage)) - offset,
                              sense=pyo.minimize)
    out = solve_pyomo_model(m, solver=solver, time_limit=time_limit, seed=seed)
    add_solver_points(out.trajectory)  # the objective is in seconds, its offset included
    info: dict[str, Any] = {
        "solver_status": out.solver_status, "solver_time_s": out.wall_time_s,
        "variables": m.nvariables(), "constraints": m.nconstraints(),
        "options": sum(len(lst) for lst in opts), "horizon_slots": w.horizon, "upper_bound_greedy": w.ub,
    }
    if out.status == Status.INFEASIBLE:
        return Result(Status.ERROR, message=f"{solver} reported the model infeasible", info=info)
    if out.has_solution:
        st, ch = [0] * len(opts), [0] * len(opts)
        for (i, k, t) in keys:
            if pyo.value(m.w[i, k, t]) > 0.5:
                st[i], ch[i] = t, k
        info["incumbent"] = "solver"
    else:
        st, ch = w.warm
        info["incumbent"] = "greedy warm start"
    bound = max(0.0, out.bound) if out.bound is not None else None
    info["build_and_solve_s"] = time.perf_counter() - t0
    return _finish(instance, objective, out.status, _schedule_dict(instance, opts, st, ch), bound, info,
                   out.solver_status)


# ============================================================================= brute force
def brute_force(instance: DdlwmpInstance, objective: str = "total_completion"
                ) -> tuple[float, dict[str, Any]]:
    """The optimum and an optimal schedule by enumerating job orders × option vectors with
    earliest feasible starts (module docstring for why this is complete). Depth-first with
    shared prefixes; raises :class:`InputError` beyond :data:`BRUTE_FORCE_MAX_LEAVES` leaves.

    References
    ----------
    Luo et al., "Prediction-Assisted Online Distributed Deep Learning Workload Scheduling in GPU
    Clusters": the offline optimum of Sec. III (constraints (1)-(3), eqs. (4)-(7)) by
    enumerating job orders and placement options.

    Notes
    -----
    Guarantee: the optimum (complete enumeration; independent of both models).

    Units: the optimum in seconds; the schedule's starts in seconds, on slot boundaries.

    Examples
    --------
    >>> from optkit.formulations.ddlwmp import DdlwmpInstance, evaluate
    >>> from optkit.formulations.ddlwmp.generate import SUITES
    >>> inst = DdlwmpInstance.from_dict(next(iter(SUITES["tiny"].build()))[1])   # 3 jobs, 2 servers of 2 GPUs
    >>> value, schedule = brute_force(inst)
    >>> round(value, 6)
    18.426876
    """
    _check_objective(objective)
    cl = instance.cluster
    slot = cl.slot_seconds
    opts = _job_options(instance)
    n = len(opts)
    leaves = math.factorial(n) * math.prod(len(lst) for lst in opts)
    if leaves > BRUTE_FORCE_MAX_LEAVES:
        raise InputError("instance", f"is too large for brute force: {leaves} (order, options) leaves "
                         f"(limit {BRUTE_FORCE_MAX_LEAVES}); use cpsat or highs")
    rel = [_release_slot(j.release, slot) for j in instance.jobs]
    prof = _Profile(cl.servers, cl.gpus_per_server)
    starts, choice = [0] * n, [0] * n
    placed = [False] * n
    best: list[Any] = [math.inf, None]

    def rec(depth: int) -> None:
        if depth == n:
            val = schedule_objective(instance, opts, starts, choice, objective)
            if val < best[0]:
                best[0], best[1] = val, (list(starts), list(choice))
            return
        for i in range(n):
            if placed[i]:
                continue
            placed[i] = True
            for k, o in enumerate(opts[i]):
                t = prof.earliest(o.y, rel[i], o.slots)
                prof.add(o.y, t, o.slots)
                starts[i], choice[i] = t, k
                rec(depth + 1)
                prof.add(o.y, t, o.slots, -1)
            placed[i] = False

    rec(0)
    st, ch = best[1]
    return best[0], _schedule_dict(instance, opts, st, ch)


def run_brute_force(instance: DdlwmpInstance, *, objective: str = "total_completion",
                    time_limit: float | None = None, seed: int | None = None) -> Result:
    """Brute force as an algorithm: ``optimal`` with ``bound`` = the optimum.

    References
    ----------
    Luo et al., "Prediction-Assisted Online Distributed Deep Learning Workload Scheduling in GPU
    Clusters", Sec. III: :func:`brute_force` behind the algorithm table's entry ``brute-force``.

    Notes
    -----
    Guarantee: the optimum (:func:`brute_force`).

    Units: the optimum (``bound``) and the schedule's completion times in seconds;
    ``time_limit`` in seconds.

    Examples
    --------
    >>> from optkit.formulations.ddlwmp import DdlwmpInstance, evaluate
    >>> from optkit.formulations.ddlwmp.generate import SUITES
    >>> inst = DdlwmpInstance.from_dict(next(iter(SUITES["tiny"].build()))[1])   # 3 jobs, 2 servers of 2 GPUs
    >>> r = run_brute_force(inst)
    >>> r.status.value, round(r.bound, 6)
    ('optimal', 18.426876)
    """
    value, solution = brute_force(instance, objective)
    return _finish(instance, objective, Status.OPTIMAL, solution, value, {}, "enumeration")
