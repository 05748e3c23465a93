"""gpu-mapping lower bounds (formulations/gpu_mapping/bounds.py) against exhaustive enumeration.

The enumerator lists every assignment of the vertices to servers with exactly c_m vertices on
server m (at most 8!/(2!)^4 = 2520 mappings for the instances used here), computes every cut
at once and alpha once per distinct count matrix.
"""

from __future__ import annotations

import numpy as np
import pytest

from optkit.formulations.gpu_mapping import FORMULATION
from optkit.formulations.gpu_mapping.bounds import lower_bound
from optkit.formulations.gpu_mapping.generate import SUITES, generate, random_small
from optkit.formulations.gpu_mapping.heavy_edge import heavy_edge_job
from optkit.formulations.gpu_mapping.model import GpuMappingInstance, alpha_from_counts, evaluate

REL = 1e-12


def all_mappings(caps: tuple[int, ...]) -> np.ndarray:
    """Every vector of server indices with exactly caps[m] entries equal to m."""
    n = sum(caps)
    out: list[tuple[int, ...]] = []
    left = list(caps)
    cur: list[int] = []

    def rec() -> None:
        if len(cur) == n:
            out.append(tuple(cur))
            return
        for m in range(len(left)):
            if left[m]:
                left[m] -= 1
                cur.append(m)
                rec()
                cur.pop()
                left[m] += 1

    rec()
    return np.array(out, dtype=np.int64)


def brute_force(inst: GpuMappingInstance) -> tuple[float, float]:
    """(least cut, least alpha) over all feasible mappings."""
    job = inst.job
    sv = all_mappings(inst.servers)
    u, v, w = job.edges
    cuts = ((sv[:, u] != sv[:, v]) * w).sum(axis=1)
    S, M = len(job.stages), len(inst.servers)
    counts = np.zeros((len(sv), S, M), dtype=np.int64)
    rows = np.arange(len(sv))
    for i, s in enumerate(job.vertex_stage):
        counts[rows, s, sv[:, i]] += 1
    uniq = np.unique(counts.reshape(len(sv), -1), axis=0)
    alpha = min(alpha_from_counts(job, inst.cluster, c.reshape(S, M)) for c in uniq)
    return float(cuts.min()), alpha


@pytest.fixture(scope="module")
def small() -> list[tuple[str, GpuMappingInstance]]:
    return [(n, GpuMappingInstance.from_dict(d)) for n, d in SUITES["small"].build()]


@pytest.fixture(scope="module")
def small_optima(small) -> dict[str, tuple[float, float]]:
    return {n: brute_force(i) for n, i in small if i.job.n_replicas <= 8}


def test_bounds_below_every_mapping_on_small_suite(small, small_optima) -> None:
    assert len(small_optima) >= 25
    tight_alpha = tight_cut = 0
    for name, inst in small:
        if name not in small_optima:
            continue
        cut, alpha = small_optima[name]
        lb_cut, lb_alpha = lower_bound(inst, "cut"), lower_bound(inst, "alpha")
        assert 0.0 <= lb_cut <= cut, name
        assert 0.0 < lb_alpha <= alpha, name
        tight_alpha += lb_alpha == alpha
        tight_cut += lb_cut >= cut * (1 - 1e-9)
    # documented in bounds.py: 21 of 30 and 18 of 30
    assert tight_alpha >= 18 and tight_cut >= 16, (tight_alpha, tight_cut)


def test_bounds_below_heavy_edge(small) -> None:
    for name, inst in small:
        ev = evaluate(inst, {"assignment": heavy_edge_job(inst.job, inst.servers)})
        assert lower_bound(inst, "cut") <= ev.objectives["cut"], name
        assert lower_bound(inst, "alpha") <= ev.objectives["alpha"], name


def test_tight_named_instances(small, small_optima) -> None:
    """Strictly positive and tight: GPT-175B 4x2 on servers (4, 1, 1, 2): the two single-GPU
    servers force two pairs apart, and the cut bound (forced splits + inter-stage degrees)
    equals the optimum 1.748e11 B; XLNet-large 2x2 on (2, 1, 1): the alpha bound equals the
    optimum 5.006 s (the stage split over the single-GPU servers pays eq. 6 over the NIC)."""
    by = dict(small)
    name = "gpt-175b_pipe4x2_ring_m4_s34"
    cut, _ = small_optima[name]
    assert cut > 1e11 and lower_bound(by[name], "cut") == pytest.approx(cut, rel=1e-9)
    name = "xlnet-large_pipe2x2_ring_m3_s23"
    _, alpha = small_optima[name]
    assert lower_bound(by[name], "alpha") == alpha > 5.0


@pytest.mark.parametrize("seed", range(120))
def test_bounds_below_every_mapping_on_random_instances(seed: int) -> None:
    inst = GpuMappingInstance.from_dict(random_small(seed))
    cut, alpha = brute_force(inst)
    assert lower_bound(inst, "cut") <= cut
    assert lower_bound(inst, "alpha") <= alpha


def test_table2_bounds_and_gpt175b_closeness() -> None:
    """On Table II's GPT-175B cases the alpha bound is within 5% of Heavy-Edge (the bound knows
    that with odd free-GPU counts some replica pair must be split across servers)."""
    for name, d in SUITES["table2"].build():
        inst = GpuMappingInstance.from_dict(d)
        ev = evaluate(inst, {"assignment": heavy_edge_job(inst.job, inst.servers)})
        lb_a, lb_c = lower_bound(inst, "alpha"), lower_bound(inst, "cut")
        assert 0 < lb_a <= ev.objectives["alpha"] and 0 < lb_c <= ev.objectives["cut"], name
        if d["meta"]["model"] == "gpt-175b":
            assert lb_a >= 0.95 * ev.objectives["alpha"], name


def test_single_server_is_exact_and_other_objectives_have_no_bound() -> None:
    inst = GpuMappingInstance.from_dict(generate(model="bert-large", config="pipe4x2", servers=[8]))
    ev = evaluate(inst, {"assignment": heavy_edge_job(inst.job, inst.servers)})
    assert lower_bound(inst, "cut") == 0.0 == ev.objectives["cut"]
    assert lower_bound(inst, "alpha") == ev.objectives["alpha"]
    assert lower_bound(inst, "makespan") is None
    assert FORMULATION.lower_bound(inst, "alpha") == ev.objectives["alpha"]


def test_bounds_below_exact_brute_force_on_whole_small_suite(small) -> None:
    """All 36 small instances, including the 9-12 replica ones the enumerator above skips,
    against exact.py's brute force."""
    from optkit.formulations.gpu_mapping import exact

    bf = exact.brute_force
    for name, inst in small:
        for objective in ("cut", "alpha"):
            value = bf(inst, objective)[0]
            assert lower_bound(inst, objective) <= value * (1 + REL), (name, objective)
