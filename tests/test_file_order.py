"""tests/file_order.py: pytest-xdist gets the costliest test files first; tests/cpu_costs.py
measures a file's CPU time, its subprocesses' included."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

from tests.cpu_costs import cpu_seconds
from tests.file_order import COSTS, costliest_first, file_costs, load_costs


@dataclass(frozen=True)
class Item:
    nodeid: str


def _items(*ids: str) -> list[Item]:
    return [Item(i) for i in ids]


def test_costliest_file_first_and_each_files_order_kept() -> None:
    items = _items("tests/a.py::t2", "tests/b.py::t1", "tests/a.py::t1", "tests/c.py::t[1]", "tests/c.py::t[0]")
    costs = {"tests/a.py": 1.0, "tests/b.py": 5.0, "tests/c.py": 3.0}
    assert [i.nodeid for i in costliest_first(items, costs)] == [
        "tests/b.py::t1", "tests/c.py::t[1]", "tests/c.py::t[0]", "tests/a.py::t2", "tests/a.py::t1"]
    # equal costs: the files stay in their collected order
    same = costliest_first(_items("tests/y.py::t", "tests/x.py::t"), {"tests/x.py": 2.0, "tests/y.py": 2.0})
    assert [i.nodeid for i in same] == ["tests/y.py::t", "tests/x.py::t"]


def test_an_unmeasured_file_costs_its_tests_at_the_mean_per_test_cost() -> None:
    items = _items("tests/a.py::t1", "tests/a.py::t2", "tests/a.py::t3", "tests/b.py::t", "tests/new.py::t1",
                   "tests/new.py::t2")
    # measured: a 6 s over 3 tests, b 2 s over 1: 2 s per test, so new (2 tests) is estimated at 4 s
    assert file_costs(items, {"tests/a.py": 6.0, "tests/b.py": 2.0, "tests/gone.py": 100.0}) == {
        "tests/a.py": 6.0, "tests/b.py": 2.0, "tests/new.py": 4.0}
    assert [i.nodeid for i in costliest_first(items, {"tests/a.py": 6.0, "tests/b.py": 2.0})][:3] == [
        "tests/a.py::t1", "tests/a.py::t2", "tests/a.py::t3"]
    assert file_costs(_items("tests/x.py::t"), {}) == {"tests/x.py": 1.0}


def test_the_shipped_costs_name_test_files_of_this_suite() -> None:
    costs = load_costs()
    assert costs and all(v >= 0 for v in costs.values())
    here = {f"tests/{p.name}" for p in COSTS.parent.glob("test_*.py")}
    assert {"tests/test_battery.py", "tests/test_docs.py", "tests/test_typing.py"} <= set(costs)
    assert len(set(costs) & here) >= 0.9 * len(costs)
    assert load_costs(COSTS.with_name("no_such_file.json")) == {}


def test_cpu_seconds_count_a_grandchild_while_it_runs() -> None:
    """A child that starts a grandchild and waits for it: the grandchild's CPU time counts while
    the child is still alive (through the child's ``cstime``/``cutime`` once it has waited)."""
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    parent = (f"import subprocess, sys, time\nsubprocess.run([sys.executable, '-c', {busy!r}])\n"
              "print('done', flush=True)\ntime.sleep(30)\n")
    before = cpu_seconds()
    child = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "done\n"
        assert cpu_seconds() - before >= 0.3
    finally:
        child.kill()
        child.wait()
