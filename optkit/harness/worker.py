"""Run one task in a fresh child process under a hard time limit.

:func:`run_task` is the unit of work of every executor (local threads, Dask workers). It starts
a child process, hands it the task, and waits at most ``time_limit * 1.2 + grace_s`` seconds:

* the child calls :func:`optkit.solve.solve` (which validates the solution with the
  formulation's ``evaluate``) and sends back a row, a plain JSON-ready dict;
* a child that does not answer in time is killed with SIGKILL (its whole process group) and
  becomes a ``time_limit`` row;
* an exception becomes an ``error`` row carrying ``Type: message`` (and the traceback in
  ``info["traceback"]``); an :class:`~optkit.errors.InputError` is named as such;
* a child that dies without answering (segfault, ``os._exit``, out of memory) becomes an
  ``error`` row naming its exit code or signal.

Children start from a ``forkserver`` that has already imported optkit, the registered
formulation modules and the solver libraries (``OPTKIT_HARNESS_PRELOAD``), so a task starts in
milliseconds instead of paying the imports again; where ``forkserver`` does not exist,
``spawn`` is used. Inside a daemonic process (a Dask worker under a nanny), where
:mod:`multiprocessing` may not start children, the task goes to that process's long-lived task
server (:mod:`optkit.harness.server`), a non-daemonic subprocess that runs it exactly as above
from its own preloaded forkserver. ``method="subprocess"`` instead starts a fresh ``python``
subprocess per task, speaking JSON over its stdin and stdout; it pays the imports (about a
second), and its hard limit gets :data:`SUBPROCESS_STARTUP_S` more seconds.

A child is its own process-group leader and, on Linux, asks the kernel to kill it when its
parent dies, so killing a sweep never leaves solvers running. How children start, how long they
may run and how they are killed is :mod:`optkit.harness.processes` (shared with the bounds'
children and the task server); the row is :mod:`optkit.harness.rows`.
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.connection
import os
import socket
import subprocess
import sys
import threading
import time
import traceback
from typing import Any, Mapping

from optkit.errors import InputError
from optkit.harness.processes import (
    DEFAULT_GRACE_S, default_start_method, death_message, detach_group, forget_child, hard_limit, kill_group,
    set_parent_death_signal, start_context, track_child, watch_parent,
)
from optkit.harness.rows import make_row
from optkit.harness.tasks import Task

__all__ = ["SUBPROCESS_STARTUP_S", "run_task", "execute_task"]

_JOIN_AFTER_RESULT_S = 5.0
_CANCEL_POLL_S = 0.2
SUBPROCESS_STARTUP_S = 10.0
"""Extra seconds of the hard limit on the ``subprocess`` route, whose child imports everything."""
_SUBPROCESS_ENTRY = "import sys; from optkit.harness.worker import _subprocess_main; sys.exit(_subprocess_main())"

_forkserver_failure: str | None = None  # set when the forkserver could not start a child


class _StartError(Exception):
    """A child process could not be started."""


def _as_task(task: Task | Mapping[str, Any]) -> Task:
    return task if isinstance(task, Task) else Task.from_dict(task)


def _ensure_algorithm(problem: str, algorithm: str, targets: str | None) -> None:
    """Make the plug-in ``algorithm`` of ``problem`` known in this process, loading the parent's
    ``OPTKIT_ALGORITHMS`` value ``targets`` (a forkserver keeps the environment it started with)."""
    from optkit import registry

    if targets and algorithm not in registry.get(problem).algorithms:
        registry.load_algorithm_targets(targets)


def execute_task(task: Task | Mapping[str, Any], *, formulation_targets: str | None = None,
                 algorithm_targets: str | None = None) -> dict[str, Any]:
    """Run ``task`` in this process (no time limit enforced) and return its row.

    This is what the child process of :func:`run_task` does; it never raises for a failing
    algorithm: exceptions become ``error`` rows.
    """
    task = _as_task(task)
    if task.kind == "measure":
        if isinstance(task.params.get("algorithm"), str) and algorithm_targets:  # an extra series of a plug-in
            try:
                _ensure_algorithm(task.problem, task.params["algorithm"], algorithm_targets)
            except InputError as exc:
                return make_row(task, status="error", message=f"InputError: {exc}")
        return _execute_measure(task)
    start = time.perf_counter()
    harness = {"host": socket.gethostname(), "pid": os.getpid()}
    try:
        from optkit import registry
        from optkit.solve import solve

        registry.ensure_registered(task.problem, formulation_targets)
        _ensure_algorithm(task.problem, task.algorithm, algorithm_targets)
        result = solve(task.problem, task.instance, task.algorithm, objective=task.objective,
                       time_limit=task.time_limit, seed=task.seed, params=task.params)
    except InputError as exc:
        return make_row(task, status="error", wall_time_s=time.perf_counter() - start,
                        message=f"InputError: {exc}", info={"harness": harness})
    except BaseException as exc:  # noqa: BLE001 - every failure of an algorithm becomes a row
        if isinstance(exc, KeyboardInterrupt):
            raise
        tb = traceback.format_exc(limit=-12)
        return make_row(task, status="error", wall_time_s=time.perf_counter() - start,
                        message=f"{type(exc).__name__}: {exc}",
                        info={"harness": harness, "traceback": tb})
    info = dict(result.info or {})
    info["harness"] = harness
    return make_row(task, status=result.status.value, objective=result.objective, bound=result.bound,
                    wall_time_s=result.wall_time_s, solution=result.solution, metrics=result.metrics,
                    info=info, message=result.message, anytime=result.anytime)


def _execute_measure(task: Task) -> dict[str, Any]:
    """Run a claim's measuring function (``task.algorithm`` = ``module:function``) with
    ``task.params`` and ``seed``, with the store's memo folder ``task.memo`` (:mod:`optkit.memo`);
    its returned mapping becomes the row's ``metrics`` (status ``feasible``), an exception an
    ``error`` row."""
    import importlib

    from optkit import memo

    start = time.perf_counter()
    harness = {"host": socket.gethostname(), "pid": os.getpid()}
    try:
        module_name, _, name = task.algorithm.partition(":")
        fn = getattr(importlib.import_module(module_name), name)
        with memo.using(task.memo):
            values = fn(**task.params, seed=task.seed)
        if not isinstance(values, Mapping):
            raise TypeError(f"{task.algorithm} returned {type(values).__name__}, not a mapping of claim values")
    except BaseException as exc:  # noqa: BLE001 - a failing measurement becomes a row
        if isinstance(exc, KeyboardInterrupt):
            raise
        return make_row(task, status="error", wall_time_s=time.perf_counter() - start,
                        message=f"{type(exc).__name__}: {exc}",
                        info={"harness": harness, "traceback": traceback.format_exc(limit=-12)})
    return make_row(task, status="feasible", wall_time_s=time.perf_counter() - start, metrics=values,
                    info={"harness": harness})


# ----------------------------------------------------------------------------- the child and its parent
def _child_main(task_dict: dict[str, Any], result_conn: Any, alive: Any, targets: str,
                algorithm_targets: str = "") -> None:
    """Entry point of the child process (multiprocessing start methods)."""
    detach_group()
    set_parent_death_signal()
    watch_parent(alive)
    row = execute_task(task_dict, formulation_targets=targets, algorithm_targets=algorithm_targets or None)
    try:
        result_conn.send(row)
    except Exception as exc:  # noqa: BLE001 - e.g. a solution that cannot be pickled
        result_conn.send(make_row(Task.from_dict(task_dict), status="error", wall_time_s=row.get("wall_time_s"),
                                  message=f"could not send the result back: {type(exc).__name__}: {exc}"))
    result_conn.close()


def _timeout_row(task: Task, elapsed: float, limit: float, method: str) -> dict[str, Any]:
    return make_row(task, status="time_limit", wall_time_s=elapsed,
                    message=f"killed: no result within the hard limit of {limit:.3g} s "
                            f"(time limit {task.time_limit:.3g} s)",
                    info={"harness": {"method": method, "killed": True}})


def _wait_cancellable(objects: list[Any], limit: float | None, cancel: threading.Event | None) -> list[Any]:
    """``multiprocessing.connection.wait`` up to ``limit`` seconds, giving up early once ``cancel`` is set."""
    if cancel is None:
        return multiprocessing.connection.wait(objects, timeout=limit)
    deadline = None if limit is None else time.monotonic() + limit
    while True:
        step = _CANCEL_POLL_S if deadline is None else min(_CANCEL_POLL_S, max(0.0, deadline - time.monotonic()))
        ready = multiprocessing.connection.wait(objects, timeout=step)
        if ready or cancel.is_set() or (deadline is not None and time.monotonic() >= deadline):
            return ready


def _run_multiprocessing(task: Task, limit: float | None, method: str,
                         cancel: threading.Event | None = None) -> dict[str, Any]:
    ctx = start_context(method)
    recv_conn, send_conn = ctx.Pipe(duplex=False)
    alive_r, alive_w = ctx.Pipe(duplex=False)
    targets = os.environ.get("OPTKIT_FORMULATIONS", "")
    proc = ctx.Process(target=_child_main, args=(task.to_dict(), send_conn, alive_r, targets,
                                                 os.environ.get("OPTKIT_ALGORITHMS", "")),
                       name=f"optkit-{task.algorithm}-{task.key[:8]}", daemon=False)
    try:
        proc.start()
    except (OSError, EOFError, RuntimeError) as exc:
        recv_conn.close()
        alive_w.close()
        raise _StartError(f"{type(exc).__name__}: {exc}") from exc
    finally:
        send_conn.close()
        alive_r.close()
    track_child(proc)
    start = time.monotonic()
    try:
        ready = _wait_cancellable([recv_conn, proc.sentinel], limit, cancel)
        if cancel is not None and cancel.is_set() and not ready:
            kill_group(proc)
            proc.join()
            return make_row(task, status="error", wall_time_s=time.monotonic() - start,
                            message="cancelled: the sweep was interrupted", info={"harness": {"method": method}})
        row: dict[str, Any] | None = None
        if ready and recv_conn.poll(0):
            try:
                row = recv_conn.recv()
            except (EOFError, OSError):
                row = None
        if row is None and not ready:
            kill_group(proc)
            proc.join()
            return _timeout_row(task, time.monotonic() - start, limit or 0.0, method)
        if row is None:
            proc.join(_JOIN_AFTER_RESULT_S)
            return make_row(task, status="error", wall_time_s=time.monotonic() - start,
                            message=death_message(proc.exitcode),
                            info={"harness": {"method": method, "exit_code": proc.exitcode}})
        proc.join(_JOIN_AFTER_RESULT_S)
        if proc.is_alive():  # lingering threads of the algorithm: the result is in, stop it
            kill_group(proc)
            proc.join()
        row.setdefault("info", {}).setdefault("harness", {})["method"] = method
        return row
    finally:
        alive_w.close()
        recv_conn.close()
        forget_child(proc)
        if proc.is_alive():
            kill_group(proc)
            proc.join()
        try:
            proc.close()
        except ValueError:
            pass


def _run_subprocess(task: Task, limit: float | None, cancel: threading.Event | None = None) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    payload = json.dumps({"task": task.to_dict(), "targets": os.environ.get("OPTKIT_FORMULATIONS", ""),
                          "algorithm_targets": os.environ.get("OPTKIT_ALGORITHMS", "")}, allow_nan=True).encode()
    proc = subprocess.Popen([sys.executable, "-c", _SUBPROCESS_ENTRY], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=env, start_new_session=True)
    track_child(proc)
    start = time.monotonic()
    try:
        deadline = None if limit is None else start + limit
        out = None
        pending: bytes | None = payload
        while out is None:
            step = None if deadline is None else max(0.0, deadline - time.monotonic())
            if cancel is not None:
                step = _CANCEL_POLL_S if step is None else min(step, _CANCEL_POLL_S)
            try:
                out, _ = proc.communicate(pending, timeout=step)
            except subprocess.TimeoutExpired:
                pending = None  # communicate() keeps feeding stdin across retries
                if cancel is not None and cancel.is_set():
                    kill_group(proc)
                    proc.communicate()
                    return make_row(task, status="error", wall_time_s=time.monotonic() - start,
                                    message="cancelled: the sweep was interrupted",
                                    info={"harness": {"method": "subprocess"}})
                if deadline is not None and time.monotonic() >= deadline:
                    kill_group(proc)
                    proc.communicate()
                    return _timeout_row(task, time.monotonic() - start, limit or 0.0, "subprocess")
        lines = [ln for ln in out.decode(errors="replace").splitlines() if ln.strip()]
        if lines:
            try:
                row = json.loads(lines[-1])
                row.setdefault("info", {}).setdefault("harness", {})["method"] = "subprocess"
                return row
            except json.JSONDecodeError:
                pass
        return make_row(task, status="error", wall_time_s=time.monotonic() - start,
                        message=death_message(proc.returncode),
                        info={"harness": {"method": "subprocess", "exit_code": proc.returncode}})
    finally:
        forget_child(proc)
        if proc.poll() is None:
            kill_group(proc)
            proc.wait()


def run_task(
    task: Task | Mapping[str, Any],
    *,
    grace_s: float = DEFAULT_GRACE_S,
    method: str | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, Any]:
    """Run ``task`` in a fresh child process under a hard time limit; return its row.

    Parameters
    ----------
    task
        A :class:`Task` or its :meth:`Task.to_dict` (what Dask ships).
    grace_s
        Start-up grace added to ``time_limit * 1.2`` before the child is killed.
    method
        ``forkserver``, ``spawn``, ``fork``, ``subprocess`` (a fresh interpreter) or ``server``
        (this process's long-lived task server, :mod:`optkit.harness.server`); default
        ``forkserver`` (``spawn`` where it does not exist), and ``server`` inside a daemonic
        process (a Dask worker under its nanny).
    cancel
        Once set, the child is killed and an ``error`` row ("cancelled") returned at once
        (the local executor sets it when a sweep is interrupted).

    Returns
    -------
    dict
        The row to store. Never raises for a failing algorithm; the row's ``status`` says what
        happened.
    """
    global _forkserver_failure
    task = _as_task(task)
    limit = hard_limit(task.time_limit, grace_s)
    if method is None:
        if multiprocessing.current_process().daemon:
            method = "server"
        else:
            method = default_start_method()
            if method == "forkserver" and _forkserver_failure is not None:
                method = "spawn"
    if cancel is not None and cancel.is_set():
        return make_row(task, status="error", message="cancelled: the sweep was interrupted")
    if method == "server":
        from optkit.harness.server import run_in_server

        return run_in_server(task, grace_s=grace_s)
    if method == "subprocess":
        return _run_subprocess(task, None if limit is None else limit + SUBPROCESS_STARTUP_S, cancel)
    try:
        return _run_multiprocessing(task, limit, method, cancel)
    except _StartError as exc:
        if method != "forkserver":
            return make_row(task, status="error", message=f"could not start a worker process: {exc}",
                            info={"harness": {"method": method}})
        # A forkserver that cannot start children: fall back to spawn rather than lose the sweep.
        _forkserver_failure = str(exc)
        row = run_task(task, grace_s=grace_s, method="spawn", cancel=cancel)
        row.setdefault("info", {}).setdefault("harness", {})["fallback"] = f"spawn; forkserver failed: {exc}"
        return row


def _subprocess_main() -> int:
    """Subprocess entry point: read a task as JSON on stdin, print its row on stdout."""
    real_stdout = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything the algorithm prints goes to stderr, not into the row
    sys.stdout = sys.stderr
    set_parent_death_signal()
    payload = json.loads(sys.stdin.read())
    row = execute_task(payload["task"], formulation_targets=payload.get("targets") or None,
                       algorithm_targets=payload.get("algorithm_targets") or None)
    real_stdout.write(json.dumps(row, allow_nan=True) + "\n")
    real_stdout.flush()
    return 0

