"""Tensor-parallel and Mixture-of-Experts jobs in ddlwmp (A-SRPT paper, Sec. VI; issue 37 item 3).

Sec. VI ("Discussions") of the A-SRPT paper extends its model to the parallelisms of large models:

* **Tensor parallelism**: "represent tensor slices as vertices and AllReduce operations as weighted
  edges. For communication efficiency, all tensor slices of a layer must reside within a single
  server. To accommodate this, A-SRPT delays the start of tensor parallelism jobs until sufficient
  server capacity is available."
* **Expert parallelism**: "represent expert groups as vertices ... token routing represented as
  weighted edges ... set the edge weights based on the estimated average communication costs."

This module holds ddlwmp's side of both: the model (:class:`LlmJob`, read by
:func:`model_from_dict`), the per-iteration time of a placement (:func:`alpha_of`, eqs. 4-7
extended below), the feasibility rule and per-server packing every policy uses
(:func:`units_free`, :func:`fits`, :class:`LlmPlacer`), the check ``evaluate`` makes
(:func:`checked_alpha`) and the exact solvers' per-option best split (:func:`best_local_assignment`).

The model
---------
A model's stage may carry ``tensor_parallel`` t (default 1): each of its ``replicas`` k (the
data-parallel replicas of the stage) is split into t tensor slices, one GPU each, **all on one
server** (the hard constraint of Sec. VI). The stage's ``fwd_time``/``bwd_time`` are a replica's
(its t slices compute in parallel), ``in_bytes``/``out_bytes``/``param_bytes`` a replica's as for
any stage, and ``tp_bytes`` (default 0) the bytes each slice all-reduces with its replica's other
slices per iteration (Megatron-LM: two all-reduces of the layer's activations in the forward pass
and two in the backward pass, per layer). ddlwmp takes **one t per job** (every stage the same):
Megatron-style 3D parallelism (data x pipeline x tensor) uses one tensor-parallel degree for the
whole model, and one t makes a replica a unit of t GPUs, so that a server with f free GPUs holds
``floor(f / t)`` replicas and feasibility is exact (:func:`fits`); a job mixing degrees is bad
input naming the field. t must divide the servers' ``gpus_per_server`` g (bad input otherwise,
naming ``models.<name>.stages[s].tensor_parallel``): a t larger than g could never start, and one
that does not divide g would strand ``g mod t`` GPUs of every server it uses and give a replica a
fractional share of a NIC in eq. (5).

A stage may instead be an **expert stage**: ``experts`` E (equal to its ``replicas``: each replica is
one expert group on one GPU, t = 1) and ``a2a_bytes``, the bytes one group's tokens move through
the all-to-alls of an iteration (dispatch and combine, forward and backward). The model's
``routing`` gives the expected routing matrix: ``"uniform"`` (default: every group sends 1/E of its
tokens to each expert) or ``"zipf"`` with ``routing_skew`` s >= 0 (every group sends the share
p_j ∝ (j+1)^-s of its tokens to expert j, the same popularity for every sender). ``param_bytes``
of an expert stage is the replicated (non-expert) part its groups all-reduce as usual (eq. 6).

In the instance, the job's GPUs are g_i = Σ_s k_s·t_s, and its ``assignment`` lists per stage one
server per **slice**: replica r of stage s is entries r·t .. r·t+t-1 of row s (slice level, as
Sec. VI makes slices the vertices). An old model (no such field) is read exactly as before
(:func:`model_from_dict` returns the plain :class:`PipelineJob`).

Eqs. (4)-(7) extended (:func:`alpha_of`)
---------------------------------------
With every replica's slices on one server (the constraint), a replica is one unit of t GPUs, and
x_s^m counts the *replicas* of stage s on server m. For a unit on server m:

* eqs. (4)-(6) as for a pipeline job (:func:`optkit.formulations.gpu_mapping.model.stage_times`),
  computed on the replica-level job, except that a replica holds t GPUs and so t/g of its server's
  NIC (eq. 5's per-replica share B_inter/g becomes t·B_inter/g; eq. 6's (x/g)·B_inter becomes
  (x·t/g)·B_inter): the replica-level eqs. on B_inter' = t·B_inter. For t = 1 this is eq. (7)
  itself (tested: the same alpha as the plain model);
* plus the tensor-parallel all-reduce, "AllReduce operations as weighted edges" inside one
  server: a ring over the t slices on B_intra, 2(t-1)·tp_bytes/(t·B_intra) (eq. 6's x = k case);
* plus, for a group of an expert stage, its all-to-all: with w_ij = a2a_bytes·(p_i + p_j) the
  bytes between groups i and j (i's tokens to j and j's to i), g·Σ_{j on another server} w_ij /
  B_inter + Σ_{j on its server, j != i} w_ij / B_intra (eq. 5's shape: its NIC share B_inter/g
  for what crosses servers, B_intra for what stays).

alpha is the largest of these over the units (eq. 7's maximum over stages and servers holding
them; an expert stage's groups differ, so the maximum runs over its groups). ``alpha_max`` puts
every unit on its own server; ``alpha~min`` maps the job by Heavy-Edge on the fewest servers,
in units (:func:`alpha_min_of`).

Placement
---------
Every policy picks servers in units (a server with f free GPUs offers floor(f/t) replicas) by its
own rule (most free or least free, :mod:`.placement`), maps the unit graph (each replica's slices
contracted into one vertex: pipeline, data-parallel and all-to-all edges between replicas) by
Heavy-Edge on those unit counts, and gives each replica's t slices its server. The contraction is
the per-server packing that keeps the slices together; the one place where gpu-mapping's
Heavy-Edge with its ``colocate=`` keyword (issue 37, helper llm-heavy) will map the slice graph
directly is :func:`heavy_edge_units` (marked ``COLOCATE``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from optkit.errors import InputError
from optkit.formulations.gpu_mapping.heavy_edge import fewest_servers, heavy_edge_arrays
from optkit.formulations.gpu_mapping.model import Cluster, PipelineJob, Stage, job_edges, stage_times
from optkit.validation import integer, known_keys, mapping, number, trusted

__all__ = ["LlmJob", "ROUTINGS", "model_from_dict", "check_model", "tensor_parallel_of", "is_llm", "units_free",
           "fits", "routing_shares", "alpha_of", "alpha_max_of", "alpha_min_of", "alpha_upper_llm", "heavy_edge_units",
           "checked_alpha", "best_local_assignment", "LlmPlacer", "BEST_LOCAL_MAX"]

PROBLEM = "ddlwmp"
ROUTINGS = ("uniform", "zipf")
"""The expected routing matrices of an expert stage (module docstring)."""
_STAGE_FIELDS = ("replicas", "fwd_time", "bwd_time", "in_bytes", "out_bytes", "param_bytes")
_LLM_STAGE_FIELDS = ("tensor_parallel", "tp_bytes", "experts", "a2a_bytes")
_LLM_MODEL_FIELDS = ("routing", "routing_skew")
BEST_LOCAL_MAX = 200_000
"""Most unit-to-server maps :func:`best_local_assignment` enumerates for one option."""


@dataclass(frozen=True)
class LlmJob(PipelineJob):
    """A pipeline job with tensor-parallel stages or expert stages (module docstring).

    ``stages`` (the :class:`PipelineJob` fields) are **slice level**: stage s has k_s·t slices,
    one GPU each, each with its replica's times, 1/t of its replica's activation bytes and
    parameter bytes, so ``n_replicas`` is the job's GPUs g_i and an assignment row lists one server
    per slice. ``replica_stages`` are the stages as the file gives them (replica level);
    ``tensor_parallel`` is t; ``tp_bytes``, ``experts`` (True for an expert stage) and
    ``a2a_bytes`` are per stage; ``routing`` and ``routing_skew`` the expected routing matrix."""

    tensor_parallel: int = 1
    replica_stages: tuple[Stage, ...] = ()
    tp_bytes: tuple[float, ...] = ()
    experts: tuple[bool, ...] = ()
    a2a_bytes: tuple[float, ...] = ()
    routing: str = "uniform"
    routing_skew: float = 0.0

    @cached_property
    def replica_job(self) -> PipelineJob:
        """The replica-level pipeline job (each replica one vertex): what eqs. (4)-(6) time."""
        with trusted():
            return PipelineJob(stages=self.replica_stages, allreduce=self.allreduce,
                               two_replica_ring=self.two_replica_ring)

    @property
    def units(self) -> int:
        """K: the replicas (units of t GPUs) of the job."""
        return self.n_replicas // self.tensor_parallel

    @cached_property
    def unit_stage(self) -> np.ndarray:
        """The stage of each unit (replica), units numbered stage by stage."""
        return self.replica_job.vertex_stage

    @cached_property
    def unit_edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The unit graph (each replica's slices contracted): the replica-level job graph of
        Sec. IV-B plus, in each expert stage, the all-to-all edges w_ij = a2a_bytes·(p_i + p_j)."""
        u, v, w = job_edges(self.replica_job)
        acc = {(int(a), int(b)): float(x) for a, b, x in zip(u, v, w)}
        off = self.replica_job.offsets
        for s, is_expert in enumerate(self.experts):
            if not is_expert or self.a2a_bytes[s] == 0.0:
                continue
            p = routing_shares(self, s)
            base = int(off[s])
            for i, j in itertools.combinations(range(len(p)), 2):
                key = (base + i, base + j)
                acc[key] = acc.get(key, 0.0) + self.a2a_bytes[s] * float(p[i] + p[j])
        keys = sorted(acc)
        return (np.array([a for a, _ in keys], dtype=np.int64), np.array([b for _, b in keys], dtype=np.int64),
                np.array([acc[k] for k in keys], dtype=float))

    @cached_property
    def edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # type: ignore[override]
        """The slice graph of Sec. VI ("tensor slices as vertices and AllReduce operations as
        weighted edges"): slice j of a replica is joined to slice j of each replica of the
        neighbouring stages (its share 1/t of the replica-level activation edge) and of the other
        replicas of its stage (the data-parallel ring or tree over slices j, each carrying 1/t of
        the parameters); the t slices of a replica form a ring of weight 2(t-1)·tp_bytes/t per
        edge (the two-replica reading of the job for t = 2); expert stages add their all-to-all
        edges. For t = 1 it is the unit graph."""
        t = self.tensor_parallel
        if t == 1:
            return self.unit_edges
        acc: dict[tuple[int, int], float] = {}

        def add(a: int, b: int, w: float) -> None:
            if w != 0.0 and a != b:
                key = (a, b) if a < b else (b, a)
                acc[key] = acc.get(key, 0.0) + w

        u, v, w = job_edges(self.replica_job)  # replica-level pipeline and data-parallel edges
        for a, b, x in zip(u.tolist(), v.tolist(), w.tolist()):
            for j in range(t):
                add(a * t + j, b * t + j, x / t)
        ring = [(r, (r + 1) % t) for r in range(1 if t == 2 and self.two_replica_ring == "one-edge" else t)]
        for q in range(self.units):
            s = int(self.unit_stage[q])
            wt = 2.0 * (t - 1) * self.tp_bytes[s] / t
            for a, b in ring:
                add(q * t + a, q * t + b, wt)
        keys = sorted(acc)
        return (np.array([a for a, _ in keys], dtype=np.int64), np.array([b for _, b in keys], dtype=np.int64),
                np.array([acc[k] for k in keys], dtype=float))

    def to_dict(self) -> dict[str, Any]:
        """The model as the instance file gives it (replica-level stages with their LLM fields)."""
        d: dict[str, Any] = {"allreduce": self.allreduce}
        if self.two_replica_ring != "two-edges":
            d["two_replica_ring"] = self.two_replica_ring
        if any(self.experts):
            d["routing"] = self.routing
            if self.routing == "zipf":
                d["routing_skew"] = self.routing_skew
        stages = []
        for s, st in enumerate(self.replica_stages):
            sd = st.to_dict()
            if self.tensor_parallel != 1:
                sd["tensor_parallel"] = self.tensor_parallel
                sd["tp_bytes"] = self.tp_bytes[s]
            if self.experts[s]:
                sd["experts"] = st.replicas
                sd["a2a_bytes"] = self.a2a_bytes[s]
            stages.append(sd)
        d["stages"] = stages
        return d


