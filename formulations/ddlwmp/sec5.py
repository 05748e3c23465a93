"""Sec. V-B of the A-SRPT paper: run A-SRPT and the baselines on one workload and read the cluster.

The measuring core of the Sec. V claims (:mod:`.claims`), which were the logic of
``benchmarks/ddlwmp_sec5*.py``. Every total completion time is ``evaluate``'s, recomputed from the
schedule's starts and placements; nothing comes from a policy's own bookkeeping.

Per policy run (:func:`run_policy_readout`) it also reports what shows whether the cluster is
saturated (issue 14 item 4):

* ``utilisation``: GPU-seconds used, Σ_i g_i·n_i·α_i (α_i of the schedule's placement, which
  ``evaluate`` checked against the assignment) over G·makespan;
* ``inflation``: GPU-time inflation, Σ_i g_i·n_i·α_i over Σ_i g_i·n_i·α̃_i^min (1.00: every job
  ran on its Heavy-Edge fewest-server placement; the workloads calibrate their load at α̃^min), and
  ``inflation_max``: the largest single job's, max_i α_i/α̃_i^min (its GPU-time over its GPU-time at
  α̃^min: g_i and n_i cancel);
* ``split_share``: the share of the multi-GPU jobs (g_i > 1) placed on more servers than the fewest
  that can hold them, ⌈g_i/g⌉ (the placements that pay inter-server traffic a consolidated one
  would not);
* ``backlog_at_end``: the share of jobs still waiting (start > the last release) when the last job
  arrives, and ``drain``: makespan / last release (far above 1: the queue never drains while jobs
  arrive, i.e. overload).

Reduction of A-SRPT vs baseline b: (TCT_b − TCT_A-SRPT) / TCT_b, in percent (the paper's measure).
"""

from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

from .a_srpt import ASRPT
from .baselines import BASELINES
from .model import DdlwmpInstance, evaluate
from .policies import build_policy
from .readings import COMM_HEAVY_DEFAULT, CONSOLIDATE_DEFAULT, TAU_DEFAULT
from .simulate import simulate_policy

__all__ = ["PAPER_BASELINES", "A_SRPT_READINGS", "HEAVY_EDGE_READINGS",
           "instance_of", "policy_readings", "policy_args", "policy_for", "run_policy_readout", "compare", "reductions",
           "series_readout"]

PAPER_BASELINES = ("spjf", "spwf", "wcs-duration", "wcs-workload", "wcs-subtime")
"""The paper's five baselines (Sec. V-A-1-d)."""

A_SRPT_READINGS = ("tau", "comm_heavy", "comm_heavy_test", "delay_blocks_queue", "light_placement", "head_of_line")


def instance_of(data: Mapping[str, Any]) -> DdlwmpInstance:
    """The instance of a workload dict (its ``meta`` and ``name`` dropped)."""
    return DdlwmpInstance.from_dict({k: v for k, v in data.items() if k not in ("meta", "name")})


HEAVY_EDGE_READINGS = ("single_gpu_weight", "server_start")
"""gpu-mapping's Heavy-Edge readings, declared for ddlwmp too: every policy's Heavy-Edge and
A-SRPT's alpha~min take them (:class:`.placement.Placer`)."""


def policy_readings(name: str, readings: Mapping[str, Any]) -> dict[str, Any]:
    """The readings policy ``name`` reads, and all that :func:`policy_for` passes on to it:
    Heavy-Edge's (every policy's placer), then A-SRPT's own, or a baseline's ``consolidate``.
    The memo key of a policy run (:func:`compare`) is built from the same function, so a reading
    a policy does not read cannot split its runs, and one it reads always does."""
    own = A_SRPT_READINGS if name.startswith("a-srpt") else ("consolidate",)
    return {k: readings[k] for k in (*HEAVY_EDGE_READINGS, *own) if k in readings}


def policy_args(name: str, readings: Mapping[str, Any]) -> tuple[type, dict[str, Any], dict[str, Any]]:
    """The class of policy ``name`` (``a-srpt``, ``a-srpt-perfect`` or a baseline), its placer's
    Heavy-Edge readings and its own keywords under ``readings`` (those it reads,
    :func:`policy_readings`): what :func:`policy_for` and :func:`run_policy_readout` build it with."""
    r = policy_readings(name, readings)
    heavy_edge = {k: r[k] for k in HEAVY_EDGE_READINGS if k in r}
    if name.startswith("a-srpt"):
        kw = {k: r[k] for k in A_SRPT_READINGS if k in r}
        kw.setdefault("tau", TAU_DEFAULT)
        kw.setdefault("comm_heavy", COMM_HEAVY_DEFAULT)
        return ASRPT, heavy_edge, kw
    return BASELINES[name], heavy_edge, {"consolidate": r.get("consolidate", CONSOLIDATE_DEFAULT)}


def policy_for(inst: DdlwmpInstance, name: str, readings: Mapping[str, Any], seed: int) -> Any:
    """A fresh policy object ``name`` (``a-srpt``, ``a-srpt-perfect`` or a baseline) for ``inst``
    under ``readings`` (those it reads, :func:`policy_readings`), with its own Heavy-Edge placer
    seeded by ``seed``: what :func:`run_policy_readout` simulates (``a-srpt-perfect`` is the same
    object, driven with ñ_i = n_i by the simulator)."""
    cls, heavy_edge, kw = policy_args(name, readings)
    return build_policy(cls, inst.cluster, inst.models, seed=seed, heavy_edge=heavy_edge, **kw)


