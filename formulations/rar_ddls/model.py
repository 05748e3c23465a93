"""rar-ddls: instance, schedule, the contention model of eqs. (6)-(9) and the independent ``evaluate``.

Source: Yu, Ji, Rajan, Liu, *On Scheduling Ring-All-Reduce Learning Jobs in Multi-Tenant GPU
Clusters with Communication Contention* (MobiHoc '22), Sec. 4. Servers s with O_s GPUs; jobs j,
all available at slot 0, each needing G_j GPUs (w_j = G_j ring workers) for F_j iterations;
gang scheduling without preemption or migration: job j holds y_js GPUs on server s (eq. 1-5)
from its start slot a_j through its last slot T_j.

The per-slot model, exactly as optkit evaluates it (module constants and functions below):

* eq. (6): ``p_j[t]`` = max over servers s with ``0 < y_js < G_j`` of the number of active jobs j'
  (j included) with ``0 < y_j's < G_j'``. A job is *split* when it uses more than one server
  (then ``0 < y_js < G_j`` on every server it uses); a job on one server has p = 0.
* eq. (7): ``k_j[t] = xi1 · p_j[t]``.
* Bandwidth: ``B = intra_bandwidth`` for a job on one server; otherwise
  ``B = inter_bandwidth / f(k)``, ``f(k) = k + degradation·(k - 1)``.
  **Reading (k < 1):** the paper has ``xi1 in (0, 1]``, so ``k`` can fall below 1, where
  ``f(k) < 1`` would give a split job *more* than the link's bandwidth. optkit uses
  ``k_eff = max(1, xi1·p)``: fewer than one contending job on average means the job has the link
  to itself, ``f = 1`` (the paper's own normalisation ``f(alpha, 1) = 1``).
* eq. (8): ``tau_j[t] = 2(w-1)m/w / B + (w-1)m/w / C + xi2·(servers used) + Δf·M + Δb``
  seconds (m gradient bytes, C compute speed in bytes/s, xi2 seconds per server used, a
  single-GPU job included: it uses one server).
* eq. (9): ``phi_j[t] = floor(slot_seconds / tau_j[t])`` iterations in slot t. The floor is taken
  of ``slot/tau · (1 + 1e-12)`` so that a quotient that is an integer in exact arithmetic (1/0.05)
  is not lost to rounding (:data:`FLOOR_SLACK`).
  **Reading (phi = 0):** a slot in which ``tau >= slot_seconds`` gives the job no iteration: it
  stays active, holds its GPUs and contends, and resumes when contention falls. A schedule in
  which some active jobs can never progress again (every remaining job has phi = 0 and no job
  starts later) is rejected, naming the jobs. An instance with a job that has phi = 0 even alone
  on its fastest placement is rejected when loaded.
* Completion: job j runs in slots a_j, a_j+1, ..., T_j, where T_j is the first slot by whose end
  its iterations reach F_j; it *completes* at slot T_j + 1 and its GPUs are free from slot
  T_j + 1. Makespan = max_j (T_j + 1) slots.

Units: schedule ``start`` and ``completion`` are slot indices (integers); the objectives are in
seconds (slots × ``slot_seconds``; equal to slots at the default 1 s); metrics also report slots.

Horizon: the instance's ``horizon`` T (slots) is the paper's scheduling horizon: the exact
solvers index time over [0, T) and report ``infeasible`` when no schedule completes by T; SJF-BCO
bisects its execution-time limit over [1, T]. ``evaluate`` measures a schedule that runs past T
too (heuristics' makespans are always measured) and reports ``within_horizon`` and
``past_horizon``.

Busy GPUs (optional ``busy_until``, not in the paper): GPU g of server s is busy until slot
``busy_until[s][g]`` (slot 0 = now), with work outside the instance, so no job of the instance may
hold it in a slot before that. GPUs of a server are interchangeable in eqs. (1)-(9), so the model
reads only the multiset: in slot t server s offers ``O_s - #{g : busy_until[s][g] > t}`` GPUs
(eq. 2 with a capacity that grows as GPUs are released), and that count condition is also
sufficient for a GPU-by-GPU assignment (the busy intervals all start at slot 0, so the interval
graph of busy and job intervals can be coloured with the capacity's colours, busy intervals on
their own GPUs). The work that keeps a GPU busy is outside the contention model: it adds nothing
to p_j (eq. 6) and the instance's jobs do not slow it. The makespan is still the instance's jobs'
(max_j (T_j + 1)): a GPU released after every job completed does not lengthen it. With nothing
busy every result is what it was without the field.

Simulation is event-driven (:func:`simulate`): the contention state changes only when a job
starts or completes, so between two such events every active job's phi is constant and the next
completion is computed in closed form; no loop over slots.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from optkit.errors import InputError
from optkit.formulation import Evaluation
from optkit.validation import MAX_COUNT, check_typed, instance_object, integer, known_keys, mapping, number, trusted

__all__ = [
    "PROBLEM", "OBJECTIVES", "FLOOR_SLACK", "MAX_BUSY_SLOT", "Network", "Job", "RarInstance", "iteration_time",
    "iterations_per_slot", "rate_table", "cluster_fields", "solo_slots", "min_servers", "fastest_servers", "SimOutcome", "simulate", "evaluate",
    "schedule_dict",
]

PROBLEM = "rar-ddls"
OBJECTIVES = ("makespan", "total_completion")
FLOOR_SLACK = 1e-12  # relative slack of the floor in eq. (9)
MAX_BUSY_SLOT = 10 ** 12  # largest busy_until slot: far past any horizon, int64 arithmetic stays exact
MAX_PER_SLOT = 2.0 ** 50  # most iterations per slot (eq. 9) counted exactly in floats; beyond: bad input
_NETWORK_FIELDS = ("inter_bandwidth", "intra_bandwidth", "compute_speed", "xi1", "xi2", "degradation")
_JOB_FIELDS = ("id", "gpus", "iterations", "grad_bytes", "batch", "fwd_time_per_sample", "bwd_time")


@dataclass(frozen=True)
class Network:
    """b^e and b^i (bytes/s), C (bytes/s), xi1 (eq. 7), xi2 (s per server used), alpha of f."""

    inter_bandwidth: float
    intra_bandwidth: float
    compute_speed: float
    xi1: float
    xi2: float
    degradation: float

    def __post_init__(self) -> None:
        check_typed(lambda: Network.from_dict(self.to_dict()), PROBLEM)

    @classmethod
    def from_dict(cls, d: Any, path: str = "network") -> "Network":
        d = mapping(d, path)
        known_keys(d, _NETWORK_FIELDS, path, "the network")
        v = {k: number(d, k, path, positive=k in ("inter_bandwidth", "intra_bandwidth", "compute_speed", "xi1"))
             for k in _NETWORK_FIELDS}
        if v["xi1"] > 1:
            raise InputError(f"{path}.xi1", f"must be in (0, 1] (eq. 7), got {v['xi1']!r}")
        with trusted():
            return cls(**v)

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in _NETWORK_FIELDS}


@dataclass(frozen=True)
class Job:
    """G_j GPUs, F_j iterations, m_j gradient bytes, M_j mini-batch, Δf_j s/sample, Δb_j s."""

    id: str
    gpus: int
    iterations: int
    grad_bytes: float
    batch: int
    fwd_time_per_sample: float
    bwd_time: float

    def __post_init__(self) -> None:
        check_typed(lambda: Job.from_dict(self.to_dict()), PROBLEM)

    @classmethod
    def from_dict(cls, jd: Any, path: str = "job") -> "Job":
        """One job's own fields (the instance checks what depends on the cluster and the ids)."""
        jd = mapping(jd, path)
        known_keys(jd, _JOB_FIELDS, path, "a job")
        jid = jd.get("id")
        if not isinstance(jid, str) or not jid:
            raise InputError(f"{path}.id", f"must be a non-empty string, got {jid!r}")
        for k in ("gpus", "iterations", "batch"):
            if k not in jd:
                raise InputError(f"{path}.{k}", "is required")
        gpus = integer(jd["gpus"], f"{path}.gpus", low=1)
        with trusted():
            return cls(jid, gpus, integer(jd["iterations"], f"{path}.iterations", low=1),
                       number(jd, "grad_bytes", path), integer(jd["batch"], f"{path}.batch", low=1),
                       number(jd, "fwd_time_per_sample", path), number(jd, "bwd_time", path))

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in _JOB_FIELDS}


