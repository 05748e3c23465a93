"""rar-ddls's instance sampler (formulations/rar_ddls/sample.py, behind ``strategies.instances``):
the instances of the smallest and the largest integer draws worked by hand, and the limits'
checks."""

from __future__ import annotations

import pytest

from optkit.errors import InputError
from optkit.formulations.rar_ddls.model import RarInstance
from optkit.formulations.rar_ddls.sample import sample
from optkit.validation import MAX_COUNT

NETWORK = {"inter_bandwidth": 1.25e9, "intra_bandwidth": 3.0e11, "compute_speed": 5.0e10, "xi2": 0.01,
           "degradation": 0.2}


def _smallest(lo: int, hi: int) -> int:
    return lo


def _largest(lo: int, hi: int) -> int:
    return hi


@pytest.mark.parametrize("limits", [{}, {"max_jobs": 1, "max_gpus": 1, "max_servers": 1, "max_gpus_per_server": 1,
                                         "max_iterations": 1}])
def test_smallest_draws_give_the_simplest_instance(limits: dict[str, int]) -> None:
    """Every draw at its lower end: one server of one GPU, one 1-GPU job of one iteration;
    tau0 = 0.05·2 = 0.1 s, M = 16, m = 1e6·1 B (a 1-GPU job exchanges nothing), xi1 = 1.0.
    Alone: tau = xi2 + Δf·M + Δb = 0.01 + 0.04 + 0.06 = 0.11 s, phi = 9, one slot: horizon 1."""
    d = sample(_smallest, **limits)
    assert d == {"problem": "rar-ddls", "servers": [1], "network": dict(NETWORK, xi1=1.0), "slot_seconds": 1.0,
                 "horizon": 1,
                 "jobs": [{"id": "j0", "gpus": 1, "iterations": 1, "grad_bytes": 1e6, "batch": 16,
                           "fwd_time_per_sample": 0.4 * 0.1 / 16, "bwd_time": 0.6 * 0.1}]}
    assert RarInstance.from_dict(d).horizon == 1


def test_largest_draws_hand_worked() -> None:
    """Every draw at its upper end under the default limits (3 jobs, 8 GPUs, 3 servers of <= 4
    GPUs, 30 iterations): servers 4 + 4 (the GPU budget ends the third), three 4-GPU jobs of 30
    iterations, tau0 = 0.25 s, M = 128, xi1 = 0.5, and m solved so that the lone ring exchange
    2(w-1)m/w / b^e is 0.45·tau0: m = 0.45·0.25·1.25e9·4/6 = 9.375e7 B.
    On one server: tau = 2·7.03125e7/3e11 + 7.03125e7/5e10 + 0.01 + 0.1 + 0.15 = 0.261875 s,
    phi = 3, 10 slots; split over both: 0.1125 + 0.00140625 + 0.02 + 0.25 = 0.38390625 s, phi
    = 2. The horizon is the three jobs one after another on one server each: 30 slots."""
    d = sample(_largest)
    assert d["servers"] == [4, 4] and d["network"] == dict(NETWORK, xi1=0.5) and d["horizon"] == 30
    assert len(d["jobs"]) == 3
    for k, job in enumerate(d["jobs"]):
        assert job == {"id": f"j{k}", "gpus": 4, "iterations": 30, "grad_bytes": pytest.approx(9.375e7, rel=1e-12),
                       "batch": 128, "fwd_time_per_sample": pytest.approx(0.00078125, rel=1e-12),
                       "bwd_time": pytest.approx(0.15, rel=1e-12)}
    from optkit.formulations.rar_ddls.model import iteration_time, iterations_per_slot

    inst = RarInstance.from_dict(d)
    one, two = (iteration_time(inst.jobs[0], inst.network, n, 1) for n in (1, 2))
    assert one == pytest.approx(0.261875, rel=1e-12) and iterations_per_slot(one, 1.0) == 3
    assert two == pytest.approx(0.38390625, rel=1e-12) and iterations_per_slot(two, 1.0) == 2


@pytest.mark.parametrize("name, value, words", [
    ("max_jobs", 0, "must be >= 1"), ("max_gpus", 0, "must be >= 1"), ("max_servers", MAX_COUNT + 1, "must be <="),
    ("max_gpus_per_server", 2.5, "must be an integer"), ("max_iterations", 0, "must be >= 1"),
])
def test_a_limit_out_of_range_is_named(name: str, value: object, words: str) -> None:
    with pytest.raises(InputError) as err:
        sample(_smallest, **{name: value})
    assert err.value.field == name and words in str(err.value)
