"""ddlwmp: whole-behaviour tests of the functions where the seed-3 training draw's survivors live
(issue 36 item 5, second round). Each test pins one function's observable behaviour on tiny
inputs: each error's field, problem and exact message, both sides of a comparison, the readings a
runner hands on. Expected values come from the documented rule or a hand computation (in the
comments), or from a second exact route, never from the code under test."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from optkit import deadline
from optkit.errors import InputError
from optkit.formulations.ddlwmp.a_srpt import ASRPT
from optkit.formulations.ddlwmp.catalog import pick_model
from optkit.formulations.ddlwmp.exact import Option, placement_options, schedule_objective
from optkit.formulations.ddlwmp.generate import generate
from optkit.formulations.ddlwmp.model import DdlwmpInstance, evaluate
from optkit.formulations.ddlwmp.placement import Placement, Placer
from optkit.formulations.ddlwmp.policies import ArrivalCheck, ClusterState, JobSpec
from optkit.formulations.ddlwmp.workloads import trace_workload

B_INTER, B_INTRA = 1.25e9, 3e11
PLAIN = {"allreduce": "ring", "stages": [{"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0,
                                          "out_bytes": 0.0, "param_bytes": 1e6}]}
ZERO = {"allreduce": "ring", "stages": [{"replicas": 2, "fwd_time": 0.0, "bwd_time": 0.0, "in_bytes": 0.0,
                                         "out_bytes": 0.0, "param_bytes": 0.0}]}


def _inst(models: dict[str, Any] | None = None, slot: float = 1.0, servers: int = 2, **kw: Any) -> DdlwmpInstance:
    m = models or {"m": PLAIN}
    name = next(iter(m))
    d = {"problem": "ddlwmp", "cluster": {"servers": servers, "gpus_per_server": 4, "inter_bandwidth": B_INTER,
                                          "intra_bandwidth": B_INTRA, "slot_seconds": slot},
         "models": m, "jobs": [{"id": "a", "release": 0.0, "model": name, "iterations": 3}]}
    d.update(kw)
    return DdlwmpInstance.from_dict(d)


class Stop(Exception):
    pass


# ----------------------------------------------------------------------------- catalog.pick_model
def test_pick_model_takes_exact_size_else_largest_smaller_else_names_gpus() -> None:
    cat = {"a2": ("a", "x", 2), "b2": ("b", "x", 2), "c4": ("c", "x", 4)}
    cache: dict[int, list[str]] = {}
    # no 3-GPU configuration: the largest smaller size (2), both of its names the candidates
    assert pick_model(3, cat, np.random.default_rng(0), cache) in ("a2", "b2")
    assert cache == {3: ["a2", "b2"]}
    assert pick_model(4, cat, np.random.default_rng(0)) == "c4"
    with pytest.raises(InputError) as exc:
        pick_model(1, cat, np.random.default_rng(0))
    assert (exc.value.field, exc.value.message) == ("gpus", "no model configuration has at most 1 GPUs")


# ----------------------------------------------------------------------------- generate.generate
def test_generate_names_its_share_and_draw_readings_and_records_a_batch_factor() -> None:
    for kw, field, msg in [
        ({"recurring_share": 1.5}, "recurring_share", "must be a number in [0, 1], got 1.5"),
        ({"single_gpu_draw": "per-user"}, "single_gpu_draw", "must be 'per-group' or 'per-job', got 'per-user'"),
    ]:
        with pytest.raises(InputError) as exc:
            generate(jobs=1, servers=1, predictor=None, seed=0, **kw)
        assert (exc.value.field, exc.value.message) == (field, msg), kw
    # unstated_batch_factor is recorded in meta.params only when it is not the default 1.0
    for factor, shown in [(1.0, False), (2.0, True), (0.5, True)]:
        p = generate(jobs=1, servers=1, predictor=None, seed=0, unstated_batch_factor=factor)["meta"]["params"]
        assert ("unstated_batch_factor" in p) is shown and p.get("unstated_batch_factor", factor) == factor


# ----------------------------------------------------------------------------- workloads.trace_workload
def test_trace_workload_names_gpus_per_server() -> None:
    rec = [{"submission_time": 0.0, "duration": 100.0, "num_gpu": 1}]
    with pytest.raises(InputError) as exc:
        trace_workload(rec, jobs=1, servers=1, load=0.5, predict=False, gpus_per_server=0)
    assert (exc.value.field, exc.value.message) == ("gpus_per_server", "must be an integer >= 1, got 0")


# ----------------------------------------------------------------------------- policies.ArrivalCheck / ClusterState
def test_arrival_check_lists_no_known_model_as_none() -> None:
    with pytest.raises(InputError) as exc:
        ArrivalCheck({}, 8)(JobSpec("j", 0.0, "m", 2))
    assert (exc.value.field, exc.value.problem, exc.value.message) == (
        "job.model", "ddlwmp", "job j: unknown model 'm' (known: none)")


def test_cluster_state_take_refuses_more_than_free_on_one_or_more_servers() -> None:
    msg = "placement takes more GPUs than a server has free"
    for servers, counts in [((0,), (3,)), ((0, 1), (2, 3))]:
        s = ClusterState(np.array([2, 2]), 4)
        with pytest.raises(ValueError) as exc:
            s.take(Placement([], 0.0, servers, counts))
        assert str(exc.value) == msg and list(s.free) == [2, 2]   # nothing taken
    s = ClusterState(np.array([2, 2]), 4)
    s.take(Placement([], 0.0, (0,), (2,)))                              # exactly what is free: taken
    s.take(Placement([], 0.0, (1,), (1,)))
    assert list(s.free) == [0, 1]


# ----------------------------------------------------------------------------- exact.placement_options / schedule_objective
def test_placement_options_names_its_stage_when_the_deadline_passes() -> None:
    inst = _inst()
    ticks = iter([0.0] + [100.0] * 1000)   # the deadline opens at 0 s; every later reading is 100 s
    with deadline.within(1.0, clock=lambda: next(ticks)):
        with pytest.raises(deadline.DeadlineReached) as exc:
            placement_options(inst)
    assert exc.value.stage == "enumerating placement options"


def test_schedule_objective_by_hand_with_two_second_slots() -> None:
    """C_i = start slot * slot_seconds + duration: slot 2 s; job a starts at slot 3 with d = 0.5,
    job b at slot 1 with d = 4 -> C = (6.5, 6); releases 0 and 1."""
    inst = _inst(slot=2.0, jobs=[{"id": "a", "release": 0.0, "model": "m", "iterations": 3},
                                 {"id": "b", "release": 1.0, "model": "m", "iterations": 3}])
    o = [[Option((2, 0), ((0, 0),), 0.1, 9.0, 5), Option((2, 0), ((0, 0),), 0.1, 0.5, 1)],
         [Option((2, 0), ((0, 0),), 0.1, 4.0, 2)]]
    assert schedule_objective(inst, o, [3, 1], [1, 0], "total_completion") == 12.5
    assert schedule_objective(inst, o, [3, 1], [1, 0], "total_flow") == 11.5
    assert schedule_objective(inst, o, [3, 1], [1, 0], "makespan") == 6.5
    assert schedule_objective(inst, o, [3, 1], [0, 0], "makespan") == 15.0


# ----------------------------------------------------------------------------- exact._best_local_assignment
def test_best_local_assignment_past_brute_force_asks_cpsat_for_min_alpha(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past brute force's size the CP-SAT route must minimise alpha (gpu-mapping's run_cpsat
    defaults to the cut objective), seeded, on one worker, without a limit of its own; its proven
    assignment is returned as is; one it did not prove stops at the call's deadline, naming the stage.
    (A stand-in solver: a cold CP-SAT start costs far more than the quarter second a test may take.)"""
    from types import SimpleNamespace

    from optkit.formulations.ddlwmp import exact
    from optkit.formulations.gpu_mapping import exact as gm_exact
    from optkit.result import Status

    inst = _inst()
    seen: list[dict[str, Any]] = []
    answer = SimpleNamespace(status=Status.OPTIMAL, solution={"assignment": [[1, 0]]})

    def no_brute(*a: Any, **k: Any) -> Any:
        raise InputError("instance", "too large")

    def solver(gm: Any, **kw: Any) -> Any:
        seen.append(kw)
        return answer

    monkeypatch.setattr(gm_exact, "brute_force", no_brute)
    monkeypatch.setattr(gm_exact, "run_cpsat", solver)
    assert exact._best_local_assignment(inst.models["m"], inst, (1, 1)) == [[1, 0]]
    (kw,) = seen                                    # no time limit of its own: None, run_cpsat's default
    assert {k: kw[k] for k in ("objective", "seed", "workers")} == {"objective": "alpha", "seed": 0, "workers": 1}
    assert kw.get("time_limit") is None
    answer.status = Status.FEASIBLE
    ticks = iter([0.0] + [100.0] * 10)
    with deadline.within(1.0, clock=lambda: next(ticks)):
        with pytest.raises(deadline.DeadlineReached) as exc:
            exact._best_local_assignment(inst.models["m"], inst, (1, 1))
    assert exc.value.stage == "proving each placement option's best split"


