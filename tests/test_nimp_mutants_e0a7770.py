"""Facts of nimp's contract that the mutation protocol's fresh draw at e0a7770 (sample of 500,
seed 0) found unchecked: every field, message and problem of the argument checks of Titan's
placement functions, of the online driver's pair capacity and of a replay workload; what
``place_with_and_without_capacity`` returns when no placement exists. Each test pins a whole
check (all its branches), not one edit. Tiny hand-made inputs only."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.nimp.model import ring_phases
from optkit.formulations.nimp.online import OnlineScheduler
from optkit.formulations.nimp.replay import simulate_cli, workload_from_dict
from optkit.formulations.nimp.titan import (check_machines, check_max_attempts, check_readings,
                                              place_with_and_without_capacity)
from optkit.online import ClusterView, Job


# ----------------------------------------------------------------------------- titan.py
@pytest.mark.parametrize("gpus,idle,workers,field,message", [
    ([], [0], 1, "gpus", "must list the GPUs of at least one machine, got []"),
    ([2], [], 1, "idle_gpus", "must list the GPUs of at least one machine, got []"),
    ("ab", [0], 1, "gpus", "must list a GPU count per machine, got str"),
    ([2, 1.5], [0, 0], 1, "gpus[1]", "must be an integer >= 1, got 1.5"),
    ([2, 2], [0, -1], 1, "idle_gpus[1]", "must be an integer >= 0, got -1"),
    ([2, 2], [1], 1, "idle_gpus", "must list one R_s per machine (2), got 1"),
    ([2, 2], [1, 3], 1, "idle_gpus[1]", "must be <= gpus (2), got 3"),
    ([2, 2], [1, 1], 0, "workers", "must be an integer >= 1, got 0"),
    ([2, 2], [1, 1], True, "workers", "must be an integer >= 1, got True"),
])
def test_check_machines_names_each_field_and_problem(gpus: Any, idle: Any, workers: Any, field: str,
                                                     message: str) -> None:
    """Every refusal of :func:`titan.check_machines`: its field, its whole message, problem nimp."""
    with pytest.raises(InputError) as err:
        check_machines(gpus, idle, workers)
    assert (err.value.field, err.value.message, err.value.problem) == (field, message, "nimp")


def test_check_machines_returns_int64_arrays() -> None:
    K, R = check_machines([4, 2.0], [1, 2], 3)
    assert K is not None and K.dtype == np.int64 and K.tolist() == [4, 2]
    assert R.dtype == np.int64 and R.tolist() == [1, 2]
    K, R = check_machines(None, [0, 5], np.int64(1))
    assert K is None and R.tolist() == [0, 5]


def test_check_max_attempts_and_readings_name_their_field() -> None:
    """``max_attempts``: None or an integer >= 1; the three readings, each with its field, its
    list of values and problem nimp."""
    assert check_max_attempts(None) is None and check_max_attempts(3) == 3 and check_max_attempts(1) == 1
    with pytest.raises(InputError) as err:
        check_max_attempts(0)
    assert (err.value.field, err.value.problem) == ("max_attempts", "nimp")
    ok = ("repaired", "fix-idle-count", "least-traffic")
    rows = [(0, "titan_algorithm", "must be repaired, pseudo-code or pair-grouping, got 'x'"),
            (1, "titan_step2", "must be fix-idle-count or pool-prefix, got 'x'"),
            (2, "titan_tie_break", "must be least-traffic, best-fit or worst-fit, got 'x'")]
    for i, field, message in rows:
        args = list(ok)
        args[i] = "x"
        with pytest.raises(InputError) as err:
            check_readings(*args)
        assert (err.value.field, err.value.message, err.value.problem) == (field, message, "nimp")
    check_readings("pseudo-code", "pool-prefix", "worst-fit")


@pytest.mark.parametrize("algorithm", ["repaired", "pseudo-code", "pair-grouping"])
def test_place_with_and_without_capacity_without_enough_idle_gpus(algorithm: str) -> None:
    """Three workers, two machines with one idle GPU each: no placement with or without P, under
    every algorithm: (None, None)."""
    Ka, Ra = np.array([2, 2], dtype=np.int64), np.array([1, 1], dtype=np.int64)
    got = place_with_and_without_capacity(Ka, Ra, 1e30, ring_phases(3, 3.0e8), workers=3, titan_algorithm=algorithm)
    assert got == (None, None)


# ----------------------------------------------------------------------------- online.py
def _titan_decide(cap: Any) -> None:
    s = OnlineScheduler("titan", nodes={"a": 2, "b": 2})
    s.on_arrival(Job("x", 0.0, 3, param_bytes=1e8), 0.0)
    s.decide(0.0, ClusterView({"a": 2, "b": 2}, {"a": 2, "b": 2}, pair_capacity=cap))


@pytest.mark.parametrize("cap,field,message", [
    (math.inf, "cluster.pair_capacity", "must be a finite number >= 0 (bytes per phase), got inf"),
    (-1.0, "cluster.pair_capacity", "must be a finite number >= 0 (bytes per phase), got -1.0"),
    ({("a", "b"): math.inf}, "cluster.pair_capacity[('a', 'b')]",
     "must be a finite number >= 0 (bytes per phase), got inf"),
    ("wide", "cluster.pair_capacity", "must be a number, a pair mapping or an array, got 'wide'"),
])
def test_online_pair_capacity_refusals(cap: Any, field: str, message: str) -> None:
    """The online driver's P: a finite number >= 0 (a scalar or each value of a pair mapping),
    else an InputError with the field, the whole message and problem nimp."""
    with pytest.raises(InputError) as err:
        _titan_decide(cap)
    assert (err.value.field, err.value.message, err.value.problem) == (field, message, "nimp")


# ----------------------------------------------------------------------------- replay.py
def _workload(**job: Any) -> dict[str, Any]:
    jd = {"id": "a", "submit": 0.0, "duration": 10.0, "workers": 1, **job}
    return {"problem": "nimp", "kind": "replay",
            "cluster": {"racks": 1, "machines_per_rack": 2, "gpus_per_machine": 2}, "jobs": [jd]}


@pytest.mark.parametrize("job,field,message", [
    ({"workers": 0}, "jobs[0].workers", "must be an integer >= 1, got 0"),
    ({"workers": 1.0}, "jobs[0].workers", "must be an integer >= 1, got 1.0"),
    ({"workers": 5}, "jobs[0].workers", "(5) exceeds the cluster's 4 GPUs"),
    ({"model": ""}, "jobs[0].model", "must be a non-empty string, got ''"),
    ({"model": 5}, "jobs[0].model", "must be a non-empty string, got 5"),
])
def test_workload_job_refusals(job: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        workload_from_dict(_workload(**job))
    assert (err.value.field, err.value.message) == (field, message)


def test_simulate_cli_limit_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps(_workload()))
    with pytest.raises(InputError) as err:
        simulate_cli(str(path), policy="titan", params={"limit": 0})
    assert (err.value.field, err.value.message) == ("--param limit", "must be an integer >= 1, got 0")


# ----------------------------------------------------------------------------- online.py: the one-job driver
def _nimp(idle: list[int], n: int) -> Any:
    from optkit.formulations.nimp.model import NimpInstance
    return NimpInstance.from_dict({"problem": "nimp", "pair_capacity_bytes": 1e30,
                                   "machines": [{"gpus": 4, "idle_gpus": r} for r in idle],
                                   "job": {"workers": n, "collective": "ring", "param_bytes": 1e8}})


class _Fixed:
    """An online policy that starts the job with one fixed decision (or nothing, no wake-up)."""

    name = "stub"

    def __init__(self, **decision: Any) -> None:
        self.decision = decision

    def on_arrival(self, job: Any, now: float) -> None:
        self.job = job

    def on_completion(self, job_id: str, now: float) -> None:
        pass

    def decide(self, now: float, cluster: Any) -> list[Any]:
        from optkit.online import Decision
        return [Decision(self.job.id, **self.decision)] if self.decision else []

    def next_wakeup(self, now: float) -> None:
        return None


@pytest.mark.parametrize("decision,message", [
    ({"gpus": {5: 1}}, "must name machines of the view, 0..1 (policy stub, job job), got 5"),
    ({"gpus": {0: -1, 1: 3}}, "must give a number of workers >= 0 per machine (policy stub, job job), got -1 on "
                              "machine 0"),
    ({"gpus": {0: 1}}, "must place the job's 2 workers (policy stub, job job), got 1"),
])
def test_run_policy_names_the_policy_and_job_in_a_bad_decision(decision: dict[str, Any], message: str) -> None:
    """A decision that is not one of the view's machines per worker (2 machines, 2 workers):
    field ``decision.gpus``, the whole message naming the policy and the job, problem nimp."""
    from optkit.formulations.nimp.online import run_policy
    with pytest.raises(InputError) as err:
        run_policy(_nimp([2, 2], 2), _Fixed(**decision))
    assert (err.value.field, err.value.message, err.value.problem) == ("decision.gpus", message, "nimp")


def test_run_policy_result_of_a_good_decision_and_of_none() -> None:
    """A machine given 0 workers is allowed (``{0: 2, 1: 0}`` is both workers on machine 0); a
    policy that starts nothing and asks for no wake-up: no_solution with its message."""
    from optkit.formulations.nimp.online import run_policy
    from optkit.result import Status
    res = run_policy(_nimp([2, 2], 2), _Fixed(gpus={0: 2, 1: 0}))
    assert res.status == Status.FEASIBLE and res.solution == {"machine_of_worker": [0, 0]}
    assert res.info == {"start_s": 0.0, "policy": "stub"}
    res = run_policy(_nimp([2, 2], 2), _Fixed())
    assert res.status == Status.NO_SOLUTION
    assert res.message == "policy stub did not start the job (and asked for no wake-up)"


def test_titan_policy_max_attempts_and_a_single_node_job_as_large_as_the_largest_node() -> None:
    """``max_attempts`` 1 is the smallest cap TitanPolicy takes (0 refused, naming it); a
    single-node job of exactly the largest node's GPUs can start, one more cannot."""
    from optkit.formulations.nimp.online import TitanPolicy
    assert TitanPolicy(max_attempts=1) is not None
    with pytest.raises(InputError) as err:
        TitanPolicy(max_attempts=0)
    assert err.value.field == "max_attempts" and err.value.message == "must be an integer >= 1 or None, got 0"
    s = OnlineScheduler("titan", nodes={"a": 2, "b": 4})
    s.on_arrival(Job("x", 0.0, 4, param_bytes=1e8, single_node=True), 0.0)
    with pytest.raises(InputError) as err:
        s.on_arrival(Job("y", 0.0, 5, param_bytes=1e8, single_node=True), 0.0)
    assert err.value.field == "job.single_node"
    assert err.value.message == "job y needs 5 GPUs on one node but the largest node has 4: it could never start"


