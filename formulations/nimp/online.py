"""Titan and the baselines as online placement policies (:mod:`optkit.online`), nodes by id.

Each policy is a strict FIFO queue in front of one phase-1 placement rule (Fang et al., Sec. V:
the replay's admission is the same for every policy, so a comparison is of placements): at each
``decide`` the head job is placed while the idle GPUs of the cluster suffice; the first that
does not fit blocks those behind it. Each placement is reserved in the view before the next
(rule 6 of :mod:`optkit.online`), so the next placement of the same instant sees its GPUs and,
where the driver models the network (:func:`.replay.replay`), its traffic in the pair capacity.
None of them asks for a wake-up: only arrivals and completions change their decisions.

* :class:`TitanPolicy`: Titan (Algorithm 3) with P from ``cluster.pair_capacity()``. When Titan
  finds no placement that meets P but the idle GPUs suffice, it places with P relaxed (the
  resource constraint only) and counts the job in :attr:`TitanPolicy.relaxed`, so that every
  policy starts a job at the same condition. A view without a pair capacity is P = infinity.
* :class:`ElasticflowPolicy`, :class:`HivedPolicy`, :class:`TiresiasPolicy`: the paper's
  baselines (:mod:`.baselines`); they ignore P, as the systems do.

A single-node job (``Job.single_node``, :mod:`optkit.online`) is admitted only when one machine
has all its N GPUs idle (otherwise it blocks the queue, as any head that does not fit), and is
placed on one machine by each policy's own rule restricted to the machines that hold it
(optkit's reading; none of the systems states one): Titan places it as its closed form places a
one-worker job (Alg. 3 with no pair crossing machines, so P plays no part): under the default
``repaired`` and under ``pair-grouping``, the non-idle machine with the fewest idle GPUs that
holds it (the most under ``worst-fit`` or ``pool-prefix``), else the idle machine with the most;
under ``pseudo-code``, the first non-idle machine that holds it, else the first idle one;
Elasticflow and HiveD by their best-fit rules over those machines (HiveD: non-idle machines
first), which take one machine when one holds the whole job; Tiresias consolidates it (the machine with the most idle GPUs that holds
it), whatever its model; a plug-in (:class:`AlgorithmPolicy`) is asked on the instance of
those machines with P = 0 (no byte may cross machines), and where its answer is not one machine,
Elasticflow's best fit over them is taken and counted in ``relaxed``.

The view's pair capacity is validated as :func:`.place.place` validates its ``capacity`` (a
nimp instance file's rule): one finite number >= 0, or a mapping naming every unordered pair of
distinct nodes once (either order) with such numbers, or from an array view (nodes 0..M-1) a
symmetric M x M array of them; ``None`` is no bandwidth constraint. Anything else is an
:class:`~optkit.errors.InputError` naming ``cluster.pair_capacity``. (An array from an array
view is trusted by the policy classes, which the replay drives with the arrays it builds; the
scheduler, :class:`OnlineScheduler`, checks it.)

A job is an :class:`optkit.online.Job`: ``gpus`` is N (one worker per GPU), ``param_bytes`` K
(Titan needs it; the baselines ignore it), ``collective`` (``None``: halving-doubling when N is
a power of two, else ring, as the replay's jobs), ``model`` a network name (Tiresias consolidates
VGG and AlexNet). Machines may differ in size (the paper's K_s per machine).

:class:`OnlineScheduler` is what a scheduler imports: one of these policies by name, with the
cluster's node ids given once, every arrival and view checked against them.

:func:`run_policy` is the formulation's policy driver (``Formulation.run_policy``): it runs any
online placement policy, a user's :class:`optkit.formulation.OnlinePolicyPlugin` included, on one
nimp instance, so ``optkit solve``, ``compare`` and ``simulate`` take such a plug-in as they take
ddlwmp's; the cluster replay (:func:`.replay.replay`) drives the same policy over a job stream.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Generic, Hashable, Mapping, Sequence, TypeVar

import numpy as np

from optkit.errors import InputError
from optkit.online import ClusterView, Decision, Job, ProtocolState, node_sizes
from optkit.validation import check_keywords

from .baselines import elasticflow, hived, tiresias
from .model import Job as NimpJob, NimpInstance, Phase, halving_doubling_phases, placement_sensitive, ring_phases
from .place import capacity_in_file_form
from .titan import check_readings, place_unchecked, place_with_and_without_capacity

__all__ = ["FifoPolicy", "TitanPolicy", "ElasticflowPolicy", "HivedPolicy", "TiresiasPolicy", "POLICIES",
           "OnlineScheduler", "MAX_ATTEMPTS", "collective_of", "phases_of", "AlgorithmPolicy", "run_policy",
           "placement_of", "MAX_WAKEUPS", "pair_capacity_of"]

PROBLEM = "nimp"
N = TypeVar("N", bound=Hashable)
# Titan's placement attempts per pass in the replay (each a placement and an Eq. (5) check); past
# that it falls back to step 1's idle-only placement, else to P relaxed. Without it a job that no
# non-idle selection can carry under a tight P tries every (idle count, machine count) pair of a
# 512-machine cluster (minutes per replay); it never binds while P is slack.
MAX_ATTEMPTS = 16

_PHASES: dict[tuple[int, str, float], list[Phase]] = {}


def collective_of(job: Job) -> str:
    """The job's collective: its own, else halving-doubling for N a power of two, else ring."""
    if job.collective is not None:
        return job.collective
    n = job.gpus
    return "halving-doubling" if n & (n - 1) == 0 else "ring"


