"""Every answer judged against the instance as given, and check_algorithm's default coverage
(issue 35, items 1 and 2).

The faulty plug-ins are in ``tests/plugins/faulty.py``, one bug class of the issue each. Issue
35's case first: a nimp plug-in that makes the pair-capacity array writable again, sets it to
infinity and spreads its workers was judged ``feasible`` by ``solve`` (``validate`` rejected the
same solution), passed ``check_algorithm`` and filled ``compare``'s store with feasible rows
where CP-SAT proves the instance infeasible. Now every entry point names the mutation.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from optkit import registry
from optkit.errors import InputError
from optkit.formulation import Algorithm
from optkit.pristine import InputWatch, NotJsonError, first_difference, json_form
from optkit.result import Result, Status
from optkit.solve import solve
from optkit.testing import RunCache, check_algorithm, default_cases, default_instances
from tests.plugins import faulty

CACHE = RunCache()
TINY_04 = {"problem": "nimp", "name": "tiny-04", "machines": [
    {"gpus": 2, "idle_gpus": 1}, {"gpus": 4, "idle_gpus": 1}, {"gpus": 2, "idle_gpus": 1},
    {"gpus": 2, "idle_gpus": 1}, {"gpus": 4, "idle_gpus": 1}, {"gpus": 2, "idle_gpus": 1}],
    "pair_capacity_bytes": 0.0, "job": {"workers": 2, "collective": "halving-doubling", "param_bytes": 1e8}}
"""Two workers, six machines with one idle GPU each, P = 0: no machine holds the job and no pair
may exchange a byte, so CP-SAT proves it infeasible; ``spread`` puts the workers on machines 0
and 1 after setting P to infinity."""
SPREAD_MESSAGE = "mutated its input: field pair_capacity_bytes (0 before the run, inf after)"


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """The faulty plug-ins registered in this process and (``OPTKIT_ALGORITHMS``) in worker
    processes; undone after the test."""
    registry.all_formulations()
    monkeypatch.setattr(registry, "_registered", dict(registry._registered))
    monkeypatch.setattr(registry, "_plugins", {p: dict(a) for p, a in registry._plugins.items()})
    monkeypatch.setenv("OPTKIT_ALGORITHMS", "tests.plugins.faulty:ALGORITHMS")
    for algo in faulty.ALGORITHMS:
        registry.register_algorithm(algo)


# ----------------------------------------------------------------------------- item 1: solve, CLI, compare, worst-case
def test_solve_names_the_mutation_and_leaves_the_callers_instance_alone(plugins: None) -> None:
    """The algorithm runs on its own copy: ``solve`` reports ``error`` naming the changed field
    (no solution, no objective), and the caller's instance object (and dict) are as given, P
    still 0 and still read-only; CP-SAT, asked next in the same process about the same object,
    proves it infeasible."""
    f = registry.get("nimp")
    inst = f.instance_from_dict(TINY_04)
    given = json.dumps(TINY_04, sort_keys=True)
    res = solve("nimp", inst, "spread")
    assert (res.status, res.message, res.solution, res.objective) == (Status.ERROR, SPREAD_MESSAGE, None, None)
    assert not inst.capacity.flags.writeable and float(inst.capacity.max()) == 0.0
    assert solve("nimp", TINY_04, "spread").message == SPREAD_MESSAGE and json.dumps(TINY_04, sort_keys=True) == given
    assert solve("nimp", inst, "cpsat", params={"workers": 1}).status is Status.INFEASIBLE


def test_a_change_deep_inside_is_named_by_its_path() -> None:
    """A frozen dataclass yields to ``object.__setattr__``, a read-only array to ``setflags``:
    the first changed key path is named with both values (a machine's idle GPUs, a cell of a
    matrix P)."""
    f = registry.get("nimp")
    matrix = dict(TINY_04, pair_capacity_bytes=[[0.0] * 6 for _ in range(6)])

    def poke_p(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
        cap = instance.capacity
        cap.setflags(write=True)
        cap[0, 1] = cap[1, 0] = 5e8
        return Result(Status.NO_SOLUTION, message="none")

    def poke_both(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
        object.__setattr__(instance.machines[3], "idle_gpus", 2)
        return poke_p(instance, objective=objective, time_limit=time_limit, seed=seed)

    pokers = dataclasses.replace(f, algorithms={**f.algorithms, **{
        name: Algorithm(name, fn, "heuristic", "", f.objectives) for name, fn in (("p", poke_p), ("both", poke_both))}})
    res = solve(pokers, matrix, "both")
    assert (res.status, res.message) == (Status.ERROR, "mutated its input: field machines[3].idle_gpus (1 before the "
                                                       "run, 2 after)")
    assert solve(pokers, matrix, "p").message == ("mutated its input: field pair_capacity_bytes[0][1] (0 before the "
                                                  "run, 5e+08 after)")


def test_first_difference_and_json_form() -> None:
    assert first_difference({"a": [1, {"b": 2.0}]}, {"a": [1, {"b": 3.0}]}) == ("a[1].b", 2.0, 3.0)
    assert first_difference({"a": [1]}, {"a": [1, 2]}) == ("a[1]", "<missing>", 2)
    assert first_difference({"a": 1}, {"a": 1.0}) == ("a", 1, 1.0)  # JSON writes them differently
    assert first_difference([1, "x"], [1, "x"]) is None
    assert json_form({"m": (1, np.float64(2.5)), "k": {0: True}}) == {"m": [1, 2.5], "k": {"0": True}}
    with pytest.raises(NotJsonError, match=r"solution\.m\[1\] is a numpy\.int64 \(return int\(x\)"):
        json_form({"m": [1, np.int64(2)]})
    with pytest.raises(NotJsonError, match=r"solution\.s is a set"):
        json_form({"s": {1}})


def test_an_unchanged_copy_is_not_named() -> None:
    """Re-parsing and re-writing an instance of every problem gives the same canonical JSON: no
    false alarm on any default instance."""
    for problem in ("gpu-mapping", "ddlwmp", "rar-ddls", "nimp"):
        f = registry.get(problem)
        for inst in default_instances(problem, 2):
            watch = InputWatch(f, inst)
            assert watch.copy is not inst and watch.mutation() is None


def test_cli_solve_names_the_mutation_and_validate_takes_what_solve_prints(
        plugins: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``optkit solve --json`` reports the spreading plug-in as an error naming the field; the
    numpy-integer plug-in as an error naming the path; Titan's printed solution is what
    ``optkit validate --solution`` accepts (the JSON form is what ``evaluate`` judged)."""
    from optkit.cli import main

    path = tmp_path / "tiny-04.json"
    path.write_text(json.dumps(TINY_04))
    assert main(["solve", "nimp", str(path), "-a", "spread", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["status"], out["message"], out["solution"]) == ("error", SPREAD_MESSAGE, None)
    ok = tmp_path / "tiny-00.json"
    ok.write_text(json.dumps(default_cases("nimp")[0][1].to_dict()))
    assert main(["solve", "nimp", str(ok), "-a", "numpy-ints", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "error" and "solution.machine_of_worker[0] is a numpy.int64" in out["message"]
    assert main(["solve", "nimp", str(ok), "-a", "titan", "--json", "--out", str(tmp_path / "sol.json")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert json.loads((tmp_path / "sol.json").read_text()) == printed["solution"] == {"machine_of_worker": [0, 1]}
    assert main(["validate", str(ok), "--solution", str(tmp_path / "sol.json")]) == 0
    assert "solution feasible: lex=[0, 2]" in capsys.readouterr().out


def test_compare_stores_the_mutation_as_an_error_beside_cpsats_proof(plugins: None) -> None:
    """The rows compare stores (its plan run by its executor's worker processes, forked here; a
    forkserver loads the plug-in through ``OPTKIT_ALGORITHMS`` as ``test_plugins`` shows): an
    ``error`` row naming the mutation where it stored ``feasible``, beside CP-SAT's
    ``infeasible`` on the same instance. (The report compare builds from them is not needed.)"""
    from optkit.harness.compare import plan
    from optkit.harness.executors import LocalExecutor

    tasks = plan("nimp", [("tiny-04", TINY_04)], ["spread", "cpsat"], "lex", [0], 30.0)
    executor = LocalExecutor(2, method="fork")
    try:
        rows = {row["algorithm"]: row for row in executor.run(tasks)}
    finally:
        executor.close()
    assert (rows["spread"]["status"], rows["spread"]["message"], rows["spread"]["solution"]) == (
        "error", SPREAD_MESSAGE, None)
    assert rows["cpsat"]["status"] == "infeasible"


def test_worst_case_measures_against_the_candidate_as_drawn(plugins: None) -> None:
    """The worst-case search's verdict on a candidate: the algorithm's run is an ``error``
    naming the mutation (no ratio), and the oracle, asked after it in the same process about
    the same instance, proves the instance as drawn infeasible."""
    from optkit.worst_case import measure_candidate

    out = measure_candidate(problem="nimp", instance=TINY_04, algorithm="spread", objective="lex",
                            oracle_time_limit=10.0)
    assert (out["status"], out["message"], out["ratio"]) == ("error", SPREAD_MESSAGE, None)
    assert (out["proven"], out["source"]) == (True, "brute-force: infeasible")


# ----------------------------------------------------------------------------- item 2: check_algorithm's defaults
OLD_DEFAULTS = {"instances": default_instances("nimp", 6), "seeds": (0, 1), "hash_seeds": ()}
"""What check_algorithm ran by default before issue 35: the first 6 instances of nimp's tiny
suite (2-8 workers), seeds 0 and 1, no other process."""


@pytest.mark.parametrize("fault,check,needle,old_defaults_miss_it", [
    ("spread", "solution_passes_evaluate", "mutated its input: field pair_capacity_bytes (", False),
    ("numpy-ints", "solution_passes_evaluate", "solution.machine_of_worker[0] is a numpy.int64", False),
    ("big-only", "solution_passes_evaluate", "9-10 workers/w9-m4-s2", True),
    ("seed-two", "solution_passes_evaluate", ", seed 2: evaluate rejects the solution", True),
    ("greedy-exact", "status_discipline", "tiny-21 (e5af7ccd)/lex, seed 0: infeasible (first fit failed, so "
                                          "nothing fits (wrongly)): the exact oracle does not prove infeasibility", True),
    ("set-order", "hash_seed_independent", "the same seed gives different results in other processes: "
                                           "solution.machine_of_worker[", True),
    ("clock", "same_seed_same_result", "two runs differ with the same seed: solution.machine_of_worker[", False),
])
def test_the_defaults_catch_each_bug_class(fault: str, check: str, needle: str, old_defaults_miss_it: bool) -> None:
    """Each faulty plug-in fails the check that names its fault under check_algorithm's
    defaults (size classes up to 10 workers, seeds 0-2, PYTHONHASHSEED 0 and 1); where the
    issue says the old defaults missed it, they still do (the wider defaults are what catch
    it)."""
    algo = faulty.FAULTY[fault]
    report = check_algorithm("nimp", algo, objectives=["lex"], checks=[check], raise_on_failure=False, cache=CACHE)
    assert report.failed == [check], str(report)
    assert any(needle in m for m in report[check].messages), report[check].messages
    if old_defaults_miss_it:
        old = check_algorithm("nimp", algo, objectives=["lex"], checks=[check], raise_on_failure=False, cache=CACHE,
                              **OLD_DEFAULTS)
        assert old.passed, str(old)
    if fault in ("set-order", "clock"):  # the two differing answers, not two identical-looking reprs
        m = next(m for m in report[check].messages if needle in m)
        a, b = m.split(" (", 2)[-1].rstrip(")").split(", ")
        assert a.split()[0] != b.split()[0], m


def test_set_order_is_never_seen_within_one_process() -> None:
    """The set-of-strings plug-in gives the same answer for every repeat and seed in one process:
    only other processes show it."""
    report = check_algorithm("nimp", faulty.FAULTY["set-order"], objectives=["lex"], hash_seeds=(),
                             raise_on_failure=False, cache=CACHE,
                             checks=["solution_passes_evaluate", "same_seed_same_result", "hash_seed_independent"])
    assert report.passed and report["hash_seed_independent"].skipped == "no hash seeds given", str(report)


def test_each_problem_declares_size_classes_and_the_largest_goes_past_the_tiny_suite() -> None:
    """nimp's classes go above 8 workers; every problem's default cases are labelled by class."""
    sizes = {label.split("/")[0]: inst.N for label, inst in default_cases("nimp")}
    assert list(sizes) == ["1-8 workers", "9-10 workers"] and min(
        inst.N for label, inst in default_cases("nimp") if label.startswith("9-10")) == 9
    for problem in ("gpu-mapping", "ddlwmp", "rar-ddls"):
        assert len(registry.get(problem).size_classes) >= 2
        f = registry.get(problem)
        first_suite = f.suites[next(iter(f.suites))].build()[:3]
        assert [f.instance_to_dict(i) for i in default_instances(problem, 3)] == [
            f.instance_to_dict(f.instance_from_dict(d)) for _, d in first_suite]


def test_an_exact_algorithm_may_refuse_beyond_its_size_limit_and_the_reference_skips_it() -> None:
    """nimp's brute force refuses 12 workers: check_algorithm leaves that instance out of its
    checks with a note; Titan on it is checked against CP-SAT (the brute-force reference is
    passed over, no InputError escapes)."""
    from optkit.formulations.nimp.generate import tiny

    big = tiny(0, workers=12, machines=6)
    small = default_instances("nimp", 1)[0]
    bf = check_algorithm("nimp", "brute-force", instances=[big, small], seeds=(0,), hash_seeds=(), objectives=["lex"],
                         checks=["status_discipline"], cache=CACHE)
    assert bf.passed and len(bf.notes) == 1 and "brute-force handles <= 10 workers" in bf.notes[0], str(bf)
    titan = check_algorithm("nimp", "titan", instances=[big], seeds=(0,), hash_seeds=(), objectives=["lex"],
                            checks=["never_beats_optimum"], cache=CACHE)
    assert titan.passed


def test_an_algorithm_that_cannot_cross_processes_is_skipped_saying_why() -> None:
    f = registry.get("nimp")
    local = Algorithm("local", lambda instance, **kw: f.algorithms["titan"].run(instance, **kw), "heuristic", "",
                      f.objectives)
    report = check_algorithm("nimp", local, instances=default_instances("nimp", 1), seeds=(0,), objectives=["lex"],
                             checks=["hash_seed_independent"], cache=CACHE)
    assert report.passed and "define it at module level" in report["hash_seed_independent"].skipped


@pytest.mark.parametrize("kw,needle", [
    ({"seeds": ("a",)}, "seeds must hold integers >= 0, got 'a'"),
    ({"seeds": ()}, "seeds must hold at least one seed"),
    ({"hash_seeds": [-1]}, "hash_seeds must hold integers >= 0, got -1"),
    ({"params": {"titan_algorithm": "nope"}}, "titan_algorithm"),
])
def test_bad_arguments_are_input_errors(kw: dict[str, Any], needle: str) -> None:
    with pytest.raises(InputError, match=needle.replace("(", r"\(")):
        check_algorithm("nimp", "titan", instances=default_instances("nimp", 1), **kw)
