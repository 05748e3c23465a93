"""A pytest plugin measuring the CPU time of each test file, for :mod:`tests.file_order`.

    python -m pytest -p tests.cpu_costs --cpu-costs tests/file_costs.json [pytest-xdist options]

(``python benchmarks/test_time.py --costs tests/file_costs.json`` adds these options to the README's
test command on a fresh clone.) Per test, the CPU time (user + system) of the test process and of
its children that have ended and been waited for (``getrusage``: ``RUSAGE_SELF`` and
``RUSAGE_CHILDREN``) and of its live descendants, with the children they waited for (``/proc``: the
harness's pool workers are children of a forkserver), spent in setup, call and teardown, summed per file; CPU time, not wall time,
since the machine may be shared. Under pytest-xdist each worker hands its sums to the controller
(``workeroutput``), which writes the file at the end of the run with the command that made it.
"""

from __future__ import annotations

import glob
import json
import os
import resource
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from tests.file_order import file_of

_KEY = "cpu_costs"


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            out += [int(c) for c in Path(task).read_text().split()]
        except OSError:  # the task ended meanwhile
            pass
    return out


def _descendants_cpu(pid: int) -> float:
    """CPU seconds of the live descendants of ``pid`` (Linux ``/proc``; 0 elsewhere), each
    with its own waited-for children's (``utime + stime + cutime + cstime``)."""
    total, todo = 0, _children(pid)
    while todo:
        c = todo.pop()
        try:
            fields = Path(f"/proc/{c}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15])
        todo += _children(c)
    return total / _TICK


def cpu_seconds() -> float:
    """User + system CPU seconds of this process, of its waited-for children (``getrusage``) and of
    its live descendants with theirs (:func:`_descendants_cpu`: a pool's or forkserver's workers
    run the harness's jobs, and are waited for by their parent, not by this process)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime + _descendants_cpu(os.getpid())


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-costs", metavar="PATH", help="write the CPU seconds of each test file to PATH (JSON)")


class Recorder:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.costs: dict[str, float] = {}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
        t0 = cpu_seconds()
        try:
            return (yield)
        finally:
            f = file_of(item.nodeid)
            self.costs[f] = self.costs.get(f, 0.0) + cpu_seconds() - t0

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        out = getattr(self.config, "workeroutput", None)
        if out is not None:  # a pytest-xdist worker: the controller writes the file
            out[_KEY] = json.dumps(self.costs)
        else:
            self.write()

    @pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: absent without it
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        for f, s in json.loads(node.workeroutput.get(_KEY, "{}")).items():
            self.costs[f] = self.costs.get(f, 0.0) + s

    def write(self) -> None:
        path = Path(self.config.getoption("--cpu-costs"))
        data = {"command": " ".join(["python", "-m", "pytest", *sys.argv[1:]]),
                "measured": "CPU seconds (user + system: the test process, its waited-for children, its live "
                            "descendants and theirs) per test file, setup + call + teardown of its tests "
                            "(tests/cpu_costs.py)",
                "total_cpu_s": round(sum(self.costs.values()), 1),
                "cpu_s": {f: round(s, 2) for f, s in sorted(self.costs.items(), key=lambda kv: (-kv[1], kv[0]))}}
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--cpu-costs"):
        config.pluginmanager.register(Recorder(config), "cpu-costs-recorder")
