"""gpu-mapping's model profiles (formulations/gpu_mapping/profiles.py) against their sources.

Every number of a profile is derived from layer shapes by the module docstring's formulas; these
tests pin the derived values to what the sources publish (parameter counts of the reference
implementations, Table I, the published FLOP counts, the throughputs the docstring cites) and to
the docstring's per-unit formulas, and check the configuration table's names against its
replica vectors. ``tests/test_gpu_mapping_generate.py`` checks the activation sizes and that every
configuration gives a valid job.
"""

from __future__ import annotations

import re

import pytest

from optkit.formulations.gpu_mapping import profiles
from optkit.formulations.gpu_mapping.profiles import (
    MODEL_TABLE, MODELS, Config, ModelProfile, Unit, balanced_cuts, build_model, stage_bounds, stage_dicts,
    throughput_of,
)

KEYS = ("vgg19", "resnet152", "inception-v3", "bert-large", "xlnet-large", "t5-11b", "gpt-6.7b", "gpt-13b", "gpt-175b")


def test_the_nine_models_of_table1_in_order() -> None:
    assert list(MODELS) == list(KEYS) and len(MODELS) == 9
    assert "gpt-175b" in MODELS and "gpt-4" not in MODELS
    assert [MODELS[k].key for k in KEYS] == list(KEYS)
    with pytest.raises(KeyError):
        MODELS["gpt-4"]


def test_a_lookup_builds_the_profile_from_the_table() -> None:
    """Nothing is kept between lookups (so the tables, not a cache filled at import, decide)."""
    a, b = MODELS["vgg19"], profiles.get_model("vgg19")
    assert a == b == build_model("vgg19") and a is not b
    assert a.config_index["table2"] is a.config("table2") is a.config(None)


# ----------------------------------------------------------------------------- parameter counts
@pytest.mark.parametrize("key,published", [("vgg19", 143_667_240), ("resnet152", 60_192_808)])
def test_cnn_parameter_counts_are_torchvisions(key: str, published: int) -> None:
    """torchvision's model table (``vgg19``: 143,667,240 parameters; ``resnet152``, the v1.5
    layout the docstring names: 60,192,808): every unit's count adds up to the published one, and
    VGG19's fc6 (7 x 7 x 512 -> 4096, with bias) holds the 102.8M the model's note names."""
    assert MODELS[key].total_params == published
    assert MODELS["vgg19"].units[16].params == 25088 * 4096 + 4096 == 102_764_544


def test_inception_v3_is_torchvisions_without_the_auxiliary_classifier() -> None:
    """torchvision's inception_v3 has 27,161,264 parameters; its AuxLogits (1x1 768->128 and 5x5
    128->768 BasicConv2d, each with BatchNorm, then fc 768->1000) hold 3,326,696 of them."""
    aux = (768 * 128 + 2 * 128) + (5 * 5 * 128 * 768 + 2 * 768) + (768 * 1000 + 1000)
    assert aux == 3_326_696
    assert MODELS["inception-v3"].total_params == 27_161_264 - aux


def test_bert_large_is_the_published_model_plus_the_span_head() -> None:
    """BERT-large (Hugging Face BertModel, pooler included): 335,141,888 parameters; the SQuAD
    span head is one d -> 2 linear layer."""
    m = MODELS["bert-large"]
    assert m.total_params == 335_141_888 + (1024 * 2 + 2)
    assert m.units[0].params == (30522 + 512 + 2) * 1024 + 2 * 1024       # word + position + type, LayerNorm
    assert m.units[-1].params == (1024 * 1024 + 1024) + (1024 * 2 + 2)   # pooler + span head


def test_xlnet_large_layers_are_the_published_ones() -> None:
    """Hugging Face's XLNet-large layer: q, k, v, o, r (5 d^2), three relative biases (3 d), the
    segment embedding (2 d), two LayerNorms (4 d), FFN d -> 4d -> d with biases: 13,645,824."""
    d = 1024
    layer = 5 * d * d + 3 * d + 2 * d + 2 * d + (d * 4 * d + 4 * d) + (4 * d * d + d) + 2 * d
    assert layer == 13_645_824
    m = MODELS["xlnet-large"]
    assert [u.params for u in m.units[1:-1]] == [layer] * 24
    assert m.units[0].params == 32000 * d
    # the SQuAD head: start (d -> 1), end (2d -> d, LayerNorm, d -> 1), answer class (2d -> d, d -> 1)
    assert m.units[-1].params == (d + 1) + (2 * d * d + d) + 2 * d + (d + 1) + (2 * d * d + d) + (d + 1)


