"""gpu-mapping readings (formulations/gpu_mapping/readings.py): declared, switchable, and honoured
consistently by the job graph, evaluate, Heavy-Edge, the exact solvers and the profiles."""

from __future__ import annotations

import inspect
import math

import networkx as nx
import pytest

from optkit.formulations.gpu_mapping import FORMULATION, GpuMappingInstance, evaluate, heavy_edge
from optkit.formulations.gpu_mapping.exact import brute_force
from optkit.formulations.gpu_mapping.generate import generate, random_small
from optkit.formulations.gpu_mapping.model import PipelineJob, Stage
from optkit.formulations.gpu_mapping.profiles import CNN_FLOPS, MODELS, PEAK_FLOPS, stage_dicts
from optkit.formulations.gpu_mapping.readings import GPT175B_LAYOUTS, READINGS, VGG19_LAYOUTS
from optkit.errors import InputError
from optkit.solve import solve


def test_readings_are_declared_and_wired() -> None:
    names = {r.name for r in READINGS}
    assert names == {"two_replica_ring", "single_gpu_weight", "server_start", "table2_free_gpus", "vgg19_layout",
                     "gpt175b_layout", "gpu_throughput", "iteration_batch", "table2_statistic",
                     "tp_allreduce_time", "moe_routing", "moe_zipf_exponent"}
    assert FORMULATION.readings == READINGS
    for layouts, model in ((VGG19_LAYOUTS, "vgg19"), (GPT175B_LAYOUTS, "gpt-175b")):
        for option, config in layouts.items():
            cfg = MODELS[model].config(config)
            assert sum(cfg.replicas) == (16 if model == "vgg19" else 32)
            if "-" in option:  # "8-4-2-1-1" spells the replicas per stage
                assert cfg.replicas == tuple(int(x) for x in option.split("-"))
            else:              # "16x2": stages x replicas
                stages, reps = (int(x) for x in option.split("x"))
                assert cfg.replicas == (reps,) * stages


@pytest.mark.parametrize("name", ["single_gpu_weight", "server_start"])
def test_heavy_edge_takes_its_readings_with_their_defaults(name: str) -> None:
    reading = FORMULATION.reading(name)
    assert reading.algorithms == ("heavy-edge",)
    run = FORMULATION.algorithms["heavy-edge"].run
    assert inspect.signature(run).parameters[name].default == reading.default
    assert inspect.signature(heavy_edge).parameters[name].default == reading.default
    with pytest.raises(InputError):
        solve("gpu-mapping", random_small(0), "heavy-edge", params={name: "nope"})
    for option in reading.options:
        res = solve("gpu-mapping", random_small(0), "heavy-edge", params={name: option})
        assert res.status.value == "feasible"


def _five_vertices() -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from("abcde")
    g.add_weighted_edges_from([("a", "b", 10.0), ("c", "a", 6.0), ("c", "d", 1.0), ("d", "e", 2.0)])
    return g


def test_single_gpu_weight_hand_worked() -> None:
    """Servers [2, 1, 1, 1]. The 2-GPU server takes the heaviest edge a-b. The first one-GPU
    server picks among c, d, e:

    * unassigned: weights to unassigned vertices c: 1 (c-d), d: 1 + 2 = 3, e: 2 -> c; then d: 2,
      e: 2 -> tie, lowest index d; then e.
    * total: all edges c: 6 + 1 = 7, d: 3, e: 2 -> e; then d (3 < 7); then c.
    """
    g = _five_vertices()
    assert heavy_edge(g, [2, 1, 1, 1]) == {"a": 0, "b": 0, "c": 1, "d": 2, "e": 3}
    assert heavy_edge(g, [2, 1, 1, 1], single_gpu_weight="total") == {"a": 0, "b": 0, "e": 1, "d": 2, "c": 3}
    with pytest.raises(ValueError):
        heavy_edge(g, [2, 1, 1, 1], single_gpu_weight="some")