# ----------------------------------------------------------------------------- replay.py: policies
def test_plugin_policy_passes_its_seed_and_replay_policy_its_time_limit() -> None:
    """An algorithm behind AlgorithmPolicy gets the replay's seed; ``replay_policy`` hands its
    time limit to ``replay``, which refuses one that is not > 0 (field ``time_limit``)."""
    from optkit.formulations.nimp.online import AlgorithmPolicy
    from optkit.formulations.nimp.replay import FatTree, ReplayConfig, ReplayJob, plugin_policy, replay_policy
    p = plugin_policy("titan", [], FatTree(), ReplayConfig(), seed=7, params={})
    assert isinstance(p, AlgorithmPolicy) and p.seed == 7 and p.name == "titan"
    jobs = [ReplayJob("a", 0.0, 10.0, 2, "custom", 1e8, "ring")]
    with pytest.raises(InputError) as err:
        replay_policy(jobs, "titan", time_limit=-1.0)
    assert (err.value.field, err.value.problem) == ("time_limit", "nimp")


# ----------------------------------------------------------------------------- exact.py
def test_cpsat_proves_too_few_idle_gpus_infeasible_by_the_relaxation() -> None:
    """Two idle GPUs for three workers: infeasible, with the message and the proof's name."""
    from optkit.formulations.nimp.exact import run_cpsat
    from optkit.result import Status
    res = run_cpsat(_nimp([1, 1], 3))
    assert res.status == Status.INFEASIBLE and res.solution is None
    assert res.message == "fewer idle GPUs than workers (resource constraint)"
    assert res.info == {"proof": "resource relaxation"}


