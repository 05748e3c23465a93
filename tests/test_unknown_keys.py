"""One unknown-key policy for the instance files of every problem (optkit.validation.known_keys).

``name``, ``meta`` and ``comment`` are allowed in every object and carry no meaning; any other
unknown key is an :class:`InputError` naming the key's path and the closest valid key. Each
case edits a shipped instance file (``instances/``): one line per case.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from optkit import registry
from optkit.errors import InputError

INSTANCES = Path(__file__).resolve().parents[1] / "instances"
BASE = {
    "gpu-mapping": "gpu-mapping/small",
    "ddlwmp": "ddlwmp/tiny",
    "nimp": "nimp/tiny",
    "rar-ddls": "rar-ddls/tiny",
}


def base(problem: str) -> dict[str, Any]:
    return json.loads(sorted((INSTANCES / BASE[problem]).glob("*.json"))[0].read_text())


def put(path: tuple[Any, ...], key: str, value: Any = 1) -> Callable[[dict[str, Any]], None]:
    """An edit that sets ``d[path...][key] = value``."""
    def edit(d: dict[str, Any]) -> None:
        for p in path:
            d = d[p]
        d[key] = value
    return edit


def first_model(d: dict[str, Any]) -> str:
    return sorted(d["models"])[0]


# (problem, where to add the key, key, expected field in the error, expected suggestion or None)
MISSPELT = [
    ("gpu-mapping", ("cluster",), "inter_bandwith", "cluster.inter_bandwith", "inter_bandwidth"),
    ("gpu-mapping", (), "servres", "servres", "servers"),
    ("gpu-mapping", ("job",), "allreduc", "job.allreduc", "allreduce"),
    ("gpu-mapping", ("job", "stages", 0), "fwd_tme", "job.stages[0].fwd_tme", "fwd_time"),
    ("ddlwmp", ("cluster",), "slot_second", "cluster.slot_second", "slot_seconds"),
    ("ddlwmp", (), "job", "job", "jobs"),
    ("ddlwmp", ("jobs", 0), "predicted_iteration", "jobs[0].predicted_iteration", "predicted_iterations"),
    ("nimp", (), "pair_capacity", "pair_capacity", "pair_capacity_bytes"),
    ("nimp", ("machines", 0), "idle_gpu", "machines[0].idle_gpu", "idle_gpus"),
    ("nimp", ("job",), "worker", "job.worker", "workers"),
    ("rar-ddls", (), "horizn", "horizn", "horizon"),
    ("rar-ddls", ("network",), "xi_1", "network.xi_1", "xi1"),
    ("rar-ddls", ("jobs", 0), "grad_byte", "jobs[0].grad_byte", "grad_bytes"),
    ("rar-ddls", (), "zzz", "zzz", None),
]


@pytest.mark.parametrize("problem, path, key, field, suggestion", MISSPELT)
def test_an_unknown_key_names_itself_and_the_closest_valid_key(problem: str, path: tuple[Any, ...], key: str,
                                                                field: str, suggestion: str | None) -> None:
    d = base(problem)
    put(path, key)(d)
    with pytest.raises(InputError) as info:
        registry.get(problem).instance_from_dict(d)
    assert info.value.field == field
    if suggestion is None:
        assert "did you mean" not in info.value.message
    else:
        assert f"did you mean {suggestion!r}?" in info.value.message


FREE = [(p, path) for p in BASE for path in [()]] + [
    ("gpu-mapping", ("cluster",)), ("gpu-mapping", ("job",)), ("gpu-mapping", ("job", "stages", 0)),
    ("ddlwmp", ("cluster",)), ("ddlwmp", ("jobs", 0)),
    ("nimp", ("machines", 0)), ("nimp", ("job",)),
    ("rar-ddls", ("network",)), ("rar-ddls", ("jobs", 0)),
]


@pytest.mark.parametrize("problem, path", FREE)
@pytest.mark.parametrize("key", ["name", "meta", "comment"])
def test_name_meta_comment_are_allowed_everywhere(problem: str, path: tuple[Any, ...], key: str) -> None:
    d = base(problem)
    put(path, key, "free text" if key != "meta" else {"source": "test"})(d)
    registry.get(problem).instance_from_dict(d)  # no error


def test_a_misspelt_model_field_of_ddlwmp_is_rejected_too() -> None:
    """ddlwmp's models are gpu-mapping jobs: the policy reaches them, with their path."""
    d = base("ddlwmp")
    m = first_model(d)
    d["models"][m]["stages"][0]["param_byte"] = 1.0
    with pytest.raises(InputError) as info:
        registry.get("ddlwmp").instance_from_dict(copy.deepcopy(d))
    assert info.value.field == f"models.{m}.stages[0].param_byte" and "'param_bytes'" in info.value.message
