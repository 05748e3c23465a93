"""Exact lexicographic optimum of nimp: CP-SAT, the same model as a MILP (Pyomo + HiGHS), and a
brute-force referee for tiny instances.

Model (both solvers)
====================
Usable machines U = {s : R_s > 0} (a full machine hosts nothing). Binaries ``x[n,s]`` (worker n
on machine s, Eq. 1's x_n^s) and ``y[s]`` (machine used):

* ``sum_s x[n,s] = 1`` (placement), ``sum_n x[n,s] <= R_s·y[s]`` (resource; also links y),
  ``y[s] <= sum_n x[n,s]`` (y exact).
* Bandwidth, one phase at a time. Every phase of both collectives has a single volume v_t per
  pair, so "bytes of the phase-t pairs split across {s, s'} <= P_{s,s'}" is the pair count
  ``split_t(s, s') <= L = floor(P_{s,s'} / v_t)`` (:func:`.model.pair_limit`, the same
  tolerance as ``evaluate``). Phases with the same pair set (HD's phase j and its mirror; all
  ring phases) give one constraint (the largest volume). For an ordered machine pair (s, s')
  and a pair (a, b): ``z[a,b,s,s'] >= x[a,s] + x[b,s'] - 1`` (z binary in CP-SAT as a clause,
  continuous in [0, 1] in the MILP; only upper bounds on split counts are needed, so z may
  over-count, never under-count), and ``sum_{(a,b)} z[a,b,s,s'] + z[a,b,s',s] <= L``. With
  ``L = 0`` the z are not needed: ``x[a,s] + x[b,s'] <= 1``. A constraint is omitted when it
  cannot bind: L >= min(#pairs, Delta_t·min(R_s, R_s')) (Delta_t = most pairs of a worker in
  phase t; each split pair has a worker on each machine).
* Cross bytes (only for ``lex-cross``): ``c[a,b] >= x[a,s] - x[b,s]`` for every s (c = 1 when
  split; minimised, so exact at an optimum), weighted by the pair's bytes per synchronisation in
  units of the smallest phase volume (an exact integer for HD, ``K/2^j = 2^(p-j)·K/N``, and ring).

Lexicographic objective: **weighted, one solve** (one proof of optimality). ``lex``:
``min (M+1)·idle + used``; since ``used <= M`` this orders solutions exactly as (idle, used).
``lex-cross``: ``min ((M+1)·idle + used)·(X_u+1) + cross_u`` with X_u the cross units when every
pair is split. The reported ``bound`` is in the units of the formulation's key
(``objective_key.<objective>``, :func:`.model.key_of`). Two-stage solving would need two proofs;
the weights are small integers, so one solve loses nothing.

Valid inequalities: ``sum_{s idle} y >= i_lb`` and ``sum_s y >= u_min`` from the resource
relaxation (:func:`.bounds.resource_relaxation`), and the objective >= its key.

Machine symmetry
================
Two usable machines with equal R_s and equal idleness (hence equal K_s where it matters: only
idleness reads K_s) are interchangeable if swapping them leaves P unchanged
(``P[s,u] = P[s',u]`` for every other u; always true for a scalar P). Classes are built greedily
in index order, a machine joining a class only if compatible with every member, so any
permutation inside a class maps P to itself. Some optimum then has, inside each class (index
order), columns non-increasing in the key ``load(s)·2^L + sum_{n<L} x[n,s]·2^(L-1-n)`` (sort the
columns of any optimum by it); both models require it for consecutive members, with
``y[s] >= y[s']``. L = min(N, 40) for CP-SAT, min(N, 10) for the MILP (numerics). Nothing else
is broken.

Infeasible instances give status ``infeasible``: the models are infeasible, or the resource
relaxation already is (fewer idle GPUs than workers).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optkit.anytime import add_solver_points
from optkit.deadline import bounded, check as check_deadline, checked, offer as offer_incumbent
from optkit.errors import InputError
from optkit.result import Result, Status

from .bounds import resource_relaxation
from .model import OBJECTIVES, NimpInstance, bandwidth_violations, criteria, key_of, pair_limit, solution_dict
from .titan import capacity_argument, titan

__all__ = ["run_cpsat", "run_highs", "run_brute_force", "brute_force", "symmetry_classes", "ModelData"]


def _check_objective(objective: str) -> None:
    if objective not in OBJECTIVES:
        raise InputError("objective", f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}")


def symmetry_classes(instance: NimpInstance) -> list[list[int]]:
    """Classes of interchangeable usable machines (module docstring), each in index order."""
    P = instance.capacity
    classes: list[list[int]] = []
    for s, m in enumerate(instance.machines):
        if not m.usable:
            continue
        for cl in classes:
            r = instance.machines[cl[0]]
            if (r.idle_gpus, r.idle) != (m.idle_gpus, m.idle):
                continue
            if instance.capacity_is_scalar or all(_swappable(P, s, t) for t in cl):
                cl.append(s)
                break
        else:
            classes.append([s])
    return classes


def _swappable(P: np.ndarray, s: int, t: int) -> bool:
    mask = np.ones(P.shape[0], dtype=bool)
    mask[[s, t]] = False
    return bool(np.array_equal(P[s, mask], P[t, mask]))


@dataclass
class ModelData:
    """What both models need, computed once."""

    U: list[int]
    phases: list[tuple[tuple[tuple[int, int], ...], float, int]]  # pairs, volume, max degree
    cross_w: dict[tuple[int, int], int]
    cross_units_max: int
    cross_unit_bytes: float
    cons: list[tuple[int, int, int, int]] = field(default_factory=list)  # (phase idx, s, s', limit)


def _data(instance: NimpInstance) -> ModelData:
    U = [s for s, m in enumerate(instance.machines) if m.usable]
    distinct: dict[tuple[tuple[int, int], ...], float] = {}
    total: dict[tuple[int, int], float] = {}
    for ph in instance.phases():
        if ph.pairs:
            distinct[ph.pairs] = max(distinct.get(ph.pairs, 0.0), ph.volume)
        for p in ph.pairs:
            total[p] = total.get(p, 0.0) + ph.volume
    phases = []
    for pairs, v in distinct.items():
        deg = np.bincount(np.asarray(pairs).ravel(), minlength=instance.N).max()
        phases.append((pairs, v, int(deg)))
    unit = min((ph.volume for ph in instance.phases()), default=1.0)
    if not unit > 0:  # K/N or K/2^j underflowed: the model's byte unit would be 0
        raise InputError("job.param_bytes", f"is too small for the exact models: {instance.job.param_bytes!r} B split "
                                            "into the collective's phases gives phase volumes of 0 B", problem="nimp")
    cross_w = {p: int(round(b / unit)) for p, b in total.items()}
    if any(abs(cross_w[p] * unit - b) > 1e-9 * b for p, b in total.items()):  # pragma: no cover
        raise InputError("job", "pair volumes are not integer multiples of the smallest phase volume")
    d = ModelData(U, phases, cross_w, sum(cross_w.values()), unit)
    R = {s: instance.machines[s].idle_gpus for s in U}
    for t, (pairs, v, deg) in enumerate(phases):
        for s, u in checked(itertools.combinations(U, 2), "computing the pair limits", every=4096):
            lim = pair_limit(float(instance.capacity[s, u]), v)
            if lim < min(len(pairs), deg * min(R[s], R[u])):
                d.cons.append((t, s, u, lim))
    return d


def _weights(instance: NimpInstance, objective: str, d: ModelData) -> tuple[int, int]:
    """(weight of an idle machine used, weight of a machine used) in model units."""
    wu = 1 if objective == "lex" else d.cross_units_max + 1
    return (instance.M + 1) * wu, wu


def _key_bound(instance: NimpInstance, objective: str, d: ModelData, model_bound: float | None) -> float | None:
    """A model-units lower bound as a lower bound on the formulation's key."""
    if model_bound is None:
        return None
    b = float(np.ceil(model_bound - 1e-6))
    if objective == "lex":
        return b
    # b = base·(X_u+1) + rest: a solution with a larger base has a larger key (rest·unit <= X);
    # one with the same base has >= rest cross units.
    base, rest = divmod(int(b), d.cross_units_max + 1)
    return float(base * (instance.max_cross_bytes() + 1.0) + rest * d.cross_unit_bytes)


