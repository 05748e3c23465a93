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

Each paper page opens with "A consistent reading" (:func:`consistent_reading`): claims may each
reproduce under a different reading, so the page names the ONE combination of readings (a value for
every reading of the paper's comparable claims) under which the most claims reproduce jointly,
among the combinations measured, how many out of how many comparable ones, and which claims no
combination reaches; with ``--readings each`` (one reading varied at a time) it says that it covers
only the combinations measured. :func:`plan` (``optkit reproduce ... --dry-run``) counts the
measurements a run would make and how many the store already holds, measuring nothing.

Plug-in algorithms (:mod:`optkit.registry`, entry point group ``optkit.algorithms``) join every
experiment that compares algorithms automatically: an experiment declaring ``series``
(:class:`optkit.claims.Experiment`) gets one more measurement per plug-in algorithm of its
problem, reading setting and seed (task ``EXPERIMENT:ALGORITHM``), and its page a table "Extra
series" beside the paper's algorithms, without a verdict. Automatic, because a researcher who
installs a plug-in wants it beside the paper's algorithms wherever they are compared, with
nothing to name; ``--no-plugins`` (``plugins=False``) measures the papers' algorithms only. The
plug-in's measurements are separate tasks: they never change, re-run or lose the claims' own.

A measurement's costly parts that one reading does not touch (a policy's run on a workload the
varied reading does not change) are computed once per store and reused by the other reading
settings, through the memo folder ``STORE.memo/`` beside the store (:mod:`optkit.memo`; emptied
by ``--rerun``, not used with ``--no-memo``/``memo=False``).
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
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
from optkit.validation import check_seeds

__all__ = [
    "DEFAULT_SEEDS", "experiments", "select", "reading_settings", "measurement_tasks", "reproduce",
    "Measurements", "write_pages", "list_lines", "claim_verdicts", "post_hoc_marks", "measurements_from_csv",
    "results_text", "update_results_blocks", "RESULTS_BEGIN", "RESULTS_END", "consistent_reading",
    "ConsistentReading", "consistent_lines", "plan", "PlanLine", "Curve", "curves_of", "reproducing_band",
    "curve_sentence",
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


def reading_settings(f: Formulation, exp: Experiment, spec: str | Mapping[str, Sequence[Any]] = "each",
                     scale: str | None = None) -> list[dict[str, Any]]:
    """The reading combinations to measure ``exp`` under.

    ``"each"`` (the default): the default reading, then every value of each reading with the
    others at their defaults (one reading varied at a time: 1 + sum of (values - 1) settings);
    ``"all"``: the full cross product of every reading of the experiment (can be large);
    ``"default"``: the defaults only; a mapping ``{name: [values]}``: the cross product of those
    values (other readings at their defaults; values are validated). The values of a reading are
    its curve's at ``scale`` (:attr:`optkit.claims.Experiment.curves`), else the experiment's
    ``sweep`` for it, else the reading's declared options.

    A curve is measured around the experiment's defaults; under ``"each"``, when a reading of the
    experiment cannot be measured at its default (its ``sweep`` leaves the default out, e.g. a claim
    measured on traces only), the curve is measured at each of that reading's values instead.
    """
    def values_of(name: str) -> Sequence[Any]:
        curve = exp.curve_values(name, scale)
        return curve if curve is not None else exp.sweep.get(name, f.reading(name).options)

    if spec == "each":
        defaults = {name: f.reading(name).default for name in exp.readings}
        out = [dict(defaults)]

        def add(setting: dict[str, Any]) -> None:
            if setting not in out:
                out.append(setting)

        own = [n for n in exp.readings if _is_local(f, exp, n)]
        for name in exp.readings:
            if own and exp.curve_values(name, scale) is not None:
                continue  # measured below, at the experiment's own readings' values only
            for v in values_of(name):
                add({**defaults, name: f.reading(name).validate(v, where=f"sweep {name}")})
        for name in exp.readings:
            curve = exp.curve_values(name, scale)
            if curve is None or not own:
                continue
            for combo in itertools.product(*(exp.sweep[n] for n in own if n != name)):
                base = {**defaults, **{n: f.reading(n).validate(v, where=f"sweep {n}")
                                       for n, v in zip([n for n in own if n != name], combo)}}
                for v in curve:
                    add({**base, name: f.reading(name).validate(v, where=f"curve {name}")})
        return out
    values: dict[str, list[Any]] = {}
    for name in exp.readings:
        r = f.reading(name)
        if spec == "all":
            values[name] = list(values_of(name))
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


def plugin_series(f: Formulation, exp: Experiment) -> list[str]:
    """The plug-in algorithms of ``f`` that ``exp`` measures as extra series (none without ``series``)."""
    if not exp.series:
        return []
    return [n for n, a in f.algorithms.items() if a.plugin and a.available()]


def measurement_tasks(f: Formulation, exp: Experiment, settings: Sequence[Mapping[str, Any]],
                      seeds: Sequence[int], scale: str, plugins: Sequence[str] = (), memo: str = "") -> list[Any]:
    """One harness task (kind ``measure``) per reading setting and seed, and one more per plug-in
    algorithm in ``plugins`` (the experiment's ``series`` function, instance name
    ``EXPERIMENT:ALGORITHM``); ``memo``: the store's memo folder (:mod:`optkit.memo`), or ``""``."""
    from optkit.harness.tasks import Task

    if scale not in SCALES:
        raise InputError("--scale", f"must be one of {', '.join(SCALES)}, got {scale!r}")
    unit = _Unit(f.name, exp.id, scale).data()
    h = instance_hash(unit)
    limit = float(exp.time_limit.get(scale, 3600.0))
    run_seeds = list(seeds) if exp.seeded else [0]
    tasks = [Task(problem=f.name, instance_name=exp.id, instance=unit, instance_hash=h, algorithm=exp.measure,
                  objective="claims", params={"readings": dict(s), "scale": scale}, seed=seed, time_limit=limit,
                  source=exp.paper, kind="measure", memo=memo)
             for s in settings for seed in run_seeds]
    tasks += [Task(problem=f.name, instance_name=f"{exp.id}:{name}", instance=unit, instance_hash=h,
                   algorithm=exp.series, objective="series", params={"readings": dict(s), "scale": scale, "algorithm": name},
                   seed=seed, time_limit=limit, source=exp.paper, kind="measure", memo=memo)
              for name in plugins for s in settings for seed in run_seeds]
    return tasks


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
    stored_defaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    """For measurements read back from CSVs: per experiment, the setting its pages called
    "default" when they were generated (:func:`measurements_from_csv`)."""
    combination_rows: list[dict[str, Any]] | None = None
    """The rows the consistent-reading search reads (:func:`consistent_reading`): every
    measurement the store holds of the selected experiments at this scale and these seeds, under
    any reading setting, so that a page whose tables show ``--readings each`` still searches the
    combinations an earlier ``--readings all`` run measured into the same store. ``None``:
    :attr:`rows`."""


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
    plugins: bool = True,
    scheduler: str | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    memo: bool = True,
) -> Measurements:
    """Measure the claims named by ``targets`` for every reading setting and seed.

    ``plugins``: also measure every plug-in algorithm as an extra series of each experiment that
    compares algorithms (module docstring).

    Measurements already in ``db`` are reused (a killed run resumes) unless ``rerun``; failed ones
    (``error``, ``time_limit``) are always measured again. ``scheduler`` (a Dask scheduler address,
    ``tcp://host:8786``) runs the measurements on that cluster instead of ``jobs`` local
    processes (connected before anything is measured; an unreachable one is an
    :class:`InputError`); each is stored the moment its row comes back, as locally.
    ``on_row`` is called with each new row after it is stored. ``memo``: reuse the costly parts a
    reading does not touch across the measurements of ``db`` (module docstring, :mod:`optkit.memo`;
    ``rerun`` empties the memo first).
    """
    import shutil
    import time

    from optkit import memo as memo_mod

    from optkit.harness.executors import make_executor
    from optkit.harness.store import ResultStore

    if scale not in SCALES:
        raise InputError("--scale", f"must be one of {', '.join(SCALES)}, got {scale!r}")
    seed_list = check_seeds(seeds, "--seeds") if seeds is not None else list(range(DEFAULT_SEEDS[scale]))
    selection = select(targets)
    memo_dir = ""
    if memo:
        folder = memo_mod.folder_for(db)
        if rerun:
            shutil.rmtree(folder, ignore_errors=True)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            memo_dir = str(folder.resolve())
        except OSError:
            pass  # no memo: every part computed (the store reports a folder that is not ours itself)
    tasks = []
    for f, exp, _ in selection:
        tasks += measurement_tasks(f, exp, reading_settings(f, exp, readings, scale), seed_list, scale,
                                   plugin_series(f, exp) if plugins else (), memo_dir)
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
            combos = _stored_combinations(store, selection, rows, scale, seed_list)
    finally:
        executor.close()
    for r in rows:
        if r["status"] != "feasible":
            line = (f"{r['instance_name']} {format_params(r['params'].get('readings'))} seed {r['seed']}: "
                    f"{r['status']}: {r['message']}")
            if line not in failures:
                failures.append(line)
    return Measurements(selection, rows, scale, seed_list, readings, time.perf_counter() - start, failures,
                        combination_rows=combos)


