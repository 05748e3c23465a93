"""The ``optkit`` command line.

Verbs: ``list``, ``readings``, ``generate``, ``validate``, ``solve``, ``simulate``, ``compare``,
``report``, ``reproduce``, ``worst-case``.

Exit status: 0 on success, 2 for bad input (one line on stderr naming the field; never a
traceback), 1 for an internal failure (set ``OPTKIT_DEBUG=1`` for the traceback).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any, Sequence

from optkit import generators, registry
from optkit.cli_args import OneLineParser, check_out_file, seed_arg, time_limit_arg, write_out_file, write_schedule
from optkit.errors import InputError
from optkit.validation import DEFAULT_MAX_VIOLATIONS
from optkit.instances import instance_files, instance_hash, instance_violations, load_instance, read_json, save_instance

__all__ = ["main", "build_parser"]


def _parse_params(items: Sequence[str] | None) -> dict[str, Any]:
    """``key=value`` pairs, one value each (``solve`` and ``generate``); a value that parses as
    JSON is taken as JSON, otherwise a string. ``key=v1,v2`` is a sweep: only ``compare`` and
    ``simulate`` run those."""
    from optkit.readings import parse_param_values

    params: dict[str, Any] = {}
    for key, values in parse_param_values(items).items():
        if len(values) != 1:
            raise InputError(f"--param {key}", "takes one value here; sweep several with `optkit compare` "
                                               "or `optkit simulate`")
        params[key] = values[0]
    return params


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=None, allow_nan=True, default=str))


# ----------------------------------------------------------------------------- verbs
def cmd_list(args: argparse.Namespace) -> int:
    formulations = registry.all_formulations()
    if args.problem:
        formulations = {args.problem: registry.get(args.problem)}
    for name, f in formulations.items():
        print(f"{name}: {f.summary}")
        print(f"  objectives: {', '.join(f.objectives)} (default {f.default_objective})")
        print("  algorithms:")
        for a in f.algorithms.values():
            flag = "" if a.available() else f"  [needs {', '.join(a.requires)}: pip install optkit[peers]]"
            flag += f"  [plug-in: {a.plugin}]" if a.plugin else ""
            print(f"    {a.name:<18} {a.kind:<9} {a.summary}{flag}")
        if f.generate is not None:
            print("  generate --param keys (KEY=default; no default: required):")
            for line in generators.describe(f.generate):
                print(f"    {line}")
        if f.suites:
            print("  suites:")
            for s in f.suites.values():
                print(f"    {s.name:<18} {s.summary}")
    return 0


def cmd_readings(args: argparse.Namespace) -> int:
    """``optkit readings PROBLEM``: every declared reading as a table (or JSON)."""
    from optkit.readings import moved_defaults_markdown, reading_table, update_moved_block

    if args.moved:
        chosen = [registry.get(args.problem)] if args.problem else list(registry.all_formulations().values())
        table = moved_defaults_markdown(chosen)
        if not args.update:
            print(table, end="")
            return 0
        changed = update_moved_block(Path(args.update), table, check=args.check)
        print(f"{args.update}: {'differs' if changed and args.check else 'updated' if changed else 'up to date'}")
        return 1 if changed and args.check else 0
    if args.update or args.check:
        raise InputError("--update", "needs --moved")
    if not args.problem:
        raise InputError("problem", "is required (or pass --moved)")
    f = registry.get(args.problem)
    rows = reading_table(f)
    if args.json:
        _print_json(rows)
        return 0
    if not rows:
        print(f"{f.name}: no readings declared")
        return 0
    if args.markdown:
        cols = list(rows[0])
        print("| " + " | ".join(cols) + " |")
        print("|" + "|".join("---" for _ in cols) + "|")
        for r in rows:
            print("| " + " | ".join(r[c].replace("|", "\\|") for c in cols) + " |")
        return 0
    print(f"{f.name}: {len(rows)} readings (pass one with --param NAME=VALUE; sweep with --param NAME=V1,V2)")
    for r in rows:
        print(f"\n{r['name']}: {r['summary']}")
        for k in ("options", "default", "rule", "post hoc", "used by", "passage", "reason", "history"):
            print(f"  {k + ':':<9} {r[k]}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    f = registry.get(args.problem)
    if args.suite:
        if args.suite not in f.suites:
            raise InputError("--suite", f"is unknown for {f.name}: {args.suite!r} (known: {', '.join(f.suites)})")
        if not args.out:
            raise InputError("--out", "is required with --suite (a folder to write the instances into)")
        items = f.suites[args.suite].build()
        for name, data in items:
            save_instance(Path(args.out) / f"{name}.json", data)
        print(f"wrote {len(items)} {f.name} instances of suite {args.suite} to {args.out}")
        return 0
    if f.generate is None:
        raise InputError("problem", f"{f.name} has no generator")
    params = _parse_params(args.param)
    if args.seed is not None:
        params["seed"] = args.seed
    generators.check_params(f.name, f.generate, params)
    try:
        data = f.generate(**params)
    except TypeError as exc:  # an unknown keyword: the user's mistake
        raise InputError("--param", str(exc)) from None
    if "kind" not in data or f.simulate is None:  # a "kind" (e.g. nimp's replay) is a simulate workload,
        f.instance_from_dict(data)  # checked by its generator; otherwise a generator must produce valid instances
    if args.out:
        save_instance(args.out, data)
        print(f"wrote {args.out}")
    else:
        print(json.dumps(data, indent=1))
    return 0


def _generator_epilog() -> str:
    """``generate --help``'s list of every problem's ``--param`` keys (computed when asked)."""
    lines = ["--param keys per problem (KEY=default; no default: required):"]
    for name, f in registry.all_formulations().items():
        if f.generate is not None:
            lines += [f"  {name}: {line}" for line in generators.describe(f.generate)]
    return "\n".join(lines)


def _fmt_value(v: object) -> str:
    """A number as ``%.6g``; a lexicographic (list) objective as ``[a, b, ...]``."""
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt_value(x) for x in v) + "]"
    return f"{v:.6g}" if isinstance(v, (int, float)) else str(v)


def cmd_validate(args: argparse.Namespace) -> int:
    """Check every file (folders: their ``*.json``), reporting every violation of each, like a
    compiler (up to ``--max-errors`` per file), one ``optkit: error:`` line each on stderr."""
    files = instance_files(args.files)
    if args.solution and len(files) != 1:
        raise InputError("--solution", f"needs exactly one instance file, got {len(files)}")
    if args.max_errors < 1:
        raise InputError("--max-errors", f"must be >= 1, got {args.max_errors}")
    invalid = 0
    for path in files:
        try:
            problem, instance, violations, cut, data = instance_violations(path, args.max_errors)
        except InputError as exc:
            violations, cut = [exc], False
        if violations:
            invalid += 1
            for v in violations:
                print(f"optkit: error: {v}" if str(path) in str(v) else f"optkit: error: {path}: {v}", file=sys.stderr)
            if cut:
                print(f"optkit: error: {path}: stopped after {len(violations)} violations (--max-errors)", file=sys.stderr)
            continue
        line = f"{path}: valid {problem} instance, hash {instance_hash(data)[:16]}"
        if args.solution:
            f = registry.get(problem)
            ev = f.evaluate(instance, read_json(args.solution))
            if not ev.feasible:
                raise InputError(args.solution, "is infeasible: " + "; ".join(ev.violations))
            line += "; solution feasible: " + ", ".join(f"{k}={_fmt_value(v)}" for k, v in ev.objectives.items())
        print(line)
    return 2 if invalid else 0


def cmd_solve(args: argparse.Namespace) -> int:
    from optkit.solve import solve

    check_out_file(args.out)
    problem, instance, _ = load_instance(args.file, problem=args.problem)
    result = solve(problem, instance, args.algorithm, objective=args.objective, time_limit=args.time_limit,
                   seed=args.seed, params=_parse_params(args.param))
    if args.out:
        write_out_file(args.out, json.dumps(result.solution, indent=1) + "\n")
    if args.json:
        _print_json(result.to_json_summary())
        return 0
    print(f"{problem} / {result.algorithm}: {result.status.value}")
    print(f"  objective {result.objective_name}: {result.objective}")
    on_key = (f"   (on the scalar key objective_key.{result.objective_name}, which orders solutions as the list "
              "does; see the problem's README)") if isinstance(result.objective, (list, tuple)) else ""
    print(f"  bound: {result.bound}   gap: {result.gap}{on_key}")
    print(f"  wall time: {result.wall_time_s:.6f} s")
    for k, v in result.metrics.items():
        print(f"  {k}: {v}")
    if result.message:
        print(f"  message: {result.message}")
    return 0


def _sweep_settings(items: Sequence[str] | None) -> list[dict[str, Any]]:
    from optkit.readings import expand_sweep, parse_param_values

    return expand_sweep(parse_param_values(items))


def _setting_suffix(setting: dict[str, Any], several: bool) -> str:
    """A file-name part naming a sweep setting (empty for a single setting)."""
    if not several or not setting:
        return ""
    import re

    from optkit.readings import format_params

    return "." + re.sub(r"[^A-Za-z0-9._=-]+", "_", format_params(setting).replace(", ", "."))


def cmd_simulate(args: argparse.Namespace) -> int:
    """Run an online policy on a workload (optionally filling predictions first), print its
    metrics, and write the schedule. ``--param key=v1,v2`` runs every setting (cross product of
    several keys), one schedule file each, with the setting in its name; ``--json`` then prints
    one object per line."""
    settings = _sweep_settings(args.param)
    several = len(settings) > 1
    f = registry.get(args.problem)
    check_out_file(args.out)
    if f.simulate is not None:  # the formulation drives its own workload (e.g. nimp's replay)
        for setting in settings:
            _simulate_hook(f, args, setting, several)
        return 0
    data = read_json(args.file)
    if data.get("problem") != f.name:
        raise InputError("problem", f"{args.file} holds a {data.get('problem')!r} instance, not {f.name!r}")
    _check_simulate_params(f, args.policy, settings)
    workload = [data]  # the last setting takes the workload itself (no copy), so it is freed once built
    del data
    for i, setting in enumerate(settings):
        _simulate_default(f, args, workload.pop() if i == len(settings) - 1 else copy.deepcopy(workload[0]),
                          setting, several)
    return 0


def _check_simulate_params(f: Any, policy: str, settings: list[dict[str, Any]]) -> None:
    """Validate every setting before anything runs (a bad value never loses a finished run)."""
    from optkit.readings import check_params
    from optkit.solve import check_algorithm

    check_algorithm(f, policy, None)
    for setting in settings:
        check_params(f, policy, setting)


def _simulate_default(f: Any, args: argparse.Namespace, data: dict[str, Any], setting: dict[str, Any],
                      several: bool) -> None:
    from optkit.solve import solve

    report: dict[str, Any] = {}
    if args.predictor:
        if f.prepare is None or args.predictor not in f.predictors:
            known = ", ".join(f.predictors) or "none"
            raise InputError("--predictor", f"is unknown for {f.name}: {args.predictor!r} (known: {known})")
        report = f.prepare(data, predictor=args.predictor, seed=args.seed)
    try:
        instance = f.instance_from_dict(data)
    except InputError as exc:
        raise exc.with_problem(f.name) from None
    del data  # the raw workload (a dict per job) is not needed past here: freed before the simulation
    result = solve(f.name, instance, args.policy, time_limit=args.time_limit, seed=args.seed, params=setting)
    suffix = _setting_suffix(setting, several)
    if args.out:
        out = Path(args.out)
        if suffix:
            out = out.with_name(out.stem + suffix + out.suffix)
    else:
        out = Path(_default_schedule(args, suffix))
    if result.solution is not None:
        write_schedule(out, result.solution)
    summary = {**result.to_json_summary(), "prediction": report or None, "schedule_file": str(out)}
    summary.pop("solution")
    if args.json:
        _print_json(summary)
        return
    print(f"{f.name} / {args.policy}: {result.status.value}, schedule written to {out}")
    if several or setting:
        from optkit.readings import format_params

        print(f"  parameters: {format_params(result.params)}")
    if report:
        print(f"  predictor {report.get('predictor')}: mean absolute error {report.get('mean_absolute_error')}")
    for k, v in result.metrics.items():
        print(f"  {k}: {v}")
    print(f"  wall time: {result.wall_time_s:.3f} s")


def _default_schedule(args: argparse.Namespace, suffix: str = "") -> str:
    """``simulate``'s schedule file without ``--out``: ``WORKLOAD-stem.POLICY[.SETTING].schedule.json`` here."""
    return f"{Path(args.file).stem}.{args.policy}{suffix}.schedule.json"


