"""Heavy-Edge against the exact model on tensor-parallel and MoE jobs over job sizes (the A-SRPT
paper's Sec. VI, issue 37 item 5): the gpu-mapping half of the ``llm`` results page.

Sec. VI extends the model to LLM-era jobs ("represent tensor slices as vertices and AllReduce
operations as weighted edges ... all tensor slices of a layer must reside within a single server";
"represent expert groups as vertices ... token routing represented as weighted edges") and runs no
experiment on them: it states no number. So every quantity here is registered with
``incomparable="no paper value: ..."`` and ``paper_value=None`` (:mod:`optkit.claims`): the page
reports what we measure and gives no verdict.

What one measurement does (:func:`measure_llm_gap`)
---------------------------------------------------
For each job size D of the scale (:data:`SIZES`) and each kind (``tp``: a 3D-parallel job,
``moe``: an MoE job), one job of D GPUs (:func:`gap_case`, seeded): the job is ddlwmp's LLM
variant of D GPUs (:func:`optkit.formulations.ddlwmp.llm_workloads.llm_variant`: a Table I
transformer base, a tensor-parallel degree t >= 2 dividing D and g drawn uniformly, each slice
1/t of its replica's compute and four all-reduces per layer; or one stage of e = gcd(D, 8) expert
groups per replica with uniform routing), the very jobs the ``llm`` workloads of ddlwmp hold; its
free GPUs are the loads of a random placement of its placement units (a tensor-parallel replica:
t GPUs on one server) on servers of g = 8 GPUs
(:func:`.llm_generate.random_free_gpus`), so every case is feasible; the cluster is Sec. V's
(10 Gbps NICs, 300 GB/s inside a server). Then Heavy-Edge (``heavy-edge`` through ``solve``: each
tensor-parallel replica's slices a co-location group) and CP-SAT (``cpsat``, one worker, the
scale's time limit) on the objective ``alpha`` (eq. (7), the per-iteration training time Table II
compares); both mappings' alpha from ``evaluate``; CP-SAT's proven lower bound is its optimum
when it proves one, else its best bound.

Quantities per kind and size: Heavy-Edge's gap over that bound, 100 x (alpha_HE / bound - 1) in
percent (Table II's "PITT over the optimal", against the proven optimum, or an upper estimate of
the true gap where CP-SAT stops at its time limit; none where that bound is 0), whether CP-SAT
proved the optimum (1 or 0) and both wall times (``solve``'s). The jobs and both alphas are in
``_details``.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from optkit.claims import NO_PAPER_VALUE, Claim, Experiment

from .model import PROBLEM

__all__ = ["KINDS", "SIZES", "TIME_LIMIT", "EXPERIMENTS", "gap_case", "gap_row", "measure_llm_gap", "series_llm_gap"]

PAPER = "llm"
KINDS = ("tp", "moe")
SIZES = {"ci": (8, 32), "paper": (8, 32, 128, 256)}
"""Job sizes in GPUs measured at each scale. The paper states none (Sec. VI has no experiment):
``paper`` is the range this project's machine measures in minutes (CP-SAT proves the 256-GPU MoE
job in about half a minute on one worker), ``ci`` its two smallest, each measurement in seconds."""
GPUS_PER_SERVER = 8
TIME_LIMIT = {"ci": 10.0, "paper": 60.0}
"""CP-SAT's time limit per case, seconds."""
_CLUSTER = {"gpus_per_server": GPUS_PER_SERVER, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11}
"""Sec. V-A-1-b's cluster: 10 Gbps server NICs, 300 GB/s NVLink inside a server."""
_KIND_NAMES = {"tp": "3D-parallel (tensor-parallel) job", "moe": "MoE (expert-parallel) job"}
_WHY = (f"{NO_PAPER_VALUE}: Sec. VI extends Heavy-Edge and the exact model to tensor-parallel and MoE jobs and "
        "runs no experiment on them")


