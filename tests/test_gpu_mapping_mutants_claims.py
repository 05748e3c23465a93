"""Table II's measurement (formulations/gpu_mapping/claims.py) on two of its cases: the aggregation,
the per-case rows and the solver calls, each checked against what the module docstring says.

The full measurement (20 cases, test_gpu_mapping_claims.py) takes seconds per call; here
``table2_cases`` is cut to its first two cases and Heavy-Edge's timing to two repetitions, so each
test runs the real code path (generator, Heavy-Edge, CP-SAT, ``evaluate``) in well under a second.
Oracles: identities between the returned fields (a ratio is its two values divided), the
docstring's solver settings (CP-SAT with 1 worker at ci scale), and Heavy-Edge never below the
optimum.
"""

from __future__ import annotations

import functools
import statistics
from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping import claims, generate


@pytest.fixture
def two_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    """Table II's first two cases, Heavy-Edge timed twice per case."""
    monkeypatch.setattr(generate, "table2_cases", functools.partial(generate.table2_cases, cases=2))
    monkeypatch.setitem(claims._SCALES, "ci", {**claims._SCALES["ci"], "he_reps": 2})


@pytest.fixture
def solve_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every call of ``optkit.solve.solve`` (algorithm and keywords), answered by Heavy-Edge with
    refinement reported as proven optimal: a second, different mapping in milliseconds where
    CP-SAT takes tens of seconds on this machine. What is checked is how the measurement uses
    the exact solver's answer, not the answer."""
    import dataclasses
    import sys

    calls: list[dict[str, Any]] = []
    module = sys.modules["optkit.solve"]
    real = module.solve

    def spy(problem: str, data: Any, algorithm: str, **kw: Any) -> Any:
        calls.append({"problem": problem, "algorithm": algorithm, **kw})
        res = real(problem, data, "heavy-edge-refine", objective=kw["objective"], seed=kw["seed"])
        return dataclasses.replace(res, status=type(res.status)("optimal"))

    monkeypatch.setattr(module, "solve", spy)
    return calls


def test_two_case_measurement_fields_agree_with_its_rows(two_cases: None, solve_calls: list[dict[str, Any]]) -> None:
    out = claims.measure_vgg19(readings={"vgg19_layout": "4-4-4-2-1-1"}, seed=0, scale="ci")
    d = out["_details"]
    rows = d["cases"]
    assert [r["case"] for r in rows] == [0, 1]
    for r in rows:
        assert r["exact"]["cpsat"]["status"] == "optimal"
        assert r["exact"]["cpsat"]["alpha_s"] * 1e3 == pytest.approx(r["opt_pitt_ms"])
        assert r["opt_pct_ms"] == pytest.approx(r["exact"]["cpsat"]["wall_s"] * 1e3)
        assert r["ratio"] == pytest.approx(r["he_pitt_ms"] / r["opt_pitt_ms"])
        assert r["ratio"] >= 1.0 - 1e-9
        assert 0 <= r["he_bottleneck_stage"] < 6 and 0 <= r["opt_bottleneck_stage"] < 6
    assert d["cases_at_optimum"] == sum(r["ratio"] <= 1.0 + 1e-9 for r in rows)
    assert d["he_bottleneck_stages"] == sorted({r["he_bottleneck_stage"] for r in rows})
    assert d["exact_algorithms"] == ["cpsat"] and d["scale"] == "ci"
    he = statistics.fmean(r["he_pitt_ms"] for r in rows)
    opt = statistics.fmean(r["opt_pitt_ms"] for r in rows)
    assert d["gap_ratio_of_means_pct"] == pytest.approx(100 * (he / opt - 1))
    assert out["a-srpt-table2-vgg19-opt-pitt"] == pytest.approx(opt)
    assert out["a-srpt-table2-vgg19-opt-pct"] == pytest.approx(statistics.fmean(r["opt_pct_ms"] for r in rows))
    assert out["a-srpt-table2-vgg19-he-pct"] == pytest.approx(statistics.fmean(r["he_pct_ms"] for r in rows))
    amin = d["alpha_min"]
    assert amin["ratio"] == pytest.approx(amin["estimate_ms"] / amin["optimum_ms"])
    assert out["a-srpt-table2-vgg19-alpha-min"] == amin["ratio"]
    assert out["_notes"] == []
    # ci scale: CP-SAT alone, with one worker and the ci time limit, on every case and on alpha~min's
    assert len(solve_calls) == 3
    for call in solve_calls:
        assert (call["problem"], call["algorithm"], call["objective"]) == ("gpu-mapping", "cpsat", "alpha")
        assert call["params"] == {"workers": 1} and call["time_limit"] == 30.0 and call["seed"] == 0


