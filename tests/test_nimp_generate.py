"""nimp's seeded generators (formulations/nimp/generate.py): each suite's documented rules checked
on every instance it draws (tiny's infeasible seeds, medium's idle machines, the Sec. V-B cluster),
``generate``'s kinds, and the arguments' checks."""

from __future__ import annotations

import pytest

from optkit.errors import InputError
from optkit.formulations.nimp.generate import (K_BYTES, SIZE_CLASSES, SUITES, cluster, generate, medium,
                                               replay_workload, tiny)

FACTORS = {0.0, 0.125, 0.25, 0.5, 1.0, 4.0}


def _idle(d: dict) -> int:
    return sum(m["idle_gpus"] for m in d["machines"])


@pytest.mark.parametrize("seed", [*range(36), 292])
def test_tiny_follows_its_rules(seed: int) -> None:
    """Every tiny instance (the suite's 36 and seed 292, where a 2-machine cluster is too small for
    8 workers at seed = 4 mod 9): 1-8 workers, machines of 2 or 4 GPUs, K = 1e8 B, HD only for a
    power of two, P from {0, 1/8, 1/4, 1/2, 1, 4}·K (a symmetric matrix with a zero diagonal at seed
    = 4 mod 5); at seed = 8 mod 9 fewer idle GPUs than workers (none for one worker); at seed = 4
    mod 9 with more than one worker, P = 0, no machine with the job's workers idle nor a whole idle
    machine, and enough idle GPUs in all."""
    d = tiny(seed)
    n, ms, cap = d["job"]["workers"], d["machines"], d["pair_capacity_bytes"]
    assert d["problem"] == "nimp" and d["job"]["param_bytes"] == K_BYTES
    assert n in {1, 2, 3, 4, 5, 6, 8}
    assert all(m["gpus"] in (2, 4) and 0 <= m["idle_gpus"] <= m["gpus"] for m in ms)
    assert (d["job"]["collective"] == "ring") if n & (n - 1) else d["job"]["collective"] in ("ring", "halving-doubling")
    assert set(d["job"]) - {"workers", "collective", "param_bytes"} in (set(), {"model"}, {"placement_sensitive"})
    if "model" in d["job"]:
        assert d["job"]["model"] in ("vgg16", "resnet50", "alexnet", "inception3")
    bandwidth_infeasible = seed % 9 == 4 and n > 1
    if bandwidth_infeasible:
        assert cap == 0.0 and _idle(d) >= n
        assert all(m["idle_gpus"] <= n - 1 and m["idle_gpus"] < m["gpus"] for m in ms)
        assert 2 <= len(ms) <= 7
    else:
        assert 2 <= len(ms) <= 6
        if seed % 5 == 4:
            assert len(cap) == len(ms) and all(cap[a][a] == 0.0 for a in range(len(ms)))
            assert all(cap[a][b] == cap[b][a] and cap[a][b] / K_BYTES in FACTORS
                       for a in range(len(ms)) for b in range(a + 1, len(ms)))
        else:
            assert isinstance(cap, float) and cap / K_BYTES in FACTORS
    if seed % 9 == 8:
        assert _idle(d) < n if n > 1 else _idle(d) == 0


def test_tiny_seeds_cover_every_rule_and_the_overrides() -> None:
    """The suite draws both kinds of P, every infeasible kind, and a job of each collective; the
    keyword arguments set the workers and the machines; seed 292 adds a third machine of 4 GPUs
    with 3 idle (8 workers need 8 idle GPUs; two machines hold at most 6)."""
    ds = [tiny(s) for s in range(36)]
    assert {type(d["pair_capacity_bytes"]) for d in ds} == {float, list}
    assert {d["job"]["collective"] for d in ds} == {"ring", "halving-doubling"}
    assert tiny(4)["pair_capacity_bytes"] == 0.0 and tiny(17, workers=3, machines=5)["job"]["workers"] == 3
    assert len(tiny(17, workers=3, machines=5)["machines"]) == 5
    assert tiny(292)["machines"] == [{"gpus": 4, "idle_gpus": 3}] * 3
    one = tiny(26)
    assert one["job"]["workers"] == 1 and _idle(one) == 0


