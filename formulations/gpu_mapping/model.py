"""gpu-mapping: instance, solution, job graph, eqs. (4)-(7) and the independent ``evaluate``.

Source: Luo, Liu, Lee, Shroff, *Prediction-Assisted Online Distributed Deep Learning Workload
Scheduling in GPU Clusters*, Sec. III-B (eqs. 4-7) and Sec. IV-B (the job graph). The readings
of the garbled eqs. (5) and (6), the mathematics and every decision are in this package's
``README.md`` (``formulations/gpu_mapping/README.md``).

Units: seconds, bytes, bytes per second. Vertices (replicas) are numbered stage by stage:
vertex ``offsets[s] + r`` is replica ``r`` of stage ``s`` (both 0-based in code; the paper's
stages are 1-based).

LLM-era jobs (Sec. VI, issue 37): a stage may be tensor-parallel (``tensor_parallel = t > 1``:
each replica is t slices, one GPU each) or a Mixture-of-Experts stage (``experts = e > 1``: each
replica is e expert groups, one GPU each). Its vertices are then the slices / groups, ``u_s = t``
or ``e`` per replica, numbered replica-major: vertex ``offsets[s] + r*u_s + j`` is slice / group
``j`` of replica ``r``, and the solution lists one server per vertex. The extension of eqs.
(4)-(7) and of the job graph is :func:`vertex_times` and :func:`job_edges`; a job without these
fields is the paper's job and takes the paper's code paths unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from optkit.errors import InputError
from optkit.validation import instance_object, integer, known_keys, mapping, number, check_typed, trusted
from optkit.formulation import Evaluation

if TYPE_CHECKING:  # networkx (20 MB, 0.1-0.2 s to import) only where a graph is built: job_graph
    import networkx as nx

__all__ = [
    "PROBLEM", "ALLREDUCE_KINDS", "TWO_REPLICA_RINGS", "MAX_REPLICAS", "ROUTINGS", "TP_ALLREDUCE_TIMES",
    "Stage", "PipelineJob", "Cluster", "GpuMappingInstance",
    "double_binary_tree_edges", "job_edges", "job_edge_kinds", "job_graph", "stage_counts", "stage_times",
    "alpha_from_counts", "alpha_max", "cut_weight", "evaluate", "assignment_from_vertex_servers",
    "routing_matrix", "stage_compute", "vertex_times", "EDGE_LIST_MAX", "pipeline_weights", "stage_edge_parts",
    "stage_edges", "alpha_of_assignment", "colocation_violations", "colocation_groups", "placement_units",
]

PROBLEM = "gpu-mapping"
ALLREDUCE_KINDS = ("ring", "tree")
TWO_REPLICA_RINGS = ("two-edges", "one-edge")
"""Readings of a two-replica ring (reading ``two_replica_ring``, ``readings.py``): the ring
(r, r+1 mod 2) lists the pair twice, so ``two-edges`` charges 2·(2(k-1)h/k) = 2h between the
two replicas, ``one-edge`` charges h once."""
ROUTINGS = ("uniform", "zipf")
"""Expected token-routing matrices of an MoE stage (reading ``moe_routing``, ``readings.py``):
every expert group equally likely, or group j's popularity proportional to ``(j+1)^-a`` with
``a = routing_skew`` (reading ``moe_zipf_exponent``). :func:`routing_matrix`."""
TP_ALLREDUCE_TIMES = ("added", "overlapped")
"""How a tensor-parallel stage's all-reduces enter its time (reading ``tp_allreduce_time``,
``readings.py``): added to the computation (eq. 4 + TP term) or overlapped with it (the larger
of the two)."""
REL_TOL = 1e-9


# ----------------------------------------------------------------------------- instance types
MAX_REPLICAS = 16_384
"""Most vertices (GPUs: replicas, tensor slices, expert groups) of one job: issue 37's largest
cluster, 16,384 GPUs; more is bad input, not a memory error. *Decision* (2026-11-27): raised from
4,096 (:data:`EDGE_LIST_MAX`, the paper's largest clusters having 2,000 GPUs), where the job graph's
dense n x n matrix reaches 128 MiB, because Heavy-Edge no longer lists the job graph's edges (it
works on the stage structure, ``heavy_edge.py`` "Cost"), nor does ``evaluate`` above
:data:`EDGE_LIST_MAX` (:func:`cut_weight`, :func:`vertex_times`). What still builds the dense
matrix or the edge list (heavy-edge-refine, the peers, the exact models' edge sums,
:func:`job_graph`) costs O(n^2) time and memory there: ``benchmarks/growth.py`` measures where
each algorithm's series stops."""
EDGE_LIST_MAX = 4096
"""Up to this many vertices (the jobs that existed before :data:`MAX_REPLICAS` was raised),
:func:`cut_weight` and :func:`vertex_times` go edge by edge over :func:`job_edges`, as every result
so far was computed; above it they count each complete bipartite set of pipeline edges between
consecutive stages per server (:func:`cut_weight`): the same sums in another order (equal to a
relative 1e-12 on seeded jobs, tests/test_gpu_mapping_large_jobs.py), in O(n + S M) instead of
O(n^2)."""
_STAGE_FIELDS = ("replicas", "fwd_time", "bwd_time", "in_bytes", "out_bytes", "param_bytes")
_LLM_FIELDS = ("tensor_parallel", "tp_bytes", "experts", "expert_bytes", "routing", "routing_skew")


