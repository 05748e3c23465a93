"""Reuse of a measurement's costly parts across the measurements of one store.

``optkit reproduce`` measures an experiment once per reading setting and seed, and a reading
often changes only one of the things a measurement computes: ``tau`` changes A-SRPT's run but
not the five baselines' runs on the same workload; ``tiresias_spread`` changes Tiresias's replay
of the ITP trace but not Titan's. A measuring function wraps such a part in :func:`cached`, with
a key that holds *everything the part reads* (the policy, the readings it takes, the seed, the
workload's content hash or the trace's files), and the harness gives every measurement of one
store the same memo folder, ``STORE.memo/`` beside the measurement store (:func:`using`, set by
:func:`optkit.harness.worker.execute_task` from :attr:`optkit.harness.tasks.Task.memo`). A part
is then computed once per store instead of once per reading setting: under ``--readings all``
Titan's replay runs once per (Titan reading combination, seed) instead of once per combination
of every policy's readings.

Decisions, written down:

* **Same semantics as the store.** What the memo holds is reused, as the store's measurements
  are, until ``optkit reproduce --rerun`` (which empties it first) or ``--no-memo`` (which
  neither reads nor writes it). A code change between a run and its resumption is the user's
  to mark with ``--rerun``, as for the store.
* **Hits equal misses.** A value passes through JSON whether it was just computed or read back
  (numpy scalars and arrays become Python numbers and lists; floats round-trip exactly), so a
  measurement's values do not depend on which of its parts were reused. A value JSON cannot
  hold is a :class:`TypeError`: a part that returns one is not memoised by mistake.
* **Only where the folder exists.** A measuring function called directly, or a Dask worker on a
  machine that does not have the parent's folder, computes every part (nothing is created on a
  machine that is not ours to write on). A file that cannot be read (a torn or foreign file) is
  computed again and replaced.
* **Concurrency.** Each value is written to a temporary file and renamed into place; two
  measurements computing the same part at once both compute it, and either equal value wins.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

__all__ = ["cached", "using", "active", "folder_for", "key_hash"]

T = TypeVar("T")
_folder: Path | None = None


def folder_for(store: str | Path) -> Path:
    """The memo folder of the measurement store ``store``: ``STORE.memo`` beside it."""
    p = Path(store)
    return p.with_name(p.name + ".memo")


@contextlib.contextmanager
def using(folder: str | Path | None) -> Iterator[Path | None]:
    """Within the block, :func:`cached` reads and writes ``folder`` (``None`` or ``""``, or a
    folder that does not exist: no memo)."""
    global _folder
    before = _folder
    path = Path(folder) if folder else None
    _folder = path if path is not None and path.is_dir() else None
    try:
        yield _folder
    finally:
        _folder = before


def active() -> bool:
    """Whether :func:`cached` has a memo folder here (a caller may skip hashing a key otherwise)."""
    return _folder is not None


def _plain(x: Any) -> Any:
    """``json.dumps`` default: numpy scalars and arrays as Python numbers and lists."""
    if hasattr(x, "tolist"):
        return x.tolist()
    if hasattr(x, "item"):
        return x.item()
    raise TypeError(f"a memoised value holds a {type(x).__name__}, which JSON cannot hold")


def key_hash(namespace: str, key: Any) -> str:
    """SHA-256 of the canonical JSON of ``[namespace, key]`` (the file name of a memoised value)."""
    text = json.dumps([namespace, key], sort_keys=True, separators=(",", ":"), default=_plain, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def cached(namespace: str, key: Any, compute: Callable[[], T]) -> T:
    """``compute()``, or the value stored for (``namespace``, ``key``) in the memo folder.

    ``key`` must name everything ``compute`` reads (JSON-ready: numbers, strings, lists, dicts).
    The value is returned after a JSON round trip in both cases (module docstring).

    Examples
    --------
    >>> import tempfile
    >>> calls = []
    >>> def part():
    ...     calls.append(1)
    ...     return {"total": 1.5}
    >>> with using(tempfile.mkdtemp()):
    ...     a = cached("example", {"policy": "fifo", "seed": 0}, part)
    ...     b = cached("example", {"policy": "fifo", "seed": 0}, part)
    >>> a == b == {"total": 1.5}, len(calls)
    (True, 1)
    """
    folder = _folder
    path = folder / namespace / f"{key_hash(namespace, key)}.json" if folder is not None else None
    if path is not None:
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            pass  # absent, torn or foreign: compute it again
    text = json.dumps(compute(), default=_plain, allow_nan=True)
    if path is not None:
        try:
            path.parent.mkdir(exist_ok=True)
            tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp")
            tmp.write_text(text)
            os.replace(tmp, path)
        except OSError:
            pass  # a memo that cannot be written costs time, never a measurement
    return json.loads(text)
