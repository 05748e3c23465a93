"""nimp: non-idle-machine-aware worker placement (Fang et al., Titan).

The formulation and every reading of the paper: this package's ``README.md``. Importing one
algorithm needs neither the harness nor a solver::

    from optkit.formulations.nimp import place, Job, Machine   # Titan by node id, with the reason
    from optkit.formulations.nimp import OnlineScheduler       # Titan / baselines, optkit.online
    from optkit.formulations.nimp.titan import titan           # Algorithms 1-3, list positions
    from optkit.formulations.nimp.model import evaluate        # the referee

Solver-backed algorithms and the generator are imported lazily.
"""

from __future__ import annotations

from optkit.formulation import Algorithm, Formulation, LazyMapping, lazy_run

from .model import OBJECTIVES, PROBLEM, Job, Machine, NimpInstance, evaluate
from .online import OnlineScheduler
from .place import WorkerPlacement, place
from .readings import READINGS
from .titan import titan

__all__ = ["FORMULATION", "Job", "Machine", "NimpInstance", "OnlineScheduler", "WorkerPlacement", "evaluate", "place",
           "titan"]

_ALGORITHMS = [
    Algorithm("titan", lazy_run(f"{__name__}.titan", "run_titan"), "heuristic",
              "Titan (Algorithms 1-3): fewest idle machines, then fewest machines, greedy submodular merging", OBJECTIVES),
    Algorithm("elasticflow", lazy_run(f"{__name__}.baselines", "run_elasticflow"), "baseline",
              "best fit, consolidated; reading elasticflow_machines (Sec. V-A)", OBJECTIVES),
    Algorithm("hived", lazy_run(f"{__name__}.baselines", "run_hived"), "baseline",
              "fragmented (non-idle) machines first (Sec. V-A)", OBJECTIVES),
    Algorithm("tiresias", lazy_run(f"{__name__}.baselines", "run_tiresias"), "baseline",
              "consolidate if placement-sensitive, else reading tiresias_spread (Sec. V-A)", OBJECTIVES),
    Algorithm("cpsat", lazy_run(f"{__name__}.exact", "run_cpsat"), "exact",
              "lexicographic optimum, weighted single solve, CP-SAT", OBJECTIVES),
    Algorithm("highs", lazy_run(f"{__name__}.exact", "run_highs"), "exact",
              "lexicographic optimum, weighted single solve, MILP (Pyomo, HiGHS)", OBJECTIVES),
    Algorithm("brute-force", lazy_run(f"{__name__}.exact", "run_brute_force"), "exact",
              "exhaustive search, tiny instances only", OBJECTIVES),
]

FORMULATION = Formulation(
    name=PROBLEM,
    summary="non-idle-machine-aware worker placement, lexicographic (idle machines, machines) (Titan paper)",
    instance_from_dict=NimpInstance.from_dict,
    instance_to_dict=NimpInstance.to_dict,
    evaluate=evaluate,
    objectives=OBJECTIVES,
    algorithms={a.name: a for a in _ALGORITHMS},
    suites=LazyMapping.of(f"{__name__}.generate", "SUITES"),
    generate=lazy_run(f"{__name__}.generate", "generate"),
    lower_bound=lazy_run(f"{__name__}.bounds", "lower_bound"),
    # `optkit simulate nimp WORKLOAD --policy titan|elasticflow|hived|tiresias`: the online
    # cluster replay (replay.py), whose workload is a job stream, not a single-job instance.
    simulate=lazy_run(f"{__name__}.replay", "simulate_cli"),
    # An online placement policy (OnlinePolicyPlugin) on one instance: its job arrives at time 0
    # on the instance's machines and P; the policy's decision is the placement (online.run_policy).
    run_policy=lazy_run(f"{__name__}.online", "run_policy"),
    readings=READINGS,
    experiments=LazyMapping.of(f"{__name__}.claims", "EXPERIMENTS"),
    sample=lazy_run(f"{__name__}.sample", "sample"),
    size_classes=LazyMapping.of(f"{__name__}.generate", "SIZE_CLASSES"),
    guarantees=LazyMapping.of(f"{__name__}.bounds", "GUARANTEES"),
)
