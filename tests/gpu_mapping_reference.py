"""The pre-speedup Heavy-Edge (commit 830bccd), kept as the oracle of tests/test_gpu_mapping_speed.py."""

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
