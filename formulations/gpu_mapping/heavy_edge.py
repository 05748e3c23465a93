"""Heavy-Edge GPU mapping (Luo et al., Sec. IV-B) and the per-iteration time estimates A-SRPT uses.

The paper's procedure, step by step, with the readings this implementation takes:

1. Sort the servers by free GPUs, descending. *Ties*: by server index, ascending (stable sort).
2. Fill the servers in that order. For the current server m with c free GPUs:

   a. *Case 1*: if exactly c vertices remain unassigned, all go to m.
   b. *Case 2*, single-GPU server (c = 1): the unassigned vertex "with the minimum total edge
      weight". *Reading*: total weight of its edges to **unassigned** vertices. Edges to vertices
      already placed are cut whichever vertex is chosen (they sit on earlier servers), so only
      the edges to unassigned vertices distinguish the choices; the two readings agree on the
      paper's Fig. 2 example. *Ties*: lowest vertex index. The other reading, the total weight of
      **all** its edges, is the keyword ``single_gpu_weight="total"`` (reading
      ``single_gpu_weight`` of ``readings.py``; default ``"unassigned"``).
   c. Otherwise (c >= 2), grow ``node_set`` one vertex at a time until it holds c vertices:
      while ``node_set`` is empty, take the heaviest edge whose two ends are unassigned and add
      both ends (the worked example starts this way, with the 20 MB ring edge of stage S1).
      *Reading* ``server_start`` (the paper: "finding the heaviest edge between assigned and
      unassigned vertices"; "this process continues sequentially for subsequent servers"):
      ``heaviest-pair`` (default) starts every server so; ``from-placed`` starts a later server
      at the unassigned vertex joined by the heaviest edge to a vertex already placed on an
      earlier server ("assigned" read as placed anywhere), and falls back to the heaviest pair
      when no such edge exists (always on the first server);
      afterwards add the unassigned vertex joined to ``node_set`` by the heaviest edge. If no
      edge (of positive weight) joins them, add a uniformly random unassigned vertex drawn from
      a ``numpy.random.Generator`` seeded by ``seed``. *Ties*: the heaviest edge with the lowest
      (u, v) vertex pair; the unassigned vertex with the lowest index.

Vertices are numbered stage by stage (see :mod:`.model`), so "lowest index" means "earliest
stage, then lowest replica". The result is deterministic for a given seed, and does not depend
on the seed at all unless step 2c meets a disconnected remainder.
"""

from __future__ import annotations

import heapq
import math
from typing import TYPE_CHECKING, Any, Hashable, Mapping, Sequence, TypeVar

import numpy as np

from optkit.errors import InputError

from .model import Cluster, PipelineJob, alpha_from_counts, stage_counts

if TYPE_CHECKING:  # heavy_edge takes a networkx graph; the array paths never import networkx
    import networkx as nx

__all__ = ["heavy_edge", "heavy_edge_arrays", "heavy_edge_job", "alpha_min_estimate", "fewest_servers",
           "SINGLE_GPU_WEIGHTS", "SERVER_STARTS"]

N = TypeVar("N", bound=Hashable)
"""A vertex of the caller's graph: :func:`heavy_edge` answers with the graph's own vertices."""

SERVER_STARTS = ("heaviest-pair", "from-placed")
"""Readings of how a multi-GPU server's empty ``node_set`` starts (case 2c)."""
SINGLE_GPU_WEIGHTS = ("unassigned", "total")
"""Readings of case 2 (a one-GPU server): the vertex with the least weight of its edges to
unassigned vertices, or of all its edges."""


class _Graph:
    """Adjacency lists and a weight-sorted edge list, built once per job graph."""

    __slots__ = ("n", "nbrs", "sorted_edges", "ends_a", "ends_b", "weight_sums", "heap_entries", "spans")

    def __init__(self, n: int, u: Sequence[int], v: Sequence[int], w: Sequence[float]) -> None:
        self.n = n
        self.nbrs: list[list[tuple[int, float]]] = [[] for _ in range(n)]
        edges = []
        for a, b, x in zip(u, v, w):
            a, b, x = int(a), int(b), float(x)
            if x <= 0.0 or a == b:
                continue
            a, b = (a, b) if a < b else (b, a)
            self.nbrs[a].append((b, x))
            self.nbrs[b].append((a, x))
            edges.append((-x, a, b))
        edges.sort()
        self.sorted_edges = edges
        self.ends_a = [a for _, a, _ in edges]  # the sorted edges' ends, for the scan in case 2c
        self.ends_b = [b for _, _, b in edges]
        self.weight_sums = [sum(x for _, x in self.nbrs[v]) for v in range(n)]
        # per vertex, its neighbours as ready-made heap entries (-weight, neighbour)
        self.heap_entries = [[(-x, b) for b, x in self.nbrs[v]] for v in range(n)]
        self.spans: list[tuple[int, int]] | None = None  # a job's stages as vertex ranges, set by _prepared


