"""Synthetic per-layer profiles of the nine models of Table I (Luo et al., Sec. V) and their
pipeline configurations.

**Everything in this module is an estimate derived from public architecture facts, not a
measurement.** The paper profiles its models on a V100 but publishes only the parameter counts
and mini-batch sizes of Table I. The derivation below is
deterministic and written out in full so anyone can recompute (or replace) every number.

Units and notation
------------------
A model is a sequence of *units* (a conv/FC layer, a ResNet bottleneck block, an Inception
module, a transformer layer, an embedding or an output head). Each unit ``u`` has

* ``params[u]``: trainable parameters (count), computed from the layer shapes below;
* ``flops[u]``: forward FLOPs **per sample** (one multiply-add = 2 FLOPs);
* ``out_elems[u]``: elements of the activation tensor leaving the unit, per sample.

Layer shapes come from the original papers / reference implementations: VGG19 = configuration E
of Simonyan & Zisserman (2015); ResNet152 = He et al. (2016) as in torchvision (v1.5, stride on the
3x3 conv, BatchNorm gamma/beta counted); Inception-V3 = Szegedy et al. (2016) as in torchvision,
299x299 input, auxiliary classifier omitted (training-only head; without it the count is 23.8M,
Table I's "24M"); BERT-large = Devlin et al. (2019) (24 layers, d=1024, FFN 4096, vocab 30522);
XLNet-large = Yang et al. (2019) (24 layers, d=1024, FFN 4096, vocab 32000); T5-11B = Raffel et
al. (2020) (24+24 layers, d_model 1024, d_ff 65536, 128 heads x d_kv 128, vocab 32128, tied
embeddings, no biases); GPT 6.7B/13B/175B = Brown et al. (2020), Table 2.1 (32/40/96 layers,
d = 4096/5140/12288, FFN 4d, vocab 50257, 2048 positions).

Per-unit formulas
-----------------
* Conv (k_h x k_w, C_in -> C_out, output H x W): params ``k_h k_w C_in C_out`` (+ ``C_out`` bias for
  VGG, + ``2 C_out`` BatchNorm for ResNet/Inception); FLOPs ``2 H W k_h k_w C_in C_out``.
* FC (C_in -> C_out): params ``C_in C_out + C_out``; FLOPs ``2 C_in C_out``.
* Pooling, ReLU, BatchNorm and softmax FLOPs are neglected (< 1% of the conv FLOPs).
* Transformer layer (width d, FFN 4d, n tokens): params ``12 d^2 + 13 d``; FLOPs per sample
  ``24 n d^2`` (QKV/output projections and FFN) ``+ 4 n^2 d`` (QK^T and attention x V).
  XLNet adds the relative-position projection (``5 d^2`` projection weights, ``+ 3d`` relative
  biases, ``+ 2d`` segment embeddings; FLOPs ``28 n d^2 + 8 n^2 d`` with 2n relative positions).
  T5 uses an inner attention width ``d_a = 128 x 128 = 16384`` and FFN ``d_ff``: encoder layer
  ``4 d d_a + 2 d d_ff`` params, decoder layer ``8 d d_a + 2 d d_ff`` (self + cross attention).
* Embeddings: ``V d`` (+ positions) params and 0 FLOPs (a lookup). Output heads that share the
  embedding matrix (GPT, T5) count its FLOPs (``2 n d V``) but not its parameters (the tied
  copy's gradient exchange between the first and last stage is not modelled).

Sequence lengths: 512 tokens for T5 and GPT (the paper profiles them "with a token sequence
length of 512", Sec. V-A); BERT-large 384 and XLNet-large 512, their SQuAD2.0 fine-tuning
lengths (Devlin et al.; Yang et al.). T5 decoder: 128 target tokens (T5's span-corruption
targets average 114 tokens; rounded up).

From units to a stage (what ``stage_dicts`` computes)
------------------------------------------------------
A configuration splits the units into S contiguous stages; stage s has ``k_s`` replicas, and
each replica processes ``B / k_s`` samples of the mini-batch B (the mini-batch is spread
evenly over the replicas, Sec. III-A; a fractional share is read as the average).

* ``fwd_time`` p^f_s = ``(B / k_s) * sum(flops) / R`` with R the *effective* V100 throughput:
  ``R = 25e12`` FLOP/s for the CNNs and ``R = 39e12`` FLOP/s for the transformers (assumption:
  mixed-precision training on tensor cores, peak 125e12; Megatron-LM (Shoeybi et al., 2019)
  reports 39 TFLOP/s sustained on one V100 for a 1.2B-parameter GPT-2-style model (30% of
  peak); published ResNet-50 mixed-precision training throughputs on one V100 are of the order
  of 1,000-1,300 img/s, i.e. 25-32 TFLOP/s at 3 x 8.2 GFLOP per image; we take the low end for
  Table I's small mini-batches). Both figures are assumptions, not measurements.
* ``bwd_time`` p^b_s = ``2 * p^f_s`` (the backward pass computes gradients with respect to both
  inputs and weights: twice the forward FLOPs).
* ``param_bytes`` h_s = ``sum(params) * b_grad``: the gradient volume AllReduce exchanges.
  ``b_grad = 4`` (fp32 gradients, as PyTorch AMP + DDP all-reduce them) for the models below
  1B parameters; ``b_grad = 2`` (fp16 gradients, Megatron-LM style) for T5-11B and the GPTs.
* ``out_bytes`` d^out_s = ``(B / k_s) * out_elems(last unit of s) * b_act`` and ``in_bytes``
  d^in_s = ``(B / k_s) * out_elems(last unit of s-1) * b_act``, ``b_act = 2`` (fp16 activations).
  *Convention*: d^in/d^out are **per replica**: one replica's share of the batch's boundary
  activation tensor (the gradient sent back has the same size; eq. (5)'s factor 2 counts both
  directions). So ``k_{s-1} d^out_{s-1} = B * out_elems * b_act = k_s d^in_s``, the validation
  rule of :func:`.model.validate_job`; d^in of the first stage and d^out of the last are 0 (the
  input batch and the loss are local).
* T5 boundaries carry the encoder hidden states **and** the decoder tokens' states
  (``(512 + 128) d`` elements per sample): the decoder's cross-attention needs the encoder
  output in every decoder stage, and the decoder input embeddings are produced in stage 1.

Readings (``readings.py``): ``gpu_throughput`` (``sustained``: R above; ``peak``: the V100
tensor-core peak 125e12 FLOP/s, the fastest a profile on the paper's GPU can be) and
``iteration_batch`` (``mini-batch``: B of Table I; ``one-sample``: B = 1, a PipeDream-style
micro-batch of one sample: p^f, p^b and d^in/d^out divided by B, h_s unchanged).

Table II's absolute times against these profiles
------------------------------------------------
The paper's Table II PITTs are 88.11 ms (Heavy-Edge) / 82.96 ms (optimal) for VGG19 and 10.14 ms
for GPT-175B. Measured (experiments ``a-srpt-table2-*``, seed 0, mean over the 20 cases, ms):

=====================================  ==========  ==========  ========================
job (reading)                          Heavy-Edge  optimal     paper (HE / optimal)
=====================================  ==========  ==========  ========================
VGG19 4-4-4-2-1-1 (default)            198.8       143.5       88.11 / 82.96
VGG19 8-4-2-1-1                        117.7       110.3       88.11 / 82.96
VGG19 4-4-4-4                          875.7       837.8       88.11 / 82.96
VGG19 15-1                             795.1       681.6       88.11 / 82.96
GPT-175B 16x2 (default)                148,419     148,098     10.14 / 10.14
GPT-175B 16x2, one-sample              139,747     139,727     10.14 / 10.14
GPT-175B 32x1, peak, one-sample        401.8       378.4       10.14 / 10.14
=====================================  ==========  ==========  ========================

VGG19 at its mini-batch is of the paper's order, so the PITT scale does not call for a
per-micro-batch definition there. GPT-175B cannot reach milliseconds under any batch definition:
one 16x2 stage holds 6 layers of ``12 d^2`` parameters (d = 12288), ``h_s = 21.7 GB`` in fp16, and
a stage split over two servers all-reduces ``2(k-1)h/k = 21.7 GB`` through a 1/8 share of a
10 Gbps NIC (156 MB/s): 139 s, whatever the batch. Kept whole on one server the stage still
computes ``6 x 3 x 8 x 1.87e12`` FLOP (6 layers, fwd + bwd, 8 samples of 512 tokens per
replica) = 6.9 s at 39 TFLOP/s; one 512-token sample through one layer is 5.6e12 FLOP, 45 ms even at the 125 TFLOP/s
peak, more than the paper's whole PITT. The paper profiled "a smaller model consisting of three
layers from the original model" (Sec. V-A 1-b) and does not say how it scaled that up; its
10.14 ms is not the time of GPT-175B's layer shapes on a V100. Memory capacity is not checked
either (a 16 x 2 GPT-175B pipeline does not fit on 32 GB V100s); the configurations are the
shapes a pipeline planner outputs, kept because the paper uses them.

Configurations
--------------
Each model lists named configurations: a replica vector ``(k_1, ..., k_S)`` and either explicit
stage cuts (unit indices where stages 2..S start) or ``None``, meaning the compute-balanced
contiguous partition of :func:`balanced_cuts` (minimise the largest per-replica stage FLOPs
``sum(flops)/k_s``: what a compute-only planner such as PipeDream's outputs). The VGG19
configurations follow PipeDream's (Narayanan et al., SOSP 2019) "15-1" plan for VGG16: a
data-parallel convolutional part (20M of the 144M parameters, 99% of the FLOPs) and a single
GPU for the fully connected layers, which hold 124M parameters and would be expensive to
all-reduce.

Data and code
-------------
The layer shapes (:data:`VGG19_BLOCKS`, :data:`RESNET152_LAYERS`, :data:`INCEPTION_V3_UNITS`,
:data:`TRANSFORMERS`, ...) and the models' facts and configurations (:data:`MODEL_TABLE`) are
data, transcribed from the sources above; the functions turn them into units and stage dicts by
the formulas above. Nothing is computed when the module is imported: :data:`MODELS` builds a
profile when it is looked up (:func:`build_model`), so every derived number is computed by the
code at the time it is used (and ``tools/mutate.py`` can reach that code).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

__all__ = ["Unit", "Config", "ModelProfile", "MODELS", "get_model", "balanced_cuts", "stage_dicts",
           "CNN_FLOPS", "TRANSFORMER_FLOPS", "PEAK_FLOPS", "ACT_BYTES", "GPU_THROUGHPUTS", "ITERATION_BATCHES",
           "throughput_of", "MODEL_TABLE", "build_model", "model_units", "TRANSFORMERS"]

CNN_FLOPS = 25e12
"""Effective V100 training throughput assumed for the CNNs (FLOP/s)."""
TRANSFORMER_FLOPS = 39e12
"""Effective V100 training throughput assumed for the transformers (FLOP/s), Megatron-LM's figure."""
ACT_BYTES = 2
"""Bytes per activation element (fp16 under mixed precision)."""
PEAK_FLOPS = 125e12
"""V100 tensor-core peak (FLOP/s, NVIDIA's datasheet): reading ``gpu_throughput = peak``."""
GPU_THROUGHPUTS = ("sustained", "peak")
"""Reading ``gpu_throughput``: the model's sustained throughput (CNN_FLOPS / TRANSFORMER_FLOPS)
or the V100 peak."""
ITERATION_BATCHES = ("mini-batch", "one-sample")
"""Reading ``iteration_batch``: an iteration processes Table I's mini-batch, or one sample."""


