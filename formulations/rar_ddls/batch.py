"""SJF-BCO from a batch scheduler: servers, busy GPUs and the answer keyed by the caller's node ids.

A scheduler that plans in batches calls :func:`schedule_batch` on each new batch with its servers
(``{node id: GPUs}``), the network, and the GPUs still busy with earlier work
(``{(node id, GPU index): slot}``, slots counted from the call). SJF-BCO plans the batch after the
busy work and answers, per job, its start and completion slots and the GPUs it holds on each
node. The next call, made ``k`` slots later, passes :meth:`BatchSchedule.busy_at` ``(k)`` as its
busy map when the scheduler committed this schedule.

The input goes through the checks of an instance file (:meth:`.model.RarInstance.from_dict`),
with the same messages; a field that names a server by position in the file is named by the
node id here (``servers['n2']``, ``busy_until[('n2', 3)]``). Decisions where a batch differs
from an instance file, each documented here and tested:

* **An empty batch** is not an error (a scheduler may call with nothing new): ``ok`` with no
  jobs and makespan 0.
* **A job larger than the cluster** can never run; the answer is ``ok=False`` with
  ``reason="job-larger-than-cluster"`` and the file path's message as ``detail``, and nothing is
  scheduled (a partial plan would make the makespan of a different batch). Drop the job and call
  again.
* **Stuck jobs** (phi = 0 under the contention of the planned schedule, eq. 9): ``ok=False``,
  ``reason="stuck"``. **No plan**: ``reason="no-plan"`` when no execution-time limit, even past
  the horizon, gives SJF-BCO a plan it accepts (under ``kappa_select="simulated"`` a plan whose
  schedule leaves jobs stuck is never accepted), ``reason="time-limit"`` when ``time_limit`` ran
  out first.
* **Busy work is outside the model**: it holds its GPUs until its slot but adds no contention
  (eq. 6) to the batch, and the batch does not slow it (:mod:`.model`).

Slots are counted from the call (slot 0 = now); the caller keeps the clock.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Generic, Hashable, Mapping, Sequence, TypeVar

import numpy as np

from optkit.errors import InputError
from optkit.validation import check_time_limit, checked_arguments, distinct_keys, integer, number

from .model import PROBLEM, Job, Network, RarInstance, cluster_fields, evaluate, schedule_dict
from .plan import NoPlanError
from .readings import DEFAULTS
from .sjf_bco import sjf_bco

__all__ = ["JobSlots", "BatchSchedule", "schedule_batch"]

N = TypeVar("N", bound=Hashable)


@dataclass(frozen=True)
class JobSlots(Generic[N]):
    """One job of the batch as scheduled.

    Attributes
    ----------
    start
        The slot it starts in (counted from the call).
    completion
        The slot at which it has completed and its GPUs are free (T_j + 1).
    gpus
        Per node id, the indices of the node's GPUs it holds (ascending).
    """

    start: int
    completion: int
    gpus: dict[N, list[int]]


@dataclass(frozen=True)
class BatchSchedule(Generic[N]):
    """The answer of :func:`schedule_batch`.

    Attributes
    ----------
    ok
        Whether the batch was scheduled.
    jobs
        Per job id, its :class:`JobSlots` (empty when not scheduled).
    makespan_slots
        The batch's makespan, max_j (T_j + 1), in slots, measured by :func:`.model.evaluate`
        (``None`` when not scheduled).
    makespan
        The same in seconds.
    past_horizon
        The makespan exceeds the horizon given.
    reason
        ``None`` when scheduled, else ``job-larger-than-cluster``, ``stuck``, ``no-plan`` or
        ``time-limit`` (module docstring).
    detail
        The reason in words.
    info
        SJF-BCO's diagnostics (``theta_u``, ``kappa``, ...; :meth:`.plan.PlanResult.info`).
    busy_until
        The busy map the call was given, as ``{(node, gpu): slot}`` (slots > 0 only).
    """

    ok: bool
    jobs: dict[str, JobSlots[N]] = field(default_factory=dict)
    makespan_slots: int | None = None
    makespan: float | None = None
    past_horizon: bool = False
    reason: str | None = None
    detail: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    busy_until: dict[tuple[N, int], int] = field(default_factory=dict)

    def busy_at(self, now: int) -> dict[tuple[N, int], int]:
        """The busy map of a call made ``now`` slots after this one, when this schedule runs as
        planned: every GPU still held at ``now`` (by the busy work given to this call or by a job
        of this batch), with the slot it frees counted from ``now``. A scheduler that re-plans
        jobs not yet started would drop those jobs' GPUs instead.
        """
        if isinstance(now, bool) or not isinstance(now, (int, np.integer)) or now < 0:
            raise InputError("now", f"must be an integer number of slots >= 0, got {now!r}", problem=PROBLEM)
        free: dict[tuple[N, int], int] = dict(self.busy_until)
        for slots in self.jobs.values():
            for node, gpus in slots.gpus.items():
                for g in gpus:
                    free[node, g] = max(free.get((node, g), 0), slots.completion)
        return {key: end - int(now) for key, end in free.items() if end > now}


_FIELD = re.compile(r"^(servers|busy_until)\[(\d+)\](?:\[(\d+)\])?(.*)$")


def _rename(err: InputError, nodes: list[Any]) -> InputError:
    """The file path's message, a server named by its node id instead of its position."""
    m = _FIELD.match(err.field)
    f = err.field
    if m and int(m.group(2)) < len(nodes):
        node = nodes[int(m.group(2))]
        if m.group(1) == "servers":
            f = f"servers[{node!r}]{m.group(4)}"
        elif m.group(3) is not None:
            f = f"busy_until[{(node, int(m.group(3)))!r}]{m.group(4)}"
        else:
            f = f"busy_until[{node!r}]{m.group(4)}"
    return InputError(f, err.message, problem=PROBLEM)


