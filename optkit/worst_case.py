"""Search for an algorithm's worst case: the instance with the largest ratio to the optimum.

``optkit worst-case PROBLEM --algorithm NAME --out DIR`` (:func:`worst_case`) looks for the
instance on which ``NAME``'s objective (computed by the formulation's ``evaluate``) is largest
relative to the proven optimum of the exact oracle, shrinks it to a minimal instance with the
same ratio, and writes it beside its optimum, the algorithm's solution and a summary that puts
the ratio next to the paper's guarantee for that instance (:func:`guarantee`).

Method
======
1. **Random phase.** The first :data:`RANDOM_BATCHES` batches of :data:`BATCH` candidates are
   drawn by the formulation's seeded small-instance generator (``tiny``, or gpu-mapping's
   ``random_small``) with sizes drawn within the ``--max-size`` limits.
2. **Local search.** Every later batch mutates the incumbent (the worst instance so far): one
   to three random moves among *numbers* (an integer ±1, doubled or halved: replicas, GPUs,
   iterations, releases, workers, idle GPUs; a real scaled by a log-normal factor, by 10 or
   1/10, or set to 0: durations, bytes, bandwidths, capacities, kept within realistic ranges,
   :data:`RANGES`), *structure* (remove or
   duplicate a job, stage, worker machine or server) and *choices* (the collective, the
   AllReduce kind, a job's model). Every :data:`RESTART_EVERY`-th batch is drawn at random
   again, so the search leaves a local maximum. A candidate that fails the formulation's own
   validation or the size limits is redrawn (it costs no oracle call). The incumbent is
   replaced by a candidate with a larger ratio, or an equal ratio on no larger an instance
   (a plateau move); proven ratios always beat ratios against a lower bound.
3. **Shrink.** Greedy reduction of the worst instance found: remove one list element (a job,
   stage, machine, server), lower one integer by one or halve it, round one real to one or two
   significant digits. The reductions are tried in a fixed order; one that keeps the ratio at
   least the found ratio (proven if it was; with a paper's bound if the found instance had one)
   is taken and the scan goes on from the same position, until a whole pass takes none. The
   result is minimal with respect to these reductions.

``--target margin`` maximises ``ratio / the paper's bound on the instance`` instead (the
search for a violation of a guarantee that depends on the instance); the default maximises the
ratio.

The exact reference is :func:`optkit.testing.oracle.optimum`, the oracle of
:func:`optkit.testing.assert_within` too: the formulation's brute force where it holds the
instance, else CP-SAT under ``--oracle-time-limit`` (:data:`ORACLE_SOLVERS`); where neither
proves the optimum, the best proven lower bound (the solvers' bounds or the formulation's
``lower_bound``) is used and
the ratio is an *upper estimate* of the true ratio: ``summary.json`` says which
(``ratio_against``). Where the optimum is 0 and the algorithm's value is not, the ratio is
infinite; an algorithm that returns no feasible solution on a feasible instance gets an
infinite ratio too (``no_solution``). A run that ends in ``error`` (a crash, a solution
``evaluate`` rejects, an algorithm that altered its input, :mod:`optkit.pristine`) gets no
ratio; ``summary.json`` counts such candidates (``errors_seen``, ``first_error``) and the
printed summary names the first. The algorithm runs on its own copy of each candidate, so the
oracle and the ratio always see the candidate as drawn.

nimp's objective is lexicographic (idle machines, machines); its ratio is the measure of
Theorems 4-5 that :func:`optkit.testing.assert_within` and the ``titan-approximation`` claim use
(:mod:`optkit.formulations.nimp.approximation`, which says why: Def. 1's H, ``N - idle used``
and ``N - used``, not Eq. (3)'s ``C_max`` form, which no placement fails on a large cluster),
inverted so that larger is worse like every other ratio here: ``max_k (N - O_k^opt) / (N -
O_k^alg)`` (:func:`~optkit.formulations.nimp.approximation.worst_case_ratio`); the paper's
guarantee ``H^alg >= (1 - 1/e) H^opt`` becomes ``ratio <= e/(e-1)``.

Determinism, resume, budget
===========================
Every candidate is a function of ``--seed`` and the results of the candidates before it, and
results are consumed in candidate order (never completion order), so the sequence of candidates
does not depend on ``--jobs``, the executor or the machine's speed. *Same result* means: the
same seed, limits, oracle time limit and number of evaluations give the same instance, ratio
and files (``--max-evals N`` fixes that number; ``summary.json`` records how many a wall-clock
run made, so ``--max-evals`` replays it), provided every oracle call ends the same way (a call
that proves its optimum always does; one cut off by its time limit under load may not).
``--budget`` is the wall time of one invocation: the search takes :data:`SEARCH_SHARE` of it,
the shrink the rest; at the deadline a batch in flight is cancelled (its finished calls are
kept) and the files are written from the best instance so far.

``DIR/state.json`` (written after every batch) and ``DIR/evaluations.jsonl`` (one line per
finished oracle call) make the run resumable: a killed or budget-stopped run, started again with
the same arguments, regenerates the interrupted batch from the saved random state, takes the
finished calls from the journal and continues exactly as an uninterrupted run would have. A
finished search prints its summary again.

Where the oracle calls run
==========================
The candidates of a batch still to measure become ``measure`` tasks of the harness
(:mod:`optkit.harness.tasks`), one per local worker (``--jobs``; a process start costs more than
a tiny oracle call) or one per candidate on a Dask cluster (``--scheduler``): each runs in a
fresh worker process under a hard time limit (``2 × --oracle-time-limit + 5`` s per candidate),
exactly as ``optkit compare`` runs algorithms. A crashed or killed task's candidates get no ratio
(``status`` ``error``) and are not tried again.

This module knows the four shipped problems (their generators, size limits, guarantees and
the nimp ratio) in :data:`_SPECS`; a plug-in problem has no worst-case search yet.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from optkit.errors import InputError

if TYPE_CHECKING:
    from optkit.formulation import Formulation
    from optkit.testing.oracle import Optimum

__all__ = ["worst_case", "measure_candidate", "measure_candidates", "measure_algorithms", "guarantee", "size_of",
           "size_limits", "format_summary", "add_worst_case_parser", "cmd_worst_case", "score", "RANGES", "TARGETS",
           "BATCH", "RANDOM_BATCHES", "ORACLE_SOLVERS",
           "RESTART_EVERY", "SEARCH_SHARE"]

BATCH = 8
"""Candidates per batch (fixed, whatever ``--jobs``: the sequence must not depend on it)."""
RANDOM_BATCHES = 3
"""The first batches are fresh random draws."""
RESTART_EVERY = 6
"""Every this-many-th batch of the local search is a fresh random draw again."""
SEARCH_SHARE = 0.7
"""Share of ``--budget`` given to the search; the shrink gets the rest."""
DEFAULT_ORACLE_TIME_LIMIT = 20.0
"""Seconds of each exact call (and of the algorithm's run) by default."""
_TOL = 1e-9
_STATE_VERSION = 1
_MAX_DRAW_TRIES = 60


# ============================================================================ problem knowledge
def _strip(d: dict[str, Any]) -> dict[str, Any]:
    """A candidate without the generator's bookkeeping (``meta``), named ``worst-case``."""
    d = {k: v for k, v in d.items() if k != "meta"}
    d["name"] = "worst-case"
    return d


def _draw_gpu_mapping(rng: np.random.Generator, lim: Mapping[str, int]) -> dict[str, Any]:
    from optkit.formulations.gpu_mapping.generate import random_small

    return random_small(int(rng.integers(2**31)), max_replicas=lim["replicas"], max_stages=lim["stages"],
                        max_servers=lim["servers"])


def _size_gpu_mapping(d: Mapping[str, Any]) -> dict[str, int]:
    stages = d["job"]["stages"]
    return {"replicas": sum(int(s["replicas"]) for s in stages), "stages": len(stages), "servers": len(d["servers"])}


def _repair_gpu_mapping(d: dict[str, Any]) -> dict[str, Any]:
    """Free GPUs adjusted to offer exactly the job's replicas (the model's constraint): add to
    servers with room (a new server if none), take from the last ones."""
    g = int(d["cluster"]["gpus_per_server"]) if isinstance(d["cluster"].get("gpus_per_server"), int) else 0
    n = sum(int(s["replicas"]) if isinstance(s.get("replicas"), int) else 0 for s in d["job"]["stages"])
    servers = [int(c) for c in d["servers"] if isinstance(c, int) and not isinstance(c, bool) and c > 0]
    if g < 1 or n < 1:
        return d
    servers = [min(c, g) for c in servers]
    while sum(servers) > n:
        servers[-1] -= 1
        if servers[-1] == 0:
            servers.pop()
    i = 0
    while sum(servers) < n:
        while i < len(servers) and servers[i] >= g:
            i += 1
        if i == len(servers):
            servers.append(0)
        servers[i] += 1
    d["servers"] = servers
    return d


def _draw_ddlwmp(rng: np.random.Generator, lim: Mapping[str, int]) -> dict[str, Any]:
    from optkit.formulations.ddlwmp.generate import tiny

    jobs = int(rng.integers(1, min(lim["jobs"], 6) + 1))
    servers = int(rng.integers(1, lim["servers"] + 1))
    return tiny(int(rng.integers(2**31)), jobs=jobs, servers=servers)


def _size_ddlwmp(d: Mapping[str, Any]) -> dict[str, int]:
    jobs = d["jobs"]
    return {"jobs": len(jobs), "servers": int(d["cluster"]["servers"]),
            "gpus_per_server": int(d["cluster"]["gpus_per_server"]),
            "iterations": max([int(j.get("iterations", 0)) for j in jobs] + [0])}


def _repair_ddlwmp(d: dict[str, Any]) -> dict[str, Any]:
    """Models no job uses are dropped (the instance then says only what matters)."""
    used = {j.get("model") for j in d.get("jobs", []) if isinstance(j, dict)}
    if isinstance(d.get("models"), dict):
        d["models"] = {k: v for k, v in d["models"].items() if k in used}
    return d


def _draw_rar(rng: np.random.Generator, lim: Mapping[str, int]) -> dict[str, Any]:
    from optkit.formulations.rar_ddls.generate import tiny

    jobs = int(rng.integers(1, lim["jobs"] + 1))
    servers = int(rng.integers(1, lim["servers"] + 1))
    for _ in range(20):
        try:
            return tiny(int(rng.integers(2**31)), jobs=jobs, servers=servers, max_horizon=lim["horizon"])
        except InputError:  # no draw fits the horizon: fewer jobs
            jobs = max(1, jobs - 1)
    return tiny(int(rng.integers(2**31)), jobs=1, servers=servers, max_horizon=lim["horizon"])


def _size_rar(d: Mapping[str, Any]) -> dict[str, int]:
    return {"jobs": len(d["jobs"]), "servers": len(d["servers"]), "gpus": max(int(c) for c in d["servers"]),
            "horizon": int(d["horizon"])}


def _draw_nimp(rng: np.random.Generator, lim: Mapping[str, int]) -> dict[str, Any]:
    from optkit.formulations.nimp.generate import tiny

    workers = int(rng.integers(1, lim["workers"] + 1))
    machines = int(rng.integers(1, lim["machines"] + 1))
    d = tiny(int(rng.integers(2**31)), workers=workers, machines=machines)
    return d


def _size_nimp(d: Mapping[str, Any]) -> dict[str, int]:
    return {"workers": int(d["job"]["workers"]), "machines": len(d["machines"]),
            "gpus": max(int(m["gpus"]) for m in d["machines"])}


def _ratio_scalar(instance: Any, alg: Any, ref: Any) -> float:
    """``alg / ref`` for a minimised scalar; an optimum of 0: 1 if the algorithm also reaches 0,
    else infinite."""
    alg, ref = float(alg), float(ref)
    if ref <= 0:
        return 1.0 if alg <= _TOL else math.inf
    return alg / ref


def _ratio_nimp(instance: Any, alg: Any, ref: Any) -> float:
    """Theorems 4-5's measure inverted, ``max_k (N - O_k^opt) / (N - O_k^alg)`` (module docstring):
    the inverse of the ratio ``assert_within`` checks, from the same function."""
    from optkit.formulations.nimp.approximation import worst_case_ratio

    return worst_case_ratio(instance, alg[:2], ref[:2])


@dataclass(frozen=True)
class _Spec:
    """What the search knows of one problem."""

    limits: dict[str, tuple[int, int, str]]  # key -> (default, most the oracle holds, what it counts)
    draw: Callable[[np.random.Generator, Mapping[str, int]], dict[str, Any]]
    size: Callable[[Mapping[str, Any]], dict[str, int]]
    repair: Callable[[dict[str, Any]], dict[str, Any]] = lambda d: d
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)  # key -> options ("@models": the models' names)
    flags: tuple[str, ...] = ()  # boolean keys a move may flip
    frozen: tuple[str, ...] = ()  # numeric keys no move changes
    ratio: Callable[[Any, Any, Any], float] = _ratio_scalar
    ratio_text: str = "ALG / OPT"  # the ratio in words (the guarantee's line says it)


