"""ddlwmp's Sec. V claims module (formulations/ddlwmp/claims.py): the extra series of a plug-in
(``series_fig6``, ``series_tau``, ``series_fig7``, ``series_fig8`` and ``sec5.series_readout``), the testbed's
not-comparable claims, and the claim constructors ``_c`` / ``_range``. Written for the mutation
score (issue 36 item 5): these were reached by no selected test.

The workloads, A-SRPT's runs and the plug-in's ``solve`` are stand-ins (the real ones take tens of
seconds at ci scale and are tested in tests/test_ddlwmp_claims.py): each stand-in workload records
what it was asked for, so the tests read which cases each series builds and how ``series_readout`` turns
two totals into the paper's reduction (TCT_b - TCT_A-SRPT) / TCT_b."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import pytest

from optkit.formulations.ddlwmp import claims, sec5


@dataclass
class _Status:
    value: str


@dataclass
class _Result:
    objective: float
    solution: object
    status: _Status


def _stub(monkeypatch: pytest.MonkeyPatch, *, plug_in: dict[int, tuple[float, bool]] | None = None,
          a_srpt: float = 60.0, readouts: list[tuple[str, int, int]] | None = None) -> list[dict[str, Any]]:
    """Stand-ins: ``_workload`` returns a job set naming its arguments (``n`` jobs); the plug-in's
    TCT is ``plug_in[n]`` (value, has a solution) or 100 + n; A-SRPT's is ``a_srpt`` (each of its
    runs recorded in ``readouts``: policy, seed, jobs). Returns the list of ``solve`` calls
    (instance, algorithm, objective, seed)."""
    asked: list[dict[str, Any]] = []

    def workload(r: dict[str, Any], *, jobs: int, scale: str, seed: int, records: Any = None,
                 **kw: Any) -> dict[str, Any]:
        share = kw.get("single_gpu_share", 0.8)
        return {"n": jobs, "jobs": [{"release": 10.0 * share + i} for i in range(2)], "scale": scale, "seed": seed,
                "records": records, "workload": r["workload"], "cluster": {"inter_bandwidth": 1.25e9}, "meta": {}, **kw}

    def solve(problem: str, inst: dict[str, Any], algorithm: str, *, objective: str, seed: int) -> _Result:
        asked.append({"problem": problem, "inst": inst, "algorithm": algorithm, "objective": objective, "seed": seed})
        value, solved = (plug_in or {}).get(inst["n"], (100.0 + inst["n"], True))
        return _Result(value, object() if solved else None, _Status("optimal" if solved else "infeasible"))

    monkeypatch.setattr(claims, "_workload", workload)
    monkeypatch.setattr(claims, "instance_of", lambda data: data)
    monkeypatch.setattr(claims, "trace_records", lambda workload: [{}] * 10_000)
    def readout(inst: dict[str, Any], policy: str, r: dict[str, Any], seed: int) -> dict[str, Any]:
        if readouts is not None:
            readouts.append((policy, seed, inst["n"]))
        return {"total_completion": a_srpt}

    monkeypatch.setattr(claims, "run_policy_readout", readout)
    # the series' one readout lives in sec5 (series_readout), with its own names
    monkeypatch.setattr(sec5, "instance_of", lambda data: data)
    monkeypatch.setattr(sec5, "run_policy_readout", readout)
    # the module (the package optkit exports a function of the same name)
    monkeypatch.setattr(importlib.import_module("optkit.solve"), "solve", solve)
    return asked


def test_series_reduction_is_the_papers_measure_against_the_plug_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """A-SRPT's TCT 60 against a plug-in's 100 + n: reduction 100·(100 + n - 60)/(100 + n); a
    case without a solution or with a TCT <= 0 has no reduction and stays out of min and max."""
    readouts: list[tuple[str, int, int]] = []
    asked = _stub(monkeypatch, plug_in={1: (0.0, True), 2: (50.0, False), 3: (-5.0, True)}, readouts=readouts)
    cases = [(f"c{n}", {"n": n}) for n in (1, 2, 3, 20, 140)]
    out = sec5.series_readout("my-algo", cases, claims._r({}), 7)
    assert readouts == [("a-srpt", 7, n) for n in (1, 2, 3, 20, 140)]
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
    out = sec5.series_readout("x", [("only", {"n": 5})], claims._r({}), 0)
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
    assert {a["inst"]["scale"] for a in asked} == {"ci"} and {a["inst"]["seed"] for a in asked} == {1}
    assert {a["inst"]["single_gpu_draw"] for a in asked} == {"per-job"}
    assert [[j["release"] for j in a["inst"]["jobs"]] for a in asked] == [[8.0, 9.0]] * 5
    assert [a["inst"]["meta"] for a in asked] == [{}] + [
        {"fig7_load": "fixed-arrivals: release times of the 80% share's job set"}] * 4
    asked.clear()
    claims.series_fig7("algo", readings={"fig7_load": "rescaled", "single_gpu_draw": "per-group"}, seed=1, scale="ci")
    assert [[j["release"] for j in a["inst"]["jobs"]] for a in asked] == [[10 * s, 10 * s + 1] for s in claims.SHARES]
    assert {a["inst"]["single_gpu_draw"] for a in asked} == {"per-group"}
    assert [a["inst"]["meta"] for a in asked] == [{}] * 5


def test_series_fig8_runs_every_nic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fig. 8's job set (``fig8_jobs`` scaled to ci, share 0) replayed at 1, 5, 10, 25, 50 Gbps:
    inter_bandwidth = Gbps · 1.25e8 B/s, the job set itself unchanged."""
    asked = _stub(monkeypatch)
    out = claims.series_fig8("algo", readings={"fig8_jobs": 37_500}, seed=4, scale="ci")
    assert [d["case"] for d in out["_details"]["cases"]] == ["1 Gbps", "5 Gbps", "10 Gbps", "25 Gbps", "50 Gbps"]
    assert [a["inst"]["cluster"]["inter_bandwidth"] for a in asked] == [1.25e8, 6.25e8, 1.25e9, 3.125e9, 6.25e9]
    assert {a["inst"]["n"] for a in asked} == {900} and {a["inst"]["single_gpu_share"] for a in asked} == {0.0}
    assert {a["inst"]["workload"] for a in asked} == {"synthetic"} and {a["inst"]["seed"] for a in asked} == {4}
    assert {a["inst"]["scale"] for a in asked} == {"ci"}


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


