"""Trace-driven Sec. V workloads (formulations/ddlwmp/workloads.py): the documented rules, checked
against independent computations."""

from __future__ import annotations

import math
from typing import Any

import pytest

from optkit.formulations.ddlwmp.generate import model_catalog
from optkit.formulations.ddlwmp.workloads import trace_workload
from optkit.formulations.gpu_mapping.heavy_edge import alpha_min_estimate
from optkit.formulations.gpu_mapping.model import Cluster, PipelineJob
from optkit.errors import InputError


def records(n: int = 40) -> list[dict[str, Any]]:
    """Submissions every 100 s; durations 600..4500 s; GPU demands cycle 1, 2, 5, 8, 1, 100."""
    demand = [1, 2, 5, 8, 1, 100]
    return [{"job_id": f"t{i}", "submission_time": 100.0 * i, "duration": 600.0 + 100.0 * ((7 * i) % 40),
             "num_gpu": demand[i % len(demand)], "user": f"u{i % 3}", "cluster": f"vc{i % 2}",
             "job_name": f"train_{['bert', 'vgg'][i % 2]}-run{i}"} for i in range(n)]


def _alpha(data: dict[str, Any], model: str) -> float:
    c = data["cluster"]
    return alpha_min_estimate(PipelineJob.from_dict(data["models"][model]),
                              Cluster(c["gpus_per_server"], c["inter_bandwidth"], c["intra_bandwidth"]), seed=0)


def test_offered_load_iterations_and_model_rule() -> None:
    """4 servers x 8 GPUs (G = 32): the 100-GPU jobs (1 in 6) are dropped; a 5-GPU demand has no
    configuration of exactly 5 (the catalog has 4 and 6), so it takes a 4-GPU one; the others get
    exactly their demand. n_i = round(duration / alpha~min). The releases are the submissions
    times one factor, and sum g_i n_i alpha~min / (G r_last) equals the load asked for."""
    recs = records()
    data = trace_workload(recs, jobs=1000, servers=4, load=0.5, seed=3, predict=False)
    kept = [r for r in recs if r["num_gpu"] <= 32]
    assert len(data["jobs"]) == len(kept) == 34 and data["meta"]["dropped_over_cluster"] == 6
    sizes = {name: k for name, (_, _, k) in model_catalog(32).items()}
    assert 5 not in set(sizes.values()) and 4 in set(sizes.values())
    factor = data["meta"]["time_factor"]  # checked below through the load it yields
    work = 0.0
    for job, rec in zip(data["jobs"], kept):
        want = 4 if rec["num_gpu"] == 5 else rec["num_gpu"]
        assert sizes[job["model"]] == want
        a = _alpha(data, job["model"])
        assert job["iterations"] == max(1, round(rec["duration"] / a))
        assert job["release"] == pytest.approx(rec["submission_time"] * factor, abs=1e-3)
        work += want * job["iterations"] * a
    assert work / (32 * kept[-1]["submission_time"] * factor) == pytest.approx(0.5, rel=1e-9)
    assert work / (32 * data["jobs"][-1]["release"]) == pytest.approx(0.5, rel=1e-6)
    assert data["meta"]["demand_reduced"] == sum(r["num_gpu"] == 5 for r in kept)
    assert data["jobs"][0]["user"] == "u0" and data["jobs"][1]["vc"] == "vc1"


def test_window_is_consecutive_and_seeded() -> None:
    recs = records(60)
    a = trace_workload(recs, jobs=10, servers=4, load=0.8, seed=5, predict=False)
    b = trace_workload(recs, jobs=10, servers=4, load=0.8, seed=5, predict=False)
    assert a == b
    ids = [j["trace_id"] for j in a["jobs"]]
    usable = [r["job_id"] for r in recs if r["num_gpu"] <= 32]
    start = usable.index(ids[0])
    assert ids == usable[start:start + 10] and a["meta"]["window"]["offset"] == start


