"""The battery's checks, for any algorithm: :func:`check_algorithm` (see :mod:`optkit.testing`)."""

from __future__ import annotations

import dataclasses
import inspect
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from optkit import registry
from optkit.errors import InputError
from optkit.formulation import Algorithm, Formulation
from optkit.instances import instance_hash
from optkit.readings import accepted_params, readings_for, resolve_params
from optkit.result import Result, Status, scalar_objective
from optkit.solve import check_instance_object, solve
from optkit.validation import check_seed, checked_arguments, integer

__all__ = ["CHECKS", "CheckResult", "CheckReport", "AlgorithmCheckError", "RunCache", "check_algorithm",
           "default_instances", "reference_optimum"]

CHECKS = ("solution_passes_evaluate", "same_seed_same_result", "never_beats_optimum", "status_discipline",
          "bad_parameter_is_input_error")
"""The checks :func:`check_algorithm` runs, by name, in this order."""

REL_TOL = 1e-6
"""Relative tolerance of objective comparisons (``evaluate`` may sum in another order)."""
SOLVER_REL_TOL = 1e-4
"""Exact solvers may disagree by their own MIP gap tolerance (HiGHS: 1e-4 relative)."""
DEFAULT_INSTANCES = 6
"""Instances :func:`default_instances` takes from the problem's first suite."""


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
        return head + "\n" + "\n".join(f"  {r}" for r in self.results)

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
    battery checks every algorithm on the same instances: the exact references are solved once)."""

    def __init__(self) -> None:
        self.runs: dict[tuple[Any, ...], Result] = {}
        self.references: dict[tuple[Any, ...], tuple[float | None, bool, str, list[str]]] = {}
        self.raw: dict[tuple[Any, ...], Result | None] = {}


def reference_optimum(problem: str | Formulation, instances: Sequence[Any], index: int, objective: str, *,
                      cache: RunCache | None = None, seed: int = 0) -> tuple[float | None, bool, str, list[str]]:
    """``(optimum, proven_infeasible, who, disagreements)`` of ``instances[index]`` from every
    available exact algorithm of the problem (the references of :func:`check_algorithm`)."""
    f = problem if isinstance(problem, Formulation) else registry.get(problem)
    probe = Algorithm("", lambda *a, **k: None, "heuristic", "", (objective,))  # type: ignore[arg-type,return-value]
    ctx = _Context(f, probe, list(instances), (seed,), (objective,), None, cache or RunCache())
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


def default_instances(problem: str | Formulation, n: int = DEFAULT_INSTANCES) -> list[Any]:
    """The first ``n`` instances of the problem's first suite (by convention its smallest,
    exact-solvable one), as instance objects: seeded, so the same in every run."""
    f = problem if isinstance(problem, Formulation) else registry.get(problem)
    try:
        n = integer(n, "n", low=1)
    except InputError as err:
        raise err.with_problem(f.name) from None
    if not f.suites:
        raise InputError("instances", "must be given: the problem declares no suite", problem=f.name)
    suite = f.suites[next(iter(f.suites))]
    items = suite.build()[:n]
    if not items:
        raise InputError("instances", f"must be given: suite {suite.name} is empty", problem=f.name)
    return [f.instance_from_dict(data) for _, data in items]


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
    seeds, the objectives and the cache."""

    def __init__(self, f: Formulation, algo: Algorithm, instances: list[Any], seeds: tuple[int, ...],
                 objectives: tuple[str, ...], params: Mapping[str, Any] | None, cache: RunCache) -> None:
        self.f, self.algo, self.instances, self.seeds = f, algo, instances, seeds
        self.objectives, self.cache, self.user_params = objectives, cache, params
        self.hashes = [instance_hash(f.instance_to_dict(inst)) for inst in instances]
        self.names = [f"instance {i} ({h[:8]})" for i, h in enumerate(self.hashes)]

    def params(self, name: str) -> dict[str, Any]:
        """The user's params for the algorithm under test; one search worker where an algorithm
        takes ``workers`` (parallel CP-SAT is documented as not repeatable; one worker is)."""
        if name == self.algo.name and self.user_params is not None:
            return dict(self.user_params)
        return {"workers": 1} if "workers" in accepted_params(self.f, name) else {}

    def solve(self, name: str, i: int, objective: str, seed: int | None) -> Result:
        """``solve`` without a time limit; a crash becomes an ``error`` result naming it."""
        try:
            return solve(self.f, self.instances[i], name, objective=objective, seed=seed, params=self.params(name))
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - a crash is a finding, not the checker's failure
            return Result(Status.ERROR, message=f"raised {type(exc).__name__}: {exc}", objective_name=objective)

    def run(self, name: str, i: int, objective: str, seed: int | None) -> Result:
        algo = self.f.algorithms[name]
        key = (self.f.name, name, id(algo.run), self.hashes[i], objective, seed,
               repr(sorted(self.params(name).items())))
        if key not in self.cache.runs:
            self.cache.runs[key] = self.solve(name, i, objective, seed)
        return self.cache.runs[key]

    def runs(self, seed: int | None = None) -> Iterator[tuple[int, str, str, Result]]:
        seed = self.seeds[0] if seed is None else seed
        for i in range(len(self.instances)):
            for objective in self.objectives:
                yield i, self.names[i], objective, self.run(self.algo.name, i, objective, seed)

    def reference(self, i: int, objective: str, exclude: str | None = None) -> tuple[float | None, bool, str, list[str]]:
        """``(optimum, proven_infeasible, who, disagreements)`` from every available exact
        algorithm supporting ``objective`` other than ``exclude`` (default: the one under test,
        so that an exact algorithm is checked against the others)."""
        exclude = self.algo.name if exclude is None else exclude
        exact = [n for n, a in self.f.algorithms.items() if a.kind == "exact" and not a.plugin
                 and objective in a.objectives and a.available() and n != exclude]
        key = (self.f.name, self.hashes[i], objective, tuple(exact))
        if key in self.cache.references:
            return self.cache.references[key]
        values: dict[str, float] = {}
        infeasible: list[str] = []
        trouble: list[str] = []
        for name in exact:
            res = self.run(name, i, objective, self.seeds[0])
            if res.status is Status.OPTIMAL:
                k = _key(res)
                if k is None:
                    trouble.append(f"{name} proved optimality without a scalar objective")
                else:
                    values[name] = k
            elif res.status is Status.INFEASIBLE:
                infeasible.append(name)
        out: tuple[float | None, bool, str, list[str]]
        if values:
            lo, hi = min(values.values()), max(values.values())
            if not _close(lo, hi, SOLVER_REL_TOL):
                trouble.append(f"the exact solvers disagree on the optimum: {values}")
            if infeasible:
                trouble.append(f"{infeasible} proved infeasible what {sorted(values)} solved to optimality")
            out = (lo, False, ", ".join(sorted(values)), trouble)
        else:
            out = (None, bool(infeasible) and len(infeasible) == len(exact), ", ".join(infeasible), trouble)
        self.cache.references[key] = out
        return out

    def lower_bound(self, i: int, objective: str) -> float | None:
        if self.f.lower_bound is None:
            return None
        return self.f.lower_bound(self.instances[i], objective)

    def raw(self, i: int, objective: str) -> Result | None:
        """The algorithm's own result, before the engine replaces its numbers (None: it crashed)."""
        params = resolve_params(self.f, self.algo.name, self.params(self.algo.name))
        key = ("raw", self.f.name, self.algo.name, id(self.algo.run), self.hashes[i], objective, self.seeds[0],
               repr(sorted(params.items())))
        if key not in self.cache.raw:
            try:
                self.cache.raw[key] = self.algo.run(self.instances[i], objective=objective, time_limit=None,
                                                    seed=self.seeds[0], **params)
            except Exception:  # noqa: BLE001 - the crash is reported by status_discipline
                self.cache.raw[key] = None
        return self.cache.raw[key]


