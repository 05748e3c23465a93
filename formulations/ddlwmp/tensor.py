"""Tensor-parallel and Mixture-of-Experts jobs in ddlwmp: what scheduling adds to the job model
(A-SRPT paper, Sec. VI; issue 37 item 3).

Sec. VI ("Discussions") of the A-SRPT paper extends its model to the parallelisms of large models:

* **Tensor parallelism**: "represent tensor slices as vertices and AllReduce operations as weighted
  edges. For communication efficiency, all tensor slices of a layer must reside within a single
  server. To accommodate this, A-SRPT delays the start of tensor parallelism jobs until sufficient
  server capacity is available."
* **Expert parallelism**: "represent expert groups as vertices ... token routing represented as
  weighted edges ... set the edge weights based on the estimated average communication costs."

The job model is gpu-mapping's, one model for both problems
----------------------------------------------------------
A ddlwmp model is a gpu-mapping :class:`~optkit.formulations.gpu_mapping.model.PipelineJob`,
read and checked by its ``from_dict``: a stage's ``tensor_parallel`` t and ``tp_bytes``, or its
``experts`` e, ``expert_bytes``, ``routing`` and ``routing_skew``, and the job's
``tp_allreduce_time`` are the fields documented on
:class:`~optkit.formulations.gpu_mapping.model.Stage`. The job graph
(:func:`~optkit.formulations.gpu_mapping.model.job_edge_kinds`), the expected routing matrix
(:func:`~optkit.formulations.gpu_mapping.model.routing_matrix`), the per-iteration time, eqs.
(4)-(7) extended as Sec. VI states (:func:`~optkit.formulations.gpu_mapping.model.vertex_times`,
:func:`~optkit.formulations.gpu_mapping.model.alpha_of_assignment`), alpha_max
(:func:`~optkit.formulations.gpu_mapping.model.alpha_max`) and the one-server rule
(:func:`~optkit.formulations.gpu_mapping.model.colocation_violations`) are gpu-mapping's functions;
this module has no time model of its own. A job's GPUs g_i are its vertices (Σ_s k_s·u_s, one GPU
per slice / expert group), and its ``assignment`` lists one server per vertex, replica-major
(vertex ``offsets[s] + r·u_s + j``), as in a gpu-mapping solution.

What ddlwmp adds
----------------
**One t per job** (:func:`check_model`): every stage of a ddlwmp model has the same
``tensor_parallel`` t (an MoE job: t = 1 in every stage; a job mixing tensor-parallel stages with
expert or plain stages is bad input naming the first stage that differs). Why: the policies decide
*whether a job can start now* and *which servers take how much of it* from the free GPUs alone. With
one t a replica is a unit of t GPUs, a server with f free GPUs holds exactly ``floor(f / t)`` of
them, and the job fits iff Σ_m floor(free_m / t) >= g_i / t (:func:`fits`): the delay rule of
Sec. VI is then decided exactly by a sum, and every server rule of the policies (most free, least
free, best fit) runs unchanged on the counts floor(free / t). With two degrees in one job that
question becomes bin packing of pieces of different sizes, which the policies' one-pass server
rules do not decide. (Megatron-style 3D parallelism uses one tensor-parallel degree for the whole
model, so no shipped or generated job needs two.) **t divides g** (bad input otherwise, naming
``models.<name>.stages[0].tensor_parallel``): a t larger than a server could never start, and one
that does not divide g would strand ``g mod t`` GPUs of every server the job uses.

**Placement** (:class:`LlmPlacer`): every policy picks servers in units (a server with f free GPUs
offers floor(f / t) replicas) by its own rule (:mod:`.placement`) and maps the job by Heavy-Edge
with each replica's t slices on one server (Heavy-Edge's ``colocate``, :func:`heavy_edge_units`);
alpha~min is gpu-mapping's
:func:`~optkit.formulations.gpu_mapping.heavy_edge.alpha_min_estimate`, which maps such a job
the same way on the fewest servers.

**evaluate** (:func:`checked_alpha`): the one-server rule, then alpha by gpu-mapping's function.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from optkit.errors import InputError
from optkit.formulations.gpu_mapping.colocation import heavy_edge_mapping
from optkit.formulations.gpu_mapping.model import (
    Cluster, PipelineJob, alpha_of_assignment, colocation_violations, vertex_servers, vertex_times,
)

__all__ = ["check_model", "tensor_parallel_of", "is_llm", "units_free", "fits", "heavy_edge_units", "checked_alpha",
           "LlmPlacer"]


def is_llm(job: PipelineJob) -> bool:
    """Whether ``job`` has a tensor-parallel or an MoE stage (not the paper's job)."""
    return not job.is_plain


def tensor_parallel_of(job: PipelineJob) -> int:
    """t of ``job``: its stages' ``tensor_parallel`` (one per job, :func:`check_model`), 1 for an
    MoE or a plain job."""
    return int(job.stages[0].tensor_parallel)


def check_model(job: PipelineJob, gpus_per_server: int, path: str) -> None:
    """ddlwmp's restrictions on a model (module docstring): one ``tensor_parallel`` per job, and t
    at most and dividing ``gpus_per_server``; :class:`InputError` naming
    ``<path>.stages[s].tensor_parallel`` otherwise. The paper's jobs pass at once."""
    if job.is_plain:
        return
    t = tensor_parallel_of(job)
    for s, st in enumerate(job.stages):
        if st.tensor_parallel != t:
            raise InputError(f"{path}.stages[{s}].tensor_parallel",
                             f"is {st.tensor_parallel} but stage 0's is {t}: ddlwmp takes one tensor-parallel degree "
                             "per job (data x pipeline x tensor parallelism with one t; an MoE job has t = 1 in every "
                             "stage), so that a replica is a unit of t GPUs and whether the job fits is exact "
                             "(formulations/ddlwmp/tensor.py)")
    if t == 1:
        return
    field = f"{path}.stages[0].tensor_parallel"
    if t > gpus_per_server:
        raise InputError(field, f"is {t}, larger than any server ({gpus_per_server} GPUs): a replica's {t} slices "
                                "must all sit on one server, so the job could never start")
    if gpus_per_server % t:
        raise InputError(field, f"is {t}, which does not divide the servers' {gpus_per_server} GPUs: a replica of "
                                f"{t} slices must sit on one server, and ddlwmp takes t dividing g (module docstring "
                                "of formulations/ddlwmp/tensor.py)")


# ----------------------------------------------------------------------------- feasibility
def units_free(free: np.ndarray, t: int) -> np.ndarray:
    """floor(free_m / t): the replicas of t slices each server can hold now."""
    return free // t if t > 1 else free


def fits(free: np.ndarray, gpus: int, t: int) -> bool:
    """Whether a job of ``gpus`` GPUs in replicas of ``t`` slices can start on ``free``: the
    servers hold its gpus/t replicas, each on one server (Σ_m floor(free_m/t) >= gpus/t). Exact:
    replicas are interchangeable units of t GPUs."""
    if t == 1:
        return gpus <= int(free.sum())
    return gpus // t <= int((free // t).sum())


# ----------------------------------------------------------------------------- placement
def heavy_edge_units(job: PipelineJob, unit_counts: Sequence[int], *, seed: int | None,
                     heavy_edge: Mapping[str, Any]) -> np.ndarray:
    """The server (local index into ``unit_counts``) of every vertex: Heavy-Edge with
    ``unit_counts[m]`` replicas (t GPUs each) on local server m, each replica's t slices on its
    server: gpu-mapping's job-level call into Heavy-Edge
    (:func:`~optkit.formulations.gpu_mapping.colocation.heavy_edge_mapping`, Heavy-Edge's
    ``colocate`` = every replica's slices) on ``unit_counts[m]·t`` free GPUs. One t per job makes
    every group t vertices and every server's count a multiple of t, so the groups always fit."""
    t = tensor_parallel_of(job)
    assignment = heavy_edge_mapping(job, [int(c) * t for c in unit_counts], seed=seed, **heavy_edge)
    return vertex_servers(job, assignment)


def checked_alpha(job: PipelineJob, cluster: Cluster, assignment: Sequence[Sequence[int]]) -> tuple[str | None, float]:
    """``evaluate``'s check of a tensor-parallel or MoE job: ``(violation, nan)`` naming the first
    replica whose t slices sit on more than one server (gpu-mapping's ``colocation_violations``),
    else ``(None, alpha)`` by gpu-mapping's ``alpha_of_assignment``. ``assignment`` has already
    been checked for shape and server indices."""
    bad = colocation_violations(job, vertex_servers(job, assignment))
    if bad:
        return bad[0], math.nan
    return None, alpha_of_assignment(job, cluster, assignment)


# ----------------------------------------------------------------------------- the policies' placer
class LlmPlacer:
    """The placements of one instance's tensor-parallel and MoE jobs, for :class:`.placement.Placer`:
    servers chosen in units (``choose(free // t, K)`` with the policy's rule), Heavy-Edge with each
    replica's slices together (:func:`heavy_edge_units`), cached per (model, unit counts) as the
    Placer caches plain jobs. alpha~min and alpha_max are the Placer's (gpu-mapping's functions)."""

    def __init__(self, cluster: Cluster, seed: int | None, heavy_edge: Mapping[str, Any]) -> None:
        self.cluster = cluster
        self.seed = seed
        self.heavy_edge = dict(heavy_edge)
        self._maps: dict[tuple[str, tuple[int, ...]], tuple[np.ndarray, float]] = {}

    def place(self, name: str, job: PipelineJob, servers: np.ndarray, unit_counts: np.ndarray
              ) -> tuple[list[list[int]], float, tuple[int, ...], tuple[int, ...]]:
        """(assignment over global servers, one server per vertex, alpha, servers, GPUs taken from
        each) of model ``name`` with ``unit_counts[j]`` replicas on server ``servers[j]`` (the
        policy chose them in units, :func:`units_free`)."""
        t = tensor_parallel_of(job)
        counts = np.asarray(unit_counts, dtype=np.int64)
        servers = np.asarray(servers, dtype=np.int64)
        order = np.lexsort((servers, -counts))
        srv = [int(s) for s in servers[order]]
        cnt = tuple(int(c) for c in counts[order])
        key = (name, cnt)
        hit = self._maps.get(key)
        if hit is None:
            local = heavy_edge_units(job, cnt, seed=self.seed, heavy_edge=self.heavy_edge)
            hit = self._maps[key] = (local, float(vertex_times(job, self.cluster, local).max()))
        local, alpha = hit
        glob = np.asarray(srv, dtype=np.int64)[local].tolist()
        off = job.offsets
        assignment = [glob[int(off[s]):int(off[s + 1])] for s in range(len(job.stages))]
        return assignment, alpha, tuple(srv), tuple(c * t for c in cnt)
