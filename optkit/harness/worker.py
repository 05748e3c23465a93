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
parent dies, so killing a sweep never leaves solvers running.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from enum import Enum
from typing import Any, Mapping

from optkit.errors import InputError
from optkit.harness.tasks import Task

__all__ = [
    "HARD_LIMIT_FACTOR", "DEFAULT_GRACE_S", "DEFAULT_SOLVER_PRELOAD", "SUBPROCESS_STARTUP_S", "ROW_FIELDS", "hard_limit",
    "run_task", "execute_task", "make_row", "preload_modules", "default_start_method",
    "kill_live_children",
]

HARD_LIMIT_FACTOR = 1.2
"""The child is killed after ``time_limit * HARD_LIMIT_FACTOR + grace_s`` seconds."""
DEFAULT_GRACE_S = 3.0
"""Seconds of start-up grace added to the hard limit (imports a preload did not cover)."""
DEFAULT_SOLVER_PRELOAD = ("ortools.sat.python.cp_model", "pyomo.environ")
"""Solver libraries the forkserver imports once (override with ``OPTKIT_HARNESS_PRELOAD``,
a comma-separated list of module names; empty preloads none)."""
_JOIN_AFTER_RESULT_S = 5.0
_CANCEL_POLL_S = 0.2
SUBPROCESS_STARTUP_S = 10.0
"""Extra seconds of the hard limit on the ``subprocess`` route, whose child imports everything."""
_SUBPROCESS_ENTRY = "import sys; from optkit.harness.worker import _subprocess_main; sys.exit(_subprocess_main())"

ROW_FIELDS = (
    "key", "problem", "instance_name", "instance_hash", "source", "algorithm", "objective_name",
    "params", "seed", "time_limit", "status", "objective", "bound", "wall_time_s", "solution",
    "metrics", "info", "message", "finished_at", "anytime",
)
"""The keys of every row :func:`run_task` returns (and the columns of the result store).
``anytime`` is the run's trajectory (:mod:`optkit.anytime`); a row whose run recorded none (a
killed child, a crash, a measurement) gets its final point, or ``[]`` without objective and bound.
Only rows stored before the store's schema 2 have none (``NULL``)."""

_live_lock = threading.Lock()
_live: set[Any] = set()  # multiprocessing.Process or subprocess.Popen objects still running
_ctx_lock = threading.Lock()
_contexts: dict[str, Any] = {}
_forkserver_failure: str | None = None  # set when the forkserver could not start a child


class _StartError(Exception):
    """A child process could not be started."""


