"""Drive an online policy over a :class:`DdlwmpInstance` and return the schedule.

The time rule is :mod:`.model`'s: decisions only at slot boundaries; a job released at r_i is
handed to the policy at ``slot_ceil(r_i)`` (its :class:`JobSpec` keeps the real r_i); a job
started at t_i on placement alpha_i completes at ``C_i = t_i + n_i·alpha_i`` (true n_i) and
gives its GPUs back at ``slot_ceil(C_i)``. The driver (:mod:`optkit.simulation`) visits only
instants where something can change: slot-rounded arrivals, GPU frees, and the policy's
requested wake-ups (rounded up to a slot boundary; a wake-up at or before ``now`` is moved to
the next slot, so the clock always advances). At one instant it frees GPUs first
(``on_completion``), then delivers arrivals (``on_arrival``), then calls ``decide`` once and
applies its starts, then asks ``next_wakeup``.

The schedule lists the jobs in the instance's order:
``{"jobs": [{"id", "start", "completion", "alpha_s", "assignment"}]}`` (global server indices).
"""

from __future__ import annotations

import time as _time
from typing import Any, Callable

import numpy as np

from optkit.simulation import EventQueue, drive

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
    ``time_limit`` (s) passes, and ``RuntimeError`` if the policy leaves jobs unstarted."""
    t0 = _time.perf_counter()
    cl = instance.cluster
    slot = cl.slot_seconds
    free = np.full(cl.servers, cl.gpus_per_server, dtype=np.int64)
    specs = job_specs(instance, perfect=perfect)
    iterations = {j.id: j.iterations for j in instance.jobs}
    queue = EventQueue()
    for spec in specs:
        queue.push(slot_ceil(spec.release, slot), "arrive", spec, priority=_ARRIVE)
    started: dict[str, dict[str, Any]] = {}
    held: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    wake_pending: set[float] = set()

    def handle(now: float, batch: list[Any]) -> None:
        for ev in batch:
            if ev.kind == "free":
                idx, cnt = held.pop(ev.payload)
                free[idx] += cnt
                policy.on_completion(ev.payload, now)
            elif ev.kind == "arrive":
                policy.on_arrival(ev.payload, now)
            else:
                wake_pending.discard(now)
        state = ClusterState(free.copy(), cl.gpus_per_server)
        for d in policy.decide(now, state):
            p = d.placement
            if d.job_id in started or d.job_id not in iterations:
                raise RuntimeError(f"policy {policy.name} started unknown or already started job {d.job_id!r}")
            idx = np.asarray(p.servers, dtype=np.int64)
            cnt = np.asarray(p.counts, dtype=np.int64)
            if np.any(free[idx] < cnt):
                raise RuntimeError(f"policy {policy.name} over-committed a server at t={now} (job {d.job_id})")
            free[idx] -= cnt
            completion = now + iterations[d.job_id] * p.alpha
            started[d.job_id] = {"id": d.job_id, "start": now, "completion": completion,
                                 "alpha_s": p.alpha, "assignment": p.assignment}
            held[d.job_id] = (idx, cnt)
            queue.push(free_time(completion, slot), "free", d.job_id, priority=_FREE)
        w = policy.next_wakeup(now)
        if w is not None:
            w = slot_ceil(w, slot)
            if w <= now:
                w = now + slot
            if w not in wake_pending:
                wake_pending.add(w)
                queue.push(w, "wake", None, priority=_WAKE)

    should_stop: Callable[[], bool] | None = None
    if time_limit is not None:
        deadline = t0 + time_limit
        should_stop = lambda: _time.perf_counter() > deadline  # noqa: E731
    instants = drive(queue, handle, should_stop=should_stop)
    if queue:
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
