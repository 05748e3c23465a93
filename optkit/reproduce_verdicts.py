"""The verdicts of ``optkit reproduce`` per claim: over reading labels (:func:`claim_verdicts`)
and along curves (:class:`Curve`, :func:`curves_of`, :func:`reproducing_band`,
:func:`curve_sentence`), with the post-hoc marks a verdict carries (:func:`post_hoc_marks`).

Built on :mod:`optkit.reproduce_measurements`; the consistent reading, the pages and the results
text build on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from optkit.claims import Claim, Experiment, Verdict, overall_verdict, verdict
from optkit.formulation import Formulation
from optkit.readings import format_params
from optkit.reproduce_measurements import (
    Measurements,
    claim_values,
    finite_number,
    is_own_reading,
    reading_label,
    same_value,
)

__all__ = [
    "POST_HOC_MARK", "post_hoc_marks", "unreproduced_absolutes", "claim_verdicts", "Curve", "curves_of",
    "reproducing_band", "curve_sentence",
]


POST_HOC_MARK = " †"
"""Appended to a reading label that sets a post-hoc reading (:attr:`optkit.readings.Reading.post_hoc`)
away from its default."""


def post_hoc_marks(f: Formulation, exp: Experiment, labels: Iterable[str]) -> dict[str, str]:
    """``{label: mark}`` for the labels that set a post-hoc reading away from its default."""
    post_hoc = {r.name for r in f.readings if r.post_hoc}
    out = {}
    for label in labels:
        names = {part.partition("=")[0] for part in label.split(", ")} if label != "default" else set()
        if names & post_hoc:
            out[label] = POST_HOC_MARK
    return out


def unreproduced_absolutes(exp: Experiment, c: Claim, label: str, per_claim: Mapping[str, Mapping[str, Verdict]]) -> list[str]:
    """The absolute claims of ratio claim ``c`` that do not reproduce under ``label``."""
    return [a for a in c.absolute if a in per_claim and label in per_claim[a]
            and per_claim[a][label].reproduces is False]


def claim_verdicts(m: Measurements, f: Formulation, exp: Experiment) -> dict[str, tuple[dict[str, Verdict], str]]:
    """``{claim id: ({reading label: Verdict}, overall sentence)}``. The sentence marks readings
    that set a post-hoc reading (:data:`POST_HOC_MARK`) and says where a ratio reproduces but the
    absolute values it is a ratio of do not (:attr:`optkit.claims.Claim.absolute`). For an
    experiment with curves (:attr:`optkit.claims.Experiment.curves`) it opens with the band of
    each curve (:func:`curve_sentence`), and the rest of the sentence covers the other readings
    (the curve's points away from the default are left to the band)."""
    vals = claim_values(m.rows, f, exp)
    labels = sorted(vals, key=lambda x: (x != "default", x))
    marks = post_hoc_marks(f, exp, labels)
    per_claim = {c.id: {label: verdict(c, [v for _, v in vals[label].get(c.id, [])], m.scale) for label in labels}
                 for c in exp.claims}
    curves = curves_of(m, f, exp)
    on_curve = {label for cv in curves for label in cv.labels_away}
    out = {}
    for c in exp.claims:
        per = per_claim[c.id]
        rest = {label: v for label, v in per.items() if label not in on_curve}
        overall = overall_verdict(rest, marks, c) if rest or not curves else ""
        bands = [] if c.incomparable else [curve_sentence(cv, c, m.scale) for cv in curves]
        if bands:
            overall = "; ".join(bands) + (f" — at the other readings: {overall}" if overall else "")
        ratio_only = [label for label, v in per.items() if v.reproduces and unreproduced_absolutes(exp, c, label, per_claim)]
        if ratio_only:
            overall += (f"; the ratio reproduces but the absolute values ({', '.join(c.absolute)}) do not under "
                        f"{'; '.join(label + marks.get(label, '') for label in ratio_only)}")
        if marks and POST_HOC_MARK in overall:
            overall += f" ({POST_HOC_MARK.strip()}: sets a post-hoc reading away from its default)"
        out[c.id] = (per, overall)
    return out


@dataclass
class Curve:
    """The measurements of one curve (:attr:`optkit.claims.Experiment.curves`): reading ``name``
    varied with every other reading of the experiment at its default (or, for a reading the
    experiment cannot be measured at the default of, at the value named by ``group``).

    Attributes
    ----------
    name
        The swept reading.
    group
        The other readings away from their defaults (``format_params``), ``"default"`` if none.
    default
        The reading's default (the point the single-point tables use).
    points
        ``{x: rows}`` (feasible rows of the store at that value), x ascending.
    labels_away
        The reading labels of the points away from the default (left to the band in the overall
        sentence).
    """

    name: str
    group: str
    default: float
    points: dict[float, list[dict[str, Any]]]
    labels_away: set[str]

    def values(self, claim_id: str) -> dict[float, list[float | None]]:
        """Per x, the claim's value of every seed (``None`` where not measured)."""
        return {x: [(r.get("metrics") or {}).get(claim_id) for r in sorted(rows, key=lambda r: r["seed"])]
                for x, rows in self.points.items()}

    def diagnostics(self) -> dict[str, dict[float, list[float]]]:
        """``{name: {x: values over seeds}}`` of the rows' ``_diagnostics`` (numbers only)."""
        out: dict[str, dict[float, list[float]]] = {}
        for x, rows in self.points.items():
            for r in rows:
                diag = (r.get("metrics") or {}).get("_diagnostics") or {}
                for k, v in diag.items():
                    if finite_number(v) is not None:
                        out.setdefault(k, {}).setdefault(x, []).append(float(v))
        return out


def curves_of(m: Measurements, f: Formulation, exp: Experiment) -> list[Curve]:
    """The curves of ``exp`` in ``m`` (those with at least two values measured), in the order of
    the experiment's ``curves`` and then by group ("default" first)."""
    out: list[Curve] = []
    for name in exp.curves:
        default = float(f.reading(name).default)
        groups: dict[str, dict[float, list[dict[str, Any]]]] = {}
        away: dict[str, set[str]] = {}
        for r in m.rows:
            if r["instance_name"] != exp.id or r["status"] != "feasible":
                continue
            stored = r["params"].get("readings") or {}
            if set(stored) - set(exp.readings) or finite_number(stored.get(name, default)) is None:
                continue
            others = {k: stored.get(k, f.reading(k).default) for k in exp.readings if k != name}
            if any(not same_value(v, f.reading(k).default) and not is_own_reading(f, exp, k) for k, v in others.items()):
                continue
            group = format_params({k: v for k, v in others.items() if not same_value(v, f.reading(k).default)})
            x = float(stored.get(name, default))
            groups.setdefault(group, {}).setdefault(x, []).append(r)
            if x != default:
                away.setdefault(group, set()).add(reading_label(f, exp, stored))
        for group in sorted(groups, key=lambda g: (g != "-", g)):
            pts = groups[group]
            measured = any(finite_number((r.get("metrics") or {}).get(c.id)) is not None for rows in pts.values() for r in rows
                           for c in exp.claims)
            if len(pts) >= 2 and measured:
                out.append(Curve(name, "default" if group == "-" else group, default, dict(sorted(pts.items())),
                                 away.get(group, set())))
    return out


def reproducing_band(name: str, points: Sequence[tuple[float, bool | None]], *, verb: str = "reproduces") -> str:
    """The band of ``name`` where a claim reproduces, from ``(x, reproduces)`` per measured value
    (``None``: no verdict there): "reproduces for load in [0.4, 0.6]" (runs of consecutive measured
    values that reproduce, joined by "and"; a run of one value is written ``{x}``), "nowhere in
    [0.3, 1]" or, when every value reproduces, "... (every value measured)". The band's ends are
    measured values: between two measured values the claim is not known. ``""`` when no value has
    a verdict.

    Examples
    --------
    >>> reproducing_band("load", [(0.3, False), (0.4, True), (0.5, True), (0.6, False), (0.7, True)])
    'reproduces for load in [0.4, 0.5] and {0.7} (measured over [0.3, 0.7])'
    >>> reproducing_band("load", [(0.3, False), (1.0, False)])
    'nowhere in [0.3, 1]'
    """
    pts = sorted(points)
    if not pts or all(ok is None for _, ok in pts):
        return ""
    lo, hi = pts[0][0], pts[-1][0]
    runs: list[list[float]] = []
    prev = False
    for x, ok in pts:
        if ok:
            if prev:
                runs[-1].append(x)
            else:
                runs.append([x])
        prev = bool(ok)
    if not runs:
        return f"nowhere in [{lo:g}, {hi:g}]"
    parts = [f"[{r[0]:g}, {r[-1]:g}]" if len(r) > 1 else f"{{{r[0]:g}}}" for r in runs]
    if len(runs) == 1 and runs[0][0] == lo and runs[0][-1] == hi:
        return f"{verb} for {name} in {parts[0]} (every value measured)"
    return f"{verb} for {name} in {' and '.join(parts)} (measured over [{lo:g}, {hi:g}])"


def curve_sentence(cv: Curve, c: Claim, scale: str | None) -> str:
    """The band of claim ``c`` along curve ``cv`` as the page and index say it: "over `load`
    (swept): reproduces for load in [a, b]" (or "nowhere in [lo, hi]"); at a scale where ``c``
    has no verdict, where the mean lies within the tolerance at that scale, marked as such."""
    vals = cv.values(c.id)
    where = f"over `{cv.name}`" + (f" ({cv.group})" if cv.group != "default" else "")
    judged = [(x, verdict(c, v, scale).reproduces) for x, v in vals.items()]
    band = reproducing_band(cv.name, judged)
    if band:
        return f"{where}: {band}"
    loose = reproducing_band(cv.name, [(x, verdict(c, v, None).reproduces) for x, v in vals.items()],
                             verb="within the tolerance")
    if not loose:
        return f"{where}: not measured"
    why = verdict(c, next(iter(vals.values())), scale).text
    if loose.startswith("nowhere"):
        return f"{where}: {why}; at this scale the mean is within the tolerance {loose}"
    return f"{where}: {why}; at this scale the mean is {loose}"
