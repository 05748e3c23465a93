"""ddlwmp's workload generators (formulations/ddlwmp/generate.py, workloads.py): facts a
surviving mutant of the sample broke. Written for the mutation score (issue 36 item 5)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from optkit.errors import InputError
from optkit.formulations.ddlwmp.catalog import AlphaMin, model_catalog
from optkit.formulations.ddlwmp.generate import B_INTER, B_INTRA
from optkit.formulations.ddlwmp.workloads import sec5_workload, trace_workload
from optkit.formulations.gpu_mapping.model import Cluster

RECORDS = [
    {"submission_time": 50.0, "duration": 3600.0, "num_gpu": 2, "job_id": "x2", "user": "u2", "group": "g1",
     "cluster": "vc1", "job_name": "bert"},
    {"submission_time": 0.0, "duration": 600.0, "num_gpu": 1, "job_id": "x0", "user": "u1"},
    {"submission_time": 10.0, "duration": 100.0, "num_gpu": 0},
    {"submission_time": 20.0, "duration": 1800.0, "num_gpu": 5, "group": "g2"},
    {"submission_time": 30.0, "duration": 500.0, "num_gpu": 64},
    {"submission_time": 100.0, "duration": 7200.0, "num_gpu": 2, "group": "g1"},
]
"""Six trace records, out of submission order: the 0-GPU and the 64-GPU ones do not fit a
cluster of 2 x 4 GPUs; the 5-GPU one has no Table I configuration of 5 GPUs."""


def test_trace_workload_reads_each_record() -> None:
    """The four records that fit, in submission order (submissions 0, 20, 50, 100 s), all in the
    window (10 asked); g1's two jobs share one model; iterations = duration / alpha~_min rounded;
    releases = (submission - 0) x the factor that makes the offered load 0.5:
    work / (G x span) / 0.5, work = sum g_k n_k alpha_k."""
    d = trace_workload(RECORDS, jobs=10, servers=2, load=0.5, seed=0, gpus_per_server=4)
    jobs, meta = d["jobs"], d["meta"]
    assert [j["id"] for j in jobs] == ["j0", "j1", "j2", "j3"]
    assert [j["trace_id"] for j in jobs] == ["x0", "1", "x2", "3"]
    assert [j["trace_duration"] for j in jobs] == [600.0, 1800.0, 3600.0, 7200.0]
    assert [j["trace_gpus"] for j in jobs] == [1, 5, 2, 2]
    catalog = model_catalog(8)
    assert [j["gpus"] for j in jobs] == [catalog[j["model"]][2] for j in jobs]
    assert jobs[0]["gpus"] == 1 and jobs[2]["gpus"] == 2 and jobs[1]["gpus"] != 5
    assert jobs[2]["model"] == jobs[3]["model"]
    assert (jobs[0]["user"], jobs[2]["user"], jobs[2]["vc"], jobs[2]["job_name"], jobs[2]["group"]) == (
        "u1", "u2", "vc1", "bert", "g1")
    assert "user" not in jobs[1] and "vc" not in jobs[0] and jobs[1]["group"] == "g2"
    alpha = AlphaMin(d["models"], Cluster(4, B_INTER, B_INTRA))
    assert [j["iterations"] for j in jobs] == [max(1, round(j["trace_duration"] / alpha(j["model"]))) for j in jobs]
    work = sum(j["gpus"] * j["iterations"] * alpha(j["model"]) for j in jobs)
    natural = work / (8 * 100.0)
    assert meta["trace_load"] == pytest.approx(natural) and meta["time_factor"] == pytest.approx(natural / 0.5)
    assert [j["release"] for j in jobs] == [round(t * natural / 0.5, 3) for t in (0.0, 20.0, 50.0, 100.0)]
    assert meta["window"] == {"offset": 0, "jobs": 4, "of": 4} and meta["dropped_over_cluster"] == 2
    assert meta["demand_reduced"] == 1 and meta["load"] == 0.5 and meta["seed"] == 0
    assert meta["configuration_sizes"] == sorted({k for _, _, k in catalog.values()})
    assert meta["synthetic"]["model"].endswith("drawn per group")
    assert meta["synthetic"]["iterations"] == "trace duration / alpha~_min of the model"
    assert meta["prediction"]["trained_on"] == 3 and meta["prediction"]["predicted"] == 1
    assert all("predicted_iterations" in j for j in jobs)
    assert d["name"] == "trace_records_n4_m2_l0.5_s0" and d["cluster"]["gpus_per_server"] == 4
    assert "unstated_batch_factor" not in meta
    bare = trace_workload(RECORDS, jobs=10, servers=2, load=0.5, seed=0, gpus_per_server=4, predict=False)
    assert "prediction" not in bare["meta"] and all("predicted_iterations" not in j for j in bare["jobs"])


def test_trace_workload_window_and_its_checks() -> None:
    """Two jobs asked of the four that fit: a seeded window of two consecutive ones; a record
    without groups draws its model per job."""
    d = trace_workload(RECORDS, jobs=2, servers=2, load=1.0, seed=3, gpus_per_server=4, predict=False)
    w = d["meta"]["window"]
    assert w["jobs"] == 2 and w["of"] == 4 and 0 <= w["offset"] <= 2 and len(d["jobs"]) == 2
    assert d["jobs"][0]["release"] == 0.0
    plain = [{k: v for k, v in r.items() if k != "group"} for r in RECORDS]
    assert trace_workload(plain, jobs=10, servers=2, load=1.0, gpus_per_server=4, predict=False)["meta"][
        "synthetic"]["model"].endswith("drawn per job")
    for kw, field in (({"jobs": 0}, "jobs"), ({"load": 0}, "load"), ({"load": "high"}, "load"),
                      ({"servers": 0}, "servers"), ({"seed": -1}, "seed")):
        args: dict[str, Any] = dict(jobs=4, servers=2, load=1.0, gpus_per_server=4, predict=False)
        with pytest.raises(InputError) as info:
            trace_workload(RECORDS, **{**args, **kw})
        assert info.value.field == field
    with pytest.raises(InputError) as info:
        trace_workload([*RECORDS, {"submission_time": 1.0, "num_gpu": 1}], jobs=4, servers=2, load=1.0)
    assert info.value.field == "records[6].duration"
    with pytest.raises(InputError) as info:
        trace_workload(RECORDS[:3], jobs=4, servers=1, load=1.0, gpus_per_server=1)
    assert info.value.field == "records" and "fewer than two jobs" in str(info.value)


def test_sec5_workload_passes_its_arguments_on() -> None:
    """A trace workload from given records at seed 3; a synthetic one at seed 3 twice is the same
    job set, at seed 4 another; an unknown workload is named."""
    d = sec5_workload("itp", jobs=10, servers=1, load=0.5, seed=3, records=RECORDS)
    assert d["meta"]["seed"] == 3 and d["meta"]["trace"] == "itp" and len(d["jobs"]) == 4
    a = sec5_workload("synthetic", jobs=20, servers=1, load=0.5, seed=3)
    assert a["jobs"] == sec5_workload("synthetic", jobs=20, servers=1, load=0.5, seed=3)["jobs"]
    assert a["jobs"] != sec5_workload("synthetic", jobs=20, servers=1, load=0.5, seed=4)["jobs"]
    with pytest.raises(InputError) as info:
        sec5_workload("pai", jobs=10, servers=1, load=0.5, seed=0)
    assert info.value.field == "workload" and "synthetic, itp, philly" in str(info.value)


def test_a_tensor_parallel_variant_splits_each_stages_compute() -> None:
    """gpt-13b:pipe4x1 with t = 2: each stage's fwd and bwd halved, ``tensor_parallel`` 2 and
    positive slice bytes; the AllReduce kind and every other field as the catalog's model."""
    from optkit.formulations.ddlwmp.catalog import model_dict
    from optkit.formulations.ddlwmp.llm_workloads import moe_groups, tp_model_dict

    base = model_dict("gpt-13b:pipe4x1", "tree")
    tp = tp_model_dict("gpt-13b:pipe4x1", 2, "tree")
    assert tp["allreduce"] == "tree" and len(tp["stages"]) == len(base["stages"]) == 4
    for s, b in zip(tp["stages"], base["stages"]):
        assert s["fwd_time"] == pytest.approx(b["fwd_time"] / 2) and s["bwd_time"] == pytest.approx(b["bwd_time"] / 2)
        assert s["tensor_parallel"] == 2 and s["tp_bytes"] > 0
        times = ("fwd_time", "bwd_time", "tensor_parallel", "tp_bytes")
        assert {k: v for k, v in s.items() if k not in times} == {k: v for k, v in b.items() if k not in times}
    assert (moe_groups(12), moe_groups(6), moe_groups(16), moe_groups(3)) == (4, 2, 8, 1)


