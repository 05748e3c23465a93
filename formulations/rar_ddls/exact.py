"""Exact optimum of rar-ddls (makespan): a time-indexed CP-SAT model, the same model as a MILP
(Pyomo + HiGHS), and a brute-force referee for tiny instances.

Notation: servers s with O_s GPUs (N = sum_s O_s), jobs j with G_j GPUs and F_j iterations,
slots t = 0..H-1. A *placement option* of job j is a vector y (GPUs per server) with
``sum_s y_s = G_j`` and ``0 <= y_s <= O_s`` (eq. 1-2); ``n(y)`` = servers used, split iff
``n(y) > 1``. The decisions are one option and one start slot a_j per job; completions follow
from the contention model of :mod:`.model` (eqs. 6-9).

Fact 1 (rates depend on a placement only through n and p)
=========================================================
tau_j (eq. 8) reads the placement only through ``servers used = n`` (the xi2 term) and whether
the job is split (``n > 1``: inter bandwidth divided by f(k)); and the contention only through
``p_j[t]`` (eq. 6, via ``k = max(1, xi1·p)``, eq. 7). Hence the iterations per slot of job j are
``phi_j[n][p]`` = :func:`.model.rate_table` (eq. 9), one small table per (job, n). On one server
``phi_j[1][p]`` does not depend on p. The network validation makes ``degradation >= 0`` and
``xi1 > 0``, so ``f(k)`` is increasing in k, ``k`` nondecreasing in p, and **phi_j[n][p] is
nonincreasing in p** (checked by :func:`_phi_tables` on every instance; a violation raises).

Fact 2 (an exact relaxation: "active at least until done")
==========================================================
The models let a job stay active over any interval of slots [a_j, e_j) as long as the
iterations it makes over that interval reach F_j (with ``g_j[t] <= phi_j[n_j][p_j[t]]`` in each
active slot, p_j[t] computed by eq. 6 from the *model's* active sets), and minimise
``max_j e_j``. A job is not forced to stop at the first slot where it reaches F_j.

Claim: the optimum of this relaxation equals the true optimum, and re-simulating the
relaxation's starts and placements with :func:`.model.simulate` (as :func:`.model.evaluate`
does) gives a schedule whose true makespan is at most the relaxation's objective.

Proof. (i) Every true schedule with makespan <= H is a solution of the relaxation (e_j = T_j + 1,
g = the true phi), so relaxed optimum <= true optimum. (ii) Take a relaxed solution R and
re-simulate its starts and placements: the true schedule S. Induction over t, claim: every job
active in S at slot t is active in R at t, and every job's progress in S by the end of slot t is
>= its progress in R. If j is active in S at t it has started (same start) and has not reached
F_j in S before t; by the hypothesis its R-progress before t is < F_j, so R has not stopped it
(R keeps a job active until it reaches F_j at the earliest): j is active in R at t. So S's active
set at t is a subset of R's; p (eq. 6) counts active split jobs, so ``p_j^S[t] <= p_j^R[t]``,
and by Fact 1's monotonicity phi in S is >= the bound g in R: progress in S stays >= progress
in R. Therefore every job completes in S no later than e_j in R, S never holds more GPUs than R
in any slot (capacity holds, eq. 2), no job is stuck (phi = 0 for good), and
``makespan(S) <= max_j e_j``. Applied to an optimal R, (i) and (ii) give equality. The completions
in every returned solution are :func:`.model.simulate`'s, never the solver's variables; the
reported objective is :func:`.model.evaluate`'s makespan. The model's own objective is kept in
``info["model_objective_s"]``: at a proven optimum it equals the evaluated makespan (the tests
check this; a contention model that disagreed with eqs. 6-9 would break it).

The relaxation only needs upper bounds on g (a solver may "waste" iterations, which the
re-simulation gives back): the MILP states ``g <= phi(...)``; CP-SAT fixes ``g = phi`` in active
slots (fewer free choices); both are exact by the claim.

Horizon
=======
``H = min(instance.horizon, UB)`` slots, where UB is the makespan of :func:`greedy_schedule`
(feasible, verified by ``evaluate``; among its candidates the sequential schedule -- jobs one
after another, each alone on its fastest placement, makespan ``sum_j rho_j^min``). An optimum
has makespan <= UB, so it lies in [0, H) whenever one exists within the instance's horizon.
If no schedule completes by H the models are infeasible and the run reports ``infeasible``
(when UB itself fits the horizon the models are feasible by construction, so a solver's
"infeasible" is then reported as ``error``). ``tighten=False`` uses the instance's horizon alone
(larger models, for cross-checks). Both models bound the makespan variable below by
:func:`.bounds.lower_bound` (proven).

Server symmetry (both models)
=============================
Servers with equal O_s are interchangeable: permuting them in every job's y (the same permutation
for all jobs) keeps each job's n, the multiset of its servers' split-job counts (so p, eq. 6),
every phi, hence every completion, and the capacities. So some optimum has, within each class of
equal-capacity servers (taken in index order), the columns of the matrix ``Y[j, s]`` in
non-increasing lexicographic order (jobs in instance order). The models require this on the
prefix of the first L jobs (a sorted column order has sorted prefixes): ``sum_{j<L} Y[j,s]
B^(L-1-j) >= sum_{j<L} Y[j,s'] B^(L-1-j)`` for consecutive s < s' of a class, ``B = max_s O_s
+ 1`` (a base-B comparison is the lexicographic one); L is the most jobs with ``B^(L-1) <=
2^40`` (CP-SAT) or ``<= 10^4`` (MILP numerics). Nothing else is broken.

CP-SAT model (:func:`run_cpsat`)
================================
Per job: option literals ``z[j,o]`` (exactly one); start ``S_j`` and end ``E_j`` (slots) with
``E_j - S_j >= sum_o ceil(F_j / phi_j[n_o][1])·z[j,o]`` (a job cannot beat its solo speed);
booleans ``b[j,t] <=> S_j <= t``, ``f[j,t] <=> E_j <= t`` and the active literal
``a[j,t] = b[j,t] and not f[j,t]``. Per server s and slot t: ``u[j,s]`` = j is split with
workers on s (a sum of option literals), ``w[j,s,t] = a[j,t] and u[j,s]``, the count
``c[s,t] = sum_j w[j,s,t]``; ``q[j,s,t] = c[s,t]`` if u[j,s] else 0 and
``p[j,t] = max_s q[j,s,t]`` (eq. 6); the rate ``r[j,t] = phi_j[n_j][p[j,t]]`` by an element
constraint on the flattened table (index ``n_j·(P+1) + p``); progress ``g[j,t] = r[j,t]`` when
a[j,t], 0 otherwise (Fact 2 only needs ``<=``; the equality leaves the search nothing to choose
in g), ``sum_t g[j,t] >= F_j``. Capacity (eq. 2): per option an
optional interval [S_j, E_j) present with z[j,o], and per server an ``AddCumulative`` with
demands y_s and capacity O_s; a redundant cumulative of the whole cluster (demand G_j, capacity
N) and the energy cut ``sum_j G_j (E_j - S_j) <= N·Z`` (both implied by eq. 2). Objective
``Z = max_j E_j``, with ``Z >=`` :func:`.bounds.lower_bound`, minimised (slots); the reported
bound is CP-SAT's best bound in seconds. The greedy schedule is the hint. Solved by
:func:`optkit.solvers.cpsat.solve_cp_model`.

HiGHS MILP (:func:`run_highs`)
==============================
The same relaxation, linear. Binaries: ``z[j,o]``; ``x[j,t]`` (start at t) and ``e[j,t]``
(end ``E_j = t``), each exactly one; active ``a[j,t] = sum_{t'<=t} x - sum_{t'<=t} e`` in [0, 1]
(so an end never precedes the start) and ``E_j - S_j >= sum_o ceil(F_j / phi_j[n_o][1])·z[j,o]``. ``w[j,s,t] >= a[j,t] + u[j,s] - 1``
(only a lower bound is needed: a larger w only counts more contention, a tighter relaxation that
the exact products still satisfy). ``c[s,t] = sum_j w[j,s,t]`` and level indicators
``h[s,t,p]`` (binary, p = 2..P_s) forced to 1 when ``c[s,t] >= p``: ``c[s,t] - (p-1) <=
(P_s - p + 1)·h[s,t,p]``. Since ``phi(c) = phi(1) - sum_{p=2}^{c} (phi(p-1) - phi(p))`` and the
drops are >= 0, for every job j, server count n and server s:
``g[j,t] <= phi_j[n][1] - sum_p drop_j[n][p]·h[s,t,p] + phimax_j·(1 - u[j,s,n])``, ``u[j,s,n]``
= j uses n servers including s (split); for every n with ``phi_j[n][1] < phimax_j``
(``phimax_j`` = the best solo rate over j's options), ``g <= phi_j[n][1] + phimax_j·(1 - U[j,n])``
with ``U[j,n]`` = j uses n servers.
``g[j,t] <= phimax_j·a[j,t]``, ``sum_t g[j,t] >= F_j``. Capacity: ``L[j,s,t] >= Y[j,s] -
min(O_s, G_j)·(1 - a[j,t])``, ``sum_j L[j,s,t] <= O_s``. Objective ``Z >= sum_t t·e[j,t]``.
Redundant: ``sum_j G_j a[j,t] <= N``. Solved by :func:`optkit.solvers.milp.solve_pyomo_model`
(gaps 1e-9). HiGHS 1.14's MIP presolve sometimes declares this model infeasible although a
schedule satisfies it (seen on a 2-job instance whose greedy schedule is feasible for the model;
HiGHS issue #3090 reports the same fault in 1.14); an "infeasible" from HiGHS is therefore
re-solved with ``presolve=off`` before it is believed. Whenever the greedy schedule fits the
horizon, the model is feasible by construction, and an "infeasible" from either solver becomes
status ``error``.

Busy GPUs (``busy_until``)
==========================
A GPU busy until slot r is held in slots 0..r-1. Both models take it as it is, a capacity that
grows as GPUs are released: CP-SAT adds one fixed interval [0, r) of demand 1 per busy GPU to its
server's cumulative and to the whole cluster's; the MILP's capacity rows read
``sum_j L[j,s,t] <= O_s - #{g of s busy in t}`` (and the cluster's likewise). Fact 2's proof is
unchanged (capacity is a per-slot bound that the re-simulation only lowers the load against).
Servers are symmetric only when they have the same O_s and the same multiset of busy-until
slots. The greedy sequential schedule starts when every GPU is free (the latest busy-until
slot), and the packing pass also tries each busy-until slot as a start. Brute force drops its
pruning (a) (a whole schedule shifted one slot earlier may use a GPU while it is busy).

Brute force (:func:`brute_force`)
=================================
Every (option, start) per job, starts in ``[0, horizon - rho_j^min]``, each combination measured
by :func:`.model.evaluate` (the referee); the best makespan. Pruning, each exact: (a) some job
starts at slot 0 (shifting a whole schedule one slot earlier shifts every event and lowers the
makespan by one; only without busy GPUs), (b) a branch with ``a_j + ceil(F_j / phi_j[n][1]) >= best`` cannot improve
(a job never runs faster than alone, Fact 1). It does not use the models' relaxation or the
greedy schedule: an independent referee. It refuses (``InputError``) instances whose search
would visit more than :data:`BRUTE_FORCE_MAX_NODES` partial assignments.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np

from optkit.anytime import add_solver_points
from optkit.deadline import (DeadlineReached, bounded, check as check_deadline, checked, current as current_deadline,
                             offer as offer_incumbent, within)
from optkit.errors import InputError
from optkit.result import Result, Status, relative_gap
from optkit.validation import trusted

from .model import PROBLEM, RarInstance, evaluate, rate_table, schedule_dict, simulate

__all__ = [
    "Option", "placement_options", "greedy_schedule", "run_cpsat", "run_highs", "brute_force",
    "run_brute_force", "BRUTE_FORCE_MAX_NODES",
]

BRUTE_FORCE_MAX_NODES = 50_000


# ============================================================================= options and tables
@dataclass(frozen=True)
class Option:
    """One placement y (GPUs per server) of a job; ``n`` servers used; ``solo`` = slots alone."""

    y: tuple[int, ...]
    n: int
    solo: int


def _check_objective(objective: str) -> None:
    if objective != "makespan":
        raise InputError("objective", f"the exact rar-ddls solvers minimise 'makespan' only, got {objective!r}")


def _vectors(total: int, caps: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every y with sum y = total and 0 <= y_s <= caps[s] (lexicographically decreasing)."""
    if not caps:
        if total == 0:
            yield ()
        return
    rest_cap = sum(caps[1:])
    for v in range(min(caps[0], total), max(0, total - rest_cap) - 1, -1):
        for rest in _vectors(total - v, caps[1:]):
            yield (v,) + rest


