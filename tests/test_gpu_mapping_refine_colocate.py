"""heavy-edge-refine under ``colocate`` (refine.py, "Co-location"): groups move whole or not at all.

Checked on seeded jobs with groups of replicas: every group on one server and every server full
(``evaluate``) in every result, for both objectives; never worse than the co-located Heavy-Edge
start; never better than the brute-force optimum over placements that keep the groups; no change
without groups.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from optkit.formulations.gpu_mapping import Cluster, GpuMappingInstance, PipelineJob, evaluate, heavy_edge_job
from optkit.formulations.gpu_mapping.refine import heavy_edge_refine, refine_mapping
from tests.test_gpu_mapping_colocate import hidden_groups, placements
from tests.test_gpu_mapping_stage_path import random_job, random_servers

CLUSTER = Cluster(8, 1.25e9, 3e11)


def seeded(rng: np.random.Generator) -> tuple[GpuMappingInstance, list[list[int]]]:
    job = random_job(rng)
    caps = [c for c in random_servers(rng, job.n_replicas)]
    return GpuMappingInstance(CLUSTER, job, tuple(caps)), hidden_groups(rng, caps, [1, 2, 4])


def value(inst: GpuMappingInstance, a: list[list[int]], objective: str, groups: list[list[int]]) -> float:
    ev = evaluate(inst, {"assignment": a})
    assert ev.feasible, ev.violations
    flat = [m for row in a for m in row]
    for g in groups:
        assert len({flat[v] for v in g}) == 1, g
    return ev.objectives[objective]


@pytest.mark.parametrize("objective", ["cut", "alpha"])
def test_groups_stay_whole_and_refine_never_loses(objective: str) -> None:
    rng = np.random.default_rng(21 if objective == "cut" else 22)
    improved = 0
    for trial in range(60 if objective == "cut" else 30):
        inst, groups = seeded(rng)
        a, info = refine_mapping(inst, objective=objective, seed=trial, colocate=groups)
        start = heavy_edge_job(inst.job, inst.servers, seed=trial, colocate=groups)
        v1, v0 = value(inst, a, objective, groups), value(inst, start, objective, groups)
        assert v1 <= v0 * (1 + 1e-12) and info["start_objective"] == pytest.approx(v0)
        improved += v1 < v0 * (1 - 1e-9)
    assert improved >= 3, improved  # the searches do move groups


def brute_force(inst: GpuMappingInstance, groups: list[list[int]], objective: str) -> float:
    off = [int(o) for o in inst.job.offsets]
    return min(evaluate(inst, {"assignment": [flat[x:y] for x, y in zip(off[:-1], off[1:])]}).objectives[objective]
               for flat in placements(inst.job.n_replicas, list(inst.servers), groups))


@pytest.mark.parametrize("objective", ["cut", "alpha"])
def test_never_better_than_the_optimum_with_groups(objective: str) -> None:
    rng = np.random.default_rng(5)
    seen = 0
    while seen < 12:
        inst, groups = seeded(rng)
        n_units = inst.job.n_replicas - sum(len(g) - 1 for g in groups)
        if inst.job.n_replicas > 9 or len(inst.servers) ** n_units > 20_000:
            continue
        a = heavy_edge_refine(inst, objective=objective, seed=0, colocate=groups)
        assert value(inst, a, objective, groups) >= brute_force(inst, groups, objective) * (1 - 1e-12)
        seen += 1


def test_groups_decide_the_cut() -> None:
    """Worked by hand: two stages of two replicas, no activations, ring edges 2h between each
    pair (h = 4e6 and 1e6 bytes: 8e6 and 2e6), servers of 2 and 2. Groups {0, 1} and {2, 3} (each
    a stage's pair): each ring inside a server, cut 0. Groups {0, 2} and {1, 3}: every placement
    that keeps them puts one group on each server and cuts both rings, 8e6 + 2e6."""
    st = {"fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0, "out_bytes": 0.0}
    job = PipelineJob.from_dict({"allreduce": "ring", "stages": [
        {**st, "replicas": 2, "param_bytes": 4e6}, {**st, "replicas": 2, "param_bytes": 1e6}]})
    inst = GpuMappingInstance(CLUSTER, job, (2, 2))
    a = heavy_edge_refine(inst, objective="cut", colocate=[[0, 1], [2, 3]])
    assert evaluate(inst, {"assignment": a}).objectives["cut"] == 0.0
    a = heavy_edge_refine(inst, objective="cut", colocate=[[0, 2], [1, 3]])
    assert evaluate(inst, {"assignment": a}).objectives["cut"] == pytest.approx(10e6)


@pytest.mark.parametrize("objective", ["cut", "alpha"])
def test_no_groups_change_nothing(objective: str) -> None:
    rng = np.random.default_rng(9)
    for trial in range(15):
        inst, _ = seeded(rng)
        plain = heavy_edge_refine(inst, objective=objective, seed=trial)
        assert heavy_edge_refine(inst, objective=objective, seed=trial, colocate=[]) == plain
        assert heavy_edge_refine(inst, objective=objective, seed=trial, colocate=[[0]]) == plain


def unit_swaps(inst: GpuMappingInstance, a: list[list[int]], groups: list[list[int]]):
    """Every placement one swap of two equal-size units on different servers away from ``a``."""
    flat = [m for row in a for m in row]
    n = len(flat)
    grouped = {v for g in groups for v in g}
    units = groups + [[v] for v in range(n) if v not in grouped]
    off = [int(o) for o in inst.job.offsets]
    for g, h in itertools.combinations(units, 2):
        if len(g) == len(h) and flat[g[0]] != flat[h[0]]:
            new = list(flat)
            for v in g:
                new[v] = flat[h[0]]
            for v in h:
                new[v] = flat[g[0]]
            yield [new[x:y] for x, y in zip(off[:-1], off[1:])]


@pytest.mark.parametrize("objective", ["cut", "alpha"])
def test_result_is_a_local_optimum_of_unit_swaps(objective: str) -> None:
    """KL ends on a pass that gains nothing, so no single swap of equal-size units lowers the cut;
    the alpha descent ends when no such swap lowers the leximax order, hence alpha (the cut
    polish after it swaps units of one composition only, leaving alpha)."""
    rng = np.random.default_rng(31 if objective == "cut" else 32)
    for trial in range(25):
        inst, groups = seeded(rng)
        a = heavy_edge_refine(inst, objective=objective, seed=trial, colocate=groups)
        v = value(inst, a, objective, groups)
        for b in unit_swaps(inst, a, groups):
            assert evaluate(inst, {"assignment": b}).objectives[objective] >= v * (1 - 1e-9) - 1e-9, trial