def _stored_combinations(store: Any, selection: Sequence[tuple[Formulation, Experiment, list[str]]],
                         rows: Sequence[dict[str, Any]], scale: str, seeds: Sequence[int]) -> list[dict[str, Any]]:
    """:attr:`Measurements.combination_rows`: ``rows``, then every other stored measurement of the
    selected experiments (their claims, not a plug-in's series) at ``scale`` and ``seeds``, one
    per (experiment, reading setting, seed): a setting ``rows`` holds keeps the row of ``rows``."""
    ids = {exp.id for _, exp, _ in selection}
    wanted = set(seeds)
    out: dict[tuple[str, str, Any], dict[str, Any]] = {}

    def key(r: Mapping[str, Any]) -> tuple[str, str, Any]:
        return r["instance_name"], json.dumps(r["params"].get("readings") or {}, sort_keys=True), r["seed"]

    for r in rows:
        out.setdefault(key(r), r)
    for problem in sorted({f.name for f, _, _ in selection}):
        for r in store.iter_rows(problem=problem):
            if (r["instance_name"] in ids and r["objective_name"] == "claims" and r["seed"] in wanted
                    and r["params"].get("scale") == scale):
                out.setdefault(key(r), r)
    return list(out.values())


@dataclass(frozen=True)
class PlanLine:
    """One experiment of a planned run (:func:`plan`): measurements planned, already stored (done),
    stored but failed (measured again), and missing."""

    experiment: str
    planned: int
    stored: int
    failed: int
    missing: int


def plan(targets: Sequence[str], *, seeds: Sequence[int] | None = None,
         readings: str | Mapping[str, Sequence[Any]] = "each", scale: str = "ci", db: str | Path | None = None,
         plugins: bool = True) -> list[PlanLine]:
    """What :func:`reproduce` with the same arguments would measure, without measuring
    (``optkit reproduce --dry-run``): per experiment, the measurements planned and how many of
    them ``db`` already holds (``None`` or a missing file: none). The store is only read."""
    import sqlite3

    from optkit.harness.store import FAILED_STATUSES

    if scale not in SCALES:
        raise InputError("--scale", f"must be one of {', '.join(SCALES)}, got {scale!r}")
    seed_list = list(seeds) if seeds is not None else list(range(DEFAULT_SEEDS[scale]))
    status: dict[str, str] = {}
    if db is not None and Path(db).is_file():
        try:
            con = sqlite3.connect(f"file:{Path(db).resolve()}?mode=ro", uri=True)
            try:
                status = dict(con.execute("SELECT key, status FROM rows").fetchall())
            finally:
                con.close()
        except sqlite3.DatabaseError as exc:
            raise InputError("--db", f"{db} is not an optkit result store (SQLite): {exc}") from None
    out = []
    for f, exp, _ in select(targets):
        tasks = measurement_tasks(f, exp, reading_settings(f, exp, readings, scale), seed_list, scale,
                                  plugin_series(f, exp) if plugins else ())
        stored = [status[t.key] for t in tasks if t.key in status]
        failed = sum(s in FAILED_STATUSES for s in stored)
        out.append(PlanLine(exp.id, len(tasks), len(stored) - failed, failed, len(tasks) - len(stored)))
    return out


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


POST_HOC_MARK = " †"
"""Appended to a reading label that sets a post-hoc reading (:attr:`optkit.readings.Reading.post_hoc`)
away from its default."""


def post_hoc_marks(f: Formulation, exp: Experiment, labels: Iterable[str]) -> dict[str, str]:
    """``{label: mark}`` for the labels that set a post-hoc reading away from its default."""
    post_hoc = {r.name for r in f.readings if r.post_hoc}
    out = {}
    for label in labels:
        names = {part.partition("=")[0] for part in label.split(", ")} if label != "default" else set()
        if names & post_hoc:
            out[label] = POST_HOC_MARK
    return out


def _ratio_only(exp: Experiment, c: Claim, label: str, per_claim: Mapping[str, Mapping[str, Verdict]]) -> list[str]:
    """The absolute claims of ratio claim ``c`` that do not reproduce under ``label``."""
    return [a for a in c.absolute if a in per_claim and label in per_claim[a]
            and per_claim[a][label].reproduces is False]


def claim_verdicts(m: Measurements, f: Formulation, exp: Experiment) -> dict[str, tuple[dict[str, Verdict], str]]:
    """``{claim id: ({reading label: Verdict}, overall sentence)}``. The sentence marks readings
    that set a post-hoc reading (:data:`POST_HOC_MARK`) and says where a ratio reproduces but the
    absolute values it is a ratio of do not (:attr:`optkit.claims.Claim.absolute`). For an
    experiment with curves (:attr:`optkit.claims.Experiment.curves`) it opens with the band of
    each curve (:func:`curve_sentence`), and the rest of the sentence covers the other readings
    (the curve's points away from the default are left to the band)."""
    vals = _values(m.rows, f, exp)
    labels = sorted(vals, key=lambda x: (x != "default", x))
    marks = post_hoc_marks(f, exp, labels)
    per_claim = {c.id: {label: verdict(c, [v for _, v in vals[label].get(c.id, [])], m.scale) for label in labels}
                 for c in exp.claims}
    curves = curves_of(m, f, exp)
    on_curve = {label for cv in curves for label in cv.labels_away}
    out = {}
    for c in exp.claims:
        per = per_claim[c.id]
        rest = {label: v for label, v in per.items() if label not in on_curve}
        overall = overall_verdict(rest, marks, c) if rest or not curves else ""
        bands = [] if c.incomparable else [curve_sentence(cv, c, m.scale) for cv in curves]
        if bands:
            overall = "; ".join(bands) + (f" — at the other readings: {overall}" if overall else "")
        ratio_only = [label for label, v in per.items() if v.reproduces and _ratio_only(exp, c, label, per_claim)]
        if ratio_only:
            overall += (f"; the ratio reproduces but the absolute values ({', '.join(c.absolute)}) do not under "
                        f"{'; '.join(label + marks.get(label, '') for label in ratio_only)}")
        if marks and POST_HOC_MARK in overall:
            overall += f" ({POST_HOC_MARK.strip()}: sets a post-hoc reading away from its default)"
        out[c.id] = (per, overall)
    return out


# ----------------------------------------------------------------------------- curves
@dataclass
class Curve:
    """The measurements of one curve (:attr:`optkit.claims.Experiment.curves`): reading ``name``
    varied with every other reading of the experiment at its default (or, for a reading the
    experiment cannot be measured at the default of, at the value named by ``group``).

    Attributes
    ----------
    name
        The swept reading.
    group
        The other readings away from their defaults (``format_params``), ``"default"`` if none.
    default
        The reading's default (the point the single-point tables use).
    points
        ``{x: rows}`` (feasible rows of the store at that value), x ascending.
    labels_away
        The reading labels of the points away from the default (left to the band in the overall
        sentence).
    """

    name: str
    group: str
    default: float
    points: dict[float, list[dict[str, Any]]]
    labels_away: set[str]

    def values(self, claim_id: str) -> dict[float, list[float | None]]:
        """Per x, the claim's value of every seed (``None`` where not measured)."""
        return {x: [(r.get("metrics") or {}).get(claim_id) for r in sorted(rows, key=lambda r: r["seed"])]
                for x, rows in self.points.items()}

    def diagnostics(self) -> dict[str, dict[float, list[float]]]:
        """``{name: {x: values over seeds}}`` of the rows' ``_diagnostics`` (numbers only)."""
        out: dict[str, dict[float, list[float]]] = {}
        for x, rows in self.points.items():
            for r in rows:
                diag = (r.get("metrics") or {}).get("_diagnostics") or {}
                for k, v in diag.items():
                    if _num(v) is not None:
                        out.setdefault(k, {}).setdefault(x, []).append(float(v))
        return out


