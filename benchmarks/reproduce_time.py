"""How long `optkit reproduce` takes: every experiment at ``--scale ci``, and the paper-scale run.

    PYTHONPATH=. python benchmarks/reproduce_time.py ci [--jobs 2] [--seeds 2] [--only EXP ...] [--out PAGE]
    PYTHONPATH=. python benchmarks/reproduce_time.py paper --db STORE [--db STORE2 ...] [--basis mean] [--since ISO] [--workers 2 16]
        [--readings each|all|default] [--only TARGET ...]

``ci``: runs ``optkit reproduce EXPERIMENT --scale ci`` for every registered experiment, one after
the other, each into a fresh store (nothing reused), and prints its wall time. Asking for one
claim measures its whole experiment (the claims of an experiment share their measurements), so an
experiment's time is the time of each of its claims; the issue's target is under a minute.
Machine load is printed beside (``os.getloadavg``), since a busy machine stretches every figure.

``paper``: reads a store written by ``optkit reproduce all --scale paper --seeds 5 --db STORE``
(complete or not: the run resumes) and prints, per experiment, the measurements planned (as
``optkit reproduce --dry-run`` plans them: :func:`planned_tasks`) and stored, and
estimates the whole run's wall time scheduled longest-first onto W identical workers (each
measurement is one process; the run is a bag of independent tasks). ``--basis default`` (the
default) puts every planned measurement of an experiment at the wall time of its default-reading
seed-0 measurement (``optkit reproduce all --scale paper --seeds 1 --readings default`` measures
exactly those, 16 measurements): one comparable basis even when the rest of the store was
filled under other load; ``--basis mean`` takes the stored measurements as measured and the
missing ones at their experiment's mean. An experiment without a basis is named and left out.
Several ``--db`` stores are read in order and a measurement (its run key) found in a later one
replaces the earlier one's, so a store re-measured on an idle machine
(``optkit reproduce EXPERIMENT... --db NEW``) overrides times taken under load; with every
measurement stored, ``--basis mean`` schedules the measured times themselves.
Measured, not estimated: per store, the wall clock from the start of the first planned
measurement (its finish time minus its wall time) to the finish of the last, counting those
finished at or after ``--since`` (an ISO time; default: all). A run resumed into a store filled
earlier is timed by passing the time it was started.
``--readings all --only titan sjf-bco`` estimates another run than the store's (every
combination of the readings of those papers' experiments) from the same stored times: with
``--basis mean``, each planned measurement not stored at its experiment's mean.
Wall times measured on a loaded machine stretch the estimate. Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import sqlite3
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _page import run_line  # noqa: E402

from optkit import reproduce as rp  # noqa: E402


def _load() -> str:
    try:
        return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    except OSError:
        return "load n/a"


def ci(jobs: int, seeds: int, only: list[str], out: str | None = None) -> int:
    exps = rp.experiments()
    ids = only or list(exps)
    lines: list[str] = []

    def say(line: str) -> None:
        lines.append(line)
        print(line, flush=True)

    say(f"reproduce --scale ci --seeds {seeds} --jobs {jobs}, one experiment at a time, fresh store; "
        f"cpus {os.cpu_count()}; {_load()}")
    say("")
    say("| experiment | claims | measurements | wall (s) | under 60 s | load after |")
    say("|---|---|---|---|---|---|")
    worst, over = 0.0, 0
    for eid in ids:
        f, e = exps[eid]
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            m = rp.reproduce([eid], seeds=list(range(seeds)), scale="ci", db=Path(tmp) / "m.sqlite",
                             jobs=jobs, progress=False)
            wall = time.perf_counter() - t0
        worst = max(worst, wall)
        over += wall >= 60
        bad = f" ({len(m.failures)} failed)" if m.failures else ""
        say(f"| {eid} | {len(e.claims)} | {len(m.rows)}{bad} | {wall:.1f} | {'yes' if wall < 60 else 'no'} | "
            f"{_load()} |")
    say("")
    say(f"slowest experiment: {worst:.1f} s; {over} of {len(ids)} over 60 s")
    if out:
        Path(out).write_text("\n".join([
            "# optkit reproduce: time per experiment at --scale ci", "",
            run_line() + " Each experiment is measured alone into a fresh store; asking for any one claim "
            "measures its whole experiment, so each row is also the time of each of its claims (issue "
            "target: under a minute). The load average after each row is printed beside it.", "",
            *lines, ""]))
    return 0


def makespan(durations: list[float], workers: int) -> float:
    """Longest-processing-time-first list scheduling of independent tasks on ``workers``."""
    heap = [0.0] * workers
    for d in sorted(durations, reverse=True):
        heapq.heapreplace(heap, heap[0] + d)
    return max(heap)


def planned_tasks(f: Any, e: Any, mode: str, seeds: int) -> list[Any]:
    """The paper-scale run's measurements of experiment ``e``, exactly as ``optkit reproduce
    --dry-run`` plans them (:func:`optkit.reproduce.plan`): the paper scale's curve points and the
    plug-in series included."""
    return rp.measurement_tasks(f, e, rp.reading_settings(f, e, mode, "paper"), list(range(seeds)), "paper",
                                rp.plugin_series(f, e))


def _default_key(f: Any, e: Any) -> str:
    """The readings JSON of an experiment's default setting, as the store holds it."""
    return json.dumps(rp.reading_settings(f, e, "default")[0], sort_keys=True)


