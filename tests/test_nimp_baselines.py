"""nimp baselines (formulations/nimp/baselines.py): the best-fit rule against a literal
enumeration of its definition, and the readings elasticflow_machines and tiresias_spread on
hand-worked cases."""

from __future__ import annotations

import numpy as np
import pytest

from optkit.formulations.nimp.baselines import elasticflow, hived, tiresias
from optkit.errors import InputError


def _literal_best_fit(idle: list[int], machines: list[int], r: int) -> list[int] | None:
    """Sec. V-A read literally, step by step: while workers remain, the machine (not used yet)
    with the fewest idle GPUs among those holding all of them (ties: lowest index); if none
    holds them, the one with the most idle GPUs (ties: lowest index), filled."""
    out, left = [], [s for s in machines if idle[s] > 0]
    while r > 0 and left:
        fits = sorted((idle[s], s) for s in left if idle[s] >= r)
        if fits:
            s, take = fits[0][1], r
        else:
            s = sorted(left, key=lambda s: (-idle[s], s))[0]
            take = idle[s]
        left.remove(s)
        out += [s] * take
        r -= take
    return out if r == 0 else None


def test_elasticflow_and_hived_follow_the_literal_rule() -> None:
    rng = np.random.default_rng(7)
    for _ in range(1500):
        M = int(rng.integers(1, 12))
        gpus = [8] * M
        idle = [int(x) for x in rng.integers(0, 9, size=M)]
        n = int(rng.integers(1, max(2, sum(idle) + 1)))
        assert elasticflow(idle, workers=n) == _literal_best_fit(idle, list(range(M)), n)
        frag = [s for s in range(M) if 0 < idle[s] < 8]
        whole = [s for s in range(M) if idle[s] == 8]
        first = _literal_best_fit(idle, frag, min(n, sum(idle[s] for s in frag)))
        rest = n - len(first or [])
        expect = (first or []) + (_literal_best_fit(idle, whole, rest) or []) if rest else first
        got = hived(gpus, idle, workers=n)
        if sum(idle) < n:
            assert got is None
        else:
            assert got == expect, (idle, n)


def test_elasticflow_idle_only_reading() -> None:
    """Idle GPUs (3, 8, 2, 8) of 8, 2 workers: 'any' takes machine 2 (2 idle GPUs, exactly 2);
    'idle-only' takes machine 1 (the first idle machine). 20 workers: the idle machines hold only
    16, so 'idle-only' falls back to 'any': none holds 20 -> machine 1 filled (8, the most, lowest
    index); none holds 12 -> machine 3 (8); none holds 4 -> machine 0 (3); 1 left -> machine 2."""
    idle, gpus = [3, 8, 2, 8], [8] * 4
    assert elasticflow(idle, workers=2) == [2, 2]
    assert elasticflow(idle, workers=2, gpus=gpus, elasticflow_machines="idle-only") == [1, 1]
    assert elasticflow(idle, workers=20, gpus=gpus, elasticflow_machines="idle-only") == [1] * 8 + [3] * 8 + [0] * 3 + [2]
    with pytest.raises(InputError, match="gpus"):
        elasticflow(idle, workers=2, elasticflow_machines="idle-only")
    # Boundary: the idle machines (0 and 1, 2 GPUs each) hold exactly the 4 workers, so
    # 'idle-only' stays on them (2 + 2) although the non-idle machine 2 holds all 4 (what 'any' takes).
    assert elasticflow([2, 2, 4], workers=4, gpus=[2, 2, 8], elasticflow_machines="idle-only") == [0, 0, 1, 1]
    assert elasticflow([2, 2, 4], workers=4, gpus=[2, 2, 8]) == [2, 2, 2, 2]


def test_tiresias_spread_readings() -> None:
    """Idle GPUs (2, 5, 0, 5, 1), 3 insensitive workers. emptiest: round robin over 1, 3, 0, 4
    (most idle first, ties by index) -> 1, 3, 0. first-fit: machine 0 (2), then machine 1 (1).
    best-fit: machine 1 (5 >= 3; the fewest among those holding 3, lowest index). A sensitive job
    consolidates: machine 1 holds all three."""
    idle = [2, 5, 0, 5, 1]
    assert tiresias(idle, workers=3, placement_sensitive=False) == [1, 3, 0]
    assert tiresias(idle, workers=3, placement_sensitive=False, tiresias_spread="first-fit") == [0, 0, 1]
    assert tiresias(idle, workers=3, placement_sensitive=False, tiresias_spread="best-fit") == [1, 1, 1]
    assert tiresias(idle, workers=3, placement_sensitive=True, tiresias_spread="first-fit") == [1, 1, 1]
    assert tiresias(idle, workers=7, placement_sensitive=False) == [1, 3, 0, 4, 1, 3, 0]
    assert tiresias(idle, workers=14, placement_sensitive=False) is None


def test_a_baseline_placement_that_breaks_p_is_reported_not_returned() -> None:
    """HiveD ignores P: on eight machines with one idle GPU each and P = 0, its 8-worker ring
    crosses every machine pair it uses; the result has no solution and names the placement and
    the first three broken (phase, pair) limits; with too few idle GPUs the answer is a proof of
    infeasibility; a placement that meets P is returned, found."""
    from optkit.formulations.nimp.baselines import run_hived
    from optkit.formulations.nimp.model import NimpInstance
    from optkit.result import Status

    d = {"problem": "nimp", "machines": [{"gpus": 2, "idle_gpus": 1}] * 8, "pair_capacity_bytes": 0.0,
         "job": {"workers": 8, "collective": "ring", "param_bytes": 1e8}}
    r = run_hived(NimpInstance.from_dict(d))
    assert r.status is Status.NO_SOLUTION and r.solution is None and r.info["found"] is False
    head = "hived found no feasible placement (not a proof that none exists): its placement "
    assert r.message.startswith(head) and " violates phase 0: " in r.message
    assert r.message.count("; ") == 2 and r.message.count("exceed P = 0 B") == 3
    few = run_hived(NimpInstance.from_dict(dict(d, job=dict(d["job"], workers=9))))
    assert few.status is Status.INFEASIBLE and few.message == "fewer idle GPUs than workers (resource constraint)"
    ok = run_hived(NimpInstance.from_dict(dict(d, pair_capacity_bytes=1e9)))
    assert ok.status is Status.FEASIBLE and ok.info["found"] is True and sorted(ok.solution["machine_of_worker"]) == list(range(8))
