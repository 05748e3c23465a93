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
``docs/howto/drive-a-srpt.rst``, under 40 lines, keeps them and gives the same schedules as
``optkit simulate``):

1. **Instants.** Everything due at one instant is handled together, in this order: first every
   completion (``on_completion``, after returning the job's GPUs to the free counts), then every
   arrival (``on_arrival``), then one ``decide``, then one ``next_wakeup``. ``now`` never goes
   back: every call's ``now`` is at or after the previous call's. A second ``decide`` at the same
   instant is legal only after a completion or an arrival delivered at that instant since the
   first (a driver that learns of an event late; the policy then decides on the view after it);
   a second ``decide`` with nothing delivered in between is a misuse (below).
2. **Simultaneous arrivals** are delivered in the order of :attr:`Job.seq`: the tie key a job
   carries, an integer, lower first; give each job its submission order (``optkit simulate``
   gives each job its position in the workload file: ddlwmp, the instance's ``jobs`` list; nimp,
   the replay's jobs sorted by submission time, file order within a time). The policies break
   their own ties by arrival order (the order of the ``on_arrival`` calls), which rule 2 makes
   the order of ``seq``: so ``seq`` is part of the input. optkit's schedulers read it to check
   the rule: among the arrivals delivered at one instant before a ``decide``, ``seq`` must not
   decrease. Jobs of different instants may carry any ``seq``; equal values are allowed (the
   call order then breaks the tie).
3. **Slots.** A policy with a slot length (ddlwmp's ``slot_seconds``) sees time in slots: the
   driver delivers a job released at r at the first slot boundary at or after r, or later, and
   gives a job's GPUs back at the first boundary at or after its completion; every ``now`` it
   passes is a slot boundary. "The first boundary at or after t" is :func:`slot_ceil`, the one
   function ``optkit simulate``, ``evaluate``, the exact solvers, the how-to's driver and the
   schedulers' checks use. Its tolerance is part of the rule: t counts as *on* the boundary
   k·slot when ``|t/slot - k| <= SLOT_TOL * max(1, |t/slot|)`` (:data:`SLOT_TOL` = 1e-9), so a
   completion computed as ``start + n * alpha`` that lands a rounding error above a boundary
   gives its GPUs back at that boundary, not one slot later (read exactly, float noise alone
   would keep some jobs' GPUs a slot longer than their completion needs). With
   ``slot = 0`` or a policy without slots (nimp), times are used as they are.
4. **Wake-ups.** If ``next_wakeup(now)`` returns w, the driver must call ``decide`` again at
   ``slot_ceil(w)`` (a w at or before ``now`` means ``now`` plus one slot), even if no job
   arrives or ends: A-SRPT delays a start on purpose and asks to be woken, and a driver that
   ignores the wake-up never starts that job on an empty cluster.
5. **Decisions are binding.** The driver starts every decided job at ``now`` on the GPUs its
   decision names (they are free: the policy took them from the view it was given) and reports
   its completion later, once; a policy never learns a job's true length from the driver. So the
   free GPUs a view shows on a node never exceed the node's size minus the GPUs the policy's
   started, not yet completed jobs hold there.
6. **Several starts in one instant.** A policy reports each start to the view with
   ``cluster.reserve(decision)`` before it places the next job, and returns the same decisions
   from ``decide``. ``reserve`` takes the GPUs from the view's free counts (the view holds its own
   copy: the driver's counts change only when it applies the decisions), and calls the driver's
   ``on_reserve`` hook, if it gave one, so that a driver with a network model can update what
   :meth:`ClusterView.pair_capacity` answers next: the nimp replay adds the new job's traffic
   there, and the next placement of the same instant sees the bandwidth that remains.

Jobs
----
A job is given with a model of its stages (ddlwmp's ``model``, with ``predicted_iterations``)
or as "k GPUs for d seconds" (:attr:`Job.duration`, no model). A policy of a problem whose jobs
have models (ddlwmp) reads a duration job as one stage of k replicas that exchange nothing, one
iteration of d seconds on any k GPUs (so :attr:`Decision.time_per_iteration` is d), and plans
with :attr:`Job.predicted_duration` (seconds, a noisy estimate; ``None``: d itself, a known
length). A driver that knows only an estimate may give it as ``duration``.

:attr:`Job.single_node` (``False`` by default) says the job must sit on one node (PAI's
single-instance jobs): every ddlwmp and nimp policy then starts it only when one node has all
its GPUs free, on that node, by the policy's own rule restricted to the nodes that hold it; the
schedulers reject a single-node job larger than every node (it could never start).

Nodes may differ in size wherever the problem's model allows it: nimp's machines (Fang et al.,
Sec. III) each have their own GPU count; ddlwmp's servers (Luo et al., Sec. III-A) all have g,
and its scheduler rejects a view of mixed sizes with an :class:`~optkit.errors.InputError`.

Misuse
------
optkit's schedulers (``optkit.formulations.ddlwmp.OnlineScheduler`` and
``optkit.formulations.nimp.OnlineScheduler``) check every call against these rules
(:class:`ProtocolState`) and raise an :class:`~optkit.errors.InputError` naming the field, at
the call that breaks a rule, before the policy sees it:

* ``now``: not a finite number >= 0; earlier than the previous call's (rule 1); a second
  ``decide`` at one instant with no completion or arrival delivered since the first (rule 1);
  an arrival before its release (``now < slot_ceil(job.release)``: rule 3); with slots, a
  ``now`` that is not a slot boundary (rule 3).
* ``job.seq``: a lower ``seq`` than an earlier arrival of the same instant (rule 2).
* ``job.id`` (a second arrival), ``job.gpus`` (more GPUs than the cluster has),
  ``job.single_node`` (more GPUs than any node has), ``job`` (not a :class:`Job`; ddlwmp: not
  exactly one of ``model`` and ``duration``), ``job.model``, ``job.param_bytes`` (Titan),
  ``job.predicted_duration`` (ddlwmp: without ``duration``, or beside ``predicted_iterations``).
* ``job_id`` of ``on_completion``: a job that never arrived, that arrived but was never started,
  or that completed already (rule 5).
* ``cluster``: not a :class:`ClusterView`; ``cluster.free``: a view that does not name exactly
  the scheduler's nodes; ``cluster.size[n]``: a size that differs from the node's;
  ``cluster.free[n]``: a free count that is not an integer, is negative, or exceeds the node's
  size minus the GPUs held there by the scheduler's started, not yet completed jobs (rule 5);
  ``cluster.pair_capacity`` (nimp): a pair capacity that is not one finite number >= 0, a
  mapping naming every unordered pair of distinct nodes once with such numbers, or (from
  :meth:`ClusterView.of_arrays`) a symmetric node x node array of them.
* Constructor arguments: ``policy``, ``nodes``, ``models``, ``inter_bandwidth``,
  ``intra_bandwidth`` and ``slot_seconds`` (finite numbers > 0), ``seed``, and the policy's
  keywords (``params``/``readings``, or the reading's own name).

A call that raised changed nothing the scheduler keeps (except a ``decide`` whose view was
valid but whose policy failed, which is a bug to report). A user's own policy object is driven
as it is: the drivers check what it returns (``optkit simulate`` raises on a start of an unknown
or started job, on more GPUs than a node has free and on a single-node job split across nodes).

Two drivers ship with optkit and keep these rules: ``optkit.formulations.ddlwmp.simulate`` and
``optkit.formulations.nimp.replay`` (they build their views with :meth:`ClusterView.of_arrays`,
nodes 0..M-1, so no dictionary is built per instant); ``docs/howto/drive-a-srpt.rst`` has a
third, of under 40 lines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Generic, Hashable, Iterator, Mapping, Protocol, Sequence, Tuple, TypeVar, Union

import numpy as np

from optkit.errors import InputError
from optkit.validation import distinct_keys

__all__ = ["Job", "ClusterView", "Decision", "OnlinePolicy", "COLLECTIVES", "node_sizes", "SLOT_TOL", "slot_ceil",
           "slot_floor", "on_slot", "ProtocolState", "single_node_field"]

COLLECTIVES = ("ring", "halving-doubling")
_FAST_COLLECTIVES = (None, *COLLECTIVES)
_INF = float("inf")
N = TypeVar("N", bound=Hashable)
"""A node id: the caller's own type (``str``, ``int``, ...), kept by every view and decision."""

SLOT_TOL = 1e-9
"""Relative tolerance of the slot rule (rule 3): t is on the boundary k·slot when
``|t/slot - k| <= SLOT_TOL * max(1, |t/slot|)``."""


def _on_boundary(t: float, slot: float) -> tuple[float, int | None]:
    """(q, k): q = t/slot, and k the index of the boundary t is on within the tolerance (None:
    between boundaries). ``slot`` 0 (no slots) gives (t, None); a negative one is bad input."""
    if not slot > 0:
        if slot != 0:
            raise InputError("slot", f"must be a number >= 0 (seconds; 0: no slots), got {slot!r}")
        return t, None
    q = t / slot
    r = round(q)
    return q, (r if abs(q - r) <= SLOT_TOL * max(1.0, abs(q)) else None)


def slot_ceil(t: float, slot: float) -> float:
    """The first slot boundary at or after ``t`` (rules 3 and 4 of the module docstring).

    ``t`` itself when ``slot`` is 0 (no slots). Otherwise k·slot for the least integer k with
    k·slot >= t, where a t within the tolerance of a boundary counts as on it: with q = t/slot
    and k the nearest integer to q, ``|q - k| <= SLOT_TOL * max(1, |q|)`` gives k·slot (even for
    t a rounding error above it), else ``ceil(q)·slot``. ``optkit simulate``, ddlwmp's
    ``evaluate`` and exact solvers, the how-to's driver and the schedulers' checks all round
    with this function.

    Examples
    --------
    >>> slot_ceil(3.2, 1.0), slot_ceil(3.0, 1.0), slot_ceil(3.0 + 1e-12, 1.0), slot_ceil(3.0 + 1e-6, 1.0)
    (4.0, 3.0, 3.0, 4.0)
    >>> slot_ceil(0.1 + 0.2, 0.1), slot_ceil(7.25, 0.0)
    (0.30000000000000004, 7.25)
    """
    q, k = _on_boundary(t, slot)
    if k is not None:
        return k * slot
    return math.ceil(q) * slot if slot else t


def slot_floor(t: float, slot: float) -> float:
    """The last slot boundary at or before ``t``, with :func:`slot_ceil`'s tolerance (A-SRPT's
    last slot of a delayed start, Algorithm 1 lines 14-20); ``t`` when ``slot`` is 0.

    >>> slot_floor(3.7, 1.0), slot_floor(4.0 - 1e-12, 1.0)
    (3.0, 4.0)
    """
    q, k = _on_boundary(t, slot)
    return (k if k is not None else math.floor(q)) * slot if slot else t


def on_slot(t: float, slot: float) -> bool:
    """Whether ``t`` is a slot boundary within the tolerance of :func:`slot_ceil` (always, with
    ``slot`` 0).

    >>> on_slot(3.0, 0.5), on_slot(3.25, 0.5), on_slot(0.1 * 3, 0.1)
    (True, False, True)
    """
    return _on_boundary(t, slot)[1] is not None or not slot


def single_node_field(value: object, where: str, job: object, gpus: int, node_gpus: int, node: str) -> bool:
    """A workload file's optional ``single_node`` (``value``; absent: ``False``) checked: a
    boolean, and ``True`` only for a job of at most ``node_gpus`` GPUs, the largest ``node``
    (an :class:`~optkit.errors.InputError` naming ``where`` otherwise: the job could never start)."""
    if type(value) is not bool:
        raise InputError(where, f"must be true or false, got {value!r}")
    if value and gpus > node_gpus:
        raise InputError(where, f"job {job} needs {gpus} GPUs on one {node}, but a {node} has {node_gpus}: it could "
                                "never start")
    return value


@dataclass(frozen=True)
class Job:
    """A job as a policy sees it on arrival.

    Fields: ``id`` (unique), ``release`` (r, seconds), ``gpus`` (all needed at once: gang
    scheduling), ``seq`` (the tie key among jobs delivered at the same instant, lower first: rule
    2; ``optkit simulate`` gives the job's position in the workload), ``model`` (the name of its
    model, a key of the policy's ``models`` in ddlwmp; ``None`` with ``duration``),
    ``predicted_iterations`` (ñ in ddlwmp; ``None``: no prediction) and ``duration`` ("k GPUs for
    d seconds": the length in seconds of a job without a model, read by ddlwmp as one iteration
    of d seconds), ``param_bytes`` (K, bytes of the model's parameters that its workers
    synchronise: nimp) and ``collective`` (``"ring"`` or ``"halving-doubling"``, nimp; ``None``:
    halving-doubling when ``gpus`` is a power of two, else ring), ``placement_sensitive`` (nimp:
    whether the job's throughput suffers when its workers are spread, Tiresias' consolidation
    test; ``None``: read from ``model``, as a nimp instance file does), ``single_node`` (all of
    its GPUs on one node, e.g. PAI's single-instance jobs; every ddlwmp and nimp policy honours it)
    and ``predicted_duration`` (seconds: the estimate a policy plans a duration job with, a noisy
    prediction of its length; ``None``: ``duration`` itself). Which fields a policy needs is its
    problem's: ddlwmp takes exactly one of ``model`` and ``duration`` (``predicted_duration`` only
    with ``duration`` and without ``predicted_iterations``; ``predicted_iterations`` with
    ``duration`` means ``predicted_duration = predicted_iterations * duration``); nimp takes
    ``param_bytes`` (Titan needs it; the baselines ignore it) and reads ``placement_sensitive``,
    else ``model`` as a network name (Tiresias' sensitivity), and ignores durations and
    predictions (its policies are FIFO queues).
    """

    id: str
    release: float
    gpus: int
    seq: int = 0
    model: str | None = None
    predicted_iterations: float | None = None
    duration: float | None = None
    param_bytes: float | None = None
    collective: str | None = None
    placement_sensitive: bool | None = None
    single_node: bool = False
    predicted_duration: float | None = None

    def __post_init__(self) -> None:
        r, n = self.release, self.predicted_iterations
        if (type(self.id) is str and self.id and type(self.gpus) is int and self.gpus >= 1 and type(self.seq) is int
                and type(r) is float and 0.0 <= r < _INF and (n is None or type(n) is float and 0.0 <= n < _INF)
                and self.duration is None and self.collective in _FAST_COLLECTIVES
                and (self.param_bytes is None or type(self.param_bytes) is float and 0.0 <= self.param_bytes < _INF)
                and (self.model is None or type(self.model) is str and self.model)
                and (self.placement_sensitive is None or type(self.placement_sensitive) is bool)
                and type(self.single_node) is bool and self.predicted_duration is None):
            return  # the common case of a simulator's jobs, checked in a few comparisons
        if not isinstance(self.id, str) or not self.id:
            raise InputError("job.id", f"must be a non-empty string, got {self.id!r}")
        if isinstance(self.gpus, bool) or not isinstance(self.gpus, int) or self.gpus < 1:
            raise InputError("job.gpus", f"must be an integer >= 1, got {self.gpus!r}")
        if isinstance(self.seq, bool) or not isinstance(self.seq, int):
            raise InputError("job.seq", f"must be an integer (the tie order of simultaneous arrivals), got {self.seq!r}")
        for name in ("release", "predicted_iterations", "duration", "param_bytes", "predicted_duration"):
            v = getattr(self, name)
            if v is None and name != "release":
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0 or v == float("inf"):
                raise InputError(f"job.{name}", f"must be a finite number >= 0, got {v!r}")
        if self.model is not None and (not isinstance(self.model, str) or not self.model):
            raise InputError("job.model", f"must be a non-empty string, got {self.model!r}")
        if self.collective not in (None, *COLLECTIVES):
            raise InputError("job.collective", f"must be one of {', '.join(COLLECTIVES)}, got {self.collective!r}")
        if self.placement_sensitive is not None and type(self.placement_sensitive) is not bool:
            raise InputError("job.placement_sensitive", f"must be true, false or null, got {self.placement_sensitive!r}")
        if type(self.single_node) is not bool:
            raise InputError("job.single_node", f"must be true or false, got {self.single_node!r}")


@dataclass(frozen=True)
class Decision(Generic[N]):
    """Start ``job_id`` now, taking ``gpus[node]`` GPUs on each node.

    Attributes
    ----------
    job_id
        The job started.
    gpus
        GPUs taken on each node, by the caller's node ids.
    replicas
        Per pipeline stage, the node of each replica (ddlwmp), when the policy maps them; nimp:
        one row, the node of each worker.
    time_per_iteration
        alpha (s per iteration) of this placement (ddlwmp, eq. 7), so a driver that knows the true
        iteration count n computes the completion ``now + n * alpha``.
    extra
        What else the policy reports about the start (free-form).
    """

    job_id: str
    gpus: Mapping[N, int]
    replicas: Sequence[Sequence[N]] | None = None
    time_per_iteration: float | None = None
    extra: Mapping[str, object] = field(default_factory=dict)


PairCapacity = Union[float, Mapping[Tuple[N, N], float], np.ndarray]


class _ArrayMap(Mapping[int, int]):
    """Read-only mapping view of an array indexed by node 0..M-1."""

    __slots__ = ("a",)

    def __init__(self, a: np.ndarray) -> None:
        self.a = a

    def __getitem__(self, node: int) -> int:
        if isinstance(node, bool) or not isinstance(node, (int, np.integer)) or not 0 <= node < len(self.a):
            raise KeyError(node)
        return int(self.a[node])

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.a)))

    def __len__(self) -> int:
        return len(self.a)


class ClusterView(Generic[N]):
    """The cluster at one instant, as a policy sees it in ``decide``.

    Parameters
    ----------
    free
        Free GPUs of every node, keyed by the caller's ids, in the caller's order (which breaks
        ties between equal nodes). The view copies ``free``: :meth:`reserve` takes from that copy,
        never from the driver's counts.
    size
        GPUs of every node, keyed by the same ids.
    pair_capacity
        Optional (nimp): the bytes each pair of nodes may carry per communication phase, as one
        finite number >= 0 for every pair, a mapping ``{(a, b): bytes}`` naming every unordered
        pair of distinct nodes once (either order; both orders only with equal values) with
        such numbers, or a callable returning either, asked again after each :meth:`reserve`
        (rule 6 of :mod:`optkit.online`); ``None``: the driver models no network (no bandwidth
        constraint). The rule is that of :func:`optkit.formulations.nimp.place` and of a nimp
        instance file, and nimp's scheduler rejects anything else (field
        ``cluster.pair_capacity``).
    on_reserve
        Optional: called with each decision the policy reserves (rule 6).

    Notes
    -----
    :meth:`of_arrays` builds the view of a driver that numbers its nodes 0..M-1 (optkit's
    simulators): ``free``/``size`` are then mappings over ``free_array``/``size_array`` (integer
    arrays), and ``pair_capacity`` may be a symmetric M x M array of finite numbers >= 0.
    """

    __slots__ = ("_free", "_size", "free_array", "size_array", "_pair", "_on_reserve")

    def __init__(self, free: Mapping[N, int], size: Mapping[N, int], *,
                 pair_capacity: PairCapacity[N] | Callable[[], PairCapacity[N]] | None = None,
                 on_reserve: Callable[[Decision[N]], None] | None = None) -> None:
        self._free: dict[N, int] | None = dict(free)
        self._size: Mapping[N, int] | None = size
        self.free_array: np.ndarray | None = None
        self.size_array: np.ndarray | None = None
        self._pair = pair_capacity
        self._on_reserve = on_reserve

    @classmethod
    def of_arrays(cls, free: np.ndarray, size: np.ndarray, *,
                  pair_capacity: PairCapacity[int] | Callable[[], PairCapacity[int]] | None = None,
                  on_reserve: Callable[[Decision[int]], None] | None = None) -> ClusterView[int]:
        """The view of nodes 0..M-1 from arrays (``free`` is copied; ``size`` is not). A driver
        may keep one such view for a whole run and refill it before each ``decide`` with
        ``numpy.copyto(view.free_array, free)``; a policy never keeps a view past the call."""
        v = cls.__new__(cls)
        v.free_array = free.copy()
        v.size_array = size
        v._free = v._size = None
        v._pair = pair_capacity
        v._on_reserve = on_reserve
        return v

    @property
    def free(self) -> Mapping[N, int]:
        """Free GPUs per node (after the reservations made so far)."""
        return _ArrayMap(self.free_array) if self._free is None else self._free  # type: ignore[arg-type]

    @property
    def size(self) -> Mapping[N, int]:
        """GPUs per node."""
        return _ArrayMap(self.size_array) if self._size is None else self._size  # type: ignore[arg-type]

    def pair_capacity(self) -> PairCapacity[N] | None:
        """The pair capacity now (``None``: the driver models no network)."""
        p = self._pair
        return p() if callable(p) else p

    def reserve(self, decision: Decision[N]) -> None:
        """Take the decision's GPUs from this view's free counts and tell the driver (rule 6).
        Raises :class:`~optkit.errors.InputError` (field ``decision.gpus``) for an unknown node
        or more GPUs than it has free."""
        arr = self.free_array
        for node, k in decision.gpus.items():
            if arr is None:
                have = self._free.get(node)  # type: ignore[union-attr]
            elif type(node) is int and 0 <= node < len(arr) or isinstance(node, np.integer) and 0 <= node < len(arr):
                have = int(arr[node])
            else:
                have = None
            if have is None or have < k:
                raise InputError("decision.gpus", f"job {decision.job_id} takes {k} GPUs on node {node!r}, "
                                                  f"which has {'no such node' if have is None else have} free")
            if arr is None:
                self._free[node] = have - k  # type: ignore[index]
            else:
                arr[node] = have - k
        if self._on_reserve is not None:
            self._on_reserve(decision)


def node_sizes(nodes: Mapping[N, int], *, problem: str) -> dict[N, int]:
    """``{node id: GPUs}`` checked as every scheduler's ``nodes`` argument: a non-empty mapping of
    integers >= 1, each node once (an :class:`~optkit.errors.InputError` naming ``nodes`` or
    ``nodes[id]``)."""
    if not isinstance(nodes, Mapping) or not nodes:
        raise InputError("nodes", "must map node ids to their GPU counts, and name at least one node", problem=problem)
    distinct_keys(nodes, "nodes", problem=problem)
    for n, g in nodes.items():
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or g < 1:
            raise InputError(f"nodes[{n!r}]", f"must be an integer >= 1, got {g!r}", problem=problem)
    return {n: int(g) for n, g in nodes.items()}


class OnlinePolicy(Protocol[N]):
    """The four methods a driver calls (module docstring: the rules).

    A class may declare ``protocol = "optkit.online"``: a driver that also accepts its problem's
    own policy objects (``ddlwmp.simulate`` takes a :class:`ddlwmp.policies.Policy` too, whose
    methods have the same names but other argument types) then drives it through this protocol
    as it is, instead of wrapping it.
    """

    def on_arrival(self, job: Job, now: float) -> None: ...

    def on_completion(self, job_id: str, now: float) -> None: ...

    def decide(self, now: float, cluster: ClusterView[N]) -> list[Decision[N]]: ...

    def next_wakeup(self, now: float) -> float | None: ...


_ARRIVED, _STARTED, _DONE = 1, 2, 3


def _is_int(v: object) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


class ProtocolState:
    """What a scheduler checks of each call against the rules (module docstring, "Misuse").

    It keeps the clock (the latest ``now``), each job's state (arrived, started, completed), the
    GPUs the started, not yet completed jobs hold on each node, and the last ``decide``. Each
    ``check_*`` method raises an :class:`~optkit.errors.InputError` naming the field and changes
    nothing; the matching ``record_*`` method, called once the policy accepted the call, moves
    the state on. Nodes are the positions 0..M-1 of the scheduler's node ids.

    Parameters
    ----------
    ids
        The scheduler's node ids, in its order.
    size
        GPUs of each node, in that order.
    slot
        The slot length in seconds (rule 3; 0: no slots).
    problem
        The problem named in the errors.

    Examples
    --------
    >>> st = ProtocolState(["a", "b"], [4, 4], slot=1.0, problem="ddlwmp")
    >>> st.check_arrival(Job("j", release=2.5, gpus=2), 2.0)
    Traceback (most recent call last):
    ...
    optkit.errors.InputError: ddlwmp: now must be at or after the job's release (rule 3): job j arrives at 2.0, before its release 2.5 (the first slot boundary at or after it is 3.0)
    """

    __slots__ = ("ids", "index", "size", "room", "slot", "problem", "clock", "state", "held", "decided_at",
                 "fresh", "last_seq", "indexed", "_sizes_seen")

    def __init__(self, ids: Sequence[Hashable], size: Sequence[int], *, slot: float = 0.0, problem: str) -> None:
        self.ids = list(ids)
        self.index = {n: i for i, n in enumerate(self.ids)}
        self.indexed = self.ids == list(range(len(self.ids)))
        self.size = np.asarray(size, dtype=np.int64)
        self.room = self.size.copy()  # size minus the GPUs held by started, not completed jobs
        self.slot = float(slot)
        self.problem = problem
        self.clock = 0.0
        self.state: dict[str, int] = {}
        self.held: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        self.decided_at: float | None = None
        self.fresh = False       # a completion or an arrival was delivered since the last decide
        self.last_seq: int | None = None  # seq of the last arrival delivered since the last decide
        self._sizes_seen: np.ndarray | None = None  # the size array of an array view, checked

    def _fail(self, name: str, message: str) -> InputError:
        return InputError(name, message, problem=self.problem)

    # ------------------------------------------------------------------ time (rules 1 and 3)
    def check_time(self, now: float, call: str) -> None:
        """``now`` of ``call``: a finite number >= 0, not before the previous call's (rule 1), on
        a slot boundary when there are slots (rule 3)."""
        if type(now) is not float or not self.clock <= now < _INF:  # (a valid float passes here)
            if isinstance(now, bool) or not isinstance(now, (int, float, np.integer, np.floating)):
                raise self._fail("now", f"must be a number of seconds ({call}), got {now!r}")
            if not 0.0 <= now < _INF:
                raise self._fail("now", f"must be a finite number >= 0 of seconds ({call}), got {now!r}")
            if now < self.clock:
                raise self._fail("now", f"must not go back (rule 1): {call} at {now} is earlier than the previous "
                                        f"call's {self.clock}")
        slot = self.slot
        if slot > 0:
            q = now / slot
            if abs(q - round(q)) > SLOT_TOL * max(1.0, abs(q)):
                raise self._fail("now", f"must be a slot boundary, a multiple of {slot:g} s within {SLOT_TOL:g} "
                                        f"relative (rule 3), got {now} ({call})")

    # ------------------------------------------------------------------ arrivals (rules 2 and 3)
    def check_arrival(self, job: Job, now: float) -> None:
        """An arrival: ``now`` (:meth:`check_time`), at or after ``slot_ceil(job.release)``
        (rule 3), ``seq`` not below the previous arrival's of this instant (rule 2), not a job
        that arrived before."""
        self.check_time(now, f"on_arrival of job {job.id}")
        first = slot_ceil(job.release, self.slot)
        if now < first:
            at = f" (the first slot boundary at or after it is {first})" if self.slot > 0 else ""
            raise self._fail("now", f"must be at or after the job's release (rule 3): job {job.id} arrives at {now}, "
                                    f"before its release {job.release}{at}")
        if job.id in self.state:
            raise self._fail("job.id", f"job {job.id} arrived twice")
        if self.last_seq is not None and now == self.clock and job.seq < self.last_seq:
            raise self._fail("job.seq", f"must not decrease among the arrivals of one instant (rule 2): job {job.id} "
                                        f"(seq {job.seq}) arrives at {now} after a job of seq {self.last_seq}")

    def advance(self, now: float) -> None:
        """The driver's clock moves to ``now`` (checked by :meth:`check_time`); a later instant
        starts a new order of arrivals (rule 2: ``seq`` orders the arrivals of one instant)."""
        if now > self.clock:
            self.last_seq = None
        self.clock = now

    def record_arrival(self, job: Job, now: float) -> None:
        self.advance(now)
        self.state[job.id] = _ARRIVED
        self.last_seq = job.seq if self.last_seq is None else max(self.last_seq, job.seq)
        self.fresh = True

    # ------------------------------------------------------------------ completions (rule 5)
    def check_completion(self, job_id: str, now: float) -> None:
        """A completion: ``now``, and ``job_id`` a started job that has not completed."""
        if not isinstance(job_id, str):
            raise self._fail("job_id", f"must be a job id (a string), got {job_id!r}")
        self.check_time(now, f"on_completion of job {job_id}")
        st = self.state.get(job_id)
        if st != _STARTED:
            why = {None: "never arrived", _ARRIVED: "arrived but was never started",
                   _DONE: "has completed already"}[st]
            raise self._fail("job_id", f"must name a started job that has not completed (rule 5): "
                                       f"on_completion({job_id!r}) at {now}, but the job {why}")

    def record_completion(self, job_id: str, now: float) -> None:
        self.advance(now)
        self.state[job_id] = _DONE
        servers, counts = self.held.pop(job_id)
        for m, c in zip(servers, counts):
            self.room[m] += c
        self.fresh = True

    # ------------------------------------------------------------------ decide (rules 1, 5, 6)
    def check_decide(self, now: float) -> None:
        """``now`` of a ``decide``, and not a second one at this instant with nothing new (rule 1)."""
        self.check_time(now, "decide")
        if now == self.decided_at and not self.fresh:
            raise self._fail("now", f"must advance between two decide calls unless a completion or an arrival was "
                                    f"delivered in between (rule 1: one decide per instant), got decide twice at {now}")

    def read_view(self, cluster: ClusterView) -> np.ndarray:
        """The view's free GPUs per node (a new int64 array, node positions), checked: it names
        exactly the scheduler's nodes (``cluster.free``), with their sizes (``cluster.size[n]``),
        and each free count is an integer in [0, size minus the GPUs held there]
        (``cluster.free[n]``, rule 5)."""
        if not isinstance(cluster, ClusterView):
            raise self._fail("cluster", f"must be an optkit.online.ClusterView, got {type(cluster).__name__}")
        M = len(self.ids)
        arr = cluster.free_array
        if arr is not None and self.indexed and len(arr) == M:
            if arr.dtype.kind not in "iu":
                raise self._fail("cluster.free", f"must hold integer GPU counts, got an array of {arr.dtype}")
            size = cluster.size_array
            if size is not self._sizes_seen:  # a driver that reuses its view passes one size array per run
                if size is None or len(size) != M or not np.array_equal(size, self.size):
                    bad = 0 if size is None or len(size) != M else int(np.flatnonzero(size != self.size)[0])
                    got = None if size is None or len(size) != M else size[bad]
                    raise self._fail(f"cluster.size[{bad}]", f"must be the node's {int(self.size[bad])} GPUs, "
                                                             f"got {got!r}")
                self._sizes_seen = size
            free = arr.astype(np.int64)
            # 0 <= free <= room in one comparison: a negative count read as unsigned is above any room
            if not np.count_nonzero(free.view(np.uint64) > self.room.view(np.uint64)):
                return free
        else:
            fm, sm = cluster.free, cluster.size
            if len(fm) != M or any(n not in fm for n in self.ids):
                raise self._fail("cluster.free", f"must name exactly the scheduler's {M} nodes")
            vals = []
            for n, g in zip(self.ids, self.size.tolist()):
                got = sm.get(n)
                if got is None or not _is_int(got) or got != g:
                    raise self._fail(f"cluster.size[{n!r}]", f"must be the node's {g} GPUs, got {got!r}")
                f = fm[n]
                if not _is_int(f):
                    raise self._fail(f"cluster.free[{n!r}]", f"must be an integer number of GPUs, got {f!r}")
                vals.append(int(f))
            free = np.array(vals, dtype=np.int64)
        bad_at = np.flatnonzero((free < 0) | (free > self.room))
        if bad_at.size:
            i = int(bad_at[0])
            f, g, room = int(free[i]), int(self.size[i]), int(self.room[i])
            why = ("must be >= 0" if f < 0 else f"must be at most the node's {g} GPUs" if f > g else
                   f"must be at most the {room} GPUs of the node's {g} that no started, not yet completed job "
                   "holds (rule 5: the driver applies each decision and reports each completion)")
            raise self._fail(f"cluster.free[{self.ids[i]!r}]", f"{why}, got {f}")
        return free

    def record_start(self, job_id: str, servers: Sequence[int], counts: Sequence[int]) -> None:
        """A started job: ``counts[j]`` GPUs on node position ``servers[j]``."""
        self.state[job_id] = _STARTED
        self.held[job_id] = (tuple(servers), tuple(counts))
        for m, c in zip(servers, counts):
            self.room[m] -= c

    def record_decide(self, now: float) -> None:
        self.clock = now
        self.decided_at = now
        self.fresh = False
        self.last_seq = None

    def check_wakeup(self, now: float) -> None:
        self.check_time(now, "next_wakeup")

    def record_wakeup(self, now: float) -> None:
        self.advance(now)
