"""The online protocol's rules as the schedulers check them (optkit/online.py, "Misuse"), the
slot rounding every driver shares, single-node jobs under every ddlwmp and nimp policy, and
duration jobs with a predicted duration.

Each misuse is driven through both schedulers and must raise an InputError naming the field
at the call that breaks the rule; the valid sequences next to them (a second decide after a
completion, equal seqs, a late arrival) must pass. ``optkit simulate`` drives its policies
without the checks (``check=False``); here it runs with them on and gives the same schedules,
so it keeps the rules it states."""

from __future__ import annotations

import re

import copy
import math
from functools import lru_cache
from typing import Any, Callable

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.ddlwmp import DdlwmpInstance
from optkit.formulations.ddlwmp import OnlineScheduler as DdlwmpScheduler
from optkit.formulations.ddlwmp import exact
from optkit.formulations.ddlwmp import model as ddlwmp_model
from optkit.formulations.ddlwmp.a_srpt import ASRPT
from optkit.formulations.ddlwmp.baselines import BASELINES
from optkit.formulations.ddlwmp.generate import generate, tiny
from optkit.formulations.ddlwmp.model import evaluate
from optkit.formulations.ddlwmp.simulate import simulate
from optkit.formulations.nimp import Machine, OnlineScheduler as NimpScheduler, place
from optkit.formulations.nimp import Job as NimpJob
from optkit.formulations.nimp.replay import generate_workload, replay, workload_from_dict
from optkit.online import SLOT_TOL, ClusterView, Decision, Job, on_slot, slot_ceil, slot_floor


# ----------------------------------------------------------------------------- the slot rule (rule 3)
def test_slot_ceil_is_the_first_boundary_at_or_after_with_its_tolerance() -> None:
    assert slot_ceil(3.2, 1.0) == 4.0 and slot_ceil(3.0, 1.0) == 3.0 and slot_ceil(0.0, 2.0) == 0.0
    assert slot_ceil(7.0, 2.0) == 8.0 and slot_ceil(-0.5, 1.0) == 0.0
    # within SLOT_TOL (relative to t/slot) of a boundary: on it, from above and from below
    assert slot_ceil(3.0 + 1e-12, 1.0) == 3.0 and slot_ceil(3.0 - 1e-12, 1.0) == 3.0
    assert slot_ceil(1e6 * (1 + 0.5 * SLOT_TOL), 1.0) == 1e6       # relative: 5e-4 s above 1e6 s
    assert slot_ceil(3.0 + 1e-8, 1.0) == 4.0                         # beyond it: the next boundary
    assert slot_ceil(0.1 + 0.2, 0.1) == 3 * 0.1                      # float noise of a sum of slots
    assert slot_ceil(2.5, 0.0) == 2.5 and slot_floor(2.5, 0.0) == 2.5 and on_slot(2.5, 0.0)
    assert slot_floor(3.7, 1.0) == 3.0 and slot_floor(4.0 - 1e-12, 1.0) == 4.0 and slot_floor(4.0, 2.0) == 4.0
    assert on_slot(6.0, 1.5) and not on_slot(6.5, 1.5) and on_slot(0.1 * 3, 0.1)
    for fn in (slot_ceil, slot_floor, on_slot):
        with pytest.raises(InputError) as err:
            fn(1.0, -1.0)
        assert err.value.field == "slot"


def test_every_ddlwmp_path_rounds_with_the_one_function() -> None:
    """simulate, evaluate, the exact solvers and the how-to's driver import the protocol's
    ``slot_ceil``; ``free_time`` is it."""
    from optkit.formulations.ddlwmp import bounds, simulate as sim_module

    assert ddlwmp_model.slot_ceil is slot_ceil and sim_module.slot_ceil is slot_ceil
    assert exact.slot_ceil is slot_ceil and bounds.slot_ceil is slot_ceil
    assert ddlwmp_model.free_time(5.0 + 1e-12, 1.0) == 5.0 and ddlwmp_model.free_time(5.0 + 1e-6, 1.0) == 6.0
    from tests.test_online import PAGE

    assert re.search(r"from optkit\.online import [^\n]*\bslot_ceil\b", PAGE.read_text())


def test_the_tolerance_decides_when_gpus_come_back() -> None:
    """A job of 3 iterations of 0.1 s started at 0 completes at 0.30000000000000004 s; with 0.1 s
    slots its GPUs come back at 0.3 s (the tolerance), so the next job starts there; read exactly
    (math.ceil) they would come back a slot later."""
    stage = {"replicas": 4, "fwd_time": 0.0, "bwd_time": 0.1, "in_bytes": 0.0, "out_bytes": 0.0, "param_bytes": 0.0}
    inst = DdlwmpInstance.from_dict({"problem": "ddlwmp", "models": {"m": {"allreduce": "ring", "stages": [stage]}},
                                     "cluster": {"servers": 1, "gpus_per_server": 4, "inter_bandwidth": 1e9,
                                                 "intra_bandwidth": 1e11, "slot_seconds": 0.1},
                                     "jobs": [{"id": "a", "release": 0, "model": "m", "iterations": 3},
                                              {"id": "b", "release": 0, "model": "m", "iterations": 3}]})
    s = {j["id"]: j for j in simulate(inst, BASELINES["fifo"](inst.cluster, inst.models, seed=0))["jobs"]}
    assert s["a"]["completion"] == 0.1 + 0.1 + 0.1 and math.ceil(s["a"]["completion"] / 0.1) == 4
    assert s["b"]["start"] == slot_ceil(s["a"]["completion"], 0.1) == 3 * 0.1


