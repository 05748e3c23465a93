"""ddlwmp: whole-behaviour tests of the functions where the seed-1 mutation draw's survivors live
(issue 36 item 5; benchmarks/perf/mutation_seed1.md). Each test pins a function's observable
behaviour on tiny inputs: full return values, each error's field, problem and message, both sides
of its comparisons, the defaults of its keywords. Expected values come from the documented rule
or a hand computation (in the comments), never from the code under test."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from optkit import deadline
from optkit.errors import InputError
from optkit.formulations.ddlwmp import generate as gen_mod
from optkit.formulations.ddlwmp.a_srpt import ASRPT
from optkit.formulations.ddlwmp.catalog import check_int, model_catalog
from optkit.formulations.ddlwmp.claims import fig6_jobs
from optkit.formulations.ddlwmp.exact import _job_options, greedy_schedule  # (imported once, at collection)
from optkit.formulations.ddlwmp.generate import from_trace, generate, group_sizes
from optkit.formulations.ddlwmp.llm_workloads import convert_groups
from optkit.formulations.ddlwmp.model import DdlwmpInstance
from optkit.formulations.ddlwmp.placement import Placer
from optkit.formulations.ddlwmp.policies import ClusterState
from optkit.formulations.ddlwmp.sample import sample
from optkit.formulations.ddlwmp.workloads import trace_workload

B_INTER, B_INTRA = 1.25e9, 3e11
PLAIN = {"allreduce": "ring", "stages": [{"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0,
                                          "out_bytes": 0.0, "param_bytes": 1e6}]}


def _cluster(servers: int = 2, g: int = 4, **kw: Any) -> dict[str, Any]:
    return {"servers": servers, "gpus_per_server": g, "inter_bandwidth": B_INTER, "intra_bandwidth": B_INTRA, **kw}


def _inst(**kw: Any) -> dict[str, Any]:
    d = {"problem": "ddlwmp", "cluster": _cluster(), "models": {"m": PLAIN},
         "jobs": [{"id": "a", "release": 0.0, "model": "m", "iterations": 3}]}
    d.update(kw)
    return d


def _err(exc: pytest.ExceptionInfo[InputError]) -> tuple[str, str | None, str]:
    e = exc.value
    return e.field, e.problem, e.message


# ----------------------------------------------------------------------------- catalog.check_int
@pytest.mark.parametrize("v, low, ok", [(0, 1, False), (1, 1, True), (2, 1, True), (np.int64(3), 3, True),
                                        (np.int64(2), 3, False), (True, 0, False), (False, 0, False),
                                        (1.0, 0, False), (1.5, 0, False), ("2", 0, False), (None, 0, False)])
def test_check_int_takes_integers_at_or_above_low_only(v: Any, low: int, ok: bool) -> None:
    if ok:
        out = check_int(v, "jobs", low)
        assert out == int(v) and type(out) is int
    else:
        with pytest.raises(InputError) as exc:
            check_int(v, "jobs", low)
        assert _err(exc) == ("jobs", None, f"must be an integer >= {low}, got {v!r}")


# ----------------------------------------------------------------------------- generate.generate
def test_generate_takes_one_job_and_names_each_refused_argument() -> None:
    d = generate(jobs=1, servers=1, predictor=None, seed=0)      # jobs >= 1: one job is a workload
    assert len(d["jobs"]) == 1 and d["jobs"][0]["id"] == "j0"
    assert d["meta"]["generator"] == "formulations.ddlwmp.generate.generate"
    assert d["meta"]["seed"] == 0 and d["meta"]["params"]["jobs"] == 1
    assert d["meta"]["params"]["gpus_per_server"] == 8 and d["meta"]["params"]["servers"] == 1
    for kw, field, msg in [
        ({"jobs": 0}, "jobs", "must be an integer >= 1, got 0"),
        ({"seed": -1}, "seed", "must be an integer >= 0, got -1"),
        ({"seed": True}, "seed", "must be an integer >= 0, got True"),
        ({"arrival": "uniform"}, "arrival", "must be 'poisson' or 'batch', got 'uniform'"),
        # one GPU per cluster: no distributed demand in 2..1 while single_gpu_share < 1
        ({"gpus_per_server": 1, "single_gpu_share": 0.5}, "gpu_weights",
         "no distributed GPU demand in 2..1 to draw from"),
        ({"gpu_weights": {2: 0.0, 4: 0.0}}, "gpu_weights", "no distributed GPU demand in 2..8 to draw from"),
    ]:
        args = {"jobs": 2, "servers": 1, "predictor": None, **kw}
        with pytest.raises(InputError) as exc:
            generate(**args)
        assert _err(exc) == (field, None, msg), kw


def test_generate_llm_params_are_recorded_under_their_reading_names() -> None:
    d = generate(jobs=3, servers=2, gpus_per_server=4, single_gpu_share=0.0, tp_share=1.0, moe_share=0.0,
                 routing_skew=0.5, predictor=None, seed=1)
    p = d["meta"]["params"]
    assert (p["tp_share"], p["moe_share"], p["routing_skew"]) == (1.0, 0.0, 0.5)
    assert set(p) >= {"jobs", "servers", "gpus_per_server", "single_gpu_share", "arrival", "load"}


# ----------------------------------------------------------------------------- generate.group_sizes
@pytest.mark.parametrize("seed", range(4))
def test_group_sizes_below_min_recurrence_are_all_small_groups(seed: int) -> None:
    """n = 4, share 0.65: round(2.6) = 3 recurring jobs < min_rec 5, so none recur (rec = 0) and
    every group is 1..min(4, 4) jobs drawn by rng.integers(1, 5), capped by the jobs left: replayed
    here with a generator of the same seed."""
    rng, replay = np.random.default_rng(seed), np.random.default_rng(seed)
    want, left = [], 4
    while left > 0:
        s = min(int(replay.integers(1, 5)), left)
        want.append(s)
        left -= s
    assert group_sizes(4, 0.65, 5, rng) == want


def test_group_sizes_at_min_recurrence_makes_one_recurring_group() -> None:
    """n = 10, share 0.5: 5 recurring jobs = min_rec, one group of 5 (5 - s < 5 takes them all),
    then the 5 others in groups of 1..4."""
    sizes = group_sizes(10, 0.5, 5, np.random.default_rng(3))
    assert sizes[0] == 5 and sum(sizes) == 10 and all(1 <= s <= 4 for s in sizes[1:])


# ----------------------------------------------------------------------------- generate.from_trace
def test_from_trace_names_missing_fields_and_an_empty_window() -> None:
    rec = [{"submission_time": 0.0, "duration": 100.0, "num_gpu": 1}]
    for i, key in [(0, "submission_time"), (0, "duration"), (0, "num_gpu")]:
        bad = [{k: v for k, v in rec[0].items() if k != key}]
        with pytest.raises(InputError) as exc:
            from_trace(bad, servers=1, predictor=None)
        assert _err(exc) == (f"records[{i}].{key}", None, "is required")
    with pytest.raises(InputError) as exc:
        from_trace([{"submission_time": 0.0, "duration": 100.0, "num_gpu": 16}], servers=1, predictor=None)
    assert _err(exc) == ("trace", None, "no job left after the window and the GPU limit")


# ----------------------------------------------------------------------------- generate.tiny
def test_tiny_names_the_failure_when_no_model_fits_the_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    """No drawn model with alpha~min >= 0.05 s: the documented RuntimeError after 200 draws."""
    monkeypatch.setattr(gen_mod, "alpha_min_estimate", lambda *a, **k: 0.0)
    with pytest.raises(RuntimeError) as exc:
        gen_mod.tiny(0)
    assert str(exc.value) == "could not draw a tiny model"


# ----------------------------------------------------------------------------- llm_workloads.convert_groups
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_convert_groups_draws_from_the_documented_generator(seed: int) -> None:
    """One distributed group; it becomes 3D-parallel iff the first draw u of
    default_rng([seed, 37]) is below tp_share. tp_share is put halfway between that u and the
    first draw of another generator, so a wrong seed sequence decides the other way."""
    u = float(np.random.default_rng([seed, 37]).random())
    other = float(np.random.default_rng([seed, 38]).random())
    tp = (u + other) / 2
    catalog = model_catalog(8)
    name = next(n for n, (_, _, k) in sorted(catalog.items()) if k == 4)
    names = [name]
    out = convert_groups(names, catalog, tp_share=tp, moe_share=0.0, routing_skew=0.0, gpus_per_server=8,
                         seed=seed, allreduce="ring")
    assert (names[0] != name) == (u < tp) and len(out) == (1 if u < tp else 0)


# ----------------------------------------------------------------------------- claims.fig6_jobs
def test_fig6_jobs_trace_counts_are_shares_of_the_trace_at_paper_scale() -> None:
    # 5, 10, 15, 20 % of 1,000 records; at ci scale each capped by the synthetic count
    # round(n * 6 / 250): 900, 1800, 2700, 3600
    assert fig6_jobs("itp", "paper", 1000) == [50, 100, 150, 200]
    assert fig6_jobs("itp", "paper", 100_000) == [5000, 10000, 15000, 20000]
    # above the synthetic counts: the paper scale keeps the trace's shares uncapped
    assert fig6_jobs("itp", "paper", 1_000_000) == [50_000, 100_000, 150_000, 200_000]
    assert fig6_jobs("itp", "ci", 100_000) == [900, 1800, 2700, 3600]
    assert fig6_jobs("synthetic", "paper") == [37_500, 75_000, 112_500, 150_000]


# ----------------------------------------------------------------------------- model.from_dict
def test_instance_from_dict_names_each_refused_top_level_field() -> None:
    for kw, field, msg in [
        ({"models": []}, "models", "must be an object, got list"),
        ({"models": {}}, "models", "must define at least one model"),
        ({"jobs": []}, "jobs", "must be a non-empty list of jobs, got []"),
        ({"jobs": {"a": 1}}, "jobs", "must be a non-empty list of jobs, got {'a': 1}"),
        ({"cluster": _cluster(inter_bandwidth=0.0)}, "cluster.inter_bandwidth", "must be > 0, got 0.0"),
        ({"cluster": _cluster(intra_bandwidth=0)}, "cluster.intra_bandwidth", "must be > 0, got 0.0"),
        ({"cluster": _cluster(inter_bandwidth=-1.0)}, "cluster.inter_bandwidth", "must be > 0, got -1.0"),
    ]:
        with pytest.raises(InputError) as exc:
            DdlwmpInstance.from_dict(_inst(**kw))
        assert (exc.value.field, exc.value.message) == (field, msg), kw
    # the smallest positive bandwidths pass
    inst = DdlwmpInstance.from_dict(_inst(cluster=_cluster(inter_bandwidth=1, intra_bandwidth=1)))
    assert (inst.cluster.inter_bandwidth, inst.cluster.intra_bandwidth) == (1.0, 1.0)


# ----------------------------------------------------------------------------- readings with the problem
def test_policy_and_placer_readings_are_refused_naming_the_problem() -> None:
    inst = DdlwmpInstance.from_dict(_inst())
    for name, bad in [("light_placement", "first-fit"), ("head_of_line", "loose"), ("comm_heavy_test", "eq"),
                      ("comm_heavy", -1.0), ("tau", -1.0), ("delay_blocks_queue", "yes")]:
        with pytest.raises(InputError) as exc:
            ASRPT(inst.cluster, inst.models, **{name: bad})
        assert exc.value.field == name and exc.value.problem == "ddlwmp", name
        assert str(exc.value).startswith(f"ddlwmp: {name} ")
    with pytest.raises(InputError) as exc:
        Placer(inst.cluster, inst.models, single_gpu_weight="heaviest")
    assert exc.value.field == "single_gpu_weight" and exc.value.problem == "ddlwmp"
    assert str(exc.value).startswith("ddlwmp: single_gpu_weight ")
    assert Placer(inst.cluster, inst.models, seed=7).seed == 7
    assert Placer(inst.cluster, inst.models).seed is None


# ----------------------------------------------------------------------------- sample.sample
@pytest.mark.parametrize("name", ["max_jobs", "max_gpus", "max_servers", "max_models", "max_stages",
                                  "max_iterations"])
def test_sample_names_each_limit_out_of_range(name: str) -> None:
    with pytest.raises(InputError) as exc:
        sample(lambda lo, hi: lo, **{name: 0})
    assert (exc.value.field, exc.value.message) == (name, "must be >= 1, got 0")


# ----------------------------------------------------------------------------- policies.ClusterState
def test_cluster_state_refusal_shows_small_arrays_and_names_other_types() -> None:
    head = "must be a 1-d integer array of free GPUs per server, each in 0..4 (the GPUs per server), got "
    for free, shown in [([1, 2], "list"), (np.array([1, 5]), "[1, 5]"), (np.array([-1]), "[-1]"),
                        (np.array([1.0, 2.0]), "[1.0, 2.0]"), (np.array([0] * 16 + [5]), "ndarray"),
                        (np.array([5] + [0] * 15), str([5] + [0] * 15))]:
        with pytest.raises(InputError) as exc:
            ClusterState(free, 4)  # type: ignore[arg-type]
        assert _err(exc) == ("state.free", "ddlwmp", head + shown), free
    ok = np.array([0, 4, 2])
    assert ClusterState(ok, 4).free is ok


# ----------------------------------------------------------------------------- workloads.trace_workload
def test_trace_workload_names_missing_fields_and_checks_the_instance_by_default() -> None:
    rec = {"submission_time": 0.0, "duration": 100.0, "num_gpu": 1}
    for key in ("submission_time", "duration", "num_gpu"):
        bad = [dict(rec), {k: v for k, v in rec.items() if k != key}]
        with pytest.raises(InputError) as exc:
            trace_workload(bad, jobs=1, servers=1, load=0.5, predict=False)
        assert _err(exc) == (f"records[1].{key}", None, "is required")
    recs = [dict(rec, submission_time=float(i)) for i in range(3)]
    checked = trace_workload(recs, jobs=3, servers=1, load=0.5, predict=False)
    raw = trace_workload(recs, jobs=3, servers=1, load=0.5, predict=False, check=False)
    assert checked["meta"]["real"] == raw["meta"]["real"] == (
        "order and spacing of submissions, durations, GPU demands (and user, virtual cluster, group if present)")
    # check=False returns the dict as built; check=True (the default) the same instance read back
    assert raw == checked and DdlwmpInstance.from_dict(raw).to_dict()["jobs"] == checked["jobs"]


# ----------------------------------------------------------------------------- policies.DemandQueue.head
@pytest.mark.parametrize("kind", ["plain", "single", "tensor"])
def test_demand_queue_head_breaks_key_and_release_ties_by_push_order(kind: str) -> None:
    """Two jobs of equal key and release in two heaps (GPU demands 4 and 2): the one pushed
    first (lower order counter) is the head, whichever heap was made first."""
    from optkit.formulations.ddlwmp.policies import DemandQueue, JobSpec

    extra = {"single": {"single_node": True}, "tensor": {"tensor_parallel": 2}, "plain": {}}[kind]
    late = JobSpec("late", 0.0, "m", 4, **extra)
    early = JobSpec("early", 0.0, "m", 2, **extra)
    q = DemandQueue()
    q.push((1.0, 0.0, 1), late)
    q.push((1.0, 0.0, 0), early)
    assert q.head() is early and len(q) == 2
    state = ClusterState(np.array([4, 4]), 4)
    assert q.head(state) is early
    assert q.head(pop=True) is early and len(q) == 1 and q.head() is late


# ----------------------------------------------------------------------------- tensor.py
def _tp_job(t1: int = 2, t2: int = 2) -> Any:
    from optkit.formulations.gpu_mapping.model import PipelineJob

    st = {"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0, "out_bytes": 0.0,
          "param_bytes": 1e6, "tp_bytes": 1e6}
    stages = [dict(st, tensor_parallel=t) if t > 1 else {k: v for k, v in st.items() if k != "tp_bytes"}
              for t in (t1, t2)]
    return PipelineJob.from_dict({"allreduce": "ring", "stages": stages}, "m")


def test_check_model_names_a_second_tensor_parallel_degree() -> None:
    from optkit.formulations.ddlwmp.tensor import check_model

    check_model(_tp_job(), 4, "models.m")  # one t = 2 dividing g = 4: passes
    with pytest.raises(InputError) as exc:
        check_model(_tp_job(2, 1), 4, "models.m")
    assert _err(exc) == ("models.m.stages[1].tensor_parallel", None,
                         "is 1 but stage 0's is 2: ddlwmp takes one tensor-parallel degree per job (data x pipeline "
                         "x tensor parallelism with one t; an MoE job has t = 1 in every stage), so that a replica is "
                         "a unit of t GPUs and whether the job fits is exact (formulations/ddlwmp/tensor.py)")
    for t, g, head in [(2, 3, "is 2, which does not divide the servers' 3 GPUs"),
                       (4, 6, "is 4, which does not divide the servers' 6 GPUs"),
                       (2, 1, "is 2, larger than any server (1 GPUs)")]:
        with pytest.raises(InputError) as exc:
            check_model(_tp_job(t, t), g, "models.m")
        assert exc.value.field == "models.m.stages[0].tensor_parallel" and exc.value.message.startswith(head)
    check_model(_tp_job(4, 4), 4, "models.m")  # t = g passes


@pytest.mark.parametrize("free, gpus, t, ok", [
    ([2, 3], 5, 1, True), ([2, 3], 6, 1, False), ([2, 3], 4, 1, True), ([], 1, 1, False),
    ([2, 3], 4, 2, True),   # floor(2/2) + floor(3/2) = 2 replicas of 2
    ([2, 3], 6, 2, False), ([3, 3], 4, 2, True), ([3, 1], 4, 2, False)])
def test_fits_counts_whole_replicas(free: list[int], gpus: int, t: int, ok: bool) -> None:
    from optkit.formulations.ddlwmp.tensor import fits

    assert fits(np.array(free, dtype=np.int64), gpus, t) is ok


def test_checked_alpha_names_a_split_replica_else_times_the_assignment() -> None:
    from optkit.formulations.ddlwmp.tensor import checked_alpha
    from optkit.formulations.gpu_mapping.model import Cluster, alpha_of_assignment

    job, cl = _tp_job(), Cluster(4, B_INTER, B_INTRA)
    together = [[0, 0, 1, 1], [0, 0, 1, 1]]      # each replica's 2 slices on one server
    assert checked_alpha(job, cl, together) == (None, alpha_of_assignment(job, cl, together))
    bad, alpha = checked_alpha(job, cl, [[0, 1, 1, 1], [0, 0, 1, 1]])  # stage 0's first replica split
    assert isinstance(bad, str) and bad and alpha != alpha


def test_heavy_edge_units_checks_and_uses_its_seed_and_readings() -> None:
    from optkit.formulations.ddlwmp.tensor import heavy_edge_units

    job = _tp_job()
    servers = heavy_edge_units(job, [2, 2], seed=0, heavy_edge={})
    # 8 vertices (2 stages x 2 replicas x 2 slices); each replica's 2 slices on one server; 4 per server
    assert servers.tolist().count(0) == 4 and all(servers[i] == servers[i + 1] for i in range(0, 8, 2))
    with pytest.raises(InputError) as exc:
        heavy_edge_units(job, [2, 2], seed=-1, heavy_edge={})
    assert exc.value.field == "seed"
    with pytest.raises(InputError) as exc:
        heavy_edge_units(job, [2, 2], seed=0, heavy_edge={"server_start": "anywhere"})
    assert exc.value.field == "server_start"


# ----------------------------------------------------------------------------- model.alpha_upper
def test_alpha_upper_by_hand_on_both_sides_of_the_per_byte_max() -> None:
    """Two stages, k = 1, fwd + bwd = 0.03 s each, 1e6 B between them (d_out of stage 0, d_in of
    stage 1): each stage's bound is 0.03 + 2·per_byte·1e6 with per_byte = max(g/B_inter, 1/B_intra)."""
    from optkit.formulations.ddlwmp.model import alpha_upper
    from optkit.formulations.gpu_mapping.model import Cluster, PipelineJob

    st = {"replicas": 1, "fwd_time": 0.01, "bwd_time": 0.02, "param_bytes": 0.0}
    job = PipelineJob.from_dict({"allreduce": "ring", "stages": [dict(st, in_bytes=0.0, out_bytes=1e6),
                                                                 dict(st, in_bytes=1e6, out_bytes=0.0)]})
    # g/B_inter = 4/4e9 = 1e-9 < 1/B_intra = 1e-8: 0.03 + 2e-8·1e6 = 0.05
    assert alpha_upper(job, Cluster(4, 4e9, 1e8)) == pytest.approx(0.05, rel=1e-12)
    # g/B_inter = 4/1e8 = 4e-8 > 1/B_intra = 1e-8: 0.03 + 8e-8·1e6 = 0.11
    assert alpha_upper(job, Cluster(4, 1e8, 1e8)) == pytest.approx(0.11, rel=1e-12)


