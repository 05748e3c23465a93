"""Formulation lower bounds under a time limit, cached per instance in the result store.

A formulation's ``lower_bound(instance, objective)`` may be expensive (ddlwmp's enumerates
every placement of every model: hours and gigabytes on a 20-server cluster). Reports must
never hang on it, so :func:`formulation_bounds` (called by
:func:`optkit.harness.compare.best_bounds`) runs it in child processes, at most ``jobs`` at a
time, each taking a share of the instances in turn (the formulation is imported once per
child, not per instance). Every instance (all its objectives at once) gets
:func:`bound_time_limit` seconds (``OPTKIT_BOUND_TIME_LIMIT``, default
:data:`DEFAULT_BOUND_TIME_LIMIT_S`) from the previous answer; at the first time-out the child
is killed and a fresh one carries on with the rest.

Every outcome is cached in the result store's ``lower_bounds`` table, keyed by instance hash
and objective, and tagged with a digest of the formulation package's source files
(:func:`code_digest`), so a changed bound is computed afresh (see
:meth:`optkit.harness.store.ResultStore.cached_bounds`):

* ``ok``: the bound (or ``None`` when the formulation has none for that objective);
* ``failed``: the bound raised; its message is kept;
* ``timeout``: no answer within the limit; tried again only under a larger limit.

An instance whose bound timed out degrades to a weaker bound: the formulation's
``quick_lower_bound`` when it has one (run and cached the same way, under the objective name
``<objective>#quick``), and in any case the largest bound its stored runs proved. One note per
problem and kind of failure says so (not one per row), naming the instances (at most
:data:`_NAMED` of them).
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import math
import sys
from pathlib import Path
import multiprocessing
import multiprocessing.connection
import os
import sqlite3
import time
from typing import Any, Mapping

from optkit import registry
from optkit.errors import InputError
from optkit.harness.processes import (
    death_message, default_start_method, detach_group, forget_child, kill_group, set_parent_death_signal, start_context,
    track_child, watch_parent,
)

__all__ = ["DEFAULT_BOUND_TIME_LIMIT_S", "BOUND_TIME_LIMIT_ENV", "QUICK_SUFFIX", "StoredInstances",
           "bound_time_limit", "formulation_bounds", "compute_bounds", "code_digest"]

DEFAULT_BOUND_TIME_LIMIT_S = 10.0
"""Seconds a formulation's lower bound gets per instance (all objectives) before it is killed."""
BOUND_TIME_LIMIT_ENV = "OPTKIT_BOUND_TIME_LIMIT"
"""Environment variable overriding :data:`DEFAULT_BOUND_TIME_LIMIT_S` (seconds > 0, or ``inf``)."""
_NAMED = 5
_JOIN_S = 5.0
_START_LIMIT_S = 120.0  # seconds a bound's child gets to import the formulation and the bound

Key = tuple[str, str]  # (instance_hash, objective_name)


class StoredInstances(dict):  # type: ignore[type-arg]
    """``{instance_hash: {"problem", "name", "data"}}`` that remembers the store it came from,
    so :func:`formulation_bounds` can read and write its bound cache."""

    store: Any = None