def test_t5_11b_is_the_published_count() -> None:
    """T5-11B (Hugging Face t5-11b, tied embedding counted once): 11,307,321,344 parameters."""
    assert MODELS["t5-11b"].total_params == 11_307_321_344


@pytest.mark.parametrize("key,table1,layers,d", [("gpt-6.7b", 6.7e9, 32, 4096), ("gpt-13b", 13e9, 40, 5140),
                                                 ("gpt-175b", 175e9, 96, 12288)])
def test_gpt_parameter_counts(key: str, table1: float, layers: int, d: int) -> None:
    """The docstring's count, ``(V + 2048) d`` embeddings, ``12 d^2 + 13 d`` per layer, a final
    LayerNorm, the head tied; within 1% of Table I (Brown et al., Table 2.1)."""
    m = MODELS[key]
    assert m.total_params == (50257 + 2048) * d + layers * (12 * d * d + 13 * d) + 2 * d
    assert abs(m.total_params / table1 - 1) < 0.01
    assert len(m.units) == layers + 2


# ----------------------------------------------------------------------------- FLOPs
@pytest.mark.parametrize("key,gmacs", [("vgg19", 19.63), ("resnet152", 11.51), ("inception-v3", 5.71)])
def test_cnn_flops_match_torchvisions_published_figures(key: str, gmacs: float) -> None:
    """torchvision's model table lists multiply-adds per 224 x 224 (299 x 299) image to two
    decimals; one multiply-add is 2 FLOPs."""
    assert round(MODELS[key].total_flops / 2e9, 2) == gmacs


def _conv_flops(cin: int, cout: int, kh: int, kw: int, side: int) -> float:
    return 2.0 * side * side * kh * kw * cin * cout


def test_cnn_units_follow_the_conv_formula() -> None:
    """Per unit, FLOPs ``2 H W k_h k_w C_in C_out`` and parameters ``k_h k_w C_in C_out`` plus
    the bias (VGG) or BatchNorm's 2 C_out (ResNet, Inception), summed over the unit's convs."""
    vgg = MODELS["vgg19"].units
    assert (vgg[0].params, vgg[0].flops) == (3 * 3 * 3 * 64 + 64, _conv_flops(3, 64, 3, 3, 224))
    assert (vgg[15].params, vgg[15].flops) == (3 * 3 * 512 * 512 + 512, _conv_flops(512, 512, 3, 3, 14))
    assert [(u.params, u.flops) for u in vgg[16:]] == [(25088 * 4096 + 4096, 2.0 * 25088 * 4096),
                                                        (4096 * 4096 + 4096, 2.0 * 4096 * 4096),
                                                        (4096 * 1000 + 1000, 2.0 * 4096 * 1000)]
    res = MODELS["resnet152"].units
    assert (res[0].params, res[0].flops) == (7 * 7 * 3 * 64 + 128, _conv_flops(3, 64, 7, 7, 112))
    # torchvision's layer1[0]: 1x1 64->64, 3x3 64->64, 1x1 64->256 and the 64->256 projection: 75,008
    assert res[1].params == 75_008
    assert res[1].flops == sum(_conv_flops(*c) for c in [(64, 64, 1, 1, 56), (64, 64, 3, 3, 56), (64, 256, 1, 1, 56),
                                                           (64, 256, 1, 1, 56)])
    # layer2[0]: the stride-2 3x3 conv, so everything after it runs at 28 x 28
    assert res[4].flops == sum(_conv_flops(*c) for c in [(256, 128, 1, 1, 56), (128, 128, 3, 3, 28),
                                                           (128, 512, 1, 1, 28), (256, 512, 1, 1, 28)])
    assert res[5].params == (512 * 128 + 256) + (9 * 128 * 128 + 256) + (128 * 512 + 1024)   # layer2[1]
    assert (res[-1].params, res[-1].flops) == (2048 * 1000 + 1000, 2.0 * 2048 * 1000)
    inc = MODELS["inception-v3"].units
    for unit, (name, convs, _) in zip(inc, profiles.INCEPTION_V3_UNITS):
        assert unit.name == name
        assert unit.params == sum(kh * kw * cin * cout + 2 * cout for cin, cout, kh, kw, _ in convs)
        assert unit.flops == sum(_conv_flops(*c) for c in convs)
    assert (inc[-1].params, inc[-1].flops) == (2048 * 1000 + 1000, 2.0 * 2048 * 1000)


