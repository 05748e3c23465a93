"""rar-ddls lower bounds on the optimum, and Theorem 5's ratio ``n_g·phi·u/l`` per instance.

Notation: servers s with O_s GPUs, N = sum_s O_s; job j with G_j GPUs and F_j iterations; slots
of ``slot_seconds``. For a job on n servers, ``phi_j(n, p)`` = :func:`.model.rate_table` (eq. 9)
iterations per slot at contention p (eq. 6). The *feasible server counts* of job j are
``n = min_servers(G_j) .. min(G_j, S)`` (S servers): n servers can hold G_j GPUs with at
least one on each iff n <= G_j and the n largest servers hold >= G_j.

``rho_j^min`` (slots) = ``min_n solo_slots(j, n)`` over the feasible n = ``ceil(F_j / phi_j(n,
1))`` at the best n. With ``intra_bandwidth >= inter_bandwidth`` this is ``solo_slots`` at
``fastest_servers(G_j)`` (tau, eq. 8, is then nondecreasing in n, see
:func:`.model.fastest_servers`); the minimum keeps the bounds valid without that assumption.

Lemma 0. In every schedule job j is active for at least ``rho_j^min`` slots. Proof: on n
servers, in each active slot it makes ``phi_j(n, p_j[t]) <= phi_j(n, 1)`` iterations (a split job
counts itself, p >= 1; phi is nonincreasing in p because f(k) grows with k; on one server phi
does not depend on p), so reaching F_j takes >= ``ceil(F_j / phi_j(n, 1)) >= rho_j^min`` slots.

Busy GPUs (``busy_until``): ``r_g`` is the slot until which GPU g is busy (0 when free) and
``r_(k)`` the k-th smallest r_g over all N GPUs. Lemma 1: job j starts at a slot >= ``r_(G_j)``
(it holds G_j GPUs from its start, eq. 1, and a GPU busy in slot t holds no job, so at least G_j
GPUs have ``r_g <= a_j``). With no busy GPU every r is 0 and each bound below is the one it was
before the field existed.

Lower bounds on the makespan (:func:`lower_bounds`, seconds = slots × slot_seconds)
==================================================================================
* ``LB_job = max_j (r_(G_j) + rho_j^min)``: every job starts at slot >= r_(G_j) (Lemma 1) and
  runs >= rho_j^min slots (Lemma 0).
* ``LB_area`` = the least integer M with ``sum_g max(0, M - r_g) >= sum_j G_j rho_j^min``: job j
  holds G_j GPUs in each of its >= rho_j^min active slots (gang scheduling), all before the
  makespan M, and GPU g can hold a job only in slots r_g..M-1 (eq. 2 per GPU). With no busy
  GPU: ``ceil(sum_j G_j rho_j^min / N)``.
* ``LB_conflict = max over sets K of pairwise conflicting jobs of min_{j in K} r_(G_j) +
  sum_{j in K} rho_j^min``: two jobs with ``G_j + G_j' > N`` can never be active in the same slot
  (eq. 2 summed over the servers), so the jobs of K run one after another, the first starting
  no earlier than min_K r_(G_j) (Lemma 1), and the makespan is >= that plus the sum of their
  active times (Lemma 0). The conflict graph is a threshold graph, so the best K is found
  exactly in O(J^2): rank jobs by non-increasing G (ties by index); if a and b are the two
  lowest-ranked members of K (G_a >= G_b, G_a + G_b > N), every job ranked at or above a has
  G >= G_a and conflicts with every other such job and with b, so the heaviest K with those two
  is {every job ranked at or above a} ∪ {b}; its least r_(G) is r_(G_b) (r_(k) grows with k).
(The jobs with G_j > N/2 are one such K.)

``total_completion``: ``sum_j (r_(G_j) + rho_j^min)`` (each job completes at >= its earliest
start plus its active time, Lemmas 0 and 1).

:func:`lower_bound` returns the largest bound of the objective.

Theorem 5 (:func:`theorem5`)
============================
The paper: SJF-BCO is ``n_g·phi·u/l``-approximate, ``phi = max_j rho_j(y1)/rho_j(y2)`` over any
two schedules, ``rho-hat_j in [l·rho_j, u·rho_j]``. optkit's definitions, per instance:

* ``rho-hat_j(n) = solo_slots(j, n)``: SJF-BCO's contention-free estimate on n servers.
* ``u = 1`` by default: contention only slows a job (Lemma 0), so ``rho-hat_j(n) <= rho_j`` for
  every schedule placing j on n servers; any ``u >= 1`` may be passed.
* ``p_j^max = min(max_s O_s, 1 + q_j)`` (:func:`contention_cap`), the tightest contention bound
  optkit computes from the instance: p counts split jobs with >= 1 GPU on one server (<= O_s,
  job j included); only jobs with G >= 2 can be split, and the others active with j hold at most
  N - G_j GPUs, so at most q_j of them = the most jobs of size >= 2 (other than j) whose smallest
  sizes sum to <= N - G_j. So p_j[t] <= p_j^max always. ``p_max`` reports max_j p_j^max.
* ``rho_j^worst(n) = ceil(F_j / phi_j(n, p_j^max))``: every active slot gives >= phi_j(n,
  p_j^max) iterations, so ``rho_j <= rho_j^worst(n)`` on n servers.
* ``l = min_j min_n rho-hat_j(n) / rho_j^worst(n)`` over feasible n: ``rho-hat_j >= l·rho_j``.
* ``phi = max_j (max_n rho_j^worst(n)) / rho_j^min`` (``rho_j^min`` = ``solo_slots`` at
  ``fastest_servers(G_j)``, as SJF-BCO estimates): bounds the ratio of a job's execution times
  under any two schedules.
* ``n_g = max_j G_j``; ratio ``n_g·phi·u/l``.

Busy GPUs: the paper proves Theorem 5 for Alg. 1 started from ``U = 0`` (line 2) on an idle
cluster; nothing in it covers GPUs busy at the start. :func:`theorem5` computes the same
expression for such an instance (``phi``, ``l`` and ``n_g`` do not read ``busy_until``) and says
``proven: False``; it is then a reference number, not a guarantee.

If ``phi_j(n, p_max) = 0`` for some job and feasible n (enough contention stalls the job, the
"phi = 0" reading of :mod:`.model`), no finite rho^worst exists: ``phi`` and the ratio are
``math.inf``, ``l = 0`` and ``reason`` says which job.
"""

