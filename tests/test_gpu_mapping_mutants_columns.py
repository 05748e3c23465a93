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
