"""Drive an online policy over a :class:`DdlwmpInstance` and return the schedule.

The time rule is :mod:`.model`'s: decisions only at slot boundaries; a job released at r_i is
handed to the policy at ``slot_ceil(r_i)`` (its :class:`JobSpec` keeps the real r_i); a job
started at t_i on placement alpha_i completes at ``C_i = t_i + n_i·alpha_i`` (true n_i) and
gives its GPUs back at ``slot_ceil(C_i)``. The driver (the rules of :mod:`optkit.simulation`) visits only
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
from typing import Any

import numpy as np

from .model import DdlwmpInstance, free_time, slot_ceil
from .policies import ClusterState, JobSpec, Policy

__all__ = ["simulate", "job_specs", "SimulationTimeout"]

_FREE, _ARRIVE, _WAKE = 0, 1, 2


class SimulationTimeout(RuntimeError):
    """The wall-clock limit passed before every job started."""


def job_specs(instance: DdlwmpInstance, *, perfect: bool = False) -> list[JobSpec]:
    """The policy's view of each job; ``perfect`` puts the true n_i in the prediction."""
    return [JobSpec(j.id, float(j.release), j.model, instance.gpus(j),
                    float(j.iterations) if perfect else j.predicted_iterations) for j in instance.jobs]


def simulate(instance: DdlwmpInstance, policy: Policy, *, perfect: bool = False,
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
    specs = job_specs(instance, perfect=perfect)
    iterations = {j.id: j.iterations for j in instance.jobs}
    arrive_at = [slot_ceil(spec.release, slot) for spec in specs]
    arrivals = sorted(range(len(specs)), key=lambda i: (arrive_at[i], i))
    n_arr = len(arrivals)
    heap: list[tuple[float, int, int, Any]] = []  # frees (_FREE) and wake-ups (_WAKE)
    push, pop = heapq.heappush, heapq.heappop
    seq = 0
    started: dict[str, dict[str, Any]] = {}
    held: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    wake_pending: set[float] = set()
    gps = cl.gpus_per_server
    on_completion, on_arrival, decide, next_wakeup = (policy.on_completion, policy.on_arrival, policy.decide,
                                                      policy.next_wakeup)
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
            on_arrival(specs[arrivals[ai]], now)
            ai += 1
        while heap and heap[0][0] == now:
            pop(heap)
            wake_pending.discard(now)
        for d in decide(now, ClusterState(free.copy(), gps)):
            p = d.placement
            jid = d.job_id
            if jid in started or jid not in iterations:
                raise RuntimeError(f"policy {policy.name} started unknown or already started job {jid!r}")
            servers = tuple(int(m) for m in p.servers)
            counts = tuple(int(c) for c in p.counts)
            for m, c in zip(servers, counts):
                if free[m] < c:
                    raise RuntimeError(f"policy {policy.name} over-committed a server at t={now} (job {jid})")
            for m, c in zip(servers, counts):
                free[m] -= c
            completion = now + iterations[jid] * p.alpha
            started[jid] = {"id": jid, "start": now, "completion": completion,
                            "alpha_s": p.alpha, "assignment": p.assignment}
            held[jid] = (servers, counts)
            push(heap, (free_time(completion, slot), _FREE, seq, jid))
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
    if len(started) != len(specs):
        missing = [s.id for s in specs if s.id not in started]
        raise RuntimeError(f"policy {policy.name} never started {len(missing)} jobs: {', '.join(missing[:5])}")
    if stats is not None:
        stats.update(instants=instants, wall_time_s=_time.perf_counter() - t0)
    return {"jobs": [started[s.id] for s in specs]}


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
