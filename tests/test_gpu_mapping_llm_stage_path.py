"""Heavy-Edge's stage-structured path on tensor-parallel and MoE jobs (A-SRPT paper Sec. VI)
against the edge-list implementation it replaced.

``heavy_edge_job`` runs tensor-parallel / MoE jobs, with and without co-location (each
tensor-parallel replica's slices on one server, ``colocate``), on the job's stage structure: the
complete bipartite pipeline edges between consecutive stages as one block each, the
data-parallel, tensor-parallel and all-to-all edges explicit. Before, such a job ran on its
materialised edge list. The oracle is that earlier implementation, verbatim
(tests/gpu_mapping_reference.py, ``heavy_edge_before_llm_stages``), on ``job.edges``: the two must
give the same mapping on every seeded job under every reading, seeded random picks and one-GPU
servers included, and refuse the same instances.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping import PipelineJob, colocation_groups, heavy_edge_job
from optkit.formulations.gpu_mapping.heavy_edge import _Graph, _prepared
from tests.gpu_mapping_reference import heavy_edge_before_llm_stages

READINGS = [(sg, ss) for sg in ("unassigned", "total") for ss in ("heaviest-pair", "from-placed")]


def before(job: PipelineJob, caps: list[int], seed: int, sg: str, ss: str,
           colocate: list[list[int]] | None) -> list[list[int]]:
    u, v, w = job.edges
    g = _Graph(job.n_replicas, u.tolist(), v.tolist(), w.tolist())
    flat = heavy_edge_before_llm_stages(g, caps, None, seed, sg, ss, colocate)
    off = [int(o) for o in job.offsets]
    return [flat[a:b] for a, b in zip(off[:-1], off[1:])]


def llm_job(rng: np.random.Generator, kind: str, max_replicas: int) -> PipelineJob:
    """Stages of 1..max_replicas replicas; ``kind`` ``tp`` (every stage t in {1, 2, 4}), ``moe``
    (every stage e in {1, 2, 3, 4}) or ``mixed`` (each stage plain, tensor-parallel or MoE). Bytes
    from a few values (zeros among them) so that weights tie often across kinds of edges."""
    n_st = int(rng.integers(1, 5))
    k = [int(rng.integers(1, max_replicas + 1)) for _ in range(n_st)]
    flows = [float(rng.choice([0.0, 1e6, 2e6, 12e6])) for _ in range(n_st - 1)]  # k_{s-1} d^out = k_s d^in
    stages: list[dict[str, Any]] = []
    for s in range(n_st):
        st: dict[str, Any] = {"replicas": k[s], "fwd_time": 0.01, "bwd_time": 0.02,
                              "in_bytes": flows[s - 1] / k[s] if s else 0.0,
                              "out_bytes": flows[s] / k[s] if s < n_st - 1 else 0.0,
                              "param_bytes": float(rng.choice([0.0, 1e6, 3e6, 6e6]))}
        which = kind if kind != "mixed" else str(rng.choice(["plain", "tp", "moe"]))
        if which == "tp":
            t = int(rng.choice([1, 2, 4]))
            if t > 1:
                st.update(tensor_parallel=t, tp_bytes=float(rng.choice([0.0, 1e6, 4e6])))
        elif which == "moe":
            e = int(rng.choice([1, 2, 3, 4]))
            if e > 1:
                st.update(experts=e, expert_bytes=float(rng.choice([0.0, 2e6, 6e6])))
                if rng.random() < 0.4:
                    st.update(routing="zipf", routing_skew=float(rng.choice([0.5, 1.2])))
        stages.append(st)
    d: dict[str, Any] = {"allreduce": str(rng.choice(["ring", "tree"])), "stages": stages}
    if rng.random() < 0.3:
        d["two_replica_ring"] = "one-edge"
    return PipelineJob.from_dict(d)


def servers(rng: np.random.Generator, n: int) -> list[int]:
    """Free GPUs adding up to n, mostly whole 4- and 8-GPU servers, some 1-3 (shuffled)."""
    caps: list[int] = []
    while sum(caps) < n:
        caps.append(int(min(n - sum(caps), rng.choice([1, 2, 3, 4, 4, 4, 8, 8, 8]))))
    return [caps[i] for i in rng.permutation(len(caps))]


def compare(job: PipelineJob, caps: list[int], seed: int, sg: str, ss: str,
            colocate: list[list[int]] | None) -> bool:
    """Assert both paths agree (the same mapping, or both refuse); True when they mapped."""
    try:
        want = before(job, caps, seed, sg, ss, colocate)
    except InputError as exc:
        with pytest.raises(InputError) as got:
            heavy_edge_job(job, caps, seed=seed, single_gpu_weight=sg, server_start=ss, colocate=colocate)
        assert (got.value.field, got.value.message) == (exc.field, exc.message)
        return False
    assert heavy_edge_job(job, caps, seed=seed, single_gpu_weight=sg, server_start=ss, colocate=colocate) == want, \
        (seed, job.to_dict(), caps, colocate)
    return True


@pytest.mark.parametrize("kind", ["tp", "moe", "mixed"])
@pytest.mark.parametrize("max_replicas", [3, 8])
def test_llm_stage_path_matches_edge_path_under_colocation(kind: str, max_replicas: int) -> None:
    """Seeded tensor-parallel, MoE and mixed jobs, small (<= 3 replicas a stage) and larger (<= 8),
    each under every reading, with the job's own co-location groups (tensor-parallel replicas)."""
    rng = np.random.default_rng({"tp": 1, "moe": 2, "mixed": 3}[kind] * 10 + max_replicas)
    mapped = 0
    for trial in range(40):
        job = llm_job(rng, kind, max_replicas)
        caps = servers(rng, job.n_replicas)
        sg, ss = READINGS[trial % 4]
        mapped += compare(job, caps, trial, sg, ss, colocation_groups(job) or None)
    assert mapped >= 20  # most draws can place their groups whole


