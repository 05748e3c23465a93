"""Run ddlwmp's Sec. V experiments (formulations/ddlwmp/claims.py) over readings and seeds.

A stand-in until ``optkit reproduce`` lands: for each combination of the given readings and each
seed it calls the experiment's measure function and appends one JSON line (readings, seed, scale,
claim values, details, wall time) to ``benchmarks/results/ddlwmp_claims_<experiment>_<scale>.jsonl``;
``--summary`` prints, per reading combination, each claim's mean / min / max over seeds and its
verdict (:func:`optkit.claims.verdict`).

Run: ``python benchmarks/ddlwmp_claims_run.py a-srpt-sec5-fig6 --scale paper --seeds 0 1 2 3 4
--param workload=itp,philly --param load=0.3,0.8``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import time
from collections import defaultdict
from pathlib import Path

from formulations.ddlwmp.claims import EXPERIMENTS
from optkit.claims import verdict
from optkit.readings import expand_sweep, format_params, parse_param_values

RESULTS = Path(__file__).parent / "results"


def summary(path: Path, experiment: str) -> list[str]:
    exp = EXPERIMENTS[experiment]
    by: dict[str, list[dict]] = defaultdict(list)
    for line in path.read_text().splitlines():
        row = json.loads(line)
        by[format_params(row["readings"])].append(row)
    md = [f"| readings | claim | paper | seeds | mean | min | max | verdict |", "|---|---|---|---|---|---|---|---|"]
    for key, rows in sorted(by.items()):
        for c in exp.claims:
            v = verdict(c, [r["values"].get(c.id) for r in rows])
            if v.mean is None:
                continue
            md.append(f"| {key} | {c.id} | {c.paper_value:g} | {v.seeds} | {v.mean:.1f} | {v.low:.1f} | {v.high:.1f} | {v.text} |")
    return md


def _mmm(xs: list[float], f: str = "{:+.1f}") -> str:
    return f"{f.format(sum(xs) / len(xs))} [{f.format(min(xs))}, {f.format(max(xs))}]"


def readout(path: Path) -> list[str]:
    """Fig. 6-style runs (details with ``cases``): per reading combination, the claims' mean
    [min, max] over seeds and the cluster readout pooled over seeds and job counts (A-SRPT / the
    five baselines): GPU-time inflation, backlog at the end, drain, utilisation."""
    by: dict[str, list[dict]] = defaultdict(list)
    for line in path.read_text().splitlines():
        row = json.loads(line)
        by[format_params(row["readings"])].append(row)
    md = ["| readings | seeds | min reduction (%) | max reduction (%) | SPJF worst | A-SRPT inflation | baselines' inflation "
          "| backlog at end A-SRPT / baselines | drain A-SRPT / baselines | utilisation A-SRPT / baselines |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for key, rows in sorted(by.items()):
        vals = {k: [r["values"][k] for r in rows] for k in rows[0]["values"]}
        lo = next(v for k, v in vals.items() if k.endswith("min-reduction"))
        hi = next(v for k, v in vals.items() if k.endswith("max-reduction"))
        worst = next(v for k, v in vals.items() if k.endswith("spjf-worst"))
        cases = [c for r in rows for c in r["details"]["cases"]]

        def pooled(field: str) -> tuple[list[float], list[float]]:
            a = [c["runs"]["a-srpt"][field] for c in cases]
            b = [c["runs"][p][field] for c in cases for p in c["reduction_pct"]]
            return a, b

        ai, bi = pooled("inflation")
        ab, bb = pooled("backlog_at_end")
        ad, bd = pooled("drain")
        au, bu = pooled("utilisation")
        mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
        md.append(f"| {key} | {len(rows)} | {_mmm(lo)} | {_mmm(hi)} | {_mmm(worst, '{:.2f}')} | {_mmm(ai, '{:.2f}')} | "
                  f"{_mmm(bi, '{:.2f}')} | {mean(ab):.3f} / {mean(bb):.3f} | {mean(ad):.1f} / {mean(bd):.1f} | "
                  f"{mean(au):.3f} / {mean(bu):.3f} |")
    return md


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("experiment", choices=sorted(EXPERIMENTS))
    ap.add_argument("--scale", default="ci", choices=("ci", "paper"))
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--param", action="append", default=[], help="reading=v1,v2 (default: the experiment's default)")
    ap.add_argument("--summary", action="store_true", help="only print the summary of the results file")
    args = ap.parse_args()
    exp = EXPERIMENTS[args.experiment]
    out = RESULTS / f"ddlwmp_claims_{args.experiment}_{args.scale}.jsonl"
    if not args.summary:
        module, fn = exp.measure.split(":")
        measure = getattr(importlib.import_module(module), fn)
        for readings in expand_sweep(parse_param_values(args.param)):
            for seed in args.seeds:
                t0 = time.perf_counter()
                got = measure(readings=dict(readings), seed=seed, scale=args.scale)
                row = {"readings": readings, "seed": seed, "scale": args.scale,
                       "values": {k: v for k, v in got.items() if not k.startswith("_")},
                       "details": got.get("_details"), "wall_s": round(time.perf_counter() - t0, 1)}
                with open(out, "a") as f:
                    f.write(json.dumps(row) + "\n")
                print(format_params(readings), seed, {k: round(v, 2) if isinstance(v, float) else v
                                                      for k, v in row["values"].items()}, row["wall_s"], "s", flush=True)
    print("\n".join(summary(out, args.experiment)))
    if args.experiment in ("a-srpt-sec5-fig6", "a-srpt-sec5-tau"):
        print()
        print("\n".join(readout(out)))


if __name__ == "__main__":
    main()
