"""Heavy-Edge's stage-structured job path against the edge-list implementation it replaced.

``heavy_edge_job`` runs on the job's stage structure (the complete bipartite edges between
consecutive stages kept as one block each); before, it ran on the job's materialised edges. The
oracle is that earlier implementation, verbatim (tests/gpu_mapping_reference.py,
``heavy_edge_before_stages``), on ``job.edges``: the two must give the same mapping on every
seeded job, under every reading, including the seeded random picks and the one-GPU servers
(case 2), whose floating-point weight sums the stage path reproduces bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from optkit.formulations.gpu_mapping import PipelineJob, heavy_edge_arrays, heavy_edge_job
from optkit.formulations.gpu_mapping.heavy_edge import _prepared
from tests.gpu_mapping_reference import GraphBeforeStages, heavy_edge_before_stages

READINGS = [(sg, ss) for sg in ("unassigned", "total") for ss in ("heaviest-pair", "from-placed")]


def before(job: PipelineJob, caps: list[int], seed: int, sg: str, ss: str) -> list[list[int]]:
    u, v, w = job.edges
    g = GraphBeforeStages(job.n_replicas, u.tolist(), v.tolist(), w.tolist())
    flat = heavy_edge_before_stages(g, caps, None, seed, sg, ss)
    off = [int(o) for o in job.offsets]
    return [flat[a:b] for a, b in zip(off[:-1], off[1:])]


def random_job(rng: np.random.Generator) -> PipelineJob:
    """Stages of 1-7 replicas; bytes drawn from a few values (zeros among them), so that ring,
    tree and block weights tie often, and some jobs have no edges at all between parts."""
    n_st = int(rng.integers(1, 6))
    k = [int(rng.integers(1, 8)) for _ in range(n_st)]
    flows = [float(rng.choice([0.0, 1e6, 2e6, 3e6, 12e6])) for _ in range(n_st - 1)]  # k_{s-1} d^out = k_s d^in
    stages = []
    for s in range(n_st):
        stages.append({"replicas": k[s], "fwd_time": 0.01, "bwd_time": 0.02,
                       "in_bytes": flows[s - 1] / k[s] if s else 0.0,
                       "out_bytes": flows[s] / k[s] if s < n_st - 1 else 0.0,
                       "param_bytes": float(rng.choice([0.0, 1e6, 3e6, 6e6]))})
    d = {"allreduce": str(rng.choice(["ring", "tree"])), "stages": stages}
    if rng.random() < 0.3:
        d["two_replica_ring"] = "one-edge"
    return PipelineJob.from_dict(d)


def random_graph(rng: np.random.Generator, n: int) -> tuple[list[int], list[int], list[float]]:
    """A random multigraph on n vertices: parallel edges, loops, zero weights, isolated vertices."""
    m = int(rng.integers(0, 3 * n))
    u, v = rng.integers(0, n, m), rng.integers(0, n, m)
    w = np.round(rng.exponential(1.0, m), 1) * (rng.random(m) < 0.8)
    return u.tolist(), v.tolist(), w.tolist()


def random_servers(rng: np.random.Generator, n: int) -> list[int]:
    caps: list[int] = []
    while sum(caps) < n:
        caps.append(int(min(n - sum(caps), rng.choice([1, 1, 2, 3, 4, 8]))))
    return [caps[i] for i in rng.permutation(len(caps))]


@pytest.mark.parametrize("sg,ss", READINGS)
def test_stage_path_matches_edge_path_on_seeded_jobs(sg: str, ss: str) -> None:
    rng = np.random.default_rng(37)
    for trial in range(150):
        job = random_job(rng)
        caps = random_servers(rng, job.n_replicas)
        assert heavy_edge_job(job, caps, seed=trial, single_gpu_weight=sg, server_start=ss) \
            == before(job, caps, trial, sg, ss), (trial, job.to_dict(), caps)


def test_edge_arrays_path_matches_the_earlier_implementation() -> None:
    """heavy_edge_arrays (the edge-list path, also rewritten: lazy weight sums, a Fenwick tree for
    the random pick) against the earlier one on random multigraphs."""
    rng = np.random.default_rng(8)
    for trial in range(200):
        n = int(rng.integers(2, 25))
        u, v, w = random_graph(rng, n)
        caps = random_servers(rng, n)
        sg, ss = READINGS[trial % 4]
        g = GraphBeforeStages(n, u, v, w)
        assert heavy_edge_arrays(n, u, v, w, caps, seed=trial, single_gpu_weight=sg,
                                 server_start=ss) == heavy_edge_before_stages(g, caps, None, trial, sg, ss)


def test_stage_graph_holds_no_block_edges() -> None:
    """The point of the stage path: a job of two stages of 64 replicas has 64^2 edges between them,
    and the stage graph holds only the 128 ring edges and one block."""
    st = {"fwd_time": 0.01, "bwd_time": 0.02, "param_bytes": 1e6}
    job = PipelineJob.from_dict({"allreduce": "ring", "stages": [
        {**st, "replicas": 64, "in_bytes": 0, "out_bytes": 1e6},
        {**st, "replicas": 64, "in_bytes": 1e6, "out_bytes": 0}]})
    g = _prepared(job)
    assert len(g.sorted_edges) == 128 and g.blocks == [(-2.0 * 1e6 / 64, 1)]
    assert len(job.edges[0]) == 64 * 64 + 128


def test_the_collector_is_left_as_found() -> None:
    """Heavy-Edge pauses the cyclic garbage collector while it builds and walks a graph (a speed
    measure, heavy_edge.py) and must leave it as it found it, also when it raises."""
    import gc

    from optkit.errors import InputError

    job = random_job(np.random.default_rng(0))
    assert gc.isenabled()
    heavy_edge_job(job, [1] * job.n_replicas)
    assert gc.isenabled()
    with pytest.raises(InputError):
        heavy_edge_arrays(3, [0], [1], [1.0], [2, 1], colocate=[[0, 1, 2]])
    assert gc.isenabled()
    gc.disable()
    try:
        heavy_edge_job(job, [1] * job.n_replicas)
        assert not gc.isenabled()
    finally:
        gc.enable()