# ----------------------------------------------------------------------------- optkit simulate keeps the rules
POLICY_NAMES = ["a-srpt", *BASELINES]


def _policy(name: str, inst: DdlwmpInstance, **kw: Any) -> Any:
    cls = ASRPT if name == "a-srpt" else BASELINES[name]
    return cls(inst.cluster, inst.models, seed=0, **kw)


@lru_cache(maxsize=None)
def _single_node_instance(seed: int) -> DdlwmpInstance:
    """A loaded generated workload (2-16 GPU jobs on 4 servers of 8) with every job of 2-8 GPUs
    single-node."""
    d = generate(jobs=150, servers=4, load=1.1, single_gpu_share=0.3, seed=seed, predictor="mean")
    inst = DdlwmpInstance.from_dict(d)
    for j in d["jobs"]:
        if 1 < inst.models[j["model"]].n_replicas <= 8:
            j["single_node"] = True
    return DdlwmpInstance.from_dict(d)


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_simulate_with_the_checks_on_gives_the_same_schedules(name: str) -> None:
    """simulate drives its policies unchecked; behind a checking scheduler it raises nothing
    and gives the same schedule: on tiny instances and on a loaded single-node workload."""
    cases = [DdlwmpInstance.from_dict(tiny(s)) for s in range(4)] + [_single_node_instance(1)]
    for inst in cases:
        want = simulate(inst, _policy(name, inst))
        checked = DdlwmpScheduler.of_policy(_policy(name, inst), inst.cluster, inst.models)
        assert checked.state is not None
        assert simulate(inst, checked) == want


# ----------------------------------------------------------------------------- misuse (both schedulers)
def _ddlwmp(**kw: Any) -> DdlwmpScheduler:
    return DdlwmpScheduler("fifo", nodes={"a": 4, "b": 4}, **kw)


def _nimp(**kw: Any) -> NimpScheduler:
    return NimpScheduler("hived", nodes={"a": 4, "b": 4}, **kw)


MAKERS = {"ddlwmp": _ddlwmp, "nimp": _nimp}
FULL = {"a": 4, "b": 4}


def _view(free: dict[str, Any], size: dict[str, Any] | None = None, **kw: Any) -> ClusterView:
    return ClusterView(free, FULL if size is None else size, **kw)


def _job(jid: str, release: float = 0.0, gpus: int = 2, **kw: Any) -> Job:
    return Job(jid, release, gpus, duration=10.0, param_bytes=1e8, **kw)


def _started(s: Any) -> Any:
    """A scheduler whose job x (2 GPUs) started at 0 on node a."""
    s.on_arrival(_job("x"), 0.0)
    [d] = s.decide(0.0, _view(dict(FULL)))
    assert d.gpus == {"a": 2}
    return s


def _twice_seq(s: Any) -> None:
    s.on_arrival(_job("x", seq=5), 0.0)
    s.on_arrival(_job("y", seq=4), 0.0)


def _decide_twice(s: Any) -> None:
    s.decide(0.0, _view(dict(FULL)))
    s.decide(0.0, _view(dict(FULL)))


# (what, call on a fresh scheduler, field)
MISUSES: list[tuple[str, Callable[[Any], Any], str]] = [
    ("an arrival before the release", lambda s: s.on_arrival(_job("x", release=3.0), 2.0), "now"),
    ("time going back", lambda s: (_started(s), s.on_arrival(_job("y"), 0.0), s.decide(5.0, _view({"a": 2, "b": 4})),
                                   s.on_completion("x", 4.0)), "now"),
    ("a decide earlier than the last call", lambda s: (s.on_arrival(_job("x", release=5.0), 5.0),
                                                       s.decide(4.0, _view(dict(FULL)))), "now"),
    ("a decide twice at one instant", _decide_twice, "now"),
    ("a NaN time", lambda s: s.decide(float("nan"), _view(dict(FULL))), "now"),
    ("a negative time", lambda s: s.next_wakeup(-1.0), "now"),
    ("a time that is not a number", lambda s: s.on_arrival(_job("x"), True), "now"),
    ("a lower seq after a higher one at one instant", _twice_seq, "job.seq"),
    ("a second arrival", lambda s: (s.on_arrival(_job("x"), 0.0), s.on_arrival(_job("x", release=1.0), 1.0)),
     "job.id"),
    ("a completion of an unknown job", lambda s: s.on_completion("ghost", 0.0), "job_id"),
    ("a completion of a job never started", lambda s: (s.on_arrival(_job("x"), 0.0), s.on_completion("x", 1.0)),
     "job_id"),
    ("a completion twice", lambda s: (_started(s), s.on_completion("x", 1.0), s.on_completion("x", 2.0)), "job_id"),
    ("a completion id that is not a string", lambda s: s.on_completion(7, 0.0), "job_id"),
    ("a view that is not a ClusterView", lambda s: s.decide(0.0, dict(FULL)), "cluster"),
    ("a view of other nodes", lambda s: s.decide(0.0, ClusterView({"a": 4, "c": 4}, {"a": 4, "c": 4})), "cluster.free"),
    ("a view of another size", lambda s: s.decide(0.0, _view({"a": 4, "b": 4}, {"a": 4, "b": 8})), "cluster.size['b']"),
    ("a view without a size", lambda s: s.decide(0.0, _view({"a": 4, "b": 4}, {"a": 4})), "cluster.size['b']"),
    ("more free GPUs than the node has", lambda s: s.decide(0.0, _view({"a": 6, "b": 4})), "cluster.free['a']"),
    ("a negative free count", lambda s: s.decide(0.0, _view({"a": 4, "b": -1})), "cluster.free['b']"),
    ("a fractional free count", lambda s: s.decide(0.0, _view({"a": 2.5, "b": 4})), "cluster.free['a']"),
    ("free GPUs a started job holds", lambda s: (_started(s), s.decide(1.0, _view(dict(FULL)))), "cluster.free['a']"),
    ("a float array view", lambda s: _indexed(s).decide(0.0, ClusterView.of_arrays(np.array([4.0, 4.0]),
                                                                                   np.array([4, 4]))), "cluster.free"),
    ("an array view of another size", lambda s: _indexed(s).decide(0.0, ClusterView.of_arrays(
        np.array([4, 4]), np.array([4, 8]))), "cluster.size[1]"),
    ("an array view beyond the sizes", lambda s: _indexed(s).decide(0.0, ClusterView.of_arrays(
        np.array([5, 4]), np.array([4, 4]))), "cluster.free[0]"),
    ("a single-node job larger than every node",
     lambda s: s.on_arrival(_job("x", gpus=6, single_node=True), 0.0), "job.single_node"),
    ("a job larger than the cluster", lambda s: s.on_arrival(_job("x", gpus=9), 0.0), "job.gpus"),
    ("a job that is not a Job", lambda s: s.on_arrival({"id": "x"}, 0.0), "job"),
]


