"""rar-ddls exact solvers: CP-SAT = MILP = brute force, every schedule re-measured by ``evaluate``.

Instances: :mod:`tests.rar_ddls_cases` (seeded). CP-SAT runs with one worker and seed 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from formulations.rar_ddls import exact
from formulations.rar_ddls.bounds import lower_bound, rho_min
from formulations.rar_ddls.model import RarInstance, evaluate, simulate
from optkit.cli import main
from optkit.errors import InputError
from optkit.result import Status
from tests.rar_ddls_cases import brute_cases, cpsat_result, exact_cases, pair_case, tiny_case

EXACT = exact_cases()
BRUTE = brute_cases() + [(f"tiny-{s:02d}", tiny_case(s)) for s in (1, 9, 17, 33)]


def _check_schedule(inst: RarInstance, res) -> None:
    """The returned schedule is feasible, its completions are the simulator's, the reported
    objective is evaluate's makespan, and at a proven optimum the model's own objective and
    bound agree with it (Fact 2 of exact.py)."""
    ev = evaluate(inst, res.solution)
    assert ev.feasible, ev.violations
    assert res.objective == ev.objectives["makespan"]
    y = np.array([e["gpus_per_server"] for e in res.solution["jobs"]])
    out = simulate(inst, y, starts=[e["start"] for e in res.solution["jobs"]])
    assert [e["completion"] for e in res.solution["jobs"]] == out.completion.tolist()
    assert ev.metrics["within_horizon"]
    if res.status is Status.OPTIMAL:
        assert res.info["model_objective_s"] == pytest.approx(res.objective)
        assert res.bound == pytest.approx(res.objective, abs=1e-6)


@pytest.mark.parametrize("name,data", EXACT, ids=[n for n, _ in EXACT])
def test_cpsat_equals_highs(name: str, data: dict) -> None:
    inst = RarInstance.from_dict(data)
    c = cpsat_result(name, data)
    h = exact.run_highs(inst, seed=0, time_limit=60)
    assert c.status is Status.OPTIMAL, c.message
    assert h.status is Status.OPTIMAL, h.message
    assert c.objective == h.objective
    _check_schedule(inst, c)
    _check_schedule(inst, h)
    assert c.objective >= lower_bound(inst, "makespan") - 1e-9


def test_cases_exercise_contention() -> None:
    """The suite is not contention free: some optimum runs two split jobs on a shared server."""
    hit = [n for n, d in EXACT if cpsat_result(n, d).metrics["max_contention"] >= 2]
    assert len(hit) >= 2, hit


@pytest.mark.parametrize("name,data", BRUTE, ids=[n for n, _ in BRUTE])
def test_brute_force_agrees(name: str, data: dict) -> None:
    inst = RarInstance.from_dict(data)
    got = exact.brute_force(inst)
    assert got is not None
    value, sol = got
    ev = evaluate(inst, sol)
    assert ev.feasible and ev.objectives["makespan"] == value
    assert cpsat_result(name, data).objective == value
    if name not in dict(EXACT):  # the others meet HiGHS in test_cpsat_equals_highs
        h = exact.run_highs(inst, seed=0, time_limit=60)
        assert h.status is Status.OPTIMAL and h.objective == value


def test_pair_overlaps_when_contention_is_mild() -> None:
    """Two 4-GPU jobs on 3 x 3 GPUs: alone 8 slots each; together p = 2 (eq. 6) and phi 4 -> 3
    (eq. 9), 10 slots; in turn 16. The optimum overlaps them."""
    inst = RarInstance.from_dict(pair_case(0.2))
    res = exact.run_cpsat(inst, workers=1, seed=0)
    assert res.status is Status.OPTIMAL and res.objective == 10.0
    assert res.metrics["max_contention"] == 2
    assert [e["start"] for e in res.solution["jobs"]] == [0, 0]


def test_pair_runs_in_turn_when_contention_is_heavy() -> None:
    """Same jobs with degradation 3 (f(2) = 5): together phi 4 -> 1, 30 slots; in turn 16 is
    optimal, and a model blind to contention would overlap them."""
    inst = RarInstance.from_dict(pair_case(3.0))
    for res in (exact.run_cpsat(inst, workers=1, seed=0), exact.run_highs(inst, seed=0)):
        assert res.status is Status.OPTIMAL and res.objective == 16.0
        assert res.metrics["max_contention"] == 1
        _check_schedule(inst, res)


@pytest.mark.parametrize("name", ["tiny-03", "contention-7"])
def test_without_symmetry_breaking_and_horizon_cap_same_optimum(name: str) -> None:
    data = dict(EXACT)[name]
    inst = RarInstance.from_dict(data)
    ref = cpsat_result(name, data).objective
    res = exact.run_cpsat(inst, workers=1, seed=0, symmetry=False, tighten=False, time_limit=60)
    assert res.status is Status.OPTIMAL and res.objective == ref
    assert res.info["horizon_slots"] == inst.horizon
    res = exact.run_highs(inst, seed=0, symmetry=False, time_limit=60)
    assert res.status is Status.OPTIMAL and res.objective == ref


def test_greedy_schedule_is_feasible_and_an_upper_bound() -> None:
    for name, data in EXACT[:12]:
        inst = RarInstance.from_dict(data)
        starts, y, mk = exact.greedy_schedule(inst)
        out = simulate(inst, y, starts=starts)
        ev = evaluate(inst, {"jobs": [{"id": j.id, "start": int(starts[k]), "gpus_per_server": [int(v) for v in y[k]]}
                                      for k, j in enumerate(inst.jobs)]})
        assert ev.feasible and ev.metrics["makespan_slots"] == mk == int(out.completion.max())
        assert mk <= sum(rho_min(inst, j) for j in inst.jobs)
        assert mk * inst.slot_seconds >= cpsat_result(name, data).objective


@pytest.mark.parametrize("horizon", [9, 5])
def test_no_schedule_within_the_horizon_is_infeasible(horizon: int) -> None:
    """pair_case(0.2) needs 10 slots: horizon 9 is refuted by the solvers, 5 by the lower bound."""
    data = dict(pair_case(0.2), horizon=horizon)
    inst = RarInstance.from_dict(data)
    for res in (exact.run_cpsat(inst, workers=1, seed=0), exact.run_highs(inst, seed=0)):
        assert res.status is Status.INFEASIBLE and res.solution is None
        assert "horizon" in res.message
    assert exact.brute_force(inst) is None


@pytest.mark.parametrize("run", [exact.run_cpsat, exact.run_highs])
def test_objective_other_than_makespan_rejected(run) -> None:
    inst = RarInstance.from_dict(pair_case())
    with pytest.raises(InputError) as err:
        run(inst, objective="total_completion")
    assert err.value.field == "objective"
    with pytest.raises(InputError) as err:
        exact.brute_force(inst, "bogus")
    assert err.value.field == "objective"


def test_brute_force_refuses_large_instances(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = RarInstance.from_dict(tiny_case(0, jobs=6, servers=3))  # > 10^12 combinations
    with pytest.raises(InputError) as err:
        exact.brute_force(inst)
    assert err.value.field == "instance"
    monkeypatch.setattr(exact, "BRUTE_FORCE_MAX_NODES", 50)  # the node budget
    with pytest.raises(InputError, match="more than 50"):
        exact.brute_force(RarInstance.from_dict(pair_case(3.0)))


@pytest.mark.parametrize("algorithm", ["cpsat", "highs"])
def test_cli_solve_json_optimal(algorithm: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name, data = EXACT[3]
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(data))
    sol = tmp_path / "sol.json"
    argv = ["solve", "rar-ddls", str(path), "--algorithm", algorithm, "--json", "--out", str(sol),
            "--time-limit", "60", "--seed", "0"]
    if algorithm == "cpsat":
        argv += ["--param", "workers=1"]
    assert main(argv) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["status"] == "optimal" and obj["gap"] <= 1e-6
    ev = evaluate(RarInstance.from_dict(data), json.loads(sol.read_text()))
    assert ev.feasible and obj["objective"] == ev.objectives["makespan"]
    assert obj["objective"] == cpsat_result(name, data).objective


def test_cli_bad_objective_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(pair_case()))
    assert main(["solve", "rar-ddls", str(path), "--algorithm", "cpsat", "--objective", "total_completion"]) == 2
    assert "objective" in capsys.readouterr().err
