"""Earlier Heavy-Edge implementations kept as test oracles: the pre-speedup one (commit 830bccd),
the oracle of tests/test_gpu_mapping_speed.py, and the one before the stage-structured job path
(commit 1ab4764), the oracle of tests/test_gpu_mapping_stage_path.py."""

from __future__ import annotations

import heapq
from typing import Sequence

import numpy as np

from optkit.formulations.gpu_mapping.heavy_edge import _Graph


def heavy_edge_reference(graph: _Graph, free_gpus: Sequence[int], rng: np.random.Generator | None,
                seed: int | None) -> list[int]:
    n = graph.n
    caps = [int(c) for c in free_gpus]
    if sum(caps) != n or any(c < 1 for c in caps):
        raise ValueError(f"free_gpus must be positive and add up to the {n} vertices, got {list(free_gpus)}")
    nbrs = graph.nbrs
    server_of = [-1] * n
    unassigned = set(range(n))
    # weight of each vertex's edges to unassigned vertices (case 2)
    w_unassigned = [sum(x for _, x in nbrs[v]) for v in range(n)]
    edge_ptr = 0
    sorted_edges = graph.sorted_edges

    def assign(v: int, m: int) -> None:
        server_of[v] = m
        unassigned.discard(v)
        for b, x in nbrs[v]:
            w_unassigned[b] -= x

    def random_vertex() -> int:
        nonlocal rng
        if rng is None:
            rng = np.random.default_rng(seed)
        pool = sorted(unassigned)
        return pool[int(rng.integers(len(pool)))]

    order = sorted(range(len(caps)), key=lambda m: (-caps[m], m))
    for m in order:
        c = caps[m]
        if len(unassigned) == c:  # case 1
            for v in sorted(unassigned):
                assign(v, m)
            continue
        if c == 1:  # case 2
            best = min(unassigned, key=lambda v: (w_unassigned[v], v))
            assign(best, m)
            continue
        size = 0
        heap: list[tuple[float, int]] = []  # (-weight of heaviest edge to node_set, vertex)
        while size < c:
            if size == 0:
                while edge_ptr < len(sorted_edges):
                    _, a, b = sorted_edges[edge_ptr]
                    if server_of[a] == -1 and server_of[b] == -1:
                        break
                    edge_ptr += 1
                if edge_ptr < len(sorted_edges):
                    _, a, b = sorted_edges[edge_ptr]
                    new = [a, b]
                else:
                    new = [random_vertex()]
            else:
                while heap and server_of[heap[0][1]] != -1:
                    heapq.heappop(heap)
                new = [heapq.heappop(heap)[1]] if heap else [random_vertex()]
            for v in new:
                assign(v, m)
                size += 1
                for b, x in nbrs[v]:
                    if server_of[b] == -1:
                        heapq.heappush(heap, (-x, b))
    return server_of


class GraphBeforeStages:
    """Today's (pre-stage-structure) _Graph, verbatim."""

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


def heavy_edge_before_stages(graph: GraphBeforeStages, free_gpus: Sequence[int], rng: np.random.Generator | None,
                seed: int | None, single_gpu_weight: str = "unassigned",
                server_start: str = "heaviest-pair") -> list[int]:
    """Heavy-Edge as it was before the stage-structured job path (2026-11-27, commit 1ab4764),
    verbatim but for the input checks: the oracle of tests/test_gpu_mapping_stage_path.py."""
    from_placed = server_start == "from-placed"
    n = graph.n
    caps = [int(c) for c in free_gpus]
    assert sum(caps) == n and min(caps) >= 1
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
