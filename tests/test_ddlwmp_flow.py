"""The ddlwmp simulation path runs one way (issue 36 item 3): a Sec. V run enters the driver, the
policy, the placement and ``evaluate`` once each, in that order, and never calls back into an
earlier room; ``benchmarks/flow_trace.py``'s tracer (its rules in its docstring) checks it on a
small instance, and catches the path as it was (the policy built before the driver)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from optkit.formulations.ddlwmp import sec5
from optkit.formulations.ddlwmp.generate import generate
from optkit.formulations.ddlwmp.model import evaluate
from optkit.formulations.ddlwmp.readings import READINGS
from optkit.formulations.ddlwmp.simulate import simulate

ROOT = Path(__file__).resolve().parents[1]


def _flow_trace() -> Any:
    spec = importlib.util.spec_from_file_location("flow_trace", ROOT / "benchmarks" / "flow_trace.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def inst() -> Any:
    # three models at least, some jobs multi-GPU: the placement has work, alpha~min differs per model
    return sec5.instance_of(generate(jobs=40, servers=2, load=0.8, seed=3, predictor=None))


READ = {x.name: x.default for x in READINGS}
POLICIES = ("a-srpt", "a-srpt-perfect", "spjf", "wcs-subtime", "fifo")


def test_each_run_enters_driver_policy_placement_evaluate_once(inst: Any) -> None:
    ft = _flow_trace()
    tr = ft.ddlwmp_tracer()
    runs = tr.run(lambda: sec5.compare(inst, READ, 0, policies=POLICIES))
    checked = ft.check(tr)
    assert [name for name, _ in tr.runs] == list(POLICIES)
    for name in POLICIES:
        c = checked[name]
        # fifo and wcs-subtime never ask alpha~min while they run: their readout reads the values
        # the placer computed when built (a miss would enter the placement after evaluate)
        assert [n.room for n in c["walk"]] == ["driver", "policy", "placement", "evaluate"], name
        assert c["re_entries"] == [] and c["climbs"] == {}, name
    # the readout still reads alpha~min (no placement entry: reads only) and gives the same numbers
    assert any(k[3] == "placement" and k[4] == "Placer.alpha_min" and k[0] == "fifo" for k in tr.reads)
    assert runs["fifo"] == sec5.run_policy_readout(inst, "fifo", READ, 0) | {"wall_s": runs["fifo"]["wall_s"]}


def test_the_tracer_catches_the_old_path(inst: Any) -> None:
    """Built at the orchestrator (placer, then policy) before the driver, the path enters the
    policy and the placement twice: the tracer counts both re-entries."""
    ft = _flow_trace()

    def old_run(name: str) -> float:
        pol = sec5.policy_for(inst, name, READ, 0)
        return evaluate(inst, simulate(inst, pol)).objectives["total_completion"]

    tr = ft.ddlwmp_tracer(old_run)
    tr.run(lambda: old_run("spjf"))
    c = ft.check(tr)["spjf"]
    assert [n.room for n in c["walk"]] == ["policy", "placement", "driver", "policy", "placement", "evaluate"]
    assert [n.room for n in c["re_entries"]] == ["policy", "placement"]


def test_a_nimp_replay_enters_driver_policy_placement_evaluate_once() -> None:
    """nimp's replay (the same rules): the driver builds the policy (``replay_policy``), the policy
    reserves its starts in the view, whose network state (``network.ClusterState``) takes the GPUs
    and the bandwidth, and the driver records them after ``decide``: no call from the policy back
    into the driver, none into the instance (the fat tree's sizes are values).

    The phase and collective caches are emptied first, so the walk is the same whichever test ran
    before on this worker (a cold ``model._hd_phases`` is an equation: transparent, not the instance)."""
    import importlib

    from optkit.formulations.nimp import model
    from optkit.formulations.nimp.replay import generate_workload, replay_policy, summarize, workload_from_dict

    model._hd_phases.cache_clear()
    importlib.import_module("optkit.formulations.nimp.titan")._COLLECTIVES_BY_PHASES.clear()

    ft = _flow_trace()
    jobs, topo, cfg = workload_from_dict(generate_workload(1, jobs=60, racks=2, machines_per_rack=2))

    def run(policy: str) -> dict[str, Any]:
        return summarize(replay_policy(jobs, policy, {}, topo=topo, config=cfg))

    tr = ft.nimp_tracer(run)
    out = tr.run(lambda: [run(p) for p in ("titan", "tiresias")])
    checked = ft.check(tr)
    for name in ("titan", "tiresias"):
        assert [n.room for n in checked[name]["walk"]] == ["driver", "policy", "placement", "evaluate"], name
        assert checked[name]["re_entries"] == [] and checked[name]["climbs"] == {}, name
    assert out[0]["multi_machine_jobs"] > 0  # Titan placed over machines: P and the traffic were read
    placed = dict(tr.runs)["titan"].children[0].children[0].children[0].functions
    assert "place_with_and_without_capacity" in placed


def test_the_registered_runs_flow_one_way(inst: Any) -> None:
    """``optkit solve``'s runs (``algorithms.run_a_srpt``, a baseline's): the driver builds the policy,
    which builds its placer, then drives it: driver -> policy -> placement, once each."""
    from optkit.formulations.ddlwmp import FORMULATION

    ft = _flow_trace()

    def solve_run(name: str) -> Any:
        return FORMULATION.algorithms[name].run(inst, seed=0)

    tr = ft.ddlwmp_tracer(solve_run)
    tr.run(lambda: [solve_run(p) for p in ("a-srpt", "wcs-subtime")])
    checked = ft.check(tr)
    for name in ("a-srpt", "wcs-subtime"):
        assert [n.room for n in checked[name]["walk"]] == ["driver", "policy", "placement"], name
        assert checked[name]["climbs"] == {}, name