def _prepared(job: PipelineJob) -> _Graph:
    # The job is immutable, so its prepared graph is cached on it.
    cache = job.__dict__.get("_heavy_edge_graph")
    if cache is None:
        u, v, w = job.edges
        cache = _Graph(job.n_replicas, u.tolist(), v.tolist(), w.tolist())
        off = [int(o) for o in job.offsets]
        cache.spans = list(zip(off[:-1], off[1:]))
        job.__dict__["_heavy_edge_graph"] = cache
    return cache


def _heavy_edge(graph: _Graph, free_gpus: Sequence[int], rng: np.random.Generator | None,
                seed: int | None, single_gpu_weight: str = "unassigned",
                server_start: str = "heaviest-pair") -> list[int]:
    if single_gpu_weight not in SINGLE_GPU_WEIGHTS:
        raise ValueError(f"single_gpu_weight must be one of {SINGLE_GPU_WEIGHTS}, got {single_gpu_weight!r}")
    if server_start not in SERVER_STARTS:
        raise ValueError(f"server_start must be one of {SERVER_STARTS}, got {server_start!r}")
    from_placed = server_start == "from-placed"
    n = graph.n
    caps = list(map(int, free_gpus))
    if sum(caps) != n or (caps and min(caps) < 1):
        raise InputError("free_gpus", f"must be positive and add up to the {n} vertices, got {list(free_gpus)}",
                         problem="gpu-mapping")
    nbrs = graph.nbrs
    server_of = [-1] * n
    unassigned = list(range(n))  # kept sorted: "lowest index" ties and the random pool read it in order
    n_left = n
    # weight of each vertex's edges to unassigned vertices (case 2): the total minus the edges to
    # each vertex assigned so far, subtracted in assignment order, lazily (only case 2 reads it);
    # reading single_gpu_weight="total" keeps the total weight of all edges instead
    w_unassigned = list(graph.weight_sums)
    assigned_order: list[int] = []
    w_done = 0
    edge_ptr = 0
    ends_a, ends_b = graph.ends_a, graph.ends_b
    n_edges = len(ends_a)
    entries = graph.heap_entries
    heappush, heappop = heapq.heappush, heapq.heappop
    placed_heap: list[tuple[float, int]] = []  # (-weight, unassigned vertex) of edges from placed vertices
    discard, record = unassigned.remove, assigned_order.append

    def placed(v: int) -> None:
        """Reading server_start="from-placed": remember v's edges to unassigned vertices."""
        for entry in entries[v]:
            if server_of[entry[1]] == -1:
                heappush(placed_heap, entry)

    def random_vertex() -> int:
        nonlocal rng
        if rng is None:
            rng = np.random.default_rng(seed)
        return unassigned[int(rng.integers(len(unassigned)))]

    # servers by free GPUs, descending, ties by index (a stable sort keeps index order in reverse too)
    for m in sorted(range(len(caps)), key=caps.__getitem__, reverse=True):
        c = caps[m]
        if n_left == c:  # case 1
            for v in unassigned:
                server_of[v] = m
                record(v)
                if from_placed:
                    placed(v)
            unassigned.clear()
            n_left = 0
            continue
        if c == 1:  # case 2
            if single_gpu_weight == "unassigned":
                for v in assigned_order[w_done:]:
                    for b, x in nbrs[v]:
                        w_unassigned[b] -= x
                w_done = len(assigned_order)
                weights = w_unassigned
            else:
                weights = graph.weight_sums
            best = min(unassigned, key=weights.__getitem__)  # the first (lowest index) of the least
            server_of[best] = m
            discard(best)
            record(best)
            n_left -= 1
            if from_placed:
                placed(best)
            continue
        # case 2c: start node_set (heaviest pair, or reading from-placed), then grow it by the
        # heaviest edge from it; a server of c >= 2 GPUs gets exactly c vertices
        heap: list[tuple[float, int]] = []  # (-weight of heaviest edge to node_set, vertex)
        start: tuple[int, ...] | None = None
        if from_placed:
            while placed_heap and server_of[placed_heap[0][1]] != -1:
                heappop(placed_heap)
            if placed_heap:
                start = (heappop(placed_heap)[1],)
        if start is None:
            while edge_ptr < n_edges and (server_of[ends_a[edge_ptr]] != -1 or server_of[ends_b[edge_ptr]] != -1):
                edge_ptr += 1
            start = (ends_a[edge_ptr], ends_b[edge_ptr]) if edge_ptr < n_edges else (random_vertex(),)
        n_start = len(start)
        last = c - 1
        for i in range(c):
            if i < n_start:  # the start's vertices first, in order
                v = start[i]
            else:
                while heap and server_of[heap[0][1]] != -1:
                    heappop(heap)
                v = heappop(heap)[1] if heap else random_vertex()
            server_of[v] = m  # assign(v, m), inlined
            discard(v)
            record(v)
            if from_placed:
                placed(v)
            if i == last:  # the server is full: its last vertex's edges choose nothing more
                break
            for entry in entries[v]:
                if server_of[entry[1]] == -1:
                    heappush(heap, entry)
        n_left -= c
    return server_of