def phases_of(workers: int, collective: str, param_bytes: float) -> list[Phase]:
    """The collective's phases (:mod:`.model`), cached per (N, collective, K)."""
    key = (workers, collective, param_bytes)
    p = _PHASES.get(key)
    if p is None:
        fn = halving_doubling_phases if collective == "halving-doubling" else ring_phases
        p = _PHASES[key] = fn(workers, param_bytes)
    return p


def _fail(field: str, message: str) -> InputError:
    return InputError(field, message, problem=PROBLEM)


def _holders(idle: np.ndarray, workers: int) -> np.ndarray:
    """``idle`` with the machines that cannot hold ``workers`` shown with no idle GPU."""
    return np.where(idle >= workers, idle, 0)


class FifoPolicy:
    """Strict FIFO admission (module docstring); a subclass's :meth:`place` picks the machines.

    ``decide`` reads the view by node id; from a view built with
    :meth:`optkit.online.ClusterView.of_arrays` (nodes 0..M-1, P as an M x M array or a number)
    it reads the arrays as they are.
    """

    protocol = "optkit.online"
    name = "fifo"
    check_capacity = False  # whether :func:`pair_capacity_of` checks an array view's P (the scheduler's)

    def __init__(self) -> None:
        self.queue: list[Job] = []
        self._head = 0
        self._seen: set[str] = set()
        self._sizes: tuple[np.ndarray | None, list[int]] = (None, [])

    def sizes_list(self, gpus: np.ndarray) -> list[int]:
        """``gpus`` as a list, kept while the driver passes the same array (a driver reusing
        its view passes one array for the whole run)."""
        if self._sizes[0] is not gpus:
            self._sizes = (gpus, gpus.tolist())
        return self._sizes[1]

    # ------------------------------------------------------------------ the protocol
    def on_arrival(self, job: Job, now: float) -> None:
        if not isinstance(job, Job):
            raise _fail("job", f"must be an optkit.online.Job, got {type(job).__name__}")
        if job.id in self._seen:
            raise _fail("job.id", f"job {job.id} arrived twice")
        self._seen.add(job.id)
        self.queue.append(job)

    def on_completion(self, job_id: str, now: float) -> None:
        pass

    def next_wakeup(self, now: float) -> float | None:
        return None

    def place(self, job: Job, idle: np.ndarray, gpus: np.ndarray,
              cluster: ClusterView) -> list[int]:  # pragma: no cover - abstract
        """Machine index of each worker (positions in ``idle``, which suffices); ``cluster`` for
        what else a rule reads (Titan: the pair capacity)."""
        raise NotImplementedError

    def place_single(self, job: Job, idle: np.ndarray, gpus: np.ndarray, cluster: ClusterView) -> list[int]:
        """The placement of a single-node job (some machine's idle GPUs hold it): :meth:`place`
        on the machines that hold it, the others shown with no idle GPU (module docstring); a
        rule that still splits it is a RuntimeError naming the policy."""
        m = self.place(job, _holders(idle, job.gpus), gpus, cluster)
        if len(set(m)) != 1:
            raise RuntimeError(f"policy {self.name} split single-node job {job.id} over machines {sorted(set(m))}")
        return m

    def decide(self, now: float, cluster: ClusterView[N]) -> list[Decision[N]]:
        idle = cluster.free_array
        if idle is not None:
            ids: Sequence[N] | None = None
            gpus = cluster.size_array
            assert gpus is not None
        else:
            ids = list(cluster.free)
            idle = np.fromiter((cluster.free[n] for n in ids), dtype=np.int64, count=len(ids))
            gpus = np.fromiter((cluster.size[n] for n in ids), dtype=np.int64, count=len(ids))
        total = int(idle.sum())
        out: list[Decision[N]] = []
        queue = self.queue
        while self._head < len(queue):
            job = queue[self._head]
            if job.single_node:
                if int(idle.max()) < job.gpus:  # no machine holds it: it blocks the queue
                    break
                m = self.place_single(job, idle, gpus, cluster)
            else:
                if total < job.gpus:
                    break
                m = self.place(job, idle, gpus, cluster)
            taken: dict[int, int] = {}
            for s in m:  # a few machines: a dict beats numpy here
                taken[s] = taken.get(s, 0) + 1
            if ids is None:
                d = Decision(job.id, taken, [m])
            else:
                d = Decision(job.id, {ids[s]: c for s, c in taken.items()}, [[ids[s] for s in m]])
                for s, c in taken.items():  # the view's own counts are reserved below
                    idle[s] -= c
            cluster.reserve(d)
            out.append(d)
            total -= job.gpus
            self._head += 1
        if self._head > 4096:
            del queue[:self._head]
            self._head = 0
        return out

    @property
    def waiting(self) -> int:
        """Jobs queued, not yet started."""
        return len(self.queue) - self._head


