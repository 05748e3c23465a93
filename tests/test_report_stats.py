"""Anytime evidence and the comparison statistics of reports (issue 25 items 1-3, 5).

Hand-computed values: shifted geometric mean, primal and primal-dual integrals of a hand-made
trajectory, a performance profile of a tiny table, a Wilcoxon p-value counted by hand; solver
trajectories against ``evaluate``; reports on an old-schema store and on disjoint algorithms.
"""

from __future__ import annotations

import csv
import json
import math
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from optkit import cli, registry  # noqa: E402
from optkit.anytime import finish_trajectory, monotone, primal_dual_integral, primal_gap, primal_integral, recording  # noqa: E402
from optkit.harness import ResultStore  # noqa: E402
from optkit.harness.stats import (  # noqa: E402
    bootstrap_median_ci, paired_comparison, performance_profile, profile_curve, shifted_geometric_mean,
)
from optkit.report import build_report, write_report  # noqa: E402
from tests.plugins import sleepy  # noqa: E402
from tests.test_report import row, store_with  # noqa: E402


@pytest.fixture(autouse=True)
def _sleepy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    registry.all_formulations()
    monkeypatch.setitem(registry._registered, "sleepy", sleepy.FORMULATION)
    monkeypatch.setenv("OPTKIT_FORMULATIONS", "tests.plugins.sleepy:FORMULATION")


# ----------------------------------------------------------------------------- statistics by hand
def test_shifted_geometric_mean_by_hand() -> None:
    assert shifted_geometric_mean([0.0, 30.0]) == pytest.approx(math.sqrt(10 * 40) - 10)  # = 10
    assert shifted_geometric_mean([1.0, 2.0, 4.0]) == pytest.approx((11 * 12 * 14) ** (1 / 3) - 10)
    assert shifted_geometric_mean([1.0, 4.0], shift=0.0) == pytest.approx(2.0)
    assert shifted_geometric_mean([]) is None


# trajectory: no incumbent until 2 s, then 20 (bound 5), 12 (bound 10) at 6 s, 10 (bound 10) at 9 s
TRAJ = [[2.0, 20.0, 5.0], [6.0, 12.0, 10.0], [9.0, 10.0, 10.0]]


def test_primal_integral_of_a_hand_made_trajectory() -> None:
    # gap 1 on [0,2), |10-20|/20 = 0.5 on [2,6), 2/12 on [6,9), 0 on [9,10]
    assert primal_integral(TRAJ, 10.0, 10.0) == pytest.approx(2 * 1 + 4 * 0.5 + 3 * (2 / 12))
    # the horizon cuts the integral: [0,2) and [2,4)
    assert primal_integral(TRAJ, 10.0, 4.0) == pytest.approx(2 + 2 * 0.5)
    # primal-dual: 1 on [0,2), 15/20 on [2,6), 2/12 on [6,9), 0 after
    assert primal_dual_integral(TRAJ, 10.0) == pytest.approx(2 + 4 * 0.75 + 3 * (2 / 12))
    assert primal_integral([], 10.0, 7.0) == 7.0  # never an incumbent: gap 1 throughout
    assert primal_gap(0.0, 0.0) == 0.0 and primal_gap(-1.0, 2.0) == 1.0 and primal_gap(None, 3.0) == 1.0


def test_trajectory_made_monotone_and_closed_by_the_final_point() -> None:
    pts = [(0.5, 30.0, 1.0), (1.0, 35.0, 0.5), (2.0, 25.0, 4.0)]
    assert monotone(pts) == [(0.5, 30.0, 1.0), (2.0, 25.0, 4.0)]  # (1.0, ...) improves nothing
    # the final point is the evaluated objective at the run's wall time
    assert finish_trajectory(pts, 3.0, 24.0, 4.5) == [[0.5, 30.0, 1.0], [2.0, 25.0, 4.0], [3.0, 24.0, 4.5]]


