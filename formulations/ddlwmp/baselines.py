"""The paper's baselines (Sec. V-A-1-d) and FIFO, as event-driven policies.

Predicted duration of job i: ``ñ_i·α̃_i^min`` (ñ_i the prediction, 0 when missing; α̃^min the
Heavy-Edge estimate on the fewest servers, as A-SRPT uses); predicted workload: that times g_i.

* ``spjf`` (MLaaS): shortest predicted duration first, strict order (the best job that has
  arrived must start first; if it does not fit, nothing starts: the paper's "if the shortest job
  does not fit, it will not schedule longer jobs with fewer GPU demands").
* ``spwf`` (Tiresias): smallest predicted workload first, strict order.
* ``wcs-duration`` / ``wcs-workload`` / ``wcs-subtime`` (work-conserving scheduler): in order of
  predicted duration / workload / submission time, start every job that fits, skipping those
  that do not.
* ``fifo``: arrival order, strict head-of-line.

Ties: release, then the instance's order. "Fits": g_i <= free GPUs in the whole cluster; for a
tensor-parallel job, the same rule as A-SRPT's (the A-SRPT paper, Sec. VI): the servers hold each
of its replicas' t slices on one server, Σ_m floor(free_m/t) >= g_i/t (:mod:`.tensor`), and the
servers are picked in replicas of t GPUs.
Placement (all of them; the paper only says they use Heavy-Edge), reading ``consolidate``: by
default (``False``, the option under which the baselines do better, readings.py) best fit: the one
server with the fewest free GPUs that holds the job, else the least-free servers first
(:func:`.placement.least_free_servers`); ``True`` consolidates on the servers with the most free
GPUs (:func:`.placement.most_free_servers`: the fewest servers the current availability allows).
Then Heavy-Edge.
"""

from __future__ import annotations

from .policies import JobSpec, QueuePolicy

__all__ = ["SPJF", "SPWF", "WCSDuration", "WCSWorkload", "WCSSubTime", "FIFO", "BASELINES"]


class _Predicted(QueuePolicy):
    def duration(self, job: JobSpec) -> float:
        return job.n_tilde * self.placer.alpha_min(job.model)


class SPJF(_Predicted):
    """Shortest predicted job first, strict order (MLaaS, Sec. V-A-1-d): the best job that has
    arrived must start first."""

    name = "spjf"

    WORK_CONSERVING = False

    def key(self, job: JobSpec) -> float:
        return self.duration(job)


class SPWF(_Predicted):
    """Smallest predicted workload (duration x GPUs) first, strict order (Tiresias, Sec. V-A-1-d)."""

    name = "spwf"

    WORK_CONSERVING = False

    def key(self, job: JobSpec) -> float:
        return self.duration(job) * job.gpus


class WCSDuration(_Predicted):
    """Work-conserving, by predicted duration: in key order, start every job that fits (Sec. V-A-1-d)."""

    name = "wcs-duration"

    WORK_CONSERVING = True

    def key(self, job: JobSpec) -> float:
        return self.duration(job)


class WCSWorkload(_Predicted):
    """Work-conserving, by predicted workload (duration x GPUs) (Sec. V-A-1-d)."""

    name = "wcs-workload"

    WORK_CONSERVING = True

    def key(self, job: JobSpec) -> float:
        return self.duration(job) * job.gpus


class WCSSubTime(QueuePolicy):
    """Work-conserving, by submission time (Sec. V-A-1-d)."""

    name = "wcs-subtime"

    WORK_CONSERVING = True

    def key(self, job: JobSpec) -> float:
        return job.release


class FIFO(QueuePolicy):
    """First in, first out, strict head-of-line (optkit's reference baseline; not in the paper)."""

    name = "fifo"

    WORK_CONSERVING = False

    def key(self, job: JobSpec) -> float:
        return job.release


def _document(cls: type[QueuePolicy]) -> None:
    """Complete a baseline's docstring: its summary, then the sections every public policy has
    (tests/test_docstrings.py), the example run with this very class."""
    ref = ("optkit's own reference point (arrival order)" if cls is FIFO
           else "Luo et al., A-SRPT paper, Sec. V-A-1-d (the baselines)")
    cls.__doc__ = f"""{cls.__doc__}

    An online policy (:mod:`.policies`); constructed like :class:`.a_srpt.ASRPT`. Placement as the
    module docstring says.

    References
    ----------
    {ref}.

    Notes
    -----
    Guarantee: none proven.

    Units: seconds (releases, predicted durations); GPUs.

    Examples
    --------
    >>> from optkit.formulations.ddlwmp.generate import tiny
    >>> from optkit.formulations.ddlwmp.model import DdlwmpInstance, evaluate
    >>> from optkit.formulations.ddlwmp.simulate import simulate
    >>> inst = DdlwmpInstance.from_dict(tiny(0))
    >>> schedule = simulate(inst, {cls.__name__}(inst.cluster, inst.models, seed=0))
    >>> round(evaluate(inst, schedule).objectives["total_completion"], 3)
    18.427
    """


for _cls in (SPJF, SPWF, WCSDuration, WCSWorkload, WCSSubTime, FIFO):
    _document(_cls)


BASELINES: dict[str, type[QueuePolicy]] = {
    c.name: c for c in (SPJF, SPWF, WCSDuration, WCSWorkload, WCSSubTime, FIFO)
}
