"""The registered algorithms of ddlwmp's online policies: each one a policy driven over the instance.

``optkit solve``, ``compare`` and ``Formulation.algorithms`` run the paper's policies through these
functions: each builds its policy (:class:`.a_srpt.ASRPT`, a baseline of :mod:`.baselines`) with
the instance's cluster and models and the readings passed as keywords, drives it with
:func:`.simulate.run_policy` (:func:`.simulate.simulate`'s schedule in a
:class:`optkit.result.Result`) and returns that result. ``objective`` is accepted and ignored (the
policies target total completion time).

They live here, not beside the policies, so that the simulation path runs one way (issue 36): a
policy module imports neither the driver nor the engine's result; the driver
(:mod:`.simulate`, through :mod:`.online`) imports the policies, and this module imports both.
"""

from __future__ import annotations

from typing import Any, Callable

from .a_srpt import ASRPT
from .baselines import FIFO, SPJF, SPWF, WCSDuration, WCSSubTime, WCSWorkload
from .model import DdlwmpInstance
from .policies import QueuePolicy
from .readings import COMM_HEAVY_DEFAULT, CONSOLIDATE_DEFAULT, TAU_DEFAULT
from .simulate import run_policy

__all__ = ["run_a_srpt", "run_a_srpt_perfect", "run_spjf", "run_spwf", "run_wcs_duration", "run_wcs_workload",
           "run_wcs_subtime", "run_fifo"]


# ----------------------------------------------------------------------------- A-SRPT
_READINGS_DOC = """

    Readings taken (:mod:`.readings`): ``tau`` (:data:`.readings.TAU_DEFAULT`, held out; the testbed's
    0 is ``tau=0``), ``comm_heavy`` (1.5), ``comm_heavy_test``
    ("ge"), ``delay_blocks_queue`` (True), ``light_placement`` ("best-fit"), ``head_of_line``
    ("strict"). The objective is ignored (the policy targets total completion time)."""


def _run(instance: DdlwmpInstance, name: str, perfect: bool, time_limit: float | None, seed: int | None,
         **readings: Any) -> Any:
    policy = ASRPT(instance.cluster, instance.models, seed=seed, **readings)
    policy.name = name
    return run_policy(instance, policy, perfect=perfect, time_limit=time_limit)


def run_a_srpt(instance: DdlwmpInstance, *, objective: str = "total_completion", time_limit: float | None = None,
               seed: int | None = None, tau: float = TAU_DEFAULT, comm_heavy: float = COMM_HEAVY_DEFAULT,
               comm_heavy_test: str = "ge", delay_blocks_queue: bool = True, light_placement: str = "best-fit",
               head_of_line: str = "strict") -> Any:
    return _run(instance, "a-srpt", False, time_limit, seed, tau=tau, comm_heavy=comm_heavy,
                comm_heavy_test=comm_heavy_test, delay_blocks_queue=delay_blocks_queue,
                light_placement=light_placement, head_of_line=head_of_line)


def run_a_srpt_perfect(instance: DdlwmpInstance, *, objective: str = "total_completion",
                       time_limit: float | None = None, seed: int | None = None, tau: float = TAU_DEFAULT,
                       comm_heavy: float = COMM_HEAVY_DEFAULT, comm_heavy_test: str = "ge",
                       delay_blocks_queue: bool = True, light_placement: str = "best-fit",
                       head_of_line: str = "strict") -> Any:
    return _run(instance, "a-srpt-perfect", True, time_limit, seed, tau=tau, comm_heavy=comm_heavy,
                comm_heavy_test=comm_heavy_test, delay_blocks_queue=delay_blocks_queue,
                light_placement=light_placement, head_of_line=head_of_line)


run_a_srpt.__doc__ = "A-SRPT with the instance's predictions (``predicted_iterations``; missing = 0)." + _READINGS_DOC
run_a_srpt_perfect.__doc__ = "A-SRPT-Perfect: A-SRPT with ñ_i = n_i." + _READINGS_DOC


# ----------------------------------------------------------------------------- the baselines
def _runner(cls: type[QueuePolicy]) -> Callable[..., Any]:
    def run(instance: DdlwmpInstance, *, objective: str = "total_completion", time_limit: float | None = None,
            seed: int | None = None, consolidate: bool = CONSOLIDATE_DEFAULT) -> Any:
        return run_policy(instance, cls(instance.cluster, instance.models, seed=seed, consolidate=consolidate),
                          time_limit=time_limit)
    run.__name__ = "run_" + cls.name.replace("-", "_")
    run.__doc__ = (f"The {cls.name} baseline (see :mod:`.baselines`). Reading taken (:mod:`.readings`): "
                   "``consolidate`` (True: the most-free servers; False: best fit).")
    return run


run_spjf = _runner(SPJF)
run_spwf = _runner(SPWF)
run_wcs_duration = _runner(WCSDuration)
run_wcs_workload = _runner(WCSWorkload)
run_wcs_subtime = _runner(WCSSubTime)
run_fifo = _runner(FIFO)
