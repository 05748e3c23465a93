"""Reproduce Sec. V-B of the A-SRPT paper (Figs. 6-9): total completion time per policy.

Workload: the ``paper-sim`` generator (:func:`formulations.ddlwmp.generate.generate`; synthetic
models, groups, durations and Poisson arrivals at offered load 0.8), scaled by ``--scale``: the
paper's 250 servers x 8 GPUs and 37,500-150,000 jobs become ``round(250*scale)`` servers and
``round(n*scale)`` jobs (0.1: 25 servers, 3,750-15,000 jobs), so jobs per GPU stay the paper's.
Policies: A-SRPT (defaults comm_heavy 1.5, tau 1.0) and the paper's five baselines (SPJF, SPWF,
WCS-Duration, WCS-Workload, WCS-SubTime), all with Heavy-Edge; Fig. 9 adds A-SRPT with mean,
median and perfect predictions. Every objective value is ``evaluate``'s ``total_completion``
recomputed from the schedule's starts and placements, never the simulator's bookkeeping.

* Fig. 6: job count sweep, 80% single-GPU jobs, NIC 10 Gbps.
* Fig. 7: 75,000*scale jobs, single-GPU share 80/60/40/20/0%, NIC 10 Gbps.
* Fig. 8: 75,000*scale jobs, 0% single-GPU, NIC 1/5/10/25/50 Gbps. One job set (generated at
  10 Gbps, so iteration counts and arrivals are fixed) replayed on each NIC bandwidth; the
  offered load therefore rises above 0.8 at lower bandwidths.
* Fig. 9: 75,000*scale jobs, 80% single-GPU, predictors rf/mean/median/perfect for A-SRPT,
  baselines with rf; each predictor's held-out MAE (train on the first 80% by release).

Reduction of A-SRPT vs baseline b: (TCT_b - TCT_A-SRPT) / TCT_b.

Run: ``python benchmarks/ddlwmp_sec5.py [--scale 0.1] [--seed 0] [--load 0.8] [--tag T] [--figs 6789]``.
Writes ``benchmarks/results/ddlwmp_sec5{T}.md``, ``ddlwmp_sec5{T}_fig{6,7,8,9}.png`` and
``ddlwmp_sec5{T}.json`` (every measured total completion time, diagnostic and wall time, for
:mod:`ddlwmp_sec5_seeds` and later summaries).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from formulations.ddlwmp.a_srpt import ASRPT
from formulations.ddlwmp.baselines import BASELINES
from formulations.ddlwmp.generate import B_INTER, generate
from formulations.ddlwmp.model import DdlwmpInstance, evaluate
from formulations.ddlwmp.simulate import simulate
from optkit.predict import fill_predictions

BASE = ["spjf", "spwf", "wcs-duration", "wcs-workload", "wcs-subtime"]
LABEL = {"a-srpt": "A-SRPT", "a-srpt-tau0": "A-SRPT tau=0", "fifo": "FIFO", "spjf": "SPJF", "spwf": "SPWF", "wcs-duration": "WCS-Duration",
         "wcs-workload": "WCS-Workload", "wcs-subtime": "WCS-SubTime"}
PAPER_JOBS = (37_500, 75_000, 112_500, 150_000)
SHARES = (0.8, 0.6, 0.4, 0.2, 0.0)
GBPS = (1, 5, 10, 25, 50)
PREDICTORS = ("rf", "mean", "median", "perfect")
PAPER = {
    "6": "A-SRPT reduces total completion time by 31% to 91% over the baselines across 37,500-150,000 jobs; "
         "SPJF worst",
    "7": "16% to 57% reduction as the single-GPU share falls from 80% to 0% (gain grows as it falls)",
    "8": "12% over the best baseline (WCS-Duration) at 50 Gbps; up to 92% at 1 Gbps",
    "9": "RF within 14% of perfect prediction; mean and median worse; MAE RF 369, median 563, mean 593",
}
PAPER_MAE = {"rf": 369, "median": 563, "mean": 593}


def _instance(data: dict[str, Any]) -> DdlwmpInstance:
    return DdlwmpInstance.from_dict({k: v for k, v in data.items() if k not in ("meta", "name")})


class Runner:
    """Simulate and evaluate, logging the wall time of each run."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.sim_s = 0.0
        self.runs = 0

    def tct(self, inst: DdlwmpInstance, policy: str, *, perfect: bool = False) -> float:
        self.delayed = None
        if policy.startswith("a-srpt"):
            tau = 0.0 if policy == "a-srpt-tau0" else 1.0
            pol = ASRPT(inst.cluster, inst.models, seed=self.seed, tau=tau)
        else:
            pol = BASELINES[policy](inst.cluster, inst.models, seed=self.seed)
        t0 = time.perf_counter()
        schedule = simulate(inst, pol, perfect=perfect)
        ev = evaluate(inst, schedule)
        dt = time.perf_counter() - t0
        self.delayed = getattr(pol, "delayed", None)
        self.stretch = ev.objectives["makespan"] / max(j.release for j in inst.jobs)
        # diagnostic: GPU-time actually used (alpha_s of each placement, which evaluate checked against
        # the assignment) over the GPU-time at alpha~min, the generator's load calibration
        a_s = {e["id"]: e["alpha_s"] for e in schedule["jobs"]}
        used = sum(inst.gpus(j) * j.iterations * a_s[j.id] for j in inst.jobs)
        ideal = sum(inst.gpus(j) * j.iterations * pol.placer.alpha_min(j.model) for j in inst.jobs)
        self.inflation = used / ideal
        self.sim_s += dt
        self.runs += 1
        if not ev.feasible:
            raise RuntimeError(f"{policy}: infeasible schedule: {ev.violations[:3]}")
        return ev.objectives["total_completion"]

    def all(self, inst: DdlwmpInstance, tag: str) -> dict[str, float]:
        """Every policy on ``inst``: total completion times, diagnostics (``_``-prefixed) and
        ``_sum_release`` = sum of the releases, so total flow = total completion - ``_sum_release``."""
        out: dict[str, Any] = {"_sum_release": float(sum(j.release for j in inst.jobs))}
        for p in ["a-srpt"] + BASE + ["a-srpt-tau0", "fifo"]:
            t0 = time.perf_counter()
            out[p] = self.tct(inst, p)
            out["_wall_" + p] = time.perf_counter() - t0
            if p == "a-srpt":
                out["_delayed"] = self.delayed
            out["_stretch_" + p] = self.stretch
            out["_infl_" + p] = self.inflation
            print(f"  {tag:<28} {LABEL[p]:<13} TCT {out[p]:.4e} s  ({time.perf_counter() - t0:.1f} s)", flush=True)
        return out