@dataclass(frozen=True)
class Unit:
    """One indivisible piece of a model: parameters (count), forward FLOPs and output activation
    elements, both per sample."""

    name: str
    params: int
    flops: float
    out_elems: int


@dataclass(frozen=True)
class Config:
    """A pipeline configuration: ``replicas[s]`` = k_s; ``cuts`` = first unit of stages 2..S
    (``None``: the compute-balanced partition)."""

    name: str
    replicas: tuple[int, ...]
    cuts: tuple[int, ...] | None = None
    note: str = ""

    @property
    def n_replicas(self) -> int:
        return sum(self.replicas)


@dataclass(frozen=True)
class ModelProfile:
    """A model of Table I: its units, mini-batch size, precision and throughput assumptions."""

    key: str
    name: str
    table1_params: str
    batch_size: int
    batch_note: str
    units: tuple[Unit, ...]
    throughput: float
    grad_bytes: int
    configs: tuple[Config, ...]
    default_config: str
    act_bytes: int = ACT_BYTES
    notes: str = ""
    config_index: dict[str, Config] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "config_index", {c.name: c for c in self.configs})

    @property
    def total_params(self) -> int:
        return sum(u.params for u in self.units)

    @property
    def total_flops(self) -> float:
        return sum(u.flops for u in self.units)

    def config(self, name: str | None) -> Config:
        return self.config_index[name if name is not None else self.default_config]


