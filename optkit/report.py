"""Reports of comparison sweeps: tables (terminal, Markdown, CSV) and plots (PNG).

Everything is computed from the rows of a result store (:mod:`optkit.harness.store`) when the
report is made, so gaps always use the best proven bound known at that moment (see
:func:`optkit.harness.gaps.annotate_gaps`). Per problem, objective, algorithm and reading the
summary gives the number of runs, how many ended optimal / feasible / infeasible / no_solution /
time_limit / error, how many schedules are flagged as ending past the instance's horizon
(``metrics["past_horizon"]``), the median and maximum gap, and the median and maximum wall time;
beside them, the standard table of the optimisation literature: the runs solved within the
limit, the shifted geometric mean of wall time (shift 10 s; a run is charged its wall time capped
at its time limit, and a timeout or an error the limit:
:func:`optkit.report_analysis.charged_time`) and the medians of the primal and primal-dual
integrals (:mod:`optkit.report_analysis` defines each).

Readings side by side: the ``reading`` column names the parameter values of a row's group, for
the parameters that take more than one value among the problem's rows (a sweep such as
``--param tie_break=best-fit,worst-fit``); parameters with one value everywhere are left out of
the label (``rows.csv`` has every row's full parameters). Plots draw one box per
(algorithm, reading).

Time limits are never pooled: where a problem's runs were given different time limits, the
``reading`` column names each run's limit too (``time_limit=10 s``), so every summary row, box,
profile curve and paired comparison holds runs of one limit only, and a note says so.

Every report states what its runs were measured with (:mod:`optkit.harness.environment`): per
sweep that ran them, the machine, its cores, ``--jobs``, the time limit and the package
versions; runs stored before optkit recorded these (schema < 3) say "not recorded" for each but
their time limit, which every row keeps.

A report folder holds ``summary.md``, ``summary.csv``, ``rows.csv`` (every row, with its best
bound and gap) and, per problem and objective, ``gap_<problem>_<objective>.png`` and
``time_<problem>_<objective>.png`` (box plots with the runs drawn over them; time on a log scale),
``anytime_<problem>_<objective>.png`` (gap over time), ``profile_<problem>_<objective>.png`` and
``.csv`` (Dolan-Moré performance profiles and the costs and ratios behind them), and
``pairs.csv`` (every two algorithms compared on the instances both ran).
Bound conflicts (a proven bound above a feasible objective) are listed in the terminal output
and in ``summary.md``: they are bug findings.
"""

from __future__ import annotations

import csv
import json
import math
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence, TextIO

from optkit.errors import InputError

__all__ = [
    "SUMMARY_COLUMNS", "ROWS_COLUMNS", "Report", "build_report", "summarize", "format_table",
    "to_markdown", "write_report", "print_report", "environments", "TIME_LIMIT",
]

STATUSES = ("optimal", "feasible", "infeasible", "no_solution", "time_limit", "error")
SUMMARY_COLUMNS = (
    "problem", "objective", "algorithm", "reading", "runs", *STATUSES, "past_horizon",
    "gap_median", "gap_max", "wall_time_median_s", "wall_time_max_s",
    "solved", "time_sgm_s", "primal_integral_median_s", "primal_dual_integral_median_s",
)
ROWS_COLUMNS = (
    "key", "problem", "instance_name", "instance_hash", "source", "algorithm", "objective_name", "params",
    "seed", "time_limit", "status", "objective", "bound", "best_bound", "best_bound_source", "gap",
    "wall_time_s", "message", "finished_at", "metrics", "info", "solution",
    "charged_time_s", "solved", "anytime_horizon_s", "primal_integral_s", "primal_dual_integral_s", "anytime",
    "sweep",
)
TIME_LIMIT = "time_limit"
"""The key under which a varying time limit joins a row's ``reading`` label."""


