"""gpu-mapping generator, profiles and suites (formulations/gpu_mapping/generate.py, profiles.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optkit.formulations.gpu_mapping import FORMULATION
from optkit.formulations.gpu_mapping.generate import (
    PATTERNS, SUITES, composition, dumps, free_gpus, generate, random_small, suite_folder, write_suite,
)
from optkit.formulations.gpu_mapping.heavy_edge import heavy_edge_job
from optkit.formulations.gpu_mapping.model import GpuMappingInstance, evaluate
from optkit.formulations.gpu_mapping.profiles import MODELS, balanced_cuts, stage_dicts
from optkit.errors import InputError

import numpy as np


@pytest.fixture(scope="module")
def built() -> dict[str, list[tuple[str, dict]]]:
    return {name: suite.build() for name, suite in SUITES.items()}


# ----------------------------------------------------------------------------- profiles
# Table I parameter counts; XLNet-large is the documented exception (0.36B derived vs 550M).
TABLE1 = {"vgg19": 144e6, "resnet152": 60e6, "inception-v3": 24e6, "bert-large": 340e6, "t5-11b": 11e9,
          "gpt-6.7b": 6.7e9, "gpt-13b": 13e9, "gpt-175b": 175e9}


@pytest.mark.parametrize("key", sorted(TABLE1))
def test_derived_parameter_counts_match_table1(key: str) -> None:
    assert MODELS[key].total_params == pytest.approx(TABLE1[key], rel=0.05)


def test_xlnet_exception_is_documented() -> None:
    m = MODELS["xlnet-large"]
    assert m.table1_params == "550M" and 0.3e9 < m.total_params < 0.4e9 and "550M" in m.notes


def test_activation_sizes_match_the_published_layer_shapes() -> None:
    """Elements leaving each unit, per sample, against the layer shapes of the reference
    implementations (H x W x C after the unit's pooling, if any): VGG19 configuration E at 224 x 224
    (Simonyan & Zisserman 2015, Table 1), torchvision ResNet-152 stage outputs and Inception-V3's
    module outputs at 299 x 299 (Szegedy et al. 2016, Table 1), and n tokens x d for the
    transformers (BERT-large 384 x 1024, GPT-175B 512 x 12288). The output heads pass nothing on."""
    vgg = [224 * 224 * 64, 112 * 112 * 64, 112 * 112 * 128, 56 * 56 * 128] + [56 * 56 * 256] * 3 + [28 * 28 * 256] \
        + [28 * 28 * 512] * 3 + [14 * 14 * 512] + [14 * 14 * 512] * 3 + [7 * 7 * 512] + [4096, 4096, 0]
    assert [u.out_elems for u in MODELS["vgg19"].units] == vgg
    resnet = [56 * 56 * 64] + [56 * 56 * 256] * 3 + [28 * 28 * 512] * 8 + [14 * 14 * 1024] * 36 + [7 * 7 * 2048] * 3 + [0]
    assert [u.out_elems for u in MODELS["resnet152"].units] == resnet
    inception = [73 * 73 * 64, 35 * 35 * 192, 35 * 35 * 256, 35 * 35 * 288, 35 * 35 * 288] + [17 * 17 * 768] * 5 \
        + [8 * 8 * 1280, 8 * 8 * 2048, 8 * 8 * 2048, 0]
    assert [u.out_elems for u in MODELS["inception-v3"].units] == inception
    bert = MODELS["bert-large"].units
    assert all(u.out_elems == 384 * 1024 for u in bert[:-1]) and bert[-1].out_elems == 0
    gpt = MODELS["gpt-175b"].units
    assert all(u.out_elems == 512 * 12288 for u in gpt[:-1]) and gpt[-1].out_elems == 0


def test_known_architecture_facts() -> None:
    vgg = MODELS["vgg19"]
    assert vgg.total_params == 143_667_240  # torchvision vgg19
    assert sum(u.params for u in vgg.units[16:]) > 0.85 * vgg.total_params  # FC layers dominate
    assert MODELS["resnet152"].total_params == 60_192_808  # torchvision resnet152
    assert vgg.total_flops == pytest.approx(2 * 19.6e9, rel=0.01)  # 19.6 GMACs per image


def test_table1_batch_sizes() -> None:
    assert [MODELS[k].batch_size for k in ("vgg19", "inception-v3", "gpt-6.7b", "gpt-13b", "gpt-175b")] == [32, 32, 32, 32, 16]
    for k in ("resnet152", "bert-large", "xlnet-large", "t5-11b"):
        assert "not in Table I" in MODELS[k].batch_note


@pytest.mark.parametrize("key", sorted(MODELS))
def test_every_config_gives_a_valid_job(key: str) -> None:
    m = MODELS[key]
    for cfg in m.configs:
        stages = stage_dicts(m, cfg)
        assert [s["replicas"] for s in stages] == list(cfg.replicas)
        assert sum(s["param_bytes"] for s in stages) == m.total_params * m.grad_bytes
        for s in stages:
            assert s["bwd_time"] == 2 * s["fwd_time"] > 0
        comp = sum(s["fwd_time"] * s["replicas"] for s in stages)  # each replica does B/k_s samples
        assert comp == pytest.approx(m.batch_size * m.total_flops / m.throughput, rel=1e-9)
        GpuMappingInstance.from_dict(generate(model=key, config=cfg.name, pattern="packed"))


def test_balanced_cuts_is_optimal_on_a_small_case() -> None:
    flops = [5.0, 1.0, 1.0, 1.0, 4.0, 4.0]
    cuts = balanced_cuts(flops, (1, 2, 1))
    edges = [0, *cuts, len(flops)]
    loads = [sum(flops[a:b]) / k for (a, b), k in zip(zip(edges, edges[1:]), (1, 2, 1))]
    assert max(loads) == 5.0 and len(cuts) == 2


# ----------------------------------------------------------------------------- free GPUs
@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("n", [1, 5, 16, 37, 256])
def test_patterns_add_up(pattern: str, n: int) -> None:
    for seed in range(5):
        v = free_gpus(n, 8, pattern, np.random.default_rng(seed))
        assert sum(v) == n and all(1 <= c <= 8 for c in v)
        if pattern == "packed":
            assert v == [8] * (n // 8) + ([n % 8] if n % 8 else [])
        if pattern == "fragmented":
            assert max(v) <= 2


def test_composition_has_exact_count() -> None:
    rng = np.random.default_rng(1)
    for n, m in [(12, 2), (8, 4), (9, 9), (64, 8)]:
        v = composition(n, m, 8, rng)
        assert len(v) == m and sum(v) == n and all(1 <= c <= 8 for c in v)
    with pytest.raises(InputError):
        composition(20, 2, 8, rng)


def test_bad_arguments_are_input_errors() -> None:
    with pytest.raises(InputError):
        generate(model="alexnet")
    with pytest.raises(InputError):
        generate(model="vgg19", config="nope")
    with pytest.raises(InputError):
        generate(model="vgg19", pattern="zigzag")
    with pytest.raises(InputError):
        generate(model="vgg19", allreduce="butterfly")


# ----------------------------------------------------------------------------- determinism
def test_same_seed_same_instance_different_seed_different() -> None:
    for model in ("vgg19", "gpt-175b", "bert-large"):
        a = generate(model=model, seed=7, pattern="random")
        assert json.dumps(a) == json.dumps(generate(model=model, seed=7, pattern="random"))
        b = generate(model=model, seed=8, pattern="random")
        assert a != b and a["servers"] != b["servers"]
    assert random_small(3) == random_small(3) and random_small(3) != random_small(4)


def test_meta_and_name() -> None:
    d = generate(model="vgg19", config="table2", pattern="mixed", seed=4, allreduce="tree")
    assert d["name"] == "vgg19_table2_tree_mixed_s4"
    assert d["meta"]["model"] == "vgg19" and d["meta"]["config"] == "table2"
    assert d["meta"]["pattern"] == "mixed" and d["meta"]["seed"] == 4
    assert d["meta"]["stage_units"][-2] == "fc6"


# ----------------------------------------------------------------------------- suites
def test_every_suite_instance_validates_and_round_trips(built) -> None:
    for name, items in built.items():
        names = [n for n, _ in items]
        assert len(names) == len(set(names)), name
        for inst_name, d in items:
            assert d["name"] == inst_name
            inst = GpuMappingInstance.from_dict(d)
            assert inst.to_dict() == d
            again = json.loads(dumps(d))
            assert again == d and GpuMappingInstance.from_dict(again).to_dict() == d


def test_suite_shapes(built) -> None:
    small = [GpuMappingInstance.from_dict(d) for _, d in built["small"]]
    assert len(small) >= 30
    assert all(i.job.n_replicas <= 12 and 2 <= len(i.servers) <= 4 for i in small)
    assert {i.job.allreduce for i in small} == {"ring", "tree"}
    assert len({d["meta"]["model"] for _, d in built["small"]}) == 9
    assert all(16 <= GpuMappingInstance.from_dict(d).job.n_replicas <= 48 for _, d in built["medium"])
    assert all(64 <= GpuMappingInstance.from_dict(d).job.n_replicas <= 256 for _, d in built["large"])


def test_table2_suite(built) -> None:
    items = built["table2"]
    assert len(items) == 40
    for model, reps in (("vgg19", [4, 4, 4, 2, 1, 1]), ("gpt-175b", [2] * 16)):
        cases = [d for _, d in items if d["meta"]["model"] == model]
        assert len(cases) == 20 and sorted(d["meta"]["table2_case"] for d in cases) == list(range(20))
        assert all(d["meta"]["replicas"] == reps and d["job"]["allreduce"] == "ring" for d in cases)
        assert all(d["cluster"] == {"gpus_per_server": 8, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11}
                   for d in cases)
        assert len({tuple(sorted(d["servers"])) for d in cases}) == 20
        assert all(len(d["servers"]) > 1 for d in cases)


@pytest.mark.parametrize("suite", ["small", "table2"])
def test_shipped_files_are_regenerated_byte_for_byte(suite: str, tmp_path: Path) -> None:
    written = write_suite(suite, tmp_path)
    shipped = suite_folder(suite)
    # the checkout's folder in either layout (tools/mutate.py imports the package from optkit/formulations/)
    assert shipped == Path(__file__).resolve().parents[1] / "instances" / "gpu-mapping" / suite
    assert sorted(p.name for p in shipped.glob("*.json")) == sorted(p.name for p in written)
    for p in written:
        assert (shipped / p.name).read_bytes() == p.read_bytes(), p.name


def test_formulation_exposes_suites_and_generator() -> None:
    assert set(FORMULATION.suites) >= {"small", "table2", "medium", "large"}
    d = FORMULATION.generate(model="t5-11b", seed=2)
    FORMULATION.instance_from_dict(d)


# ----------------------------------------------------------------------------- property test
_CHOICES = [(m, c.name) for m in sorted(MODELS) for c in MODELS[m].configs]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(choice=st.sampled_from(_CHOICES), pattern=st.sampled_from(PATTERNS), seed=st.integers(0, 2**31 - 1),
       allreduce=st.sampled_from(["ring", "tree"]))
def test_any_generated_instance_round_trips_and_heavy_edge_is_feasible(choice, pattern, seed, allreduce) -> None:
    model, config = choice
    d = generate(model=model, config=config, pattern=pattern, seed=seed, allreduce=allreduce)
    again = json.loads(json.dumps(d))
    inst = GpuMappingInstance.from_dict(again)
    assert inst.to_dict() == d
    ev = evaluate(inst, {"assignment": heavy_edge_job(inst.job, inst.servers, seed=seed)})
    assert ev.feasible, ev.violations
    assert math.isfinite(ev.objectives["alpha"]) and ev.objectives["cut"] >= 0
