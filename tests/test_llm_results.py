"""The ``llm`` results page (issue 37 item 5): Sec. VI's quantities measured through ``optkit
reproduce`` (formulations/gpu_mapping/llm_claims.py, formulations/ddlwmp/llm_claims.py) and shown
without a paper value or a verdict (optkit.claims.NO_PAPER_VALUE)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from optkit import registry
from optkit.formulations.ddlwmp import llm_claims as sched
from optkit.formulations.ddlwmp.generate import generate
from optkit.formulations.ddlwmp.readings import READINGS
from optkit.formulations.ddlwmp.sec5 import PAPER_BASELINES
from optkit.formulations.gpu_mapping import evaluate
from optkit.formulations.gpu_mapping import llm_claims as mapping
from optkit.formulations.gpu_mapping.model import GpuMappingInstance
from optkit.reproduce import Measurements, reading_settings, results_text, write_pages
from optkit.reproduce_pages import plot_experiment


@pytest.mark.parametrize("kind", ["tp", "moe"])
def test_gap_case_is_a_seeded_feasible_job_of_the_size_asked(kind: str) -> None:
    """A 32-GPU case: 32 GPUs in the job and on the servers (each of at most 8 free GPUs), a
    tensor-parallel degree >= 2 dividing 8 on every stage of a ``tp`` job, e = gcd(32, 8) = 8
    expert groups per replica of a ``moe`` job; the same seed gives the same dict, another seed
    another job or another placement."""
    d = mapping.gap_case(kind, 32, 0)
    stages = d["job"]["stages"]
    gpus = sum(st["replicas"] * st.get("tensor_parallel", 1) * st.get("experts", 1) for st in stages)
    assert gpus == sum(d["servers"]) == 32 and max(d["servers"]) <= 8
    if kind == "tp":
        assert {st["tensor_parallel"] for st in stages} <= {2, 4, 8} and all("experts" not in st for st in stages)
        assert all(s % stages[0]["tensor_parallel"] == 0 for s in d["servers"])  # whole replicas per server
    else:
        assert [(st["experts"], st["replicas"]) for st in stages] == [(8, 4)]
        # expert groups are placed one GPU at a time: servers with an odd number of free GPUs occur
        assert any(n % 2 for s in range(3) for n in mapping.gap_case(kind, 32, s)["servers"])
    assert mapping.gap_case(kind, 32, 0) == d
    assert any(mapping.gap_case(kind, 32, s) != d for s in (1, 2))
    with pytest.raises(ValueError, match="kind must be one of"):
        mapping.gap_case("dense", 32, 0)


def test_gap_row_measures_heavy_edge_against_the_proven_optimum() -> None:
    """On a 32-GPU 3D-parallel case (seed 0) CP-SAT proves the optimum and Heavy-Edge misses it:
    the bound is CP-SAT's alpha, Heavy-Edge's alpha is ``evaluate``'s of Heavy-Edge's mapping
    (through ``solve``) and above it, and the gap is 100 x (HE / bound - 1)."""
    from optkit.solve import solve

    data = mapping.gap_case("tp", 32, 0)
    row = mapping.gap_row(data, 10.0, 0)
    assert row["cpsat_status"] == "optimal" and row["gpus"] == 32
    assert row["bound_s"] == pytest.approx(row["cpsat_alpha_s"], rel=1e-6)
    inst = GpuMappingInstance.from_dict(data)
    he = solve("gpu-mapping", inst, "heavy-edge", objective="alpha", seed=0)
    assert row["he_alpha_s"] == evaluate(inst, he.solution).objectives["alpha"] > row["bound_s"] * (1 + 1e-3)
    assert row["gap_pct"] == pytest.approx(100.0 * (row["he_alpha_s"] / row["bound_s"] - 1.0))
    assert row["he_time_s"] >= 0 and row["cpsat_time_s"] >= 0


def test_measure_llm_gap_returns_every_claim_at_its_sizes_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """At a scale of one size (8 GPUs): that size's eight quantities from the cases in
    ``_details`` (the gap, Heavy-Edge's time in ms, CP-SAT's in s, CP-SAT's proof), ``None`` for every other
    registered size; every claim of the experiment is a key."""
    monkeypatch.setitem(mapping.SIZES, "ci", (8,))
    out = mapping.measure_llm_gap(readings={}, seed=0, scale="ci")
    exp = mapping.EXPERIMENTS["llm-gpu-mapping-gap"]
    assert {c.id for c in exp.claims} <= set(out)
    rows = {r["kind"]: r for r in out["_details"]["cases"]}
    assert set(rows) == {"tp", "moe"}
    for kind, row in rows.items():
        assert out[f"llm-gpu-mapping-{kind}-8-gap"] == row["gap_pct"]
        assert out[f"llm-gpu-mapping-{kind}-8-he-time"] == pytest.approx(1e3 * row["he_time_s"])
        assert out[f"llm-gpu-mapping-{kind}-8-exact-time"] == row["cpsat_time_s"]
        assert out[f"llm-gpu-mapping-{kind}-8-proven"] == 1.0 and row["cpsat_status"] == "optimal"
    assert all(out[c.id] is None for c in exp.claims if "-8-" not in c.id)
    assert out["_diagnostics"]["cases"] == 2.0


def test_the_llm_workload_takes_the_share_readings_through_reproduce() -> None:
    """``tp_share``, ``moe_share`` and ``routing_skew`` are the experiment's readings, swept by
    ``--readings all`` (3 x 3 x 2 settings), and reach the generator: at their defaults the workload is the
    generator's Sec. V mix with no LLM job; ``tp_share`` 0.5 gives 3D-parallel jobs (stages with
    ``tensor_parallel``), ``moe_share`` 0.5 with skew 1 MoE jobs routed by Zipf."""
    f = registry.get("ddlwmp")
    exp = sched.EXPERIMENTS["llm-ddlwmp-shares"]
    assert set(exp.readings) == {"tp_share", "moe_share", "routing_skew"}
    assert len(reading_settings(f, exp, "all")) == 18
    assert {"tp_share": 0.5, "moe_share": 0.0, "routing_skew": 0.0} in reading_settings(f, exp, "each")
    small = {"ci": {"jobs": 40, "servers": 2}}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sched, "SCALES", small)
        plain = sched.llm_workload({}, scale="ci", seed=0)
        tp = sched.llm_workload({"tp_share": 0.5}, scale="ci", seed=0)
        moe = sched.llm_workload({"moe_share": 0.5, "routing_skew": 1.0}, scale="ci", seed=0)
    assert plain == generate(jobs=40, servers=2, seed=0, single_gpu_share=sched.SINGLE_GPU_SHARE)
    assert "tp_job_share" not in plain["meta"]
    stages = [st for m in plain["models"].values() for st in m["stages"]]
    assert not any("tensor_parallel" in st or "experts" in st for st in stages)
    assert tp["meta"]["tp_job_share"] > 0 and any(
        st.get("tensor_parallel", 1) > 1 for m in tp["models"].values() for st in m["stages"])
    assert moe["meta"]["moe_job_share"] > 0 and any(
        st.get("routing") == "zipf" and st["routing_skew"] == 1.0 for m in moe["models"].values() for st in m["stages"])


def test_measure_llm_shares_reads_its_values_off_the_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a 30-job workload with 3D-parallel jobs (seed 0: the baselines' TCTs differ): the best- and worst-baseline reductions are the
    min and max of (TCT_b - TCT_A) / TCT_b over the five baselines' ``evaluate`` TCTs, the job
    shares the workload's own."""
    monkeypatch.setattr(sched, "SCALES", {"ci": {"jobs": 30, "servers": 2}})
    out = sched.measure_llm_shares(readings={"tp_share": 0.5}, seed=0, scale="ci")
    tct = out["_details"]["total_completion"]
    red = [100.0 * (tct[b] - tct["a-srpt"]) / tct[b] for b in PAPER_BASELINES]
    assert out["llm-a-srpt-vs-best-baseline"] == pytest.approx(min(red))
    assert out["llm-a-srpt-vs-worst-baseline"] == pytest.approx(max(red))
    assert out["llm-a-srpt-vs-best-baseline"] < out["llm-a-srpt-vs-worst-baseline"]  # the baselines differ here
    meta = sched.llm_workload({"tp_share": 0.5}, scale="ci", seed=0)["meta"]
    assert out["llm-tp-job-share"] == meta["tp_job_share"] > 0 and out["llm-moe-job-share"] == 0.0
    assert out["_diagnostics"]["a-srpt delayed starts"] == out["_details"]["delayed_starts"]


