"""ddlwmp facts that surviving mutants of the seed-0 sample at d6046ca broke (issue 36
item 5), each confirmed by applying the survivor's edit and running this file: the generators' fields,
``meta`` and rounding, the LLM workloads' readings and the MoE job by hand, the trace loaders'
refusals, the online scheduler's, placer's and arrival check's refusals, the simulation's time
limit message."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.ddlwmp.generate import SIZE_CLASSES, from_trace, generate, group_owners, tiny


def _records(times: list[float], gpus: int = 2) -> list[dict[str, Any]]:
    return [{"submission_time": t, "duration": 600.0 + 60 * i, "num_gpu": gpus} for i, t in enumerate(times)]


def _refused(call: Any) -> InputError:
    with pytest.raises(InputError) as info:
        call()
    return info.value


def test_meta_params_record_servers_and_min_recurrence_by_name() -> None:
    d = generate(jobs=12, servers=3, gpus_per_server=4, min_recurrence=4, seed=1, predictor=None)
    params = d["meta"]["params"]
    assert params["servers"] == 3 and params["min_recurrence"] == 4 and params["jobs"] == 12


def test_poisson_releases_are_rounded_to_the_millisecond() -> None:
    """Releases are ``round(t, 3)``: at least one has a fractional part, and each equals its own rounding."""
    d = generate(jobs=20, servers=2, gpus_per_server=4, seed=3, predictor=None)
    rel = [j["release"] for j in d["jobs"]]
    assert any(r != int(r) for r in rel) and all(r == round(r, 3) for r in rel)


def test_gpu_weights_below_one_are_drawn() -> None:
    """A weight only has to be positive: {2: 0.5, 4: 0.5} draws both demands (0 < w, not w > 1)."""
    d = generate(jobs=40, servers=2, gpus_per_server=4, gpu_weights={2: 0.5, 4: 0.5}, single_gpu_share=0.0,
                 seed=0, predictor=None)
    gpus = {sum(st["replicas"] for st in d["models"][j["model"]]["stages"]) for j in d["jobs"]}
    assert gpus == {2, 4}, gpus


def test_tiny_names_the_jobs_field() -> None:
    assert _refused(lambda: tiny(0, jobs=0)).field == "jobs"


def test_from_trace_names_its_fields_and_keeps_one_gpu_servers() -> None:
    recs = _records([0.0, 10.0, 20.0], gpus=1)
    assert _refused(lambda: from_trace(recs, servers=1, start=-1, predictor=None)).field == "start"
    bad = [{"submission_time": 0.0, "num_gpu": 1}]
    err = _refused(lambda: from_trace(bad, servers=1, predictor=None))
    assert err.field == "records[0].duration" and "is required" in err.message
    d = from_trace(recs, servers=2, gpus_per_server=1, predictor=None)  # one GPU per server is a cluster
    assert d["cluster"]["gpus_per_server"] == 1 and len(d["jobs"]) == 3


def test_from_trace_sorts_records_by_submission_and_names_its_source() -> None:
    recs = _records([30.0, 10.0, 20.0])
    d = from_trace(recs, servers=2, gpus_per_server=4, predictor=None)
    assert [j["release"] for j in d["jobs"]] == [0.0, 10.0, 20.0]
    assert [j["trace_duration"] for j in d["jobs"]] == [660.0, 720.0, 600.0]
    assert d["meta"]["trace"] == "records"


def test_few_groups_have_one_owner() -> None:
    """About one user per five groups, at least one: up to two groups share a single owner."""
    for seed in range(20):
        assert len(set(group_owners(2, np.random.default_rng(seed)))) == 1


def test_size_classes_name_each_instance_as_tiny_does() -> None:
    cases = SIZE_CLASSES["3-6 jobs"].build()
    assert [name for name, _ in cases] == [tiny(s)["name"] for s in range(6)]
    assert all(name == d["name"] for name, d in cases)


# ----------------------------------------------------------------------------- LLM workloads, traces, model
def test_llm_share_refusals_name_the_reading_and_say_why() -> None:
    from optkit.formulations.ddlwmp.llm_workloads import check_llm_shares

    err = _refused(lambda: check_llm_shares(0.1, 1.5, 0.0))
    assert err.field == "moe_share" and "must be a number in [0, 1], got 1.5" in err.message
    err = _refused(lambda: check_llm_shares(0.1, 0.1, float("inf")))
    assert err.field == "routing_skew" and "must be a finite number >= 0, got inf" in err.message


def test_llm_groups_draw_from_their_own_seeded_generator() -> None:
    """The same seed converts the same groups (convert_groups' rng [seed, 37]): two runs agree."""
    a = generate(jobs=30, servers=4, gpus_per_server=8, tp_share=0.5, moe_share=0.3, seed=2, predictor=None)
    b = generate(jobs=30, servers=4, gpus_per_server=8, tp_share=0.5, moe_share=0.3, seed=2, predictor=None)
    assert a["models"] == b["models"] and [j["model"] for j in a["jobs"]] == [j["model"] for j in b["jobs"]]
    assert any("experts" in m["stages"][0] or "tensor_parallel" in m["stages"][0] for m in a["models"].values())


def test_moe_job_of_bert_large_by_hand() -> None:
    """BERT-large (24 layers, d = 1024, 384 tokens, Table I's mini-batch 48) as a 16-GPU MoE job: e = 8
    groups, k = 2 replicas; MoE layers = 24 / 2 = 12, each an FFN of 8 d^2 + 5 d = 8,393,728 parameters
    per expert, 7 more experts than the dense model: param_bytes = (335,143,938 + 7 x 12 x 8,393,728) x 4 B
    = 4,160,868,360; expert_bytes = 4 all-to-alls x 12 layers x (48 / 2) samples x 384 x 1024 x 2 B
    = 905,969,664."""
    from optkit.formulations.ddlwmp.llm_workloads import moe_model_dict
    from optkit.formulations.gpu_mapping.profiles import get_model

    st = moe_model_dict("bert-large", 16, "ring", 0.0)["stages"][0]
    assert get_model("bert-large").total_params == 335_143_938
    assert (st["replicas"], st["experts"]) == (2, 8)
    assert st["param_bytes"] == (335_143_938 + 7 * 12 * (8 * 1024 ** 2 + 5 * 1024)) * 4 == 4_160_868_360
    assert st["expert_bytes"] == 4 * 12 * 24 * 384 * 1024 * 2 == 905_969_664


def test_trace_workload_records_the_llm_shares_by_name() -> None:
    from optkit.formulations.ddlwmp.workloads import trace_workload

    recs = [{"submission_time": 10.0 * i, "duration": 600.0 + 30 * i, "num_gpu": (1, 2, 4, 8)[i % 4]} for i in range(24)]
    d = trace_workload(recs, jobs=24, servers=4, load=0.5, predict=False, tp_share=0.4, moe_share=0.2)
    meta = d["meta"]
    assert (meta["tp_share"], meta["moe_share"], meta["routing_skew"]) == (0.4, 0.2, 0.0)


def test_trace_records_refusals_name_what_is_missing(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import optkit.traces
    from optkit.formulations.ddlwmp.workloads import trace_records

    err = _refused(lambda: trace_records("pai"))
    assert err.field == "pai_folder" and err.message == "the PAI 2020 job tables are not shipped: give the folder of a copy"
    err = _refused(lambda: trace_records("itp", root=tmp_path))
    assert err.field == str(tmp_path / "microsoft-itp") and "no clusterNN.csv" in err.message
    assert _refused(lambda: trace_records("azure", root=tmp_path)).field == "workload"
    monkeypatch.setattr(optkit.traces, "trace_root", lambda: None)
    err = _refused(lambda: trace_records("itp"))
    assert err.field == "traces" and err.message == "no trace folder found (../shared/data/traces); pass root="


def test_cluster_refuses_more_gpus_per_server_than_a_count_holds() -> None:
    from optkit.formulations.ddlwmp.model import DdlwmpCluster
    from optkit.validation import MAX_COUNT

    d = {"servers": 1, "gpus_per_server": MAX_COUNT + 1, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11}
    assert _refused(lambda: DdlwmpCluster.from_dict(d)).field == "cluster.gpus_per_server"


# ----------------------------------------------------------------------------- online scheduler, placer, policies
def test_online_scheduler_refusals_say_why() -> None:
    from optkit.formulations.ddlwmp.online import OnlineScheduler

    err = _refused(lambda: OnlineScheduler(nodes={"a": 4, "b": 4}, inter_bandwidth=-1.0))
    assert err.field == "inter_bandwidth" and "must be a finite number > 0" in err.message and "-1.0" in err.message
    err = _refused(lambda: OnlineScheduler(nodes={"a": 4, "b": 8}))
    assert err.field == "nodes" and "run one scheduler per size class" in err.message


def test_online_scheduler_defaults_to_the_generators_cluster() -> None:
    """The scheduler's default NVLink and NIC bandwidths are the ones ddlwmp's generators write."""
    import inspect

    from optkit.formulations.ddlwmp.generate import B_INTER, B_INTRA
    from optkit.formulations.ddlwmp.online import OnlineScheduler

    params = inspect.signature(OnlineScheduler.__init__).parameters
    assert (params["inter_bandwidth"].default, params["intra_bandwidth"].default) == (B_INTER, B_INTRA)


def test_placer_and_arrival_refusals_name_ddlwmp_and_the_type() -> None:
    from optkit.formulations.ddlwmp.model import DdlwmpCluster
    from optkit.formulations.ddlwmp.placement import Placer
    from optkit.formulations.ddlwmp.policies import ArrivalCheck, JobSpec
    from optkit.formulations.gpu_mapping.model import PipelineJob

    cl = DdlwmpCluster.from_dict({"servers": 1, "gpus_per_server": 4, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11})
    err = _refused(lambda: Placer(cl, "m"))  # type: ignore[arg-type]
    assert err.field == "models" and err.problem == "ddlwmp"
    err = _refused(lambda: Placer(cl, {"m": 5}))  # type: ignore[dict-item]
    assert err.field == "models['m']" and err.message.endswith("got int") and err.problem == "ddlwmp"
    job = PipelineJob.from_dict({"allreduce": "ring", "stages": [{"replicas": 1, "fwd_time": 0.01, "bwd_time": 0.02,
                                                                    "in_bytes": 0.0, "out_bytes": 0.0, "param_bytes": 1e6}]})
    check = ArrivalCheck({"m": job}, total_gpus=4)
    arriving = JobSpec(id="a", release=0.0, model="m", gpus=1, predicted_iterations=5.0)
    check(arriving)
    err = _refused(lambda: check(arriving))
    assert err.field == "job.id" and "arrived twice" in err.message and err.problem == "ddlwmp"


def test_sample_names_max_iterations() -> None:
    from optkit.formulations.ddlwmp.sample import sample

    assert _refused(lambda: sample(lambda lo, hi: lo, max_iterations=0)).field == "max_iterations"


def test_a_simulation_past_its_limit_says_so() -> None:
    """run_policy's time_limit result carries the simulation's own message (how many jobs had started)."""
    from optkit.formulations.ddlwmp.a_srpt import ASRPT
    from optkit.formulations.ddlwmp.model import DdlwmpInstance
    from optkit.formulations.ddlwmp.simulate import run_policy
    from optkit.result import Status

    inst = DdlwmpInstance.from_dict(generate(jobs=40, servers=2, gpus_per_server=4, seed=0, predictor="mean"))
    policy = ASRPT(inst.cluster, inst.models, seed=0)
    res = run_policy(inst, policy, time_limit=1e-9)
    assert res.status is Status.TIME_LIMIT and res.message.startswith("time limit of 1e-09 s reached after"), res.message


def test_arrival_check_refuses_a_fractional_gpu_count() -> None:
    from optkit.formulations.ddlwmp.policies import ArrivalCheck, JobSpec
    from optkit.formulations.gpu_mapping.model import PipelineJob

    job = PipelineJob.from_dict({"allreduce": "ring", "stages": [{"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02,
                                                                    "in_bytes": 0.0, "out_bytes": 0.0, "param_bytes": 1e6}]})
    check = ArrivalCheck({"m": job}, total_gpus=4)
    err = _refused(lambda: check(JobSpec(id="a", release=0.0, model="m", gpus=2.0)))  # type: ignore[arg-type]
    assert err.field == "job.gpus" and "must be an integer >= 1, got 2.0" in err.message


def test_placer_takes_whole_tensor_parallel_replicas() -> None:
    """A tensor-parallel model (t = 2) is placed on counts that are multiples of t (whole replicas);
    a count of 3 GPUs is refused with the rule."""
    from optkit.formulations.ddlwmp.model import DdlwmpCluster
    from optkit.formulations.ddlwmp.placement import Placer
    from optkit.formulations.gpu_mapping.model import PipelineJob

    job = PipelineJob.from_dict({"allreduce": "ring", "stages": [{
        "replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0, "out_bytes": 0.0, "param_bytes": 1e6,
        "tensor_parallel": 2, "tp_bytes": 1e7}]})
    cl = DdlwmpCluster.from_dict({"servers": 2, "gpus_per_server": 4, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11})
    placer = Placer(cl, {"tp": job}, seed=0)
    p = placer.place("tp", np.array([0, 1]), np.array([2, 2]))
    assert sorted(int(c) for c in p.counts) == [2, 2] and p.alpha > 0
    with pytest.raises(ValueError, match="takes whole replicas of 2 GPUs per server"):
        placer.place("tp", np.array([0, 1]), np.array([3, 1]))


def test_evaluate_reads_any_mapping_entry_and_names_one_that_is_not() -> None:
    """A schedule's job entries may be any Mapping (a read-only view judges as the dict it shows);
    an entry that is no Mapping is a violation naming its index, not a crash."""
    from types import MappingProxyType

    from optkit.formulations.ddlwmp import evaluate
    from optkit.formulations.ddlwmp.model import DdlwmpInstance
    from optkit.solve import solve

    data = tiny(1)
    inst = DdlwmpInstance.from_dict(data)
    sol = solve("ddlwmp", data, "a-srpt", seed=0).solution
    want = evaluate(inst, sol)
    viewed = {**sol, "jobs": [MappingProxyType(e) for e in sol["jobs"]]}
    got = evaluate(inst, viewed)
    assert got.feasible and got.objectives == want.objectives
    bad = evaluate(inst, {**sol, "jobs": [5, *sol["jobs"][1:]]})
    assert not bad.feasible and "jobs[0] must be an object with an 'id'" in bad.violations


def test_brute_force_entry_optimises_the_objective_asked_for() -> None:
    """run_brute_force's makespan on tiny(6, jobs=4) is the least makespan (CP-SAT proves the same),
    below the makespan of the total-completion optimum's schedule (so the entry must pass its
    objective on)."""
    from optkit.formulations.ddlwmp import evaluate
    from optkit.formulations.ddlwmp.exact import run_brute_force, run_cpsat
    from optkit.formulations.ddlwmp.model import DdlwmpInstance

    inst = DdlwmpInstance.from_dict(tiny(6, jobs=4))
    by_total = evaluate(inst, run_brute_force(inst, objective="total_completion").solution).objectives["makespan"]
    r = run_brute_force(inst, objective="makespan")
    best = evaluate(inst, r.solution).objectives["makespan"]
    assert best < by_total - 1e-9 and r.bound == pytest.approx(best)
    assert run_cpsat(inst, objective="makespan", seed=0, workers=1).bound == pytest.approx(best, rel=1e-6)


def test_the_span_check_adds_up_the_serial_schedule() -> None:
    """_check_span sums the jobs' n_i alpha_upper (here 3 s an iteration on one GPU): one job of
    0.6 x 2^50 / 3 iterations fits the 2^50 slots, two such jobs in series do not, and the second is named."""
    from optkit.formulations.ddlwmp.model import MAX_SPAN_SLOTS, DdlwmpInstance

    model = {"allreduce": "ring", "stages": [{"replicas": 1, "fwd_time": 1.0, "bwd_time": 2.0, "in_bytes": 0.0,
                                              "out_bytes": 0.0, "param_bytes": 0.0}]}
    n = int(0.6 * MAX_SPAN_SLOTS / 3.0)

    def data(count: int) -> dict[str, Any]:
        return {"problem": "ddlwmp", "models": {"m": model}, "cluster": {
            "servers": 1, "gpus_per_server": 1, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11},
            "jobs": [{"id": f"j{i}", "release": 0, "model": "m", "iterations": n} for i in range(count)]}

    assert len(DdlwmpInstance.from_dict(data(1)).jobs) == 1
    err = _refused(lambda: DdlwmpInstance.from_dict(data(2)))
    assert err.field == "jobs[1]" and "beyond" in err.message


def test_generator_defaults_are_the_documented_ones() -> None:
    """generate's min_recurrence defaults to 5 (the module docstring's "min_recurrence (5)") and from_trace's
    duration bins to width 0.5 in ln (a factor e^0.5 = 1.65, its docstring): both written in meta."""
    d = generate(jobs=10, servers=2, gpus_per_server=4, seed=0, predictor=None)
    assert d["meta"]["params"]["min_recurrence"] == 5
    t = from_trace(_records([0.0, 5.0, 9.0]), servers=2, gpus_per_server=4, predictor=None)
    assert "bin of width 0.5," in t["meta"]["synthetic"]["group"]
