"""Generate ``benchmarks/results/worst-case.md``: every paper algorithm's and baseline's worst ratio.

For each of the four problems and each of its non-exact algorithms (paper algorithms, peers,
baselines), this script

1. runs ``optkit worst-case`` (:func:`optkit.worst_case.worst_case`) with ``--budget`` seconds,
   the default size limits and the given seed, into ``benchmarks/results/worst-case/PROBLEM/ALGORITHM/``
   (instance, optimum, the algorithm's solution, summary; the resume state stays out of git);
2. measures the ratio of every algorithm on every shipped instance (``instances/PROBLEM/*/``),
   the exact reference computed once per instance (where it proves no optimum in the oracle's
   time limit, the ratio is against a lower bound and the page says how many), on the harness'
   workers;
3. writes the page: per algorithm the worst ratio found, the worst on the shipped suites, the
   paper's guarantee (:func:`optkit.worst_case.guarantee`, a reader of the one table of
   guarantees, :mod:`optkit.testing.guarantees`, that ``assert_within`` checks) and a link to
   each worst instance.

Every number on the page is measured by this run (ratios from ``evaluate`` and the exact
oracle); the page is generated, never edited by hand. The issue asks a 10-minute budget per
algorithm; the page states the budget it ran with.

Usage::

    python benchmarks/worst_case.py --budget 600 --jobs 2 --fresh    # the issue's run (3.5 hours)
    python benchmarks/worst_case.py --budget 600 --jobs 2            # go on with it after a stop

A run of every algorithm at the issue's budget takes longer than one working session, and the
resume state of a search (``state.json``, ``evaluations.jsonl``) stays out of git. So the run goes
on across sessions at the granularity of one algorithm: an algorithm whose committed
``summary.json`` records a finished search with this run's budget, seed, oracle time limit and
size limits is kept as it is (commit each folder as its search finishes); any other algorithm's
folder is emptied and searched from the start, so that every row of the page is one
uninterrupted search of exactly ``--budget`` seconds (a resumed search would get a second
budget). A problem's shipped suites are measured once per run, after its algorithms, and kept
in ``suites.json`` with the settings they were measured with. ``--fresh`` discards every kept
result of the problems searched.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

PROBLEMS = ("gpu-mapping", "ddlwmp", "rar-ddls", "nimp")
# Issue 24's budget per algorithm: 10 minutes on 2 cores.
ISSUE_BUDGET = 600.0
# The code a search runs on (its result files under benchmarks/results/ change while it runs).
CODE = ("optkit", "formulations", "benchmarks/worst_case.py", "pyproject.toml")


def algorithms(problem: str) -> list[str]:
    """The problem's non-exact, available algorithms, in the formulation's order."""
    from optkit import registry

    f = registry.get(problem)
    return [a.name for a in f.algorithms.values() if a.kind != "exact" and a.available()]


def suite_instances(problem: str) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    """Every shipped instance of ``problem`` (not the findings in ``worst-case/``), and how many
    files were left out because they are not instances (none today)."""
    kept, skipped = [], 0
    for path in sorted((ROOT / "instances" / problem).rglob("*.json")):
        rel = path.relative_to(ROOT / "instances" / problem)
        if rel.parts[0] == "worst-case":
            continue
        data = json.loads(path.read_text())
        if data.get("problem") != problem:
            skipped += 1
            continue
        kept.append((str(path.relative_to(ROOT)), data))
    return kept, skipped


def measure_suites(problem: str, algos: list[str], executor: Any, oracle_time_limit: float,
                   seed: int) -> dict[str, Any]:
    """Per algorithm: the worst ratio over the shipped instances (and which), how many measured."""
    from optkit import registry
    from optkit.harness.tasks import Task
    from optkit.instances import instance_hash

    objective = registry.get(problem).default_objective
    items, skipped = suite_instances(problem)
    tasks = [Task(problem=problem, instance_name=name, instance={}, instance_hash=instance_hash(data),
                  algorithm="optkit.worst_case:measure_algorithms", objective=objective,
                  params={"problem": problem, "instance": data, "algorithms": algos, "objective": objective,
                          "oracle_time_limit": oracle_time_limit, "algorithm_seed": seed},
                  seed=seed, time_limit=(len(algos) + 1) * (oracle_time_limit + 5.0), kind="measure")
             for name, data in items]
    out: dict[str, Any] = {a: {"ratio": None, "instance": None, "measured": 0, "proven": 0, "violations": 0,
                               "errors": 0} for a in algos}
    for row in executor.run(tasks):
        results = row["metrics"].get("results", {}) if row["status"] == "feasible" else {}
        for a in algos:
            r = results.get(a)
            if r is None or r.get("ratio") is None:
                if r is None or r.get("status") == "error":
                    out[a]["errors"] += 1
                continue
            o = out[a]
            o["measured"] += 1
            o["proven"] += bool(r.get("proven"))
            o["violations"] += bool(r.get("violates"))
            if o["ratio"] is None or r["ratio"] > o["ratio"] or (r["ratio"] == o["ratio"]
                                                                  and row["instance_name"] < o["instance"]):
                o.update(ratio=r["ratio"], instance=row["instance_name"], proven_worst=bool(r.get("proven")))
    out["_instances"] = len(items)
    out["_skipped"] = skipped
    return out


def _fmt(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, float) and math.isinf(x):
        return "∞"
    return f"{x:.4g}"


def _verdict(s: dict[str, Any], su: dict[str, Any], g: Any) -> str:
    from optkit.testing.guarantees import guarantee_for

    if g is None and not su["violations"] and not s["violations_seen"]:
        declared = guarantee_for(s["problem"], s["algorithm"])
        return ("no bound on this instance" if declared is not None and declared.objective == s["objective"]
                else "no guarantee")
    parts = []
    if s["violations_seen"]:
        parts.append(f"{s['violations_seen']} searched instances")
    if su["violations"]:
        parts.append(f"{su['violations']} shipped instances")
    if parts:
        return "**violated** on " + " and ".join(parts)
    return "holds on every instance evaluated"


def _guarantee_now(s: dict[str, Any], instance_file: Path) -> tuple[Any, str]:
    """The guarantee on the written instance, by today's :func:`optkit.worst_case.guarantee`."""
    from optkit import registry
    from optkit.worst_case import guarantee

    inst = registry.get(s["problem"]).instance_from_dict(json.loads(instance_file.read_text()))
    return guarantee(s["problem"], s["algorithm"], inst, s["objective"], params=s["params"])