# ----------------------------------------------------------------------------- baselines.py, generate.py
@pytest.mark.parametrize("name", ["elasticflow", "tiresias"])
def test_a_baseline_placement_that_breaks_p_is_no_solution_naming_the_baseline(name: str) -> None:
    """Four workers on two machines with two idle GPUs each must cross machines; P = 1 B per
    phase cannot carry ring traffic of K = 1e8 B, so the baseline's placement (which ignores P) is
    refused: no_solution, the message naming the baseline, the placement and the violation."""
    from optkit.formulations.nimp.baselines import run_elasticflow, run_tiresias
    from optkit.formulations.nimp.model import NimpInstance
    from optkit.result import Status
    inst = NimpInstance.from_dict({"problem": "nimp", "pair_capacity_bytes": 1.0,
                                   "machines": [{"gpus": 4, "idle_gpus": 2}, {"gpus": 4, "idle_gpus": 2}],
                                   "job": {"workers": 4, "collective": "ring", "param_bytes": 1e8}})
    res = {"elasticflow": run_elasticflow, "tiresias": run_tiresias}[name](inst)
    assert res.status == Status.NO_SOLUTION and res.info["found"] is False
    assert res.message.startswith(f"{name} found no feasible placement (not a proof that none exists): its "
                                  "placement [") and " violates " in res.message


