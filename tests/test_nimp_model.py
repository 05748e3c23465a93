"""nimp model: the collectives' phases written out, evaluate, and bad input."""

from __future__ import annotations

import copy

import pytest

from optkit.formulations.nimp.model import (
    NimpInstance, evaluate, halving_doubling_phases, is_placement_sensitive, pair_limit, ring_phases,
)
from optkit.errors import InputError

K = 1.0e8
BASE = {"problem": "nimp",
        "machines": [{"gpus": 4, "idle_gpus": 4}, {"gpus": 4, "idle_gpus": 3}],
        "pair_capacity_bytes": 5.0e8,
        "job": {"workers": 4, "collective": "halving-doubling", "param_bytes": K}}


def _phases(n: int) -> list[tuple[list[tuple[int, int]], float]]:
    return [(list(ph.pairs), ph.volume) for ph in halving_doubling_phases(n, K)]


def test_hd_phases_n4_exactly_as_fig1() -> None:
    assert _phases(4) == [
        ([(0, 2), (1, 3)], K / 2),
        ([(0, 1), (2, 3)], K / 4),
        ([(0, 1), (2, 3)], K / 4),
        ([(0, 2), (1, 3)], K / 2),
    ]


def test_hd_phases_n8() -> None:
    j1 = ([(0, 4), (1, 5), (2, 6), (3, 7)], K / 2)
    j2 = ([(0, 2), (1, 3), (4, 6), (5, 7)], K / 4)
    j3 = ([(0, 1), (2, 3), (4, 5), (6, 7)], K / 8)
    assert _phases(8) == [j1, j2, j3, j3, j2, j1]


def test_hd_trivial_and_reject_reading() -> None:
    assert halving_doubling_phases(1, K) == []
    assert _phases(2) == [([(0, 1)], K / 2), ([(0, 1)], K / 2)]
    with pytest.raises(InputError, match=r"job.workers must be a power of two.*got 6"):
        halving_doubling_phases(6, K, hd_non_power_of_two="reject")
    with pytest.raises(InputError, match="hd_non_power_of_two"):
        halving_doubling_phases(6, K, hd_non_power_of_two="pad")
    d = copy.deepcopy(BASE)
    d["job"]["workers"] = 6
    assert NimpInstance.from_dict(d).N == 6  # binary blocks by default
    d["job"]["collective"] = "ring"
    assert NimpInstance.from_dict(d).N == 6


def test_hd_six_workers_binary_blocks() -> None:
    """N = 6 = 4 + 2: block A = ranks 0-3, block B = ranks 4-5 (gloo: largest block first).

    Reduce-scatter j=1: A pairs a^2 -> (0,2),(1,3); B pairs a^1 -> (4,5); K/2 each (gloo's first
    chunk is half the buffer in every block). j=2: only A, (0,1),(2,3) at K/4. Rank a of A now holds
    quarter a; rank 4 (B-local 0) holds half 0 = quarters 0,1, rank 5 holds quarters 2,3. Gather:
    B-local r sends quarter r*2+q (K/4) to A rank r*2+q: (0,4),(1,4),(2,5),(3,5). Return: the same
    pairs, K/4. All-gather: j=2 then j=1. Bytes per sync: 2*(3 K/2) + 2*(2 K/4) + 2*(4 K/4) = 6K."""
    half = [(0, 2), (1, 3), (4, 5)]
    quarter = [(0, 1), (2, 3)]
    link = [(0, 4), (1, 4), (2, 5), (3, 5)]
    assert _phases(6) == [(half, K / 2), (quarter, K / 4), (link, K / 4), (link, K / 4), (quarter, K / 4),
                          (half, K / 2)]
    assert sum(len(p) * v for p, v in _phases(6)) == pytest.approx(6 * K)


def test_hd_ten_workers_binary_blocks() -> None:
    """N = 10 = 8 + 2: A = ranks 0-7, B = ranks 8-9. j=1: A a^4 (4 pairs) and B (8,9), K/2;
    j=2: A a^2, K/4; j=3: A a^1, K/8. B-local r holds half r = eighths 4r..4r+3, sent to A ranks
    4r..4r+3 at K/8 each: 8 pairs (0..3 with 8, 4..7 with 9). Return the same, then all-gather."""
    j1 = [(0, 4), (1, 5), (2, 6), (3, 7), (8, 9)]
    j2 = [(0, 2), (1, 3), (4, 6), (5, 7)]
    j3 = [(0, 1), (2, 3), (4, 5), (6, 7)]
    link = [(0, 8), (1, 8), (2, 8), (3, 8), (4, 9), (5, 9), (6, 9), (7, 9)]
    assert _phases(10) == [(j1, K / 2), (j2, K / 4), (j3, K / 8), (link, K / 8), (link, K / 8), (j3, K / 8),
                           (j2, K / 4), (j1, K / 2)]


