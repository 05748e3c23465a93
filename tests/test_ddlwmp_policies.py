"""ddlwmp online policies: A-SRPT and the baselines, driven by the event simulator."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from optkit.formulations.ddlwmp import a_srpt, algorithms
from optkit.formulations.ddlwmp.model import DdlwmpInstance, evaluate
from optkit.formulations.ddlwmp.placement import least_free_servers, most_free_servers
from optkit.result import Status
from optkit.simulation import EventQueue, drive
from tests.deterministic import TickingClock

RUNS = {
    "a-srpt": algorithms.run_a_srpt,
    "a-srpt-perfect": algorithms.run_a_srpt_perfect,
    "spjf": algorithms.run_spjf,
    "spwf": algorithms.run_spwf,
    "wcs-duration": algorithms.run_wcs_duration,
    "wcs-workload": algorithms.run_wcs_workload,
    "wcs-subtime": algorithms.run_wcs_subtime,
    "fifo": algorithms.run_fifo,
}


def _stage(k: int, fwd: float, bwd: float, d_in: float, d_out: float, h: float) -> dict[str, Any]:
    return {"replicas": k, "fwd_time": fwd, "bwd_time": bwd, "in_bytes": d_in, "out_bytes": d_out, "param_bytes": h}


def _random_model(rng: np.random.Generator, gpus: int) -> dict[str, Any]:
    n_st = 1 if gpus == 1 else int(rng.integers(1, min(3, gpus) + 1))
    cuts = sorted(rng.choice(np.arange(1, gpus), size=n_st - 1, replace=False).tolist()) if n_st > 1 else []
    k = np.diff([0, *cuts, gpus]).tolist()
    total = float(rng.uniform(1e6, 5e7))
    stages = [_stage(int(k[s]), float(rng.uniform(0.01, 0.06)), float(rng.uniform(0.02, 0.12)),
                     total / k[s] if s > 0 else 0.0, total / k[s] if s < n_st - 1 else 0.0,
                     float(rng.uniform(1e6, 5e8))) for s in range(n_st)]
    return {"allreduce": "ring" if rng.random() < 0.5 else "tree", "stages": stages}


def random_instance(seed: int) -> DdlwmpInstance:
    """2-4 servers of 4 GPUs, 2-3 models of 1-6 GPUs, 5-25 jobs, real releases in [0, 20] s,
    1-500 iterations, predictions noisy or missing; sometimes half-second slots."""
    rng = np.random.default_rng(seed)
    models = {f"m{i}": _random_model(rng, int(rng.integers(1, 7))) for i in range(int(rng.integers(2, 4)))}
    names = sorted(models)
    jobs = []
    for i in range(int(rng.integers(5, 26))):
        n = int(rng.integers(1, 501))
        j = {"id": f"j{i}", "release": float(np.round(rng.uniform(0, 20), 2)),
             "model": names[int(rng.integers(len(names)))], "iterations": n}
        if rng.random() < 0.8:
            j["predicted_iterations"] = float(max(0, n + rng.integers(-200, 201)))
        jobs.append(j)
    cluster = {"servers": int(rng.integers(2, 5)), "gpus_per_server": 4,
               "inter_bandwidth": float(rng.choice([1.25e8, 1.25e9, 6.25e9])), "intra_bandwidth": 3e11}
    if rng.random() < 0.3:
        cluster["slot_seconds"] = 0.5
    return DdlwmpInstance.from_dict({"problem": "ddlwmp", "cluster": cluster, "models": models, "jobs": jobs})


def _run(name: str, inst: DdlwmpInstance, **params: Any) -> dict[str, Any]:
    res = RUNS[name](inst, objective="total_completion", time_limit=None, seed=0, **params)
    assert res.status == Status.FEASIBLE
    ev = evaluate(inst, res.solution)
    assert ev.feasible, (name, ev.violations)
    return {j["id"]: j for j in res.solution["jobs"]}


@pytest.mark.parametrize("seed", range(40))
def test_every_policy_is_feasible_on_random_instances(seed: int) -> None:
    inst = random_instance(seed)
    for name in RUNS:
        sched = _run(name, inst)
        assert list(sched) == [j.id for j in inst.jobs]
    for params in ({"tau": 0.0}, {"tau": 5.0, "comm_heavy": 1.1}, {"comm_heavy": 100.0}):
        _run("a-srpt", inst, **params)


# ----------------------------------------------------------------------------- hand-worked cases
SMALL = {"allreduce": "ring", "stages": [_stage(1, 0.4, 0.6, 0, 0, 1e6)]}  # alpha = 1 s anywhere


def _instance(servers: int, gpus: int, models: dict[str, Any], jobs: list[dict[str, Any]],
              inter: float = 1.25e9) -> DdlwmpInstance:
    return DdlwmpInstance.from_dict({"problem": "ddlwmp", "models": models, "jobs": jobs, "cluster": {
        "servers": servers, "gpus_per_server": gpus, "inter_bandwidth": inter, "intra_bandwidth": 3e11}})


def test_a_srpt_follows_srpt_order_of_the_virtual_machine() -> None:
    # One GPU (G = 1), alpha = 1 s: Ã1 sizes are the predicted iterations. Ã1: A runs 0-0.5,
    # B (2) 0.5-2.5, C (5) 2.5-7.5, A 7.5-17. The queue gets B at 3, C at 8, A at 17.
    jobs = [{"id": "A", "release": 0, "model": "s", "iterations": 10, "predicted_iterations": 10},
            {"id": "B", "release": 0.5, "model": "s", "iterations": 2, "predicted_iterations": 2},
            {"id": "C", "release": 0.5, "model": "s", "iterations": 5, "predicted_iterations": 5}]
    inst = _instance(1, 1, {"s": SMALL}, jobs)
    s = _run("a-srpt", inst)
    assert {k: v["start"] for k, v in s.items()} == {"A": 17.0, "B": 3.0, "C": 8.0}
    assert s["A"]["completion"] == pytest.approx(27.0)
    f = _run("fifo", inst)  # arrival order, B and C delivered at slot 1
    assert {k: v["start"] for k, v in f.items()} == {"A": 0.0, "B": 10.0, "C": 12.0}
    w = _run("wcs-duration", inst)  # A alone at 0; then the shorter B first
    assert {k: v["start"] for k, v in w.items()} == {"A": 0.0, "B": 10.0, "C": 12.0}
    # No prediction: size 0, the job joins the queue at its release.
    jobs[0].pop("predicted_iterations")
    s = _run("a-srpt", _instance(1, 1, {"s": SMALL}, jobs))
    assert s["A"]["start"] == 0.0


def test_a_srpt_perfect_uses_true_iterations() -> None:
    jobs = [{"id": "A", "release": 0, "model": "s", "iterations": 10, "predicted_iterations": 1},
            {"id": "B", "release": 0.5, "model": "s", "iterations": 2, "predicted_iterations": 20}]
    inst = _instance(1, 1, {"s": SMALL}, jobs)
    assert _run("a-srpt", inst)["A"]["start"] == 1.0       # Ã1 believes A is short
    perfect = _run("a-srpt-perfect", inst)
    for j in jobs:
        j["predicted_iterations"] = j["iterations"]
    assert perfect == _run("a-srpt", _instance(1, 1, {"s": SMALL}, jobs))
    assert perfect["B"]["start"] == 3.0 and perfect["A"]["start"] == 12.0  # Ã1: A 0-0.5, B -2.5, A -12


def test_strict_head_of_line_versus_work_conserving() -> None:
    big = {"allreduce": "ring", "stages": [_stage(4, 0.4, 0.6, 0, 0, 1e6)]}
    jobs = [{"id": "a", "release": 0, "model": "s", "iterations": 10},
            {"id": "big", "release": 1, "model": "b", "iterations": 5},
            {"id": "c", "release": 2, "model": "s", "iterations": 3}]
    inst = _instance(1, 4, {"s": SMALL, "b": big}, jobs)
    f = _run("fifo", inst)
    assert f["a"]["start"] == 0 and f["big"]["start"] == 10 and f["c"]["start"] >= f["big"]["completion"]
    w = _run("wcs-subtime", inst)
    assert w["a"]["start"] == 0 and w["c"]["start"] == 2 and w["big"]["start"] == 10


def test_predicted_queues_order_by_duration_or_by_workload() -> None:
    """Sec. V-A-1-d's keys on one 4-GPU server held by a blocker until t = 4 s: x (1 GPU, 8 s,
    workload 8 GPU-s) and y (4 GPUs, 3 s, workload 12 GPU-s) wait. By predicted duration (spjf,
    wcs-duration) y starts first; by predicted workload, duration x GPUs (spwf, wcs-workload), x
    does. The work-conserving ones also start the other job when it fits (never here: y takes
    the whole server, and x leaves three GPUs to a 4-GPU job)."""
    four = {"allreduce": "ring", "stages": [_stage(4, 0.4, 0.6, 0, 0, 1.0)]}  # alpha ~ 1 s
    jobs = [{"id": "blocker", "release": 0, "model": "four", "iterations": 4, "predicted_iterations": 4},
            {"id": "x", "release": 1, "model": "one", "iterations": 8, "predicted_iterations": 8},
            {"id": "y", "release": 1, "model": "four", "iterations": 3, "predicted_iterations": 3}]
    inst = _instance(1, 4, {"one": SMALL, "four": four}, jobs)
    for name, first in (("spjf", "y"), ("wcs-duration", "y"), ("spwf", "x"), ("wcs-workload", "x")):
        sched = _run(name, inst)
        second = "x" if first == "y" else "y"
        assert sched["blocker"]["completion"] == pytest.approx(4.0, abs=0.01), name
        assert sched[first]["start"] == 4 and sched[second]["start"] >= sched[first]["completion"] - 1e-9, name


def _delay_case(tau: float, **readings: Any) -> dict[str, Any]:
    # Two servers of 4 GPUs; h2 (2 GPUs) and h4 (4 GPUs) are communication-heavy (large ring
    # AllReduce). H1 and H2 take 2 GPUs of server 0 and of server 1; H4 then only finds 2 + 2.
    # Ã1 sizes (G = 8): H1 0.26 s, H2 0.52 s, H4 5.25 s, L 12.5 s; completions 0.26, 0.78, 6.03,
    # 18.5, so the queue gets H1, H2 at slot 1, H4 at 7, L at 19.
    heavy2 = {"allreduce": "ring", "stages": [_stage(2, 0.04, 0.06, 0, 0, 1e9)]}
    heavy4 = {"allreduce": "ring", "stages": [_stage(4, 0.04, 0.06, 0, 0, 1e9)]}
    one = {"allreduce": "ring", "stages": [_stage(1, 0.04, 0.06, 0, 0, 1e6)]}
    jobs = [{"id": "H1", "release": 0, "model": "h2", "iterations": 1000, "predicted_iterations": 10},
            {"id": "H2", "release": 0, "model": "h2", "iterations": 100000, "predicted_iterations": 20},
            {"id": "H4", "release": 0, "model": "h4", "iterations": 100, "predicted_iterations": 100},
            {"id": "L", "release": 0, "model": "one", "iterations": 10, "predicted_iterations": 1000}]
    inst = _instance(2, 4, {"h2": heavy2, "h4": heavy4, "one": one}, jobs)
    return _run("a-srpt", inst, tau=tau, **readings)


def test_a_srpt_delays_a_comm_heavy_job_until_a_better_placement() -> None:
    now = _delay_case(0.0)  # no delay: H4 starts as soon as it heads the queue, split 2 + 2
    assert now["H1"]["start"] == 1 and now["H2"]["start"] == 1
    assert now["H1"]["assignment"] == [[0, 0]] and now["H2"]["assignment"] == [[1, 1]]
    assert now["H4"]["start"] == 7 and sorted(now["H4"]["assignment"][0]) == [0, 0, 1, 1]
    late = _delay_case(100.0)  # waits for H1's GPUs (freed at ceil(C_H1)), then one server
    free_h1 = np.ceil(late["H1"]["completion"])
    assert late["H4"]["start"] == free_h1 and late["H4"]["assignment"] == [[0, 0, 0, 0]]
    assert late["H4"]["alpha_s"] < now["H4"]["alpha_s"]
    # L joins the queue behind H4 at slot 19 and would fit (2 + 2 GPUs free), but the delayed
    # head blocks the queue.
    assert late["L"]["start"] >= late["H4"]["start"]
    short = _delay_case(1.0)  # deadline 7 + 5.25 s: no better placement by slot 12, start there
    assert short["H4"]["start"] == 12 and sorted(short["H4"]["assignment"][0]) == [0, 0, 1, 1]


def test_deterministic() -> None:
    inst = random_instance(123)
    for name in RUNS:
        a = RUNS[name](inst, objective="total_completion", time_limit=None, seed=3).solution
        b = RUNS[name](inst, objective="total_completion", time_limit=None, seed=3).solution
        assert a == b


def test_server_selection_rules() -> None:
    free = np.array([1, 4, 2, 4, 3])
    s, c = most_free_servers(free, 6)
    assert s.tolist() == [1, 3] and c.tolist() == [4, 2]
    s, c = least_free_servers(free, 2)
    assert s.tolist() == [2] and c.tolist() == [2]          # best fit
    s, c = least_free_servers(free, 5)
    assert s.tolist() == [0, 2, 4] and c.tolist() == [1, 2, 2]
    with pytest.raises(ValueError):
        most_free_servers(free, 15)


def test_event_queue_batches_instants() -> None:
    q = EventQueue()
    q.push(2.0, "b", 1, priority=1)
    q.push(1.0, "a", 0)
    q.push(2.0, "c", 2, priority=0)
    seen: list[tuple[float, list[Any]]] = []

    def handle(t: float, batch: list[Any]) -> None:
        seen.append((t, [e.payload for e in batch]))
        if t == 1.0:
            q.push(3.0, "d", 3)

    assert drive(q, handle) == 3
    assert seen == [(1.0, [0]), (2.0, [2, 1]), (3.0, [3])]


def test_time_limit_gives_time_limit_status(monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulation stops at its first check past the deadline, with no (partial) solution.
    The clock is injected: it advances 1 s per reading, so a 0.5 s limit has passed at the first
    check and a 10^9 s limit never does, on any machine."""
    TickingClock(step=1.0).install(monkeypatch)
    res = algorithms.run_a_srpt(random_instance(5), objective="total_completion", time_limit=0.5, seed=0)
    assert res.status == Status.TIME_LIMIT and res.solution is None
    res = algorithms.run_a_srpt(random_instance(5), objective="total_completion", time_limit=1e9, seed=0)
    assert res.status == Status.FEASIBLE and res.solution is not None


