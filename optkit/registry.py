"""Formulation registry.

Formulations are found through the entry point group ``optkit.formulations`` (each entry point
names a :class:`~optkit.formulation.Formulation` object), plus the modules listed in the
environment variable ``OPTKIT_FORMULATIONS`` (``package.module:attribute``, comma separated),
which lets a user try a new problem without packaging it, and plus :func:`register` for
objects built at run time. Worker processes started by the harness see the first two.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points

from optkit.errors import InputError
from optkit.formulation import Formulation

__all__ = ["register", "get", "all_formulations", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "optkit.formulations"
_registered: dict[str, Formulation] = {}
_loaded = False


def register(formulation: Formulation) -> None:
    """Add ``formulation`` to this process's registry (replacing one of the same name)."""
    _registered[formulation.name] = formulation


def _load_target(target: str) -> Formulation:
    module_name, _, attr = target.partition(":")
    obj = importlib.import_module(module_name)
    for part in (attr or "FORMULATION").split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, Formulation):
        raise TypeError(f"{target} is a {type(obj).__name__}, not an optkit Formulation")
    return obj


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        f = ep.load()
        _registered.setdefault(f.name, f)
    for target in filter(None, (t.strip() for t in os.environ.get("OPTKIT_FORMULATIONS", "").split(","))):
        f = _load_target(target)
        _registered.setdefault(f.name, f)


def all_formulations() -> dict[str, Formulation]:
    """Every formulation known to this process, by problem name."""
    _load()
    return dict(sorted(_registered.items()))


def get(problem: str) -> Formulation:
    """The formulation of ``problem``; :class:`InputError` naming the known ones otherwise."""
    _load()
    try:
        return _registered[problem]
    except KeyError:
        known = ", ".join(sorted(_registered)) or "none installed"
        raise InputError("problem", f"is unknown: {problem!r} (known: {known})") from None