# ----------------------------------------------------------------------------- simulate / algorithms
def test_simulate_policy_passes_its_time_limit_and_heavy_edge_readings() -> None:
    from optkit.formulations.ddlwmp.simulate import simulate_policy

    inst = DdlwmpInstance.from_dict(_inst())
    with pytest.raises(InputError) as exc:
        simulate_policy(inst, ASRPT, seed=0, time_limit=-1.0)
    assert exc.value.field == "time_limit"
    schedule, pol = simulate_policy(inst, ASRPT, seed=3, heavy_edge={"server_start": "from-placed",
                                                                     "single_gpu_weight": "total"})
    assert pol.placer.heavy_edge == {"server_start": "from-placed", "single_gpu_weight": "total"}
    assert pol.placer.seed == 3 and [e["id"] for e in schedule["jobs"]] == ["a"]
    _, pol = simulate_policy(inst, ASRPT)
    assert pol.placer.heavy_edge == {"server_start": "heaviest-pair", "single_gpu_weight": "unassigned"}


def test_baseline_runners_are_named_and_check_their_seed() -> None:
    from optkit.formulations.ddlwmp import algorithms

    for name in ("spjf", "spwf", "wcs_duration", "wcs_workload", "wcs_subtime", "fifo"):
        assert getattr(algorithms, f"run_{name}").__name__ == f"run_{name}"
    inst = DdlwmpInstance.from_dict(_inst())
    with pytest.raises(InputError) as exc:
        algorithms.run_spjf(inst, seed=-1)
    assert exc.value.field == "seed" and exc.value.problem == "ddlwmp"