def write_page(path: Path, rows: list[dict[str, Any]], suites: dict[str, Any], args: argparse.Namespace,
               wall: float, suite_settings: dict[str, Any] | None = None) -> None:
    """Write the page from the searches' summaries and the suites' measurements.

    Rows may come from searches of several budgets: while the issue's run goes on across
    sessions (module docstring), ``--page-only`` writes the algorithms searched so far at the new
    budget beside the others' earlier rows, and the page says which row has which budget."""
    from _page import run_line

    from optkit import worst_case as wc

    runs = Path(args.runs)
    suite_settings = suite_settings or {}
    budgets = sorted({float(r["summary"]["budget_s"]) for r in rows}, reverse=True)
    mixed = len(budgets) > 1
    commits = sorted({r["summary"]["code_commit"] for r in rows if r["summary"].get("code_commit")})
    unrecorded = sum(not r["summary"].get("code_commit") for r in rows)
    code_text = ("the code that searched: commit " + ", ".join(commits) if commits else "")
    if unrecorded:
        code_text += ((" (" if commits else "") + f"{unrecorded} earlier rows do not record their commit"
                      + (")" if commits else ""))
    time_what = ("of search and suite measurement summed over the rows below (page rebuilt by --page-only)"
                 if args.page_only else
                 "in all (the algorithms' searches and the suites' measurements, summed over the sessions the run "
                 "took)")
    if not args.page_only and set(args.problems) != set(PROBLEMS):
        time_what = (f"for this run, which searched {', '.join(args.problems)} again; the other problems' rows are "
                     "those of the earlier run, from their summary.json files")
    if args.page_only:
        command = "python benchmarks/worst_case.py --page-only"
    else:
        command = (f"python benchmarks/worst_case.py --budget {args.budget:g} --jobs {args.jobs} --seed {args.seed}"
                   + (" --fresh" if args.fresh else "")
                   + ("" if set(args.problems) == set(PROBLEMS) else f" --problems {' '.join(args.problems)}"))
    if mixed:
        counts = {b: sum(float(r["summary"]["budget_s"]) == b for r in rows) for b in budgets}
        budget_text = ("**Budget per algorithm: " + ", ".join(f"{b:g} s of wall time for {n} of the {len(rows)} "
                                                              "algorithms" for b, n in counts.items())
                       + "** (the column *budget*): the run at the larger budget is still going on (it resumes one "
                       "algorithm at a time across sessions, `python benchmarks/worst_case.py --budget "
                       f"{budgets[0]:g} --jobs 2`), and the other rows are those of the earlier run.")
    else:
        budget_text = f"**Budget: {budgets[0]:g} s of wall time per algorithm**."
    behind = budgets[-1] < ISSUE_BUDGET
    lines = [
        "# Worst ratio found per algorithm, beside the paper's guarantee",
        "",
        run_line(command),
        "",
        f"{budget_text} On this machine ({os.cpu_count()} cores shared with other work; the load at each search's "
        f"end is in its summary.json), seed {args.seed}, oracle time limit {args.oracle_time_limit:g} s per exact "
        f"call; {wall / 60:.1f} minutes {time_what}; {code_text}. "
        + ("" if not behind else
           f"Issue 24 asks {ISSUE_BUDGET / 60:g} minutes per algorithm on 2 cores; "
           + ("that run is still to do " if not mixed else "rows below that budget are still to do ")
           + f"(`--budget {ISSUE_BUDGET:g}`). ")
        + "A larger budget can only find larger ratios: every ratio here is a lower "
        "bound on the algorithm's worst case (within the size limits below).",
        "",
        "Ratio: the algorithm's objective (from the formulation's `evaluate`) over the proven optimum of the exact "
        "oracle (`optkit.testing.oracle.optimum`, the one `assert_within` uses: brute force where it holds the "
        "instance, else CP-SAT), on the problem's default objective. Where "
        "the optimum is 0 and the algorithm's value is not, or where the algorithm returns no feasible solution on "
        "a feasible instance, the ratio is ∞. nimp: the measure of Theorems 4-5 that `assert_within` and the "
        "`titan-approximation` claim check (Def. 1's H: N − idle machines used, N − machines used; "
        "`formulations/nimp/approximation.py` says why not Eq. (3)'s C_max form), inverted so that larger is worse, "
        "max_k (N − O_kᵒᵖᵗ)/(N − O_kᵃˡᵍ); the paper's (1 − 1/e) becomes "
        "e/(e − 1) ≈ 1.582. "
        "Method, determinism and resume: `optkit worst-case --help` and the module `optkit.worst_case`.",
        "",
        "Size limits of the search (the defaults of `--max-size`): "
        + "; ".join(f"{p}: " + ", ".join(f"{k} ≤ {v[0]}" for k, v in wc._SPECS[p].limits.items()) for p in PROBLEMS)
        + ".",
        "",
        "| problem | algorithm | " + ("budget | " if mixed else "") + "worst ratio found | worst instance (shrunk) "
        "| evaluations | worst ratio on the shipped suites | paper's guarantee | verdict |",
        "|---|---|" + ("---:|" if mixed else "") + "---|---|---|---|---|---|",
    ]
    for r in rows:
        s = r["summary"]
        p, a = s["problem"], s["algorithm"]
        link = f"[{', '.join(f'{k} {v}' for k, v in s['size'].items())}](worst-case/{p}/{a}/instance.json)"
        against = "" if s["ratio_against"] == "proven optimum" else " (vs lower bound)"
        shrink = "" if s["phase"] == "done" else " (shrink cut by the budget)"
        su = suites[p][a]
        suite_cell = ("–" if su["ratio"] is None else
                      f"{_fmt(su['ratio'])} on `{Path(su['instance']).relative_to('instances').as_posix()}` "
                      f"({su['measured']} instances"
                      + (f", {su['measured'] - su['proven']} against a lower bound" if su["proven"] < su["measured"]
                         else "") + ")")
        g, gtext = _guarantee_now(s, runs / p / a / "instance.json")
        gtext = gtext.replace("|", "\\|")
        gcell = gtext if g is None else f"{_fmt(g)} on the worst instance: {gtext}"
        budget_cell = f"{float(s['budget_s']):g} s | " if mixed else ""
        lines.append(f"| {p} | {a} | {budget_cell}{_fmt(s['ratio'])}{against} | {link}{shrink} | {s['evaluations']} | "
                     f"{suite_cell} | {gcell} | {_verdict(s, su, g)} |")
    lines += ["", "Shipped instances per problem (every suite under `instances/`; the column above counts those "
              "with a ratio: infeasible instances have none), and the run that measured them: "
              + "; ".join(f"{p}: {suites[p]['_instances']} ("
                          + (f"with the {suite_settings[p]['budget']:g}-s run" if p in suite_settings
                             else "with an earlier run") + ")" for p in PROBLEMS if p in suites) + ".", ""]
    violated = [r["summary"] for r in rows if r["summary"]["violations_seen"]]
    lines += ["## Violations of a proven guarantee", ""]
    for r in rows:
        s = r["summary"]
        su = suites[s["problem"]][s["algorithm"]]
        if su["violations"]:
            lines.append(f"* {s['problem']} / {s['algorithm']}: {su['violations']} of the {su['measured']} shipped "
                         f"instances measured exceed the guarantee (the worst: `{su['instance']}`, ratio "
                         f"{_fmt(su['ratio'])}).")
    if not violated and not any(suites[r["summary"]["problem"]][r["summary"]["algorithm"]]["violations"]
                                for r in rows):
        lines.append("None found in this budget.")
    for s in violated:
        w = s["worst_violation"]
        lines.append(f"* {s['problem']} / {s['algorithm']}: {s['violations_seen']} evaluated instances exceed the "
                     f"guarantee; the worst ratio {_fmt(w['ratio'])} against {_fmt(w['guarantee'])} "
                     f"([instance](worst-case/{s['problem']}/{s['algorithm']}/violation.json)). The finding and its "
                     f"pinned instance: `instances/{s['problem']}/worst-case/` and "
                     "`tests/test_worst_case_findings.py`.")
    lines += ["", "## Pinned findings", "",
              "Violations written up and pinned by `tests/test_worst_case_findings.py` (each folder's README says "
              "whether it breaks the theorem as stated or only optkit's reading of it):", ""]
    for problem in PROBLEMS:
        folder = ROOT / "instances" / problem / "worst-case"
        for f in sorted(folder.glob("*.json")):
            meta = json.loads(f.read_text()).get("meta", {})
            rel = f"../../instances/{problem}/worst-case"
            lines.append(f"* [{problem}/{f.stem}]({rel}/{f.name}): {meta.get('finding', '')} "
                         f"([write-up]({rel}/README.md))")
    path.write_text("\n".join(lines) + "\n")


