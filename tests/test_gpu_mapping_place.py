"""gpu-mapping's scheduler entry :func:`place` (Heavy-Edge with its server choice, by node id).

Oracles: the simulator's own server choice (``ddlwmp.placement.most_free_servers`` and
``least_free_servers``, numpy, written separately) on seeded free vectors; Heavy-Edge by list
positions (``heavy_edge_job``); the formulation's ``evaluate`` for eq. (7)'s alpha."""

from __future__ import annotations

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.ddlwmp.placement import least_free_servers, most_free_servers
from optkit.formulations.gpu_mapping import (
    Cluster, GpuMappingInstance, JobPlacement, PipelineJob, choose_servers, evaluate, heavy_edge_job, place,
)
from optkit.formulations.gpu_mapping.generate import generate

CLUSTER = Cluster(8, 1.25e9, 3e11)


def _job(seed: int = 0) -> PipelineJob:
    """ResNet-152 in four stages of three replicas (12 GPUs)."""
    return PipelineJob.from_dict(generate(model="resnet152", config="pipe4x3", servers=2, seed=seed)["job"])


@pytest.mark.parametrize("rule,oracle", [("most-free", most_free_servers), ("least-free", least_free_servers)])
def test_server_choice_agrees_with_the_simulators_rule(rule: str, oracle) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(300):
        free = rng.integers(0, 9, size=int(rng.integers(1, 9)))
        need = int(rng.integers(1, 20))
        names = [f"n{i}" for i in range(len(free))]
        got = choose_servers(dict(zip(names, free.tolist())), need, server_choice=rule)
        if free.sum() < need:
            assert got is None
            continue
        servers, counts = oracle(free.astype(np.int64), need)
        assert got == {names[int(m)]: int(c) for m, c in zip(servers, counts) if c > 0}
        checked += 1
    assert checked > 100


def test_place_by_name_is_heavy_edge_on_the_chosen_servers() -> None:
    job = _job()
    free = {"gpu-a": 3, "gpu-b": 8, "gpu-c": 2, "gpu-d": 8}
    p = place(job, free, cluster=CLUSTER, seed=0)
    assert p.ok and p.reason is None
    assert p.gpus == {"gpu-b": 8, "gpu-d": 4}  # the most-free nodes, ties in the mapping's order
    nodes = list(p.gpus)
    by_position = heavy_edge_job(job, [p.gpus[n] for n in nodes], seed=0)
    assert p.assignment == [[nodes[m] for m in row] for row in by_position]
    for node, k in p.gpus.items():
        assert sum(row.count(node) for row in p.assignment) == k <= free[node]


def test_alpha_is_what_evaluate_measures() -> None:
    job = _job(1)
    p = place(job, {10: 2, 20: 5, 30: 6}, cluster=CLUSTER, seed=0)
    assert p.gpus == {30: 6, 20: 5, 10: 1}
    nodes = list(p.gpus)
    inst = GpuMappingInstance(CLUSTER, job, tuple(p.gpus[n] for n in nodes))
    ev = evaluate(inst, {"assignment": [[nodes.index(n) for n in row] for row in p.assignment]})
    assert ev.feasible
    assert p.alpha == pytest.approx(ev.objectives["alpha"], rel=1e-12)


def test_mixed_node_sizes_and_integer_ids() -> None:
    job = _job()
    p = place(job, {7: 1, 3: 4, 5: 8}, seed=0)
    assert p.ok and p.gpus == {5: 8, 3: 4}
    assert sorted(n for row in p.assignment for n in row) == [3] * 4 + [5] * 8


def test_too_few_free_gpus_says_why() -> None:
    job = _job()
    p = place(job, {"a": 1, "b": 1})
    assert p == JobPlacement(False, reason="too-few-free-gpus",
                             detail=f"the job needs {job.n_replicas} GPUs, the nodes have 2 free")
    assert not place(job, {}).ok


@pytest.mark.parametrize("call,field", [
    (lambda: place(_job(), [4, 4]), "free"),
    (lambda: place(_job(), {"a": -1, "b": 8}), "free['a']"),
    (lambda: place(_job(), {"a": True, "b": 8}), "free['a']"),
    (lambda: place(_job(), {"a": 2.5, "b": 8}), "free['a']"),
    (lambda: place(_job(), {"a": 8}, server_choice="least-loaded"), "server_choice"),
    (lambda: place({"stages": []}, {"a": 8}), "job"),  # type: ignore[arg-type]
    (lambda: choose_servers({"a": 8}, 0), "need"),
])
def test_bad_input_names_the_field(call, field: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field == field and str(err.value).startswith("gpu-mapping: ")
