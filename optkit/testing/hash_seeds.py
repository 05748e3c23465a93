"""Run an algorithm in fresh interpreters under chosen ``PYTHONHASHSEED`` values.

The iteration order of a set or dict of strings follows the interpreter's hash seed, which
Python draws at random in every process unless ``PYTHONHASHSEED`` fixes it. An algorithm that
breaks ties by such an order gives one answer in every run of one process and another answer in
the next process: a repeat inside one process never shows it. :class:`HashSeedWorkers` keeps one
worker process per hash seed (started on first use, reused by every later request, so the
interpreter and the imports are paid once per hash seed, not per algorithm) and runs the same
solves in each; :func:`optkit.testing.check_algorithm`'s check ``hash_seed_independent``
compares their answers.

A worker runs :func:`optkit.solve.solve` on each instance and objective and sends back, per
run, the status, the solution (its JSON form) and the message. The algorithm reaches the
worker by its registered name when the worker's registry has the same algorithm (entry points,
``OPTKIT_ALGORITHMS`` and ``OPTKIT_FORMULATIONS`` are inherited with the environment), else as a
pickled :class:`~optkit.formulation.Algorithm` (its run function by reference: a function
defined at module level; a lambda or a closure cannot cross, and the check says so instead of
running). The protocol is one JSON line each way (the request holds a base64 pickle); whatever
the algorithm prints goes to the worker's stderr.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import subprocess
import sys
import tempfile
from typing import Any, Sequence

__all__ = ["HashSeedWorkers", "REFUSED", "WorkerError", "main"]

REFUSED = "refused the instance"
"""How the message of a run begins whose algorithm raised an ``InputError`` on a valid instance
(a brute force beyond its size limit), here and in :func:`optkit.testing.check_algorithm`."""
_ENTRY = "from optkit.testing.hash_seeds import main; main()"


class WorkerError(RuntimeError):
    """A worker could not run a request (it died, or could not rebuild the algorithm)."""


class HashSeedWorkers:
    """One long-lived worker process per ``PYTHONHASHSEED`` value (started on first use).

    :meth:`run` sends one request to the workers of the given hash seeds (they run at the same
    time) and returns each one's answer; :meth:`close` ends them (also at garbage collection).
    """

    def __init__(self) -> None:
        self._procs: dict[int, tuple[subprocess.Popen[bytes], Any]] = {}

    def _worker(self, hash_seed: int) -> subprocess.Popen[bytes]:
        entry = self._procs.get(hash_seed)
        if entry is not None and entry[0].poll() is None:
            return entry[0]
        env = dict(os.environ)
        env["PYTHONHASHSEED"] = str(hash_seed)
        # the parent's import path (a test's rootdir, a script's folder) holds the algorithm's module
        env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        err = tempfile.TemporaryFile()
        proc = subprocess.Popen([sys.executable, "-c", _ENTRY], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=err, env=env)
        self._procs[hash_seed] = (proc, err)
        return proc

    def run(self, hash_seeds: Sequence[int], request: dict[str, Any]) -> dict[int, list[list[list[Any]]]]:
        """``{hash seed: runs}``, ``runs[i][k]`` = ``[status, solution, message]`` of instance i
        and objective k. ``request``: ``problem`` (a registered name), ``algorithm`` (a name, or
        an :class:`~optkit.formulation.Algorithm`), ``instances`` (dicts), ``objectives``,
        ``seed``, ``params``. Raises :class:`WorkerError` (the request cannot be pickled, or a
        worker failed) and ``pickle.PicklingError``-like errors as :class:`WorkerError` too."""
        try:
            line = json.dumps({"pickle": base64.b64encode(pickle.dumps(request)).decode()}) + "\n"
        except Exception as exc:  # noqa: BLE001 - a lambda, a closure, a local class
            raise WorkerError(f"the request cannot be sent to another process ({type(exc).__name__}: {exc})") from None
        procs = {h: self._worker(h) for h in dict.fromkeys(hash_seeds)}
        for h, proc in procs.items():
            assert proc.stdin is not None
            try:
                proc.stdin.write(line.encode())
                proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass  # reported below: no answer
        out: dict[int, list[list[list[Any]]]] = {}
        for h, proc in procs.items():
            assert proc.stdout is not None
            answer = proc.stdout.readline()
            if not answer:
                proc.wait()
                raise WorkerError(f"the PYTHONHASHSEED={h} worker died (exit {proc.returncode}): {self._stderr(h)}")
            reply = json.loads(answer)
            if not reply.get("ok"):
                raise WorkerError(f"the PYTHONHASHSEED={h} worker could not run it: {reply.get('error')}")
            out[h] = reply["runs"]
        return out

    def _stderr(self, hash_seed: int) -> str:
        err = self._procs[hash_seed][1]
        err.seek(0)
        return err.read().decode(errors="replace").strip()[-1000:]

    def close(self) -> None:
        """End every worker (closing its stdin ends its loop; it is killed if it does not)."""
        for proc, err in self._procs.values():
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
            for stream in (proc.stdout, err):
                if stream is not None:
                    stream.close()
        self._procs.clear()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def _runs(request: dict[str, Any]) -> list[list[list[Any]]]:
    """Every (instance, objective) solve of ``request`` in this process."""
    import dataclasses

    from optkit import registry
    from optkit.errors import InputError
    from optkit.formulation import Algorithm
    from optkit.solve import solve

    f = registry.get(request["problem"])
    algo = request["algorithm"]
    if isinstance(algo, Algorithm):
        f = dataclasses.replace(f, algorithms={**f.algorithms, algo.name: algo})
        name = algo.name
    else:
        name = algo
        if name not in f.algorithms:
            raise LookupError(f"{name!r} is not an algorithm of {f.name} in a fresh process (registered at run time, "
                              "not through an entry point or OPTKIT_ALGORITHMS?)")
    runs = []
    for data in request["instances"]:
        row = []
        for objective in request["objectives"]:
            try:
                res = solve(f, data, name, objective=objective, seed=request["seed"], params=request["params"])
                row.append([res.status.value, res.solution, res.message])
            except InputError as exc:  # as check_algorithm records it in its own process
                row.append(["error", None, f"{REFUSED}: InputError: {exc}"])
            except Exception as exc:  # noqa: BLE001 - a crash is an answer like any other
                row.append(["error", None, f"raised {type(exc).__name__}: {exc}"])
        runs.append(row)
    return runs


def main() -> None:
    """The worker loop: one request per stdin line, one answer per stdout line, until EOF."""
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what the algorithm prints goes to stderr, never into an answer
    sys.stdout = sys.stderr
    for line in sys.stdin:
        try:
            request = pickle.loads(base64.b64decode(json.loads(line)["pickle"]))
            reply: dict[str, Any] = {"ok": True, "runs": _runs(request)}
        except Exception as exc:  # noqa: BLE001 - e.g. the algorithm's module is not importable here
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(reply, allow_nan=True) + "\n")
        out.flush()
