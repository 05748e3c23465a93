"""ddlwmp's Sec. V claims module (formulations/ddlwmp/claims.py): the extra series of a plug-in
(``series_fig6``, ``series_tau``, ``series_fig7``, ``series_fig8`` and ``_series``), the testbed's
not-comparable claims, and the claim constructors ``_c`` / ``_range``. Written for the mutation
score (issue 36 item 5): these were reached by no selected test.

The workloads, A-SRPT's runs and the plug-in's ``solve`` are stand-ins (the real ones take tens of
seconds at ci scale and are tested in tests/test_ddlwmp_claims.py): each stand-in workload records
what it was asked for, so the tests read which cases each series builds and how ``_series`` turns
two totals into the paper's reduction (TCT_b - TCT_A-SRPT) / TCT_b."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import pytest

from optkit.formulations.ddlwmp import claims


@dataclass
class _Status:
    value: str


@dataclass
class _Result:
    objective: float
    solution: object
    status: _Status


def _stub(monkeypatch: pytest.MonkeyPatch, *, plug_in: dict[int, tuple[float, bool]] | None = None,
          a_srpt: float = 60.0) -> list[dict[str, Any]]:
    """Stand-ins: ``_workload`` returns a job set naming its arguments (``n`` jobs); the plug-in's
    TCT is ``plug_in[n]`` (value, has a solution) or 100 + n; A-SRPT's is ``a_srpt``. Returns the
    list of ``solve`` calls (instance, algorithm, objective, seed)."""
    asked: list[dict[str, Any]] = []

    def workload(r: dict[str, Any], *, jobs: int, scale: str, seed: int, records: Any = None,
                 **kw: Any) -> dict[str, Any]:
        share = kw.get("single_gpu_share", 0.8)
        return {"n": jobs, "jobs": [{"release": 10.0 * share + i} for i in range(2)], "scale": scale, "seed": seed, "records": records, "workload": r["workload"],
                "cluster": {"inter_bandwidth": 1.25e9}, "meta": {}, **kw}

    def solve(problem: str, inst: dict[str, Any], algorithm: str, *, objective: str, seed: int) -> _Result:
        asked.append({"problem": problem, "inst": inst, "algorithm": algorithm, "objective": objective, "seed": seed})
        value, solved = (plug_in or {}).get(inst["n"], (100.0 + inst["n"], True))
        return _Result(value, object() if solved else None, _Status("optimal" if solved else "infeasible"))

    monkeypatch.setattr(claims, "_workload", workload)
    monkeypatch.setattr(claims, "instance_of", lambda data: data)
    monkeypatch.setattr(claims, "trace_records", lambda workload: [{}] * 10_000)
    monkeypatch.setattr(claims, "run_policy_readout",
                        lambda inst, policy, r, seed: {"total_completion": a_srpt, "policy": policy})
    # the module (the package optkit exports a function of the same name)
    monkeypatch.setattr(importlib.import_module("optkit.solve"), "solve", solve)
    return asked


def test_series_reduction_is_the_papers_measure_against_the_plug_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """A-SRPT's TCT 60 against a plug-in's 100 + n: reduction 100·(100 + n - 60)/(100 + n); a
    case without a solution or with a TCT <= 0 has no reduction and stays out of min and max."""
    asked = _stub(monkeypatch, plug_in={1: (0.0, True), 2: (50.0, False), 3: (-5.0, True)})
    cases = [(f"c{n}", {"n": n}) for n in (1, 2, 3, 20, 140)]
    out = claims._series("my-algo", cases, claims._r({}), 7)
    assert [a["algorithm"] for a in asked] == ["my-algo"] * 5
    assert {a["problem"] for a in asked} == {"ddlwmp"} and {a["objective"] for a in asked} == {"total_completion"}
    assert {a["seed"] for a in asked} == {7}
    red20, red140 = 100.0 * (120 - 60) / 120, 100.0 * (240 - 60) / 240
    assert out["a_srpt_min_reduction_pct"] == pytest.approx(red20)
    assert out["a_srpt_max_reduction_pct"] == pytest.approx(red140)
    details = out["_details"]["cases"]
    assert [d["case"] for d in details] == ["c1", "c2", "c3", "c20", "c140"]
    assert [d["status"] for d in details] == ["optimal", "infeasible", "optimal", "optimal", "optimal"]
    assert [d["total_completion"] for d in details] == [0.0, None, -5.0, 120.0, 240.0]
    assert [d["a_srpt_total_completion"] for d in details] == [60.0] * 5
    assert [d["a_srpt_reduction_pct"] for d in details] == [None, None, None, pytest.approx(red20),
                                                            pytest.approx(red140)]


def test_series_without_any_reduction_reports_none(monkeypatch: pytest.MonkeyPatch) -> None:
    _stub(monkeypatch, plug_in={5: (10.0, False)})
    out = claims._series("x", [("only", {"n": 5})], claims._r({}), 0)
    assert out["a_srpt_min_reduction_pct"] is None and out["a_srpt_max_reduction_pct"] is None
    assert out["_details"]["cases"][0]["total_completion"] is None


def test_series_fig6_runs_every_job_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """Synthetic at ci scale: Fig. 6's four counts scaled to 6 of 250 servers (900-3,600 jobs); a
    trace workload (10,000 records here) 5-20% of it, capped by those: 500-2,000."""
    asked = _stub(monkeypatch)
    out = claims.series_fig6("algo", readings={}, seed=3, scale="ci")
    assert [d["case"] for d in out["_details"]["cases"]] == ["900 jobs", "1800 jobs", "2700 jobs", "3600 jobs"]
    assert [a["inst"]["n"] for a in asked] == [900, 1800, 2700, 3600]
    assert {a["inst"]["records"] for a in asked} == {None} and {a["inst"]["seed"] for a in asked} == {3}
    assert {a["inst"]["scale"] for a in asked} == {"ci"}
    assert out["a_srpt_max_reduction_pct"] == pytest.approx(100.0 * (3700 - 60) / 3700)
    assert out["a_srpt_min_reduction_pct"] == pytest.approx(100.0 * (1000 - 60) / 1000)
    asked.clear()
    out = claims.series_fig6("algo", readings={"workload": "itp"}, seed=0, scale="ci")
    assert [a["inst"]["n"] for a in asked] == [500, 1000, 1500, 2000]
    assert all(a["inst"]["records"] == [{}] * 10_000 and a["inst"]["workload"] == "itp" for a in asked)


def test_series_tau_runs_the_largest_job_count(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _stub(monkeypatch)
    out = claims.series_tau("algo", readings={}, seed=2, scale="ci")
    assert [d["case"] for d in out["_details"]["cases"]] == ["3600 jobs"]
    assert [(a["inst"]["n"], a["inst"]["records"], a["inst"]["seed"]) for a in asked] == [(3600, None, 2)]
    asked.clear()
    claims.series_tau("algo", readings={"workload": "philly"}, seed=2, scale="paper")
    assert [(a["inst"]["n"], a["inst"]["scale"], a["inst"]["workload"]) for a in asked] == [(150_000, "paper",
                                                                                               "philly")]
    assert asked[0]["inst"]["records"] == [{}] * 10_000


def test_series_fig7_runs_every_single_gpu_share_synthetic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fig. 7's 1,800 ci jobs (75,000 of 250 servers on 6) at shares 0.8 -> 0, synthetic even
    when the readings name a trace; under the default fixed arrivals a share below 80% takes the
    80% job set's releases (the stand-in's releases are 10·share + i) and says so in its meta;
    ``rescaled`` keeps each share's own."""
    asked = _stub(monkeypatch)
    out = claims.series_fig7("algo", readings={"workload": "itp"}, seed=1, scale="ci")
    assert [d["case"] for d in out["_details"]["cases"]] == [f"single-GPU share {s:g}" for s in (0.8, 0.6, 0.4,
                                                                                                 0.2, 0.0)]
    assert [a["inst"]["single_gpu_share"] for a in asked] == [0.8, 0.6, 0.4, 0.2, 0.0]
    assert {a["inst"]["n"] for a in asked} == {1800} and {a["inst"]["workload"] for a in asked} == {"synthetic"}
    assert {a["inst"]["single_gpu_draw"] for a in asked} == {"per-job"}
    assert [[j["release"] for j in a["inst"]["jobs"]] for a in asked] == [[8.0, 9.0]] * 5
    assert [a["inst"]["meta"] for a in asked] == [{}] + [
        {"fig7_load": "fixed-arrivals: release times of the 80% share's job set"}] * 4
    asked.clear()
    claims.series_fig7("algo", readings={"fig7_load": "rescaled", "single_gpu_draw": "per-group"}, seed=1, scale="ci")
    assert [[j["release"] for j in a["inst"]["jobs"]] for a in asked] == [[10 * s, 10 * s + 1] for s in claims.SHARES]
    assert {a["inst"]["single_gpu_draw"] for a in asked} == {"per-group"} and [a["inst"]["meta"] for a in asked] == [{}] * 5