@dataclass(frozen=True)
class Stage:
    """One pipeline stage: k_s replicas, p^f, p^b (s), d^in, d^out, h (bytes).

    Optional (Sec. VI; absent fields are the paper's stage and are not written back):

    * ``tensor_parallel`` t (default 1): a replica is t tensor slices, one GPU each, all on one
      server (a hard constraint); ``tp_bytes`` is the data a replica's slices all-reduce among
      themselves per iteration (all its layers, forward and backward: Megatron-LM's two
      all-reduces per transformer layer and pass).
    * ``experts`` e (default 1): a replica is e expert groups, one GPU each (expert parallelism);
      ``expert_bytes`` is the token data a replica's groups route to each other per iteration
      (all its MoE layers: dispatch and combine, forward and backward, every one of a token's
      top-k copies), spread over the group pairs by the expected routing matrix ``routing``
      (``uniform`` or ``zipf`` with exponent ``routing_skew``; :func:`routing_matrix`).

    With t or e > 1, p^f and p^b are the times of one slice / group (one GPU); d^in, d^out and h
    stay a replica's (split evenly over its t or e GPUs). A stage is not both (t > 1 and e > 1 is
    bad input: not modelled).
    """

    replicas: int
    fwd_time: float
    bwd_time: float
    in_bytes: float
    out_bytes: float
    param_bytes: float
    tensor_parallel: int = 1
    tp_bytes: float = 0.0
    experts: int = 1
    expert_bytes: float = 0.0
    routing: str = "uniform"
    routing_skew: float = 1.0

    def __post_init__(self) -> None:
        check_typed(lambda: Stage.from_dict(self.to_dict()), PROBLEM)

    @property
    def units(self) -> int:
        """Vertices (GPUs) of one replica: t, e or 1."""
        return self.tensor_parallel * self.experts

    @classmethod
    def from_dict(cls, st: Any, path: str = "stage") -> "Stage":
        st = mapping(st, path)
        known_keys(st, _STAGE_FIELDS + _LLM_FIELDS, path)
        if "replicas" not in st:
            raise InputError(f"{path}.replicas", "is required")
        extra: dict[str, Any] = {}
        t = integer(st["tensor_parallel"], f"{path}.tensor_parallel", low=1, high=MAX_REPLICAS) \
            if "tensor_parallel" in st else 1
        e = integer(st["experts"], f"{path}.experts", low=1, high=MAX_REPLICAS) if "experts" in st else 1
        if t > 1 and e > 1:
            raise InputError(f"{path}.experts", f"must be 1 when tensor_parallel > 1 (a stage is tensor-parallel "
                             f"or expert-parallel, not both), got tensor_parallel={t}, experts={e}")
        if t > 1:
            extra["tensor_parallel"] = t
        if e > 1:
            extra["experts"] = e
        if "tp_bytes" in st:
            if t == 1:
                raise InputError(f"{path}.tp_bytes", "needs tensor_parallel >= 2 (the all-reduce among a replica's slices)")
            extra["tp_bytes"] = number(st, "tp_bytes", path)
        for key in ("expert_bytes", "routing", "routing_skew"):
            if key in st and e == 1:
                raise InputError(f"{path}.{key}", "needs experts >= 2 (token routing among a replica's expert groups)")
        if "expert_bytes" in st:
            extra["expert_bytes"] = number(st, "expert_bytes", path)
        if "routing" in st:
            if st["routing"] not in ROUTINGS:
                raise InputError(f"{path}.routing", f"must be one of {', '.join(ROUTINGS)}, got {st['routing']!r}")
            extra["routing"] = st["routing"]
        if "routing_skew" in st:
            if extra.get("routing") != "zipf":
                raise InputError(f"{path}.routing_skew", "is the zipf exponent: it needs routing = 'zipf'")
            extra["routing_skew"] = number(st, "routing_skew", path)
        with trusted():
            return cls(replicas=integer(st["replicas"], f"{path}.replicas", low=1, high=MAX_REPLICAS),
                       fwd_time=number(st, "fwd_time", path), bwd_time=number(st, "bwd_time", path),
                       in_bytes=number(st, "in_bytes", path), out_bytes=number(st, "out_bytes", path),
                       param_bytes=number(st, "param_bytes", path), **extra)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"replicas": self.replicas, "fwd_time": self.fwd_time, "bwd_time": self.bwd_time,
                             "in_bytes": self.in_bytes, "out_bytes": self.out_bytes, "param_bytes": self.param_bytes}
        # the optional fields only where they differ from the paper's stage: old instances round-trip
        # unchanged; a typed Stage with an inconsistent field is rejected by the round trip (from_dict)
        if self.tensor_parallel != 1 or self.tp_bytes != 0.0:
            d["tensor_parallel"] = self.tensor_parallel
            d["tp_bytes"] = self.tp_bytes
        if self.experts != 1 or self.expert_bytes != 0.0 or self.routing != "uniform" or self.routing_skew != 1.0:
            d["experts"] = self.experts
            d["expert_bytes"] = self.expert_bytes
            if self.routing != "uniform" or self.routing_skew != 1.0:
                d["routing"] = self.routing
                d["routing_skew"] = self.routing_skew
        return d


