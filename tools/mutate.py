"""Mutation-test one module or one package with mutmut (the ``dev`` extra), against the tests you name.

Usage (from the repository root)::

    python tools/mutate.py MODULE.py|PACKAGE/ [PYTEST ARGS...] [--workdir DIR] [--max-children N]

for example::

    python tools/mutate.py formulations/nimp/bounds.py tests/test_nimp_exact.py -k "not slow"
    python tools/mutate.py formulations/nimp/ tests/test_nimp_titan.py tests/test_battery.py -k nimp

The repository (``optkit/``, ``formulations/``, ``tests/`` and what tests read: ``instances/``,
``docs/``, ``benchmarks/``, ``.ci/``, ``pyproject.toml``, ``README.md``) is copied to a scratch
folder with a ``[tool.mutmut]`` section that mutates ``MODULE.py`` (or every ``.py`` file of
``PACKAGE/``) only and runs only the given tests
(file order, no pytest-randomly), so the checkout is never touched and no configuration needs
editing. mutmut first runs the selected tests once to learn which test calls which function,
then runs, for every mutant, the tests that reach it. The selected tests must pass on the unmutated code.
The tests on the real traces find them as in the checkout: ``$OPTKIT_TRACES`` if set, else the
folder the checkout finds (:func:`optkit.traces.trace_root`), passed to mutmut as
``$OPTKIT_TRACES`` (from the scratch folder, ``../shared/data/traces`` would not exist, and those
tests would skip and kill nothing).

``--sample N [--seed S]`` tests a uniform random sample of N of the generated mutants (seeded)
instead of all of them: mutmut first generates every mutant (a run filtered on a name that
matches none, which stops after generation and the coverage pass), then runs the sampled names.
The score of a sample estimates the score of the whole; the script prints its 95% Wilson
interval. Use it on a package whose full run would take hours.

Prints ``mutmut results`` (every surviving mutant, read one with ``mutmut show NAME`` inside the
scratch folder), one line per module (mutants, killed, survived, reached by no selected test)
and the score: killed / (all mutants that ran), from mutmut's CI/CD stats. A mutant killed by a
timeout counts as killed (the edit made a test hang, which a test run reports as a failure).
Exit status 0 when mutmut ran, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# Folders the tests import or read (besides tests/ itself), copied and also given to mutmut.
FOLDERS = ("optkit", "formulations", "instances", "docs", "benchmarks", ".ci")
COPY = (*FOLDERS, "tests", "pyproject.toml", "README.md")


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def prepare(workdir: Path, module: str, pytest_args: list[str]) -> None:
    """Copy the repository to ``workdir`` and configure mutmut for ``module``.

    The copy has the installed layout: ``formulations/`` also lies at ``optkit/formulations/``,
    and mutmut mutates it there (:func:`scratch_path`). mutmut links a test to a mutant by the
    function's module name (``orig.__module__``) against a name it derives from the file's path;
    the tests import ``optkit.formulations.nimp.bounds``, so the file must be
    ``optkit/formulations/nimp/bounds.py``. Mutated at ``formulations/nimp/bounds.py`` (the
    repository's own layout), every mutant would be "reached by no test". The top-level
    ``formulations/`` stays in the copy, unmutated, for tests that read its files (READMEs); its
    modules are never imported, since ``optkit/formulations/`` exists (``optkit._checkout``)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "mutants", ".pytest_cache")
    for name in COPY:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, workdir / name, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, workdir / name)
    shutil.copytree(REPO / "formulations", workdir / "optkit" / "formulations", ignore=ignore)
    target = scratch_path(module)
    package = target.split("/")[0] + "/"
    pattern = target if target.endswith(".py") else target.rstrip("/") + "/*.py"
    also = [f"{n}/" for n in FOLDERS if f"{n}/" != package]
    with open(workdir / "pyproject.toml", "a") as fh:
        fh.write("\n[tool.mutmut]\n"
                 f"source_paths = {_toml_list([package])}\n"
                 f"only_mutate = {_toml_list([pattern])}\n"
                 f"also_copy = {_toml_list(also + ['README.md'])}\n"
                 f"pytest_add_cli_args_test_selection = {_toml_list(pytest_args)}\n"
                 'pytest_add_cli_args = ["-p", "no:randomly", "-p", "no:cacheprovider"]\n')


def mutmut_env() -> dict[str, str]:
    """The environment of mutmut's runs: this one, with ``$OPTKIT_TRACES`` naming the trace folder
    the checkout finds (:func:`optkit.traces.trace_root`) when it is not set and one is found, and
    ``$OPTKIT_FRESH_CACHES`` set, so the tests empty the formulations' module caches before each
    test (``tests/fresh_caches.py``: a cache filled before mutmut forks would hide mutants)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from optkit.traces import TRACES_ENV, trace_root

    env = dict(os.environ)
    env["OPTKIT_FRESH_CACHES"] = "1"
    root = trace_root()
    if root is not None:
        env[TRACES_ENV] = str(root)
    return env


def scratch_path(module: str) -> str:
    """Where ``module`` (a path in the repository) is mutated in the scratch copy:
    ``formulations/X`` at ``optkit/formulations/X`` (:func:`prepare`), anything else in place."""
    return "optkit/" + module if module.startswith("formulations/") else module


def repository_path(path: str) -> str:
    """The inverse of :func:`scratch_path`: a mutated file's path in the repository."""
    return path[len("optkit/"):] if path.startswith("optkit/formulations/") else path


