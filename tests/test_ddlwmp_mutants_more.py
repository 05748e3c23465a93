"""ddlwmp facts that surviving mutants of the seed-0 sample (run against the package's whole test
selection) broke: the A-SRPT-Perfect entry's time limit, refusals naming their field, the
recurring groups' split, the LLM variants' tensor-parallel degree and per-stage bytes, and the
readout's split share. Written for the mutation score (issue 36 item 5)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.ddlwmp import simulate as sim
from optkit.formulations.ddlwmp.algorithms import run_a_srpt_perfect
from optkit.formulations.ddlwmp.generate import from_trace, group_sizes
from optkit.formulations.ddlwmp.model import DdlwmpInstance
from optkit.formulations.ddlwmp.workloads import trace_workload
from optkit.result import Status
from tests.test_ddlwmp_mutants_sim import MODEL


def _named(call: Any) -> InputError:
    with pytest.raises(InputError) as info:
        call()
    return info.value


def _instance(gpus_per_server: int = 2, replicas: int = 2, servers: int = 1) -> DdlwmpInstance:
    model = {**MODEL, "stages": [dict(MODEL["stages"][0], replicas=replicas)]}
    return DdlwmpInstance.from_dict({"problem": "ddlwmp", "models": {"m": model}, "cluster": {
        "servers": servers, "gpus_per_server": gpus_per_server, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11},
        "jobs": [{"id": "a", "release": 0, "model": "m", "iterations": 10},
                 {"id": "b", "release": 1, "model": "m", "iterations": 10}]})


def test_a_srpt_perfect_keeps_its_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clock that advances 1 s per reading: A-SRPT-Perfect's limit of 0.5 s has passed at the
    first instant, so the entry returns ``time_limit`` without a schedule."""
    ticks = iter(range(1_000))
    monkeypatch.setattr(sim._time, "perf_counter", lambda: float(next(ticks)))
    res = run_a_srpt_perfect(_instance(), time_limit=0.5)
    assert res.status == Status.TIME_LIMIT and res.solution is None


def test_refusals_name_their_field() -> None:
    assert _named(lambda: from_trace([], servers=1, seed=-1)).field == "seed"
    e = _named(lambda: trace_workload([], jobs=1, servers=1, load=0))
    assert (e.field, e.message) == ("load", "must be a positive number, got 0")
    from optkit.formulations.ddlwmp.generate import tiny
    from optkit.formulations.ddlwmp.placement import Placer

    e = _named(lambda: tiny(0, jobs=7))
    assert (e.field, e.message) == ("jobs", "a tiny instance has at most 6 jobs, got 7")
    inst = _instance()
    e = _named(lambda: Placer("cluster", inst.models))  # type: ignore[arg-type]
    assert (e.field, e.problem) == ("cluster", "ddlwmp") and e.message == "must be a DdlwmpCluster, got str"
    e = _named(lambda: Placer(inst.cluster, inst.models, server_start="nowhere"))
    assert (e.field, e.problem) == ("server_start", "ddlwmp")


class _Draws:
    """A generator stand-in whose geometric draw is always 1 (every recurring group min_rec)."""

    def geometric(self, p: float) -> int:
        return 1

    def integers(self, lo: int, hi: int) -> int:
        return lo


def test_recurring_jobs_split_into_groups_of_min_rec() -> None:
    """9 recurring jobs, groups of at least 3, each draw giving 3: three groups of 3 (the last
    6 are not merged: 6 - 3 leaves a whole group of 3)."""
    assert group_sizes(9, 1.0, 3, _Draws()) == [3, 3, 3]  # type: ignore[arg-type]
    assert group_sizes(10, 1.0, 3, _Draws()) == [3, 3, 4]  # type: ignore[arg-type]


def test_one_off_groups_hold_one_to_four_jobs() -> None:
    """No recurring share, min_rec 5: 40 jobs in groups of 1 to min(4, 5 - 1) = 4 jobs, not all
    of one job."""
    sizes = group_sizes(40, 0.0, 5, np.random.default_rng(0))
    assert sum(sizes) == 40 and min(sizes) >= 1 and max(sizes) <= 4 and max(sizes) > 1


def test_llm_variant_takes_tensor_parallel_degree_two() -> None:
    """A 2-GPU tensor-parallel job on 8-GPU servers: gcd 2, so t = 2 (the only t >= 2)."""
    from optkit.formulations.ddlwmp.catalog import model_catalog
    from optkit.formulations.ddlwmp.llm_workloads import BASES, llm_variant

    bases = {k: v for k, v in model_catalog().items() if v[0] in BASES}
    got = llm_variant("tp", 2, 8, bases, np.random.default_rng(0), "ring", 0.0, {})
    assert got is not None and got[0].endswith("+tp2") and got[2] == 2
    assert all(st["tensor_parallel"] == 2 for st in got[1]["stages"])


