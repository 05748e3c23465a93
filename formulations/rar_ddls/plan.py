"""The planning machinery shared by SJF-BCO (Algorithms 1-3) and the Sec. 7 baselines.

Every algorithm of this package is a *planning pass* over per-GPU accumulated execution times
``U_s^g`` followed by a conversion of the plan into a schedule that the contention model of
:mod:`.model` measures. What lives here, with the readings optkit takes (each with its reason):

**The estimate rho-hat (Sec. 5.3).** ``rho_hat_j(y) = solo_slots(instance, job, n_servers(y))``:
the contention-free execution time of job j, in slots, on the number of servers the placement
``y`` uses (:func:`.model.solo_slots`). It is exact when the job runs alone and only contention
lengthens it, so it is the natural ``hat rho`` with ``l <= 1``; the paper's experiments derive
the estimate from ``tau·F_j`` in the same way. The plan charges ``W = rho_hat/u`` (eq. 15) with
the keyword ``u >= 1`` (default 1.0). A placement on more servers than give the job one
iteration per slot (eq. 9 gives phi = 0) has ``rho_hat = inf``: never eligible.

**The plan state.** Per GPU g of server s (one flat numpy array over all GPUs, in server order
then GPU order, with a server-index array) the accumulated busy time ``U_s^g`` (slots, float)
and a *planned free time* (the planned completion of the last job planned on it). Each
(theta_u, kappa) trial plans from an empty cluster: U is re-initialised to 0 per trial (to the
busy-until slot on a busy GPU, below).
(Alg. 1 line 2 initialises once, before the bisection, but a trial that kept the U of the
previous trial would charge every job twice; each trial is a fresh answer to Problem (14).)

**Eligibility (Alg. 2 line 2, Alg. 3 line 5).** GPU g is eligible for job j under theta_u iff
``U_g + rho_hat_j(y)/u <= theta_u`` (up to :data:`TOL` slots of float rounding). rho-hat depends
on the placement being chosen (how many servers it uses), so eligibility and the pick are a
fixed point, resolved as follows (:func:`place_job`): start from the eligible set under the
job's *fastest* estimate (``rho_hat`` on :func:`.model.fastest_servers` servers, the least it
can be); pick with the algorithm's rule; compute rho-hat of the resulting placement; drop the
chosen GPUs that violate the limit with that rho-hat from the eligible set and re-pick; stop when
the pick is consistent (every chosen GPU satisfies the limit with the rho-hat of the pick
itself) or fewer than G_j GPUs remain (the job does not fit: infeasible for this trial). The
eligible set only shrinks, so this ends after at most N re-picks; a GPU dropped once is not
re-admitted even if a later pick uses fewer servers (a monotone rule, so that it terminates and
is deterministic). A consistent pick keeps every GPU's U within theta_u, which is Lemma 2's
invariant ``max_g U_g <= theta_u``.

**Commit (Alg. 2 lines 5-6, Alg. 3 lines 8-9).** The planned completion is
``T_j = max over chosen GPUs of their planned free time + rho_hat/u`` (the gang starts when its
last GPU is free); the chosen GPUs' free time becomes T_j and ``U += rho_hat/u`` on each.

**"Available" and "waiting for some job to exit" (Alg. 2 lines 2, 8-9; Alg. 3 lines 5, 11-12):
the reading ``available``** (:mod:`.readings`).

* ``idle-now`` (default): the plan keeps a clock ``now`` (slots, starts at 0 in every trial,
  never decreases: the jobs are planned in their order, head of line). A GPU is available to job j
  when it is idle at ``now`` (its planned free time ``<= now``) *and* eligible under theta_u.
  With too few, the plan waits for the next planned exit (``now`` = the least planned free time
  above ``now``) and retries (lines 8-9); with no job running, the job gets no GPUs (Alg. 2 line 10,
  Alg. 3 line 13). The job's planned start is ``now``.
* ``accumulated``: every eligible GPU is available whether busy or not; the job's planned start is
  the latest free time of its GPUs (it queues behind them). U never decreases, so waiting cannot
  make an ineligible GPU eligible and lines 8-9 never act.

**The estimate rho-hat: the reading ``rho_hat``.** ``placement`` (default) as above;
``fastest``: ``rho_hat_j(n) = rho_hat_j(fastest placement)`` for every n on which the job
progresses alone (one number per job, so the fixed point ends at once).

**A failed trial.** Alg. 1 lines 14-15 break out of the job loop when a job gets no GPUs; the
text ("we quit the current loop and update kappa") says the trial is then abandoned, so an
incomplete plan is never compared in lines 17-18 (its partial makespan would be meaningless).

**Theta search: the reading ``theta_search``** (:func:`bisect_theta`). Integer ``left = 1,
right = H``, ``theta = (left + right) // 2``. ``minimum-feasible`` (default): a theta is accepted
when the trial returns a complete plan (Sec. 5.3: "the minimum theta_u feasible to Problem
(14)"); the search converges on the smallest such theta. ``bisection``: Alg. 1 lines 4-6 and
19-23 literally: the global ``m`` starts at H, a theta is accepted when its best plan's makespan
(the trial's score) is below ``m``.

**Horizon.** ``H`` is first the instance's horizon T. When no theta in [1, T] is accepted
(T too short for the algorithm's own search), the search is repeated on [1, 2T], [1, 4T], ...
(:func:`search_theta`) until a plan is accepted or H exceeds :func:`theta_cap` (a limit under
which every GPU can take every job: a failure there is final). The schedule is then flagged:
``PlanResult.search_horizon`` > T, and ``past_horizon`` when its makespan exceeds T
(``evaluate`` reports ``past_horizon`` from the makespan alone, for every algorithm).

**Busy GPUs** (``busy_until`` of :class:`.model.RarInstance`). Alg. 1 line 2 initialises
``U_s^g``; optkit initialises it, and the GPU's planned free time, to the slot until which the GPU
is busy (0 on a free GPU; every trial starts from there): the work already on the GPU counts as
its accumulated execution time, so it counts against theta_u and in Alg. 3's server order, and
under ``idle-now`` the GPU is not idle before that slot (the wait of lines 8-9 can wait for it).

**Plan -> schedule.** Each GPU runs its planned jobs in plan order. A job starts at the first
slot at which every job planned before it on any of its GPUs has completed and its busy GPUs are
released
(:func:`.model.simulate` with ``predecessors``; listing the immediate predecessor on each GPU is
equivalent, since that job itself started after its own predecessors completed). So gang
scheduling holds (all G_j GPUs start together), no GPU holds two jobs at once (capacity holds),
and the real, contention-dependent durations come from the same event-driven model that
``evaluate`` uses. The predecessor relation follows plan order, so it is acyclic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from optkit.deadline import check as check_deadline
from optkit.errors import InputError

if TYPE_CHECKING:
    from optkit.result import Result

from .model import PROBLEM, RarInstance, SimOutcome, fastest_servers, simulate, solo_slots
from .readings import AVAILABLE, DEFAULTS, RHO_HAT, check_choice

__all__ = [
    "TOL", "ClusterIndex", "Estimates", "Plan", "PickRule", "Trial", "Bisection", "NoPlanError",
    "as_instance", "place_job", "build_plan", "bisect_theta", "search_theta", "theta_cap", "plan_to_schedule",
    "simulated_makespan", "PlanResult", "finish", "pick_least_busy", "pick_packing", "pick_first_fit",
    "pick_lbsgf", "lbsgf_servers", "pick_list", "pick_random", "run_planner",
]

TOL = 1e-9  # slots: float slack in U + rho_hat/u <= theta_u (U is a sum of rho_hat/u)


def as_instance(instance: RarInstance | Mapping[str, Any]) -> RarInstance:
    """``instance`` itself, or a :class:`RarInstance` built (and validated) from its dict."""
    if isinstance(instance, RarInstance):
        return instance
    try:
        return RarInstance.from_dict(instance)
    except InputError as err:
        raise err.with_problem(PROBLEM) from None


@dataclass(frozen=True)
class ClusterIndex:
    """All GPUs as one flat index: GPU ``g`` is GPU ``local[g]`` of server ``server_of[g]``;
    ``busy[g]`` is the slot until which it is busy outside the instance (``busy_until``; 0 for
    a free GPU, and for every GPU when ``busy`` is not given)."""

    capacity: np.ndarray   # O_s per server
    server_of: np.ndarray  # server of each flat GPU
    local: np.ndarray      # GPU index inside its server
    busy: np.ndarray | None = None  # busy-until slot per flat GPU (None: none busy)

    @classmethod
    def of(cls, servers: Sequence[int], busy_until: Sequence[Sequence[int]] = ()) -> "ClusterIndex":
        """The index of ``servers``; ``busy_until`` in :class:`.model.RarInstance`'s form."""
        cap = np.asarray(servers, dtype=np.int64)
        server_of = np.repeat(np.arange(len(cap)), cap)
        offsets = np.concatenate([[0], np.cumsum(cap)[:-1]])
        local = np.arange(len(server_of)) - offsets[server_of]
        busy = None
        if busy_until:
            busy = np.zeros(len(server_of), dtype=np.int64)
            for s, row in enumerate(busy_until):
                busy[offsets[s]:offsets[s] + len(row)] = row
        return cls(cap, server_of, local, busy)

    @classmethod
    def for_instance(cls, instance: RarInstance) -> "ClusterIndex":
        """The index of the instance's servers and busy GPUs."""
        return cls.of(instance.servers, instance.busy_until)

    def release(self, gpus: np.ndarray) -> int:
        """The slot at which all of ``gpus`` (flat indices) are free of outside work."""
        return 0 if self.busy is None or len(gpus) == 0 else int(self.busy[gpus].max())

    @property
    def n_gpus(self) -> int:
        return len(self.server_of)

    @property
    def n_servers(self) -> int:
        return len(self.capacity)