# ----------------------------------------------------------------------------- layer shapes (data)
# The published architectures, transcribed; the builders below turn them into units by the
# per-unit formulas of the module docstring. A conv is (C_in, C_out, k_h, k_w, output side H = W).
VGG19_BLOCKS: tuple[tuple[int, int, int], ...] = ((64, 2, 224), (128, 2, 112), (256, 4, 56), (512, 4, 28), (512, 4, 14))
"""VGG19, configuration E (Simonyan & Zisserman 2015, Table 1): per block (channels, 3x3 convs,
side); 224 x 224 RGB input; 2x2 max pooling after each block."""
VGG19_FC: tuple[tuple[str, int, int], ...] = (("fc6", 7 * 7 * 512, 4096), ("fc7", 4096, 4096), ("fc8", 4096, 1000))
"""VGG19's fully connected layers (name, C_in, C_out)."""

RESNET152_STEM: tuple[int, int, int, int, int] = (3, 64, 7, 112, 56)
"""ResNet-152's stem (He et al. 2016, Table 1): (C_in, C_out, kernel, conv output side, side after
the 3x3/2 max pool)."""
RESNET152_LAYERS: tuple[tuple[int, int, int], ...] = ((64, 3, 1), (128, 8, 2), (256, 36, 2), (512, 3, 2))
"""ResNet-152's four layers: (bottleneck width m, blocks, stride of the first block); a block is
1x1 m, 3x3 m (the stride, as torchvision v1.5), 1x1 4m, plus a 1x1/stride projection in the first."""
RESNET152_FC: tuple[int, int] = (2048, 1000)
"""ResNet-152's classifier after global average pooling (C_in, C_out)."""