def test_server_start_hand_worked() -> None:
    """Servers [2, 2, 2]; edges a-b 10, d-e 5, b-c 3, e-f 1, c-f 0.5. Server 0 takes a, b (the
    heaviest pair) under both readings. Then:

    * heaviest-pair: server 1 starts at the heaviest edge among unassigned vertices, d-e;
      server 2 gets the rest, c and f (case 1).
    * from-placed: server 1 starts at c (b-c, 3, the heaviest edge from a placed vertex), grows
      by c's heaviest edge to an unassigned vertex, c-f; server 2 gets d and e.
    """
    g = nx.Graph()
    g.add_nodes_from("abcdef")
    g.add_weighted_edges_from([("a", "b", 10.0), ("d", "e", 5.0), ("b", "c", 3.0), ("e", "f", 1.0),
                               ("c", "f", 0.5)])
    assert heavy_edge(g, [2, 2, 2]) == {"a": 0, "b": 0, "c": 2, "d": 1, "e": 1, "f": 2}
    assert heavy_edge(g, [2, 2, 2], server_start="from-placed") == {"a": 0, "b": 0, "c": 1, "d": 2, "e": 2, "f": 1}
    with pytest.raises(ValueError):
        heavy_edge(g, [2, 2, 2], server_start="middle")


def test_table2_free_gpu_cases_reading() -> None:
    """cycle = the shipped suite's patterns in turn; a single pattern names every case's pattern;
    the cases stay distinct multisets of at least two servers."""
    from optkit.formulations.gpu_mapping.generate import table2_cases
    cyc = table2_cases("vgg19", "table2")
    assert [d["meta"]["pattern"] for d in cyc[:4]] == ["random", "mixed", "random", "fragmented"]
    for option in ("random", "mixed"):
        cases = table2_cases("vgg19", "table2", free_gpu_cases=option)
        assert {d["meta"]["pattern"] for d in cases} == {option}
        keys = [tuple(sorted(d["servers"])) for d in cases]
        assert len(set(keys)) == 20 and all(len(k) >= 2 and sum(k) == 16 for k in keys)
    with pytest.raises(InputError):
        table2_cases("vgg19", "table2", free_gpu_cases="fragmented")


def _two_replica_instance(ring: str) -> GpuMappingInstance:
    job = PipelineJob((Stage(2, 0.01, 0.02, 0.0, 0.0, 1e6),), "ring", two_replica_ring=ring)
    from optkit.formulations.gpu_mapping.model import Cluster
    return GpuMappingInstance(Cluster(2, 1e9, 1e11), job, (1, 1))


def test_two_replica_ring_hand_worked() -> None:
    """One stage of 2 replicas, h = 1 MB, each replica on its own server: the ring's data per
    replica is 2(k-1)h/k = h. two-edges charges the pair twice (2 MB), one-edge once (1 MB).
    eq. (7)'s alpha does not depend on the reading."""
    ev = {r: evaluate(_two_replica_instance(r), {"assignment": [[0, 1]]}) for r in ("two-edges", "one-edge")}
    assert ev["two-edges"].objectives["cut"] == pytest.approx(2e6)
    assert ev["one-edge"].objectives["cut"] == pytest.approx(1e6)
    assert ev["two-edges"].objectives["alpha"] == ev["one-edge"].objectives["alpha"]
    d = _two_replica_instance("one-edge").to_dict()
    assert d["job"]["two_replica_ring"] == "one-edge"
    assert "two_replica_ring" not in _two_replica_instance("two-edges").to_dict()["job"]
    assert GpuMappingInstance.from_dict(d).job.two_replica_ring == "one-edge"
    d["job"]["two_replica_ring"] = "three"
    with pytest.raises(InputError) as err:
        GpuMappingInstance.from_dict(d)
    assert err.value.field == "job.two_replica_ring"


def _ring_cases() -> list[dict]:
    """Small ring instances with a two-replica stage split over servers (brute-force size)."""
    out = []
    for seed in range(200):
        d = random_small(seed, max_replicas=7)
        reps = [s["replicas"] for s in d["job"]["stages"]]
        if d["job"]["allreduce"] == "ring" and 2 in reps and len(d["servers"]) >= 2:
            out.append(d)
        if len(out) == 6:
            break
    return out


@pytest.mark.parametrize("ring", ["two-edges", "one-edge"])
def test_exact_solvers_agree_with_evaluate_under_both_ring_readings(ring: str) -> None:
    cases = _ring_cases()
    assert len(cases) == 6
    for d in cases:
        d = dict(d, job=dict(d["job"], two_replica_ring=ring))
        inst = GpuMappingInstance.from_dict(d)
        best, _ = brute_force(inst, "cut")
        for algo in ("cpsat", "highs"):
            res = solve("gpu-mapping", d, algo, objective="cut", seed=0, time_limit=30)
            assert res.status.value == "optimal", (algo, d["name"])
            assert evaluate(inst, res.solution).objectives["cut"] == pytest.approx(res.objective, rel=1e-6)
            assert res.objective == pytest.approx(best, rel=1e-6, abs=1e-3), (algo, d["name"], ring)