def test_replay_workload_default_is_200_jobs() -> None:
    from optkit.formulations.nimp.generate import replay_workload
    d = replay_workload(3)
    assert len(d["jobs"]) == 200 and d == replay_workload(3, jobs=200)


# ----------------------------------------------------------------------------- network.py
def test_traffic_of_ring_and_halving_doubling_built_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """The phase patterns are cached per (N, collective, K) at module level (``network._PATTERNS``);
    under mutmut every mutant's tests run in a process forked after the clean pass, whose cache
    already holds every pattern the tests use, so this test empties the cache (restored after)
    to build the pattern with the code under test. Four workers, two on machine 0 and two on
    machine 1, K = 4e8 B. Ring: 6 phases of pairs {0,1}, {1,2}, {2,3}, {0,3} at K/4 = 1e8 B, of
    which {1,2} and {0,3} cross: 6 x 2 x 1e8 = 1.2e9 B, each NIC 2e8 B per phase.
    Halving-doubling: phases j = 1, 2, 2, 1; j = 1 pairs {0,2}, {1,3} at K/2 = 2e8 (both cross),
    j = 2 pairs {0,1}, {2,3} (neither): 2 x 2 x 2e8 = 8e8 B, each NIC 4e8 B per phase."""
    from optkit.formulations.nimp import network
    from optkit.formulations.nimp.network import traffic
    from optkit.formulations.nimp.replay import ReplayJob
    m, rack = np.array([0, 0, 1, 1]), np.array([0, 0, 0, 0])
    for coll, cross_bytes, count, nic in (("ring", 1.2e9, 6, 2e8), ("halving-doubling", 8e8, 2, 4e8)):
        monkeypatch.setattr(network, "_PATTERNS", {})
        cross, per = traffic(ReplayJob("t", 0.0, 1.0, 4, "custom", 4e8, coll), m, rack, 4, 1)
        assert cross == pytest.approx(cross_bytes), coll
        assert len(per) == 1 and per[0][2] == count and per[0][1] is None, coll
        assert per[0][0].tolist() == pytest.approx([nic, nic, 0.0, 0.0]), coll


