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

**Cost.** A pipeline job's graph joins every replica of stage s-1 to every replica of stage s
by edges of one weight (eq. 5's activations): ``k_{s-1} k_s`` edges, O(n^2) for n replicas,
while the ring or tree edges within stages are O(n). :func:`heavy_edge_job` keeps each such
complete bipartite set as one *block* and never lists its edges: the replicas of a stage are
interchangeable through a block, so "the heaviest edge from node_set to an unassigned vertex"
through a block is the block's weight to the *lowest* unassigned replica of the stage it
reaches (one heap entry per block, moved up the stage as replicas are placed), and "the
heaviest edge of two unassigned ends" through blocks is the heaviest block whose two stages
both keep an unassigned replica, at their lowest replicas (among equal weights, the earliest
stage: its pair has the lowest indices). Ties with explicit edges are broken by (weight,
vertex) exactly as on the edge list. Case 2's weights (sums over a vertex's edges, then minus
the edges to each vertex placed, in placement order) are computed in the same floating-point
order as on the edge list, a block's subtraction as one numpy slice. The result is the same
mapping as Heavy-Edge on the job's edge list (:func:`heavy_edge_arrays` on ``job.edges``), to
the last vertex (tests/test_gpu_mapping_stage_path.py); the time is O(n log n) plus case 2's
O(n) per one-GPU server (``benchmarks/growth.py``).

