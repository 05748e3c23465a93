"""nimp: instance, collective phases, solution and the independent ``evaluate``.

Source: Fang et al., *Non-Idle Machine-Aware Worker Placement for Efficient Distributed Training
in GPU Clusters*, Sec. III (Eq. 1). The package ``README.md`` states the formulation and every
reading; the short version:

* Machines s with ``gpus`` K_s and ``idle_gpus`` R_s (``0 <= R_s <= K_s``). *Idle* machine
  (S_n): ``R_s = K_s``; *non-idle* (S_f): ``0 < R_s < K_s``; *full* (``R_s = 0``): cannot host.
* A job of N workers synchronises with a collective made of phases t; in phase t worker pair
  {n, n'} exchanges ``C^t_{n,n'}`` bytes (:func:`phases`).
* Place each worker on one machine, at most R_s workers on s; for every phase t and every
  *unordered* machine pair {s, s'}, s != s', the bytes of the phase-t pairs with one worker on s
  and the other on s' are at most ``P_{s,s'}`` (``pair_capacity_bytes``; the diagonal of a
  matrix is ignored: traffic inside a machine is not constrained).
* Criteria, all minimised, lexicographically: (1) idle machines used, (2) machines used,
  optionally (3) cross-machine bytes per synchronisation (the sum over all phases of the bytes
  of the pairs split across machines).

Objectives (``OBJECTIVES``): ``lex`` = ``[idle machines used, machines used]`` and ``lex-cross`` =
``[idle, used, cross bytes]``; both are lists (lexicographic). For gaps and bounds the engine
needs a scalar: the metric ``objective_key.<name>`` (see :mod:`optkit.result`) is
``idle·(M+1) + used`` for ``lex`` and ``(idle·(M+1) + used)·(X+1) + cross_bytes`` for
``lex-cross``, X = the cross bytes when every pair of every phase is split (:func:`key_of`);
both keys order placements exactly as the lists do (``used <= M``, ``cross <= X``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from optkit.errors import InputError
from optkit.formulation import Evaluation
from optkit.validation import instance_object, integer, known_keys, mapping, number, check_typed, trusted

__all__ = [
    "PROBLEM", "OBJECTIVES", "COLLECTIVES", "REL_TOL", "MAX_MACHINES", "Machine", "Job", "Phase", "NimpInstance",
    "phases", "halving_doubling_phases", "binary_blocks", "ring_phases", "pair_limit", "criteria", "key_of",
    "evaluate", "solution_dict", "is_placement_sensitive", "placement_sensitive",
]

PROBLEM = "nimp"
OBJECTIVES = ("lex", "lex-cross")
COLLECTIVES = ("halving-doubling", "ring")
REL_TOL = 1e-9  # relative slack of every bandwidth comparison (bytes are floats)
MAX_MACHINES = 4096
"""Most machines of an instance: P is a dense M x M matrix (4096: 128 MiB); the paper's cluster
has 512. More is bad input, not a memory error. Also the most workers of the job (its phases
list every worker pair; the paper's largest job has 64)."""
_TOP_FIELDS = ("problem", "machines", "pair_capacity_bytes", "job")  # and name, meta, comment
_MACHINE_FIELDS = ("gpus", "idle_gpus")
_JOB_FIELDS = ("workers", "collective", "param_bytes", "placement_sensitive", "model")
# Tiresias (NSDI '19, Sec. 3.2) found VGG-family and AlexNet placement-sensitive (large
# fully-connected layers, skewed tensor sizes) and ResNet / Inception not.
_SENSITIVE_PREFIXES = ("vgg", "alexnet")


@dataclass(frozen=True)
class Machine:
    """K_s GPUs of which R_s are idle."""

    gpus: int
    idle_gpus: int

    def __post_init__(self) -> None:
        check_typed(lambda: _machine(self.to_dict(), "machine"), PROBLEM)

    def to_dict(self) -> dict[str, Any]:
        return {"gpus": self.gpus, "idle_gpus": self.idle_gpus}

    @property
    def idle(self) -> bool:
        """In S_n: every GPU idle."""
        return self.idle_gpus == self.gpus

    @property
    def usable(self) -> bool:
        return self.idle_gpus > 0


@dataclass(frozen=True)
class Job:
    """N workers, the collective, K = ``param_bytes``; Tiresias' flag or model name (optional)."""

    workers: int
    collective: str
    param_bytes: float
    placement_sensitive: bool | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        check_typed(lambda: _job(self.to_dict(), "job"), PROBLEM)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"workers": self.workers, "collective": self.collective, "param_bytes": self.param_bytes}
        if self.placement_sensitive is not None:
            d["placement_sensitive"] = self.placement_sensitive
        if self.model is not None:
            d["model"] = self.model
        return d


