"""Facts of the gpu-mapping package checked on small instances, each derived by hand or by an
independent method: the cut lower bound's three parts (formulations/gpu_mapping/bounds.py) against
the brute-force optimum and hand values, the alpha bound's split minimum, the column programme's
partition table, its time limit and reports (columns.py), the vertex model's reports
(exact_vertices.py), the synthetic generator's documented ranges (generate.py), the input errors of
stages, instances and free-GPU maps (model.py, place.py), eq. (5) on jobs above EDGE_LIST_MAX
(model.vertex_times) and the unit bound's value on an instance no mapping satisfies (unit_bound.py)."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping import bounds, columns, generate
from optkit.formulations.gpu_mapping.bounds import cut_lower_bound
from optkit.formulations.gpu_mapping.model import (
    EDGE_LIST_MAX, MAX_REPLICAS, Cluster, GpuMappingInstance, PipelineJob, Stage, cut_weight, vertex_times,
)


def _brute_force_cut(inst: GpuMappingInstance) -> float:
    """The least cut over every way of filling the servers' free GPUs with the vertices."""
    slots = [m for m, c in enumerate(inst.servers) for _ in range(c)]
    return min(cut_weight(inst.job, np.array(p)) for p in set(itertools.permutations(slots)))


# ----------------------------------------------------------------------------- cut lower bound
def test_cut_bound_is_a_forced_split_of_two_disconnected_rings() -> None:
    """Two stages with no pipeline data (d^out = d^in = 0): the job graph is a 2-replica ring
    (its pair weighs 2·(2(k-1)h/k) = 2h_0 = 6e8, reading two-edges) and a 3-replica ring (each edge
    2(k-1)h/k = 4h_1/3 = 4e8). On servers (4, 1) one vertex sits alone, so the optimum is the least
    weighted degree, min(6e8, 8e8) = 6e8, and one stage is always split. Bound 3 of bounds.py sees
    this: stage sizes {2, 3} fill at most 3 of the 4-GPU server, so split stages hold >= 2 replicas,
    costing at least min(lambda_0, lambda_1) = min(6e8, 8e8) (the rings' minimum cuts). The degree
    bound alone gives half the optimum (the lone vertex's edges counted from one end) and the
    min-cut bound 0 (disconnected graph), so the bound equals the optimum only through bound 3."""
    job = PipelineJob((Stage(2, 0.01, 0.02, 0.0, 0.0, 3e8), Stage(3, 0.01, 0.02, 0.0, 0.0, 3e8)), "ring")
    inst = GpuMappingInstance(Cluster(8, 1e9, 3e11), job, (4, 1))
    assert _brute_force_cut(inst) == pytest.approx(6e8, rel=1e-12)
    assert cut_lower_bound(inst) == pytest.approx(6e8, rel=1e-9)
    assert bounds.degree_bound(inst) == pytest.approx(3e8, rel=1e-9)


def test_min_cut_of_rings_and_of_a_disconnected_graph() -> None:
    """bounds._min_cut is the global minimum cut: a 4-cycle of unit edges needs two edges cut
    (any side of a cut of a cycle is left by two edges); two disjoint edges split at no cost."""
    ring = np.zeros((4, 4))
    for a in range(4):
        ring[a, (a + 1) % 4] = ring[(a + 1) % 4, a] = 1.0
    assert bounds._min_cut(ring) == 2.0
    pairs = np.zeros((4, 4))
    pairs[0, 1] = pairs[1, 0] = pairs[2, 3] = pairs[3, 2] = 1.0
    assert bounds._min_cut(pairs) == 0.0


def _ring_instance(stages: list[dict[str, float]], gpus_per_server: int, inter_bandwidth: float,
                   servers: list[int]) -> GpuMappingInstance:
    """A ring job of ``stages`` on servers with ``servers`` free GPUs, 3e11 B/s inside a server."""
    return GpuMappingInstance.from_dict({
        "problem": "gpu-mapping", "cluster": {"gpus_per_server": gpus_per_server, "inter_bandwidth": inter_bandwidth,
                                              "intra_bandwidth": 3e11},
        "job": {"allreduce": "ring", "stages": stages}, "servers": servers})


