"""rar-ddls functions outside the exact solvers where the seed-1 mutation draw at 172ca32 left
survivors (issue 36 item 5, session 6), each pinned whole on tiny hand-made inputs: full return
values (worked by hand in the comments, or by a second route), every refusal with its field,
problem and message, both sides of each comparison, and keyword defaults."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.rar_ddls import bounds, claims, generate, model, plan
from optkit.formulations.rar_ddls.batch import BatchSchedule, JobSlots
from optkit.formulations.rar_ddls.model import RarInstance, SimOutcome, fastest_servers, rate_table, solo_slots
from optkit.formulations.rar_ddls.readings import DEFAULTS, check_choice
from optkit.formulations.rar_ddls.sample import sample
from optkit.formulations.rar_ddls.sjf_bco import _last_of_class
from optkit.result import Status
from optkit.validation import MAX_COUNT

SWEPT = {k: DEFAULTS[k] for k in ("available", "kappa_select", "theta_search", "fa_ffp")}
NET0 = {"inter_bandwidth": 1.25e9, "intra_bandwidth": 3.0e11, "compute_speed": 5.0e10, "xi1": 1.0, "xi2": 0.0,
        "degradation": 0.2}


def _hand(servers: list[int], iterations: list[int], *, slot: float = 1.0, bwd: float = 0.25,
          fwd: float = 0.0, grad: float = 0.0, gpus: int = 1) -> dict:
    """Jobs with no gradient and xi2 = 0: tau = bwd (eq. 8), phi = floor(slot / bwd) (eq. 9)."""
    jobs = [{"id": f"j{k}", "gpus": gpus, "iterations": f, "grad_bytes": grad, "batch": 2,
             "fwd_time_per_sample": fwd, "bwd_time": bwd} for k, f in enumerate(iterations)]
    return {"problem": "rar-ddls", "servers": servers, "network": dict(NET0), "slot_seconds": slot, "horizon": 50,
            "jobs": jobs}


def _raises(call, *args, **kw) -> InputError:
    with pytest.raises(InputError) as err:
        call(*args, **kw)
    return err.value


# ----------------------------------------------------------------------------- batch.busy_at
def _batch() -> BatchSchedule:
    """Job a holds n1's GPUs 0, 1 until slot 3; the busy map holds n1 GPU 0 until 7 and n2 GPU 0
    until 5: n1 GPU 0 is free at max(3, 7) = 7."""
    return BatchSchedule(ok=True, jobs={"a": JobSlots(0, 3, {"n1": [0, 1]})},
                         busy_until={("n1", 0): 7, ("n2", 0): 5})


@pytest.mark.parametrize("now, want", [
    (0, {("n1", 0): 7, ("n1", 1): 3, ("n2", 0): 5}),
    (1, {("n1", 0): 6, ("n1", 1): 2, ("n2", 0): 4}),
    (np.int64(2), {("n1", 0): 5, ("n1", 1): 1, ("n2", 0): 3}),
    (3, {("n1", 0): 4, ("n2", 0): 2}),
    (5, {("n1", 0): 2}),
    (6, {("n1", 0): 1}),
    (7, {}),
])
def test_busy_at_counts_each_gpu_from_now(now, want) -> None:
    assert _batch().busy_at(now) == want


@pytest.mark.parametrize("now", [-1, True, 1.0, "1", None])
def test_busy_at_refuses_a_bad_now(now) -> None:
    err = _raises(_batch().busy_at, now)
    assert (err.field, err.problem, err.message) == ("now", "rar-ddls",
                                                      f"must be an integer number of slots >= 0, got {now!r}")


# ----------------------------------------------------------------------------- bounds
def test_lower_bounds_in_seconds_by_hand() -> None:
    """One 1-GPU server, slots of 2 s, tau = 0.25 s: phi = 8; F = 10, 20 -> rho_min = 2, 3 slots.
    total_completion: 2 + 3 = 5 slots = 10 s. makespan: LB_job = 3 slots = 6 s; LB_area =
    ceil(5 / 1) = 5 slots = 10 s; the two jobs conflict (1 + 1 > 1 GPU): LB_conflict = 5 slots."""
    inst = RarInstance.from_dict(_hand([1], [10, 20], slot=2.0))
    assert bounds.lower_bounds(inst, "total_completion") == {"LB_sum": 10.0}
    assert bounds.lower_bounds(inst) == {"LB_job": 6.0, "LB_area": 10.0, "LB_conflict": 10.0}
    assert bounds.lower_bound(inst) == 10.0 and bounds.lower_bound(inst, "total_completion") == 10.0
    err = _raises(bounds.lower_bounds, inst, "mean")
    assert (err.field, err.message) == ("objective", "must be one of makespan, total_completion, got 'mean'")


def _planned(theta: float, w_max: float) -> SimpleNamespace:
    """A planner's run on :func:`_checked`'s instance: j0 on GPU (0, 0) in slots 0-1, j1 on
    (0, 1) in slots 0-2 (makespan 3, busiest GPU 3 slots)."""
    out = SimOutcome(np.array([0, 0]), np.array([2, 3]), np.array([0, 0]), [])
    return SimpleNamespace(outcome=out, max_busy=w_max, theta=theta, gpus={0: [(0, 0)], 1: [(0, 1)]})


def _checked() -> RarInstance:
    """One server of 2 GPUs, slots of 1 s, tau = 0.25 s (phi = 4 whatever p: one server):
    F = 10, 20 -> 3 and 5 slots. Theorem 5: n_g = 1, phi = 1, l = 1, ratio 1. LB = max(LB_job =
    5, LB_area = ceil(8 / 2) = 4, no conflict) = 5 slots."""
    return RarInstance.from_dict(_hand([2], [10, 20]))


@pytest.mark.parametrize("theta, w_max, gap_holds, l3_holds", [
    (3.0, 3.0, True, True), (3.0, 2.5, True, False), (3.0, 2.0, False, False), (3.5, 3.0, True, True),
    (4.0, 3.0, False, True), (2.5, 3.0, False, True), (3.0, 3.0 + 5e-10, True, True),
])
@pytest.mark.parametrize("optimum, ref, holds5, realised", [
    (None, 5.0, True, 0.6), (3.0, 3.0, True, 1.0), (1.0, 1.0, False, 3.0), (0.5, 0.5, False, 6.0),
    (0.0, 0.0, False, float("inf")),
])
def test_lemma_checks_whole_dict(theta, w_max, gap_holds, l3_holds, optimum, ref, holds5, realised) -> None:
    got = bounds.lemma_checks(_checked(), _planned(theta, w_max), optimum=optimum)
    assert got == {"makespan_slots": 3.0, "n_g": 1, "theta": theta, "w_max": w_max, "busy_max": 3.0,
                   "lemma2_gap": theta - w_max, "lemma2_holds": gap_holds,
                   "lemma3_bound": w_max, "lemma3_holds": l3_holds,
                   "lemma3_busy_bound": 3.0, "lemma3_busy_holds": True,
                   "theorem5_ratio": 1.0, "theorem5_phi": 1.0, "theorem5_l": 1.0,
                   "theorem5_reference": ref, "theorem5_reference_is_optimum": optimum is not None,
                   "theorem5_holds": holds5, "theorem5_conclusive": holds5 or optimum is not None,
                   "realised_ratio": realised}


def test_lemma_checks_refuses_stuck_jobs() -> None:
    res = _planned(3.0, 3.0)
    res.outcome = SimOutcome(np.array([0, 0]), np.array([2, -1]), np.array([0, 0]), ["j1"])
    with pytest.raises(ValueError, match="^the schedule has stuck jobs: no makespan to check$"):
        bounds.lemma_checks(_checked(), res)


# ----------------------------------------------------------------------------- claims
def _recording_sec7(monkeypatch: pytest.MonkeyPatch, data: dict) -> list:
    calls: list = []

    def fake(seed, **kw):
        calls.append((seed, kw))
        return dict(data, **kw)

    monkeypatch.setattr(claims, "_sec7", fake)
    return calls


def test_series_fig6_uses_t_1500_and_reports_both_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fig. 6 runs on the Sec. 7 workload with T = 1500. Two 1-GPU jobs of 3 and 5 slots (phi =
    4; F = 10, 20) on the first 10 and all 20 one-GPU servers: both run at slot 0 alone, makespan
    5 = LB_job (optimal) on both, so no reduction."""
    calls = _recording_sec7(monkeypatch, _hand([1] * 20, [10, 20], slot=1.0))
    got = claims.series_fig6("ls", readings=SWEPT, seed=3, scale="ci")
    assert calls == [(3, {"horizon": 1500})]
    assert got == {"makespan_slots_10_servers": 5.0, "makespan_slots_20_servers": 5.0, "reduction": 0.0,
                   "_details": {"servers": [10, 20], "makespan": [5.0, 5.0]}}