def _hint(instance: NimpInstance) -> list[int] | None:
    m = titan([mc.gpus for mc in instance.machines], [mc.idle_gpus for mc in instance.machines],
              capacity_argument(instance), instance.phases(), workers=instance.N)
    if m is None or bandwidth_violations(instance, np.asarray(m)):
        return None
    return m


def _titan_meets_bound(instance: NimpInstance, t0: float) -> Result | None:
    """Titan's feasible placement as a proven optimum of ``lex`` when it reaches the resource
    relaxation's (i_lb, u_lb), else ``None``."""
    relax = resource_relaxation(instance)
    h = _hint(instance)
    if relax is None or h is None or tuple(criteria(instance, h)[:2]) != relax[:2]:
        return None
    return _finish(Status.OPTIMAL, h, key_of(instance, "lex", list(relax[:2])),
                   {"proof": "Titan's placement meets every constraint and the resource-relaxation bound",
                    "solve_s": time.perf_counter() - t0})


def _canonical(instance: NimpInstance, m: list[int], L: int) -> list[int]:
    """``m`` with the machines of each symmetry class relabelled so that their columns are in
    the order the symmetry breaking requires (a hint that satisfies it)."""
    N = instance.N
    out = list(m)
    for cl in symmetry_classes(instance):
        def key(s: int) -> tuple[int, int]:
            cols = [n for n in range(N) if m[n] == s]
            return len(cols), sum(1 << (L - 1 - n) for n in cols if n < L)
        order = sorted(cl, key=key, reverse=True)
        relabel = dict(zip(order, cl))
        out = [relabel.get(m[n], out[n]) if m[n] in relabel else out[n] for n in range(N)]
    return out


