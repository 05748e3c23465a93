"""nimp's policies behind the engine's online protocol (formulations/nimp/online.py).

The replay (a driver of the protocol with array views, nodes 0..M-1) gives the same schedule
whether it drives a policy directly or :class:`OnlineScheduler` through a view that names the
machines by strings and gives P as a ``{(a, b): bytes}`` mapping (the by-id path a scheduler
uses); the minimal driver of the docs drives Titan; machines of different sizes are placed
within their sizes; bad input is an InputError naming the field. The formulation's policy driver
(``run_policy``: one instance, its job at time 0) gives the algorithms' placements and refuses a
broken protocol naming the field; AlgorithmPolicy validates a plug-in's placement as evaluate does."""

from __future__ import annotations

import importlib
import json
from typing import Any, Callable, Hashable

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.nimp import OnlineScheduler
from optkit.formulations.nimp.online import POLICIES
from optkit.formulations.nimp.replay import generate_workload, replay, summarize, workload_from_dict
from optkit.online import ClusterView, Decision, Job

test_online = importlib.import_module("tests.test_online")


class ByName:
    """A driver-side shim: the replay's array view shown to ``inner`` with machines named
    ``host-<i>`` and P as a pair mapping (or the number), its decisions renamed back."""

    def __init__(self, inner: OnlineScheduler) -> None:
        self.inner = inner
        self.policy = inner.policy  # the replay reads Titan's counters here
        self.name = inner.name

    def on_arrival(self, job: Job, now: float) -> None:
        self.inner.on_arrival(job, now)

    def on_completion(self, job_id: str, now: float) -> None:
        self.inner.on_completion(job_id, now)

    def next_wakeup(self, now: float) -> float | None:
        return self.inner.next_wakeup(now)

    @property
    def waiting(self) -> int:
        return self.inner.waiting

    def decide(self, now: float, view: ClusterView) -> list[Decision]:
        assert view.free_array is not None and view.size_array is not None
        n = len(view.free_array)
        name = [f"host-{i}" for i in range(n)]
        index = {s: i for i, s in enumerate(name)}

        def capacity() -> Any:
            p = view.pair_capacity()
            if isinstance(p, np.ndarray):
                return {(name[a], name[b]): float(p[a, b]) for a in range(n) for b in range(a + 1, n)}
            return p

        def back(d: Decision) -> None:
            view.reserve(Decision(d.job_id, {index[s]: k for s, k in d.gpus.items()},
                                  [[index[s] for s in d.replicas[0]]] if d.replicas else None))

        named = ClusterView({name[i]: int(view.free_array[i]) for i in range(n)},
                            {name[i]: int(view.size_array[i]) for i in range(n)},
                            pair_capacity=capacity, on_reserve=back)
        return self.inner.decide(now, named)


WORKLOAD = generate_workload(3, jobs=120, racks=2, machines_per_rack=3, gpus_per_machine=4,
                             mean_interarrival_s=300.0)


@pytest.mark.parametrize("policy,readings", [("titan", {}), ("titan", {"titan_algorithm": "pair-grouping"}),
                                             ("elasticflow", {}), ("hived", {}), ("tiresias", {})])
def test_by_name_scheduler_gives_the_replays_schedule(policy: str, readings: dict[str, Any]) -> None:
    jobs, topo, cfg = workload_from_dict(json.loads(json.dumps(WORKLOAD)))
    want = replay(jobs, POLICIES[policy](**readings), topo=topo, config=cfg)
    nodes = {f"host-{i}": topo.gpus_per_machine for i in range(topo.machines)}
    got = replay(jobs, ByName(OnlineScheduler(policy, nodes=nodes, **readings)), topo=topo, config=cfg)
    assert got.jobs == want.jobs
    s1, s2 = summarize(want), summarize(got)
    s1.pop("replay_wall_s"), s2.pop("replay_wall_s")
    assert s1 == s2
    if policy == "titan" and not readings:  # P bound placements here: the mapping path was exercised
        assert want.extra["titan_bandwidth_bound"] > 0


