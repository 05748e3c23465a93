"""ddlwmp's guarantees and lower bounds (formulations/ddlwmp/bounds.py) on an instance worked by
hand, every quantity of the module docstring compared with its own number rather than with the
formula rebuilt from the function's other outputs. Written for the mutation score (issue 36
item 5).

The instance: 2 servers x 2 GPUs (G = 4), B_inter 1e9 B/s, B_intra 1e11 B/s. Model ``d``: one
stage of 2 replicas, fwd + bwd 0.1 s, h = 1e8 B: on one server (x = k = 2) its AllReduce is
2(k-1)h/k / B_intra = 1e8/1e11 = 0.001 s, so alpha^min = 0.101 s (Heavy-Edge's estimate on the
fewest servers, the same); each replica alone (x = 1) 1e8/((1/2)·1e9) = 0.2 s, so alpha^max =
0.3 s. Model ``s``: one replica, fwd + bwd 0.05 s: alpha = 0.05 s everywhere. Job a (d, 2 GPUs)
released at 0, 10 iterations, predicted 12; job b (s, 1 GPU) at 1 s, 5 iterations, predicted 3.

rho = max(0.3/0.101, 0.05/0.05) = 0.3/0.101; rho_bar = 0.3/0.05 = 6; eps = 2 + 2 = 4, eps_bar 2.
A1 (sizes (g_i/G)·n_i·α̃_i): a 0.5·10·0.101 = 0.505 over [0, 0.505], b 0.25·5·0.05 = 0.0625
from 1: OPT_A1 = 0.505 + 1.0625 = 1.5675. Ã1 (predicted): 0.606 and 0.0375: 0.606 + 1.0375 =
1.6435. G/(G - g_max) = 2."""

from __future__ import annotations

import pytest

from optkit.errors import InputError
from optkit.formulations.ddlwmp import bounds
from optkit.formulations.ddlwmp.model import DdlwmpInstance
from optkit.formulations.ddlwmp.readings import TAU_DEFAULT

RHO = 0.3 / 0.101
RHO_BAR = 6.0
TAU = 0.5


def _instance(predicted_b: float | None = 3, release_b: float = 1.0) -> DdlwmpInstance:
    stage = {"in_bytes": 0, "out_bytes": 0, "param_bytes": 1e8}
    return DdlwmpInstance.from_dict({
        "problem": "ddlwmp",
        "cluster": {"servers": 2, "gpus_per_server": 2, "inter_bandwidth": 1e9, "intra_bandwidth": 1e11},
        "models": {"d": {"allreduce": "ring", "stages": [dict(stage, replicas=2, fwd_time=0.04, bwd_time=0.06)]},
                   "s": {"allreduce": "ring", "stages": [dict(stage, replicas=1, fwd_time=0.02, bwd_time=0.03)]}},
        "jobs": [{"id": "a", "release": 0, "model": "d", "iterations": 10, "predicted_iterations": 12},
                 {"id": "b", "release": release_b, "model": "s", "iterations": 5,
                  **({} if predicted_b is None else {"predicted_iterations": predicted_b})}]})


def _lemma2(opt: float) -> float:
    return (1 + TAU + RHO * 2) * 1.6435 + 2 * 2 * 0.3 * 4 / (4 - 2) + RHO * opt


THEOREM1 = (2 + TAU + RHO * 2) * RHO + 2 * RHO * 2 * RHO_BAR * (1 + TAU + (1 + RHO) * 2) * 2.0