INCEPTION_V3_UNITS: tuple[tuple[str, tuple[tuple[int, int, int, int, int], ...], int], ...] = (
    ("stem_a", ((3, 32, 3, 3, 149), (32, 32, 3, 3, 147), (32, 64, 3, 3, 147)), 73 * 73 * 64),
    ("stem_b", ((64, 80, 1, 1, 73), (80, 192, 3, 3, 71)), 35 * 35 * 192),
    ("Mixed_5b", ((192, 64, 1, 1, 35), (192, 48, 1, 1, 35), (48, 64, 5, 5, 35), (192, 64, 1, 1, 35),
                  (64, 96, 3, 3, 35), (96, 96, 3, 3, 35), (192, 32, 1, 1, 35)), 35 * 35 * 256),
    ("Mixed_5c", ((256, 64, 1, 1, 35), (256, 48, 1, 1, 35), (48, 64, 5, 5, 35), (256, 64, 1, 1, 35),
                  (64, 96, 3, 3, 35), (96, 96, 3, 3, 35), (256, 64, 1, 1, 35)), 35 * 35 * 288),
    ("Mixed_5d", ((288, 64, 1, 1, 35), (288, 48, 1, 1, 35), (48, 64, 5, 5, 35), (288, 64, 1, 1, 35),
                  (64, 96, 3, 3, 35), (96, 96, 3, 3, 35), (288, 64, 1, 1, 35)), 35 * 35 * 288),
    ("Mixed_6a", ((288, 384, 3, 3, 17), (288, 64, 1, 1, 35), (64, 96, 3, 3, 35), (96, 96, 3, 3, 17)), 17 * 17 * 768),
    ("Mixed_6b", ((768, 192, 1, 1, 17), (768, 128, 1, 1, 17), (128, 128, 1, 7, 17), (128, 192, 7, 1, 17),
                  (768, 128, 1, 1, 17), (128, 128, 7, 1, 17), (128, 128, 1, 7, 17), (128, 128, 7, 1, 17),
                  (128, 192, 1, 7, 17), (768, 192, 1, 1, 17)), 17 * 17 * 768),
    ("Mixed_6c", ((768, 192, 1, 1, 17), (768, 160, 1, 1, 17), (160, 160, 1, 7, 17), (160, 192, 7, 1, 17),
                  (768, 160, 1, 1, 17), (160, 160, 7, 1, 17), (160, 160, 1, 7, 17), (160, 160, 7, 1, 17),
                  (160, 192, 1, 7, 17), (768, 192, 1, 1, 17)), 17 * 17 * 768),
    ("Mixed_6d", ((768, 192, 1, 1, 17), (768, 160, 1, 1, 17), (160, 160, 1, 7, 17), (160, 192, 7, 1, 17),
                  (768, 160, 1, 1, 17), (160, 160, 7, 1, 17), (160, 160, 1, 7, 17), (160, 160, 7, 1, 17),
                  (160, 192, 1, 7, 17), (768, 192, 1, 1, 17)), 17 * 17 * 768),
    ("Mixed_6e", ((768, 192, 1, 1, 17), (768, 192, 1, 1, 17), (192, 192, 1, 7, 17), (192, 192, 7, 1, 17),
                  (768, 192, 1, 1, 17), (192, 192, 7, 1, 17), (192, 192, 1, 7, 17), (192, 192, 7, 1, 17),
                  (192, 192, 1, 7, 17), (768, 192, 1, 1, 17)), 17 * 17 * 768),
    ("Mixed_7a", ((768, 192, 1, 1, 17), (192, 320, 3, 3, 8), (768, 192, 1, 1, 17), (192, 192, 1, 7, 17),
                  (192, 192, 7, 1, 17), (192, 192, 3, 3, 8)), 8 * 8 * 1280),
    ("Mixed_7b", ((1280, 320, 1, 1, 8), (1280, 384, 1, 1, 8), (384, 384, 1, 3, 8), (384, 384, 3, 1, 8),
                  (1280, 448, 1, 1, 8), (448, 384, 3, 3, 8), (384, 384, 1, 3, 8), (384, 384, 3, 1, 8),
                  (1280, 192, 1, 1, 8)), 8 * 8 * 2048),
    ("Mixed_7c", ((2048, 320, 1, 1, 8), (2048, 384, 1, 1, 8), (384, 384, 1, 3, 8), (384, 384, 3, 1, 8),
                  (2048, 448, 1, 1, 8), (448, 384, 3, 3, 8), (384, 384, 1, 3, 8), (384, 384, 3, 1, 8),
                  (2048, 192, 1, 1, 8)), 8 * 8 * 2048),
)
"""torchvision's Inception-V3 at 299 x 299 without the auxiliary classifier (Szegedy et al. 2016,
Table 1): one unit per stem group and per Mixed module, (name, its BasicConv2d layers (C_in,
C_out, k_h, k_w, output side), elements of the module's output); then :data:`INCEPTION_V3_FC`."""
INCEPTION_V3_FC: tuple[int, int] = (2048, 1000)
"""Inception-V3's classifier after global average pooling (C_in, C_out)."""

TRANSFORMERS: dict[str, dict[str, int]] = {
    # d: width; tokens: sequence length n; vocab: V; positions: learned position embeddings
    "bert-large": {"layers": 24, "d": 1024, "tokens": 384, "vocab": 30522, "positions": 512, "token_types": 2},
    "xlnet-large": {"layers": 24, "d": 1024, "tokens": 512, "vocab": 32000},
    # attention: inner width d_a = heads x d_kv; ffn: d_ff; target_tokens: the decoder's
    "t5-11b": {"layers": 24, "d": 1024, "attention": 128 * 128, "ffn": 65536, "vocab": 32128, "tokens": 512,
               "target_tokens": 128, "heads": 128, "relative_buckets": 32},
    "gpt-6.7b": {"layers": 32, "d": 4096, "tokens": 512, "vocab": 50257, "positions": 2048},
    "gpt-13b": {"layers": 40, "d": 5140, "tokens": 512, "vocab": 50257, "positions": 2048},
    "gpt-175b": {"layers": 96, "d": 12288, "tokens": 512, "vocab": 50257, "positions": 2048},
}
"""The transformers' shapes (module docstring: BERT-large, XLNet-large, T5-11B, GPT-3 Table 2.1)."""


# ----------------------------------------------------------------------------- CNN builders
def _conv(cin: int, cout: int, kh: int, kw: int, side: int, per_channel: int) -> tuple[int, float]:
    """A k_h x k_w conv, C_in -> C_out, output side x side: parameters ``k_h k_w C_in C_out`` plus
    ``per_channel`` per output channel (1: a bias, VGG; 2: BatchNorm's gamma and beta, ResNet and
    Inception's BasicConv2d), and forward FLOPs ``2 H W k_h k_w C_in C_out``."""
    return kh * kw * cin * cout + per_channel * cout, 2.0 * side * side * kh * kw * cin * cout


def _fc(name: str, cin: int, cout: int, out_elems: int | None = None) -> Unit:
    return Unit(name, cin * cout + cout, 2.0 * cin * cout, cout if out_elems is None else out_elems)


def _merge(name: str, convs: list[tuple[int, float]], out_elems: int) -> Unit:
    """One unit of the ``(parameters, FLOPs)`` of its convs (:func:`_conv`)."""
    return Unit(name, sum(p for p, _ in convs), sum(f for _, f in convs), out_elems)


