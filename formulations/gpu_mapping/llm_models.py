"""Shipped LLM jobs (issue 37 item 4): a GPT-3-175B-like 3D-parallel job and a Mixtral-8x7B-like
MoE job as gpu-mapping instances, every number derived here from the cited facts below.

Facts (public sources; the only numbers typed in this module besides unit conversions):

GPT-3 175B, as trained with Megatron-LM (NVIDIA/Megatron-LM, ``examples/gpt3/
train_gpt3_175b_distributed.sh``, commit 157006d): 96 layers, hidden size 12288, 96 attention
heads, sequence length 2048, micro-batch 1, global batch 1536 sequences, fp16,
``--tensor-model-parallel-size 8 --pipeline-model-parallel-size 16``; the repository's README runs
it "with 175 billion parameters on 1024 GPUs", so data parallelism 1024 / (8 x 16) = 8. Vocabulary:
GPT-2's BPE, 50257 tokens, padded by Megatron to a multiple of 128 x TP = 1024: 51200.
Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
Megatron-LM" (SC'21): FLOPs per iteration ``96 B s l h^2 (1 + s/(6h) + V/(16 l h))`` with
activation recomputation (eq. 3; a forward pass is a quarter of it, the backward pass with the
recomputation the other three quarters), two all-reduces per transformer layer in the forward
pass and two in the backward pass (Sec. 2.3), 140 teraFLOP/s per A100 GPU for GPT-3 175B on 1024
GPUs (Sec. 5.1's end-to-end estimate), and the cluster: DGX A100 servers of 8 GPUs joined by
NVLink/NVSwitch, 8 x 200 Gbit/s HDR InfiniBand per server (Sec. 5).

Mixtral 8x7B (Jiang et al., "Mixtral of Experts", arXiv:2401.04088, Table 1, and the model's
``config.json`` on the Hugging Face hub, ``mistralai/Mixtral-8x7B-v0.1``): 32 layers, hidden size
4096, feed-forward size 14336 (SwiGLU: three matrices), 32 attention heads of 128 with 8 key-value
heads, vocabulary 32000, 8 experts per layer, top-2 routing, bf16. Megatron-LM's
``examples/mixtral/README.md`` (commit 07d71d2): "For training, the recommended model parallel
config is TP1EP8PP4".

Choices (ours, not facts; each says so in the instance's ``meta``):

* Mixtral's training batch is not published: 256 sequences of 4096 tokens per iteration
  (``MIXTRAL_BATCH``), data parallelism 16 (two replicas of the 8 expert groups per stage: 64 GPUs).
* Throughput of every GPU: the 140 teraFLOP/s above, for both jobs.
* Bandwidths: ``B_intra`` = 300 GB/s (an A100's NVLink, 600 GB/s both directions together),
  ``B_inter`` = 8 x 200 Gbit/s = 200 GB/s per server.
* The GPT-3 job on 128 idle servers (every replica then fills one server: t = g = 8); Mixtral on 8
  idle servers and on the free GPUs of a shared cluster (:func:`.generate.free_gpus`, pattern
  ``mixed``, seed 0).
* **Scale** (issue 37 item 4: 16,384-GPU clusters, :data:`LLM_SCALE_INSTANCES`): the data-parallel
  degree is the scale knob, every other layout number as above. GPT-3 at DP 128 (TP 8 x PP 16 x
  DP 128 = 16,384 GPUs on 2,048 idle servers) keeps the published global batch of 1536 sequences,
  so a replica processes 1536 / 128 = 12 of them per iteration. Mixtral at 512 replicas of the 8
  expert groups (EP 8 x PP 4 x DP 4096 = 16,384 GPUs, on 2,048 idle servers and on a shared
  cluster's free GPUs, pattern ``mixed``, seed 0) keeps each replica's 128 sequences (256 for the
  two replicas above), so its global batch grows with DP (weak scaling: 65,536 sequences of 4096
  tokens); 256 sequences over 512 replicas would leave half a sequence to a replica.

Per-iteration quantities of one replica of stage s (:class:`.model.Stage`): ``fwd_time`` /
``bwd_time`` of one GPU, ``out_bytes`` the activations the replica sends on (tokens x hidden x 2
bytes), ``param_bytes`` its gradients (parameters x 2 bytes), ``tp_bytes`` the activations its
slices all-reduce (4 per layer, tokens x hidden x 2 bytes each), ``expert_bytes`` the token data
its groups route (each token's hidden state to its top-2 experts, dispatch and combine, forward
and backward: 4 x 2 copies per layer).

``python -m optkit.formulations.gpu_mapping.llm_models`` writes the instances to
``instances/gpu-mapping/llm/`` (a test regenerates them and compares bytes).
"""

from __future__ import annotations

import numpy as np

from pathlib import Path
from typing import Any, Callable

from .model import PROBLEM

__all__ = ["gpt3_175b", "mixtral_8x7b", "LLM_INSTANCES", "LLM_SCALE_INSTANCES", "SCALE_DP", "write_llm_instances",
           "llm_folder"]