def bound_time_limit() -> float:
    """Seconds per instance for a formulation's lower bound: ``OPTKIT_BOUND_TIME_LIMIT`` or the default."""
    raw = os.environ.get(BOUND_TIME_LIMIT_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_BOUND_TIME_LIMIT_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > 0:  # NaN or <= 0
        raise InputError(BOUND_TIME_LIMIT_ENV, f"must be a number of seconds > 0 (or inf), got {raw!r}")
    return value


# ----------------------------------------------------------------------------- the child
Outcome = tuple[str, float | None, str]  # (status, value, message)
Item = tuple[str, Mapping[str, Any], list[str]]  # (instance hash, instance dict, objectives)


def _prepare(problem: str, targets: str | None, which: str) -> tuple[Any, Any]:
    """The formulation and its bound ``which``, the bound's module imported (so that no
    instance's clock pays the imports)."""
    registry.ensure_registered(problem, targets)
    formulation = registry.get(problem)
    bound = getattr(formulation, which)
    target = getattr(bound, "target", None)  # a lazy_run entry
    if callable(target):
        target()
    return formulation, bound


def _bounds_of(formulation: Any, bound: Any, data: Mapping[str, Any], objectives: list[str]) -> dict[str, Outcome]:
    try:
        instance = formulation.instance_from_dict(dict(data))
    except Exception as exc:  # noqa: BLE001 - a stored instance this formulation no longer accepts
        return {o: ("failed", None, f"{type(exc).__name__}: {exc}") for o in objectives}
    out: dict[str, Outcome] = {}
    for objective in objectives:
        try:
            lb = bound(instance, objective)
        except Exception as exc:  # noqa: BLE001 - a broken bound is reported, not fatal
            out[objective] = ("failed", None, f"{type(exc).__name__}: {exc}")
            continue
        ok = isinstance(lb, (int, float)) and not isinstance(lb, bool) and math.isfinite(lb)
        out[objective] = ("ok", float(lb) if ok else None, "")
    return out


def compute_bounds(problem: str, data: Mapping[str, Any], objectives: list[str],
                   targets: str | None = None, which: str = "lower_bound") -> dict[str, Outcome]:
    """``{objective: (status, value, message)}`` of ``problem``'s lower bound (``which``: the
    formulation's ``lower_bound`` or ``quick_lower_bound``), in this process, without a limit.

    Status ``ok`` (value a finite number, or ``None``: no bound) or ``failed`` (message
    ``Type: text``). The child processes of :func:`formulation_bounds` do this per instance.
    """
    formulation, bound = _prepare(problem, targets, which)
    return _bounds_of(formulation, bound, data, objectives)


def _child_main(problem: str, items: list[Item], conn: Any, alive: Any, targets: str, which: str) -> None:
    """Send ``("ready", "")`` once the bound is imported, then ``(hash, outcomes)`` per item."""
    detach_group()
    set_parent_death_signal()
    watch_parent(alive)
    try:
        formulation, bound = _prepare(problem, targets or None, which)
    except BaseException as exc:  # noqa: BLE001 - e.g. the formulation does not import here
        conn.send(("broken", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", ""))
    for h, data, objectives in items:
        conn.send((h, _bounds_of(formulation, bound, data, objectives)))
    conn.close()


def _one_child(problem: str, items: list[Item], limit: float, which: str, out: dict[Key, Outcome]) -> int:
    """Run ``items`` in order in one child, each under ``limit`` seconds from the previous
    answer; record outcomes in ``out``; return how many items are settled (the child is killed
    at the first time-out or dies; the caller restarts the rest)."""
    def settle(item: Item, outcome: Outcome) -> None:
        for o in item[2]:
            out[(item[0], o)] = outcome

    ctx = start_context(default_start_method())
    recv, send = ctx.Pipe(duplex=False)
    alive_r, alive_w = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_main, name=f"optkit-bound-{problem}", daemon=False,
                       args=(problem, [(h, dict(d), o) for h, d, o in items], send, alive_r,
                             os.environ.get("OPTKIT_FORMULATIONS", ""), which))
    try:
        proc.start()
    finally:
        send.close()
        alive_r.close()
    track_child(proc)

    def receive(timeout: float | None) -> tuple[bool, Any]:
        """(answered, message); message None when the child died or was silent."""
        ready = multiprocessing.connection.wait([recv, proc.sentinel], timeout=timeout)
        if ready and recv.poll(0):
            try:
                return True, recv.recv()
            except (EOFError, OSError):
                return True, None
        return bool(ready), None

    try:
        answered, msg = receive(_START_LIMIT_S)
        if msg is None or msg[0] != "ready":
            why = msg[1] if msg else ("its process did not start within "
                                      f"{_START_LIMIT_S:g} s" if not answered else death_message(proc.exitcode))
            for item in items:
                settle(item, ("failed", None, f"not computed: {why}"))
            return len(items)
        for done, item in enumerate(items):
            answered, msg = receive(None if math.isinf(limit) else limit)
            if msg is not None:
                out.update({(item[0], o): r for o, r in msg[1].items()})
                continue
            if not answered:
                settle(item, ("timeout", None, f"no result within {limit:g} s"))
            else:
                proc.join(_JOIN_S)
                settle(item, ("failed", None, death_message(proc.exitcode)))
            return done + 1
        return len(items)
    finally:
        alive_w.close()
        recv.close()
        forget_child(proc)
        if proc.is_alive():
            kill_group(proc)
        proc.join()
        proc.close()


def _stream(problem: str, items: list[Item], limit: float, which: str) -> dict[Key, Outcome]:
    """Every item's outcomes: children in turn, each picking up after the last one's time-out."""
    out: dict[Key, Outcome] = {}
    rest = list(items)
    while rest:
        rest = rest[_one_child(problem, rest, limit, which, out):]
    return out


# ----------------------------------------------------------------------------- the driver
def _usable(cached: tuple[str, float | None, str, float] | None, limit: float) -> bool:
    """Whether a cached outcome answers now: anything but a time-out under a limit no larger."""
    if cached is None:
        return False
    status, _, _, cached_limit = cached
    return status != "timeout" or limit <= cached_limit


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:_NAMED])
    return shown + (f" and {len(names) - _NAMED} more" if len(names) > _NAMED else "")


