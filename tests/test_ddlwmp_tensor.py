"""ddlwmp's tensor-parallel and MoE jobs (formulations/ddlwmp/tensor.py; A-SRPT paper Sec. VI, issue 37 item 3),
timed by gpu-mapping's job model (one model for both problems)."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.ddlwmp.bounds import lower_bound, quick_lower_bound
from optkit.formulations.ddlwmp.exact import brute_force, run_cpsat, run_highs
from optkit.formulations.ddlwmp.generate import generate
from optkit.formulations.ddlwmp.model import DdlwmpInstance, evaluate
from optkit.formulations.ddlwmp.online import OnlineScheduler
from optkit.formulations.ddlwmp.tensor import is_llm, tensor_parallel_of
from optkit.formulations.gpu_mapping.model import Cluster, GpuMappingInstance, PipelineJob, vertex_times
from optkit.formulations.gpu_mapping.model import evaluate as gm_evaluate
from optkit.online import Job
from optkit.result import Status
from tests.test_ddlwmp_policies import RUNS as POLICY_RUNS

RUNS = {name: run for name, run in POLICY_RUNS.items() if name != "a-srpt-perfect"}
"""A-SRPT and every baseline (the registered runs)."""
B_INTER, B_INTRA = 1.25e9, 3e11


def _stage(k: int, fwd: float = 0.01, bwd: float = 0.02, d_in: float = 0.0, d_out: float = 0.0, h: float = 0.0,
           **extra: Any) -> dict[str, Any]:
    return {"replicas": k, "fwd_time": fwd, "bwd_time": bwd, "in_bytes": d_in, "out_bytes": d_out,
            "param_bytes": h, **extra}


def _instance(models: dict[str, Any], jobs: list[dict[str, Any]], servers: int = 2, g: int = 4) -> DdlwmpInstance:
    return DdlwmpInstance.from_dict({"problem": "ddlwmp", "cluster": {"servers": servers, "gpus_per_server": g,
                                                                      "inter_bandwidth": B_INTER,
                                                                      "intra_bandwidth": B_INTRA},
                                     "models": models, "jobs": jobs})


def _slices_together(inst: DdlwmpInstance, schedule: dict[str, Any]) -> None:
    """The rule, checked here without evaluate: every replica's t slices on one server."""
    for entry in schedule["jobs"]:
        job = inst.models[next(j.model for j in inst.jobs if j.id == entry["id"])]
        t = tensor_parallel_of(job)
        for s, row in enumerate(entry["assignment"]):
            assert len(row) == job.stages[s].replicas * job.stages[s].units
            for r in range(len(row) // t):
                assert len(set(row[r * t:(r + 1) * t])) == 1, (entry["id"], s, r, row)


# ----------------------------------------------------------------------------- the model
def test_t1_annotated_model_is_timed_and_scheduled_exactly_as_the_plain_model() -> None:
    """tensor_parallel: 1 (and experts: 1) written out read as the paper's job itself (gpu-mapping's
    Stage drops them), so every policy's schedule is the plain model's."""
    stages = [_stage(3, 0.02, 0.04, 0.0, 4e6, 3e8), _stage(2, 0.01, 0.03, 6e6, 0.0, 1e8)]
    plain = PipelineJob.from_dict({"allreduce": "ring", "stages": stages}, "m")
    annotated = [dict(stages[0], tensor_parallel=1), dict(stages[1], experts=1)]
    llm = PipelineJob.from_dict({"allreduce": "ring", "stages": annotated}, "m")
    assert llm == plain and not is_llm(llm)
    jobs = [{"id": f"j{i}", "release": float(i), "model": "m", "iterations": 50 + 10 * i,
             "predicted_iterations": 40.0 + 10 * i} for i in range(5)]
    a_plain = _instance({"m": {"allreduce": "ring", "stages": stages}}, jobs, servers=3)
    a_llm = _instance({"m": {"allreduce": "ring", "stages": annotated}}, jobs, servers=3)
    for name, run in RUNS.items():
        s1 = run(a_plain, seed=0).solution
        s2 = run(a_llm, seed=0).solution
        assert s1 == s2, name


def test_alpha_of_a_tensor_parallel_and_an_moe_placement_by_hand() -> None:
    """Eqs. (4)-(7) extended as gpu-mapping's ``vertex_times`` docstring writes them, worked by hand."""
    # TP: one stage, k = 2 replicas of t = 2 slices, h = 1e8 B, tp_bytes = 3e9 B, servers of g = 2 GPUs,
    # replica 0 on server 0, replica 1 on server 1 (vertices replica-major: [[0, 0, 1, 1]])
    tp = _instance({"tp": {"allreduce": "ring", "stages": [_stage(2, h=1e8, tensor_parallel=2, tp_bytes=3e9)]}},
                   [{"id": "a", "release": 0, "model": "tp", "iterations": 10}], g=2)
    ev = evaluate(tp, {"jobs": [{"id": "a", "start": 0.0, "assignment": [[0, 0, 1, 1]]}]})
    # comp (stage_compute, reading 'added'): p^f + p^b = 0.03 plus the slices' all-reduce inside a server,
    #   TP = 2(t-1)·tp_bytes/(t·B_intra) = 2·1·3e9/(2·3e11) = 0.01;
    # comm: one stage, no pipeline or a2a edge: 0;
    # AllReduce (eq. 6 per position j): D = 2(k-1)(h/u)/k = 2·1·5e7/2 = 5e7; the two j-th slices are on
    #   two servers, so D/((X/g)·B_inter) with X = 2 GPUs of the stage on the vertex's server, g = 2:
    #   5e7/1.25e9 = 0.04.  alpha = 0.03 + 0.01 + 0.04 = 0.08 s.
    # (Recomputed for gpu-mapping's model; tensor.py's own eqs. gave 0.12: there a slice all-reduced a
    # replica's 2(k-1)h/k = 1e8 B, here its 1/t share, h/u.)
    assert ev.feasible and ev.objectives["total_completion"] == pytest.approx(10 * 0.08, rel=1e-12)
    # MoE: one replica of e = 4 expert groups, uniform routing, expert_bytes 1.6e9 B, two groups per server
    # of 2 GPUs: P[i, j] = q_j/e = 1/16, so w_ij = expert_bytes·(P[i,j] + P[j,i]) = 1.6e9/8 = 2e8 B
    moe = _instance({"moe": {"allreduce": "ring", "stages": [_stage(1, experts=4, expert_bytes=1.6e9)]}},
                    [{"id": "a", "release": 0, "model": "moe", "iterations": 10}], g=2)
    ev = evaluate(moe, {"jobs": [{"id": "a", "start": 0.0, "assignment": [[0, 0, 1, 1]]}]})
    inter = 2 * 2 * 2e8 / B_INTER   # two a2a edges to the other server, each w·g/B_inter with g = 2
    intra = 2e8 / B_INTRA           # one beside it, w/B_intra; k = 1: no AllReduce
    assert ev.objectives["total_completion"] == pytest.approx(10 * (0.03 + inter + intra), rel=1e-12)
    # Zipf routing makes expert 0 the hot one: a larger alpha than uniform on the same placement
    zipf = _instance({"moe": {"allreduce": "ring", "stages": [
        _stage(1, experts=4, expert_bytes=1.6e9, routing="zipf", routing_skew=1.5)]}},
        [{"id": "a", "release": 0, "model": "moe", "iterations": 10}], g=2)
    assert evaluate(zipf, {"jobs": [{"id": "a", "start": 0.0, "assignment": [[0, 0, 1, 1]]}]}).objectives[
        "total_completion"] > ev.objectives["total_completion"]


@pytest.mark.parametrize("seed", range(4))
def test_ddlwmp_times_a_placement_as_gpu_mapping_evaluates_it(seed: int) -> None:
    """One model for both problems: ddlwmp's alpha of a TP / MoE job's placement (evaluate) is
    gpu-mapping's ``evaluate`` alpha of the same job on the same GPUs, on seeded placements that keep
    each replica's slices together."""
    rng = np.random.default_rng(seed)
    base = _random_llm_instance(seed).to_dict()
    g, M = base["cluster"]["gpus_per_server"], base["cluster"]["servers"]
    for name in ("tp", "moe"):
        inst = _instance({name: base["models"][name]}, [{"id": "a", "release": 0, "model": name, "iterations": 7}],
                         servers=M, g=g)
        job = inst.models[name]
        t = tensor_parallel_of(job)
        for _ in range(5):
            free = np.full(M, g // t)
            unit_srv = []
            for _ in range(job.n_replicas // t):
                m = int(rng.choice(np.flatnonzero(free > 0)))
                free[m] -= 1
                unit_srv.append(m)
            sv = np.repeat(unit_srv, t)
            off = job.offsets
            a = [sv[int(off[s]):int(off[s + 1])].tolist() for s in range(len(job.stages))]
            ev = evaluate(inst, {"jobs": [{"id": "a", "start": 0.0, "assignment": a}]})
            used = sorted(set(unit_srv))
            caps = tuple(int(np.sum(sv == m)) for m in used)
            local = [[used.index(m) for m in row] for row in a]
            gm = gm_evaluate(GpuMappingInstance(inst.cluster.mapping_cluster, job, caps), {"assignment": local})
            assert ev.feasible and gm.feasible
            assert ev.objectives["total_completion"] == pytest.approx(7 * gm.objectives["alpha"], rel=1e-12)


@pytest.mark.parametrize(("stage", "field", "words"), [
    ({"tensor_parallel": 3}, "models.m.stages[0].tensor_parallel", "does not divide"),
    ({"tensor_parallel": 8}, "models.m.stages[0].tensor_parallel", "larger than any server"),
    ({"tensor_parallel": 0}, "models.m.stages[0].tensor_parallel", ">= 1"),
    ({"tp_bytes": 5.0}, "models.m.stages[0].tp_bytes", "needs tensor_parallel >= 2"),
    ({"experts": 2, "tensor_parallel": 2}, "models.m.stages[0].experts", "tensor-parallel or expert-parallel"),
    ({"expert_bytes": 1.0}, "models.m.stages[0].expert_bytes", "needs experts >= 2"),
    ({"experts": 2, "a2a_bytes": 1.0}, "models.m.stages[0].a2a_bytes", "is not a field"),  # gpu-mapping's names
    ({"experts": 2, "routing": "hot"}, "models.m.stages[0].routing", "uniform, zipf"),
    ({"experts": 2, "routing_skew": 1.0}, "models.m.stages[0].routing_skew", "zipf"),
])
def test_bad_tensor_parallel_and_moe_fields_are_named(stage: dict[str, Any], field: str, words: str) -> None:
    """gpu-mapping's validation of the fields (one for both problems), and ddlwmp's t | g."""
    with pytest.raises(InputError) as err:
        _instance({"m": {"allreduce": "ring", "stages": [_stage(2, **stage)]}},
                  [{"id": "a", "release": 0, "model": "m", "iterations": 1}])
    assert err.value.field == field and words in err.value.message


def test_one_tensor_parallel_degree_per_job() -> None:
    with pytest.raises(InputError) as err:
        _instance({"m": {"allreduce": "ring", "stages": [_stage(1, d_out=1e6, tensor_parallel=2),
                                                         _stage(1, d_in=1e6, tensor_parallel=4)]}},
                  [{"id": "a", "release": 0, "model": "m", "iterations": 1}])
    assert err.value.field == "models.m.stages[1].tensor_parallel" and "one tensor-parallel degree" in err.value.message
    with pytest.raises(InputError) as err:  # an expert stage (t = 1) beside a tensor-parallel one
        _instance({"m": {"allreduce": "ring", "stages": [_stage(1, d_out=1e6, tensor_parallel=2),
                                                         _stage(1, d_in=1e6, experts=2, expert_bytes=1e6)]}},
                  [{"id": "a", "release": 0, "model": "m", "iterations": 1}])
    assert err.value.field == "models.m.stages[1].tensor_parallel" and "one tensor-parallel degree" in err.value.message


def test_online_scheduler_rejects_a_tensor_parallel_degree_larger_than_its_nodes() -> None:
    s = OnlineScheduler("a-srpt", nodes={"n1": 4, "n2": 4},
                        models={"big": {"allreduce": "ring", "stages": [_stage(1, tensor_parallel=8)]}})
    with pytest.raises(InputError) as err:
        s.on_arrival(Job("x", release=0.0, gpus=8, model="big"), 0.0)
    assert err.value.field == "models['big'].stages[0].tensor_parallel"


# ----------------------------------------------------------------------------- the delay
def _delay_case(tensor_parallel: bool) -> DdlwmpInstance:
    """Two servers of 4 GPUs; a1 (3 GPUs, 30 s) and a2 (3 GPUs, 6 s) fill them to 1 free GPU each
    (best fit puts a2 on the other server); b (2 GPUs) arrives at 1 s: 2 GPUs are free in all, but
    as one replica of t = 2 slices it needs 2 free on one server, i.e. a2's end at 6 s. No
    predictions (the paper's unseen-job rule: 0 iterations), so every policy takes the jobs in
    release order and A-SRPT's pending queue gets each job at its release."""
    b = ({"allreduce": "ring", "stages": [_stage(1, tensor_parallel=2, tp_bytes=1e6)]} if tensor_parallel
         else {"allreduce": "ring", "stages": [_stage(2)]})
    return _instance({"three": {"allreduce": "ring", "stages": [_stage(3)]}, "b": b},
                     [{"id": "a1", "release": 0, "model": "three", "iterations": 1000},
                      {"id": "a2", "release": 0, "model": "three", "iterations": 200},
                      {"id": "b", "release": 1, "model": "b", "iterations": 10}])


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_tensor_parallel_job_waits_until_one_server_holds_its_replica(name: str) -> None:
    plain = {j["id"]: j for j in RUNS[name](_delay_case(False), seed=0).solution["jobs"]}
    tp_inst = _delay_case(True)
    res = RUNS[name](tp_inst, seed=0)
    assert evaluate(tp_inst, res.solution).feasible
    tp = {j["id"]: j for j in res.solution["jobs"]}
    assert plain["a2"]["completion"] == pytest.approx(6.0) and tp["a2"]["completion"] == pytest.approx(6.0)
    assert tp["b"]["start"] == 6.0 and len(set(tp["b"]["assignment"][0])) == 1
    if name == "a-srpt":  # the plain 2-GPU job starts at once, split over the two servers
        assert plain["b"]["start"] == 1.0 and len(set(plain["b"]["assignment"][0])) == 2


@pytest.mark.parametrize(("name", "params", "c_start"), [
    ("a-srpt", {}, 6.0), ("a-srpt", {"head_of_line": "skip"}, 2.0), ("fifo", {}, 6.0), ("spjf", {}, 6.0),
    ("wcs-subtime", {}, 2.0), ("wcs-duration", {}, 2.0)])
def test_a_waiting_tensor_parallel_head_blocks_a_strict_queue_only(name: str, params: dict[str, Any],
                                                                   c_start: float) -> None:
    """The delay case plus c (1 GPU) at 2 s, behind b: a strict queue (A-SRPT's line 25, FIFO,
    SPJF) starts nothing behind the waiting tensor-parallel head, though a GPU is free; backfilling
    (A-SRPT's head_of_line=skip, the work-conserving baselines) starts c at once."""
    base = _delay_case(True)
    d = base.to_dict()
    d["models"]["one"] = {"allreduce": "ring", "stages": [_stage(1)]}
    d["jobs"].append({"id": "c", "release": 2, "model": "one", "iterations": 10})
    inst = DdlwmpInstance.from_dict(d)
    res = RUNS[name](inst, seed=0, **params)
    assert evaluate(inst, res.solution).feasible
    starts = {j["id"]: j["start"] for j in res.solution["jobs"]}
    assert starts["b"] == 6.0 and starts["c"] == c_start


# ----------------------------------------------------------------------------- seeded workloads
def _random_llm_instance(seed: int) -> DdlwmpInstance:
    """2-4 servers of 4 GPUs; a plain model, a tensor-parallel one (t = 2 or 4, 1-2 stages) and an
    MoE one (1-4 replicas of 2-4 expert groups, at most 8 GPUs, uniform or Zipf routing); 6-20 jobs
    with noisy predictions."""
    rng = np.random.default_rng(seed)
    t = int(rng.choice([2, 4]))
    n_st = int(rng.integers(1, 3))
    k = [int(rng.integers(1, 8 // t // n_st + 1)) for _ in range(n_st)]
    act = float(rng.uniform(1e6, 5e7))
    tp_stages = [_stage(k[s], float(rng.uniform(0.01, 0.05)), float(rng.uniform(0.02, 0.1)),
                        act / k[s] if s > 0 else 0.0, act / k[s] if s < n_st - 1 else 0.0,
                        float(rng.uniform(1e6, 5e8)), tensor_parallel=t, tp_bytes=float(rng.uniform(1e6, 5e9)))
                 for s in range(n_st)]
    e = int(rng.integers(2, 5))
    moe_stage = _stage(int(rng.integers(1, 8 // e + 1)), h=float(rng.uniform(1e6, 1e8)), experts=e,
                       expert_bytes=float(rng.uniform(1e7, 1e9) * e))
    if rng.random() < 0.5:
        moe_stage.update(routing="zipf", routing_skew=float(rng.uniform(0.2, 2.0)))
    moe: dict[str, Any] = {"allreduce": "ring", "stages": [moe_stage]}
    models = {"plain": {"allreduce": "ring", "stages": [_stage(int(rng.integers(1, 5)), h=float(rng.uniform(1e6, 5e8)))]},
              "tp": {"allreduce": str(rng.choice(["ring", "tree"])), "stages": tp_stages}, "moe": moe}
    names = sorted(models)
    jobs = []
    for i in range(int(rng.integers(6, 21))):
        n = int(rng.integers(1, 400))
        jobs.append({"id": f"j{i}", "release": float(np.round(rng.uniform(0, 20), 2)),
                     "model": names[int(rng.integers(3))], "iterations": n,
                     "predicted_iterations": float(max(0, n + rng.integers(-100, 101)))})
    return _instance(models, jobs, servers=int(rng.integers(2, 5)))


@pytest.mark.parametrize("seed", range(12))
def test_every_policy_keeps_each_replicas_slices_on_one_server(seed: int) -> None:
    inst = _random_llm_instance(seed)
    settings = [("a-srpt", {"tau": 0.0}), ("a-srpt", {"head_of_line": "skip"}),
                ("a-srpt", {"delay_blocks_queue": False, "comm_heavy": 1.1, "tau": 5.0}),
                ("spjf", {"consolidate": True}), ("wcs-duration", {"consolidate": True})]
    for name, params in [(n, {}) for n in RUNS] + settings:
        res = RUNS[name](inst, seed=0, **params)
        assert res.status == Status.FEASIBLE
        ev = evaluate(inst, res.solution)
        assert ev.feasible, (name, params, ev.violations)
        _slices_together(inst, res.solution)


@pytest.mark.parametrize("seed", range(2))
def test_generated_workloads_with_tp_and_moe_shares_keep_the_rule(seed: int) -> None:
    d = generate(jobs=80, servers=3, seed=seed, single_gpu_share=0.3, tp_share=0.4, moe_share=0.3, routing_skew=1.0,
                 predictor="mean")
    inst = DdlwmpInstance.from_dict({k: v for k, v in d.items() if k not in ("meta", "name")})
    assert d["meta"]["tp_job_share"] > 0 and d["meta"]["moe_job_share"] > 0
    assert any(tensor_parallel_of(m) > 1 for m in inst.models.values())
    assert any(m.has_experts for m in inst.models.values())
    for name in ("a-srpt", "spjf", "wcs-duration"):
        res = RUNS[name](inst, seed=0)
        assert evaluate(inst, res.solution).feasible
        _slices_together(inst, res.solution)


def test_generated_moe_jobs_take_gpu_mappings_stage_layout() -> None:
    """llm_workloads.moe_model_dict writes gpu-mapping's MoE stage: e = gcd(D, 8) expert groups per
    replica and D/e data-parallel replicas (so the job has D GPUs); a replica's tokens halve when the
    replicas double (expert_bytes, and one GPU's compute, halve), its parameters do not; Zipf routing
    is the stage's; an odd D has no MoE job."""
    from optkit.formulations.ddlwmp.llm_workloads import llm_variant, moe_model_dict

    for gpus, layout in {2: (1, 2), 6: (3, 2), 8: (1, 8), 16: (2, 8), 32: (4, 8)}.items():
        md = moe_model_dict("gpt-6.7b", gpus, "ring", 0.0)
        (st,) = md["stages"]
        assert (st["replicas"], st["experts"]) == layout and "routing" not in st
        assert PipelineJob.from_dict(md, "m").n_replicas == gpus
    (s8,) = moe_model_dict("gpt-6.7b", 8, "ring", 0.0)["stages"]
    (s16,) = moe_model_dict("gpt-6.7b", 16, "ring", 1.25)["stages"]
    assert s16["expert_bytes"] == pytest.approx(s8["expert_bytes"] / 2, rel=1e-12)
    assert s16["fwd_time"] == pytest.approx(s8["fwd_time"] / 2, rel=1e-12)
    assert s16["param_bytes"] == s8["param_bytes"]
    assert (s16["routing"], s16["routing_skew"]) == ("zipf", 1.25)
    assert llm_variant("moe", 5, 8, {}, np.random.default_rng(0), "ring", 0.0, {}) is None


def test_generator_shares_are_checked() -> None:
    with pytest.raises(InputError) as err:
        generate(jobs=10, servers=2, tp_share=0.7, moe_share=0.5, predictor=None)
    assert err.value.field == "moe_share"
    with pytest.raises(InputError) as err:
        generate(jobs=10, servers=2, moe_share=0.5, routing_skew=-1.0, predictor=None)
    assert err.value.field == "routing_skew"


# ----------------------------------------------------------------------------- exact vs heuristic
def _tiny_llm(seed: int) -> DdlwmpInstance:
    rng = np.random.default_rng(100 + seed)
    models = {"tp": {"allreduce": "ring", "stages": [_stage(2, float(rng.uniform(0.01, 0.05)), 0.04,
                                                            h=float(rng.uniform(1e7, 3e8)), tensor_parallel=2,
                                                            tp_bytes=float(rng.uniform(1e8, 3e9)))]},
              "moe": {"allreduce": "ring", "stages": [_stage(1, h=1e7, experts=3, routing="zipf",
                                                             routing_skew=float(rng.uniform(0.0, 2.0)),
                                                             expert_bytes=float(rng.uniform(1.5e8, 1.5e9)))]},
              "one": {"allreduce": "ring", "stages": [_stage(2, h=float(rng.uniform(1e7, 3e8)))]}}
    names = sorted(models)
    jobs = [{"id": f"t{i}", "release": int(rng.integers(0, 4)), "model": names[int(rng.integers(3))],
             "iterations": int(rng.integers(5, 25)), "predicted_iterations": float(rng.integers(5, 25))}
            for i in range(3)]
    return _instance(models, jobs, servers=2, g=4)


@pytest.mark.parametrize("seed", range(3))
def test_exact_solvers_agree_and_bound_every_policy_on_tiny_tp_and_moe_instances(seed: int) -> None:
    inst = _tiny_llm(seed)
    opt, schedule = brute_force(inst)
    ev = evaluate(inst, schedule)
    assert ev.feasible and ev.objectives["total_completion"] == pytest.approx(opt, rel=1e-9)
    _slices_together(inst, schedule)
    for solver in (run_cpsat, run_highs):
        res = solver(inst, time_limit=None, seed=0)
        assert res.status == Status.OPTIMAL, solver.__name__
        assert evaluate(inst, res.solution).objectives["total_completion"] == pytest.approx(opt, rel=1e-6)
    assert quick_lower_bound(inst) <= lower_bound(inst) <= opt * (1 + 1e-9)
    for name, run in RUNS.items():
        value = evaluate(inst, run(inst, seed=0).solution).objectives["total_completion"]
        assert value >= opt * (1 - 1e-9), name


def test_exact_options_of_a_tensor_parallel_job_never_split_a_replica() -> None:
    """The exact solvers' placement options of a t = 2 job: every y in multiples of 2 (a split one
    would let the optimum beat the rule)."""
    from optkit.formulations.ddlwmp.exact import placement_options

    inst = _tiny_llm(0)
    opts = placement_options(inst)["tp"]
    assert opts and all(v % 2 == 0 for o in opts for v in o.y)
    assert {o.y for o in opts} == {(4, 0), (2, 2), (0, 4)}


def test_the_placer_maps_a_tensor_parallel_job_by_heavy_edge_with_colocate() -> None:
    """The COLOCATE wiring point: a policy's placement of a t = 4 job on the servers it chose in units
    is gpu-mapping's Heavy-Edge with each replica's slices as a ``colocate`` group
    (colocation.heavy_edge_mapping) on those servers' GPUs, each replica on one server, timed by
    gpu-mapping's vertex_times; and the round trip of the model through its dict."""
    from optkit.formulations.ddlwmp.placement import Placer
    from optkit.formulations.gpu_mapping.colocation import heavy_edge_mapping

    # the slices' all-reduce is light (tp_bytes 1 kB) and the data-parallel rings heavy (h = 4e8 B): the
    # heaviest edges join slice j of replica 0 to slice j of replica 1, so Heavy-Edge without the groups
    # would put those pairs together and split every replica over the two servers
    md = {"allreduce": "ring", "stages": [_stage(2, h=4e8, tensor_parallel=4, tp_bytes=1e3)]}
    inst = _instance({"m": md}, [{"id": "a", "release": 0, "model": "m", "iterations": 1}], servers=3, g=8)
    job = inst.models["m"]
    assert is_llm(job) and job.n_replicas == 8 and tensor_parallel_of(job) == 4
    placer = Placer(inst.cluster, inst.models, seed=0)
    p = placer.place_most_free("m", np.array([4, 4, 4]))
    local = heavy_edge_mapping(job, [4, 4], seed=0)
    assert p.servers == (0, 1) and p.assignment == [[(0, 1)[m] for m in row] for row in local]
    flat = [m for row in p.assignment for m in row]
    assert len(set(flat[:4])) == 1 and len(set(flat[4:])) == 1 and flat[0] != flat[4]
    assert p.alpha == pytest.approx(float(vertex_times(job, inst.cluster.mapping_cluster, flat).max()), rel=1e-12)
    assert PipelineJob.from_dict(copy.deepcopy(job.to_dict()), "m") == job


def test_bounds_and_estimates_time_a_tensor_parallel_job_by_its_own_eqs() -> None:
    """One replica of t = 4 slices with 300 GB of parameters: it has no data-parallel all-reduce
    (k = 1) and no slice all-reduce (tp_bytes 0), so every alpha is the compute, 0.03 s. Read as a
    plain job of 4 replicas, the slices would all-reduce the parameters (0.375 s inside a server):
    the bounds, the Placer's estimates and the generators' alpha~min must not."""
    from optkit.formulations.ddlwmp.bounds import guarantees
    from optkit.formulations.ddlwmp.catalog import AlphaMin
    from optkit.formulations.ddlwmp.placement import Placer

    md = {"allreduce": "ring", "stages": [_stage(1, h=3e11, tensor_parallel=4)]}
    inst = _instance({"m": md}, [{"id": "a", "release": 0, "model": "m", "iterations": 10,
                                  "predicted_iterations": 10.0}])
    opt, _ = brute_force(inst)
    assert opt == pytest.approx(0.3, rel=1e-12)
    assert quick_lower_bound(inst) <= opt * (1 + 1e-12) and lower_bound(inst) == pytest.approx(opt, rel=1e-12)
    g = guarantees(inst)
    assert g["alpha_max"]["m"] == pytest.approx(0.03) and g["alpha_min_estimate"]["m"] == pytest.approx(0.03)
    placer = Placer(inst.cluster, inst.models, seed=0)
    assert placer.alpha_min("m") == pytest.approx(0.03) and placer.alpha_max("m") == pytest.approx(0.03)
    assert AlphaMin({"m": md}, inst.cluster.mapping_cluster)("m") == pytest.approx(0.03)


def test_alpha_upper_bounds_every_placement_and_overflow_is_bad_input() -> None:
    """model.alpha_upper bounds gpu-mapping's vertex_times on every sampled placement of seeded TP/MoE
    jobs, and an instance whose all-to-all bytes overflow the slot arithmetic is rejected naming the job."""
    from optkit.formulations.ddlwmp.model import alpha_upper

    rng = np.random.default_rng(3)
    for seed in range(6):
        inst = _random_llm_instance(seed)
        cl = inst.cluster.mapping_cluster
        for name in ("tp", "moe"):
            job = inst.models[name]
            t = tensor_parallel_of(job)
            up = alpha_upper(job, cl)
            for _ in range(20):
                unit_srv = rng.integers(0, 3, size=job.n_replicas // t)
                assert vertex_times(job, cl, np.repeat(unit_srv, t)).max() <= up * (1 + 1e-12)
    with pytest.raises(InputError) as err:
        _instance({"moe": {"allreduce": "ring", "stages": [_stage(1, experts=4, expert_bytes=1e300)]}},
                  [{"id": "a", "release": 0, "model": "moe", "iterations": 10**9}])
    assert err.value.field == "jobs[0]" and "overflow" in err.value.message


def test_trace_workloads_with_tp_and_moe_shares_keep_the_rule() -> None:
    """trace_workload(tp_share=, moe_share=) on records of the trace's shape: the same trace jobs,
    those made 3D-parallel or MoE of at most their trace GPU demand (the catalog's rule), and every
    policy keeps each replica's slices on one server."""
    from optkit.formulations.ddlwmp.workloads import trace_workload

    rng = np.random.default_rng(0)
    records = [{"submission_time": float(i * 30), "duration": float(rng.uniform(300, 5000)),
                "num_gpu": int(rng.choice([1, 2, 4, 8, 16])), "user": f"u{i % 5}"} for i in range(90)]
    plain = trace_workload(records, jobs=60, servers=3, load=0.8, seed=0, predict=False)
    d = trace_workload(records, jobs=60, servers=3, load=0.8, seed=0, predict=False, tp_share=0.4, moe_share=0.4)
    assert d["meta"]["tp_job_share"] > 0 and d["meta"]["moe_job_share"] > 0
    assert [j["trace_id"] for j in d["jobs"]] == [j["trace_id"] for j in plain["jobs"]]
    inst = DdlwmpInstance.from_dict({k: v for k, v in d.items() if k not in ("meta", "name")})
    converted = [j for j in inst.jobs if is_llm(inst.models[j.model])]
    assert converted and all(2 <= inst.gpus(j) <= j.extras["trace_gpus"] for j in converted)
    for name in ("a-srpt", "wcs-duration"):
        res = RUNS[name](inst, seed=0)
        assert evaluate(inst, res.solution).feasible
        _slices_together(inst, res.solution)


def test_online_scheduler_waits_for_a_node_that_holds_the_replica() -> None:
    """The public protocol path (protocol checks on): a t = 2 job arriving when each node has one
    free GPU starts only when a node frees two, on that node, its slices together."""
    from optkit.online import ClusterView

    s = OnlineScheduler("fifo", nodes={"n1": 4, "n2": 4},
                        models={"three": {"allreduce": "ring", "stages": [_stage(3)]},
                                "b": {"allreduce": "ring", "stages": [_stage(1, tensor_parallel=2, tp_bytes=1e6)]}})
    s.on_arrival(Job("a1", release=0.0, gpus=3, model="three"), 0.0)
    s.on_arrival(Job("a2", release=0.0, gpus=3, model="three"), 0.0)
    first = s.decide(0.0, ClusterView({"n1": 4, "n2": 4}, {"n1": 4, "n2": 4}))
    assert sorted(next(iter(d.gpus)) for d in first) == ["n1", "n2"]
    a2_node = next(next(iter(d.gpus)) for d in first if d.job_id == "a2")
    s.on_arrival(Job("b", release=1.0, gpus=2, model="b"), 1.0)
    assert s.decide(1.0, ClusterView({"n1": 1, "n2": 1}, {"n1": 4, "n2": 4})) == []
    s.on_completion("a2", 6.0)
    free = {"n1": 1, "n2": 1, a2_node: 4}
    (d,) = s.decide(6.0, ClusterView(free, {"n1": 4, "n2": 4}))
    assert d.job_id == "b" and d.gpus == {a2_node: 2} and d.replicas == [[a2_node, a2_node]]
