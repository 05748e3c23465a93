"""The SJF-BCO paper's quantitative claims (Sec. 7, Figs. 4-7, and Theorem 5 with Lemmas 2-3) as
``optkit reproduce`` experiments, with their measuring functions.

The paper prints Figs. 4-7 as plots without numbers; its text states their shape. Each claim
encodes one such statement as a number measured per seed (a ratio, a reduction, a count) with the
comparison the text implies (``at_most 1.0``: "SJF-BCO outperforms ..."), so a verdict is
mechanical. Workload: :func:`.generate.paper_sec7` (160 jobs, 20 servers of 4/8/16/32 GPUs, T =
1200; Fig. 6: T = 1500 and the first n servers of the same cluster), one instance per seed (RAND
is seeded with it too). Every makespan and JCT is ``evaluate``'s (re-simulated from starts and
placements), never a plan's estimate; a schedule past the horizon is counted and flagged in
``_details`` (``past_horizon``).

Readings swept (:mod:`.readings`): ``available``, ``kappa_select``, ``theta_search``, ``fa_ffp``
(the four the issue names; 16 combinations). ``kappa_tie``, ``rho_hat`` and ``u`` stay at their
defaults: ``kappa_tie`` only decides exact ties, ``u`` only rescales W against the theta grid, and
``rho_hat = fastest`` is a simplification the paper's ``rho-hat(y^k)`` notation rules out. Each
algorithm receives only the readings it takes (``kappa_select``/``fa_ffp`` are SJF-BCO's; RAND
has no theta search).

``scale="ci"``: Fig. 6 on 10 and 20 servers only; everything else is the paper's own setting
(Fig. 5's kappa = 1..32 is measured on one kappa per class of identical plans, 1, 2, 4, 8, 16,
32: every kappa between two consecutive job sizes plans identically, :func:`.sjf_bco.kappa_classes`).
``scale="paper"``: Fig. 6 on 10, 12, ..., 20 servers.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from optkit.claims import Claim, Experiment

from .readings import READINGS

__all__ = ["EXPERIMENTS", "measure_fig4", "measure_fig5", "measure_fig6", "measure_fig7", "measure_bounds",
           "run_policy", "turning_points", "series_fig4", "series_fig6"]

PAPER = "sjf-bco"
PROBLEM = "rar-ddls"
SWEPT = ("available", "kappa_select", "theta_search", "fa_ffp")
POLICIES = ("sjf-bco", "ff", "ls", "rand")
FIG5_KAPPAS = (1, 2, 4, 8, 16, 32)
FIG7_LAMBDAS = (1, 2, 4, 8)
FIG6_SERVERS = {"ci": (10, 20), "paper": (10, 12, 14, 16, 18, 20)}


# ----------------------------------------------------------------------------- running one policy
def _runner(policy: str) -> Callable[..., Any]:
    from .baselines import run_ff, run_ls, run_rand
    from .sjf_bco import run_sjf_bco

    return {"sjf-bco": run_sjf_bco, "ff": run_ff, "ls": run_ls, "rand": run_rand}[policy]


def _taken(policy: str, readings: Mapping[str, Any]) -> dict[str, Any]:
    """The readings of ``readings`` that ``policy`` takes (by the declarations in :mod:`.readings`)."""
    names = {r.name for r in READINGS if r.takes(policy)}
    return {k: v for k, v in readings.items() if k in names}


def run_policy(policy: str, data: Mapping[str, Any], readings: Mapping[str, Any], seed: int,
               **tuning: Any) -> dict[str, Any]:
    """Run ``policy`` on the instance dict ``data`` under ``readings`` (and ``tuning``: ``kappa``,
    ``lam``); makespan and mean JCT (slots) from ``evaluate``. ``None`` values when the policy
    returned no schedule (its status says why)."""
    from .model import RarInstance, evaluate

    inst = RarInstance.from_dict(data)
    res = _runner(policy)(inst, objective="makespan", seed=seed, **_taken(policy, readings), **tuning)
    if res.solution is None:
        return {"makespan": None, "jct": None, "status": res.status.value, "past_horizon": None}
    ev = evaluate(inst, res.solution)
    if not ev.feasible:  # a bug, not a measurement
        raise AssertionError(f"{policy}: infeasible schedule: {ev.violations[:2]}")
    return {"makespan": float(ev.metrics["makespan_slots"]), "jct": ev.metrics["mean_jct_s"] / inst.slot_seconds,
            "status": res.status.value, "past_horizon": bool(ev.metrics["past_horizon"]),
            "theta_u": res.info.get("theta_u"), "kappa": res.info.get("kappa")}


def _sec7(seed: int, **kw: Any) -> dict[str, Any]:
    from .generate import paper_sec7

    return paper_sec7(seed, **kw)


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b <= 0 else a / b


# ----------------------------------------------------------------------------- Fig. 4
def measure_fig4(*, readings: Mapping[str, Any], seed: int, scale: str) -> dict[str, Any]:
    """Fig. 4: makespan and average JCT of SJF-BCO, FF, LS and RAND; SJF-BCO over the best
    baseline (the paper: below 1 for both)."""
    data = _sec7(seed)
    runs = {p: run_policy(p, data, readings, seed) for p in POLICIES}
    base = [r for p, r in runs.items() if p != "sjf-bco" and r["makespan"] is not None]
    best_mk = min((r["makespan"] for r in base), default=None)
    best_jct = min((r["jct"] for r in base), default=None)
    return {"sjf-bco-fig4-makespan-vs-best-baseline": _ratio(runs["sjf-bco"]["makespan"], best_mk),
            "sjf-bco-fig4-jct-vs-best-baseline": _ratio(runs["sjf-bco"]["jct"], best_jct),
            "_details": {"policies": runs, "unit": "slots (1 s)"}}


# ----------------------------------------------------------------------------- Fig. 5
def turning_points(values: list[float]) -> int:
    """How often the direction of ``values`` changes (steps of zero change skipped)."""
    signs = [math.copysign(1.0, b - a) for a, b in zip(values, values[1:]) if b != a]
    return sum(1 for s, t in zip(signs, signs[1:]) if s != t)


def _drop_rise_drop(values: list[float]) -> bool:
    """The paper's Fig. 5 shape: the first change is a drop, a rise follows, and the last change
    is a drop (turning points 1 and 2)."""
    signs = [b - a for a, b in zip(values, values[1:]) if b != a]
    return len(signs) >= 3 and signs[0] < 0 and signs[-1] < 0 and any(s > 0 for s in signs[1:-1])


def measure_fig5(*, readings: Mapping[str, Any], seed: int, scale: str) -> dict[str, Any]:
    """Fig. 5: SJF-BCO's makespan with kappa fixed to 1..32 (lambda = 1, T = 1200)."""
    data = _sec7(seed)
    runs = {k: run_policy("sjf-bco", data, readings, seed, kappa=k) for k in FIG5_KAPPAS}
    curve = [runs[k]["makespan"] for k in FIG5_KAPPAS]
    ok = all(v is not None for v in curve)
    return {"sjf-bco-fig5-turning-points": turning_points(curve) if ok else None,
            "sjf-bco-fig5-drop-rise-drop": (1.0 if _drop_rise_drop(curve) else 0.0) if ok else None,
            "_details": {"kappa": list(FIG5_KAPPAS), "makespan": curve,
                         "past_horizon": [runs[k]["past_horizon"] for k in FIG5_KAPPAS]}}