# mutmut's exit codes per mutant (mutmut.stats.status_by_exit_code), grouped as this script
# counts them: a timeout or a crash of the test run is a kill; "suspicious" (35) is neither.
_KILLED = {1, 3, 36, -24, 24, 152, 255, -11, -9}
_SURVIVED = {0}
_NO_TESTS = {5, 33}


def mutant_names(workdir: Path) -> list[str]:
    """Every mutant mutmut generated in ``workdir`` (the keys of its ``.meta`` files), sorted."""
    return sorted(k for meta in (workdir / "mutants").rglob("*.py.meta")
                  for k in json.loads(meta.read_text())["exit_code_by_key"])


RESUMES = 3
"""How often :func:`run` starts mutmut again on the sampled mutants still without a result after
mutmut stopped with an error. mutmut 3.8.1 waits for any child of its own process: a test run
in that process (the clean run) that leaves a child behind (the solver harness's worker) can end
mutmut with ``KeyError`` on that child's pid in ``wait_for_result``, the mutants run so far
recorded. A resumed run names only the mutants left, each run once as before."""


def unfinished(workdir: Path, names: list[str]) -> list[str]:
    """The mutants of ``names`` that mutmut has recorded no exit code for (in ``workdir``)."""
    codes: dict[str, Any] = {}
    for meta in (workdir / "mutants").rglob("*.py.meta"):
        codes.update(json.loads(meta.read_text())["exit_code_by_key"])
    return [n for n in names if codes.get(n) is None]


