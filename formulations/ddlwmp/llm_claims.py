"""A-SRPT against the paper's baselines on workloads with 3D-parallel and MoE jobs (the A-SRPT
paper's Sec. VI, issue 37 item 5): the ddlwmp half of the ``llm`` results page.

Sec. VI: "A-SRPT delays the start of tensor parallelism jobs until sufficient server capacity is
available", and MoE jobs are "placed by Heavy-Edge and scheduled by A-SRPT"; the paper runs no
experiment with such jobs and states no number. Every quantity here is therefore registered with
``incomparable="no paper value: ..."`` and ``paper_value=None`` (:mod:`optkit.claims`): the page
reports what we measure, with no verdict.

What one measurement does (:func:`measure_llm_shares`)
------------------------------------------------------
The synthetic Sec. V workload (:func:`.generate.generate`, every reading of ddlwmp at its
default, the single-GPU share 0.5 so that half the job groups are distributed and can become LLM
jobs) with the readings ``tp_share``, ``moe_share`` and ``routing_skew`` passed to the generator
(:func:`llm_workload`): a share of the distributed groups becomes 3D-parallel or MoE jobs
(:mod:`.llm_workloads`); A-SRPT (``tau`` and its other readings at their defaults) and the five
baselines run on it through :func:`.sec5.compare` (memoised under ``optkit reproduce``), every
total completion time (TCT) from ``evaluate``. Quantities: A-SRPT's reduction of TCT against the
best and the worst baseline, (TCT_b - TCT_A-SRPT) / TCT_b in percent (the paper's Sec. V measure),
and the shares of the workload's jobs that are 3D-parallel and MoE (what the readings produced).
Beside them (``_diagnostics``): A-SRPT's delayed starts (the Sec. VI rule: a tensor-parallel job
waits until servers hold each replica's slices), its GPU-time inflation and split share.

Scales (the paper states no setting): ``paper`` is 600 jobs on 6 servers of 8 GPUs
(``benchmarks/ddlwmp_llm_shares.py``'s setting), ``ci`` 150 jobs on the same cluster.
"""

from __future__ import annotations

from typing import Any, Mapping

from optkit.claims import NO_PAPER_VALUE, Claim, Experiment

from .generate import generate
from .model import PROBLEM
from .readings import READINGS
from .sec5 import PAPER_BASELINES, compare, instance_of, reductions, series_readout

__all__ = ["EXPERIMENTS", "SCALES", "SINGLE_GPU_SHARE", "llm_workload", "measure_llm_shares", "series_llm_shares"]

PAPER = "llm"
SCALES = {"ci": {"jobs": 150, "servers": 6}, "paper": {"jobs": 600, "servers": 6}}
"""Jobs and 8-GPU servers of the workload at each scale (module docstring)."""
SINGLE_GPU_SHARE = 0.5
"""The workload's single-GPU share: half the job groups are distributed (convertible to LLM jobs)."""
_LLM_READINGS = ("tp_share", "moe_share", "routing_skew")
_WHY = (f"{NO_PAPER_VALUE}: Sec. VI extends A-SRPT to tensor-parallel and MoE jobs and runs no experiment "
        "with them")


def _readings(readings: Mapping[str, Any]) -> dict[str, Any]:
    """Every reading of ddlwmp at its default, overridden by ``readings``."""
    return {**{x.name: x.default for x in READINGS}, **dict(readings)}


def llm_workload(readings: Mapping[str, Any], *, scale: str, seed: int) -> dict[str, Any]:
    """The workload of one measurement (module docstring): the synthetic generator at the
    scale's jobs and servers, the ``load`` and ``unstated_batch_factor`` readings, single-GPU
    share :data:`SINGLE_GPU_SHARE`, and the readings ``tp_share``, ``moe_share`` and
    ``routing_skew``."""
    r = _readings(readings)
    sc = SCALES[scale]
    return generate(jobs=sc["jobs"], servers=sc["servers"], load=r["load"], seed=seed,
                    single_gpu_share=SINGLE_GPU_SHARE, unstated_batch_factor=r["unstated_batch_factor"],
                    **{k: r[k] for k in _LLM_READINGS})


