"""gpu-mapping: evaluate on hand-computed cases, the job graph, Heavy-Edge and validation."""

from __future__ import annotations

import copy
import math

import networkx as nx
import numpy as np
import pytest

from optkit.formulations.gpu_mapping import (
    GpuMappingInstance, alpha_max, alpha_min_estimate, evaluate, heavy_edge, heavy_edge_job, job_graph,
)
from optkit.formulations.gpu_mapping.model import PipelineJob, double_binary_tree_edges, job_edges
from optkit.errors import InputError

# Paper Fig. 2: three stages of two replicas onto servers with 4, 1 and 1 free GPUs. The S1
# ring of two replicas carries two edges of 2(k-1)h/k = h = 10 MB each, summed to the 20 MB
# heaviest edge; every S1-S2 replica pair is joined by 2*out/k = 1 MB; S2-S3 pairs by 0.25 MB.
FIG2 = {
    "problem": "gpu-mapping",
    "cluster": {"gpus_per_server": 4, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11},
    "job": {"allreduce": "ring", "stages": [
        {"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0, "out_bytes": 1e6, "param_bytes": 1e7},
        {"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 1e6, "out_bytes": 2.5e5, "param_bytes": 2e5},
        {"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 2.5e5, "out_bytes": 0, "param_bytes": 1e5},
    ]},
    "servers": [4, 1, 1],
}

# Two stages, tree all-reduce: stage 0 has 3 replicas, stage 1 has 2 (3 * 2e6 = 2 * 3e6).
TWO_STAGE = {
    "problem": "gpu-mapping",
    "cluster": {"gpus_per_server": 4, "inter_bandwidth": 1e9, "intra_bandwidth": 1e11},
    "job": {"allreduce": "tree", "stages": [
        {"replicas": 3, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0, "out_bytes": 2e6, "param_bytes": 3e6},
        {"replicas": 2, "fwd_time": 0.005, "bwd_time": 0.01, "in_bytes": 3e6, "out_bytes": 0, "param_bytes": 1e6},
    ]},
    "servers": [3, 2],
}


def test_fig2_heavy_edge_comes_out_as_the_paper_describes() -> None:
    inst = GpuMappingInstance.from_dict(FIG2)
    # S1-R1, S1-R2 (20 MB edge), then S2-R1, S2-R2 (1 MB edges) on the 4-GPU server; S3 split.
    assert heavy_edge_job(inst.job, inst.servers) == [[0, 0], [0, 0], [1, 2]]


def test_fig2_evaluate_by_hand() -> None:
    inst = GpuMappingInstance.from_dict(FIG2)
    ev = evaluate(inst, {"assignment": [[0, 0], [0, 0], [1, 2]]})
    assert ev.feasible
    # Cut: 4 S2-S3 pairs x 0.25 MB + the S3 ring pair 2 x 0.1 MB = 1.2 MB.
    assert ev.objectives["cut"] == pytest.approx(1.2e6, rel=1e-12)
    # Stage 3 on server 1 (x=1 of k=2, g=4): comp 0.03; comm 4*(2*2.5e5*(2-0)/2)/1.25e9 = 1.6e-3;
    # AllReduce (2*1*1e5/2)/((1/4)*1.25e9) = 3.2e-4. beta = 0.03192, the largest.
    # (Stage 2 on server 0: 0.03 + 2e6/3e11 + 4*5e5/1.25e9 + 2e5/3e11 = 0.0316073...)
    assert ev.objectives["alpha"] == pytest.approx(0.03 + 1.6e-3 + 3.2e-4, rel=1e-12)
    assert ev.metrics["bottleneck_stage"] == 2 and ev.metrics["bottleneck_server"] == 1


def test_two_stage_tree_evaluate_by_hand() -> None:
    inst = GpuMappingInstance.from_dict(TWO_STAGE)
    ev = evaluate(inst, {"assignment": [[0, 0, 1], [0, 1]]})
    assert ev.feasible
    # Stage 0 on server 1 (x=1, k=3): comp 0.03; comm out: 4*(2*2e6*(2-1)/2)/1e9 = 8e-3 inter
    # + (2*2e6*1/2)/1e11 = 2e-5 intra; AllReduce (2*2*3e6/3)/((1/4)*1e9) = 0.016. beta = 0.05402.
    # The others: stage 0 on server 0: 0.03 + 8e-3 + 2e-5 + 4e6/5e8 = 0.04602; stage 1 on
    # server 0: 0.015 + 8e-3 + 4e-5 + 4e-3 = 0.02704; stage 1 on server 1: 0.015 + 0.016 + 2e-5 + 4e-3.
    assert ev.objectives["alpha"] == pytest.approx(0.05402, rel=1e-12)
    assert (ev.metrics["bottleneck_stage"], ev.metrics["bottleneck_server"]) == (0, 1)
    # Cut: stage-0 double tree for k=3 is {(1,2), (0,2), (0,2), (0,1)} with (k-1)h/k = 2e6 each;
    # replica 2 alone on server 1 cuts (1,2) + 2 x (0,2) = 6e6. Stage-1 pair (both trees) 2 x 0.5e6
    # = 1e6, cut. Inter-stage pairs 2*2e6/2 = 2e6 each, three of them cross: 6e6. Total 1.3e7.
    assert ev.objectives["cut"] == pytest.approx(1.3e7, rel=1e-12)


def test_alpha_max_by_hand() -> None:
    inst = GpuMappingInstance.from_dict(TWO_STAGE)
    # One replica per server, B_inter/g each. Stage 0: 0.03 + 4*(2*2e6)/1e9 + 4*(4e6)/1e9 = 0.062.
    # Stage 1: 0.015 + 4*(2*3e6)/1e9 + 4*(1e6)/1e9 = 0.043.
    assert alpha_max(inst.job, inst.cluster) == pytest.approx(0.062, rel=1e-12)
    # The fewest servers for 5 replicas with g=4 are [4, 1]; the estimate is achievable, so it
    # lies between the true optimum's alpha and alpha_max.
    est = alpha_min_estimate(inst.job, inst.cluster)
    assert est < alpha_max(inst.job, inst.cluster)


def test_ring_of_two_sums_parallel_edges() -> None:
    inst = GpuMappingInstance.from_dict(FIG2)
    u, v, w = job_edges(inst.job)
    weights = {(int(a), int(b)): float(x) for a, b, x in zip(u, v, w)}
    assert weights[(0, 1)] == pytest.approx(2e7)  # 2 x h, as the issue says
    assert weights[(0, 2)] == weights[(1, 3)] == pytest.approx(1e6)
    g = job_graph(inst.job)
    assert g.number_of_nodes() == 6 and g.nodes[4] == {"stage": 2, "replica": 0}
    assert g[0][1]["weight"] == pytest.approx(2e7)


@pytest.mark.parametrize("k", range(2, 40))
def test_double_binary_tree_is_two_spanning_binary_trees(k: int) -> None:
    edges = double_binary_tree_edges(k)
    assert len(edges) == 2 * (k - 1)
    for tree in (edges[: k - 1], edges[k - 1:]):
        g = nx.Graph(tree)
        assert g.number_of_nodes() == k and nx.is_tree(g)
        children: dict[int, int] = {}
        for child, parent in tree:
            children[parent] = children.get(parent, 0) + 1
        assert max(children.values()) <= 2  # binary: at most two children each
        # in-tree roots have exactly one child (NCCL's root has a single child)
        roots = set(range(k)) - {c for c, _ in tree}
        assert len(roots) == 1


def test_double_binary_tree_matches_nccl_for_four_ranks() -> None:
    # NCCL's btree on 4 ranks: 1->2, 2->0, 3->2; the even case mirrors it: 0->1, 1->3, 2->1.
    assert double_binary_tree_edges(4) == [(1, 2), (2, 0), (3, 2), (0, 1), (1, 3), (2, 1)]
    # 5 ranks (odd: shifted by one): 1->2, 2->4, 3->2, 4->0 and 0->1, 2->3, 3->0, 4->3.
    assert double_binary_tree_edges(5) == [(1, 2), (2, 4), (3, 2), (4, 0), (0, 1), (2, 3), (3, 0), (4, 3)]


def test_heavy_edge_networkx_api_and_seeded_random_branch() -> None:
    g = nx.Graph()
    g.add_weighted_edges_from([("a", "b", 20.0), ("b", "c", 1.0), ("c", "d", 0.5)])
    assert heavy_edge(g, [3, 1]) == {"a": 0, "b": 0, "c": 0, "d": 1}
    # No edges at all: every choice is the seeded random draw.
    empty = nx.empty_graph(12)
    maps = [tuple(heavy_edge(empty, [4, 4, 4], seed=s).values()) for s in range(6)]
    assert maps[0] == tuple(heavy_edge(empty, [4, 4, 4], seed=0).values())
    assert len(set(maps)) > 1


def test_heavy_edge_output_is_always_feasible() -> None:
    rng = np.random.default_rng(7)
    for _ in range(50):
        n = int(rng.integers(2, 30))
        g = nx.gnp_random_graph(n, 0.3, seed=int(rng.integers(1 << 30)))
        for a, b in g.edges:
            g[a][b]["weight"] = float(rng.integers(1, 5))
        caps = []
        left = n
        while left:
            c = int(rng.integers(1, min(8, left) + 1))
            caps.append(c)
            left -= c
        mapping = heavy_edge(g, caps, seed=1)
        counts = np.bincount(list(mapping.values()), minlength=len(caps))
        assert counts.tolist() == caps


def test_evaluate_names_each_violation() -> None:
    inst = GpuMappingInstance.from_dict(FIG2)
    ev = evaluate(inst, {"assignment": [[0, 0], [0, 0], [0, 2]]})
    assert not ev.feasible and any("server 0 holds 5 replicas but has 4" in v for v in ev.violations)
    ev = evaluate(inst, {"assignment": [[0, 0], [0, 0], [1, 3]]})
    assert not ev.feasible and "assignment[2][1]" in ev.violations[0]
    ev = evaluate(inst, {"assignment": [[0, 0], [0, 0]]})
    assert not ev.feasible and "3 stages" in ev.violations[0]
    assert not evaluate(inst, {"mapping": []}).feasible


def _mutate(path: list, value):  # type: ignore[no-untyped-def]
    d = copy.deepcopy(FIG2)
    node = d
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return d


BAD_INPUTS = [
    (["servers"], [4, 1], "servers"),                                   # sum != replicas
    (["servers"], [5, 1, 0], "servers[0]"),                             # entry outside 1..g
    (["servers"], [4, 2, 0], "servers[2]"),
    (["job", "stages", 0, "in_bytes"], 5.0, "job.stages[0].in_bytes"),   # first stage in_bytes != 0
    (["job", "stages", 2, "out_bytes"], 1.0, "job.stages[2].out_bytes"),  # last stage out_bytes != 0
    (["job", "stages", 1, "in_bytes"], 2e6, "job.stages[1].in_bytes"),    # k*out != k*in
    (["job", "stages", 1, "replicas"], 0, "job.stages[1].replicas"),
    (["job", "stages", 1, "replicas"], 1.5, "job.stages[1].replicas"),
    (["job", "stages", 1, "fwd_time"], -1.0, "job.stages[1].fwd_time"),
    (["job", "stages", 1, "fwd_time"], "fast", "job.stages[1].fwd_time"),
    (["job", "allreduce"], "butterfly", "job.allreduce"),
    (["cluster", "inter_bandwidth"], 0, "cluster.inter_bandwidth"),
    (["cluster", "gpus_per_server"], True, "cluster.gpus_per_server"),
    (["job", "stages"], [], "job.stages"),                              # no stage
]


@pytest.mark.parametrize("path,value,field", BAD_INPUTS)
def test_bad_input_names_the_field(path: list, value: object, field: str) -> None:
    with pytest.raises(InputError) as info:
        GpuMappingInstance.from_dict(_mutate(path, value))
    assert info.value.field == field
    assert field in str(info.value)


def test_a_job_built_in_code_is_checked_too() -> None:
    """A job a library user builds with the constructor goes through validate_job: no stage, and
    more than MAX_REPLICAS replicas in all (each stage within its own limit), name ``job.stages``."""
    from optkit.formulations.gpu_mapping.model import MAX_REPLICAS, Stage

    half = MAX_REPLICAS // 2 + 1
    for stages in ((), (Stage(half, 1, 1, 0, 1, 1), Stage(half, 1, 1, 1, 0, 1))):
        with pytest.raises(InputError) as info:
            PipelineJob(stages, "ring")
        assert info.value.field == "job.stages"


def test_validation_tolerance_is_relative_1e9() -> None:
    ok = _mutate(["job", "stages", 1, "in_bytes"], 1e6 * (1 + 5e-10))
    GpuMappingInstance.from_dict(ok)
    with pytest.raises(InputError):
        GpuMappingInstance.from_dict(_mutate(["job", "stages", 1, "in_bytes"], 1e6 * (1 + 5e-9)))


def test_round_trip_keeps_extra_fields() -> None:
    d = dict(FIG2, name="fig2", meta={"source": "paper Fig. 2"})
    inst = GpuMappingInstance.from_dict(d)
    assert inst.to_dict() == {**d, "job": inst.job.to_dict()}
    assert GpuMappingInstance.from_dict(inst.to_dict()) == inst
    assert math.isclose(evaluate(inst, {"assignment": [[0, 0], [0, 0], [1, 2]]}).objectives["cut"], 1.2e6)


def test_one_gpu_server_reading_uses_weight_to_unassigned_vertices() -> None:
    # Server 0 (2 GPUs) takes the heaviest edge a-b. For the first one-GPU server, c has total
    # edge weight 6 (5 to a, 1 to d) and d has 1, but both have weight 1 to unassigned vertices.
    # The "total weight" reading would pick d; optkit's reading (only edges to unassigned
    # vertices distinguish the choices) ties and takes the lower index, c.
    g = nx.Graph()
    g.add_nodes_from("abcd")
    g.add_weighted_edges_from([("a", "b", 10.0), ("a", "c", 5.0), ("c", "d", 1.0)])
    assert heavy_edge(g, [2, 1, 1]) == {"a": 0, "b": 0, "c": 1, "d": 2}
