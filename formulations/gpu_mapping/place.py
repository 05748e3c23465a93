"""Heavy-Edge with its server choice, keyed by the caller's node ids: the entry a scheduler calls.

A scheduler holds its cluster as ``{node id: free GPUs}`` (ids are whatever it uses: host names,
ints) and a job; :func:`place` chooses the servers, runs Heavy-Edge on them and answers with the
node of every replica, or says why nothing fits. Nothing here needs a solver or an instance file.

Server choice (the step before Heavy-Edge, which maps a job onto servers whose free GPUs add up
exactly to the job): A-SRPT's communication-heavy placement (Algorithm 1, lines 9-11) takes the
job's GPUs from the servers with the most free GPUs, all free GPUs of the most-free server, then
the next, the remainder from the last. That is ``server_choice="most-free"`` (the default, and
the rule :func:`optkit.formulations.ddlwmp.placement.most_free_servers` applies to the
simulator's arrays). ``"least-free"`` is best fit: one server that holds the whole job with the
fewest free GPUs, else the least-free servers first (the baselines' ``consolidate=false``).
Ties go to the node that comes first in the caller's mapping, so the result depends on the
mapping's order only through ties, as a list index would.

Node sizes may differ (``{"a": 8, "b": 2}`` is fine): Heavy-Edge only needs each chosen node's
GPU count. Eq. (7)'s per-iteration time needs one intra- and one inter-server bandwidth, which
:class:`~optkit.formulations.gpu_mapping.model.Cluster` holds; its ``gpus_per_server`` plays no
part in ``alpha``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Hashable, Mapping, Sequence, TypeVar

import numpy as np

from optkit.errors import InputError
from optkit.validation import checked_arguments, distinct_keys

from .colocation import heavy_edge_mapping
from .model import Cluster, PipelineJob, alpha_from_counts, alpha_of_assignment, stage_counts

__all__ = ["JobPlacement", "SERVER_CHOICES", "choose_servers", "place"]

N = TypeVar("N", bound=Hashable)

SERVER_CHOICES = ("most-free", "least-free")
PROBLEM = "gpu-mapping"


@dataclass(frozen=True)
class JobPlacement(Generic[N]):
    """The answer of :func:`place`.

    Attributes
    ----------
    ok
        Whether the job was placed.
    assignment
        Per stage, the node id of each replica (empty when not placed).
    gpus
        The GPUs taken from each node, in the order the servers were chosen.
    alpha
        Eq. (7)'s per-iteration time in seconds, when a ``cluster`` was given.
    reason
        ``None`` when placed, else a short code: ``"too-few-free-gpus"``.
    detail
        The reason in words (free and needed GPUs).
    """

    ok: bool
    assignment: list[list[N]] = field(default_factory=list)
    gpus: dict[N, int] = field(default_factory=dict)
    alpha: float | None = None
    reason: str | None = None
    detail: str = ""


def _free_counts(free: Mapping[N, int]) -> tuple[list[N], np.ndarray]:
    """The nodes and their free GPUs, checked as the instance file's ``servers`` are."""
    if not isinstance(free, Mapping):
        raise InputError("free", f"must map node ids to free GPU counts, got {type(free).__name__}", problem=PROBLEM)
    nodes = distinct_keys(free, "free", problem=PROBLEM)
    counts = []
    for node in nodes:
        c = free[node]
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 0:
            raise InputError(f"free[{node!r}]", f"must be an integer >= 0, got {c!r}", problem=PROBLEM)
        counts.append(int(c))
    return nodes, np.asarray(counts, dtype=np.int64)


