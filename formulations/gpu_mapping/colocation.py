"""Where a job's tensor-parallel replicas meet Heavy-Edge: the groups of vertices that must share a
server, and the one place job-level code calls Heavy-Edge with them.

Sec. VI of the A-SRPT paper (Luo et al.): "represent tensor slices as vertices and AllReduce
operations as weighted edges. For communication efficiency, all tensor slices of a layer must
reside within a single server." :func:`.model.colocation_groups` lists those groups (one per
tensor-parallel replica, its t slices); :func:`heavy_edge_mapping` hands them to Heavy-Edge's
keyword ``colocate`` (:func:`.heavy_edge.heavy_edge_job`); jobs without them take Heavy-Edge
exactly as before.

:func:`feasible_mapping` is a start mapping for the exact solvers: Heavy-Edge's with the groups,
else (Heavy-Edge refuses groups it cannot place whole) a best-fit packing of the groups, else
``None``.
"""

from __future__ import annotations

from typing import Sequence

from optkit.errors import InputError

from .heavy_edge import heavy_edge_job
from .model import GpuMappingInstance, PipelineJob, colocation_groups, colocation_violations, vertex_servers

__all__ = ["heavy_edge_mapping", "feasible_mapping", "pack_groups"]


def heavy_edge_mapping(job: PipelineJob, free_gpus: Sequence[int], *, seed: int | None = None,
                       single_gpu_weight: str = "unassigned", server_start: str = "heaviest-pair") -> list[list[int]]:
    """Heavy-Edge on ``job`` keeping each of :func:`colocation_groups` on one server (keyword
    ``colocate`` of :func:`.heavy_edge.heavy_edge_job`): the one call from job-level code into
    Heavy-Edge. A job without tensor-parallel stages calls ``heavy_edge_job`` exactly as before
    (same arguments, same result).

    Raises :class:`InputError` (field ``colocate``) when the free GPUs cannot hold every group
    whole (Heavy-Edge's placeability check).

    References
    ----------
    Luo et al., A-SRPT paper, Sec. IV-B (Heavy-Edge) and Sec. VI ("all tensor slices of a layer
    must reside within a single server").

    Notes
    -----
    Guarantee: every tensor-parallel replica's slices on one server; no bound on the objective.

    Units: ``free_gpus`` in GPUs; the assignment is a server index per vertex, per stage.

    Examples
    --------
    One stage of two replicas of two slices on two servers of two free GPUs: each replica whole.

    >>> from optkit.formulations.gpu_mapping import PipelineJob
    >>> job = PipelineJob.from_dict({"allreduce": "ring", "stages": [{"replicas": 2, "fwd_time": 0.01,
    ...     "bwd_time": 0.02, "in_bytes": 0, "out_bytes": 0, "param_bytes": 1e8, "tensor_parallel": 2,
    ...     "tp_bytes": 1e6}]})
    >>> heavy_edge_mapping(job, [2, 2])
    [[0, 0, 1, 1]]
    """
    groups = colocation_groups(job)
    if not groups:
        return heavy_edge_job(job, free_gpus, seed=seed, single_gpu_weight=single_gpu_weight,
                              server_start=server_start)
    return heavy_edge_job(job, free_gpus, seed=seed, single_gpu_weight=single_gpu_weight,
                          server_start=server_start, colocate=groups)


def pack_groups(job: PipelineJob, free_gpus: Sequence[int]) -> list[list[int]] | None:
    """A mapping that keeps every group whole, by best fit decreasing: groups largest first (then
    by vertex index), each on the server with the fewest free GPUs left that holds it (then the
    lowest index); the remaining single vertices fill the servers in vertex order. ``None`` when
    best fit leaves a group without room (bin packing: another packing may exist)."""
    caps = [int(c) for c in free_gpus]
    left = list(caps)
    sv = [-1] * job.n_replicas
    groups = sorted(colocation_groups(job), key=lambda grp: (-len(grp), grp[0]))
    for grp in groups:
        fits = [m for m in range(len(left)) if left[m] >= len(grp)]
        if not fits:
            return None
        m = min(fits, key=lambda m: (left[m], m))
        for v in grp:
            sv[v] = m
        left[m] -= len(grp)
    m = 0
    for v in range(job.n_replicas):
        if sv[v] != -1:
            continue
        while left[m] == 0:
            m += 1
        sv[v] = m
        left[m] -= 1
    off = job.offsets
    return [sv[int(off[s]):int(off[s + 1])] for s in range(len(job.stages))]


def feasible_mapping(instance: GpuMappingInstance, *, seed: int | None = None) -> list[list[int]] | None:
    """A mapping of ``instance`` that keeps every group of :func:`colocation_groups` on one server:
    Heavy-Edge's (:func:`heavy_edge_mapping`) where it can place the groups whole, else
    :func:`pack_groups`'s; ``None`` when neither finds one (the exact solvers then start without)."""
    job = instance.job
    try:
        assignment = heavy_edge_mapping(job, instance.servers, seed=seed)
    except InputError:  # Heavy-Edge's placeability check: the groups cannot all be placed whole
        return pack_groups(job, instance.servers)
    if not colocation_violations(job, vertex_servers(job, assignment)):
        return assignment
    return pack_groups(job, instance.servers)
