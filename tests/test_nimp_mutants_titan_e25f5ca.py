"""Facts of nimp's contract that the mutation protocol's sample at e25f5ca found unchecked
(``benchmarks/mutation.py``, group B: titan.py, exact.py, claims.py, model.py, generate.py,
approximation.py). Each test names the fact; the hand-worked values are in the docstrings. Tiny
hand-made instances only."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.formulations.nimp import claims
from optkit.formulations.nimp.approximation import trials
from optkit.formulations.nimp.exact import brute_force, run_cpsat
from optkit.formulations.nimp.generate import medium
from optkit.formulations.nimp.model import NimpInstance, key_of, pair_limit, ring_phases
from optkit.formulations.nimp.readings import ELASTICFLOW_MACHINES, PHASE_BUDGET
from optkit.formulations.nimp.titan import (check_readings, choose, place_unchecked,
                                              place_with_and_without_capacity, run_titan, titan)
from optkit.result import Status

K = 1.0e8


def _inst(gpus: list[int], idle: list[int], n: int, cap: object = 1e30, coll: str = "ring",
          k: float = K) -> NimpInstance:
    machines = [{"gpus": g, "idle_gpus": r} for g, r in zip(gpus, idle)]
    return NimpInstance.from_dict({"problem": "nimp", "machines": machines, "pair_capacity_bytes": cap,
                                   "job": {"workers": n, "collective": coll, "param_bytes": k}})


# ----------------------------------------------------------------------------- titan.py
def test_one_attempt_of_step_2_is_the_fewest_machines_that_cover() -> None:
    """Machines of 4 GPUs with 4 (idle), 3 and 2 idle; 2 workers, no bandwidth limit. Step 1
    puts both on the idle machine 0: (1 idle used, 1 used). Step 2's first attempt (i = 0 idle
    machines, f = 1 non-idle machine, the fewest whose idle GPUs cover N) places both on one
    non-idle machine: (0, 1), the lexicographic optimum, best fit machine 2 (2 idle GPUs) under
    ``least-traffic`` (no cross bytes either way: ties to best fit), machine 1 under ``worst-fit``.
    ``max_attempts=1`` allows exactly that attempt, so the answer is the same."""
    phases = ring_phases(2, K)
    for attempts in (None, 1):
        assert titan([4, 4, 4], [4, 3, 2], math.inf, phases, workers=2, max_attempts=attempts) == [2, 2]
        assert titan([4, 4, 4], [4, 3, 2], math.inf, phases, workers=2, max_attempts=attempts,
                     titan_tie_break="worst-fit") == [1, 1]


def test_the_shortcut_with_and_without_p_keeps_the_tie_break_reading() -> None:
    """``place_with_and_without_capacity`` gives what two runs of ``place_unchecked`` with the same
    readings give: on the cluster above, ``worst-fit`` takes machine 1 under P and without it
    (the default ``least-traffic`` would take machine 2)."""
    Ka, Ra = np.array([4, 4, 4], dtype=np.int64), np.array([4, 3, 2], dtype=np.int64)
    phases = ring_phases(2, K)
    got = place_with_and_without_capacity(Ka, Ra, 1e30, phases, workers=2, titan_tie_break="worst-fit")
    assert got == ([1, 1], [1, 1])
    assert place_unchecked(Ka, Ra, 1e30, phases, workers=2, titan_tie_break="worst-fit") == [1, 1]
    assert place_with_and_without_capacity(Ka, Ra, 1e30, phases, workers=2) == ([2, 2], [2, 2])


def test_choose_returns_its_machines_most_idle_gpus_first() -> None:
    """``choose`` under every fit lists the chosen machines most idle GPUs first, ties by index
    (the coverage order worst-fit takes them in): machines 0..3 with 1, 3, 2, 3 idle GPUs, two of
    them for 4 workers: best fit is {0, 1} (4 GPUs; of the two 3-GPU machines the lower index),
    listed [1, 0]; worst fit [1, 3]."""
    R = [1, 3, 2, 3]
    assert choose([0, 1, 2, 3], R, 2, 4, "best-fit") == [1, 0]
    assert choose([0, 1, 2, 3], R, 2, 4, "worst-fit") == [1, 3]


def test_run_titan_no_solution_says_it_is_not_a_proof() -> None:
    """Two machines with one idle GPU each, a 2-worker ring and P = 0: the job must be split and
    no split meets P, so Titan finds nothing, and the message says that this proves nothing."""
    res = run_titan(_inst([2, 2], [1, 1], 2, cap=0.0))
    assert res.status is Status.NO_SOLUTION and res.solution is None and res.info["found"] is False
    assert res.message == ("titan found no feasible placement (no placement it builds meets Eq. 1; not a proof "
                           "that none exists)")


def test_titan_rejects_bad_machine_lists_naming_the_argument() -> None:
    """K_s must be integers >= 1 (an InputError naming ``gpus[s]`` with the value), a list of
    numbers at all (naming ``gpus``), as R_s integers >= 0 (``idle_gpus[s]``)."""
    phases = ring_phases(2, K)
    with pytest.raises(InputError) as err:
        titan([0, 4], [0, 4], 1e30, phases, workers=2)
    assert (err.value.field, err.value.message, err.value.problem) == ("gpus[0]", "must be an integer >= 1, got 0",
                                                                       "nimp")
    with pytest.raises(InputError) as err:
        titan(["a", 4], [1, 4], 1e30, phases, workers=2)
    assert err.value.field == "gpus"
    assert err.value.message == "must list a GPU count (an integer) per machine, got ['a', 4]"
    with pytest.raises(InputError) as err:
        titan([4, 4], [1, -1], 1e30, phases, workers=2)
    assert (err.value.field, err.value.message) == ("idle_gpus[1]", "must be an integer >= 0, got -1")


def test_check_readings_names_the_titan_algorithm_reading() -> None:
    with pytest.raises(InputError) as err:
        check_readings("greedy", "fix-idle-count", "least-traffic")
    assert (err.value.field, err.value.problem) == ("titan_algorithm", "nimp")
    assert str(err.value) == "nimp: titan_algorithm must be repaired, pseudo-code or pair-grouping, got 'greedy'"


# ----------------------------------------------------------------------------- exact.py
def test_brute_force_names_a_bad_objective() -> None:
    with pytest.raises(InputError) as err:
        brute_force(_inst([2, 2], [2, 2], 2), objective="lexicographic")
    assert err.value.field == "objective" and "lex, lex-cross" in err.value.message


def test_cpsat_bound_shortcut_reports_the_relaxation_bound() -> None:
    """Machines of 2 GPUs, all idle, 3 workers: the resource relaxation's bound is (2 idle used,
    2 used), which Titan reaches; CP-SAT returns it as optimal without a model, with bound =
    the key of (2, 2) = 2·(M+1) + 2 = 10 for M = 3, no message, and the proof named."""
    inst = _inst([2, 2, 2], [2, 2, 2], 3)
    res = run_cpsat(inst, time_limit=10, seed=0)
    assert res.status is Status.OPTIMAL and res.info["proof"].startswith("Titan's placement")
    assert res.bound == key_of(inst, "lex", [2, 2]) == 10.0
    assert res.message == ""


def test_cpsat_names_the_job_when_its_phase_volumes_are_not_multiples() -> None:
    """The models count cross bytes in units of the smallest phase volume, exact for HD's volumes
    K/2^j while they are exact. A subnormal K = 14·2^-1074 bytes with 4 workers rounds K/4 = 3.5
    units of 2^-1074 to 4, so phase 1's pairs carry 2·K/2 = 14 units, not a multiple of 4: the model
    refuses the job with an InputError naming ``job``."""
    inst = _inst([16, 16], [16, 16], 4, cap=1.0, coll="halving-doubling", k=math.ldexp(14, -1074))
    with pytest.raises(InputError) as err:
        run_cpsat(inst, time_limit=10, bound_shortcut=False)
    assert err.value.field == "job"
    assert err.value.message == "pair volumes are not integer multiples of the smallest phase volume"


def test_cpsat_symmetry_hint_with_more_workers_than_key_bits() -> None:
    """The symmetry key reads the first L = min(N, 40) workers; with 41 workers on one machine of
    41 GPUs (the only placement) the hint Titan gives is relabelled on that key and CP-SAT proves
    (1 idle used, 1 used)."""
    inst = _inst([41], [41], 41)
    res = run_cpsat(inst, time_limit=20, seed=0, bound_shortcut=False)
    assert res.status is Status.OPTIMAL and res.solution == {"machine_of_worker": [0] * 41}


# ----------------------------------------------------------------------------- model.py
def test_pair_limit_has_one_no_limit_value() -> None:
    """"No limit" is one number, 2^30, whether the volume is 0 or the capacity holds more pairs."""
    assert pair_limit(1.0, 0.0) == pair_limit(1e300, 1.0) == pair_limit(2.0 ** 40, 1.0) == 1 << 30
    assert pair_limit(2.0 ** 29, 1.0) == 1 << 29


def test_a_scalar_capacity_is_written_as_the_pairs_capacity() -> None:
    """The diagonal of P is ignored (traffic inside a machine is unconstrained), so a typed
    instance with one capacity for every pair and a zero diagonal writes that pair capacity, and
    reads back with it."""
    from optkit.formulations.nimp.model import Job, Machine

    cap = np.array([[0.0, 5e8], [5e8, 0.0]])
    cap.flags.writeable = False
    inst = NimpInstance((Machine(4, 2), Machine(4, 2)), cap, True, Job(4, "ring", K, None, None))
    d = inst.to_dict()
    assert d["pair_capacity_bytes"] == 5e8
    back = NimpInstance.from_dict(d)
    assert back.capacity_is_scalar and back.capacity[0, 1] == 5e8


# ----------------------------------------------------------------------------- generate.py
def test_medium_suite_non_idle_machines_hold_one_to_seven_idle_gpus() -> None:
    """The ``medium`` suite (module docstring): 3-5 idle machines of 8, the others with 1-7 idle
    GPUs; over the suite's five seeds every count 1..7 occurs."""
    seen: set[int] = set()
    for s in range(5):
        r = [m["idle_gpus"] for m in medium(s)["machines"]]
        assert 3 <= r.count(8) <= 5
        seen |= {x for x in r if x != 8}
    assert seen == set(range(1, 8))