def _stored(dbs: list[str]) -> dict[str, tuple[str, float]]:
    """(status, wall seconds) of the stores' measurements by run key, a key in a later store
    replacing an earlier one's row."""
    by_key: dict[str, tuple[str, float]] = {}
    for db in dbs:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        for key, status, wall in con.execute("SELECT key, status, wall_time_s FROM rows WHERE objective_name='claims'"):
            by_key[key] = (status, float(wall or 0.0))
        con.close()
    return by_key


def _span(db: str, since: str, keys: set[str]) -> tuple[int, datetime, datetime] | None:
    """(measurements, first start, last finish) of the store's planned measurements (run ``keys``)
    finished at or after ``since``; None if there are none. Rows of settings the run does not plan
    (another ``--readings``, or a key a later change of the plan retired) are not counted."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = [(f, w) for k, f, w in con.execute("SELECT key, finished_at, wall_time_s FROM rows WHERE "
                                              "objective_name='claims' AND finished_at >= ?", (since,))
            if k in keys]
    con.close()
    if not rows:
        return None
    ends = [datetime.fromisoformat(f) for f, _ in rows]
    starts = [e - timedelta(seconds=float(w or 0.0)) for e, (_, w) in zip(ends, rows)]
    return len(rows), min(starts), max(ends)


def paper(dbs: list[str], workers: list[int], seeds: int, basis: str, since: str = "", mode: str = "each",
          only: list[str] | None = None) -> int:
    for db in dbs:
        if not Path(db).is_file():
            print(f"paper: {db} does not exist", file=sys.stderr)
            return 2
    print(run_line(load_when="at start"))
    stored = _stored(dbs)
    planned_keys: set[str] = set()
    planned_total = 0
    n_stored = 0
    estimated: list[float] = []
    unknown: list[str] = []
    rule = ("every planned measurement at the wall time of the experiment's default-reading seed-0 measurement"
            if basis == "default" else
            "stored measurements as measured, missing ones at the mean of the stored ones of the experiment")
    chosen = {e.id for _, e, _ in rp.select(only)} if only else None
    print(f"paper-scale store {' + '.join(dbs)} (reproduce {' '.join(only) if only else 'all'} --scale paper "
          f"--seeds {seeds}, readings {mode}); estimate: {rule}")
    print("| experiment | planned | stored | not feasible | default seed 0 (s) | mean stored (s) | "
          "estimated summed wall (h) |")
    print("|---|---|---|---|---|---|---|")
    for eid, (f, e) in rp.experiments().items():
        if chosen is not None and eid not in chosen:
            continue
        tasks = planned_tasks(f, e, mode, seeds)
        planned = len(tasks)
        planned_total += planned
        planned_keys.update(t.key for t in tasks)
        # only the stored measurements this run plans (a store an --readings all run filled holds more)
        rows = [(*stored[t.key], t.seed, json.dumps(t.params["readings"], sort_keys=True))
                for t in tasks if t.key in stored]
        n_stored += len(rows)
        walls = [w for _, w, _, _ in rows]
        failed = sum(st != "feasible" for st, _, _, _ in rows)
        dkey = _default_key(f, e)
        first = [w for st, w, seed, r in rows if st == "feasible" and (seed == 0 or not e.seeded) and r == dkey]
        mean = sum(walls) / len(walls) if walls else None
        if basis == "default":
            times = [first[0]] * planned if first else []
        else:
            times = walls + [mean] * max(0, planned - len(walls)) if walls else []
        if not times:
            unknown.append(eid)
        estimated += times
        est = f"{sum(times) / 3600:.2f}" if times else "unknown"
        d0 = f"{first[0]:.0f}" if first else "-"
        print(f"| {eid} | {planned} | {len(rows)} | {failed} | {d0} | "
              f"{'-' if mean is None else f'{mean:.0f}'} | {est} |")
    print(f"stored {n_stored} of the {planned_total} planned measurements")
    if unknown:
        print(f"no basis yet for {', '.join(unknown)}: the estimates below leave them out")
    print(f"estimated summed wall of the run: {sum(estimated) / 3600:.2f} h")
    for w in workers:
        print(f"estimated run on {w} workers (longest first, independent measurements): "
              f"{makespan(estimated, w) / 3600:.2f} h")
    for db in dbs:
        span = _span(db, since, planned_keys)
        if span:
            n, t0, t1 = span
            print(f"measured in {db}{f' since {since}' if since else ''}: {n} measurements from "
                  f"{t0:%Y-%m-%d %H:%M:%S} to {t1:%H:%M:%S} UTC, {(t1 - t0).total_seconds() / 60:.1f} min of wall clock")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    a = sub.add_parser("ci", help="time every experiment at --scale ci")
    a.add_argument("--jobs", type=int, default=2)
    a.add_argument("--seeds", type=int, default=rp.DEFAULT_SEEDS["ci"])
    a.add_argument("--only", nargs="*", default=[], help="experiment ids (default: all)")
    a.add_argument("--out", default=None, help="also write the page (e.g. benchmarks/perf/reproduce_ci.md)")
    b = sub.add_parser("paper", help="summarise a paper-scale store and estimate the run's wall time")
    b.add_argument("--db", required=True, action="append",
                   help="measurement store; repeat to overlay re-measured stores (later ones win per run key)")
    b.add_argument("--workers", type=int, nargs="*", default=[2, 16])
    b.add_argument("--seeds", type=int, default=rp.DEFAULT_SEEDS["paper"])
    b.add_argument("--basis", choices=("default", "mean"), default="default",
                   help="default: every measurement at the time of the experiment's default-reading seed-0 "
                        "one; mean: stored ones as measured, missing ones at the experiment's mean")
    b.add_argument("--readings", choices=("each", "all", "default"), default="each",
                   help="the run to estimate: reading combinations as optkit reproduce --readings (default each)")
    b.add_argument("--only", nargs="*", default=[], metavar="TARGET",
                   help="claims, experiments or papers to estimate, as optkit reproduce takes them (default: all)")
    b.add_argument("--since", default="", metavar="ISO",
                   help="time only the measurements finished at or after this time (e.g. 2026-11-24T00:00)")
    args = ap.parse_args(argv)
    if args.mode == "ci":
        return ci(args.jobs, args.seeds, args.only, args.out)
    return paper(args.db, args.workers, args.seeds, args.basis, args.since, args.readings, args.only)


if __name__ == "__main__":
    sys.exit(main())
