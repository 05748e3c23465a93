"""A proven lower bound on the cut of a job with tensor-parallel or MoE stages (Sec. VI), computed
on the stage structure: the degree bound of :mod:`.bounds` (bound 1) refined by placement units,
without listing the pipeline edges, so it holds and is cheap on 16,384-GPU jobs.

Why it holds
------------
A feasible mapping puts exactly ``c_m`` vertices on server m (:mod:`.bounds`, notation), and a
placement unit U (:func:`.model.placement_units`: a tensor-parallel replica's t slices, or one
vertex) whole on one server (Sec. VI's one-server rule, a hard constraint of ``evaluate``). Every
cut edge has its ends on two servers, so ``cut = 1/2 sum_v w(v, V \\ P(v))``, P(v) the vertices on
v's server. For v in a unit U of size t on a server of capacity c >= t, ``P(v) - v`` is U's other
t - 1 vertices and c - t vertices outside U, so

    w(v, V \\ P(v)) >= W_v - w(v, U - v) - top_{c-t}(v) =: r_v(c),

``W_v`` v's weighted degree and ``top_j(v)`` the sum of the j largest weights of v's edges to
vertices outside U (for t = 1 this is bound 1 of :mod:`.bounds`; the slices of a unit are never
apart, so their tensor-parallel edges are never cut, and they take t - 1 of the c - 1 places
a lone vertex could give to its heaviest neighbours). Assigning vertices to the servers' slots
is a bijection, so ``cut >= 1/2 min { sum_v r_v(c(v)) }`` over the ways of giving c_m slots of
each server m to the vertices. Vertices with equal rows ``(r_v(c))_c`` are interchangeable and so
are servers of equal capacity: the minimum is a transportation problem between vertex classes
(supply n_i, their count) and capacities (demand c M_c, M_c the servers of capacity c), with
``r = +inf`` where c < t.

Any ``beta`` (one value per capacity) gives a certified bound by weak duality:
``sum_i n_i min_{c >= t_i} (r_i(c) - beta_c) + sum_c c M_c beta_c`` is at most every assignment's
``sum_v r_v(c(v))``. The ``beta`` used are HiGHS's duals of the transportation LP's capacity rows
(0 if the LP is not solved, or with a single capacity, where every beta gives the same), and the
bound is computed from them in floating point after the solve, so no solver tolerance can lift
it above the minimum: it is a bound for whatever ``beta`` the LP returned.

A vertex's edges (:func:`.model.job_edge_kinds`): the within-stage edges of
:func:`.model.stage_edges` (data-parallel, tensor-parallel, all-to-all) and the pipeline edges,
``V_{s-1}`` of weight ``w_s`` and ``V_{s+1}`` of weight ``w_{s+1}`` (:func:`.model.pipeline_weights`),
never to a unit-mate. ``top_j`` needs only the j <= max c - 1 heaviest of them.

Where it is tight (benchmarks/perf/gpu_mapping_llm_gap.md): on a job whose heaviest edges stay
inside units or inside what one server can hold (a Mixtral-like replica's 8 expert groups on an
8-GPU server, a GPT-3 tensor-parallel replica filling one), the bound is the cut of a mapping that
keeps them there. It knows nothing of how the other vertices fill a server (only each vertex's
own heaviest edges), so it is loose where servers must mix stages or split replicas.
"""

from __future__ import annotations

import math

import numpy as np

from optkit.deadline import check as check_deadline

from .model import GpuMappingInstance, pipeline_weights, placement_units, stage_edges

__all__ = ["unit_cut_bound", "unit_costs"]

_STAGE = "computing the unit cut bound"


