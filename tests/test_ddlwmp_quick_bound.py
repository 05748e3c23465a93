"""ddlwmp's quick lower bound (optkit.formulations.ddlwmp.bounds.quick_lower_bound), the harness's
fallback where the exact alpha^min enumeration would take hours.

Oracle: the exact ``alpha_i^min`` (every placement enumerated, :func:`alpha_min_exact`) on the
36 shipped tiny instances: ``alpha^lo <= alpha^min`` for every model, so the quick LB1/LB2 are
<= the exact ones, which are <= every schedule's objective.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optkit.formulations.ddlwmp.bounds import alpha_min_lower, lower_bound, quick_lower_bound
from optkit.formulations.ddlwmp.exact import alpha_min_exact
from optkit.formulations.ddlwmp.model import OBJECTIVES, DdlwmpInstance
from optkit.formulations.gpu_mapping.model import Cluster, PipelineJob

TINY = sorted((Path(__file__).resolve().parents[1] / "instances" / "ddlwmp" / "tiny").glob("*.json"))


@pytest.mark.parametrize("path", TINY[::3], ids=lambda p: p.stem)
def test_quick_bound_is_below_the_exact_one(path: Path) -> None:
    inst = DdlwmpInstance.from_dict(json.loads(path.read_text()))
    mc = inst.cluster.mapping_cluster
    for name in {j.model for j in inst.jobs}:
        lo, exact = alpha_min_lower(inst.models[name], mc), alpha_min_exact(inst, name)
        assert 0 < lo <= exact * (1 + 1e-12)
    for objective in OBJECTIVES:
        assert quick_lower_bound(inst, objective) <= lower_bound(inst, objective) * (1 + 1e-12) + 1e-9


def test_alpha_lo_by_hand() -> None:
    """Two stages of 2 replicas on g = 4, B_inter = 1e9, B_intra = 1e11: per byte of neighbour
    data min(4/1e9, 1/1e11) = 1e-11 s; AllReduce data 2(2-1)h/2 = h, cheapest inside a server
    (k = 2 <= g): h/1e11. Stage 0: 0.03 + 2·1e6·1e-11 + 1e8/1e11 = 0.03102; stage 1: 0.03 +
    2·1e6·1e-11 + 1e6/1e11 = 0.03003. alpha^lo = max = 0.03102."""
    job = PipelineJob.from_dict({"allreduce": "ring", "stages": [
        {"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0, "out_bytes": 1e6, "param_bytes": 1e8},
        {"replicas": 2, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 1e6, "out_bytes": 0, "param_bytes": 1e6}]})
    assert alpha_min_lower(job, Cluster(4, 1e9, 1e11)) == pytest.approx(0.03102)
