"""Facts of the gpu-mapping package checked on small instances, each derived by hand or by an
independent method: the cut lower bound's three parts (formulations/gpu_mapping/bounds.py) against
the brute-force optimum and hand values, the alpha bound's split minimum, the column programme's
partition table, its time limit and reports (columns.py), the vertex model's reports
(exact_vertices.py), the synthetic generator's documented ranges (generate.py), the input errors of
stages, instances and free-GPU maps (model.py, place.py), eq. (5) on jobs above EDGE_LIST_MAX
(model.vertex_times) and the unit bound's value on an instance no mapping satisfies (unit_bound.py)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping import bounds, columns, generate
from optkit.formulations.gpu_mapping.bounds import cut_lower_bound
from optkit.formulations.gpu_mapping.model import (
    EDGE_LIST_MAX, MAX_REPLICAS, Cluster, GpuMappingInstance, PipelineJob, Stage, cut_weight, vertex_times,
)


def _brute_force_cut(inst: GpuMappingInstance) -> float:
    """The least cut over every way of filling the servers' free GPUs with the vertices."""
    slots = [m for m, c in enumerate(inst.servers) for _ in range(c)]
    return min(cut_weight(inst.job, np.array(p)) for p in set(itertools.permutations(slots)))


# ----------------------------------------------------------------------------- cut lower bound
def test_cut_bound_is_a_forced_split_of_two_disconnected_rings() -> None:
    """Two stages with no pipeline data (d^out = d^in = 0): the job graph is a 2-replica ring
    (its pair weighs 2·(2(k-1)h/k) = 2h_0 = 6e8, reading two-edges) and a 3-replica ring (each edge
    2(k-1)h/k = 4h_1/3 = 4e8). On servers (4, 1) one vertex sits alone, so the optimum is the least
    weighted degree, min(6e8, 8e8) = 6e8, and one stage is always split. Bound 3 of bounds.py sees
    this: stage sizes {2, 3} fill at most 3 of the 4-GPU server, so split stages hold >= 2 replicas,
    costing at least min(lambda_0, lambda_1) = min(6e8, 8e8) (the rings' minimum cuts). The degree
    bound alone gives half the optimum (the lone vertex's edges counted from one end) and the
    min-cut bound 0 (disconnected graph), so the bound equals the optimum only through bound 3."""
    job = PipelineJob((Stage(2, 0.01, 0.02, 0.0, 0.0, 3e8), Stage(3, 0.01, 0.02, 0.0, 0.0, 3e8)), "ring")
    inst = GpuMappingInstance(Cluster(8, 1e9, 3e11), job, (4, 1))
    assert _brute_force_cut(inst) == pytest.approx(6e8, rel=1e-12)
    assert cut_lower_bound(inst) == pytest.approx(6e8, rel=1e-9)
    assert bounds.degree_bound(inst) == pytest.approx(3e8, rel=1e-9)


def test_min_cut_of_rings_and_of_a_disconnected_graph() -> None:
    """bounds._min_cut is the global minimum cut: a 4-cycle of unit edges needs two edges cut
    (any side of a cut of a cycle is left by two edges); two disjoint edges split at no cost."""
    ring = np.zeros((4, 4))
    for a in range(4):
        ring[a, (a + 1) % 4] = ring[(a + 1) % 4, a] = 1.0
    assert bounds._min_cut(ring) == 2.0
    pairs = np.zeros((4, 4))
    pairs[0, 1] = pairs[1, 0] = pairs[2, 3] = pairs[3, 2] = 1.0
    assert bounds._min_cut(pairs) == 0.0