def _finish(status: Status, m: list[int] | None, bound: float | None, info: dict[str, Any],
            message: str = "") -> Result:
    sol = solution_dict(m) if m is not None else None
    return Result(status, solution=sol, bound=bound, message=message, info=info)


def _relaxation_infeasible(instance: NimpInstance) -> Result | None:
    if resource_relaxation(instance) is None:
        return Result(Status.INFEASIBLE, message="fewer idle GPUs than workers (resource constraint)",
                      info={"proof": "resource relaxation"})
    return None


# ============================================================================= CP-SAT
@bounded
def run_cpsat(instance: NimpInstance, *, objective: str = "lex", time_limit: float | None = None,
              seed: int | None = None, workers: int | None = None, symmetry: bool = True,
              hint: bool = True, log: bool = False, bound_shortcut: bool = True) -> Result:
    """Lexicographic optimum by CP-SAT (module docstring). ``symmetry=False`` drops the machine
    symmetry breaking, ``hint=False`` Titan's warm start (for cross-checks). ``bound_shortcut``
    (objective ``lex``): when Titan's placement meets every constraint and reaches the resource
    relaxation's bound (i_lb, u_lb), it is optimal (lower bound = value) and is returned without a
    model (``info["proof"]``); ``False`` always solves the model (the tests of the model do).

    References
    ----------
    Fang et al., "Non-Idle Machine-Aware Worker Placement for Efficient Distributed Training in
    GPU Clusters": Sec. III-B, Eq. (1): the idle machines used (O_1), then the machines used
    (O_2), under the placement, resource and bandwidth constraints, as the CP-SAT model of the
    module docstring; the optimum Theorems 4-5 compare Titan with.

    Notes
    -----
    Guarantee: status ``optimal`` is the proven lexicographic optimum, ``infeasible`` a proof
    that no placement meets the constraints; at the time limit, ``time_limit`` with a proven
    lower bound on the key.

    Units: the criteria are counts of machines (``lex-cross`` adds cross-machine bytes); pair
    capacities and traffic in bytes per phase; ``bound`` on the scalar key; ``time_limit`` in
    seconds.

    Examples
    --------
    >>> from optkit.formulations.nimp import NimpInstance, evaluate
    >>> from optkit.formulations.nimp.generate import SUITES
    >>> inst = NimpInstance.from_dict(next(iter(SUITES["tiny"].build()))[1])   # 2 workers, 3 machines of 2 GPUs
    >>> r = run_cpsat(inst, time_limit=30, seed=0)
    >>> r.status.value, r.solution, evaluate(inst, r.solution).objectives["lex"]
    ('optimal', {'machine_of_worker': [0, 1]}, [0, 2])
    """
    from ortools.sat.python import cp_model

    from optkit.solvers.cpsat import solve_cp_model

    _check_objective(objective)
    early = _relaxation_infeasible(instance)
    if early is not None:
        return early
    t0 = time.perf_counter()
    if bound_shortcut and objective == "lex":
        shortcut = _titan_meets_bound(instance, t0)
        if shortcut is not None:
            return shortcut
    d = _data(instance)
    N, U = instance.N, d.U
    R = {s: instance.machines[s].idle_gpus for s in U}
    stage = "building the CP-SAT model"
    mdl = cp_model.CpModel()
    x = {(n, s): mdl.NewBoolVar(f"x{n}_{s}") for n in checked(range(N), stage, every=1) for s in U}
    y = {s: mdl.NewBoolVar(f"y{s}") for s in U}
    for n in range(N):
        mdl.AddExactlyOne(x[n, s] for s in U)
    for s in U:
        check_deadline(stage)
        load = sum(x[n, s] for n in range(N))
        mdl.Add(load <= R[s] * y[s])
        mdl.Add(load >= y[s])
    z: dict[tuple[int, int, int, int], Any] = {}

    def zvar(a: int, b: int, s: int, u: int) -> Any:
        k = (a, b, s, u)
        if k not in z:
            v = mdl.NewBoolVar(f"z{a}_{b}_{s}_{u}")
            mdl.AddBoolOr([x[a, s].Not(), x[b, u].Not(), v])
            z[k] = v
        return z[k]

    for t, s, u, lim in d.cons:
        check_deadline(stage)
        pairs = d.phases[t][0]
        if lim == 0:
            for a, b in pairs:
                mdl.AddBoolOr([x[a, s].Not(), x[b, u].Not()])
                mdl.AddBoolOr([x[b, s].Not(), x[a, u].Not()])
        else:
            mdl.Add(sum(zvar(a, b, s, u) + zvar(b, a, s, u) for a, b in pairs) <= lim)
    wi, wu = _weights(instance, objective, d)
    idle_set = [s for s in U if instance.machines[s].idle]
    obj = wi * sum(y[s] for s in idle_set) + wu * sum(y[s] for s in U)
    if objective == "lex-cross":
        c = {}
        for (a, b), w in d.cross_w.items():
            c[a, b] = mdl.NewBoolVar(f"c{a}_{b}")
            for s in U:
                mdl.AddImplication(x[a, s], c[a, b]).OnlyEnforceIf(x[b, s].Not())
        obj = obj + sum(w * c[p] for p, w in d.cross_w.items())
    relax = resource_relaxation(instance)
    assert relax is not None
    i_lb, u_lb, u_min = relax
    mdl.Add(sum(y[s] for s in idle_set) >= i_lb)
    mdl.Add(sum(y[s] for s in U) >= u_min)
    mdl.Add(obj >= wi * i_lb + wu * u_lb)
    mdl.Minimize(obj)
    n_pairs = 0
    if symmetry:
        # Any L >= 1 gives a valid symmetry break (a column key that orders equal machines), so
        # mutants changing 40 are equivalent; 40 keeps the key inside CP-SAT's 64-bit integers.
        L = min(N, 40)
        for cl in symmetry_classes(instance):
            for s, u in zip(cl, cl[1:]):
                check_deadline(stage)
                ks = sum(x[n, s] for n in range(N)) * (1 << L) + sum(x[n, s] * (1 << (L - 1 - n)) for n in range(L))
                ku = sum(x[n, u] for n in range(N)) * (1 << L) + sum(x[n, u] * (1 << (L - 1 - n)) for n in range(L))
                mdl.Add(ks >= ku)
                mdl.AddImplication(y[u], y[s])
                n_pairs += 1
    # The hint only warm-starts CP-SAT: a wrong or missing hint changes the time to the optimum,
    # never the optimum, so mutants of this block survive every test (equivalent in results).
    hint_vals: dict[Any, int] | None = None
    h = _hint(instance) if hint else None
    if h is not None:
        offer_incumbent(lambda message: _finish(Status.TIME_LIMIT, list(h), None, {"incumbent": "titan"}, message))
        if symmetry:
            h = _canonical(instance, h, min(N, 40))
        hint_vals = {x[n, s]: int(h[n] == s) for n in range(N) for s in U}
        hint_vals.update({y[s]: int(s in h) for s in U})
    info: dict[str, Any] = {"usable_machines": len(U), "bandwidth_constraints": len(d.cons), "z_vars": len(z),
                            "symmetric_pairs": n_pairs, "build_s": time.perf_counter() - t0,
                            "weights": [wi, wu]}
    out = solve_cp_model(mdl, time_limit=time_limit, workers=workers, seed=seed, hint=hint_vals, log=log)
    add_solver_points(out.trajectory, lambda v: _key_bound(instance, objective, d, v))  # model units -> key
    info["solver_status"] = out.solver_status
    info["solve_s"] = out.wall_time_s
    info["model_objective"] = out.objective
    if out.status is Status.INFEASIBLE:
        return _finish(Status.INFEASIBLE, None, None, info,
                       "no placement satisfies the resource and bandwidth constraints (CP-SAT: infeasible)")
    m = None
    if out.has_solution:
        solver = out.raw
        m = [next(s for s in U if solver.Value(x[n, s])) for n in range(N)]
    return _finish(out.status, m, _key_bound(instance, objective, d, out.bound), info,
                   out.solver_status)