def gap_case(kind: str, gpus: int, seed: int) -> dict[str, Any]:
    """The gpu-mapping instance dict of one ``kind`` job of ``gpus`` GPUs (module docstring),
    drawn from ``numpy.random.default_rng([seed, gpus, KINDS.index(kind)])``: same arguments,
    same dict."""
    from optkit.formulations.ddlwmp.catalog import model_catalog
    from optkit.formulations.ddlwmp.llm_workloads import BASES, llm_variant

    from .llm_generate import random_free_gpus

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    rng = np.random.default_rng([seed, gpus, KINDS.index(kind)])
    catalog = {k: v for k, v in model_catalog(gpus).items() if v[0] in BASES}
    hit = llm_variant(kind, gpus, GPUS_PER_SERVER, catalog, rng, "ring", 0.0, {})
    if hit is None:
        raise ValueError(f"no {kind} job of {gpus} GPUs on servers of {GPUS_PER_SERVER}")
    name, job, n = hit
    units = ([st["tensor_parallel"] for st in job["stages"] for _ in range(st["replicas"])] if kind == "tp"
             else [1] * n)
    return {"problem": PROBLEM, "name": f"{name}_s{seed}", "cluster": dict(_CLUSTER), "job": job,
            "servers": random_free_gpus(units, GPUS_PER_SERVER, rng)}


def gap_row(data: Mapping[str, Any], time_limit: float, seed: int) -> dict[str, Any]:
    """Heavy-Edge and CP-SAT (one worker, ``time_limit`` seconds) on one case on ``alpha``:
    both alphas from ``evaluate``, CP-SAT's status and bound (its optimum when proven), the gap
    in percent and both wall times."""
    from optkit.solve import solve

    from .model import GpuMappingInstance, evaluate

    inst = GpuMappingInstance.from_dict(dict(data))
    he = solve(PROBLEM, inst, "heavy-edge", objective="alpha", seed=seed)
    cp = solve(PROBLEM, inst, "cpsat", objective="alpha", seed=seed, params={"workers": 1}, time_limit=time_limit)
    alphas = {}
    for who, res in (("heavy-edge", he), ("cpsat", cp)):
        ev = evaluate(inst, res.solution) if res.solution is not None else None
        if ev is None or not ev.feasible:
            raise RuntimeError(f"{data.get('name')}: {who} returned no feasible mapping ({res.status.value}: "
                               f"{res.message[:200]})")
        alphas[who] = float(ev.objectives["alpha"])
    bound = float(cp.bound) if cp.bound is not None else None
    gap = None if not bound else 100.0 * (alphas["heavy-edge"] / bound - 1.0)
    return {"job": data.get("name"), "gpus": sum(data["servers"]), "servers": list(data["servers"]),
            "he_alpha_s": alphas["heavy-edge"], "cpsat_alpha_s": alphas["cpsat"], "cpsat_status": cp.status.value,
            "bound_s": bound, "gap_pct": gap, "he_time_s": he.wall_time_s, "cpsat_time_s": cp.wall_time_s}


def _ids(kind: str, gpus: int) -> tuple[str, str, str, str]:
    base = f"llm-gpu-mapping-{kind}-{gpus}"
    return f"{base}-gap", f"{base}-he-time", f"{base}-exact-time", f"{base}-proven"


def measure_llm_gap(*, readings: dict[str, Any], seed: int, scale: str) -> dict[str, Any]:
    """Every case of the scale (module docstring): the claims of :data:`EXPERIMENTS` measured at
    its sizes (``None`` for the sizes of the other scale), every case in ``_details``."""
    out: dict[str, Any] = {c.id: None for c in EXPERIMENTS["llm-gpu-mapping-gap"].claims}
    rows = []
    for gpus in SIZES[scale]:
        for kind in KINDS:
            row = dict(gap_row(gap_case(kind, gpus, seed), TIME_LIMIT[scale], seed), kind=kind)
            rows.append(row)
            gap_id, he_id, exact_id, proven_id = _ids(kind, gpus)
            out[gap_id] = row["gap_pct"]
            out[proven_id] = 1.0 if row["cpsat_status"] == "optimal" else 0.0
            out[he_id] = 1e3 * row["he_time_s"]
            out[exact_id] = row["cpsat_time_s"]
    proven = sum(r["cpsat_status"] == "optimal" for r in rows)
    out["_details"] = {"cases": rows, "time_limit_s": TIME_LIMIT[scale]}
    out["_diagnostics"] = {"cases proven optimal": float(proven), "cases": float(len(rows)),
                           "largest gap [%]": max((r["gap_pct"] for r in rows if r["gap_pct"] is not None),
                                                  default=0.0)}
    out["_notes"] = [f"sizes {', '.join(map(str, SIZES[scale]))} GPUs; CP-SAT proved {proven} of {len(rows)} cases "
                     f"optimal within {TIME_LIMIT[scale]:g} s (one worker)"]
    return out


