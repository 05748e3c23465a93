"""ddlwmp through the engine: registration, every policy via solve, and ``optkit simulate``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optkit.formulations.ddlwmp import FORMULATION
from optkit.formulations.ddlwmp.model import DdlwmpInstance, evaluate
from optkit import registry
from optkit.cli import main
from optkit.result import Status
from optkit.solve import solve

POLICIES = [a for a, algo in FORMULATION.algorithms.items() if algo.kind != "exact"]


def test_registered_with_every_policy_and_exact_solver() -> None:
    f = registry.get("ddlwmp")
    assert set(POLICIES) == {"a-srpt", "a-srpt-perfect", "spjf", "spwf", "wcs-duration", "wcs-workload",
                             "wcs-subtime", "fifo"}
    assert {"cpsat", "highs"} <= set(f.algorithms)
    assert f.default_objective == "total_completion"


@pytest.mark.parametrize("policy", POLICIES)
def test_every_policy_through_solve_on_tiny(policy: str) -> None:
    for name, data in FORMULATION.suites["tiny"].build()[:8]:
        res = solve("ddlwmp", data, policy, seed=0)
        assert res.status is Status.FEASIBLE, (name, res.message)
        ev = evaluate(DdlwmpInstance.from_dict(data), res.solution)
        assert ev.feasible and res.objective == pytest.approx(ev.objectives["total_completion"])


def test_simulate_writes_a_schedule_that_evaluates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, data = FORMULATION.suites["tiny"].build()[0]
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(data))
    out = tmp_path / "s.json"
    assert main(["simulate", "ddlwmp", str(workload), "--policy", "a-srpt", "--predictor", "mean",
                 "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["status"] == "feasible" and summary["prediction"]["predictor"] == "mean"
    schedule = json.loads(out.read_text())
    # the predictions were filled before the run; the schedule is valid for the workload as given
    ev = evaluate(DdlwmpInstance.from_dict(data), schedule)
    assert ev.feasible and summary["objective"] == pytest.approx(ev.objectives["total_completion"])


@pytest.mark.parametrize("argv,needle", [
    (["simulate", "ddlwmp", "{w}", "--policy", "nope"], "algorithm"),
    (["simulate", "ddlwmp", "{w}", "--policy", "fifo", "--predictor", "oracle"], "--predictor"),
    (["simulate", "gpu-mapping", "{w}", "--policy", "fifo"], "problem"),
])
def test_simulate_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    _, data = FORMULATION.suites["tiny"].build()[0]
    w = tmp_path / "w.json"
    w.write_text(json.dumps(data))
    assert main([a.format(w=w) for a in argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("algorithm", ["cpsat", "highs"])
def test_cli_solve_json_is_optimal_on_shipped_tiny(algorithm: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shipped = sorted((Path(__file__).resolve().parents[1] / "instances" / "ddlwmp" / "tiny").glob("*.json"))
    assert len(shipped) >= 30
    for path in shipped[::9]:
        sol = tmp_path / "sol.json"
        assert main(["solve", "ddlwmp", str(path), "--algorithm", algorithm, "--json", "--out", str(sol),
                     "--time-limit", "60"]) == 0
        obj = json.loads(capsys.readouterr().out)
        assert obj["status"] == "optimal" and obj["gap"] <= 1e-6
        ev = evaluate(DdlwmpInstance.from_dict(json.loads(path.read_text())), json.loads(sol.read_text()))
        assert ev.feasible and obj["objective"] == pytest.approx(ev.objectives["total_completion"])