def test_paper_scale_solves_each_case_with_cpsat_and_highs(two_cases: None, solve_calls: list[dict[str, Any]],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(claims._SCALES, "paper", {**claims._SCALES["paper"], "he_reps": 2})
    out = claims.measure_gpt175b(readings={}, seed=3, scale="paper")
    cases = [(c["algorithm"], c["params"], c["time_limit"], c["seed"]) for c in solve_calls]
    assert cases == [("cpsat", {}, 600.0, 3), ("highs", {}, 600.0, 3)] * 2 + [("cpsat", {}, 600.0, 3)]
    assert out["_details"]["exact_algorithms"] == ["cpsat", "highs"]
    for r in out["_details"]["cases"]:
        assert r["exact"]["highs"]["alpha_s"] == r["exact"]["cpsat"]["alpha_s"] and "disagreement" not in r["exact"]


def test_a_bad_scale_is_refused_naming_the_choices() -> None:
    with pytest.raises(InputError, match=r"scale.*must be one of ci, paper, got 'huge'"):
        claims.measure_vgg19(readings={}, seed=0, scale="huge")


def test_disagreeing_and_unsolved_cases_are_noted_and_left_out(two_cases: None, solve_calls: list[dict[str, Any]],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A case whose exact solvers disagree is noted; a case not solved to optimality is noted and
    left out of the PITT means, the gap and the exact PCT (module docstring, step 3)."""
    real = claims._exact
    seen: list[str] = []

    def exact(data: Any, instance: Any, *args: Any) -> Any:
        seen.append(data.get("name", "alpha-min"))
        if len(seen) == 2:  # the second case: no proof
            return None, None, None, {"cpsat": {"status": "feasible"}}
        value, wall, stage, info = real(data, instance, *args)
        if len(seen) == 1:
            info["disagreement"] = [value, 2 * value]
        return value, wall, stage, info

    monkeypatch.setattr(claims, "_exact", exact)
    out = claims.measure_vgg19(readings={"vgg19_layout": "4-4-4-2-1-1"}, seed=0, scale="ci")
    first, second = out["_details"]["cases"]
    assert out["_notes"] == [f"{first['name']}: exact solvers disagree {[first['opt_pitt_ms'] / 1e3, first['opt_pitt_ms'] / 500]}",
                             "1 of 2 cases not solved to optimality within 30 s: PITT means, gap and exact PCT are "
                             "over the 1 solved cases"]
    assert second["opt_pitt_ms"] is None and second["ratio"] is None and second["opt_pct_ms"] is None
    assert out["a-srpt-table2-vgg19-he-pitt"] == pytest.approx(first["he_pitt_ms"])
    assert out["a-srpt-table2-vgg19-gap"] == pytest.approx(100 * (first["ratio"] - 1))
    assert out["_details"]["gap_mean_of_ratios_pct"] == pytest.approx(100 * (first["ratio"] - 1))
    assert out["a-srpt-table2-vgg19-he-pct"] == pytest.approx((first["he_pct_ms"] + second["he_pct_ms"]) / 2)


def test_no_solved_case_leaves_every_pitt_statistic_empty(two_cases: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claims, "_exact", lambda *a: (None, None, None, {}))
    out = claims.measure_gpt175b(readings={}, seed=0, scale="ci")
    tag = "a-srpt-table2-gpt175b"
    assert [out[f"{tag}-{x}"] for x in ("he-pitt", "opt-pitt", "gap", "opt-pct", "alpha-min")] == [None] * 5
    assert out[f"{tag}-he-pct"] > 0
    d = out["_details"]
    assert d["gap_ratio_of_means_pct"] is None and d["gap_mean_of_ratios_pct"] is None
    assert d["cases_at_optimum"] == 0 and d["alpha_min"]["optimum_ms"] is None
    assert d["model"] == "gpt-175b" and d["config"] == "pipe8x4"


def test_series_of_heavy_edge_against_itself_is_one(two_cases: None) -> None:
    """The plug-in series (a solver through ``solve``) beside Heavy-Edge: Heavy-Edge itself, same
    seed and readings, has the same mean PITT (ratio 1)."""
    out = claims.series_vgg19("heavy-edge", readings={"vgg19_layout": "4-4-4-2-1-1"}, seed=0, scale="ci")
    rows = out["_details"]["cases"]
    assert len(rows) == 2 and all(r["status"] == "feasible" for r in rows)
    assert [r["pitt_ms"] for r in rows] == pytest.approx([r["he_pitt_ms"] for r in rows])
    assert out["pitt_ms"] == pytest.approx(statistics.fmean(r["pitt_ms"] for r in rows))
    assert out["heavy_edge_pitt_ms"] == pytest.approx(out["pitt_ms"])
    assert out["over_heavy_edge"] == pytest.approx(1.0)
    gpt = claims.series_gpt175b("heavy-edge", readings={}, seed=0, scale="ci")
    assert gpt["over_heavy_edge"] == pytest.approx(1.0) and gpt["_details"]["cases"][0]["name"].startswith("gpt")


def test_a_case_within_the_tolerance_counts_at_the_optimum(two_cases: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """``cases_at_optimum`` counts the cases whose Heavy-Edge PITT is at most 1 + 1e-9 times the
    optimum: the first case sits exactly on that tolerance, the second 1e-6 above it."""
    real = claims._bottleneck
    last: list[float] = []

    def bottleneck(instance: Any, solution: Any) -> tuple[float, int]:
        value, stage = real(instance, solution)
        last.append(value)
        return value, stage

    def exact(data: Any, instance: Any, *args: Any) -> Any:
        he = last[-1]
        factor = 1.0 + 1e-9 if len(last) == 1 else 1.0 + 1e-6
        opt = he / factor
        while he / opt > factor:  # the optimum whose ratio is the tolerance to the last bit
            opt = float(np.nextafter(opt, np.inf))
        while he / opt < factor:
            opt = float(np.nextafter(opt, 0.0))
        return opt, 0.5, 0, {}

    monkeypatch.setattr(claims, "_bottleneck", bottleneck)
    monkeypatch.setattr(claims, "_exact", exact)
    out = claims.measure_vgg19(readings={"vgg19_layout": "4-4-4-2-1-1"}, seed=0, scale="ci")
    first, second = out["_details"]["cases"]
    assert first["ratio"] == 1.0 + 1e-9 and second["ratio"] == pytest.approx(1.0 + 1e-6, rel=1e-12)
    assert out["_details"]["cases_at_optimum"] == 1