def test_guarantees_hand_worked() -> None:
    g = bounds.guarantees(_instance(), gamma=3.0, opt=2.5, tau=TAU)
    assert (g["G"], g["g_max"], g["I"], g["tau"]) == (4, 2, 2, TAU)
    assert g["alpha_min_true"] == {"d": pytest.approx(0.101), "s": pytest.approx(0.05)}
    assert g["alpha_min_estimate"] == {"d": pytest.approx(0.101), "s": pytest.approx(0.05)}
    assert g["alpha_max"] == {"d": pytest.approx(0.3), "s": pytest.approx(0.05)}
    assert g["rho"] == pytest.approx(RHO) and g["rho_bar"] == pytest.approx(RHO_BAR)
    assert g["alpha_max_all"] == pytest.approx(0.3) and g["alpha_min_all"] == pytest.approx(0.05)
    assert g["eps"] == 4.0 and g["eps_bar"] == 2.0
    assert g["OPT_A1"] == pytest.approx(1.5675) and g["OPT_A1_tilde"] == pytest.approx(1.6435)
    # Lemma 3: OPT_A1 + I·(g_max·alpha^max/G)·eps = 1.5675 + 2·(2·0.3/4)·4
    assert g["lemma3_rhs"] == pytest.approx(1.5675 + 1.2) and g["lemma3_holds"] is True
    assert g["lemma1_rhs"] == pytest.approx(RHO * 2.5) and g["lemma1_holds"] is True
    assert g["lemma2_rhs"] == pytest.approx(_lemma2(2.5)) and g["lemma2_holds"] is True
    assert g["theorem1_ratio"] == pytest.approx(THEOREM1)
    assert g["ratio"] == pytest.approx(1.2) and g["theorem1_holds"] is True


def test_each_bound_holds_at_equality_and_fails_above() -> None:
    """gamma exactly at Lemma 2's right-hand side holds (the 1e-12 slack is a relative rounding
    allowance, not a factor); at 1.5 times it, it fails. The same for Theorem 1's ratio, and for
    Lemma 1 with OPT_A = OPT_A1 / rho (equality) and = OPT_A1 / (1.5 rho) (fails)."""
    inst = _instance()
    rhs = bounds.guarantees(inst, opt=2.5, tau=TAU)["lemma2_rhs"]
    assert bounds.guarantees(inst, gamma=rhs, opt=2.5, tau=TAU)["lemma2_holds"] is True
    assert bounds.guarantees(inst, gamma=1.5 * rhs, opt=2.5, tau=TAU)["lemma2_holds"] is False
    ratio = bounds.guarantees(inst, tau=TAU)["theorem1_ratio"]
    assert bounds.guarantees(inst, gamma=ratio * 2.0, opt=2.0, tau=TAU)["theorem1_holds"] is True
    assert bounds.guarantees(inst, gamma=ratio * 3.0, opt=2.0, tau=TAU)["theorem1_holds"] is False
    opt_a1 = bounds.guarantees(inst)["OPT_A1"]
    assert bounds.guarantees(inst, opt=opt_a1 / RHO)["lemma1_holds"] is True
    assert bounds.guarantees(inst, opt=opt_a1 / (1.5 * RHO))["lemma1_holds"] is False


def test_lemma3_holds_at_equality() -> None:
    """Exact predictions (eps = 0): OPT_Ã1 = OPT_A1 = Lemma 3's right-hand side, which holds."""
    inst = DdlwmpInstance.from_dict({**_instance().to_dict(), "jobs": [
        {"id": "a", "release": 0, "model": "d", "iterations": 10, "predicted_iterations": 10},
        {"id": "b", "release": 1, "model": "s", "iterations": 5, "predicted_iterations": 5}]})
    g = bounds.guarantees(inst)
    assert g["eps"] == 0.0 and g["OPT_A1_tilde"] == g["OPT_A1"] == g["lemma3_rhs"] and g["lemma3_holds"] is True


def test_without_a_prediction_nothing_needing_eps_is_given() -> None:
    g = bounds.guarantees(_instance(predicted_b=None), gamma=3.0, opt=2.5, tau=TAU)
    assert g["eps"] is None and g["eps_bar"] is None and g["OPT_A1_tilde"] is None
    assert g["lemma3_rhs"] is None and g["theorem1_ratio"] is None and g["lemma2_rhs"] is None
    assert "lemma3_holds" not in g and "lemma2_holds" not in g and "theorem1_holds" not in g
    assert g["lemma1_rhs"] == pytest.approx(RHO * 2.5) and g["OPT_A1"] == pytest.approx(1.5675)
    g = bounds.guarantees(_instance(), tau=TAU)
    assert g["lemma1_rhs"] is None and "lemma1_holds" not in g and "ratio" not in g


