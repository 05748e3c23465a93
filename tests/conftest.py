"""Suite-wide pytest hooks: under pytest-xdist, test files costliest first (:mod:`tests.file_order`)."""

from __future__ import annotations

import os

import pytest

from tests.file_order import costliest_first, load_costs


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a pytest-xdist worker (the controller hands out what the workers collect), whole files
    in order of decreasing measured cost, after pytest-randomly's shuffle (which runs first, as a
    wrapper) and keeping its order within each file. Every worker sorts the same collection the
    same way, as xdist requires. A run without xdist keeps the collected order."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items[:] = costliest_first(items, load_costs())
