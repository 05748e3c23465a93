"""The paper-scale tau sweep of claim ``a-srpt-sec5-tau`` (A-SRPT paper, Fig. 6 at 150,000 jobs).

Per seed: the synthetic ``paper-sim`` workload (250 x 8 GPUs, 150,000 jobs, load 0.8, 80%
single-GPU, 10 Gbps) is built once; the five baselines run once (they do not take tau) and
A-SRPT once per tau. Each value equals what :func:`formulations.ddlwmp.claims.measure_tau`
returns for that (tau, seed) at ``scale="paper"`` (same workload, same policies, same seed); the
driver only avoids re-running the baselines per tau. Appends one JSON line per seed to
``benchmarks/paper-scale/ddlwmp_tau_sweep_150k.jsonl``.

Run: ``nice python benchmarks/ddlwmp_tau_sweep.py --seeds 0 1 2 3 4``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from formulations.ddlwmp.claims import _jobs, _workload, FIG6_JOBS
from formulations.ddlwmp.sec5 import PAPER_BASELINES, instance_of, reductions, run_policy_readout

OUT = Path(__file__).parent / "paper-scale" / "ddlwmp_tau_sweep_150k.jsonl"
TAUS = (0, 1, 3, 5, 10)


def summary(path: Path) -> list[str]:
    """Per tau: A-SRPT's min and max reduction over the five baselines (mean [min, max] over seeds),
    its GPU-time inflation and backlog at the end, and the verdicts of claim a-srpt-sec5-tau."""
    from formulations.ddlwmp.claims import EXPERIMENTS
    from optkit.claims import verdict

    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    exp = EXPERIMENTS["a-srpt-sec5-tau"]
    seeds = [r["seed"] for r in rows]
    md = [f"Seeds {seeds} (150,000 jobs, 250 x 8 GPUs, load 0.8, synthetic paper-sim). Mean [min, max] over seeds.", "",
          "| tau | min reduction (%) | max reduction (%) | A-SRPT inflation | A-SRPT backlog at end | "
          "min-reduction claim (>= 31%) | max-reduction claim (91 ± 10%) |", "|---|---|---|---|---|---|---|"]

    def mmm(xs: list[float], f: str = "{:+.1f}") -> str:
        return f"{f.format(sum(xs) / len(xs))} [{f.format(min(xs))}, {f.format(max(xs))}]"

    for tau in TAUS:
        per = [r["tau"][str(tau)] for r in rows if str(tau) in r["tau"]]
        lo, hi = [p["min"] for p in per], [p["max"] for p in per]
        v_lo = verdict(exp.claim("a-srpt-tau-min-reduction"), lo).text
        v_hi = verdict(exp.claim("a-srpt-tau-max-reduction"), hi).text
        md.append(f"| {tau} | {mmm(lo)} | {mmm(hi)} | {mmm([p['a-srpt']['inflation'] for p in per], '{:.2f}')} | "
                  f"{mmm([p['a-srpt']['backlog_at_end'] for p in per], '{:.3f}')} | {v_lo} | {v_hi} |")
    base = {b: [r["baselines"][b] for r in rows] for b in PAPER_BASELINES}
    md += ["", "Baselines (they do not take tau): GPU-time inflation and backlog at the end, mean over seeds: " +
           "; ".join(f"{b} {sum(x['inflation'] for x in v) / len(v):.2f} / {sum(x['backlog_at_end'] for x in v) / len(v):.3f}"
                     for b, v in base.items()) + "."]
    return md


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--scale", default="paper")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--summary", action="store_true", help="only print the summary of --out")
    args = ap.parse_args()
    if args.summary:
        print("\n".join(summary(Path(args.out))))
        return
    for seed in args.seeds:
        t0 = time.perf_counter()
        r = {"workload": "synthetic", "load": 0.8, "comm_heavy": 1.5}
        data = _workload(r, jobs=_jobs(FIG6_JOBS[-1], args.scale), scale=args.scale, seed=seed)
        inst = instance_of(data)
        build_s = time.perf_counter() - t0
        runs = {b: run_policy_readout(inst, b, r, seed) for b in PAPER_BASELINES}
        print(f"seed {seed}: built in {build_s:.0f} s; baselines " +
              ", ".join(f"{b} {runs[b]['total_completion']:.4e} ({runs[b]['wall_s']:.0f} s)" for b in PAPER_BASELINES), flush=True)
        per_tau = {}
        for tau in TAUS:
            a = run_policy_readout(inst, "a-srpt", dict(r, tau=tau), seed)
            red = reductions({**runs, "a-srpt": a})
            per_tau[str(tau)] = {"a-srpt": a, "reduction_pct": red, "min": min(red.values()), "max": max(red.values())}
            print(f"  tau {tau}: TCT {a['total_completion']:.4e}, reduction min {min(red.values()):+.1f}% "
                  f"max {max(red.values()):+.1f}%, inflation {a['inflation']:.2f}, backlog {a['backlog_at_end']:.3f} "
                  f"({a['wall_s']:.0f} s)", flush=True)
        line = {"seed": seed, "scale": args.scale, "jobs": len(inst.jobs), "servers": inst.cluster.servers,
                "baselines": runs, "tau": per_tau, "wall_s": round(time.perf_counter() - t0, 1),
                "prediction_mae": data["meta"].get("prediction", {}).get("mae")}
        with open(args.out, "a") as f:
            f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
