"""The comparison evidence of a report beyond counts and medians (:mod:`optkit.report` calls it).

Per run (``rows.csv``)
    ``charged_time_s`` (:func:`charged_time`): the wall time capped at the run's time limit, and
    the limit itself for a run that ended ``time_limit`` or ``error``: a run that finished past
    its limit (the worker lets a run go on to 1.2 times the limit plus a grace before it kills
    it) is charged the limit like a timeout, and is not ``solved``; ``solved``: ended ``optimal``
    or ``infeasible`` (a proof) within its time limit;
    ``primal_integral_s`` (Berthold 2013) against the best known objective of the instance and
    objective over every stored run, and ``primal_dual_integral_s`` of the run's own incumbent and
    bound, both over ``[0, T]`` with ``T`` = the run's time limit (its wall time when it had
    none), ``anytime_horizon_s`` = T (:mod:`optkit.anytime`).

Per (problem, objective, algorithm, reading) (the summary)
    ``solved`` count, ``time_sgm_s``: the shifted geometric mean of ``charged_time_s`` with the
    shift :data:`optkit.harness.stats.TIME_SHIFT_S` (10 s), and the medians of both integrals.

Per instance, several seeds of one (algorithm, reading) are one value: the median over the
seeds, a failure counting as ``+inf`` (so a failure wins the median only if most seeds fail).

Performance profiles (``profile_<problem>_<objective>.png`` / ``.csv``), one curve per
(algorithm, reading), over the instances every curve of the (problem, objective) ran:

* time: cost = wall time of a run solved to optimality (floored at :data:`TIME_FLOOR_S`, the
  resolution of a run's clock, so a zero time is no division by zero); any other run is a
  failure;
* gap-to-best-bound: cost = ``1 + gap``, ``gap`` being the report's relative gap
  ``(objective - best bound) / |objective|`` against the best proven bound of the instance. The
  ratio of algorithm s on instance p is ``(1 + gap_s) / (1 + min_s gap_s)``: a proven optimum
  (gap 0) is a cost of 1, not a zero; a run without an objective is a failure.

Paired comparisons (``pairs.csv``, the "Paired comparisons" table of ``summary.md``): every
two (algorithm, reading) curves of a (problem, objective), on the instances both ran, on two
measures: ``gap`` (lower wins; ties within 1e-9) and ``time`` (``charged_time_s``): wins, ties,
losses, the median difference (first minus second) with a bootstrap 95 % interval (seed 0,
10,000 resamples) and the Wilcoxon signed-rank p-value (:mod:`optkit.harness.stats`).

The charging rule is MIPLIB's and Mittelmann's: a run is judged at the time limit it was given,
so nothing it did past the limit counts, neither its time nor its answer; a failure costs the
whole limit, never less than a run that kept going.

Bad input, decided: a report whose runs carry no anytime record (stores written before schema 2)
or pairs of algorithms that share no instance is still a report: the rest is drawn and a note
(terminal and ``summary.md``) says which runs lack the record or which pairs and profiles were
left out. Only a store (or ``--problem``) with no run at all makes the report unusable: exit 2.
"""

from __future__ import annotations

import csv
import math
import statistics
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from optkit.anytime import primal_dual_integral, primal_gap, primal_integral, step_value
from optkit.harness.stats import (
    TIME_SHIFT_S, paired_comparison, performance_profile, profile_curve, shifted_geometric_mean,
)
from optkit.result import scalar_objective

__all__ = [
    "TIME_FLOOR_S", "PAIR_COLUMNS", "PROFILE_COLUMNS", "charged_time", "annotate_runs", "summary_extras",
    "missing_anytime_note",
    "profile_data", "pair_rows", "write_profile", "plot_anytime",
]

TIME_FLOOR_S = 1e-3
"""Wall times below this are charged this in the time profile (a run's clock resolution)."""
PAIR_COLUMNS = ("problem", "objective", "a", "b", "measure", "n", "n_finite", "wins", "ties", "losses",
                "median_diff", "ci_low", "ci_high", "p_value")
PROFILE_COLUMNS = ("problem", "objective", "measure", "algorithm", "instance_name", "instance_hash", "cost", "ratio")
_SOLVED = ("optimal", "infeasible")
_STYLES = ("-", "--", "-.", ":")
_CHARGED_AT_LIMIT = ("time_limit", "error")
_NO_OBJECTIVE = ("error", "infeasible", "no_solution")

Label = Callable[[Mapping[str, Any]], str]


