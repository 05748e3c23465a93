"""SJF-BCO: Smallest Job First with Balanced Contention and Overhead (Yu et al., Algorithms 1-3).

Every step of the paper's Algorithm 1 (with FA-FFP, Algorithm 2, and LBSGF, Algorithm 3); the
machinery shared with the baselines (the estimate rho-hat, the plan state U, eligibility and its
fixed point, "waiting for some job to exit", the bisection, plan -> schedule) is in
:mod:`.plan`, whose docstring gives each reading with its reason. Here:

* **Job order (Alg. 1 line 3).** Jobs by G_j non-decreasing; a stable sort, so jobs of equal size
  keep the instance's order.
* **Readings** (:mod:`.readings`, each a keyword with the reading's default): ``available``
  (idle-now / accumulated: which GPUs Alg. 2 line 2 and Alg. 3 line 5 see, and whether lines 8-9
  wait), ``kappa_select`` (simulated / estimate: what lines 16-20 compare), ``theta_search``
  (minimum-feasible / bisection: lines 19-23), ``fa_ffp`` (packing / least-loaded: Alg. 2 line
  4), ``kappa_tie`` (first / last: line 17's ``<`` or ``<=``), ``rho_hat`` and ``u``.
* **Theta search (lines 4-6, 19-23).** Integer theta_u over [1, T], ``theta = (left + right) //
  2`` (:func:`.plan.search_theta`); a horizon too short for the search is extended and the
  result flagged ``past_horizon``.
* **The kappa loop (lines 7-18).** For each theta, kappa = 1, ..., max_j G_j; job j is planned
  with FA-FFP (Alg. 2) if ``G_j <= kappa``, else LBSGF (Alg. 3) with ``lambda_j = lam``; each
  complete plan is scored (line 16: the plan's estimated max T_j, or its simulated makespan)
  and the best kept under line 17's comparison (``kappa_tie``; m_theta starts at T under the
  literal bisection, at infinity under minimum-feasible). A trial in which some job gets no GPUs
  is abandoned (lines 14-15). **Exact speed-up:** kappa only decides which jobs use FA-FFP, so
  every kappa between two consecutive distinct job sizes gives the same plan; one kappa per class
  is planned (1, then each distinct size above 1) and reported as the literal loop would keep it
  (the class's first kappa, or its last under ``kappa_tie = last``). ``kappa=<int>`` fixes kappa
  (the paper's Fig. 5 sweep); ``kappa=None`` loops.
* **FA-FFP (Alg. 2).** ``packing``: the fewest servers holding G_j available GPUs, occupied
  servers first (:func:`.plan.pick_packing`); ``least-loaded``: the G_j available GPUs with
  least U, ties first fit (server index, then GPU index). **LBSGF (Alg. 3).** Servers by
  ``sum_g U_s^g / O_s`` ascending (ties by index), the top m with ``sum O_s >= lambda_j·G_j``;
  their available GPUs sorted by U and appended server by server; the G_j with least U, ties by
  append order.
* **Tuning** (the paper's defaults): ``lam = 1.0`` (lambda_j for every job, Sec. 7; ``>= 1``),
  ``kappa = None``.
* **Output.** The accepted plan becomes a schedule (each GPU runs its jobs in plan order; a job
  starts when all jobs planned before it on its GPUs have completed; durations from the
  contention model, :func:`.model.simulate`). ``Result.info``: ``theta_u`` accepted, ``kappa``
  chosen, ``plan_makespan_estimate_slots`` (the paper's ``m``, an estimate; the makespan
  reported as the objective is always ``evaluate``'s re-simulation), ``bisection_steps``,
  ``max_busy_slots`` (max_g U_g, <= theta_u by Lemma 2's invariant), ``past_horizon`` and
  ``search_horizon_slots``. If no theta is accepted even past the horizon the run has status
  ``no_solution`` (a heuristic's failure proves nothing). So do the baselines.

Guarantee (Theorem 5): ``n_g·phi·u/l``-approximate, computed per instance in :mod:`.bounds`.
Complexity (Theorem 6): ``O(n_g·|J|·N log N·log T)``; here at most (distinct sizes) plans per
bisection step.

Example::

    >>> from optkit.formulations.rar_ddls.sjf_bco import sjf_bco
    >>> inst = {"problem": "rar-ddls", "servers": [4, 4], "horizon": 100,
    ...         "network": {"inter_bandwidth": 1.25e9, "intra_bandwidth": 3.0e11, "compute_speed": 5.0e10,
    ...                     "xi1": 1.0, "xi2": 0.002, "degradation": 0.2},
    ...         "jobs": [{"id": "a", "gpus": 2, "iterations": 500, "grad_bytes": 1e7, "batch": 32,
    ...                   "fwd_time_per_sample": 1e-4, "bwd_time": 0.004}]}
    >>> y, res = sjf_bco(inst)
    >>> y.tolist(), res.theta, res.kappa, res.plan_makespan, res.outcome.completion.tolist()
    ([[2, 0]], 5, 1, 5.0, [5])
    >>> sjf_bco(inst, theta_search="bisection")[1].theta
    50

  (minimum-feasible: 5 slots is the smallest limit that places the job; the literal bisection
  keeps the first midpoint of [1, 100], as smaller limits give the same makespan, not a
  strictly smaller one.)
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from optkit.errors import InputError
from optkit.result import Result
from optkit.validation import checked_arguments

from .model import RarInstance
from .plan import (ClusterIndex, Estimates, Plan, PlanResult, PickRule, as_instance, build_plan, finish,
                   pick_lbsgf, pick_least_busy, pick_packing, place_job, run_planner, search_theta,
                   simulated_makespan, theta_cap)
from .readings import DEFAULTS, FA_FFP, KAPPA_SELECT, KAPPA_TIE, THETA_SEARCH, check_choice

__all__ = ["sjf_bco", "sjf_bco_order", "kappa_classes", "kappa_plans", "plan_theta", "run_sjf_bco", "kappa_better"]


def _check_lam(lam: Any) -> float:
    if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not math.isfinite(lam) or lam < 1:
        raise InputError("lam", f"must be a number >= 1 (lambda_j >= 1, Alg. 3), got {lam!r}", problem="rar-ddls")
    return float(lam)


def sjf_bco_order(instance: RarInstance) -> list[int]:
    """Alg. 1 line 3: job indices by G_j non-decreasing, instance order on ties."""
    return sorted(range(len(instance.jobs)), key=lambda j: instance.jobs[j].gpus)


def kappa_classes(instance: RarInstance) -> list[int]:
    """One kappa per class of identical plans in 1..max G_j (module docstring): 1 and every
    distinct job size above 1, ascending."""
    sizes = sorted({job.gpus for job in instance.jobs})
    return sorted({1, *sizes})


def _last_of_class(classes: list[int], n_g: int) -> dict[int, int]:
    """The largest kappa of each class (the one the literal loop keeps under ``kappa_tie=last``)."""
    return {k: (classes[i + 1] - 1 if i + 1 < len(classes) else max(k, n_g)) for i, k in enumerate(classes)}


def kappa_better(kappa_tie: str) -> Callable[[float, float], bool]:
    """Alg. 1 line 17, ``m_theta^kappa < m_theta``, under the reading ``kappa_tie``: strict ``<``
    (``first``: the first kappa reaching the minimum is kept) or ``<=`` (``last``)."""
    if check_choice("kappa_tie", kappa_tie, KAPPA_TIE) == "first":
        return lambda new, kept: new < kept
    return lambda new, kept: new <= kept


def _rules(instance: RarInstance, kappa: int, small: PickRule, lbsgf: PickRule) -> list[PickRule]:
    """Alg. 1 lines 10-13: FA-FFP if G_j <= kappa, else LBSGF, per job."""
    return [small if job.gpus <= kappa else lbsgf for job in instance.jobs]


def _fa_ffp(fa_ffp: str) -> PickRule:
    return pick_packing if check_choice("fa_ffp", fa_ffp, FA_FFP) == "packing" else pick_least_busy


def plan_theta(instance: RarInstance, theta: int, *, kappa: int, lam: float = 1.0, u: float = DEFAULTS["u"],
               available: str = DEFAULTS["available"], fa_ffp: str = DEFAULTS["fa_ffp"],
               rho_hat: str = DEFAULTS["rho_hat"], est: Estimates | None = None) -> Plan | None:
    """One (theta_u, kappa) trial (Alg. 1 lines 8-16) from an empty cluster: the complete plan,
    or ``None`` if some job gets no GPUs. For tests and the Fig. 5 sweep."""
    est = est or Estimates(instance, u=u, rho_hat=rho_hat)
    rules = _rules(instance, kappa, _fa_ffp(fa_ffp), pick_lbsgf(_check_lam(lam)))
    return build_plan(est, ClusterIndex.for_instance(instance), sjf_bco_order(instance), theta, rules.__getitem__,
                      available=available)


def kappa_plans(est: Estimates, cluster: ClusterIndex, order: list[int], theta: float, kappas: list[int],
                small: PickRule, lbsgf: PickRule, available: str) -> Iterator[tuple[int, Plan | None]]:
    """``(kappa, plan or None)`` for each kappa of ``kappas`` (ascending) under ``theta``: the same
    plans as :func:`.plan.build_plan` with Alg. 1 lines 10-13's rules, computed with a shared
    prefix. The jobs are in SJF order, so for kappa the FA-FFP jobs (G_j <= kappa) are a prefix
    of the order, planned identically for every larger kappa: one growing FA-FFP plan, copied at
    each kappa and finished with LBSGF. When the FA-FFP prefix fails, every larger kappa fails."""
    base: Plan | None = Plan.empty(cluster, None, available)
    pos, n = 0, len(order)
    for i, k in enumerate(kappas):
        while base is not None and pos < n and int(est.gpus[order[pos]]) <= k:
            if not place_job(base, est, order[pos], theta, small):
                base = None
            pos += 1
        if base is None:
            for rest in kappas[i:]:
                yield rest, None
            return
        plan = base.copy()
        ok = all(place_job(plan, est, order[q], theta, lbsgf) for q in range(pos, n))
        yield k, plan if ok else None


@checked_arguments("rar-ddls")
def sjf_bco(instance: RarInstance | Mapping[str, Any], *, lam: float = 1.0, u: float = DEFAULTS["u"],
            kappa: int | None = None, available: str = DEFAULTS["available"],
            kappa_select: str = DEFAULTS["kappa_select"], theta_search: str = DEFAULTS["theta_search"],
            fa_ffp: str = DEFAULTS["fa_ffp"], kappa_tie: str = DEFAULTS["kappa_tie"],
            rho_hat: str = DEFAULTS["rho_hat"], deadline: float | None = None) -> tuple[np.ndarray, PlanResult]:
    """Algorithm 1: ``(y, result)`` with y the placements (jobs × servers, instance order) and
    ``result`` the plan's diagnostics and its simulated schedule (:class:`.plan.PlanResult`).

    Readings (:mod:`.readings`): ``available``, ``kappa_select``, ``theta_search``, ``fa_ffp``,
    ``kappa_tie``, ``rho_hat``, ``u``. Tuning: ``lam`` (lambda_j), ``kappa`` (None: the loop).
    ``deadline`` (a ``time.perf_counter()`` value) stops the search early. A horizon too short for
    the search is extended and the result flagged (``past_horizon``, ``search_horizon``); raises
    :class:`.plan.NoPlanError` only when no plan exists even then.

    References
    ----------
    Yu et al., MobiHoc '22, Sec. 5: Algorithm 1 (bisection on theta_u, the kappa loop),
    Algorithm 2 (FA-FFP) and Algorithm 3 (LBSGF); Theorem 6 (running time).

    Notes
    -----
    Guarantee: Theorem 5, makespan at most n_g * phi * u / l times the optimum (n_g the largest
    job's GPUs, phi the largest ratio of one job's execution times under two schedules, [l, u]
    the range of the estimate rho_hat / rho); the bound is evaluated per instance by
    :mod:`optkit.formulations.rar_ddls.bounds` and checked against the exact optimum in the tests.
    It is proven for an idle cluster; with GPUs busy at the start (``busy_until``, U initialised
    to the busy slot) none is proven: the paper's proof starts from U = 0.

    Units: time in slots of ``instance.slot_seconds`` seconds (theta_u, the plan's makespan);
    GPUs per server in ``y``.

    Examples
    --------
    Two jobs on servers of 2 and 3 GPUs (``generate.tiny(0)``); ``y`` holds each job's GPUs per
    server:

    >>> from optkit.formulations.rar_ddls.generate import tiny
    >>> y, result = sjf_bco(tiny(0))
    >>> y.tolist()
    [[2, 0], [1, 3]]
    >>> result.plan_makespan
    16.0
    """
    instance = as_instance(instance)
    lam = _check_lam(lam)
    check_choice("kappa_select", kappa_select, KAPPA_SELECT)
    check_choice("theta_search", theta_search, THETA_SEARCH)
    better = kappa_better(kappa_tie)
    n_g = max(job.gpus for job in instance.jobs)
    if kappa is None:
        kappas = kappa_classes(instance)
        shown = _last_of_class(kappas, n_g) if kappa_tie == "last" else {k: k for k in kappas}
    elif isinstance(kappa, bool) or not isinstance(kappa, (int, np.integer)) or kappa < 1:
        raise InputError("kappa", f"must be an integer >= 1 or None (loop 1..max G_j), got {kappa!r}",
                         problem="rar-ddls")
    else:
        kappas = [int(kappa)]
        shown = {int(kappa): int(kappa)}
    est = Estimates(instance, u=u, rho_hat=rho_hat)
    cluster = ClusterIndex.for_instance(instance)
    order = sjf_bco_order(instance)
    small, lbsgf = _fa_ffp(fa_ffp), pick_lbsgf(lam)
    feasibility = theta_search == "minimum-feasible"
    simulated = kappa_select == "simulated"

    def trial(theta: int, horizon: int) -> tuple[Plan, int] | None:
        best: tuple[Plan, int] | None = None
        m_theta = math.inf if feasibility else float(horizon)               # line 6
        for k, plan in kappa_plans(est, cluster, order, theta, kappas, small, lbsgf, available):  # lines 7-16
            if plan is None:
                continue
            plan.score = simulated_makespan(instance, plan) if simulated else plan.makespan
            if math.isfinite(plan.score) and better(plan.score, m_theta):   # lines 17-18
                m_theta, best = plan.score, (plan, shown[k])
        return best

    bis = search_theta(instance.horizon, trial, cap=theta_cap(est), deadline=deadline, feasibility=feasibility)
    return finish(instance, bis, what="SJF-BCO")


def run_sjf_bco(instance: RarInstance, *, objective: str = "makespan", time_limit: float | None = None,
                seed: int | None = None, lam: float = 1.0, u: float = DEFAULTS["u"], kappa: int | None = None,
                available: str = DEFAULTS["available"], kappa_select: str = DEFAULTS["kappa_select"],
                theta_search: str = DEFAULTS["theta_search"], fa_ffp: str = DEFAULTS["fa_ffp"],
                kappa_tie: str = DEFAULTS["kappa_tie"], rho_hat: str = DEFAULTS["rho_hat"]) -> Result:
    """Algorithm-table entry ``sjf-bco`` (deterministic: ``seed`` unused). Readings: ``available``,
    ``kappa_select``, ``theta_search``, ``fa_ffp``, ``kappa_tie``, ``rho_hat``, ``u``; tuning
    ``lam``, ``kappa``. The objective is only measured (by ``evaluate``): the plan targets the
    makespan whichever objective is read."""
    return run_planner(sjf_bco, instance, time_limit, lam=lam, u=u, kappa=kappa, available=available,
                       kappa_select=kappa_select, theta_search=theta_search, fa_ffp=fa_ffp, kappa_tie=kappa_tie,
                       rho_hat=rho_hat)
