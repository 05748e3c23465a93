"""A-SRPT and the baselines behind the engine's online protocol (:mod:`optkit.online`), nodes by id.

:class:`OnlineScheduler` wraps one ddlwmp policy (:mod:`.a_srpt`, :mod:`.baselines`) for any
driver: jobs arrive as :class:`optkit.online.Job`, the cluster is a
:class:`optkit.online.ClusterView` keyed by the caller's node ids, and decisions name those
nodes. Every job is checked on arrival, with an :class:`~optkit.errors.InputError` naming the
field where the policy would otherwise fail silently later: a duplicate arrival, an unknown
model, a GPU demand that differs from the model's replica count (one GPU per replica), a job
larger than the cluster (it could never start; a strict queue would block behind it forever).

ddlwmp's model (Sec. III-A) has M servers of one size g: nodes of different sizes are an error
(run one scheduler per size class). A job given as "k GPUs for d seconds" (``Job.duration``)
becomes a model of one stage of k replicas that exchange no bytes, whose iteration takes d
seconds on any k GPUs (eq. 7 then gives alpha = d for every placement); it runs one iteration,
and without a ``predicted_iterations`` its prediction is that one iteration (its length is known).
"""

from __future__ import annotations

from typing import Any, Generic, Hashable, Mapping, TypeVar

import numpy as np

from optkit.errors import InputError
from optkit.formulations.gpu_mapping.model import PipelineJob
from optkit.online import ClusterView, Decision, Job, node_sizes

from .a_srpt import ASRPT
from .baselines import BASELINES
from .model import DdlwmpCluster
from .policies import ClusterState, JobSpec, Policy

__all__ = ["OnlineScheduler", "POLICIES"]

PROBLEM = "ddlwmp"
POLICIES = ("a-srpt", *BASELINES)
N = TypeVar("N", bound=Hashable)


def _fail(field: str, message: str) -> InputError:
    return InputError(field, message, problem=PROBLEM)