def _seed93() -> GpuMappingInstance:
    """A 7-replica ring job (stages of 2, 2, 1, 2 replicas) on servers (3, 4)."""
    stages = [{"replicas": 2, "fwd_time": 0.0011628252226738441, "bwd_time": 0.0023256504453476883,
               "in_bytes": 0.0, "out_bytes": 41216408.00818771, "param_bytes": 812959386.9961072},
              {"replicas": 2, "fwd_time": 0.09977488798616241, "bwd_time": 0.19954977597232482,
               "in_bytes": 41216408.00818771, "out_bytes": 1048049.0373677756, "param_bytes": 396642.6881516632},
              {"replicas": 1, "fwd_time": 0.02443879527454275, "bwd_time": 0.0488775905490855,
               "in_bytes": 2096098.0747355511, "out_bytes": 19617948.4453407, "param_bytes": 256175731.02431288},
              {"replicas": 2, "fwd_time": 0.07422406378056305, "bwd_time": 0.1484481275611261,
               "in_bytes": 9808974.22267035, "out_bytes": 0.0, "param_bytes": 886667.279815943}]
    return GpuMappingInstance.from_dict({
        "problem": "gpu-mapping", "cluster": {"gpus_per_server": 8, "inter_bandwidth": 242126087.954083,
                                              "intra_bandwidth": 3e11},
        "job": {"allreduce": "ring", "stages": stages}, "servers": [3, 4]})


def _brute_force_min_cut(w: np.ndarray) -> float:
    """The global minimum cut by every non-empty proper vertex subset containing vertex 0."""
    n = w.shape[0]
    best = math.inf
    for mask in range(1, 2 ** (n - 1)):
        side = np.array([True] + [bool(mask >> i & 1) for i in range(n - 1)])
        if side.all():
            continue
        best = min(best, float(w[np.ix_(side, ~side)].sum()))
    return best


def test_cut_bound_reaches_the_optimum_through_the_min_cut_bound() -> None:
    """On this instance the optimal cut (brute force over the 35 ways to pick the 3-GPU server's
    vertices) equals M·lambda/2 with lambda the job graph's global minimum cut (brute force over
    vertex subsets): both servers' vertex sets are sides of cuts of weight >= lambda, each cut edge
    lies on two of them (bounds.py, bound 2). So the cut lower bound must be that optimum."""
    inst = _seed93()
    lam = _brute_force_min_cut(inst.job.adjacency)
    opt = _brute_force_cut(inst)
    assert opt == pytest.approx(len(inst.servers) * lam / 2, rel=1e-12)
    assert cut_lower_bound(inst) == pytest.approx(opt, rel=1e-9)


def test_split_minimum_of_a_one_replica_stage_is_infinite() -> None:
    """LBsplit_s (bounds.py, alpha) is the least alpha over distributions of stage s over at least
    two servers; a stage of one replica has none, so its LBsplit is infinite, whatever LB_s is."""
    job = PipelineJob((Stage(2, 0.01, 0.02, 0.0, 1e6, 1e8), Stage(1, 0.01, 0.02, 2e6, 0.0, 1e7)), "ring")
    inst = GpuMappingInstance(Cluster(4, 1.25e9, 3e11), job, (2, 1))
    values, lb, split = bounds._stage_bounds(inst, 1)
    assert math.isfinite(lb) and lb in values
    assert split == math.inf
    assert math.isfinite(bounds._stage_bounds(inst, 0)[2])  # two replicas on two servers: (1, 1) exists


# ----------------------------------------------------------------------------- columns
def test_partition_bounds_table_is_the_least_partition_cost_for_every_entry() -> None:
    """columns._partition_bounds: best[m, j] = least sum of lam[v] over the partitions of j into
    parts of at most m, for m = 0..top and j = 0..k (and nothing else), checked against every
    partition listed by brute force."""
    lam = np.array([0.0, 3.0, 5.0, 4.0, 9.0])
    k, top = 4, 3
    best = columns._partition_bounds(lam, k, top)
    assert best.shape == (top + 1, k + 1)

    def parts(j: int, m: int) -> Iterator[tuple[int, ...]]:
        if j == 0:
            yield ()
            return
        for v in range(min(j, m), 0, -1):
            for rest in parts(j - v, v):
                yield (v,) + rest

    for m in range(top + 1):
        for j in range(k + 1):
            want = min((sum(lam[v] for v in q) for q in parts(j, m)), default=math.inf)
            assert best[m, j] == want, (m, j)
