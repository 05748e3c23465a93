"""``optkit.testing`` (issue 24 items 2-4): check_algorithm names each fault, the strategies draw
valid instances within their limits, assert_within checks every proven guarantee.

The deliberately wrong algorithms are in ``tests/plugins/wrong.py`` (one fault each, built on
the correct List-Scheduling baseline of rar-ddls); they run on the first three instances of
rar-ddls's ``tiny`` suite, whose optimum CP-SAT and the MILP prove in well under a second.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from optkit import registry
from optkit.errors import InputError
from optkit.formulation import Algorithm
from optkit.result import Result, Status
from optkit.testing import (CHECKS, AlgorithmCheckError, RunCache, all_guarantees, assert_within, check_algorithm,
                            default_instances, guarantee_for, optimum, strategies)
from tests.plugins import wrong

REPO = Path(__file__).resolve().parents[1]
CACHE = RunCache()
RAR = default_instances("rar-ddls", 3)


def _report(fault: str):
    return check_algorithm("rar-ddls", wrong.ALGORITHMS[fault], instances=RAR, raise_on_failure=False, cache=CACHE)


# ----------------------------------------------------------------------------- check_algorithm
@pytest.mark.parametrize("fault,check,needle", [
    ("beats", "never_beats_optimum", "claims the objective 0.5, which beats the proven"),
    ("seedless", "same_seed_same_result", "two runs differ"),
    ("unproven", "status_discipline", "'optimal' from a heuristic, which proves nothing"),
    ("error", "status_discipline", "error on a valid instance"),
    ("crash", "status_discipline", "raised RuntimeError: boom"),
])
def test_each_fault_is_named(fault: str, check: str, needle: str) -> None:
    """Each wrong algorithm fails the check that names its fault, with a message saying what."""
    report = _report(fault)
    assert check in report.failed, str(report)
    assert any(needle in m for m in report[check].messages), report[check].messages


def test_fault_free_checks_pass_on_the_wrong_algorithms() -> None:
    """A fault is not blamed on the wrong check: the seedless algorithm's solutions are feasible
    and never beat the optimum; the one claiming 'optimal' keeps its solutions valid; and a
    correct algorithm under a new name passes every check."""
    seedless = _report("seedless")  # other processes see it too where their counter differs from this one's
    assert seedless.failed[0] == "same_seed_same_result", str(seedless)
    assert set(seedless.failed) <= {"same_seed_same_result", "hash_seed_independent"}, str(seedless)
    assert "solution_passes_evaluate" not in _report("unproven").failed
    honest = _report("honest")
    assert honest.passed and [r.name for r in honest.results] == list(CHECKS), str(honest)


def test_raises_naming_every_failed_check() -> None:
    with pytest.raises(AlgorithmCheckError) as info:
        check_algorithm("rar-ddls", wrong.ALGORITHMS["beats"], instances=RAR, cache=CACHE)
    assert set(info.value.failed) == {"never_beats_optimum", "solution_passes_evaluate"}
    assert "never_beats_optimum: FAILED" in str(info.value) and "2 failed" in str(info.value)
    assert isinstance(info.value, AssertionError)


def test_a_registered_name_or_a_clash_or_a_bad_check_name() -> None:
    assert check_algorithm("rar-ddls", "ls", instances=RAR, seeds=(0,), cache=CACHE).passed
    clash = Algorithm("ls", wrong.honest, "heuristic", "a clash", ("makespan",))
    with pytest.raises(InputError, match="'ls' clashes with an algorithm of rar-ddls"):
        check_algorithm("rar-ddls", clash, instances=RAR)
    with pytest.raises(InputError, match="checks names the unknown check 'no_such_check'"):
        check_algorithm("rar-ddls", "ls", instances=RAR, checks=["no_such_check"])
    with pytest.raises(InputError, match="algorithm is unknown for rar-ddls: 'nope'"):
        check_algorithm("rar-ddls", "nope")


def test_an_unvalidated_parameter_is_named() -> None:
    """A run function whose keyword default differs from the reading it takes is named by
    ``bad_parameter_is_input_error``; the registered ``ls`` passes it."""
    f = registry.get("rar-ddls")
    reading = next(r for r in f.readings if r.takes("ls") and r.name == "available")

    def drifting(instance, *, objective, time_limit, seed, u: float = 1.0, available: str = "not-the-default",
                 theta_search: str = "bisect", rho_hat: str = "solo"):  # noqa: ANN001, ANN202
        return wrong.honest(instance, objective=objective, time_limit=time_limit, seed=seed)

    import dataclasses
    changed = dataclasses.replace(f, algorithms={**f.algorithms, "ls": dataclasses.replace(f.algorithms["ls"],
                                                                                             run=drifting)})
    report = check_algorithm(changed, "ls", instances=RAR[:1], checks=["bad_parameter_is_input_error"],
                             raise_on_failure=False)
    assert report.failed == ["bad_parameter_is_input_error"]
    assert any(f"keyword {reading.name} defaults to 'not-the-default'" in m for m in report.results[0].messages)


# ----------------------------------------------------------------------------- strategies
@pytest.mark.parametrize("problem,lim,check", [
    ("gpu-mapping", {"max_replicas": 5, "max_servers": 2},
     lambda i: sum(i.servers) <= 5 and len(i.servers) <= 2 and sum(s.replicas for s in i.job.stages) == sum(i.servers)),
    ("ddlwmp", {"max_jobs": 3, "max_gpus": 4},
     lambda i: len(i.jobs) <= 3 and i.cluster.total_gpus <= 4),
    ("rar-ddls", {"max_jobs": 2, "max_gpus": 5, "max_servers": 2},
     lambda i: len(i.jobs) <= 2 and sum(i.servers) <= 5 and len(i.servers) <= 2),
    ("nimp", {"max_workers": 3, "max_machines": 4, "pair_capacity": "matrix"},
     lambda i: i.N <= 3 and i.M <= 4),
])
def test_strategies_draw_valid_instances_within_the_limits(problem: str, lim: dict, check) -> None:  # noqa: ANN001
    f = registry.get(problem)
    seen = []

    @settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategies.instances(problem, as_dict=True, **lim))
    def draw(data: dict) -> None:
        inst = f.instance_from_dict(json.loads(json.dumps(data)))  # the problem's own validation, from JSON
        assert check(inst), data
        seen.append(data)

    draw()
    assert len({json.dumps(d, sort_keys=True) for d in seen}) > 10  # not one instance over and over


def test_strategies_shrink_to_the_smallest_instance() -> None:
    """Hypothesis's minimal example of "any instance" is the sampler's smallest: one idle
    one-GPU machine and one worker.

    ``find`` returns the last value its condition saw; Hypothesis's *explain* phase, which runs
    after shrinking, calls the condition on random variations of the minimal example, so with
    the default phases ``find`` returned one of those in about 1 run in 10 (e.g. a two-GPU
    machine: the shrunk example was minimal, the returned one was not). Generate and shrink only,
    no example database (shared by runs and by xdist's workers) and a seeded random make it
    deterministic; the minimum was the same for each of 60 seeds."""
    from random import Random

    from hypothesis import Phase, find

    only = settings(max_examples=2000, database=None, phases=[Phase.generate, Phase.shrink])
    smallest = find(strategies.instances("nimp", as_dict=True), lambda d: True, settings=only, random=Random(0))
    assert smallest["machines"] == [{"gpus": 1, "idle_gpus": 1}] and smallest["job"]["workers"] == 1
    bigger = find(strategies.instances("nimp"), lambda i: i.N >= 3, settings=only, random=Random(0))
    assert bigger.N == 3 and sum(m.gpus for m in bigger.machines) == 3


@pytest.mark.parametrize("problem,lim,needle", [
    ("nimp", {"max_workers": 0}, "max_workers must be >= 1, got 0"),
    ("nimp", {"max_machines": 5000}, "max_machines must be <= 4096"),
    ("nimp", {"max_workers": 2.5}, "max_workers must be an integer"),
    ("gpu-mapping", {"max_replicas": -3}, "max_replicas must be >= 1"),
    ("ddlwmp", {"max_jobs": 0}, "max_jobs must be >= 1"),
    ("rar-ddls", {"max_gpus": 0}, "max_gpus must be >= 1"),
    ("rar-ddls", {"max_workers": 3}, "max_workers is not a size limit of rar-ddls"),
])
def test_bad_limits_are_input_errors_naming_the_argument(problem: str, lim: dict, needle: str) -> None:
    with pytest.raises(InputError, match=needle.replace("(", r"\(")):
        strategies.instances(problem, **lim)


def test_hypothesis_is_imported_only_by_the_strategies_module() -> None:
    code = ("import sys, optkit.testing, optkit.testing.oracle, optkit.testing.guarantees; "
            "assert 'hypothesis' not in sys.modules; import optkit.testing.strategies; "
            "assert 'hypothesis' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


# ----------------------------------------------------------------------------- assert_within
def test_every_guarantee_is_declared_for_a_registered_algorithm() -> None:
    """The guarantees of the papers: A-SRPT (Theorem 1), SJF-BCO (Theorem 5), Titan (Theorems
    4-5); none for Heavy-Edge or any baseline."""
    got = set(all_guarantees())
    assert got == {("ddlwmp", "a-srpt"), ("ddlwmp", "a-srpt-perfect"), ("rar-ddls", "sjf-bco"), ("nimp", "titan")}
    for problem, algo in got:
        assert algo in registry.get(problem).algorithms
    assert guarantee_for("gpu-mapping", "heavy-edge") is None


@pytest.mark.parametrize("problem,algorithm", sorted(all_guarantees()))
def test_guarantee_holds_on_the_shipped_tiny_suite(problem: str, algorithm: str) -> None:
    """assert_within on the first instances of each problem's smallest suite (the battery's)."""
    for inst in default_instances(problem, 4):
        within = assert_within(problem, algorithm, inst)
        assert within.optimum.proven and within.bound is not None
        assert math.isfinite(within.measured)


def test_sjf_bco_keeps_theorem5_on_drawn_instances() -> None:
    """The README's property test: every drawn instance keeps SJF-BCO's Theorem 5 (A-SRPT and
    Titan do not: their counterexamples are pinned below)."""
    @settings(max_examples=30, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategies.instances("rar-ddls", max_jobs=3))
    def prop(instance) -> None:  # noqa: ANN001
        assert_within("rar-ddls", "sjf-bco", instance)

    prop()


TITAN_TWO_MACHINES = {
    "problem": "nimp", "machines": [{"gpus": 2, "idle_gpus": 2}, {"gpus": 2, "idle_gpus": 1}],
    "pair_capacity_bytes": 2e8, "job": {"workers": 2, "collective": "halving-doubling", "param_bytes": 1e8}}
"""Found by the property test with ``strategies.instances("nimp", max_workers=6, max_machines=5)``
(shrunk by Hypothesis): two workers, an idle 2-GPU machine and a non-idle one with one free
GPU. Titan uses the idle machine and the non-idle one, [1, 2]; the optimum puts both workers on
the idle machine, [1, 1]. Theorem 5's H_2 = N - used is 2 - 2 = 0 against 2 - 1 = 1: ratio 0,
below Theorems 4-5's 1 - 1/e (C_max = N = 2, so Eq. (3)'s stated form gives the same). Under the default reading ``titan_algorithm=pseudo-code`` (every
``titan_step2`` and ``titan_tie_break``); ``titan_algorithm=pair-grouping`` finds the optimum."""


def test_titan_theorems_4_5_fail_on_two_machines() -> None:
    with pytest.raises(AssertionError) as info:
        assert_within("nimp", "titan", TITAN_TWO_MACHINES)
    text = str(info.value)
    assert "ratio 0 < the guaranteed 0.632121" in text and "Theorems 4-5" in text
    assert "algorithm: feasible, objective [1, 2]" in text and "optimum: [1, 1] (brute-force)" in text
    within = assert_within("nimp", "titan", TITAN_TWO_MACHINES, params={"titan_algorithm": "pair-grouping"})
    assert within.measured == 1.0


A_SRPT_SHORT_JOB = {
    "problem": "ddlwmp",
    "cluster": {"servers": 2, "gpus_per_server": 1, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11},
    "models": {"m0": {"allreduce": "ring", "stages": [{"replicas": 1, "fwd_time": 0.005, "bwd_time": 0.005,
                                                       "in_bytes": 0.0, "out_bytes": 0.0, "param_bytes": 0.0}]}},
    "jobs": [{"id": "j0", "release": 0.0, "model": "m0", "iterations": 1, "predicted_iterations": 1.0}]}
"""Found by the property test with ``strategies.instances("ddlwmp")``: one job of 0.01 s on an
empty cluster. A-SRPT holds it until the first slot boundary at or after its Ã1 completion
(0.005 s: slot 1, README "A-SRPT"), so it completes at 1.01 s against the optimum 0.01 s: ratio
101, above Theorem 1's 4 for this instance (rho = 1, G = 2, g_max = 1, eps = 0, the default
tau = 0: (2 + 0 + 2)·1; with tau = 10 it is 14). Theorem 1 has no slot rounding; the ratio grows
without bound as jobs shrink below a slot, so it breaks optkit's slotted reading of Algorithm 1,
not necessarily the theorem's continuous-time statement."""


