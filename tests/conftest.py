"""Suite-wide pytest hooks: under pytest-xdist, test files costliest first (:mod:`tests.file_order`);
under mutation testing, the formulations' module caches emptied before each test
(:mod:`tests.fresh_caches`)."""

from __future__ import annotations

import os

import pytest

from tests.file_order import costliest_first, load_costs
from tests.fresh_caches import ENV as FRESH_CACHES_ENV
from tests.fresh_caches import empty_module_caches


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a pytest-xdist worker (the controller hands out what the workers collect), whole files
    in order of decreasing measured cost, after pytest-randomly's shuffle (which runs first, as a
    wrapper) and keeping its order within each file. Every worker sorts the same collection the
    same way, as xdist requires. A run without xdist keeps the collected order."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items[:] = costliest_first(items, load_costs())


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (the README's test command) starts one worker more than the CPUs this process
    may run on. Some tests wait on processes they start (CLI runs, a Dask cluster, the harness's
    workers and forkserver): with a worker per CPU, a CPU sits idle while its worker waits; the
    extra worker fills it. Measured on 2 cores (benchmarks/perf/test_time.md)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cpus + 1


@pytest.fixture(autouse=bool(os.environ.get(FRESH_CACHES_ENV)))
def _fresh_module_caches() -> None:
    """Only when ``tools/mutate.py`` runs the tests (:mod:`tests.fresh_caches`): every test starts
    with the formulations' module caches empty, so a cache filled before mutmut forked cannot hide
    a mutant."""
    empty_module_caches()