def formulation_bounds(
    pairs: Mapping[Key, str],
    instances: Mapping[str, Mapping[str, Any]] | None,
    *,
    notes: list[str] | None = None,
    time_limit: float | None = None,
    jobs: int | None = None,
) -> dict[Key, tuple[float, str]]:
    """``{(instance_hash, objective): (bound, "<problem> lower_bound")}`` of the formulations'
    own lower bounds, each computed under a time limit (module docstring); where one times out,
    the formulation's ``quick_lower_bound`` (source ``"<problem> quick_lower_bound"``).

    ``pairs`` maps each (instance hash, objective) to its problem; ``instances`` is
    ``ResultStore.instances()`` (a :class:`StoredInstances` lends its store as the cache);
    ``time_limit`` defaults to :func:`bound_time_limit`; ``jobs`` (children at a time) to the
    number of CPUs. Failures and time-outs add one line per problem to ``notes``.
    """
    if not instances:
        return {}
    limit = bound_time_limit() if time_limit is None else float(time_limit)
    store = getattr(instances, "store", None)
    wanted = _wanted(pairs, instances, "lower_bound")
    outcome = _outcomes(wanted, "lower_bound", "", instances, store, limit, jobs)
    slow = {k: p for k, p in pairs.items() if outcome.get(k, ("",))[0] == "timeout"}
    quick = _outcomes(_wanted(slow, instances, "quick_lower_bound"), "quick_lower_bound", QUICK_SUFFIX,
                      instances, store, limit, jobs)
    return _collect(outcome, quick, pairs, instances, limit, notes)


QUICK_SUFFIX = "#quick"
"""Cache key suffix of an objective's ``quick_lower_bound`` outcome."""


def _wanted(pairs: Mapping[Key, str], instances: Mapping[str, Mapping[str, Any]],
            which: str) -> dict[str, tuple[str, list[str]]]:
    """``{hash: (problem, objectives)}`` of the pairs whose formulation has the bound ``which``."""
    wanted: dict[str, tuple[str, list[str]]] = {}
    for (h, objective), problem in pairs.items():
        if h not in instances:
            continue
        try:
            formulation = registry.get(problem)
        except InputError:
            continue
        if getattr(formulation, which, None) is None:
            continue
        wanted.setdefault(h, (problem, []))[1].append(objective)
    return wanted


def _outcomes(wanted: Mapping[str, tuple[str, list[str]]], which: str, suffix: str,
              instances: Mapping[str, Mapping[str, Any]], store: Any, limit: float,
              jobs: int | None) -> dict[Key, tuple[str, float | None, str]]:
    """Cached or freshly computed outcomes of the bound ``which`` (fresh ones are cached)."""
    outcome: dict[Key, tuple[str, float | None, str]] = {}
    code = code_digest({p for p, _ in wanted.values()})
    cache = store.cached_bounds(list(wanted), code) if store is not None and wanted else {}
    todo: dict[str, tuple[str, list[str]]] = {}
    for h, (problem, objectives) in wanted.items():
        for o in objectives:
            c = cache.get((h, o + suffix))
            if _usable(c, limit):
                outcome[(h, o)] = c[:3]  # type: ignore[index]
            else:
                todo.setdefault(h, (problem, []))[1].append(o)
    fresh = _run_all(todo, instances, limit, jobs, which)
    outcome.update(fresh)
    if store is not None and fresh:
        try:
            store.put_bounds([(h, o + suffix, s, v, m, limit) for (h, o), (s, v, m) in fresh.items()], code)
        except sqlite3.Error:  # a read-only or busy store: the outcomes still count, uncached
            pass
    return outcome


