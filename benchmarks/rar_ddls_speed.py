"""SJF-BCO planning time on the Sec. 7 workload (issue 15 row: 160 jobs / 20 servers, goal <= 0.3 s)
and the exact solver on Sec. 7-like small instances (issue 13 item 6 / issue 15 row: goal <= 10 s).

Run: ``python benchmarks/rar_ddls_speed.py [--seeds 5] [--exact-jobs 10,20] [--tiny-jobs 6,8] [--limit 60]``.
Prints medians over seeds: SJF-BCO's CPU time and wall time (wall clock counts whatever else the
machine runs: say so when quoting it).

* SJF-BCO: ``sjf_bco(paper_sec7(seed))`` under its default readings and under the earlier
  readings (accumulated, estimate, bisection, least-loaded), bisection and kappa loop included.
* Exact: ``paper_sec7(seed, servers=S, mix=...)`` with the Sec. 7 job-size mix scaled down to n
  jobs (10 jobs: 5 x 1, 1 x 2, 2 x 4, 2 x 8 GPUs on 3 servers), CP-SAT with 2 workers: the time to
  a proof with the incumbent-meets-bound shortcut and, with ``--model``, with the model solved.
"""

from __future__ import annotations

import argparse
import statistics
import time

from optkit.formulations.rar_ddls.exact import run_cpsat
from optkit.formulations.rar_ddls.generate import paper_sec7, tiny
from optkit.formulations.rar_ddls.model import RarInstance
from optkit.formulations.rar_ddls.sjf_bco import sjf_bco

EARLIER = {"available": "accumulated", "kappa_select": "estimate", "theta_search": "bisection",
           "fa_ffp": "least-loaded"}
MIXES = {10: ({1: 5, 2: 1, 4: 2, 8: 2}, 3), 20: ({1: 10, 2: 2, 4: 3, 8: 4, 16: 1}, 5),
         40: ({1: 20, 2: 4, 4: 7, 8: 7, 16: 2}, 8), 80: ({1: 40, 2: 7, 4: 13, 8: 15, 16: 4, 32: 1}, 10)}


def _time(fn, *a, **kw) -> tuple[float, float]:
    """(wall, CPU) seconds of one call: the CPU time of this process is what a loaded machine
    inflates least."""
    t, c = time.perf_counter(), time.process_time()
    fn(*a, **kw)
    return time.perf_counter() - t, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--exact-jobs", default="10")
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--model", action="store_true", help="also solve the CP-SAT model (no shortcut)")
    ap.add_argument("--tiny-jobs", default="", help="job counts of tiny(seed, jobs=n, servers=3) instances, where "
                                                    "the bound rarely meets the incumbent and the model must prove")
    args = ap.parse_args()
    seeds = range(args.seeds)
    insts = [RarInstance.from_dict(paper_sec7(s)) for s in seeds]
    for label, kw in (("default readings", {}), ("earlier readings", EARLIER)):
        got = [_time(sjf_bco, inst, **kw) for inst in insts]
        walls, cpus = [g[0] for g in got], [g[1] for g in got]
        print(f"SJF-BCO 160 jobs / 20 servers, {label}: CPU median {statistics.median(cpus):.3f} s "
              f"(max {max(cpus):.3f}), wall median {statistics.median(walls):.3f} s over {len(walls)} seeds")
    for n in (int(v) for v in args.tiny_jobs.split(",") if v):
        for s in seeds:
            inst = RarInstance.from_dict(tiny(s, jobs=n, servers=3, max_horizon=10 * n))
            t = time.perf_counter()
            r = run_cpsat(inst, time_limit=args.limit, workers=2, seed=0)
            print(f"exact tiny {n} jobs / 3 servers {list(inst.servers)}, seed {s}: {r.status.value} {r.objective} "
                  f"(bound {r.bound}) in {time.perf_counter() - t:.1f} s; H {r.info.get('horizon_slots')}, "
                  f"LB {r.info.get('lower_bound_slots')}, {r.info.get('proof', 'model')}", flush=True)
    for n in (int(v) for v in args.exact_jobs.split(",") if v):
        mix, servers = MIXES[n]
        for s in seeds:
            inst = RarInstance.from_dict(paper_sec7(s, servers=servers, mix=mix))
            for shortcut in ((True, False) if args.model else (True,)):
                t = time.perf_counter()
                r = run_cpsat(inst, time_limit=args.limit, workers=2, seed=0, shortcut=shortcut)
                wall = time.perf_counter() - t
                print(f"exact {n} jobs / {servers} servers {list(inst.servers)}, seed {s}, shortcut={shortcut}: "
                      f"{r.status.value} {r.objective} (bound {r.bound}) in {wall:.1f} s; "
                      f"H {r.info.get('horizon_slots')}, LB {r.info.get('lower_bound_slots')}, "
                      f"{r.info.get('proof', '')}", flush=True)


if __name__ == "__main__":
    main()
