"""rar-ddls model: the contention model of eqs. (6)-(9) by hand, against a literal slot-by-slot
re-implementation, the referee's checks, bad input, the generator."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest

from optkit.formulations.rar_ddls.generate import SEC7_MIX, generate, paper_sec7, sec7_estimate_range, tiny
from optkit.formulations.rar_ddls.model import RarInstance, evaluate, iteration_time, iterations_per_slot, simulate
from optkit.errors import InputError

NET = {"inter_bandwidth": 1.25e9, "intra_bandwidth": 3.0e11, "compute_speed": 5.0e10,
       "xi1": 1.0, "xi2": 0.002, "degradation": 0.2}
JOB = {"gpus": 4, "iterations": 300, "grad_bytes": 1.0e8, "batch": 32, "fwd_time_per_sample": 1.0e-4, "bwd_time": 0.004}


def _two_jobs() -> RarInstance:
    return RarInstance.from_dict({"problem": "rar-ddls", "servers": [4, 4, 4], "network": NET, "slot_seconds": 1.0,
                                  "horizon": 200, "jobs": [dict(JOB, id="a"), dict(JOB, id="b")]})


def _sched(*rows: tuple[str, int, list[int]]) -> dict:
    return {"jobs": [{"id": i, "start": a, "gpus_per_server": y} for i, a, y in rows]}


def test_worked_example_two_split_jobs_share_a_server() -> None:
    """a on servers 0+1, b on servers 1+2 (2 GPUs each): both split with workers on server 1.

    By hand: share = m(w-1)/w = 7.5e7 B. Alone (p = 1, k = 1, f = 1): 2·share/b^e = 0.12 s,
    share/C = 0.0015, xi2·2 = 0.004, Δf·M = 0.0032, Δb = 0.004: tau = 0.1327 s, phi = 7.
    Together (p = 2, k = 2, f = 2 + 0.2 = 2.2): 2·share·2.2/b^e = 0.264 s, tau = 0.2767 s, phi = 3.
    """
    inst = _two_jobs()
    a = inst.jobs[0]
    assert iteration_time(a, inst.network, 2, 1) == pytest.approx(0.1327, abs=1e-12)
    assert iteration_time(a, inst.network, 2, 2) == pytest.approx(0.2767, abs=1e-12)
    assert iterations_per_slot(iteration_time(a, inst.network, 2, 1), 1.0) == 7
    assert iterations_per_slot(iteration_time(a, inst.network, 2, 2), 1.0) == 3
    # Together from slot 0: 300 / 3 = 100 slots each.
    ev = evaluate(inst, _sched(("a", 0, [2, 2, 0]), ("b", 0, [0, 2, 2])))
    assert ev.feasible and ev.objectives["makespan"] == 100.0 and ev.metrics["max_contention"] == 2
    # b from slot 10: a alone for 10 slots (70 it.), then 3/slot: 230/3 -> 77 slots, a completes at 87;
    # b has 231 by then and needs 69 more at 7/slot -> 10 slots: completes at 97.
    ev = evaluate(inst, _sched(("a", 0, [2, 2, 0]), ("b", 10, [0, 2, 2])))
    assert ev.feasible and ev.objectives["makespan"] == 97.0 and ev.objectives["total_completion"] == 87.0 + 97.0
    # Split over disjoint servers (0+1 and 2+... impossible with 3x4; use 1+3 on one side): no shared server.
    ev = evaluate(inst, _sched(("a", 0, [2, 2, 0]), ("b", 0, [0, 0, 4])))
    # a alone split: ceil(300/7) = 43; b on one server: tau = 2·share/3e11 + 0.0015 + 0.002 + 0.0072 = 0.0112 -> 89/slot, 4 slots.
    assert ev.objectives["makespan"] == 43.0 and ev.objectives["total_completion"] == 43.0 + 4.0


def test_xi1_below_one_never_gives_more_than_the_link() -> None:
    """Reading k < 1: k = max(1, xi1·p), so with xi1 = 0.5 a lone split job (p = 1) gets b^e, and
    two of them (p = 2, k = 1) still do; three (p = 3, k = 1.5, f = 1.6) slow down."""
    inst = RarInstance.from_dict({"problem": "rar-ddls", "servers": [4, 4], "network": dict(NET, xi1=0.5),
                                  "jobs": [dict(JOB, id="a")]})
    a = inst.jobs[0]
    t1 = iteration_time(a, inst.network, 2, 1)
    assert iteration_time(a, inst.network, 2, 2) == t1
    assert iteration_time(a, inst.network, 2, 3) == pytest.approx(t1 + 0.12 * 0.6, abs=1e-12)


def _literal_simulation(inst: RarInstance, y: np.ndarray, starts: list[int], max_slots: int = 10_000) -> list[int]:
    """Eqs. (6)-(9) slot by slot, written from the paper's text independently of model.simulate."""
    n = len(inst.jobs)
    done = [0] * n
    comp = [-1] * n
    net = inst.network
    for t in range(max_slots):
        active = [j for j in range(n) if starts[j] <= t and comp[j] < 0]
        if not active and all(c >= 0 for c in comp):
            break
        prog = {}
        for j in active:
            job = inst.jobs[j]
            G = job.gpus
            p = max([(1 if 0 < y[j][s] < G else 0)
                     * sum(1 for jj in active if 0 < y[jj][s] < inst.jobs[jj].gpus) for s in range(len(inst.servers))])
            used = sum(1 for s in range(len(inst.servers)) if y[j][s] > 0)
            w, m = G, job.grad_bytes
            if used == 1:
                B = net.intra_bandwidth
            else:
                k = max(1.0, net.xi1 * p)
                B = net.inter_bandwidth / (k + net.degradation * (k - 1))
            tau = (m / w * 2 * (w - 1)) / B + (m / w * (w - 1)) / net.compute_speed + net.xi2 * used \
                + job.fwd_time_per_sample * job.batch + job.bwd_time
            prog[j] = math.floor(inst.slot_seconds / tau * (1 + 1e-12))
        for j in active:
            done[j] += prog[j]
            if done[j] >= inst.jobs[j].iterations:
                comp[j] = t + 1
    return comp


