"""The engine's online protocol (:mod:`optkit.online`) and ddlwmp's policies behind it.

The minimal driver of ``docs/howto/drive-a-srpt.rst`` (its source is read from the page, so the
page and this test cannot drift apart) gives every job of every shipped ddlwmp workload the
start and completion ``optkit.formulations.ddlwmp.simulate`` gives, for A-SRPT (with the
instance's predictions and with perfect ones) and every baseline, with the nodes named by
strings; bad input is an InputError naming the field."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import pytest

from optkit.errors import InputError
from optkit.formulations.ddlwmp import DdlwmpInstance, OnlineScheduler
from optkit.formulations.ddlwmp.a_srpt import ASRPT
from optkit.formulations.ddlwmp.baselines import BASELINES
from optkit.formulations.ddlwmp.simulate import simulate
from optkit.instances import read_json
from optkit.online import ClusterView, Decision, Job

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "howto" / "drive-a-srpt.rst"
SHIPPED = sorted((ROOT / "instances" / "ddlwmp" / "tiny").glob("*.json"))


def _driver() -> Callable[..., dict[str, tuple[float, float]]]:
    """``drive`` as the page shows it: the first testcode block, dedented and run."""
    text = PAGE.read_text()
    block = text.split(".. testcode::", 2)[1].split("\nJobs as ", 1)[0]
    code = "\n".join(line[3:] if line.startswith("   ") else line for line in block.splitlines())
    assert len([ln for ln in code.splitlines() if ln.strip()]) < 60  # the "under 60 lines"
    ns: dict[str, Any] = {}
    exec(compile(code, str(PAGE), "exec"), ns)
    return ns["drive"]  # type: ignore[no-any-return]


DRIVE = _driver()


@pytest.mark.parametrize("policy", ["a-srpt", "a-srpt-perfect", *BASELINES])
@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_minimal_driver_gives_simulates_schedule(path: Path, policy: str) -> None:
    inst = DdlwmpInstance.from_dict(read_json(path))
    cl = inst.cluster
    perfect = policy == "a-srpt-perfect"
    name = "a-srpt" if perfect else policy
    cls = ASRPT if name == "a-srpt" else BASELINES[name]
    want = simulate(inst, cls(cl, inst.models, seed=0), perfect=perfect)
    nodes = {f"srv-{m}": cl.gpus_per_server for m in range(cl.servers)}
    sched = OnlineScheduler(name, nodes=nodes, models=inst.models, inter_bandwidth=cl.inter_bandwidth,
                            intra_bandwidth=cl.intra_bandwidth, slot_seconds=cl.slot_seconds, seed=0)
    jobs = [Job(j.id, float(j.release), inst.gpus(j), seq=i, model=j.model,
                predicted_iterations=float(j.iterations) if perfect else j.predicted_iterations)
            for i, j in enumerate(inst.jobs)]
    iterations = {j.id: j.iterations for j in inst.jobs}
    got = DRIVE(sched, jobs, nodes, lambda d: iterations[d.job_id] * d.time_per_iteration, slot=cl.slot_seconds)
    assert {j["id"]: (j["start"], j["completion"]) for j in want["jobs"]} == got


def test_duration_jobs_run_for_their_duration_on_any_split() -> None:
    """A "k GPUs for d seconds" job is one stage exchanging nothing: alpha = d on any placement."""
    nodes = {"a": 2, "b": 2}
    s = OnlineScheduler("fifo", nodes=nodes)
    jobs = [Job("x", 0.0, 1, seq=0, duration=7.0), Job("y", 0.0, 3, seq=1, duration=11.0)]
    got = DRIVE(s, jobs, nodes, lambda d: d.time_per_iteration)
    assert got == {"x": (0.0, 7.0), "y": (0.0, 11.0)}


def _arrive(s: OnlineScheduler, *jobs: Job) -> None:
    for j in jobs:
        s.on_arrival(j, j.release)


MODELS = {"m8": {"allreduce": "ring", "stages": [{"replicas": 8, "fwd_time": 0.1, "bwd_time": 0.2, "in_bytes": 0,
                                                   "out_bytes": 0, "param_bytes": 1e8}]}}
ROWS: list[tuple[str, Callable[[], Any], str]] = [
    ("a job larger than the cluster", lambda: _arrive(OnlineScheduler(nodes={"a": 8, "b": 8}),
                                                      Job("big", 0.0, 24, duration=1.0)), "job.gpus"),
    ("a duplicate arrival", lambda: _arrive(OnlineScheduler(nodes={"a": 8}), Job("x", 0.0, 1, duration=1.0),
                                            Job("x", 1.0, 1, duration=1.0)), "job.id"),
    ("GPUs that differ from the model's replicas",
     lambda: _arrive(OnlineScheduler(nodes={"a": 8}, models=MODELS), Job("x", 0.0, 4, model="m8")), "job.gpus"),
    ("an unknown model", lambda: _arrive(OnlineScheduler(nodes={"a": 8}, models=MODELS), Job("x", 0.0, 8, model="nope")),
     "job.model"),
    ("nodes of different sizes", lambda: OnlineScheduler(nodes={"a": 8, "b": 2}), "nodes"),
    ("no nodes", lambda: OnlineScheduler(nodes={}), "nodes"),
    ("an unknown policy", lambda: OnlineScheduler("srpt", nodes={"a": 8}), "policy"),
    ("an unknown keyword", lambda: OnlineScheduler("fifo", nodes={"a": 8}, tau=3), "tau"),
    ("a job with neither model nor duration", lambda: _arrive(OnlineScheduler(nodes={"a": 8}), Job("x", 0.0, 1)),
     "job"),
    ("a job with both model and duration",
     lambda: _arrive(OnlineScheduler(nodes={"a": 8}, models=MODELS), Job("x", 0.0, 8, model="m8", duration=1.0)), "job"),
    ("an unknown collective", lambda: Job("x", 0.0, 2, duration=1.0, collective="Ring"), "job.collective"),
    ("a negative release", lambda: Job("x", -1.0, 2, model="m"), "job.release"),
    ("an infinite release", lambda: Job("x", float("inf"), 2, model="m"), "job.release"),
    ("a NaN prediction", lambda: Job("x", 0.0, 2, model="m", predicted_iterations=float("nan")),
     "job.predicted_iterations"),
    ("a negative K", lambda: Job("x", 0.0, 2, model="m", param_bytes=-1.0), "job.param_bytes"),
    ("an empty model name", lambda: Job("x", 0.0, 2, model=""), "job.model"),
    ("a sensitivity flag that is not a bool", lambda: Job("x", 0.0, 2, param_bytes=1.0, placement_sensitive=1),
     "job.placement_sensitive"),
    ("an empty id", lambda: Job("", 0.0, 2, model="m"), "job.id"),
    ("a boolean GPU count", lambda: Job("x", 0.0, True, model="m"), "job.gpus"),
    ("a tie key that is not an integer", lambda: Job("x", 0.0, 2, seq=1.5, duration=1.0), "job.seq"),  # type: ignore[arg-type]
    ("a reserve beyond the free GPUs",
     lambda: ClusterView({"a": 2}, {"a": 8}).reserve(Decision("x", {"a": 3})), "decision.gpus"),
    ("a reserve on an unknown node", lambda: ClusterView({"a": 2}, {"a": 8}).reserve(Decision("x", {"b": 1})),
     "decision.gpus"),
    ("a job of no GPUs", lambda: Job("x", 0.0, 0, duration=1.0), "job.gpus"),
    ("a negative duration", lambda: Job("x", 0.0, 1, duration=-1.0), "job.duration"),
    ("a view naming other nodes", lambda: OnlineScheduler(nodes={"a": 8}).decide(0.0, ClusterView({"b": 8}, {"b": 8})),
     "cluster.free"),
]


@pytest.mark.parametrize("what,call,field", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input_names_the_field(what: str, call: Callable[[], Any], field: str) -> None:
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field == field, what


class _Delegate:
    """A user's policy object that speaks the protocol (here by delegating to a scheduler)."""

    protocol = "optkit.online"

    def __init__(self, inner: OnlineScheduler, *, drop_alpha: bool = False) -> None:
        self.inner, self.drop_alpha, self.name = inner, drop_alpha, "delegate"

    def on_arrival(self, job: Job, now: float) -> None:
        self.inner.on_arrival(job, now)

    def on_completion(self, job_id: str, now: float) -> None:
        self.inner.on_completion(job_id, now)

    def decide(self, now: float, cluster: ClusterView) -> list[Decision]:
        out = self.inner.decide(now, cluster)
        return [Decision(d.job_id, d.gpus) for d in out] if self.drop_alpha else out

    def next_wakeup(self, now: float) -> float | None:
        return self.inner.next_wakeup(now)


@pytest.mark.parametrize("path", SHIPPED[:6], ids=[p.stem for p in SHIPPED[:6]])
def test_simulate_drives_any_online_policy(path: Path) -> None:
    """``simulate`` is a driver of the protocol: an object declaring it is driven as it is (nodes
    0..M-1), and gives the schedule of the policy it delegates to; a decision without the time
    per iteration cannot be simulated and says so."""
    inst = DdlwmpInstance.from_dict(read_json(path))
    cl = inst.cluster
    want = simulate(inst, BASELINES["wcs-duration"](cl, inst.models, seed=0))

    def sched() -> OnlineScheduler:
        return OnlineScheduler("wcs-duration", nodes={m: cl.gpus_per_server for m in range(cl.servers)},
                               models=inst.models, inter_bandwidth=cl.inter_bandwidth,
                               intra_bandwidth=cl.intra_bandwidth, slot_seconds=cl.slot_seconds, seed=0)

    assert simulate(inst, _Delegate(sched())) == want
    with pytest.raises(RuntimeError, match="time per iteration"):
        simulate(inst, _Delegate(sched(), drop_alpha=True))
