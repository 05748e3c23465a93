"""Readings: the interpretations optkit chooses where a paper is ambiguous, garbled or silent.

A *reading* is a keyword parameter of one or more algorithms (or of a generator, a simulator or a
claim's measurement) with a name, its options, a default, the passage of the paper it reads and
the reason for the default. Each formulation declares its readings once, as data, in a
``readings.py`` beside its ``model.py`` (a tuple of :class:`Reading`), and hands them to the
engine through :attr:`optkit.formulation.Formulation.readings`. The engine then

* lists them (``optkit readings PROBLEM``),
* validates every ``--param`` against them (:func:`check_params`: an unknown key or an option
  outside the declared ones is an :class:`~optkit.errors.InputError` naming the valid ones),
* fills in the default of every reading an algorithm takes before a run, so the stored run key
  says which reading produced each row (:func:`resolve_params`), and
* sweeps them (``--param key=v1,v2`` in ``compare`` and ``simulate``: :func:`expand_sweep`).

A reading never hides as a constant or a sentence in a docstring: the code takes it as a keyword
and the algorithm's docstring names it.

Non-reading keyword parameters (solver tuning such as ``workers`` or ``symmetry``) are accepted
too: every keyword-only parameter of the algorithm's function, plus the names an algorithm lists
in :attr:`optkit.formulation.Algorithm.params` (for a function that takes ``**params``).

The rule for a reading's default
--------------------------------
A reading's default is chosen by evidence, never by the result it gives. The clauses are ranked:
a higher one, where it speaks, decides.

1. ``stated``: a value the paper states *for the same setting*. A value stated for the testbed does
   not bind the simulations (and the reverse); where the paper states a value for one setting
   only, the other setting falls to the clauses below, and the stated value stays an option.
2. ``example``: the paper's own worked examples and the stated behaviour of its algorithm (a worked
   placement such as the Titan paper's Fig. 1(c); "communication-heavy jobs are delayed until
   sufficient server resources are available"; a theorem's premise). No default may contradict
   them: a reading under which the worked example comes out otherwise, or under which the stated
   behaviour never happens, cannot be the default.
3. ``literal``: the most literal reading of the text consistent with 1-2 (the pseudo-code over a
   paraphrase; the words of the passage over what would make sense of a result).
   ``repaired``: a pseudo-code line that is evidently garbled (it breaks the very constraint the
   algorithm exists to keep) gets the minimal repair as the default, and the literal line stays
   a declared option (:attr:`Reading.literal` names it).
4. Where the paper is silent:

   * ``baseline-favourable``: for a choice inside a *baseline* (a competitor the paper compares
     against), the option under which that baseline does best, so that a claim of the paper's
     algorithm beating it is tested against the strongest baseline the text allows;
   * ``held-out``: for a free parameter of the paper's *own* algorithm, the value a recorded
     protocol (:attr:`Reading.procedure`: the command, the candidate values, the criterion) selects
     on *held-out* workloads, whose seeds and workload draws are disjoint from every reported
     measurement;
   * ``swept``: for a parameter of the *experiment* the paper does not state (an operating point
     such as the offered load), the claim is measured over the parameter's plausible range and
     reported as a curve with the band where it holds; the default only names the point that
     single-point tables use, and the reason says why that point.

A reading is never chosen, and an option never added, *because* it reproduces a claim. Each
:class:`Reading` names the clause its default follows (:attr:`Reading.rule`, validated against
:data:`RULES`), says in :attr:`Reading.post_hoc` whether it (its default or one of its options) was
chosen or added after the results it matters to had been seen, and in :attr:`Reading.history`
when it and each of its options arrived relative to those first results (the git history tells).
``post_hoc`` is a fact of that history, not of the clause: a default that follows a higher clause
but arrived after the results had been seen is still post hoc, and its reason must show the
clause; an option that only keeps optkit's earlier behaviour arrived with that behaviour. A default that moved records its old value in :attr:`Reading.moved_from`; the README's
table of moved defaults is generated from those (:func:`moved_defaults_markdown`). The result
pages (:mod:`optkit.reproduce`) mark every verdict that rests on a post-hoc reading set away from
its default.
"""

from __future__ import annotations

import inspect
import itertools
import json
import math
from dataclasses import dataclass, field
from difflib import get_close_matches
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from optkit.errors import InputError

if TYPE_CHECKING:
    from pathlib import Path

    from optkit.formulation import Algorithm, Formulation

__all__ = [
    "Reading", "ALL", "NOT_MOVED", "RULES", "moved_defaults_markdown", "update_moved_block", "readings_for", "accepted_params",
    "check_params", "check_reading", "resolve_params",
    "parse_param_values", "expand_sweep", "format_params", "show_value", "reading_table",
]

