"""The baselines of Sec. 7 of the SJF-BCO paper: First-Fit, List-Scheduling, Random.

Each is the planning pass of :mod:`.plan` (the estimate rho-hat/u, the per-GPU accumulated times
U, eligibility ``U + rho_hat/u <= theta`` with its fixed point, plan -> schedule by
predecessors on each GPU, durations from the contention model) with its own pick rule in place
of FA-FFP / LBSGF, and no kappa loop. Readings, each with its reason:

* **Limit theta: the reading ``theta_search``.** FF and LS each search their own limit (the
  paper: theta_u^f is "the maximum execution time limit returned by the scheduling policy f") by
  integer bisection over [1, T] (:func:`.plan.search_theta`). ``minimum-feasible`` (default, Sec.
  5's "the minimum theta_u feasible to Problem (14)"): the smallest theta at which the policy
  places every job. ``bisection``: Alg. 1's lines 19-23, which also demand a plan makespan below
  the best so far (m starts at T); under ``available = accumulated`` FF's estimated makespan
  *grows* with theta (looser limits pack more jobs onto the same GPUs, which then wait on each
  other), so the literal search finds nothing within T on ``paper-sec7`` and is extended past T.
  RAND uses theta = T with no bisection ("we set theta_u^RAND = T, to avoid the long running
  time"); its single plan is accepted whenever every job is placed (the paper's aim for RAND is
  any feasible schedule), even if its estimate reaches T; when the jobs do not fit under T, the
  limit is doubled and the schedule flagged past the horizon.
* **Available GPUs, rho-hat, u**: the readings ``available``, ``rho_hat``, ``u`` of
  :mod:`.readings`, as in SJF-BCO (:mod:`.plan`).
* **Job order.** The instance's order: the paper sorts jobs only in SJF-BCO (that is its "SJF").
* **FF.** Scan servers in index order and take the first G_j available eligible GPUs, server to server
  (GPU index order inside a server): packs jobs onto the fewest, lowest-index servers.
* **LS.** The G_j eligible GPUs with least U; ties by the server's mean U (least-loaded server
  first), then server index, then GPU index.
* **RAND.** A seeded ``numpy.random.Generator``: servers in a random order, and from each server
  its eligible GPUs in a random order, server to server, until G_j are taken. The same seed
  gives the same schedule; ``seed=None`` means seed 0 in :func:`rand` (reproducible) and the
  harness passes its own seed.

Plain functions ``ff``, ``ls`` and ``rand`` return ``(y, PlanResult)`` like
:func:`.sjf_bco.sjf_bco`; ``run_ff``, ``run_ls``, ``run_rand`` are the algorithm-table entries.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optkit.result import Result
from optkit.validation import check_seed, checked_arguments

from .model import RarInstance
from .plan import (Bisection, ClusterIndex, Estimates, NoPlanError, Plan, PickRule, PlanResult, as_instance,
                   build_plan, finish, pick_first_fit, pick_list, pick_random, run_planner, search_theta, theta_cap)
from .readings import DEFAULTS, THETA_SEARCH, check_choice

__all__ = ["ff", "ls", "rand", "plan_baseline", "run_ff", "run_ls", "run_rand"]


def plan_baseline(instance: RarInstance, theta: float, rule: PickRule, *, u: float = DEFAULTS["u"],
                  rng: np.random.Generator | None = None, est: Estimates | None = None,
                  available: str = DEFAULTS["available"], rho_hat: str = DEFAULTS["rho_hat"]) -> Plan | None:
    """One trial: the jobs in instance order under ``theta`` with ``rule``, from an empty cluster."""
    est = est or Estimates(instance, u=u, rho_hat=rho_hat)
    return build_plan(est, ClusterIndex.for_instance(instance), range(len(instance.jobs)), theta,
                      lambda j: rule, rng=rng, available=available)


def _bisected(instance: RarInstance | Mapping[str, Any], rule: PickRule, name: str, *, u: float, available: str,
              theta_search: str, rho_hat: str, deadline: float | None) -> tuple[np.ndarray, PlanResult]:
    instance = as_instance(instance)
    feasibility = check_choice("theta_search", theta_search, THETA_SEARCH) == "minimum-feasible"
    est = Estimates(instance, u=u, rho_hat=rho_hat)
    cluster = ClusterIndex.for_instance(instance)
    order = range(len(instance.jobs))

    def trial(theta: int, horizon: int) -> tuple[Plan, None] | None:
        plan = build_plan(est, cluster, order, theta, lambda j: rule, available=available)
        return None if plan is None else (plan, None)

    bis = search_theta(instance.horizon, trial, cap=theta_cap(est), deadline=deadline, feasibility=feasibility)
    return finish(instance, bis, what=name)


@checked_arguments("rar-ddls")
def ff(instance: RarInstance | Mapping[str, Any], *, u: float = DEFAULTS["u"], available: str = DEFAULTS["available"],
       theta_search: str = DEFAULTS["theta_search"], rho_hat: str = DEFAULTS["rho_hat"],
       deadline: float | None = None) -> tuple[np.ndarray, PlanResult]:
    """First-Fit (Sec. 7) under its searched limit theta_u^FF. Readings: ``u``, ``available``,
    ``theta_search``, ``rho_hat`` (:mod:`.readings`).

    Returns ``(y, result)``: ``y`` the GPUs of each job on each server (jobs × servers, instance
    order) and ``result`` the plan and its simulated schedule (:class:`.plan.PlanResult`).

    References
    ----------
    Yu, Ji, Rajan, Liu, "On Scheduling Ring-All-Reduce Learning Jobs in Multi-Tenant GPU
    Clusters with Communication Contention" (MobiHoc '22): Sec. 7, Baselines for Comparison: FF
    [17] picks the first G_j available GPUs whose accumulated execution time stays within
    theta_u^FF, server to server; the limit as in Problem (14) (Sec. 5).

    Notes
    -----
    Guarantee: none proven (the paper's bounds, Lemma 3 and Theorem 5, are SJF-BCO's).

    Units: y in GPUs per (job, server); theta_u^FF (``result.theta``), ``plan_makespan`` and the
    simulated starts and completions in slots of ``slot_seconds``.

    Examples
    --------
    >>> from optkit.formulations.rar_ddls import RarInstance
    >>> from optkit.formulations.rar_ddls.generate import SUITES
    >>> inst = RarInstance.from_dict(next(iter(SUITES["tiny"].build()))[1])   # 2 jobs, servers of 2 and 3 GPUs
    >>> y, result = ff(inst)
    >>> y.tolist(), result.theta, result.outcome.completion.tolist()
    ([[2, 0], [2, 2]], 16, [7, 16])
    """
    return _bisected(instance, pick_first_fit, "FF", u=u, available=available, theta_search=theta_search,
                     rho_hat=rho_hat, deadline=deadline)


@checked_arguments("rar-ddls")
def ls(instance: RarInstance | Mapping[str, Any], *, u: float = DEFAULTS["u"], available: str = DEFAULTS["available"],
       theta_search: str = DEFAULTS["theta_search"], rho_hat: str = DEFAULTS["rho_hat"],
       deadline: float | None = None) -> tuple[np.ndarray, PlanResult]:
    """List-Scheduling (Sec. 7) under its searched limit theta_u^LS. Readings: ``u``,
    ``available``, ``theta_search``, ``rho_hat`` (:mod:`.readings`).

    Returns ``(y, result)`` as :func:`ff`.

    References
    ----------
    Yu, Ji, Rajan, Liu, "On Scheduling Ring-All-Reduce Learning Jobs in Multi-Tenant GPU
    Clusters with Communication Contention" (MobiHoc '22): Sec. 7, Baselines for Comparison: LS
    [17] picks the G_j GPUs of least accumulated execution time within theta_u^LS, balancing the
    GPUs' load.

    Notes
    -----
    Guarantee: none proven (the paper's bounds, Lemma 3 and Theorem 5, are SJF-BCO's).

    Units: y in GPUs per (job, server); theta_u^LS and the schedule in slots; the accumulated
    execution time per GPU in slots.

    Examples
    --------
    >>> from optkit.formulations.rar_ddls import RarInstance
    >>> from optkit.formulations.rar_ddls.generate import SUITES
    >>> inst = RarInstance.from_dict(next(iter(SUITES["tiny"].build()))[1])   # 2 jobs, servers of 2 and 3 GPUs
    >>> y, result = ls(inst)
    >>> y.tolist(), result.outcome.completion.tolist()
    ([[2, 0], [1, 3]], [7, 16])
    """
    return _bisected(instance, pick_list, "LS", u=u, available=available, theta_search=theta_search,
                     rho_hat=rho_hat, deadline=deadline)


@checked_arguments("rar-ddls")
def rand(instance: RarInstance | Mapping[str, Any], *, u: float = DEFAULTS["u"], available: str = DEFAULTS["available"],
         rho_hat: str = DEFAULTS["rho_hat"], seed: int | np.random.Generator | None = None,
         deadline: float | None = None) -> tuple[np.ndarray, PlanResult]:
    """Random (Sec. 7) with theta = T, one plan, seeded (``seed=None`` is seed 0). Readings:
    ``u``, ``available``, ``rho_hat``. When the jobs do not fit under theta = T the limit is
    doubled (2T, 4T, ...; the schedule is flagged past the horizon) until they do or theta
    exceeds :func:`.plan.theta_cap`.

    Returns ``(y, result)`` as :func:`ff`.

    References
    ----------
    Yu, Ji, Rajan, Liu, "On Scheduling Ring-All-Reduce Learning Jobs in Multi-Tenant GPU
    Clusters with Communication Contention" (MobiHoc '22): Sec. 7, Baselines for Comparison:
    RAND [19] chooses servers and GPUs at random, with theta_u^RAND = T (the horizon).

    Notes
    -----
    Guarantee: none proven (the paper's bounds, Lemma 3 and Theorem 5, are SJF-BCO's).

    Units: y in GPUs per (job, server); theta = T, the horizon, and the schedule in slots;
    ``seed`` an integer or a numpy Generator.

    Examples
    --------
    >>> from optkit.formulations.rar_ddls import RarInstance
    >>> from optkit.formulations.rar_ddls.generate import SUITES
    >>> inst = RarInstance.from_dict(next(iter(SUITES["tiny"].build()))[1])   # 2 jobs, servers of 2 and 3 GPUs
    >>> y, result = rand(inst, seed=0)
    >>> result.theta == inst.horizon, result.outcome.completion.tolist()
    (True, [7, 16])
    """
    instance = as_instance(instance)
    seed = check_seed(seed, problem="rar-ddls", generator=True)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(0 if seed is None else seed)
    est = Estimates(instance, u=u, rho_hat=rho_hat)
    cap = theta_cap(est)
    theta, tries = instance.horizon, 0
    while True:
        tries += 1
        plan = plan_baseline(instance, theta, pick_random, rng=rng, est=est, available=available)
        if plan is not None or theta > 2 * cap:
            break
        theta *= 2
    if plan is None:
        raise NoPlanError(f"RAND: the jobs do not fit under any execution-time limit up to theta = {theta} "
                          f"(T = {instance.horizon} extended)")
    return finish(instance, Bisection(plan, theta, None, tries - 1, 1, False, theta), what="RAND")


def run_ff(instance: RarInstance, *, objective: str = "makespan", time_limit: float | None = None,
           seed: int | None = None, u: float = DEFAULTS["u"], available: str = DEFAULTS["available"],
           theta_search: str = DEFAULTS["theta_search"], rho_hat: str = DEFAULTS["rho_hat"]) -> Result:
    """Algorithm-table entry ``ff`` (deterministic). Readings: ``u``, ``available``,
    ``theta_search``, ``rho_hat``."""
    return run_planner(ff, instance, time_limit, u=u, available=available, theta_search=theta_search,
                       rho_hat=rho_hat)


def run_ls(instance: RarInstance, *, objective: str = "makespan", time_limit: float | None = None,
           seed: int | None = None, u: float = DEFAULTS["u"], available: str = DEFAULTS["available"],
           theta_search: str = DEFAULTS["theta_search"], rho_hat: str = DEFAULTS["rho_hat"]) -> Result:
    """Algorithm-table entry ``ls`` (deterministic). Readings: ``u``, ``available``,
    ``theta_search``, ``rho_hat``."""
    return run_planner(ls, instance, time_limit, u=u, available=available, theta_search=theta_search,
                       rho_hat=rho_hat)


def run_rand(instance: RarInstance, *, objective: str = "makespan", time_limit: float | None = None,
             seed: int | None = None, u: float = DEFAULTS["u"], available: str = DEFAULTS["available"],
             rho_hat: str = DEFAULTS["rho_hat"]) -> Result:
    """Algorithm-table entry ``rand`` (seeded). Readings: ``u``, ``available``, ``rho_hat``."""
    return run_planner(rand, instance, time_limit, seed=seed, u=u, available=available, rho_hat=rho_hat)
