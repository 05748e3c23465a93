"""Peer partitioners (METIS, KaHIP), the random baseline and heavy-edge-refine for gpu-mapping."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from optkit.formulations.gpu_mapping.heavy_edge import heavy_edge_job
from optkit.formulations.gpu_mapping.model import (
    Cluster, GpuMappingInstance, PipelineJob, Stage, assignment_from_vertex_servers, evaluate, stage_times,
    vertex_servers,
)
from optkit.formulations.gpu_mapping import baselines, refine
from optkit.errors import InputError
from optkit.result import Status
from tests.needs import needs_modules

needs_modules("pymetis", "kahip", extra="peers")

CLUSTER = Cluster(gpus_per_server=8, inter_bandwidth=1.25e9, intra_bandwidth=3e11)


def make_job(replicas: list[int], allreduce: str, *, act: float = 2e7, params: float = 5e7,
             rng: np.random.Generator | None = None) -> PipelineJob:
    """A pipeline job satisfying k_{s-1} d_out_{s-1} = k_s d_in_s; optional random profile."""
    stages = []
    for s, k in enumerate(replicas):
        a = act if rng is None else float(rng.uniform(0.2, 2.0)) * act
        h = params * (s + 1) if rng is None else float(rng.uniform(0.1, 3.0)) * params
        d_out = 0.0 if s == len(replicas) - 1 else a
        d_in = 0.0 if s == 0 else stages[-1].out_bytes * replicas[s - 1] / k
        stages.append(Stage(k, 0.02 * (s + 1), 0.04 * (s + 1), d_in, d_out, h))
    return PipelineJob(tuple(stages), allreduce)


def random_servers(n: int, rng: np.random.Generator, g: int = 8, ones: bool = False) -> tuple[int, ...]:
    caps: list[int] = []
    while sum(caps) < n:
        c = 1 if ones and rng.random() < 0.4 else int(rng.integers(1, g + 1))
        caps.append(min(c, n - sum(caps)))
    return tuple(caps)


def instances(count: int = 16, seed: int = 7) -> list[GpuMappingInstance]:
    """Seeded ring and tree instances with varied server patterns, 1-GPU servers included."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n_st = int(rng.integers(1, 6))
        reps = [int(r) for r in rng.integers(1, 6, size=n_st)]
        job = make_job(reps, "ring" if i % 2 == 0 else "tree", rng=rng)
        out.append(GpuMappingInstance(CLUSTER, job, random_servers(job.n_replicas, rng, ones=i % 3 == 0)))
    # fixed patterns: all 1-GPU servers, one server, a big server and singletons, two full servers
    job = make_job([2, 3, 2], "ring")
    out += [GpuMappingInstance(CLUSTER, job, (1,) * 7), GpuMappingInstance(CLUSTER, job, (7,)),
            GpuMappingInstance(CLUSTER, job, (4, 1, 1, 1))]
    job = make_job([4, 4, 4, 4], "tree")
    out += [GpuMappingInstance(CLUSTER, job, (8, 8)), GpuMappingInstance(CLUSTER, job, (8, 1, 1, 1, 1, 1, 1, 1, 1))]
    return out


INSTANCES = instances()


def _sizes_exact(inst: GpuMappingInstance, assignment: list[list[int]]) -> bool:
    flat = np.concatenate([np.asarray(r, dtype=int) for r in assignment])
    return np.array_equal(np.bincount(flat, minlength=len(inst.servers)), np.asarray(inst.servers))


# ----------------------------------------------------------------------------- every algorithm
@pytest.mark.parametrize("objective", ["cut", "alpha"])
def test_every_algorithm_returns_a_feasible_mapping(objective: str) -> None:
    runners = [baselines.run_metis, baselines.run_kahip, baselines.run_random, refine.run_heavy_edge_refine]
    for inst in INSTANCES:
        for run in runners:
            for seed in (0, 1):
                res = run(inst, objective=objective, time_limit=None, seed=seed)
                assert res.status is Status.FEASIBLE
                ev = evaluate(inst, res.solution)
                assert ev.feasible, (run.__name__, inst.servers, ev.violations)


