"""gpu-mapping's fallback start mapping for tensor-parallel jobs (formulations/gpu_mapping/colocation.py):
the best-fit-decreasing packing of :func:`pack_groups` worked by hand."""

from __future__ import annotations

from typing import Any

from optkit.formulations.gpu_mapping.colocation import pack_groups
from optkit.formulations.gpu_mapping.model import (
    Cluster, GpuMappingInstance, PipelineJob, colocation_violations, evaluate, vertex_servers,
)

G4 = Cluster(4, 1e9, 1e11)


def _stage(**kw: Any) -> dict[str, Any]:
    return {"fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0, "out_bytes": 0.0, "param_bytes": 1e8, **kw}


def _three_stage_job() -> PipelineJob:
    """Stage 0: one replica of t = 3 slices (vertices 0-2); stage 1: two replicas of t = 2
    (vertices 3-4 and 5-6); stage 2: two plain replicas (vertices 7, 8)."""
    return PipelineJob.from_dict({"allreduce": "ring", "stages": [
        _stage(replicas=1, tensor_parallel=3, tp_bytes=1e6, out_bytes=2e6),
        _stage(replicas=2, tensor_parallel=2, tp_bytes=1e6, in_bytes=1e6, out_bytes=1e6),
        _stage(replicas=2, in_bytes=1e6)]})


def test_pack_groups_is_best_fit_decreasing_by_hand() -> None:
    """Servers of 4, 3 and 2 free GPUs (the job's 9 vertices). The 3-slice group first: servers 0
    and 1 hold it, the one with fewer free GPUs (server 1, 3) takes it. The 2-slice groups: [3, 4]
    fits servers 0 (4) and 2 (2) and takes the tighter, server 2; [5, 6] then has server 0 only.
    The single vertices 7 and 8 fill the first server with room left: server 0."""
    job = _three_stage_job()
    got = pack_groups(job, [4, 3, 2])
    assert got == [[1, 1, 1], [2, 2, 0, 0], [0, 0]]
    inst = GpuMappingInstance(G4, job, (4, 3, 2))
    assert evaluate(inst, {"assignment": got}).feasible
    assert not colocation_violations(job, vertex_servers(job, got))
    # equal fits go to the lower index: servers 0, 1 and 3 (2 free GPUs each) for the 2-slice
    # groups once server 2 took the 3-slice group; the singles on server 3
    assert pack_groups(job, [2, 2, 3, 2]) == [[2, 2, 2], [0, 0, 1, 1], [3, 3]]
