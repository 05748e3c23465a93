"""ddlwmp's instance sampler (formulations/ddlwmp/sample.py, behind ``strategies.instances``):
the instances of the smallest and the largest integer draws worked by hand, every draw's range
under the default and under other limits, the prediction's clamp at 0, and the limits' checks.
Written for the mutation score (issue 36 item 5): the module was reached by no selected test."""

from __future__ import annotations

from typing import Callable

import pytest

from optkit.errors import InputError
from optkit.formulations.ddlwmp.model import DdlwmpInstance
from optkit.formulations.ddlwmp.sample import sample
from optkit.validation import MAX_COUNT


def _recording(pick: Callable[[int, int], int]) -> tuple[Callable[[int, int], int], list[tuple[int, int]]]:
    """A draw that answers with ``pick(lo, hi)`` and records every ``(lo, hi)`` asked."""
    asked: list[tuple[int, int]] = []

    def draw(lo: int, hi: int) -> int:
        asked.append((lo, hi))
        return pick(lo, hi)

    return draw, asked


def _scripted(answers: list[int]) -> Callable[[int, int], int]:
    """A draw that answers ``answers`` in turn (each checked inside the range asked)."""
    left = list(answers)

    def draw(lo: int, hi: int) -> int:
        v = left.pop(0)
        assert lo <= v <= hi, (v, lo, hi)
        return v

    return draw


def test_smallest_draws_give_the_simplest_instance() -> None:
    """Every draw at its lower end: one server of one GPU, one ring model of one 1-replica stage
    (fwd = bwd = 0.005 s, no bytes), one job released at 0 running one iteration, predicted
    exactly (error 0); the first NIC (1.25e9 B/s). The ranges asked, in order: g in 1..min(8,
    max_gpus), servers in 1..min(max_servers, max_gpus // g), models, the model's GPUs in
    1..min(total, 4), its AllReduce, its stages, the stage's fwd, bwd factor and parameter bytes,
    jobs, iterations, prediction error, its sign, release, model, NIC."""
    draw, asked = _recording(lambda lo, hi: lo)
    d = sample(draw)
    assert d == {"problem": "ddlwmp",
                 "cluster": {"servers": 1, "gpus_per_server": 1, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11},
                 "models": {"m0": {"allreduce": "ring", "stages": [
                     {"replicas": 1, "fwd_time": 0.005, "bwd_time": 0.005, "in_bytes": 0.0, "out_bytes": 0.0,
                      "param_bytes": 0.0}]}},
                 "jobs": [{"id": "j0", "release": 0.0, "model": "m0", "iterations": 1, "predicted_iterations": 1.0}]}
    assert asked == [(1, 8), (1, 4), (1, 2), (1, 1), (0, 1), (1, 1), (1, 20), (1, 3), (0, 5), (1, 4), (1, 20),
                     (0, 20), (0, 1), (0, 10), (0, 0), (0, 1)]
    DdlwmpInstance.from_dict(d)


def test_largest_draws_hand_worked() -> None:
    """Every draw at its upper end under the default limits: g = 8, so one server (8 // 8); two
    tree models of 4 GPUs in two stages, split 3 + 1 (the first stage takes the whole extra 2);
    stage 0 sends 4e8 B per replica, so stage 1's one replica receives 3·4e8 = 1.2e9 B; fwd 0.1 s,
    bwd 3·0.1 s, parameters 4e8 B; four jobs of model m1 released at 10 s running 20 iterations,
    predicted 20 - 20 = 0; the second NIC (1.25e8 B/s)."""
    draw, asked = _recording(lambda lo, hi: hi)
    d = sample(draw)
    stage0 = {"replicas": 3, "fwd_time": 0.1, "bwd_time": 0.1 * 3, "in_bytes": 0.0, "out_bytes": 4e8,
              "param_bytes": 4e8}
    stage1 = {"replicas": 1, "fwd_time": 0.1, "bwd_time": 0.1 * 3, "in_bytes": 1.2e9, "out_bytes": 0.0,
              "param_bytes": 4e8}
    model = {"allreduce": "tree", "stages": [stage0, stage1]}
    assert d == {"problem": "ddlwmp",
                 "cluster": {"servers": 1, "gpus_per_server": 8, "inter_bandwidth": 1.25e8, "intra_bandwidth": 3e11},
                 "models": {"m0": model, "m1": model},
                 "jobs": [{"id": f"j{i}", "release": 10.0, "model": "m1", "iterations": 20,
                           "predicted_iterations": 0.0} for i in range(4)]}
    model_draws = [(1, 4), (0, 1), (1, 2), (0, 2), (1, 20), (0, 5), (1, 3), (0, 5), (1, 20), (1, 3), (0, 5)]
    job_draws = [(1, 20), (0, 20), (0, 1), (0, 10), (0, 1)]
    assert asked == [(1, 8), (1, 1), (1, 2), *model_draws, *model_draws, (1, 4), *job_draws * 4, (0, 1)]
    DdlwmpInstance.from_dict(d)