def _simulate_hook(f: Any, args: argparse.Namespace, setting: dict[str, Any], several: bool) -> None:
    """``simulate`` through the formulation's own driver (``Formulation.simulate``)."""
    if args.predictor:
        raise InputError("--predictor", f"is not supported by the {f.name} simulator")
    suffix = _setting_suffix(setting, several)
    if args.out:
        out = str(Path(args.out).with_name(Path(args.out).stem + suffix + Path(args.out).suffix)) if suffix else args.out
    else:
        out = _default_schedule(args, suffix)
    summary = f.simulate(args.file, policy=args.policy, seed=args.seed, time_limit=args.time_limit,
                         params=setting, out=out)
    if args.json:
        _print_json(summary)
        return
    print(f"{f.name} / {args.policy}: {summary.get('status')}, schedule written to {out}")
    for k, v in summary.items():
        if k not in ("status", "policy", "problem"):
            print(f"  {k}: {v}")


# ----------------------------------------------------------------------------- parser
def _add_run_options(s: argparse.ArgumentParser, what: str) -> None:
    """The options of every verb that runs one algorithm: time limit, seed, parameters, --json."""
    s.add_argument("--time-limit", type=time_limit_arg, default=None, metavar="S",
                   help="seconds, a finite number > 0 (default: no limit)")
    s.add_argument("--seed", type=seed_arg, default=None, metavar="N", help="seed (an integer >= 0) of a randomized " + what)
    s.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help=f"{what} keyword or reading (repeatable; `optkit readings PROBLEM` lists the readings)"
                        + ("; KEY=V1,V2 runs each value" if what == "policy" else ""))
    s.add_argument("--json", action="store_true", help="print exactly one JSON object"
                   + (" (one per line for a sweep)" if what == "policy" else ""))


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="optkit", description="Exact and approximate solvers for GPU-cluster scheduling.")
    sub = p.add_subparsers(dest="verb", required=True, metavar="VERB", help="what to do (optkit VERB --help)")

    s = sub.add_parser("list", help="problems, algorithms and suites")
    s.add_argument("problem", nargs="?", help="only this problem")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("readings", help="the readings of a problem: name, options, default, passage, reason",
                       description="Every place where optkit chose one interpretation of an ambiguous passage of "
                                   "a paper, with its options, its default, the passage it reads and why the "
                                   "default. Pass one with --param NAME=VALUE; sweep with --param NAME=V1,V2.")
    s.add_argument("problem", nargs="?", help="a problem name (see optkit list); with --moved, every problem when "
                                             "left out")
    s.add_argument("--json", action="store_true", help="print the table as a JSON list")
    s.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    s.add_argument("--moved", action="store_true",
                   help="print the Markdown table of the readings whose default moved (old -> new, rule, why)")
    s.add_argument("--update", metavar="FILE",
                   help="with --moved: rewrite the block between <!-- moved-defaults:begin --> and "
                        "<!-- moved-defaults:end --> of FILE (the README's)")
    s.add_argument("--check", action="store_true", help="with --update: change nothing, exit 1 if the block differs")
    s.set_defaults(func=cmd_readings)

    s = sub.add_parser("generate", help="generate one instance, or write a named suite to a folder",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    s.lazy_epilog = _generator_epilog  # type: ignore[attr-defined]
    s.add_argument("problem", help="problem name (see optkit list)")
    s.add_argument("--suite", help="write this named suite (needs --out FOLDER)")
    s.add_argument("--seed", type=seed_arg, metavar="N", help="seed of the generator (an integer >= 0)")
    s.add_argument("--param", action="append", metavar="KEY=VALUE", help="generator keyword (repeatable)")
    s.add_argument("--out", help="output file (one instance) or folder (--suite); stdout if omitted")
    s.set_defaults(func=cmd_generate)

    s = sub.add_parser("validate", help="check instance files or folders (and optionally a solution)")
    s.add_argument("files", nargs="+", metavar="PATH",
                   help="instance JSON files, or folders searched recursively for *.json")
    s.add_argument("--solution", help="a solution JSON file to check against the (single) instance")
    s.add_argument("--max-errors", type=int, default=DEFAULT_MAX_VIOLATIONS, metavar="N",
                   help=f"violations reported per file before the check stops (default {DEFAULT_MAX_VIOLATIONS})")
    s.set_defaults(func=cmd_validate)

    s = sub.add_parser("solve", help="run one algorithm on one instance")
    s.add_argument("problem", help="problem name (see optkit list)")
    s.add_argument("file", help="instance JSON file of that problem")
    s.add_argument("--algorithm", "-a", required=True, help="an algorithm of the problem (see optkit list PROBLEM)")
    s.add_argument("--objective", help="objective to optimise and report (default: the problem's first)")
    _add_run_options(s, "algorithm")
    s.add_argument("--out", help="write the solution JSON here")
    s.set_defaults(func=cmd_solve)

    s = sub.add_parser("simulate", help="run an online policy on a workload and write its schedule")
    s.add_argument("problem", help="problem name (see optkit list)")
    s.add_argument("file", metavar="WORKLOAD",
                   help="the workload: an instance JSON file (nimp: a replay workload, a trace CSV or a folder of them)")
    s.add_argument("--policy", "-p", required=True, help="an algorithm of the problem, e.g. a-srpt")
    s.add_argument("--predictor", help="fill predictions first (trained on the first 80%% of jobs)")
    _add_run_options(s, "policy")
    s.add_argument("--out", help="schedule file (default WORKLOAD-stem.POLICY.schedule.json); a sweep adds the "
                                 "setting to the name")
    s.set_defaults(func=cmd_simulate)

    try:
        from optkit.harness.cli_commands import add_compare_parser, add_report_parser, add_reproduce_parser
    except ImportError:  # pragma: no cover - the harness ships with the engine
        pass
    else:
        add_compare_parser(sub)
        add_report_parser(sub)
        add_reproduce_parser(sub)
    from optkit.worst_case import add_worst_case_parser

    add_worst_case_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0), or a usage error already printed as one line (2)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        with warnings.catch_warnings():
            if not os.environ.get("OPTKIT_DEBUG"):  # numpy overflow and the like: the checks say it in one line
                warnings.simplefilter("ignore", RuntimeWarning)
            return int(args.func(args) or 0)
    except InputError as exc:
        print(f"optkit: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("optkit: interrupted; finished runs are stored, re-run to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``optkit generate ... | head``): not a failure
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:  # an internal failure, not the user's
        if os.environ.get("OPTKIT_DEBUG"):
            traceback.print_exc()
        print(f"optkit: internal error: {type(exc).__name__}: {exc} (set OPTKIT_DEBUG=1 for the traceback)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