def _scalar(r: Mapping[str, Any]) -> float | None:
    if r.get("status") in _NO_OBJECTIVE:
        return None
    v = scalar_objective(r.get("objective"), r.get("metrics"), r.get("objective_name", ""))
    return v if v is not None and math.isfinite(v) else None


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _best_known(pool: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], float]:
    """The lowest objective of each (instance, objective) over ``pool`` (Berthold's reference)."""
    best: dict[tuple[str, str], float] = {}
    for r in pool:
        v = _scalar(r)
        key = (r["instance_hash"], r["objective_name"])
        if v is not None and (key not in best or v < best[key]):
            best[key] = v
    return best


def charged_time(row: Mapping[str, Any]) -> float | None:
    """The seconds a run is charged in the shifted geometric mean and the paired time comparison:
    ``min(wall time, time limit)``, and the time limit for a run that ended ``time_limit`` or
    ``error``; the wall time for a run without a limit; ``None`` for a run that ended otherwise
    without a wall time.

    References
    ----------
    A. Gleixner et al., "MIPLIB 2017", Math. Prog. Comp. 13 (2021), Sec. 6 (runs over the limit
    count as timeouts, charged the limit); H. Mittelmann, plato.asu.edu/bench.html.

    Notes
    -----
    Guarantee: never above the time limit when there is one.

    Units: seconds.

    Examples
    --------
    >>> [charged_time({"status": s, "wall_time_s": w, "time_limit": 10.0})
    ...  for s, w in (("optimal", 4.0), ("feasible", 11.5), ("time_limit", 12.0), ("error", 0.1))]
    [4.0, 10.0, 10.0, 10.0]
    >>> charged_time({"status": "feasible", "wall_time_s": 11.5, "time_limit": None})
    11.5
    """
    wall, limit = _num(row.get("wall_time_s")), _num(row.get("time_limit"))
    if limit is not None and row.get("status") in _CHARGED_AT_LIMIT:
        return limit
    return wall if wall is None or limit is None else min(wall, limit)


def annotate_runs(rows: Sequence[dict[str, Any]], pool: Sequence[Mapping[str, Any]]) -> None:
    """Add ``charged_time_s``, ``solved``, ``anytime_horizon_s``, ``primal_integral_s`` and
    ``primal_dual_integral_s`` to each of ``rows`` (in place); the best known objective of each
    (instance, objective) is taken over ``pool``. Integrals are ``None`` for a run without an
    anytime record."""
    best = _best_known(pool)
    for r in rows:
        wall, limit = _num(r.get("wall_time_s")), _num(r.get("time_limit"))
        r["charged_time_s"] = charged_time(r)
        r["solved"] = r["status"] in _SOLVED and (limit is None or (wall is not None and wall <= limit))
        horizon = limit if limit is not None else wall
        r["anytime_horizon_s"] = horizon
        traj = r.get("anytime")
        if traj is None or horizon is None or horizon <= 0:
            r["primal_integral_s"] = r["primal_dual_integral_s"] = None
            continue
        ref = best.get((r["instance_hash"], r["objective_name"]))
        r["primal_integral_s"] = primal_integral(traj, ref, horizon)
        r["primal_dual_integral_s"] = primal_dual_integral(traj, horizon)