def test_llm_stage_path_matches_edge_path_without_colocation() -> None:
    """The same jobs without the one-server rule (a tensor-parallel replica's slices may part):
    the stage path's blocks and the explicit tensor-parallel / all-to-all edges alone."""
    rng = np.random.default_rng(5)
    for trial in range(60):
        job = llm_job(rng, ("tp", "moe", "mixed")[trial % 3], 6)
        sg, ss = READINGS[trial % 4]
        assert compare(job, servers(rng, job.n_replicas), trial, sg, ss, None)


def test_stage_path_takes_colocation_groups_of_one_size_per_stage_only() -> None:
    """Caller-chosen groups: where every stage's vertices are in groups of one size (pairs across
    two stages here) the stage path runs and agrees; random groups of 2-3 vertices anywhere (a
    stage mixing sizes: its block's vertices are not interchangeable) run on the edge list, and
    agree too (on the stage path some would not)."""
    st = {"fwd_time": 0.01, "bwd_time": 0.02, "param_bytes": 3e6}
    job = PipelineJob.from_dict({"allreduce": "ring", "stages": [
        {**st, "replicas": 4, "in_bytes": 0, "out_bytes": 1e6},
        {**st, "replicas": 4, "in_bytes": 1e6, "out_bytes": 0}]})
    across = [[0, 4], [1, 5], [2, 6], [3, 7]]
    for seed, caps in enumerate(([4, 2, 2], [2, 2, 2, 2], [4, 4], [8])):
        for sg, ss in READINGS:
            assert compare(job, caps, seed, sg, ss, across)
    rng = np.random.default_rng(11)
    mapped = 0
    for trial in range(60):
        job = llm_job(rng, "mixed", 4)
        n = job.n_replicas
        perm, groups, i = rng.permutation(n), [], 0
        while i < n - 1 and len(groups) < max(1, n // 4):
            size = int(rng.integers(2, 4))
            if len(perm[i:i + size]) >= 2:
                groups.append(sorted(int(x) for x in perm[i:i + size]))
            i += size
        sg, ss = READINGS[trial % 4]
        mapped += compare(job, servers(rng, n), trial, sg, ss, groups)
    assert mapped >= 30


def test_llm_stage_graph_holds_no_pipeline_edges() -> None:
    """The point of the path: a tensor-parallel job of two stages of 16 replicas of 4 slices has
    64 x 64 pipeline edges between them; its stage graph holds one block and only the explicit
    edges (per stage: 4 data-parallel rings of 16, 16 tensor-parallel rings of 4)."""
    st = {"fwd_time": 0.01, "bwd_time": 0.02, "param_bytes": 4e6, "tensor_parallel": 4, "tp_bytes": 1e6}
    job = PipelineJob.from_dict({"allreduce": "ring", "stages": [
        {**st, "replicas": 16, "in_bytes": 0, "out_bytes": 1e6},
        {**st, "replicas": 16, "in_bytes": 1e6, "out_bytes": 0}]})
    g = _prepared(job)
    assert g.blocks == [(-2.0 * 1e6 / (4 * 16 * 4), 1)]
    assert len(g.sorted_edges) == 2 * (4 * 16 + 16 * 4)
    assert len(job.edges[0]) == 64 * 64 + 2 * (4 * 16 + 16 * 4)
