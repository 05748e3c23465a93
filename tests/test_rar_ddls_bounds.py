"""rar-ddls lower bounds (below every proven optimum, tight where the proof says so) and
Theorem 5's quantities (hand-computed on a worked example, checked against optimal schedules)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optkit.formulations.rar_ddls import FORMULATION
from optkit.formulations.rar_ddls.bounds import (GUARANTEES, feasible_server_counts, lower_bound, lower_bounds, rho_min,
                                                 theorem5)
from optkit.formulations.rar_ddls.model import RarInstance, evaluate, solo_slots
from optkit.errors import InputError
from tests.rar_ddls_cases import _job, cpsat_result, exact_cases, pair_case, share_cpsat_results


@pytest.fixture(scope="module", autouse=True)
def _shared_cpsat_results(tmp_path_factory: pytest.TempPathFactory) -> None:
    """CP-SAT's optima of the shared cases, solved once per run (:func:`tests.rar_ddls_cases.share_cpsat_results`)."""
    share_cpsat_results(tmp_path_factory)


EXACT = exact_cases()


@pytest.mark.parametrize("name,data", EXACT, ids=[n for n, _ in EXACT])
def test_every_lower_bound_below_the_optimum(name: str, data: dict) -> None:
    inst = RarInstance.from_dict(data)
    res = cpsat_result(name, data)
    lbs = lower_bounds(inst, "makespan")
    assert set(lbs) == {"LB_job", "LB_area", "LB_conflict"}
    for key, value in lbs.items():
        assert value <= res.objective + 1e-9, (key, value, res.objective)
    assert lower_bound(inst, "makespan") == max(lbs.values()) == lower_bound(inst)  # makespan by default
    assert FORMULATION.lower_bound(inst, "makespan") == lower_bound(inst, "makespan")
    # total completion: any feasible schedule (here the makespan optimum) is above the bound
    total = evaluate(inst, res.solution).objectives["total_completion"]
    assert lower_bound(inst, "total_completion") <= total + 1e-9


def test_bounds_hand_computed_and_tight() -> None:
    """Three 4-GPU jobs on 3 + 3 GPUs: every pair conflicts (8 > 6), so they run in turn and
    LB_conflict = the sum of their solo times is the optimum; LB_area = ceil(4·sum/6)."""
    net = {"inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11, "compute_speed": 5e10, "xi1": 1.0, "xi2": 0.005,
           "degradation": 0.2}
    data = {"problem": "rar-ddls", "servers": [3, 3], "network": net, "horizon": 40,
            "jobs": [_job("a", 4, 30, 0.15, 0.5, 16), _job("b", 4, 20, 0.15, 0.5, 16),
                     _job("c", 4, 12, 0.15, 0.5, 16)]}
    inst = RarInstance.from_dict(data)
    solo = [solo_slots(inst, j, 2) for j in inst.jobs]
    assert solo == [8, 5, 3]  # 4 iterations per slot alone on 2 servers
    lbs = lower_bounds(inst)
    assert lbs == {"LB_job": 8.0, "LB_area": float(math.ceil(4 * 16 / 6)), "LB_conflict": 16.0}
    assert cpsat_result("hand-conflict", data).objective == 16.0
    assert lower_bounds(inst, "total_completion") == {"LB_sum": 16.0}


def test_lower_bound_scales_with_slot_seconds() -> None:
    data = dict(pair_case(), slot_seconds=2.0)
    inst = RarInstance.from_dict(data)  # 2 s slots: 8 iterations per slot alone, 4 slots
    assert rho_min(inst, inst.jobs[0]) == 4
    assert lower_bounds(inst)["LB_job"] == 8.0


def test_lower_bound_bad_objective() -> None:
    inst = RarInstance.from_dict(pair_case())
    with pytest.raises(InputError) as err:
        lower_bound(inst, "energy")
    assert err.value.field == "objective"


def test_theorem5_worked_example() -> None:
    """pair_case(0.2): G = 4, 4 on 3 x 3 GPUs. n in {2, 3}; p_max = min(3, 2) = 2; phi(n, 1) = 4,
    phi(n, 2) = 3 (rate_table) -> rho-hat = ceil(30/4) = 8, rho^worst = ceil(30/3) = 10,
    l = 8/10, phi = 10/8, n_g = 4, ratio = 4 · 1.25 · 1 / 0.8 = 6.25."""
    inst = RarInstance.from_dict(pair_case(0.2))
    assert list(feasible_server_counts(inst, inst.jobs[0])) == [2, 3]
    t = theorem5(inst)
    assert t["p_max"] == 2 and t["n_g"] == 4 and t["u"] == 1.0
    assert t["l"] == pytest.approx(0.8) and t["phi"] == pytest.approx(1.25)
    assert t["ratio"] == pytest.approx(6.25)
    assert theorem5(inst, u=2.0)["ratio"] == pytest.approx(12.5)
    # the guarantee optkit.testing checks SJF-BCO against: the same ratio (u = 1) and its figures
    g = GUARANTEES["sjf-bco"]
    assert g.ratio(inst, {}) == pytest.approx(6.25)
    assert g.figures(inst, {}) == "n_g = 4, phi = 1.25, u = 1, l = 0.8"


def test_theorem5_infinite_when_contention_stalls_a_job() -> None:
    """degradation 20: at p = 2, f = 22 and tau > 1 s, so phi = 0 (eq. 9): no finite rho^worst."""
    inst = RarInstance.from_dict(pair_case(20.0))
    t = theorem5(inst)
    why = ("job a makes no progress on 2 servers at contention p = 2 (eq. 9 gives phi = 0), so its worst-case "
           "execution time is unbounded")
    assert t == {"n_g": 4, "phi": math.inf, "u": 1.0, "l": 0.0, "ratio": math.inf, "p_max": 2, "proven": True,
                 "reason": why}
    assert GUARANTEES["sjf-bco"].figures(inst, {}) == f"n_g = 4, phi = inf, u = 1, l = 0 ({why})"


@pytest.mark.parametrize("u", [0.5, math.inf, "1"])
def test_theorem5_rejects_bad_u(u) -> None:
    with pytest.raises(InputError) as err:
        theorem5(RarInstance.from_dict(pair_case()), u=u)
    assert err.value.field == "u"


@pytest.mark.parametrize("name,data", EXACT[::3], ids=[n for n, _ in EXACT[::3]])
def test_theorem5_definitions_hold_on_optimal_schedules(name: str, data: dict) -> None:
    """On real schedules: l·rho_j <= rho-hat_j(n_j) <= u·rho_j and rho_j <= phi·rho_j^min, where
    rho_j = completion - start (active slots) and n_j the servers the job uses."""
    inst = RarInstance.from_dict(data)
    t = theorem5(inst)
    assert t["ratio"] >= 1.0 and 0 < t["l"] <= 1.0 and t["phi"] >= 1.0
    assert t["n_g"] == max(j.gpus for j in inst.jobs)
    for job, entry in zip(inst.jobs, cpsat_result(name, data).solution["jobs"]):
        rho = entry["completion"] - entry["start"]
        n = int(np.count_nonzero(entry["gpus_per_server"]))
        hat = solo_slots(inst, job, n)
        assert t["l"] * rho <= hat + 1e-9 and hat <= t["u"] * rho
        assert rho <= t["phi"] * solo_slots(inst, job, min(feasible_server_counts(inst, job))) + 1e-9
