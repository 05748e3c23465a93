"""The unit cut bound of jobs with tensor-parallel / MoE stages (formulations/gpu_mapping/unit_bound.py)
and the exact runs it settles before any model is built (bound_proof.py).

Oracles: the brute force over placements (``exact.naive_enumeration``), bounds.degree_bound (the
same minimum as an exact linear assignment on the dense weight matrix, for jobs of single-GPU
replicas), and a case worked by hand.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from optkit.formulations.gpu_mapping import evaluate, exact
from optkit.formulations.gpu_mapping.bounds import degree_bound, lower_bound
from optkit.formulations.gpu_mapping.generate import random_small
from optkit.formulations.gpu_mapping.llm_generate import llm_instance
from optkit.formulations.gpu_mapping.model import GpuMappingInstance
from optkit.formulations.gpu_mapping.unit_bound import unit_cut_bound
from optkit.result import Status

LLM = Path(__file__).resolve().parents[1] / "instances" / "gpu-mapping" / "llm"


def _meets(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.parametrize("kind", ["tp", "moe", "mixed"])
def test_unit_bound_never_exceeds_the_brute_force_optimum(kind: str) -> None:
    """On 20 seeded Sec. VI jobs of each kind (up to 8 GPUs, servers of 4), the bound is at most the
    optimal cut by brute force, never below the dense degree bound, and equal to the optimum on
    some of them (31 of the 60 when written, against 22 for the dense degree bound): a bound that
    is never tight would pass the first check too."""
    tight = 0
    for seed in range(20):
        inst = GpuMappingInstance.from_dict(llm_instance(seed, kind=kind))
        optimum, _ = exact.naive_enumeration(inst, "cut")
        bound = unit_cut_bound(inst)
        assert bound <= optimum * (1 + 1e-9) + 1e-9, (kind, seed, bound, optimum)
        if len(inst.servers) > 1:
            assert bound >= degree_bound(inst) * (1 - 1e-9), (kind, seed)
        tight += _meets(bound, optimum)
    assert tight >= 5, tight


def test_unit_bound_is_the_degree_bound_on_jobs_of_replicas() -> None:
    """With every unit a single vertex the unit bound is bound 1 of bounds.py; computed here from the
    stage structure and the duals of a transportation LP, it equals bounds.degree_bound's exact linear
    assignment on the dense weight matrix on 40 random synthetic instances of 2 or more servers."""
    checked = 0
    for seed in range(60):
        inst = GpuMappingInstance.from_dict(random_small(seed))
        if len(inst.servers) < 2:
            assert unit_cut_bound(inst) == 0.0
            continue
        want = degree_bound(inst)
        assert math.isclose(unit_cut_bound(inst), want, rel_tol=1e-9, abs_tol=1e-6), seed
        checked += 1
    assert checked >= 40, checked


def test_tensor_slices_count_together_by_hand() -> None:
    """One stage of k = 2 replicas of t = 2 slices, h = 1e9, tp_bytes = 1e8, ring; two servers of 2 GPUs.
    Edges: slices 0-1 of a replica, 2 (t-1) tp_bytes / t = 1e8 per ring edge, twice (the two-replica
    ring's two edges): 2e8; position j of replica 0 to replica 1, 2 (k-1) (h/t) / k = 5e8, twice: 1e9.
    Each replica fills a server, so the only mapping cuts the two data-parallel pairs: 2e9. The unit
    bound: each vertex keeps its unit-mate and has c - t = 0 places left, r_v = 1e9, half of 4e9 = 2e9,
    the optimum. The degree bound without units lets each vertex keep its heaviest edge (1e9), r_v = 2e8:
    half of 8e8 = 4e8."""
    data = {"problem": "gpu-mapping", "cluster": {"gpus_per_server": 2, "inter_bandwidth": 1e9, "intra_bandwidth": 1e11},
            "job": {"allreduce": "ring", "stages": [{"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0,
                                                      "out_bytes": 0.0, "param_bytes": 1e9, "tensor_parallel": 2,
                                                      "tp_bytes": 1e8}]},
            "servers": [2, 2]}
    inst = GpuMappingInstance.from_dict(data)
    optimum, _ = exact.naive_enumeration(inst, "cut")
    assert optimum == pytest.approx(2e9, rel=1e-12)
    assert unit_cut_bound(inst) == pytest.approx(2e9, rel=1e-9)
    assert lower_bound(inst, "cut") == unit_cut_bound(inst)
    assert degree_bound(inst) == pytest.approx(4e8, rel=1e-9)


def test_mixed_capacities_use_the_transportation_duals() -> None:
    """Servers of different sizes: the bound is the transportation LP's minimum (checked against the
    brute force on the seeded jobs above); here, a Sec. VI job whose free GPUs come in several sizes
    gets a bound above what the duals' zero vector alone gives (every vertex at its cheapest size)."""
    from optkit.formulations.gpu_mapping.unit_bound import unit_costs

    for seed in range(40):
        inst = GpuMappingInstance.from_dict(llm_instance(seed, kind="moe"))
        r, caps = unit_costs(inst)
        if len(caps) < 2:
            continue
        cheapest = 0.5 * float(sum(min(row) for row in r))
        if unit_cut_bound(inst) > cheapest * (1 + 1e-6):
            optimum, _ = exact.naive_enumeration(inst, "cut")
            assert unit_cut_bound(inst) <= optimum * (1 + 1e-9) + 1e-9
            return
    pytest.fail("no seeded MoE job with mixed capacities where the LP's duals raise the bound")


