"""``optkit report`` and the result store: a file that is not an optkit store is left byte for
byte as it was; runs of different time limits are never pooled; the shifted geometric mean
charges what :func:`optkit.report_analysis.charged_time` says; every report states the machine,
cores, ``--jobs``, time limit and package versions of its runs ("not recorded" for old runs).

Rows are made by hand (``make_row``) for the ``sleepy`` test formulation; the sweep of the
environment test runs through :func:`optkit.harness.compare` with an executor that hands back
those rows (no worker process).
"""

from __future__ import annotations

import math
import os
import platform
import sqlite3
from importlib import metadata
from pathlib import Path
from typing import Any, Iterator, Sequence

import pytest

from optkit import cli, registry
from optkit.harness import ResultStore, Task, compare
from optkit.harness.environment import describe, environment
from optkit.harness.store import SCHEMA_VERSION
from optkit.harness.worker import make_row
from optkit.instances import instance_hash
from optkit.report import build_report, to_markdown
from optkit.report_analysis import charged_time
from tests.plugins import sleepy


@pytest.fixture(autouse=True)
def _sleepy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    registry.all_formulations()
    monkeypatch.setitem(registry._registered, "sleepy", sleepy.FORMULATION)
    monkeypatch.setenv("OPTKIT_FORMULATIONS", "tests.plugins.sleepy:FORMULATION")


def _data(size: int) -> dict[str, Any]:
    return {"problem": "sleepy", "size": size, "sleep": 0.0}


def row(size: int, algorithm: str, status: str, objective: float | None, *, wall: float, limit: float | None = 5.0,
        seed: int = 0) -> dict[str, Any]:
    task = Task("sleepy", f"s{size}", _data(size), instance_hash(_data(size)), algorithm, "cost", {}, seed, limit)
    return make_row(task, status=status, objective=objective, wall_time_s=wall,
                    solution=None if objective is None else {"x": 0})


def store_with(path: Path, rows: Sequence[dict[str, Any]], sweep: dict[str, Any] | None = None) -> Path:
    """A store of ``rows`` (their instances not stored: the report then computes no formulation
    lower bound, which would take a child process per report)."""
    with ResultStore(path) as store:
        sid = store.add_sweep(sweep) if sweep is not None else None
        for r in rows:
            store.put_row(r, sweep=sid)
    return path


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