# ----------------------------------------------------------------------------- rows
def _json_safe(value: Any) -> Any:
    """``value`` made of dicts, lists, str, int, float, bool and None only (numpy included)."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, Enum):
        return _json_safe(value.value)
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_json_safe(v) for v in value]
    tolist = getattr(value, "tolist", None)  # numpy scalars and arrays
    if callable(tolist):
        return _json_safe(tolist())
    return repr(value)


def _number_or_none(value: Any) -> float | list[float] | None:
    value = _json_safe(value)
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) or value is None:
        return None if value is None else float(value)
    if isinstance(value, list):  # a lexicographic objective
        return value
    return None


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def make_row(
    task: Task,
    *,
    status: str,
    objective: Any = None,
    bound: Any = None,
    wall_time_s: float | None = None,
    solution: Any = None,
    metrics: Mapping[str, Any] | None = None,
    info: Mapping[str, Any] | None = None,
    message: str = "",
    anytime: Any = None,
) -> dict[str, Any]:
    """The row (a plain JSON-ready dict with :data:`ROW_FIELDS`) recording one finished task."""
    return {
        "key": task.key,
        "problem": task.problem,
        "instance_name": task.instance_name,
        "instance_hash": task.instance_hash,
        "source": task.source,
        "algorithm": task.algorithm,
        "objective_name": task.objective,
        "params": _json_safe(task.params),
        "seed": task.seed,
        "time_limit": task.time_limit,
        "status": str(getattr(status, "value", status)),
        "objective": _number_or_none(objective),
        "bound": _number_or_none(bound),
        "wall_time_s": None if wall_time_s is None else float(wall_time_s),
        "solution": _json_safe(solution),
        "metrics": _json_safe(dict(metrics or {})),
        "info": _json_safe(dict(info or {})),
        "message": str(message or ""),
        "finished_at": _now(),
        "anytime": _json_safe(anytime) if anytime is not None else _final_point(task, status, objective, bound,
                                                                                 wall_time_s, metrics),
    }


def _final_point(task: Task, status: Any, objective: Any, bound: Any, wall_time_s: float | None,
                 metrics: Mapping[str, Any] | None) -> list[list[float | None]]:
    """The trajectory of a row whose run recorded none (a heuristic's own row, a killed or failed
    run, a measurement): its final point, or ``[]`` (nothing found, nothing proven)."""
    from optkit.result import scalar_objective

    st = str(getattr(status, "value", status))
    if st in ("error", "infeasible", "no_solution"):
        objective, bound = None, (None if st != "infeasible" else bound)
    key = scalar_objective(_json_safe(objective), dict(metrics or {}), task.objective)
    b = _number_or_none(bound)
    b = b if isinstance(b, float) and math.isfinite(b) else None
    if key is None and b is None:
        return []
    return [[float(wall_time_s or 0.0), key, b]]


def _as_task(task: Task | Mapping[str, Any]) -> Task:
    return task if isinstance(task, Task) else Task.from_dict(task)


def _ensure_algorithm(problem: str, algorithm: str, targets: str | None) -> None:
    """Make the plug-in ``algorithm`` of ``problem`` known in this process, loading the parent's
    ``OPTKIT_ALGORITHMS`` value ``targets`` (a forkserver keeps the environment it started with)."""
    from optkit import registry

    if targets and algorithm not in registry.get(problem).algorithms:
        registry.load_algorithm_targets(targets)


def _ensure_registered(problem: str, targets: str | None) -> None:
    """Make ``problem`` known in this process, loading ``OPTKIT_FORMULATIONS``-style targets.

    A forkserver keeps the environment it was started with; the parent passes its current
    ``OPTKIT_FORMULATIONS`` so a formulation registered after the server started is found too.
    """
    from optkit import registry

    try:
        registry.get(problem)
        return
    except InputError:
        if not targets:
            raise
    import importlib

    from optkit.formulation import Formulation

    for target in filter(None, (t.strip() for t in targets.split(","))):
        module_name, _, attr = target.partition(":")
        obj: Any = importlib.import_module(module_name)
        for part in (attr or "FORMULATION").split("."):
            obj = getattr(obj, part)
        if isinstance(obj, Formulation) and obj.name == problem:
            registry.register(obj)
            return
    registry.get(problem)  # raises the registry's InputError naming the known problems


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
        from optkit.solve import solve

        _ensure_registered(task.problem, formulation_targets)
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


# ----------------------------------------------------------------------------- process plumbing
def hard_limit(time_limit: float | None, grace_s: float = DEFAULT_GRACE_S) -> float | None:
    """Seconds after which a task's child is killed: ``time_limit * 1.2 + grace_s``."""
    if time_limit is None or not math.isfinite(time_limit):
        return None
    return float(time_limit) * HARD_LIMIT_FACTOR + float(grace_s)


def preload_modules() -> list[str]:
    """Modules the forkserver imports once: optkit, every registered formulation, solvers.

    Formulation modules are included only when they import cleanly in this process (a
    forkserver whose preload raises would fail every task).
    """
    from importlib.metadata import entry_points

    from optkit import registry

    mods = ["optkit", "optkit.solve", "optkit.harness.worker"]
    try:
        registry.all_formulations()
    except Exception:  # noqa: BLE001 - a broken plug-in must not stop the harness; its tasks report it
        pass
    candidates = [ep.module for ep in entry_points(group=registry.ENTRY_POINT_GROUP)]
    candidates += [t.strip().partition(":")[0] for t in os.environ.get("OPTKIT_FORMULATIONS", "").split(",") if t.strip()]
    candidates += [ep.module for ep in entry_points(group=registry.ALGORITHM_ENTRY_POINT_GROUP)]
    candidates += [t.partition(":")[0] for t in registry.algorithm_targets(os.environ.get(registry.ALGORITHMS_ENV))]
    mods += [m for m in candidates if m in sys.modules]
    extra = os.environ.get("OPTKIT_HARNESS_PRELOAD")
    mods += list(DEFAULT_SOLVER_PRELOAD) if extra is None else [m.strip() for m in extra.split(",") if m.strip()]
    return list(dict.fromkeys(mods))


