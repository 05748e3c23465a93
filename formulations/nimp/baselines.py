"""The paper's baselines (Sec. V-A), as placement rules that ignore the bandwidth constraint.

Each rule picks machines and puts the workers on them in index order (W1, W2, ... fill the
first machine chosen, then the next), as the paper's Fig. 1 draws them. None of the three
systems checks the bandwidth constraint, so neither do the rules; ``run_*`` then checks the
placement and, if it violates a constraint, reports that the baseline found no feasible
placement (status ``no_solution``, ``info["found"] = False``: not a proof of infeasibility). Too few
idle GPUs in the whole cluster *is* a proof, reported as ``infeasible``.

* :func:`elasticflow` -- best fit, consolidated: while r workers remain, take the machine with
  the fewest idle GPUs that still holds all r ("closest to N"); if none does, the machine with
  the most idle GPUs, filled; ties by index. Reading ``elasticflow_machines``: ``any`` (default,
  idle and non-idle machines alike) or ``idle-only`` (idle machines only; every machine when the
  idle ones cannot hold the job). Fig. 1: all four workers on machine 1 under both.
* :func:`hived` -- fragments first: the same rule over the non-idle machines, then (for what is
  left) over the idle ones. Fig. 1: W1-W3 on machine 2 (3 idle GPUs, the most among fragments,
  none holds 4), W4 on machine 4 (best fit for 1), cross traffic 3K/2.
* :func:`tiresias` -- consolidate if the job is placement-sensitive (the job's
  ``placement_sensitive`` flag, else its ``model``: VGG/AlexNet are, others are not; a job with
  neither is treated as sensitive, :func:`.model.is_placement_sensitive`): fewest machines,
  most idle GPUs first. Otherwise the reading ``tiresias_spread``: ``emptiest`` (default) round
  robin over the machines with idle GPUs in order of most idle GPUs (ties by index), worker n on
  the n-th machine of the cycle (skipping machines already full), so the job touches as many
  machines as it has workers if it can; ``first-fit`` fills machines in index order;
  ``best-fit`` is Elasticflow's rule.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import numpy as np

from optkit.errors import InputError
from optkit.result import Result, Status
from optkit.validation import checked_arguments

from .model import NimpInstance, bandwidth_violations, is_placement_sensitive, solution_dict
from .titan import check_machines

__all__ = ["elasticflow", "hived", "tiresias", "run_elasticflow", "run_hived", "run_tiresias"]

_BIG = np.iinfo(np.int64).max


def _best_fit(idle_gpus: Sequence[int], machines: Sequence[int], r: int, out: list[int]) -> int:
    """Fill from ``machines`` by the best-fit rule (the machine with the fewest idle GPUs that
    holds all r, ties by index; else the one with the most, ties by index, filled); returns the
    workers still unplaced."""
    R = np.asarray(idle_gpus, dtype=np.int64)
    cand = np.sort(np.asarray(machines, dtype=np.int64) if isinstance(machines, np.ndarray)
                   else np.fromiter(machines, dtype=np.int64))
    # Equivalent edits (mutmut survivors): '> 0' -> '>= 0' in either line only adds candidates
    # or loop turns that place 0 workers (a machine without idle GPUs never fits r > 0 and is the
    # most-idle one only when all left are empty; with r = 0 every turn takes 0), so the
    # placement is the same.
    cand = cand[R[cand] > 0]
    while r > 0 and len(cand):
        rc = R[cand]
        fit = rc >= r
        if fit.any():
            i = int(np.argmin(np.where(fit, rc, _BIG)))  # first of the smallest: lowest index
            take = r
        else:
            i = int(np.argmax(rc))
            take = int(rc[i])
        out += [int(cand[i])] * take
        r -= take
        cand = np.delete(cand, i)
    return r


@checked_arguments("nimp")
def elasticflow(idle_gpus: Sequence[int], *, workers: int, gpus: Sequence[int] | None = None,
                elasticflow_machines: str = "any") -> list[int] | None:
    """Elasticflow's best-fit consolidated placement (module docstring); ``None`` if the idle
    GPUs do not suffice. Reading ``elasticflow_machines``: ``any`` (default, every machine) or
    ``idle-only`` (the idle machines, R_s = K_s, which needs ``gpus``; every machine only when
    the idle ones cannot hold the job).

    References
    ----------
    Fang et al., "Non-Idle Machine-Aware Worker Placement for Efficient Distributed Training in
    GPU Clusters": Sec. V-A, the first benchmark (best fit: the machines whose idle GPUs are
    closest to the job's workers) and Fig. 1(b); Elasticflow itself: Gu et al., ASPLOS '23, the
    paper's [11].

    Notes
    -----
    Guarantee: none proven; it ignores Eq. (1)'s bandwidth constraint (``run_elasticflow``
    checks the placement).

    Units: idle GPUs R_s and total GPUs K_s (``gpus``, needed by ``idle-only``) per machine, and
    workers, are counts; the result is a machine index per worker, or ``None``.

    Examples
    --------
    Four machines of 8 GPUs with 8, 3, 5 and 2 of them idle, a 4-worker job:

    >>> gpus, idle = [8, 8, 8, 8], [8, 3, 5, 2]
    >>> elasticflow(idle, workers=4)
    [2, 2, 2, 2]
    >>> elasticflow(idle, workers=4, gpus=gpus, elasticflow_machines="idle-only")
    [0, 0, 0, 0]
    >>> elasticflow(idle, workers=40) is None
    True
    """
    if elasticflow_machines not in ("any", "idle-only"):
        raise InputError("elasticflow_machines", f"must be any or idle-only, got {elasticflow_machines!r}",
                         problem="nimp")
    idle_gpus = check_machines(gpus, idle_gpus, workers)[1].tolist()
    M = len(idle_gpus)
    if elasticflow_machines == "idle-only":
        if gpus is None:
            raise InputError("gpus", "is required for elasticflow_machines='idle-only' (which machines are idle)",
                             problem="nimp")
        R = np.asarray(idle_gpus, dtype=np.int64)
        idle = np.flatnonzero(R == np.asarray(gpus, dtype=np.int64))
        if int(R[idle].sum()) >= workers:
            out: list[int] = []
            _best_fit(idle_gpus, idle, workers, out)
            return out
    out = []
    r = _best_fit(idle_gpus, range(M), workers, out)
    return out if r == 0 else None


@checked_arguments("nimp")
def hived(gpus: Sequence[int], idle_gpus: Sequence[int], *, workers: int) -> list[int] | None:
    """HiveD's fragments-first placement (module docstring): best fit over the non-idle machines
    (idle GPUs but not all of them), then over the idle ones for what is left.

    References
    ----------
    Fang et al., "Non-Idle Machine-Aware Worker Placement for Efficient Distributed Training in
    GPU Clusters": Sec. V-A, the second benchmark (fragment GPUs first) and Fig. 1(c); HiveD
    itself: Zhao et al., OSDI '20, the paper's [21].

    Notes
    -----
    Guarantee: none proven; fragments first spreads a job, and Eq. (1)'s bandwidth constraint
    is not checked here (``run_hived`` does).

    Units: K_s (``gpus``) and R_s (``idle_gpus``) per machine and ``workers`` are counts; the
    result is a machine index per worker, or ``None`` when the idle GPUs cannot hold the job.

    Examples
    --------
    Four machines of 8 GPUs with 8, 3, 5 and 2 of them idle, a 4-worker job:

    >>> gpus, idle = [8, 8, 8, 8], [8, 3, 5, 2]
    >>> hived(gpus, idle, workers=4)
    [2, 2, 2, 2]
    """
    K, R = check_machines(gpus, idle_gpus, workers)
    idle_gpus = R.tolist()
    frag = np.flatnonzero((R > 0) & (R < K))
    idle = np.flatnonzero(R == K)
    out: list[int] = []
    r = _best_fit(idle_gpus, frag, workers, out)
    r = _best_fit(idle_gpus, idle, r, out)
    return out if r == 0 else None


@checked_arguments("nimp")
def tiresias(idle_gpus: Sequence[int], *, workers: int, placement_sensitive: bool,
             tiresias_spread: str = "emptiest") -> list[int] | None:
    """Tiresias: consolidate (fewest machines, most idle GPUs first) if ``placement_sensitive``;
    else the reading ``tiresias_spread``: ``emptiest`` (default; round robin over the machines,
    most idle GPUs first), ``first-fit`` (fill machines in index order) or ``best-fit``
    (Elasticflow's rule). Module docstring.

    References
    ----------
    Fang et al., "Non-Idle Machine-Aware Worker Placement for Efficient Distributed Training in
    GPU Clusters": Sec. V-A, the third benchmark (consolidation for placement-sensitive models
    only); Tiresias itself: Gu et al., NSDI '19, the paper's [10].

    Notes
    -----
    Guarantee: none proven; the spread placement of an insensitive job may cross many machines,
    and Eq. (1)'s bandwidth constraint is left to ``run_tiresias``.

    Units: ``idle_gpus`` and ``workers`` are counts, ``placement_sensitive`` a flag (by model:
    VGG and AlexNet are); the result is a machine index per worker, or ``None``.

    Examples
    --------
    Four machines of 8 GPUs with 8, 3, 5 and 2 of them idle, a 4-worker job:

    >>> gpus, idle = [8, 8, 8, 8], [8, 3, 5, 2]
    >>> tiresias(idle, workers=4, placement_sensitive=True)
    [0, 0, 0, 0]
    >>> tiresias(idle, workers=4, placement_sensitive=False)
    [0, 2, 1, 3]
    """
    if tiresias_spread not in ("emptiest", "first-fit", "best-fit"):
        raise InputError("tiresias_spread", f"must be emptiest, first-fit or best-fit, got {tiresias_spread!r}",
                         problem="nimp")
    idle_gpus = check_machines(None, idle_gpus, workers)[1].tolist()
    if sum(idle_gpus) < workers:
        return None
    M = len(idle_gpus)
    if placement_sensitive or tiresias_spread == "first-fit":
        Ra = np.asarray(idle_gpus, dtype=np.int64)
        order = np.lexsort((np.arange(M), -Ra)).tolist() if placement_sensitive else range(M)
        out: list[int] = []
        for s in order:
            take = min(idle_gpus[s], workers - len(out))
            out += [s] * take
            if len(out) == workers:
                break
        return out
    if tiresias_spread == "best-fit":
        return elasticflow(idle_gpus, workers=workers)
    free = list(idle_gpus)
    Ra = np.asarray(idle_gpus, dtype=np.int64)
    order = np.lexsort((np.arange(M), -Ra))  # most idle GPUs first, ties by index
    ring = order[Ra[order] > 0].tolist()
    out = []
    while len(out) < workers:
        for s in ring:
            if len(out) == workers:
                break
            if free[s] > 0:
                free[s] -= 1
                out.append(s)
    return out


def _run(instance: NimpInstance, what: str, fn: Callable[[], list[int] | None]) -> Result:
    t0 = time.perf_counter()
    if sum(m.idle_gpus for m in instance.machines) < instance.N:
        return Result(Status.INFEASIBLE, message="fewer idle GPUs than workers (resource constraint)")
    m = fn()
    info: dict[str, Any] = {"algorithm_s": time.perf_counter() - t0}
    assert m is not None  # each rule places every worker when the idle GPUs suffice (checked above)
    bad = bandwidth_violations(instance, np.asarray(m, dtype=np.int64), limit=3)
    if bad:
        return Result(Status.NO_SOLUTION, message=f"{what} found no feasible placement (not a proof that none "
                      f"exists): its placement {m} violates " + "; ".join(bad), info={**info, "found": False})
    return Result(Status.FEASIBLE, solution=solution_dict(m), info={**info, "found": True})


def run_elasticflow(instance: NimpInstance, *, objective: str = "lex", time_limit: float | None = None,
                    seed: int | None = None, elasticflow_machines: str = "any") -> Result:
    """Algorithm-table entry ``elasticflow``; takes the reading ``elasticflow_machines``."""
    return _run(instance, "elasticflow", lambda: elasticflow(
        [m.idle_gpus for m in instance.machines], workers=instance.N, gpus=[m.gpus for m in instance.machines],
        elasticflow_machines=elasticflow_machines))


def run_hived(instance: NimpInstance, *, objective: str = "lex", time_limit: float | None = None,
              seed: int | None = None) -> Result:
    """Algorithm-table entry ``hived``."""
    return _run(instance, "hived", lambda: hived([m.gpus for m in instance.machines],
                                                 [m.idle_gpus for m in instance.machines], workers=instance.N))


def run_tiresias(instance: NimpInstance, *, objective: str = "lex", time_limit: float | None = None,
                 seed: int | None = None, tiresias_spread: str = "emptiest") -> Result:
    """Algorithm-table entry ``tiresias``; takes the reading ``tiresias_spread``."""
    return _run(instance, "tiresias", lambda: tiresias([m.idle_gpus for m in instance.machines], workers=instance.N,
                                                       placement_sensitive=is_placement_sensitive(instance.job),
                                                       tiresias_spread=tiresias_spread))
