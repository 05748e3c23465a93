"""The exact solvers' refusals and reports (formulations/gpu_mapping/exact.py, exact_vertices.py):
brute force refuses an instance beyond its limits naming the limit and the solvers to use instead;
the vertex model (jobs with MoE stages) reports its settings and CP-SAT's status."""

from __future__ import annotations

import math

import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping.exact import BRUTE_FORCE_MAX_ARRANGEMENTS, run_brute_force
from optkit.formulations.gpu_mapping.exact_vertices import solve_vertex_model
from optkit.formulations.gpu_mapping.model import Cluster, GpuMappingInstance, PipelineJob, Stage, evaluate
from optkit.result import Status


def test_brute_force_refuses_a_stage_with_too_many_arrangements() -> None:
    """24 replicas of one stage on three 8-GPU servers: one count matrix, 24!/((8!)^3 3!) arrangements
    (three blocks of 8, unordered)."""
    inst = GpuMappingInstance(Cluster(8, 1.25e9, 3e11), PipelineJob((Stage(24, 0.1, 0.2, 0.0, 0.0, 1e8),), "ring"),
                              (8, 8, 8))
    assert math.factorial(24) // (math.factorial(8) ** 3 * 6) == 1577585295
    with pytest.raises(InputError) as err:
        run_brute_force(inst, objective="cut")
    assert err.value.field == "instance"
    assert err.value.message.startswith("is too large for brute-force: stage 0 has up to 1577585295 arrangements "
                                        f"per count matrix (limit {BRUTE_FORCE_MAX_ARRANGEMENTS}); use cpsat or highs")
    assert run_brute_force(inst, objective="alpha").status == Status.OPTIMAL  # alpha needs the counts only


def _moe() -> GpuMappingInstance:
    job = PipelineJob((Stage(2, 0.02, 0.04, 0.0, 1e6, 1e8, experts=2, expert_bytes=4e7),
                       Stage(1, 0.01, 0.02, 2e6, 0.0, 1e7)), "ring")
    return GpuMappingInstance(Cluster(4, 1.25e9, 3e11), job, (3, 2))


@pytest.mark.parametrize("symmetry", [True, False])
def test_vertex_model_reports_its_settings_and_solves_to_the_optimum(symmetry: bool) -> None:
    inst = _moe()
    res = solve_vertex_model(inst, objective="alpha", seed=0, workers=1, symmetry=symmetry)
    assert res.status == Status.OPTIMAL and res.message == res.info["solver_status"] == "OPTIMAL"
    assert (res.info["model"], res.info["symmetry_breaking"], res.info["incumbent"]) == ("vertices", symmetry, "solver")
    alpha = evaluate(inst, res.solution).objectives["alpha"]
    assert res.bound <= alpha * (1 + 1e-6) and alpha <= res.bound * (1 + 1e-6) + res.info["resolution"]


def test_a_deadline_passed_while_building_the_cp_model_names_that_stage() -> None:
    """The deadline's clock (a test clock, so no waiting) has passed when the model is built: the
    build stops with the stage it was in (optkit.deadline: a time_limit result names it)."""
    from optkit.deadline import DeadlineReached, within
    from optkit.formulations.gpu_mapping.exact import build_cp_model

    inst = _moe()
    plain = GpuMappingInstance(inst.cluster, PipelineJob((Stage(2, 0.02, 0.04, 0.0, 1e6, 1e8),
                                                          Stage(1, 0.01, 0.02, 2e6, 0.0, 1e7)), "ring"), (2, 1))
    ticks = iter(range(0, 10**6, 10))
    with within(1.0, clock=lambda: float(next(ticks))):
        with pytest.raises(DeadlineReached, match="time limit of 1 s reached while building the CP-SAT model"):
            build_cp_model(plain, "alpha")