def _random_placement(inst: RarInstance, rng: np.random.Generator) -> np.ndarray:
    y = np.zeros((len(inst.jobs), len(inst.servers)), dtype=np.int64)
    for j, job in enumerate(inst.jobs):
        left = job.gpus
        while left:
            s = int(rng.integers(len(inst.servers)))
            take = int(rng.integers(1, min(left, inst.servers[s]) + 1))
            if y[j, s] + take <= inst.servers[s]:
                y[j, s] += take
                left -= take
    return y


@pytest.mark.parametrize("seed", range(12))
def test_event_driven_simulation_matches_the_literal_slot_loop(seed: int) -> None:
    inst = RarInstance.from_dict(tiny(seed))
    rng = np.random.default_rng(seed)
    for _ in range(5):
        y = _random_placement(inst, rng)
        starts = [int(v) for v in rng.integers(0, 8, size=len(inst.jobs))]
        out = simulate(inst, y, starts=starts)
        assert list(out.completion) == _literal_simulation(inst, y, starts)


def test_plan_order_turns_into_gang_starts() -> None:
    """predecessors: b waits for a, c for nobody; b starts at a's completion slot."""
    inst = RarInstance.from_dict({"problem": "rar-ddls", "servers": [4, 4, 4], "network": NET,
                                  "jobs": [dict(JOB, id="a"), dict(JOB, id="b"), dict(JOB, id="c")]})
    y = np.array([[2, 2, 0], [0, 2, 2], [0, 0, 2]])
    out = simulate(inst, y, predecessors=[[], [0], []])
    assert out.start[0] == 0 and out.start[2] == 0 and out.start[1] == out.completion[0]
    assert list(out.completion) == _literal_simulation(inst, y, [int(v) for v in out.start])