# ============================================================================= MILP
@bounded
def run_highs(instance: NimpInstance, *, objective: str = "lex", time_limit: float | None = None,
              seed: int | None = None, solver: str = "highs", symmetry: bool = True) -> Result:
    """Lexicographic optimum by the MILP (module docstring) with Pyomo + HiGHS (or ``solver``).

    References
    ----------
    Fang et al., "Non-Idle Machine-Aware Worker Placement for Efficient Distributed Training in
    GPU Clusters": Eq. (1) of Sec. III-B as one weighted MILP (module docstring) whose scalar
    key orders placements as the lexicographic objective does.

    Notes
    -----
    Guarantee: status ``optimal`` is the proven lexicographic optimum (one weighted solve whose
    weights make the scalar key order placements as the list does), ``infeasible`` a proof; at the
    time limit, ``time_limit`` with the solver's proven lower bound on the key.

    Units: ``bound`` on the scalar key of machine counts (``objective_key.<objective>``);
    capacities in bytes per phase; ``time_limit`` in seconds.

    Examples
    --------
    >>> from optkit.formulations.nimp import NimpInstance, evaluate
    >>> from optkit.formulations.nimp.generate import SUITES
    >>> inst = NimpInstance.from_dict(next(iter(SUITES["tiny"].build()))[1])   # 2 workers, 3 machines of 2 GPUs
    >>> r = run_highs(inst, time_limit=30)
    >>> r.status.value, evaluate(inst, r.solution).objectives["lex"]
    ('optimal', [0, 2])
    """
    import pyomo.environ as pyo

    from optkit.solvers.milp import solve_pyomo_model

    _check_objective(objective)
    early = _relaxation_infeasible(instance)
    if early is not None:
        return early
    t0 = time.perf_counter()
    d = _data(instance)
    N, U = instance.N, d.U
    R = {s: instance.machines[s].idle_gpus for s in U}
    stage = "building the MILP"
    mdl = pyo.ConcreteModel()
    mdl.x = pyo.Var([(n, s) for n in checked(range(N), stage, every=1) for s in U], domain=pyo.Binary)
    mdl.y = pyo.Var(U, domain=pyo.Binary)
    mdl.cons = pyo.ConstraintList()
    x, y = mdl.x, mdl.y
    for n in range(N):
        check_deadline(stage)
        mdl.cons.add(sum(x[n, s] for s in U) == 1)
    for s in U:
        check_deadline(stage)
        load = sum(x[n, s] for n in range(N))
        mdl.cons.add(load <= R[s] * y[s])
        mdl.cons.add(load >= y[s])
    zkeys: set[tuple[int, int, int, int]] = set()
    for t, s, u, lim in d.cons:
        check_deadline(stage)
        if lim > 0:
            for a, b in d.phases[t][0]:
                zkeys.add((a, b, s, u))
                zkeys.add((b, a, s, u))
    zlist = sorted(zkeys)
    mdl.Z = pyo.Set(dimen=4, ordered=True)
    for at in range(0, len(zlist), 4096):  # the index in chunks, between checks of the deadline
        check_deadline(stage)
        mdl.Z.update(zlist[at:at + 4096])
    mdl.z = pyo.Var(mdl.Z, bounds=(0, 1), dense=False)  # each variable made at its first use
    for a, b, s, u in checked(zlist, stage):
        mdl.cons.add(mdl.z[a, b, s, u] >= x[a, s] + x[b, u] - 1)
    for t, s, u, lim in d.cons:
        check_deadline(stage)
        pairs = d.phases[t][0]
        if lim == 0:
            for a, b in pairs:
                mdl.cons.add(x[a, s] + x[b, u] <= 1)
                mdl.cons.add(x[b, s] + x[a, u] <= 1)
        else:
            mdl.cons.add(sum(mdl.z[a, b, s, u] + mdl.z[b, a, s, u] for a, b in pairs) <= lim)
    wi, wu = _weights(instance, objective, d)
    idle_set = [s for s in U if instance.machines[s].idle]
    expr = wi * sum(y[s] for s in idle_set) + wu * sum(y[s] for s in U)
    if objective == "lex-cross":
        mdl.c = pyo.Var(sorted(d.cross_w), bounds=(0, 1))
        for (a, b) in d.cross_w:
            for s in U:
                mdl.cons.add(mdl.c[a, b] >= x[a, s] - x[b, s])
        expr = expr + sum(w * mdl.c[p] for p, w in d.cross_w.items())
    relax = resource_relaxation(instance)
    assert relax is not None
    i_lb, u_lb, u_min = relax
    if idle_set:
        mdl.cons.add(sum(y[s] for s in idle_set) >= i_lb)
    mdl.cons.add(sum(y[s] for s in U) >= u_min)
    mdl.cons.add(expr >= wi * i_lb + wu * u_lb)
    mdl.obj = pyo.Objective(expr=expr, sense=pyo.minimize)
    n_pairs = 0
    if symmetry:
        L = min(N, 10)
        for cl in symmetry_classes(instance):
            for s, u in zip(cl, cl[1:]):
                check_deadline(stage)
                ks = sum(x[n, s] for n in range(N)) * (1 << L) + sum(x[n, s] * (1 << (L - 1 - n)) for n in range(L))
                ku = sum(x[n, u] for n in range(N)) * (1 << L) + sum(x[n, u] * (1 << (L - 1 - n)) for n in range(L))
                mdl.cons.add(ks >= ku)
                mdl.cons.add(y[s] >= y[u])
                n_pairs += 1
    info: dict[str, Any] = {"usable_machines": len(U), "bandwidth_constraints": len(d.cons), "z_vars": len(zkeys),
                            "symmetric_pairs": n_pairs, "build_s": time.perf_counter() - t0, "weights": [wi, wu]}
    out = solve_pyomo_model(mdl, solver=solver, time_limit=time_limit, seed=seed)
    add_solver_points(out.trajectory, lambda v: _key_bound(instance, objective, d, v))  # model units -> key
    info["solver_status"] = out.solver_status
    info["solve_s"] = out.wall_time_s
    info["model_objective"] = out.objective
    if out.status is Status.INFEASIBLE:
        return _finish(Status.INFEASIBLE, None, None, info,
                       f"no placement satisfies the resource and bandwidth constraints ({solver}: infeasible)")
    m = None
    if out.has_solution:
        m = [max(U, key=lambda s: pyo.value(x[n, s])) for n in range(N)]
    bound = out.bound
    if out.status is Status.OPTIMAL and out.objective is not None:
        bound = out.objective  # proven to the solver's (tight) gap; the engine re-derives it from evaluate
    return _finish(out.status, m, _key_bound(instance, objective, d, bound), info,
                   out.solver_status)