_SPECS: dict[str, _Spec] = {
    "gpu-mapping": _Spec(
        limits={"replicas": (8, 12, "replicas of the job"), "stages": (4, 6, "pipeline stages"),
                "servers": (4, 6, "servers with free GPUs")},
        draw=_draw_gpu_mapping, size=_size_gpu_mapping, repair=_repair_gpu_mapping,
        enums={"allreduce": ("ring", "tree")}),
    "ddlwmp": _Spec(
        limits={"jobs": (4, 6, "jobs"), "servers": (3, 4, "servers"), "gpus_per_server": (4, 8, "GPUs per server"),
                "iterations": (60, 120, "iterations of a job")},
        draw=_draw_ddlwmp, size=_size_ddlwmp, repair=_repair_ddlwmp,
        enums={"allreduce": ("ring", "tree"), "model": ("@models",)}),
    "rar-ddls": _Spec(
        limits={"jobs": (5, 6, "jobs"), "servers": (3, 4, "servers"), "gpus": (4, 8, "GPUs of a server"),
                "horizon": (40, 60, "time slots")},
        draw=_draw_rar, size=_size_rar, frozen=("slot_seconds",)),
    "nimp": _Spec(
        limits={"workers": (8, 10, "workers of the job"), "machines": (6, 8, "machines"),
                "gpus": (4, 8, "GPUs of a machine")},
        draw=_draw_nimp, size=_size_nimp, enums={"collective": ("halving-doubling", "ring")},
        flags=("placement_sensitive",), ratio=_ratio_nimp,
        ratio_text="max_k (N - O_k^opt) / (N - O_k^alg), Def. 1's H"),
}