class Estimates:
    """``rho_hat_j(n)/u`` for every job and every number n of servers used (slots, float).

    ``w[j, n] = solo_slots(instance, job_j, n) / u`` for ``1 <= n <= min(G_j, S)``; ``inf`` where
    the placement is impossible (n > G_j) or the job makes no progress on n servers (phi = 0).
    ``first[j]`` is the estimate on the job's fastest placement (:func:`.model.fastest_servers`),
    the starting point of the fixed point of :func:`place_job`.
    """

    def __init__(self, instance: RarInstance, *, u: float = DEFAULTS["u"],
                 rho_hat: str = DEFAULTS["rho_hat"]) -> None:
        if isinstance(u, bool) or not isinstance(u, (int, float)) or not math.isfinite(u) or u < 1:
            raise InputError("u", f"must be a number >= 1 (the paper's u >= 1, eq. 15), got {u!r}", problem=PROBLEM)
        self.rho_hat = check_choice("rho_hat", rho_hat, RHO_HAT)
        self.instance = instance
        self.u = float(u)
        S = len(instance.servers)
        n_jobs = len(instance.jobs)
        self.w = np.full((n_jobs, S + 1), np.inf)
        self.first = np.empty(n_jobs)
        for j, job in enumerate(instance.jobs):
            for n in range(1, min(job.gpus, S) + 1):
                try:
                    self.w[j, n] = solo_slots(instance, job, n) / self.u
                except ValueError:  # phi = 0 on n servers: never eligible
                    pass
            self.first[j] = self.w[j, fastest_servers(instance.servers, job.gpus, job, instance.network)]
            if self.rho_hat == "fastest":  # one estimate per job; inf stays where it never progresses
                self.w[j, np.isfinite(self.w[j])] = self.first[j]
        self.gpus = np.array([job.gpus for job in instance.jobs], dtype=np.int64)


