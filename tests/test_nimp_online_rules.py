"""nimp's online policies where the other online tests do not look: the single-node rule of
Titan and of a plug-in (online.py's module docstring), what ``run_policy`` hands a policy and
says when it stops, what a plug-in behind AlgorithmPolicy receives, and ``optkit simulate
nimp``'s hook (``replay.simulate_cli``) under a plug-in, a reading and a time limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.nimp.model import NimpInstance, solution_dict
from optkit.formulations.nimp.online import AlgorithmPolicy, TitanPolicy, run_policy
from optkit.formulations.nimp.replay import generate_workload, simulate_cli
from optkit.online import ClusterView, Job
from optkit.result import Result, Status


@pytest.fixture
def own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plug-ins registered in the test are undone after it."""
    from optkit import registry

    monkeypatch.setattr(registry, "_registered", dict(registry.all_formulations()))
    monkeypatch.setattr(registry, "_plugins", {p: dict(a) for p, a in registry._plugins.items()})


def _register(name: str, fn: Any) -> None:
    from optkit import registry
    from optkit.formulation import Algorithm

    registry.register_algorithm(Algorithm(name, fn, "heuristic", name, (), problem="nimp"))


def _single(policy: Any, idle: list[int], gpus: list[int], n: int = 3) -> list[int]:
    policy.on_arrival(Job("s", 0.0, n, param_bytes=1e8, single_node=True), 0.0)
    [d] = policy.decide(0.0, ClusterView.of_arrays(np.array(idle), np.array(gpus), pair_capacity=1e9))
    return d.replicas[0]


# Machines: 0 non-idle with 4 of 8 idle, 1 non-idle with 2 (too few), 2 and 3 idle (8 of 8),
# 4 non-idle with 3 of 4 idle. A 3-GPU single-node job fits on 0, 2, 3 and 4.
IDLE, GPUS = [4, 2, 8, 8, 3], [8, 8, 8, 8, 4]


@pytest.mark.parametrize("readings, machine", [
    ({}, 4),  # repaired, fix-idle-count, least-traffic: the non-idle machine with the fewest idle GPUs
    ({"titan_tie_break": "best-fit"}, 4),
    ({"titan_algorithm": "pair-grouping"}, 4),
    ({"titan_tie_break": "worst-fit"}, 0),  # the most
    ({"titan_step2": "pool-prefix"}, 0),
    ({"titan_algorithm": "pseudo-code"}, 0),  # the first non-idle machine that holds it
])
def test_titan_places_a_single_node_job_as_one_worker(readings: dict[str, str], machine: int) -> None:
    assert _single(TitanPolicy(**readings), IDLE, GPUS) == [machine] * 3


@pytest.mark.parametrize("readings, machine", [({}, 1), ({"titan_algorithm": "pseudo-code"}, 0)])
def test_titan_opens_an_idle_machine_for_a_single_node_job_only_when_it_must(readings: dict[str, str],
                                                                            machine: int) -> None:
    """No non-idle machine holds it: the idle machine with the most GPUs (repaired), the first
    idle one (pseudo-code); a machine of 2 with 2 idle cannot hold 3."""
    assert _single(TitanPolicy(**readings), [4, 8, 2, 2], [4, 8, 8, 2]) == [machine] * 3


def test_a_plug_in_places_a_single_node_job_on_one_machine_or_is_overruled(own_registry: None) -> None:
    """A plug-in is asked on the machines that hold the job (the others shown full) with P = 0;
    one machine is kept as it is; a split is replaced by Elasticflow's best fit over those
    machines and counted in ``relaxed``."""
    seen: list[tuple[list[int], float]] = []

    def on_last(instance: Any, *, objective: str, time_limit: Any, seed: Any) -> Result:
        seen.append(([m.idle_gpus for m in instance.machines], float(instance.capacity[0, 1])))
        return Result(Status.FEASIBLE, solution=solution_dict([instance.M - 1] * instance.N))

    def split(instance: Any, *, objective: str, time_limit: Any, seed: Any) -> Result:
        return Result(Status.FEASIBLE, solution=solution_dict([0, 2, 2]))

    _register("on-last", on_last)
    _register("split", split)
    pol = AlgorithmPolicy("on-last")
    assert _single(pol, IDLE, GPUS) == [4, 4, 4] and pol.relaxed == 0
    assert seen == [([4, 0, 8, 8, 3], 0.0)]
    pol = AlgorithmPolicy("split")
    assert _single(pol, IDLE, GPUS) == [4, 4, 4] and pol.relaxed == 1  # best fit: 3 idle of machine 4


