"""Every public entry of the Python API rejects bad input as the file path does (issue 22, item 4):
an :class:`optkit.InputError` naming the field and the problem, never a raw Python error or a
silent wrong answer. One row per bad input a scheduler engineer met on the typed path; each
message is the one an instance file with the same mistake gets."""

from __future__ import annotations

from typing import Any, Callable

import networkx as nx
import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping import Cluster, PipelineJob, Stage, heavy_edge, heavy_edge_job
from optkit.formulations.nimp.model import Job as NimpJob, Machine, NimpInstance, ring_phases
from optkit.formulations.nimp.titan import titan
from optkit.formulations.rar_ddls.generate import tiny as rar_tiny
from optkit.formulations.rar_ddls.model import Job as RarJob, Network, RarInstance
from optkit.formulations.rar_ddls.sjf_bco import sjf_bco
from optkit.formulations.rar_ddls import schedule_batch
from optkit.formulations.ddlwmp.a_srpt import ASRPT
from optkit.formulations.ddlwmp.baselines import SPJF
from optkit.formulations.ddlwmp.model import DdlwmpCluster
from optkit.formulations.ddlwmp.policies import JobSpec

STAGE = (2, 0.1, 0.2, 0.0, 0.0, 2e7)
RAR = RarInstance.from_dict(rar_tiny(0))
NET = RAR.network


def _rar_job(**kw: Any) -> RarJob:
    d = {**RAR.jobs[0].to_dict(), **kw}
    return RarJob(**d)


DD_CLUSTER = DdlwmpCluster(2, 8, 1.25e9, 3e11)  # 16 GPUs
DD_MODELS = {"m8": PipelineJob.from_dict({"allreduce": "ring", "stages": [
    {"replicas": 8, "fwd_time": 0.1, "bwd_time": 0.2, "in_bytes": 0, "out_bytes": 0, "param_bytes": 1e8}]}),
    "m24": PipelineJob.from_dict({"allreduce": "ring", "stages": [
        {"replicas": 24, "fwd_time": 0.1, "bwd_time": 0.2, "in_bytes": 0, "out_bytes": 0, "param_bytes": 1e8}]})}


def _arrive(cls: Any, *jobs: JobSpec) -> None:
    policy = cls(DD_CLUSTER, DD_MODELS, seed=0)
    for j in jobs:
        policy.on_arrival(j, j.release)