@dataclass
class Plan:
    """One planning pass: U, planned free times, and per job its GPUs, T_j and predecessors.

    ``rng`` serves randomised pick rules (RAND). ``order`` lists the planned jobs (instance
    indices) in plan order. ``available`` is the reading of that name; ``now`` the planning
    clock of ``idle-now`` (module docstring). ``score`` is what the search compared (the estimate
    or the simulated makespan) and ``outcome`` the simulated schedule when one was computed.
    """

    cluster: ClusterIndex
    U: np.ndarray
    free: np.ndarray
    last: np.ndarray
    rng: np.random.Generator | None = None
    available: str = "accumulated"
    now: float = 0.0
    score: float | None = None
    outcome: SimOutcome | None = None
    order: list[int] = field(default_factory=list)
    gpus: dict[int, np.ndarray] = field(default_factory=dict)
    finish: dict[int, float] = field(default_factory=dict)
    preds: dict[int, list[int]] = field(default_factory=dict)

    @classmethod
    def empty(cls, cluster: ClusterIndex, rng: np.random.Generator | None = None,
              available: str = "accumulated") -> "Plan":
        """The start of every trial: ``now`` = 0, and on every GPU U and the planned free time
        both equal to its busy-until slot (Alg. 1 line 2's initialisation of U_s^g; 0 on a free
        GPU). A busy GPU is then a GPU running a job that exits at that slot: under ``idle-now``
        it is not idle before it, and "waiting for some job to exit" (Alg. 2 lines 8-9) waits for
        it; its load counts in Alg. 3's server order and against theta_u."""
        n = cluster.n_gpus
        start = np.zeros(n) if cluster.busy is None else cluster.busy.astype(float)
        return cls(cluster, start.copy(), start.copy(), np.full(n, -1, dtype=np.int64), rng,
                   check_choice("available", available, AVAILABLE))

    def copy(self) -> "Plan":
        """An independent copy (arrays, lists and dicts copied; ``rng`` shared)."""
        return Plan(self.cluster, self.U.copy(), self.free.copy(), self.last.copy(), self.rng, self.available,
                    self.now, self.score, self.outcome, list(self.order), dict(self.gpus), dict(self.finish),
                    dict(self.preds))

    def occupied_servers(self) -> np.ndarray:
        """Per server: does it hold some other job's GPU? (FA-FFP's 'servers whose GPUs are already
        occupied'): busy at ``now`` under ``idle-now``, any planned load under ``accumulated``."""
        c = self.cluster
        busy = self.free > self.now + TOL if self.available == "idle-now" else self.U > 0
        return np.bincount(c.server_of, weights=busy, minlength=c.n_servers) > 0

    @property
    def makespan(self) -> float:
        """``m_theta^kappa``: the largest planned T_j (Alg. 1 line 16), the paper's estimate."""
        return max(self.finish.values(), default=0.0)

    def server_load(self) -> np.ndarray:
        """``sum_g U_s^g / O_s`` per server (Alg. 3 line 2)."""
        c = self.cluster
        return np.bincount(c.server_of, weights=self.U, minlength=c.n_servers) / c.capacity

    def y(self, n_jobs: int) -> np.ndarray:
        """Placements y_js (jobs × servers, instance order) of the planned jobs."""
        c = self.cluster
        out = np.zeros((n_jobs, c.n_servers), dtype=np.int64)
        for j, g in self.gpus.items():
            out[j] = np.bincount(c.server_of[g], minlength=c.n_servers)
        return out

    def predecessors(self, n_jobs: int) -> list[list[int]]:
        """Per job (instance order) the jobs planned immediately before it on its GPUs."""
        return [self.preds.get(j, []) for j in range(n_jobs)]


