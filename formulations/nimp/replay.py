"""Online cluster replay of nimp (Fang et al., Sec. V-B): jobs arrive, a policy places them on a
fat-tree cluster, they run for their trace duration plus the communication time their placement
causes, and release their GPUs at completion.

Everything below is a stated modelling choice (the paper gives none of these numbers); the
package ``README.md`` ("Online replay") repeats them.

Cluster (:class:`FatTree`)
==========================
``racks x machines_per_rack`` machines of ``gpus_per_machine`` GPUs (paper: 64 x 8 x 8, 100 Gbps).
Every machine has one NIC of ``link_gbps`` (B = link_gbps·1e9/8 bytes/s). A rack's uplink to
the aggregation layer carries ``U = machines_per_rack·B / oversubscription`` bytes/s (a fat tree
is non-blocking: ``oversubscription = 1`` by default); the core is not modelled (non-blocking).

Traffic already placed, residual bandwidth and the pair capacity P
===================================================================
A running job j synchronises once per *synchronisation period* ``iteration_s + c_j`` (compute
time of one iteration, a stated constant, plus its own communication time per synchronisation
c_j). Per synchronisation, the bytes crossing machine s's NIC are ``sum_t sum over phase-t pairs
split across machines with one end on s of C^t`` (a pair's volume counts once per end, model
reading 4); the bytes crossing rack r's uplink are the same sum over pairs with exactly one end
in r. Its *rate* on s (on r) is those bytes divided by the period. Then

* residual NIC bandwidth ``b_s = max(B - sum_j rate_j(s), floor·B)``,
* residual uplink bandwidth ``u_r = max(U - sum_j rate_j(r), floor·U)`` (``floor`` = 1%, so a
  saturated link stays slow rather than infinite-time),
* pair bandwidth ``bw(s, s') = min(b_s, b_s')`` in one rack, ``min(b_s, b_s', u_r(s), u_r(s'))``
  across racks,
* Titan's pair capacity, in bytes per phase (the unit of C^t, model reading 5):
  ``P_{s,s'} = bw(s, s') · phase_budget_s`` — the bytes a machine pair may carry in one phase if a
  phase is to take at most ``phase_budget_s`` seconds.

Rates are fixed when a job starts and removed when it ends (no re-sharing while it runs).

Communication time and duration
===============================
Per synchronisation, phases run one after the other and the pairs of a phase in parallel, each
phase as slow as its most loaded NIC or uplink:
``c_j = sum_t max(max_s bytes_t(s) / b_s, max_r bytes_t(r) / u_r)`` with the residual bandwidths
seen at placement (0 for a job on one machine). The job synchronises
``syncs_j = ceil(duration / iteration_s)`` times (one per iteration), so it runs
``duration + syncs_j · c_j`` seconds (trace duration plus the communication time its placement
causes, as the paper does: "add the bias to the corresponding job durations").

Jobs
====
Worker count N = the trace's ``num_gpu``; collective halving-doubling when N is a power of two
(every ITP job is), else ring. Parameter size K is **synthetic**: each trace job gets a model
drawn (seeded) from :data:`MODEL_BYTES` (float32 parameters of the named network) -- the paper
also "randomly choose[s] a DNN model for each job record"; Tiresias reads its sensitivity from
that model (VGG/AlexNet consolidate).

Queueing and policies
=====================
The replay is a driver of the engine's online protocol (:mod:`optkit.online`, rules 1-6): the
policies are :mod:`.online`'s (strict FIFO in front of Titan's or a baseline's placement rule),
each job arrives as an :class:`optkit.online.Job` (``seq`` = its position in submit order, K and
the collective with it), and each ``decide`` gets a :class:`~optkit.online.ClusterView` of the
machines 0..M-1 whose pair capacity is P below and whose ``on_reserve`` hook starts the job
(its traffic, completion and metrics), so the next placement of the same instant sees the GPUs
and the bandwidth the previous one took. At one instant completions are handled first, then
arrivals, then ``decide`` once (the policies never ask for a wake-up). Titan gets P (at most
:data:`MAX_ATTEMPTS` placement attempts per pass); if it finds no placement that respects P but
the idle GPUs suffice, it places with P relaxed (resource constraint only) and the replay counts
the job in ``titan_bandwidth_relaxed`` -- so every policy starts a job at the same condition and
the comparison is of placements, not of admission rules. The baselines ignore P, as the systems
do (:mod:`.baselines`).

Metrics (:func:`summarize`)
===========================
Sampled after every instant (piecewise constant in between), averaged over time from the first
arrival to the last completion:

* ``used_machines``: machines with at least one busy GPU; ``machine_hours`` = its integral / 3600;
* ``fragmentation_rate``: the paper's first definition, idle GPUs / GPUs of the *used* machines
  (all machines have the same K, so it is ``1 - busy GPUs / (used · K)``); the second definition
  (occupied / equipped GPUs of the used machines) is its complement, reported as
  ``occupancy_rate``. Averaged over the time with at least one used machine. The paper's
  narrative (Elasticflow highest, HiveD lowest) matches the first.
* ``cross_bytes``: sum over running jobs of their cross-machine bytes per synchronisation (the
  paper's Fig. 5 "communication overhead" in GB); ``total_cross_bytes`` = sum over jobs of
  cross bytes per synchronisation x syncs.
* ``profit_rate`` K·P/(N·T): K running jobs, P their mean price, N used machines, T the mean
  duration (hours, including communication) of the running jobs; price of a job = its workers x
  trace duration in hours (1 unit per GPU-hour of requested work: "related to ... number of
  workers, training duration"). So ``profit_rate = sum price / (N · mean T)``, in units per
  machine-hour. Averaged over time with at least one used machine, and also at arrival instants
  (``profit_rate_at_arrivals``: the paper computes it "once a job arrives").
* ``queueing_delay``: start - submission (mean, p95, max).
"""

