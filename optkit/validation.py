"""Field checks every formulation's ``from_dict`` uses, so each bad field gets the same kind of
one-line :class:`~optkit.errors.InputError` naming its path (``job.stages[2].replicas``).

Unknown keys (:func:`known_keys`), one policy for every problem: ``name``, ``meta`` and
``comment`` (:data:`FREE_KEYS`) are allowed in every object of an instance file and carry no
meaning; any other key the formulation does not define is an error naming the key and the
closest valid one (``cluster.inter_bandwith is not a field of cluster; did you mean
'inter_bandwidth'?``), so a misspelt optional field never silently falls back to its default."""

from __future__ import annotations

import difflib
import functools
import inspect
import math
import numbers
import operator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterable, Iterator, Mapping, ParamSpec, Sequence, TypeVar

from optkit.errors import InputError

__all__ = ["FREE_KEYS", "MAX_COUNT", "DEFAULT_MAX_VIOLATIONS", "mapping", "number", "integer", "instance_object", "known_keys",
           "all_violations", "trusted", "check_typed", "check_seed", "check_seeds", "check_time_limit", "SEED_MESSAGE",
           "TIME_LIMIT_MESSAGE", "checked_arguments", "check_keywords", "distinct_keys"]

DEFAULT_MAX_VIOLATIONS = 20
"""How many violations :func:`all_violations` reports before it stops (like a compiler)."""

T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")
_collected: ContextVar[list[InputError] | None] = ContextVar("optkit_violations", default=None)
_cap: ContextVar[int] = ContextVar("optkit_violation_cap", default=DEFAULT_MAX_VIOLATIONS)


_trusted: ContextVar[bool] = ContextVar("optkit_trusted_construction", default=False)


@contextmanager
def trusted() -> Iterator[None]:
    """Inside this block typed constructors skip :func:`check_typed`: a ``from_dict`` that has
    just checked every field builds its objects here, and so does code that derives an object
    from one already checked."""
    token = _trusted.set(True)
    try:
        yield
    finally:
        _trusted.reset(token)


def check_typed(rebuild: Callable[[], Any], problem: str) -> None:
    """The check of a typed constructor (called from a dataclass's ``__post_init__``): run
    ``rebuild``, which passes the new object's own ``to_dict`` through ``from_dict``, so a typed
    call is rejected with exactly the message an instance file gets, prefixed by ``problem``.
    Skipped inside :func:`trusted`."""
    if _trusted.get():
        return
    try:
        with trusted():
            rebuild()
    except InputError as err:
        raise (err if err.problem else err.with_problem(problem)) from None


class _TooMany(Exception):
    """The violation cap is reached: stop checking."""


def _fail(error: InputError, substitute: T) -> T:
    """Raise ``error``; inside :func:`all_violations`, record it and go on with ``substitute``."""
    found = _collected.get()
    if found is None:
        raise error
    found.append(error)
    if len(found) >= _cap.get():
        raise _TooMany
    return substitute


def all_violations(build: Callable[[], Any], cap: int = DEFAULT_MAX_VIOLATIONS) -> tuple[list[InputError], bool]:
    """Every violation ``build()`` (a formulation's ``from_dict``) finds, up to ``cap``; and
    whether the cap cut the list short.

    The field checks of this module (:func:`number`, :func:`integer`, :func:`known_keys`) record
    their error and carry on with a stand-in value (1, the bound it broke, ...), so one pass
    reports every bad number and unknown key; the first other error (a missing section, a
    cross-field rule) ends the pass and is reported last. A stand-in may cause a follow-up
    error (as in a compiler), never hide one. An empty list: the instance is valid.
    """
    found: list[InputError] = []
    token, cap_token = _collected.set(found), _cap.set(max(1, cap))
    cut = False
    try:
        build()
    except InputError as exc:
        found.append(exc)
    except _TooMany:
        cut = True
    except Exception:  # noqa: BLE001 - a stand-in's follow-up failure; the recorded errors say why
        if not found:
            raise
    finally:
        _collected.reset(token)
        _cap.reset(cap_token)
    return found[:cap], cut

MAX_COUNT = 1_000_000
"""Largest count of servers, or of GPUs on one server, an instance may give: far beyond any real
cluster, small enough that arrays indexed by it fit in memory (more is bad input, not a
``MemoryError``)."""

FREE_KEYS = ("name", "meta", "comment")
"""Keys allowed in every object of every instance file (free-form; no solver reads them)."""


def mapping(d: Any, path: str) -> Mapping[str, Any]:
    """``d`` itself if it is a JSON object."""
    if not isinstance(d, Mapping):
        raise InputError(path, f"must be an object, got {type(d).__name__}")
    return d


