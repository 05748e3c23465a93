"""Exact gpu-mapping solvers: CP-SAT = MILP (HiGHS) = brute force = naive enumeration.

The CP-SAT and MILP models derive their coefficients from eqs. (4)-(7) themselves; the brute
force uses the model's own ``stage_times``/``cut_weight`` (the referee), and the naive
enumeration uses neither the count model nor the arrangement argument. Agreement of all four on
seeded random instances is the test of the count model's exactness (``exact``'s docstring).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import optkit
from optkit.formulations.gpu_mapping import arrangements, exact
from optkit.formulations.gpu_mapping.model import GpuMappingInstance, evaluate, stage_counts
from optkit.errors import InputError
from optkit.result import Status

from tests.deterministic import stop_at_first_solution
from tests.gpu_mapping_cases import random_instance_dict

REL = 1e-6
SEEDS = range(32)
OBJECTIVES = ("alpha", "cut")


def _inst(seed: int) -> GpuMappingInstance:
    return GpuMappingInstance.from_dict(random_instance_dict(seed))


def _close(a: float, b: float, rel: float = REL) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


def test_case_builder_covers_the_brief() -> None:
    insts = [_inst(s) for s in SEEDS]
    assert {i.job.allreduce for i in insts} == {"ring", "tree"}
    assert all(4 <= i.job.n_replicas <= 12 for i in insts)
    assert {len(i.job.stages) for i in insts} == {1, 2, 3, 4}
    assert all(2 <= len(i.servers) <= 4 and 4 <= i.cluster.gpus_per_server <= 8 for i in insts)
    assert sum(i.job.n_replicas <= exact.NAIVE_MAX_REPLICAS for i in insts) >= 8


@pytest.mark.parametrize("seed", SEEDS)
def test_exact_solvers_agree(seed: int) -> None:
    inst = _inst(seed)
    for objective in OBJECTIVES:
        best, best_assignment = exact.brute_force(inst, objective)
        ev = evaluate(inst, {"assignment": best_assignment})
        assert ev.feasible and _close(ev.objectives[objective], best, 1e-12)
        if inst.job.n_replicas <= exact.NAIVE_MAX_REPLICAS:
            naive, _ = exact.naive_enumeration(inst, objective)
            assert _close(naive, best, 1e-12), (objective, naive, best)
        for algorithm in ("cpsat", "highs", "brute-force"):
            r = optkit.solve("gpu-mapping", inst, algorithm, objective=objective, seed=seed)
            assert r.status == Status.OPTIMAL, (algorithm, objective, r.message)
            # the engine recomputed the objective with evaluate
            assert r.objective == evaluate(inst, r.solution).objectives[objective]
            assert _close(r.objective, best), (algorithm, objective, r.objective, best)
            assert r.bound is not None and r.bound <= r.objective
            assert r.bound >= best * (1 - REL)
        he = optkit.solve("gpu-mapping", inst, "heavy-edge", objective=objective, seed=seed)
        assert he.objective >= best * (1 - 1e-12)


@pytest.mark.parametrize("seed", [0, 3, 9, 14, 21, 26])
def test_symmetry_breaking_keeps_the_optimum(seed: int) -> None:
    inst = _inst(seed)
    for objective in OBJECTIVES:
        on = exact.run_cpsat(inst, objective=objective, time_limit=None, seed=1, symmetry=True)
        off = exact.run_highs(inst, objective=objective, time_limit=None, seed=1, symmetry=False)
        assert on.status == off.status == Status.OPTIMAL
        v_on = evaluate(inst, on.solution).objectives[objective]
        v_off = evaluate(inst, off.solution).objectives[objective]
        assert _close(v_on, v_off)


def _ring_instance(servers: list[int], k: int, h: float) -> GpuMappingInstance:
    return GpuMappingInstance.from_dict({
        "cluster": {"gpus_per_server": 8, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11},
        "job": {"allreduce": "ring", "stages": [{"replicas": k, "fwd_time": 0.01, "bwd_time": 0.02,
                                                 "in_bytes": 0, "out_bytes": 0, "param_bytes": h}]},
        "servers": servers,
    })


@pytest.mark.parametrize("algorithm", ["cpsat", "highs", "brute-force"])
def test_ring_cut_is_servers_times_edge_weight(algorithm: str) -> None:
    """One ring stage of k = 6 on servers (2, 2, 2): every server is used, the minimum ring cut
    is n_s = 3 edges of 2(k-1)h/k = 5h/3 each, i.e. 5h, with contiguous arcs."""
    h = 3e8
    inst = _ring_instance([2, 2, 2], 6, h)
    r = optkit.solve("gpu-mapping", inst, algorithm, objective="cut", seed=0)
    assert r.status == Status.OPTIMAL
    assert r.objective == pytest.approx(5 * h, rel=1e-12)
    row = r.solution["assignment"][0]
    changes = sum(row[i] != row[(i + 1) % 6] for i in range(6))
    assert changes == 3


def test_ring_of_two_parallel_edges() -> None:
    """k = 2: the two parallel ring edges (weight 2(k-1)h/k = h each) are both cut when the
    replicas are split, i.e. n_s = 2 edges of weight h; on servers (1, 1) the cut is 2h."""
    h = 5e8
    inst = _ring_instance([1, 1], 2, h)
    for algorithm in ("cpsat", "highs"):
        r = optkit.solve("gpu-mapping", inst, algorithm, objective="cut", seed=0)
        assert r.status == Status.OPTIMAL and r.objective == pytest.approx(2 * h, rel=1e-12)


def test_alpha_hand_computed() -> None:
    """One stage, k = 4, on servers (3, 1): the 3-replica server has AllReduce
    2(k-1)h/k / ((3/g) B_inter) < the 1-replica server's 2(k-1)h/k / ((1/g) B_inter), so
    alpha = comp + 1.5 h g / B_inter (eq. 6 with x = 1; eq. 5 is 0 for a lone stage)."""
    h, g, b = 1e8, 8, 1.25e9
    inst = GpuMappingInstance.from_dict({
        "cluster": {"gpus_per_server": g, "inter_bandwidth": b, "intra_bandwidth": 3e11},
        "job": {"allreduce": "tree", "stages": [{"replicas": 4, "fwd_time": 0.01, "bwd_time": 0.02,
                                                 "in_bytes": 0, "out_bytes": 0, "param_bytes": h}]},
        "servers": [3, 1],
    })
    expected = 0.03 + 1.5 * h * g / b
    for algorithm in ("cpsat", "highs", "brute-force"):
        r = optkit.solve("gpu-mapping", inst, algorithm, objective="alpha", seed=0)
        assert r.status == Status.OPTIMAL and r.objective == pytest.approx(expected, rel=1e-12)


def test_count_tables_matches_enumeration() -> None:
    for k, caps in [([3, 2, 4], [4, 3, 2]), ([5], [2, 2, 1]), ([1, 1, 1, 1], [2, 2]), ([2, 6], [4, 4])]:
        tables = list(exact._tables(k, caps))
        assert len(tables) == exact.count_tables(k, caps)
        assert len({t.tobytes() for t in tables}) == len(tables)
        for t in tables:
            assert t.sum(axis=1).tolist() == k and t.sum(axis=0).tolist() == caps
    assert exact.count_tables([2, 2], [2, 2]) == 3  # [[2,0],[0,2]], [[1,1],[1,1]], [[0,2],[2,0]]


def test_arrangements_one_per_partition() -> None:
    """Sizes (2, 2, 1) of 5 replicas: 5!/(2!2!1!) = 30 sequences, 15 up to swapping the two
    2-blocks; every partition into blocks {2, 2, 1} appears exactly once."""
    arrs = list(arrangements.arrangements((2, 2, 1)))
    assert len(arrs) == 15 == arrangements.n_arrangements((2, 2, 1))
    parts = {frozenset(frozenset(i for i, a in enumerate(arr) if a == j) for j in range(3)) for arr in arrs}
    assert len(parts) == 15


def test_brute_force_guard() -> None:
    d = random_instance_dict(0)
    big = GpuMappingInstance.from_dict({
        **d, "servers": [8] * 8,
        "job": {"allreduce": "ring", "stages": [{**d["job"]["stages"][0], "replicas": 16, "in_bytes": 0,
                                                 "out_bytes": 0}] * 4},
        "cluster": {**d["cluster"], "gpus_per_server": 8},
    })
    with pytest.raises(InputError, match="too large for brute-force") as exc:
        exact.brute_force(big, "alpha")
    assert exc.value.field == "instance"
    with pytest.raises(InputError, match="too large"):
        optkit.solve("gpu-mapping", big, "brute-force", objective="cut")
    with pytest.raises(InputError, match="naive"):
        exact.naive_enumeration(_inst(0), "cut")  # 11 replicas > 8


def _tree_instance(per_stage: int, servers: list[int]) -> GpuMappingInstance:
    """Four stages of ``per_stage`` replicas each, tree all-reduce, on ``servers`` free GPUs."""
    rng = np.random.default_rng(5)
    k = [per_stage] * 4
    totals = rng.uniform(1e7, 1e8, size=3)
    stages = [{"replicas": k[s], "fwd_time": 0.02, "bwd_time": 0.04,
               "in_bytes": float(totals[s - 1] / k[s]) if s else 0.0,
               "out_bytes": float(totals[s] / k[s]) if s < 3 else 0.0,
               "param_bytes": float(rng.uniform(1e8, 1e9))} for s in range(4)]
    return GpuMappingInstance.from_dict({
        "cluster": {"gpus_per_server": 8, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11},
        "job": {"allreduce": "tree", "stages": stages},
        "servers": servers,
    })


@pytest.mark.parametrize("algorithm", ["cpsat", "highs"])
def test_time_limit_returns_incumbent_and_bound(algorithm: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A solve cut short returns an incumbent and the solver's bound, with an open gap. The cut
    is a deterministic work limit (the solver's first incumbent), not a wall-clock race."""
    stop_at_first_solution(monkeypatch)
    inst = _tree_instance(6, [5, 3, 7, 2, 6, 1])
    assert inst.job.n_replicas == 24
    r = optkit.solve("gpu-mapping", inst, algorithm, objective="cut", seed=0,
                     params={"workers": 1, "model": "counts"} if algorithm == "cpsat" else None)
    assert r.status == Status.TIME_LIMIT
    assert r.solution is not None and r.objective is not None
    assert r.bound is not None and 0.0 <= r.bound <= r.objective
    assert r.gap is not None and r.gap > 0
    assert r.info["incumbent"] in ("solver", "heavy-edge warm start")


def test_highs_writes_model(tmp_path) -> None:
    inst = _inst(2)
    path = tmp_path / "gpu.lp"
    r = exact.run_highs(inst, objective="cut", time_limit=None, seed=0, write=str(path))
    assert r.status == Status.OPTIMAL and path.exists() and "z(" in path.read_text()
    assert r.info["variables"] > 0 and r.info["constraints"] > 0


def test_cpsat_solution_counts_and_info() -> None:
    inst = _inst(7)
    r = exact.run_cpsat(inst, objective="alpha", time_limit=None, seed=0, workers=1)
    assert r.status == Status.OPTIMAL and r.info["solver_status"] == "OPTIMAL"
    x = stage_counts(inst.job, r.solution["assignment"], len(inst.servers))
    assert x.sum(axis=0).tolist() == list(inst.servers)
    assert 0 < r.info["resolution"] < 1e-6 * r.bound


def test_unknown_objective() -> None:
    with pytest.raises(InputError):
        exact.run_cpsat(_inst(1), objective="makespan", time_limit=None, seed=0)