def test_minimal_driver_drives_titan_on_mixed_sizes() -> None:
    """The docs' driver (no slots, no network: P infinite) on machines of 8, 4 and 2
    GPUs: FIFO order, each start within the free GPUs of each machine."""
    drive: Callable[..., dict[str, tuple[float, float]]] = test_online.DRIVE
    nodes: dict[Hashable, int] = {"big": 8, "mid": 4, "small": 2}
    jobs = [Job("a", 0.0, 6, seq=0, param_bytes=1e8), Job("b", 0.0, 6, seq=1, param_bytes=1e8),
            Job("c", 1.0, 2, seq=2, param_bytes=1e8), Job("d", 2.0, 14, seq=3, param_bytes=1e8)]
    run = {"a": 10.0, "b": 5.0, "c": 1.0, "d": 3.0}
    seen: list[Decision] = []
    sched = OnlineScheduler("titan", nodes=nodes)

    def run_time(d: Decision) -> float:
        seen.append(d)
        assert sum(d.gpus.values()) == len(d.replicas[0])
        return run[d.job_id]

    got = drive(sched, jobs, nodes, run_time, slot=0.0)
    # a on big (6 of 8); b needs 6: 2 on big + 4 on mid; c fits on small at 1; d (all 14) waits
    # for a (10) and b (5) and c (2)
    assert got == {"a": (0.0, 10.0), "b": (0.0, 5.0), "c": (1.0, 2.0), "d": (10.0, 13.0)}
    by = {d.job_id: dict(d.gpus) for d in seen}
    assert by["a"] == {"big": 6} and by["b"] == {"big": 2, "mid": 4} and by["c"] == {"small": 2}
    assert by["d"] == {"big": 8, "mid": 4, "small": 2}


def test_titan_respects_a_pair_mapping_by_name() -> None:
    """Two idle hosts of 2 GPUs and one of 4 with 2 free; a 4-worker ring of K = 400 MB (100 MB per
    pair per phase). Under P = 50 MB nothing split meets P, so Titan relaxes P and counts it."""
    s = OnlineScheduler("titan", nodes={"x": 4, "y": 2, "z": 2})
    s.on_arrival(Job("r", 0.0, 4, param_bytes=4e8, collective="ring"), 0.0)
    pairs = {("x", "y"): 5e7, ("x", "z"): 5e7, ("y", "z"): 5e7}
    [d] = s.decide(0.0, ClusterView({"x": 2, "y": 2, "z": 2}, {"x": 4, "y": 2, "z": 2}, pair_capacity=pairs))
    assert sum(d.gpus.values()) == 4 and s.policy.relaxed == 1  # type: ignore[attr-defined]
    s2 = OnlineScheduler("titan", nodes={"x": 4, "y": 2, "z": 2})
    s2.on_arrival(Job("r", 0.0, 4, param_bytes=4e8, collective="ring"), 0.0)
    loose = {k: 1e9 for k in pairs}
    [d2] = s2.decide(0.0, ClusterView({"x": 2, "y": 2, "z": 2}, {"x": 4, "y": 2, "z": 2}, pair_capacity=loose))
    assert s2.policy.relaxed == 0 and d2.gpus.get("x") == 2  # type: ignore[attr-defined]  # no idle host is opened


def _arrive(s: OnlineScheduler, *jobs: Job) -> None:
    for j in jobs:
        s.on_arrival(j, j.release)


VIEW = ClusterView({"a": 8}, {"a": 8})
ROWS: list[tuple[str, Callable[[], Any], str]] = [
    ("an unknown policy", lambda: OnlineScheduler("srpt", nodes={"a": 8}), "policy"),
    ("no nodes", lambda: OnlineScheduler("titan", nodes={}), "nodes"),
    ("a node of no GPUs", lambda: OnlineScheduler("titan", nodes={"a": 0}), "nodes['a']"),
    ("an unknown reading", lambda: OnlineScheduler("hived", nodes={"a": 8}, tau=3), "readings"),
    ("a bad reading value", lambda: OnlineScheduler("titan", nodes={"a": 8}, titan_step2="nope"), "titan_step2"),
    ("a job larger than the cluster", lambda: _arrive(OnlineScheduler("hived", nodes={"a": 8}),
                                                      Job("big", 0.0, 9, duration=1.0)), "job.gpus"),
    ("a duplicate arrival", lambda: _arrive(OnlineScheduler("hived", nodes={"a": 8}), Job("x", 0.0, 1, duration=1.0),
                                            Job("x", 1.0, 1, duration=1.0)), "job.id"),
    ("Titan without K", lambda: _arrive(OnlineScheduler("titan", nodes={"a": 8}), Job("x", 0.0, 2, duration=1.0)),
     "job.param_bytes"),
    ("a view naming other nodes", lambda: OnlineScheduler("hived", nodes={"a": 8}).decide(
        0.0, ClusterView({"b": 8}, {"b": 8})), "cluster.free"),
    ("a view with another size", lambda: OnlineScheduler("hived", nodes={"a": 8}).decide(
        0.0, ClusterView({"a": 4}, {"a": 4})), "cluster.size['a']"),
    ("more free GPUs than the node has", lambda: OnlineScheduler("hived", nodes={"a": 8}).decide(
        0.0, ClusterView({"a": 9}, {"a": 8})), "cluster.free['a']"),
    ("a pair capacity that is not a number", lambda: _titan_with_capacity("wide"), "cluster.pair_capacity"),
    ("a pair mapping missing a pair", lambda: _titan_with_capacity({("a", "b"): 1e9}), "cluster.pair_capacity"),
]