def test_comm_heavy_test_is_greater_or_equal_as_line_8_says() -> None:
    # Line 8 reads alpha_max / alpha~min >= COMM_HEAVY (the text's "exceeds" would be >): a model
    # whose ratio equals the threshold exactly is communication-heavy; just above it, it is not.
    heavy4 = {"allreduce": "ring", "stages": [_stage(4, 0.04, 0.06, 0, 0, 1e9)]}
    jobs = [{"id": "J", "release": 0, "model": "h4", "iterations": 10}]
    inst = _instance(2, 4, {"h4": heavy4}, jobs)
    probe = a_srpt.ASRPT(inst.cluster, inst.models)
    ratio = probe.placer.alpha_max("h4") / probe.placer.alpha_min("h4")
    assert ratio > 1.0
    assert a_srpt.ASRPT(inst.cluster, inst.models, comm_heavy=ratio)._comm_heavy("h4")
    assert not a_srpt.ASRPT(inst.cluster, inst.models, comm_heavy=ratio * (1 + 1e-9))._comm_heavy("h4")
    # reading comm_heavy_test="gt" (the text's "exceeds"): at equality the job is light
    assert not a_srpt.ASRPT(inst.cluster, inst.models, comm_heavy=ratio, comm_heavy_test="gt")._comm_heavy("h4")
    assert a_srpt.ASRPT(inst.cluster, inst.models, comm_heavy=ratio * (1 - 1e-9), comm_heavy_test="gt")._comm_heavy("h4")


