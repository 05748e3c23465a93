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
6. **Several starts in one instant.** A policy reports each start to the view with
   ``cluster.reserve(decision)`` before it places the next job, and returns the same decisions
   from ``decide``. ``reserve`` takes the GPUs from the view's free counts (the view holds its own
   copy: the driver's counts change only when it applies the decisions), and calls the driver's
   ``on_reserve`` hook, if it gave one, so that a driver with a network model can update what
   :meth:`ClusterView.pair_capacity` answers next: the nimp replay adds the new job's traffic
   there, and the next placement of the same instant sees the bandwidth that remains.

A job can be given as "k GPUs for d seconds" (:attr:`Job.duration`) without a model of its
stages; a policy of a problem whose jobs have models (ddlwmp) reads such a job as one stage of k
replicas that exchange nothing, whose one iteration takes d seconds on any k GPUs.

Nodes may differ in size wherever the problem's model allows it: nimp's machines (Fang et al.,
Sec. III) each have their own GPU count; ddlwmp's servers (Luo et al., Sec. III-A) all have g,
and its scheduler rejects a view of mixed sizes with an :class:`~optkit.errors.InputError`.

Two drivers ship with optkit and keep these rules: ``optkit.formulations.ddlwmp.simulate`` and
``optkit.formulations.nimp.replay`` (they build their views with :meth:`ClusterView.of_arrays`,
nodes 0..M-1, so no dictionary is built per instant); ``docs/howto/drive-a-srpt.rst`` has a
third, of 40 lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generic, Hashable, Iterator, Mapping, Protocol, Sequence, Tuple, TypeVar, Union

import numpy as np

from optkit.errors import InputError

__all__ = ["Job", "ClusterView", "Decision", "OnlinePolicy", "COLLECTIVES", "node_sizes"]

COLLECTIVES = ("ring", "halving-doubling")
_FAST_COLLECTIVES = (None, *COLLECTIVES)
_INF = float("inf")
N = TypeVar("N", bound=Hashable)
"""A node id: the caller's own type (``str``, ``int``, ...), kept by every view and decision."""


@dataclass(frozen=True)
class Job:
    """A job as a policy sees it on arrival.

    Fields: ``id`` (unique), ``release`` (r, seconds), ``gpus`` (all needed at once: gang
    scheduling), ``seq`` (the tie key among jobs released at the same instant, lower first: rule
    2), ``model`` (the name of its model, a key of the policy's ``models`` in ddlwmp; ``None``
    with ``duration``), ``predicted_iterations`` (ñ in ddlwmp; ``None``: no prediction) and
    ``duration`` ("k GPUs for d seconds": the run time in seconds of a job without a model),
    ``param_bytes`` (K, bytes of the model's parameters that its workers synchronise: nimp) and
    ``collective`` (``"ring"`` or ``"halving-doubling"``, nimp; ``None``: halving-doubling when
    ``gpus`` is a power of two, else ring), ``placement_sensitive`` (nimp: whether the job's
    throughput suffers when its workers are spread, Tiresias' consolidation test; ``None``: read
    from ``model``, as a nimp instance file does). Which fields a policy needs is its problem's:
    ddlwmp takes exactly one of ``model`` and ``duration``; nimp takes ``param_bytes`` (Titan needs
    it; the baselines ignore it) and reads ``placement_sensitive``, else ``model`` as a network name
    (Tiresias' sensitivity).
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

    def __post_init__(self) -> None:
        r, n = self.release, self.predicted_iterations
        if (type(self.id) is str and self.id and type(self.gpus) is int and self.gpus >= 1 and type(self.seq) is int
                and type(r) is float and 0.0 <= r < _INF and (n is None or type(n) is float and 0.0 <= n < _INF)
                and self.duration is None and self.collective in _FAST_COLLECTIVES
                and (self.param_bytes is None or type(self.param_bytes) is float and 0.0 <= self.param_bytes < _INF)
                and (self.model is None or type(self.model) is str and self.model)
                and (self.placement_sensitive is None or type(self.placement_sensitive) is bool)):
            return  # the common case of a simulator's jobs, checked in a few comparisons
        if not isinstance(self.id, str) or not self.id:
            raise InputError("job.id", f"must be a non-empty string, got {self.id!r}")
        if isinstance(self.gpus, bool) or not isinstance(self.gpus, int) or self.gpus < 1:
            raise InputError("job.gpus", f"must be an integer >= 1, got {self.gpus!r}")
        if isinstance(self.seq, bool) or not isinstance(self.seq, int):
            raise InputError("job.seq", f"must be an integer (the tie order of simultaneous arrivals), got {self.seq!r}")
        for name in ("release", "predicted_iterations", "duration", "param_bytes"):
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


@dataclass(frozen=True)
class Decision(Generic[N]):
    """Start ``job_id`` now, taking ``gpus[node]`` GPUs on each node.

    replicas: per pipeline stage, the node of each replica (ddlwmp), when the policy maps them;
    nimp: one row, the node of each worker.
    time_per_iteration: alpha (s per iteration) of this placement (ddlwmp, eq. 7), so a driver
    that knows the true iteration count n computes the completion ``now + n * alpha``.
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
    free, size
        Free GPUs and GPUs of every node, keyed by the caller's ids, in the caller's order (which
        breaks ties between equal nodes). The view copies ``free``: :meth:`reserve` takes from
        that copy, never from the driver's counts.
    pair_capacity
        Optional (nimp): the bytes each pair of nodes may carry per communication phase, as one
        number for every pair, a mapping ``{(a, b): bytes}`` (both orders, or one, read
        symmetrically; a missing pair may carry anything), or a callable returning either, asked
        again after each :meth:`reserve` (rule 6 of :mod:`optkit.online`).
    on_reserve
        Optional: called with each decision the policy reserves (rule 6).

    Notes
    -----
    :meth:`of_arrays` builds the view of a driver that numbers its nodes 0..M-1 (optkit's
    simulators): ``free``/``size`` are then mappings over ``free_array``/``size_array``, and
    ``pair_capacity`` may be an M x M array.
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
    integers >= 1 (an :class:`~optkit.errors.InputError` naming ``nodes`` or ``nodes[id]``)."""
    if not isinstance(nodes, Mapping) or not nodes:
        raise InputError("nodes", "must map node ids to their GPU counts, and name at least one node", problem=problem)
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
