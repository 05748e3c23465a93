"""Engine pieces: instance hashing and loading, the registry, gaps, and solve's use of evaluate."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import optkit
from optkit import registry
from optkit.errors import InputError
from optkit.formulation import Algorithm
from optkit.instances import instance_hash, load_instance
from optkit.result import Result, Status, relative_gap
from optkit.solve import solve
from tests.test_gpu_mapping_model import FIG2


def test_hash_ignores_key_order_and_formatting(tmp_path: Path) -> None:
    shuffled = json.loads(json.dumps(FIG2))
    shuffled = {k: shuffled[k] for k in reversed(list(shuffled))}
    assert instance_hash(shuffled) == instance_hash(FIG2)
    changed = json.loads(json.dumps(FIG2))
    changed["servers"] = [4, 1, 1][::-1]
    assert instance_hash(changed) != instance_hash(FIG2)
    p = tmp_path / "x.json"
    p.write_text(json.dumps(FIG2, indent=4))
    problem, inst, data = load_instance(p)
    assert problem == "gpu-mapping" and instance_hash(data) == instance_hash(FIG2)


def test_load_instance_checks_problem_key(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text(json.dumps({k: v for k, v in FIG2.items() if k != "problem"}))
    with pytest.raises(InputError, match="problem must be a string"):
        load_instance(p)
    p.write_text(json.dumps(FIG2))
    with pytest.raises(InputError, match="'gpu-mapping' but 'nimp' was asked for"):
        load_instance(p, problem="nimp")
    p.write_text("[1, 2]")
    with pytest.raises(InputError, match="must hold a JSON object"):
        load_instance(p)


def test_registry_finds_gpu_mapping_through_its_entry_point() -> None:
    assert "gpu-mapping" in registry.all_formulations()
    with pytest.raises(InputError, match="unknown: 'nope'.*gpu-mapping"):
        registry.get("nope")


@pytest.mark.parametrize("obj,bound,gap", [(10.0, 8.0, 0.2), (10.0, 10.0, 0.0), (0.0, 0.0, 0.0), (None, 1.0, None),
                                           (5.0, None, None)])
def test_relative_gap(obj: float | None, bound: float | None, gap: float | None) -> None:
    got = relative_gap(obj, bound)
    assert (got is None and gap is None) or math.isclose(got, gap)  # type: ignore[arg-type]


def test_solve_fills_objective_from_evaluate_and_rejects_infeasible(monkeypatch: pytest.MonkeyPatch) -> None:
    f = registry.get("gpu-mapping")
    res = solve("gpu-mapping", FIG2, "heavy-edge", objective="alpha", seed=3)
    assert res.status is Status.FEASIBLE and res.objective == pytest.approx(0.03192)
    assert res.algorithm == "heavy-edge" and res.seed == 3 and res.wall_time_s is not None

    def liar(instance, **kw):  # claims optimality for an infeasible mapping
        return Result(Status.OPTIMAL, objective=0.0, bound=0.0, solution={"assignment": [[0, 0], [0, 0], [0, 0]]})

    monkeypatch.setitem(f.algorithms, "liar", Algorithm("liar", liar, "exact", "test", ("cut", "alpha")))  # type: ignore[arg-type]
    res = solve("gpu-mapping", FIG2, "liar")
    assert res.status is Status.ERROR and res.objective is None
    assert "server 0 holds 6 replicas" in res.message


def test_public_api_is_exported() -> None:
    for name in ("solve", "Result", "Status", "InputError", "Formulation", "Algorithm", "load_instance"):
        assert hasattr(optkit, name)


@pytest.mark.parametrize("claimed", [Status.OPTIMAL, Status.FEASIBLE])
def test_success_status_without_a_solution_becomes_an_error(monkeypatch: pytest.MonkeyPatch, claimed: Status) -> None:
    """An algorithm that claims ``optimal`` or ``feasible`` but returns no solution has failed:
    the engine must not pass the claim on (issue 17, item 4). Oracle: the status contract in
    :class:`optkit.result.Status` (a success status needs a solution that ``evaluate`` accepts),
    so the result is ``error``, with no objective and a message saying what went wrong. The
    other statuses without a solution (``no_solution``, ``infeasible``) pass through unchanged."""
    f = registry.get("gpu-mapping")

    def empty(instance, **kw):  # a success status with nothing attached
        return Result(claimed, objective=0.0, bound=0.0, solution=None)

    monkeypatch.setitem(f.algorithms, "empty", Algorithm("empty", empty, "exact", "test", ("cut", "alpha")))  # type: ignore[arg-type]
    res = solve("gpu-mapping", FIG2, "empty")
    assert res.status is Status.ERROR
    assert res.objective is None and res.gap is None
    assert res.message == "the algorithm returned no solution"

    def honest(instance, **kw):  # found nothing and says so
        return Result(Status.NO_SOLUTION, message="no server fits")

    monkeypatch.setitem(f.algorithms, "honest", Algorithm("honest", honest, "heuristic", "test", ("cut", "alpha")))  # type: ignore[arg-type]
    res = solve("gpu-mapping", FIG2, "honest")
    assert res.status is Status.NO_SOLUTION and res.message == "no server fits" and res.objective is None
