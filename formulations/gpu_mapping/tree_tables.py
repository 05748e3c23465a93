"""Tree-stage partition tables too large to enumerate, computed once and shipped.

For a tree stage of k replicas (NCCL's double binary tree, :func:`.model.double_binary_tree_edges`),
``TABLES[(k, largest)][P] = (T_k(P), arrangement)``: for every partition P of the k replicas into
blocks of at most ``largest`` (parts in non-increasing order), the least number of tree edge
units (an edge of both trees counted twice) between different blocks, and an arrangement
attaining it (block index per replica, blocks numbered in P's order), as
:func:`.columns.tree_table` would give by enumeration, which is out of reach here (k = 16:
more than 10^10 arrangements).

The tables are package data beside this module (:data:`TABLE_FILES`, JSON written by
:func:`encode_table`), each read on its first use through :data:`TABLES`; each file names the
command that regenerates it (``regenerate``):

* k = 16, parts up to 8 (186 partitions, ``tree_table_k16.json``): each entry solved to proven
  optimality by :func:`exact_partition_cost` (CP-SAT; :func:`partition_costs_by_cpsat`, ``python
  -m optkit.formulations.gpu_mapping.tree_tables 16 8 --cpsat
  formulations/gpu_mapping/tree_table_k16.json``, about 230 s on a loaded 2-core machine,
  2026-11-25); :func:`partition_costs_by_dp` gives the same 186 values in 0.1 s (a test checks it).
* k = 32, parts up to 8 (3,319 partitions, ``tree_table_k32.json``): by the exact dynamic
  programme along the ranks :func:`partition_costs_by_dp` (``python -m
  optkit.formulations.gpu_mapping.tree_tables 32 8 formulations/gpu_mapping/tree_table_k32.json``
  regenerates it, under a 30-minute limit: 35 CPU s, 2026-11-27; 51 s and 0.9 GB on a loaded
  2-core machine, 2026-11-25, before the steps were shared per open part, which gives the same
  file byte for byte). CP-SAT's model proves no single k = 32 partition within 30 s.

``tests/test_gpu_mapping_columns.py`` re-checks every shipped arrangement's cut, the dynamic
programme against enumeration (k <= 10) and the CP-SAT table (k = 16), k = 32 entries against
an independent exact method (the matching of :func:`.columns.tree_table_by_matching`), and both
files against their generators on a sample (the k = 32 entries with parts of at most 3 are what
``partition_costs_by_dp(32, 3)`` gives, arrangements included: a path whose pieces never exceed 3
passes only through states of such pieces, met in the same order whatever ``largest`` is).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Sequence

from .model import double_binary_tree_edges

__all__ = ["ShippedTables", "TABLES", "TABLE_FILES", "decode_table", "encode_table", "exact_partition_cost", "merged_tree_edges",
           "partition_costs_by_cpsat", "partition_costs_by_dp"]


def merged_tree_edges(k: int) -> dict[tuple[int, int], int]:
    """The double binary tree of k replicas as ``{(a, b): units}`` with a < b: 2 for an edge of
    both trees, else 1."""
    mult: dict[tuple[int, int], int] = {}
    for a, b in double_binary_tree_edges(k):
        key = (min(a, b), max(a, b))
        mult[key] = mult.get(key, 0) + 1
    return mult


def exact_partition_cost(k: int, sizes: Sequence[int], *, time_limit: float = 60.0,
                         seed: int = 0, deterministic_time: float | None = None
                         ) -> tuple[int, tuple[int, ...], bool]:
    """``(T, arrangement, proven)``: the least number of double-binary-tree edge units of a tree
    stage of k replicas cut by a partition into blocks of ``sizes``, an arrangement attaining the
    value found, and whether CP-SAT proved it least within ``time_limit`` seconds (and, if given,
    ``deterministic_time``: CP-SAT's ``max_deterministic_time``, a work limit that gives the same
    answer however loaded the machine). The model: one Boolean per (replica, block), each replica
    in one block, each block its size, one Boolean per (edge, block) kept inside the block (at most
    both ends' Booleans); maximise the kept units."""
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
    if deterministic_time is not None:
        solver.parameters.max_deterministic_time = deterministic_time
    status = solver.Solve(md)
    arrangement = tuple(next(j for j in blocks if solver.Value(x[r, j])) for r in range(k))
    inside = sum(w for (a, b), w in mult.items() if arrangement[a] == arrangement[b])
    return 2 * (k - 1) - inside, arrangement, status == cp_model.OPTIMAL



Table = dict[tuple[int, ...], tuple[int, tuple[int, ...]]]
"""``{P: (T_k(P), arrangement)}``: one shipped table (the module docstring)."""

_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
"""Parts and block indices written one character each in the shipped files (values < 36)."""


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
    (``tests/test_gpu_mapping_columns.py``). Cost: k = 16 in 0.1 s; k = 32 (3,319 partitions,
    up to ~10^6 states a rank) 35 CPU s, once, for the shipped table. A state's
    steps depend only on its open part (labels and sizes), not on its closed multiset, so they
    are computed once per open part and rank (:func:`_moves`) and applied to every state sharing
    it, in the same order: the same states, costs and back pointers as stepping each state.

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
        low = [(pos[u], w) for u, w in lower[v]]
        nxt: dict[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]], tuple[int, int]] = {}
        prev_ids = array("i")
        labels = array("b")
        moves: dict[tuple[tuple[int, ...], tuple[int, ...]], list[tuple[int, int, tuple[int, ...], tuple[int, ...],
                                                                    tuple[int, ...]]]] = {}
        for (lab, size, closed), (cost0, sid) in layer.items():
            todo = moves.get((lab, size))
            if todo is None:
                todo = moves[lab, size] = _moves(lab, size, largest, low, stays)
            for piece, extra, new_lab, new_size, ended in todo:
                cost = cost0 + extra
                key = (new_lab, new_size, tuple(sorted(closed + ended, reverse=True)) if ended else closed)
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