def test_generate_defaults_bounds_and_shares() -> None:
    """The defaults are seed 0 and 16 GPUs at most; load must be > 0 and a share may be 1 (every
    job single-GPU); releases start at 0 and never go back."""
    import json

    from optkit.formulations.ddlwmp.generate import generate

    base = generate(jobs=40, servers=3, predictor=None)  # 24 GPUs: the 16-GPU limit is the default's
    assert json.dumps(base) == json.dumps(generate(jobs=40, servers=3, predictor=None, seed=0, max_gpus=16))
    assert base["meta"]["params"]["max_gpus"] == 16
    releases = [j["release"] for j in base["jobs"]]
    assert releases[0] == 0.0 and releases == sorted(releases)
    one = generate(jobs=20, servers=1, single_gpu_share=1.0, predictor=None)
    assert one["meta"]["single_gpu_job_share"] == 1.0
    assert all(len(one["models"][j["model"]]["stages"]) == 1 and one["models"][j["model"]]["stages"][0]["replicas"]
               == 1 for j in one["jobs"])
    with pytest.raises(InputError) as info:
        generate(jobs=20, servers=1, load=0)
    assert info.value.field == "load" and str(info.value).endswith("must be a positive number, got 0")


def test_generated_llm_shares_are_those_of_the_jobs() -> None:
    """With half the distributed groups made tensor-parallel or MoE, the meta's job shares are the
    shares of jobs whose model has t > 1 (tensor-parallel) or e > 1 expert groups (MoE)."""
    from optkit.formulations.ddlwmp.generate import generate

    d = generate(jobs=60, servers=2, single_gpu_share=0.2, tp_share=0.3, moe_share=0.3, predictor=None, seed=1)
    tp = [any(s.get("tensor_parallel", 1) > 1 for s in d["models"][j["model"]]["stages"]) for j in d["jobs"]]
    moe = [any(s.get("experts", 1) > 1 for s in d["models"][j["model"]]["stages"]) for j in d["jobs"]]
    assert 0 < sum(tp) < len(tp) and 0 < sum(moe) < len(moe)
    assert d["meta"]["tp_job_share"] == pytest.approx(sum(tp) / len(tp))
    assert d["meta"]["moe_job_share"] == pytest.approx(sum(moe) / len(moe))