def run_policy_readout(inst: DdlwmpInstance, name: str, readings: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """Simulate policy ``name`` (``a-srpt``, ``a-srpt-perfect`` or a baseline) under ``readings``;
    return ``evaluate``'s total completion time and the cluster readout (module docstring).

    The run goes one way (issue 36, ``benchmarks/flow_trace.py``): the driver builds the policy
    :func:`policy_for` would and simulates it (:func:`.simulate.simulate_policy`), ``evaluate``
    checks the schedule, and the readout reads values only (the instance's g_i, the placer's
    alpha~min computed when it was built, the policy's counters), entering no room again."""
    t0 = time.perf_counter()
    cls, heavy_edge, kw = policy_args(name, readings)
    schedule, pol = simulate_policy(inst, cls, seed=seed, heavy_edge=heavy_edge, perfect=name == "a-srpt-perfect",
                                    **kw)
    ev = evaluate(inst, schedule)
    if not ev.feasible:
        raise RuntimeError(f"{name}: infeasible schedule: {ev.violations[:3]}")
    starts = {e["id"]: e["start"] for e in schedule["jobs"]}
    alpha = {e["id"]: e["alpha_s"] for e in schedule["jobs"]}
    used = sum(inst.gpus(j) * j.iterations * alpha[j.id] for j in inst.jobs)
    ideal = sum(inst.gpus(j) * j.iterations * pol.placer.alpha_min(j.model) for j in inst.jobs)
    worst = max((alpha[j.id] / a if (a := pol.placer.alpha_min(j.model)) > 0 else 1.0) for j in inst.jobs)
    g = inst.cluster.gpus_per_server
    spread = {e["id"]: len({m for stage in e["assignment"] for m in stage}) for e in schedule["jobs"]}
    multi = [j for j in inst.jobs if inst.gpus(j) > 1]
    split = sum(spread[j.id] > -(-inst.gpus(j) // g) for j in multi)
    last_release = max(j.release for j in inst.jobs)
    makespan = ev.objectives["makespan"]
    return {
        "total_completion": ev.objectives["total_completion"],
        "total_flow": ev.objectives["total_flow"],
        "makespan": makespan,
        "utilisation": used / (inst.cluster.total_gpus * makespan) if makespan > 0 else 0.0,
        "inflation": used / ideal if ideal > 0 else 1.0,
        "inflation_max": worst,
        "split_share": split / len(multi) if multi else 0.0,
        "backlog_at_end": sum(starts[j.id] > last_release for j in inst.jobs) / len(inst.jobs),
        "drain": makespan / last_release if last_release > 0 else None,
        "delayed_starts": getattr(pol, "delayed", None),
        "wall_s": round(time.perf_counter() - t0, 2),
    }


def compare(inst: DdlwmpInstance, readings: Mapping[str, Any], seed: int,
            policies: Sequence[str] = ("a-srpt", *PAPER_BASELINES)) -> dict[str, dict[str, Any]]:
    """:func:`run_policy_readout` of every policy on ``inst``.

    Under ``optkit reproduce`` each run is memoised (:mod:`optkit.memo`) under the policy, the
    readings it reads (:func:`policy_readings`), the seed and the instance's content hash, so a
    reading setting that changes only A-SRPT's readings reuses the five baselines' runs of an
    earlier setting on the same workload (and the other way round)."""
    from optkit import memo
    from optkit.instances import instance_hash

    if not memo.active():
        return {p: run_policy_readout(inst, p, readings, seed) for p in policies}
    h = instance_hash(inst.to_dict())
    # v2: the readout gained inflation_max and split_share (a store's older memo lacks them)
    return {p: memo.cached("ddlwmp-policy-run-v2",
                           {"policy": p, "readings": policy_readings(p, readings), "seed": seed, "instance": h},
                           lambda p=p: run_policy_readout(inst, p, readings, seed))
            for p in policies}


def reductions(runs: Mapping[str, Mapping[str, Any]], against: Sequence[str] = PAPER_BASELINES,
               a: str = "a-srpt") -> dict[str, float]:
    """A-SRPT's reduction of total completion time vs each baseline, in percent."""
    ta = runs[a]["total_completion"]
    return {b: 100.0 * (runs[b]["total_completion"] - ta) / runs[b]["total_completion"] for b in against}


def series_readout(algorithm: str, cases: Sequence[tuple[str, Mapping[str, Any]]], readings: Mapping[str, Any],
                   seed: int) -> dict[str, Any]:
    """One more algorithm (a plug-in, run through ``solve``: its TCT is ``evaluate``'s) on each
    workload of ``cases`` (``(label, workload dict)``), beside A-SRPT under ``readings``: its TCT
    and A-SRPT's reduction against it, in percent (the paper's measure against each baseline),
    min and max over the cases: the ``series`` of the experiments that compare A-SRPT with
    baselines (:attr:`optkit.claims.Experiment.series`)."""
    from optkit.solve import solve

    from .model import PROBLEM

    reds, details = [], []
    for label, data in cases:
        inst = instance_of(data)
        res = solve(PROBLEM, inst, algorithm, objective="total_completion", seed=seed)
        ta = run_policy_readout(inst, "a-srpt", readings, seed)["total_completion"]
        tb = res.objective if res.solution is not None else None
        red = None if tb is None or tb <= 0 else 100.0 * (tb - ta) / tb
        details.append({"case": label, "status": res.status.value, "total_completion": tb,
                        "a_srpt_total_completion": ta, "a_srpt_reduction_pct": red})
        if red is not None:
            reds.append(red)
    return {"a_srpt_min_reduction_pct": min(reds) if reds else None,
            "a_srpt_max_reduction_pct": max(reds) if reds else None, "_details": {"cases": details}}