ALL = "*"
"""In :attr:`Reading.algorithms`: every algorithm of the problem takes this reading."""


class _NotMoved:
    def __repr__(self) -> str:
        return "NOT_MOVED"


NOT_MOVED: Any = _NotMoved()
""":attr:`Reading.moved_from` of a reading whose default did not move."""

_ENGINE_KEYWORDS = ("objective", "time_limit", "seed")

RULES = {
    "stated": "1. the paper's stated value for the same setting",
    "example": "2. the paper's own worked examples and stated behaviour of its algorithm",
    "literal": "3. the most literal reading consistent with the paper's values, examples and stated behaviour",
    "repaired": "3. the minimal repair of an evidently garbled pseudo-code line (the literal line kept as an option)",
    "baseline-favourable": "4. paper silent, a baseline's choice: the option most favourable to the baseline",
    "held-out": "4. paper silent, a free parameter of the paper's own algorithm: tuned by a recorded protocol on "
                "held-out workloads",
    "swept": "4. paper silent, a parameter of the experiment: measured over its plausible range and reported as a "
             "curve",
}
"""The clauses of the rule for a reading's default (module docstring), by the name
:attr:`Reading.rule` takes."""


@dataclass(frozen=True)
class Reading:
    """One declared interpretation of a paper passage.

    Attributes
    ----------
    name
        The keyword parameter (``tie_break``); unique within a problem.
    summary
        One line: what the choice is about.
    options
        The plausible values. For a closed reading (``open=False``) these are the only
        values accepted; for an open (numeric) reading they are the values ``--readings all``
        sweeps, and any number within ``[minimum, maximum]`` is accepted.
    default
        The value used when none is given (must be accepted).
    passage
        The paper and the place it reads: ``"Titan paper, Sec. IV-B, Algorithm 2 line 4"``.
    reason
        Why the default: the words or numbers that support it.
    algorithms
        Registered algorithm names that take it (``("*",)`` for all of them). Readings
        taken only by a generator, a simulator or a claim list no algorithm (``()``).
    scope
        Where else it applies, free text (``"generator"``, ``"claim a-srpt-table2"``).
    open
        See ``options``.
    minimum
        The lower end of the accepted range of an open reading.
    maximum
        The upper end of that range.
    option_notes
        One phrase per option, shown by ``optkit readings``.
    rule
        The clause of the rule (module docstring) the default follows: a key of :data:`RULES`.
        Keyword only and required.
    post_hoc
        True when its default was chosen, or one of its options added, after the results it
        matters to had been seen (module docstring). Keyword only and required.
    procedure
        For ``rule="held-out"``, how the default was chosen, reproducibly: the command or
        function, the candidate values, the criterion and the held-out workloads (seeds and draws
        disjoint from every reported measurement); empty otherwise.
    literal
        For ``rule="repaired"``, the option that runs the garbled line as written (it must
        be one of the options and differ from the default); ``None`` otherwise.
    history
        When the reading and each of its options arrived, relative to the first results it
        matters to (from the git history): the evidence behind :attr:`post_hoc`.
    moved_from
        The previous default, when the default moved under the current rule (the
        README's table of moved defaults lists these); :data:`NOT_MOVED` otherwise.
    """

    name: str
    summary: str
    options: tuple[Any, ...]
    default: Any
    passage: str
    reason: str
    algorithms: tuple[str, ...] = ()
    scope: str = ""
    open: bool = False
    minimum: float | None = None
    maximum: float | None = None
    option_notes: Mapping[str, str] = field(default_factory=dict)
    rule: str = field(kw_only=True)
    post_hoc: bool = field(kw_only=True)
    procedure: str = field(default="", kw_only=True)
    literal: Any = field(default=None, kw_only=True)
    history: str = field(default="", kw_only=True)
    moved_from: Any = field(default=NOT_MOVED, kw_only=True)

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"reading {self.name!r}: rule must be one of {', '.join(RULES)}, got {self.rule!r}")
        if not isinstance(self.post_hoc, bool):
            raise ValueError(f"reading {self.name!r}: post_hoc must be True or False, got {self.post_hoc!r}")
        if (self.rule == "held-out") != bool(self.procedure):
            raise ValueError(f"reading {self.name!r}: a procedure is required with rule 'held-out' "
                             "and only with it")
        if (self.rule == "repaired") != (self.literal is not None):
            raise ValueError(f"reading {self.name!r}: the literal option is required with rule 'repaired' "
                             "and only with it")
        if self.literal is not None and (self.literal not in self.options or self.literal == self.default):
            raise ValueError(f"reading {self.name!r}: the literal option {self.literal!r} must be one of the "
                             "options and differ from the repaired default")
        if not self.name.isidentifier():
            raise ValueError(f"reading name {self.name!r} must be a Python identifier")
        if not self.options:
            raise ValueError(f"reading {self.name!r} declares no options")
        if not self.passage or not self.reason or not self.summary:
            raise ValueError(f"reading {self.name!r} needs a summary, a passage and a reason")
        self.validate(self.default, where=f"default of reading {self.name}")

    def takes(self, algorithm: str) -> bool:
        """Whether ``algorithm`` takes this reading."""
        return ALL in self.algorithms or algorithm in self.algorithms

    def validate(self, value: Any, *, where: str | None = None) -> Any:
        """``value`` as the reading's canonical value, or an :class:`InputError` naming the
        options. Strings that spell a number are accepted for numeric readings (``"3"``). An open
        reading's canonical number has its default's type: an int where the default is an int
        (``3.0`` -> ``3``), a float where it is a float (``1`` -> ``1.0``), so every spelling of one
        value gives one run key and a stored measurement is found again.

        >>> r = Reading("factor", "a scale", (0.5, 8.0), 1.0, "p", "r", open=True, minimum=0.5, maximum=8.0,
        ...             rule="swept", post_hoc=False)
        >>> r.validate("2"), r.validate(2), r.validate(1.5)
        (2.0, 2.0, 1.5)
        """
        where = where or f"--param {self.name}"
        if self.open:
            number = _as_number(value)
            if number is None:
                raise InputError(where, f"must be a number, got {value!r}")
            if (self.minimum is not None and number < self.minimum) or (self.maximum is not None and number > self.maximum):
                lo = "-inf" if self.minimum is None else f"{self.minimum:g}"
                hi = "inf" if self.maximum is None else f"{self.maximum:g}"
                raise InputError(where, f"must lie in [{lo}, {hi}], got {value!r}")
            if isinstance(self.default, int) and not isinstance(self.default, bool) and float(number).is_integer():
                return int(number)
            if isinstance(self.default, float):
                return float(number)  # "1" and 1.0 are one value: one run key, one stored measurement
            return number
        for option in self.options:
            if _same(option, value):
                return option
        raise InputError(where, f"must be one of {', '.join(map(show_value, self.options))}; got {show_value(value)}")