def is_llm(job: Any) -> bool:
    """Whether ``job`` is a tensor-parallel or MoE job (:class:`LlmJob`)."""
    return isinstance(job, LlmJob)


def tensor_parallel_of(job: Any) -> int:
    """t of ``job``: its ``tensor_parallel``, 1 for a plain pipeline job."""
    return job.tensor_parallel if isinstance(job, LlmJob) else 1


def routing_shares(job: LlmJob, s: int) -> np.ndarray:
    """p_j, the expected share of every group's tokens routed to expert j of stage s (module
    docstring): 1/E each (``uniform``) or ∝ (j+1)^-routing_skew (``zipf``)."""
    e = job.replica_stages[s].replicas
    if job.routing == "uniform":
        return np.full(e, 1.0 / e)
    p = np.arange(1, e + 1, dtype=float) ** -job.routing_skew
    return p / p.sum()


# ----------------------------------------------------------------------------- reading
def _llm_keys(d: Mapping[str, Any]) -> bool:
    if any(k in d for k in _LLM_MODEL_FIELDS):
        return True
    stages = d.get("stages")
    return isinstance(stages, list) and any(isinstance(st, Mapping) and any(k in st for k in _LLM_STAGE_FIELDS)
                                            for st in stages)


def model_from_dict(d: Any, path: str) -> PipelineJob:
    """A ddlwmp model: the plain :class:`PipelineJob` (``PipelineJob.from_dict``, unchanged) when
    it has none of the fields of this module, else an :class:`LlmJob`. Bad input names the field
    (``models.gpt.stages[1].tensor_parallel``)."""
    d = mapping(d, path)
    if not _llm_keys(d):
        return PipelineJob.from_dict(d, path)
    known_keys(d, ("allreduce", "stages", "two_replica_ring") + _LLM_MODEL_FIELDS, path)
    raw = d.get("stages")
    if not isinstance(raw, list) or not raw:
        raise InputError(f"{path}.stages", "must be a non-empty list of stages")
    t_of: list[int] = []
    tp: list[float] = []
    experts: list[bool] = []
    a2a: list[float] = []
    plain_stages: list[dict[str, Any]] = []
    for s, st in enumerate(raw):
        p = f"{path}.stages[{s}]"
        st = mapping(st, p)
        known_keys(st, _STAGE_FIELDS + _LLM_STAGE_FIELDS, p)
        t_of.append(integer(st.get("tensor_parallel", 1), f"{p}.tensor_parallel", low=1))
        tp.append(number(st, "tp_bytes", p) if "tp_bytes" in st else 0.0)
        if "tp_bytes" in st and t_of[-1] == 1:
            raise InputError(f"{p}.tp_bytes", "needs tensor_parallel > 1 (the all-reduce of a replica's slices)")
        is_expert = "experts" in st
        if is_expert:
            e = integer(st["experts"], f"{p}.experts", low=1)
            if "replicas" in st and st["replicas"] != e:
                raise InputError(f"{p}.experts", f"must equal the stage's replicas ({st['replicas']!r}): each "
                                                 "replica of an expert stage is one expert group")
            if t_of[-1] != 1:
                raise InputError(f"{p}.tensor_parallel", "must be 1 in an expert stage (one GPU per expert group)")
            st = {**st, "replicas": e}
        elif "a2a_bytes" in st:
            raise InputError(f"{p}.a2a_bytes", "needs experts (the all-to-all of an expert stage)")
        experts.append(is_expert)
        a2a.append(number(st, "a2a_bytes", p) if "a2a_bytes" in st else 0.0)
        plain_stages.append({k: v for k, v in st.items() if k in _STAGE_FIELDS})
    t = t_of[0]
    for s, ts in enumerate(t_of):
        if ts != t:
            raise InputError(f"{path}.stages[{s}].tensor_parallel",
                             f"is {ts} but stage 0's is {t}: ddlwmp takes one tensor-parallel degree per job "
                             "(data x pipeline x tensor parallelism with one t)")
    routing = d.get("routing", "uniform")
    if routing not in ROUTINGS:
        raise InputError(f"{path}.routing", f"must be one of {', '.join(ROUTINGS)}, got {routing!r}")
    if any(k in d for k in _LLM_MODEL_FIELDS) and not any(experts):
        raise InputError(f"{path}.routing", "needs an expert stage (experts)")
    skew = 0.0
    if "routing_skew" in d:
        if routing != "zipf":
            raise InputError(f"{path}.routing_skew", "is the parameter of routing 'zipf' only")
        skew = number(d, "routing_skew", path)
    base = PipelineJob.from_dict({k: v for k, v in d.items() if k not in _LLM_MODEL_FIELDS} | {"stages": plain_stages},
                                 path)
    with trusted():
        slices = tuple(Stage(replicas=st.replicas * t, fwd_time=st.fwd_time, bwd_time=st.bwd_time,
                             in_bytes=st.in_bytes / t, out_bytes=st.out_bytes / t, param_bytes=st.param_bytes / t)
                       for st in base.stages)
        try:
            return LlmJob(stages=slices, allreduce=base.allreduce, two_replica_ring=base.two_replica_ring,
                          tensor_parallel=t, replica_stages=base.stages, tp_bytes=tuple(tp), experts=tuple(experts),
                          a2a_bytes=tuple(a2a), routing=routing, routing_skew=skew)
        except InputError as exc:
            raise InputError(f"{path}.stages", exc.message) from None