# ----------------------------------------------------------------------------- Fig. 6
def measure_fig6(*, readings: Mapping[str, Any], seed: int, scale: str) -> dict[str, Any]:
    """Fig. 6: makespan of FF, LS and SJF-BCO on the first n servers of the seed's 20-server
    cluster (same jobs), T = 1500; relative reduction from the fewest to the most servers."""
    counts = FIG6_SERVERS[scale]
    full = _sec7(seed, horizon=1500)
    curves: dict[str, list[float | None]] = {p: [] for p in ("sjf-bco", "ff", "ls")}
    flags: dict[str, list[bool | None]] = {p: [] for p in curves}
    for n in counts:
        data = dict(full, servers=full["servers"][:n])
        for p in curves:
            r = run_policy(p, data, readings, seed)
            curves[p].append(r["makespan"])
            flags[p].append(r["past_horizon"])

    def reduction(p: str) -> float | None:
        a, b = curves[p][0], curves[p][-1]
        return None if a is None or b is None else (a - b) / a

    def absolute(p: str) -> float | None:
        a, b = curves[p][0], curves[p][-1]
        return None if a is None or b is None else a - b

    others = [absolute(p) for p in ("sjf-bco", "ls")]
    ff_abs = absolute("ff")
    lead = None if ff_abs is None or None in others else ff_abs - max(others)  # type: ignore[type-var]
    return {"sjf-bco-fig6-sjf-bco-reduction": reduction("sjf-bco"),
            "sjf-bco-fig6-ff-reduction": reduction("ff"),
            "sjf-bco-fig6-ls-reduction": reduction("ls"),
            "sjf-bco-fig6-ff-largest-reduction": lead,
            "_details": {"servers": list(counts), "makespan": curves, "past_horizon": flags}}