def code_digest(problems: set[str] | list[str]) -> str:
    """A digest of the source files (``*.py``) of the packages defining ``problems``' formulations
    (the folder of the module of each one's ``evaluate``): the version of their bounds."""
    h = hashlib.sha256()
    for problem in sorted(problems):
        module = sys.modules.get(getattr(registry.get(problem).evaluate, "__module__", ""), None)
        folder = Path(module.__file__).parent if module is not None and getattr(module, "__file__", None) else None
        h.update(problem.encode())
        for f in sorted(folder.glob("*.py")) if folder is not None else []:
            h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()[:16]


def _run_all(todo: Mapping[str, tuple[str, list[str]]], instances: Mapping[str, Mapping[str, Any]],
             limit: float, jobs: int | None, which: str) -> dict[Key, Outcome]:
    """Outcomes of every instance in ``todo``: per problem, its instances dealt round-robin to
    at most ``jobs`` streams of children (:func:`_stream`) running at once."""
    out: dict[Key, Outcome] = {}
    if not todo:
        return out
    if multiprocessing.current_process().daemon:  # may not start children (a Dask worker)
        for h, (_, objectives) in todo.items():
            for o in objectives:
                out[(h, o)] = ("failed", None, "not computed: a daemonic process cannot start the bound's child")
        return out
    workers = max(1, min(jobs or os.cpu_count() or 1, len(todo)))
    by_problem: dict[str, list[Item]] = {}
    for h, (problem, objectives) in todo.items():
        by_problem.setdefault(problem, []).append((h, instances[h]["data"], objectives))
    streams = [(p, items[i::workers]) for p, items in by_problem.items() for i in range(workers) if items[i::workers]]
    with cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="optkit-bound") as pool:
        for res in pool.map(lambda s: _stream(s[0], s[1], limit, which), streams):
            out.update(res)
    return out


def _collect(outcome: Mapping[Key, tuple[str, float | None, str]], quick: Mapping[Key, tuple[str, float | None, str]],
             pairs: Mapping[Key, str], instances: Mapping[str, Mapping[str, Any]], limit: float,
             notes: list[str] | None) -> dict[Key, tuple[float, str]]:
    best: dict[Key, tuple[float, str]] = {}
    slow: dict[str, list[str]] = {}
    failed: dict[tuple[str, str], list[str]] = {}  # (what failed, message) -> instance labels
    for key, (status, value, message) in quick.items():
        if status == "ok" and value is not None:
            best[key] = (value, f"{pairs[key]} quick_lower_bound")
        elif status != "ok":
            failed.setdefault((f"{pairs[key]} quick_lower_bound", message), []).append(
                f"{instances[key[0]]['name']} [{key[1]}]")
    for key in sorted(outcome):
        status, value, message = outcome[key]
        problem = pairs[key]
        label = f"{instances[key[0]]['name']} [{key[1]}]"
        if status == "ok" and value is not None:
            best[key] = (value, f"{problem} lower_bound")
        elif status == "timeout":
            slow.setdefault(problem, []).append(label)
        elif status == "failed":
            failed.setdefault((f"{problem} lower_bound", message), []).append(label)
    if notes is not None:
        for (what, message), labels in failed.items():
            labels.sort()
            notes.append(f"{what} failed on {len(labels)} instance objective(s) ({_names(labels)}): {message}; "
                         "their gaps use the stored runs' bounds only")
        for problem, labels in slow.items():
            labels.sort()
            weaker = ("quick_lower_bound and the stored runs' bounds" if registry.get(problem).quick_lower_bound
                      else "the stored runs' bounds only")
            notes.append(
                f"{problem} lower_bound gave no result within {limit:g} s on {len(labels)} instance objective(s) "
                f"({_names(labels)}); their gaps use the weaker {weaker} "
                f"(set {BOUND_TIME_LIMIT_ENV}=SECONDS to try longer)")
    return best
