"""A Pyomo model handed to HiGHS through ``highspy`` directly: the route of
:func:`optkit.solvers.milp.solve_pyomo_model` for ``solver="highs"``.

Why
---
Pyomo's ``highs`` interface (``pyomo.contrib.solver.solvers.highs.Highs``) is *persistent*: it
records, for every constraint, the variables, named expressions and mutable coefficients it
would need to update the HiGHS model after the Pyomo model changes, adds the new variables of
each constraint to HiGHS one call at a time, checks the whole model for changes again before
solving, and hands the solution back through a legacy results object and a symbol map. optkit
builds a model, solves it once and reads it, so all of that was two thirds of the cost of a
small MILP. :class:`DirectHighs` builds the same HiGHS model and nothing else.

The same model, call for call
-----------------------------
HiGHS' answer depends on the model it is given (the order of columns and rows, every bound and
coefficient), so :class:`DirectHighs` reproduces Pyomo 6.10's ``Highs`` interface exactly, with
the same Pyomo functions where the numbers come from:

* columns in the order Pyomo's interface adds them: the variables of each active constraint
  (``component_data_objects(Constraint, active=True, descend_into=True)`` order) as
  ``pyomo.contrib.solver.common.util.collect_vars_and_named_exprs`` lists them, first
  appearance wins, then those found only in the objective; bounds and integrality as
  ``Highs._process_domain_and_bounds`` (the domain's interval, tightened by the variable's own
  bounds; a fixed variable at its value); ``addVars`` then ``changeColsIntegrality``;
* rows as ``Highs._add_constraints``: ``generate_standard_repn(body, quadratic=False,
  compute_values=False)``, its coefficients by ``value`` in its order (a coefficient that is
  not constant and is 0 now is left out), bounds ``lower - constant`` and ``upper - constant``
  (``±kHighsInf`` without one), one ``addRows`` per call of :meth:`DirectHighs.add_constraints`;
* the objective as ``Highs._set_objective``: ``changeObjectiveSense``, ``changeColsCost`` over
  every column, ``changeObjectiveOffset`` (the objective's constant);
* the solve as ``Highs._solve``: ``time_limit`` (when given), then the options in the order
  given, ``HandleKeyboardInterrupt``, ``run``. The one difference: HiGHS' log (and the banner
  it writes at the model's first change) is not written to the console (``log_to_console`` off
  from the start) instead of being written there and captured by redirecting the process's
  file descriptors; the log callbacks still fire (``output_flag`` stays on), and logging does
  not steer the search.

Status, incumbent and bound follow Pyomo's mapping (``Highs._postsolve``, then the legacy
``TerminationCondition`` names that :mod:`optkit.solvers.milp` reads): an incumbent when HiGHS'
``primal_solution_status`` is feasible; the bound is HiGHS' ``mip_dual_bound`` (for an LP: the
objective at an optimum, else none). :meth:`DirectHighsResults.load` writes the solution into
the model's variables as Pyomo's ``load_from`` does (every column's variable but fixed ones).

Not covered (an :class:`optkit.errors.InputError` naming ``model``, where Pyomo's interface
raises its own error): a nonlinear constraint or objective, a quadratic objective, SOS
constraints. ``solver="appsi_highs"`` still reaches HiGHS through Pyomo.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from optkit.errors import InputError

__all__ = ["DirectHighs", "DirectHighsResults"]


def _highspy() -> Any:
    import highspy

    return highspy


@dataclass
class DirectHighsResults:
    """What a solve of :class:`DirectHighs` returns: ``termination_condition`` (the legacy Pyomo
    name, e.g. ``"optimal"``, ``"maxIterations"``), ``has_solution``, ``incumbent`` (the
    objective of the incumbent) and ``bound`` (HiGHS' proven bound), both in the objective's
    units with its constant, ``None`` when absent; ``variables`` (one per column) and
    ``col_value`` (the incumbent's value of each, empty without one)."""

    termination_condition: str
    has_solution: bool
    incumbent: float | None
    bound: float | None
    variables: list[Any] = field(repr=False)
    col_value: list[float] = field(repr=False)

    def load(self) -> None:
        """Write the incumbent into the model's variables (fixed ones keep their value)."""
        from pyomo.core.staleflag import StaleFlagManager

        StaleFlagManager.mark_all_as_stale()
        for v, val in zip(self.variables, self.col_value):
            if not v.fixed:
                v.set_value(val, skip_validation=True)


def _legacy_conditions() -> dict[Any, str]:
    """HiGHS model status -> the legacy Pyomo termination condition name, as Pyomo's ``Highs``
    interface maps it (``_postsolve``) and its legacy wrapper renames it."""
    from pyomo.contrib.solver.common.results import TerminationCondition as TC, legacy_termination_condition_map

    status = _highspy().HighsModelStatus
    new = {
        "kNotset": TC.unknown, "kLoadError": TC.error, "kModelError": TC.error, "kPresolveError": TC.error,
        "kSolveError": TC.error, "kPostsolveError": TC.error, "kModelEmpty": TC.unknown,
        "kOptimal": TC.convergenceCriteriaSatisfied, "kInfeasible": TC.provenInfeasible,
        "kUnboundedOrInfeasible": TC.infeasibleOrUnbounded, "kUnbounded": TC.unbounded,
        "kObjectiveBound": TC.objectiveLimit, "kObjectiveTarget": TC.objectiveLimit, "kTimeLimit": TC.maxTimeLimit,
        "kIterationLimit": TC.iterationLimit, "kSolutionLimit": TC.iterationLimit, "kUnknown": TC.unknown,
    }
    return {getattr(status, k): str(legacy_termination_condition_map[v]) for k, v in new.items() if hasattr(status, k)}


def _bounded(con: Any) -> tuple[Any, Any, Any]:
    """``(lower, body, upper)`` of a constraint as ``con.lower``, ``con.body`` and ``con.upper``
    give them, a bound ``None`` where ``con.has_lb()`` (``has_ub()``) is false (no bound, or an
    infinite one), from one ``to_bounded_expression`` call (each of the five properties makes
    its own, and builds ``lhs - rhs`` anew when both sides hold variables)."""
    from pyomo.core.expr.numvalue import as_numeric, native_numeric_types, native_types

    inf = float("inf")
    try:
        lower, body, upper = con.to_bounded_expression()
    except ValueError:  # a ranged constraint with a variable bound: the properties' own handling
        return (con.lower if con.has_lb() else None), con.body, (con.upper if con.has_ub() else None)
    if body.__class__ in native_types and body is not None:
        body = as_numeric(body)
    # a finite number is a bound; anything else as has_lb / has_ub judge it
    if lower is not None and not (lower.__class__ in native_numeric_types and -inf < lower < inf) and con.lb is None:
        lower = None
    if upper is not None and not (upper.__class__ in native_numeric_types and -inf < upper < inf) and con.ub is None:
        upper = None
    return lower, body, upper


class DirectHighs:
    """Pyomo model -> ``highspy.Highs`` -> solution (module docstring). The methods a caller of
    Pyomo's persistent ``highs`` interface uses: :meth:`available`, :meth:`set_instance`,
    :meth:`add_constraints`, :meth:`set_objective`, :meth:`solve`; ``_solver_model`` is the
    ``highspy.Highs`` object (as in Pyomo's interface, for callbacks)."""

    name = "highs"

    def __init__(self) -> None:
        self._solver_model: Any = None
        self._model: Any = None
        self._columns: dict[int, int] = {}
        self._variables: list[Any] = []
        self._objective: Any = None

    def available(self, exception_flag: bool = False) -> bool:
        """Whether ``highspy`` imports."""
        try:
            _highspy()
        except ImportError:
            return False
        return True

    def set_instance(self, model: Any) -> None:
        """A new HiGHS model of ``model``'s active constraints and objective."""
        import pyomo.environ as pyo
        from pyomo.core.base.sos import SOSConstraint

        self._solver_model = _highspy().Highs()
        self._solver_model.setOptionValue("log_to_console", False)  # HiGHS' banner at the first change too
        self._model = model
        self._columns, self._variables, self._objective = {}, [], None
        self.add_constraints(list(model.component_data_objects(pyo.Constraint, descend_into=True, active=True)))
        if next(iter(model.component_data_objects(SOSConstraint, descend_into=True, active=True)), None) is not None:
            raise InputError("model", "has SOS constraints, which HiGHS does not take")
        objective = None
        for obj in model.component_data_objects(pyo.Objective, descend_into=True, active=True, sort=True):
            if objective is not None:
                raise InputError("model", "has more than one active objective")
            objective = obj
        self.set_objective(objective)

    def _add_columns(self, variables: list[Any]) -> None:
        """Columns for the variables not yet in the model, in the order given, first appearance
        wins (Pyomo's ``_process_domain_and_bounds`` and ``_add_variables``; Pyomo adds them
        one constraint at a time, the same columns)."""
        import numpy as np
        from pyomo.core.expr.numvalue import value

        hs = _highspy()
        inf = hs.kHighsInf
        lbs, ubs, vtypes, indices = [], [], [], []
        for v in variables:
            if id(v) in self._columns:
                continue
            lb, ub, step = v.domain.get_interval()
            lb = -inf if lb is None else lb
            ub = inf if ub is None else ub
            if step == 0:
                vtype = hs.HighsVarType.kContinuous
            elif step == 1:
                vtype = hs.HighsVarType.kInteger
            else:
                raise InputError("model", f"variable {v.name} has a domain of step {step} (neither continuous nor integer)")
            if v.fixed:
                lb = ub = v.value
            else:
                if v._lb is not None:
                    lb = max(value(v._lb), lb)
                if v._ub is not None:
                    ub = min(value(v._ub), ub)
            self._columns[id(v)] = len(self._variables)
            indices.append(len(self._variables))
            self._variables.append(v)
            lbs.append(lb)
            ubs.append(ub)
            vtypes.append(vtype)
        if indices:
            h = self._solver_model
            h.addVars(len(lbs), np.array(lbs, dtype=np.double), np.array(ubs, dtype=np.double))
            h.changeColsIntegrality(len(vtypes), np.array(indices), np.array(vtypes))

    def add_constraints(self, cons: list[Any]) -> None:
        """Rows for ``cons`` (and columns for their new variables first), one ``addRows``."""
        import numpy as np
        from pyomo.contrib.solver.common.util import collect_vars_and_named_exprs
        from pyomo.core.expr.numvalue import is_constant, value
        from pyomo.repn import generate_standard_repn

        inf = _highspy().kHighsInf
        self._add_columns([v for con in cons for v in collect_vars_and_named_exprs(con.expr)[1]])
        lbs, ubs, starts, var_indices, coef_values = [], [], [], [], []
        columns = self._columns
        for con in cons:
            lower, body, upper = _bounded(con)
            repn = generate_standard_repn(body, quadratic=False, compute_values=False)
            if repn.nonlinear_expr is not None:
                raise InputError("model", f"constraint {con.name} is not linear (degree {repn.polynomial_degree()}); "
                                          "HiGHS takes linear constraints")
            starts.append(len(coef_values))
            for coef, v in zip(repn.linear_coefs, repn.linear_vars):
                coef_val = value(coef)
                if coef_val == 0 and not is_constant(coef):
                    continue
                var_indices.append(columns[id(v)])
                coef_values.append(coef_val)
            lbs.append(value(lower - repn.constant) if lower is not None else -inf)
            ubs.append(value(upper - repn.constant) if upper is not None else inf)
        self._solver_model.addRows(len(lbs), np.array(lbs, dtype=np.double), np.array(ubs, dtype=np.double),
                                   len(coef_values), np.array(starts), np.array(var_indices),
                                   np.array(coef_values, dtype=np.double))

    def set_objective(self, obj: Any) -> None:
        """The objective's sense, costs (0 for a column it does not hold) and constant; none:
        minimise 0."""
        import numpy as np
        from pyomo.contrib.solver.common.util import collect_vars_and_named_exprs
        from pyomo.core.base.objective import minimize
        from pyomo.core.expr.numvalue import value
        from pyomo.repn import generate_standard_repn

        hs = _highspy()
        self._objective = obj
        constant: Any = 0
        if obj is not None:
            self._add_columns(collect_vars_and_named_exprs(obj.expr)[1])
        n = len(self._variables)
        costs = np.zeros(n, dtype=np.double)
        sense = hs.ObjSense.kMinimize
        if obj is not None:
            sense = hs.ObjSense.kMinimize if obj.sense == minimize else hs.ObjSense.kMaximize
            repn = generate_standard_repn(obj.expr, quadratic=True, compute_values=False)
            if repn.nonlinear_expr is not None or repn.quadratic_vars:
                raise InputError("model", f"objective {obj.name} is not linear; this route takes a MILP "
                                          "(solver='appsi_highs' hands HiGHS a quadratic objective)")
            for coef, v in zip(repn.linear_coefs, repn.linear_vars):
                costs[self._columns[id(v)]] = value(coef)
            constant = repn.constant
        h = self._solver_model
        h.changeObjectiveSense(sense)
        h.changeColsCost(n, np.arange(n), costs)
        h.changeObjectiveOffset(value(constant))

    def solve(self, model: Any, *, load_solutions: bool = False, timelimit: float | None = None,
              options: Mapping[str, Any] | None = None) -> DirectHighsResults:
        """Solve ``model`` (built by :meth:`set_instance` unless this object holds it already)
        with ``timelimit`` (s) and ``options`` (HiGHS option names); ``load_solutions`` loads
        the incumbent into the model."""
        if model is not self._model:
            self.set_instance(model)
        h = self._solver_model  # console log off since set_instance
        if timelimit is not None:
            h.setOptionValue("time_limit", float(timelimit))
        for key, option in (options or {}).items():
            h.setOptionValue(key, option)
        h.HandleKeyboardInterrupt = True
        h.run()
        condition = _legacy_conditions().get(h.getModelStatus(), "unknown")
        info = h.getInfo()
        feasible = info.primal_solution_status == 2
        has_solution = feasible and self._objective is not None
        incumbent = info.objective_function_value if has_solution else None
        bound = None
        if self._objective is not None:
            if info.mip_node_count == -1:
                bound = info.objective_function_value if feasible and condition == "optimal" else None
            else:
                bound = info.mip_dual_bound
        results = DirectHighsResults(condition, has_solution, incumbent, bound, list(self._variables),
                                     list(h.getSolution().col_value) if has_solution else [])
        if load_solutions and has_solution:
            results.load()
        return results