def curves_of(m: Measurements, f: Formulation, exp: Experiment) -> list[Curve]:
    """The curves of ``exp`` in ``m`` (those with at least two values measured), in the order of
    the experiment's ``curves`` and then by group ("default" first)."""
    out: list[Curve] = []
    for name in exp.curves:
        default = float(f.reading(name).default)
        groups: dict[str, dict[float, list[dict[str, Any]]]] = {}
        away: dict[str, set[str]] = {}
        for r in m.rows:
            if r["instance_name"] != exp.id or r["status"] != "feasible":
                continue
            stored = r["params"].get("readings") or {}
            if set(stored) - set(exp.readings) or _num(stored.get(name, default)) is None:
                continue
            others = {k: stored.get(k, f.reading(k).default) for k in exp.readings if k != name}
            if any(not _same_value(v, f.reading(k).default) and not _is_local(f, exp, k) for k, v in others.items()):
                continue
            group = format_params({k: v for k, v in others.items() if not _same_value(v, f.reading(k).default)})
            x = float(stored.get(name, default))
            groups.setdefault(group, {}).setdefault(x, []).append(r)
            if x != default:
                away.setdefault(group, set()).add(reading_label(f, exp, stored))
        for group in sorted(groups, key=lambda g: (g != "-", g)):
            pts = groups[group]
            measured = any(_num((r.get("metrics") or {}).get(c.id)) is not None for rows in pts.values() for r in rows
                           for c in exp.claims)
            if len(pts) >= 2 and measured:
                out.append(Curve(name, "default" if group == "-" else group, default, dict(sorted(pts.items())),
                                 away.get(group, set())))
    return out


def reproducing_band(name: str, points: Sequence[tuple[float, bool | None]], *, verb: str = "reproduces") -> str:
    """The band of ``name`` where a claim reproduces, from ``(x, reproduces)`` per measured value
    (``None``: no verdict there): "reproduces for load in [0.4, 0.6]" (runs of consecutive measured
    values that reproduce, joined by "and"; a run of one value is written ``{x}``), "nowhere in
    [0.3, 1]" or, when every value reproduces, "... (every value measured)". The band's ends are
    measured values: between two measured values the claim is not known. ``""`` when no value has
    a verdict.

    Examples
    --------
    >>> reproducing_band("load", [(0.3, False), (0.4, True), (0.5, True), (0.6, False), (0.7, True)])
    'reproduces for load in [0.4, 0.5] and {0.7} (measured over [0.3, 0.7])'
    >>> reproducing_band("load", [(0.3, False), (1.0, False)])
    'nowhere in [0.3, 1]'
    """
    pts = sorted(points)
    if not pts or all(ok is None for _, ok in pts):
        return ""
    lo, hi = pts[0][0], pts[-1][0]
    runs: list[list[float]] = []
    prev = False
    for x, ok in pts:
        if ok:
            if prev:
                runs[-1].append(x)
            else:
                runs.append([x])
        prev = bool(ok)
    if not runs:
        return f"nowhere in [{lo:g}, {hi:g}]"
    parts = [f"[{r[0]:g}, {r[-1]:g}]" if len(r) > 1 else f"{{{r[0]:g}}}" for r in runs]
    if len(runs) == 1 and runs[0][0] == lo and runs[0][-1] == hi:
        return f"{verb} for {name} in {parts[0]} (every value measured)"
    return f"{verb} for {name} in {' and '.join(parts)} (measured over [{lo:g}, {hi:g}])"


def curve_sentence(cv: Curve, c: Claim, scale: str | None) -> str:
    """The band of claim ``c`` along curve ``cv`` as the page and index say it: "over `load`
    (swept): reproduces for load in [a, b]" (or "nowhere in [lo, hi]"); at a scale where ``c``
    has no verdict, where the mean lies within the tolerance at that scale, marked as such."""
    vals = cv.values(c.id)
    where = f"over `{cv.name}`" + (f" ({cv.group})" if cv.group != "default" else "")
    judged = [(x, verdict(c, v, scale).reproduces) for x, v in vals.items()]
    band = reproducing_band(cv.name, judged)
    if band:
        return f"{where}: {band}"
    loose = reproducing_band(cv.name, [(x, verdict(c, v, None).reproduces) for x, v in vals.items()],
                             verb="within the tolerance")
    if not loose:
        return f"{where}: not measured"
    why = verdict(c, next(iter(vals.values())), scale).text
    if loose.startswith("nowhere"):
        return f"{where}: {why}; at this scale the mean is within the tolerance {loose}"
    return f"{where}: {why}; at this scale the mean is {loose}"