# ----------------------------------------------------------------------------- online.OnlineScheduler
def test_online_scheduler_refuses_an_empty_model_name() -> None:
    from optkit.formulations.ddlwmp.online import OnlineScheduler

    with pytest.raises(InputError) as exc:
        OnlineScheduler(nodes={0: 4}, models={"": PLAIN})
    assert _err(exc) == ("models", "ddlwmp", "must be keyed by non-empty model names, got ''")
    with pytest.raises(InputError) as exc:
        OnlineScheduler(nodes={0: 4}, models=[PLAIN])  # type: ignore[arg-type]
    assert _err(exc) == ("models", "ddlwmp", "must map model names to models, got list")



# ----------------------------------------------------------------------------- a_srpt.ASRPT._comm_heavy
ZERO = {"allreduce": "ring", "stages": [{"replicas": 2, "fwd_time": 0.0, "bwd_time": 0.0, "in_bytes": 0.0,
                                         "out_bytes": 0.0, "param_bytes": 0.0}]}


@pytest.mark.parametrize("threshold, test, heavy", [(1.0, "ge", True), (1.0, "gt", False), (1.5, "ge", False)])
def test_comm_heavy_of_a_model_with_zero_alphas_reads_the_ratio_as_one(threshold: float, test: str,
                                                                        heavy: bool) -> None:
    """alpha~min = alpha_max = 0 (no compute, no bytes): Alg. 1's ratio alpha_max/alpha~min is read
    as 1 (a_srpt.py), so the job is heavy only under ratio >= 1.0."""
    inst = DdlwmpInstance.from_dict(_inst(models={"z": ZERO},
                                          jobs=[{"id": "a", "release": 0.0, "model": "z", "iterations": 1}]))
    pol = ASRPT(inst.cluster, inst.models, comm_heavy=threshold, comm_heavy_test=test)
    assert (pol.placer.alpha_min("z"), pol.placer.alpha_max("z")) == (0.0, 0.0)
    assert pol._comm_heavy("z") is heavy


