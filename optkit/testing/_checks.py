"""The battery's checks, for any algorithm: :func:`check_algorithm` (see :mod:`optkit.testing`)."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
import pickle
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from optkit import registry
from optkit.errors import InputError
from optkit.formulation import Algorithm, Formulation
from optkit.instances import instance_hash
from optkit.pristine import MUTATED, NOT_JSON, describe_difference, fresh_copy
from optkit.readings import accepted_params, readings_for, resolve_params
from optkit.result import Result, Status, scalar_objective
from optkit.solve import check_instance_object, solve
from optkit.testing.hash_seeds import REFUSED, HashSeedWorkers, WorkerError
from optkit.testing.oracle import exact_order
from optkit.validation import check_seeds, checked_arguments, integer

__all__ = ["CHECKS", "CheckResult", "CheckReport", "AlgorithmCheckError", "RunCache", "check_algorithm",
           "default_cases", "default_instances", "reference_optimum", "DEFAULT_SEEDS", "DEFAULT_HASH_SEEDS"]

CHECKS = ("solution_passes_evaluate", "same_seed_same_result", "hash_seed_independent", "never_beats_optimum",
          "status_discipline", "bad_parameter_is_input_error")
"""The checks :func:`check_algorithm` runs, by name, in this order."""

REL_TOL = 1e-6
"""Relative tolerance of objective comparisons (``evaluate`` may sum in another order)."""
SOLVER_REL_TOL = 1e-4
"""Exact solvers may disagree by their own MIP gap tolerance (HiGHS: 1e-4 relative)."""
DEFAULT_INSTANCES = 6
"""Instances :func:`default_instances` takes from the problem's first suite when the problem
declares no size classes."""
DEFAULT_SEEDS = (0, 1, 2)
"""Seeds of :func:`check_algorithm` by default: three, one of them >= 2."""
DEFAULT_HASH_SEEDS = (0, 1)
"""``PYTHONHASHSEED`` values of the check ``hash_seed_independent`` by default, one fresh
process each (:mod:`optkit.testing.hash_seeds`)."""


class _Skip(Exception):
    """A check that cannot run here (its reason is the message)."""


@dataclass
class CheckResult:
    """The verdict of one named check: ``passed`` and one message per fault found."""

    name: str
    passed: bool
    messages: list[str] = field(default_factory=list)
    skipped: str = ""

    def __str__(self) -> str:
        if self.skipped:
            return f"{self.name}: skipped ({self.skipped})"
        if self.passed:
            return f"{self.name}: passed"
        return f"{self.name}: FAILED\n" + "\n".join(f"    {m}" for m in self.messages[:10])


@dataclass
class CheckReport:
    """Every check's verdict for one algorithm of one problem."""

    problem: str
    algorithm: str
    results: list[CheckResult]
    notes: list[str] = field(default_factory=list)
    """What the checks could not cover (instances an exact algorithm refused), one line each."""

    @property
    def failed(self) -> list[str]:
        """Names of the checks that failed."""
        return [r.name for r in self.results if not r.passed]

    @property
    def passed(self) -> bool:
        return not self.failed

    def __getitem__(self, name: str) -> CheckResult:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(name)

    def __str__(self) -> str:
        head = f"check_algorithm({self.problem!r}, {self.algorithm!r}): "
        head += "every check passed" if self.passed else f"{len(self.failed)} failed: {', '.join(self.failed)}"
        return head + "\n" + "\n".join([f"  {r}" for r in self.results] + [f"  note: {n}" for n in self.notes])

    def raise_if_failed(self) -> None:
        """:class:`AlgorithmCheckError` naming every failed check, if any failed."""
        if self.failed:
            raise AlgorithmCheckError(self)


class AlgorithmCheckError(AssertionError):
    """Raised by :func:`check_algorithm`: the message names each failed check and its faults;
    ``report`` is the :class:`CheckReport` and ``failed`` the failed checks' names."""

    def __init__(self, report: CheckReport) -> None:
        self.report = report
        self.failed = report.failed
        super().__init__(str(report))


class RunCache:
    """Runs and reference optima shared between :func:`check_algorithm` calls (the project's
    battery checks every algorithm on the same instances: the exact references are solved once),
    and the ``PYTHONHASHSEED`` worker processes (started once, :mod:`optkit.testing.hash_seeds`;
    :meth:`close` ends them, as does garbage collection)."""

    def __init__(self) -> None:
        self.runs: dict[tuple[Any, ...], Result] = {}
        self.references: dict[tuple[Any, ...], tuple[float | None, bool, str, list[str]]] = {}
        self.bounds: dict[tuple[Any, ...], float | None] = {}
        self.cases: dict[str, tuple[Any, Any, list[tuple[str, Any]]]] = {}
        self.raw: dict[tuple[Any, ...], Result | None] = {}
        self.hashed: dict[tuple[Any, ...], dict[int, list[list[list[Any]]]]] = {}
        self._workers: HashSeedWorkers | None = None

    @property
    def workers(self) -> HashSeedWorkers:
        """The ``PYTHONHASHSEED`` workers (started on first use)."""
        if self._workers is None:
            self._workers = HashSeedWorkers()
        return self._workers

    def close(self) -> None:
        """End the worker processes (a later check starts new ones)."""
        if self._workers is not None:
            self._workers.close()
            self._workers = None