def test_measure_llm_shares_at_the_reference_mix_reports_zero_shares_and_its_readings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """At the default readings (``tp_share`` = ``moe_share`` = 0, the paper's Sec. V mix: the
    generator then writes no LLM shares into the workload's ``meta``) both job shares are 0.0,
    and the details record the readings the measurement ran under: the three LLM readings, the
    load and tau, each at its default or as given. The runs are stand-ins (``compare`` is the
    Sec. V comparison, tested in tests/test_ddlwmp_claims.py): this checks what the measurement
    reads off the workload and the readings."""
    monkeypatch.setattr(sched, "SCALES", {"ci": {"jobs": 4, "servers": 1}})
    runs = {p: {"total_completion": 100.0 + i, "delayed_starts": 0, "inflation": 1.0, "split_share": 0.0}
            for i, p in enumerate(("a-srpt", *PAPER_BASELINES))}
    monkeypatch.setattr(sched, "compare", lambda instance, readings, seed: runs)
    out = sched.measure_llm_shares(readings={"routing_skew": 1.0}, seed=0, scale="ci")
    assert out["llm-tp-job-share"] == 0.0 and out["llm-moe-job-share"] == 0.0
    defaults = {x.name: x.default for x in READINGS}
    assert out["_details"]["readings"] == {"tp_share": 0.0, "moe_share": 0.0, "routing_skew": 1.0,
                                           "load": defaults["load"], "tau": defaults["tau"]}


