"""Harness reliability: formulation lower bounds run under a time limit, cached per instance
(optkit.harness.bounds); skipped algorithms are named.

The test-only formulation ``sleepy`` (tests/plugins/sleepy.py) has a lower bound that sleeps
``bound_sleep`` seconds; 36,000 s (ten hours) stands for ddlwmp's exhaustive bound on a big
cluster. Its bound is ``cost >= size / 2``; it logs each call to the instance's ``log``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from optkit import registry  # noqa: E402
from optkit.errors import InputError  # noqa: E402
from optkit.harness import LocalExecutor, ResultStore  # noqa: E402
from optkit.harness.bounds import (  # noqa: E402
    BOUND_TIME_LIMIT_ENV, bound_time_limit, code_digest, formulation_bounds,
)
from optkit.harness.compare import compare  # noqa: E402
from optkit.instances import instance_hash  # noqa: E402
from optkit.report import build_report  # noqa: E402
from tests.plugins import sleepy  # noqa: E402

SLEEPY_TARGET = "tests.plugins.sleepy:FORMULATION"
TEN_HOURS = 36_000.0


@pytest.fixture(autouse=True)
def _sleepy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPTKIT_FORMULATIONS", SLEEPY_TARGET)
    monkeypatch.setenv("OPTKIT_HARNESS_PRELOAD", "")
    registry.all_formulations()
    monkeypatch.setitem(registry._registered, "sleepy", sleepy.FORMULATION)


def _inst(size: int, log: Path, bound_sleep: float = 0.0) -> dict[str, Any]:
    return {"problem": "sleepy", "size": size, "sleep": 0.0, "log": str(log), "bound_sleep": bound_sleep}


def _bound_calls(log: Path) -> list[str]:
    calls = log.with_name(log.name + ".bounds")
    return calls.read_text().splitlines() if calls.exists() else []


def test_compare_ends_although_the_bound_would_take_hours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Size 4 sleeps ten hours in its bound, size 6 answers at once (bound 6 / 2 = 3). The sweep
    (``nap``: cost 2 * size = 8 and 12) ends; the slow instance's gap falls back to the quick
    bound 4 / 4 = 1, gap (8 - 1) / 8 = 0.875, with one note naming it; the fast one gets gap
    (12 - 3) / 12 = 0.75."""
    monkeypatch.setenv(BOUND_TIME_LIMIT_ENV, "1")
    slow_log, fast_log = tmp_path / "slow.log", tmp_path / "fast.log"
    instances = [("slow", _inst(4, slow_log, TEN_HOURS)), ("fast", _inst(6, fast_log))]
    db = tmp_path / "r.sqlite"
    rep = compare("sleepy", instances, algorithms="nap", time_limit=5, db=db,
                  executor=LocalExecutor(2, grace_s=0.5), progress=False)
    by_name = {r["instance_name"]: r for r in rep.rows}
    assert by_name["slow"]["objective"] == 8.0 and by_name["slow"]["best_bound"] == 1.0
    assert by_name["slow"]["best_bound_source"] == "sleepy quick_lower_bound"
    assert by_name["slow"]["gap"] == pytest.approx(0.875)
    assert by_name["fast"]["best_bound"] == 3.0 and by_name["fast"]["gap"] == pytest.approx(0.75)
    slow_notes = [n for n in rep.notes if "no result within 1 s" in n]
    assert len(slow_notes) == 1 and "slow [cost]" in slow_notes[0] and "fast" not in slow_notes[0]
    assert len(_bound_calls(slow_log)) == 1 and len(_bound_calls(fast_log)) == 1
    # a later report reuses the cached outcomes: neither bound runs again
    again = build_report(db)
    assert {r["instance_name"]: r["best_bound"] for r in again.rows} == {"slow": 1.0, "fast": 3.0}
    assert len([n for n in again.notes if "no result within 1 s" in n]) == 1
    assert len(_bound_calls(slow_log)) == 1 and len(_bound_calls(fast_log)) == 1
    with ResultStore(db) as store:
        cached = store.cached_bounds([instance_hash(d) for _, d in instances], code_digest({"sleepy"}))
    assert cached[(instance_hash(instances[0][1]), "cost")][0] == "timeout"
    assert cached[(instance_hash(instances[1][1]), "cost")][:2] == ("ok", 3.0)