# ----------------------------------------------------------------------------- the measure functions
BASE_TCT = {"spjf": 100.0, "spwf": 120.0, "wcs-duration": 110.0, "wcs-workload": 105.0, "wcs-subtime": 115.0}
"""The stand-in baselines' total completion times at the smallest case; A-SRPT's is 50 s."""


class _Sec5:
    """Stand-ins of the workloads, ``compare``, ``run_policy_readout``, the predictors and the
    traces, each recording its arguments. A workload of ``n`` jobs has n // 100 jobs (release
    9 - i, iterations 10 + i); a run's total completion time is 50 s for A-SRPT and, for a
    baseline, its :data:`BASE_TCT` plus ``bump(case)``, where a case is the workload's job count,
    single-GPU share and NIC; A-SRPT's runs under the predictors: 110 (rf), 130 (mean), 120
    (median), 100 (perfect)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, bump: Any = lambda case: 0.0) -> None:
        self.workloads: list[dict[str, Any]] = []
        self.compared: list[tuple[dict[str, Any], dict[str, Any], int]] = []
        self.readouts: list[tuple[str, dict[str, Any], int]] = []
        self.predicted: list[tuple[str, int]] = []
        self.traces: list[str] = []
        self.bump = bump
        monkeypatch.setattr(claims, "_workload", self.workload)
        monkeypatch.setattr(claims, "instance_of", lambda data: data)
        monkeypatch.setattr(claims, "trace_records", self.trace)
        monkeypatch.setattr(claims, "compare", self.compare)
        monkeypatch.setattr(claims, "run_policy_readout", self.readout)
        monkeypatch.setattr("optkit.predict.fill_predictions", self.fill)

    def trace(self, workload: str) -> list[dict[str, Any]]:
        self.traces.append(workload)
        return [{}] * 10_000

    def workload(self, r: dict[str, Any], *, jobs: int, scale: str, seed: int, records: Any = None,
                 **kw: Any) -> dict[str, Any]:
        asked = {"r": r, "jobs": jobs, "scale": scale, "seed": seed, "records": records, **kw}
        self.workloads.append(asked)
        return {"jobs": [{"release": float(9 - i), "iterations": 10 + i} for i in range(jobs // 100)],
                "cluster": {"inter_bandwidth": 1.25e9}, "meta": {"prediction": {"mae": 7.5}},
                "case": (jobs, kw.get("single_gpu_share"))}

    @staticmethod
    def run(tct: float, inflation: float, **extra: Any) -> dict[str, Any]:
        return {"total_completion": tct, "utilisation": 0.123456789, "inflation": inflation, "inflation_max": 2.0,
                "split_share": 0.25, "backlog_at_end": 0.0, "drain": 1.5, "delayed_starts": 1, "wall_s": 0.5,
                "makespan": 99.0, **extra}

    def compare(self, inst: dict[str, Any], r: dict[str, Any], seed: int) -> dict[str, dict[str, Any]]:
        self.compared.append((inst, r, seed))
        extra = self.bump((*inst["case"], inst["cluster"]["inter_bandwidth"]))
        runs = {"a-srpt": self.run(50.0, 1.1)}
        for i, (b, t) in enumerate(BASE_TCT.items()):
            runs[b] = self.run(t + (extra if b == "spjf" else extra / 2), 1.0 + i)
        return runs

    def fill(self, data: dict[str, Any], pred: str, seed: int) -> float:
        self.predicted.append((pred, seed))
        data["predictor"] = pred
        return {"rf": 3.0, "mean": 5.0, "median": 4.0}[pred]

    def readout(self, inst: dict[str, Any], policy: str, r: dict[str, Any], seed: int) -> dict[str, Any]:
        self.readouts.append((policy, r, seed))
        assert len(inst["jobs"]) > 0  # a workload's instance, not a stand-in of nothing
        if policy == "a-srpt-perfect":
            return self.run(100.0, 1.0, delayed_starts=2)
        return self.run({"rf": 110.0, "mean": 130.0, "median": 120.0, None: 140.0}[inst.get("predictor")], 1.3)


def _red(tct: float) -> float:
    return 100.0 * (tct - 50.0) / tct


def test_measure_fig6_reads_every_job_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """SPJF's TCT grows by n/50 with the job count n, the others' by n/100: SPJF is the worst
    baseline at 2,700 and 3,600 jobs (154 > 147, 172 > 156), not at 900 or 1,800 (118 < 129, 136
    < 138): share 0.5. The smallest reduction is against WCS-Workload at 900 jobs (105 + 9), the
    largest against SPJF at 3,600 (172)."""
    s = _Sec5(monkeypatch, bump=lambda case: case[0] / 50)
    out = claims.measure_fig6(readings={"load": 0.7}, seed=5, scale="ci")
    assert [w["jobs"] for w in s.workloads] == [900, 1800, 2700, 3600]
    assert all(w["seed"] == 5 and w["scale"] == "ci" and w["records"] is None for w in s.workloads)
    assert all(w["r"]["load"] == 0.7 and w["r"]["workload"] == "synthetic" for w in s.workloads)
    assert [(r["load"], seed) for _, r, seed in s.compared] == [(0.7, 5)] * 4
    assert out["a-srpt-fig6-min-reduction"] == pytest.approx(_red(105 + 9))
    assert out["a-srpt-fig6-max-reduction"] == pytest.approx(_red(172))
    assert out["a-srpt-fig6-spjf-worst"] == 0.5
    details = out["_details"]
    assert details["readings"] == claims._r({"load": 0.7}) and details["servers"] == 6
    cases = details["cases"]
    assert [c["jobs"] for c in cases] == [9, 18, 27, 36] and {c["prediction_mae"] for c in cases} == {7.5}
    assert cases[0]["reduction_pct"] == {b: pytest.approx(_red(t + (18 if b == "spjf" else 9)))
                                         for b, t in BASE_TCT.items()}
    assert cases[0]["runs"]["a-srpt"] == {"total_completion": 50.0, "utilisation": 0.123457, "inflation": 1.1,
                                          "inflation_max": 2.0, "split_share": 0.25, "backlog_at_end": 0.0,
                                          "drain": 1.5, "delayed_starts": 1, "wall_s": 0.5}
    assert out["_diagnostics"] == {"a-srpt inflation": 1.1, "a-srpt max job inflation": 2.0,
                                   "a-srpt split share": 0.25, "a-srpt delayed starts": 4.0, "a-srpt drain": 1.5,
                                   "baselines' max inflation": 5.0}
    assert out["_notes"] == ["synthetic workload at offered load 0.7; jobs [900, 1800, 2700, 3600]"]


def test_measure_fig6_on_a_trace_and_tau(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trace workload: its records loaded once and given to every workload; 5-20% of its 10,000
    records. ``measure_tau`` runs the largest synthetic count only, under its own ids."""
    s = _Sec5(monkeypatch)
    out = claims.measure_fig6(readings={"workload": "philly"}, seed=1, scale="ci")
    assert s.traces == ["philly"] and [w["jobs"] for w in s.workloads] == [500, 1000, 1500, 2000]
    assert all(w["records"] == [{}] * 10_000 for w in s.workloads)
    assert out["_notes"] == [f"philly workload at offered load {claims._r({})['load']:g}; jobs [500, 1000, 1500, 2000]"]
    s.workloads.clear()
    out = claims.measure_tau(readings={}, seed=2, scale="ci")
    assert [(w["jobs"], w["seed"]) for w in s.workloads] == [(3600, 2)]
    assert out["a-srpt-tau-min-reduction"] == pytest.approx(_red(100)) and out["a-srpt-tau-spjf-worst"] == 0.0
    assert out["a-srpt-tau-max-reduction"] == pytest.approx(_red(120))