def heavy_edge_arrays(n: int, u: Sequence[int], v: Sequence[int], w: Sequence[float],
                      free_gpus: Sequence[int], *, seed: int | None = None,
                      single_gpu_weight: str = "unassigned", server_start: str = "heaviest-pair") -> list[int]:
    """Heavy-Edge on a graph given as edge arrays over vertices ``0..n-1``.

    Returns the index (into ``free_gpus``) of the server each vertex goes to; server m gets
    exactly ``free_gpus[m]`` vertices. Parallel edges are kept as separate candidates with
    their own weights; sum them first for the job graph's convention. ``single_gpu_weight`` and
    ``server_start``: the readings of cases 2b and 2c (module docstring).

    References
    ----------
    Luo et al., A-SRPT paper, Sec. IV-B (Heavy-Edge; Fig. 2's worked example); the steps and
    readings are this module's docstring.

    Notes
    -----
    Guarantee: none proven (the paper gives Heavy-Edge no approximation bound).

    Units: ``w`` in bytes per iteration (any consistent unit: only the order of weights
    matters); ``free_gpus`` in GPUs.

    Examples
    --------
    A path a-b-c-d with weights 20, 1 and 0.5 on servers of 3 and 1 free GPUs:

    >>> heavy_edge_arrays(4, [0, 1, 2], [1, 2, 3], [20.0, 1.0, 0.5], [3, 1])
    [0, 0, 0, 1]
    """
    return _heavy_edge(_Graph(n, u, v, w), free_gpus, None, seed, single_gpu_weight, server_start)


def heavy_edge(graph: nx.Graph[N], free_gpus: Sequence[int], *, seed: int | None = None,
               weight: str = "weight", single_gpu_weight: str = "unassigned",
               server_start: str = "heaviest-pair") -> dict[N, int]:
    """Map the vertices of ``graph`` onto servers with ``free_gpus[m]`` free GPUs each.

    The paper's Heavy-Edge (Sec. IV-B; see the module docstring for every step and tie-break).
    "Lowest index" follows the order of ``graph.nodes``.

    Parameters
    ----------
    graph
        Undirected graph, one vertex per GPU-bound task; edge attribute ``weight`` is the
        data exchanged per iteration (bytes).
    free_gpus
        Free GPUs of each server; must add up to the number of vertices.
    seed
        Seeds the random choice made when no edge joins the server's set to the rest.
    weight
        The edge attribute holding the bytes exchanged (default ``"weight"``; an edge without
        it weighs 1).
    single_gpu_weight
        Reading ``single_gpu_weight``: ``"unassigned"`` (default) or ``"total"``,
        the weight a one-GPU server minimises (module docstring, case 2b).
    server_start
        Reading ``server_start``: ``"heaviest-pair"`` (default) or ``"from-placed"``,
        how a multi-GPU server's set starts (module docstring, case 2c).

    Returns
    -------
    dict
        ``{vertex: server index}``, keyed by the graph's own vertices.

    References
    ----------
    Luo et al., A-SRPT paper, Sec. IV-B (Heavy-Edge; Fig. 2's worked example); the steps and
    readings are this module's docstring.

    Notes
    -----
    Guarantee: none proven (the paper gives Heavy-Edge no approximation bound; its gap to the
    optimum is measured in the Table II claims and ``benchmarks/results``).

    Units: edge weights in bytes per iteration; ``free_gpus`` in GPUs.

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.Graph()
    >>> g.add_weighted_edges_from([("a", "b", 20.0), ("b", "c", 1.0), ("c", "d", 0.5)])
    >>> heavy_edge(g, [3, 1])
    {'a': 0, 'b': 0, 'c': 0, 'd': 1}
    """
    nodes = list(graph.nodes)
    index = {x: i for i, x in enumerate(nodes)}
    u, v, w = [], [], []
    for a, b, data in graph.edges(data=True):
        u.append(index[a])
        v.append(index[b])
        w.append(float(data.get(weight, 1.0)))
    servers = heavy_edge_arrays(len(nodes), u, v, w, free_gpus, seed=seed, single_gpu_weight=single_gpu_weight,
                                server_start=server_start)
    return {x: servers[i] for i, x in enumerate(nodes)}