@pytest.mark.parametrize("key", ["bert-large", "gpt-6.7b", "gpt-175b"])
def test_transformer_layers_follow_the_docstring(key: str) -> None:
    """Layer FLOPs per sample ``24 n d^2 + 4 n^2 d``; the head ``2 n d V`` (tied LM head) or the
    pooler and span head's ``2 d^2 + 4 n d`` (BERT); embeddings cost no FLOPs."""
    t = profiles.TRANSFORMERS[key]
    n, d, V = t["tokens"], t["d"], t["vocab"]
    units = MODELS[key].units
    assert {u.flops for u in units[1:-1]} == {24.0 * n * d * d + 4.0 * n * n * d}
    assert units[0].flops == 0.0
    assert units[-1].flops == (2.0 * d * d + 4.0 * n * d if key == "bert-large" else 2.0 * n * d * V)


def test_xlnet_and_t5_flops_follow_the_docstring() -> None:
    """XLNet: ``28 n d^2 + 8 n^2 d`` per layer (2n relative positions), head ``4 n d^2``. T5 (d_a =
    16384, d_ff = 65536, 512 encoder / 128 decoder tokens): encoder ``2 ne (4 d d_a + 2 d d_ff) +
    4 ne^2 d_a``; decoder self attention, cross attention over the encoder output and FFN; the
    tied head ``2 nd d V``."""
    d, n = 1024, 512
    x = MODELS["xlnet-large"].units
    assert {u.flops for u in x[1:-1]} == {28.0 * n * d * d + 8.0 * n * n * d} and x[-1].flops == 4.0 * n * d * d
    da, dff, ne, nd, V = 16384, 65536, 512, 128, 32128
    t5 = MODELS["t5-11b"].units
    assert len(t5) == 50 and [u.name for u in t5[1:3]] == ["encoder0", "encoder1"] and t5[25].name == "decoder0"
    assert {u.flops for u in t5[1:25]} == {2.0 * ne * (4 * d * da + 2 * d * dff) + 4.0 * ne * ne * da}
    dec = (2.0 * nd * 4 * d * da + 4.0 * nd * nd * da + 2.0 * nd * 2 * d * da + 2.0 * ne * 2 * d * da
           + 4.0 * nd * ne * da + 2.0 * nd * 2 * d * dff)
    assert [u.flops for u in t5[25:49]] == [pytest.approx(dec, rel=1e-15)] * 24
    assert t5[-1].flops == 2.0 * nd * d * V and t5[-1].params == 0
    # the relative-position bias (32 buckets x 128 heads) in each stack's first layer, the final
    # RMS norm in its last
    enc = [u.params for u in t5[1:25]]
    assert enc[0] - enc[1] == 32 * 128 and enc[23] - enc[1] == d and len(set(enc[1:23])) == 1
    dec_p = [u.params for u in t5[25:49]]
    assert dec_p[1] == 8 * d * da + 2 * d * dff + 3 * d and dec_p[0] - dec_p[1] == 32 * 128 and dec_p[23] - dec_p[1] == d
    assert {u.out_elems for u in t5[:-1]} == {(ne + nd) * d}


# ----------------------------------------------------------------------------- batch, bytes, throughput
def test_table1_facts_and_the_docstrings_throughputs() -> None:
    """Table I's parameter column and mini-batch sizes; the effective V100 throughputs the
    docstring cites (25 TFLOP/s for the CNNs, Megatron-LM's 39 TFLOP/s for the transformers) and
    the gradient bytes (fp32 below 1B parameters, fp16 above)."""
    assert [MODELS[k].name for k in KEYS] == ["VGG19", "ResNet152", "Inception-V3", "BERT-large", "XLNet-large",
                                              "T5 (11B)", "GPT-3 6.7B", "GPT-3 13B", "GPT-3 175B"]
    assert [MODELS[k].table1_params for k in KEYS] == ["144M", "60M", "24M", "340M", "550M", "11B", "6.7B", "13B",
                                                         "175B"]
    assert [MODELS[k].batch_size for k in KEYS] == [32, 32, 32, 48, 48, 16, 32, 32, 16]
    assert [MODELS[k].throughput for k in KEYS] == [25e12] * 3 + [39e12] * 6
    assert [MODELS[k].grad_bytes for k in KEYS] == [4] * 5 + [2] * 4
    assert all(MODELS[k].grad_bytes == (4 if MODELS[k].total_params < 1e9 else 2) for k in KEYS)
    assert {MODELS[k].act_bytes for k in KEYS} == {2}


