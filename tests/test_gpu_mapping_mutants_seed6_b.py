"""Facts of the gpu-mapping package that no test checked before (formulations/gpu_mapping/:
sample.py, llm_generate.py, model.py, refine.py, baselines.py), each derived by hand from the
docstrings and the module's own rules: input limits and their messages, a job's round trip,
the random co-located draw's retries, METIS's pre-repair cut and the KL passes on two servers."""

from __future__ import annotations

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping.baselines import RANDOM_TRIES, metis_mapping, random_mapping
from optkit.formulations.gpu_mapping.llm_generate import llm_instance
from optkit.formulations.gpu_mapping.model import Cluster, GpuMappingInstance, PipelineJob, Stage, stage_times
from optkit.formulations.gpu_mapping.refine import alpha_kl, refine_mapping
from optkit.formulations.gpu_mapping.sample import sample


def _lowest(lo: int, hi: int) -> int:
    return lo


def _highest(lo: int, hi: int) -> int:
    return hi


def test_sample_accepts_a_single_replica() -> None:
    """``max_replicas`` must be at least 1 (the docstring: "a limit below 1 ... is an
    InputError"), so 1 is allowed: every draw at its lower end gives one replica on one GPU."""
    d = sample(_lowest, max_replicas=1)
    assert d["servers"] == [1]
    assert [s["replicas"] for s in d["job"]["stages"]] == [1]
    with pytest.raises(InputError) as exc:
        sample(_lowest, max_replicas=0)
    assert exc.value.field == "max_replicas"


def test_sample_llm_never_opens_more_than_max_servers() -> None:
    """With every draw at its upper end, one server of 4 GPUs and MoE stages of 2 expert groups:
    g = 4, one stage, kind 2 (MoE), e = 2, want = 4 // 2 = 2 replicas. The first group opens the
    only server (no server open yet: the one choice is "open"); the other three groups find
    server 0 with room and no server left to open, so they must join it: servers == [4]."""
    d = sample(_highest, max_replicas=4, max_stages=1, max_servers=1, max_gpus_per_server=4, max_experts=2)
    assert d["servers"] == [4]
    (st,) = d["job"]["stages"]
    assert st["replicas"] == 2 and st["experts"] == 2


def test_llm_instance_refuses_more_than_64_gpus_per_server() -> None:
    """``gpus_per_server`` is checked to lie in 2..64 (llm_generate.llm_instance): 65 is an
    InputError naming the field, 64 is accepted."""
    with pytest.raises(InputError) as exc:
        llm_instance(0, gpus_per_server=65)
    assert exc.value.field == "gpus_per_server"
    assert llm_instance(0, gpus_per_server=64)["cluster"]["gpus_per_server"] == 64


def test_last_stage_out_bytes_message_quotes_the_last_stage() -> None:
    """A last stage that sends bytes is refused (it has no next stage); the message quotes that
    stage's value (7.0), not the first stage's legitimate 5.0."""
    with pytest.raises(InputError) as exc:
        PipelineJob((Stage(1, 1.0, 1.0, 0.0, 5.0, 1.0), Stage(1, 1.0, 1.0, 5.0, 7.0, 1.0)), "ring")
    assert exc.value.field == "job.stages[1].out_bytes"
    assert exc.value.message == "must be 0 for the last stage, got 7.0"


def test_cluster_refuses_servers_without_gpus() -> None:
    """A server holds at least one GPU: ``gpus_per_server`` 0 is an InputError naming the field."""
    with pytest.raises(InputError) as exc:
        Cluster.from_dict({"gpus_per_server": 0, "inter_bandwidth": 1e9, "intra_bandwidth": 1e10})
    assert exc.value.field == "cluster.gpus_per_server"


def test_job_to_dict_keeps_an_overlapped_tp_reading() -> None:
    """``tp_allreduce_time`` other than the default "added" is written back as it was given,
    so the job survives a round trip through its dict."""
    d = {"allreduce": "ring", "tp_allreduce_time": "overlapped",
         "stages": [{"replicas": 1, "fwd_time": 1.0, "bwd_time": 1.0, "in_bytes": 0.0, "out_bytes": 0.0,
                     "param_bytes": 1.0}]}
    job = PipelineJob.from_dict(d)
    out = job.to_dict()
    assert out["tp_allreduce_time"] == "overlapped"
    assert PipelineJob.from_dict(out) == job