from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from optkit.errors import InputError
from optkit.validation import check_time_limit
from optkit.online import ClusterView, Decision, Job as OnlineJob, OnlinePolicy, single_node_field
from optkit.simulation import EventQueue, drive

from .model import Job, is_placement_sensitive
from .network import RESIDUAL_FLOOR, ClusterState, traffic
from .online import (MAX_ATTEMPTS, POLICIES, AlgorithmPolicy, ElasticflowPolicy, FifoPolicy, HivedPolicy, TiresiasPolicy,
                     TitanPolicy)

__all__ = ["FatTree", "ReplayJob", "ReplayConfig", "ClusterState", "FifoPolicy", "TitanPolicy",
           "ElasticflowPolicy", "HivedPolicy", "TiresiasPolicy", "POLICIES", "MODEL_BYTES", "replay",
           "summarize", "online_jobs", "jobs_from_trace", "workload_from_dict", "generate_workload", "load_workload",
           "simulate_cli", "traffic", "ReplayResult", "plugin_policy", "cluster_instance", "replay_policy",
           "RESIDUAL_FLOOR"]

# float32 parameter bytes of well-known networks (synthetic assignment, see the module docstring)
MODEL_BYTES = {
    "resnet50": 25.6e6 * 4,
    "vgg16": 138.4e6 * 4,
    "alexnet": 61.1e6 * 4,
    "inception3": 23.8e6 * 4,
    "bert-base": 110.0e6 * 4,
}
_FREE, _ARRIVE, _WAKE = 0, 1, 2


