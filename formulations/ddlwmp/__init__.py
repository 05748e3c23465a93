"""ddlwmp: online scheduling of distributed jobs with mixed parallelism (the A-SRPT paper).

The formulation, the time rule and every reading of the paper: this package's ``README.md``.
Importing one policy needs neither the harness nor a solver::

    from optkit.formulations.ddlwmp import OnlineScheduler     # A-SRPT or a baseline, nodes by id
    from optkit.formulations.ddlwmp.a_srpt import ASRPT        # the policy by server index
    from optkit.formulations.ddlwmp.simulate import simulate   # optkit's driver for it

``OnlineScheduler`` speaks the engine's online protocol (:mod:`optkit.online`); the how-to
``docs/howto/drive-a-srpt.rst`` has a driver of under 40 lines for it.

Solver-backed algorithms and the generator are imported lazily.
"""

from __future__ import annotations

from typing import Any

from optkit.formulation import Algorithm, Formulation, LazyMapping, lazy_run
from optkit.result import Result

from .model import OBJECTIVES, PROBLEM, DdlwmpInstance, evaluate
from .online import OnlineScheduler
from .readings import READINGS

__all__ = ["FORMULATION", "DdlwmpInstance", "OnlineScheduler", "evaluate"]


_POLICIES = [
    ("a-srpt", "a_srpt", "run_a_srpt", "heuristic", "A-SRPT (Algorithm 1) with the instance's predicted iterations"),
    ("a-srpt-perfect", "a_srpt", "run_a_srpt_perfect", "heuristic", "A-SRPT with perfect predictions (ñ = n)"),
    ("spjf", "baselines", "run_spjf", "baseline", "shortest predicted job first, strict order (MLaaS)"),
    ("spwf", "baselines", "run_spwf", "baseline", "shortest predicted workload first, strict order (Tiresias)"),
    ("wcs-duration", "baselines", "run_wcs_duration", "baseline", "work-conserving, by predicted duration"),
    ("wcs-workload", "baselines", "run_wcs_workload", "baseline", "work-conserving, by predicted workload"),
    ("wcs-subtime", "baselines", "run_wcs_subtime", "baseline", "work-conserving, by submission time"),
    ("fifo", "baselines", "run_fifo", "baseline", "arrival order, strict head-of-line"),
]
_ALGORITHMS = [Algorithm(name, lazy_run(f"{__name__}.{mod}", fn), kind, summary, OBJECTIVES)
               for name, mod, fn, kind, summary in _POLICIES]
_ALGORITHMS += [
    Algorithm("cpsat", lazy_run(f"{__name__}.exact", "run_cpsat"), "exact", "clairvoyant offline optimum, CP-SAT with per-server cumulatives", OBJECTIVES),
    Algorithm("highs", lazy_run(f"{__name__}.exact", "run_highs"), "exact", "clairvoyant offline optimum, time-indexed MILP (Pyomo, HiGHS)", OBJECTIVES),
]


def _prepare(data: dict[str, Any], *, predictor: str, seed: int | None = None) -> dict[str, Any]:
    """Fill ``predicted_iterations`` with ``predictor`` trained on the first 80% of the jobs."""
    from optkit.predict import fill_predictions
    mae = fill_predictions(data, predictor=predictor, seed=0 if seed is None else seed)
    return {"predictor": predictor, "mean_absolute_error": mae}


FORMULATION = Formulation(
    name=PROBLEM,
    summary="online total-completion-time scheduling of mixed-parallelism jobs (A-SRPT paper)",
    instance_from_dict=DdlwmpInstance.from_dict,
    instance_to_dict=DdlwmpInstance.to_dict,
    evaluate=evaluate,
    objectives=OBJECTIVES,
    algorithms={a.name: a for a in _ALGORITHMS},
    suites=LazyMapping.of(f"{__name__}.generate", "SUITES"),
    generate=lazy_run(f"{__name__}.generate", "generate"),
    lower_bound=lazy_run(f"{__name__}.bounds", "lower_bound"),
    quick_lower_bound=lazy_run(f"{__name__}.bounds", "quick_lower_bound"),
    prepare=_prepare,
    predictors=("rf", "mean", "median", "perfect", "rf-columns"),
    readings=READINGS,
    experiments=LazyMapping.of(f"{__name__}.claims", "EXPERIMENTS"),
    sample=lazy_run(f"{__name__}.sample", "sample"),
    size_classes=LazyMapping.of(f"{__name__}.generate", "SIZE_CLASSES"),
    guarantees=LazyMapping.of(f"{__name__}.bounds", "GUARANTEES"),
    run_policy=lazy_run(f"{__name__}.simulate", "run_online_policy"),
)