def _spec(problem: str) -> _Spec:
    if problem not in _SPECS:
        raise InputError("problem", f"{problem!r} has no worst-case search (it knows {', '.join(_SPECS)})")
    return _SPECS[problem]


def size_limits(problem: str, max_size: Mapping[str, int] | None = None) -> dict[str, int]:
    """The size limits of a search: the defaults of ``problem`` overridden by ``max_size``.

    Raises :class:`InputError` naming ``--max-size`` for an unknown key, a value that is not an
    integer >= 1, or one above what the exact oracle holds (the most each key allows is in the
    message)."""
    spec = _spec(problem)
    out = {k: v[0] for k, v in spec.limits.items()}
    for key, value in (max_size or {}).items():
        if key not in spec.limits:
            raise InputError("--max-size", f"has no key {key!r} for {problem} (known: {', '.join(spec.limits)})")
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError("--max-size", f"{key} must be an integer >= 1, got {value!r}")
        most = spec.limits[key][1]
        if value > most:
            raise InputError("--max-size", f"{key}={value} is more than the exact oracle holds for {problem} "
                                           f"(at most {most} {spec.limits[key][2]})")
        out[key] = value
    return out


def size_of(problem: str, data: Mapping[str, Any]) -> dict[str, int]:
    """The sizes of an instance dict in the keys of ``--max-size``."""
    return _spec(problem).size(data)


# ============================================================================ the paper's guarantee
def guarantee(problem: str, algorithm: str, instance: Any, objective: str, *,
              params: Mapping[str, Any] | None = None) -> tuple[float | None, str]:
    """The paper's guarantee on ``algorithm``'s ratio for ``instance`` (an instance object), in
    the orientation of :func:`worst_case`'s ratio (larger is worse), and one line saying what it
    is. ``None`` where the paper proves none (baselines, Heavy-Edge, another objective) or the
    theorem's assumptions fail on the instance.

    A reader of the one table, :mod:`optkit.testing.guarantees` (each formulation's
    ``bounds.GUARANTEES``, which :func:`optkit.testing.assert_within` checks): the bound is the
    guarantee's ``ratio(instance, params)``, inverted for an ``at_least`` guarantee (Titan's
    1 - 1/e of Theorems 4-5 becomes ``ratio <= e/(e - 1)``); the line is its citation and
    statement (:func:`optkit.testing.guarantees.describe`) with the instance's figures. Titan's
    ratio here is the inverse of the guarantee's ``measure`` (module docstring), so a violation
    here is one there and conversely.
    """
    from optkit.testing.guarantees import describe, guarantee_for

    params = dict(params or {})
    text = describe(problem, algorithm, objective)
    g = guarantee_for(problem, algorithm)
    if g is None or g.objective != objective:
        return None, text
    bound = g.ratio(instance, params)
    if g.figures is not None:
        text += f"; here {g.figures(instance, params)}"
    if bound is not None and g.sense == "at_least":
        spec = _SPECS.get(problem)
        form = spec.ratio_text if spec is not None else "ALG / OPT"
        text += f"; as the search's ratio ({form}, larger is worse): <= 1/{bound:.4g} = {1.0 / bound:.4g}"
        bound = 1.0 / bound
    return (None if bound is None else float(bound)), text


# ============================================================================ the exact oracle
ORACLE_SOLVERS = ("brute-force", "cpsat")
"""The exact solvers the search asks (:func:`optkit.testing.oracle.optimum`, in its order: brute
force where it holds the instance, then CP-SAT). A candidate's task runs the algorithm and the
oracle under one hard limit of ``2 × --oracle-time-limit + 5`` s, so a MILP after a CP-SAT that
proved nothing is not asked (it would need a third time limit); the oracle's fallback, the best
proven lower bound, is taken instead."""


def _reference(f: Formulation, instance: Any, objective: str, time_limit: float | None) -> Optimum:
    """The search's exact reference of ``instance``: :func:`optkit.testing.oracle.optimum`
    (:data:`ORACLE_SOLVERS`, seed 0, falling back to the best proven lower bound)."""
    from optkit.testing.oracle import optimum

    return optimum(f, instance, objective=objective, time_limit=time_limit, seed=0, solvers=ORACLE_SOLVERS,
                   fallback_to_bound=True)


def measure_candidate(*, problem: str, instance: dict[str, Any], algorithm: str, objective: str,
                      oracle_time_limit: float | None, algorithm_seed: int | None = 0,
                      params: Mapping[str, Any] | None = None, seed: int | None = None,
                      reference: Optimum | None = None) -> dict[str, Any]:
    """One candidate's verdict: the algorithm's objective (from ``evaluate``), the exact
    reference, the ratio and the paper's guarantee (the worker-side function of a search task).

    Returns a JSON-ready dict: ``status`` (``ok``; ``infeasible``: no feasible instance, skipped;
    ``no_reference``; ``no_solution``: the algorithm found none on a feasible instance, ratio
    infinite; ``error``: the algorithm's run was an ``error``, e.g. it altered its input or
    ``evaluate`` rejected its solution, with ``message`` saying which, and no ratio), ``objective`` and ``solution`` (the algorithm's), ``reference``, ``proven``,
    ``source``, ``ratio``, ``guarantee``, ``guarantee_text`` and ``violates`` (a proven ratio
    above a stated guarantee). ``seed`` is the harness' task seed, unused; ``reference`` an
    :class:`optkit.testing.oracle.Optimum` already computed for this instance.

    ``reference`` in the result is the optimum's objective as ``evaluate`` gives it (nimp's
    lexicographic pair, which its ratio needs), or the proven lower bound when no solver proved
    the optimum; ``source`` is the solver that proved it (``": infeasible"`` appended when it
    proved infeasibility) or the bound's origin.
    """
    from optkit import registry
    from optkit.readings import resolve_params
    from optkit.solve import solve

    f = registry.get(problem)
    inst = f.instance_from_dict(instance)
    params = resolve_params(f, algorithm, dict(params or {}))
    res = solve(problem, inst, algorithm, objective=objective, time_limit=oracle_time_limit, seed=algorithm_seed,
                params=params)
    opt = reference if reference is not None else _reference(f, inst, objective, oracle_time_limit)
    ref = opt.objective if opt.proven else opt.value
    proven = opt.proven
    source = opt.source + (": infeasible" if opt.infeasible else "")
    out: dict[str, Any] = {"objective": res.objective, "solution": res.solution, "algorithm_status": res.status.value,
                           "algorithm_message": res.message, "reference": ref, "proven": proven, "source": source,
                           "ratio": None, "guarantee": None, "guarantee_text": "", "violates": False}
    if res.status.value == "error":  # a crash, a rejected solution, an altered input (optkit.pristine): no ratio
        out["status"], out["message"] = "error", res.message
        return out
    if ref is None:
        out["status"] = "infeasible" if proven else "no_reference"
        return out
    if res.objective is None:
        out["status"], out["ratio"] = "no_solution", math.inf
    else:
        out["status"] = "ok"
        out["ratio"] = _spec(problem).ratio(inst, res.objective, ref)
    g, text = guarantee(problem, algorithm, inst, objective, params=params)
    out["guarantee"], out["guarantee_text"] = g, text
    out["violates"] = bool(proven and g is not None and out["ratio"] > g * (1 + _TOL))
    return out


