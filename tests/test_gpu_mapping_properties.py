"""Property tests (hypothesis) over arbitrary valid gpu-mapping instances.

The instances are drawn here, independently of ``generate.py``: any number of stages and
replicas, ring or tree, byte sizes spanning orders of magnitude, and any split of the replicas
over servers. Every algorithm must return a mapping ``evaluate`` accepts; no heuristic may beat
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


@st.composite
def instances(draw: st.DrawFn, max_replicas: int = 10) -> dict:
    g = draw(st.integers(1, 8))
    n_stages = draw(st.integers(1, 4))
    reps = [draw(st.integers(1, 4)) for _ in range(n_stages)]
    while sum(reps) > max_replicas:
        reps[reps.index(max(reps))] -= 1
    size = st.sampled_from([0.0, 1e3, 3.3e5, 1e6, 2.5e7, 4e8])
    stages = []
    for s, k in enumerate(reps):
        out = 0.0 if s == n_stages - 1 else draw(size)
        in_bytes = 0.0 if s == 0 else stages[-1]["out_bytes"] * reps[s - 1] / k
        stages.append({"replicas": k, "fwd_time": draw(st.floats(1e-4, 0.2)), "bwd_time": draw(st.floats(1e-4, 0.4)),
                       "in_bytes": in_bytes, "out_bytes": out, "param_bytes": draw(size)})
    n = sum(reps)
    servers = []
    left = n
    while left:
        c = draw(st.integers(1, min(g, left)))
        servers.append(c)
        left -= c
    servers = draw(st.permutations(servers))
    return {"problem": "gpu-mapping",
            "cluster": {"gpus_per_server": g, "inter_bandwidth": draw(st.sampled_from([1.25e8, 1.25e9, 1.25e10])),
                        "intra_bandwidth": draw(st.sampled_from([3e10, 3e11]))},
            "job": {"allreduce": draw(st.sampled_from(["ring", "tree"])), "stages": stages},
            "servers": list(servers)}


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