def reference_optimum(problem: str | Formulation, instances: Sequence[Any], index: int, objective: str, *,
                      cache: RunCache | None = None, seed: int = 0) -> tuple[float | None, bool, str, list[str]]:
    """``(optimum, proven_infeasible, who, trouble)`` of ``instances[index]`` from the problem's
    exact oracle, the first proof in the order of :func:`optkit.testing.oracle.exact_order`
    (the references of :func:`check_algorithm`)."""
    f = problem if isinstance(problem, Formulation) else registry.get(problem)
    probe = Algorithm("", lambda *a, **k: None, "heuristic", "", (objective,))  # type: ignore[arg-type,return-value]
    ctx = _Context(f, probe, list(instances), (seed,), (objective,), None, cache or RunCache(), ())
    return ctx.reference(index, objective, exclude="")


def _instance(f: Formulation, i: int, x: Any) -> Any:
    """The ``i``-th instance given to :func:`check_algorithm`, as an instance object; a bad one
    is an InputError naming ``instances[i]`` and the problem."""
    try:
        if isinstance(x, dict):
            return f.instance_from_dict(x)
        check_instance_object(f, x)
        return x
    except InputError as err:
        raise InputError(f"instances[{i}].{err.field}" if err.field != "instance" else f"instances[{i}]",
                         err.message, problem=f.name) from None


def default_cases(problem: str | Formulation) -> list[tuple[str, Any]]:
    """``(label, instance object)`` of every instance :func:`check_algorithm` runs by default:
    each size class the problem declares (:attr:`~optkit.formulation.Formulation.size_classes`,
    smallest first; labels ``class/name``), or, where it declares none, the first
    :data:`DEFAULT_INSTANCES` of its first suite (labels ``suite/name``). Seeded, so the same in
    every run."""
    f = problem if isinstance(problem, Formulation) else registry.get(problem)
    if f.size_classes:
        cases = [(f"{cls}/{name}", data) for cls, suite in f.size_classes.items() for name, data in suite.build()]
    elif f.suites:
        suite = f.suites[next(iter(f.suites))]
        cases = [(f"{suite.name}/{name}", data) for name, data in suite.build()[:DEFAULT_INSTANCES]]
        if not cases:
            raise InputError("instances", f"must be given: suite {suite.name} is empty", problem=f.name)
    else:
        raise InputError("instances", "must be given: the problem declares no suite", problem=f.name)
    return [(label, f.instance_from_dict(data)) for label, data in cases]


def _cached_default_cases(f: Formulation, cache: RunCache) -> list[tuple[str, Any]]:
    """:func:`default_cases` of ``f``, built once per cache and problem (seeded: the same every
    time; ``solve`` hands each run a fresh copy, :mod:`optkit.pristine`). Kept beside the
    formulation's own size classes and suites, so that another formulation of the same name (a
    user's) gets its own cases."""
    kept = cache.cases.get(f.name)
    if kept is None or kept[0] is not f.size_classes or kept[1] is not f.suites:
        kept = cache.cases[f.name] = (f.size_classes, f.suites, default_cases(f))
    return kept[2]


def default_instances(problem: str | Formulation, n: int | None = None) -> list[Any]:
    """The instances of :func:`default_cases` (the first ``n``, when given), as instance
    objects. The first size class starts with the first instances of the problem's first suite,
    so ``default_instances(problem, n)`` for a small ``n`` is the first ``n`` of that suite."""
    if n is not None:
        try:
            n = integer(n, "n", low=1)
        except InputError as err:
            f = problem if isinstance(problem, Formulation) else registry.get(problem)
            raise err.with_problem(f.name) from None
    cases = default_cases(problem)
    return [inst for _, inst in (cases if n is None else cases[:n])]


def _close(a: float, b: float, rel: float = REL_TOL) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


def _key(res: Result) -> float | None:
    return scalar_objective(res.objective, res.metrics, res.objective_name)


def _run_function(algo: Algorithm) -> Any:
    target = getattr(algo.run, "target", None)
    return target() if callable(target) else algo.run


def _bad_value(reading: Any) -> Any:
    """A value the reading must refuse: outside an open reading's range (or not a number), or
    an option no closed reading declares."""
    if reading.open:
        if reading.maximum is not None:
            return reading.maximum + 1
        if reading.minimum is not None:
            return reading.minimum - 1
        return "not-a-number"
    return "no-such-option-" + reading.name