def _light_case(**readings: Any) -> dict[str, Any]:
    # Three servers of 4 GPUs (G = 12); every model is one stage with 1 KB of parameters, so
    # alpha_max / alpha~min = 1.00 < 1.5: no job is communication-heavy. alpha = 0.1 s.
    light = {k: {"allreduce": "ring", "stages": [_stage(k, 0.04, 0.06, 0, 0, 1e3)]} for k in (1, 2, 3)}
    jobs = [{"id": "A", "release": 0, "model": "l3", "iterations": 10000, "predicted_iterations": 30},
            {"id": "B", "release": 0, "model": "l2", "iterations": 10000, "predicted_iterations": 60},
            {"id": "C", "release": 0, "model": "l1", "iterations": 10000, "predicted_iterations": 126},
            {"id": "D", "release": 0, "model": "l2", "iterations": 10000, "predicted_iterations": 66}]
    inst = _instance(3, 4, {f"l{k}": m for k, m in light.items()}, jobs)
    return _run("a-srpt", inst, **readings)


def test_a_srpt_places_light_jobs_best_fit_not_on_the_most_free_servers() -> None:
    """Algorithm 1 line 22, worked by hand. Ã1 sizes (g/G)·ñ·0.1 s: A 0.25·30·0.1 = 0.75,
    B (2/12)·60·0.1 = 1.0, C (1/12)·126·0.1 = 1.05, D (2/12)·66·0.1 = 1.1; SRPT runs them in
    that order, completing at 0.75, 1.75, 2.8, 3.9, so they start at slots 1, 2, 3, 4 (no job
    ends before 1000 s). Free GPUs per server, best fit (the fullest server that holds the job):
    [4,4,4] -A(3)-> server 0 -> [1,4,4] -B(2)-> server 1 (4 and 4 hold it; tie: lower index)
    -> [1,2,4] -C(1)-> server 0 (free 1) -> [0,2,4] -D(2)-> server 1 (free 2) -> [0,0,4].
    On the most-free servers C would go to server 2 and D to server 2 ([1,2,4] -> [1,2,3]),
    leaving server 2 fragmented for a later communication-heavy job."""
    got = _light_case()
    assert [got[j]["start"] for j in "ABCD"] == [1, 2, 3, 4]
    assert got["A"]["assignment"] == [[0, 0, 0]]
    assert got["B"]["assignment"] == [[1, 1]]
    assert got["C"]["assignment"] == [[0]]
    assert got["D"]["assignment"] == [[1, 1]]
    most = _light_case(light_placement="most-free")  # the reading's contrast option, same hand trace
    assert [most[j]["assignment"] for j in "ABCD"] == [[[0, 0, 0]], [[1, 1]], [[2]], [[2, 2]]]


