"""The shipped ``small`` suite: three independent exact methods agree, nothing beats them.

On every file of ``instances/gpu-mapping/small`` and for both objectives: CP-SAT, the HiGHS MILP
and brute-force enumeration prove the same optimum; every heuristic and peer is never better;
the formulation's lower bound is never above it. A subset also goes through the command line
(``optkit solve ... --algorithm cpsat|highs --json``), the issue's acceptance check.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optkit.formulations.gpu_mapping import FORMULATION
from optkit.formulations.gpu_mapping.bounds import lower_bound
from optkit.cli import main
from optkit.result import Status
from optkit.solve import solve

SMALL = sorted((Path(__file__).resolve().parents[1] / "instances" / "gpu-mapping" / "small").glob("*.json"))
OTHERS = [a for a, algo in FORMULATION.algorithms.items() if algo.kind != "exact" and algo.available()]
REL = 1e-6


def test_the_suite_is_shipped() -> None:
    assert len(SMALL) >= 30


@pytest.mark.parametrize("objective", ["cut", "alpha"])
@pytest.mark.parametrize("path", SMALL, ids=[p.stem for p in SMALL])
def test_exact_methods_agree_and_bound_everything(path: Path, objective: str) -> None:
    data = json.loads(path.read_text())
    results = {a: solve("gpu-mapping", data, a, objective=objective, time_limit=60, seed=0)
               for a in ("brute-force", "cpsat", "highs")}
    for a, r in results.items():
        assert r.status is Status.OPTIMAL, (a, r.message)
    opt = results["brute-force"].objective
    for a in ("cpsat", "highs"):
        assert results[a].objective == pytest.approx(opt, rel=REL, abs=1e-12), a
    inst = FORMULATION.instance_from_dict(data)
    assert lower_bound(inst, objective) <= opt * (1 + REL) + 1e-12
    for a in OTHERS:
        r = solve("gpu-mapping", data, a, objective=objective, seed=1)
        assert r.status is Status.FEASIBLE, (a, r.message)
        assert r.objective >= opt * (1 - REL) - 1e-12, (a, r.objective, opt)


@pytest.mark.parametrize("algorithm", ["cpsat", "highs"])
@pytest.mark.parametrize("objective", ["cut", "alpha"])
def test_cli_solve_json_returns_the_true_optimum(algorithm: str, objective: str, capsys: pytest.CaptureFixture[str]) -> None:
    for path in SMALL[::7]:
        data = json.loads(path.read_text())
        truth = solve("gpu-mapping", data, "brute-force", objective=objective).objective
        assert main(["solve", "gpu-mapping", str(path), "--algorithm", algorithm, "--objective", objective, "--json"]) == 0
        obj = json.loads(capsys.readouterr().out)
        assert obj["status"] == "optimal" and obj["problem"] == "gpu-mapping" and obj["algorithm"] == algorithm
        assert obj["objective"] == pytest.approx(truth, rel=REL, abs=1e-12)
        assert obj["bound"] <= obj["objective"] and obj["gap"] <= 1e-6
        assert obj["metrics"]["objective." + objective] == obj["objective"]