def test_measure_fig7_reads_the_best_baseline_per_share(monkeypatch: pytest.MonkeyPatch) -> None:
    """SPJF's TCT grows by 200·(1 - share), the others' by half that: the best baseline (the
    smallest TCT) is WCS-Workload, 105 + 20 at 80% and 105 + 100 at 0%; the gain grows by the
    difference of the two reductions."""
    s = _Sec5(monkeypatch, bump=lambda case: 100.0 * (1.0 - case[1]) * 2)
    out = claims.measure_fig7(readings={"workload": "itp"}, seed=3, scale="ci")
    assert [w["single_gpu_share"] for w in s.workloads if w["single_gpu_share"] is not None][:1] == [0.8]
    assert all(w["r"]["workload"] == "synthetic" and w["jobs"] == 1800 for w in s.workloads)
    assert [seed for _, _, seed in s.compared] == [3] * 5
    assert out["a-srpt-fig7-reduction-80"] == pytest.approx(_red(105 + 20))
    assert out["a-srpt-fig7-reduction-0"] == pytest.approx(_red(105 + 100))
    assert out["a-srpt-fig7-gain-grows"] == pytest.approx(_red(205) - _red(125))
    cases = out["_details"]["cases"]
    assert [c["single_gpu_share"] for c in cases] == [0.8, 0.6, 0.4, 0.2, 0.0]
    assert cases[-1]["reduction_pct"]["spjf"] == pytest.approx(_red(300))
    assert set(cases[0]["runs"]) == {"a-srpt", *BASE_TCT} and out["_details"]["readings"]["workload"] == "synthetic"
    assert out["_diagnostics"]["a-srpt delayed starts"] == 5.0