@pytest.mark.parametrize("seed", range(5))
def test_medium_follows_its_rules(seed: int) -> None:
    """A 16-worker HD job on 16 machines of 8 GPUs: 3-5 of them idle, the others with 1-7 idle
    GPUs; P in {1/2, 1, 2}·K; named medium-<seed>."""
    d = medium(seed)
    assert d["name"] == f"medium-{seed}"
    assert d["job"] == {"workers": 16, "collective": "halving-doubling", "param_bytes": K_BYTES}
    assert len(d["machines"]) == 16 and all(m["gpus"] == 8 for m in d["machines"])
    idle = [m["idle_gpus"] for m in d["machines"]]
    assert 3 <= idle.count(8) <= 5 and all(1 <= r <= 8 for r in idle)
    assert d["pair_capacity_bytes"] / K_BYTES in (0.5, 1.0, 2.0)


def test_cluster_is_the_sec5b_cluster() -> None:
    """512 machines of 8 GPUs (64 racks x 8), about 30% idle and 10% full, a 64-worker HD job,
    K = 1e8 B, P = 2K; the sizes are arguments."""
    d = cluster(0)
    idle = [m["idle_gpus"] for m in d["machines"]]
    assert d["name"] == "cluster-0" and len(idle) == 512 and all(m["gpus"] == 8 for m in d["machines"])
    assert d["job"] == {"workers": 64, "collective": "halving-doubling", "param_bytes": K_BYTES}
    assert d["pair_capacity_bytes"] == 2 * K_BYTES
    assert 0.25 < idle.count(8) / 512 < 0.35 and 0.06 < idle.count(0) / 512 < 0.14
    assert all(0 <= r <= 8 for r in idle) and any(0 < r < 8 for r in idle)
    small = cluster(1, workers=4, racks=2, machines_per_rack=3, gpus=4, capacity_factor=0.5)
    assert len(small["machines"]) == 6 and all(m["gpus"] == 4 for m in small["machines"])
    assert small["pair_capacity_bytes"] == 0.5 * K_BYTES and small["job"]["workers"] == 4


def test_generate_dispatches_on_kind() -> None:
    """``generate(kind=...)`` is the named generator with its seed and parameters; ``replay`` a
    workload of that many jobs."""
    assert generate() == tiny(0) and generate(kind="medium", seed=2) == medium(2)
    assert generate(kind="cluster", seed=1, racks=2) == cluster(1, racks=2)
    w = generate(kind="replay", seed=1, jobs=3, racks=2)
    assert w == replay_workload(1, jobs=3, racks=2) and len(w["jobs"]) == 3
    with pytest.raises(InputError) as err:
        generate(kind="huge")
    assert err.value.field == "kind" and str(err.value) == ("kind must be one of tiny, medium, cluster, replay, "
                                                            "got 'huge'")


@pytest.mark.parametrize("call, field, low", [
    (lambda: tiny(-1), "seed", 0), (lambda: tiny(0, workers=0), "workers", 1),
    (lambda: tiny(0, machines=0), "machines", 1), (lambda: medium(-1), "seed", 0), (lambda: cluster(-1), "seed", 0),
    (lambda: replay_workload(-1), "seed", 0), (lambda: replay_workload(0, jobs=0), "jobs", 1),
    (lambda: replay_workload(0, racks=0), "racks", 1),
    (lambda: replay_workload(0, machines_per_rack=0), "machines_per_rack", 1),
    (lambda: replay_workload(0, gpus_per_machine=0), "gpus_per_machine", 1),
    (lambda: tiny(True), "seed", 0), (lambda: tiny(0, workers=2.0), "workers", 1),  # type: ignore[arg-type]
])
def test_a_bad_count_is_named(call, field: str, low: int) -> None:
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field == field and f"must be an integer >= {low}, got" in str(err.value)


def test_suites_name_their_instances() -> None:
    """The suites are the generators' draws under names ``<suite>-NN``; the size classes are tiny's
    rules at the listed seeds and sizes."""
    t = SUITES["tiny"].build()
    assert len(t) == 36 and t[7] == ("tiny-07", dict(tiny(7), name="tiny-07"))
    assert [n for n, _ in SUITES["medium"].build()] == [f"medium-{s:02d}" for s in range(5)]
    big = SIZE_CLASSES["9-10 workers"].build()
    assert [(n, d["job"]["workers"], len(d["machines"])) for n, d in big] == [
        ("w9-m4-s2", 9, 4), ("w9-m4-s5", 9, 4), ("w10-m5-s4", 10, 5)]
    assert [n for n, _ in SIZE_CLASSES["1-8 workers"].build()] == [
        f"tiny-{s:02d}" for s in (0, 1, 2, 3, 4, 5, 8, 15, 21)]
