"""Tree-stage partition tables too large to enumerate, computed once and shipped.

For a tree stage of k replicas (NCCL's double binary tree, :func:`.model.double_binary_tree_edges`),
``TABLES[(k, largest)][P] = (T_k(P), arrangement)``: for every partition P of the k replicas into
blocks of at most ``largest`` (parts in non-increasing order), the least number of tree edge
units (an edge of both trees counted twice) between different blocks, and an arrangement
attaining it (block index per replica, blocks numbered in P's order), as
:func:`.columns.tree_table` would give by enumeration, which is out of reach here (k = 16:
more than 10^10 arrangements).

* k = 16, parts up to 8 (186 partitions): each entry solved to proven optimality by
  :func:`exact_partition_cost` (CP-SAT, about 230 s on a loaded 2-core machine, 2026-11-25);
  :func:`partition_costs_by_dp` gives the same 186 values in 0.13 s (a test checks it).
* k = 32, parts up to 8 (3,319 partitions, :mod:`.tree_table_k32`): by the exact dynamic
  programme along the ranks :func:`partition_costs_by_dp` (``python -m
  optkit.formulations.gpu_mapping.tree_tables 32 8 formulations/gpu_mapping/tree_table_k32.py``
  regenerates it: 51 s and 0.9 GB on a loaded 2-core machine, 2026-11-25, under a 30-minute
  limit). CP-SAT's model proves no single k = 32 partition within 30 s.

``tests/test_gpu_mapping_columns.py`` re-checks every shipped arrangement's cut, the dynamic
programme against enumeration (k <= 10) and the CP-SAT table (k = 16), and k = 32 entries
against an independent exact method (the matching of :func:`.columns.tree_table_by_matching`).
"""

from __future__ import annotations

import sys
from typing import Sequence

from .model import double_binary_tree_edges

__all__ = ["TABLES", "exact_partition_cost", "merged_tree_edges", "partition_costs_by_dp"]


def merged_tree_edges(k: int) -> dict[tuple[int, int], int]:
    """The double binary tree of k replicas as ``{(a, b): units}`` with a < b: 2 for an edge of
    both trees, else 1."""
    mult: dict[tuple[int, int], int] = {}
    for a, b in double_binary_tree_edges(k):
        key = (min(a, b), max(a, b))
        mult[key] = mult.get(key, 0) + 1
    return mult


def exact_partition_cost(k: int, sizes: Sequence[int], *, time_limit: float = 60.0,
                         seed: int = 0) -> tuple[int, tuple[int, ...], bool]:
    """``(T, arrangement, proven)``: the least number of double-binary-tree edge units of a tree
    stage of k replicas cut by a partition into blocks of ``sizes``, an arrangement attaining the
    value found, and whether CP-SAT proved it least within ``time_limit`` seconds. The model: one
    Boolean per (replica, block), each replica in one block, each block its size, one Boolean per
    (edge, block) kept inside the block (at most both ends' Booleans); maximise the kept units."""
    from ortools.sat.python import cp_model

    mult = merged_tree_edges(k)
    md = cp_model.CpModel()
    blocks = range(len(sizes))
    x = {(r, j): md.NewBoolVar(f"x[{r},{j}]") for r in range(k) for j in blocks}
    for r in range(k):
        md.AddExactlyOne(x[r, j] for j in blocks)
    for j in blocks:
        md.Add(sum(x[r, j] for r in range(k)) == sizes[j])
    kept = []
    for (a, b), w in mult.items():
        for j in blocks:
            if sizes[j] >= 2:
                y = md.NewBoolVar(f"y[{a},{b},{j}]")
                md.AddImplication(y, x[a, j])
                md.AddImplication(y, x[b, j])
                kept.append(w * y)
    md.Maximize(sum(kept))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
    solver.parameters.max_time_in_seconds = time_limit
    status = solver.Solve(md)
    arrangement = tuple(next(j for j in blocks if solver.Value(x[r, j])) for r in range(k))
    inside = sum(w for (a, b), w in mult.items() if arrangement[a] == arrangement[b])
    return 2 * (k - 1) - inside, arrangement, status == cp_model.OPTIMAL