def write_pages(m: Measurements, out_dir: str | Path) -> list[Path]:
    """One Markdown page, CSV and PNGs per paper, and ``index.md``; returns the files written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    by_paper: dict[str, list[tuple[Formulation, Experiment, list[str]]]] = {}
    for item in m.selection:
        by_paper.setdefault(item[1].paper, []).append(item)
    written: list[Path] = []
    # measurements read back from the pages' CSVs (benchmarks/results_index.py) carry no times
    timed = any(r.get("wall_time_s") is not None for r in m.rows)
    when = (f"{sum(r.get('wall_time_s') or 0 for r in m.rows):.0f} s of measurement time in all, "
            f"{m.elapsed_s:.0f} s of it in the run that wrote this page" if timed else
            "read from the papers' CSVs, which keep no measurement times")
    index = ["# Reproductions", "",
             f"Generated by `optkit reproduce` at scale `{m.scale}` with seeds {', '.join(map(str, m.seeds))} "
             f"({len(m.rows)} measurements, {when}). "
             "A claim reproduces under a reading when the mean over seeds lies within the claim's tolerance of "
             "the paper's value (bounds: when every seed satisfies the bound); tolerances follow the one rule of "
             "optkit/claims.py. \"Does not reproduce\" is said only when no reading measured reproduces it, and "
             "lists the readings it covered; claims measured by the paper on its testbed, other hardware, another "
             "solver or a trace we do not have are \"not comparable\". A reading label marked"
             f"{POST_HOC_MARK} sets a post-hoc reading away from its default. Readings measured: "
             + _mode_text(m.readings) + ".", "",
             "| paper | claim | where | paper | ours (default reading) | verdict over readings |",
             "|---|---|---|---:|---:|---|"]
    for paper, items in by_paper.items():
        page, csv_rows, pngs = _paper_page(m, paper, items, out)
        md = out / f"{_slug(paper)}.md"
        md.write_text(page)
        csv_path = out / f"{_slug(paper)}.csv"
        with csv_path.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["experiment", "claim", "reading", "readings", "seed", "value", "paper_value", "unit",
                        "statistic"])
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
             "A reading column names the readings that differ from their defaults (\"default\": none).", "",
             *consistent_lines(m, paper)]
    csv_rows: list[list[Any]] = []
    pngs: list[Path] = []
    for f, exp, claim_ids in items:
        vals = _values(m.rows, f, exp)
        settings = {reading_label(f, exp, r["params"].get("readings")): r["params"].get("readings") or {}
                    for r in m.rows if r["instance_name"] == exp.id}
        verdicts = claim_verdicts(m, f, exp)
        marks = post_hoc_marks(f, exp, vals)
        default = _default_label(f, exp)
        lines += [f"## {exp.id}: {exp.summary}", ""]
        if exp.notes:
            lines += [exp.notes, ""]
        if exp.readings:
            lines += ["Readings that matter here (default marked *; rule: the clause of the rule for defaults, "
                      "optkit/readings.py; post hoc: introduced after results were seen, and a reading label "
                      f"that sets one away from its default is marked{POST_HOC_MARK}):", "",
                      "| reading | values measured | default | rule | post hoc | passage | why the default |",
                      "|---|---|---|---|---|---|---|"]
            for name in exp.readings:
                r = f.reading(name)
                swept = _swept_values(name, (row["params"].get("readings", {}) for row in m.rows
                                             if row["instance_name"] == exp.id))
                lines.append(f"| `{name}` | {', '.join(swept)} | {show_value(r.default)} | {r.rule} | "
                             f"{'yes' if r.post_hoc else 'no'} | {r.passage} | {r.reason} |")
            lines.append("")
        for c in exp.claims:
            if c.id not in claim_ids:
                continue
            per, overall = verdicts[c.id]
            lines += [f"### `{c.id}` — {c.where}", "",
                      f"Paper: **{_fmt(c.paper_value, c.unit)}** ({c.statistic}; {c.comparison}, tolerance "
                      f"±{c.tolerance:g}{'' if c.unit in ('', 'ratio', 'count') else ' ' + c.unit} by the rule of "
                      f"optkit/claims.py). **Verdict: {overall}.**" + (f" {c.note}" if c.note else ""), ""]
            if per:
                per_all = {x.id: verdicts[x.id][0] for x in exp.claims}
                lines += ["| reading | ours: mean [min, max] | seeds | verdict |", "|---|---:|---:|---|"]
                for label in sorted(per, key=lambda x: (x != default, x)):
                    v = per[label]
                    star = " *" if label == default else ""
                    spread = f" [{_fmt(v.low)}, {_fmt(v.high)}]" if v.seeds > 1 else ""
                    text = v.text
                    missing = _ratio_only(exp, c, label, per_all) if v.reproduces else []
                    if missing:
                        text += f"; ratio only: {', '.join(missing)} do not reproduce under this reading"
                    lines.append(f"| {label}{star}{marks.get(label, '')} | {_fmt(v.mean, c.unit)}{spread} | "
                                 f"{v.seeds} | {text} |")
                lines.append("")
            for label, per_claim in vals.items():
                for seed, value in per_claim.get(c.id, []):
                    csv_rows.append([exp.id, c.id, label, json.dumps(settings[label], sort_keys=True,
                                                                     separators=(",", ":"), default=str),
                                     seed, "" if _num(value) is None else value, c.paper_value, c.unit, c.statistic])
        lines += _diagnostic_lines(m, f, exp)
        curve_lines, curve_pngs = _curve_lines(m, f, exp, [c for c in exp.claims if c.id in claim_ids], out)
        lines += curve_lines
        pngs += curve_pngs
        png = out / f"{_slug(paper)}_{_slug(exp.id)}.png"
        if _plot_experiment(exp, [c for c in exp.claims if c.id in claim_ids], vals, default, png):
            pngs.append(png)
            lines += [f"![{exp.id}]({png.name})", ""]
        axes_png = out / f"{_slug(paper)}_{_slug(exp.id)}_paper-axes.png"
        default_details = [r["metrics"]["_details"] for r in m.rows
                           if r["instance_name"] == exp.id and r["status"] == "feasible"
                           and reading_label(f, exp, r["params"].get("readings")) == default
                           and isinstance((r.get("metrics") or {}).get("_details"), dict)]
        axes_title = plot_paper_axes(exp, default_details, axes_png)
        if axes_title:
            pngs.append(axes_png)
            lines += [f"The paper's figure in its own axes, from our measurements (default reading, mean over "
                      f"{len(default_details)} seeds): {axes_title}.", "",
                      f"![{exp.id} paper axes]({axes_png.name})", ""]
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
        lines += _series_lines(m, f, exp)
        failed = [r for r in m.rows if r["instance_name"] == exp.id and r["status"] != "feasible"]
        if failed:
            lines += ["Failed measurements:", ""] + [
                f"- {format_params(r['params'].get('readings'))}, seed {r['seed']}: {r['status']}: {r['message']}"
                for r in failed] + [""]
    return "\n".join(lines) + "\n", csv_rows, pngs


def _diagnostic_lines(m: Measurements, f: Formulation, exp: Experiment) -> list[str]:
    """The page's table of what the measurements report beside their values (``_diagnostics``,
    :attr:`optkit.claims.Experiment.curves`), per reading label: mean [min, max] over seeds; none
    when no measurement reports any."""
    table: dict[str, dict[str, list[float]]] = {}
    for r in m.rows:
        if r["instance_name"] != exp.id or r["status"] != "feasible":
            continue
        diag = (r.get("metrics") or {}).get("_diagnostics") or {}
        label = reading_label(f, exp, r["params"].get("readings"))
        for k, v in diag.items():
            if _num(v) is not None:
                table.setdefault(label, {}).setdefault(k, []).append(float(v))
    if not table:
        return []
    names = list(dict.fromkeys(k for per in table.values() for k in per))
    default = _default_label(f, exp)
    lines = ["#### Beside each result", "",
             "What each measurement reports beside its claims' values (its `_diagnostics`), per reading: mean "
             "[min, max] over seeds.", "",
             "| reading | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for label in sorted(table, key=lambda x: (x != default, x)):
        cells = [_mean_spread(table[label].get(k, [])) for k in names]
        lines.append(f"| {label}{' *' if label == default else ''} | " + " | ".join(cells) + " |")
    return lines + [""]


def _mean_spread(got: Sequence[float]) -> str:
    """``mean [min, max]`` of ``got`` (``-`` when empty; no spread for one value)."""
    if not got:
        return "-"
    return f"{statistics.fmean(got):.4g}" + (f" [{min(got):.4g}, {max(got):.4g}]" if len(got) > 1 else "")


def _curve_lines(m: Measurements, f: Formulation, exp: Experiment, claims: Sequence[Claim],
                 out: Path) -> tuple[list[str], list[Path]]:
    """The page's section per curve of ``exp`` (:func:`curves_of`): what it is, the band of every
    comparable claim, a table of every point (each claim's mean [min, max] over seeds and the
    measurement's ``_diagnostics``) and a figure (one panel per comparable claim and diagnostic:
    ours against the curve's reading, the paper's value as a line, its tolerance shaded, the
    default marked)."""
    lines: list[str] = []
    pngs: list[Path] = []
    shown = [c for c in claims if not c.incomparable]
    for cv in curves_of(m, f, exp):
        if not shown:
            break
        r = f.reading(cv.name)
        title = f"### Curve over `{cv.name}`" + (f" ({cv.group})" if cv.group != "default" else "")
        lines += [title, "",
                  f"`{cv.name}`: {r.summary}. The paper does not state it (its rule: `{r.rule}`, optkit/readings.py): "
                  f"each claim is measured at every value below, the other readings at their defaults"
                  + (f" ({cv.group})" if cv.group != "default" else "")
                  + f"; the single-point tables above use {show_value(r.default)} (the default; its reason in the "
                  "readings table). A claim reproduces at a value when the mean over seeds there lies within its "
                  "tolerance; the band is read off the values measured.", ""]
        for c in shown:
            lines.append(f"- `{c.id}`: {curve_sentence(cv, c, m.scale)}.")
        lines.append("")
        diag = cv.diagnostics()
        head = [f"`{cv.name}`", *(f"`{c.id}`" for c in shown), *diag]
        lines += ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
        per_claim = {c.id: cv.values(c.id) for c in shown}
        for x in cv.points:
            cells = [f"{x:g}" + (" *" if x == cv.default else "")]
            for c in shown:
                v = verdict(c, per_claim[c.id][x], m.scale)
                spread = f" [{_fmt(v.low)}, {_fmt(v.high)}]" if v.seeds > 1 else ""
                tick = " ✓" if v.reproduces else ""
                cells.append(f"{_fmt(v.mean, c.unit)}{spread}{tick}" if v.mean is not None else "-")
            cells += [_mean_spread(diag[name].get(x, [])) for name in diag]
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", f"\\* the default. ✓: reproduces at that value (at scale {m.scale}). Columns after the claims: "
                  "what the measurement reports beside each point (its `_diagnostics`), mean [min, max] over seeds.", ""]
        suffix = "" if cv.group == "default" else "_" + _slug(cv.group)
        png = out / f"{_slug(exp.paper)}_{_slug(exp.id)}_curve-{_slug(cv.name)}{suffix}.png"
        if _plot_curve(exp, cv, shown, diag, m.scale, png):
            pngs.append(png)
            lines += [f"![{exp.id} over {cv.name}]({png.name})", ""]
    return lines, pngs


def _plot_curve(exp: Experiment, cv: Curve, claims: Sequence[Claim], diag: Mapping[str, Mapping[float, list[float]]],
                scale: str, path: Path) -> bool:
    """Draw curve ``cv``: one panel per claim (mean over seeds with min-max bars against the
    reading, the paper's value as a line, its tolerance shaded, the default dashed) and one per
    diagnostic."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels: list[tuple[str, dict[float, list[float]], Claim | None]] = []
    for c in claims:
        pts = {x: [float(v) for v in vs if _num(v) is not None] for x, vs in cv.values(c.id).items()}
        panels.append((f"{c.id} [{c.unit}]", {x: v for x, v in pts.items() if v}, c))
    panels += [(name, dict(pts), None) for name, pts in diag.items()]
    if not any(p for _, p, _ in panels):
        return False
    cols = 2 if len(panels) > 1 else 1
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 2.7 * rows), layout="constrained", squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, (title, pts, c) in zip(axes.flat, panels):
        xs = sorted(pts)
        means = [statistics.fmean(pts[x]) for x in xs]
        low = [m_ - min(pts[x]) for m_, x in zip(means, xs)]
        high = [max(pts[x]) - m_ for m_, x in zip(means, xs)]
        ax.errorbar(xs, means, yerr=[low, high], fmt="o-", capsize=3, color="tab:blue" if c else "tab:gray",
                    label="ours (mean, min-max over seeds)")
        if c is not None:
            ax.axhline(c.paper_value, color="black", lw=1, label="paper")
            if c.comparison == "approx" and c.tolerance > 0:
                ax.axhspan(c.paper_value - c.tolerance, c.paper_value + c.tolerance, color="grey", alpha=0.2)
            scale_y = max(abs(c.paper_value), c.tolerance, 1e-9)
            if means and max(means) - min(means) > 20 * scale_y:  # a collapse would flatten the paper's range
                ax.set_yscale("symlog", linthresh=2 * scale_y)
        ax.axvline(cv.default, color="tab:red", ls="--", lw=1, label="default")
        if xs and xs[0] > 0 and xs[-1] / xs[0] >= 16:  # a geometric range (a factor, a time budget)
            ax.set_xscale("log")
        ax.set_title(title, fontsize=8)
        ax.set_xlabel(cv.name, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize=6)
    fig.suptitle(f"{exp.id} over {cv.name}" + (f" ({cv.group})" if cv.group != "default" else "")
                 + f", scale {scale}", fontsize=9)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def _series_lines(m: Measurements, f: Formulation, exp: Experiment) -> list[str]:
    """The page's "Extra series" table of an experiment: per plug-in algorithm, reading and
    value, the mean [min, max] over seeds (no verdict: the paper claims nothing about it)."""
    prefix = exp.id + ":"
    rows = [r for r in m.rows if r["instance_name"].startswith(prefix)]
    if not rows:
        return []
    table: dict[tuple[str, str, str], list[float | None]] = {}
    failed: list[str] = []
    for r in rows:
        name = r["instance_name"][len(prefix):]
        label = reading_label(f, exp, r["params"].get("readings"))
        if r["status"] != "feasible":
            failed.append(f"- {name}, {label}, seed {r['seed']}: {r['status']}: {r['message']}")
            continue
        for key, value in (r.get("metrics") or {}).items():
            if not key.startswith("_"):
                table.setdefault((name, label, key), []).append(_num(value))
    lines = ["#### Extra series: plug-in algorithms", "",
             "Measured by the experiment's series function in the same setting; no verdict (the paper makes no "
             "claim about these algorithms).", "",
             "| algorithm | reading | value | mean [min, max] | seeds |", "|---|---|---|---:|---:|"]
    for (name, label, key), vals in sorted(table.items()):
        got = [v for v in vals if v is not None]
        mean = statistics.fmean(got) if got else None
        spread = f" [{_fmt(min(got))}, {_fmt(max(got))}]" if len(got) > 1 else ""
        lines.append(f"| {name} | {label} | {key} | {_fmt(mean)}{spread} | {len(got)} |")
    return lines + [""] + (["Failed extra-series measurements:", "", *failed, ""] if failed else [])


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


