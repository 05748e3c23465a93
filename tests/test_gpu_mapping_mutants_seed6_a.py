"""Facts of the gpu-mapping package checked by hand or by an independent argument: the input
errors of the generators (the field named), the synthetic instances' ``bwd = 2 fwd``, the bounds'
helpers on instances small enough to work out, the column programme's integer engine (HiGHS) on
an infeasible and a mis-rounded programme, and the count bookkeeping of the column solver."""

from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping import bounds, columns, generate
from optkit.formulations.gpu_mapping.exact import coefficients
from optkit.formulations.gpu_mapping.model import Cluster, GpuMappingInstance, PipelineJob, Stage


def _spy(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> dict[str, Any]:
    """Replace ``module.name`` by a spy that records its keyword arguments and raises ``_Stop``;
    the record."""
    seen: dict[str, Any] = {}

    def spy(*_args: Any, **kwargs: Any) -> Any:
        seen.update(kwargs)
        raise _Stop

    monkeypatch.setattr(module, name, spy)
    return seen


def _two_stage_ring() -> GpuMappingInstance:
    """Two ring stages of 2 replicas on servers with 2, 1 and 1 free GPUs."""
    job = PipelineJob((Stage(2, .1, .2, 0, 1e6, 2e7), Stage(2, .1, .2, 1e6, 0, 2e7)), "ring")
    return GpuMappingInstance(Cluster(8, 1.25e9, 3e11), job, (2, 1, 1))


def test_free_gpus_rejects_an_unknown_pattern_naming_the_field() -> None:
    """An unknown server pattern is an input error on the field ``pattern``, listing the choices."""
    with pytest.raises(InputError, match=r"^pattern must be one of packed, random, fragmented, mixed, got 'zig'$"):
        generate.free_gpus(4, 2, "zig", np.random.default_rng(0))


def test_write_suite_rejects_an_unknown_suite_naming_the_field(tmp_path: Any) -> None:
    """An unknown suite name is an input error on the field ``suite`` (nothing is written)."""
    with pytest.raises(InputError, match=r"^suite must be one of small, table2, medium, large, llm-small, got 'nope'$"):
        generate.write_suite("nope", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_random_small_backward_time_is_twice_the_forward() -> None:
    """random_small's docstring: ``bwd = 2 fwd`` for every stage of every seed."""
    for seed in range(5):
        for st in generate.random_small(seed)["job"]["stages"]:
            assert st["bwd_time"] == 2.0 * st["fwd_time"]


def test_packable_needs_a_subset_that_fills_each_bin() -> None:
    """Items 3 and 2 into bins of 4 and 1: the counting test (a) passes (two items of size >= 2,
    floor(4/2) + floor(1/2) = 2 places; one of size 3, one place), but the 4-bin holds 3 at most
    (3 + 2 > 4) and the 1-bin nothing, 3 < 5 in all: not packable. Items 3 and 1 fit (3 + 1 = 4)."""
    assert bounds._packable([3, 2], [4, 1]) is False
    assert bounds._packable([3, 1], [4, 1]) is True


def test_mincut_bound_of_two_replicas_joined_by_a_light_edge() -> None:
    """Two one-replica stages with d^out = 0.25 B: one pipeline edge of weight 2 d^out / k_1 = 0.5
    (Sec. IV-B), so lambda = 0.5 and on M = 2 servers the bound is M lambda / 2 = 0.5; a job of
    two replicas still has a cut (the edge lighter than 1 B included)."""
    job = PipelineJob((Stage(1, .1, .2, 0.0, 0.25, 0.0), Stage(1, .1, .2, 0.25, 0.0, 0.0)), "ring")
    inst = GpuMappingInstance(Cluster(8, 1e9, 3e11), job, (1, 1))
    assert bounds._mincut_bound(inst) == 0.5
    # the only mapping cuts the edge: the bound is met
    assert bounds.cut_lower_bound(inst) <= 0.5


def test_solution_of_counts_servers_with_the_same_column() -> None:
    """Three servers, two of 2 GPUs with the same column (1, 1) and one of 1 GPU: the multiset per
    size is {(1, 1): 2} and {(0, 1): 1}."""
    cp = SimpleNamespace(sizes=(1, 2))
    x = np.array([[1, 1, 0], [1, 1, 1]])
    assert columns._solution_of(cp, (2, 2, 1), x) == {2: {(1, 1): 2}, 1: {(0, 1): 1}}


def _highs(obj: list[int], upper: list[int], rows: list[tuple[dict[int, int], int]]) -> Any:
    return columns._integer_highs(obj, upper, rows, None, time_limit=None, seed=None, workers=None)


def test_integer_highs_reports_an_infeasible_programme() -> None:
    """x0 + x1 = 3 with 0 <= x <= 1 has no solution: status INFEASIBLE and no values."""
    got = _highs([1, 1], [1, 1], [({0: 1, 1: 1}, 3)])
    assert got.solver_status == "INFEASIBLE" and got.values is None


def test_integer_highs_optimum_without_option_warnings() -> None:
    """min 3 x0 + 2 x1 + 2 x2 subject to x0 + x1 + x2 = 2, x <= 1: the optimum is x = (0, 1, 1)
    of value 4, reached with the options HiGHS knows (scipy warns on an unknown option)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _highs([3, 2, 2], [1, 1, 1], [({0: 1, 1: 1, 2: 1}, 2)])
    assert got.solver_status == "OPTIMAL" and got.values == [0, 1, 1]


def test_integer_highs_never_returns_a_point_off_the_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A point HiGHS returns that rounds off the equality rows (its integrality tolerance) is
    dropped: values None, status UNKNOWN (the _integer_highs docstring: the caller keeps its
    incumbent). The point is forged: x = (0.4, 0.4) rounds to (0, 0), which misses x0 + x1 = 1."""
    import scipy.optimize

    def fake_milp(*_args: Any, **_kwargs: Any) -> Any:
        return SimpleNamespace(x=np.array([0.4, 0.4]), status=1, mip_dual_bound=0.5)

    monkeypatch.setattr(scipy.optimize, "milp", fake_milp)
    got = _highs([1, 1], [1, 1], [({0: 1, 1: 1}, 1)])
    assert got.solver_status == "UNKNOWN" and got.values is None


def test_solve_columns_stops_when_the_start_meets_the_lp_bound() -> None:
    """solve_columns' docstring example: stage 0 (k = 2) whole on the 2-GPU server and stage 1
    split over the two 1-GPU servers cuts the ring pair (2 h = 4e7, two-edge ring) and the four
    pipeline edges (2 d^out / k_1 = 1e6 each): 4.4e7; the LP bound is also 4.4e7, so the run
    stops before the threshold loop: no column enumerated, ``solver_status`` ``bound met``."""
    inst = _two_stage_ring()
    got = columns.solve_columns(coefficients(inst), np.array([[2, 0, 0], [0, 1, 1]]), seed=0, workers=1)
    assert got.status == "optimal" and got.bound == 4.4e7 and got.info["lp_bound"] == 4.4e7
    assert got.info["enumerated_columns"] == 0 and got.info["threshold"] == 0.0
    assert got.info["solver_status"] == "bound met"


def test_solve_columns_threshold_loop_counts_the_enumerated_columns() -> None:
    """random_small(23, max_replicas=6, max_servers=3): stages of 2, 2 and 1 replicas on servers
    of 2, 1 and 2 free GPUs, whose LP bound is below the integer optimum, so the threshold loop
    runs. The optimum is checked against brute force over all 5! / (2! 1! 2!) = 30 mappings, and
    ``enumerated_columns`` is a count: at least 1 (the optimum's own columns are within the
    threshold) and at most the number of all columns (count vectors v with v_s <= k_s summing to
    a server size, listed directly)."""
    import itertools

    from optkit.formulations.gpu_mapping import evaluate
    from optkit.formulations.gpu_mapping.colocation import feasible_mapping

    inst = GpuMappingInstance.from_dict(generate.random_small(23, max_replicas=6, max_servers=3))
    k = [int(v) for v in inst.job.replicas]
    assert inst.servers == (2, 1, 2) and k == [2, 2, 1]
    start = np.zeros((3, 3), dtype=np.int64)
    for s, row in enumerate(feasible_mapping(inst, seed=0)):
        for m in row:
            start[s, m] += 1
    co = coefficients(inst)
    got = columns.solve_columns(co, start, seed=0, workers=1)
    slots = [m for m, c in enumerate(inst.servers) for _ in range(c)]
    best = min(evaluate(inst, {"assignment": [list(p[:2]), list(p[2:4]), list(p[4:])]}).objectives["cut"]
               for p in set(itertools.permutations(slots)))
    found = evaluate(inst, {"assignment": columns.assignment(columns.column_problem(co), got.counts)}).objectives["cut"]
    assert got.status == "optimal" and found == pytest.approx(best, rel=1e-9)
    n_all = sum(1 for c in set(inst.servers) for v in itertools.product(*(range(x + 1) for x in k)) if sum(v) == c)
    assert 1 <= got.info["enumerated_columns"] <= n_all


def test_unit_cut_bound_names_its_stage_when_the_deadline_passes_late() -> None:
    """A deadline that passes after the unit costs are built (a one-stage job: the clock is read
    when the block opens and at unit_costs' two checks) and before the pricing of two server
    sizes (2 and 1 free GPUs) stops the bound with the stage named: ``time limit of 1 s reached
    while computing the unit cut bound`` (optkit.deadline.DeadlineReached)."""
    from optkit.deadline import DeadlineReached, within
    from optkit.formulations.gpu_mapping.unit_bound import unit_cut_bound

    job = PipelineJob((Stage(4, .1, .2, 0.0, 0.0, 1e6),), "ring")
    inst = GpuMappingInstance(Cluster(2, 1e9, 3e11), job, (2, 1, 1))
    readings = iter([0.0, 0.0, 0.0])

    def clock() -> float:
        return next(readings, 10.0)

    with within(1.0, clock=clock), pytest.raises(DeadlineReached) as err:
        unit_cut_bound(inst)
    assert str(err.value) == "time limit of 1 s reached while computing the unit cut bound"


class _Stop(Exception):
    """Ends a run once the call under test has been seen."""


def test_integer_cpsat_gives_the_solver_its_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CP-SAT engine of the column programme passes its time limit (and seed, workers) to
    :func:`optkit.solvers.cpsat.solve_cp_model`: a run with ``time_limit=2.5`` asks the solver
    for 2.5 s, not for an unlimited solve."""
    import optkit.solvers.cpsat as cpsat

    seen = _spy(monkeypatch, cpsat, "solve_cp_model")
    with pytest.raises(_Stop):
        columns._integer_cpsat([1, 1], [1, 1], [({0: 1, 1: 1}, 1)], None, time_limit=2.5, seed=3, workers=1)
    assert seen["time_limit"] == 2.5 and seen["seed"] == 3 and seen["workers"] == 1


def test_solve_columns_gives_column_generation_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a time limit, the column generation gets the run's deadline (a finite clock reading),
    so a long pricing stops at it."""
    seen = _spy(monkeypatch, columns, "column_generation")
    inst = _two_stage_ring()
    with pytest.raises(_Stop):
        columns.solve_columns(coefficients(inst), np.array([[2, 0, 0], [0, 1, 1]]), time_limit=100.0)
    assert seen.get("deadline") is not None and np.isfinite(seen["deadline"])


def test_solve_vertex_model_warm_start_uses_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The vertex model's warm start (Heavy-Edge, seeded: its random pick of step 2c) is drawn
    with the caller's seed, so a seeded run is reproducible and follows that seed."""
    from optkit.formulations.gpu_mapping import exact_vertices

    seen = _spy(monkeypatch, exact_vertices, "feasible_mapping")
    inst = _two_stage_ring()
    with pytest.raises(_Stop):
        exact_vertices.solve_vertex_model(inst, seed=7)
    assert seen["seed"] == 7


def _parts(n: int, top: int) -> list[list[int]]:
    """The partitions of n into parts of at most ``top``, non-increasing."""
    if n == 0:
        return [[]]
    return [[p] + r for p in range(min(n, top), 0, -1) for r in _parts(n - p, p)]


def _split_bound_brute(k: list[int], tab: list) -> list[float]:
    """stage_dp._split_bounds' definition enumerated outright: per stage, the least over splits
    of k_s into two or more parts b_i and over shares a_i, c_i of the neighbours' replicas (sums
    at most k_{s-1}, k_{s+1}) of max_i beta(a_i, b_i, c_i); inf for a one-replica stage."""
    import itertools

    out = []
    for s, t in enumerate(tab):
        if k[s] == 1:
            out.append(float("inf"))
            continue
        ka, kc = len(t) - 1, len(t[0][0]) - 1
        best = float("inf")
        for split in _parts(k[s], k[s] - 1):
            for a in itertools.product(range(ka + 1), repeat=len(split)):
                if sum(a) > ka:
                    continue
                for c in itertools.product(range(kc + 1), repeat=len(split)):
                    if sum(c) <= kc:
                        best = min(best, max(t[ai][b][ci] for ai, b, ci in zip(a, split, c)))
        out.append(best)
    return out


def test_split_bounds_match_their_definition_by_brute_force() -> None:
    """On random_small(58) (stages of 2 and 3 replicas) and (59) (3, 3, 2) the split bounds equal
    the enumeration of their definition over every part of the split (k <= 4: the exact branch)."""
    from optkit.formulations.gpu_mapping import stage_dp

    for seed in (58, 59):
        inst = GpuMappingInstance.from_dict(generate.random_small(seed))
        k = [int(v) for v in inst.job.replicas]
        tab = stage_dp._cell_tables(inst.job, inst.cluster)
        assert stage_dp._split_bounds(k, tab) == _split_bound_brute(k, tab)


def test_vertex_model_bounds_never_exceed_the_brute_force_optimum() -> None:
    """Two stages of two tensor-parallel replicas (t = 2) with byte-sized tensors on servers of
    4, 2 and 2 free GPUs: all 12 placements of the four replicas enumerated give the least cut
    (12 B) and the least alpha; the vertex model's proven bound (the solve_vertex_model guarantee:
    a lower bound, its coefficients rounded down) is at most each, and its mapping attains it."""
    import itertools

    from optkit.formulations.gpu_mapping import evaluate
    from optkit.formulations.gpu_mapping.exact_vertices import solve_vertex_model

    st = [{"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0, "out_bytes": 2.0, "param_bytes": 2.0,
           "tensor_parallel": 2, "tp_bytes": 1.0},
          {"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 2.0, "out_bytes": 0.0, "param_bytes": 2.0,
           "tensor_parallel": 2, "tp_bytes": 1.0}]
    inst = GpuMappingInstance.from_dict({"problem": "gpu-mapping", "cluster": {
        "gpus_per_server": 4, "inter_bandwidth": 1e9, "intra_bandwidth": 1e11},
        "job": {"allreduce": "ring", "stages": st}, "servers": [4, 2, 2]})
    best = {"cut": float("inf"), "alpha": float("inf")}
    n = 0
    for srv in itertools.product(range(3), repeat=4):  # the server of each replica (2 slices each)
        if [2 * srv.count(m) for m in range(3)] != [4, 2, 2]:
            continue
        n += 1
        got = evaluate(inst, {"assignment": [[srv[0]] * 2 + [srv[1]] * 2, [srv[2]] * 2 + [srv[3]] * 2]}).objectives
        for obj in best:
            best[obj] = min(best[obj], got[obj])
    assert n == 12 and best["cut"] == 12.0
    for obj in best:
        res = solve_vertex_model(inst, objective=obj, seed=0, workers=1)
        assert res.status.value == "optimal"
        assert res.bound <= best[obj]
        assert evaluate(inst, res.solution).objectives[obj] == pytest.approx(best[obj], rel=1e-9)