def _busy_rows(busy_until: Mapping[tuple[N, int], int] | None, nodes: list[N],
               sizes: Sequence[int]) -> list[list[Any]]:
    """``{(node, gpu): slot}`` as the file's per-server lists (``sizes``: the checked O_s in
    node order; the slots are checked by :func:`.model.cluster_fields`). Its errors reach the
    caller through :func:`_rename`, which names the problem."""
    rows: list[list[Any]] = [[] for _ in nodes]
    if busy_until is None:
        return rows
    if not isinstance(busy_until, Mapping):
        raise InputError("busy_until", "must map (node id, GPU index) to the slot until which the GPU is busy, "
                         f"got {type(busy_until).__name__}")
    index = {n: i for i, n in enumerate(nodes)}
    for key, slot in busy_until.items():
        if not (isinstance(key, tuple) and len(key) == 2 and key[0] in index):
            raise InputError(f"busy_until[{key!r}]", "must be a key (node id, GPU index) naming a node of "
                             "`servers`")
        node, g = key
        cap = sizes[index[node]]
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or not 0 <= g < cap:
            raise InputError(f"busy_until[{key!r}]", f"names GPU {g!r} of node {node!r}, which has GPUs "
                             f"0..{cap - 1}")
        row = rows[index[node]]
        row.extend([0] * (int(g) + 1 - len(row)))
        row[int(g)] = slot
    return rows


