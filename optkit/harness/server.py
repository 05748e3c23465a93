"""The task server: how a Dask worker starts runs as fast as the local pool.

The local pool starts every run from a ``forkserver`` that has already imported optkit, the
formulations and the solver libraries, so a run starts in milliseconds
(:func:`optkit.harness.worker.run_task`). A Dask worker started the way Dask's documentation
starts one (``dask worker tcp://host:8786``) runs under a nanny as a *daemonic* process, and
:mod:`multiprocessing` does not let a daemonic process start children. Without this module,
each run there started a fresh interpreter that imported everything again: about a second per
run, ten times the local pool's time on a sweep of small instances.

So, inside a daemonic process, :func:`~optkit.harness.worker.run_task` hands each task to a
*task server*: one long-lived, non-daemonic ``python`` subprocess per worker process, started on
first use (or as soon as a :class:`~optkit.harness.executors.DaskExecutor` connects, see
:func:`warm_up`) and reused by every later run. The server runs each task it receives through
:func:`~optkit.harness.worker.run_task` itself, that is, from its own preloaded forkserver, in
a fresh child process under the same hard time limit, and answers with the same row as the
local pool (plus ``info["harness"]["server"]``, the server's process id). Requests and rows
travel as JSON lines over the server's stdin and stdout; several worker threads may have runs
in the server at once. This module is the worker's side (:class:`TaskServer`,
:func:`run_in_server`); the server's own process runs :func:`optkit.harness.server_main.main`.

Guarantees (the harness's isolation, unchanged):

* a run that crashes, exits or hangs is handled inside the server exactly as in the local pool:
  an ``error`` or ``time_limit`` row; the server survives and keeps serving;
* a server that dies (killed, out of memory) turns every run waiting on it into an ``error``
  row naming it, and the next run starts a new server; a request the server never received is
  sent again to the new one;
* a server that answers nothing within the run's hard limit plus :data:`SERVER_STARTUP_S`
  (it should always answer within the hard limit: it enforces it) is killed with its runs and
  the run becomes a ``time_limit`` row;
* the server leads its own session (signals meant for the worker's terminal do not reach it)
  and exits when its parent closes its stdin, which the kernel does when the parent dies
  however it dies; it kills its runs first, and a run's child dies with the forkserver that
  started it.

The server inherits the worker's environment (``OPTKIT_FORMULATIONS``,
``OPTKIT_HARNESS_PRELOAD``) and its ``sys.path`` (as ``PYTHONPATH``), so whatever the worker can
import, its runs can.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from typing import Any, Mapping

from optkit.harness.processes import death_message, hard_limit, kill_group
from optkit.harness.rows import make_row
from optkit.harness.tasks import Task

__all__ = ["SERVER_STARTUP_S", "TaskServer", "task_server", "run_in_server", "warm_up"]

SERVER_STARTUP_S = 30.0
"""Seconds a run waits for its server beyond the run's hard limit (the server's own start-up,
its imports and its forkserver's preload, on a busy machine) before the server is deemed stuck."""
_ENTRY = "import sys; from optkit.harness.server_main import main; sys.exit(main())"


class _ServerGone(Exception):
    """The server was dead before it received the request (the request may go to a new one)."""