def test_a_recurring_group_gets_one_model() -> None:
    recs = [{"submission_time": float(i), "duration": 1000.0 + i, "num_gpu": 2, "group": f"g{i % 3}"} for i in range(30)]
    data = trace_workload(recs, jobs=30, servers=2, load=0.5, seed=0, predict=False)
    by_group: dict[str, set[str]] = {}
    for j in data["jobs"]:
        by_group.setdefault(j["group"], set()).add(j["model"])
    assert sorted(by_group) == ["g0", "g1", "g2"] and all(len(m) == 1 for m in by_group.values())


@pytest.mark.parametrize("bad", [{"load": 0}, {"jobs": 0}, {"servers": 0}])
def test_bad_input_names_the_field(bad: dict[str, Any]) -> None:
    kw = {"jobs": 5, "servers": 2, "load": 0.5, **bad}
    field = next(iter(bad))
    with pytest.raises(InputError, match=field):
        trace_workload(records(), **kw)


def test_missing_column_is_named() -> None:
    recs = records(5)
    del recs[2]["duration"]
    with pytest.raises(InputError, match=r"records\[2\]\.duration"):
        trace_workload(recs, jobs=5, servers=2, load=0.5)
    assert math.isfinite(trace_workload(records(8), jobs=8, servers=4, load=0.5)["meta"]["time_factor"])


def test_pai_format_when_a_copy_is_given(tmp_path) -> None:
    """The PAI 2020 fixture of test_traces (job2: bob, 1 GPU, 100 s, group grpB; job1: alice,
    2 GPUs, 600 s, group grpA): user and group are kept, the group decides the model."""
    from tests.test_traces import pai_fixture
    from optkit.formulations.ddlwmp.workloads import trace_records

    with pytest.raises(InputError, match="pai_folder"):
        trace_records("pai")
    recs = trace_records("pai", pai_folder=pai_fixture(tmp_path / "pai"))
    data = trace_workload(recs, jobs=2, servers=1, load=0.5, seed=0)
    assert [(j["trace_id"], j["user"], j["group"], j["gpus"]) for j in data["jobs"]] == [
        ("job2", "bob", "grpB", 1), ("job1", "alice", "grpA", 2)]
    assert data["meta"]["synthetic"]["model"].endswith("per group")
    assert data["meta"]["prediction"]["trained_on"] == 1


@pytest.mark.parametrize("source", ["synthetic", "records"])
def test_an_unchecked_workload_builds_the_checked_instance(source: str) -> None:
    """``check=False`` (the Sec. V claims' call: the instance is built once, by ``instance_of``,
    not also inside the generator) gives the dict as drawn, predictions filled; the instance built
    from it equals, value for value and type for type, the one built from the checked dict, and
    the checked dict is that instance's canonical ``to_dict`` (with ``name`` and ``meta``)."""
    from optkit.formulations.ddlwmp.sec5 import instance_of
    from optkit.formulations.ddlwmp.workloads import sec5_workload

    def build(check: bool) -> dict[str, Any]:
        if source == "synthetic":
            return sec5_workload("synthetic", jobs=60, servers=2, load=0.8, seed=1, check=check)
        return trace_workload(records(), jobs=30, servers=4, load=0.8, seed=2, check=check)

    checked, unchecked = build(True), build(False)
    assert checked["meta"] == unchecked["meta"] and checked["name"] == unchecked["name"]
    assert "predicted_iterations" in unchecked["jobs"][0]
    once = instance_of(unchecked)
    assert repr(once.to_dict()) == repr(instance_of(checked).to_dict())
    assert once == instance_of(checked) and [j.extras for j in once.jobs] == [j.extras for j in instance_of(checked).jobs]
    assert list(checked) == [*once.to_dict(), "name", "meta"] and {**once.to_dict(), "name": checked["name"],
                                                                   "meta": checked["meta"]} == checked
