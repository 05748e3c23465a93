"""What the paper-scale Sec. V curves of ``optkit reproduce a-srpt`` cost on this machine: measured
simulations, and the run they add up to.

    PYTHONPATH=. python benchmarks/asrpt_curve_cost.py [--jobs 20000] [--servers 67]
        [--loads 0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0] [--seed 0] [--check-jobs 75000 --check-servers 250]
        [--out benchmarks/perf/asrpt_curve_cost.md]

1. **One simulation per policy.** On the synthetic Sec. V workload of ``--jobs`` jobs on ``--servers``
   servers of 8 GPUs (default 20,000 on 67: the paper's 75,000 jobs on 250 servers at the same jobs per
   GPU; :func:`optkit.formulations.ddlwmp.generate.generate`, 80% single-GPU jobs, random-forest
   predictions, seed ``--seed``) at every offered load of ``--loads``, each policy a Sec. V
   measurement runs (A-SRPT, A-SRPT-Perfect and the paper's five baselines, every reading at its
   default) is simulated once through :func:`optkit.formulations.ddlwmp.sec5.run_policy_readout`
   (the simulation, ``evaluate`` and the readout, as in a measurement): its wall and CPU seconds.
   The workload's generation (random forest included) is timed too.
2. **The same at the paper's cluster** (``--check-jobs`` on ``--check-servers``, default 75,000 on
   250) at load 0.8 only: the ratio of its CPU time to the smaller run's at 0.8, per policy, is the
   factor that carries the smaller runs to the paper's cluster (per job, it says whether the cost
   grows faster than the job count).
3. **The curve run**, computed: per seed and curve point (the load curve's eight values and the
   batch-factor curve's four besides 1, ``formulations/ddlwmp/claims.py``'s ``LOAD_CURVE`` and
   ``BATCH_CURVE`` at paper scale), the simulations the Sec. V measure functions of that module run,
   after the store's memo (one policy run per policy, readings it reads, seed and instance):
   Fig. 6 every policy on 37,500, 75,000, 112,500 and 150,000 jobs; the tau experiment's curve points
   reuse Fig. 6's 150,000-job runs; Fig. 7 every policy on five 75,000-job sets; Fig. 8 every policy
   at five bandwidths, the 10 Gbps set being Fig. 7's 0% set; Fig. 9 A-SRPT three times (forest,
   mean, median predictions) and A-SRPT-Perfect once on 75,000 jobs; plus the workload generations
   (Fig. 7's fixed arrivals generate the 80% set again for every other share; Fig. 9 fits its forest
   again). Each simulation is
   costed at the measured CPU time of its policy at the point's load (the batch-factor points at the
   default load 0.8), times the job count over ``--jobs``, times the paper-cluster factor of 2.; the
   trace experiment (``a-srpt-sec5-prediction``, two runs on 10% of a trace) is left out as small.
   Times 5 seeds. The same sum for the planned measurements that are not curve points (the other
   readings varied one at a time around the defaults, ``optkit reproduce --dry-run``) is printed
   beside it, costed at the default load.

Nothing is asserted; the printed page says what was measured and what was computed from it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: the checkout named there is the code measured

from _page import run_line  # noqa: E402

POLICIES = ("a-srpt", "a-srpt-perfect", "spjf", "spwf", "wcs-duration", "wcs-workload", "wcs-subtime")
BASELINES = POLICIES[2:]
SEEDS = 5
FIG6_JOBS = (37_500, 75_000, 112_500, 150_000)
FIG7_JOBS = 75_000


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def time_policies(jobs: int, servers: int, load: float, seed: int, quiet: bool = False) -> dict[str, Any]:
    """Generate one workload and simulate every policy on it once: seconds (wall, CPU) of each."""
    from optkit.formulations.ddlwmp.readings import READINGS
    from optkit.formulations.ddlwmp.sec5 import instance_of, run_policy_readout
    from optkit.formulations.ddlwmp.workloads import sec5_workload

    readings = {r.name: r.default for r in READINGS}
    w0, c0 = time.perf_counter(), time.process_time()
    data = sec5_workload("synthetic", jobs=jobs, servers=servers, load=load, seed=seed)
    inst = instance_of(data)
    out: dict[str, Any] = {"generate": (time.perf_counter() - w0, time.process_time() - c0), "runs": {}}
    for p in POLICIES:
        w0, c0 = time.perf_counter(), time.process_time()
        r = run_policy_readout(inst, p, readings, seed)
        out["runs"][p] = {"wall": time.perf_counter() - w0, "cpu": time.process_time() - c0,
                          "inflation": r["inflation"], "drain": r["drain"], "delayed": r["delayed_starts"]}
        if not quiet:
            print(f"  {jobs} jobs / {servers} servers, load {load:g}, {p}: {out['runs'][p]['cpu']:.1f} s CPU", flush=True)
    return out


def curve_sims() -> list[tuple[str, str, int]]:
    """(figure, policy, jobs) of every simulation one seed and one curve point add to the store
    (module docstring, 3.)."""
    sims = [("fig6", p, n) for n in FIG6_JOBS for p in ("a-srpt", *BASELINES)]
    sims += [("fig7", p, FIG7_JOBS) for _ in range(5) for p in ("a-srpt", *BASELINES)]
    sims += [("fig8", p, FIG7_JOBS) for _ in range(4) for p in ("a-srpt", *BASELINES)]
    sims += [("fig9", "a-srpt", FIG7_JOBS)] * 3 + [("fig9", "a-srpt-perfect", FIG7_JOBS)]
    return sims


GENERATIONS = {"fig6": list(FIG6_JOBS), "tau": [FIG6_JOBS[-1]], "fig7": [FIG7_JOBS] * 9, "fig8": [FIG7_JOBS] * 2,
               "fig9": [FIG7_JOBS] * 2}
"""The workloads each measurement generates (jobs each), per seed and curve point; Fig. 9 counts its
workload and the forest it fits again (``fill_predictions``) as two."""


def warm_up() -> None:
    """Import and run everything once on a small workload, so no timed step pays for an import."""
    time_policies(200, 2, 0.8, 0, quiet=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=20_000)
    ap.add_argument("--servers", type=int, default=67)
    ap.add_argument("--loads", type=_floats, default=[0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--check-jobs", type=int, default=75_000)
    ap.add_argument("--check-servers", type=int, default=250)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "perf" / "asrpt_curve_cost.md")
    args = ap.parse_args(argv)
    from optkit import registry
    from optkit.formulations.ddlwmp.claims import BATCH_CURVE, LOAD_CURVE
    from optkit.formulations.ddlwmp.readings import LOAD_DEFAULT
    from optkit.reproduce import reading_settings

    if LOAD_DEFAULT not in args.loads:
        ap.error(f"--loads must hold the default load {LOAD_DEFAULT:g}")
    warm_up()
    t_start = time.perf_counter()
    small = {load: time_policies(args.jobs, args.servers, load, args.seed) for load in args.loads}
    big = time_policies(args.check_jobs, args.check_servers, LOAD_DEFAULT, args.seed)
    factor = {p: (big["runs"][p]["cpu"] / args.check_jobs) / (small[LOAD_DEFAULT]["runs"][p]["cpu"] / args.jobs)
              for p in POLICIES}
    gen_factor = (big["generate"][1] / args.check_jobs) / (small[LOAD_DEFAULT]["generate"][1] / args.jobs)
    measured_s = time.perf_counter() - t_start

    def sim_cost(p: str, n: int, load: float) -> float:
        return small[load]["runs"][p]["cpu"] * n / args.jobs * factor[p]

    def gen_cost(n: int, load: float) -> float:
        return small[load]["generate"][1] * n / args.jobs * gen_factor

    points = [("load", x) for x in LOAD_CURVE["paper"]] + [("unstated_batch_factor", x) for x in BATCH_CURVE["paper"]
                                                             if x != 1.0]
    missing = [x for kind, x in points if kind == "load" and x not in small]
    if missing:
        ap.error(f"--loads lacks the load curve's {missing}")
    per_point: list[tuple[str, float, float, float]] = []
    for kind, x in points:
        load = x if kind == "load" else LOAD_DEFAULT
        sims = sum(sim_cost(p, n, load) for _, p, n in curve_sims())
        gens = sum(gen_cost(n, load) for ns in GENERATIONS.values() for n in ns)
        per_point.append((kind, x, sims, gens))
    curve_cpu = SEEDS * sum(s + g for _, _, s, g in per_point)

    f = registry.get("ddlwmp")
    other = {}
    for eid in ("a-srpt-sec5-fig6", "a-srpt-sec5-tau", "a-srpt-sec5-fig7", "a-srpt-sec5-fig8", "a-srpt-sec5-fig9"):
        exp = f.experiments[eid]
        settings = reading_settings(f, exp, "each", "paper")
        curve_names = set(exp.curves)
        other[eid] = sum(1 for s in settings if not any(s[n] != f.reading(n).default for n in curve_names))
    default_point = sum(sim_cost(p, n, LOAD_DEFAULT) for _, p, n in curve_sims())
    by_fig = {fig: sum(sim_cost(p, n, LOAD_DEFAULT) for g, p, n in curve_sims() if g == fig)
              for fig in ("fig6", "fig7", "fig8", "fig9")}
    by_fig["tau"] = sim_cost("a-srpt", FIG6_JOBS[-1], LOAD_DEFAULT) + sum(
        sim_cost(p, FIG6_JOBS[-1], LOAD_DEFAULT) for p in BASELINES)
    gens = {fig: sum(gen_cost(n, LOAD_DEFAULT) for n in ns) for fig, ns in GENERATIONS.items()}
    # a non-curve setting changes readings around the defaults: costed as one measurement at the default load
    # (its baselines' runs are reused from the default's when it changes only A-SRPT's readings; not counted here,
    # so this is an upper estimate)
    other_cpu = SEEDS * sum((other[eid] - 1) * (by_fig[eid.rsplit("-", 1)[1]] + gens[eid.rsplit("-", 1)[1]])
                            for eid in other)

    lines = ["# A-SRPT Sec. V at paper scale: the cost of the curves", "", run_line(), "",
             f"Protocol: `benchmarks/asrpt_curve_cost.py` docstring. Measuring took {measured_s / 60:.1f} min of "
             "wall time.", "",
             f"## 1. One simulation per policy: {args.jobs:,} jobs on {args.servers} x 8 GPUs (seed {args.seed})", "",
             "CPU seconds of `run_policy_readout` (simulation, `evaluate`, readout); wall seconds in brackets; "
             "then A-SRPT's GPU-time inflation and drain (makespan / last release) for context.", "",
             "| load | generate | " + " | ".join(POLICIES) + " | a-srpt inflation | a-srpt drain |",
             "|---:|---:|" + "---:|" * len(POLICIES) + "---:|---:|"]
    for load, t in small.items():
        a = t["runs"]["a-srpt"]
        lines.append(f"| {load:g} | {t['generate'][1]:.1f} ({t['generate'][0]:.1f}) | "
                     + " | ".join(f"{t['runs'][p]['cpu']:.1f} ({t['runs'][p]['wall']:.1f})" for p in POLICIES)
                     + f" | {a['inflation']:.2f} | {a['drain']:.2f} |")
    lines += ["", f"## 2. The paper's cluster: {args.check_jobs:,} jobs on {args.check_servers} x 8 GPUs, load "
              f"{LOAD_DEFAULT:g}", "",
              "| | generate | " + " | ".join(POLICIES) + " |", "|---|---:|" + "---:|" * len(POLICIES),
              f"| CPU s (wall s) | {big['generate'][1]:.1f} ({big['generate'][0]:.1f}) | "
              + " | ".join(f"{big['runs'][p]['cpu']:.1f} ({big['runs'][p]['wall']:.1f})" for p in POLICIES) + " |",
              f"| factor per job over part 1 | {gen_factor:.2f} | " + " | ".join(f"{factor[p]:.2f}" for p in POLICIES)
              + " |", ""]
    lines += ["## 3. The paper-scale curve run, computed", "",
              "Per seed and curve point: the simulations and generations of module docstring 3., each costed "
              "from parts 1-2 (CPU hours).", "",
              "| curve | value | simulations (CPU h) | generations (CPU h) |", "|---|---:|---:|---:|"]
    for kind, x, s, g in per_point:
        lines.append(f"| {kind} | {x:g} | {s / 3600:.2f} | {g / 3600:.2f} |")
    lines += ["", f"Simulations per seed and point: {len(curve_sims())} "
              f"({sum(n for _, _, n in curve_sims()):,} simulated jobs).", "",
              f"**The curve run: {len(points)} points x {SEEDS} seeds = {curve_cpu / 3600:.1f} CPU hours** "
              f"({curve_cpu / 3600 / 2:.1f} h of wall time on 2 cores with the machine to itself).", "",
              f"Besides the curves, the planned settings that vary another reading around the defaults "
              f"({', '.join(f'{eid}: {n - 1}' for eid, n in other.items())}), costed at the default load "
              f"without the baselines' reuse: at most {other_cpu / 3600:.1f} CPU hours more.", ""]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
