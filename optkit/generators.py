"""The ``--param`` keys of a formulation's generator, read from its signature.

A formulation's ``generate`` is either one function with keyword parameters (gpu-mapping,
ddlwmp), or a dispatcher ``generate(*, kind, seed, **params)`` whose module maps each ``kind``
to a generator ``fn(seed, *, key=default, ...)`` in a dict named ``GENERATORS`` (nimp,
rar-ddls). :func:`generator_keys` reads both shapes; ``optkit list`` and ``optkit generate
--help`` print them (:func:`describe`), and ``optkit generate`` checks ``--param`` keys
against them (:func:`check_params`) so a misspelt key names the closest valid one.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from typing import Any, Callable, Mapping

from optkit.errors import InputError

__all__ = ["generator_keys", "describe", "check_params", "draw_sizes"]

Keys = list[tuple[str, str | None]]  # (name, default as text, or None when required)


def _target(fn: Callable[..., Any]) -> Callable[..., Any]:
    target = getattr(fn, "target", None)  # a lazy_run entry: the real function
    return target() if callable(target) else fn


def _keys(fn: Callable[..., Any], skip_first: bool = False) -> Keys:
    out: Keys = []
    params = list(inspect.signature(fn).parameters.values())
    if skip_first and params and params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        params = params[1:]  # the seed of a kind's generator: passed as --seed
    for p in params:
        if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        out.append((p.name, None if p.default is p.empty else repr(p.default)))
    return out


def generator_keys(generate: Callable[..., Any]) -> dict[str | None, Keys]:
    """``{None: keys}`` of a plain generator, or ``{kind: keys}`` of a dispatcher (module docstring);
    ``seed`` is listed with the keys (it is also ``--seed``)."""
    fn = _target(generate)
    own = _keys(fn)
    kinds = getattr(importlib.import_module(fn.__module__), "GENERATORS", None)
    if not isinstance(kinds, Mapping) or "kind" not in dict(own):
        return {None: own}
    common = [k for k in own if k[0] != "kind"]
    return {str(kind): common + _keys(f, skip_first=True) for kind, f in kinds.items()}


def _fmt(keys: Keys) -> str:
    return ", ".join(name if default is None else f"{name}={default}" for name, default in keys) or "none"


def describe(generate: Callable[..., Any]) -> list[str]:
    """One line per generator (per ``kind`` of a dispatcher): its ``--param`` keys and defaults;
    a key without a default is required."""
    by_kind = generator_keys(generate)
    if None in by_kind:
        return [_fmt(by_kind[None])]
    return [f"kind={kind}: {_fmt(keys)}" for kind, keys in by_kind.items()]


def check_params(problem: str, generate: Callable[..., Any], params: Mapping[str, Any]) -> None:
    """:class:`InputError` naming ``--param KEY`` for a key the generator (of ``params["kind"]``)
    does not take, with the closest valid key."""
    by_kind = generator_keys(generate)
    if None in by_kind:
        valid, what = [k for k, _ in by_kind[None]], f"the {problem} generator"
    else:
        declared = inspect.signature(_target(generate)).parameters["kind"].default
        kind = params.get("kind", None if declared is inspect.Parameter.empty else declared)
        if kind not in by_kind:
            raise InputError("--param kind", f"must be one of {', '.join(map(str, by_kind))}, got {kind!r}")
        valid, what = ["kind"] + [k for k, _ in by_kind[kind]], f"the {problem} generator of kind {kind}"
    for key in params:
        if key not in valid:
            close = difflib.get_close_matches(key, valid, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(f"--param {key}", f"is not a key of {what}{hint} (keys: {', '.join(valid)})")


def draw_sizes(draw: Callable[[int, int], int], count: int, per: int, budget: int) -> list[int]:
    """At most ``count`` (at least one) sizes of ``1..per`` summing to at most ``budget``, from
    integer draws ``draw(lo, hi)`` (a formulation's ``sample``: servers' free GPUs, machines'
    GPUs); the smallest draws give one size of 1."""
    sizes: list[int] = []
    for _ in range(draw(1, count)):
        if budget == 0:
            break
        c = draw(1, min(per, budget))
        sizes.append(c)
        budget -= c
    return sizes