def _rows(exp: Any, values: dict[str, float], seeds: tuple[int, ...] = (0, 1), tp_share: float = 0.0) -> list[dict[str, Any]]:
    setting = {"tp_share": tp_share, "moe_share": 0.0, "routing_skew": 0.0}
    return [{"instance_name": exp.id, "status": "feasible", "seed": s, "params": {"readings": setting},
             "metrics": {cid: v + s for cid, v in values.items()}, "wall_time_s": 1.0} for s in seeds]


def test_the_page_reports_values_without_a_paper_value_or_verdict(tmp_path: Any) -> None:
    """The ``llm`` page, its index row and the results text: our mean [min, max] beside "no
    value" / "-" for the paper, the verdict "not comparable: no paper value: ...", no tolerance,
    and the README count "reported without a paper value"; no plot of a paper line (nothing to draw
    it at)."""
    f = registry.get("ddlwmp")
    exp = sched.EXPERIMENTS["llm-ddlwmp-shares"]
    values = {"llm-a-srpt-vs-best-baseline": 12.0, "llm-a-srpt-vs-worst-baseline": 40.0, "llm-tp-job-share": 0.0,
              "llm-moe-job-share": 0.0}
    rows = _rows(exp, values) + _rows(exp, {k: v - 20 for k, v in values.items()}, tp_share=0.5)
    m = Measurements([(f, exp, [c.id for c in exp.claims])], rows, "paper", [0, 1])
    write_pages(m, tmp_path)
    page = (tmp_path / "llm.md").read_text()
    claim = exp.claim("llm-a-srpt-vs-best-baseline")
    assert f"Paper: **no value** (it states no number; ours: {claim.statistic}). " \
           f"**Verdict: not comparable: {claim.incomparable}.**" in page
    assert "| default * | 12.5% [12, 13] | 2 | not comparable: no paper value: Sec. VI" in page
    assert "tolerance ±" not in page
    index = (tmp_path / "index.md").read_text()
    assert "| [llm](llm.md) | `llm-a-srpt-vs-best-baseline` | Sec. VI: A-SRPT against the best baseline, with " \
           "LLM-era jobs | - | 12.5% | not comparable: no paper value" in index
    text = results_text(m)
    assert text.startswith("**LLM-era jobs (A-SRPT paper, Sec. VI)** ([page](benchmarks/results/llm.md), ")
    assert "4 claims registered; 4 reported without a paper value (the paper states none)." in text
    assert "| `llm-a-srpt-vs-best-baseline` | Sec. VI: A-SRPT against the best baseline, with LLM-era jobs | - | - | " \
           "12.5% [12, 13] | no paper value; over the 2 readings measured, means from -7.5% (tp_share=0.5) to 12.5% " \
           "(default) |" in text
    assert not math.isnan(claim.tolerance)
    assert (tmp_path / "llm_llm-ddlwmp-shares.png").exists()  # two readings: a panel per claim, no paper line
    gap = mapping.EXPERIMENTS["llm-gpu-mapping-gap"]
    one = {"default": {c.id: [(0, 1.0)] for c in gap.claims}}
    assert not plot_experiment(gap, gap.claims, one, "default", tmp_path / "gap.png")  # one point each: no plot
    assert not (tmp_path / "gap.png").exists()