_X_AXES = {"jobs": "number of jobs", "single_gpu_share": "share of single-GPU jobs (%)",
           "gbps": "server NIC bandwidth (Gbps)"}
_CURVES = {"kappa": "kappa", "lambda": "lambda", "servers": "number of servers"}


Series = dict[str, list[tuple[float, float]]]
"""Named curves of (x, y) points."""


def paper_axes_series(details: Sequence[Mapping[str, Any]]) -> tuple[str, str, str, Series] | None:
    """The paper's figure of an experiment from its measurements' ``_details`` (one per seed):
    ``(title, x label, y label, {series: [(x, mean y over seeds)]})``, or ``None`` when the
    details have no shape a paper figure has. Recognised: ``cases`` with a swept ``jobs`` /
    ``single_gpu_share`` / ``gbps`` and every policy's ``runs`` (A-SRPT Figs. 6-8: total
    completion time per policy); ``kappa`` or ``lambda`` with one ``makespan`` curve, ``servers``
    with a curve per policy (SJF-BCO Figs. 5-7); ``policies`` with each one's ``makespan`` (SJF-BCO
    Fig. 4)."""
    if not details:
        return None
    acc: dict[str, dict[float, list[float]]] = {}

    def add(series: str, x: float, y: Any) -> None:
        if _num(y) is not None:
            acc.setdefault(series, {}).setdefault(float(x), []).append(float(y))

    first = details[0]
    cases = first.get("cases")
    key = next((k for k in _X_AXES if isinstance(cases, list) and cases and isinstance(cases[0], Mapping)
                and k in cases[0] and "runs" in cases[0]), None)
    if key is not None:
        for d in details:
            for case in d.get("cases", []):
                for policy, run in case["runs"].items():
                    x = 100 * case[key] if key == "single_gpu_share" else case[key]
                    add(policy, x, run.get("total_completion"))
        title, xlabel, ylabel = (f"total job completion time vs {_X_AXES[key]}", _X_AXES[key],
                                 "total completion time (s)")
    elif (ck := next((k for k in _CURVES if isinstance(first.get(k), list)), None)) and (
            isinstance(first.get("makespan"), list)
            or (isinstance(first.get("makespan"), Mapping)
                and all(isinstance(v, list) for v in first["makespan"].values()))):
        for d in details:
            curves = d["makespan"] if isinstance(d["makespan"], Mapping) else {"sjf-bco": d["makespan"]}
            for policy, ys in curves.items():
                for x, y in zip(d[ck], ys):
                    add(policy, x, y)
        title, xlabel, ylabel = f"makespan vs {_CURVES[ck]}", _CURVES[ck], "makespan (slots)"
    elif isinstance(first.get("policies"), Mapping) and all(isinstance(v, Mapping) and "makespan" in v
                                                             for v in first["policies"].values()):
        for d in details:
            for i, (policy, run) in enumerate(sorted(d["policies"].items())):
                add(policy, i, run.get("makespan"))
        title, xlabel, ylabel = "makespan per policy", "policy", "makespan (slots)"
    else:
        return None
    if not acc:
        return None
    return title, xlabel, ylabel, {s: sorted((x, statistics.fmean(ys)) for x, ys in pts.items())
                                   for s, pts in sorted(acc.items())}