@pytest.mark.parametrize("test", ["ge", "gt"])
def test_comm_heavy_compares_the_ratio_with_the_threshold_on_both_sides(test: str) -> None:
    inst = DdlwmpInstance.from_dict(_inst())  # k = 2: on one 4-GPU server, or over two
    probe = ASRPT(inst.cluster, inst.models)
    ratio = probe.placer.alpha_max("m") / probe.placer.alpha_min("m")
    assert ratio > 1.0
    for threshold, heavy in [(max(1.0, ratio * (1 - 1e-9)), True), (ratio, test == "ge"),
                             (ratio * (1 + 1e-9), False)]:
        pol = ASRPT(inst.cluster, inst.models, comm_heavy=threshold, comm_heavy_test=test)
        assert pol._comm_heavy("m") is heavy, (threshold, test)


# ----------------------------------------------------------------------------- exact.greedy_schedule
def test_greedy_schedule_names_its_stage_when_the_deadline_passes() -> None:
    inst = DdlwmpInstance.from_dict(_inst())
    opts = _job_options(inst)
    ticks = iter([0.0] + [100.0] * 1000)   # the deadline opens at 0 s; every later reading is 100 s
    with deadline.within(1.0, clock=lambda: next(ticks)):
        with pytest.raises(deadline.DeadlineReached) as exc:
            greedy_schedule(inst, opts)
    assert exc.value.stage == "building the greedy warm start"
    assert str(exc.value) == "time limit of 1 s reached while building the greedy warm start"