def test_a_srpt_delay_blocks_the_queue_unless_the_reading_says_otherwise() -> None:
    """_delay_case with tau = 100: H4 waits from slot 7 for H1's GPUs (H1 runs 1000 iterations,
    about 100 s); L (1 GPU) joins the queue at slot 19, when servers 0 and 1 have 2 free GPUs each.
    Blocking (lines 15-20 inside the head's service): L starts only after H4. Not blocking: L
    starts at 19."""
    block = _delay_case(100.0)
    assert block["L"]["start"] >= block["H4"]["start"] > 19
    free = _delay_case(100.0, delay_blocks_queue=False)
    assert free["L"]["start"] == 19
    assert free["H4"]["start"] == block["H4"]["start"]


def test_a_delayed_job_past_its_deadline_waits_for_a_completion_not_for_every_slot() -> None:
    """Two servers of 2 GPUs (G = 4), light jobs placed on the most-free servers. A and B (1 GPU,
    100 s, predicted 0) start at 0 on servers 0 and 1. C (2 GPUs, communication-heavy; Ã1 size
    0.5 x 100 x 0.1033 s) joins the queue at slot 7 and finds 1 + 1 GPUs: it waits, until slot 58
    (tau = 10). Not blocking, D (1 GPU) joins at 8 and takes server 0's GPU, so at 58 C does not
    fit. The GPUs come back when A and B end at 100: C starts there, on server 1 alone. Between 58
    and 100 nothing can change, and the policy asks for no wake-up per slot (it did, 42 instants)."""
    from optkit.formulations.ddlwmp.simulate import simulate

    heavy2 = {"allreduce": "ring", "stages": [_stage(2, 0.04, 0.06, 0, 0, 1e9)]}
    one = {"allreduce": "ring", "stages": [_stage(1, 0.04, 0.06, 0, 0, 1e6)]}
    jobs = [{"id": "A", "release": 0, "model": "one", "iterations": 1000, "predicted_iterations": 0},
            {"id": "B", "release": 0, "model": "one", "iterations": 1000, "predicted_iterations": 0},
            {"id": "C", "release": 1, "model": "h2", "iterations": 100, "predicted_iterations": 100},
            {"id": "D", "release": 8, "model": "one", "iterations": 1000, "predicted_iterations": 0}]
    inst = _instance(2, 2, {"h2": heavy2, "one": one}, jobs)
    stats: dict[str, Any] = {}
    policy = a_srpt.ASRPT(inst.cluster, inst.models, tau=10.0, delay_blocks_queue=False, light_placement="most-free",
                          seed=0)
    got = {j["id"]: j for j in simulate(inst, policy, stats=stats)["jobs"]}
    assert [got[j]["assignment"] for j in "ABD"] == [[[0]], [[1]], [[0]]]
    assert policy.delayed == 1 and got["C"]["start"] == 100 and got["C"]["assignment"] == [[1, 1]]
    assert stats["instants"] <= 8