# ----------------------------------------------------------------------------- topology
@dataclass(frozen=True)
class FatTree:
    """Racks x machines x GPUs; NIC ``link_gbps``; rack uplink ``machines_per_rack·B/oversubscription``."""

    racks: int = 64
    machines_per_rack: int = 8
    gpus_per_machine: int = 8
    link_gbps: float = 100.0
    oversubscription: float = 1.0

    def __post_init__(self) -> None:
        # the derived sizes, computed once with the tree: the driver and the view's network state
        # read them as values during a replay rather than compute them again (issue 36)
        machines = self.racks * self.machines_per_rack
        nic = self.link_gbps * 1e9 / 8.0
        for k, v in (("_machines", machines), ("_gpus", machines * self.gpus_per_machine), ("_nic", nic),
                     ("_uplink", self.machines_per_rack * nic / self.oversubscription),
                     ("_rack", np.arange(machines, dtype=np.int64) // self.machines_per_rack)):
            object.__setattr__(self, k, v)

    @property
    def machines(self) -> int:
        return self._machines  # type: ignore[attr-defined, no-any-return]

    @property
    def gpus(self) -> int:
        return self._gpus  # type: ignore[attr-defined, no-any-return]

    @property
    def nic_Bps(self) -> float:
        return self._nic  # type: ignore[attr-defined, no-any-return]

    @property
    def uplink_Bps(self) -> float:
        return self._uplink  # type: ignore[attr-defined, no-any-return]

    def rack_of(self) -> np.ndarray:
        """The rack of each machine (a new array)."""
        return self._rack.copy()  # type: ignore[attr-defined, no-any-return]

    def to_dict(self) -> dict[str, Any]:
        return {"racks": self.racks, "machines_per_rack": self.machines_per_rack,
                "gpus_per_machine": self.gpus_per_machine, "link_gbps": self.link_gbps,
                "oversubscription": self.oversubscription}


@dataclass(frozen=True)
class ReplayConfig:
    """Compute time of one iteration (one synchronisation each) and Titan's phase time budget."""

    iteration_s: float = 1.0
    phase_budget_s: float = 0.05


@dataclass(frozen=True)
class ReplayJob:
    """One job of the workload: N = ``workers``; K = ``param_bytes`` (synthetic for traces);
    ``single_node``: all N workers on one machine (every policy honours it, :mod:`.online`)."""

    id: str
    submit: float
    duration: float
    workers: int
    model: str
    param_bytes: float
    collective: str
    single_node: bool = False

    @property
    def sensitive(self) -> bool:
        return is_placement_sensitive(Job(self.workers, self.collective, self.param_bytes, None, self.model))


# ----------------------------------------------------------------------------- driver
@dataclass
class ReplayResult:
    jobs: list[dict[str, Any]]
    series: dict[str, np.ndarray]
    topo: FatTree
    config: ReplayConfig
    policy: str
    wall_time_s: float
    extra: dict[str, Any] = field(default_factory=dict)


def replay_policy(jobs: Sequence[ReplayJob], policy: str, readings: Mapping[str, Any] | None = None, *,
                  topo: FatTree = FatTree(), config: ReplayConfig = ReplayConfig(),
                  time_limit: float | None = None) -> ReplayResult:
    """Build policy ``policy`` (a name of :data:`POLICIES`) under ``readings`` (its keywords) and
    :func:`replay` ``jobs`` under it. The driver builds the policy it drives, so a replay enters the
    driver, then the policy, then the placement, once each (issue 36, ``benchmarks/flow_trace.py``;
    ``claims``' Sec. V-B replays run this way)."""
    return replay(jobs, POLICIES[policy](**dict(readings or {})), topo=topo, config=config, time_limit=time_limit)


def online_jobs(jobs: Sequence[ReplayJob]) -> list[OnlineJob]:
    """The jobs as the protocol delivers them: N GPUs, K, the collective, the model name and the
    single-node flag, and ``seq`` = position (the tie order of simultaneous submissions, rule 2).
    The trace duration is the driver's, not the policy's (rule 5)."""
    return [OnlineJob(j.id, j.submit, j.workers, i, j.model, param_bytes=j.param_bytes, collective=j.collective,
                      single_node=j.single_node) for i, j in enumerate(jobs)]


def replay(jobs: Sequence[ReplayJob], policy: OnlinePolicy[int], *, topo: FatTree = FatTree(),
           config: ReplayConfig = ReplayConfig(), time_limit: float | None = None) -> ReplayResult:
    """Replay ``jobs`` (sorted by submit) under ``policy``, any :class:`optkit.online.OnlinePolicy`
    (module docstring); returns every job's start, end, placement and costs, and the metric time
    series."""
    time_limit = check_time_limit(time_limit, problem="nimp")
    t0 = _time.perf_counter()
    for i, j in enumerate(jobs):
        if j.workers > topo.gpus:
            raise InputError(f"jobs[{i}].workers", f"({j.workers}) exceeds the cluster's {topo.gpus} GPUs",
                             problem="nimp")
    name = getattr(policy, "name", type(policy).__name__)
    state = ClusterState(topo, config, jobs, policy=name)  # the view's state; it checks and reserves each start
    M, G = topo.machines, topo.gpus_per_machine
    q = EventQueue()
    for j in online_jobs(jobs):
        q.push(j.release, "arrive", j, priority=_ARRIVE)
    sizes = np.full(M, G, dtype=np.int64)
    rec: dict[str, dict[str, Any]] = {}
    load: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]] = {}
    running: dict[str, Any] = {"n": 0, "price": 0.0, "dur_h": 0.0, "cross": 0.0, "busy": 0, "used": 0}
    ser: dict[str, list[float]] = {k: [] for k in ("t", "used", "busy", "cross", "running", "price", "dur_h",
                                                   "waiting", "arrival")}
    used_count = np.zeros(M, dtype=np.int64)  # busy GPUs per machine

    def record(now: float) -> None:
        """Record the starts the policy reserved at ``now`` (:meth:`.network.ClusterState.reserve`
        checked them, took their GPUs and added their traffic), in reservation order: their
        completions, the running totals and each job's record."""
        for st in state.take_started():
            job, machines, counts, dur = st.job, st.machines, st.counts, st.duration
            running["used"] += int(np.count_nonzero(used_count[machines] == 0))
            used_count[machines] += counts
            running["busy"] += job.workers
            load[job.id] = (machines, counts, st.nic_rate, st.up_rate)
            price = job.workers * job.duration / 3600.0
            rec[job.id] = {"id": job.id, "submit": job.submit, "start": now, "end": now + dur,
                           "machines": int(len(machines)), "idle_machines_used": st.idle_opened,
                           "cross_bytes_per_sync": st.cross, "comm_s_per_sync": st.comm, "syncs": st.syncs,
                           "comm_s": st.syncs * st.comm, "price": price, "machine_of_worker": st.machine_of_worker}
            running["n"] += 1
            running["price"] += price
            running["dur_h"] += dur / 3600.0
            running["cross"] += st.cross
            q.push(now + dur, "free", job.id, priority=_FREE)

    wakes: set[float] = set()
    view = ClusterView.of_arrays(state.idle, sizes, pair_capacity=state.pair_capacity_bytes, on_reserve=state.reserve)

    def handle(now: float, batch: list[Any]) -> None:
        arrived = False
        for ev in batch:
            if ev.kind == "free":
                machines, counts, nic, up = load.pop(ev.payload)
                state.idle[machines] += counts
                used_count[machines] -= counts
                running["used"] -= int(np.count_nonzero(used_count[machines] == 0))
                running["busy"] -= int(counts.sum())
                if nic is not None or up is not None:
                    state.add_load(nic, up, -1.0)
                r = rec[ev.payload]
                running["n"] -= 1
                running["price"] -= r["price"]
                running["dur_h"] -= (r["end"] - r["start"]) / 3600.0
                running["cross"] -= r["cross_bytes_per_sync"]
                policy.on_completion(ev.payload, now)
            elif ev.kind == "arrive":
                arrived = True
                policy.on_arrival(ev.payload, now)
            else:
                wakes.discard(now)
        np.copyto(view.free_array, state.idle)  # the view of this instant (one object, refilled)
        policy.decide(now, view)
        record(now)
        w = policy.next_wakeup(now)  # rule 4 (no slots here: a wake-up must lie ahead)
        if w is not None:
            if not w > now:
                raise RuntimeError(f"policy {name} asked to be woken at {w}, not after now ({now})")
            if w not in wakes:
                wakes.add(w)
                q.push(w, "wake", None, priority=_WAKE)
        ser["t"].append(now)
        ser["used"].append(running["used"])
        ser["busy"].append(running["busy"])
        ser["cross"].append(running["cross"])
        ser["running"].append(running["n"])
        ser["price"].append(running["price"])
        ser["dur_h"].append(running["dur_h"])
        ser["waiting"].append(getattr(policy, "waiting", 0))
        ser["arrival"].append(1.0 if arrived else 0.0)

    should_stop = None
    if time_limit is not None:
        deadline = t0 + time_limit
        should_stop = lambda: _time.perf_counter() > deadline  # noqa: E731
    drive(q, handle, should_stop=should_stop)
    extra: dict[str, Any] = {}
    if q:
        extra["timed_out"] = True
    inner = getattr(policy, "policy", policy)  # an OnlineScheduler's policy
    if isinstance(inner, TitanPolicy):
        extra["titan_bandwidth_relaxed"] = inner.relaxed
        extra["titan_bandwidth_bound"] = inner.bound
        extra["titan_multi_machine_placements"] = inner.multi
    series = {k: np.asarray(v, dtype=float) for k, v in ser.items()}
    return ReplayResult([rec[j.id] for j in jobs if j.id in rec], series, topo, config, name,
                        _time.perf_counter() - t0, extra)