def _indexed(s: Any) -> Any:
    """The same kind of scheduler with nodes 0 and 1 (array views)."""
    return type(s)("fifo" if isinstance(s, DdlwmpScheduler) else "hived", nodes={0: 4, 1: 4})


@pytest.mark.parametrize("problem", ["ddlwmp", "nimp"])
@pytest.mark.parametrize("what,call,field", MISUSES, ids=[m[0] for m in MISUSES])
def test_each_misuse_is_named(problem: str, what: str, call: Callable[[Any], Any], field: str) -> None:
    with pytest.raises(InputError) as err:
        call(MAKERS[problem]())
    assert (err.value.field, err.value.problem) == (field, problem), (what, str(err.value))


DDLWMP_ONLY: list[tuple[str, Callable[[], Any], str]] = [
    ("a negative NIC bandwidth", lambda: _ddlwmp(inter_bandwidth=-1.25e9), "inter_bandwidth"),
    ("a zero NIC bandwidth", lambda: _ddlwmp(inter_bandwidth=0), "inter_bandwidth"),
    ("an infinite intra bandwidth", lambda: _ddlwmp(intra_bandwidth=math.inf), "intra_bandwidth"),
    ("a bandwidth that is not a number", lambda: _ddlwmp(intra_bandwidth="fast"), "intra_bandwidth"),
    ("a zero slot", lambda: _ddlwmp(slot_seconds=0.0), "slot_seconds"),
    ("a NaN slot", lambda: _ddlwmp(slot_seconds=math.nan), "slot_seconds"),
    ("a negative seed", lambda: _ddlwmp(seed=-1), "seed"),
    ("a seed that is not an integer", lambda: _ddlwmp(seed="0"), "seed"),
    ("models that are not a mapping", lambda: _ddlwmp(models=["m"]), "models"),
    ("a time between slot boundaries", lambda: _ddlwmp().decide(0.5, _view(dict(FULL))), "now"),
    ("an arrival between boundaries", lambda: _ddlwmp().on_arrival(_job("x", release=0.2), 0.2), "now"),
    ("an arrival before the release's boundary", lambda: _ddlwmp(slot_seconds=2.0).on_arrival(
        _job("x", release=0.5), 0.0), "now"),
    ("a predicted duration of a model job", lambda: _ddlwmp(models={"m": _M2}).on_arrival(
        Job("x", 0.0, 2, model="m", predicted_duration=3.0), 0.0), "job.predicted_duration"),
    ("two estimates of a duration job", lambda: _ddlwmp().on_arrival(
        Job("x", 0.0, 2, duration=5.0, predicted_duration=3.0, predicted_iterations=1.0), 0.0),
     "job.predicted_duration"),
    ("a negative predicted duration", lambda: Job("x", 0.0, 2, duration=5.0, predicted_duration=-1.0),
     "job.predicted_duration"),
    ("a single-node flag that is not a bool", lambda: Job("x", 0.0, 2, duration=1.0, single_node=1), "job.single_node"),
]
_M2 = {"allreduce": "ring", "stages": [{"replicas": 2, "fwd_time": 0.0, "bwd_time": 0.5, "in_bytes": 0.0,
                                        "out_bytes": 0.0, "param_bytes": 0.0}]}


def _titan(cap: Any, *, arrays: bool = False) -> None:
    if arrays:
        s = NimpScheduler("titan", nodes={0: 2, 1: 2, 2: 2})
        view = ClusterView.of_arrays(np.array([2, 2, 2]), np.array([2, 2, 2]), pair_capacity=cap)
    else:
        s = NimpScheduler("titan", nodes={"a": 2, "b": 2, "c": 2})
        view = ClusterView({"a": 2, "b": 2, "c": 2}, {"a": 2, "b": 2, "c": 2}, pair_capacity=cap)
    s.on_arrival(Job("x", 0.0, 4, param_bytes=1e8), 0.0)
    s.decide(0.0, view)


