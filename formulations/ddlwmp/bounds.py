"""ddlwmp lower bounds on the offline optimum, and the A-SRPT paper's guarantees (Sec. IV-C-2).

Notation: I jobs, job i released at r_i with g_i GPUs and n_i iterations (ñ_i predicted);
G = M·g GPUs; ``rs_i = slot_ceil(r_i)`` the first slot boundary at or after r_i (the earliest
start the time rule allows, :mod:`.model`). Three per-iteration times per job:

* ``alpha_i^min`` (TRUE): the exact minimum of eq. (7) over every placement of the job on the
  empty cluster -- every vector y of GPUs per server with the exact best stage split
  (:func:`.exact.alpha_min_exact`, :func:`.exact.placement_options`). Every schedule has ``alpha_i >= alpha_i^min``.
* ``α̃_i^min`` (ESTIMATE, Sec. IV-B): the job on the fewest servers, mapped by Heavy-Edge
  (:func:`optkit.formulations.gpu_mapping.heavy_edge.alpha_min_estimate`); ``α̃_i^min >= alpha_i^min``.
* ``alpha_i^max``: :func:`optkit.formulations.gpu_mapping.model.alpha_max` (every replica alone on a
  server with B_inter/g of the NIC).

Lower bounds (:func:`lower_bound`)
==================================
LB1 (per job). ``C_i = t_i + n_i alpha_i >= rs_i + n_i alpha_i^min``: t_i is a slot boundary
>= r_i, so t_i >= rs_i, and alpha_i >= alpha_i^min. Summing: ``LB1 = sum_i (rs_i + n_i
alpha_i^min)`` <= every schedule's total completion. (The brief's ``sum_i (r_i + n_i
alpha_i^min)`` is <= LB1, so LB1 is that bound, tightened by the time rule.) Makespan: ``max_i``.

LB2 (relaxation A1 with the TRUE alpha^min). A1: one preemptive machine, job i of size
``p_i = (g_i/G) n_i alpha_i^min`` released at rs_i. Claim: OPT_A1 <= total completion of any
schedule S of A (Lemma 1's construction with rho = 1, since the true alpha^min needs no
rescaling). Proof: in S job i runs over [t_i, C_i), ``C_i - t_i = n_i alpha_i >= n_i
alpha_i^min``, holding g_i GPUs, so at any moment the running jobs hold at most G GPUs. Give job i
the rate g_i/G of the machine while it runs: the rates sum to <= 1, and job i receives
``(g_i/G)(C_i - t_i) >= p_i`` units within [rs_i, C_i] (stop it once it has p_i). This
processor-sharing schedule witnesses that releases rs_i and deadlines C_i are jointly feasible
on one machine; by the classic exchange argument EDF (preemptive, deadlines C_i) then meets
every deadline, giving a preemptive schedule of A1 with completions <= C_i. SRPT is optimal for
1|r_j, pmtn|sum C_j (Schrage), so ``LB2 = SRPT(A1) <= sum_i C_i``. Makespan: the
work-conserving schedule in release order is optimal for 1|r_j, pmtn|C_max, and the witness
shows it is <= max_i C_i.

:func:`lower_bound` returns ``max(LB1, LB2)``; ``total_flow`` subtracts sum_i r_i (a constant).

Quick bound (:func:`quick_lower_bound`)
=======================================
``alpha_i^min`` enumerates every placement, which takes hours on a 20-server cluster; the harness
then falls back to LB1 and LB2 with ``alpha_i^min`` replaced by a closed-form lower bound
``alpha_i^lo <= alpha_i^min`` (:func:`alpha_min_lower`), so both stay proven, only weaker.
Per stage s, every placement has a server m holding x = x_s^m >= 1 of its k_s replicas, and
alpha >= beta[s, m] (eq. 7) >= comp_s + comm_lo + ar_lo, where (eqs. 4-6, :func:`formulations.
gpu_mapping.model.stage_times`): comp_s = p^f + p^b; the data to a neighbour stage of k'
replicas, x' of them on m, costs ``2d(g(1 - x'/k')/B_inter + (x'/k')/B_intra) >= 2d·min(g/B_inter,
1/B_intra)`` (linear in x'/k' in [0, 1]); the AllReduce is 0 for k_s = 1, else either
``2(k-1)h/(k B_intra)`` (x = k, possible only when k <= g) or ``2(k-1)h/(k (x/g) B_inter)`` with
x <= min(k - 1, g), so at least the smaller of the two possible values. ``alpha_i^lo`` is the
largest stage bound.

Paper guarantees (:func:`guarantees`)
=====================================
Readings of the paper's bounds (this package's ``README.md``, "Bounds"), with the paper's choice of
alpha in each:

* ``rho = max_i alpha_i^max / alpha_i^min`` -- TRUE alpha^min (Lemma 1's definition; its proof
  uses ``α̃_i^min <= rho alpha_i^min``, which holds because α̃_i^min <= alpha_i^max).
* ``rho_bar = alpha^max / alpha^min``, ``alpha^max = max_i alpha_i^max``, ``alpha^min = min_i
  alpha_i^min`` -- TRUE (Theorem 1's definition).
* ``eps = sum_i |n_i - ñ_i|``, ``eps_bar = eps / I`` (eq. 9); None if a job has no prediction.
* OPT_A1 / OPT_Ã1: SRPT on sizes ``(g_i/G) n_i α̃_i^min`` / ``(g_i/G) ñ_i α̃_i^min`` with
  releases r_i -- the ESTIMATE α̃ (Sec. IV-C-1 defines A1 and Ã1 with α̃_i^min).
* Lemma 1: ``OPT_A1 <= rho OPT_A``.
* Lemma 2: ``Gamma_A <= (1 + tau + rho G/(G - g_max)) OPT_Ã1 + I g_max alpha^max eps/(G - g_max)
  + rho OPT_A``.
* Lemma 3 (PDF reading): ``OPT_Ã1 <= OPT_A1 + I (g_max alpha^max / G) eps``.
* Theorem 1: ``Gamma_A / OPT_A <= (2 + tau + rho G/(G - g_max)) rho + 2 rho g_max rho_bar
  (1 + tau + (1 + rho) G/(G - g_max)) eps_bar``.

Lemma 2 and Theorem 1 need ``G > g_max``; otherwise their right-hand sides are ``None`` (the
paper's ``G - g_max`` denominators vanish or turn negative, and the bounds say nothing). The
paper's proofs are sketchy (Appendices A-C); :func:`guarantees` only evaluates the formulas and,
given A-SRPT's Gamma_A and the proven OPT_A, whether each holds -- a violation is a finding to
report. Given only a lower bound on OPT_A, the right-hand sides are lower than the true ones, so
"holds" stays proven but "violated" does not.
"""