@dataclass(frozen=True)
class PipelineJob:
    """A training job with (possibly replicated) pipeline stages; ``allreduce`` is ring or tree.

    ``two_replica_ring`` is the reading of a ring over k = 2 replicas (:data:`TWO_REPLICA_RINGS`):
    a field of the job, so the job graph, ``evaluate``'s ``cut`` and every solver read the same
    one. It is written to the job's dict only when it is not the default ``two-edges``.

    ``tp_allreduce_time`` is the reading of how a tensor-parallel stage's all-reduces enter its
    time (:data:`TP_ALLREDUCE_TIMES`, reading ``tp_allreduce_time``): a field of the job for the
    same reason, written only when it is not the default ``added``.
    """

    stages: tuple[Stage, ...]
    allreduce: str = "ring"
    two_replica_ring: str = "two-edges"
    tp_allreduce_time: str = "added"

    def __post_init__(self) -> None:
        try:
            validate_job(self)
        except InputError as err:
            raise err.with_problem(PROBLEM) from None

    @classmethod
    def from_dict(cls, d: Any, path: str = "job") -> "PipelineJob":
        d = mapping(d, path)
        known_keys(d, ("allreduce", "stages", "two_replica_ring", "tp_allreduce_time"), path)
        allreduce = d.get("allreduce", None)
        if allreduce is None:
            raise InputError(f"{path}.allreduce", "is required (ring or tree)")
        if allreduce not in ALLREDUCE_KINDS:
            raise InputError(f"{path}.allreduce", f"must be 'ring' or 'tree', got {allreduce!r}")
        raw = d.get("stages")
        if not isinstance(raw, list) or not raw:
            raise InputError(f"{path}.stages", "must be a non-empty list of stages")
        stages = [Stage.from_dict(st, f"{path}.stages[{i}]") for i, st in enumerate(raw)]
        ring2 = d.get("two_replica_ring", "two-edges")
        if ring2 not in TWO_REPLICA_RINGS:
            raise InputError(f"{path}.two_replica_ring", f"must be one of {', '.join(TWO_REPLICA_RINGS)}, got {ring2!r}")
        tp_time = d.get("tp_allreduce_time", "added")
        if tp_time not in TP_ALLREDUCE_TIMES:
            raise InputError(f"{path}.tp_allreduce_time",
                             f"must be one of {', '.join(TP_ALLREDUCE_TIMES)}, got {tp_time!r}")
        try:
            return cls(stages=tuple(stages), allreduce=allreduce, two_replica_ring=ring2, tp_allreduce_time=tp_time)
        except InputError as exc:  # validate_job names fields under "job"; use this job's path
            field_ = exc.field.replace("job", path, 1) if exc.field.startswith("job") else exc.field
            raise InputError(field_, exc.message) from None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"allreduce": self.allreduce}
        if self.two_replica_ring != "two-edges":
            d["two_replica_ring"] = self.two_replica_ring
        if self.tp_allreduce_time != "added":
            d["tp_allreduce_time"] = self.tp_allreduce_time
        d["stages"] = [s.to_dict() for s in self.stages]
        return d

    # Derived arrays, computed once (the dataclass is frozen, so caching is safe).
    @cached_property
    def replicas(self) -> np.ndarray:
        return np.array([s.replicas for s in self.stages], dtype=np.int64)

    @cached_property
    def units(self) -> np.ndarray:
        """u_s: vertices (GPUs) of one replica of stage s (``tensor_parallel`` or ``experts``, else 1)."""
        return np.array([s.units for s in self.stages], dtype=np.int64)

    @cached_property
    def vertices(self) -> np.ndarray:
        """Vertices (GPUs) of stage s: ``k_s * u_s`` (= ``replicas`` for the paper's jobs)."""
        return self.replicas * self.units

    @cached_property
    def stage_columns(self) -> tuple[np.ndarray, ...]:
        """Per stage, as (S, 1) columns for eqs. (4)-(6) (:func:`stage_times`, a hot path): k_s
        (float), p^f + p^b, h, d^in and d^out; read-only (shared by every call)."""
        cols = (self.replicas.astype(float), np.array([s.fwd_time + s.bwd_time for s in self.stages]),
                np.array([s.param_bytes for s in self.stages]), np.array([s.in_bytes for s in self.stages]),
                np.array([s.out_bytes for s in self.stages]))
        for c in cols:
            c.setflags(write=False)
        return tuple(c[:, None] for c in cols)

    @property
    def is_plain(self) -> bool:
        """The paper's job: no tensor-parallel and no MoE stage (every ``u_s = 1``)."""
        return bool((self.units == 1).all())

    @property
    def has_experts(self) -> bool:
        """Some stage is an MoE stage (``experts > 1``): alpha then depends on which groups share a server."""
        return any(s.experts > 1 for s in self.stages)

    @cached_property
    def offsets(self) -> np.ndarray:
        """``offsets[s]`` is the first vertex of stage s; ``offsets[-1]`` the vertex count."""
        return np.concatenate(([0], np.cumsum(self.vertices))).astype(np.int64)

    @property
    def n_replicas(self) -> int:
        """The job's vertices, i.e. GPUs (replicas for the paper's jobs; slices / expert groups
        for tensor-parallel / MoE stages): the name is the paper's."""
        return int(self.offsets[-1])

    @cached_property
    def vertex_stage(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.stages)), self.vertices)

    @cached_property
    def edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return job_edges(self)

    @cached_property
    def edge_kinds(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """:func:`job_edge_kinds`, computed once (jobs with tensor-parallel / MoE stages)."""
        return job_edge_kinds(self)

    @cached_property
    def adjacency(self) -> np.ndarray:
        """Dense symmetric weight matrix of the job graph (parallel edges summed)."""
        n = self.n_replicas
        a = np.zeros((n, n))
        u, v, w = self.edges
        np.add.at(a, (u, v), w)
        np.add.at(a, (v, u), w)
        return a


def validate_job(job: PipelineJob, path: str = "job") -> None:
    """The issue's validation rules for a job: d^in of the first stage and d^out of the last
    are 0, and ``k_{s-1}·d^out_{s-1} = k_s·d^in_s`` (relative tolerance 1e-9): the data a stage
    sends forward is what the next stage receives (Sec. III-B, per-pair data
    ``2d^out_{s-1}/k_s = 2d^in_s/k_{s-1}``)."""
    st = job.stages
    if not st:
        raise InputError(f"{path}.stages", "must be a non-empty list of stages")
    if job.allreduce not in ALLREDUCE_KINDS:
        raise InputError(f"{path}.allreduce", f"must be 'ring' or 'tree', got {job.allreduce!r}")
    if job.two_replica_ring not in TWO_REPLICA_RINGS:
        raise InputError(f"{path}.two_replica_ring",
                         f"must be one of {', '.join(TWO_REPLICA_RINGS)}, got {job.two_replica_ring!r}")
    if job.tp_allreduce_time not in TP_ALLREDUCE_TIMES:
        raise InputError(f"{path}.tp_allreduce_time",
                         f"must be one of {', '.join(TP_ALLREDUCE_TIMES)}, got {job.tp_allreduce_time!r}")
    total = sum(s.replicas * s.units for s in st)
    if total > MAX_REPLICAS:
        what = "replicas" if all(s.units == 1 for s in st) else "GPUs (tensor slices and expert groups one each)"
        raise InputError(f"{path}.stages", f"hold {total} {what} in all; at most {MAX_REPLICAS} are supported "
                                           "(the largest cluster optkit's mapping algorithms are measured on: "
                                           "model.MAX_REPLICAS)")
    if st[0].in_bytes != 0:
        raise InputError(f"{path}.stages[0].in_bytes", f"must be 0 for the first stage, got {st[0].in_bytes!r}")
    if st[-1].out_bytes != 0:
        raise InputError(f"{path}.stages[{len(st) - 1}].out_bytes", f"must be 0 for the last stage, got {st[-1].out_bytes!r}")
    for s in range(1, len(st)):
        sent = st[s - 1].replicas * st[s - 1].out_bytes
        received = st[s].replicas * st[s].in_bytes
        if not math.isclose(sent, received, rel_tol=REL_TOL, abs_tol=0.0):
            raise InputError(
                f"{path}.stages[{s}].in_bytes",
                f"must satisfy replicas[{s - 1}]*out_bytes[{s - 1}] = replicas[{s}]*in_bytes[{s}] "
                f"(relative tolerance 1e-9), got {sent!r} != {received!r}",
            )


@dataclass(frozen=True)
class Cluster:
    """g GPUs per server; B_inter (per-server NIC) and B_intra in bytes/s."""

    gpus_per_server: int
    inter_bandwidth: float
    intra_bandwidth: float

    def __post_init__(self) -> None:
        check_typed(lambda: Cluster.from_dict(self.to_dict()), PROBLEM)

    @classmethod
    def from_dict(cls, d: Any, path: str = "cluster") -> "Cluster":
        d = mapping(d, path)
        known_keys(d, ("gpus_per_server", "inter_bandwidth", "intra_bandwidth"), path)
        if "gpus_per_server" not in d:
            raise InputError(f"{path}.gpus_per_server", "is required")
        with trusted():
            return cls(
                gpus_per_server=integer(d["gpus_per_server"], f"{path}.gpus_per_server", low=1),
                inter_bandwidth=number(d, "inter_bandwidth", path, positive=True),
                intra_bandwidth=number(d, "intra_bandwidth", path, positive=True),
            )

    def to_dict(self) -> dict[str, Any]:
        return {"gpus_per_server": self.gpus_per_server, "inter_bandwidth": self.inter_bandwidth,
                "intra_bandwidth": self.intra_bandwidth}


@dataclass(frozen=True)
class GpuMappingInstance:
    """Map ``job``'s replicas onto servers with ``servers[m]`` free GPUs each.

    The free-form fields of the JSON (``name``, ``meta``, ``comment``) are kept in ``extras`` and
    written back; any other unknown key is an error (:func:`optkit.validation.known_keys`).
    """

    cluster: Cluster
    job: PipelineJob
    servers: tuple[int, ...]
    extras: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        g = self.cluster.gpus_per_server
        if not self.servers:
            raise InputError("servers", "must list at least one server")
        for m, c in enumerate(self.servers):
            if isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= g:
                raise InputError(f"servers[{m}]", f"must be an integer in 1..{g} (gpus_per_server), got {c!r}")
        for s, stage in enumerate(self.job.stages):
            if stage.tensor_parallel > g:
                raise InputError(f"job.stages[{s}].tensor_parallel",
                                 f"must be at most gpus_per_server = {g}: a replica's {stage.tensor_parallel} tensor "
                                 "slices must share one server (Sec. VI)")
        if sum(self.servers) != self.job.n_replicas:
            raise InputError("servers", f"must offer exactly the job's {self.job.n_replicas} replicas, "
                             f"but its free GPUs add up to {sum(self.servers)}")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "GpuMappingInstance":
        d = instance_object(d, PROBLEM, ("cluster", "job", "servers"))
        known_keys(d, ("problem", "cluster", "job", "servers"))
        cluster = Cluster.from_dict(d["cluster"])
        job = PipelineJob.from_dict(d["job"])
        if not isinstance(d["servers"], list):
            raise InputError("servers", f"must be a list of free-GPU counts, got {type(d['servers']).__name__}")
        servers = tuple(integer(c, f"servers[{m}]", low=1, high=cluster.gpus_per_server)
                        for m, c in enumerate(d["servers"]))
        extras = {k: v for k, v in d.items() if k not in ("problem", "cluster", "job", "servers")}
        return cls(cluster=cluster, job=job, servers=servers, extras=extras)

    def to_dict(self) -> dict[str, Any]:
        d = {"problem": PROBLEM, "cluster": self.cluster.to_dict(), "job": self.job.to_dict(),
             "servers": list(self.servers)}
        d.update(self.extras)
        return d


# ----------------------------------------------------------------------------- the job graph
def double_binary_tree_edges(k: int) -> list[tuple[int, int]]:
    """Edges (child, parent) of NCCL's double binary tree over ranks 0..k-1, both trees.

    Tree 1 is NCCL's ``ncclGetBtree``: rank 0 is the root; any other rank r with lowest set bit
    b has parent ``(r ^ b) | (b << 1)``, or ``r ^ b`` when that is ``>= k``. Tree 2 is tree 1
    shifted by one rank when k is odd (rank r plays rank ``(r-1) mod k``) and mirrored when k is
    even (rank r plays rank ``k-1-r``), as in NCCL 2.19+ ``ncclGetDtree`` (older NCCL releases had
    the two cases the other way round). Edges appearing in both trees are listed twice; the
    job graph sums them. Each tree has k-1 edges, so 2(k-1) in all.
    """
    def parent(r: int) -> int:
        if r == 0:
            return -1
        b = r & -r
        up = (r ^ b) | (b << 1)
        return up if up < k else r ^ b

    out: list[tuple[int, int]] = []
    for r in range(1, k):
        out.append((r, parent(r)))
    for r in range(k):
        if k % 2 == 1:
            u = parent((r - 1) % k)
            if u != -1:
                out.append((r, (u + 1) % k))
        else:
            u = parent(k - 1 - r)
            if u != -1:
                out.append((r, k - 1 - u))
    return out


def job_edges(job: PipelineJob) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The job graph Ω of Sec. IV-B as arrays ``(u, v, weight)`` with ``u < v``, parallel edges summed.

    * Between every replica of stage s-1 and every replica of stage s: ``2·d^out_{s-1}/k_s``.
    * ``ring``: for k_s >= 2 the ring edges (r, r+1 mod k_s), each ``2(k_s-1)h_s/k_s``. For
      k_s = 2 the ring lists the pair twice: summed to ``2h_s`` under ``two_replica_ring =
      two-edges``, charged once (``h_s``) under ``one-edge``.
    * ``tree``: the edges of :func:`double_binary_tree_edges`, each ``(k_s-1)h_s/k_s``.

    A job with tensor-parallel or MoE stages: the edges of :func:`job_edge_kinds`, all kinds
    summed.
    """
    if not job.is_plain:
        kinds = job.edge_kinds
        acc_all: dict[tuple[int, int], float] = {}
        for ku, kv, kw in kinds.values():
            for a_, b_, w_ in zip(ku.tolist(), kv.tolist(), kw.tolist()):
                acc_all[(a_, b_)] = acc_all.get((a_, b_), 0.0) + w_
        return _edge_arrays(acc_all)
    acc: dict[tuple[int, int], float] = {}

    def add(a: int, b: int, w: float) -> None:
        if w == 0.0:
            return
        key = (a, b) if a < b else (b, a)
        acc[key] = acc.get(key, 0.0) + w

    off = job.offsets
    st = job.stages
    for s in range(1, len(st)):
        w = 2.0 * st[s - 1].out_bytes / st[s].replicas
        for a in range(off[s - 1], off[s]):
            for b in range(off[s], off[s + 1]):
                add(int(a), int(b), w)
    for s, stage in enumerate(st):
        k, h, base = stage.replicas, stage.param_bytes, int(off[s])
        if k < 2:
            continue
        if job.allreduce == "ring":
            w = 2.0 * (k - 1) * h / k
            for r in range(1 if k == 2 and job.two_replica_ring == "one-edge" else k):
                add(base + r, base + (r + 1) % k, w)
        else:
            w = (k - 1) * h / k
            for a, b in double_binary_tree_edges(k):
                add(base + a, base + b, w)
    keys = sorted(acc)
    u = np.array([a for a, _ in keys], dtype=np.int64)
    v = np.array([b for _, b in keys], dtype=np.int64)
    w = np.array([acc[key] for key in keys], dtype=float)
    return u, v, w


def _edge_arrays(acc: dict[tuple[int, int], float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keys = sorted(acc)
    return (np.array([a for a, _ in keys], dtype=np.int64), np.array([b for _, b in keys], dtype=np.int64),
            np.array([acc[key] for key in keys], dtype=float))


def routing_matrix(stage: Stage) -> np.ndarray:
    """P[i, j]: the share of an MoE replica's routed token data that expert group i sends to
    group j (sums to 1 over i and j; the diagonal stays on the group's own GPU).

    Sec. VI: "we can set the edge weights based on the estimated average communication costs".
    Every group holds 1/e of the replica's tokens (the batch is split evenly over the e GPUs of
    expert parallelism) and routes each to group j with probability q_j, so ``P[i, j] = q_j / e``.
    Reading ``moe_routing``: ``uniform`` (``q_j = 1/e``, what a load-balancing loss aims at) or
    ``zipf`` (``q_j`` proportional to ``(j+1)^-a``, ``a = routing_skew``, reading
    ``moe_zipf_exponent``: popular experts in the first groups).
    """
    e = stage.experts
    if stage.routing == "zipf":
        q = np.arange(1, e + 1, dtype=float) ** -float(stage.routing_skew)
        q = q / q.sum()
    else:
        q = np.full(e, 1.0 / e)
    return np.tile(q / e, (e, 1))


def colocation_groups(job: PipelineJob) -> list[list[int]]:
    """Groups of vertex indices that must land on one server: the t slices of every replica of a
    tensor-parallel stage, stage by stage, replica by replica; empty for the paper's jobs and MoE
    stages (expert groups may be apart: their token routing is a weighted edge, not a rule).

    References
    ----------
    Luo et al., A-SRPT paper, Sec. VI: "all tensor slices of a layer must reside within a single
    server".

    Notes
    -----
    Guarantee: exact (the groups ``evaluate``'s one-server rule checks).

    Units: vertex indices (replica-major: vertex ``offsets[s] + r*t + j`` is slice j of replica r).

    Examples
    --------
    >>> job = PipelineJob.from_dict({"allreduce": "ring", "stages": [{"replicas": 2, "fwd_time": 0.01,
    ...     "bwd_time": 0.02, "in_bytes": 0, "out_bytes": 0, "param_bytes": 1e8, "tensor_parallel": 3}]})
    >>> colocation_groups(job)
    [[0, 1, 2], [3, 4, 5]]
    """
    out: list[list[int]] = []
    for s, stage in enumerate(job.stages):
        t = stage.tensor_parallel
        if t < 2:
            continue
        base = int(job.offsets[s])
        out.extend([list(range(base + r * t, base + (r + 1) * t)) for r in range(stage.replicas)])
    return out


def placement_units(job: PipelineJob) -> list[list[int]]:
    """The job's vertices grouped into what is placed whole: a tensor-parallel replica (its t
    slices, Sec. VI's one-server rule) or a single vertex (a replica, an expert group)."""
    out: list[list[int]] = []
    for s, stage in enumerate(job.stages):
        base, t = int(job.offsets[s]), stage.tensor_parallel
        for r in range(stage.replicas):
            if t > 1:
                out.append(list(range(base + r * t, base + (r + 1) * t)))
            else:
                out.extend([[base + r * stage.units + j] for j in range(stage.units)])
    return out


def job_edge_kinds(job: PipelineJob) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The job graph Ω of a job with tensor-parallel / MoE stages (Sec. VI), by kind of edge, each
    as arrays ``(u, v, weight)`` with ``u < v`` (parallel edges of one kind summed). Vertex
    ``offsets[s] + r*u_s + j`` is slice / group j of replica r (:class:`Stage`).

    * ``pipeline``: between every vertex of stage s-1 and every vertex of stage s,
      ``2 d^out_{s-1} / (u_{s-1} k_s u_s)``: Sec. III-B's per-pair data ``2d^out_{s-1}/k_s`` with
      each replica's activations split evenly over its u GPUs (Megatron-LM's scatter/gather of the
      activations between pipeline stages, Narayanan et al. 2021, Sec. 4.1). A vertex's pipeline
      edges sum to ``2 d^in_s / u_s`` from the previous stage and ``2 d^out_s / u_s`` to the next.
    * ``dp``: the data-parallel AllReduce of Sec. IV-B per position j: the j-th slices / groups of
      the k_s replicas form the ring (or double binary tree) of the paper over ``h_s / u_s``
      parameters each (``2(k-1)(h/u)/k`` per ring edge, ``(k-1)(h/u)/k`` per tree edge; the
      two-replica ring by the job's ``two_replica_ring``).
    * ``tp``: Sec. VI, "represent tensor slices as vertices and AllReduce operations as weighted
      edges": the t slices of each replica form the job's AllReduce (ring or tree) over
      ``tp_bytes`` (``2(t-1)·tp_bytes/t`` per ring edge, ``(t-1)·tp_bytes/t`` per tree edge).
    * ``a2a``: Sec. VI, "represent expert groups as vertices ... token routing represented as
      weighted edges ... set the edge weights based on the estimated average communication
      costs": between groups i < j of one replica, ``expert_bytes · (P[i,j] + P[j,i])``
      (:func:`routing_matrix`).
    """
    kinds: dict[str, dict[tuple[int, int], float]] = {"pipeline": {}, "dp": {}, "tp": {}, "a2a": {}}

    def add(kind: str, a: int, b: int, w: float) -> None:
        if w == 0.0:
            return
        key = (a, b) if a < b else (b, a)
        acc = kinds[kind]
        acc[key] = acc.get(key, 0.0) + w

    def allreduce(kind: str, members: list[int], data: float) -> None:
        n = len(members)
        if n < 2:
            return
        if job.allreduce == "ring":
            w = 2.0 * (n - 1) * data / n
            for r in range(1 if n == 2 and job.two_replica_ring == "one-edge" else n):
                add(kind, members[r], members[(r + 1) % n], w)
        else:
            w = (n - 1) * data / n
            for a, b in double_binary_tree_edges(n):
                add(kind, members[a], members[b], w)

    off, st, u = job.offsets, job.stages, job.units
    for s in range(1, len(st)):
        w = 2.0 * st[s - 1].out_bytes / (int(u[s - 1]) * st[s].replicas * int(u[s]))
        for a in range(off[s - 1], off[s]):
            for b in range(off[s], off[s + 1]):
                add("pipeline", int(a), int(b), w)
    for s, stage in enumerate(st):
        k, us, base = stage.replicas, int(u[s]), int(off[s])
        for j in range(us):
            allreduce("dp", [base + r * us + j for r in range(k)], stage.param_bytes / us)
        for r in range(k):
            members = list(range(base + r * us, base + (r + 1) * us))
            if stage.tensor_parallel > 1:
                allreduce("tp", members, stage.tp_bytes)
            if stage.experts > 1:
                p = routing_matrix(stage)
                for i in range(us):
                    for j in range(i + 1, us):
                        add("a2a", members[i], members[j], stage.expert_bytes * float(p[i, j] + p[j, i]))
    return {kind: _edge_arrays(acc) for kind, acc in kinds.items()}


def job_graph(job: PipelineJob) -> nx.Graph:
    """The job graph as a networkx graph: node ``i`` has attributes ``stage`` and ``replica``;
    edge attribute ``weight`` in bytes per iteration (parallel edges summed)."""
    import networkx as nx

    g = nx.Graph()
    for s, stage in enumerate(job.stages):
        u = stage.units
        for i in range(stage.replicas * u):
            if u == 1:
                g.add_node(int(job.offsets[s]) + i, stage=s, replica=i)
            else:  # a slice / expert group: attribute unit = j of "slice / group j of replica r"
                g.add_node(int(job.offsets[s]) + i, stage=s, replica=i // u, unit=i % u)
    u, v, w = job.edges
    g.add_weighted_edges_from(zip(u.tolist(), v.tolist(), w.tolist()))
    return g


# ----------------------------------------------------------------------------- eqs. (4)-(7)
def stage_times(job: PipelineJob, cluster: Cluster, counts: np.ndarray) -> np.ndarray:
    """beta[s, m] of eq. (7): comp (eq. 4) + comm (eq. 5) + AllReduce (eq. 6) of stage s's
    replicas on server m, given ``counts[s, m]`` = x_s^m; ``nan`` where x_s^m = 0.

    Eq. (5), as the package README reads it, for one replica of stage s on server m (x_s^m cancels):
    ``g·(2d^in(k_{s-1}-x_{s-1}^m)/k_{s-1} + 2d^out(k_{s+1}-x_{s+1}^m)/k_{s+1})/B_inter
    + (2d^in·x_{s-1}^m/k_{s-1} + 2d^out·x_{s+1}^m/k_{s+1})/B_intra``, without the missing
    neighbour's term for the first and last stage.
    Eq. (6), PDF reading: ``(2(k-1)h/k)/((x/g)·B_inter)`` if 0 < x < k, ``2(k-1)h/(k·B_intra)`` if
    x = k, 0 if k = 1.
    """
    if not job.is_plain:
        return _tp_stage_times(job, cluster, counts)
    x = np.asarray(counts, dtype=float)
    n_st = len(job.stages)
    if x.ndim != 2 or x.shape[0] != n_st or not (x.size == 0 or x.min() >= 0):  # one cheap pass: a hot path
        raise InputError("counts", f"must be a {n_st} x M array of replica counts >= 0 (one row per stage), got "
                                   f"shape {x.shape}" + ("" if x.ndim != 2 or x.shape[0] != n_st else
                                                         f" with the entry {x.min():g}"), problem=PROBLEM)
    g = float(cluster.gpus_per_server)
    b_inter, b_intra = cluster.inter_bandwidth, cluster.intra_bandwidth
    k, comp, h, _, _ = job.stage_columns
    inter, intra = _pipeline_bytes(job, x, k)
    comm = g * inter / b_inter + intra / b_intra
    ar_data = 2.0 * (k - 1.0) * h / k
    with np.errstate(divide="ignore", invalid="ignore"):
        allreduce = np.where(x >= k, ar_data / b_intra, ar_data / ((x / g) * b_inter))
    allreduce = np.where(k == 1.0, 0.0, allreduce)
    beta = comp + comm + allreduce
    return np.where(x > 0, beta, np.nan)


def _pipeline_bytes(job: PipelineJob, x: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eq. (5)'s data of one replica of stage s on server m (replica counts x, k as columns): to
    and from the neighbouring stages' replicas on other servers (``inter``) and on m (``intra``)."""
    d_in, d_out = job.stage_columns[3:]
    inter = np.zeros_like(x)
    intra = np.zeros_like(x)
    if len(job.stages) > 1:
        prev_x, prev_k = x[:-1], k[:-1]
        inter[1:] += 2.0 * d_in[1:] * (prev_k - prev_x) / prev_k
        intra[1:] += 2.0 * d_in[1:] * prev_x / prev_k
        next_x, next_k = x[1:], k[1:]
        inter[:-1] += 2.0 * d_out[:-1] * (next_k - next_x) / next_k
        intra[:-1] += 2.0 * d_out[:-1] * next_x / next_k
    return inter, intra


def stage_compute(job: PipelineJob, cluster: Cluster) -> np.ndarray:
    """Per stage, eq. (4)'s computation with the tensor-parallel all-reduce (Sec. VI) folded in.

    Sec. VI: "Tensor parallelism splits layers across multiple GPUs, necessitating extensive
    inter-GPU communication through AllReduce operations ... all tensor slices of a layer must
    reside within a single server". The slices of a replica all-reduce ``tp_bytes`` per iteration
    on one server, so by eq. (6)'s second case ("all data communication is conducted via the
    intra-server connection") with the t slices as the group: ``TP_s = 2(t-1)·tp_bytes/(t·B_intra)``
    (0 when t = 1). Reading ``tp_allreduce_time`` (the job's field): ``added`` gives
    ``p^f + p^b + TP_s`` (Megatron-LM's all-reduces sit inside every layer's forward and backward
    pass, on the critical path), ``overlapped`` gives ``max(p^f + p^b, TP_s)`` (hidden behind
    computation, as Sec. III-B allows for AllReduce: "one can apply model-dependent coefficients").
    """
    b_intra = cluster.intra_bandwidth
    out = []
    for st in job.stages:
        comp = st.fwd_time + st.bwd_time
        t = st.tensor_parallel
        tp = 2.0 * (t - 1) * st.tp_bytes / (t * b_intra) if t > 1 else 0.0
        out.append(max(comp, tp) if job.tp_allreduce_time == "overlapped" else comp + tp)
    return np.array(out)


def _tp_stage_times(job: PipelineJob, cluster: Cluster, counts: np.ndarray) -> np.ndarray:
    """beta[s, m] of a job with tensor-parallel stages, from ``counts[s, m]`` = GPUs (slices) of
    stage s on server m; a replica's slices share a server, so ``x = counts / t`` replicas.

    The paper's eqs. (5)-(6) with a slice as the paper's replica (:func:`vertex_times`, to which
    this is equal on every feasible mapping): comm = eq. (5) in replica counts divided by t_s (a
    replica's activations are split over its t slices, each with its own NIC share B_inter/g);
    AllReduce = eq. (6) for a slice's ``2(k-1)(h/t)/k`` bytes: ``/((t·x/g)·B_inter)`` if x < k,
    ``/B_intra`` if x = k; plus :func:`stage_compute`.
    """
    if job.has_experts:
        raise InputError("job", "has MoE stages: their time depends on which expert groups share a server, not "
                         "on counts (use vertex_times or evaluate)", problem=PROBLEM)
    X = np.asarray(counts, dtype=float)
    n_st = len(job.stages)
    if X.ndim != 2 or X.shape[0] != n_st or not (X.size == 0 or X.min() >= 0):
        raise InputError("counts", f"must be a {n_st} x M array of GPU counts >= 0 (one row per stage), got "
                                   f"shape {X.shape}", problem=PROBLEM)
    g = float(cluster.gpus_per_server)
    b_inter, b_intra = cluster.inter_bandwidth, cluster.intra_bandwidth
    t = job.units.astype(float)[:, None]
    x = X / t
    k = job.replicas.astype(float)[:, None]
    h = np.array([s.param_bytes for s in job.stages])[:, None]
    inter, intra = _pipeline_bytes(job, x, k)
    comm = (g * inter / b_inter + intra / b_intra) / t
    ar_data = 2.0 * (k - 1.0) * h / (k * t)
    with np.errstate(divide="ignore", invalid="ignore"):
        allreduce = np.where(x >= k, ar_data / b_intra, ar_data / ((X / g) * b_inter))
    allreduce = np.where(k == 1.0, 0.0, allreduce)
    beta = stage_compute(job, cluster)[:, None] + comm + allreduce
    return np.where(X > 0, beta, np.nan)


def vertex_times(job: PipelineJob, cluster: Cluster, servers_of_vertex: Sequence[int]) -> np.ndarray:
    """beta of every vertex (GPU) of a job with tensor-parallel / MoE stages: eq. (7)'s
    ``comp + comm + AllReduce`` extended as Sec. VI states, for one slice / expert group on its
    server m. alpha is the maximum (eq. 7: the bottleneck).

    * comp: :func:`stage_compute` (eq. 4 per GPU, with the tensor-parallel all-reduce: "represent
      tensor slices as vertices and AllReduce operations as weighted edges. For communication
      efficiency, all tensor slices of a layer must reside within a single server").
    * comm: eq. (5) as the package README reads it, edge by edge: each of the vertex's
      ``pipeline`` and ``a2a`` edges (:func:`job_edge_kinds`) costs ``w·g/B_inter`` (its NIC share)
      when its other end is on another server and ``w/B_intra`` otherwise. For the paper's job
      this is eq. (5) exactly; the ``a2a`` edges extend it to token routing ("Communication,
      characterized by sparse activations/gradients and token routing, is represented as
      weighted edges").
    * AllReduce: eq. (6) per position j (the vertex's data-parallel peers, the j-th slices / groups
      of the stage's k replicas): ``D = 2(k-1)(h/u)/k``; ``D/B_intra`` if all k peers are on the
      vertex's server, else ``D/((X/g)·B_inter)`` with X the stage's GPUs on that server (the
      paper's x, in GPUs); 0 when k = 1.
    """
    sv = np.asarray(servers_of_vertex, dtype=np.int64)
    g = float(cluster.gpus_per_server)
    b_inter, b_intra = cluster.inter_bandwidth, cluster.intra_bandwidth
    stage_of = job.vertex_stage
    beta = stage_compute(job, cluster)[stage_of].astype(float)
    X = _vertices_per_server(job, sv)
    if job.n_replicas <= EDGE_LIST_MAX:
        kinds = job.edge_kinds
        for kind in ("pipeline", "a2a"):
            u, v, w = kinds[kind]
            cost = np.where(sv[u] == sv[v], w / b_intra, w * g / b_inter)
            np.add.at(beta, u, cost)
            np.add.at(beta, v, cost)
    else:  # EDGE_LIST_MAX: a vertex's pipeline edges counted per server, the a2a edges one by one
        V = job.vertices.astype(float)
        for s, w_s in enumerate(pipeline_weights(job)):
            if not s or w_s == 0.0:
                continue
            for here, there in ((s, s - 1), (s - 1, s)):  # stage `here`'s vertices, their edges to `there`
                lo, hi = int(job.offsets[here]), int(job.offsets[here + 1])
                near = X[there, sv[lo:hi]]
                beta[lo:hi] += near * (w_s / b_intra) + (V[there] - near) * (w_s * g / b_inter)
        for s, stage in enumerate(job.stages):
            if stage.experts > 1:
                lo = int(job.offsets[s])
                u, v, w = stage_edge_parts(job, s)[1]
                u, v = u + lo, v + lo
                cost = np.where(sv[u] == sv[v], w / b_intra, w * g / b_inter)
                np.add.at(beta, u, cost)
                np.add.at(beta, v, cost)
    for s, stage in enumerate(job.stages):
        k, us = stage.replicas, stage.units
        if k < 2:
            continue
        lo, hi = int(job.offsets[s]), int(job.offsets[s + 1])
        block = sv[lo:hi].reshape(k, us)
        together = (block == block[0]).all(axis=0)          # per position j: all k peers on one server
        data = 2.0 * (k - 1) * (stage.param_bytes / us) / k
        apart = data / ((X[s, block] / g) * b_inter)
        beta[lo:hi] += np.where(together[None, :], data / b_intra, apart).reshape(-1)
    return beta


def alpha_of_assignment(job: PipelineJob, cluster: Cluster, assignment: Sequence[Sequence[int]]) -> float:
    """alpha (eq. 7) of a mapping given as the solution's ``assignment``, for any job: the
    paper's count formula (:func:`alpha_from_counts`) for the paper's jobs, :func:`vertex_times`
    for jobs with tensor-parallel / MoE stages. Feasibility is :func:`evaluate`'s business."""
    sv = vertex_servers(job, assignment)
    if job.is_plain:
        return alpha_from_counts(job, cluster, stage_counts(job, assignment, int(sv.max()) + 1))
    return float(vertex_times(job, cluster, sv).max())


def alpha_from_counts(job: PipelineJob, cluster: Cluster, counts: np.ndarray) -> float:
    """alpha of eq. (7): the largest beta[s, m] over stages and servers holding the stage."""
    return float(np.nanmax(stage_times(job, cluster, counts)))


def alpha_max(job: PipelineJob, cluster: Cluster) -> float:
    """alpha_i^max (Sec. III-B): eq. (7) with every replica on its own server, each replica
    having B_inter/g of its server's NIC (x = 1 in eqs. 5-6)."""
    if not job.is_plain:  # every replica of a tensor-parallel stage (its slices) or every expert group alone
        sv: list[int] = []
        for stage in job.stages:
            for _ in range(stage.replicas):
                if stage.tensor_parallel > 1:
                    sv.extend([len(set(sv))] * stage.units)
                else:
                    sv.extend(range(len(set(sv)), len(set(sv)) + stage.units))
        return float(vertex_times(job, cluster, sv).max())
    n = job.n_replicas
    counts = np.zeros((len(job.stages), n))
    counts[job.vertex_stage, np.arange(n)] = 1.0
    return alpha_from_counts(job, cluster, counts)


def stage_counts(job: PipelineJob, assignment: Sequence[Sequence[int]], n_servers: int) -> np.ndarray:
    """x[s, m]: how many replicas of stage s the assignment puts on server m."""
    x = np.zeros((len(job.stages), n_servers), dtype=np.int64)
    for s, row in enumerate(assignment):
        np.add.at(x[s], np.asarray(row, dtype=np.int64), 1)
    return x


def vertex_servers(job: PipelineJob, assignment: Sequence[Sequence[int]]) -> np.ndarray:
    """The assignment flattened to one server index per vertex."""
    return np.concatenate([np.asarray(row, dtype=np.int64) for row in assignment])


def assignment_from_vertex_servers(job: PipelineJob, servers_of_vertex: Sequence[int]) -> list[list[int]]:
    """Split a per-vertex server vector into the solution's per-stage lists."""
    flat = [int(m) for m in servers_of_vertex]
    off = job.offsets
    return [flat[off[s]:off[s + 1]] for s in range(len(job.stages))]


def cut_weight(job: PipelineJob, servers_of_vertex: np.ndarray) -> float:
    """Total weight (bytes per iteration) of the job-graph edges between different servers.

    Above :data:`EDGE_LIST_MAX` vertices, without listing the pipeline edges: those between stages
    s-1 and s all weigh ``w_s`` (:func:`pipeline_weights`), and ``V_{s-1} V_s - sum_m X_{s-1,m}
    X_{s,m}`` of them join different servers (``V`` a stage's vertices, ``X`` its vertices per
    server); the edges within stages (:func:`stage_edges`) are summed one by one."""
    sv = np.asarray(servers_of_vertex)
    if job.n_replicas <= EDGE_LIST_MAX:
        u, v, w = job.edges
        return float(w[sv[u] != sv[v]].sum())
    total = 0.0
    for s in range(len(job.stages)):
        u, v, w = stage_edges(job, s)
        lo = int(job.offsets[s])
        total += float(w[sv[u + lo] != sv[v + lo]].sum())
    X = _vertices_per_server(job, sv)
    V = job.vertices.astype(float)
    for s, w_s in enumerate(pipeline_weights(job)):
        if s and w_s > 0.0:
            total += w_s * float(V[s - 1] * V[s] - X[s - 1] @ X[s])
    return total


def _vertices_per_server(job: PipelineJob, sv: np.ndarray) -> np.ndarray:
    """X[s, m]: the vertices of stage s on server m."""
    n_servers = int(sv.max()) + 1 if sv.size else 0
    X = np.zeros((len(job.stages), n_servers))
    np.add.at(X, (job.vertex_stage, sv), 1.0)
    return X


def pipeline_weights(job: PipelineJob) -> list[float]:
    """``w[s]`` (s >= 1): the weight of every pipeline edge between a vertex of stage s-1 and one of
    stage s, ``2 d^out_{s-1} / (u_{s-1} k_s u_s)`` (:func:`job_edge_kinds`; the paper's
    ``2 d^out_{s-1} / k_s`` when every ``u = 1``, :func:`job_edges`), the same floating-point number
    as there; ``w[0] = 0``."""
    st, u = job.stages, job.units
    return [0.0] + [2.0 * st[s - 1].out_bytes / (int(u[s - 1]) * st[s].replicas * int(u[s]))
                    for s in range(1, len(st))]


def stage_edge_parts(job: PipelineJob, s: int) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray],
                                                        tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The edges within stage s of ``job``, stage-local vertex indices, in two parts, each as
    :func:`job_edges` weighs them (the same floating-point numbers): ``dp``, the data-parallel ring
    or tree of the stage's k replicas (the paper's stage over ``h / u`` parameters), repeated for
    each of the u slice / group positions; ``own``, one replica's own edges (its tensor-parallel
    all-reduce, or its groups' all-to-all token routing: the stage with one replica), repeated for
    each replica. O(k u + k u^2) edges, built from the two patterns without listing the job's
    pipeline edges."""
    stage = job.stages[s]
    k, u = stage.replicas, stage.units
    dp_stage = Stage(k, stage.fwd_time, stage.bwd_time, 0.0, 0.0, stage.param_bytes / u)
    a, b, w = job_edges(PipelineJob((dp_stage,), job.allreduce, job.two_replica_ring))
    pos = np.arange(u, dtype=np.int64)
    dp = ((a[:, None] * u + pos).ravel(), (b[:, None] * u + pos).ravel(), np.repeat(w, u))
    if u == 1:
        empty = np.zeros(0, dtype=np.int64)
        return dp, (empty, empty, np.zeros(0))
    one = replace(stage, replicas=1, in_bytes=0.0, out_bytes=0.0)
    a, b, w = job_edges(PipelineJob((one,), job.allreduce, job.two_replica_ring, job.tp_allreduce_time))
    base = np.arange(k, dtype=np.int64)[:, None] * u
    return dp, ((base + a).ravel(), (base + b).ravel(), np.tile(w, k))


def stage_edges(job: PipelineJob, s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The edges within stage s (:func:`stage_edge_parts`, both parts) sorted by (u, v), as
    :func:`job_edges` lists them among its own (stage-local indices). The parts never join the same
    two vertices (a data-parallel edge joins two replicas, the others one replica's units), so no
    weight is a sum of the two."""
    (a1, b1, w1), (a2, b2, w2) = stage_edge_parts(job, s)
    uu, vv, ww = np.concatenate((a1, a2)), np.concatenate((b1, b2)), np.concatenate((w1, w2))
    order = np.lexsort((vv, uu))
    return uu[order], vv[order], ww[order]