# ----------------------------------------------------------------------------- approximation.py
def test_trials_without_bandwidth_titan_keeps_every_ratio() -> None:
    """With P removed Titan (``repaired``) is the resource relaxation's lexicographic optimum
    (module docstring of titan.py), so its ratio is 1 for both theorems on every instance: no
    violation, worst ratio 1, Titan optimal on every compared instance."""
    out = trials(3, 1)
    free = out["without_bandwidth"]
    assert out["compared"] == 2
    assert free == {"titan_found_none": 0, "titan_optimal": 2, "violations_theorem4": 0, "violations_theorem5": 0,
                    "worst_ratio_theorem4": 1.0, "worst_ratio_theorem5": 1.0}


# ----------------------------------------------------------------------------- claims.py
def test_fig1_elasticflow_follows_its_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fig. 1's measurement on 4-GPU machines with 4, 4, 4, 1 idle and a 5-worker ring: Elasticflow
    fills the idle machine 0, and the fifth worker goes to the best fit over ``any`` machine,
    machine 3 (1 idle GPU, already busy: 2 machines busy afterwards), or under ``idle-only`` to the
    idle machine 1 (3 busy afterwards)."""
    monkeypatch.setattr(claims, "FIG1_INSTANCE", dict(claims.FIG1_INSTANCE, machines=[
        {"gpus": 4, "idle_gpus": r} for r in (4, 4, 4, 1)], job={"workers": 5, "collective": "ring",
                                                                "param_bytes": claims.FIG1_K}))
    assert ELASTICFLOW_MACHINES.default == "any"
    for value, machine, launched in (("any", 3, 2), ("idle-only", 1, 3)):
        det = claims.measure_fig1(readings={"elasticflow_machines": value}, seed=0, scale="ci")["_details"]
        assert det["elasticflow"]["machine_of_worker"] == [0, 0, 0, 0, machine]
        assert det["elasticflow"]["launched_machines"] == launched


def _two_job_trace(root: Path) -> None:
    d = root / "microsoft-itp"
    d.mkdir()
    (d / "cluster01.csv").write_text("job_id,submission_time,duration,num_gpu\n"
                                     f"a,{2 * 86400 + 5},600,1\nb,{2 * 86400 + 9},600,2\n")


def test_whole_trace_replay_details_at_the_default_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At ``paper`` scale the window is the whole trace, and ``_details`` says so ("whole trace");
    with no ``phase_budget_s`` reading the replay runs at the reading's declared default (0.05 s),
    which the details and the note give. The same for a plug-in's series."""
    _two_job_trace(tmp_path)
    monkeypatch.setenv("OPTKIT_TRACE_ROOT", str(tmp_path))
    assert PHASE_BUDGET.default == 0.05
    out = claims.measure_replay(readings={}, seed=0, scale="paper")
    assert out["_details"]["window_s"] == "whole trace" and out["_details"]["phase_budget_s"] == 0.05
    assert out["_details"]["policies"]["titan"]["jobs"] == 2
    assert out["_notes"][0].endswith("(phase budget 0.05 s).")
    s = claims.series_replay("elasticflow", readings={}, seed=0, scale="paper")
    assert s["_details"]["window_s"] == "whole trace" and s["_details"]["phase_budget_s"] == 0.05
