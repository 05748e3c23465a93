"""The engine's solver adapters: CP-SAT and Pyomo/HiGHS, status mapping, model files, errors."""

from __future__ import annotations

import importlib.metadata

import numpy as np
import pytest

from optkit.errors import InputError
from optkit.result import Status
from optkit.solvers import SolverOutcome
from optkit.solvers.cpsat import default_workers, solve_cp_model
from optkit.solvers.milp import solve_pyomo_model, solver_available


def _tiny_cp():
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    x = m.NewIntVar(0, 10, "x")
    y = m.NewIntVar(0, 10, "y")
    m.Add(x + 2 * y >= 7)
    m.Minimize(3 * x + 4 * y)  # optimum: y = 3, x = 1 -> 15; y = 4, x = 0 -> 16; so 15
    return m, x, y


def _tiny_pyomo():
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 10))
    m.y = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 10))
    m.c = pyo.Constraint(expr=m.x + 2 * m.y >= 7)
    m.obj = pyo.Objective(expr=3 * m.x + 4 * m.y + 0.5, sense=pyo.minimize)
    return m


def _hard_cp(n: int = 400, rows: int = 300):
    """A random weighted set cover: far from solvable in a millisecond."""
    from ortools.sat.python import cp_model

    rng = np.random.default_rng(0)
    m = cp_model.CpModel()
    xs = [m.NewBoolVar(f"x{i}") for i in range(n)]
    for _ in range(rows):
        m.AddBoolOr([xs[int(i)] for i in rng.choice(n, 6, replace=False)])
    m.Minimize(sum(int(c) * v for c, v in zip(rng.integers(1, 100, n), xs)))
    return m


