"""Instance files: JSON objects with a ``"problem"`` key.

``load_instance`` reads and validates a file through its formulation; ``instance_hash`` is a
stable content hash (SHA-256 of the canonical JSON: sorted keys, no whitespace), so the same
instance gets the same hash whatever its file name, key order or formatting.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

from optkit import registry
from optkit.errors import InputError
from optkit.validation import DEFAULT_MAX_VIOLATIONS, all_violations

__all__ = ["read_json", "load_instance", "instance_violations", "instance_files", "save_instance", "instance_hash",
           "canonical_json"]


def canonical_json(data: Any) -> str:
    """JSON with sorted keys and no whitespace; floats in Python's shortest repr. Data JSON
    cannot hold (an object, NaN, a key that is not a string) is an :class:`InputError`."""
    try:
        return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputError("instance", f"must be JSON data (objects, lists, strings, finite numbers): {exc}") from None


def instance_hash(data: dict[str, Any]) -> str:
    """Stable content hash of an instance dict (hex SHA-256 of its canonical JSON)."""
    return hashlib.sha256(canonical_json(data).encode()).hexdigest()


def read_json(path: str | Path) -> dict[str, Any]:
    """Read a JSON object from ``path``; :class:`InputError` for a missing or malformed file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(str(p), f"cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(p), f"is not a UTF-8 text (JSON) file: byte 0x{exc.object[exc.start]:02x} "
                                 f"at offset {exc.start}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        what = exc.msg.removesuffix(" at")  # json says "Unterminated string starting at"
        raise InputError(str(p), f"is not valid JSON: {what} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(data, dict):
        raise InputError(str(p), f"must hold a JSON object, got {type(data).__name__}")
    return data


def load_instance(path: str | Path, problem: str | None = None) -> tuple[str, Any, dict[str, Any]]:
    """Read, validate and build the instance in ``path``.

    Returns ``(problem name, instance object, the raw dict)``. If ``problem`` is given the
    file's ``"problem"`` key must match it.
    """
    data = read_json(path)
    name = data.get("problem")
    if not isinstance(name, str):
        raise InputError("problem", f"must be a string naming the problem, got {name!r}")
    if problem is not None:
        registry.get(problem)  # an unknown problem: the error lists the known ones
    if problem is not None and name != problem:
        raise InputError("problem", f"is {name!r} but {problem!r} was asked for", problem=problem)
    formulation = registry.get(name)
    try:
        instance = formulation.instance_from_dict(data)
    except InputError as exc:
        raise exc.with_problem(name) from None
    return name, instance, data


def instance_violations(path: str | Path, cap: int = DEFAULT_MAX_VIOLATIONS
                        ) -> tuple[str, Any, list[InputError], bool, dict[str, Any]]:
    """Every violation in the instance file ``path``, like a compiler (up to ``cap``).

    Returns ``(problem, instance or None, violations, cut, raw dict)``: the instance only when
    there is no violation; ``cut`` when the cap stopped the check
    (:func:`optkit.validation.all_violations`). A file that cannot be read, is not JSON or
    names no known problem raises :class:`InputError` (one violation, nothing else to check).
    """
    data = read_json(path)
    name = data.get("problem")
    if not isinstance(name, str):
        raise InputError(f"{path}: problem", f"must be a string naming the problem, got {name!r}")
    formulation = registry.get(name)
    built: list[Any] = []
    found, cut = all_violations(lambda: built.append(formulation.instance_from_dict(data)), cap)
    unique: list[InputError] = []
    for e in found:
        e = e.with_problem(name)
        if not unique or (e.field, e.message) != (unique[-1].field, unique[-1].message):
            unique.append(e)
    return name, (built[0] if built and not unique else None), unique, cut, data


def instance_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files named in ``paths``, each folder replaced by its ``*.json`` files (recursively, sorted).

    A path that does not exist, or a folder without any ``.json`` file, is an :class:`InputError`.
    """
    files: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(q for q in p.rglob("*.json") if q.is_file())
            if not found:
                raise InputError(str(p), "is a folder without any .json instance file")
            files.extend(found)
        elif p.exists():
            files.append(p)
        else:
            raise InputError(str(p), "does not exist")
    return list(dict.fromkeys(files))


def save_instance(path: str | Path, data: dict[str, Any]) -> None:
    """Write an instance dict as indented JSON (creating parent folders)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data, indent=1, sort_keys=False, allow_nan=False) + "\n")
