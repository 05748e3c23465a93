"""nimp's instance sampler (formulations/nimp/sample.py, behind ``strategies.instances``): the
instances of the smallest and the largest integer draws and of a scripted sequence of draws,
worked by hand, each checked against the model's parser, and the limits' checks."""

from __future__ import annotations

from typing import Callable

import pytest

from optkit.errors import InputError
from optkit.formulations.nimp.model import MAX_MACHINES, NimpInstance
from optkit.formulations.nimp.sample import sample


def _smallest(lo: int, hi: int) -> int:
    return lo


def _largest(lo: int, hi: int) -> int:
    return hi


def _scripted(values: list[int], calls: list[tuple[int, int]]) -> Callable[[int, int], int]:
    """A draw that returns ``values`` in turn and records each (lo, hi) it was asked for."""
    it = iter(values)

    def draw(lo: int, hi: int) -> int:
        calls.append((lo, hi))
        v = next(it)
        assert lo <= v <= hi, (lo, hi, v)
        return v
    return draw


def test_smallest_draws_give_the_simplest_instance() -> None:
    """Every draw at its lower end: one idle 1-GPU machine, a 1-worker halving-doubling job of
    K = 1e8 B, a scalar pair capacity of twice K."""
    d = sample(_smallest)
    assert d == {"problem": "nimp", "machines": [{"gpus": 1, "idle_gpus": 1}], "pair_capacity_bytes": 2e8,
                 "job": {"workers": 1, "collective": "halving-doubling", "param_bytes": 1e8}}
    NimpInstance.from_dict(d)


def test_largest_draws_give_full_machines_but_the_first() -> None:
    """Every draw at its upper end (default limits: 6 machines of 4 GPUs, 8 workers): each machine
    has all its GPUs busy (4 - 4 idle), so the first is made idle (4 idle GPUs, the job's bound on
    workers: 4 of min(8, 4)); K = 4e8 B, a ring, and a matrix of pair capacities of K/8 = 5e7 B,
    zero on the diagonal."""
    d = sample(_largest)
    assert d["machines"] == [{"gpus": 4, "idle_gpus": 4}] + [{"gpus": 4, "idle_gpus": 0}] * 5
    assert d["job"] == {"workers": 4, "collective": "ring", "param_bytes": 4e8}
    assert d["pair_capacity_bytes"] == [[0.0 if a == b else 5e7 for b in range(6)] for a in range(6)]
    inst = NimpInstance.from_dict(d)
    assert len(inst.machines) == 6


def test_each_draw_has_the_documented_range() -> None:
    """A scripted sequence: the number of machines in [1, max_machines], per machine its GPUs in
    [1, max_gpus_per_machine] and its busy GPUs in [0, gpus], K/1e8 in [1, 4], the workers in
    [1, min(max_workers, idle GPUs)], the collective and the capacity kind in [0, 1], each pair's
    capacity K·(16 - d)/8 with d in [0, 15]."""
    calls: list[tuple[int, int]] = []
    d = sample(_scripted([2, 3, 1, 2, 2, 3, 2, 1, 1, 4], calls), max_machines=3, max_workers=5)
    assert calls == [(1, 3), (1, 4), (0, 3), (1, 4), (0, 2), (1, 4), (1, 2), (0, 1), (0, 1), (0, 15)]
    assert d["machines"] == [{"gpus": 3, "idle_gpus": 2}, {"gpus": 2, "idle_gpus": 0}]
    assert d["job"] == {"workers": 2, "collective": "ring", "param_bytes": 3e8}
    assert d["pair_capacity_bytes"] == [[0.0, 4.5e8], [4.5e8, 0.0]]  # 3e8·12/8
    NimpInstance.from_dict(d)


def test_a_named_capacity_kind_draws_no_kind() -> None:
    """``pair_capacity="scalar"`` draws no kind: after the collective comes the capacity's draw,
    K·(16 - 15)/8 at d = 15; ``"matrix"`` gives a matrix even where ``"any"`` would draw scalar."""
    calls: list[tuple[int, int]] = []
    d = sample(_scripted([1, 2, 0, 1, 2, 0, 15], calls), pair_capacity="scalar", max_gpus_per_machine=2)
    assert calls == [(1, 6), (1, 2), (0, 2), (1, 4), (1, 2), (0, 1), (0, 15)]
    assert d["machines"] == [{"gpus": 2, "idle_gpus": 2}] and d["pair_capacity_bytes"] == 1e8 * 1 / 8
    assert d["job"]["workers"] == 2 and d["job"]["collective"] == "halving-doubling"
    m = sample(_smallest, pair_capacity="matrix")
    assert m["pair_capacity_bytes"] == [[0.0]]
    NimpInstance.from_dict(m)


@pytest.mark.parametrize("name, value, words", [
    ("max_workers", 0, "must be >= 1"), ("max_workers", MAX_MACHINES + 1, "must be <="),
    ("max_machines", 0, "must be >= 1"), ("max_machines", MAX_MACHINES + 1, "must be <="),
    ("max_gpus_per_machine", 0, "must be >= 1"), ("max_gpus_per_machine", 1_000_001, "must be <="),
    ("max_gpus_per_machine", 2.5, "must be an integer"),
])
def test_a_limit_out_of_range_is_named(name: str, value: object, words: str) -> None:
    with pytest.raises(InputError) as err:
        sample(_smallest, **{name: value})
    assert err.value.field == name and words in str(err.value)


def test_an_unknown_capacity_kind_is_named() -> None:
    with pytest.raises(InputError) as err:
        sample(_smallest, pair_capacity="vector")
    assert err.value.field == "pair_capacity"
    assert str(err.value) == "pair_capacity must be one of any, scalar, matrix, got 'vector'"