@pytest.mark.parametrize("algorithm", ["a-srpt", "a-srpt-perfect"])
def test_a_srpt_theorem1_fails_on_a_job_shorter_than_a_slot(algorithm: str) -> None:
    with pytest.raises(AssertionError) as info:
        assert_within("ddlwmp", algorithm, A_SRPT_SHORT_JOB)
    text = str(info.value)
    assert "ratio 101 > the guaranteed 4" in text and "Theorem 1" in text
    assert json.loads(text.split("instance: ", 1)[1]) == A_SRPT_SHORT_JOB


def test_failure_message_carries_ratio_guarantee_and_a_replayable_instance(tmp_path: Path) -> None:
    """A stated ratio the algorithm misses: the message has the ratio, the guarantee and the
    instance as JSON; ``optkit solve`` on that JSON gives the algorithm's objective again."""
    inst = default_instances("rar-ddls", 2)[1]
    want = assert_within("rar-ddls", "ls", inst, ratio=2.0).measured
    assert want > 1.0
    with pytest.raises(AssertionError) as info:
        assert_within("rar-ddls", "ls", inst, ratio=1.0)
    text = str(info.value)
    assert f"ratio {want:.6g} > the guaranteed 1" in text and "the ratio given, ALG / OPT <= 1.0" in text
    path = tmp_path / "instance.json"
    path.write_text(text.split("instance: ", 1)[1])
    command = text.split("replay: ", 1)[1].split("`")[1].split()
    assert command[:4] == ["optkit", "solve", "rar-ddls", "instance.json"]
    out = subprocess.run([sys.executable, "-m", "optkit", *command[1:], "--json"], cwd=tmp_path, check=True,
                         capture_output=True, text=True, env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    opt = optimum("rar-ddls", inst).value
    assert json.loads(out.stdout)["objective"] == pytest.approx(want * opt)


def test_ratio_is_required_without_a_guarantee_and_must_be_positive() -> None:
    inst = RAR[0]
    with pytest.raises(InputError, match="ratio must be given: no paper proves a guarantee for ls"):
        assert_within("rar-ddls", "ls", inst)
    with pytest.raises(InputError, match="ratio must be a number > 0"):
        assert_within("rar-ddls", "ls", inst, ratio=-1)
    with pytest.raises(InputError, match="algorithm is unknown for rar-ddls"):
        assert_within("rar-ddls", "nope", inst, ratio=2)


def test_oracle_falls_back_to_brute_force_and_unpacks() -> None:
    """Where CP-SAT proves nothing (here: a CP-SAT that always stops at its time limit),
    rar-ddls's unregistered brute force proves the optimum; the Optimum unpacks as
    ``(value, proven, source)``."""
    import dataclasses

    inst = RAR[0]
    value, proven, source = optimum("rar-ddls", inst)
    assert (proven, source) == (True, "cpsat")
    f = registry.get("rar-ddls")

    def stopped(instance, *, objective, time_limit, seed, **params):  # noqa: ANN001, ANN202, ANN003
        return Result(Status.TIME_LIMIT, message="stopped (by design)")

    cut = dataclasses.replace(f, algorithms={**f.algorithms, "cpsat": dataclasses.replace(
        f.algorithms["cpsat"], run=stopped, params=("workers",))})
    again = optimum(cut, inst)
    assert (again.proven, again.source) == (True, "brute-force") and again.value == pytest.approx(value)


def test_oracle_order_brute_force_where_it_holds_then_cpsat() -> None:
    """The one order of the oracle (that of the worst-case search too): nimp's brute force
    proves a small instance; beyond its size limit (> 10 workers) it refuses and CP-SAT proves
    the same kind of instance; ``solvers`` narrows the list, still in that order."""
    small = {"problem": "nimp", "job": {"workers": 2, "collective": "ring", "param_bytes": 1e8},
             "machines": [{"gpus": 2, "idle_gpus": 2}, {"gpus": 2, "idle_gpus": 1}], "pair_capacity_bytes": 1e12}
    large = {**small, "job": {**small["job"], "workers": 12}, "machines": [{"gpus": 4, "idle_gpus": 4}] * 4}
    first = optimum("nimp", small)
    assert (first.proven, first.source, first.objective) == (True, "brute-force", [1, 1])
    only = optimum("nimp", small, solvers=("cpsat",))
    assert (only.source, only.objective, only.value) == ("cpsat", first.objective, first.value)
    big = optimum("nimp", large, time_limit=30.0)
    assert (big.proven, big.source, big.objective[:2]) == (True, "cpsat", [3, 3])


def test_oracle_never_runs_an_untimed_solver_under_a_time_limit_and_can_refuse_a_bound() -> None:
    """rar-ddls's unregistered brute force cannot stop at a time limit: with CP-SAT cut short,
    a call with ``time_limit`` falls back to the proven lower bound (``proven=False``) instead
    of enumerating; ``fallback_to_bound=False`` gives no value at all."""
    import dataclasses

    inst = RAR[0]
    f = registry.get("rar-ddls")

    def stopped(instance, *, objective, time_limit, seed, **params):  # noqa: ANN001, ANN202, ANN003
        return Result(Status.TIME_LIMIT, message="stopped (by design)")

    cut = dataclasses.replace(f, algorithms={**f.algorithms, "cpsat": dataclasses.replace(
        f.algorithms["cpsat"], run=stopped, params=("workers",))})
    proven = optimum(cut, inst).value
    bound = optimum(cut, inst, time_limit=5.0, solvers=("brute-force", "cpsat"))
    assert (bound.proven, bound.source) == (False, "lower_bound") and bound.value <= proven
    assert bound.value == f.lower_bound(inst, "makespan")
    none = optimum(cut, inst, time_limit=5.0, solvers=("brute-force", "cpsat"), fallback_to_bound=False)
    assert (none.value, none.proven, none.source) == (None, False, "none")


def test_status_of_an_exact_algorithm_returning_optimal_above_the_optimum_is_named() -> None:
    """An 'exact' algorithm whose 'optimal' answer is List Scheduling's (worse than the optimum
    on instance 1) is caught by never_beats_optimum's optimal-equals-optimum rule."""
    def fake_exact(instance, *, objective, time_limit, seed):  # noqa: ANN001, ANN202
        res = wrong.honest(instance, objective=objective, time_limit=time_limit, seed=seed)
        return Result(Status.OPTIMAL, solution=res.solution, bound=0.0)

    algo = Algorithm("fake-exact", fake_exact, "exact", "not exact", ("makespan",))
    report = check_algorithm("rar-ddls", algo, instances=RAR[1:2], raise_on_failure=False, cache=CACHE)
    assert "never_beats_optimum" in report.failed
    assert any("'optimal'" in m for m in report["never_beats_optimum"].messages)
