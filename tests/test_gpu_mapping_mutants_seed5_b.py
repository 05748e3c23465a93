"""gpu-mapping: the METIS/KaHIP/random baselines' results, Table II's plug-in series, brute force's
limits and deadline checks, the tensor-parallel count model's coefficients, CP-SAT's warm start
and hint, Heavy-Edge's readings, the LLM experiment's claims and notes, the refinement searches'
accounts and the LLM sampler's limits, each against a fact derived apart from the code: a hand
count, an identity between two returned values, the model's own stage times, a documented limit.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping import exact
from optkit.formulations.gpu_mapping.heavy_edge import heavy_edge_job
from optkit.formulations.gpu_mapping.model import (Cluster, GpuMappingInstance, PipelineJob, Stage, evaluate,
                                                   stage_times)
from optkit.result import Result, Status
from optkit.solve import solve

CLUSTER = Cluster(8, 1.25e9, 3e11)


def _split_tp_instance() -> GpuMappingInstance:
    """One replica of two tensor slices on two servers of one free GPU each: every mapping parts
    the slices (Sec. VI's one-server rule cannot hold)."""
    return GpuMappingInstance.from_dict({
        "problem": "gpu-mapping", "cluster": {"gpus_per_server": 2, "inter_bandwidth": 1.25e9,
                                              "intra_bandwidth": 3e11},
        "job": {"allreduce": "ring", "stages": [{"replicas": 1, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0,
                                                 "out_bytes": 0, "param_bytes": 1e8, "tensor_parallel": 2,
                                                 "tp_bytes": 1e8}]},
        "servers": [1, 1]})


# ----------------------------------------------------------------------------- baselines.py
@pytest.mark.parametrize("algorithm", ["metis", "kahip", "random"])
def test_gpu_mapping_baselines_own_time_is_within_the_runs_wall_time(algorithm: str) -> None:
    """``info["wall_time_s"]`` is the seconds the partitioner's run took: part of the run that
    ``solve`` times (``wall_time_s``), so between 0 and that."""
    job = PipelineJob((Stage(2, .1, .2, 0, 1e6, 2e7), Stage(2, .1, .2, 1e6, 0, 2e7)), "ring")
    r = solve("gpu-mapping", GpuMappingInstance(CLUSTER, job, (2, 1, 1)), algorithm, seed=0)
    assert r.status == Status.FEASIBLE
    assert 0.0 <= r.info["wall_time_s"] <= r.wall_time_s


@pytest.mark.parametrize("algorithm, who, tool", [("metis", "METIS", "pymetis"), ("kahip", "KaHIP", "kahip")])
def test_gpu_mapping_a_partition_that_splits_a_tensor_parallel_replica_is_no_solution_with_its_account(
        algorithm: str, who: str, tool: str) -> None:
    """Two slices of one replica on two one-GPU servers: the partitioner must part them, so the run
    is ``no_solution`` naming the replica; its ``info`` still reports the partition (the tool, the
    part sizes 1 and 1, the tensor all-reduce edge cut) and its own time within the run's."""
    r = solve("gpu-mapping", _split_tp_instance(), algorithm, seed=0)
    assert r.status == Status.NO_SOLUTION and r.solution is None
    assert r.message.startswith(f"{who}'s partition splits a tensor-parallel replica: replica 0 of stage 0 has its "
                                "2 tensor slices on servers [0, 1]")
    assert r.info["tool"] == tool and r.info["part_sizes"] == [1, 1] and r.info["cut"] > 0
    assert 0.0 <= r.info["wall_time_s"] <= r.wall_time_s


# ----------------------------------------------------------------------------- claims.py
def test_gpu_mapping_table2_series_of_an_algorithm_that_finds_nothing_has_no_means(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A plug-in that returns no mapping on any case: no PITT of its own, so no mean of its
    PITTs, none of Heavy-Edge's over the same (no) cases, and no ratio; each case's row still
    has Heavy-Edge's PITT."""
    import functools
    import sys

    from optkit.formulations.gpu_mapping import claims, generate

    monkeypatch.setattr(generate, "table2_cases", functools.partial(generate.table2_cases, cases=2))
    monkeypatch.setattr(sys.modules["optkit.solve"], "solve",
                        lambda *a, **kw: Result(Status.NO_SOLUTION, message="found nothing"))
    out = claims.series_vgg19("nothing", readings={"vgg19_layout": "4-4-4-2-1-1"}, seed=0, scale="ci")
    assert (out["pitt_ms"], out["heavy_edge_pitt_ms"], out["over_heavy_edge"]) == (None, None, None)
    rows = out["_details"]["cases"]
    assert len(rows) == 2
    assert all(r["status"] == "no_solution" and r["pitt_ms"] is None and r["he_pitt_ms"] > 0 for r in rows)


# ----------------------------------------------------------------------------- exact.py: brute force
def _plain(k: tuple[int, ...], servers: tuple[int, ...], allreduce: str = "ring") -> GpuMappingInstance:
    """Stages of ``k`` replicas, each sending 1 MB per replica to the next (eq. 4's balance)."""
    job = PipelineJob(tuple(Stage(r, 0.1, 0.2, 0.0 if s == 0 else 1e6 * k[s - 1] / r,
                                  0.0 if s == len(k) - 1 else 1e6, 2e7) for s, r in enumerate(k)), allreduce)
    return GpuMappingInstance(CLUSTER, job, servers)


class _Passed:
    """A deadline that has passed (``expired`` is true), counting how often it is asked."""

    def __init__(self) -> None:
        self.asked = 0

    def expired(self) -> bool:
        self.asked += 1
        return True


def test_gpu_mapping_brute_force_stops_at_its_first_deadline_check_after_an_incumbent(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Four stages of two replicas on four two-GPU servers: 282 count matrices (4 x 4 tables with
    every margin 2). With the deadline passed, the enumeration stops at its first check once it
    has an incumbent (it checks every 64 matrices), so the run is ``time_limit`` with a feasible
    mapping, asked once; the full enumeration would have been ``optimal``."""
    inst = _plain((2, 2, 2, 2), (2, 2, 2, 2))
    assert exact.count_tables([2] * 4, [2] * 4) == 282
    passed = _Passed()
    monkeypatch.setattr(exact, "current_deadline", lambda: passed)
    r = exact.run_brute_force(inst, objective="alpha")
    assert r.status == Status.TIME_LIMIT and r.info == {"count_matrices": 282, "cut_while": "enumerating"}
    assert passed.asked == 1 and evaluate(inst, r.solution).feasible


def test_gpu_mapping_brute_force_checks_an_enclosing_deadline_every_64_matrices(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Called directly (no deadline of its own), brute force checks the enclosing solve's deadline
    as it enumerates, at least once per 64 of the 282 count matrices (so at least 5 times), and
    still finds the optimum when the deadline does not pass (the count DP's optimum agrees)."""
    from optkit.formulations.gpu_mapping.count_dp import optimal_alpha_counts

    inst = _plain((2, 2, 2, 2), (2, 2, 2, 2))
    stages_seen: list[str] = []
    monkeypatch.setattr(exact, "check_deadline", stages_seen.append)
    value, assignment = exact.brute_force(inst, "alpha")
    assert len(stages_seen) >= math.ceil(282 / 64) and set(stages_seen) == {"enumerating count matrices"}
    found = optimal_alpha_counts(inst.job, inst.cluster, list(inst.servers))
    assert found is not None and value == pytest.approx(found[0])
    assert evaluate(inst, {"assignment": assignment}).objectives["alpha"] == pytest.approx(value)


def test_gpu_mapping_brute_force_tables_limit_is_inclusive_and_its_refusal_names_the_solvers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Three stages of two replicas on three two-GPU servers have 21 count matrices (3 x 3 tables
    with every margin 2). At a limit of 21 brute force runs (the limit is "more than"); at 20 it
    refuses with the message naming the limit and the solvers to use."""
    inst = _plain((2, 2, 2), (2, 2, 2))
    monkeypatch.setattr(exact, "BRUTE_FORCE_MAX_TABLES", 21)
    assert exact.run_brute_force(inst, objective="alpha").status == Status.OPTIMAL
    monkeypatch.setattr(exact, "BRUTE_FORCE_MAX_TABLES", 20)
    with pytest.raises(InputError) as err:
        exact.run_brute_force(inst, objective="alpha")
    assert (err.value.field, err.value.message) == (
        "instance", "is too large for brute-force: more than 20 count matrices; use cpsat or highs")


def test_gpu_mapping_brute_force_arrangements_limit_is_inclusive(monkeypatch: pytest.MonkeyPatch) -> None:
    """One ring stage of four replicas on two two-GPU servers: one count matrix, whose stage splits
    into two unlabelled blocks of two in C(4, 2) / 2 = 3 ways. A limit of 3 arrangements admits it
    (cut optimum 2 W = 2 * 2 (k-1) h / k = 6e7 bytes: the ring cut twice), a limit of 2 does not."""
    job = PipelineJob((Stage(4, 0.1, 0.2, 0.0, 0.0, 4e7),), "ring")
    inst = GpuMappingInstance(CLUSTER, job, (2, 2))
    monkeypatch.setattr(exact, "BRUTE_FORCE_MAX_ARRANGEMENTS", 3)
    r = exact.run_brute_force(inst, objective="cut")
    assert r.status == Status.OPTIMAL and r.bound == pytest.approx(2 * 2 * 3 * 4e7 / 4)
    monkeypatch.setattr(exact, "BRUTE_FORCE_MAX_ARRANGEMENTS", 2)
    with pytest.raises(InputError, match=r"stage 0 has up to 3 arrangements per count matrix \(limit 2\)"):
        exact.run_brute_force(inst, objective="cut")


# ----------------------------------------------------------------------------- exact.py: count model
def _tp_instance() -> GpuMappingInstance:
    """Three stages: 2 replicas of 2 tensor slices, 3 plain replicas, 2 replicas of 2 slices (11
    GPUs) on servers of 4, 4 and 3 free GPUs, activations both ways between every pair."""
    job = PipelineJob((Stage(2, 0.02, 0.04, 0.0, 3e6, 1e8, tensor_parallel=2, tp_bytes=5e7),
                       Stage(3, 0.03, 0.05, 2e6, 4e6, 2e8),
                       Stage(2, 0.01, 0.03, 6e6, 0.0, 3e8, tensor_parallel=2, tp_bytes=4e7)), "ring")
    return GpuMappingInstance(CLUSTER, job, (4, 4, 3))


def test_gpu_mapping_tp_count_coefficients_give_the_models_stage_times() -> None:
    """The count model of a tensor-parallel job (module docstring: beta[s, m] = a_s + AR_s(x[s, m]) +
    b^-_s x[s-1, m] + b^+_s x[s+1, m], replica counts x, the missing neighbour's terms dropped for
    the first and last stage) against the model's own stage times (``stage_times`` on GPU counts,
    the referee) on every count matrix the servers admit; b^-_0 and b^+_2 are 0 (no such
    neighbour) and b^+_s is a slice's share of eq. (5), ``(2 d^out / k_{s+1})(1/B_intra -
    g/B_inter) / t_s``."""
    inst = _tp_instance()
    co = exact.coefficients(inst)
    assert co.t == (2, 1, 2) and co.k == (2, 3, 2)
    assert co.coef_prev[0] == 0.0 and co.coef_next[2] == 0.0
    g, bi, ba = 8.0, 1.25e9, 3e11
    assert co.coef_next[0] == pytest.approx((2 * 3e6 / 3) * (1 / ba - g / bi) / 2)
    assert co.coef_next[1] == pytest.approx((2 * 4e6 / 2) * (1 / ba - g / bi) / 1)
    t = np.array(co.t)[:, None]
    seen = 0
    # replicas of each stage on servers 0 and 1 (server 2 takes the rest), kept where the GPUs fill 4, 4, 3
    for a0, b0, a1, b1, a2, b2 in itertools.product(range(3), range(3), range(4), range(4), range(3), range(3)):
        x = np.array([[a0, b0, 2 - a0 - b0], [a1, b1, 3 - a1 - b1], [a2, b2, 2 - a2 - b2]])
        if x.min() < 0 or ((x * t).sum(axis=0) != np.array([4, 4, 3])).any():
            continue
        seen += 1
        ref = stage_times(inst.job, inst.cluster, x * t)
        for s, m in zip(*np.nonzero(x)):
            beta = co.base[s] + co.allreduce[s][x[s, m]]
            if s > 0:
                beta += co.coef_prev[s] * x[s - 1, m]
            if s < 2:
                beta += co.coef_next[s] * x[s + 1, m]
            assert beta == pytest.approx(ref[s, m], rel=1e-12), (x.tolist(), s, m)
    assert seen >= 3


def _disconnected() -> GpuMappingInstance:
    """Three ring stages of 3, 2, 3 replicas with no activations between them, on two four-GPU
    servers: the job graph falls apart into three rings, so Heavy-Edge meets a remainder with no
    edge to its set and draws a vertex (seeded, heavy_edge.py step 2c); seeds 1, 6 and 9 draw
    mappings of alpha 1.15 s, seeds 0, 2 and 3 of 2.86 s."""
    job = PipelineJob(tuple(Stage(r, 0.1, 0.2, 0.0, 0.0, 1e8 * (i + 1)) for i, r in enumerate((3, 2, 3))), "ring")
    return GpuMappingInstance(CLUSTER, job, (4, 4))


def test_gpu_mapping_cpsat_warm_start_is_heavy_edge_of_the_runs_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CP-SAT run cut by its time limit while building its model returns the Heavy-Edge warm
    start (module docstring): Heavy-Edge with the run's seed, so its alpha is that seed's."""
    from optkit.deadline import DeadlineReached

    def cut_short(*args: Any, **kwargs: Any) -> Any:
        raise DeadlineReached("building the CP-SAT model", 1.0)

    inst = _disconnected()
    monkeypatch.setattr(exact, "build_cp_model", cut_short)
    alphas = {}
    for seed in (0, 1, 2, 3, 6, 9):
        he = evaluate(inst, {"assignment": heavy_edge_job(inst.job, inst.servers, seed=seed)}).objectives["alpha"]
        r = exact.run_cpsat(inst, objective="alpha", seed=seed, time_limit=10.0)
        assert r.status == Status.TIME_LIMIT and r.info["incumbent"] == "heavy-edge warm start"
        alphas[seed] = evaluate(inst, r.solution).objectives["alpha"]
        assert alphas[seed] == pytest.approx(he)
    assert len({round(a, 6) for a in alphas.values()}) == 2  # the seed matters on this instance


def test_gpu_mapping_cpsat_alpha_bound_of_a_job_with_nothing_to_do_is_zero() -> None:
    """A job with no compute and no bytes: every stage time is 0, so alpha is 0 and the proven
    lower bound CP-SAT reports can be no more than that."""
    job = PipelineJob((Stage(2, 0.0, 0.0, 0, 0, 0), Stage(2, 0.0, 0.0, 0, 0, 0)), "ring")
    inst = GpuMappingInstance(CLUSTER, job, (2, 1, 1))
    r = exact.run_cpsat(inst, objective="alpha", seed=0, workers=1)
    assert r.status == Status.OPTIMAL and evaluate(inst, r.solution).objectives["alpha"] == 0.0
    assert r.bound == 0.0


@pytest.mark.parametrize("objective, allreduce", [("alpha", "ring"), ("cut", "tree")])
def test_gpu_mapping_cpsat_hint_is_a_solution_of_its_model(objective: str, allreduce: str) -> None:
    """The hint built from a warm start is that mapping in the model's variables: every hinted
    value fixed, the model stays feasible (the one-hot z[s, m, .] has its 1 at the hinted count),
    and the hinted counts are the warm start's."""
    from ortools.sat.python import cp_model

    inst = _plain((3, 2, 3), (4, 2, 2), allreduce)
    warm, value = exact._warm_start(inst, objective, 0)
    cm = exact.build_cp_model(inst, objective, warm_start=warm, upper_bound=value)
    x = exact._replica_counts(inst, warm)
    assert all(cm.hint[cm.x[s, m]] == x[s, m] for s in range(3) for m in range(3))
    for (s, m, v), lit in cm.z.items():
        assert cm.hint[lit] == int(x[s, m] == v)
    for var, val in cm.hint.items():
        cm.model.Add(var == val)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    assert solver.Solve(cm.model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


# ----------------------------------------------------------------------------- heavy_edge.py, __init__.py
def test_gpu_mapping_heavy_edge_refuses_an_unknown_server_start_naming_it() -> None:
    """An unknown ``server_start`` is bad input: the message names the field and the value given."""
    job = _plain((2, 2), (2, 2)).job
    with pytest.raises(InputError) as err:
        heavy_edge_job(job, [2, 2], server_start="lowest-pair")
    assert (err.value.field, err.value.message) == ("server_start",
                                                    "must be one of heaviest-pair, from-placed; got lowest-pair")


def test_gpu_mapping_heavy_edge_entry_without_readings_runs_the_papers_defaults() -> None:
    """The algorithm-table entry ``heavy-edge`` called without its readings runs Heavy-Edge at
    their defaults (``heaviest-pair`` and ``unassigned``): Heavy-Edge's own mapping."""
    from optkit.formulations.gpu_mapping import FORMULATION

    inst = _plain((3, 2, 3), (4, 2, 2))
    r = FORMULATION.algorithms["heavy-edge"].run(inst, objective="cut", time_limit=None, seed=0)
    assert r.status == Status.FEASIBLE
    assert r.solution == {"assignment": heavy_edge_job(inst.job, inst.servers, seed=0, server_start="heaviest-pair",
                                                       single_gpu_weight="unassigned")}


# ----------------------------------------------------------------------------- llm_claims.py
def test_gpu_mapping_llm_claims_are_four_per_kind_and_paper_size_with_their_units() -> None:
    """The LLM experiment's claims (module docstring): for each kind (``tp``, ``moe``) and each
    paper-scale size (8, 32, 128 and 256 GPUs) the gap in %, whether CP-SAT proved the optimum
    (a 0/1 ratio), Heavy-Edge's time in ms and CP-SAT's in s; built afresh, they are the
    experiment's, and no claim has a paper value (Sec. VI states none)."""
    from optkit.formulations.gpu_mapping import llm_claims

    built = llm_claims._claims()
    units = {c.id: c.unit for c in built}
    want = {f"llm-gpu-mapping-{kind}-{gpus}-{what}": unit for gpus in (8, 32, 128, 256) for kind in ("tp", "moe")
            for what, unit in (("gap", "%"), ("proven", "ratio"), ("he-time", "ms"), ("exact-time", "s"))}
    assert units == want and len(built) == 32
    assert all(c.paper_value is None for c in built)
    assert [c.where for c in built[:2]] == [
        "Sec. VI, 3D-parallel (tensor-parallel) job of 8 GPUs: Heavy-Edge's per-iteration time over the exact model's",
        "Sec. VI, 3D-parallel (tensor-parallel) job of 8 GPUs: the exact model proved the optimum"]
    assert built == llm_claims.EXPERIMENTS["llm-gpu-mapping-gap"].claims


def _fake_row(data: dict[str, Any], time_limit: float, seed: int) -> dict[str, Any]:
    """A measured case without measuring: CP-SAT proves the 8-GPU cases only."""
    gpus = sum(data["servers"])
    return {"job": data["name"], "gpus": gpus, "servers": data["servers"], "he_alpha_s": 1.1, "cpsat_alpha_s": 1.0,
            "cpsat_status": "optimal" if gpus == 8 else "time_limit", "bound_s": 1.0, "gap_pct": 10.0,
            "he_time_s": 0.002, "cpsat_time_s": 0.5}


def test_gpu_mapping_llm_gap_notes_say_how_many_cases_were_proven(monkeypatch: pytest.MonkeyPatch) -> None:
    """The measurement's note names the scale's sizes and counts the cases CP-SAT proved out of all
    (here 2 of 4: the two 8-GPU cases), with the time limit; the diagnostics agree."""
    from optkit.formulations.gpu_mapping import llm_claims

    monkeypatch.setattr(llm_claims, "gap_case", lambda kind, gpus, seed: {"name": f"{kind}-{gpus}",
                                                                         "servers": [8] * (gpus // 8)})
    monkeypatch.setattr(llm_claims, "gap_row", _fake_row)
    out = llm_claims.measure_llm_gap(readings={}, seed=0, scale="ci")
    assert out["_notes"] == ["sizes 8, 32 GPUs; CP-SAT proved 2 of 4 cases optimal within 10 s (one worker)"]
    assert out["_diagnostics"]["cases proven optimal"] == 2.0 and out["_diagnostics"]["cases"] == 4.0
    assert [out[f"llm-gpu-mapping-{k}-{g}-proven"] for g in (8, 32) for k in ("tp", "moe")] == [1.0, 1.0, 0.0, 0.0]


def test_gpu_mapping_llm_series_rows_name_each_cases_kind_and_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plug-in series' rows carry the job, its kind and its size in GPUs; Heavy-Edge against
    itself is 1 on each case."""
    from optkit.formulations.gpu_mapping import llm_claims

    def case(kind: str, gpus: int, seed: int) -> dict[str, Any]:
        inst = _plain((gpus // 2, gpus // 2), (gpus // 2, gpus // 2))
        return {**inst.to_dict(), "problem": "gpu-mapping", "name": f"{kind}-{gpus}"}

    monkeypatch.setattr(llm_claims, "gap_case", case)
    monkeypatch.setitem(llm_claims.SIZES, "ci", (4, 8))
    out = llm_claims.series_llm_gap("heavy-edge", readings={}, seed=0, scale="ci")
    rows = out["_details"]["cases"]
    assert [(r["job"], r["kind"], r["gpus"]) for r in rows] == [("tp-4", "tp", 4), ("moe-4", "moe", 4),
                                                                 ("tp-8", "tp", 8), ("moe-8", "moe", 8)]
    assert all(r["status"] == "feasible" and r["alpha_s"] == r["heavy_edge_alpha_s"] > 0 for r in rows)
    assert {k: v for k, v in out.items() if k != "_details"} == {f"{k}_{g}_over_heavy_edge": 1.0
                                                                 for g in (4, 8) for k in ("tp", "moe")}


# ----------------------------------------------------------------------------- refine.py
def _refine_job() -> tuple[PipelineJob, Cluster]:
    """Three stages (3, 2, 1 replicas, heavy parameters in stage 0) for servers of 3, 2 and 1 GPUs."""
    job = PipelineJob((Stage(3, 0.02, 0.04, 0.0, 4e6, 5e8), Stage(2, 0.03, 0.06, 6e6, 2e6, 1e8),
                       Stage(1, 0.01, 0.02, 4e6, 0.0, 1e7)), "ring")
    return job, Cluster(4, 1.25e9, 3e11)


@pytest.mark.parametrize("start", [[0, 1, 2, 0, 1, 0], [1, 0, 2, 0, 0, 1]])
def test_gpu_mapping_alpha_kl_stops_once_a_round_changes_nothing(start: list[int]) -> None:
    """``alpha_kl`` rounds (KL passes, then a pair sweep) end when the pair sweep changes nothing:
    started from its own result, a fixed point, it makes one pass and no move or pair move,
    whatever ``max_passes`` allows."""
    from optkit.formulations.gpu_mapping.refine import alpha_kl

    job, cluster = _refine_job()
    sv1, first = alpha_kl(job, cluster, np.array(start), 3)
    assert first["moves"] >= 1  # the start was not a fixed point
    sv2, again = alpha_kl(job, cluster, sv1, 3, max_passes=20)
    assert sv2.tolist() == sv1.tolist()
    assert (again["passes"], again["moves"], again["pair_moves"]) == (1, 0, 0)


def test_gpu_mapping_kl_cut_gain_is_the_cut_removed_over_all_passes() -> None:
    """``kl_cut``'s ``gain`` is the total of the passes' kept gains, so it equals the cut of the
    start minus the cut of the result; on this seeded graph two passes keep swaps (a third keeps
    none), so a gain of one pass alone would fall short."""
    from optkit.formulations.gpu_mapping.refine import kl_cut

    rng = np.random.default_rng(7)
    n = 8
    a = np.triu(rng.integers(0, 4, (n, n)).astype(float), 1) * (rng.random((n, n)) < 0.5)
    a = a + a.T
    sv = rng.permutation(np.repeat([0, 1], 4))

    def cut(servers: np.ndarray) -> float:
        return float(a[servers[:, None] != servers[None, :]].sum() / 2)

    out, stats = kl_cut(a, sv, 2)
    assert stats["passes"] == 3 and np.bincount(out).tolist() == [4, 4]
    assert stats["gain"] == pytest.approx(cut(sv) - cut(out)) and cut(out) < cut(sv)


# ----------------------------------------------------------------------------- sample.py
def _kind(kind: int) -> Any:
    """Draws at their upper bound except the stage kind (``draw(0, 2)``: 0 plain, 1 tensor-parallel,
    2 MoE), refusing an empty range as Hypothesis's ``integers(lo, hi)`` does."""
    def draw(lo: int, hi: int) -> int:
        assert lo <= hi, f"empty range [{lo}, {hi}]"
        return kind if (lo, hi) == (0, 2) else hi
    return draw


def test_gpu_mapping_llm_sample_keeps_its_gpu_limit_with_tensor_parallel_stages() -> None:
    """``max_replicas`` bounds the GPUs of an LLM sample: 3 GPUs at most on servers of 4, with
    tensor-parallel degrees up to 4, gives a degree of at most 3 and at most 3 free GPUs."""
    from optkit.formulations.gpu_mapping.sample import sample

    d = sample(_kind(1), max_replicas=3, max_gpus_per_server=4, max_tensor_parallel=4, max_stages=2, max_servers=2)
    assert sum(d["servers"]) <= 3
    assert all(st.get("tensor_parallel", 1) <= 3 for st in d["job"]["stages"])
    assert d["job"]["stages"][0]["tensor_parallel"] == 3  # the largest degree that fits
    GpuMappingInstance.from_dict(d)


def test_gpu_mapping_llm_sample_on_one_gpu_servers_has_no_tensor_parallel_stage() -> None:
    """With one GPU per server no tensor-parallel replica (two slices or more on one server) fits:
    the stage drawn tensor-parallel is plain, and no empty range is drawn."""
    from optkit.formulations.gpu_mapping.sample import sample

    d = sample(_kind(1), max_replicas=4, max_gpus_per_server=1, max_tensor_parallel=4, max_stages=2, max_servers=4)
    assert d["servers"] == [1, 1, 1, 1]
    assert all("tensor_parallel" not in st for st in d["job"]["stages"])
    GpuMappingInstance.from_dict(d)


def test_gpu_mapping_llm_sample_draws_the_cluster_as_the_plain_sample_does() -> None:
    """Every draw at its upper bound: the LLM sampler's cluster is the plain sampler's largest
    choices (module ``sample``: 1.25e10 B/s between servers, 3e10 inside)."""
    from optkit.formulations.gpu_mapping.sample import sample

    def high(lo: int, hi: int) -> int:
        return hi

    d = sample(high, max_replicas=6, max_stages=2, max_servers=2, max_gpus_per_server=3, max_tensor_parallel=2)
    assert d["cluster"] == {"gpus_per_server": 3, "inter_bandwidth": 1.25e10, "intra_bandwidth": 3e10}
    low = sample(lambda lo, hi: 0 if (lo, hi) == (0, 1) else hi, max_replicas=6, max_stages=2, max_servers=2,
                 max_gpus_per_server=3, max_tensor_parallel=2)
    assert low["cluster"]["intra_bandwidth"] == 3e11