@dataclass
class Report:
    """Annotated rows, their summary, bound conflicts and notes (e.g. a failing lower bound)."""

    rows: list[dict[str, Any]]
    summary: list[dict[str, Any]]
    conflicts: list[Any] = field(default_factory=list)  # optkit.harness.gaps.BoundConflict
    notes: list[str] = field(default_factory=list)
    db: str = ""
    pairs: list[dict[str, Any]] = field(default_factory=list)  # optkit.report_analysis.PAIR_COLUMNS
    profiles: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # report_analysis.profile_data
    environments: list[dict[str, Any]] = field(default_factory=list)
    """Per sweep the rows came from (``sweep``: its id, ``None`` for runs without a record):
    ``runs`` and ``description`` (:func:`optkit.harness.environment.describe`)."""


# ----------------------------------------------------------------------------- building
def build_report(db: Any, *, problem: str | None = None, keys: Iterable[str] | None = None) -> Report:
    """Report on the rows of ``db`` (a path or an open ``ResultStore``).

    ``problem`` keeps one problem; ``keys`` keeps only those rows (a sweep's tasks) while bounds
    still come from every stored row of their problems. A path that does not exist, or a file
    that is not an optkit store, is an :class:`InputError`, and the file is left as it was (it
    is read through a read-only connection until its schema is verified:
    :func:`optkit.harness.store.check_store`).
    """
    from optkit.harness.gaps import annotate_gaps
    from optkit.harness.store import ResultStore
    from optkit.report_analysis import annotate_runs, missing_anytime_note, pair_rows, profile_data

    own = not isinstance(db, ResultStore)
    if own:
        if str(db) != ":memory:" and not Path(db).is_file():
            raise InputError("db", f"{db} does not exist (run `optkit compare --db {db}` first)")
        store = ResultStore(db, reader=True)
    else:
        store = db
    try:
        all_rows = store.rows(problem=problem)
        wanted = set(keys) if keys is not None else None
        rows = [r for r in all_rows if wanted is None or r["key"] in wanted]
        notes: list[str] = []
        annotated, conflicts = annotate_gaps(rows, store.instances(problem), gap_rows=all_rows, notes=notes)
        pairs = {(r["instance_hash"], r["objective_name"]) for r in rows}
        conflicts = [c for c in conflicts if (c.instance_hash, c.objective_name) in pairs]
        annotate_runs(annotated, all_rows)
        missing = missing_anytime_note(annotated)
        if missing:
            notes.append(missing)
        varying = varying_params(annotated)
        for problem_name, keys in sorted(varying.items()):
            if TIME_LIMIT in keys:
                limits = sorted({_limit_text(r.get("time_limit")) for r in annotated if r["problem"] == problem_name})
                notes.append(f"{problem_name}: its runs were given different time limits ({', '.join(limits)}); "
                             "they are reported apart, never pooled (the reading column names each run's limit)")
        by_pair: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in annotated:
            by_pair.setdefault((r["problem"], r["objective_name"]), []).append(r)
        compared: list[dict[str, Any]] = []
        profiles: dict[tuple[str, str], dict[str, Any]] = {}
        summary = summarize(annotated)

        def label(r: Mapping[str, Any]) -> str:
            return _group_label(r, varying)

        for key, grp in by_pair.items():
            order = {_summary_label(s): i for i, s in enumerate(summary) if (s["problem"], s["objective"]) == key}
            grp.sort(key=lambda r: order.get(label(r), len(order)))  # the summary's (registry) order
            compared += pair_rows(grp, label, notes)
            data = profile_data(grp, label, notes)
            if data is not None:
                profiles[key] = data
        return Report(rows=annotated, summary=summary, conflicts=conflicts,
                      notes=list(dict.fromkeys(notes)), db=store.path, pairs=compared, profiles=profiles,
                      environments=environments(annotated, store.sweeps()))
    finally:
        if own:
            store.close()


def _algorithm_order(problem: str) -> dict[str, int]:
    try:
        from optkit import registry

        return {name: i for i, name in enumerate(registry.get(problem).algorithms)}
    except Exception:  # noqa: BLE001 - an unregistered problem sorts by name
        return {}


