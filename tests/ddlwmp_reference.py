"""The pre-speedup implementations of ddlwmp (commit 830bccd), kept as oracles: the faster
``evaluate`` and simulator must give the same outputs (tests/test_ddlwmp_speed.py)."""

from __future__ import annotations

import math
import time as _time
from typing import Any, Callable, Mapping

import numpy as np

from optkit.formulations.ddlwmp.model import TIME_TOL, DdlwmpInstance, _on_slot, free_time, slot_ceil
from optkit.formulations.ddlwmp.policies import ClusterState, Policy
from optkit.formulations.ddlwmp.simulate import job_specs
from optkit.simulation import EventQueue, drive
from optkit.formulations.gpu_mapping.model import alpha_from_counts, stage_counts
from optkit.formulation import Evaluation


def evaluate_reference(instance: DdlwmpInstance, solution: Mapping[str, Any]) -> Evaluation:
    """Check a schedule and measure it, from starts and placements alone.

    Checks: every job scheduled exactly once; t_i >= r_i and on a slot boundary; each
    ``assignment`` maps every replica of the job's model to a server 0..M-1; alpha_i (eq. 7) and
    C_i = t_i + n_i·alpha_i recomputed (the schedule's own ``alpha_s``/``completion``, when
    given, must agree within 1e-9 relative); at every moment each server holds at most g GPUs,
    a job holding its GPUs over [t_i, ceil(C_i)). Objectives: ``total_completion`` (sum C_i),
    ``total_flow`` (sum C_i - r_i), ``makespan`` (max C_i). Metrics add mean and tail (p50, p95,
    p99, max) job completion time C_i - r_i.
    """
    if not isinstance(solution, Mapping) or not isinstance(solution.get("jobs"), list):
        return Evaluation(False, violations=["solution must be an object with a 'jobs' list"])
    cl = instance.cluster
    slot = cl.slot_seconds
    by_id = {j.id: j for j in instance.jobs}
    violations: list[str] = []
    seen: set[str] = set()
    completions: dict[str, float] = {}
    events: list[tuple[float, int, int, int]] = []  # (time, +1 start / -1 free order, server, gpus)
    for idx, entry in enumerate(solution["jobs"]):
        p = f"jobs[{idx}]"
        if not isinstance(entry, Mapping) or "id" not in entry:
            violations.append(f"{p} must be an object with an 'id'")
            continue
        jid = entry["id"]
        job = by_id.get(jid)
        if job is None:
            violations.append(f"{p}.id {jid!r} is no job of the instance")
            continue
        if jid in seen:
            violations.append(f"job {jid} is scheduled twice")
            continue
        seen.add(jid)
        start = entry.get("start")
        if isinstance(start, bool) or not isinstance(start, (int, float)) or not math.isfinite(start):
            violations.append(f"job {jid}: start must be a number, got {start!r}")
            continue
        if start < job.release - TIME_TOL * max(1.0, job.release):
            violations.append(f"job {jid} starts at {start} before its release {job.release}")
        if not _on_slot(start, slot):
            violations.append(f"job {jid} starts at {start}, not on a slot boundary (slot {slot} s)")
        model = instance.models[job.model]
        a = entry.get("assignment")
        if not isinstance(a, list) or len(a) != len(model.stages) or any(
                not isinstance(row, list) or len(row) != st.replicas for row, st in zip(a, model.stages)):
            violations.append(f"job {jid}: assignment must list, per stage of {job.model}, one server per replica")
            continue
        flat = [m for row in a for m in row]
        if any(isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 0 <= m < cl.servers for m in flat):
            violations.append(f"job {jid}: assignment holds a server index outside 0..{cl.servers - 1}")
            continue
        x = stage_counts(model, a, cl.servers)
        alpha = alpha_from_counts(model, cl.mapping_cluster, x)
        completion = float(start) + job.iterations * alpha
        for key, value in (("alpha_s", alpha), ("completion", completion)):
            claimed = entry.get(key)
            if claimed is not None and not math.isclose(claimed, value, rel_tol=TIME_TOL, abs_tol=1e-12):
                violations.append(f"job {jid}: {key} {claimed!r} disagrees with {value!r} recomputed from the assignment")
        completions[jid] = completion
        release_at = free_time(completion, slot)
        for m, n in enumerate(x.sum(axis=0)):
            if n:
                events.append((float(start), 1, m, int(n)))
                events.append((release_at, 0, m, -int(n)))
    missing = [j.id for j in instance.jobs if j.id not in seen]
    if missing:
        violations.append(f"{len(missing)} jobs are not scheduled: {', '.join(missing[:5])}")
    # Capacity at every moment: frees (order 0) before starts (order 1) at the same instant.
    events.sort()
    load = np.zeros(cl.servers, dtype=np.int64)
    for t, _, m, n in events:
        load[m] += n
        if load[m] > cl.gpus_per_server:
            violations.append(f"server {m} holds {int(load[m])} GPUs at t={t} s (capacity {cl.gpus_per_server})")
            break
    if violations:
        return Evaluation(False, violations=violations)
    c = np.array([completions[j.id] for j in instance.jobs])
    r = np.array([j.release for j in instance.jobs])
    jct = c - r
    objectives = {"total_completion": float(c.sum()), "total_flow": float(jct.sum()), "makespan": float(c.max())}
    metrics = {
        "jobs": len(instance.jobs),
        "mean_jct_s": float(jct.mean()),
        "p50_jct_s": float(np.percentile(jct, 50)),
        "p95_jct_s": float(np.percentile(jct, 95)),
        "p99_jct_s": float(np.percentile(jct, 99)),
        "max_jct_s": float(jct.max()),
    }
    return Evaluation(True, objectives=objectives, metrics=metrics)


_FREE, _ARRIVE, _WAKE = 0, 1, 2


def simulate_reference(instance: DdlwmpInstance, policy: Policy, *, perfect: bool = False,
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
        raise RuntimeError(f"time limit of {time_limit} s reached after {len(started)} starts")
    if len(started) != len(specs):
        missing = [s.id for s in specs if s.id not in started]
        raise RuntimeError(f"policy {policy.name} never started {len(missing)} jobs: {', '.join(missing[:5])}")
    if stats is not None:
        stats.update(instants=instants, wall_time_s=_time.perf_counter() - t0)
    return {"jobs": [started[s.id] for s in specs]}