from __future__ import annotations

import heapq
import math
from typing import Any, Sequence

from optkit.formulations.ddlwmp.exact import placement_options
from optkit.formulations.ddlwmp.model import OBJECTIVES, DdlwmpInstance, slot_ceil
from optkit.formulations.ddlwmp.tensor import is_llm
from optkit.formulations.gpu_mapping.heavy_edge import alpha_min_estimate
from optkit.formulations.gpu_mapping.model import Cluster, PipelineJob, alpha_max, stage_compute
from optkit.errors import InputError

__all__ = ["srpt_total_completion", "preemptive_makespan", "alpha_min_lower", "lower_bounds", "lower_bound",
           "quick_lower_bound", "guarantees"]


def srpt_total_completion(releases: Sequence[float], sizes: Sequence[float]) -> float:
    """Sum of completion times of preemptive SRPT on one unit-speed machine (optimal for
    1|r_j, pmtn|sum C_j). Event simulation over releases and completions."""
    jobs = sorted(zip(releases, sizes))
    heap: list[float] = []
    t, k, total = 0.0, 0, 0.0
    n = len(jobs)
    while k < n or heap:
        if not heap:
            t = max(t, jobs[k][0])
        while k < n and jobs[k][0] <= t:
            heapq.heappush(heap, jobs[k][1])
            k += 1
        rem = heapq.heappop(heap)
        next_release = jobs[k][0] if k < n else math.inf
        if t + rem <= next_release:
            t += rem
            total += t
        else:
            heapq.heappush(heap, rem - (next_release - t))
            t = next_release
    return total


