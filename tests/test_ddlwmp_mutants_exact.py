"""ddlwmp's exact solvers and greedy schedule (formulations/ddlwmp/exact.py): facts a surviving
mutant of the sample broke. Written for the mutation score (issue 36 item 5)."""

from __future__ import annotations

import pytest

from optkit.errors import InputError
from optkit.formulations.ddlwmp import exact
from optkit.formulations.ddlwmp.model import DdlwmpInstance

MODEL = {"allreduce": "ring", "stages": [{"replicas": 1, "fwd_time": 0.1, "bwd_time": 0.15, "in_bytes": 0,
                                          "out_bytes": 0, "param_bytes": 0}]}


def _instance(n: int, servers: int = 1) -> DdlwmpInstance:
    """``n`` 1-GPU jobs of 4 iterations at 0.25 s (1 s each) released at 0, on ``servers`` 1-GPU servers."""
    return DdlwmpInstance.from_dict({"problem": "ddlwmp", "models": {"m": MODEL}, "cluster": {
        "servers": servers, "gpus_per_server": 1, "inter_bandwidth": 1e9, "intra_bandwidth": 1e11},
        "jobs": [{"id": f"j{i}", "release": 0, "model": "m", "iterations": 4} for i in range(n)]})


def test_brute_force_defaults_to_total_completion() -> None:
    """Three 1-s jobs on one GPU: completions 1, 2, 3 (total 6, makespan 3)."""
    inst = _instance(3)
    value, schedule = exact.brute_force(inst)
    assert value == pytest.approx(6.0) and sorted(e["start"] for e in schedule["jobs"]) == [0.0, 1.0, 2.0]
    assert exact.brute_force(inst, "makespan")[0] == pytest.approx(3.0)
    res = exact.run_brute_force(inst)
    assert res.objective == pytest.approx(6.0) and res.message == "enumeration"
    assert res.solution == schedule and res.metrics["jobs"] == 3 and res.info == {}
    assert res.metrics["mean_jct_s"] == pytest.approx(2.0) and res.problem == "ddlwmp"


def test_an_unknown_objective_is_named_with_the_known_ones() -> None:
    with pytest.raises(InputError) as info:
        exact.brute_force(_instance(2), "tardiness")
    assert info.value.field == "objective"
    assert "must be one of total_completion, total_flow, makespan, got 'tardiness'" in str(info.value)


def test_brute_force_refuses_more_leaves_than_its_limit() -> None:
    """Ten jobs on one 1-GPU server (one option each): 10! = 3,628,800 leaves > 2,000,000; eight
    jobs on two servers (two options each): 8!·2^8 = 10,321,920 (the check comes before any
    enumeration)."""
    with pytest.raises(InputError) as info:
        exact.brute_force(_instance(10))
    assert info.value.field == "instance" and "3628800 (order, options) leaves" in str(info.value)
    with pytest.raises(InputError) as info:
        exact.brute_force(_instance(8, servers=2))
    assert "10321920 (order, options) leaves" in str(info.value)


def test_placement_options_of_a_one_gpu_model_by_hand() -> None:
    """A 1-GPU model on two 1-GPU servers: two options, y = (1, 0) and (0, 1), each its replica on
    that server at alpha 0.25 s; duration and slots are the job's, filled per job later (0 here)."""
    opts = exact.placement_options(_instance(1, servers=2))["m"]
    assert sorted(o.y for o in opts) == [(0, 1), (1, 0)]
    assert {o.y: o.assignment for o in opts} == {(1, 0): ((0,),), (0, 1): ((1,),)}
    assert [o.alpha for o in opts] == [pytest.approx(0.25)] * 2 and {(o.duration, o.slots) for o in opts} == {(0.0, 0)}
