"""The branch and bound over stages (stage_dp) against the count programme, and heavy-edge-refine
using it on GPT-175B's Table II cases."""

from __future__ import annotations

import pytest

from optkit.formulations.gpu_mapping import FORMULATION, GpuMappingInstance
from optkit.formulations.gpu_mapping.count_dp import optimal_alpha_counts
from optkit.formulations.gpu_mapping.generate import random_small
from optkit.formulations.gpu_mapping.model import alpha_from_counts, stage_counts
from optkit.formulations.gpu_mapping.refine import refine_mapping
from optkit.formulations.gpu_mapping.stage_dp import stage_dfs_alpha


@pytest.mark.parametrize("seed", range(25))
def test_complete_search_equals_the_count_programme(seed: int) -> None:
    inst = GpuMappingInstance.from_dict(random_small(seed))
    best, _x = optimal_alpha_counts(inst.job, inst.cluster, list(inst.servers))
    value, x, complete = stage_dfs_alpha(inst.job, inst.cluster, list(inst.servers), max_nodes=10**7)
    assert complete and value == pytest.approx(best, rel=1e-12)
    assert x.sum(axis=1).tolist() == [st.replicas for st in inst.job.stages]
    assert x.sum(axis=0).tolist() == list(inst.servers)
    assert alpha_from_counts(inst.job, inst.cluster, x) == value
    # with the optimum as the bound to beat, nothing is found and the search still completes
    value2, x2, complete2 = stage_dfs_alpha(inst.job, inst.cluster, list(inst.servers), upper=value,
                                            max_nodes=10**7)
    assert complete2 and x2 is None and value2 == value


def test_budget_claims_nothing() -> None:
    data = next(d for _n, d in FORMULATION.suites["table2"].build() if d["meta"]["model"] == "gpt-175b")
    inst = GpuMappingInstance.from_dict(data)
    _v, _x, complete = stage_dfs_alpha(inst.job, inst.cluster, list(inst.servers), max_nodes=1)
    assert not complete


def test_refine_proves_gpt175b_fragmented_cases() -> None:
    """GPT-175B's fragmented free-GPU cases: the stage search completes within its default
    budget, so refine's answer is the optimum (CP-SAT's); stage_nodes=0 restores the descent."""
    from optkit.solve import solve

    items = [d for _n, d in FORMULATION.suites["table2"].build()
             if d["meta"]["model"] == "gpt-175b" and d["meta"].get("pattern") == "fragmented"][:2]
    assert items
    for data in items:
        inst = GpuMappingInstance.from_dict(data)
        a, info = refine_mapping(inst, objective="alpha", seed=0)
        assert info["stage_search"] == "complete" and info["exact_counts"] and info["moves"] == 0
        got = alpha_from_counts(inst.job, inst.cluster, stage_counts(inst.job, a, len(inst.servers)))
        cp = solve("gpu-mapping", data, "cpsat", objective="alpha", time_limit=60, seed=0)
        assert cp.status.value == "optimal" and got == pytest.approx(cp.objective, rel=1e-9)
        _a, info0 = refine_mapping(inst, objective="alpha", seed=0, stage_nodes=0)
        assert info0["stage_search"] == "not run" and not info0["exact_counts"]
