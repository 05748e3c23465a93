"""Trace-driven Sec. V workloads: real arrivals, durations and GPU demands, at a chosen load.

:func:`trace_workload` turns job records of a real trace (Microsoft ITP, the Philly-derived table,
or the Alibaba PAI 2020 tables when a copy is given; :mod:`optkit.traces`) into a ddlwmp instance
dict; :func:`sec5_workload` picks it or the synthetic generator by the ``workload`` reading.

Real (from the trace): the order and relative spacing of submissions, each job's duration and
its GPU demand, and (where the trace has them) user, virtual cluster and recurring-job group.

The rule that maps a job to the paper's model mix (Sec. V-A-1-b: "if a job ... requires only a
single GPU, we pair the group with a model with a single-GPU training configuration. Otherwise
... we randomly select a model and one of its training configurations for the group"):

* **Configuration**: a configuration of the Table I profiles
  (:func:`optkit.formulations.ddlwmp.generate.model_catalog`) with exactly the job's GPU demand,
  uniformly at random (seeded). A demand no configuration has (3, 5, 7, ... GPUs) takes the
  largest smaller configuration size (the job then runs on fewer GPUs than it asked for; counted
  in ``meta.demand_reduced``); a demand above the cluster's GPUs is dropped (``meta.dropped``).
* **Per what**: per recurring-job group when the trace has groups (PAI), so a group is one model
  as in the paper; otherwise per job (ITP and Philly have no group). The draw never looks at the
  duration, so the model is a legitimate submission-time feature.
* **Iterations** n_i = max(1, round(duration / α̃_i^min)) (Sec. V-A-1-b: "dividing the job duration
  in the trace by its approximate minimum per-iteration training time").

Window and load: ``jobs`` consecutive jobs (by submission) from an offset drawn with the seed
("we randomly sample consecutive jobs from the original trace", Sec. V-B-1). The releases are the
submission times minus the first one, multiplied by one factor so that the **offered GPU load**
Σ_i g_i·n_i·α̃_i^min / (G·r_last) equals ``load``: the trace's own burstiness is kept, only the
time axis is stretched or compressed. ``load`` below 1 does not mean the cluster keeps up (the
placements of a policy may inflate the work); each run reports utilisation, GPU-time inflation
and the backlog at the end (:mod:`.sec5`).

Predictions: a random forest on submission-time features only
(:func:`optkit.features.fill_submission_predictions`: user, virtual cluster, requested GPUs,
model, job-name tokens), trained on the first 80% of the window by release and tested on the
rest: no feature is derived from a duration (the synthetic groups of
:func:`optkit.formulations.ddlwmp.generate.from_trace`, built from ln-duration bins, leak the target).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from optkit.formulations.gpu_mapping.model import Cluster
from optkit.errors import InputError
from optkit.features import fill_submission_predictions

from .catalog import AlphaMin, check_batch_factor, check_int, cluster_dict, model_catalog, model_dict, pick_model
from .generate import B_INTER, B_INTRA, generate
from .llm_workloads import check_llm_shares, convert_groups
from .model import PROBLEM, DdlwmpInstance
from .readings import MOE_SHARE_DEFAULT, ROUTING_SKEW_DEFAULT, TP_SHARE_DEFAULT, WORKLOADS

__all__ = ["trace_workload", "trace_records", "sec5_workload"]


def trace_records(source: str, *, root: str | Path | None = None, pai_folder: str | Path | None = None) -> list[dict[str, Any]]:
    """The job records of ``source``: ``itp`` (the ten microsoft-itp clusters merged by submission
    time, 69,351 jobs over the same two months, like the paper's one two-month trace; ``cluster``
    keeps the file), ``philly`` (philly-derived, every virtual cluster) or ``pai`` (the PAI 2020
    tables in ``pai_folder``).
    ``root``: the traces folder (default :func:`optkit.traces.trace_root`)."""
    from optkit.traces import itp_files, load_itp, load_pai, load_philly, trace_root

    if source == "pai":
        if pai_folder is None:
            raise InputError("pai_folder", "the PAI 2020 job tables are not shipped: give the folder of a copy")
        return load_pai(pai_folder)
    base = Path(root) if root is not None else trace_root()
    if base is None:
        raise InputError("traces", "no trace folder found (../shared/data/traces); pass root=")
    if source == "itp":
        merged = [r for f in itp_files(base) for r in load_itp(f)]
        if not merged:
            raise InputError(str(base / "microsoft-itp"), "holds no clusterNN.csv")
        return sorted(merged, key=lambda r: r["submission_time"])
    if source == "philly":
        return load_philly(base / "philly-derived" / "philly.csv")
    raise InputError("workload", f"must be one of itp, philly, pai for a trace, got {source!r}")


def trace_workload(records: Sequence[Mapping[str, Any]], *, jobs: int, servers: int, load: float, seed: int = 0,
                   gpus_per_server: int = 8, inter_bandwidth: float = B_INTER, intra_bandwidth: float = B_INTRA,
                   allreduce: str = "ring", predict: bool = True, train_fraction: float = 0.8,
                   source: str = "records", unstated_batch_factor: float = 1.0, tp_share: float = TP_SHARE_DEFAULT,
                   moe_share: float = MOE_SHARE_DEFAULT, routing_skew: float = ROUTING_SKEW_DEFAULT,
                   check: bool = True) -> dict[str, Any]:
    """A ddlwmp instance dict from trace ``records`` (module docstring for every rule; ``check``:
    :data:`.generate.CHECK_NOTE`).

    ``records``: dicts with ``submission_time`` (s), ``duration`` (s), ``num_gpu`` and optionally
    ``job_id``, ``user``, ``cluster`` (virtual cluster), ``group``, ``job_name``.
    ``unstated_batch_factor``: as :func:`optkit.formulations.ddlwmp.generate.generate`'s.
    ``tp_share``, ``moe_share``, ``routing_skew`` (readings, issue 37): as the generator's, per
    model draw (group or job): no trace records a job's tensor-parallel degree or experts, so the
    jobs made 3D-parallel or MoE are synthetic, of the job's GPU demand, and their iterations the
    trace duration over their own alpha~min (:func:`.llm_workloads.convert_groups`)."""
    n_want = check_int(jobs, "jobs", 1)
    check_int(servers, "servers", 1)
    g = check_int(gpus_per_server, "gpus_per_server", 1)
    check_int(seed, "seed", 0)
    if isinstance(load, bool) or not isinstance(load, (int, float)) or not load > 0:
        raise InputError("load", f"must be a positive number, got {load!r}")
    for i, r in enumerate(records):
        for key in ("submission_time", "duration", "num_gpu"):
            if key not in r:
                raise InputError(f"records[{i}].{key}", "is required")
    total = servers * g
    order = sorted(range(len(records)), key=lambda i: (float(records[i]["submission_time"]), i))
    usable = [records[i] for i in order if 1 <= int(records[i]["num_gpu"]) <= total]
    dropped = len(records) - len(usable)
    if len(usable) < 2:
        raise InputError("records", "fewer than two jobs fit the cluster")
    n = min(n_want, len(usable))
    rng = np.random.default_rng(seed)
    offset = int(rng.integers(0, len(usable) - n + 1))
    window = usable[offset:offset + n]
    catalog = model_catalog(total)
    sizes = sorted({k for _, _, k in catalog.values()})
    key_of = [("group", r["group"]) if r.get("group") is not None else ("job", i) for i, r in enumerate(window)]
    model_of: dict[Any, str] = {}
    for key, r in zip(key_of, window):  # in window order, so the draws are the same for the same window
        if key not in model_of:
            model_of[key] = pick_model(int(r["num_gpu"]), catalog, rng)
    tp_share, moe_share, routing_skew = check_llm_shares(tp_share, moe_share, routing_skew)
    batch_factor = check_batch_factor(unstated_batch_factor)
    drawn = list(model_of.values())
    llm_dicts = convert_groups(drawn, catalog, tp_share=tp_share, moe_share=moe_share, routing_skew=routing_skew,
                               gpus_per_server=g, seed=seed, allreduce=allreduce, batch_factor=batch_factor)
    model_of = dict(zip(model_of, drawn))
    used = sorted(set(model_of.values()))
    models = {m: llm_dicts[m] if m in llm_dicts else model_dict(m, allreduce, batch_factor) for m in used}
    alpha = AlphaMin(models, Cluster(g, float(inter_bandwidth), float(intra_bandwidth)))
    t0 = float(window[0]["submission_time"])
    span = float(window[-1]["submission_time"]) - t0
    job_list: list[dict[str, Any]] = []
    reduced = 0
    width = len(str(n - 1))
    for i, (key, r) in enumerate(zip(key_of, window)):
        m = model_of[key]
        k = catalog[m][2]
        reduced += k != int(r["num_gpu"])
        job = {"id": f"j{i:0{width}d}", "release": float(r["submission_time"]) - t0, "model": m,
               "iterations": max(1, int(round(float(r["duration"]) / alpha(m)))),
               "trace_id": str(r.get("job_id", i)), "trace_duration": float(r["duration"]),
               "trace_gpus": int(r["num_gpu"]), "gpus": k}
        for src, dst in (("user", "user"), ("cluster", "vc"), ("group", "group"), ("job_name", "job_name")):
            if r.get(src) is not None:
                job[dst] = str(r[src])
        job_list.append(job)
    work = sum(catalog[j["model"]][2] * j["iterations"] * alpha(j["model"]) for j in job_list)
    natural = work / (total * span) if span > 0 else float("inf")
    factor = natural / float(load) if span > 0 else 0.0
    for j in job_list:
        j["release"] = round(j["release"] * factor, 3)
    meta: dict[str, Any] = {
        "generator": "formulations.ddlwmp.workloads.trace_workload", "trace": source, "seed": seed,
        "window": {"offset": offset, "jobs": n, "of": len(usable)}, "dropped_over_cluster": dropped,
        "demand_reduced": reduced, "load": float(load), "trace_load": natural, "time_factor": factor,
        "real": "order and spacing of submissions, durations, GPU demands (and user, virtual cluster, group if present)",
        "synthetic": {"model": "Table I configuration of the job's GPU demand, drawn per " +
                      ("group" if any(r.get("group") is not None for r in window) else "job"),
                      "iterations": "trace duration / alpha~_min of the model",
                      "release": f"submission times x {factor:.4g} (offered load {load:g})"},
        "configuration_sizes": sizes,
        **({"unstated_batch_factor": float(unstated_batch_factor)} if unstated_batch_factor != 1.0 else {}),
        **({"tp_share": tp_share, "moe_share": moe_share, "routing_skew": routing_skew,
            "tp_job_share": sum(catalog[j["model"]][1] == "tp" for j in job_list) / len(job_list),
            "moe_job_share": sum(catalog[j["model"]][1] == "moe" for j in job_list) / len(job_list)}
           if llm_dicts else {}),
    }
    if predict:
        meta["prediction"] = fill_submission_predictions(job_list, seed=seed, train_fraction=train_fraction)
    d = {"problem": PROBLEM, "cluster": cluster_dict(servers, g, inter_bandwidth, intra_bandwidth), "models": models,
         "jobs": job_list}
    out = DdlwmpInstance.from_dict(d).to_dict() if check else d
    out["name"] = f"trace_{Path(source).stem}_n{n}_m{servers}_l{load:g}_s{seed}"
    out["meta"] = meta
    return out


def sec5_workload(workload: str, *, jobs: int, servers: int, load: float, seed: int,
                  single_gpu_share: float = 0.8, inter_bandwidth: float = B_INTER,
                  records: Sequence[Mapping[str, Any]] | None = None, unstated_batch_factor: float = 1.0,
                  check: bool = True, **kw: Any) -> dict[str, Any]:
    """The Sec. V workload of the ``workload`` reading: ``synthetic`` (the ``paper-sim``
    generator, :func:`optkit.formulations.ddlwmp.generate.generate`, single-GPU share as given) or a
    trace (``itp``, ``philly``; ``records`` when already loaded), at offered load ``load``. ``kw``
    goes to the builder (the synthetic generator's ``single_gpu_draw``, say); ``check``: as the
    builder's (:data:`.generate.CHECK_NOTE`; the Sec. V claims pass ``False`` and build the
    instance once, by :func:`.sec5.instance_of`)."""
    if workload not in WORKLOADS:
        raise InputError("workload", f"must be one of {', '.join(WORKLOADS)}, got {workload!r}")
    if workload == "synthetic":
        return generate(jobs=jobs, servers=servers, load=load, seed=seed, single_gpu_share=single_gpu_share,
                        inter_bandwidth=inter_bandwidth, unstated_batch_factor=unstated_batch_factor, check=check, **kw)
    recs = records if records is not None else trace_records(workload)
    return trace_workload(recs, jobs=jobs, servers=servers, load=load, seed=seed, inter_bandwidth=inter_bandwidth,
                          source=workload, unstated_batch_factor=unstated_batch_factor, check=check, **kw)