def _moves(lab: tuple[int, ...], size: tuple[int, ...], largest: int, low: list[tuple[int, int]],
           stays: list[bool]) -> list[tuple[int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]]:
    """The steps of :func:`partition_costs_by_dp` from every state with the open ranks' pieces
    ``lab`` and the open pieces' sizes ``size``, for the rank placed now: per piece it may join
    (each open piece with room, in order, then a new one), ``(piece, added cost, new lab, new
    sizes, sizes of the pieces it closes)``. They do not depend on the state's closed multiset,
    so the programme computes them once per (lab, size) and rank. ``low``: (position in ``lab``,
    units) of the edges to the rank's lower neighbours; ``stays``: whether each open rank, then
    the rank placed, stays open."""
    out = []
    n_open = len(size)
    for piece in range(n_open + 1):
        if piece < n_open and size[piece] >= largest:
            continue
        extra = sum(w for i, w in low if lab[i] != piece)
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
        ended = tuple(grown[x] for x in range(len(grown)) if x not in remap)
        out.append((piece, extra, new_lab, tuple(new_size), ended))
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


def encode_table(k: int, largest: int, table: Table, *, method: str) -> str:
    """The JSON text of a shipped table (the format :func:`decode_table` reads): ``k``,
    ``largest``, the ``method`` that computed it and the command that regenerates it, then
    ``entries`` in the table's order (the column programme's order of partitions), one a line:
    ``[T, arrangement]``, the arrangement's block indices written one character each
    (:data:`_DIGITS`), e.g. ``[10, "00000000111111112222222233333333"]`` for P = (8, 8, 8, 8). P
    is not written: the blocks are numbered in P's order, so block j's count of ranks is P's
    j-th part."""
    flag = " --cpsat" if method == "cpsat" else ""
    head = {
        "k": k, "largest": largest,
        "method": {"cpsat": "exact_partition_cost", "dp": "partition_costs_by_dp"}[method],
        "regenerate": f"python -m optkit.formulations.gpu_mapping.tree_tables {k} {largest}{flag} "
                      f"formulations/gpu_mapping/tree_table_k{k}.json",
        "about": f"T_{k}(P) for the {len(table)} partitions P of {k} into parts of at most {largest} and an "
                 "arrangement attaining it; each entry: [T, block index per rank, one character each (0-9a-z)], "
                 "P being the blocks' sizes; read by optkit.formulations.gpu_mapping.tree_tables.TABLES",
    }
    for q, (_, arrangement) in table.items():
        if _parts(arrangement) != q:
            raise ValueError(f"the arrangement of {q} has blocks of sizes {_parts(arrangement)}")
    lines = [f"{json.dumps(key)}: {json.dumps(value)}," for key, value in head.items()]
    rows = [f"[{cost}, {json.dumps(''.join(_DIGITS[b] for b in arrangement))}]" for cost, arrangement in table.values()]
    return "{\n" + "\n".join(lines) + '\n"entries": [\n' + ",\n".join(rows) + "\n]\n}\n"


