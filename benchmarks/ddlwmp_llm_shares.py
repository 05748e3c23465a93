"""A-SRPT vs the paper's baselines on synthetic workloads with shares of 3D-parallel and MoE jobs.

    PYTHONPATH=. python benchmarks/ddlwmp_llm_shares.py [--jobs 600] [--servers 6] [--seeds 0 1 2]
        [--out benchmarks/perf/ddlwmp_llm_shares.md]

Issue 37 item 3: the workloads of :func:`optkit.formulations.ddlwmp.generate.generate` with the
readings ``tp_share`` and ``moe_share`` (a share of the distributed job groups turned into 3D-parallel
or MoE jobs, :mod:`optkit.formulations.ddlwmp.llm_workloads`) and ``routing_skew``, every other
argument at the generator's Sec. V defaults (load 0.8, random-forest predictions) except the
single-GPU share, 0.5, so that half the groups are distributed and can be converted. Per workload,
A-SRPT (every reading at its default) and the five baselines (``consolidate`` at its default) run
through :func:`optkit.formulations.ddlwmp.sec5.run_policy_readout`: every total completion time is
``evaluate``'s. The page prints, per (shares, skew, seed), the workload's measured job shares, each
policy's total completion time, A-SRPT's delayed starts and its reduction against the best
baseline, (TCT_best - TCT_A-SRPT) / TCT_best.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))

from _page import run_line  # noqa: E402

SETTINGS = ((0.0, 0.0, 0.0), (0.25, 0.0, 0.0), (0.0, 0.25, 0.0), (0.0, 0.25, 1.0), (0.25, 0.25, 0.0),
            (0.5, 0.25, 0.0))
"""(tp_share, moe_share, routing_skew) of each workload family."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=600)
    ap.add_argument("--servers", type=int, default=6)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    from optkit.formulations.ddlwmp.generate import generate
    from optkit.formulations.ddlwmp.sec5 import PAPER_BASELINES, instance_of, run_policy_readout

    lines = ["# A-SRPT vs the baselines with 3D-parallel and MoE jobs (issue 37)", "",
             run_line(load_when="at start"), "",
             f"Synthetic workloads (`generate`), {args.jobs} jobs on {args.servers} x 8 GPUs, single-GPU share 0.5, "
             "load 0.8, random-forest predictions; every reading of the policies at its default. Total completion "
             "times in seconds, from `evaluate`.", "",
             "| tp_share | moe_share | routing_skew | seed | TP jobs | MoE jobs | a-srpt | " +
             " | ".join(PAPER_BASELINES) + " | delayed | vs best baseline |",
             "|" + "---|" * (9 + len(PAPER_BASELINES))]
    print("\n".join(lines), flush=True)
    t0 = time.perf_counter()
    for tp, moe, skew in SETTINGS:
        for seed in args.seeds:
            d = generate(jobs=args.jobs, servers=args.servers, seed=seed, single_gpu_share=0.5, tp_share=tp,
                         moe_share=moe, routing_skew=skew)
            inst = instance_of(d)
            runs = {p: run_policy_readout(inst, p, {}, seed) for p in ("a-srpt", *PAPER_BASELINES)}
            best = min(runs[b]["total_completion"] for b in PAPER_BASELINES)
            red = 100.0 * (best - runs["a-srpt"]["total_completion"]) / best
            meta = d["meta"]
            row = (f"| {tp:g} | {moe:g} | {skew:g} | {seed} | {meta.get('tp_job_share', 0.0):.3f} | "
                   f"{meta.get('moe_job_share', 0.0):.3f} | {runs['a-srpt']['total_completion']:.4e} | " +
                   " | ".join(f"{runs[b]['total_completion']:.4e}" for b in PAPER_BASELINES) +
                   f" | {runs['a-srpt']['delayed_starts']} | {red:+.1f}% |")
            lines.append(row)
            print(row, flush=True)
    lines += ["", f"Wall time {time.perf_counter() - t0:.0f} s."]
    print(lines[-1])
    if args.out is not None:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
