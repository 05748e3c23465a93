"""A-SRPT and the baselines behind the engine's online protocol (:mod:`optkit.online`), nodes by id.

:class:`OnlineScheduler` wraps one ddlwmp policy (:mod:`.a_srpt`, :mod:`.baselines`) for any
driver: jobs arrive as :class:`optkit.online.Job`, the cluster is a
:class:`optkit.online.ClusterView` keyed by the caller's node ids, and decisions name those
nodes. Every call is checked against the protocol's rules (:class:`optkit.online.ProtocolState`:
the clock, slot boundaries, arrivals at or after their release and in ``seq`` order within an
instant, completions of started jobs only and once, one ``decide`` per instant, each view's
nodes, sizes and free counts), and every job on arrival, with an
:class:`~optkit.errors.InputError` naming the field where the policy would otherwise fail
silently later: a duplicate arrival, an unknown model, a GPU demand that differs from the
model's replica count (one GPU per replica), a job larger than the cluster, or a single-node job
larger than a server (it could never start; a strict queue would block behind it forever), or a
tensor-parallel model whose t does not divide the nodes' size or exceeds it (:mod:`.tensor`;
named ``models['<name>'].stages[0].tensor_parallel``). The module docstring of
:mod:`optkit.online` lists each misuse and its field.

``models`` may hold tensor-parallel and MoE models (the instance format's fields, :mod:`.tensor`):
such a job's GPUs are its slices (``Job.gpus`` = Σ_s k_s·t), each replica's t slices go to one
node, and the job starts only when the nodes hold each replica whole (A-SRPT paper, Sec. VI).

ddlwmp's model (Sec. III-A) has M servers of one size g: nodes of different sizes are an error
(run one scheduler per size class). A job given as "k GPUs for d seconds" (``Job.duration``)
becomes one stage of k replicas that exchange no bytes: optkit's reading is a model of one
iteration of 1 s on any k GPUs (eq. 7 gives alpha = 1 s on every placement), shared by every
duration job of k GPUs (so a duration job's arrival costs what a model job's does: the
gpu-mapping estimates are computed once per k), with the prediction in seconds: ñ =
``predicted_duration`` (a noisy estimate), else ``predicted_iterations · d``, else d (a known
length). Its decision's ``time_per_iteration`` is d (alpha x d), the length of its one
iteration, so ``now + time_per_iteration`` is its completion when d is its true length.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Generic, Hashable, Mapping, TypeVar

import numpy as np

from optkit.errors import InputError
from optkit.formulations.gpu_mapping.model import PipelineJob
from optkit.online import ClusterView, Decision, Job, ProtocolState, node_sizes
from optkit.validation import check_keywords, check_seed

from .a_srpt import ASRPT
from .baselines import BASELINES
from .model import DdlwmpCluster
from .policies import ClusterState, JobSpec, Policy
from .tensor import tensor_parallel_of

__all__ = ["OnlineScheduler", "POLICIES", "duration_model"]

PROBLEM = "ddlwmp"
POLICIES = ("a-srpt", *BASELINES)
N = TypeVar("N", bound=Hashable)


def _fail(field: str, message: str) -> InputError:
    return InputError(field, message, problem=PROBLEM)


def _positive(value: Any, name: str, unit: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise _fail(name, f"must be a finite number > 0 ({unit}), got {value!r}")
    return float(value)


_DURATION_MODELS: dict[int, tuple[str, PipelineJob]] = {}


def duration_model(gpus: int) -> tuple[str, PipelineJob]:
    """The model name and model every duration job of ``gpus`` GPUs shares (module docstring):
    one stage of ``gpus`` replicas, no bytes, one iteration of 1 s (built once per count)."""
    hit = _DURATION_MODELS.get(gpus)
    if hit is None:
        hit = _DURATION_MODELS[gpus] = (f"(duration job of {gpus} GPUs)", PipelineJob.from_dict({
            "allreduce": "ring", "stages": [{"replicas": gpus, "fwd_time": 0.0, "bwd_time": 1.0, "in_bytes": 0.0,
                                             "out_bytes": 0.0, "param_bytes": 0.0}]}))
    return hit


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
    inter_bandwidth
        B_inter, the per-server NIC, in bytes/s, finite and > 0 (default: the paper's simulation).
    intra_bandwidth
        B_intra, between the GPUs of one server, in bytes/s, finite and > 0 (default: the paper's
        simulation).
    slot_seconds
        The slot length (s), finite and > 0: releases, GPU returns and wake-ups fall on slot
        boundaries, and every ``now`` must be one (:mod:`optkit.online`, rule 3).
    seed
        Heavy-Edge's seed (an integer >= 0, or ``None``).
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

    Units: seconds (release, now, wake-ups, durations, ``time_per_iteration``); GPUs; bytes/s.

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

    A misuse is named at the call: the job has not completed in the view yet (its GPUs are
    still held), and time cannot go back:

    >>> s.decide(23.0, ClusterView({"n1": 4, "n2": 4}, {"n1": 4, "n2": 4}))
    Traceback (most recent call last):
    ...
    optkit.errors.InputError: ddlwmp: now must advance between two decide calls unless a completion or an arrival was delivered in between (rule 1: one decide per instant), got decide twice at 23.0
    >>> s.on_completion("train-1", 20.0)
    Traceback (most recent call last):
    ...
    optkit.errors.InputError: ddlwmp: now must not go back (rule 1): on_completion of job train-1 at 20.0 is earlier than the previous call's 23.0
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
        b_inter = _positive(inter_bandwidth, "inter_bandwidth", "bytes/s")
        b_intra = _positive(intra_bandwidth, "intra_bandwidth", "bytes/s")
        slot = _positive(slot_seconds, "slot_seconds", "seconds")
        seed = check_seed(seed, problem=PROBLEM)
        if models is not None and not isinstance(models, Mapping):
            raise _fail("models", f"must map model names to models, got {type(models).__name__}")
        self.ids = list(nodes)
        self.size = {n: int(g) for n, g in nodes.items()}
        self.cluster = DdlwmpCluster(len(self.ids), sizes[0], b_inter, b_intra, slot)
        self.models: dict[str, PipelineJob] = {}
        for name, md in (models or {}).items():
            if not isinstance(name, str) or not name:
                raise _fail("models", f"must be keyed by non-empty model names, got {name!r}")
            self.models[name] = md if isinstance(md, PipelineJob) else PipelineJob.from_dict(md, f"models[{name!r}]")
        cls = ASRPT if policy == "a-srpt" else BASELINES[policy]
        taken = [p.name for p in inspect.signature(cls).parameters.values()
                 if p.kind is p.KEYWORD_ONLY and p.name != "seed"]
        check_keywords(params, taken, f"the {policy} scheduler", problem=PROBLEM)
        try:
            self.policy: Any = cls(self.cluster, self.models, seed=seed, **params)
        except InputError as exc:  # a reading's value, named as --param names it
            raise exc.with_problem(PROBLEM) from None
        self.name = policy
        self._setup()

    def _setup(self, check: bool = True) -> None:
        self._indexed = self.ids == list(range(len(self.ids)))
        self.state: ProtocolState | None = ProtocolState(
            self.ids, [self.cluster.gpus_per_server] * len(self.ids), slot=self.cluster.slot_seconds,
            problem=PROBLEM) if check else None
        self._durations: dict[str, float] = {}   # d of each duration job not started yet
        self._unit: dict[int, str] = {}           # the model name of the duration jobs of k GPUs
        self._single: set[str] = set()            # single-node jobs not started yet

    @classmethod
    def of_policy(cls, policy: Policy, cluster: DdlwmpCluster, models: Mapping[str, PipelineJob], *,
                  check: bool = True) -> OnlineScheduler[int]:
        """An already built ddlwmp policy (:class:`.policies.Policy`: A-SRPT, a baseline, or a
        user's) behind the protocol, its nodes numbered 0..M-1: how :func:`.simulate.simulate`
        drives the policies it is given. ``check``: whether every call is checked against the
        protocol, as for any driver; :func:`.simulate.simulate`, which keeps the rules by
        construction (tests/test_online_protocol.py runs it with the checks on and gets the same
        schedules), passes ``False`` so that its runs do not pay for them (about 10 µs an
        instant)."""
        self = cls.__new__(cls)
        self.ids = list(range(cluster.servers))
        self.size = {m: cluster.gpus_per_server for m in self.ids}
        self.cluster = cluster
        self.models = dict(models)
        self.policy = policy
        self.name = getattr(policy, "name", type(policy).__name__)
        self._setup(check)
        return self

    # ------------------------------------------------------------------ the protocol
    def on_arrival(self, job: Job, now: float) -> None:
        """Check the call (:mod:`optkit.online`, rules 1-3) and ``job`` (module docstring), and
        hand the job to the policy."""
        if not isinstance(job, Job):
            raise _fail("job", f"must be an optkit.online.Job, got {type(job).__name__}")
        st = self.state
        if st is not None:
            st.check_arrival(job, now)
        model = job.model
        d = job.duration
        if (model is None) == (d is None):
            raise _fail("job", f"job {job.id} must give exactly one of model and duration (ddlwmp)")
        predicted = job.predicted_iterations
        guess = job.predicted_duration
        if guess is not None and (d is None or predicted is not None):
            raise _fail("job.predicted_duration", f"job {job.id}: only a duration job takes a predicted duration "
                        "(a model job's prediction is predicted_iterations)" if d is None else
                        f"job {job.id}: give one estimate, predicted_duration (s) or predicted_iterations (of "
                        "duration), not both")
        if d is not None:
            model = self._unit.get(job.gpus)
            if model is None:
                model, md = duration_model(job.gpus)
                self.models[model] = md
                self._unit[job.gpus] = model
            d = float(d)
            predicted = float(guess) if guess is not None else d if predicted is None else predicted * d
        assert model is not None  # exactly one of model and duration (checked above)
        # the policy checks the rest (ArrivalCheck): a duplicate, an unknown model, GPUs unlike the
        # model's replicas, a job larger than the cluster, a single-node job larger than a server
        md = self.models.get(model)  # (an unknown model is the policy's ArrivalCheck's to name)
        self.policy.on_arrival(JobSpec(job.id, float(job.release), model, job.gpus, predicted, job.single_node,
                                       1 if md is None else tensor_parallel_of(md)), now)
        if st is not None:
            st.record_arrival(job, now)
        if d is not None:
            self._durations[job.id] = d
        if job.single_node:
            self._single.add(job.id)

    def on_completion(self, job_id: str, now: float) -> None:
        """Check the call (a started job, once; :mod:`optkit.online`, rules 1 and 5) and tell the policy."""
        st = self.state
        if st is None:
            self.policy.on_completion(job_id, now)
            return
        st.check_completion(job_id, now)
        self.policy.on_completion(job_id, now)
        st.record_completion(job_id, now)

    def decide(self, now: float, cluster: ClusterView[N]) -> list[Decision[N]]:
        """The policy's starts, by node id, each reserved in ``cluster`` (rule 6). The call and
        the view are checked first (:mod:`optkit.online`, "Misuse"): ``cluster.free`` names
        exactly this scheduler's nodes with their sizes, integers from 0 to the GPUs that no
        started, not yet completed job holds."""
        st = self.state
        if st is not None:
            st.check_decide(now)
            arr = st.read_view(cluster)  # a new array: the policy takes from it; reserve takes from the view's
        else:
            a = cluster.free_array
            arr = a.copy() if a is not None and self._indexed and len(a) == len(self.ids) else np.fromiter(
                (cluster.free[n] for n in self.ids), dtype=np.int64, count=len(self.ids))
        ids = self.ids
        out = []
        reserve = cluster.reserve
        durations = self._durations
        for d in self.policy.decide(now, ClusterState(arr, self.cluster.gpus_per_server)):
            p = d.placement
            jid = d.job_id
            alpha = p.alpha
            if durations:
                length = durations.pop(jid, None)
                if length is not None:
                    alpha *= length  # one iteration of d seconds (module docstring)
            if self._indexed:
                dec = Decision(jid, dict(zip(p.servers, p.counts)), p.assignment, alpha)
            else:
                dec = Decision(jid, {ids[m]: c for m, c in zip(p.servers, p.counts)},
                               [[ids[m] for m in row] for row in p.assignment], alpha)
            if jid in self._single:
                if len(p.servers) != 1:
                    raise RuntimeError(f"policy {self.name} split single-node job {jid} over servers {p.servers}")
                self._single.discard(jid)
            reserve(dec)
            if st is not None:
                st.record_start(jid, p.servers, p.counts)
            out.append(dec)
        if st is not None:
            st.record_decide(now)
        return out

    def next_wakeup(self, now: float) -> float | None:
        """The policy's wake-up (rule 4: the driver rounds it up to a slot boundary)."""
        st = self.state
        if st is not None:
            st.check_wakeup(now)
        w = self.policy.next_wakeup(now)
        if st is not None:
            st.record_wakeup(now)
        return None if w is None else float(w)
