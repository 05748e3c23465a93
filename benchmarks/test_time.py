"""How long the README's test command takes on a fresh clone (install excluded).

    python benchmarks/test_time.py [--repo PATH] [--ref REV] [--clone DIR] [--venv VENV]
                                   [--out benchmarks/perf/test_time.md] [--costs tests/file_costs.json]

Clones ``--repo`` (default: this checkout; ``--ref`` default ``HEAD``, committed work only) into
``--clone`` (default: ``tt-clone`` beside the ``shared/`` folder that holds the real traces, e.g.
``/work/tt-clone``, so that the clone finds ``../shared/data`` as a checkout does; a temporary
folder when no trace folder is found; a folder left by an earlier run of this script is replaced,
any other existing folder refused), reads the README's test command there (the block after
``<!-- test-command -->``, as ``.ci/run`` does), runs its install steps unless ``--venv`` names an
existing virtualenv to reuse (then its ``bin/python`` replaces ``.venv/bin/python``, and the clone
goes first on ``PYTHONPATH`` so the clone's code runs, in subprocesses too), and then times its
pytest part alone, with ``--durations=20`` added, under ``CI=true`` as CI runs it (``$OPTKIT_TRACES``
names the trace folder this checkout finds when the clone does not sit beside ``shared/``).
``--costs PATH`` adds the plug-in :mod:`tests.cpu_costs` to the timed run, which writes each test
file's CPU time to ``PATH`` (``tests/file_costs.json``: the order :mod:`tests.file_order` hands the
files to pytest-xdist's workers, the costliest first).
``PYTHONDONTWRITEBYTECODE`` is removed from the environment of the timed run (a shell a newcomer
opens does not set it; with it every subprocess of the suite compiles optkit from source again);
``--keep-env`` keeps the environment as it is. Printed and written to ``--out``: the wall time of
the pytest part, the CPU time of it and its children (user + system, from ``getrusage``), the test
counts of pytest's summary line, the 20 slowest test phases as pytest reports them, and the load
average at the start, the end and its mean and maximum sampled every 5 s during the run (the
machine may be shared: a busy machine stretches wall time far more than CPU time). The install
time, when measured, is printed apart. Nothing here is asserted; the exit code is pytest's.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _page import run_line  # noqa: E402

from optkit.traces import TRACES_ENV, trace_root  # noqa: E402

MARKER = "<!-- test-command -->"
CLONE_MARK = ".optkit-test-time-clone"
"""A file this script writes into its clone: a folder holding it may be replaced by the next run."""


def readme_command(readme: str) -> str:
    """The first line after the marker that does not start with a backtick (``.ci/run``'s rule)."""
    lines = readme.split("\n")
    start = next(i for i, line in enumerate(lines) if line.strip() == MARKER)
    return next(line for line in lines[start + 1:] if line and not line.startswith("`"))


def split_command(command: str) -> tuple[list[str], str]:
    """(the install steps, the pytest step) of a ``&&`` chain whose last ``-m pytest`` step runs the tests."""
    steps = [s.strip() for s in command.split("&&")]
    i = max(i for i, s in enumerate(steps) if "-m pytest" in s)
    return steps[:i], steps[i]


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class LoadSampler(threading.Thread):
    """The 1-minute load average every ``every`` seconds until stopped."""

    def __init__(self, every: float = 5.0) -> None:
        super().__init__(daemon=True)
        self.every = every
        self.samples: list[float] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.samples.append(os.getloadavg()[0])
            self.done.wait(self.every)


def summary(output: str) -> tuple[str, dict[str, int]]:
    """pytest's closing line and its counts (``passed``, ``failed``, ``skipped``, ...)."""
    line = next((ln.strip("= \n") for ln in reversed(output.splitlines()) if re.search(r"\d+ (passed|failed)", ln)), "")
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", line)}
    return line, counts


def slowest(output: str) -> list[str]:
    """The lines of pytest's ``slowest N durations`` section."""
    lines = output.splitlines()
    start = next((i for i, ln in enumerate(lines) if "slowest" in ln and "durations" in ln), None)
    if start is None:
        return []
    return [ln for ln in lines[start + 1:] if re.match(r"\s*\d+\.\d+s ", ln)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=str(ROOT), help="repository to clone (default: this checkout)")
    ap.add_argument("--ref", default="HEAD", help="revision to check out (default: HEAD)")
    ap.add_argument("--venv", help="reuse this virtualenv instead of running the install steps")
    ap.add_argument("--out", help="write the page here (e.g. benchmarks/perf/test_time.md)")
    ap.add_argument("--clone", help="clone into this folder (default: tt-clone beside the shared/ trace folder)")
    ap.add_argument("--keep", action="store_true", help="keep the clone (its path is printed)")
    ap.add_argument("--keep-env", action="store_true", help="keep PYTHONDONTWRITEBYTECODE if it is set")
    ap.add_argument("--costs", help="also measure each test file's CPU time into this JSON file "
                                    "(tests/file_costs.json, read by tests/file_order.py)")
    args = ap.parse_args(argv)

    traces = trace_root()
    scratch: Path | None = None
    if args.clone:
        clone = Path(args.clone).resolve()
    elif traces is not None and traces.parent.parent.name == "shared":
        clone = traces.parents[2] / "tt-clone"   # <dir>/shared/data/traces -> <dir>/tt-clone
    else:
        scratch = Path(tempfile.mkdtemp(prefix="optkit-test-time-"))
        clone = scratch / "optkit"
    if clone.exists():
        if not (clone / CLONE_MARK).is_file():
            ap.error(f"--clone {clone} exists and is not a clone this script made; remove it or name another")
        shutil.rmtree(clone)
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", args.repo, str(clone)], check=True)
    (clone / CLONE_MARK).write_text("made by benchmarks/test_time.py; replaced by its next run\n")
    subprocess.run(["git", "checkout", "-q", args.ref], cwd=clone, check=True)
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True,
                         check=True).stdout.strip()
    command = readme_command((clone / "README.md").read_text())
    install, test = split_command(command)
    env = dict(os.environ, CI="true")
    env.pop("PYTHONPATH", None)
    dropped = [] if args.keep_env else [k for k in ("PYTHONDONTWRITEBYTECODE",) if env.pop(k, None) is not None]
    beside = traces is not None and (clone.parent / "shared" / "data" / "traces").resolve() == traces.resolve()
    if traces is not None and TRACES_ENV not in env and not beside:
        env[TRACES_ENV] = str(traces)
    lines: list[str] = []

    def say(line: str = "") -> None:
        lines.append(line)
        print(line, flush=True)

    say(f"README test command at {rev}: `{command}`")
    if args.venv:
        venv = Path(args.venv).resolve()
        test = test.replace(".venv/bin/python", str(venv / "bin" / "python"), 1)
        env["PYTHONPATH"] = str(clone)
        say(f"install: skipped (reused the virtualenv {venv}, the clone first on PYTHONPATH)")
    else:
        t0 = time.perf_counter()
        subprocess.run(" && ".join(install), shell=True, cwd=clone, env=env, check=True)
        say(f"install: `{' && '.join(install)}` took {time.perf_counter() - t0:.0f} s wall (not counted below)")
    test_args = shlex.split(test) + ["--durations=20"]
    if args.costs:
        test_args += ["-p", "tests.cpu_costs", "--cpu-costs", str(Path(args.costs).resolve())]
    say(f"timed: `{' '.join(test_args)}` in the clone ({clone}), CI=true"
        + (f", {TRACES_ENV}={env[TRACES_ENV]}" if TRACES_ENV in env else ", traces found beside it (../shared/data)")
        + (f"; removed from the environment: {', '.join(dropped)}" if dropped else ""))
    load0 = os.getloadavg()
    sampler = LoadSampler()
    sampler.start()
    cpu0 = children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.run(test_args, cwd=clone, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    cpu = children_cpu() - cpu0
    sampler.done.set()
    sampler.join()
    load1 = os.getloadavg()
    closing, counts = summary(proc.stdout)
    n_tests = sum(v for k, v in counts.items() if k in ("passed", "failed", "error", "errors", "xfailed", "xpassed"))
    samples = sampler.samples or [load0[0]]
    say()
    say(f"- wall time of the pytest part: **{wall:.0f} s** ({wall / 60:.1f} min)")
    say(f"- CPU time (pytest and its children, user + system): {cpu:.0f} s")
    say(f"- tests run: {n_tests} (`{closing}`); pytest exit code {proc.returncode}")
    say(f"- load average (1 min) on {os.cpu_count()} cores: {load0[0]:.1f} at the start, {load1[0]:.1f} at the end, "
        f"mean {sum(samples) / len(samples):.1f} and max {max(samples):.1f} over {len(samples)} samples")
    say()
    say("The 20 slowest test phases (pytest `--durations=20`, wall time, each on one worker):")
    say()
    say("```")
    for ln in slowest(proc.stdout):
        say(ln)
    say("```")
    if proc.returncode != 0:
        tail = proc.stdout.splitlines()[-40:]
        print("\n".join(tail), file=sys.stderr)
        print(proc.stderr[-4000:], file=sys.stderr)
    if args.out:
        Path(args.out).write_text("\n".join([
            "# The README's test command: wall time on a fresh clone", "",
            run_line() + " A fresh `git clone` of the repository; the install steps are not timed.", "",
            *lines, ""]))
    if args.keep:
        print(f"clone kept at {clone}")
    else:
        shutil.rmtree(scratch or clone, ignore_errors=True)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