class TaskServer:
    """One task-server subprocess and the runs waiting on it (see the module's description)."""

    def __init__(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        self.proc = subprocess.Popen([sys.executable, "-c", _ENTRY], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, start_new_session=True)
        self.dead: str | None = None
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._ids = itertools.count()
        self._pending: dict[int, list[Any]] = {}  # id -> [Event, row or None]
        threading.Thread(target=self._read, name=f"optkit-task-server-{self.proc.pid}", daemon=True).start()

    @property
    def pid(self) -> int:
        """The server's process id."""
        return int(self.proc.pid)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                slot = self._pending.pop(msg.get("id"), None)
            if slot is not None:
                slot[1] = msg.get("row")
                slot[0].set()
        code = self.proc.wait()
        self._fail(death_message(code).replace("the worker process", f"the task server (pid {self.pid})"))

    def _fail(self, reason: str) -> None:
        """Mark the server dead and wake every run waiting on it (they get no row)."""
        with self._lock:
            if self.dead is None:
                self.dead = reason
            pending = list(self._pending.values())
            self._pending.clear()
        for slot in pending:
            slot[0].set()

    def kill(self, reason: str) -> None:
        """SIGKILL the server (its whole session: the forkserver and the runs) and fail its waiters."""
        self._fail(reason)
        kill_group(self.proc)

    def request(self, task: Mapping[str, Any], grace_s: float, timeout: float | None) -> dict[str, Any] | str:
        """Send ``task`` and wait for its row; a string says why no row came.

        Raises :class:`_ServerGone` when the server was dead before it got the request.
        """
        event = threading.Event()
        slot: list[Any] = [event, None]
        with self._lock:
            if self.dead is not None:
                raise _ServerGone(self.dead)
            rid = next(self._ids)
            self._pending[rid] = slot
        data = (json.dumps({"id": rid, "task": dict(task), "grace_s": grace_s}, allow_nan=True) + "\n").encode()
        try:
            with self._write_lock:
                assert self.proc.stdin is not None
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
        except (OSError, ValueError) as exc:
            with self._lock:
                self._pending.pop(rid, None)
            raise _ServerGone(f"the task server (pid {self.pid}) took no request: {type(exc).__name__}: {exc}") from None
        if not event.wait(timeout):
            self.kill(f"the task server (pid {self.pid}) answered nothing within {timeout:.3g} s and was killed")
            return "timeout"
        return slot[1] if slot[1] is not None else (self.dead or "the task server died")

    def close(self) -> None:
        """Close the server's stdin (it kills its runs and exits) and wait for it."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(10)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            self.kill("closed")


_server_lock = threading.Lock()
_server: TaskServer | None = None


def task_server() -> TaskServer:
    """This process's task server, started when there is none or the last one died."""
    global _server
    with _server_lock:
        if _server is None or _server.dead is not None or _server.proc.poll() is not None:
            _server = TaskServer()
        return _server


def warm_up() -> int | None:
    """In a daemonic process, start its task server now without waiting for it; returns its
    process id (``None`` elsewhere: there :func:`~optkit.harness.worker.run_task` needs none).

    :class:`~optkit.harness.executors.DaskExecutor` runs this on every worker when it connects,
    so the server's imports overlap the sweep's planning instead of delaying its first run.
    """
    import multiprocessing

    if not multiprocessing.current_process().daemon:
        return None
    return task_server().pid


def run_in_server(task: Task | Mapping[str, Any], *, grace_s: float) -> dict[str, Any]:
    """Run ``task`` through this process's task server and return its row (never raises for a
    failing run, a dead server or a stuck one: see the module's description)."""
    task = task if isinstance(task, Task) else Task.from_dict(task)
    limit = hard_limit(task.time_limit, grace_s)
    timeout = None if limit is None else limit + SERVER_STARTUP_S
    reason = ""
    for _ in range(2):  # a request the server never received goes to a fresh server once
        server = task_server()
        try:
            answer = server.request(task.to_dict(), grace_s, timeout)
        except _ServerGone as exc:
            reason = str(exc)
            continue
        if isinstance(answer, dict):
            return answer
        info: dict[str, Any] = {"harness": {"method": "task-server", "server": server.pid}}
        if answer == "timeout":
            info["harness"]["killed"] = True
            return make_row(task, status="time_limit", wall_time_s=timeout, info=info,
                            message=f"killed: the task server gave no result within the hard limit of {limit:.3g} s "
                                    f"plus {SERVER_STARTUP_S:.3g} s (time limit {task.time_limit:.3g} s)")
        return make_row(task, status="error", message=answer, info=info)
    return make_row(task, status="error", message=f"could not start a task server: {reason}",
                    info={"harness": {"method": "task-server"}})
