"""nimp's replay, its network state, its online policies and ``place`` where the other tests do not
look (the survivors of the mutation protocol at e25f5ca in replay.py, network.py, online.py and
place.py): each test is one fact of the code's contract, computed by hand on a tiny instance.

* network.py: the traffic of a placement per distinct phase with its multiplicity (ring and
  halving-doubling, by hand); P follows a NIC load change after the matrix is built.
* place.py: a machine that skipped its own check (built inside ``trusted()``) is still refused by
  ``place`` with the field named by its node id (the module docstring).
* online.py: what ``run_policy`` hands the policy and reports; a plug-in behind AlgorithmPolicy
  sees the relaxed, finite P when the view has none, and its status and message when it fails;
  a FIFO subclass's ``place`` gets the view for a single-node job; the FIFO check of a job;
  Tiresias' ``first-fit`` reading; Titan's ``bound`` counter over two jobs.
* replay.py: ``cluster_instance`` of an empty workload; ``generate_workload``'s worker sizes and
  config; ``workload_from_dict``'s defaults and message; ``simulate_cli``'s field and summary;
  ``summarize`` on a replay that starts nothing and on samples that span no time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.nimp.model import Job as NimpJob, Machine, NimpInstance, solution_dict
from optkit.formulations.nimp.network import ClusterState, traffic
from optkit.formulations.nimp.online import (AlgorithmPolicy, ElasticflowPolicy, FifoPolicy, TiresiasPolicy, TitanPolicy,
                                             run_policy)
from optkit.formulations.nimp.place import place
from optkit.formulations.nimp.replay import (FatTree, ReplayConfig, ReplayJob, ReplayResult, cluster_instance,
                                             generate_workload, replay, simulate_cli, summarize, workload_from_dict)
from optkit.online import ClusterView, Decision, Job
from optkit.result import Result, Status
from optkit.validation import trusted
from tests.test_nimp_online_rules import own_registry  # noqa: F401 (the fixture: plug-ins registered in a test are undone)


def _register(name: str, fn: Any) -> None:
    from optkit import registry
    from optkit.formulation import Algorithm

    registry.register_algorithm(Algorithm(name, fn, "heuristic", name, (), problem="nimp"))


# ----------------------------------------------------------------------------- network.py
def _rj(collective: str, k: float) -> ReplayJob:
    return ReplayJob("t", 0.0, 1.0, 4, "custom", k, collective)


def test_traffic_counts_each_distinct_phase_with_its_multiplicity() -> None:
    """Four workers, two on machine 0 and two on machine 1 (one rack), K = 3.2e8 B (a K no other
    test uses, so the phase pattern is built here). Ring: 2(N-1) = 6 phases of pairs {0,1},
    {1,2}, {2,3}, {0,3} at K/4 = 8e7 B; {1,2} and {0,3} cross: 6 x 2 x 8e7 = 9.6e8 B, each NIC
    carries 2 x 8e7 per phase. Halving-doubling: phases j = 1, 2, 2, 1; j = 1 pairs {0,2}, {1,3}
    at K/2 = 1.6e8 (both cross), j = 2 pairs {0,1}, {2,3} at K/4 (neither): 2 x 2 x 1.6e8 =
    6.4e8 B."""
    m, rack = np.array([0, 0, 1, 1]), np.array([0, 0, 0, 0])
    cross, per = traffic(_rj("ring", 3.2e8), m, rack, 4, 1)
    assert cross == pytest.approx(9.6e8)
    assert len(per) == 1 and per[0][2] == 6 and per[0][1] is None
    assert per[0][0].tolist() == pytest.approx([1.6e8, 1.6e8, 0.0, 0.0])
    cross, per = traffic(_rj("halving-doubling", 3.2e8), m, rack, 4, 1)
    assert cross == pytest.approx(6.4e8)
    assert len(per) == 1 and per[0][2] == 2
    assert per[0][0].tolist() == pytest.approx([3.2e8, 3.2e8, 0.0, 0.0])


def test_pair_capacity_follows_a_nic_load_added_after_the_matrix_is_built() -> None:
    """One rack of 3 machines, B = 8 Gbps = 1e9 B/s, phase budget 0.5 s: P = min(b_s, b_s') x 0.5.
    NIC load 4e8 B/s on machine 0: b = (6e8, 1e9, 1e9). Then 7e8 on machine 1: b = (6e8, 3e8,
    1e9), so P{1,2} = 1.5e8 and P{0,2} = 3e8. Both loads removed: the empty cluster's number,
    min(B, U) x 0.5 = 5e8."""
    st = ClusterState(FatTree(1, 3, 2, 8.0), ReplayConfig(1.0, 0.5))
    st.add_load(np.array([4e8, 0.0, 0.0]), None, +1.0)
    p = st.pair_capacity_bytes()
    assert p[0, 1] == pytest.approx(3e8) and p[1, 2] == pytest.approx(5e8)
    st.add_load(np.array([0.0, 7e8, 0.0]), None, +1.0)
    p = st.pair_capacity_bytes()
    assert p[1, 2] == pytest.approx(1.5e8) and p[0, 1] == pytest.approx(1.5e8) and p[0, 2] == pytest.approx(3e8)
    st.add_load(np.array([4e8, 7e8, 0.0]), None, -1.0)
    assert st.pair_capacity_bytes() == pytest.approx(5e8)


# ----------------------------------------------------------------------------- place.py
def test_place_refuses_an_unchecked_machine_naming_it_by_its_node_id() -> None:
    """A Machine built inside ``trusted()`` skips its own check; ``place`` checks it as an
    instance file's ``machines[i]`` and names it by its node id."""
    with trusted():
        bad = Machine(4, 6)
    with pytest.raises(InputError) as err:
        place(NimpJob(2, "ring", 1e8), {"a": Machine(4, 2), "b": bad}, 1e8)
    assert err.value.field == "machines['b'].idle_gpus" and err.value.message == "must be <= gpus (4), got 6"


# ----------------------------------------------------------------------------- online.py
class _Recording(TitanPolicy):
    def __init__(self) -> None:
        super().__init__()
        self.arrived: list[Job] = []

    def on_arrival(self, job: Job, now: float) -> None:
        self.arrived.append(job)
        super().on_arrival(job, now)


def test_run_policy_delivers_job_named_job_and_reports_the_policy() -> None:
    """The instance's job arrives as ``Job("job", 0.0, N, ...)`` (run_policy's Notes); the
    result's info names the policy and the start time."""
    inst = NimpInstance.from_dict({"problem": "nimp", "pair_capacity_bytes": 5e7,
                                   "machines": [{"gpus": 8, "idle_gpus": 6}, {"gpus": 8, "idle_gpus": 8}],
                                   "job": {"workers": 4, "collective": "ring", "param_bytes": 1e8}})
    pol = _Recording()
    res = run_policy(inst, pol)
    assert res.info == {"start_s": 0.0, "policy": "titan"}
    [job] = pol.arrived
    assert (job.id, job.release, job.gpus, job.param_bytes) == ("job", 0.0, 4, 1e8)


@pytest.mark.usefixtures("own_registry")
def test_a_plug_in_gets_the_relaxed_finite_p_from_a_view_without_one() -> None:
    """A view without a pair capacity (no bandwidth constraint): the plug-in's instance has P =
    2NK + 1 = 2 x 2 x 1e8 + 1 bytes, a finite number as an instance file needs, and no relaxation
    is counted."""
    seen: list[float] = []

    def rec(instance: Any, *, objective: str, time_limit: Any, seed: Any) -> Result:
        seen.append(float(instance.capacity[0, 1]))
        return Result(Status.FEASIBLE, solution=solution_dict([0] * instance.N))

    _register("rec", rec)
    pol = AlgorithmPolicy("rec")
    pol.on_arrival(Job("j", 0.0, 2, param_bytes=1e8), 0.0)
    [d] = pol.decide(0.0, ClusterView.of_arrays(np.array([4, 4]), np.array([4, 4])))
    assert d.replicas == [[0, 0]] and seen == [4e8 + 1] and pol.relaxed == 0


@pytest.mark.usefixtures("own_registry")
def test_a_failing_plug_in_is_named_with_its_status_and_message() -> None:
    def empty(instance: Any, *, objective: str, time_limit: Any, seed: Any) -> Result:
        return Result(Status.NO_SOLUTION, message="no node left")

    _register("empty", empty)
    pol = AlgorithmPolicy("empty")
    pol.on_arrival(Job("j", 0.0, 2, param_bytes=1e8), 0.0)
    with pytest.raises(RuntimeError) as err:
        pol.decide(0.0, ClusterView.of_arrays(np.array([4, 4]), np.array([4, 4]), pair_capacity=1e9))
    assert str(err.value).endswith("though 8 GPUs are idle: no_solution no node left")


class _LowestIndex(FifoPolicy):
    """A user's FIFO rule (``place`` picks the machines, the view for what else it reads): every
    worker on the lowest-index machine that holds one; it keeps the P each call saw."""

    name = "lowest"

    def __init__(self) -> None:
        super().__init__()
        self.caps: list[Any] = []

    def place(self, job: Job, idle: np.ndarray, gpus: np.ndarray, cluster: ClusterView) -> list[int]:
        self.caps.append(cluster.pair_capacity())
        s = int(np.flatnonzero(idle > 0)[0])
        return [s] * job.gpus


def test_a_fifo_rule_gets_the_view_for_a_single_node_job() -> None:
    """A single-node job goes to the rule's ``place`` on the machines that hold it (machine 0,
    with 2 idle GPUs, shown full), with the view."""
    pol = _LowestIndex()
    pol.on_arrival(Job("s", 0.0, 3, param_bytes=1e8, single_node=True), 0.0)
    [d] = pol.decide(0.0, ClusterView.of_arrays(np.array([2, 4]), np.array([4, 4]), pair_capacity=1e9))
    assert d.replicas == [[1, 1, 1]] and pol.caps == [1e9]


def test_a_fifo_policy_refuses_a_job_that_is_not_an_online_job() -> None:
    with pytest.raises(InputError) as err:
        ElasticflowPolicy().on_arrival({"id": "j", "gpus": 2}, 0.0)  # type: ignore[arg-type]
    assert err.value.field == "job" and err.value.message == "must be an optkit.online.Job, got dict"


def test_tiresias_first_fit_fills_machines_in_index_order() -> None:
    """An insensitive job (resnet50) under ``first-fit``: idle (2, 3, 5, 8), 4 workers -> 2 on
    machine 0, 2 on machine 1 (``emptiest`` would start on machine 3)."""
    pol = TiresiasPolicy(tiresias_spread="first-fit")
    pol.on_arrival(Job("j", 0.0, 4, model="resnet50", param_bytes=1e8), 0.0)
    [d] = pol.decide(0.0, ClusterView.of_arrays(np.array([2, 3, 5, 8]), np.array([8, 8, 8, 8])))
    assert d.replicas == [[0, 0, 1, 1]]


def test_titan_counts_every_job_whose_placement_p_changed() -> None:
    """Idle (4, 4, 8, 8) of 8 GPUs, P = 0 (no byte may cross machines), two 8-worker rings:
    without P each would take the two non-idle machines 0 and 1 (opening no idle machine), with P
    each opens an idle machine whole: 2 and then 3. Both count in ``bound`` and ``multi``; none
    is relaxed."""
    pol = TitanPolicy()
    for i in (1, 2):
        pol.on_arrival(Job(f"j{i}", 0.0, 8, param_bytes=1e8, collective="ring"), 0.0)
    ds = pol.decide(0.0, ClusterView.of_arrays(np.array([4, 4, 8, 8]), np.array([8] * 4), pair_capacity=0.0))
    assert [d.replicas for d in ds] == [[[2] * 8], [[3] * 8]]
    assert (pol.bound, pol.multi, pol.relaxed) == (2, 2, 0)


# ----------------------------------------------------------------------------- replay.py
def test_cluster_instance_of_an_empty_workload() -> None:
    """Every machine idle, P of the empty cluster (min(B, U) x 0.05 s, B = 100 Gbps = 1.25e10 B/s,
    U = 2B) and a 1-worker ring job of K = 1 byte."""
    inst = cluster_instance([], FatTree(1, 2, 4), ReplayConfig())
    assert inst.to_dict() == {"problem": "nimp", "machines": [{"gpus": 4, "idle_gpus": 4}] * 2,
                              "pair_capacity_bytes": 6.25e8,
                              "job": {"workers": 1, "collective": "ring", "param_bytes": 1.0}}


def test_generated_workers_are_the_sizes_the_cluster_holds() -> None:
    """1 rack x 2 machines x 8 GPUs = 16 GPUs: the sizes {1, 2, 4, 8, 16} are drawn (200 jobs,
    seed 0), 32 never."""
    d = generate_workload(0, jobs=200, racks=1, machines_per_rack=2, gpus_per_machine=8)
    assert {j["workers"] for j in d["jobs"]} == {1, 2, 4, 8, 16}


def test_workload_config_defaults_and_a_generated_workload_uses_them() -> None:
    """Without ``iteration_s`` and ``phase_budget_s`` a workload gets ReplayConfig's defaults
    (1 s, 0.05 s); a generated workload states the same."""
    d = {"problem": "nimp", "kind": "replay", "jobs": [{"id": "a", "submit": 0.0, "duration": 5.0, "workers": 1}]}
    assert workload_from_dict(d)[2] == ReplayConfig(1.0, 0.05)
    assert workload_from_dict(generate_workload(0, jobs=3))[2] == ReplayConfig(1.0, 0.05)


def test_workload_without_jobs_says_what_a_job_is() -> None:
    with pytest.raises(InputError) as err:
        workload_from_dict({"problem": "nimp", "kind": "replay", "jobs": []})
    assert err.value.field == "jobs"
    assert err.value.message == ("must be a non-empty list of {id, submit, duration, workers[, model, param_bytes, "
                                 "single_node]}")


def test_simulate_cli_names_the_policy_field_and_the_workload(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        simulate_cli(str(tmp_path / "none.json"), policy="nope")
    assert err.value.field == "--policy"
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"problem": "nimp", "kind": "replay",
                                "cluster": {"racks": 1, "machines_per_rack": 2, "gpus_per_machine": 2},
                                "jobs": [{"id": "a", "submit": 0.0, "duration": 10.0, "workers": 1},
                                         {"id": "b", "submit": 5.0, "duration": 10.0, "workers": 2}]}))
    s = simulate_cli(str(path), policy="titan")
    assert s["workload"] == str(path) and s["jobs"] == 2 and s["status"] == "feasible"