def _phi_tables(instance: RarInstance) -> list[dict[int, np.ndarray]]:
    """phi_j[n][p] (eq. 9) for every job and every n = 1..min(G_j, servers); checks Fact 1's
    monotonicity in p (p >= 1), which the relaxation's exactness needs."""
    S = len(instance.servers)
    out = []
    for job in instance.jobs:
        tabs = {}
        for n in range(1, min(job.gpus, S) + 1):
            tab = rate_table(instance, job, n)
            if np.any(np.diff(tab[1:]) > 0):  # pragma: no cover - excluded by the validation
                raise ValueError(f"phi of job {job.id} on {n} servers increases with contention")
            tabs[n] = tab
        out.append(tabs)
    return out


def placement_options(instance: RarInstance, phi: list[dict[int, np.ndarray]] | None = None) -> list[list[Option]]:
    """Every option of every job (instance order), ``solo`` = ceil(F_j / phi_j[n][1]) slots;
    options whose solo rate is 0 are dropped (they never progress, Fact 1)."""
    phi = phi if phi is not None else _phi_tables(instance)
    res = []
    for j, job in enumerate(instance.jobs):
        lst = []
        for y in checked(_vectors(job.gpus, instance.servers), "enumerating placement options"):
            n = sum(1 for v in y if v)
            r = int(phi[j][n][1])
            if r >= 1:
                lst.append(Option(y, n, -(-job.iterations // r)))
        if not lst:  # pragma: no cover - from_dict rejects such jobs
            raise InputError(f"jobs[{j}]", f"job {job.id} makes no progress on any placement")
        res.append(lst)
    return res


def _sim(instance: RarInstance, y: np.ndarray, starts: Sequence[int]) -> tuple[int, np.ndarray] | None:
    """The true makespan (slots) and completions of starts + placements, or None if
    :func:`.model.evaluate` rejects the schedule."""
    out = simulate(instance, y, starts=starts)
    ev = evaluate(instance, schedule_dict(instance, y, out))
    return (int(ev.metrics["makespan_slots"]), out.completion) if ev.feasible else None


# ============================================================================= greedy upper bound
def greedy_schedule(instance: RarInstance, opts: list[list[Option]] | None = None, *,
                    deadline: float | None = None) -> tuple[list[int], np.ndarray, int]:
    """A feasible schedule (verified by :func:`.model.evaluate`): the better of

    * sequential: jobs in instance order, one after another, each alone on its fastest option
      (contention free, makespan ``sum_j rho_j^min``);
    * packing: jobs by non-increasing ``G_j · rho_j^min``, each at the (start in {0} and the
      current completions, option) that, re-simulated with the jobs placed so far, is feasible
      and gives the smallest makespan, then the earliest own completion.

    ``deadline`` (a ``time.perf_counter()`` value): the packing pass re-simulates the placed jobs
    for every (start, option) of every job, which grows fast with the jobs (155,658 simulations
    at 32 jobs); past the deadline it stops and the sequential schedule is returned (a valid
    upper bound, only looser). Returns (start slots, placements jobs × servers, makespan in slots)."""
    opts = opts if opts is not None else placement_options(instance)
    n, S = len(instance.jobs), len(instance.servers)
    best_opt = [min(lst, key=lambda o: (o.solo, -max(o.y))) for lst in opts]
    y_seq = np.array([o.y for o in best_opt], dtype=np.int64).reshape(n, S)
    releases = sorted({r for row in instance.busy_until for r in row if r > 0})
    starts_seq, t = [], max(releases, default=0)  # every GPU free from the latest busy-until slot
    for o in best_opt:
        starts_seq.append(t)
        t += o.solo
    got = _sim(instance, y_seq, starts_seq)
    assert got is not None and got[0] == t, "the sequential schedule is contention free"
    best = (starts_seq, y_seq, t)

    order = sorted(range(n), key=lambda j: (-instance.jobs[j].gpus * best_opt[j].solo, j))
    placed: list[int] = []
    y = np.zeros((n, S), dtype=np.int64)
    starts = [0] * n
    comps: list[int] = []
    for j in order:
        if deadline is not None and time.perf_counter() > deadline:
            return best
        sub = placed + [j]
        sub_inst = _sub_instance(instance, sub)
        rmin = min(o.solo for o in opts[j])
        choice = None
        for a in sorted({0} | set(comps) | set(releases)):
            if choice is not None and choice[0][0] <= a + rmin:
                break  # a later start cannot lower the makespan
            for o in opts[j]:
                y[j] = o.y
                starts[j] = a
                got = _sim(sub_inst, y[sub], [starts[k] for k in sub])
                if got is None:
                    continue
                mk, comp = got
                key = (mk, int(comp[-1]), a)
                if choice is None or key < choice[0]:
                    choice = (key, a, o.y, comp)
        if choice is None:  # pragma: no cover - starting after every placed job always fits
            return best
        _, a, yy, comp = choice
        starts[j], y[j] = a, yy
        placed.append(j)
        comps = [int(c) for c in comp]
    got = _sim(instance, y, starts)
    if got is not None and got[0] < best[2]:
        best = (list(starts), y.copy(), got[0])
    return best


class _OutOfTime(Exception):
    """A MILP's build passed the run's time limit; carries the greedy schedule and the info."""

    def __init__(self, greedy: tuple[list[int], np.ndarray, int], info: dict[str, Any]) -> None:
        super().__init__("time limit")
        self.greedy = greedy
        self.info = info


def _precompute_deadline(t0: float, time_limit: float | None) -> float | None:
    """The greedy warm start may use half of the run's time limit (the rest is the solver's)."""
    return None if time_limit is None else t0 + 0.5 * time_limit


def _time_left(t0: float, time_limit: float | None) -> float | None:
    """What remains of the run's time limit for the solver (at least 1 ms)."""
    return None if time_limit is None else max(1e-3, time_limit - (time.perf_counter() - t0))


def _sub_instance(instance: RarInstance, jobs: Sequence[int]) -> RarInstance:
    """The instance restricted to ``jobs`` (in that order); rate tables keep their meaning
    because eq. (6)-(9) read only the jobs present."""
    with trusted():  # derived from a checked instance
        return RarInstance(instance.servers, instance.network, instance.slot_seconds, 10**9,
                           tuple(instance.jobs[k] for k in jobs), instance.busy_until)


def heuristic_incumbent(instance: RarInstance, *, until: float | None = None
                        ) -> tuple[list[int], np.ndarray, int, str] | None:
    """The best schedule of SJF-BCO (default readings and the accumulated/least-loaded ones), LS
    and FF, as (starts, placements, makespan slots, which), or None if none found one.

    ``until`` (a ``time.perf_counter()`` reading; the exact models pass the end of the share of
    their time limit the warm start may use) stops the heuristics there, and the enclosing
    exact solve's deadline (:mod:`optkit.deadline`) stops them too: the best schedule the
    finished ones found is returned, and the solve goes on to its greedy schedule, which its
    own checks bound."""
    if until is None:
        return _heuristic_incumbent(instance)
    left = until - time.perf_counter()
    if left <= 0:
        return None
    found: list[tuple[list[int], np.ndarray, int, str]] = []
    try:
        with within(left):
            _heuristic_incumbent(instance, found)
    except DeadlineReached:  # the warm start's share (or the solve's time) is up: what was found stands
        pass
    return found[-1] if found else None


def _heuristic_incumbent(instance: RarInstance, found: list[tuple[list[int], np.ndarray, int, str]] | None = None
                         ) -> tuple[list[int], np.ndarray, int, str] | None:
    """:func:`heuristic_incumbent`'s runs; each better schedule is appended to ``found`` as it
    is found (a run cut by a deadline leaves the ones before it)."""
    from .baselines import ff, ls
    from .plan import NoPlanError
    from .sjf_bco import sjf_bco

    runs = {"sjf-bco": lambda: sjf_bco(instance),
            "sjf-bco(accumulated,least-loaded)": lambda: sjf_bco(instance, available="accumulated",
                                                                  fa_ffp="least-loaded"),
            "ls": lambda: ls(instance), "ff": lambda: ff(instance)}
    best = None
    for name, run in runs.items():
        check_deadline("running the heuristics for a warm start")  # an exact solve's deadline
        try:
            y, res = run()
        except NoPlanError:
            continue
        if res.outcome.stuck:
            continue
        got = _sim(instance, y, [int(v) for v in res.outcome.start])
        if got is not None and (best is None or got[0] < best[2]):
            best = ([int(v) for v in res.outcome.start], y.copy(), got[0], name)
            if found is not None:
                found.append(best)
    return best


def identical_job_groups(instance: RarInstance) -> list[list[int]]:
    """Groups (of >= 2, indices ascending) of jobs equal in every field but the id: swapping two
    of them (start and placement) changes nothing, eqs. (1)-(9)."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for j, job in enumerate(instance.jobs):
        key = (job.gpus, job.iterations, job.grad_bytes, job.batch, job.fwd_time_per_sample, job.bwd_time)
        groups.setdefault(key, []).append(j)
    return [g for g in groups.values() if len(g) > 1]


def canonical_schedule(instance: RarInstance, starts: Sequence[int], y: np.ndarray) -> tuple[list[int], np.ndarray]:
    """An equivalent schedule (same makespan, every completion permuted alike) in the form the
    symmetry breaking keeps: identical jobs in non-decreasing start order (their rows permuted),
    then, within each class of equal-capacity servers, the columns of y in non-increasing
    order of the lexicographic weight of :func:`_lex_weights` (the servers permuted)."""
    starts = list(starts)
    y = np.array(y, dtype=np.int64, copy=True)
    for grp in identical_job_groups(instance):
        rows = sorted(grp, key=lambda j: (starts[j], tuple(-v for v in y[j])))
        new_s = [starts[j] for j in rows]
        new_y = y[rows].copy()
        for k, j in enumerate(grp):
            starts[j], y[j] = new_s[k], new_y[k]
    weights = _lex_weights(len(instance.jobs), max(instance.servers) + 1, 2**40)
    col = [sum(wt * int(y[j, s]) for j, wt in enumerate(weights)) for s in range(len(instance.servers))]
    out = y.copy()
    for idx in _server_classes(instance):
        order = sorted(idx, key=lambda s: (-col[s], s))
        out[:, idx] = y[:, order]
    return starts, out


def _horizon(instance: RarInstance, ub: int, tighten: bool) -> int:
    """H = min(horizon, greedy makespan), or the instance's horizon alone (``tighten=False``)."""
    return min(instance.horizon, ub) if tighten else instance.horizon


def _lex_weights(n_jobs: int, base: int, limit: int) -> list[int]:
    """Weights B^(L-1-j) of the first L jobs, B^(L-1) <= limit (server symmetry)."""
    L = 1
    while L < n_jobs and base ** L <= limit:
        L += 1
    return [base ** (L - 1 - j) for j in range(L)]


def _server_classes(instance: RarInstance) -> list[list[int]]:
    """Servers that are interchangeable: equal O_s and equal multisets of busy-until slots
    (index order inside a class)."""
    classes: dict[tuple[Any, ...], list[int]] = {}
    for s, o in enumerate(instance.servers):
        classes.setdefault((o, tuple(sorted(instance.busy_slots(s)))), []).append(s)
    return [classes[k] for k in sorted(classes)]


def _symmetric_pairs(instance: RarInstance) -> list[tuple[int, int]]:
    """Consecutive (s, s') of one class of :func:`_server_classes`, s < s', in index order."""
    return [pair for idx in _server_classes(instance) for pair in zip(idx, idx[1:])]


def _busy_count(instance: RarInstance, s: int | None, t: int) -> int:
    """GPUs of server ``s`` (of the cluster when ``None``) busy in slot ``t`` (``busy_until``)."""
    servers = range(len(instance.servers)) if s is None else (s,)
    return sum(instance.servers[k] - instance.free_gpus_at(k, t) for k in servers)


def _max_contention(instance: RarInstance, opts: list[list[Option]]) -> list[int]:
    """P_s: an upper bound on the split jobs with workers on s at once (each holds >= 1 GPU)."""
    S = len(instance.servers)
    return [min(instance.servers[s], sum(1 for lst in opts if any(o.n > 1 and o.y[s] for o in lst)))
            for s in range(S)]


def _infeasible(instance: RarInstance, ub: int, H: int, info: dict[str, Any], solver: str) -> Result:
    """A solver's "infeasible": the answer when the greedy schedule misses the horizon too; a
    fault (status ``error``) when the greedy schedule, which satisfies the model, fits."""
    if ub <= H:
        return Result(Status.ERROR, problem=PROBLEM, objective_name="makespan", info=info,
                      message=f"{solver} reported the model infeasible, but the greedy schedule "
                              f"(makespan {ub} slots) satisfies it")
    return _finish(instance, Status.INFEASIBLE, None, None, None, info,
                   f"no schedule completes within the horizon of {H} slots ({solver}: infeasible)")


def _finish(instance: RarInstance, status: Status, y: np.ndarray | None, starts: Sequence[int] | None,
            bound: float | None, info: dict[str, Any], message: str) -> Result:
    """The Result; completions from :func:`.model.simulate`, objective from ``evaluate``."""
    if y is None or starts is None:
        return Result(status, bound=bound, problem=PROBLEM, objective_name="makespan", message=message, info=info)
    sol = schedule_dict(instance, y, simulate(instance, y, starts=starts))
    ev = evaluate(instance, sol)
    if not ev.feasible:  # pragma: no cover - Fact 2 says this cannot happen
        return Result(Status.ERROR, solution=sol, problem=PROBLEM, objective_name="makespan",
                      message="; ".join(ev.violations[:3]), info=info)
    value = ev.objectives["makespan"]
    if status == Status.OPTIMAL and bound is not None:
        bound = min(bound, value)
    return Result(status, objective=value, bound=bound, gap=relative_gap(value, bound), solution=sol,
                  metrics=dict(ev.metrics), problem=PROBLEM, objective_name="makespan", message=message,
                  info=info)


# ============================================================================= CP-SAT
def _greedy_or_nothing(instance: RarInstance, out: Any, greedy: tuple[Any, np.ndarray, int], bound: Any,
                       info: dict[str, Any]) -> Result:
    """A solve that ended without an incumbent: the greedy schedule when it fits the horizon
    (a feasible warm start), else no solution; the solver's status and bound are kept."""
    g_starts, g_y, ub = greedy
    if ub <= instance.horizon:
        return _finish(instance, out.status, g_y, list(g_starts), bound, info | {"incumbent": "greedy warm start"},
                       out.solver_status)
    return _finish(instance, out.status, None, None, bound, info, out.solver_status)


def _prepare(instance: RarInstance, objective: str, tighten: bool,
             heur: tuple[list[int], np.ndarray, int, str] | None | bool = False,
             deadline: float | None = None) -> tuple[Any, ...]:
    """What both models start from: slot length, J, S, the phi tables, the placement options,
    the greedy schedule (starts, placements, makespan ub; its packing pass stops at
    ``deadline``), the horizon H, each job's fewest active slots ``rmin`` and the run's ``info``
    dict."""
    _check_objective(objective)
    phi = _phi_tables(instance)
    opts = placement_options(instance, phi)
    greedy = greedy_schedule(instance, opts, deadline=deadline)
    info: dict[str, Any] = {"upper_bound_greedy_slots": greedy[2], "options": sum(len(lst) for lst in opts)}
    if tighten:
        heur = heuristic_incumbent(instance, until=deadline) if heur is False else heur
        if heur is not None and heur is not False:
            info["upper_bound_heuristic_slots"] = heur[2]
            info["upper_bound_heuristic"] = heur[3]
            if heur[2] < greedy[2]:
                greedy = (heur[0], heur[1], heur[2])
    greedy = (*canonical_schedule(instance, greedy[0], greedy[1]), greedy[2])
    H = _horizon(instance, greedy[2], tighten)
    info["horizon_slots"] = H
    rmin = [min(o.solo for o in lst) for lst in opts]
    return instance.slot_seconds, len(instance.jobs), len(instance.servers), phi, opts, greedy, H, rmin, info


def _offer_greedy(instance: RarInstance, greedy: tuple[Any, np.ndarray, int], bound: float | None,
                  info: dict[str, Any]) -> None:
    """A run cut by its time limit from now on returns the greedy schedule when it fits the
    horizon, and ``bound`` (the proven lower bound when ``None``) (:mod:`optkit.deadline`)."""
    from .bounds import lower_bound

    g_starts, g_y, ub = greedy
    if ub <= instance.horizon:
        offer_incumbent(lambda message: _finish(
            instance, Status.TIME_LIMIT, g_y, list(g_starts), lower_bound(instance, "makespan") if bound is None else bound,
            info | {"incumbent": "greedy warm start"}, message))


@bounded
def run_cpsat(instance: RarInstance, *, objective: str = "makespan", time_limit: float | None = None,
              seed: int | None = None, workers: int | None = None, log: bool = False,
              symmetry: bool = True, tighten: bool = True, shortcut: bool = True) -> Result:
    """Minimum makespan by the time-indexed CP-SAT model (module docstring).

    ``bound`` is CP-SAT's proven bound in seconds. When the incumbent (the best of the greedy
    schedule and the heuristics) meets the proven lower bound it is optimal and no model is built
    (``info["proof"]``; ``shortcut=False`` builds and solves the model anyway). Without an
    incumbent at the time limit, the greedy schedule is returned (status ``time_limit``).
    ``symmetry=False`` drops the server symmetry breaking and ``tighten=False`` the greedy horizon
    cap (H = the instance's horizon): larger models, for cross-checks.

    References
    ----------
    Yu, Ji, Rajan, Liu, "On Scheduling Ring-All-Reduce Learning Jobs in Multi-Tenant GPU
    Clusters with Communication Contention" (MobiHoc '22): Sec. 4, constraints (1)-(9) and
    Problem RAR-DDLS (Sec. 4.2, minimum makespan), as the time-indexed CP-SAT model of the
    module docstring; the optimum Theorem 5 bounds SJF-BCO against.

    Notes
    -----
    Guarantee: status ``optimal`` is a proven minimum makespan over the schedules within the
    instance's horizon; at the time limit, ``time_limit`` with a proven lower bound.

    Units: the makespan and ``bound`` in seconds; starts and the model's time index in slots
    (``slot_seconds`` each); ``time_limit`` in seconds.

    Examples
    --------
    >>> from optkit.formulations.rar_ddls import RarInstance, evaluate
    >>> from optkit.formulations.rar_ddls.generate import SUITES
    >>> inst = RarInstance.from_dict(next(iter(SUITES["tiny"].build()))[1])   # 2 jobs on servers of 2 and 3 GPUs
    >>> r = run_cpsat(inst, time_limit=30, seed=0)
    >>> r.status.value, evaluate(inst, r.solution).objectives["makespan"]
    ('optimal', 16.0)
    """
    from ortools.sat.python import cp_model

    from optkit.solvers.cpsat import solve_cp_model

    from .bounds import lower_bound

    t0 = time.perf_counter()
    _check_objective(objective)
    slot = instance.slot_seconds
    lb = int(round(lower_bound(instance, "makespan") / slot))
    heur = heuristic_incumbent(instance, until=_precompute_deadline(t0, time_limit)) if tighten else None
    if shortcut and heur is not None and heur[2] <= min(lb, instance.horizon):
        starts0, y0 = canonical_schedule(instance, heur[0], heur[1])
        info0 = {"lower_bound_slots": lb, "upper_bound_heuristic_slots": heur[2], "upper_bound_heuristic": heur[3],
                 "proof": "the heuristic incumbent's makespan equals the proven lower bound",
                 "model_objective_s": heur[2] * slot, "incumbent": "heuristic",
                 "build_and_solve_s": time.perf_counter() - t0}
        return _finish(instance, Status.OPTIMAL, y0, starts0, lb * slot, info0, "incumbent meets the lower bound")
    slot, J, S, phi, opts, (g_starts, g_y, ub), H, rmin, info = _prepare(instance, objective, tighten, heur,
                                                                         deadline=_precompute_deadline(t0, time_limit))
    info["lower_bound_slots"] = lb
    _offer_greedy(instance, (g_starts, g_y, ub), lb * slot, info)
    stage = "building the CP-SAT model"
    if lb > H or any(r > H for r in rmin):
        info["build_and_solve_s"] = time.perf_counter() - t0
        return _finish(instance, Status.INFEASIBLE, None, None, None, info,
                       f"no schedule completes within the horizon of {H} slots (lower bound {lb} slots)")
    if shortcut and ub <= H and ub <= lb:
        info["build_and_solve_s"] = time.perf_counter() - t0
        info["proof"] = "the incumbent's makespan equals the proven lower bound"
        info["model_objective_s"] = ub * slot
        return _finish(instance, Status.OPTIMAL, g_y, list(g_starts), lb * slot, info | {"incumbent": "heuristic"},
                       "incumbent meets the lower bound")
    P = J  # rate tables are indexed by p = 0..J
    Ps = _max_contention(instance, opts)
    bvar: list[list[Any]] = []
    fvar: list[list[Any]] = []
    aux: dict[tuple[Any, ...], Any] = {}  # (kind, j, [s,] t) -> variable, for the full hint

    m = cp_model.CpModel()
    z = [[m.NewBoolVar(f"z{j}_{k}") for k in range(len(opts[j]))] for j in range(J)]
    for row in z:
        m.AddExactlyOne(row)
    Sv = [m.NewIntVar(0, H - rmin[j], f"S{j}") for j in range(J)]
    Ev = [m.NewIntVar(rmin[j], H, f"E{j}") for j in range(J)]
    size = [m.NewIntVar(rmin[j], H, f"D{j}") for j in range(J)]
    a = [[None] * H for _ in range(J)]
    for j in range(J):
        check_deadline(stage)
        m.Add(size[j] == Ev[j] - Sv[j])
        m.Add(size[j] >= sum(o.solo * lit for o, lit in zip(opts[j], z[j])))
        b = [m.NewBoolVar(f"b{j}_{t}") for t in range(H)]
        f = [m.NewBoolVar(f"f{j}_{t}") for t in range(H)]
        bvar.append(b)
        fvar.append(f)
        for t in range(H):
            m.Add(Sv[j] <= t).OnlyEnforceIf(b[t])
            m.Add(Sv[j] >= t + 1).OnlyEnforceIf(b[t].Not())
            m.Add(Ev[j] <= t).OnlyEnforceIf(f[t])
            m.Add(Ev[j] >= t + 1).OnlyEnforceIf(f[t].Not())
            if t:
                m.AddImplication(b[t - 1], b[t])
                m.AddImplication(f[t - 1], f[t])
                m.AddImplication(f[t], b[t - 1])
            act = m.NewBoolVar(f"a{j}_{t}")
            m.AddBoolAnd([b[t], f[t].Not()]).OnlyEnforceIf(act)
            m.AddBoolOr([b[t].Not(), f[t], act])
            a[j][t] = act
        m.Add(f[0] == 0)

    # eq. (6): split jobs per server and slot
    u = [[None] * S for _ in range(J)]
    for j in range(J):
        for s in range(S):
            lits = [lit for o, lit in zip(opts[j], z[j]) if o.n > 1 and o.y[s]]
            if lits:
                us = m.NewBoolVar(f"u{j}_{s}")
                m.Add(us == sum(lits))
                u[j][s] = us
    c = [[None] * H for _ in range(S)]
    w: dict[tuple[int, int, int], Any] = {}
    for s in range(S):
        check_deadline(stage)
        for t in range(H):
            terms = []
            for j in range(J):
                if u[j][s] is not None:
                    v = m.NewBoolVar(f"w{j}_{s}_{t}")
                    m.AddBoolAnd([a[j][t], u[j][s]]).OnlyEnforceIf(v)
                    m.AddBoolOr([a[j][t].Not(), u[j][s].Not(), v])
                    w[j, s, t] = v
                    terms.append(v)
            if terms:
                cv = m.NewIntVar(0, Ps[s], f"c{s}_{t}")
                m.Add(cv == sum(terms))
                c[s][t] = cv

    # progress: g <= phi_j[n_j][p_j[t]], sum g >= F_j
    for j, job in enumerate(instance.jobs):
        check_deadline(stage)
        phimax = max(int(phi[j][o.n][1]) for o in opts[j])
        split_servers = [s for s in range(S) if u[j][s] is not None]
        ns = sorted({o.n for o in opts[j]})
        g = [m.NewIntVar(0, phimax, f"g{j}_{t}") for t in range(H)]
        for t in range(H):
            aux["g", j, t] = g[t]
        if not split_servers:  # one server only: constant rate
            r1 = int(phi[j][1][1])
            for t in range(H):
                m.Add(g[t] == r1).OnlyEnforceIf(a[j][t])
                m.Add(g[t] == 0).OnlyEnforceIf(a[j][t].Not())
        else:
            flat = np.zeros((max(ns) + 1) * (P + 1), dtype=np.int64)
            for nn in ns:
                flat[nn * (P + 1): (nn + 1) * (P + 1)] = phi[j][nn]
            nvar = m.NewIntVar(min(ns), max(ns), f"n{j}")
            aux["n", j] = nvar
            m.Add(nvar == sum(o.n * lit for o, lit in zip(opts[j], z[j])))
            pmax = max(Ps[s] for s in split_servers)
            for t in range(H):
                q = []
                for s in split_servers:
                    qv = m.NewIntVar(0, Ps[s], f"q{j}_{s}_{t}")
                    aux["q", j, s, t] = qv
                    m.Add(qv == c[s][t]).OnlyEnforceIf(u[j][s])
                    m.Add(qv == 0).OnlyEnforceIf(u[j][s].Not())
                    q.append(qv)
                p = m.NewIntVar(0, pmax, f"p{j}_{t}")
                m.AddMaxEquality(p, q)
                idx = m.NewIntVar(0, len(flat) - 1, f"i{j}_{t}")
                m.Add(idx == (P + 1) * nvar + p)
                r = m.NewIntVar(int(flat.min()), int(flat.max()), f"r{j}_{t}")
                aux["p", j, t], aux["i", j, t], aux["r", j, t] = p, idx, r
                m.AddElement(idx, [int(v) for v in flat], r)
                m.Add(g[t] == r).OnlyEnforceIf(a[j][t])
                m.Add(g[t] == 0).OnlyEnforceIf(a[j][t].Not())
        m.Add(sum(g) >= job.iterations)

    # eq. (2): capacity, per server and (redundant) for the whole cluster
    per_server: list[tuple[list[Any], list[int]]] = [([], []) for _ in range(S)]
    whole = []
    for j in range(J):
        for o, lit in zip(opts[j], z[j]):
            iv = m.NewOptionalIntervalVar(Sv[j], size[j], Ev[j], lit, f"iv{j}_{o.y}")
            for s in range(S):
                if o.y[s]:
                    per_server[s][0].append(iv)
                    per_server[s][1].append(o.y[s])
        whole.append(m.NewIntervalVar(Sv[j], size[j], Ev[j], f"job{j}"))
    busy_iv: list[Any] = []  # one fixed interval [0, r) per busy GPU (busy_until)
    for s in range(S):
        fixed = [m.NewIntervalVar(0, r, r, f"busy{s}_{g}") for g, r in enumerate(instance.busy_slots(s)) if r > 0]
        busy_iv += fixed
        if per_server[s][0]:
            m.AddCumulative(per_server[s][0] + fixed, per_server[s][1] + [1] * len(fixed), instance.servers[s])
    m.AddCumulative(whole + busy_iv, [job.gpus for job in instance.jobs] + [1] * len(busy_iv), instance.total_gpus)

    if symmetry:
        weights = _lex_weights(J, max(instance.servers) + 1, 2**40)
        col = [sum(wt * o.y[s] * lit for j, wt in enumerate(weights) for o, lit in zip(opts[j], z[j]) if o.y[s])
               for s in range(S)]
        for s1, s2 in _symmetric_pairs(instance):
            m.Add(col[s1] >= col[s2])
        # identical jobs: start order follows index order (canonical_schedule; compatible with the
        # server order above, which permutes servers, never starts)
        for grp in identical_job_groups(instance):
            for j1, j2 in zip(grp, grp[1:]):
                m.Add(Sv[j1] <= Sv[j2])

    Z = m.NewIntVar(max(lb, max(rmin)), H, "makespan")
    m.AddMaxEquality(Z, Ev)
    # redundant energy: the GPU-slots held fit under the makespan, cluster and servers
    m.Add(sum(job.gpus * size[j] for j, job in enumerate(instance.jobs)) <= instance.total_gpus * Z)
    m.Minimize(Z)

    hint: dict[Any, int] = {}
    g_out = simulate(instance, g_y, starts=g_starts)
    if int(g_out.completion.max()) <= H:
        check_deadline(stage)
        hint = _full_hint(instance, opts, phi, P, g_y, list(g_starts), g_out, H, Sv, Ev, size, z, bvar, fvar, a, u, w,
                          c, aux, Z)
    out = solve_cp_model(m, time_limit=_time_left(t0, time_limit), workers=workers, seed=seed, hint=hint, log=log)
    proto = m.Proto()
    info.update({"solver_status": out.solver_status, "solver_time_s": out.wall_time_s,
                 "variables": len(proto.variables), "constraints": len(proto.constraints)})
    bound = out.bound * slot if out.bound is not None else None
    add_solver_points(out.trajectory, lambda v: v * slot)  # slots -> seconds
    info["build_and_solve_s"] = time.perf_counter() - t0
    info["model_objective_s"] = out.objective * slot if out.objective is not None else None
    if out.status == Status.INFEASIBLE:
        return _infeasible(instance, ub, H, info, "CP-SAT")
    if out.has_solution:
        solver = out.raw
        starts = [int(solver.Value(v)) for v in Sv]
        y = np.array([next(o.y for o, lit in zip(opts[j], z[j]) if solver.Value(lit)) for j in range(J)],
                     dtype=np.int64).reshape(J, S)
        return _finish(instance, out.status, y, starts, bound, info | {"incumbent": "solver"}, out.solver_status)
    return _greedy_or_nothing(instance, out, (g_starts, g_y, ub), bound, info)


def _full_hint(instance: RarInstance, opts: list[list[Option]], phi: list[dict[int, np.ndarray]], P: int,
               y: np.ndarray, starts: list[int], out: Any, H: int, Sv: list[Any], Ev: list[Any], size: list[Any],
               z: list[list[Any]], bvar: list[list[Any]], fvar: list[list[Any]], a: list[list[Any]],
               u: list[list[Any]], w: dict[tuple[int, int, int], Any], c: list[list[Any]],
               aux: dict[tuple[Any, ...], Any], Z: Any) -> dict[Any, int]:
    """A value for every variable of the CP-SAT model from a schedule (starts, placements and its
    simulated completions): a complete hint, which CP-SAT checks at once instead of repairing."""
    J, S = len(instance.jobs), len(instance.servers)
    comp = [int(v) for v in out.completion]
    hint: dict[Any, int] = {Z: max(comp)}
    active = np.zeros((J, H), dtype=bool)
    for j in range(J):
        hint[Sv[j]], hint[Ev[j]], hint[size[j]] = starts[j], comp[j], comp[j] - starts[j]
        yj = tuple(int(v) for v in y[j])
        for o, lit in zip(opts[j], z[j]):
            hint[lit] = int(o.y == yj)
        for t in range(H):
            hint[bvar[j][t]] = int(starts[j] <= t)
            hint[fvar[j][t]] = int(comp[j] <= t)
            active[j, t] = starts[j] <= t < comp[j]
            hint[a[j][t]] = int(active[j, t])
    split_on = np.zeros((J, S), dtype=bool)
    for j in range(J):
        for s in range(S):
            if u[j][s] is not None:
                split_on[j, s] = (y[j] > 0).sum() > 1 and y[j, s] > 0
                hint[u[j][s]] = int(split_on[j, s])
    count = np.zeros((S, H), dtype=np.int64)
    for (j, s, t), v in w.items():
        hint[v] = int(active[j, t] and split_on[j, s])
        count[s, t] += hint[v]
    for s in range(S):
        for t in range(H):
            if c[s][t] is not None:
                hint[c[s][t]] = int(count[s, t])
    for j in range(J):
        n = int((y[j] > 0).sum())
        if ("n", j) in aux:
            hint[aux["n", j]] = n
        for t in range(H):
            qs = [(s, aux["q", j, s, t]) for s in range(S) if ("q", j, s, t) in aux]
            for s, qv in qs:
                hint[qv] = int(count[s, t]) if split_on[j, s] else 0
            if ("p", j, t) in aux:
                p = max((hint[qv] for _, qv in qs), default=0)
                hint[aux["p", j, t]] = p
                hint[aux["i", j, t]] = (P + 1) * n + p
                hint[aux["r", j, t]] = int(phi[j][n][p])
                hint[aux["g", j, t]] = int(phi[j][n][p]) if active[j, t] else 0
            else:
                hint[aux["g", j, t]] = int(phi[j][1][1]) if active[j, t] else 0
    return hint


# ============================================================================= MILP
@bounded
def run_highs(instance: RarInstance, *, objective: str = "makespan", time_limit: float | None = None,
              seed: int | None = None, workers: int | None = None, solver: str = "highs",
              symmetry: bool = True, tighten: bool = True) -> Result:
    """Minimum makespan by the time-indexed MILP (module docstring) through Pyomo.
    ``workers`` is accepted for a uniform signature (HiGHS' MIP search is serial);
    ``symmetry`` and ``tighten`` as in :func:`run_cpsat`.

    References
    ----------
    Yu, Ji, Rajan, Liu, "On Scheduling Ring-All-Reduce Learning Jobs in Multi-Tenant GPU
    Clusters with Communication Contention" (MobiHoc '22): Problem RAR-DDLS (Sec. 4.2) with the
    contention model of constraint (6) linearised, as the time-indexed MILP of the module
    docstring.

    Notes
    -----
    Guarantee: status ``optimal`` is a proven minimum makespan over the schedules within the
    instance's horizon (the contention model linearised exactly); at the time limit,
    ``time_limit`` with the solver's proven lower bound.

    Units: the makespan and ``bound`` in seconds, the MILP's time index in slots; ``time_limit``
    in seconds (``workers`` unused).

    Examples
    --------
    >>> from optkit.formulations.rar_ddls import RarInstance, evaluate
    >>> from optkit.formulations.rar_ddls.generate import SUITES
    >>> inst = RarInstance.from_dict(next(iter(SUITES["tiny"].build()))[1])   # 2 jobs on servers of 2 and 3 GPUs
    >>> r = run_highs(inst, time_limit=30)
    >>> r.status.value, r.bound
    ('optimal', 16.0)
    """
    t0 = time.perf_counter()
    try:
        return _run_highs(instance, objective=objective, time_limit=time_limit, seed=seed, workers=workers,
                          solver=solver, symmetry=symmetry, tighten=tighten)
    except _OutOfTime as out:
        out.info["build_and_solve_s"] = time.perf_counter() - t0
        out.info["stopped"] = "time limit reached while building the MILP"
        out.info["cut_while"] = "building the MILP"
        starts, y, _ub = out.greedy
        from .bounds import lower_bound

        return _finish(instance, Status.TIME_LIMIT, y, starts, lower_bound(instance, "makespan"), out.info,
                       "time limit reached while building the MILP: the greedy schedule and the lower bound")


def _run_highs(instance: RarInstance, *, objective: str = "makespan", time_limit: float | None = None,
              seed: int | None = None, workers: int | None = None, solver: str = "highs",
              symmetry: bool = True, tighten: bool = True) -> Result:
    """The body of :func:`run_highs` (raises :class:`_OutOfTime` past the limit)."""
    import pyomo.environ as pyo

    from optkit.solvers.milp import solve_pyomo_model

    t0 = time.perf_counter()
    slot, J, S, phi, opts, (g_starts, g_y, ub), H, rmin, info = _prepare(
        instance, objective, tighten, deadline=_precompute_deadline(t0, time_limit))
    _offer_greedy(instance, (g_starts, g_y, ub), None, info)  # cut later (translating, solving): the same answer
    if any(r > H for r in rmin):
        info["build_and_solve_s"] = time.perf_counter() - t0
        return _finish(instance, Status.INFEASIBLE, None, None, None, info,
                       f"no schedule completes within the horizon of {H} slots")
    Ps = _max_contention(instance, opts)
    T = range(H)
    deadline = None if time_limit is None else t0 + time_limit

    def tick() -> None:
        """Building the time-indexed model grows with J x H^2 terms: stop at the time limit."""
        here = current_deadline()  # the call's deadline (optkit.deadline): the same instant, its clock
        if (deadline is not None and time.perf_counter() > deadline) or (here is not None and here.expired()):
            raise _OutOfTime((g_starts, g_y, ub), info)

    m = pyo.ConcreteModel()
    OK = [(j, k) for j in range(J) for k in range(len(opts[j]))]
    m.z = pyo.Var(OK, domain=pyo.Binary)
    XS = [(j, t) for j in range(J) for t in range(H - rmin[j] + 1)]
    XE = [(j, t) for j in range(J) for t in range(rmin[j], H + 1)]
    m.x = pyo.Var(XS, domain=pyo.Binary)
    m.e = pyo.Var(XE, domain=pyo.Binary)
    m.c_one = pyo.ConstraintList()
    for j in range(J):
        tick()
        m.c_one.add(sum(m.z[j, k] for k in range(len(opts[j]))) == 1)
        m.c_one.add(sum(m.x[j, t] for t in range(H - rmin[j] + 1)) == 1)
        m.c_one.add(sum(m.e[j, t] for t in range(rmin[j], H + 1)) == 1)

    def started(j: int, t: int) -> Any:  # S_j <= t
        return sum(m.x[j, tt] for tt in range(min(t, H - rmin[j]) + 1))

    def ended(j: int, t: int) -> Any:  # E_j <= t
        return sum(m.e[j, tt] for tt in range(rmin[j], t + 1))

    m.act = pyo.Var([(j, t) for j in range(J) for t in T], bounds=(0, 1))
    m.c_act = pyo.ConstraintList()
    for j in range(J):
        tick()
        # duration at least the chosen option's solo time: E - S >= sum_o solo_o z_o
        m.c_act.add(sum(t * m.e[j, t] for t in range(rmin[j], H + 1)) - sum(t * m.x[j, t] for t in range(H - rmin[j] + 1))
                    >= sum(o.solo * m.z[j, k] for k, o in enumerate(opts[j])))
        for t in T:
            m.c_act.add(m.act[j, t] == started(j, t) - ended(j, t))
    # eq. (6): w[j,s,t] >= [j active and split with workers on s]; counts c[s,t]
    m.w = pyo.Var([(j, s, t) for j in range(J) for s in range(S) for t in T], bounds=(0, 1))
    m.c_w = pyo.ConstraintList()
    usplit: dict[tuple[int, int], Any] = {}
    for j in range(J):
        tick()
        for s in range(S):
            ks = [k for k, o in enumerate(opts[j]) if o.n > 1 and o.y[s]]
            if ks:
                usplit[j, s] = sum(m.z[j, k] for k in ks)
    for (j, s), expr in usplit.items():
        for t in T:
            m.c_w.add(m.w[j, s, t] >= m.act[j, t] + expr - 1)
    m.cnt = pyo.Var([(s, t) for s in range(S) for t in T], bounds=(0, None))
    m.c_cnt = pyo.ConstraintList()
    for s in range(S):
        tick()
        for t in T:
            m.c_cnt.add(m.cnt[s, t] == sum(m.w[j, s, t] for j in range(J) if (j, s) in usplit))
    # level indicators h[s,t,p], forced to 1 when c[s,t] >= p, for the levels where a rate drops
    drops_any = set()
    for j in range(J):
        tick()
        for nn, tab in phi[j].items():
            if nn > 1:
                drops_any |= {p for p in range(2, J + 1) if tab[p - 1] > tab[p]}
    HK = [(s, t, p) for s in range(S) for t in T for p in sorted(drops_any) if p <= Ps[s]]
    m.h = pyo.Var(HK, domain=pyo.Binary)
    m.c_h = pyo.ConstraintList()
    for (s, t, p) in HK:
        m.c_h.add(m.cnt[s, t] - (p - 1) <= (Ps[s] - p + 1) * m.h[s, t, p])
    # progress (eq. 9): g <= phi(n, 1) minus the drops of the levels reached on each own server
    m.g = pyo.Var([(j, t) for j in range(J) for t in T], bounds=(0, None))
    m.c_g = pyo.ConstraintList()
    for j, job in enumerate(instance.jobs):
        phimax = max(int(phi[j][o.n][1]) for o in opts[j])
        ns = sorted({o.n for o in opts[j]})
        Un = {nn: sum(m.z[j, k] for k, o in enumerate(opts[j]) if o.n == nn) for nn in ns}
        for t in T:
            m.c_g.add(m.g[j, t] <= phimax * m.act[j, t])
            for nn in ns:
                tab = phi[j][nn]
                if int(tab[1]) < phimax:
                    m.c_g.add(m.g[j, t] <= int(tab[1]) + phimax * (1 - Un[nn]))
                if nn == 1:
                    continue
                for s in range(S):
                    tick()
                    ks = [k for k, o in enumerate(opts[j]) if o.n == nn and o.y[s]]
                    dterms = [(int(tab[p - 1] - tab[p]), m.h[s, t, p]) for p in range(2, Ps[s] + 1)
                              if tab[p - 1] > tab[p]]
                    if ks and dterms:
                        m.c_g.add(m.g[j, t] <= int(tab[1]) - sum(d * hv for d, hv in dterms)
                                  + phimax * (1 - sum(m.z[j, k] for k in ks)))
        m.c_g.add(sum(m.g[j, t] for t in T) >= job.iterations)
    # eq. (2): capacity, L[j,s,t] >= Y[j,s] when j is active
    m.L = pyo.Var([(j, s, t) for j in range(J) for s in range(S) for t in T], bounds=(0, None))
    m.c_cap = pyo.ConstraintList()
    for j in range(J):
        tick()
        for s in range(S):
            Y = sum(o.y[s] * m.z[j, k] for k, o in enumerate(opts[j]) if o.y[s])
            if isinstance(Y, int):
                continue
            bigm = min(instance.servers[s], instance.jobs[j].gpus)
            for t in T:
                m.c_cap.add(m.L[j, s, t] >= Y - bigm * (1 - m.act[j, t]))
    for s in range(S):
        tick()
        for t in T:
            m.c_cap.add(sum(m.L[j, s, t] for j in range(J)) <= instance.free_gpus_at(s, t))
    for t in T:  # redundant: the whole cluster
        m.c_cap.add(sum(instance.jobs[j].gpus * m.act[j, t] for j in range(J))
                    <= instance.total_gpus - _busy_count(instance, None, t))
    if symmetry:
        weights = _lex_weights(J, max(instance.servers) + 1, 10**4)

        def col(s: int) -> Any:
            return sum(wt * o.y[s] * m.z[j, k] for j, wt in enumerate(weights)
                       for k, o in enumerate(opts[j]) if o.y[s])

        m.c_sym = pyo.ConstraintList()
        for s1, s2 in _symmetric_pairs(instance):
            c1, c2 = col(s1), col(s2)
            if isinstance(c1, int) and isinstance(c2, int):
                continue  # no option of the first L jobs uses either server: nothing to order (0 >= 0)
            m.c_sym.add(c1 >= c2)
    from .bounds import lower_bound

    lb = int(round(lower_bound(instance, "makespan") / slot))
    m.Z = pyo.Var(bounds=(max(lb, max(rmin)), H))
    m.c_mk = pyo.Constraint(range(J), rule=lambda mdl, j: mdl.Z >= sum(t * mdl.e[j, t] for t in range(rmin[j], H + 1)))
    m.obj = pyo.Objective(expr=m.Z, sense=pyo.minimize)
    info["lower_bound_slots"] = lb
    if lb > H:
        info["build_and_solve_s"] = time.perf_counter() - t0
        return _finish(instance, Status.INFEASIBLE, None, None, None, info,
                       f"no schedule completes within the horizon of {H} slots (lower bound {lb} slots)")
    out = solve_pyomo_model(m, solver=solver, time_limit=_time_left(t0, time_limit), seed=seed)
    if out.status == Status.INFEASIBLE and solver in ("highs", "appsi_highs"):
        # HiGHS 1.14's MIP presolve can declare a feasible model infeasible (HiGHS issue
        # #3090; met here on a model the greedy schedule satisfies): re-solve without presolve.
        info["presolve_off_retry"] = True
        left = None if time_limit is None else max(1e-3, time_limit - (time.perf_counter() - t0))
        out = solve_pyomo_model(m, solver=solver, time_limit=left, seed=seed, options={"presolve": "off"})
    info.update({"solver_status": out.solver_status, "solver_time_s": out.wall_time_s,
                 "variables": m.nvariables(), "constraints": m.nconstraints()})
    info["build_and_solve_s"] = time.perf_counter() - t0
    info["model_objective_s"] = out.objective * slot if out.objective is not None else None
    add_solver_points(out.trajectory, lambda v: v * slot)  # slots -> seconds (the kept solve only)
    if out.status == Status.INFEASIBLE:
        return _infeasible(instance, ub, H, info, solver)
    bound = out.bound * slot if out.bound is not None else None
    if out.has_solution:
        starts = [next(t for t in range(H - rmin[j] + 1) if pyo.value(m.x[j, t]) > 0.5) for j in range(J)]
        y = np.array([next(o.y for k, o in enumerate(opts[j]) if pyo.value(m.z[j, k]) > 0.5) for j in range(J)],
                     dtype=np.int64).reshape(J, S)
        return _finish(instance, out.status, y, starts, bound, info | {"incumbent": "solver"}, out.solver_status)
    return _greedy_or_nothing(instance, out, (g_starts, g_y, ub), bound, info)


# ============================================================================= brute force
def brute_force(instance: RarInstance, objective: str = "makespan") -> tuple[float, dict[str, Any]] | None:
    """The optimum makespan (seconds) and an optimal schedule by enumerating every (option,
    start) per job, each combination measured by :func:`.model.evaluate` (module docstring);
    ``None`` when no schedule completes within the instance's horizon. Raises
    :class:`InputError` when the search visits more than :data:`BRUTE_FORCE_MAX_NODES` partial
    assignments (or could: the product of the per-job choices, before pruning, above 10^12).

    References
    ----------
    Yu, Ji, Rajan, Liu, "On Scheduling Ring-All-Reduce Learning Jobs in Multi-Tenant GPU
    Clusters with Communication Contention" (MobiHoc '22): the minimum makespan of Problem
    RAR-DDLS (Sec. 4.2) by enumerating placement options and start slots, each schedule measured
    by the contention model (constraints (1)-(9)).

    Notes
    -----
    Guarantee: the optimum within the horizon (complete enumeration, each schedule measured by
    the referee; independent of both models).

    Units: the makespan in seconds; the schedule's starts in slots.

    Examples
    --------
    >>> from optkit.formulations.rar_ddls import RarInstance, evaluate
    >>> from optkit.formulations.rar_ddls.generate import SUITES
    >>> inst = RarInstance.from_dict(next(iter(SUITES["tiny"].build()))[1])   # 2 jobs on servers of 2 and 3 GPUs
    >>> value, schedule = brute_force(inst)
    >>> value
    16.0
    """
    _check_objective(objective)
    J, S = len(instance.jobs), len(instance.servers)
    phi = _phi_tables(instance)
    opts = placement_options(instance, phi)
    Hz = instance.horizon
    choices = [sorted(((o, a) for o in lst for a in range(0, Hz - o.solo + 1)), key=lambda c: c[1]) for lst in opts]
    if math.prod(len(c) for c in choices) > 10**12:
        raise InputError("instance", "is too large for brute force; use cpsat or highs")
    best: list[Any] = [Hz + 1, None]
    visited = [0]
    y = np.zeros((J, S), dtype=np.int64)
    starts = [0] * J

    def rec(j: int, zero: bool) -> None:
        visited[0] += 1
        if visited[0] > BRUTE_FORCE_MAX_NODES:
            raise InputError("instance", f"is too large for brute force: more than {BRUTE_FORCE_MAX_NODES} "
                             "partial (option, start) assignments; use cpsat or highs")
        if j == J:
            if not zero and not instance.busy_until:
                return  # pruning (a), only valid with no busy GPU
            # evaluate re-simulates the schedule itself; the completions are written into the
            # best schedule only (the simulator's, as evaluate checks them)
            ev = evaluate(instance, {"jobs": [{"id": job.id, "start": starts[k], "gpus_per_server": [int(v) for v in y[k]]}
                                              for k, job in enumerate(instance.jobs)]})
            if ev.feasible and ev.metrics["makespan_slots"] < best[0]:
                best[0], best[1] = int(ev.metrics["makespan_slots"]), (y.copy(), list(starts))
            return
        for o, a in choices[j]:
            if a + o.solo >= best[0]:
                continue  # pruning (b)
            y[j] = o.y
            starts[j] = a
            rec(j + 1, zero or a == 0)

    rec(0, False)
    if best[1] is None:
        return None
    y_best, starts_best = best[1]
    return best[0] * instance.slot_seconds, schedule_dict(instance, y_best, simulate(instance, y_best, starts=starts_best))


def run_brute_force(instance: RarInstance, *, objective: str = "makespan", time_limit: float | None = None,
                    seed: int | None = None) -> Result:
    """Brute force as an algorithm: ``optimal`` with ``bound`` = the optimum.

    References
    ----------
    Yu, Ji, Rajan, Liu, "On Scheduling Ring-All-Reduce Learning Jobs in Multi-Tenant GPU
    Clusters with Communication Contention" (MobiHoc '22), Sec. 4.2: :func:`brute_force` as an
    algorithm entry. Not in the algorithm table (it cannot stop at a time limit): the exact
    oracle (:func:`optkit.testing.oracle.optimum`) asks it, without a time limit, after CP-SAT.

    Notes
    -----
    Guarantee: the optimum within the horizon (:func:`brute_force`).

    Units: the optimum (``bound``) in seconds; the schedule's starts in slots; ``time_limit`` in
    seconds.

    Examples
    --------
    >>> from optkit.formulations.rar_ddls import RarInstance, evaluate
    >>> from optkit.formulations.rar_ddls.generate import SUITES
    >>> inst = RarInstance.from_dict(next(iter(SUITES["tiny"].build()))[1])   # 2 jobs on servers of 2 and 3 GPUs
    >>> r = run_brute_force(inst)
    >>> r.status.value, r.bound
    ('optimal', 16.0)
    """
    res = brute_force(instance, objective)
    if res is None:
        return Result(Status.INFEASIBLE, problem=PROBLEM, objective_name="makespan",
                      message=f"no schedule completes within the horizon of {instance.horizon} slots")
    value, sol = res
    y = np.array([e["gpus_per_server"] for e in sol["jobs"]], dtype=np.int64)
    return _finish(instance, Status.OPTIMAL, y, [e["start"] for e in sol["jobs"]], value, {}, "enumeration")
