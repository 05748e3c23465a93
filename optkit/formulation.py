"""What a formulation (one paper problem) hands the engine.

A formulation package builds one :class:`Formulation` and exposes it through the entry point
group ``optkit.formulations``; the engine knows nothing else about it. The engine never
imports a formulation by name.

Contracts
---------
* ``instance_from_dict(d)`` validates and returns an immutable instance, or raises
  :class:`optkit.errors.InputError` naming the field.
* ``evaluate(instance, solution_dict)`` is the independent checker: it decides feasibility and
  computes every objective and metric from the solution alone.
* An :class:`Algorithm`'s ``run(instance, *, objective, time_limit, seed, **params)`` returns a
  :class:`optkit.result.Result` holding at least ``status`` and ``solution`` (exact solvers add
  ``bound``); the engine fills in the objective, metrics, gap and wall time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Iterator, Mapping
from typing import Any, Callable, Protocol

from optkit.result import Result

__all__ = ["Algorithm", "Evaluation", "Formulation", "LazyMapping", "OnlinePolicyPlugin", "Suite", "lazy_run"]


@dataclass
class Evaluation:
    """Verdict of a formulation's ``evaluate``.

    ``objectives`` maps every objective name of the formulation to the solution's value (all
    minimised); ``violations`` names each violated constraint (empty when feasible).
    """

    feasible: bool
    objectives: dict[str, float] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)


class AlgorithmRun(Protocol):
    """What the engine calls: ``run(instance, objective=..., time_limit=..., seed=...,
    **params)``. The algorithm's own keyword parameters (readings, ``--param`` keys) follow the
    three, each with a default; the protocol names only the three, so a function declaring its own
    keywords (``reverse: bool = True``) matches it (one declaring ``**params: Any`` instead would
    refuse every function that does not take arbitrary keywords)."""

    def __call__(
        self,
        instance: Any,
        *,
        objective: str,
        time_limit: float | None,
        seed: int | None,
    ) -> Result: ...


@dataclass(frozen=True)
class Algorithm:
    """One registered algorithm or solver of a formulation.

    Attributes
    ----------
    name
        The name ``solve``, ``compare`` and ``--algorithms`` know it by.
    run
        The function the engine calls (:class:`AlgorithmRun`).
    kind
        ``exact`` (proves optimality), ``heuristic`` (the paper's algorithm or ours), ``peer`` (a
        tool a user would pick instead) or ``baseline``.
    summary
        One line, shown by ``optkit list``.
    objectives
        The objectives it optimises; a heuristic that ignores the objective lists all.
    randomized
        Whether ``seed`` changes its output.
    requires
        Importable modules it needs (an optional extra); missing ones make it unavailable.
    """

    name: str
    run: AlgorithmRun
    kind: str
    summary: str
    objectives: tuple[str, ...]
    randomized: bool = False
    requires: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    """Tuning keywords accepted beside the function's own keyword-only parameters and the
    problem's readings (see :mod:`optkit.readings`); needed for a function taking ``**params``."""
    problem: str | None = None
    """The problem a plug-in algorithm belongs to (entry point group ``optkit.algorithms``,
    :mod:`optkit.registry`); ``None`` for an algorithm a formulation declares itself."""
    plugin: str = ""
    """Where a plug-in came from (``entry point NAME`` or ``OPTKIT_ALGORITHMS module:attr``);
    set by the registry, empty for a formulation's own algorithms."""

    def available(self) -> bool:
        import importlib.util

        return all(importlib.util.find_spec(m) is not None for m in self.requires)


@dataclass(frozen=True)
class OnlinePolicyPlugin:
    """An online policy (:mod:`optkit.online` protocol) registered for an existing problem.

    The registry turns it into an :class:`Algorithm` of ``problem`` whose run builds the policy
    with ``make(instance, seed=seed, **params)`` and drives it over the instance with the
    problem's own driver (:attr:`Formulation.run_policy`), so ``solve``, ``compare`` and
    ``simulate`` run it like the problem's own policies and ``evaluate`` scores its schedule.

    Attributes
    ----------
    problem
        An existing problem with a policy driver (ddlwmp; nimp, where the instance's one job
        arrives at time 0 and the decision is its placement).
    name
        The algorithm name (must not clash with one of the problem's own).
    make
        ``make(instance, *, seed, **params) -> policy`` with ``on_arrival``, ``on_completion``,
        ``decide`` and ``next_wakeup`` (:class:`optkit.online.OnlinePolicy`); its keyword-only
        parameters are the ``--param`` keys the algorithm accepts.
    summary
        One line, shown by ``optkit list`` (as :class:`Algorithm`'s).
    kind
        As :class:`Algorithm`'s (default ``heuristic``).
    randomized
        Whether ``seed`` changes the policy's decisions (as :class:`Algorithm`'s).
    """

    problem: str
    name: str
    make: Callable[..., Any]
    summary: str
    kind: str = "heuristic"
    randomized: bool = False