from __future__ import annotations

import math
from typing import Any

from optkit.errors import InputError

from .model import OBJECTIVES, Job, RarInstance, fastest_servers, min_servers, rate_table, solo_slots

__all__ = ["feasible_server_counts", "rho_min", "earliest_starts", "lower_bounds", "lower_bound", "contention_cap", "theorem5",
           "lemma_checks"]


def feasible_server_counts(instance: RarInstance, job: Job) -> range:
    """n = min_servers(G_j) .. min(G_j, S): the server counts a placement of ``job`` can use."""
    return range(min_servers(instance.servers, job.gpus), min(job.gpus, len(instance.servers)) + 1)


def _solo(instance: RarInstance, job: Job, n: int) -> float:
    """solo_slots, or inf where the job makes no progress on n servers even alone."""
    try:
        return float(solo_slots(instance, job, n))
    except ValueError:
        return math.inf


def rho_min(instance: RarInstance, job: Job) -> int:
    """rho_j^min (slots): the fewest active slots of ``job`` in any schedule (Lemma 0)."""
    return int(min(_solo(instance, job, n) for n in feasible_server_counts(instance, job)))


def earliest_starts(instance: RarInstance) -> list[int]:
    """``r_(G_j)`` per job (module docstring, Lemma 1): the slot before which fewer than G_j GPUs
    are free of ``busy_until``; 0 for every job when no GPU is busy."""
    if not instance.busy_until:
        return [0] * len(instance.jobs)
    r = sorted(b for s in range(len(instance.servers)) for b in instance.busy_slots(s))
    return [r[job.gpus - 1] for job in instance.jobs]


