"""The mechanism behind the Sec. V collapse of A-SRPT under tau = 0 (issue 34), measured.

    PYTHONPATH=. python benchmarks/asrpt_collapse.py [--jobs 20000] [--servers 67] [--load 0.65]
        [--seeds 0-4] [--out benchmarks/perf/asrpt_collapse.md]

The workload is the issue's: ``optkit generate ddlwmp --param jobs=20000 --param servers=67 --param
load=0.65 --seed S`` (:func:`optkit.formulations.ddlwmp.generate.generate`, random-forest predictions),
every policy run through :func:`optkit.formulations.ddlwmp.sec5.run_policy_readout` (``evaluate``'s total
completion time and the cluster readout), every reading at its default except those named in each row
(tau is named in every row: ``tau=0`` is the default of issue 23 under which the collapse was reported).

What it prints, for seed ``--seeds``' first:

1. the issue's runs: A-SRPT (forest predictions) and A-SRPT-Perfect under tau = 0, under the issue's
   tau = 10 and under the held-out default (``readings.TAU_DEFAULT``), A-SRPT-Perfect under
   ``head_of_line=skip``, and the five baselines;
2. a timeline of both A-SRPT variants under tau = 0 (20 windows of the arrival span): starts, those on
   a placement with α_i/α̃_i^min > 1.5, and at each window's start the jobs waiting (released, not
   started), the busy GPUs and the GPUs held by jobs on such placements;
3. every communication-heavy placement A-SRPT made that was worse than COMM_HEAVY (the first ones):
   the time, the free GPUs in the cluster and on the most-free server at that moment (instrumented by
   wrapping the policy's placer: the values the policy saw);
4. the jobs split under exact predictions but not under the forest's in the window before the
   collapse: when each started in both runs and on what;
5. the mean wait (start - release) of the jobs released in the first 30% of the arrival span (before
   any collapse) in both variants;

and for every seed, whether each variant collapses under tau = 0 and under the held-out default.
Nothing here is asserted; the explanation on the A-SRPT results page (``formulations/ddlwmp/claims.py``,
``MECHANISM``) cites this page.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _page import run_line  # noqa: E402
from tune_tau import int_list  # noqa: E402

BASELINES = ("spjf", "spwf", "wcs-duration", "wcs-workload", "wcs-subtime")
BAD = 1.5  # COMM_HEAVY: a placement worse than this over alpha~min is what line 12 refuses


def instrumented(inst: Any, name: str, readings: dict[str, Any], seed: int) -> tuple[dict[str, Any], list[dict[str, Any]],
                                                                                      list[tuple[float, int, int, float, str]]]:
    """Simulate policy ``name`` on ``inst``: (readout, per-job rows, comm-heavy placements seen).

    The readout is :func:`run_policy_readout`'s (``evaluate``); the per-job rows and the placements
    come from a second, identical simulation whose placer is wrapped to record the free GPUs it saw."""
    from optkit.formulations.ddlwmp.sec5 import policy_for, run_policy_readout
    from optkit.formulations.ddlwmp.simulate import simulate

    readout = run_policy_readout(inst, name, readings, seed)
    pol = policy_for(inst, name, readings, seed)
    seen: list[tuple[float, int, int, float, str]] = []
    clock = [0.0]
    place, decide = pol.placer.place_most_free, pol.decide

    def place_most_free(model: str, free: Any) -> Any:
        p = place(model, free)
        seen.append((clock[0], int(free.sum()), int(free.max()), p.alpha / pol.placer.alpha_min(model), model))
        return p

    def timed_decide(now: float, state: Any) -> Any:
        clock[0] = now
        return decide(now, state)

    pol.placer.place_most_free = place_most_free  # type: ignore[method-assign]
    pol.decide = timed_decide  # type: ignore[method-assign]
    schedule = simulate(inst, pol, perfect=name == "a-srpt-perfect")
    jobs = {j.id: j for j in inst.jobs}
    rows = []
    for e in schedule["jobs"]:
        j = jobs[e["id"]]
        amin = pol.placer.alpha_min(j.model)
        rows.append({"id": j.id, "model": j.model, "gpus": inst.gpus(j), "release": float(j.release),
                     "start": e["start"], "completion": e["completion"], "iterations": j.iterations,
                     "predicted": j.predicted_iterations, "ratio": e["alpha_s"] / amin if amin > 0 else 1.0,
                     "servers": len({m for stage in e["assignment"] for m in stage})})
    return readout, rows, seen


def timeline(rows: list[dict[str, Any]], gpus: int, windows: int = 20) -> list[str]:
    last = max(r["release"] for r in rows)
    out = ["| window (share of the arrival span) | starts | of them with α/α̃min > 1.5 | waiting at its start | "
           f"busy GPUs at its start (of {gpus}) | of them in jobs with α/α̃min > 1.5 |", "|---|---:|---:|---:|---:|---:|"]
    for w in range(windows):
        a, b = last * w / windows, last * (w + 1) / windows
        starts = [r for r in rows if a <= r["start"] < b]
        running = [r for r in rows if r["start"] <= a < math.ceil(r["completion"])]
        out.append(f"| {w / windows:.2f}-{(w + 1) / windows:.2f} | {len(starts)} | "
                   f"{sum(r['ratio'] > BAD for r in starts)} | "
                   f"{sum(r['release'] <= a < r['start'] for r in rows)} | {sum(r['gpus'] for r in running)} | "
                   f"{sum(r['gpus'] for r in running if r['ratio'] > BAD)} |")
    return out


def readout_row(label: str, r: dict[str, Any]) -> str:
    return (f"| {label} | {r['total_completion']:.4g} | {r['inflation']:.3f} | {r['inflation_max']:.1f} | "
            f"{r['split_share']:.3f} | {r['drain']:.2f} | {r['delayed_starts'] if r['delayed_starts'] is not None else '-'} |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=20_000)
    ap.add_argument("--servers", type=int, default=67)
    ap.add_argument("--load", type=float, default=0.65)
    ap.add_argument("--seeds", type=int_list, default=list(range(5)))
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)

    from optkit.formulations.ddlwmp.generate import generate
    from optkit.formulations.ddlwmp.readings import TAU_DEFAULT
    from optkit.formulations.ddlwmp.sec5 import instance_of, run_policy_readout

    t0 = time.perf_counter()
    tau0 = {"tau": 0.0}
    tau10 = {"tau": 10.0}
    taup = {"tau": TAU_DEFAULT}
    cmd = (f"PYTHONPATH=. python benchmarks/asrpt_collapse.py --jobs {args.jobs} --servers {args.servers} --load "
           f"{args.load:g} --seeds {','.join(map(str, args.seeds))}" + (f" --out {args.out}" if args.out else ""))
    lines = ["# A-SRPT under tau = 0: the mechanism of the Sec. V collapse", "", run_line(cmd), "",
             f"Workload: `optkit generate ddlwmp --param jobs={args.jobs} --param servers={args.servers} --param "
             f"load={args.load:g} --seed S` (module docstring of benchmarks/asrpt_collapse.py for every column).", ""]
    head = ["| run | total completion (s) | GPU-time inflation | largest job's α/α̃min | split share | drain | "
            "delayed starts |", "|---|---:|---:|---:|---:|---:|---:|"]
    seed = args.seeds[0]
    inst = instance_of(generate(jobs=args.jobs, servers=args.servers, load=args.load, seed=seed))
    gpus = inst.cluster.total_gpus
    rf, rf_rows, rf_seen = instrumented(inst, "a-srpt", tau0, seed)
    pf, pf_rows, pf_seen = instrumented(inst, "a-srpt-perfect", tau0, seed)
    lines += [f"## 1. Seed {seed}: the issue's runs", "",
              "GPU-time inflation: Σ g_i·n_i·α_i / Σ g_i·n_i·α̃_i^min; largest job's: max_i α_i/α̃_i^min; split share: "
              "multi-GPU jobs on more servers than the fewest that hold them; drain: makespan / last release "
              "(formulations/ddlwmp/sec5.py).", "", *head,
              readout_row("a-srpt, tau=0", rf), readout_row("a-srpt-perfect, tau=0", pf),
              readout_row("a-srpt-perfect, tau=0, head_of_line=skip",
                          run_policy_readout(inst, "a-srpt-perfect", {**tau0, "head_of_line": "skip"}, seed))]
    for r in (tau10, taup):
        for name in ("a-srpt", "a-srpt-perfect"):
            lines.append(readout_row(f"{name}, tau={r['tau']:g}" + (" (the held-out default)" if r is taup else ""),
                                     run_policy_readout(inst, name, r, seed)))
    for b in BASELINES:
        lines.append(readout_row(b, run_policy_readout(inst, b, {}, seed)))
    lines += ["", f"## 2. Seed {seed}: timelines under tau = 0", ""]
    for label, rows in (("A-SRPT-Perfect", pf_rows), ("A-SRPT (forest)", rf_rows)):
        lines += [f"{label}:", "", *timeline(rows, gpus), ""]
    last = max(r["release"] for r in rf_rows)
    lines += [f"## 3. Seed {seed}: communication-heavy placements worse than COMM_HEAVY = {BAD:g} (tau = 0)", "",
              "Each row is one call of Algorithm 1's line 9 (the most-free servers) whose placement Heavy-Edge "
              "found worse than 1.5 α̃min; with tau = 0 line 20 starts the job on it at once. Free GPUs: what the "
              "policy saw at that moment.", ""]
    for label, seen in (("A-SRPT-Perfect", pf_seen), ("A-SRPT (forest)", rf_seen)):
        bad = [x for x in seen if x[3] > BAD]
        lines += [f"{label}: {len(bad)} of its {len(seen)} communication-heavy placements were worse than "
                  f"{BAD:g} α̃min; the first 12:", "",
                  "| time (share of the arrival span) | free GPUs (cluster) | free GPUs (most-free server) | "
                  "α/α̃min | model |", "|---:|---:|---:|---:|---|"]
        lines += [f"| {t / last:.4f} | {tot} | {mx} | {ratio:.1f} | {model} |" for t, tot, mx, ratio, model in bad[:12]]
        lines.append("")
    first_pf = min((r["start"] for r in pf_rows if r["ratio"] > BAD and r["start"] > 0.3 * last), default=last)
    pr = {r["id"]: r for r in pf_rows}
    rr = {r["id"]: r for r in rf_rows}
    pairs = sorted((i for i, r in pr.items() if first_pf <= r["start"] < first_pf + 0.05 * last
                    and r["ratio"] > BAD and rr[i]["ratio"] <= BAD), key=lambda i: pr[i]["start"])
    lines += [f"## 4. Seed {seed}: the same jobs in both runs, from the exact-prediction run's first split start after "
              "30% of the span, for 5% of it", "",
              "| job | model | iterations | forest's prediction | perfect: start, α/α̃min, servers | forest: start, "
              "α/α̃min, servers |", "|---|---|---:|---:|---|---|"]
    for i in pairs[:15]:
        p, q = pr[i], rr[i]
        lines.append(f"| {i} | {p['model']} | {p['iterations']} | {q['predicted']:.0f} | {p['start'] / last:.4f}, "
                     f"{p['ratio']:.1f}, {p['servers']} | {q['start'] / last:.4f}, {q['ratio']:.1f}, {q['servers']} |")
    early = [i for i, r in rr.items() if r["release"] < 0.3 * last]
    lines += ["", f"## 5. Seed {seed}: mean wait (start - release) of the jobs released in the first 30% of the span", "",
              f"A-SRPT (forest): {sum(rr[i]['start'] - rr[i]['release'] for i in early) / len(early):.1f} s; "
              f"A-SRPT-Perfect: {sum(pr[i]['start'] - pr[i]['release'] for i in early) / len(early):.1f} s "
              f"({len(early)} jobs; both under tau = 0).", "",
              "## 6. Every seed: does it collapse?", "",
              "Collapsed: GPU-time inflation above 2 (the cluster spends more than twice the GPU-time at α̃min).", "",
              "| seed | run | total completion (s) | GPU-time inflation | drain | delayed starts | collapsed |",
              "|---:|---|---:|---:|---:|---:|---|"]
    for s in args.seeds:
        data = inst if s == seed else instance_of(generate(jobs=args.jobs, servers=args.servers, load=args.load, seed=s))
        for name in ("a-srpt", "a-srpt-perfect"):
            for r in (tau0, taup):
                o = run_policy_readout(data, name, r, s)
                lines.append(f"| {s} | {name}, tau={r['tau']:g} | {o['total_completion']:.4g} | {o['inflation']:.2f} | "
                             f"{o['drain']:.2f} | {o['delayed_starts']} | {'yes' if o['inflation'] > 2 else 'no'} |")
    lines += ["", f"Measured in {time.perf_counter() - t0:.0f} s."]
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