@dataclass(frozen=True)
class Phase:
    """One phase t: unordered worker pairs (a < b) each exchanging ``volume`` bytes."""

    pairs: tuple[tuple[int, int], ...]
    volume: float


def _hd_block(base: int, size: int, j: int) -> list[tuple[int, int]]:
    """Phase j of the paper's HD inside the block ``base .. base+size-1``: a with a XOR (size >> j)."""
    d = size >> j
    return [(base + a, base + (a ^ d)) for a in range(size) if a < a ^ d]


def binary_blocks(workers: int) -> list[tuple[int, int]]:
    """(first rank, size) of gloo's binary blocks of ``workers``: the powers of two of its binary
    representation, the largest on the lowest ranks (6 -> (0, 4), (4, 2); 7 -> (0, 4), (4, 2), (6, 1))."""
    out, base = [], 0
    for bit in range(workers.bit_length() - 1, -1, -1):
        if workers >> bit & 1:
            out.append((base, 1 << bit))
            base += 1 << bit
    return out


def halving_doubling_phases(workers: int, param_bytes: float, *,
                            hd_non_power_of_two: str = "binary-blocks") -> list[Phase]:
    """Halving-doubling. N = 2^p exactly as Fig. 1 fixes it: phases j = 1..p then j = p..1; phase
    j pairs a with ``a XOR (N >> j)``, ``K / 2^j`` bytes per pair. N = 1: no phase.

    Any other N (reading ``hd_non_power_of_two``, default ``binary-blocks``; ``reject`` raises
    :class:`InputError` naming ``job.workers``): gloo's binary blocks (``allreduce_halving_doubling.h``;
    the paper ran HD on gloo with 6, 10 and 12 workers, Sec. V-C). N splits into blocks
    B_0 > B_1 > ... of power-of-two sizes b_0 > b_1 > ... (:func:`binary_blocks`), B_0 on the
    lowest ranks. Phases, one after the other:

    1. reduce-scatter, j = 1..log2 b_0: every block with b >= 2^j runs the paper's phase j inside
       itself (pairs a XOR (b >> j) in block-local ranks), ``K/2^j`` per pair (gloo sends the same
       chunk size at step j in every block); rank a of a block then holds segment a of K/b;
    2. gather, i = k-1 .. 0 (smallest pair of blocks first, k+1 blocks): local rank r of B_{i+1}
       sends its segment K/b_{i+1}, cut into b_i/b_{i+1} pieces of ``K/b_i``, to the ranks
       ``r·(b_i/b_{i+1}) + q`` of B_i holding those pieces (q = 0..b_i/b_{i+1}-1);
    3. return, i = 0 .. k-1: the same pairs carry the reduced pieces back, ``K/b_i`` each;
    4. all-gather, j = log2 b_0 .. 1: the reduce-scatter phases in reverse.

    Each phase has one volume per pair. gloo numbers ranks inside a block the other way round
    (nearest partner first), so its pairs are these up to relabelling; the volumes are gloo's.
    Worked cases (6, 10, 12 workers) are in ``tests/test_nimp_model.py``."""
    n = workers
    if n < 1:
        raise InputError("job.workers", f"must be >= 1, got {n}")
    pow2 = n & (n - 1) == 0
    if not pow2 and hd_non_power_of_two != "binary-blocks":
        if hd_non_power_of_two != "reject":
            raise InputError("hd_non_power_of_two", f"must be binary-blocks or reject, got {hd_non_power_of_two!r}")
        raise InputError("job.workers", f"must be a power of two for collective 'halving-doubling' "
                                        f"(reading hd_non_power_of_two='reject'), got {n}; use collective 'ring'")
    return list(_hd_phases(n, param_bytes))


