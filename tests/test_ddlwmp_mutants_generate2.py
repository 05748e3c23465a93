"""ddlwmp's generators: facts that surviving mutants of the seed-0 sample at d6046ca broke (issue 36
item 5): the fields refusals name, what ``meta`` records, the release's millisecond rounding,
GPU weights below 1, the trace's order, the owners of few groups and the size classes' names."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.ddlwmp.generate import SIZE_CLASSES, from_trace, generate, group_owners, tiny


def _records(times: list[float], gpus: int = 2) -> list[dict[str, Any]]:
    return [{"submission_time": t, "duration": 600.0 + 60 * i, "num_gpu": gpus} for i, t in enumerate(times)]


def _refused(call: Any) -> InputError:
    with pytest.raises(InputError) as info:
        call()
    return info.value


def test_meta_params_record_servers_and_min_recurrence_by_name() -> None:
    d = generate(jobs=12, servers=3, gpus_per_server=4, min_recurrence=4, seed=1, predictor=None)
    params = d["meta"]["params"]
    assert params["servers"] == 3 and params["min_recurrence"] == 4 and params["jobs"] == 12


def test_poisson_releases_are_rounded_to_the_millisecond() -> None:
    """Releases are ``round(t, 3)``: at least one has a fractional part, and each equals its own rounding."""
    d = generate(jobs=20, servers=2, gpus_per_server=4, seed=3, predictor=None)
    rel = [j["release"] for j in d["jobs"]]
    assert any(r != int(r) for r in rel) and all(r == round(r, 3) for r in rel)


def test_gpu_weights_below_one_are_drawn() -> None:
    """A weight only has to be positive: {2: 0.5, 4: 0.5} draws both demands (0 < w, not w > 1)."""
    d = generate(jobs=40, servers=2, gpus_per_server=4, gpu_weights={2: 0.5, 4: 0.5}, single_gpu_share=0.0,
                 seed=0, predictor=None)
    gpus = {sum(st["replicas"] for st in d["models"][j["model"]]["stages"]) for j in d["jobs"]}
    assert gpus == {2, 4}, gpus


def test_tiny_names_the_jobs_field() -> None:
    assert _refused(lambda: tiny(0, jobs=0)).field == "jobs"


def test_from_trace_names_its_fields_and_keeps_one_gpu_servers() -> None:
    recs = _records([0.0, 10.0, 20.0], gpus=1)
    assert _refused(lambda: from_trace(recs, servers=1, start=-1, predictor=None)).field == "start"
    bad = [{"submission_time": 0.0, "num_gpu": 1}]
    err = _refused(lambda: from_trace(bad, servers=1, predictor=None))
    assert err.field == "records[0].duration" and "is required" in err.message
    d = from_trace(recs, servers=2, gpus_per_server=1, predictor=None)  # one GPU per server is a cluster
    assert d["cluster"]["gpus_per_server"] == 1 and len(d["jobs"]) == 3


def test_from_trace_sorts_records_by_submission_and_names_its_source() -> None:
    recs = _records([30.0, 10.0, 20.0])
    d = from_trace(recs, servers=2, gpus_per_server=4, predictor=None)
    assert [j["release"] for j in d["jobs"]] == [0.0, 10.0, 20.0]
    assert [j["trace_duration"] for j in d["jobs"]] == [660.0, 720.0, 600.0]
    assert d["meta"]["trace"] == "records"


def test_few_groups_have_one_owner() -> None:
    """About one user per five groups, at least one: up to two groups share a single owner."""
    for seed in range(20):
        assert len(set(group_owners(2, np.random.default_rng(seed)))) == 1


def test_size_classes_name_each_instance_as_tiny_does() -> None:
    cases = SIZE_CLASSES["3-6 jobs"].build()
    assert [name for name, _ in cases] == [tiny(s)["name"] for s in range(6)]
    assert all(name == d["name"] for name, d in cases)
