"""Tasks: one (instance, algorithm, objective, parameters, seed) run of a comparison sweep.

A :class:`Task` carries everything a worker process needs (the instance as its JSON-ready dict,
never an instance object), so it can be pickled to a local child process or shipped to a Dask
worker on another machine. Its :attr:`Task.key` identifies the run in the result store: the
hash of (instance content hash, problem, algorithm, objective, canonical parameters, seed, time
limit). The parameters are complete: every reading the algorithm takes is in them, with its
default when the sweep did not set it (:func:`optkit.readings.resolve_params`), so a row says
which reading produced it. The time limit is part of the key because it changes what an exact
solver returns: re-running a sweep with another ``--time-limit`` runs again.

A task of kind ``measure`` runs a claim's measuring function (``algorithm`` is its
``module:function``, ``params`` its keywords) instead of an algorithm: ``optkit reproduce`` uses
the same workers, time limits and store as ``compare``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from optkit.errors import InputError
from optkit.formulation import Formulation
from optkit.instances import canonical_json, instance_hash

__all__ = ["Task", "task_key", "build_tasks"]


def task_key(
    instance_hash: str,
    problem: str,
    algorithm: str,
    objective: str,
    params: Mapping[str, Any] | None,
    seed: int | None,
    time_limit: float | None = None,
    kind: str = "solve",
) -> str:
    """Stable identity of a run: hex SHA-256 of the canonical JSON of its defining fields.

    ``params`` is canonicalised (sorted keys, no whitespace), so ``{"a": 1, "b": 2}`` and
    ``{"b": 2, "a": 1}`` give the same key.
    """
    fields: dict[str, Any] = {
        "instance_hash": instance_hash,
        "problem": problem,
        "algorithm": algorithm,
        "objective": objective,
        "params": dict(params or {}),
        "seed": seed,
        "time_limit": time_limit,
    }
    if kind != "solve":
        fields["kind"] = kind
    payload = canonical_json(fields)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True)
class Task:
    """One run of a sweep.

    Attributes
    ----------
    problem
        The formulation's name (``gpu-mapping``).
    instance_name
        A human name for the instance (its file path, or suite/name).
    instance
        The instance as a JSON-ready dict (validated by the caller).
    instance_hash
        :func:`optkit.instances.instance_hash` of ``instance``.
    algorithm
        The algorithm that runs (for ``measure``: ``module:function``).
    objective
        The objective it is asked to minimise.
    params
        The algorithm's keyword parameters (JSON-ready).
    seed
        The seed handed to the algorithm.
    time_limit
        Seconds the algorithm is told it has; the worker kills it after
        ``time_limit * 1.2`` plus a start-up grace. ``None`` means no limit at all.
    source
        Where the instance came from (a suite name or the path given on the command line).
    kind
        ``solve`` (run an algorithm) or ``measure`` (run a claim's measuring function
        ``algorithm`` = ``module:function`` with keywords ``params`` and ``seed``).
    memo
        For ``measure``: the folder of the store's memo (:mod:`optkit.memo`) the measuring
        function may reuse parts from; ``""``: none. Not part of the key: a memo changes how long a
        measurement takes, never what it measures.
    """

    problem: str
    instance_name: str
    instance: dict[str, Any] = field(repr=False, compare=False)
    instance_hash: str
    algorithm: str
    objective: str
    params: dict[str, Any] = field(default_factory=dict, compare=False)
    seed: int | None = 0
    time_limit: float | None = None
    source: str = ""
    kind: str = "solve"
    memo: str = field(default="", compare=False)

    @property
    def key(self) -> str:
        """See :func:`task_key`."""
        return task_key(self.instance_hash, self.problem, self.algorithm, self.objective, self.params, self.seed,
                        self.time_limit, self.kind)

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (JSON-ready) from which :meth:`from_dict` rebuilds the task."""
        return {
            "problem": self.problem,
            "instance_name": self.instance_name,
            "instance": self.instance,
            "instance_hash": self.instance_hash,
            "algorithm": self.algorithm,
            "objective": self.objective,
            "params": dict(self.params),
            "seed": self.seed,
            "time_limit": self.time_limit,
            "source": self.source,
            "kind": self.kind,
            "memo": self.memo,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Task":
        """Inverse of :meth:`to_dict`."""
        return cls(
            problem=d["problem"],
            instance_name=d["instance_name"],
            instance=d["instance"],
            instance_hash=d["instance_hash"],
            algorithm=d["algorithm"],
            objective=d["objective"],
            params=dict(d.get("params") or {}),
            seed=d.get("seed"),
            time_limit=d.get("time_limit"),
            source=d.get("source", ""),
            kind=d.get("kind", "solve"),
            memo=d.get("memo", ""),
        )


def _check_time_limit(time_limit: float | None) -> float | None:
    if time_limit is None:
        return None
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)):
        raise InputError("time_limit", f"must be a number of seconds, got {time_limit!r}")
    if not math.isfinite(time_limit) or time_limit <= 0:
        raise InputError("time_limit", f"must be a finite number of seconds > 0, got {time_limit!r}")
    return float(time_limit)


