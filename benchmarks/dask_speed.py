"""A sweep on a Dask cluster against the same sweep on the local pool, same cores (issue 25, item 4).

    PYTHONPATH=. python benchmarks/dask_speed.py [--repeats 2] [--reproduce] [--out benchmarks/perf/dask.md]

Starts a cluster the way Dask's documentation starts one, on this machine: ``dask scheduler``,
then ``dask worker tcp://127.0.0.1:PORT --nworkers 2 --nthreads 1`` (two worker processes under
their nanny, one thread each: the local pool's ``--jobs 2``), and, separately, a worker with
Dask's default flags (``dask worker tcp://127.0.0.1:PORT``: one process, one thread per core).
Each cluster is up, its workers registered, before anything is timed; their task servers are
*not* started (the first sweep pays for them, as a user's first sweep does).

Measures, each as the wall clock of the ``optkit`` command run as a subprocess into a fresh store:

* ``optkit compare instances/nimp/tiny --jobs 2`` (252 runs) against the same command with
  ``--scheduler ADDRESS`` on each cluster, ``--repeats`` times alternating; CP-SAT's median run
  time (the stored ``wall_time_s`` of its 36 runs, measured inside each run's child process) on
  each; and the ratio cluster / local of the median wall times (issue goal: at most 1.5);
* with ``--reproduce``: ``optkit reproduce all --scale ci --jobs 1`` (one process) against
  ``--scheduler ADDRESS`` on the two-worker cluster (several minutes each; traces from
  ``$OPTKIT_TRACES`` as usual).

The machine's load average (``os.getloadavg``) is printed beside every figure: on a shared,
busy machine every figure stretches, the cluster's and the local pool's alike. Nothing here is
asserted. ``--out`` writes the figures to a page that says when, at which commit and on what it
ran (``benchmarks/_page.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _page import run_line  # noqa: E402

SUITE = "instances/nimp/tiny"


def load() -> str:
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT), e.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return e


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """A scheduler and one ``dask worker`` command, each in its own session, killed on close."""

    def __init__(self, worker_flags: list[str], folder: Path) -> None:
        import distributed

        self.address = f"tcp://127.0.0.1:{free_port()}"
        self.procs = []
        self.flags = worker_flags
        for name, args in (("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", self.address.rsplit(":", 1)[1],
                                          "--no-dashboard"]),
                           ("worker", ["worker", self.address, "--no-dashboard", *worker_flags])):
            log = open(folder / f"{name}.log", "ab")
            self.procs.append(subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=log, stderr=log,
                                               env=env(), cwd=folder, start_new_session=True))
            if name == "scheduler":
                time.sleep(1.0)
        expected = int(worker_flags[worker_flags.index("--nworkers") + 1]) if "--nworkers" in worker_flags else 1
        with distributed.Client(self.address, timeout="60s") as c:
            c.wait_for_workers(expected, timeout=120)

    def close(self) -> None:
        for p in reversed(self.procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def timed(argv: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "optkit", *argv], capture_output=True, text=True, env=env(), cwd=cwd)
    elapsed = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"optkit {' '.join(argv)} failed ({p.returncode}): {p.stderr[-2000:]}")
    return elapsed


def cpsat_median(db: Path) -> tuple[float, int, dict[str, int]]:
    """CP-SAT's median stored wall time, its run count, and the statuses of every run."""
    with sqlite3.connect(db) as c:
        times = [r[0] for r in c.execute("SELECT wall_time_s FROM rows WHERE algorithm = 'cpsat'")]
        statuses = dict(c.execute("SELECT status, COUNT(*) FROM rows GROUP BY status").fetchall())
        servers = {json.loads(i)["harness"].get("server") for (i,) in c.execute("SELECT info FROM rows")}
    statuses["task servers"] = len(servers - {None})
    return statistics.median(times), len(times), statuses