def test_stage_dicts_follow_the_docstring_formulas() -> None:
    """VGG19's Table II job (4-4-4-2-1-1): p^f = (B / k) sum(flops) / R, p^b = 2 p^f, h = params x 4
    bytes, d^out = B out_elems x 2 bytes / k (per replica), d^in of stage s = d^out's whole-batch
    volume of stage s-1 over k_s."""
    m = MODELS["vgg19"]
    cfg = m.config("table2")
    assert stage_bounds(m, cfg) == [(0, 4), (4, 8), (8, 12), (12, 16), (16, 17), (17, 19)]
    got = stage_dicts(m, cfg)
    B, k = 32, (4, 4, 4, 2, 1, 1)
    first = m.units[0:4]
    assert got[0]["fwd_time"] == (B / 4) * sum(u.flops for u in first) / 25e12
    assert got[0]["param_bytes"] == sum(u.params for u in first) * 4
    assert got[0]["out_bytes"] == B * (56 * 56 * 128) * 2 / 4 and got[0]["in_bytes"] == 0.0
    assert got[1]["in_bytes"] == B * (56 * 56 * 128) * 2 / 4
    assert got[4]["in_bytes"] == B * (7 * 7 * 512) * 2 / 1 and got[4]["out_bytes"] == B * 4096 * 2
    assert got[5]["out_bytes"] == 0.0 and [s["replicas"] for s in got] == list(k)
    peak = stage_dicts(m, cfg, gpu_throughput="peak", iteration_batch="one-sample")
    assert peak[0]["fwd_time"] == (1 / 4) * sum(u.flops for u in first) / 125e12
    assert peak[0]["param_bytes"] == got[0]["param_bytes"] and peak[1]["in_bytes"] == got[1]["in_bytes"] / B


# ----------------------------------------------------------------------------- configurations
@pytest.mark.parametrize("key", KEYS)
def test_configuration_names_say_their_replicas(key: str) -> None:
    """``pipe{S}x{k}`` is S stages of k replicas, ``dp{k}`` one stage of k; every configuration
    has non-empty stages, its name once, and the default is one of them."""
    m = MODELS[key]
    names = [c.name for c in m.configs]
    assert len(set(names)) == len(names) == len(MODEL_TABLE[key]["configs"]) and m.default_config in names
    for c in m.configs:
        if (u := re.fullmatch(r"pipe(\d+)x(\d+)", c.name)):
            assert c.replicas == (int(u[2]),) * int(u[1]), c.name
        elif (dp := re.fullmatch(r"dp(\d+)", c.name)):
            assert c.replicas == (int(dp[1]),), c.name
        assert c.n_replicas == sum(c.replicas)
        bounds = stage_bounds(m, c)
        assert len(bounds) == len(c.replicas) and bounds[0][0] == 0 and bounds[-1][1] == len(m.units)


def test_vgg19_cuts_fall_on_block_and_fc_boundaries() -> None:
    """The explicit VGG19 cuts: unit 16 = fc6 (the first FC layer), 17 = fc7; 4, 8, 12 start conv
    blocks 3, 4, 5."""
    units = MODELS["vgg19"].units
    assert [units[i].name for i in (4, 8, 12, 16, 17)] == ["conv3_1", "conv4_1", "conv5_1", "fc6", "fc7"]
    table2 = MODELS["vgg19"].config("table2")
    assert table2.replicas == (4, 4, 4, 2, 1, 1) and table2.cuts == (4, 8, 12, 16, 17)
    assert MODELS["gpt-175b"].config(None).replicas == (2,) * 16


def test_units_count_whole_parameters_and_elements_and_heads_pass_nothing_on() -> None:
    """Parameters and activation elements are integer counts; every model's last unit (its output
    head) passes no activation on, every other unit of a transformer passes n x d elements (T5:
    the encoder's and the decoder's tokens, (512 + 128) x d)."""
    for key in KEYS:
        units = MODELS[key].units
        assert all(type(u.params) is int and type(u.out_elems) is int for u in units), key
        assert units[-1].out_elems == 0 and all(u.out_elems > 0 for u in units[:-1]), key
    for key, carry in [("xlnet-large", 512 * 1024), ("t5-11b", 640 * 1024), ("gpt-6.7b", 512 * 4096)]:
        assert {u.out_elems for u in MODELS[key].units[:-1]} == {carry}, key


