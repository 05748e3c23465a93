"""ddlwmp workloads (formulations/ddlwmp/generate.py): synthetic generator, tiny suite, trace-driven builder."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest

from optkit.formulations.ddlwmp.generate import SUITES, from_trace, generate, model_catalog, tiny
from optkit.formulations.ddlwmp.model import DdlwmpInstance, evaluate, free_time
from optkit.formulations.gpu_mapping.heavy_edge import fewest_servers, heavy_edge_job
from optkit.formulations.gpu_mapping.model import alpha_from_counts, stage_counts
from optkit.errors import InputError
from optkit.formulation import Suite
from optkit.traces import itp_files
from tests.needs import needs_trace


@pytest.fixture(scope="module")
def ci_instance() -> dict:
    return generate(jobs=500, servers=20, seed=0)


@pytest.fixture(scope="module")
def tiny_suite() -> list[tuple[str, dict]]:
    return SUITES["tiny"].build()


def test_valid_and_reproducible(ci_instance: dict) -> None:
    inst = DdlwmpInstance.from_dict(ci_instance)
    assert len(inst.jobs) == 500 and inst.cluster.total_gpus == 160
    assert inst.to_dict()["jobs"] == ci_instance["jobs"]
    again = generate(jobs=500, servers=20, seed=0)
    assert json.dumps(again) == json.dumps(ci_instance)
    assert generate(jobs=500, servers=20, seed=1, predictor=None)["jobs"] != ci_instance["jobs"]
    releases = [j["release"] for j in ci_instance["jobs"]]
    assert releases == sorted(releases) and releases[0] == 0.0
    assert all(j["predicted_iterations"] >= 0 for j in ci_instance["jobs"])
    assert "synthetic" in ci_instance["meta"]


def test_recurrence_share(ci_instance: dict) -> None:
    sizes = Counter(j["group"] for j in ci_instance["jobs"])
    share = sum(1 for j in ci_instance["jobs"] if sizes[j["group"]] >= 5) / len(ci_instance["jobs"])
    assert share == pytest.approx(0.65, abs=0.02)
    # users own several groups; a group is one model
    models = {}
    for j in ci_instance["jobs"]:
        assert models.setdefault(j["group"], j["model"]) == j["model"]
    assert len({j["user"] for j in ci_instance["jobs"]}) < len(sizes)


@pytest.mark.parametrize("share", [0.0, 0.3, 0.8, 1.0])
def test_single_gpu_share(share: float) -> None:
    d = generate(jobs=400, servers=10, single_gpu_share=share, seed=2, predictor=None)
    inst = DdlwmpInstance.from_dict(d)
    got = np.mean([inst.gpus(j) == 1 for j in inst.jobs])
    assert got == pytest.approx(share, abs=0.02)
    assert max(inst.gpus(j) for j in inst.jobs) <= 16


def test_models_are_table1_configurations(ci_instance: dict) -> None:
    cat = model_catalog(16)
    for name, m in ci_instance["models"].items():
        assert name in cat
        assert sum(s["replicas"] for s in m["stages"]) == cat[name][2]


def test_prediction_is_meaningful(ci_instance: dict) -> None:
    jobs = ci_instance["jobs"]
    held = sorted(jobs, key=lambda j: j["release"])[400:]
    mae = np.mean([abs(j["iterations"] - j["predicted_iterations"]) for j in held])
    assert mae == pytest.approx(ci_instance["meta"]["prediction"]["mae"])
    mean_all = np.mean([j["iterations"] for j in jobs[:400]])
    naive = np.mean([abs(j["iterations"] - mean_all) for j in held])
    assert mae < 0.7 * naive


def test_poisson_load_and_batch() -> None:
    d = generate(jobs=300, servers=10, load=0.5, seed=4, predictor=None)
    inst = DdlwmpInstance.from_dict(d)
    alpha = d["meta"]["alpha_min_s"]
    work = sum(inst.gpus(j) * j.iterations * alpha[j.model] for j in inst.jobs)
    span = inst.jobs[-1].release
    assert work / (span * inst.cluster.total_gpus) == pytest.approx(0.5, rel=0.35)
    b = generate(jobs=20, servers=2, arrival="batch", seed=0, predictor="median")
    assert all(j["release"] == 0.0 for j in b["jobs"])
    with pytest.raises(InputError, match="arrival"):
        generate(jobs=5, servers=2, arrival="weibull")
    with pytest.raises(InputError, match="single_gpu_share"):
        generate(jobs=5, servers=2, single_gpu_share=1.5)


def naive_serial(d: dict) -> dict:
    """Every job alone, in release order, on the fewest servers (Heavy-Edge placement)."""
    inst = DdlwmpInstance.from_dict(d)
    g = inst.cluster.gpus_per_server
    t = 0.0
    out = []
    for j in sorted(inst.jobs, key=lambda j: (j.release, j.id)):
        model = inst.model_of(j)
        start = float(max(math.ceil(j.release), t))
        assignment = heavy_edge_job(model, fewest_servers(model.n_replicas, g), seed=0)
        out.append({"id": j.id, "start": start, "assignment": assignment})
        alpha = alpha_from_counts(model, inst.cluster.mapping_cluster, stage_counts(model, assignment, inst.cluster.servers))
        t = free_time(start + j.iterations * alpha, 1.0)
    return {"jobs": out}


def test_tiny_suite(tiny_suite: list[tuple[str, dict]]) -> None:
    assert isinstance(SUITES["tiny"], Suite) and len(tiny_suite) >= 30
    assert len({name for name, _ in tiny_suite}) == len(tiny_suite)
    for name, d in tiny_suite:
        inst = DdlwmpInstance.from_dict(d)
        assert 1 <= len(inst.jobs) <= 6 and inst.cluster.servers in (2, 3) and inst.cluster.gpus_per_server == 4
        assert all(1 <= inst.gpus(j) <= 4 for j in inst.jobs)
        assert all(5 <= j.iterations <= 60 for j in inst.jobs)
        assert all(float(j.release).is_integer() and 0 <= j.release <= 10 for j in inst.jobs)
        for m, a in d["meta"]["alpha_min_s"].items():
            assert 0.05 <= a <= d["meta"]["alpha_max_s"][m] <= 0.8
        ev = evaluate(inst, naive_serial(d))
        assert ev.feasible, (name, ev.violations)
        assert ev.objectives["makespan"] <= 40.0, name
    assert json.dumps(tiny(7)) == json.dumps(tiny(7))


def test_suites_declared() -> None:
    assert set(SUITES) >= {"tiny", "ci", "ci-trace", "paper-sim"}
    assert all(isinstance(s, Suite) for s in SUITES.values())


def test_from_trace_records() -> None:
    rng = np.random.default_rng(0)
    recs = [{"job_id": f"r{i}", "submission_time": float(10 * i), "duration": float(rng.choice([700, 3000, 20000])),
             "num_gpu": int(rng.choice([1, 1, 1, 2, 4, 8, 64]))} for i in range(120)]
    d = from_trace(recs, servers=4, seed=1)
    inst = DdlwmpInstance.from_dict(d)
    kept = [r for r in recs if r["num_gpu"] <= 32]
    assert len(inst.jobs) == len(kept) and d["meta"]["dropped_over_gpu_limit"] == len(recs) - len(kept)
    alpha = d["meta"]["alpha_min_s"]
    for j, r in zip(inst.jobs, kept):
        assert j.id == r["job_id"] and j.release == r["submission_time"]
        assert inst.gpus(j) == r["num_gpu"]
        assert j.iterations == max(1, round(r["duration"] / alpha[j.model]))
    assert "synthetic" in d["meta"] and json.dumps(d) == json.dumps(from_trace(recs, servers=4, seed=1))
    sub = from_trace(recs, servers=4, jobs=10, start=5, seed=1, predictor=None)
    expected = [r["job_id"] for r in recs[5:] if r["num_gpu"] <= 32][:10]
    assert [j["id"] for j in sub["jobs"]] == expected and sub["jobs"][0]["release"] == 0.0


def test_from_trace_real_itp() -> None:
    files = [f for f in itp_files() if f.stem == "cluster02"]
    needs_trace(files, "microsoft-itp/cluster02.csv")
    d = from_trace(files[0], servers=20, jobs=300, seed=0)
    inst = DdlwmpInstance.from_dict(d)
    assert len(inst.jobs) == 300 and d["meta"]["prediction"]["predicted"] == 60
    assert all(inst.gpus(j) == j.extras["trace_gpus"] for j in inst.jobs)


def test_shipped_tiny_suite_is_regenerated_byte_for_byte(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """instances/ddlwmp/tiny is `optkit generate ddlwmp --suite tiny`'s output, unchanged."""
    from pathlib import Path

    from optkit.instances import save_instance

    shipped = Path(__file__).resolve().parents[1] / "instances" / "ddlwmp" / "tiny"
    items = SUITES["tiny"].build()
    assert len(items) == len(list(shipped.glob("*.json"))) >= 30
    for name, data in items:
        save_instance(tmp_path / f"{name}.json", data)
        assert (tmp_path / f"{name}.json").read_bytes() == (shipped / f"{name}.json").read_bytes(), name