# ----------------------------------------------------------------------------- baselines._document
def test_every_baseline_docstring_has_its_reference_and_example() -> None:
    from optkit.formulations.ddlwmp.baselines import BASELINES

    for name, cls in BASELINES.items():
        doc = cls.__doc__ or ""
        ref = "optkit's own reference point (arrival order)" if name == "fifo" else \
            "Luo et al., A-SRPT paper, Sec. V-A-1-d (the baselines)"
        assert f"References\n    ----------\n    {ref}." in doc, name
        assert f"schedule = simulate(inst, {cls.__name__}(inst.cluster, inst.models, seed=0))" in doc, name
        assert "Guarantee: none proven." in doc


# ----------------------------------------------------------------------------- bounds.lower_bounds
def test_lower_bounds_use_the_exact_alpha_min_by_default() -> None:
    """Two one-replica stages with 1e7 B between them on two 1-GPU servers: the stages sit on two
    servers, so alpha~min pays g/B_inter per byte while alpha^lo (quick) takes the cheaper 1/B_intra;
    the default (quick=False) is the exact one."""
    from optkit.formulations.ddlwmp.bounds import lower_bounds

    st = {"replicas": 1, "fwd_time": 0.01, "bwd_time": 0.02, "param_bytes": 0.0}
    model = {"allreduce": "ring", "stages": [dict(st, in_bytes=0.0, out_bytes=1e7), dict(st, in_bytes=1e7, out_bytes=0.0)]}
    inst = DdlwmpInstance.from_dict(_inst(cluster=_cluster(servers=2, g=1), models={"p": model},
                                          jobs=[{"id": "a", "release": 0.0, "model": "p", "iterations": 2}]))
    full, quick = lower_bounds(inst, quick=False), lower_bounds(inst, quick=True)
    assert full["LB1"] > quick["LB1"]
    assert lower_bounds(inst) == full and lower_bounds(inst, "total_completion") == full


