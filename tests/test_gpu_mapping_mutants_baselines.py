"""The METIS/KaHIP baselines' helpers (formulations/gpu_mapping/baselines.py) against their
docstrings: the docstring examples, the edge cases the formulas name, and the size repair
against a from-scratch re-implementation of its stated greedy rule on seeded random graphs."""

from __future__ import annotations

import numpy as np
import pytest

from optkit.formulations.gpu_mapping.baselines import (csr_graph, integer_weights, kahip_dummy_weights,
                                                       match_parts_to_servers, metis_mapping, repair_sizes)
from optkit.formulations.gpu_mapping.model import PipelineJob, Stage


def test_integer_weights_keep_ratios_and_stay_positive() -> None:
    w = integer_weights(np.array([1.0, 3.0]))
    assert w.tolist() == [134217728, 402653184] and w.dtype == np.int64  # the docstring's example
    assert integer_weights([1, 3]).tolist() == [134217728, 402653184]  # a list of ints reads the same
    assert integer_weights(np.zeros(2)).tolist() == [1, 1]  # no weight at all: every edge keeps 1
    assert integer_weights(np.array([0.0, 1e-30, 2.0])).tolist() == [1, 1, 2 ** 29]
    empty = integer_weights(np.zeros(0))
    assert empty.size == 0 and empty.dtype == np.int64


def test_csr_graph_of_a_path_lists_sorted_neighbours() -> None:
    xadj, adjncy, adjwgt = csr_graph(4, np.array([2, 0, 1]), np.array([3, 1, 2]), np.array([7, 5, 6]))
    assert xadj.tolist() == [0, 1, 3, 5, 6]
    assert adjncy.tolist() == [1, 0, 2, 1, 3, 2] and adjwgt.tolist() == [5, 5, 6, 6, 7, 7]
    assert adjncy.dtype == adjwgt.dtype == xadj.dtype == np.int64


def test_match_parts_to_servers_sorted_and_with_a_bonus() -> None:
    assert match_parts_to_servers([2, 5, 3], [5, 3, 2]).tolist() == [2, 0, 1]  # the docstring's example
    # equal sizes: the bonus (a dummy held) decides
    bonus = np.zeros((2, 2))
    bonus[0, 1] = bonus[1, 0] = 0.25
    assert match_parts_to_servers([2, 2], [2, 2], bonus).tolist() == [1, 0]
    assert match_parts_to_servers([2, 2], [2, 2]).tolist() == [0, 1]
    with pytest.raises(ValueError, match="as many parts as servers"):
        match_parts_to_servers([1, 2], [3])


def test_kahip_dummy_weights_by_the_docstring() -> None:
    big, dummies, eps = kahip_dummy_weights([4, 1, 1])
    assert (big, dummies.tolist(), eps) == (18, [14, 17, 17], 1 / 36)
    assert dummies.dtype == np.int64
    big, dummies, eps = kahip_dummy_weights([5], scale=1)  # one server: c_(2) = 0
    assert (big, dummies.tolist(), eps) == (6, [1], 1 / 12)
    with pytest.raises(ValueError, match="scale must be >= 1, got 0"):
        kahip_dummy_weights([2, 2], scale=0)


def _greedy_repair(a: np.ndarray, sv: np.ndarray, caps: list[int]) -> tuple[list[int], int]:
    """repair_sizes's rule written from its docstring, recomputing every connection per move."""
    sv = sv.copy()
    moves = 0
    k = len(caps)
    while True:
        load = np.bincount(sv, minlength=k)
        if not (load > caps).any():
            return sv.tolist(), moves
        best = None
        for v in range(len(sv)):
            if load[sv[v]] <= caps[sv[v]]:
                continue
            for m in range(k):
                if load[m] >= caps[m]:
                    continue
                inc = a[v, sv == sv[v]].sum() - a[v, sv == m].sum()
                if best is None or inc < best[0] - 1e-12:
                    best = (inc, v, m)
        sv[best[1]] = best[2]
        moves += 1