def test_referee_rejects_bad_schedules() -> None:
    inst = _two_jobs()
    ok = _sched(("a", 0, [4, 0, 0]), ("b", 0, [0, 4, 0]))
    assert evaluate(inst, ok).feasible
    over = _sched(("a", 0, [4, 0, 0]), ("b", 3, [3, 1, 0]))
    v = evaluate(inst, over).violations
    assert v == ["server 0 holds 7 GPUs in slot 3 (capacity O_s = 4)"]
    assert evaluate(inst, _sched(("a", 0, [4, 0, 0]), ("b", 4, [3, 1, 0]))).feasible  # a completes at 4
    assert "sums to 3" in evaluate(inst, _sched(("a", 0, [3, 0, 0]), ("b", 0, [0, 4, 0]))).violations[0]
    assert "not scheduled" in evaluate(inst, _sched(("a", 0, [4, 0, 0]))).violations[0]
    assert "twice" in evaluate(inst, _sched(("a", 0, [4, 0, 0]), ("a", 9, [4, 0, 0]), ("b", 0, [0, 4, 0]))).violations[0]
    assert "slot index" in evaluate(inst, _sched(("a", -1, [4, 0, 0]), ("b", 0, [0, 4, 0]))).violations[0]
    assert "slot index" in evaluate(inst, _sched(("a", 1.5, [4, 0, 0]), ("b", 0, [0, 4, 0]))).violations[0]
    bad = copy.deepcopy(ok)
    bad["jobs"][0]["completion"] = 3
    assert "disagrees" in evaluate(inst, bad).violations[0]
    bad["jobs"][0]["completion"] = 4
    assert evaluate(inst, bad).feasible


def test_phi_zero_for_good_is_rejected() -> None:
    """Two 2-GPU jobs split across the same two servers, each needing > 1 s per iteration when
    contended (phi = 0) but < 1 s alone: started together they never progress."""
    net = dict(NET, degradation=0.0)
    job = dict(JOB, gpus=2, grad_bytes=1.0e9, iterations=5, fwd_time_per_sample=0.0, bwd_time=0.0)
    # alone on one server: 2·5e8/3e11 + 5e8/5e10 + 0.002 = 0.0153 s; split alone: 0.8 + 0.01 + 0.004 = 0.814 s (phi 1);
    # split with p = 2: 1.6 + ... > 1 s (phi 0).
    inst = RarInstance.from_dict({"problem": "rar-ddls", "servers": [1, 1, 2], "network": net,
                                  "jobs": [dict(job, id="a"), dict(job, id="b")]})
    ev = evaluate(inst, _sched(("a", 0, [1, 1, 0]), ("b", 0, [1, 0, 1])))
    assert not ev.feasible  # capacity of server 0 (two jobs with a GPU there)
    inst = RarInstance.from_dict({"problem": "rar-ddls", "servers": [2, 1, 1], "network": net,
                                  "jobs": [dict(job, id="a"), dict(job, id="b")]})
    ev = evaluate(inst, _sched(("a", 0, [1, 1, 0]), ("b", 0, [1, 0, 1])))
    assert ev.violations == ["jobs a, b never complete: phi = 0 (eq. 9) under the contention they meet, and "
                             "nothing else changes"]
    out = simulate(inst, np.array([[1, 1, 0], [1, 0, 1]]), starts=[0, 0])
    assert out.stuck == ["a", "b"] and out.start.tolist() == [0, 0] and out.completion.tolist() == [-1, -1]
    assert out.max_contention.tolist() == [2, 2]
    ev = evaluate(inst, _sched(("a", 0, [1, 1, 0]), ("b", 5, [1, 0, 1])))
    assert ev.feasible and ev.objectives["makespan"] == 10.0