PickRule = Callable[[Plan, int, int, np.ndarray], "np.ndarray | None"]
"""``rule(plan, j, G_j, candidates) -> chosen`` flat GPU indices (G_j of them) or ``None``.
``candidates`` are the eligible GPUs, ascending flat index (server, then GPU)."""


# ----------------------------------------------------------------------------- pick rules
def pick_least_busy(plan: Plan, j: int, G: int, cand: np.ndarray) -> np.ndarray | None:
    """FA-FFP (Alg. 2 line 4): the G eligible GPUs with least U; ties first-fit (server index,
    then GPU index: a stable sort of the candidates, which come in flat order)."""
    if len(cand) < G:
        return None
    if G == 1:
        return cand[[int(np.argmin(plan.U[cand]))]]
    return cand[np.argsort(plan.U[cand], kind="stable")[:G]]


def pick_packing(plan: Plan, j: int, G: int, cand: np.ndarray) -> np.ndarray | None:
    """FA-FFP, reading ``fa_ffp = packing``: the fewest servers that hold G eligible GPUs.

    If one server holds G eligible GPUs: the first such server, occupied servers
    (:meth:`Plan.occupied_servers`) before empty ones, then by index (first fit), and its G
    least-U eligible GPUs. Otherwise servers by eligible count descending (the greedy that uses
    the fewest servers), occupied first, then index, each giving its least-U eligible GPUs until G
    are taken. GPU ties by GPU index.
    """
    if len(cand) < G:
        return None
    c = plan.cluster
    srv = c.server_of[cand]
    counts = np.bincount(srv, minlength=c.n_servers)
    empty = ~plan.occupied_servers()
    fits = np.flatnonzero(counts >= G)
    if len(fits):
        order = fits[np.lexsort((fits, empty[fits]))][:1]
    else:
        used = np.flatnonzero(counts)
        order = used[np.lexsort((used, empty[used], -counts[used]))]
    out: list[np.ndarray] = []
    need = G
    for s in order:
        pool = cand[srv == s]
        take = pool[np.argsort(plan.U[pool], kind="stable")[:need]]
        out.append(take)
        need -= len(take)
        if need == 0:
            break
    return np.concatenate(out)