def test_algorithm_policy_passes_its_seed_and_parameters(own_registry: None) -> None:
    """The seed and the checked parameters reach the plug-in on every job; one that finds nothing
    even with P relaxed is a RuntimeError saying so."""
    calls: list[tuple[Any, Any]] = []

    def rec(instance: Any, *, objective: str, time_limit: Any, seed: Any, depth: int = 1) -> Result:
        calls.append((seed, depth))
        return Result(Status.FEASIBLE, solution=solution_dict([0] * instance.N))

    def none(instance: Any, *, objective: str, time_limit: Any, seed: Any) -> Result:
        return Result(Status.NO_SOLUTION)

    _register("rec", rec)
    _register("none", none)
    view = ClusterView.of_arrays(np.array([4, 4]), np.array([4, 4]), pair_capacity=1e9)
    pol = AlgorithmPolicy("rec", seed=7, params={"depth": 3})
    pol.on_arrival(Job("j", 0.0, 2, param_bytes=1e8), 0.0)
    pol.decide(0.0, view)
    assert calls == [(7, 3)]
    pol = AlgorithmPolicy("none")
    pol.on_arrival(Job("j", 0.0, 2, param_bytes=1e8), 0.0)
    view = ClusterView.of_arrays(np.array([4, 4]), np.array([4, 4]), pair_capacity=1e9)
    with pytest.raises(RuntimeError, match=r"^policy none found no placement for job j \(2 workers\) even with P "
                                           r"relaxed, though 8 GPUs are idle: no_solution"):
        pol.decide(0.0, view)


class _Waiting:
    """A policy without a ``name`` that never starts the job and asks to be woken every second;
    it keeps the pair capacity each view shows."""

    def __init__(self) -> None:
        self.caps: list[Any] = []

    def on_arrival(self, job: Job, now: float) -> None:
        pass

    def on_completion(self, job_id: str, now: float) -> None:
        pass

    def decide(self, now: float, cluster: ClusterView) -> list:
        self.caps.append(cluster.pair_capacity())
        return []

    def next_wakeup(self, now: float) -> float:
        return now + 1.0


def test_run_policy_names_a_nameless_policy_by_its_class_and_stops_at_the_time_limit() -> None:
    inst = NimpInstance.from_dict({"problem": "nimp", "machines": [{"gpus": 4, "idle_gpus": 4}] * 2,
                                   "pair_capacity_bytes": 5e7, "job": {"workers": 2, "collective": "ring",
                                                                       "param_bytes": 1e8}})
    r = run_policy(inst, _Waiting(), time_limit=1e-9)
    assert r.status is Status.TIME_LIMIT
    assert r.message == "time limit of 1e-09 s reached before policy _Waiting started the job"


def test_run_policy_shows_a_matrix_of_p_as_the_matrix_whatever_its_diagonal() -> None:
    """P given as a matrix is shown as the M x M array (its diagonal is ignored, here 1e12, not
    read as a scalar P); a positive scalar P as the number."""
    mat = [[1e12, 0.0], [0.0, 1e12]]
    base = {"problem": "nimp", "machines": [{"gpus": 4, "idle_gpus": 4}] * 2,
            "job": {"workers": 2, "collective": "ring", "param_bytes": 1e8}}
    pol = _Waiting()
    run_policy(NimpInstance.from_dict(dict(base, pair_capacity_bytes=mat)), pol, time_limit=1e-9)
    assert isinstance(pol.caps[0], np.ndarray) and pol.caps[0][0, 1] == 0.0
    pol = _Waiting()
    run_policy(NimpInstance.from_dict(dict(base, pair_capacity_bytes=5e7)), pol, time_limit=1e-9)
    assert pol.caps[0] == 5e7