def test_measure_bounds_whole_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the two-job server of :func:`_checked` SJF-BCO runs both jobs at slot 0 on the two
    GPUs: makespan 5, W_max = 5 (j1's estimate), theta 5 (the least integer limit), so the
    Lemma 2 gap is 0, Lemma 3's ratio 5 / (1·5) = 1 and Theorem 5's 5 / (1·LB = 5) = 1."""
    calls = _recording_sec7(monkeypatch, _hand([2], [10, 20]))
    got = claims.measure_bounds(readings=SWEPT, seed=4, scale="ci")
    assert calls == [(4, {})]
    assert {k: got[k] for k in ("sjf-bco-lemma2-gap", "sjf-bco-lemma3-ratio", "sjf-bco-theorem5-ratio")} == {
        "sjf-bco-lemma2-gap": 0.0, "sjf-bco-lemma3-ratio": 1.0, "sjf-bco-theorem5-ratio": 1.0}
    d = got["_details"]
    assert (d["makespan_slots"], d["w_max"], d["theta"], d["theorem5_reference"]) == (5.0, 5.0, 5.0, 5.0)
    assert got["_notes"] == [
        "Theorem 5 is checked against the lower bound LB <= OPT: a value <= 1 proves the bound holds; a value > 1 "
        "would be inconclusive (the tests check it against proven optima on small instances)."]
    assert set(got) == {"sjf-bco-lemma2-gap", "sjf-bco-lemma3-ratio", "sjf-bco-theorem5-ratio", "_details",
                        "_notes"}


def test_measure_bounds_refuses_an_infeasible_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    _recording_sec7(monkeypatch, _hand([2], [10, 20]))
    monkeypatch.setattr(model, "evaluate", lambda inst, sol: model.Evaluation(False, violations=["a", "b", "c"]))
    with pytest.raises(AssertionError) as err:
        claims.measure_bounds(readings=SWEPT, seed=0, scale="ci")
    assert str(err.value) == "SJF-BCO: infeasible schedule: ['a', 'b']"


# ----------------------------------------------------------------------------- generate
@pytest.mark.parametrize("gpus", [1, 2, 3])
def test_generator_job_whole_dict(gpus: int) -> None:
    """The batch is drawn first among 16, 32, 64, 128, then (one GPU only) the gradient uniform on
    [1e6, 1e8]: the same draws from a twin generator. Split: 2(w-1)m/w / b^e = comm_share·tau0
    (eq. 8) gives m. Seeds 0-11 draw every batch size."""
    batches = set()
    for seed in range(12):
        twin = np.random.default_rng(seed)
        batch = int(twin.choice([16, 32, 64, 128]))
        batches.add(batch)
        grad = 1e6 + (1e8 - 1e6) * twin.random() if gpus == 1 else 0.3 * 0.2 * 1.25e9 * gpus / (2.0 * (gpus - 1))
        got = generate._job("x", gpus, 17, 0.2, 0.3, np.random.default_rng(seed))
        assert got == {"id": "x", "gpus": gpus, "iterations": 17, "grad_bytes": pytest.approx(grad, rel=1e-15, abs=0),
                       "batch": batch, "fwd_time_per_sample": 0.4 * 0.2 / batch, "bwd_time": 0.6 * 0.2}
        if gpus == 1:
            assert got["grad_bytes"] == grad  # the draw itself, to the last bit
    assert batches == {16, 32, 64, 128}


def _serial(d: dict) -> int:
    inst = RarInstance.from_dict(d)
    return sum(solo_slots(inst, j, fastest_servers(inst.servers, j.gpus, j, inst.network)) for j in inst.jobs)


def test_tiny_accepts_a_horizon_equal_to_the_serial_time() -> None:
    """tiny(2)'s first draw, kept at max_horizon = its serial time h (h <= max_horizon) and
    dropped at h - 1 (another draw, or none, then)."""
    first = generate.tiny(2, max_horizon=10_000)
    h = _serial(first)
    assert generate.tiny(2, max_horizon=h) == dict(first, horizon=h)
    try:
        other = generate.tiny(2, max_horizon=h - 1)
    except InputError as err:
        assert (err.field, err.message) == ("max_horizon", f"no tiny instance with 4 jobs fits a horizon of {h - 1} "
                                                           "slots")
    else:
        assert other["jobs"] != first["jobs"] and _serial(other) <= h - 1


@pytest.mark.parametrize("kw, field, low, value", [
    ({"seed": -1}, "seed", 0, -1), ({"seed": True}, "seed", 0, True), ({"jobs": 0}, "jobs", 1, 0),
    ({"servers": 0}, "servers", 1, 0), ({"seed": 1.0}, "seed", 0, 1.0),
])
def test_tiny_refusals_name_their_field(kw, field, low, value) -> None:
    args = {"seed": 0, **kw}
    err = _raises(lambda: generate.tiny(args.pop("seed"), **args))
    assert (err.field, err.message) == (field, f"must be an integer >= {low}, got {value!r}")


# ----------------------------------------------------------------------------- model
def test_rate_table_is_integer_phi_by_hand() -> None:
    """No gradient, xi2 = 0.05: tau = 0.05·n + 0.05 = 0.1, 0.15, 0.2 s on n = 1, 2, 3 servers, so
    phi = 10, 6, 5 per 1 s slot whatever the contention p (nothing to exchange)."""
    d = _hand([1, 1, 1], [60, 60], bwd=0.05, gpus=3)
    d["network"]["xi2"] = 0.05
    inst = RarInstance.from_dict(d)
    for n, phi in ((1, 10), (2, 6), (3, 5)):
        got = rate_table(inst, inst.jobs[0], n)
        assert got.dtype == np.int64 and got.tolist() == [phi] * 3


def test_rate_table_with_a_gradient_by_hand() -> None:
    """2-GPU jobs, m = 3.125e8 B (share m/2 = 1.5625e8), bwd = 0.246875 s, xi1 = 1, xi2 = 0.
    On 2 servers: tau = 2·share/(b^e/f(k)) + share/C + bwd, f(k) = k + 0.2(k - 1), k = max(1, p):
    p <= 1: 0.25 + 0.003125 + 0.246875 = 0.5 s, phi 2; p = 2: 0.55 + 0.25 = 0.8 s, phi 1;
    p = 3: 0.85 + 0.25 = 1.1 s, phi 0. On 1 server (b^i = 3e11, no contention): 0.00104167 +
    0.003125 + 0.246875 = 0.2510 s, phi 3."""
    inst = RarInstance.from_dict(_hand([1, 1, 2], [5, 5, 5], bwd=0.246875, grad=3.125e8, gpus=2))
    got = rate_table(inst, inst.jobs[0], 2)
    assert got.dtype == np.int64 and got.tolist() == [2, 2, 1, 0]
    assert rate_table(inst, inst.jobs[0], 1).tolist() == [3, 3, 3, 3]


@pytest.mark.parametrize("bwd, fwd, tau", [(1e-20, 0.0, "1e-20"), (0.0, 1e308, "inf")])
def test_from_dict_refuses_an_iteration_time_that_overflows_phi(bwd, fwd, tau) -> None:
    """slot / tau = 1e20 > 2^50, and tau = 2·1e308 = inf (batch 2): eq. 9 cannot be counted."""
    err = _raises(RarInstance.from_dict, _hand([1], [5], bwd=bwd, fwd=fwd))
    assert (err.field, err.message) == ("jobs[0]", f"job j0: slot_seconds 1 / iteration time {tau} s is beyond "
                                        f"{model.MAX_PER_SLOT:g} iterations per slot (eq. 9): the numbers overflow; "
                                        "scale the units")


def test_from_dict_overflow_bound_is_2_to_the_50_inclusive() -> None:
    """slot / tau = 2^50 is accepted (exactly representable, <= MAX_PER_SLOT); 2^51 is not."""
    assert RarInstance.from_dict(_hand([1], [5], bwd=2.0 ** -50)).jobs[0].bwd_time == 2.0 ** -50
    err = _raises(RarInstance.from_dict, _hand([1], [5], bwd=2.0 ** -51))
    assert (err.field, err.message.split(" / ")[0]) == ("jobs[0]", "job j0: slot_seconds 1")


# ----------------------------------------------------------------------------- plan
def _plan() -> plan.Plan:
    p = plan.Plan.empty(plan.ClusterIndex.of([2, 1]), np.random.default_rng(0))
    p.gpus = {0: np.array([0, 2]), 2: np.array([1])}
    p.U[:] = [1.0, 2.0, 3.0]
    p.order, p.finish, p.preds, p.score = [0, 2], {0: 1.0, 2: 3.0}, {2: [0]}, 7.0
    return p


def test_plan_y_is_an_integer_placement() -> None:
    """GPUs 0, 1 are server 0's, GPU 2 is server 1's."""
    y = _plan().y(3)
    assert y.dtype == np.int64 and y.tolist() == [[1, 1], [0, 0], [1, 0]]


def test_plan_copy_is_independent_but_shares_the_rng() -> None:
    """Same values; arrays, the order and the dicts are new objects; cluster, rng and the rest
    are the same objects (the docstring: ``rng`` shared)."""
    p = _plan()
    c = p.copy()
    for f in dataclasses.fields(plan.Plan):
        a, b = getattr(p, f.name), getattr(c, f.name)
        if f.name in ("U", "free", "last"):
            assert a is not b and a.tolist() == b.tolist(), f.name
        elif f.name == "gpus":
            assert a is not b and {k: v.tolist() for k, v in a.items()} == {k: v.tolist() for k, v in b.items()}
        elif f.name in ("order", "finish", "preds"):
            assert a is not b and a == b, f.name
        else:
            assert a is b, f.name
    assert c.rng is not None and (c.available, c.now, c.score) == ("accumulated", 0.0, 7.0)
    c.U[0] = 9.0
    c.order.append(1)
    c.finish[1] = 4.0
    assert p.U[0] == 1.0 and p.order == [0, 2] and 1 not in p.finish


def _trial(accept_from: int, score=None):
    seen: list[int] = []

    def trial(theta: int, horizon: int):
        seen.append(theta)
        if theta < accept_from:
            return None
        return SimpleNamespace(score=score(theta) if score else None, makespan=0.0), f"t{theta}"

    return trial, seen


def test_bisect_theta_feasibility_search_by_hand() -> None:
    """[1, 8], accepted from 3 on: theta = 4 yes, 2 no, 3 yes: 3 steps, 2 accepted."""
    trial, seen = _trial(3)
    got = plan.bisect_theta(8, trial, feasibility=True)
    assert seen == [4, 2, 3]
    assert (got.theta, got.tag, got.steps, got.trials_accepted, got.timed_out, got.search_horizon) == (
        3, "t3", 3, 2, False, 8)


def test_bisect_theta_accepts_only_a_lower_score() -> None:
    """Score 10 - theta from theta = 3, m starts at T = 8: theta 4 (6 < 8) yes, 2 no, 3 (7 >= 6)
    no. With score 8 at every theta nothing beats m = 8."""
    trial, seen = _trial(3, lambda th: 10 - th)
    got = plan.bisect_theta(8, trial)
    assert seen == [4, 2, 3] and (got.theta, got.tag, got.steps, got.trials_accepted) == (4, "t4", 3, 1)
    trial, seen = _trial(1, lambda th: 8)
    got = plan.bisect_theta(8, trial)
    assert seen == [4, 6, 7, 8] and (got.plan, got.theta, got.tag, got.steps, got.trials_accepted) == (
        None, None, None, 4, 0)


def test_bisect_theta_stops_at_its_deadline() -> None:
    trial, seen = _trial(1)
    got = plan.bisect_theta(8, trial, deadline=1.0, clock=lambda: 2.0, feasibility=True)
    assert seen == [4] and (got.theta, got.steps, got.trials_accepted, got.timed_out) == (4, 1, 1, True)
    trial, seen = _trial(1)
    got = plan.bisect_theta(8, trial, deadline=2.0, clock=lambda: 2.0, feasibility=True)
    assert seen == [4, 2, 1] and not got.timed_out


def _fake_planner(stuck=(), timed_out=False, raise_=None):
    calls: list = []

    def fn(instance, *, deadline=None, **params):
        calls.append((deadline, params))
        if raise_ is not None:
            raise raise_
        out = SimOutcome(np.array([0, 1]), np.array([3, 5]), np.array([0, 0]), list(stuck))
        res = plan.PlanResult(theta=4, kappa=None, plan_makespan=5.0, bisection_steps=2, max_busy=4.0, order=[0, 1],
                              gpus={}, predecessors=[[], []], outcome=out, timed_out=timed_out)
        return np.array([[1, 0], [0, 1]]), res

    return fn, calls


def test_run_planner_result_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stopped clock: the wall time is 0 and the deadline the limit past the start."""
    import time

    monkeypatch.setattr(time, "perf_counter", lambda: 100.0)
    inst = RarInstance.from_dict(_hand([1, 1], [10, 20]))
    fn, calls = _fake_planner()
    got = plan.run_planner(fn, inst, 2.5, u=1.0)
    assert calls == [(102.5, {"u": 1.0})]
    assert (got.status, got.message) == (Status.FEASIBLE, "")
    info = fn(inst)[1].info()
    assert got.info == dict(info, algorithm_wall_time_s=0.0)
    assert got.solution == {"jobs": [{"id": "j0", "start": 0, "gpus_per_server": [1, 0], "completion": 3},
                                     {"id": "j1", "start": 1, "gpus_per_server": [0, 1], "completion": 5}]}
    fn, calls = _fake_planner(timed_out=True)
    assert plan.run_planner(fn, inst, None).status is Status.TIME_LIMIT and calls == [(None, {})]
    fn, _ = _fake_planner(stuck=["j0", "j1"])
    got = plan.run_planner(fn, inst, None)
    assert (got.status, got.solution, got.info["algorithm_wall_time_s"]) == (Status.NO_SOLUTION, None, 0.0)
    assert got.message == "jobs j0, j1 never complete under the contention of the planned schedule (phi = 0, eq. 9)"
    for timed, status in ((False, Status.NO_SOLUTION), (True, Status.TIME_LIMIT)):
        exc = plan.NoPlanError("no plan here")
        exc.timed_out = timed
        fn, _ = _fake_planner(raise_=exc)
        got = plan.run_planner(fn, inst, None)
        assert (got.status, got.message, got.solution) == (status, "no plan here", None)


# ----------------------------------------------------------------------------- readings, sample, sjf_bco
@pytest.mark.parametrize("value", ["x", None, 1, "A"])
def test_check_choice_refusal(value) -> None:
    err = _raises(check_choice, "available", value, ("a", "b"))
    assert (err.field, err.problem, err.message) == ("available", "rar-ddls", f"must be one of a, b; got {value!r}")
    assert check_choice("available", "b", ("a", "b")) == "b"


LIMITS = ("max_jobs", "max_gpus", "max_servers", "max_gpus_per_server", "max_iterations")


@pytest.mark.parametrize("name", LIMITS)
@pytest.mark.parametrize("value, message", [(0, "must be >= 1, got 0"),
                                            (MAX_COUNT + 1, f"must be <= {MAX_COUNT}, got {MAX_COUNT + 1}")])
def test_sample_refuses_each_limit_out_of_range(name, value, message) -> None:
    err = _raises(sample, lambda lo, hi: lo, **{name: value})
    assert (err.field, err.message) == (name, message)


@pytest.mark.parametrize("name", LIMITS)
def test_sample_accepts_each_limit_at_its_ends(name) -> None:
    """The smallest draws give one 1-GPU server and one 1-GPU job of one iteration whatever the
    limits (module docstring)."""
    for v in (1, MAX_COUNT):
        d = sample(lambda lo, hi: lo, **{name: v})
        assert d["servers"] == [1] and [(j["gpus"], j["iterations"]) for j in d["jobs"]] == [(1, 1)]


@pytest.mark.parametrize("classes, n_g, want", [
    ([1, 2, 4], 8, {1: 1, 2: 3, 4: 8}), ([1, 3], 2, {1: 2, 3: 3}), ([1], 5, {1: 5}), ([1, 2], 1, {1: 1, 2: 2}),
])
def test_last_of_class_by_hand(classes, n_g, want) -> None:
    """Each class ends one below the next class; the last ends at max(its kappa, n_g)."""
    assert _last_of_class(classes, n_g) == want


# ----------------------------------------------------------------------------- neighbours: bounds, generate
def test_theorem5_by_hand_without_contention() -> None:
    """:func:`_checked`: 1-GPU jobs on one server, nothing can contend (p_max = 1 = 1 + no job of
    >= 2 GPUs): n_g = 1, phi = 1, l = 1, ratio = u."""
    inst = _checked()
    want = {"n_g": 1, "phi": 1.0, "u": 1.0, "l": 1.0, "ratio": 1.0, "p_max": 1, "proven": True}
    assert bounds.theorem5(inst) == want
    assert bounds.theorem5(inst, u=2.5) == dict(want, u=2.5, ratio=2.5)
    assert [bounds.contention_cap(inst, j) for j in range(2)] == [1, 1]


def test_theorem5_by_hand_with_contention() -> None:
    """Three 2-GPU jobs of F = 5 on servers of 1, 1, 2 GPUs (phi of
    :func:`test_rate_table_with_a_gradient_by_hand`: 3 on one server; 2, 2, 1, 0 at p = 0..3 on
    two). p_j^max: N - 2 = 2 GPUs hold one other 2-GPU job, so min(max O_s = 2, 1 + 1) = 2.
    Feasible n = 1 (the 2-GPU server), 2. rho_min = ceil(5/3) = 2 (n = 1); worst: n = 1 ->
    ceil(5/3) = 2, n = 2 -> ceil(5/1) = 5, so phi = 5/2; l = min(2/2, ceil(5/2)/5 = 3/5) = 0.6;
    ratio = 2·2.5·1/0.6."""
    inst = RarInstance.from_dict(_hand([1, 1, 2], [5, 5, 5], bwd=0.246875, grad=3.125e8, gpus=2))
    assert [bounds.contention_cap(inst, j) for j in range(3)] == [2, 2, 2]
    assert list(bounds.feasible_server_counts(inst, inst.jobs[0])) == [1, 2]
    assert bounds.rho_min(inst, inst.jobs[0]) == 2
    got = bounds.theorem5(inst)
    assert got == {"n_g": 2, "phi": 2.5, "u": 1.0, "l": pytest.approx(0.6, rel=1e-15), "ratio": pytest.approx(
        2 * 2.5 / 0.6, rel=1e-15), "p_max": 2, "proven": True}


def test_contention_cap_counts_the_smallest_other_split_jobs() -> None:
    """N = 8 (two 4-GPU servers), jobs of 2, 2, 1, 3 GPUs. j0: room 6 takes 2 (j1) and 3 (j3): q =
    2, cap min(4, 3) = 3; j1 the same; j2: room 7 takes 2, 2, 3: q = 3, cap 4; j3: room 5 takes
    2, 2: cap 3. On two 2-GPU servers (N = 4): j0, j1: room 2 takes one 2 -> 2; j2: room 3 takes
    one 2 -> 2; j3: room 1 takes none -> 1."""
    for servers, want in (([4, 4], [3, 3, 4, 3]), ([2, 2], [2, 2, 2, 1])):
        d = _hand(servers, [5, 5, 5, 5])
        for job, g in zip(d["jobs"], (2, 2, 1, 3)):
            job["gpus"] = g
        inst = RarInstance.from_dict(d)
        assert [bounds.contention_cap(inst, j) for j in range(4)] == want


@pytest.mark.parametrize("u", [0.5, 0.999, True, float("inf"), float("nan"), "1", None])
def test_theorem5_refuses_a_bad_u(u) -> None:
    err = _raises(bounds.theorem5, _checked(), u=u)
    assert (err.field, err.problem, err.message) == (
        "u", "rar-ddls", f"must be a finite number >= 1 (rho-hat <= u·rho), got {u!r}")


def test_bounds_with_busy_gpus_by_hand() -> None:
    """Servers of 2, 2 GPUs; server 0's GPUs busy until 3 and 1: r sorted = 0, 0, 1, 3. Jobs of
    1, 2, 3, 4 GPUs start no earlier than r_(G) = 0, 0, 1, 3 (Lemma 1). tau = 0.25 s, phi 4,
    F = 4 each: rho_min = 1 slot. total_completion: 4 + 4 = 8 slots. Makespan: LB_job =
    max(r + 1) = 4; work = 1 + 2 + 3 + 4 = 10 GPU-slots: f(M) = sum max(0, M - r) is 2 + 2 + 1
    + 0 = 5 at M = 2, 3 + 3 + 2 + 0 = 8 at M = 3, 4 + 4 + 3 + 1 = 12 at M = 4: LB_area = 4;
    the 4-, 3- and 2-GPU jobs pairwise conflict (G + G' > 4; 3 + 1 and 2 + 1 do not): LB_conflict
    = their least r, r_(2) = 0, + 3 slots = 3 ({4, 3}: r_(3) = 1 + 2 = 3 too)."""
    d = _hand([2, 2], [4, 4, 4, 4])
    for job, g in zip(d["jobs"], (1, 2, 3, 4)):
        job["gpus"] = g
    d["busy_until"] = [[3, 1], [0, 0]]
    inst = RarInstance.from_dict(d)
    assert bounds.earliest_starts(inst) == [0, 0, 1, 3]
    assert bounds.lower_bounds(inst, "total_completion") == {"LB_sum": 8.0}
    assert bounds.lower_bounds(inst) == {"LB_job": 4.0, "LB_area": 4.0, "LB_conflict": 3.0}
    assert bounds.theorem5(inst)["proven"] is False


@pytest.mark.parametrize("kw, field, message", [
    ({"kind": "huge"}, "kind", "must be 'paper-sec7' or 'tiny', got 'huge'"),
    ({"seed": -1}, "seed", "must be an integer >= 0, got -1"),
    ({"servers": 0}, "servers", "must be an integer >= 1, got 0"),
    ({"horizon": 0}, "horizon", "must be an integer >= 1, got 0"),
    ({"servers": 1, "mix": {64: 1}}, "servers", None),
])
def test_generate_refusals_name_their_field(kw, field, message) -> None:
    err = _raises(generate.generate, **kw)
    assert err.field == field
    if message is not None:
        assert err.message == message
    else:  # one server of at most 32 GPUs cannot hold a 64-GPU job
        assert err.message.endswith("GPUs cannot hold a 64-GPU job") and err.message.startswith("1 servers with ")


def test_conflict_bound_with_every_gpu_busy_by_hand() -> None:
    """Servers of 2, 2 GPUs, all busy until slot 2: every job starts at >= 2. Jobs of 3, 2, 2
    GPUs, F = 4 (1 slot each). LB_job = 2 + 1 = 3; total_completion 3·(2 + 1) = 9 slots;
    LB_area: 4·(M - 2) >= 3 + 2 + 2 = 7 -> M = 4. Conflicts: 3 + 2 > 4 but 2 + 2 = 4 is not a
    conflict, so the largest K is {3-GPU, one 2-GPU}: 2 + 1 + 1 = 4."""
    d = _hand([2, 2], [4, 4, 4])
    for job, g in zip(d["jobs"], (3, 2, 2)):
        job["gpus"] = g
    d["busy_until"] = [[2, 2], [2, 2]]
    inst = RarInstance.from_dict(d)
    assert bounds.earliest_starts(inst) == [2, 2, 2]
    assert bounds.lower_bounds(inst, "total_completion") == {"LB_sum": 9.0}
    assert bounds.lower_bounds(inst) == {"LB_job": 3.0, "LB_area": 4.0, "LB_conflict": 4.0}


# ----------------------------------------------------------------------------- neighbours: batch, sjf_bco, plan
@pytest.mark.parametrize("field, want", [
    ("servers[1]", "servers['b']"), ("servers[0].x", "servers['a'].x"), ("busy_until[0][3]", "busy_until[('a', 3)]"),
    ("busy_until[1]", "busy_until['b']"), ("busy_until[1][0] y", "busy_until[('b', 0)] y"),
    ("servers[2]", "servers[2]"), ("busy_until[2][0]", "busy_until[2][0]"), ("jobs[0].gpus", "jobs[0].gpus"),
    ("servers", "servers"),
])
def test_rename_names_a_server_by_its_node(field, want) -> None:
    from optkit.formulations.rar_ddls.batch import _rename

    got = _rename(InputError(field, "is wrong"), ["a", "b"])
    assert (got.field, got.message, got.problem) == (want, "is wrong", "rar-ddls")


def test_sjf_bco_helpers_by_hand() -> None:
    """Jobs of 4, 1, 2, 1, 4 GPUs: order by size, instance order on ties: 1, 3, 2, 0, 4; kappa
    classes 1, 2, 4 (1 is always one)."""
    from optkit.formulations.rar_ddls.sjf_bco import _check_lam, kappa_better, kappa_classes, sjf_bco_order

    d = _hand([4, 4], [5] * 5)
    for job, g in zip(d["jobs"], (4, 1, 2, 1, 4)):
        job["gpus"] = g
    inst = RarInstance.from_dict(d)
    assert sjf_bco_order(inst) == [1, 3, 2, 0, 4]
    assert kappa_classes(inst) == [1, 2, 4]
    d["jobs"] = [dict(d["jobs"][0], gpus=3)]
    assert kappa_classes(RarInstance.from_dict(d)) == [1, 3]
    first, last = kappa_better("first"), kappa_better("last")
    assert [first(1.0, 2.0), first(2.0, 2.0), first(3.0, 2.0)] == [True, False, False]
    assert [last(1.0, 2.0), last(2.0, 2.0), last(3.0, 2.0)] == [True, True, False]
    err = _raises(kappa_better, "middle")
    assert (err.field, err.problem) == ("kappa_tie", "rar-ddls")
    assert (_check_lam(1), _check_lam(2.5)) == (1.0, 2.5) and type(_check_lam(1)) is float


@pytest.mark.parametrize("lam", [0.999, 0, True, float("inf"), float("nan"), "2", None])
def test_check_lam_refusal(lam) -> None:
    from optkit.formulations.rar_ddls.sjf_bco import _check_lam

    err = _raises(_check_lam, lam)
    assert (err.field, err.problem, err.message) == ("lam", "rar-ddls",
                                                      f"must be a number >= 1 (lambda_j >= 1, Alg. 3), got {lam!r}")


@pytest.mark.parametrize("cap, steps, horizon, theta", [(100.0, 11, 16, 10), (4.0, 11, 16, 10), (3.9, 7, 8, None),
                                                         (1.0, 3, 4, None)])
def test_search_theta_doubles_the_horizon_by_hand(cap, steps, horizon, theta) -> None:
    """Trials accept theta >= 10 only. [1, 4]: 2, 3, 4 rejected (3 steps); [1, 8]: 4, 6, 7, 8
    (4 steps); [1, 16]: 8 no, 12 yes, 10 yes, 9 no (4 steps): theta 10 after 11 steps. The search
    stops with nothing once H > 2·cap: cap 3.9 -> after H = 8, cap 1 -> after H = 4; cap 4
    (2·cap = 8 = H) goes on to 16."""
    trial, seen = _trial(10)
    got = plan.search_theta(4, trial, cap=cap, feasibility=True)
    assert (got.steps, got.search_horizon, got.theta, got.timed_out) == (steps, horizon, theta, False)
    assert len(seen) == steps and (got.plan is None) == (theta is None)


# ----------------------------------------------------------------------------- neighbours: model, claims
@pytest.mark.parametrize("servers, gpus, want", [([2, 4, 3], 1, 1), ([2, 4, 3], 4, 1), ([2, 4, 3], 5, 2),
                                                 ([2, 4, 3], 7, 2), ([2, 4, 3], 8, 3), ([2, 4, 3], 9, 3)])
def test_min_servers_largest_first(servers, gpus, want) -> None:
    assert model.min_servers(servers, gpus) == want == model.fastest_servers(servers, gpus)


def test_min_servers_refuses_too_many_gpus() -> None:
    with pytest.raises(ValueError, match=r"^10 GPUs do not fit on servers \[2, 4, 3\]$"):
        model.min_servers([2, 4, 3], 10)


def test_fastest_servers_with_a_slow_intra_link_by_hand() -> None:
    """A 2-GPU job, m = 1e9 B (share 5e8), on servers of 2, 2: one server pays 2·5e8/b^i, two pay
    2·5e8/b^e + 2·xi2 (the rest is the same). With b^i = 1e9 < b^e = 1.25e9 and xi2 = 0: 1.0 s
    against 0.8 s, two servers win; with xi2 = 0.25 s per server 1.25 s against 1.3 s, one wins;
    with b^i = 3e11 one server wins."""
    d = _hand([2, 2], [5], grad=1e9, gpus=2)
    job = RarInstance.from_dict(d).jobs[0]
    for intra, xi2, want in ((1e9, 0.0, 2), (1e9, 0.25, 1), (3e11, 0.0, 1)):
        net = model.Network.from_dict(dict(NET0, intra_bandwidth=intra, xi2=xi2))
        assert model.fastest_servers([2, 2], 2, job, net) == want


@pytest.mark.parametrize("row, want", [([[0, 0], [0]], ()), ([[3, 0], []], ((3,), ())), ([[0, 2], [0]], ((0, 2), ())),
                                       ([[], [5]], ((), (5,))), (((1, 0), (0,)), ((1,), ()))])
def test_busy_rows_normal_form(row, want) -> None:
    assert model._busy_rows(row, (2, 1)) == want


@pytest.mark.parametrize("value, field, message", [
    ([[0]], "busy_until", "must be a list with one list per server (2): the slot until which each of the server's "
                          "GPUs is busy, got 1 entries"),
    ({"a": 1}, "busy_until", "must be a list with one list per server (2): the slot until which each of the "
                             "server's GPUs is busy, got dict"),
    ([[0], 3], "busy_until[1]", "must be a list of slots (one per GPU of server 1), got int"),
    ([[0], [0, 0]], "busy_until[1]", "lists 2 GPUs, server 1 has O_s = 1 (GPUs 0..0)"),
    ([[0, -1], [0]], "busy_until[0][1]", "must be >= 0, got -1"),
    ([[0, model.MAX_BUSY_SLOT + 1], [0]], "busy_until[0][1]",
     f"must be <= {model.MAX_BUSY_SLOT}, got {model.MAX_BUSY_SLOT + 1}"),
])
def test_busy_rows_refusals(value, field, message) -> None:
    err = _raises(model._busy_rows, value, (2, 1))
    assert (err.field, err.message) == (field, message)
    assert model._busy_rows([[0, model.MAX_BUSY_SLOT], [1]], (2, 1)) == ((0, model.MAX_BUSY_SLOT), (1,))


@pytest.mark.parametrize("values, turns, shape", [
    ([10, 8, 9, 7], 2, True), ([10, 8, 8, 9, 9, 7], 2, True), ([10, 8, 9], 1, False), ([9, 10, 8, 9, 7], 3, False),
    ([10, 8, 9, 10, 7, 6], 2, True), ([10, 8, 7], 0, False), ([], 0, False), ([5, 5, 5], 0, False),
    ([10, 8, 9, 7, 8], 3, False),
])
def test_curve_shape_statistics_by_hand(values, turns, shape) -> None:
    assert claims.turning_points(values) == turns
    assert claims._drop_rise_drop(values) is shape


@pytest.mark.parametrize("a, b, want", [(3.0, 2.0, 1.5), (None, 2.0, None), (3.0, None, None), (3.0, 0.0, None),
                                        (3.0, -1.0, None), (0.0, 4.0, 0.0)])
def test_claims_ratio(a, b, want) -> None:
    assert claims._ratio(a, b) == want


# ----------------------------------------------------------------------------- neighbours: the pick rules
U1 = [3.0, 1.0, 0.0, 2.0, 0.0, 1.0, 1.0]  # servers of 2, 3, 2 GPUs: loads 4/2 = 2, 2/3, 2/2 = 1
U3 = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]  # only server 1 occupied


