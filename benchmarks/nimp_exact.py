"""nimp: exact solve times, Titan's placement time, and the (1 - 1/e) claim measured.

* Exact: CP-SAT (one worker) and HiGHS on the ``medium`` suite (a 16-worker halving-doubling job
  on 16 machines of 8 GPUs, seeds 0..``--medium``-1), objective ``lex`` and (CP-SAT) ``lex-cross``;
  the issue's aim is a proven optimum in <= 10 s.
* Titan: median and minimum wall time of :func:`optkit.formulations.nimp.titan.titan` (the plain
  function, instance already parsed) on the ``cluster`` suite (64-worker HD job, 512 machines of
  8 GPUs), ``--repeats`` calls per instance; the issue's target is <= 5 ms median. The baselines'
  times beside it.
* Theorems 4-5: Titan against the CP-SAT optimum on ``tiny(seed)`` for seeds 0..``--tiny``-1 and
  on the medium suite, in the paper's remaining-machines form
  (:func:`optkit.formulations.nimp.bounds.approximation_check`): how often Titan is optimal, how often it
  finds no placement where one exists, and where the (1 - 1/e) ratio holds.

Every objective value is ``evaluate``'s. Run: ``python benchmarks/nimp_exact.py``; writes
``benchmarks/perf/nimp_exact.md``. One process, one CP-SAT worker (the machine is shared).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from optkit.formulations.nimp.baselines import elasticflow, hived, tiresias
from optkit.formulations.nimp.bounds import RATIO, approximation_check
from optkit.formulations.nimp.exact import run_cpsat, run_highs
from optkit.formulations.nimp.generate import cluster, medium, tiny
from optkit.formulations.nimp.model import NimpInstance, evaluate
from optkit.formulations.nimp.titan import capacity_argument, run_titan, titan

from _page import run_line

OUT = Path(__file__).resolve().parent / "perf" / "nimp_exact.md"


def _value(inst: NimpInstance, sol: dict[str, Any] | None, objective: str) -> Any:
    if sol is None:
        return None
    ev = evaluate(inst, sol)
    assert ev.feasible, ev.violations
    return ev.objectives[objective]


def exact_rows(n: int, time_limit: float) -> list[dict[str, Any]]:
    rows = []
    for seed in range(n):
        inst = NimpInstance.from_dict(medium(seed))
        for name, fn, objective, kw in (("cpsat", run_cpsat, "lex", {"workers": 1}),
                                        ("highs", run_highs, "lex", {}),
                                        ("cpsat", run_cpsat, "lex-cross", {"workers": 1})):
            t0 = time.perf_counter()
            res = fn(inst, objective=objective, time_limit=time_limit, **kw)
            wall = time.perf_counter() - t0
            rows.append({"instance": f"medium-{seed}", "P/K": inst.capacity[0, 1] / inst.job.param_bytes,
                         "solver": name, "objective_name": objective, "status": res.status.value,
                         "objective": _value(inst, res.solution, objective), "wall_s": wall,
                         "solve_s": res.info.get("solve_s"), "constraints": res.info.get("bandwidth_constraints"),
                         "z": res.info.get("z_vars"), "sym": res.info.get("symmetric_pairs")})
            print(rows[-1], flush=True)
    return rows


def titan_rows(n: int, repeats: int) -> list[dict[str, Any]]:
    rows = []
    for seed in range(n):
        inst = NimpInstance.from_dict(cluster(seed))
        g = [m.gpus for m in inst.machines]
        r = [m.idle_gpus for m in inst.machines]
        ph, cap = inst.phases(), capacity_argument(inst)
        sens = True
        for name, call in (("titan", lambda: titan(g, r, cap, ph, workers=inst.N)),
                           ("elasticflow", lambda: elasticflow(r, workers=inst.N)),
                           ("hived", lambda: hived(g, r, workers=inst.N)),
                           ("tiresias", lambda: tiresias(r, workers=inst.N, placement_sensitive=sens))):
            ts = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                m = call()
                ts.append(time.perf_counter() - t0)
            ev = evaluate(inst, {"machine_of_worker": m}) if m is not None else None
            rows.append({"instance": f"cluster-{seed}", "algorithm": name, "median_ms": 1e3 * statistics.median(ts),
                         "min_ms": 1e3 * min(ts), "feasible": bool(ev and ev.feasible),
                         "lex-cross": ev.objectives["lex-cross"] if ev and ev.feasible else None,
                         "violations": (ev.violations[:1] if ev and not ev.feasible else [])})
            print(rows[-1], flush=True)
    return rows


def claim_rows(n_tiny: int, n_medium: int) -> list[dict[str, Any]]:
    rows = []
    cases = [(f"tiny({s})", tiny(s)) for s in range(n_tiny)] + [(f"medium-{s}", medium(s)) for s in range(n_medium)]
    for name, d in cases:
        inst = NimpInstance.from_dict(d)
        opt = run_cpsat(inst, workers=1, time_limit=60)
        if opt.status.value != "optimal":
            rows.append({"case": name, "optimum": None, "status": opt.status.value})
            continue
        o = _value(inst, opt.solution, "lex")
        t = run_titan(inst)
        h = _value(inst, t.solution, "lex") if t.status.value == "feasible" else None
        row: dict[str, Any] = {"case": name, "N": inst.N, "M": inst.M, "P": "scalar" if inst.capacity_is_scalar else "matrix",
                               "optimum": o, "titan": h, "status": "optimal"}
        if h is not None:
            row.update(approximation_check(inst, h, o))
        rows.append(row)
    return rows


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "-" if v is None else str(v)


def _table(rows: list[dict[str, Any]], cols: list[str]) -> list[str]:
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(_fmt(r.get(c)) for c in cols) + " |" for r in rows]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--medium", type=int, default=5)
    ap.add_argument("--cluster", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--tiny", type=int, default=200)
    ap.add_argument("--time-limit", type=float, default=60.0)
    args = ap.parse_args()
    t_start = time.perf_counter()
    ex = exact_rows(args.medium, args.time_limit)
    ti = titan_rows(args.cluster, args.repeats)
    cl = claim_rows(args.tiny, args.medium)

    solved = [r for r in cl if r["status"] == "optimal"]
    found = [r for r in solved if r["titan"] is not None]
    same = [r for r in found if r["titan"] == r["optimum"]]
    worse = [r for r in found if r["titan"] != r["optimum"]]
    fail_o1 = [r for r in found if not r["holds_o1"]]
    fail_o2 = [r for r in found if not r["holds_o2"]]
    infeasible = [r for r in cl if r["status"] == "infeasible"]
    titan_med = [r["median_ms"] for r in ti if r["algorithm"] == "titan"]
    lines = [
        "# nimp: exact solve times, Titan's time, the (1 - 1/e) claim",
        "",
        run_line() + f" CP-SAT with 1 worker; {time.perf_counter() - t_start:.0f} s in all. "
        "Every value is `evaluate`'s; objective `lex` = [idle machines used, machines used], "
        "`lex-cross` adds cross-machine bytes per synchronisation.",
        "",
        "## Exact solvers, 16 workers (HD) on 16 machines of 8 GPUs (suite `medium`)",
        "",
        "Aim: proven optimal in <= 10 s. `wall_s` includes building the model; `z` = linearisation "
        "variables, `sym` = symmetry-breaking pairs.",
        "",
        *_table(ex, ["instance", "P/K", "solver", "objective_name", "status", "objective", "wall_s", "solve_s",
                     "constraints", "z", "sym"]),
        "",
        f"Largest wall time: {max(r['wall_s'] for r in ex):.2f} s; all optimal: "
        f"{all(r['status'] in ('optimal', 'infeasible') for r in ex)}.",
        "",
        "## Titan on the Sec. V-B cluster (64-worker HD job, 512 machines of 8 GPUs, suite `cluster`)",
        "",
        f"Target: <= 5 ms median. {args.repeats} calls per instance of the plain functions (instance parsed "
        "once). Baselines ignore the bandwidth constraint (P = 2K here); `feasible` says whether their "
        "placement happens to satisfy it.",
        "",
        *_table(ti, ["instance", "algorithm", "median_ms", "min_ms", "feasible", "lex-cross", "violations"]),
        "",
        f"Titan's median over instances: {statistics.median(titan_med):.2f} ms (max {max(titan_med):.2f} ms).",
        "",
        "## Theorems 4-5 measured (remaining-machines form, Eq. 3)",
        "",
        f"Cases: `tiny(seed)` for seeds 0..{args.tiny - 1} and the medium suite; optimum by CP-SAT. "
        f"O1 = C_max - idle used, O2 = C_max - used, C_max = max(|S|, |N|); the claim is "
        f"O_titan >= (1 - 1/e)·O_opt = {RATIO:.4f}·O_opt.",
        "",
        f"* cases: {len(cl)}; infeasible (proven): {len(infeasible)}; optimum known: {len(solved)}",
        f"* Titan found a placement: {len(found)} of {len(solved)} feasible cases "
        f"(none found on {len(solved) - len(found)}: Titan's greedy is incomplete)",
        f"* Titan lexicographically optimal: {len(same)}; worse: {len(worse)}",
        f"* (1 - 1/e) on O1 fails on {len(fail_o1)} cases, on O2 on {len(fail_o2)} cases "
        "(among the cases where Titan found a placement)",
        f"* smallest ratios: O1 {min((r['ratio_o1'] for r in found), default=1.0):.4f}, "
        f"O2 {min((r['ratio_o2'] for r in found), default=1.0):.4f}",
        "",
        "Where Titan is not optimal or finds nothing (`optimum`, `titan`: [idle used, used]; ratios in the remaining-machines form):",
        "",
        *_table([r for r in solved if r["titan"] != r["optimum"]],
                ["case", "N", "M", "P", "optimum", "titan", "ratio_o1", "ratio_o2", "holds_o1", "holds_o2"]),
        "",
        "Reading: the remaining-machines form divides by C_max - used, which is large next to the "
        "machines a single job uses, so the ratio stays close to 1 even when Titan uses more idle "
        "machines than needed; the claim says little about the lexicographic criteria themselves. "
        "It does not cover the cases where Titan finds no placement although one exists (the greedy "
        "cannot backtrack), which the table lists with `titan` = -.",
        "",
        f"Titan found no placement on {len(solved) - len(found)} feasible cases, "
        f"{sum(1 for r in solved if r['titan'] is None and r['P'] == 'matrix')} of them with a capacity matrix: "
        "Titan under its default reading (`titan_algorithm=repaired`) checks bandwidth as each worker joins a "
        "machine (Alg. 1), the workers that remain once the worker sets are placed included (Alg. 2 line 18 "
        "repaired), and takes the next selection of machines when the check refuses a worker on every machine "
        "of the current one; a greedy that cannot backtrack, it finds nothing when no selection it tries "
        "carries the job under P. The Theorems 4-5 check over seeded instances, "
        "separating where Titan fails from where the proof's assumptions break, for every reading of the "
        "algorithm: `benchmarks/perf/nimp_approximation.md`.",
    ]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
