"""gpu-mapping jobs above the old 4,096-GPU cap (issue 37: 16,384-GPU clusters).

``MAX_REPLICAS`` is 16,384; above ``EDGE_LIST_MAX`` (4,096) ``cut_weight`` and ``vertex_times``
count each complete bipartite set of pipeline edges per server instead of listing the edges. The
structured sums are checked against the edge-by-edge ones on seeded jobs by lowering the switch
(monkeypatch), and the edges they are built from against ``job_edges`` bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.gpu_mapping import Cluster, PipelineJob, model
from optkit.formulations.gpu_mapping.model import (
    MAX_REPLICAS, Stage, cut_weight, pipeline_weights, stage_edges, vertex_times,
)
from tests.test_gpu_mapping_llm_stage_path import llm_job

CLUSTER = Cluster(4, 1.25e9, 3e11)


def _jobs(seed: int, count: int) -> list[PipelineJob]:
    rng = np.random.default_rng(seed)
    return [llm_job(rng, ("tp", "moe", "mixed")[i % 3], 6) for i in range(count)]


def test_stage_edges_and_pipeline_weights_are_the_job_graph_bit_for_bit() -> None:
    """Each stage's edges (stage_edges) and, between consecutive stages, every pair at
    pipeline_weights[s]: exactly job_edges (same pairs, same floating-point weights)."""
    for job in _jobs(1, 45):
        want = {(int(a), int(b)): float(x) for a, b, x in zip(*job.edges)}
        got: dict[tuple[int, int], float] = {}
        off = [int(o) for o in job.offsets]
        for s in range(len(job.stages)):
            for a, b, x in zip(*stage_edges(job, s)):
                got[(int(a) + off[s], int(b) + off[s])] = float(x)
        for s, w in enumerate(pipeline_weights(job)):
            if s and w != 0.0:
                got.update({(a, b): w for a in range(off[s - 1], off[s]) for b in range(off[s], off[s + 1])})
        assert got == want, job.to_dict()


def test_structured_cut_and_times_equal_the_edge_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above EDGE_LIST_MAX (lowered to 0 here), cut_weight and vertex_times on random mappings agree
    with the edge-by-edge sums to a relative 1e-12 (the same terms in another order)."""
    rng = np.random.default_rng(2)
    cases = []
    for job in _jobs(3, 45):
        for _ in range(3):
            sv = rng.integers(0, int(rng.integers(1, 6)), job.n_replicas)
            cases.append((job, sv, cut_weight(job, sv), vertex_times(job, CLUSTER, sv)))
    monkeypatch.setattr(model, "EDGE_LIST_MAX", 0)
    for job, sv, cut, beta in cases:
        got = cut_weight(job, sv)
        assert type(got) is float and got == pytest.approx(cut, rel=1e-12, abs=1e-6), job.to_dict()
        np.testing.assert_allclose(vertex_times(job, CLUSTER, sv), beta, rtol=1e-12)


def test_max_replicas_is_the_16k_cluster() -> None:
    """A job of 16,384 GPUs is valid (issue 37's largest cluster); one more is bad input naming
    job.stages."""
    assert MAX_REPLICAS == 16_384
    st = {"fwd_time": 0.01, "bwd_time": 0.02, "param_bytes": 1e6}
    PipelineJob((Stage(8192, **st, in_bytes=0, out_bytes=1e6), Stage(8192, **st, in_bytes=1e6, out_bytes=0)), "ring")
    with pytest.raises(InputError) as info:
        PipelineJob((Stage(8192, **st, in_bytes=0, out_bytes=1e6), Stage(8193, **st, in_bytes=8192e6 / 8193,
                                                                          out_bytes=0)), "ring")
    assert info.value.field == "job.stages"