# ----------------------------------------------------------------------------- Fig. 7
def measure_fig7(*, readings: Mapping[str, Any], seed: int, scale: str) -> dict[str, Any]:
    """Fig. 7: SJF-BCO with kappa = 1 and lambda = 1, 2, 4, 8 (T = 1200)."""
    data = _sec7(seed)
    runs = {lam: run_policy("sjf-bco", data, readings, seed, kappa=1, lam=float(lam)) for lam in FIG7_LAMBDAS}
    curve = [runs[lam]["makespan"] for lam in FIG7_LAMBDAS]
    if any(v is None for v in curve):
        return {"sjf-bco-fig7-increases": None, "sjf-bco-fig7-reduction": None,
                "_details": {"lambda": list(FIG7_LAMBDAS), "makespan": curve}}
    increases = sum(1 for a, b in zip(curve, curve[1:]) if b > a)
    return {"sjf-bco-fig7-increases": increases, "sjf-bco-fig7-reduction": (curve[0] - curve[-1]) / curve[0],
            "_details": {"lambda": list(FIG7_LAMBDAS), "makespan": curve,
                         "past_horizon": [runs[lam]["past_horizon"] for lam in FIG7_LAMBDAS]}}


# ----------------------------------------------------------------------------- Theorem 5, Lemmas 2-3
def measure_bounds(*, readings: Mapping[str, Any], seed: int, scale: str) -> dict[str, Any]:
    """Lemma 2 (theta-tilde - W_max), Lemma 3 (makespan over n_g·W_max) and Theorem 5 (makespan
    over ratio·LB, conclusive when <= 1) on SJF-BCO's schedule of the seed's Sec. 7 instance,
    with the tightest phi and l :func:`.bounds.theorem5` computes."""
    from .bounds import lemma_checks
    from .model import RarInstance, evaluate, schedule_dict
    from .sjf_bco import sjf_bco

    inst = RarInstance.from_dict(_sec7(seed))
    y, res = sjf_bco(inst, **_taken("sjf-bco", readings))
    ev = evaluate(inst, schedule_dict(inst, y, res.outcome))
    if not ev.feasible:
        raise AssertionError(f"SJF-BCO: infeasible schedule: {ev.violations[:2]}")
    ch = lemma_checks(inst, res)
    assert ch["makespan_slots"] == ev.metrics["makespan_slots"]
    ratio5 = ch["theorem5_ratio"]
    return {"sjf-bco-lemma2-gap": ch["lemma2_gap"],
            "sjf-bco-lemma3-ratio": ch["makespan_slots"] / ch["lemma3_bound"],
            "sjf-bco-theorem5-ratio": (ch["makespan_slots"] / (ratio5 * ch["theorem5_reference"])
                                       if math.isfinite(ratio5) else None),
            "_details": {k: v for k, v in ch.items() if not isinstance(v, float) or math.isfinite(v)},
            "_notes": ["Theorem 5 is checked against the lower bound LB <= OPT: a value <= 1 proves the bound "
                       "holds; a value > 1 would be inconclusive (the tests check it against proven optima on "
                       "small instances)."]}