def test_a_share_reading_an_experiment_does_not_take_is_refused_not_dropped() -> None:
    """``--readings tp_share=0.5`` on a Sec. V experiment (which does not pass the share to its
    workload) is bad input naming the reading, before anything is measured (it was dropped
    without a word and the Sec. V mix measured); on the LLM experiment it plans one setting per
    seed."""
    from optkit.errors import InputError
    from optkit.reproduce import plan, reproduce

    for run in (plan, reproduce):
        with pytest.raises(InputError) as err:
            run(["a-srpt-sec5-fig6"], readings={"tp_share": [0.5]}, scale="ci")
        assert err.value.field == "--readings tp_share" and "a-srpt-sec5-fig6" in err.value.message
    (line,) = plan(["llm-ddlwmp-shares"], readings={"tp_share": [0.5]}, scale="ci")
    assert (line.experiment, line.planned) == ("llm-ddlwmp-shares", 2)


def test_the_series_put_another_algorithm_beside_heavy_edge_and_a_srpt(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plug-in series (run for every plug-in by ``optkit reproduce``), here fed registered
    algorithms: Heavy-Edge over itself is 1 on every case, CP-SAT's optimum at most 1 (below it
    where Heavy-Edge misses the optimum); the
    baseline SPJF through ``solve`` has the TCT of its run in the claims' measurement, so A-SRPT's
    reduction against it is the claims' reduction against SPJF."""
    monkeypatch.setitem(mapping.SIZES, "ci", (32,))
    same = mapping.series_llm_gap("heavy-edge", readings={}, seed=0, scale="ci")
    assert {k: v for k, v in same.items() if not k.startswith("_")} == {"tp_32_over_heavy_edge": 1.0,
                                                                          "moe_32_over_heavy_edge": 1.0}
    exact = mapping.series_llm_gap("cpsat", readings={}, seed=0, scale="ci")
    assert exact["moe_32_over_heavy_edge"] <= 1.0 + 1e-9
    assert exact["tp_32_over_heavy_edge"] < 0.99  # the 32-GPU 3D-parallel case of seed 0: Heavy-Edge misses the optimum
    from optkit.formulations.ddlwmp.sec5 import instance_of, run_policy_readout

    monkeypatch.setattr(sched, "SCALES", {"ci": {"jobs": 30, "servers": 2}})
    got = sched.series_llm_shares("spjf", readings={"tp_share": 0.5}, seed=0, scale="ci")
    inst = instance_of(sched.llm_workload({"tp_share": 0.5}, scale="ci", seed=0))
    (case,) = got["_details"]["cases"]
    tb = run_policy_readout(inst, "spjf", {}, 0)["total_completion"]
    assert case["total_completion"] == pytest.approx(tb) and case["status"] == "feasible"
    ta = case["a_srpt_total_completion"]
    assert got["a_srpt_min_reduction_pct"] == got["a_srpt_max_reduction_pct"] == pytest.approx(100 * (tb - ta) / tb)


def test_a_case_the_exact_model_does_not_prove_counts_as_unproven(monkeypatch: pytest.MonkeyPatch) -> None:
    """CP-SAT cut short (10 ms) on the 32-GPU MoE case: ``proven`` is 0 (its incumbent is still a
    feasible mapping). Where the limit falls decides the bound: cut while building its model, the
    vertex model reports bounds.lower_bound (the slowest stage's compute), and the gap is the upper
    estimate 100 (alpha_HE / bound - 1); cut in CP-SAT's search with bound 0, no gap is reported."""
    monkeypatch.setitem(mapping.SIZES, "ci", (32,))
    monkeypatch.setitem(mapping.TIME_LIMIT, "ci", 0.01)
    out = mapping.measure_llm_gap(readings={}, seed=0, scale="ci")
    row = next(r for r in out["_details"]["cases"] if r["kind"] == "moe")
    assert row["cpsat_status"] == "time_limit" and row["cpsat_alpha_s"] >= row["he_alpha_s"] * (1 - 1e-9)
    assert out["llm-gpu-mapping-moe-32-proven"] == 0.0
    bound, gap = row["bound_s"], out["llm-gpu-mapping-moe-32-gap"]
    if not bound:
        assert gap is None
    else:
        assert 0 < bound <= row["he_alpha_s"] and gap == pytest.approx(100.0 * (row["he_alpha_s"] / bound - 1.0))