def lbsgf_servers(load: np.ndarray, capacity: np.ndarray, G: int, lam: float) -> np.ndarray:
    """Alg. 3 line 2: servers by mean U ``load`` ascending (ties: index), the fewest top ones
    with ``sum O_s >= lam·G`` (every server if the cluster holds fewer GPUs), in that order."""
    sorder = np.argsort(load, kind="stable")
    m = int(np.searchsorted(np.cumsum(capacity[sorder]), lam * G - TOL)) + 1
    return sorder[:m]


def pick_lbsgf(lam: float) -> PickRule:
    """LBSGF (Alg. 3 lines 2-7) with ``lambda_j = lam``.

    Line 2: servers by ``sum_g U_s^g / O_s`` ascending (ties: server index), the top m with
    ``sum O_s >= lam·G_j`` (all servers if the cluster is smaller). Lines 4-5: each selected
    server's eligible GPUs sorted by U (ties: GPU index), appended in server order. Line 7: the
    top G_j with least U, ties by append order (a stable sort of the appended list).
    """

    def rule(plan: Plan, j: int, G: int, cand: np.ndarray) -> np.ndarray | None:
        c = plan.cluster
        selected = lbsgf_servers(plan.server_load(), c.capacity, G, lam)
        rank = np.full(c.n_servers, -1, dtype=np.int64)
        rank[selected] = np.arange(len(selected))
        cand = cand[rank[c.server_of[cand]] >= 0]
        if len(cand) < G:
            return None  # line 11-13: waiting cannot help in a planning pass (module docstring)
        # Appended list: key (server rank, U, GPU); then the stable pick by U keeps append order.
        keys = np.lexsort((cand, plan.U[cand], rank[c.server_of[cand]]))
        appended = cand[keys]
        return appended[np.argsort(plan.U[appended], kind="stable")[:G]]

    rule.__name__ = f"lbsgf(lam={lam})"
    return rule


def pick_first_fit(plan: Plan, j: int, G: int, cand: np.ndarray) -> np.ndarray | None:
    """FF (Sec. 7): the first G eligible GPUs scanning servers in index order, server to
    server (GPU index order inside a server)."""
    return cand[:G] if len(cand) >= G else None


def pick_list(plan: Plan, j: int, G: int, cand: np.ndarray) -> np.ndarray | None:
    """LS (Sec. 7): the G eligible GPUs with least U; ties by the server's mean U
    (least-loaded server first), then server index, then GPU index."""
    if len(cand) < G:
        return None
    sl = plan.server_load()[plan.cluster.server_of[cand]]
    return cand[np.lexsort((cand, sl, plan.U[cand]))[:G]]


def pick_random(plan: Plan, j: int, G: int, cand: np.ndarray) -> np.ndarray | None:
    """RAND (Sec. 7): servers in a random order (``plan.rng``), from each server its eligible
    GPUs in a random order, server to server, until G are taken."""
    if len(cand) < G:
        return None
    rng = plan.rng if plan.rng is not None else np.random.default_rng(0)
    c = plan.cluster
    srank = rng.permutation(c.n_servers)
    within = rng.random(len(cand))
    return cand[np.lexsort((within, srank[c.server_of[cand]]))[:G]]