def compare_runs(label: str, extra: list[str], work: Path, i: int) -> dict[str, Any]:
    db = work / f"{label.replace(' ', '_')}-{i}.sqlite"
    before = load()
    wall = timed(["compare", SUITE, "--db", str(db), "--no-progress", *extra], ROOT)
    med, n, statuses = cpsat_median(db)
    row = {"setting": label, "wall_s": wall, "cpsat_median_s": med, "cpsat_runs": n, "statuses": statuses,
           "load_before": before, "load_after": load()}
    print(f"compare {SUITE} [{label}] run {i + 1}: {wall:.1f} s wall, CP-SAT median run {med * 1e3:.1f} ms "
          f"({n} runs), statuses {statuses}; {before} -> {row['load_after']}", flush=True)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=2, help="compare runs per setting, alternating (default 2)")
    ap.add_argument("--reproduce", action="store_true", help="also time `reproduce all --scale ci` (minutes)")
    ap.add_argument("--out", default=None, help="write the figures to this Markdown page")
    args = ap.parse_args()
    print(f"cpus {os.cpu_count()}; {load()}", flush=True)
    lines: list[str] = []
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="dask-speed-") as tmp:
        work = Path(tmp)
        settings = [("local --jobs 2", None, ["--jobs", "2"]),
                    ("dask worker --nworkers 2 --nthreads 1", ["--nworkers", "2", "--nthreads", "1"], []),
                    ("dask worker (default flags)", [], [])]
        clusters: dict[str, Cluster] = {}
        try:
            for label, flags, _ in settings:
                if flags is not None:
                    folder = work / label.replace(" ", "_")
                    folder.mkdir()
                    clusters[label] = Cluster(flags, folder)
            for i in range(args.repeats):
                for label, flags, extra in settings:
                    sched = ["--scheduler", clusters[label].address] if flags is not None else []
                    results.append(compare_runs(label, extra + sched, work, i))
            repro: list[tuple[str, float, str, str]] = []
            if args.reproduce:
                for label, argv in (("one process (--jobs 1)", ["--jobs", "1"]),
                                    ("two Dask workers (--nworkers 2 --nthreads 1)",
                                     ["--scheduler", clusters["dask worker --nworkers 2 --nthreads 1"].address])):
                    before = load()
                    out = work / f"repro-{len(repro)}"
                    wall = timed(["reproduce", "all", "--scale", "ci", "--out", str(out), "--no-progress", *argv], ROOT)
                    repro.append((label, wall, before, load()))
                    print(f"reproduce all --scale ci [{label}]: {wall:.1f} s; {before} -> {load()}", flush=True)
        finally:
            for c in clusters.values():
                c.close()
    local = statistics.median(r["wall_s"] for r in results if r["setting"] == "local --jobs 2")
    local_cp = statistics.median(r["cpsat_median_s"] for r in results if r["setting"] == "local --jobs 2")
    summary = []
    for label, flags, _ in settings:
        mine = [r for r in results if r["setting"] == label]
        wall = statistics.median(r["wall_s"] for r in mine)
        cp = statistics.median(r["cpsat_median_s"] for r in mine)
        summary.append((label, wall, cp, wall / local, cp / local_cp))
        print(f"{label}: median wall {wall:.1f} s ({wall / local:.2f}x local), CP-SAT median run "
              f"{cp * 1e3:.1f} ms ({cp / local_cp:.2f}x local)", flush=True)
    if args.out:
        lines += ["# A sweep on a Dask cluster against the local pool, same cores", "", run_line(), "",
                  f"`optkit compare {SUITE}` (252 runs, default time limit), each run into a fresh store, "
                  f"{args.repeats} runs per setting alternating; clusters started as Dask's documentation starts "
                  "one (`dask scheduler`, `dask worker ADDRESS ...`, workers under their nanny), up before the "
                  "timing, task servers started by the first sweep. CP-SAT's run time is the stored `wall_time_s` "
                  "of its 36 runs. Issue 25's goal: a cluster within 1.5x of the local pool's wall time; before "
                  "the task server, `--nworkers 2 --nthreads 1` took 62 s against 5.4 s (CP-SAT median 0.235 s "
                  "against 0.026 s).", "",
                  "| setting | run | wall (s) | CP-SAT median run (ms) | statuses | load before -> after |",
                  "|---|---:|---:|---:|---|---|"]
        counts: dict[str, int] = {}
        for r in results:
            counts[r["setting"]] = counts.get(r["setting"], 0) + 1
            st = ", ".join(f"{k} {v}" for k, v in r["statuses"].items())
            lines.append(f"| {r['setting']} | {counts[r['setting']]} | {r['wall_s']:.1f} | "
                         f"{r['cpsat_median_s'] * 1e3:.1f} | {st} | {r['load_before']} -> {r['load_after']} |")
        lines += ["", "| setting | median wall (s) | / local | CP-SAT median run (ms) | / local |",
                  "|---|---:|---:|---:|---:|"]
        for label, wall, cp, ratio, cp_ratio in summary:
            lines.append(f"| {label} | {wall:.1f} | {ratio:.2f} | {cp * 1e3:.1f} | {cp_ratio:.2f} |")
        if args.reproduce:
            lines += ["", "`optkit reproduce all --scale ci` (every experiment, 2 seeds, fresh store):", "",
                      "| where | wall (s) | load before -> after |", "|---|---:|---|"]
            lines += [f"| {label} | {wall:.1f} | {b} -> {a} |" for label, wall, b, a in repro]
        Path(args.out).write_text("\n".join(lines) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
