"""The replay's cluster as a policy sees it through its view: idle GPUs per machine, residual NIC
and uplink bandwidth, the pair capacity P, and the traffic of a placement (nimp, :mod:`.replay`,
whose docstring states the model: "Traffic already placed, residual bandwidth and the pair capacity
P", "Communication time and duration").

:class:`ClusterState` is the state behind the :class:`~optkit.online.ClusterView` the replay builds:
its P is :meth:`ClusterState.pair_capacity_bytes`, and reserving a start in the view
(:meth:`ClusterState.reserve`, the ``on_reserve`` hook of rule 6) computes the job's traffic and
communication time on the bandwidth left at that moment and adds its load, so that the next
placement of the same instant sees the GPUs and the bandwidth the previous one took. The driver
(:func:`.replay.replay`) takes the starts reserved after ``decide`` returns and records them then
(start, completion event, metrics): the policy reserves in the view and never calls into the
driver, so the replay runs one way, driver -> policy -> placement (issue 36,
``benchmarks/flow_trace.py``).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Sequence

import numpy as np

from optkit.online import Decision

from .model import halving_doubling_phases, ring_phases
from .online import placement_of

__all__ = ["RESIDUAL_FLOOR", "ClusterState", "Start", "traffic"]

RESIDUAL_FLOOR = 0.01
"""The share of a link's bandwidth a saturated link keeps (:mod:`.replay`'s docstring)."""


class Start(NamedTuple):
    """A start reserved in the view (:meth:`ClusterState.reserve`): the job, the machine of each
    worker, the machines and the workers on each, the cross-machine bytes and the communication
    seconds per synchronisation, the synchronisations, the duration (s, communication included),
    the NIC and uplink rates it added (bytes/s; None: none) and the idle machines it opened."""

    job: Any
    machine_of_worker: list[int]
    machines: np.ndarray
    counts: np.ndarray
    cross: float
    comm: float
    syncs: int
    duration: float
    nic_rate: np.ndarray | None
    up_rate: np.ndarray | None
    idle_opened: int


class _Pattern:
    """A collective's distinct phases as pair arrays with multiplicity, cached per (N, coll, K)."""

    __slots__ = ("phases", "distinct")

    def __init__(self, workers: int, collective: str, param_bytes: float) -> None:
        fn = halving_doubling_phases if collective == "halving-doubling" else ring_phases
        self.phases = fn(workers, param_bytes)
        d: dict[tuple[tuple[tuple[int, int], ...], float], int] = {}
        for ph in self.phases:
            if ph.pairs:
                d[(ph.pairs, ph.volume)] = d.get((ph.pairs, ph.volume), 0) + 1
        self.distinct = [(np.asarray(p, dtype=np.int64), v, k) for (p, v), k in d.items()]


_PATTERNS: dict[tuple[int, str, float], _Pattern] = {}


def _pattern(job: Any) -> _Pattern:
    key = (job.workers, job.collective, job.param_bytes)
    p = _PATTERNS.get(key)
    if p is None:
        p = _PATTERNS[key] = _Pattern(*key)
    return p


