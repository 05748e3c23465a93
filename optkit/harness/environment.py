"""What a sweep is measured with: the machine, its cores, the parallelism, the time limit and the
package versions, recorded in the store when the sweep starts (``sweeps``,
:meth:`optkit.harness.store.ResultStore.add_sweep`) and printed by every report
(:func:`describe`), so a wall time is never read without the conditions it was measured under.

* ``machine``: the host name, the operating system and architecture, and the processor's model
  (Linux: ``model name`` of ``/proc/cpuinfo``; elsewhere :func:`platform.processor`);
* ``cores``: :func:`os.cpu_count` of the machine driving the sweep;
* ``jobs``: the tasks run at once by a local pool (``--jobs``; ``None`` on another executor) and
  ``executor``: its one-line description (``local, 2 at a time``, ``dask tcp://host:8786``: the
  runs then happen on the Dask workers, whose machines the driver does not see);
* ``time_limit``: the seconds each run was given (each row keeps its own as well);
* ``versions``: Python's and those of :data:`PACKAGES` (``"not installed"`` for a missing one).
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
from importlib import metadata
from typing import Any, Mapping

__all__ = ["PACKAGES", "NOT_RECORDED", "environment", "machine", "describe"]

PACKAGES = ("optkit", "ortools", "highspy", "pyomo", "numpy", "scipy", "networkx", "scikit-learn", "numba")
"""The distributions whose versions a sweep records: optkit, its solvers and its numerical stack."""
NOT_RECORDED = "not recorded"
"""What a report says for a run stored before optkit recorded its environment (schema < 3)."""


def machine() -> str:
    """``host (system architecture, processor)``."""
    cpu = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "")
    except OSError:
        pass
    cpu = cpu or platform.processor() or "processor unknown"
    return f"{platform.node() or 'unknown host'} ({platform.system()} {platform.machine()}, {cpu})"


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def environment(*, jobs: int | None, executor: str, time_limit: float | None) -> dict[str, Any]:
    """The record of a sweep about to run (module docstring: the fields)."""
    return {
        "started_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "cores": os.cpu_count(),
        "jobs": jobs,
        "executor": executor,
        "time_limit": time_limit,
        "versions": {"python": platform.python_version(), **{p: _version(p) for p in PACKAGES}},
    }


def describe(env: Mapping[str, Any] | None, time_limits: Any = ()) -> str:
    """One line: ``machine; N cores; --jobs J; time limit T s; versions`` (``not recorded`` for
    each field a stored sweep lacks, every field but the time limit for ``env`` ``None``; the
    time limits come from the runs themselves, ``time_limits``, where the sweep has none)."""
    env = env or {}

    def field(v: Any, fmt: str = "{}") -> str:
        return NOT_RECORDED if v is None or v == "" else fmt.format(v)

    limits = sorted({float(t) for t in time_limits if t is not None})
    if env.get("time_limit") is not None:
        limit = f"{float(env['time_limit']):g} s"
    elif limits:
        limit = ", ".join(f"{t:g} s" for t in limits)
    else:
        limit = "none" if time_limits else NOT_RECORDED
    jobs = env.get("jobs")
    jobs_text = str(jobs) if jobs is not None else (env.get("executor") or NOT_RECORDED)
    versions = env.get("versions") or {}
    order = {name: i for i, name in enumerate(("python", *PACKAGES))}
    version_text = (", ".join(f"{k} {versions[k]}" for k in sorted(versions, key=lambda k: (order.get(k, len(order)), k)))
                    or NOT_RECORDED)
    return (f"machine: {field(env.get('machine'))}; cores: {field(env.get('cores'))}; --jobs: {jobs_text}; "
            f"time limit: {limit}; versions: {version_text}")