def decode_table(text: str) -> Table:
    """The table a shipped file holds (:func:`encode_table`'s format), in the file's order."""
    entries: list[tuple[int, str]] = json.loads(text)["entries"]
    out: Table = {}
    for cost, digits in entries:
        arrangement = tuple(_DIGITS.index(c) for c in digits)
        out[_parts(arrangement)] = (cost, arrangement)
    return out


def _parts(arrangement: Sequence[int]) -> tuple[int, ...]:
    """The partition an arrangement realises: its blocks' sizes, block 0 first."""
    sizes = [0] * (max(arrangement) + 1)
    for b in arrangement:
        sizes[b] += 1
    return tuple(sizes)


class ShippedTables(Mapping[tuple[int, int], Table]):
    """The shipped tables by ``(k, largest)`` (:data:`TABLES`): each file (package data beside
    this module, :data:`TABLE_FILES`) is read on first access and kept."""

    def __init__(self, files: dict[tuple[int, int], str]) -> None:
        self._files = dict(files)
        self._read: dict[tuple[int, int], Table] = {}

    def __getitem__(self, key: tuple[int, int]) -> Table:
        if key not in self._read:
            name = self._files[key]   # KeyError for a table not shipped
            self._read[key] = decode_table(Path(__file__).with_name(name).read_text(encoding="utf-8"))
        return self._read[key]

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


TABLE_FILES: dict[tuple[int, int], str] = {(16, 8): "tree_table_k16.json", (32, 8): "tree_table_k32.json"}
"""The shipped tables' files by ``(k, largest)``; ``regenerate`` in each names its command."""

TABLES: Mapping[tuple[int, int], Table] = ShippedTables(TABLE_FILES)
"""``TABLES[(k, largest)][P] = (T_k(P), arrangement)`` (the module docstring), read lazily."""


def partition_costs_by_cpsat(k: int, largest: int, *, time_limit: float = 600.0) -> Table:
    """:func:`exact_partition_cost` (its default seed, one worker) on every partition of k into
    parts of at most ``largest``, in decreasing order (the partitions :func:`partition_costs_by_dp`
    covers); raises ``RuntimeError`` when one is not proven within ``time_limit`` seconds (wall
    time, per partition). The k = 16 table's method (about 230 s). One worker searches the same
    way whatever the limit, so a proven entry does not depend on it (the table was made under 60 s
    per partition; on a machine at load 12 one partition took longer)."""
    out: Table = {}
    for q in sorted(partition_costs_by_dp(k, largest), reverse=True):
        cost, arrangement, proven = exact_partition_cost(k, q, time_limit=time_limit)
        if not proven:
            raise RuntimeError(f"T_{k}{q}: not proven within {time_limit} s")
        out[q] = (cost, arrangement)
    return out


def main(argv: Sequence[str]) -> None:  # pragma: no cover - regeneration by hand
    """``python -m optkit.formulations.gpu_mapping.tree_tables K LARGEST [--cpsat] [PATH]``: the
    table of :func:`partition_costs_by_dp` (exact, under a 30-minute limit), or with ``--cpsat``
    of :func:`partition_costs_by_cpsat`, as JSON (:func:`encode_table`), written to PATH once
    computed, or printed. ``32 8`` gives ``tree_table_k32.json``, ``16 8 --cpsat``
    ``tree_table_k16.json`` (each file's ``regenerate`` says so)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m optkit.formulations.gpu_mapping.tree_tables")
    parser.add_argument("k", type=int)
    parser.add_argument("largest", type=int)
    parser.add_argument("path", nargs="?")
    parser.add_argument("--cpsat", action="store_true", help="CP-SAT per partition (the k = 16 table)")
    args = parser.parse_intermixed_args(argv)
    if args.cpsat:
        table = partition_costs_by_cpsat(args.k, args.largest)
    else:
        table = partition_costs_by_dp(args.k, args.largest, time_limit=1800.0)
    text = encode_table(args.k, args.largest, table, method="cpsat" if args.cpsat else "dp")
    if args.path:
        with open(args.path, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        print(text, end="")


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