# ----------------------------------------------------------------------------- catalog.model_dict
def test_model_dict_splits_the_name_at_the_first_colon_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """``<model>:<config>``: everything after the first colon is the configuration."""
    from optkit.formulations.ddlwmp import catalog

    seen = []
    key = next(iter(catalog.MODELS))

    class Prof:
        batch_size = 1

        def config(self, c: str) -> str:
            seen.append(c)
            return c

    monkeypatch.setattr(catalog, "MODELS", {key: Prof()})
    monkeypatch.setattr(catalog, "stage_dicts", lambda prof, cfg: [cfg])
    assert catalog.model_dict(f"{key}:a:b", "tree") == {"allreduce": "tree", "stages": ["a:b"]}
    assert seen == ["a:b"]


# ----------------------------------------------------------------------------- claims wiring
def test_measure_fig8_replays_the_job_set_at_each_nic_bandwidth(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fig. 8: the same job set on NICs of 1-50 Gbps (1 Gbps = 1.25e8 B/s), the rest of the cluster
    kept."""
    from optkit.formulations.ddlwmp import claims

    data = _inst(cluster=_cluster(servers=3, g=2, slot_seconds=2.0))
    seen: list[Any] = []

    class Stop(Exception):
        pass

    def compare(inst: DdlwmpInstance, r: Any, seed: int) -> Any:
        seen.append(inst.cluster)
        raise Stop

    monkeypatch.setattr(claims, "fig7_job_set", lambda r, **kw: data)
    monkeypatch.setattr(claims, "compare", compare)
    with pytest.raises(Stop):
        claims.measure_fig8(readings={}, seed=0, scale="ci")
    (cl,) = seen
    assert (cl.servers, cl.gpus_per_server, cl.intra_bandwidth, cl.slot_seconds) == (3, 2, B_INTRA, 2.0)
    assert cl.inter_bandwidth == 1 * 1.25e8


def test_series_fig6_runs_the_named_algorithm_on_every_job_count(monkeypatch: pytest.MonkeyPatch) -> None:
    from optkit.formulations.ddlwmp import claims

    calls: list[Any] = []
    monkeypatch.setattr(claims, "_workload", lambda r, *, jobs, **kw: {"jobs": jobs})
    monkeypatch.setattr(claims, "series_readout", lambda alg, cases, r, seed: calls.append((alg, cases, seed)) or "ok")
    assert claims.series_fig6("fifo", readings={}, seed=4, scale="ci") == "ok"
    (alg, cases, seed), = calls
    counts = claims.fig6_jobs("synthetic", "ci")
    assert alg == "fifo" and seed == 4 and cases == [(f"{n} jobs", {"jobs": n}) for n in counts]


@pytest.mark.parametrize("run, name", [("run_a_srpt", "a-srpt"), ("run_a_srpt_perfect", "a-srpt-perfect")])
def test_a_srpt_runs_name_their_policy_in_the_engine_messages(run: str, name: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A policy that starts nothing: the engine's RuntimeError names the policy by its run's name."""
    from optkit.formulations.ddlwmp import algorithms

    monkeypatch.setattr(ASRPT, "decide", lambda self, now, state: [])
    monkeypatch.setattr(ASRPT, "next_wakeup", lambda self, now: None)
    inst = DdlwmpInstance.from_dict(_inst())
    with pytest.raises(RuntimeError) as exc:
        getattr(algorithms, run)(inst, seed=0)
    assert str(exc.value) == f"policy {name} never started 1 jobs: a"
