"""The online-policy protocol of ddlwmp and the machinery its policies share.

A policy is an object driven by events; any simulator may drive it:

* ``on_arrival(job: JobSpec, now)``: a job has been released (``job.release <= now``).
* ``on_completion(job_id, now)``: a started job has given its GPUs back.
* ``decide(now, state: ClusterState) -> list[StartDecision]``: the jobs to start at ``now``,
  each with its placement over global server indices. ``state.free`` is a working copy of the
  free GPUs per server; the policy takes GPUs from it (``state.take``) as it decides, and the
  driver applies the decisions to its own copy.
* ``next_wakeup(now) -> float | None``: the next time the policy wants ``decide`` called even
  if no job arrives or ends (A-SRPT: a completion in its virtual machine, the deadline of a
  delayed start). The driver may call later (ours rounds up to the next slot boundary).

Policies never see a job's true iteration count: a :class:`JobSpec` carries only the
prediction (``predicted_iterations``; the driver puts the true count there for the
``-perfect`` variants). A missing prediction counts as 0 iterations (the paper's rule for a job
of an unseen group, Sec. IV-C3).

:class:`QueuePolicy` is the baselines' machinery: a priority key per job, and either strict
head-of-line service (the best job must start first; if it does not fit, nothing starts) or
work-conserving service (in key order, start every job that fits, skip those that do not).
:class:`DemandQueue` is the one per-GPU-demand queue both disciplines of the baselines and
A-SRPT's ``head_of_line="skip"`` serve their waiting jobs from.
Every policy places its jobs with Heavy-Edge (:mod:`.placement`).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any, Mapping, Protocol

import numpy as np

from optkit.errors import InputError
from optkit.formulations.gpu_mapping.model import PipelineJob
from optkit.readings import check_reading

from .model import PROBLEM, DdlwmpCluster
from .placement import Placement, Placer, check_placer
from .readings import CONSOLIDATE_DEFAULT, READINGS
from .tensor import check_model, is_llm, tensor_parallel_of
from .tensor import fits as tensor_fits

__all__ = ["JobSpec", "StartDecision", "ClusterState", "Policy", "QueuePolicy", "ArrivalCheck", "build_policy"]


@dataclass(frozen=True)
class JobSpec:
    """What a policy knows of a job: id, release (s), model name, GPUs g_i, predicted iterations,
    whether its GPUs must all be on one server (``single_node``), and its model's tensor-parallel
    degree t (``tensor_parallel``: each replica's t slices on one server, :mod:`.tensor`)."""

    id: str
    release: float
    model: str
    gpus: int
    predicted_iterations: float | None = None
    single_node: bool = False
    tensor_parallel: int = 1

    @property
    def n_tilde(self) -> float:
        """ñ_i, with a missing prediction read as 0."""
        return 0.0 if self.predicted_iterations is None else float(self.predicted_iterations)


@dataclass(frozen=True)
class StartDecision:
    """Start job ``job_id`` now on ``placement`` (global server indices)."""

    job_id: str
    placement: Placement


class ClusterState:
    """The free GPUs per server (a working copy the policy may consume) and the cluster size."""

    __slots__ = ("free", "total_gpus", "gpus_per_server")

    def __init__(self, free: np.ndarray, gpus_per_server: int) -> None:
        # a view a server could not have (more free GPUs than it holds, fewer than none, half a
        # GPU) would be placed on as given: refused, in one cheap pass (decide's hot path)
        if (not isinstance(free, np.ndarray) or free.ndim != 1 or free.dtype.kind not in "iu"
                or (free.size and (free.min() < 0 or free.max() > gpus_per_server))):
            shown = free.tolist() if isinstance(free, np.ndarray) and free.size <= 16 else type(free).__name__
            raise InputError("state.free", f"must be a 1-d integer array of free GPUs per server, each in 0.."
                                           f"{gpus_per_server} (the GPUs per server), got {shown}", problem=PROBLEM)
        self.free = free
        self.gpus_per_server = gpus_per_server
        self.total_gpus = len(free) * gpus_per_server

    @property
    def free_total(self) -> int:
        return int(self.free.sum())

    def fits(self, job: JobSpec) -> bool:
        """Whether ``job`` can start now: g_i <= the free GPUs of the cluster, or, for a
        ``single_node`` job, of one server; a tensor-parallel job (t > 1) needs servers that hold
        each of its replicas' t slices (:func:`.tensor.fits`: Σ_m floor(free_m/t) >= g_i/t; the
        A-SRPT paper, Sec. VI: it waits "until sufficient server capacity is available")."""
        if job.tensor_parallel > 1:
            return tensor_fits(self.free, job.gpus, job.tensor_parallel)
        return job.gpus <= (int(self.free.max()) if job.single_node else int(self.free.sum()))

    def take(self, placement: Placement) -> None:
        free = self.free
        if len(placement.servers) == 1:  # the common case, without the loops below
            m, c = placement.servers[0], placement.counts[0]
            if free[m] < c:
                raise ValueError("placement takes more GPUs than a server has free")
            free[m] -= c
            return
        pairs = list(zip(placement.servers, placement.counts))  # a few servers: plain loops beat numpy
        if any(free[m] < c for m, c in pairs):
            raise ValueError("placement takes more GPUs than a server has free")
        for m, c in pairs:
            free[m] -= c


class ArrivalCheck:
    """What every ddlwmp policy checks of an arriving job, so that a typed call fails where the
    mistake is, with an InputError naming the field, instead of later and quietly: a job that
    arrives twice (it would be started twice), an unknown model (a bare KeyError), a GPU demand
    unlike the model's replica count (the placement takes the model's count), a job larger than
    the cluster (it never starts, and a strict queue blocks every later job behind it), a
    ``single_node`` job larger than a server (``gpus_per_server``, when given: likewise)."""

    __slots__ = ("models", "total_gpus", "seen", "gpus_per_server")

    def __init__(self, models: Mapping[str, PipelineJob], total_gpus: int, gpus_per_server: int | None = None) -> None:
        self.models = models
        self.total_gpus = total_gpus
        self.gpus_per_server = gpus_per_server
        self.seen: set[str] = set()

    def __call__(self, job: JobSpec) -> None:
        if not isinstance(job, JobSpec):
            raise InputError("job", f"must be a JobSpec, got {type(job).__name__}", problem=PROBLEM)
        if isinstance(job.gpus, bool) or not isinstance(job.gpus, (int, np.integer)) or job.gpus < 1:
            raise InputError("job.gpus", f"job {job.id}: must be an integer >= 1, got {job.gpus!r}", problem=PROBLEM)
        for name, value in (("release", job.release), ("predicted_iterations", job.predicted_iterations)):
            if value is None and name == "predicted_iterations":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not (
                    math.isfinite(value) and value >= 0):
                raise InputError(f"job.{name}", f"job {job.id}: must be a finite number >= 0, got {value!r}",
                                 problem=PROBLEM)
        if job.id in self.seen:
            raise InputError("job.id", f"job {job.id} arrived twice", problem=PROBLEM)
        model = self.models.get(job.model)
        if model is None:
            known = ", ".join(sorted(self.models)[:8]) or "none"
            raise InputError("job.model", f"job {job.id}: unknown model {job.model!r} (known: {known})", problem=PROBLEM)
        if job.gpus != model.n_replicas:
            raise InputError("job.gpus", f"job {job.id} asks for {job.gpus} GPUs but model {job.model!r} has "
                                         f"{model.n_replicas} replicas (one GPU each)", problem=PROBLEM)
        if job.gpus > self.total_gpus:
            raise InputError("job.gpus", f"job {job.id} needs {job.gpus} GPUs but the cluster has "
                                         f"{self.total_gpus}: it could never start", problem=PROBLEM)
        t = tensor_parallel_of(model)
        if job.tensor_parallel != t:
            raise InputError("job.tensor_parallel", f"job {job.id}: is {job.tensor_parallel!r} but model {job.model!r} "
                                                    f"has tensor_parallel {t}", problem=PROBLEM)
        if is_llm(model) and self.gpus_per_server is not None:  # one t per job, t | g (tensor.check_model)
            try:
                check_model(model, self.gpus_per_server, f"models[{job.model!r}]")
            except InputError as exc:
                raise exc.with_problem(PROBLEM) from None
        if job.single_node and self.gpus_per_server is not None and job.gpus > self.gpus_per_server:
            raise InputError("job.single_node", f"job {job.id} needs {job.gpus} GPUs on one server but a server has "
                                                f"{self.gpus_per_server}: it could never start", problem=PROBLEM)
        self.seen.add(job.id)


class Policy(Protocol):
    name: str

    def on_arrival(self, job: JobSpec, now: float) -> None: ...

    def on_completion(self, job_id: str, now: float) -> None: ...

    def decide(self, now: float, state: ClusterState) -> list[StartDecision]: ...

    def next_wakeup(self, now: float) -> float | None: ...


class DemandQueue:
    """Waiting jobs in one total order, kept as one heap per GPU demand (single-node jobs in heaps
    of their own), so the first job in order whose demand fits is found from the heaps' heads,
    without scanning the backlog: the baselines' queues (:class:`QueuePolicy`, in key order) and
    A-SRPT's ``pending_queue`` under ``head_of_line="skip"`` (in Ã1's completion order).

    Each job is pushed with its ``order``, a tuple whose last element is unique (a push counter):
    the order is then total and a job is never compared. Fitting is
    :meth:`ClusterState.fits`'s test: g_i <= the free GPUs of the cluster, or for a single-node
    job, of one server; tensor-parallel jobs sit in heaps per (g_i, t) and fit when the servers
    hold each replica's t slices (:func:`.tensor.fits`). As the free GPUs only fall while a policy
    decides (and floor(free_m/t) with them), a job passed over stays
    too big, so the head of the earliest heap that fits is the first fitting job of the whole
    queue scanned in order (``tests/test_ddlwmp_policies.py`` checks A-SRPT's choices against one
    list scanned front to back).
    """

    __slots__ = ("_heaps", "_single", "_tensor", "_n")

    def __init__(self) -> None:
        self._heaps: dict[int, list[tuple[Any, ...]]] = {}
        self._single: dict[int, list[tuple[Any, ...]]] = {}
        self._tensor: dict[tuple[int, int], list[tuple[Any, ...]]] = {}  # tensor-parallel jobs, by (g_i, t)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def push(self, order: tuple[Any, ...], job: JobSpec) -> None:
        """Queue ``job`` at ``order`` (a tuple; its last element unique)."""
        if job.tensor_parallel > 1:
            heapq.heappush(self._tensor.setdefault((job.gpus, job.tensor_parallel), []), (*order, job))
        else:
            heaps = self._single if job.single_node else self._heaps
            heapq.heappush(heaps.setdefault(job.gpus, []), (*order, job))
        self._n += 1

    def head(self, state: ClusterState | None = None, *, pop: bool = False) -> JobSpec | None:
        """The first job in order (``state`` None: whether it fits or not), or the first whose
        demand fits ``state``; None when there is none. ``pop`` takes it out of the queue."""
        best: list[tuple[Any, ...]] | None = None
        if self._heaps:
            free_total = None if state is None else int(state.free.sum())
            for g, heap in self._heaps.items():
                if heap and (free_total is None or g <= free_total) and (best is None or heap[0][:-1] < best[0][:-1]):
                    best = heap
        if self._single:
            max_free = None if state is None else int(state.free.max())
            for g, heap in self._single.items():
                if heap and (max_free is None or g <= max_free) and (best is None or heap[0][:-1] < best[0][:-1]):
                    best = heap
        if self._tensor:  # fits: its replicas' slices each on one server (tensor.fits)
            for (g, t), heap in self._tensor.items():
                if heap and (state is None or tensor_fits(state.free, g, t)) and (
                        best is None or heap[0][:-1] < best[0][:-1]):
                    best = heap
        if best is None:
            return None
        job: JobSpec = best[0][-1]
        if pop:
            heapq.heappop(best)
            self._n -= 1
        return job


class QueuePolicy:
    """Jobs wait in priority order of ``key(job)`` (ties: release, then arrival order).

    ``work_conserving=False``: strict head-of-line; ``True``: start every job that fits, in key
    order. "Fits" means g_i <= the free GPUs of the whole cluster (a job may span servers); for a
    ``single_node`` job, g_i <= the free GPUs of one server.
    Placement (reading ``consolidate``): ``True`` takes the most-free servers (fewest servers) and
    maps with Heavy-Edge; ``False`` (the default: the baselines' better option, readings.py) best
    fit: the one server with the fewest free GPUs that holds the job, else the least-free servers
    first, then Heavy-Edge. A single-node job that fits therefore lands on one server under
    both: the most-free server (it holds the job) or the best-fit one.
    """

    name = "queue"

    WORK_CONSERVING: bool = False

    def __init__(self, cluster: DdlwmpCluster, models: Mapping[str, PipelineJob], *,
                 work_conserving: bool | None = None, placer: Placer | None = None,
                 consolidate: bool = CONSOLIDATE_DEFAULT,
                 seed: int | None = None) -> None:
        # the keywords checked as --param checks them (InputError naming each; readings.py)
        consolidate = check_reading(READINGS, "consolidate", consolidate, PROBLEM)
        if work_conserving is not None and not isinstance(work_conserving, bool):
            raise InputError("work_conserving", f"must be true, false or None (the policy's own), got "
                                                f"{work_conserving!r}", problem=PROBLEM)
        check_placer(placer)
        self.cluster = cluster
        self.placer = placer or Placer(cluster, models, seed=seed)
        self._check = ArrivalCheck(self.placer.models, cluster.total_gpus, cluster.gpus_per_server)
        # a subclass states its discipline as the class attribute WORK_CONSERVING
        self.work_conserving = self.WORK_CONSERVING if work_conserving is None else work_conserving
        self.consolidate = consolidate
        self._seq = 0
        # the waiting jobs by (key, release, arrival order), one heap per GPU demand: the
        # work-conserving scan jumps to the best job that fits
        self._queue = DemandQueue()

    def key(self, job: JobSpec) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def on_arrival(self, job: JobSpec, now: float) -> None:
        self._check(job)
        self._queue.push((self.key(job), job.release, self._seq), job)
        self._seq += 1

    def on_completion(self, job_id: str, now: float) -> None:
        pass

    def next_wakeup(self, now: float) -> float | None:
        return None

    def _place(self, job: JobSpec, free: np.ndarray) -> Placement:
        if self.consolidate:
            return self.placer.place_most_free(job.model, free)
        return self.placer.place_least_free(job.model, free)

    def decide(self, now: float, state: ClusterState) -> list[StartDecision]:
        out: list[StartDecision] = []
        queue = self._queue
        if not queue:
            return out
        free_total = state.free_total
        while queue and free_total > 0:
            if self.work_conserving:
                job = queue.head(state, pop=True)  # the best job that fits
                if job is None:
                    break
            else:
                job = queue.head()
                if job is None or not state.fits(job):  # strict head-of-line: the best job waits,
                    break                                # so does everyone
                queue.head(pop=True)
            placement = self._place(job, state.free)
            state.take(placement)
            free_total -= job.gpus
            out.append(StartDecision(job.id, placement))
        return out


def build_policy(cls: Any, cluster: DdlwmpCluster, models: Mapping[str, PipelineJob], *, seed: int | None = None,
                 heavy_edge: Mapping[str, Any] | None = None, **params: Any) -> Any:
    """A policy of class ``cls`` (:class:`.a_srpt.ASRPT`, a baseline: any policy class that takes
    ``placer``) for ``cluster`` and ``models``, built on its own Heavy-Edge placer
    (:class:`.placement.Placer`, seeded by ``seed``, under ``heavy_edge``'s readings
    ``single_gpu_weight`` and ``server_start``) with the policy's own keywords ``params``.

    The placer is built here, inside the policy's room, so that building and running a policy
    enter the placement from the policy only (the one-way simulation path, issue 36:
    :func:`.simulate.simulate_policy`, :func:`.sec5.policy_for`)."""
    placer = Placer(cluster, models, seed=seed, **dict(heavy_edge or {}))
    return cls(cluster, models, seed=seed, placer=placer, **params)