class _Context:
    """What the checks share: the formulation (with the algorithm in it), the instances, the
    seeds, the objectives, the hash seeds and the cache."""

    def __init__(self, f: Formulation, algo: Algorithm, instances: list[Any], seeds: tuple[int, ...],
                 objectives: tuple[str, ...], params: Mapping[str, Any] | None, cache: RunCache,
                 hash_seeds: tuple[int, ...], labels: Sequence[str] | None = None,
                 first_class: int | None = None) -> None:
        self.f, self.algo, self.instances, self.seeds = f, algo, instances, seeds
        self.objectives, self.cache, self.user_params, self.hash_seeds = objectives, cache, params, hash_seeds
        self.hashes = [instance_hash(f.instance_to_dict(inst)) for inst in instances]
        labels = list(labels) if labels is not None else [f"instance {i}" for i in range(len(instances))]
        self.names = [f"{label} ({h[:8]})" for label, h in zip(labels, self.hashes)]
        self.refused: dict[int, str] = {}  # instance index -> the exact algorithm's refusal
        # The instances of the repeats (other seeds, the same seed again, other processes): all,
        # but for an exact algorithm on the default cases only its first size class (its repeats
        # cost as much as its proofs; the larger classes are proved once, at the first seed).
        n = len(instances) if first_class is None or algo.kind != "exact" else first_class
        self.repeated = range(n)

    def params(self, name: str) -> dict[str, Any]:
        """The user's params for the algorithm under test; one search worker where an algorithm
        takes ``workers`` (parallel CP-SAT is documented as not repeatable; one worker is)."""
        if name == self.algo.name and self.user_params is not None:
            return dict(self.user_params)
        return {"workers": 1} if "workers" in accepted_params(self.f, name) else {}

    def solve(self, name: str, i: int, objective: str, seed: int | None) -> Result:
        """``solve`` without a time limit; a crash becomes an ``error`` result naming it, an
        ``InputError`` on the (valid) instance an ``error`` result marked ``refused`` (the
        parameters and objectives were validated before any run). At the first seed, the
        algorithm's own result (what :meth:`raw` needs) is kept from this very run, so that it
        is not run a second time for it."""
        f, kept = self.f, []
        raw_key = self._raw_key(name, i, objective) if seed == self.seeds[0] else None
        if raw_key is not None and raw_key not in self.cache.raw:
            f = _recording(self.f, name, kept)
        try:
            return solve(f, self.instances[i], name, objective=objective, seed=seed, params=self.params(name))
        except InputError as exc:
            return Result(Status.ERROR, message=f"{REFUSED}: InputError: {exc}", objective_name=objective,
                          info={"refused": True})
        except Exception as exc:  # noqa: BLE001 - a crash is a finding, not the checker's failure
            return Result(Status.ERROR, message=f"raised {type(exc).__name__}: {exc}", objective_name=objective)
        finally:
            if kept and raw_key is not None:
                self.cache.raw.setdefault(raw_key, kept[0])

    def run(self, name: str, i: int, objective: str, seed: int | None) -> Result:
        algo = self.f.algorithms[name]
        key = (self.f.name, name, id(algo.run), self.hashes[i], objective, seed,
               repr(sorted(self.params(name).items())))
        if key not in self.cache.runs:
            self.cache.runs[key] = self.solve(name, i, objective, seed)
        return self.cache.runs[key]

    def where(self, i: int, objective: str, seed: int | None) -> str:
        """``instance (hash)/objective``, with the seed when the check runs several."""
        return f"{self.names[i]}/{objective}" + (f", seed {seed}" if len(self.seeds) > 1 else "")

    def runs(self, seed: int | None = None) -> Iterator[tuple[int, str, str, Result]]:
        """``(index, where, objective, result)`` of the algorithm under test on every instance
        and objective, for ``seed`` (default: every seed). An exact algorithm's refusal of an
        instance (a brute force beyond its size limit) leaves that instance out (a note)."""
        for s in self.seeds if seed is None else (seed,):
            for i in range(len(self.instances)) if s == self.seeds[0] else self.repeated:
                for objective in self.objectives:
                    res = self.run(self.algo.name, i, objective, s)
                    if res.info.get("refused") and self.algo.kind == "exact":
                        self.refused.setdefault(i, res.message)
                        continue
                    yield i, self.where(i, objective, s), objective, res

    def reference(self, i: int, objective: str, exclude: str | None = None) -> tuple[float | None, bool, str, list[str]]:
        """``(optimum, proven_infeasible, who, trouble)`` from the exact oracle: the problem's
        registered exact algorithms other than ``exclude`` (default: the one under test) in the
        order of :func:`optkit.testing.oracle.exact_order` (brute force where it holds the
        instance, CP-SAT, then the MILP); the first proof of optimality or infeasibility wins.
        One that refuses the instance (beyond its size limit) is passed over. The exact
        algorithms agree with each other because each is checked against the others (each is
        the algorithm under test in turn), so one proof per instance is enough."""
        exclude = self.algo.name if exclude is None else exclude
        exact = [n for n in exact_order(self.f, objective) if n != exclude]
        key = (self.f.name, self.hashes[i], objective, tuple(exact))
        if key in self.cache.references:
            return self.cache.references[key]
        out: tuple[float | None, bool, str, list[str]] = (None, False, "", [])
        for name in exact:
            res = self.run(name, i, objective, self.seeds[0])
            if res.status is Status.OPTIMAL:
                k = _key(res)
                out = (None, False, "", [f"{name} proved optimality without a scalar objective"]) if k is None \
                    else (k, False, name, [])
                break
            if res.status is Status.INFEASIBLE:
                out = (None, True, name, [])
                break
        self.cache.references[key] = out
        return out

    def lower_bound(self, i: int, objective: str) -> float | None:
        """The formulation's proven lower bound on instance ``i``, computed once per instance and
        objective for the whole cache (a function of the instance alone; every run of every
        algorithm on the instance is compared with it)."""
        if self.f.lower_bound is None:
            return None
        key = (self.f.name, self.f.lower_bound, self.hashes[i], objective)
        if key not in self.cache.bounds:
            self.cache.bounds[key] = self.f.lower_bound(self.instances[i], objective)
        return self.cache.bounds[key]

    def _raw_key(self, name: str, i: int, objective: str) -> tuple[Any, ...]:
        """The cache key of algorithm ``name``'s own result on instance ``i`` at the first seed."""
        params = resolve_params(self.f, name, self.params(name))
        return ("raw", self.f.name, name, id(self.f.algorithms[name].run), self.hashes[i], objective, self.seeds[0],
                repr(sorted(params.items())))

    def raw(self, i: int, objective: str) -> Result | None:
        """The algorithm's own result, before the engine replaces its numbers (None: it crashed),
        from its own copy of the instance (:func:`optkit.pristine.fresh_copy`): the one kept
        from the first seed's ``solve`` run (:meth:`solve`), else from a run of its own."""
        params = resolve_params(self.f, self.algo.name, self.params(self.algo.name))
        key = self._raw_key(self.algo.name, i, objective)
        if key not in self.cache.raw:
            try:
                self.cache.raw[key] = self.algo.run(fresh_copy(self.f, self.instances[i]), objective=objective,
                                                    time_limit=None, seed=self.seeds[0], **params)
            except Exception:  # noqa: BLE001 - the crash is reported by status_discipline
                self.cache.raw[key] = None
        return self.cache.raw[key]

    def _portable(self) -> Any:
        """The algorithm as a worker process can rebuild it: the object itself when it pickles
        (its run function importable by name), else its name when the registry of a fresh
        process holds this very algorithm; otherwise :class:`_Skip`."""
        try:
            pickle.dumps(self.algo)
            return self.algo
        except Exception:  # noqa: BLE001 - a closure (lazy_run), a lambda, a local function
            pass
        try:
            own = registry.get(self.f.name).algorithms.get(self.algo.name)
        except InputError:
            own = None
        if own is not None and own.run is self.algo.run and own.plugin != "register_algorithm":
            return self.algo.name
        raise _Skip(f"{self.algo.name}'s run function cannot be re-created in another process (a lambda, a "
                    "closure or a function defined inside another); define it at module level")

    def hash_seed_runs(self) -> dict[int, list[list[list[Any]]]]:
        """``{hash seed: runs}`` of the algorithm at the first seed in fresh processes
        (:mod:`optkit.testing.hash_seeds`); ``runs[i][k]`` is ``[status, solution, message]``."""
        params = self.params(self.algo.name)
        key = ("hash", self.f.name, self.algo.name, id(self.algo.run), tuple(self.hashes[i] for i in self.repeated),
               self.objectives, self.seeds[0], repr(sorted(params.items())), self.hash_seeds)
        if key not in self.cache.hashed:
            request = {"problem": self.f.name, "algorithm": self._portable(),
                       "instances": [self.f.instance_to_dict(self.instances[i]) for i in self.repeated],
                       "objectives": list(self.objectives), "seed": self.seeds[0], "params": params}
            try:
                self.cache.hashed[key] = self.cache.workers.run(self.hash_seeds, request)
            except WorkerError as exc:
                raise _Skip(str(exc)) from None
        return self.cache.hashed[key]


