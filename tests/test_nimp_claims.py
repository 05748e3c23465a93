"""nimp experiments (formulations/nimp/claims.py): registered, every claim measured, Fig. 1 exact,
seeded measurements repeatable, and the contention regime of the replay makes P bind."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from optkit.formulations.nimp import FORMULATION
from optkit.formulations.nimp.claims import EXPERIMENTS, measure_approximation, measure_fig1, measure_replay, window


def test_experiments_are_registered_and_name_declared_readings() -> None:
    assert set(FORMULATION.experiments) == {"titan-fig1", "titan-replay", "titan-approximation", "titan-testbed"}
    names = {r.name for r in FORMULATION.readings}
    for e in EXPERIMENTS.values():
        assert e.problem == "nimp" and e.paper == "titan"
        assert set(e.readings) <= names, e.id
        for r, values in e.sweep.items():
            for v in values:
                FORMULATION.reading(r).validate(v)


def test_fig1_claims_under_the_default_reading() -> None:
    """Fig. 1 by hand: Titan under the default reading (``repaired``) puts W1, W3 on machine 2 and
    W2, W4 on machine 3: (W1, W2) and (W3, W4) at K/4 cross twice, K, against HiveD's 3K/2: -33.3%,
    the paper's figure; Elasticflow 0; machines with a busy GPU afterwards: Elasticflow 4, Titan 3
    (machine 4 was already busy): -25%. As the pseudo-code is written, Titan puts W1-W3 on machine 2
    and W4 on machine 3: 3K/2, as HiveD, 0% where the paper says -33.3%."""
    out = measure_fig1(readings={}, seed=0, scale="ci")
    assert out["titan-fig1-titan-cross"] == pytest.approx(1.0)
    assert out["titan-fig1-hived-cross"] == pytest.approx(1.5)
    assert out["titan-fig1-elasticflow-cross"] == 0.0
    assert out["titan-fig1-titan-vs-hived-cross"] == pytest.approx(-100 / 3)
    assert out["titan-fig1-titan-vs-elasticflow-launched"] == pytest.approx(-25.0)
    assert {c.id for c in EXPERIMENTS["titan-fig1"].claims} <= set(out)
    literal = measure_fig1(readings={"titan_algorithm": "pseudo-code"}, seed=0, scale="ci")
    assert literal["titan-fig1-titan-cross"] == pytest.approx(1.5)
    assert literal["titan-fig1-titan-vs-hived-cross"] == pytest.approx(0.0)


def test_approximation_measure_is_seeded_and_complete() -> None:
    a = measure_approximation(readings={}, seed=3, scale="ci")
    b = measure_approximation(readings={}, seed=3, scale="ci")
    assert a["titan-theorem4-ratio"] == b["titan-theorem4-ratio"]
    assert a["_details"]["tried"] == 150 and a["_details"] == b["_details"]
    assert 0.0 <= a["titan-theorem5-ratio"] <= 1.0


def _write_trace(root: Path) -> None:
    """Inside seed 0's window (days 2-4): ten rounds of three 5-GPU jobs (long) followed by one
    8-GPU job. The 5-GPU jobs leave machines with 3 idle GPUs; an 8-GPU HD job over three of them
    must split its a^2 pairs (K/4) unless it sits on sets of 4, which 3 idle GPUs cannot hold. At
    0.005 s per phase a free 100 Gbps pair carries 62.5 MB, less than one a^2 pair (K/4) of vgg16
    (138 MB) or bert-base (110 MB), so P forbids those splits; at 0.05 s (625 MB) it allows them."""
    d = root / "microsoft-itp"
    d.mkdir(parents=True)
    rows, t0, k = ["job_id,submission_time,duration,num_gpu"], 2 * 86400 + 100, 0
    for i in range(10):
        for _ in range(3):
            rows.append(f"j{k},{t0 + 1000 * i},200000,5")
            k += 1
        rows.append(f"j{k},{t0 + 1000 * i + 500},3600,8")
        k += 1
    (d / "cluster01.csv").write_text("\n".join(rows))


def test_replay_measure_contention_regime_binds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write_trace(tmp_path)
    monkeypatch.setenv("OPTKIT_TRACE_ROOT", str(tmp_path))
    assert window(0, "ci") == (2 * 86400.0, 4 * 86400.0)
    slack = measure_replay(readings={"phase_budget_s": 0.05}, seed=0, scale="ci")
    tight = measure_replay(readings={"phase_budget_s": 0.005}, seed=0, scale="ci")
    ids = {c.id for c in EXPERIMENTS["titan-replay"].claims}
    assert ids <= set(slack) and ids <= set(tight)
    assert all(v is None or math.isfinite(v) for k, v in tight.items() if k in ids)
    b_slack = slack["_details"]["policies"]["titan"]["titan_bandwidth_bound"]
    b_tight = tight["_details"]["policies"]["titan"]["titan_bandwidth_bound"]
    assert b_tight >= 1 and b_tight > b_slack
    assert tight["_details"]["policies"]["titan"]["jobs"] == 40
    again = measure_replay(readings={"phase_budget_s": 0.005}, seed=0, scale="ci")
    assert again == tight


def test_replay_measure_without_trace_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPTKIT_TRACE_ROOT", str(tmp_path))
    out = measure_replay(readings={}, seed=0, scale="ci")
    assert all(out[c.id] is None for c in EXPERIMENTS["titan-replay"].claims)
    assert "absent" in out["_notes"][0]
