"""Hypothesis strategies that draw valid instances of each problem: ``instances(problem, **limits)``.

::

    from hypothesis import given
    from optkit.testing import strategies

    @given(strategies.instances("nimp", max_workers=8))
    def test_my_property(instance):
        ...

Each problem's formulation builds its instances from integer draws
(:attr:`optkit.formulation.Formulation.sample`: ``sample(draw, **limits) -> dict``); this module
hands it Hypothesis's ``integers(lo, hi)``, so an instance shrinks toward the simplest one (one
server, one GPU, one job...) the way integers shrink toward their lower bound, and every drawn
instance passes the problem's own validation (``instance_from_dict``). The limits, per problem
(defaults in brackets; small enough that the exact solvers prove the optimum in well under a
second):

* ``gpu-mapping``: ``max_replicas`` [8] (= free GPUs), ``max_stages`` [3], ``max_servers`` [4],
  ``max_gpus_per_server`` [8], ``max_tensor_parallel`` [1] and ``max_experts`` [1] (above 1:
  tensor-parallel and MoE stages, Sec. VI; at 1 the paper's jobs, drawn as before);
* ``ddlwmp``: ``max_jobs`` [4], ``max_gpus`` [8] (the cluster's G), ``max_servers`` [4],
  ``max_models`` [2], ``max_stages`` [2], ``max_iterations`` [20], ``max_release`` [10] s;
* ``rar-ddls``: ``max_jobs`` [3], ``max_gpus`` [8], ``max_servers`` [3],
  ``max_gpus_per_server`` [4], ``max_iterations`` [30];
* ``nimp``: ``max_workers`` [8], ``max_machines`` [6], ``max_gpus_per_machine`` [4],
  ``pair_capacity`` ["any"; "scalar" or "matrix"].

A limit that is unknown, not an integer, below 1 (``max_release``: 0) or beyond what the
problem's validation accepts is an :class:`~optkit.errors.InputError` naming it, raised when
:func:`instances` is called. This is the only module of optkit that imports Hypothesis
(``pip install 'optkit[testing]'``).
"""

from __future__ import annotations

import inspect
from typing import Any

from hypothesis import strategies as st

from optkit import registry
from optkit.errors import InputError
from optkit.formulation import Formulation

__all__ = ["instances", "limits"]


def _sampler(f: Formulation) -> Any:
    if f.sample is None:
        raise InputError("problem", f"{f.name} declares no instance sampler (Formulation.sample)")
    target = getattr(f.sample, "target", None)
    return target() if callable(target) else f.sample


def limits(problem: str | Formulation) -> dict[str, Any]:
    """The size limits :func:`instances` takes for ``problem``, with their defaults."""
    f = problem if isinstance(problem, Formulation) else registry.get(problem)
    sig = inspect.signature(_sampler(f))
    return {n: p.default for n, p in sig.parameters.items() if p.kind == p.KEYWORD_ONLY}


def instances(problem: str | Formulation, *, as_dict: bool = False, **size_limits: Any) -> st.SearchStrategy[Any]:
    """A Hypothesis strategy of valid ``problem`` instances within ``size_limits``.

    Parameters
    ----------
    problem
        A problem name or a :class:`~optkit.formulation.Formulation`.
    as_dict
        Draw instance dicts (JSON-ready, what ``optkit solve`` reads) instead of instance objects.
    **size_limits
        The problem's limits (module docstring; :func:`limits` lists them).

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Instance objects (or dicts) that pass the problem's validation, shrinking toward the
        smallest instance.

    Raises
    ------
    optkit.errors.InputError
        An unknown problem, an unknown limit, or a limit out of range (named).

    References
    ----------
    MacIver et al., "Hypothesis: A new approach to property-based testing", JOSS 4(43), 2019.

    Notes
    -----
    Guarantee: every drawn instance passes ``instance_from_dict`` of the problem (checked on
    each draw: a sampler that produced an invalid instance would be a bug, reported as such).

    Units: those of the problem's instances (seconds, bytes, bytes/s).

    Examples
    --------
    >>> from hypothesis import given, settings
    >>> from optkit.testing import strategies
    >>> @settings(max_examples=10, deadline=None)
    ... @given(strategies.instances("nimp", max_workers=4, max_machines=3))
    ... def check(instance):
    ...     assert 1 <= instance.N <= 4 and 1 <= instance.M <= 3
    >>> check()
    """
    f = problem if isinstance(problem, Formulation) else registry.get(problem)
    sampler = _sampler(f)
    known = limits(f)
    for name in size_limits:
        if name not in known:
            raise InputError(name, f"is not a size limit of {f.name} (limits: {', '.join(known)})", problem=f.name)
    try:
        f.instance_from_dict(sampler(lambda lo, hi: lo, **size_limits))  # the limits' checks, and the smallest
    except InputError as exc:
        raise exc.with_problem(f.name) from None

    @st.composite
    def draw_instance(draw: st.DrawFn) -> Any:
        data = sampler(lambda lo, hi: draw(st.integers(lo, hi)), **size_limits)
        try:
            inst = f.instance_from_dict(data)
        except InputError as exc:  # pragma: no cover - a sampler bug, never the caller's input
            raise AssertionError(f"{f.name}'s sampler drew an invalid instance ({exc}): {data}") from exc
        return data if as_dict else inst

    return draw_instance()
