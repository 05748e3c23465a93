"""The baselines of Sec. 7 of the SJF-BCO paper: First-Fit, List-Scheduling, Random.

Each is the planning pass of :mod:`.plan` (the estimate rho-hat/u, the per-GPU accumulated times
U, eligibility ``U + rho_hat/u <= theta`` with its fixed point, plan -> schedule by
predecessors on each GPU, durations from the contention model) with its own pick rule in place
of FA-FFP / LBSGF, and no kappa loop. Readings, each with its reason:

* **Limit theta.** FF and LS each search their own limit (the paper: theta_u^f is "the maximum
  execution time limit returned by the scheduling policy f") by integer bisection over [1, T],
  in Sec. 5's form: the smallest theta at which the policy places every job ("the minimum theta_u
  feasible to Problem (14)"; :func:`.plan.bisect_theta` with ``feasibility=True``). Not Alg. 1's
  lines 19-23, which also demand a plan makespan below T: FF's estimated makespan *grows* with
  theta (looser limits pack more jobs onto the same GPUs, which then wait on each other), so on
  every ``paper-sec7`` instance the first midpoint (theta = 600) gives an estimate near 10,000
  slots, line 23 moves to larger theta, and FF never finds a plan; the Sec. 5 form finds
  theta near 320-380 there. RAND uses theta = T with no bisection ("we set theta_u^RAND = T, to avoid
  the long running time"); its single plan is accepted whenever every job is placed (the paper's
  aim for RAND is any feasible schedule), even if its estimate reaches T.
* **Job order.** The instance's order: the paper sorts jobs only in SJF-BCO (that is its "SJF").
* **FF.** Scan servers in index order and take the first G_j eligible GPUs, server to server
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

from .model import RarInstance
from .plan import (Bisection, ClusterIndex, Estimates, NoPlanError, Plan, PickRule, PlanResult, as_instance,
                   bisect_theta, build_plan, finish, pick_first_fit, pick_list, pick_random, run_planner)

__all__ = ["ff", "ls", "rand", "plan_baseline", "run_ff", "run_ls", "run_rand"]


def plan_baseline(instance: RarInstance, theta: float, rule: PickRule, *, u: float = 1.0,
                  rng: np.random.Generator | None = None, est: Estimates | None = None) -> Plan | None:
    """One trial: the jobs in instance order under ``theta`` with ``rule``, from an empty cluster."""
    est = est or Estimates(instance, u=u)
    return build_plan(est, ClusterIndex.of(instance.servers), range(len(instance.jobs)), theta,
                      lambda j: rule, rng=rng)


def _bisected(instance: RarInstance | Mapping[str, Any], rule: PickRule, name: str, *, u: float,
              deadline: float | None) -> tuple[np.ndarray, PlanResult]:
    instance = as_instance(instance)
    est = Estimates(instance, u=u)
    cluster = ClusterIndex.of(instance.servers)
    order = range(len(instance.jobs))

    def trial(theta: int) -> tuple[Plan, None] | None:
        plan = build_plan(est, cluster, order, theta, lambda j: rule)
        return None if plan is None else (plan, None)

    return finish(instance, bisect_theta(instance.horizon, trial, deadline=deadline, feasibility=True), what=name)


def ff(instance: RarInstance | Mapping[str, Any], *, u: float = 1.0,
       deadline: float | None = None) -> tuple[np.ndarray, PlanResult]:
    """First-Fit (Sec. 7) under the bisected limit theta_u^FF."""
    return _bisected(instance, pick_first_fit, "FF", u=u, deadline=deadline)


def ls(instance: RarInstance | Mapping[str, Any], *, u: float = 1.0,
       deadline: float | None = None) -> tuple[np.ndarray, PlanResult]:
    """List-Scheduling (Sec. 7) under the bisected limit theta_u^LS."""
    return _bisected(instance, pick_list, "LS", u=u, deadline=deadline)


def rand(instance: RarInstance | Mapping[str, Any], *, u: float = 1.0, seed: int | np.random.Generator | None = None,
         deadline: float | None = None) -> tuple[np.ndarray, PlanResult]:
    """Random (Sec. 7) with theta = T, one plan, seeded (``seed=None`` is seed 0)."""
    instance = as_instance(instance)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(0 if seed is None else seed)
    T = instance.horizon
    plan = plan_baseline(instance, T, pick_random, u=u, rng=rng)
    bis = Bisection(plan, T if plan is not None else None, None, 0, int(plan is not None), False)
    if plan is None:
        raise NoPlanError(f"RAND: the jobs do not fit under the execution-time limit theta = T = {T} "
                          "(some job finds too few GPUs with U + rho_hat/u <= T); raise the instance's horizon")
    return finish(instance, bis, what="RAND")


def run_ff(instance: RarInstance, *, objective: str = "makespan", time_limit: float | None = None,
           seed: int | None = None, **params: Any) -> Result:
    """Algorithm-table entry ``ff`` (deterministic). ``params``: ``u``."""
    return run_planner(ff, instance, time_limit, **params)


def run_ls(instance: RarInstance, *, objective: str = "makespan", time_limit: float | None = None,
           seed: int | None = None, **params: Any) -> Result:
    """Algorithm-table entry ``ls`` (deterministic). ``params``: ``u``."""
    return run_planner(ls, instance, time_limit, **params)


def run_rand(instance: RarInstance, *, objective: str = "makespan", time_limit: float | None = None,
             seed: int | None = None, **params: Any) -> Result:
    """Algorithm-table entry ``rand`` (seeded). ``params``: ``u``."""
    return run_planner(rand, instance, time_limit, seed=seed, **params)
