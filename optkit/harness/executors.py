"""Where tasks run: a local pool, or an existing Dask distributed cluster.

Both executors hand every task to :func:`optkit.harness.worker.run_task`, which runs it in its
own child process under the hard time limit, and yield rows in the order tasks finish. The
caller (:func:`optkit.harness.compare.compare`) writes each row to the store as it arrives.

* :class:`LocalExecutor`: ``jobs`` threads, each waiting on one child process at a time, so at
  most ``jobs`` tasks run at once (default ``os.cpu_count()``).
* :class:`DaskExecutor`: ``distributed.Client(address)``; ``run_task`` runs inside the Dask
  workers (so the hard limit holds there too) and each worker's thread count bounds its
  concurrency. Workers need optkit and the formulation installed (and
  ``OPTKIT_FORMULATIONS`` and ``OPTKIT_ALGORITHMS`` set where plug-ins are used). No cluster code of our own.
  A worker under a nanny (the default of ``dask worker``) is a daemonic process, which may not
  start ``multiprocessing`` children, so there ``run_task`` hands each task to the worker's
  long-lived task server (:mod:`optkit.harness.server`), which starts it from a preloaded
  forkserver as the local pool does: no per-task interpreter start. The executor starts every
  connected worker's server as soon as it connects (:func:`optkit.harness.server.warm_up`).
  A scheduler that does not answer within :func:`connect_timeout` seconds is an
  :class:`~optkit.errors.InputError` naming ``--scheduler``. Rows come back exactly once per
  task: a task whose worker dies is run again by Dask on another worker (up to Dask's
  ``distributed.scheduler.allowed-failures``, then it becomes an ``error`` row).

A script that calls :func:`~optkit.harness.compare.compare` needs the usual
``if __name__ == "__main__":`` guard of multiprocessing code: worker processes import the
main module.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import threading
import uuid
from typing import Any, Iterator, Protocol, Sequence

from optkit.errors import InputError
from optkit.harness.tasks import Task
from optkit.harness.worker import DEFAULT_GRACE_S, kill_live_children, make_row, run_task

__all__ = [
    "Executor", "LocalExecutor", "DaskExecutor", "make_executor", "CONNECT_TIMEOUT_S", "CONNECT_TIMEOUT_ENV",
    "connect_timeout",
]

CONNECT_TIMEOUT_S = 10.0
"""Seconds :class:`DaskExecutor` waits for a scheduler to answer before giving up, unless the
environment variable ``OPTKIT_SCHEDULER_TIMEOUT`` gives another number of seconds."""
CONNECT_TIMEOUT_ENV = "OPTKIT_SCHEDULER_TIMEOUT"


def connect_timeout() -> float:
    """:data:`CONNECT_TIMEOUT_S`, or ``$OPTKIT_SCHEDULER_TIMEOUT`` (a number of seconds > 0)."""
    text = os.environ.get(CONNECT_TIMEOUT_ENV, "").strip()
    if not text:
        return CONNECT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise InputError(CONNECT_TIMEOUT_ENV, f"must be a number of seconds > 0, got {text!r}")
    return value


class Executor(Protocol):
    """Runs tasks and yields their rows as they finish."""

    def run(self, tasks: Sequence[Task]) -> Iterator[dict[str, Any]]:
        """Yield one row per task, in completion order."""
        ...

    def close(self) -> None:
        """Release workers and connections."""
        ...

    @property
    def description(self) -> str:
        """One line naming where tasks run (for progress output)."""
        ...


class LocalExecutor:
    """At most ``jobs`` concurrent tasks on this machine, each in a fresh child process.

    Parameters
    ----------
    jobs
        Concurrent tasks; default ``os.cpu_count()``.
    grace_s
        Start-up grace of the hard time limit (see :func:`~optkit.harness.worker.hard_limit`).
    method
        Process start method for :func:`~optkit.harness.worker.run_task` (default: its own).
    """

    def __init__(self, jobs: int | None = None, *, grace_s: float = DEFAULT_GRACE_S, method: str | None = None) -> None:
        if jobs is None:
            jobs = os.cpu_count() or 1
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise InputError("jobs", f"must be an integer >= 1, got {jobs!r}")
        self.jobs = jobs
        self.grace_s = grace_s
        self.method = method

    @property
    def description(self) -> str:
        return f"local, {self.jobs} at a time"

    def run(self, tasks: Sequence[Task]) -> Iterator[dict[str, Any]]:
        """Yield rows as tasks finish; on interruption, cancel queued tasks and kill running ones."""
        if not tasks:
            return
        pool = cf.ThreadPoolExecutor(max_workers=min(self.jobs, len(tasks)), thread_name_prefix="optkit-task")
        cancel = threading.Event()
        finished = False
        try:
            futures = {pool.submit(run_task, t, grace_s=self.grace_s, method=self.method, cancel=cancel): t
                       for t in tasks}
            for fut in cf.as_completed(futures):
                try:
                    yield fut.result()
                except Exception as exc:  # noqa: BLE001 - the harness itself failed; record, go on
                    yield make_row(futures[fut], status="error", message=f"harness: {type(exc).__name__}: {exc}")
            finished = True
        finally:
            if not finished:
                cancel.set()  # children still starting give up as soon as they are up
                pool.shutdown(wait=False, cancel_futures=True)
                kill_live_children()
            pool.shutdown(wait=True)

    def close(self) -> None:
        """Nothing to release: the pool lives only while :meth:`run` runs."""


class DaskExecutor:
    """Tasks on a Dask distributed cluster.

    Parameters
    ----------
    scheduler
        A scheduler address (``tcp://host:8786``) or an existing ``distributed.Client``.
    grace_s
        Start-up grace of the hard time limit inside the workers.
    connect_timeout_s
        Seconds to wait for the scheduler at an address (default
        :func:`connect_timeout`).
    """

    def __init__(self, scheduler: Any, *, grace_s: float = DEFAULT_GRACE_S,
                 connect_timeout_s: float | None = None) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise InputError("--scheduler", "needs Dask distributed: install optkit[distributed]") from None
        self.grace_s = grace_s
        if isinstance(scheduler, str):
            if connect_timeout_s is None:
                connect_timeout_s = connect_timeout()
            _probe_scheduler(scheduler, connect_timeout_s)
            try:
                self.client = Client(scheduler, timeout=f"{connect_timeout_s}s")
            except Exception as exc:  # noqa: BLE001 - it went away between the probe and now
                raise InputError("--scheduler", f"cannot connect to {scheduler!r}: {_one_line(exc)}") from None
            self._own_client = True
        else:
            self.client = scheduler
            self._own_client = False
        try:  # start each worker's task server now (its imports overlap planning); best effort
            from optkit.harness.server import warm_up

            self.client.run(warm_up)
        except Exception:  # noqa: BLE001 - a worker without optkit fails its tasks visibly instead
            pass

    @property
    def description(self) -> str:
        return f"dask {self.client.scheduler.address}"

    def run(self, tasks: Sequence[Task]) -> Iterator[dict[str, Any]]:
        """Submit every task (as a plain dict) and yield rows as they complete."""
        if not tasks:
            return
        from distributed import as_completed

        sweep = uuid.uuid4().hex[:8]
        futures = {}
        for t in tasks:
            fut = self.client.submit(run_task, t.to_dict(), grace_s=self.grace_s, pure=False,
                                     key=f"optkit-{t.algorithm}-{t.key[:16]}-{sweep}", retries=0)
            futures[fut] = t
        finished = False
        try:
            # with_results: each row is fetched in the background the moment its task finishes, so
            # the loop storing rows never waits for one round trip per row
            for fut, result in as_completed(list(futures), with_results=True, raise_errors=False):
                try:
                    if fut.status == "finished" and isinstance(result, dict):
                        yield result
                    else:  # a lost worker (KilledWorker), a cancelled task and the like
                        exc = result[1] if isinstance(result, tuple) and len(result) == 3 else result
                        yield make_row(futures[fut], status="error", message=f"dask: {type(exc).__name__}: {exc}")
                finally:
                    fut.release()
            finished = True
        finally:
            if not finished:
                self.client.cancel(list(futures))

    def close(self) -> None:
        """Close the client if this executor opened it."""
        if self._own_client:
            self.client.close()


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _probe_scheduler(address: str, timeout_s: float) -> None:
    """Ask ``address`` who it is, within ``timeout_s`` seconds; anything but a Dask scheduler
    answering is an :class:`InputError` naming ``--scheduler``.

    A ``distributed.Client`` that fails to connect keeps an event loop alive and, when it is
    collected, blocks twice its timeout trying to close; probing first keeps a bad address to one
    line and a bounded wait.
    """
    import asyncio

    from distributed.comm import connect

    async def identity() -> Any:
        comm = await connect(address, timeout=timeout_s)
        try:
            await comm.write({"op": "identity"})
            return await comm.read()
        except Exception:  # noqa: BLE001 - something answered, but not in Dask's protocol
            return None
        finally:
            comm.abort()

    outcome: dict[str, Any] = {}

    def probe() -> None:  # in a thread of its own: the caller may be inside an event loop (Jupyter)
        try:
            outcome["answer"] = asyncio.run(asyncio.wait_for(identity(), timeout_s))
        except BaseException as exc:  # noqa: BLE001 - reported below
            outcome["error"] = exc

    thread = threading.Thread(target=probe, name="optkit-scheduler-probe", daemon=True)
    thread.start()
    thread.join()
    answer, exc = outcome.get("answer"), outcome.get("error")
    if exc is not None:
        if isinstance(exc, asyncio.TimeoutError) or str(exc).startswith("Timed out"):  # ours, or Dask's retries
            reason = f"no scheduler answered within {timeout_s:g} s"
        elif isinstance(exc, (OSError, ValueError)):  # refused, unreachable, a malformed address
            reason = _one_line(exc)
        else:  # e.g. a MemoryError from a handshake that read garbage as a frame length
            reason = f"what answers there does not speak Dask's protocol ({type(exc).__name__})"
        raise InputError("--scheduler", f"cannot connect to {address!r}: {reason}") from None
    kind = answer.get("type") if isinstance(answer, dict) else None
    if kind != "Scheduler":
        raise InputError("--scheduler", f"{address!r} is not a Dask scheduler (it answers as {kind or 'nothing known'})")


def make_executor(jobs: int | None = None, scheduler: str | None = None, *, grace_s: float = DEFAULT_GRACE_S) -> LocalExecutor | DaskExecutor:
    """A :class:`DaskExecutor` when ``scheduler`` is given, else a :class:`LocalExecutor`."""
    if scheduler:
        return DaskExecutor(scheduler, grace_s=grace_s)
    return LocalExecutor(jobs, grace_s=grace_s)
