"""Reproduce Sec. 7 of the SJF-BCO paper (Figs. 4-7) and measure the issue's timing targets.

Workload: :func:`formulations.rar_ddls.generate.paper_sec7` (160 jobs: 80x1, 14x2, 26x4, 30x8,
8x16, 2x32 GPUs; F in [1000, 6000]; contention-free per-iteration time in [0.01, 0.05] s; 20
servers of 4/8/16/32 GPUs; T = 1200), seeds 0..``--seeds``-1. Every makespan and job completion
time is ``evaluate``'s, recomputed by re-simulating the contention model from each schedule's
starts and placements, never an algorithm's plan.

* Fig. 4: makespan and average JCT of SJF-BCO, FF, LS and RAND (RAND seeded with the instance
  seed).
* Fig. 5: SJF-BCO with kappa fixed to 1..32 (lambda = 1).
* Fig. 6: 10, 12, ..., 20 servers, T = 1500: the 20-server instance of each seed with only its
  first n servers kept, so the job set is the same along the sweep.
* Fig. 7: SJF-BCO with lambda = 1, 2, 4, 8 and kappa = 1, as the paper sets it.
* Timing: SJF-BCO's wall time per instance (target <= 2 s, bisection and kappa loop included) and
  ``evaluate``'s wall time on a 160-job schedule (target <= 50 ms), medians over the seeds.

Run: ``python benchmarks/rar_ddls_sec7.py [--seeds 5]``; writes
``benchmarks/results/rar_ddls_sec7.md`` and ``rar_ddls_sec7_fig{4,5,6,7}.png``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from formulations.rar_ddls.baselines import run_ff, run_ls, run_rand
from formulations.rar_ddls.bounds import lower_bound, theorem5
from formulations.rar_ddls.generate import paper_sec7
from formulations.rar_ddls.model import RarInstance, evaluate
from formulations.rar_ddls.sjf_bco import run_sjf_bco

POLICIES: dict[str, Callable[..., Any]] = {"SJF-BCO": run_sjf_bco, "FF": run_ff, "LS": run_ls, "RAND": run_rand}
PAPER = {
    "4": "SJF-BCO has the smallest makespan and average JCT of the four policies",
    "5": "as kappa grows the makespan first drops, then rises, then drops again (two turning points)",
    "6": "from 10 to 20 servers the makespans of FF, LS and SJF-BCO fall; FF falls most",
    "7": "with kappa = 1 the makespan falls monotonically as lambda grows from 1 to 8",
}


def measure(inst: RarInstance, run: Callable[..., Any], seed: int, **params: Any) -> dict[str, Any]:
    """Run one algorithm and take makespan / mean JCT from ``evaluate`` (seconds)."""
    t0 = time.perf_counter()
    res = run(inst, objective="makespan", seed=seed, **params)
    wall = time.perf_counter() - t0
    if res.solution is None:
        return {"makespan": None, "jct": None, "wall": wall, "status": str(res.status.value)}
    t1 = time.perf_counter()
    ev = evaluate(inst, res.solution)
    eval_wall = time.perf_counter() - t1
    if not ev.feasible:
        raise AssertionError(f"infeasible schedule: {ev.violations[:2]}")
    return {"makespan": ev.objectives["makespan"], "jct": ev.metrics["mean_jct_s"], "wall": wall,
            "eval_wall": eval_wall, "status": str(res.status.value), "within": ev.metrics["within_horizon"]}


def _mean(xs: list[float | None]) -> str:
    vals = [x for x in xs if x is not None]
    if not vals:
        return "-"
    s = f"{statistics.mean(vals):.1f}"
    return s if len(vals) == len(xs) else f"{s} ({len(xs) - len(vals)} failed)"


def _plot(path: Path, title: str, xs: list[Any], series: dict[str, list[float | None]], xlabel: str, ylabel: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for name, ys in series.items():
        ax.plot(xs, [float("nan") if y is None else y for y in ys], marker="o", label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _bars(path: Path, title: str, labels: list[str], groups: dict[str, list[float]]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(6, 3.6))
    x = np.arange(len(labels))
    width = 0.8 / len(groups)
    for k, (name, vals) in enumerate(groups.items()):
        ax.bar(x + k * width, vals, width, label=name)
    ax.set_xticks(x + width * (len(groups) - 1) / 2, labels)
    ax.set_ylabel("seconds")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--outdir", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args()
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    seeds = list(range(args.seeds))
    t_all = time.perf_counter()
    insts = {s: RarInstance.from_dict(paper_sec7(s)) for s in seeds}
    lines = [
        "# Sec. 7 reproduction (SJF-BCO paper, Figs. 4-7)",
        "",
        f"Measured on {platform.machine()} with {os.cpu_count()} cores, Python {platform.python_version()}. "
        f"Workload `paper_sec7(seed)` for seeds {seeds[0]}-{seeds[-1]} (160 jobs, 20 servers of 4/8/16/32 GPUs, "
        "T = 1200 slots of 1 s; synthetic job parameters derived in `formulations/rar_ddls/generate.py`). "
        "Every value is `evaluate`'s, re-simulated from the schedule's starts and placements; means over the seeds. "
        "Times in seconds (= slots).",
        "",
    ]

    # Fig. 4
    rows = {name: [measure(insts[s], run, s) for s in seeds] for name, run in POLICIES.items()}
    lines += ["## Fig. 4: makespan and average JCT", "", f"Paper: {PAPER['4']}.", "",
              "| policy | makespan (mean) | average JCT (mean) | makespan per seed | wall time (median, s) |", "|---|---|---|---|---|"]
    for name, rs in rows.items():
        per = ", ".join("-" if r["makespan"] is None else f"{r['makespan']:.0f}" for r in rs)
        lines.append(f"| {name} | {_mean([r['makespan'] for r in rs])} | {_mean([r['jct'] for r in rs])} | {per} | "
                     f"{statistics.median(r['wall'] for r in rs):.3f} |")
    best = {s: min((rows[n][k]["makespan"], n) for n in rows if rows[n][k]["makespan"] is not None)[1]
            for k, s in enumerate(seeds)}
    lines += ["", "Smallest makespan per seed: " + ", ".join(f"seed {s}: {best[s]}" for s in seeds), ""]
    lines += ["Guarantee and bound per seed (`bounds.py`): Theorem 5's ratio n_g·phi·u/l, and each policy's "
              "makespan over the best proven lower bound (an upper bound on its true approximation ratio there).", "",
              "| seed | Theorem 5 ratio (n_g, phi, 1/l) | lower bound (s) | " + " | ".join(f"{n} / LB" for n in rows) + " |",
              "|---|---|---|" + "---|" * len(rows)]
    for k, s in enumerate(seeds):
        th = theorem5(insts[s])
        lb = lower_bound(insts[s], "makespan")
        ratios = " | ".join("-" if rows[n][k]["makespan"] is None else f"{rows[n][k]['makespan'] / lb:.2f}" for n in rows)
        lines.append(f"| {s} | {th['ratio']:.3g} ({th['n_g']}, {th['phi']:.3g}, {1 / th['l']:.3g}) | {lb:.0f} | {ratios} |")
    lines.append("")
    _bars(out / "rar_ddls_sec7_fig4.png", "Fig. 4: makespan and average JCT (mean over seeds)", list(rows),
          {"makespan": [statistics.mean(r["makespan"] for r in rs if r["makespan"] is not None) for rs in rows.values()],
           "average JCT": [statistics.mean(r["jct"] for r in rs if r["jct"] is not None) for rs in rows.values()]})
    sjf_walls = [r["wall"] for r in rows["SJF-BCO"]]
    eval_walls = [r["eval_wall"] for r in rows["SJF-BCO"] if "eval_wall" in r]

    # Fig. 5
    kappas = list(range(1, 33))
    k_ms = [[measure(insts[s], run_sjf_bco, s, kappa=k)["makespan"] for s in seeds] for k in kappas]
    lines += ["## Fig. 5: kappa (lambda = 1)", "", f"Paper: {PAPER['5']}.", "",
              "| kappa | " + " | ".join(str(k) for k in kappas) + " |", "|---|" + "---|" * len(kappas),
              "| makespan | " + " | ".join(_mean(v) for v in k_ms) + " |", ""]
    _plot(out / "rar_ddls_sec7_fig5.png", "Fig. 5: SJF-BCO makespan vs kappa", kappas,
          {"SJF-BCO": [statistics.mean(v) if None not in v else None for v in k_ms]}, "kappa", "makespan (s)")

    # Fig. 6
    counts = [10, 12, 14, 16, 18, 20]
    f6: dict[str, list[float | None]] = {name: [] for name in POLICIES}
    f6_fail: dict[str, int] = {name: 0 for name in POLICIES}
    for n in counts:
        for name, run in POLICIES.items():
            vals = []
            for s in seeds:
                d = paper_sec7(s, horizon=1500)
                d["servers"] = d["servers"][:n]
                r = measure(RarInstance.from_dict(d), run, s)
                vals.append(r["makespan"])
                f6_fail[name] += r["makespan"] is None
            ok = [v for v in vals if v is not None]
            f6[name].append(statistics.mean(ok) if ok else None)
    lines += ["## Fig. 6: servers (T = 1500)", "", f"Paper: {PAPER['6']}.", "",
              "| policy | " + " | ".join(f"{n} servers" for n in counts) + " | runs without a schedule |",
              "|---|" + "---|" * (len(counts) + 1)]
    for name, vals in f6.items():
        lines.append(f"| {name} | " + " | ".join("-" if v is None else f"{v:.1f}" for v in vals) + f" | {f6_fail[name]} |")
    lines.append("")
    _plot(out / "rar_ddls_sec7_fig6.png", "Fig. 6: makespan vs servers (T = 1500)", counts, f6, "servers", "makespan (s)")

    # Fig. 7
    lams = [1, 2, 4, 8]
    l_ms = [[measure(insts[s], run_sjf_bco, s, kappa=1, lam=lam)["makespan"] for s in seeds] for lam in lams]
    lines += ["## Fig. 7: lambda (kappa = 1)", "", f"Paper: {PAPER['7']}.", "",
              "| lambda | " + " | ".join(str(v) for v in lams) + " |", "|---|" + "---|" * len(lams),
              "| makespan | " + " | ".join(_mean(v) for v in l_ms) + " |", ""]
    _plot(out / "rar_ddls_sec7_fig7.png", "Fig. 7: SJF-BCO makespan vs lambda (kappa = 1)", lams,
          {"SJF-BCO": [statistics.mean(v) if None not in v else None for v in l_ms]}, "lambda", "makespan (s)")

    lines += ["## Timing targets", "",
              f"- SJF-BCO on one 160-job instance, bisection and kappa loop included: median {statistics.median(sjf_walls):.3f} s, "
              f"max {max(sjf_walls):.3f} s over {len(seeds)} instances (target <= 2 s).",
              f"- `evaluate` re-simulating a 160-job SJF-BCO schedule: median {statistics.median(eval_walls) * 1e3:.1f} ms, "
              f"max {max(eval_walls) * 1e3:.1f} ms (target <= 50 ms).",
              f"- Whole benchmark: {time.perf_counter() - t_all:.0f} s.", ""]
    (out / "rar_ddls_sec7.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