# ----------------------------------------------------------------------------- evaluate
def _check_assignment(instance: GpuMappingInstance, solution: Any) -> tuple[list[list[int]] | None, list[str]]:
    if not isinstance(solution, Mapping) or "assignment" not in solution:
        return None, ["solution must be an object with an 'assignment' list"]
    a = solution["assignment"]
    job = instance.job
    if not isinstance(a, list) or len(a) != len(job.stages):
        return None, [f"assignment must list {len(job.stages)} stages, got "
                      f"{len(a) if isinstance(a, list) else type(a).__name__}"]
    out: list[list[int]] = []
    problems: list[str] = []
    n_servers = len(instance.servers)
    for s, row in enumerate(a):
        k = job.stages[s].replicas
        if not isinstance(row, list) or len(row) != k * job.stages[s].units:
            u = job.stages[s].units
            what = "replicas" if u == 1 else ("tensor slices" if job.stages[s].tensor_parallel > 1 else "expert groups")
            problems.append(f"assignment[{s}] must list one server for each of the {k * u} {what}"
                            + ("" if u == 1 else f" ({k} replicas x {u})"))
            continue
        clean = []
        for r, m in enumerate(row):
            if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 0 <= int(m) < n_servers:
                problems.append(f"assignment[{s}][{r}] must be a server index in 0..{n_servers - 1}, got {m!r}")
            else:
                clean.append(int(m))
        out.append(clean)
    return (out if not problems else None), problems


