"""The task server's own process: read tasks on stdin, run each, answer rows on stdout.

:class:`optkit.harness.server.TaskServer` starts ``python -c`` with :func:`main` in a
non-daemonic subprocess of a daemonic Dask worker (see :mod:`optkit.harness.server` for why and
for the guarantees). Requests are JSON lines ``{"id": n, "task": Task.to_dict(), "grace_s": s}``;
each runs in a thread of its own through :func:`optkit.harness.worker.run_task`, that is, in a
fresh child of this process's preloaded forkserver under the run's hard time limit, and its
answer is the JSON line ``{"id": n, "row": row}`` with ``row["info"]["harness"]["server"]`` this
process's id. It lives apart from :mod:`optkit.harness.server` because it runs tasks through
:func:`~optkit.harness.worker.run_task`, which in turn hands a daemonic process's tasks to
:mod:`optkit.harness.server`: the two sides of the pipe, one import each way.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

from optkit.harness.processes import default_start_method, kill_live_children, start_context
from optkit.harness.rows import make_row
from optkit.harness.tasks import Task
from optkit.harness.worker import run_task

__all__ = ["main"]


def main() -> int:
    """The server's entry point: read requests on stdin, run each in a thread, answer on stdout.

    Exits (``os._exit(0)``) when stdin closes, the parent being done or dead, or when an answer
    cannot be written; either way it kills its runs first.
    """
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # anything a run prints goes to stderr, never into the answers
    sys.stdout = sys.stderr
    try:
        from optkit import registry

        registry.all_formulations()  # the forkserver preloads the formulations found here
    except Exception:  # noqa: BLE001 - a broken plug-in fails its own runs, not the server
        pass
    method = default_start_method()
    if method == "forkserver":
        try:  # start (and preload) the forkserver now, while no run waits for it
            import multiprocessing.forkserver

            start_context(method)
            multiprocessing.forkserver.ensure_running()
        except Exception:  # noqa: BLE001 - run_task falls back to spawn on its own
            pass
    write_lock = threading.Lock()

    def answer(request: dict[str, Any]) -> None:
        try:
            row = run_task(request["task"], grace_s=float(request["grace_s"]))
        except Exception as exc:  # noqa: BLE001 - the harness itself failed: still one row
            row = make_row(Task.from_dict(request["task"]), status="error",
                           message=f"harness: {type(exc).__name__}: {exc}")
        row.setdefault("info", {}).setdefault("harness", {})["server"] = os.getpid()
        text = json.dumps({"id": request["id"], "row": row}, allow_nan=True) + "\n"
        try:
            with write_lock:
                channel.write(text)
                channel.flush()
        except (OSError, ValueError):  # the parent is gone
            kill_live_children()
            os._exit(0)

    for line in sys.stdin:
        if line.strip():
            threading.Thread(target=answer, args=(json.loads(line),), name="optkit-serve", daemon=True).start()
    kill_live_children()  # stdin closed: the parent is done or dead
    os._exit(0)
