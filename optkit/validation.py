"""Field checks every formulation's ``from_dict`` uses, so each bad field gets the same kind of
one-line :class:`~optkit.errors.InputError` naming its path (``job.stages[2].replicas``).

Unknown keys (:func:`known_keys`), one policy for every problem: ``name``, ``meta`` and
``comment`` (:data:`FREE_KEYS`) are allowed in every object of an instance file and carry no
meaning; any other key the formulation does not define is an error naming the key and the
closest valid one (``cluster.inter_bandwith is not a field of cluster; did you mean
'inter_bandwidth'?``), so a misspelt optional field never silently falls back to its default."""

from __future__ import annotations

import difflib
import math
from typing import Any, Mapping, Sequence

from optkit.errors import InputError

__all__ = ["FREE_KEYS", "mapping", "number", "integer", "instance_object", "known_keys"]

FREE_KEYS = ("name", "meta", "comment")
"""Keys allowed in every object of every instance file (free-form; no solver reads them)."""


def mapping(d: Any, path: str) -> Mapping[str, Any]:
    """``d`` itself if it is a JSON object."""
    if not isinstance(d, Mapping):
        raise InputError(path, f"must be an object, got {type(d).__name__}")
    return d


def number(d: Mapping[str, Any], key: str, path: str, *, positive: bool = False) -> float:
    """The finite number ``d[key]``: ``>= 0``, or ``> 0`` with ``positive``; booleans rejected."""
    if key not in d:
        raise InputError(f"{path}.{key}", "is required")
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InputError(f"{path}.{key}", f"must be a number, got {type(v).__name__} {v!r}")
    v = float(v)
    if not math.isfinite(v):
        raise InputError(f"{path}.{key}", f"must be finite, got {v!r}")
    if positive and v <= 0:
        raise InputError(f"{path}.{key}", f"must be > 0, got {v!r}")
    if not positive and v < 0:
        raise InputError(f"{path}.{key}", f"must be >= 0, got {v!r}")
    return v


def integer(v: Any, path: str, *, low: int | None = None, high: int | None = None) -> int:
    """``v`` as an int (an integral float is accepted, a boolean is not), within ``[low, high]``."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise InputError(path, f"must be an integer, got {type(v).__name__} {v!r}")
    v = int(v)
    if low is not None and v < low:
        raise InputError(path, f"must be >= {low}, got {v}")
    if high is not None and v > high:
        raise InputError(path, f"must be <= {high}, got {v}")
    return v


def instance_object(d: Any, problem: str, required: Sequence[str]) -> Mapping[str, Any]:
    """An instance's top level: a JSON object whose ``"problem"`` (if present) is ``problem``
    and which has every ``required`` key."""
    d = mapping(d, "instance")
    if d.get("problem", problem) != problem:
        raise InputError("problem", f"must be {problem!r}, got {d.get('problem')!r}")
    for key in required:
        if key not in d:
            raise InputError(key, "is required")
    return d


def known_keys(d: Mapping[str, Any], fields: Sequence[str], path: str = "", what: str = "") -> None:
    """Reject any key of ``d`` that is neither in ``fields`` nor in :data:`FREE_KEYS`.

    ``path`` prefixes the key in the error (``cluster`` gives ``cluster.slot_second``; empty
    for the top level); ``what`` names the object in the message (default ``path`` or
    ``the instance``). The message suggests the closest valid key (:mod:`difflib`).
    """
    valid = [*fields, *FREE_KEYS]
    for key in d:
        if key in valid:
            continue
        name = str(key)
        close = difflib.get_close_matches(name, [str(f) for f in valid], n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        listed = ", ".join(str(f) for f in fields if f != "problem")
        raise InputError(f"{path}.{name}" if path else name,
                         f"is not a field of {what or path or 'the instance'}{hint} (fields: {listed}; "
                         f"free-form: {', '.join(FREE_KEYS)})")