def _recording(f: Formulation, name: str, into: list[Result | None]) -> Formulation:
    """``f`` with algorithm ``name``'s run function wrapped to append to ``into`` a deep copy of
    the result it returns (``None`` when it raises, as :meth:`_Context.raw` records a crash),
    taken before ``solve`` replaces the result's numbers. The wrapper's keywords and lazy import
    are those of the function it wraps (its ``target``), so ``solve`` validates and runs the
    algorithm as it would the unwrapped one."""
    algo = f.algorithms[name]
    run = algo.run

    def recorded(*args: Any, **kwargs: Any) -> Any:
        try:
            out = run(*args, **kwargs)
        except Exception:
            into.append(None)
            raise
        into.append(copy.deepcopy(out))
        return out

    target = getattr(run, "target", None)
    recorded.target = target if callable(target) else (lambda: run)  # type: ignore[attr-defined]
    return dataclasses.replace(f, algorithms={**f.algorithms, name: dataclasses.replace(algo, run=recorded)})


def _difference(a: Result, b: Result, first: str, second: str) -> str | None:
    """What differs between two runs' status, solution and objective (the first differing
    field, with both values), or ``None``."""
    def view(r: Result) -> dict[str, Any]:
        obj = list(r.objective) if isinstance(r.objective, tuple) else r.objective
        return {"status": r.status.value, "solution": r.solution, "objective": obj}

    return describe_difference(view(a), view(b), first, second)


