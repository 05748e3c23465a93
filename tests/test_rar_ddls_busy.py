"""rar-ddls with GPUs busy until a given slot (``busy_until``) and SJF-BCO by node id
(``schedule_batch``): issue 22, items 3-5.

The network of every hand-worked case: b^e = 1.25e9 B/s, b^i = 3e11 B/s, C = 5e10 B/s, xi1 = 1,
xi2 = 0.002 s, alpha = 0.2; jobs of 500 iterations, m = 1e7 B, M = 32, Δf = 1e-4 s, Δb = 0.004 s.

* A 2-GPU job on one server: share = m(w-1)/w = 5e6 B; tau = 2·5e6/3e11 + 5e6/5e10 + 0.002·1 +
  1e-4·32 + 0.004 = 0.0093333 s, phi = floor(1/tau) = 107, so ceil(500/107) = 5 slots.
* A 4-GPU job split over two servers, alone (p = 1, k = 1, f = 1, B = b^e): share = 7.5e6 B;
  tau = 2·7.5e6/1.25e9 + 7.5e6/5e10 + 0.002·2 + 0.0032 + 0.004 = 0.02335 s, phi = 42, so
  ceil(500/42) = 12 slots.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.rar_ddls import BatchSchedule, Job, JobSlots, Network, RarInstance, evaluate, schedule_batch
from optkit.formulations.rar_ddls import bounds, exact
from optkit.formulations.rar_ddls.baselines import ff, ls, rand
from optkit.formulations.rar_ddls.generate import paper_sec7, tiny
from optkit.formulations.rar_ddls.model import schedule_dict
from optkit.formulations.rar_ddls.sjf_bco import sjf_bco
from optkit.result import Status

NET = Network(1.25e9, 3e11, 5e10, 1.0, 0.002, 0.2)


def _job(jid: str, gpus: int) -> Job:
    return Job(jid, gpus, 500, 1e7, 32, 1e-4, 0.004)


def _inst(servers: list[int], jobs: list[Job], busy: Any = None, horizon: int = 100) -> RarInstance:
    d: dict[str, Any] = {"servers": servers, "network": NET.to_dict(), "horizon": horizon,
                         "jobs": [j.to_dict() for j in jobs]}
    if busy is not None:
        d["busy_until"] = busy
    return RarInstance.from_dict(d)


def busy_case(seed: int, jobs: int) -> dict[str, Any]:
    """``tiny(seed)`` with some GPUs of every other server busy until a slot in 1..8 (seeded)."""
    d = tiny(seed, jobs=jobs)
    rng = np.random.default_rng(seed)
    d["busy_until"] = [[int(rng.integers(1, 9)) for _ in range(int(rng.integers(1, o + 1)) if s % 2 == 0 else 0)]
                       for s, o in enumerate(d["servers"])]
    return d


# ----------------------------------------------------------------------------- hand-worked cases
def test_two_busy_gpus_hand_worked() -> None:
    """Servers n1, n2 of 2 GPUs; both GPUs of n1 busy until slot 6; jobs a, b of 2 GPUs (5 slots
    each on one server, module docstring).

    By hand: U starts at (6, 6, 0, 0). a (SJF order keeps a first) goes to n2, U = (6, 6, 5, 5).
    b fits under theta = 10 on n2 (5 + 5), not on n1 (6 + 5 = 11), and under theta = 9 nowhere,
    so the minimum feasible theta is 10: b waits on n2 for a (idle-now: the plan's clock moves
    to a's exit at 5), runs in slots 5..9. Starts 0 and 5, completions 5 and 10, makespan 10 slots
    = 10 s. Nothing uses n1, and no job starts on it before slot 6."""
    r = schedule_batch([_job("a", 2), _job("b", 2)], {"n1": 2, "n2": 2}, NET,
                       busy_until={("n1", 0): 6, ("n1", 1): 6})
    assert r.ok and r.reason is None
    assert {j: (s.start, s.completion, s.gpus) for j, s in r.jobs.items()} == {
        "a": (0, 5, {"n2": [0, 1]}), "b": (5, 10, {"n2": [0, 1]})}
    assert (r.makespan_slots, r.makespan) == (10, 10.0)
    assert r.info["theta_u"] == 10


def test_gang_waits_for_the_busy_gpus_hand_worked() -> None:
    """The same servers, n1's GPUs busy until slot 5; a of 2 GPUs and b of 4 GPUs. a runs on n2
    in slots 0..4. b needs all four GPUs at once: it starts at slot 5, when both n1 (released)
    and n2 (a completed) are free, split over both servers, 12 slots: completion 17 = the
    makespan. With n1 busy until 8 instead, a still completes at 5 but b must wait for n1: it
    starts at 8 and completes at 20."""
    r = schedule_batch([_job("a", 2), _job("b", 4)], {"n1": 2, "n2": 2}, NET,
                       busy_until={("n1", 0): 5, ("n1", 1): 5})
    assert [(j, s.start, s.completion) for j, s in r.jobs.items()] == [("a", 0, 5), ("b", 5, 17)]
    assert r.jobs["b"].gpus == {"n1": [0, 1], "n2": [0, 1]} and r.makespan_slots == 17
    late = schedule_batch([_job("a", 2), _job("b", 4)], {"n1": 2, "n2": 2}, NET,
                          busy_until={("n1", 0): 8, ("n1", 1): 8})
    assert (late.jobs["b"].start, late.jobs["b"].completion, late.makespan_slots) == (8, 20, 20)


def test_only_the_busy_gpu_waits() -> None:
    """One 4-GPU node h, its GPU 2 busy until slot 9; jobs "big" of 3 GPUs and "one" of 1 GPU.

    By hand: a 1-GPU job takes 5 slots (tau = 0.002 + 0.0032 + 0.004 = 0.0092 s, phi = 108); a
    3-GPU job on one server too (share 6.667e6 B, tau = 0.009378 s, phi = 106, ceil(500/106) = 5).
    SJF order plans "one" first, on the least-loaded GPU, h[0], slots 0..4. "big" needs 3 GPUs:
    at slot 0 only h[1] and h[3] are idle, so the plan waits for the next exit ("one" at 5) and
    takes h[0], h[1], h[3] (not h[2], busy until 9): slots 5..9, completion 10 = the makespan."""
    r = schedule_batch([_job("big", 3), _job("one", 1)], {"h": 4}, NET, busy_until={("h", 2): 9})
    assert r.jobs["one"] == JobSlots(0, 5, {"h": [0]})
    assert r.jobs["big"] == JobSlots(5, 10, {"h": [0, 1, 3]})
    assert r.makespan_slots == 10


def test_cluster_index_release_is_the_last_busy_slot_of_the_gpus() -> None:
    """Servers of 2 and 3 GPUs as one flat index (GPUs 0-1 on server 0, 2-4 on server 1); GPU 1
    busy until 4, GPU 3 until 7. A gang can start when its last GPU is free: 0 for free GPUs or
    no GPUs, 4 with GPU 1, 7 with GPU 3; a cluster with nothing busy releases everything at 0."""
    from optkit.formulations.rar_ddls.plan import ClusterIndex

    c = ClusterIndex.of([2, 3], [[0, 4], [0, 7]])
    assert c.server_of.tolist() == [0, 0, 1, 1, 1] and c.local.tolist() == [0, 1, 0, 1, 2]
    assert c.busy is not None and c.busy.tolist() == [0, 4, 0, 7, 0]
    got = [c.release(np.array(g, dtype=np.int64)) for g in ([0, 2], [1, 2], [1, 3], [])]
    assert got == [0, 4, 7, 0]
    free = ClusterIndex.of([2, 3])
    assert free.busy is None and free.release(np.array([0, 4])) == 0


def test_evaluate_rejects_a_job_on_a_busy_gpu() -> None:
    """A 4-GPU job on both 2-GPU servers at slot 0 while n1's GPUs are busy until 5: server 0
    would hold 2 job GPUs + 2 busy GPUs > 2."""
    inst = _inst([2, 2], [_job("b", 4)], busy=[[5, 5], []])
    bad = {"jobs": [{"id": "b", "start": 0, "gpus_per_server": [2, 2]}]}
    ev = evaluate(inst, bad)
    assert not ev.feasible
    assert ev.violations == ["server 0 holds 2 GPUs in slot 0 while 2 of its GPUs are busy until a later slot "
                             "(busy_until[0]): 0 are free (capacity O_s = 2)"]
    ok = evaluate(inst, {"jobs": [{"id": "b", "start": 5, "gpus_per_server": [2, 2]}]})
    assert ok.feasible and ok.metrics["makespan_slots"] == 17 and ok.objectives["makespan"] == 17.0
    one = _inst([2, 2], [_job("b", 4)], busy=[[5], []])  # one busy GPU is enough to block
    assert not evaluate(one, {"jobs": [{"id": "b", "start": 4, "gpus_per_server": [2, 2]}]}).feasible
    assert evaluate(one, {"jobs": [{"id": "b", "start": 5, "gpus_per_server": [2, 2]}]}).feasible


def test_makespan_is_the_jobs_not_the_busy_work() -> None:
    """A GPU busy until slot 50 on another server does not lengthen a batch done at 5."""
    inst = _inst([2, 2], [_job("a", 2)], busy=[[50], []])
    y, res = sjf_bco(inst)
    ev = evaluate(inst, schedule_dict(inst, y, res.outcome))
    assert y.tolist() == [[0, 2]] and ev.metrics["makespan_slots"] == 5


# ----------------------------------------------------------------------------- the instance field
def test_busy_until_round_trips_in_normal_form() -> None:
    inst = _inst([2, 3], [_job("a", 2)], busy=[[0, 4], [0, 0, 0]])
    assert inst.busy_until == ((0, 4), ())
    assert inst.to_dict()["busy_until"] == [[0, 4], []]
    assert RarInstance.from_dict(inst.to_dict()) == inst
    assert inst.busy_slots(0) == (0, 4) and inst.busy_slots(1) == (0, 0, 0)
    assert [inst.free_gpus_at(0, t) for t in (0, 3, 4)] == [1, 1, 2]
    free = _inst([2, 3], [_job("a", 2)], busy=[[0], []])
    plain = _inst([2, 3], [_job("a", 2)])
    assert free == plain and "busy_until" not in free.to_dict() and free.to_dict() == plain.to_dict()
    typed = RarInstance(plain.servers, plain.network, plain.slot_seconds, plain.horizon, plain.jobs, ((0, 4), (0,)))
    assert typed == inst


@pytest.mark.parametrize("seed", range(6))
def test_nothing_busy_gives_todays_results(seed: int) -> None:
    """An all-zero busy map (and an empty one) is the instance without the field: the same
    schedules from SJF-BCO and the three baselines, under both readings of ``available``, and the
    same lower bounds, on seeded instances."""
    for d in (tiny(seed), paper_sec7(seed, servers=4, horizon=400, mix={1: 6, 2: 3, 4: 2, 8: 1})):
        plain = RarInstance.from_dict(d)
        zeros = RarInstance.from_dict({**d, "busy_until": [[0] * o for o in d["servers"]]})
        empty = RarInstance.from_dict({**d, "busy_until": [[] for _ in d["servers"]]})
        assert zeros == plain == empty
        for other in (zeros, empty):
            for f in (sjf_bco, ff, ls, rand):
                for available in ("idle-now", "accumulated"):
                    y0, r0 = f(plain, available=available)
                    y1, r1 = f(other, available=available)
                    assert y0.tolist() == y1.tolist()
                    assert r0.outcome.start.tolist() == r1.outcome.start.tolist()
                    assert r0.outcome.completion.tolist() == r1.outcome.completion.tolist()
                    assert r0.gpus == r1.gpus and r0.theta == r1.theta
            assert bounds.lower_bounds(other) == bounds.lower_bounds(plain)


# ----------------------------------------------------------------------------- algorithms honour it
@pytest.mark.parametrize("seed", range(8))
def test_no_job_starts_on_a_gpu_before_its_busy_slot(seed: int) -> None:
    """Every planner, both readings of ``available``: every job starts no earlier than the
    busy-until slot of each GPU it holds (by GPU index), and evaluate accepts the schedule."""
    inst = RarInstance.from_dict(busy_case(seed, 3))
    for f in (sjf_bco, ff, ls, rand):
        for available in ("idle-now", "accumulated"):
            y, res = f(inst, available=available)
            assert evaluate(inst, schedule_dict(inst, y, res.outcome)).feasible
            for j, gpus in res.gpus.items():
                assert all(res.outcome.start[j] >= inst.busy_slots(s)[g] for s, g in gpus), (f.__name__, j)


def test_busy_gpus_count_in_u_and_theta() -> None:
    """Alg. 1 line 2: U starts at the busy slot. A 1-GPU job takes 5 slots (tau = 0.002 + 0.0032
    + 0.004 = 0.0092 s, phi = 108). Servers of one GPU each.

    * Busy until 7 and free: U = (7, 0); theta = 5 already admits the free GPU (0 + 5), so the
      job runs there from slot 0.
    * Busy until 7 and 3: U = (7, 3); the least theta admitting a GPU is 8 (3 + 5; 7 + 5 = 12),
      the job waits for the second GPU (idle-now: the plan's clock moves to its release, 3) and
      runs in slots 3..7. Lemma 2's W_max = max U = 8 = theta: the busy time counts in U."""
    one = Job("o", 1, 500, 1e7, 32, 1e-4, 0.004)
    y, res = sjf_bco(_inst([1, 1], [one], busy=[[7], []]))
    assert y.tolist() == [[0, 1]] and res.outcome.start.tolist() == [0] and res.theta == 5
    y, res = sjf_bco(_inst([1, 1], [one], busy=[[7], [3]]))
    assert y.tolist() == [[0, 1]] and res.outcome.start.tolist() == [3] and res.outcome.completion.tolist() == [8]
    assert res.max_busy == 8.0 and res.theta == 8


# ----------------------------------------------------------------------------- exact solvers and bounds
BRUTE = [(f"busy-{s}", busy_case(s, 2)) for s in range(8)]
MODEL = [(f"busy3-{s}", busy_case(s, 3)) for s in range(8)]
# Equal servers with different busy GPUs: server symmetry must not force the job onto n0.
ASYM = ("busy-asym", {"servers": [2, 2], "network": NET.to_dict(), "horizon": 30,
                      "jobs": [_job("a", 2).to_dict(), _job("b", 1).to_dict()], "busy_until": [[6, 6], []]})


@pytest.mark.parametrize("name,data", BRUTE + [ASYM], ids=[n for n, _ in BRUTE + [ASYM]])
def test_exact_solvers_agree_with_brute_force(name: str, data: dict[str, Any]) -> None:
    inst = RarInstance.from_dict(data)
    best = exact.brute_force(inst)
    assert best is not None
    c = exact.run_cpsat(inst, seed=0, workers=1, time_limit=None, shortcut=False)
    c_short = exact.run_cpsat(inst, seed=0, workers=1, time_limit=None)
    h = exact.run_highs(inst, seed=0, time_limit=None)
    for r in (c, c_short, h):
        assert r.status is Status.OPTIMAL, (r.status, r.message)
        assert r.objective == best[0]
        assert evaluate(inst, r.solution).feasible
    _check_heuristics_and_bounds(inst, best[0])


@pytest.mark.parametrize("name,data", MODEL, ids=[n for n, _ in MODEL])
def test_cpsat_equals_highs_with_busy_gpus(name: str, data: dict[str, Any]) -> None:
    inst = RarInstance.from_dict(data)
    c = exact.run_cpsat(inst, seed=0, workers=1, time_limit=None, shortcut=False)
    h = exact.run_highs(inst, seed=0, time_limit=None)
    assert c.status is Status.OPTIMAL and h.status is Status.OPTIMAL
    assert c.objective == h.objective
    _check_heuristics_and_bounds(inst, c.objective)


def _check_heuristics_and_bounds(inst: RarInstance, optimum: float) -> None:
    """Every heuristic's evaluated makespan >= the optimum >= every lower bound."""
    for name, lb in {**bounds.lower_bounds(inst), **bounds.lower_bounds(inst, "total_completion")}.items():
        if name != "LB_sum":
            assert lb <= optimum + 1e-9, name
    for f in (sjf_bco, ff, ls, rand):
        y, res = f(inst)
        ev = evaluate(inst, schedule_dict(inst, y, res.outcome))
        assert ev.feasible and ev.objectives["makespan"] >= optimum - 1e-9, f.__name__


def test_the_asymmetric_case_needs_the_free_server() -> None:
    """ASYM by hand: servers of 2 GPUs, both of server 0 busy until 6; a (2 GPUs, 5 slots on one
    server), b (1 GPU, 5 slots). a on server 1 in slots 0..4, then b on server 1 in 5..9: 10
    slots. Every other schedule is longer: b first on server 1 leaves a one GPU there, so a
    waits for server 0 (6 + 5 = 11, or split: 10 slots, 16); a on server 0 starts at 6 (11). The
    optimum is 10; the old server symmetry (equal O_s only) would put a on server 0: 11."""
    inst = RarInstance.from_dict(ASYM[1])
    value, sol = exact.brute_force(inst)
    assert value == 10.0
    assert {e["id"]: (e["start"], e["gpus_per_server"]) for e in sol["jobs"]} == {"a": (0, [0, 2]), "b": (5, [0, 1])}


def test_bounds_with_busy_gpus_hand_worked() -> None:
    """Servers of 2 and 2 GPUs; GPUs busy until 5, 5, 0, 0; one 4-GPU job (12 slots split, by hand
    in the module docstring; it cannot fit one server). r sorted = 0, 0, 5, 5, so the job starts
    at >= r_(4) = 5: LB_job = 5 + 12 = 17 (the optimum). Area: 4·12 = 48 GPU-slots; the free
    GPU-slots before M are 2M + 2(M - 5) = 4M - 10 >= 48 at M = 15 (ceil(58/4)). Without busy
    GPUs both are 12."""
    inst = _inst([2, 2], [_job("b", 4)], busy=[[5, 5], []])
    lbs = bounds.lower_bounds(inst)
    assert lbs["LB_job"] == 17.0 and lbs["LB_area"] == 15.0 and lbs["LB_conflict"] == 0.0
    assert bounds.lower_bounds(inst, "total_completion") == {"LB_sum": 17.0}
    assert bounds.lower_bounds(_inst([2, 2], [_job("b", 4)])) == {"LB_job": 12.0, "LB_area": 12.0,
                                                                   "LB_conflict": 0.0}
    assert bounds.earliest_starts(inst) == [5]
    assert bounds.theorem5(inst)["proven"] is False and bounds.theorem5(_inst([2, 2], [_job("b", 4)]))["proven"]


# ----------------------------------------------------------------------------- schedule_batch
def test_schedule_batch_equals_sjf_bco_on_the_instance() -> None:
    """By node id = by position: the same placements, starts and GPUs as sjf_bco on the file."""
    d = busy_case(3, 3)
    nodes = {f"host-{chr(97 + s)}": o for s, o in enumerate(d["servers"])}
    names = list(nodes)
    busy = {(names[s], g): v for s, row in enumerate(d["busy_until"]) for g, v in enumerate(row)}
    jobs = [Job.from_dict(jd) for jd in d["jobs"]]
    r = schedule_batch(jobs, nodes, Network.from_dict(d["network"]), busy_until=busy, horizon=d["horizon"])
    inst = RarInstance.from_dict(d)
    y, res = sjf_bco(inst)
    ev = evaluate(inst, schedule_dict(inst, y, res.outcome))
    assert r.makespan == ev.objectives["makespan"]
    assert r.past_horizon is False and not ev.metrics["past_horizon"]
    for j, job in enumerate(inst.jobs):
        got = r.jobs[job.id]
        assert (got.start, got.completion) == (res.outcome.start[j], res.outcome.completion[j])
        assert {n: len(g) for n, g in got.gpus.items()} == {names[s]: int(v) for s, v in enumerate(y[j]) if v}
    assert r.busy_until == {k: v for k, v in busy.items() if v}


def test_schedule_batch_next_batch_after_time_passes() -> None:
    """busy_at(k): the busy map of a call k slots later. The first batch holds n2 until 10 (a and
    b of the two-busy-GPU case); 4 slots later n1 is still busy until 6 - 4 = 2 and n2 until
    10 - 4 = 6; a 4-GPU job of the next batch starts at 6 (slot 10 of the first call's clock)."""
    first = schedule_batch([_job("a", 2), _job("b", 2)], {"n1": 2, "n2": 2}, NET,
                           busy_until={("n1", 0): 6, ("n1", 1): 6})
    busy = first.busy_at(4)
    assert busy == {("n1", 0): 2, ("n1", 1): 2, ("n2", 0): 6, ("n2", 1): 6}
    second = schedule_batch([_job("c", 4)], {"n1": 2, "n2": 2}, NET, busy_until=busy)
    assert (second.jobs["c"].start, second.jobs["c"].completion) == (6, 18)
    assert first.busy_at(20) == {}
    with pytest.raises(InputError) as err:
        first.busy_at(-1)
    assert err.value.field == "now"


def test_schedule_batch_reasons() -> None:
    """An empty batch is scheduled (nothing to do); a job larger than the cluster is a reason,
    with the file path's words, and nothing is scheduled."""
    empty = schedule_batch([], {"n1": 2}, NET, busy_until={("n1", 1): 3})
    assert empty.ok and empty.jobs == {} and empty.makespan_slots == 0 and empty.busy_until == {("n1", 1): 3}
    big = schedule_batch([_job("a", 1), _job("huge", 5)], {"n1": 2, "n2": 2}, NET, busy_until={("n2", 0): 4})
    assert (big.ok, big.reason, big.jobs) == (False, "job-larger-than-cluster", {})
    assert big.busy_until == {("n2", 0): 4}  # the busy work stays the caller's: the next call needs it
    assert big.detail == "jobs[1].gpus: job huge asks for 5 GPUs but the cluster has 4"
    with pytest.raises(InputError) as err:
        RarInstance.from_dict({"servers": [2, 2], "network": NET.to_dict(), "jobs": [_job("huge", 5).to_dict()]})
    assert big.detail.endswith(err.value.message)
    assert isinstance(big, BatchSchedule)


def test_schedule_batch_stuck_and_no_plan() -> None:
    """The Lemma 3 pair (``test_rar_ddls_lemmas.lemma3_pair``: two 2-GPU jobs on servers of 1, 2,
    1 GPUs) with degradation 10: split over the shared middle server, p = 2, f(2) = 2 + 10·1 = 12,
    and an iteration takes longer than a slot (phi = 0, eq. 9) for both, for good. Under
    fa_ffp = least-loaded every plan splits both jobs that way: with kappa_select = estimate SJF-BCO
    keeps such a plan (``stuck``); with the simulated selection it never accepts one
    (``no-plan``). The packing reading avoids the split and schedules the pair."""
    from tests.test_rar_ddls_lemmas import lemma3_pair

    d = lemma3_pair()
    d["network"]["degradation"] = 10.0
    inst = RarInstance.from_dict(d)
    nodes = {"x": 1, "y": 2, "z": 1}
    stuck = schedule_batch(list(inst.jobs), nodes, inst.network, fa_ffp="least-loaded", kappa_select="estimate")
    assert (stuck.ok, stuck.reason, stuck.jobs) == (False, "stuck", {})
    assert stuck.detail.startswith("jobs a, b never complete")
    none = schedule_batch(list(inst.jobs), nodes, inst.network, fa_ffp="least-loaded")
    assert (none.ok, none.reason) == (False, "no-plan")
    assert none.detail == ("SJF-BCO: no execution-time limit theta_u in [1, 1200] (the horizon T = 1200 extended) "
                           "gives a plan of every job")
    assert schedule_batch(list(inst.jobs), nodes, inst.network).ok


def test_schedule_batch_time_limit() -> None:
    """A time limit already past (1 ns; 0 is refused like every limit that is not > 0) stops the
    theta search after its first trial; here that trial (theta = 5 on [1, 10]) fails, both GPUs
    being busy until 50 (U = 50 > 5), so nothing is planned. Without the limit the search goes
    past T = 10 and the answer says so."""
    r = schedule_batch([_job("a", 2)], {"n": 2}, NET, busy_until={("n", 0): 50, ("n", 1): 50}, horizon=10,
                       time_limit=1e-9)
    assert (r.ok, r.reason) == (False, "time-limit")
    late = schedule_batch([_job("a", 2)], {"n": 2}, NET, busy_until={("n", 0): 50, ("n", 1): 50}, horizon=10)
    assert (late.jobs["a"].start, late.jobs["a"].completion) == (50, 55)  # 5 slots on one server
    assert late.ok and late.makespan_slots == 55 and late.past_horizon is True  # past T = 10


BAD_BATCH = [
    ("unknown node", {"busy_until": {("n9", 0): 3}}, "busy_until[('n9', 0)]", "naming a node of `servers`"),
    ("GPU index past the node", {"busy_until": {("n1", 2): 3}}, "busy_until[('n1', 2)]",
     "names GPU 2 of node 'n1', which has GPUs 0..1"),
    ("negative slot", {"busy_until": {("n1", 1): -1}}, "busy_until[('n1', 1)]", "must be >= 0, got -1"),
    ("non-integer slot", {"busy_until": {("n1", 0): 2.5}}, "busy_until[('n1', 0)]",
     "must be an integer, got float 2.5"),
    ("overflowing slot", {"busy_until": {("n1", 0): 10 ** 30}}, "busy_until[('n1', 0)]",
     "must be <= 1000000000000, got " + str(10 ** 30)),
    ("busy map not a mapping", {"busy_until": [[1]]}, "busy_until", "must map (node id, GPU index)"),
    ("a server of no GPUs", {"servers": {"n1": 2, "n2": 0}}, "servers['n2']", "must be >= 1, got 0"),
    ("a bad server before its busy GPU", {"servers": {"n1": 2, "n2": 0}, "busy_until": {("n2", 0): 3}},
     "servers['n2']", "must be >= 1, got 0"),
    ("a key that is not (node, GPU)", {"busy_until": {"n1": 3}}, "busy_until['n1']", "must be a key (node id, GPU"),
    ("horizon of 0 slots", {"horizon": 0}, "horizon", "must be >= 1, got 0"),
    ("horizon of 0 slots, empty batch", {"jobs": [], "horizon": 0}, "horizon", "must be >= 1, got 0"),
    ("servers not a mapping", {"servers": [2, 2]}, "servers", "must map node ids to GPU counts, got list"),
    ("jobs not a list", {"jobs": {"a": _job("a", 1)}}, "jobs", "must be a list of jobs, got dict"),
    ("network not a Network", {"network": NET.to_dict()}, "network", "must be a rar-ddls Network, got dict"),
    ("a job dict with a misspelt field", {"jobs": [{**_job("a", 1).to_dict(), "gpu": 1}]}, "jobs[0].gpu",
     "is not a field of a job"),
    ("duplicate job ids", {"jobs": [_job("a", 1), _job("a", 1)]}, "jobs[1].id", "duplicate job id 'a'"),
]


@pytest.mark.parametrize("what,kw,field,words", BAD_BATCH, ids=[r[0] for r in BAD_BATCH])
def test_schedule_batch_bad_input(what: str, kw: dict[str, Any], field: str, words: str) -> None:
    args: dict[str, Any] = {"jobs": [_job("a", 1)], "servers": {"n1": 2, "n2": 2}, "network": NET, **kw}
    jobs, servers, network = args.pop("jobs"), args.pop("servers"), args.pop("network")
    with pytest.raises(InputError) as err:
        schedule_batch(jobs, servers, network, **args)
    assert err.value.field == field and words in err.value.message and err.value.problem == "rar-ddls", what