def _seed93() -> GpuMappingInstance:
    """A 7-replica ring job (stages of 2, 2, 1, 2 replicas) on servers (3, 4)."""
    stages = [{"replicas": 2, "fwd_time": 0.0011628252226738441, "bwd_time": 0.0023256504453476883,
               "in_bytes": 0.0, "out_bytes": 41216408.00818771, "param_bytes": 812959386.9961072},
              {"replicas": 2, "fwd_time": 0.09977488798616241, "bwd_time": 0.19954977597232482,
               "in_bytes": 41216408.00818771, "out_bytes": 1048049.0373677756, "param_bytes": 396642.6881516632},
              {"replicas": 1, "fwd_time": 0.02443879527454275, "bwd_time": 0.0488775905490855,
               "in_bytes": 2096098.0747355511, "out_bytes": 19617948.4453407, "param_bytes": 256175731.02431288},
              {"replicas": 2, "fwd_time": 0.07422406378056305, "bwd_time": 0.1484481275611261,
               "in_bytes": 9808974.22267035, "out_bytes": 0.0, "param_bytes": 886667.279815943}]
    return _ring_instance(stages, 8, 242126087.954083, [3, 4])


def _brute_force_min_cut(w: np.ndarray) -> float:
    """The global minimum cut by every non-empty proper vertex subset containing vertex 0."""
    n = w.shape[0]
    best = math.inf
    for mask in range(1, 2 ** (n - 1)):
        side = np.array([True] + [bool(mask >> i & 1) for i in range(n - 1)])
        if side.all():
            continue
        best = min(best, float(w[np.ix_(side, ~side)].sum()))
    return best


def test_cut_bound_reaches_the_optimum_through_the_min_cut_bound() -> None:
    """On this instance the optimal cut (brute force over the 35 ways to pick the 3-GPU server's
    vertices) equals M·lambda/2 with lambda the job graph's global minimum cut (brute force over
    vertex subsets): both servers' vertex sets are sides of cuts of weight >= lambda, each cut edge
    lies on two of them (bounds.py, bound 2). So the cut lower bound must be that optimum."""
    inst = _seed93()
    lam = _brute_force_min_cut(inst.job.adjacency)
    opt = _brute_force_cut(inst)
    assert opt == pytest.approx(len(inst.servers) * lam / 2, rel=1e-12)
    assert cut_lower_bound(inst) == pytest.approx(opt, rel=1e-9)


def test_split_minimum_of_a_one_replica_stage_is_infinite() -> None:
    """LBsplit_s (bounds.py, alpha) is the least alpha over distributions of stage s over at least
    two servers; a stage of one replica has none, so its LBsplit is infinite, whatever LB_s is."""
    job = PipelineJob((Stage(2, 0.01, 0.02, 0.0, 1e6, 1e8), Stage(1, 0.01, 0.02, 2e6, 0.0, 1e7)), "ring")
    inst = GpuMappingInstance(Cluster(4, 1.25e9, 3e11), job, (2, 1))
    values, lb, split = bounds._stage_bounds(inst, 1)
    assert math.isfinite(lb) and lb in values
    assert split == math.inf
    assert math.isfinite(bounds._stage_bounds(inst, 0)[2])  # two replicas on two servers: (1, 1) exists


# ----------------------------------------------------------------------------- columns
def test_partition_bounds_table_is_the_least_partition_cost_for_every_entry() -> None:
    """columns._partition_bounds: best[m, j] = least sum of lam[v] over the partitions of j into
    parts of at most m, for m = 0..top and j = 0..k (and nothing else), checked against every
    partition listed by brute force."""
    lam = np.array([0.0, 3.0, 5.0, 4.0, 9.0])
    k, top = 4, 3
    best = columns._partition_bounds(lam, k, top)
    assert best.shape == (top + 1, k + 1)

    def parts(j: int, m: int) -> Iterator[tuple[int, ...]]:
        if j == 0:
            yield ()
            return
        for v in range(min(j, m), 0, -1):
            for rest in parts(j - v, v):
                yield (v,) + rest

    for m in range(top + 1):
        for j in range(k + 1):
            want = min((sum(lam[v] for v in q) for q in parts(j, m)), default=math.inf)
            assert best[m, j] == want, (m, j)


