"""nimp online replay (formulations/nimp/replay.py): a hand-checked tiny replay, determinism,
input validation, the capacity derivation, the ``optkit simulate nimp`` CLI and an ITP smoke test."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from optkit.formulations.nimp.replay import (ClusterState, FatTree, HivedPolicy, POLICIES, ReplayConfig, generate_workload,
                                      jobs_from_trace, replay, summarize, workload_from_dict)
from optkit.cli import main
from optkit.errors import InputError
from optkit.traces import itp_files
from tests.needs import needs_trace

K = 1e9
TINY = {
    "problem": "nimp", "kind": "replay", "name": "hand-checked",
    # B = 8 Gbps = 1e9 B/s per NIC
    "cluster": {"racks": 1, "machines_per_rack": 2, "gpus_per_machine": 4, "link_gbps": 8.0},
    "iteration_s": 5.0, "phase_budget_s": 1.0,
    "jobs": [
        {"id": "A", "submit": 0, "duration": 10, "workers": 2, "param_bytes": K},
        {"id": "B", "submit": 0, "duration": 10, "workers": 4, "param_bytes": K},
        {"id": "C", "submit": 5, "duration": 5, "workers": 4, "param_bytes": K},
    ],
}


def test_hand_checked_hived_replay():
    """HiveD: A on machine 0 (best fit among idle machines, tie by index); B has no fragment that
    holds 4, takes machine 0's 2 idle GPUs, then 2 on machine 1: [0, 0, 1, 1]. HD(4): the K/2
    phases (pairs (0,2), (1,3)) are split, the K/4 ones are not: 2 phases x 2 pairs x K/2 = 2K
    cross bytes per sync; each split phase sends K through machine 0's NIC (B = 1e9 B/s): 1 s, so
    2 s per sync; ceil(10 / 5) = 2 syncs: B runs 10 + 4 = 14 s. C (t=5) waits: 2 idle GPUs.
    At t=10 A ends; C goes [0, 0, 1, 1]; B's rate on each NIC is 2K per 7 s period, residual
    1e9 - 2e9/7 = 5e9/7, so a split phase takes 1e9 / (5e9/7) = 1.4 s, 2.8 s per sync, 1 sync:
    C ends 10 + 5 + 2.8 = 17.8."""
    jobs, topo, cfg = workload_from_dict(TINY)
    res = replay(jobs, HivedPolicy(), topo=topo, config=cfg)
    by = {j["id"]: j for j in res.jobs}
    assert by["A"]["machine_of_worker"] == [0, 0] and (by["A"]["start"], by["A"]["end"]) == (0, 10)
    assert by["B"]["machine_of_worker"] == [0, 0, 1, 1]
    assert by["B"]["cross_bytes_per_sync"] == 2 * K and by["B"]["comm_s_per_sync"] == pytest.approx(2.0)
    assert by["B"]["end"] == pytest.approx(14.0)
    assert by["C"]["machine_of_worker"] == [0, 0, 1, 1] and by["C"]["start"] == 10
    assert by["C"]["comm_s_per_sync"] == pytest.approx(2.8) and by["C"]["end"] == pytest.approx(17.8)
    s = summarize(res)
    H = 17.8
    assert s["horizon_h"] == pytest.approx(H / 3600)
    assert s["used_machines_avg"] == pytest.approx(2.0)
    assert s["machine_hours"] == pytest.approx(2 * H / 3600)
    # idle / GPUs of used machines: 1-6/8 on [0,10), 0 on [10,14), 1-4/8 on [14,17.8)
    assert s["fragmentation_rate_avg"] == pytest.approx((0.25 * 10 + 0.5 * 3.8) / H)
    assert s["occupancy_rate_avg"] == pytest.approx(1 - (0.25 * 10 + 0.5 * 3.8) / H)
    assert s["cross_bytes_avg"] == pytest.approx((2 * K * 10 + 4 * K * 4 + 2 * K * 3.8) / H)
    assert s["total_cross_bytes"] == pytest.approx(2 * K * 2 + 2 * K * 1)
    assert s["comm_s_total"] == pytest.approx(4 + 2.8)
    # price = workers x duration (h); profit = sum price / (used x mean T): 60/(2x12), 60/(2x10.9), 20/(2x7.8)
    assert s["profit_rate_avg"] == pytest.approx((2.5 * 10 + 60 / 21.8 * 4 + 20 / 15.6 * 3.8) / H)
    assert s["queueing_delay_mean_s"] == pytest.approx(5 / 3) and s["queueing_delay_max_s"] == 5
    assert s["idle_machines_opened"] == 2 and s["multi_machine_jobs"] == 2


def test_elasticflow_and_titan_on_the_tiny_workload():
    """Elasticflow keeps B on machine 1 (no cross traffic); C then starts at t = 10 on an empty
    cluster, on machine 0. Titan (the default, ``repaired``) does the same: machine 0's 2 idle GPUs
    cannot hold B, so one idle machine is needed, and machine 1 holds the whole job: (1 idle, 1
    machine). Titan as the pseudo-code is written places B as HiveD does, (1 idle, 2 machines):
    step 1 gives Phi_n = {1}; step 2 takes the non-idle machine 0 first, its feasible set {W0, W1},
    then W2 and W3 join machine 1 (each sends K/2 in phase 1; K/2 + K/2 = K <= P = 1e9 B/s x 1 s);
    so B and C run as in test_hand_checked_hived_replay ([0, 0, 1, 1], B ends at 14, C starts at 10)."""
    jobs, topo, cfg = workload_from_dict(TINY)
    elastic = replay(jobs, POLICIES["elasticflow"](), topo=topo, config=cfg).jobs
    by = {j["id"]: j for j in elastic}
    assert by["A"]["machine_of_worker"] == [0, 0]
    assert by["B"]["machine_of_worker"] == [1, 1, 1, 1] and by["B"]["comm_s"] == 0 and by["B"]["end"] == 10
    assert by["C"]["machine_of_worker"] == [0, 0, 0, 0] and (by["C"]["start"], by["C"]["end"]) == (10, 15)
    assert replay(jobs, POLICIES["titan"](), topo=topo, config=cfg).jobs == elastic
    by = {j["id"]: j for j in replay(jobs, POLICIES["titan"](titan_algorithm="pseudo-code"), topo=topo,
                                     config=cfg).jobs}
    assert by["A"]["machine_of_worker"] == [0, 0]
    assert by["B"]["machine_of_worker"] == [0, 0, 1, 1] and by["B"]["end"] == pytest.approx(14.0)
    assert by["C"]["machine_of_worker"] == [0, 0, 1, 1] and by["C"]["start"] == 10


def test_pair_capacity_derivation():
    topo = FatTree(racks=2, machines_per_rack=2, gpus_per_machine=4, link_gbps=8.0, oversubscription=4.0)
    st = ClusterState(topo, ReplayConfig(iteration_s=1.0, phase_budget_s=0.5))
    B, U = 1e9, 2 * 1e9 / 4
    assert st.pair_capacity_bytes() == pytest.approx(min(B, U) * 0.5)  # no traffic: a scalar
    st.add_load(np.array([0.3e9, 0, 0, 0]), np.array([0.1e9, 0]), +1.0)
    P = st.pair_capacity_bytes()
    assert P[0, 1] == pytest.approx(0.7e9 * 0.5)            # same rack: min of the two NICs
    assert P[0, 2] == pytest.approx(min(0.7e9, U - 0.1e9, U) * 0.5)  # cross rack: and the uplinks
    assert P[2, 3] == pytest.approx(B * 0.5) and P[1, 3] == pytest.approx((U - 0.1e9) * 0.5)
    st.add_load(np.array([0.3e9, 0, 0, 0]), np.array([0.1e9, 0]), -1.0)
    assert np.isscalar(st.pair_capacity_bytes())


def test_same_seed_same_result():
    a, b = generate_workload(3, jobs=60), generate_workload(3, jobs=60)
    assert a == b and generate_workload(4, jobs=60) != a
    jobs, topo, cfg = workload_from_dict(a)
    for p in ("titan", "tiresias"):
        s1 = summarize(replay(jobs, POLICIES[p](), topo=topo, config=cfg))
        s2 = summarize(replay(jobs, POLICIES[p](), topo=topo, config=cfg))
        s1.pop("replay_wall_s"), s2.pop("replay_wall_s")
        assert s1 == s2
    recs = [{"job_id": str(i), "submission_time": float(i), "duration": 10.0, "num_gpu": 2 ** (i % 4)} for i in range(30)]
    assert jobs_from_trace(recs, seed=1) == jobs_from_trace(recs, seed=1)
    assert [j.model for j in jobs_from_trace(recs, seed=1)] != [j.model for j in jobs_from_trace(recs, seed=2)]
    assert {j.collective for j in jobs_from_trace(recs)} == {"halving-doubling"}


def _bad(mut):
    d = json.loads(json.dumps(TINY))
    mut(d)
    return d


@pytest.mark.parametrize("mut, field", [
    (lambda d: d["jobs"][0].update(duration=-1), "jobs[0].duration"),
    (lambda d: d["jobs"][1].pop("workers"), "jobs[1].workers"),
    (lambda d: d["jobs"][2].update(workers=0), "jobs[2].workers"),
    (lambda d: d["jobs"][2].update(workers=9), "jobs[2].workers"),
    (lambda d: d["jobs"][0].update(gpus=2), "jobs[0].gpus"),
    (lambda d: d["jobs"][1].update(id="A"), "jobs[1].id"),
    (lambda d: (d["jobs"][0].pop("param_bytes"), d["jobs"][0].update(model="gpt9")), "jobs[0].param_bytes"),
    (lambda d: d["cluster"].update(racks=0), "cluster.racks"),
    (lambda d: d.pop("kind"), "kind"),
    (lambda d: d.update(jobs=[]), "jobs"),
    (lambda d: d.update(iteration_s=0), "iteration_s"),
])
def test_bad_workload_rejected_naming_the_field(mut, field):
    with pytest.raises(InputError) as ei:
        workload_from_dict(_bad(mut))
    assert ei.value.field == field
    assert str(ei.value).startswith(field)


def test_cli_simulate(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # without --out the schedule goes to ./wl.<policy>.schedule.json
    wl = tmp_path / "wl.json"
    wl.write_text(json.dumps(TINY))
    out = tmp_path / "sched.json"
    assert main(["simulate", "nimp", str(wl), "--policy", "hived", "--json", "--out", str(out)]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["status"] == "feasible" and s["policy"] == "hived" and s["jobs"] == 3
    assert s["used_machines_avg"] == pytest.approx(2.0)
    assert len(json.loads(out.read_text())["jobs"]) == 3
    for p in ("titan", "elasticflow", "tiresias"):
        assert main(["simulate", "nimp", str(wl), "--policy", p, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["policy"] == p
        assert len(json.loads((tmp_path / f"wl.{p}.schedule.json").read_text())["jobs"]) == 3
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_bad(lambda d: d["jobs"][0].update(duration=-1))))
    assert main(["simulate", "nimp", str(bad), "--policy", "titan", "--json"]) == 2
    assert "jobs[0].duration" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert main(["simulate", "nimp", str(broken), "--policy", "titan"]) == 2
    assert main(["simulate", "nimp", str(tmp_path / "missing.json"), "--policy", "titan"]) == 2
    assert main(["simulate", "nimp", str(wl), "--policy", "cpsat"]) == 2
    assert "--policy" in capsys.readouterr().err


def test_itp_trace_replay_smoke(capsys, tmp_path, monkeypatch):
    needs_trace(itp_files(), "microsoft-itp")
    monkeypatch.chdir(tmp_path)  # the default schedule file lands here
    path = str(itp_files()[0])
    assert main(["simulate", "nimp", path, "--policy", "titan", "--json", "--param", "limit=150"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["jobs"] == 150 and s["status"] == "feasible"
    assert s["cluster"] == {"racks": 64, "machines_per_rack": 8, "gpus_per_machine": 8, "link_gbps": 100.0,
                            "oversubscription": 1.0}
    assert 0 < s["used_machines_avg"] <= 512 and math.isfinite(s["profit_rate_avg"])