def check_model(job: PipelineJob, gpus_per_server: int, path: str) -> None:
    """A tensor-parallel job against the servers: t larger than a server, or t not dividing g,
    is bad input naming ``<path>.stages[0].tensor_parallel`` (module docstring)."""
    t = tensor_parallel_of(job)
    if t == 1:
        return
    field = f"{path}.stages[0].tensor_parallel"
    if t > gpus_per_server:
        raise InputError(field, f"is {t}, larger than any server ({gpus_per_server} GPUs): a replica's {t} slices "
                                "must all sit on one server, so the job could never start")
    if gpus_per_server % t:
        raise InputError(field, f"is {t}, which does not divide the servers' {gpus_per_server} GPUs: a replica of "
                                f"{t} slices must sit on one server, and ddlwmp takes t dividing g (module docstring "
                                "of formulations/ddlwmp/tensor.py)")


# ----------------------------------------------------------------------------- feasibility
def units_free(free: np.ndarray, t: int) -> np.ndarray:
    """floor(free_m / t): the replicas of t slices each server can hold now."""
    return free // t if t > 1 else free


def fits(free: np.ndarray, gpus: int, t: int) -> bool:
    """Whether a job of ``gpus`` GPUs in replicas of ``t`` slices can start on ``free``: the
    servers hold its gpus/t replicas, each on one server (Σ_m floor(free_m/t) >= gpus/t). Exact:
    replicas are interchangeable units of t GPUs."""
    if t == 1:
        return gpus <= int(free.sum())
    return gpus // t <= int((free // t).sum())


