"""The combinatorics of a stage's replicas split over servers: partitions and arrangements.

A stage of k replicas placed on servers is, up to relabelling the servers, a *partition* of k
(how many replicas each server holds, parts in non-increasing order) and an *arrangement* (which
replica sits in which block). The exact solvers (:mod:`.exact`'s brute force), the column
programme (:mod:`.columns`' tree tables) and the shipped tree tables (:mod:`.tree_tables`) all
enumerate these; they live here so that none of those modules imports another for them.

* :func:`partitions`: the partitions of n into parts of at most ``largest``;
* :func:`arrangements`: the sequences of block labels of given block sizes, one per partition of
  the replicas into blocks (labels of equal-sized blocks are interchangeable: swapping two
  servers that hold equally many of the stage's replicas maps an arrangement to one with the
  same intra-stage cut);
* :func:`n_arrangements`: how many :func:`arrangements` yields, without enumerating them.
"""

from __future__ import annotations

import math
from typing import Iterator, Sequence

__all__ = ["arrangements", "n_arrangements", "partitions"]


def partitions(n: int, largest: int) -> list[tuple[int, ...]]:
    """The partitions of n into parts of at most ``largest``, parts in non-increasing order,
    listed in reverse lexicographic order (largest first part first).

    >>> partitions(4, 2)
    [(2, 2), (2, 1, 1), (1, 1, 1, 1)]
    """
    if n == 0:
        return [()]
    return [(v,) + rest for v in range(min(n, largest), 0, -1) for rest in partitions(n - v, v)]


def arrangements(sizes: Sequence[int]) -> Iterator[list[int]]:
    """Sequences with ``sizes[j]`` copies of label j, one per class of label relabellings.

    Labels with equal sizes are interchangeable (swapping two servers that hold equally many of
    the stage's replicas maps an arrangement to one with the same intra-stage cut), so only the
    sequences in which such labels first appear in increasing order are produced: each
    partition of the replicas into blocks of the given sizes appears exactly once.

    >>> list(arrangements((1, 1, 2)))
    [[0, 1, 2, 2], [0, 2, 1, 2], [0, 2, 2, 1], [2, 0, 1, 2], [2, 0, 2, 1], [2, 2, 0, 1]]
    """
    n = sum(sizes)
    left = list(sizes)
    seq: list[int] = []

    def rec() -> Iterator[list[int]]:
        if len(seq) == n:
            yield list(seq)
            return
        for j, c in enumerate(left):
            if not c:
                continue
            # a fresh label may open only after every earlier label of its size has opened
            if c == sizes[j] and any(sizes[i] == sizes[j] and left[i] == sizes[i] for i in range(j)):
                continue
            left[j] -= 1
            seq.append(j)
            yield from rec()
            seq.pop()
            left[j] += 1

    yield from rec()


def n_arrangements(sizes: Sequence[int]) -> int:
    """How many sequences :func:`arrangements` yields: the multinomial over the sizes, divided
    by ``mult!`` for every size value occurring ``mult`` times.

    >>> n_arrangements((1, 1, 2)), n_arrangements((2, 2, 1))
    (6, 15)
    """
    out = math.factorial(sum(sizes))
    for c in sizes:
        out //= math.factorial(c)
    for c in set(sizes):
        out //= math.factorial(list(sizes).count(c))
    return out