_PAIRS = {("a", "b"): 1e9, ("a", "c"): 1e9, ("b", "c"): 1e9}
NIMP_ONLY: list[tuple[str, Callable[[], Any], str]] = [
    ("a NaN pair capacity", lambda: _titan(math.nan), "cluster.pair_capacity"),
    ("an infinite pair capacity", lambda: _titan(math.inf), "cluster.pair_capacity"),
    ("a negative pair capacity", lambda: _titan(-1.0), "cluster.pair_capacity"),
    ("a boolean pair capacity", lambda: _titan(True), "cluster.pair_capacity"),
    ("a NaN in a pair mapping", lambda: _titan({**_PAIRS, ("a", "c"): math.nan}), "cluster.pair_capacity[('a', 'c')]"),
    ("a pair mapping missing a pair", lambda: _titan({("a", "b"): 1e9, ("b", "c"): 1e9}), "cluster.pair_capacity"),
    ("a pair of one node", lambda: _titan({**_PAIRS, ("a", "a"): 1e9}), "cluster.pair_capacity[('a', 'a')]"),
    ("a pair given two values", lambda: _titan({**_PAIRS, ("b", "a"): 2e9}), "cluster.pair_capacity"),
    ("a NaN in an array", lambda: _titan(np.array([[0, 1, np.nan], [1, 0, 1], [np.nan, 1, 0]]), arrays=True),
     "cluster.pair_capacity"),
    ("an asymmetric array", lambda: _titan(np.array([[0, 1, 2], [1, 0, 1], [1, 1, 0]]) * 1e9, arrays=True),
     "cluster.pair_capacity"),
    ("an array of another shape", lambda: _titan(np.ones((2, 2)), arrays=True), "cluster.pair_capacity"),
    ("no attempts", lambda: NimpScheduler("titan", nodes=FULL, max_attempts=0), "max_attempts"),
    ("an unknown Elasticflow reading", lambda: NimpScheduler("elasticflow", nodes=FULL, elasticflow_machines="idle"),
     "elasticflow_machines"),
    ("an unknown Tiresias reading", lambda: NimpScheduler("tiresias", nodes=FULL, tiresias_spread="wide"),
     "tiresias_spread"),
]


@pytest.mark.parametrize("what,call,field", DDLWMP_ONLY + NIMP_ONLY, ids=[m[0] for m in DDLWMP_ONLY + NIMP_ONLY])
def test_each_problem_specific_misuse_is_named(what: str, call: Callable[[], Any], field: str) -> None:
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field == field, (what, str(err.value))


@pytest.mark.parametrize("problem", ["ddlwmp", "nimp"])
def test_the_legal_sequences_next_to_the_misuses_pass(problem: str) -> None:
    """A second decide at one instant after a completion (or an arrival) delivered there; equal
    seqs; a lower seq after a decide of the same instant; a late arrival; a failed call leaves
    the scheduler as it was (the same job may then arrive correctly)."""
    s = _started(MAKERS[problem]())
    with pytest.raises(InputError):
        s.on_arrival(_job("late", release=4.0), 3.0)
    s.on_completion("x", 3.0)
    assert s.decide(3.0, _view(dict(FULL))) == []
    s.on_arrival(_job("y", seq=2), 3.0)
    s.on_arrival(_job("z", seq=2), 3.0)
    assert [d.job_id for d in s.decide(3.0, _view(dict(FULL)))] == ["y", "z"]
    s.on_arrival(_job("w", seq=1), 3.0)  # learned late, after the decide: a new batch
    s.on_arrival(_job("late", release=4.0), 9.0)
    assert s.next_wakeup(9.0) is None
    assert [d.job_id for d in s.decide(9.0, _view({"a": 0, "b": 4}))] == ["w", "late"]


@pytest.mark.parametrize("problem", ["ddlwmp", "nimp"])
def test_seq_orders_the_arrivals_of_one_instant_only(problem: str) -> None:
    """Rule 2 compares ``seq`` within one instant: after a seq of 5 at 0, a later instant starts
    its own order (0 then 1 there is legal), and within it a decrease is still refused."""
    s = MAKERS[problem]()
    s.on_arrival(_job("x", seq=5), 0.0)
    s.on_arrival(_job("y", seq=0), 1.0)
    s.on_arrival(_job("z", seq=1), 1.0)
    with pytest.raises(InputError, match="job.seq"):
        s.on_arrival(_job("w", seq=0), 1.0)


def test_pair_capacity_is_validated_alike_online_and_by_place() -> None:
    """The online Titan and ``place`` accept and reject the same pair capacities (module
    docstring of formulations/nimp/online.py: place()'s rule), and place the same way."""
    nodes = {"a": 2, "b": 2, "c": 2}
    cases: list[Any] = [0.0, 5e7, 1e9, math.nan, math.inf, -1.0, True, "wide", dict(_PAIRS),
                        {**_PAIRS, ("b", "a"): 1e9}, {**_PAIRS, ("b", "a"): 2e9}, {("a", "b"): 1e9, ("b", "c"): 1e9},
                        {**_PAIRS, ("a", "c"): math.nan}, {**_PAIRS, ("a", "c"): -5.0}, {**_PAIRS, ("a", "d"): 1e9},
                        {**_PAIRS, ("a", "a"): 1e9}, {**_PAIRS, ("a", "b"): 0.0}]
    verdicts = []
    for cap in cases:
        try:
            want: Any = place(NimpJob(4, "halving-doubling", 1e8), {n: Machine(2, 2) for n in nodes}, cap)
        except InputError:
            want = InputError
        s = NimpScheduler("titan", nodes=nodes)
        s.on_arrival(Job("x", 0.0, 4, param_bytes=1e8, collective="halving-doubling"), 0.0)
        try:
            got: Any = s.decide(0.0, ClusterView(dict(nodes), nodes, pair_capacity=cap))
        except InputError:
            got = InputError
        if want is InputError or got is InputError:
            assert want is got, cap
        elif want.ok:
            assert sorted(got[0].replicas[0]) == sorted(want.machine_of_worker), cap
        verdicts.append(want is InputError)
    assert verdicts.count(True) == 11 and verdicts.count(False) == 6


