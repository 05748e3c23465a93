"""ddlwmp: the instance rules and evaluate, on hand-computed schedules."""

from __future__ import annotations

import copy

import pytest

from optkit.formulations.ddlwmp.model import DdlwmpInstance, evaluate, free_time
from optkit.errors import InputError

# Two models on 2 servers of 4 GPUs (B_inter 1.25e9, B_intra 3e11).
# "dp2": one stage, 2 replicas, h = 1e8: on one server alpha = 0.03 + 2*1*1e8/(2*3e11) = 0.03 + 1/3000;
#        split over two servers, alpha = 0.03 + (2*1*1e8/2)/((1/4)*1.25e9) = 0.03 + 0.32 = 0.35.
# "single": one stage, one replica: alpha = 0.03.
BASE = {
    "problem": "ddlwmp",
    "cluster": {"servers": 2, "gpus_per_server": 4, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11},
    "models": {
        "dp2": {"allreduce": "ring", "stages": [{"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02,
                                                 "in_bytes": 0, "out_bytes": 0, "param_bytes": 1e8}]},
        "single": {"allreduce": "ring", "stages": [{"replicas": 1, "fwd_time": 0.01, "bwd_time": 0.02,
                                                    "in_bytes": 0, "out_bytes": 0, "param_bytes": 1e8}]},
    },
    "jobs": [
        {"id": "a", "release": 0, "model": "dp2", "iterations": 100, "user": "u1", "group": "g1"},
        {"id": "b", "release": 0.5, "model": "single", "iterations": 10},
        {"id": "c", "release": 2, "model": "dp2", "iterations": 3, "predicted_iterations": 5},
    ],
}
A_ONE = 0.03 + 1 / 3000


def test_hand_computed_schedule() -> None:
    inst = DdlwmpInstance.from_dict(BASE)
    sched = {"jobs": [
        {"id": "a", "start": 0, "assignment": [[0, 0]]},           # C = 100*(0.03+1/3000) = 3.0333...
        {"id": "b", "start": 1, "assignment": [[1]]},              # C = 1 + 10*0.03 = 1.3
        {"id": "c", "start": 2, "assignment": [[0, 1]]},           # split: C = 2 + 3*0.35 = 3.05
    ]}
    ev = evaluate(inst, sched)
    assert ev.feasible, ev.violations
    ca, cb, cc = 100 * A_ONE, 1.3, 2 + 3 * 0.35
    assert ev.objectives["total_completion"] == pytest.approx(ca + cb + cc, rel=1e-12)
    assert ev.objectives["total_flow"] == pytest.approx(ca + (cb - 0.5) + (cc - 2), rel=1e-12)
    assert ev.objectives["makespan"] == pytest.approx(cc, rel=1e-12)
    assert ev.metrics["max_jct_s"] == pytest.approx(ca, rel=1e-12)


def test_gpus_are_free_at_the_slot_after_completion() -> None:
    inst = DdlwmpInstance.from_dict(BASE)
    # Server 0 has 4 GPUs. a (2 GPUs on 0) runs to 3.033 s and frees at 4 s; c (2 on 0) and a
    # third 2-GPU use would overflow only while a holds them.
    ok = {"jobs": [
        {"id": "a", "start": 0, "assignment": [[0, 0]]},
        {"id": "b", "start": 1, "assignment": [[0]]},
        {"id": "c", "start": 2, "assignment": [[1, 1]]},
    ]}
    assert evaluate(inst, ok).feasible
    assert free_time(100 * A_ONE, 1.0) == 4.0 and free_time(3.0, 1.0) == 3.0
    # b (1 GPU, 1.3 s -> frees at 2 s) then c at 2 s on server 0: 2 + 2 GPUs, fits exactly.
    crowd = {"jobs": [
        {"id": "a", "start": 0, "assignment": [[0, 0]]},
        {"id": "b", "start": 1, "assignment": [[0]]},
        {"id": "c", "start": 2, "assignment": [[0, 0]]},
    ]}
    assert evaluate(inst, crowd).feasible
    # ... but c starting at 1 s on server 0 overlaps a and b: 5 GPUs.
    crowd["jobs"][2]["start"] = 1
    ev = evaluate(inst, crowd)
    assert not ev.feasible and any("before its release" in v for v in ev.violations)
    crowd["jobs"][2]["start"] = 2
    crowd["jobs"][1]["start"] = 2  # b now runs 2..2.3 on server 0 beside a and c: 5 GPUs
    ev = evaluate(inst, crowd)
    assert not ev.feasible and "server 0 holds 5 GPUs at t=2.0 s" in ev.violations[0]


@pytest.mark.parametrize("change,needle", [
    (lambda s: s["jobs"][1].update(start=1.5), "not on a slot boundary"),
    (lambda s: s["jobs"][1].update(start=0), "before its release"),
    (lambda s: s["jobs"].pop(), "not scheduled"),
    (lambda s: s["jobs"].append(dict(s["jobs"][0])), "scheduled twice"),
    (lambda s: s["jobs"][0].update(assignment=[[0, 2]]), "outside 0..1"),
    (lambda s: s["jobs"][0].update(assignment=[[0]]), "one server per replica"),
    (lambda s: s["jobs"][0].update(completion=3.0), "completion 3.0 disagrees"),
    (lambda s: s["jobs"][0].update(alpha_s=0.03), "alpha_s 0.03 disagrees"),
])
def test_each_violation_is_named(change, needle: str) -> None:  # type: ignore[no-untyped-def]
    inst = DdlwmpInstance.from_dict(BASE)
    sched = {"jobs": [
        {"id": "a", "start": 0, "assignment": [[0, 0]], "alpha_s": A_ONE, "completion": 100 * A_ONE},
        {"id": "b", "start": 1, "assignment": [[1]]},
        {"id": "c", "start": 2, "assignment": [[1, 1]]},
    ]}
    change(sched)
    ev = evaluate(inst, sched)
    assert not ev.feasible and any(needle in v for v in ev.violations), ev.violations


def _mutated(path: list, value: object) -> dict:
    d = copy.deepcopy(BASE)
    node = d
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return d


@pytest.mark.parametrize("path,value,field", [
    (["cluster", "servers"], 0, "cluster.servers"),
    (["jobs", 0, "iterations"], 0, "jobs[0].iterations"),
    (["jobs", 0, "release"], -1, "jobs[0].release"),
    (["jobs", 1, "model"], "gpt", "jobs[1].model"),
    (["jobs", 2, "id"], "a", "jobs[2].id"),
    (["jobs", 0, "predicted_iterations"], "many", "jobs[0].predicted_iterations"),
    (["models", "dp2", "stages", 0, "replicas"], 9, "jobs[0].model"),   # needs 9 GPUs, cluster has 8
    (["models", "dp2", "stages", 0, "in_bytes"], 5, "models.dp2.stages[0].in_bytes"),
])
def test_bad_input_names_the_field(path: list, value: object, field: str) -> None:
    with pytest.raises(InputError) as info:
        DdlwmpInstance.from_dict(_mutated(path, value))
    assert info.value.field == field


def test_round_trip() -> None:
    inst = DdlwmpInstance.from_dict(BASE)
    assert DdlwmpInstance.from_dict(inst.to_dict()) == inst
    assert inst.jobs[2].predicted_iterations == 5 and inst.jobs[0].user == "u1" and inst.gpus(inst.jobs[0]) == 2