def iteration_time(job: Job, net: Network, servers_used: int, contenders: int) -> float:
    """tau_j (eq. 8), seconds, for ``job`` on ``servers_used`` servers with p_j = ``contenders``
    (eq. 6; ignored on one server). ``k = max(1, xi1·p)`` (module docstring, reading k < 1)."""
    w = job.gpus
    share = job.grad_bytes * (w - 1) / w
    if servers_used <= 1:
        bandwidth = net.intra_bandwidth
    else:
        k = max(1.0, net.xi1 * contenders)
        bandwidth = net.inter_bandwidth / (k + net.degradation * (k - 1.0))
    return (2.0 * share / bandwidth + share / net.compute_speed + net.xi2 * servers_used
            + job.fwd_time_per_sample * job.batch + job.bwd_time)


def iterations_per_slot(tau: float, slot_seconds: float) -> int:
    """phi (eq. 9): ``floor(slot / tau)``, with :data:`FLOOR_SLACK` against rounding."""
    return int(math.floor(slot_seconds / tau * (1.0 + FLOOR_SLACK)))


def _busy_rows(value: Any, servers: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """``busy_until`` checked (field ``busy_until[s][g]``) and in its normal form: per server the
    slots of its GPUs 0, 1, ... with trailing zeros dropped, ``()`` when no GPU is busy."""
    if not isinstance(value, (list, tuple)) or len(value) != len(servers):
        got = f"{len(value)} entries" if isinstance(value, (list, tuple)) else type(value).__name__
        raise InputError("busy_until", f"must be a list with one list per server ({len(servers)}): the slot "
                         f"until which each of the server's GPUs is busy, got {got}")
    rows = []
    for s, (row, cap) in enumerate(zip(value, servers)):
        if not isinstance(row, (list, tuple)):
            raise InputError(f"busy_until[{s}]", f"must be a list of slots (one per GPU of server {s}), "
                             f"got {type(row).__name__}")
        if len(row) > cap:
            raise InputError(f"busy_until[{s}]", f"lists {len(row)} GPUs, server {s} has O_s = {cap} "
                             f"(GPUs 0..{cap - 1})")
        slots = [integer(v, f"busy_until[{s}][{g}]", low=0, high=MAX_BUSY_SLOT) for g, v in enumerate(row)]
        while slots and slots[-1] == 0:
            slots.pop()
        rows.append(tuple(slots))
    return tuple(rows) if any(rows) else ()


def cluster_fields(d: Mapping[str, Any]) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """An instance object's ``servers`` and ``busy_until`` (normal form), checked as
    :meth:`RarInstance.from_dict` checks them."""
    srv = d["servers"]
    if not isinstance(srv, list) or not srv:
        raise InputError("servers", "must be a non-empty list of GPU counts O_s")
    if len(srv) > MAX_COUNT:
        raise InputError("servers", f"lists {len(srv)} servers; at most {MAX_COUNT} are supported")
    servers = tuple(integer(o, f"servers[{s}]", low=1, high=MAX_COUNT) for s, o in enumerate(srv))
    return servers, (_busy_rows(d["busy_until"], servers) if "busy_until" in d else ())


@dataclass(frozen=True)
class RarInstance:
    """Servers' GPU counts O_s, the network, the slot length (s), the horizon T (slots), jobs,
    and optionally ``busy_until``: per server, the slot until which each of its GPUs is busy
    (GPU g of server s in ``busy_until[s][g]``; a shorter list leaves the rest free; ``()``, the
    default, leaves every GPU free; module docstring)."""

    servers: tuple[int, ...]
    network: Network
    slot_seconds: float
    horizon: int
    jobs: tuple[Job, ...]
    busy_until: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        """A typed instance gets the file path's checks (duplicate ids, a job larger than the
        cluster, an iteration longer than a slot, ...) and messages; ``busy_until`` is kept in
        its normal form (trailing free GPUs dropped, ``()`` when none is busy)."""
        check_typed(lambda: RarInstance.from_dict(self.to_dict()), PROBLEM)
        if self.busy_until:
            object.__setattr__(self, "busy_until", _busy_rows(self.busy_until, self.servers))

    @property
    def total_gpus(self) -> int:
        return sum(self.servers)

    def busy_slots(self, server: int) -> tuple[int, ...]:
        """The busy-until slot of every GPU of ``server`` (0 = free now), GPU order."""
        row = self.busy_until[server] if self.busy_until else ()
        return tuple(row) + (0,) * (self.servers[server] - len(row))

    def free_gpus_at(self, server: int, slot: int) -> int:
        """GPUs of ``server`` not busy in ``slot``: ``O_s - #{g : busy_until[s][g] > slot}``."""
        return self.servers[server] - sum(1 for r in self.busy_slots(server) if r > slot)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "RarInstance":
        d = instance_object(d, PROBLEM, ("servers", "network", "jobs"))
        known_keys(d, ("problem", "servers", "network", "jobs", "slot_seconds", "horizon", "busy_until"))
        servers, busy = cluster_fields(d)
        net = Network.from_dict(d["network"])
        slot = number(d, "slot_seconds", "instance", positive=True) if "slot_seconds" in d else 1.0
        horizon = integer(d["horizon"], "horizon", low=1) if "horizon" in d else 1200
        if not isinstance(d["jobs"], list) or not d["jobs"]:
            raise InputError("jobs", "must be a non-empty list")
        jobs: list[Job] = []
        ids: set[str] = set()
        for n, jd in enumerate(d["jobs"]):
            p = f"jobs[{n}]"
            job = Job.from_dict(jd, p)
            jid, gpus = job.id, job.gpus
            if jid in ids:
                raise InputError(f"{p}.id", f"duplicate job id {jid!r}")
            ids.add(jid)
            if gpus > sum(servers):
                raise InputError(f"{p}.gpus", f"job {jid} asks for {gpus} GPUs but the cluster has {sum(servers)}")
            n_best = fastest_servers(servers, gpus, job, net)
            tau = iteration_time(job, net, n_best, 1)
            if not math.isfinite(tau) or not slot / tau <= MAX_PER_SLOT:
                raise InputError(f"{p}", f"job {jid}: slot_seconds {slot:g} / iteration time {tau:.6g} s is beyond "
                                 f"{MAX_PER_SLOT:g} iterations per slot (eq. 9): the numbers overflow; scale the units")
            if iterations_per_slot(tau, slot) < 1:
                raise InputError(f"{p}", f"job {jid} never completes: even alone on {n_best} server(s) an iteration "
                                 f"takes {tau:.6g} s >= slot_seconds {slot:g} (eq. 9 gives 0 iterations per slot)")
            jobs.append(job)
        with trusted():
            return cls(servers, net, slot, horizon, tuple(jobs), busy)

    def to_dict(self) -> dict[str, Any]:
        """The instance file's object; ``busy_until`` only when some GPU is busy (so an instance
        without busy GPUs has the file, and the content hash, it had before the field existed)."""
        d = {"problem": PROBLEM, "servers": list(self.servers), "network": self.network.to_dict(),
             "slot_seconds": self.slot_seconds, "horizon": self.horizon, "jobs": [j.to_dict() for j in self.jobs]}
        busy = self.busy_until
        if busy:  # a typed value not yet checked goes to from_dict as it is, to get the file's message
            d["busy_until"] = ([list(r) if isinstance(r, (list, tuple)) else r for r in busy]
                               if isinstance(busy, (list, tuple)) else busy)
        return d


def min_servers(servers: Sequence[int], gpus: int) -> int:
    """The fewest servers that can hold ``gpus`` GPUs on an empty cluster (largest first)."""
    total, n = 0, 0
    for o in sorted(servers, reverse=True):
        total += o
        n += 1
        if total >= gpus:
            return n
    raise ValueError(f"{gpus} GPUs do not fit on servers {list(servers)}")


def fastest_servers(servers: Sequence[int], gpus: int, job: Job | None = None, net: Network | None = None) -> int:
    """The number of servers on which a job of ``gpus`` GPUs is fastest when alone (p = 1).

    The feasible counts are :func:`min_servers` .. min(G_j, servers). Without ``job`` and ``net``
    this is the fewest servers, which is the fastest whenever ``intra_bandwidth >=
    inter_bandwidth`` (the paper's b^i >> b^e): tau (eq. 8) then only grows with the servers
    used (each adds xi2, and a split pays the inter-server link). With them, the count with the
    least tau is returned (fewest on ties), which also covers a slow intra-server link."""
    lo = min_servers(servers, gpus)
    if job is None or net is None:
        return lo
    hi = min(gpus, len(servers))
    return min(range(lo, hi + 1), key=lambda n: (iteration_time(job, net, n, 1), n))


def rate_table(instance: RarInstance, job: Job, servers_used: int) -> np.ndarray:
    """phi of ``job`` on ``servers_used`` servers for p = 0..len(jobs) (index = p), eqs. (7)-(9)
    vectorised over p; the same numbers as :func:`iteration_time` and
    :func:`iterations_per_slot`. On one server every entry is the same (no contention)."""
    net, n = instance.network, len(instance.jobs)
    if servers_used <= 1:
        tau = np.full(n + 1, iteration_time(job, net, servers_used, 0))
    else:
        w = job.gpus
        share = job.grad_bytes * (w - 1) / w
        k = np.maximum(1.0, net.xi1 * np.arange(n + 1, dtype=float))
        bandwidth = net.inter_bandwidth / (k + net.degradation * (k - 1.0))
        tau = (2.0 * share / bandwidth + share / net.compute_speed + net.xi2 * servers_used
               + job.fwd_time_per_sample * job.batch + job.bwd_time)
    return np.floor(instance.slot_seconds / tau * (1.0 + FLOOR_SLACK)).astype(np.int64)


def solo_slots(instance: RarInstance, job: Job, servers_used: int) -> int:
    """Slots ``job`` takes on ``servers_used`` servers with no other job contending (p = 1 if
    split, eq. 6 counts the job itself): ``ceil(F_j / phi)``. Exact when the job runs alone;
    contention only lengthens it (phi is nonincreasing in p). The estimate rho-hat of SJF-BCO and
    the lower bounds build on it. ``0`` iterations per slot gives a ``ValueError``."""
    phi = iterations_per_slot(iteration_time(job, instance.network, servers_used, 1), instance.slot_seconds)
    if phi < 1:
        raise ValueError(f"job {job.id} makes no progress on {servers_used} servers even alone")
    return -(-job.iterations // phi)


@dataclass
class SimOutcome:
    """Start slot a_j and completion slot T_j + 1 per job (instance order), or why it failed.

    ``max_contention`` is the largest p_j[t] seen per job; ``stuck`` lists jobs that can never
    finish (phi = 0 for good, or predecessors that never complete); their completion is -1, and
    so is the start of a job that never started."""

    start: np.ndarray
    completion: np.ndarray
    max_contention: np.ndarray
    stuck: list[str]


def simulate(instance: RarInstance, y: np.ndarray, *, starts: Sequence[int] | None = None,
             predecessors: Sequence[Sequence[int]] | None = None, release: Sequence[int] | None = None,
             rate_cache: dict[tuple[int, int], np.ndarray] | None = None) -> SimOutcome:
    """Run the contention model of eqs. (6)-(9) over placements ``y`` (jobs × servers).

    Exactly one of ``starts`` (a start slot per job) and ``predecessors`` (per job, the jobs that
    must have completed before it starts; it then starts at the first slot, not before its
    ``release`` slot (default 0), at which they all have) is given. The second turns a plan (an
    order of jobs on each GPU) into a schedule under gang scheduling; the predecessor relation
    must be acyclic. ``release`` (with ``predecessors`` only) is the slot at which the job's
    GPUs that are busy outside the instance (``busy_until``) are all free.

    ``rate_cache`` (optional, reused across calls on the same instance) keeps
    :func:`rate_table` per (job index, servers used).

    Event-driven: at each event slot t the active set is fixed, p_j (eq. 6) and phi_j are
    recomputed for every active job, and the next event is the earliest of the next start and
    the next completion ``t + ceil(remaining_j / phi_j)``. Capacity is *not* checked here
    (:func:`evaluate` does).
    """
    if (starts is None) == (predecessors is None):
        raise InputError("starts", "give exactly one of starts and predecessors", problem=PROBLEM)
    if release is not None and starts is not None:
        raise InputError("release", "goes with predecessors (given starts are the schedule)", problem=PROBLEM)
    n = len(instance.jobs)
    try:
        y = np.asarray(y, dtype=np.int64)
    except (TypeError, ValueError):
        raise InputError("y", f"must be a jobs x servers array of GPU counts, got {type(y).__name__}",
                         problem=PROBLEM) from None
    if y.shape != (n, len(instance.servers)):
        raise InputError("y", f"must be a jobs x servers array ({n} x {len(instance.servers)}), got shape "
                              f"{y.shape}", problem=PROBLEM)
    for name, seq in (("starts", starts), ("predecessors", predecessors), ("release", release)):
        if seq is not None and len(seq) != n:
            raise InputError(name, f"must give one entry per job ({n}), got {len(seq)}", problem=PROBLEM)
    # The event loop runs on Python integers: a handful of jobs per call, where numpy's per-call
    # cost outweighs its arithmetic; the numbers are those of eqs. (6)-(9) all the same.
    nsrv = (y > 0).sum(axis=1).tolist()
    cache: dict[tuple[int, int], np.ndarray] = {} if rate_cache is None else rate_cache
    rates: list[list[int]] = []
    for j, job in enumerate(instance.jobs):
        key = (j, nsrv[j])
        if key not in cache:
            cache[key] = rate_table(instance, job, nsrv[j])
        rates.append(cache[key].tolist())
    # the servers of each split job (eq. 6 counts split jobs only)
    own = [[s for s, v in enumerate(row) if v > 0] if nsrv[j] > 1 else [] for j, row in enumerate(y.tolist())]
    S = len(instance.servers)
    need = [job.iterations for job in instance.jobs]
    done = [0] * n
    start = [-1] * n
    completion = [-1] * n
    max_p = [0] * n
    active = [False] * n
    never = np.iinfo(np.int64).max  # a job making no progress: no completion ahead
    if starts is not None:
        fixed = np.asarray(starts, dtype=np.int64).tolist()
        pending = sorted(range(n), key=lambda j: fixed[j])
        waiting: list[int] = []
        blockers = None
    else:
        fixed = None
        pending = []
        blockers = [set(p) for p in predecessors]  # type: ignore[union-attr]
        waiting = list(range(n))
        rel = [0] * n if release is None else np.asarray(release, dtype=np.int64).tolist()
    t = 0
    pi = 0
    finished = 0
    while finished < n:
        # Starts at slot t.
        if fixed is not None:
            while pi < n and fixed[pending[pi]] <= t:
                j = pending[pi]
                start[j] = fixed[j]
                active[j] = True
                pi += 1
        else:
            still = []
            for j in waiting:
                if not blockers[j] and rel[j] <= t:  # type: ignore[index]
                    start[j] = t
                    active[j] = True
                else:
                    still.append(j)
            waiting = still
        # the releases still ahead of jobs whose predecessors are done (none without ``release``)
        ready = [rel[j] for j in waiting if not blockers[j]] if release is not None else []  # type: ignore[index]
        act = [j for j in range(n) if active[j]]
        if not act:
            if fixed is not None and pi < n:
                t = fixed[pending[pi]]
                continue
            if ready:
                t = min(ready)
                continue
            break  # nothing active and nothing can start: blocked predecessors (a cycle)
        # eq. (6): split jobs per server among the active ones, then the max over own servers.
        per_server = [0] * S
        for j in act:
            for s in own[j]:
                per_server[s] += 1
        phi = []
        next_done = never
        for j in act:
            p = max([per_server[s] for s in own[j]], default=0)
            if p > max_p[j]:
                max_p[j] = p
            f = rates[j][p]
            phi.append(f)
            if f > 0:
                next_done = min(next_done, -(-(need[j] - done[j]) // f))
        next_start = fixed[pending[pi]] - t if fixed is not None and pi < n else None
        if ready:
            next_start = min(ready) - t
        if next_done == never and next_start is None:
            stuck = [instance.jobs[j].id for j in act]
            return SimOutcome(np.array(start, dtype=np.int64), np.array(completion, dtype=np.int64),
                              np.array(max_p, dtype=np.int64), stuck)
        step = next_done if next_start is None else min(next_done, next_start)
        t += step
        ended = []
        for j, f in zip(act, phi):
            done[j] += f * step
            if done[j] >= need[j]:
                ended.append(j)
        if ended:
            for j in ended:
                completion[j] = t
                active[j] = False
            finished += len(ended)
            if blockers is not None:
                gone = set(ended)
                for j in waiting:
                    blockers[j] -= gone
    stuck = [instance.jobs[j].id for j in range(n) if completion[j] < 0]
    return SimOutcome(np.array(start, dtype=np.int64), np.array(completion, dtype=np.int64),
                      np.array(max_p, dtype=np.int64), stuck)


def schedule_dict(instance: RarInstance, y: np.ndarray, outcome: SimOutcome) -> dict[str, Any]:
    """The solution object: per job its start, y_js per server and completion (slots)."""
    return {"jobs": [{"id": job.id, "start": int(outcome.start[j]),
                      "gpus_per_server": [int(v) for v in y[j]], "completion": int(outcome.completion[j])}
                     for j, job in enumerate(instance.jobs)]}


def evaluate(instance: RarInstance, solution: Mapping[str, Any]) -> Evaluation:
    """Check a schedule and measure it from starts and placements alone.

    Checks: every job scheduled exactly once; ``start`` a slot index >= 0; ``gpus_per_server``
    one nonnegative integer per server summing to G_j (eq. 1, gang size); the contention model
    re-simulated (:func:`simulate`) to recompute every completion (a ``completion`` the schedule
    states must agree); no job stuck for good (phi = 0); server capacity O_s in every slot
    (eq. 2), a job holding its GPUs in slots a_j..T_j and a GPU busy until slot r
    (``busy_until``) counted as held in slots 0..r-1 (a job that uses it earlier is named by
    the server, the slot and the busy GPUs). Objectives: ``makespan`` = max_j (T_j + 1)
    and ``total_completion`` = sum_j (T_j + 1), in seconds. Metrics: the same in slots, mean job
    completion time, ``within_horizon`` and its negation ``past_horizon`` (the makespan
    exceeds the instance's horizon T), split jobs and the largest contention p seen.
    """
    if not isinstance(solution, Mapping) or not isinstance(solution.get("jobs"), list):
        return Evaluation(False, violations=["solution must be an object with a 'jobs' list"])
    S = len(instance.servers)
    index = {job.id: j for j, job in enumerate(instance.jobs)}
    n = len(instance.jobs)
    y = np.zeros((n, S), dtype=np.int64)
    starts = np.zeros(n, dtype=np.int64)
    claimed: dict[int, Any] = {}
    seen: set[int] = set()
    violations: list[str] = []
    for idx, entry in enumerate(solution["jobs"]):
        if not isinstance(entry, Mapping) or entry.get("id") not in index:
            violations.append(f"jobs[{idx}] must be an object whose 'id' is a job of the instance")
            continue
        j = index[entry["id"]]
        jid = entry["id"]
        if j in seen:
            violations.append(f"job {jid} is scheduled twice")
            continue
        seen.add(j)
        a = entry.get("start")
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or a < 0:
            violations.append(f"job {jid}: start must be a slot index >= 0, got {a!r}")
            continue
        row = entry.get("gpus_per_server")
        if (not isinstance(row, list) or len(row) != S
                or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0 for v in row)):
            violations.append(f"job {jid}: gpus_per_server must list {S} nonnegative integers (one per server)")
            continue
        if sum(row) != instance.jobs[j].gpus:
            violations.append(f"job {jid}: gpus_per_server sums to {sum(row)}, the job needs G_j = {instance.jobs[j].gpus} (eq. 1)")
            continue
        y[j] = row
        starts[j] = int(a)
        if entry.get("completion") is not None:
            claimed[j] = entry["completion"]
    missing = [instance.jobs[j].id for j in range(n) if j not in seen]
    if missing:
        violations.append(f"{len(missing)} jobs are not scheduled: {', '.join(missing[:5])}")
    if violations:
        return Evaluation(False, violations=violations)
    out = simulate(instance, y, starts=starts)
    if out.stuck:
        return Evaluation(False, violations=[f"jobs {', '.join(out.stuck[:5])} never complete: phi = 0 (eq. 9) "
                                             "under the contention they meet, and nothing else changes"])
    for j, c in claimed.items():
        if c != out.completion[j]:
            violations.append(f"job {instance.jobs[j].id}: completion {c!r} disagrees with slot "
                              f"{int(out.completion[j])} recomputed by the contention model")
    # eq. (2): capacity in every slot. Sweep the starts (+y_j) and frees (-y_j) in time order,
    # frees first at equal slots; a server's prefix sums peak at the ends of start groups.
    # A GPU busy until slot r (busy_until) is held from slot 0 to r like a job's.
    cap = np.array(instance.servers, dtype=np.int64)
    b_srv = [s for s in range(S) for r in instance.busy_slots(s) if r > 0] if instance.busy_until else []
    b_end = [r for s in range(S) for r in instance.busy_slots(s) if r > 0] if instance.busy_until else []
    yb = np.zeros((len(b_srv), S), dtype=np.int64)
    yb[np.arange(len(b_srv)), b_srv] = 1
    ends = np.concatenate([out.completion, np.asarray(b_end, dtype=np.int64)])
    begins = np.concatenate([out.start, np.zeros(len(b_srv), dtype=np.int64)])
    held = np.concatenate([y, yb])
    times = np.concatenate([ends, begins])
    kind = np.concatenate([np.zeros(len(ends), dtype=np.int64), np.ones(len(ends), dtype=np.int64)])  # 0 free, 1 start
    order = np.lexsort((kind, times))
    load = np.cumsum(np.concatenate([-held, held])[order], axis=0)
    over = np.argwhere(load > cap[None, :])
    if len(over):
        row, s = (int(v) for v in over[0])
        t = int(times[order[row]])
        busy_now = sum(1 for r in instance.busy_slots(s) if r > t) if instance.busy_until else 0
        if busy_now:
            jobs_now = int(y[(out.start <= t) & (out.completion > t), s].sum())
            violations.append(f"server {s} holds {jobs_now} GPUs in slot {t} while {busy_now} "
                              f"of its GPUs are busy until a later slot (busy_until[{s}]): "
                              f"{int(cap[s]) - busy_now} are free (capacity O_s = {int(cap[s])})")
        else:
            violations.append(f"server {s} holds {int(load[row, s])} GPUs in slot {t} "
                              f"(capacity O_s = {int(cap[s])})")
    if violations:
        return Evaluation(False, violations=violations)
    slot = instance.slot_seconds
    c = out.completion.astype(float)
    mk = int(out.completion.max())
    objectives = {"makespan": mk * slot, "total_completion": float(c.sum()) * slot}
    metrics = {
        "jobs": n,
        "makespan_slots": mk,
        "mean_jct_s": float(c.mean()) * slot,
        "within_horizon": bool(mk <= instance.horizon),
        "past_horizon": bool(mk > instance.horizon),
        "horizon_slots": instance.horizon,
        "split_jobs": int(((y > 0).sum(axis=1) > 1).sum()),
        "max_contention": int(out.max_contention.max()),
    }
    return Evaluation(True, objectives=objectives, metrics=metrics)
