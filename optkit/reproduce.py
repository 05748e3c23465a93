"""``optkit reproduce``: measure the papers' claims over readings and seeds, and write verdicts.

Every registered formulation may declare experiments (:class:`optkit.claims.Experiment`, each
holding claims). :func:`reproduce` measures the chosen experiments for every combination of the
readings that matter to them (the cross product of their options, or the values given) and every
seed, in parallel worker processes under each experiment's time limit (the harness's
:class:`~optkit.harness.executors.LocalExecutor`, or its
:class:`~optkit.harness.executors.DaskExecutor` given a scheduler, and its worker, with tasks of
kind ``measure``), and
stores every measurement in a SQLite result store as it finishes, so a killed run resumes where it
stopped. :func:`write_pages` then writes one Markdown page per paper (with a CSV of every
measurement and one PNG per experiment) and an ``index.md``: for each claim the paper's value, ours
per reading as mean and min-max over seeds, and a verdict per reading
(:func:`optkit.claims.verdict`) and over all readings (:func:`optkit.claims.overall_verdict`).

Pages are generated, never edited by hand.
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
from typing import Any, Callable, Iterable, Mapping, Sequence

from optkit import registry
from optkit.claims import SCALES, Claim, Experiment, Verdict, overall_verdict, verdict
from optkit.errors import InputError
from optkit.formulation import Formulation
from optkit.instances import instance_hash
from optkit.readings import expand_sweep, format_params, show_value

__all__ = [
    "DEFAULT_SEEDS", "experiments", "select", "reading_settings", "measurement_tasks", "reproduce",
    "Measurements", "write_pages", "list_lines",
]

DEFAULT_SEEDS = {"ci": 2, "paper": 5}
"""Seeds measured per reading when ``--seeds`` is not given."""


def experiments() -> dict[str, tuple[Formulation, Experiment]]:
    """Every registered experiment by id, with its formulation."""
    out: dict[str, tuple[Formulation, Experiment]] = {}
    for f in registry.all_formulations().values():
        for exp_id, exp in dict(f.experiments).items():
            if exp_id in out:
                raise InputError("experiments", f"{exp_id!r} is declared by both {out[exp_id][0].name} and {f.name}")
            _check_experiment(f, exp)
            out[exp_id] = (f, exp)
    return out


def _check_experiment(f: Formulation, exp: Experiment) -> None:
    names = {r.name for r in f.readings}
    for r in exp.readings:
        if r not in names:
            raise InputError(f"experiment {exp.id}", f"names reading {r!r}, which {f.name} does not declare")


def select(targets: Sequence[str]) -> list[tuple[Formulation, Experiment, list[str]]]:
    """The experiments named by ``targets`` (experiment ids or their dash-separated prefixes such
    as ``a-srpt-table2``, claim ids, paper names, problem names or ``all``), each with the claim
    ids asked for."""
    known = experiments()
    chosen: dict[str, tuple[Formulation, Experiment, list[str]]] = {}

    def add(f: Formulation, e: Experiment, claim_ids: Iterable[str]) -> None:
        entry = chosen.setdefault(e.id, (f, e, []))
        for c in claim_ids:
            if c not in entry[2]:
                entry[2].append(c)

    for t in targets:
        hit = False
        for f, e in known.values():
            if t in ("all", e.id, e.paper, f.name) or e.id.startswith(t + "-"):
                add(f, e, [c.id for c in e.claims])
                hit = True
            elif any(c.id == t for c in e.claims):
                add(f, e, [t])
                hit = True
        if not hit:
            ids = sorted(known) + sorted({c.id for _, e in known.values() for c in e.claims})
            from difflib import get_close_matches

            close = get_close_matches(t, ids, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise InputError("CLAIM", f"{t!r} is not a claim, experiment, paper or problem{hint}; "
                                      "`optkit reproduce list` lists them")
    if not chosen:
        raise InputError("CLAIM", "no experiments are registered")
    return list(chosen.values())


READING_MODES = ("each", "all", "default")


def reading_settings(f: Formulation, exp: Experiment, spec: str | Mapping[str, Sequence[Any]] = "each") -> list[dict[str, Any]]:
    """The reading combinations to measure ``exp`` under.

    ``"each"`` (the default): the default reading, then every value of each reading with the
    others at their defaults (one reading varied at a time: 1 + sum of (values - 1) settings);
    ``"all"``: the full cross product of every reading of the experiment (can be large);
    ``"default"``: the defaults only; a mapping ``{name: [values]}``: the cross product of those
    values (other readings at their defaults; values are validated). The values of a reading are
    the experiment's ``sweep`` for it, else the reading's declared options.
    """
    if spec == "each":
        defaults = {name: f.reading(name).default for name in exp.readings}
        out = [dict(defaults)]
        for name in exp.readings:
            for v in exp.sweep.get(name, f.reading(name).options):
                setting = {**defaults, name: f.reading(name).validate(v, where=f"sweep {name}")}
                if setting not in out:
                    out.append(setting)
        return out
    values: dict[str, list[Any]] = {}
    for name in exp.readings:
        r = f.reading(name)
        if spec == "all":
            values[name] = list(exp.sweep.get(name, r.options))
        elif spec == "default":
            values[name] = [r.default]
        elif isinstance(spec, Mapping):
            values[name] = [r.validate(v, where=f"--readings {name}") for v in spec[name]] if name in spec else [r.default]
        else:
            raise InputError("--readings", f"must be 'each', 'all', 'default' or key=v1,v2; got {spec!r}")
    if isinstance(spec, Mapping):
        declared = {r.name for r in f.readings}
        for name in spec:
            if name not in declared:
                raise InputError(f"--readings {name}", f"is not a reading of {f.name} (readings: "
                                                       f"{', '.join(sorted(declared)) or 'none'})")
    return expand_sweep(values)


@dataclass(frozen=True)
class _Unit:
    """The instance record of a measurement task: which experiment at which scale."""

    problem: str
    experiment: str
    scale: str

    def data(self) -> dict[str, Any]:
        return {"problem": self.problem, "experiment": self.experiment, "scale": self.scale}


def measurement_tasks(f: Formulation, exp: Experiment, settings: Sequence[Mapping[str, Any]],
                      seeds: Sequence[int], scale: str) -> list[Any]:
    """One harness task (kind ``measure``) per reading setting and seed."""
    from optkit.harness.tasks import Task

    if scale not in SCALES:
        raise InputError("--scale", f"must be one of {', '.join(SCALES)}, got {scale!r}")
    unit = _Unit(f.name, exp.id, scale).data()
    h = instance_hash(unit)
    limit = float(exp.time_limit.get(scale, 3600.0))
    run_seeds = list(seeds) if exp.seeded else [0]
    return [Task(problem=f.name, instance_name=exp.id, instance=unit, instance_hash=h, algorithm=exp.measure,
                 objective="claims", params={"readings": dict(s), "scale": scale}, seed=seed, time_limit=limit,
                 source=exp.paper, kind="measure")
            for s in settings for seed in run_seeds]


@dataclass
class Measurements:
    """The stored measurements of the selected experiments (rows of the store)."""

    selection: list[tuple[Formulation, Experiment, list[str]]]
    rows: list[dict[str, Any]]
    scale: str
    seeds: list[int]
    readings: Any = "each"
    elapsed_s: float = 0.0
    failures: list[str] = field(default_factory=list)


def reproduce(
    targets: Sequence[str],
    *,
    seeds: Sequence[int] | None = None,
    readings: str | Mapping[str, Sequence[Any]] = "each",
    scale: str = "ci",
    db: str | Path = "reproduce.sqlite",
    jobs: int | None = None,
    rerun: bool = False,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    scheduler: str | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> Measurements:
    """Measure the claims named by ``targets`` for every reading setting and seed.

    Measurements already in ``db`` are reused (a killed run resumes) unless ``rerun``; failed ones
    (``error``, ``time_limit``) are always measured again. ``scheduler`` (a Dask scheduler address,
    ``tcp://host:8786``) runs the measurements on that cluster instead of ``jobs`` local
    processes (connected before anything is measured; an unreachable one is an
    :class:`InputError`); each is stored the moment its row comes back, as locally.
    ``on_row`` is called with each new row after it is stored.
    """
    import time

    from optkit.harness.executors import make_executor
    from optkit.harness.store import ResultStore

    if scale not in SCALES:
        raise InputError("--scale", f"must be one of {', '.join(SCALES)}, got {scale!r}")
    seed_list = list(seeds) if seeds is not None else list(range(DEFAULT_SEEDS[scale]))
    if not seed_list or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in seed_list):
        raise InputError("--seeds", f"must be integers >= 0, got {seed_list!r}")
    selection = select(targets)
    tasks = []
    for f, exp, _ in selection:
        tasks += measurement_tasks(f, exp, reading_settings(f, exp, readings), seed_list, scale)
    start = time.perf_counter()
    failures: list[str] = []
    executor = make_executor(jobs, scheduler)
    try:
        with ResultStore(db) as store:
            done = set() if rerun else store.done_keys(include_failed=False)
            todo = [t for t in tasks if t.key not in done]
            if log is not None:
                log(f"reproduce: {len(tasks)} measurements ({len(selection)} experiments x readings x seeds), "
                    f"{len(tasks) - len(todo)} already in {db}, {len(todo)} to run ({executor.description})")
            bar = _progress(len(todo), progress and bool(todo))
            try:
                for row in executor.run(todo):
                    store.put_row(row)
                    bar.update(1)
                    if on_row is not None:
                        on_row(row)
                    if row["status"] != "feasible":
                        failures.append(f"{row['instance_name']} {format_params(row['params'].get('readings'))} "
                                        f"seed {row['seed']}: {row['status']}: {row['message']}")
            finally:
                bar.close()
            rows = store.rows(keys=[t.key for t in tasks])
    finally:
        executor.close()
    for r in rows:
        if r["status"] != "feasible":
            line = (f"{r['instance_name']} {format_params(r['params'].get('readings'))} seed {r['seed']}: "
                    f"{r['status']}: {r['message']}")
            if line not in failures:
                failures.append(line)
    return Measurements(selection, rows, scale, seed_list, readings, time.perf_counter() - start, failures)


def _mode_text(spec: Any) -> str:
    if spec == "each":
        return "the default, and each reading varied alone with the others at their defaults"
    if spec == "all":
        return "every combination of the readings"
    if spec == "default":
        return "the defaults only"
    return "the cross product of " + "; ".join(f"{k}={','.join(map(str, v))}" for k, v in dict(spec).items())


def _progress(total: int, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    disable = (not enabled) or not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())
    return tqdm(total=total, desc="reproduce", unit="measurement", disable=disable, dynamic_ncols=True)


# ----------------------------------------------------------------------------- pages
def reading_label(f: Formulation, exp: Experiment, readings: Mapping[str, Any] | None) -> str:
    """The readings of a measurement that differ from their defaults (``default`` if none)."""
    changed = {k: v for k, v in (readings or {}).items() if k not in exp.readings or v != f.reading(k).default}
    return format_params(changed) if changed else "default"


def _values(rows: Sequence[Mapping[str, Any]], f: Formulation, exp: Experiment) -> dict[str, dict[str, list[tuple[int, Any]]]]:
    """``{reading label: {claim id: [(seed, value)]}}`` for one experiment."""
    out: dict[str, dict[str, list[tuple[int, Any]]]] = {}
    for r in rows:
        if r["instance_name"] != exp.id or r["status"] != "feasible":
            continue
        label = reading_label(f, exp, r["params"].get("readings"))
        for c in exp.claims:
            out.setdefault(label, {}).setdefault(c.id, []).append((r["seed"], (r.get("metrics") or {}).get(c.id)))
    for per in out.values():
        for vals in per.values():
            vals.sort(key=lambda x: x[0])
    return out


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _fmt(v: float | None, unit: str = "") -> str:
    if v is None:
        return "-"
    u = "" if unit in ("", "ratio", "count") else (unit if unit == "%" else f" {unit}")
    return f"{v:.4g}{u}"


def _default_label(f: Formulation, exp: Experiment) -> str:
    return "default"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def claim_verdicts(m: Measurements, f: Formulation, exp: Experiment) -> dict[str, tuple[dict[str, Verdict], str]]:
    """``{claim id: ({reading label: Verdict}, overall sentence)}``."""
    vals = _values(m.rows, f, exp)
    out = {}
    for c in exp.claims:
        labels = sorted(vals, key=lambda x: (x != "default", x))
        per = {label: verdict(c, [v for _, v in vals[label].get(c.id, [])], m.scale) for label in labels}
        out[c.id] = (per, overall_verdict(per))
    return out


def write_pages(m: Measurements, out_dir: str | Path) -> list[Path]:
    """One Markdown page, CSV and PNGs per paper, and ``index.md``; returns the files written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    by_paper: dict[str, list[tuple[Formulation, Experiment, list[str]]]] = {}
    for item in m.selection:
        by_paper.setdefault(item[1].paper, []).append(item)
    written: list[Path] = []
    index = ["# Reproductions", "",
             f"Generated by `optkit reproduce` at scale `{m.scale}` with seeds {', '.join(map(str, m.seeds))} "
             f"({len(m.rows)} measurements, {sum(r.get('wall_time_s') or 0 for r in m.rows):.0f} s of measurement "
             f"time in all, {m.elapsed_s:.0f} s of it in the run that wrote this page). "
             "A claim reproduces under a reading when the mean over seeds lies within the claim's tolerance of "
             "the paper's value (bounds: when every seed satisfies the bound). \"Does not reproduce\" is said only "
             "when no reading measured reproduces it. Readings measured: " + _mode_text(m.readings) + ".", "",
             "| paper | claim | where | paper | ours (default reading) | verdict over readings |",
             "|---|---|---|---:|---:|---|"]
    for paper, items in by_paper.items():
        page, csv_rows, pngs = _paper_page(m, paper, items, out)
        md = out / f"{_slug(paper)}.md"
        md.write_text(page)
        csv_path = out / f"{_slug(paper)}.csv"
        with csv_path.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["experiment", "claim", "reading", "seed", "value", "paper_value", "unit", "statistic"])
            w.writerows(csv_rows)
        written += [md, csv_path, *pngs]
        for f, exp, claim_ids in items:
            verdicts = claim_verdicts(m, f, exp)
            default = _default_label(f, exp)
            for c in exp.claims:
                if c.id not in claim_ids:
                    continue
                per, overall = verdicts[c.id]
                d = per.get(default)
                index.append(f"| [{paper}]({md.name}) | `{c.id}` | {c.where} | {_fmt(c.paper_value, c.unit)} | "
                             f"{_fmt(d.mean if d else None, c.unit)} | {overall} |")
    if m.failures:
        index += ["", "## Failed measurements", ""] + [f"- {x}" for x in m.failures]
    idx = out / "index.md"
    idx.write_text("\n".join(index) + "\n")
    return [idx, *written]