def _vgg19() -> tuple[Unit, ...]:
    """:data:`VGG19_BLOCKS` (3x3 convs with bias, no BN), then :data:`VGG19_FC`. A block's last
    conv is followed by 2x2 max pooling, so its output tensor is the pooled one."""
    units = []
    cin = 3
    for b, (c, n, hw) in enumerate(VGG19_BLOCKS, start=1):
        for i in range(1, n + 1):
            side = hw // 2 if i == n else hw  # pooled output leaves the block's last unit
            units.append(_merge(f"conv{b}_{i}", [_conv(cin, c, 3, 3, hw, 1)], side * side * c))
            cin = c
    *hidden, (name, fin, fout) = VGG19_FC
    units += [_fc(*fc) for fc in hidden] + [_fc(name, fin, fout, out_elems=0)]
    return tuple(units)


def _resnet152() -> tuple[Unit, ...]:
    """Stem (:data:`RESNET152_STEM`: 7x7/2 conv + 3x3/2 max pool), the bottleneck blocks of
    :data:`RESNET152_LAYERS`, avg pool + fc (:data:`RESNET152_FC`)."""
    c_in, c_stem, kernel, side, pooled = RESNET152_STEM
    units = [_merge("stem", [_conv(c_in, c_stem, kernel, kernel, side, 2)], pooled * pooled * c_stem)]
    cin, hw = c_stem, pooled
    for li, (m, n, stride) in enumerate(RESNET152_LAYERS, start=1):
        for i in range(n):
            s = stride if i == 0 else 1
            h_out = hw // s
            convs = [_conv(cin, m, 1, 1, hw, 2), _conv(m, m, 3, 3, h_out, 2), _conv(m, 4 * m, 1, 1, h_out, 2)]
            if i == 0:  # the projection shortcut
                convs.append(_conv(cin, 4 * m, 1, 1, h_out, 2))
            units.append(_merge(f"layer{li}.{i}", convs, h_out * h_out * 4 * m))
            cin, hw = 4 * m, h_out
    units.append(_fc("fc", *RESNET152_FC, out_elems=0))
    return tuple(units)


def _inception_v3() -> tuple[Unit, ...]:
    """:data:`INCEPTION_V3_UNITS` (BasicConv2d: conv without bias, BatchNorm) and the classifier."""
    units = [_merge(name, [_conv(*conv, 2) for conv in convs], out) for name, convs, out in INCEPTION_V3_UNITS]
    units.append(_fc("fc", *INCEPTION_V3_FC, out_elems=0))
    return tuple(units)


# ----------------------------------------------------------------------------- transformer builders
def _bert_large() -> tuple[Unit, ...]:
    """Embeddings (word V + position + type, LayerNorm), the layers, pooler + SQuAD span head
    (:data:`TRANSFORMERS`)."""
    t = TRANSFORMERS["bert-large"]
    d, n, V = t["d"], t["tokens"], t["vocab"]
    emb = Unit("embeddings", (V + t["positions"] + t["token_types"]) * d + 2 * d, 0.0, n * d)
    layer = 12 * d * d + 13 * d
    layers = [Unit(f"layer{i}", layer, 24.0 * n * d * d + 4.0 * n * n * d, n * d) for i in range(t["layers"])]
    head = Unit("pooler+qa", d * d + d + 2 * d + 2, 2.0 * d * d + 2.0 * n * d * 2, 0)
    return (emb, *layers, head)


def _xlnet_large() -> tuple[Unit, ...]:
    """Word embeddings (V x d), the two-stream-free (fine-tuning) layers with relative attention,
    SQuAD head; no memory (:data:`TRANSFORMERS`)."""
    t = TRANSFORMERS["xlnet-large"]
    d, n, V = t["d"], t["tokens"], t["vocab"]
    emb = Unit("word_embedding", V * d, 0.0, n * d)
    layer = 13 * d * d + 14 * d  # q,k,v,o,r (5d^2) + FFN (8d^2 + 5d) + 3 rel. biases + seg. emb. + 2 LN
    layers = [Unit(f"layer{i}", layer, 28.0 * n * d * d + 8.0 * n * n * d, n * d) for i in range(t["layers"])]
    # start logits (d->1), end logits (2d->d, LN, d->1), answer class (2d->d, d->1)
    head = Unit("squad_head", 2 * (2 * d * d + d) + 3 * (d + 1) + 2 * d, 2.0 * n * (2 * d * d), 0)
    return (emb, *layers, head)


def _t5_11b() -> tuple[Unit, ...]:
    """Shared embedding (V x d), encoder and decoder layers (inner attention width d_a, FFN d_ff,
    RMS norms, no biases; the relative-position bias in the first layer of each stack, the final
    norm in the last), tied LM head (:data:`TRANSFORMERS`)."""
    t = TRANSFORMERS["t5-11b"]
    d, da, dff, V, ne, nd, L = t["d"], t["attention"], t["ffn"], t["vocab"], t["tokens"], t["target_tokens"], t["layers"]
    bias = t["relative_buckets"] * t["heads"]
    carry = (ne + nd) * d
    emb = Unit("shared_embedding", V * d, 0.0, carry)
    enc = [Unit(f"encoder{i}", 4 * d * da + 2 * d * dff + 2 * d + (bias if i == 0 else 0) + (d if i == L - 1 else 0),
                2.0 * ne * (4 * d * da + 2 * d * dff) + 4.0 * ne * ne * da, carry) for i in range(L)]
    dec_flops = (2.0 * nd * (4 * d * da) + 4.0 * nd * nd * da  # self attention
                 + 2.0 * nd * (2 * d * da) + 2.0 * ne * (2 * d * da) + 4.0 * nd * ne * da  # cross
                 + 2.0 * nd * (2 * d * dff))  # FFN
    dec = [Unit(f"decoder{i}", 8 * d * da + 2 * d * dff + 3 * d + (bias if i == 0 else 0) + (d if i == L - 1 else 0),
                dec_flops, carry) for i in range(L)]
    head = Unit("lm_head(tied)", 0, 2.0 * nd * d * V, 0)
    return (emb, *enc, *dec, head)


