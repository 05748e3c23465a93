"""The declared readings of ddlwmp are the keywords its algorithms take, with the same defaults."""

from __future__ import annotations

import inspect

import pytest

from optkit.formulations.ddlwmp import FORMULATION
from optkit.formulations.ddlwmp.a_srpt import ASRPT
from optkit.formulations.ddlwmp.policies import QueuePolicy
from optkit.errors import InputError
from optkit.readings import readings_for, resolve_params
from optkit.solve import solve
from tests.ddlwmp_cases import random_instance_dict


def _target(name: str):
    run = FORMULATION.algorithms[name].run
    fn = getattr(run, "target", None)
    return fn() if callable(fn) else run


@pytest.mark.parametrize("algorithm", sorted(FORMULATION.algorithms))
def test_every_reading_is_an_explicit_keyword_with_the_declared_default(algorithm: str) -> None:
    params = inspect.signature(_target(algorithm)).parameters
    assert not any(p.kind is p.VAR_KEYWORD for p in params.values()), "readings must be explicit keywords"
    for r in readings_for(FORMULATION, algorithm):
        assert r.name in params, f"{algorithm} does not take reading {r.name}"
        assert params[r.name].kind is params[r.name].KEYWORD_ONLY
        assert params[r.name].default == r.default, (algorithm, r.name)
        assert r.name in (_target(algorithm).__doc__ or ""), f"{algorithm}'s docstring does not name {r.name}"


def test_policy_classes_default_to_the_declared_readings() -> None:
    asrpt = inspect.signature(ASRPT.__init__).parameters
    queue = inspect.signature(QueuePolicy.__init__).parameters
    for r in FORMULATION.readings:
        users = [a for a in r.algorithms]
        if any(a.startswith("a-srpt") for a in users):
            assert asrpt[r.name].default == r.default, r.name
        elif users:
            assert queue[r.name].default == r.default, r.name


def test_resolve_params_fills_every_a_srpt_reading() -> None:
    got = resolve_params(FORMULATION, "a-srpt", {"tau": "3"})
    assert got == {"comm_heavy": 1.5, "comm_heavy_test": "ge", "delay_blocks_queue": True, "head_of_line": "strict",
                   "light_placement": "best-fit", "tau": 3}
    # the baselines' better option (issue 23)
    assert resolve_params(FORMULATION, "fifo", None) == {"consolidate": False}


def test_bad_reading_values_are_input_errors_naming_the_parameter() -> None:
    data = random_instance_dict(0)
    with pytest.raises(InputError, match="light_placement"):
        solve("ddlwmp", data, "a-srpt", params={"light_placement": "worst-fit"})
    with pytest.raises(InputError, match="tau"):
        solve("ddlwmp", data, "a-srpt", params={"tau": -1})
    with pytest.raises(InputError, match="tau"):
        solve("ddlwmp", data, "spjf", params={"tau": 1})
