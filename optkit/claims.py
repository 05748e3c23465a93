"""Claims: the quantitative statements of a paper that ``optkit reproduce`` measures.

A :class:`Claim` is one number a paper states (a table cell, a figure's headline number, a
theorem's bound) with the statistic the paper computes it by and the tolerance within which our
measurement counts as reproducing it. Claims that come out of one computation are grouped in an
:class:`Experiment`, which names the function that measures them and the readings
(:mod:`optkit.readings`) that matter to them. A formulation hands its experiments to the engine
through :attr:`optkit.formulation.Formulation.experiments`.

The measuring function
----------------------
``measure(*, readings: dict[str, Any], seed: int, scale: str) -> dict[str, Any]`` (named by
``"module:function"`` so a worker process can import it) returns ``{claim id: value}`` for every
claim of its experiment (``None`` when a value cannot be measured under that reading), and may add
``"_details": {...}`` (JSON-ready: per-case numbers, utilisation, anything a reader needs to
judge the value) and ``"_notes": [str, ...]``. ``scale`` is ``"ci"`` (each experiment well under
a minute on 2 cores) or ``"paper"`` (the paper's own setting). ``seed`` selects the random
instances (or trace windows); the same seed gives the same value. Every objective value in it
comes from the formulation's ``evaluate``.

Verdicts (:func:`verdict`)
--------------------------
Per reading combination, the mean over seeds is compared with the paper's value:

* ``approx``: reproduces when ``|mean - paper| <= tolerance``;
* ``at_most`` (the paper bounds the value from above, e.g. a guarantee): holds when every seed's
  value is ``<= paper + tolerance``;
* ``at_least``: holds when every seed's value is ``>= paper - tolerance``.

A claim "does not reproduce" only when no plausible reading reproduces it
(:func:`overall_verdict`); otherwise the page names the readings that do and those that do not.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

__all__ = ["Claim", "Experiment", "COMPARISONS", "SCALES", "verdict", "overall_verdict", "Verdict"]

COMPARISONS = ("approx", "at_most", "at_least")
SCALES = ("ci", "paper")


@dataclass(frozen=True)
class Claim:
    """One quantitative statement of a paper.

    Attributes
    ----------
    id: unique across all problems, lowercase with dashes: ``a-srpt-table2-vgg19-gap``.
    where: the place in the paper: ``"Table II, VGG19, Heavy-Edge PITT over optimal"``.
    paper_value: the paper's number, in ``unit``.
    unit: ``"%"``, ``"s"``, ``"ms"``, ``"slots"``, ``"ratio"``, ``"count"``...
    statistic: how the paper computes it, in words
        (``"ratio of the mean PITTs over 20 cases, minus 1"``); the measuring function must
        compute the same.
    tolerance: absolute, in ``unit``: how far the mean over seeds may lie from ``paper_value``
        and still count as reproduced (for ``at_most``/``at_least``: the slack of the bound).
    comparison: ``approx``, ``at_most`` or ``at_least`` (see the module docstring).
    note: what a reader should know (the paper's value read off a figure, say).
    """

    id: str
    where: str
    paper_value: float
    unit: str
    statistic: str
    tolerance: float
    comparison: str = "approx"
    note: str = ""
    scales: tuple[str, ...] = SCALES
    """The scales at which our value is comparable with the paper's (an absolute count over a
    whole trace is not comparable on a ci-scale window); at other scales the value is reported
    without a verdict."""

    def __post_init__(self) -> None:
        if not self.scales or any(x not in SCALES for x in self.scales):
            raise ValueError(f"claim {self.id}: scales must be a non-empty subset of {SCALES}")
        if self.comparison not in COMPARISONS:
            raise ValueError(f"claim {self.id}: comparison must be one of {COMPARISONS}, got {self.comparison!r}")
        if not (self.tolerance >= 0 and math.isfinite(self.tolerance)):
            raise ValueError(f"claim {self.id}: tolerance must be a finite number >= 0")


@dataclass(frozen=True)
class Experiment:
    """Claims measured by one function, under the same readings and seeds.

    Attributes
    ----------
    id: unique across all problems (``a-srpt-table2``); ``optkit reproduce ID`` runs it.
    problem: the formulation whose readings it sweeps.
    paper: short name of the paper (``a-srpt``, ``sjf-bco``, ``titan``): one results page each.
    summary: one line.
    measure: ``"module:function"`` (see the module docstring).
    claims: the claims it measures.
    readings: names of the problem's readings that matter to these claims; ``--readings all``
        sweeps each over its declared options (or ``sweep`` below).
    sweep: per reading, the values ``--readings all`` sweeps when not every declared option is
        plausible for this experiment (say why in ``notes``).
    seeded: False when the measurement is deterministic (it then runs once, with seed 0).
    time_limit: seconds one measurement may take, per scale (it is killed after that).
    notes: what the page says about this experiment (setup, deviations from the paper).
    series: ``"module:function"`` for an experiment that compares algorithms: it measures ONE
        more algorithm of the problem (by its registered name: a plug-in, :mod:`optkit.registry`)
        in the experiment's setting, ``series(algorithm, *, readings, seed, scale) -> {name:
        value, ..., "_details": ...}`` (every objective from ``evaluate``), beside the paper's
        algorithms. ``optkit reproduce`` runs it for every plug-in algorithm of the problem and
        shows the values as an extra series on the page, without a verdict (the paper made no
        claim about them). Empty: the experiment compares no algorithms (or not yet).
    """

    id: str
    problem: str
    paper: str
    summary: str
    measure: str
    claims: tuple[Claim, ...]
    readings: tuple[str, ...] = ()
    sweep: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    seeded: bool = True
    time_limit: Mapping[str, float] = field(default_factory=lambda: {"ci": 60.0, "paper": 3600.0})
    notes: str = ""
    series: str = ""

    def __post_init__(self) -> None:
        if self.series and ":" not in self.series:
            raise ValueError(f"experiment {self.id}: series must be 'module:function', got {self.series!r}")
        if ":" not in self.measure:
            raise ValueError(f"experiment {self.id}: measure must be 'module:function', got {self.measure!r}")
        if not self.claims:
            raise ValueError(f"experiment {self.id} has no claims")
        for s in self.sweep:
            if s not in self.readings:
                raise ValueError(f"experiment {self.id}: sweep names {s!r}, not one of its readings")

    def claim(self, claim_id: str) -> Claim:
        for c in self.claims:
            if c.id == claim_id:
                return c
        raise KeyError(claim_id)


@dataclass(frozen=True)
class Verdict:
    """What the measurements of one claim under one reading combination say."""

    reproduces: bool | None  # None: no value measured
    mean: float | None
    low: float | None
    high: float | None
    seeds: int
    text: str


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def verdict(claim: Claim, values: Sequence[float | None], scale: str | None = None) -> Verdict:
    """The verdict of ``claim`` on its measured ``values`` (one per seed; ``None`` = not measured)
    at ``scale`` (no verdict, ``reproduces=None``, at a scale the claim is not comparable at)."""
    got = [float(v) for v in values if v is not None and isinstance(v, (int, float)) and math.isfinite(v)]
    if not got:
        return Verdict(None, None, None, None, 0, "not measured")
    mean = statistics.fmean(got)
    low, high = min(got), max(got)
    unit = "" if claim.unit in ("", "ratio", "count") else f" {claim.unit}"
    if scale is not None and scale not in claim.scales:
        return Verdict(None, mean, low, high, len(got),
                       f"no verdict at scale {scale} (comparable at {', '.join(claim.scales)} only)")
    if claim.comparison == "approx":
        diff = mean - claim.paper_value
        ok = abs(diff) <= claim.tolerance
        text = ("reproduces" if ok else "differs by") + f" {diff:+.4g}{unit}" + (
            f" (within ±{_fmt(claim.tolerance)})" if ok else f" (tolerance ±{_fmt(claim.tolerance)})")
    elif claim.comparison == "at_most":
        ok = high <= claim.paper_value + claim.tolerance
        text = (f"holds: max {_fmt(high)}{unit} <= {_fmt(claim.paper_value)}" if ok
                else f"violated: max {_fmt(high)}{unit} > {_fmt(claim.paper_value)}")
    else:
        ok = low >= claim.paper_value - claim.tolerance
        text = (f"holds: min {_fmt(low)}{unit} >= {_fmt(claim.paper_value)}" if ok
                else f"violated: min {_fmt(low)}{unit} < {_fmt(claim.paper_value)}")
    return Verdict(ok, mean, low, high, len(got), text)


def overall_verdict(per_reading: Mapping[str, Verdict]) -> str:
    """One sentence over every reading combination (keys are ``format_params`` strings).

    "reproduces under every reading", "does not reproduce under any of the N readings measured",
    or which readings reproduce and which do not.
    """
    measured = {k: v for k, v in per_reading.items() if v.reproduces is not None}
    if not measured:
        texts = {v.text for v in per_reading.values()} - {"not measured"}
        return texts.pop() if len(texts) == 1 else "not measured"
    yes = [k for k, v in measured.items() if v.reproduces]
    no = [k for k, v in measured.items() if not v.reproduces]
    if not no:
        return "reproduces under every reading measured" if len(yes) > 1 else f"reproduces ({yes[0]})"
    if not yes:
        n = len(no)
        return ("does not reproduce under any of the " + str(n) + " readings measured") if n > 1 else \
            f"does not reproduce ({no[0]}; the only reading measured)"
    return f"reproduces under {'; '.join(yes)} — not under {'; '.join(no)}"
