"""Seed-to-seed spread of the Sec. V-B Fig. 6 reproduction (A-SRPT paper): a summary across seeds.

Reads the JSON files that :mod:`ddlwmp_sec5` writes (``ddlwmp_sec5{tag}.json``; default tags
``_seed{S}_load{L}``, i.e. runs of ``ddlwmp_sec5.py --figs 6 --seed S --load L --tag _seed{S}_load{L}``)
and tabulates, per offered load and per baseline, A-SRPT's reduction of total completion time
``(TCT_b - TCT_A-SRPT) / TCT_b`` (the paper's measure, Figs. 6-9): min / median / max over the seeds
at each job count, and over all job counts and seeds together. Nothing is simulated here: every
number is one of the JSON files' measured values (``evaluate``'s total_completion).

Run: ``python benchmarks/ddlwmp_sec5_seeds.py [--seeds 0 1 2] [--loads 0.2 0.8]``. Writes
``benchmarks/results/ddlwmp_sec5_seeds.md``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from ddlwmp_sec5 import BASE, LABEL, PAPER, _flow_reds, _red

RESULTS = Path(__file__).parent / "results"


def _load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    if "6" not in data["figures"]:
        raise SystemExit(f"{path}: has no Fig. 6 (run ddlwmp_sec5.py with --figs 6)")
    return data


def _mmm(xs: list[float]) -> str:
    """min / median / max of fractions, in percent."""
    return f"{min(xs) * 100:+.0f} / {float(np.median(xs)) * 100:+.0f} / {max(xs) * 100:+.0f}"


def summary(runs: dict[float, dict[int, dict[str, Any]]], tag_fmt: str) -> list[str]:
    """Markdown tables: per load, per baseline, A-SRPT's reduction min / median / max over seeds."""
    md: list[str] = []
    for load, by_seed in sorted(runs.items()):
        seeds = sorted(by_seed)
        first = by_seed[seeds[0]]
        jobs = first["figures"]["6"]["x"]
        for s in seeds[1:]:
            if by_seed[s]["figures"]["6"]["x"] != jobs or by_seed[s]["scale"] != first["scale"]:
                raise SystemExit(f"load {load}: seed {s} ran another setting than seed {seeds[0]}")
        rows = {s: by_seed[s]["figures"]["6"]["rows"] for s in seeds}
        md += [f"## Offered load {load:g}: Fig. 6 setting (scale {first['scale']:g}: {first['servers']} servers x 8 GPUs, "
               f"80% single-GPU, 10 Gbps), seeds {', '.join(map(str, seeds))}", "",
               "A-SRPT's reduction of total completion time vs each baseline, **min / median / max over the "
               f"{len(seeds)} seeds**, in percent (positive: A-SRPT better). Last column: over all job counts and seeds "
               f"({len(jobs) * len(seeds)} values).", "",
               "| policy | " + " | ".join(f"{n:,} jobs" for n in jobs) + " | all | A-SRPT ahead |",
               "|---|" + "---|" * (len(jobs) + 2)]
        for variant, name in (("a-srpt", "A-SRPT (tau 1.0)"), ("a-srpt-tau0", "A-SRPT tau=0")):
            for b in BASE + ["fifo"]:
                per = [[_red(rows[s][k], b, variant) for s in seeds] for k in range(len(jobs))]
                flat = [x for p in per for x in p]
                md.append(f"| {name} vs {LABEL[b]} | " + " | ".join(_mmm(p) for p in per) + f" | {_mmm(flat)} | "
                          f"{sum(x > 0 for x in flat)}/{len(flat)} |")
        md += ["", "Per seed (pooled over job counts and the five paper baselines): A-SRPT (tau 1.0) ahead in how many "
               "comparisons, min / max reduction of total completion and of total flow (total completion - sum of "
               "releases, the part a policy changes); WCS-SubTime's makespan / last release (overload when far above 1); "
               "GPU-time inflation of WCS-Duration (max over job counts); wall time of the run.", "",
               "| seed | A-SRPT ahead | min / max reduction | total-flow reduction min / max | makespan / last release (WCS-SubTime) | inflation WCS-Duration | wall (s) | source |",
               "|---|---|---|---|---|---|---|---|"]
        for s in seeds:
            r = rows[s]
            red = [_red(x, b) for x in r for b in BASE]
            fl = [x for row in r for x in _flow_reds(row)]
            md.append(f"| {s} | {sum(x > 0 for x in red)}/{len(red)} | {min(red) * 100:+.0f}% / {max(red) * 100:+.0f}% | "
                      + (f"{min(fl) * 100:+.0f}% / {max(fl) * 100:+.0f}% | " if fl else "- | ") +
                      f"{min(x['_stretch_wcs-subtime'] for x in r):.2f}-{max(x['_stretch_wcs-subtime'] for x in r):.2f} | "
                      f"{max(x['_infl_wcs-duration'] for x in r):.2f} | {by_seed[s]['wall_s']:.0f} | "
                      f"`ddlwmp_sec5{tag_fmt.format(seed=s, load=load)}.md` |")
        md.append("")
    return md


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--loads", type=float, nargs="+", default=[0.2, 0.8])
    ap.add_argument("--tag-format", default="_seed{seed}_load{load:g}", help="tag of each run, formatted with seed and load")
    ap.add_argument("--results", default=str(RESULTS))
    ap.add_argument("--out", default=str(RESULTS / "ddlwmp_sec5_seeds.md"))
    args = ap.parse_args()
    res = Path(args.results)
    runs: dict[float, dict[int, dict[str, Any]]] = {}
    missing = []
    for load in args.loads:
        for s in args.seeds:
            p = res / f"ddlwmp_sec5{args.tag_format.format(seed=s, load=load)}.json"
            if p.is_file():
                runs.setdefault(load, {})[s] = _load(p)
            else:
                missing.append(p.name)
    if not runs:
        raise SystemExit(f"no run found ({', '.join(missing)})")
    md = ["# Sec. V-B Fig. 6 (A-SRPT paper) across seeds", "",
          f"Paper's claim (Fig. 6): {PAPER['6']}. Generated by `benchmarks/ddlwmp_sec5_seeds.py` from the JSON of "
          "`benchmarks/ddlwmp_sec5.py --figs 6 --seed S --load L` runs (the synthetic `paper-sim` workload of "
          "generate(..., seed=S): the seed changes the jobs, their arrivals and the random forest; A-SRPT comm_heavy "
          "1.5, policies' tie-breaking seeded with S). Every value is `evaluate`'s total_completion.", ""]
    if missing:
        md += [f"Runs not found (not included): {', '.join(missing)}.", ""]
    md += summary(runs, args.tag_format)
    text = "\n".join(md) + "\n"
    print(text)
    Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
