"""``coin``: a test-only formulation with declared readings and one experiment.

It exercises the readings and reproduce engine without any paper's code. Registered in worker
processes with ``OPTKIT_FORMULATIONS=tests.plugins.coin:FORMULATION`` (the repository root must be
importable). Instance ``{"problem": "coin", "n": 3}``; a solution is ``{"x": int}`` with
``0 <= x <= n``; the objective ``cost = n - x`` is minimised (optimum 0 at ``x = n``).

Readings
--------
rounding ("down" | "up", default "down"): ``half`` returns ``floor(n/2)`` or ``ceil(n/2)``.
bias (open, 0..10, swept 0, 1; default 0): ``half`` and ``shy`` add it to ``x`` (capped at ``n``).

Algorithms
----------
half: ``x = round(n / 2) + bias`` (the readings above).
shy: ``x = bias`` (takes ``bias`` only).
exact: ``x = n``, optimal.
nothing: finds nothing: status ``no_solution``.
loose: takes ``**params`` and declares ``take`` in ``Algorithm.params``: ``x = take``.

Experiment ``coin-half`` measures ``half(n) / n`` for ``n = 3`` (claim ``coin-half-ratio``, the
"paper" says 2/3 within 0.01: reproduces with rounding=up and bias=0 only) and ``x <= n``
(claim ``coin-half-bound``, ``at_most`` 1: holds under every reading).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from optkit.claims import Claim, Experiment
from optkit.errors import InputError
from optkit.formulation import Algorithm, Evaluation, Formulation
from optkit.readings import Reading
from optkit.result import Result, Status

PROBLEM = "coin"
OBJECTIVES = ("cost",)

READINGS = (
    Reading("rounding", "how half of an odd n rounds", ("down", "up"), "down",
            passage="Coin paper, Sec. 1, line 2 (\"take half the coins\")",
            reason="the paper's example has an even n; floor is the usual integer division",
            algorithms=("half",), rule="literal", post_hoc=False),
    Reading("bias", "extra coins taken", (0, 1), 0, passage="Coin paper, Sec. 2 (silent)",
            reason="the paper adds nothing", algorithms=("half", "shy"), open=True, minimum=0, maximum=10,
            rule="literal", post_hoc=False),
)


@dataclass(frozen=True)
class CoinInstance:
    n: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "CoinInstance":
        n = d.get("n")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InputError("n", f"must be an integer >= 1, got {n!r}")
        return cls(n)

    def to_dict(self) -> dict[str, Any]:
        return {"problem": PROBLEM, "n": self.n}


def evaluate(instance: CoinInstance, solution: Mapping[str, Any]) -> Evaluation:
    x = solution.get("x")
    if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= instance.n:
        return Evaluation(False, violations=[f"x must be an integer in 0..{instance.n}, got {x!r}"])
    return Evaluation(True, objectives={"cost": float(instance.n - x)}, metrics={"x": x})


def half(instance: CoinInstance, *, objective: str, time_limit: float | None, seed: int | None,
         rounding: str = "down", bias: float = 0) -> Result:
    """Readings: ``rounding``, ``bias``."""
    base = instance.n // 2 if rounding == "down" else math.ceil(instance.n / 2)
    return Result(Status.FEASIBLE, solution={"x": int(min(instance.n, base + bias))})


def shy(instance: CoinInstance, *, objective: str, time_limit: float | None, seed: int | None,
        bias: float = 0) -> Result:
    """Readings: ``bias``."""
    return Result(Status.FEASIBLE, solution={"x": int(min(instance.n, bias))})


def loose(instance: CoinInstance, *, objective: str, time_limit: float | None, seed: int | None,
          **params: Any) -> Result:
    """Takes ``**params``; it declares ``take`` through ``Algorithm.params``: ``x = take``."""
    return Result(Status.FEASIBLE, solution={"x": int(params.get("take", 0))})


def exact(instance: CoinInstance, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    return Result(Status.OPTIMAL, solution={"x": instance.n}, bound=0.0)


def nothing(instance: CoinInstance, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
    return Result(Status.NO_SOLUTION, message="nothing found (by design)")


def measure_half(*, readings: Mapping[str, Any], seed: int, scale: str) -> dict[str, Any]:
    """``half(3)/3`` and ``x/n`` under ``readings``; the seed changes nothing (deterministic)."""
    inst = CoinInstance(3)
    x = half(inst, objective="cost", time_limit=None, seed=seed, **readings).solution["x"]  # type: ignore[index]
    return {"coin-half-ratio": x / inst.n, "coin-half-bound": x / inst.n,
            "_details": {"n": inst.n, "x": x}, "_notes": [f"measured at scale {scale}"]}


EXPERIMENTS = {
    "coin-half": Experiment(
        "coin-half", PROBLEM, "coin-paper", "half of three coins", measure="tests.plugins.coin:measure_half",
        claims=(Claim("coin-half-ratio", "Sec. 3, the ratio taken", 2 / 3, "ratio", "x / n for n = 3", precision=0.05),
                Claim("coin-half-bound", "Sec. 3, never more than all", 1.0, "ratio", "x / n",
                      comparison="at_most")),
        readings=("rounding", "bias"), time_limit={"ci": 30.0, "paper": 30.0}),
}

FORMULATION = Formulation(
    name=PROBLEM, summary="test-only: readings and claims", instance_from_dict=CoinInstance.from_dict,
    instance_to_dict=CoinInstance.to_dict, evaluate=evaluate, objectives=OBJECTIVES,
    algorithms={a.name: a for a in [
        Algorithm("half", half, "heuristic", "half the coins", OBJECTIVES),
        Algorithm("shy", shy, "heuristic", "bias coins", OBJECTIVES),
        Algorithm("exact", exact, "exact", "all coins", OBJECTIVES),
        Algorithm("nothing", nothing, "heuristic", "finds nothing", OBJECTIVES),
        Algorithm("loose", loose, "heuristic", "takes **params, declares take", OBJECTIVES, params=("take",)),
    ]},
    readings=READINGS, experiments=EXPERIMENTS,
)
