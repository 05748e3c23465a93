"""The per-stage table phi of the alpha lower bound (formulations/gpu_mapping/bounds.py,
``stage_phi``) against its definition in the module docstring, enumerated one server column at
a time: phi_s(b, c) = min over a, d of beta_s(a, b, d) with 0 <= a <= k_{s-1}, 0 <= d <= k_{s+1},
a + b + d <= c and a + b + d >= c - rest_s."""

from __future__ import annotations

import numpy as np
import pytest

from optkit.formulations.gpu_mapping.bounds import stage_phi
from optkit.formulations.gpu_mapping.model import Cluster, GpuMappingInstance, PipelineJob, Stage, stage_times


def _instance(allreduce: str) -> GpuMappingInstance:
    job = PipelineJob((Stage(3, 0.02, 0.04, 0.0, 4e6, 5e8), Stage(2, 0.03, 0.06, 6e6, 2e6, 1e8),
                       Stage(2, 0.01, 0.02, 2e6, 1e6, 3e7), Stage(1, 0.01, 0.02, 2e6, 0.0, 1e7)), allreduce)
    return GpuMappingInstance(Cluster(4, 1.25e9, 3e11), job, (4, 3, 1))


def _phi_by_definition(inst: GpuMappingInstance, s: int) -> dict[int, dict[int, float]]:
    k = [int(x) for x in inst.job.replicas]
    S, n = len(k), sum(k)
    kp = k[s - 1] if s > 0 else 0
    kn = k[s + 1] if s + 1 < S else 0
    rest = n - kp - k[s] - kn
    phi: dict[int, dict[int, float]] = {}
    for c in set(inst.servers):
        for b in range(1, min(k[s], c) + 1):
            for a in range(kp + 1):
                for d in range(kn + 1):
                    if not c - rest <= a + b + d <= c:
                        continue
                    x = np.zeros((S, 1))
                    x[s, 0] = b
                    if s > 0:
                        x[s - 1, 0] = a
                    if s + 1 < S:
                        x[s + 1, 0] = d
                    v = float(stage_times(inst.job, inst.cluster, x)[s, 0])
                    phi.setdefault(c, {})[b] = min(v, phi.get(c, {}).get(b, np.inf))
    return phi


@pytest.mark.parametrize("allreduce", ["ring", "tree"])
def test_stage_phi_is_its_definition(allreduce: str) -> None:
    inst = _instance(allreduce)
    for s in range(4):
        got = stage_phi(inst, s)
        want = _phi_by_definition(inst, s)
        assert set(got) == set(want), s
        for c in want:
            assert set(got[c]) == set(want[c]), (s, c)
            for b in want[c]:
                assert got[c][b] == pytest.approx(want[c][b], rel=1e-12), (s, c, b)
