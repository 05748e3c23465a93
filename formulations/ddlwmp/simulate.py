"""Drive an online policy over a :class:`DdlwmpInstance` and return the schedule.

:func:`simulate` is a driver of the engine's online protocol (:mod:`optkit.online`, whose rules
1-6 it keeps): it hands the policy :class:`optkit.online.Job` arrivals (``seq`` = the job's
position in the instance), a :class:`~optkit.online.ClusterView` of servers 0..M-1 and reads
its :class:`~optkit.online.Decision` starts. A ddlwmp policy object (:class:`.policies.Policy`:
A-SRPT, a baseline) is put behind the protocol by :meth:`.online.OnlineScheduler.of_policy`
(without the protocol checks, ``check=False``: this driver keeps the rules by construction, and
tests/test_online_protocol.py runs it with the checks on to show it); any other
:class:`~optkit.online.OnlinePolicy` is driven as it is, and what it returns is checked here (a
start of an unknown or started job, more GPUs than a server has free, a single-node job split
over servers, a start without its time per iteration: ``RuntimeError`` naming the policy).

The time rule is :mod:`.model`'s: decisions only at slot boundaries; a job released at r_i is
handed to the policy at ``slot_ceil(r_i)`` (its :class:`JobSpec` keeps the real r_i); a job
started at t_i on placement alpha_i completes at ``C_i = t_i + n_i·alpha_i`` (true n_i) and
gives its GPUs back at ``slot_ceil(C_i)`` (:func:`optkit.online.slot_ceil`, with its tolerance). The driver (the rules of :mod:`optkit.simulation`) visits only
instants where something can change: slot-rounded arrivals, GPU frees, and the policy's
requested wake-ups (rounded up to a slot boundary; a wake-up at or before ``now`` is moved to
the next slot, so the clock always advances). At one instant it frees GPUs first
(``on_completion``), then delivers arrivals (``on_arrival``), then calls ``decide`` once and
applies its starts, then asks ``next_wakeup``.

The schedule lists the jobs in the instance's order:
``{"jobs": [{"id", "start", "completion", "alpha_s", "assignment"}]}`` (global server indices).
"""

from __future__ import annotations

import heapq
import math
import time as _time
from typing import Any, Mapping

import numpy as np

from optkit.online import ClusterView, Job, OnlinePolicy
from optkit.validation import check_time_limit

from .model import DdlwmpInstance, slot_ceil
from .online import OnlineScheduler
from .policies import JobSpec, Policy, build_policy
from .tensor import tensor_parallel_of

__all__ = ["simulate", "simulate_policy", "job_specs", "SimulationTimeout"]

_FREE, _ARRIVE, _WAKE = 0, 1, 2


class SimulationTimeout(RuntimeError):
    """The wall-clock limit passed before every job started."""


def job_specs(instance: DdlwmpInstance, *, perfect: bool = False) -> list[JobSpec]:
    """The policy's view of each job; ``perfect`` puts the true n_i in the prediction."""
    return [JobSpec(j.id, float(j.release), j.model, instance.gpus(j),
                    float(j.iterations) if perfect else j.predicted_iterations, j.single_node,
                    tensor_parallel_of(instance.models[j.model])) for j in instance.jobs]


def as_online(policy: Policy | OnlinePolicy[int], instance: DdlwmpInstance) -> OnlinePolicy[int]:
    """``policy`` behind the protocol: a ddlwmp policy object (its ``decide`` takes a
    :class:`.policies.ClusterState`) is wrapped; an :class:`~optkit.online.OnlinePolicy` is kept."""
    if isinstance(policy, OnlineScheduler) or getattr(policy, "protocol", None) == "optkit.online":
        return policy  # type: ignore[return-value]
    return OnlineScheduler.of_policy(policy, instance.cluster, instance.models, check=False)  # type: ignore[arg-type]