# ----------------------------------------------------------------------------- the checks
def _solution_passes_evaluate(c: _Context) -> list[str]:
    """Every returned solution is feasible for a fresh ``evaluate`` call on the instance as
    given; the objective ``solve`` reports, and any objective the algorithm put in its own result,
    equal ``evaluate``'s; the algorithm leaves its input unchanged and returns JSON data
    (:mod:`optkit.pristine`: ``solve`` makes either an ``error`` naming the field)."""
    faults = []
    for i, where, objective, res in c.runs():
        if res.solution is None:
            if res.status is Status.ERROR and res.message.startswith(("evaluate rejected", MUTATED, NOT_JSON)):
                faults.append(f"{where}: {res.message}")
            continue
        ev = c.f.evaluate(c.instances[i], res.solution)
        if not ev.feasible:
            faults.append(f"{where}: evaluate rejects the solution: {ev.violations[:3]}")
            continue
        want = ev.objectives[objective]
        if res.objective != (list(want) if isinstance(want, (list, tuple)) else want):
            faults.append(f"{where}: solve reports {res.objective}, evaluate {want}")
    for i in range(len(c.instances)):
        for objective in c.objectives:
            raw = c.raw(i, objective)
            if raw is None or raw.objective is None or raw.solution is None or i in c.refused:
                continue
            try:
                raw_ev = c.f.evaluate(c.instances[i], raw.solution)
            except Exception:  # noqa: BLE001 - a solution evaluate cannot read: named by the loop above
                continue
            mine, theirs = raw.objective, raw_ev.objectives.get(objective)
            if isinstance(theirs, (list, tuple)):
                same = isinstance(mine, (list, tuple)) and len(mine) == len(theirs) and all(
                    _close(a, b) for a, b in zip(mine, theirs))
            else:
                same = isinstance(mine, (int, float)) and theirs is not None and _close(mine, theirs)
            if not same:
                faults.append(f"{c.names[i]}/{objective}: the algorithm reports the objective {mine}, evaluate {theirs}")
    return faults


def _same_seed_same_result(c: _Context) -> list[str]:
    """Two runs with the same seed return the same status, solution and objective (each seed);
    an algorithm not declared ``randomized`` (and not exact) returns for every seed what it
    returns for the first. A fault names the first field that differs, with both values."""
    faults = []
    first_seed = c.seeds[0]
    for seed in c.seeds:
        for i, where, objective, first in c.runs(seed):
            if i not in c.repeated:
                continue
            again = c.solve(c.algo.name, i, objective, seed)
            diff = _difference(first, again, "in the first run", "in the second")
            if diff:
                faults.append(f"{where}: two runs differ with the same seed: {diff}")
            elif not c.algo.randomized and c.algo.kind != "exact" and seed != first_seed:
                base = c.run(c.algo.name, i, objective, first_seed)
                diff = _difference(base, first, f"with seed {first_seed}", f"with seed {seed}")
                if diff:
                    faults.append(f"{where}: not declared randomized, but seeds {first_seed} and {seed} give "
                                  f"different results: {diff}")
    return faults


def _hash_seed_independent(c: _Context) -> list[str]:
    """The first seed's runs give the same status and solution in fresh processes under every
    ``PYTHONHASHSEED`` of ``hash_seeds`` as in this process (ties broken by the iteration order
    of a set of strings differ between processes, never within one). One worker process per hash
    seed runs them all (:mod:`optkit.testing.hash_seeds`)."""
    if len(c.hash_seeds) == 0:
        raise _Skip("no hash seeds given")
    got = c.hash_seed_runs()
    faults = []
    for i in c.repeated:
        for k, objective in enumerate(c.objectives):
            here = c.run(c.algo.name, i, objective, c.seeds[0])
            if here.info.get("refused") and c.algo.kind == "exact":
                continue
            answers = [(f"under PYTHONHASHSEED={h}", {"status": got[h][i][k][0], "solution": got[h][i][k][1]})
                       for h in c.hash_seeds]
            answers.append(("in this process", {"status": here.status.value, "solution": here.solution}))
            (name0, a0), rest = answers[0], answers[1:]
            for name1, a1 in rest:
                diff = describe_difference(a0, a1, name0, name1)
                if diff:
                    faults.append(f"{c.where(i, objective, c.seeds[0])}: the same seed gives different results in "
                                  f"other processes: {diff}")
                    break
    return faults