def heavy_edge_job(job: PipelineJob, free_gpus: Sequence[int], *, seed: int | None = None,
                   single_gpu_weight: str = "unassigned", server_start: str = "heaviest-pair") -> list[list[int]]:
    """Heavy-Edge on ``job``'s graph; returns the solution's ``assignment`` (per stage, the
    server index of each replica). Takes the readings ``single_gpu_weight`` (case 2b of the
    module docstring; default ``"unassigned"``) and ``server_start`` (case 2c; default
    ``"heaviest-pair"``).

    References
    ----------
    Luo et al., A-SRPT paper, Sec. IV-B (Heavy-Edge; Fig. 2's worked example); the steps and
    readings are this module's docstring.

    Notes
    -----
    Guarantee: none proven.

    Units: the job's edge weights (eqs. 4-7's activation and parameter bytes) in bytes;
    ``free_gpus`` in GPUs.

    Examples
    --------
    Two stages of two replicas on two servers of two free GPUs: each stage's ring stays on one
    server.

    >>> from optkit.formulations.gpu_mapping import PipelineJob
    >>> stage = {"fwd_time": 0.01, "bwd_time": 0.02, "param_bytes": 1e8}
    >>> job = PipelineJob.from_dict({"allreduce": "ring", "stages": [
    ...     {**stage, "replicas": 2, "in_bytes": 0, "out_bytes": 4e6},
    ...     {**stage, "replicas": 2, "in_bytes": 4e6, "out_bytes": 0}]})
    >>> heavy_edge_job(job, [2, 2])
    [[0, 0], [1, 1]]
    """
    graph = _prepared(job)
    flat = _heavy_edge(graph, free_gpus, None, seed, single_gpu_weight, server_start)
    assert graph.spans is not None
    return [flat[a:b] for a, b in graph.spans]


def fewest_servers(n_gpus: int, gpus_per_server: int) -> list[int]:
    """The fewest servers that hold ``n_gpus``: all full (g GPUs) but the last (g' <= g).

    References
    ----------
    Luo et al., A-SRPT paper, Sec. IV-B: alpha~_i^min maps the job onto "the fewest servers".

    Notes
    -----
    Guarantee: exact (the fewest servers of ``gpus_per_server`` GPUs that hold ``n_gpus``).

    Units: GPUs.

    Examples
    --------
    >>> fewest_servers(12, 8)
    [8, 4]
    """
    q = math.ceil(n_gpus / gpus_per_server)
    return [gpus_per_server] * (q - 1) + [n_gpus - (q - 1) * gpus_per_server]


def alpha_min_estimate(job: PipelineJob, cluster: Cluster, *, seed: int | None = None,
                       single_gpu_weight: str = "unassigned", server_start: str = "heaviest-pair") -> float:
    """alpha~_i^min (Sec. IV-B): the job on the fewest servers (all full but the last), mapped by
    Heavy-Edge (readings ``single_gpu_weight``, ``server_start``), timed by eq. (7).

    References
    ----------
    Luo et al., A-SRPT paper, Sec. IV-B (the estimate A-SRPT's virtual single machine uses) and
    eqs. (4)-(7) (per-iteration time of a placement).

    Notes
    -----
    Guarantee: none proven (an estimate: Heavy-Edge's mapping is not always the fastest).

    Units: seconds per iteration; the cluster's bandwidths in bytes per second.

    Examples
    --------
    The job of :func:`heavy_edge_job`'s example on 8-GPU servers (one server) and on 2-GPU
    servers (two, the stages' rings apart, their activations crossing the network):

    >>> from optkit.formulations.gpu_mapping import Cluster, PipelineJob
    >>> stage = {"fwd_time": 0.01, "bwd_time": 0.02, "param_bytes": 1e8}
    >>> job = PipelineJob.from_dict({"allreduce": "ring", "stages": [
    ...     {**stage, "replicas": 2, "in_bytes": 0, "out_bytes": 4e6},
    ...     {**stage, "replicas": 2, "in_bytes": 4e6, "out_bytes": 0}]})
    >>> round(alpha_min_estimate(job, Cluster(8, 1.25e9, 3e11)), 6)
    0.03036
    >>> round(alpha_min_estimate(job, Cluster(2, 1.25e9, 3e11)), 6)
    0.043133
    """
    servers = fewest_servers(job.n_replicas, cluster.gpus_per_server)
    assignment = heavy_edge_job(job, servers, seed=seed, single_gpu_weight=single_gpu_weight, server_start=server_start)
    return alpha_from_counts(job, cluster, stage_counts(job, assignment, len(servers)))