def _swept_values(name: str, settings: Iterable[Mapping[str, Any]]) -> list[str]:
    """The distinct values of reading ``name`` among stored settings, as :func:`show_value` shows
    them, in numeric order when they are all numbers (0, 1, 3, 5, 10, not 0, 1, 10, 3, 5), else
    by their text."""
    items = [s.get(name) for s in settings]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
        return list(dict.fromkeys(show_value(v) for v in sorted(items)))
    return sorted({show_value(v) for v in items})


def _paper_page(m: Measurements, paper: str, items: Sequence[tuple[Formulation, Experiment, list[str]]],
                out: Path) -> tuple[str, list[list[Any]], list[Path]]:
    lines = [f"# {paper}: claims and reproductions", "",
             f"Generated by `optkit reproduce {paper} --scale {m.scale} --seeds {len(m.seeds)}`; do not edit. "
             f"Seeds: {', '.join(map(str, m.seeds))}. \"ours\" is the mean over seeds, [min, max] its spread. "
             "A reading column names the readings that differ from their defaults (\"default\": none).", ""]
    csv_rows: list[list[Any]] = []
    pngs: list[Path] = []
    for f, exp, claim_ids in items:
        vals = _values(m.rows, f, exp)
        verdicts = claim_verdicts(m, f, exp)
        default = _default_label(f, exp)
        lines += [f"## {exp.id}: {exp.summary}", ""]
        if exp.notes:
            lines += [exp.notes, ""]
        if exp.readings:
            lines += ["Readings that matter here (default marked *):", "",
                      "| reading | values measured | default | passage | why the default |", "|---|---|---|---|---|"]
            for name in exp.readings:
                r = f.reading(name)
                swept = _swept_values(name, (row["params"].get("readings", {}) for row in m.rows
                                             if row["instance_name"] == exp.id))
                lines.append(f"| `{name}` | {', '.join(swept)} | {show_value(r.default)} | "
                             f"{r.passage} | {r.reason} |")
            lines.append("")
        for c in exp.claims:
            if c.id not in claim_ids:
                continue
            per, overall = verdicts[c.id]
            lines += [f"### `{c.id}` — {c.where}", "",
                      f"Paper: **{_fmt(c.paper_value, c.unit)}** ({c.statistic}; {c.comparison}, tolerance "
                      f"±{c.tolerance:g}{'' if c.unit in ('', 'ratio', 'count') else ' ' + c.unit}). "
                      f"**Verdict: {overall}.**" + (f" {c.note}" if c.note else ""), "",
                      "| reading | ours: mean [min, max] | seeds | verdict |", "|---|---:|---:|---|"]
            for label in sorted(per, key=lambda x: (x != default, x)):
                v = per[label]
                star = " *" if label == default else ""
                spread = f" [{_fmt(v.low)}, {_fmt(v.high)}]" if v.seeds > 1 else ""
                lines.append(f"| {label}{star} | {_fmt(v.mean, c.unit)}{spread} | {v.seeds} | {v.text} |")
            lines.append("")
            for label, per_claim in vals.items():
                for seed, value in per_claim.get(c.id, []):
                    csv_rows.append([exp.id, c.id, label, seed, "" if _num(value) is None else value,
                                     c.paper_value, c.unit, c.statistic])
        png = out / f"{_slug(paper)}_{_slug(exp.id)}.png"
        if _plot_experiment(exp, [c for c in exp.claims if c.id in claim_ids], vals, default, png):
            pngs.append(png)
            lines += [f"![{exp.id}]({png.name})", ""]
        notes = sorted({n for r in m.rows if r["instance_name"] == exp.id and r["status"] == "feasible"
                        for n in (r.get("metrics") or {}).get("_notes", []) or []})
        if notes:
            lines += ["Notes from the measurements:", ""] + [f"- {n}" for n in notes] + [""]
        details = [r for r in m.rows if r["instance_name"] == exp.id and r["status"] == "feasible"
                   and reading_label(f, exp, r["params"].get("readings")) == default]
        if details and (details[0].get("metrics") or {}).get("_details") is not None:
            text = json.dumps(details[0]["metrics"]["_details"], indent=1, sort_keys=True, default=str)
            if len(text) > 6000:
                text = text[:6000] + "\n... (truncated; the full record is in the measurement store)"
            lines += [f"<details><summary>Details, default reading, seed {details[0]['seed']}</summary>", "",
                      "```json", text, "```", "", "</details>", ""]
        failed = [r for r in m.rows if r["instance_name"] == exp.id and r["status"] != "feasible"]
        if failed:
            lines += ["Failed measurements:", ""] + [
                f"- {format_params(r['params'].get('readings'))}, seed {r['seed']}: {r['status']}: {r['message']}"
                for r in failed] + [""]
    return "\n".join(lines) + "\n", csv_rows, pngs