def _never_beats_optimum(c: _Context) -> list[str]:
    """No solution, and no objective the algorithm reports itself, beats the optimum the exact
    oracle proves (:meth:`_Context.reference`: brute force, CP-SAT or the MILP, never the
    algorithm under test), nor the proven lower bound; an ``optimal`` result equals the
    optimum; a result's own ``bound`` never exceeds it."""
    faults = []
    for i, where, objective, res in c.runs():
        opt, _, who, trouble = c.reference(i, objective)
        faults += [f"{where}: {t}" for t in trouble]
        lb = c.lower_bound(i, objective)
        if opt is not None and lb is not None and lb > opt + REL_TOL * abs(opt) + 1e-9:
            faults.append(f"{where}: lower_bound {lb} > optimum {opt} ({who})")
        floor = opt if opt is not None else lb
        if floor is None:
            continue
        slack = SOLVER_REL_TOL * abs(floor) + 1e-9
        key = _key(res)
        src = who or "lower_bound"
        if key is not None:
            if key < floor - slack:
                faults.append(f"{where}: {key} beats the proven {floor} ({src})")
            if res.status is Status.OPTIMAL and opt is not None and not _close(key, opt, SOLVER_REL_TOL):
                faults.append(f"{where}: 'optimal' {key}, optimum {opt} ({who})")
        raw = c.raw(i, objective)
        own = None if raw is None else raw.objective
        if isinstance(own, (int, float)) and not isinstance(own, bool) and own < floor - slack:
            faults.append(f"{where}: the algorithm claims the objective {own}, which beats the proven "
                          f"{floor} ({src})")
        bound = res.bound if res.status is not Status.OPTIMAL else (None if raw is None else raw.bound)
        if bound is not None and opt is not None and bound > opt + slack:
            faults.append(f"{where}: bound {bound} above the optimum {opt} ({who})")
    return faults


def _status_discipline(c: _Context) -> list[str]:
    """``optimal`` only from an exact algorithm with a proof (a bound equal to its value);
    ``infeasible`` only when the exact oracle proves it (brute force, CP-SAT or the MILP, never
    the algorithm under test) and no algorithm finds a solution; heuristics, peers and baselines return
    ``feasible``, ``no_solution`` or a proven ``infeasible``; ``no_solution`` carries a message
    and no solution; no ``error`` (a crash, an altered input, a refused valid instance) and no
    ``time_limit`` (no limit was set) on a valid instance; an exact algorithm takes at least
    one instance (it may refuse those beyond its size limit)."""
    faults = []
    kind = c.algo.kind
    seen = False
    for i, where, objective, res in c.runs():
        seen = True
        where = f"{where}: {res.status.value} ({res.message[:200]})"
        if res.status in (Status.ERROR, Status.TIME_LIMIT):
            faults.append(f"{where}: {res.status.value} on a valid instance without a time limit")
            continue
        if res.status is Status.OPTIMAL and kind != "exact":
            faults.append(f"{where}: 'optimal' from a {kind}, which proves nothing")
        elif kind == "exact" and res.status not in (Status.OPTIMAL, Status.INFEASIBLE):
            faults.append(f"{where}: an exact algorithm without a time limit must end optimal or infeasible")
        if res.status is Status.OPTIMAL:
            raw = c.raw(i, objective)
            if raw is not None and raw.bound is None:
                faults.append(f"{where}: 'optimal' without a proof (the result carries no bound)")
            if res.bound is None or res.gap is None or res.gap > SOLVER_REL_TOL:
                faults.append(f"{where}: 'optimal' with gap {res.gap}")
        if res.status is Status.NO_SOLUTION and (res.solution is not None or not res.message.strip()):
            faults.append(f"{where}: no_solution must carry a message and no solution")
        if res.status is Status.INFEASIBLE:
            if res.solution is not None:
                faults.append(f"{where}: infeasible with a solution")
            opt, proven, who, _ = c.reference(i, objective)
            if not proven:
                faults.append(f"{where}: the exact oracle does not prove infeasibility"
                              + (f" ({who} proves the optimum {opt})" if opt is not None else ""))
            found = [a for a, al in c.f.algorithms.items() if al.available() and objective in al.objectives
                     and a != c.algo.name and c.run(a, i, objective, c.seeds[0]).solution is not None]
            if found:
                faults.append(f"{where}: {found} found a feasible solution")
    if not seen and c.refused:
        faults.append(f"refused every instance: {next(iter(c.refused.values()))[:200]}")
    return faults


def _bad_parameter_is_input_error(c: _Context) -> list[str]:
    """``params={"no_such_key": 1}`` and a value outside a reading's options are an
    :class:`InputError` naming the key, raised before the algorithm runs; every reading the
    algorithm takes is a keyword of its run function with the reading's default."""
    faults = []
    inst = c.instances[0]

    def refused(params: dict[str, Any], key: str) -> str | None:
        try:
            solve(c.f, inst, c.algo.name, params=params)
        except InputError as exc:
            return None if key in str(exc) else f"the InputError does not name {key!r}: {exc}"
        except Exception as exc:  # noqa: BLE001
            return f"params={params!r} raised {type(exc).__name__}: {exc}, not an InputError naming {key!r}"
        return f"params={params!r} was accepted: expected an InputError naming {key!r}"

    msg = refused({"no_such_key": 1}, "no_such_key")
    if msg:
        faults.append(msg)
    try:
        signature = inspect.signature(_run_function(c.algo))
    except (TypeError, ValueError):
        signature = None
    for reading in readings_for(c.f, c.algo.name):
        msg = refused({reading.name: _bad_value(reading)}, reading.name)
        if msg:
            faults.append(msg)
        p = None if signature is None else signature.parameters.get(reading.name)
        if p is None or p.kind not in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD):
            faults.append(f"reading {reading.name} is not a keyword parameter of {c.algo.name}'s run function")
        elif p.default != reading.default:
            faults.append(f"keyword {reading.name} defaults to {p.default!r}, the reading to {reading.default!r}")
    return faults