def test_reserve_adds_the_rates_of_every_distinct_phase() -> None:
    """Two racks of two machines (2 GPUs each), B = 8 Gbps = 1e9 B/s, uplinks 2e9 B/s,
    iteration 1 s. A halving-doubling job of 4 workers, K = 4e8 B, workers on machines 0, 2, 3, 1
    (racks 0, 1, 1, 0): both distinct phases cross the racks. j = 1 (x2): pairs (m0, m3), (m2, m1)
    at K/2 = 2e8 B: each NIC 2e8, each uplink 4e8, 0.2 s. j = 2 (x2): pairs (m0, m2), (m3, m1) at
    K/4 = 1e8: each NIC 1e8, each uplink 2e8, 0.1 s. comm = 2 x 0.2 + 2 x 0.1 = 0.6 s per
    synchronisation, period 1.6 s: NIC rate 6e8 / 1.6 = 3.75e8 B/s, uplink rate 1.2e9 / 1.6 =
    7.5e8 B/s, in the start and in the state's loads."""
    from optkit.formulations.nimp.network import ClusterState
    from optkit.formulations.nimp.replay import FatTree, ReplayConfig, ReplayJob
    from optkit.online import Decision
    job = ReplayJob("j", 0.0, 10.0, 4, "custom", 4e8, "halving-doubling")
    st = ClusterState(FatTree(2, 2, 2, 8.0), ReplayConfig(1.0, 0.5), [job], policy="p")
    st.reserve(Decision("j", {}, replicas=[[0, 2, 3, 1]]))
    (s,) = st.take_started()
    assert s.comm == pytest.approx(0.6) and s.cross == pytest.approx(2 * 2 * 2e8 + 2 * 2 * 1e8)
    assert s.nic_rate is not None and s.nic_rate.tolist() == pytest.approx([3.75e8] * 4)
    assert s.up_rate is not None and s.up_rate.tolist() == pytest.approx([7.5e8] * 2)
    assert st.up_load.tolist() == pytest.approx([7.5e8] * 2) and st.nic_load.tolist() == pytest.approx([3.75e8] * 4)
    assert s.syncs == 10 and s.duration == pytest.approx(16.0) and s.idle_opened == 4


# ----------------------------------------------------------------------------- model.py, online.py: typed inputs
def test_evaluate_takes_machine_indices_of_any_integer_type() -> None:
    """``machine_of_worker`` may mix numpy integers and Python ints (evaluate's check allows any
    ``np.integer``): [np.uint64(0), 1] is evaluated as [0, 1] (numpy alone would make that list a
    float array). Two machines of 4 GPUs with 1 idle each, 2 workers, ring, K = 1e8 B: no idle
    machine used, 2 machines, cross bytes 2(N-1) x K/N x 1 crossing pair = 1e8."""
    from optkit.formulations.nimp.model import evaluate
    inst = _nimp([1, 1], 2)
    ev = evaluate(inst, {"machine_of_worker": [np.uint64(0), 1]})
    assert ev == evaluate(inst, {"machine_of_worker": [0, 1]})
    assert ev.feasible and ev.objectives == {"lex": [0, 2], "lex-cross": [0, 2, 1e8]}