def _page_only(args: argparse.Namespace, runs: Path) -> int:
    from optkit.harness.executors import LocalExecutor

    rows = [{"summary": json.loads((runs / p / a / "summary.json").read_text())}
            for p in PROBLEMS if p in args.problems for a in algorithms(p)
            if (runs / p / a / "summary.json").exists()]
    if not rows:
        raise SystemExit(f"no summaries under {runs}")
    for r in rows:  # distinct violating instances, from the journal where it is still there
        s = r["summary"]
        journal = runs / s["problem"] / s["algorithm"] / "evaluations.jsonl"
        if journal.exists():
            lines = [x for x in journal.read_text().splitlines() if x.endswith("}")]
            hashes = {rec["hash"] for rec in map(json.loads, lines) if rec["result"].get("violates")}
            if s["violations_seen"] != len(hashes):
                s["violations_seen"] = len(hashes)
                (journal.parent / "summary.json").write_text(json.dumps(s, indent=1, allow_nan=True) + "\n")
    args.budget = max(r["summary"]["budget_s"] for r in rows)
    saved = _load_suites(runs)
    if saved["suites"]:
        suites = saved["suites"]
        wall = (sum(float(r["summary"]["elapsed_s"]) for r in rows)
                + sum(float(saved["suite_wall_s"].get(p, 0.0)) for p in suites))
    else:
        executor = LocalExecutor(args.jobs)
        suites = {p: measure_suites(p, algorithms(p), executor, args.oracle_time_limit, args.seed)
                  for p in PROBLEMS if p in args.problems}
        wall = sum(r["summary"]["elapsed_s"] for r in rows)  # the searches' time; the suites' is not known
        _atomic_json(runs / "suites.json", {"suites": suites, "settings": {}, "suite_wall_s": {}, "wall_s": wall})
    write_page(Path(args.out), rows, suites, args, wall, saved["settings"])
    print(f"wrote {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--budget", type=float, default=600.0, help="seconds per algorithm (issue 24: 600)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--oracle-time-limit", type=float, default=20.0)
    p.add_argument("--problems", nargs="*", default=list(PROBLEMS))
    p.add_argument("--fresh", action="store_true", help="delete earlier runs first (else they resume)")
    p.add_argument("--page-only", action="store_true",
                   help="only rewrite the page from the runs' summary.json files (and suites.json)")
    p.add_argument("--runs", default=str(ROOT / "benchmarks/results/worst-case"))
    p.add_argument("--out", default=str(ROOT / "benchmarks/results/worst-case.md"))
    args = p.parse_args(argv)
    from _page import commit

    from optkit.harness.executors import LocalExecutor
    from optkit.worst_case import format_summary, worst_case

    runs = Path(args.runs)
    code = commit(CODE)
    if args.page_only:  # rebuild the page from the runs' summaries (the suites are measured again if needed)
        return _page_only(args, runs)
    if args.fresh:  # only the problems searched again: the others' runs stay on the page
        for problem in args.problems:
            if (runs / problem).exists():
                shutil.rmtree(runs / problem)
    runs.mkdir(parents=True, exist_ok=True)
    (runs / ".gitignore").write_text("state.json\nevaluations.jsonl\n*.tmp\n")
    rows, suites = [], {}
    failed: list[str] = []
    saved = _load_suites(runs)
    wanted = _suite_settings(args)
    executor = LocalExecutor(args.jobs)
    for problem in PROBLEMS:
        if problem not in args.problems:
            kept = [runs / problem / a / "summary.json" for a in algorithms(problem)]
            if problem in saved["suites"] and all(k.exists() for k in kept):
                rows += [{"summary": json.loads(k.read_text())} for k in kept]
                suites[problem] = saved["suites"][problem]
            continue
        algos = algorithms(problem)
        for a in algos:
            out = runs / problem / a
            s = finished_search(out, problem, args)
            if s is None:  # not searched at these settings, or cut off: from the start (see the docstring)
                if out.exists():
                    shutil.rmtree(out)
                try:
                    s = worst_case(problem, a, out, budget=args.budget, seed=args.seed, jobs=args.jobs,
                                   oracle_time_limit=args.oracle_time_limit, progress=False)
                except Exception:  # noqa: BLE001 - one algorithm's crash must not stop the hours-long run
                    traceback.print_exc()
                    failed.append(f"{problem}/{a}")
                    print(f"{problem} / {a}: FAILED (traceback above); its folder is left without a summary and "
                          "the page keeps no row for it", flush=True)
                    continue
                s["code_commit"] = code  # which code searched (a run may span sessions and commits)
                _atomic_json(out / "summary.json", s)
                print(format_summary(s), f"  (load {os.getloadavg()[0]:.1f})", flush=True)
            else:
                print(f"{problem} / {a}: kept, searched at these settings ({s['elapsed_s']:.0f} s, "
                      f"{s['evaluations']} evaluations)", flush=True)
            rows.append({"summary": s})
        if problem in saved["suites"] and saved["settings"].get(problem) == wanted:
            suites[problem] = saved["suites"][problem]
            print(f"{problem}: shipped suites kept (measured at these settings)", flush=True)
        else:
            began = time.monotonic()
            suites[problem] = measure_suites(problem, algos, executor, args.oracle_time_limit, args.seed)
            saved["suites"][problem] = suites[problem]
            saved["settings"][problem] = wanted
            saved["suite_wall_s"][problem] = time.monotonic() - began
            _atomic_json(runs / "suites.json", saved)
            print(f"{problem}: shipped suites measured ({suites[problem]['_instances']} instances)", flush=True)
    wall = (sum(float(r["summary"]["elapsed_s"]) for r in rows)
            + sum(float(saved["suite_wall_s"].get(p, 0.0)) for p in suites))
    saved["wall_s"] = wall
    _atomic_json(runs / "suites.json", saved)
    write_page(Path(args.out), rows, suites, args, wall, saved["settings"])
    print(f"wrote {args.out}")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _suite_settings(args: argparse.Namespace) -> dict[str, Any]:
    """What a problem's suite measurements depend on, and the budget of the run that made them
    (so that a run at a new budget measures the suites on its own code again)."""
    return {"seed": args.seed, "oracle_time_limit": args.oracle_time_limit, "budget": args.budget}