# ----------------------------------------------------------------------------- simulate_cli
@pytest.fixture
def workload(tmp_path: Path) -> str:
    p = tmp_path / "w.json"
    p.write_text(json.dumps(generate_workload(1, jobs=6, racks=1, machines_per_rack=2)))
    return str(p)


def test_simulate_a_plug_in_and_a_policy_under_a_reading(workload: str, own_registry: None, tmp_path: Path) -> None:
    """A plug-in replays behind AlgorithmPolicy (no readings of the paper's policies); a paper
    policy takes its readings, reported back; the schedule file holds every job, on one line."""
    def first(instance: Any, *, objective: str, time_limit: Any, seed: Any) -> Result:
        from optkit.formulations.nimp.baselines import elasticflow

        return Result(Status.FEASIBLE, solution=solution_dict(
            elasticflow([m.idle_gpus for m in instance.machines], workers=instance.N)))

    _register("mine", first)
    _register_plugin_flag("mine")
    s = simulate_cli(workload, policy="mine", seed=0)
    assert s["policy"] == "mine" and s["readings"] == {} and s["jobs"] == 6 and s["status"] == "feasible"
    out = tmp_path / "sched.json"
    s = simulate_cli(workload, policy="titan", params={"titan_tie_break": "worst-fit"}, out=str(out))
    assert s["readings"] == {"titan_tie_break": "worst-fit"} and s["schedule_file"] == str(out)
    text = out.read_text()
    assert text.count("\n") == 1 and len(json.loads(text)["jobs"]) == 6


def _register_plugin_flag(name: str) -> None:
    from optkit import registry

    algo = registry.get("nimp").algorithms[name]
    assert algo.plugin, name  # registered through register_algorithm: a plug-in


def test_simulate_names_an_unknown_parameter_with_the_known_ones(workload: str) -> None:
    with pytest.raises(InputError) as err:
        simulate_cli(workload, policy="tiresias", params={"depth": 2})
    assert err.value.field == "--param"
    assert str(err.value) == ("--param unknown for the nimp replay under tiresias: depth (known: limit, "
                              "tiresias_spread)")


def test_simulate_under_a_time_limit_says_so(workload: str) -> None:
    s = simulate_cli(workload, policy="hived", time_limit=1e-9)
    assert s["status"] == "time_limit"
    assert simulate_cli(workload, policy="hived")["status"] == "feasible"


# ----------------------------------------------------------------------------- the replay driver
def _jobs(*specs: tuple) -> list:
    from optkit.formulations.nimp.replay import ReplayJob

    return [ReplayJob(i, s, d, n, model, 1e9, "ring", single) for i, s, d, n, model, single in specs]


class _Scripted:
    """Starts each job on the machines ``where`` gives for it, at the first decide after its
    arrival or, with ``wake``, at the wake-up ``wake`` seconds after it."""

    name = "scripted"

    def __init__(self, where: dict[str, list[int]], wake: float | None = None) -> None:
        self.where, self.wake, self.queue, self.woken = where, wake, [], False

    def on_arrival(self, job: Job, now: float) -> None:
        self.queue.append(job)

    def on_completion(self, job_id: str, now: float) -> None:
        pass

    def decide(self, now: float, cluster: ClusterView) -> list:
        from optkit.online import Decision

        if self.wake is not None and not self.woken:
            return []
        out = []
        for job in self.queue:
            m = self.where[job.id]
            d = Decision(job.id, {s: m.count(s) for s in set(m)}, [m])
            cluster.reserve(d)
            out.append(d)
        self.queue = []
        return out

    def next_wakeup(self, now: float) -> float | None:
        if self.wake is None or self.woken:
            return None
        self.woken = True
        return now + self.wake