# ----------------------------------------------------------------------------- planner
def test_balanced_cuts_edge_cases_and_scale() -> None:
    """As many stages as units: one unit each; more stages than units, or none: refused. The cuts
    depend on the FLOPs' ratios only: scaling every unit by 1e-20 (or 1e20) moves no cut."""
    assert balanced_cuts([3.0, 1.0, 2.0], (1, 1, 1)) == (1, 2)
    for replicas in [(1, 1, 1, 1), ()]:
        with pytest.raises(ValueError, match=f"cannot split 3 units into {len(replicas)} non-empty stages"):
            balanced_cuts([3.0, 1.0, 2.0], replicas)
    flops = [5.0, 1.0, 1.0, 1.0, 4.0, 4.0, 2.0]
    for replicas in [(1, 2, 1), (2, 1), (1, 1, 1, 1)]:
        cuts = balanced_cuts(flops, replicas)
        assert balanced_cuts([f * 1e-20 for f in flops], replicas) == cuts
        assert balanced_cuts([f * 1e20 for f in flops], replicas) == cuts
    assert balanced_cuts(flops, (1, 2, 1)) == (1, 6)   # loads 5, 11/2, 2 (cutting after unit 4 leaves 6 last)


def test_stage_bounds_refuse_cuts_that_leave_a_stage_empty() -> None:
    m = MODELS["vgg19"]
    for cuts, replicas in [((0,), (1, 1)), ((16, 16), (1, 1, 1)), ((17, 16), (1, 1, 1)), ((5,), (1, 1, 1)),
                           ((5, 19), (1, 1, 1))]:
        with pytest.raises(ValueError, match=rf"vgg19/bad: cuts \({cuts[0]},.* do not give {len(replicas)} non-empty"):
            stage_bounds(m, Config("bad", replicas, cuts))
    assert stage_bounds(m, Config("ok", (1, 1), (18,))) == [(0, 18), (18, 19)]


def test_the_first_stage_receives_and_the_last_sends_nothing() -> None:
    """d^in of stage 1 and d^out of stage S are 0 (the input batch and the loss are local), even
    for a model whose last unit has an output tensor; the boundary in between is the whole
    batch's tensor over each side's replicas."""
    units = (Unit("a", 10, 4e12, 100), Unit("b", 20, 2e12, 50), Unit("c", 30, 1e12, 7))
    m = ModelProfile("toy", "Toy", "60", 8, "", units, 1e12, 4, (Config("two", (2, 4), (1,)),), "two")
    got = stage_dicts(m, m.config("two"))
    assert [s["in_bytes"] for s in got] == [0.0, 8 * 100 * 2 / 4]
    assert [s["out_bytes"] for s in got] == [8 * 100 * 2 / 2, 0.0]
    assert [s["fwd_time"] for s in got] == [(8 / 2) * 4.0, (8 / 4) * 3.0]
    assert [s["param_bytes"] for s in got] == [40.0, 200.0]


def test_readings_of_the_profile_are_checked() -> None:
    m = MODELS["vgg19"]
    assert throughput_of(m) == 25e12 and throughput_of(m, "peak") == 125e12
    with pytest.raises(ValueError, match=r"gpu_throughput must be one of \('sustained', 'peak'\), got 'max'"):
        throughput_of(m, "max")
    with pytest.raises(ValueError, match=r"iteration_batch must be one of \('mini-batch', 'one-sample'\), got 'x'"):
        stage_dicts(m, m.config(None), iteration_batch="x")


def test_configurations_carry_their_notes() -> None:
    """Each configuration says what it is; the Table II job and its readings say so."""
    for key in KEYS:
        assert all(c.note for c in MODELS[key].configs), key
    assert MODELS["vgg19"].config("table2").note.startswith("Table II job")
    assert MODELS["gpt-175b"].config("pipe16x2").note == "Table II job: 16 stages x 2 replicas"
    assert "not in Table I" in MODELS["bert-large"].batch_note and "550M" in MODELS["xlnet-large"].notes