def number(d: Mapping[str, Any], key: str, path: str, *, positive: bool = False) -> float:
    """The finite number ``d[key]``: ``>= 0``, or ``> 0`` with ``positive``; booleans rejected."""
    where = f"{path}.{key}"
    if key not in d:
        return _fail(InputError(where, "is required"), 1.0)
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return _fail(InputError(where, f"must be a number, got {type(v).__name__} {v!r}"), 1.0)
    v = float(v)
    if not math.isfinite(v):
        return _fail(InputError(where, f"must be finite, got {v!r}"), 1.0)
    if positive and v <= 0:
        return _fail(InputError(where, f"must be > 0, got {v!r}"), 1.0)
    if not positive and v < 0:
        return _fail(InputError(where, f"must be >= 0, got {v!r}"), 0.0)
    return v


def integer(v: Any, path: str, *, low: int | None = None, high: int | None = None) -> int:
    """``v`` as an int (an integral float is accepted, a boolean is not), within ``[low, high]``."""
    fallback = max(low, 1) if low is not None else 1  # the stand-in of all_violations
    fallback = fallback if high is None else min(fallback, high)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        return _fail(InputError(path, f"must be an integer, got {type(v).__name__} {v!r}"), fallback)
    v = int(v)
    if low is not None and v < low:
        return _fail(InputError(path, f"must be >= {low}, got {v}"), low)
    if high is not None and v > high:
        return _fail(InputError(path, f"must be <= {high}, got {v}"), high)
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
        _fail(InputError(f"{path}.{name}" if path else name,
                         f"is not a field of {what or path or 'the instance'}{hint} (fields: {listed}; "
                         f"free-form: {', '.join(FREE_KEYS)})"), None)


SEED_MESSAGE = "must be an integer >= 0"
"""What a seed must be, in every entry (``--seed`` of the CLI and ``seed=`` of the Python API)."""
TIME_LIMIT_MESSAGE = "must be a finite number of seconds > 0"
"""What a time limit must be, in every entry (``--time-limit`` and ``time_limit=``)."""


def check_seed(seed: Any, field: str = "seed", *, problem: str | None = None, generator: bool = False) -> Any:
    """``seed`` checked once at a public entry: ``None`` (no seed) or an integer >= 0 (a Python
    or numpy integer; booleans, floats and strings are refused, as numpy's generators refuse
    them deep inside, or worse accept ``True`` as 1). With ``generator=True`` a
    ``numpy.random.Generator`` passes too (the entries that document taking one).

    Seeds have no upper bound (numpy's generators take integers of any size; ``--seed`` too);
    the CP-SAT and HiGHS adapters reduce a seed modulo ``2**31 - 1``, their 32-bit range.

    Returns the seed as a plain ``int`` (or ``None``, or the generator). The message is the
    CLI's for ``--seed`` (:data:`SEED_MESSAGE`), an :class:`InputError` naming ``field``.

    Every public entry (``solve``, ``compare``, ``check_algorithm``, ``worst_case``, the
    problems' public functions, the online schedulers) calls this one function, as the CLI's
    ``--seed`` does (:func:`optkit.cli_args.seed_arg`); an entry reached through another sees
    the already checked value, which passes unchanged."""
    if seed is None:
        return None
    if generator:
        import numpy as np

        if isinstance(seed, np.random.Generator):
            return seed
    if not isinstance(seed, bool):
        try:
            value = operator.index(seed)
        except TypeError:
            value = None
        if value is not None and value >= 0:
            return value
    extra = " or a numpy.random.Generator" if generator else ""
    raise InputError(field, f"{SEED_MESSAGE}{extra}, got {seed!r}", problem=problem)


def check_seeds(seeds: Any, field: str = "seeds", *, problem: str | None = None, allow_none: bool = False,
                allow_empty: bool = False) -> list[Any]:
    """A list of seeds (``seeds=`` of :func:`optkit.harness.compare.compare` and
    :func:`optkit.testing.check_algorithm`, ``--seed`` given several times), each checked by
    :func:`check_seed` naming ``field[i]``; repeats are dropped, the order kept; ``None`` is an
    entry only with ``allow_none``. An empty list (unless ``allow_empty``) or one that is not a
    sequence (a string, a single number) is an :class:`InputError` naming ``field``."""
    if isinstance(seeds, (str, bytes, Mapping)) or not isinstance(seeds, Iterable):
        raise InputError(field, f"must be a sequence of integers >= 0, got {seeds!r}", problem=problem)
    out: list[Any] = []
    for i, s in enumerate(seeds):
        if s is None and not allow_none:
            raise InputError(f"{field}[{i}]", f"{SEED_MESSAGE}, got None", problem=problem)
        value = check_seed(s, f"{field}[{i}]", problem=problem)
        if value not in out:
            out.append(value)
    if not out and not allow_empty:
        raise InputError(field, "must hold at least one seed", problem=problem)
    return out