def _plain_stage(**extra: Any) -> dict[str, Any]:
    return {"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0, "out_bytes": 0.0,
            "param_bytes": 1e8, **extra}


# ----------------------------------------------------------------------------- input errors
def test_a_stage_built_directly_names_its_fields_under_stage() -> None:
    """A Stage built in code is checked by Stage.from_dict with the default path ``stage``: a
    replica count of 0 is named ``stage.replicas`` (as an instance file's field would be named
    ``job.stages[0].replicas``)."""
    with pytest.raises(InputError) as err:
        Stage(0, 0.01, 0.02, 0.0, 0.0, 1e8)
    assert err.value.field == "stage.replicas"
    with pytest.raises(InputError) as err:
        Stage.from_dict(_plain_stage(replicas=0))
    assert err.value.field == "stage.replicas"


@pytest.mark.parametrize("key, value", [("routing", "zipf"), ("routing", "uniform"), ("routing_skew", 1.5),
                                        ("expert_bytes", 1e6)])
def test_routing_fields_need_an_expert_parallel_stage(key: str, value: Any) -> None:
    """Token routing (routing, routing_skew, expert_bytes) is among a replica's expert groups: a
    stage without experts (e = 1) that gives any of them is bad input naming that field."""
    with pytest.raises(InputError) as err:
        Stage.from_dict(_plain_stage(**{key: value}))
    assert err.value.field == f"stage.{key}"
    assert "needs experts >= 2" in err.value.message


def test_a_typed_stage_with_routing_but_no_experts_is_rejected() -> None:
    """Stage(..., routing='zipf') with one expert group (skew at its default 1.0) is inconsistent:
    its round trip through to_dict must write the routing fields so that from_dict rejects them."""
    with pytest.raises(InputError) as err:
        Stage(2, 0.01, 0.02, 0.0, 0.0, 1e8, routing="zipf")
    assert err.value.field in ("stage.expert_bytes", "stage.routing")
    assert "needs experts >= 2" in err.value.message


def test_experts_above_the_vertex_limit_are_rejected() -> None:
    """experts is capped by MAX_REPLICAS (the most GPUs of one job): one more is bad input named
    ``stage.experts``; MAX_REPLICAS itself is accepted for a one-replica stage."""
    with pytest.raises(InputError) as err:
        Stage.from_dict(_plain_stage(replicas=1, experts=MAX_REPLICAS + 1))
    assert err.value.field == "stage.experts"
    assert str(MAX_REPLICAS) in err.value.message
    assert Stage.from_dict(_plain_stage(replicas=1, experts=MAX_REPLICAS)).experts == MAX_REPLICAS


def test_a_server_above_gpus_per_server_is_named_with_the_limit() -> None:
    """servers[m] must be in 1..g: a 5-GPU server on 4-GPU servers names servers[1] and the range."""
    job = PipelineJob((Stage(3, 0.01, 0.02, 0.0, 0.0, 1e8), Stage(3, 0.01, 0.02, 0.0, 0.0, 1e8)), "ring")
    with pytest.raises(InputError) as err:
        GpuMappingInstance(Cluster(4, 1e9, 3e11), job, (1, 5))
    assert err.value.field == "servers[1]"
    assert err.value.message == "must be an integer in 1..4 (gpus_per_server), got 5"


class _TwiceListed(Mapping[str, int]):
    """A mapping whose iteration lists node ``a`` twice (a user's own Mapping over pairs)."""

    def __getitem__(self, key: str) -> int:
        return {"a": 2, "b": 2}[key]

    def __iter__(self) -> Iterator[str]:
        return iter(["a", "b", "a"])

    def __len__(self) -> int:
        return 3


def test_a_node_listed_twice_in_the_free_map_is_a_gpu_mapping_input_error() -> None:
    """choose_servers reads the free GPUs per node once each: a node listed twice is an input error
    of the gpu-mapping problem naming ``free['a']``."""
    from optkit.formulations.gpu_mapping.place import choose_servers

    with pytest.raises(InputError) as err:
        choose_servers(_TwiceListed(), 2)
    assert err.value.field == "free['a']"
    assert err.value.problem == "gpu-mapping"