BYTES_16 = 2                  # fp16 / bf16
GPU_FLOPS = 140e12            # FLOP/s per A100 (Narayanan et al., Sec. 5.1)
B_INTRA = 300e9               # bytes/s, an A100's NVLink one way
B_INTER = 8 * 200e9 / 8       # bytes/s per DGX A100 server: 8 HDR InfiniBand links of 200 Gbit/s
GPUS_PER_SERVER = 8           # DGX A100

GPT3 = {"layers": 96, "hidden": 12288, "heads": 96, "seq": 2048, "batch": 1536, "vocab": 51200,
        "tp": 8, "pp": 16, "gpus": 1024}
MIXTRAL = {"layers": 32, "hidden": 4096, "ffn": 14336, "heads": 32, "head_dim": 128, "kv_heads": 8,
           "vocab": 32000, "experts": 8, "top_k": 2, "ep": 8, "pp": 4}
MIXTRAL_BATCH = {"sequences": 256, "seq": 4096, "dp": 16}
"""Our choice (module docstring): Mixtral's training batch is not published."""


def _cluster() -> dict[str, Any]:
    return {"gpus_per_server": GPUS_PER_SERVER, "inter_bandwidth": B_INTER, "intra_bandwidth": B_INTRA}


def gpt3_175b(dp: int | None = None) -> dict[str, Any]:
    """GPT-3 175B, TP 8 x PP 16 x DP ``dp`` on idle DGX A100 servers; ``dp=None``: the published
    1024 GPUs (DP 8, 128 servers). The global batch (1536 sequences) stays the published one, so
    ``dp`` must divide it (module docstring, "Scale")."""
    c = GPT3
    h, s, L, V, t, p = c["hidden"], c["seq"], c["layers"], c["vocab"], c["tp"], c["pp"]
    if dp is None:
        dp = c["gpus"] // (t * p)
    if c["batch"] % dp:
        raise ValueError(f"dp must divide the global batch of {c['batch']} sequences, got {dp}")
    seqs = c["batch"] // dp                     # sequences one replica processes per iteration
    tokens = seqs * s
    layers = L // p
    layer_flops_fwd = 24 * tokens * h * h * (1 + s / (6 * h))   # eq. (3) / 4, per layer, one replica
    logit_flops_fwd = 6 * tokens * h * V / 4                      # eq. (3)'s V/(16lh) term, / 4
    act = tokens * h * BYTES_16
    stages = []
    for i in range(p):
        flops = layers * layer_flops_fwd + (logit_flops_fwd if i == p - 1 else 0.0)
        fwd = flops / t / GPU_FLOPS
        params = 12 * layers * h * h + (V * h if i in (0, p - 1) else 0)
        stages.append({"replicas": dp, "fwd_time": fwd, "bwd_time": 3 * fwd,
                       "in_bytes": float(act) if i > 0 else 0.0, "out_bytes": float(act) if i < p - 1 else 0.0,
                       "param_bytes": float(params * BYTES_16),
                       "tensor_parallel": t, "tp_bytes": float(4 * layers * act)})
    servers = [GPUS_PER_SERVER] * (t * p * dp // GPUS_PER_SERVER)
    return {"problem": PROBLEM, "name": f"gpt3-175b_tp8-pp16-dp{dp}",
            "cluster": _cluster(), "job": {"allreduce": "ring", "stages": stages}, "servers": servers,
            "meta": {"source": "Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh (TP 8, PP 16, 96 layers, "
                               "hidden 12288, seq 2048, global batch 1536) on 1024 GPUs (Megatron-LM README); "
                               "Narayanan et al. SC'21 eq. (3), Sec. 2.3, 5, 5.1",
                     "choices": "140 TFLOP/s per GPU; B_intra 300 GB/s; B_inter 200 GB/s per server; "
                                f"{len(servers)} idle servers"
                                + ("" if dp == c["gpus"] // (t * p) else
                                   f"; DP {dp} (the scale knob; the published global batch, {seqs} sequences "
                                   "per replica)"),
                     "layout": {"tp": t, "pp": p, "dp": dp}}}


def mixtral_8x7b(free: str = "packed", replicas: int | None = None) -> dict[str, Any]:
    """Mixtral 8x7B, EP 8 x PP 4 x (DP 8 x ``replicas``: data-parallel copies of the 8 expert
    groups; None: DP 16, 2 replicas, 64 GPUs), on idle servers (``free="packed"``) or on a shared
    cluster's free GPUs (``free="mixed"``: pattern ``mixed`` of :func:`.generate.free_gpus`, seed
    0). A replica's batch stays that of the 64-GPU job (module docstring, "Scale")."""
    from .generate import free_gpus

    c, b = MIXTRAL, MIXTRAL_BATCH
    h, f, L, V, e, p = c["hidden"], c["ffn"], c["layers"], c["vocab"], c["experts"], c["pp"]
    base = b["dp"] // c["ep"]                   # data-parallel copies of the full set of expert groups
    tokens = b["sequences"] * b["seq"] // base   # one replica's tokens per iteration
    replicas = base if replicas is None else replicas
    dp = replicas * c["ep"]
    layers = L // p
    kv = c["kv_heads"] * c["head_dim"]
    attn_params = 2 * h * h + 2 * h * kv
    expert_params = 3 * h * f
    # forward FLOPs per token per layer: the projections, the attention scores (QK^T and AV over
    # the sequence), and the top-k experts; each expert group computes 1/e of the replica's tokens
    per_token = 2 * attn_params + 4 * b["seq"] * h + c["top_k"] * 2 * expert_params
    act = tokens * h * BYTES_16
    stages = []
    for i in range(p):
        fwd = layers * per_token * tokens / e / GPU_FLOPS
        params = layers * (attn_params + e * expert_params + h * e) + (V * h if i in (0, p - 1) else 0)
        stages.append({"replicas": replicas, "fwd_time": fwd, "bwd_time": 2 * fwd,
                       "in_bytes": float(act) if i > 0 else 0.0, "out_bytes": float(act) if i < p - 1 else 0.0,
                       "param_bytes": float(params * BYTES_16),
                       "experts": e, "expert_bytes": float(layers * 4 * c["top_k"] * tokens * h * BYTES_16)})
    n = p * replicas * e
    servers = free_gpus(n, GPUS_PER_SERVER, free, np.random.default_rng(0))
    return {"problem": PROBLEM, "name": f"mixtral-8x7b_ep8-pp4-dp{dp}_{free}",
            "cluster": _cluster(), "job": {"allreduce": "ring", "stages": stages}, "servers": servers,
            "meta": {"source": "Jiang et al. arXiv:2401.04088 Table 1 and mistralai/Mixtral-8x7B-v0.1 config.json "
                               "(32 layers, hidden 4096, ffn 14336, 8 kv heads of 128, vocab 32000, 8 experts, "
                               "top-2); Megatron-LM examples/mixtral/README.md (TP1 EP8 PP4 for training)",
                     "choices": ("256 sequences of 4096 tokens per iteration, DP 16; " if dp == b["dp"] else
                                 f"DP {dp} (the scale knob), {b['sequences'] // base} sequences of {b['seq']} tokens "
                                 f"per replica as at DP {b['dp']} ({b['sequences'] * replicas // base} per "
                                 "iteration); ")
                                + "140 TFLOP/s per GPU; "
                                f"B_intra 300 GB/s; B_inter 200 GB/s per server; free GPUs: {free} (seed 0)",
                     "layout": {"ep": e, "pp": p, "dp": dp}}}


LLM_INSTANCES: dict[str, Callable[[], dict[str, Any]]] = {
    "gpt3-175b_tp8-pp16-dp8": gpt3_175b,
    "mixtral-8x7b_ep8-pp4-dp16_packed": lambda: mixtral_8x7b("packed"),
    "mixtral-8x7b_ep8-pp4-dp16_mixed": lambda: mixtral_8x7b("mixed"),
}
"""Name -> builder of the shipped LLM instances at their published sizes (1,024 and 64 GPUs)."""
SCALE_DP = {"gpt3": 128, "mixtral_replicas": 512}
"""The data-parallel degrees of the 16,384-GPU instances (module docstring, "Scale")."""
LLM_SCALE_INSTANCES: dict[str, Callable[[], dict[str, Any]]] = {
    "gpt3-175b_tp8-pp16-dp128": lambda: gpt3_175b(SCALE_DP["gpt3"]),
    "mixtral-8x7b_ep8-pp4-dp4096_packed": lambda: mixtral_8x7b("packed", SCALE_DP["mixtral_replicas"]),
    "mixtral-8x7b_ep8-pp4-dp4096_mixed": lambda: mixtral_8x7b("mixed", SCALE_DP["mixtral_replicas"]),
}
"""Name -> builder of the shipped LLM instances on 16,384 GPUs (issue 37 item 4; the DP degree
scaled, module docstring "Scale"). Kept apart from :data:`LLM_INSTANCES`: whatever lists the job
graph's edges (the exact models, heavy-edge-refine) costs O(n^2) on them."""


def llm_folder() -> Path:
    """``instances/gpu-mapping/llm`` of the repository (as :func:`.generate.suite_folder`)."""
    from .generate import suite_folder

    return suite_folder("llm")


def write_llm_instances(folder: str | Path | None = None) -> list[Path]:
    """Write every :data:`LLM_INSTANCES` and :data:`LLM_SCALE_INSTANCES` entry as ``<name>.json``
    (the shipped format)."""
    from .generate import dumps

    out = Path(folder) if folder is not None else llm_folder()
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, build in {**LLM_INSTANCES, **LLM_SCALE_INSTANCES}.items():
        path = out / f"{name}.json"
        path.write_text(dumps(build()))
        paths.append(path)
    return paths


if __name__ == "__main__":  # python -m optkit.formulations.gpu_mapping.llm_models
    for written in write_llm_instances():
        print(f"wrote {written}")