# ----------------------------------------------------------------------------- extra series (plug-ins)
def _run_any(algorithm: str, data: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """Any registered algorithm (a plug-in) on ``data`` through ``solve``; its makespan and mean
    JCT in slots from ``evaluate``."""
    from optkit.solve import solve

    res = solve(PROBLEM, dict(data), algorithm, objective="makespan", seed=seed)
    if res.solution is None:
        return {"makespan": None, "jct": None, "status": res.status.value}
    slot = float(data.get("slot_seconds", 1.0))
    return {"makespan": float(res.metrics["makespan_slots"]), "jct": res.metrics["mean_jct_s"] / slot,
            "status": res.status.value}


def series_fig4(algorithm: str, *, readings: Mapping[str, Any], seed: int, scale: str) -> dict[str, Any]:
    """Fig. 4's setting for one more algorithm: its makespan and mean JCT (slots), and SJF-BCO's
    over its (below 1: SJF-BCO is better)."""
    data = _sec7(seed)
    mine = _run_any(algorithm, data, seed)
    sjf = run_policy("sjf-bco", data, readings, seed)
    return {"makespan_slots": mine["makespan"], "mean_jct_slots": mine["jct"],
            "sjf_bco_makespan_over_it": _ratio(sjf["makespan"], mine["makespan"]),
            "sjf_bco_jct_over_it": _ratio(sjf["jct"], mine["jct"]), "_details": {"status": mine["status"]}}


def series_fig6(algorithm: str, *, readings: Mapping[str, Any], seed: int, scale: str) -> dict[str, Any]:
    """Fig. 6's setting for one more algorithm: its makespan on the fewest and the most servers
    and its relative reduction (the statistic of the paper's three)."""
    counts = FIG6_SERVERS[scale]
    full = _sec7(seed, horizon=1500)
    curve = [_run_any(algorithm, dict(full, servers=full["servers"][:n]), seed)["makespan"] for n in counts]
    a, b = curve[0], curve[-1]
    return {f"makespan_slots_{counts[0]}_servers": a, f"makespan_slots_{counts[-1]}_servers": b,
            "reduction": None if a is None or b is None else (a - b) / a, "_details": {"servers": list(counts),
                                                                                     "makespan": curve}}


# ----------------------------------------------------------------------------- the experiments
_NOTE_SHAPE = ("The paper gives Fig. {n} as a plot without numbers; the claims encode the shape its text "
               "states.")

EXPERIMENTS = {e.id: e for e in [
    Experiment(
        id="sjf-bco-fig4", problem=PROBLEM, paper=PAPER,
        summary="Fig. 4: SJF-BCO against FF, LS and RAND, makespan and average JCT (160 jobs, 20 servers, T = 1200)",
        measure=f"{__name__}:measure_fig4",
        claims=(
            Claim("sjf-bco-fig4-makespan-vs-best-baseline", "Sec. 7, Fig. 4 and text: 'SJF-BCO outperforms other "
                  "scheduling policies ... in terms of makespan'", 1.0, "ratio",
                  "SJF-BCO's makespan over the smallest of FF's, LS's and RAND's, per seed", "at_most"),
            Claim("sjf-bco-fig4-jct-vs-best-baseline", "Sec. 7, Fig. 4: '... and average job completion times'", 1.0,
                  "ratio", "SJF-BCO's mean JCT over the smallest baseline mean JCT, per seed", "at_most"),
        ),
        readings=SWEPT, notes=_NOTE_SHAPE.format(n=4), series=f"{__name__}:series_fig4"),
    Experiment(
        id="sjf-bco-fig5", problem=PROBLEM, paper=PAPER,
        summary="Fig. 5: SJF-BCO's makespan as kappa goes from 1 to 32 (two turning points)",
        measure=f"{__name__}:measure_fig5",
        claims=(
            Claim("sjf-bco-fig5-turning-points", "Sec. 7, Fig. 5: 'the makespan first drops and then increases and "
                  "then drops again' (Turning points 1 and 2)", 2.0, "count",
                  "direction changes of the makespan over kappa = 1, 2, 4, 8, 16, 32 (the distinct plans), mean "
                  "over seeds", precision=0.5, resolution=0.5),
            Claim("sjf-bco-fig5-drop-rise-drop", "Sec. 7, Fig. 5: drop, rise, drop", 1.0, "ratio",
                  "share of seeds whose curve first drops, later rises and finally drops", precision=0.5,
                  note="a yes/no statement per seed: the mean share is within the tolerance of 1 when at least "
                       "half the seeds show the shape (precision 0.5)"),
        ),
        readings=SWEPT, notes=_NOTE_SHAPE.format(n=5) + " kappa = 1..32 measured on one kappa per class of "
                                                         "identical plans (1, 2, 4, 8, 16, 32)."),
    Experiment(
        id="sjf-bco-fig6", problem=PROBLEM, paper=PAPER,
        summary="Fig. 6: makespan as the servers grow from 10 to 20 (T = 1500); FF gains most",
        measure=f"{__name__}:measure_fig6",
        claims=(
            Claim("sjf-bco-fig6-sjf-bco-reduction", "Sec. 7, Fig. 6: 'the makespan of FF, LS and SJF-BCO decrease'",
                  0.0, "ratio", "(makespan on 10 servers - on 20) / on 10, SJF-BCO", "at_least"),
            Claim("sjf-bco-fig6-ff-reduction", "Sec. 7, Fig. 6 (FF)", 0.0, "ratio",
                  "(makespan on 10 servers - on 20) / on 10, FF", "at_least"),
            Claim("sjf-bco-fig6-ls-reduction", "Sec. 7, Fig. 6 (LS)", 0.0, "ratio",
                  "(makespan on 10 servers - on 20) / on 10, LS", "at_least"),
            Claim("sjf-bco-fig6-ff-largest-reduction", "Sec. 7, Fig. 6: 'FF has the largest makespan reduction'",
                  0.0, "slots", "FF's makespan reduction minus the larger of LS's and SJF-BCO's", "at_least"),
        ),
        readings=SWEPT, notes=_NOTE_SHAPE.format(n=6) + " The first n servers of each seed's 20-server cluster, "
                                                        "same jobs; ci: 10 and 20 servers, paper: 10, 12, ..., 20.",
        series=f"{__name__}:series_fig6"),
    Experiment(
        id="sjf-bco-fig7", problem=PROBLEM, paper=PAPER,
        summary="Fig. 7: SJF-BCO with kappa = 1, lambda = 1, 2, 4, 8: makespan falls monotonically",
        measure=f"{__name__}:measure_fig7",
        claims=(
            Claim("sjf-bco-fig7-increases", "Sec. 7, Fig. 7: 'the makespan monotonically decreases as lambda "
                  "increases'", 0.0, "count", "steps lambda -> 2·lambda at which the makespan rises, per seed",
                  "at_most"),
            Claim("sjf-bco-fig7-reduction", "Sec. 7, Fig. 7", 0.0, "ratio",
                  "(makespan at lambda = 1 - at lambda = 8) / at lambda = 1", "at_least"),
        ),
        readings=SWEPT, notes=_NOTE_SHAPE.format(n=7)),
    Experiment(
        id="sjf-bco-bounds", problem=PROBLEM, paper=PAPER,
        summary="Lemma 2, Lemma 3 and Theorem 5 on SJF-BCO's Sec. 7 schedules",
        measure=f"{__name__}:measure_bounds",
        claims=(
            Claim("sjf-bco-lemma2-gap", "Sec. 6, Lemma 2: W_max = theta-tilde", 0.0, "slots",
                  "theta-tilde - max_g U_g of the accepted plan (integer theta: within 1 slot counts)",
                  "at_most", resolution=1.0),
            Claim("sjf-bco-lemma3-ratio", "Sec. 6, Lemma 3: makespan <= n_g·W_max", 1.0, "ratio",
                  "makespan (evaluate) over n_g·max_g U_g", "at_most"),
            Claim("sjf-bco-theorem5-ratio", "Sec. 6, Theorem 5: makespan <= n_g·phi·u/l·OPT", 1.0, "ratio",
                  "makespan over n_g·phi·u/l·LB, LB <= OPT the best lower bound (<= 1 proves the bound)",
                  "at_most"),
        ),
        readings=SWEPT,
        notes=("phi and l are the tightest optkit computes from the instance (per-job contention caps). Lemma 3 "
               "as stated has a counterexample (tests/test_rar_ddls_lemmas.py): W = rho-hat/u is a lower bound "
               "on the real busy time under contention.")),
]}