def test_llm_profile_reads_the_unstated_batch_factor() -> None:
    """A model whose batch Table I leaves blank gets its batch times the factor (rounded); a
    model with a stated batch keeps it."""
    from optkit.formulations.ddlwmp.catalog import UNSTATED_BATCH
    from optkit.formulations.ddlwmp.llm_workloads import _profile
    from optkit.formulations.gpu_mapping.profiles import MODELS

    key = sorted(UNSTATED_BATCH)[0]
    assert _profile(key, 2.5).batch_size == max(1, round(MODELS[key].batch_size * 2.5)) != MODELS[key].batch_size
    stated = next(k for k in sorted(MODELS) if k not in UNSTATED_BATCH)
    assert _profile(stated, 2.5).batch_size == MODELS[stated].batch_size


def test_tp_bytes_count_each_stages_own_layers() -> None:
    """GPT-13B in 6 pipeline stages of 2 replicas, t = 2: each stage's tensor-parallel bytes
    count the layers of that stage (B/k of the batch per replica), so over the stages, times
    their replicas, they add up to the bytes of all the model's layers."""
    from optkit.formulations.ddlwmp import llm_workloads as lw
    from optkit.formulations.gpu_mapping.profiles import MODELS, TRANSFORMERS

    key = "gpt-13b"
    d = lw.tp_model_dict(f"{key}:pipe6x2", 2, "ring")
    prof = MODELS[key]
    per_layer = lw._TP_PER_LAYER * prof.batch_size * TRANSFORMERS[key]["tokens"] * TRANSFORMERS[key]["d"] * prof.act_bytes
    layers = sum(1 for u in prof.units if u.name.startswith("layer"))
    assert [st["replicas"] for st in d["stages"]] == [2] * 6
    assert sum(st["tp_bytes"] * st["replicas"] for st in d["stages"]) == pytest.approx(per_layer * layers, rel=1e-12)


def test_readout_split_share_counts_only_jobs_beyond_their_fewest_servers() -> None:
    """Two 6-GPU jobs on two 4-GPU servers run one after the other, each on both servers, the
    fewest that hold 6 GPUs (ceil(6 / 4) = 2): no job is split beyond that."""
    from optkit.formulations.ddlwmp import sec5
    from optkit.formulations.ddlwmp.readings import READINGS

    inst = _instance(gpus_per_server=4, replicas=6, servers=2)
    out = sec5.run_policy_readout(inst, "fifo", {x.name: x.default for x in READINGS}, 0)
    assert out["split_share"] == 0.0


def test_itp_records_are_read_from_the_given_root(tmp_path: Any) -> None:
    """``root`` names the traces folder: its microsoft-itp cluster files are read, merged by
    submission time, each record keeping its cluster."""
    from optkit.formulations.ddlwmp.workloads import trace_records

    (tmp_path / "microsoft-itp").mkdir()
    (tmp_path / "microsoft-itp" / "cluster07.csv").write_text(
        "job_id,submission_time,duration,num_gpu\nb,20,100,2\na,10,50,1\n")
    recs = trace_records("itp", root=tmp_path)
    assert [(r["job_id"], r["cluster"]) for r in recs] == [("a", "cluster07"), ("b", "cluster07")]


def test_suite_builders_ask_the_generators_for_their_instances(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Any) -> None:
    """The suites' builders without building (a paper-scale instance takes minutes): ``paper-sim``
    asks for each PAPER_SIM_JOBS count on 250 servers, share 0.8, seed 0, named by the count;
    ``ci`` for 500 jobs on 20 servers at shares 0.8, 0.5, 0 and seeds 0, 1; ``ci-trace`` for
    500 jobs on 20 servers of the ITP file cluster02 (none without it). Each entry is named by
    its instance's name."""
    import optkit.traces
    from optkit.formulations.ddlwmp import generate as gen

    calls: list[dict] = []

    def fake(*args: Any, **kw: Any) -> dict:
        calls.append({"args": args, **kw})
        return {"name": kw.get("name") or f"made-{len(calls)}"}

    monkeypatch.setattr(gen, "generate", fake)
    monkeypatch.setattr(gen, "from_trace", fake)
    assert gen._build_paper_sim() == [(f"paper-sim_n{n}", {"name": f"paper-sim_n{n}"}) for n in gen.PAPER_SIM_JOBS]
    assert calls == [{"args": (), "jobs": n, "servers": 250, "single_gpu_share": 0.8, "seed": 0,
                      "name": f"paper-sim_n{n}"} for n in gen.PAPER_SIM_JOBS]
    calls.clear()
    assert [n for n, _ in gen._build_ci()] == [f"made-{k}" for k in range(1, 7)]
    assert [(c["jobs"], c["servers"], c["single_gpu_share"], c["seed"]) for c in calls] == [
        (500, 20, share, s) for share in (0.8, 0.5, 0.0) for s in range(2)]
    calls.clear()
    files = [tmp_path / "cluster01.csv", tmp_path / "cluster02.csv"]
    monkeypatch.setattr(optkit.traces, "itp_files", lambda root=None: files)
    assert gen._build_ci_trace() == [("made-1", {"name": "made-1"})]
    assert calls == [{"args": (files[1],), "servers": 20, "jobs": 500, "seed": 0}]
    monkeypatch.setattr(optkit.traces, "itp_files", lambda root=None: files[:1])
    assert gen._build_ci_trace() == []


