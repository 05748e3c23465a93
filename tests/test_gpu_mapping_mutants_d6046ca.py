"""gpu-mapping facts that surviving mutants of the seed-0 sample at d6046ca broke (issue 36 item 5),
each confirmed by applying the survivor's edit and running this file: the fields and messages of the
exact solvers', the generator's and the job format's refusals."""

from __future__ import annotations

from typing import Any

import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping import evaluate, exact
from optkit.formulations.gpu_mapping.generate import generate
from optkit.formulations.gpu_mapping.model import GpuMappingInstance, PipelineJob


def _refused(call: Any) -> InputError:
    with pytest.raises(InputError) as info:
        call()
    return info.value


def _stage(**kw: Any) -> dict[str, Any]:
    return {"replicas": 1, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0.0, "out_bytes": 0.0, "param_bytes": 1e6, **kw}


def _instance(stages: list[dict[str, Any]], servers: list[int], g: int = 4) -> GpuMappingInstance:
    return GpuMappingInstance.from_dict({"problem": "gpu-mapping", "cluster": {
        "gpus_per_server": g, "inter_bandwidth": 1e9, "intra_bandwidth": 1e11},
        "job": {"allreduce": "ring", "stages": stages}, "servers": servers})


def test_exact_refusals_name_their_field() -> None:
    inst = _instance([_stage(replicas=2)], [1, 1])
    assert _refused(lambda: exact.run_brute_force(inst, objective="makespan")).field == "objective"
    big = _instance([_stage(replicas=4)] * 6, [4] * 6)
    err = _refused(lambda: exact.naive_enumeration(big, "cut"))
    assert err.field == "instance" and "too large for the naive enumeration" in err.message


def test_brute_force_says_why_a_tensor_parallel_job_has_no_mapping() -> None:
    """Two replicas of 2 slices on servers of 1 and 3 free GPUs: no server set keeps both whole."""
    inst = _instance([_stage(replicas=2, tensor_parallel=2, tp_bytes=1e7)], [1, 3])
    err = _refused(lambda: exact.brute_force(inst, "cut"))
    assert err.field == "instance" and err.message.endswith("keeps every replica's tensor slices on one server")


def test_generate_names_an_unknown_model() -> None:
    assert _refused(lambda: generate(model="alexnet")).field == "model"


def test_job_format_refusals_say_why() -> None:
    err = _refused(lambda: PipelineJob.from_dict({"allreduce": "ring", "stages": [_stage(in_bytes=5.0)]}))
    assert err.field == "job.stages[0].in_bytes" and err.message == "must be 0 for the first stage, got 5.0"
    err = _refused(lambda: PipelineJob.from_dict({"allreduce": "star", "stages": [_stage()]}))
    assert err.field == "job.allreduce" and "must be 'ring' or 'tree', got 'star'" in err.message
    err = _refused(lambda: PipelineJob.from_dict({"allreduce": "ring", "stages": {"0": _stage()}}))
    assert err.field == "job.stages" and "non-empty list" in err.message
    two = [_stage(replicas=2, out_bytes=1e6), _stage(replicas=1, in_bytes=1e6)]
    err = _refused(lambda: PipelineJob.from_dict({"allreduce": "ring", "stages": two}))
    assert "replicas[0]*out_bytes[0] = replicas[1]*in_bytes[1]" in err.message


def test_a_wrong_assignment_length_names_what_a_row_lists() -> None:
    """A plain job's row lists replicas; a tensor-parallel job's its slices, with 'k replicas x t'."""
    plain = _instance([_stage(replicas=2)], [1, 1])
    v = evaluate(plain, {"assignment": [[0]]})
    assert not v.feasible and v.violations[0] == "assignment[0] must list one server for each of the 2 replicas"
    tp = _instance([_stage(replicas=2, tensor_parallel=2, tp_bytes=1e7)], [2, 2])
    v = evaluate(tp, {"assignment": [[0, 0]]})
    assert not v.feasible and v.violations[0] == ("assignment[0] must list one server for each of the 4 tensor slices "
                                                  "(2 replicas x 2)")


def test_write_suite_makes_missing_parent_folders(tmp_path: Any) -> None:
    from optkit.formulations.gpu_mapping.generate import write_suite

    paths = write_suite("llm-small", tmp_path / "a" / "b")
    assert paths and all(p.parent == tmp_path / "a" / "b" and p.exists() for p in paths)


def test_alpha_max_of_a_tensor_parallel_job_is_each_replica_alone() -> None:
    """alpha^max (Sec. III-B) of a job with tensor-parallel stages: every replica (its t slices
    together) on a server of its own, i.e. alpha of the assignment [[0, 0, 1, 1]] for 2 replicas of t = 2."""
    from optkit.formulations.gpu_mapping.model import Cluster, alpha_max, alpha_of_assignment

    job = PipelineJob.from_dict({"allreduce": "ring", "stages": [_stage(replicas=2, tensor_parallel=2, tp_bytes=1e8)]})
    cl = Cluster(4, 1e9, 1e11)
    assert alpha_max(job, cl) == alpha_of_assignment(job, cl, [[0, 0, 1, 1]]) > alpha_of_assignment(job, cl, [[0, 0, 0, 0]])


def test_the_llm_size_class_is_its_seeded_draws() -> None:
    """check_algorithm's llm-small cases are llm_instance(seed, kind) for each (kind, seed) of SIZE_CLASS."""
    from optkit.formulations.gpu_mapping.llm_generate import SIZE_CLASS, llm_instance, size_class_cases

    cases = size_class_cases()
    assert [name for name, _ in cases] == [f"llm-{kind}-s{seed}" for kind, seed in SIZE_CLASS]
    assert [d for _, d in cases] == [llm_instance(seed, kind=kind) for kind, seed in SIZE_CLASS]


def test_llm_instances_draw_what_the_module_docstring_says() -> None:
    """llm_generate's docstring: tensor-parallel and MoE stages have 1-2 replicas, plain ones 1-3; times
    come from a short list (forward 5, 10, ..., 45 ms). Checked over 60 seeded jobs of each kind."""
    from optkit.formulations.gpu_mapping.llm_generate import llm_instance

    fwd = {round(0.005 * i, 9) for i in range(1, 10)}
    reps: dict[bool, set[int]] = {True: set(), False: set()}
    for kind in ("tp", "moe", "mixed"):
        for seed in range(60):
            for st in llm_instance(seed, kind=kind)["job"]["stages"]:
                reps["tensor_parallel" in st or "experts" in st].add(st["replicas"])
                assert round(st["fwd_time"], 9) in fwd, st["fwd_time"]
    assert reps == {True: {1, 2}, False: {1, 2, 3}}, reps
