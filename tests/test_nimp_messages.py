"""nimp's bad-input messages, each the whole text: the field named, what is wrong and the value
given (the charter's rule for bad input), for the replay workload, its folder of trace files,
the pair capacities by node id and the online policies' readings."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from optkit.errors import InputError
from optkit.formulations.nimp.online import TiresiasPolicy
from optkit.formulations.nimp.place import capacity_in_file_form
from optkit.formulations.nimp.replay import generate_workload, load_workload, workload_from_dict


def _workload(**changes: Any) -> dict[str, Any]:
    d = generate_workload(0, jobs=2)
    d.update(changes)
    return d


def _cluster(**changes: Any) -> dict[str, Any]:
    return _workload(cluster=dict(_workload()["cluster"], **changes))


CASES: list[tuple[str, Callable[[], Any], str]] = [
    ("problem", lambda: workload_from_dict(_workload(problem="rar-ddls")),
     "problem must be 'nimp' for a nimp replay workload, got 'rar-ddls'"),
    ("kind", lambda: workload_from_dict(_workload(kind="tiny")),
     "kind must be 'replay' (a nimp replay workload; a single-job nimp instance is for `optkit solve`), got 'tiny'"),
    ("cluster.link_gbps", lambda: workload_from_dict(_cluster(link_gbps=0)),
     "cluster.link_gbps must be > 0, got 0"),
    ("cluster.oversubscription", lambda: workload_from_dict(_cluster(oversubscription=-1.5)),
     "cluster.oversubscription must be > 0, got -1.5"),
    ("cluster.link_gbps", lambda: workload_from_dict(_cluster(link_gbps=float("inf"))),
     "cluster.link_gbps must be a finite number, got inf"),
    ("jobs[0].submit", lambda: workload_from_dict(_workload(jobs=[{"id": "a", "submit": -1, "duration": 5,
                                                                     "workers": 1}])),
     "jobs[0].submit must be >= 0, got -1"),
    ("jobs[1].id", lambda: workload_from_dict(_workload(jobs=[{"id": 1, "submit": 0, "duration": 5, "workers": 1},
                                                              {"id": "1", "submit": 0, "duration": 5, "workers": 1}])),
     "jobs[1].id must be a unique string or integer, got '1'"),
    ("jobs[0].id", lambda: workload_from_dict(_workload(jobs=[{"id": True, "submit": 0, "duration": 5,
                                                               "workers": 1}])),
     "jobs[0].id must be a unique string or integer, got True"),
    ("jobs[0].id", lambda: workload_from_dict(_workload(jobs=[{"id": 1.5, "submit": 0, "duration": 5,
                                                               "workers": 1}])),
     "jobs[0].id must be a unique string or integer, got 1.5"),
    ("jobs[0].param_bytes", lambda: workload_from_dict(_workload(jobs=[{"id": "a", "submit": 0, "duration": 5,
                                                                        "workers": 2, "param_bytes": 0}])),
     "jobs[0].param_bytes must be > 0, got 0"),
    ("seeds", lambda: workload_from_dict(_workload(seeds=[1])),
     "seeds is not a field of a nimp replay workload (fields: problem, kind, name, cluster, iteration_s, "
     "phase_budget_s, jobs)"),
    ("pair_capacity_bytes[('a', 'a')]", lambda: capacity_in_file_form({("a", "a"): 1.0}, ["a", "b"]),
     "nimp: pair_capacity_bytes[('a', 'a')] must name two different machines of `machines`"),
    ("pair_capacity_bytes", lambda: capacity_in_file_form({("a", "b"): 1.0, ("b", "a"): 2.0}, ["a", "b"]),
     "nimp: pair_capacity_bytes gives the pair {'b', 'a'} two capacities, 1.0 and 2.0"),
    ("pair_capacity_bytes", lambda: capacity_in_file_form({("a", "b"): 1.0}, ["a", "b", "c"]),
     "nimp: pair_capacity_bytes has no capacity for the pair {'a', 'c'}"),
    ("tiresias_spread", lambda: TiresiasPolicy(tiresias_spread="widest"),
     "tiresias_spread must be emptiest, first-fit or best-fit, got 'widest'"),
]


@pytest.mark.parametrize("field, call, message", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_bad_input_is_named_with_its_value(field: str, call: Callable[[], Any], message: str) -> None:
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field == field and str(err.value) == message


def test_a_folder_of_trace_files(tmp_path: Path) -> None:
    """A folder gives its own ``cluster*.csv`` files or, failing that, those of its
    ``microsoft-itp`` folder (the traces' root); a folder with neither is named."""
    with pytest.raises(InputError) as err:
        load_workload(tmp_path)
    assert err.value.field == str(tmp_path) and str(err.value) == f"{tmp_path} is a folder without ITP cluster*.csv files"
    d = tmp_path / "microsoft-itp"
    d.mkdir()
    (d / "cluster01.csv").write_text("job_id,submission_time,duration,num_gpu\nx,10,600,2\ny,5,60,1\n")
    jobs, topo, cfg = load_workload(tmp_path)
    assert [(j.id, j.submit, j.duration, j.workers) for j in jobs] == [("cluster01/y", 5.0, 60.0, 1), ("cluster01/x", 10.0, 600.0, 2)]
    assert load_workload(d)[0] == jobs and topo.machines == 512


def test_generate_workload_defaults() -> None:
    """The documented defaults: 200 jobs on 4 racks of 4 machines of 8 GPUs, one arrival every 600 s
    on average, a median duration of 2 h (lognormal, sigma 1: half the unclipped durations below)."""
    import math
    import statistics

    d = generate_workload(3)
    assert d == generate_workload(3, jobs=200, racks=4, machines_per_rack=4, gpus_per_machine=8,
                                  mean_interarrival_s=600.0, median_duration_s=7200.0)
    assert d["cluster"] == {"racks": 4, "machines_per_rack": 4, "gpus_per_machine": 8, "link_gbps": 100.0,
                            "oversubscription": 1.0}
    assert len(d["jobs"]) == 200 and d["name"] == "nimp-replay-seed3"
    durs = [j["duration"] for j in d["jobs"]]
    assert abs(math.log(statistics.median(durs)) - math.log(7200.0)) < 0.25
    assert d["jobs"][-1]["submit"] / 200 == pytest.approx(600.0, rel=0.25)


def test_a_fraction_of_a_byte_is_a_valid_k() -> None:
    """K must be > 0 bytes, not >= 1: 0.5 B is accepted as given."""
    jobs, _, _ = workload_from_dict(_workload(jobs=[{"id": "a", "submit": 0, "duration": 5, "workers": 2,
                                                     "param_bytes": 0.5}]))
    assert jobs[0].param_bytes == 0.5


def test_summary_of_a_replay_with_two_instants() -> None:
    """One 1-GPU job of 10 s: the series has two instants (its start and its end), enough for the
    time averages (one machine used, 7 of its 8 GPUs idle); cut at its start, one instant: only
    the policy, the jobs and the wall time."""
    from optkit.formulations.nimp.online import HivedPolicy
    from optkit.formulations.nimp.replay import replay, summarize

    jobs, topo, cfg = workload_from_dict(_workload(jobs=[{"id": "a", "submit": 0, "duration": 10, "workers": 1}]))
    res = replay(jobs, HivedPolicy(), topo=topo, config=cfg)
    assert len(res.series["t"]) == 2
    s = summarize(res)
    assert s["used_machines_avg"] == 1.0 and s["fragmentation_rate_avg"] == 7 / 8 and s["horizon_h"] == 10 / 3600
    assert set(summarize(res, until=0.0)) == {"policy", "jobs", "replay_wall_s"}


@pytest.mark.parametrize("gpus, capacity, message", [
    (None, 1.0, "nimp: gpus is required (K_s of each machine)"),
    ([4, 4], "wide", "nimp: capacity must be a number or an M x M matrix of numbers, got 'wide'"),
    ([4, 4], [[0.0, -1.0], [-1.0, 0.0]], "nimp: capacity must hold numbers >= 0 (bytes per phase)"),
    ([4, 4], [[0.0, 1.0, 2.0]], "nimp: capacity must be a number or an 2 x 2 matrix (one row and column per "
                                "machine), got shape (1, 3)"),
    ([4, 4], [[0.0, 1.0], [2.0, 0.0]], "nimp: capacity must be symmetric (the capacity of the unordered pair "
                                       "{s, s'}), but [0][1] = 1 and [1][0] = 2"),
    ([4, 4], -2.0, "nimp: capacity must be a number >= 0 (bytes per phase), got -2.0"),
])
def test_titans_arguments_are_checked_with_their_names(gpus: object, capacity: object, message: str) -> None:
    """Titan's typed entry (the replay's and the online policy's) checks its arguments as an
    instance file's fields are, naming ``gpus`` or ``capacity``."""
    from optkit.formulations.nimp.model import ring_phases
    from optkit.formulations.nimp.titan import titan

    with pytest.raises(InputError) as err:
        titan(gpus, [4, 4], capacity, ring_phases(2, 1e8), workers=2)  # type: ignore[arg-type]
    assert str(err.value) == message and err.value.field == message.split(" ")[1]