def test_registered_in_the_algorithm_table() -> None:
    from optkit.formulations.gpu_mapping import FORMULATION
    inst = INSTANCES[3]
    for name in ("metis", "kahip", "random", "heavy-edge-refine"):
        res = FORMULATION.algorithms[name].run(inst, objective="cut", time_limit=None, seed=3)
        assert evaluate(inst, res.solution).feasible


# ----------------------------------------------------------------------------- repair
def test_repair_gives_exact_sizes_with_the_fewest_moves() -> None:
    rng = np.random.default_rng(0)
    for inst in INSTANCES:
        n, k = inst.job.n_replicas, len(inst.servers)
        for _ in range(3):
            sv = rng.integers(0, k, size=n)
            fixed, moves = baselines.repair_sizes(inst.job.adjacency, sv, inst.servers)
            load = np.bincount(sv, minlength=k)
            assert np.array_equal(np.bincount(fixed, minlength=k), np.asarray(inst.servers))
            assert moves == int(np.maximum(load - np.asarray(inst.servers), 0).sum())
            assert int((fixed != sv).sum()) == moves


def test_repair_picks_the_least_cut_increase() -> None:
    # path 0-1-2-3 with weights 5, 1, 5; servers (2, 2); everything on server 0
    a = np.zeros((4, 4))
    for u, v, w in [(0, 1, 5.0), (1, 2, 1.0), (2, 3, 5.0)]:
        a[u, v] = a[v, u] = w
    fixed, moves = baselines.repair_sizes(a, np.array([0, 0, 0, 0]), [2, 2])
    assert moves == 2
    assert fixed.tolist() in ([0, 0, 1, 1], [1, 1, 0, 0])


def test_metis_and_kahip_record_repairs_and_reach_exact_sizes() -> None:
    for inst in INSTANCES:
        for fn in (baselines.metis_mapping, baselines.kahip_mapping):
            assignment, info = fn(inst.job, inst.servers, seed=0)
            assert _sizes_exact(inst, assignment)
            assert info["repaired"] == (info["moved_vertices"] > 0)
            assert info["cut"] == pytest.approx(evaluate(inst, {"assignment": assignment}).objectives["cut"])
        a2, info2 = baselines.metis_mapping(inst.job, inst.servers, seed=0, target_weights=False)
        assert _sizes_exact(inst, a2)


def test_match_parts_to_servers_minimises_moves() -> None:
    rng = np.random.default_rng(1)
    for _ in range(30):
        k = int(rng.integers(2, 6))
        caps = rng.integers(1, 6, size=k)
        sizes = rng.multinomial(int(caps.sum()), np.ones(k) / k)
        sigma = baselines.match_parts_to_servers(sizes, caps)
        assert sorted(sigma.tolist()) == list(range(k))
        kept = np.minimum(sizes, caps[sigma]).sum()
        best = max(np.minimum(sizes, caps[list(p)]).sum() for p in itertools.permutations(range(k)))
        assert kept == best


# ----------------------------------------------------------------------------- KaHIP dummies
@pytest.mark.parametrize("caps", [(5, 7, 8, 1, 2), (4, 6, 5), (1, 7, 1), (4, 8, 2, 5), (8, 8, 8, 8)])
def test_kahip_dummy_weights_force_one_dummy_per_part(caps: tuple[int, ...]) -> None:
    big, dw, eps = baselines.kahip_dummy_weights(caps)
    k, n = len(caps), sum(caps)
    total = int(dw.sum()) + n
    assert total == k * big  # so ceil(W / k) = L
    assert int((1 + eps) * np.ceil(total / k)) == big  # KaHIP's block bound is exactly L
    top = sorted(dw.tolist())[:2]
    assert top[0] + top[1] > big  # two dummies never fit in one block


