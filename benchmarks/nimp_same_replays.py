"""Does a change to nimp's replay keep its results? Titan and the baselines on the ci trace windows.

    PYTHONPATH=. python benchmarks/nimp_same_replays.py --json OUT.json [--before BEFORE.json]
        [--seeds 0,1] [--out PAGE.md] [--title TITLE]

Run it once on the code before a change and once after (``PYTHONPATH=OTHER_CHECKOUT`` runs it on
another checkout's code); ``--before`` compares with the earlier run's ``--json`` file, run by run.

Each run is one replay of the ``titan-replay`` experiment at ci scale (:mod:`...nimp.claims`): the
Microsoft ITP trace (``../shared/data/traces/microsoft-itp``) parsed by ``replay.load_workload``
(seed ``s``), the jobs submitted in the seed's ci window (``claims.window``), the phase budget 0.05 s,
replayed by ``replay.replay`` under one policy: Titan (readings at their defaults, then
``titan_step2=pool-prefix``, ``titan_tie_break=worst-fit`` and ``titan_algorithm=pseudo-code``, one at a
time), Elasticflow, HiveD and Tiresias. Per run it prints the jobs, the mean used machines and
fragmentation of ``replay.summarize`` (until the last arrival, as the claims), Titan's counters
(relaxed, bound, multi-machine placements) and a SHA-256 of every job's (id, start, end, machine of
each worker, communication seconds per synchronisation) and of the summary's every value: equal
hashes are equal replays.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: the checkout named there is the code replayed

RUNS: dict[str, tuple[str, dict[str, Any]]] = {
    "titan": ("titan", {}),
    "titan titan_step2=pool-prefix": ("titan", {"titan_step2": "pool-prefix"}),
    "titan titan_tie_break=worst-fit": ("titan", {"titan_tie_break": "worst-fit"}),
    "titan titan_algorithm=pseudo-code": ("titan", {"titan_algorithm": "pseudo-code"}),
    "elasticflow": ("elasticflow", {}),
    "hived": ("hived", {}),
    "tiresias": ("tiresias", {}),
}


def _trace_dir(claims: Any) -> Any:
    """``claims.trace_dir()`` (named ``_trace_dir`` at 1ab4764, the code this script compared with)."""
    return (getattr(claims, "trace_dir", None) or getattr(claims, "_trace_dir"))()


def run(seed: int, policy: str, readings: dict[str, Any], cache: dict[int, Any]) -> dict[str, Any]:
    """One replay (module docstring): its counts and hashes."""
    from optkit.formulations.nimp import claims
    from optkit.formulations.nimp.replay import POLICIES, ReplayConfig, load_workload, replay, summarize

    d = _trace_dir(claims)
    if seed not in cache:
        cache[seed] = load_workload(d, seed=seed)
    jobs, topo, cfg = cache[seed]
    w = claims.window(seed, "ci")
    jobs = [j for j in jobs if w is None or w[0] <= j.submit < w[1]]
    cfg = ReplayConfig(iteration_s=cfg.iteration_s, phase_budget_s=0.05)
    kw = claims.titan_readings(readings) if policy == "titan" else dict(readings)
    res = replay(jobs, POLICIES[policy](**kw), topo=topo, config=cfg)
    s = summarize(res, until=max(j.submit for j in jobs))
    s.pop("replay_wall_s", None)
    rows = [(r["id"], repr(r["start"]), repr(r["end"]), repr(r["machine_of_worker"]), repr(r["comm_s_per_sync"]))
            for r in res.jobs]
    return {"jobs": len(res.jobs), "used_machines_avg": s.get("used_machines_avg"),
            "fragmentation_rate_avg": s.get("fragmentation_rate_avg"),
            "titan": [res.extra.get(k) for k in ("titan_bandwidth_relaxed", "titan_bandwidth_bound",
                                                  "titan_multi_machine_placements")],
            "schedule_sha256": hashlib.sha256(repr(rows).encode()).hexdigest(),
            "summary_sha256": hashlib.sha256(repr(sorted(s.items())).encode()).hexdigest()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, required=True, help="write every run's outcome here")
    ap.add_argument("--before", type=Path, help="an earlier run's --json file to compare with")
    ap.add_argument("--seeds", default="0,1", help="trace windows (claims.window at ci scale)")
    ap.add_argument("--out", type=Path, help="write the table as a page here")
    ap.add_argument("--title", default="nimp's replays before and after a change", help="the page's title")
    ap.add_argument("--label", help="the code replayed, as the page names it (default: its checkout's commit)")
    args = ap.parse_args(argv)
    from _page import compared_row, finish_comparison
    from asrpt_same_schedules import code_commit  # (benchmarks/, this script's folder)

    from optkit.formulations.nimp import claims

    if _trace_dir(claims) is None:
        print("the ITP trace is absent: nothing replayed")
        return 2
    before = json.loads(args.before.read_text()) if args.before else None
    commit = args.label or code_commit()
    got: dict[str, Any] = {}
    cache: dict[int, Any] = {}
    lines = ["| seed | run | jobs | used machines (mean) | fragmentation (mean) | Titan relaxed, bound, multi | "
             "schedule SHA-256 | summary SHA-256 |" + (" same as before |" if before else ""),
             "|---:|---|---:|---:|---:|---|---|---|" + ("---|" if before else "")]
    same = 0
    for seed in (int(s) for s in args.seeds.split(",")):
        for label, (policy, readings) in RUNS.items():
            key = f"{seed} {label}"
            out = got[key] = run(seed, policy, readings, cache)
            titan = ", ".join("-" if v is None else str(v) for v in out["titan"])
            row = (f"| {seed} | {label} | {out['jobs']} | {out['used_machines_avg']:.6f} | "
                   f"{out['fragmentation_rate_avg']:.6f} | {titan} | {out['schedule_sha256'][:16]} | "
                   f"{out['summary_sha256'][:16]} |")
            row, ok = compared_row(row, before, key, out)
            same += ok
            lines.append(row)
    return finish_comparison(args.json, got, commit, before, lines, same, out=args.out, title=args.title,
                             script="nimp_same_replays.py", noun="replays",
                             equal="schedule hash: every job's start, end, machines and communication time; summary "
                                   "hash: every metric of `summarize`")


if __name__ == "__main__":
    raise SystemExit(main())