def _gpt(key: str) -> tuple[Unit, ...]:
    """GPT-3 (Brown et al., Table 2.1): token + position embeddings, pre-LN layers of width d,
    final LayerNorm and tied LM head (:data:`TRANSFORMERS`)."""
    t = TRANSFORMERS[key]
    d, n, V = t["d"], t["tokens"], t["vocab"]
    emb = Unit("embeddings", (V + t["positions"]) * d, 0.0, n * d)
    body = [Unit(f"layer{i}", 12 * d * d + 13 * d, 24.0 * n * d * d + 4.0 * n * n * d, n * d) for i in range(t["layers"])]
    head = Unit("ln_f+lm_head(tied)", 2 * d, 2.0 * n * d * V, 0)
    return (emb, *body, head)


# ----------------------------------------------------------------------------- planner
def balanced_cuts(flops: list[float] | tuple[float, ...], replicas: tuple[int, ...]) -> tuple[int, ...]:
    """Contiguous partition of the units into ``len(replicas)`` non-empty stages minimising
    ``max_s sum(flops in s) / k_s`` (a compute-only pipeline planner). Exact dynamic programme
    over prefix sums; ties go to the earliest cut. Returns the first unit of stages 2..S."""
    n, S = len(flops), len(replicas)
    if not 1 <= S <= n:
        raise ValueError(f"cannot split {n} units into {S} non-empty stages")
    pre = [0.0]
    for f in flops:
        pre.append(pre[-1] + f)
    INF = math.inf
    # best[s][j]: least bottleneck for the first j units in s stages; arg[s][j]: start of stage s
    best = [[INF] * (n + 1) for _ in range(S + 1)]
    arg = [[-1] * (n + 1) for _ in range(S + 1)]
    best[0][0] = 0.0
    for s in range(1, S + 1):
        k = replicas[s - 1]
        for j in range(s, n - (S - s) + 1):
            for i in range(s - 1, j):
                if best[s - 1][i] == INF:
                    continue
                v = max(best[s - 1][i], (pre[j] - pre[i]) / k)
                if v < best[s][j]:
                    best[s][j], arg[s][j] = v, i
    cuts = []
    j = n
    for s in range(S, 0, -1):
        i = arg[s][j]
        cuts.append(i)
        j = i
    return tuple(sorted(c for c in cuts if c > 0))


def stage_bounds(model: ModelProfile, config: Config) -> list[tuple[int, int]]:
    """``[(first unit, last unit + 1)]`` of each stage of ``config``."""
    cuts = config.cuts if config.cuts is not None else balanced_cuts([u.flops for u in model.units], config.replicas)
    edges = [0, *cuts, len(model.units)]
    if len(edges) != len(config.replicas) + 1 or any(a >= b for a, b in zip(edges, edges[1:])):
        raise ValueError(f"{model.key}/{config.name}: cuts {cuts} do not give {len(config.replicas)} non-empty stages")
    return list(zip(edges, edges[1:]))


def throughput_of(model: ModelProfile, gpu_throughput: str = "sustained") -> float:
    """R (FLOP/s) under reading ``gpu_throughput``: the model's sustained figure or the V100 peak."""
    if gpu_throughput not in GPU_THROUGHPUTS:
        raise ValueError(f"gpu_throughput must be one of {GPU_THROUGHPUTS}, got {gpu_throughput!r}")
    return model.throughput if gpu_throughput == "sustained" else PEAK_FLOPS


def stage_dicts(model: ModelProfile, config: Config, *, gpu_throughput: str = "sustained",
                iteration_batch: str = "mini-batch") -> list[dict[str, Any]]:
    """The instance's stage dicts (see the module docstring for every formula).

    Readings (``readings.py``): ``gpu_throughput`` picks R (sustained / V100 peak);
    ``iteration_batch = one-sample`` sets B = 1 (compute and activations of one sample; the
    parameter bytes h_s do not depend on B)."""
    if iteration_batch not in ITERATION_BATCHES:
        raise ValueError(f"iteration_batch must be one of {ITERATION_BATCHES}, got {iteration_batch!r}")
    B = model.batch_size if iteration_batch == "mini-batch" else 1
    R = throughput_of(model, gpu_throughput)
    bounds = stage_bounds(model, config)
    out = []
    boundary_bytes = [model.units[b - 1].out_elems * model.act_bytes * B for _, b in bounds]  # whole batch
    for s, ((a, b), k) in enumerate(zip(bounds, config.replicas)):
        units = model.units[a:b]
        fwd = (B / k) * sum(u.flops for u in units) / R
        out.append({
            "replicas": int(k),
            "fwd_time": float(fwd),
            "bwd_time": float(2.0 * fwd),
            "in_bytes": 0.0 if s == 0 else float(boundary_bytes[s - 1] / k),
            "out_bytes": 0.0 if s == len(bounds) - 1 else float(boundary_bytes[s] / k),
            "param_bytes": float(sum(u.params for u in units) * model.grad_bytes),
        })
    return out


# ----------------------------------------------------------------------------- the nine models (data)
_FC = 16  # VGG19: units 0..15 are the convs, 16..18 the FC layers (fc6, fc7, fc8)