def _p(x: np.ndarray, q: float) -> float:
    return float(np.percentile(x, q)) if len(x) else 0.0


def summarize(res: ReplayResult, *, until: float | None = None) -> dict[str, Any]:
    """Time-averaged metrics (module docstring) of a replay; ``until``: average only the samples
    up to that time (e.g. the last arrival of a trace window, leaving out the drain)."""
    s = res.series
    if until is not None:
        keep = s["t"] <= until
        s = {k: v[keep] for k, v in s.items()}
    G = res.topo.gpus_per_machine
    t = s["t"]
    out: dict[str, Any] = {"policy": res.policy, "jobs": len(res.jobs), "replay_wall_s": round(res.wall_time_s, 3)}
    if len(t) < 2:
        return out
    dt = np.diff(t)
    span = float(t[-1] - t[0])
    used, busy = s["used"][:-1], s["busy"][:-1]
    on = used > 0
    w_on = dt[on]

    def avg(x: np.ndarray, mask: np.ndarray | None = None) -> float:
        if mask is None:
            return float(np.sum(x * dt) / span) if span > 0 else 0.0
        return float(np.sum(x[mask] * dt[mask]) / np.sum(dt[mask])) if np.sum(dt[mask]) > 0 else 0.0

    safe_used = np.where(on, used, 1.0)
    frag = np.where(on, 1.0 - busy / (safe_used * G), 0.0)
    n = s["running"][:-1]
    mean_T = np.where(n > 0, s["dur_h"][:-1] / np.maximum(n, 1), 1.0)
    profit = np.where(on, s["price"][:-1] / (safe_used * mean_T), 0.0)
    arr = s["arrival"] > 0
    used_all = s["used"]
    n_all = s["running"]
    profit_all = np.where(used_all > 0, s["price"] / (np.where(used_all > 0, used_all, 1) *
                                                      np.where(n_all > 0, s["dur_h"] / np.maximum(n_all, 1), 1)), 0)
    qd = np.array([j["start"] - j["submit"] for j in res.jobs])
    out.update({
        "horizon_h": span / 3600.0,
        "used_machines_avg": avg(used),
        "used_machines_max": int(used_all.max()),
        "machine_hours": float(np.sum(used * dt) / 3600.0),
        "fragmentation_rate_avg": avg(frag, on),
        "occupancy_rate_avg": 1.0 - avg(frag, on) if w_on.sum() > 0 else 0.0,
        "cross_bytes_avg": avg(s["cross"][:-1]),
        "total_cross_bytes": float(sum(j["cross_bytes_per_sync"] * j["syncs"] for j in res.jobs)),
        "comm_s_total": float(sum(j["comm_s"] for j in res.jobs)),
        "profit_rate_avg": avg(profit, on),
        "profit_rate_at_arrivals": float(np.mean(profit_all[arr])) if arr.any() else 0.0,
        "queueing_delay_mean_s": float(qd.mean()) if len(qd) else 0.0,
        "queueing_delay_p95_s": _p(qd, 95),
        "queueing_delay_max_s": float(qd.max()) if len(qd) else 0.0,
        "multi_machine_jobs": int(sum(1 for j in res.jobs if j["machines"] > 1)),
        "idle_machines_opened": int(sum(j["idle_machines_used"] for j in res.jobs)),
    })
    out.update(res.extra)
    return out