def unit_costs(instance: GpuMappingInstance) -> tuple[np.ndarray, list[int]]:
    """``(r, caps)``: ``r[v, i] = r_v(caps[i])`` of the module docstring (``inf`` where the
    capacity is below v's unit size), ``caps`` the distinct free-GPU counts, ascending."""
    job = instance.job
    n = int(job.n_replicas)
    caps = sorted({int(c) for c in instance.servers})
    K = max(caps) - 1  # at most c - 1 places beside v on its server
    unit_of = np.empty(n, dtype=np.int64)
    size = np.empty(n, dtype=np.int64)
    for p, members in enumerate(placement_units(job)):
        unit_of[members] = p
        size[members] = len(members)
    degree = np.zeros(n)
    mate = np.zeros(n)
    verts: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    off = job.offsets
    for s in range(len(job.stages)):
        check_deadline(_STAGE)
        u, v, w = stage_edges(job, s)
        lo = int(off[s])
        a, b = u.astype(np.int64) + lo, v.astype(np.int64) + lo
        np.add.at(degree, a, w)
        np.add.at(degree, b, w)
        same = unit_of[a] == unit_of[b]
        np.add.at(mate, a[same], w[same])
        np.add.at(mate, b[same], w[same])
        apart = ~same
        verts += [a[apart], b[apart]]
        weights += [w[apart], w[apart]]
    vv = np.concatenate(verts) if verts else np.empty(0, dtype=np.int64)
    ww = np.concatenate(weights) if weights else np.empty(0)
    # each vertex's K heaviest within-stage edges outside its unit
    order = np.lexsort((-ww, vv))
    vv, ww = vv[order], ww[order]
    first = np.searchsorted(vv, np.arange(n))
    rank = np.arange(vv.size) - first[vv]
    keep = rank < K
    own = np.zeros((n, max(K, 0)))
    own[vv[keep], rank[keep]] = ww[keep]
    # the pipeline edges: V_{s-1} of weight w_s and V_{s+1} of weight w_{s+1}
    stage_of = job.vertex_stage
    V = job.vertices.astype(np.int64)
    S = len(job.stages)
    pw = pipeline_weights(job) + [0.0]
    before = np.array([pw[s] if s else 0.0 for s in range(S)])
    after = np.array([pw[s + 1] if s + 1 < S else 0.0 for s in range(S)])
    n_before = np.array([V[s - 1] if s else 0 for s in range(S)])
    n_after = np.array([V[s + 1] if s + 1 < S else 0 for s in range(S)])
    degree += (before * n_before + after * n_after)[stage_of]
    cols = np.arange(max(K, 0))
    pipe_b = np.where(cols[None, :] < np.minimum(n_before, K)[stage_of][:, None], before[stage_of][:, None], 0.0)
    pipe_a = np.where(cols[None, :] < np.minimum(n_after, K)[stage_of][:, None], after[stage_of][:, None], 0.0)
    check_deadline(_STAGE)
    allw = -np.sort(-np.concatenate([own, pipe_b, pipe_a], axis=1), axis=1)
    top = np.concatenate([np.zeros((n, 1)), np.cumsum(allw, axis=1)], axis=1)  # top[v, j], j <= 3K
    r = np.full((n, len(caps)), math.inf)
    for i, c in enumerate(caps):
        ok = size <= c
        j = np.clip(c - size, 0, top.shape[1] - 1)
        r[ok, i] = np.maximum(degree[ok] - mate[ok] - top[ok, j[ok]], 0.0)
    return r, caps


def _dual_value(r: np.ndarray, counts: np.ndarray, demand: np.ndarray, beta: np.ndarray) -> float:
    """Weak duality (module docstring): a lower bound on the transportation minimum for any beta."""
    reduced = np.min(r - beta[None, :], axis=1)
    if not np.all(np.isfinite(reduced)):
        return -math.inf  # a class that fits no server: no feasible mapping
    return float(counts @ reduced + demand @ beta)


def unit_cut_bound(instance: GpuMappingInstance) -> float:
    """A proven lower bound on the cut (bytes per iteration) of any feasible mapping of
    ``instance`` (module docstring); 0 on one server. Checks the current exact solve's deadline
    (:mod:`optkit.deadline`) between stages.

    References
    ----------
    Luo et al., Sec. IV-B (the job graph's cut) and Sec. VI (tensor slices and expert groups as
    vertices, a replica's slices on one server); :mod:`.bounds`, bound 1, refined by units.

    Examples
    --------
    Two replicas of t = 2 slices (tp_bytes 1e8, h = 1e9, ring) on two servers of 2 GPUs: each replica
    fills a server, so the two data-parallel pairs (1e9 each) are cut, and the bound is that cut.

    >>> from optkit.formulations.gpu_mapping import GpuMappingInstance
    >>> st = {"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0, "out_bytes": 0.0,
    ...       "param_bytes": 1e9, "tensor_parallel": 2, "tp_bytes": 1e8}
    >>> inst = GpuMappingInstance.from_dict({"problem": "gpu-mapping", "cluster": {
    ...     "gpus_per_server": 2, "inter_bandwidth": 1e9, "intra_bandwidth": 1e11},
    ...     "job": {"allreduce": "ring", "stages": [st]}, "servers": [2, 2]})
    >>> round(unit_cut_bound(inst))
    2000000000
    """
    from scipy.optimize import linprog

    servers = [int(c) for c in instance.servers]
    if len(servers) < 2:
        return 0.0
    r, caps = unit_costs(instance)
    classes, counts = np.unique(r, axis=0, return_counts=True)
    counts = counts.astype(float)
    demand = np.array([c * servers.count(c) for c in caps], dtype=float)
    C, I = len(caps), len(classes)
    beta = np.zeros(C)  # with one capacity every beta gives the same value (sum n_i = demand)
    if C > 1:
        check_deadline(_STAGE)
        finite = np.isfinite(classes)
        cost = np.where(finite, classes, 0.0).ravel()
        bounds = [(0.0, None) if f else (0.0, 0.0) for f in finite.ravel()]
        a_eq = np.zeros((I + C, I * C))
        for i in range(I):
            a_eq[i, i * C:(i + 1) * C] = 1.0
        for c in range(C):
            a_eq[I + c, c::C] = 1.0
        res = linprog(cost, A_eq=a_eq, b_eq=np.concatenate([counts, demand]), bounds=bounds, method="highs")
        if res.status == 0:  # HiGHS's duals of the capacity rows (the objective's sensitivity to them)
            beta = np.asarray(res.eqlin.marginals[I:], dtype=float)
    best = _dual_value(classes, counts, demand, beta)
    if not math.isfinite(best):
        return 0.0
    return max(0.0, 0.5 * best * (1.0 - 1e-12))
