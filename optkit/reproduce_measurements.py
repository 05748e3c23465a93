"""What ``optkit reproduce`` measures and reads back: the registered experiments, the stored
measurements of a selection of them (:class:`Measurements`), their reading labels, and the small
value helpers every page and text built from them shares.

The lowest layer of the reproduction modules: :mod:`optkit.reproduce_verdicts` judges these
measurements, :mod:`optkit.reproduce_consistent` searches a consistent reading over them,
:mod:`optkit.reproduce_pages` and :mod:`optkit.reproduce_text` write them out and
:mod:`optkit.reproduce` runs them; none of those is imported here.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from optkit import registry
from optkit.claims import Experiment
from optkit.errors import InputError
from optkit.formulation import Formulation
from optkit.readings import format_params, show_value

__all__ = [
    "experiments", "Measurements", "reading_label", "claim_values", "is_own_reading", "same_value",
    "finite_number", "format_value", "slug",
]


def experiments() -> dict[str, tuple[Formulation, Experiment]]:
    """Every registered experiment by id, with its formulation."""
    out: dict[str, tuple[Formulation, Experiment]] = {}
    for f in registry.all_formulations().values():
        for exp_id, exp in dict(f.experiments).items():
            if exp_id in out:
                raise InputError("experiments", f"{exp_id!r} is declared by both {out[exp_id][0].name} and {f.name}")
            _check_experiment(f, exp)
            out[exp_id] = (f, exp)
    return out


def _check_experiment(f: Formulation, exp: Experiment) -> None:
    names = {r.name for r in f.readings}
    for r in exp.readings:
        if r not in names:
            raise InputError(f"experiment {exp.id}", f"names reading {r!r}, which {f.name} does not declare")


@dataclass
class Measurements:
    """The stored measurements of the selected experiments (rows of the store)."""

    selection: list[tuple[Formulation, Experiment, list[str]]]
    rows: list[dict[str, Any]]
    scale: str
    seeds: list[int]
    readings: Any = "each"
    elapsed_s: float = 0.0
    failures: list[str] = field(default_factory=list)
    stored_defaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    """For measurements read back from CSVs: per experiment, the setting its pages called
    "default" when they were generated (:func:`~optkit.reproduce_text.measurements_from_csv`)."""
    combination_rows: list[dict[str, Any]] | None = None
    """The rows the consistent-reading search reads (:func:`~optkit.reproduce_consistent.consistent_reading`): every
    measurement the store holds of the selected experiments at this scale and these seeds, under
    any reading setting, so that a page whose tables show ``--readings each`` still searches the
    combinations an earlier ``--readings all`` run measured into the same store. ``None``:
    :attr:`rows`."""
    planned: int | None = None
    """The measurements the run planned, when :attr:`rows` holds only part of them (pages written
    with ``--stored-only`` from a run under way or stopped early); ``None``: all were measured."""


def reading_label(f: Formulation, exp: Experiment, readings: Mapping[str, Any] | None) -> str:
    """The readings of a measurement that differ from their defaults (``default`` if none)."""
    changed = {k: v for k, v in (readings or {}).items() if k not in exp.readings or v != f.reading(k).default}
    return format_params(changed) if changed else "default"


def claim_values(rows: Sequence[Mapping[str, Any]], f: Formulation, exp: Experiment) -> dict[str, dict[str, list[tuple[int, Any]]]]:
    """``{reading label: {claim id: [(seed, value)]}}`` for one experiment."""
    out: dict[str, dict[str, list[tuple[int, Any]]]] = {}
    for r in rows:
        if r["instance_name"] != exp.id or r["status"] != "feasible":
            continue
        label = reading_label(f, exp, r["params"].get("readings"))
        for c in exp.claims:
            out.setdefault(label, {}).setdefault(c.id, []).append((r["seed"], (r.get("metrics") or {}).get(c.id)))
    for per in out.values():
        for vals in per.values():
            vals.sort(key=lambda x: x[0])
    return out


def is_own_reading(f: Formulation, exp: Experiment, name: str) -> bool:
    """Whether reading ``name`` is ``exp``'s own in a combination: the experiment's ``sweep``
    leaves out the reading's default (it cannot be measured there, e.g. a prediction measured on
    traces only), so its value is a property of the experiment, not a reading it shares."""
    default = show_value(f.reading(name).default)
    return name in exp.sweep and all(show_value(v) != default for v in exp.sweep[name])


def same_value(a: Any, b: Any) -> bool:
    """Whether two values of a reading are one: numbers by their value (10 and 10.0 are one),
    anything else by ``==``."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return bool(a == b)


def finite_number(v: Any) -> float | None:
    """``v`` as a float when it is a finite number (a bool is not one), else ``None``."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def format_value(v: float | None, unit: str = "") -> str:
    """``v`` as the pages show it: four significant digits, then ``unit`` (``%`` unspaced; no unit
    for ``ratio`` and ``count``); ``-`` for ``None``."""
    if v is None:
        return "-"
    u = "" if unit in ("", "ratio", "count") else (unit if unit == "%" else f" {unit}")
    return f"{v:.4g}{u}"


def slug(text: str) -> str:
    """``text`` as a file name: each run of characters other than letters, digits, ``.``, ``_`` and
    ``-`` becomes one ``-`` (``x`` when nothing is left)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"