def test_two_gpu_groups_are_converted_too() -> None:
    """With tp_share 1 a distributed group of 2 GPUs (the smallest) becomes a 3D-parallel job of
    t = 2 on 8-GPU servers; a 1-GPU group stays as it is."""
    from optkit.formulations.ddlwmp.catalog import model_catalog
    from optkit.formulations.ddlwmp.llm_workloads import convert_groups

    catalog = dict(model_catalog())
    two = next(n for n, v in sorted(catalog.items()) if v[2] == 2)
    one = next(n for n, v in sorted(catalog.items()) if v[2] == 1)
    names = [two, one]
    out = convert_groups(names, catalog, tp_share=1.0, moe_share=0.0, routing_skew=0.0, gpus_per_server=8, seed=0,
                         allreduce="ring")
    assert names[1] == one and names[0] != two and names[0].endswith("+tp2")
    assert list(out) == [names[0]] and catalog[names[0]] == (names[0], "tp", 2)


def test_exact_time_limit_fallback_is_the_greedy_schedule() -> None:
    """Inside an exact solve, _offer_greedy registers the time-limit answer: the greedy warm
    start's schedule, measured for the run's objective by evaluate, with the run's info and the
    incumbent named."""
    from optkit.deadline import current, within
    from optkit.formulations.ddlwmp import exact
    from optkit.formulations.ddlwmp.generate import tiny
    from optkit.formulations.ddlwmp.model import evaluate

    inst = DdlwmpInstance.from_dict(tiny(0))
    opts = exact._job_options(inst)
    w = exact._windows(inst, opts, "total_completion")
    with within(60):
        exact._offer_greedy(inst, "total_completion", opts, w, {"k": 1})
        fallback = current().fallback
    res = fallback("cut")
    assert res.status == Status.TIME_LIMIT and res.info == {"k": 1, "incumbent": "greedy warm start"}
    assert res.objective == evaluate(inst, res.solution).objectives["total_completion"]
    assert res.objective_name == "total_completion" and res.message == "cut"


def test_load_profile_grows_past_its_first_64_slots() -> None:
    """A job placed at slots 100-104 grows the per-server load profile (doubling to 128 slots)
    and counts there: 3 of 4 GPUs of server 0 taken, so 2 more do not fit then, 1 does, and 2
    fit from slot 105."""
    from optkit.formulations.ddlwmp.exact import _Profile

    p = _Profile(2, 4)
    p.add([3, 1], 100, 5)
    assert p.load.shape == (2, 128)
    assert not p.fits([2, 0], 102, 1) and p.fits([1, 3], 102, 1) and p.fits([2, 0], 105, 1)
    assert p.earliest([2, 0], 101, 2) == 105


def test_a_cut_while_proving_a_split_names_that_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    """An option's best split too large to enumerate goes to gpu-mapping's CP-SAT; when that
    run ends unproven because the deadline passed (a clock 1 s per reading, limit 0.5 s), the
    deadline is reported as reached while proving each placement option's best split."""
    from optkit.deadline import DeadlineReached, within
    from optkit.formulations.ddlwmp import exact
    from optkit.result import Result

    def too_large(*args: Any, **kw: Any) -> Any:
        raise InputError("instance", "is too large for brute force")

    monkeypatch.setattr(exact.gm_exact, "brute_force", too_large)
    monkeypatch.setattr(exact.gm_exact, "run_cpsat", lambda *args, **kw: Result(Status.TIME_LIMIT))
    inst = _instance()
    ticks = iter(range(1_000))
    with pytest.raises(DeadlineReached) as cut:
        with within(0.5, clock=lambda: float(next(ticks))):
            exact._best_local_assignment(inst.models["m"], inst, (2,))
    assert cut.value.stage == "proving each placement option's best split"


def test_cluster_state_states_the_gpus_per_server() -> None:
    """The state a policy decides on (optkit.online's view of ddlwmp's cluster) gives the free
    GPUs per server, the GPUs per server and their total."""
    from optkit.formulations.ddlwmp.policies import ClusterState

    state = ClusterState(np.array([4, 2, 0]), 4)
    assert state.gpus_per_server == 4 and state.total_gpus == 12 and state.free.tolist() == [4, 2, 0]
