"""Mutation-test one module or one package with mutmut (the ``dev`` extra), against the tests you name.

Usage (from the repository root)::

    python tools/mutate.py MODULE.py|PACKAGE/ [PYTEST ARGS...] [--workdir DIR] [--max-children N]

for example::

    python tools/mutate.py formulations/nimp/bounds.py tests/test_nimp_exact.py -k "not slow"
    python tools/mutate.py formulations/nimp/ tests/test_nimp_titan.py tests/test_battery.py -k nimp

The repository (``optkit/``, ``formulations/``, ``tests/``, ``instances/``, ``pyproject.toml``,
``README.md``, ``.ci/``) is copied to a scratch folder with a ``[tool.mutmut]`` section that
mutates ``MODULE.py`` (or every ``.py`` file of ``PACKAGE/``) only and runs only the given tests
(file order, no pytest-randomly), so the checkout is never touched and no configuration needs
editing. mutmut first runs the selected
tests once to learn which test calls which function, then runs, for every mutant, the tests
that reach it. The selected tests must pass on the unmutated code.

Prints ``mutmut results`` (every surviving mutant, read one with ``mutmut show NAME`` inside the
scratch folder), one line per module (mutants, killed, survived, reached by no selected test)
and the score: killed / (all mutants that ran), from mutmut's CI/CD stats. A mutant killed by a
timeout counts as killed (the edit made a test hang, which a test run reports as a failure).
Exit status 0 when mutmut ran, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COPY = ("optkit", "formulations", "tests", "instances", "pyproject.toml", "README.md", ".ci")


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def prepare(workdir: Path, module: str, pytest_args: list[str]) -> None:
    """Copy the repository to ``workdir`` and configure mutmut for ``module``."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "mutants", ".pytest_cache")
    for name in COPY:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, workdir / name, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, workdir / name)
    package = module.split("/")[0] + "/"
    pattern = module if module.endswith(".py") else module.rstrip("/") + "/*.py"
    also = [f"{n}/" for n in ("optkit", "formulations", "instances", ".ci") if f"{n}/" != package]
    with open(workdir / "pyproject.toml", "a") as fh:
        fh.write("\n[tool.mutmut]\n"
                 f"source_paths = {_toml_list([package])}\n"
                 f"only_mutate = {_toml_list([pattern])}\n"
                 f"also_copy = {_toml_list(also + ['README.md'])}\n"
                 f"pytest_add_cli_args_test_selection = {_toml_list(pytest_args)}\n"
                 'pytest_add_cli_args = ["-p", "no:randomly", "-p", "no:cacheprovider"]\n')


# mutmut's exit codes per mutant (mutmut.stats.status_by_exit_code), grouped as this script counts them.
_KILLED = {1, 3, 36, -24, 24, 152, 255, -11, -9}
_SURVIVED = {0}
_NO_TESTS = {5, 33}


def module_lines(workdir: Path) -> list[str]:
    """One line per mutated module, read from mutmut's ``mutants/**/*.py.meta`` files."""
    lines = []
    for meta in sorted((workdir / "mutants").rglob("*.py.meta")):
        codes = list(json.loads(meta.read_text())["exit_code_by_key"].values())
        killed = sum(c in _KILLED for c in codes)
        survived = sum(c in _SURVIVED for c in codes)
        no_tests = sum(c in _NO_TESTS for c in codes)
        ran = killed + survived
        rel = meta.relative_to(workdir / "mutants").as_posix()[: -len(".meta")]
        score = f"{killed / ran:.1%}" if ran else "-"
        lines.append(f"mutate.py: {rel}: {len(codes)} mutants, {killed} killed, {survived} survived, "
                     f"{no_tests} reached by no selected test, score {score}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", help="the .py file or package folder to mutate, relative to the repository root")
    parser.add_argument("--workdir", help="scratch folder (default: a new temporary folder)")
    parser.add_argument("--max-children", type=int, default=1, help="parallel mutant runs (default 1)")
    args, pytest_args = parser.parse_known_args(argv)
    module = args.module.replace("\\", "/")
    target = REPO / module
    if not ((target.is_file() and module.endswith(".py")) or (target.is_dir() and any(target.glob("*.py")))):
        parser.error(f"module must be a .py file or a folder of .py files in the repository, got {args.module!r}")
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="optkit-mutmut-"))
    workdir.mkdir(parents=True, exist_ok=True)
    prepare(workdir, module, pytest_args or ["tests"])
    print(f"mutate.py: {module} in {workdir}; tests: {' '.join(pytest_args) or 'tests'}", flush=True)
    mutmut = [sys.executable, "-m", "mutmut"]
    run = subprocess.run([*mutmut, "run", "--max-children", str(args.max_children)], cwd=workdir)
    if run.returncode != 0:
        print(f"mutate.py: mutmut run exited with {run.returncode}", file=sys.stderr)
        return 1
    subprocess.run([*mutmut, "results"], cwd=workdir)
    subprocess.run([*mutmut, "export-cicd-stats"], cwd=workdir, capture_output=True)
    for line in module_lines(workdir):
        print(line, flush=True)
    stats = json.loads((workdir / "mutants" / "mutmut-cicd-stats.json").read_text())
    ran = stats["killed"] + stats["survived"] + stats["timeout"] + stats["suspicious"] + stats["segfault"]
    killed = stats["killed"] + stats["timeout"] + stats["segfault"]
    score = killed / ran if ran else float("nan")
    print(f"mutate.py: {module}: {killed} of {ran} mutants killed ({score:.1%}); "
          f"{stats['survived']} survived, {stats['no_tests']} reached by no selected test, "
          f"{stats['total']} generated", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
