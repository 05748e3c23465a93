"""The alpha dynamic programme (count_dp) against brute force, and heavy-edge-refine using it."""

from __future__ import annotations

import pytest

from optkit.formulations.gpu_mapping import GpuMappingInstance
from optkit.formulations.gpu_mapping.count_dp import assignment_from_counts, optimal_alpha_counts
from optkit.formulations.gpu_mapping.exact import brute_force
from optkit.formulations.gpu_mapping.generate import random_small, table2_cases
from optkit.formulations.gpu_mapping.model import alpha_from_counts, stage_counts
from optkit.formulations.gpu_mapping.refine import refine_mapping


@pytest.mark.parametrize("seed", range(25))
def test_dp_equals_brute_force(seed: int) -> None:
    inst = GpuMappingInstance.from_dict(random_small(seed))
    value, x = optimal_alpha_counts(inst.job, inst.cluster, list(inst.servers))
    best, _ = brute_force(inst, "alpha")
    assert value == pytest.approx(best, rel=1e-12)
    # the returned counts are feasible and realise the value by the model's own eq. (7)
    assert x.sum(axis=1).tolist() == [st.replicas for st in inst.job.stages]
    assert x.sum(axis=0).tolist() == list(inst.servers)
    assert alpha_from_counts(inst.job, inst.cluster, x) == pytest.approx(value, rel=1e-12)


def test_dp_declines_large_spaces() -> None:
    inst = GpuMappingInstance.from_dict(random_small(3))
    assert optimal_alpha_counts(inst.job, inst.cluster, list(inst.servers), max_states=1) is None


def test_refine_is_optimal_on_vgg19_table2() -> None:
    """VGG19's configuration (6 stages, 1,500 count states) goes through the programme; the
    result's alpha is the programme's optimum, at most Heavy-Edge's, and exact_states=0 with stage_nodes=0
    (no stage search either) restores the descent."""
    # the table2 suite's first six VGG19 cases: table2_cases draws each case after the earlier
    # ones of its job only, so the first six need not build the other 34 (0.85 CPU s a build)
    items = table2_cases("vgg19", "table2", cases=6)
    for data in items:
        inst = GpuMappingInstance.from_dict(data)
        a, info = refine_mapping(inst, objective="alpha")
        assert info["exact_counts"]
        value, _ = optimal_alpha_counts(inst.job, inst.cluster, list(inst.servers))
        got = alpha_from_counts(inst.job, inst.cluster, stage_counts(inst.job, a, len(inst.servers)))
        assert got == pytest.approx(value, rel=1e-12) and got <= info["start_objective"]
        _a, info0 = refine_mapping(inst, objective="alpha", exact_states=0, stage_nodes=0)
        assert not info0["exact_counts"]



def test_dp_equals_cpsat_on_vgg19_table2() -> None:
    from optkit.solve import solve

    data = table2_cases("vgg19", "table2", cases=1)[0]  # the table2 suite's first VGG19 case
    inst = GpuMappingInstance.from_dict(data)
    value, x = optimal_alpha_counts(inst.job, inst.cluster, list(inst.servers))
    cp = solve("gpu-mapping", data, "cpsat", objective="alpha", time_limit=60, seed=0)
    assert cp.status.value == "optimal" and value == pytest.approx(cp.objective, rel=1e-9)
    a = assignment_from_counts(inst.job, x)
    assert (stage_counts(inst.job, a, len(inst.servers)) == x).all()
