"""ddlwmp's simulation path (formulations/ddlwmp/simulate.py, sec5.py, a_srpt.py, baselines.py,
online.py): facts a surviving mutant of the sample broke. Written for the mutation score (issue
36 item 5)."""

from __future__ import annotations

from typing import Any

import pytest

from optkit.errors import InputError
from optkit.formulations.ddlwmp import OnlineScheduler
from optkit.formulations.ddlwmp import simulate as sim
from optkit.formulations.ddlwmp.baselines import SPJF
from optkit.formulations.ddlwmp.model import DdlwmpInstance
from optkit.formulations.ddlwmp.online import duration_model
from optkit.online import ClusterView, Decision, Job

NODES = {"n1": 4, "n2": 4}
MODEL = {"allreduce": "ring", "stages": [{"replicas": 2, "fwd_time": 0.1, "bwd_time": 0.1, "in_bytes": 0,
                                          "out_bytes": 0, "param_bytes": 0}]}


def _named(call: Any) -> InputError:
    with pytest.raises(InputError) as info:
        call()
    return info.value


def test_online_scheduler_names_each_bad_call() -> None:
    e = _named(lambda: OnlineScheduler("lifo", nodes=NODES))
    assert e.field == "policy" and str(e) == ("ddlwmp: policy must be one of a-srpt, spjf, spwf, wcs-duration, "
                                              "wcs-workload, wcs-subtime, fifo, got 'lifo'")
    e = _named(lambda: OnlineScheduler("spjf", nodes=NODES, sead=1))
    assert e.field == "sead" and str(e).endswith("its parameters: work_conserving, placer, consolidate")
    e = _named(lambda: OnlineScheduler("a-srpt", nodes=NODES, tau=-1))
    assert e.field == "tau" and e.problem == "ddlwmp"
    s = OnlineScheduler("a-srpt", nodes=NODES, models={"m": MODEL})
    e = _named(lambda: s.on_arrival("x", 0.0))  # type: ignore[arg-type]
    assert e.field == "job" and str(e) == "ddlwmp: job must be an optkit.online.Job, got str"
    e = _named(lambda: s.on_arrival(Job("a", release=0.0, gpus=2), 0.0))
    assert e.field == "job" and str(e) == "ddlwmp: job job a must give exactly one of model and duration (ddlwmp)"
    e = _named(lambda: s.on_arrival(Job("c", release=0.0, gpus=2, model="m", predicted_duration=3.0), 0.0))
    assert e.field == "job.predicted_duration" and str(e).endswith(
        "job c: only a duration job takes a predicted duration (a model job's prediction is predicted_iterations)")
    e = _named(lambda: s.on_arrival(Job("b", release=0.0, gpus=2, duration=5.0, predicted_duration=4.0,
                                        predicted_iterations=2.0), 0.0))
    assert e.field == "job.predicted_duration" and str(e).endswith(
        "job b: give one estimate, predicted_duration (s) or predicted_iterations (of duration), not both")
    two = OnlineScheduler("spjf", nodes=NODES, slot_seconds=2.0)
    e = _named(lambda: two.on_arrival(Job("d", release=0.0, gpus=2, duration=5.0), 1.0))
    assert e.field == "now" and "a multiple of 2 s" in str(e)


def test_a_model_given_as_a_dict_is_built_and_runs() -> None:
    """A 2-GPU model job of 10 iterations at 0.2 s each, on the first node: decided at 0, its
    wake-up a float."""
    s = OnlineScheduler("spjf", nodes=NODES, models={"m": MODEL})
    s.on_arrival(Job("a", release=0.0, gpus=2, model="m", predicted_iterations=10.0), 0.0)
    view = ClusterView(dict(NODES), dict(NODES))
    out = s.decide(0.0, view)
    assert [(d.job_id, d.gpus, d.time_per_iteration) for d in out] == [("a", {"n1": 2}, pytest.approx(0.2))]
    assert out[0].replicas == [["n1", "n1"]]
    w = s.next_wakeup(0.0)
    assert w is None or isinstance(w, float)


def test_duration_jobs_share_a_one_stage_model_of_their_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """Built on first use (the module's cache emptied here, whatever ran before) and shared."""
    from optkit.formulations.ddlwmp import online

    monkeypatch.setattr(online, "_DURATION_MODELS", {})
    name, model = duration_model(3)
    assert duration_model(3)[1] is model
    assert name == "(duration job of 3 GPUs)" and model.n_replicas == 3 and len(model.stages) == 1
    st = model.stages[0]
    assert (st.fwd_time, st.bwd_time, st.in_bytes, st.out_bytes, st.param_bytes) == (0.0, 1.0, 0.0, 0.0, 0.0)