# ----------------------------------------------------------------------------- one job, one plan
def _consistent_pick(plan: Plan, est: Estimates, j: int, G: int, limit: float, rule: PickRule,
                     mask: np.ndarray) -> tuple[np.ndarray, float] | None:
    """The eligibility fixed point (module docstring) among the GPUs in ``mask``: ``(chosen, w)``
    with every chosen GPU's ``U + w <= limit``, or ``None`` when fewer than G remain."""
    U = plan.U
    elig = mask & (U + est.first[j] <= limit)
    server_of = plan.cluster.server_of
    while True:
        cand = np.flatnonzero(elig)
        if len(cand) < G:
            return None
        chosen = rule(plan, j, G, cand)
        if chosen is None:
            return None
        n = len(np.unique(server_of[chosen])) if G > 1 else 1
        w = float(est.w[j, n])
        bad = U[chosen] + w > limit
        if not bad.any():
            return chosen, w
        elig[chosen[bad]] = False


def place_job(plan: Plan, est: Estimates, j: int, theta: float, rule: PickRule) -> bool:
    """Plan job j under the limit ``theta`` with ``rule``; commit it and return True, or leave
    the plan unchanged and return False (Alg. 2 line 10 / Alg. 3 line 13).

    The fixed point of the module docstring picks among the available GPUs (reading
    ``plan.available``; under ``idle-now`` the plan waits for planned exits, lines 8-9). Then
    Alg. 2 lines 5-6 / Alg. 3 lines 8-9: ``T_j = start + rho_hat/u``, free = T_j and
    ``U += rho_hat/u`` on the chosen GPUs.
    """
    G = int(est.gpus[j])
    limit = theta + TOL
    if int(np.count_nonzero(plan.U + est.first[j] <= limit)) < G:
        return False  # too few GPUs under theta even ignoring who is busy: waiting cannot help
    if plan.available == "accumulated":
        got = _consistent_pick(plan, est, j, G, limit, rule, np.ones(plan.cluster.n_gpus, dtype=bool))
        if got is None:
            return False
        chosen, w = got
        start = float(plan.free[chosen].max())
    else:
        while True:
            idle = plan.free <= plan.now + TOL
            got = _consistent_pick(plan, est, j, G, limit, rule, idle)
            if got is not None:
                break
            if idle.all():
                return False  # no running job to wait for (Alg. 2 line 10, Alg. 3 line 13)
            plan.now = float(plan.free[~idle].min())  # wait for the next job to exit (lines 8-9)
        chosen, w = got
        start = plan.now
    t_j = start + w
    prev = plan.last[chosen]
    plan.preds[j] = sorted(set(int(p) for p in prev[prev >= 0]))
    plan.free[chosen] = t_j
    plan.U[chosen] += w
    plan.last[chosen] = j
    plan.gpus[j] = np.sort(chosen)
    plan.finish[j] = t_j
    plan.order.append(j)
    return True


def build_plan(est: Estimates, cluster: ClusterIndex, order: Sequence[int], theta: float,
               rule_of: Callable[[int], PickRule], *, rng: np.random.Generator | None = None,
               available: str = DEFAULTS["available"]) -> Plan | None:
    """One (theta_u, kappa) trial (Alg. 1 lines 8-16): plan the jobs in ``order`` from an empty
    cluster, each with ``rule_of(j)``, under the reading ``available``; ``None`` as soon as one
    job gets no GPUs (lines 14-15)."""
    plan = Plan.empty(cluster, rng, available)
    for j in order:
        if not place_job(plan, est, j, theta, rule_of(j)):
            return None
    return plan


# ----------------------------------------------------------------------------- bisection
Trial = Callable[[int, int], "tuple[Plan, Any] | None"]
"""``trial(theta, H) -> (plan, tag)``: the best complete plan for theta (Alg. 1 lines 6-18; H is
the search's horizon, where line 6 starts m_theta), with a tag (the kappa that gave it), or ``None``. ``plan.score`` (default: the plan's estimated
makespan) is what the literal bisection compares."""


@dataclass
class Bisection:
    """What the theta search accepted last: its plan, theta_u, tag, the steps taken, and the
    horizon H of the last search (> T when T was too short, module docstring "Horizon")."""

    plan: Plan | None
    theta: int | None
    tag: Any
    steps: int
    trials_accepted: int
    timed_out: bool
    search_horizon: int = 0


def _score(plan: Plan) -> float:
    return plan.makespan if plan.score is None else float(plan.score)