def _as_number(value: Any) -> float | int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = json.loads(value)
        except json.JSONDecodeError:
            return None
        return _as_number(number)
    return None


def _same(option: Any, value: Any) -> bool:
    if option == value and type(option) is type(value):
        return True
    if isinstance(option, bool) or isinstance(value, bool):
        return str(option).lower() == str(value).lower()
    if isinstance(option, (int, float)):
        number = _as_number(value)
        return number is not None and float(number) == float(option)
    if isinstance(option, (list, tuple)):
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                return False
        return isinstance(value, (list, tuple)) and list(value) == list(option)
    return str(option) == str(value)


def show_value(value: Any) -> str:
    """A reading's value as text: a string as is, a whole float as an integer (``10.0`` -> ``10``, so
    a default declared as a float reads like its options), anything else as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    return json.dumps(value, separators=(",", ":"))


def check_reading(readings: Iterable[Reading], name: str, value: Any, problem: str) -> Any:
    """``value`` of the reading ``name`` (one of ``readings``) in canonical form, or an
    :class:`InputError` naming the keyword ``name`` and ``problem`` with the words ``--param``
    gets (:meth:`Reading.validate`): what a public function calls for a reading given as a
    keyword, so a typed call is refused as the CLI refuses it."""
    for r in readings:
        if r.name == name:
            try:
                return r.validate(value, where=name)
            except InputError as err:
                raise err.with_problem(problem) from None
    raise KeyError(name)


# ----------------------------------------------------------------------------- lookup
def readings_for(formulation: "Formulation", algorithm: str | None = None) -> list[Reading]:
    """The readings of ``formulation`` (those ``algorithm`` takes, when given; an algorithm the
    problem does not have is an :class:`InputError` naming ``algorithm``)."""
    if algorithm is not None:
        _known_algorithm(formulation, algorithm)
    out = list(formulation.readings)
    return out if algorithm is None else [r for r in out if r.takes(algorithm)]


def _known_algorithm(formulation: "Formulation", algorithm: str) -> None:
    """An :class:`InputError` naming ``algorithm`` and the problem when it is not one of the
    problem's algorithms (the message of ``optkit solve --algorithm``)."""
    if algorithm not in formulation.algorithms:
        raise InputError("algorithm", f"is unknown for {formulation.name}: {algorithm!r} (known: "
                                      f"{', '.join(formulation.algorithms)})", problem=formulation.name)