@checked_arguments(PROBLEM)
def schedule_batch(jobs: Sequence[Job | Mapping[str, Any]], servers: Mapping[N, int], network: Network, *,
                   busy_until: Mapping[tuple[N, int], int] | None = None, slot_seconds: float = 1.0,
                   horizon: int = 1200, time_limit: float | None = None, lam: float = 1.0,
                   u: float = DEFAULTS["u"], kappa: int | None = None, available: str = DEFAULTS["available"],
                   kappa_select: str = DEFAULTS["kappa_select"], theta_search: str = DEFAULTS["theta_search"],
                   fa_ffp: str = DEFAULTS["fa_ffp"], kappa_tie: str = DEFAULTS["kappa_tie"],
                   rho_hat: str = DEFAULTS["rho_hat"]) -> BatchSchedule[N]:
    """Schedule a batch of ring-all-reduce jobs with SJF-BCO on servers keyed by node id, some
    GPUs busy until a given slot.

    Parameters
    ----------
    jobs
        The batch: :class:`.model.Job` objects or their dicts (``id``, ``gpus``, ``iterations``,
        ``grad_bytes``, ``batch``, ``fwd_time_per_sample``, ``bwd_time``); ids unique.
    servers
        ``{node id: GPUs}`` (O_s); nodes of different sizes are fine.
    network
        b^e, b^i, C, xi1, xi2 and alpha (:class:`.model.Network`).
    busy_until
        ``{(node id, GPU index): slot}``: the GPU is busy until that slot (counted from this
        call; GPU indices 0..O_s-1). GPUs not named are free now.
    slot_seconds
        The slot length (seconds).
    horizon
        SJF-BCO's search horizon T (slots; extended when too short, the answer then says
        ``past_horizon``).
    time_limit
        Seconds for SJF-BCO's search (``None``: no limit).
    lam
        lambda_j of LBSGF (Alg. 3), >= 1 (:func:`.sjf_bco.sjf_bco`).
    u
        Reading ``u``: the upper factor of the estimate, W = rho-hat / u (eq. 15).
    kappa
        The FA-FFP / LBSGF threshold of Alg. 1 (``None``: Alg. 1's loop over kappa).
    available
        Reading ``available``: which GPUs are available to a job while the plan is built.
    kappa_select
        Reading ``kappa_select``: how Alg. 1 compares the plans of the kappa loop.
    theta_search
        Reading ``theta_search``: what the bisection on theta_u converges to.
    fa_ffp
        Reading ``fa_ffp``: which GPUs FA-FFP (Alg. 2) picks for a job with G_j <= kappa.
    kappa_tie
        Reading ``kappa_tie``: which kappa wins when two give plans of equal makespan.
    rho_hat
        Reading ``rho_hat``: what the estimated execution time rho-hat_j(y) depends on.

    Returns
    -------
    BatchSchedule
        Per job id its start, completion and GPUs by node id, and the makespan, or ``ok=False``
        with the reason (module docstring). Never ``None``.

    References
    ----------
    Yu, Ji, Rajan, Liu, "On Scheduling Ring-All-Reduce Learning Jobs in Multi-Tenant GPU
    Clusters with Communication Contention" (MobiHoc '22): Sec. 5, Algorithm 1 (SJF-BCO) with
    Algorithms 2-3, its U_s^g initialised (line 2) to each GPU's busy-until slot; the contention
    model of Sec. 4 (eqs. 6-9) for the starts and completions.

    Notes
    -----
    Guarantee: Theorem 5's n_g·phi·u/l times the optimum, as the paper states it, only when no
    GPU is busy; with busy GPUs none proven: the paper's proof starts from U = 0 on an idle
    cluster (Alg. 1 line 2) and never considers GPUs busy at the start. (Its steps would carry
    the busy time in U, but Lemma 3, which the chain needs, is false as stated even on an idle
    cluster: the package README.)

    Units: slots counted from the call (``start``, ``completion``, ``busy_until``, ``horizon``);
    ``makespan`` in seconds (slots × ``slot_seconds``); GPUs; the jobs' and network's fields in
    bytes, seconds and bytes per second (:mod:`.model`).

    Examples
    --------
    Two 2-GPU servers; GPUs 0 and 1 of ``n1`` are busy until slot 5. The 2-GPU job takes the
    free node (5 slots on one server); the 4-GPU job needs every GPU, so it starts at slot 5,
    split over both nodes (12 slots):

    >>> from optkit.formulations.rar_ddls import Job, Network, schedule_batch
    >>> net = Network(1.25e9, 3e11, 5e10, 1.0, 0.002, 0.2)
    >>> batch = [Job("a", 2, 500, 1e7, 32, 1e-4, 0.004), Job("b", 4, 500, 1e7, 32, 1e-4, 0.004)]
    >>> r = schedule_batch(batch, {"n1": 2, "n2": 2}, net, busy_until={("n1", 0): 5, ("n1", 1): 5})
    >>> r.ok, r.makespan_slots
    (True, 17)
    >>> [(j, s.start, s.completion, s.gpus) for j, s in r.jobs.items()]
    [('a', 0, 5, {'n2': [0, 1]}), ('b', 5, 17, {'n1': [0, 1], 'n2': [0, 1]})]
    >>> r.busy_at(10)
    {('n1', 0): 7, ('n1', 1): 7, ('n2', 0): 7, ('n2', 1): 7}
    """
    t0 = time.perf_counter()
    time_limit = check_time_limit(time_limit, problem=PROBLEM)
    if not isinstance(servers, Mapping):
        raise InputError("servers", f"must map node ids to GPU counts, got {type(servers).__name__}",
                         problem=PROBLEM)
    if isinstance(jobs, (str, bytes, Mapping)) or not isinstance(jobs, Sequence):
        raise InputError("jobs", f"must be a list of jobs, got {type(jobs).__name__}", problem=PROBLEM)
    if not isinstance(network, Network):
        raise InputError("network", f"must be a rar-ddls Network, got {type(network).__name__}", problem=PROBLEM)
    nodes = distinct_keys(servers, "servers", problem=PROBLEM)
    job_dicts: list[Any] = [j.to_dict() if isinstance(j, Job) else j for j in jobs]
    d: dict[str, Any] = {"problem": PROBLEM, "servers": [servers[n] for n in nodes], "network": network.to_dict(),
                         "slot_seconds": slot_seconds, "horizon": horizon, "jobs": job_dicts}
    try:  # the file path's checks, in its order: the cluster, then each job's own fields
        sizes, _ = cluster_fields(d)
        d["busy_until"] = _busy_rows(busy_until, nodes, sizes)
        _, busy = cluster_fields(d)
        batch = [Job.from_dict(jd, f"jobs[{i}]") for i, jd in enumerate(job_dicts)]
        number(d, "slot_seconds", "instance", positive=True)
        integer(horizon, "horizon", low=1)
    except InputError as err:
        raise _rename(err, nodes) from None
    given = {(nodes[s], g): int(v) for s, row in enumerate(busy) for g, v in enumerate(row) if v}
    if not batch:
        return BatchSchedule(True, {}, 0, 0.0, busy_until=given)
    total = sum(int(servers[n]) for n in nodes)
    too_big = [(i, job) for i, job in enumerate(batch) if job.gpus > total]
    if too_big:
        i, big = too_big[0]
        more = f" (and {len(too_big) - 1} more jobs)" if len(too_big) > 1 else ""
        return BatchSchedule(False, reason="job-larger-than-cluster", busy_until=given,
                             detail=f"jobs[{i}].gpus: job {big.id} asks for {big.gpus} GPUs but the cluster has "
                                    f"{total}{more}")
    try:  # the checks across jobs and the cluster (duplicate ids, an iteration longer than a slot)
        inst = RarInstance.from_dict(d)
    except InputError as err:
        raise _rename(err, nodes) from None
    deadline = None if time_limit is None else t0 + float(time_limit)
    try:
        y, res = sjf_bco(inst, lam=lam, u=u, kappa=kappa, available=available, kappa_select=kappa_select,
                         theta_search=theta_search, fa_ffp=fa_ffp, kappa_tie=kappa_tie, rho_hat=rho_hat,
                         deadline=deadline)
    except NoPlanError as exc:
        return BatchSchedule(False, reason="time-limit" if exc.timed_out else "no-plan", detail=str(exc),
                             busy_until=given)
    if res.outcome.stuck:
        return BatchSchedule(False, reason="stuck", info=res.info(), busy_until=given,
                             detail=f"jobs {', '.join(res.outcome.stuck[:5])} never complete under the contention "
                                    "of the planned schedule (phi = 0, eq. 9)")
    ev = evaluate(inst, schedule_dict(inst, y, res.outcome))
    if not ev.feasible:  # pragma: no cover - the plan -> schedule conversion keeps every constraint
        raise AssertionError("; ".join(ev.violations))
    out: dict[str, JobSlots[N]] = {}
    for j, job in enumerate(inst.jobs):
        held: dict[N, list[int]] = {}
        for s, g in res.gpus[j]:
            held.setdefault(nodes[s], []).append(g)
        out[job.id] = JobSlots(int(res.outcome.start[j]), int(res.outcome.completion[j]),
                               {n: sorted(gs) for n, gs in held.items()})
    mk = int(ev.metrics["makespan_slots"])
    return BatchSchedule(True, out, mk, float(ev.objectives["makespan"]), bool(ev.metrics["past_horizon"]),
                         info=res.info(), busy_until=given)