# ----------------------------------------------------------------------------- wiring of the readings
def test_run_a_srpt_perfect_hands_on_its_seed_and_every_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    from optkit.formulations.ddlwmp import algorithms

    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(algorithms, "_run", lambda *a, **kw: calls.append((a, kw)) or "ok")
    inst = _inst()
    assert algorithms.run_a_srpt_perfect(inst, seed=5, time_limit=2.0, tau=0.5, comm_heavy=1.5,
                                         comm_heavy_test="gt", delay_blocks_queue=False,
                                         light_placement="most-free", head_of_line="skip") == "ok"
    (a, kw), = calls
    assert a == (inst, "a-srpt-perfect", True, 2.0, 5)
    assert kw == {"tau": 0.5, "comm_heavy": 1.5, "comm_heavy_test": "gt", "delay_blocks_queue": False,
                  "light_placement": "most-free", "head_of_line": "skip"}


def test_placer_hands_its_seed_and_heavy_edge_readings_to_heavy_edge(monkeypatch: pytest.MonkeyPatch) -> None:
    from optkit.formulations.ddlwmp import placement

    seen: list[dict[str, Any]] = []
    real = placement.heavy_edge_job
    monkeypatch.setattr(placement, "heavy_edge_job", lambda job, cnt, **kw: seen.append(kw) or real(job, cnt, **kw))
    inst = _inst()
    he = {"server_start": "from-placed", "single_gpu_weight": "total"}
    p = Placer(inst.cluster, inst.models, seed=7, **he)
    seen.clear()
    p.place("m", np.array([0, 1]), np.array([1, 1]))
    assert seen == [{"seed": 7, **he}]