def test_a_srpt_head_of_line_strict_or_skip() -> None:
    """One server of 4 GPUs, light models (1 KB parameters), alpha 0.1 s, G = 4. Ã1 sizes:
    X (3 GPUs, ñ 10) 0.75, Y (2 GPUs, ñ 20) 1.0, Z (1 GPU, ñ 41) 1.025: they join the queue at
    slots 1, 2, 3. X runs 10000 iterations (1000 s), so Y (2 GPUs) does not fit beside it (1 free).
    Strict (line 25): Z waits behind Y until X ends. Skip: Z takes the free GPU at slot 3."""
    light = {f"l{k}": {"allreduce": "ring", "stages": [_stage(k, 0.04, 0.06, 0, 0, 1e3)]} for k in (1, 2, 3)}
    jobs = [{"id": "X", "release": 0, "model": "l3", "iterations": 10000, "predicted_iterations": 10},
            {"id": "Y", "release": 0, "model": "l2", "iterations": 10, "predicted_iterations": 20},
            {"id": "Z", "release": 0, "model": "l1", "iterations": 10, "predicted_iterations": 41}]
    inst = _instance(1, 4, light, jobs)
    strict = _run("a-srpt", inst)
    assert strict["X"]["start"] == 1 and strict["Y"]["start"] >= strict["X"]["completion"]
    assert strict["Z"]["start"] >= strict["Y"]["start"]
    skip = _run("a-srpt", inst, head_of_line="skip")
    assert skip["Z"]["start"] == 3 and skip["Y"]["start"] == strict["Y"]["start"]