def _finite(values: Iterable[Any]) -> list[float]:
    return [float(v) for v in values
            if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)]


def summarize(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One dict per (problem, objective, algorithm, reading) with :data:`SUMMARY_COLUMNS`.

    Gaps are taken from the rows' ``gap`` (see ``annotate_gaps``); rows without one (errors,
    no bound known) do not enter the gap statistics. Every row with a wall time enters the
    time statistics, killed runs included (with the time they were given). ``reading`` is
    :func:`reading_label` of the group's rows. ``solved``, ``time_sgm_s`` and the integral
    medians come from :func:`optkit.report_analysis.summary_extras`.
    """
    from optkit.report_analysis import summary_extras

    varying = varying_params(rows)
    groups: dict[tuple[str, str, str, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        label = reading_label(r, varying)
        groups.setdefault((r["problem"], r["objective_name"], r["algorithm"], label), []).append(r)
    orders: dict[str, dict[str, int]] = {}

    def sort_key(k: tuple[str, str, str, str]) -> tuple[Any, ...]:
        order = orders.setdefault(k[0], _algorithm_order(k[0]))
        return (k[0], k[1], order.get(k[2], len(order)), k[2], k[3])

    out = []
    for key in sorted(groups, key=sort_key):
        grp = groups[key]
        gaps = _finite(r.get("gap") for r in grp)
        times = _finite(r.get("wall_time_s") for r in grp)
        d: dict[str, Any] = {"problem": key[0], "objective": key[1], "algorithm": key[2], "reading": key[3],
                             "runs": len(grp)}
        for s in STATUSES:
            d[s] = sum(1 for r in grp if r["status"] == s)
        d["past_horizon"] = sum(1 for r in grp if (r.get("metrics") or {}).get("past_horizon"))
        d["gap_median"] = statistics.median(gaps) if gaps else None
        d["gap_max"] = max(gaps) if gaps else None
        d["wall_time_median_s"] = statistics.median(times) if times else None
        d["wall_time_max_s"] = max(times) if times else None
        d.update(summary_extras(grp))
        out.append(d)
    return out


def varying_params(rows: Iterable[Mapping[str, Any]]) -> dict[str, set[str]]:
    """Per problem, the parameter names that take more than one value among ``rows``, and
    :data:`TIME_LIMIT` when its rows were given different time limits."""
    seen: dict[str, dict[str, set[str]]] = {}
    for r in rows:
        keys = seen.setdefault(r["problem"], {})
        keys.setdefault(TIME_LIMIT, set()).add(_limit_text(r.get("time_limit")))
        for k, v in (r.get("params") or {}).items():
            keys.setdefault(k, set()).add(json.dumps(v, sort_keys=True))
    return {p: {k for k, vals in keys.items() if len(vals) > 1} for p, keys in seen.items()}


def _limit_text(limit: Any) -> str:
    return "none" if limit is None else f"{float(limit):g} s"


def reading_label(row: Mapping[str, Any], varying: Mapping[str, set[str]]) -> str:
    """``key=value, ...`` of the row's parameters that vary among its problem's rows, and its
    time limit (``time_limit=10 s``) when those vary; ``-`` if none."""
    from optkit.readings import format_params

    keys = varying.get(row["problem"], set())
    params = dict(row.get("params") or {})
    if TIME_LIMIT in keys:
        params[TIME_LIMIT] = _limit_text(row.get("time_limit"))
    return format_params(params, keys=keys)


def environments(rows: Sequence[Mapping[str, Any]], sweeps: Mapping[int, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What ``rows`` were measured with: one entry per sweep among them, in the order of their
    first row (``sweep`` ``None``: rows stored without a record), with its ``runs`` and its
    :func:`~optkit.harness.environment.describe` line."""
    from optkit.harness.environment import describe

    groups: dict[Any, list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r.get("sweep"), []).append(r)
    return [{"sweep": sid, "runs": len(grp),
             "description": describe(sweeps.get(sid) if sid is not None else None, [r.get("time_limit") for r in grp])}
            for sid, grp in groups.items()]


