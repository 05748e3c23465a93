"""nimp through the CLI: ``optkit solve nimp FILE --algorithm cpsat --json`` prints the
lexicographic objective as a list; infeasible files say so; bad input exits 2 naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optkit.formulations.nimp.exact import brute_force
from optkit.formulations.nimp.model import NimpInstance, evaluate
from optkit import registry
from optkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIG1 = ROOT / "instances" / "nimp" / "paper" / "fig1.json"
TINY = sorted((ROOT / "instances" / "nimp" / "tiny").glob("*.json"))


def test_registered() -> None:
    f = registry.get("nimp")
    assert {"titan", "elasticflow", "hived", "tiresias", "cpsat", "highs", "brute-force"} <= set(f.algorithms)
    assert f.objectives == ("lex", "lex-cross") and f.default_objective == "lex"


@pytest.mark.parametrize("algorithm", ["cpsat", "highs"])
def test_solve_json_fig1(algorithm: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sol = tmp_path / "sol.json"
    argv = ["solve", "nimp", str(FIG1), "--algorithm", algorithm, "--json", "--out", str(sol)]
    if algorithm == "cpsat":
        argv += ["--param", "workers=1"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "optimal" and out["objective"] == [0, 2]
    assert out["bound"] == 2.0 and out["gap"] == 0.0  # key idle*(M+1) + used
    assert evaluate(NimpInstance.from_dict(json.loads(FIG1.read_text())), json.loads(sol.read_text())).feasible


def test_solve_json_lex_cross(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "nimp", str(FIG1), "--algorithm", "cpsat", "--objective", "lex-cross", "--json",
                 "--param", "workers=1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "optimal" and out["objective"] == [0, 2, 1.0e8]


def test_solve_json_on_shipped_tiny(capsys: pytest.CaptureFixture[str]) -> None:
    seen = set()
    for path in TINY:
        bf = brute_force(NimpInstance.from_dict(json.loads(path.read_text())))
        assert main(["solve", "nimp", str(path), "--algorithm", "cpsat", "--json", "--param", "workers=1"]) == 0
        out = json.loads(capsys.readouterr().out)
        if bf is None:
            assert out["status"] == "infeasible" and out["objective"] is None and out["solution"] is None
        else:
            assert out["status"] == "optimal" and out["objective"] == list(bf[1])
        seen.add(out["status"])
    assert seen == {"optimal", "infeasible"}


def test_validate_prints_the_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sol = tmp_path / "s.json"
    sol.write_text(json.dumps({"machine_of_worker": [1, 2, 1, 2]}))
    assert main(["validate", str(FIG1), "--solution", str(sol)]) == 0
    assert "lex=[0, 2]" in capsys.readouterr().out


@pytest.mark.parametrize("edit,field", [
    (lambda d: d["machines"][1].update(idle_gpus=9), "machines[1].idle_gpus"),
    (lambda d: d.update(pair_capacity_bytes=-1), "pair_capacity_bytes"),
    (lambda d: d["job"].update(workers=0), "job.workers"),
    (lambda d: d.update(pair_capacity_bytes=[[0, 1], [1, 0]]), "pair_capacity_bytes"),
    (lambda d: d["job"].update(gpu_model="a100"), "job.gpu_model"),
])
def test_bad_input_exits_2(edit, field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = json.loads(FIG1.read_text())
    edit(d)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    assert main(["solve", "nimp", str(bad), "--algorithm", "titan"]) == 2
    err = capsys.readouterr().err
    assert field in err and len(err.strip().splitlines()) == 1


def test_generate_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "nimp", "--suite", "tiny", "--out", str(tmp_path)]) == 0
    written = sorted(p.name for p in tmp_path.glob("*.json"))
    assert written == [p.name for p in TINY]
    assert "wrote 36 nimp instances" in capsys.readouterr().out
    assert main(["generate", "nimp", "--param", "kind=medium", "--seed", "1"]) == 0
    assert NimpInstance.from_dict(json.loads(capsys.readouterr().out)).N == 16