# ----------------------------------------------------------------------------- generator
def test_generate_names_a_servers_value_of_the_wrong_type() -> None:
    """servers is a server count or a list of free GPUs: a string is rejected with that message."""
    with pytest.raises(InputError) as err:
        generate.generate(model="vgg19", servers="two")  # type: ignore[arg-type]
    assert err.value.field == "servers"
    assert err.value.message == "must be a server count or a list of free GPUs, got 'two'"


def test_random_small_respects_max_replicas_and_max_stages() -> None:
    """random_small's documented ranges: at most ``max_replicas`` replicas in all, 1..``max_stages``
    stages. With max_replicas = 1 every instance is one stage of one replica (a first draw of 2 or
    3 replicas does not fit, and the job falls back to one replica); with max_stages = 1 every
    instance has exactly one stage."""
    for seed in range(40):
        one = generate.random_small(seed, max_replicas=1)
        assert [st["replicas"] for st in one["job"]["stages"]] == [1], seed
        single = generate.random_small(seed, max_stages=1)
        assert len(single["job"]["stages"]) == 1, seed


def test_random_small_draws_the_replicas_of_a_single_stage_uniformly() -> None:
    """With max_stages = 1 and max_replicas = 3 the one stage's replicas are drawn uniformly from
    1..3 (random_small's docstring: 1..3 replicas per stage), so over 300 seeds each value comes up
    about 100 times (binomial, standard deviation 8.2): each count lies in 100 +- 45 (5.5 sd)."""
    got = [generate.random_small(seed, max_stages=1, max_replicas=3)["job"]["stages"][0]["replicas"]
           for seed in range(300)]
    for k in (1, 2, 3):
        assert 55 <= got.count(k) <= 145, (k, got.count(k))


def test_write_suite_writes_to_the_suite_folder_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """write_suite(name) without a folder writes one <instance>.json per instance into
    suite_folder(name) (here redirected to a scratch folder, with a one-instance suite)."""
    from optkit.formulation import Suite

    data = generate.random_small(0)
    monkeypatch.setattr(generate, "SUITES", {"tiny": Suite("tiny", "one instance", lambda: [("only", data)])})
    monkeypatch.setattr(generate, "suite_folder", lambda name: tmp_path / "suites" / name)
    paths = generate.write_suite("tiny")
    assert paths == [tmp_path / "suites" / "tiny" / "only.json"]
    assert GpuMappingInstance.from_dict(json.loads(paths[0].read_text())).servers == \
        tuple(data["servers"])


# ----------------------------------------------------------------------------- eq. (5) above EDGE_LIST_MAX
def test_vertex_times_above_the_edge_list_limit_charge_a_one_byte_pipeline_edge() -> None:
    """A job of 1 + 4,099 replicas (above EDGE_LIST_MAX = 4,096, where vertex_times counts the
    pipeline edges per server): the first stage sends d^out = 4,099/2 B, so each pipeline edge
    weighs 2 d^out / k_1 = 1 B exactly. A second-stage vertex on the first stage's server pays
    eq. (5) as 1/B_intra, one elsewhere 1·g/B_inter; both add to p^f + p^b (h = 0: no AllReduce)."""
    k = 4099
    assert 1 + k > EDGE_LIST_MAX
    job = PipelineJob((Stage(1, 0.01, 0.02, 0.0, k / 2, 0.0), Stage(k, 0.03, 0.06, 0.5, 0.0, 0.0)),
                      "ring")
    g, b_inter, b_intra = 8, 1e9, 3e11
    cl = Cluster(g, b_inter, b_intra)
    sv = np.arange(1 + k) // g  # vertex 0 (stage 0) and vertices 1..7 of stage 1 on server 0
    beta = vertex_times(job, cl, sv)
    assert beta[1] == pytest.approx(0.09 + 1.0 / b_intra, rel=1e-12)
    assert beta[8] == pytest.approx(0.09 + 1.0 * g / b_inter, rel=1e-12)
    assert beta[0] == pytest.approx(0.03 + 7 * 1.0 / b_intra + (k - 7) * g / b_inter, rel=1e-12)


