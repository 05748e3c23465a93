"""Exact runs on jobs with tensor-parallel / MoE stages (Sec. VI) that a proven lower bound settles
before any model is built: the bound both exact models (:mod:`.exact`, :mod:`.exact_vertices`)
report when it is above their solver's, and the test that a start mapping meeting it is optimal.

Why: the shipped 16,384-GPU jobs' models take longer to build than any useful time limit (the
vertex model of a Mixtral-like job has 33 million unit-server literals), while Heavy-Edge's mapping
of them often meets :func:`.unit_bound.unit_cut_bound` exactly (benchmarks/perf/gpu_mapping_llm_gap.md):
such a run answers ``optimal`` at once, and one that does not still reports a proven gap.
"""

from __future__ import annotations

from typing import Any

from optkit.result import Result, Status

from .bounds import lower_bound
from .model import GpuMappingInstance

__all__ = ["BOUND_PROOF_TOL", "bound_proves", "llm_bound", "proven_by_bound"]


def llm_bound(instance: GpuMappingInstance, objective: str) -> float | None:
    """For a job with tensor-parallel / MoE stages, :func:`.bounds.lower_bound` (alpha: the slowest
    stage's compute; cut: :func:`.unit_bound.unit_cut_bound`), computed before any model is built
    (under the solve's deadline) and reported as ``bound`` when it is above the solver's; ``None``
    for a job of the paper's replicas (whose exact runs report the solver's bound alone)."""
    if instance.job.is_plain:
        return None
    return lower_bound(instance, objective)


BOUND_PROOF_TOL = 1e-9
"""Relative tolerance within which a start mapping's value equal to a proven lower bound is called
optimal without a solver (:func:`bound_proves`): the rounding of the exact models' coefficients
(``delta = UB / 2^30``, about 1e-9 of the value) already makes ``optimal`` mean "within delta"."""


def bound_proves(value: float, bound: float | None) -> bool:
    """Whether ``value`` (a feasible mapping's, by the model's functions) meets the proven lower bound
    ``bound`` within :data:`BOUND_PROOF_TOL`: then that mapping is optimal."""
    return bound is not None and value - bound <= BOUND_PROOF_TOL * max(abs(value), 1e-300)


def proven_by_bound(warm: list[list[int]], bound: float, info: dict[str, Any]) -> Result:
    """The Result of an exact solve whose Heavy-Edge start meets the proven bound before any model is
    built: ``optimal``, the start mapping, the bound, no solver run (``info`` says so)."""
    info = {**info, "incumbent": "heavy-edge warm start", "bound_from": "bounds.lower_bound",
            "solver_status": "not run: the start mapping meets the proven lower bound"}
    return Result(Status.OPTIMAL, solution={"assignment": warm}, bound=bound,
                  message="the start mapping meets bounds.lower_bound (no solver run)", info=info)