def test_pair_capacity_of_checks_an_array_by_default() -> None:
    """``pair_capacity_of(view)`` validates an array P unless told to trust it."""
    from optkit.formulations.nimp.online import pair_capacity_of
    view = ClusterView({"a": 2, "b": 2}, {"a": 2, "b": 2}, pair_capacity=np.ones((3, 3)))
    with pytest.raises(InputError) as err:
        pair_capacity_of(view)
    assert err.value.field == "cluster.pair_capacity"
    assert err.value.message == ("must be a number, a pair mapping or a 2 x 2 array of numbers, got an array of "
                                 "shape (3, 3) and float64")
    assert pair_capacity_of(view, check_array=False).shape == (3, 3)


# ----------------------------------------------------------------------------- replay.py: summarize
def test_summary_of_busy_samples_spanning_no_time_is_zero_not_nan() -> None:
    """Two samples at one instant with one machine in use (2 of its 2 GPUs busy): every average
    over the time a machine is in use (fragmentation, occupancy, profit rate) is 0.0, an empty
    average, not NaN; the horizon and machine hours are 0."""
    from optkit.formulations.nimp.replay import FatTree, ReplayConfig, ReplayResult, summarize
    one = np.array([5.0, 5.0])
    series = {"t": one, "used": np.ones(2), "busy": 2 * np.ones(2), "cross": np.zeros(2), "running": np.ones(2),
              "price": np.ones(2), "dur_h": np.ones(2), "waiting": np.zeros(2), "arrival": np.zeros(2)}
    s = summarize(ReplayResult([], series, FatTree(1, 1, 2), ReplayConfig(), "p", 0.0))
    got = {k: s[k] for k in ("fragmentation_rate_avg", "occupancy_rate_avg", "profit_rate_avg", "horizon_h",
                             "machine_hours", "used_machines_max")}
    assert got == {"fragmentation_rate_avg": 0.0, "occupancy_rate_avg": 0.0, "profit_rate_avg": 0.0,
                   "horizon_h": 0.0, "machine_hours": 0.0, "used_machines_max": 1}


def test_brute_force_uses_the_phase_volume_even_below_one_byte() -> None:
    """K = 1 B, 2 workers, ring: one distinct phase, pair {0, 1} at K/N = 0.5 B. Two non-idle
    machines with one idle GPU each and P = 0.6 B: the pair fits once (0.5 <= 0.6), so the only
    placement [0, 1] is feasible, (0 idle, 2 used); with P = 0.4 B nothing is."""
    from optkit.formulations.nimp.exact import brute_force
    from optkit.formulations.nimp.model import NimpInstance

    def inst(cap: float) -> NimpInstance:
        return NimpInstance.from_dict({"problem": "nimp", "pair_capacity_bytes": cap,
                                       "machines": [{"gpus": 2, "idle_gpus": 1}, {"gpus": 2, "idle_gpus": 1}],
                                       "job": {"workers": 2, "collective": "ring", "param_bytes": 1.0}})
    assert brute_force(inst(0.6)) == ([0, 1], (0, 2))
    assert brute_force(inst(0.4)) is None


# ----------------------------------------------------------------------------- online.py: AlgorithmPolicy
def test_algorithm_policy_instance_and_relaxed_counter() -> None:
    """The instance AlgorithmPolicy builds from an array P keeps the matrix (negatives as 0);
    Titan behind it with P = 1 B cannot place a 4-worker job of K = 1e8 B over two machines of 2
    idle GPUs, so each such job is placed with P relaxed: two jobs, ``relaxed`` = 2."""
    from optkit.formulations.nimp.online import AlgorithmPolicy
    p = AlgorithmPolicy("titan", seed=0)
    idle, gpus = np.array([2, 2], dtype=np.int64), np.array([2, 4], dtype=np.int64)
    job = Job("x", 0.0, 4, param_bytes=1e8)
    inst = p.instance(job, idle, gpus, np.array([[0.0, 5.0], [5.0, -1.0]]))
    assert inst.capacity.tolist() == [[0.0, 5.0], [5.0, 0.0]] and not inst.capacity_is_scalar
    assert [(m.gpus, m.idle_gpus) for m in inst.machines] == [(2, 2), (4, 2)] and inst.N == 4
    view = ClusterView({0: 2, 1: 2}, {0: 2, 1: 4}, pair_capacity=1.0)
    for name in ("a", "b"):
        m = p.place(Job(name, 0.0, 4, param_bytes=1e8), idle, gpus, view)
        assert sorted(m) == [0, 0, 1, 1]
    assert p.relaxed == 2