# ----------------------------------------------------------------------------- column programme runs
def _three_stage_ring() -> GpuMappingInstance:
    """Ring stages of 2, 2 and 1 replicas on servers (2, 2, 1): the LP bound of the column
    programme is below the optimum here, so the run widens its threshold and lists columns and
    partitions (columns.py, "Steps")."""
    stages = [{"replicas": 2, "fwd_time": 0.002532551402519016, "bwd_time": 0.005065102805038032, "in_bytes": 0.0,
               "out_bytes": 4560438.13179314, "param_bytes": 744859.8210285405},
              {"replicas": 2, "fwd_time": 0.02711248169742626, "bwd_time": 0.05422496339485252,
               "in_bytes": 4560438.13179314, "out_bytes": 18169430.80011631, "param_bytes": 7634817.8934992},
              {"replicas": 1, "fwd_time": 0.006767743045921319, "bwd_time": 0.013535486091842639,
               "in_bytes": 36338861.60023262, "out_bytes": 0.0, "param_bytes": 2492247.78604266}]
    return _ring_instance(stages, 2, 134186092.45966001, [2, 2, 1])


def _column_run(time_limit: float | None) -> tuple[GpuMappingInstance, Any, np.ndarray, Any]:
    from optkit.formulations.gpu_mapping.colocation import heavy_edge_mapping
    from optkit.formulations.gpu_mapping.exact import coefficients
    from optkit.formulations.gpu_mapping.model import stage_counts

    inst = _three_stage_ring()
    co = coefficients(inst)
    start = stage_counts(inst.job, heavy_edge_mapping(inst.job, inst.servers, seed=0), len(inst.servers))
    return inst, co, start, columns.solve_columns(co, start, seed=0, workers=1, time_limit=time_limit)


def test_column_run_proves_the_brute_force_optimum_and_counts_its_partitions() -> None:
    """The run ends optimal at the brute-force optimum (30 arrangements), and reports how many
    partitions it listed in its last round: at least one per stage of >= 2 replicas (a least
    partition is always within the threshold), at most all of them (2 and 1+1 for each of the two
    2-replica stages: 4)."""
    inst, co, _, got = _column_run(None)
    opt = _brute_force_cut(inst)
    assert got.status == "optimal"
    cp = columns.column_problem(co)
    assert columns.value_of_counts(cp, got.counts) == pytest.approx(opt, rel=1e-9)
    assert "enumerated_partitions" in got.info
    listed = got.info["enumerated_partitions"]
    assert isinstance(listed, int) and 2 <= listed <= 4


def test_column_run_past_its_time_limit_keeps_the_start_and_a_valid_bound() -> None:
    """With a time limit already spent when the columns are listed, solve_columns stops with status
    ``time_limit``, its best mapping the start's counts (no integer solve ran) and a bound at most
    the brute-force optimum."""
    inst, co, start, got = _column_run(1e-9)
    assert got.status == "time_limit"
    assert got.counts.tolist() == start.tolist()
    assert got.bound <= _brute_force_cut(inst) * (1 + 1e-12)


# ----------------------------------------------------------------------------- vertex model (MoE jobs)
def _moe_on_equal_servers() -> GpuMappingInstance:
    """An MoE stage (2 replicas x 2 expert groups) and a one-replica stage: 5 placement units on
    servers (2, 2, 1), two of which are interchangeable."""
    job = PipelineJob((Stage(2, 0.02, 0.04, 0.0, 1e6, 1e8, experts=2, expert_bytes=4e7),
                       Stage(1, 0.01, 0.02, 2e6, 0.0, 1e7)), "ring")
    return GpuMappingInstance(Cluster(4, 1.25e9, 3e11), job, (2, 2, 1))


