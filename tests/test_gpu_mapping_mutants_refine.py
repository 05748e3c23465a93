"""Heavy-Edge + refinement (formulations/gpu_mapping/refine.py): which search ``refine_mapping``
runs on ``alpha`` (exact count DP, stage branch and bound, leximax descent) and what its ``info``
reports about it, against its docstring, with the count DP's optimum as the oracle."""

from __future__ import annotations

from typing import Any

import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping import refine
from optkit.formulations.gpu_mapping.count_dp import optimal_alpha_counts
from optkit.formulations.gpu_mapping.model import Cluster, GpuMappingInstance, PipelineJob, Stage, evaluate
from optkit.formulations.gpu_mapping.refine import heavy_edge_refine, refine_mapping, run_heavy_edge_refine


def _instance() -> GpuMappingInstance:
    """Three stages (3, 2, 1 replicas, heavy parameters in stage 0) on servers of 3, 2 and 1 GPUs."""
    job = PipelineJob((Stage(3, 0.02, 0.04, 0.0, 4e6, 5e8), Stage(2, 0.03, 0.06, 6e6, 2e6, 1e8),
                       Stage(1, 0.01, 0.02, 4e6, 0.0, 1e7)), "ring")
    return GpuMappingInstance(Cluster(4, 1.25e9, 3e11), job, (3, 2, 1))


def _optimum(inst: GpuMappingInstance) -> float:
    found = optimal_alpha_counts(inst.job, inst.cluster, list(inst.servers))
    assert found is not None
    return found[0]


def test_alpha_with_a_small_count_space_is_the_count_dp_optimum() -> None:
    inst = _instance()
    a, info = refine_mapping(inst, objective="alpha", seed=0)
    assert (info["exact_counts"], info["stage_search"], info["passes"], info["moves"]) == (True, "not run", 0, 0)
    assert info["objective"] == pytest.approx(_optimum(inst)) == pytest.approx(evaluate(inst, {"assignment": a})
                                                                               .objectives["alpha"])
    assert info["objective_name"] == "alpha" and info["objective"] <= info["start_objective"]
    assert isinstance(info["polish_swaps"], int) and info["hit_time_limit"] is False


def test_without_the_count_dp_the_stage_search_proves_the_same_optimum() -> None:
    inst = _instance()
    a, info = refine_mapping(inst, objective="alpha", seed=0, exact_states=0)
    assert (info["exact_counts"], info["stage_search"], info["passes"], info["moves"]) == (True, "complete", 0, 0)
    assert info["objective"] == pytest.approx(_optimum(inst))


def test_without_either_the_leximax_descent_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kw: Any) -> Any:
        raise AssertionError("the count DP runs although exact_states = 0")

    monkeypatch.setattr(refine, "optimal_alpha_counts", refuse)
    inst = _instance()
    a, info = refine_mapping(inst, objective="alpha", seed=0, exact_states=0, stage_nodes=0)
    assert (info["exact_counts"], info["stage_search"]) == (False, "not run")
    assert isinstance(info["moves"], int) and info["passes"] >= 1
    assert info["objective"] <= info["start_objective"]
    # heavy_edge_refine passes exact_states through: 0 keeps the DP out there too
    assert heavy_edge_refine(inst, objective="alpha", seed=0, exact_states=0) == \
        refine_mapping(inst, objective="alpha", seed=0, exact_states=0)[0]
    res = run_heavy_edge_refine(inst, objective="alpha", seed=0, exact_states=0, stage_nodes=0)
    assert res.solution == {"assignment": a} and res.info["stage_search"] == "not run"


def test_moe_jobs_take_the_vertex_descent_and_say_so() -> None:
    job = PipelineJob((Stage(2, 0.02, 0.04, 0.0, 1e6, 1e8, experts=2, expert_bytes=4e7),
                       Stage(1, 0.01, 0.02, 2e6, 0.0, 1e7)), "ring")
    inst = GpuMappingInstance(Cluster(4, 1.25e9, 3e11), job, (3, 2))
    a, info = refine_mapping(inst, objective="alpha", seed=0)
    assert (info["passes"], info["exact_counts"], info["stage_search"]) == (0, False, "not run")
    assert isinstance(info["moves"], int)
    assert info["objective"] == pytest.approx(evaluate(inst, {"assignment": a}).objectives["alpha"])


def test_bad_objective_and_time_limit_are_named_with_the_problem() -> None:
    with pytest.raises(InputError, match=r"^gpu-mapping: objective must be one of cut, alpha, got 'speed'$"):
        refine_mapping(_instance(), objective="speed")
    with pytest.raises(InputError) as err:
        refine_mapping(_instance(), time_limit=-1.0)
    assert err.value.field == "time_limit"


def test_a_seed_reaches_heavy_edges_start() -> None:
    """The entry passes its seed on: its result is refine_mapping's with that seed."""
    inst = _instance()
    for seed in (0, 5):
        res = run_heavy_edge_refine(inst, objective="cut", seed=seed)
        assert res.solution["assignment"] == refine_mapping(inst, objective="cut", seed=seed)[0]
        assert res.info["objective"] == refine_mapping(inst, objective="cut", seed=seed)[1]["objective"]


def test_tensor_parallel_jobs_move_whole_replicas_and_say_so() -> None:
    """A tensor-parallel stage (t = 2): the searches run on units (each replica's two slices one
    unit, every other vertex alone) and keep each replica's slices on one server (Sec. VI)."""
    job = PipelineJob((Stage(2, 0.02, 0.04, 0.0, 1e6, 1e8, tensor_parallel=2, tp_bytes=1e7),
                       Stage(2, 0.01, 0.02, 1e6, 0.0, 1e7)), "ring")
    inst = GpuMappingInstance(Cluster(4, 1.25e9, 3e11), job, (4, 2))
    for objective in ("alpha", "cut"):
        a, info = refine_mapping(inst, objective=objective, seed=0)
        assert info["units"] == 4  # two slice pairs, two plain replicas
        assert a[0][0] == a[0][1] and a[0][2] == a[0][3]
        assert info["objective"] == pytest.approx(evaluate(inst, {"assignment": a}).objectives[objective])
        if objective == "alpha":
            assert (info["passes"], info["exact_counts"], info["stage_search"]) == (0, False, "not run")
            assert isinstance(info["moves"], int) and isinstance(info["polish_swaps"], int)
        else:
            assert isinstance(info["passes"], int) and info["passes"] >= 1 and isinstance(info["swaps"], int)