def check_time_limit(time_limit: Any, field: str = "time_limit", *, problem: str | None = None) -> float | None:
    """``time_limit`` checked once at a public entry: ``None`` (no limit) or a finite number of
    seconds > 0, returned as a ``float``. Zero, negative, NaN, infinite, boolean and string
    values are an :class:`InputError` naming ``field`` with the CLI's message for
    ``--time-limit`` (:data:`TIME_LIMIT_MESSAGE`).

    ``0`` is refused rather than read as "no time at all" (which would leave only answers that
    need no search, the bound shortcuts) or as "no limit" (the opposite): there is no useful
    run it could name, and the CLI has always refused it. Leave the limit out (``None``) for no
    limit.

    Every public entry calls this one function, as the CLI's ``--time-limit`` does
    (:func:`optkit.cli_args.time_limit_arg`), so the two take and refuse the same values with
    the same words."""
    if time_limit is None:
        return None
    if not isinstance(time_limit, bool) and isinstance(time_limit, numbers.Real):
        value = float(time_limit)
        if math.isfinite(value) and value > 0:
            return value
    raise InputError(field, f"{TIME_LIMIT_MESSAGE}, got {time_limit!r} (None for no limit)", problem=problem)


def _binding_error(name: str, sig: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any],
                   problem: str | None) -> InputError | None:
    """The :class:`InputError` for a call of ``name`` whose arguments do not bind to ``sig``
    (``None`` when they do)."""
    try:
        sig.bind(*args, **kwargs)
    except TypeError:
        pass
    else:
        return None
    params = sig.parameters
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    names = [p.name for p in params.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    keywords = [n for n in names if params[n].kind is not params[n].POSITIONAL_ONLY]
    if not takes_kwargs:
        try:
            check_keywords(kwargs, keywords, name, problem=problem)
        except InputError as err:
            return err
    positional = [n for n in names if params[n].kind in (params[n].POSITIONAL_ONLY, params[n].POSITIONAL_OR_KEYWORD)]
    if len(args) > len(positional) and not any(p.kind is p.VAR_POSITIONAL for p in params.values()):
        return InputError(name, f"takes {len(positional)} positional arguments ({', '.join(positional)}), got "
                                f"{len(args)}; pass the others by keyword", problem=problem)
    given = set(positional[:len(args)]) | set(kwargs)
    for n in names:
        if params[n].default is inspect.Parameter.empty and n not in given:
            return InputError(n, f"is required (an argument of {name})", problem=problem)
    for n in positional[:len(args)]:
        if n in kwargs:
            return InputError(n, f"is given twice to {name} (by position and by keyword)", problem=problem)
    return InputError(name, "got arguments that do not fit its parameters", problem=problem)


def check_keywords(given: Iterable[str], allowed: Sequence[str], what: str, *, problem: str | None = None) -> None:
    """An :class:`InputError` naming the first of ``given`` that is not in ``allowed`` (the
    keywords of ``what``: a function, a policy), with the closest allowed one ("did you mean")
    and the list: the message of a misspelt keyword at every entry, whether Python would have
    raised a ``TypeError`` (:func:`checked_arguments`) or a ``**params`` entry passes keywords
    on (the online schedulers)."""
    for key in given:
        if key not in allowed:
            close = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise InputError(key, f"is not a parameter of {what}{hint}; its parameters: {', '.join(allowed)}",
                             problem=problem)


def distinct_keys(items: Mapping[Any, Any], field: str, *, problem: str | None = None) -> list[Any]:
    """The keys of ``items`` (a mapping keyed by node ids), in order, each once: a mapping whose
    iteration lists a key twice (a user's own ``Mapping`` over a list of pairs, say) would
    otherwise collapse the two entries into one node. An :class:`InputError` naming
    ``field[key]`` and ``problem`` when a key repeats."""
    keys = list(items)
    if len(set(keys)) != len(keys):
        seen: set[Any] = set()
        for key in keys:
            if key in seen:
                raise InputError(f"{field}[{key!r}]", "is listed twice: every node must appear once",
                                 problem=problem)
            seen.add(key)
    return keys


def checked_arguments(problem: str | None = None) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A public function whose call with an unknown keyword (a misspelt reading), a missing
    argument or too many positional ones raises an :class:`InputError` naming the argument,
    the closest valid keyword and ``problem``, instead of Python's ``TypeError``.

    Costs nothing on a good call: the arguments are matched against the signature only when the
    call raised ``TypeError``; a ``TypeError`` from inside the function propagates unchanged."""

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return fn(*args, **kwargs)
            except TypeError:
                err = _binding_error(fn.__name__, inspect.signature(fn), args, dict(kwargs), problem)
                if err is None:
                    raise
                raise err from None

        return call

    return decorate