def summary_extras(group: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The summary columns this module adds for one (problem, objective, algorithm, reading)."""
    times = [t for t in (r.get("charged_time_s") for r in group) if t is not None]
    pi = [v for v in (r.get("primal_integral_s") for r in group) if v is not None]
    pdi = [v for v in (r.get("primal_dual_integral_s") for r in group) if v is not None]
    return {
        "solved": sum(1 for r in group if r.get("solved")),
        "time_sgm_s": shifted_geometric_mean(times, TIME_SHIFT_S) if times else None,
        "primal_integral_median_s": statistics.median(pi) if pi else None,
        "primal_dual_integral_median_s": statistics.median(pdi) if pdi else None,
    }


def missing_anytime_note(rows: Sequence[Mapping[str, Any]], shown: int = 5) -> str | None:
    """One note naming the runs without an anytime record, or ``None`` when every run has one."""
    missing = [r for r in rows if r.get("anytime") is None]
    if not missing:
        return None
    per_algo: dict[str, int] = {}
    for r in missing:
        per_algo[r["algorithm"]] = per_algo.get(r["algorithm"], 0) + 1
    which = ", ".join(f"{r['problem']} {r['instance_name']} {r['algorithm']} seed {r['seed']}" for r in missing[:shown])
    more = f" and {len(missing) - shown} more" if len(missing) > shown else ""
    head = ("no run in this store has an anytime record" if len(missing) == len(rows)
            else f"{len(missing)} of {len(rows)} runs have no anytime record")
    return (f"{head} (stored before optkit recorded incumbents and bounds over time; by algorithm: "
            + ", ".join(f"{a} {n}" for a, n in per_algo.items())
            + f"): {which}{more}. Gap-over-time plots and primal integrals leave them out; "
              "re-run them into a fresh store to get them.")


# ----------------------------------------------------------------------------- per instance
def _per_instance(rows: Iterable[Mapping[str, Any]], label: Label,
                  value: Callable[[Mapping[str, Any]], float | None]) -> dict[str, dict[str, float | None]]:
    """``{label: {instance_hash: median over seeds of value (failure = inf) or None}}``."""
    raw: dict[str, dict[str, list[float]]] = {}
    for r in rows:
        v = value(r)
        raw.setdefault(label(r), {}).setdefault(r["instance_hash"], []).append(math.inf if v is None else v)
    out: dict[str, dict[str, float | None]] = {}
    for lab, per in raw.items():
        out[lab] = {}
        for h, vals in per.items():
            m = statistics.median(vals)
            out[lab][h] = m if math.isfinite(m) else None
    return out


def _time_cost(r: Mapping[str, Any]) -> float | None:
    if r["status"] != "optimal" or not r.get("solved"):
        return None
    t = _num(r.get("wall_time_s"))
    return None if t is None else max(t, TIME_FLOOR_S)


def _gap_cost(r: Mapping[str, Any]) -> float | None:
    g = _num(r.get("gap"))
    return None if g is None else 1.0 + max(g, 0.0)


_MEASURES: dict[str, Callable[[Mapping[str, Any]], float | None]] = {"time": _time_cost, "gap": _gap_cost}


def profile_data(rows: Sequence[Mapping[str, Any]], label: Label, notes: list[str]) -> dict[str, Any] | None:
    """Profiles of one (problem, objective): ``{"labels", "instances", "costs": {measure: {label:
    {hash: cost}}}, "ratios": {measure: {label: ratios}}}``, over the instances every label ran;
    ``None`` (and a note) when there is no such instance."""
    if not rows:
        return None
    labels = list(dict.fromkeys(label(r) for r in rows))
    per_label: dict[str, set[str]] = {}
    for r in rows:
        per_label.setdefault(label(r), set()).add(r["instance_hash"])
    common = set.intersection(*per_label.values())
    if not common:
        notes.append(f"{rows[0]['problem']} [{rows[0]['objective_name']}]: no instance was run by every algorithm "
                     f"({', '.join(_one_line(x) for x in labels)}): performance profiles not drawn")
        return None
    kept = [r for r in rows if r["instance_hash"] in common]
    instances = sorted(common, key=lambda h: next(r["instance_name"] for r in kept if r["instance_hash"] == h))
    costs: dict[str, dict[str, dict[str, float | None]]] = {}
    ratios: dict[str, dict[str, list[float]]] = {}
    for measure, fn in _MEASURES.items():
        per = _per_instance(kept, label, fn)
        costs[measure] = {lab: {h: per[lab].get(h) for h in instances} for lab in labels}
        ratios[measure] = {}
        unsorted = _ratios_by_instance(costs[measure], instances)
        for lab in labels:
            ratios[measure][lab] = unsorted[lab]
    names = {r["instance_hash"]: r["instance_name"] for r in kept}
    return {"labels": labels, "instances": instances, "names": names, "costs": costs, "ratios": ratios}


def _ratios_by_instance(costs: Mapping[str, Mapping[str, float | None]], instances: Sequence[str]) -> dict[str, list[float]]:
    """Ratios in instance order (:func:`performance_profile` sorts them; the CSV keeps the order)."""
    out: dict[str, list[float]] = {lab: [] for lab in costs}
    for h in instances:
        prof = performance_profile({lab: {h: costs[lab][h]} for lab in costs})
        for lab in costs:
            out[lab].append(prof[lab][0])
    return out


def pair_rows(rows: Sequence[Mapping[str, Any]], label: Label, notes: list[str]) -> list[dict[str, Any]]:
    """Paired comparisons of one (problem, objective): every two labels on both measures."""
    if not rows:
        return []
    problem, objective = rows[0]["problem"], rows[0]["objective_name"]
    labels = list(dict.fromkeys(label(r) for r in rows))
    values = {
        "gap": _per_instance(rows, label, lambda r: _num(r.get("gap"))),
        "time": _per_instance(rows, label, lambda r: _num(r.get("charged_time_s"))),
    }
    out: list[dict[str, Any]] = []
    apart: list[str] = []
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            for measure in ("gap", "time"):
                pc = paired_comparison(_one_line(a), _one_line(b), measure, values[measure][a], values[measure][b])
                if pc is None:
                    if measure == "gap":
                        apart.append(f"{_one_line(a)} / {_one_line(b)}")
                    continue
                out.append({"problem": problem, "objective": objective, **pc.to_dict()})
    if apart:
        notes.append(f"{problem} [{objective}]: no instance in common, not compared: {'; '.join(apart)}")
    return out


def _one_line(label: str) -> str:
    return label.replace("\n", " ")


# ----------------------------------------------------------------------------- files
def write_profile(data: Mapping[str, Any], problem: str, objective: str, png: Path, csv_path: Path) -> None:
    """The profile PNG (time and gap panels) and the CSV of every cost and ratio behind it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with csv_path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(PROFILE_COLUMNS)
        for measure in _MEASURES:
            for lab in data["labels"]:
                for h, ratio in zip(data["instances"], data["ratios"][measure][lab]):
                    cost = data["costs"][measure][lab][h]
                    w.writerow([problem, objective, measure, _one_line(lab), data["names"][h], h,
                                "" if cost is None else cost, ratio])
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    titles = {"time": "time to optimality (unsolved = failure)", "gap": "gap to best bound: (1+gap)/(1+best gap)"}
    n = len(data["instances"])
    for ax, measure in zip(axes, _MEASURES):
        finite = [r for lab in data["labels"] for r in data["ratios"][measure][lab] if math.isfinite(r)]
        tau_max = max(finite, default=1.0) * 1.05 + 1e-9
        for k, lab in enumerate(data["labels"]):
            pts = profile_curve(data["ratios"][measure][lab])
            xs = [1.0] + [p[0] for p in pts] + [tau_max]
            ys = [0.0] + [p[1] for p in pts] + [pts[-1][1] if pts else 0.0]
            # curves often coincide (every exact solver at rho = 1): styles and widths keep each visible
            ax.step(xs, ys, where="post", label=_one_line(lab), linestyle=_STYLES[k % len(_STYLES)],
                    linewidth=2.4 - 1.6 * k / max(1, len(data["labels"]) - 1))
        if tau_max > 4:
            ax.set_xscale("log", base=2)
        ax.set_xlim(1.0, max(tau_max, 1.1))
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("tau (ratio to the best algorithm)")
        ax.set_ylabel(f"fraction of the {n} instances")
        ax.set_title(f"{problem} [{objective}]: {titles[measure]}", fontsize=9)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7, loc="lower right")
    fig.savefig(png, dpi=110)
    plt.close(fig)