def test_policy_for_builds_the_placer_with_the_heavy_edge_readings() -> None:
    from optkit.formulations.ddlwmp.sec5 import policy_for

    he = {"server_start": "from-placed", "single_gpu_weight": "total"}
    pol = policy_for(_inst(), "a-srpt", he, seed=4)
    assert pol.placer.heavy_edge == he and pol.placer.seed == 4


def test_run_policy_readout_simulates_with_seed_and_perfect(monkeypatch: pytest.MonkeyPatch) -> None:
    from optkit.formulations.ddlwmp import sec5

    seen: list[dict[str, Any]] = []

    def sim(inst: Any, cls: Any, **kw: Any) -> Any:
        seen.append(kw)
        raise Stop

    monkeypatch.setattr(sec5, "simulate_policy", sim)
    for name, perfect in [("a-srpt", False), ("a-srpt-perfect", True)]:
        with pytest.raises(Stop):
            sec5.run_policy_readout(_inst(), name, {}, seed=6)
        assert seen[-1]["seed"] == 6 and seen[-1]["perfect"] is perfect


def test_run_policy_readout_inflation_is_one_when_alpha_min_is_zero() -> None:
    """A model with no compute and no bytes: alpha = alpha~min = 0, used = ideal = 0; inflation
    (used / ideal) is read as 1.0, the ratio of a placement no worse than the best."""
    from optkit.formulations.ddlwmp.sec5 import run_policy_readout

    assert run_policy_readout(_inst({"z": ZERO}), "a-srpt", {}, seed=0)["inflation"] == 1.0