MODEL_TABLE: dict[str, dict[str, Any]] = {
    "vgg19": {
        "name": "VGG19", "table1_params": "144M", "batch_size": 32, "batch_note": "Table I",
        "throughput": CNN_FLOPS, "grad_bytes": 4, "default_config": "table2",
        "notes": "fc6 alone holds 102.8M of the 143.7M parameters",
        "configs": (
            ("dp1", (1,), None, "single GPU"),
            ("dp4", (4,), None, "data parallel"),
            ("pipe4", (1, 1, 1, 1), None, "model parallel, compute-balanced"),
            ("conv3-fc1", (3, 1), (_FC,), "PipeDream-style: data-parallel convs, one GPU for FC"),
            ("conv2-fc1x2", (2, 1, 1), (_FC, 17), "convs x2, fc6 and fc7+fc8 on one GPU each"),
            ("blocks-2-2-1-1", (2, 2, 1, 1), (4, 12, _FC), "conv blocks 1-2, 3-4, 5, FC"),
            ("conv7-fc1", (7, 1), (_FC,), "PipeDream-style 7-1"),
            ("table2", (4, 4, 4, 2, 1, 1), (4, 8, 12, _FC, 17),
             "Table II job: blocks 1-2, 3, 4, 5 (x4, x4, x4, x2), fc6, fc7+fc8"),
            ("conv15-fc1", (15, 1), (_FC,), "PipeDream's VGG16 plan 15-1"),
            ("blocks-8-4-2-1-1", (8, 4, 2, 1, 1), (4, 8, _FC, 17),
             "Table II reading: blocks 1-2, 3, 4-5 (x8, x4, x2), fc6, fc7+fc8"),
            ("balanced-4-4-4-4", (4, 4, 4, 4), None, "Table II reading: compute-balanced 4 x 4"),
            ("conv31-fc1", (31, 1), (_FC,), "PipeDream-style 31-1"),
            ("blocks-8-8-8-4-2-2", (8, 8, 8, 4, 2, 2), (4, 8, 12, _FC, 17), "table2 scaled x2"),
            ("conv63-fc1", (63, 1), (_FC,), "PipeDream-style 63-1"),
            ("blocks-32-32-32-16-8-8", (32, 32, 32, 16, 8, 8), (4, 8, 12, _FC, 17), "table2 scaled x8"),
        ),
    },
    "resnet152": {
        "name": "ResNet152", "table1_params": "60M", "batch_size": 32,
        "batch_note": "not in Table I: 32, as for the other two CNNs",
        "throughput": CNN_FLOPS, "grad_bytes": 4, "default_config": "pipe2x2", "notes": "",
        "configs": (
            ("dp1", (1,), None, "single GPU"),
            ("dp2", (2,), None, "data parallel"),
            ("pipe2x2", (2, 2), None, "compute-balanced"),
            ("pipe3-2-1", (3, 2, 1), None, "compute-balanced, decreasing replication"),
            ("dp8", (8,), None, "data parallel"),
            ("pipe4x3", (3, 3, 3, 3), None, "compute-balanced"),
            ("dp32", (32,), None, "data parallel"),
            ("pipe4x8", (8, 8, 8, 8), None, "compute-balanced"),
            ("pipe4x16", (16, 16, 16, 16), None, "compute-balanced"),
            ("dp128", (128,), None, "data parallel"),
        ),
    },
    "inception-v3": {
        "name": "Inception-V3", "table1_params": "24M", "batch_size": 32, "batch_note": "Table I",
        "throughput": CNN_FLOPS, "grad_bytes": 4, "default_config": "pipe2-1-1", "notes": "",
        "configs": (
            ("dp1", (1,), None, "single GPU"),
            ("dp4", (4,), None, "data parallel"),
            ("pipe2-1-1", (2, 1, 1), None, "compute-balanced"),
            ("pipe2x3", (3, 3), None, "compute-balanced"),
            ("dp16", (16,), None, "data parallel"),
            ("pipe4x6", (6, 6, 6, 6), None, "compute-balanced"),
            ("pipe8x8", (8,) * 8, None, "compute-balanced"),
        ),
    },
    "bert-large": {
        "name": "BERT-large", "table1_params": "340M", "batch_size": 48,
        "batch_note": "not in Table I: 48, BERT's SQuAD2.0 fine-tuning batch (Devlin et al.)",
        "throughput": TRANSFORMER_FLOPS, "grad_bytes": 4, "default_config": "pipe4x2", "notes": "",
        "configs": (
            ("dp1", (1,), None, "single GPU"),
            ("pipe2x1", (1, 1), None, "model parallel"),
            ("pipe3x1", (1,) * 3, None, "model parallel"),
            ("pipe4x2", (2,) * 4, None, "compute-balanced"),
            ("pipe3x3", (3,) * 3, None, "compute-balanced"),
            ("pipe4x4", (4,) * 4, None, "compute-balanced"),
            ("pipe8x4", (4,) * 8, None, "compute-balanced"),
            ("pipe8x8", (8,) * 8, None, "compute-balanced"),
        ),
    },
    "xlnet-large": {
        "name": "XLNet-large", "table1_params": "550M", "batch_size": 48,
        "batch_note": "not in Table I: 48, XLNet's SQuAD2.0 fine-tuning batch (Yang et al.)",
        "throughput": TRANSFORMER_FLOPS, "grad_bytes": 4, "default_config": "pipe2x2",
        "notes": "architecture-derived count 0.36B: Table I's 550M is not matched by the published "
                 "large configuration; the derived count drives every number",
        "configs": (
            ("dp1", (1,), None, "single GPU"),
            ("pipe2x2", (2,) * 2, None, "compute-balanced"),
            ("pipe3x1", (1,) * 3, None, "model parallel"),
            ("pipe5x2", (2,) * 5, None, "compute-balanced"),
            ("pipe4x8", (8,) * 4, None, "compute-balanced"),
            ("pipe8x16", (16,) * 8, None, "compute-balanced"),
        ),
    },
    "t5-11b": {
        "name": "T5 (11B)", "table1_params": "11B", "batch_size": 16,
        "batch_note": "not in Table I: 16, as for GPT-175B, the other model above 10B",
        "throughput": TRANSFORMER_FLOPS, "grad_bytes": 2, "default_config": "pipe8x1", "notes": "",
        "configs": (
            ("pipe4x1", (1,) * 4, None, "model parallel"),
            ("pipe6x1", (1,) * 6, None, "model parallel"),
            ("pipe8x1", (1,) * 8, None, "model parallel"),
            ("pipe5x2", (2,) * 5, None, "compute-balanced"),
            ("pipe8x2", (2,) * 8, None, "compute-balanced"),
            ("pipe16x4", (4,) * 16, None, "compute-balanced"),
        ),
    },
    "gpt-6.7b": {
        "name": "GPT-3 6.7B", "table1_params": "6.7B", "batch_size": 32, "batch_note": "Table I",
        "throughput": TRANSFORMER_FLOPS, "grad_bytes": 2, "default_config": "pipe4x2", "notes": "",
        "configs": (
            ("pipe2x1", (1,) * 2, None, "model parallel"),
            ("pipe4x2", (2,) * 4, None, "compute-balanced"),
            ("pipe2x5", (5,) * 2, None, "compute-balanced"),
            ("pipe8x4", (4,) * 8, None, "compute-balanced"),
            ("pipe8x16", (16,) * 8, None, "compute-balanced"),
        ),
    },
    "gpt-13b": {
        "name": "GPT-3 13B", "table1_params": "13B", "batch_size": 32, "batch_note": "Table I",
        "throughput": TRANSFORMER_FLOPS, "grad_bytes": 2, "default_config": "pipe8x2", "notes": "",
        "configs": (
            ("pipe4x1", (1,) * 4, None, "model parallel"),
            ("pipe6x2", (2,) * 6, None, "compute-balanced"),
            ("pipe8x2", (2,) * 8, None, "compute-balanced"),
            ("pipe12x4", (4,) * 12, None, "compute-balanced"),
            ("pipe16x4", (4,) * 16, None, "compute-balanced"),
        ),
    },
    "gpt-175b": {
        "name": "GPT-3 175B", "table1_params": "175B", "batch_size": 16, "batch_note": "Table I",
        "throughput": TRANSFORMER_FLOPS, "grad_bytes": 2, "default_config": "pipe16x2", "notes": "",
        "configs": (
            ("pipe4x2", (2,) * 4, None, "compute-balanced (toy: ignores memory)"),
            ("pipe8x1", (1,) * 8, None, "model parallel (toy: ignores memory)"),
            ("pipe16x1", (1,) * 16, None, "model parallel"),
            ("pipe16x2", (2,) * 16, None, "Table II job: 16 stages x 2 replicas"),
            ("pipe8x4", (4,) * 8, None, "Table II reading: 8 stages x 4 replicas"),
            ("pipe32x1", (1,) * 32, None, "Table II reading: 32 stages, no replication"),
            ("pipe16x4", (4,) * 16, None, "compute-balanced"),
            ("pipe16x8", (8,) * 16, None, "compute-balanced"),
            ("pipe32x8", (8,) * 32, None, "compute-balanced"),
        ),
    },
}
"""The nine models of Table I, by key: Table I's parameter count and mini-batch size (or where the
batch comes from), the throughput and gradient bytes of the module docstring, and the named
configurations ``(name, replicas, cuts, note)`` of :class:`Config` (``pipe{S}x{k}``: S stages of k
replicas; ``dp{k}``: one stage of k replicas). The units come from :func:`model_units`."""