def test_largest_draws_under_other_limits() -> None:
    """``max_gpus`` 20: g = 8, two servers (20 // 8), 16 GPUs, yet a model takes at most 4; three
    stages split 2 + 1 + 1 (stage 1 receives 2·4e8 B, stage 2 4e8 B); one job of 5 iterations
    released at 0 (``max_release`` 0) on the one model."""
    draw, asked = _recording(lambda lo, hi: hi)
    d = sample(draw, max_gpus=20, max_jobs=1, max_models=1, max_stages=3, max_iterations=5, max_release=0)
    assert d["cluster"] == {"servers": 2, "gpus_per_server": 8, "inter_bandwidth": 1.25e8, "intra_bandwidth": 3e11}
    assert [s["replicas"] for s in d["models"]["m0"]["stages"]] == [2, 1, 1]
    assert [s["in_bytes"] for s in d["models"]["m0"]["stages"]] == [0.0, 8e8, 4e8]
    assert d["jobs"] == [{"id": "j0", "release": 0.0, "model": "m0", "iterations": 5, "predicted_iterations": 0.0}]
    stage = [(1, 20), (0, 5), (1, 3), (0, 5)]  # fwd, out_bytes, bwd factor, params
    assert asked == [(1, 8), (1, 2), (1, 1), (1, 4), (0, 1), (1, 3), (0, 1), (0, 0), *stage, *stage,
                     (1, 20), (1, 3), (0, 5), (1, 1), (1, 5), (0, 5), (0, 1), (0, 0), (0, 0), (0, 1)]
    draw, asked = _recording(lambda lo, hi: hi)
    small = sample(draw, max_gpus=3, max_servers=1)
    assert asked[:2] == [(1, 3), (1, 1)] and small["cluster"]["gpus_per_server"] == 3
    assert small["cluster"]["servers"] == 1


@pytest.mark.parametrize(("sign", "predicted"), [(0, 8.0), (1, 0.0)])
def test_prediction_is_off_by_the_drawn_error_and_never_negative(sign: int, predicted: float) -> None:
    """A 3-iteration job with a drawn error of 5: predicted 3 + 5 = 8 (sign 0) or max(0, 3 - 5)
    = 0 (sign 1); released at the drawn 7 s, on the drawn model m1."""
    # g, servers, models; m0: GPUs, allreduce, stages, fwd, bwd, params; m1 the same
    answers = [2, 2, 2, 1, 0, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0]
    answers += [1, 3, 5, sign, 7, 1, 0]  # jobs, iterations, error, sign, release, model; NIC
    d = sample(_scripted(answers))
    assert d["jobs"] == [{"id": "j0", "release": 7.0, "model": "m1", "iterations": 3,
                          "predicted_iterations": predicted}]
    assert d["cluster"]["servers"] == 2 and d["cluster"]["gpus_per_server"] == 2
    DdlwmpInstance.from_dict(d)


@pytest.mark.parametrize("field", ["max_jobs", "max_gpus", "max_servers", "max_models", "max_stages",
                                   "max_iterations"])
def test_a_limit_below_one_or_above_the_range_is_named(field: str) -> None:
    for bad in (0, MAX_COUNT + 1):
        with pytest.raises(InputError, match=field):
            sample(lambda lo, hi: lo, **{field: bad})
    sample(lambda lo, hi: lo, **{field: 1})


def test_max_release_may_be_zero_not_negative() -> None:
    with pytest.raises(InputError, match="max_release"):
        sample(lambda lo, hi: lo, max_release=-1)
    with pytest.raises(InputError, match="max_release"):
        sample(lambda lo, hi: lo, max_release=MAX_COUNT + 1)
    draw, asked = _recording(lambda lo, hi: hi)
    assert sample(draw, max_release=0)["jobs"][0]["release"] == 0.0
    assert (0, 0) in asked and (0, 10) not in asked