def measure_llm_shares(*, readings: dict[str, Any], seed: int, scale: str) -> dict[str, Any]:
    """A-SRPT and the five baselines on :func:`llm_workload` (module docstring)."""
    r = _readings(readings)
    data = llm_workload(r, scale=scale, seed=seed)
    runs = compare(instance_of(data), r, seed)
    red = reductions(runs)
    meta = data["meta"]
    a = runs["a-srpt"]
    return {"llm-a-srpt-vs-best-baseline": min(red.values()), "llm-a-srpt-vs-worst-baseline": max(red.values()),
            "llm-tp-job-share": float(meta.get("tp_job_share", 0.0)),
            "llm-moe-job-share": float(meta.get("moe_job_share", 0.0)),
            "_diagnostics": {"a-srpt delayed starts": float(a["delayed_starts"] or 0),
                             "a-srpt inflation": a["inflation"], "a-srpt split share": a["split_share"],
                             "baselines' max inflation": max(runs[b]["inflation"] for b in PAPER_BASELINES)},
            "_details": {"readings": {k: r[k] for k in (*_LLM_READINGS, "load", "tau")}, "jobs": len(data["jobs"]),
                         "servers": SCALES[scale]["servers"], "reduction_pct": red,
                         "total_completion": {p: run["total_completion"] for p, run in runs.items()},
                         "delayed_starts": a["delayed_starts"]}}


def series_llm_shares(algorithm: str, *, readings: dict[str, Any], seed: int, scale: str) -> dict[str, Any]:
    """The workload of :func:`measure_llm_shares` for one more algorithm (a plug-in;
    :func:`.sec5.series_readout`): its TCT and A-SRPT's reduction against it."""
    r = _readings(readings)
    return series_readout(algorithm, [("workload", llm_workload(r, scale=scale, seed=seed))], r, seed)


_RED = "(TCT_b - TCT_A-SRPT) / TCT_b in percent, TCTs from evaluate"
EXPERIMENTS = {
    "llm-ddlwmp-shares": Experiment(
        "llm-ddlwmp-shares", PROBLEM, PAPER,
        "Sec. VI: A-SRPT vs the five baselines on workloads with shares of 3D-parallel and MoE jobs",
        f"{__name__}:measure_llm_shares",
        claims=(
            Claim("llm-a-srpt-vs-best-baseline", "Sec. VI: A-SRPT against the best baseline, with LLM-era jobs",
                  None, "%", f"min over the five baselines b of {_RED}", incomparable=_WHY),
            Claim("llm-a-srpt-vs-worst-baseline", "Sec. VI: A-SRPT against the worst baseline, with LLM-era jobs",
                  None, "%", f"max over the five baselines b of {_RED}", incomparable=_WHY),
            Claim("llm-tp-job-share", "Sec. VI: share of the workload's jobs that are 3D-parallel", None, "ratio",
                  "3D-parallel jobs / jobs of the generated workload", incomparable=_WHY),
            Claim("llm-moe-job-share", "Sec. VI: share of the workload's jobs that are MoE", None, "ratio",
                  "MoE jobs / jobs of the generated workload", incomparable=_WHY),
        ),
        readings=_LLM_READINGS,
        sweep={"tp_share": (0.0, 0.25, 0.5), "moe_share": (0.0, 0.25, 0.5), "routing_skew": (0.0, 1.0)},
        time_limit={"ci": 60.0, "paper": 900.0}, series=f"{__name__}:series_llm_shares",
        notes="The A-SRPT paper's Sec. VI says how A-SRPT schedules tensor-parallel and MoE jobs (it delays a "
              "tensor-parallel job until servers can hold each replica's slices; Heavy-Edge places both) and states "
              "no number, so nothing here has a verdict: each value is reported as measured. The synthetic Sec. V "
              "workload with single-GPU share 0.5, a share of its distributed job groups turned into 3D-parallel "
              "(`tp_share`) or MoE (`moe_share`, Zipf routing of exponent `routing_skew`) jobs; every other reading "
              "at its default (the default `tp_share` = `moe_share` = 0 is the paper's Sec. V mix, the reference). "
              "The paper states no setting: `paper` scale is 600 jobs on 6 x 8 GPUs, `ci` 150 jobs "
              "(formulations/ddlwmp/llm_claims.py)."),
}