# ----------------------------------------------------------------------------- single-node jobs: ddlwmp
DDLWMP_VARIANTS = [("a-srpt", {}), ("a-srpt", {"light_placement": "most-free", "head_of_line": "skip"}),
                   *[(b, {}) for b in BASELINES], ("wcs-duration", {"consolidate": True}),
                   ("spjf", {"consolidate": True})]


@pytest.mark.parametrize("name,kw", DDLWMP_VARIANTS, ids=[f"{n}{'-' + '-'.join(k) if k else ''}"
                                                          for n, k in DDLWMP_VARIANTS])
def test_every_ddlwmp_policy_keeps_a_single_node_job_on_one_server(name: str, kw: dict[str, Any]) -> None:
    """Two 4-GPU servers with 3 GPUs free each: a 4-GPU job starts split (3 + 1) without the
    flag and waits with it, under every policy; once a server has 4 free it starts there."""
    nodes = {"a": 4, "b": 4}

    def run(single: bool, free: dict[str, int]) -> list[Decision]:
        s = DdlwmpScheduler(name, nodes=nodes, **kw)
        s.on_arrival(Job("w", 0.0, 4, duration=2.0, single_node=single), 0.0)
        for t in range(6):  # A-SRPT starts it when Ã1 completes it (size 4/8 x 2 s = 1 s)
            out = s.decide(float(t), ClusterView(dict(free), nodes))
            if out:
                return out
        return []

    [split] = run(False, {"a": 3, "b": 3})
    assert split.gpus == {"a": 3, "b": 1}
    assert run(True, {"a": 3, "b": 3}) == []
    [one] = run(True, {"a": 3, "b": 4})
    assert one.gpus == {"b": 4} and one.replicas == [["b"] * 4]


@pytest.mark.parametrize("name,kw", DDLWMP_VARIANTS, ids=[f"{n}{'-' + '-'.join(k) if k else ''}"
                                                          for n, k in DDLWMP_VARIANTS])
def test_simulate_honours_single_node_on_a_loaded_workload(name: str, kw: dict[str, Any]) -> None:
    """Every single-node job of a loaded workload runs on one server (evaluate agrees), and the
    same workload without the flags splits some of them."""
    inst = _single_node_instance(0)
    sched = simulate(inst, _policy(name, inst, **kw))
    assert evaluate(inst, sched).feasible
    single = {j.id for j in inst.jobs if j.single_node}
    assert len(single) >= 20
    for j in sched["jobs"]:
        if j["id"] in single:
            assert len({m for row in j["assignment"] for m in row}) == 1, j
    plain = DdlwmpInstance(inst.cluster, inst.models, tuple(ddlwmp_model.Job(
        j.id, j.release, j.model, j.iterations, j.predicted_iterations) for j in inst.jobs))
    free = simulate(plain, _policy(name, plain, **kw))
    assert any(len({m for row in j["assignment"] for m in row}) > 1 for j in free["jobs"] if j["id"] in single)


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_a_waiting_single_node_job_blocks_only_a_strict_queue(name: str) -> None:
    """A single-node job that no server holds is passed over by the work-conserving baselines
    (a smaller job starts) and blocks the strict ones (the head waits, and so does the queue)."""
    s = DdlwmpScheduler(name, nodes={"a": 4, "b": 4})
    s.on_arrival(Job("wide", 0.0, 4, duration=1.0, single_node=True), 0.0)  # first in every key order
    s.on_arrival(Job("small", 0.0, 2, seq=1, duration=30.0), 0.0)
    started = []
    for t in range(40):
        started += [d.job_id for d in s.decide(float(t), ClusterView({"a": 3, "b": 3}, {"a": 4, "b": 4}))]
        if started:
            break
    assert started == (["small"] if name.startswith("wcs") else [])


def test_a_delayed_single_node_job_waits_for_one_server() -> None:
    """A-SRPT with comm_heavy 0.5 delays every job (line 12 never holds); at its last slot the
    delayed single-node job starts only on a server that holds it, never split.

    comm_heavy < 1 is outside the reading's range (the CLI and the constructors refuse it): with
    a valid value a single-node job's most-free placement is one server, so alpha/α̃_min = 1 and
    line 12 always holds. The test sets the policy's threshold after construction to reach the
    delayed path, which must still never split such a job."""
    s = DdlwmpScheduler("a-srpt", nodes={"a": 4, "b": 4}, comm_heavy=1.0, tau=10.0)
    s.policy.comm_heavy = 0.5
    s.on_arrival(Job("w", 0.0, 4, duration=2.0, single_node=True), 0.0)
    assert s.decide(0.0, _view(dict(FULL))) == [] and s.next_wakeup(0.0) == 1.0  # Ã1: 4/8 x 2 s
    assert s.decide(1.0, _view(dict(FULL))) == [] and s.next_wakeup(1.0) == 11.0  # delayed to 1 + 10 x 1 s
    for t in range(2, 15):
        assert s.decide(float(t), _view({"a": 3, "b": 3})) == []
    [d] = s.decide(15.0, _view({"a": 3, "b": 4}))
    assert d.gpus == {"b": 4}


