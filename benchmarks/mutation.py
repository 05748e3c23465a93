"""Generate ``benchmarks/perf/mutation.md`` and the README's mutation table: how many deliberate
wrong edits of each formulation package its tests catch.

For each of the four packages (:data:`PACKAGES`), this script runs ``tools/mutate.py``
(:func:`mutate.run`: mutmut in a scratch copy of the repository) on a seeded uniform sample of
the package's mutants against the package's tests, the same selection as the README's commands,
and stores the counts per module the moment the package finishes, in
``benchmarks/perf/mutation.json`` with the settings, the commit of the code, mutmut's version,
the wall time and the machine's load. It then writes the page and, with ``--update-readme``, the
README block between ``<!-- mutation:begin -->`` and ``<!-- mutation:end -->``. Every number on
both comes from that file; neither is edited by hand.

A whole run (four packages, ``--sample 500``) takes hours on 2 cores, longer than one working
session; so it goes on across sessions one package at a time: a package already in the file
with this run's settings (sample, seed, tests) is kept (commit the file after each package), any
other is run again. ``--fresh`` discards the kept packages. ``--page-only`` rewrites the page (and
the README block) from the file.

Decisions, written down because the issue is silent on them:

* *A sample, the same for every package.* A full run of one package is 6,000-10,000 mutants
  (nimp's took hours alone); a seeded uniform sample of ``--sample`` mutants estimates the
  package's score with a 95% Wilson interval that the page prints. Every package gets the same
  sample size and seed, so the four are measured alike.
* *The score* is killed / (killed + survived), summed over the package's modules from mutmut's
  exit codes (:func:`mutate.module_counts`): a failing test, a timeout or a crash kills; a
  mutant reached by no selected test counts in neither and is shown beside the score.
* *Equivalent mutants* (:data:`EQUIVALENT`, ``benchmarks/perf/mutation_equivalent.json``): an edit
  that cannot change behaviour (a bound no input reaches, a tie-break between equal values) survives
  every test. Each is listed there by name, with its edit (:func:`mutate.mutant_diff`) and a
  one-line argument; a listed mutant counts as equivalent only when a measured survivor has that
  name and that very edit (a code change that renumbers mutants leaves stale entries unused).
  The page and the README give the score with and without them: killed / (killed + survived -
  equivalent).
* *A re-score of the same sample is biased.* Tests written for the survivors of one sample, then
  scored on that sample (same code, same seed: the same mutants), give a number above the
  package's: the sample no longer represents the code. A fresh draw (the code changed, or another
  ``--seed`` into another ``--store``) is the estimate to trust; the page says so. One such draw
  is kept: ``benchmarks/perf/mutation_seed1.json`` and ``.md`` (``--seed 1 --store
  benchmarks/perf/mutation_seed1.json --out benchmarks/perf/mutation_seed1.md``), for ddlwmp, whose
  seed-0 sample was re-scored after tests written for it. The way to raise a package's score
  honestly is the held-out one: write tests for the survivors of *training* draws (other seeds,
  into a scratch ``--store``), then score the package on a seed no test was written for. ddlwmp
  and rar-ddls were measured so (tests for their seed-1 and seed-3 draws, scored on seed 2), and
  after the speed work changed all four packages' code, all four again on seed 6, a seed no test
  was written for: nimp and gpu-mapping after tests for the survivors of their seed-5 draws
  (kept as the training record ``benchmarks/perf/mutation_seed5.json`` and ``.md``: ``--seed 5
  --store benchmarks/perf/mutation_seed5.json --out benchmarks/perf/mutation_seed5.md``).
* *Answers cached at module level hide mutants* unless the tests empty them. mutmut forks each
  mutant's test process from its own process after the clean test pass (its default
  ``process_isolation = "fork"``), so a cache
  filled during that pass (nimp's ``network._PATTERNS``, ``titan._COLLECTIVES``, ...) answers with
  the unmutated result and the mutant survives tests that would kill it in a fresh process. Those
  survivors make the score lower than the tests deserve, never higher. Since ced6e76,
  ``tools/mutate.py`` sets ``OPTKIT_FRESH_CACHES`` and the tests empty the formulations' module
  caches before each test (``tests/fresh_caches.py``), as a fresh process would find them.
* *Modules mutmut cannot activate* (:data:`NOT_ACTIVATED`): code that runs when the module is
  imported, during pytest's collection and before mutmut picks a mutant, keeps the original
  behaviour under every mutant, so its mutants survive whatever the tests check. The page gives
  the package's score with and without them, and says why. The same holds for a function called
  only at import (:data:`NOT_ACTIVATED_FUNCTIONS`, such as a factory building run functions at
  module level): its survivors are counted as *never activated* and left out of the score of the
  non-equivalent beside the equivalent ones, listed apart on the page.

Usage::

    python benchmarks/mutation.py --sample 500 --jobs 2 --update-readme     # hours; resumes per package
    python benchmarks/mutation.py --page-only --update-readme
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tools"))

import mutate  # noqa: E402

# package -> (test files, as globs from the repository root; the -k selection), as the README's
# commands: each package's own tests, the battery and the readings tests restricted to it; for
# ddlwmp also the online protocol's tests (tests/test_online.py is ddlwmp's OnlineScheduler behind
# the protocol, tests/test_online_protocol.py its rules for ddlwmp and nimp), which alone reach
# most of formulations/ddlwmp/online.py. Left out: tests/test_ddlwmp_flow.py, which follows a run
# through the functions' code objects (benchmarks/flow_trace.py) and cannot under mutmut, whose
# trampolines replace every function's code by one shared wrapper (its first full pass fails there);
# it checks the order of the rooms a run enters, not a value a mutant could change. gpu-mapping and
# ddlwmp also take tests/test_llm_results.py, the only tests of their llm_claims.py modules (the LLM
# results page's measure functions; ddlwmp's since its seed-2 draw at ffd5d9e, where 7 sampled
# mutants of ddlwmp/llm_claims.py were reached by no selected test).
PACKAGES: dict[str, tuple[tuple[str, ...], str]] = {
    "formulations/gpu_mapping/": (("tests/test_gpu_mapping_*.py", "tests/test_solvers.py", "tests/test_llm_results.py",
                                   "tests/test_battery.py", "tests/test_readings.py"),
                                  "gpu_mapping or gpu-mapping or test_solvers or test_llm_results"),
    "formulations/ddlwmp/": (("tests/test_ddlwmp_*.py", "tests/test_online.py", "tests/test_online_protocol.py",
                              "tests/test_traces.py", "tests/test_predict_features.py", "tests/test_llm_results.py",
                              "tests/test_battery.py", "tests/test_readings.py"),
                             "(ddlwmp or test_online.py or test_online_protocol or test_traces "
                             "or test_predict_features or test_llm_results) and not test_ddlwmp_flow"),
    "formulations/rar_ddls/": (("tests/test_rar_ddls_*.py", "tests/test_battery.py", "tests/test_readings.py"),
                               "rar_ddls or rar-ddls"),
    "formulations/nimp/": (("tests/test_nimp_*.py", "tests/test_battery.py", "tests/test_readings.py"), "nimp"),
}

NOT_ACTIVATED: dict[str, str] = {}
"""Module -> why mutmut cannot activate its mutants. Empty since ``gpu_mapping/profiles.py`` builds
its model tables when they are looked up rather than when it is imported (issue 36)."""

NOT_ACTIVATED_FUNCTIONS: dict[str, str] = {
    "optkit.formulations.ddlwmp.algorithms.x__runner":
        "`algorithms._runner` is called only at module level (`run_spjf = _runner(SPJF)`, ...), when the "
        "module is imported, before mutmut picks a mutant: every mutant of it, and of the `run` function it "
        "defines, keeps the original behaviour",
    "optkit.formulations.ddlwmp.baselines.x__document":
        "`baselines._document` is called only at module level (the loop completing each baseline's "
        "docstring), when the module is imported, before mutmut picks a mutant",
}
"""Function (mutmut's name prefix of its mutants) -> why mutmut cannot activate its mutants: a
function called only while its module is imported (the function-level case of
:data:`NOT_ACTIVATED`). Its survivors are *never activated*, not equivalent: like the equivalent
ones they are left out of the score of the non-equivalent, and the page lists them apart."""


def never_activated(name: str) -> bool:
    """Whether mutant ``name`` lies in a function of :data:`NOT_ACTIVATED_FUNCTIONS`."""
    return any(name.startswith(prefix + "__mutmut_") for prefix in NOT_ACTIVATED_FUNCTIONS)

STORE = ROOT / "benchmarks" / "perf" / "mutation.json"
EQUIVALENT = ROOT / "benchmarks" / "perf" / "mutation_equivalent.json"
PAGE = ROOT / "benchmarks" / "perf" / "mutation.md"
README = ROOT / "README.md"
BEGIN, END = "<!-- mutation:begin -->", "<!-- mutation:end -->"


def test_args(package: str) -> list[str]:
    """The pytest arguments of ``package``: its test files (globs expanded, sorted) and ``-k``."""
    globs, k = PACKAGES[package]
    files: list[str] = []
    for g in globs:
        found = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob(g))
        if not found:
            raise SystemExit(f"mutation.py: {package}: no test file matches {g}")
        files += [f for f in found if f not in files]
    return [*files, "-k", k]


def settings(package: str, sample: int, seed: int) -> dict[str, Any]:
    """What a package's result depends on besides the code: kept results must match it."""
    return {"sample": sample, "seed": seed, "tests": test_args(package)}


def load(store: Path) -> dict[str, Any]:
    if not store.exists():
        return {"packages": {}}
    data: dict[str, Any] = json.loads(store.read_text())
    return data


def save(store: Path, data: dict[str, Any]) -> None:
    tmp = store.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(store)


def load_equivalent(path: Path | None = None) -> dict[str, dict[str, str]]:
    """The listed equivalent mutants (``path``, default :data:`EQUIVALENT`): name -> ``{"diff": its
    edit, "why": the argument}``."""
    path = EQUIVALENT if path is None else path
    if not path.exists():
        return {}
    listed: dict[str, dict[str, str]] = json.loads(path.read_text())["mutants"]
    return listed


def module_of(mutant: str) -> str:
    """The repository path of the module a mutant name lies in
    (``optkit.formulations.x.a.x_f__mutmut_1`` -> ``formulations/x/a.py``)."""
    return mutate.repository_path(mutant.rsplit(".", 1)[0].replace(".", "/") + ".py")


def equivalent_counts(record: dict[str, Any], equivalent: dict[str, dict[str, str]]) -> dict[str, int]:
    """Per module, the record's survivors listed in ``equivalent`` with the very edit measured
    (``record["survivor_diffs"]``; a record without the edits has none), and those never activated
    (:func:`never_activated`): the survivors the score of the non-equivalent leaves out."""
    diffs = record.get("survivor_diffs", {})
    out: dict[str, int] = {}
    for name in record["survivors"]:
        if never_activated(name) or (name in equivalent and name in diffs and diffs[name] == equivalent[name]["diff"]):
            out[module_of(name)] = out.get(module_of(name), 0) + 1
    return out


def totals(modules: dict[str, dict[str, int]], leave_out: tuple[str, ...] = (),
           equivalent: dict[str, int] | None = None) -> dict[str, Any]:
    """Sums over ``modules`` (:func:`mutate.module_counts`) without ``leave_out``, the score and
    its 95% Wilson interval (a sample's estimate of the whole package's score); ``equivalent``
    (survivors per module, :func:`equivalent_counts`) gives ``equivalent`` and the score of the
    non-equivalent mutants, ``score_ne`` and ``interval_ne``."""
    keys = ("mutants", "tested", "killed", "survived", "no_tests")
    t: dict[str, Any] = {k: sum(c[k] for m, c in modules.items() if m not in leave_out) for k in keys}
    ran = t["killed"] + t["survived"]
    t["score"] = t["killed"] / ran if ran else math.nan
    t["interval"] = mutate.wilson(t["killed"], ran) if ran else (math.nan, math.nan)
    t["equivalent"] = sum(n for m, n in (equivalent or {}).items() if m in modules and m not in leave_out)
    ran_ne = ran - t["equivalent"]
    t["score_ne"] = t["killed"] / ran_ne if ran_ne else math.nan
    t["interval_ne"] = mutate.wilson(t["killed"], ran_ne) if ran_ne else (math.nan, math.nan)
    return t


def _pct(x: float) -> str:
    return "–" if math.isnan(x) else f"{100 * x:.1f} %"


def _scored(t: dict[str, Any], ne: bool = False) -> str:
    """``score [low, high]`` of :func:`totals` (of the non-equivalent mutants with ``ne``)."""
    score, (low, high) = (t["score_ne"], t["interval_ne"]) if ne else (t["score"], t["interval"])
    return f"{_pct(score)} [{_pct(low)}, {_pct(high)}]"


def _scored_both(t: dict[str, Any]) -> str:
    """:func:`_scored`, and the score of the non-equivalent mutants when some are listed."""
    if not t["equivalent"]:
        return _scored(t)
    return (f"{_scored(t)}; {_scored(t, ne=True)} of the non-equivalent ({t['equivalent']} equivalent or "
            "never activated)")


def _table_rows(data: dict[str, Any], columns: int,
                row: Callable[[str, dict[str, Any], dict[str, Any]], str]) -> list[str]:
    """One line per package of :data:`PACKAGES`: ``row(package, record, totals)``, or *not measured
    yet* padded to ``columns`` cells."""
    lines = []
    equivalent = load_equivalent()
    for package in PACKAGES:
        r = data["packages"].get(package)
        lines.append(f"| `{package}` | not measured yet |" + " |" * (columns - 2) if r is None
                     else row(package, r, totals(r["modules"], equivalent=equivalent_counts(r, equivalent))))
    return lines


def readme_block(data: dict[str, Any]) -> str:
    """The README's table (between the markers), from the stored results."""
    rows = data["packages"]
    lines = ["| package | mutants generated | sampled (seed) | killed | survived | reached by no selected test | "
             "score, killed / (killed + survived) [95% interval] |", "|---|---:|---:|---:|---:|---:|---|"]

    def row(package: str, r: dict[str, Any], t: dict[str, Any]) -> str:
        score = _scored_both(t)
        out = [m for m in NOT_ACTIVATED if m in r["modules"]]
        if out:
            score += (f"; {_scored(totals(r['modules'], tuple(out)))} without "
                      + ", ".join(f"`{Path(m).name}`" for m in out) + " (mutmut cannot activate it; see the page)")
        return (f"| `{package}` | {r['generated']:,} | {t['tested']:,} ({r['settings']['seed']}) | "
                f"{t['killed']:,} | {t['survived']:,} | {t['no_tests']:,} | {score} |")

    lines += _table_rows(data, 7, row)
    dates = sorted({r["date"] for r in rows.values()})
    lines += ["", "Measured " + (f"on {', '.join(dates)} " if dates else "") + "by `python benchmarks/mutation.py` "
              "(mutmut " + ", ".join(sorted({r["mutmut"] for r in rows.values()}) or ["–"]) + "); by module and with "
              "every setting: [`benchmarks/perf/mutation.md`](benchmarks/perf/mutation.md)."]
    return "\n".join(lines) + "\n"


def write_page(path: Path, data: dict[str, Any], command: str) -> None:
    from _page import run_line

    rows = data["packages"]
    lines = ["# Mutation scores of the four formulation packages", "", run_line(command), "",
             "Each package's mutants are generated by mutmut in a scratch copy of the repository "
             "(`tools/mutate.py`); a seeded uniform sample of them is run against the package's own tests (the "
             "selection below, as in the README's commands). A mutant is *killed* when a selected test fails, "
             "times out or crashes, *survives* when every selected test that reaches it passes, and is *reached by "
             "no selected test* when none runs its code. Score: killed / (killed + survived), with the 95% Wilson "
             "interval of the sample's estimate of the whole package's score. How the script decides (sample, "
             "score, modules mutmut cannot activate): `benchmarks/mutation.py`. *Equivalent*: survivors whose "
             "edit cannot change behaviour, each listed with its edit and the argument in "
             "`benchmarks/perf/mutation_equivalent.json`; the last score leaves them out: killed / (killed + "
             "survived - equivalent).", "",
             "A score measured on a fresh draw (the code changed since the package's last run, so its mutants and "
             "the seeded sample are new) estimates the whole package. A re-score of the *same* sample after tests "
             "were written for that sample's survivors does not: the sample then over-states the package. The "
             "commit column says which code each row measured.", ""]
    lines += ["| package | mutants generated | sampled (seed) | killed | survived | reached by no selected test | score "
              "[95% interval] | equivalent | score of the non-equivalent [95% interval] | wall time | code (commit) | "
              "measured | load before -> after |",
              "|---|---:|---:|---:|---:|---:|---|---:|---|---:|---|---|---|"]
    lines += _table_rows(data, 13, lambda package, r, t: (
        f"| `{package}` | {r['generated']:,} | {t['tested']:,} ({r['settings']['seed']}) | {t['killed']:,} | "
        f"{t['survived']:,} | "
        f"{t['no_tests']:,} | {_scored(t)} | {t['equivalent']:,} | {_scored(t, ne=True)} | "
        f"{r['elapsed_s'] / 60:.0f} min | {r['commit']} | {r['date']}, mutmut "
        f"{r['mutmut']}, Python {r['python']}, {r['jobs']} mutant run(s) at a time | {r['load_before']:.1f} -> "
        f"{r['load_after']:.1f} |"))
    for m, why in NOT_ACTIVATED.items():
        package = m.rsplit("/", 1)[0] + "/"
        r = rows.get(package)
        if r is None or m not in r["modules"]:
            continue
        w = totals(r["modules"], (m,))
        c = r["modules"][m]
        lines += ["", f"`{m}`: {c['survived']} of its {c['killed'] + c['survived']} sampled mutants that ran "
                  f"survive; {why}. `{package}` without it: {_scored(w)} ({w['killed']:,} of "
                  f"{w['killed'] + w['survived']:,})."]
    lines += ["", "## By module", "", "| module | mutants generated | sampled | killed | survived | reached by no "
              "selected test | score | equivalent | score of the non-equivalent |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    equivalent = load_equivalent()
    for package in PACKAGES:
        r = rows.get(package)
        eq = equivalent_counts(r, equivalent) if r else {}
        for m, c in (r or {}).get("modules", {}).items():
            ran = c["killed"] + c["survived"]
            ran_ne = ran - eq.get(m, 0)
            lines.append(f"| `{m}` | {c['mutants']:,} | {c['tested']:,} | {c['killed']:,} | {c['survived']:,} | "
                         f"{c['no_tests']:,} | {_pct(c['killed'] / ran) if ran else '–'} | {eq.get(m, 0):,} | "
                         f"{_pct(c['killed'] / ran_ne) if ran_ne else '–'} |")
    lines += equivalent_lines(data, equivalent)
    lines += ["", "## Tests selected per package", ""]
    for package in PACKAGES:
        r = rows.get(package)
        tests = r["settings"]["tests"] if r else test_args(package)
        lines.append(f"* `{package}`: `{' '.join(tests)}`")
    path.write_text("\n".join(lines) + "\n")


def equivalent_lines(data: dict[str, Any], equivalent: dict[str, dict[str, str]]) -> list[str]:
    """The page's list of the equivalent mutants counted (:func:`equivalent_counts`: a measured
    survivor listed with that very edit), per package: name, argument and edit. Empty when none."""
    lines: list[str] = []
    for package in PACKAGES:
        r = data["packages"].get(package)
        diffs = (r or {}).get("survivor_diffs", {})
        names = [n for n in (r or {}).get("survivors", []) if n in equivalent and diffs.get(n) == equivalent[n]["diff"]]
        if not names:
            continue
        lines += ["", f"### `{package}`", ""]
        for name in names:
            edit = "\n".join("  " + line for line in equivalent[name]["diff"].splitlines())
            lines += [f"* `{name}`: {equivalent[name]['why']}", "", "  ```diff", edit, "  ```", ""]
    if lines:
        lines = ["", "## Equivalent mutants", "", "The survivors left out of the score of the non-equivalent: each "
                 "edit, as measured, and why it cannot change what the code computes (listed in "
                 "`benchmarks/perf/mutation_equivalent.json`)."] + lines
    inactive = [n for package in PACKAGES for n in (data["packages"].get(package) or {}).get("survivors", [])
                if never_activated(n)]
    if inactive:
        lines += ["", "## Never activated", "", "Survivors in a function called only while its module is imported "
                  "(`NOT_ACTIVATED_FUNCTIONS` in `benchmarks/mutation.py`): mutmut cannot activate them, whatever "
                  "the tests check; left out of the score of the non-equivalent like the equivalent ones (the "
                  "*equivalent* column counts both).", ""]
        for prefix, why in NOT_ACTIVATED_FUNCTIONS.items():
            names = [f"`{n.rsplit('.', 1)[1]}`" for n in inactive if n.startswith(prefix + "__mutmut_")]
            if names:
                lines.append(f"* {', '.join(names)}: {why}.")
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def update_readme(path: Path, data: dict[str, Any], *, check: bool = False) -> bool:
    """Replace the README's block between the markers by :func:`readme_block`; with ``check``,
    write nothing. Returns whether the file differs from the generated text."""
    text = path.read_text()
    pattern = re.compile(re.escape(BEGIN) + r"\n.*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"mutation.py: {path} has no {BEGIN} ... {END} block")
    new = pattern.sub(lambda _: BEGIN + "\n" + readme_block(data) + END, text)
    if new != text and not check:
        path.write_text(new)
    return new != text


def measure(package: str, sample: int, seed: int, jobs: int, workdir: Path | None) -> dict[str, Any]:
    """Run ``tools/mutate.py`` on ``package`` and return the stored record."""
    from _page import commit

    scratch = Path(tempfile.mkdtemp(prefix="optkit-mutation-")) if workdir is None else workdir
    code = commit(("optkit", "formulations", "tests", "tools", "pyproject.toml"))
    load_before = os.getloadavg()[0]
    began = time.monotonic()
    try:
        result = mutate.run(package, test_args(package), scratch, max_children=jobs, sample=sample, seed=seed)
    finally:
        if workdir is None:
            shutil.rmtree(scratch, ignore_errors=True)
    return {"settings": settings(package, sample, seed), "generated": result["generated"],
            "modules": result["modules"], "survivors": result["survivors"],
            "survivor_diffs": result["survivor_diffs"],
            "elapsed_s": time.monotonic() - began, "commit": code,
            "date": datetime.date.today().isoformat(), "mutmut": metadata.version("mutmut"),
            "python": platform.python_version(), "jobs": jobs, "load_before": load_before,
            "load_after": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sample", type=int, default=500, help="mutants per package (default 500)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=2, help="mutant runs at a time (mutmut --max-children)")
    p.add_argument("--packages", nargs="*", default=list(PACKAGES), choices=list(PACKAGES))
    p.add_argument("--fresh", action="store_true", help="discard the kept results of the packages named")
    p.add_argument("--page-only", action="store_true", help="only rewrite the page (and README block) from the file")
    p.add_argument("--update-readme", action="store_true", help="rewrite the README's mutation block too")
    p.add_argument("--store", default=str(STORE))
    p.add_argument("--out", default=str(PAGE))
    p.add_argument("--readme", default=str(README))
    p.add_argument("--workdir", help="scratch folder for mutmut (default: a new temporary folder per package)")
    args = p.parse_args(argv)
    if args.sample < 1:
        p.error(f"--sample must be >= 1, got {args.sample}")
    if args.jobs < 1:
        p.error(f"--jobs must be >= 1, got {args.jobs}")
    store = Path(args.store)
    data = load(store)
    command = "python benchmarks/mutation.py --page-only" if args.page_only else (
        f"python benchmarks/mutation.py --sample {args.sample} --seed {args.seed} --jobs {args.jobs}")
    if not args.page_only:
        for package in args.packages:
            kept = data["packages"].get(package)
            if kept is not None and not args.fresh and kept["settings"] == settings(package, args.sample, args.seed):
                print(f"mutation.py: {package}: kept (measured {kept['date']} at commit {kept['commit']})", flush=True)
                continue
            workdir = Path(args.workdir) / package.strip("/").replace("/", "_") if args.workdir else None
            data["packages"][package] = measure(package, args.sample, args.seed, args.jobs, workdir)
            save(store, data)
            print(f"mutation.py: {package}: stored in {store}", flush=True)
            publish(args, data, command)  # after each package: the page matches the store between sessions
    publish(args, data, command)
    return 0


def publish(args: argparse.Namespace, data: dict[str, Any], command: str) -> None:
    """Write the page, and the README block with ``--update-readme``."""
    write_page(Path(args.out), data, command)
    print(f"mutation.py: wrote {args.out}", flush=True)
    if args.update_readme:
        changed = update_readme(Path(args.readme), data)
        print(f"mutation.py: {args.readme} " + ("updated" if changed else "unchanged"), flush=True)


if __name__ == "__main__":
    sys.exit(main())
