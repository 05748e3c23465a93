"""Every answer judged against the instance as given (issue 35).

An algorithm is handed a Python object, and Python cannot stop it from writing to that object:
a frozen dataclass yields to ``object.__setattr__``, a read-only numpy array to
``arr.setflags(write=True)``. An algorithm that relaxes its own instance (sets a pair capacity to
infinity, say) and is then judged by ``evaluate`` on that same object is judged against a
problem it made up. So the engine never hands an algorithm the instance it judges with:

* :class:`InputWatch` re-parses the instance from its canonical JSON
  (:func:`fresh_copy`): the algorithm gets a copy that shares no object with the caller's,
  which stays as given for ``evaluate``, for the exact references and for the caller;
* after the run it compares the copy's canonical JSON with what it was before; a difference
  is named: ``mutated its input: field pair_capacity_bytes[0][1] (1e+08 before the run, inf
  after)`` (the first differing key path, :func:`first_difference`), and the run is an
  ``error`` whose solution is dropped;
* the solution is replaced by its JSON form (:func:`json_form`, what ``optkit solve --json``
  prints and ``optkit validate --solution`` reads back), so ``evaluate`` judges exactly what the
  user sees; a value JSON cannot hold as such (a numpy integer, which ``json.dumps`` refuses and
  ``solve --json`` would print as a string; a set; an object) makes the run an ``error``
  naming its path and type. Tuples become lists and float subclasses (``numpy.float64``)
  floats, as JSON writes them.

:func:`optkit.solve.solve` runs every algorithm this way, so ``optkit solve``, ``compare``'s
workers, :func:`optkit.testing.check_algorithm`, ``worst-case`` and the battery all judge
through it.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from optkit.formulation import Formulation
from optkit.result import Result, Status

__all__ = ["MUTATED", "NOT_JSON", "InputWatch", "NotJsonError", "describe_difference", "first_difference", "fresh_copy",
           "instance_text", "json_form", "short"]

MUTATED = "mutated its input"
"""How the message of a run whose algorithm changed its instance begins."""
NOT_JSON = "the solution is not JSON data"
"""How the message of a run whose solution JSON cannot hold begins."""


def instance_text(formulation: Formulation, instance: Any) -> str:
    """The canonical JSON of ``instance`` (sorted keys, no whitespace; a non-finite number is
    written as JSON's ``Infinity``/``NaN`` so that an instance an algorithm spoiled still prints)."""
    return json.dumps(formulation.instance_to_dict(instance), sort_keys=True, separators=(",", ":"),
                      allow_nan=True)


def fresh_copy(formulation: Formulation, instance: Any) -> Any:
    """A new instance object re-parsed from the canonical JSON of ``instance``: no array, list
    or object of it is shared with ``instance``."""
    return formulation.instance_from_dict(json.loads(instance_text(formulation, instance)))


def short(value: Any) -> str:
    """``value`` in a message: a float as ``%g``, a list or dict as (at most 60 characters of) JSON."""
    if isinstance(value, float):
        return f"{value:g}"
    text = json.dumps(value, allow_nan=True) if isinstance(value, (dict, list, str)) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe_difference(before: Any, after: Any, first: str, second: str) -> str | None:
    """``"PATH (A FIRST, B SECOND)"`` for the first place where two JSON values differ
    (:func:`first_difference`), or ``None`` when they are equal."""
    diff = first_difference(before, after)
    if diff is None:
        return None
    path, a, b = diff
    return f"{path} ({short(a)} {first}, {short(b)} {second})"


def first_difference(before: Any, after: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """``(key path, value before, value after)`` of the first place where two JSON values
    differ (keys in sorted order, list items in order), or ``None`` when they are equal. Paths
    read like the fields of :class:`~optkit.errors.InputError`: ``machines[2].idle_gpus``; a
    missing key or list item is ``<missing>``."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in before or key not in after:
                return sub, before.get(key, "<missing>"), after.get(key, "<missing>")
            found = first_difference(before[key], after[key], sub)
            if found:
                return found
        return None
    if isinstance(before, list) and isinstance(after, list):
        for i in range(max(len(before), len(after))):
            if i >= len(before) or i >= len(after):
                return (f"{path}[{i}]", before[i] if i < len(before) else "<missing>",
                        after[i] if i < len(after) else "<missing>")
            found = first_difference(before[i], after[i], f"{path}[{i}]")
            if found:
                return found
        return None
    same = type(before) is type(after) and (before == after or (
        isinstance(before, float) and math.isnan(before) and math.isnan(after)))
    return None if same else (path or "(the whole instance)", before, after)


class NotJsonError(TypeError):
    """A solution holds a value JSON cannot hold as such; ``path`` names it, ``kind`` its type."""

    def __init__(self, path: str, value: Any) -> None:
        self.path = path
        self.kind = f"{type(value).__module__}.{type(value).__qualname__}".removeprefix("builtins.")
        hint = " (return int(x): json.dumps refuses it, and optkit solve --json would print it as a string " \
               "that optkit validate rejects)" if _is_numpy_integer(value) else ""
        super().__init__(f"{path} is a {self.kind}{hint}")


def _is_numpy_integer(value: Any) -> bool:
    return type(value).__module__ == "numpy" and hasattr(value, "dtype") and value.dtype.kind in "iub"


def _check_json(value: Any, path: str) -> None:
    """Raise :class:`NotJsonError` at the first value ``json.dumps`` would not write as it is."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not (k is None or isinstance(k, (str, bool, int, float))):
                raise NotJsonError(f"{path} key {k!r}", k)
            _check_json(v, f"{path}.{k}")
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_json(v, f"{path}[{i}]")
        return
    raise NotJsonError(path, value)


def json_form(solution: Any, name: str = "solution") -> Any:
    """``solution`` as its JSON text reads back (``json.loads(json.dumps(solution))``): what
    ``optkit solve --json`` prints and ``optkit validate --solution`` reads. A value ``json.dumps``
    cannot write as it is raises :class:`NotJsonError` naming its path (``name`` first)."""
    _check_json(solution, name)
    return json.loads(json.dumps(solution, allow_nan=True))


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


class InputWatch:
    """The algorithm's own copy of an instance, and the check that it left it unchanged.

    ``copy`` (:func:`fresh_copy` of ``instance``) is what the algorithm gets; ``instance``
    itself is never handed to it. :meth:`judge` then names a changed copy and replaces the
    result's solution by its JSON form (module docstring).
    """

    def __init__(self, formulation: Formulation, instance: Any) -> None:
        self.formulation = formulation
        self.instance = instance
        self.copy = fresh_copy(formulation, instance)
        # a digest, not the text: a 150,000-job workload's JSON is 23 MB (the caller's instance,
        # which the algorithm never sees, gives the values again where a field changed)
        self._digest = _digest(instance_text(formulation, self.copy))

    def mutation(self) -> str | None:
        """``None`` when the copy is as it was; else the message naming the first changed field."""
        try:
            after = instance_text(self.formulation, self.copy)
        except Exception as exc:  # noqa: BLE001 - whatever broke it, the algorithm did
            return f"{MUTATED}: the instance can no longer be written as JSON ({type(exc).__name__}: {exc})"
        if _digest(after) == self._digest:
            return None
        before = instance_text(self.formulation, self.instance)
        diff = describe_difference(json.loads(before), json.loads(after), "before the run", "after")
        if diff is None:  # same values, other text (cannot happen with sorted keys; kept for safety)
            return f"{MUTATED}: its canonical JSON changed"
        return f"{MUTATED}: field {diff}"

    def judge(self, result: Result) -> Result:
        """Make ``result`` say what the run did to its input and hold its solution's JSON form:
        a mutated instance or a solution JSON cannot hold turns it into an ``error`` without a
        solution, the message naming the field (module docstring)."""
        if not isinstance(result, Result):
            raise TypeError(f"the algorithm returned {type(result).__name__}, not an optkit Result")
        changed = self.mutation()
        if changed:
            result.status, result.solution, result.objective, result.bound = Status.ERROR, None, None, None
            result.message = changed
            return result
        if result.solution is not None:
            try:
                result.solution = json_form(result.solution)
            except NotJsonError as exc:
                result.status, result.solution, result.objective, result.bound = Status.ERROR, None, None, None
                result.message = f"{NOT_JSON}: {exc}"
        return result
