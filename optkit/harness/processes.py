"""The harness's child processes: how they start, how long they may run, how they die.

Every process the harness starts to run something under a hard limit (a task's child,
:mod:`optkit.harness.worker`; a formulation's bound, :mod:`optkit.harness.bounds`; the
task server's runs, :mod:`optkit.harness.server_main`) goes through this module:

* :func:`start_context`: the :mod:`multiprocessing` context of a start method, one per method
  and process; a ``forkserver`` context preloads :func:`preload_modules` (optkit, the registered
  formulations, the solver libraries), so a child starts in milliseconds;
* :func:`hard_limit`: the seconds after which a task's child is killed;
* a child calls :func:`detach_group`, :func:`set_parent_death_signal` and :func:`watch_parent`
  first, so it leads its own process group and dies with its parent however that dies;
* :func:`track_child` / :func:`forget_child` record the children still running, which
  :func:`kill_live_children` kills (a sweep that is interrupted); :func:`kill_group` kills one
  child with its group; :func:`death_message` says how a child that sent nothing ended.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import signal
import sys
import threading
from typing import Any

from optkit.solvers import SOLVER_LIBRARIES

__all__ = [
    "HARD_LIMIT_FACTOR", "DEFAULT_GRACE_S", "DEFAULT_SOLVER_PRELOAD", "hard_limit", "preload_modules",
    "default_start_method", "start_context", "set_parent_death_signal", "detach_group", "watch_parent",
    "kill_group", "track_child", "forget_child", "live_children", "kill_live_children", "death_message",
]

HARD_LIMIT_FACTOR = 1.2
"""The child is killed after ``time_limit * HARD_LIMIT_FACTOR + grace_s`` seconds."""
DEFAULT_GRACE_S = 3.0
"""Seconds of start-up grace added to the hard limit (imports a preload did not cover)."""
DEFAULT_SOLVER_PRELOAD = SOLVER_LIBRARIES
"""Solver libraries the forkserver imports once (override with ``OPTKIT_HARNESS_PRELOAD``,
a comma-separated list of module names; empty preloads none)."""

_live_lock = threading.Lock()
_live: set[Any] = set()  # multiprocessing.Process or subprocess.Popen objects still running
_ctx_lock = threading.Lock()
_contexts: dict[str, Any] = {}


def hard_limit(time_limit: float | None, grace_s: float = DEFAULT_GRACE_S) -> float | None:
    """Seconds after which a task's child is killed: ``time_limit * 1.2 + grace_s``."""
    if time_limit is None or not math.isfinite(time_limit):
        return None
    return float(time_limit) * HARD_LIMIT_FACTOR + float(grace_s)


# ----------------------------------------------------------------------------- starting
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


def start_context(method: str) -> Any:
    """This process's :mod:`multiprocessing` context of ``method`` (made on first use; a
    ``forkserver`` one preloads :func:`preload_modules`, read at that first use)."""
    with _ctx_lock:
        ctx = _contexts.get(method)
        if ctx is None:
            ctx = multiprocessing.get_context(method)
            if method == "forkserver":
                ctx.set_forkserver_preload(preload_modules())
            _contexts[method] = ctx
        return ctx


# ----------------------------------------------------------------------------- inside a child
def set_parent_death_signal() -> None:
    """On Linux, have the kernel SIGKILL this process when its parent dies (best effort)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort only
        pass


def detach_group() -> None:
    """Make this process the leader of a process group of its own (where the platform has
    groups), so that :func:`kill_group` kills it with whatever it starts."""
    if hasattr(os, "setpgrp"):
        try:
            os.setpgrp()
        except OSError:
            pass


def watch_parent(alive: Any) -> None:
    """Exit as soon as the parent closes (or loses) its end of the ``alive`` pipe."""
    def watch() -> None:
        try:
            alive.recv_bytes()
        except (EOFError, OSError):
            pass
        os._exit(70)

    threading.Thread(target=watch, name="optkit-parent-watch", daemon=True).start()


# ----------------------------------------------------------------------------- ending
def kill_group(proc: Any) -> None:
    """SIGKILL ``proc`` (a ``multiprocessing.Process`` or ``subprocess.Popen``) and its process
    group (the child leads its own group)."""
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


def track_child(proc: Any) -> None:
    """Record the started child ``proc`` as running (:func:`kill_live_children` kills it)."""
    with _live_lock:
        _live.add(proc)


def forget_child(proc: Any) -> None:
    """Take ``proc`` off the running children (it has ended, or its caller ends it now)."""
    with _live_lock:
        _live.discard(proc)


def live_children() -> list[Any]:
    """The children recorded by :func:`track_child` and not yet forgotten."""
    with _live_lock:
        return list(_live)


def kill_live_children() -> int:
    """SIGKILL every child this process started that is still running; returns how many.

    Executors call this when a sweep is interrupted.
    """
    procs = live_children()
    for p in procs:
        kill_group(p)
    return len(procs)


def death_message(code: int | None) -> str:
    """How a worker process that sent no result ended, from its exit code ``code`` (negative:
    the signal that killed it; ``None``: unknown)."""
    if code is None:
        return "the worker process died without a result"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the worker process was killed by {name} without a result"
    return f"the worker process exited with code {code} without a result"
