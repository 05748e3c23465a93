"""The faster ddlwmp paths against the pre-speedup implementations (tests/ddlwmp_reference.py)."""

from __future__ import annotations

import copy
from functools import lru_cache

import pytest

from optkit.formulations.ddlwmp.a_srpt import ASRPT
from optkit.formulations.ddlwmp.generate import generate
from optkit.formulations.ddlwmp.model import DdlwmpInstance, evaluate
from optkit.formulations.ddlwmp.simulate import simulate
from tests.ddlwmp_reference import evaluate_reference


@lru_cache(maxsize=None)
def _case(share: float, seed: int) -> tuple[DdlwmpInstance, dict]:
    inst = DdlwmpInstance.from_dict(generate(jobs=400, servers=12, single_gpu_share=share, seed=seed))
    return inst, simulate(inst, ASRPT(inst.cluster, inst.models, seed=0))


@pytest.mark.parametrize("share,seed", [(0.8, 0), (0.3, 1)])
def test_evaluate_matches_reference_on_a_simulated_schedule(share: float, seed: int) -> None:
    inst, sched = _case(share, seed)
    new, old = evaluate(inst, sched), evaluate_reference(inst, sched)
    assert new.feasible and old.feasible
    assert new.objectives == old.objectives and new.metrics == old.metrics


def _crowd(sched: dict) -> dict:
    """Move the 40th job onto the servers and start of the 41st: a capacity violation somewhere."""
    s = copy.deepcopy(sched)
    a, b = s["jobs"][40], s["jobs"][41]
    a["start"] = b["start"]
    a["assignment"] = [[b["assignment"][0][0]] * len(row) for row in a["assignment"]]
    a.pop("completion", None)
    return s


@pytest.mark.parametrize("change", [
    _crowd,
    lambda s: {"jobs": s["jobs"][:-3]},
    lambda s: {"jobs": s["jobs"] + [dict(s["jobs"][5])]},
    lambda s: {"jobs": [dict(j, start=j["start"] + 0.5) if i % 7 == 0 else j for i, j in enumerate(s["jobs"])]},
    lambda s: {"jobs": [dict(j, assignment=[[99] * len(r) for r in j["assignment"]]) if i == 3 else j
                        for i, j in enumerate(s["jobs"])]},
    lambda s: {"jobs": [dict(j, completion=j["completion"] * 1.01) if i == 9 else j for i, j in enumerate(s["jobs"])]},
    lambda s: {"jobs": [dict(j, start=0.0) for j in s["jobs"]]},   # everything at once: releases and capacity
])
def test_evaluate_matches_reference_on_broken_schedules(change) -> None:  # type: ignore[no-untyped-def]
    inst, sched = _case(0.3, 1)
    bad = change(copy.deepcopy(sched))
    new, old = evaluate(inst, bad), evaluate_reference(inst, bad)
    assert not old.feasible
    assert new.feasible == old.feasible and new.violations == old.violations


@pytest.mark.parametrize("share,seed,perfect", [(0.8, 0, False), (0.3, 1, True), (0.0, 2, False)])
def test_simulate_matches_reference(share: float, seed: int, perfect: bool) -> None:
    """Same schedule (starts, completions, placements) and the same number of instants as the
    generic EventQueue driver, for A-SRPT and a queue baseline."""
    from optkit.formulations.ddlwmp.baselines import SPJF, WCSDuration
    from tests.ddlwmp_reference import simulate_reference

    inst = DdlwmpInstance.from_dict(generate(jobs=300, servers=6, single_gpu_share=share, seed=seed))
    policies = [lambda: ASRPT(inst.cluster, inst.models, seed=0)]
    policies += [lambda cls=cls: cls(inst.cluster, inst.models, seed=0) for cls in (SPJF, WCSDuration)]
    for make in policies:
        st_new: dict = {}
        st_old: dict = {}
        new = simulate(inst, make(), perfect=perfect, stats=st_new)
        old = simulate_reference(inst, make(), perfect=perfect, stats=st_old)
        assert new == old
        assert st_new["instants"] == st_old["instants"]