def _two_jobs() -> DdlwmpInstance:
    """Two 2-GPU jobs on one 2-GPU server: 10 iterations of 0.2 s each, released at 0 and 1 s."""
    return DdlwmpInstance.from_dict({"problem": "ddlwmp", "models": {"m": MODEL}, "cluster": {
        "servers": 1, "gpus_per_server": 2, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11},
        "jobs": [{"id": "a", "release": 0, "model": "m", "iterations": 10},
                 {"id": "b", "release": 1, "model": "m", "iterations": 10}]})


class _Nameless:
    """A plug-in online policy that starts every job the moment it arrives on server 0, whether
    or not the GPUs are free (``check`` off in the simulator: the simulator itself must refuse).
    It has no ``name``: the simulator names it by its class."""

    protocol = "optkit.online"

    def __init__(self) -> None:
        self.waiting: list[Job] = []

    def on_arrival(self, job: Job, now: float) -> None:
        self.waiting.append(job)

    def on_completion(self, job_id: str, now: float) -> None:
        pass

    def decide(self, now: float, cluster: ClusterView) -> list[Decision]:
        out = [Decision(j.id, {0: j.gpus}, [[0] * j.gpus], 0.2) for j in self.waiting]
        self.waiting = []
        return out

    def next_wakeup(self, now: float) -> float | None:
        return None


class _Greedy(_Nameless):
    name = "greedy"


def test_the_simulator_refuses_an_over_committed_server() -> None:
    """Job a holds both GPUs over [0, 2) s; the plug-in starts b at 1 s on the same server."""
    with pytest.raises(RuntimeError, match=r"policy greedy over-committed a server at t=1.0 \(job b\)"):
        sim.simulate(_two_jobs(), _Greedy())


def test_simulate_counts_its_instants() -> None:
    """SPJF on the two jobs: instants 0 (a starts), 1 (b arrives, waits), 2 (a frees, b starts) and
    4 (b frees): 4 instants, in ``stats`` and in ``run_policy``'s info."""
    inst = _two_jobs()
    stats: dict[str, Any] = {}
    schedule = sim.simulate(inst, SPJF(inst.cluster, inst.models), stats=stats)
    assert [(e["id"], e["start"]) for e in schedule["jobs"]] == [("a", 0.0), ("b", 2.0)]
    assert stats["instants"] == 4 and stats["wall_time_s"] >= 0.0
    res = sim.run_policy(inst, SPJF(inst.cluster, inst.models))
    assert res.info == {"instants": 4} and res.solution == schedule


def test_simulate_stops_at_its_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clock that advances 1 s per reading: the limit of 0.5 s has passed at the first
    instant, so no job starts and the run raises SimulationTimeout."""
    ticks = iter(range(1_000))
    monkeypatch.setattr(sim._time, "perf_counter", lambda: float(next(ticks)))
    inst = _two_jobs()
    with pytest.raises(sim.SimulationTimeout, match="time limit of 0.5 s reached after 0 starts"):
        sim.simulate(inst, SPJF(inst.cluster, inst.models), time_limit=0.5)


def test_a_srpts_time_tolerance_is_relative_above_one_second() -> None:
    """1e-9 s up to 1 s, 1e-9 relative beyond (in either sign of t)."""
    from optkit.formulations.ddlwmp.a_srpt import _tol

    assert _tol(0.0) == 1e-9 and _tol(0.5) == 1e-9
    assert _tol(2e3) == pytest.approx(2e-6) and _tol(-4e3) == pytest.approx(4e-6)


def test_compare_memoises_each_run_under_what_it_reads(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a memo folder each policy run is stored under namespace ``ddlwmp-policy-run-v2`` and
    the key {policy, the readings it reads, seed, the instance's content hash}: a second
    comparison with another tau runs A-SRPT again and reuses SPJF's run."""
    from optkit import memo
    from optkit.formulations.ddlwmp import sec5
    from optkit.instances import instance_hash

    runs: list[tuple[str, float | None]] = []

    def readout(inst: Any, name: str, readings: Any, seed: int) -> dict[str, Any]:
        runs.append((name, readings.get("tau")))
        return {"total_completion": 10.0 + len(runs)}

    monkeypatch.setattr(sec5, "run_policy_readout", readout)
    inst = _two_jobs()
    h = instance_hash(inst.to_dict())
    with memo.using(tmp_path):
        first = sec5.compare(inst, {"tau": 1.0, "consolidate": True}, 3, policies=("a-srpt", "spjf"))
        second = sec5.compare(inst, {"tau": 2.0, "consolidate": True}, 3, policies=("a-srpt", "spjf"))
    assert runs == [("a-srpt", 1.0), ("spjf", 1.0), ("a-srpt", 2.0)]
    assert first == {"a-srpt": {"total_completion": 11.0}, "spjf": {"total_completion": 12.0}}
    assert second == {"a-srpt": {"total_completion": 13.0}, "spjf": {"total_completion": 12.0}}
    names = {p.name for p in (tmp_path / "ddlwmp-policy-run-v2").iterdir()}
    want = {memo.key_hash("ddlwmp-policy-run-v2", {"policy": p, "readings": sec5.policy_readings(p, {
        "tau": tau, "consolidate": True}), "seed": 3, "instance": h}) + ".json"
        for p, tau in (("a-srpt", 1.0), ("spjf", 1.0), ("a-srpt", 2.0))}
    assert names == want