def test_performance_profile_of_a_tiny_table() -> None:
    costs = {"A": {1: 1.0, 2: 4.0, 3: None}, "B": {1: 2.0, 2: 2.0, 3: 3.0}, "C": {1: None, 2: 8.0, 3: math.inf}}
    ratios = performance_profile(costs)
    # instance 1: best 1 (A); 2: best 2 (B); 3: best 3 (B)
    assert ratios == {"A": [1.0, 2.0, math.inf], "B": [1.0, 1.0, 2.0], "C": [4.0, math.inf, math.inf]}
    assert profile_curve(ratios["A"]) == [(1.0, pytest.approx(1 / 3)), (2.0, pytest.approx(2 / 3))]
    assert profile_curve(ratios["B"]) == [(1.0, pytest.approx(2 / 3)), (2.0, 1.0)]
    assert profile_curve(ratios["C"]) == [(4.0, pytest.approx(1 / 3))]
    with pytest.raises(ValueError, match="other instances"):
        performance_profile({"A": {1: 1.0}, "B": {2: 1.0}})


def test_bootstrap_interval_is_seeded() -> None:
    diffs = [math.sin(3.7 * k) + 0.01 * k for k in range(40)]  # 40 distinct values
    ci = bootstrap_median_ci(diffs, seed=0, resamples=200)
    assert ci == bootstrap_median_ci(diffs, seed=0, resamples=200)
    assert ci != bootstrap_median_ci(diffs, seed=1, resamples=200)
    med = sorted(diffs)[19] / 2 + sorted(diffs)[20] / 2
    assert ci is not None and ci[0] < med < ci[1] and min(diffs) < ci[0] and ci[1] < max(diffs)
    assert bootstrap_median_ci([2.0, 2.0, 2.0], seed=5) == (2.0, 2.0)
    assert bootstrap_median_ci([]) is None


def test_wilcoxon_against_scipy_on_a_hand_case() -> None:
    from scipy.stats import wilcoxon

    a = {k: float(k) for k in range(1, 7)}
    b = {1: 2.0, 2: 0.0, 3: 6.0, 4: 0.0, 5: 10.0, 6: 12.0}  # a - b = -1, 2, -3, 4, -5, -6
    pc = paired_comparison("a", "b", "gap", a, b)
    assert pc is not None and (pc.wins, pc.ties, pc.losses, pc.n, pc.n_finite) == (4, 0, 2, 6, 6)
    # W+ = 2 + 4 = 6; 14 of the 64 sign patterns have a rank sum <= 6, two-sided: 28/64
    assert pc.p_value == pytest.approx(28 / 64)
    assert pc.p_value == pytest.approx(wilcoxon([-1, 2, -3, 4, -5, -6]).pvalue)
    assert pc.median_diff == pytest.approx(-2.0)
    # failures: a value beats none, none ties none; they stay out of the differences
    pc2 = paired_comparison("a", "b", "gap", {1: 1.0, 2: None, 3: None}, {1: 1.0, 2: 3.0, 3: None})
    assert pc2 is not None and (pc2.wins, pc2.ties, pc2.losses, pc2.n_finite, pc2.p_value) == (0, 2, 1, 1, None)
    assert paired_comparison("a", "b", "gap", {1: 1.0}, {2: 1.0}) is None


# ----------------------------------------------------------------------------- solver trajectories
# (problem, instance, objective): a time resolution with total_flow's constant offset (ddlwmp),
# scaled and rounded coefficients (gpu-mapping), slots (rar-ddls), a lexicographic key (nimp)
CONVERTED = [
    ("ddlwmp", "ddlwmp/tiny/tiny_n3_m2_s0.json", "total_flow"),
    ("ddlwmp", "ddlwmp/tiny/tiny_n3_m2_s0.json", "makespan"),
    ("gpu-mapping", "gpu-mapping/small/bert-large_pipe3x3_tree_m3_s22.json", "alpha"),
    ("gpu-mapping", "gpu-mapping/small/bert-large_pipe3x3_tree_m3_s22.json", "cut"),
    ("rar-ddls", "rar-ddls/tiny/tiny-03.json", "makespan"),
    ("nimp", "nimp/tiny/tiny-01.json", "lex-cross"),
]


