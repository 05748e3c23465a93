"""nimp's scheduler entry :func:`place` (Titan by node id, with the reason when nothing is placed).

Oracles: :func:`titan` on the same machines by list position, the model's ``evaluate`` for the
criteria, and the exact brute force for "a placement may still exist"."""

from __future__ import annotations

import pytest

from optkit import Status, solve
from optkit.errors import InputError
from optkit.formulations.nimp.generate import tiny
from optkit.formulations.nimp.model import Job, Machine, NimpInstance, evaluate, solution_dict
from optkit.formulations.nimp.place import WorkerPlacement, place
from optkit.formulations.nimp.titan import titan


@pytest.mark.parametrize("seed", range(40))
def test_place_by_name_is_titan_by_position(seed: int) -> None:
    inst = NimpInstance.from_dict(tiny(seed))
    names = [f"host-{chr(97 + s)}" for s in range(inst.M)]
    machines = dict(zip(names, inst.machines))
    cap = float(inst.capacity[0, 1]) if inst.capacity_is_scalar else {
        (names[s], names[u]): float(inst.capacity[s, u]) for s in range(inst.M) for u in range(s + 1, inst.M)}
    p = place(inst.job, machines, cap)
    idle = sum(m.idle_gpus for m in inst.machines)
    if idle < inst.N:
        assert p.reason == "too-few-idle-gpus" and not p.ok
        return
    by_position = titan([m.gpus for m in inst.machines], [m.idle_gpus for m in inst.machines],
                        float(inst.capacity[0, 0]) if inst.capacity_is_scalar else inst.capacity,
                        inst.phases(), workers=inst.N)
    if by_position is None:
        assert p == WorkerPlacement(False, reason="breaks-bandwidth", detail=p.detail)
        return
    assert p.machine_of_worker == [names[s] for s in by_position]
    ev = evaluate(inst, solution_dict(by_position))
    assert ev.feasible
    assert (p.idle_used, p.used) == tuple(ev.objectives["lex"])


def test_breaks_bandwidth_is_not_a_proof_of_infeasibility() -> None:
    """The issue's instance (b) without its idle machine: 4-GPU machines x, z with 1 and 2 idle
    GPUs, a 3-worker halving-doubling job of 100 MB (every pair 50 MB in a phase; W2's two pairs
    share one), P = 50 MB. Titan's merged sets are {W0, W1} (the first of three equally heavy
    pairs) on z and {W2}, which Alg. 1 refuses on x (100 MB in one phase), and there is no other
    machine: ``place`` answers ``breaks-bandwidth``; yet [x, z, z] meets Eq. 1 and brute force
    proves (0 idle machines, 2 used) optimal. The detail says a placement may still exist. With
    the idle machine y added Titan opens it ([y, y, y]); the pseudo-code breaks P there too."""
    job = Job(3, "halving-doubling", 100e6)
    p = place(job, {"x": Machine(4, 1), "z": Machine(4, 2)}, 50e6)
    assert p.reason == "breaks-bandwidth" and "may still exist" in p.detail
    inst = NimpInstance.from_dict({"machines": [{"gpus": 4, "idle_gpus": r} for r in (1, 2)],
                                   "pair_capacity_bytes": 50e6,
                                   "job": {"workers": 3, "collective": "halving-doubling", "param_bytes": 100e6}})
    assert evaluate(inst, solution_dict([0, 1, 1])).feasible
    best = solve("nimp", inst, "brute-force", objective="lex")
    assert best.status is Status.OPTIMAL and list(best.objective) == [0, 2]
    three = {"x": Machine(4, 1), "y": Machine(4, 4), "z": Machine(4, 2)}
    assert place(job, three, 50e6).machine_of_worker == ["y", "y", "y"]
    assert place(job, three, 50e6, titan_algorithm="pseudo-code").reason == "breaks-bandwidth"


def test_pair_mapping_in_either_order() -> None:
    hosts = {"a": Machine(8, 2), "b": Machine(8, 8), "c": Machine(8, 3)}
    one = place(Job(4, "ring", 100e6), hosts, {("a", "b"): 200e6, ("c", "a"): 200e6, ("b", "c"): 200e6})
    two = place(Job(4, "ring", 100e6), hosts, 200e6)
    assert one == two and one.ok and one.machine_of_worker == ["c", "c", "a", "c"]


@pytest.mark.parametrize("call,field", [
    (lambda: place(Job(4, "Ring", 1e8), {"a": Machine(8, 8)}, 1e8), "job.collective"),
    (lambda: place(Job(0, "ring", 1e8), {"a": Machine(8, 8)}, 1e8), "job.workers"),
    (lambda: place(Job(2, "ring", 1e8), {"a": Machine(4, 6)}, 1e8), "machine.idle_gpus"),  # the constructor
    (lambda: place(Job(2, "ring", 1e8), {"a": (4, 2)}, 1e8), "machines['a']"),  # type: ignore[dict-item]
    (lambda: place(Job(2, "ring", 1e8), [Machine(4, 2)], 1e8), "machines"),  # type: ignore[arg-type]
    (lambda: place(Job(2, "ring", 1e8), {}, 1e8), "machines"),
    (lambda: place(Job(2, "ring", 1e8), {"a": Machine(4, 2), "b": Machine(4, 2)}, -1.0), "pair_capacity_bytes"),
    (lambda: place(Job(2, "ring", 1e8), {"a": Machine(4, 2), "b": Machine(4, 2)}, {}), "pair_capacity_bytes"),
    (lambda: place(Job(2, "ring", 1e8), {"a": Machine(4, 2), "b": Machine(4, 2)},
                   {("a", "b"): 1e8, ("b", "a"): 2e8}), "pair_capacity_bytes"),
    (lambda: place(Job(2, "ring", 1e8), {"a": Machine(4, 2), "b": Machine(4, 2)}, {("a", "q"): 1e8}),
     "pair_capacity_bytes[('a', 'q')]"),
    (lambda: place({"workers": 2}, {"a": Machine(4, 2)}, 1e8), "job"),  # type: ignore[arg-type]
])
def test_bad_input_names_the_field(call, field: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field == field and str(err.value).startswith("nimp: ")