def test_a_job_split_across_racks_loads_the_uplinks_the_next_one_shares() -> None:
    """Two racks of two 1-GPU machines, uplinks oversubscribed (2 x 1 GB/s NICs over a 1 GB/s
    uplink): A on machines 0 and 2, then B on 1 and 3 cross the same two uplinks through NICs A
    does not use. B's phases are slower than A's only because A's traffic is on the uplinks;
    alone, B is as fast as A."""
    from optkit.formulations.nimp.replay import FatTree, ReplayConfig, replay

    topo = FatTree(racks=2, machines_per_rack=2, gpus_per_machine=1, link_gbps=8.0, oversubscription=2.0)
    cfg = ReplayConfig(iteration_s=1.0, phase_budget_s=1.0)
    both = replay(_jobs(("A", 0.0, 10.0, 2, "resnet50", False), ("B", 0.0, 10.0, 2, "resnet50", False)),
                  _Scripted({"A": [0, 2], "B": [1, 3]}), topo=topo, config=cfg)
    a, b = both.jobs
    assert a["comm_s_per_sync"] > 0 and b["comm_s_per_sync"] > a["comm_s_per_sync"]
    alone = replay(_jobs(("B", 0.0, 10.0, 2, "resnet50", False)), _Scripted({"B": [1, 3]}), topo=topo, config=cfg)
    assert alone.jobs[0]["comm_s_per_sync"] == a["comm_s_per_sync"]


def test_the_driver_refuses_a_split_single_node_job_and_a_wake_up_not_ahead() -> None:
    from optkit.formulations.nimp.replay import FatTree, replay

    topo = FatTree(racks=1, machines_per_rack=2, gpus_per_machine=2)
    with pytest.raises(RuntimeError, match=r"^policy scripted split single-node job S over machines \[0, 1\]$"):
        replay(_jobs(("S", 0.0, 5.0, 2, "resnet50", True)), _Scripted({"S": [0, 1]}), topo=topo)
    late = replay(_jobs(("S", 0.0, 5.0, 2, "resnet50", True)), _Scripted({"S": [1, 1]}, wake=3.0), topo=topo)
    assert (late.jobs[0]["start"], late.jobs[0]["end"]) == (3.0, 8.0)
    with pytest.raises(RuntimeError, match=r"^policy scripted asked to be woken at 0.0, not after now \(0.0\)$"):
        replay(_jobs(("S", 0.0, 5.0, 2, "resnet50", True)), _Scripted({"S": [1, 1]}, wake=0.0), topo=topo)


def test_the_replay_hands_the_model_name_to_the_policy() -> None:
    """Tiresias consolidates a placement-sensitive model (VGG) and spreads the others (ResNet):
    it reads the model from the jobs the replay delivers."""
    from optkit.formulations.nimp.online import TiresiasPolicy
    from optkit.formulations.nimp.replay import FatTree, replay

    topo = FatTree(racks=1, machines_per_rack=2, gpus_per_machine=4)
    for model, machines in (("vgg16", 1), ("resnet50", 2)):
        res = replay(_jobs(("J", 0.0, 5.0, 2, model, False)), TiresiasPolicy(), topo=topo)
        assert res.jobs[0]["machines"] == machines, model


def test_queueing_delays_are_summarised() -> None:
    """Three jobs that each need the one machine's 4 GPUs, all submitted at 0, run one after the
    other for 10 s: delays 0, 10 and 20 s, mean 10, 95th percentile 19 (linear interpolation),
    max 20."""
    from optkit.formulations.nimp.online import HivedPolicy
    from optkit.formulations.nimp.replay import FatTree, replay, summarize

    topo = FatTree(racks=1, machines_per_rack=1, gpus_per_machine=4)
    res = replay(_jobs(*((j, 0.0, 10.0, 4, "resnet50", False) for j in "abc")), HivedPolicy(), topo=topo)
    s = summarize(res)
    assert (s["queueing_delay_mean_s"], s["queueing_delay_p95_s"], s["queueing_delay_max_s"]) == (10.0, 19.0, 20.0)


def test_a_finished_job_frees_its_machines_and_its_nic_load() -> None:
    """Two 1-GPU machines in one rack: A split over both runs from 0, B split the same way arrives
    after A has ended and is as fast as A (A's NIC load was removed); while nothing runs, no
    machine is used: A on [0, end_A), nothing until 100, B from 100."""
    from optkit.formulations.nimp.replay import FatTree, ReplayConfig, replay, summarize

    topo = FatTree(racks=1, machines_per_rack=2, gpus_per_machine=1, link_gbps=8.0)
    res = replay(_jobs(("A", 0.0, 10.0, 2, "resnet50", False), ("B", 100.0, 10.0, 2, "resnet50", False)),
                 _Scripted({"A": [0, 1], "B": [1, 0]}), topo=topo, config=ReplayConfig(phase_budget_s=1.0))
    a, b = res.jobs
    assert a["comm_s_per_sync"] > 0 and b["comm_s_per_sync"] == a["comm_s_per_sync"] and b["start"] == 100.0
    s = summarize(res)
    busy = (a["end"] - a["start"]) + (b["end"] - b["start"])
    assert s["used_machines_avg"] == pytest.approx(2 * busy / b["end"], rel=1e-12)


