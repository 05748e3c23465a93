"""A paper-agnostic discrete-event driver: a heap of timed events, processed in batches.

Online policies (:mod:`optkit.online`) are objects driven by events; a formulation's simulator pushes its
events (arrivals, ends, policy wake-ups) here and handles each *instant* once: every event due
at the same time is handed over together, so a policy is consulted once per instant, and time
jumps from one event to the next (no loop over idle time).

Example
-------
>>> q = EventQueue()
>>> q.push(2.0, "end", "a"); q.push(1.0, "arrive", "b"); q.push(2.0, "arrive", "c", priority=1)
>>> seen = []
>>> drive(q, lambda t, batch: seen.append((t, [e.payload for e in batch])))
2
>>> seen
[(1.0, ['b']), (2.0, ['a', 'c'])]
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Event", "EventQueue", "drive"]


@dataclass(frozen=True)
class Event:
    """One event: when, what kind, its payload; ``priority`` orders events of one instant
    (lower first), then the order of pushing."""

    time: float
    kind: str
    payload: Any = None
    priority: int = 0


class EventQueue:
    """Min-heap of events by (time, priority, push order)."""

    __slots__ = ("_heap", "_seq")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, int, Event]] = []
        self._seq = 0

    def push(self, time: float, kind: str, payload: Any = None, *, priority: int = 0) -> None:
        ev = Event(float(time), kind, payload, priority)
        heapq.heappush(self._heap, (ev.time, priority, self._seq, ev))
        self._seq += 1

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)

    def peek_time(self) -> float | None:
        return self._heap[0][0] if self._heap else None

    def pop_batch(self) -> tuple[float, list[Event]]:
        """Remove and return every event due at the earliest time, in (priority, push) order.
        Times are compared exactly: callers put events on a common grid (e.g. slot boundaries)."""
        if not self._heap:
            raise IndexError("pop_batch from an empty EventQueue")
        t = self._heap[0][0]
        batch = []
        while self._heap and self._heap[0][0] == t:
            batch.append(heapq.heappop(self._heap)[3])
        return t, batch


def drive(queue: EventQueue, handle: Callable[[float, list[Event]], None], *,
          should_stop: Callable[[], bool] | None = None) -> int:
    """Hand each instant's batch of events to ``handle(time, batch)`` until the queue is empty
    (``handle`` may push new events, at or after ``time``) or ``should_stop()`` is true (checked
    between instants, e.g. a wall-clock limit). Returns how many instants were handled."""
    n = 0
    while queue:
        if should_stop is not None and should_stop():
            break
        t, batch = queue.pop_batch()
        handle(t, batch)
        n += 1
    return n
