"""The ``optkit`` command line.

Verbs: ``list``, ``generate``, ``validate``, ``solve``, ``simulate``, ``compare``, ``report``.

Exit status: 0 on success, 2 for bad input (one line on stderr naming the field; never a
traceback), 1 for an internal failure (set ``OPTKIT_DEBUG=1`` for the traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any, Sequence

from optkit import generators, registry
from optkit.cli_args import OneLineParser, check_out_file, seed_arg, time_limit_arg, write_out_file
from optkit.errors import InputError
from optkit.validation import DEFAULT_MAX_VIOLATIONS
from optkit.instances import instance_files, instance_hash, instance_violations, load_instance, read_json, save_instance

__all__ = ["main", "build_parser"]


def _parse_params(items: Sequence[str] | None) -> dict[str, Any]:
    """``key=value`` pairs; a value that parses as JSON is taken as JSON, otherwise a string."""
    params: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError("--param", f"must look like key=value, got {item!r}")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
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


def cmd_simulate(args: argparse.Namespace) -> int:
    """Run an online policy on a workload (optionally filling predictions first), print its
    metrics, and write the schedule."""
    from optkit.solve import solve

    f = registry.get(args.problem)
    check_out_file(args.out)
    if f.simulate is not None:  # the formulation drives its own workload (e.g. nimp's replay)
        return _simulate_hook(f, args)
    data = read_json(args.file)
    if data.get("problem") != f.name:
        raise InputError("problem", f"{args.file} holds a {data.get('problem')!r} instance, not {f.name!r}")
    report: dict[str, Any] = {}
    if args.predictor:
        if f.prepare is None or args.predictor not in f.predictors:
            known = ", ".join(f.predictors) or "none"
            raise InputError("--predictor", f"is unknown for {f.name}: {args.predictor!r} (known: {known})")
        report = f.prepare(data, predictor=args.predictor, seed=args.seed)
    result = solve(f.name, data, args.policy, time_limit=args.time_limit, seed=args.seed,
                   params=_parse_params(args.param))
    out = Path(args.out or _default_schedule(args))
    if result.solution is not None:
        write_out_file(out, json.dumps(result.solution, indent=1) + "\n")
    summary = {**result.to_json_summary(), "prediction": report or None, "schedule_file": str(out)}
    summary.pop("solution")
    if args.json:
        _print_json(summary)
        return 0
    print(f"{f.name} / {args.policy}: {result.status.value}, schedule written to {out}")
    if report:
        print(f"  predictor {report.get('predictor')}: mean absolute error {report.get('mean_absolute_error')}")
    for k, v in result.metrics.items():
        print(f"  {k}: {v}")
    print(f"  wall time: {result.wall_time_s:.3f} s")
    return 0


def _default_schedule(args: argparse.Namespace) -> str:
    """``simulate``'s schedule file without ``--out``: ``WORKLOAD-stem.POLICY.schedule.json`` here."""
    return f"{Path(args.file).stem}.{args.policy}.schedule.json"


def _simulate_hook(f: Any, args: argparse.Namespace) -> int:
    """``simulate`` through the formulation's own driver (``Formulation.simulate``)."""
    if args.predictor:
        raise InputError("--predictor", f"is not supported by the {f.name} simulator")
    out = args.out or _default_schedule(args)
    summary = f.simulate(args.file, policy=args.policy, seed=args.seed, time_limit=args.time_limit,
                         params=_parse_params(args.param), out=out)
    if args.json:
        _print_json(summary)
        return 0
    print(f"{f.name} / {args.policy}: {summary.get('status')}, schedule written to {out}")
    for k, v in summary.items():
        if k not in ("status", "policy", "problem"):
            print(f"  {k}: {v}")
    return 0


# ----------------------------------------------------------------------------- parser
def _add_run_options(s: argparse.ArgumentParser, what: str) -> None:
    """The options of every verb that runs one algorithm: time limit, seed, parameters, --json."""
    s.add_argument("--time-limit", type=time_limit_arg, default=None, metavar="S",
                   help="seconds, a finite number > 0 (default: no limit)")
    s.add_argument("--seed", type=seed_arg, default=None, metavar="N", help="seed (an integer >= 0) of a randomized " + what)
    s.add_argument("--param", action="append", metavar="KEY=VALUE", help=f"{what} keyword (repeatable)")
    s.add_argument("--json", action="store_true", help="print exactly one JSON object")


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="optkit", description="Exact and approximate solvers for GPU-cluster scheduling.")
    sub = p.add_subparsers(dest="verb", required=True, metavar="VERB", help="what to do (optkit VERB --help)")

    s = sub.add_parser("list", help="problems, algorithms and suites")
    s.add_argument("problem", nargs="?", help="only this problem")
    s.set_defaults(func=cmd_list)

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
    s.add_argument("--out", help="schedule file (default WORKLOAD-stem.POLICY.schedule.json)")
    s.set_defaults(func=cmd_simulate)

    try:
        from optkit.harness.cli_commands import add_compare_parser, add_report_parser
    except ImportError:  # pragma: no cover - the harness ships with the engine
        pass
    else:
        add_compare_parser(sub)
        add_report_parser(sub)
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