def test_an_online_policy_plug_in_is_made_on_the_replays_cluster(workload: str, own_registry: None) -> None:
    """An online policy plug-in replays as itself: ``make`` gets the replay's cluster as a nimp
    instance (every machine of the fat tree idle, P of the empty cluster, the workload's first
    job), the seed and its parameters; the replay counts the jobs it has not started from its
    decisions (the ``waiting`` series), whatever the plug-in keeps."""
    from optkit import registry
    from optkit.formulation import OnlinePolicyPlugin
    from optkit.formulations.nimp.online import HivedPolicy
    from optkit.formulations.nimp.replay import (ClusterState, load_workload, plugin_policy, replay, summarize)

    made: list[tuple[Any, Any, Any]] = []

    class Quiet(HivedPolicy):
        name = "quiet"
        waiting = -1  # what the plug-in says is not what the replay reports

    def make(instance: Any, *, seed: Any = None, spread: int = 0) -> Quiet:
        made.append((instance, seed, spread))
        return Quiet()

    registry.register_algorithm(OnlinePolicyPlugin("nimp", "quiet", make, "HiveD under another name"))
    jobs, topo, cfg = load_workload(workload)
    pol = plugin_policy("quiet", jobs, topo, cfg, seed=3, params={"spread": 2})
    inst, seed, spread = made[0]
    assert (seed, spread) == (3, 2) and pol.name == "quiet"
    assert [(m.gpus, m.idle_gpus) for m in inst.machines] == [(8, 8)] * topo.machines
    assert float(inst.capacity[0, 1]) == ClusterState(topo, cfg).pair_capacity_bytes()
    assert (inst.job.workers, inst.job.model, inst.job.param_bytes) == (jobs[0].workers, jobs[0].model,
                                                                        jobs[0].param_bytes)
    res = replay(jobs, pol, topo=topo, config=cfg)
    own = replay(jobs, HivedPolicy(), topo=topo, config=cfg)
    assert [j["machine_of_worker"] for j in res.jobs] == [j["machine_of_worker"] for j in own.jobs]
    assert res.series["waiting"].tolist() == own.series["waiting"].tolist() and min(res.series["waiting"]) >= 0
    assert summarize(res)["used_machines_avg"] == summarize(own)["used_machines_avg"]
    s = simulate_cli(workload, policy="quiet", seed=3)
    assert s["policy"] == "quiet" and s["jobs"] == 6


def test_the_scheduler_checks_every_pair_capacity_its_policy_reads() -> None:
    """A driver's P may be a function of the moment (as the replay's is); the scheduler checks
    what the policy reads too, not only the first reading: a P that turns negative after the
    scheduler's own check is refused, naming the field, where the bare policy would trust it."""
    from optkit.formulations.nimp import OnlineScheduler

    calls: list[int] = []

    def p() -> np.ndarray:
        calls.append(1)
        return np.array([[0.0, 1e9], [1e9, 0.0]]) * (1 if len(calls) == 1 else -1)

    s = OnlineScheduler("titan", nodes={0: 4, 1: 4})
    s.on_arrival(Job("j", 0.0, 6, param_bytes=1e8), 0.0)
    with pytest.raises(InputError) as err:
        s.decide(0.0, ClusterView.of_arrays(np.array([4, 4]), np.array([4, 4]), pair_capacity=p))
    assert err.value.field == "cluster.pair_capacity" and "[0][1] = " in str(err.value) and len(calls) == 2


