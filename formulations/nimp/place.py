"""Titan from a scheduler's placement hook: machines and pair capacities keyed by node ids.

A scheduler calls :func:`place` with its job, ``{node id: Machine(gpus, idle_gpus)}`` and the
pair capacity P (one number for every machine pair, or ``{(a, b): bytes}`` per unordered node
pair); it gets the node of every worker, or the reason there is none. The input goes through the
same checks, with the same messages, as an instance file (:meth:`.model.NimpInstance.from_dict`),
with each ``machines[i]`` in a message named by its node id instead.

Why nothing is placed, in ``reason``:

* ``too-few-idle-gpus``: the idle GPUs of all machines are fewer than the workers (Eq. 1's
  resource constraint): no placement exists.
* ``breaks-bandwidth``: no placement Titan builds (Alg. 3, every selection it tries) meets Eq. 1's
  bandwidth constraint. A placement may still exist: Titan is a heuristic, and the exact solvers
  (:mod:`.exact`) decide. The detail says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, Hashable, Mapping, TypeVar

from optkit.errors import InputError
from optkit.validation import checked_arguments, distinct_keys

from .model import Job, Machine, NimpInstance, criteria
from .titan import capacity_argument, titan

__all__ = ["WorkerPlacement", "place"]

N = TypeVar("N", bound=Hashable)
PROBLEM = "nimp"


@dataclass(frozen=True)
class WorkerPlacement(Generic[N]):
    """The answer of :func:`place`.

    Attributes
    ----------
    ok
        Whether the job was placed.
    machine_of_worker
        The node id of each worker (empty when not placed).
    idle_used
        The first criterion of the lexicographic objective: the idle machines the job opens
        (``None`` when not placed).
    used
        The second criterion: the machines it uses (``None`` when not placed).
    cross_bytes
        Bytes crossing machines per synchronisation.
    reason
        ``None`` when placed, else ``too-few-idle-gpus`` or ``breaks-bandwidth``.
    detail
        The reason in words.
    """

    ok: bool
    machine_of_worker: list[N] = field(default_factory=list)
    idle_used: int | None = None
    used: int | None = None
    cross_bytes: float | None = None
    reason: str | None = None
    detail: str = ""


def capacity_in_file_form(capacity: float | Mapping[tuple[N, N], float], nodes: list[N]) -> Any:
    """P in the instance file's form: the number, or the M x M matrix from the pair mapping."""
    if not isinstance(capacity, Mapping):
        return capacity
    index = {n: i for i, n in enumerate(nodes)}
    M = len(nodes)
    rows: list[list[Any]] = [[0.0] * M for _ in range(M)]
    seen = [[False] * M for _ in range(M)]
    for pair, value in capacity.items():
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(p in index for p in pair) and pair[0] != pair[1]):
            raise InputError(f"pair_capacity_bytes[{pair!r}]", "must name two different machines of `machines`",
                             problem=PROBLEM)
        s, u = index[pair[0]], index[pair[1]]
        for a, b in ((s, u), (u, s)):
            if seen[a][b] and rows[a][b] != value:
                raise InputError("pair_capacity_bytes", f"gives the pair {{{pair[0]!r}, {pair[1]!r}}} two "
                                 f"capacities, {rows[a][b]!r} and {value!r}", problem=PROBLEM)
            rows[a][b], seen[a][b] = value, True
    for s in range(M):
        for u in range(s + 1, M):
            if not seen[s][u]:
                raise InputError("pair_capacity_bytes", f"has no capacity for the pair {{{nodes[s]!r}, {nodes[u]!r}}}",
                                 problem=PROBLEM)
    return rows


def _rename(err: InputError, nodes: list[Any]) -> InputError:
    """The file path's message with ``machines[i]`` named by its node id."""
    f = err.field
    if f.startswith("machines[") and "]" in f:
        i = f[len("machines["):f.index("]")]
        if i.isdigit() and int(i) < len(nodes):
            f = f"machines[{nodes[int(i)]!r}]" + f[f.index("]") + 1:]
    return InputError(f, err.message, problem=PROBLEM)