# ============================================================================= brute force
def brute_force(instance: NimpInstance, *, objective: str = "lex") -> tuple[list[int], tuple[float, ...]] | None:
    """Every placement, depth first over the workers, pruned only by constraints already
    violated (resource, bandwidth: both only grow as workers are added) and, for ``lex``, by
    (idle, used) already worse than the incumbent; with a scalar P, machines of equal (R_s,
    idleness) that are still empty are tried once (they are interchangeable). Returns the
    lexicographically best (placement, criteria) or ``None``. Independent of the models (it
    uses :func:`.model.pair_limit` only). For tiny instances (<= 8 workers, <= 6 machines).

    References
    ----------
    Fang et al., "Non-Idle Machine-Aware Worker Placement for Efficient Distributed Training in
    GPU Clusters": the lexicographic optimum of Eq. (1) (Sec. III-B) by enumerating placements
    worker by worker.

    Notes
    -----
    Guarantee: the lexicographic optimum, or ``None`` exactly when no placement is feasible
    (complete enumeration).

    Units: the placement is a machine index per worker; the criteria are counts of machines.

    Examples
    --------
    >>> from optkit.formulations.nimp import NimpInstance, evaluate
    >>> from optkit.formulations.nimp.generate import SUITES
    >>> inst = NimpInstance.from_dict(next(iter(SUITES["tiny"].build()))[1])   # 2 workers, 3 machines of 2 GPUs
    >>> brute_force(inst)
    ([0, 1], (0, 2))
    """
    _check_objective(objective)
    N = instance.N
    U = [s for s, m in enumerate(instance.machines) if m.usable]
    R = {s: instance.machines[s].idle_gpus for s in U}
    idle = {s: instance.machines[s].idle for s in U}
    distinct: dict[tuple[tuple[int, int], ...], float] = {}
    for ph in instance.phases():
        if ph.pairs:
            distinct[ph.pairs] = max(distinct.get(ph.pairs, 0.0), ph.volume)
    # partners[n] = [(phase index, partner < n)]
    partners: list[list[tuple[int, int]]] = [[] for _ in range(N)]
    vols = list(distinct.values())
    for t, pairs in enumerate(distinct):
        for a, b in pairs:
            partners[b].append((t, a))
    counts: dict[tuple[int, int, int], int] = {}
    limits: dict[tuple[int, int, int], int] = {}   # pair_limit per (t, s, s'), read once
    load = {s: 0 for s in U}
    m = [-1] * N
    best: list[Any] = [None, None]
    third = objective == "lex-cross"

    calls = [0]

    def rec(n: int, n_idle: int, n_used: int) -> None:
        calls[0] += 1
        if calls[0] % 64 == 0:
            check_deadline("enumerating placements")
        if best[1] is not None and not third and (n_idle, n_used) > best[1]:
            return
        if best[1] is not None and third and (n_idle, n_used) > best[1][:2]:
            return
        if n == N:
            val = criteria(instance, m)
            v = val[:2] if not third else val
            if best[1] is None or v < best[1]:
                best[0], best[1] = list(m), v
                offer_incumbent(lambda message, found=list(m): _finish(Status.TIME_LIMIT, found, None, {}, message))
            return
        tried_empty: set[tuple[int, bool]] = set()
        for s in U:
            if load[s] >= R[s]:
                continue
            if load[s] == 0 and instance.capacity_is_scalar:
                sig = (R[s], idle[s])
                if sig in tried_empty:
                    continue
                tried_empty.add(sig)
            ok = True
            bumped = []
            for t, a in partners[n]:
                sa = m[a]
                if sa == s:
                    continue
                k = (t, min(s, sa), max(s, sa))
                counts[k] = counts.get(k, 0) + 1
                bumped.append(k)
                lim = limits.get(k)
                if lim is None:
                    lim = limits[k] = pair_limit(float(instance.capacity[k[1], k[2]]), vols[t])
                if counts[k] > lim:
                    ok = False
                    break
            if ok:
                new = load[s] == 0
                load[s] += 1
                m[n] = s
                rec(n + 1, n_idle + (new and idle[s]), n_used + new)
                m[n] = -1
                load[s] -= 1
            for k in bumped:
                counts[k] -= 1

    rec(0, 0, 0)
    if best[0] is None:
        return None
    return best[0], tuple(best[1])