# ----------------------------------------------------------------------------- claims.py
def test_total_profit_sums_the_profit_rate_at_arrivals() -> None:
    """Samples at t = 0, 1, 2, 3 (arrivals at 0, 1 and 3; ``until`` = 2 drops t = 3). t = 0: one
    running job on one used machine, price 3, 2 GPU-hours: T = 2/1, rate 3 / (1 x 2) = 1.5.
    t = 1: two jobs on two machines, price 8, 4 GPU-hours: T = 4/2 = 2, rate 8 / (2 x 2) = 2.
    t = 2 is no arrival. Total 3.5."""
    from optkit.formulations.nimp import claims
    from optkit.formulations.nimp.replay import FatTree, ReplayConfig, ReplayResult
    series = {"t": np.array([0.0, 1.0, 2.0, 3.0]), "arrival": np.array([1.0, 1.0, 0.0, 1.0]),
              "used": np.array([1.0, 2.0, 2.0, 2.0]), "running": np.array([1.0, 2.0, 2.0, 2.0]),
              "dur_h": np.array([2.0, 4.0, 4.0, 4.0]), "price": np.array([3.0, 8.0, 8.0, 100.0])}
    res = ReplayResult([], series, FatTree(1, 2, 2), ReplayConfig(), "p", 0.0)
    assert claims._total_profit(res, 2.0) == pytest.approx(3.5)


# ----------------------------------------------------------------------------- titan.py: repaired vs pair-grouping
@pytest.mark.parametrize("gpus,idle", [([3, 4, 4], [1, 3, 2]), ([2, 3, 2], [2, 3, 2])])
def test_repaired_titan_is_the_default_and_finds_what_pair_grouping_misses(gpus: list[int], idle: list[int]) -> None:
    """Five workers, ring, K = 1 B (K/N = 0.2 B per pair and phase), P = 0.25 B: a machine pair
    carries at most one worker pair. Ring pairs {0,1}, {1,2}, {2,3}, {3,4}, {0,4}; three workers
    on one machine and one on each of two others cut three ring pairs, one per machine pair, so
    a placement exists (here on a non-idle cluster and on an all-idle one). Titan as repaired
    (checking each worker as it joins, Alg. 1) finds one that evaluate accepts; pair-grouping
    (checking only whole placements) finds none; ``place_unchecked`` without
    ``titan_algorithm`` is the repaired reading (the documented default)."""
    from optkit.formulations.nimp.model import NimpInstance, evaluate
    from optkit.formulations.nimp.titan import place_unchecked
    Ka, Ra = np.array(gpus, dtype=np.int64), np.array(idle, dtype=np.int64)

    def run(**kw: Any) -> list[int] | None:
        return place_unchecked(Ka, Ra, 0.25, ring_phases(5, 1.0), workers=5, **kw)
    m = run(titan_algorithm="repaired")
    inst = NimpInstance.from_dict({"problem": "nimp", "pair_capacity_bytes": 0.25,
                                   "machines": [{"gpus": g, "idle_gpus": r} for g, r in zip(gpus, idle)],
                                   "job": {"workers": 5, "collective": "ring", "param_bytes": 1.0}})
    assert m is not None and evaluate(inst, {"machine_of_worker": m}).feasible
    assert run() == m
    assert run(titan_algorithm="pair-grouping") is None


