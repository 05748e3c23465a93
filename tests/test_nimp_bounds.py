"""nimp lower bounds (resource relaxation) and the Theorems 4-5 check, on hand-worked cases.

Found by mutation testing (README, "Testing"): before these tests, the bounds were only checked
to lie below the optimum, so a weaker bound (fragmented machines counted as idle, ``u_min`` for
``u_lb``) or a wrong ratio passed.
"""

from __future__ import annotations

import pytest

from optkit.formulations.nimp.bounds import (RATIO, approximation_check, lower_bound, resource_relaxation,
                                             worst_case_ratio)
from optkit.formulations.nimp.model import NimpInstance, key_of
from optkit.solve import solve


def _instance(machines: list[tuple[int, int]], workers: int) -> NimpInstance:
    """``machines``: (GPUs, idle GPUs) each; a ring job with ample pair capacity."""
    return NimpInstance.from_dict({
        "problem": "nimp", "pair_capacity_bytes": 1e12,
        "machines": [{"gpus": g, "idle_gpus": i} for g, i in machines],
        "job": {"workers": workers, "collective": "ring", "param_bytes": 1e8},
    })


# X: one fragmented machine with 5 idle GPUs of 8, three idle 1-GPU machines, one busy machine;
# 8 workers. Fragments alone hold 5, so 3 more GPUs must come from idle machines: i_lb = 3
# (1 + 1 + 1), then the fragment covers the remaining 5: u_lb = 4; u_min = 4 (5 + 1 + 1 + 1).
# M = 5, so the lex key is 3 * 6 + 4 = 22. Counting the fragmented machine as idle would give
# i_lb = 1 (its 5 GPUs reach the 3 needed).
X = [(8, 5), (1, 1), (1, 1), (1, 1), (4, 0)]
# Y: one idle 6-GPU machine, three fragmented machines with 3 idle GPUs each; 9 workers. The
# fragments hold 9: i_lb = 0, u_lb = 3; but the fewest machines of any kind is u_min = 2 (6 + 3).
Y = [(6, 6), (4, 3), (4, 3), (4, 3)]


def test_resource_relaxation_hand_worked() -> None:
    assert resource_relaxation(_instance(X, 8)) == (3, 4, 4)
    assert resource_relaxation(_instance(Y, 9)) == (0, 3, 2)
    assert resource_relaxation(_instance(X, 9)) is None  # 8 idle GPUs in all, 9 workers


def test_lower_bound_is_the_key_of_i_lb_u_lb_and_tight_here() -> None:
    """The bound of X and Y equals the brute-force optimum (both are tight by construction);
    ``lex`` is the default objective; ``lex-cross`` adds a zero cross-traffic term."""
    x, y = _instance(X, 8), _instance(Y, 9)
    assert lower_bound(x, "lex") == lower_bound(x) == 22.0
    assert lower_bound(y, "lex") == 3.0
    assert lower_bound(y, "lex-cross") == key_of(y, "lex-cross", [0, 3, 0.0]) == 3.0 * (y.max_cross_bytes() + 1.0)
    for inst, best in ((x, [3, 4]), (y, [0, 3])):
        res = solve("nimp", inst, "brute-force", objective="lex")
        assert res.status.value == "optimal" and res.objective == best
        assert lower_bound(inst, "lex") == key_of(inst, "lex", best)


@pytest.mark.parametrize("heuristic,optimum,want", [
    # c_max = max(M, N) = max(5, 8) = 8; O = (8 - idle used, 8 - used).
    ((3, 4), (3, 4), {"remaining_heuristic": [5, 4], "remaining_optimum": [5, 4], "ratio_o1": 1.0, "ratio_o2": 1.0}),
    # (8-4)/(8-3) = 0.8 and (8-5)/(8-4) = 0.75: both >= 1 - 1/e = 0.632.
    ((4, 5), (3, 4), {"remaining_heuristic": [4, 3], "remaining_optimum": [5, 4], "ratio_o1": 0.8, "ratio_o2": 0.75}),
    # (8-6)/5 = 0.4 and (8-7)/4 = 0.25: both below 0.632.
    ((6, 7), (3, 4), {"remaining_heuristic": [2, 1], "remaining_optimum": [5, 4], "ratio_o1": 0.4, "ratio_o2": 0.25}),
    # O_opt,2 = 8 - 7 = 1 and O_heur,2 = 0: ratio 0 (not the 1.0 reserved for O_opt = 0).
    ((3, 8), (3, 7), {"remaining_heuristic": [5, 0], "remaining_optimum": [5, 1], "ratio_o1": 1.0, "ratio_o2": 0.0}),
    # O_opt = 0 on both criteria: the ratio is 1.0 by definition (nothing to lose).
    ((8, 8), (8, 8), {"remaining_heuristic": [0, 0], "remaining_optimum": [0, 0], "ratio_o1": 1.0, "ratio_o2": 1.0}),
])
def test_approximation_check_eq3_by_hand(heuristic: tuple[int, int], optimum: tuple[int, int], want: dict) -> None:
    """Eq. (3)'s remaining-machines form, worked by hand on X (M = 5, N = 8)."""
    got = approximation_check(_instance(X, 8), heuristic, optimum)
    assert got == {"c_max": 8, **want, "holds_o1": want["ratio_o1"] >= RATIO, "holds_o2": want["ratio_o2"] >= RATIO}


def test_titans_guarantee_as_data() -> None:
    """The guarantee table's entry (built when bounds is imported; built again here): Titan's lex
    placement must reach 1 - 1/e on every instance, measured as the worse of Theorems 4-5's
    ratios of Def. 1's H. On tiny(0) (2 workers), a placement on two idle machines against the
    optimum on one non-idle machine: H = (2 - 2, 2 - 2) against (2 - 0, 2 - 1), ratio 0."""
    from optkit.formulations.nimp import bounds
    from optkit.formulations.nimp.generate import tiny

    g = bounds._guarantees()["titan"]
    assert bounds.GUARANTEES["titan"] == g or bounds.GUARANTEES["titan"].statement == g.statement
    inst = NimpInstance.from_dict(tiny(0))
    assert (g.algorithm, g.objective, g.sense) == ("titan", "lex", "at_least")
    assert g.ratio(inst, {}) == RATIO == pytest.approx(1 - 1 / 2.718281828459045)
    assert g.measure(inst, (2, 2, 0.0), (0, 1, 0.0)) == 0.0
    assert g.measure(inst, (0, 1, 0.0), (0, 1, 0.0)) == 1.0
    assert g.measure(inst, (0, 2, 0.0), (0, 1, 0.0)) == 0.0 and g.measure(inst, (1, 1, 0.0), (0, 1, 0.0)) == 0.5


def test_worst_case_ratio_is_the_inverse_of_the_smaller_theorem_ratio() -> None:
    """On X (8 workers): an optimum using (1 idle, 2) machines has Def. 1 values (8 - 1, 8 - 2) =
    (7, 6); a heuristic using (3, 4) has (5, 4): ratios 5/7 and 4/6, the smaller 2/3, inverted
    1.5. A heuristic equal to the optimum: 1. One that found nothing: ratio 0, infinitely bad.
    An optimum whose values are 0 (every worker on its own machine): ratio 1 (``ratios``)."""
    inst = _instance(X, 8)
    assert worst_case_ratio(inst, (3, 4), (1, 2)) == pytest.approx(1.5, rel=1e-12)
    assert worst_case_ratio(inst, (1, 2), (1, 2)) == 1.0
    assert worst_case_ratio(inst, None, (1, 2)) == float("inf")
    assert worst_case_ratio(inst, None, (8, 8)) == 1.0