def bisect_theta(horizon: int, trial: Trial, *, deadline: float | None = None,
                 clock: Callable[[], float] | None = None, feasibility: bool = False) -> Bisection:
    """Integer bisection on theta over [1, ``horizon``] (reading ``theta_search``).

    ``feasibility=False`` (``bisection``): Alg. 1 lines 4-6 and 19-23, literally: a theta is
    accepted when its plan's score is below the best so far (m starts at ``horizon``).
    ``feasibility=True`` (``minimum-feasible``): a theta is accepted when the trial returns a
    complete plan, whatever its makespan, so the search converges on the smallest theta with a
    complete plan. ``deadline`` (a ``clock()`` value) stops the search early with what was
    accepted so far."""
    import time

    clock = clock or time.perf_counter
    m = math.inf if feasibility else float(horizon)
    best: Bisection = Bisection(None, None, None, 0, 0, False, int(horizon))
    left, right = 1, int(horizon)
    while left <= right:
        check_deadline("searching theta")  # inside an exact solve: its warm start (optkit.deadline)
        theta = (left + right) // 2
        best.steps += 1
        got = trial(theta, int(horizon))
        if got is not None and (feasibility or _score(got[0]) < m):
            m = _score(got[0])
            best.plan, best.theta, best.tag = got[0], theta, got[1]
            best.trials_accepted += 1
            right = theta - 1
        else:
            left = theta + 1
        if deadline is not None and clock() > deadline and left <= right:
            best.timed_out = True
            break
    return best


def theta_cap(est: Estimates) -> float:
    """A limit under which every GPU can take every job: the latest busy-until slot plus the
    sum over jobs of their largest finite estimate (U never exceeds it, so ``U + w <= theta``
    always holds)."""
    w = np.where(np.isfinite(est.w), est.w, 0.0)
    busy = max((max(row, default=0) for row in est.instance.busy_until), default=0)
    return float(busy) + float(w.max(axis=1).sum()) + 1.0


def search_theta(horizon: int, trial: Trial, *, cap: float, deadline: float | None = None,
                 feasibility: bool = False) -> Bisection:
    """:func:`bisect_theta` on [1, T]; while nothing is accepted, again on [1, 2T], [1, 4T], ...
    until H exceeds ``2·cap`` (module docstring, "Horizon"). Steps add up over the searches."""
    H, steps = int(horizon), 0
    while True:
        bis = bisect_theta(H, trial, deadline=deadline, feasibility=feasibility)
        steps += bis.steps
        if bis.plan is not None or bis.timed_out or H > 2 * cap:
            bis.steps, bis.search_horizon = steps, H
            return bis
        H *= 2