def test_ring_reading_changes_the_optimum_cut_by_the_two_replica_stages() -> None:
    """Same instance, both readings: an assignment's cut differs by exactly h_s for every
    two-replica ring stage it splits (one of the two summed edges is dropped)."""
    d = _ring_cases()[3]  # synthetic_ring_s20: stages of 1 and 2 replicas on servers [1, 1, 1]
    two = GpuMappingInstance.from_dict(d)
    one = GpuMappingInstance.from_dict(dict(d, job=dict(d["job"], two_replica_ring="one-edge")))
    from optkit.formulations.gpu_mapping.heavy_edge import heavy_edge_job
    a = heavy_edge_job(two.job, two.servers)
    dropped = sum(st.param_bytes for st, row in zip(two.job.stages, a) if st.replicas == 2 and row[0] != row[1])
    assert dropped > 0
    assert evaluate(two, {"assignment": a}).objectives["cut"] - evaluate(one, {"assignment": a}).objectives["cut"] \
        == pytest.approx(dropped)


def test_profile_readings_scale_the_stages() -> None:
    """peak: times scale by 25e12/125e12 (VGG19's sustained CNN figure over the V100 peak), bytes
    unchanged; one-sample: times and activations divided by the mini-batch (32), parameters kept."""
    prof = MODELS["vgg19"]
    cfg = prof.config("table2")
    base = stage_dicts(prof, cfg)
    peak = stage_dicts(prof, cfg, gpu_throughput="peak")
    one = stage_dicts(prof, cfg, iteration_batch="one-sample")
    for b, p, o in zip(base, peak, one):
        assert p["fwd_time"] == pytest.approx(b["fwd_time"] * CNN_FLOPS / PEAK_FLOPS)
        assert p["param_bytes"] == b["param_bytes"] and p["out_bytes"] == b["out_bytes"]
        assert o["fwd_time"] == pytest.approx(b["fwd_time"] / 32)
        assert o["out_bytes"] == pytest.approx(b["out_bytes"] / 32)
        assert o["param_bytes"] == b["param_bytes"]
    # VGG19 conv1_1 by hand: 2*224*224*3*3*3*64 FLOPs per sample
    assert prof.units[0].flops == 2 * 224 * 224 * 9 * 3 * 64


def test_generate_records_non_default_readings() -> None:
    d = generate(model="vgg19", config="table2", seed=3, two_replica_ring="one-edge", iteration_batch="one-sample")
    assert d["meta"]["readings"] == {"two_replica_ring": "one-edge", "iteration_batch": "one-sample"}
    assert d["name"].endswith("_one-edge_one-sample")
    assert d["job"]["two_replica_ring"] == "one-edge"
    plain = generate(model="vgg19", config="table2", seed=3)
    assert "readings" not in plain["meta"] and "two_replica_ring" not in plain["job"]
    assert math.isclose(sum(s["fwd_time"] for s in plain["job"]["stages"]),
                        32 * sum(s["fwd_time"] for s in d["job"]["stages"]))
    with pytest.raises(InputError) as err:
        generate(model="vgg19", gpu_throughput="fast")
    assert err.value.field == "gpu_throughput"


@pytest.mark.parametrize("ring", ["two-edges", "one-edge"])
@pytest.mark.parametrize("single", ["unassigned", "total"])
@pytest.mark.parametrize("start", ["heaviest-pair", "from-placed"])
def test_fig2_comes_out_as_the_paper_describes_under_every_reading(ring: str, single: str, start: str) -> None:
    """Paper Fig. 2 (servers 4, 1, 1): S1 and S2 on the four-GPU server, one S3 replica on each
    one-GPU server, whichever reading of the ring, case 2b or case 2c is taken."""
    from optkit.formulations.gpu_mapping.heavy_edge import heavy_edge_job
    from tests.test_gpu_mapping_model import FIG2
    d = dict(FIG2, job=dict(FIG2["job"], two_replica_ring=ring))
    inst = GpuMappingInstance.from_dict(d)
    assert heavy_edge_job(inst.job, inst.servers, single_gpu_weight=single, server_start=start) == [[0, 0], [0, 0], [1, 2]]