def test_series_fig8_runs_every_nic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fig. 8's job set (``fig8_jobs`` scaled to ci, share 0) replayed at 1, 5, 10, 25, 50 Gbps:
    inter_bandwidth = Gbps · 1.25e8 B/s, the job set itself unchanged."""
    asked = _stub(monkeypatch)
    out = claims.series_fig8("algo", readings={"fig8_jobs": 37_500}, seed=4, scale="ci")
    assert [d["case"] for d in out["_details"]["cases"]] == ["1 Gbps", "5 Gbps", "10 Gbps", "25 Gbps", "50 Gbps"]
    assert [a["inst"]["cluster"]["inter_bandwidth"] for a in asked] == [1.25e8, 6.25e8, 1.25e9, 3.125e9, 6.25e9]
    assert {a["inst"]["n"] for a in asked} == {900} and {a["inst"]["single_gpu_share"] for a in asked} == {0.0}
    assert {a["inst"]["workload"] for a in asked} == {"synthetic"} and {a["inst"]["seed"] for a in asked} == {4}


def test_testbed_claims_measure_nothing() -> None:
    out = claims.measure_not_comparable(readings={}, seed=0, scale="ci")
    ids = [c.id for c in claims.EXPERIMENTS["a-srpt-testbed"].claims]
    assert len(ids) == 9 and list(out) == ids and set(out.values()) == {None}


def test_a_sec5_claim_has_a_verdict_at_paper_scale_only() -> None:
    """``_c``'s defaults: an ``approx`` claim in percent, no note, comparable at paper scale only;
    keywords reach the Claim."""
    c = claims._c("x-id", "Sec. V", 12.0, "a statistic")
    assert (c.id, c.where, c.paper_value, c.statistic) == ("x-id", "Sec. V", 12.0, "a statistic")
    assert (c.unit, c.comparison, c.note, c.scales) == ("%", "approx", "", ("paper",))
    d = claims._c("y-id", "w", 1.0, "s", "at_least", unit="ratio", note="n", precision=0.5)
    assert (d.unit, d.comparison, d.note, d.scales, d.precision) == ("ratio", "at_least", "n", ("paper",), 0.5)


def test_a_sec5_range_is_two_approx_claims_at_paper_scale() -> None:
    low, high = claims._range("lo-id", "hi-id", "Fig. 6", 31.0, 91.0, "min stat", "max stat")
    assert (low.id, low.paper_value, low.statistic, high.id, high.paper_value, high.statistic) == (
        "lo-id", 31.0, "min stat", "hi-id", 91.0, "max stat")
    for c in (low, high):
        assert (c.unit, c.comparison, c.scales, c.precision) == ("%", "approx", ("paper",), 0.5)
    assert low.where == "Fig. 6 (low end of the range '31% to 91%')"