@functools.lru_cache(maxsize=256, typed=True)
def _hd_phases(n: int, param_bytes: float) -> tuple[Phase, ...]:
    """The phases of :func:`halving_doubling_phases` (arguments checked there), computed once per
    (N, K) and kept: Titan, the brute force and the engine ask for the same job's phases at every
    call, and a :class:`Phase` is frozen (each call gets its own list)."""
    blocks = binary_blocks(n)
    p = blocks[0][1].bit_length() - 1
    rs = []
    for j in range(1, p + 1):
        pairs = [pr for base, b in blocks if b >= 1 << j for pr in _hd_block(base, b, j)]
        rs.append(Phase(tuple(sorted(pairs)), param_bytes / 2 ** j))
    links = []  # links[i]: pairs between B_i and B_{i+1}, volume K/b_i
    for (base_l, b_l), (base_s, b_s) in zip(blocks, blocks[1:]):
        ratio = b_l // b_s
        pairs = tuple(sorted((base_l + r * ratio + q, base_s + r) for r in range(b_s) for q in range(ratio)))
        links.append(Phase(pairs, param_bytes / b_l))
    return tuple(rs + links[::-1] + links + rs[::-1])


def ring_phases(workers: int, param_bytes: float) -> list[Phase]:
    """Ring all-reduce: 2(N-1) phases (reduce-scatter then all-gather); in each, every worker a
    sends ``K/N`` bytes to ``(a+1) mod N``: pairs {a, a+1 mod N}, ``K/N`` each. For N = 2 the two
    directions are one pair {0, 1} (like HD's exchange pairs, a pair counts once). N = 1: none."""
    n = workers
    if n == 1:
        return []
    pairs = tuple(sorted({(min(a, (a + 1) % n), max(a, (a + 1) % n)) for a in range(n)}))
    return [Phase(pairs, param_bytes / n) for _ in range(2 * (n - 1))]


def phases(job: Job, *, hd_non_power_of_two: str = "binary-blocks") -> list[Phase]:
    """C^t_{n,n'} of ``job``'s collective, phase by phase (reading ``hd_non_power_of_two``:
    :func:`halving_doubling_phases`)."""
    if job.collective == "halving-doubling":
        return halving_doubling_phases(job.workers, job.param_bytes, hd_non_power_of_two=hd_non_power_of_two)
    return ring_phases(job.workers, job.param_bytes)


def pair_limit(capacity: float, volume: float) -> int:
    """Most pairs of ``volume`` bytes that fit ``capacity`` bytes (with :data:`REL_TOL`): every
    phase has one volume per pair, so the bandwidth constraint of a phase is a pair count."""
    if volume <= 0:
        return 1 << 30
    q = capacity / volume * (1.0 + REL_TOL)
    return int(math.floor(q)) if q < (1 << 30) else 1 << 30  # more pairs than any phase has: no limit


def is_placement_sensitive(job: Job) -> bool:
    """Tiresias' consolidation test: the job's flag if given, else whether its ``model`` is a
    VGG or AlexNet; a job with neither is treated as sensitive (consolidating is the safe choice)."""
    return placement_sensitive(job.placement_sensitive, job.model)


def placement_sensitive(flag: bool | None, model: str | None) -> bool:
    """:func:`is_placement_sensitive` of a job with Tiresias' ``flag`` and ``model`` name (what an
    online policy knows of a job, without building a :class:`Job`)."""
    if flag is not None:
        return flag
    if model is None:
        return True
    name = model.lower().replace("-", "").replace("_", "")
    return name.startswith(_SENSITIVE_PREFIXES)