class _OneListQueue(a_srpt.ASRPT):
    """Alg. 1's pending_queue as one list scanned front to back (the reference for the per-demand
    deques of :meth:`ASRPT._next_job`)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.order: list[Any] = []

    def _enqueue(self, job: Any) -> None:
        self.order.append(job)

    def _next_job(self, state: Any) -> Any:
        for i, job in enumerate(self.order):
            if state.fits(job):
                return self.order.pop(i)
            if self.head_of_line == "strict":
                return None
        return None


@pytest.mark.parametrize("head_of_line", ["strict", "skip"])
@pytest.mark.parametrize("delay_blocks_queue", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_a_srpt_per_demand_queues_give_the_one_list_scan(seed: int, head_of_line: str,
                                                          delay_blocks_queue: bool) -> None:
    """The per-demand deques choose every job as one queue scanned front to back does: identical
    schedules on loaded paper-sim workloads (a backlog of 1-16-GPU jobs on 4 servers of 8), with
    jobs passed over under skip (a changed scan order, or a skipped job left out, changes a start).
    60 jobs per workload (300 before: 150 CPU seconds, mostly slot-by-slot wake-ups of long
    backlogs): every seed still passes jobs over under skip (asserted), and the same queue bugs
    fail it (checked by hand: the earliest-deque comparison reversed or dropped, ``<=`` free
    GPUs made ``<``, a deque's tail taken for its head, one sequence number for all, strict's
    head started without fitting)."""
    from optkit.formulations.ddlwmp.generate import generate
    from optkit.formulations.ddlwmp.simulate import simulate

    inst = DdlwmpInstance.from_dict(generate(jobs=60, servers=4, load=1.2, single_gpu_share=0.5, seed=seed,
                                             predictor="mean"))
    kw = dict(tau=1.0 + seed, head_of_line=head_of_line, delay_blocks_queue=delay_blocks_queue, seed=seed)
    got = simulate(inst, a_srpt.ASRPT(inst.cluster, inst.models, **kw))
    ref = simulate(inst, _OneListQueue(inst.cluster, inst.models, **kw))
    assert got["jobs"] == ref["jobs"]
    if head_of_line == "skip":  # the case exercises passing over: some job starts before an earlier-queued one
        strict = simulate(inst, a_srpt.ASRPT(inst.cluster, inst.models, **dict(kw, head_of_line="strict")))
        assert got["jobs"] != strict["jobs"]


@pytest.mark.parametrize("seed", range(3))
def test_demand_queue_heads_are_those_of_one_list_scanned_in_order(seed: int) -> None:
    """:class:`DemandQueue` (the per-demand queue of the baselines and of A-SRPT's skip) against
    one list sorted by order and scanned front to back: after every push and pop, on random free
    GPUs, ``head()`` is the list's first job and ``head(state)`` its first job that fits
    (:meth:`ClusterState.fits`: single-node jobs by one server's free GPUs); ties in the leading
    order fields fall to the unique last one. Breaks checked by hand: a heap's tail taken for
    its head, ``<=`` made ``<``, single-node jobs fitted by the cluster's free GPUs, the order's
    last field dropped from the comparison."""
    from optkit.formulations.ddlwmp.policies import ClusterState, DemandQueue, JobSpec

    rng = np.random.default_rng(seed)
    queue = DemandQueue()
    ref: list[tuple[tuple[Any, ...], JobSpec]] = []
    passed_over = 0
    for step in range(300):
        if rng.random() < 0.6 or not ref:
            job = JobSpec(f"j{step}", 0.0, "m", int(rng.choice([1, 2, 3, 4, 8, 12])), None, bool(rng.random() < 0.3))
            order = (int(rng.integers(3)), step)  # few keys: ties broken by the push counter
            queue.push(order, job)
            ref.append((order, job))
            ref.sort(key=lambda e: e[0])
        state = ClusterState(rng.integers(0, 9, size=3), 8)
        fitting = [j for _, j in ref if state.fits(j)]
        assert queue.head() is ref[0][1] and len(queue) == len(ref)
        assert queue.head(state) is (fitting[0] if fitting else None)
        passed_over += bool(fitting) and fitting[0] is not ref[0][1]
        if rng.random() < 0.4:
            got = queue.head(state, pop=True) if rng.random() < 0.5 else queue.head(pop=True)
            if got is not None:
                ref = [e for e in ref if e[1] is not got]
    assert passed_over > 20  # the scan passed over jobs that did not fit


@pytest.mark.parametrize("policy", ["a-srpt", "spjf", "fifo"])
@pytest.mark.parametrize("placer", ["heavy-edge", 3])
def test_a_placer_that_is_not_a_placer_is_refused_naming_it(policy: str, placer: object) -> None:
    """A-SRPT and the baselines take ``placer=`` (a shared Placer) alike: anything else is an
    InputError naming ``placer``, from the Python entry a scheduler engineer uses
    (OnlineScheduler) as from the policy itself; A-SRPT's used to fail later with an
    AttributeError on the string."""
    from optkit.errors import InputError
    from optkit.formulations.ddlwmp import OnlineScheduler

    with pytest.raises(InputError, match=r"placer must be a Placer, got (str|int)"):
        OnlineScheduler(policy, nodes={"a": 8, "b": 8}, placer=placer)