def default_start_method() -> str:
    """``forkserver`` where the platform has it, else ``spawn``."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def _context(method: str) -> Any:
    with _ctx_lock:
        ctx = _contexts.get(method)
        if ctx is None:
            ctx = multiprocessing.get_context(method)
            if method == "forkserver":
                ctx.set_forkserver_preload(preload_modules())
            _contexts[method] = ctx
        return ctx


def _set_parent_death_signal() -> None:
    """On Linux, have the kernel SIGKILL this process when its parent dies (best effort)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort only
        pass


def _detach_group() -> None:
    if hasattr(os, "setpgrp"):
        try:
            os.setpgrp()
        except OSError:
            pass


def _watch_parent(alive: Any) -> None:
    """Exit as soon as the parent closes (or loses) its end of the ``alive`` pipe."""
    def watch() -> None:
        try:
            alive.recv_bytes()
        except (EOFError, OSError):
            pass
        os._exit(70)

    threading.Thread(target=watch, name="optkit-parent-watch", daemon=True).start()


def _child_main(task_dict: dict[str, Any], result_conn: Any, alive: Any, targets: str,
                algorithm_targets: str = "") -> None:
    """Entry point of the child process (multiprocessing start methods)."""
    _detach_group()
    _set_parent_death_signal()
    _watch_parent(alive)
    row = execute_task(task_dict, formulation_targets=targets, algorithm_targets=algorithm_targets or None)
    try:
        result_conn.send(row)
    except Exception as exc:  # noqa: BLE001 - e.g. a solution that cannot be pickled
        result_conn.send(make_row(Task.from_dict(task_dict), status="error", wall_time_s=row.get("wall_time_s"),
                                  message=f"could not send the result back: {type(exc).__name__}: {exc}"))
    result_conn.close()


def _kill(proc: Any) -> None:
    """SIGKILL ``proc`` and its process group (the child leads its own group)."""
    pid = proc.pid
    if pid is None:
        return
    if hasattr(os, "killpg"):
        try:
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
    try:
        proc.kill()
    except (ProcessLookupError, OSError, ValueError):
        pass


def kill_live_children() -> int:
    """SIGKILL every child this process started that is still running; returns how many.

    Executors call this when a sweep is interrupted.
    """
    with _live_lock:
        procs = list(_live)
    for p in procs:
        _kill(p)
    return len(procs)


def _death_message(code: int | None) -> str:
    if code is None:
        return "the worker process died without a result"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the worker process was killed by {name} without a result"
    return f"the worker process exited with code {code} without a result"


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
    ctx = _context(method)
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
    with _live_lock:
        _live.add(proc)
    start = time.monotonic()
    try:
        ready = _wait_cancellable([recv_conn, proc.sentinel], limit, cancel)
        if cancel is not None and cancel.is_set() and not ready:
            _kill(proc)
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
            _kill(proc)
            proc.join()
            return _timeout_row(task, time.monotonic() - start, limit or 0.0, method)
        if row is None:
            proc.join(_JOIN_AFTER_RESULT_S)
            return make_row(task, status="error", wall_time_s=time.monotonic() - start,
                            message=_death_message(proc.exitcode),
                            info={"harness": {"method": method, "exit_code": proc.exitcode}})
        proc.join(_JOIN_AFTER_RESULT_S)
        if proc.is_alive():  # lingering threads of the algorithm: the result is in, stop it
            _kill(proc)
            proc.join()
        row.setdefault("info", {}).setdefault("harness", {})["method"] = method
        return row
    finally:
        alive_w.close()
        recv_conn.close()
        with _live_lock:
            _live.discard(proc)
        if proc.is_alive():
            _kill(proc)
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
    with _live_lock:
        _live.add(proc)
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
                    _kill(proc)
                    proc.communicate()
                    return make_row(task, status="error", wall_time_s=time.monotonic() - start,
                                    message="cancelled: the sweep was interrupted",
                                    info={"harness": {"method": "subprocess"}})
                if deadline is not None and time.monotonic() >= deadline:
                    _kill(proc)
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
                        message=_death_message(proc.returncode),
                        info={"harness": {"method": "subprocess", "exit_code": proc.returncode}})
    finally:
        with _live_lock:
            _live.discard(proc)
        if proc.poll() is None:
            _kill(proc)
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
    _set_parent_death_signal()
    payload = json.loads(sys.stdin.read())
    row = execute_task(payload["task"], formulation_targets=payload.get("targets") or None,
                       algorithm_targets=payload.get("algorithm_targets") or None)
    real_stdout.write(json.dumps(row, allow_nan=True) + "\n")
    real_stdout.flush()
    return 0

