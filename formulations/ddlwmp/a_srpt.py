"""A-SRPT (Luo et al., Sec. IV-C, Algorithm 1) as an event-driven online policy.

Every step of Algorithm 1, with the readings optkit takes:

* **Virtual instance Ã1 (line 2).** A preemptive single machine of unit speed; job i has size
  ``(g_i/G)·ñ_i·α̃_i^min`` (α̃^min: Heavy-Edge on the fewest servers, eq. 7,
  :func:`~formulations.gpu_mapping.heavy_edge.alpha_min_estimate`) and release r_i (the real
  release, not rounded); SRPT runs on it, ties by (remaining size, release, arrival order).
  It is simulated event by event (releases and its own completions); a job joins the tail of
  ``pending_queue`` at the first decision instant at or after its completion in Ã1, in Ã1
  completion order. ñ_i = 0 (no prediction: the paper's unseen-job rule) gives size 0, so the
  job joins at its release. The policy asks to be woken at Ã1's next completion.
* **Head-of-line (lines 3-5, 25).** ``pending_queue`` is served strictly in order: if the head
  needs more GPUs than are free in the whole cluster, nothing starts until GPUs are freed.
* **Communication-heavy test (line 8).** ``alpha_max/α̃_min >= comm_heavy`` (line 8's ``>=``;
  the text says "exceeds"; the two differ only at equality).
* **Comm-heavy placement (lines 9-11).** g_i GPUs from the servers with most free GPUs: all free
  GPUs of the most-free server, then the next, ..., the remainder from the last (ties: lower
  index; :func:`.placement.most_free_servers`); Heavy-Edge on them; alpha by eq. (7). If
  ``alpha/α̃_min <= comm_heavy`` (line 12) the job starts now.
* **Delayed start (lines 14-20).** Otherwise κ = alpha and the job may wait until the *last slot
  boundary* ``t_d <= t + tau·(g_i/G)·ñ_i·α̃_i^min``. Readings:
  - the waiting job **holds no GPUs** (line 17 recomputes the placement "based on current server
    availability", so GPUs freed meanwhile are what it hopes for);
  - it **blocks the queue**: the loop of lines 16-19 runs inside the service of the head, so no
    job behind it starts while it waits (Lemma 2 likewise charges each delay to the makespan);
    Ã1 keeps running and completed jobs keep joining the queue behind it;
  - it is re-evaluated at every later slot up to t_d; as nothing else starts, availability
    changes only when GPUs are freed, so the policy re-evaluates at those instants and at t_d
    (equivalent to every slot, without visiting idle slots). It starts at the first slot whose
    most-free placement has ``alpha < κ`` (line 18), with that placement;
  - at t_d with no improvement (line 20) it starts at t_d on the placement current then
    (free GPUs only grow during the wait, so it always fits);
  - if no slot boundary lies in ``(t, t + tau·...]`` (tau = 0, ñ = 0 or a short job), the loop
    is empty and line 20 starts the job now on the placement of line 10.
* **Other jobs (lines 21-23).** Best fit on the servers with the fewest free GPUs
  (:func:`.placement.least_free_servers`: one server with the fewest free GPUs that holds the
  whole job, else the least-free servers first), Heavy-Edge, start now.

Defaults: ``comm_heavy=1.5`` (the paper's experiments); ``tau=1.0`` (the paper sets tau = 0 on
its testbed, where mapping hardly matters, and gives no value for its simulations; 1.0 allows a
delay of up to one Ã1 processing time; pass ``tau=0`` for the testbed setting).
``a-srpt-perfect`` is the same policy driven with ñ_i = n_i.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from typing import Any, Mapping

from formulations.gpu_mapping.model import PipelineJob

from .model import DdlwmpCluster, DdlwmpInstance
from .placement import Placement, Placer
from .policies import ClusterState, JobSpec, StartDecision
from .simulate import run_policy

__all__ = ["ASRPT", "run_a_srpt", "run_a_srpt_perfect"]

_INF = math.inf


def _tol(t: float) -> float:
    return 1e-9 * max(1.0, abs(t))


class ASRPT:
    """Algorithm 1; see the module docstring for each reading."""

    name = "a-srpt"

    def __init__(self, cluster: DdlwmpCluster, models: Mapping[str, PipelineJob], *,
                 comm_heavy: float = 1.5, tau: float = 1.0, seed: int | None = None,
                 placer: Placer | None = None) -> None:
        if comm_heavy <= 0 or tau < 0:
            raise ValueError("comm_heavy must be > 0 and tau >= 0")
        self.cluster = cluster
        self.comm_heavy = float(comm_heavy)
        self.tau = float(tau)
        self.placer = placer or Placer(cluster, models, seed=seed)
        self.G = cluster.total_gpus
        self.slot = cluster.slot_seconds
        self._seq = 0
        self._vt = 0.0                                   # Ã1's clock
        self._future: list[tuple[float, int, float, JobSpec]] = []    # (release, seq, size, job)
        self._active: list[tuple[float, float, int, JobSpec]] = []    # (remaining, release, seq, job)
        self._pending: deque[JobSpec] = deque()
        self._waiting: tuple[JobSpec, float, float] | None = None     # (job, kappa, last slot)
        self._heavy: dict[str, bool] = {}
        self.delayed = 0          # diagnostics: delayed starts, and those that found a better alpha
        self.improved = 0

    # ------------------------------------------------------------------ Ã1
    def size(self, job: JobSpec) -> float:
        return job.gpus / self.G * job.n_tilde * self.placer.alpha_min(job.model)

    def on_arrival(self, job: JobSpec, now: float) -> None:
        release = max(float(job.release), self._vt)  # a late-delivered job enters Ã1 now
        heapq.heappush(self._future, (release, self._seq, self.size(job), job))
        self._seq += 1

    def on_completion(self, job_id: str, now: float) -> None:
        pass

    def _advance(self, T: float) -> None:
        """Run Ã1 up to time T; append the jobs it completes to ``pending_queue``."""
        fut, act = self._future, self._active
        while True:
            horizon = min(fut[0][0] if fut else _INF, T)
            if act:
                rem, rel, seq, job = act[0]
                fin = self._vt + rem
                if fin <= horizon + _tol(horizon):
                    heapq.heappop(act)
                    self._vt = max(self._vt, fin)
                    self._pending.append(job)
                    continue
                if horizon > self._vt:
                    heapq.heapreplace(act, (rem - (horizon - self._vt), rel, seq, job))
                    self._vt = horizon
            elif horizon > self._vt:
                self._vt = horizon
            if fut and fut[0][0] <= self._vt:
                while fut and fut[0][0] <= self._vt:
                    rel, seq, size, job = heapq.heappop(fut)
                    heapq.heappush(act, (size, rel, seq, job))
                continue
            return

    # ------------------------------------------------------------------ the cluster
    def _comm_heavy(self, model: str) -> bool:
        h = self._heavy.get(model)
        if h is None:
            amin, amax = self.placer.alpha_min(model), self.placer.alpha_max(model)
            ratio = amax / amin if amin > 0 else (_INF if amax > 0 else 1.0)
            h = self._heavy[model] = ratio >= self.comm_heavy
        return h

    def _last_slot(self, t: float) -> float:
        q = t / self.slot
        r = round(q)
        return (r if abs(q - r) <= 1e-9 * max(1.0, abs(q)) else math.floor(q)) * self.slot

    def decide(self, now: float, state: ClusterState) -> list[StartDecision]:
        self._advance(now)
        out: list[StartDecision] = []

        def start(job: JobSpec, p: Placement) -> None:
            state.take(p)
            out.append(StartDecision(job.id, p))

        if self._waiting is not None:  # lines 16-20: re-evaluate the delayed head
            job, kappa, last = self._waiting
            if job.gpus <= state.free_total:
                p = self.placer.place_most_free(job.model, state.free)
                if p.alpha < kappa or now >= last - _tol(last):
                    self.improved += p.alpha < kappa
                    self._waiting = None
                    start(job, p)
            if self._waiting is not None:
                return out
        pending = self._pending
        while pending:
            job = pending[0]
            if job.gpus > state.free_total:  # line 25: the head waits, and so does the queue
                break
            pending.popleft()
            model = job.model
            if self._comm_heavy(model):
                amin = self.placer.alpha_min(model)
                p = self.placer.place_most_free(model, state.free)
                if p.alpha <= self.comm_heavy * amin:  # line 12
                    start(job, p)
                    continue
                last = self._last_slot(now + self.tau * self.size(job))
                if last <= now + _tol(now):  # empty loop: line 20 with t unchanged
                    start(job, p)
                    continue
                self.delayed += 1
                self._waiting = (job, p.alpha, last)
                break
            start(job, self.placer.place_least_free(model, state.free))
        return out

    def next_wakeup(self, now: float) -> float | None:
        w = _INF
        if self._active:
            w = self._vt + self._active[0][0]
        if self._future:
            w = min(w, self._future[0][0])
        if self._waiting is not None:
            w = min(w, self._waiting[2])
        return None if w == _INF else w


def _make(instance: DdlwmpInstance, seed: int | None, **params: Any) -> ASRPT:
    return ASRPT(instance.cluster, instance.models, seed=seed, **params)


def run_a_srpt(instance: DdlwmpInstance, *, objective: str = "total_completion", time_limit: float | None = None,
               seed: int | None = None, **params: Any) -> Any:
    """A-SRPT with the instance's predictions (``predicted_iterations``; missing = 0).
    Params: ``comm_heavy`` (1.5), ``tau`` (1.0). The objective is ignored (the policy targets
    total completion time)."""
    return run_policy(instance, _make(instance, seed, **params), time_limit=time_limit)


def run_a_srpt_perfect(instance: DdlwmpInstance, *, objective: str = "total_completion",
                       time_limit: float | None = None, seed: int | None = None, **params: Any) -> Any:
    """A-SRPT-Perfect: A-SRPT with ñ_i = n_i."""
    policy = _make(instance, seed, **params)
    policy.name = "a-srpt-perfect"
    return run_policy(instance, policy, perfect=True, time_limit=time_limit)