def _titan_with_capacity(cap: Any) -> None:
    s = OnlineScheduler("titan", nodes={"a": 2, "b": 2, "c": 2})
    s.on_arrival(Job("x", 0.0, 4, param_bytes=1e8), 0.0)
    s.decide(0.0, ClusterView({"a": 2, "b": 2, "c": 2}, {"a": 2, "b": 2, "c": 2}, pair_capacity=cap))


@pytest.mark.parametrize("what,call,field", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input_names_the_field(what: str, call: Callable[[], Any], field: str) -> None:
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field == field, what
    assert err.value.problem == "nimp" or field.startswith("titan_"), what


# ----------------------------------------------------------------------------- the policy driver (run_policy)
@pytest.mark.parametrize("policy", ["titan", "elasticflow", "hived", "tiresias"])
def test_run_policy_gives_the_algorithms_placement(policy: str) -> None:
    """On every tiny instance where the algorithm entry places the job, the formulation's policy
    driver run on the same rule as an online policy places it the same way (the job arrives at 0
    on the instance's machines and P, with the file's ``placement_sensitive`` flag, which
    Tiresias reads before the model name), and solve scores the driver's placement with evaluate."""
    from optkit import registry
    from optkit.formulations.nimp.generate import SUITES
    from optkit.formulations.nimp.model import NimpInstance
    from optkit.solve import solve

    f = registry.get("nimp")
    compared = 0
    for _, d in SUITES["tiny"].build():
        inst = NimpInstance.from_dict(d)
        want = solve("nimp", inst, policy)
        if want.solution is None:
            continue
        got = f.run_policy(inst, POLICIES[policy]())
        assert got.status.value == "feasible" and got.solution == want.solution
        compared += 1
    assert compared >= 20


class _Scripted:
    """A policy that waits ``waits`` wake-ups (one second apart), then returns ``decision(job)``."""

    def __init__(self, decision: Callable[[Job], list[Decision]], waits: int = 0, wake: Any = "next") -> None:
        self.decision, self.waits, self.wake, self.job = decision, waits, wake, None
        self.calls: list[float] = []

    def on_arrival(self, job: Job, now: float) -> None:
        self.job = job

    def on_completion(self, job_id: str, now: float) -> None:
        pass

    def decide(self, now: float, cluster: ClusterView) -> list[Decision]:
        self.calls.append(now)
        return [] if len(self.calls) <= self.waits else self.decision(self.job)

    def next_wakeup(self, now: float) -> Any:
        return now + 1.0 if self.wake == "next" else self.wake


_TWO = {"problem": "nimp", "machines": [{"gpus": 4, "idle_gpus": 2}, {"gpus": 4, "idle_gpus": 4}],
        "pair_capacity_bytes": 0.0, "job": {"workers": 3, "collective": "ring", "param_bytes": 1e8}}


@pytest.fixture
def own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plug-ins registered in the test are undone after it."""
    from optkit import registry

    monkeypatch.setattr(registry, "_registered", dict(registry.all_formulations()))
    monkeypatch.setattr(registry, "_plugins", {p: dict(a) for p, a in registry._plugins.items()})


def test_run_policy_follows_wake_ups_and_reads_gpus_only_decisions(own_registry: None) -> None:
    """A policy that starts nothing at 0 and asks to be woken is called again at its wake-up; a
    decision with ``gpus`` only is expanded worker by worker; P = 0 reaches the policy as the
    matrix (the driver passes a scalar 0 as the matrix); solve's evaluate then rejects a split job (no cross
    traffic allowed)."""
    from optkit import registry
    from optkit.formulation import OnlinePolicyPlugin
    from optkit.formulations.nimp.model import NimpInstance
    from optkit.formulations.nimp.online import run_policy
    from optkit.solve import solve

    inst = NimpInstance.from_dict(_TWO)
    p = _Scripted(lambda job: [Decision(job.id, {1: 3})], waits=2)
    res = run_policy(inst, p)
    assert p.calls == [0.0, 1.0, 2.0] and res.info["start_s"] == 2.0
    assert res.status.value == "feasible" and res.solution == {"machine_of_worker": [1, 1, 1]}

    seen: list[Any] = []

    class Split(_Scripted):
        def decide(self, now: float, cluster: ClusterView) -> list[Decision]:
            seen.append(cluster.pair_capacity())
            return [Decision(self.job.id, {0: 2, 1: 1})]

    res = run_policy(inst, Split(lambda job: []))
    assert isinstance(seen[0], np.ndarray) and not seen[0].any()
    assert res.solution == {"machine_of_worker": [0, 0, 1]}
    registry.register_algorithm(OnlinePolicyPlugin("nimp", "split", lambda i, *, seed=None: Split(lambda job: []),
                                                   "2 + 1"))
    scored = solve("nimp", inst, "split")
    assert scored.status.value == "error" and "exceed P = 0 B" in scored.message


@pytest.mark.parametrize("make,status_or_field", [
    (lambda: _Scripted(lambda j: [], wake=None), "no_solution"),
    (lambda: _Scripted(lambda j: [], wake=0.0), "next_wakeup"),
    (lambda: _Scripted(lambda j: [Decision("other", {1: 3}, [[1, 1, 1]])]), "decision.job_id"),
    (lambda: _Scripted(lambda j: [Decision(j.id, {1: 3}, [[1, 1, 7]])]), "decision.replicas"),
    (lambda: _Scripted(lambda j: [Decision(j.id, {1: 2})]), "decision.gpus"),
    (lambda: _Scripted(lambda j: [Decision(j.id, {1: 2}, [[1, 1, 0]])]), "decision.gpus"),
])
def test_run_policy_refuses_a_broken_protocol(make: Callable[[], Any], status_or_field: str) -> None:
    """A policy that never starts the job: ``no_solution``; one that breaks the protocol: an
    InputError naming the field (a wake-up not after now, another job, a node that is not a
    machine, too few workers, gpus that do not count the replicas)."""
    from optkit.formulations.nimp.model import NimpInstance
    from optkit.formulations.nimp.online import run_policy

    inst = NimpInstance.from_dict(_TWO)
    if status_or_field == "no_solution":
        assert run_policy(inst, make()).status.value == "no_solution"
        return
    with pytest.raises(InputError, match=rf"^nimp: {status_or_field} must "):
        run_policy(inst, make())


def test_run_policy_on_too_few_idle_gpus_is_infeasible() -> None:
    from optkit.formulations.nimp.model import NimpInstance
    from optkit.formulations.nimp.online import run_policy

    inst = NimpInstance.from_dict({**_TWO, "job": {**_TWO["job"], "workers": 7}})
    assert run_policy(inst, _Scripted(lambda j: [])).status.value == "infeasible"


# ----------------------------------------------------------------------------- AlgorithmPolicy's validation
def test_algorithm_policy_relaxes_p_for_a_placement_that_breaks_it(own_registry: None) -> None:
    """A plug-in whose placement breaks P is asked again with P relaxed (counted in ``relaxed``);
    one whose placement overfills a machine even then is a RuntimeError naming it and the job.
    The O(workers) validation decides as evaluate does."""
    from optkit import registry
    from optkit.formulation import Algorithm
    from optkit.formulations.nimp.model import evaluate, solution_dict
    from optkit.formulations.nimp.online import AlgorithmPolicy
    from optkit.result import Result, Status

    given: list[Any] = []

    def split(instance: Any, *, objective: str, time_limit: Any, seed: Any) -> Result:
        given.append(instance.capacity.copy())
        return Result(Status.FEASIBLE, solution=solution_dict([0, 0, 1]))

    def overfill(instance: Any, *, objective: str, time_limit: Any, seed: Any) -> Result:
        return Result(Status.FEASIBLE, solution=solution_dict([0, 0, 0]))

    for name, fn in (("split", split), ("overfill", overfill)):
        registry.register_algorithm(Algorithm(name, fn, "heuristic", name, (), problem="nimp"))
    job = Job("j", 0.0, 3, param_bytes=1e8, collective="ring")
    idle, gpus = np.array([2, 4]), np.array([4, 4])
    for p, relaxed in ((1e6, 1), (1e9, 0)):  # 1e6 B < one ring pair's K/N: the split breaks P
        pol = AlgorithmPolicy("split")
        pol.on_arrival(job, 0.0)
        d = pol.decide(0.0, ClusterView.of_arrays(idle, gpus, pair_capacity=p))
        assert d[0].replicas == [[0, 0, 1]] and pol.relaxed == relaxed
        inst = pol.instance(job, idle, gpus, p)
        assert evaluate(inst, solution_dict([0, 0, 1])).feasible == (relaxed == 0)
    assert given[0][0, 1] == 1e6 and given[1][0, 1] > 2 * 3 * 1e8  # asked again with P relaxed
    pol = AlgorithmPolicy("overfill")
    pol.on_arrival(job, 0.0)
    with pytest.raises(RuntimeError, match="policy overfill found only placements that break Eq. \\(1\\) for job j"):
        pol.decide(0.0, ClusterView.of_arrays(idle, gpus, pair_capacity=1e9))