def _machine(md: Any, p: str) -> Machine:
    """One machine of an instance file (``p`` its path), checked."""
    md = mapping(md, p)
    known_keys(md, _MACHINE_FIELDS, p, "a machine")
    for k in _MACHINE_FIELDS:
        if k not in md:
            raise InputError(f"{p}.{k}", "is required")
    k_s = integer(md["gpus"], f"{p}.gpus", low=1)
    r_s = integer(md["idle_gpus"], f"{p}.idle_gpus", low=0)
    if r_s > k_s:
        raise InputError(f"{p}.idle_gpus", f"must be <= gpus ({k_s}), got {r_s}")
    with trusted():
        return Machine(k_s, r_s)


def _job(jd: Any, p: str) -> Job:
    """The job of an instance file, checked."""
    jd = mapping(jd, p)
    known_keys(jd, _JOB_FIELDS, p)
    for k in ("workers", "collective", "param_bytes"):
        if k not in jd:
            raise InputError(f"{p}.{k}", "is required")
    workers = integer(jd["workers"], f"{p}.workers", low=1, high=MAX_MACHINES)
    coll = jd["collective"]
    if coll not in COLLECTIVES:
        raise InputError(f"{p}.collective", f"must be one of {', '.join(COLLECTIVES)}, got {coll!r}")
    k_bytes = number(jd, "param_bytes", p, positive=True)
    sens = jd.get("placement_sensitive")
    if sens is not None and not isinstance(sens, bool):
        raise InputError(f"{p}.placement_sensitive", f"must be true or false, got {sens!r}")
    model = jd.get("model")
    if model is not None and (not isinstance(model, str) or not model):
        raise InputError(f"{p}.model", f"must be a non-empty string, got {model!r}")
    with trusted():
        return Job(workers, coll, k_bytes, sens, model)


@dataclass(frozen=True)
class NimpInstance:
    """Machines, the pair capacity matrix P (bytes per phase; a symmetric M x M array), the job."""

    machines: tuple[Machine, ...]
    capacity: np.ndarray  # M x M float, symmetric, read-only
    capacity_is_scalar: bool
    job: Job
    name: str | None = None

    def __post_init__(self) -> None:
        """A typed instance gets the file path's checks and messages (an asymmetric or
        wrongly-sized pair matrix, idle GPUs above a machine's GPUs, an unknown collective)."""
        check_typed(self._rebuilt, PROBLEM)

    def _rebuilt(self) -> "NimpInstance":
        """The instance through its file form (:func:`optkit.validation.check_typed`). A scalar P
        is written as pair (0, 1)'s number, so ``capacity_is_scalar`` must hold for every pair."""
        if self.capacity_is_scalar and self.M > 1:
            off = ~np.eye(self.M, dtype=bool)
            if not np.all(self.capacity[off] == self.capacity[0, 1]):
                raise InputError("pair_capacity_bytes", "differs between pairs while capacity_is_scalar is set "
                                                        f"(pair (0, 1): {float(self.capacity[0, 1])!r}, "
                                                        f"largest {float(self.capacity[off].max())!r}, "
                                                        f"smallest {float(self.capacity[off].min())!r})")
        return NimpInstance.from_dict(self.to_dict())

    @property
    def M(self) -> int:
        return len(self.machines)

    @property
    def N(self) -> int:
        return self.job.workers

    def phases(self) -> list[Phase]:
        return phases(self.job)

    @property
    def scalar_capacity(self) -> float | None:
        """The one pair capacity when ``capacity_is_scalar`` (bytes per phase), else ``None``.

        Read off a pair, entry (0, 1) (a one-machine instance has no pair: its entry (0, 0)),
        never off the diagonal, which P ignores (a machine's traffic with itself does not cross
        the network): an instance built in Python may hold anything there, and every algorithm
        and ``to_dict`` must see the same number the file states."""
        if not self.capacity_is_scalar:
            return None
        return float(self.capacity[0, 1]) if self.M > 1 else float(self.capacity[0, 0])

    def max_cross_bytes(self) -> float:
        """X: cross bytes when every pair of every phase is split."""
        return float(sum(len(ph.pairs) * ph.volume for ph in self.phases()))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "NimpInstance":
        d = instance_object(d, PROBLEM, ("machines", "pair_capacity_bytes", "job"))
        known_keys(d, _TOP_FIELDS)
        ms = d["machines"]
        if not isinstance(ms, list) or not ms:
            raise InputError("machines", "must be a non-empty list of {gpus, idle_gpus}")
        if len(ms) > MAX_MACHINES:
            raise InputError("machines", f"lists {len(ms)} machines; at most {MAX_MACHINES} are supported "
                                         "(pair_capacity_bytes is a dense M x M matrix)")
        machines = [_machine(md, f"machines[{s}]") for s, md in enumerate(ms)]
        M = len(machines)
        cap, scalar = _capacity(d["pair_capacity_bytes"], M)
        job = _job(d["job"], "job")
        name = d.get("name")
        if name is not None and not isinstance(name, str):
            raise InputError("name", f"must be a string, got {type(name).__name__}")
        with trusted():
            return cls(tuple(machines), cap, scalar, job, name)

    def to_dict(self) -> dict[str, Any]:
        cap: Any = self.scalar_capacity if self.capacity_is_scalar else self.capacity.tolist()
        d: dict[str, Any] = {"problem": PROBLEM}
        if self.name:
            d["name"] = self.name
        d.update({"machines": [{"gpus": m.gpus, "idle_gpus": m.idle_gpus} for m in self.machines],
                  "pair_capacity_bytes": cap, "job": self.job.to_dict()})
        return d