def _picking(U: list[float]) -> plan.Plan:
    p = plan.Plan.empty(plan.ClusterIndex.of([2, 3, 2]), np.random.default_rng(0))
    p.U[:] = U
    return p


ALL = np.arange(7)


@pytest.mark.parametrize("rule, G, want", [
    (plan.pick_first_fit, 3, [0, 1, 2]), (plan.pick_first_fit, 7, list(range(7))), (plan.pick_first_fit, 8, None),
    # least U, ties by flat index: U = 0 at 2, 4; 1 at 1, 5, 6; 2 at 3; 3 at 0
    (plan.pick_least_busy, 1, [2]), (plan.pick_least_busy, 3, [2, 4, 1]), (plan.pick_least_busy, 8, None),
    # least U, ties by the server's load (s2 = 1 before s0 = 2), then index
    (plan.pick_list, 3, [2, 4, 5]), (plan.pick_list, 5, [2, 4, 5, 6, 1]), (plan.pick_list, 8, None),
    # one server fits G = 2 (all occupied: the first, s0, its least-U first) / only s1 fits 3
    (plan.pick_packing, 2, [1, 0]), (plan.pick_packing, 3, [2, 4, 3]),
    # none holds 4: s1 (3 eligible) then s0 before s2 (index)
    (plan.pick_packing, 4, [2, 4, 3, 1]), (plan.pick_packing, 8, None),
    # LBSGF, lambda 1: loads order s1, s2, s0; G = 3 fits s1; G = 4 takes s1, s2, by U stable
    (plan.pick_lbsgf(1.0), 3, [2, 4, 3]), (plan.pick_lbsgf(1.0), 4, [2, 4, 5, 6]), (plan.pick_lbsgf(2.0), 2, [2, 4]),
])
def test_pick_rules_by_hand(rule, G, want) -> None:
    got = rule(_picking(U1), 0, G, ALL)
    assert (None if got is None else got.tolist()) == want


