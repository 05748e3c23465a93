"""gpu-mapping: map a pipeline-parallel job's stage replicas onto the free GPUs of servers.

A balanced graph cut (Luo et al., Sec. III-B eqs. 4-7, Sec. IV-B Heavy-Edge, Table II). The
formulation, its symbols and every reading of the paper are in this package's ``README.md``.

Importing one algorithm needs none of the harness or solvers::

    from optkit.formulations.gpu_mapping import heavy_edge          # networkx graph -> {vertex: server}
    from optkit.formulations.gpu_mapping import GpuMappingInstance, heavy_edge_job, evaluate

Solver-backed algorithms are imported lazily, so this package loads without OR-Tools or Pyomo.
"""

from __future__ import annotations


from optkit.formulation import Algorithm, Formulation, LazyMapping, lazy_run
from optkit.result import Result, Status
from optkit.solvers import SOLVER_LIBRARIES
from optkit.validation import check_time_limit

from .heavy_edge import alpha_min_estimate, fewest_servers, heavy_edge, heavy_edge_arrays, heavy_edge_job
from .colocation import heavy_edge_mapping
from .place import JobPlacement, choose_servers, place
from . import readings as _readings
from .model import (
    PROBLEM, Cluster, GpuMappingInstance, PipelineJob, Stage, alpha_from_counts, alpha_max, colocation_groups, evaluate,
    job_graph, stage_times,
)

__all__ = [
    "FORMULATION", "Cluster", "GpuMappingInstance", "JobPlacement", "PipelineJob", "Stage", "alpha_from_counts",
    "colocation_groups", "heavy_edge_mapping",
    "choose_servers", "place",
    "alpha_max", "alpha_min_estimate", "evaluate", "fewest_servers", "heavy_edge", "heavy_edge_arrays",
    "heavy_edge_job", "job_graph", "stage_times",
]

OBJECTIVES = ("cut", "alpha")


def _run_heavy_edge(instance: GpuMappingInstance, *, objective: str, time_limit: float | None,
                    seed: int | None, single_gpu_weight: str = "unassigned",
                    server_start: str = "heaviest-pair") -> Result:
    """Heavy-Edge ignores the objective: it is the paper's greedy, whichever measure is read.
    Takes the readings ``single_gpu_weight`` (which edges a one-GPU server's choice weighs) and
    ``server_start`` (where a multi-GPU server's set starts). ``time_limit`` is checked as on
    every path (:func:`optkit.validation.check_time_limit`) and otherwise unused: the greedy
    runs in milliseconds."""
    check_time_limit(time_limit, problem=PROBLEM)
    # through colocation.heavy_edge_mapping: the paper's jobs exactly as heavy_edge_job; tensor-parallel
    # jobs with their slices kept together (Heavy-Edge's keyword colocate)
    assignment = heavy_edge_mapping(instance.job, instance.servers, seed=seed, single_gpu_weight=single_gpu_weight,
                                    server_start=server_start)
    return Result(Status.FEASIBLE, solution={"assignment": assignment})


_ALGORITHMS = [
    Algorithm("heavy-edge", _run_heavy_edge, "heuristic", "the paper's Heavy-Edge (Sec. IV-B)", OBJECTIVES),
    Algorithm("heavy-edge-refine", lazy_run(f"{__name__}.refine", "run_heavy_edge_refine"), "heuristic",
              "Heavy-Edge, then Kernighan-Lin style swaps on the chosen objective", OBJECTIVES),
    Algorithm("cpsat", lazy_run(f"{__name__}.exact", "run_cpsat", preload=SOLVER_LIBRARIES + ("scipy.optimize",)), "exact", "OR-Tools CP-SAT on the stage-count model", OBJECTIVES),
    Algorithm("highs", lazy_run(f"{__name__}.exact", "run_highs", preload=SOLVER_LIBRARIES), "exact", "MILP (Pyomo, HiGHS by default) on the stage-count model", OBJECTIVES),
    Algorithm("brute-force", lazy_run(f"{__name__}.exact", "run_brute_force"), "exact",
              "enumeration of stage counts and intra-stage arrangements (small instances)", OBJECTIVES),
    Algorithm("metis", lazy_run(f"{__name__}.baselines", "run_metis"), "peer", "METIS k-way partition with target part weights, repaired to exact sizes",
              OBJECTIVES, randomized=True, requires=("pymetis",)),
    Algorithm("kahip", lazy_run(f"{__name__}.baselines", "run_kahip"), "peer", "KaHIP partition with one heavy dummy vertex per part for exact sizes",
              OBJECTIVES, randomized=True, requires=("kahip",)),
    Algorithm("random", lazy_run(f"{__name__}.baselines", "run_random"), "baseline", "uniformly random mapping (seeded)", OBJECTIVES, randomized=True),
]


FORMULATION = Formulation(
    name=PROBLEM,
    summary="map a pipeline job's stage replicas onto free GPUs: balanced graph cut (A-SRPT paper, Heavy-Edge)",
    instance_from_dict=GpuMappingInstance.from_dict,
    instance_to_dict=GpuMappingInstance.to_dict,
    evaluate=evaluate,
    objectives=OBJECTIVES,
    algorithms={a.name: a for a in _ALGORITHMS},
    suites=LazyMapping.of(f"{__name__}.generate", "SUITES"),
    generate=lazy_run(f"{__name__}.generate", "generate"),
    lower_bound=lazy_run(f"{__name__}.bounds", "lower_bound"),
    readings=_readings.READINGS,
    experiments=LazyMapping.of(f"{__name__}.claims", "EXPERIMENTS"),
    sample=lazy_run(f"{__name__}.sample", "sample"),
    size_classes=LazyMapping.of(f"{__name__}.generate", "SIZE_CLASSES"),
)