def wilson(killed: int, ran: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion ``killed / ran`` (the score of a random sample)."""
    if ran == 0:
        return (float("nan"), float("nan"))
    p = killed / ran
    centre = (p + z * z / (2 * ran)) / (1 + z * z / ran)
    half = z * math.sqrt(p * (1 - p) / ran + z * z / (4 * ran * ran)) / (1 + z * z / ran)
    return (centre - half, centre + half)


def module_counts(workdir: Path) -> dict[str, dict[str, int]]:
    """Per mutated module (its path relative to the repository), from mutmut's
    ``mutants/**/*.py.meta`` files: ``mutants`` generated, ``tested`` (run, or found unreachable),
    ``killed`` (a failing test, a timeout or a crash), ``survived`` and ``no_tests`` (reached by no
    selected test)."""
    out = {}
    for meta in sorted((workdir / "mutants").rglob("*.py.meta")):
        codes = list(json.loads(meta.read_text())["exit_code_by_key"].values())
        rel = repository_path(meta.relative_to(workdir / "mutants").as_posix()[: -len(".meta")])
        out[rel] = {"mutants": len(codes), "tested": sum(c is not None for c in codes),
                    "killed": sum(c in _KILLED for c in codes), "survived": sum(c in _SURVIVED for c in codes),
                    "no_tests": sum(c in _NO_TESTS for c in codes)}
    return out


def survivors(workdir: Path) -> list[str]:
    """The names of the mutants that survived (exit code 0), sorted: ``mutmut show NAME`` in the
    scratch folder prints one."""
    return sorted(k for meta in (workdir / "mutants").rglob("*.py.meta")
                  for k, c in json.loads(meta.read_text())["exit_code_by_key"].items() if c in _SURVIVED)


def changed_lines(diff: str) -> str:
    """The removed and added lines of a unified diff (``mutmut show``'s), without the file headers,
    the hunk headers and the context: the edit itself, independent of where it sits in the file."""
    return "\n".join(line for line in diff.splitlines()
                     if line[:1] in ("-", "+") and not line.startswith(("---", "+++")))


def mutant_diff(workdir: Path, name: str) -> str:
    """The edit of mutant ``name`` in the scratch folder ``workdir`` (:func:`changed_lines` of
    ``mutmut show NAME``): what an argument that the mutant is equivalent is about, stored beside
    the name so that the argument is applied only to the very edit it was made for."""
    shown = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=workdir, capture_output=True,
                           text=True, env=mutmut_env())
    return changed_lines(shown.stdout)


def module_lines(workdir: Path) -> list[str]:
    """One line per mutated module, read from mutmut's ``mutants/**/*.py.meta`` files."""
    lines = []
    for rel, c in module_counts(workdir).items():
        ran = c["killed"] + c["survived"]
        score = f"{c['killed'] / ran:.1%}" if ran else "-"
        lines.append(f"mutate.py: {rel}: {c['mutants']} mutants, {c['tested']} tested, {c['killed']} killed, "
                     f"{c['survived']} survived, {c['no_tests']} reached by no selected test, score {score}")
    return lines


def run(module: str, pytest_args: list[str], workdir: Path, *, max_children: int = 1, sample: int = 0,
        seed: int = 0) -> dict[str, Any]:
    """Mutate ``module`` (a ``.py`` file or package folder) against the tests ``pytest_args`` in
    the scratch folder ``workdir``; print mutmut's results and one line per module; return the
    counts (:func:`module_counts`, under ``modules``), mutmut's CI/CD stats (``stats``), the whole
    ``score`` (killed / mutants that ran) with its 95% interval when sampled, the sample size, and
    the surviving mutants with their edits (``survivor_diffs``, :func:`mutant_diff`).
    Raises ``RuntimeError`` when mutmut fails."""
    prepare(workdir, module, pytest_args or ["tests"])
    print(f"mutate.py: {module} in {workdir}; tests: {' '.join(pytest_args) or 'tests'}", flush=True)
    mutmut = [sys.executable, "-m", "mutmut"]
    env = mutmut_env()
    names: list[str] = []
    generated = None
    if sample > 0:
        # Generate every mutant and the coverage map: a name filter matching nothing stops mutmut there.
        subprocess.run([*mutmut, "run", "--max-children", str(max_children), "optkit-mutate-generate-only"],
                       cwd=workdir, capture_output=True, env=env)
        every = mutant_names(workdir)
        if not every:
            raise RuntimeError("mutmut generated no mutants")
        generated = len(every)
        names = sorted(random.Random(seed).sample(every, min(sample, len(every))))
        print(f"mutate.py: testing a sample of {len(names)} of {len(every)} mutants (seed {seed})", flush=True)
    done = subprocess.run([*mutmut, "run", "--max-children", str(max_children), *names], cwd=workdir, env=env)
    left = unfinished(workdir, names) if names and done.returncode != 0 else []
    for _ in range(RESUMES):
        if not left:
            break
        print(f"mutate.py: mutmut run exited with {done.returncode}; resuming the {len(left)} sampled mutants "
              "without a result", flush=True)
        done = subprocess.run([*mutmut, "run", "--max-children", str(max_children), *left], cwd=workdir, env=env)
        left = unfinished(workdir, left) if done.returncode != 0 else []
    if done.returncode != 0 and (left or not names):
        raise RuntimeError(f"mutmut run exited with {done.returncode}")
    subprocess.run([*mutmut, "results"], cwd=workdir, env=env)
    subprocess.run([*mutmut, "export-cicd-stats"], cwd=workdir, capture_output=True, env=env)
    for line in module_lines(workdir):
        print(line, flush=True)
    stats = json.loads((workdir / "mutants" / "mutmut-cicd-stats.json").read_text())
    ran = stats["killed"] + stats["survived"] + stats["timeout"] + stats["suspicious"] + stats["segfault"]
    killed = stats["killed"] + stats["timeout"] + stats["segfault"]
    score = killed / ran if ran else float("nan")
    not_tested = (stats["total"] - ran - stats["no_tests"] - stats["skipped"]
                  - stats["check_was_interrupted_by_user"])
    interval = wilson(killed, ran) if names else None
    shown = "" if interval is None else f", 95% interval [{interval[0]:.1%}, {interval[1]:.1%}] for the whole"
    print(f"mutate.py: {module}: {killed} of {ran} mutants killed ({score:.1%}{shown}); "
          f"{stats['survived']} survived, {stats['no_tests']} reached by no selected test, "
          f"{stats['total']} generated, {not_tested} not tested", flush=True)
    return {"module": module, "tests": list(pytest_args), "sample": len(names) if names else None, "seed": seed,
            "generated": generated if generated is not None else stats["total"], "killed": killed, "ran": ran,
            "score": score, "interval": interval, "stats": stats, "modules": module_counts(workdir),
            "survivors": survivors(workdir),
            "survivor_diffs": {name: mutant_diff(workdir, name) for name in survivors(workdir)}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", help="the .py file or package folder to mutate, relative to the repository root")
    parser.add_argument("--workdir", help="scratch folder (default: a new temporary folder)")
    parser.add_argument("--max-children", type=int, default=1, help="parallel mutant runs (default 1)")
    parser.add_argument("--sample", type=int, default=0, metavar="N",
                        help="test a seeded uniform random sample of N mutants instead of all")
    parser.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")
    args, pytest_args = parser.parse_known_args(argv)
    module = args.module.replace("\\", "/")
    target = REPO / module
    if not ((target.is_file() and module.endswith(".py")) or (target.is_dir() and any(target.glob("*.py")))):
        parser.error(f"module must be a .py file or a folder of .py files in the repository, got {args.module!r}")
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="optkit-mutmut-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        run(module, pytest_args, workdir, max_children=args.max_children, sample=args.sample, seed=args.seed)
    except RuntimeError as exc:
        print(f"mutate.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
