"""The seeded tensor-parallel / MoE generator and its ``llm-small`` suite
(formulations/gpu_mapping/llm_generate.py) against its docstring: 12 jobs named by kind and seed,
each with a stage of its kind, at most 8 GPUs on servers of 4, backward twice forward, and the
arguments checked by name."""

from __future__ import annotations

import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping.llm_generate import SUITES, llm_instance
from optkit.formulations.gpu_mapping.model import GpuMappingInstance


def test_llm_small_is_four_seeds_of_each_kind() -> None:
    built = SUITES["llm-small"].build()
    assert [name for name, _ in built] == [f"llm-{k}-s{s}" for k in ("tp", "moe", "mixed") for s in range(4)]
    for name, d in built:
        kind = name.split("-")[1]
        inst = GpuMappingInstance.from_dict(d)
        stages = d["job"]["stages"]
        assert d["cluster"] == {"gpus_per_server": 4, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11}
        assert sum(d["servers"]) == inst.job.n_replicas <= 8 and len(stages) <= 3
        assert all(st["bwd_time"] == 2 * st["fwd_time"] for st in stages)
        tp = any("tensor_parallel" in st for st in stages)
        moe = any("experts" in st for st in stages)
        assert (tp, moe) != (False, False)
        if kind == "tp":
            assert not moe and all(st.get("tensor_parallel", 2) == 2 for st in stages)
        if kind == "moe":
            assert not tp and all(st.get("experts", 2) in (2, 3) for st in stages)
        for st in stages:
            if "routing" in st:
                assert (st["routing"], st["routing_skew"]) == ("zipf", 1.0)


def test_routing_is_drawn_both_ways_over_the_moe_seeds() -> None:
    routings = {st.get("routing", "uniform") for s in range(12)
                for st in llm_instance(s, kind="moe")["job"]["stages"] if "experts" in st}
    assert routings == {"uniform", "zipf"}


def test_the_smallest_job_allowed_fits_two_gpus() -> None:
    d = llm_instance(0, kind="tp", max_gpus=2)
    assert GpuMappingInstance.from_dict(d).job.n_replicas == 2 == sum(d["servers"])
    assert d == llm_instance(0, kind="tp", max_gpus=2)  # same seed, same dict
    assert llm_instance(0, kind="tp", allreduce="tree")["job"]["allreduce"] == "tree"


@pytest.mark.parametrize("kw, field", [({"seed": -1}, "seed"), ({"seed": 0, "max_gpus": 1}, "max_gpus"),
                                       ({"seed": 0, "max_gpus": 65}, "max_gpus"),
                                       ({"seed": 0, "gpus_per_server": 1}, "gpus_per_server"),
                                       ({"seed": 0, "kind": "dense"}, "kind")])
def test_bad_arguments_are_named(kw: dict, field: str) -> None:
    with pytest.raises(InputError) as err:
        llm_instance(**kw)
    assert err.value.field == field