@pytest.mark.parametrize("solver", ["run_cpsat", "run_highs"])
@pytest.mark.parametrize(("problem", "path", "objective"), CONVERTED)
def test_solver_points_are_in_objective_units(problem: str, path: str, objective: str, solver: str) -> None:
    """Each formulation converts its model's units: the solver's final incumbent, converted, is
    evaluate's objective (the scalar key of a lexicographic one)."""
    import importlib

    f = registry.get(problem)
    exact = importlib.import_module(f"optkit.formulations.{problem.replace('-', '_')}.exact")
    inst = f.instance_from_dict(json.loads((REPO / "instances" / path).read_text()))
    with recording() as points:
        r = getattr(exact, solver)(inst, objective=objective, time_limit=20, seed=0)
    assert r.status.value == "optimal"
    ev = f.evaluate(inst, r.solution)
    value = ev.metrics.get(f"objective_key.{objective}", ev.objectives[objective])
    ts = [p[0] for p in points]
    assert ts == sorted(ts) and len(points) >= 2
    # within the model's resolution (ddlwmp: 1 us per job, about 4e-7 of total_flow here)
    assert points[-1][1] == pytest.approx(value, rel=1e-6)


def test_cpsat_run_trajectory_is_monotone_and_ends_at_the_run() -> None:
    from optkit.solve import solve

    data = json.loads((REPO / "instances/ddlwmp/tiny/tiny_n3_m2_s12.json").read_text())
    r = solve("ddlwmp", data, "cpsat", objective="total_flow", time_limit=20, seed=0)
    traj = r.anytime
    assert traj is not None and len(traj) >= 2
    incs = [p[1] for p in traj if p[1] is not None]
    bnds = [p[2] for p in traj if p[2] is not None]
    assert [p[0] for p in traj] == sorted(p[0] for p in traj)
    assert incs == sorted(incs, reverse=True) and bnds == sorted(bnds)
    assert traj[-1] == [r.wall_time_s, r.objective, r.bound]


def test_a_heuristic_is_one_point_at_its_finish() -> None:
    from optkit.solve import solve

    data = json.loads((REPO / "instances/ddlwmp/tiny/tiny_n3_m2_s12.json").read_text())
    r = solve("ddlwmp", data, "a-srpt", objective="total_flow", seed=0)
    assert r.anytime == [[r.wall_time_s, r.objective, None]]


def test_highs_callback_reaches_through_pyomo() -> None:
    """A knapsack HiGHS solves in several improving steps: the callbacks record them before the end."""
    import pyomo.environ as pyo

    from optkit.solvers.milp import solve_pyomo_model

    w = [12, 7, 11, 8, 9, 14, 6, 13, 10, 5, 15, 4] * 3
    v = [24, 13, 23, 15, 16, 29, 11, 25, 21, 9, 30, 7] * 3
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(len(w)), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(wi * m.x[i] for i, wi in enumerate(w)) <= 101)
    m.o = pyo.Objective(expr=500 - sum(vi * m.x[i] for i, vi in enumerate(v)))  # a constant offset too
    out = solve_pyomo_model(m, time_limit=30, seed=1)
    assert out.status.value == "optimal"
    before_end = [p for p in out.trajectory[:-1] if p[1] is not None]
    assert before_end, "no incumbent recorded by highspy's callbacks"
    assert min(p[1] for p in before_end) == pytest.approx(out.objective)  # offset included
    assert out.trajectory[-1][1:] == (out.objective, out.bound)


# ----------------------------------------------------------------------------- reports: bad input
_V1_ROWS = """CREATE TABLE rows (
    key TEXT PRIMARY KEY, instance_hash TEXT NOT NULL, problem TEXT NOT NULL, instance_name TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '', algorithm TEXT NOT NULL, objective_name TEXT NOT NULL,
    params TEXT NOT NULL DEFAULT '{}', seed INTEGER, time_limit REAL, status TEXT NOT NULL, objective REAL,
    bound REAL, wall_time_s REAL, solution TEXT, metrics TEXT NOT NULL DEFAULT '{}',
    info TEXT NOT NULL DEFAULT '{}', message TEXT NOT NULL DEFAULT '', finished_at TEXT NOT NULL)"""


def _old_store(path: Path, rows: list[dict[str, Any]]) -> Path:
    """A schema-1 store (no anytime column), as optkit wrote it before issue 25."""
    conn = sqlite3.connect(path)
    conn.execute(_V1_ROWS)
    cols = [c for c in rows[0] if c != "anytime"]
    for r in rows:
        vals = [json.dumps(r[c]) if isinstance(r[c], dict) else r[c] for c in cols]
        conn.execute(f"INSERT INTO rows ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})", vals)
    conn.execute("PRAGMA user_version=1")
    conn.commit()
    conn.close()
    return path


