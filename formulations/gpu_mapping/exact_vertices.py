"""The exact vertex model of gpu-mapping for jobs with MoE stages (Sec. VI), solved by CP-SAT.

An MoE stage's time and cut depend on *which* expert groups share a server (the a2a edges of
:func:`.model.job_edge_kinds` join particular groups, weighted by the routing matrix), so the
stage-count model of :mod:`.exact` does not hold it. This model decides the server of every
placement unit (:func:`.exact.placement_units`: a tensor-parallel replica's t slices together,
Sec. VI's one-server rule, or a single vertex) and is exact for both objectives of
:func:`.model.evaluate`.

Variables: ``y[p, m]`` (unit p on server m), exactly one per unit, ``sum_p |p| y[p, m] = c_m``;
``X[s, m] = sum_{v in s} y[unit(v), m]`` (the stage's GPUs on m), one-hot ``z[s, m, c]``.

cut
---
* pipeline edges (every vertex of s-1 to every vertex of s, one weight ``w'_s``): the pairs on a
  common server are ``sum_m X[s-1,m] X[s,m]`` (``AddMultiplicationEquality``), so their cut is
  ``w'_s (V_{s-1} V_s - sum_m X[s-1,m] X[s,m])``, as in the count model;
* the a2a edges of an MoE replica under uniform routing all weigh ``w = 2 expert_bytes / e^2``:
  with ``N[m]`` its groups on server m (an integer per server), their cut is
  ``(w/2) (e^2 - sum_m N[m]^2)`` (the pairs apart), squares by ``AddMultiplicationEquality``;
* every other edge (data-parallel all-reduce, skewed token routing; tensor-parallel edges join the
  slices of one unit and are never cut) gets ``e_ab >= y[ua, m] - y[ub, m]`` for every m (the clause
  ``not y[ua,m] or y[ub,m] or e_ab``), charged ``w_ab e_ab``: if a and b are apart, a's server
  forces e_ab = 1; together, minimisation sets it to 0.

alpha (:func:`.model.vertex_times`, eq. 7 extended)
---------------------------------------------------
For vertex v of stage s on server m: ``beta = comp_s + sum_{u in N(v)} w_uv g/B_inter
+ sum_{u in N(v)} w_uv (1/B_intra - g/B_inter) [u on m] + AR``, where N(v) are v's pipeline and
a2a neighbours: the pipeline part of the sum over ``[u on m]`` is ``w'_s X[s-1, m] +
w'_{s+1} X[s+1, m]``, the a2a part ``sum_u w_uv y[unit(u), m]``: **linear**. AR (eq. 6 per
position j): ``T[s, j, m]`` = all k peers of v's position on m (``T <= y`` for each peer,
``T >= sum y - (k-1)``); then ``D/B_intra`` if T, else ``D g / (c B_inter)`` when ``X[s, m] = c``.
So ``alpha >= base_v + lin + AR`` is enforced by the literals ``y[unit(v), m]``, ``T`` (or
``z[s, m, c]`` and ``not T``): minimising alpha gives exactly the largest beta.

Symmetry: servers of equal free GPUs are interchangeable (no term sees a server's label), and
every server holds at least one unit, so some optimum has such servers ordered by their
lowest-indexed unit: ``y[p, m'] => OR_{q < p} y[q, m]`` for consecutive m < m' of a class.

Numbers, bound and warm start as in :mod:`.exact`: coefficients scaled by ``1/delta`` and
rounded down (``delta = UB / 2^30``, UB the start mapping's value), so ``delta`` times CP-SAT's
bound is a proven lower bound; the start is :func:`.colocation.feasible_mapping` (Heavy-Edge).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from optkit.deadline import check as check_deadline, checked, offer as offer_incumbent
from optkit.errors import InputError
from optkit.result import Result, Status

from .bound_proof import bound_proves, llm_bound, proven_by_bound
from .colocation import feasible_mapping
from .model import (
    GpuMappingInstance, alpha_of_assignment, cut_weight, placement_units, stage_compute, vertex_servers,
)

__all__ = ["solve_vertex_model", "build_vertex_model"]

_RESOLUTION_BITS = 30
_MAX_COEF = 2**50


def _objective_of(instance: GpuMappingInstance, assignment: list[list[int]], objective: str) -> float:
    if objective == "alpha":
        return alpha_of_assignment(instance.job, instance.cluster, assignment)
    return cut_weight(instance.job, vertex_servers(instance.job, assignment))


def build_vertex_model(instance: GpuMappingInstance, objective: str, *, upper_bound: float,
                       symmetry: bool = True) -> tuple[Any, dict[tuple[int, int], Any], float]:
    """The CP-SAT vertex model of the module docstring: ``(model, y, delta)``."""
    from ortools.sat.python import cp_model

    job, cl = instance.job, instance.cluster
    caps = [int(c) for c in instance.servers]
    M, S = len(caps), len(job.stages)
    units = placement_units(job)
    unit_of = np.empty(job.n_replicas, dtype=np.int64)
    for p, members in enumerate(units):
        unit_of[members] = p
    delta = (upper_bound if upper_bound > 0 else 1.0) / 2.0**_RESOLUTION_BITS

    def scaled(value: float) -> int:
        return int(max(-_MAX_COEF, min(_MAX_COEF, math.floor(value / delta))))

    md = cp_model.CpModel()
    # every loop below checks the solve's deadline (optkit.deadline) at least once per unit or
    # server: a 16,384-GPU job on 2,048 servers has 33 million y alone, so the construction itself
    # must stop at the time limit
    building = "building the vertex model"
    y: dict[tuple[int, int], Any] = {}
    for p in range(len(units)):
        check_deadline(building)
        for m in range(M):
            y[p, m] = md.NewBoolVar(f"y[{p},{m}]")
    for p in range(len(units)):
        check_deadline(building)
        md.AddExactlyOne([y[p, m] for m in range(M)])
    for m in range(M):
        check_deadline(building)
        md.Add(sum(len(units[p]) * y[p, m] for p in range(len(units))) == caps[m])
    stage_of = job.vertex_stage
    V = [int(v) for v in job.vertices]
    X: dict[tuple[int, int], Any] = {}
    for s in range(S):
        members = sorted({int(unit_of[v]) for v in range(int(job.offsets[s]), int(job.offsets[s + 1]))})
        for m in range(M):
            check_deadline(building)
            X[s, m] = md.NewIntVar(0, min(V[s], caps[m]), f"X[{s},{m}]")
            md.Add(X[s, m] == sum(len(units[p]) * y[p, m] for p in members))
    if symmetry:
        by: dict[int, list[int]] = {}
        for m, c in enumerate(caps):
            by.setdefault(c, []).append(m)
        for ms in by.values():
            for m, m2 in zip(ms, ms[1:]):
                for p in range(len(units)):
                    check_deadline(building)
                    md.AddBoolOr([y[p, m2].Not()] + [y[q, m] for q in range(p)])
    kinds = job.edge_kinds
    g, bi, ba = float(cl.gpus_per_server), cl.inter_bandwidth, cl.intra_bandwidth
    st = job.stages
    # w'_s: the weight of every pipeline edge between stages s-1 and s (model.job_edge_kinds)
    pipe_w = [0.0] + [2.0 * st[s - 1].out_bytes / (int(job.units[s - 1]) * st[s].replicas * int(job.units[s]))
                      for s in range(1, S)]

    if objective == "cut":
        terms: list[Any] = []
        const = 0
        for s in range(1, S):
            w = scaled(pipe_w[s])
            if w == 0:
                continue
            const += w * V[s - 1] * V[s]
            for m in range(M):
                check_deadline(building)
                prod = md.NewIntVar(0, min(V[s - 1], caps[m]) * min(V[s], caps[m]), f"P[{s},{m}]")
                md.AddMultiplicationEquality(prod, [X[s - 1, m], X[s, m]])
                terms.append(-w * prod)
        acc: dict[tuple[int, int], float] = {}
        # an MoE replica whose a2a edges all weigh the same w (uniform routing): its cut is
        # w (e^2 - sum_m N_m^2) / 2 with N_m its groups on server m, one count per server instead of a
        # literal per pair (the same value; CP-SAT propagates counts far better)
        uniform_pairs: set[tuple[int, int]] = set()
        for s, stage in enumerate(st):
            if stage.experts < 2 or stage.routing != "uniform":
                continue
            e = stage.experts
            w = scaled(stage.expert_bytes / (e * e))  # half a pair's weight 2 expert_bytes / e^2
            for r in range(stage.replicas):
                check_deadline(building)
                members = [int(unit_of[int(job.offsets[s]) + r * e + j]) for j in range(e)]
                uniform_pairs |= {(min(a, b), max(a, b)) for i, a in enumerate(members) for b in members[i + 1:]}
                if w == 0:
                    continue
                const += w * e * e
                sq_terms = []
                for m in range(M):
                    n = md.NewIntVar(0, min(e, caps[m]), f"N[{s},{r},{m}]")
                    md.Add(n == sum(y[p, m] for p in members))
                    sq = md.NewIntVar(0, min(e, caps[m]) ** 2, f"N2[{s},{r},{m}]")
                    md.AddMultiplicationEquality(sq, [n, n])
                    sq_terms.append(sq)
                terms.append(-(w * sum(sq_terms)))
        for kind in ("dp", "tp", "a2a"):
            for a, b, wf in checked(zip(*(arr.tolist() for arr in kinds[kind])), building):
                pa, pb = int(unit_of[a]), int(unit_of[b])
                if pa == pb or (kind == "a2a" and (min(pa, pb), max(pa, pb)) in uniform_pairs):
                    continue  # one unit: never cut; a uniform MoE replica: counted above
                key = (min(pa, pb), max(pa, pb))
                acc[key] = acc.get(key, 0.0) + wf
        for (pa, pb), wf in checked(sorted(acc.items()), building, every=64):
            w = scaled(wf)
            if w == 0:
                continue
            e = md.NewBoolVar(f"e[{pa},{pb}]")
            for m in range(M):
                md.AddBoolOr([y[pa, m].Not(), y[pb, m], e])
            terms.append(w * e)
        md.Minimize(const + sum(terms))
        return md, y, delta

    alpha = md.NewIntVar(0, scaled(upper_bound) + 2, "alpha")
    comp = stage_compute(job, cl)
    a2a_nbrs: dict[int, list[tuple[int, float]]] = {}
    for a, b, wf in checked(zip(*(arr.tolist() for arr in kinds["a2a"])), building):
        a2a_nbrs.setdefault(a, []).append((b, wf))
        a2a_nbrs.setdefault(b, []).append((a, wf))
    together: dict[tuple[int, int, int], Any] = {}
    for s, stage in enumerate(job.stages):
        k, us = stage.replicas, stage.units
        if k < 2:
            continue
        for j in range(us):
            peers = sorted({int(unit_of[int(job.offsets[s]) + r * us + j]) for r in range(k)})
            for m in range(M):
                check_deadline(building)
                t = md.NewBoolVar(f"T[{s},{j},{m}]")
                for p in peers:
                    md.AddImplication(t, y[p, m])
                md.AddBoolOr([t] + [y[p, m].Not() for p in peers])
                together[s, j, m] = t
    z: dict[tuple[int, int, int], Any] = {}
    for s in range(S):
        for m in range(M):
            check_deadline(building)
            hi = min(V[s], caps[m])
            lits = [md.NewBoolVar(f"z[{s},{m},{c}]") for c in range(hi + 1)]
            md.AddExactlyOne(lits)
            md.Add(X[s, m] == sum(c * lit for c, lit in enumerate(lits)))
            for c, lit in enumerate(lits):
                z[s, m, c] = lit
    slope = 1.0 / ba - g / bi
    for v in range(job.n_replicas):
        check_deadline(building)
        s = int(stage_of[v])
        stage = job.stages[s]
        us, k = stage.units, stage.replicas
        j = (v - int(job.offsets[s])) % us
        base = float(comp[s])
        lin_terms: list[tuple[float, Any]] = []
        if s > 0:
            base += pipe_w[s] * V[s - 1] * g / bi
            lin_terms.append((pipe_w[s] * slope, ("X", s - 1)))
        if s < S - 1:
            base += pipe_w[s + 1] * V[s + 1] * g / bi
            lin_terms.append((pipe_w[s + 1] * slope, ("X", s + 1)))
        for u, wf in a2a_nbrs.get(v, []):
            base += wf * g / bi
            lin_terms.append((wf * slope, ("y", int(unit_of[u]))))
        data = 2.0 * (k - 1) * (stage.param_bytes / us) / k if k >= 2 else 0.0
        p = int(unit_of[v])
        for m in range(M):
            lin = sum(scaled(cf) * (X[ref[1], m] if ref[0] == "X" else y[ref[1], m]) for cf, ref in lin_terms)
            if k < 2:
                md.Add(alpha >= scaled(base) + lin).OnlyEnforceIf(y[p, m])
                continue
            t = together[s, j, m]
            md.Add(alpha >= scaled(base + data / ba) + lin).OnlyEnforceIf([y[p, m], t])
            for c in range(1, min(V[s], caps[m]) + 1):
                md.Add(alpha >= scaled(base + data * g / (c * bi)) + lin).OnlyEnforceIf([y[p, m], z[s, m, c], t.Not()])
    md.Minimize(alpha)
    return md, y, delta


def solve_vertex_model(instance: GpuMappingInstance, *, objective: str = "cut", time_limit: float | None = None,
                       seed: int | None = None, workers: int | None = None, symmetry: bool = True,
                       log: bool = False) -> Result:
    """Solve the vertex model (module docstring) with CP-SAT: the ``cpsat`` algorithm on jobs with
    MoE stages (:func:`.exact.run_cpsat` dispatches here).

    Guarantee: status ``optimal`` is a proven optimum (up to ``delta``, the rounding of the
    coefficients); ``infeasible`` is proven (no placement keeps every tensor-parallel replica on one
    server); at the time limit, ``time_limit`` with the best mapping and a proven ``bound``.
    """
    from optkit.solvers.cpsat import solve_cp_model

    if objective not in ("cut", "alpha"):
        raise InputError("objective", f"must be one of cut, alpha, got {objective!r}")
    start = time.perf_counter()
    warm = feasible_mapping(instance, seed=seed)
    # a proven bound before the model is built (bounds.lower_bound: for alpha the slowest stage's
    # compute, for the cut the unit degree bound of unit_bound.py; both checked against brute force
    # in tests/test_gpu_mapping_llm.py): a run cut while it builds the model (a 16,384-GPU MoE job's
    # y alone are 33 million literals) still reports it, and a start mapping that meets it is optimal
    # with no model built at all (bound_proof.bound_proves)
    early_bound = llm_bound(instance, objective)
    if warm is not None:
        warm_value = _objective_of(instance, warm, objective)
        if early_bound is not None and bound_proves(warm_value, early_bound):
            return proven_by_bound(warm, early_bound, {"model": "vertices"})
        offer_incumbent(lambda message: Result(
            Status.TIME_LIMIT, solution={"assignment": warm}, bound=early_bound, message=message,
            info={"incumbent": "heavy-edge warm start", "bound_from": "bounds.lower_bound"}))
    else:
        # every edge cut (cut_weight with each vertex on its own server: the stage structure, no
        # list of the pipeline edges), or 1 s for alpha: the scale of the coefficients only
        warm_value = (cut_weight(instance.job, np.arange(instance.job.n_replicas)) or 1.0) if objective == "cut" else 1.0
    md, y, delta = build_vertex_model(instance, objective, upper_bound=warm_value, symmetry=symmetry)
    hint: dict[Any, int] = {}
    if warm is not None:
        sv = vertex_servers(instance.job, warm)
        first = [members[0] for members in placement_units(instance.job)]
        for (p, m), var in y.items():
            hint[var] = int(sv[first[p]] == m)
    if time_limit is not None:
        time_limit = max(1e-3, time_limit - (time.perf_counter() - start))
    out = solve_cp_model(md, time_limit=time_limit, workers=workers, seed=seed, hint=hint, log=log)
    proto = md.Proto()
    info: dict[str, Any] = {"solver_status": out.solver_status, "solver_time_s": out.wall_time_s,
                            "variables": len(proto.variables), "constraints": len(proto.constraints),
                            "resolution": delta, "model": "vertices", "symmetry_breaking": symmetry,
                            "deterministic_time": out.raw.deterministic_time}
    bound = max(0.0, delta * out.bound) if out.bound is not None else None
    if early_bound is not None and (bound is None or early_bound > bound):
        bound, info["bound_from"] = early_bound, "bounds.lower_bound"
    if out.status == Status.INFEASIBLE:
        return Result(Status.INFEASIBLE, message="CP-SAT: no mapping keeps every replica's tensor slices on one "
                      "server", info=info)
    if out.has_solution:
        units = placement_units(instance.job)
        sv = np.empty(instance.job.n_replicas, dtype=np.int64)
        for p, members in enumerate(units):
            sv[members] = next(m for m in range(len(instance.servers)) if out.raw.Value(y[p, m]))
        off = instance.job.offsets
        assignment = [sv[off[s]:off[s + 1]].tolist() for s in range(len(instance.job.stages))]
        info["incumbent"] = "solver"
        return Result(out.status, solution={"assignment": assignment}, bound=bound, message=out.solver_status,
                      info=info)
    if out.status == Status.TIME_LIMIT and warm is not None:
        info["incumbent"] = "heavy-edge warm start"
        return Result(out.status, solution={"assignment": warm}, bound=bound, message=out.solver_status, info=info)
    return Result(out.status, bound=bound, message=out.solver_status, info=info)
