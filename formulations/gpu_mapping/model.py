"""gpu-mapping: instance, solution, job graph, eqs. (4)-(7) and the independent ``evaluate``.

Source: Luo, Liu, Lee, Shroff, *Prediction-Assisted Online Distributed Deep Learning Workload
Scheduling in GPU Clusters*, Sec. III-B (eqs. 4-7) and Sec. IV-B (the job graph). The readings
of the garbled eqs. (5) and (6), the mathematics and every decision are in this package's
``README.md`` (``formulations/gpu_mapping/README.md``).

Units: seconds, bytes, bytes per second. Vertices (replicas) are numbered stage by stage:
vertex ``offsets[s] + r`` is replica ``r`` of stage ``s`` (both 0-based in code; the paper's
stages are 1-based).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from optkit.errors import InputError
from optkit.validation import instance_object, integer, known_keys, mapping, number, check_typed, trusted
from optkit.formulation import Evaluation

if TYPE_CHECKING:  # networkx (20 MB, 0.1-0.2 s to import) only where a graph is built: job_graph
    import networkx as nx

__all__ = [
    "PROBLEM", "ALLREDUCE_KINDS", "TWO_REPLICA_RINGS", "MAX_REPLICAS", "Stage", "PipelineJob", "Cluster",
    "GpuMappingInstance",
    "double_binary_tree_edges", "job_edges", "job_graph", "stage_counts", "stage_times",
    "alpha_from_counts", "alpha_max", "cut_weight", "evaluate", "assignment_from_vertex_servers",
]

PROBLEM = "gpu-mapping"
ALLREDUCE_KINDS = ("ring", "tree")
TWO_REPLICA_RINGS = ("two-edges", "one-edge")
"""Readings of a two-replica ring (reading ``two_replica_ring``, ``readings.py``): the ring
(r, r+1 mod 2) lists the pair twice, so ``two-edges`` charges 2·(2(k-1)h/k) = 2h between the
two replicas, ``one-edge`` charges h once."""
REL_TOL = 1e-9


# ----------------------------------------------------------------------------- instance types
MAX_REPLICAS = 4096
"""Most replicas (GPUs) of one job: the job graph is a dense n x n matrix (4096: 128 MiB), and
the paper's largest clusters have 2,000 GPUs. More is bad input, not a memory error."""
_STAGE_FIELDS = ("replicas", "fwd_time", "bwd_time", "in_bytes", "out_bytes", "param_bytes")


@dataclass(frozen=True)
class Stage:
    """One pipeline stage: k_s replicas, p^f, p^b (s), d^in, d^out, h (bytes)."""

    replicas: int
    fwd_time: float
    bwd_time: float
    in_bytes: float
    out_bytes: float
    param_bytes: float

    def __post_init__(self) -> None:
        check_typed(lambda: Stage.from_dict(self.to_dict()), PROBLEM)

    @classmethod
    def from_dict(cls, st: Any, path: str = "stage") -> "Stage":
        st = mapping(st, path)
        known_keys(st, _STAGE_FIELDS, path)
        if "replicas" not in st:
            raise InputError(f"{path}.replicas", "is required")
        with trusted():
            return cls(replicas=integer(st["replicas"], f"{path}.replicas", low=1, high=MAX_REPLICAS),
                       fwd_time=number(st, "fwd_time", path), bwd_time=number(st, "bwd_time", path),
                       in_bytes=number(st, "in_bytes", path), out_bytes=number(st, "out_bytes", path),
                       param_bytes=number(st, "param_bytes", path))

    def to_dict(self) -> dict[str, Any]:
        return {"replicas": self.replicas, "fwd_time": self.fwd_time, "bwd_time": self.bwd_time,
                "in_bytes": self.in_bytes, "out_bytes": self.out_bytes, "param_bytes": self.param_bytes}


