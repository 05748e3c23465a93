"""ddlwmp: instance, schedule and the independent ``evaluate``.

Source: Luo, Liu, Lee, Shroff (the A-SRPT paper), Sec. III: problem (8). A cluster of M servers
with g GPUs each; job i arrives at r_i, needs g_i = sum_s k_{i,s} GPUs for its pipeline model, runs
n_i iterations non-preemptively from its start t_i on a placement x_{i,s}^m, each iteration
taking alpha_i (eqs. 4-7 of the placement, :mod:`optkit.formulations.gpu_mapping.model`), and completes
at C_i = t_i + n_i·alpha_i. Objective: total completion time sum_i C_i.

Time (optkit's reading of the slotted model, used by the simulator and the exact solver alike):
time is in seconds; decisions happen at integer multiples of ``slot_seconds`` (1 s by default),
so every start t_i is a slot boundary with t_i >= r_i; C_i is real; job i holds its GPUs over
[t_i, ceil(C_i / slot)·slot), so they are free again at the first slot boundary at or after C_i.
Releases may be real (a job released at 0.4 s can start at 1 s at the earliest). "The first
boundary at or after" is :func:`optkit.online.slot_ceil`, whose tolerance (a C_i within 1e-9
relative of a boundary counts as on it) is part of the rule.

A job may be ``single_node`` (optional, ``false`` when absent): its g_i GPUs must all be on one
server; ``evaluate`` rejects a schedule that splits it, the exact solvers only consider its
one-server placements, and every policy starts it only on one server.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from optkit.formulations.gpu_mapping.model import Cluster, PipelineJob, alpha_from_counts
from optkit.errors import InputError
from optkit.formulation import Evaluation
from optkit.online import SLOT_TOL, on_slot, single_node_field, slot_ceil
from optkit.validation import MAX_COUNT, check_typed, instance_object, integer, known_keys, mapping, number, trusted

from .tensor import check_model, checked_alpha, is_llm

__all__ = [
    "PROBLEM", "OBJECTIVES", "DdlwmpCluster", "Job", "DdlwmpInstance", "evaluate", "free_time",
    "slot_ceil", "TIME_TOL",
]

PROBLEM = "ddlwmp"
OBJECTIVES = ("total_completion", "total_flow", "makespan")
TIME_TOL = 1e-9  # relative tolerance on recomputed times (seconds)


@dataclass(frozen=True)
class DdlwmpCluster:
    """M servers of g GPUs; B_inter per server NIC and B_intra in bytes/s; the slot length in s."""

    servers: int
    gpus_per_server: int
    inter_bandwidth: float
    intra_bandwidth: float
    slot_seconds: float = 1.0

    def __post_init__(self) -> None:
        check_typed(lambda: DdlwmpCluster.from_dict(self.to_dict()), PROBLEM)
        # built once with the cluster, so that the placement and evaluate read it as a value rather
        # than build it again from here (the one-way simulation path, issue 36)
        with trusted():  # the same numbers, checked above
            object.__setattr__(self, "_mapping", Cluster(self.gpus_per_server, self.inter_bandwidth,
                                                         self.intra_bandwidth))

    @property
    def total_gpus(self) -> int:
        return self.servers * self.gpus_per_server

    @property
    def mapping_cluster(self) -> Cluster:
        """The gpu-mapping view (g, B_inter, B_intra) used by eqs. 4-7 (built with the cluster)."""
        return self._mapping  # type: ignore[attr-defined, no-any-return]

    @classmethod
    def from_dict(cls, d: Any, path: str = "cluster") -> "DdlwmpCluster":
        d = mapping(d, path)
        known_keys(d, ("servers", "gpus_per_server", "inter_bandwidth", "intra_bandwidth", "slot_seconds"), path)
        for key in ("servers", "gpus_per_server"):
            if key not in d:
                raise InputError(f"{path}.{key}", "is required")
        with trusted():
            return cls(
                servers=integer(d["servers"], f"{path}.servers", low=1, high=MAX_COUNT),
                gpus_per_server=integer(d["gpus_per_server"], f"{path}.gpus_per_server", low=1, high=MAX_COUNT),
                inter_bandwidth=number(d, "inter_bandwidth", path, positive=True),
                intra_bandwidth=number(d, "intra_bandwidth", path, positive=True),
                slot_seconds=number(d, "slot_seconds", path, positive=True) if "slot_seconds" in d else 1.0,
            )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"servers": self.servers, "gpus_per_server": self.gpus_per_server,
                             "inter_bandwidth": self.inter_bandwidth, "intra_bandwidth": self.intra_bandwidth}
        if self.slot_seconds != 1.0:
            d["slot_seconds"] = self.slot_seconds
        return d


@dataclass(frozen=True)
class Job:
    """One job: release r_i (s), model name, actual iterations n_i, optional prediction ñ_i,
    and the features a predictor may use (user, recurring group). Extra fields are kept.
    ``single_node``: the job's g_i GPUs must all be on one server (PAI's single-instance jobs;
    optional in a file, ``false`` when absent)."""

    id: str
    release: float
    model: str
    iterations: int
    predicted_iterations: float | None = None
    user: str | None = None
    group: str | None = None
    extras: Mapping[str, Any] = field(default_factory=dict, compare=False)
    single_node: bool = False

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "release": self.release, "model": self.model, "iterations": self.iterations}
        if self.predicted_iterations is not None:
            d["predicted_iterations"] = self.predicted_iterations
        if self.user is not None:
            d["user"] = self.user
        if self.group is not None:
            d["group"] = self.group
        if self.single_node:
            d["single_node"] = True
        d.update(self.extras)
        return d


_JOB_KEYS = ("id", "release", "model", "iterations", "predicted_iterations", "user", "group", "single_node")
_FAST_KEYS = frozenset(_JOB_KEYS[:5])  # a job with these keys only may take from_dict's fast path
_INF = float("inf")
# A trace job's own record, kept as extras (workloads.trace_workload): its id, duration (s) and GPU
# demand in the trace, the GPUs of the configuration it was given, its virtual cluster and job name.
_TRACE_KEYS = ("trace_id", "trace_duration", "trace_gpus", "gpus", "vc", "job_name")


@dataclass(frozen=True)
class DdlwmpInstance:
    """The cluster, the pipeline models by name, and the jobs (in the file's order)."""

    cluster: DdlwmpCluster
    models: Mapping[str, PipelineJob]
    jobs: tuple[Job, ...]
    extras: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        # g per model, counted once when the instance is built: what a run's readout asks of every
        # job after the schedule is evaluated is then a value read, not a count again (issue 36)
        object.__setattr__(self, "_gpus", {name: m.n_replicas for name, m in self.models.items()
                                           if isinstance(m, PipelineJob)})

    def model_of(self, job: Job) -> PipelineJob:
        return self.models[job.model]

    def gpus(self, job: Job) -> int:
        """g_i: the GPUs job i needs (its total replicas; counted per model when the instance was built)."""
        g = self._gpus.get(job.model)  # type: ignore[attr-defined]
        return self.models[job.model].n_replicas if g is None else g  # type: ignore[no-any-return]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "DdlwmpInstance":
        d = instance_object(d, PROBLEM, ("cluster", "models", "jobs"))
        known_keys(d, ("problem", "cluster", "models", "jobs"))
        cluster = DdlwmpCluster.from_dict(d["cluster"])
        raw_models = mapping(d["models"], "models")
        if not raw_models:
            raise InputError("models", "must define at least one model")
        # gpu-mapping's job model, tensor-parallel and expert stages included (A-SRPT paper Sec. VI);
        # check_model: ddlwmp's one tensor-parallel degree per job, dividing g (tensor.py)
        models = {str(name): PipelineJob.from_dict(m, f"models.{name}") for name, m in raw_models.items()}
        for name, m in models.items():
            check_model(m, cluster.gpus_per_server, f"models.{name}")
        if not isinstance(d["jobs"], list) or not d["jobs"]:
            raise InputError("jobs", f"must be a non-empty list of jobs, got {d['jobs']!r:.40}")
        jobs = []
        seen: set[str] = set()
        fits = {name for name, m in models.items() if m.n_replicas <= cluster.total_gpus}
        for i, j in enumerate(d["jobs"]):
            if type(j) is dict and _FAST_KEYS.issuperset(j):  # the common case, checked in a few comparisons
                jid, model, r, it = j.get("id"), j.get("model"), j.get("release"), j.get("iterations")
                pred = j.get("predicted_iterations")
                if (type(jid) is str and jid and jid not in seen and type(model) is str and model in fits
                        and (type(r) is float and 0.0 <= r < _INF or type(r) is int and r >= 0)
                        and type(it) is int and it >= 1
                        and (pred is None or type(pred) is float and 0.0 <= pred < _INF
                             or type(pred) is int and pred >= 0)):
                    seen.add(jid)
                    jobs.append(Job(id=jid, release=float(r), model=model, iterations=it,
                                    predicted_iterations=None if pred is None else float(pred), extras={}))
                    continue  # (anything else takes the checks below, which name the field)
            p = f"jobs[{i}]"
            if type(j) is not dict:  # (the common case skips the slower Mapping check)
                j = mapping(j, p)
            known_keys(j, _JOB_KEYS + _TRACE_KEYS, p, "a job")
            for key in ("id", "release", "model", "iterations"):
                if key not in j:
                    raise InputError(f"{p}.{key}", "is required")
            jid = j["id"]
            if not isinstance(jid, str) or not jid:
                raise InputError(f"{p}.id", f"must be a non-empty string, got {jid!r}")
            if jid in seen:
                raise InputError(f"{p}.id", f"duplicates the id {jid!r} of an earlier job")
            seen.add(jid)
            model = j["model"]
            if not isinstance(model, str) or model not in models:
                raise InputError(f"{p}.model", f"names no model in 'models': {model!r}")
            need = models[model].n_replicas
            if need > cluster.total_gpus:
                raise InputError(f"{p}.model", f"needs {need} GPUs but the cluster has {cluster.total_gpus}")
            pred = j.get("predicted_iterations")
            if pred is not None:
                pred = number(j, "predicted_iterations", p)
            for key in ("user", "group"):
                if j.get(key) is not None and not isinstance(j[key], str):
                    raise InputError(f"{p}.{key}", f"must be a string, got {type(j[key]).__name__}")
            single = single_node_field(j.get("single_node", False), f"{p}.single_node", jid, need,
                                       cluster.gpus_per_server, "server")
            jobs.append(Job(
                id=jid, release=number(j, "release", p), model=model,
                iterations=integer(j["iterations"], f"{p}.iterations", low=1),
                predicted_iterations=pred, user=j.get("user"), group=j.get("group"),
                extras={k: v for k, v in j.items() if k not in _JOB_KEYS}, single_node=single,
            ))
        _check_span(cluster, models, jobs)
        extras = {k: v for k, v in d.items() if k not in ("problem", "cluster", "models", "jobs")}
        return cls(cluster=cluster, models=models, jobs=tuple(jobs), extras=extras)

    def to_dict(self) -> dict[str, Any]:
        d = {"problem": PROBLEM, "cluster": self.cluster.to_dict(),
             "models": {name: m.to_dict() for name, m in self.models.items()},
             "jobs": [j.to_dict() for j in self.jobs]}
        d.update(self.extras)
        return d


MAX_SPAN_SLOTS = 2.0 ** 50
"""Most slots an instance may span (latest release plus every job run one after another at
its slowest placement): slot arithmetic is exact in floats up to here; beyond it is bad input."""


def alpha_upper(job: PipelineJob, cluster: Cluster) -> float:
    """An upper bound on eq. (7) over every placement of ``job``: per stage, compute time plus
    each neighbour byte at the dearer of g/B_inter and 1/B_intra plus the dearest AllReduce
    (x = 1 across servers, or all k inside one server); the largest stage bound.

    A tensor-parallel or MoE stage (gpu-mapping's ``vertex_times``, Sec. VI) adds the slices'
    all-reduce 2(t-1)·tp_bytes/(t·B_intra) (its ``added`` reading, the larger of the two) and a
    group's all-to-all, at most ``expert_bytes`` at the dearer per-byte cost (a group's a2a edges
    sum to expert_bytes·(1 + (e-2)q_i)/e < expert_bytes, ``routing_matrix``); a vertex's pipeline
    bytes 2(d^in + d^out)/u_s and AllReduce data 2(k-1)(h/u_s)/k are at most the replica's, bounded
    above. For the paper's jobs both added terms are 0.0 (the bound unchanged to the bit)."""
    g = float(cluster.gpus_per_server)
    per_byte = max(g / cluster.inter_bandwidth, 1.0 / cluster.intra_bandwidth)
    worst = 0.0
    for st in job.stages:
        k = st.replicas
        data = 2.0 * (k - 1) * st.param_bytes / k
        ar = max(data * g / cluster.inter_bandwidth, data / cluster.intra_bandwidth) if k > 1 else 0.0
        t = st.tensor_parallel
        tp = 2.0 * (t - 1) * st.tp_bytes / (t * cluster.intra_bandwidth) if t > 1 else 0.0
        worst = max(worst, st.fwd_time + st.bwd_time + 2.0 * per_byte * (st.in_bytes + st.out_bytes) + ar
                    + tp + per_byte * st.expert_bytes)
    return worst


def _check_span(cluster: DdlwmpCluster, models: Mapping[str, PipelineJob], jobs: list[Job]) -> None:
    """Reject instances whose times overflow: a job's n_i·alpha_upper, or the span of the serial
    schedule, not finite or beyond :data:`MAX_SPAN_SLOTS` slots."""
    mc = cluster.mapping_cluster
    amax = {name: alpha_upper(models[name], mc) for name in {j.model for j in jobs}}
    span = max(j.release for j in jobs)
    for i, j in enumerate(jobs):
        d = j.iterations * amax[j.model]
        span += d
        if not math.isfinite(d) or not span / cluster.slot_seconds <= MAX_SPAN_SLOTS:
            raise InputError(f"jobs[{i}]", f"job {j.id}: its {j.iterations} iterations at up to "
                             f"{amax[j.model]:.6g} s take the instance beyond {MAX_SPAN_SLOTS:g} slots of "
                             f"{cluster.slot_seconds:g} s: the numbers overflow; scale the units")


# ----------------------------------------------------------------------------- time rule
# slot_ceil (the first slot boundary at or after t, with its tolerance SLOT_TOL) is the online
# protocol's rule 3 (optkit.online.slot_ceil), imported above and kept in this module's names.


def free_time(completion: float, slot: float) -> float:
    """When a job that completes at ``completion`` gives its GPUs back: ceil(C_i) in slots
    (:func:`optkit.online.slot_ceil`, with its tolerance)."""
    return slot_ceil(completion, slot)


def _on_slot(t: float, slot: float) -> bool:
    return on_slot(t, slot)


# ----------------------------------------------------------------------------- evaluate
def _capacity_violation(starts: np.ndarray, frees: np.ndarray, servers: np.ndarray, gpus: np.ndarray,
                        capacity: int) -> str | None:
    """The first moment (by time, frees before starts, server, GPUs) at which a server holds more
    than ``capacity`` GPUs, given per (job, server) pair its start, free time, server and GPUs.

    Vectorised: events (t, order, server, delta) sorted by (server, t, order, delta); each
    server's deltas sum to 0, so one running sum over the sorted events is each server's load."""
    if len(starts) == 0:
        return None
    t = np.concatenate([starts, frees])
    order = np.concatenate([np.ones(len(starts), dtype=np.int64), np.zeros(len(frees), dtype=np.int64)])
    m = np.concatenate([servers, servers])
    delta = np.concatenate([gpus, -gpus])
    idx = np.lexsort((delta, order, t, m))
    load = np.cumsum(delta[idx])
    bad = np.flatnonzero(load > capacity)
    if not len(bad):
        return None
    ev = idx[bad]
    first = np.lexsort((delta[ev], m[ev], order[ev], t[ev]))[0]
    e = ev[first]
    return f"server {int(m[e])} holds {int(load[bad[first]])} GPUs at t={float(t[e])} s (capacity {capacity})"


def evaluate(instance: DdlwmpInstance, solution: Mapping[str, Any]) -> Evaluation:
    """Check a schedule and measure it, from starts and placements alone.

    Checks: every job scheduled exactly once; t_i >= r_i and on a slot boundary; each
    ``assignment`` maps every replica of the job's model to a server 0..M-1, all on one server
    for a ``single_node`` job; alpha_i (eq. 7) and
    C_i = t_i + n_i·alpha_i recomputed (the schedule's own ``alpha_s``/``completion``, when
    given, must agree within 1e-9 relative); at every moment each server holds at most g GPUs,
    a job holding its GPUs over [t_i, ceil(C_i)). Objectives: ``total_completion`` (sum C_i),
    ``total_flow`` (sum C_i - r_i), ``makespan`` (max C_i). Metrics add mean and tail (p50, p95,
    p99, max) job completion time C_i - r_i.

    alpha_i depends only on the per-stage replica counts of each server the job uses (eq. 7 is a
    maximum over servers of a function of that server's counts), so it is computed once per
    (model, multiset of per-server count vectors) and reused; the capacity check is one sort
    of all (start, free) events (:func:`_capacity_violation`).
    """
    if not isinstance(solution, Mapping) or not isinstance(solution.get("jobs"), list):
        return Evaluation(False, violations=["solution must be an object with a 'jobs' list"])
    cl = instance.cluster
    slot = cl.slot_seconds
    mcl = cl.mapping_cluster
    n_servers = cl.servers
    jobs = instance.jobs
    pos = {j.id: i for i, j in enumerate(jobs)}  # a job's row in the arrays below (by id)
    seen = bytearray(len(jobs))                   # scheduled already (by row)
    completions = np.zeros(len(jobs))             # C_i (by row)
    violations: list[str] = []
    alpha_cache: dict[tuple[str, tuple[tuple[int, ...], ...]], float] = {}
    # one event per (job, server) pair: start, free time, server, GPUs (compact arrays, not lists)
    ev_start, ev_free, ev_server, ev_gpus = array("d"), array("d"), array("q"), array("q")
    models = instance.models
    # one server per vertex: per replica (the paper's jobs), per slice / expert group (gpu-mapping's LLM stages)
    replicas_of = {name: tuple(int(v) for v in m.vertices) for name, m in models.items()}
    llm = {name: m for name, m in models.items() if is_llm(m)}
    isclose = math.isclose
    for idx, entry in enumerate(solution["jobs"]):
        if type(entry) is not dict and not isinstance(entry, Mapping) or "id" not in entry:
            violations.append(f"jobs[{idx}] must be an object with an 'id'")
            continue
        jid = entry["id"]
        row_of = pos.get(jid)
        if row_of is None:
            violations.append(f"jobs[{idx}].id {jid!r} is no job of the instance")
            continue
        if seen[row_of]:
            violations.append(f"job {jid} is scheduled twice")
            continue
        seen[row_of] = 1
        job = jobs[row_of]
        start = entry.get("start")
        if not (type(start) is float and start - start == 0.0):  # (a finite float passes at once)
            if isinstance(start, bool) or not isinstance(start, (int, float)) or not math.isfinite(start):
                violations.append(f"job {jid}: start must be a number, got {start!r}")
                continue
        release = job.release
        if start < release - TIME_TOL * max(1.0, release):
            violations.append(f"job {jid} starts at {start} before its release {release}")
        q = start / slot  # _on_slot, inline
        if abs(q - round(q)) > SLOT_TOL * max(1.0, abs(q)):
            violations.append(f"job {jid} starts at {start}, not on a slot boundary (slot {slot} s)")
        reps = replicas_of[job.model]
        a = entry.get("assignment")
        if not isinstance(a, list) or len(a) != len(reps) or any(
                not isinstance(row, list) or len(row) != r for row, r in zip(a, reps)):
            violations.append(f"job {jid}: assignment must list, per stage of {job.model}, one server per replica")
            continue
        row = a[0]
        first = row[0] if len(reps) == 1 and row else None
        if type(first) is int and 0 <= first < n_servers and row.count(first) == len(row):
            per_server = {first: [len(row)]}  # one stage, all on one server: what the loop below gives
        else:
            per_server = {}
            ok = True
            for s, row in enumerate(a):
                for m in row:
                    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 0 <= m < n_servers:
                        ok = False
                        break
                    col = per_server.get(m)
                    if col is None:
                        col = per_server[m] = [0] * len(reps)
                    col[s] += 1
                if not ok:
                    break
            if not ok:
                violations.append(f"job {jid}: assignment holds a server index outside 0..{n_servers - 1}")
                continue
        if job.single_node and len(per_server) > 1:
            violations.append(f"job {jid} must run on one server (single_node), but its assignment uses servers "
                              f"{sorted(int(m) for m in per_server)}")
        if llm and job.model in llm:  # tensor-parallel / MoE: each replica's slices on one server, gpu-mapping's alpha
            bad, alpha = checked_alpha(llm[job.model], mcl, a)
            if bad is not None:
                violations.append(f"job {jid}: {bad}")
                continue
        else:
            key = (job.model, tuple(sorted(tuple(c) for c in per_server.values())))
            alpha = alpha_cache.get(key)
            if alpha is None:
                alpha = alpha_cache[key] = alpha_from_counts(models[job.model], mcl, np.array(key[1], dtype=np.int64).T)
        completion = float(start) + job.iterations * alpha
        for k, value in (("alpha_s", alpha), ("completion", completion)):
            claimed = entry.get(k)
            if claimed is not None and claimed != value and not isclose(claimed, value, rel_tol=TIME_TOL, abs_tol=1e-12):
                violations.append(f"job {jid}: {k} {claimed!r} disagrees with {value!r} recomputed from the assignment")
        completions[row_of] = completion
        release_at = free_time(completion, slot)
        for m, col in per_server.items():
            ev_start.append(float(start))
            ev_free.append(release_at)
            ev_server.append(int(m))
            ev_gpus.append(sum(col))
    rows = None if len(pos) == len(jobs) else np.fromiter((pos[j.id] for j in jobs), dtype=np.int64, count=len(jobs))
    done = np.frombuffer(seen, dtype=np.uint8).astype(bool)
    if rows is not None:  # (ids repeated in the instance: each job reads the row of its id)
        done = done[rows]
    if not done.all():
        missing = [jobs[i].id for i in np.flatnonzero(~done)]
        violations.append(f"{len(missing)} jobs are not scheduled: {', '.join(missing[:5])}")
    over = _capacity_violation(np.frombuffer(ev_start, dtype=float), np.frombuffer(ev_free, dtype=float),
                               np.frombuffer(ev_server, dtype=np.int64), np.frombuffer(ev_gpus, dtype=np.int64),
                               cl.gpus_per_server)
    if over is not None:
        violations.append(over)
    if violations:
        return Evaluation(False, violations=violations)
    c = completions if rows is None else completions[rows]
    r = np.fromiter((j.release for j in jobs), dtype=float, count=len(jobs))
    jct = c - r
    objectives = {"total_completion": float(c.sum()), "total_flow": float(jct.sum()), "makespan": float(c.max())}
    metrics = {
        "jobs": len(jobs),
        "mean_jct_s": float(jct.mean()),
        "p50_jct_s": float(np.percentile(jct, 50)),
        "p95_jct_s": float(np.percentile(jct, 95)),
        "p99_jct_s": float(np.percentile(jct, 99)),
        "max_jct_s": float(jct.max()),
    }
    return Evaluation(True, objectives=objectives, metrics=metrics)
