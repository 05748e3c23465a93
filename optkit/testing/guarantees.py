"""The papers' proven guarantees as data: (problem, algorithm) -> the ratio as a function of the instance.

A formulation declares its guarantees in :attr:`optkit.formulation.Formulation.guarantees`
(algorithm name -> :class:`Guarantee`, usually a lazy mapping to its ``bounds.GUARANTEES``);
:func:`optkit.testing.assert_within` uses them when no ``ratio`` is given. An algorithm without
an entry has no proven guarantee (Heavy-Edge, the baselines, every peer): a ratio check on it
must state the ratio it expects.

This module is the one table of guarantees: :func:`optkit.testing.assert_within` checks them and
the worst-case search (:func:`optkit.worst_case.guarantee`, ``benchmarks/results/worst-case.md``)
prints them beside the worst ratio it finds, both from :func:`guarantee_for` and
:func:`describe`. Where the papers prove nothing, :data:`NONE_STATED` says why in the paper's own
terms (Heavy-Edge), else :func:`describe` names the algorithm's kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from optkit import registry
from optkit.formulation import Formulation

__all__ = ["Guarantee", "guarantee_for", "all_guarantees", "describe", "NONE_STATED", "SENSES"]

SENSES = ("at_most", "at_least")


@dataclass(frozen=True)
class Guarantee:
    """A paper's proven approximation (or competitive) guarantee of one algorithm.

    Attributes
    ----------
    algorithm
        The registered algorithm it is about.
    objective
        The objective it bounds.
    ratio
        ``ratio(instance, params) -> float | None``: the guaranteed ratio on this instance under
        the run's parameters (``None``: the theorem's assumptions fail on it, so it says
        nothing; ``math.inf``: it holds trivially).
    citation
        The paper and the theorem (``"Luo et al., A-SRPT paper, Theorem 1"``).
    statement
        The inequality in words or symbols, with the assumptions.
    sense
        ``at_most`` (the measured ratio must not exceed ``ratio``: a minimisation's ALG / OPT)
        or ``at_least`` (it must reach ``ratio``: a maximisation form).
    measure
        ``measure(instance, algorithm_objective, optimum_objective) -> float``: the ratio
        measured from the two ``evaluate`` values; ``None``: ALG / OPT of the scalar keys
        (``1.0`` when both are 0).
    figures
        ``figures(instance, params) -> str``: the quantities ``ratio`` is computed from on this
        instance, in words (``"n_g = 4, phi = 3.667, u = 1, l = 1"``); ``None``: the ratio is a
        constant.
    """

    algorithm: str
    objective: str
    ratio: Callable[[Any, Mapping[str, Any]], float | None]
    citation: str
    statement: str
    sense: str = "at_most"
    measure: Callable[[Any, Any, Any], float] | None = None
    figures: Callable[[Any, Mapping[str, Any]], str] | None = None

    def __post_init__(self) -> None:
        if self.sense not in SENSES:
            raise ValueError(f"guarantee of {self.algorithm}: sense must be one of {SENSES}, got {self.sense!r}")

    def holds(self, measured: float, bound: float | None, rel_tol: float = 1e-9) -> bool:
        """Whether ``measured`` meets ``bound`` (a ``None`` bound says nothing: holds)."""
        if bound is None:
            return True
        if self.sense == "at_most":
            return measured <= bound * (1 + rel_tol) + rel_tol
        return measured >= bound * (1 - rel_tol) - rel_tol


def guarantee_for(problem: str | Formulation, algorithm: str) -> Guarantee | None:
    """The declared guarantee of ``algorithm`` of ``problem`` (``None``: none is proven)."""
    f = problem if isinstance(problem, Formulation) else registry.get(problem)
    return dict(f.guarantees).get(algorithm)


def all_guarantees() -> dict[tuple[str, str], Guarantee]:
    """Every declared guarantee, by (problem, algorithm)."""
    return {(p, a): g for p, f in registry.all_formulations().items() for a, g in dict(f.guarantees).items()}


NONE_STATED: dict[tuple[str, str], str] = {
    ("gpu-mapping", "heavy-edge"): "the paper proves no ratio for Heavy-Edge (Sec. IV-B)",
    ("gpu-mapping", "heavy-edge-refine"): "the paper proves no ratio for Heavy-Edge (Sec. IV-B); the refinement "
                                          "only lowers its objective",
}
"""Why a paper algorithm has no guarantee, where the paper says so, by (problem, algorithm)."""


def describe(problem: str | Formulation, algorithm: str, objective: str | None = None) -> str:
    """One line on what is proven about ``algorithm``'s ratio on ``objective`` (default: the
    guarantee's): the guarantee's citation and statement, or ``"none stated: ..."`` with the
    reason (:data:`NONE_STATED`, another objective, or the algorithm's kind)."""
    f = problem if isinstance(problem, Formulation) else registry.get(problem)
    g = guarantee_for(f, algorithm)
    if g is not None and objective not in (None, g.objective):
        return f"none stated for {objective}: {g.citation} bounds {g.objective} only"
    if g is not None:
        return f"{g.citation}: {g.statement}"
    if (f.name, algorithm) in NONE_STATED:
        return f"none stated: {NONE_STATED[(f.name, algorithm)]}"
    kind = f.algorithms[algorithm].kind if algorithm in f.algorithms else "baseline"
    what = {"peer": "a peer (a tool a user would pick instead)", "heuristic": "a heuristic"}.get(kind, "a baseline")
    return f"none stated: {algorithm} is {what} with no proven ratio"
