"""Server selection and Heavy-Edge placement for the online ddlwmp policies.

Two ways to pick the g_i GPUs of a job from the free-GPU vector ``free`` (one entry per server):

* :func:`most_free_servers` (Algorithm 1 line 9, "servers with most available GPUs"; also the
  baselines' consolidation rule): servers in order of free GPUs, descending (ties: lower server
  index first); take **all** free GPUs of each server in turn, and from the last one only the
  GPUs still missing. This uses the fewest servers possible for the current availability.
* :func:`least_free_servers` (line 22, "servers with least available GPUs", best fit): if one
  server alone has >= g_i free GPUs, the one among them with the fewest free GPUs (ties: lower
  index) takes the whole job; otherwise the servers with free GPUs in ascending order of free
  GPUs (ties: lower index), taking all free GPUs of each and the remainder from the last. This
  fills fragments first and keeps the emptiest servers for communication-heavy jobs.

Heavy-Edge (:func:`optkit.formulations.gpu_mapping.heavy_edge.heavy_edge_job`) then maps the job's
replicas onto the chosen (server, GPUs) pairs. Its result, and alpha (eq. 7), depend only on the
model and on the multiset of GPU counts taken from the servers (it orders servers by count,
ties by position, and we hand it the servers sorted by count descending, then server index), so
:class:`Placer` caches them per ``(model, counts)``; only the relabelling to global server
indices is done per job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from optkit.formulations.gpu_mapping.heavy_edge import alpha_min_estimate, heavy_edge_job
from optkit.formulations.gpu_mapping.model import PipelineJob, alpha_from_counts, alpha_max, stage_counts

from optkit.errors import InputError
from optkit.readings import check_reading
from optkit.validation import check_seed

from .model import PROBLEM, DdlwmpCluster
from .readings import READINGS
from .tensor import LlmPlacer, check_model, is_llm, tensor_parallel_of, units_free

__all__ = ["Placement", "Placer", "check_placer", "most_free_servers", "least_free_servers"]


def _take_in_order(free: np.ndarray, order: np.ndarray, need: int) -> tuple[np.ndarray, np.ndarray]:
    taken = free[order]
    cum = np.cumsum(taken)
    last = int(np.searchsorted(cum, need))  # first position where the cumulative sum reaches need
    if last >= len(order):
        raise ValueError(f"{need} GPUs requested but only {int(cum[-1]) if len(cum) else 0} are free")
    servers = order[:last + 1]
    counts = taken[:last + 1].copy()
    counts[-1] -= int(cum[last]) - need
    keep = counts > 0
    return servers[keep], counts[keep]


def most_free_servers(free: np.ndarray, need: int) -> tuple[np.ndarray, np.ndarray]:
    """(servers, GPUs taken from each): all free GPUs of the most-free servers first."""
    order = np.argsort(-free, kind="stable")
    return _take_in_order(free, order, need)


def least_free_servers(free: np.ndarray, need: int) -> tuple[np.ndarray, np.ndarray]:
    """(servers, GPUs taken from each): best fit on one server, else the least-free servers first."""
    fitting = np.where(free >= need, free, np.iinfo(np.int64).max)
    m = int(np.argmin(fitting))  # the fewest free GPUs among the servers that fit, lowest index first
    if free[m] >= need:
        return np.array([m], dtype=np.int64), np.array([need], dtype=np.int64)
    nz = np.flatnonzero(free > 0)
    order = nz[np.argsort(free[nz], kind="stable")]
    return _take_in_order(free, order, need)


@dataclass(frozen=True)
class Placement:
    """A job's placement: per stage the global server of each replica, alpha (s/iteration),
    and the GPUs it takes from each server (``servers``, ``counts``)."""

    assignment: list[list[int]]
    alpha: float
    servers: tuple[int, ...]
    counts: tuple[int, ...]


class Placer:
    """Per-instance caches: alpha~min (Heavy-Edge on the fewest servers), alpha_max, and the
    Heavy-Edge mapping with its alpha per (model, GPU counts).

    alpha~min and alpha_max of every model in ``models`` are computed when the placer is built
    (Heavy-Edge is seeded per call, so the values do not depend on when they are computed), so
    every later question about them, the policy's during the run and a run's readout after
    ``evaluate`` (:func:`.sec5.run_policy_readout`), is a value read, not a placement done again:
    the simulation path enters the placement once (issue 36, ``benchmarks/flow_trace.py``). A model
    added to ``models`` afterwards (the online scheduler's duration models) is computed when first
    asked. The Heavy-Edge mappings per (model, GPU counts) stay lazy: they depend on the free GPUs.
    """

    def __init__(self, cluster: DdlwmpCluster, models: Mapping[str, PipelineJob], *, seed: int | None = None,
                 single_gpu_weight: str = "unassigned", server_start: str = "heaviest-pair") -> None:
        if not isinstance(cluster, DdlwmpCluster):
            raise InputError("cluster", f"must be a DdlwmpCluster, got {type(cluster).__name__}", problem=PROBLEM)
        if not isinstance(models, Mapping):
            raise InputError("models", f"must map model names to PipelineJob objects, got {type(models).__name__}",
                             problem=PROBLEM)
        for name, job in models.items():
            if not isinstance(job, PipelineJob):
                raise InputError(f"models[{name!r}]", f"must be a PipelineJob (PipelineJob.from_dict builds one), "
                                                      f"got {type(job).__name__}", problem=PROBLEM)
        seed = check_seed(seed, problem=PROBLEM)
        single_gpu_weight = check_reading(READINGS, "single_gpu_weight", single_gpu_weight, PROBLEM)
        server_start = check_reading(READINGS, "server_start", server_start, PROBLEM)
        self.cluster = cluster
        self.heavy_edge = {"single_gpu_weight": single_gpu_weight, "server_start": server_start}
        self.models = models
        self.seed = seed
        self._mc = cluster.mapping_cluster
        self._alpha_min: dict[str, float] = {}
        self._alpha_max: dict[str, float] = {}
        self._maps: dict[tuple[str, tuple[int, ...]], tuple[list[list[int]], float]] = {}
        self._gpus: dict[str, int] = {}
        # tensor-parallel and MoE models (tensor.py): servers in units of t GPUs, each replica's slices together
        self._llm = {name for name, job in models.items() if is_llm(job)}
        self._llm_placer = LlmPlacer(self._mc, seed, self.heavy_edge) if self._llm else None
        for name, job in models.items():  # computed once, before the run (one-way flow, issue 36 §3)
            try:
                check_model(job, cluster.gpus_per_server, f"models[{name!r}]")
            except InputError:  # a model that can never start: the policy refuses a job of it on arrival,
                continue        # naming the field (ArrivalCheck); until then nothing needs its alpha
            self.alpha_min(name)
            self.alpha_max(name)

    def gpus(self, model: str) -> int:
        g = self._gpus.get(model)
        if g is None:
            g = self._gpus[model] = self.models[model].n_replicas
        return g

    def alpha_min(self, model: str) -> float:
        a = self._alpha_min.get(model)
        if a is None:
            a = self._alpha_min[model] = alpha_min_estimate(self.models[model], self._mc, seed=self.seed,
                                                            **self.heavy_edge)
        return a

    def alpha_max(self, model: str) -> float:
        a = self._alpha_max.get(model)
        if a is None:
            # gpu-mapping's alpha_max: every replica (a tensor-parallel one's slices) / expert group alone
            a = self._alpha_max[model] = alpha_max(self.models[model], self._mc)
        return a

    def place(self, model: str, servers: np.ndarray, counts: np.ndarray) -> Placement:
        """Heavy-Edge of ``model`` on ``counts[j]`` GPUs of server ``servers[j]`` (a tensor-parallel
        model's counts are multiples of its t: whole replicas, :mod:`.tensor`)."""
        if model in self._llm:
            t = tensor_parallel_of(self.models[model])
            counts = np.asarray(counts, dtype=np.int64)
            if (counts % t).any():
                raise ValueError(f"model {model!r} takes whole replicas of {t} GPUs per server, got {counts.tolist()}")
            return Placement(*self._llm_placer.place(model, self.models[model], servers, counts // t))  # type: ignore[union-attr, arg-type]
        if len(servers) == 1:
            srv, cnt = [int(servers[0])], (int(counts[0]),)
        else:
            order = np.lexsort((servers, -counts))
            srv = [int(s) for s in servers[order]]
            cnt = tuple(int(c) for c in counts[order])
        key = (model, cnt)
        hit = self._maps.get(key)
        if hit is None:
            job = self.models[model]
            local = heavy_edge_job(job, list(cnt), seed=self.seed, **self.heavy_edge)
            alpha = alpha_from_counts(job, self._mc, stage_counts(job, local, len(cnt)))
            hit = self._maps[key] = (local, alpha)
        local, alpha = hit
        if len(srv) == 1:
            m = srv[0]
            assignment = [[m] * len(row) for row in local]
        else:
            assignment = [[srv[r] for r in row] for row in local]
        return Placement(assignment, alpha, tuple(srv), cnt)

    def _place_llm(self, model: str, free: np.ndarray, choose: Any) -> Placement:
        """A tensor-parallel or MoE job: ``choose`` (the policy's server rule) on the replicas of
        t GPUs each server holds (floor(free/t)), Heavy-Edge with each replica's slices together
        (:class:`.tensor.LlmPlacer`)."""
        job = self.models[model]
        t = tensor_parallel_of(job)
        servers, units = choose(units_free(free, t), self.gpus(model) // t)
        return Placement(*self._llm_placer.place(model, job, servers, units))  # type: ignore[union-attr, arg-type]

    def place_most_free(self, model: str, free: np.ndarray) -> Placement:
        if model in self._llm:
            return self._place_llm(model, free, most_free_servers)
        need = self.gpus(model)
        m = int(free.argmax())  # the first most-free server: most_free_servers' first pick
        if free[m] >= need:  # it holds the whole job: the placement most_free_servers gives, without its sort
            hit = self._maps.get((model, (need,)))
            if hit is not None:
                return Placement([[m] * len(row) for row in hit[0]], hit[1], (m,), (need,))
        return self.place(model, *most_free_servers(free, need))

    def place_least_free(self, model: str, free: np.ndarray) -> Placement:
        if model in self._llm:
            return self._place_llm(model, free, least_free_servers)
        return self.place(model, *least_free_servers(free, self.gpus(model)))


def check_placer(placer: object) -> None:
    """A policy's ``placer`` keyword: ``None`` (the policy builds its own) or a :class:`Placer`
    (shared between policies on one cluster); anything else is an InputError naming ``placer``
    (A-SRPT and the baselines alike)."""
    if placer is not None and not isinstance(placer, Placer):
        raise InputError("placer", f"must be a Placer, got {type(placer).__name__}", problem=PROBLEM)
