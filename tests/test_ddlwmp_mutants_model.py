"""ddlwmp's instance model (formulations/ddlwmp/model.py) and the policies' building blocks
(placement.py, policies.py): facts a surviving mutant of the sample broke. Written for the
mutation score (issue 36 item 5)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.ddlwmp.model import DdlwmpCluster, DdlwmpInstance, Job, alpha_upper, evaluate
from optkit.formulations.gpu_mapping.model import Cluster, PipelineJob
from optkit.online import SLOT_TOL

CLUSTER = {"servers": 2, "gpus_per_server": 2, "inter_bandwidth": 1e9, "intra_bandwidth": 1e11}
PIPE = {"allreduce": "ring", "stages": [
    {"replicas": 1, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0, "out_bytes": 1e6, "param_bytes": 0},
    {"replicas": 1, "fwd_time": 0.03, "bwd_time": 0.01, "in_bytes": 1e6, "out_bytes": 0, "param_bytes": 0}]}
DP = {"allreduce": "ring", "stages": [{"replicas": 2, "fwd_time": 0.04, "bwd_time": 0.06, "in_bytes": 0,
                                       "out_bytes": 0, "param_bytes": 1e8}]}


def _instance(jobs: list[dict], **extra: object) -> DdlwmpInstance:
    return DdlwmpInstance.from_dict({"problem": "ddlwmp", "cluster": CLUSTER, "models": {"pipe": PIPE, "dp": DP},
                                     "jobs": jobs, **extra})


def test_alpha_upper_hand_worked() -> None:
    """g = 2, B_inter 1e9, B_intra 1e11: the dearer per-byte cost is g/B_inter = 2e-9 s. The
    pipeline's stages: 0.01 + 0.02 + 2·2e-9·1e6 = 0.034 s and 0.03 + 0.01 + 0.004 = 0.044 s: the
    bound is 0.044. The 2-replica stage: 0.1 s of compute and the dearer AllReduce of its
    2(k-1)h/k = 1e8 B, at g/B_inter (0.2 s) rather than 1/B_intra (0.001 s): 0.3 s."""
    mc = Cluster(2, 1e9, 1e11)
    assert alpha_upper(PipelineJob.from_dict(PIPE), mc) == pytest.approx(0.044)
    assert alpha_upper(PipelineJob.from_dict(DP), mc) == pytest.approx(0.3)


def test_cluster_fields_are_named() -> None:
    for missing in ("servers", "gpus_per_server"):
        with pytest.raises(InputError) as info:
            DdlwmpCluster.from_dict({k: v for k, v in CLUSTER.items() if k != missing})
        assert info.value.field == f"cluster.{missing}" and "is required" in str(info.value)
    with pytest.raises(InputError) as info:
        DdlwmpCluster.from_dict(dict(CLUSTER, intra_bandwidth=0))
    assert info.value.field == "cluster.intra_bandwidth"
    with pytest.raises(InputError) as info:
        DdlwmpCluster.from_dict(dict(CLUSTER, slot_second=2))
    assert info.value.field == "cluster.slot_second" and "slot_seconds" in str(info.value)
    with pytest.raises(InputError) as info:
        DdlwmpCluster(servers=0, gpus_per_server=2, inter_bandwidth=1e9, intra_bandwidth=1e11)
    assert info.value.field == "cluster.servers" and info.value.problem == "ddlwmp"
    c = DdlwmpCluster(servers=3, gpus_per_server=4, inter_bandwidth=1e9, intra_bandwidth=1e11, slot_seconds=2.0)
    mc = c.mapping_cluster
    assert (mc.gpus_per_server, mc.inter_bandwidth, mc.intra_bandwidth) == (4, 1e9, 1e11) and c.total_gpus == 12
    assert c.to_dict() == {"servers": 3, "gpus_per_server": 4, "inter_bandwidth": 1e9, "intra_bandwidth": 1e11,
                           "slot_seconds": 2.0}


def test_job_fields_are_named_and_kept() -> None:
    for bad in ("", 5):
        with pytest.raises(InputError) as info:
            _instance([{"id": bad, "release": 0, "model": "dp", "iterations": 1}])
        assert info.value.field == "jobs[0].id" and "non-empty string" in str(info.value)
    inst = _instance([{"id": "a", "release": 0, "model": "dp", "iterations": 3, "predicted_iterations": 4,
                       "user": "u", "group": "g", "vc": "v1"}], name="mine")
    job = inst.jobs[0]
    assert (job.user, job.group, job.predicted_iterations, job.extras) == ("u", "g", 4.0, {"vc": "v1"})
    assert isinstance(job.predicted_iterations, float)
    assert inst.extras == {"name": "mine"} and inst.to_dict()["name"] == "mine"
    fast = _instance([{"id": "a", "release": 0, "model": "dp", "iterations": 3, "predicted_iterations": 4}]).jobs[0]
    assert fast == Job("a", 0.0, "dp", 3, 4.0) and fast.single_node is False
    with pytest.raises(InputError) as info:
        _instance([{"id": "a", "release": 0, "model": "dp", "iterations": 1, "single_node": "yes"}])
    assert info.value.field == "jobs[0].single_node"


def _entry(jid: str, start: object, assignment: list, **kw: object) -> dict:
    return {"id": jid, "start": start, "assignment": assignment, **kw}


def test_evaluate_measures_a_schedule_by_hand() -> None:
    """dp (alpha 0.101 s on one server) released at 0, 10 iterations, started at 0: C = 1.01; the
    pipeline (alpha 0.044 + ... : both stages on server 1, no inter-server bytes: stage times
    0.03 + 2·1e6/1e11 and 0.04 + 2e-5, alpha 0.04002) released at 1, 100 iterations, started at 1
    (an int start is a number): C = 5.002. Objectives and the tail metrics of the JCTs 1.01 and
    4.002."""
    inst = _instance([{"id": "a", "release": 0, "model": "dp", "iterations": 10},
                      {"id": "b", "release": 1, "model": "pipe", "iterations": 100}])
    ev = evaluate(inst, {"jobs": [_entry("a", 0.0, [[0, 0]]), _entry("b", 1, [[1], [1]])]})
    assert ev.feasible, ev.violations
    assert ev.objectives == {"total_completion": pytest.approx(1.01 + 5.002), "total_flow": pytest.approx(5.012),
                             "makespan": pytest.approx(5.002)}
    jct = [1.01, 4.002]
    assert ev.metrics["jobs"] == 2 and ev.metrics["mean_jct_s"] == pytest.approx(sum(jct) / 2)
    assert ev.metrics["max_jct_s"] == pytest.approx(4.002)
    assert ev.metrics["p50_jct_s"] == pytest.approx(1.01 + 0.5 * (4.002 - 1.01))
    assert ev.metrics["p95_jct_s"] == pytest.approx(1.01 + 0.95 * (4.002 - 1.01))
    assert ev.metrics["p99_jct_s"] == pytest.approx(1.01 + 0.99 * (4.002 - 1.01))
    # a claimed alpha within the 1e-9 relative tolerance (not equal) is accepted; beyond it, named
    near = evaluate(inst, {"jobs": [_entry("a", 0.0, [[0, 0]], alpha_s=0.101 * (1 + 1e-12)),
                                    _entry("b", 1.0, [[1], [1]], completion=5.002 * (1 + 1e-12))]})
    assert near.feasible, near.violations
    far = evaluate(inst, {"jobs": [_entry("a", 0.0, [[0, 0]], alpha_s=0.2), _entry("b", 1.0, [[1], [1]])]})
    assert not far.feasible and "alpha_s 0.2 disagrees" in far.violations[0]


def test_evaluate_names_each_bad_entry() -> None:
    inst = _instance([{"id": "a", "release": 2, "model": "dp", "iterations": 10},
                      {"id": "b", "release": 0, "model": "pipe", "iterations": 1}])
    b = _entry("b", 0.0, [[0], [1]])
    for start in ("soon", None, float("inf"), True):
        ev = evaluate(inst, {"jobs": [_entry("a", start, [[0, 0]]), b]})
        assert ev.violations == [f"job a: start must be a number, got {start!r}"]
    ev = evaluate(inst, {"jobs": [_entry("a", 1.0, [[0, 0]]), b]})
    assert not ev.feasible and ev.violations == ["job a starts at 1.0 before its release 2.0"]
    late = 1.0 + 1.5 * SLOT_TOL  # 1.5 tolerances off slot 1 (the tolerance is SLOT_TOL·max(1, q))
    ev = evaluate(inst, {"jobs": [_entry("a", 2.0, [[0, 0]]), _entry("b", late, [[0], [1]])]})
    assert ev.violations == [f"job b starts at {late}, not on a slot boundary (slot 1.0 s)"]
    for assignment in (None, [[0, 0], [0]], [[0]]):
        ev = evaluate(inst, {"jobs": [{"id": "a", "start": 2.0, "assignment": assignment}, b]})
        assert ev.violations == ["job a: assignment must list, per stage of dp, one server per replica"]
    ev = evaluate(inst, {"jobs": [_entry("a", 2.0, [[0, 2]]), b]})
    assert ev.violations == ["job a: assignment holds a server index outside 0..1"]
    assert evaluate(inst, {"jobs": [_entry("a", 2.0, [[0, 1]]), _entry("b", 0.0, [[0], [0]])]}).feasible
    ev = evaluate(inst, {"jobs": [_entry("a", 2.0, [[1, 1]]), _entry("b", 2.0, [[1], [1]])]})
    assert ev.violations == ["server 1 holds 4 GPUs at t=2.0 s (capacity 2)"]
    assert evaluate(inst, {"jobs": "a"}).violations == ["solution must be an object with a 'jobs' list"]
    assert not evaluate(inst, {"jobs": "a"}).feasible
    assert evaluate(inst, {"jobs": [{"start": 0.0}, b]}).violations == [
        "jobs[0] must be an object with an 'id'", "1 jobs are not scheduled: a"]


def test_evaluate_reads_each_job_of_a_repeated_id_from_its_row() -> None:
    """An instance built directly may repeat an id (from_dict refuses it): both jobs read the one
    scheduled row, so the total counts its completion twice."""
    one = _instance([{"id": "a", "release": 0, "model": "dp", "iterations": 10}])
    twice = DdlwmpInstance(one.cluster, one.models, (one.jobs[0], one.jobs[0]))
    ev = evaluate(twice, {"jobs": [_entry("a", 0.0, [[0, 0]])]})
    assert ev.feasible and ev.objectives["total_completion"] == pytest.approx(2 * 1.01)
    assert ev.metrics["jobs"] == 2


def test_the_arrival_check_names_each_field() -> None:
    """Every ddlwmp policy's arrival check (policies.ArrivalCheck), on a cluster of 2 servers of
    2 GPUs and the 2-GPU model dp: each bad job an InputError of problem ddlwmp naming the field,
    with its message; a job without a prediction, or a single-node job that fits a server,
    passes."""
    from optkit.formulations.ddlwmp.policies import ArrivalCheck, JobSpec

    models = {"dp": PipelineJob.from_dict(DP), "pipe": PipelineJob.from_dict(PIPE)}
    check = ArrivalCheck(models, total_gpus=4, gpus_per_server=2)
    cases = [
        ("x", "job", "must be a JobSpec, got str"),
        (JobSpec("a", 0.0, "dp", 0), "job.gpus", "job a: must be an integer >= 1, got 0"),
        (JobSpec("a", -1.0, "dp", 2), "job.release", "job a: must be a finite number >= 0, got -1.0"),
        (JobSpec("a", 0.0, "dp", 2, float("nan")), "job.predicted_iterations",
         "job a: must be a finite number >= 0, got nan"),
        (JobSpec("a", 0.0, "gpt", 2), "job.model", "job a: unknown model 'gpt' (known: dp, pipe)"),
        (JobSpec("a", 0.0, "dp", 3), "job.gpus", "job a asks for 3 GPUs but model 'dp' has 2 replicas (one GPU each)"),
        (JobSpec("a", 0.0, "dp", 2, tensor_parallel=2), "job.tensor_parallel",
         "job a: is 2 but model 'dp' has tensor_parallel 1"),
    ]
    for job, field, message in cases:
        with pytest.raises(InputError) as info:
            check(job)  # type: ignore[arg-type]
        assert (info.value.field, info.value.problem) == (field, "ddlwmp") and str(info.value).endswith(message)
    check(JobSpec("a", 0.0, "dp", 2))
    check(JobSpec("b", 0.0, "dp", 2, single_node=True))
    with pytest.raises(InputError) as info:
        check(JobSpec("a", 1.0, "dp", 2))
    assert info.value.field == "job.id" and str(info.value).endswith("job a arrived twice")
    small = ArrivalCheck(models, total_gpus=1, gpus_per_server=1)
    with pytest.raises(InputError) as info:
        small(JobSpec("c", 0.0, "dp", 2))
    assert info.value.field == "job.gpus" and str(info.value).endswith(
        "job c needs 2 GPUs but the cluster has 1: it could never start")
    one_each = ArrivalCheck(models, total_gpus=4, gpus_per_server=1)
    with pytest.raises(InputError) as info:
        one_each(JobSpec("d", 0.0, "dp", 2, single_node=True))
    assert (info.value.field, info.value.problem) == ("job.single_node", "ddlwmp") and str(info.value).endswith(
        "job d needs 2 GPUs on one server but a server has 1: it could never start")


def test_server_selection_by_hand() -> None:
    """Most-free: servers by free GPUs descending (ties: lower index), all of each, the rest from
    the last: free (1, 3, 0, 3), 5 GPUs -> 3 from server 1, 2 from server 3. Least-free: the
    fullest server that fits alone (free (3, 1, 2, 4), 2 GPUs -> server 2); else the servers with
    free GPUs in ascending order: (1, 0, 1, 1), 3 GPUs -> servers 0, 2, 3. More than is free is a
    ValueError naming both numbers."""
    from optkit.formulations.ddlwmp.placement import least_free_servers, most_free_servers

    def pick(f: Any, free: list[int], need: int) -> tuple[list[int], list[int]]:
        servers, counts = f(np.array(free, dtype=np.int64), need)
        return servers.tolist(), counts.tolist()

    assert pick(most_free_servers, [1, 3, 0, 3], 5) == ([1, 3], [3, 2])
    assert pick(most_free_servers, [1, 2], 3) == ([1, 0], [2, 1])
    assert pick(least_free_servers, [3, 1, 2, 4], 2) == ([2], [2])
    assert pick(least_free_servers, [1, 0, 1, 1], 3) == ([0, 2, 3], [1, 1, 1])
    with pytest.raises(ValueError, match="4 GPUs requested but only 3 are free"):
        most_free_servers(np.array([1, 2], dtype=np.int64), 4)


def test_alpha_min_of_a_workload_names_a_bad_model() -> None:
    from optkit.formulations.ddlwmp.catalog import AlphaMin

    alpha = AlphaMin({"ok": DP, "bad": {"allreduce": "ring", "stages": [dict(DP["stages"][0], fwd_time=-1)]}},
                     Cluster(2, 1e9, 1e11))
    assert alpha("ok") == pytest.approx(0.101) and alpha.cache == {"ok": pytest.approx(0.101)}
    with pytest.raises(InputError) as info:
        alpha("bad")
    assert info.value.field == "models.bad.stages[0].fwd_time"


def test_demand_queue_heads_follow_the_one_order_across_heaps() -> None:
    """One order over the heaps of plain, single-node and tensor-parallel jobs: equal keys are
    decided by the push counter (the order's last element), wherever the jobs sit; a later
    tensor-parallel job does not pass an earlier plain one; a job that does not fit is passed
    over (free GPUs (1, 1): the 2-GPU single-node job waits, the 1-GPU job goes)."""
    from optkit.formulations.ddlwmp.policies import ClusterState, DemandQueue, JobSpec

    q = DemandQueue()
    q.push((1.0, 0), JobSpec("single", 0.0, "dp", 2, single_node=True))
    q.push((1.0, 1), JobSpec("plain", 0.0, "dp", 1))
    q.push((0.5, 2), JobSpec("tp-later", 0.0, "tp", 4, tensor_parallel=2))
    assert len(q) == 3
    assert q.head().id == "tp-later"  # type: ignore[union-attr]
    state = ClusterState(np.array([1, 1], dtype=np.int64), 2)
    assert q.head(state).id == "plain"  # type: ignore[union-attr]
    assert q.head(pop=True).id == "tp-later" and len(q) == 2  # type: ignore[union-attr]
    assert q.head().id == "single"  # type: ignore[union-attr]
    late = DemandQueue()
    late.push((1.0, 0), JobSpec("plain", 0.0, "dp", 1))
    late.push((2.0, 1), JobSpec("tp", 0.0, "tp", 4, tensor_parallel=2))
    assert late.head().id == "plain"  # type: ignore[union-attr]
    assert late.head(ClusterState(np.array([0, 0], dtype=np.int64), 2)) is None