# ----------------------------------------------------------------------------- the checks
def _solution_passes_evaluate(c: _Context) -> list[str]:
    """Every returned solution is feasible for a fresh ``evaluate`` call; the objective ``solve``
    reports, and any objective the algorithm put in its own result, equal ``evaluate``'s."""
    faults = []
    for i, name, objective, res in c.runs():
        if res.solution is None:
            if res.status is Status.ERROR and res.message.startswith("evaluate rejected"):
                faults.append(f"{name}/{objective}: {res.message}")
            continue
        ev = c.f.evaluate(c.instances[i], res.solution)
        if not ev.feasible:
            faults.append(f"{name}/{objective}: evaluate rejects the solution: {ev.violations[:3]}")
            continue
        want = ev.objectives[objective]
        if res.objective != (list(want) if isinstance(want, (list, tuple)) else want):
            faults.append(f"{name}/{objective}: solve reports {res.objective}, evaluate {want}")
        raw = c.raw(i, objective)
        if raw is not None and raw.objective is not None and raw.solution is not None:
            raw_ev = c.f.evaluate(c.instances[i], raw.solution)
            mine, theirs = raw.objective, raw_ev.objectives.get(objective)
            if isinstance(theirs, (list, tuple)):
                same = isinstance(mine, (list, tuple)) and len(mine) == len(theirs) and all(
                    _close(a, b) for a, b in zip(mine, theirs))
            else:
                same = isinstance(mine, (int, float)) and theirs is not None and _close(mine, theirs)
            if not same:
                faults.append(f"{name}/{objective}: the algorithm reports the objective {mine}, evaluate {theirs}")
    return faults


