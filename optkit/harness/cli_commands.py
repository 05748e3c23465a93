"""``optkit compare`` and ``optkit report``: argparse sub-commands and their handlers.

``optkit/cli.py`` adds them with :func:`add_compare_parser` and :func:`add_report_parser`; each
parser's defaults carry ``func`` (the handler, ``args -> exit status``). Handlers raise
:class:`~optkit.errors.InputError` for bad input; the caller prints it as one line on stderr and
exits with status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

from optkit import registry
from optkit.cli_args import time_limit_arg
from optkit.errors import InputError
from optkit.instances import instance_files, read_json
from optkit.validation import check_seeds

__all__ = [
    "DEFAULT_DB", "DEFAULT_TIME_LIMIT", "add_compare_parser", "add_report_parser", "add_reproduce_parser",
    "run_compare", "run_report", "run_reproduce", "collect_instances", "parse_seeds",
]

DEFAULT_DB = "optkit-results.sqlite"
DEFAULT_TIME_LIMIT = 60.0


# ----------------------------------------------------------------------------- parsers
def add_compare_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``compare`` to an ``ArgumentParser.add_subparsers()`` object; returns its parser."""
    p = subparsers.add_parser(
        "compare",
        help="run algorithms on instances and report objective, gap and time",
        description=(
            "Run every (instance, algorithm, objective, seed) not yet in the result store, each in its own "
            "process under a hard time limit, and print a summary per algorithm. A killed sweep resumes "
            "where it stopped. Gaps are measured against the best proven bound of each instance."),
    )
    p.add_argument("paths", nargs="*", metavar="PATHS",
                   help="instance JSON files or folders of them (searched recursively); one problem only")
    p.add_argument("--problem", help="problem name (needed with --suite; checked against the files)")
    p.add_argument("--suite", help="a named instance suite of the problem's formulation")
    p.add_argument("--algorithms", default="all",
                   help="comma-separated algorithm names, or 'all' (default: every available algorithm)")
    p.add_argument("--objective", default=None,
                   help="objective name, comma-separated names, or 'all' (default: the problem's default objective)")
    p.add_argument("--param", action="append", metavar="KEY=V1[,V2...]",
                   help="a reading or keyword for every algorithm that takes it (repeatable); several values run "
                        "each (several keys: their cross product), side by side in the report; "
                        "`optkit readings PROBLEM` lists the readings")
    p.add_argument("--seeds", default="0",
                   help="seeds of randomized algorithms: '0,1,2' or '0-9' (default 0); deterministic ones use the first")
    p.add_argument("--time-limit", type=time_limit_arg, default=DEFAULT_TIME_LIMIT, metavar="S",
                   help=f"seconds per run (default {DEFAULT_TIME_LIMIT:g}); a run is killed after 1.2 x S + a few seconds")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="runs at a time on this machine (default: the number of CPUs)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="Dask distributed scheduler address (tcp://host:8786): run there instead of locally")
    p.add_argument("--db", default=DEFAULT_DB, metavar="FILE", help=f"SQLite result store (default {DEFAULT_DB})")
    p.add_argument("--report", default=None, metavar="DIR",
                   help="also write summary.md, summary.csv, rows.csv and PNG plots into DIR")
    p.add_argument("--retry-failed", action="store_true",
                   help="redo runs stored with status time_limit or error (others are never redone)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run_compare)
    return p


def add_report_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``report`` to an ``ArgumentParser.add_subparsers()`` object; returns its parser."""
    p = subparsers.add_parser(
        "report",
        help="summarise a result store: tables and plots",
        description="Summarise every stored run (gaps against the best proven bound known now).",
    )
    p.add_argument("--db", default=DEFAULT_DB, metavar="FILE", help=f"SQLite result store (default {DEFAULT_DB})")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write summary.md, summary.csv, rows.csv and PNG plots into DIR")
    p.add_argument("--problem", default=None, help="only this problem")
    p.set_defaults(func=run_report)
    return p


# ----------------------------------------------------------------------------- argument helpers
def parse_seeds(text: str) -> list[int]:
    """``"0,1,5"`` or ``"0-4"`` (or a mix, ``"0-2,7"``) as a list of distinct integers >= 0."""
    seeds: list[int] = []
    for part in (p.strip() for p in str(text).split(",")):
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            if sep:
                a, b = int(lo), int(hi)
                if b < a:
                    raise ValueError
                seeds.extend(range(a, b + 1))
            else:
                seeds.append(int(part))
        except ValueError:
            raise InputError("--seeds", f"must be integers like 0,1,2 or a range like 0-9, got {text!r}") from None
    return check_seeds(seeds, "--seeds")  # each as every seed is checked (optkit.validation)


def collect_instances(paths: Sequence[str], problem: str | None = None) -> tuple[str | None, list[tuple[str, dict[str, Any]]]]:
    """Read instance files (folders are searched recursively for ``*.json``).

    Returns ``(problem, [(path, dict)])``. Every file must name the same problem in its
    ``"problem"`` key (and match ``problem`` when given). Files are only read here; the
    formulation validates them (see :func:`optkit.harness.compare.validate_instances`).
    """
    out: list[tuple[str, dict[str, Any]]] = []
    seen_problem = problem
    for f in instance_files(paths):
        data = read_json(f)
        name = data.get("problem")
        if not isinstance(name, str):
            raise InputError(f"{f}: problem", f"must be a string naming the problem, got {name!r}")
        if seen_problem is None:
            seen_problem = name
        elif name != seen_problem:
            raise InputError(f"{f}: problem", f"is {name!r}, but this sweep is of {seen_problem!r} (one problem per sweep)")
        out.append((str(f), data))
    return seen_problem, out


def _positive(name: str, value: float | int | None, *, integer: bool = False) -> None:
    if value is None:
        return
    if value != value or value <= 0 or value == float("inf"):  # NaN, <= 0, inf
        raise InputError(name, f"must be {'an integer' if integer else 'a number'} > 0, got {value!r}")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- handlers
def run_compare(args: argparse.Namespace) -> int:
    """Handler of ``optkit compare``; returns the exit status (0)."""
    from optkit import report as report_mod
    from optkit.harness.compare import compare
    from optkit.harness.executors import make_executor

    _positive("--time-limit", args.time_limit)
    _positive("--jobs", args.jobs, integer=True)
    seeds = parse_seeds(args.seeds)
    if not args.paths and not args.suite:
        raise InputError("PATHS", "none given: pass instance files or folders, or --problem P --suite S")
    problem, instances = collect_instances(args.paths, args.problem)
    sources = {name: name for name, _ in instances}
    if args.suite:
        if problem is None:
            raise InputError("--suite", "needs --problem (or instance files naming the problem)")
        formulation = registry.get(problem)
        if args.suite not in formulation.suites:
            known = ", ".join(formulation.suites) or "none"
            raise InputError("--suite", f"{args.suite!r} is not a suite of {problem} (known: {known})")
        for name, data in formulation.suites[args.suite].build():
            full = f"{args.suite}/{name}"
            instances.append((full, data))
            sources[full] = args.suite
    assert problem is not None
    registry.get(problem)  # unknown problem: InputError before anything else
    from optkit.readings import parse_param_values

    sweep = parse_param_values(args.param)
    executor = make_executor(args.jobs, args.scheduler)
    try:
        rep = compare(
            problem, instances, algorithms=args.algorithms, objectives=args.objective, seeds=seeds,
            time_limit=args.time_limit, db=args.db, executor=executor, progress=not args.no_progress,
            retry_failed=args.retry_failed, source=sources, log=_stderr, sweep=sweep,
        )
    finally:
        executor.close()
    report_mod.print_report(rep)
    if args.report:
        written = report_mod.write_report(rep, args.report)
        _stderr(f"report: {len(written)} files written to {args.report}")
    return 0


def add_reproduce_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``reproduce`` to an ``ArgumentParser.add_subparsers()`` object; returns its parser."""
    p = subparsers.add_parser(
        "reproduce",
        help="measure the papers' claims over readings and seeds; write verdict pages",
        description=(
            "`optkit reproduce list` lists every registered claim. `optkit reproduce CLAIM... --out DIR` measures "
            "the named claims (claim ids, experiment ids, paper names, problem names, or all) under the "
            "readings that matter to them (--readings) and every seed, in parallel worker processes, "
            "storing each measurement as it finishes (a killed run resumes), and writes one Markdown page per "
            "paper with a CSV and PNGs, plus index.md, with a verdict per reading."),
    )
    p.add_argument("targets", nargs="+", metavar="CLAIM", help="'list', or claim/experiment/paper/problem names, or 'all'")
    p.add_argument("--scale", default="ci", choices=["ci", "paper"],
                   help="ci: small settings, each measurement well under a minute; paper: the paper's own setting")
    p.add_argument("--seeds", default=None, metavar="N|LIST",
                   help="a count N (seeds 0..N-1) or a list '0,3,7' / range '0-4' (default 2 at ci scale, 5 at paper)")
    p.add_argument("--readings", action="append", metavar="each|all|default|KEY=V1,V2",
                   help="'each' (default): the defaults, then each reading varied alone; 'all': every combination "
                        "of each claim's readings (can be large); 'default': the defaults only; KEY=V1,V2 "
                        "(repeatable): the cross product of these values, other readings at their defaults")
    p.add_argument("--out", default=None, metavar="DIR", help="folder for the pages (required unless 'list')")
    p.add_argument("--db", default=None, metavar="FILE",
                   help="measurement store (default DIR/measurements.sqlite); reused measurements are not re-run")
    p.add_argument("--jobs", type=int, default=None, metavar="N", help="measurements at a time (default: CPUs)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="Dask distributed scheduler address (tcp://host:8786): measure there instead of locally")
    p.add_argument("--rerun", action="store_true",
                   help="measure again even what the store already holds (and empty its memo, DB.memo)")
    p.add_argument("--no-memo", action="store_true",
                   help="compute every part of every measurement (default: parts a reading does not change, such as "
                        "another policy's run on the same workload, are computed once per store and kept in DB.memo)")
    p.add_argument("--dry-run", action="store_true",
                   help="measure nothing: print per experiment the measurements planned, stored in --db (or "
                        "DIR/measurements.sqlite) and missing")
    p.add_argument("--stored-only", action="store_true",
                   help="measure nothing: write the pages from the planned measurements --db already holds (a run "
                        "under way or stopped early); the pages say how many of the planned ones they hold")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-plugins", action="store_true",
                   help="measure the papers' algorithms only (default: every plug-in algorithm of optkit.algorithms "
                        "is an extra series of each experiment that compares algorithms)")
    p.add_argument("--update", action="append", metavar="FILE",
                   help="with 'text': rewrite the <!-- results:begin KEY --> ... <!-- results:end KEY --> blocks of "
                        "FILE (repeatable) from the claims and the CSVs in --out (KEY: all, or a problem name)")
    p.add_argument("--check", action="store_true",
                   help="with 'text': write nothing; exit 1 if a block differs from what the CSVs and claims give")
    p.set_defaults(func=run_reproduce)
    return p


def _reproduce_seeds(text: str | None) -> list[int] | None:
    if text is None:
        return None
    t = str(text).strip()
    if t.isdigit() and "," not in t and "-" not in t:
        n = int(t)
        if n < 1:
            raise InputError("--seeds", f"must be a count >= 1 or a list of seeds, got {text!r}")
        return list(range(n))
    return parse_seeds(t)


def _reproduce_readings(items: Sequence[str] | None) -> Any:
    if not items:
        return "each"
    if len(items) == 1 and items[0] in ("each", "all", "default"):
        return items[0]
    if any(x in ("each", "all", "default") for x in items):
        raise InputError("--readings", "'each', 'all' or 'default' stands alone (not with KEY=VALUES)")
    from optkit.readings import parse_param_values

    return parse_param_values(items)


def run_reproduce(args: argparse.Namespace) -> int:
    """Handler of ``optkit reproduce``; returns the exit status (0)."""
    from optkit import reproduce as rep

    if args.targets == ["list"]:
        for line in rep.list_lines():
            print(line)
        return 0
    if "list" in args.targets or "text" in args.targets and args.targets != ["text"]:
        raise InputError("CLAIM", "'list' and 'text' stand alone")
    if args.targets == ["text"]:
        return _reproduce_text(args)
    if args.dry_run:
        return _reproduce_dry_run(args)
    if not args.out:
        raise InputError("--out", "is required: a folder for the pages")
    _positive("--jobs", args.jobs, integer=True)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError("--out", f"{out} exists and is not a folder")
    if not args.stored_only:  # --stored-only reads an existing store; write_pages makes the folder
        out.mkdir(parents=True, exist_ok=True)
    db = args.db or str(out / "measurements.sqlite")
    m = rep.reproduce(args.targets, seeds=_reproduce_seeds(args.seeds), readings=_reproduce_readings(args.readings),
                      scale=args.scale, db=db, jobs=args.jobs, rerun=args.rerun, progress=not args.no_progress,
                      log=_stderr, plugins=not args.no_plugins, scheduler=args.scheduler, memo=not args.no_memo,
                      measure=not args.stored_only)
    written = rep.write_pages(m, out)
    for f, exp, claim_ids in m.selection:
        for claim_id, (per, overall) in rep.claim_verdicts(m, f, exp).items():
            if claim_id in claim_ids:
                print(f"{claim_id}: {overall}")
    if m.failures:
        _stderr(f"reproduce: {len(m.failures)} measurements failed (listed in {out / 'index.md'})")
    if m.planned is not None:
        _stderr(f"reproduce: the pages hold {len(m.rows)} of the {m.planned} planned measurements")
    _stderr(f"reproduce: {len(written)} files written to {out}")
    return 0


def _reproduce_dry_run(args: argparse.Namespace) -> int:
    """``optkit reproduce ... --dry-run``: the measurements a run would make, and how many of them
    the store already holds (stored and feasible, stored but failed: measured again, missing)."""
    from optkit import reproduce as rep

    db = args.db or (str(Path(args.out) / "measurements.sqlite") if args.out else None)
    lines = rep.plan(args.targets, seeds=_reproduce_seeds(args.seeds), readings=_reproduce_readings(args.readings),
                     scale=args.scale, db=db, plugins=not args.no_plugins)
    print("| experiment | planned | stored | stored, failed | missing |")
    print("|---|---:|---:|---:|---:|")
    for x in lines:
        print(f"| {x.experiment} | {x.planned} | {x.stored} | {x.failed} | {x.missing} |")
    total = [sum(getattr(x, k) for x in lines) for k in ("planned", "stored", "failed", "missing")]
    to_run = total[0] if args.rerun else total[2] + total[3]
    print(f"| all | {total[0]} | {total[1]} | {total[2]} | {total[3]} |")
    print(f"reproduce --dry-run: {total[0]} measurements at scale {args.scale} (readings "
          f"{' '.join(args.readings) if args.readings else 'each'}); "
          f"{total[1]} stored in {db or 'no store'}, {to_run} would be measured")
    return 0


def _reproduce_text(args: argparse.Namespace) -> int:
    """``optkit reproduce text --out DIR [--update FILE]... [--check]``: the results text generated
    from the claims and the stored CSVs of DIR (printed, or written between the markers of each
    FILE); exit 1 under --check when a file's blocks differ."""
    import os

    from optkit import reproduce as rep

    if not args.out:
        raise InputError("--out", "is required: the folder of the result pages (CSVs)")
    m = rep.measurements_from_csv(args.out)
    if not args.update:
        print(rep.results_text(m, "all", pages=args.out), end="")
        return 0
    stale = []
    for name in args.update:
        path = Path(name)
        if not path.is_file():
            raise InputError("--update", f"{path} is not a file")
        pages = os.path.relpath(Path(args.out).resolve(), path.resolve().parent).replace(os.sep, "/")
        if rep.update_results_blocks(path, lambda key: rep.results_text(m, key, pages=pages), check=args.check):
            stale.append(str(path))
    if args.check and stale:
        _stderr(f"reproduce text: {', '.join(stale)} differ from what the claims and {args.out}'s CSVs give "
                f"(run without --check to rewrite them)")
        return 1
    _stderr(f"reproduce text: {len(args.update)} files {'checked' if args.check else 'up to date'}"
            + (f", {len(stale)} rewritten" if stale and not args.check else ""))
    return 0


def run_report(args: argparse.Namespace) -> int:
    """Handler of ``optkit report``; returns the exit status (0; a store without runs is bad input)."""
    from optkit import report as report_mod

    if args.problem is not None:
        registry.get(args.problem)
    rep = report_mod.build_report(args.db, problem=args.problem)
    if not rep.rows:  # nothing to report: the one case that makes a report unusable (optkit.report_analysis)
        raise InputError("db", f"{args.db} holds no runs" + (f" of {args.problem}" if args.problem else "")
                         + f" (run `optkit compare --db {args.db}` first)")
    report_mod.print_report(rep)
    if args.out:
        written = report_mod.write_report(rep, args.out)
        _stderr(f"report: {len(written)} files written to {args.out}")
    return 0