# ----------------------------------------------------------------------------- read-only until verified
def _foreign(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO customers (name) VALUES ('ada'), ('grace')")
    conn.commit()
    conn.close()
    return path


def _newer(path: Path) -> Path:
    store_with(path, [row(10, "exact", "optimal", 10.0, wall=1.0)])
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    return path


def _empty_database(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("DROP TABLE t")  # a valid SQLite file of one page, without a table
    conn.commit()
    conn.close()
    return path


# (make the file, the error, whether compare refuses it too: an empty file or database is a new
# store for a sweep to write, but nothing for a report to read)
CASES = {
    "foreign": (_foreign, "is not an optkit result store: an SQLite database with the tables customers (left as it "
                          "was)", True),
    "text": (lambda p: (p.write_text("not a database, just text\n" * 40), p)[1],
             "is not an optkit result store (SQLite)", True),
    "newer-schema": (_newer, f"has result-store schema {SCHEMA_VERSION + 1}; this optkit reads schemas 1 to "
                             f"{SCHEMA_VERSION}", True),
    "empty-file": (lambda p: (p.write_bytes(b""), p)[1], "is not an optkit result store: an empty file", False),
    "empty-database": (_empty_database, "is not an optkit result store: an empty database", False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_report_and_compare_leave_a_file_that_is_no_store_as_it_was(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    make, needle, writer_refuses = CASES[case]
    folder = tmp_path / "db"
    folder.mkdir()
    db = make(folder / "x.sqlite")
    before = _files(folder)
    assert cli.main(["report", "--db", str(db), "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    # byte for byte, and no -wal / -shm / -journal beside it
    assert _files(folder) == before
    assert not (tmp_path / "rep").exists()
    if writer_refuses:
        instance = tmp_path / "s4.json"
        instance.write_text('{"problem": "sleepy", "size": 4}')
        assert cli.main(["compare", str(instance), "--algorithms", "exact", "--db", str(db), "--no-progress"]) == 2
        assert needle in capsys.readouterr().err
        assert _files(folder) == before


def test_a_store_is_still_opened_and_migrated_after_the_check(tmp_path: Path) -> None:
    """An optkit store of schema 2 (no sweep record) is verified, then migrated in place."""
    db = store_with(tmp_path / "r.sqlite", [row(10, "exact", "optimal", 10.0, wall=1.0)])
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE sweeps")
    conn.execute("ALTER TABLE rows DROP COLUMN sweep")
    conn.execute("PRAGMA user_version=2")
    conn.commit()
    conn.close()
    rep = build_report(db)
    assert [r["algorithm"] for r in rep.rows] == ["exact"] and rep.rows[0]["sweep"] is None
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert "sweep" in {r[1] for r in conn.execute("PRAGMA table_info(rows)")}


# ----------------------------------------------------------------------------- time limits
def test_runs_of_different_time_limits_are_never_pooled(tmp_path: Path) -> None:
    rows = [row(10, "heur", "feasible", 15.0, wall=0.5, limit=5.0), row(20, "heur", "feasible", 30.0, wall=0.5, limit=5.0),
            row(10, "heur", "feasible", 12.0, wall=8.0, limit=60.0), row(10, "exact", "optimal", 10.0, wall=1.0, limit=5.0),
            row(10, "exact", "optimal", 10.0, wall=1.0, limit=60.0)]
    rep = build_report(store_with(tmp_path / "r.sqlite", rows))
    got = {(s["algorithm"], s["reading"]): s["runs"] for s in rep.summary}
    assert got == {("heur", "time_limit=5 s"): 2, ("heur", "time_limit=60 s"): 1,
                   ("exact", "time_limit=5 s"): 1, ("exact", "time_limit=60 s"): 1}
    assert any("sleepy: its runs were given different time limits (5 s, 60 s); they are reported apart, never pooled"
               in n for n in rep.notes)
    # paired comparisons and profiles compare groups of one limit each
    assert rep.pairs and all("time_limit=" in p["a"] and "time_limit=" in p["b"] for p in rep.pairs)
    assert all("time_limit=" in label for data in rep.profiles.values() for label in data["labels"])
    # one limit: no label, no note
    one = build_report(store_with(tmp_path / "one.sqlite", rows[:2] + rows[3:4]))
    assert {s["reading"] for s in one.summary} == {"-"}
    assert not any("time limits" in n for n in one.notes)


# ----------------------------------------------------------------------------- the charging rule
def test_the_shifted_geometric_mean_charges_a_run_past_its_limit_at_the_limit(tmp_path: Path) -> None:
    """Limit 10 s: an optimum in 4 s is charged 4 s; a feasible answer after 11.5 s (past the
    limit, before the kill at 1.2 x 10 s + grace) is charged 10 s and is not solved; a crash
    after 0.1 s is charged 10 s."""
    rows = [row(10, "a", "optimal", 10.0, wall=4.0, limit=10.0), row(20, "a", "feasible", 25.0, wall=11.5, limit=10.0),
            row(30, "a", "error", None, wall=0.1, limit=10.0)]
    assert [charged_time(r) for r in rows] == [4.0, 10.0, 10.0]
    rep = build_report(store_with(tmp_path / "r.sqlite", rows))
    (s,) = rep.summary
    assert s["solved"] == 1
    assert s["time_sgm_s"] == pytest.approx(math.exp((math.log(14) + 2 * math.log(20)) / 3) - 10)
    assert [r["charged_time_s"] for r in sorted(rep.rows, key=lambda r: r["instance_name"])] == [4.0, 10.0, 10.0]
    # what the report says is what it does
    text = to_markdown(rep)
    assert "each run charged its wall time capped at its time limit (a run that finished past its limit: the limit" in text


# ----------------------------------------------------------------------------- what the runs were measured with
class _Handing:
    """An executor that hands back a finished row per task (no process), 3 at a time."""

    jobs = 3
    description = "local, 3 at a time"

    def run(self, tasks: Sequence[Task]) -> Iterator[dict[str, Any]]:
        for t in tasks:
            yield make_row(t, status="optimal", objective=float(t.instance["size"]), bound=float(t.instance["size"]),
                           wall_time_s=0.25, solution={"x": t.instance["size"]})

    def close(self) -> None:
        pass


def test_a_sweep_records_and_every_report_states_what_it_was_measured_with(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "r.sqlite"
    # an old run, stored without a record (as before schema 3)
    store_with(db, [row(7, "exact", "optimal", 7.0, wall=0.5, limit=5.0)])
    rep = compare("sleepy", [("s4", _data(4))], algorithms=["exact"], time_limit=7.0, db=db,
                  executor=_Handing(), progress=False)
    assert [r["sweep"] for r in rep.rows] == [1]
    with ResultStore(db) as store:
        env = store.sweeps()[1]
    assert (env["cores"], env["jobs"], env["executor"], env["time_limit"]) == (os.cpu_count(), 3, "local, 3 at a time", 7.0)
    assert env["machine"].startswith(platform.node())
    assert env["versions"]["optkit"] == metadata.version("optkit")
    assert env["versions"]["python"] == platform.python_version()
    assert set(env["versions"]) == {"python", "optkit", "ortools", "highspy", "pyomo", "numpy", "scipy", "networkx",
                                    "scikit-learn", "numba"}
    # the whole store: the new sweep and the old run, each said
    assert cli.main(["report", "--db", str(db), "--out", str(tmp_path / "rep")]) == 0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.startswith("measured with: ")]
    assert lines == [f"measured with: {describe(env, [7.0])} (1 runs)",
                     "measured with: machine: not recorded; cores: not recorded; --jobs: not recorded; "
                     "time limit: 5 s; versions: not recorded (1 runs)"]
    assert (f"cores: {os.cpu_count()}; --jobs: 3; time limit: 7 s; versions: python {platform.python_version()}, "
            f"optkit {metadata.version('optkit')}, ortools ") in lines[0]
    md = (tmp_path / "rep" / "summary.md").read_text()
    assert "Measured with:" in md and f"--jobs: 3; time limit: 7 s" in md and "versions: not recorded" in md


def test_describe_names_each_missing_field() -> None:
    env = environment(jobs=None, executor="dask tcp://h:8786", time_limit=None)
    line = describe(env, [None])
    assert "--jobs: dask tcp://h:8786; time limit: none;" in line and f"cores: {os.cpu_count()};" in line
    assert describe(None, []) == ("machine: not recorded; cores: not recorded; --jobs: not recorded; "
                                  "time limit: not recorded; versions: not recorded")
    assert "time limit: 5 s, 60 s;" in describe(None, [60.0, 5.0, 5.0])