# ----------------------------------------------------------------------------- text
def _fmt(col: str, v: Any) -> str:
    if v is None:
        return "-"
    if col.startswith("gap"):
        return "inf" if math.isinf(v) else f"{100 * v:.2f}%"
    if col.startswith(("wall_time", "time_sgm", "primal")):
        return f"{v:.3g}"
    return str(v)


_HEADERS = {
    "problem": "problem", "objective": "objective", "algorithm": "algorithm", "reading": "reading", "runs": "runs",
    "optimal": "opt", "feasible": "feas", "infeasible": "infeas", "no_solution": "nosol", "time_limit": "tlim",
    "error": "err", "past_horizon": "past T",
    "gap_median": "gap med", "gap_max": "gap max", "wall_time_median_s": "time med [s]",
    "wall_time_max_s": "time max [s]", "solved": "solved", "time_sgm_s": "time sgm10 [s]",
    "primal_integral_median_s": "PI med [s]", "primal_dual_integral_median_s": "PDI med [s]",
}


def _table_cells(summary: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[str]]]:
    headers = [_HEADERS[c] for c in SUMMARY_COLUMNS]
    body = [[_fmt(c, s.get(c)) for c in SUMMARY_COLUMNS] for s in summary]
    return headers, body


def format_table(summary: Sequence[Mapping[str, Any]]) -> str:
    """The summary as an aligned plain-text table (numbers right-aligned)."""
    if not summary:
        return "(no rows)"
    headers, body = _table_cells(summary)
    widths = [max(len(h), *(len(row[i]) for row in body)) for i, h in enumerate(headers)]
    left = {0, 1, 2, 3}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in body)])


def _conflict_lines(report: Report) -> list[str]:
    return [c.describe() for c in report.conflicts]


def _environment_lines(report: Report) -> list[str]:
    many = len(report.environments) > 1
    return [f"{e['description']}" + (f" ({e['runs']} runs)" if many else "") for e in report.environments]


def print_report(report: Report, file: TextIO | None = None) -> None:
    """The terminal table, what its runs were measured with, bound conflicts (as BUG lines) and
    notes."""
    out = file or sys.stdout
    print(format_table(report.summary), file=out)
    for line in _environment_lines(report):
        print(f"measured with: {line}", file=out)
    if report.conflicts:
        print(f"\nBOUND CONFLICTS ({len(report.conflicts)}): a proven bound exceeds a feasible objective; "
              "a solver, bound or evaluate is wrong:", file=out)
        for line in _conflict_lines(report):
            print(f"  BUG: {line}", file=out)
    for note in report.notes:
        print(f"note: {note}", file=out)


