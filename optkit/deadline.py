"""Time limits that bound a whole exact solve, model construction included.

An exact solver's ``time_limit`` used to start at the solver call: building a large model (the
time-indexed MILP of ddlwmp: hundreds of millions of coefficients for eight jobs) ran before it,
unbounded, so ``optkit solve ... --time-limit 20`` could run for many minutes. Here the limit
starts when the algorithm is called and every stage checks it.

The mechanism is cooperative and in-process (no child process, so an in-process Python caller
keeps its objects, its monkeypatches and the incumbent):

* :func:`bounded` wraps an exact algorithm's ``run(instance, *, time_limit, ...)``: it checks
  ``time_limit`` (:func:`optkit.validation.check_time_limit`), opens a :class:`Deadline` for the
  call (the tighter of its own limit and any enclosing one: a solver called inside another
  solver's model construction gets what is left of the outer limit), and passes the remaining
  seconds on as ``time_limit``.
* Model construction calls :func:`check` in its loops (every few milliseconds of work at most):
  past the deadline it raises :class:`DeadlineReached`, which :func:`bounded` turns into a
  ``time_limit`` :class:`~optkit.result.Result` naming the stage it stopped in, with the
  incumbent the algorithm :func:`offer` -ed before (a greedy or warm start), or none.
* The solver adapters (:func:`optkit.solvers.cpsat.solve_cp_model`,
  :func:`optkit.solvers.milp.solve_pyomo_model`) give the solver at most what is left
  (:func:`solver_limit`); the Pyomo-to-HiGHS translation is done in chunks between checks.

What a limit guarantees
-----------------------
An exact solve (``solve`` with CP-SAT, HiGHS through Pyomo, or brute force, on any of the four
problems) returns within ``time_limit + GRACE_S`` seconds (:data:`GRACE_S`) of the call to
:func:`optkit.solve.solve`. Two things make that hold:

* Freeing what was built is paid inside the limit. A large model (the ddlwmp time-indexed MILP:
  millions of Pyomo objects) takes seconds to free when the run ends, cut or not, and that
  happens before ``solve`` can return. So a solve's deadline holds back
  :data:`TEARDOWN_FRACTION` of the time spent so far: work stops, and the solver is started with
  a limit, such that ``now + TEARDOWN_FRACTION * (now - start) <= start + time_limit``. The
  cost of freeing grows with what was built, so the reserve does too. The brute forces build
  nothing to free and hold back nothing (``@bounded(teardown=0.0)``).
* The grace covers what runs after the deadline and cannot be cut: the solver's own overshoot
  of its limit (CP-SAT and HiGHS check their clocks between steps), one chunk of model
  construction or translation between two checks, freeing the model beyond the reserve,
  reading the incumbent back, judging it (``evaluate``, the JSON round trip of
  :mod:`optkit.pristine`).

It does not cover the one-time import of a solver library, which :func:`optkit.solve.solve`
does before the clock starts (about a second, once per process), nor, for the CLI, starting
Python. ``benchmarks/time_limit.py`` measures the return time of every exact solver of the four
problems against its limit (``benchmarks/perf/time_limit.md``). Other solvers reached through
Pyomo's ``SolverFactory`` write a file and run a program: their translation is not cut, only
their limit is set.

``time_limit=0`` is refused like any limit that is not a finite number > 0
(:func:`optkit.validation.check_time_limit`): no run can be named by it (a bound shortcut
would answer ``optimal`` with no time at all, any other path ``time_limit`` at once), and the
CLI has always refused it. A proof found before the first check (a bound met by the warm start)
is still reported, however short a limit > 0.

The harness (:mod:`optkit.harness.worker`) keeps its own hard kill of the worker process as the
last resort; this module is what makes ``solve`` in the caller's own process keep its limit.
"""

from __future__ import annotations

import functools
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, TypeVar, overload

from optkit.result import Result, Status
from optkit.validation import check_time_limit

__all__ = ["GRACE_S", "TEARDOWN_FRACTION", "Deadline", "DeadlineReached", "bounded", "check", "checked", "current", "offer", "solver_limit",
           "within"]

GRACE_S = 2.0
"""Seconds an exact solve may run past its ``time_limit`` (module docstring: what it covers)."""

