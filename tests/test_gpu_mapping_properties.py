"""Property tests (hypothesis) over arbitrary valid gpu-mapping instances.

The instances are drawn by :func:`optkit.testing.strategies.instances` (the formulation's
``sample.py``), independently of ``generate.py``: any number of stages and replicas, ring or
tree, byte sizes spanning orders of magnitude, and any split of the replicas over servers. Every algorithm must return a mapping ``evaluate`` accepts; no heuristic may beat
the proven optimum; the instance survives a JSON round trip unchanged.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optkit.formulations.gpu_mapping import FORMULATION, GpuMappingInstance
from optkit.result import Status
from optkit.solve import solve
from optkit.testing import strategies


def instances(max_replicas: int = 10) -> st.SearchStrategy[dict]:
    """gpu-mapping instance dicts from :func:`optkit.testing.strategies.instances` (any number of
    stages and replicas up to ``max_replicas``, ring or tree, bytes over orders of magnitude, any
    split of the replicas over servers of 1-8 GPUs)."""
    return strategies.instances("gpu-mapping", as_dict=True, max_replicas=max_replicas, max_stages=4,
                                max_servers=max_replicas)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_replicas=24))
def test_json_round_trip(data: dict) -> None:
    inst = GpuMappingInstance.from_dict(json.loads(json.dumps(data)))
    again = GpuMappingInstance.from_dict(json.loads(json.dumps(inst.to_dict())))
    assert again == inst and again.to_dict() == inst.to_dict()


HEURISTICS = [a for a, algo in FORMULATION.algorithms.items() if algo.kind != "exact" and algo.available()]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.sampled_from(["cut", "alpha"]), st.integers(0, 2**31 - 1))
def test_every_algorithm_feasible_and_never_better_than_the_optimum(data: dict, objective: str, seed: int) -> None:
    opt = solve("gpu-mapping", data, "cpsat", objective=objective, time_limit=60, seed=0)
    assert opt.status == Status.OPTIMAL, opt.message
    for name in HEURISTICS:
        res = solve("gpu-mapping", data, name, objective=objective, seed=seed)
        assert res.status == Status.FEASIBLE, (name, res.message)
        assert res.objective >= opt.objective * (1 - 1e-9) - 1e-12, (name, res.objective, opt.objective)


@pytest.mark.parametrize("name", sorted(FORMULATION.algorithms))
def test_every_registered_algorithm_is_listed_with_both_objectives(name: str) -> None:
    algo = FORMULATION.algorithms[name]
    assert set(algo.objectives) == {"cut", "alpha"}