_UNITS = {"vgg19": _vgg19, "resnet152": _resnet152, "inception-v3": _inception_v3, "bert-large": _bert_large,
          "xlnet-large": _xlnet_large, "t5-11b": _t5_11b}


def model_units(key: str) -> tuple[Unit, ...]:
    """The units of model ``key`` (a key of :data:`MODEL_TABLE`), built from its layer shapes."""
    return _UNITS[key]() if key in _UNITS else _gpt(key)


def build_model(key: str) -> ModelProfile:
    """The profile of model ``key``, built afresh from :data:`MODEL_TABLE` and its layer shapes
    (about 0.2 ms; nothing is cached, so every call computes from the tables); ``KeyError`` for
    an unknown key."""
    t = MODEL_TABLE[key]
    configs = tuple(Config(name, replicas, cuts, note) for name, replicas, cuts, note in t["configs"])
    return ModelProfile(key, t["name"], t["table1_params"], t["batch_size"], t["batch_note"], model_units(key),
                        t["throughput"], t["grad_bytes"], configs, t["default_config"], notes=t["notes"])


class _Models(Mapping[str, ModelProfile]):
    """:data:`MODEL_TABLE`'s keys, each mapped to :func:`build_model` of it when looked up."""

    def __getitem__(self, key: str) -> ModelProfile:
        return build_model(key)

    def __contains__(self, key: object) -> bool:
        return key in MODEL_TABLE

    def __iter__(self) -> Iterator[str]:
        return iter(MODEL_TABLE)

    def __len__(self) -> int:
        return len(MODEL_TABLE)


MODELS: Mapping[str, ModelProfile] = _Models()
"""The nine models of Table I by key: vgg19, resnet152, inception-v3, bert-large, xlnet-large,
t5-11b, gpt-6.7b, gpt-13b, gpt-175b. A read-only mapping; a lookup builds the profile from
:data:`MODEL_TABLE` (so it is computed when used, not when the module is imported)."""


def get_model(key: str) -> ModelProfile:
    """The profile of ``key`` (a key of :data:`MODELS`); ``KeyError`` otherwise."""
    return MODELS[key]