def to_markdown(report: Report, plots: Sequence[Path] = ()) -> str:
    """``summary.md``: the summary table, bound conflicts, notes and the plots."""
    headers, body = _table_cells(report.summary)
    lines = ["# optkit comparison report", ""]
    if report.db:
        lines += [f"Result store: `{report.db}`; {len(report.rows)} runs.", ""]
    if report.environments:
        lines += ["Measured with:", ""] + [f"- {line}" for line in _environment_lines(report)] + [""]
    lines += [
        "Gap: `(objective - best bound) / |objective|`, against the best proven bound of each instance and "
        "objective over every stored run and the formulation's lower bound. Statuses: opt = optimal, "
        "feas = feasible, infeas = infeasible (proven), nosol = no_solution (a heuristic found nothing; nothing "
        "proven), tlim = time_limit, err = error (a crash). past T: schedules ending past the instance's horizon. "
        "reading: the parameter values that differ between runs of the problem. Times are wall-clock seconds "
        "of the algorithm alone (killed runs: until the kill). solved: runs that ended optimal or infeasible "
        "(proven) within their time limit. time sgm10: shifted geometric mean of wall time, shift 10 s, each run "
        "charged its wall time capped at its time limit (a run that finished past its limit: the limit; "
        "timeouts and errors: the limit). Runs given different time limits are never pooled: the reading "
        "column then names each run's limit. PI / PDI: primal integral (Berthold 2013: the primal "
        "gap to the best known objective, 1 before the first incumbent, integrated over [0, time limit]) and "
        "primal-dual integral (the gap between the run's own incumbent and bound), seconds; their median over "
        "the runs with an anytime record.", "",
    ]
    if body:
        lines.append("| " + " | ".join(headers) + " |")
        lines.append("|" + "|".join("---" if i < 4 else "---:" for i in range(len(headers))) + "|")
        lines += ["| " + " | ".join(row) + " |" for row in body]
    else:
        lines.append("(no rows)")
    lines += _pairs_markdown(report)
    if report.conflicts:
        lines += ["", f"## Bound conflicts ({len(report.conflicts)})", "",
                  "A proven bound exceeds a feasible objective of the same instance and objective: "
                  "a solver, a lower bound or `evaluate` is wrong.", ""]
        lines += [f"- **BUG**: {c}" for c in _conflict_lines(report)]
    if report.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in report.notes]
    if plots:
        lines += ["", "## Plots", "",
                  "gap_* and time_*: box plots of each run's gap and wall time. anytime_*: per algorithm, the median "
                  "(band: quartiles) over its runs of the primal gap to the best known objective (left) and of the gap "
                  "between the run's incumbent and its own bound (right) against time; a heuristic is one step at its "
                  "finish. profile_*: Dolan-Moré performance profiles over the instances every algorithm ran, of the "
                  "time to a proven optimum (left; anything else is a failure) and of 1 + gap to the best bound "
                  "(right); profile_*.csv holds every cost and ratio.", ""]
        lines += [f"![{p.stem}]({p.name})" for p in plots]
    return "\n".join(lines) + "\n"


def _pairs_markdown(report: Report) -> list[str]:
    if not report.pairs:
        return []
    lines = ["", "## Paired comparisons", "",
             "Each two algorithms (a, b) on the instances both ran (several seeds: their median per instance; "
             "a failure is +inf). gap: the gap to the best bound; time: wall time capped at the limit, timeouts and "
             "errors charged at the limit. W/T/L: instances where a is lower / equal / higher. Median a - b with a bootstrap 95% "
             "interval (seed 0, 10,000 resamples) over the instances where both have a value (n fin); p: "
             "Wilcoxon signed-rank, two-sided (scipy.stats.wilcoxon).", "",
             "| problem | objective | a | b | measure | n | n fin | W/T/L | median a-b | 95% CI | p |",
             "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|"]

    def num(v: Any, measure: str) -> str:
        if v is None:
            return "-"
        return f"{100 * v:+.3g} pp" if measure == "gap" else f"{v:+.3g} s"

    for p in report.pairs:
        ci = "-" if p["ci_low"] is None else f"[{num(p['ci_low'], p['measure'])}, {num(p['ci_high'], p['measure'])}]"
        pv = "-" if p["p_value"] is None else f"{p['p_value']:.3g}"
        lines.append(f"| {p['problem']} | {p['objective']} | {p['a']} | {p['b']} | {p['measure']} | {p['n']} | "
                     f"{p['n_finite']} | {p['wins']}/{p['ties']}/{p['losses']} | {num(p['median_diff'], p['measure'])} | "
                     f"{ci} | {pv} |")
    return lines


# ----------------------------------------------------------------------------- files
def _csv_value(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True, allow_nan=True)
    return v