def test_titan_merges_worker_sets_heaviest_pair_first_and_deploys_the_largest_first() -> None:
    """Alg. 2's merged sets on hand-made phases (no bandwidth limit). (a) Pairs {0,3} 3 B,
    {1,2} 2 B, {2,3} 1 B, one machine of 4 idle GPUs: {0,3} and {1,2} merge, then {2,3} joins
    the two sets (its first worker's set has the larger root, the union keeps the smaller):
    all four workers on machine 0. (b) One pair {1,2} of 5 B, three workers, idle machines of 2
    and 1 GPUs (cmax = 2): sets {1,2} and {0}; the larger set goes first, to the machine with
    the most idle GPUs (machine 0), {0} to machine 1: [1, 0, 0], no cross bytes (deploying {0}
    first would split the pair)."""
    from optkit.formulations.nimp.model import Phase
    from optkit.formulations.nimp.titan import titan
    ph = [Phase(((0, 3),), 3.0), Phase(((1, 2),), 2.0), Phase(((2, 3),), 1.0)]
    assert titan([4], [4], math.inf, ph, workers=4) == [0, 0, 0, 0]
    assert titan([2, 1], [2, 1], math.inf, [Phase(((1, 2),), 5.0)], workers=3) == [1, 0, 0]


# ----------------------------------------------------------------------------- replay.py: loads of ended jobs
class _Placed:
    """An online policy that starts each job as it arrives on the workers' machines given."""

    name = "placed"

    def __init__(self, where: dict[str, list[int]]) -> None:
        self.where = where
        self.waiting_ids: list[str] = []

    def on_arrival(self, job: Any, now: float) -> None:
        self.waiting_ids.append(job.id)

    def on_completion(self, job_id: str, now: float) -> None:
        pass

    def decide(self, now: float, cluster: Any) -> list[Any]:
        from optkit.online import Decision
        out = []
        for j in self.waiting_ids:
            mw = self.where[j]
            d = Decision(j, {s: mw.count(s) for s in sorted(set(mw))}, replicas=[mw])
            cluster.reserve(d)
            out.append(d)
        self.waiting_ids = []
        return out

    def next_wakeup(self, now: float) -> None:
        return None


def test_an_ended_job_gives_back_exactly_its_nic_load() -> None:
    """One rack of two machines of 2 GPUs, B = 1e9 B/s, iteration 1 s; ring jobs of 2 workers,
    K = 4e8 B: one distinct phase (pair {0,1}, K/2 = 2e8 B) twice per synchronisation, each on
    machines [0, 1]. A (t = 0, 1 s): comm 2 x 2e8/1e9 = 0.4 s, NIC rate rA = 4e8/1.4 B/s, ends at
    1.4 s. B (t = 0, 100 s) on the residual 1e9 - rA: comm cB = 4e8/(1e9 - rA), rate rB = 4e8/(1 +
    cB). C (t = 2 s) sees only B's load: comm 4e8/(1e9 - rB)."""
    from optkit.formulations.nimp.replay import FatTree, ReplayConfig, ReplayJob, replay
    jobs = [ReplayJob("A", 0.0, 1.0, 2, "custom", 4e8, "ring"), ReplayJob("B", 0.0, 100.0, 2, "custom", 4e8, "ring"),
            ReplayJob("C", 2.0, 1.0, 2, "custom", 4e8, "ring")]
    res = replay(jobs, _Placed({"A": [0, 1], "B": [0, 1], "C": [0, 1]}), topo=FatTree(1, 2, 2, 8.0),
                 config=ReplayConfig(1.0, 0.05))
    got = {j["id"]: j for j in res.jobs}
    rA = 4e8 / 1.4
    cB = 4e8 / (1e9 - rA)
    rB = 4e8 / (1.0 + cB)
    assert got["A"]["comm_s_per_sync"] == pytest.approx(0.4) and got["A"]["end"] == pytest.approx(1.4)
    assert got["B"]["comm_s_per_sync"] == pytest.approx(cB)
    assert got["C"]["start"] == 2.0 and got["C"]["comm_s_per_sync"] == pytest.approx(4e8 / (1e9 - rB))