TEARDOWN_FRACTION = 0.5
"""The share of an exact solve's elapsed time its deadline holds back for freeing what it built
(module docstring): freeing a Pyomo model costs a share of the time building it took, and the
runs stopped while building return within the limit with this reserve on a loaded two-core
machine (``benchmarks/perf/time_limit.md``)."""

_MIN_SOLVER_S = 1e-3  # a solver given less than this is not started: the deadline has passed
_MIN_LEFT_S = 1e-9  # the time_limit a run gets when its deadline has passed as it starts (a limit is > 0)

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class DeadlineReached(Exception):
    """The deadline of the current exact solve passed during ``stage`` (control flow inside an
    exact algorithm; :func:`bounded` turns it into a ``time_limit`` result)."""

    def __init__(self, stage: str, limit: float | None) -> None:
        super().__init__(f"time limit of {limit:g} s reached while {stage}" if limit is not None
                         else f"time limit reached while {stage}")
        self.stage = stage
        self.limit = limit


@dataclass
class Deadline:
    """The instant (``clock()`` reading) by which the current exact solve must return.

    ``end`` is ``None`` for no limit; ``limit`` the seconds it was opened with (for messages);
    ``clock`` the time source (``time.perf_counter``; a test may pass its own); ``start`` the
    clock reading when it opened; ``reserve`` the fraction of the time since ``start`` held back
    before ``end`` for freeing what the solve built (:data:`TEARDOWN_FRACTION` for an exact
    solve, 0 for a :func:`within` block): the deadline passes at the first reading ``now`` with
    ``now + reserve * (now - start) >= end``; ``parent`` the deadline it was opened inside
    (it passes when its parent's does); ``fallback`` what :func:`bounded` returns when the
    deadline passes (set by :func:`offer`); ``solve`` whether an exact solve (:func:`bounded`)
    owns it, and ``enclosing_solve`` the nearest exact solve around it (a deadline that stops
    an inner solve is the outer solve's to report).
    """

    end: float | None
    limit: float | None = None
    clock: Callable[[], float] = time.perf_counter
    fallback: Callable[[str], Result] | None = field(default=None, repr=False)
    solve: bool = False
    enclosing_solve: "Deadline | None" = field(default=None, repr=False)
    start: float = 0.0
    reserve: float = 0.0
    parent: "Deadline | None" = field(default=None, repr=False)

    @classmethod
    def after(cls, time_limit: float | None, *, parent: "Deadline | None" = None,
              clock: Callable[[], float] | None = None, reserve: float = 0.0) -> "Deadline":
        """A deadline ``time_limit`` seconds from now, never later than ``parent``'s."""
        clock = clock or (parent.clock if parent is not None else time.perf_counter)
        now = clock()
        end = None if time_limit is None else now + time_limit
        limit = time_limit
        if parent is not None and parent.end is not None and (end is None or parent.end < end):
            end, limit = parent.end, parent.limit
        enclosing = None if parent is None else (parent if parent.solve else parent.enclosing_solve)
        return cls(end, limit, clock, enclosing_solve=enclosing, start=now, reserve=reserve, parent=parent)

    def _left(self, now: float) -> float | None:
        """Seconds left at clock reading ``now``, the reserve and the parents' deadlines counted."""
        left = None if self.end is None else self.end - now - self.reserve * max(0.0, now - self.start)
        if self.parent is not None:
            up = self.parent._left(now)
            if up is not None and (left is None or up < left):
                left = up
        return left

    def remaining(self) -> float | None:
        """Seconds left for work (negative once passed): to ``end``, less the reserve for freeing
        what was built so far; ``None`` without a limit."""
        return self._left(self.clock())

    def expired(self) -> bool:
        """Whether the deadline has passed (:meth:`remaining` <= 0)."""
        left = self.remaining()
        return left is not None and left <= 0

    def check(self, stage: str) -> None:
        """Raise :class:`DeadlineReached` naming ``stage`` if the deadline has passed."""
        if self.expired():
            raise DeadlineReached(stage, self.limit)


_current: ContextVar[Deadline | None] = ContextVar("optkit_deadline", default=None)


def current() -> Deadline | None:
    """The deadline of the exact solve running in this context, if any."""
    return _current.get()