@bounded(teardown=0.0)  # an enumeration: nothing built to free
def run_brute_force(instance: NimpInstance, *, objective: str = "lex", time_limit: float | None = None,
                    seed: int | None = None) -> Result:
    """Algorithm-table entry ``brute-force`` (tiny instances only: <= 10 workers, <= 8 machines).

    References
    ----------
    Fang et al., "Non-Idle Machine-Aware Worker Placement for Efficient Distributed Training in
    GPU Clusters", Sec. III-B: :func:`brute_force` behind the algorithm table's entry
    ``brute-force``.

    Notes
    -----
    Guarantee: the lexicographic optimum (:func:`brute_force`), or ``infeasible`` as a proof.

    Units: machine counts (the criteria) and a machine index per worker; ``time_limit`` in
    seconds.

    Examples
    --------
    >>> from optkit.formulations.nimp import NimpInstance, evaluate
    >>> from optkit.formulations.nimp.generate import SUITES
    >>> inst = NimpInstance.from_dict(next(iter(SUITES["tiny"].build()))[1])   # 2 workers, 3 machines of 2 GPUs
    >>> r = run_brute_force(inst)
    >>> r.status.value, r.solution
    ('optimal', {'machine_of_worker': [0, 1]})
    """
    if instance.N > 10 or instance.M > 8:
        raise InputError("instance", f"brute-force handles <= 10 workers on <= 8 machines, got {instance.N} on {instance.M}")
    out = brute_force(instance, objective=objective)
    if out is None:
        return Result(Status.INFEASIBLE, message="no placement satisfies the constraints (exhaustive search)")
    m, val = out
    return Result(Status.OPTIMAL, solution=solution_dict(m), bound=key_of(instance, objective, val))