def _same_seed_same_result(c: _Context) -> list[str]:
    """Two runs with the same seed return the same status, solution and objective; an algorithm
    not declared ``randomized`` (and not exact) returns the same for every seed."""
    faults = []
    for seed in c.seeds:
        for i, name, objective, first in c.runs(seed):
            again = c.solve(c.algo.name, i, objective, seed)
            if (again.status, again.solution, again.objective) != (first.status, first.solution, first.objective):
                faults.append(f"{name}/{objective}, seed {seed}: two runs differ "
                              f"({first.status.value} {first.objective} vs {again.status.value} {again.objective})")
            elif not c.algo.randomized and c.algo.kind != "exact" and len(c.seeds) > 1:
                other_seed = c.seeds[0] if seed != c.seeds[0] else c.seeds[1]
                other = c.run(c.algo.name, i, objective, other_seed)
                if (other.status, other.solution) != (first.status, first.solution):
                    faults.append(f"{name}/{objective}: not declared randomized, but seeds {seed} and {other_seed} "
                                  "give different results")
    return faults


def _never_beats_optimum(c: _Context) -> list[str]:
    """No solution, and no objective the algorithm reports itself, beats the optimum the other
    exact solvers prove (who must agree), nor the proven lower bound; an ``optimal`` result
    equals the optimum; a result's own ``bound`` never exceeds it."""
    faults = []
    for i, name, objective, res in c.runs():
        opt, _, who, trouble = c.reference(i, objective)
        faults += [f"{name}/{objective}: {t}" for t in trouble]
        lb = c.lower_bound(i, objective)
        if opt is not None and lb is not None and lb > opt + REL_TOL * abs(opt) + 1e-9:
            faults.append(f"{name}/{objective}: lower_bound {lb} > optimum {opt} ({who})")
        floor = opt if opt is not None else lb
        if floor is None:
            continue
        slack = SOLVER_REL_TOL * abs(floor) + 1e-9
        key = _key(res)
        src = who or "lower_bound"
        if key is not None:
            if key < floor - slack:
                faults.append(f"{name}/{objective}: {key} beats the proven {floor} ({src})")
            if res.status is Status.OPTIMAL and opt is not None and not _close(key, opt, SOLVER_REL_TOL):
                faults.append(f"{name}/{objective}: 'optimal' {key}, optimum {opt} ({who})")
        raw = c.raw(i, objective)
        own = None if raw is None else raw.objective
        if isinstance(own, (int, float)) and not isinstance(own, bool) and own < floor - slack:
            faults.append(f"{name}/{objective}: the algorithm claims the objective {own}, which beats the proven "
                          f"{floor} ({src})")
        bound = res.bound if res.status is not Status.OPTIMAL else (None if raw is None else raw.bound)
        if bound is not None and opt is not None and bound > opt + slack:
            faults.append(f"{name}/{objective}: bound {bound} above the optimum {opt} ({who})")
    return faults