class ClusterState:
    """The idle GPUs per machine and the residual NIC / uplink bandwidth of the replay's cluster
    (:mod:`.replay`'s docstring), for the ``jobs`` of a replay; policies see them through the
    :class:`~optkit.online.ClusterView` the replay builds (P: :meth:`pair_capacity_bytes`; a
    reservation: :meth:`reserve`), and the driver takes the starts reserved after each ``decide``
    (:meth:`take_started`)."""

    def __init__(self, topo: Any, config: Any, jobs: Sequence[Any] = (), *, policy: str = "policy") -> None:
        self.topo = topo
        self.config = config
        M = topo.machines
        self.gpus = [topo.gpus_per_machine] * M
        self.idle = np.full(M, topo.gpus_per_machine, dtype=np.int64)
        self.rack = topo.rack_of()
        self.nic_load = np.zeros(M)          # bytes/s of running jobs through each NIC
        self.up_load = np.zeros(topo.racks)  # bytes/s through each rack uplink
        self._mat: np.ndarray | None = None  # P (bytes per phase) while traffic is placed
        self._dirty: set[int] = set()  # machines whose row of P is stale
        self.by_id = {j.id: j for j in jobs}  # the jobs :meth:`reserve` may start
        self.policy = policy                  # the policy's name, in the errors of :meth:`reserve`
        self.started: list[Start] = []        # the starts reserved and not yet taken (:meth:`take_started`)
        self._taken_ids: set[str] = set()

    @property
    def idle_total(self) -> int:
        return int(self.idle.sum())

    def nic_residual(self) -> np.ndarray:
        B = self.topo.nic_Bps
        return np.maximum(B - self.nic_load, RESIDUAL_FLOOR * B)

    def uplink_residual(self) -> np.ndarray:
        U = self.topo.uplink_Bps
        return np.maximum(U - self.up_load, RESIDUAL_FLOOR * U)

    def _rows(self, idx: np.ndarray) -> np.ndarray:
        """Rows ``idx`` of the pair bandwidth matrix (bytes/s), diagonal included."""
        b = self.nic_residual()
        ub = self.uplink_residual()[self.rack]
        bw = np.minimum(b[idx][:, None], b[None, :])
        cross = self.rack[idx][:, None] != self.rack[None, :]
        return np.where(cross, np.minimum(bw, np.minimum(ub[idx][:, None], ub[None, :])), bw)

    def pair_capacity_bytes(self) -> float | np.ndarray:
        """P (bytes per phase): a scalar while no traffic is placed, else the M x M matrix, kept
        up to date row by row (only the machines whose NIC or rack uplink load changed)."""
        tau = self.config.phase_budget_s
        if not self.nic_load.any() and not self.up_load.any():
            self._mat = None
            self._dirty.clear()
            return min(self.topo.nic_Bps, self.topo.uplink_Bps) * tau
        if self._mat is None:
            self._mat = self._rows(np.arange(self.topo.machines)) * tau
            self._dirty.clear()
        elif self._dirty:
            idx = np.fromiter(self._dirty, dtype=np.int64)
            rows = self._rows(idx) * tau
            self._mat[idx, :] = rows
            self._mat[:, idx] = rows.T
            self._dirty.clear()
        return self._mat

    def add_load(self, nic: np.ndarray | None, up: np.ndarray | None, sign: float) -> None:
        if nic is not None:
            self.nic_load += sign * nic
            np.maximum(self.nic_load, 0.0, out=self.nic_load)
            self._dirty.update(np.flatnonzero(nic).tolist())
        if up is not None:
            self.up_load += sign * up
            np.maximum(self.up_load, 0.0, out=self.up_load)
            for r in np.flatnonzero(up).tolist():
                self._dirty.update(range(r * self.topo.machines_per_rack, (r + 1) * self.topo.machines_per_rack))

    def reserve(self, d: Decision) -> None:
        """The view's ``on_reserve`` hook (rule 6 of :mod:`optkit.online`): start job ``d.job_id``
        on the machines ``d`` names, now: check it (a job of the replay, not started, its workers on
        idle GPUs, a single-node job on one machine: a ``RuntimeError`` naming the policy), compute
        its traffic and communication time per synchronisation on the residual bandwidth of this
        moment (:mod:`.replay`'s docstring), take its GPUs and add its load, so that the next
        placement of the same instant sees both; then keep the start for the driver."""
        name = self.policy
        job = self.by_id.get(d.job_id)
        if job is None or job.id in self._taken_ids:
            raise RuntimeError(f"policy {name} started unknown or already started job {d.job_id!r}")
        topo = self.topo
        M, R, G = topo.machines, topo.racks, topo.gpus_per_machine
        mw = placement_of(d, job.workers, M, policy=name)  # one machine of the view per worker, O(workers)
        first = mw[0]
        if job.single_node and any(s != first for s in mw):
            raise RuntimeError(f"policy {name} split single-node job {job.id} over machines {sorted(set(mw))}")
        if all(s == first for s in mw):  # one machine: no traffic
            machines = np.array([first], dtype=np.int64)
            counts = np.array([len(mw)], dtype=np.int64)
            cross, per_phase = 0.0, []  # type: tuple[float, list[tuple[np.ndarray, np.ndarray | None, int]]]
        else:
            m = np.asarray(mw, dtype=np.int64)
            machines, counts = np.unique(m, return_counts=True)
            cross, per_phase = traffic(job, m, self.rack, M, R)
        if np.any(counts > self.idle[machines]):
            raise RuntimeError(f"policy {name} over-committed a machine (job {job.id})")
        comm = 0.0
        nic_rate = up_rate = None
        if per_phase:
            nic_bytes = np.zeros(M)
            up_bytes = np.zeros(R)
            b, u = self.nic_residual(), self.uplink_residual()
            for nic, up, k in per_phase:
                tt = float(np.max(nic / b))
                if up is not None:
                    tt = max(tt, float(np.max(up / u)))
                    up_bytes += k * up
                comm += k * tt
                nic_bytes += k * nic
            period = self.config.iteration_s + comm
            nic_rate = nic_bytes / period
            up_rate = up_bytes / period if up_bytes.any() else None
        syncs = math.ceil(job.duration / self.config.iteration_s)
        idle_opened = int(np.count_nonzero(self.idle[machines] == G))
        self.idle[machines] -= counts
        if per_phase:
            self.add_load(nic_rate, up_rate, +1.0)
        self._taken_ids.add(job.id)
        self.started.append(Start(job, mw, machines, counts, cross, comm, syncs, job.duration + syncs * comm,
                                  nic_rate, up_rate, idle_opened))

    def take_started(self) -> list[Start]:
        """The starts reserved since the last call, in reservation order (the driver's, after ``decide``)."""
        out, self.started = self.started, []
        return out


# ----------------------------------------------------------------------------- traffic of a placement
def traffic(job: Any, m: np.ndarray, rack: np.ndarray, M: int, R: int
            ) -> tuple[float, list[tuple[np.ndarray, np.ndarray | None, int]]]:
    """Cross-machine bytes per synchronisation and, per distinct phase, the bytes through each
    NIC and each rack uplink (with the phase's multiplicity)."""
    cross = 0.0
    per_phase = []
    for pr, v, k in _pattern(job).distinct:
        ma, mb = m[pr[:, 0]], m[pr[:, 1]]
        split = ma != mb
        ns = int(np.count_nonzero(split))
        if not ns:
            continue
        cross += k * v * ns
        nic = (np.bincount(ma[split], minlength=M) + np.bincount(mb[split], minlength=M)) * v
        ra, rb = rack[ma[split]], rack[mb[split]]
        xr = ra != rb
        up = ((np.bincount(ra[xr], minlength=R) + np.bincount(rb[xr], minlength=R)) * v) if xr.any() else None
        per_phase.append((nic, up, k))
    return cross, per_phase