def _area_bound(instance: RarInstance, work: int) -> int:
    """LB_area (module docstring): the least M with ``sum_g max(0, M - r_g) >= work``."""
    N = instance.total_gpus
    if not instance.busy_until:
        return -(-work // N)
    r = sorted(b for s in range(len(instance.servers)) for b in instance.busy_slots(s))
    # f(M) = sum_g max(0, M - r_g) grows with M and is k·M - (r_(1) + ... + r_(k)) on the piece
    # r_(k) <= M <= r_(k+1): the first piece whose end reaches ``work`` holds the least M.
    lo = 0
    for k in range(1, N + 1):
        lo += r[k - 1]
        m = -(-(work + lo) // k)
        if k == N or m <= r[k]:
            return m
    raise AssertionError("unreachable: the last piece is unbounded")  # pragma: no cover


def _conflict_bound(instance: RarInstance, rmin: list[int], first: list[int]) -> int:
    """LB_conflict (module docstring): heaviest set of pairwise conflicting jobs, in slots."""
    N = instance.total_gpus
    G = [job.gpus for job in instance.jobs]
    rank = sorted(range(len(G)), key=lambda j: (-G[j], j))
    best = 0
    prefix = 0
    for ia, a in enumerate(rank):
        prefix += rmin[a]  # every job ranked at or above a
        for b in rank[ia + 1:]:
            if G[a] + G[b] > N:
                best = max(best, prefix + rmin[b] + first[b])
    return best


def lower_bounds(instance: RarInstance, objective: str = "makespan") -> dict[str, float]:
    """Every lower bound of the module docstring for ``objective`` (seconds)."""
    if objective not in OBJECTIVES:
        raise InputError("objective", f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    slot = instance.slot_seconds
    rmin = [rho_min(instance, job) for job in instance.jobs]
    first = earliest_starts(instance)
    if objective == "total_completion":
        return {"LB_sum": float(sum(rmin) + sum(first)) * slot}
    area = _area_bound(instance, sum(job.gpus * r for job, r in zip(instance.jobs, rmin)))
    return {"LB_job": float(max(f + r for f, r in zip(first, rmin))) * slot, "LB_area": float(area) * slot,
            "LB_conflict": float(_conflict_bound(instance, rmin, first)) * slot}


def lower_bound(instance: RarInstance, objective: str = "makespan") -> float:
    """The best proven lower bound on the optimum of ``objective`` (seconds)."""
    return max(lower_bounds(instance, objective).values())


def contention_cap(instance: RarInstance, j: int) -> int:
    """p_j^max (module docstring): an upper bound on p_j[t] (eq. 6) in every schedule."""
    job = instance.jobs[j]
    room = instance.total_gpus - job.gpus
    q = 0
    for g in sorted(o.gpus for k, o in enumerate(instance.jobs) if k != j and o.gpus >= 2):
        if g > room:
            break
        room -= g
        q += 1
    return max(1, min(max(instance.servers), 1 + q))


def theorem5(instance: RarInstance, *, u: float = 1.0) -> dict[str, Any]:
    """Theorem 5's ``n_g``, ``phi``, ``u``, ``l`` and ``ratio = n_g·phi·u/l`` for ``instance``
    (definitions in the module docstring), plus ``p_max``, ``proven`` (False when some GPU is
    busy: the paper's proof does not cover it) and, for an infinite ratio, ``reason``."""
    if isinstance(u, bool) or not isinstance(u, (int, float)) or not math.isfinite(u) or u < 1:
        raise InputError("u", f"must be a finite number >= 1 (rho-hat <= u·rho), got {u!r}", problem="rar-ddls")
    jobs = instance.jobs
    n_g = max(job.gpus for job in jobs)
    caps = [contention_cap(instance, j) for j in range(len(jobs))]
    p_max = max(caps)
    phi_ratio, l_min = 0.0, math.inf
    for job, p in zip(jobs, caps):
        r_min = solo_slots(instance, job, fastest_servers(instance.servers, job.gpus, job, instance.network))
        worst = 0
        for n in feasible_server_counts(instance, job):
            rate = int(rate_table(instance, job, n)[p])
            if rate < 1:
                return {"n_g": n_g, "phi": math.inf, "u": float(u), "l": 0.0, "ratio": math.inf, "p_max": p_max,
                        "proven": not instance.busy_until,
                        "reason": f"job {job.id} makes no progress on {n} servers at contention p = {p} "
                                  "(eq. 9 gives phi = 0), so its worst-case execution time is unbounded"}
            rw = -(-job.iterations // rate)
            worst = max(worst, rw)
            l_min = min(l_min, _solo(instance, job, n) / rw)
        phi_ratio = max(phi_ratio, worst / r_min)
    return {"n_g": n_g, "phi": phi_ratio, "u": float(u), "l": l_min, "ratio": n_g * phi_ratio * u / l_min,
            "p_max": p_max, "proven": not instance.busy_until}


def lemma_checks(instance: RarInstance, result: Any, *, optimum: float | None = None,
                 u: float = 1.0) -> dict[str, Any]:
    """Lemma 2, Lemma 3 and Theorem 5 checked on one planner run (``result``: a
    :class:`.plan.PlanResult`), in slots.

    * Lemma 2: ``W_max = theta-tilde`` (W_max = max_g U_g, the plan's accumulated rho-hat/u).
      On optkit's integer theta grid it can only hold to within a slot: ``lemma2_gap =
      theta - W_max``, ``lemma2_holds`` iff ``0 <= gap < 1``.
    * Lemma 3 as stated: ``makespan <= n_g·W_max`` (``lemma3_holds``). Its proof bounds each
      GPU's busy time by W_max, but W = rho-hat/u <= rho (Sec. 5.3), a *lower* bound on the real
      busy time under contention; so also the statement with the real busy time,
      ``makespan <= n_g·B_max`` (B_max = max over GPUs of the slots its jobs are active,
      ``lemma3_busy_holds``), which is what the proof's steps support.
    * Theorem 5: ``makespan <= ratio·OPT`` with :func:`theorem5`'s ratio; ``optimum`` is OPT when
      known (an exact solver's proven value), else the lower bound :func:`lower_bound` is used and
      only a *holds* is conclusive (makespan <= ratio·LB <= ratio·OPT); ``theorem5_conclusive``.
    """
    out = result.outcome
    if out.stuck:
        raise ValueError("the schedule has stuck jobs: no makespan to check")
    makespan = float(out.completion.max(initial=0))
    n_g = max(job.gpus for job in instance.jobs)
    w_max = float(result.max_busy)
    theta = float(result.theta)
    busy: dict[tuple[int, int], float] = {}
    for j, gpus in result.gpus.items():
        d = float(out.completion[j] - out.start[j])
        for g in gpus:
            busy[g] = busy.get(g, 0.0) + d
    b_max = max(busy.values(), default=0.0)
    th = theorem5(instance, u=u)
    ref = float(optimum) if optimum is not None else lower_bound(instance, "makespan") / instance.slot_seconds
    bound5 = th["ratio"] * ref
    holds5 = makespan <= bound5 + 1e-9
    return {"makespan_slots": makespan, "n_g": n_g, "theta": theta, "w_max": w_max, "busy_max": b_max,
            "lemma2_gap": theta - w_max, "lemma2_holds": bool(-1e-9 <= theta - w_max < 1.0),
            "lemma3_bound": n_g * w_max, "lemma3_holds": bool(makespan <= n_g * w_max + 1e-9),
            "lemma3_busy_bound": n_g * b_max, "lemma3_busy_holds": bool(makespan <= n_g * b_max + 1e-9),
            "theorem5_ratio": th["ratio"], "theorem5_phi": th["phi"], "theorem5_l": th["l"],
            "theorem5_reference": ref, "theorem5_reference_is_optimum": optimum is not None,
            "theorem5_holds": bool(holds5), "theorem5_conclusive": bool(holds5 or optimum is not None),
            "realised_ratio": makespan / ref if ref > 0 else math.inf}


# ----------------------------------------------------------------------------- guarantees as data
def _theorem5_ratio(instance: RarInstance, params: Any) -> float | None:
    """Theorem 5's ``n_g·phi·u/l`` (u = 1) for ``instance`` (:func:`theorem5`)."""
    return float(theorem5(instance)["ratio"])


def _theorem5_figures(instance: RarInstance, params: Any) -> str:
    """The quantities of Theorem 5's ratio on ``instance``, in words."""
    th = theorem5(instance)
    return (f"n_g = {th['n_g']}, phi = {th['phi']:.4g}, u = 1, l = {th['l']:.4g}"
            + (f" ({th['reason']})" if "reason" in th else ""))


def _guarantees() -> dict[str, Any]:
    from optkit.testing.guarantees import Guarantee

    return {"sjf-bco": Guarantee("sjf-bco", "makespan", _theorem5_ratio, "Yu et al., SJF-BCO paper, Theorem 5",
                                 "makespan(SJF-BCO) / OPT <= n_g·phi·u/l with u = 1 "
                                 "(formulations/rar_ddls/bounds.py; inf when contention can stall a job)",
                                 figures=_theorem5_figures)}


GUARANTEES = _guarantees()
"""SJF-BCO's proven ratio (Theorem 5) per instance, for :func:`optkit.testing.assert_within`;
FF, LS and Rand have none."""
