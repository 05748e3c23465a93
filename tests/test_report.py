"""Reports: counts, gaps against the best bound, conflicts, and the files written.

Rows are made by hand (no worker processes) and stored in a real SQLite result store.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from optkit import registry  # noqa: E402
from optkit.errors import InputError  # noqa: E402
from optkit import cli  # noqa: E402
from optkit.harness import ResultStore, Task  # noqa: E402
from optkit.harness.rows import make_row  # noqa: E402
from optkit.instances import instance_hash  # noqa: E402
from optkit.report import build_report, format_table, summarize, to_markdown  # noqa: E402
from tests.plugins import sleepy  # noqa: E402


@pytest.fixture(autouse=True)
def _sleepy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    registry.all_formulations()
    monkeypatch.setitem(registry._registered, "sleepy", sleepy.FORMULATION)
    # lower bounds run in a child process (optkit.harness.bounds), which finds the plug-in here
    monkeypatch.setenv("OPTKIT_FORMULATIONS", "tests.plugins.sleepy:FORMULATION")


def row(size: int, algorithm: str, status: str, objective: float | None, bound: float | None = None, *,
        seed: int = 0, wall: float = 0.1, objective_name: str = "cost") -> dict[str, Any]:
    data = {"problem": "sleepy", "size": size, "sleep": 0.0}
    task = Task("sleepy", f"s{size}", data, instance_hash(data), algorithm, objective_name, {}, seed, 5.0)
    return make_row(task, status=status, objective=objective, bound=bound, wall_time_s=wall,
                    solution=None if objective is None else {"x": 0})


def store_with(path: Path, rows: list[dict[str, Any]]) -> Path:
    with ResultStore(path) as store:
        for r in rows:
            data = {"problem": "sleepy", "size": int(r["instance_name"][1:]), "sleep": 0.0}
            store.add_instances([(r["instance_hash"], "sleepy", r["instance_name"], data)])
            store.put_row(r)
    return path


# size 10: optimum 10 (cost); lower_bound 5. size 20: nobody proves more than lower_bound... except partial.
ROWS = [
    row(10, "heur", "feasible", 15.0, wall=0.01),
    row(10, "heur", "feasible", 12.0, seed=1, wall=0.02),
    row(10, "exact", "optimal", 10.0, 10.0, wall=1.0),
    row(20, "heur", "feasible", 40.0, wall=0.03),
    row(20, "exact", "time_limit", 30.0, 16.0, wall=5.0),
    row(20, "exact", "error", None, wall=0.5, seed=1),  # a second seed of exact, errored
    row(20, "heur", "time_limit", None, wall=7.0, seed=2),  # killed: no objective
]


def test_summary_counts_and_gaps(tmp_path: Path) -> None:
    db = store_with(tmp_path / "r.sqlite", ROWS)
    rep = build_report(db)
    by = {(s["objective"], s["algorithm"]): s for s in rep.summary}
    heur, exact = by[("cost", "heur")], by[("cost", "exact")]
    assert (heur["runs"], heur["feasible"], heur["time_limit"], heur["error"], heur["optimal"]) == (4, 3, 1, 0, 0)
    assert (exact["runs"], exact["optimal"], exact["time_limit"], exact["error"]) == (3, 1, 1, 1)
    # heur gaps: 5/15, 2/12 (bound 10); 24/40 (bound 16 from exact's time_limit row beats lower_bound 10)
    assert heur["gap_median"] == pytest.approx(5 / 15)
    assert heur["gap_max"] == pytest.approx(24 / 40)
    assert exact["gap_median"] == pytest.approx(14 / 30 / 2)  # median of 0 and 14/30
    assert exact["gap_max"] == pytest.approx(14 / 30)
    assert heur["wall_time_median_s"] == pytest.approx(0.025) and heur["wall_time_max_s"] == 7.0
    gaps = {(r["instance_name"], r["algorithm"], r["seed"]): r["gap"] for r in rep.rows}
    assert gaps[("s20", "exact", 1)] is None and gaps[("s20", "heur", 2)] is None
    assert not rep.conflicts
    assert [s["algorithm"] for s in rep.summary] == ["exact", "heur"]  # by name when not registered
    table = format_table(rep.summary)
    assert "33.33%" in table and "60.00%" in table


def test_lower_bound_takes_part_and_new_rows_tighten_old_gaps(tmp_path: Path) -> None:
    db = store_with(tmp_path / "r.sqlite", [row(10, "heur", "feasible", 15.0)])
    first = build_report(db).rows[0]
    assert first["best_bound"] == 5.0 and "lower_bound" in first["best_bound_source"]  # sleepy: size / 2
    assert first["gap"] == pytest.approx(10 / 15)
    store_with(db, [row(10, "exact", "optimal", 10.0, 10.0)])
    later = {r["algorithm"]: r for r in build_report(db).rows}
    assert later["heur"]["gap"] == pytest.approx(5 / 15) and later["heur"]["best_bound"] == 10.0


def test_bound_above_a_feasible_objective_is_flagged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = ROWS + [row(10, "liar", "time_limit", 14.0, 11.0)]  # 11 > the optimum 10
    db = store_with(tmp_path / "r.sqlite", rows)
    rep = build_report(db)
    assert len(rep.conflicts) == 1
    c = rep.conflicts[0]
    assert (c.instance_name, c.bound, c.objective) == ("s10", 11.0, 10.0)
    assert "liar" in c.bound_source and "exact" in c.objective_source
    assert "BUG" in to_markdown(rep) and "Bound conflicts (1)" in to_markdown(rep)
    assert cli.main(["report", "--db", str(db)]) == 0
    assert "BOUND CONFLICTS (1)" in capsys.readouterr().out


def test_report_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = ROWS + [row(10, "heur", "feasible", 3.0, objective_name="x"), row(10, "exact", "optimal", 1.0, 1.0, objective_name="x")]
    db = store_with(tmp_path / "r.sqlite", rows)
    out = tmp_path / "rep"
    assert cli.main(["report", "--db", str(db), "--out", str(out), "--problem", "sleepy"]) == 0
    printed = capsys.readouterr().out
    assert "heur" in printed and "gap med" in printed
    names = {p.name for p in out.iterdir()}
    assert names == {"summary.md", "summary.csv", "rows.csv", "pairs.csv"} | {
        f"{kind}_sleepy_{o}.png" for kind in ("gap", "time", "anytime", "profile") for o in ("cost", "x")} | {
        "profile_sleepy_cost.csv", "profile_sleepy_x.csv"}
    for png in out.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 2000
    with (out / "summary.csv").open() as fh:
        summary = list(csv.DictReader(fh))
    assert [(s["objective"], s["algorithm"], s["runs"], s["feasible"]) for s in summary] == [
        ("cost", "exact", "3", "0"), ("cost", "heur", "4", "3"), ("x", "exact", "1", "0"), ("x", "heur", "1", "1")]
    assert float(summary[1]["gap_max"]) == pytest.approx(0.6)
    with (out / "rows.csv").open() as fh:
        all_rows = list(csv.DictReader(fh))
    assert len(all_rows) == len(rows)
    assert {r["status"] for r in all_rows} == {"feasible", "optimal", "time_limit", "error"}
    assert json.loads(next(r for r in all_rows if r["solution"])["solution"]) == {"x": 0}
    md = (out / "summary.md").read_text()
    # 4 summary rows and 4 paired comparisons (exact/heur on gap and time, per objective)
    assert md.count("| sleepy |") == 8 and "![gap_sleepy_cost](gap_sleepy_cost.png)" in md


def test_report_on_a_missing_store_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.sqlite"
    with pytest.raises(InputError, match="does not exist"):
        build_report(missing)
    assert cli.main(["report", "--db", str(missing)]) == 2
    assert "does not exist" in capsys.readouterr().err and not missing.exists()
    assert cli.main(["report", "--db", str(store_with(tmp_path / "r.sqlite", ROWS)), "--problem", "nope"]) == 2


def test_store_round_trip_and_lexicographic_objective(tmp_path: Path) -> None:
    r = row(10, "lex", "feasible", None)
    r["objective"], r["bound"] = [3.0, 1.5], [2.0, 0.0]
    r["metrics"] = {"per_stage": [1, 2]}
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.put_row(r)
        store.put_row({**r, "status": "error"}, replace=False)  # first finish wins
        back = store.rows()[0]
        assert store.done_keys() == {r["key"]} and store.done_keys(include_failed=False) == {r["key"]}
    assert back["objective"] == [3.0, 1.5] and back["bound"] == [2.0, 0.0] and back["status"] == "feasible"
    assert back["metrics"] == {"per_stage": [1, 2]} and back["params"] == {}
    s = summarize([{**back, "gap": None}])[0]
    assert s["runs"] == 1 and s["gap_median"] is None


def test_report_does_not_import_compare() -> None:
    """One direction: compare writes runs and calls the report; the report reads stored runs and
    computes gaps with optkit.harness.gaps, and neither it nor gaps imports compare."""
    import ast

    root = Path(__file__).resolve().parents[1] / "optkit"
    for module, banned in (("report.py", {"optkit.harness.compare"}),
                           ("harness/gaps.py", {"optkit.harness.compare", "optkit.report"})):
        tree = ast.parse((root / module).read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert not imported & banned, f"{module} imports {imported & banned}"