def test_hd_twelve_workers_binary_blocks() -> None:
    """N = 12 = 8 + 4: A = ranks 0-7, B = ranks 8-11. j=1: A a^4, B-local a^2 -> (8,10),(9,11), K/2;
    j=2: A a^2, B a^1 -> (8,9),(10,11), K/4; j=3: A only, K/8. B-local r holds quarter r = eighths
    2r, 2r+1, sent to A ranks 2r, 2r+1 at K/8: (0,8),(1,8),(2,9),(3,9),(4,10),(5,10),(6,11),(7,11)."""
    j1 = [(0, 4), (1, 5), (2, 6), (3, 7), (8, 10), (9, 11)]
    j2 = [(0, 2), (1, 3), (4, 6), (5, 7), (8, 9), (10, 11)]
    j3 = [(0, 1), (2, 3), (4, 5), (6, 7)]
    link = [(0, 8), (1, 8), (2, 9), (3, 9), (4, 10), (5, 10), (6, 11), (7, 11)]
    assert _phases(12) == [(j1, K / 2), (j2, K / 4), (j3, K / 8), (link, K / 8), (link, K / 8), (j3, K / 8),
                           (j2, K / 4), (j1, K / 2)]


def test_hd_three_blocks_chain_smallest_first() -> None:
    """N = 7 = 4 + 2 + 1: gather B2 -> B1 first (rank 6 sends halves, K/2, to ranks 4, 5), then
    B1 -> B0 (K/4); return in the opposite order."""
    ph = _phases(7)
    b21 = ([(4, 6), (5, 6)], K / 2)
    b10 = ([(0, 4), (1, 4), (2, 5), (3, 5)], K / 4)
    assert ph[2:6] == [b21, b10, b10, b21]


def test_hd_every_worker_pair_set_is_a_matching_or_block_link() -> None:
    """In the halving/doubling phases no worker appears twice (a matching); power-of-two N unchanged."""
    for n in range(2, 40):
        for ph in halving_doubling_phases(n, K):
            ends = [w for p in ph.pairs for w in p]
            assert all(0 <= w < n for w in ends)
        if n & (n - 1) == 0:
            assert halving_doubling_phases(n, K) == halving_doubling_phases(n, K, hd_non_power_of_two="reject")


def test_ring_phases() -> None:
    ph = ring_phases(4, K)
    assert len(ph) == 6
    assert all(p.pairs == ((0, 1), (0, 3), (1, 2), (2, 3)) and p.volume == K / 4 for p in ph)
    assert [(p.pairs, p.volume) for p in ring_phases(2, K)] == [(((0, 1),), K / 2)] * 2
    assert ring_phases(1, K) == []


def test_round_trip_scalar_and_matrix() -> None:
    inst = NimpInstance.from_dict(BASE)
    assert inst.to_dict() == BASE
    d = copy.deepcopy(BASE)
    d["pair_capacity_bytes"] = [[0.0, 3.0e7], [3.0e7, 0.0]]
    inst = NimpInstance.from_dict(d)
    assert not inst.capacity_is_scalar and inst.to_dict() == d


def test_round_trip_keeps_name_model_and_flag() -> None:
    """A named instance whose job names its model and carries Tiresias' flag writes all three
    back (a one-machine instance too, where the scalar capacity sits on the diagonal)."""
    d = copy.deepcopy(BASE)
    d["name"] = "two-machines"
    d["job"].update({"model": "VGG-16", "placement_sensitive": False})
    assert NimpInstance.from_dict(d).to_dict() == d
    one = {"problem": "nimp", "machines": [{"gpus": 8, "idle_gpus": 8}], "pair_capacity_bytes": 2.5e8,
           "job": {"workers": 2, "collective": "ring", "param_bytes": K}}
    assert NimpInstance.from_dict(one).to_dict() == one