@pytest.mark.parametrize("seed", range(6))
def test_repair_sizes_is_its_greedy_rule(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = 9, 3
    a = np.triu(rng.integers(0, 5, (n, n)) * (rng.random((n, n)) < 0.6), 1).astype(float)
    a = a + a.T
    caps = [4, 3, 2]
    sv = rng.integers(0, k, n)
    got, moves = repair_sizes(a, sv, caps)
    want, want_moves = _greedy_repair(a, sv, caps)
    assert got.tolist() == want and moves == want_moves
    assert np.bincount(got, minlength=k).tolist() == caps
    assert moves == int(np.maximum(0, np.bincount(sv, minlength=k) - caps).sum())


def test_repair_sizes_leaves_exact_sizes_alone() -> None:
    sv, moves = repair_sizes(np.ones((3, 3)), np.array([1, 0, 1]), [1, 2])
    assert sv.tolist() == [1, 0, 1] and moves == 0


def _job() -> PipelineJob:
    return PipelineJob((Stage(2, 1, 1, 0, 1e6, 1e7), Stage(3, 1, 1, 2e6 / 3, 0, 1e7)), "ring")


def test_metis_on_one_server_reports_no_repair() -> None:
    a, info = metis_mapping(_job(), [5], seed=0)
    assert a == [[0, 0], [0, 0, 0]]
    assert info == {"tool": "pymetis", "target_weights": True, "repaired": False, "moved_vertices": 0,
                    "part_sizes": [5], "cut_before_repair": 0.0, "cut": 0.0, "metis_edgecut": 0}


def test_metis_is_asked_for_the_servers_shares(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``target_weights`` METIS gets ``tpwgts[p] = free_gpus[p] / n``, ``recursive`` and the
    seed as passed, and the CSR graph of the job with integer weights."""
    import pymetis

    seen: dict = {}
    real = pymetis.part_graph

    def spy(k: int, **kw):  # type: ignore[no-untyped-def]
        seen.update(kw, k=k)
        return real(k, **kw)

    monkeypatch.setattr(pymetis, "part_graph", spy)
    job = _job()
    a, info = metis_mapping(job, [3, 2], seed=7, recursive=True)
    assert seen["k"] == 2 and seen["tpwgts"] == [0.6, 0.4] and seen["recursive"] is True
    assert seen["options"].seed == 7 and seen["options"].ufactor == 1
    u, v, w = job.edges
    assert seen["eweights"] == csr_graph(5, u, v, integer_weights(w))[2].tolist()
    assert sorted(np.bincount(sum(a, []), minlength=2).tolist()) == [2, 3]
    sv = np.array(sum(a, []))
    assert info["cut"] == pytest.approx(float(w[sv[u] != sv[v]].sum()))
    seen.clear()
    metis_mapping(job, [3, 2], seed=7, target_weights=False)
    assert "tpwgts" not in seen and seen["recursive"] is None


def test_kahip_on_one_server_reports_no_repair() -> None:
    from optkit.formulations.gpu_mapping.baselines import kahip_mapping

    a, info = kahip_mapping(_job(), [5], seed=0)
    assert a == [[0, 0], [0, 0, 0]]
    assert info == {"tool": "kahip", "mode": "strong", "repaired": False, "moved_vertices": 0, "dummies_ok": True,
                    "part_sizes": [5], "cut_before_repair": 0.0, "cut": 0.0, "kahip_edgecut": 0}


def _three() -> PipelineJob:
    """Stage 0: replicas 0 and 1; stage 1: replica 2."""
    return PipelineJob((Stage(2, 1, 1, 0, 1e6, 1e7), Stage(1, 1, 1, 2e6, 0, 1e7)), "ring")


def _kaffpa_answering(parts: list[int], seen: list[tuple]):  # type: ignore[no-untyped-def]
    def kaffpa(vwgt, xadj, adjwgt, adjncy, k, eps, suppress, seed, mode):  # type: ignore[no-untyped-def]
        seen.append((vwgt, xadj, adjwgt, adjncy, k, eps, suppress, seed, mode))
        return 7, parts
    return kaffpa


def test_kahip_missing_the_sizes_keeps_the_most_vertices_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """KaHIP puts one dummy in each part but the wrong counts: part 0 (dummy of the 2-GPU server)
    holds replica 2 alone, part 1 replicas 0 and 1. Sending part 1 to the 2-GPU server keeps all
    three in place (2 + 1 = 3) where following the dummies keeps 2 (1 + 1): the dummies only break
    ties (bonus 1/(k+1) each), so no vertex moves."""
    import kahip

    seen: list[tuple] = []
    monkeypatch.setattr(kahip, "kaffpa", _kaffpa_answering([1, 1, 0, 0, 1], seen))
    from optkit.formulations.gpu_mapping.baselines import kahip_mapping

    a, info = kahip_mapping(_three(), [2, 1], seed=5, mode="eco")
    assert a == [[0, 0], [1]]
    assert (info["dummies_ok"], info["repaired"], info["moved_vertices"]) == (False, False, 0)
    assert (info["kahip_edgecut"], info["part_sizes"], info["dummy_L"], info["imbalance"]) == (7, [1, 2], 12, 1 / 24)
    (vwgt, xadj, adjwgt, adjncy, k, eps, suppress, seed, mode), = seen
    assert vwgt == [1, 1, 1, 10, 11] and (k, eps, suppress, seed, mode) == (2, 1 / 24, True, 5, 1)
    assert len(adjncy) == len(adjwgt) == xadj[-1] and adjwgt.count(1) == 12  # 2 x 6 unit dummy edges


def test_kahip_with_two_dummies_in_one_part_is_matched_and_repaired(monkeypatch: pytest.MonkeyPatch) -> None:
    import kahip

    monkeypatch.setattr(kahip, "kaffpa", _kaffpa_answering([0, 0, 0, 0, 0], []))
    from optkit.formulations.gpu_mapping.baselines import kahip_mapping

    a, info = kahip_mapping(_three(), [2, 1], seed=None)
    assert sorted(sum(a, [])) == [0, 0, 1]
    assert (info["dummies_ok"], info["repaired"], info["moved_vertices"], info["part_sizes"]) == (False, True, 1, [3, 0])


def test_metis_asked_for_equal_parts_is_repaired_to_the_servers_sizes() -> None:
    """Without target weights METIS splits 5 replicas into two near-equal parts; servers of 4 and
    1 GPUs need at least one vertex moved, and the repair makes exactly the moves needed."""
    a, info = metis_mapping(_job(), [4, 1], seed=0, target_weights=False)
    sizes = np.bincount(sum(a, []), minlength=2).tolist()
    assert sizes == [4, 1]
    assert info["repaired"] is True and info["target_weights"] is False
    assert sorted(info["part_sizes"]) == [2, 3] and info["moved_vertices"] == 1  # the larger part to the 4-GPU server
