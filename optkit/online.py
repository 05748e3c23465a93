"""The online protocol: how any event loop drives an optkit scheduling policy.

A policy is an object with four methods; a *driver* (a simulator, a cluster manager's scheduling
loop, a peer's simulator) calls them as events happen::

    policy.on_arrival(job, now)             # a job was released
    policy.on_completion(job_id, now)       # a started job gave its GPUs back
    policy.decide(now, cluster) -> [Decision, ...]   # which jobs start now, on which nodes
    policy.next_wakeup(now) -> float | None # when to call decide again if nothing happens

Nodes are named by the caller's ids (any hashable: host names, ints): :class:`ClusterView`
holds the free GPUs and the size of each node, a :class:`Decision` the GPUs a job takes on each
node. Times are seconds.

Rules a driver must keep (optkit's simulators keep them; the minimal driver in
``docs/howto/drive-a-srpt.rst`` is 40 lines that keep them and gives the same schedules as
``optkit simulate``):

1. **Instants.** Everything due at one instant is handled together, in this order: first every
   completion (``on_completion``, after returning the job's GPUs to the free counts), then every
   arrival (``on_arrival``), then one ``decide``, then one ``next_wakeup``.
2. **Simultaneous arrivals** are delivered in the order of :attr:`Job.seq` (the tie key the job
   carries: give each job its submission order). Policies break their own ties by arrival order,
   so this order is part of the input.
3. **Slots.** A policy with a slot length (ddlwmp's ``slot_seconds``) sees time in slots: the
   driver delivers a job released at r at the first slot boundary at or after r, and gives a
   job's GPUs back at the first boundary at or after its completion. With ``slot = 0`` or a
   policy without slots, times are used as they are.
4. **Wake-ups.** If ``next_wakeup(now)`` returns w, the driver must call ``decide`` again at w
   (rounded up to the next slot boundary; a w at or before ``now`` means ``now`` plus one slot),
   even if no job arrives or ends: A-SRPT delays a start on purpose and asks to be woken, and a
   driver that ignores the wake-up never starts that job on an empty cluster.
5. **Decisions are binding.** The driver starts every decided job at ``now`` on the GPUs its
   decision names (they are free: the policy took them from the view it was given) and reports
   its completion later; a policy never learns a job's true length from the driver.

A job can be given as "k GPUs for d seconds" (:attr:`Job.duration`) without a model of its
stages; a policy of a problem whose jobs have models (ddlwmp) reads such a job as one stage of k
replicas that exchange nothing, whose one iteration takes d seconds on any k GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Mapping, Protocol, Sequence

from optkit.errors import InputError

__all__ = ["Job", "ClusterView", "Decision", "OnlinePolicy"]


@dataclass(frozen=True)
class Job:
    """A job as a policy sees it on arrival.

    Fields: ``id`` (unique), ``release`` (r, seconds), ``gpus`` (all needed at once: gang
    scheduling), ``seq`` (the tie key among jobs released at the same instant, lower first: rule
    2), ``model`` (the name of its model, a key of the policy's ``models`` in ddlwmp; ``None``
    with ``duration``), ``predicted_iterations`` (ñ in ddlwmp; ``None``: no prediction) and
    ``duration`` ("k GPUs for d seconds": the run time in seconds of a job without a model).
    """

    id: str
    release: float
    gpus: int
    seq: int = 0
    model: str | None = None
    predicted_iterations: float | None = None
    duration: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InputError("job.id", f"must be a non-empty string, got {self.id!r}")
        if isinstance(self.gpus, bool) or not isinstance(self.gpus, int) or self.gpus < 1:
            raise InputError("job.gpus", f"must be an integer >= 1, got {self.gpus!r}")
        for name in ("release", "predicted_iterations", "duration"):
            v = getattr(self, name)
            if v is None and name != "release":
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0 or v == float("inf"):
                raise InputError(f"job.{name}", f"must be a finite number >= 0, got {v!r}")
        if (self.model is None) == (self.duration is None):
            raise InputError("job", f"job {self.id} must give exactly one of model and duration")


@dataclass(frozen=True)
class ClusterView:
    """The cluster at one instant: free GPUs and size of every node, keyed by the caller's ids
    (in the caller's order, which breaks ties between equal nodes)."""

    free: Mapping[Hashable, int]
    size: Mapping[Hashable, int]


@dataclass(frozen=True)
class Decision:
    """Start ``job_id`` now, taking ``gpus[node]`` GPUs on each node.

    replicas: per pipeline stage, the node of each replica (ddlwmp), when the policy maps them.
    time_per_iteration: alpha (s per iteration) of this placement (ddlwmp, eq. 7), so a driver
    that knows the true iteration count n computes the completion ``now + n * alpha``.
    """

    job_id: str
    gpus: Mapping[Hashable, int]
    replicas: Sequence[Sequence[Hashable]] | None = None
    time_per_iteration: float | None = None
    extra: Mapping[str, object] = field(default_factory=dict)


class OnlinePolicy(Protocol):
    """The four methods a driver calls (module docstring: the rules)."""

    def on_arrival(self, job: Job, now: float) -> None: ...

    def on_completion(self, job_id: str, now: float) -> None: ...

    def decide(self, now: float, cluster: ClusterView) -> list[Decision]: ...

    def next_wakeup(self, now: float) -> float | None: ...