def _split_penalty(data: dict[str, Any]) -> dict[str, Any]:
    """alpha_max / alpha~min (eq. 7, Heavy-Edge estimate) over the workload's multi-GPU models."""
    from formulations.gpu_mapping.heavy_edge import alpha_min_estimate
    from formulations.gpu_mapping.model import alpha_max

    inst = _instance(data)
    mc = inst.cluster.mapping_cluster
    ratios = {name: alpha_max(m, mc) / alpha_min_estimate(m, mc) for name, m in inst.models.items() if m.n_replicas > 1}
    worst = max(ratios, key=ratios.__getitem__)
    return {"median": float(np.median(list(ratios.values()))), "max": ratios[worst], "argmax": worst}


def _red(res: dict[str, float], b: str, a: str = "a-srpt") -> float:
    return (res[b] - res[a]) / res[b]


def _flow_reds(res: dict[str, float], a: str = "a-srpt") -> list[float]:
    """A-SRPT's reduction of total flow time vs each baseline (empty when the sum of releases is unknown)."""
    if "_sum_release" not in res:
        return []
    R = res["_sum_release"]
    return [((res[b] - R) - (res[a] - R)) / (res[b] - R) for b in BASE]


def _table(title: str, xname: str, xs: list[str], rows: list[dict[str, float]]) -> list[str]:
    cols = ["a-srpt"] + BASE
    lines = [f"### {title}", "", "Total completion time (10^6 s) per policy; reduction of A-SRPT vs each baseline in brackets. "
             "Diagnostics (not in the paper): A-SRPT's delayed starts (lines 14-20, each blocks the queue) and "
             "A-SRPT with tau = 0 (no delayed starts), with its own min / max reduction; FIFO (strict arrival order); "
             "makespan / last release of WCS-SubTime (far above 1 = the queue never drains while jobs arrive: overload); "
             "GPU-time inflation = sum g_i n_i alpha_i of the schedule / sum g_i n_i alpha~min_i (the generator calibrates "
             "its offered load at alpha~min), for A-SRPT / WCS-Duration. Total flow = total completion - sum of releases "
             "(the part a policy can change): A-SRPT's min / max reduction of it.", "",
             f"| {xname} | " + " | ".join(LABEL[c] for c in cols) + " | min / max reduction | A-SRPT delayed starts | A-SRPT tau=0 | tau=0 min / max reduction | FIFO | makespan / last release | GPU-time inflation A-SRPT / WCS-Duration | total-flow reduction min / max |",
             "|" + "---|" * (len(cols) + 9)]
    for x, r in zip(xs, rows):
        cells = [f"{r['a-srpt'] / 1e6:.2f}"]
        reds = []
        for b in BASE:
            red = _red(r, b)
            reds.append(red)
            cells.append(f"{r[b] / 1e6:.2f} ({red * 100:+.1f}%)")
        r0 = [_red(r, b, "a-srpt-tau0") for b in BASE]
        flow = _flow_reds(r)
        lines.append(f"| {x} | " + " | ".join(cells) + f" | {min(reds) * 100:+.1f}% / {max(reds) * 100:+.1f}% | "
                     f"{r['_delayed']} | {r['a-srpt-tau0'] / 1e6:.2f} | {min(r0) * 100:+.1f}% / {max(r0) * 100:+.1f}% | {r['fifo'] / 1e6:.2f} | {r['_stretch_wcs-subtime']:.2f} | {r['_infl_a-srpt']:.2f} / {r['_infl_wcs-duration']:.2f} | "
                     + (f"{min(flow) * 100:+.1f}% / {max(flow) * 100:+.1f}% |" if flow else "- |"))
    return lines