def series_llm_gap(algorithm: str, *, readings: Mapping[str, Any], seed: int, scale: str) -> dict[str, Any]:
    """The cases of :func:`measure_llm_gap` for one more algorithm (a plug-in, through ``solve``
    on ``alpha``): per kind and size, its alpha (``evaluate``'s) over Heavy-Edge's on the same case
    (``KIND_GPUS_over_heavy_edge``; ``None`` where it returns no feasible mapping). CP-SAT is not
    solved again here: the claims' measurement holds the bounds."""
    from optkit.solve import solve

    from .model import GpuMappingInstance, evaluate

    out: dict[str, Any] = {}
    rows = []
    for gpus in SIZES[scale]:
        for kind in KINDS:
            data = gap_case(kind, gpus, seed)
            inst = GpuMappingInstance.from_dict(data)
            alphas: dict[str, float | None] = {}
            status = ""
            for who in (algorithm, "heavy-edge"):
                res = solve(PROBLEM, inst, who, objective="alpha", seed=seed)
                ev = evaluate(inst, res.solution) if res.solution is not None else None
                alphas[who] = float(ev.objectives["alpha"]) if ev is not None and ev.feasible else None
                status = status or res.status.value
            mine, he = alphas[algorithm], alphas["heavy-edge"]
            ratio = None if mine is None or not he else mine / he
            out[f"{kind}_{gpus}_over_heavy_edge"] = ratio
            rows.append({"job": data["name"], "kind": kind, "gpus": gpus, "status": status, "alpha_s": mine,
                         "heavy_edge_alpha_s": he})
    out["_details"] = {"cases": rows}
    return out


def _claims() -> tuple[Claim, ...]:
    out = []
    for gpus in SIZES["paper"]:
        for kind in KINDS:
            gap_id, he_id, exact_id, proven_id = _ids(kind, gpus)
            where = f"Sec. VI, {_KIND_NAMES[kind]} of {gpus} GPUs"
            out += [
                Claim(gap_id, f"{where}: Heavy-Edge's per-iteration time over the exact model's", None, "%",
                      "100 x (alpha of Heavy-Edge's mapping / CP-SAT's proven lower bound - 1), alpha by eq. (7) "
                      "from evaluate; the bound is the optimum where CP-SAT proves one, else its best bound (the "
                      "gap is then an upper estimate; none where that bound is 0)", incomparable=_WHY),
                Claim(proven_id, f"{where}: the exact model proved the optimum", None, "ratio",
                      "1 if CP-SAT proved the optimum within its time limit, else 0 (the mean over seeds is the "
                      "share of cases proven)", incomparable=_WHY),
                Claim(he_id, f"{where}: Heavy-Edge's wall time", None, "ms", "solve's wall time of heavy-edge",
                      incomparable=_WHY),
                Claim(exact_id, f"{where}: the exact model's wall time", None, "s",
                      "solve's wall time of cpsat (one worker) to its proof or its time limit", incomparable=_WHY),
            ]
    return tuple(out)


EXPERIMENTS = {
    "llm-gpu-mapping-gap": Experiment(
        "llm-gpu-mapping-gap", PROBLEM, PAPER,
        "Sec. VI: Heavy-Edge vs the exact model on tensor-parallel and MoE jobs of 8-256 GPUs",
        f"{__name__}:measure_llm_gap", claims=_claims(),
        time_limit={"ci": 60.0, "paper": 1800.0}, series=f"{__name__}:series_llm_gap",
        notes="The A-SRPT paper's Sec. VI extends the job graph to tensor-parallel slices and MoE expert groups and "
              "states no number, so nothing here has a verdict: each value is reported as measured. Per seed and "
              "size, one 3D-parallel job and one MoE job of ddlwmp's LLM workloads (a Table I transformer base; "
              "tensor-parallel degree t drawn among the divisors of the size and 8, or e = gcd(size, 8) expert "
              "groups per replica, uniform routing) on the free GPUs of a random placement on 8-GPU servers; "
              "Heavy-Edge (co-locating each replica's slices) against CP-SAT (one worker, 60 s at paper scale, "
              "10 s at ci) on the per-iteration time alpha. The paper states no setting: `paper` scale is sizes "
              "8, 32, 128 and 256 GPUs, `ci` 8 and 32 (formulations/gpu_mapping/llm_claims.py)."),
}