@checked_arguments(PROBLEM)
def choose_servers(free: Mapping[N, int], need: int, *, server_choice: str = "most-free") -> dict[N, int] | None:
    """The nodes a ``need``-GPU job takes and how many GPUs from each, or ``None`` if the free
    GPUs do not add up to ``need`` (module docstring: the two rules and their ties).

    References
    ----------
    Luo et al., A-SRPT paper, Sec. IV-C, Algorithm 1, lines 9-11 (``most-free``); the baselines'
    consolidated placement, Sec. V-A-1-d (``least-free``, reading ``consolidate``).

    Notes
    -----
    Guarantee: exact for its rule (``most-free`` uses the fewest servers the free GPUs allow).

    Units: GPUs.

    Examples
    --------
    >>> choose_servers({"a": 4, "b": 1, "c": 8, "d": 1}, 6)
    {'c': 6}
    >>> choose_servers({"a": 4, "b": 1, "c": 3}, 6)
    {'a': 4, 'c': 2}
    >>> choose_servers({"a": 4, "b": 1, "c": 8}, 6, server_choice="least-free")
    {'c': 6}
    >>> choose_servers({"a": 4, "b": 1}, 6) is None
    True
    """
    if server_choice not in SERVER_CHOICES:
        raise InputError("server_choice", f"must be one of {', '.join(SERVER_CHOICES)}, got {server_choice!r}",
                         problem=PROBLEM)
    if isinstance(need, bool) or not isinstance(need, (int, np.integer)) or need < 1:
        raise InputError("need", f"must be an integer >= 1, got {need!r}", problem=PROBLEM)
    nodes, counts = _free_counts(free)
    if int(counts.sum()) < need:
        return None
    if server_choice == "least-free":
        fits = np.flatnonzero(counts >= need)
        if fits.size:
            m = int(fits[np.argmin(counts[fits])])  # argmin: the first of equal minima
            return {nodes[m]: int(need)}
        nz = np.flatnonzero(counts > 0)
        order = nz[np.argsort(counts[nz], kind="stable")]
    else:
        order = np.argsort(-counts, kind="stable")
    taken: dict[N, int] = {}
    left = int(need)
    for m in order.tolist():
        if left == 0:
            break
        k = min(left, int(counts[m]))
        if k > 0:
            taken[nodes[m]] = k
            left -= k
    return taken