def _capacity(v: Any, M: int) -> tuple[np.ndarray, bool]:
    """P as an M x M array: a scalar for every pair, or a symmetric matrix (diagonal ignored)."""
    f = "pair_capacity_bytes"
    if isinstance(v, list):
        if len(v) != M or any(not isinstance(row, list) or len(row) != M for row in v):
            shape = f"{len(v)} rows of lengths {[len(r) if isinstance(r, list) else None for r in v][:8]}"
            raise InputError(f, f"must be a number or an {M} x {M} matrix (one row and column per machine), got {shape}")
        arr = np.empty((M, M))
        for s, row in enumerate(v):
            for u, x in enumerate(row):
                if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x < 0:
                    raise InputError(f"{f}[{s}][{u}]", f"must be a finite number >= 0 (bytes per phase), got {x!r}")
                arr[s, u] = float(x)
        if not np.array_equal(arr, arr.T):
            s, u = (int(i) for i in np.argwhere(arr != arr.T)[0])
            raise InputError(f, f"must be symmetric (the capacity of the unordered pair {{s, s'}}), but "
                                f"[{s}][{u}] = {arr[s, u]:g} and [{u}][{s}] = {arr[u, s]:g}")
        arr.flags.writeable = False
        return arr, False
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InputError(f, f"must be a number or an {M} x {M} matrix, got {type(v).__name__}")
    x = float(v)
    if not math.isfinite(x) or x < 0:
        raise InputError(f, f"must be a finite number >= 0 (bytes per phase), got {v!r}")
    arr = np.full((M, M), x)
    arr.flags.writeable = False
    return arr, True


def criteria(instance: NimpInstance, machine_of_worker: Sequence[int]) -> tuple[int, int, float]:
    """(idle machines used, machines used, cross bytes per synchronisation) of a placement
    (no feasibility check)."""
    used = sorted(set(int(s) for s in machine_of_worker))
    idle = sum(1 for s in used if instance.machines[s].idle)
    m = np.asarray(machine_of_worker, dtype=np.int64)
    cross = 0.0
    for ph in instance.phases():
        if ph.pairs:
            pr = np.asarray(ph.pairs, dtype=np.int64)
            cross += ph.volume * int(np.count_nonzero(m[pr[:, 0]] != m[pr[:, 1]]))
    return idle, len(used), cross


