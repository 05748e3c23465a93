"""gpu-mapping's instance model (formulations/gpu_mapping/model.py): each bad field rejected with one
InputError naming the field and the problem in its own words, the optional stage fields written
back only where they differ from the paper's stage, and ``evaluate``'s metrics by hand."""

from __future__ import annotations

import copy
from typing import Any, Callable

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping.model import MAX_REPLICAS, GpuMappingInstance, Stage, evaluate, stage_times


def _base() -> dict[str, Any]:
    """Two stages (2 and 1 replicas) on servers of 2 and 1 free GPUs."""
    return {"problem": "gpu-mapping",
            "cluster": {"gpus_per_server": 4, "inter_bandwidth": 1e9, "intra_bandwidth": 1e11},
            "job": {"allreduce": "ring", "stages": [
                {"replicas": 2, "fwd_time": 1.0, "bwd_time": 2.0, "in_bytes": 0.0, "out_bytes": 1e6, "param_bytes": 1e7},
                {"replicas": 1, "fwd_time": 1.0, "bwd_time": 2.0, "in_bytes": 2e6, "out_bytes": 0.0, "param_bytes": 1e7}]},
            "servers": [2, 1]}


def _moe(**fields: Any) -> Callable[[dict[str, Any]], None]:
    def edit(d: dict[str, Any]) -> None:
        d["job"]["stages"][1].update(fields)
    return edit


def _drop(*path: Any) -> Callable[[dict[str, Any]], None]:
    def edit(d: dict[str, Any]) -> None:
        node = d
        for p in path[:-1]:
            node = node[p]
        del node[path[-1]]
    return edit


def _set(value: Any, *path: Any) -> Callable[[dict[str, Any]], None]:
    def edit(d: dict[str, Any]) -> None:
        node = d
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = value
    return edit


BAD = [
    (_drop("cluster", "gpus_per_server"), "cluster.gpus_per_server is required"),
    (_set(0.0, "cluster", "intra_bandwidth"), "cluster.intra_bandwidth must be > 0"),
    (_set(0.0, "cluster", "inter_bandwidth"), "cluster.inter_bandwidth must be > 0"),
    (_set([2, 2], "servers"), "servers must offer exactly the job's 3 replicas, but its free GPUs add up to 4"),
    (_set({"a": 3}, "servers"), "servers must be a list of free-GPU counts, got dict"),
    (_set([], "job", "stages"), "job.stages must be a non-empty list of stages"),
    (_drop("job", "stages", 0, "replicas"), "job.stages[0].replicas is required"),
    (_moe(tensor_parallel=MAX_REPLICAS + 1), f"job.stages[1].tensor_parallel must be <= {MAX_REPLICAS}"),
    (_moe(experts=4, routing_skew=2.0), "job.stages[1].routing_skew is the zipf exponent: it needs routing = 'zipf'"),
    (_set("later", "job", "tp_allreduce_time"), "job.tp_allreduce_time must be one of"),
    (_set("three-edges", "job", "two_replica_ring"), "job.two_replica_ring must be one of two-edges, one-edge, got"),
    (_drop("job", "allreduce"), "job.allreduce is required (ring or tree)"),
    (_moe(tp_bytes=1e6), "job.stages[1].tp_bytes needs tensor_parallel >= 2 (the all-reduce among a replica's slices)"),
]


def test_validate_job_names_each_bad_reading_of_a_job_built_in_code() -> None:
    """A job built in code (not read from a dict) meets the same checks in ``validate_job``."""
    from optkit.formulations.gpu_mapping.model import PipelineJob, validate_job

    stages = (Stage(1, 1.0, 2.0, 0.0, 0.0, 1.0),)
    with pytest.raises(InputError, match=r"^gpu-mapping: job.two_replica_ring must be one of two-edges, one-edge, got 'x'$"):
        validate_job(PipelineJob(stages, "ring", two_replica_ring="x"))
    with pytest.raises(InputError, match=r"^gpu-mapping: job.tp_allreduce_time must be one of added, overlapped, got 'y'$"):
        validate_job(PipelineJob(stages, "ring", tp_allreduce_time="y"))
    with pytest.raises(InputError, match=r"^gpu-mapping: job.stages must be a non-empty list of stages$"):
        validate_job(PipelineJob((), "ring"))


@pytest.mark.parametrize("edit, words", BAD, ids=[w.split(" ")[0] for _, w in BAD])
def test_a_bad_field_is_named_with_its_problem(edit: Callable[[dict[str, Any]], None], words: str) -> None:
    d = _base()
    GpuMappingInstance.from_dict(copy.deepcopy(d))  # the base is valid
    edit(d)
    with pytest.raises(InputError) as err:
        GpuMappingInstance.from_dict(d)
    assert str(err.value).startswith(words)
    assert words.startswith(err.value.field + " ")


def test_a_job_over_the_vertex_limit_is_refused_naming_the_limit() -> None:
    d = _base()
    d["job"]["stages"][0].update(replicas=MAX_REPLICAS, out_bytes=1.0)
    d["job"]["stages"][1]["in_bytes"] = float(MAX_REPLICAS)
    with pytest.raises(InputError, match=rf"job.stages hold {MAX_REPLICAS + 1} replicas in all; at most "
                                         rf"{MAX_REPLICAS} are supported \(the largest cluster"):
        GpuMappingInstance.from_dict(d)