ROWS: list[tuple[str, Callable[[], Any], str, str]] = [
    # ddlwmp's index-based policies (the silent failures)
    ("a 24-GPU job on a 16-GPU cluster (A-SRPT)", lambda: _arrive(ASRPT, JobSpec("big", 0.0, "m24", 24, 5.0)),
     "ddlwmp", "job.gpus"),
    ("a duplicate arrival (A-SRPT)", lambda: _arrive(ASRPT, JobSpec("x", 0.0, "m8", 8, 5.0),
                                                      JobSpec("x", 1.0, "m8", 8, 5.0)), "ddlwmp", "job.id"),
    ("4 GPUs for an 8-replica model (SPJF)", lambda: _arrive(SPJF, JobSpec("x", 0.0, "m8", 4, 5.0)), "ddlwmp",
     "job.gpus"),
    ("an unknown model (SPJF)", lambda: _arrive(SPJF, JobSpec("x", 0.0, "nope", 8, 5.0)), "ddlwmp", "job.model"),
    # gpu-mapping
    ("stage with no replicas", lambda: Stage(0, *STAGE[1:]), "gpu-mapping", "stage.replicas"),
    ("server of no GPUs", lambda: Cluster(0, 1.25e9, 3e11), "gpu-mapping", "cluster.gpus_per_server"),
    ("negative bandwidth", lambda: Cluster(8, -1.0, 3e11), "gpu-mapping", "cluster.inter_bandwidth"),
    ("job without stages", lambda: PipelineJob((), "ring"), "gpu-mapping", "job.stages"),
    ("misspelt all-reduce", lambda: PipelineJob((Stage(*STAGE),), "Ring"), "gpu-mapping", "job.allreduce"),
    ("free GPUs that do not add up", lambda: heavy_edge(nx.path_graph(4), [4, 1]), "gpu-mapping", "free_gpus"),
    ("no servers", lambda: heavy_edge_job(PipelineJob((Stage(*STAGE),), "ring"), []), "gpu-mapping", "free_gpus"),
    # nimp
    ("idle GPUs above the machine's", lambda: Machine(4, 6), "nimp", "machine.idle_gpus"),
    ("misspelt collective", lambda: NimpJob(4, "Ring", 1e8), "nimp", "job.collective"),
    ("a job of no workers", lambda: NimpJob(0, "ring", 1e8), "nimp", "job.workers"),
    ("asymmetric pair matrix (typed instance)",
     lambda: NimpInstance((Machine(4, 2), Machine(4, 4)), __import__("numpy").array([[0, 1e8], [2e8, 0]]), False,
                          NimpJob(2, "ring", 1e8)), "nimp", "pair_capacity_bytes"),
    ("asymmetric pair matrix (titan)",
     lambda: titan([4, 4], [2, 4], [[0, 1e8], [2e8, 0]], ring_phases(3, 1e8), workers=3), "nimp", "capacity"),
    ("2 x 2 pair matrix for 3 machines",
     lambda: titan([4, 4, 4], [1, 4, 2], [[1e8, 1e8], [1e8, 1e8]], ring_phases(3, 1e8), workers=3), "nimp", "capacity"),
    ("idle GPUs above the machine's (titan)",
     lambda: titan([4, 4], [6, 4], 1e8, ring_phases(3, 1e8), workers=3), "nimp", "idle_gpus[0]"),
    ("no workers (titan)", lambda: titan([4, 4], [2, 4], 1e8, ring_phases(2, 1e8), workers=0), "nimp", "workers"),
    ("no machines (titan)", lambda: titan([], [], 1e8, ring_phases(2, 1e8), workers=2), "nimp", "gpus"),
    # rar-ddls
    ("xi1 above 1", lambda: Network(NET.inter_bandwidth, NET.intra_bandwidth, NET.compute_speed, 2.0, NET.xi2,
                                     NET.degradation), "rar-ddls", "network.xi1"),
    ("a job of no GPUs", lambda: _rar_job(gpus=0), "rar-ddls", "job.gpus"),
    ("duplicate job ids", lambda: RarInstance(RAR.servers, NET, 1.0, 100, (RAR.jobs[0], RAR.jobs[0])), "rar-ddls",
     "jobs[1].id"),
    ("no jobs", lambda: RarInstance(RAR.servers, NET, 1.0, 100, ()), "rar-ddls", "jobs"),
    ("an iteration longer than a slot",
     lambda: RarInstance(RAR.servers, NET, 1.0, 100, (_rar_job(bwd_time=5.0),)), "rar-ddls", "jobs[0]"),
    ("a job larger than the cluster", lambda: RarInstance((2,), NET, 1.0, 100, (_rar_job(gpus=4),)), "rar-ddls",
     "jobs[0].gpus"),
    ("no jobs (SJF-BCO on a dict)", lambda: sjf_bco({**RAR.to_dict(), "jobs": []}), "rar-ddls", "jobs"),
    ("busy GPUs for a server that does not exist",
     lambda: RarInstance(RAR.servers, NET, 1.0, 100, RAR.jobs, ((1,), (1,), (1,))), "rar-ddls", "busy_until"),
    ("a busy GPU the server does not have",
     lambda: RarInstance(RAR.servers, NET, 1.0, 100, RAR.jobs, ((1,) * (RAR.servers[0] + 1), ())), "rar-ddls",
     "busy_until[0]"),
    ("a negative busy slot", lambda: RarInstance(RAR.servers, NET, 1.0, 100, RAR.jobs, ((0, -3), ())), "rar-ddls",
     "busy_until[0][1]"),
    ("a fractional busy slot", lambda: RarInstance(RAR.servers, NET, 1.0, 100, RAR.jobs, ((2.5,), ())), "rar-ddls",
     "busy_until[0][0]"),
    ("a busy slot that overflows", lambda: RarInstance(RAR.servers, NET, 1.0, 100, RAR.jobs, ((2 ** 70,), ())),
     "rar-ddls", "busy_until[0][0]"),
    ("busy GPU of an unknown node (schedule_batch)",
     lambda: schedule_batch(RAR.jobs, {"a": 2, "b": 3}, NET, busy_until={("nope", 0): 4}), "rar-ddls",
     "busy_until[('nope', 0)]"),
    ("busy GPU index past the node (schedule_batch)",
     lambda: schedule_batch(RAR.jobs, {"a": 2, "b": 3}, NET, busy_until={("a", 2): 4}), "rar-ddls",
     "busy_until[('a', 2)]"),
    ("a negative busy slot (schedule_batch)",
     lambda: schedule_batch(RAR.jobs, {"a": 2, "b": 3}, NET, busy_until={("b", 1): -1}), "rar-ddls",
     "busy_until[('b', 1)]"),
    ("a node of no GPUs (schedule_batch)", lambda: schedule_batch(RAR.jobs, {"a": 2, "b": 0}, NET), "rar-ddls",
     "servers['b']"),
]