A job with tensor-parallel or MoE stages (Sec. VI; :func:`.model.job_edge_kinds`) has the same
shape: its pipeline edges join every slice / expert group of stage s-1 to every one of stage s
with one weight (a block), and its other edges (each slice position's data-parallel ring or
tree, each replica's tensor-parallel all-reduce and all-to-all token routing) lie within a stage,
O(n) of them for a bounded number of slices or groups per replica. So it runs on the stage
structure too, with or without co-location (below), with the same result as the edge list
(tests/test_gpu_mapping_llm_stage_path.py, against the edge-list implementation of commit
1f3bf38).

**Co-location** (``colocate``: groups of vertices that must each land on one server). A-SRPT
paper, Sec. VI: "represent tensor slices as vertices and AllReduce operations as weighted
edges. For communication efficiency, all tensor slices of a layer must reside within a single
server." The paper gives no procedure; this reading treats a group as one *unit* in the steps
above (a vertex outside every group is a unit of one):

* case 1 is unchanged (all remaining vertices go to the server);
* case 2 (a one-GPU server) chooses among the vertices outside groups only (no group fits);
* case 2c: node_set starts with the unit of the heaviest edge's first end, then the unit of its
  second end (each only if it *may* go to the server, below); when neither end's unit may, the
  next heaviest edge of two unassigned ends is tried. node_set then grows by the unit of the
  unassigned vertex joined to it by the heaviest edge among those whose unit may go to the
  server (an edge whose vertex's unit may not is passed over for this server); with no such
  edge, a uniformly random unassigned vertex among those whose unit may go (seeded), and its unit.
* A unit *may go* to server m when it fits the GPUs m has left and, afterwards, the groups not
  yet placed can still each be placed whole on the GPUs left (the vertices outside groups fill
  the rest exactly, the free GPUs adding up to the vertices). So the procedure never strands a
  group: every server is filled, every group on one server. When the group sizes divide one
  another (the tensor-parallel degrees 2, 4, 8, ...) this test is exact and takes O(sizes^2);
  otherwise a memoised search decides it (:func:`_fits`).
* Before it starts, an instance where some group is larger than every server, or where the
  groups cannot all be placed whole, is refused with an ``InputError`` naming ``colocate[i]``
  or ``colocate``.

With ``colocate=None`` (or groups of one vertex) nothing changes. Under co-location
:func:`heavy_edge_job` runs on the stage structure when every vertex of each stage is in a group
of one size (a vertex outside every group: size 1), as the job's own groups are (a
tensor-parallel replica's t slices, :func:`.model.colocation_groups`): whether a unit *may go*
to a server depends only on its size, so either every unassigned vertex of a block's stage may
go or none may, and the block stands for its edges exactly. Other groups (a stage mixing sizes)
run on the job's edge list. The scan for node_set's first edge passes over the edges of two
units that may not go, so its cost can reach the number of explicit edges per server where many
units may not go (free GPUs too few for a tensor-parallel replica); on whole free servers it is
O(1) per server.
"""

from __future__ import annotations

import gc
import heapq
import math
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Hashable, Iterator, Mapping, Sequence, TypeVar

import numpy as np

from optkit.errors import InputError
from optkit.readings import check_reading
from optkit.validation import check_seed, checked_arguments, integer

from .model import (
    PROBLEM, Cluster, PipelineJob, alpha_from_counts, alpha_of_assignment, colocation_groups, pipeline_weights,
    stage_counts, stage_edges,
)
from .readings import READINGS

if TYPE_CHECKING:  # heavy_edge takes a networkx graph; the array paths never import networkx
    import networkx as nx

__all__ = ["heavy_edge", "heavy_edge_arrays", "heavy_edge_job", "alpha_min_estimate", "fewest_servers",
           "check_colocate", "SINGLE_GPU_WEIGHTS", "SERVER_STARTS"]

N = TypeVar("N", bound=Hashable)
"""A vertex of the caller's graph: :func:`heavy_edge` answers with the graph's own vertices."""

SERVER_STARTS = ("heaviest-pair", "from-placed")
"""Readings of how a multi-GPU server's empty ``node_set`` starts (case 2c)."""
SINGLE_GPU_WEIGHTS = ("unassigned", "total")
"""Readings of case 2 (a one-GPU server): the vertex with the least weight of its edges to
unassigned vertices, or of all its edges."""


class _Graph:
    """A job graph in two parts: explicit edges (adjacency lists and a weight-sorted edge list),
    and, for a pipeline job, the **blocks**: consecutive stages s-1 and s joined by a complete
    bipartite set of edges of one weight ``block_w[s]`` (eq. 5's activations, ``2 d^out_{s-1}/k_s``
    per replica pair), kept as one entry each instead of ``k_{s-1} k_s`` edges. A graph from edge
    arrays has no blocks (``stage_of`` is None)."""

    __slots__ = ("n", "_nbrs", "sorted_edges", "ends_a", "ends_b", "heap_entries", "spans",
                 "stage_of", "stage_lo", "stage_hi", "blocks", "block_w", "_weight_sums")

    def __init__(self, n: int, u: Sequence[int], v: Sequence[int], w: Sequence[float]) -> None:
        self.n = n
        # per vertex, its neighbours as ready-made heap entries (-weight, neighbour), in edge order
        entries: list[list[tuple[float, int]]] = [[] for _ in range(n)]
        edges = []
        for a, b, x in zip(u, v, w):
            a, b, x = int(a), int(b), float(x)
            if x <= 0.0 or a == b:
                continue
            a, b = (a, b) if a < b else (b, a)
            x = -x
            entries[a].append((x, b))
            entries[b].append((x, a))
            edges.append((x, a, b))
        edges.sort()
        self.heap_entries = entries
        self._nbrs: list[list[tuple[int, float]]] | None = None
        self.sorted_edges = edges
        self.ends_a = [a for _, a, _ in edges]  # the sorted edges' ends, for the scan in case 2c
        self.ends_b = [b for _, _, b in edges]
        self.spans: list[tuple[int, int]] | None = None  # a job's stages as vertex ranges, set by _prepared
        self.stage_of: list[int] | None = None  # the stage structure, set by _stage_graph
        self.stage_lo: list[int] = []
        self.stage_hi: list[int] = []
        self.blocks: list[tuple[float, int]] = []  # (-block_w[s], s), sorted
        self.block_w: list[float] = []  # block_w[s]: edge weight between stages s-1 and s (0: none), 0 at both ends
        self._weight_sums: list[float] | None = None

    @property
    def nbrs(self) -> list[list[tuple[int, float]]]:
        """Per vertex, its explicit neighbours ``(neighbour, weight)`` in edge order (built when case
        2 first needs them)."""
        if self._nbrs is None:
            self._nbrs = [[(b, -x) for x, b in e] for e in self.heap_entries]
        return self._nbrs

    @property
    def weight_sums(self) -> list[float]:
        """Each vertex's total edge weight, summed in the order of its neighbours (the order case 2
        of the edge-list graph sums them in, so both paths compare the same floating-point
        numbers): for a pipeline job, the previous stage's block, the explicit edges by
        neighbour index, the next stage's block."""
        if self._weight_sums is None:
            if self.stage_of is None:
                self._weight_sums = [sum(x for _, x in self.nbrs[v]) for v in range(self.n)]
            else:
                self._weight_sums = self._stage_weight_sums()
        return self._weight_sums

    def _stage_weight_sums(self) -> list[float]:
        lo, hi, bw, nbrs = self.stage_lo, self.stage_hi, self.block_w, self.nbrs
        out: list[float] = [0.0] * self.n
        n_st = len(lo)
        for s in range(n_st):
            pre: float = 0
            if bw[s] > 0.0:
                for _ in range(hi[s - 1] - lo[s - 1]):  # added one by one, as a sum over the edges does
                    pre += bw[s]
            w_next = bw[s + 1]
            k_next = hi[s + 1] - lo[s + 1] if s + 1 < n_st else 0
            tails: dict[float, float] = {}
            for v in range(lo[s], hi[s]):
                val = pre
                for _, x in nbrs[v]:
                    val += x
                if w_next > 0.0:
                    head = val
                    if head not in tails:
                        for _ in range(k_next):
                            val += w_next
                        tails[head] = val
                    val = tails[head]
                out[v] = val
        return out


def _stage_graph(job: PipelineJob) -> _Graph:
    """The job graph of :func:`.model.job_edges` on the stage structure: the edges within each
    stage explicitly (:func:`.model.stage_edges`, every weight the same floating-point number: the ring
    or tree of its replicas; for a tensor-parallel or MoE stage (Sec. VI) the data-parallel ring or
    tree of each slice / group position, each replica's tensor-parallel all-reduce ring or tree,
    each replica's all-to-all token routing), the complete
    bipartite edges between consecutive stages as blocks (:func:`.model.job_edge_kinds`' ``pipeline``
    weight ``2 d^out_{s-1} / (u_{s-1} k_s u_s)``, which is the paper's ``2 d^out_{s-1} / k_s`` when
    every ``u = 1``). Edges of different kinds never join the same two vertices, so summing parallel
    edges (as :func:`.model.job_edges` does) changes no weight here."""
    st = job.stages
    off = [int(o) for o in job.offsets]
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for s, stage in enumerate(st):
        if stage.replicas * stage.units >= 2:
            u, v, w = stage_edges(job, s)
            parts.append((u + off[s], v + off[s], w))
    us = np.concatenate([p[0] for p in parts]).tolist() if parts else []
    vs = np.concatenate([p[1] for p in parts]).tolist() if parts else []
    ws = np.concatenate([p[2] for p in parts]).tolist() if parts else []
    g = _Graph(job.n_replicas, us, vs, ws)
    n_st = len(st)
    g.block_w = pipeline_weights(job) + [0.0]
    g.blocks = sorted((-g.block_w[s], s) for s in range(1, n_st) if g.block_w[s] > 0.0)
    g.stage_lo, g.stage_hi = off[:-1], off[1:]
    g.stage_of = [s for s in range(n_st) for _ in range(off[s], off[s + 1])]
    g.spans = list(zip(off[:-1], off[1:]))
    return g


_JOB_KEYS = frozenset(("allreduce", "stages", "two_replica_ring", "tp_allreduce_time"))
_STAGE_KEYS = frozenset(("replicas", "fwd_time", "bwd_time", "in_bytes", "out_bytes", "param_bytes",
                         "tensor_parallel", "tp_bytes", "experts", "expert_bytes", "routing", "routing_skew"))


def _prepared(job: PipelineJob, *, blocks: bool = True) -> _Graph:
    """The job's graph, cached on the (immutable) job: on the stage structure (:func:`_stage_graph`)
    when ``blocks`` and the job is a :class:`.model.PipelineJob` of the fields :func:`_stage_graph`
    reads (the paper's, and Sec. VI's tensor-parallel and MoE stages); otherwise from the job's edge
    arrays (``job.edges``)."""
    d = job.to_dict()
    known = (type(job) is PipelineJob and set(d) <= _JOB_KEYS and all(set(st) <= _STAGE_KEYS for st in d["stages"]))
    name = "_heavy_edge_graph" if blocks and known else "_heavy_edge_edge_graph"
    cache = job.__dict__.get(name)
    if cache is None:
        if blocks and known:
            cache = _stage_graph(job)
        else:
            u, v, w = job.edges
            cache = _Graph(job.n_replicas, u.tolist(), v.tolist(), w.tolist())
            off = [int(o) for o in job.offsets]
            cache.spans = list(zip(off[:-1], off[1:]))
        job.__dict__[name] = cache
    return cache


class _OrderStats:
    """The unassigned vertices in index order, for the seeded random pick (the i-th smallest in
    O(log n)): a Fenwick tree of 0/1 presence."""

    __slots__ = ("n", "tree", "count", "top")

    def __init__(self, present: list[bool]) -> None:
        n = self.n = len(present)
        tree = self.tree = [0] + [int(p) for p in present]
        for i in range(1, n + 1):
            j = i + (i & -i)
            if j <= n:
                tree[j] += tree[i]
        self.count = sum(present)
        self.top = 1 << (n.bit_length() - 1) if n else 0

    def remove(self, v: int) -> None:
        i, n, tree = v + 1, self.n, self.tree
        while i <= n:
            tree[i] -= 1
            i += i & -i
        self.count -= 1

    def kth(self, k: int) -> int:
        """The k-th (0-based) present vertex."""
        pos, rem, step, tree, n = 0, k + 1, self.top, self.tree, self.n
        while step:
            nxt = pos + step
            if nxt <= n and tree[nxt] < rem:
                pos = nxt
                rem -= tree[nxt]
            step >>= 1
        return pos


class _Colocation:
    """The ``colocate`` groups of at least two vertices, and the test that the groups left can still
    each go to one server (module docstring, "Co-location").

    The groups left fit when each can be packed whole into the GPUs left on the servers (the
    vertices outside groups then fill the rest exactly: the free GPUs add up to the vertices).
    When the group sizes divide one another (2, 4, 8, ...), the test is exact and O(sizes^2):
    the groups of size >= t occupy multiples of t GPUs, so they fit iff for every size t,
    ``sum_{t' >= t} n_t' t' <= t * sum_m floor(r_m / t)`` (placing the largest first, any server
    that fits keeps every smaller size's count of slots the same). Otherwise a memoised search
    over the servers' free counts decides it (exponential in the worst case)."""

    def __init__(self, groups: list[list[int]], where: list[int], n: int, caps: list[int]) -> None:
        self.unit_of = [-1] * n
        self.members = groups
        for i, g in enumerate(groups):
            for v in g:
                self.unit_of[v] = i
        largest = max(caps)
        for g, i in zip(groups, where):
            if len(g) > largest:
                raise InputError(f"colocate[{i}]", f"holds {len(g)} vertices, but the largest server has {largest} free "
                                                   f"GPUs (free_gpus): no server can hold the group", problem=PROBLEM)
        self.cap = list(caps)
        self.sizes = sorted({len(g) for g in groups})
        self.count = {t: 0 for t in self.sizes}
        for g in groups:
            self.count[len(g)] += 1
        self.chain = all(b % a == 0 for a, b in zip(self.sizes, self.sizes[1:]))
        self.slots = {t: sum(c // t for c in caps) for t in self.sizes}
        if not self.packable(-1, 0):
            raise InputError("colocate", f"groups of sizes {sorted((len(g) for g in groups), reverse=True)} cannot each be "
                                         f"placed whole on one server of free_gpus {caps}", problem=PROBLEM)

    def size(self, v: int) -> int:
        u = self.unit_of[v]
        return 1 if u < 0 else len(self.members[u])

    def unit(self, v: int) -> list[int]:
        u = self.unit_of[v]
        return [v] if u < 0 else self.members[u]

    def packable(self, m: int, size: int) -> bool:
        """Whether the groups left still fit after a unit of ``size`` vertices goes to server ``m``
        (``m = -1``: as things stand)."""
        r = self.cap[m] if m >= 0 else 0
        if size > r and m >= 0:
            return False
        if self.chain:
            cum = 0
            for t in reversed(self.sizes):
                cum += (self.count[t] - (t == size)) * t
                if cum > t * (self.slots[t] - r // t + (r - size) // t):
                    return False
            return True
        groups = sorted((t for t in self.sizes for _ in range(self.count[t] - (t == size))), reverse=True)
        hist = [0] * (max(self.cap) + 1)
        for i, c in enumerate(self.cap):
            hist[c - size if i == m else c] += 1
        return _fits(tuple(hist), tuple(groups))

    def take(self, m: int, size: int) -> None:
        r = self.cap[m]
        for t in self.sizes:
            self.slots[t] += (r - size) // t - r // t
        self.cap[m] = r - size
        if size >= 2:
            self.count[size] -= 1


def _fits(hist: tuple[int, ...], groups: tuple[int, ...]) -> bool:
    """Whether groups of the given sizes (decreasing) pack into servers whose free GPUs have the
    histogram ``hist``: a depth-first search, largest group first, over distinct free counts."""
    memo: dict[tuple[tuple[int, ...], int], bool] = {}

    def rec(h: tuple[int, ...], i: int) -> bool:
        if i == len(groups):
            return True
        key = (h, i)
        if key not in memo:
            t, ok = groups[i], False
            for c in range(t, len(h)):
                if h[c]:
                    nh = list(h)
                    nh[c] -= 1
                    nh[c - t] += 1
                    if rec(tuple(nh), i + 1):
                        ok = True
                        break
            memo[key] = ok
        return memo[key]

    return rec(hist, 0)


def check_colocate(colocate: Any, n: int) -> tuple[list[list[int]], list[int]]:
    """``colocate`` checked (sequences of distinct vertex indices 0..n-1, no vertex in two groups):
    the groups of at least two vertices, sorted, and their positions in ``colocate``."""
    if isinstance(colocate, (str, bytes, Mapping)) or not isinstance(colocate, (Sequence, np.ndarray)):
        raise InputError("colocate", f"must be a sequence of groups of vertex indices, got {type(colocate).__name__}",
                         problem=PROBLEM)
    seen: dict[int, int] = {}
    groups, where = [], []
    for i, g in enumerate(colocate):
        if isinstance(g, (str, bytes, Mapping)) or not isinstance(g, (Sequence, np.ndarray)):
            raise InputError(f"colocate[{i}]", f"must be a sequence of vertex indices, got {type(g).__name__}",
                             problem=PROBLEM)
        if len(g) == 0:
            raise InputError(f"colocate[{i}]", "must list at least one vertex", problem=PROBLEM)
        for j, v in enumerate(g):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or not 0 <= v < n:
                raise InputError(f"colocate[{i}][{j}]", f"must be a vertex 0..{n - 1}, got {v!r}", problem=PROBLEM)
            if int(v) in seen:
                raise InputError(f"colocate[{i}][{j}]", f"repeats vertex {int(v)}, already in colocate[{seen[int(v)]}]",
                                 problem=PROBLEM)
            seen[int(v)] = i
        if len(g) >= 2:
            groups.append(sorted(int(v) for v in g))
            where.append(i)
    return groups, where


def _heavy_edge(graph: _Graph, free_gpus: Sequence[int], rng: np.random.Generator | None,
                seed: int | None, single_gpu_weight: str = "unassigned",
                server_start: str = "heaviest-pair", colocate: Sequence[Sequence[int]] | None = None) -> list[int]:
    """The shared body of the public entries: checks ``seed``, the readings, ``free_gpus`` (each an
    integer >= 1, adding up to the vertices) and ``colocate`` once, with the CLI's messages."""
    if rng is None:
        seed = check_seed(seed, problem=PROBLEM)
    if single_gpu_weight not in SINGLE_GPU_WEIGHTS:
        check_reading(READINGS, "single_gpu_weight", single_gpu_weight, PROBLEM)
    if server_start not in SERVER_STARTS:
        check_reading(READINGS, "server_start", server_start, PROBLEM)
    from_placed = server_start == "from-placed"
    n = graph.n
    caps = _free_counts(free_gpus)
    if sum(caps) != n:
        raise InputError("free_gpus", f"must add up to the {n} vertices, got {list(free_gpus)} (sum {sum(caps)})",
                         problem=PROBLEM)
    units: _Colocation | None = None
    if colocate is not None:
        groups, where = check_colocate(colocate, n)
        if groups:
            units = _Colocation(groups, where, n, caps)
    nbrs = graph.nbrs
    server_of = [-1] * n
    n_left = n
    assigned_order: list[int] = []
    record = assigned_order.append
    edge_ptr = 0
    ends_a, ends_b = graph.ends_a, graph.ends_b
    sorted_edges = graph.sorted_edges
    n_edges = len(ends_a)
    entries = graph.heap_entries
    heappush, heappop, heapreplace = heapq.heappush, heapq.heappop, heapq.heapreplace
    # the stage structure: the lowest vertex of each stage not yet assigned (a pointer that only
    # moves up), the blocks by weight, and which block offers a heap already holds
    stage_of, block_w, blocks = graph.stage_of, graph.block_w, graph.blocks
    low, stage_hi = list(graph.stage_lo), graph.stage_hi
    n_blocks = len(blocks)
    block_ptr = 0
    # (-weight, unassigned vertex) of edges from placed vertices; (-weight, vertex, stage) for a block
    placed_heap: list[tuple[Any, ...]] = []
    placed_offers: set[int] = set()
    order_stats: _OrderStats | None = None  # built at the first random pick
    # case 2: the weights, each vertex's availability, brought up to date lazily (only case 2 reads them)
    weights: np.ndarray | None = None
    avail: np.ndarray | None = None
    w_done = 0

    def lowest(t: int) -> int:
        """The lowest unassigned vertex of stage t, or -1."""
        p, end = low[t], stage_hi[t]
        while p < end and server_of[p] != -1:
            p += 1
        low[t] = p
        return p if p < end else -1

    def offer(v: int, heap: list[tuple[Any, ...]], done: set[int]) -> None:
        """Push the blocks at v's stage as entries (-weight, lowest vertex, stage) of the stage
        they lead to (once per heap: the entry stands for all that stage's unassigned vertices)."""
        assert stage_of is not None  # called on a stage graph only
        s = stage_of[v]
        for t, x, key in ((s - 1, block_w[s], 2 * s - 1), (s + 1, block_w[s + 1], 2 * s + 2)):
            if x > 0.0 and key not in done:
                done.add(key)
                u = lowest(t)
                if u != -1:
                    heappush(heap, (-x, u, t))

    def best(heap: list[tuple[Any, ...]]) -> int:
        """The heap's unassigned vertex of the heaviest edge (lowest vertex on ties), or -1;
        entries of assigned vertices are dropped, block entries moved to their stage's lowest
        unassigned vertex."""
        while heap:
            e = heap[0]
            if server_of[e[1]] == -1:
                return e[1]
            if len(e) == 2:
                heappop(heap)
            else:
                u = lowest(e[2])
                if u == -1:
                    heappop(heap)
                else:
                    heapreplace(heap, (e[0], u, e[2]))
        return -1

    def assign(v: int, m: int) -> None:
        server_of[v] = m
        record(v)
        if order_stats is not None:
            order_stats.remove(v)
        if from_placed:  # reading server_start="from-placed": remember v's edges to unassigned vertices
            for entry in entries[v]:
                if server_of[entry[1]] == -1:
                    heappush(placed_heap, entry)
            if stage_of is not None:
                offer(v, placed_heap, placed_offers)

    def random_vertex(m: int) -> int:
        nonlocal rng, order_stats
        if rng is None:
            rng = np.random.default_rng(seed)
        if units is not None:  # among the vertices whose unit may go to server m
            ok = {t: units.packable(m, t) for t in {1, *units.sizes}}
            pool = [v for v in range(n) if server_of[v] == -1 and ok[units.size(v)]]
            return pool[int(rng.integers(len(pool)))]
        if order_stats is None:
            order_stats = _OrderStats([s == -1 for s in server_of])
        return order_stats.kth(int(rng.integers(order_stats.count)))

    def lightest() -> int:
        """Case 2: the available vertex of least weight (lowest index on ties)."""
        nonlocal weights, avail, w_done
        if weights is None:
            weights = np.array(graph.weight_sums, dtype=float)
            avail = np.ones(n, dtype=bool)  # no group is left by now under co-location: servers are
            # taken largest first, and a unit may go only where the groups left stay placeable
        assert avail is not None
        subtract = single_gpu_weight == "unassigned"
        for v in assigned_order[w_done:]:
            avail[v] = False
            if subtract:  # reading "unassigned": minus the edges to each vertex assigned, in order
                for b, x in nbrs[v]:
                    weights[b] -= x
                if stage_of is not None:
                    s = stage_of[v]
                    if block_w[s] > 0.0:
                        weights[graph.stage_lo[s - 1]:stage_hi[s - 1]] -= block_w[s]
                    if block_w[s + 1] > 0.0:
                        weights[graph.stage_lo[s + 1]:stage_hi[s + 1]] -= block_w[s + 1]
        w_done = len(assigned_order)
        return int(np.argmin(np.where(avail, weights, np.inf)))

    def fits(v: int, m: int) -> bool:
        assert units is not None
        return server_of[v] == -1 and units.packable(m, units.size(v))

    def fill_colocated(m: int, c: int) -> None:
        """Case 2c under co-location (module docstring): node_set grows by whole units, each
        the unit of the vertex joined by the heaviest edge whose unit may go to server m. On a
        stage graph every vertex of a stage is in a unit of one size (:func:`heavy_edge_job`), so
        a block's vertices may all go to m or none may: a block entry whose vertex may not is
        dropped, as its edges would be, for good: a unit that may not go to m never may later
        (were it placeable after some units join m, it was placeable beside them before), so the
        edges to its stage that later vertices of node_set would push are passed over too."""
        nonlocal edge_ptr, block_ptr
        assert units is not None
        heap: list[tuple[Any, ...]] = []
        offered: set[int] = set()

        def put(v: int) -> None:
            group = units.unit(v)
            units.take(m, len(group))
            for u in group:
                assign(u, m)
            for u in group:
                for entry in entries[u]:
                    if server_of[entry[1]] == -1:
                        heappush(heap, entry)
                if stage_of is not None:
                    offer(u, heap, offered)

        started = False
        if from_placed:
            stash = []
            while (v := best(placed_heap)) != -1:
                if fits(v, m):
                    put(v)
                    started = True
                    break
                stash.append(heappop(placed_heap))  # kept for the later servers
            for entry in stash:
                heappush(placed_heap, entry)
        if not started:
            while edge_ptr < n_edges and (server_of[ends_a[edge_ptr]] != -1 or server_of[ends_b[edge_ptr]] != -1):
                edge_ptr += 1
            pick: tuple[Any, ...] | None = None
            for j in range(edge_ptr, n_edges):  # the heaviest edge of two unassigned ends, one of which fits
                a, b = ends_a[j], ends_b[j]
                if server_of[a] == -1 and server_of[b] == -1 and (fits(a, m) or fits(b, m)):
                    pick = sorted_edges[j]
                    break
            if stage_of is not None:  # the heaviest such block, at its stages' lowest unassigned vertices
                while block_ptr < n_blocks and (lowest(blocks[block_ptr][1] - 1) == -1
                                                or lowest(blocks[block_ptr][1]) == -1):
                    block_ptr += 1
                for i in range(block_ptr, n_blocks):
                    x, s = blocks[i]
                    a, b = lowest(s - 1), lowest(s)
                    if a != -1 and b != -1 and (fits(a, m) or fits(b, m)):
                        if pick is None or (x, a, b) < pick:  # never equal: a block is no explicit edge
                            pick = (x, a, b)
                        break
            if pick is not None:  # each end's unit, if it may go (the second judged after the first went)
                if fits(pick[1], m):
                    put(pick[1])
                if fits(pick[2], m):
                    put(pick[2])
            else:
                put(random_vertex(m))
        while units.cap[m] > 0:
            v = best(heap)
            while v != -1 and not fits(v, m):
                heappop(heap)  # this edge (or block) cannot bring its vertex (its stage's) to server m
                v = best(heap)
            put(v if v != -1 else random_vertex(m))

    # servers by free GPUs, descending, ties by index (a stable sort keeps index order in reverse too)
    for m in sorted(range(len(caps)), key=caps.__getitem__, reverse=True):
        c = caps[m]
        if n_left == c:  # case 1
            for v in range(n):
                if server_of[v] == -1:
                    assign(v, m)
            n_left = 0
            continue
        if c == 1:  # case 2
            v = lightest()
            assign(v, m)
            if units is not None:
                units.take(m, 1)
            n_left -= 1
            continue
        if units is not None:
            fill_colocated(m, c)
            n_left -= c
            continue
        # case 2c: start node_set (heaviest pair, or reading from-placed), then grow it by the
        # heaviest edge from it; a server of c >= 2 GPUs gets exactly c vertices
        heap: list[tuple[Any, ...]] = []  # (-weight of heaviest edge to node_set, vertex[, stage])
        offered: set[int] = set()
        start: tuple[int, ...] | None = None
        if from_placed:
            v = best(placed_heap)
            if v != -1:
                start = (v,)
        if start is None:
            while edge_ptr < n_edges and (server_of[ends_a[edge_ptr]] != -1 or server_of[ends_b[edge_ptr]] != -1):
                edge_ptr += 1
            pick = sorted_edges[edge_ptr] if edge_ptr < n_edges else None
            while block_ptr < n_blocks:  # the heaviest block with both stages unassigned (the lowest stage on ties)
                s = blocks[block_ptr][1]
                a, b = lowest(s - 1), lowest(s)
                if a != -1 and b != -1:
                    if pick is None or (blocks[block_ptr][0], a, b) < pick:  # never equal: a block is no explicit edge
                        pick = (blocks[block_ptr][0], a, b)
                    break
                block_ptr += 1
            start = (pick[1], pick[2]) if pick is not None else (random_vertex(m),)
        n_start = len(start)
        last = c - 1
        for i in range(c):
            if i < n_start:  # the start's vertices first, in order
                v = start[i]
            else:
                v = best(heap)
                if v == -1:
                    v = random_vertex(m)
            assign(v, m)
            if i == last:  # the server is full: its last vertex's edges choose nothing more
                break
            for entry in entries[v]:
                if server_of[entry[1]] == -1:
                    heappush(heap, entry)
            if stage_of is not None:
                offer(v, heap, offered)
        n_left -= c
    return server_of


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a graph is built and walked: both allocate
    O(n) small tuples and lists and no reference cycles, and the collector's passes over them
    grew the time faster than n (measured at 16,384 replicas: about half the graph's build). The
    collector's state is restored on the way out."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _free_counts(free_gpus: Any) -> list[int]:
    """``free_gpus`` as a list of integers >= 1 (a number of GPUs is whole: 2.5 is refused,
    never truncated to 2)."""
    if isinstance(free_gpus, (str, bytes, Mapping)) or not isinstance(free_gpus, (Sequence, np.ndarray)):
        raise InputError("free_gpus", f"must be a sequence of free GPU counts (integers >= 1), got "
                                      f"{type(free_gpus).__name__}", problem=PROBLEM)
    out = []
    for i, c in enumerate(free_gpus):
        try:
            out.append(integer(c.item() if isinstance(c, np.generic) else c, f"free_gpus[{i}]", low=1))
        except InputError as err:
            raise err.with_problem(PROBLEM) from None
    return out


def _check_edges(n: Any, u: Sequence[int], v: Sequence[int], w: Sequence[float]) -> int:
    """The checks of :func:`heavy_edge_arrays`' graph: ``n`` an integer >= 0; ``u``, ``v``, ``w``
    of one length; ends integers in ``0..n-1``; weights finite and >= 0."""
    try:
        n = integer(n, "n", low=0)
    except InputError as err:
        raise err.with_problem(PROBLEM) from None
    if not (len(u) == len(v) == len(w)):
        raise InputError("u", f"u, v and w must have one entry per edge, got lengths {len(u)}, {len(v)} and {len(w)}",
                         problem=PROBLEM)
    for name, ends in (("u", u), ("v", v)):
        for i, a in enumerate(ends):
            if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or not 0 <= a < n:
                raise InputError(f"{name}[{i}]", f"must be a vertex 0..{n - 1}, got {a!r}", problem=PROBLEM)
    for i, x in enumerate(w):
        if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)) or not (
                math.isfinite(x) and x >= 0):
            raise InputError(f"w[{i}]", f"must be a finite number >= 0 (bytes per iteration), got {x!r}",
                             problem=PROBLEM)
    return n


@checked_arguments(PROBLEM)
def heavy_edge_arrays(n: int, u: Sequence[int], v: Sequence[int], w: Sequence[float],
                      free_gpus: Sequence[int], *, seed: int | None = None,
                      single_gpu_weight: str = "unassigned", server_start: str = "heaviest-pair",
                      colocate: Sequence[Sequence[int]] | None = None) -> list[int]:
    """Heavy-Edge on a graph given as edge arrays over vertices ``0..n-1``.

    Returns the index (into ``free_gpus``) of the server each vertex goes to; server m gets
    exactly ``free_gpus[m]`` vertices. Parallel edges are kept as separate candidates with
    their own weights; sum them first for the job graph's convention. ``single_gpu_weight`` and
    ``server_start``: the readings of cases 2b and 2c (module docstring). ``colocate``: groups of
    vertex indices that must each land on one server (module docstring, "Co-location"); None
    (default) or groups of one vertex leave the procedure as it was.

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
    n = _check_edges(n, u, v, w)
    with _collector_paused():
        return _heavy_edge(_Graph(n, u, v, w), free_gpus, None, seed, single_gpu_weight, server_start, colocate)


@checked_arguments(PROBLEM)
def heavy_edge(graph: nx.Graph[N], free_gpus: Sequence[int], *, seed: int | None = None,
               weight: str = "weight", single_gpu_weight: str = "unassigned",
               server_start: str = "heaviest-pair", colocate: Sequence[Sequence[N]] | None = None) -> dict[N, int]:
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
    colocate
        Groups of the graph's vertices that must each land on one server (module docstring,
        "Co-location"; e.g. the tensor slices of one replica's layer, A-SRPT paper Sec. VI).
        None (default): no constraint.

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
    if not (hasattr(graph, "nodes") and hasattr(graph, "edges")):
        raise InputError("graph", f"must be a networkx graph, got {type(graph).__name__}", problem=PROBLEM)
    nodes = list(graph.nodes)
    index = {x: i for i, x in enumerate(nodes)}
    u, v, w = [], [], []
    for a, b, data in graph.edges(data=True):
        u.append(index[a])
        v.append(index[b])
        w.append(data.get(weight, 1.0))
    _check_edges(len(nodes), u, v, w)
    groups = None
    if colocate is not None:
        if isinstance(colocate, (str, bytes, Mapping)) or not isinstance(colocate, Sequence):
            raise InputError("colocate", f"must be a sequence of groups of the graph's vertices, got "
                                         f"{type(colocate).__name__}", problem=PROBLEM)
        groups = []
        for i, g in enumerate(colocate):
            if isinstance(g, (str, bytes, Mapping)) or not isinstance(g, Sequence):
                raise InputError(f"colocate[{i}]", f"must be a sequence of the graph's vertices, got {type(g).__name__}",
                                 problem=PROBLEM)
            for j, x in enumerate(g):
                if not isinstance(x, Hashable) or x not in index:
                    raise InputError(f"colocate[{i}][{j}]", f"is not a vertex of graph: {x!r}", problem=PROBLEM)
            groups.append([index[x] for x in g])
    servers = heavy_edge_arrays(len(nodes), u, v, w, free_gpus, seed=seed, single_gpu_weight=single_gpu_weight,
                                server_start=server_start, colocate=groups)
    return {x: servers[i] for i, x in enumerate(nodes)}


@checked_arguments(PROBLEM)
def heavy_edge_job(job: PipelineJob, free_gpus: Sequence[int], *, seed: int | None = None,
                   single_gpu_weight: str = "unassigned", server_start: str = "heaviest-pair",
                   colocate: Sequence[Sequence[int]] | None = None) -> list[list[int]]:
    """Heavy-Edge on ``job``'s graph; returns the solution's ``assignment`` (per stage, the
    server index of each replica). Takes the readings ``single_gpu_weight`` (case 2b of the
    module docstring; default ``"unassigned"``) and ``server_start`` (case 2c; default
    ``"heaviest-pair"``). ``colocate``: groups of vertex indices (vertex ``offsets[s] + r`` is
    replica r of stage s) that must each land on one server (module docstring, "Co-location").

    Runs on the stage structure (module docstring, "Cost"): O(n log n) for n replicas, not the
    O(n^2) of the job graph's edges, with the same result as :func:`heavy_edge_arrays` on
    ``job.edges``. With ``colocate``, on the job's edges.

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
    if not isinstance(job, PipelineJob):
        raise InputError("job", f"must be a PipelineJob (PipelineJob.from_dict builds one), got {type(job).__name__}",
                         problem=PROBLEM)
    with _collector_paused():
        graph = _prepared(job, blocks=colocate is None or _uniform_per_stage(job, colocate))
        flat = _heavy_edge(graph, free_gpus, None, seed, single_gpu_weight, server_start, colocate)
    assert graph.spans is not None
    return [flat[a:b] for a, b in graph.spans]


def _uniform_per_stage(job: PipelineJob, colocate: Any) -> bool:
    """Whether every vertex of each stage of ``job`` is in a ``colocate`` group of one size (a
    vertex outside every group: size 1), the condition under which co-location runs on the stage
    structure (a block's vertices are then interchangeable for "may go to this server": module
    docstring, "Cost"). The job's own groups (:func:`.model.colocation_groups`: a tensor-parallel
    replica's t slices) always are. False for anything :func:`check_colocate` refuses, so that
    :func:`_heavy_edge` reports it."""
    n = job.n_replicas
    try:
        groups, _ = check_colocate(colocate, n)
    except InputError:
        return False
    size = [1] * n
    for g in groups:
        for v in g:
            size[v] = len(g)
    return all(len(set(size[a:b])) <= 1 for a, b in zip(job.offsets[:-1].tolist(), job.offsets[1:].tolist()))


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
    try:
        n_gpus = integer(n_gpus, "n_gpus", low=1)
        gpus_per_server = integer(gpus_per_server, "gpus_per_server", low=1)
    except InputError as err:
        raise err.with_problem(PROBLEM) from None
    q = math.ceil(n_gpus / gpus_per_server)
    return [gpus_per_server] * (q - 1) + [n_gpus - (q - 1) * gpus_per_server]


@checked_arguments(PROBLEM)
def alpha_min_estimate(job: PipelineJob, cluster: Cluster, *, seed: int | None = None,
                       single_gpu_weight: str = "unassigned", server_start: str = "heaviest-pair") -> float:
    """alpha~_i^min (Sec. IV-B): the job on the fewest servers (all full but the last), mapped by
    Heavy-Edge (readings ``single_gpu_weight``, ``server_start``), timed by eq. (7). A job with
    tensor-parallel or MoE stages (Sec. VI): Heavy-Edge with ``colocate`` = each tensor-parallel
    replica's slices (:func:`.model.colocation_groups`), timed by eq. (7) extended
    (:func:`.model.alpha_of_assignment`).

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
    if not isinstance(cluster, Cluster):
        raise InputError("cluster", f"must be a gpu-mapping Cluster, got {type(cluster).__name__}", problem=PROBLEM)
    servers = fewest_servers(job.n_replicas, cluster.gpus_per_server)
    if not job.is_plain:  # Sec. VI: each tensor-parallel replica's slices on one server; eq. (7) extended
        groups = colocation_groups(job)
        assignment = heavy_edge_job(job, servers, seed=seed, single_gpu_weight=single_gpu_weight,
                                    server_start=server_start, colocate=groups or None)
        return alpha_of_assignment(job, cluster, assignment)
    assignment = heavy_edge_job(job, servers, seed=seed, single_gpu_weight=single_gpu_weight, server_start=server_start)
    return alpha_from_counts(job, cluster, stage_counts(job, assignment, len(servers)))
