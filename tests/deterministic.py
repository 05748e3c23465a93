"""Deterministic stand-ins for the clock in tests of "cut short" runs (issue 17: no clock in an
assertion).

* :func:`stop_at_first_solution`: the exact solvers stop at their first incumbent, through the
  work-limit hooks :data:`optkit.solvers.cpsat.WORK_LIMITS` (CP-SAT
  ``stop_after_first_solution``) and :data:`optkit.solvers.milp.WORK_LIMITS` (HiGHS
  ``mip_max_improving_sols = 1``); with ``nodes=0`` HiGHS stops after the root node instead
  (``mip_max_nodes = 0``: no incumbent unless the root finds one).
* :class:`TickingClock`: an injected ``time.perf_counter`` that advances by ``step`` seconds on
  every reading, so a heuristic's wall-clock deadline passes after a known number of checks.

Each works through ``monkeypatch`` and is undone when the test ends.
"""

from __future__ import annotations

import time

import pytest


def stop_at_first_solution(monkeypatch: pytest.MonkeyPatch, *, nodes: int | None = None) -> None:
    """CP-SAT and HiGHS stop at their first incumbent (HiGHS: after ``nodes`` nodes if given)."""
    from optkit.solvers import cpsat, milp

    monkeypatch.setitem(cpsat.WORK_LIMITS, "stop_after_first_solution", True)
    if nodes is None:
        monkeypatch.setitem(milp.WORK_LIMITS, "mip_max_improving_sols", 1)
    else:
        monkeypatch.setitem(milp.WORK_LIMITS, "mip_max_nodes", int(nodes))


class TickingClock:
    """A fake ``time.perf_counter``: ``start``, ``start + step``, ``start + 2 step``, ... ."""

    def __init__(self, step: float = 1.0, start: float = 1000.0) -> None:
        self.step = step
        self.now = start
        self.readings = 0

    def __call__(self) -> float:
        value = self.now
        self.now += self.step
        self.readings += 1
        return value

    def install(self, monkeypatch: pytest.MonkeyPatch) -> "TickingClock":
        """Replace ``time.perf_counter`` (read at call time by ``time.perf_counter()`` and
        ``_time.perf_counter()`` alike) for the rest of the test."""
        monkeypatch.setattr(time, "perf_counter", self)
        return self