def test_from_trace_meta_says_what_is_real_and_what_is_drawn() -> None:
    """The trace's window start, GPU demands and the rules of the drawn parts, as the meta states
    them; 8.0 is the default group size."""
    import json

    from optkit.formulations.ddlwmp.generate import from_trace

    recs = [{"job_id": f"r{i}", "submission_time": float(10 * i), "duration": float(600 * (1 + i % 3)),
             "num_gpu": (1, 2, 4)[i % 3]} for i in range(12)]
    d = from_trace(recs, servers=2, jobs=6, start=3, seed=1, predictor=None)
    meta = d["meta"]
    assert meta["start"] == 3 and meta["jobs"] == 6 and meta["seed"] == 1
    assert [j["trace_gpus"] for j in d["jobs"]] == [r["num_gpu"] for r in recs[3:9]]
    assert meta["synthetic"]["model"] == "random Table I configuration of the job's GPU demand, per group"
    assert meta["synthetic"]["iterations"] == "trace duration / alpha~_min of the model"
    assert meta["synthetic"]["user"] == "synthetic owner per group"
    assert json.dumps(d) == json.dumps(from_trace(recs, servers=2, jobs=6, start=3, seed=1, predictor=None,
                                                  group_size=8.0))


def test_prepare_fills_predictions_with_the_runs_seed() -> None:
    """The formulation's preparation: the forest trained with the run's seed (None: 0), its MAE
    reported; seeds 5 and 0 give different forests on this job set."""
    import copy

    from optkit.formulations.ddlwmp import _prepare
    from optkit.formulations.ddlwmp.generate import generate
    from optkit.predict import fill_predictions

    d = generate(jobs=60, servers=2, predictor=None, seed=2)
    five, zero, none, ref = (copy.deepcopy(d) for _ in range(4))
    out = _prepare(five, predictor="rf", seed=5)
    assert out == {"predictor": "rf", "mean_absolute_error": fill_predictions(ref, predictor="rf", seed=5)}
    assert [j["predicted_iterations"] for j in five["jobs"]] == [j["predicted_iterations"] for j in ref["jobs"]]
    assert _prepare(zero, predictor="rf", seed=0) == _prepare(none, predictor="rf")
    assert zero["jobs"] == none["jobs"] and zero["jobs"] != five["jobs"]


def test_a_trace_window_submitted_at_one_instant_keeps_its_releases_at_zero() -> None:
    """Every record submitted at 0 s: the span is 0, the trace's own load infinite, and the
    releases stay 0 (factor 0) whatever the load asked."""
    same = [dict(r, submission_time=0.0) for r in RECORDS]
    d = trace_workload(same, jobs=10, servers=2, load=0.5, gpus_per_server=4, predict=False)
    assert d["meta"]["trace_load"] == math.inf and d["meta"]["time_factor"] == 0.0
    assert {j["release"] for j in d["jobs"]} == {0.0}