def evaluate(instance: GpuMappingInstance, solution: Mapping[str, Any]) -> Evaluation:
    """Check a mapping and measure it.

    Feasible when every replica sits on exactly one server of the instance and every server
    holds exactly its free GPUs. Objectives: ``cut`` (bytes per iteration across servers) and
    ``alpha`` (eq. 7, seconds per iteration). Metrics also name the bottleneck stage and server
    (the argmax of eq. 7, first in stage-then-server order) and the servers each stage spans.
    """
    assignment, problems = _check_assignment(instance, solution)
    if assignment is None:
        return Evaluation(feasible=False, violations=problems)
    job = instance.job
    x = stage_counts(job, assignment, len(instance.servers))
    load = x.sum(axis=0)
    what = "replicas" if job.is_plain else "GPUs (slices, expert groups, replicas)"
    violations = [f"server {m} holds {int(load[m])} {what} but has {cap} free GPUs"
                  for m, cap in enumerate(instance.servers) if load[m] != cap]
    if not job.is_plain:
        violations += colocation_violations(job, vertex_servers(job, assignment))
    if violations:
        return Evaluation(feasible=False, violations=violations)
    if not job.is_plain:
        return _evaluate_vertices(instance, assignment, x)
    beta = stage_times(job, instance.cluster, x)
    return _measured(np.where(np.isnan(beta), -np.inf, beta), cut_weight(job, vertex_servers(job, assignment)), x)


