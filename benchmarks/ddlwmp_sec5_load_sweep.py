"""Offered load x tau sweep at the Fig.-6 point of the Sec. V-B reproduction (A-SRPT paper).

Where does the paper's ordering (A-SRPT ahead of all five baselines, Figs. 6-9) appear? The Fig. 6
setting of :mod:`ddlwmp_sec5` at one job count (default ``75,000 * scale`` jobs, the middle of
Fig. 6 and the point of Figs. 7-9) on ``250 * scale`` servers x 8 GPUs, 80% single-GPU jobs, 10
Gbps, random-forest predictions, replayed at several offered loads of the ``paper-sim`` generator
(:func:`formulations.ddlwmp.generate.generate`, ``load``: the GPU load at alpha~min) and with
A-SRPT's delay threshold tau = 1.0 (optkit's default) and tau = 0 (the paper's testbed value; no
delayed starts, Algorithm 1 lines 14-20). Every value is ``evaluate``'s total_completion of the
simulated schedule; the reduction of A-SRPT vs baseline b is ``(TCT_b - TCT_A-SRPT) / TCT_b``.

Run: ``python benchmarks/ddlwmp_sec5_load_sweep.py [--scale 0.1] [--loads 0.2 0.4 0.6 0.8] [--seeds 0]``.
Writes ``benchmarks/results/ddlwmp_sec5_load_sweep{tag}.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from ddlwmp_sec5 import BASE, LABEL, Runner, _flow_reds, _instance, _red
from formulations.ddlwmp.generate import B_INTER, generate
from optkit.predict import fill_predictions

VARIANTS = (("a-srpt", "tau 1.0"), ("a-srpt-tau0", "tau 0"))


def rank(res: dict[str, float], variant: str) -> int:
    """1-based rank of ``variant`` among itself and the five baselines by total completion time."""
    return 1 + sum(res[b] < res[variant] for b in BASE)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--jobs", type=int, default=None, help="default: round(75,000 * scale)")
    ap.add_argument("--loads", type=float, nargs="+", default=[0.2, 0.4, 0.6, 0.8])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--share", type=float, default=0.8, help="single-GPU share (Fig. 6: 0.8)")
    ap.add_argument("--tag", default="")
    ap.add_argument("--outdir", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args()
    T0 = time.perf_counter()
    servers = max(1, round(250 * args.scale))
    n = args.jobs if args.jobs is not None else max(1, round(75_000 * args.scale))
    res: dict[tuple[float, int], dict[str, Any]] = {}
    for seed in args.seeds:
        run = Runner(seed)
        for load in args.loads:
            t0 = time.perf_counter()
            d = generate(jobs=n, servers=servers, single_gpu_share=args.share, predictor=None, seed=seed, load=load,
                         inter_bandwidth=B_INTER)
            mae = fill_predictions(d, "rf", seed=seed)
            gen_s = time.perf_counter() - t0
            r = run.all(_instance(d), f"seed={seed} load={load:g}")
            r["_gen_s"], r["_mae"] = gen_s, mae
            res[(load, seed)] = r
    total = time.perf_counter() - T0

    md = ["# Sec. V-B Fig.-6 point (A-SRPT paper): offered load x tau sweep", "",
          f"Measured on {platform.machine()} with {os.cpu_count()} cores, Python {platform.python_version()}, by "
          f"`benchmarks/ddlwmp_sec5_load_sweep.py`. {n:,} jobs (scale {args.scale:g}: the middle point of Fig. 6 and the "
          f"point of Figs. 7-9) on {servers} servers x 8 GPUs, {args.share * 100:.0f}% single-GPU, NIC 10 Gbps, synthetic "
          f"`paper-sim` workload generate(..., seed=S, load=L), random-forest predictions; seeds "
          f"{', '.join(map(str, args.seeds))}. A-SRPT comm_heavy 1.5 with tau 1.0 and tau 0. Every value is `evaluate`'s "
          "total_completion (schedules checked feasible). Reductions: (TCT_b - TCT_A-SRPT) / TCT_b, positive = A-SRPT "
          "better; total flow = total completion - sum of releases (the part a policy can change).", "",
          "## Total completion time (10^6 s) and A-SRPT's reduction", "",
          "| load | seed | A-SRPT tau 1.0 | A-SRPT tau 0 | " + " | ".join(LABEL[b] for b in BASE) + " | FIFO | "
          "reduction tau 1.0 min / max | ahead tau 1.0 | reduction tau 0 min / max | ahead tau 0 | rank tau 1.0 / tau 0 (of 6) | "
          "delayed starts (tau 1.0) | makespan / last release (WCS-SubTime) | GPU-time inflation A-SRPT / WCS-Duration | "
          "total-flow reduction tau 1.0 min / max | tau 0 |",
          "|" + "---|" * (len(BASE) + 15)]
    for (load, seed), r in sorted(res.items()):
        red1 = [_red(r, b) for b in BASE]
        red0 = [_red(r, b, "a-srpt-tau0") for b in BASE]
        f1, f0 = _flow_reds(r), _flow_reds(r, "a-srpt-tau0")
        md.append(f"| {load:g} | {seed} | {r['a-srpt'] / 1e6:.2f} | {r['a-srpt-tau0'] / 1e6:.2f} | "
                  + " | ".join(f"{r[b] / 1e6:.2f}" for b in BASE) + f" | {r['fifo'] / 1e6:.2f} | "
                  f"{min(red1) * 100:+.0f}% / {max(red1) * 100:+.0f}% | {sum(x > 0 for x in red1)}/5 | "
                  f"{min(red0) * 100:+.0f}% / {max(red0) * 100:+.0f}% | {sum(x > 0 for x in red0)}/5 | "
                  f"{rank(r, 'a-srpt')} / {rank(r, 'a-srpt-tau0')} | {r['_delayed']} | {r['_stretch_wcs-subtime']:.2f} | "
                  f"{r['_infl_a-srpt']:.2f} / {r['_infl_wcs-duration']:.2f} | "
                  f"{min(f1) * 100:+.0f}% / {max(f1) * 100:+.0f}% | {min(f0) * 100:+.0f}% / {max(f0) * 100:+.0f}% |")
    md += ["", "## Where the paper's ordering appears", "",
           "Per tau and seed: the offered loads at which A-SRPT beats all five baselines (the paper's ordering) and "
           "those at which it beats none.", "",
           "| A-SRPT | seed | ahead of all 5 at load | ahead of none at load |", "|---|---|---|---|"]
    for v, name in VARIANTS:
        for seed in args.seeds:
            ok = [load for load in args.loads if all(_red(res[(load, seed)], b, v) > 0 for b in BASE)]
            none = [load for load in args.loads if all(_red(res[(load, seed)], b, v) <= 0 for b in BASE)]
            md.append(f"| {name} | {seed} | {', '.join(f'{x:g}' for x in ok) or '-'} | {', '.join(f'{x:g}' for x in none) or '-'} |")
    md += ["", f"Wall time: {total:.0f} s in all ({len(res)} settings x {len(BASE) + 3} policies).", ""]
    text = "\n".join(md) + "\n"
    print(text)
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"ddlwmp_sec5_load_sweep{args.tag}.md").write_text(text)
    dump = {"scale": args.scale, "servers": servers, "jobs": n, "share": args.share, "wall_s": total,
            "runs": [{"load": load, "seed": seed, **r} for (load, seed), r in sorted(res.items())]}
    (out / f"ddlwmp_sec5_load_sweep{args.tag}.json").write_text(json.dumps(dump, indent=1, default=float) + "\n")


if __name__ == "__main__":
    main()