def _check_seeds(seeds: Iterable[int | None]) -> list[int | None]:
    out: list[int | None] = []
    for s in seeds:
        if s is not None and (isinstance(s, bool) or not isinstance(s, int) or s < 0):
            raise InputError("seeds", f"must be integers >= 0, got {s!r}")
        if s not in out:
            out.append(s)
    if not out:
        raise InputError("seeds", "must list at least one seed")
    return out


def build_tasks(
    formulation: Formulation,
    instances: Sequence[tuple[str, dict[str, Any]]],
    algorithms: Sequence[str],
    objectives: Sequence[str],
    seeds: Sequence[int | None] = (0,),
    time_limit: float | None = 60.0,
    *,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    source: str | Mapping[str, str] = "",
    all_seeds_for_deterministic: bool = False,
    sweep: Sequence[Mapping[str, Any]] | None = None,
) -> list[Task]:
    """Every task of a sweep, in a stable order (instance, algorithm, objective, seed).

    * An (algorithm, objective) pair the algorithm does not support is skipped; an algorithm
      that supports none of ``objectives`` is an :class:`InputError`.
    * A deterministic algorithm (``Algorithm.randomized`` false) runs once, with the first seed,
      unless ``all_seeds_for_deterministic``: its other seeds would repeat the same run.
    * ``params`` maps an algorithm name to its keyword parameters.
    * ``sweep`` is a list of parameter settings shared by every algorithm (the cross product of
      ``--param key=v1,v2``, see :func:`optkit.readings.expand_sweep`); each algorithm runs once
      per setting, keeping only the keys it accepts (an algorithm that takes none of them runs
      once). Every algorithm's parameters are completed with the defaults of its readings
      (:func:`optkit.readings.resolve_params`), so the run key names every reading.
    * ``source`` is one label for every instance, or a mapping from instance name to label.
    * Tasks with equal keys (the same instance content listed twice) are kept once.

    The caller validates the instances (see :func:`optkit.harness.compare.validate_instances`).
    """
    time_limit = _check_time_limit(time_limit)
    seed_list = _check_seeds(seeds)
    params = params or {}
    for name in params:
        if name not in algorithms:
            raise InputError("params", f"names algorithm {name!r}, which is not in this sweep")
    pairs: list[tuple[str, str]] = []
    for algo_name in algorithms:
        if algo_name not in formulation.algorithms:
            known = ", ".join(formulation.algorithms)
            raise InputError("algorithms", f"{algo_name!r} is unknown for {formulation.name} (known: {known})")
        algo = formulation.algorithms[algo_name]
        supported = [o for o in objectives if o in algo.objectives]
        if not supported:
            raise InputError("objective", f"{algo_name} supports none of {', '.join(objectives)} "
                                          f"(it supports {', '.join(algo.objectives)})")
        pairs.extend((algo_name, o) for o in supported)
    from optkit.readings import accepted_params, resolve_params

    settings: dict[str, list[dict[str, Any]]] = {}
    for algo_name in dict.fromkeys(a for a, _ in pairs):
        accepted = accepted_params(formulation, algo_name)
        own = dict(params.get(algo_name, {}))
        variants: list[dict[str, Any]] = []
        for setting in (sweep or [{}]):
            merged = {**{k: v for k, v in setting.items() if k in accepted}, **own}
            resolved = resolve_params(formulation, algo_name, merged)
            if resolved not in variants:
                variants.append(resolved)
        settings[algo_name] = variants
    tasks: list[Task] = []
    seen: set[str] = set()
    for inst_name, data in instances:
        h = instance_hash(data)
        label = source.get(inst_name, "") if isinstance(source, Mapping) else source
        for algo_name, objective in pairs:
            algo = formulation.algorithms[algo_name]
            algo_seeds = seed_list if (algo.randomized or all_seeds_for_deterministic) else seed_list[:1]
            for algo_params in settings[algo_name]:
                for seed in algo_seeds:
                    task = Task(
                        problem=formulation.name, instance_name=inst_name, instance=data, instance_hash=h,
                        algorithm=algo_name, objective=objective, params=dict(algo_params),
                        seed=seed, time_limit=time_limit, source=label,
                    )
                    if task.key not in seen:
                        seen.add(task.key)
                        tasks.append(task)
    return tasks