def test_a_timed_out_bound_is_retried_under_a_larger_limit_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cached time-out at 0.5 s: a report at 0.5 s does not retry (the quick bound 4 / 4 = 1
    stands in); at 5 s it does (bound_sleep 1 s, so it then answers size / 2 = 2)."""
    log = tmp_path / "b.log"
    data = _inst(4, log, 1.0)
    h = instance_hash(data)
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add_instances([(h, "sleepy", "b", data)])
        pairs = {(h, "cost"): "sleepy"}
        notes: list[str] = []
        quick = {(h, "cost"): (1.0, "sleepy quick_lower_bound")}
        assert formulation_bounds(pairs, store.instances(), notes=notes, time_limit=0.5) == quick
        assert len(_bound_calls(log)) == 1 and "no result within 0.5 s" in notes[0]
        assert "quick_lower_bound and the stored runs' bounds" in notes[0]
        assert formulation_bounds(pairs, store.instances(), time_limit=0.5) == quick
        assert len(_bound_calls(log)) == 1
        assert formulation_bounds(pairs, store.instances(), time_limit=5) == {(h, "cost"): (2.0, "sleepy lower_bound")}
        assert len(_bound_calls(log)) == 2


def test_without_a_quick_bound_only_the_stored_runs_bounds_remain(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    monkeypatch.setitem(registry._registered, "sleepy",
                        dataclasses.replace(sleepy.FORMULATION, quick_lower_bound=None))
    data = _inst(4, tmp_path / "q.log", TEN_HOURS)
    notes: list[str] = []
    out = formulation_bounds({("h", "cost"): "sleepy"}, {"h": {"problem": "sleepy", "name": "q", "data": data}},
                             notes=notes, time_limit=0.5)
    assert out == {} and len(notes) == 1 and "the stored runs' bounds only" in notes[0]


def test_a_failing_bound_is_one_note_not_a_crash(tmp_path: Path) -> None:
    """Two instances whose lower bound raises alike (size 0 fails from_dict in the child): no
    bound, and one note naming both (not one per instance or row)."""
    data = {"problem": "sleepy", "size": 0}
    stored = {"h0": {"problem": "sleepy", "name": "zero", "data": data},
              "h1": {"problem": "sleepy", "name": "nil", "data": {**data, "comment": "same fault"}}}
    notes: list[str] = []
    out = formulation_bounds({("h0", "cost"): "sleepy", ("h1", "cost"): "sleepy"}, stored, notes=notes, time_limit=5)
    assert out == {}
    assert len(notes) == 1 and "sleepy lower_bound failed on 2 instance objective(s) (nil [cost], zero [cost])" in notes[0]
    assert "size" in notes[0]


@pytest.mark.parametrize("raw", ["0", "-1", "nan", "soon"])
def test_bad_bound_time_limit_names_the_variable(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv(BOUND_TIME_LIMIT_ENV, raw)
    with pytest.raises(InputError, match=BOUND_TIME_LIMIT_ENV):
        bound_time_limit()


def test_bound_time_limit_default_and_inf(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BOUND_TIME_LIMIT_ENV, raising=False)
    assert bound_time_limit() == 10.0
    monkeypatch.setenv(BOUND_TIME_LIMIT_ENV, "inf")
    assert bound_time_limit() == float("inf")


def test_an_all_sweep_names_the_algorithms_it_skips(tmp_path: Path) -> None:
    """``missing-dep`` needs a module that does not exist: "all" leaves it out, and says so."""
    lines: list[str] = []
    compare("sleepy", [("a", {"problem": "sleepy", "size": 2})], algorithms="all", time_limit=0.5,
            db=tmp_path / "r.sqlite", executor=LocalExecutor(2, grace_s=0.5), progress=False, log=lines.append)
    skipped = [ln for ln in lines if "skipped" in ln]
    assert skipped == ["sleepy: skipped missing-dep: needs optkit_no_such_module (pip install optkit[peers])"]


def test_one_stream_carries_on_after_a_time_out(tmp_path: Path) -> None:
    """One child at a time (jobs=1), the ten-hour bound first: it is cut at 1 s and a fresh
    child answers the next instances (sizes 6 and 8: bounds 3 and 4); the slow one gets the
    quick bound 4 / 4 = 1."""
    datas = [_inst(4, tmp_path / "a.log", TEN_HOURS), _inst(6, tmp_path / "b.log"), _inst(8, tmp_path / "c.log")]
    stored = {f"h{i}": {"problem": "sleepy", "name": f"n{i}", "data": d} for i, d in enumerate(datas)}
    pairs = {(h, "cost"): "sleepy" for h in stored}
    out = formulation_bounds(pairs, stored, time_limit=1, jobs=1)
    assert {h: v for (h, _), (v, _) in out.items()} == {"h0": 1.0, "h1": 3.0, "h2": 4.0}
    assert out[("h0", "cost")][1] == "sleepy quick_lower_bound" and out[("h2", "cost")][1] == "sleepy lower_bound"


def test_outcomes_cached_by_other_bound_code_are_ignored(tmp_path: Path) -> None:
    """A cached bound of 99 from older code (another digest) is not used: the bound runs again
    and answers size / 2 = 3."""
    data = _inst(6, tmp_path / "c.log")
    h = instance_hash(data)
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add_instances([(h, "sleepy", "c", data)])
        store.put_bounds([(h, "cost", "ok", 99.0, "", 10.0)], code="older-code")
        out = formulation_bounds({(h, "cost"): "sleepy"}, store.instances(), time_limit=5)
        assert out == {(h, "cost"): (3.0, "sleepy lower_bound")}
        assert len(_bound_calls(tmp_path / "c.log")) == 1


def test_a_store_that_cannot_be_written_still_gets_its_bounds(tmp_path: Path) -> None:
    """A read-only store (here: put_bounds raises like SQLite does) costs only the caching."""
    import sqlite3

    from optkit.harness.bounds import StoredInstances

    class ReadOnly:
        def cached_bounds(self, hashes: Any, code: str = "") -> dict:
            return {}

        def put_bounds(self, entries: Any, code: str = "") -> None:
            raise sqlite3.OperationalError("attempt to write a readonly database")

    stored = StoredInstances({"h": {"problem": "sleepy", "name": "r", "data": _inst(6, tmp_path / "r.log")}})
    stored.store = ReadOnly()
    assert formulation_bounds({("h", "cost"): "sleepy"}, stored, time_limit=5) == {("h", "cost"): (3.0, "sleepy lower_bound")}