def test_pick_packing_occupied_servers_first() -> None:
    """Only server 1 is occupied: G = 2 goes there (its U-0 GPUs 3, 4) though server 0 comes
    first; G = 4: s1's 3 (3, 4, then 2) and then empty s0 before empty s2 (index). Without
    server 1 eligible, server 0."""
    p = _picking(U3)
    assert plan.pick_packing(p, 0, 2, ALL).tolist() == [3, 4]
    assert plan.pick_packing(p, 0, 4, ALL).tolist() == [3, 4, 2, 0]
    assert plan.pick_packing(p, 0, 2, np.array([0, 1, 5, 6])).tolist() == [0, 1]


@pytest.mark.parametrize("G, lam, want", [(3, 1.0, [1]), (4, 1.0, [1, 2]), (5, 1.0, [1, 2]), (6, 1.0, [1, 2, 0]),
                                          (8, 1.0, [1, 2, 0]), (2, 2.0, [1, 2]), (1, 1.5, [1])])
def test_lbsgf_servers_by_hand(G, lam, want) -> None:
    """Loads 2, 2/3, 1: order s1 (3 GPUs), s2 (2), s0 (2); cumulated 3, 5, 7 against lam·G."""
    p = _picking(U1)
    assert plan.lbsgf_servers(p.server_load(), p.cluster.capacity, G, lam).tolist() == want


def test_pick_random_is_the_seeded_server_then_gpu_order() -> None:
    """A twin generator: servers in permutation order, inside each server GPUs by a uniform key;
    no rng means default_rng(0)."""
    twin = np.random.default_rng(0)
    srank = twin.permutation(3)
    within = twin.random(7)
    server_of = np.array([0, 0, 1, 1, 1, 2, 2])
    order = sorted(range(7), key=lambda g: (srank[server_of[g]], within[g]))
    assert plan.pick_random(_picking(U1), 0, 4, ALL).tolist() == order[:4]
    p = _picking(U1)
    p.rng = None
    assert plan.pick_random(p, 0, 4, ALL).tolist() == order[:4]
    assert plan.pick_random(p, 0, 8, ALL) is None