_CHECK_FUNCTIONS: dict[str, Callable[[_Context], list[str]]] = {
    "solution_passes_evaluate": _solution_passes_evaluate,
    "same_seed_same_result": _same_seed_same_result,
    "hash_seed_independent": _hash_seed_independent,
    "never_beats_optimum": _never_beats_optimum,
    "status_discipline": _status_discipline,
    "bad_parameter_is_input_error": _bad_parameter_is_input_error,
}


def _with_algorithm(f: Formulation, algorithm: str | Algorithm) -> tuple[Formulation, Algorithm]:
    if isinstance(algorithm, str):
        if algorithm not in f.algorithms:
            raise InputError("algorithm", f"is unknown for {f.name}: {algorithm!r} (known: {', '.join(f.algorithms)})")
        return f, f.algorithms[algorithm]
    if not isinstance(algorithm, Algorithm):
        raise InputError("algorithm", f"must be an algorithm name or an optkit Algorithm, got {type(algorithm).__name__}")
    if algorithm.problem not in (None, f.name):
        raise InputError("algorithm", f"{algorithm.name!r} is for {algorithm.problem}, not {f.name}")
    own = f.algorithms.get(algorithm.name)
    if own is not None and own is not algorithm and own.run is not algorithm.run:
        raise InputError("algorithm", f"{algorithm.name!r} clashes with an algorithm of {f.name} of the same name; "
                                      "rename it", problem=f.name)
    if not algorithm.objectives:
        algorithm = dataclasses.replace(algorithm, objectives=f.objectives)
    return dataclasses.replace(f, algorithms={**f.algorithms, algorithm.name: algorithm}), algorithm