def _plot(path: Path, title: str, xlabel: str, xs: list[Any], rows: list[dict[str, float]], keys: list[str],
          labels: dict[str, str], logy: bool = True) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    pos = list(range(len(xs)))
    w = 0.8 / len(keys)
    for i, k in enumerate(keys):
        ax.bar([p + (i - (len(keys) - 1) / 2) * w for p in pos], [r[k] for r in rows], width=w, label=labels[k])
    ax.set_xticks(pos)
    ax.set_xticklabels([str(x) for x in xs])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("total completion time (s, evaluate)")
    if logy:
        ax.set_yscale("log")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.1, help="fraction of the paper's servers and job counts")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--load", type=float, default=0.8, help="offered load of the generator (paper-sim: 0.8)")
    ap.add_argument("--load-check", type=float, default=0.2,
                    help="also run Fig. 6 at this offered load (0 or equal to --load: skip), to show the load sensitivity")
    ap.add_argument("--tag", default="", help="suffix of the output file names, e.g. _load0.5")
    ap.add_argument("--figs", default="6789", help="which figures to run, e.g. 67")
    ap.add_argument("--outdir", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args()
    T0 = time.perf_counter()
    s, seed = args.scale, args.seed
    servers = max(1, round(250 * s))
    jobs = [max(1, round(n * s)) for n in PAPER_JOBS]
    mid = max(1, round(75_000 * s))
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    run = Runner(seed)
    gen_cache: dict[tuple[int, float, float], dict[str, Any]] = {}
    gen_s = 0.0

    def gen(n: int, share: float, load: float | None = None) -> dict[str, Any]:
        """The raw instance dict without predictions (cached)."""
        nonlocal gen_s
        load = args.load if load is None else load
        key = (n, share, load)
        if key not in gen_cache:
            t0 = time.perf_counter()
            gen_cache[key] = generate(jobs=n, servers=servers, single_gpu_share=share, predictor=None, seed=seed, load=load,
                                      inter_bandwidth=B_INTER)
            gen_s += time.perf_counter() - t0
        return gen_cache[key]

    def predicted(n: int, share: float, predictor: str, load: float | None = None) -> tuple[dict[str, Any], float]:
        nonlocal gen_s
        d = copy.deepcopy(gen(n, share, load))
        t0 = time.perf_counter()
        mae = fill_predictions(d, predictor, seed=seed)
        gen_s += time.perf_counter() - t0
        return d, mae

    res_cache: dict[tuple, dict[str, float]] = {}
    mae_of: dict[tuple, float] = {}

    def point(n: int, share: float, tag: str, load: float | None = None) -> dict[str, float]:
        key = (n, share, "rf", B_INTER, args.load if load is None else load)
        if key not in res_cache:
            d, mae = predicted(n, share, "rf", load)
            mae_of[(n, share, "rf")] = mae
            res_cache[key] = run.all(_instance(d), tag)
        return res_cache[key]

    md = [
        "# Sec. V-B reproduction (A-SRPT paper, Figs. 6-9): total completion time per policy",
        "",
        f"Measured on {platform.machine()} with {os.cpu_count()} cores, Python {platform.python_version()}. "
        f"**Scale {s:g}** of the paper's setting: {servers} servers x 8 GPUs (paper 250), job counts "
        f"{', '.join(f'{j:,}' for j in jobs)} (paper 37,500-150,000), Fig. 7-9 at {mid:,} jobs (paper 75,000). "
        f"Synthetic `paper-sim` workload (generate(..., seed={seed}), offered load {args.load:g}, Table I profile estimates, "
        "median duration 1800 s), NIC 10 Gbps and 300 GB/s unless varied, predictions by a random forest trained "
        "on the first 80% of jobs unless varied. A-SRPT: comm_heavy 1.5, tau 1.0 (defaults). Every value is "
        "`evaluate`'s total_completion of the simulated schedule (all schedules checked feasible). "
        f"One seed ({seed}); `--figs {args.figs}`.",
        "",
    ]
    summary: list[str] = ["## Measured vs paper", "", "| figure | paper's claim | ours |", "|---|---|---|"]
    figures: dict[str, dict[str, Any]] = {}

    if "6" in args.figs:
        print("Fig. 6: job count sweep", flush=True)
        rows = [point(n, 0.8, f"jobs={n}") for n in jobs]
        figures["6"] = {"x": jobs, "xname": "jobs", "rows": rows}
        reds = [_red(r, b) for r in rows for b in BASE]
        md += _table(f"Fig. 6: job count (80% single-GPU, 10 Gbps, {servers} servers)", "jobs",
                     [f"{n:,}" for n in jobs], rows) + [""]
        worst = [max(BASE, key=lambda b: r[b]) for r in rows]
        fl = [x for r in rows for x in _flow_reds(r)]
        summary.append(f"| 6 (jobs) | {PAPER['6']} | {min(reds) * 100:.0f}% to {max(reds) * 100:.0f}%"
                       + (f" (total flow: {min(fl) * 100:.0f}% to {max(fl) * 100:.0f}%)" if fl else "")
                       + f"; worst baseline per point: {', '.join(LABEL[w] for w in worst)} |")
        _plot(out / f"ddlwmp_sec5{args.tag}_fig6.png", f"Fig. 6 (scale {s:g}): total completion time vs jobs", "jobs", jobs, rows,
              ["a-srpt"] + BASE + ["a-srpt-tau0"], LABEL)

    if "7" in args.figs:
        print("Fig. 7: single-GPU share sweep", flush=True)
        rows = [point(mid, sh, f"share={sh}") for sh in SHARES]
        figures["7"] = {"x": list(SHARES), "xname": "single-GPU share", "rows": rows}
        md += _table(f"Fig. 7: single-GPU share ({mid:,} jobs, 10 Gbps)", "single-GPU share",
                     [f"{sh * 100:.0f}%" for sh in SHARES], rows) + [""]
        per = [(min(_red(r, b) for b in BASE), max(_red(r, b) for b in BASE)) for r in rows]
        summary.append(f"| 7 (single-GPU share) | {PAPER['7']} | " + "; ".join(
            f"{sh * 100:.0f}%: {lo * 100:.0f}% to {hi * 100:.0f}%" for sh, (lo, hi) in zip(SHARES, per)) + " |")
        _plot(out / f"ddlwmp_sec5{args.tag}_fig7.png", f"Fig. 7 (scale {s:g}, {mid:,} jobs): single-GPU share",
              "single-GPU share", [f"{sh * 100:.0f}%" for sh in SHARES], rows, ["a-srpt"] + BASE + ["a-srpt-tau0"], LABEL)

    if "8" in args.figs:
        print("Fig. 8: NIC bandwidth sweep (0% single-GPU)", flush=True)
        d0, mae = predicted(mid, 0.0, "rf")
        rows = []
        for gb in GBPS:
            bw = gb * 1.25e8
            key = (mid, 0.0, "rf", bw, args.load)
            if key not in res_cache:
                d = copy.deepcopy(d0)
                d["cluster"]["inter_bandwidth"] = bw
                res_cache[key] = run.all(_instance(d), f"NIC={gb}Gbps")
            rows.append(res_cache[key])
        figures["8"] = {"x": list(GBPS), "xname": "NIC Gbps", "rows": rows}
        md += _table(f"Fig. 8: NIC bandwidth ({mid:,} jobs, 0% single-GPU; one job set generated at 10 Gbps)", "NIC",
                     [f"{gb} Gbps" for gb in GBPS], rows) + [""]
        best = [min(BASE, key=lambda b: r[b]) for r in rows]
        summary.append(f"| 8 (NIC) | {PAPER['8']} | " + "; ".join(
            f"{gb} Gbps: {_red(r, bb) * 100:.0f}% vs best ({LABEL[bb]}), max {max(_red(r, b) for b in BASE) * 100:.0f}%"
            for gb, r, bb in zip(GBPS, rows, best)) + " |")
        _plot(out / f"ddlwmp_sec5{args.tag}_fig8.png", f"Fig. 8 (scale {s:g}, {mid:,} jobs, 0% single-GPU): NIC bandwidth",
              "NIC bandwidth (Gbps)", list(GBPS), rows, ["a-srpt"] + BASE + ["a-srpt-tau0"], LABEL)

    if "9" in args.figs:
        print("Fig. 9: predictors (80% single-GPU)", flush=True)
        base_rows = point(mid, 0.8, "predictor=rf")
        r9: dict[str, float] = dict(base_rows)
        maes: dict[str, float] = {"rf": mae_of[(mid, 0.8, "rf")]}
        test_mean = None
        for pr in ("mean", "median", "perfect"):
            d, m = predicted(mid, 0.8, pr)
            maes[pr] = m
            inst = _instance(d)
            t0 = time.perf_counter()
            r9[f"a-srpt[{pr}]"] = run.tct(inst, "a-srpt")
            print(f"  predictor={pr:<18} A-SRPT        TCT {r9[f'a-srpt[{pr}]']:.4e} s  ({time.perf_counter() - t0:.1f} s)", flush=True)
            if test_mean is None:
                js = sorted(d["jobs"], key=lambda j: j["release"])
                test = js[int(0.8 * len(js)):]
                test_mean = sum(j["iterations"] for j in test) / len(test)
        r9["a-srpt[rf]"] = r9["a-srpt"]
        # sanity: the perfect predictor equals the simulator's perfect mode
        inst_rf = _instance(predicted(mid, 0.8, "rf")[0])
        r9["a-srpt-perfect"] = run.tct(inst_rf, "a-srpt", perfect=True)
        perf = r9["a-srpt[perfect]"]
        md += [f"### Fig. 9: prediction models ({mid:,} jobs, 80% single-GPU, 10 Gbps; baselines use rf)", "",
               "| A-SRPT predictor | held-out MAE (iterations) | MAE / mean iterations | paper MAE | TCT (10^6 s) | vs perfect |",
               "|---|---|---|---|---|---|"]
        for pr in PREDICTORS:
            v = r9[f"a-srpt[{pr}]"]
            md.append(f"| {pr} | {maes[pr]:.0f} | {maes[pr] / test_mean * 100:.1f}% | {PAPER_MAE.get(pr, 0 if pr == 'perfect' else '-')} | "
                      f"{v / 1e6:.2f} | {(v - perf) / perf * 100:+.1f}% |")
        md += ["", f"A-SRPT-Perfect through the simulator's `perfect=True` mode: {r9['a-srpt-perfect'] / 1e6:.2f} x 10^6 s "
               f"(the `perfect` predictor fills the history jobs in-sample, i.e. also with their true counts). "
               f"Mean iterations of the held-out jobs: {test_mean:.0f}.", "",
               "| baseline (rf) | " + " | ".join(LABEL[b] for b in BASE) + " |", "|---|" + "---|" * len(BASE),
               "| TCT (10^6 s) (A-SRPT[rf] reduction) | " + " | ".join(
                   f"{r9[b] / 1e6:.2f} ({_red(r9, b) * 100:+.0f}%)" for b in BASE) + " |", ""]
        figures["9"] = {"x": ["predictors"], "rows": [r9], "mae": maes, "test_mean_iterations": test_mean}
        rf_gap = (r9["a-srpt[rf]"] - perf) / perf
        summary.append(f"| 9 (predictors) | {PAPER['9']} | RF {rf_gap * 100:+.1f}% vs perfect, mean "
                       f"{(r9['a-srpt[mean]'] - perf) / perf * 100:+.1f}%, median {(r9['a-srpt[median]'] - perf) / perf * 100:+.1f}%; "
                       f"MAE RF {maes['rf']:.0f}, median {maes['median']:.0f}, mean {maes['mean']:.0f} iterations "
                       f"(held-out mean {test_mean:.0f} iterations) |")
        keys = [f"a-srpt[{p}]" for p in PREDICTORS] + BASE
        labels = {**LABEL, **{f"a-srpt[{p}]": f"A-SRPT ({p})" for p in PREDICTORS}}
        _plot(out / f"ddlwmp_sec5{args.tag}_fig9.png", f"Fig. 9 (scale {s:g}, {mid:,} jobs): predictors", "", ["total completion time"],
              [r9], keys, labels, logy=False)

    load_note = ""
    if "6" in args.figs and args.load_check > 0 and args.load_check != args.load:
        L = args.load_check
        print(f"Load check: Fig. 6 at offered load {L:g}", flush=True)
        rows = [point(n, 0.8, f"load={L:g} jobs={n}", load=L) for n in jobs]
        figures[f"6@load{L:g}"] = {"x": jobs, "xname": "jobs", "rows": rows}
        md += _table(f"Load check: Fig. 6 setting at offered load {L:g} instead of {args.load:g} (not a paper figure)", "jobs",
                     [f"{n:,}" for n in jobs], rows) + [""]
        lr = [_red(r, b) for r in rows for b in BASE]
        summary.append(f"| 6 at load {L:g} (ours only) | - | {min(lr) * 100:.0f}% to {max(lr) * 100:.0f}%; A-SRPT GPU-time "
                       f"inflation {min(r['_infl_a-srpt'] for r in rows):.2f}-{max(r['_infl_a-srpt'] for r in rows):.2f}, "
                       f"WCS-Duration {min(r['_infl_wcs-duration'] for r in rows):.2f}-{max(r['_infl_wcs-duration'] for r in rows):.2f} |")
        load_note = (f" At offered load {L:g} (load-check table) A-SRPT beats the baselines in {sum(x > 0 for x in lr)}/{len(lr)} "
                     f"comparisons ({min(lr) * 100:.0f}% to {max(lr) * 100:.0f}%), with GPU-time inflation "
                     f"{max(r['_infl_a-srpt'] for r in rows):.2f} at most (it keeps jobs on few servers) while the baselines "
                     f"still split jobs (WCS-Duration inflation up to {max(r['_infl_wcs-duration'] for r in rows):.1f}): "
                     + ("the paper's ordering appears once the cluster is not driven into overload." if all(x > 0 for x in lr)
                        else "a lower load alone does not restore the paper's ordering here."))
        _plot(out / f"ddlwmp_sec5{args.tag}_fig6_load{L:g}.png", f"Fig. 6 setting at load {L:g} (scale {s:g})", "jobs", jobs,
              rows, ["a-srpt"] + BASE + ["a-srpt-tau0"], LABEL)
    all_rows = [r for k, r in res_cache.items() if k[-1] == args.load]
    if all_rows:
        r1 = [_red(r, b) for r in all_rows for b in BASE]
        r0 = [_red(r, b, "a-srpt-tau0") for r in all_rows for b in BASE]
        wins1 = sum(x > 0 for x in r1)
        wins0 = sum(x > 0 for x in r0)
        pen = _split_penalty(next(d for k, d in gen_cache.items()))
        stretch = max(r["_stretch_wcs-subtime"] for r in all_rows)
        infl = max(v for r in all_rows for k, v in r.items() if k.startswith("_infl_"))
        overloaded = stretch > 1.5
        regime = (f"**Regime of these runs.** WCS-SubTime's makespan / last release is at most {stretch:.2f} and the GPU-time "
                  f"inflation of any policy at most {infl:.2f} over the {len(all_rows)} settings at offered load {args.load:g}, "
                  + ("so the cluster is driven into overload somewhere in these settings (the bullets below on overload apply)."
                     if overloaded else
                     "so the cluster keeps up with arrivals and jobs get placements at (or near) alpha~min: the queue seldom "
                     "holds more than a few jobs, every policy starts most jobs on release, and the order a policy imposes "
                     "has little to act on. Level total completion times are the expected outcome of such a regime, "
                     "whatever the policy."))
        md += ["", "## Where ours differ from the paper, and why (best explanation)", "",
               f"At offered load {args.load:g}, over all {len(all_rows)} settings x {len(BASE)} baselines, A-SRPT (tau 1.0) beats the baseline in "
               f"{wins1}/{len(r1)} comparisons (reductions {min(r1) * 100:.0f}% to {max(r1) * 100:.0f}%); with tau = 0 in "
               f"{wins0}/{len(r0)} ({min(r0) * 100:.0f}% to {max(r0) * 100:.0f}%). The paper reports A-SRPT ahead of every "
               "baseline in every setting. Candidate causes, from what these runs show:",
               "",
               "* " + regime,
               ] + ([
               f"* **Overload from split placements.** With the Table I profile estimates at 10 Gbps, a multi-GPU job "
               f"with one replica per server (alpha_max) is {pen['median']:.0f}x slower than on the fewest servers "
               f"(alpha~min) for the median multi-GPU model of these workloads and up to {pen['max']:.0f}x "
               f"({pen['argmax']}), measured by this script. Every policy starts a job as soon as g_i GPUs are free "
               "anywhere, so under load such jobs are split and the GPU-time used is several times the alpha~min GPU-time "
               f"the generator calibrated the {args.load:g} load on (inflation column); the cluster is overloaded (makespan many "
               "times the last release) and total completion time grows much faster than linearly with the job count.",
               "* **In overload A-SRPT degenerates towards strict FIFO.** pending_queue is ordered by completion in the "
               f"virtual single machine A1, which runs at the calibrated load {args.load:g} and so keeps up with arrivals: jobs join "
               "the queue shortly after release, roughly in arrival order, while the real cluster falls far behind. The "
               "queue is then served strictly head-of-line, so a large head job idles free GPUs, and the SRPT priority "
               "is lost; compare A-SRPT with the FIFO column. The WCS baselines backfill whatever fits, SPWF puts small "
               "jobs first; both cope far better with a backlog.",
               ] if overloaded else [
               f"* **No overload, so the load-0.8 explanations do not apply.** Split placements are what overloads the "
               f"cluster at load 0.8 (alpha_max / alpha~min is {pen['median']:.0f}x for the median multi-GPU model here, up "
               f"to {pen['max']:.0f}x for {pen['argmax']}); here the inflation column stays near 1, so they are rare.",
               ]) + [
               "* **Delayed starts block the queue (tau 1.0).** optkit's reading of lines 14-20 lets a communication-heavy "
               "head job wait up to tau x its A1 processing time while nothing behind it starts; the count of such delays "
               "per run is in the tables, and the tau = 0 column shows how much of the gap they explain (here tau = 0 wins "
               f"{wins0}/{len(r0)} comparisons, tau 1.0 {wins1}/{len(r1)}). The paper gives no "
               "tau for its simulations (it uses tau = 0 on its testbed).",
               "* **Load level.** The paper samples consecutive trace jobs and does not state its load." + load_note,
               "* **Synthetic profiles and durations.** Models are Table I estimates and iterations = log-normal duration "
               "(median 1800 s) / alpha~min, so iteration counts are ~10^4 (MAE in the thousands, not the paper's 369-593; "
               "compare the relative MAE). Groups predict their jobs to within the 20% noise, so the rf / mean / median "
               "predictors are close (relative MAE column). In Fig. 9 the predictor changes A-SRPT's total completion "
               "time by up to about 15% either way at load 0.8 and scale 0.1, with no consistent order (rf can even beat "
               "perfect; see this run's Fig. 9 table): in an overloaded regime the backlog, not the prediction, decides "
               "the outcome. Seed-to-seed spread: `ddlwmp_sec5_seeds.md`.",
               (f"* **Scale.** Servers and job counts are scaled together (same jobs per GPU), but a {servers}-server cluster "
                "fragments differently from 250 servers; one seed per point." if servers != 250 else
                "* **Scale.** The paper's 250 servers and job counts (scale 1); one seed per point."), ""]
    total = time.perf_counter() - T0
    md += summary + ["", f"Wall time: {total:.0f} s in all ({run.runs} simulations + evaluations: {run.sim_s:.0f} s; "
                         f"generation and predictions: {gen_s:.0f} s).", ""]
    text = "\n".join(md) + "\n"
    print()
    print(text)
    (out / f"ddlwmp_sec5{args.tag}.md").write_text(text)
    dump = {"scale": s, "seed": seed, "load": args.load, "servers": servers, "jobs": jobs, "mid": mid, "figs": args.figs,
            "wall_s": total, "simulations": run.runs, "simulation_s": run.sim_s, "generation_s": gen_s,
            "figures": figures}
    (out / f"ddlwmp_sec5{args.tag}.json").write_text(json.dumps(dump, indent=1, default=float) + "\n")


if __name__ == "__main__":
    main()