def plot_anytime(rows: Sequence[Mapping[str, Any]], pool: Sequence[Mapping[str, Any]], label: Label,
                 problem: str, objective: str, png: Path) -> bool:
    """Gap over time of one (problem, objective): per (algorithm, reading) the median over its
    runs (band: 25th-75th percentile) of the primal gap (left) and of the primal-dual gap (right; only
    curves whose runs report a bound: a heuristic proves none, its gap there would stay at 100 %).
    Returns ``False`` (nothing drawn) when no run has an anytime record."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    runs = [r for r in rows if r.get("anytime") is not None and r.get("anytime_horizon_s")]
    if not runs:
        return False
    best = _best_known(pool)
    t_max = max(r["anytime_horizon_s"] for r in runs)
    t_min = max(min(TIME_FLOOR_S, t_max / 1e3), min((p[0] for r in runs for p in r["anytime"] if p[0] > 0),
                                                     default=TIME_FLOOR_S) / 2)
    grid = np.geomspace(t_min, t_max, 200)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained", sharey=True)
    for lab in dict.fromkeys(label(r) for r in runs):
        grp = [r for r in runs if label(r) == lab]
        primal = np.array([[primal_gap(step_value(r["anytime"], t, 1), best.get((r["instance_hash"], r["objective_name"])))
                            for t in grid] for r in grp])
        pd = np.array([[_pd_gap(r["anytime"], t) for t in grid] for r in grp])
        has_bound = any(p[2] is not None for r in grp for p in r["anytime"])
        color = None
        for ax, data in zip(axes, (primal, pd)):
            if data is pd and not has_bound:  # a heuristic proves nothing: its curve would sit at 100 %
                continue
            med = np.median(data, axis=0)
            line = ax.step(grid, 100 * med, where="post", color=color,
                           label=f"{_one_line(lab)} (n={len(grp)})" if data is primal else None)[0]
            color = line.get_color()
            lo, hi = np.percentile(data, [25, 75], axis=0)
            ax.fill_between(grid, 100 * lo, 100 * hi, step="post", alpha=0.15, color=color)
    axes[0].set_title(f"{problem} [{objective}]: primal gap to the best known objective", fontsize=9)
    axes[1].set_title(f"{problem} [{objective}]: gap between the run's incumbent and bound", fontsize=9)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("time since the run started [s]")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("gap [%] (median, 25-75% band)")
    fig.legend(loc="outside lower center", ncols=min(5, len(axes[0].lines)), fontsize=7)
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return True


def _pd_gap(traj: Sequence[Sequence[Any]], t: float) -> float:
    return primal_gap(step_value(traj, t, 1), step_value(traj, t, 2))