def measure_candidates(*, instances: Sequence[dict[str, Any]], seed: int | None = None,
                       **kwargs: Any) -> dict[str, Any]:
    """:func:`measure_candidate` on each of ``instances`` in turn: ``{"results": [...]}``; a
    candidate whose algorithm or oracle raises gets ``status`` ``error`` (no ratio)."""
    results = []
    for d in instances:
        try:
            results.append(measure_candidate(instance=d, seed=seed, **kwargs))
        except Exception as exc:  # noqa: BLE001 - one failing candidate must not lose its chunk
            results.append({"status": "error", "ratio": None, "message": f"{type(exc).__name__}: {exc}"})
    return {"results": results}


def measure_algorithms(*, problem: str, instance: dict[str, Any], algorithms: Sequence[str], objective: str,
                       oracle_time_limit: float | None, algorithm_seed: int | None = 0,
                       seed: int | None = None) -> dict[str, Any]:
    """:func:`measure_candidate` of each of ``algorithms`` on one instance, the exact reference
    computed once: ``{"results": {algorithm: verdict}}`` (the shipped-suite column of
    ``benchmarks/worst_case.py``)."""
    from optkit import registry

    f = registry.get(problem)
    inst = f.instance_from_dict(instance)
    reference = _reference(f, inst, objective, oracle_time_limit)
    results: dict[str, Any] = {}
    for name in algorithms:
        try:
            results[name] = measure_candidate(problem=problem, instance=instance, algorithm=name, objective=objective,
                                              oracle_time_limit=oracle_time_limit, algorithm_seed=algorithm_seed,
                                              reference=reference)
        except Exception as exc:  # noqa: BLE001 - one failing algorithm must not lose the others
            results[name] = {"status": "error", "ratio": None, "message": f"{type(exc).__name__}: {exc}"}
    return {"results": results}


# ============================================================================ candidate moves
Path_ = tuple[Any, ...]


