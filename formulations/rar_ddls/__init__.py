"""rar-ddls: makespan scheduling of ring-all-reduce jobs under communication contention (SJF-BCO).

The formulation, the contention model and every reading of the paper: this package's
``README.md`` and :mod:`optkit.formulations.rar_ddls.model`. Importing one algorithm needs neither the
harness nor a solver::

    from optkit.formulations.rar_ddls import schedule_batch, Job, Network   # a batch, by node id
    from optkit.formulations.rar_ddls.sjf_bco import sjf_bco     # plan + schedule
    from optkit.formulations.rar_ddls.model import evaluate       # the referee

Solver-backed algorithms and the generator are imported lazily.
"""

from __future__ import annotations

from optkit.formulation import Algorithm, Formulation, LazyMapping, lazy_run

from .batch import BatchSchedule, JobSlots, schedule_batch
from .model import OBJECTIVES, PROBLEM, Job, Network, RarInstance, evaluate
from .readings import READINGS

__all__ = ["FORMULATION", "BatchSchedule", "Job", "JobSlots", "Network", "RarInstance", "evaluate", "schedule_batch"]

_ALGORITHMS = [
    Algorithm("sjf-bco", lazy_run(f"{__name__}.sjf_bco", "run_sjf_bco"), "heuristic",
              "SJF-BCO (Algorithms 1-3): bisection on theta_u, kappa loop, FA-FFP / LBSGF", OBJECTIVES),
    Algorithm("ff", lazy_run(f"{__name__}.baselines", "run_ff"), "baseline",
              "first fit under the bisected execution-time limit (Sec. 7)", OBJECTIVES),
    Algorithm("ls", lazy_run(f"{__name__}.baselines", "run_ls"), "baseline",
              "list scheduling, least accumulated time first (Sec. 7)", OBJECTIVES),
    Algorithm("rand", lazy_run(f"{__name__}.baselines", "run_rand"), "baseline",
              "seeded random servers and GPUs, limit T (Sec. 7)", OBJECTIVES, randomized=True),
    Algorithm("cpsat", lazy_run(f"{__name__}.exact", "run_cpsat"), "exact",
              "time-indexed optimum with the contention model, CP-SAT", ("makespan",)),
    Algorithm("highs", lazy_run(f"{__name__}.exact", "run_highs"), "exact",
              "time-indexed MILP with the contention model linearised (Pyomo, HiGHS)", ("makespan",)),
]

FORMULATION = Formulation(
    name=PROBLEM,
    summary="makespan scheduling of ring-all-reduce jobs with communication contention (SJF-BCO paper)",
    instance_from_dict=RarInstance.from_dict,
    instance_to_dict=RarInstance.to_dict,
    evaluate=evaluate,
    objectives=OBJECTIVES,
    algorithms={a.name: a for a in _ALGORITHMS},
    suites=LazyMapping.of(f"{__name__}.generate", "SUITES"),
    generate=lazy_run(f"{__name__}.generate", "generate"),
    lower_bound=lazy_run(f"{__name__}.bounds", "lower_bound"),
    readings=READINGS,
    experiments=LazyMapping.of(f"{__name__}.claims", "EXPERIMENTS"),
    sample=lazy_run(f"{__name__}.sample", "sample"),
    size_classes=LazyMapping.of(f"{__name__}.generate", "SIZE_CLASSES"),
    guarantees=LazyMapping.of(f"{__name__}.bounds", "GUARANTEES"),
)