def _function_keywords(algo: "Algorithm") -> dict[str, Any]:
    """Keyword parameters of the algorithm's function with their defaults (``inspect.Parameter.empty``
    when none). Lazy entries are imported here (only the algorithm's own module)."""
    fn = getattr(algo.run, "target", None)
    fn = fn() if callable(fn) else algo.run
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return {}
    return {p.name: p.default for p in sig.parameters.values()
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in _ENGINE_KEYWORDS
            and p.name != "instance"}


def _check_tuning(formulation: "Formulation", algorithm: str, key: str, value: Any, default: Any) -> Any:
    """A tuning keyword's value must have the type of its default (an int where the default is
    an int, a number where it is a float, true/false where it is a bool); ``None`` is accepted
    where the default is ``None``; a keyword without a usable default is passed as given."""
    where = f"--param {key}"
    if default is inspect.Parameter.empty or default is None:
        return value
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        raise InputError(where, f"must be true or false for {formulation.name}/{algorithm}, got {value!r}")
    if isinstance(default, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise InputError(where, f"must be an integer for {formulation.name}/{algorithm} (default {default}), got {value!r}")
    if isinstance(default, float):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
        raise InputError(where, f"must be a finite number for {formulation.name}/{algorithm} (default {default:g}), "
                                f"got {value!r}")
    if isinstance(default, str) and not isinstance(value, str):
        raise InputError(where, f"must be a string for {formulation.name}/{algorithm} (default {default!r}), got {value!r}")
    return value


def _keywords(formulation: "Formulation", algorithm: str) -> tuple[dict[str, Reading | None], dict[str, Any]]:
    """``(accepted, defaults)``: every keyword ``algorithm`` accepts (``{name: Reading}`` for
    readings, ``{name: None}`` for tuning parameters) and the function's own keyword defaults,
    from one look at its signature."""
    _known_algorithm(formulation, algorithm)
    algo = formulation.algorithms[algorithm]
    defaults = _function_keywords(algo)
    accepted: dict[str, Reading | None] = {n: None for n in sorted(set(defaults) | set(algo.params))}
    for r in readings_for(formulation, algorithm):
        accepted[r.name] = r
    return accepted, defaults


def accepted_params(formulation: "Formulation", algorithm: str) -> dict[str, Reading | None]:
    """Every keyword ``algorithm`` accepts: ``{name: Reading}`` for readings, ``{name: None}``
    for tuning parameters."""
    return _keywords(formulation, algorithm)[0]


def check_params(formulation: "Formulation", algorithm: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validate ``params`` for ``algorithm``; returns them with reading values canonicalised.

    An unknown key names the closest valid one and lists them all; a reading value outside its
    options lists the options.
    """
    accepted, defaults = _keywords(formulation, algorithm)
    if params is not None and not isinstance(params, Mapping):
        raise InputError("params", f"must map parameter names to values, got {type(params).__name__}",
                         problem=formulation.name)
    out: dict[str, Any] = {}
    for key, value in dict(params or {}).items():
        if key not in accepted:
            close = get_close_matches(key, list(accepted), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            valid = ", ".join(accepted) or "none"
            raise InputError(f"--param {key}", f"is not a parameter of {formulation.name}/{algorithm}{hint}; "
                                               f"valid: {valid}", problem=formulation.name)
        reading = accepted[key]
        try:
            if reading is not None:
                out[key] = reading.validate(value, where=f"--param {key}")
            else:
                out[key] = _check_tuning(formulation, algorithm, key, value, defaults.get(key, inspect.Parameter.empty))
        except InputError as err:
            raise err.with_problem(formulation.name) from None
    return out


def resolve_params(formulation: "Formulation", algorithm: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """:func:`check_params`, plus the default of every reading ``algorithm`` takes that
    ``params`` leaves out: the full set of choices a run was made under (its run key)."""
    out = check_params(formulation, algorithm, params)
    for r in readings_for(formulation, algorithm):
        out.setdefault(r.name, r.default)
    return dict(sorted(out.items()))


# ----------------------------------------------------------------------------- sweeps
def parse_param_values(items: Sequence[str] | None) -> dict[str, list[Any]]:
    """``["tie_break=best-fit,worst-fit", "tau=3"]`` -> ``{"tie_break": ["best-fit", "worst-fit"],
    "tau": [3]}``. A value that parses as JSON is taken as JSON (``[4,4,4,4]`` is one list value;
    commas inside brackets do not split); otherwise a string."""
    out: dict[str, list[Any]] = {}
    for item in items or ():
        key, sep, text = str(item).partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError("--param", f"must look like key=value or key=v1,v2, got {item!r}")
        if not key.isidentifier():
            raise InputError("--param", f"key must be a parameter name, got {key!r}")
        values = [_parse_value(v) for v in _split_top_level(text)]
        if not values:
            raise InputError(f"--param {key}", "has no value")
        out.setdefault(key, [])
        for v in values:
            if v not in out[key]:
                out[key].append(v)
    return out


def _split_top_level(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def expand_sweep(values: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """The cross product of a sweep: ``{"a": [1, 2], "b": ["x"]}`` -> ``[{"a": 1, "b": "x"},
    {"a": 2, "b": "x"}]`` (one empty dict for no keys)."""
    keys = list(values)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(list(values[k]) for k in keys))]


def format_params(params: Mapping[str, Any] | None, keys: Iterable[str] | None = None) -> str:
    """``key=value`` pairs, sorted, comma-separated (only ``keys`` when given); ``-`` if none."""
    items = sorted((params or {}).items())
    if keys is not None:
        wanted = set(keys)
        items = [(k, v) for k, v in items if k in wanted]
    return ", ".join(f"{k}={show_value(v)}" for k, v in items) or "-"


def reading_table(formulation: "Formulation") -> list[dict[str, str]]:
    """One row per reading (name, options, default, rule, post hoc, algorithms, passage, reason,
    summary), for ``optkit readings``."""
    rows = []
    for r in formulation.readings:
        options = ", ".join(show_value(o) + (f" ({r.option_notes[str(o)]})" if str(o) in r.option_notes else "")
                            for o in r.options)
        if r.open:
            lo = "-inf" if r.minimum is None else f"{r.minimum:g}"
            hi = "inf" if r.maximum is None else f"{r.maximum:g}"
            options = f"any number in [{lo}, {hi}]; swept: {options}"
        users = "all" if ALL in r.algorithms else ", ".join(r.algorithms)
        if r.scope:
            users = f"{users}; {r.scope}" if users else r.scope
        rule = RULES[r.rule] + (f" ({r.procedure})" if r.procedure else "")
        default = show_value(r.default)
        if r.moved_from is not NOT_MOVED:
            default += f" (was {show_value(r.moved_from)})"
        if r.literal is not None:
            default += f"; the line as written: {show_value(r.literal)}"
        rows.append({"name": r.name, "summary": r.summary, "options": options, "default": default,
                     "rule": r.rule, "post hoc": "yes" if r.post_hoc else "no",
                     "used by": users or "-", "passage": r.passage, "reason": r.reason + f" [rule: {rule}]",
                     "history": r.history or "-"})
    return rows


def moved_defaults_markdown(formulations: Iterable["Formulation"]) -> str:
    """The README's table of every reading whose default moved (:attr:`Reading.moved_from`):
    problem, reading, old -> new, the clause the new default follows, and why (the reading's
    reason). Generated, never typed (``tests/test_readme.py``)."""
    lines = ["| problem | reading | old → new | rule | why |", "|---|---|---|---|---|"]
    for f in formulations:
        for r in f.readings:
            if r.moved_from is NOT_MOVED:
                continue
            why = " ".join(r.reason.split()).replace("|", "\\|")
            lines.append(f"| {f.name} | `{r.name}` | {show_value(r.moved_from)} → {show_value(r.default)} | "
                         f"{r.rule} | {why} |")
    return "\n".join(lines) + "\n"


MOVED_BEGIN, MOVED_END = "<!-- moved-defaults:begin -->", "<!-- moved-defaults:end -->"


def update_moved_block(path: "Path", table: str, *, check: bool = False) -> bool:
    """Put ``table`` between :data:`MOVED_BEGIN` and :data:`MOVED_END` in the file at ``path``;
    returns whether the block differed (with ``check``, nothing is written). An
    :class:`InputError` names the file when it lacks the markers."""
    text = path.read_text(encoding="utf-8")
    if MOVED_BEGIN not in text or MOVED_END not in text:
        raise InputError(str(path), f"has no {MOVED_BEGIN} ... {MOVED_END} block")
    head, rest = text.split(MOVED_BEGIN, 1)
    old, tail = rest.split(MOVED_END, 1)
    new = f"\n{table}"
    if old == new:
        return False
    if not check:
        path.write_text(head + MOVED_BEGIN + new + MOVED_END + tail, encoding="utf-8")
    return True