def _write_csv(path: Path, columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        for r in rows:
            w.writerow([_csv_value(r.get(c)) for c in columns])


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def _plot(rows: Sequence[Mapping[str, Any]], algorithms: Sequence[str], field_name: str, path: Path,
          title: str, ylabel: str, log: bool, varying: Mapping[str, set[str]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    data = []
    for a in algorithms:
        vals = _finite(r.get(field_name) for r in rows if _group_label(r, varying) == a)
        if field_name == "gap":
            vals = [100 * v for v in vals if math.isfinite(v)]
        if log:
            vals = [max(v, 1e-6) for v in vals]
        data.append(vals)
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(algorithms) + 2), 3.6), layout="constrained")
    positions = np.arange(1, len(algorithms) + 1)
    filled = [(p, d) for p, d in zip(positions, data) if d]
    if filled:
        ax.boxplot([d for _, d in filled], positions=[p for p, _ in filled], widths=0.5, showfliers=False)
        rng = np.random.default_rng(0)  # jitter only; fixed so the plot is reproducible
        for p, d in filled:
            ax.scatter(p + rng.uniform(-0.15, 0.15, len(d)), d, s=10, alpha=0.6, zorder=3)
    for p, d in zip(positions, data):
        if not d:
            ax.annotate("n/a", (p, 0.5), xycoords=("data", "axes fraction"), ha="center", color="grey")
    ax.set_xticks(positions, [f"{a}\n(n={len(d)})" for a, d in zip(algorithms, data)], fontsize=8)
    ax.set_xlim(0.4, len(algorithms) + 0.6)
    if log and filled:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _summary_label(s: Mapping[str, Any]) -> str:
    return s["algorithm"] if s.get("reading", "-") == "-" else f"{s['algorithm']}\n{s['reading']}"


def _group_label(row: Mapping[str, Any], varying: Mapping[str, set[str]]) -> str:
    return _summary_label({"algorithm": row["algorithm"], "reading": reading_label(row, varying)})


def write_report(report: Report, out_dir: str | Path) -> list[Path]:
    """Write ``summary.md``, ``summary.csv``, ``rows.csv``, ``pairs.csv``, the profile CSVs and the
    PNG plots; return their paths."""
    from optkit.report_analysis import PAIR_COLUMNS, plot_anytime, write_profile

    data_files: list[Path] = []
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plots: list[Path] = []
    varying = varying_params(report.rows)
    by_pair: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in report.rows:
        by_pair.setdefault((r["problem"], r["objective_name"]), []).append(r)
    for (problem, objective), rows in by_pair.items():
        algorithms = [_summary_label(s) for s in report.summary if s["problem"] == problem and s["objective"] == objective]
        stem = f"{_slug(problem)}_{_slug(objective)}"
        gap_png = out / f"gap_{stem}.png"
        _plot(rows, algorithms, "gap", gap_png, f"{problem}: gap on {objective} vs best proven bound",
              "gap [%]", log=False, varying=varying)
        time_png = out / f"time_{stem}.png"
        _plot(rows, algorithms, "wall_time_s", time_png, f"{problem} [{objective}]: wall time", "wall time [s]", log=True, varying=varying)
        plots += [gap_png, time_png]
        anytime_png = out / f"anytime_{stem}.png"
        if plot_anytime(rows, report.rows, lambda r: _group_label(r, varying), problem, objective, anytime_png):
            plots.append(anytime_png)
        if (problem, objective) in report.profiles:
            profile_png, profile_csv = out / f"profile_{stem}.png", out / f"profile_{stem}.csv"
            write_profile(report.profiles[(problem, objective)], problem, objective, profile_png, profile_csv)
            plots.append(profile_png)
            data_files.append(profile_csv)
    md = out / "summary.md"
    md.write_text(to_markdown(report, plots))
    summary_csv = out / "summary.csv"
    _write_csv(summary_csv, SUMMARY_COLUMNS, report.summary)
    rows_csv = out / "rows.csv"
    _write_csv(rows_csv, ROWS_COLUMNS, report.rows)
    pairs_csv = out / "pairs.csv"
    _write_csv(pairs_csv, PAIR_COLUMNS, report.pairs)
    return [md, summary_csv, rows_csv, pairs_csv, *data_files, *plots]