class OnlineScheduler(Generic[N]):
    """One ddlwmp policy (``a-srpt`` or a baseline) as an :class:`optkit.online.OnlinePolicy`.

    Parameters
    ----------
    policy
        ``a-srpt`` (Algorithm 1) or a baseline: ``spjf``, ``spwf``, ``wcs-duration``,
        ``wcs-workload``, ``wcs-subtime``, ``fifo``.
    nodes
        ``{node id: GPUs}`` of every server, all of one size g (Sec. III-A).
    models
        ``{name: PipelineJob}`` (or its dict) of the jobs' models; jobs given by ``duration``
        need none.
    inter_bandwidth, intra_bandwidth
        B_inter (per-server NIC) and B_intra in bytes/s (defaults: the paper's simulation).
    slot_seconds
        The slot length (s): releases, GPU returns and wake-ups fall on slot boundaries
        (:mod:`optkit.online`, rule 3).
    seed
        Heavy-Edge's seed.
    **params
        The policy's own keywords and readings (A-SRPT: ``comm_heavy``, ``tau``, ...; the
        queue baselines: ``consolidate``).

    References
    ----------
    Luo et al., A-SRPT paper, Sec. III-A (the cluster), Sec. IV-C Algorithm 1, Sec. V-A-1-d
    (the baselines); :mod:`optkit.online` (the protocol).

    Notes
    -----
    Guarantee: that of the wrapped policy (A-SRPT: Theorem 1; the baselines: none proven).

    Units: seconds (release, now, wake-ups, ``time_per_iteration``); GPUs; bytes/s.

    Examples
    --------
    A 3-GPU job of 60 s on two 4-GPU nodes. A-SRPT starts it when it completes in its virtual
    single machine (size 3/8 x 60 s = 22.5 s), so it asks to be woken then (rule 4):

    >>> from optkit.online import ClusterView, Job
    >>> s = OnlineScheduler("a-srpt", nodes={"n1": 4, "n2": 4})
    >>> s.on_arrival(Job("train-1", release=0.0, gpus=3, duration=60.0), 0.0)
    >>> view = ClusterView({"n1": 4, "n2": 4}, {"n1": 4, "n2": 4})
    >>> s.decide(0.0, view), s.next_wakeup(0.0)
    ([], 22.5)
    >>> s.decide(23.0, view)
    [Decision(job_id='train-1', gpus={'n1': 3}, replicas=[['n1', 'n1', 'n1']], time_per_iteration=60.0, extra={})]
    """

    def __init__(self, policy: str = "a-srpt", *, nodes: Mapping[N, int],
                 models: Mapping[str, PipelineJob | Mapping[str, Any]] | None = None,
                 inter_bandwidth: float = 1.25e9, intra_bandwidth: float = 3e11, slot_seconds: float = 1.0,
                 seed: int | None = None, **params: Any) -> None:
        if policy not in POLICIES:
            raise _fail("policy", f"must be one of {', '.join(POLICIES)}, got {policy!r}")
        sizes = sorted(set(node_sizes(nodes, problem=PROBLEM).values()))
        if len(sizes) > 1:
            raise _fail("nodes", f"have sizes {sizes}, but ddlwmp's model (Sec. III-A) has servers of one size g; "
                                 "run one scheduler per size class")
        self.ids = list(nodes)
        self.size = {n: int(g) for n, g in nodes.items()}
        try:
            self.cluster = DdlwmpCluster(len(self.ids), sizes[0], float(inter_bandwidth), float(intra_bandwidth),
                                         float(slot_seconds))
        except (TypeError, ValueError) as exc:
            raise _fail("cluster", str(exc)) from None
        self.models: dict[str, PipelineJob] = {}
        for name, md in (models or {}).items():
            self.models[name] = md if isinstance(md, PipelineJob) else PipelineJob.from_dict(md, f"models[{name!r}]")
        cls = ASRPT if policy == "a-srpt" else BASELINES[policy]
        try:
            self.policy: Any = cls(self.cluster, self.models, seed=seed, **params)
        except TypeError as exc:
            raise _fail("params", f"{policy} does not take {sorted(params)}: {exc}") from None
        except ValueError as exc:
            raise _fail("params", str(exc)) from None
        self.name = policy
        self._indexed = self.ids == list(range(len(self.ids)))

    @classmethod
    def of_policy(cls, policy: Policy, cluster: DdlwmpCluster, models: Mapping[str, PipelineJob]) -> OnlineScheduler[int]:
        """An already built ddlwmp policy (:class:`.policies.Policy`: A-SRPT, a baseline, or a
        user's) behind the protocol, its nodes numbered 0..M-1: how :func:`.simulate.simulate`
        drives the policies it is given."""
        self = cls.__new__(cls)
        self.ids = list(range(cluster.servers))
        self.size = {m: cluster.gpus_per_server for m in self.ids}
        self.cluster = cluster
        self.models = dict(models)
        self.policy = policy
        self.name = getattr(policy, "name", type(policy).__name__)
        self._indexed = True
        return self

    # ------------------------------------------------------------------ the protocol
    def on_arrival(self, job: Job, now: float) -> None:
        """Check ``job`` (module docstring) and hand it to the policy."""
        if not isinstance(job, Job):
            raise _fail("job", f"must be an optkit.online.Job, got {type(job).__name__}")
        if (job.model is None) == (job.duration is None):
            raise _fail("job", f"job {job.id} must give exactly one of model and duration (ddlwmp)")
        model = job.model
        if model is None:
            model = f"{job.gpus} GPUs for {job.duration!r} s"
            if model not in self.models:
                self.models[model] = PipelineJob.from_dict({"allreduce": "ring", "stages": [
                    {"replicas": job.gpus, "fwd_time": 0.0, "bwd_time": float(job.duration), "in_bytes": 0.0,
                     "out_bytes": 0.0, "param_bytes": 0.0}]})
        predicted = job.predicted_iterations
        if predicted is None and job.duration is not None:
            predicted = 1.0
        # the policy checks the rest (ArrivalCheck): a duplicate, an unknown model, GPUs unlike the
        # model's replicas, a job larger than the cluster
        self.policy.on_arrival(JobSpec(job.id, float(job.release), model, job.gpus, predicted), now)

    def on_completion(self, job_id: str, now: float) -> None:
        self.policy.on_completion(job_id, now)

    def decide(self, now: float, cluster: ClusterView[N]) -> list[Decision[N]]:
        """The policy's starts, by node id, each reserved in ``cluster`` (rule 6);
        ``cluster.free`` must name exactly this scheduler's nodes."""
        arr = cluster.free_array
        if arr is None or not self._indexed or len(arr) != len(self.ids):
            free = cluster.free
            if len(free) != len(self.ids) or any(n not in free for n in self.ids):
                raise _fail("cluster.free", f"must name exactly the scheduler's {len(self.ids)} nodes")
            arr = np.fromiter((free[n] for n in self.ids), dtype=np.int64, count=len(self.ids))
        else:
            arr = arr.copy()  # the policy takes from its own copy; reserve takes from the view's
        ids = self.ids
        out = []
        reserve = cluster.reserve
        for d in self.policy.decide(now, ClusterState(arr, self.cluster.gpus_per_server)):
            p = d.placement
            if self._indexed:
                dec = Decision(d.job_id, dict(zip(p.servers, p.counts)), p.assignment, p.alpha)
            else:
                dec = Decision(d.job_id, {ids[m]: c for m, c in zip(p.servers, p.counts)},
                               [[ids[m] for m in row] for row in p.assignment], p.alpha)
            reserve(dec)
            out.append(dec)
        return out

    def next_wakeup(self, now: float) -> float | None:
        w = self.policy.next_wakeup(now)
        return None if w is None else float(w)
