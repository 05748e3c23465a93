"""The instance sampler of the property tests (formulations/gpu_mapping/sample.py) driven by
deterministic draws: every draw at its lower bound is the simplest instance (its docstring),
every draw at its upper bound the largest choices, and a draw of 1 splits replicas evenly."""

from __future__ import annotations

from typing import Any

import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping.model import GpuMappingInstance
from optkit.formulations.gpu_mapping.sample import BYTES, sample, sample_llm, split, stages
from optkit.validation import MAX_COUNT


def low(lo: int, hi: int) -> int:
    return lo


def high(lo: int, hi: int) -> int:
    return hi


def one(lo: int, hi: int) -> int:
    return min(max(1, lo), hi)


def test_every_draw_at_its_lower_bound_is_the_simplest_instance() -> None:
    stage = {"replicas": 1, "fwd_time": 0.005, "bwd_time": 0.005, "in_bytes": 0.0, "out_bytes": 0.0, "param_bytes": 0.0}
    want = {"problem": "gpu-mapping", "cluster": {"gpus_per_server": 1, "inter_bandwidth": 1.25e9,
                                                  "intra_bandwidth": 3e11},
            "job": {"allreduce": "ring", "stages": [stage]}, "servers": [1]}
    assert sample(low) == want
    assert sample(low, max_tensor_parallel=4, max_experts=4) == want  # sample_llm shrinks to the same


def test_every_draw_at_its_upper_bound_takes_the_largest_choices() -> None:
    d = sample(high, max_replicas=6, max_stages=2, max_servers=2, max_gpus_per_server=3)
    inst = GpuMappingInstance.from_dict(d)
    assert d["cluster"] == {"gpus_per_server": 3, "inter_bandwidth": 1.25e10, "intra_bandwidth": 3e10}
    assert d["job"]["allreduce"] == "tree" and sum(d["servers"]) == inst.job.n_replicas
    for st in d["job"]["stages"]:
        assert st["fwd_time"] == pytest.approx(0.1) and st["bwd_time"] == pytest.approx(0.3)
        assert st["param_bytes"] == BYTES[-1]
    assert d["job"]["stages"][0]["out_bytes"] == BYTES[-1]


def test_stages_balance_the_bytes_between_neighbours() -> None:
    out = stages(high, [2, 3, 1])
    assert [s["in_bytes"] for s in out] == [0.0, pytest.approx(2 * BYTES[-1] / 3), pytest.approx(3 * BYTES[-1])]
    assert [s["out_bytes"] for s in out] == [BYTES[-1], BYTES[-1], 0.0]
    assert [s["bwd_time"] / s["fwd_time"] for s in stages(low, [1, 1])] == [1.0, 1.0]


def test_split_draws_every_part_but_the_last() -> None:
    assert split(one, 6, 3) == [2, 2, 2]
    assert split(low, 6, 3) == [1, 1, 4]
    assert split(high, 6, 3) == [4, 1, 1]
    assert split(one, 1, 1) == [1]


def test_moe_stage_at_its_simplest_and_at_its_largest() -> None:
    def moe_then_low(lo: int, hi: int) -> int:  # the kind draw (0..2) takes MoE, everything else its lower bound
        return 2 if (lo, hi) == (0, 2) else lo

    d = sample_llm(moe_then_low, max_gpus=4, max_stages=1, max_servers=2, max_gpus_per_server=2,
                   max_tensor_parallel=1, max_experts=4)
    (st,) = d["job"]["stages"]
    assert (st["replicas"], st["experts"], st["expert_bytes"]) == (1, 2, 0.0) and "routing" not in st
    assert d["servers"] == [1, 1]  # one GPU per server (the lower bound), a group on each
    GpuMappingInstance.from_dict(d)
    d = sample_llm(high, max_gpus=4, max_stages=1, max_servers=2, max_gpus_per_server=2, max_tensor_parallel=1,
                   max_experts=4)
    (st,) = d["job"]["stages"]
    assert (st["experts"], st["expert_bytes"], st["routing"], st["routing_skew"]) == (4, BYTES[-1], "zipf", 1.5)
    assert sum(d["servers"]) == 4 * st["replicas"]
    GpuMappingInstance.from_dict(d)


def test_tensor_parallel_replicas_keep_their_slices_on_one_server() -> None:
    d = sample_llm(high, max_gpus=8, max_stages=1, max_servers=3, max_gpus_per_server=4, max_tensor_parallel=2,
                   max_experts=1)
    (st,) = d["job"]["stages"]
    # kind 2 (MoE) is drawn but experts are capped at 1: a plain stage of as many replicas as fit
    assert "experts" not in st and "tensor_parallel" not in st
    assert sum(d["servers"]) == st["replicas"]

    def tp(lo: int, hi: int) -> int:
        return 1 if (lo, hi) == (0, 2) else hi

    d = sample_llm(tp, max_gpus=8, max_stages=1, max_servers=3, max_gpus_per_server=3, max_tensor_parallel=2,
                   max_experts=1)
    (st,) = d["job"]["stages"]
    assert (st["tensor_parallel"], st["tp_bytes"]) == (2, BYTES[-1])
    assert all(c % 2 == 0 for c in d["servers"]) and sum(d["servers"]) == 2 * st["replicas"]
    GpuMappingInstance.from_dict(d)


@pytest.mark.parametrize("limit", ["max_replicas", "max_stages", "max_servers", "max_gpus_per_server",
                                   "max_tensor_parallel", "max_experts"])
@pytest.mark.parametrize("value", [0, MAX_COUNT + 1])
def test_a_limit_out_of_range_is_named(limit: str, value: int) -> None:
    kw: dict[str, Any] = {limit: value}
    with pytest.raises(InputError) as err:
        sample(low, **kw)
    assert err.value.field == limit
