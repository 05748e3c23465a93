"""The command line: exit statuses, one-line errors, and ``solve --json``'s exact shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from optkit.cli import main
from tests.test_gpu_mapping_model import BAD_INPUTS, FIG2, _mutate

JSON_KEYS = ["problem", "algorithm", "status", "objective", "bound", "gap", "wall_time_s", "solution", "metrics", "params", "message"]


def _write(tmp_path: Path, data: object, name: str = "inst.json") -> str:
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return str(p)


def test_solve_json_prints_exactly_one_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, FIG2)
    assert main(["solve", "gpu-mapping", path, "--algorithm", "heavy-edge", "--json"]) == 0
    out = capsys.readouterr().out
    obj = json.loads(out)  # one object, nothing else on stdout
    assert list(obj) == JSON_KEYS
    assert obj["status"] == "feasible" and obj["objective"] == pytest.approx(1.2e6)
    assert obj["solution"] == {"assignment": [[0, 0], [0, 0], [1, 2]]}
    assert main(["solve", "gpu-mapping", path, "-a", "heavy-edge", "--objective", "alpha", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["objective"] == pytest.approx(0.03192) == obj["metrics"]["alpha_s"]


@pytest.mark.parametrize("path,value,field", BAD_INPUTS)
def test_each_validation_rule_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: list, value: object, field: str
) -> None:
    f = _write(tmp_path, _mutate(path, value))
    assert main(["solve", "gpu-mapping", f, "-a", "heavy-edge", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and field in lines[0] and "Traceback" not in captured.err
    assert main(["validate", f]) == 2


@pytest.mark.parametrize("argv,needle", [
    (["solve", "gpu-mapping", "{f}", "-a", "nope"], "algorithm"),
    (["solve", "gpu-mapping", "{f}", "-a", "heavy-edge", "--objective", "speed"], "objective"),
    (["solve", "knapsack", "{f}", "-a", "heavy-edge"], "problem"),
    (["solve", "gpu-mapping", "{missing}", "-a", "heavy-edge"], "cannot be read"),
    (["solve", "gpu-mapping", "{garbled}", "-a", "heavy-edge"], "not valid JSON"),
    (["solve", "gpu-mapping", "{f}", "-a", "heavy-edge", "--param", "novalue"], "--param"),
])
def test_other_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    good = _write(tmp_path, FIG2)
    garbled = tmp_path / "garbled.json"
    garbled.write_text("{\"problem\": ")
    argv = [a.format(f=good, missing=str(tmp_path / "missing.json"), garbled=garbled) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


def test_validate_with_solution(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _write(tmp_path, FIG2)
    sol = _write(tmp_path, {"assignment": [[0, 0], [0, 0], [1, 2]]}, "sol.json")
    assert main(["validate", f, "--solution", sol]) == 0
    assert "cut=1.2e+06" in capsys.readouterr().out
    bad = _write(tmp_path, {"assignment": [[0, 0], [0, 0], [0, 2]]}, "bad.json")
    assert main(["validate", f, "--solution", bad]) == 2
    assert "server 0 holds 5" in capsys.readouterr().err


def test_internal_failure_exits_1(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import optkit.formulations.gpu_mapping as gm

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("kaboom")

    algo = gm.FORMULATION.algorithms["heavy-edge"]
    monkeypatch.setitem(gm.FORMULATION.algorithms, "heavy-edge", type(algo)(**{**algo.__dict__, "run": boom}))  # type: ignore[arg-type]
    assert main(["solve", "gpu-mapping", _write(tmp_path, FIG2), "-a", "heavy-edge"]) == 1
    err = capsys.readouterr().err
    assert "internal error" in err and "kaboom" in err and "Traceback" not in err


def test_console_script_runs_as_a_process(tmp_path: Path) -> None:
    f = _write(tmp_path, _mutate(["servers"], [4, 1]))
    proc = subprocess.run([sys.executable, "-m", "optkit", "validate", f], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"optkit: error: {f}: gpu-mapping: servers must offer exactly the job's 6 replicas, but its free GPUs add up to 5"
    proc = subprocess.run([sys.executable, "-m", "optkit", "list"], capture_output=True, text=True)
    assert proc.returncode == 0 and "heavy-edge" in proc.stdout