def key_of(instance: NimpInstance, objective: str, values: Sequence[float]) -> float:
    """The scalar key of a lexicographic value (module docstring)."""
    base = values[0] * (instance.M + 1) + values[1]
    if objective == "lex":
        return float(base)
    return float(base * (instance.max_cross_bytes() + 1.0) + values[2])


def bandwidth_violations(instance: NimpInstance, m: np.ndarray, *, limit: int = 5) -> list[str]:
    """Every (phase, machine pair) whose split bytes exceed P (the first ``limit`` named)."""
    out: list[str] = []
    M = instance.M
    seen: set[tuple[tuple[tuple[int, int], ...], float]] = set()
    for t, ph in enumerate(instance.phases()):
        if not ph.pairs or (ph.pairs, ph.volume) in seen:
            continue
        seen.add((ph.pairs, ph.volume))
        pr = np.asarray(ph.pairs, dtype=np.int64)
        ma, mb = m[pr[:, 0]], m[pr[:, 1]]
        split = ma != mb
        if not split.any():
            continue
        lo, hi = np.minimum(ma[split], mb[split]), np.maximum(ma[split], mb[split])
        keys, counts = np.unique(lo * M + hi, return_counts=True)
        for k, c in zip(keys.tolist(), counts.tolist()):
            s, u = divmod(k, M)
            bytes_ = c * ph.volume
            if bytes_ > instance.capacity[s, u] * (1.0 + REL_TOL):
                if len(out) < limit:
                    out.append(f"phase {t}: {c} pairs x {ph.volume:g} B = {bytes_:g} B between machines {s} and {u} "
                               f"exceed P = {instance.capacity[s, u]:g} B")
                else:
                    return out
    return out


def evaluate(instance: NimpInstance, solution: Mapping[str, Any]) -> Evaluation:
    """Feasibility (placement, resource and bandwidth constraints of Eq. 1) and the criteria."""
    if not isinstance(solution, Mapping) or "machine_of_worker" not in solution:
        return Evaluation(False, violations=["solution must be an object with 'machine_of_worker'"])
    mow = solution["machine_of_worker"]
    N, M = instance.N, instance.M
    if not isinstance(mow, list) or len(mow) != N:
        return Evaluation(False, violations=[f"machine_of_worker must list one machine per worker ({N})"])
    bad = [n for n, s in enumerate(mow)
           if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= s < M]
    if bad:
        return Evaluation(False, violations=[f"machine_of_worker[{bad[0]}] must be a machine index in 0..{M - 1}, "
                                             f"got {mow[bad[0]]!r}"])
    m = np.asarray(mow, dtype=np.int64)
    violations = []
    load = np.bincount(m, minlength=M)
    for s in np.flatnonzero(load > np.array([mc.idle_gpus for mc in instance.machines])).tolist():
        violations.append(f"machine {s} hosts {int(load[s])} workers but has R_s = {instance.machines[s].idle_gpus} idle GPUs")
    violations += bandwidth_violations(instance, m)
    if violations:
        return Evaluation(False, violations=violations)
    idle, used, cross = criteria(instance, mow)
    objectives = {"lex": [idle, used], "lex-cross": [idle, used, cross]}
    metrics = {
        "idle_machines_used": idle,
        "machines_used": used,
        "cross_bytes": cross,
        "non_idle_machines_used": used - idle,
        "objective_key.lex": key_of(instance, "lex", objectives["lex"]),
        "objective_key.lex-cross": key_of(instance, "lex-cross", objectives["lex-cross"]),
    }
    return Evaluation(True, objectives=objectives, metrics=metrics)


def solution_dict(machine_of_worker: Sequence[int]) -> dict[str, Any]:
    return {"machine_of_worker": [int(s) for s in machine_of_worker]}