def test_phases_of_is_the_collectives_phases() -> None:
    """The cached phases are the model's: ring or halving-doubling by name (keys no other test
    asks for, so the cache is filled here)."""
    from optkit.formulations.nimp.model import halving_doubling_phases, ring_phases
    from optkit.formulations.nimp.online import phases_of

    assert phases_of(3, "ring", 12345.0) == ring_phases(3, 12345.0)
    assert phases_of(4, "halving-doubling", 54321.0) == halving_doubling_phases(4, 54321.0)
    assert phases_of(4, "ring", 54321.0) == ring_phases(4, 54321.0) != halving_doubling_phases(4, 54321.0)


def test_a_job_that_synchronises_nothing_never_binds_p() -> None:
    """K = 0 (allowed: a job whose workers exchange no bytes) splits over two machines under P = 0
    without relaxing P: its phases carry 0 bytes."""
    pol = TitanPolicy()
    pol.on_arrival(Job("z", 0.0, 2, param_bytes=0.0), 0.0)
    [d] = pol.decide(0.0, ClusterView.of_arrays(np.array([1, 1]), np.array([2, 2]), pair_capacity=0.0))
    assert sorted(d.replicas[0]) == [0, 1] and pol.relaxed == 0


def test_uplink_loads_add_up_over_the_running_jobs() -> None:
    """Two racks of three 1-GPU machines, the uplink oversubscribed: A, B and C each span the two
    racks through NICs of their own; each later job sees the uplink load of all the earlier
    ones, so each is slower than the one before."""
    from optkit.formulations.nimp.replay import FatTree, ReplayConfig, replay

    topo = FatTree(racks=2, machines_per_rack=3, gpus_per_machine=1, link_gbps=8.0, oversubscription=3.0)
    res = replay(_jobs(*((j, 0.0, 10.0, 2, "resnet50", False) for j in "ABC")),
                 _Scripted({"A": [0, 3], "B": [1, 4], "C": [2, 5]}), topo=topo,
                 config=ReplayConfig(iteration_s=1.0, phase_budget_s=1.0))
    a, b, c = (j["comm_s_per_sync"] for j in res.jobs)
    assert 0 < a < b < c


def test_titan_counts_only_placements_over_several_machines() -> None:
    """``multi`` counts the placements over more than one machine: a job that fits one machine
    adds nothing, one that must split adds one."""
    pol = TitanPolicy()
    pol.on_arrival(Job("one", 0.0, 2, param_bytes=1e8), 0.0)
    pol.decide(0.0, ClusterView.of_arrays(np.array([4, 4]), np.array([4, 4]), pair_capacity=1e12))
    assert pol.multi == 0
    pol.on_arrival(Job("two", 0.0, 6, param_bytes=1e8), 0.0)
    pol.decide(0.0, ClusterView.of_arrays(np.array([4, 4]), np.array([4, 4]), pair_capacity=1e12))
    assert pol.multi == 1 and pol.bound == 0


def test_a_jobs_collective_when_it_names_none() -> None:
    """``collective=None``: halving-doubling for N a power of two (1 = 2^0 included), ring
    otherwise; a named collective is kept."""
    from optkit.formulations.nimp.online import collective_of

    assert [collective_of(Job("a", 0.0, n)) for n in (1, 2, 3, 4, 6, 8, 12, 16)] == [
        "halving-doubling", "halving-doubling", "ring", "halving-doubling", "ring", "halving-doubling", "ring",
        "halving-doubling"]
    assert collective_of(Job("a", 0.0, 4, collective="ring")) == "ring"


def test_an_array_pair_capacity_of_the_wrong_shape_is_refused() -> None:
    """An array view's P must be M x M: a 3 x 3 array of numbers for two nodes is refused by the
    scheduler, naming the field, the expected shape and the one given."""
    from optkit.formulations.nimp import OnlineScheduler

    s = OnlineScheduler("titan", nodes={0: 4, 1: 4})
    s.on_arrival(Job("j", 0.0, 2, param_bytes=1e8), 0.0)
    with pytest.raises(InputError) as err:
        s.decide(0.0, ClusterView.of_arrays(np.array([4, 4]), np.array([4, 4]), pair_capacity=np.ones((3, 3))))
    assert err.value.field == "cluster.pair_capacity"
    assert str(err.value) == ("nimp: cluster.pair_capacity must be a number, a pair mapping or a 2 x 2 array of "
                              "numbers, got an array of shape (3, 3) and float64")