@checked_arguments()
def check_algorithm(
    problem: str | Formulation,
    algorithm: str | Algorithm,
    *,
    instances: Iterable[Any] | None = None,
    seeds: Sequence[int] = DEFAULT_SEEDS,
    hash_seeds: Sequence[int] = DEFAULT_HASH_SEEDS,
    objectives: Sequence[str] | None = None,
    params: Mapping[str, Any] | None = None,
    checks: Sequence[str] | None = None,
    raise_on_failure: bool = True,
    cache: RunCache | None = None,
) -> CheckReport:
    """Run the battery's checks on one algorithm and name each check that fails.

    scikit-learn's ``check_estimator`` for optkit: the checks every algorithm of the project
    passes (``tests/test_battery.py`` runs this function on each), for any algorithm of an
    existing problem, registered or not.

    Parameters
    ----------
    problem
        A problem name (``"nimp"``) or a :class:`~optkit.formulation.Formulation`.
    algorithm
        The name of a registered algorithm (a plug-in too), or an
        :class:`~optkit.formulation.Algorithm` object (it need not be registered; its name must
        not be one of the problem's own algorithms, unless it is that algorithm).
    instances
        Instance objects or dicts; default :func:`default_cases`: every size class the problem
        declares (:attr:`~optkit.formulation.Formulation.size_classes`), each up to the largest
        size its exact solvers prove in seconds, with feasible instances a greedy rule misses and
        proven infeasible ones (the classes are listed in each problem's ``generate`` module,
        ``SIZE_CLASSES``).
    seeds
        Seeds of the runs (default :data:`DEFAULT_SEEDS`: 0, 1, 2); every check runs at every
        seed, except the ``PYTHONHASHSEED`` runs and the exact references (the first seed). An
        exact algorithm on the default cases repeats (other seeds, the same seed again, other
        processes) on the first size class only: its repeats cost as much as its proofs, and
        the larger classes are proved once, at the first seed.
    hash_seeds
        ``PYTHONHASHSEED`` values of ``hash_seed_independent`` (default
        :data:`DEFAULT_HASH_SEEDS`: 0 and 1), one fresh worker process each.
    objectives
        Default: every objective the algorithm supports.
    params
        Keywords and readings of the algorithm under test (validated as ``solve`` does).
    checks
        Names from :data:`CHECKS` (default: all).
    raise_on_failure
        Raise :class:`AlgorithmCheckError` (an ``AssertionError``) naming every failed check;
        False: return the report only.
    cache
        A :class:`RunCache` shared between calls (the exact references are then solved once and
        the hash-seed worker processes started once; the caller closes it). Default: a new one,
        closed at the end.

    Returns
    -------
    CheckReport
        One :class:`CheckResult` per check, in the order of :data:`CHECKS`; ``notes`` lists the
        instances an exact algorithm refused (beyond its size limit).

    Raises
    ------
    AlgorithmCheckError
        When a check fails and ``raise_on_failure``.
    optkit.errors.InputError
        An unknown problem, algorithm, objective or check name; a bad ``params`` value; an
        algorithm whose optional packages are missing.

    References
    ----------
    Pedregosa et al., "Scikit-learn: Machine Learning in Python", JMLR 12 (2011); its
    ``sklearn.utils.estimator_checks.check_estimator`` is the model. The checks are the project's
    own battery, one for every algorithm (``tests/test_battery.py`` runs this function on each).

    Notes
    -----
    The checks (their names appear in every failure; each fault names the instance, objective
    and seed, and where two answers differ, the first differing field with both values):

    ``solution_passes_evaluate``
        every returned solution is feasible for a fresh ``evaluate`` on the instance as given,
        and any objective the algorithm reports itself equals ``evaluate``'s; the algorithm
        leaves its input unchanged (``mutated its input: field ...``) and returns JSON data
        (a numpy integer is named): :func:`optkit.solve.solve` judges every run this way
        (:mod:`optkit.pristine`).
    ``same_seed_same_result``
        the same seed gives the same status, solution and objective; an algorithm not declared
        ``randomized`` gives the same result for every seed.
    ``hash_seed_independent``
        the first seed gives the same status and solution in fresh processes under each of
        ``hash_seeds`` as in this one (ties that follow the iteration order of a set of strings
        are caught here). Skipped, saying why, when the algorithm cannot be re-created in
        another process (a lambda or a closure).
    ``never_beats_optimum``
        neither its solutions nor its own claimed objective beat the optimum proven by the
        exact oracle (the first proof among brute force where it holds, CP-SAT and the MILP,
        never the algorithm under test: each exact solver is thus checked against the others)
        or the proven lower bound; its ``bound`` never exceeds the optimum; ``optimal`` equals the optimum.
    ``status_discipline``
        ``optimal`` only from an exact algorithm with a proof (a bound); ``infeasible`` only
        where the exact oracle proves it and no algorithm finds a solution (an "exact" solver
        that answers ``infeasible`` where its greedy fails is caught on the feasible instances a
        greedy misses); ``no_solution`` with a message and no solution; never ``error`` (a crash:
        an exception is reported here too) nor ``time_limit`` (no limit is set) on a valid
        instance.
    ``bad_parameter_is_input_error``
        an unknown keyword and a value outside a reading's options are an ``InputError``
        naming the key; every reading the algorithm takes is a keyword of its run function with
        the reading's default.

    No time limit is given to any run: no clock decides a verdict (a hang is the caller's
    test runner's to stop). Where ``workers`` is a keyword, the reference solvers run with one
    worker (parallel CP-SAT is not repeatable).

    Guarantee: none (a test helper: it reports what it finds on the instances given).

    Units: those of the problem's objectives.

    Examples
    --------
    >>> from optkit.testing import check_algorithm
    >>> report = check_algorithm("nimp", "hived", seeds=(0,), checks=["solution_passes_evaluate"])
    >>> report.passed, report.failed
    (True, [])
    """
    f = problem if isinstance(problem, Formulation) else registry.get(problem)
    try:
        f, algo = _with_algorithm(f, algorithm)
    except InputError as err:
        raise err.with_problem(f.name) from None
    from optkit.solve import check_algorithm as check_names

    wanted = list(CHECKS if checks is None else checks)
    for name in wanted:
        if name not in _CHECK_FUNCTIONS:
            raise InputError("checks", f"names the unknown check {name!r} (known: {', '.join(CHECKS)})",
                             problem=f.name)
    seeds = tuple(check_seeds(seeds, "seeds", problem=f.name))
    hashes = tuple(check_seeds(hash_seeds, "hash_seeds", problem=f.name, allow_empty=True))
    objs = tuple(algo.objectives if objectives is None else objectives)
    for o in objs:
        check_names(f, algo.name, o)
    resolve_params(f, algo.name, dict(params) if params is not None else None)  # a bad value: InputError now
    own_cache = cache is None
    run_cache = RunCache() if cache is None else cache
    if instances is None:
        cases = _cached_default_cases(f, run_cache)
        insts, labels = [inst for _, inst in cases], [label for label, _ in cases]
        first_class = sum(1 for label in labels if label.split("/")[0] == labels[0].split("/")[0])
    else:
        insts = [_instance(f, i, x) for i, x in enumerate(instances)]
        labels, first_class = None, None
    if not insts:
        raise InputError("instances", "must hold at least one instance", problem=f.name)
    ctx = _Context(f, algo, insts, seeds, objs, params, run_cache, hashes, labels, first_class)
    results = []
    try:
        for name in wanted:
            try:
                faults = _CHECK_FUNCTIONS[name](ctx)
            except _Skip as skip:
                results.append(CheckResult(name, True, [], skipped=str(skip)))
                continue
            results.append(CheckResult(name, not faults, faults))
    finally:
        if own_cache:
            run_cache.close()
    notes = [f"{ctx.names[i]}: {msg[:300]} (left out of every check)" for i, msg in sorted(ctx.refused.items())]
    report = CheckReport(f.name, algo.name, results, notes)
    if raise_on_failure:
        report.raise_if_failed()
    return report