@pytest.mark.parametrize("path, mutate, message", [
    ("servers[1]", lambda d: d["servers"].__setitem__(1, 0), "must be >= 1"),
    ("jobs[0].gpus", lambda d: d["jobs"][0].__setitem__("gpus", 13), "cluster has 12"),
    ("jobs[0].gpus", lambda d: d["jobs"][0].__setitem__("gpus", 0), "must be >= 1"),
    ("network.inter_bandwidth", lambda d: d["network"].__setitem__("inter_bandwidth", -1.0), "must be > 0"),
    ("network.xi1", lambda d: d["network"].__setitem__("xi1", 1.5), "(0, 1]"),
    ("jobs[0].iterations", lambda d: d["jobs"][0].__setitem__("iterations", "many"), "must be an integer"),
    ("jobs[0].grad_bytes", lambda d: d["jobs"][0].__setitem__("grad_bytes", "1e8"), "must be a number"),
    ("jobs[0].batch", lambda d: d["jobs"][0].__setitem__("batch", True), "must be an integer"),
    ("jobs[0].priority", lambda d: d["jobs"][0].__setitem__("priority", 3), "not a field of a job"),
    ("network.latency", lambda d: d["network"].__setitem__("latency", 3), "not a field of the network"),
    ("jobs[1].id", lambda d: d["jobs"][1].__setitem__("id", "a"), "duplicate"),
    ("jobs[0]", lambda d: d["jobs"][0].__setitem__("bwd_time", 2.0), "never completes"),
    ("horizon", lambda d: d.__setitem__("horizon", 0), "must be >= 1"),
    ("problem", lambda d: d.__setitem__("problem", "ddlwmp"), "must be 'rar-ddls'"),
    ("servers", lambda d: d.__setitem__("servers", []), "must be a non-empty list of GPU counts O_s"),
    ("jobs[0].gpus", lambda d: d["jobs"][0].pop("gpus"), "jobs[0].gpus is required"),
    ("busy_until", lambda d: d.__setitem__("busy_until", [[1]]), "must be a list with one list per server (3): the "
     "slot until which each of the server's GPUs is busy, got 1 entries"),
    ("busy_until", lambda d: d.__setitem__("busy_until", 5), "one list per server (3): the slot until which each of "
     "the server's GPUs is busy, got int"),
    ("busy_until[1]", lambda d: d.__setitem__("busy_until", [[], 3, []]),
     "must be a list of slots (one per GPU of server 1), got int"),
    ("busy_until[2]", lambda d: d.__setitem__("busy_until", [[], [], [1] * 5]),
     "lists 5 GPUs, server 2 has O_s = 4 (GPUs 0..3)"),
    ("busy_until[0][1]", lambda d: d.__setitem__("busy_until", [[0, -2], [], []]), "must be >= 0, got -2"),
])
def test_bad_input_names_the_field(path: str, mutate, message: str) -> None:
    d = _two_jobs().to_dict()
    mutate(d)
    with pytest.raises(InputError) as err:
        RarInstance.from_dict(d)
    assert err.value.field == path and message in str(err.value)


def test_round_trip_and_generator_determinism() -> None:
    d = paper_sec7(3)
    assert RarInstance.from_dict(json.loads(json.dumps(d))).to_dict() == RarInstance.from_dict(d).to_dict()
    assert paper_sec7(3) == d and paper_sec7(4) != d
    inst = RarInstance.from_dict(d)
    sizes = sorted(j.gpus for j in inst.jobs)
    assert {g: sizes.count(g) for g in set(sizes)} == SEC7_MIX
    assert len(inst.servers) == 20 and set(inst.servers) <= {4, 8, 16, 32} and inst.horizon == 1200
    taus = [iteration_time(j, inst.network, 1, 0) for j in inst.jobs]
    assert 0.01 <= min(taus) and max(taus) <= 0.05 + 0.0006 + 1e-4  # tau0 plus one xi2 and the reduction
    assert all(1000 <= j.iterations <= 6000 for j in inst.jobs)
    assert tiny(5) == tiny(5) and RarInstance.from_dict(tiny(5)).horizon <= 40


