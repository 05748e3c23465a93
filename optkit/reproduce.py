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

The work is split by layer, each module importing only those above it in this list:
:mod:`optkit.reproduce_measurements` (the experiments and their stored measurements),
:mod:`optkit.reproduce_verdicts` (verdicts and curves), :mod:`optkit.reproduce_consistent` (a
consistent reading), :mod:`optkit.reproduce_pages` (the pages), :mod:`optkit.reproduce_text` (the
results text), and this module (the run: what to measure, measuring it, planning it). Every name
of :data:`__all__` is importable from here.
"""

from __future__ import annotations

import itertools
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from optkit.claims import SCALES, Experiment
from optkit.errors import InputError
from optkit.formulation import Formulation
from optkit.instances import instance_hash
from optkit.readings import expand_sweep, format_params
from optkit.reproduce_consistent import ConsistentReading, consistent_lines, consistent_reading
from optkit.reproduce_measurements import Measurements, experiments, format_value, is_own_reading
from optkit.reproduce_pages import paper_axes_series, plot_paper_axes, write_pages
from optkit.reproduce_text import RESULTS_BEGIN, RESULTS_END, measurements_from_csv, results_text, update_results_blocks
from optkit.reproduce_verdicts import Curve, claim_verdicts, curve_sentence, curves_of, post_hoc_marks, reproducing_band
from optkit.validation import check_seeds

__all__ = [
    "DEFAULT_SEEDS", "experiments", "select", "reading_settings", "measurement_tasks", "reproduce",
    "Measurements", "write_pages", "list_lines", "claim_verdicts", "post_hoc_marks", "measurements_from_csv",
    "results_text", "update_results_blocks", "RESULTS_BEGIN", "RESULTS_END", "consistent_reading",
    "ConsistentReading", "consistent_lines", "plan", "PlanLine", "Curve", "curves_of", "reproducing_band",
    "curve_sentence", "paper_axes_series", "plot_paper_axes", "check_reading_names",
]


DEFAULT_SEEDS = {"ci": 2, "paper": 5}
"""Seeds measured per reading when ``--seeds`` is not given."""


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

        own = [n for n in exp.readings if is_own_reading(f, exp, n)]
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


def check_reading_names(selection: Sequence[tuple[Formulation, Experiment, list[str]]],
                        spec: str | Mapping[str, Sequence[Any]]) -> None:
    """Refuse ``--readings KEY=...`` naming a reading that no selected experiment measures: a
    declared reading of the problem that the experiments do not pass on (ddlwmp's ``tp_share`` for
    a Sec. V experiment, say) would otherwise be dropped without a word and the defaults measured."""
    if not isinstance(spec, Mapping):
        return
    used = {name for _, exp, _ in selection for name in exp.readings}
    for name in spec:
        if name not in used:
            ids = ", ".join(exp.id for _, exp, _ in selection)
            raise InputError(f"--readings {name}", f"is not a reading of the experiments selected ({ids}): they "
                                                   f"would measure their defaults; their readings: "
                                                   f"{', '.join(sorted(used)) or 'none'}")


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
    measure: bool = True,
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

    ``measure=False`` (``--stored-only``) measures nothing: the result holds what ``db`` (which
    must exist) already stores of the planned measurements, with :attr:`Measurements.planned` set
    when that is not all of them, so the pages of a long run can be written while it is under way
    or after it stopped early, and say how much of it they hold.
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
    check_reading_names(selection, readings)
    if not measure:
        if rerun:
            raise InputError("--stored-only", "measures nothing, so it does not go with --rerun")
        if not Path(db).is_file():
            raise InputError("--db", f"{db} does not exist: --stored-only writes pages from a store that holds measurements")
    memo_dir = ""
    if memo and measure:
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
    executor = make_executor(jobs, scheduler) if measure else None
    try:
        with ResultStore(db) as store:
            done = set() if rerun else store.done_keys(include_failed=False)
            missing = [t for t in tasks if t.key not in done]
            todo = missing if executor is not None else []
            if log is not None:
                log(f"reproduce: {len(tasks)} measurements ({len(selection)} experiments x readings x seeds), "
                    f"{len(tasks) - len(missing)} already in {db}, "
                    + (f"{len(todo)} to run ({executor.description})" if executor else "none measured (--stored-only)"))
            bar = _progress(len(todo), progress and bool(todo))
            try:
                for row in executor.run(todo) if executor is not None else ():
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
        if executor is not None:
            executor.close()
    for r in rows:
        if r["status"] != "feasible":
            line = (f"{r['instance_name']} {format_params(r['params'].get('readings'))} seed {r['seed']}: "
                    f"{r['status']}: {r['message']}")
            if line not in failures:
                failures.append(line)
    return Measurements(selection, rows, scale, seed_list, readings, time.perf_counter() - start, failures,
                        combination_rows=combos, planned=len(tasks) if len(rows) < len(tasks) else None)


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
    selection = select(targets)
    check_reading_names(selection, readings)
    for f, exp, _ in selection:
        tasks = measurement_tasks(f, exp, reading_settings(f, exp, readings, scale), seed_list, scale,
                                  plugin_series(f, exp) if plugins else ())
        stored = [status[t.key] for t in tasks if t.key in status]
        failed = sum(s in FAILED_STATUSES for s in stored)
        out.append(PlanLine(exp.id, len(tasks), len(stored) - failed, failed, len(tasks) - len(stored)))
    return out


def _progress(total: int, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    disable = (not enabled) or not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())
    return tqdm(total=total, desc="reproduce", unit="measurement", disable=disable, dynamic_ncols=True)


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
                lines.append(f"    {c.id:<40} {c.where}: paper {format_value(c.paper_value, c.unit)} ({c.statistic})"
                             + (f" [not comparable: {c.incomparable.split(':')[0]}]" if c.incomparable else ""))
    return lines or ["(no claims registered)"]