@checked_arguments(PROBLEM)
def place(job: PipelineJob, free: Mapping[N, int], *, cluster: Cluster | None = None,
          server_choice: str = "most-free", seed: int | None = None,
          single_gpu_weight: str = "unassigned", server_start: str = "heaviest-pair") -> JobPlacement[N]:
    """Place ``job`` on the free GPUs of a cluster given as ``{node id: free GPUs}``: choose the
    servers (:func:`choose_servers`), map the replicas onto them by Heavy-Edge
    (:func:`~optkit.formulations.gpu_mapping.heavy_edge.heavy_edge_job`), and answer by node id.

    Parameters
    ----------
    job
        The pipeline job (:class:`~optkit.formulations.gpu_mapping.model.PipelineJob`): one GPU per
        stage replica (per slice / expert group of a tensor-parallel / MoE stage). A job whose
        every stage has one ``tensor_parallel`` t > 1 takes servers in replicas of t GPUs
        (``floor(free / t)`` each); every tensor-parallel replica's slices land on one server
        (Sec. VI; Heavy-Edge's ``colocate``).
    free
        Free GPUs per node, keyed by the caller's ids; nodes of different sizes are fine.
    cluster
        Bandwidths for eq. (7); when given, the answer carries ``alpha`` (s per iteration).
    server_choice
        ``"most-free"`` (A-SRPT's rule, default) or ``"least-free"`` (module docstring).
    seed
        Heavy-Edge's seed (its random choice when no edge joins a server's set to the rest).
    single_gpu_weight
        Reading of Heavy-Edge's case 2b (:mod:`.heavy_edge`): ``"unassigned"`` (default) or
        ``"total"``.
    server_start
        Reading of Heavy-Edge's case 2c (:mod:`.heavy_edge`): ``"heaviest-pair"`` (default) or
        ``"from-placed"``.

    Returns
    -------
    JobPlacement
        ``ok`` with the node of every replica per stage, or ``ok=False`` with ``reason``
        ``"too-few-free-gpus"`` and the counts in ``detail``. Never ``None``.

    References
    ----------
    Luo et al., A-SRPT paper, Sec. IV-B (Heavy-Edge) and Sec. IV-C, Algorithm 1, lines 9-11 (the
    servers with the most free GPUs); eq. (7) for ``alpha``.

    Notes
    -----
    Guarantee: none proven (Heavy-Edge has no approximation bound in the paper).

    Units: GPUs; ``alpha`` in seconds per iteration; the job's bytes and the cluster's bandwidths
    in bytes and bytes per second.

    Examples
    --------
    Two stages of two replicas on hosts with 2, 3 and 0 free GPUs: the most-free host ``h2`` gives
    all 3, ``h1`` the fourth; Heavy-Edge keeps the first stage's ring on ``h2``:

    >>> from optkit.formulations.gpu_mapping import Cluster, PipelineJob
    >>> stage = {"fwd_time": 0.01, "bwd_time": 0.02, "param_bytes": 1e8}
    >>> job = PipelineJob.from_dict({"allreduce": "ring", "stages": [
    ...     {**stage, "replicas": 2, "in_bytes": 0, "out_bytes": 4e6},
    ...     {**stage, "replicas": 2, "in_bytes": 4e6, "out_bytes": 0}]})
    >>> p = place(job, {"h1": 2, "h2": 3, "h3": 0}, cluster=Cluster(8, 1.25e9, 3e11))
    >>> p.ok, p.assignment, p.gpus, round(p.alpha, 6)
    (True, [['h2', 'h2'], ['h2', 'h1']], {'h2': 3, 'h1': 1}, 0.7212)
    >>> place(job, {"h1": 1, "h2": 2}).detail
    'the job needs 4 GPUs, the nodes have 3 free'
    """
    if not isinstance(job, PipelineJob):
        raise InputError("job", f"must be a PipelineJob (PipelineJob.from_dict builds one), got {type(job).__name__}",
                         problem=PROBLEM)
    if cluster is not None and not isinstance(cluster, Cluster):
        raise InputError("cluster", f"must be a gpu-mapping Cluster or None, got {type(cluster).__name__}",
                         problem=PROBLEM)
    need = job.n_replicas
    if cluster is not None:  # a node cannot have more GPUs free than it has
        for node, c in free.items() if isinstance(free, Mapping) else ():
            if not isinstance(c, bool) and isinstance(c, (int, np.integer)) and c > cluster.gpus_per_server:
                raise InputError(f"free[{node!r}]", f"must be <= the cluster's {cluster.gpus_per_server} GPUs per "
                                                    f"server, got {c}", problem=PROBLEM)
    t = {st.tensor_parallel for st in job.stages}
    t = t.pop() if len(t) == 1 else 1
    if t > 1:  # every stage's replicas are t slices on one server (Sec. VI): choose servers in replicas of t GPUs
        nodes_all, counts_all = _free_counts(free)
        units = choose_servers(dict(zip(nodes_all, (counts_all // t).tolist())), need // t, server_choice=server_choice)
        chosen = None if units is None else {n: c * t for n, c in units.items()}
    else:
        chosen = choose_servers(free, need, server_choice=server_choice)
    if chosen is None:
        have = sum(int(v) for v in free.values())
        if t > 1:
            room = sum(int(v) // t for v in free.values())
            return JobPlacement(False, reason="too-few-free-gpus",
                                detail=f"the job needs {need // t} replicas of {t} GPUs, each on one node; the nodes "
                                       f"have {have} GPUs free, room for {room} such replicas")
        return JobPlacement(False, reason="too-few-free-gpus",
                            detail=f"the job needs {need} GPUs, the nodes have {have} free")
    nodes: Sequence[N] = list(chosen)
    # colocation.heavy_edge_mapping: each tensor-parallel replica's slices on one server (an InputError
    # naming colocate when the chosen GPUs cannot hold them whole: stages of different t)
    servers = heavy_edge_mapping(job, [chosen[n] for n in nodes], seed=seed, single_gpu_weight=single_gpu_weight,
                                 server_start=server_start)
    alpha = None
    if cluster is not None:
        alpha = alpha_from_counts(job, cluster, stage_counts(job, servers, len(nodes))) if job.is_plain \
            else alpha_of_assignment(job, cluster, servers)
    return JobPlacement(True, [[nodes[m] for m in row] for row in servers], dict(chosen), alpha)