# ----------------------------------------------------------------------------- a_srpt.ASRPT.decide / next_wakeup
def _stage(r: int) -> dict[str, Any]:
    return {"replicas": r, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0, "out_bytes": 0.0, "param_bytes": 1e6}


def _asrpt(servers: int, **kw: Any) -> ASRPT:
    """m: 2 replicas (comm-heavy under comm_heavy = 1: split over two servers its alpha exceeds
    alpha~min, both on one server); s: 1 replica. Jobs a, c of m (size 1 iteration), b of s
    (1000 iterations): Ã1 completes a, c, b in that order, all before 100 s."""
    d = {"problem": "ddlwmp", "cluster": {"servers": servers, "gpus_per_server": 4, "inter_bandwidth": B_INTER,
                                          "intra_bandwidth": B_INTRA},
         "models": {"m": {"allreduce": "ring", "stages": [_stage(2)]},
                    "s": {"allreduce": "ring", "stages": [_stage(1)]}},
         "jobs": [{"id": "a", "release": 0.0, "model": "m", "iterations": 3}]}
    inst = DdlwmpInstance.from_dict(d)
    return ASRPT(inst.cluster, inst.models, comm_heavy=1.0, **kw)


def test_a_srpt_starts_a_heavy_job_at_an_empty_delay_loop_and_scans_on() -> None:
    """tau = 0: line 20's loop is empty (last slot = now), so the split heavy job a starts at once
    and the scan goes on to b (free GPUs 1, 1, 1: a takes servers 0 and 1, b server 2)."""
    pol = _asrpt(3, tau=0.0)
    for j in (JobSpec("a", 0.0, "m", 2, predicted_iterations=1), JobSpec("b", 0.0, "s", 1, predicted_iterations=1000)):
        pol.on_arrival(j, 0.0)
    out = pol.decide(100.0, ClusterState(np.array([1, 1, 1]), 4))
    assert out[0].placement.alpha > pol.placer.alpha_min("m")       # heavy and split: line 12 fails
    assert [(o.job_id, o.placement.servers) for o in out] == [("a", (0, 1)), ("b", (2,))] and pol.delayed == 0


@pytest.mark.parametrize("blocks", [True, False])
def test_a_srpt_one_delayed_job_at_a_time_the_next_heavy_one_starts(blocks: bool) -> None:
    """tau = 1000: a is delayed (deadline slot_floor(100 + 1000·size) = 103 s, size 0.00375); with
    delay_blocks_queue the scan stops there; without it c (heavy, split, but a already waits)
    starts as line 20 and the scan goes on to b."""
    pol = _asrpt(4, tau=1000.0, delay_blocks_queue=blocks)
    for j in (JobSpec("a", 0.0, "m", 2, predicted_iterations=1), JobSpec("c", 0.0, "m", 2, predicted_iterations=1),
              JobSpec("b", 0.0, "s", 1, predicted_iterations=1000)):
        pol.on_arrival(j, 0.0)
    out = pol.decide(100.0, ClusterState(np.array([1, 1, 1, 1]), 4))
    assert [(o.job_id, o.placement.servers) for o in out] == ([] if blocks else [("c", (0, 1)), ("b", (2,))])
    assert pol.delayed == 1
    # next wakeup: the delayed job's deadline while it lies strictly after now + 1e-9·max(1, now)
    assert pol.next_wakeup(100.0) == 103.0
    edge = 103.0 / (1 + 1e-9)
    assert edge + 1e-9 * edge == 103.0                              # now + tolerance is the deadline
    assert pol.next_wakeup(edge) is None
    assert pol.next_wakeup(float(np.nextafter(edge, 0.0))) == 103.0
    pol.on_arrival(JobSpec("d", 101.0, "s", 1, predicted_iterations=1), 100.0)
    assert pol.next_wakeup(100.0) == 101.0                          # a release before the deadline