_CAPACITY = "cluster.pair_capacity"


def _capacity_number(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not 0 <= v < math.inf:
        raise _fail(where, f"must be a finite number >= 0 (bytes per phase), got {v!r}")
    return float(v)


def pair_capacity_of(cluster: ClusterView, *, check_array: bool = True) -> float | np.ndarray:
    """P from the view as Titan takes it: a number (``None`` given: infinity) or a node x node
    matrix in the view's node order, validated as :func:`.place.place` validates its capacity
    (module docstring): an :class:`~optkit.errors.InputError` naming ``cluster.pair_capacity``
    otherwise. ``check_array=False`` trusts an array (a driver's own, as the replay's)."""
    cap = cluster.pair_capacity()
    if cap is None:
        return math.inf
    nodes = list(cluster.free)
    if isinstance(cap, np.ndarray):
        if check_array:
            M = len(nodes)
            if cap.shape != (M, M) or cap.dtype.kind not in "iuf":
                raise _fail(_CAPACITY, f"must be a number, a pair mapping or a {M} x {M} array of numbers, got an "
                                       f"array of shape {cap.shape} and {cap.dtype}")
            bad = np.argwhere(~np.isfinite(cap) | (cap < 0))
            if len(bad):
                s, u = (int(i) for i in bad[0])
                raise _fail(_CAPACITY, f"must hold finite numbers >= 0 (bytes per phase), got [{s}][{u}] = "
                                       f"{cap[s, u]!r}")
            if not np.array_equal(cap, cap.T):
                s, u = (int(i) for i in np.argwhere(cap != cap.T)[0])
                raise _fail(_CAPACITY, f"must be symmetric (the capacity of the unordered pair {{s, s'}}), but "
                                       f"[{s}][{u}] = {cap[s, u]:g} and [{u}][{s}] = {cap[u, s]:g}")
        return cap
    if isinstance(cap, Mapping):
        try:
            rows = capacity_in_file_form(cap, nodes)  # every unordered pair of distinct nodes, once (place()'s rule)
        except InputError as err:
            raise _fail(_CAPACITY + err.field[len("pair_capacity_bytes"):], err.message) from None
        for pair, v in cap.items():
            _capacity_number(v, f"{_CAPACITY}[{pair!r}]")
        return np.asarray(rows, dtype=float)
    if isinstance(cap, bool) or not isinstance(cap, (int, float, np.integer, np.floating)):
        raise _fail(_CAPACITY, f"must be a number, a pair mapping or an array, got {cap!r}")
    return _capacity_number(cap, _CAPACITY)


def _matrix(cluster: ClusterView, policy: FifoPolicy) -> float | np.ndarray:
    return pair_capacity_of(cluster, check_array=policy.check_capacity)


class TitanPolicy(FifoPolicy):
    """Titan (Alg. 3) with P from the view, relaxed to P = infinity when it finds nothing (module
    docstring). Readings ``titan_algorithm``, ``titan_step2``, ``titan_tie_break``
    (:func:`.titan.titan`). Counters: :attr:`relaxed` (jobs placed with P relaxed),
    :attr:`bound` (jobs whose placement P changed: the placement without P differs and breaks P),
    :attr:`multi` (multi-machine placements without P)."""

    name = "titan"

    def __init__(self, *, titan_step2: str = "fix-idle-count", titan_tie_break: str = "least-traffic",
                 max_attempts: int | None = MAX_ATTEMPTS, titan_algorithm: str = "repaired") -> None:
        super().__init__()
        check_readings(titan_algorithm, titan_step2, titan_tie_break)
        if max_attempts is not None and (isinstance(max_attempts, bool) or not isinstance(max_attempts, int)
                                         or max_attempts < 1):
            raise InputError("max_attempts", f"must be an integer >= 1 or None, got {max_attempts!r}")
        self.relaxed = 0
        self.bound = 0
        self.multi = 0
        self.kw: dict[str, Any] = {"titan_step2": titan_step2, "titan_tie_break": titan_tie_break,
                                   "max_attempts": max_attempts, "titan_algorithm": titan_algorithm}

    def on_arrival(self, job: Job, now: float) -> None:
        if isinstance(job, Job) and job.param_bytes is None and job.gpus > 1 and not job.single_node:
            raise _fail("job.param_bytes", f"job {job.id}: Titan needs K, the bytes its {job.gpus} workers "
                                           "synchronise (the pair traffic it checks against P)")
        super().on_arrival(job, now)

    def place(self, job: Job, idle: np.ndarray, gpus: np.ndarray, cluster: ClusterView) -> list[int]:
        workers = job.gpus
        phases = phases_of(workers, collective_of(job), job.param_bytes or 0.0)
        if workers == 1:
            m = place_unchecked(gpus, idle, math.inf, phases, workers=1, **self.kw)
            assert m is not None
            return m
        m, free = place_with_and_without_capacity(gpus, idle, _matrix(cluster, self), phases, workers=workers,
                                                  **self.kw)
        assert free is not None  # the idle GPUs suffice
        if len(set(free)) > 1:
            self.multi += 1
            if m != free:
                self.bound += 1
        if m is None:
            self.relaxed += 1
            m = free
        return m

    def place_single(self, job: Job, idle: np.ndarray, gpus: np.ndarray, cluster: ClusterView) -> list[int]:
        """A single-node job as Titan's closed form places one worker (module docstring), over
        the machines whose idle GPUs hold all N."""
        n = job.gpus
        fits = idle >= n
        frag = np.flatnonzero(fits & (idle < gpus))
        pseudo = self.kw["titan_algorithm"] == "pseudo-code"
        if len(frag):
            if pseudo:
                s = frag[0]
            else:
                r = idle[frag]
                best = self.kw["titan_step2"] == "fix-idle-count" and self.kw["titan_tie_break"] != "worst-fit"
                s = frag[np.argmin(r) if best else np.argmax(r)]
        else:
            whole = np.flatnonzero(fits & (idle == gpus))
            s = whole[0] if pseudo else whole[np.argmax(idle[whole])]
        return [int(s)] * n


class AlgorithmPolicy(FifoPolicy):
    """Any registered nimp algorithm (a plug-in: :mod:`optkit.registry`) behind the FIFO queue.

    Each job's placement is the algorithm's solution of the nimp instance the view describes at
    that instant: the machines' sizes and idle GPUs, and P from the view (negative remainders
    read as 0). Where it finds nothing, or its placement breaks a constraint of Eq. (1), P is
    relaxed to ``2NK + 1`` bytes (more than all of a phase's pairs exchange: no bandwidth
    limit), as :class:`TitanPolicy` relaxes to infinity, so every policy starts a job at the same
    condition. Counter: :attr:`relaxed`. A placement that breaks the idle GPUs even then is a
    :class:`RuntimeError` naming the policy and the job.

    Per job this is what :func:`optkit.solve.solve` does, without what costs a replay of
    thousands of jobs on hundreds of machines its time (cProfile, 200 ITP jobs on 512 machines:
    0.2 s a job, 97 % of it in ``NimpInstance.from_dict`` checking the 512 x 512 pair matrix
    entry by entry): the instance is built from the view's arrays (their numbers are the
    driver's, already valid; the machines are shared objects), the parameters are resolved and
    checked once (:func:`optkit.readings.resolve_params`), and the placement is validated as
    ``evaluate`` validates it (one machine of the view per worker, within the idle GPUs, and P
    per phase and machine pair: :func:`.model.bandwidth_violations`) in time that grows with the
    job's workers and phases, not with the cluster (``evaluate``'s criteria are not needed: the
    replay measures its own metrics).
    """

    def __init__(self, algorithm: str, *, seed: int | None = None, params: Mapping[str, Any] | None = None) -> None:
        from optkit import registry
        from optkit.readings import resolve_params
        from optkit.solve import check_algorithm

        super().__init__()
        f = registry.get(PROBLEM)
        self.objective = check_algorithm(f, algorithm, None)
        self.run = f.algorithms[algorithm].run
        self.name = algorithm
        self.seed = seed
        self.params = resolve_params(f, algorithm, dict(params or {}))
        self.relaxed = 0
        self._machines: dict[tuple[int, int], Any] = {}

    def instance(self, job: Job, idle: np.ndarray, gpus: np.ndarray, cap: float | np.ndarray) -> NimpInstance:
        """The nimp instance of the view (trusted: the driver's numbers; ``cap`` a number or the
        symmetric M x M matrix, copied read-only)."""
        from optkit.validation import trusted

        from .model import Machine

        M = len(idle)
        with trusted():
            ms = []
            for g, i in zip(gpus.tolist(), idle.tolist()):
                m = self._machines.get((g, i))
                if m is None:
                    m = self._machines[(g, i)] = Machine(g, i)
                ms.append(m)
            scalar = not isinstance(cap, np.ndarray)
            arr = np.full((M, M), float(cap)) if scalar else np.maximum(cap, 0.0)
            arr.flags.writeable = False
            nj = NimpJob(job.gpus, collective_of(job), float(job.param_bytes or 0.0) or 1.0, None, job.model)
            return NimpInstance(tuple(ms), arr, scalar, nj)

    def _valid(self, inst: NimpInstance, solution: Any, idle: np.ndarray) -> list[int] | None:
        """The placement if it meets Eq. (1) on ``inst`` (module docstring of the class), else None."""
        from .model import bandwidth_violations

        mow = solution.get("machine_of_worker") if isinstance(solution, Mapping) else None
        N, M = inst.N, inst.M
        if not isinstance(mow, (list, tuple)) or len(mow) != N:
            return None
        load: dict[int, int] = {}
        for s in mow:
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= s < M:
                return None
            load[int(s)] = load.get(int(s), 0) + 1
        if any(c > idle[s] for s, c in load.items()):
            return None
        m = [int(s) for s in mow]
        if len(load) > 1 and bandwidth_violations(inst, np.asarray(m, dtype=np.int64), limit=1):
            return None
        return m

    def place_single(self, job: Job, idle: np.ndarray, gpus: np.ndarray, cluster: ClusterView) -> list[int]:
        """A single-node job: the plug-in's answer on the machines that hold it with P = 0 if it
        is one machine, else Elasticflow's best fit over them, counted in ``relaxed``."""
        held = _holders(idle, job.gpus)
        inst = self.instance(job, held, gpus, 0.0)
        res = self.run(inst, objective=self.objective, time_limit=None, seed=self.seed, **self.params)
        m = None if res is None or res.solution is None else self._valid(inst, res.solution, held)
        if m is not None:  # P = 0 and K >= 1: _valid rejects every split (some pair crosses machines)
            return m
        self.relaxed += 1
        fit = elasticflow(held.tolist(), workers=job.gpus)
        assert fit is not None and len(set(fit)) == 1  # a machine holds it: best fit takes it whole
        return fit

    def place(self, job: Job, idle: np.ndarray, gpus: np.ndarray, cluster: ClusterView) -> list[int]:
        k = float(job.param_bytes or 0.0)
        cap = _matrix(cluster, self)
        relaxed = 2.0 * job.gpus * max(k, 1.0) + 1.0  # above a whole phase's bytes: no limit
        given: float | np.ndarray = cap if isinstance(cap, np.ndarray) else (cap if math.isfinite(cap) else relaxed)
        res: Any = None
        for attempt, p in enumerate((given, relaxed)):
            inst = self.instance(job, idle, gpus, p)
            res = self.run(inst, objective=self.objective, time_limit=None, seed=self.seed, **self.params)
            m = None if res is None or res.solution is None else self._valid(inst, res.solution, idle)
            if m is not None:
                self.relaxed += attempt
                return m
        what = "no placement" if res is None or res.solution is None else "only placements that break Eq. (1)"
        raise RuntimeError(f"policy {self.name} found {what} for job {job.id} ({job.gpus} workers) even with "
                           f"P relaxed, though {int(idle.sum())} GPUs are idle: "
                           f"{getattr(getattr(res, 'status', None), 'value', None)} {getattr(res, 'message', '')}")


class ElasticflowPolicy(FifoPolicy):
    """Elasticflow's best fit; reading ``elasticflow_machines``."""

    name = "elasticflow"

    def __init__(self, *, elasticflow_machines: str = "any") -> None:
        super().__init__()
        if elasticflow_machines not in ("any", "idle-only"):
            raise InputError("elasticflow_machines", f"must be any or idle-only, got {elasticflow_machines!r}")
        self.machines = elasticflow_machines

    def place(self, job: Job, idle: np.ndarray, gpus: np.ndarray, cluster: ClusterView) -> list[int]:
        m = elasticflow(idle, workers=job.gpus, gpus=self.sizes_list(gpus), elasticflow_machines=self.machines)
        assert m is not None
        return m


class HivedPolicy(FifoPolicy):
    """HiveD's fragments-first placement."""

    name = "hived"

    def place(self, job: Job, idle: np.ndarray, gpus: np.ndarray, cluster: ClusterView) -> list[int]:
        m = hived(self.sizes_list(gpus), idle, workers=job.gpus)
        assert m is not None
        return m


class TiresiasPolicy(FifoPolicy):
    """Tiresias; reading ``tiresias_spread``; sensitivity from the job's ``model`` name."""

    name = "tiresias"

    def __init__(self, *, tiresias_spread: str = "emptiest") -> None:
        super().__init__()
        if tiresias_spread not in ("emptiest", "first-fit", "best-fit"):
            raise InputError("tiresias_spread", f"must be emptiest, first-fit or best-fit, got {tiresias_spread!r}")
        self.spread = tiresias_spread

    def place(self, job: Job, idle: np.ndarray, gpus: np.ndarray, cluster: ClusterView) -> list[int]:
        sensitive = placement_sensitive(job.placement_sensitive, job.model)
        m = tiresias(idle.tolist(), workers=job.gpus, placement_sensitive=sensitive, tiresias_spread=self.spread)
        assert m is not None
        return m

    def place_single(self, job: Job, idle: np.ndarray, gpus: np.ndarray, cluster: ClusterView) -> list[int]:
        """A single-node job is consolidated whatever its model: the machine with the most idle
        GPUs (lowest index among ties), which holds it."""
        m = tiresias(idle.tolist(), workers=job.gpus, placement_sensitive=True)
        assert m is not None and len(set(m)) == 1
        return m


POLICIES: dict[str, type[FifoPolicy]] = {p.name: p for p in (TitanPolicy, ElasticflowPolicy, HivedPolicy,
                                                               TiresiasPolicy)}


class OnlineScheduler(Generic[N]):
    """One nimp policy (``titan`` or a baseline) as an :class:`optkit.online.OnlinePolicy`.

    Parameters
    ----------
    policy
        ``titan`` (Algorithm 3, P relaxed when it finds nothing), ``elasticflow``, ``hived`` or
        ``tiresias``.
    nodes
        ``{node id: GPUs}`` of every machine; sizes may differ (K_s per machine, Sec. III).
    **readings
        The policy's readings (``titan_algorithm``, ``titan_step2``, ``titan_tie_break``,
        ``max_attempts``; ``elasticflow_machines``; ``tiresias_spread``).

    References
    ----------
    Fang et al., "Titan", Sec. IV (Algorithms 1-3), Sec. V-A (the baselines);
    :mod:`optkit.online` (the protocol).

    Notes
    -----
    Guarantee: Titan's Theorems 4-5 claim (1 - 1/e) per criterion for one job; none is proven
    for the online replay, nor for the baselines.

    Units: seconds (``now``); GPUs; bytes per phase (the view's pair capacity), bytes (K).

    Every call is checked against the protocol (:class:`optkit.online.ProtocolState`; no slots:
    times are used as they are, and a job may arrive at its release or later). Each view passed
    to ``decide`` must name exactly the scheduler's nodes, with their sizes, and free counts that
    are integers from 0 to the GPUs no started, not yet completed job holds; its pair capacity
    (:meth:`optkit.online.ClusterView.pair_capacity`) is Titan's P, validated as
    :func:`.place.place` validates it (module docstring); none means no bandwidth constraint.
    The misuses and their fields are listed in :mod:`optkit.online`.

    Examples
    --------
    Two 8-GPU hosts, ``a`` with 2 GPUs busy; a 4-worker job of a 100 MB model goes to the
    non-idle host, which Titan prefers to opening an idle one:

    >>> from optkit.online import ClusterView, Job
    >>> s = OnlineScheduler("titan", nodes={"a": 8, "b": 8})
    >>> s.on_arrival(Job("j1", release=0.0, gpus=4, duration=3600.0, param_bytes=100e6), 0.0)
    >>> s.decide(0.0, ClusterView({"a": 6, "b": 8}, {"a": 8, "b": 8}, pair_capacity=50e6))
    [Decision(job_id='j1', gpus={'a': 4}, replicas=[['a', 'a', 'a', 'a']], time_per_iteration=None, extra={})]

    A pair mapping must name every pair of nodes, as for :func:`.place.place`:

    >>> s.on_arrival(Job("j2", release=1.0, gpus=4, param_bytes=100e6), 1.0)
    >>> s.decide(1.0, ClusterView({"a": 2, "b": 8}, {"a": 8, "b": 8}, pair_capacity={}))
    Traceback (most recent call last):
    ...
    optkit.errors.InputError: nimp: cluster.pair_capacity has no capacity for the pair {'a', 'b'}
    """

    protocol = "optkit.online"

    def __init__(self, policy: str = "titan", *, nodes: Mapping[N, int], **readings: Any) -> None:
        if policy not in POLICIES:
            raise _fail("policy", f"must be one of {', '.join(POLICIES)}, got {policy!r}")
        self.size = node_sizes(nodes, problem=PROBLEM)
        self.total_gpus = sum(self.size.values())
        self.largest = max(self.size.values())
        taken = [p.name for p in inspect.signature(POLICIES[policy]).parameters.values() if p.kind is p.KEYWORD_ONLY]
        check_keywords(readings, taken, f"the {policy} scheduler", problem=PROBLEM)
        try:
            self.policy = POLICIES[policy](**readings)
        except InputError as exc:  # a reading's value
            raise exc.with_problem(PROBLEM) from None
        self.policy.check_capacity = True
        self.name = policy
        self.state = ProtocolState(list(self.size), list(self.size.values()), slot=0.0, problem=PROBLEM)

    def on_arrival(self, job: Job, now: float) -> None:
        """Check the call and ``job`` (its GPUs against the cluster's and, single-node, against
        the largest node's; the policy checks the rest) and queue it."""
        if not isinstance(job, Job):
            raise _fail("job", f"must be an optkit.online.Job, got {type(job).__name__}")
        self.state.check_arrival(job, now)
        if job.gpus > self.total_gpus:
            raise _fail("job.gpus", f"job {job.id} needs {job.gpus} GPUs but the cluster has {self.total_gpus}: "
                                    "it could never start")
        if job.single_node and job.gpus > self.largest:
            raise _fail("job.single_node", f"job {job.id} needs {job.gpus} GPUs on one node but the largest node has "
                                           f"{self.largest}: it could never start")
        self.policy.on_arrival(job, now)
        self.state.record_arrival(job, now)

    def on_completion(self, job_id: str, now: float) -> None:
        """Check the call (a started job, once) and tell the policy."""
        self.state.check_completion(job_id, now)
        self.policy.on_completion(job_id, now)
        self.state.record_completion(job_id, now)

    def decide(self, now: float, cluster: ClusterView[N]) -> list[Decision[N]]:
        """The starts, by node id; the call, the view and its pair capacity are checked first
        (class docstring)."""
        st = self.state
        st.check_decide(now)
        st.read_view(cluster)
        pair_capacity_of(cluster)
        out = self.policy.decide(now, cluster)
        index = None if cluster.free_array is not None and st.indexed else st.index
        for d in out:  # node positions: the view's own (an array view) or by id
            nodes: Any = list(d.gpus)
            st.record_start(d.job_id, nodes if index is None else [index[n] for n in nodes], list(d.gpus.values()))
        st.record_decide(now)
        return out

    def next_wakeup(self, now: float) -> float | None:
        self.state.check_wakeup(now)
        w = self.policy.next_wakeup(now)
        self.state.record_wakeup(now)
        return w

    @property
    def waiting(self) -> int:
        """Jobs queued, not yet started."""
        return self.policy.waiting


# ----------------------------------------------------------------------------- the policy driver
MAX_WAKEUPS = 1000
"""Wake-ups :func:`run_policy` grants a policy that has not started the instance's job."""


def placement_of(decision: Decision, workers: int, machines: int, *, policy: str = "policy") -> list[int]:
    """The machine of each worker that a nimp ``decision`` names, in O(workers): its one row of
    ``replicas`` (N machine indices 0..M-1) or, without replicas, ``gpus`` ({machine: workers})
    expanded in the order given; where both are given they must agree. An
    :class:`~optkit.errors.InputError` naming the field (``decision.replicas``,
    ``decision.gpus``) when the decision is not one machine per worker of the view's machines.
    Whether the machines hold the workers (idle GPUs) and carry their traffic (P) is not checked
    here: that is ``evaluate``'s, or the replay driver's."""
    def bad_node(v: Any) -> bool:
        return isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < machines

    rows = decision.replicas
    if rows is not None:
        if len(rows) != 1 or len(rows[0]) != workers:
            raise _fail("decision.replicas", f"must be one row of {workers} machines, one per worker (policy "
                                             f"{policy}, job {decision.job_id}), got rows of {[len(r) for r in rows]}")
        m = list(rows[0])
        for v in m:
            if bad_node(v):
                raise _fail("decision.replicas", f"must name machines of the view, 0..{machines - 1} (policy "
                                                 f"{policy}, job {decision.job_id}), got {v!r}")
        m = [int(v) for v in m]
        if decision.gpus:
            counts: dict[int, int] = {}
            for v in m:
                counts[v] = counts.get(v, 0) + 1
            if counts != {int(k): int(c) for k, c in decision.gpus.items() if not bad_node(k)}:
                raise _fail("decision.gpus", f"must count the workers of replicas, {counts} (policy {policy}, "
                                             f"job {decision.job_id}), got {dict(decision.gpus)}")
        return m
    m = []
    for k, c in (decision.gpus or {}).items():
        if bad_node(k):
            raise _fail("decision.gpus", f"must name machines of the view, 0..{machines - 1} (policy {policy}, "
                                         f"job {decision.job_id}), got {k!r}")
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 0:
            raise _fail("decision.gpus", f"must give a number of workers >= 0 per machine (policy {policy}, job "
                                         f"{decision.job_id}), got {c!r} on machine {k}")
        m += [int(k)] * int(c)
    if len(m) != workers:
        raise _fail("decision.gpus", f"must place the job's {workers} workers (policy {policy}, job "
                                     f"{decision.job_id}), got {len(m)}")
    return m


def run_policy(instance: NimpInstance, policy: Any, *, time_limit: float | None = None) -> Any:
    """Drive an online placement ``policy`` (:class:`optkit.online.OnlinePolicy`) over one nimp
    instance: the policy's placement of the instance's job, as a
    :class:`~optkit.result.Result` for ``evaluate`` to score.

    Parameters
    ----------
    instance
        The nimp instance: its machines are the view's nodes 0..M-1 (sizes and idle GPUs), its
        pair capacity the view's :meth:`~optkit.online.ClusterView.pair_capacity` (the number
        when one positive number holds for every pair, else the M x M array), its job the one job that arrives (N GPUs, K, the collective and the
        model name, and its ``placement_sensitive`` flag as the file gives it: ``None`` when the
        file leaves it out, so a policy reads sensitivity from the model name, as the offline
        algorithms do).
    policy
        Any object with ``on_arrival``, ``on_completion``, ``decide`` and ``next_wakeup``.
    time_limit
        Wall-clock seconds for the wake-ups (``None``: no limit).

    Returns
    -------
    optkit.result.Result
        ``feasible`` with ``{"machine_of_worker": [...]}`` (``evaluate`` then checks the idle
        GPUs and P, as for every algorithm); ``infeasible`` when the idle GPUs are fewer than N
        (a proof); ``no_solution`` when the policy never starts the job; ``time_limit``.

    Raises
    ------
    optkit.errors.InputError
        The policy broke the protocol: it started another job (``decision.job_id``), named a
        node that is not a machine, or not one machine per worker (``decision.replicas``,
        ``decision.gpus``: :func:`placement_of`), or asked to be woken at or before now
        (``next_wakeup``).

    References
    ----------
    :mod:`optkit.online` (the protocol, rules 1-6); Fang et al., "Titan", Sec. III (one job's
    placement on the cluster's idle GPUs under P).

    Notes
    -----
    The job arrives at time 0 (``Job("job", 0.0, N, param_bytes=K, collective=..., model=...,
    placement_sensitive=...)``);
    one ``decide`` at 0 follows. A policy that starts nothing and asks for a wake-up is called
    again at that time on the same view (nothing else happens on a one-job instance), at most
    :data:`MAX_WAKEUPS` times. The decision is the placement; the start time plays no part in
    nimp's objectives.

    Guarantee: none of its own (a driver); the policy's.

    Units: seconds (time); GPUs; bytes per phase (P), bytes (K).

    Examples
    --------
    Titan's online policy on a non-idle host with 6 free GPUs and an idle one:

    >>> from optkit.formulations.nimp.model import NimpInstance
    >>> inst = NimpInstance.from_dict({"problem": "nimp", "pair_capacity_bytes": 5e7,
    ...     "machines": [{"gpus": 8, "idle_gpus": 6}, {"gpus": 8, "idle_gpus": 8}],
    ...     "job": {"workers": 4, "collective": "ring", "param_bytes": 1e8}})
    >>> run_policy(inst, TitanPolicy()).solution
    {'machine_of_worker': [0, 0, 0, 0]}
    """
    import time

    from optkit.result import Result, Status

    from .model import solution_dict

    t0 = time.perf_counter()
    N, M = instance.N, instance.M
    idle = np.array([m.idle_gpus for m in instance.machines], dtype=np.int64)
    if int(idle.sum()) < N:
        return Result(Status.INFEASIBLE, message="fewer idle GPUs than workers (resource constraint)")
    gpus = np.array([m.gpus for m in instance.machines], dtype=np.int64)
    # P as the view gives it: the number when one positive number holds for every pair, else the
    # M x M array (a scalar 0, "no cross traffic", too: so plug-ins see what they saw before a
    # view's number could be 0)
    scalar = instance.scalar_capacity or 0.0
    cap: float | np.ndarray = scalar if scalar > 0 else instance.capacity
    name = str(getattr(policy, "name", type(policy).__name__))
    job = Job("job", 0.0, N, 0, instance.job.model, param_bytes=float(instance.job.param_bytes),
              collective=instance.job.collective, placement_sensitive=instance.job.placement_sensitive)
    view = ClusterView.of_arrays(idle, gpus, pair_capacity=cap)
    policy.on_arrival(job, 0.0)
    now = 0.0
    for _ in range(MAX_WAKEUPS):
        decisions = list(policy.decide(now, view) or ())
        if decisions:
            break
        w = policy.next_wakeup(now)
        if w is None:
            return Result(Status.NO_SOLUTION, message=f"policy {name} did not start the job (and asked for no "
                                                      "wake-up)")
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not w > now:
            raise _fail("next_wakeup", f"must be a time after now, {now} (policy {name}), got {w!r}")
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            return Result(Status.TIME_LIMIT, message=f"time limit of {time_limit} s reached before policy {name} "
                                                     "started the job")
        now = float(w)
        np.copyto(view.free_array, idle)
    else:
        return Result(Status.NO_SOLUTION, message=f"policy {name} did not start the job in {MAX_WAKEUPS} wake-ups")
    if len(decisions) != 1 or decisions[0].job_id != job.id:
        raise _fail("decision.job_id", f"must be the instance's one job, {job.id!r} (policy {name}), got "
                                       f"{[d.job_id for d in decisions]}")
    m = placement_of(decisions[0], N, M, policy=name)
    return Result(Status.FEASIBLE, solution=solution_dict(m), info={"start_s": now, "policy": name})