def _split_instance(single: bool) -> DdlwmpInstance:
    """Two servers of 4 GPUs; a and b (3 GPUs, 10 s each) and c (2 GPUs, 1 s), all at 0. Split,
    all three run at once (a on 2 + 1 GPUs, c beside it: total 21 s); each on one server, c
    cannot run beside both, and the optimum runs b after c (10 + 1 + 11 = 22 s)."""
    stage = {"fwd_time": 0.0, "bwd_time": 0.125, "in_bytes": 0.0, "out_bytes": 0.0, "param_bytes": 0.0}
    models = {f"m{k}": {"allreduce": "ring", "stages": [{"replicas": k, **stage}]} for k in (2, 3)}
    flag = {"single_node": True} if single else {}
    jobs = [{"id": "a", "release": 0, "model": "m3", "iterations": 80, **flag},
            {"id": "b", "release": 0, "model": "m3", "iterations": 80, **flag},
            {"id": "c", "release": 0, "model": "m2", "iterations": 8, **flag}]
    return DdlwmpInstance.from_dict({"problem": "ddlwmp", "models": models, "jobs": jobs, "cluster": {
        "servers": 2, "gpus_per_server": 4, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11}})


def test_exact_solvers_and_evaluate_honour_single_node() -> None:
    free, single = _split_instance(False), _split_instance(True)
    res = exact.run_cpsat(free, seed=0, workers=1)
    assert res.objective == 21.0 and exact.brute_force(free)[0] == 21.0
    assert any(len(set(j["assignment"][0])) > 1 for j in res.solution["jobs"])
    res = exact.run_cpsat(single, seed=0, workers=1)
    assert res.status.value == "optimal" and res.objective == 22.0
    assert exact.brute_force(single)[0] == 22.0
    assert all(len(set(j["assignment"][0])) == 1 for j in res.solution["jobs"])
    assert evaluate(single, res.solution).feasible
    split = copy.deepcopy(res.solution)
    for j in split["jobs"]:
        if j["id"] == "c":
            j["assignment"] = [[0, 1]]
            j.pop("completion", None), j.pop("alpha_s", None)
    assert any("must run on one server (single_node)" in v for v in evaluate(single, split).violations)


def test_single_node_in_the_instance_file() -> None:
    """Optional (old files unchanged: no key written when false), a boolean, a job no larger
    than a server."""
    assert "single_node" not in _split_instance(False).to_dict()["jobs"][0]
    d = _split_instance(True).to_dict()
    assert [j.get("single_node") for j in d["jobs"]] == [True, True, True]
    assert DdlwmpInstance.from_dict(d) == _split_instance(True)
    for value in (1, "yes", None):
        bad = copy.deepcopy(d)
        bad["jobs"][2]["single_node"] = value
        with pytest.raises(InputError) as err:
            DdlwmpInstance.from_dict(bad)
        assert err.value.field == "jobs[2].single_node"
    small = copy.deepcopy(d)
    small["cluster"].update(gpus_per_server=2, servers=3)  # 6 GPUs: a (3 GPUs) fits the cluster, not a server
    with pytest.raises(InputError, match="needs 3 GPUs on one server") as err:
        DdlwmpInstance.from_dict(small)
    assert err.value.field == "jobs[0].single_node"
    small["jobs"][0].pop("single_node"), small["jobs"][1].pop("single_node")
    assert [j.single_node for j in DdlwmpInstance.from_dict(small).jobs] == [False, False, True]


# ----------------------------------------------------------------------------- single-node jobs: nimp
SIZES = {f"m{i}": 8 for i in range(5)}


@pytest.mark.parametrize("policy,readings,want", [
    ("titan", {}, "m4"),                                             # repaired: best fit among non-idle holders
    ("titan", {"titan_algorithm": "pseudo-code"}, "m0"),            # the first non-idle holder
    ("titan", {"titan_algorithm": "pair-grouping"}, "m4"),          # best fit among non-idle holders
    ("titan", {"titan_algorithm": "pair-grouping", "titan_tie_break": "worst-fit"}, "m0"),
    ("titan", {"titan_algorithm": "pair-grouping", "titan_step2": "pool-prefix"}, "m0"),
    ("elasticflow", {}, "m4"),                                      # best fit among holders
    ("elasticflow", {"elasticflow_machines": "idle-only"}, "m2"),   # the idle holder
    ("hived", {}, "m4"),                                            # fragments first, best fit
    ("tiresias", {}, "m2"),                                         # consolidated: the most idle holder
    ("tiresias", {"tiresias_spread": "first-fit"}, "m2"),
])
def test_every_nimp_policy_places_a_single_node_job_by_its_rule(policy: str, readings: dict[str, Any],
                                                                want: str) -> None:
    """Idle GPUs 7, 5, 8 (idle machine), 2, 6 on five 8-GPU machines; a 6-worker job. Without
    the flag the placement of some policies splits it; with it each policy takes one machine of
    those holding 6 (m0, m2, m4) by its own rule (module docstring of formulations/nimp/online.py)."""
    idle = {"m0": 7, "m1": 5, "m2": 8, "m3": 2, "m4": 6}

    def run(single: bool, free: dict[str, int]) -> list[Decision]:
        s = NimpScheduler(policy, nodes=SIZES, **readings)
        s.on_arrival(Job("j", 0.0, 6, param_bytes=1e8, model="resnet50", single_node=single), 0.0)
        return s.decide(0.0, ClusterView(free, SIZES, pair_capacity=1e9))

    [d] = run(True, dict(idle))
    assert d.gpus == {want: 6}
    assert run(True, {**idle, "m0": 5, "m2": 5, "m4": 5}) == []  # 5 + 5 + ... idle, but no machine holds 6
    if policy == "tiresias" and not readings:
        [d] = run(False, dict(idle))
        assert len(d.gpus) > 1  # an insensitive model is spread without the flag


