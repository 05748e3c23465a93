"""A-SRPT (Luo et al., Sec. IV-C, Algorithm 1) as an event-driven online policy.

Every step of Algorithm 1, with the readings optkit takes:

* **Virtual instance Ã1 (line 2).** A preemptive single machine of unit speed; job i has size
  ``(g_i/G)·ñ_i·α̃_i^min`` (α̃^min: Heavy-Edge on the fewest servers, eq. 7,
  :func:`~optkit.formulations.gpu_mapping.heavy_edge.alpha_min_estimate`) and release r_i (the real
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
* **Single-node jobs** (``JobSpec.single_node``; not in the paper: a job whose GPUs must sit on
  one server, :mod:`optkit.online`). Such a job fits only when one server has its g_i GPUs
  free (:meth:`.policies.ClusterState.fits`; the strict head waits otherwise, lines 3-5, 25);
  then both placements put it on one server (the most-free server holds it; best fit takes the
  one server with the fewest free GPUs that holds it).
* **Tensor-parallel jobs** (A-SRPT paper, Sec. VI: "all tensor slices of a layer must reside
  within a single server. To accommodate this, A-SRPT delays the start of tensor parallelism jobs
  until sufficient server capacity is available"; :mod:`.tensor`). A job whose replicas are t
  slices fits only when the servers hold each replica whole, Σ_m floor(free_m/t) >= g_i/t
  (:meth:`.policies.ClusterState.fits`): until then the strict head waits (lines 3-5, 25), and
  nothing behind it starts, however many GPUs are free in scattered pieces. Both placements pick
  servers in replicas of t GPUs (floor(free_m/t) per server) and map the replicas by Heavy-Edge
  with each replica's slices on its server; the communication-heavy test and the delayed start
  (lines 8-20) use the job's alpha~min and alpha_max by eq. (7) extended as gpu-mapping's job
  model extends it (``vertex_times``, ``alpha_max``). MoE jobs (expert groups, t = 1) are placed
  and timed the same way.

Every choice above is a declared reading (:mod:`.readings`, ``optkit readings ddlwmp``) and a
keyword of :class:`ASRPT` and of its registered runs :func:`.algorithms.run_a_srpt` and
:func:`.algorithms.run_a_srpt_perfect`: ``tau``
(:data:`.readings.TAU_DEFAULT`, chosen by the held-out protocol of ``benchmarks/tune_tau.py``: the paper
states tau = 0 for its testbed only, where it never delays a job, and no value for its simulations;
pass ``tau=0`` for the testbed setting, :data:`.readings.TESTBED_TAU`), ``comm_heavy`` (1.5, the
paper's), ``comm_heavy_test`` ("ge": line 8;
"gt": the text's "exceeds"), ``delay_blocks_queue`` (True: as above; False: jobs behind a delayed
job start meanwhile, one delayed job at a time — a second that would wait starts as line 20
does), ``light_placement`` ("best-fit": line 22; "most-free": as line 9) and ``head_of_line``
("strict": line 25; "skip": later jobs that fit start). ``a-srpt-perfect`` is the same policy
driven with ñ_i = n_i.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from typing import Mapping

from optkit.formulations.gpu_mapping.model import PipelineJob
from optkit.online import slot_floor
from optkit.readings import check_reading

from .model import PROBLEM, DdlwmpCluster
from .placement import Placement, Placer, check_placer
from .policies import ArrivalCheck, ClusterState, DemandQueue, JobSpec, StartDecision
from .readings import COMM_HEAVY_DEFAULT, READINGS, TAU_DEFAULT

__all__ = ["ASRPT"]

_INF = math.inf


def _tol(t: float) -> float:
    return 1e-9 * max(1.0, abs(t))


class ASRPT:
    """A-SRPT (Algorithm 1) as an online policy; see the module docstring for each reading.

    Driven by events (:mod:`.policies`): ``on_arrival(job, now)``, ``on_completion(job_id,
    now)``, ``decide(now, state)`` and ``next_wakeup(now)``; :func:`.simulate.simulate` is one
    driver. Parameters are the paper's (``comm_heavy`` = 1.5, ``tau``) and the readings of
    ``readings.py`` (``comm_heavy_test``, ``delay_blocks_queue``, ``light_placement``,
    ``head_of_line``); ``seed`` seeds Heavy-Edge's random choice.

    References
    ----------
    Luo et al., A-SRPT paper, Sec. IV-C, Algorithm 1 (lines 1-25): the virtual single machine
    Ã1 under SRPT, the communication-heavy test (line 8), the delayed start (lines 14-20).

    Notes
    -----
    Guarantee: Theorem 1, total completion time at most
    (2 + tau + rho G/(G - g_max)) rho + 2 rho g_max (alpha_max/alpha_min) (1 + tau + (1 + rho) G/(G - g_max)) eps
    times the optimum (rho, eps: the prediction's error terms); evaluated per instance by
    :mod:`optkit.formulations.ddlwmp.bounds` and checked against the exact optimum in the tests.

    Units: seconds (releases, ``now``, wake-ups, iteration times); GPUs.

    Examples
    --------
    >>> from optkit.formulations.ddlwmp.generate import tiny
    >>> from optkit.formulations.ddlwmp.model import DdlwmpInstance, evaluate
    >>> from optkit.formulations.ddlwmp.simulate import simulate
    >>> inst = DdlwmpInstance.from_dict(tiny(0))
    >>> schedule = simulate(inst, ASRPT(inst.cluster, inst.models, seed=0))
    >>> [(j["id"], j["start"]) for j in schedule["jobs"]]
    [('t0', 1.0), ('t1', 5.0), ('t2', 10.0)]
    >>> round(evaluate(inst, schedule).objectives["total_completion"], 3)
    20.427
    """

    name = "a-srpt"

    def __init__(self, cluster: DdlwmpCluster, models: Mapping[str, PipelineJob], *,
                 comm_heavy: float = COMM_HEAVY_DEFAULT, tau: float = TAU_DEFAULT, comm_heavy_test: str = "ge",
                 delay_blocks_queue: bool = True, light_placement: str = "best-fit", head_of_line: str = "strict",
                 seed: int | None = None, placer: Placer | None = None) -> None:
        # each reading checked as --param checks it (InputError naming it; ddlwmp's readings.py)
        comm_heavy = check_reading(READINGS, "comm_heavy", comm_heavy, PROBLEM)
        tau = check_reading(READINGS, "tau", tau, PROBLEM)
        comm_heavy_test = check_reading(READINGS, "comm_heavy_test", comm_heavy_test, PROBLEM)
        light_placement = check_reading(READINGS, "light_placement", light_placement, PROBLEM)
        head_of_line = check_reading(READINGS, "head_of_line", head_of_line, PROBLEM)
        delay_blocks_queue = check_reading(READINGS, "delay_blocks_queue", delay_blocks_queue, PROBLEM)
        check_placer(placer)
        self.cluster = cluster
        self.comm_heavy = float(comm_heavy)
        self.tau = float(tau)
        self.comm_heavy_test = comm_heavy_test
        self.delay_blocks_queue = bool(delay_blocks_queue)
        self.light_placement = light_placement
        self.head_of_line = head_of_line
        self.placer = placer or Placer(cluster, models, seed=seed)
        self._check = ArrivalCheck(self.placer.models, cluster.total_gpus, cluster.gpus_per_server)
        self.G = cluster.total_gpus
        self.slot = cluster.slot_seconds
        self._seq = 0
        self._vt = 0.0                                   # Ã1's clock
        self._future: list[tuple[float, int, float, JobSpec]] = []    # (release, seq, size, job)
        self._active: list[tuple[float, float, int, JobSpec]] = []    # (remaining, release, seq, job)
        # pending_queue (Alg. 1), in Ã1's completion order: one deque under head_of_line="strict";
        # under "skip" the baselines' per-demand queue (:class:`.policies.DemandQueue`) by queue
        # position, so the first job that fits is found without scanning the backlog (the order and
        # every decision are those of one queue scanned front to back)
        self._pending: deque[JobSpec] = deque()
        self._queue = DemandQueue()
        self._qseq = 0
        self._waiting: tuple[JobSpec, float, float] | None = None     # (job, kappa, last slot)
        self._heavy: dict[str, bool] = {}
        self.delayed = 0          # diagnostics: delayed starts, and those that found a better alpha
        self.improved = 0

    # ------------------------------------------------------------------ Ã1
    def size(self, job: JobSpec) -> float:
        return job.gpus / self.G * job.n_tilde * self.placer.alpha_min(job.model)

    def on_arrival(self, job: JobSpec, now: float) -> None:
        self._check(job)
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
                    self._enqueue(job)
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

    def _enqueue(self, job: JobSpec) -> None:
        """Append ``job`` to pending_queue (Ã1 completed it)."""
        if self.head_of_line == "strict":
            self._pending.append(job)
            return
        self._queue.push((self._qseq,), job)
        self._qseq += 1

    def _next_job(self, state: ClusterState) -> JobSpec | None:
        """Take the job the scan of lines 8-25 reaches next, with ``state.free`` GPUs free: strict, the
        queue's head if it fits (:meth:`.policies.ClusterState.fits`: a single-node job needs its
        GPUs free on one server), else none (line 25: the head waits, and so does the queue); skip,
        the first job in queue order that fits (:meth:`.policies.DemandQueue.head`: the free GPUs only
        fall during a scan, so a job passed over stays too big)."""
        if self.head_of_line == "strict":
            pending = self._pending
            return pending.popleft() if pending and state.fits(pending[0]) else None
        return self._queue.head(state, pop=True)

    # ------------------------------------------------------------------ the cluster
    def _comm_heavy(self, model: str) -> bool:
        h = self._heavy.get(model)
        if h is None:
            amin, amax = self.placer.alpha_min(model), self.placer.alpha_max(model)
            ratio = amax / amin if amin > 0 else (_INF if amax > 0 else 1.0)
            h = self._heavy[model] = ratio >= self.comm_heavy if self.comm_heavy_test == "ge" else ratio > self.comm_heavy
        return h

    def _last_slot(self, t: float) -> float:
        return slot_floor(t, self.slot)

    def decide(self, now: float, state: ClusterState) -> list[StartDecision]:
        self._advance(now)
        out: list[StartDecision] = []

        def start(job: JobSpec, p: Placement) -> None:
            state.take(p)
            out.append(StartDecision(job.id, p))

        if self._waiting is not None:  # lines 16-20: re-evaluate the delayed head
            job, kappa, last = self._waiting
            if state.fits(job):
                p = self.placer.place_most_free(job.model, state.free)
                if p.alpha < kappa or now >= last - _tol(last):
                    self.improved += p.alpha < kappa
                    self._waiting = None
                    start(job, p)
            if self._waiting is not None and self.delay_blocks_queue:
                return out
        while True:
            job = self._next_job(state)
            if job is None:
                break
            model = job.model
            if self._comm_heavy(model):
                amin = self.placer.alpha_min(model)
                p = self.placer.place_most_free(model, state.free)
                if p.alpha <= self.comm_heavy * amin:  # line 12
                    start(job, p)
                    continue
                last = self._last_slot(now + self.tau * self.size(job))
                if last <= now + _tol(now) or (self._waiting is not None):
                    # empty loop (line 20 with t unchanged); or another job already waits
                    # (delay_blocks_queue=False: one delayed job at a time, the others start as line 20)
                    start(job, p)
                    continue
                self.delayed += 1
                self._waiting = (job, p.alpha, last)
                if self.delay_blocks_queue:
                    break
                continue
            if self.light_placement == "best-fit":  # line 22
                start(job, self.placer.place_least_free(model, state.free))
            else:
                start(job, self.placer.place_most_free(model, state.free))
        return out

    def next_wakeup(self, now: float) -> float | None:
        w = _INF
        if self._active:
            w = self._vt + self._active[0][0]
        if self._future:
            w = min(w, self._future[0][0])
        if self._waiting is not None and self._waiting[2] > now + _tol(now):
            # its deadline (line 20); once past it the job waits only for GPUs (delay_blocks_queue=False lets
            # others take them), which come back at a completion, an instant of its own: no polling per slot
            w = min(w, self._waiting[2])
        return None if w == _INF else w