TABLES: dict[tuple[int, int], dict[tuple[int, ...], tuple[int, tuple[int, ...]]]] = {
    (16, 8): {
        (8, 8): (4, (0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1)),
        (8, 7, 1): (5, (2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0)),
        (8, 6, 2): (6, (0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 1, 1, 1, 1, 1, 2)),
        (8, 6, 1, 1): (7, (2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 3)),
        (8, 5, 3): (7, (1, 1, 1, 1, 2, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0)),
        (8, 5, 2, 1): (8, (3, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 0)),
        (8, 5, 1, 1, 1): (10, (2, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4)),
        (8, 4, 4): (7, (1, 1, 1, 1, 2, 2, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0)),
        (8, 4, 3, 1): (8, (3, 2, 2, 2, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0)),
        (8, 4, 2, 2): (9, (3, 0, 0, 0, 0, 0, 0, 0, 3, 1, 1, 1, 1, 2, 2, 0)),
        (8, 4, 2, 1, 1): (10, (3, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 4, 1, 1, 1, 1)),
        (8, 4, 1, 1, 1, 1): (12, (2, 0, 0, 0, 0, 0, 0, 0, 3, 5, 4, 0, 1, 1, 1, 1)),
        (8, 3, 3, 2): (8, (0, 0, 0, 0, 0, 0, 0, 3, 0, 1, 1, 1, 2, 2, 2, 3)),
        (8, 3, 3, 1, 1): (9, (3, 2, 2, 2, 1, 1, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0)),
        (8, 3, 2, 2, 1): (10, (0, 2, 2, 4, 1, 1, 1, 3, 0, 0, 0, 0, 0, 0, 0, 3)),
        (8, 3, 2, 1, 1, 1): (11, (3, 0, 0, 0, 0, 0, 0, 0, 4, 1, 1, 1, 5, 2, 2, 0)),
        (8, 3, 1, 1, 1, 1, 1): (13, (0, 0, 0, 0, 0, 0, 0, 6, 0, 1, 1, 1, 2, 5, 4, 3)),
        (8, 2, 2, 2, 2): (12, (0, 0, 0, 0, 0, 0, 0, 0, 4, 2, 2, 3, 4, 1, 1, 3)),
        (8, 2, 2, 2, 1, 1): (12, (4, 2, 2, 5, 0, 3, 3, 1, 0, 0, 0, 0, 0, 0, 0, 1)),
        (8, 2, 2, 1, 1, 1, 1): (13, (3, 1, 1, 4, 5, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 6)),
        (8, 2, 1, 1, 1, 1, 1, 1): (15, (0, 0, 0, 0, 0, 0, 0, 0, 7, 1, 1, 4, 3, 2, 5, 6)),
        (8, 1, 1, 1, 1, 1, 1, 1, 1): (17, (0, 6, 5, 8, 4, 2, 1, 3, 0, 0, 0, 0, 0, 0, 0, 7)),
        (7, 7, 2): (6, (2, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 2)),
        (7, 7, 1, 1): (6, (2, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 3)),
        (7, 6, 3): (7, (1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2)),
        (7, 6, 2, 1): (7, (3, 1, 1, 1, 1, 1, 1, 2, 0, 0, 0, 0, 0, 0, 0, 2)),
        (7, 6, 1, 1, 1): (8, (2, 0, 0, 0, 0, 0, 0, 0, 3, 1, 1, 1, 1, 1, 1, 4)),
        (7, 5, 4): (7, (2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1)),
        (7, 5, 3, 1): (8, (3, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2)),
        (7, 5, 2, 2): (9, (3, 2, 2, 1, 1, 1, 1, 1, 3, 0, 0, 0, 0, 0, 0, 0)),
        (7, 5, 2, 1, 1): (9, (3, 2, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 4)),
        (7, 5, 1, 1, 1, 1): (11, (2, 4, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 5)),
        (7, 4, 4, 1): (8, (3, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 1, 1, 1, 1)),
        (7, 4, 3, 2): (8, (3, 0, 0, 0, 0, 0, 0, 0, 3, 2, 2, 2, 1, 1, 1, 1)),
        (7, 4, 3, 1, 1): (9, (3, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 4)),
        (7, 4, 2, 2, 1): (10, (4, 3, 3, 1, 1, 1, 1, 2, 0, 0, 0, 0, 0, 0, 0, 2)),
        (7, 4, 2, 1, 1, 1): (11, (3, 1, 1, 1, 4, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 5)),
        (7, 4, 1, 1, 1, 1, 1): (13, (1, 1, 1, 1, 2, 3, 4, 6, 0, 0, 0, 0, 0, 0, 0, 5)),
        (7, 3, 3, 3): (9, (3, 2, 2, 2, 1, 1, 1, 3, 0, 0, 0, 0, 0, 0, 0, 3)),
        (7, 3, 3, 2, 1): (9, (4, 1, 1, 1, 2, 2, 2, 3, 0, 0, 0, 0, 0, 0, 0, 3)),
        (7, 3, 3, 1, 1, 1): (10, (3, 0, 0, 0, 0, 0, 0, 0, 5, 1, 1, 1, 2, 2, 2, 4)),
        (7, 3, 2, 2, 2): (11, (3, 0, 0, 0, 0, 0, 0, 0, 3, 2, 2, 4, 1, 1, 1, 4)),
        (7, 3, 2, 2, 1, 1): (11, (4, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1, 1, 2, 3, 3, 5)),
        (7, 3, 2, 1, 1, 1, 1): (12, (3, 2, 2, 5, 1, 1, 1, 4, 0, 0, 0, 0, 0, 0, 0, 6)),
        (7, 3, 1, 1, 1, 1, 1, 1): (14, (7, 5, 3, 2, 1, 1, 1, 6, 0, 0, 0, 0, 0, 0, 0, 4)),
        (7, 2, 2, 2, 2, 1): (13, (4, 2, 2, 1, 5, 3, 3, 1, 0, 0, 0, 0, 0, 0, 0, 4)),
        (7, 2, 2, 2, 1, 1, 1): (13, (4, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1, 6, 2, 3, 3, 5)),
        (7, 2, 2, 1, 1, 1, 1, 1): (14, (7, 0, 0, 0, 0, 0, 0, 0, 6, 1, 1, 5, 3, 2, 2, 4)),
        (7, 2, 1, 1, 1, 1, 1, 1, 1): (16, (8, 0, 0, 0, 0, 0, 0, 0, 6, 1, 1, 3, 2, 4, 7, 5)),
        (7, 1, 1, 1, 1, 1, 1, 1, 1, 1): (18, (9, 0, 0, 0, 0, 0, 0, 0, 2, 3, 5, 7, 1, 4, 8, 6)),
        (6, 6, 4): (8, (2, 2, 2, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1)),
        (6, 6, 3, 1): (9, (3, 0, 0, 0, 0, 0, 0, 1, 1, 2, 2, 2, 1, 1, 1, 1)),
        (6, 6, 2, 2): (8, (2, 1, 1, 1, 1, 1, 1, 3, 2, 0, 0, 0, 0, 0, 0, 3)),
        (6, 6, 2, 1, 1): (9, (3, 1, 1, 1, 1, 1, 1, 2, 4, 0, 0, 0, 0, 0, 0, 2)),
        (6, 6, 1, 1, 1, 1): (10, (2, 0, 0, 0, 0, 0, 0, 3, 4, 1, 1, 1, 1, 1, 1, 5)),
        (6, 5, 5): (8, (2, 1, 1, 1, 2, 2, 2, 1, 2, 0, 0, 0, 0, 0, 0, 1)),
        (6, 5, 4, 1): (9, (3, 0, 0, 0, 0, 0, 0, 1, 2, 1, 1, 1, 2, 2, 2, 1)),
        (6, 5, 3, 2): (9, (1, 2, 2, 2, 1, 1, 1, 3, 1, 0, 0, 0, 0, 0, 0, 3)),
        (6, 5, 3, 1, 1): (10, (3, 2, 2, 2, 1, 1, 1, 1, 4, 0, 0, 0, 0, 0, 0, 1)),
        (6, 5, 2, 2, 1): (10, (4, 0, 0, 0, 0, 0, 0, 2, 1, 1, 1, 1, 1, 3, 3, 2)),
        (6, 5, 2, 1, 1, 1): (11, (3, 0, 0, 0, 0, 0, 0, 4, 1, 1, 1, 1, 1, 2, 2, 5)),
        (6, 5, 1, 1, 1, 1, 1): (13, (6, 2, 1, 1, 1, 1, 1, 5, 4, 0, 0, 0, 0, 0, 0, 3)),
        (6, 4, 4, 2): (9, (1, 1, 1, 1, 2, 2, 2, 3, 2, 0, 0, 0, 0, 0, 0, 3)),
        (6, 4, 4, 1, 1): (10, (3, 0, 0, 0, 0, 0, 0, 1, 2, 1, 1, 1, 2, 2, 2, 4)),
        (6, 4, 3, 3): (10, (0, 1, 1, 1, 3, 3, 3, 1, 0, 2, 2, 2, 0, 0, 0, 0)),
        (6, 4, 3, 2, 1): (10, (4, 0, 0, 0, 0, 0, 0, 3, 1, 1, 1, 1, 2, 2, 2, 3)),
        (6, 4, 3, 1, 1, 1): (11, (3, 0, 0, 0, 0, 0, 0, 5, 1, 2, 2, 2, 1, 1, 1, 4)),
        (6, 4, 2, 2, 2): (11, (2, 0, 0, 0, 0, 0, 0, 4, 2, 3, 3, 4, 1, 1, 1, 1)),
        (6, 4, 2, 2, 1, 1): (12, (4, 2, 2, 3, 1, 1, 1, 3, 1, 0, 0, 0, 0, 0, 0, 5)),
        (6, 4, 2, 1, 1, 1, 1): (13, (3, 1, 1, 1, 1, 2, 2, 5, 4, 0, 0, 0, 0, 0, 0, 6)),
        (6, 4, 1, 1, 1, 1, 1, 1): (15, (1, 1, 1, 1, 4, 3, 5, 6, 2, 0, 0, 0, 0, 0, 0, 7)),
        (6, 3, 3, 3, 1): (11, (3, 0, 0, 0, 0, 0, 0, 4, 3, 2, 2, 2, 3, 1, 1, 1)),
        (6, 3, 3, 2, 2): (10, (3, 0, 0, 0, 0, 0, 0, 4, 3, 1, 1, 1, 2, 2, 2, 4)),
        (6, 3, 3, 2, 1, 1): (11, (4, 2, 2, 2, 1, 1, 1, 3, 5, 0, 0, 0, 0, 0, 0, 3)),
        (6, 3, 3, 1, 1, 1, 1): (12, (3, 1, 1, 1, 2, 2, 2, 5, 4, 0, 0, 0, 0, 0, 0, 6)),
        (6, 3, 2, 2, 2, 1): (12, (4, 2, 2, 5, 1, 1, 1, 3, 4, 0, 0, 0, 0, 0, 0, 3)),
        (6, 3, 2, 2, 1, 1, 1): (13, (4, 1, 1, 1, 5, 2, 2, 3, 6, 0, 0, 0, 0, 0, 0, 3)),
        (6, 3, 2, 1, 1, 1, 1, 1): (14, (7, 0, 0, 0, 0, 0, 0, 6, 3, 2, 2, 4, 1, 1, 1, 5)),
        (6, 3, 1, 1, 1, 1, 1, 1, 1): (16, (8, 0, 0, 0, 0, 0, 0, 7, 3, 1, 1, 1, 4, 2, 6, 5)),
        (6, 2, 2, 2, 2, 2): (14, (4, 0, 0, 0, 0, 0, 0, 5, 3, 1, 1, 4, 3, 2, 2, 5)),
        (6, 2, 2, 2, 2, 1, 1): (14, (5, 2, 2, 6, 4, 3, 3, 1, 4, 0, 0, 0, 0, 0, 0, 1)),
        (6, 2, 2, 2, 1, 1, 1, 1): (15, (4, 1, 1, 6, 7, 2, 2, 3, 5, 0, 0, 0, 0, 0, 0, 3)),
        (6, 2, 2, 1, 1, 1, 1, 1, 1): (16, (8, 0, 0, 0, 0, 0, 0, 7, 5, 1, 1, 4, 3, 2, 2, 6)),
        (6, 2, 1, 1, 1, 1, 1, 1, 1, 1): (18, (9, 0, 0, 0, 0, 0, 0, 8, 3, 1, 1, 4, 2, 5, 7, 6)),
        (6, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1): (20, (10, 0, 0, 0, 0, 0, 0, 5, 2, 1, 6, 8, 3, 4, 9, 7)),
        (5, 5, 5, 1): (11, (2, 3, 0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 1, 1, 1, 1)),
        (5, 5, 4, 2): (10, (1, 3, 3, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2)),
        (5, 5, 4, 1, 1): (12, (3, 4, 0, 0, 0, 0, 0, 1, 2, 1, 1, 1, 2, 2, 2, 1)),
        (5, 5, 3, 3): (10, (0, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 2, 1)),
        (5, 5, 3, 2, 1): (11, (4, 1, 1, 1, 2, 2, 2, 1, 0, 0, 0, 0, 0, 3, 3, 1)),
        (5, 5, 3, 1, 1, 1): (13, (3, 0, 0, 0, 2, 2, 2, 0, 5, 4, 1, 1, 1, 1, 1, 0)),
        (5, 5, 2, 2, 2): (12, (0, 0, 0, 0, 0, 4, 4, 3, 1, 1, 1, 1, 1, 2, 2, 3)),
        (5, 5, 2, 2, 1, 1): (12, (4, 2, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 3, 3, 5)),
        (5, 5, 2, 1, 1, 1, 1): (14, (3, 2, 2, 1, 1, 1, 1, 1, 4, 0, 0, 5, 0, 0, 0, 6)),
        (5, 5, 1, 1, 1, 1, 1, 1): (16, (7, 6, 3, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 4, 2, 5)),
        (5, 4, 4, 3): (10, (3, 3, 3, 0, 0, 0, 0, 0, 2, 2, 2, 2, 1, 1, 1, 1)),
        (5, 4, 4, 2, 1): (11, (4, 3, 3, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2)),
        (5, 4, 4, 1, 1, 1): (13, (3, 1, 1, 1, 2, 2, 2, 1, 2, 0, 0, 0, 0, 0, 5, 4)),
        (5, 4, 3, 3, 1): (11, (4, 3, 3, 3, 1, 1, 1, 1, 0, 2, 2, 2, 0, 0, 0, 0)),
        (5, 4, 3, 2, 2): (11, (4, 3, 3, 0, 0, 0, 0, 0, 4, 2, 2, 2, 1, 1, 1, 1)),
        (5, 4, 3, 2, 1, 1): (12, (4, 3, 3, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 5)),
        (5, 4, 3, 1, 1, 1, 1): (14, (3, 1, 1, 1, 2, 2, 2, 1, 0, 0, 0, 0, 0, 4, 5, 6)),
        (5, 4, 2, 2, 2, 1): (13, (5, 1, 1, 1, 1, 3, 3, 2, 0, 0, 0, 0, 0, 4, 4, 2)),
        (5, 4, 2, 2, 1, 1, 1): (14, (4, 1, 1, 1, 6, 2, 2, 1, 0, 0, 0, 0, 0, 3, 3, 5)),
        (5, 4, 2, 1, 1, 1, 1, 1): (16, (1, 1, 1, 1, 3, 2, 2, 6, 4, 0, 0, 7, 0, 0, 0, 5)),
        (5, 4, 1, 1, 1, 1, 1, 1, 1): (18, (8, 3, 2, 4, 1, 1, 1, 1, 7, 0, 0, 0, 0, 0, 6, 5)),
        (5, 3, 3, 3, 2): (11, (4, 1, 1, 1, 2, 2, 2, 0, 4, 3, 3, 3, 0, 0, 0, 0)),
        (5, 3, 3, 3, 1, 1): (12, (4, 1, 1, 1, 0, 0, 0, 0, 5, 2, 2, 2, 3, 3, 3, 0)),
        (5, 3, 3, 2, 2, 1): (12, (5, 1, 1, 1, 2, 2, 2, 3, 0, 0, 0, 0, 0, 4, 4, 3)),
        (5, 3, 3, 2, 1, 1, 1): (13, (4, 3, 3, 0, 0, 0, 0, 0, 6, 2, 2, 2, 1, 1, 1, 5)),
        (5, 3, 3, 1, 1, 1, 1, 1): (15, (7, 1, 1, 1, 2, 2, 2, 6, 0, 0, 0, 0, 0, 3, 5, 4)),
        (5, 3, 2, 2, 2, 2): (14, (0, 0, 0, 0, 0, 4, 4, 5, 3, 1, 1, 1, 3, 2, 2, 5)),
        (5, 3, 2, 2, 2, 1, 1): (14, (5, 4, 4, 0, 0, 0, 0, 0, 3, 1, 1, 1, 3, 2, 2, 6)),
        (5, 3, 2, 2, 1, 1, 1, 1): (15, (4, 3, 3, 5, 1, 1, 1, 6, 0, 0, 0, 0, 0, 2, 2, 7)),
        (5, 3, 2, 1, 1, 1, 1, 1, 1): (17, (8, 4, 0, 0, 0, 0, 0, 7, 6, 2, 2, 3, 1, 1, 1, 5)),
        (5, 3, 1, 1, 1, 1, 1, 1, 1, 1): (19, (9, 1, 1, 1, 3, 2, 4, 8, 7, 0, 0, 0, 5, 0, 0, 6)),
        (5, 2, 2, 2, 2, 2, 1): (16, (3, 2, 2, 5, 6, 4, 4, 5, 3, 1, 1, 0, 0, 0, 0, 0)),
        (5, 2, 2, 2, 2, 1, 1, 1): (16, (5, 1, 1, 3, 6, 2, 2, 3, 0, 0, 0, 0, 0, 4, 4, 7)),
        (5, 2, 2, 2, 1, 1, 1, 1, 1): (17, (8, 1, 1, 6, 4, 2, 2, 7, 0, 0, 0, 0, 0, 3, 3, 5)),
        (5, 2, 2, 1, 1, 1, 1, 1, 1, 1): (19, (9, 2, 2, 5, 4, 1, 1, 8, 0, 0, 0, 0, 0, 3, 7, 6)),
        (5, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1): (21, (10, 1, 1, 0, 0, 0, 0, 0, 4, 3, 6, 5, 2, 8, 9, 7)),
        (5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1): (23, (11, 9, 1, 8, 5, 3, 4, 6, 2, 7, 0, 0, 0, 0, 0, 10)),
        (4, 4, 4, 4): (10, (2, 2, 2, 2, 3, 3, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1)),
        (4, 4, 4, 3, 1): (11, (4, 1, 1, 1, 2, 2, 2, 1, 2, 3, 3, 3, 0, 0, 0, 0)),
        (4, 4, 4, 2, 2): (12, (0, 0, 0, 0, 4, 3, 3, 1, 4, 1, 1, 1, 2, 2, 2, 2)),
        (4, 4, 4, 2, 1, 1): (13, (4, 3, 3, 5, 1, 1, 1, 2, 1, 2, 2, 2, 0, 0, 0, 0)),
        (4, 4, 4, 1, 1, 1, 1): (15, (3, 4, 5, 0, 6, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2)),
        (4, 4, 3, 3, 2): (11, (0, 0, 0, 0, 1, 1, 1, 4, 1, 2, 2, 2, 3, 3, 3, 4)),
        (4, 4, 3, 3, 1, 1): (12, (0, 0, 0, 0, 2, 2, 2, 4, 5, 3, 3, 3, 1, 1, 1, 1)),
        (4, 4, 3, 2, 2, 1): (13, (3, 4, 4, 5, 0, 0, 0, 0, 3, 2, 2, 2, 1, 1, 1, 1)),
        (4, 4, 3, 2, 1, 1, 1): (14, (4, 3, 3, 1, 6, 1, 1, 1, 0, 2, 2, 2, 0, 0, 0, 5)),
        (4, 4, 3, 1, 1, 1, 1, 1): (16, (7, 5, 4, 0, 0, 0, 0, 3, 1, 1, 1, 1, 2, 2, 2, 6)),
        (4, 4, 2, 2, 2, 2): (14, (5, 0, 0, 0, 0, 3, 3, 2, 5, 1, 1, 1, 1, 4, 4, 2)),
        (4, 4, 2, 2, 2, 1, 1): (15, (5, 3, 3, 0, 0, 0, 0, 1, 2, 1, 1, 1, 2, 4, 4, 6)),
        (4, 4, 2, 2, 1, 1, 1, 1): (16, (4, 0, 0, 0, 0, 3, 3, 1, 6, 1, 1, 1, 7, 2, 2, 5)),
        (4, 4, 2, 1, 1, 1, 1, 1, 1): (18, (8, 2, 2, 0, 3, 0, 0, 0, 1, 1, 1, 1, 5, 4, 7, 6)),
        (4, 4, 1, 1, 1, 1, 1, 1, 1, 1): (20, (9, 8, 4, 5, 1, 1, 1, 2, 1, 3, 6, 0, 0, 0, 0, 7)),
        (4, 3, 3, 3, 3): (12, (0, 0, 0, 0, 1, 1, 1, 4, 4, 3, 3, 3, 2, 2, 2, 4)),
        (4, 3, 3, 3, 2, 1): (12, (5, 3, 3, 3, 1, 1, 1, 4, 0, 0, 0, 0, 2, 2, 2, 4)),
        (4, 3, 3, 3, 1, 1, 1): (13, (4, 0, 0, 0, 1, 1, 1, 0, 5, 2, 2, 2, 3, 3, 3, 6)),
        (4, 3, 3, 2, 2, 2): (13, (4, 1, 1, 1, 2, 2, 2, 5, 4, 3, 3, 5, 0, 0, 0, 0)),
        (4, 3, 3, 2, 2, 1, 1): (14, (5, 4, 4, 0, 3, 0, 0, 0, 3, 1, 1, 1, 2, 2, 2, 6)),
        (4, 3, 3, 2, 1, 1, 1, 1): (15, (4, 2, 2, 2, 0, 0, 0, 0, 5, 1, 1, 1, 6, 3, 3, 7)),
        (4, 3, 3, 1, 1, 1, 1, 1, 1): (17, (8, 6, 3, 4, 2, 2, 2, 7, 5, 1, 1, 1, 0, 0, 0, 0)),
        (4, 3, 2, 2, 2, 2, 1): (15, (5, 4, 4, 6, 1, 1, 1, 3, 5, 2, 2, 0, 0, 0, 0, 3)),
        (4, 3, 2, 2, 2, 1, 1, 1): (16, (5, 3, 3, 0, 6, 0, 0, 0, 4, 1, 1, 1, 4, 2, 2, 7)),
        (4, 3, 2, 2, 1, 1, 1, 1, 1): (17, (8, 3, 3, 5, 4, 2, 2, 7, 0, 0, 0, 0, 1, 1, 1, 6)),
        (4, 3, 2, 1, 1, 1, 1, 1, 1, 1): (19, (9, 1, 1, 1, 6, 3, 5, 0, 4, 0, 0, 0, 7, 2, 2, 8)),
        (4, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1): (21, (10, 3, 6, 9, 0, 0, 0, 0, 2, 1, 1, 1, 4, 5, 8, 7)),
        (4, 2, 2, 2, 2, 2, 2): (17, (3, 4, 5, 4, 5, 2, 2, 6, 3, 1, 1, 6, 0, 0, 0, 0)),
        (4, 2, 2, 2, 2, 2, 1, 1): (17, (3, 4, 4, 0, 0, 0, 0, 5, 3, 1, 1, 5, 6, 2, 2, 7)),
        (4, 2, 2, 2, 2, 1, 1, 1, 1): (18, (5, 4, 4, 7, 6, 3, 3, 1, 0, 0, 0, 1, 0, 2, 2, 8)),
        (4, 2, 2, 2, 1, 1, 1, 1, 1, 1): (19, (9, 3, 3, 7, 5, 1, 1, 8, 4, 2, 2, 0, 0, 0, 0, 6)),
        (4, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1): (21, (10, 5, 6, 8, 4, 2, 2, 9, 3, 1, 1, 0, 0, 0, 0, 7)),
        (4, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1): (23, (11, 0, 0, 0, 7, 2, 4, 0, 5, 1, 1, 6, 3, 10, 9, 8)),
        (4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1): (25, (12, 4, 1, 6, 9, 3, 5, 8, 2, 7, 10, 0, 0, 0, 0, 11)),
        (3, 3, 3, 3, 3, 1): (13, (5, 3, 3, 3, 4, 4, 4, 2, 0, 0, 0, 2, 1, 1, 1, 2)),
        (3, 3, 3, 3, 2, 2): (12, (4, 3, 3, 3, 0, 0, 0, 5, 4, 1, 1, 1, 2, 2, 2, 5)),
        (3, 3, 3, 3, 2, 1, 1): (13, (5, 0, 0, 0, 2, 2, 2, 4, 6, 3, 3, 3, 1, 1, 1, 4)),
        (3, 3, 3, 3, 1, 1, 1, 1): (14, (4, 2, 2, 2, 0, 0, 0, 5, 6, 1, 1, 1, 3, 3, 3, 7)),
        (3, 3, 3, 2, 2, 2, 1): (14, (6, 1, 1, 1, 0, 0, 0, 4, 5, 2, 2, 2, 5, 3, 3, 4)),
        (3, 3, 3, 2, 2, 1, 1, 1): (15, (5, 3, 3, 7, 2, 2, 2, 4, 6, 1, 1, 1, 0, 0, 0, 4)),
        (3, 3, 3, 2, 1, 1, 1, 1, 1): (16, (8, 2, 2, 2, 4, 3, 3, 6, 7, 0, 0, 0, 1, 1, 1, 5)),
        (3, 3, 3, 1, 1, 1, 1, 1, 1, 1): (18, (9, 0, 0, 0, 2, 2, 2, 6, 5, 1, 1, 1, 8, 3, 4, 7)),
        (3, 3, 2, 2, 2, 2, 2): (16, (6, 1, 1, 1, 0, 0, 0, 4, 6, 5, 3, 5, 3, 2, 2, 4)),
        (3, 3, 2, 2, 2, 2, 1, 1): (16, (5, 4, 4, 6, 1, 1, 1, 3, 5, 2, 2, 7, 0, 0, 0, 3)),
        (3, 3, 2, 2, 2, 1, 1, 1, 1): (17, (5, 2, 2, 8, 1, 1, 1, 3, 7, 0, 0, 0, 6, 4, 4, 3)),
        (3, 3, 2, 2, 1, 1, 1, 1, 1, 1): (18, (9, 2, 2, 7, 5, 3, 3, 4, 8, 0, 0, 0, 1, 1, 1, 6)),
        (3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1): (20, (10, 1, 1, 1, 7, 2, 2, 6, 9, 3, 4, 5, 0, 0, 0, 8)),
        (3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1): (22, (11, 0, 0, 0, 7, 10, 3, 2, 6, 5, 4, 9, 1, 1, 1, 8)),
        (3, 2, 2, 2, 2, 2, 2, 1): (18, (1, 5, 5, 6, 0, 0, 0, 6, 4, 2, 2, 7, 4, 3, 3, 1)),
        (3, 2, 2, 2, 2, 2, 1, 1, 1): (18, (8, 0, 0, 0, 7, 3, 3, 5, 4, 1, 1, 6, 4, 2, 2, 5)),
        (3, 2, 2, 2, 2, 1, 1, 1, 1, 1): (19, (9, 3, 3, 8, 0, 0, 0, 2, 6, 1, 1, 2, 5, 4, 4, 7)),
        (3, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1): (20, (10, 0, 0, 0, 8, 2, 2, 9, 4, 3, 3, 6, 5, 1, 1, 7)),
        (3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1): (22, (11, 2, 2, 9, 5, 1, 1, 10, 4, 3, 7, 6, 0, 0, 0, 8)),
        (3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1): (24, (12, 10, 6, 5, 0, 0, 0, 11, 3, 2, 8, 7, 4, 1, 1, 9)),
        (3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1): (26, (13, 0, 0, 0, 4, 2, 6, 8, 3, 1, 9, 11, 5, 7, 12, 10)),
        (2, 2, 2, 2, 2, 2, 2, 2): (20, (5, 1, 1, 5, 7, 3, 3, 4, 6, 2, 2, 7, 6, 0, 0, 4)),
        (2, 2, 2, 2, 2, 2, 2, 1, 1): (20, (7, 2, 2, 8, 6, 4, 4, 5, 6, 0, 3, 0, 3, 1, 1, 5)),
        (2, 2, 2, 2, 2, 2, 1, 1, 1, 1): (20, (4, 3, 3, 9, 8, 2, 2, 0, 4, 5, 5, 0, 7, 1, 1, 6)),
        (2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1): (21, (10, 2, 2, 3, 9, 1, 1, 3, 5, 4, 4, 8, 6, 0, 0, 7)),
        (2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1): (22, (11, 3, 3, 10, 7, 1, 1, 5, 6, 2, 2, 9, 4, 0, 0, 8)),
        (2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1): (24, (12, 1, 1, 11, 8, 2, 2, 6, 7, 0, 0, 10, 5, 4, 3, 9)),
        (2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1): (26, (13, 12, 9, 7, 5, 1, 1, 4, 8, 6, 3, 11, 2, 0, 0, 10)),
        (2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1): (28, (14, 13, 8, 5, 3, 2, 7, 9, 4, 1, 10, 12, 6, 0, 0, 11)),
        (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1): (30, (0, 13, 12, 11, 10, 9, 8, 14, 6, 7, 4, 3, 2, 1, 15, 5)),
    },
}