def _shipped(name: str) -> dict[str, Any]:
    return json.loads((LLM / f"{name}.json").read_text())


@pytest.mark.parametrize("name", ["mixtral-8x7b_ep8-pp4-dp16_packed", "gpt3-175b_tp8-pp16-dp8"])
def test_a_start_mapping_that_meets_the_bound_is_optimal_without_a_model(name: str) -> None:
    """On the shipped 64-GPU Mixtral-like job on idle servers (each replica's 8 expert groups fill a
    server) and the 1,024-GPU GPT-3 layout, Heavy-Edge's cut equals the unit bound, so CP-SAT's run
    answers ``optimal`` with that mapping and builds no model; evaluate's cut is the bound."""
    inst = GpuMappingInstance.from_dict(_shipped(name))
    res = exact.run_cpsat(inst, objective="cut", seed=0, workers=1)
    assert res.status is Status.OPTIMAL and res.info["solver_status"].startswith("not run"), res.info
    value = evaluate(inst, res.solution).objectives["cut"]
    assert res.bound == unit_cut_bound(inst) and _meets(value, res.bound), (value, res.bound)


def test_a_start_mapping_above_the_bound_goes_to_the_solver_with_the_bound_as_a_floor(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On the 64-GPU Mixtral-like job on a shared cluster's free GPUs Heavy-Edge's cut is above the
    bound, so the vertex model is solved; stopped by a work limit (0.2 s of CP-SAT's deterministic
    time: the same stop on any machine), the run reports the larger of CP-SAT's bound and the unit
    bound, here the unit bound, never above the mapping it returns."""
    from optkit.solvers import cpsat

    monkeypatch.setitem(cpsat.WORK_LIMITS, "max_deterministic_time", 0.2)
    inst = GpuMappingInstance.from_dict(_shipped("mixtral-8x7b_ep8-pp4-dp16_mixed"))
    res = exact.run_cpsat(inst, objective="cut", seed=0, workers=1)
    assert res.status is Status.TIME_LIMIT and res.info["model"] == "vertices", res.info
    assert res.info["bound_from"] == "bounds.lower_bound" and res.bound == unit_cut_bound(inst) > 0, res.info
    assert evaluate(inst, res.solution).objectives["cut"] >= res.bound


def test_a_vertex_model_run_without_a_solver_mapping_returns_the_start_and_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Stopped before CP-SAT finds any mapping (a work limit of 1e-9 deterministic seconds), the
    vertex model's run returns Heavy-Edge's start as its incumbent, named so in ``info``, with CP-SAT's
    deterministic time recorded."""
    from optkit.solvers import cpsat

    monkeypatch.setitem(cpsat.WORK_LIMITS, "max_deterministic_time", 1e-9)
    inst = GpuMappingInstance.from_dict(_shipped("mixtral-8x7b_ep8-pp4-dp16_mixed"))
    res = exact.run_cpsat(inst, objective="cut", seed=0, workers=1)
    assert res.status is Status.TIME_LIMIT and res.info["incumbent"] == "heavy-edge warm start", res.info
    assert res.info["model"] == "vertices" and res.info["deterministic_time"] >= 0.0
    assert evaluate(inst, res.solution).feasible