# ----------------------------------------------------------------------------- time
def _unit_servers(job: LlmJob, vertex_servers: np.ndarray) -> np.ndarray:
    return np.asarray(vertex_servers, dtype=np.int64)[::job.tensor_parallel]


def alpha_of(job: LlmJob, cluster: Cluster, vertex_servers: Sequence[int] | np.ndarray) -> float:
    """alpha (s/iteration) of ``job`` with slice v on server ``vertex_servers[v]`` (every
    replica's slices on one server; :func:`checked_alpha` checks it): eqs. (4)-(7) extended as the
    module docstring writes them."""
    t = job.tensor_parallel
    unit_srv = _unit_servers(job, np.asarray(vertex_servers))
    servers, local = np.unique(unit_srv, return_inverse=True)
    rep = job.replica_job
    counts = np.zeros((len(rep.stages), len(servers)), dtype=np.int64)
    np.add.at(counts, (job.unit_stage, local), 1)
    with trusted():
        cl = Cluster(cluster.gpus_per_server, cluster.inter_bandwidth * t, cluster.intra_bandwidth)
    beta = stage_times(rep, cl, counts)               # eqs. (4)-(6) per (stage, server), t/g of the NIC
    per_unit = beta[job.unit_stage, local]
    if t > 1:
        tp = np.array([2.0 * (t - 1) * b / (t * cluster.intra_bandwidth) for b in job.tp_bytes])
        per_unit = per_unit + tp[job.unit_stage]
    if any(job.experts):
        g = float(cluster.gpus_per_server)
        off = rep.offsets
        for s, is_expert in enumerate(job.experts):
            if not is_expert:
                continue
            p = routing_shares(job, s)
            a, b = int(off[s]), int(off[s + 1])
            srv = unit_srv[a:b]
            w = job.a2a_bytes[s] * (p[:, None] + p[None, :])
            np.fill_diagonal(w, 0.0)
            same = srv[:, None] == srv[None, :]
            per_unit[a:b] += g * np.where(same, 0.0, w).sum(axis=1) / cluster.inter_bandwidth \
                + np.where(same, w, 0.0).sum(axis=1) / cluster.intra_bandwidth
    return float(per_unit.max())


