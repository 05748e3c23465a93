"""The model catalog and the building blocks every ddlwmp workload builder shares.

:mod:`.generate` (the synthetic generator, :func:`.generate.from_trace`, the tiny instances) and
:mod:`.workloads` (the Sec. V trace workloads) both draw models from the Table I catalog of
:mod:`optkit.formulations.gpu_mapping.profiles`, write the same model and cluster dicts and check
their integer arguments the same way; what they share lives here, under public names, so that
neither module reaches into the other's private names (issue 36, item 1).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Mapping

import numpy as np

from optkit.errors import InputError
from optkit.formulations.gpu_mapping.heavy_edge import alpha_min_estimate
from optkit.formulations.gpu_mapping.model import Cluster, PipelineJob
from optkit.formulations.gpu_mapping.profiles import MODELS, stage_dicts

__all__ = ["model_catalog", "UNSTATED_BATCH", "check_batch_factor", "model_dict", "AlphaMin", "check_int",
           "pick_model", "cluster_dict"]


def model_catalog(max_gpus: int = 16) -> dict[str, tuple[str, str, int]]:
    """``{"<model>:<config>": (model key, config name, GPUs)}`` for every Table I configuration of
    at most ``max_gpus`` replicas."""
    out = {}
    for key, prof in MODELS.items():
        for cfg in prof.configs:
            if cfg.n_replicas <= max_gpus:
                out[f"{key}:{cfg.name}"] = (key, cfg.name, cfg.n_replicas)
    return out


UNSTATED_BATCH = tuple(k for k, prof in MODELS.items() if prof.batch_note.startswith("not in Table I"))
"""The models whose mini-batch Table I leaves blank (ResNet152, BERT-large, XLNet-large, T5): their
profiles' batch sizes are optkit's choices (:mod:`optkit.formulations.gpu_mapping.profiles`)."""


def check_batch_factor(factor: Any) -> float:
    """The reading ``unstated_batch_factor`` as a float; :class:`~optkit.errors.InputError` naming
    it unless it is a finite number > 0."""
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not (factor > 0 and math.isfinite(factor)):
        raise InputError("unstated_batch_factor", f"must be a finite number > 0, got {factor!r}")
    return float(factor)


def model_dict(name: str, allreduce: str, unstated_batch_factor: float = 1.0) -> dict[str, Any]:
    """The instance's model dict of ``"<model>:<config>"``. ``unstated_batch_factor`` (reading
    ``unstated_batch_factor``) multiplies the mini-batch of the models of :data:`UNSTATED_BATCH`
    (rounded, at least 1); the models whose mini-batch Table I states keep it."""
    key, config = name.split(":", 1)
    prof = MODELS[key]
    if unstated_batch_factor != 1.0 and key in UNSTATED_BATCH:
        prof = replace(prof, batch_size=max(1, int(round(prof.batch_size * unstated_batch_factor))))
    return {"allreduce": allreduce, "stages": stage_dicts(prof, prof.config(config))}


class AlphaMin:
    """alpha~_min per model name on one cluster, computed once: the Heavy-Edge estimate on the
    fewest servers (:func:`optkit.formulations.gpu_mapping.heavy_edge.alpha_min_estimate`, seed 0),
    the time per iteration a workload turns a drawn duration into iterations with."""

    def __init__(self, models: Mapping[str, dict[str, Any]], cluster: Cluster) -> None:
        self.models = models
        self.cluster = cluster
        self.cache: dict[str, float] = {}

    def __call__(self, name: str) -> float:
        if name not in self.cache:
            job = PipelineJob.from_dict(self.models[name], f"models.{name}")  # tensor-parallel / MoE too (tensor.py)
            self.cache[name] = alpha_min_estimate(job, self.cluster, seed=0)
        return self.cache[name]


def check_int(v: Any, name: str, low: int) -> int:
    """``v`` as an int; :class:`~optkit.errors.InputError` naming ``name`` unless it is an integer
    (not a bool) >= ``low``."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
        raise InputError(name, f"must be an integer >= {low}, got {v!r}")
    return int(v)


def pick_model(gpus: int, catalog: Mapping[str, tuple[str, str, int]], rng: np.random.Generator,
               cache: dict[int, list[str]] | None = None) -> str:
    """A configuration of ``gpus`` replicas, uniformly (one ``rng`` draw); ``cache`` (per
    catalog) keeps the candidate list of each GPU count."""
    names = cache.get(gpus) if cache is not None else None
    if names is None:
        names = sorted(n for n, (_, _, k) in catalog.items() if k == gpus)
        if not names:  # no configuration of exactly that size: the largest smaller one
            smaller = sorted({k for _, _, k in catalog.values() if k <= gpus})
            if not smaller:
                raise InputError("gpus", f"no model configuration has at most {gpus} GPUs")
            names = sorted(n for n, (_, _, k) in catalog.items() if k == smaller[-1])
        if cache is not None:
            cache[gpus] = names
    return names[int(rng.integers(len(names)))]


def cluster_dict(servers: int, gpus_per_server: int, inter: float, intra: float) -> dict[str, Any]:
    """The instance's ``cluster`` dict: ``servers`` x ``gpus_per_server`` GPUs, bandwidths
    ``inter`` (between servers) and ``intra`` (inside one) in bytes/s."""
    return {"servers": int(servers), "gpus_per_server": int(gpus_per_server), "inter_bandwidth": float(inter),
            "intra_bandwidth": float(intra)}