def test_a_srpt_next_wakeup_is_the_next_release_or_the_next_completion_in_a1() -> None:
    pol = _asrpt(2)
    assert pol.next_wakeup(0.0) is None
    a = JobSpec("a", 5.0, "m", 2, predicted_iterations=1)
    pol.on_arrival(a, 0.0)
    assert pol.next_wakeup(0.0) == 5.0                               # released at 5 s (not yet in Ã1)
    pol.on_arrival(JobSpec("b", 9.0, "m", 2, predicted_iterations=1), 0.0)
    assert pol.decide(5.0, ClusterState(np.array([4, 4]), 4)) == []  # a runs in Ã1 from 5 s, not done
    assert pol.next_wakeup(5.0) == 5.0 + pol.size(a)                # Ã1 completes a alone after its size


def test_a_srpt_starts_a_job_placed_at_alpha_min_and_scans_on() -> None:
    """Line 12: b (1 GPU, ratio 1 >= comm_heavy 1: heavy) placed at its alpha~min starts, and the
    scan goes on to a (Ã1 completes b first: size 1/12·1·alpha~min(s) < a's 2/12·1·alpha~min(m))."""
    pol = _asrpt(3, tau=0.0)
    for j in (JobSpec("a", 0.0, "m", 2, predicted_iterations=1), JobSpec("b", 0.0, "s", 1, predicted_iterations=1)):
        pol.on_arrival(j, 0.0)
    out = pol.decide(100.0, ClusterState(np.array([1, 1, 1]), 4))
    assert [(o.job_id, o.placement.servers) for o in out] == [("b", (0,)), ("a", (1, 2))]


# ----------------------------------------------------------------------------- model.evaluate / DdlwmpInstance.gpus
TP = {"allreduce": "ring", "stages": [{"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0,
                                       "out_bytes": 0.0, "param_bytes": 1e6, "tensor_parallel": 2, "tp_bytes": 1e7}]}


def _two() -> DdlwmpInstance:
    """Job a of the plain model m (2 GPUs), job b of the tensor-parallel model t (2 replicas of
    t = 2 slices: 4 GPUs)."""
    return _inst({"m": PLAIN, "t": TP}, jobs=[{"id": "a", "release": 0.0, "model": "m", "iterations": 3},
                                             {"id": "b", "release": 0.0, "model": "t", "iterations": 3}])


def test_evaluate_slot_boundary_tolerance_is_relative_to_the_slot_index() -> None:
    """A start on a slot boundary within SLOT_TOL·max(1, q) = 1e-9·1000 = 1e-6 slots at slot index
    q = 1000 (slot 1 s): 1e-7 s off is on the boundary, 1e-5 s off is not."""
    inst = _two()
    for start, ok in [(1000.0, True), (1000.0 + 1e-7, True), (1000.0 + 1e-5, False)]:
        e = evaluate(inst, {"jobs": [{"id": "a", "start": start, "assignment": [[0, 0]]},
                                     {"id": "b", "start": 0.0, "assignment": [[0, 0, 1, 1]]}]})
        assert e.violations == ([] if ok else [f"job a starts at {start}, not on a slot boundary (slot 1.0 s)"])
        assert e.feasible is ok


def test_evaluate_names_a_tensor_replica_split_over_servers() -> None:
    e = evaluate(_two(), {"jobs": [{"id": "a", "start": 0.0, "assignment": [[0, 0]]},
                                   {"id": "b", "start": 0.0, "assignment": [[0, 1, 1, 1]]}]})
    assert not e.feasible and e.violations == [
        "job b: replica 0 of stage 0 has its 2 tensor slices on servers [0, 1]: they must share one server (Sec. VI)"]


def test_instance_gpus_counts_every_slice_and_refuses_an_unknown_model() -> None:
    import dataclasses

    inst = _two()
    assert [inst.gpus(j) for j in inst.jobs] == [2, 4]           # 2 replicas; 2 replicas x t = 2
    with pytest.raises(KeyError):
        inst.gpus(dataclasses.replace(inst.jobs[0], model="zz"))