@checked_arguments(PROBLEM)
def place(job: Job, machines: Mapping[N, Machine], capacity: float | Mapping[tuple[N, N], float], *,
          titan_algorithm: str = "repaired", titan_step2: str = "fix-idle-count",
          titan_tie_break: str = "least-traffic", max_attempts: int | None = None) -> WorkerPlacement[N]:
    """Place ``job``'s workers with Titan on machines keyed by the caller's node ids.

    Parameters
    ----------
    job
        N workers, the collective (``ring`` or ``halving-doubling``), K = ``param_bytes``.
    machines
        ``{node id: Machine(gpus, idle_gpus)}``; a machine with every GPU idle is an idle
        machine (S_n), which Titan opens only when it must.
    capacity
        P in bytes per phase: one number for every machine pair, or ``{(a, b): bytes}`` naming
        every unordered pair of nodes once (either order).
    titan_algorithm
        Reading ``titan_algorithm`` (:func:`.titan.titan`): ``"repaired"`` (default: Alg. 1's
        check as each worker joins, Alg. 2 line 18 repaired), ``"pseudo-code"`` (Algorithms 1-3
        as written) or ``"pair-grouping"`` (optkit <= 0.2).
    titan_step2
        Reading ``titan_step2`` of ``repaired`` and ``pair-grouping`` (:func:`.titan.titan`).
    titan_tie_break
        Reading ``titan_tie_break`` of ``repaired`` and ``pair-grouping`` (:func:`.titan.titan`).
    max_attempts
        Placement attempts per greedy pass of ``repaired`` and ``pair-grouping``
        (:func:`.titan.titan`; default: until the pool is exhausted).

    Returns
    -------
    WorkerPlacement
        The node of every worker and the two criteria, or ``ok=False`` with the reason (module
        docstring). Never ``None``.

    References
    ----------
    Fang et al., "Titan", Sec. IV, Algorithms 1-3; Eq. (1) (resource and bandwidth constraints).

    Notes
    -----
    Guarantee: with the default readings, the lexicographic optimum wherever the bandwidth
    constraint cannot bind (:mod:`.titan`). Theorems 4-5 claim (1 - 1/e) per criterion under
    assumptions that drop the capacity and bandwidth constraints; measured with a binding P, the
    claim fails on seeded instances (``benchmarks/perf/nimp_approximation.md``).

    Units: GPUs; ``param_bytes`` and ``capacity`` in bytes (per phase for the capacity).

    Examples
    --------
    Three 8-GPU hosts; ``b`` is idle. A 4-worker ring of 100 MB fits on ``a`` and ``c``:

    >>> from optkit.formulations.nimp.model import Job, Machine
    >>> hosts = {"a": Machine(8, 2), "b": Machine(8, 8), "c": Machine(8, 3)}
    >>> p = place(Job(4, "ring", 100e6), hosts, 200e6)
    >>> p.ok, p.machine_of_worker, p.idle_used, p.used
    (True, ['c', 'c', 'a', 'c'], 0, 2)
    >>> place(Job(16, "ring", 100e6), hosts, 200e6).reason
    'too-few-idle-gpus'
    """
    if not isinstance(job, Job):
        raise InputError("job", f"must be a nimp Job, got {type(job).__name__}", problem=PROBLEM)
    if not isinstance(machines, Mapping):
        raise InputError("machines", f"must map node ids to Machine(gpus, idle_gpus), got {type(machines).__name__}",
                         problem=PROBLEM)
    nodes = distinct_keys(machines, "machines", problem=PROBLEM)
    rows = []
    for i, n in enumerate(nodes):
        m = machines[n]
        if not isinstance(m, Machine):
            raise InputError(f"machines[{n!r}]", f"must be a Machine(gpus, idle_gpus), got {type(m).__name__}",
                             problem=PROBLEM)
        rows.append({"gpus": m.gpus, "idle_gpus": m.idle_gpus})
    try:
        inst = NimpInstance.from_dict({"problem": PROBLEM, "machines": rows, "job": job.to_dict(),
                                       "pair_capacity_bytes": capacity_in_file_form(capacity, nodes)})
    except InputError as err:
        raise _rename(err, nodes) from None
    idle = sum(m.idle_gpus for m in inst.machines)
    if idle < inst.N:
        return WorkerPlacement(False, reason="too-few-idle-gpus",
                               detail=f"the job has {inst.N} workers, the machines have {idle} idle GPUs")
    cap = capacity_argument(inst)
    m_of = titan([m.gpus for m in inst.machines], [m.idle_gpus for m in inst.machines], cap, inst.phases(),
                 workers=inst.N, titan_algorithm=titan_algorithm, titan_step2=titan_step2,
                 titan_tie_break=titan_tie_break, max_attempts=max_attempts)
    if m_of is None:
        return WorkerPlacement(False, reason="breaks-bandwidth",
                               detail="no placement Titan builds meets Eq. 1's bandwidth constraint (Titan is a "
                                      "heuristic); a placement may still exist: the exact solvers decide")
    idle_used, used, cross = criteria(inst, m_of)
    return WorkerPlacement(True, [nodes[s] for s in m_of], int(idle_used), int(used), float(cross))