def test_titan_opens_an_idle_machine_for_a_single_node_job() -> None:
    """No non-idle machine holds it: pseudo-code takes the first idle machine that does, the
    default (repaired) and pair-grouping the idle one with the most idle GPUs."""
    sizes = {"a": 8, "b": 8, "c": 16, "d": 8}
    idle = {"a": 8, "b": 2, "c": 16, "d": 3}
    for readings, want in (({}, "c"), ({"titan_algorithm": "pseudo-code"}, "a"),
                           ({"titan_algorithm": "pair-grouping"}, "c")):
        s = NimpScheduler("titan", nodes=sizes, **readings)
        s.on_arrival(Job("j", 0.0, 6, param_bytes=1e8, single_node=True), 0.0)
        assert s.decide(0.0, ClusterView(dict(idle), sizes)) == [Decision("j", {want: 6}, [[want] * 6])]


def test_titan_needs_no_k_for_a_single_node_job() -> None:
    """No byte crosses machines, so Titan takes a single-node job without ``param_bytes``."""
    s = NimpScheduler("titan", nodes={"a": 8, "b": 8})
    s.on_arrival(Job("j", 0.0, 4, single_node=True), 0.0)
    assert s.decide(0.0, ClusterView({"a": 2, "b": 8}, {"a": 8, "b": 8}))[0].gpus == {"b": 4}
    with pytest.raises(InputError, match="Titan needs K"):
        s.on_arrival(Job("k", 0.0, 4), 0.0)


def test_every_view_and_every_pair_capacity_answer_is_checked() -> None:
    """A baseline ignores P, yet its scheduler rejects a NaN pair capacity; Titan checks each
    answer of a callable P, also those asked after a reserve (rule 6)."""
    s = NimpScheduler("hived", nodes={"a": 4, "b": 4})
    with pytest.raises(InputError) as err:
        s.decide(0.0, _view(dict(FULL), pair_capacity=math.nan))
    assert err.value.field == "cluster.pair_capacity"
    reserved: list[str] = []
    good = np.full((2, 2), 1e9)

    def cap() -> np.ndarray:
        return good if not reserved else np.full((2, 2), math.nan)

    t = NimpScheduler("titan", nodes={0: 4, 1: 4})
    t.on_arrival(Job("x", 0.0, 2, param_bytes=1e8), 0.0)
    t.on_arrival(Job("y", 0.0, 2, seq=1, param_bytes=1e8), 0.0)
    view = ClusterView.of_arrays(np.array([4, 4]), np.array([4, 4]), pair_capacity=cap,
                                 on_reserve=lambda d: reserved.append(d.job_id))
    with pytest.raises(InputError) as err:
        t.decide(0.0, view)
    assert err.value.field == "cluster.pair_capacity" and reserved == ["x"]


def test_a_single_node_head_blocks_the_fifo_queue() -> None:
    s = NimpScheduler("elasticflow", nodes={"a": 4, "b": 4})
    s.on_arrival(Job("big", 0.0, 4, single_node=True), 0.0)
    s.on_arrival(Job("small", 0.0, 1, seq=1), 0.0)
    assert s.decide(0.0, ClusterView({"a": 3, "b": 3}, {"a": 4, "b": 4})) == [] and s.waiting == 2


@pytest.mark.parametrize("policy,readings", [("titan", {}), ("titan", {"titan_algorithm": "pair-grouping"}),
                                             ("elasticflow", {}), ("hived", {}), ("tiresias", {})])
def test_the_replay_honours_single_node(policy: str, readings: dict[str, Any]) -> None:
    """A generated replay workload with ``single_node`` on every job of 2-4 workers (4-GPU
    machines): each runs on one machine; the file field is checked."""
    from optkit.formulations.nimp.online import POLICIES

    wl = generate_workload(5, jobs=150, racks=2, machines_per_rack=3, gpus_per_machine=4, mean_interarrival_s=200.0)
    for j in wl["jobs"]:
        if 1 < j["workers"] <= 4:
            j["single_node"] = True
    jobs, topo, cfg = workload_from_dict(wl)
    single = {j.id for j in jobs if j.single_node}
    assert len(single) >= 15
    res = replay(jobs, POLICIES[policy](**readings), topo=topo, config=cfg)
    assert len(res.jobs) == len(jobs)
    for r in res.jobs:
        if r["id"] in single:
            assert len(set(r["machine_of_worker"])) == 1, r
    bad = copy.deepcopy(wl)
    bad["jobs"][0].update(workers=8, single_node=True)
    with pytest.raises(InputError) as err:
        workload_from_dict(bad)
    assert err.value.field == "jobs[0].single_node"


@pytest.fixture
def own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plug-ins registered in the test are undone after it."""
    from optkit import registry

    monkeypatch.setattr(registry, "_registered", dict(registry.all_formulations()))
    monkeypatch.setattr(registry, "_plugins", {p: dict(a) for p, a in registry._plugins.items()})


def test_a_plugin_policy_places_single_node_jobs(own_registry: None) -> None:
    """A plug-in is asked on the machines that hold the job with P = 0; a one-machine answer is
    taken, a split one replaced by Elasticflow's best fit and counted in ``relaxed``."""
    from optkit import registry
    from optkit.formulation import Algorithm
    from optkit.formulations.nimp.model import solution_dict
    from optkit.formulations.nimp.online import AlgorithmPolicy
    from optkit.result import Result, Status

    seen: list[Any] = []

    def last(instance: Any, *, objective: str, time_limit: Any, seed: Any) -> Result:
        seen.append(([m.idle_gpus for m in instance.machines], float(instance.capacity[0, 1])))
        fits = [s for s, m in enumerate(instance.machines) if m.idle_gpus >= instance.N]
        return Result(Status.FEASIBLE, solution=solution_dict([fits[-1]] * instance.N))

    def split(instance: Any, *, objective: str, time_limit: Any, seed: Any) -> Result:
        return Result(Status.FEASIBLE, solution=solution_dict([0] * (instance.N - 1) + [1]))

    for name, fn in (("last", last), ("split", split)):
        registry.register_algorithm(Algorithm(name, fn, "heuristic", name, (), problem="nimp"))
    idle, gpus = np.array([5, 3, 4, 8]), np.array([8, 8, 8, 8])
    job = Job("j", 0.0, 4, param_bytes=1e8, single_node=True)
    pol = AlgorithmPolicy("last")
    pol.on_arrival(job, 0.0)
    [d] = pol.decide(0.0, ClusterView.of_arrays(idle, gpus))
    assert d.replicas == [[3] * 4] and pol.relaxed == 0 and seen == [([5, 0, 4, 8], 0.0)]
    pol = AlgorithmPolicy("split")
    pol.on_arrival(job, 0.0)
    [d] = pol.decide(0.0, ClusterView.of_arrays(idle, gpus))
    assert d.replicas == [[2] * 4] and pol.relaxed == 1


