"""What gpu-mapping's column programme (formulations/gpu_mapping/columns.py) reports about its integer
solves: the engine (``INTEGER_SOLVER``) and that engine's work, per call."""

from __future__ import annotations

import time

import numpy as np
import pytest

from optkit.formulations.gpu_mapping import Cluster, GpuMappingInstance, PipelineJob, Stage, columns
from optkit.formulations.gpu_mapping.exact import coefficients


@pytest.mark.parametrize("engine", columns.INTEGER_SOLVERS)
def test_solve_columns_reports_its_integer_engine_and_its_work(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`columns.solve_columns`'s docstring example (two stages of two replicas on servers of
    2, 1 and 1 free GPUs; optimum: stage 1 on the first server), run twice per engine. ``info``
    names the engine and the work of its integer solves in this call only: with HiGHS its seconds,
    a part of the call's own time (both read on the same ``perf_counter`` clock, HiGHS' inside the
    call's), and no CP-SAT deterministic time; with CP-SAT its deterministic time and no HiGHS
    seconds. The second call starts again from zero, so it reports no more than its own time."""
    monkeypatch.setattr(columns, "INTEGER_SOLVER", engine)
    job = PipelineJob((Stage(2, .1, .2, 0, 1e6, 2e7), Stage(2, .1, .2, 1e6, 0, 2e7)), "ring")
    co = coefficients(GpuMappingInstance(Cluster(8, 1.25e9, 3e11), job, (2, 1, 1)))
    for _ in range(2):
        began = time.perf_counter()
        got = columns.solve_columns(co, np.array([[0, 1, 1], [2, 0, 0]]), seed=0, workers=1)
        wall = time.perf_counter() - began
        assert got.status == "optimal" and got.counts.tolist() == [[0, 1, 1], [2, 0, 0]]
        assert got.info["integer_solver"] == engine
        if engine == "highs":
            assert 0.0 < got.info["highs_seconds"] <= wall and got.info["deterministic_time"] == 0.0
        else:
            assert got.info["highs_seconds"] == 0.0 and got.info["deterministic_time"] > 0.0


@pytest.mark.parametrize("suite, name, warm, lp, optimum", [
    # the LP bound is the optimum; Heavy-Edge's cut is not, so an integer solve runs
    ("small", "t5-11b_pipe5x2_ring_m3_s29", 11_347_804_160.0, 5_721_088_000.0, 5_721_088_000.0),
    # the LP bound is below the optimum: the integer solve proves it (up to the resolution)
    ("medium", "resnet152_pipe4x8_ring_mixed_s105", 1_236_963_056.0, 1_178_758_672.0, 1_220_612_400.0),
])
def test_every_step_after_the_warm_start_records_its_bound(suite: str, name: str, warm: float, lp: float,
                                                          optimum: float) -> None:
    """The points a column run hands the anytime record (:mod:`optkit.anytime`, as recorded, before
    any smoothing): the warm start (Heavy-Edge's cut) has no bound; the point after column
    generation carries the LP bound, and each point after an integer solve the bound proven so
    far; the last is the optimum's cut with the run's bound (the integer solve's, within the
    programme's resolution of the optimum)."""
    from optkit.anytime import recording
    from optkit.formulations.gpu_mapping import FORMULATION, exact

    inst = GpuMappingInstance.from_dict(dict(FORMULATION.suites[suite].build())[name])
    with recording() as points:
        r = exact.run_cpsat(inst, objective="cut", time_limit=None, seed=0, workers=1)
    assert r.info["model"] == "columns" and r.info["solver_status"] == "OPTIMAL"
    assert r.info["lp_bound"] == pytest.approx(lp, rel=1e-12)
    assert points[0][1:] == (warm, None) and points[1][1:] == (warm, r.info["lp_bound"])
    assert all(p[2] is not None for p in points[1:]), points
    assert points[-1][1] == optimum and points[-1][2] == r.bound
    assert optimum * (1 - 1e-8) <= r.bound <= optimum