def _leaves(d: Any, spec: _Spec, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every mutable leaf: numbers (not booleans), enum strings, flags; lists of items."""
    if isinstance(d, dict):
        for k, v in d.items():
            if k in ("meta", "name", "id", "problem", "user", "group") or k in spec.frozen:
                continue
            yield from _leaves(v, spec, path + (k,))
    elif isinstance(d, list):
        yield path, d
        for i, v in enumerate(d):
            yield from _leaves(v, spec, path + (i,))
    else:
        yield path, d


def _get(d: Any, path: Path_) -> Any:
    for p in path:
        d = d[p]
    return d


def _set(d: Any, path: Path_, value: Any) -> None:
    _get(d, path[:-1])[path[-1]] = value


def _enum_options(spec: _Spec, key: Any, root: Mapping[str, Any]) -> tuple[str, ...]:
    opts = spec.enums.get(key, ())
    if opts == ("@models",):
        return tuple(root.get("models", {}))
    return opts


def _unique_id(items: list[Any], item: Any) -> Any:
    if isinstance(item, dict) and "id" in item:
        ids = {x.get("id") for x in items if isinstance(x, dict)}
        k = 1
        while f"{item['id']}-{k}" in ids:
            k += 1
        item = {**item, "id": f"{item['id']}-{k}"}
    return item


RANGES: dict[str, tuple[float, float]] = {
    "bandwidth": (1e8, 1e12), "bytes": (0.0, 1e12), "time": (0.0, 10.0), "fwd_time_per_sample": (0.0, 1.0),
    "compute_speed": (1e9, 1e15), "xi1": (0.0, 10.0), "xi2": (0.0, 10.0), "degradation": (0.0, 10.0),
    "release": (0.0, 1e4), "batch": (1.0, 4096.0),
}
"""Realistic ranges (SI units) a move keeps a number in, by key (a key ending in ``bandwidth``,
``bytes`` or ``time`` takes that entry): without them the search drives bytes and bandwidths to
absurd values (a 100 TB tensor) where any heuristic without a guarantee is arbitrarily bad."""


def _clamp(key: Any, value: Any) -> Any:
    if not isinstance(key, str):
        return value
    rng_ = RANGES.get(key) or next((r for k, r in RANGES.items() if key.endswith(k)), None)
    if rng_ is None:
        return value
    lo, hi = rng_
    out = min(max(value, lo), hi)
    return int(out) if isinstance(value, int) else float(out)


def _mutate(d: dict[str, Any], spec: _Spec, rng: np.random.Generator) -> dict[str, Any]:
    """One random move on a copy of ``d`` (module docstring, step 2)."""
    d = copy.deepcopy(d)
    leaves = list(_leaves(d, spec))
    numbers = [(p, v) for p, v in leaves if isinstance(v, (int, float)) and not isinstance(v, bool)]
    lists = [(p, v) for p, v in leaves if isinstance(v, list) and v]
    choices = [(p, v) for p, v in leaves if p and (p[-1] in spec.enums and isinstance(v, str)
                                                   or p[-1] in spec.flags and isinstance(v, bool))]
    kind = rng.choice(["number"] * 6 + ["list"] * 2 + ["choice"])
    if kind == "list" and lists:
        p, items = lists[int(rng.integers(len(lists)))]
        i = int(rng.integers(len(items)))
        if rng.random() < 0.5 and len(items) > 1:
            items.pop(i)
        else:
            items.insert(i + 1, _unique_id(items, copy.deepcopy(items[i])))
    elif kind == "choice" and choices:
        p, v = choices[int(rng.integers(len(choices)))]
        if isinstance(v, bool):
            _set(d, p, not v)
        else:
            opts = [o for o in _enum_options(spec, p[-1], d) if o != v]
            if opts:
                _set(d, p, opts[int(rng.integers(len(opts)))])
    elif numbers:
        p, v = numbers[int(rng.integers(len(numbers)))]
        if isinstance(v, int):
            new: Any = _int_move(v, int(rng.integers(5)), rng)
        else:
            op = int(rng.integers(5))
            new = [v * math.exp(float(rng.normal(0.0, 1.0))), v * 10.0, v / 10.0, 0.0,
                   v * math.exp(float(rng.normal(0.0, 0.2)))][op]
        _set(d, p, _clamp(p[-1], new))
    return spec.repair(d)


def _int_move(v: int, op: int, rng: np.random.Generator) -> int:
    """Move ``op`` (0-4) on the integer ``v``: +1, -1, doubled, halved, or a uniform draw from
    ``[0, 2v + 2)``. A move's 2-3 steps are validated only at the end, so ``v`` may be negative
    here (1 halved to 0, then less one): the draw is then from ``[0, 1)``. For ``v >= 0`` the range
    is the one every earlier search used, so their candidates are unchanged."""
    if op == 4:
        return int(rng.integers(0, max(2 * v + 2, 1)))
    return [v + 1, v - 1, 2 * v, v // 2][op]


def _reductions(d: dict[str, Any], spec: _Spec) -> Iterator[dict[str, Any]]:
    """Every one-step reduction of ``d``, in a fixed order (module docstring, step 3)."""
    leaves = list(_leaves(d, spec))
    for p, v in leaves:
        if isinstance(v, list) and len(v) > 1:
            for i in range(len(v)):
                c = copy.deepcopy(d)
                _get(c, p).pop(i)
                yield spec.repair(c)
    for p, v in leaves:
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            for new in dict.fromkeys((v // 2, v - 1)):
                c = copy.deepcopy(d)
                _set(c, p, new)
                yield spec.repair(c)
    for p, v in leaves:
        if isinstance(v, float) and v != 0.0 and math.isfinite(v):
            for digits in (1, 2):
                new = float(f"{v:.{digits - 1}e}")
                if new != v:
                    c = copy.deepcopy(d)
                    _set(c, p, new)
                    yield spec.repair(c)


# ============================================================================ the search
def _check_budget(value: Any, name: str = "--budget") -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise InputError(name, f"must be a positive number of seconds, got {value!r}")
    return float(value)


def _hash(d: Mapping[str, Any]) -> str:
    from optkit.instances import instance_hash

    return instance_hash(dict(d))


def _total_size(sizes: Mapping[str, int]) -> int:
    return int(sum(sizes.values()))


def _atomic_write(path: Path, obj: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1, allow_nan=True) + "\n")
    os.replace(tmp, path)


class _Search:
    """State and moves of one search (see :func:`worst_case`)."""

    def __init__(self, problem: str, algorithm: str, objective: str, limits: dict[str, int], seed: int,
                 oracle_time_limit: float, out: Path, params: dict[str, Any], target: str = "ratio") -> None:
        from optkit import registry

        self.problem, self.algorithm, self.objective = problem, algorithm, objective
        self.f = registry.get(problem)
        self.spec = _spec(problem)
        self.limits, self.seed, self.oracle_time_limit = limits, seed, oracle_time_limit
        self.params = params
        self.target = target
        self.out = out
        self.config = {"problem": problem, "algorithm": algorithm, "objective": objective, "seed": seed,
                       "max_size": limits, "oracle_time_limit": oracle_time_limit, "params": params}
        if target != "ratio":  # (absent for the default, so that earlier state files still resume)
            self.config["target"] = target
        self.journal = out / "evaluations.jsonl"
        self.state_file = out / "state.json"
        self.cache: dict[str, dict[str, Any]] = {}
        rng = np.random.default_rng(seed)
        self.state: dict[str, Any] = {"version": _STATE_VERSION, "config": self.config, "phase": "search",
                                      "evaluations": 0, "search_evaluations": 0, "batches": 0,
                                      "rng": rng.bit_generator.state, "best": None, "found": None,
                                      "shrink_pos": 0, "shrink_clean": 0, "shrink_steps": 0, "violations": 0,
                                      "worst_violation": None, "elapsed_s": 0.0}
        self._load()

    # ---------------------------------------------------------------- persistence
    def _load(self) -> None:
        if self.state_file.exists():
            try:
                saved = json.loads(self.state_file.read_text())
            except (OSError, json.JSONDecodeError) as exc:
                raise InputError("--out", f"{self.state_file} is unreadable ({exc}); give a new folder") from None
            if saved.get("version") != _STATE_VERSION or saved.get("config") != json.loads(json.dumps(self.config)):
                raise InputError("--out", f"{self.out} holds another search ({saved.get('config')}); give a new folder "
                                          "or the same arguments to resume it")
            self.state = saved
        if self.journal.exists():
            text = self.journal.read_text()
            if text and not text.endswith("\n"):  # a kill cut the last line: the next append starts afresh
                with self.journal.open("a") as fh:
                    fh.write("\n")
            for line in text.splitlines():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:  # a line cut by a kill
                    continue
                self.cache[rec["hash"]] = rec["result"]

    def save(self) -> None:
        _atomic_write(self.state_file, self.state)

    # ---------------------------------------------------------------- candidates
    def _valid(self, d: dict[str, Any]) -> bool:
        try:
            sizes = self.spec.size(d)
            if any(sizes[k] > self.limits[k] for k in self.limits):
                return False
            self.f.instance_from_dict(d)
        except (InputError, KeyError, TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError,
                OverflowError):
            return False
        return True

    def _random(self, rng: np.random.Generator) -> dict[str, Any]:
        for _ in range(_MAX_DRAW_TRIES):
            try:
                d = _strip(self.spec.draw(rng, self.limits))
            except InputError:
                continue
            if self._valid(d):
                return d
        raise InputError("--max-size", f"no valid {self.problem} instance within {self.limits} in "
                                       f"{_MAX_DRAW_TRIES} draws; allow larger sizes")

    def _neighbour(self, base: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
        for _ in range(_MAX_DRAW_TRIES):
            d = base
            for _ in range(int(rng.integers(1, 4))):
                d = _mutate(d, self.spec, rng)
            if self._valid(d) and _hash(d) != _hash(base):
                return d
        return self._random(rng)

    def next_batch(self) -> list[dict[str, Any]]:
        """The next search batch, from the saved random state (the state advances on commit)."""
        rng = np.random.default_rng()
        rng.bit_generator.state = self.state["rng"]
        b = self.state["batches"]
        best = self.state["best"]
        fresh = best is None or b < RANDOM_BATCHES or (b - RANDOM_BATCHES) % RESTART_EVERY == RESTART_EVERY - 1
        batch = [self._random(rng) if fresh else self._neighbour(best["instance"], rng) for _ in range(BATCH)]
        self._pending_rng = rng.bit_generator.state
        return batch

    # ---------------------------------------------------------------- evaluation
    def evaluate(self, batch: list[dict[str, Any]], executor: Any, deadline: float,
                 progress: Any) -> list[dict[str, Any]] | None:
        """Results of ``batch`` in its order (journal first); ``None`` if the deadline cut it."""
        from optkit.harness.tasks import Task

        hashes = [_hash(d) for d in batch]
        todo: dict[str, dict[str, Any]] = {}
        for h, d in zip(hashes, batch):
            if h not in self.cache and h not in todo:
                todo[h] = d
        if todo:
            # One task per worker (a process start costs more than a tiny oracle call); the chunking
            # depends on --jobs but the results do not: they are consumed in candidate order.
            items = list(todo.items())
            n_chunks = max(1, min(len(items), int(getattr(executor, "jobs", 0) or len(items))))
            chunks = [items[k::n_chunks] for k in range(n_chunks)]
            tasks = []
            for chunk in chunks:
                first = chunk[0][0]
                tasks.append(Task(
                    problem=self.problem, instance_name=f"worst-case/{first[:12]}+{len(chunk) - 1}",
                    instance={"hashes": [h for h, _ in chunk]}, instance_hash=first,
                    algorithm=f"{__name__}:measure_candidates", objective=self.objective,
                    params={"problem": self.problem, "instances": [d for _, d in chunk], "algorithm": self.algorithm,
                            "objective": self.objective, "oracle_time_limit": self.oracle_time_limit,
                            "algorithm_seed": self.seed, "params": self.params},
                    seed=self.seed, time_limit=len(chunk) * (2 * self.oracle_time_limit + 5.0), kind="measure"))
            by_key = {t.key: t.instance["hashes"] for t in tasks}
            rows = executor.run(tasks)
            try:
                for row in rows:
                    chunk_hashes = by_key[row["key"]]
                    if row["status"] == "feasible":
                        results = list(row["metrics"]["results"])
                    elif row.get("message", "").startswith("cancelled"):
                        continue
                    else:  # a crash or a hard time limit: no verdict, recorded so a resume does not redo it
                        results = [{"status": "error", "ratio": None, "message": row.get("message", "")}
                                   for _ in chunk_hashes]
                    with self.journal.open("a") as fh:
                        for h, result in zip(chunk_hashes, results):
                            self.cache[h] = result
                            fh.write(json.dumps({"hash": h, "result": result}, allow_nan=True) + "\n")
                    progress.update(len(results))
                    if time.monotonic() > deadline and any(h not in self.cache for h in todo):
                        return None  # the finally cancels the calls still running; the journal keeps the rest
            finally:
                close = getattr(rows, "close", None)
                if close is not None:
                    close()
        return [{**self.cache[h], "hash": h, "instance": d} for h, d in zip(hashes, batch)]

    # ---------------------------------------------------------------- ordering
    def _key(self, rec: Mapping[str, Any]) -> tuple[int, float]:
        return (1 if rec.get("proven") else 0, score(rec, self.target))

    def _note_violations(self, results: list[dict[str, Any]]) -> None:
        seen = self.state.setdefault("violation_hashes", [])
        for r in results:
            if r.get("violates") and r["hash"] not in seen:  # each distinct instance once
                seen.append(r["hash"])
                self.state["violations"] += 1
                w = self.state["worst_violation"]
                margin = r["ratio"] / r["guarantee"] if r["guarantee"] else math.inf
                if w is None or margin > w["ratio"] / w["guarantee"]:
                    self.state["worst_violation"] = r

    def commit_search(self, results: list[dict[str, Any]]) -> None:
        best = self.state["best"]
        for r in results:
            if r.get("ratio") is None:
                continue
            if best is None or self._key(r) > self._key(best) or (
                    self._key(r) == self._key(best) and r["hash"] != best["hash"]
                    and _total_size(self.spec.size(r["instance"])) <= _total_size(self.spec.size(best["instance"]))):
                best = r
        self._note_violations(results)
        self.state.update(best=best, rng=self._pending_rng, batches=self.state["batches"] + 1,
                          evaluations=self.state["evaluations"] + len(results),
                          search_evaluations=self.state["search_evaluations"] + len(results))

    def shrink_batch(self) -> list[dict[str, Any]]:
        cur = self.state["best"]["instance"]
        seen: set[str] = {_hash(cur)}
        cands: list[dict[str, Any]] = []
        for c in _reductions(cur, self.spec):
            if not self._valid(c):  # first: rounding 1.5e308 to one digit gives inf, which has no hash
                continue
            h = _hash(c)
            if h in seen:
                continue
            seen.add(h)
            cands.append(c)
        if self.state["shrink_clean"] >= len(cands):
            return []  # a whole pass without a reduction that keeps the ratio: minimal
        pos = self.state["shrink_pos"] if self.state["shrink_pos"] < len(cands) else 0
        self.state["shrink_pos"] = pos
        return cands[pos:pos + BATCH]

    def commit_shrink(self, results: list[dict[str, Any]]) -> None:
        found = self.state["found"]
        self._note_violations(results)
        self.state["evaluations"] += len(results)
        for i, r in enumerate(results):
            if r.get("ratio") is None:
                continue
            have, need = score(r, self.target), score(found, self.target)
            keeps = have >= need * (1 - _TOL) if math.isfinite(need) else math.isinf(have)
            keeps = keeps and (r.get("proven") or not found.get("proven"))
            keeps = keeps and (r.get("guarantee") is not None or found.get("guarantee") is None)
            if keeps:  # go on from the same position in the reduced instance's list
                self.state.update(best=r, shrink_clean=0, shrink_steps=self.state["shrink_steps"] + 1,
                                  shrink_pos=self.state["shrink_pos"] + i)
                return
        self.state["shrink_pos"] += len(results)
        self.state["shrink_clean"] += len(results)


TARGETS = ("ratio", "margin")
"""What the search maximises: the ratio, or the margin ``ratio / the paper's bound on the
instance`` (a margin above 1 is a violation; an instance without a finite bound has margin 0)."""


def score(rec: Mapping[str, Any], target: str = "ratio") -> float:
    """The value a search maximises for one evaluated candidate (:data:`TARGETS`)."""
    ratio = float(rec["ratio"])
    if target == "ratio":
        return ratio
    g = rec.get("guarantee")
    if g is None or not math.isfinite(g) or g <= 0:
        return 0.0
    return ratio / g


def _progress(enabled: bool, total: int | None) -> Any:
    from tqdm.auto import tqdm

    disable = (not enabled) or not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())
    return tqdm(total=total, desc="worst-case", unit="eval", disable=disable, dynamic_ncols=True, leave=True)


def worst_case(
    problem: str,
    algorithm: str,
    out: str | Path,
    *,
    objective: str | None = None,
    budget: float = 60.0,
    max_size: Mapping[str, int] | None = None,
    seed: int = 0,
    jobs: int | None = None,
    scheduler: str | None = None,
    max_evals: int | None = None,
    oracle_time_limit: float = DEFAULT_ORACLE_TIME_LIMIT,
    params: Mapping[str, Any] | None = None,
    progress: bool = True,
    executor: Any = None,
    target: str = "ratio",
) -> dict[str, Any]:
    """Search ``problem``'s instance space for ``algorithm``'s largest ratio to the optimum.

    Parameters
    ----------
    problem
        A shipped problem.
    algorithm
        One of its non-exact algorithms.
    out
        Folder for ``instance.json``, ``optimum.json``, ``solution.json``, ``summary.json`` and
        the resume state (``state.json``, ``evaluations.jsonl``); created if missing.
    objective
        The objective whose ratio is searched (default: the problem's first).
    budget
        Wall seconds of this invocation (search 70%, shrink the rest).
    max_size
        Size limits (:func:`size_limits`; keys per problem).
    seed
        The search's seed (also the algorithm's).
    jobs
        Local worker processes (default: one per core).
    scheduler
        A Dask scheduler address to run on instead of local processes.
    max_evals
        Stop the search after this many evaluations (cumulative over resumes).
    oracle_time_limit
        Seconds of each exact call and of each algorithm run.
    params
        The algorithm's parameters and readings (defaults filled in).
    progress
        A progress bar on stderr when it is a terminal.
    executor
        An executor object to use instead of ``jobs``/``scheduler`` (tests).
    target
        ``ratio`` (the largest ratio) or ``margin`` (the largest ratio over the paper's bound
        on the instance: the search for a violation of the guarantee), :data:`TARGETS`.

    Returns
    -------
    dict
        The summary written to ``out/summary.json``.

    Notes
    -----
    Guarantee: the reported ratio is a lower bound on the algorithm's worst-case ratio when
    ``ratio_against`` is ``proven optimum``; against a lower bound it is an upper estimate of
    the ratio on that instance.

    Units: ratios are dimensionless; times in seconds.

    The method, what "same result" means and how resuming works are in the module docstring.

    References
    ----------
    S. Namyar et al., "Finding Adversarial Inputs for Heuristics using Multi-level
    Optimization", NSDI 2024 (MetaOpt), for the idea of searching a heuristic's worst case
    against the optimum.

    Examples
    --------
    >>> import tempfile
    >>> s = worst_case("rar-ddls", "ls", tempfile.mkdtemp(), max_evals=8, budget=600, progress=False,
    ...                max_size={"jobs": 3, "servers": 2}, jobs=1)
    >>> s["ratio"] >= 1.0, s["ratio_against"], s["guarantee"], s["phase"]
    (True, 'proven optimum', None, 'done')
    """
    from optkit import registry
    from optkit.readings import resolve_params
    from optkit.solve import check_algorithm

    budget = _check_budget(budget)
    spec = _spec(problem)
    if target not in TARGETS:
        raise InputError("--target", f"must be one of {', '.join(TARGETS)}, got {target!r}")
    f = registry.get(problem)
    if algorithm not in f.algorithms:
        raise InputError("--algorithm", f"is unknown for {problem}: {algorithm!r} (known: {', '.join(f.algorithms)})")
    if f.algorithms[algorithm].kind == "exact":
        raise InputError("--algorithm", f"{algorithm} is an exact solver of {problem} (ratio 1 by proof); pick a "
                                        "heuristic, peer or baseline")
    try:
        objective = check_algorithm(f, algorithm, objective)
    except InputError as exc:
        raise InputError(f"--{exc.field}", exc.message) from None
    if max_evals is not None and (isinstance(max_evals, bool) or not isinstance(max_evals, int) or max_evals < 1):
        raise InputError("--max-evals", f"must be an integer >= 1, got {max_evals!r}")
    oracle_time_limit = _check_budget(oracle_time_limit, "--oracle-time-limit")
    limits = size_limits(problem, max_size)
    resolved = resolve_params(f, algorithm, dict(params or {}))
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError("--out", f"{out} is a file; give a folder")
    out.mkdir(parents=True, exist_ok=True)
    search = _Search(problem, algorithm, objective, limits, seed, oracle_time_limit, out, resolved, target)
    st = search.state
    start = time.monotonic()
    deadline = start + budget
    search_deadline = start + SEARCH_SHARE * budget
    stopped = "complete"
    own = executor is None
    if own:
        from optkit.harness.executors import make_executor

        executor = make_executor(jobs, scheduler)
    bar = _progress(progress, max_evals)
    bar.update(st["evaluations"])
    try:
        while st["phase"] == "search":
            if max_evals is not None and st["search_evaluations"] >= max_evals:
                break
            if time.monotonic() >= search_deadline:
                break
            batch = search.next_batch()
            if max_evals is not None:
                batch = batch[:max_evals - st["search_evaluations"]]
            results = search.evaluate(batch, executor, deadline, bar)
            if results is None:
                stopped = "budget"
                break
            search.commit_search(results)
            if st["best"] is not None:
                bar.set_postfix(ratio=f"{st['best']['ratio']:.4g}")
            search.save()
        if st["phase"] == "search" and stopped == "complete":
            if st["best"] is None:
                stopped = "budget"
            else:
                st.update(phase="shrink", found=st["best"], shrink_pos=0, shrink_clean=0)
                search.save()
        while st["phase"] == "shrink":
            batch = search.shrink_batch()
            if not batch:
                st["phase"] = "done"
                search.save()
                break
            if time.monotonic() >= deadline:
                stopped = "budget"
                break
            results = search.evaluate(batch, executor, deadline, bar)
            if results is None:
                stopped = "budget"
                break
            search.commit_shrink(results)
            search.save()
    finally:
        bar.close()
        if own:
            executor.close()
        st["elapsed_s"] = float(st.get("elapsed_s", 0.0)) + time.monotonic() - start
        search.save()
    if st["best"] is None:
        if st["evaluations"] == 0:
            raise InputError("--budget", f"{budget:g} s ended before any candidate was evaluated; give more")
        statuses = [r.get("status") for r in search.cache.values()]
        errors = [r.get("message", "") for r in search.cache.values() if r.get("status") == "error"]
        if errors:
            raise RuntimeError(f"no candidate got a ratio in {st['evaluations']} evaluations; e.g. {errors[0]}")
        raise InputError("--max-size", f"no feasible {problem} instance among {st['evaluations']} candidates within "
                                       f"{limits} ({', '.join(sorted(set(map(str, statuses))))}); allow larger sizes")
    return _write_outputs(search, stopped, budget, max_evals)


def _write_outputs(search: _Search, stopped: str, budget: float, max_evals: int | None) -> dict[str, Any]:
    st = search.state
    best = st["best"]
    found = st["found"] or best
    out = search.out
    data = {"problem": search.problem, **{k: v for k, v in best["instance"].items() if k != "problem"}}
    data["name"] = f"worst-case-{search.algorithm}"
    _atomic_write(out / "instance.json", data)
    _atomic_write(out / "optimum.json", {"objective": search.objective, "value": best["reference"],
                                         "solver": best["source"], "proven": bool(best["proven"])})
    _atomic_write(out / "solution.json", best.get("solution"))
    ratio = best["ratio"]
    errors = [r.get("message", "") for r in search.cache.values() if r.get("status") == "error"]
    summary = {
        "problem": search.problem, "algorithm": search.algorithm, "objective": search.objective,
        "seed": search.seed, "algorithm_seed": search.seed, "params": search.params,
        "ratio": ratio,
        "ratio_against": "proven optimum" if best["proven"] else "lower bound (upper estimate of the ratio)",
        "algorithm_objective": best["objective"], "reference": best["reference"], "reference_source": best["source"],
        "algorithm_status": best.get("algorithm_status"),
        "guarantee": best.get("guarantee"), "guarantee_text": best.get("guarantee_text", ""),
        "violates_guarantee": bool(best.get("violates")),
        "target": search.target, "margin": score(best, "margin"),
        "found_ratio": found["ratio"], "found_size": size_of(search.problem, found["instance"]),
        "size": size_of(search.problem, best["instance"]), "max_size": search.limits,
        "evaluations": st["evaluations"], "search_evaluations": st["search_evaluations"],
        "shrink_steps": st["shrink_steps"], "phase": st["phase"], "stopped": stopped,
        "violations_seen": st["violations"],
        "worst_violation": None if st["worst_violation"] is None else {
            k: st["worst_violation"][k] for k in ("hash", "ratio", "guarantee", "reference", "objective")},
        "budget_s": budget, "max_evals": max_evals, "oracle_time_limit_s": search.oracle_time_limit,
        "elapsed_s": st["elapsed_s"], "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "instance_hash": best["hash"],
        "errors_seen": len(errors), "first_error": errors[0] if errors else None,
    }
    if st["worst_violation"] is not None:
        v = st["worst_violation"]
        _atomic_write(out / "violation.json", {"problem": search.problem,
                                               **{k: x for k, x in v["instance"].items() if k != "problem"}})
    _atomic_write(out / "summary.json", summary)
    return summary


def format_summary(s: Mapping[str, Any]) -> str:
    """The lines ``optkit worst-case`` prints: the ratio beside the paper's guarantee."""
    g = s["guarantee"]
    verdict = ("no guarantee to compare" if g is None else
               ("VIOLATES it" if s["violates_guarantee"] else
                ("within it" if s["ratio"] <= g * (1 + _TOL) else "above it, but only against a lower bound")))
    size = ", ".join(f"{k} {v}" for k, v in s["size"].items())
    found_size = ", ".join(f"{k} {v}" for k, v in s["found_size"].items())
    lines = [
        f"{s['problem']} / {s['algorithm']}: worst ratio {s['ratio']:.6g} ({s['objective']} against the "
        f"{s['ratio_against']}; {s['algorithm_objective']} vs {s['reference']} by {s['reference_source']})",
        f"  paper: {s['guarantee_text']}" + (f"; bound on this instance {g:.6g}" if g is not None else "")
        + f": {verdict}",
        f"  instance: {size} (found at ratio {s['found_ratio']:.6g} with {found_size}; "
        f"{s['shrink_steps']} shrink steps)",
        f"  {s['evaluations']} evaluations ({s['search_evaluations']} in the search), {s['stopped']}, "
        f"{s['elapsed_s']:.1f} s; replay with --max-evals {s['search_evaluations']}",
    ]
    if s.get("errors_seen"):
        lines.append(f"  {s['errors_seen']} evaluated instances gave no ratio: the run was an error, e.g. "
                     f"{s['first_error']}")
    if s["violations_seen"]:
        lines.append(f"  {s['violations_seen']} evaluated instances violate the guarantee; the worst is in "
                     "violation.json")
    return "\n".join(lines)


# ============================================================================ command line
def _budget_arg(text: str) -> float:
    """``--budget``, ``--oracle-time-limit``: a finite number of seconds > 0."""
    from optkit.cli_args import time_limit_arg

    try:
        return time_limit_arg(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}") from None


def _positive_int(text: str) -> int:
    """``--max-evals``, ``--jobs``: an integer >= 1."""
    from optkit.cli_args import seed_arg

    try:
        value = seed_arg(text)
    except argparse.ArgumentTypeError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def _parse_sizes(items: Sequence[str] | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise InputError("--max-size", f"must be KEY=VALUE, got {item!r}")
        try:
            out[key.strip()] = int(value)
        except ValueError:
            raise InputError("--max-size", f"{key} must be an integer >= 1, got {value!r}") from None
    return out


def cmd_worst_case(args: argparse.Namespace) -> int:
    """``optkit worst-case``: run :func:`worst_case` and print the ratio beside the guarantee."""
    from optkit.cli import _parse_params

    summary = worst_case(args.problem, args.algorithm, args.out, objective=args.objective, budget=args.budget,
                         target=args.target,
                         max_size=_parse_sizes(args.max_size), seed=args.seed, jobs=args.jobs,
                         scheduler=args.scheduler, max_evals=args.max_evals,
                         oracle_time_limit=args.oracle_time_limit, params=_parse_params(args.param),
                         progress=not args.json)
    if args.json:
        print(json.dumps(summary, allow_nan=True, default=str))
    else:
        print(format_summary(summary))
        print(f"  wrote {args.out}/instance.json, optimum.json, solution.json, summary.json")
    return 0


def add_worst_case_parser(sub: Any) -> None:
    """The ``worst-case`` verb of :mod:`optkit.cli`."""
    from optkit.cli_args import seed_arg

    s = sub.add_parser("worst-case", help="search an algorithm's worst ratio to the optimum; write the instance",
                       description="Search the instance space for the largest ratio of ALGORITHM's objective to "
                                   "the proven optimum (random instances, then a local search, then a shrink), "
                                   "and print it beside the paper's guarantee. Resumable: run again with the same "
                                   "arguments.")
    s.add_argument("problem", help="problem name (see optkit list)")
    s.add_argument("--algorithm", "-a", required=True, help="a heuristic, peer or baseline of the problem")
    s.add_argument("--objective", help="objective (default: the problem's first)")
    s.add_argument("--budget", type=_budget_arg, default=60.0, metavar="S",
                   help="wall seconds of this run, > 0 (default 60): 70%% search, then the shrink")
    s.add_argument("--max-size", action="append", metavar="KEY=N",
                   help="size limit (repeatable); keys: " + "; ".join(
                       f"{p}: " + ", ".join(f"{k} (default {v[0]}, at most {v[1]})" for k, v in sp.limits.items())
                       for p, sp in _SPECS.items()))
    s.add_argument("--seed", type=seed_arg, default=0, metavar="N", help="seed of the search (default 0)")
    s.add_argument("--max-evals", type=_positive_int, default=None, metavar="N",
                   help="stop the search after N evaluations (reproducible whatever the machine)")
    s.add_argument("--jobs", "-j", type=_positive_int, default=None, metavar="N", help="worker processes")
    s.add_argument("--scheduler", metavar="ADDR", help="run the oracle calls on this Dask scheduler")
    s.add_argument("--oracle-time-limit", type=_budget_arg, default=DEFAULT_ORACLE_TIME_LIMIT, metavar="S",
                   help=f"seconds of each exact call (default {DEFAULT_ORACLE_TIME_LIMIT:g})")
    s.add_argument("--target", choices=TARGETS, default="ratio",
                   help="maximise the ratio (default), or the margin ratio / the paper's bound on the instance")
    s.add_argument("--param", action="append", metavar="KEY=VALUE", help="algorithm keyword or reading (repeatable)")
    s.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    s.add_argument("--out", required=True, help="folder for the results and the resume state")
    s.set_defaults(func=cmd_worst_case)