def _status_discipline(c: _Context) -> list[str]:
    """``optimal`` only from an exact algorithm with a proof (a bound equal to its value);
    ``infeasible`` only when every other exact solver proves it and no algorithm finds a
    solution; heuristics, peers and baselines return ``feasible``, ``no_solution`` or a proven
    ``infeasible``; ``no_solution`` carries a message and no solution; no ``error`` (a crash)
    and no ``time_limit`` (no limit was set) on a valid instance."""
    faults = []
    kind = c.algo.kind
    for i, name, objective, res in c.runs():
        where = f"{name}/{objective}: {res.status.value} ({res.message[:200]})"
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
            _, proven, _, _ = c.reference(i, objective)
            if not proven:
                faults.append(f"{where}: not every exact solver proves infeasibility")
            found = [a for a, al in c.f.algorithms.items() if al.available() and objective in al.objectives
                     and a != c.algo.name and c.run(a, i, objective, c.seeds[0]).solution is not None]
            if found:
                faults.append(f"{where}: {found} found a feasible solution")
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
    seeds: Sequence[int] = (0, 1),
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
        Instance objects or dicts; default :func:`default_instances` (the first 6 of the
        problem's first suite: small, exact-solvable, seeded).
    seeds
        Seeds of the runs; the first is used where one seed is enough. Two or more let
        ``same_seed_same_result`` see whether an algorithm not declared ``randomized`` depends
        on its seed.
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
        A :class:`RunCache` shared between calls (the exact references are then solved once).

    Returns
    -------
    CheckReport
        One :class:`CheckResult` per check, in the order of :data:`CHECKS`.

    Raises
    ------
    AlgorithmCheckError
        When a check fails and ``raise_on_failure``.
    optkit.errors.InputError
        An unknown problem, algorithm, objective or check name; an algorithm whose optional
        packages are missing.

    References
    ----------
    Pedregosa et al., "Scikit-learn: Machine Learning in Python", JMLR 12 (2011); its
    ``sklearn.utils.estimator_checks.check_estimator`` is the model. The checks are those of
    DESIGN.md, "Tests" (one battery for every algorithm).

    Notes
    -----
    The checks (their names appear in every failure):

    ``solution_passes_evaluate``
        every returned solution is feasible for a fresh ``evaluate``, and any objective the
        algorithm reports itself equals ``evaluate``'s.
    ``same_seed_same_result``
        the same seed gives the same status, solution and objective; an algorithm not declared
        ``randomized`` gives the same result for every seed.
    ``never_beats_optimum``
        neither its solutions nor its own claimed objective beat the optimum proven by the
        problem's exact algorithms (CP-SAT, MILP, brute force: they must agree) or its proven
        lower bound; its ``bound`` never exceeds the optimum; ``optimal`` equals the optimum.
    ``status_discipline``
        ``optimal`` only from an exact algorithm with a proof (a bound); ``infeasible`` only
        where every exact solver proves it and no algorithm finds a solution; ``no_solution``
        with a message and no solution; never ``error`` (a crash: an exception is reported
        here too) nor ``time_limit`` (no limit is set) on a valid instance.
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
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise InputError("seeds", f"must be a sequence of integers >= 0, got {seeds!r}", problem=f.name)
    seeds = tuple(check_seed(s, f"seeds[{i}]", problem=f.name) for i, s in enumerate(seeds))
    if not seeds:
        raise InputError("seeds", "must hold at least one seed", problem=f.name)
    objs = tuple(algo.objectives if objectives is None else objectives)
    for o in objs:
        check_names(f, algo.name, o)
    insts = default_instances(f) if instances is None else [_instance(f, i, x) for i, x in enumerate(instances)]
    if not insts:
        raise InputError("instances", "must hold at least one instance", problem=f.name)
    ctx = _Context(f, algo, insts, seeds, objs, params, cache if cache is not None else RunCache())
    results = []
    for name in wanted:
        faults = _CHECK_FUNCTIONS[name](ctx)
        results.append(CheckResult(name, not faults, faults))
    report = CheckReport(f.name, algo.name, results)
    if raise_on_failure:
        report.raise_if_failed()
    return report