@dataclass(frozen=True)
class PipelineJob:
    """A training job with (possibly replicated) pipeline stages; ``allreduce`` is ring or tree.

    ``two_replica_ring`` is the reading of a ring over k = 2 replicas (:data:`TWO_REPLICA_RINGS`):
    a field of the job, so the job graph, ``evaluate``'s ``cut`` and every solver read the same
    one. It is written to the job's dict only when it is not the default ``two-edges``.
    """

    stages: tuple[Stage, ...]
    allreduce: str = "ring"
    two_replica_ring: str = "two-edges"

    def __post_init__(self) -> None:
        try:
            validate_job(self)
        except InputError as err:
            raise err.with_problem(PROBLEM) from None

    @classmethod
    def from_dict(cls, d: Any, path: str = "job") -> "PipelineJob":
        d = mapping(d, path)
        known_keys(d, ("allreduce", "stages", "two_replica_ring"), path)
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
        try:
            return cls(stages=tuple(stages), allreduce=allreduce, two_replica_ring=ring2)
        except InputError as exc:  # validate_job names fields under "job"; use this job's path
            field_ = exc.field.replace("job", path, 1) if exc.field.startswith("job") else exc.field
            raise InputError(field_, exc.message) from None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"allreduce": self.allreduce}
        if self.two_replica_ring != "two-edges":
            d["two_replica_ring"] = self.two_replica_ring
        d["stages"] = [s.to_dict() for s in self.stages]
        return d

    # Derived arrays, computed once (the dataclass is frozen, so caching is safe).
    @cached_property
    def replicas(self) -> np.ndarray:
        return np.array([s.replicas for s in self.stages], dtype=np.int64)

    @cached_property
    def offsets(self) -> np.ndarray:
        """``offsets[s]`` is the first vertex of stage s; ``offsets[-1]`` the vertex count."""
        return np.concatenate(([0], np.cumsum(self.replicas))).astype(np.int64)

    @property
    def n_replicas(self) -> int:
        return int(self.offsets[-1])

    @cached_property
    def vertex_stage(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.stages)), self.replicas)

    @cached_property
    def edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return job_edges(self)

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
    total = sum(s.replicas for s in st)
    if total > MAX_REPLICAS:
        raise InputError(f"{path}.stages", f"hold {total} replicas in all; at most {MAX_REPLICAS} are supported "
                                           "(the job graph is a dense n x n matrix)")
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
    """
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


def job_graph(job: PipelineJob) -> nx.Graph:
    """The job graph as a networkx graph: node ``i`` has attributes ``stage`` and ``replica``;
    edge attribute ``weight`` in bytes per iteration (parallel edges summed)."""
    import networkx as nx

    g = nx.Graph()
    for s, stage in enumerate(job.stages):
        for r in range(stage.replicas):
            g.add_node(int(job.offsets[s]) + r, stage=s, replica=r)
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
    x = np.asarray(counts, dtype=float)
    n_st = len(job.stages)
    g = float(cluster.gpus_per_server)
    b_inter, b_intra = cluster.inter_bandwidth, cluster.intra_bandwidth
    k = job.replicas.astype(float)[:, None]
    comp = np.array([s.fwd_time + s.bwd_time for s in job.stages])[:, None]
    d_in = np.array([s.in_bytes for s in job.stages])[:, None]
    d_out = np.array([s.out_bytes for s in job.stages])[:, None]
    h = np.array([s.param_bytes for s in job.stages])[:, None]
    inter = np.zeros_like(x)
    intra = np.zeros_like(x)
    if n_st > 1:
        prev_x, prev_k = x[:-1], k[:-1]
        inter[1:] += 2.0 * d_in[1:] * (prev_k - prev_x) / prev_k
        intra[1:] += 2.0 * d_in[1:] * prev_x / prev_k
        next_x, next_k = x[1:], k[1:]
        inter[:-1] += 2.0 * d_out[:-1] * (next_k - next_x) / next_k
        intra[:-1] += 2.0 * d_out[:-1] * next_x / next_k
    comm = g * inter / b_inter + intra / b_intra
    ar_data = 2.0 * (k - 1.0) * h / k
    with np.errstate(divide="ignore", invalid="ignore"):
        allreduce = np.where(x >= k, ar_data / b_intra, ar_data / ((x / g) * b_inter))
    allreduce = np.where(k == 1.0, 0.0, allreduce)
    beta = comp + comm + allreduce
    return np.where(x > 0, beta, np.nan)


def alpha_from_counts(job: PipelineJob, cluster: Cluster, counts: np.ndarray) -> float:
    """alpha of eq. (7): the largest beta[s, m] over stages and servers holding the stage."""
    return float(np.nanmax(stage_times(job, cluster, counts)))


def alpha_max(job: PipelineJob, cluster: Cluster) -> float:
    """alpha_i^max (Sec. III-B): eq. (7) with every replica on its own server, each replica
    having B_inter/g of its server's NIC (x = 1 in eqs. 5-6)."""
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
    """Total weight (bytes per iteration) of the job-graph edges between different servers."""
    u, v, w = job.edges
    sv = np.asarray(servers_of_vertex)
    return float(w[sv[u] != sv[v]].sum())


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
        if not isinstance(row, list) or len(row) != k:
            problems.append(f"assignment[{s}] must list one server for each of the {k} replicas")
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
    violations = [f"server {m} holds {int(load[m])} replicas but has {cap} free GPUs"
                  for m, cap in enumerate(instance.servers) if load[m] != cap]
    if violations:
        return Evaluation(feasible=False, violations=violations)
    beta = stage_times(job, instance.cluster, x)
    flat = np.where(np.isnan(beta), -np.inf, beta)
    s_star, m_star = np.unravel_index(int(np.argmax(flat)), flat.shape)
    alpha = float(flat[s_star, m_star])
    cut = cut_weight(job, vertex_servers(job, assignment))
    metrics = {
        "cut_bytes": cut,
        "alpha_s": alpha,
        "bottleneck_stage": int(s_star),
        "bottleneck_server": int(m_star),
        "servers_per_stage": [int(c) for c in (x > 0).sum(axis=1)],
    }
    return Evaluation(feasible=True, objectives={"cut": cut, "alpha": alpha}, metrics=metrics)