def plot_paper_axes(exp: Experiment, details: Sequence[Mapping[str, Any]], path: Path) -> str:
    """Draw :func:`paper_axes_series` of ``details`` to ``path``; returns its title ("" when the
    experiment has no figure of that kind)."""
    got = paper_axes_series(details)
    if got is None:
        return ""
    title, xlabel, ylabel, series = got
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 3.6), layout="constrained")
    if xlabel == "policy":
        names = list(series)
        ax.bar(range(len(names)), [series[n][0][1] for n in names], color="tab:blue")
        ax.set_xticks(range(len(names)), names)
    else:
        for name, pts in series.items():
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=name)
        ax.legend(fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(f"{exp.id}: {title}", fontsize=9)
    ax.grid(alpha=0.3)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return title


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
                lines.append(f"    {c.id:<40} {c.where}: paper {_fmt(c.paper_value, c.unit)} ({c.statistic})"
                             + (f" [not comparable: {c.incomparable.split(':')[0]}]" if c.incomparable else ""))
    return lines or ["(no claims registered)"]


# ----------------------------------------------------------------------------- results text
RESULTS_BEGIN = "<!-- results:begin {key} -->"
RESULTS_END = "<!-- results:end {key} -->"
_PAPER_TITLES = {"a-srpt": "A-SRPT", "titan": "Titan", "sjf-bco": "SJF-BCO"}


def measurements_from_csv(folder: str | Path, papers: Sequence[str] | None = None) -> Measurements:
    """The stored measurements of the committed pages: every ``PAPER.csv`` in ``folder`` read back
    into :class:`Measurements` (one row per experiment, reading setting and seed), with every
    registered experiment of those papers selected (an experiment without rows, such as the
    testbed's, has no measurement). Labels are recomputed against today's defaults from each row's
    full setting (column ``readings``), so a changed default shows; ``stored_defaults`` keeps the
    setting each experiment's pages called "default" when they were generated."""
    base = Path(folder)
    known = experiments()
    wanted = list(papers) if papers is not None else sorted(
        {e.paper for _, e in known.values() if (base / f"{_slug(e.paper)}.csv").exists()})
    rows: dict[tuple[str, str, int], dict[str, Any]] = {}
    stored: dict[str, dict[str, Any]] = {}
    seeds: set[int] = set()
    for paper in wanted:
        path = base / f"{_slug(paper)}.csv"
        if not path.exists():
            raise InputError("--out", f"{path} is missing: run optkit reproduce {paper} first")
        with path.open(newline="") as fh:
            for r in csv.DictReader(fh):
                if "readings" not in r:
                    raise InputError(str(path), "has no 'readings' column (a page older than the column)")
                setting = json.loads(r["readings"])
                seed = int(r["seed"])
                seeds.add(seed)
                key = (r["experiment"], r["readings"], seed)
                row = rows.setdefault(key, {"instance_name": r["experiment"], "status": "feasible", "seed": seed,
                                            "params": {"readings": setting}, "metrics": {}, "wall_time_s": None})
                row["metrics"][r["claim"]] = float(r["value"]) if r["value"] != "" else None
                if r["reading"] == "default":
                    stored[r["experiment"]] = setting
    selection = [(f, e, [c.id for c in e.claims]) for _, (f, e) in sorted(known.items()) if e.paper in wanted]
    order = {p: i for i, p in enumerate(wanted)}
    selection.sort(key=lambda x: (order[x[1].paper], x[1].id))
    return Measurements(selection, list(rows.values()), "paper", sorted(seeds), stored_defaults=stored)


def _changed_defaults(m: Measurements, f: Formulation, exp: Experiment) -> list[str]:
    """``name: stored -> today`` for each reading whose default differs from the one the stored
    pages were generated under."""
    stored = m.stored_defaults.get(exp.id)
    if stored is None:
        return []
    out = []
    for name in exp.readings:
        now = f.reading(name).default
        if name in stored and not _same_value(stored[name], now):
            out.append(f"`{name}` {show_value(stored[name])} → {show_value(now)}")
        elif name not in stored:
            out.append(f"`{name}` (declared since) → {show_value(now)}")
    return out


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return bool(a == b)


def results_text(m: Measurements, key: str = "all", *, pages: str = "benchmarks/results") -> str:
    """The generated results text for ``key``: ``"all"`` (README's Results section: every paper)
    or a problem name (that formulation's claims), from the stored measurements ``m`` and the
    registered claims. ``pages`` is the path from the text's file to the result pages."""
    items = [(f, e, ids) for f, e, ids in m.selection if key == "all" or f.name == key]
    if not items:
        raise InputError("results", f"no claims of {key!r} among the stored measurements")
    out: list[str] = []
    for paper in dict.fromkeys(e.paper for _, e, _ in items):
        rows: list[str] = []
        counts = {"reproduce under today's defaults": 0, "reproduce only under another reading": 0,
                  "do not reproduce under any reading measured": 0, "not comparable": 0,
                  "not measured under today's defaults": 0}
        changed: list[str] = []
        unmeasured_default: list[str] = []
        for f, exp, ids in items:
            if exp.paper != paper:
                continue
            verdicts = claim_verdicts(m, f, exp)
            has_rows = any(r["instance_name"] == exp.id for r in m.rows)
            moved = _changed_defaults(m, f, exp)
            if moved:
                changed.append(f"`{exp.id}`: {', '.join(moved)}")
            for c in exp.claims:
                per, overall = verdicts[c.id]
                d = per.get("default")
                if c.incomparable:
                    counts["not comparable"] += 1
                elif d is None or d.reproduces is None:
                    counts["not measured under today's defaults"] += 1
                    if has_rows and exp.id not in unmeasured_default:
                        unmeasured_default.append(exp.id)
                elif d.reproduces:
                    counts["reproduce under today's defaults"] += 1
                elif any(v.reproduces for v in per.values()):
                    counts["reproduce only under another reading"] += 1
                else:
                    counts["do not reproduce under any reading measured"] += 1
                ours = "-" if d is None or d.mean is None else _fmt(d.mean, c.unit) + (
                    f" [{_fmt(d.low)}, {_fmt(d.high)}]" if d.seeds > 1 else "")
                if d is None and has_rows:
                    ours = "not measured under today's defaults"
                rows.append(f"| `{c.id}` | {c.where} | {_fmt(c.paper_value, c.unit)} | ±{c.tolerance:.3g} | {ours} | "
                            f"{overall.replace('|', '/')} |")
        total = sum(counts.values())
        title = _PAPER_TITLES.get(paper, paper)
        out += [f"**{title}** ([page]({pages}/{_slug(paper)}.md), [CSV]({pages}/{_slug(paper)}.csv)): "
                f"{total} claims registered; " + "; ".join(f"{n} {k}" for k, n in counts.items() if n) + ".", ""]
        if changed:
            out += [f"Defaults changed since these measurements were made (each reading's reason and history say "
                    f"why; the stored rows keep the values they were measured under): {'; '.join(changed)}. "
                    + (f"Not measured under today's defaults, to re-run at paper scale: "
                       f"{', '.join(f'`{x}`' for x in unmeasured_default)}." if unmeasured_default else ""), ""]
        out += ["| claim | where | paper | tolerance | ours, today's defaults: mean [min, max] | verdict over the "
                "readings measured |", "|---|---|---:|---:|---:|---|", *rows, ""]
    marks = "† marks a reading label that sets a post-hoc reading (introduced after results were seen) away from " \
            "its default."
    return "\n".join([*out, marks]).rstrip() + "\n"


def update_results_blocks(path: str | Path, texts: Callable[[str], str], *, check: bool = False) -> bool:
    """Replace every ``<!-- results:begin KEY -->`` ... ``<!-- results:end KEY -->`` block of
    ``path`` with ``texts(KEY)``; with ``check``, write nothing. Returns whether the file differs
    from the generated text (the blocks' contents only)."""
    p = Path(path)
    text = p.read_text()
    pattern = re.compile(r"(<!-- results:begin (?P<key>[\w-]+) -->\n)(?P<body>.*?)(<!-- results:end (?P=key) -->)",
                         re.S)
    if not pattern.search(text):
        raise InputError(str(p), "has no <!-- results:begin KEY --> ... <!-- results:end KEY --> block")
    new = pattern.sub(lambda mo: mo.group(1) + texts(mo.group("key")) + mo.group(4), text)
    if new != text and not check:
        p.write_text(new)
    return new != text


# ----------------------------------------------------------------------------- a consistent reading
_TIE_CAP = 100_000
"""Most tied best combinations compared by name; beyond it each independent group of experiments
takes its own first label (:func:`consistent_reading`)."""


@dataclass(frozen=True)
class ConsistentReading:
    """The one reading combination of a paper under which the most claims reproduce jointly
    (:func:`consistent_reading`).

    Attributes
    ----------
    paper
        The paper.
    readings
        The combination: a value for every reading the counted claims' experiments depend
        on (``{}`` when there is none, e.g. no reading matters or no combination was measured). A
        reading an experiment cannot be measured at the default of (its ``sweep`` leaves the
        default out) is that experiment's own: ``NAME@EXPERIMENT``.
    label
        Its readings away from their defaults and the experiments' own readings
        (``format_params``), ``"default"`` if none.
    distance
        How many (shared) readings are away from their defaults.
    counted
        The comparable claims with a verdict in the measurements, in page order.
    reproduced
        Those that reproduce under the combination.
    unreached
        Counted claims that reproduce under no combination measured.
    alone
        Of ``unreached``, those that reproduce under a reading of their own experiment that no
        combination measured for the paper's other experiments extends (``--readings each``).
    lost
        Counted claims some combination reproduces but this one does not.
    not_comparable
        ``(claim id, reason)`` of the incomparable claims (left out of the count).
    no_verdict
        ``(claim id, why)`` of the claims without any verdict here (a scale at which they
        are not comparable, nothing measured; left out of the count).
    combinations
        How many combinations were measured (searched).
    ties
        How many combinations reproduce as many claims at the same distance (the chosen one
        included).
    partial
        Experiments whose readings were not all crossed in the measurements.
    per_claim
        ``{claim id: (its experiment's reading label under the combination, Verdict)}``
        for the counted claims.
    unmeasured
        Experiments (with counted claims) that share readings but have no combination
        measured jointly; non-empty means no combination exists (``readings`` is ``{}``).
    """

    paper: str
    readings: dict[str, Any]
    label: str
    distance: int
    counted: list[str]
    reproduced: list[str]
    unreached: list[str]
    alone: list[str]
    lost: list[str]
    not_comparable: list[tuple[str, str]]
    no_verdict: list[tuple[str, str]]
    combinations: int
    ties: int
    partial: list[str]
    per_claim: dict[str, tuple[str, Verdict]]
    unmeasured: list[str] = field(default_factory=list)


@dataclass
class _Relation:
    """The measured reading settings of one experiment, as canonical value tuples."""

    exp: Experiment
    f: Formulation
    names: tuple[str, ...]
    rows: dict[tuple[str, ...], tuple[str, dict[str, Any], frozenset[str]]]
    """``{canonical values: (label, setting, ids of the counted claims reproducing under it)}``."""


def _relations(m: Measurements, paper: str) -> tuple[list[_Relation], list[str], list[tuple[str, str]],
                                                     list[tuple[str, str]], dict[str, dict[str, Verdict]]]:
    """The experiments of ``paper`` with counted claims, as relations; the counted claim ids; the
    incomparable and verdict-less ones; and every counted claim's verdict per reading label."""
    relations: list[_Relation] = []
    counted: list[str] = []
    not_comparable: list[tuple[str, str]] = []
    no_verdict: list[tuple[str, str]] = []
    per_label: dict[str, dict[str, Verdict]] = {}
    for f, exp, claim_ids in m.selection:
        if exp.paper != paper:
            continue
        verdicts = claim_verdicts(m, f, exp)
        mine: list[str] = []
        for c in exp.claims:
            if c.id not in claim_ids:
                continue
            per, overall = verdicts[c.id]
            if c.incomparable:
                not_comparable.append((c.id, c.incomparable))
            elif not any(v.reproduces is not None for v in per.values()):
                no_verdict.append((c.id, overall))
            else:
                mine.append(c.id)
                per_label[c.id] = per
        if not mine:
            continue
        counted += mine
        base = tuple(exp.readings)
        names = tuple(_local_name(n, exp) if _is_local(f, exp, n) else n for n in base)
        rows: dict[tuple[str, ...], tuple[str, dict[str, Any], frozenset[str]]] = {}
        for r in m.rows:
            if r["instance_name"] != exp.id or r["status"] != "feasible":
                continue
            stored = r["params"].get("readings") or {}
            if set(stored) - set(base):
                continue  # measured under readings this experiment no longer declares
            setting = {n: stored.get(b, f.reading(b).default) for n, b in zip(names, base)}
            key = tuple(show_value(setting[n]) for n in names)
            if key not in rows:
                label = reading_label(f, exp, stored)
                rows[key] = (label, setting, frozenset(c for c in mine if per_label[c].get(label) is not None
                                                       and per_label[c][label].reproduces))
        relations.append(_Relation(exp, f, names, rows))
    return relations, counted, not_comparable, no_verdict, per_label


def _is_local(f: Formulation, exp: Experiment, name: str) -> bool:
    """Whether reading ``name`` is ``exp``'s own in a combination: the experiment's ``sweep``
    leaves out the reading's default (it cannot be measured there, e.g. a prediction measured on
    traces only), so its value is a property of the experiment, not a reading it shares."""
    default = show_value(f.reading(name).default)
    return name in exp.sweep and all(show_value(v) != default for v in exp.sweep[name])


def _local_name(name: str, exp: Experiment) -> str:
    return f"{name}@{exp.id}"


def _base_name(name: str) -> str:
    return name.partition("@")[0]


def _components(relations: Sequence[_Relation]) -> list[list[_Relation]]:
    """Groups of experiments linked by shared readings (independent of each other)."""
    groups: list[list[_Relation]] = []
    for rel in relations:
        linked = [g for g in groups if any(set(rel.names) & set(o.names) for o in g)]
        merged = [rel] + [o for g in linked for o in g]
        groups = [g for g in groups if all(g is not x for x in linked)] + [merged]
    return [sorted(g, key=lambda r: r.exp.id) for g in groups]


class _Join:
    """The combinations measured for one group of experiments: the join of their measured
    settings on shared readings, searched by dynamic programming over the experiments in a fixed
    order (the state: the values of the readings that earlier and later experiments share)."""

    def __init__(self, rels: Sequence[_Relation], defaults: Mapping[str, str], first: _Relation | None = None):
        todo = list(range(len(rels)))
        order: list[_Relation] = []
        start = next(i for i, r in enumerate(rels) if r is first) if first is not None else max(
            todo, key=lambda i: (len(rels[i].names), -i))
        while todo:
            seen = {n for o in order for n in o.names}
            nxt = start if not order else max(todo, key=lambda i: (len(seen & set(rels[i].names)), len(rels[i].names),
                                                                   -i))
            order.append(rels[nxt])
            todo.remove(nxt)
        self.order = order
        self.defaults = defaults
        self.before: list[set[str]] = []
        self.frontier: list[tuple[str, ...]] = []
        self.index: list[dict[tuple[str, ...], list[tuple[str, ...]]]] = []
        seen: set[str] = set()
        for i, rel in enumerate(order):
            later = {n for o in order[i:] for n in o.names}
            self.frontier.append(tuple(sorted(seen & later)))
            shared = tuple(n for n in rel.names if n in seen)
            idx: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
            for key in sorted(rel.rows, key=lambda k: rel.rows[k][0]):
                idx.setdefault(tuple(key[rel.names.index(n)] for n in shared), []).append(key)
            self.before.append(set(seen))
            self.index.append(idx)
            seen |= set(rel.names)
        self.frontier.append(())
        self._best: dict[tuple[int, tuple[str, ...]], tuple[int, int] | None] = {}
        self._count: dict[tuple[int, tuple[str, ...]], int] = {}

    def _step(self, i: int, state: Mapping[str, str], key: tuple[str, ...]) -> tuple[dict[str, str], int, int]:
        rel = self.order[i]
        values = dict(zip(rel.names, key))
        new = {n: v for n, v in values.items() if n not in self.before[i]}
        full = {**state, **values}
        nxt = {n: full[n] for n in self.frontier[i + 1]}
        return nxt, len(rel.rows[key][2]), sum(v != self.defaults[n] for n, v in new.items() if "@" not in n)

    def _candidates(self, i: int, state: Mapping[str, str]) -> list[tuple[str, ...]]:
        rel = self.order[i]
        return self.index[i].get(tuple(state[n] for n in rel.names if n in self.before[i]), [])

    def best(self, i: int = 0, state: Mapping[str, str] | None = None) -> tuple[int, int] | None:
        """``(claims reproduced, -distance)`` of the best completion from experiment ``i`` on."""
        state = state or {}
        if i == len(self.order):
            return (0, 0)
        memo = (i, tuple(state[n] for n in self.frontier[i]))
        if memo not in self._best:
            out = None
            for key in self._candidates(i, state):
                nxt, score, dist = self._step(i, state, key)
                rest = self.best(i + 1, nxt)
                if rest is not None:
                    value = (score + rest[0], rest[1] - dist)
                    out = value if out is None or value > out else out
            self._best[memo] = out
        return self._best[memo]

    def count(self, i: int = 0, state: Mapping[str, str] | None = None) -> int:
        """How many combinations complete ``state`` from experiment ``i`` on."""
        state = state or {}
        if i == len(self.order):
            return 1
        memo = (i, tuple(state[n] for n in self.frontier[i]))
        if memo not in self._count:
            self._count[memo] = sum(self.count(i + 1, self._step(i, state, key)[0])
                                    for key in self._candidates(i, state))
        return self._count[memo]

    def optima(self, cap: int) -> list[dict[str, str]]:
        """The best combinations (all tied ones, at most ``cap``), as ``{reading: canonical value}``."""
        target = self.best()
        found: list[dict[str, str]] = []
        if target is None:
            return found

        def walk(i: int, state: dict[str, str], acc: tuple[int, int], chosen: dict[str, str]) -> None:
            if len(found) >= cap:
                return
            if i == len(self.order):
                found.append(dict(chosen))
                return
            rel = self.order[i]
            for key in self._candidates(i, state):
                nxt, score, dist = self._step(i, state, key)
                rest = self.best(i + 1, nxt)
                if rest is not None and (acc[0] + score + rest[0], acc[1] - dist + rest[1]) == target:
                    walk(i + 1, nxt, (acc[0] + score, acc[1] - dist), {**chosen, **dict(zip(rel.names, key))})

        walk(0, {}, (0, 0), {})
        return found

    def extendable(self) -> set[tuple[str, ...]]:
        """The settings of the first experiment that some combination of the group contains."""
        return {key for key in self.index[0].get((), []) if self.best(1, self._step(0, {}, key)[0]) is not None}


def consistent_reading(m: Measurements, paper: str) -> ConsistentReading:
    """The one combination of readings under which the most of ``paper``'s claims reproduce jointly.

    A combination gives every reading the paper's counted claims depend on a value; it is
    *measured* when, for every experiment, its values of that experiment's readings
    (:attr:`~optkit.claims.Experiment.readings`) are a setting stored in ``m`` (in
    :attr:`Measurements.combination_rows` when it is set: every setting the store holds, so a
    page of ``--readings each`` searches what an earlier ``--readings all`` run measured). A claim counts
    for a combination when its verdict under that setting reproduces (:func:`claim_verdicts`:
    the page's verdict over the seeds stored). Counted are the comparable claims with a verdict
    in ``m``; incomparable ones and those without any verdict (another scale, nothing measured)
    are left out and listed. The best combination reproduces the most claims; ties go to the
    fewest readings away from their defaults, then to the first label (``format_params`` of
    those readings) in text order.

    Decisions: a stored setting that failed (time limit, error) is not measured, so a
    combination that needs it is not searched; a claim whose value is missing under a measured
    setting does not reproduce there. Experiments that share no reading are independent: each
    group of linked experiments is searched alone (dynamic programming over its experiments,
    exact), and the best combination is the union of each group's best; when more than
    ``_TIE_CAP`` tied combinations would have to be compared by label, each group takes its own
    first label. A reading's values are compared as :func:`optkit.readings.show_value` shows
    them (10 and 10.0 are one value). A reading whose values an experiment's ``sweep`` restricts
    to ones without the reading's default (A-SRPT's prediction, measured on traces only, never on
    the synthetic ``workload`` the others use) is that experiment's own (``workload@EXPERIMENT``):
    chosen for it alone, not counted in the distance; otherwise no combination could hold both.
    """
    if m.combination_rows is not None:
        m = dataclasses.replace(m, rows=m.combination_rows, combination_rows=None)
    relations, counted, not_comparable, no_verdict, per_label = _relations(m, paper)
    defaults = {n: "" if "@" in n else show_value(rel.f.reading(n).default) for rel in relations for n in rel.names}
    joins = [_Join(g, defaults) for g in _components(relations)]
    unmeasured = [rel.exp.id for j in joins if j.best() is None for rel in j.order]
    partial = []
    for rel in relations:
        distinct = [len({k[i] for k in rel.rows}) for i in range(len(rel.names))]
        if math.prod(distinct) > len(rel.rows):
            partial.append(rel.exp.id)
    reached: set[str] = set()
    alone: set[str] = set()
    for j in joins:
        for rel in j.order:
            solo = _Join(j.order, defaults, first=rel)
            ok = solo.extendable()
            for key, (_, _, yes) in rel.rows.items():
                (reached if key in ok else alone).update(yes)
    alone -= reached
    chosen: dict[str, str] = {}
    ties = 1
    combinations = math.prod(j.count() for j in joins) if not unmeasured else 0
    if not unmeasured:
        options = [j.optima(_TIE_CAP) for j in joins]
        ties = math.prod(len(o) for o in options)
        values = _original_values(relations)

        def label_of(canon: Mapping[str, str]) -> str:
            return format_params({n: values[n, v] for n, v in canon.items() if "@" in n or v != defaults[n]})

        if ties <= _TIE_CAP:
            import itertools

            best = min(itertools.product(*options), key=lambda combo: label_of({k: v for c in combo
                                                                               for k, v in c.items()}))
            chosen = {k: v for c in best for k, v in c.items()}
        else:
            chosen = {k: v for o in options for k, v in min(o, key=label_of).items()}
    values = _original_values(relations)
    readings = {n: values[n, v] for n, v in sorted(chosen.items())}
    away = {n: v for n, v in readings.items() if "@" not in n and chosen[n] != defaults[n]}
    own = {n: v for n, v in readings.items() if "@" in n}
    per_claim: dict[str, tuple[str, Verdict]] = {}
    reproduced: list[str] = []
    if not unmeasured:
        for rel in relations:
            label, _, yes = rel.rows[tuple(chosen[n] for n in rel.names)]
            for c in rel.exp.claims:
                if c.id in per_label and label in per_label[c.id]:
                    per_claim[c.id] = (label, per_label[c.id][label])
                    if c.id in yes:
                        reproduced.append(c.id)
    unreached = [c for c in counted if c not in reached]
    return ConsistentReading(
        paper=paper, readings=readings, label=format_params({**away, **own}) if away or own else "default",
        distance=len(away),
        counted=counted, reproduced=reproduced, unreached=unreached, alone=[c for c in unreached if c in alone],
        lost=[c for c in counted if c in reached and c not in reproduced], not_comparable=not_comparable,
        no_verdict=no_verdict, combinations=combinations, ties=0 if unmeasured else ties,
        partial=partial, per_claim=per_claim, unmeasured=unmeasured)


def _original_values(relations: Sequence[_Relation]) -> dict[tuple[str, str], Any]:
    """``{(reading, canonical value): a stored value}``: to show a canonical value as measured."""
    out: dict[tuple[str, str], Any] = {}
    for rel in relations:
        for key, (_, setting, _) in rel.rows.items():
            for n, v in zip(rel.names, key):
                out.setdefault((n, v), setting[n])
    return out


def _ids(ids: Iterable[str]) -> str:
    return ", ".join(f"`{i}`" for i in ids)


def consistent_lines(m: Measurements, paper: str) -> list[str]:
    """The page's section "A consistent reading" (:func:`consistent_reading`) for ``paper``."""
    cr = consistent_reading(m, paper)
    lines = ["## A consistent reading", "",
             "Different claims may reproduce under different readings. This section takes the one combination of "
             "readings (a value for every reading the paper's comparable claims depend on) under which the most "
             "claims reproduce jointly: a claim counts when its verdict under the combination's values of its own "
             "experiment's readings reproduces (the verdict rule of this page, over the seeds measured). Ties go to "
             "the combination with the fewest readings away from their defaults, then to the first label in text "
             "order. Searched: every combination measured, i.e. whose values of each experiment's readings were "
             "measured for that experiment.", ""]
    if not cr.counted:
        return lines + ["No comparable claim has a verdict in these measurements: nothing to combine.", "",
                        *_left_out(cr)]
    n, k = len(cr.counted), len(cr.reproduced)
    if cr.unmeasured:
        lines += [f"No combination was measured: experiments {_ids(cr.unmeasured)} share readings, and no setting of "
                  "those readings was measured for all of them (`--readings all` measures every combination).", ""]
        return lines + _left_out(cr)
    by_name = {r.name: r for f, e, _ in m.selection if e.paper == paper for r in f.readings}
    changed = {name for name, value in cr.readings.items()
               if show_value(value) != show_value(by_name[_base_name(name)].default)}
    mark = POST_HOC_MARK if any(by_name[_base_name(name)].post_hoc for name in changed) else ""
    away = "no reading" if cr.distance == 0 else ("1 reading" if cr.distance == 1 else f"{cr.distance} readings")
    others = cr.ties - 1
    lines += [f"**{k} of {n} comparable claims reproduce jointly** under `{cr.label}`{mark} ({away} away from the "
              f"defaults; {cr.combinations} combination{'s' if cr.combinations != 1 else ''} measured"
              + (f"; {others} other combination{'s' if others != 1 else ''} reproduce{'s' if others == 1 else ''} "
                 f"as many claims at the same distance" if others > 0 else "") + ").", ""]
    if cr.readings:
        lines += ["| reading | value | default | post hoc |", "|---|---|---|---|"]
        for name, value in cr.readings.items():
            r = by_name[_base_name(name)]
            shown = show_value(value)
            where = f"`{r.name}` ({name.partition('@')[2]} only: not measurable at the default)" if "@" in name \
                else f"`{name}`"
            lines.append(f"| {where} | {'**' + shown + '**' if name in changed else shown} | {show_value(r.default)} | "
                         f"{'yes' if r.post_hoc else 'no'} |")
        lines.append("")
    lines += ["| claim | its experiment's reading | verdict under this combination | reproduces under some "
              "combination |", "|---|---|---|---|"]
    for cid in cr.counted:
        label, v = cr.per_claim.get(cid, ("-", None))
        some = "no" if cid in cr.unreached else "yes"
        lines.append(f"| `{cid}` | {label} | {v.text if v is not None else 'not measured'} | {some} |")
    lines.append("")
    if cr.unreached:
        lines += [f"No combination reaches: {_ids(cr.unreached)}."
                  + (f" Of these, {_ids(cr.alone)} reproduce under a reading of their own experiment that no "
                     "combination measured extends to the other experiments." if cr.alone else ""), ""]
    else:
        lines += ["Every counted claim reproduces under some combination.", ""]
    if cr.lost:
        lines += [f"Reproduce under another combination but not this one: {_ids(cr.lost)}.", ""]
    if cr.partial:
        lines += [f"The readings of {_ids(cr.partial)} were not all crossed (`--readings each` varies one reading at "
                  "a time): this section covers only the combinations measured; `optkit reproduce "
                  f"{paper} --readings all` crosses them.", ""]
    return lines + _left_out(cr)


def _left_out(cr: ConsistentReading) -> list[str]:
    out = []
    if cr.not_comparable:
        out += [f"Left out of the count, not comparable: "
                + "; ".join(f"`{c}` ({why.split(':')[0]})" for c, why in cr.not_comparable) + ".", ""]
    if cr.no_verdict:
        out += [f"Left out of the count, no verdict in these measurements: "
                + "; ".join(f"`{c}` ({why})" for c, why in cr.no_verdict) + ".", ""]
    return out