def _load_suites(runs: Path) -> dict[str, Any]:
    """``suites.json``: per problem the suite measurements, the settings they were made with and
    their wall time (a file from before the settings were kept holds none: every problem is then
    measured again)."""
    empty: dict[str, Any] = {"suites": {}, "settings": {}, "suite_wall_s": {}, "wall_s": 0.0}
    path = runs / "suites.json"
    if not path.exists():
        return empty
    saved = json.loads(path.read_text())
    if "settings" not in saved:
        return {**empty, "suites": saved.get("suites", {}), "wall_s": float(saved.get("wall_s", 0.0))}
    return saved


def _atomic_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1, allow_nan=True) + "\n")
    tmp.replace(path)


def finished_search(out: Path, problem: str, args: argparse.Namespace) -> dict[str, Any] | None:
    """The summary of a search in ``out`` that ran to the end of one invocation at this run's
    budget, seed, oracle time limit and default size limits, else None (see the docstring: such
    a folder is kept when a run goes on in a later session)."""
    from optkit.worst_case import size_limits

    path = out / "summary.json"
    if not path.exists():
        return None
    s: dict[str, Any] = json.loads(path.read_text())
    same = (s.get("budget_s") == args.budget and s.get("seed") == args.seed and s.get("max_evals") is None
            and s.get("oracle_time_limit_s") == args.oracle_time_limit
            and s.get("max_size") == size_limits(problem) and s.get("target", "ratio") == "ratio")
    return s if same else None


if __name__ == "__main__":
    sys.exit(main())