OLD = [row(10, "heur", "feasible", 15.0, wall=0.01), row(10, "exact", "optimal", 10.0, 10.0, wall=1.0),
       row(20, "heur", "feasible", 40.0, wall=0.03), row(20, "exact", "time_limit", 30.0, 16.0, wall=5.0)]


def test_report_on_an_old_schema_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _old_store(tmp_path / "old.sqlite", OLD)
    out = tmp_path / "rep"
    assert cli.main(["report", "--db", str(db), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "no run in this store has an anytime record" in printed and "exact 2, heur 2" in printed
    assert "sleepy s10 heur seed 0" in printed
    names = {p.name for p in out.iterdir()}
    assert "anytime_sleepy_cost.png" not in names  # nothing to draw
    assert {"profile_sleepy_cost.png", "profile_sleepy_cost.csv", "pairs.csv", "gap_sleepy_cost.png"} <= names
    with (out / "summary.csv").open() as fh:
        s = {r["algorithm"]: r for r in csv.DictReader(fh)}
    assert s["exact"]["primal_integral_median_s"] == "" and s["exact"]["solved"] == "1"
    # charged times: exact 1.0 and the limit 5.0 (time_limit): sgm with shift 10
    assert float(s["exact"]["time_sgm_s"]) == pytest.approx(math.sqrt(11 * 15) - 10)
    # the store was migrated in place: a new run keeps its record beside the old ones
    with ResultStore(db) as store:
        store.put_row(row(10, "new", "feasible", 11.0, wall=0.5))
    rep = build_report(db)
    new = next(r for r in rep.rows if r["algorithm"] == "new")
    assert new["anytime"] == [[0.5, 11.0, None]] and new["primal_integral_s"] == pytest.approx(0.5 + 4.5 / 11)
    assert any("4 of 5 runs have no anytime record" in n for n in rep.notes)
    assert "anytime_sleepy_cost.png" in {p.name for p in write_report(rep, tmp_path / "rep2")}


def test_algorithms_without_a_common_instance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = store_with(tmp_path / "r.sqlite", [row(10, "a", "feasible", 12.0), row(20, "b", "feasible", 25.0)])
    rep = build_report(db)
    assert rep.pairs == [] and rep.profiles == {}
    assert any("no instance in common, not compared: a / b" in n for n in rep.notes)
    assert any("performance profiles not drawn" in n for n in rep.notes)
    assert cli.main(["report", "--db", str(db), "--out", str(tmp_path / "rep")]) == 0
    assert "no instance in common" in capsys.readouterr().out


def test_report_of_a_store_without_runs_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "empty.sqlite"
    ResultStore(db).close()
    assert cli.main(["report", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "holds no runs" in err and len(err.strip().splitlines()) == 1


def test_report_pairs_and_profiles_from_the_store(tmp_path: Path) -> None:
    """Two instances, exact solves both (one within the limit), heur is faster but not optimal."""
    rows = [row(10, "heur", "feasible", 12.0, wall=0.01), row(10, "exact", "optimal", 10.0, 10.0, wall=2.0),
            row(20, "heur", "feasible", 22.0, wall=0.02), row(20, "exact", "optimal", 20.0, 20.0, wall=4.0)]
    rep = build_report(store_with(tmp_path / "r.sqlite", rows))
    prof = rep.profiles[("sleepy", "cost")]
    assert prof["ratios"]["time"] == {"exact": [1.0, 1.0], "heur": [math.inf, math.inf]}
    assert prof["ratios"]["gap"]["heur"] == pytest.approx([1 + 2 / 12, 1 + 2 / 22])
    gap = next(p for p in rep.pairs if p["measure"] == "gap")
    assert (gap["a"], gap["b"], gap["wins"], gap["losses"]) == ("exact", "heur", 2, 0)
    assert gap["median_diff"] == pytest.approx(-(2 / 12 + 2 / 22) / 2)


def test_readme_report_figures_are_committed() -> None:
    """README use 1 shows a report's gap-over-time plot and performance profile: committed PNGs."""
    import re

    readme = (REPO / "README.md").read_text()
    images = re.findall(r"!\[[^\]]*\]\((docs/img/report-example/[^)]+\.png)\)", readme)
    assert {Path(p).name for p in images} == {"anytime_gpu-mapping_alpha.png", "profile_gpu-mapping_alpha.png"}
    for p in images:
        assert (REPO / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