def alpha_max_of(job: PipelineJob, cluster: Cluster) -> float:
    """alpha_max of an :class:`LlmJob`: every replica (its t slices) alone on its own server."""
    assert isinstance(job, LlmJob)
    return alpha_of(job, cluster, np.repeat(np.arange(job.units), job.tensor_parallel))


def alpha_upper_llm(job: LlmJob, cluster: Cluster, upper: Any) -> float:
    """An upper bound on :func:`alpha_of` over every placement (for the instance's overflow check):
    ``upper`` (:func:`.model.alpha_upper`, eqs. 4-6 at their dearest) of the replica-level job,
    whose NIC share B_inter/g is at most a replica's t·B_inter/g, plus the largest slice all-reduce
    and, per expert stage, a group's all-to-all with every byte at the dearer of g/B_inter and
    1/B_intra (a group exchanges at most a2a_bytes·(E·p_i + 1) <= a2a_bytes·(E + 1))."""
    t = job.tensor_parallel
    per_byte = max(cluster.gpus_per_server / cluster.inter_bandwidth, 1.0 / cluster.intra_bandwidth)
    extra = max(2.0 * (t - 1) * b / (t * cluster.intra_bandwidth) for b in job.tp_bytes)
    a2a = max((per_byte * a * (st.replicas + 1) for a, st, e in zip(job.a2a_bytes, job.replica_stages, job.experts)
               if e), default=0.0)
    return float(upper(job.replica_job, cluster)) + extra + a2a