def _hard_knapsack(n: int = 120, k: int = 8):
    """A random multi-dimensional knapsack (minimisation form)."""
    import pyomo.environ as pyo

    rng = np.random.default_rng(0)
    md = pyo.ConcreteModel()
    md.x = pyo.Var(range(n), domain=pyo.Binary)
    w = rng.integers(10, 100, (k, n))
    md.c = pyo.ConstraintList()
    for j in range(k):
        md.c.add(sum(int(w[j, i]) * md.x[i] for i in range(n)) <= int(w[j].sum() // 2))
    p = rng.integers(10, 100, n)
    md.obj = pyo.Objective(expr=-sum(int(p[i]) * md.x[i] for i in range(n)))
    return md


def test_ortools_and_highspy_in_one_process() -> None:
    """The highspy<1.15 pin: highspy 1.15 + ortools 9.15 cannot share a process
    (google/or-tools#5246). Import both, then solve one tiny model with each."""
    import highspy
    import ortools.sat.python.cp_model  # noqa: F401

    version = tuple(int(p) for p in importlib.metadata.version("highspy").split(".")[:2])
    assert version < (1, 15)

    m, x, y = _tiny_cp()
    out = solve_cp_model(m, workers=1, seed=3)
    assert out.status == Status.OPTIMAL and out.solver_status == "OPTIMAL"
    assert out.objective == 15.0 and out.bound == 15.0
    assert (out.raw.Value(x), out.raw.Value(y)) == (1, 3)

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    inf = highspy.kHighsInf
    h.addVars(2, np.array([0.0, 0.0]), np.array([10.0, 10.0]))
    h.changeColsIntegrality(2, np.array([0, 1], dtype=np.int32),
                            np.array([highspy.HighsVarType.kInteger] * 2))
    h.changeColsCost(2, np.array([0, 1], dtype=np.int32), np.array([3.0, 4.0]))
    h.addRow(7.0, inf, 2, np.array([0, 1], dtype=np.int32), np.array([1.0, 2.0]))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert h.getInfo().objective_function_value == pytest.approx(15.0)

    pm = _tiny_pyomo()
    out2 = solve_pyomo_model(pm, seed=3)
    assert isinstance(out2, SolverOutcome)
    assert out2.status == Status.OPTIMAL and out2.solver_status == "optimal"
    assert out2.objective == pytest.approx(15.5) and out2.bound == pytest.approx(15.5)  # constant included
    assert (round(pm.x.value), round(pm.y.value)) == (1, 3)


def test_cpsat_default_workers() -> None:
    import os

    assert default_workers() == max(1, min(os.cpu_count() or 1, 8))


def test_cpsat_infeasible() -> None:
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    x = m.NewIntVar(0, 3, "x")
    m.Add(x >= 5)
    m.Minimize(x)
    out = solve_cp_model(m, workers=1)
    assert out.status == Status.INFEASIBLE
    assert out.solver_status == "INFEASIBLE" and out.objective is None and not out.has_solution


def test_cpsat_model_invalid_is_error() -> None:
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    x = m.NewIntVar(0, 2**60, "x")
    y = m.NewIntVar(0, 2**60, "y")
    m.Add(8 * x + 8 * y <= 5)  # the linear expression can overflow int64: MODEL_INVALID
    m.Minimize(x)
    out = solve_cp_model(m, workers=1)
    assert out.status == Status.ERROR and out.solver_status == "MODEL_INVALID"


def test_cpsat_time_limit_is_passed_as_max_time_in_seconds() -> None:
    """``time_limit`` reaches CP-SAT as ``max_time_in_seconds`` (read back from the solver's
    parameters, not from a clock); a model solved within it is ``optimal``."""
    m, _, _ = _tiny_cp()
    out = solve_cp_model(m, time_limit=2.5, workers=1, seed=0)
    assert out.raw.parameters.max_time_in_seconds == 2.5
    assert out.status == Status.OPTIMAL and out.objective == 15.0


@pytest.mark.parametrize("limit,solver_statuses", [("max_deterministic_time", ("UNKNOWN", "FEASIBLE")),
                                                   ("stop_after_first_solution", ("FEASIBLE",))])
def test_cpsat_cut_short_is_time_limit(monkeypatch: pytest.MonkeyPatch, limit: str,
                                       solver_statuses: tuple[str, ...]) -> None:
    """A search stopped before its proof (here by a deterministic work limit, the same on every
    machine) is ``time_limit``; an incumbent comes with CP-SAT's bound below it."""
    from optkit.solvers import cpsat

    monkeypatch.setitem(cpsat.WORK_LIMITS, limit, 1e-9 if limit == "max_deterministic_time" else True)
    out = solve_cp_model(_hard_cp(), workers=1, seed=0)
    assert out.status == Status.TIME_LIMIT and out.solver_status in solver_statuses
    if out.has_solution:
        assert out.bound is not None and out.bound < out.objective


def test_cpsat_hint_is_used() -> None:
    m, x, y = _tiny_cp()
    out = solve_cp_model(m, workers=1, hint={x: 1, y: 3})
    assert out.status == Status.OPTIMAL and out.objective == 15.0


def test_cpsat_rejects_bad_time_limit() -> None:
    m, _, _ = _tiny_cp()
    with pytest.raises(InputError) as exc:
        solve_cp_model(m, time_limit=0)
    assert exc.value.field == "time_limit"


def test_pyomo_infeasible() -> None:
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.y = pyo.Var(domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x + m.y >= 3)
    m.obj = pyo.Objective(expr=m.x + m.y)
    out = solve_pyomo_model(m)
    assert out.status == Status.INFEASIBLE
    assert out.solver_status == "infeasible" and out.objective is None and out.bound is None


def test_pyomo_time_limit_is_passed_to_the_solver(monkeypatch: pytest.MonkeyPatch) -> None:
    """``time_limit`` reaches the Pyomo solver as ``timelimit`` (recorded by a spy on the
    solver's ``solve``, not measured); a model solved within it is ``optimal``."""
    from optkit.solvers import milp

    seen: dict = {}
    real_factory = milp._factory

    class Spy:
        def __init__(self, opt) -> None:
            self.opt = opt

        def available(self, **kw):
            return self.opt.available(**kw)

        def solve(self, model, **kw):
            seen.update(kw)
            return self.opt.solve(model, **kw)

        def __getattr__(self, name):  # set_instance and the highspy object of the anytime callbacks
            return getattr(self.opt, name)

    real_factory_instance: list = []
    monkeypatch.setattr(milp, "_factory", lambda name: Spy(real_factory_instance.append(real_factory(name))
                                                           or real_factory_instance[-1]))
    out = solve_pyomo_model(_tiny_pyomo(), time_limit=2.5, seed=0)
    # with the anytime callbacks subscribed, the limit and seed still reach the solve, and HiGHS
    # holds them (Pyomo sets them on the very highspy object the callbacks are subscribed to)
    assert seen["timelimit"] == 2.5 and seen["options"]["random_seed"] == 0
    highs = real_factory_instance[0]._solver_model
    assert highs.getOptionValue("time_limit")[1] == 2.5 and highs.getOptionValue("random_seed")[1] == 0
    assert highs.cbMipImprovingSolution.callbacks and highs.cbMipLogging.callbacks
    assert out.status == Status.OPTIMAL and out.objective == pytest.approx(15.5)


@pytest.mark.parametrize("option", ["mip_max_nodes", "mip_max_improving_sols"])
def test_pyomo_cut_short_is_time_limit(monkeypatch: pytest.MonkeyPatch, option: str) -> None:
    """A solve stopped before its proof (here by a HiGHS work limit, the same on every machine:
    no branching, or the first incumbent) is ``time_limit``; an incumbent comes with a bound
    below it (an open gap: the limit, not optimality, stopped it)."""
    from optkit.solvers import milp

    monkeypatch.setitem(milp.WORK_LIMITS, option, 0 if option == "mip_max_nodes" else 1)
    out = solve_pyomo_model(_hard_knapsack(160, 10), seed=0)
    assert out.status == Status.TIME_LIMIT and out.solver_status == "maxIterations"
    if option == "mip_max_improving_sols":
        assert out.has_solution and out.objective is not None
    if out.has_solution:
        assert out.bound is not None and out.bound < out.objective


@pytest.mark.parametrize("ext,needles", [("mps", ("ROWS", "COLUMNS", "BOUNDS")),
                                         ("lp", ("min", "s.t.", "general", "end"))])
def test_pyomo_writes_model_file(tmp_path, ext: str, needles: tuple[str, ...]) -> None:
    path = tmp_path / f"model.{ext}"
    out = solve_pyomo_model(_tiny_pyomo(), write=str(path))
    assert out.status == Status.OPTIMAL
    text = path.read_text()
    for needle in needles:
        assert needle in text
    assert "x" in text and "y" in text  # symbolic labels


def test_pyomo_write_needs_extension(tmp_path) -> None:
    with pytest.raises(InputError) as exc:
        solve_pyomo_model(_tiny_pyomo(), write=str(tmp_path / "model"))
    assert exc.value.field == "write"


def test_unknown_solver_is_input_error() -> None:
    with pytest.raises(InputError) as exc:
        solve_pyomo_model(_tiny_pyomo(), solver="no_such_solver_xyz")
    assert exc.value.field == "solver"
    assert "no_such_solver_xyz" in str(exc.value)
    assert not solver_available("no_such_solver_xyz")
    assert solver_available("highs")


def test_appsi_highs_by_name() -> None:
    out = solve_pyomo_model(_tiny_pyomo(), solver="appsi_highs")
    assert out.status == Status.OPTIMAL and out.objective == pytest.approx(15.5)