def _measured(flat: np.ndarray, cut: float, x: np.ndarray) -> Evaluation:
    """The evaluation of a feasible mapping from beta[s, m] (``-inf`` where stage s is not on m),
    its cut and its counts: alpha and the bottleneck (first in stage-then-server order)."""
    s_star, m_star = np.unravel_index(int(np.argmax(flat)), flat.shape)
    alpha = float(flat[s_star, m_star])
    metrics = {
        "cut_bytes": cut,
        "alpha_s": alpha,
        "bottleneck_stage": int(s_star),
        "bottleneck_server": int(m_star),
        "servers_per_stage": [int(c) for c in (x > 0).sum(axis=1)],
    }
    return Evaluation(feasible=True, objectives={"cut": cut, "alpha": alpha}, metrics=metrics)


def colocation_violations(job: PipelineJob, servers_of_vertex: Sequence[int]) -> list[str]:
    """The hard constraint of Sec. VI ("all tensor slices of a layer must reside within a single
    server"): one violation per tensor-parallel replica whose slices are on two or more servers."""
    sv = np.asarray(servers_of_vertex, dtype=np.int64)
    out = []
    for s, stage in enumerate(job.stages):
        t = stage.tensor_parallel
        if t < 2:
            continue
        block = sv[int(job.offsets[s]):int(job.offsets[s + 1])].reshape(stage.replicas, t)
        for r in np.flatnonzero((block != block[:, :1]).any(axis=1)):
            out.append(f"replica {int(r)} of stage {s} has its {t} tensor slices on servers "
                       f"{sorted(set(block[r].tolist()))}: they must share one server (Sec. VI)")
    return out


def _evaluate_vertices(instance: GpuMappingInstance, assignment: list[list[int]], x: np.ndarray) -> Evaluation:
    """:func:`evaluate` for a feasible mapping of a job with tensor-parallel / MoE stages: alpha by
    :func:`vertex_times`; the metrics as for the paper's jobs, beta[s, m] being the largest of the
    stage's vertices on server m."""
    job = instance.job
    sv = vertex_servers(job, assignment)
    beta_v = vertex_times(job, instance.cluster, sv)
    flat = np.full((len(job.stages), len(instance.servers)), -np.inf)
    np.maximum.at(flat, (job.vertex_stage, sv), beta_v)
    return _measured(flat, cut_weight(job, sv), x)