@pytest.mark.parametrize("seed", range(5))
def test_sec7_estimates_lie_in_the_papers_50_to_300_slots(seed: int) -> None:
    """Sec. 7: rho-hat in [50, 300] (from tau_j·F_j), F_j in [1000, 6000], tau in [0.01, 0.05]
    s; the estimate recomputed here from eq. (8)-(9) directly: ceil(F / floor(1 / tau)) with tau
    on the job's fastest server count alone."""
    from optkit.formulations.rar_ddls.model import fastest_servers

    inst = RarInstance.from_dict(paper_sec7(seed))
    est = []
    for j in inst.jobs:
        n = fastest_servers(inst.servers, j.gpus, j, inst.network)
        tau = iteration_time(j, inst.network, n, 1)
        est.append(-(-j.iterations // int(1.0 / tau * (1 + 1e-12))))
        assert 1000 <= j.iterations <= 6000
    assert 50 <= min(est) and max(est) <= 300
    assert max(est) - min(est) >= 200  # spread over the range, not clustered
    assert sec7_estimate_range(inst) == (min(est), max(est))


@pytest.mark.parametrize("kw, field, message", [
    ({"horizon": 0}, "horizon", "must be an integer >= 1, got 0"),
    ({"seed": -1}, "seed", "must be an integer >= 0, got -1"),
    ({"servers": 0}, "servers", "must be an integer >= 1, got 0"),
    # seed 0 draws one server of 32 GPUs
    ({"servers": 1, "mix": {64: 1}}, "servers", "1 servers with 32 GPUs cannot hold a 64-GPU job"),
])
def test_paper_sec7_bad_parameter_is_named(kw: dict, field: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        paper_sec7(**kw)
    assert (err.value.field, err.value.message) == (field, message)


def test_generators_keep_their_documented_ranges() -> None:
    """The module docstring's settings. Sec. 7: b^e = 1.25e9 B/s, b^i = 3e11 B/s, C = 5e10 B/s,
    xi1 = 0.5, xi2 = 0.0006 s, degradation 0.2; M_j one of 16, 32, 64, 128. Tiny (all 36 of
    the suite): 2-3 servers of 2-4 GPUs, 2-5 jobs of 1-4 GPUs, xi1 0.5 or 1, xi2 0.01 s,
    degradation 0.2, M_j as above, horizon 40 and every job 1-13 slots alone on its fastest
    placement (8-39 iterations at 3-9 per slot). A tiny instance that cannot fit its horizon is
    refused, naming max_horizon."""
    from optkit.formulations.rar_ddls.generate import SUITES
    from optkit.formulations.rar_ddls.model import fastest_servers, solo_slots

    d = paper_sec7(3)
    assert d["network"] == {"inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11, "compute_speed": 5e10, "xi1": 0.5,
                            "xi2": 0.0006, "degradation": 0.2}
    assert {j["batch"] for j in d["jobs"]} == {16, 32, 64, 128}
    for _, t in SUITES["tiny"].build():
        assert 2 <= len(t["servers"]) <= 3 and set(t["servers"]) <= {2, 3, 4} and 2 <= len(t["jobs"]) <= 5
        net = dict(d["network"], xi1=t["network"]["xi1"], xi2=0.01)
        assert t["network"] == net and net["xi1"] in (0.5, 1.0) and t["horizon"] == 40
        inst = RarInstance.from_dict(t)
        for j in inst.jobs:
            assert 1 <= j.gpus <= 4 and j.batch in (16, 32, 64, 128)
            assert 8 <= j.iterations <= 39
            assert 1 <= solo_slots(inst, j, fastest_servers(inst.servers, j.gpus, j, inst.network)) <= 13
    with pytest.raises(InputError) as err:
        tiny(0, max_horizon=1)
    assert (err.value.field, err.value.message) == ("max_horizon", "no tiny instance with 2 jobs fits a horizon of "
                                                                   "1 slots")


def test_paper_sec7_options() -> None:
    """A job as large as the whole cluster is allowed (seed 0 draws one server of 32 GPUs: a
    32-GPU job fits it exactly); ``name`` is stored when given."""
    d = paper_sec7(0, servers=1, mix={32: 1}, name="one-server")
    assert d["servers"] == [32] and [j["gpus"] for j in d["jobs"]] == [32] and d["name"] == "one-server"
    assert "name" not in paper_sec7(0, servers=1, mix={32: 1})


def test_generate_dispatches_by_kind_and_names_an_unknown_one() -> None:
    """``optkit generate rar-ddls``'s entry: ``kind`` picks the generator, seed first."""
    assert generate(kind="tiny", seed=5) == tiny(5)
    assert generate(seed=1, servers=2, mix={1: 2}) == paper_sec7(1, servers=2, mix={1: 2})
    with pytest.raises(InputError) as err:
        generate(kind="sec8")
    assert (err.value.field, err.value.message) == ("kind", "must be 'paper-sec7' or 'tiny', got 'sec8'")


def test_slow_intra_link_makes_a_split_placement_fastest() -> None:
    """With b^i < b^e (not the paper's b^i >> b^e) two servers beat one: fastest_servers finds it,
    and a job that only progresses when split is accepted, not rejected as never completing."""
    from optkit.formulations.rar_ddls.model import fastest_servers, min_servers

    net = dict(NET, intra_bandwidth=1.0e8)  # 2·7.5e7/1e8 = 1.5 s per iteration on one server
    inst = RarInstance.from_dict({"problem": "rar-ddls", "servers": [4, 4], "network": net, "jobs": [dict(JOB, id="a")]})
    a = inst.jobs[0]
    assert iterations_per_slot(iteration_time(a, inst.network, 1, 0), 1.0) == 0
    assert min_servers(inst.servers, 4) == 1 and fastest_servers(inst.servers, 4, a, inst.network) == 2
    assert evaluate(inst, _sched(("a", 0, [2, 2])) ).objectives["makespan"] == 43.0


def test_evaluate_reports_every_entry_and_counts_split_jobs() -> None:
    """A solution that is not an object with a jobs list is infeasible, saying so; a job scheduled
    twice is reported and the entries after it are still checked; ``split_jobs`` counts the jobs
    on more than one server (a on 2 + 2, b on one server: 1)."""
    inst = _two_jobs()
    assert evaluate(inst, "nope").feasible is False
    assert evaluate(inst, {"jobs": 3}).violations == ["solution must be an object with a 'jobs' list"]
    v = evaluate(inst, _sched(("a", 0, [4, 0, 0]), ("a", 9, [4, 0, 0]), ("b", -1, [0, 4, 0]))).violations
    assert v == ["job a is scheduled twice", "job b: start must be a slot index >= 0, got -1"]
    ev = evaluate(inst, _sched(("a", 0, [2, 2, 0]), ("b", 0, [0, 0, 4])))
    assert ev.feasible and ev.metrics["split_jobs"] == 1 and ev.metrics["max_contention"] == 1


def test_simulate_takes_one_of_starts_and_predecessors_and_stops_on_a_cycle() -> None:
    """``simulate`` needs exactly one of ``starts`` and ``predecessors`` (``release`` only with
    the second); predecessors in a cycle (a after b, b after a) start nothing: both are reported
    stuck, never started (start and completion -1), not an endless loop."""
    inst = _two_jobs()
    y = np.array([[4, 0, 0], [0, 4, 0]])
    for kw in ({}, {"starts": [0, 0], "predecessors": [[], []]}):
        with pytest.raises(ValueError, match="^rar-ddls: starts give exactly one of starts and predecessors$"):
            simulate(inst, y, **kw)
    with pytest.raises(ValueError, match=r"^rar-ddls: release goes with predecessors \(given starts are the schedule\)$"):
        simulate(inst, y, starts=[0, 0], release=[0, 0])
    out = simulate(inst, y, predecessors=[[1], [0]])
    assert out.stuck == ["a", "b"] and out.start.tolist() == [-1, -1] and out.completion.tolist() == [-1, -1]


def test_the_suites_are_the_sec7_draws_they_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """``paper-sec7`` is paper_sec7 at seeds 0-4 with its defaults (160 jobs, 20 servers, T = 1200,
    checked in the generator's own tests), ``ci`` seeds 0-1 on 10 servers with T = 1500, each
    named ``sec7-s<seed>`` (the draws replaced here by their arguments, so the suites cost nothing)."""
    from optkit.formulations.rar_ddls import generate

    monkeypatch.setattr(generate, "paper_sec7", lambda seed, **kw: {"seed": seed, **kw})
    assert generate.SUITES["paper-sec7"].build() == [(f"sec7-s{s}", {"seed": s}) for s in range(5)]
    assert generate.SUITES["ci"].build() == [(f"sec7-s{s}", {"seed": s, "servers": 10, "horizon": 1500})
                                             for s in range(2)]