@pytest.mark.parametrize("what,call,problem,field", ROWS, ids=[r[0] for r in ROWS])
def test_bad_typed_input_is_an_input_error_naming_the_field(what: str, call: Callable[[], Any], problem: str,
                                                            field: str) -> None:
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field == field, what
    if problem:
        assert err.value.problem == problem and str(err.value).startswith(f"{problem}: "), what


def test_typed_messages_equal_the_file_paths() -> None:
    """The same mistake, typed and as a file: the same words after the field."""
    d = RAR.to_dict()
    d["network"] = {**d["network"], "xi1": 2.0}
    with pytest.raises(InputError) as from_file:
        RarInstance.from_dict(d)
    with pytest.raises(InputError) as typed:
        Network(**{**NET.to_dict(), "xi1": 2.0})
    assert typed.value.message == from_file.value.message and typed.value.field == from_file.value.field


@pytest.mark.parametrize("slot", [-3, 2.5, 2 ** 70, True])
def test_busy_slot_messages_equal_the_file_paths(slot: Any) -> None:
    """A bad busy slot (below 0, fractional, past the limit, a boolean), as a file, typed and by
    node id: the same words; the field names the GPU by position, or by node id and GPU index."""
    d = {**RAR.to_dict(), "busy_until": [[0, slot], []]}
    with pytest.raises(InputError) as from_file:
        RarInstance.from_dict(d)
    with pytest.raises(InputError) as typed:
        RarInstance(RAR.servers, NET, RAR.slot_seconds, RAR.horizon, RAR.jobs, ((0, slot), ()))
    with pytest.raises(InputError) as by_name:
        schedule_batch(RAR.jobs, {"a": RAR.servers[0], "b": RAR.servers[1]}, NET, busy_until={("a", 1): slot})
    assert from_file.value.field == typed.value.field == "busy_until[0][1]"
    assert by_name.value.field == "busy_until[('a', 1)]"
    assert from_file.value.message == typed.value.message == by_name.value.message
    assert by_name.value.problem == typed.value.problem == "rar-ddls"


def test_valid_typed_objects_are_unchanged() -> None:
    """The checks reject only what the file path rejects: every valid object round-trips."""
    assert RarInstance(RAR.servers, NET, RAR.slot_seconds, RAR.horizon, RAR.jobs) == RAR
    assert Machine(4, 4).idle and NimpJob(3, "halving-doubling", 1e8).workers == 3
    assert Cluster(8, 1.25e9, 3e11).to_dict()["gpus_per_server"] == 8