def test_a_queue_baselines_keywords_are_named() -> None:
    inst = _two_jobs()
    e = _named(lambda: SPJF(inst.cluster, inst.models, work_conserving="yes"))
    assert (e.field, e.problem) == ("work_conserving", "ddlwmp")
    assert str(e) == "ddlwmp: work_conserving must be true, false or None (the policy's own), got 'yes'"
    e = _named(lambda: SPJF(inst.cluster, inst.models, consolidate="maybe"))
    assert (e.field, e.problem) == ("consolidate", "ddlwmp")


def test_a_srpt_behind_the_protocol_asks_to_be_woken() -> None:
    """The class docstring's example: a 3-GPU job of 60 s on two 4-GPU nodes completes in A-SRPT's
    virtual single machine after 3/8 x 60 = 22.5 s: no start at 0, a wake-up at 22.5 (a float),
    the start on one node at 23."""
    s = OnlineScheduler("a-srpt", nodes=NODES)
    s.on_arrival(Job("train-1", release=0.0, gpus=3, duration=60.0), 0.0)
    view = ClusterView(dict(NODES), dict(NODES))
    assert s.decide(0.0, view) == []
    w = s.next_wakeup(0.0)
    assert w == 22.5 and type(w) is float
    out = s.decide(23.0, view)
    assert [(d.job_id, d.gpus, d.replicas, d.time_per_iteration) for d in out] == [
        ("train-1", {"n1": 3}, [["n1", "n1", "n1"]], 60.0)]


def test_the_schedule_states_each_jobs_alpha_and_completion() -> None:
    """SPJF on the two jobs: alpha 0.2 s on the one server, completions 0 + 2 and 2 + 2 s."""
    inst = _two_jobs()
    schedule = sim.simulate(inst, SPJF(inst.cluster, inst.models))
    assert [(e["alpha_s"], e["completion"], e["assignment"]) for e in schedule["jobs"]] == [
        (pytest.approx(0.2), pytest.approx(2.0), [[0, 0]]), (pytest.approx(0.2), pytest.approx(4.0), [[0, 0]])]


def test_a_bad_time_limit_is_named_for_ddlwmp() -> None:
    inst = _two_jobs()
    e = _named(lambda: sim.simulate(inst, SPJF(inst.cluster, inst.models), time_limit=float("nan")))
    assert (e.field, e.problem) == ("time_limit", "ddlwmp")


def test_a_plug_in_policy_is_named_in_the_simulators_messages() -> None:
    """run_online_policy drives any online policy: its ``name``, else its class's name, in the
    simulator's refusal."""
    inst = _two_jobs()
    with pytest.raises(RuntimeError, match=r"^policy greedy over-committed a server at t=1.0 \(job b\)$"):
        sim.run_online_policy(inst, _Greedy())
    with pytest.raises(RuntimeError, match=r"^policy _Nameless over-committed a server"):
        sim.run_online_policy(inst, _Nameless())


def test_simulate_policy_builds_the_policy_it_drives() -> None:
    """SPJF built by the driver (consolidate given) on the two jobs: the same schedule as SPJF
    built by hand, and the policy returned is an SPJF reading that keyword."""
    inst = _two_jobs()
    schedule, policy = sim.simulate_policy(inst, SPJF, seed=0, consolidate=True)
    assert isinstance(policy, SPJF) and policy.consolidate is True
    assert schedule == sim.simulate(inst, SPJF(inst.cluster, inst.models, seed=0, consolidate=True))


def test_job_specs_carry_each_models_tensor_parallel_degree() -> None:
    """The policy's view of each job: id, release, model, g_i, prediction (perfect: n_i), and t."""
    base = _two_jobs().to_dict()
    inst = DdlwmpInstance.from_dict({**base, "cluster": dict(base["cluster"], servers=2), "models": {"m": {
        "allreduce": "ring", "stages": [dict(MODEL["stages"][0], tensor_parallel=2, tp_bytes=1e6)]}}})
    specs = sim.job_specs(inst, perfect=True)
    assert [(s.id, s.release, s.model, s.gpus, s.predicted_iterations, s.tensor_parallel) for s in specs] == [
        ("a", 0.0, "m", 4, 10.0, 2), ("b", 1.0, "m", 4, 10.0, 2)]
    assert [s.tensor_parallel for s in sim.job_specs(_two_jobs())] == [1, 1]