def test_guarantee_readers_take_the_runs_tau_or_the_default() -> None:
    inst = _instance()
    assert bounds._theorem1_ratio(inst, {"tau": TAU}) == pytest.approx(THEOREM1)
    assert bounds._theorem1_ratio(inst, {}) == pytest.approx(bounds.guarantees(inst, tau=TAU_DEFAULT)["theorem1_ratio"])
    assert bounds._theorem1_perfect_ratio(inst, {"tau": TAU}) == pytest.approx((2 + TAU + RHO * 2) * RHO)
    assert bounds._theorem1_perfect_ratio(inst, {}) == pytest.approx((2 + TAU_DEFAULT + RHO * 2) * RHO)
    assert bounds._theorem1_figures(inst, {"tau": TAU}) == (
        "tau = 0.5, rho = 2.97, rho_bar = 6, eps_bar = 2, G = 4, g_max = 2")
    assert bounds._theorem1_figures(inst, {}, perfect=True) == (
        "tau = 1000, rho = 2.97, rho_bar = 6, eps_bar = 0, G = 4, g_max = 2")
    assert bounds._theorem1_figures(_instance(predicted_b=None), {"tau": 1}) == (
        "tau = 1, rho = 2.97, rho_bar = 6, eps_bar = None, G = 4, g_max = 2 (not met here: no bound on this "
        "instance)")
    one = DdlwmpInstance.from_dict({**_instance().to_dict(), "cluster": {
        "servers": 1, "gpus_per_server": 2, "inter_bandwidth": 1e9, "intra_bandwidth": 1e11}})
    assert bounds._theorem1_perfect_ratio(one, {"tau": TAU}) is None
    assert bounds._theorem1_figures(one, {"tau": TAU}, perfect=True).endswith(
        "G = 2, g_max = 2 (not met here: no bound on this instance)")


@pytest.mark.parametrize("again", [False, True])
def test_registered_guarantees(again: bool) -> None:
    """The registry as imported and as built again (the import builds it before any test runs)."""
    registry = bounds._guarantees() if again else bounds.GUARANTEES
    inst = _instance()
    a, p = registry["a-srpt"], registry["a-srpt-perfect"]
    assert a.citation == "Luo et al., A-SRPT paper, Theorem 1"
    assert p.citation == "Luo et al., A-SRPT paper, Theorem 1 with eps = 0"
    assert p.statement.startswith("Gamma_A / OPT_A <= (2 + tau + rho G/(G - g_max)) rho + 2 rho g_max rho_bar")
    assert a.statement == p.statement + "; needs every job's prediction"
    assert (a.algorithm, a.objective, p.algorithm, p.objective) == ("a-srpt", "total_completion", "a-srpt-perfect",
                                                                    "total_completion")
    assert a.ratio(inst, {"tau": TAU}) == pytest.approx(THEOREM1)
    assert p.ratio(inst, {"tau": TAU}) == pytest.approx((2 + TAU + RHO * 2) * RHO)
    assert p.figures(inst, {"tau": TAU}).startswith("tau = 0.5, rho = 2.97, rho_bar = 6, eps_bar = 0,")
    assert a.figures(inst, {"tau": TAU}).startswith("tau = 0.5, rho = 2.97, rho_bar = 6, eps_bar = 2,")