def heavy_edge_units(job: LlmJob, unit_counts: Sequence[int], *, seed: int | None,
                     heavy_edge: Mapping[str, Any]) -> np.ndarray:
    """The server (local index into ``unit_counts``) of every slice: Heavy-Edge on the unit graph
    with ``unit_counts[m]`` replicas on local server m, each replica's t slices on its server.

    COLOCATE: where gpu-mapping's Heavy-Edge takes ``colocate=`` (issue 37, helper llm-heavy),
    the lead wires it here as ``heavy_edge_job(job, [c * t for c in unit_counts], seed=seed,
    colocate=[range(q * t, q * t + t) for q in range(job.units)], **heavy_edge)`` on the slice
    graph (``job.edges``), flattened; until then the unit graph is mapped and expanded."""
    # COLOCATE: replace the two lines below by gpu-mapping's heavy_edge_job(..., colocate=...) (docstring)
    u, v, w = job.unit_edges
    unit_srv = heavy_edge_arrays(job.units, u, v, w, list(unit_counts), seed=seed, **heavy_edge)
    return np.repeat(np.asarray(unit_srv, dtype=np.int64), job.tensor_parallel)


def alpha_min_of(job: PipelineJob, cluster: Cluster, *, seed: int | None = None, **heavy_edge: Any) -> float:
    """alpha~min of an :class:`LlmJob` (Sec. IV-B's estimate in units): Heavy-Edge on the fewest
    servers that hold its replicas (g/t replicas a server, all full but the last), eq. (7) extended."""
    assert isinstance(job, LlmJob)
    counts = fewest_servers(job.units, cluster.gpus_per_server // job.tensor_parallel)
    return alpha_of(job, cluster, heavy_edge_units(job, counts, seed=seed, heavy_edge=heavy_edge))


def checked_alpha(job: LlmJob, cluster: Cluster, assignment: Sequence[Sequence[int]]) -> tuple[str | None, float]:
    """``evaluate``'s check of a replica's slices on one server, then alpha: ``(violation, nan)``
    naming the first replica whose t slices sit on more than one server, else ``(None, alpha)``.
    ``assignment`` has already been checked for shape and server indices."""
    t = job.tensor_parallel
    if t > 1:
        for s, row in enumerate(assignment):
            for r in range(len(row) // t):
                group = row[r * t:(r + 1) * t]
                if any(m != group[0] for m in group):
                    return (f"replica {r} of stage {s} has its {t} tensor slices on servers "
                            f"{sorted({int(m) for m in group})}: a replica's slices must all be on one server "
                            "(tensor_parallel, A-SRPT paper Sec. VI)"), math.nan
    flat = np.fromiter((m for row in assignment for m in row), dtype=np.int64, count=job.n_replicas)
    return None, alpha_of(job, cluster, flat)


def best_local_assignment(job: LlmJob, cluster: Cluster, caps: Sequence[int]) -> list[list[int]]:
    """A min-alpha assignment (local server indices) of ``job`` on servers holding ``caps[m]``
    GPUs of it (multiples of t), by enumerating every map of its replicas to the servers with
    ``caps[m]/t`` replicas each: the exact solvers' best split of a placement option.
    :class:`InputError` beyond :data:`BEST_LOCAL_MAX` maps."""
    t = job.tensor_parallel
    units = [c // t for c in caps]
    k = job.units
    total = math.factorial(k)
    for c in units:
        total //= math.factorial(c)
    if total > BEST_LOCAL_MAX:
        raise InputError("instance", f"a tensor-parallel or MoE job of {k} replicas has {total} splits over "
                                     f"{len(caps)} servers, more than the exact solvers enumerate ({BEST_LOCAL_MAX})")
    best: tuple[float, tuple[int, ...]] | None = None
    for perm in _maps(units):
        a = alpha_of(job, cluster, np.repeat(np.array(perm, dtype=np.int64), t))
        if best is None or a < best[0] - 1e-15:
            best = (a, perm)
    assert best is not None
    flat = np.repeat(np.array(best[1], dtype=np.int64), t).tolist()
    off = job.offsets
    return [flat[int(off[s]):int(off[s + 1])] for s in range(len(job.stages))]


def _maps(left: list[int]) -> Iterator[tuple[int, ...]]:
    """Every sequence with ``left[m]`` entries m (the distinct maps of units to servers), in
    lexicographic order."""
    if not any(left):
        yield ()
        return
    for m, c in enumerate(left):
        if c:
            left[m] -= 1
            for rest in _maps(left):
                yield (m, *rest)
            left[m] += 1


# ----------------------------------------------------------------------------- the policies' placer
class LlmPlacer:
    """The placements of one instance's LLM jobs, for :class:`.placement.Placer`: servers chosen
    in units (``choose(free // t, K)`` with the policy's rule), Heavy-Edge on the unit graph
    (:func:`heavy_edge_units`), cached per (model, unit counts) as the Placer caches plain jobs."""

    def __init__(self, cluster: Cluster, seed: int | None, heavy_edge: Mapping[str, Any]) -> None:
        self.cluster = cluster
        self.seed = seed
        self.heavy_edge = dict(heavy_edge)
        self._maps: dict[tuple[str, tuple[int, ...]], tuple[np.ndarray, float]] = {}

    def alpha_min(self, job: LlmJob) -> float:
        return alpha_min_of(job, self.cluster, seed=self.seed, **self.heavy_edge)

    def place(self, name: str, job: LlmJob, servers: np.ndarray, unit_counts: np.ndarray
              ) -> tuple[list[list[int]], float, tuple[int, ...], tuple[int, ...]]:
        """(assignment over global servers at slice level, alpha, servers, GPUs taken from each)
        of model ``name`` with ``unit_counts[j]`` replicas on server ``servers[j]`` (the policy
        chose them in units, :func:`units_free`)."""
        t = job.tensor_parallel
        counts = np.asarray(unit_counts, dtype=np.int64)
        servers = np.asarray(servers, dtype=np.int64)
        order = np.lexsort((servers, -counts))
        srv = [int(s) for s in servers[order]]
        cnt = tuple(int(c) for c in counts[order])
        key = (name, cnt)
        hit = self._maps.get(key)
        if hit is None:
            local = heavy_edge_units(job, cnt, seed=self.seed, heavy_edge=self.heavy_edge)
            hit = self._maps[key] = (local, alpha_of(job, self.cluster, local))
        local, alpha = hit
        glob = np.asarray(srv, dtype=np.int64)[local].tolist()
        off = job.offsets
        assignment = [glob[int(off[s]):int(off[s + 1])] for s in range(len(job.stages))]
        return assignment, alpha, tuple(srv), tuple(c * t for c in cnt)