@pytest.mark.parametrize("model,sensitive", [("VGG-16", True), ("vgg_19", True), ("Alex-Net", True),
                                             ("alexnet", True), ("ResNet-50", False), ("BERT", False)])
def test_placement_sensitive_by_model_name_ignores_case_dashes_and_underscores(model: str, sensitive: bool) -> None:
    """Tiresias' consolidation test (model.is_placement_sensitive) reads the model name without
    case, '-' or '_': VGG and AlexNet variants are sensitive, others not; the flag wins."""
    job = NimpInstance.from_dict({**BASE, "job": {**BASE["job"], "model": model}}).job
    assert is_placement_sensitive(job) is sensitive
    flagged = NimpInstance.from_dict({**BASE, "job": {**BASE["job"], "model": model,
                                                      "placement_sensitive": not sensitive}}).job
    assert is_placement_sensitive(flagged) is (not sensitive)


def test_evaluate_criteria_and_violations() -> None:
    d = copy.deepcopy(BASE)
    d["machines"].append({"gpus": 4, "idle_gpus": 2})
    d["pair_capacity_bytes"] = K / 2
    inst = NimpInstance.from_dict(d)
    ev = evaluate(inst, {"machine_of_worker": [1, 2, 1, 2]})
    assert ev.feasible, ev.violations
    assert ev.objectives == {"lex": [0, 2], "lex-cross": [0, 2, K]}
    assert ev.metrics["objective_key.lex"] == 0 * 4 + 2
    ev = evaluate(inst, {"machine_of_worker": [0, 0, 0, 0]})
    assert ev.objectives["lex"] == [1, 1] and ev.metrics["cross_bytes"] == 0.0
    # {0,1} | {2,3} splits the K/2 pairs (0,2),(1,3): K bytes in phase 0 > P = K/2
    ev = evaluate(inst, {"machine_of_worker": [1, 1, 2, 2]})
    assert not ev.feasible and any("between machines 1 and 2" in v for v in ev.violations)
    ev = evaluate(inst, {"machine_of_worker": [2, 2, 2, 0]})  # machine 2 has R = 2
    assert not ev.feasible and "machine 2 hosts 3 workers" in ev.violations[0]
    assert not evaluate(inst, {"machine_of_worker": [0, 0, 0]}).feasible
    assert not evaluate(inst, {"machine_of_worker": [0, 0, 0, 7]}).feasible
    assert not evaluate(inst, {"placement": [0, 0, 0, 0]}).feasible


def test_matrix_capacity_is_per_pair() -> None:
    d = copy.deepcopy(BASE)
    d["machines"] = [{"gpus": 2, "idle_gpus": 2}] * 3
    d["pair_capacity_bytes"] = [[0, K, 0], [K, 0, K], [0, K, 0]]
    inst = NimpInstance.from_dict(d)
    assert evaluate(inst, {"machine_of_worker": [0, 1, 0, 1]}).feasible   # K/2 per phase on {0,1}
    assert not evaluate(inst, {"machine_of_worker": [0, 2, 0, 2]}).feasible  # P[0][2] = 0


def test_pair_limit_tolerance() -> None:
    assert pair_limit(K, K / 4) == 4
    assert pair_limit(K * (1 - 1e-12), K / 4) == 4
    assert pair_limit(K / 4 - 1, K / 4) == 0


def test_placement_sensitivity() -> None:
    inst = NimpInstance.from_dict(BASE)
    assert is_placement_sensitive(inst.job)  # neither flag nor model: consolidate
    for model, sens in (("VGG-16", True), ("alexnet", True), ("resnet50", False)):
        d = copy.deepcopy(BASE)
        d["job"]["model"] = model
        assert is_placement_sensitive(NimpInstance.from_dict(d).job) is sens
    d = copy.deepcopy(BASE)
    d["job"].update({"model": "vgg16", "placement_sensitive": False})
    assert not is_placement_sensitive(NimpInstance.from_dict(d).job)


def _bad(path: list, value: object) -> dict:
    d = copy.deepcopy(BASE)
    target = d
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = value
    return d


