"""gpu-mapping's tensor-parallel and MoE stages (A-SRPT paper Sec. VI, issue 37 items 1-2).

Oracles: cases worked by hand (in each test's docstring), the brute force over placements
(the model's own ``vertex_times`` / ``cut_weight``, independent of both solver models) and the
naive enumeration of every vertex assignment; CP-SAT (count model for tensor-parallel jobs, vertex
model for MoE jobs) and the MILP (count model) must agree with them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping import FORMULATION, exact
from optkit.formulations.gpu_mapping.bounds import lower_bound
from optkit.formulations.gpu_mapping.colocation import (
    feasible_mapping, heavy_edge_mapping, pack_groups,
)
from optkit.formulations.gpu_mapping.heavy_edge import alpha_min_estimate, fewest_servers, heavy_edge_job
from optkit.formulations.gpu_mapping.llm_generate import llm_instance
from optkit.formulations.gpu_mapping.model import (
    Cluster, GpuMappingInstance, PipelineJob, Stage, alpha_from_counts, colocation_groups, evaluate, job_edge_kinds,
    routing_matrix,
    stage_counts, vertex_servers, vertex_times,
)
from optkit.result import Status
from optkit.solve import solve

G4 = Cluster(4, 1e9, 1e11)


def _stage(**kw: Any) -> dict[str, Any]:
    return {"fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0, "out_bytes": 0.0, "param_bytes": 1e8, **kw}


def _job(*stages: dict[str, Any], allreduce: str = "ring", **kw: Any) -> PipelineJob:
    return PipelineJob.from_dict({"allreduce": allreduce, "stages": list(stages), **kw})


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


# ----------------------------------------------------------------------------- the model by hand
def test_tensor_parallel_stage_by_hand() -> None:
    """One stage, k = 2 replicas of t = 2 slices, h = 1e8, tp_bytes = 1e9, g = 4, B_inter = 1e9,
    B_intra = 1e11. TP term 2(t-1)·1e9/(t·1e11) = 0.01 s; a slice's DP bytes D = 2(k-1)(h/t)/k =
    5e7. All on one server (x = k): AR = 5e7/1e11 = 5e-4, alpha = 0.03 + 0.01 + 0.0005 = 0.0405.
    One replica per server (x = 1 < k, X = 2 GPUs): AR = 5e7/((2/4)·1e9) = 0.1, alpha = 0.14, and
    the two DP rings (one per slice position, two-replica ring = two edges of 5e7) are cut:
    2 · 1e8 = 2e8 bytes. Under tp_allreduce_time = overlapped: max(0.03, 0.01) = 0.03 instead of
    0.04. The TP ring's edges (2 · 1e9 between a replica's slices) are never cut."""
    st = _stage(replicas=2, tensor_parallel=2, tp_bytes=1e9)
    for ar_kind, overlapped in (("ring", False), ("ring", True)):
        job = _job(st, allreduce=ar_kind, **({"tp_allreduce_time": "overlapped"} if overlapped else {}))
        one = GpuMappingInstance(G4, job, (4,))
        two = GpuMappingInstance(G4, job, (2, 2))
        e1 = evaluate(one, {"assignment": [[0, 0, 0, 0]]})
        e2 = evaluate(two, {"assignment": [[0, 0, 1, 1]]})
        shift = 0.01 if overlapped else 0.0
        assert _close(e1.objectives["alpha"], 0.0405 - shift) and e1.objectives["cut"] == 0.0
        assert _close(e2.objectives["alpha"], 0.14 - shift) and _close(e2.objectives["cut"], 2e8)
    assert _close(float(job_edge_kinds(job)["tp"][2].sum()), 2 * 2e9)


def test_slices_apart_are_infeasible_with_the_replica_named() -> None:
    job = _job(_stage(replicas=2, tensor_parallel=2, tp_bytes=1e9))
    inst = GpuMappingInstance(G4, job, (2, 2))
    ev = evaluate(inst, {"assignment": [[0, 1, 0, 1]]})
    assert not ev.feasible
    assert ev.violations == [
        "replica 0 of stage 0 has its 2 tensor slices on servers [0, 1]: they must share one server (Sec. VI)",
        "replica 1 of stage 0 has its 2 tensor slices on servers [0, 1]: they must share one server (Sec. VI)"]
    assert not evaluate(inst, {"assignment": [[0, 0, 1]]}).feasible  # one server per slice, 4 of them


def test_moe_stage_by_hand() -> None:
    """One replica of e = 2 expert groups, expert_bytes = 1e9, uniform: P = 1/4 everywhere, the
    a2a edge weighs 1e9 (1/4 + 1/4) = 5e8. Apart (servers 1 + 1 of g = 2): cut 5e8, each group's
    comm 5e8·2/1e9 = 1 s, alpha = 1.03; together: 5e8/1e11 = 0.005 s, alpha = 0.035."""
    job = _job(_stage(replicas=1, experts=2, expert_bytes=1e9))
    g2 = Cluster(2, 1e9, 1e11)
    apart = evaluate(GpuMappingInstance(g2, job, (1, 1)), {"assignment": [[0, 1]]})
    together = evaluate(GpuMappingInstance(g2, job, (2,)), {"assignment": [[0, 0]]})
    assert _close(apart.objectives["cut"], 5e8) and _close(apart.objectives["alpha"], 1.03)
    assert together.objectives["cut"] == 0.0 and _close(together.objectives["alpha"], 0.035)


def test_zipf_routing_matrix_by_hand() -> None:
    """e = 3, exponent 1: q = (1, 1/2, 1/3)/(11/6) = (6, 3, 2)/11, P[i, j] = q_j/3; the a2a edge
    (i, j) weighs expert_bytes (q_i + q_j)/3: (0,1) 9/33, (0,2) 8/33, (1,2) 5/33 of 3.3e9."""
    stage = Stage(1, 0.01, 0.02, 0.0, 0.0, 0.0, experts=3, expert_bytes=3.3e9, routing="zipf", routing_skew=1.0)
    p = routing_matrix(stage)
    assert np.allclose(p, np.tile(np.array([6, 3, 2]) / 33, (3, 1))) and _close(float(p.sum()), 1.0)
    u, v, w = job_edge_kinds(PipelineJob((stage,)))["a2a"]
    assert list(zip(u.tolist(), v.tolist())) == [(0, 1), (0, 2), (1, 2)]
    assert np.allclose(w, [0.9e9, 0.8e9, 0.5e9])
    uniform = routing_matrix(Stage(1, 0.01, 0.02, 0.0, 0.0, 0.0, experts=3, expert_bytes=1.0))
    assert np.allclose(uniform, 1 / 9)


def test_pipeline_edges_split_activations_over_slices() -> None:
    """Stage 0: k = 2, t = 2, d^out = 4e6; stage 1: k = 1, e = 2, d^in = 8e6. Each pair of a slice
    of stage 0 and a group of stage 1 carries 2·4e6/(2·1·2) = 2e6; a stage-1 group's pipeline
    edges sum to 2 d^in / e = 8e6 (4 slices x 2e6)."""
    job = _job(_stage(replicas=2, tensor_parallel=2, tp_bytes=1e6, out_bytes=4e6),
               _stage(replicas=1, experts=2, expert_bytes=1e6, in_bytes=8e6))
    u, v, w = job_edge_kinds(job)["pipeline"]
    assert len(w) == 8 and np.allclose(w, 2e6)


def test_count_formula_equals_vertex_times_on_tensor_parallel_jobs() -> None:
    """stage_times (the count formula the count model is derived from) and vertex_times (edge by
    edge) give the same alpha on every feasible mapping the brute force enumerates."""
    for seed in range(6):
        inst = GpuMappingInstance.from_dict(llm_instance(seed, kind="tp"))
        job = inst.job
        for sv in exact._placements(inst, None):
            assignment = [sv[job.offsets[s]:job.offsets[s + 1]].tolist() for s in range(len(job.stages))]
            counts = stage_counts(job, assignment, len(inst.servers))
            assert _close(alpha_from_counts(job, inst.cluster, counts), float(vertex_times(job, inst.cluster, sv).max()))


def test_old_job_dicts_round_trip_unchanged() -> None:
    from optkit.formulations.gpu_mapping.generate import SUITES

    for _, d in SUITES["small"].build()[:8]:
        inst = GpuMappingInstance.from_dict(d)
        assert inst.to_dict() == d and inst.job.is_plain


def test_new_fields_round_trip() -> None:
    d = llm_instance(3, kind="mixed")
    assert GpuMappingInstance.from_dict(d).to_dict() == d


@pytest.mark.parametrize("stage, field, words", [
    ({"tensor_parallel": 0}, "job.stages[0].tensor_parallel", ">= 1"),
    ({"tensor_parallel": 2, "experts": 2}, "job.stages[0].experts", "not both"),
    ({"tp_bytes": 1e6}, "job.stages[0].tp_bytes", "tensor_parallel >= 2"),
    ({"expert_bytes": 1e6}, "job.stages[0].expert_bytes", "experts >= 2"),
    ({"experts": 2, "routing": "hot"}, "job.stages[0].routing", "uniform, zipf"),
    ({"experts": 2, "routing_skew": 2.0}, "job.stages[0].routing_skew", "routing = 'zipf'"),
    ({"tensor_parallel": 2, "tp_bytes": -1.0}, "job.stages[0].tp_bytes", ">= 0"),
    ({"tensor_parallel": 8}, "job.stages[0].tensor_parallel", "at most gpus_per_server = 4"),
])
def test_bad_fields_are_named(stage: dict[str, Any], field: str, words: str) -> None:
    gpus = max(1, stage.get("tensor_parallel", 1)) * stage.get("experts", 1)
    d = {"problem": "gpu-mapping", "cluster": {"gpus_per_server": 4, "inter_bandwidth": 1e9, "intra_bandwidth": 1e11},
         "job": {"allreduce": "ring", "stages": [_stage(replicas=1, **stage)]}, "servers": [1] * gpus}
    with pytest.raises(InputError) as err:
        GpuMappingInstance.from_dict(d)
    assert err.value.field == field and words in err.value.message


def test_bad_tp_allreduce_time_is_named() -> None:
    with pytest.raises(InputError) as err:
        _job(_stage(replicas=1), tp_allreduce_time="hidden")
    assert err.value.field == "job.tp_allreduce_time" and "added, overlapped" in err.value.message
    with pytest.raises(InputError, match="tensor_parallel >= 2"):
        Stage(1, 0.01, 0.02, 0.0, 0.0, 0.0, tp_bytes=5.0)  # typed construction: the same rule


# ----------------------------------------------------------------------------- exact: three agree
@pytest.mark.parametrize("kind, seed", [("tp", s) for s in range(5)] + [("moe", s) for s in range(5)]
                         + [("mixed", s) for s in (1, 4, 7)])
def test_exact_solvers_agree_with_brute_force(kind: str, seed: int) -> None:
    inst = GpuMappingInstance.from_dict(llm_instance(seed, kind=kind))
    for objective in ("cut", "alpha"):
        want, _ = exact.naive_enumeration(inst, objective)
        # bounds.py's bounds hold on these jobs too (the vertex model reports alpha's when it is cut
        # while building: exact_vertices.solve_vertex_model)
        assert lower_bound(inst, objective) <= want * (1 + 1e-9) + 1e-12, (objective, lower_bound(inst, objective), want)
        runs = [exact.run_cpsat(inst, objective=objective, seed=0, workers=1),
                exact.run_brute_force(inst, objective=objective)]
        if not inst.job.has_experts:
            runs.append(exact.run_highs(inst, objective=objective, seed=0))
        for r in runs:
            assert r.status is Status.OPTIMAL, (objective, r.message)
            ev = evaluate(inst, r.solution)
            assert ev.feasible and _close(ev.objectives[objective], want), (objective, r.info, ev.objectives, want)
            # a proof's bound is the optimum itself: a model whose coefficients were off would prove its own value
            assert r.bound is not None and want * (1 - 1e-6) - 1e-9 <= r.bound <= want * (1 + 1e-6) + 1e-9, (r.bound, want)


def test_moe_jobs_go_to_the_vertex_model_and_the_milp_refuses_them() -> None:
    inst = GpuMappingInstance.from_dict(llm_instance(0, kind="moe"))
    assert exact.run_cpsat(inst, objective="cut", workers=1).info["model"] == "vertices"
    with pytest.raises(InputError, match="MoE stages"):
        exact.run_highs(inst, objective="cut")


def test_infeasible_packing_is_proven_by_all_three() -> None:
    """t = 3 (2 replicas) and t = 2 (2 replicas) on servers of 4, 4 and 2 free GPUs (g = 4): each
    4-GPU server takes one 3-slice replica and has 1 GPU left, so one 2-slice replica has nowhere
    to go. No quick count argument shows it (every stage fits somewhere; the 2-GPU server can take
    part of stage 1): the solvers must prove it."""
    job = _job(_stage(replicas=2, tensor_parallel=3, tp_bytes=1e6, out_bytes=1e6),
               _stage(replicas=2, tensor_parallel=2, tp_bytes=1e6, in_bytes=1e6))
    inst = GpuMappingInstance(G4, job, (4, 4, 2))
    assert exact._packing_impossible(exact.coefficients(inst)) is None
    assert pack_groups(job, inst.servers) is None
    for name in ("cpsat", "highs", "brute-force"):
        for objective in ("cut", "alpha"):
            r = solve(FORMULATION, inst, name, objective=objective)
            assert r.status is Status.INFEASIBLE and r.solution is None, (name, objective, r.message)


def test_a_stage_too_large_for_every_server_is_infeasible_at_once() -> None:
    job = _job(_stage(replicas=1, tensor_parallel=4, tp_bytes=1e6))
    inst = GpuMappingInstance(G4, job, (3, 1))
    r = exact.run_highs(inst, objective="alpha")
    assert r.status is Status.INFEASIBLE and "stage 0's 1 replicas of 4 GPUs" in r.message


def test_cpsat_tensor_parallel_time_limit_keeps_a_feasible_incumbent() -> None:
    inst = GpuMappingInstance.from_dict(llm_instance(1, kind="tp"))
    start = feasible_mapping(inst, seed=0)
    assert start is not None and evaluate(inst, {"assignment": start}).feasible


# ----------------------------------------------------------------------------- Heavy-Edge wiring
def test_heavy_edge_mapping_is_heavy_edge_on_the_papers_jobs() -> None:
    from optkit.formulations.gpu_mapping.generate import SUITES

    for _, d in SUITES["small"].build()[:6]:
        inst = GpuMappingInstance.from_dict(d)
        assert colocation_groups(inst.job) == []
        assert heavy_edge_mapping(inst.job, inst.servers, seed=1) == heavy_edge_job(inst.job, inst.servers, seed=1)


def test_colocation_groups_are_the_slices_of_each_replica() -> None:
    job = _job(_stage(replicas=1, out_bytes=2e6),
               _stage(replicas=2, tensor_parallel=3, tp_bytes=1e6, in_bytes=1e6, out_bytes=1e6),
               _stage(replicas=1, experts=2, expert_bytes=1e6, in_bytes=2e6))
    assert colocation_groups(job) == [[1, 2, 3], [4, 5, 6]]


def test_heavy_edge_keeps_tensor_slices_together() -> None:
    """Heavy-Edge and heavy-edge-refine (both objectives) on tensor-parallel jobs: every replica's
    slices on one server (Heavy-Edge's colocate, wired by colocation.heavy_edge_mapping and
    refine_mapping), evaluate-feasible, never better than brute force's optimum; alpha~min maps the
    same way on the fewest servers."""
    for seed in range(4):
        inst = GpuMappingInstance.from_dict(llm_instance(seed, kind="tp"))
        for algorithm in ("heavy-edge", "heavy-edge-refine"):
            for objective in ("alpha", "cut"):
                r = solve(FORMULATION, inst, algorithm, objective=objective, seed=0)
                ev = evaluate(inst, r.solution)
                assert r.status is Status.FEASIBLE and ev.feasible, (seed, algorithm, objective, ev.violations)
                sv = vertex_servers(inst.job, r.solution["assignment"])
                assert all(len({int(sv[v]) for v in grp}) == 1 for grp in colocation_groups(inst.job))
                opt, _ = exact.brute_force(inst, objective)
                assert ev.objectives[objective] >= opt * (1 - 1e-9), (seed, algorithm, objective)
        servers = fewest_servers(inst.job.n_replicas, inst.cluster.gpus_per_server)
        est = alpha_min_estimate(inst.job, inst.cluster, seed=0)
        fewest = GpuMappingInstance(inst.cluster, inst.job, tuple(servers))
        assert est == evaluate(fewest, {"assignment": heavy_edge_mapping(inst.job, servers, seed=0)}).objectives["alpha"]


def test_every_heavy_edge_path_keeps_replicas_whole_where_the_edges_pull_them_apart() -> None:
    """Two replicas of t = 2 slices with a light slice all-reduce (tp_bytes 1 kB) and heavy
    data-parallel rings (h = 4e8 B) on servers of 2 and 2 free GPUs: the heaviest edges join slice j
    of replica 0 to slice j of replica 1, so Heavy-Edge without groups splits both replicas (checked
    here); every job-level path (heavy-edge, heavy-edge-refine on both objectives, alpha~min on the
    fewest servers) keeps each replica whole."""
    job = _job(_stage(replicas=2, tensor_parallel=2, tp_bytes=1e3, param_bytes=4e8))
    inst = GpuMappingInstance(Cluster(2, 1.25e9, 3e11), job, (2, 2))
    assert heavy_edge_job(job, [2, 2], seed=0) == [[0, 1, 0, 1]]  # the groups ignored: both replicas split
    for algorithm in ("heavy-edge", "heavy-edge-refine"):
        for objective in ("alpha", "cut"):
            r = solve(FORMULATION, inst, algorithm, objective=objective, seed=0)
            a = r.solution["assignment"][0]
            assert a[0] == a[1] and a[2] == a[3] and a[0] != a[2], (algorithm, objective, a)
            assert evaluate(inst, r.solution).feasible
    # alpha~min on the fewest servers (g = 2: two servers): the replicas whole, timed by vertex_times
    whole = evaluate(inst, {"assignment": [[0, 0, 1, 1]]}).objectives["alpha"]
    assert alpha_min_estimate(job, inst.cluster, seed=0) == whole


def test_heavy_edge_refine_on_moe_jobs_descends_on_vertex_times() -> None:
    """heavy-edge-refine on alpha for MoE jobs (refine.vertex_alpha_descent, timed by vertex_times):
    feasible, never worse than Heavy-Edge, never better than brute force, strictly better than
    Heavy-Edge on some seeded job, and a local optimum: no swap of two vertices on different servers
    lowers alpha."""
    improved = False
    for seed in range(8):
        inst = GpuMappingInstance.from_dict(llm_instance(seed, kind="moe"))
        he = evaluate(inst, solve(FORMULATION, inst, "heavy-edge", objective="alpha", seed=0).solution)
        r = solve(FORMULATION, inst, "heavy-edge-refine", objective="alpha", seed=0)
        ev = evaluate(inst, r.solution)
        opt, _ = exact.brute_force(inst, "alpha")
        a = ev.objectives["alpha"]
        assert ev.feasible and opt * (1 - 1e-9) <= a <= he.objectives["alpha"] * (1 + 1e-12), seed
        improved |= a < he.objectives["alpha"] * (1 - 1e-9)
        sv = vertex_servers(inst.job, r.solution["assignment"])
        for i in range(len(sv)):
            for j in range(i + 1, len(sv)):
                if sv[i] != sv[j]:
                    sw = sv.copy()
                    sw[i], sw[j] = sv[j], sv[i]
                    assert vertex_times(inst.job, inst.cluster, sw).max() >= a * (1 - 1e-9), (seed, i, j)
    assert improved
    r = solve(FORMULATION, GpuMappingInstance.from_dict(llm_instance(0, kind="moe")), "heavy-edge-refine",
              objective="cut", seed=0)
    assert r.status is Status.FEASIBLE


# ----------------------------------------------------------------------------- shipped LLM jobs
def test_shipped_llm_instances_are_regenerated_byte_for_byte(tmp_path: Any) -> None:
    from optkit.formulations.gpu_mapping.llm_models import llm_folder, write_llm_instances

    for path in write_llm_instances(tmp_path):
        assert path.read_text() == (llm_folder() / path.name).read_text(), path.name


def test_shipped_llm_layouts_follow_the_cited_facts() -> None:
    """GPT-3: TP 8 x PP 16 on 1024 GPUs (so DP 8); Mixtral: EP 8 x PP 4, 8 experts (64 GPUs)."""
    from optkit.formulations.gpu_mapping.llm_models import LLM_INSTANCES

    gpt = GpuMappingInstance.from_dict(LLM_INSTANCES["gpt3-175b_tp8-pp16-dp8"]())
    assert [(s.replicas, s.tensor_parallel) for s in gpt.job.stages] == [(8, 8)] * 16 and gpt.job.n_replicas == 1024
    # 175B parameters: 96 layers x 12 h^2 + the embedding twice (first and last stage), h = 12288
    params = sum(s.param_bytes for s in gpt.job.stages) / 2
    assert 174e9 < params - 51200 * 12288 < 176e9
    mix = GpuMappingInstance.from_dict(LLM_INSTANCES["mixtral-8x7b_ep8-pp4-dp16_mixed"]())
    assert [(s.replicas, s.experts) for s in mix.job.stages] == [(2, 8)] * 4 and sum(mix.servers) == 64
    # 46.7B parameters (Jiang et al.: "47B total"), counting the embedding and output layer once each
    assert 46.5e9 < sum(s.param_bytes for s in mix.job.stages) / 2 < 46.9e9


def test_scale_llm_instances_scale_only_the_data_parallel_degree() -> None:
    """The 16,384-GPU instances: GPT-3 at DP 128 (TP 8 x PP 16, the published global batch: 12
    sequences a replica, so a stage's activations are 12/192 of the DP 8 job's), Mixtral at 512
    replicas of the 8 expert groups (each replica's stage exactly as in the 64-GPU job)."""
    from optkit.formulations.gpu_mapping.llm_models import LLM_INSTANCES, LLM_SCALE_INSTANCES

    gpt = GpuMappingInstance.from_dict(LLM_SCALE_INSTANCES["gpt3-175b_tp8-pp16-dp128"]())
    small = GpuMappingInstance.from_dict(LLM_INSTANCES["gpt3-175b_tp8-pp16-dp8"]())
    assert gpt.job.n_replicas == sum(gpt.servers) == 16_384 and len(gpt.servers) == 2048
    assert [(s.replicas, s.tensor_parallel) for s in gpt.job.stages] == [(128, 8)] * 16
    assert [s.param_bytes for s in gpt.job.stages] == [s.param_bytes for s in small.job.stages]
    assert gpt.job.stages[3].out_bytes == small.job.stages[3].out_bytes * 12 / 192
    for free in ("packed", "mixed"):
        mix = GpuMappingInstance.from_dict(LLM_SCALE_INSTANCES[f"mixtral-8x7b_ep8-pp4-dp4096_{free}"]())
        base = GpuMappingInstance.from_dict(LLM_INSTANCES[f"mixtral-8x7b_ep8-pp4-dp16_{free}"]())
        assert mix.job.n_replicas == sum(mix.servers) == 16_384
        assert [s.replicas for s in mix.job.stages] == [512] * 4
        assert [s.to_dict() | {"replicas": 2} for s in mix.job.stages] == [s.to_dict() for s in base.job.stages]


def test_place_takes_servers_in_replicas_of_t_and_keeps_slices_together() -> None:
    """gpu-mapping's place() on a job of t = 2 in every stage: free GPUs 3, 3 and 2 offer one, one and
    one replica of 2 GPUs; the most-free rule takes the two 3-GPU nodes, 2 GPUs each (by GPUs it would
    take 3 + 1 and split a replica); each replica's slices on one node; alpha is evaluate's."""
    from optkit.formulations.gpu_mapping.place import place

    job = _job(_stage(replicas=2, tensor_parallel=2, tp_bytes=1e3, param_bytes=4e8))
    p = place(job, {"a": 3, "b": 3, "c": 2}, cluster=G4)
    assert p.ok and p.gpus == {"a": 2, "b": 2}
    row = p.assignment[0]
    assert row[0] == row[1] and row[2] == row[3] and row[0] != row[2]
    local = [[{"a": 0, "b": 1}[n] for n in row]]
    assert p.alpha == evaluate(GpuMappingInstance(G4, job, (2, 2)), {"assignment": local}).objectives["alpha"]
    no = place(job, {"a": 3, "b": 1, "c": 1})  # 5 GPUs free, but room for one replica only
    assert not no.ok and "room for 1 such replicas" in str(no.detail)


@pytest.mark.parametrize("servers", [(4, 2), (3, 3), (2, 2, 2)])
def test_exact_models_where_activations_decide(servers: tuple[int, ...]) -> None:
    """A plain stage feeding a tensor-parallel one (the bottleneck: 3 s of computation) with heavy
    activations (4e8 bytes): eq. (5)'s share of a slice (divided by t) decides alpha, so a count
    model with a wrong slice share proves a wrong optimum. CP-SAT, HiGHS and the brute force agree."""
    job = _job(_stage(replicas=2, out_bytes=4e8, param_bytes=1e6),
               _stage(replicas=2, tensor_parallel=2, tp_bytes=1e6, in_bytes=4e8, out_bytes=2e8, param_bytes=1e6,
                      fwd_time=1.0, bwd_time=2.0),
               _stage(replicas=1, in_bytes=4e8, param_bytes=1e6))
    inst = GpuMappingInstance(Cluster(4, 1.25e9, 3e11), job, servers + (1,))
    for objective in ("alpha", "cut"):
        want, _ = exact.brute_force(inst, objective)
        for r in (exact.run_cpsat(inst, objective=objective, seed=0, workers=1),
                  exact.run_highs(inst, objective=objective, seed=0)):
            assert r.status is Status.OPTIMAL and _close(r.bound, want), (objective, r.bound, want)
            assert _close(evaluate(inst, r.solution).objectives[objective], want)


def test_place_times_an_moe_job_by_its_vertices() -> None:
    """place() maps through heavy_edge_mapping and times a job with MoE stages by vertex_times:
    its alpha is evaluate's on the same mapping."""
    from optkit.formulations.gpu_mapping import place

    inst = GpuMappingInstance.from_dict(llm_instance(2, kind="moe"))
    free = {f"node{m}": c for m, c in enumerate(inst.servers)}
    p = place(inst.job, free, cluster=inst.cluster, seed=0)
    assert p.ok and p.alpha is not None
    index = {node: m for m, node in enumerate(p.gpus)}
    mapped = GpuMappingInstance(inst.cluster, inst.job, tuple(p.gpus.values()))
    ev = evaluate(mapped, {"assignment": [[index[n] for n in row] for row in p.assignment]})
    assert ev.feasible and _close(ev.objectives["alpha"], p.alpha)


# ----------------------------------------------------------------------------- optkit.testing strategies
def test_strategies_draw_tensor_parallel_and_moe_jobs_the_exact_solvers_agree_on() -> None:
    """``instances("gpu-mapping", max_tensor_parallel=..., max_experts=...)`` draws valid, feasible
    jobs with both kinds of stage (each kind seen); on every draw CP-SAT proves brute force's
    optimum. With the default limits no such stage is drawn (the paper's jobs, as before)."""
    from hypothesis import given, settings

    from optkit.testing import strategies

    seen = {"tp": 0, "moe": 0}

    @settings(max_examples=12, deadline=None, derandomize=True)
    @given(strategies.instances("gpu-mapping", max_replicas=6, max_tensor_parallel=3, max_experts=3))
    def check(inst: GpuMappingInstance) -> None:
        seen["tp"] += any(s.tensor_parallel > 1 for s in inst.job.stages)
        seen["moe"] += inst.job.has_experts
        want, _ = exact.brute_force(inst, "alpha")
        r = exact.run_cpsat(inst, objective="alpha", seed=0, workers=1)
        assert r.status is Status.OPTIMAL and _close(evaluate(inst, r.solution).objectives["alpha"], want)

    check()
    assert seen["tp"] and seen["moe"], seen

    @settings(max_examples=10, deadline=None, derandomize=True)
    @given(strategies.instances("gpu-mapping"))
    def plain(inst: GpuMappingInstance) -> None:
        assert inst.job.is_plain

    plain()
