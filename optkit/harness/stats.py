"""The statistics of a solver comparison, as the optimisation literature reports them.

Every function here works on plain numbers; :mod:`optkit.report` feeds it the stored rows.

* :func:`shifted_geometric_mean`: MIPLIB 2017's and Mittelmann's mean of solve times,
  ``exp(mean(log(t + s))) - s`` with shift ``s`` (:data:`TIME_SHIFT_S` = 10 s), so that the many
  very short runs do not dominate the mean as they would a plain geometric mean.
* :func:`performance_profile`: Dolan and Moré's profile of a cost table.
* :func:`paired_comparison`: two algorithms on the instances both ran: wins, ties and losses,
  the median paired difference with a seeded bootstrap 95 % interval, and the Wilcoxon
  signed-rank p-value (:func:`scipy.stats.wilcoxon`).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

__all__ = [
    "TIME_SHIFT_S", "BOOTSTRAP_RESAMPLES", "shifted_geometric_mean", "performance_profile", "profile_curve",
    "bootstrap_median_ci", "PairedComparison", "paired_comparison",
]

TIME_SHIFT_S = 10.0
"""The shift of :func:`shifted_geometric_mean` for wall times (MIPLIB 2017, Mittelmann): 10 s."""
BOOTSTRAP_RESAMPLES = 10_000
"""Resamples of :func:`bootstrap_median_ci`."""


def shifted_geometric_mean(values: Sequence[float], shift: float = TIME_SHIFT_S) -> float | None:
    """``exp(mean(log(v + shift))) - shift`` of ``values`` (``None`` when empty).

    Parameters
    ----------
    values
        Nonnegative numbers (wall times in seconds; how the report charges runs that did not
        finish: :func:`optkit.report_analysis.charged_time`).
    shift
        Added before and subtracted after the geometric mean; must be > 0 or the values > 0.

    Returns
    -------
    float or None
        The shifted geometric mean, in the values' units.

    References
    ----------
    A. Gleixner et al., "MIPLIB 2017", Math. Prog. Comp. 13 (2021) 443-490, Sec. 6 (shift 10 s);
    H. Mittelmann, "Benchmarks for optimization software", plato.asu.edu/bench.html.

    Notes
    -----
    Guarantee: exact up to floating-point rounding; lies between min and max of ``values``.

    Units: those of ``values`` and ``shift`` (seconds for wall times).

    Examples
    --------
    >>> round(shifted_geometric_mean([0.0, 30.0]), 6)  # sqrt(10 * 40) - 10
    10.0
    """
    vals = [float(v) for v in values]
    if not vals:
        return None
    if any(v + shift <= 0 for v in vals):
        raise ValueError(f"shifted_geometric_mean needs v + shift > 0, got shift {shift} and min {min(vals)}")
    return math.exp(sum(math.log(v + shift) for v in vals) / len(vals)) - shift


def performance_profile(costs: Mapping[str, Mapping[Any, float | None]]) -> dict[str, list[float]]:
    """Dolan-Moré performance ratios of each solver over the instances of ``costs``.

    ``costs[solver][instance]`` is a cost to minimise (``> 0``), or ``None`` / ``inf`` for a
    failure. The instances are those of the first solver (every solver must list the same). The
    ratio of solver s on instance p is ``cost[s][p] / min_s cost[s][p]``; a failure's ratio is
    ``inf`` (it never counts as solved, at any ``tau``), and so is every ratio of an instance on
    which every solver failed (it stays in the denominator: the profile shows it as unsolved).

    Returns
    -------
    dict
        ``{solver: sorted ratios}``; :func:`profile_curve` turns them into ``rho_s(tau)``.

    References
    ----------
    E. D. Dolan and J. J. Moré, "Benchmarking optimization software with performance
    profiles", Math. Programming 91 (2002) 201-213.

    Notes
    -----
    Guarantee: every finite ratio is >= 1, and on each instance with a success some solver has
    ratio exactly 1.

    Units: ratios are dimensionless.

    Examples
    --------
    >>> performance_profile({"a": {1: 2.0, 2: 4.0}, "b": {1: 1.0, 2: None}})
    {'a': [1.0, 2.0], 'b': [1.0, inf]}
    """
    solvers = list(costs)
    if not solvers:
        return {}
    instances = list(costs[solvers[0]])
    for s in solvers:
        if set(costs[s]) != set(instances):
            raise ValueError(f"performance_profile: solver {s!r} lists other instances than {solvers[0]!r}")

    def value(v: float | None) -> float:
        if v is None or not math.isfinite(v):
            return math.inf
        if v <= 0:
            raise ValueError(f"performance_profile: costs must be > 0, got {v}")
        return float(v)

    out: dict[str, list[float]] = {s: [] for s in solvers}
    for p in instances:
        vals = {s: value(costs[s][p]) for s in solvers}
        best = min(vals.values())
        for s in solvers:
            out[s].append(vals[s] / best if math.isfinite(best) and math.isfinite(vals[s]) else math.inf)
    return {s: sorted(r) for s, r in out.items()}


def profile_curve(ratios: Sequence[float]) -> list[tuple[float, float]]:
    """The step points ``(tau, rho(tau))`` of one solver's profile: ``rho(tau)`` is the fraction
    of instances with ratio ``<= tau``, at each distinct finite ratio."""
    n = len(ratios)
    pts: list[tuple[float, float]] = []
    for i, r in enumerate(sorted(ratios)):
        if not math.isfinite(r):
            break
        if pts and pts[-1][0] == r:
            pts[-1] = (r, (i + 1) / n)
        else:
            pts.append((r, (i + 1) / n))
    return pts


def bootstrap_median_ci(diffs: Sequence[float], *, seed: int = 0, resamples: int = BOOTSTRAP_RESAMPLES,
                        level: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the median of ``diffs`` (``None`` when empty).

    ``resamples`` samples of ``len(diffs)`` values drawn with replacement by
    ``numpy.random.default_rng(seed)``; the interval is their medians' ``(1-level)/2`` and
    ``(1+level)/2`` quantiles (numpy's default linear interpolation). The same seed gives the
    same interval.
    """
    import numpy as np

    x = np.asarray([float(d) for d in diffs], dtype=float)
    if x.size == 0:
        return None
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(resamples, x.size))
    meds = np.median(x[idx], axis=1)
    lo, hi = np.quantile(meds, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


@dataclass(frozen=True)
class PairedComparison:
    """Algorithm ``a`` against ``b`` on one measure (lower is better), over common instances.

    A missing value (a failure) loses to any value and ties with another failure.

    Attributes
    ----------
    a
        The first algorithm.
    b
        The second algorithm.
    measure
        The measure compared (lower is better).
    n
        Common instances.
    n_finite
        Those where both have a value (the statistics below are over them).
    wins
        Instances where ``a``'s value is lower than ``b``'s.
    ties
        Instances where they are equal (within ``tie_tol``).
    losses
        Instances where ``a``'s value is higher.
    median_diff
        Median of ``a - b``.
    ci_low
        Lower end of its bootstrap 95 % interval.
    ci_high
        Upper end of that interval.
    p_value
        Two-sided Wilcoxon signed-rank p-value of the differences (``None`` when every
        difference is zero or there are none).
    """

    a: str
    b: str
    measure: str
    n: int
    n_finite: int
    wins: int
    ties: int
    losses: int
    median_diff: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def paired_comparison(a: str, b: str, measure: str, values_a: Mapping[Any, float | None],
                      values_b: Mapping[Any, float | None], *, tie_tol: float = 1e-9, seed: int = 0) -> PairedComparison | None:
    """Compare ``a`` and ``b`` on the instances both have values (or failures) for.

    Returns ``None`` when they have no instance in common. ``tie_tol`` is relative:
    ``|x - y| <= tie_tol * max(1, |x|, |y|)`` is a tie. The Wilcoxon test is
    ``scipy.stats.wilcoxon(diffs)`` (two-sided, zero differences dropped as Wilcoxon did).

    References
    ----------
    F. Wilcoxon, "Individual comparisons by ranking methods", Biometrics Bulletin 1 (1945) 80-83;
    B. Efron and R. Tibshirani, "An Introduction to the Bootstrap", Chapman & Hall 1993, ch. 13.
    """
    common = [k for k in values_a if k in values_b]
    if not common:
        return None
    wins = ties = losses = 0
    diffs: list[float] = []
    for k in common:
        x, y = _num(values_a[k]), _num(values_b[k])
        if x is None or y is None:
            if x is None and y is None:
                ties += 1
            elif x is None:
                losses += 1
            else:
                wins += 1
            continue
        diffs.append(x - y)
        if abs(x - y) <= tie_tol * max(1.0, abs(x), abs(y)):
            ties += 1
        elif x < y:
            wins += 1
        else:
            losses += 1
    ci = bootstrap_median_ci(diffs, seed=seed)
    p = None
    if any(d != 0 for d in diffs):
        from scipy.stats import wilcoxon

        p = float(wilcoxon(diffs).pvalue)
    return PairedComparison(a=a, b=b, measure=measure, n=len(common), n_finite=len(diffs), wins=wins, ties=ties,
                            losses=losses, median_diff=statistics.median(diffs) if diffs else None,
                            ci_low=ci[0] if ci else None, ci_high=ci[1] if ci else None, p_value=p)


def _num(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None