def test_vertex_model_symmetry_breaking_adds_one_clause_per_unit_and_equal_server_pair() -> None:
    """Symmetry breaking (exact_vertices.py, "Symmetry") adds, for each pair of consecutive servers
    of equal free GPUs and each placement unit p, the clause y[p, m'] => OR_{q<p} y[q, m]: here one
    pair (the two 2-GPU servers) and 5 units, so 5 more constraints and no more variables; the
    model has at least the 5 x 3 literals y. Both runs prove the same alpha."""
    from optkit.formulations.gpu_mapping.exact_vertices import solve_vertex_model
    from optkit.formulations.gpu_mapping.model import evaluate

    inst = _moe_on_equal_servers()
    on = solve_vertex_model(inst, objective="alpha", seed=0, workers=1, symmetry=True)
    off = solve_vertex_model(inst, objective="alpha", seed=0, workers=1, symmetry=False)
    assert on.info["constraints"] - off.info["constraints"] == 5
    assert on.info["variables"] == off.info["variables"] >= 15
    assert evaluate(inst, on.solution).objectives["alpha"] == pytest.approx(
        evaluate(inst, off.solution).objectives["alpha"], rel=1e-6)


def _tp_pair_on_one_gpu_servers() -> GpuMappingInstance:
    """A replica of t = 2 tensor slices beside an MoE replica of 2 groups on four 1-GPU servers:
    the slices cannot share a server, so no mapping is feasible and no start mapping exists."""
    job = PipelineJob((Stage(1, 0.02, 0.04, 0.0, 1e6, 1e8, tensor_parallel=2, tp_bytes=1e6),
                       Stage(1, 0.01, 0.02, 1e6, 0.0, 1e7, experts=2, expert_bytes=1e6)), "ring")
    return GpuMappingInstance(Cluster(2, 1.25e9, 3e11), job, (1, 1, 1, 1))


def test_vertex_model_without_a_start_mapping_proves_infeasibility() -> None:
    """No start mapping (colocation.feasible_mapping finds none): the model is built and solved
    without a hint, and CP-SAT proves that no mapping keeps the slices together."""
    from optkit.formulations.gpu_mapping.colocation import feasible_mapping
    from optkit.formulations.gpu_mapping.exact_vertices import solve_vertex_model
    from optkit.result import Status

    inst = _tp_pair_on_one_gpu_servers()
    assert feasible_mapping(inst, seed=0) is None
    res = solve_vertex_model(inst, objective="cut", seed=0, workers=1)
    assert res.status == Status.INFEASIBLE and res.solution is None


def test_vertex_model_cut_short_without_a_mapping_reports_the_compute_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """CP-SAT given no work at all (no presolve, deterministic time 0: cpsat.WORK_LIMITS) stops
    with UNKNOWN: the run is ``time_limit`` with no mapping, and its bound is still the proven alpha
    bound of a job with tensor-parallel stages, max_s comp'_s (bounds.lower_bound): stage 0's
    p^f + p^b + 2(t-1) tp_bytes / (t B_intra) = 0.06 + 1e6 / 3e11 s."""
    from optkit.formulations.gpu_mapping.exact_vertices import solve_vertex_model
    from optkit.result import Status
    from optkit.solvers import cpsat

    monkeypatch.setitem(cpsat.WORK_LIMITS, "cp_model_presolve", False)
    monkeypatch.setitem(cpsat.WORK_LIMITS, "max_deterministic_time", 0.0)
    res = solve_vertex_model(_tp_pair_on_one_gpu_servers(), objective="alpha", seed=0, workers=1)
    assert res.status == Status.TIME_LIMIT and res.solution is None
    assert res.bound == pytest.approx(0.06 + 1e6 / 3e11, rel=1e-9)


def test_unit_bound_claims_nothing_when_a_unit_fits_no_server() -> None:
    """unit_bound.py: r_v(c) = +inf where c is below v's unit size; a unit (here the t = 2 tensor
    replica) that fits no server leaves the transportation problem without a finite solution, and
    unit_cut_bound then returns the bound that claims nothing, 0 (as on one server), not a number
    computed from infinities."""
    from optkit.formulations.gpu_mapping.unit_bound import unit_costs, unit_cut_bound

    inst = _tp_pair_on_one_gpu_servers()
    r, caps = unit_costs(inst)
    assert caps == [1] and np.isinf(r[:2]).all() and np.isfinite(r[2:]).all()
    assert unit_cut_bound(inst) == 0.0