@pytest.mark.parametrize("caps", [(8, 8), (4, 6, 5), (4, 8, 2, 5), (8, 8, 8, 8), (1, 4, 8, 2)])
def test_kahip_dummy_construction_needs_no_repair(caps: tuple[int, ...]) -> None:
    """On these graphs KaFFPa (strong) honours the balance bound, and the construction then
    forces the exact sizes: the dummies land one per part and nothing is moved."""
    n = sum(caps)
    reps = [4] * (n // 4) + ([n % 4] if n % 4 else [])
    job = make_job(reps, "ring")
    for seed in range(3):
        assignment, info = baselines.kahip_mapping(job, caps, seed=seed, mode="strong")
        assert info["dummies_ok"] and not info["repaired"] and info["moved_vertices"] == 0
        flat = np.concatenate([np.asarray(r) for r in assignment])
        assert np.bincount(flat, minlength=len(caps)).tolist() == list(caps)


# ----------------------------------------------------------------------------- random
def test_random_is_reproducible_and_seed_dependent() -> None:
    job = make_job([4, 4, 4, 4], "ring")
    caps = (8, 4, 2, 1, 1)
    a = baselines.random_mapping(job, caps, seed=5)
    assert a == baselines.random_mapping(job, caps, seed=5)
    others = {tuple(map(tuple, baselines.random_mapping(job, caps, seed=s))) for s in range(6, 16)}
    assert len(others | {tuple(map(tuple, a))}) > 5
    inst = GpuMappingInstance(CLUSTER, job, caps)
    assert evaluate(inst, {"assignment": a}).feasible


def test_random_is_uniform_on_a_tiny_instance() -> None:
    job = make_job([2, 2], "ring")
    counts: dict[tuple, int] = {}
    for s in range(3000):
        key = tuple(map(tuple, baselines.random_mapping(job, (2, 1, 1), seed=s)))
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 12  # 4!/(2!1!1!)
    assert max(counts.values()) < 1.35 * min(counts.values())


# ----------------------------------------------------------------------------- heavy-edge-refine
@pytest.mark.parametrize("objective", ["cut", "alpha"])
def test_refine_never_worse_than_heavy_edge(objective: str) -> None:
    for inst in INSTANCES:
        for seed in (0, 1):
            he = evaluate(inst, {"assignment": heavy_edge_job(inst.job, inst.servers, seed=seed)})
            a = refine.heavy_edge_refine(inst, objective=objective, seed=seed)
            ev = evaluate(inst, {"assignment": a})
            assert ev.feasible
            assert ev.objectives[objective] <= he.objectives[objective] * (1 + 1e-12)


def test_refine_is_deterministic_for_a_seed() -> None:
    inst = INSTANCES[5]
    for objective in ("cut", "alpha"):
        assert (refine.heavy_edge_refine(inst, objective=objective, seed=2)
                == refine.heavy_edge_refine(inst, objective=objective, seed=2))


def _enumerated_optimum(inst: GpuMappingInstance, objective: str) -> float:
    slots = np.repeat(np.arange(len(inst.servers)), inst.servers).tolist()
    best = np.inf
    for perm in set(itertools.permutations(slots)):
        a = assignment_from_vertex_servers(inst.job, perm)
        best = min(best, evaluate(inst, {"assignment": a}).objectives[objective])
    return best


def _small_job(reps: list[int], allreduce: str, h: float, act: float) -> PipelineJob:
    stages = []
    for s, k in enumerate(reps):
        d_in = 0.0 if s == 0 else act * reps[s - 1] / k
        d_out = 0.0 if s == len(reps) - 1 else act
        stages.append(Stage(k, 0.01, 0.02, d_in, d_out, h * (s + 1)))
    return PipelineJob(tuple(stages), allreduce)


@pytest.mark.parametrize("objective", ["cut", "alpha"])
@pytest.mark.parametrize("reps,caps,allreduce,h,act", [
    ([3, 3], (4, 2), "ring", 1e6, 2e7),          # 6 replicas
    ([2, 3, 2], (3, 3, 1), "tree", 3e7, 1e6),     # 7 replicas
])
def test_refine_beats_heavy_edge_and_reaches_the_enumerated_optimum(objective, reps, caps, allreduce, h, act) -> None:
    inst = GpuMappingInstance(Cluster(4, 1.25e9, 3e11), _small_job(reps, allreduce, h, act), caps)
    he = evaluate(inst, {"assignment": heavy_edge_job(inst.job, caps, seed=0)}).objectives[objective]
    ref = evaluate(inst, {"assignment": refine.heavy_edge_refine(inst, objective=objective, seed=0)}).objectives[objective]
    opt = _enumerated_optimum(inst, objective)
    assert ref < he * (1 - 1e-6)  # Heavy-Edge is suboptimal here and the refinement fixes it
    assert ref == pytest.approx(opt, rel=1e-12)


def test_refine_info_and_time_limit() -> None:
    inst = GpuMappingInstance(CLUSTER, make_job([2] * 16, "ring", params=2e9), (8, 5, 3, 6, 5, 2, 1, 2))
    res = refine.run_heavy_edge_refine(inst, objective="alpha", time_limit=1e-9, seed=0)  # past at once
    assert evaluate(inst, res.solution).feasible
    assert res.info["objective"] <= res.info["start_objective"]
    res = refine.run_heavy_edge_refine(inst, objective="cut", time_limit=None, seed=0)
    assert res.info["objective"] <= res.info["start_objective"]
    with pytest.raises(ValueError):
        refine.heavy_edge_refine(inst, objective="makespan")


# ----------------------------------------------------------------------------- input checks
@pytest.mark.parametrize("caps", [(8, 8), (2, 1), (0, 15), ()])
@pytest.mark.parametrize("call", [
    lambda job, caps: baselines.random_mapping(job, caps, seed=0),
    lambda job, caps: baselines.metis_mapping(job, caps, seed=0),
    lambda job, caps: baselines.kahip_mapping(job, caps, seed=0),
    lambda job, caps: heavy_edge_job(job, caps, seed=0),
], ids=["random", "metis", "kahip", "heavy-edge"])
def test_free_gpus_must_be_positive_and_add_up_to_the_replicas(call, caps: tuple[int, ...]) -> None:  # type: ignore[no-untyped-def]
    """A job of 15 replicas: positive counts adding to 16 or 3, a zero, or no server at all are
    each rejected by the mapping functions themselves (their callers' checks aside), naming
    ``free_gpus`` (Heavy-Edge names the server too: ``free_gpus[0]`` for the zero)."""
    job = make_job([4, 4, 4, 3], "ring")
    with pytest.raises(InputError) as err:
        call(job, caps)
    assert err.value.field == "free_gpus" or (caps == (0, 15) and err.value.field == "free_gpus[0]")


# ----------------------------------------------------------------------------- refine's state
def _recount(state: refine._CountState) -> None:
    """The incremental state equals the same state computed from scratch from ``state.sv``."""
    fresh = refine._CountState(state.job, state.cluster, state.sv, state.k)
    assert state.x.tolist() == fresh.x.tolist()
    np.testing.assert_allclose(state.conn, fresh.conn, rtol=0, atol=1e-6 * max(1.0, float(fresh.conn.max())))
    np.testing.assert_array_equal(np.isnan(state.beta), np.isnan(fresh.beta))
    np.testing.assert_allclose(np.nan_to_num(state.beta), np.nan_to_num(fresh.beta), rtol=1e-12)


def test_refine_state_stays_equal_to_a_recount_under_every_move() -> None:
    """heavy-edge-refine's moves (a vertex swap, the best count swap of a stage pair, setting a
    server's column) update the counts x, the connectivity conn = A onehot(server) and the stage
    times beta incrementally; after each of 40 seeded moves per instance they equal a recount,
    and setting a column gives exactly that column with the pair's totals kept."""
    rng = np.random.default_rng(11)
    checked = 0
    for inst in INSTANCES:
        k = len(inst.servers)
        if k < 2:
            continue
        sv = vertex_servers(inst.job, heavy_edge_job(inst.job, inst.servers, seed=0))
        state = refine._CountState(inst.job, inst.cluster, sv, k)
        for step in range(40):
            a_, b_ = (int(v) for v in rng.choice(k, size=2, replace=False))
            move = step % 3
            if move == 0:
                us, vs = np.nonzero(state.sv == a_)[0], np.nonzero(state.sv == b_)[0]
                state.swap_vertices(int(rng.choice(us)), int(rng.choice(vs)))
            elif move == 1:
                s_ = int(rng.choice(np.nonzero(state.x[:, a_])[0]))
                t_ = int(rng.choice(np.nonzero(state.x[:, b_])[0]))
                u, v = state.count_swap(a_, b_, s_, t_)
                assert (state.st[u], state.sv[u], state.st[v], state.sv[v]) == (s_, b_, t_, a_)
            else:
                pair = state.x[:, a_] + state.x[:, b_]
                xa_new = np.zeros_like(pair)
                for _ in range(int(state.x[:, a_].sum())):  # same total on a, drawn within the pair's counts
                    xa_new[int(rng.choice(np.nonzero(xa_new < pair)[0]))] += 1
                refine._set_column_pair(state, a_, b_, xa_new)
                assert state.x[:, a_].tolist() == xa_new.tolist()
                assert (state.x[:, a_] + state.x[:, b_]).tolist() == pair.tolist()
            _recount(state)
            checked += 1
    assert checked >= 600


def _swap_key(state: refine._CountState, quantum: float, depth: int, swap: tuple[int, int, int, int]) -> list[float]:
    """The truncated leximax key of the counts after ``swap`` (a, b, s, t), from scratch: every
    cell's stage time after the swap, rounded to ``quantum``, empty cells -inf, sorted down."""
    a_, b_, s_, t_ = swap
    x = state.x.copy()
    x[s_, a_] -= 1
    x[s_, b_] += 1
    x[t_, b_] -= 1
    x[t_, a_] += 1
    beta = stage_times(state.job, state.cluster, x)
    cells = np.sort(np.where(np.isnan(beta), -np.inf, np.round(beta / quantum)).ravel())[::-1]
    return list(np.concatenate([cells, np.full(max(0, depth - cells.size), -np.inf)])[:depth])


@pytest.mark.parametrize("depth", [1, 3, 8])
def test_best_count_swap_is_the_leximax_best_of_every_allowed_swap(depth: int) -> None:
    """refine's vectorised choice of a count swap equals brute force: over every swap (a, b, s, t)
    with a != b, s != t, a replica of s on a and of t on b, and the cells allowed to move that
    way (seeded masks, or none masked), the one with the smallest truncated leximax key, ties to
    the lowest (a, b, s, t); None when no swap is allowed."""
    rng = np.random.default_rng(depth)
    compared = 0
    for inst in INSTANCES:
        k, n_st = len(inst.servers), len(inst.job.stages)
        if k < 2 or n_st < 2:
            continue
        sv = vertex_servers(inst.job, heavy_edge_job(inst.job, inst.servers, seed=0))
        state = refine._CountState(inst.job, inst.cluster, sv, k)
        quantum = 1e-9 * float(np.nanmax(state.beta))
        for masked in (False, True):
            up_ok = rng.random((n_st, k)) < 0.7 if masked else np.ones((n_st, k), dtype=bool)
            down_ok = rng.random((n_st, k)) < 0.7 if masked else np.ones((n_st, k), dtype=bool)
            allowed = [(a_, b_, s_, t_) for a_ in range(k) for b_ in range(k) for s_ in range(n_st)
                       for t_ in range(n_st)
                       if a_ != b_ and s_ != t_ and state.x[s_, a_] >= 1 and state.x[t_, b_] >= 1
                       and down_ok[s_, a_] and up_ok[s_, b_] and down_ok[t_, b_] and up_ok[t_, a_]]
            got = refine._best_count_swap(state, quantum, depth, up_ok, down_ok)
            if not allowed:
                assert got is None
                continue
            key, swap = min((_swap_key(state, quantum, depth, w), w) for w in allowed)
            assert got is not None and got[1] == swap and list(got[0]) == key
            compared += 1
    assert compared >= 20