# ----------------------------------------------------------------------------- plan -> schedule
class NoPlanError(ValueError):
    """No (theta_u, ...) trial produced an accepted plan, even past the horizon."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


@dataclass
class PlanResult:
    """A plan turned into a schedule, and what the algorithm learned on the way.

    ``theta`` (theta_u accepted), ``kappa`` (SJF-BCO only), ``plan_makespan`` (the paper's
    estimate ``max T_j``, slots: *not* the measured makespan, which only ``evaluate`` gives),
    ``bisection_steps``, ``max_busy`` (max_g U_g, Lemma 2's quantity), ``order`` (plan order),
    ``gpus`` (per job its flat GPU indices), ``predecessors`` (per job), the simulated
    ``outcome`` (start and completion slots under the contention model), ``search_horizon`` (the
    H of the accepted search: > T when the horizon was too short) and ``past_horizon`` (the
    schedule's makespan exceeds T).
    """

    theta: int | None
    kappa: int | None
    plan_makespan: float
    bisection_steps: int
    max_busy: float
    order: list[int]
    gpus: dict[int, list[tuple[int, int]]]
    predecessors: list[list[int]]
    outcome: SimOutcome
    timed_out: bool = False
    search_horizon: int = 0
    past_horizon: bool = False

    def info(self) -> dict[str, Any]:
        """JSON-ready diagnostics for :attr:`optkit.result.Result.info`."""
        d: dict[str, Any] = {"theta_u": self.theta, "plan_makespan_estimate_slots": self.plan_makespan,
                             "bisection_steps": self.bisection_steps, "max_busy_slots": self.max_busy,
                             "past_horizon": self.past_horizon, "search_horizon_slots": self.search_horizon}
        if self.kappa is not None:
            d["kappa"] = self.kappa
        if self.timed_out:
            d["timed_out"] = True
        return d


def plan_to_schedule(instance: RarInstance, plan: Plan) -> tuple[np.ndarray, SimOutcome]:
    """Placements y (instance order) and the simulated schedule: every job starts when all jobs
    planned before it on its GPUs have completed (module docstring, "Plan -> schedule").
    Cached on the plan."""
    n = len(instance.jobs)
    y = plan.y(n)
    if plan.outcome is None:
        c = plan.cluster
        release = None if c.busy is None else [c.release(plan.gpus[j]) if j in plan.gpus else 0 for j in range(n)]
        plan.outcome = simulate(instance, y, predecessors=plan.predecessors(n), release=release,
                                rate_cache=_rate_cache(instance))
    return y, plan.outcome


_RATE_CACHES: dict[int, tuple[RarInstance, dict[tuple[int, int], np.ndarray]]] = {}


def _rate_cache(instance: RarInstance) -> dict[tuple[int, int], np.ndarray]:
    """One rate-table cache per instance object (the instance is frozen; the last few kept)."""
    got = _RATE_CACHES.get(id(instance))
    if got is None or got[0] is not instance:
        if len(_RATE_CACHES) > 8:
            _RATE_CACHES.clear()
        got = _RATE_CACHES[id(instance)] = (instance, {})
    return got[1]


def simulated_makespan(instance: RarInstance, plan: Plan) -> float:
    """The makespan (slots) of the plan's schedule under the contention model; ``inf`` when a
    job never completes (phi = 0 for good)."""
    _, out = plan_to_schedule(instance, plan)
    return math.inf if out.stuck else float(out.completion.max(initial=0))


def finish(instance: RarInstance, bis: Bisection, *, what: str) -> tuple[np.ndarray, PlanResult]:
    """Turn the accepted plan of ``bis`` into ``(y, PlanResult)``; :class:`NoPlanError` if none."""
    if bis.plan is None:
        if bis.timed_out:
            raise NoPlanError(f"{what}: the time limit ran out before any execution-time limit theta_u "
                              "gave a complete plan", timed_out=True)
        raise NoPlanError(f"{what}: no execution-time limit theta_u in [1, {bis.search_horizon}] (the horizon "
                          f"T = {instance.horizon} extended) gives a plan of every job")
    plan = bis.plan
    y, out = plan_to_schedule(instance, plan)
    c = plan.cluster
    gpus = {j: [(int(c.server_of[g]), int(c.local[g])) for g in gs] for j, gs in plan.gpus.items()}
    past = bool(not out.stuck and out.completion.max(initial=0) > instance.horizon)
    return y, PlanResult(bis.theta, bis.tag if isinstance(bis.tag, int) else None, float(plan.makespan),
                         bis.steps, float(plan.U.max()), list(plan.order), gpus,
                         plan.predecessors(len(instance.jobs)), out, bis.timed_out,
                         bis.search_horizon or instance.horizon, past)


def run_planner(fn: Callable[..., tuple[np.ndarray, PlanResult]], instance: RarInstance, time_limit: float | None,
                **params: Any) -> "Result":
    """Run a planner (:func:`.sjf_bco.sjf_bco` or a baseline) as an algorithm-table entry.

    Status: ``feasible`` with the schedule (``info["past_horizon"]`` when it ends after T);
    ``time_limit`` when the deadline stopped the search (with the best plan so far, if any);
    ``no_solution`` when no plan was found even past the horizon, or when the planned schedule
    leaves jobs stuck at phi = 0 (a heuristic's failure proves nothing, so never ``infeasible``).
    """
    import time

    from optkit.result import Result, Status

    from .model import schedule_dict

    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    try:
        y, res = fn(instance, deadline=deadline, **params)
    except NoPlanError as exc:
        return Result(Status.TIME_LIMIT if exc.timed_out else Status.NO_SOLUTION, message=str(exc))
    info = res.info()
    info["algorithm_wall_time_s"] = time.perf_counter() - t0
    if res.outcome.stuck:
        return Result(Status.NO_SOLUTION, info=info,
                      message=f"jobs {', '.join(res.outcome.stuck[:5])} never complete under the contention "
                              "of the planned schedule (phi = 0, eq. 9)")
    status = Status.TIME_LIMIT if res.timed_out else Status.FEASIBLE
    return Result(status, solution=schedule_dict(instance, y, res.outcome), info=info)
