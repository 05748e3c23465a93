"""The order pytest-xdist hands test files to its workers: the costliest first (issue 36 §4).

The README's test command runs each test file on one worker (``--dist loadfile``: a file's module
fixtures and caches run once) and hands the files out in collection order
(``--no-loadscope-reorder``; pytest-xdist's own order is by number of tests, which puts files of
few but long tests, such as the Sphinx and mypy runs of ``test_docs.py`` and ``test_typing.py``,
among the last handed out, so that one of them may run alone at the end). Handing out the
longest jobs first (LPT) keeps the two workers' finishing times close: the last file to start is
one of the cheapest.

A file's cost is its CPU time (user + system, the test process's and its reaped children's, for
setup, call and teardown of every test) measured in a full run of the suite by
:mod:`tests.cpu_costs`, stored in :data:`COSTS` (``python benchmarks/test_time.py --costs
tests/file_costs.json`` writes it). A file the measurement does not name (added since) is
estimated as its number of tests times the mean cost of a test over the measured files. The
order within a file is left as collected (pytest-randomly's shuffle).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

COSTS = Path(__file__).with_name("file_costs.json")
"""The measured CPU seconds per test file (``{"cpu_s": {"tests/test_x.py": seconds}, ...}``)."""


class HasPath(Protocol):
    @property
    def nodeid(self) -> str: ...


T = TypeVar("T", bound=HasPath)


def file_of(nodeid: str) -> str:
    """The file part of a pytest node id (``tests/test_x.py::test_y[1]`` -> ``tests/test_x.py``)."""
    return nodeid.split("::", 1)[0]


def load_costs(path: Path = COSTS) -> dict[str, float]:
    """The measured CPU seconds per file; empty when the file is missing."""
    if not path.is_file():
        return {}
    return {str(k): float(v) for k, v in json.loads(path.read_text(encoding="utf-8"))["cpu_s"].items()}


def file_costs(items: Sequence[HasPath], costs: Mapping[str, float]) -> dict[str, float]:
    """The cost of each file of ``items``: measured, or estimated as its number of tests times the
    mean measured cost per test (over the measured files that are collected; 1 s when none is)."""
    counts: dict[str, int] = {}
    for it in items:
        f = file_of(it.nodeid)
        counts[f] = counts.get(f, 0) + 1
    known = [f for f in counts if f in costs]
    per_test = sum(costs[f] for f in known) / sum(counts[f] for f in known) if known else 1.0
    return {f: costs[f] if f in costs else n * per_test for f, n in counts.items()}


def costliest_first(items: Sequence[T], costs: Mapping[str, float]) -> list[T]:
    """``items`` with whole files in order of decreasing cost (:func:`file_costs`; ties in their
    order of first appearance), each file's items in their order."""
    cost = file_costs(items, costs)
    first: dict[str, int] = {}
    for i, it in enumerate(items):
        first.setdefault(file_of(it.nodeid), i)
    return sorted(items, key=lambda it: (-cost[file_of(it.nodeid)], first[file_of(it.nodeid)]))