_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
"""Block indices written one character each in the shipped k = 32 table (blocks < 36)."""


def partition_costs_by_dp(k: int, largest: int, *, time_limit: float = 600.0
                          ) -> dict[tuple[int, ...], tuple[int, tuple[int, ...]]]:
    """T_k(P) and an arrangement attaining it for *every* partition P of k into parts of at most
    ``largest``, in one dynamic programme along the ranks (exact; ``TimeoutError`` past
    ``time_limit`` seconds).

    Notes
    -----
    Guarantee: exact (the least cut over every arrangement), by the argument below.

    Units: edge units of the merged double binary tree (an edge of both trees counts 2).

    **Why the ranks are a good order.** Both trees are NCCL's binary trees whose in-order is the
    rank order (tree 2 the mirror, or the shift by one, of tree 1), so few edges pass over any
    point of the rank line: after ranks 0..v are placed, at most 5 of them (k = 32; 4 for k = 16)
    still have a neighbour above v (the *open* ranks).

    **Pieces.** Process the ranks in order; each rank joins a *piece*: one holding an open rank
    (any, adjacent or not) or a new one, a piece growing to at most ``largest``. A piece none of
    whose ranks is open is *closed*: only its size is kept (the multiset of closed sizes). The
    cost is the edge units between ranks of different pieces, added when the upper end is placed
    (its lower end is then open). State: the open ranks' pieces (labelled by first appearance),
    the open pieces' sizes and the closed multiset; equal states keep the least cost. At the end
    every piece is closed and ``g(M)`` is the least cost ending with piece sizes M.

    **Exactness.** T_k(P) = min over the M that refine P (P's blocks are unions of M's parts) of
    g(M). (<=) Take a best arrangement with blocks of sizes P and follow it: a rank of block B
    joins B's open piece if B has one, else starts a new piece of B. A closed piece of B has no
    edge to any later rank, so no edge joins two pieces of one block: the path's cost is the
    arrangement's cut, and its pieces refine P. (>=) The pieces of any path, grouped into blocks
    as the refinement says, form an arrangement whose cut is at most the path's cost (edges inside
    a block between two of its pieces were paid but are not cut). ``min over M refining P`` is a
    recursion over partitions: P itself or P with one part split in two (every refinement is
    reached by such splits). The arrangement: the path of the best M is replayed from back
    pointers, its pieces packed into P's blocks (a depth-first search, blocks in P's order).

    Checked against enumeration for k <= 10 and against the CP-SAT table for k = 16
    (``tests/test_gpu_mapping_columns.py``). Cost: k = 16 in 0.13 s; k = 32 (3,319 partitions,
    up to ~10^6 states a rank) 51 s and 0.9 GB, once, for the shipped table.

    References
    ----------
    * P. Sanders, J. Speck, J. L. Traeff, *Two-tree algorithms for full bandwidth broadcast,
      reduction and scan*, Parallel Computing 35(12), 2009 (the double binary tree NCCL uses).
    * H. L. Bodlaender, *A partial k-arboretum of graphs with bounded treewidth*, Theoretical
      Computer Science 209, 1998 (dynamic programmes over a path decomposition, as here along
      the ranks).

    Examples
    --------
    >>> got = partition_costs_by_dp(8, 4)
    >>> got[(4, 4)][0], got[(1,) * 8][0]
    (4, 14)
    """
    import time
    from array import array

    from .arrangements import partitions

    deadline = time.perf_counter() + time_limit
    mult = merged_tree_edges(k)
    lower: list[list[tuple[int, int]]] = [[] for _ in range(k)]
    last = list(range(k))
    for (a, b), w in mult.items():
        lower[b].append((a, w))
        last[a] = max(last[a], b)
    opened: list[int] = []
    # state -> (cost, id); per rank the back pointers (previous state's id, label chosen)
    layer: dict[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]], tuple[int, int]] = {((), (), ()): (0, 0)}
    back_prev: list[array[int]] = []
    back_label: list[array[int]] = []
    for v in range(k):
        if time.perf_counter() > deadline:
            raise TimeoutError(f"partition_costs_by_dp({k}, {largest}): over {time_limit} s")
        pos = {u: i for i, u in enumerate(opened)}
        stays = [last[u] > v for u in opened + [v]]
        nxt: dict[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]], tuple[int, int]] = {}
        prev_ids = array("i")
        labels = array("b")
        for (lab, size, closed), (cost0, sid) in layer.items():
            n_open = len(size)
            for piece in range(n_open + 1):
                if piece < n_open and size[piece] >= largest:
                    continue
                cost = cost0 + sum(w for u, w in lower[v] if lab[pos[u]] != piece)
                grown = list(size) + [0] if piece == n_open else list(size)
                grown[piece] += 1
                full = lab + (piece,)
                remap: dict[int, int] = {}
                for x, keep in zip(full, stays):
                    if keep and x not in remap:
                        remap[x] = len(remap)
                new_lab = tuple(remap[x] for x, keep in zip(full, stays) if keep)
                new_size = [0] * len(remap)
                for x, y in remap.items():
                    new_size[y] = grown[x]
                now_closed = closed + tuple(grown[x] for x in range(len(grown)) if x not in remap)
                key = (new_lab, tuple(new_size), tuple(sorted(now_closed, reverse=True)))
                old = nxt.get(key)
                if old is None:
                    nxt[key] = (cost, len(prev_ids))
                    prev_ids.append(sid)
                    labels.append(piece)
                elif cost < old[0]:
                    nxt[key] = (cost, old[1])
                    prev_ids[old[1]] = sid
                    labels[old[1]] = piece
        layer = nxt
        back_prev.append(prev_ids)
        back_label.append(labels)
        opened = [u for u, keep in zip(opened + [v], stays) if keep]
    final = {closed: (cost, sid) for (_, _, closed), (cost, sid) in layer.items()}

    def pieces_of(sid: int) -> list[int]:
        """The piece of every rank on the path ending at state ``sid`` (replayed forwards)."""
        chosen = [0] * k
        for v in range(k - 1, -1, -1):
            chosen[v] = back_label[v][sid]
            sid = back_prev[v][sid]
        piece = [0] * k
        n_pieces = 0
        now: list[int] = []
        for v in range(k):
            order = list(dict.fromkeys(piece[u] for u in now))
            if chosen[v] < len(order):
                piece[v] = order[chosen[v]]
            else:
                piece[v] = n_pieces
                n_pieces += 1
            now = [u for u in now + [v] if last[u] > v]
        return piece

    best: dict[tuple[int, ...], tuple[int, tuple[int, ...]]] = {}   # P -> (T, the refinement M attaining it)
    for q in sorted(partitions(k, largest), key=len, reverse=True):
        cand = (final[q][0], q) if q in final else (2 * k * k, q)
        for i, v in enumerate(q):
            if i and q[i - 1] == v:
                continue
            for a in range(1, v // 2 + 1):
                finer = tuple(sorted(q[:i] + q[i + 1:] + (a, v - a), reverse=True))
                cand = min(cand, best[finer])
        best[q] = cand
    out: dict[tuple[int, ...], tuple[int, tuple[int, ...]]] = {}
    for q, (cost, m) in best.items():
        piece = pieces_of(final[m][1])
        sizes = [piece.count(j) for j in range(max(piece) + 1)]
        into = _pack(sizes, q)
        arrangement = tuple(into[piece[r]] for r in range(k))
        inside = sum(w for (a, b), w in mult.items() if arrangement[a] == arrangement[b])
        assert 2 * (k - 1) - inside == cost, (q, cost)
        out[q] = (cost, arrangement)
    return out


def _pack(sizes: Sequence[int], blocks: Sequence[int]) -> list[int]:
    """A block (index into ``blocks``) per piece so that every block's pieces fill it exactly
    (one exists: the pieces refine the blocks); a depth-first search, largest pieces first."""
    order = sorted(range(len(sizes)), key=lambda j: -sizes[j])
    room = list(blocks)
    into = [-1] * len(sizes)
    failed: set[tuple[int, tuple[int, ...]]] = set()

    def rec(i: int) -> bool:
        if i == len(order):
            return True
        key = (i, tuple(room))
        if key in failed:
            return False
        seen = set()
        for b in range(len(room)):
            if room[b] >= sizes[order[i]] and room[b] not in seen:
                seen.add(room[b])
                room[b] -= sizes[order[i]]
                into[order[i]] = b
                if rec(i + 1):
                    return True
                room[b] += sizes[order[i]]
        failed.add(key)
        return False

    if not rec(0):
        raise AssertionError(f"pieces {sizes} do not pack into {blocks}")
    return into


def _decoded(entries: dict[tuple[int, ...], tuple[int, str]]) -> dict[tuple[int, ...], tuple[int, tuple[int, ...]]]:
    return {q: (cost, tuple(_DIGITS.index(c) for c in arrangement)) for q, (cost, arrangement) in entries.items()}


def _load_k32() -> None:
    from .tree_table_k32 import ENTRIES

    TABLES[(32, 8)] = _decoded(ENTRIES)


_load_k32()


def main(argv: Sequence[str]) -> None:  # pragma: no cover - regeneration by hand
    """``python -m optkit.formulations.gpu_mapping.tree_tables K LARGEST [PATH]``: a module holding
    the table of :func:`partition_costs_by_dp` (exact, under a 30-minute limit), each arrangement
    as a string of block indices (:data:`_DIGITS`), written to PATH once computed (the shipped
    module can be overwritten: it is read at import) or printed. ``32 8`` gives ``tree_table_k32.py``."""
    import contextlib
    import io

    k, largest = int(argv[0]), int(argv[1])
    table = partition_costs_by_dp(k, largest, time_limit=1800.0)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        _print_module(k, largest, table)
    if len(argv) > 2:
        with open(argv[2], "w", encoding="utf-8") as fh:
            fh.write(text.getvalue())
    else:
        print(text.getvalue(), end="")


def _print_module(k: int, largest: int, table: dict[tuple[int, ...], tuple[int, tuple[int, ...]]]) -> None:
    print(f'"""T_{k}(P) for the {len(table)} partitions of {k} into parts of at most {largest}, with an arrangement\n'
          f"attaining each (block index per rank, one character each): generated by\n"
          f"``python -m optkit.formulations.gpu_mapping.tree_tables {k} {largest} formulations/gpu_mapping/tree_table_k{k}.py``\n"
          f"(the exact dynamic programme "
          f':func:`.tree_tables.partition_costs_by_dp`); :data:`.tree_tables.TABLES` decodes it."""\n')
    print(f"ENTRIES: dict[tuple[int, ...], tuple[int, str]] = {{")
    for q, (cost, arrangement) in table.items():
        print(f"    {q!r}: ({cost}, {''.join(_DIGITS[b] for b in arrangement)!r}),")
    print("}")


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