def _two_stage_instance() -> GpuMappingInstance:
    return GpuMappingInstance.from_dict({
        "cluster": {"gpus_per_server": 2, "inter_bandwidth": 1e9, "intra_bandwidth": 1e11},
        "job": {"allreduce": "ring", "stages": [
            {"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0, "out_bytes": 1e3, "param_bytes": 1e9},
            {"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 1e3, "out_bytes": 0.0, "param_bytes": 1e9}]},
        "servers": [2, 2]})


def test_refine_mapping_time_limit_error_names_the_problem() -> None:
    """A zero time limit is refused at the entry with the problem's name as prefix, as every
    gpu-mapping input error is (optkit.errors.InputError's ``problem``)."""
    with pytest.raises(InputError) as exc:
        refine_mapping(_two_stage_instance(), time_limit=0)
    assert exc.value.field == "time_limit" and exc.value.problem == "gpu-mapping"
    assert str(exc.value).startswith("gpu-mapping: ")


def test_alpha_kl_gathers_the_stages_on_two_servers() -> None:
    """Two stages of two replicas with 1 GB of parameters each and 1 kB activations, on two
    servers of two GPUs. Split stages ([0, 1, 0, 1]) all-reduce 1 GB over the 1 GB/s NIC; a
    stage on one server all-reduces over the 100 GB/s link, 100 times faster, and the 2 kB it
    then sends across is negligible. The one count swap from the split start reaches the
    gathered counts, strictly better on alpha, so KL on these two servers moves and ends there."""
    inst = _two_stage_instance()
    job, cluster = inst.job, inst.cluster
    split = np.array([0, 1, 0, 1])
    sv, info = alpha_kl(job, cluster, split, 2)
    x = np.zeros((2, 2), dtype=np.int64)
    np.add.at(x, (job.vertex_stage, sv), 1)
    assert sorted(x.tolist()) == [[0, 2], [2, 0]]
    assert info["moves"] >= 1
    x0 = np.array([[1, 1], [1, 1]])
    assert float(np.nanmax(stage_times(job, cluster, x))) < float(np.nanmax(stage_times(job, cluster, x0)))


def test_metis_mapping_reports_the_cut_before_repair() -> None:
    """``cut_before_repair`` is the cut (bytes) of METIS's partition before the size repair: two
    stages of two replicas on two servers of two GPUs split evenly, so METIS's balanced
    partition needs no repair and the cut before it is the reported cut."""
    job = PipelineJob((Stage(2, 1, 1, 0, 1e6, 1e7), Stage(2, 1, 1, 1e6, 0, 1e7)), "ring")
    _, info = metis_mapping(job, [2, 2], seed=0)
    before = info["cut_before_repair"]
    assert info["moved_vertices"] == 0
    assert isinstance(before, float) and before == info["cut"] > 0


def test_random_mapping_retries_after_a_draw_that_leaves_a_group_without_room() -> None:
    """A replica of 3 slices and one of 2 on servers of 3 and 2 free GPUs: the only co-located
    mapping puts the 3 slices on server 0 and the 2 on server 1. A draw that places the 2-slice
    group first picks server 0 half the time, leaving no server with 3 GPUs for the other group;
    the function then draws again (up to RANDOM_TRIES times, all failing with probability
    4^-100), so every seed returns that mapping, including seeds whose first draw fails."""
    job = PipelineJob((Stage(1, 1, 1, 0, 0, 1e6, tensor_parallel=3, tp_bytes=1e6),
                       Stage(1, 1, 1, 0, 0, 1e6, tensor_parallel=2, tp_bytes=1e6)), "ring")
    assert RANDOM_TRIES == 100
    for seed in range(12):
        a = random_mapping(job, [3, 2], seed=seed)
        assert a is not None
        assert sorted(a[0]) == [0, 0, 0] and sorted(a[1]) == [1, 1]


def test_milp_pair_cap_counts_whole_replicas_of_the_previous_stage() -> None:
    """The cut MILP's ``q[s, m, v] <= min(k_{s-1}, floor((c_m - t_s v) / t_{s-1})) z[s, m, v]``
    (exact.py's module docstring): beside v replicas of stage s, server m holds only whole
    replicas of stage s-1, each t_{s-1} GPUs. Stage 0: 2 replicas of 2 slices, stage 1: one plain
    replica, servers of 4 and 1 GPUs: with v = 1 on server 0, floor((4 - 1) / 2) = 1 replica of
    stage 0 fits (not 1.5), so the row reads q[1,0,1] - 1 * z[1,0,1] <= 0."""
    from pyomo.repn import generate_standard_repn

    from optkit.formulations.gpu_mapping.exact import build_pyomo_model

    inst = GpuMappingInstance.from_dict({
        "cluster": {"gpus_per_server": 4, "inter_bandwidth": 1e9, "intra_bandwidth": 1e11},
        "job": {"allreduce": "ring", "stages": [
            {"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0, "out_bytes": 1e6,
             "param_bytes": 1e6, "tensor_parallel": 2, "tp_bytes": 1e6},
            {"replicas": 1, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 2e6, "out_bytes": 0.0,
             "param_bytes": 1e6}]},
        "servers": [4, 1]})
    row = build_pyomo_model(inst, "cut").model.q_cap[1, 0, 1]
    repn = generate_standard_repn(row.body)
    coefs = {v.name: c for v, c in zip(repn.linear_vars, repn.linear_coefs)}
    assert coefs == {"q[1,0,1]": 1, "z[1,0,1]": -1}
    assert row.upper == 0 and row.lower is None


def test_exact_result_cut_short_returns_the_warm_start_named_as_such() -> None:
    """A solve stopped by its time limit before any solution returns the Heavy-Edge warm start
    with ``info["incumbent"] = "heavy-edge warm start"`` (exact.py's module docstring), the
    status ``time_limit`` and the solver's bound."""
    from types import SimpleNamespace

    from optkit.formulations.gpu_mapping.exact import _result
    from optkit.result import Status

    warm = [[0, 1]]
    res = _result(SimpleNamespace(status=Status.TIME_LIMIT, solver_status="time limit"), None, warm, 2.5,
                  {}, "cpsat")
    assert res.status == Status.TIME_LIMIT and res.solution == {"assignment": warm}
    assert res.info["incumbent"] == "heavy-edge warm start"
    assert res.bound == 2.5


def test_kahip_dummy_bonus_only_breaks_ties(monkeypatch: pytest.MonkeyPatch) -> None:
    """When KaHIP splits the dummies one per part but the part sizes miss the capacities, the
    parts are matched to servers keeping the most vertices in place, the dummy a tie-breaker
    worth 1/(k+1) < 1 in total (baselines.match_parts_to_servers). KaHIP's answer is replaced by
    a fixed one: parts of 1 and 3 real vertices, server 0's dummy (3 GPUs) in part 0, server 1's
    (1 GPU) in part 1. Following the dummies keeps min(1, 3) + min(3, 1) = 2 vertices; the swap
    keeps min(1, 1) + min(3, 3) = 4, which 2 + 2/3 of bonus cannot outweigh: the swap is taken
    and no vertex moves in the repair."""
    import kahip

    job = PipelineJob((Stage(2, 1, 1, 0, 1e6, 1e7), Stage(2, 1, 1, 1e6, 0, 1e7)), "ring")
    monkeypatch.setattr(kahip, "kaffpa", lambda *args: (1, [0, 1, 1, 1, 0, 1]))
    from optkit.formulations.gpu_mapping.baselines import kahip_mapping

    assignment, info = kahip_mapping(job, [3, 1], seed=0)
    assert info["dummies_ok"] is False and info["part_sizes"] == [1, 3]
    assert info["moved_vertices"] == 0
    assert assignment == [[1, 0], [0, 0]]


def test_kahip_dummy_bonus_only_breaks_ties_when_dummies_share_a_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """As above, with two dummies in one part (servers of 2, 1, 1 GPUs; real parts of sizes
    1, 2, 1; server 0's dummy in part 2, servers 1's and 2's in part 0). Putting part 1 (2
    vertices) on server 0 keeps all 4 vertices in place (bonus 1/4, part 0 holding a dummy of
    whichever of servers 1, 2 it gets); following server 0's dummy keeps 3 (bonus 2/4). 4 + 1/4
    > 3 + 2/4: part 1 goes to server 0 and the repair moves nothing."""
    import kahip

    job = PipelineJob((Stage(2, 1, 1, 0, 1e6, 1e7), Stage(2, 1, 1, 1e6, 0, 1e7)), "ring")
    monkeypatch.setattr(kahip, "kaffpa", lambda *args: (1, [0, 1, 1, 2, 2, 0, 0]))
    from optkit.formulations.gpu_mapping.baselines import kahip_mapping

    assignment, info = kahip_mapping(job, [2, 1, 1], seed=0)
    assert info["dummies_ok"] is False and info["part_sizes"] == [1, 2, 1]
    assert info["moved_vertices"] == 0
    assert assignment[0][1] == assignment[1][0] == 0  # part 1: vertices 1 and 2
    assert sorted([assignment[0][0], assignment[1][1]]) == [1, 2]


def test_gap_row_names_the_case_by_its_name_field() -> None:
    """A gap-table row names its case by the instance's ``name`` field and counts its GPUs as
    the sum of ``servers`` (2 + 2); the two-stage case has an optimum CP-SAT proves at once, so
    the gap of Heavy-Edge's alpha to it is finite."""
    from optkit.formulations.gpu_mapping.llm_claims import gap_row

    data = {"name": "two-by-two", **_two_stage_instance().to_dict()}
    row = gap_row(data, 5.0, 0)
    assert row["job"] == "two-by-two" and row["gpus"] == 4 and row["servers"] == [2, 2]
    assert row["cpsat_status"] == "optimal" and row["gap_pct"] is not None


def test_milp_construction_past_its_deadline_names_the_stage() -> None:
    """Model construction checks the deadline of the enclosing block (optkit.deadline.within's
    docstring: outside an exact solve it raises DeadlineReached once passed). With a clock that
    jumps 2 s past the start of a 1 s block, the first check while the MILP is built raises, and
    the message names the limit and the stage being built."""
    from optkit.deadline import DeadlineReached, within
    from optkit.formulations.gpu_mapping.exact import build_pyomo_model

    readings = iter([0.0])
    with within(1.0, clock=lambda: next(readings, 2.0)):
        with pytest.raises(DeadlineReached) as exc:
            build_pyomo_model(_two_stage_instance(), "cut")
    assert str(exc.value) == "time limit of 1 s reached while building the MILP"


def test_vertex_alpha_descent_takes_the_first_of_two_tied_swaps() -> None:
    """Two stages of two replicas (tree all-reduce; stage 0 holds 1 GB of parameters, stage 1
    1 MB) on servers of 3 and 1 free GPUs, starting from [1, 0, 0, 0]: stage 0 is split over the
    1 GB/s NIC. Swapping vertex 0 with vertex 2 or with vertex 3 (both stage-1 replicas on
    server 0) gathers stage 0 on server 0; the two swaps are mirror images, so their beta
    vectors are equal (checked) and strictly better than the start. The descent scans the pairs
    (a, b), a < b, in index order and replaces its best only on a strictly better key, so of
    the tie it takes the first pair, (0, 2), and then stops (every later swap splits stage 0
    again or trades two equal vertices)."""
    from optkit.formulations.gpu_mapping.model import vertex_times
    from optkit.formulations.gpu_mapping.refine import vertex_alpha_descent

    inst = GpuMappingInstance.from_dict({
        "cluster": {"gpus_per_server": 3, "inter_bandwidth": 1e9, "intra_bandwidth": 1e11},
        "job": {"allreduce": "tree", "stages": [
            {"replicas": 2, "fwd_time": 0.02, "bwd_time": 0.02, "in_bytes": 0.0, "out_bytes": 5e8, "param_bytes": 1e9},
            {"replicas": 2, "fwd_time": 0.02, "bwd_time": 0.02, "in_bytes": 5e8, "out_bytes": 0.0, "param_bytes": 1e6}]},
        "servers": [3, 1]})
    job, cluster = inst.job, inst.cluster
    start = np.array([1, 0, 0, 0])
    via2, via3 = np.array([0, 0, 1, 0]), np.array([0, 0, 0, 1])
    b2, b3 = vertex_times(job, cluster, via2), vertex_times(job, cluster, via3)
    assert sorted(b2.tolist()) == sorted(b3.tolist())
    assert b2.max() < vertex_times(job, cluster, start).max()
    sv, moves = vertex_alpha_descent(job, cluster, start, [])
    assert sv.tolist() == via2.tolist() and moves == 1
