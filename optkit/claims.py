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

The tolerance rule (:func:`rule_tolerance`), one for every claim
----------------------------------------------------------------
A claim's tolerance is not chosen per claim; it follows from what the paper prints:

* ``approx`` (the paper states a value): ``max(10% of |paper value|, precision, resolution)``.
  ``precision`` is half a unit of the last digit the paper prints for the number (``"6%"``:
  0.5 points; ``"47.9%"``: 0.05; ``"88.11 ms"``: 0.005 ms; for a number the paper derives from
  printed ones, what their last digits allow, said in the claim's note); ``resolution`` is the
  grain of the measured quantity (an integer count: 0.5), zero for a continuous one. The 10% is
  relative, so a 4% claim gets 0.5 points (its printing), a 91% one 9.1 points, 174 machines 17.4.
* ``at_most`` / ``at_least`` (the paper bounds the value: a guarantee, "outperforms", "decreases"):
  no slack beyond the measured quantity's ``resolution`` (Lemma 2's integer theta: 1 slot); every
  seed must satisfy the bound.

A range "a% to b%" is registered the same way in every paper (:func:`range_claims`): two
``approx`` claims, the low end and the high end, each under the rule above.

Claims that cannot be compared
------------------------------
A claim measured by the paper on other hardware (its testbed, its laptop's timings), with another
solver (Table II's Gurobi ILP) or on a trace we do not have (Titan's trace 2, A-SRPT's PAI jobs) is
registered all the same, with ``incomparable`` giving the reason (``"testbed: ..."``,
``"hardware: ..."``, ``"solver: ..."``, ``"private trace: ..."``, ``"unavailable trace: ..."``): its verdict is ``not
comparable: <reason>``, and the page still shows the paper's value and ours where we measure one.

A quantity the paper discusses without stating a number (the A-SRPT paper's Sec. VI extends its
model to tensor-parallel and MoE jobs and runs no experiment on them) is registered the same way,
``incomparable="no paper value: ..."`` with ``paper_value=None``: the page reports our value
with the reason and no verdict, and invents no paper value to compare it with.

Verdicts (:func:`verdict`)
--------------------------
Per reading combination, the mean over seeds is compared with the paper's value:

* ``approx``: reproduces when ``|mean - paper| <= tolerance``;
* ``at_most`` (the paper bounds the value from above, e.g. a guarantee): holds when every seed's
  value is ``<= paper + tolerance``;
* ``at_least``: holds when every seed's value is ``>= paper - tolerance``.

A claim "does not reproduce" only when no reading measured reproduces it
(:func:`overall_verdict`), and the sentence lists the readings it covered; otherwise the page
names the readings that do and those that do not.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

__all__ = ["Claim", "Experiment", "COMPARISONS", "SCALES", "REL_TOLERANCE", "INCOMPARABLE_KINDS", "NO_PAPER_VALUE",
           "rule_tolerance",
           "range_claims", "verdict", "overall_verdict", "Verdict"]

COMPARISONS = ("approx", "at_most", "at_least")
SCALES = ("ci", "paper")
REL_TOLERANCE = 0.10
"""The relative part of the tolerance rule (module docstring)."""
INCOMPARABLE_KINDS = ("testbed", "hardware", "solver", "private trace", "unavailable trace", "no paper value")
"""What :attr:`Claim.incomparable` may start with: why the paper's number cannot be compared
(``no paper value``: the paper states none; then, and only then, :attr:`Claim.paper_value` is
``None``)."""
NO_PAPER_VALUE = "no paper value"
"""The kind of :data:`INCOMPARABLE_KINDS` of a quantity the paper states no number for."""


def rule_tolerance(paper_value: float, comparison: str = "approx", *, precision: float = 0.0,
                   resolution: float = 0.0) -> float:
    """The tolerance of a claim under the one rule of this module (module docstring).

    Examples
    --------
    >>> rule_tolerance(4.0, precision=0.5), rule_tolerance(91.0, precision=0.5)
    (0.5, 9.1)
    >>> rule_tolerance(0.0, "at_most", resolution=1.0)
    1.0
    """
    if comparison == "approx":
        return max(REL_TOLERANCE * abs(float(paper_value)), float(precision), float(resolution))
    return float(resolution)


@dataclass(frozen=True)
class Claim:
    """One quantitative statement of a paper.

    The tolerance is derived, never given: the property :attr:`tolerance`.

    Attributes
    ----------
    id
        Unique across all problems, lowercase with dashes: ``a-srpt-table2-vgg19-gap``.
    where
        The place in the paper: ``"Table II, VGG19, Heavy-Edge PITT over optimal"``.
    paper_value
        The paper's number, in ``unit``; ``None`` when the paper states none (``incomparable``
        then starts with ``"no paper value:"``, module docstring).
    unit
        ``"%"``, ``"s"``, ``"ms"``, ``"slots"``, ``"ratio"``, ``"count"``...
    statistic
        How the paper computes it, in words
        (``"ratio of the mean PITTs over 20 cases, minus 1"``); the measuring function must
        compute the same.
    comparison
        ``approx``, ``at_most`` or ``at_least`` (see the module docstring).
    note
        What a reader should know (the paper's value read off a figure, say).
    scales
        The scales at which our value is comparable with the paper's (an absolute count over
        a whole trace is not comparable on a ci-scale window); at other scales the value is
        reported without a verdict.
    precision
        Half a unit of the last digit the paper prints for the number, in ``unit``
        (keyword only; the tolerance rule).
    resolution
        The grain of the measured quantity, in ``unit`` (keyword only; 0: continuous).
    incomparable
        Why the paper's number cannot be compared with ours, starting with one of
        :data:`INCOMPARABLE_KINDS` and a colon (keyword only; empty: comparable).
    absolute
        Ids of the claims (same experiment) that hold the absolute values this claim is a
        ratio of; the page says beside a verdict when the ratio reproduces and they do not.
    """

    id: str
    where: str
    paper_value: float | None
    unit: str
    statistic: str
    comparison: str = "approx"
    note: str = ""
    scales: tuple[str, ...] = SCALES
    precision: float = field(default=0.0, kw_only=True)
    resolution: float = field(default=0.0, kw_only=True)
    incomparable: str = field(default="", kw_only=True)
    absolute: tuple[str, ...] = field(default=(), kw_only=True)

    def __post_init__(self) -> None:
        if not self.scales or any(x not in SCALES for x in self.scales):
            raise ValueError(f"claim {self.id}: scales must be a non-empty subset of {SCALES}")
        if self.comparison not in COMPARISONS:
            raise ValueError(f"claim {self.id}: comparison must be one of {COMPARISONS}, got {self.comparison!r}")
        for name in ("precision", "resolution"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (v >= 0 and math.isfinite(v)):
                raise ValueError(f"claim {self.id}: {name} must be a finite number >= 0")
        if self.incomparable and self.incomparable.split(":")[0] not in INCOMPARABLE_KINDS:
            raise ValueError(f"claim {self.id}: incomparable must start with one of {INCOMPARABLE_KINDS} and a "
                             f"colon, got {self.incomparable!r}")
        if (self.paper_value is None) != self.states_no_value:
            raise ValueError(f"claim {self.id}: paper_value is None exactly when incomparable starts with "
                             f"'{NO_PAPER_VALUE}:' (the paper states no number), got paper_value "
                             f"{self.paper_value!r} and incomparable {self.incomparable!r}")

    @property
    def states_no_value(self) -> bool:
        """Whether the paper states no number for this quantity (``incomparable`` of kind
        :data:`NO_PAPER_VALUE`; :attr:`paper_value` is then ``None``)."""
        return self.incomparable.split(":")[0] == NO_PAPER_VALUE

    @property
    def tolerance(self) -> float:
        """The tolerance under the rule (:func:`rule_tolerance`); with no paper value, the rule on 0
        (nothing is compared: the verdict is "not comparable")."""
        return rule_tolerance(0.0 if self.paper_value is None else self.paper_value, self.comparison,
                              precision=self.precision, resolution=self.resolution)


def range_claims(low_id: str, high_id: str, where: str, low: float, high: float, unit: str, low_statistic: str,
                 high_statistic: str, *, precision: float, **kw: Any) -> tuple[Claim, Claim]:
    """A range the paper states ("31% to 91%"): two ``approx`` claims, its low and its high end,
    each under the tolerance rule; the same in every paper (module docstring)."""
    text = f"range '{low:g}{unit if unit == '%' else ''} to {high:g}{unit if unit == '%' else ''}'"
    return (Claim(low_id, f"{where} (low end of the {text})", low, unit, low_statistic, precision=precision, **kw),
            Claim(high_id, f"{where} (high end of the {text})", high, unit, high_statistic, precision=precision, **kw))


@dataclass(frozen=True)
class Experiment:
    """Claims measured by one function, under the same readings and seeds.

    Attributes
    ----------
    id
        Unique across all problems (``a-srpt-table2``); ``optkit reproduce ID`` runs it.
    problem
        The formulation whose readings it sweeps.
    paper
        Short name of the paper (``a-srpt``, ``sjf-bco``, ``titan``): one results page each.
    summary
        One line.
    measure
        ``"module:function"`` (see the module docstring).
    claims
        The claims it measures.
    readings
        Names of the problem's readings that matter to these claims; ``--readings all``
        sweeps each over its declared options (or ``sweep`` below).
    sweep
        Per reading, the values ``--readings all`` sweeps when not every declared option is
        plausible for this experiment (say why in ``notes``).
    seeded
        False when the measurement is deterministic (it then runs once, with seed 0).
    time_limit
        Seconds one measurement may take, per scale (it is killed after that).
    notes
        What the page says about this experiment (setup, deviations from the paper).
    series
        ``"module:function"`` for an experiment that compares algorithms: it measures ONE
        more algorithm of the problem (by its registered name: a plug-in, :mod:`optkit.registry`)
        in the experiment's setting, ``series(algorithm, *, readings, seed, scale) -> {name:
        value, ..., "_details": ...}`` (every objective from ``evaluate``), beside the paper's
        algorithms. ``optkit reproduce`` runs it for every plug-in algorithm of the problem and
        shows the values as an extra series on the page, without a verdict (the paper made no
        claim about them). Empty: the experiment compares no algorithms (or not yet).
    curves
        Readings measured as curves, ``{reading: {scale: values}}`` (keyword only): a
        parameter of the experiment that the paper does not state (rule clause ``swept`` of
        :mod:`optkit.readings`, e.g. an offered load) is measured over its plausible range, each
        value with the other readings at their defaults, and the page draws every claim against
        it with the paper's value as a line and names the band of values where the claim
        reproduces (:mod:`optkit.reproduce`). At a scale listed, these values replace the
        reading's ``sweep``; at another scale the reading is swept as usual. The values must be
        numbers. The measuring function may return ``"_diagnostics": {name: number}`` (what a
        reader needs beside each point, e.g. the GPU-time inflation), which the curve table shows.
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
    curves: Mapping[str, Mapping[str, tuple[Any, ...]]] = field(default_factory=dict, kw_only=True)

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
        for name, per_scale in self.curves.items():
            if name not in self.readings:
                raise ValueError(f"experiment {self.id}: curves names {name!r}, not one of its readings")
            if not per_scale or any(sc not in SCALES for sc in per_scale):
                raise ValueError(f"experiment {self.id}: the curve of {name!r} must give values per scale, "
                                 f"scales among {SCALES}")
            for sc, values in per_scale.items():
                if len(values) < 2 or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
                    raise ValueError(f"experiment {self.id}: the curve of {name!r} at scale {sc} needs at least two "
                                     f"numbers, got {values!r}")

    def curve_values(self, name: str, scale: str | None) -> tuple[Any, ...] | None:
        """The values the curve of reading ``name`` is measured at, at ``scale`` (``None``: not a curve
        there)."""
        return self.curves.get(name, {}).get(scale) if scale is not None else None

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
        return Verdict(None, None, None, None, 0,
                       f"not comparable: {claim.incomparable}" if claim.incomparable else "not measured")
    mean = statistics.fmean(got)
    low, high = min(got), max(got)
    unit = "" if claim.unit in ("", "ratio", "count") else f" {claim.unit}"
    if claim.incomparable:
        return Verdict(None, mean, low, high, len(got), f"not comparable: {claim.incomparable}")
    if scale is not None and scale not in claim.scales:
        return Verdict(None, mean, low, high, len(got),
                       f"no verdict at scale {scale} (comparable at {', '.join(claim.scales)} only)")
    paper = claim.paper_value
    assert paper is not None  # a claim without a paper value is incomparable (Claim.__post_init__)
    if claim.comparison == "approx":
        diff = mean - paper
        ok = abs(diff) <= claim.tolerance
        text = ("reproduces" if ok else "differs by") + f" {diff:+.4g}{unit}" + (
            f" (within ±{_fmt(claim.tolerance)})" if ok else f" (tolerance ±{_fmt(claim.tolerance)})")
    elif claim.comparison == "at_most":
        ok = high <= paper + claim.tolerance
        text = (f"holds: max {_fmt(high)}{unit} <= {_fmt(paper)}" if ok
                else f"violated: max {_fmt(high)}{unit} > {_fmt(paper)}")
    else:
        ok = low >= paper - claim.tolerance
        text = (f"holds: min {_fmt(low)}{unit} >= {_fmt(paper)}" if ok
                else f"violated: min {_fmt(low)}{unit} < {_fmt(paper)}")
    return Verdict(ok, mean, low, high, len(got), text)


def overall_verdict(per_reading: Mapping[str, Verdict], marks: Mapping[str, str] | None = None,
                    claim: Claim | None = None) -> str:
    """One sentence over every reading combination (keys are ``format_params`` strings).

    "reproduces under every reading measured", "does not reproduce under any of the N readings
    measured (LIST)", or which readings reproduce and which do not. ``marks`` appends a mark to a
    reading's name (a post-hoc reading, say); ``claim``: an incomparable claim's sentence is
    "not comparable: <reason>" whatever was measured.
    """
    if claim is not None and claim.incomparable:
        return f"not comparable: {claim.incomparable}"
    marks = marks or {}

    def name(k: str) -> str:
        return k + marks.get(k, "")

    measured = {k: v for k, v in per_reading.items() if v.reproduces is not None}
    if not measured:
        texts = {v.text for v in per_reading.values()} - {"not measured"}
        return texts.pop() if len(texts) == 1 else "not measured"
    yes = [k for k, v in measured.items() if v.reproduces]
    no = [k for k, v in measured.items() if not v.reproduces]
    if not no:
        return (f"reproduces under every reading measured ({'; '.join(map(name, yes))})" if len(yes) > 1
                else f"reproduces ({name(yes[0])}; the only reading measured)")
    if not yes:
        n = len(no)
        return (f"does not reproduce under any of the {n} readings measured ({'; '.join(map(name, no))})" if n > 1
                else f"does not reproduce ({name(no[0])}; the only reading measured)")
    return f"reproduces under {'; '.join(map(name, yes))} — not under {'; '.join(map(name, no))}"