@pytest.mark.parametrize("data,field,text", [
    (_bad(["machines", 1, "idle_gpus"], 5), "machines[1].idle_gpus", "must be <= gpus (4), got 5"),
    (_bad(["machines", 0, "gpus"], 0), "machines[0].gpus", ">= 1"),
    (_bad(["machines", 0, "idle_gpus"], -1), "machines[0].idle_gpus", ">= 0"),
    (_bad(["pair_capacity_bytes"], -1.0), "pair_capacity_bytes", ">= 0"),
    (_bad(["pair_capacity_bytes"], [[0, 1, 2], [1, 0, 2]]), "pair_capacity_bytes", "2 x 2 matrix"),
    (_bad(["pair_capacity_bytes"], [[0, 1], [1]]), "pair_capacity_bytes", "2 x 2 matrix"),
    (_bad(["pair_capacity_bytes"], [[0, 1], [2, 0]]), "pair_capacity_bytes", "symmetric"),
    (_bad(["pair_capacity_bytes"], [[0, -1], [-1, 0]]), "pair_capacity_bytes[0][1]", ">= 0"),
    (_bad(["job", "workers"], 0), "job.workers", ">= 1"),
    (_bad(["job", "collective"], "tree"), "job.collective", "halving-doubling, ring"),
    (_bad(["job", "param_bytes"], 0), "job.param_bytes", "> 0"),
    (_bad(["job", "colective"], "ring"), "job.colective", "is not a field"),
    (_bad(["machines", 0, "idle"], 1), "machines[0].idle", "is not a field"),
    (_bad(["capacity"], 1.0), "capacity", "is not a field"),
    (_bad(["machines"], []), "machines", "non-empty"),
    (_bad(["job", "placement_sensitive"], "yes"), "job.placement_sensitive", "true or false"),
])
def test_bad_input_names_the_field(data: dict, field: str, text: str) -> None:
    with pytest.raises(InputError) as exc:
        NimpInstance.from_dict(data)
    assert exc.value.field == field
    assert text in str(exc.value)



def _typed_with_zero_diagonal(pair: float, other: float | None = None) -> NimpInstance:
    """Three machines of 4 GPUs with 2 idle each, one capacity ``pair`` for every pair (``other``
    on pair (1, 2) when given), zero diagonal, capacity_is_scalar: an instance built in Python."""
    import numpy as np

    from optkit.formulations.nimp.model import Job, Machine

    cap = np.full((3, 3), pair)
    np.fill_diagonal(cap, 0.0)
    if other is not None:
        cap[1, 2] = cap[2, 1] = other
    cap.flags.writeable = False
    return NimpInstance((Machine(4, 2), Machine(4, 2), Machine(4, 2)), cap, True, Job(4, "ring", K, None, None))


def test_every_algorithm_reads_a_scalar_capacity_off_a_pair_not_the_diagonal() -> None:
    """P's diagonal is ignored (``_capacity``'s docstring), so a typed instance with one pair
    capacity and a zero diagonal is the instance its file states. Ring of 4 workers at K = 1e8 B
    on machines with 2 idle GPUs each: the job must split 2 + 2 over two machines, and then two
    ring pairs cross in each phase, 2 x K/4 = 5e7 B. With P = 5e7 B that fits: the optimum uses
    no idle machine and 2 machines, for Titan, both exact models and the brute force, on the
    typed instance as on its JSON round trip. Read off the diagonal, P would be 0 B and no
    placement would exist."""
    from optkit.solve import solve

    typed = _typed_with_zero_diagonal(5e7)
    assert typed.scalar_capacity == 5e7
    back = NimpInstance.from_dict(typed.to_dict())
    assert back.scalar_capacity == 5e7 and back.capacity[0, 0] == 5e7
    for algo in ("titan", "cpsat", "highs", "brute-force"):
        got, want = solve("nimp", typed, algo, seed=0), solve("nimp", back, algo, seed=0)
        assert got.status == want.status and got.objective == want.objective == [0, 2], (algo, got.message)


def test_a_scalar_flag_with_pairs_of_different_capacity_is_refused() -> None:
    """``capacity_is_scalar`` says one capacity holds for every pair; a matrix whose pairs differ
    would be written as pair (0, 1)'s number alone, so the instance is refused, naming the field."""
    with pytest.raises(InputError, match=r"nimp: pair_capacity_bytes differs between pairs while capacity_is_scalar "
                                         r"is set \(pair \(0, 1\): 50000000.0, largest 50000000.0, "
                                         r"smallest 30000000.0\)"):
        _typed_with_zero_diagonal(5e7, 3e7)