# ----------------------------------------------------------------------------- claims.fig7_job_set / measure_fig8
@pytest.mark.parametrize("load, share", [("fixed-arrivals", 0.4), ("fixed-arrivals", 0.8), ("rescaled", 0.4)])
def test_fig7_job_set_draws_each_share_its_way_and_fixes_arrivals_to_the_80_percent_set(
        load: str, share: float, monkeypatch: pytest.MonkeyPatch) -> None:
    from optkit.formulations.ddlwmp import claims

    calls: list[dict[str, Any]] = []

    def workload(r: Any, **kw: Any) -> dict[str, Any]:
        calls.append(kw)
        t = 10.0 * kw["single_gpu_share"]       # each share its own arrivals: 8 s for 80%, 4 s for 40%
        return {"jobs": [{"id": "a", "release": t}, {"id": "b", "release": 2 * t}], "meta": {"seed": kw["seed"]}}

    monkeypatch.setattr(claims, "_workload", workload)
    r = {"single_gpu_draw": "per-job", "fig7_load": load}
    data = claims.fig7_job_set(r, jobs=2, scale="ci", seed=3, share=share)
    base = {"jobs": 2, "scale": "ci", "seed": 3, "single_gpu_draw": "per-job"}
    fixed = load == "fixed-arrivals" and share != 0.8
    assert calls == [dict(base, single_gpu_share=share)] + ([dict(base, single_gpu_share=0.8)] if fixed else [])
    want = [8.0, 16.0] if fixed else [10.0 * share, 20.0 * share]
    assert [j["release"] for j in data["jobs"]] == want
    assert data["meta"] == ({"seed": 3, "fig7_load": "fixed-arrivals: release times of the 80% share's job set"}
                            if fixed else {"seed": 3})


def test_measure_fig8_builds_the_zero_share_job_set_at_its_scale(monkeypatch: pytest.MonkeyPatch) -> None:
    from optkit.formulations.ddlwmp import claims

    seen: list[dict[str, Any]] = []

    def job_set(r: Any, **kw: Any) -> Any:
        seen.append(dict(kw, workload=r["workload"]))
        raise Stop

    monkeypatch.setattr(claims, "fig7_job_set", job_set)
    with pytest.raises(Stop):
        claims.measure_fig8(readings={"fig8_jobs": 1000}, seed=2, scale="ci")
    # ci: 1000 paper-scale jobs times the ci cluster's share of the paper's servers, 6 of 250: 24
    assert seen == [{"jobs": 24, "scale": "ci", "seed": 2, "share": 0.0,
                     "workload": "synthetic"}]


# ----------------------------------------------------------------------------- placement.Placer.place / tensor.LlmPlacer.place
def test_placer_lists_servers_by_descending_count_then_index_for_plain_and_tensor_models() -> None:
    """Both paths list the servers a placement takes in Heavy-Edge's local order: most GPUs first,
    ties by server index (1 with 4 GPUs, then 0 and 2 with 2 each), whatever order they come in;
    each server holds as many of the assignment's entries (GPUs; a tensor replica's slices one each)
    as its count."""
    four = {"allreduce": "ring", "stages": [_stage(4)]}
    tp4 = {"allreduce": "ring", "stages": [dict(TP["stages"][0], replicas=4)]}
    inst = _inst({"p": four, "t": tp4}, servers=3)
    pl = Placer(inst.cluster, inst.models, seed=0)
    for model, gpus, want_counts in (("p", {0: 1, 1: 2, 2: 1}, (2, 1, 1)), ("t", {0: 2, 1: 4, 2: 2}, (4, 2, 2))):
        for servers in ([0, 1, 2], [2, 0, 1]):
            p = pl.place(model, np.array(servers), np.array([gpus[m] for m in servers]))
            assert (p.servers, p.counts) == ((1, 0, 2), want_counts), (model, servers)
            flat = [s for row in p.assignment for s in row]
            assert {m: flat.count(m) for m in (1, 0, 2)} == dict(zip((1, 0, 2), want_counts))  # one GPU per entry


def test_evaluate_names_the_first_five_unscheduled_jobs() -> None:
    """Seven jobs, only j0 scheduled: the violation counts six and lists the first five ids."""
    inst = _inst(jobs=[{"id": f"j{i}", "release": 0.0, "model": "m", "iterations": 3} for i in range(7)])
    e = evaluate(inst, {"jobs": [{"id": "j0", "start": 0.0, "assignment": [[0, 0]]}]})
    assert not e.feasible and e.violations == ["6 jobs are not scheduled: j1, j2, j3, j4, j5"]