def _plot_experiment(exp: Experiment, claims: Sequence[Claim], vals: Mapping[str, Mapping[str, list[tuple[int, Any]]]],
                     default: str, path: Path) -> bool:
    """One panel per claim: ours per reading (mean, min-max) against the paper's value and tolerance."""
    if not vals or not claims:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = sorted(vals, key=lambda x: (x != default, x))
    n = len(claims)
    fig, axes = plt.subplots(n, 1, figsize=(max(5.0, 0.9 * len(labels) + 3), 2.6 * n), layout="constrained",
                             squeeze=False)
    for ax, c in zip(axes[:, 0], claims):
        for i, label in enumerate(labels):
            got = [x for x in (_num(v) for _, v in vals[label].get(c.id, [])) if x is not None]
            if not got:
                continue
            mean = statistics.fmean(got)
            ax.errorbar([i], [mean], yerr=[[max(0.0, mean - min(got))], [max(0.0, max(got) - mean)]], fmt="o", capsize=4,
                        color="tab:blue" if label != default else "tab:red")
        ax.axhline(c.paper_value, color="black", lw=1, label="paper")
        if c.comparison == "approx" and c.tolerance > 0:
            ax.axhspan(c.paper_value - c.tolerance, c.paper_value + c.tolerance, color="grey", alpha=0.2)
        ax.set_xticks(range(len(labels)), [lb.replace(", ", "\n") for lb in labels], fontsize=7)
        ax.set_title(f"{c.id} [{c.unit}]", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def list_lines() -> list[str]:
    """``optkit reproduce list``: one line per claim, grouped by paper and experiment."""
    lines: list[str] = []
    known = experiments()
    for paper in sorted({e.paper for _, e in known.values()}):
        lines.append(f"{paper}:")
        for exp_id, (f, e) in sorted(known.items()):
            if e.paper != paper:
                continue
            readings = ", ".join(e.readings) or "none"
            lines.append(f"  {exp_id} ({f.name}; readings: {readings}): {e.summary}")
            for c in e.claims:
                lines.append(f"    {c.id:<40} {c.where}: paper {_fmt(c.paper_value, c.unit)} ({c.statistic})")
    return lines or ["(no claims registered)"]