class _Never:
    """An online policy that starts nothing."""

    name = "never"

    def on_arrival(self, job: Job, now: float) -> None:
        pass

    def on_completion(self, job_id: str, now: float) -> None:
        pass

    def decide(self, now: float, cluster: ClusterView) -> list[Decision]:
        return []

    def next_wakeup(self, now: float) -> None:
        return None


def test_summary_of_a_replay_that_starts_nothing_has_no_queueing_delay() -> None:
    jobs = [ReplayJob("a", 0.0, 5.0, 1, "resnet50", 1e8, "ring"), ReplayJob("b", 10.0, 5.0, 1, "resnet50", 1e8, "ring")]
    s = summarize(replay(jobs, _Never(), topo=FatTree(1, 1, 2)))
    assert s["jobs"] == 0 and s["horizon_h"] == pytest.approx(10.0 / 3600.0)
    assert (s["queueing_delay_mean_s"], s["queueing_delay_p95_s"], s["queueing_delay_max_s"]) == (0.0, 0.0, 0.0)


def test_summary_of_samples_spanning_no_time_and_no_arrival_is_zero_not_nan() -> None:
    """Two samples at one instant, neither an arrival: the time averages and the average at
    arrivals are 0.0 (an empty average, as everywhere in ``summarize``), not NaN."""
    one = np.array([5.0, 5.0])
    series = {"t": one, "used": np.ones(2), "busy": 2 * np.ones(2), "cross": np.zeros(2), "running": np.ones(2),
              "price": np.ones(2), "dur_h": np.ones(2), "waiting": np.zeros(2), "arrival": np.zeros(2)}
    s = summarize(ReplayResult([], series, FatTree(1, 1, 2), ReplayConfig(), "p", 0.0))
    assert (s["used_machines_avg"], s["cross_bytes_avg"], s["profit_rate_at_arrivals"]) == (0.0, 0.0, 0.0)
