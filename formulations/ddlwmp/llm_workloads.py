"""Tensor-parallel (3D-parallel) and MoE jobs for ddlwmp's workloads (issue 37 item 3).

**Synthetic, derived from the Table I profiles** (:mod:`optkit.formulations.gpu_mapping.profiles`,
themselves estimates): no trace records which jobs are tensor-parallel or MoE, so the synthetic
generator (:func:`.generate.generate`, keywords ``tp_share``, ``moe_share``, ``routing_skew``:
declared readings, :mod:`.readings`) and the trace-driven builder (:func:`.workloads.trace_workload`,
the same keywords) turn a share of their distributed job groups into such jobs with
:func:`convert_groups` and :func:`llm_variant`. The transformers with per-layer units (BERT-large, XLNet-large, GPT
6.7B/13B/175B; T5-11B's encoder-decoder layers are left out) are the bases.

* **3D-parallel job** (data x pipeline x tensor), :func:`tp_model_dict`: a group of D GPUs gets
  t drawn uniformly among the t >= 2 that divide both D and g (synthetic: tensor parallelism stays
  inside a server, Narayanan et al. SC'21, and t | g is ddlwmp's rule, :mod:`.tensor`; from pure
  tensor parallelism, t = D, to 3D parallelism with several replicas) and a configuration of the
  bases with K = D/t replicas (:func:`.catalog.pick_model`'s rule: drawn uniformly among those of exactly K
  replicas, else of the largest smaller count), every stage with ``tensor_parallel`` t. Each slice
  computes 1/t of its replica's layers (Shoeybi et al. 2019, Megatron-LM: the GEMMs split over t
  GPUs), so ``fwd_time``/``bwd_time`` are the profile's over t; the replica's activation and
  parameter bytes are the profile's; ``tp_bytes`` = 4 all-reduces per transformer layer ("two
  all-reduce operations in the forward path and two in the backward path", Megatron-LM Sec. 3) of
  the layer's output activations for the replica's share of the mini-batch, (B/k)·n·d·2 bytes
  (fp16), summed over the stage's layers.
* **MoE job** (expert parallelism), :func:`moe_model_dict`, in gpu-mapping's MoE stage (a
  replica is ``experts`` e expert groups, one GPU each; the replicas are data-parallel copies;
  :class:`~optkit.formulations.gpu_mapping.model.Stage`): a group of D GPUs becomes one stage of
  e = gcd(D, 8) expert groups per replica and k = D/e replicas, on a base drawn uniformly (no MoE
  job when D is odd). Every other FFN layer is an MoE layer of 8 experts (Mixtral 8x7B's count,
  Jiang et al. 2024, ``gpu_mapping.llm_models.MIXTRAL``), 8/e on each group; top-1 routing
  (Switch Transformer, Fedus et al. 2021), so a token's FLOPs are the dense model's and one GPU
  computes the profile's time for B/D of the batch. ``param_bytes`` is a replica's parameters
  (the profile's plus the 7 further experts of every MoE layer, 8d²+5d parameters each), as
  gpu-mapping's shipped Mixtral instance gives them; each MoE layer moves every token of the
  replica twice in the forward pass (dispatch and combine) and twice in the backward pass, so
  ``expert_bytes`` = 4 x (MoE layers) x (B/k)·n·d·2 bytes (capacity factor 1). ``routing``:
  uniform, or ``zipf`` with exponent ``routing_skew`` (reading; gpu-mapping's ``routing_matrix``).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Mapping

import numpy as np

from optkit.errors import InputError

from optkit.formulations.gpu_mapping.llm_models import MIXTRAL
from optkit.formulations.gpu_mapping.profiles import MODELS, TRANSFORMERS, Config, stage_bounds, stage_dicts

from .catalog import UNSTATED_BATCH, model_dict, pick_model

__all__ = ["BASES", "MOE_EXPERTS", "moe_groups", "tp_model_dict", "moe_model_dict", "llm_variant", "check_llm_shares", "convert_groups"]

BASES = ("bert-large", "xlnet-large", "gpt-6.7b", "gpt-13b", "gpt-175b")
"""The transformers whose units are their layers (``layer<i>``), the bases of the LLM jobs."""
_MOE_BASES = ("bert-large", "xlnet-large", "gpt-6.7b", "gpt-13b")
"""The bases of MoE jobs (GPT-175B's dense part alone is 350 GB of gradients: no one-stage job)."""
MOE_EXPERTS = int(MIXTRAL["experts"])
"""Experts per MoE layer (Mixtral 8x7B's 8); a job's expert groups per replica divide it."""
_A2A_PER_LAYER = 4
"""All-to-alls per MoE layer and iteration: dispatch and combine, forward and backward."""
_TP_PER_LAYER = 4
"""Tensor-parallel all-reduces per transformer layer and iteration (Megatron-LM Sec. 3)."""


def _profile(key: str, batch_factor: float) -> Any:
    """The profile of ``key`` with :func:`.catalog.model_dict`'s rule for reading
    ``unstated_batch_factor`` (the batch of a model Table I leaves blank, times the factor)."""
    prof = MODELS[key]
    if batch_factor != 1.0 and key in UNSTATED_BATCH:
        prof = replace(prof, batch_size=max(1, int(round(prof.batch_size * batch_factor))))
    return prof


def _layers(key: str, a: int, b: int) -> int:
    return sum(1 for u in MODELS[key].units[a:b] if u.name.startswith("layer"))


def tp_model_dict(name: str, t: int, allreduce: str, batch_factor: float = 1.0) -> dict[str, Any]:
    """The model dict of catalog configuration ``name`` (``"gpt-13b:pipe4x1"``) with tensor
    parallelism t (module docstring)."""
    key, config = name.split(":", 1)
    prof = _profile(key, batch_factor)
    cfg = prof.config(config)
    d, n = TRANSFORMERS[key]["d"], TRANSFORMERS[key]["tokens"]
    stages = model_dict(name, allreduce, batch_factor)["stages"]
    for st, (a, b), k in zip(stages, stage_bounds(prof, cfg), cfg.replicas):
        st["fwd_time"] /= t
        st["bwd_time"] /= t
        st["tensor_parallel"] = t
        st["tp_bytes"] = float(_TP_PER_LAYER * _layers(key, a, b) * (prof.batch_size / k) * n * d * prof.act_bytes)
    return {"allreduce": allreduce, "stages": stages}


def moe_groups(gpus: int) -> int:
    """e = gcd(gpus, 8): the expert groups per replica of an MoE job of ``gpus`` GPUs (module
    docstring); 1 (no MoE job) when ``gpus`` is odd."""
    return math.gcd(gpus, MOE_EXPERTS)


def moe_model_dict(key: str, gpus: int, allreduce: str, routing_skew: float,
                   batch_factor: float = 1.0) -> dict[str, Any]:
    """An MoE job of ``gpus`` GPUs on base ``key``: one stage of k = gpus/e replicas of e expert
    groups, e = :func:`moe_groups` (module docstring); ``routing_skew`` 0 is uniform routing,
    > 0 Zipf with that exponent."""
    e = moe_groups(gpus)
    k = gpus // e
    prof = _profile(key, batch_factor)
    d, n = TRANSFORMERS[key]["d"], TRANSFORMERS[key]["tokens"]
    (st,) = stage_dicts(prof, Config(f"moe{gpus}", (gpus,)))  # one GPU's compute: B/gpus of the batch
    moe_layers = _layers(key, 0, len(prof.units)) // 2
    expert_params = moe_layers * (8 * d * d + 5 * d)          # one FFN per MoE layer
    st["replicas"] = k
    st["param_bytes"] = float((prof.total_params + (MOE_EXPERTS - 1) * expert_params) * prof.grad_bytes)
    st["experts"] = e
    st["expert_bytes"] = float(_A2A_PER_LAYER * moe_layers * (prof.batch_size / k) * n * d * prof.act_bytes)
    if routing_skew > 0:
        st["routing"] = "zipf"
        st["routing_skew"] = float(routing_skew)
    return {"allreduce": allreduce, "stages": [st]}


def llm_variant(kind: str, gpus: int, gpus_per_server: int, catalog: Mapping[str, tuple[str, str, int]],
                rng: np.random.Generator, allreduce: str, routing_skew: float, cache: dict[int, list[str]],
                batch_factor: float = 1.0) -> tuple[str, dict[str, Any], int] | None:
    """(model name, model dict, GPUs) of a ``kind`` (``"tp"`` or ``"moe"``) job of about ``gpus``
    GPUs, or None when no such job exists (no t >= 2 divides both gpus and g; gpus odd: no 2 expert groups).
    ``catalog`` restricted to :data:`BASES` with ``cache`` is what :func:`.catalog.pick_model` draws
    from; ``rng`` draws the base."""
    if kind == "tp":
        common = math.gcd(gpus, gpus_per_server)
        divisors = [t for t in range(2, common + 1) if common % t == 0]
        if not divisors:
            return None
        t = divisors[int(rng.integers(len(divisors)))]
        base = pick_model(gpus // t, catalog, rng, cache)
        k = catalog[base][2]
        return f"{base}+tp{t}", tp_model_dict(base, t, allreduce, batch_factor), k * t
    if moe_groups(gpus) < 2:
        return None
    key = _MOE_BASES[int(rng.integers(len(_MOE_BASES)))]
    name = f"{key}:moe{gpus}" + (f"-zipf{routing_skew:g}" if routing_skew > 0 else "")
    return name, moe_model_dict(key, gpus, allreduce, routing_skew, batch_factor), gpus


def check_llm_shares(tp_share: Any, moe_share: Any, routing_skew: Any) -> tuple[float, float, float]:
    """The readings ``tp_share``, ``moe_share`` (each in [0, 1], their sum at most 1) and
    ``routing_skew`` (finite, >= 0); :class:`InputError` naming the one that is not."""
    shares = []
    for name, v in (("tp_share", tp_share), ("moe_share", moe_share)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
            raise InputError(name, f"must be a number in [0, 1], got {v!r}")
        shares.append(float(v))
    if shares[0] + shares[1] > 1.0:
        raise InputError("moe_share", f"tp_share + moe_share must be at most 1, got {shares[0]} + {shares[1]}")
    if isinstance(routing_skew, bool) or not isinstance(routing_skew, (int, float)) or not 0 <= routing_skew < math.inf:
        raise InputError("routing_skew", f"must be a finite number >= 0, got {routing_skew!r}")
    return shares[0], shares[1], float(routing_skew)


def convert_groups(names: list[str], catalog: dict[str, tuple[str, str, int]], *, tp_share: float, moe_share: float,
                   routing_skew: float, gpus_per_server: int, seed: int, allreduce: str,
                   batch_factor: float = 1.0) -> dict[str, dict[str, Any]]:
    """Turn a share of the distributed entries of ``names`` (one catalog configuration per job
    group, in the workload's order) into 3D-parallel jobs (probability ``tp_share``) or MoE jobs
    (``moe_share``), in place, drawing from ``numpy.random.default_rng([seed, 37])`` (a generator
    of their own, so the workload's other draws do not move); returns the new models' dicts and
    adds each to ``catalog`` as ``(name, "tp" | "moe", GPUs)``. With both shares 0 nothing is
    drawn or changed."""
    out: dict[str, dict[str, Any]] = {}
    if not (tp_share or moe_share):
        return out
    rng = np.random.default_rng([seed, 37])
    bases = {k: v for k, v in catalog.items() if v[0] in BASES}
    cache: dict[int, list[str]] = {}
    for i, m in enumerate(names):
        u = float(rng.random())
        kind = "tp" if u < tp_share else "moe" if u < tp_share + moe_share else None
        if kind is None or catalog[m][2] < 2:
            continue
        hit = llm_variant(kind, catalog[m][2], gpus_per_server, bases, rng, allreduce, routing_skew, cache,
                          batch_factor)
        if hit is not None:
            names[i] = hit[0]
            out[hit[0]] = hit[1]
            catalog[hit[0]] = (hit[0], kind, hit[2])
    return out