def preemptive_makespan(releases: Sequence[float], sizes: Sequence[float]) -> float:
    """Makespan of the work-conserving schedule in release order (optimal for 1|r_j, pmtn|C_max)."""
    t = 0.0
    for r, p in sorted(zip(releases, sizes)):
        t = max(t, r) + p
    return t


def _alpha_min_true(instance: DdlwmpInstance) -> dict[str, float]:
    return {name: min(o.alpha for o in opts) for name, opts in placement_options(instance).items()}


def alpha_min_lower(job: PipelineJob, cluster: Cluster) -> float:
    """``alpha^lo <= alpha^min``: the closed-form lower bound on eq. (7) over every placement
    of ``job`` (module docstring, "Quick bound"); O(stages). A tensor-parallel or MoE job
    (gpu-mapping's ``vertex_times``, Sec. VI): per stage, every vertex computes
    ``stage_compute`` (eq. 4 with the slices' all-reduce), moves its pipeline bytes
    2(d^in + d^out)/u_s at the cheaper of g/B_inter and 1/B_intra, and, when k_s > 1, all-reduces
    D = 2(k-1)(h/u_s)/k at D/B_intra (all peers on its server) or D/((X/g)·B_inter) >= D/B_inter
    (X <= g); its all-to-all is >= 0."""
    if is_llm(job):
        g = float(cluster.gpus_per_server)
        per_byte = min(g / cluster.inter_bandwidth, 1.0 / cluster.intra_bandwidth)
        comp = stage_compute(job, cluster)
        best = 0.0
        for s, st in enumerate(job.stages):
            k, u = st.replicas, st.units
            data = 2.0 * (k - 1) * (st.param_bytes / u) / k
            ar = min(data / cluster.intra_bandwidth, data / cluster.inter_bandwidth) if k > 1 else 0.0
            best = max(best, float(comp[s]) + 2.0 * per_byte * (st.in_bytes + st.out_bytes) / u + ar)
        return best
    g = float(cluster.gpus_per_server)
    per_byte = min(g / cluster.inter_bandwidth, 1.0 / cluster.intra_bandwidth)
    best = 0.0
    for s, st in enumerate(job.stages):
        k = st.replicas
        comm = 2.0 * per_byte * ((st.in_bytes if s > 0 else 0.0) + (st.out_bytes if s < len(job.stages) - 1 else 0.0))
        ar = 0.0
        if k > 1:
            data = 2.0 * (k - 1) * st.param_bytes / k
            ar = data * g / (min(k - 1, g) * cluster.inter_bandwidth)
            if k <= g:
                ar = min(ar, data / cluster.intra_bandwidth)
        best = max(best, st.fwd_time + st.bwd_time + comm + ar)
    return best