@contextmanager
def within(time_limit: float | None, *, clock: Callable[[], float] | None = None) -> Iterator[Deadline]:
    """A deadline over a block: every exact solve inside gets at most what is left of it (the
    tighter of its own limit and this one), so several solves share one budget. ``time_limit``
    is checked as everywhere (:func:`optkit.validation.check_time_limit`); ``clock`` is the time
    source (``time.perf_counter``; a test passes its own). A deadline reached inside an exact
    solve ends that solve with a ``time_limit`` result. Code that checks the deadline outside an
    exact solve (the caller's own, calling :func:`check`; optkit's model construction or the
    rar-ddls heuristics' theta search called directly) raises :class:`DeadlineReached` once it
    has passed."""
    deadline = Deadline.after(check_time_limit(time_limit), parent=_current.get(), clock=clock)
    token = _current.set(deadline)
    try:
        yield deadline
    finally:
        _current.reset(token)


def check(stage: str) -> None:
    """:meth:`Deadline.check` on the current deadline; nothing outside an exact solve."""
    d = _current.get()
    if d is not None and d.end is not None:
        d.check(stage)


def checked(items: Iterable[T], stage: str, every: int = 1024) -> Iterator[T]:
    """``items``, with :func:`check` before the ``every``-th one and each ``every`` after it: a
    long comprehension or ``sum`` of model terms that stops at the deadline, while a short one
    (fewer than ``every`` items) runs through, as any work between two checks does."""
    d = _current.get()
    if d is None or d.end is None:
        yield from items
        return
    for i, item in enumerate(items):
        if i and i % every == 0:
            d.check(stage)
        yield item


def solver_limit(time_limit: float | None, stage: str = "starting the solver") -> float | None:
    """The time limit to give a solver: ``time_limit``, cut to what is left of the current
    deadline; :class:`DeadlineReached` when less than a millisecond is left."""
    d = _current.get()
    left = None if d is None else d.remaining()
    if left is None:
        return time_limit
    if left < _MIN_SOLVER_S:
        assert d is not None
        raise DeadlineReached(stage, d.limit)
    return left if time_limit is None else min(time_limit, left)


def offer(fallback: Callable[[str], Result]) -> None:
    """Register what the current exact solve returns if its deadline passes from now on:
    ``fallback(message)`` builds the ``time_limit`` result (typically with the warm start as
    its solution). The latest offer wins; nothing happens outside an exact solve."""
    d = _current.get()
    if d is not None:
        d.fallback = fallback


@overload
def bounded(run: F) -> F: ...


@overload
def bounded(*, teardown: float = TEARDOWN_FRACTION) -> Callable[[F], F]: ...


def bounded(run: F | None = None, *, teardown: float = TEARDOWN_FRACTION) -> F | Callable[[F], F]:
    """Make an exact algorithm's ``run(instance, *, time_limit=None, ...)`` keep its limit over
    the whole call (module docstring). ``time_limit`` is checked here with the CLI's message
    (the same check as at every entry); the function receives what is left of the tighter of
    its own and the enclosing deadline. A deadline passed inside returns a ``time_limit`` result
    (the offered incumbent, or no solution), with ``info["cut_while"]`` naming the stage; when
    the deadline that passed is an enclosing exact solve's, it propagates to that solve, which
    reports it.

    ``@bounded`` holds back :data:`TEARDOWN_FRACTION` of the elapsed time for freeing the model
    (module docstring); ``@bounded(teardown=0.0)`` holds back none, for a search that builds
    nothing to free (the brute forces)."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, time_limit: Any = None, **kwargs: Any) -> Any:
            limit = check_time_limit(time_limit)
            deadline = Deadline.after(limit, parent=_current.get(), reserve=teardown)
            deadline.solve = True
            outer = deadline.enclosing_solve
            token = _current.set(deadline)
            try:
                left = deadline.remaining()  # passed already (a 1 ns limit): the run's first check stops it
                return fn(*args, time_limit=None if left is None else max(left, _MIN_LEFT_S), **kwargs)
            except DeadlineReached as cut:
                if outer is not None and outer.expired():
                    raise
                message = str(cut)
                res = deadline.fallback(message) if deadline.fallback is not None else Result(Status.TIME_LIMIT)
                res.status = Status.TIME_LIMIT
                res.message = message
                res.info = {**res.info, "cut_while": cut.stage}
                return res
            finally:
                _current.reset(token)

        return wrapper  # type: ignore[return-value]

    return decorate if run is None else decorate(run)