# ----------------------------------------------------------------------------- workloads
def _collective(n: int) -> str:
    return "halving-doubling" if n & (n - 1) == 0 else "ring"


def _model_names() -> list[str]:
    return sorted(MODEL_BYTES)


def jobs_from_trace(records: Sequence[Mapping[str, Any]], *, seed: int = 0) -> list[ReplayJob]:
    """ReplayJobs from :mod:`optkit.traces` records: N = ``num_gpu``, a model drawn per job with
    ``numpy.random.default_rng(seed)`` (synthetic K). Ids are ``<cluster>/<job_id>``."""
    rng = np.random.default_rng(seed)
    names = _model_names()
    picks = rng.integers(len(names), size=len(records))
    out = []
    for r, k in zip(records, picks.tolist()):
        n = int(r["num_gpu"])
        model = names[k]
        cl = r.get("cluster")
        out.append(ReplayJob(f"{cl}/{r['job_id']}" if cl else str(r["job_id"]), float(r["submission_time"]),
                             float(r["duration"]), n, model, MODEL_BYTES[model], _collective(n)))
    out.sort(key=lambda j: j.submit)  # stable: file order within a submission time
    return out


_WL_FIELDS = ("problem", "kind", "name", "cluster", "iteration_s", "phase_budget_s", "jobs")
_JOB_FIELDS = ("id", "submit", "duration", "workers", "model", "param_bytes", "single_node")