def lower_bounds(instance: DdlwmpInstance, objective: str = "total_completion", *,
                 quick: bool = False) -> dict[str, float]:
    """LB1 and LB2 of the module docstring (seconds), each for ``objective``; ``quick`` uses
    ``alpha^lo`` (:func:`alpha_min_lower`) instead of the exact ``alpha^min``."""
    if objective not in OBJECTIVES:
        raise InputError("objective", f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    slot = instance.cluster.slot_seconds
    G = instance.cluster.total_gpus
    if quick:
        mc = instance.cluster.mapping_cluster
        amin = {name: alpha_min_lower(instance.models[name], mc) for name in {j.model for j in instance.jobs}}
    else:
        amin = _alpha_min_true(instance)
    rs = [slot_ceil(j.release, slot) for j in instance.jobs]
    dmin = [j.iterations * amin[j.model] for j in instance.jobs]
    sizes = [instance.gpus(j) / G * d for j, d in zip(instance.jobs, dmin)]
    if objective == "makespan":
        return {"LB1": max(r + d for r, d in zip(rs, dmin)), "LB2": preemptive_makespan(rs, sizes)}
    lb1 = sum(r + d for r, d in zip(rs, dmin))
    lb2 = srpt_total_completion(rs, sizes)
    if objective == "total_flow":
        off = sum(j.release for j in instance.jobs)
        lb1, lb2 = lb1 - off, lb2 - off
    return {"LB1": lb1, "LB2": lb2}


def lower_bound(instance: DdlwmpInstance, objective: str = "total_completion") -> float:
    """max(LB1, LB2): a proven lower bound on the optimum of ``objective`` (module docstring)."""
    return max(lower_bounds(instance, objective).values())


def quick_lower_bound(instance: DdlwmpInstance, objective: str = "total_completion") -> float:
    """max(LB1, LB2) with ``alpha^lo`` for ``alpha^min``: weaker than :func:`lower_bound`, still
    proven, and O(jobs log jobs) (module docstring, "Quick bound"); the harness's fallback."""
    return max(lower_bounds(instance, objective, quick=True).values())


def guarantees(instance: DdlwmpInstance, *, gamma: float | None = None, opt: float | None = None,
               tau: float = 0.0, seed: int | None = 0) -> dict[str, Any]:
    """The paper's quantities and bounds for ``instance`` (module docstring).

    ``gamma``: A-SRPT's total completion time Gamma_A on the instance (a run's objective);
    ``opt``: OPT_A (the proven offline optimum of total completion). ``tau``: A-SRPT's delay
    factor of the run (0 if not given, the testbed's; A-SRPT's own default is the held-out
    :data:`.readings.TAU_DEFAULT`, which the guarantee readers below take when a run names none). ``seed``: Heavy-Edge's seed for α̃^min. Right-hand sides needing an unknown
    quantity, or ``G > g_max`` when it fails, are ``None``.
    """
    cl = instance.cluster
    mc = cl.mapping_cluster
    G = cl.total_gpus
    jobs = instance.jobs
    I = len(jobs)
    amin = _alpha_min_true(instance)
    names = sorted(amin)
    models = instance.models  # a tensor-parallel or MoE job: gpu-mapping's eq. (7) extended (tensor.py)
    atil = {n: alpha_min_estimate(models[n], mc, seed=seed) for n in names}
    amax = {n: alpha_max(models[n], mc) for n in names}
    g_max = max(instance.gpus(j) for j in jobs)
    rho = max(amax[j.model] / amin[j.model] for j in jobs)
    alpha_max_all = max(amax[j.model] for j in jobs)
    alpha_min_all = min(amin[j.model] for j in jobs)
    rho_bar = alpha_max_all / alpha_min_all
    have_pred = all(j.predicted_iterations is not None for j in jobs)
    eps = sum(abs(j.iterations - j.predicted_iterations) for j in jobs) if have_pred else None  # type: ignore[operator]
    eps_bar = eps / I if eps is not None else None
    rel = [j.release for j in jobs]
    opt_a1 = srpt_total_completion(rel, [instance.gpus(j) / G * j.iterations * atil[j.model] for j in jobs])
    opt_at1 = (srpt_total_completion(rel, [instance.gpus(j) / G * j.predicted_iterations * atil[j.model]  # type: ignore[operator]
                                           for j in jobs]) if have_pred else None)
    ok_g = G > g_max
    frac = G / (G - g_max) if ok_g else None
    out: dict[str, Any] = {
        "G": G, "g_max": g_max, "I": I, "tau": tau,
        "alpha_min_true": amin, "alpha_min_estimate": atil, "alpha_max": amax,
        "rho": rho, "rho_bar": rho_bar, "alpha_max_all": alpha_max_all, "alpha_min_all": alpha_min_all,
        "eps": eps, "eps_bar": eps_bar, "OPT_A1": opt_a1, "OPT_A1_tilde": opt_at1,
        "lemma3_rhs": opt_a1 + I * g_max * alpha_max_all / G * eps if eps is not None else None,
        "theorem1_ratio": ((2 + tau + rho * frac) * rho
                           + 2 * rho * g_max * rho_bar * (1 + tau + (1 + rho) * frac) * eps_bar)
        if (ok_g and eps_bar is not None) else None,
        "lemma1_rhs": rho * opt if opt is not None else None,
        "lemma2_rhs": ((1 + tau + rho * frac) * opt_at1 + I * g_max * alpha_max_all * eps / (G - g_max) + rho * opt)
        if (ok_g and opt is not None and opt_at1 is not None and eps is not None) else None,
    }
    if out["lemma3_rhs"] is not None:
        out["lemma3_holds"] = bool(opt_at1 <= out["lemma3_rhs"] * (1 + 1e-12))
    if out["lemma1_rhs"] is not None:
        out["lemma1_holds"] = bool(opt_a1 <= out["lemma1_rhs"] * (1 + 1e-12))
    if gamma is not None and out["lemma2_rhs"] is not None:
        out["lemma2_holds"] = bool(gamma <= out["lemma2_rhs"] * (1 + 1e-12))
    if gamma is not None and opt is not None and out["theorem1_ratio"] is not None:
        out["ratio"] = gamma / opt
        out["theorem1_holds"] = bool(gamma / opt <= out["theorem1_ratio"] * (1 + 1e-12))
    return out


# ----------------------------------------------------------------------------- guarantees as data
def _theorem1_ratio(instance: DdlwmpInstance, params: Any) -> float | None:
    """Theorem 1's ratio for A-SRPT with the instance's predictions and the run's ``tau``."""
    from .readings import TAU_DEFAULT

    return guarantees(instance, tau=float(params.get("tau", TAU_DEFAULT)))["theorem1_ratio"]


def _theorem1_perfect_ratio(instance: DdlwmpInstance, params: Any) -> float | None:
    """Theorem 1 with exact predictions (eps = 0): ``(2 + tau + rho G / (G - g_max)) rho``."""
    from .readings import TAU_DEFAULT

    g = guarantees(instance, tau=float(params.get("tau", TAU_DEFAULT)))
    if g["G"] <= g["g_max"]:
        return None
    return (2 + g["tau"] + g["rho"] * g["G"] / (g["G"] - g["g_max"])) * g["rho"]


def _theorem1_figures(instance: DdlwmpInstance, params: Any, *, perfect: bool = False) -> str:
    """The quantities of Theorem 1's ratio on ``instance`` (``perfect``: eps = 0), in words."""
    from .readings import TAU_DEFAULT

    tau = float(params.get("tau", TAU_DEFAULT))
    g = guarantees(instance, tau=tau)
    eps_bar = 0.0 if perfect else g["eps_bar"]
    met = g["G"] > g["g_max"] and eps_bar is not None
    return (f"tau = {tau:g}, rho = {g['rho']:.4g}, rho_bar = {g['rho_bar']:.4g}, eps_bar = "
            f"{eps_bar if eps_bar is None else format(eps_bar, '.4g')}, G = {g['G']}, g_max = {g['g_max']}"
            + ("" if met else " (not met here: no bound on this instance)"))


def _guarantees() -> dict[str, Any]:
    from optkit.testing.guarantees import Guarantee

    statement = ("Gamma_A / OPT_A <= (2 + tau + rho G/(G - g_max)) rho + 2 rho g_max rho_bar (1 + tau + (1 + rho) "
                 "G/(G - g_max)) eps_bar, for G > g_max (formulations/ddlwmp/bounds.py; no bound otherwise)")
    return {
        "a-srpt": Guarantee("a-srpt", "total_completion", _theorem1_ratio, "Luo et al., A-SRPT paper, Theorem 1",
                            statement + "; needs every job's prediction", figures=_theorem1_figures),
        "a-srpt-perfect": Guarantee("a-srpt-perfect", "total_completion", _theorem1_perfect_ratio,
                                    "Luo et al., A-SRPT paper, Theorem 1 with eps = 0", statement,
                                    figures=lambda instance, params: _theorem1_figures(instance, params, perfect=True)),
    }


GUARANTEES = _guarantees()
"""A-SRPT's proven competitive ratio (Theorem 1) per instance, for :func:`optkit.testing.assert_within`;
the baselines have none."""