def test_lower_bounds_hand_worked() -> None:
    """LB1 = sum (rs_i + n_i alpha_i^min) = (0 + 1.01) + (1 + 0.25) = 2.26; LB2 = OPT_A1 with the
    true alpha^min = 1.5675 (here equal to the estimate's); makespan: max(1.01, 1.25) and the
    work-conserving A1 schedule's end 1.0625; total flow subtracts sum r_i = 1. A release at 0.5 s
    rounds up to the slot at 1 s in LB1 and LB2. The quick bound's alpha^lo is the same here
    (one stage, no pipeline bytes; d's AllReduce min(2(k-1)h/k·g/(min(k-1, g)·B_inter) = 0.2,
    1e8/B_intra) = 0.001)."""
    inst = _instance()
    for quick in (False, True):
        lbs = bounds.lower_bounds(inst, quick=quick)
        assert lbs == {"LB1": pytest.approx(2.26), "LB2": pytest.approx(1.5675)}
        assert bounds.lower_bounds(inst, "makespan", quick=quick) == {"LB1": pytest.approx(1.25),
                                                                      "LB2": pytest.approx(1.0625)}
        assert bounds.lower_bounds(inst, "total_flow", quick=quick) == {"LB1": pytest.approx(1.26),
                                                                        "LB2": pytest.approx(0.5675)}
    assert bounds.lower_bound(inst) == pytest.approx(2.26) and bounds.quick_lower_bound(inst) == pytest.approx(2.26)
    assert bounds.lower_bound(inst, "makespan") == pytest.approx(1.25)
    half = _instance(release_b=0.5)
    assert bounds.lower_bounds(half) == {"LB1": pytest.approx(2.26), "LB2": pytest.approx(1.5675)}
    assert bounds.lower_bounds(half, "total_flow")["LB1"] == pytest.approx(2.26 - 0.5)
    with pytest.raises(InputError) as info:
        bounds.lower_bounds(inst, "tardiness")
    assert info.value.field == "objective" and str(info.value).endswith(
        "must be one of total_completion, total_flow, makespan, got 'tardiness'")


def _stage(**kw: object) -> dict:
    return {"replicas": 1, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0, "out_bytes": 0, "param_bytes": 0, **kw}


def test_quick_alpha_takes_the_cheaper_byte_cost() -> None:
    """g = 2, B_inter 1e9, B_intra 7e8: a byte to a neighbour stage costs at least min(g/B_inter,
    1/B_intra) = min(2e-9, 1.43e-9) = 1/7e8 s; the pipeline's second stage: 0.03 + 0.01 +
    2·1e6/7e8 s."""
    from optkit.formulations.gpu_mapping.model import Cluster, PipelineJob

    pipe = PipelineJob.from_dict({"allreduce": "ring", "stages": [
        _stage(out_bytes=1e6), _stage(in_bytes=1e6, fwd_time=0.03, bwd_time=0.01)]})
    assert bounds.alpha_min_lower(pipe, Cluster(2, 1e9, 7e8)) == pytest.approx(0.04 + 2e6 / 7e8)


def test_quick_alpha_of_a_tensor_parallel_job_by_hand() -> None:
    """Two stages of 2 replicas x 2 slices (u = 2 units per replica), tp_bytes 3e9, g = 2, B_inter
    1.25e9, B_intra 3e11. Stage 0: compute 0.03 + the slices' all-reduce 2·1·3e9/(2·3e11) = 0.01
    (gpu-mapping's stage_compute, 'added'); its 1e6 pipeline bytes, 2·1e6/u at min(1.6e-9,
    1/3e11) s a byte: 1e6/3e11; its AllReduce D = 2(k-1)(h/u)/k = 5e7 B at the cheaper of
    1/B_intra and 1/B_inter: 5e7/3e11. Stage 1 has no parameters: smaller. The bound: stage 0."""
    from optkit.formulations.gpu_mapping.model import Cluster, PipelineJob

    tp = PipelineJob.from_dict({"allreduce": "ring", "stages": [
        _stage(replicas=2, param_bytes=1e8, tensor_parallel=2, tp_bytes=3e9, out_bytes=1e6),
        _stage(replicas=2, in_bytes=1e6, tensor_parallel=2, tp_bytes=3e9)]})
    assert bounds.alpha_min_lower(tp, Cluster(2, 1.25e9, 3e11)) == pytest.approx(0.04 + 1e6 / 3e11 + 5e7 / 3e11)
    # a NIC faster than the servers' links (B_inter 1e12): a byte costs g/B_inter = 2e-12 s, the
    # AllReduce 5e7/1e12 s
    assert bounds.alpha_min_lower(tp, Cluster(2, 1e12, 3e11)) == pytest.approx(0.04 + 2e-12 * 1e6 + 5e7 / 1e12)