def simulate(instance: DdlwmpInstance, policy: Policy | OnlinePolicy[int], *, perfect: bool = False,
             time_limit: float | None = None, stats: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run ``policy`` on ``instance``; return the schedule dict. ``stats`` (optional dict) gets
    the number of instants visited and the wall time. Raises :class:`SimulationTimeout` when
    ``time_limit`` (s) passes, and ``RuntimeError`` if the policy leaves jobs unstarted.

    Event-driven: the arrivals are one list sorted by (slot-rounded release, position); GPU
    frees and wake-ups share a heap of plain tuples ``(time, kind, push order, payload)``. Each
    instant takes every event due then, frees before arrivals before wake-ups (the order of
    :class:`optkit.simulation.EventQueue` with priorities free 0, arrival 1, wake-up 2), so the
    instants and the schedule are those of the generic driver."""
    t0 = _time.perf_counter()
    cl = instance.cluster
    slot = cl.slot_seconds
    free = np.full(cl.servers, cl.gpus_per_server, dtype=np.int64)
    size = free.copy()
    jobs = instance.jobs  # each becomes its protocol Job (seq = its position) when it arrives, one at a time
    gpus_of = {name: m.n_replicas for name, m in instance.models.items()}
    name = getattr(policy, "name", type(policy).__name__)
    online = as_online(policy, instance)
    iterations = {j.id: j.iterations for j in jobs}
    single = {j.id for j in jobs if j.single_node}
    arrive_at = [slot_ceil(float(j.release), slot) for j in jobs]
    arrivals = sorted(range(len(jobs)), key=lambda i: (arrive_at[i], i))
    n_arr = len(arrivals)
    heap: list[tuple[float, int, int, Any]] = []  # frees (_FREE) and wake-ups (_WAKE)
    push, pop = heapq.heappush, heapq.heappop
    seq = 0
    started: dict[str, dict[str, Any]] = {}
    held: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    wake_pending: set[float] = set()
    on_completion, on_arrival, decide, next_wakeup = (online.on_completion, online.on_arrival, online.decide,
                                                      online.next_wakeup)
    view = ClusterView.of_arrays(free, size)
    n_servers = len(free)
    time_limit = check_time_limit(time_limit, problem="ddlwmp")
    deadline = None if time_limit is None else t0 + time_limit
    ai = 0
    instants = 0
    inf = math.inf
    while ai < n_arr or heap:
        if deadline is not None and _time.perf_counter() > deadline:
            break
        ta = arrive_at[arrivals[ai]] if ai < n_arr else inf
        now = heap[0][0] if heap and heap[0][0] < ta else ta
        instants += 1
        while heap and heap[0][0] == now and heap[0][1] == _FREE:
            jid = pop(heap)[3]
            servers, counts = held.pop(jid)
            for m, c in zip(servers, counts):
                free[m] += c
            on_completion(jid, now)
        while ai < n_arr and arrive_at[arrivals[ai]] == now:
            i = arrivals[ai]
            j = jobs[i]
            on_arrival(Job(j.id, float(j.release), gpus_of[j.model], i, j.model,
                           float(j.iterations) if perfect else j.predicted_iterations,
                           single_node=j.single_node), now)
            ai += 1
        while heap and heap[0][0] == now:
            pop(heap)
            wake_pending.discard(now)
        np.copyto(view.free_array, free)  # the view of this instant (one object, refilled)
        for d in decide(now, view):
            jid = d.job_id
            if jid in started or jid not in iterations:
                raise RuntimeError(f"policy {name} started unknown or already started job {jid!r}")
            servers = tuple(d.gpus)
            counts = tuple(d.gpus.values())
            if single and jid in single and len(servers) != 1:
                raise RuntimeError(f"policy {name} split single-node job {jid!r} over servers {list(servers)}")
            for m, c in zip(servers, counts):
                if not 0 <= m < n_servers or free[m] < c:
                    raise RuntimeError(f"policy {name} over-committed a server at t={now} (job {jid})")
                free[m] -= c  # (a violation stops the run: the counts after it do not matter)
            alpha = d.time_per_iteration
            if alpha is None or d.replicas is None:
                raise RuntimeError(f"policy {name} started job {jid!r} without its replicas' servers and "
                                   "time per iteration")
            completion = now + iterations[jid] * alpha
            started[jid] = {"id": jid, "start": now, "completion": completion,
                            "alpha_s": alpha, "assignment": d.replicas}
            held[jid] = (servers, counts)
            push(heap, (slot_ceil(completion, slot), _FREE, seq, jid))  # free_time: ceil(C_i) in slots
            seq += 1
        w = next_wakeup(now)
        if w is not None:
            w = slot_ceil(w, slot)
            if w <= now:
                w = now + slot
            if w not in wake_pending:
                wake_pending.add(w)
                push(heap, (w, _WAKE, seq, None))
                seq += 1
    if ai < n_arr or heap:
        raise SimulationTimeout(f"time limit of {time_limit} s reached after {len(started)} starts")
    if len(started) != len(jobs):
        missing = [j.id for j in jobs if j.id not in started]
        raise RuntimeError(f"policy {name} never started {len(missing)} jobs: {', '.join(missing[:5])}")
    if stats is not None:
        stats.update(instants=instants, wall_time_s=_time.perf_counter() - t0)
    return {"jobs": [started[j.id] for j in jobs]}


def simulate_policy(instance: DdlwmpInstance, cls: Any, *, seed: int | None = None,
                    heavy_edge: Mapping[str, Any] | None = None, perfect: bool = False,
                    time_limit: float | None = None, **params: Any) -> tuple[dict[str, Any], Any]:
    """Build a fresh policy of class ``cls`` for ``instance`` (:func:`.policies.build_policy`: on its
    own Heavy-Edge placer under ``heavy_edge``'s readings, seeded by ``seed``, with the policy's
    keywords ``params``) and :func:`simulate` it; return the schedule and the policy (its counters
    and its placer's alpha~min, values a readout reads after ``evaluate``).

    The driver builds the policy it drives, so a run enters the driver, then the policy (built,
    then called at every instant), then the placement, once each, in that order
    (:func:`.sec5.run_policy_readout`; issue 36, ``benchmarks/flow_trace.py``)."""
    policy = build_policy(cls, instance.cluster, instance.models, seed=seed, heavy_edge=heavy_edge, **params)
    return simulate(instance, policy, perfect=perfect, time_limit=time_limit), policy


def run_policy(instance: DdlwmpInstance, policy: Policy, *, perfect: bool = False,
               time_limit: float | None = None) -> Any:
    """Engine glue: simulate and wrap the schedule in a :class:`optkit.result.Result`
    (``feasible``; ``time_limit`` without a solution when the wall-clock limit passes)."""
    from optkit.result import Result, Status

    stats: dict[str, Any] = {}
    try:
        schedule = simulate(instance, policy, perfect=perfect, time_limit=time_limit, stats=stats)
    except SimulationTimeout as exc:
        return Result(Status.TIME_LIMIT, message=str(exc))
    return Result(Status.FEASIBLE, solution=schedule, info={"instants": stats.get("instants")})


class _Protocol:
    """Marks any :class:`~optkit.online.OnlinePolicy` as speaking the protocol (for :func:`as_online`)."""

    protocol = "optkit.online"

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.name = getattr(policy, "name", type(policy).__name__)
        self.on_arrival, self.on_completion = policy.on_arrival, policy.on_completion
        self.decide, self.next_wakeup = policy.decide, policy.next_wakeup


def run_online_policy(instance: DdlwmpInstance, policy: OnlinePolicy, *, time_limit: float | None = None) -> Any:
    """Engine glue for a plug-in policy (:class:`optkit.formulation.OnlinePolicyPlugin`): drive
    ``policy``, any :class:`~optkit.online.OnlinePolicy` naming servers 0..M-1, over ``instance``
    with the instance's predictions, as :func:`run_policy` does for the paper's policies."""
    return run_policy(instance, _Protocol(policy), time_limit=time_limit)  # type: ignore[arg-type]