def _num(v: Any, where: str, *, low: float, strict: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise InputError(where, f"must be a finite number, got {v!r}")
    if v < low or (strict and v == low):
        raise InputError(where, f"must be {'>' if strict else '>='} {low:g}, got {v!r}")
    return float(v)


def _int(v: Any, where: str, *, low: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise InputError(where, f"must be an integer >= {low}, got {v!r}")
    return v


def workload_from_dict(d: Mapping[str, Any]) -> tuple[list[ReplayJob], FatTree, ReplayConfig]:
    """A replay workload (``{"problem": "nimp", "kind": "replay", "cluster": {...}, "jobs": [...]}``,
    README) as jobs, topology and config; :class:`InputError` naming the field otherwise."""
    if d.get("problem") != "nimp":
        raise InputError("problem", f"must be 'nimp' for a nimp replay workload, got {d.get('problem')!r}")
    if d.get("kind") != "replay":
        raise InputError("kind", f"must be 'replay' (a nimp replay workload; a single-job nimp instance is for "
                                 f"`optkit solve`), got {d.get('kind')!r}")
    bad = sorted(set(d) - set(_WL_FIELDS))
    if bad:
        raise InputError(bad[0], f"is not a field of a nimp replay workload (fields: {', '.join(_WL_FIELDS)})")
    cd = d.get("cluster", {})
    if not isinstance(cd, dict):
        raise InputError("cluster", f"must be an object, got {type(cd).__name__}")
    known = ("racks", "machines_per_rack", "gpus_per_machine", "link_gbps", "oversubscription")
    bad = sorted(set(cd) - set(known))
    if bad:
        raise InputError(f"cluster.{bad[0]}", f"is not a field of the cluster (fields: {', '.join(known)})")
    dflt = FatTree()
    topo = FatTree(
        _int(cd.get("racks", dflt.racks), "cluster.racks", low=1),
        _int(cd.get("machines_per_rack", dflt.machines_per_rack), "cluster.machines_per_rack", low=1),
        _int(cd.get("gpus_per_machine", dflt.gpus_per_machine), "cluster.gpus_per_machine", low=1),
        _num(cd.get("link_gbps", dflt.link_gbps), "cluster.link_gbps", low=0, strict=True),
        _num(cd.get("oversubscription", dflt.oversubscription), "cluster.oversubscription", low=0, strict=True))
    cfg = ReplayConfig(_num(d.get("iteration_s", 1.0), "iteration_s", low=0, strict=True),
                       _num(d.get("phase_budget_s", 0.05), "phase_budget_s", low=0, strict=True))
    js = d.get("jobs")
    if not isinstance(js, list) or not js:
        raise InputError("jobs", "must be a non-empty list of {id, submit, duration, workers[, model, param_bytes, "
                                 "single_node]}")
    out, seen = [], set()
    for i, jd in enumerate(js):
        p = f"jobs[{i}]"
        if not isinstance(jd, dict):
            raise InputError(p, f"must be an object, got {type(jd).__name__}")
        bad = sorted(set(jd) - set(_JOB_FIELDS))
        if bad:
            raise InputError(f"{p}.{bad[0]}", f"is not a field of a job (fields: {', '.join(_JOB_FIELDS)})")
        for k in ("id", "submit", "duration", "workers"):
            if k not in jd:
                raise InputError(f"{p}.{k}", "is required")
        jid = jd["id"]
        if not isinstance(jid, (str, int)) or isinstance(jid, bool) or str(jid) in seen:
            raise InputError(f"{p}.id", f"must be a unique string or integer, got {jid!r}")
        seen.add(str(jid))
        submit = _num(jd["submit"], f"{p}.submit", low=0)
        dur = _num(jd["duration"], f"{p}.duration", low=0, strict=True)
        n = _int(jd["workers"], f"{p}.workers", low=1)
        if n > topo.gpus:
            raise InputError(f"{p}.workers", f"({n}) exceeds the cluster's {topo.gpus} GPUs")
        model = jd.get("model", "resnet50")
        if not isinstance(model, str) or not model:
            raise InputError(f"{p}.model", f"must be a non-empty string, got {model!r}")
        if "param_bytes" in jd:
            kb = _num(jd["param_bytes"], f"{p}.param_bytes", low=0, strict=True)
        elif model in MODEL_BYTES:
            kb = MODEL_BYTES[model]
        else:
            raise InputError(f"{p}.param_bytes", f"is required for a model not in {', '.join(_model_names())} "
                                                 f"(got model {model!r})")
        single = single_node_field(jd.get("single_node", False), f"{p}.single_node", jid, n, topo.gpus_per_machine,
                                   "machine")
        out.append(ReplayJob(str(jid), submit, dur, n, model, kb, _collective(n), single))
    out.sort(key=lambda j: j.submit)
    return out, topo, cfg


def generate_workload(seed: int = 0, *, jobs: int = 200, racks: int = 4, machines_per_rack: int = 4,
                      gpus_per_machine: int = 8, mean_interarrival_s: float = 600.0,
                      median_duration_s: float = 7200.0) -> dict[str, Any]:
    """A seeded replay workload: Poisson arrivals, workers from {1, 2, 4, 8, 16, 32} with ITP-like
    weights (most jobs 1 GPU), lognormal durations, models uniform over :data:`MODEL_BYTES`."""
    rng = np.random.default_rng(70_000 + seed)
    sizes = np.array([1, 2, 4, 8, 16, 32])
    w = np.array([0.70, 0.08, 0.08, 0.08, 0.04, 0.02])
    cap = racks * machines_per_rack * gpus_per_machine
    keep = sizes <= cap
    sizes, w = sizes[keep], w[keep] / w[keep].sum()
    t = np.cumsum(rng.exponential(mean_interarrival_s, size=jobs))
    ns = rng.choice(sizes, size=jobs, p=w)
    durs = np.maximum(60.0, np.round(rng.lognormal(math.log(median_duration_s), 1.0, size=jobs)))
    names = _model_names()
    ms = rng.integers(len(names), size=jobs)
    return {"problem": "nimp", "kind": "replay", "name": f"nimp-replay-seed{seed}",
            "cluster": {"racks": racks, "machines_per_rack": machines_per_rack, "gpus_per_machine": gpus_per_machine,
                        "link_gbps": 100.0, "oversubscription": 1.0},
            "iteration_s": 1.0, "phase_budget_s": 0.05,
            "jobs": [{"id": f"j{i}", "submit": float(round(t[i], 3)), "duration": float(durs[i]), "workers": int(ns[i]),
                      "model": names[int(ms[i])]} for i in range(jobs)]}


def load_workload(path: str | Path, *, seed: int = 0, limit: int | None = None
                  ) -> tuple[list[ReplayJob], FatTree, ReplayConfig]:
    """WORKLOAD of ``optkit simulate nimp``: a replay workload JSON, one trace CSV (ITP or Philly,
    by header), or a folder of ITP ``cluster*.csv`` files (merged on their common clock). Traces
    run on the paper's cluster (64 x 8 x 8, 100 Gbps) with :class:`ReplayConfig` defaults."""
    from optkit.instances import read_json
    from optkit.traces import load_itp, load_trace

    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob("cluster*.csv")) or sorted((p / "microsoft-itp").glob("cluster*.csv"))
        if not files:
            raise InputError(str(p), "is a folder without ITP cluster*.csv files")
        recs: list[dict[str, Any]] = []
        for f in files:
            recs += load_itp(f, limit=limit)
        recs.sort(key=lambda r: r["submission_time"])
        return jobs_from_trace(recs, seed=seed), FatTree(), ReplayConfig()
    if p.suffix.lower() == ".csv":
        return jobs_from_trace(load_trace(p, limit=limit), seed=seed), FatTree(), ReplayConfig()
    jobs, topo, cfg = workload_from_dict(read_json(p))
    return (jobs[:limit] if limit else jobs), topo, cfg


def cluster_instance(jobs: Sequence[ReplayJob], topo: FatTree, config: ReplayConfig) -> Any:
    """The replay's cluster as a nimp instance, for a plug-in online policy's ``make``: every
    machine idle (the fat tree's GPUs), P of the empty cluster (bytes per phase, a number) and the
    workload's first job (a 1-worker job if there is none)."""
    from .model import NimpInstance

    first = jobs[0] if jobs else None
    job = ({"workers": first.workers, "collective": first.collective, "param_bytes": first.param_bytes,
            **({"model": first.model} if first.model else {})} if first is not None
           else {"workers": 1, "collective": "ring", "param_bytes": 1.0})
    return NimpInstance.from_dict({
        "problem": "nimp", "machines": [{"gpus": topo.gpus_per_machine, "idle_gpus": topo.gpus_per_machine}]
        * topo.machines, "pair_capacity_bytes": float(ClusterState(topo, config).pair_capacity_bytes()), "job": job})


class _Named:
    """A plug-in's policy under the algorithm's registered name (the replay's ``policy``), with
    the count of jobs arrived and not yet started (the replay's ``waiting`` series) kept here,
    whatever the policy keeps."""

    protocol = "optkit.online"

    def __init__(self, policy: Any, name: str) -> None:
        self.policy, self.name, self.waiting = policy, name, 0
        self.on_completion, self.next_wakeup = policy.on_completion, policy.next_wakeup

    def on_arrival(self, job: OnlineJob, now: float) -> None:
        self.policy.on_arrival(job, now)
        self.waiting += 1

    def decide(self, now: float, cluster: ClusterView) -> list[Decision]:
        out = list(self.policy.decide(now, cluster) or ())
        self.waiting -= len(out)
        return out


def plugin_policy(algorithm: str, jobs: Sequence[ReplayJob], topo: FatTree, config: ReplayConfig, *,
                  seed: int | None = None, params: Mapping[str, Any] | None = None) -> OnlinePolicy[int]:
    """The replay's policy for a plug-in algorithm of nimp (checked parameters ``params``): an
    online policy plug-in (:class:`optkit.formulation.OnlinePolicyPlugin`) made by its
    ``make(instance, seed=seed, **params)`` with the replay's :func:`cluster_instance`, and
    driven by the replay itself; an :class:`optkit.formulation.Algorithm` behind
    :class:`.online.AlgorithmPolicy` (FIFO, one placement per job, validated in O(workers))."""
    from optkit import registry

    algo = registry.get("nimp").algorithms[algorithm]
    plug = getattr(algo.run, "policy_plugin", None)
    if plug is None:
        return AlgorithmPolicy(algorithm, seed=seed, params=params)
    return _Named(plug.make(cluster_instance(jobs, topo, config), seed=seed, **dict(params or {})), algorithm)


def simulate_cli(path: str, *, policy: str, seed: int | None = None, time_limit: float | None = None,
                 params: Mapping[str, Any] | None = None, out: str | None = None) -> dict[str, Any]:
    """The ``simulate`` hook of the nimp formulation: replay WORKLOAD under ``policy`` and return
    the summary; ``out`` gets the per-job schedule JSON. ``params``: ``limit`` (jobs per file)."""
    import json

    from optkit import registry

    plugins = [n for n, a in registry.get("nimp").algorithms.items() if a.plugin]
    if policy not in POLICIES and policy not in plugins:
        raise InputError("--policy", f"is unknown for the nimp replay: {policy!r} (known: "
                                     f"{', '.join([*POLICIES, *plugins])})")
    from .readings import READINGS

    params = dict(params or {})
    limit = params.pop("limit", None)
    if policy in plugins:  # a plug-in: its online policy, or AlgorithmPolicy per job; its keywords are checked
        from optkit.readings import check_params

        check_params(registry.get("nimp"), policy, params)
        kw: dict[str, Any] = {}
        make = lambda: plugin_policy(policy, jobs, topo, cfg, seed=seed, params=params)  # noqa: E731
    else:
        takes = {r.name: r for r in READINGS if r.takes(policy)}
        kw = {k: takes[k].validate(params.pop(k), where=f"--param {k}") for k in list(params) if k in takes}
        if params:
            raise InputError("--param", f"unknown for the nimp replay under {policy}: {', '.join(sorted(params))} "
                                        f"(known: limit{''.join(', ' + k for k in sorted(takes))})")
        make = lambda: POLICIES[policy](**kw)  # noqa: E731
    if limit is not None:
        limit = _int(limit, "--param limit", low=1)
    jobs, topo, cfg = load_workload(path, seed=seed or 0, limit=limit)
    res = replay(jobs, make(), topo=topo, config=cfg, time_limit=time_limit)
    summary = summarize(res)
    summary.update({"problem": "nimp", "readings": kw, "status": "time_limit" if res.extra.get("timed_out") else "feasible",
                    "workload": str(path), "cluster": topo.to_dict(),
                    "iteration_s": cfg.iteration_s, "phase_budget_s": cfg.phase_budget_s,
                    "schedule_file": out})
    if out:
        Path(out).write_text(json.dumps({"jobs": res.jobs}, indent=None) + "\n")
    return summary
