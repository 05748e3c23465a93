"""Earlier Heavy-Edge implementations kept as test oracles: the pre-speedup one (commit 830bccd),
the oracle of tests/test_gpu_mapping_speed.py; the one before the stage-structured job path
(commit 1ab4764), the oracle of tests/test_gpu_mapping_stage_path.py; and the one before that
path took tensor-parallel and MoE jobs and co-location (commit 1f3bf38), the oracle of
tests/test_gpu_mapping_llm_stage_path.py."""

from __future__ import annotations

import heapq
from typing import Any, Sequence

import numpy as np

from optkit.formulations.gpu_mapping.heavy_edge import _Colocation, _Graph, _OrderStats, check_colocate


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


def heavy_edge_before_llm_stages(graph: _Graph, free_gpus: Sequence[int], rng: np.random.Generator | None,
                seed: int | None, single_gpu_weight: str = "unassigned",
                server_start: str = "heaviest-pair", colocate: Sequence[Sequence[int]] | None = None) -> list[int]:
    """Heavy-Edge as it was before the stage-structured path for tensor-parallel and MoE jobs
    (2026-11-27, commit 1f3bf38), verbatim: the oracle of tests/test_gpu_mapping_llm_stage_path.py,
    run on the job's edge list (``_Graph`` from ``job.edges``, no blocks)."""
    from_placed = server_start == "from-placed"
    n = graph.n
    caps = [int(c) for c in free_gpus]
    assert sum(caps) == n and min(caps) >= 1
    units: _Colocation | None = None
    if colocate is not None:
        groups, where = check_colocate(colocate, n)
        if groups:
            assert graph.stage_of is None, "co-location runs on the edge-list graph"
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
        the unit of the vertex joined by the heaviest edge whose unit may go to server m."""
        nonlocal edge_ptr
        assert units is not None
        heap: list[tuple[Any, ...]] = []

        def put(v: int) -> None:
            group = units.unit(v)
            units.take(m, len(group))
            for u in group:
                assign(u, m)
            for u in group:
                for entry in entries[u]:
                    if server_of[entry[1]] == -1:
                        heappush(heap, entry)

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
            for j in range(edge_ptr, n_edges):  # the heaviest edge of two unassigned ends, one of which fits
                a, b = ends_a[j], ends_b[j]
                if server_of[a] == -1 and server_of[b] == -1:
                    if fits(a, m):
                        put(a)
                        started = True
                    if fits(b, m):
                        put(b)
                        started = True
                    if started:
                        break
            if not started:
                put(random_vertex(m))
        while units.cap[m] > 0:
            v = best(heap)
            while v != -1 and not fits(v, m):
                heappop(heap)  # this edge cannot bring its vertex to server m
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