# ----------------------------------------------------------------------------- duration jobs
def test_a_duration_job_is_planned_with_its_predicted_duration() -> None:
    """A-SRPT sizes it (3/8 x predicted 40 s = 15 s: its wake-up), the decision's time per
    iteration is its duration; predicted_iterations means that many iterations of d."""
    s = DdlwmpScheduler("a-srpt", nodes={"a": 4, "b": 4})
    s.on_arrival(Job("j", 0.0, 3, duration=100.0, predicted_duration=40.0), 0.0)
    assert s.decide(0.0, ClusterView({"a": 4, "b": 4}, {"a": 4, "b": 4})) == [] and s.next_wakeup(0.0) == 15.0
    [d] = s.decide(15.0, ClusterView({"a": 4, "b": 4}, {"a": 4, "b": 4}))
    assert d.time_per_iteration == 100.0
    for kw, wake in (({"predicted_iterations": 4.0}, 15.0), ({}, 3.75)):  # 4 x 10 s predicted; else 10 s
        t = DdlwmpScheduler("a-srpt", nodes={"a": 4, "b": 4})
        t.on_arrival(Job("j", 0.0, 3, duration=10.0, **kw), 0.0)
        t.decide(0.0, ClusterView({"a": 4, "b": 4}, {"a": 4, "b": 4}))
        assert t.next_wakeup(0.0) == wake


def test_duration_jobs_share_one_model_per_gpu_count() -> None:
    """Arrivals of any durations add one model per GPU count (the gpu-mapping estimates are
    computed once per count: benchmarks/online_arrival.py measures the cost)."""
    s = DdlwmpScheduler("wcs-duration", nodes={"a": 8, "b": 8})
    rng = np.random.default_rng(0)
    for i, d in enumerate(rng.lognormal(5, 2, size=60)):
        s.on_arrival(Job(f"j{i}", 0.0, 1 + i % 3, seq=i, duration=float(d)), 0.0)
    assert sorted(s.models) == ["(duration job of 1 GPUs)", "(duration job of 2 GPUs)", "(duration job of 3 GPUs)"]
    assert len(s.policy.placer._alpha_min) == 3


# ----------------------------------------------------------------------------- a policy that breaks single-node
class _Splitter:
    """A user's policy that starts every job over nodes 0 and 1, half on each."""

    protocol = "optkit.online"
    name = "splitter"

    def __init__(self) -> None:
        self.jobs: list[Job] = []

    def on_arrival(self, job: Job, now: float) -> None:
        self.jobs.append(job)

    def on_completion(self, job_id: str, now: float) -> None:
        pass

    def decide(self, now: float, cluster: ClusterView) -> list[Decision]:
        if not self.jobs:
            return []
        j = self.jobs.pop(0)
        h = j.gpus // 2
        d = Decision(j.id, {0: h, 1: j.gpus - h}, [[0] * h + [1] * (j.gpus - h)], 1.0)
        cluster.reserve(d)
        return [d]

    def next_wakeup(self, now: float) -> float | None:
        return None


def test_the_drivers_refuse_a_policy_that_splits_a_single_node_job() -> None:
    from optkit.formulations.ddlwmp.policies import ClusterState, StartDecision

    inst = _split_instance(True)
    with pytest.raises(RuntimeError, match="policy splitter split single-node job 'a' over servers"):
        simulate(inst, _Splitter())
    wl = {"problem": "nimp", "kind": "replay", "cluster": {"racks": 1, "machines_per_rack": 2, "gpus_per_machine": 4},
          "jobs": [{"id": "a", "submit": 0, "duration": 60, "workers": 4, "single_node": True}]}
    jobs, topo, cfg = workload_from_dict(wl)
    with pytest.raises(RuntimeError, match="policy splitter split single-node job a over machines"):
        replay(jobs, _Splitter(), topo=topo, config=cfg)

    class Inner(BASELINES["fifo"]):  # type: ignore[misc, valid-type]
        """FIFO with every start placed 2 + 1 over servers 0 and 1."""

        def decide(self, now: float, state: ClusterState) -> list[StartDecision]:
            two_one = self.placer.place("m3", np.array([0, 1]), np.array([2, 1]))
            return [StartDecision(d.job_id, two_one) for d in super().decide(now, state)]

    s = DdlwmpScheduler.of_policy(Inner(inst.cluster, inst.models, seed=0), inst.cluster, inst.models)
    s.on_arrival(Job("a", 0.0, 3, model="m3", single_node=True), 0.0)
    with pytest.raises(RuntimeError, match="policy fifo split single-node job a over servers"):
        s.decide(0.0, ClusterView.of_arrays(np.array([4, 4]), np.array([4, 4])))