@dataclass(frozen=True)
class Suite:
    """A named, seeded list of instances (as JSON-ready dicts)."""

    name: str
    summary: str
    build: Callable[[], list[tuple[str, dict[str, Any]]]]  # [(instance name, instance dict)]


def lazy_run(module: str, name: str) -> Any:
    """A function that imports ``module`` and calls its ``name`` only when first called, so a
    formulation package loads without the dependencies of its solvers and generators (use it
    for algorithm entries, ``generate`` and ``lower_bound`` alike)."""
    import importlib

    def target() -> Any:
        return getattr(importlib.import_module(module), name)

    def run(*args: Any, **kwargs: Any) -> Any:
        return target()(*args, **kwargs)

    run.__name__ = name
    run.__qualname__ = f"{module}.{name}"
    run.target = target  # type: ignore[attr-defined]  # the real function, for introspection
    return run


class LazyMapping(Mapping[str, Any]):
    """A read-only mapping built by ``loader()`` on first access.

    Lets a formulation declare its suites without importing its generator (and whatever that
    needs) until someone asks for a suite.
    """

    def __init__(self, loader: Callable[[], Mapping[str, Any]]) -> None:
        self._loader = loader
        self._data: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, module: str, attribute: str) -> "LazyMapping":
        """The mapping ``module.attribute``, imported on first access."""
        import importlib

        return cls(lambda: getattr(importlib.import_module(module), attribute))

    def _get(self) -> Mapping[str, Any]:
        if self._data is None:
            self._data = dict(self._loader())
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


@dataclass(frozen=True)
class Formulation:
    """Everything the engine needs to know about one problem."""

    name: str
    summary: str
    instance_from_dict: Callable[[dict[str, Any]], Any]
    instance_to_dict: Callable[[Any], dict[str, Any]]
    evaluate: Callable[[Any, dict[str, Any]], Evaluation]
    objectives: tuple[str, ...]
    algorithms: Mapping[str, Algorithm]
    suites: Mapping[str, Suite] = field(default_factory=dict)
    generate: Callable[..., dict[str, Any]] | None = None
    lower_bound: Callable[[Any, str], float | None] | None = None
    # A weaker proven bound that always answers fast, which the harness uses where
    # ``lower_bound`` times out (optkit.harness.bounds); same signature.
    quick_lower_bound: Callable[[Any, str], float | None] | None = None
    # Prepare an instance dict for an online run, e.g. fill predicted quantities with a named
    # predictor: ``prepare(data, predictor=NAME, seed=N) -> report dict`` (modifies ``data``).
    prepare: Callable[..., dict[str, Any]] | None = None
    predictors: tuple[str, ...] = ()
    # Own ``optkit simulate`` driver, for a problem whose workload is not one of its instances
    # (e.g. nimp's cluster replay): ``simulate(path, policy=, seed=, time_limit=, params=, out=)
    # -> summary dict`` (JSON-able; ``InputError`` for bad input). None: the default driver.
    simulate: Callable[..., dict[str, Any]] | None = None
    # The readings of the paper this formulation chose (optkit.readings.Reading), declared once
    # in the formulation's readings.py.
    readings: tuple[Any, ...] = ()
    # The paper's quantitative claims that `optkit reproduce` measures
    # (optkit.claims.Experiment objects, each holding one or more Claim), usually a LazyMapping
    # from experiment id to Experiment so that measuring code loads only when asked.
    experiments: Mapping[str, Any] = field(default_factory=dict)
    # Drive an online policy (optkit.online protocol) over one instance and return a Result
    # holding its schedule: ``run_policy(instance, policy, *, time_limit) -> Result``. Lets a
    # plug-in online policy (OnlinePolicyPlugin) run as an algorithm of this problem.
    run_policy: Callable[..., Result] | None = None
    # The papers' proven guarantees (optkit.testing.guarantees.Guarantee) by algorithm name,
    # usually a LazyMapping to the formulation's bounds.GUARANTEES; an algorithm absent here has
    # no proven guarantee.
    guarantees: Mapping[str, Any] = field(default_factory=dict)
    # Build an instance dict from integer draws, for property tests (optkit.testing.strategies):
    # ``sample(draw, **size_limits) -> dict`` with ``draw(lo, hi) -> int`` (smallest = simplest);
    # a bad limit is an InputError naming it.
    sample: Callable[..., dict[str, Any]] | None = None
    # The instances optkit.testing.check_algorithm runs by default, one Suite per size class
    # (class name -> Suite, smallest first), each class no larger than every exact solver of the
    # problem proves in seconds; usually a LazyMapping to the formulation's generate.SIZE_CLASSES.
    # Empty: the first instances of the first suite.
    size_classes: Mapping[str, Suite] = field(default_factory=dict)

    def reading(self, name: str) -> Any:
        """The declared reading ``name`` (``KeyError`` if there is none)."""
        for r in self.readings:
            if r.name == name:
                return r
        raise KeyError(name)

    @property
    def default_objective(self) -> str:
        return self.objectives[0]