def test_moe_stage_writes_routing_only_when_it_is_not_uniform() -> None:
    plain = Stage(1, 1.0, 2.0, 0.0, 0.0, 1.0)
    assert set(plain.to_dict()) == {"replicas", "fwd_time", "bwd_time", "in_bytes", "out_bytes", "param_bytes"}
    uniform = Stage(1, 1.0, 2.0, 0.0, 0.0, 1.0, experts=4, expert_bytes=8.0)
    assert uniform.to_dict()["experts"] == 4 and "routing" not in uniform.to_dict()
    zipf = Stage(1, 1.0, 2.0, 0.0, 0.0, 1.0, experts=4, expert_bytes=8.0, routing="zipf")  # skew 1.0
    assert (zipf.to_dict()["routing"], zipf.to_dict()["routing_skew"]) == ("zipf", 1.0)
    assert Stage.from_dict(zipf.to_dict()) == zipf
    skewed = Stage(1, 1.0, 2.0, 0.0, 0.0, 1.0, experts=4, expert_bytes=8.0, routing="zipf", routing_skew=2.0)
    assert Stage.from_dict(skewed.to_dict()) == skewed


def test_extras_round_trip_and_a_stage_of_experts_reads_back() -> None:
    d = _base()
    d["name"], d["meta"] = "two", {"seed": 3}
    d["job"]["stages"][1].update(experts=2, expert_bytes=5.0)
    d["servers"] = [2, 2]
    inst = GpuMappingInstance.from_dict(d)
    assert inst.job.stages[1].experts == 2 and inst.job.stages[1].routing == "uniform"
    back = inst.to_dict()
    assert back["name"] == "two" and back["meta"] == {"seed": 3} and back["cluster"] == d["cluster"]


def test_evaluate_metrics_of_a_split_stage_by_hand() -> None:
    """Stage 0's two replicas on servers 0 and 1, stage 1 on server 0: stage 0 spans 2 servers,
    stage 1 one; alpha is the largest entry of beta[s, m] (eq. (7)) and names its stage and server."""
    inst = GpuMappingInstance.from_dict(_base())
    ev = evaluate(inst, {"assignment": [[0, 1], [0]]})
    assert ev.feasible
    m = ev.metrics
    assert m["servers_per_stage"] == [2, 1]
    beta = stage_times(inst.job, inst.cluster, np.array([[1, 1], [1, 0]]))
    s, srv = np.unravel_index(int(np.nanargmax(beta)), beta.shape)
    assert m["alpha_s"] == ev.objectives["alpha"] == pytest.approx(float(beta[s, srv]))
    assert (m["bottleneck_stage"], m["bottleneck_server"]) == (int(s), int(srv))
    assert m["cut_bytes"] == ev.objectives["cut"] > 0


def test_evaluate_names_a_server_index_out_of_range_with_the_range() -> None:
    """Two servers: an index must lie in 0..1; the violation names the entry and the value."""
    inst = GpuMappingInstance.from_dict(_base())
    ev = evaluate(inst, {"assignment": [[0, 5], [1]]})
    assert not ev.feasible and ev.violations == ["assignment[0][1] must be a server index in 0..1, got 5"]


def test_stage_times_refuses_counts_for_an_moe_job_naming_what_to_use() -> None:
    d = _base()
    _moe(experts=2)(d)
    d["servers"] = [2, 2]
    inst = GpuMappingInstance.from_dict(d)
    with pytest.raises(InputError, match=r"^gpu-mapping: job has MoE stages: their time depends on which expert groups "
                                         r"share a server, not on counts \(use vertex_times or evaluate\)$"):
        stage_times(inst.job, inst.cluster, np.array([[2, 0], [1, 1]]))


def test_stage_times_is_silent_about_the_cells_it_leaves_empty() -> None:
    """A server holding none of a stage divides by its zero share of the NIC (0/0 for a stage of
    one replica, whose all-reduce moves no bytes): those cells are masked (NaN), and no numpy
    warning is raised for them, with tensor-parallel stages as without."""
    import warnings

    inst = GpuMappingInstance.from_dict(_base())
    d = _base()
    d["job"]["stages"][1].update(tensor_parallel=2, tp_bytes=1e6)
    d["job"]["stages"][1]["in_bytes"] = 2e6
    d["servers"] = [2, 2]
    tp = GpuMappingInstance.from_dict(d)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        beta = stage_times(inst.job, inst.cluster, np.array([[2, 0], [0, 1]]))
        beta_tp = stage_times(tp.job, tp.cluster, np.array([[2, 0], [0, 2]]))
    assert np.isnan(beta[0, 1]) and np.isnan(beta[1, 0]) and np.isfinite(beta[0, 0]) and np.isfinite(beta[1, 1])
    assert np.isnan(beta_tp[1, 0]) and np.isfinite(beta_tp[1, 1])


def test_job_graph_nodes_carry_stage_replica_and_unit() -> None:
    """``job_graph``: node i has its stage and replica (and, for a slice of a tensor-parallel
    replica, the slice's index ``unit``); the edge between a stage-0 replica and the stage-1
    replica weighs eq. (5)'s ``2 d^out_0 / k_1`` = 2 x 1e6 / 1 bytes."""
    from optkit.formulations.gpu_mapping.model import job_graph

    g = job_graph(GpuMappingInstance.from_dict(_base()).job)
    assert dict(g.nodes(data=True)) == {0: {"stage": 0, "replica": 0}, 1: {"stage": 0, "replica": 1},
                                        2: {"stage": 1, "replica": 0}}
    assert g.edges[0, 2]["weight"] == g.edges[1, 2]["weight"] == 2e6
    d = _base()
    d["job"]["stages"][1].update(tensor_parallel=2, tp_bytes=1e6)
    d["servers"] = [2, 2]
    g = job_graph(GpuMappingInstance.from_dict(d).job)
    assert [g.nodes[v] for v in (2, 3)] == [{"stage": 1, "replica": 0, "unit": 0}, {"stage": 1, "replica": 0, "unit": 1}]