def test_measure_fig8_reads_every_nic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fig. 7's 0% job set (``fig8_jobs`` 150,000 -> 3,600 at ci) at 1-50 Gbps; the baselines'
    TCTs grow by 1e9 / NIC bytes/s (SPJF's by twice that): at 50 Gbps WCS-Duration's is 110 + 0.16,
    at 1 Gbps SPWF's the largest, 120 + 8."""
    s = _Sec5(monkeypatch, bump=lambda case: 2e9 / case[2])
    out = claims.measure_fig8(readings={"fig8_jobs": 150_000}, seed=4, scale="ci")
    assert [(w["jobs"], w["single_gpu_share"], w["r"]["workload"]) for w in s.workloads][0] == (3600, 0.0,
                                                                                               "synthetic")
    assert [inst["cluster"]["inter_bandwidth"] for inst, _, _ in s.compared] == [1.25e8, 6.25e8, 1.25e9, 3.125e9,
                                                                                 6.25e9]
    assert [seed for _, _, seed in s.compared] == [4] * 5
    assert out["a-srpt-fig8-vs-wcs-duration-50g"] == pytest.approx(_red(110 + 1e9 / 6.25e9))
    assert out["a-srpt-fig8-max-reduction-1g"] == pytest.approx(_red(120 + 8))
    assert [c["gbps"] for c in out["_details"]["cases"]] == [1, 5, 10, 25, 50]
    assert out["_details"]["cases"][0]["reduction_pct"]["spwf"] == pytest.approx(_red(128))
    assert out["_diagnostics"]["a-srpt delayed starts"] == 5.0
    assert out["_notes"] == ["job set generated at 10 Gbps (iterations and arrivals fixed), so the offered load "
                             "exceeds the reading at lower bandwidths"]
    assert out["_details"]["readings"]["fig8_jobs"] == 150_000


def test_measure_fig9_reads_each_predictor(monkeypatch: pytest.MonkeyPatch) -> None:
    """rf 110, mean 130 against perfect 100: 10% and 100·(130/110 - 1); the MAEs as the
    predictors return them; the held-out jobs are the last 20% by release (18 jobs, releases 9 - i:
    the last 4 are jobs 0-3, iterations 10-13)."""
    s = _Sec5(monkeypatch)
    out = claims.measure_fig9(readings={"tau": 3.0}, seed=6, scale="ci")
    assert [(w["jobs"], w["seed"], w["records"]) for w in s.workloads] == [(1800, 6, None)]
    assert s.predicted == [("rf", 6), ("mean", 6), ("median", 6)]
    assert [(p, r["tau"], seed) for p, r, seed in s.readouts] == [("a-srpt", 3.0, 6)] * 3 + [("a-srpt-perfect", 3.0,
                                                                                              6)]
    assert out["a-srpt-fig9-rf-vs-perfect"] == pytest.approx(10.0)
    assert out["a-srpt-fig9-mean-vs-rf"] == pytest.approx(100.0 * (130 / 110 - 1))
    assert (out["a-srpt-fig9-mae-rf"], out["a-srpt-fig9-mae-median"], out["a-srpt-fig9-mae-mean"]) == (3.0, 4.0, 5.0)
    d = out["_details"]
    assert d["mae"] == {"rf": 3.0, "mean": 5.0, "median": 4.0} and d["held_out_mean_iterations"] == 11.5
    assert {k: v["total_completion"] for k, v in d["runs"].items()} == {"rf": 110.0, "mean": 130.0, "median": 120.0,
                                                                        "perfect": 100.0}
    assert d["readings"]["tau"] == 3.0
    assert out["_diagnostics"]["a-srpt inflation"] == 1.3 and out["_diagnostics"]["perfect inflation"] == 1.0
    s.workloads.clear()
    claims.measure_fig9(readings={"workload": "itp"}, seed=0, scale="ci")
    assert s.traces == ["itp"] and [w["jobs"] for w in s.workloads] == [1000]
    assert s.workloads[0]["records"] == [{}] * 10_000


def test_measure_prediction_on_a_trace_only(monkeypatch: pytest.MonkeyPatch) -> None:
    s = _Sec5(monkeypatch)
    out = claims.measure_prediction(readings={}, seed=0, scale="ci")
    assert out == {"a-srpt-prediction-mae": None, "a-srpt-prediction-vs-perfect": None,
                   "_notes": ["needs a trace workload (itp or philly)"]}
    assert s.workloads == [] and s.traces == []
    out = claims.measure_prediction(readings={"workload": "philly"}, seed=8, scale="ci")
    assert s.traces == ["philly"]
    assert [(w["jobs"], w["scale"], w["seed"], w["records"] == [{}] * 10_000) for w in s.workloads] == [
        (1000, "ci", 8, True)]
    assert [(p, seed) for p, _, seed in s.readouts] == [("a-srpt", 8), ("a-srpt-perfect", 8)]
    assert out["a-srpt-prediction-mae"] == 7.5
    assert out["a-srpt-prediction-vs-perfect"] == pytest.approx(40.0)
    assert out["_diagnostics"]["perfect delayed starts"] == 2.0 and out["_diagnostics"]["a-srpt delayed starts"] == 1.0
    d = out["_details"]
    assert d["jobs"] == 10 and d["prediction"] == {"mae": 7.5} and d["readings"]["workload"] == "philly"
    assert d["runs"]["a-srpt"]["total_completion"] == 140.0 and d["runs"]["a-srpt-perfect"]["total_completion"] == 100.0


def test_diagnostics_read_a_missing_drain_as_zero() -> None:
    """A run with no drain (no job released after 0: ``drain`` None) counts as 0, not 1."""
    run = {"inflation": 1.0, "inflation_max": 1.0, "split_share": 0.0, "delayed_starts": None, "drain": None}
    assert claims.diagnostics([run])["a-srpt drain"] == 0.0
    assert claims.diagnostics([run, dict(run, drain=0.5)])["a-srpt drain"] == 0.5
