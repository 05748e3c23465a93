"""Bad input through the Python API, as a new user meets it (issue 35, item 3): every row calls
one public entry of the four problems or of the engine with one mistake and asserts the
:class:`optkit.errors.InputError` names the field (``free_gpus[0]``, ``seeds[1]``) and, where
the mistake belongs to a problem, the problem (as the CLI's message does), never a raw Python
or numpy error, never a silent answer.

The rows are grouped by case class (the first element); ``test_every_case_class_is_covered``
keeps each class populated. ``tests/test_public_validation.py`` holds the typed constructors'
rows of issue 22; the online protocol's checks (``ClusterView``, ``OnlineScheduler``) are
tested with that protocol. ``seed`` and ``time_limit`` go through one validator
(:func:`optkit.validation.check_seed`, :func:`~optkit.validation.check_time_limit`) on every
path, with the CLI's words (``test_seed_and_time_limit_words_are_the_clis``).
"""

from __future__ import annotations

import argparse
import math
from collections import Counter
from typing import Any, Callable

import networkx as nx
import numpy as np
import pytest

import optkit
from optkit import solve
from optkit.cli_args import seed_arg, time_limit_arg
from optkit.errors import InputError
from optkit.formulations.ddlwmp.a_srpt import ASRPT
from optkit.formulations.ddlwmp.baselines import FIFO, SPJF
from optkit.formulations.ddlwmp.generate import tiny as ddlwmp_tiny
from optkit.formulations.ddlwmp.model import DdlwmpCluster, DdlwmpInstance
from optkit.formulations.ddlwmp.placement import Placer
from optkit.formulations.ddlwmp.policies import ClusterState, JobSpec
from optkit.formulations.ddlwmp.simulate import simulate as simulate_ddlwmp
from optkit.formulations.gpu_mapping import (Cluster, PipelineJob, Stage, alpha_from_counts, alpha_min_estimate,
                                             choose_servers, fewest_servers, heavy_edge, heavy_edge_arrays,
                                             heavy_edge_job, place as gpu_place, stage_times)
from optkit.formulations.gpu_mapping.generate import random_small
from optkit.formulations.nimp import place as nimp_place, titan
from optkit.formulations.nimp.baselines import elasticflow, hived, tiresias
from optkit.formulations.nimp.generate import tiny as nimp_tiny
from optkit.formulations.nimp.model import Job as NimpJob, Machine, ring_phases
from optkit.formulations.nimp.online import POLICIES
from optkit.formulations.nimp.replay import replay
from optkit.formulations.rar_ddls import schedule_batch
from optkit.formulations.rar_ddls.baselines import ff, ls, rand
from optkit.formulations.rar_ddls.generate import tiny as rar_tiny
from optkit.formulations.rar_ddls.model import Job as RarJob, Network, RarInstance
from optkit.formulations.rar_ddls.sjf_bco import sjf_bco
from optkit.instances import instance_hash, load_instance
from optkit.testing import assert_within, check_algorithm, default_instances, optimum
from optkit.validation import SEED_MESSAGE, TIME_LIMIT_MESSAGE, check_seed, check_time_limit

GM = random_small(0)
NI = nimp_tiny(1)
RA = rar_tiny(0)
DD = ddlwmp_tiny(0)
RAR = RarInstance.from_dict(RA)
NET = RAR.network
DDI = DdlwmpInstance.from_dict(DD)
MODEL = next(iter(DDI.models))
_STAGE = {"fwd_time": 0.01, "bwd_time": 0.02, "param_bytes": 1e8}
JOB = PipelineJob.from_dict({"allreduce": "ring", "stages": [
    {**_STAGE, "replicas": 2, "in_bytes": 0, "out_bytes": 4e6},
    {**_STAGE, "replicas": 2, "in_bytes": 4e6, "out_bytes": 0}]})  # 4 replicas
CL = Cluster(8, 1.25e9, 3e11)
P4 = nx.path_graph(4)
HOSTS = {"a": Machine(8, 2), "b": Machine(8, 8), "c": Machine(8, 3)}
NJ = NimpJob(4, "ring", 100e6)
PH3 = ring_phases(3, 1e8)
SERVERS = {"a": RAR.servers[0], "b": RAR.servers[1]}


def _batch(**kw: Any) -> Any:
    return schedule_batch(RAR.jobs, SERVERS, NET, **kw)


def _arrive(job: JobSpec) -> None:
    ASRPT(DDI.cluster, DDI.models).on_arrival(job, 0.0)


ROWS: list[tuple[str, str, Callable[[], Any], str | None, str]] = [
    # ------------------------------------------------------------ seed (one validator, every path)
    ("seed", "a string seed into solve(cpsat)", lambda: solve("gpu-mapping", GM, "cpsat", seed="1"), "gpu-mapping",
     "seed"),
    ("seed", "a string seed into solve(heavy-edge)", lambda: solve("gpu-mapping", GM, "heavy-edge", seed="1"),
     "gpu-mapping", "seed"),
    ("seed", "a negative seed into solve(titan)", lambda: solve("nimp", NI, "titan", seed=-1), "nimp", "seed"),
    ("seed", "a fractional seed into solve(rand)", lambda: solve("rar-ddls", RA, "rand", seed=1.5), "rar-ddls", "seed"),
    ("seed", "a boolean seed into solve(rand)", lambda: solve("rar-ddls", RA, "rand", seed=True), "rar-ddls", "seed"),
    ("seed", "a negative seed into solve(a-srpt)", lambda: solve("ddlwmp", DD, "a-srpt", seed=-7), "ddlwmp", "seed"),
    ("seed", "a string seed into heavy_edge", lambda: heavy_edge(nx.Graph([(0, 1), (2, 3)]), [2, 2], seed="x"),
     "gpu-mapping", "seed"),
    ("seed", "a negative seed into heavy_edge_job", lambda: heavy_edge_job(JOB, [2, 2], seed=-3), "gpu-mapping", "seed"),
    ("seed", "a float seed into heavy_edge_arrays", lambda: heavy_edge_arrays(2, [0], [1], [1.0], [2], seed=0.5),
     "gpu-mapping", "seed"),
    ("seed", "a string seed into place", lambda: gpu_place(JOB, {"a": 2, "b": 2}, seed="x"), "gpu-mapping", "seed"),
    ("seed", "a string seed into alpha_min_estimate", lambda: alpha_min_estimate(JOB, CL, seed="x"), "gpu-mapping",
     "seed"),
    ("seed", "a string seed into check_algorithm", lambda: check_algorithm("nimp", "titan", seeds=("a",)), "nimp",
     "seeds[0]"),
    ("seed", "a negative seed into check_algorithm", lambda: check_algorithm("nimp", "titan", seeds=(0, -1)), "nimp",
     "seeds[1]"),
    ("seed", "seeds given as a string", lambda: check_algorithm("nimp", "titan", seeds="01"), "nimp", "seeds"),
    ("seed", "a string seed into assert_within", lambda: assert_within("nimp", "titan", NI, seed="x"), "nimp", "seed"),
    ("seed", "a string seed into optimum", lambda: optimum("nimp", NI, seed="x"), "nimp", "seed"),
    ("seed", "a string seed into rar-ddls rand", lambda: rand(RA, seed="x"), "rar-ddls", "seed"),
    ("seed", "a string seed into A-SRPT", lambda: ASRPT(DDI.cluster, DDI.models, seed="x"), "ddlwmp", "seed"),
    ("seed", "a negative seed into SPJF", lambda: SPJF(DDI.cluster, DDI.models, seed=-2), "ddlwmp", "seed"),
    ("seed", "a string seed into the ddlwmp Placer", lambda: Placer(DDI.cluster, DDI.models, seed="x"), "ddlwmp",
     "seed"),
    ("seed", "a negative seed into a registered run directly",
     lambda: optkit.get_formulation("nimp").algorithms["titan"].run(NI, objective="lex", time_limit=None, seed=-1),
     None, "seed"),
    # ------------------------------------------------------------ time_limit
    ("time_limit", "time_limit=0 into solve(cpsat) (was: a bound shortcut answered optimal)",
     lambda: solve("nimp", NI, "cpsat", time_limit=0), "nimp", "time_limit"),
    ("time_limit", "time_limit=0 into a heuristic", lambda: solve("nimp", NI, "titan", time_limit=0), "nimp",
     "time_limit"),
    ("time_limit", "a negative limit into solve(highs)", lambda: solve("gpu-mapping", GM, "highs", time_limit=-1),
     "gpu-mapping", "time_limit"),
    ("time_limit", "a NaN limit into solve(sjf-bco)", lambda: solve("rar-ddls", RA, "sjf-bco", time_limit=math.nan),
     "rar-ddls", "time_limit"),
    ("time_limit", "an infinite limit into solve(cpsat)", lambda: solve("rar-ddls", RA, "cpsat", time_limit=math.inf),
     "rar-ddls", "time_limit"),
    ("time_limit", "a string limit into solve(cpsat)", lambda: solve("ddlwmp", DD, "cpsat", time_limit="5"), "ddlwmp",
     "time_limit"),
    ("time_limit", "a boolean limit into solve(a-srpt)", lambda: solve("ddlwmp", DD, "a-srpt", time_limit=True),
     "ddlwmp", "time_limit"),
    ("time_limit", "time_limit=0 into gpu-mapping brute force",
     lambda: solve("gpu-mapping", GM, "brute-force", time_limit=0), "gpu-mapping", "time_limit"),
    ("time_limit", "time_limit=0 into nimp brute force", lambda: solve("nimp", NI, "brute-force", time_limit=0), "nimp",
     "time_limit"),
    ("time_limit", "time_limit=0 into optimum", lambda: optimum("nimp", NI, time_limit=0), "nimp", "time_limit"),
    ("time_limit", "a negative limit into assert_within", lambda: assert_within("nimp", "titan", NI, time_limit=-1),
     "nimp", "time_limit"),
    ("time_limit", "a NaN limit into schedule_batch", lambda: _batch(time_limit=math.nan), "rar-ddls", "time_limit"),
    ("time_limit", "time_limit=0 into schedule_batch", lambda: _batch(time_limit=0), "rar-ddls", "time_limit"),
    ("time_limit", "a NaN limit into the ddlwmp simulator (was taken)",
     lambda: simulate_ddlwmp(DDI, SPJF(DDI.cluster, DDI.models), time_limit=math.nan), "ddlwmp", "time_limit"),
    ("time_limit", "time_limit=0 into the nimp cluster replay (was taken)",
     lambda: replay([], POLICIES["titan"](), time_limit=0), "nimp", "time_limit"),
    ("time_limit", "time_limit=0 into an exact run called directly",
     lambda: __import__("optkit.formulations.ddlwmp.exact", fromlist=["run_cpsat"]).run_cpsat(DDI, time_limit=0),
     None, "time_limit"),
    # ------------------------------------------------------------ unknown keyword (a misspelt reading)
    ("keyword", "an unknown keyword to nimp place", lambda: nimp_place(NJ, HOSTS, 200e6, seed=0), "nimp", "seed"),
    ("keyword", "a misspelt keyword to gpu-mapping place",
     lambda: gpu_place(JOB, {"a": 2, "b": 2}, server_chioce="most-free"), "gpu-mapping", "server_chioce"),
    ("keyword", "a misspelt keyword to heavy_edge", lambda: heavy_edge(P4, [2, 2], sed=1), "gpu-mapping", "sed"),
    ("keyword", "a reading's short name to titan", lambda: titan([4, 4], [2, 4], 1e8, PH3, workers=3, tie_break="x"),
     "nimp", "tie_break"),
    ("keyword", "a misspelt keyword to schedule_batch", lambda: schedule_batch(RAR.jobs, {"a": 4}, NET, kapa=2),
     "rar-ddls", "kapa"),
    ("keyword", "a misspelt keyword to sjf_bco", lambda: sjf_bco(RA, lamda=1.0), "rar-ddls", "lamda"),
    ("keyword", "a misspelt keyword to elasticflow", lambda: elasticflow([2, 4], workers=3, machines="any"), "nimp",
     "machines"),
    ("keyword", "a misspelt keyword to solve", lambda: solve("nimp", NI, "titan", sed=1), None, "sed"),
    ("keyword", "an unknown parameter through check_algorithm",
     lambda: check_algorithm("nimp", "titan", params={"nope": 1}), "nimp", "--param nope"),
    ("keyword", "a missing argument of titan", lambda: titan([4, 4], [2, 4], 1e8, PH3), "nimp", "workers"),
    ("keyword", "a keyword-only argument given by position", lambda: heavy_edge_job(JOB, [2, 2], 0), "gpu-mapping",
     "heavy_edge_job"),
    ("keyword", "a misspelt keyword to optimum", lambda: optimum("nimp", NI, solver=["cpsat"]), None, "solver"),
    # ------------------------------------------------------------ a reading's value
    ("reading", "a bad single_gpu_weight (was a plain ValueError)",
     lambda: heavy_edge(P4, [2, 2], single_gpu_weight="x"), "gpu-mapping", "single_gpu_weight"),
    ("reading", "a bad server_start (was a plain ValueError)", lambda: heavy_edge_job(JOB, [2, 2], server_start="x"),
     "gpu-mapping", "server_start"),
    ("reading", "a bad server_choice", lambda: gpu_place(JOB, {"a": 2, "b": 2}, server_choice="x"), "gpu-mapping",
     "server_choice"),
    ("reading", "a bad server_choice (choose_servers)", lambda: choose_servers({"a": 2, "b": 2}, 3, server_choice="x"),
     "gpu-mapping", "server_choice"),
    ("reading", "a bad titan_step2 (nimp place)", lambda: nimp_place(NJ, HOSTS, 200e6, titan_step2="x"), "nimp",
     "titan_step2"),
    ("reading", "a bad titan_tie_break", lambda: titan([4, 4], [2, 4], 1e8, PH3, workers=3, titan_tie_break="x"),
     "nimp", "titan_tie_break"),
    ("reading", "a bad titan_algorithm", lambda: titan([4, 4], [2, 4], 1e8, PH3, workers=3, titan_algorithm="x"),
     "nimp", "titan_algorithm"),
    ("reading", "a bad elasticflow_machines", lambda: elasticflow([2, 4], workers=3, elasticflow_machines="x"), "nimp",
     "elasticflow_machines"),
    ("reading", "a bad tiresias_spread",
     lambda: tiresias([2, 4], workers=3, placement_sensitive=True, tiresias_spread="x"), "nimp", "tiresias_spread"),
    ("reading", "a bad fa_ffp", lambda: sjf_bco(RA, fa_ffp="x"), "rar-ddls", "fa_ffp"),
    ("reading", "a bad available (schedule_batch)", lambda: _batch(available="x"), "rar-ddls", "available"),
    ("reading", "u below 1", lambda: sjf_bco(RA, u=-1), "rar-ddls", "u"),
    ("reading", "a bad theta_search (FF)", lambda: ff(RA, theta_search="x"), "rar-ddls", "theta_search"),
    ("reading", "a bad rho_hat (LS)", lambda: ls(RA, rho_hat="x"), "rar-ddls", "rho_hat"),
    ("reading", "a bad light_placement (was a plain ValueError)",
     lambda: ASRPT(DDI.cluster, DDI.models, light_placement="x"), "ddlwmp", "light_placement"),
    ("reading", "a negative comm_heavy (was a plain ValueError)", lambda: ASRPT(DDI.cluster, DDI.models, comm_heavy=-1),
     "ddlwmp", "comm_heavy"),
    ("reading", "a NaN tau (was taken)", lambda: ASRPT(DDI.cluster, DDI.models, tau=math.nan), "ddlwmp", "tau"),
    ("reading", "a bad head_of_line", lambda: ASRPT(DDI.cluster, DDI.models, head_of_line="x"), "ddlwmp",
     "head_of_line"),
    ("reading", "a bad server_start (Placer)", lambda: Placer(DDI.cluster, DDI.models, server_start="x"), "ddlwmp",
     "server_start"),
    ("reading", "a bad two_replica_ring", lambda: PipelineJob(JOB.stages, "ring", "x"), "gpu-mapping",
     "job.two_replica_ring"),
    ("reading", "a bad reading through solve's params", lambda: solve("nimp", NI, "titan", params={"titan_step2": "x"}),
     "nimp", "--param titan_step2"),
    ("reading", "a tuning parameter of the wrong type through solve",
     lambda: solve("ddlwmp", DD, "cpsat", params={"workers": "2"}), "ddlwmp", "workers"),
    ("reading", "no CP-SAT workers through solve", lambda: solve("ddlwmp", DD, "cpsat", params={"workers": 0}),
     "ddlwmp", "workers"),
    # ------------------------------------------------------------ a count that is not whole
    ("fraction", "free GPUs [2.5, 2.5] for 4 replicas (was truncated to [2, 2])", lambda: heavy_edge_job(JOB, [2.5, 2.5]),
     "gpu-mapping", "free_gpus[0]"),
    ("fraction", "free GPUs [1.5, 2.5] (heavy_edge)", lambda: heavy_edge(P4, [1.5, 2.5]), "gpu-mapping", "free_gpus[0]"),
    ("fraction", "free GPUs [2, 2.0000001]", lambda: heavy_edge_job(JOB, [2, 2.0000001]), "gpu-mapping",
     "free_gpus[1]"),
    ("fraction", "a fractional vertex count", lambda: heavy_edge_arrays(4.5, [0], [1], [1.0], [2, 2]), "gpu-mapping",
     "n"),
    ("fraction", "a fractional need", lambda: choose_servers({"a": 2, "b": 2}, 2.5), "gpu-mapping", "need"),
    ("fraction", "fractional free GPUs (place)", lambda: gpu_place(JOB, {"a": 2.5, "b": 1.5}), "gpu-mapping",
     "free['a']"),
    ("fraction", "a fractional GPU count (titan)", lambda: titan([4.5, 4], [2, 4], 1e8, PH3, workers=3), "nimp",
     "gpus[0]"),
    ("fraction", "fractional workers (titan)", lambda: titan([4, 4], [2, 4], 1e8, PH3, workers=2.5), "nimp", "workers"),
    ("fraction", "a fractional machine", lambda: Machine(4.5, 2), "nimp", "machine.gpus"),
    ("fraction", "fractional workers (nimp Job)", lambda: NimpJob(2.5, "ring", 1e8), "nimp", "job.workers"),
    ("fraction", "fractional GPUs (rar-ddls Job)", lambda: RarJob(**{**RAR.jobs[0].to_dict(), "gpus": 2.5}), "rar-ddls",
     "job.gpus"),
    ("fraction", "a fractional server (schedule_batch)", lambda: schedule_batch(RAR.jobs, {"a": 2.5, "b": 4}, NET),
     "rar-ddls", "servers['a']"),
    ("fraction", "fractional servers (DdlwmpCluster, was taken)", lambda: DdlwmpCluster(2.5, 8, 1.25e9, 3e11), "ddlwmp",
     "cluster.servers"),
    ("fraction", "fractional GPUs (fewest_servers, was taken)", lambda: fewest_servers(5.5, 4), "gpu-mapping", "n_gpus"),
    ("fraction", "fractional workers (elasticflow)", lambda: elasticflow([2, 4], workers=2.5), "nimp", "workers"),
    ("fraction", "fractional idle GPUs (hived, was taken)", lambda: hived([4, 4], [2.5, 4], workers=3), "nimp",
     "idle_gpus[0]"),
    ("fraction", "fractional idle GPUs (tiresias, was taken)",
     lambda: tiresias([2.5, 4], workers=3, placement_sensitive=True), "nimp", "idle_gpus[0]"),
    ("fraction", "a fractional horizon", lambda: _batch(horizon=10.5), "rar-ddls", "horizon"),
    ("fraction", "a fractional job size (JobSpec)", lambda: _arrive(JobSpec("x", 0.0, MODEL, 1.5, 5.0)), "ddlwmp",
     "job.gpus"),
    ("fraction", "a half-GPU free count (ClusterState)",
     lambda: ASRPT(DDI.cluster, DDI.models).decide(0.0, ClusterState(np.array([1.5] * DDI.cluster.servers), 4)),
     "ddlwmp", "state.free"),
    # ------------------------------------------------------------ a number that is not finite
    ("non-finite", "a NaN bandwidth", lambda: Cluster(8, math.nan, 3e11), "gpu-mapping", "cluster.inter_bandwidth"),
    ("non-finite", "an infinite stage time", lambda: Stage(2, math.inf, .2, 0, 0, 1), "gpu-mapping", "stage.fwd_time"),
    ("non-finite", "NaN parameter bytes", lambda: NimpJob(2, "ring", math.nan), "nimp", "job.param_bytes"),
    ("non-finite", "a NaN capacity (titan)", lambda: titan([4, 4], [2, 4], math.nan, PH3, workers=3), "nimp",
     "capacity"),
    ("non-finite", "NaN in a capacity matrix (titan)",
     lambda: titan([4, 4], [2, 4], [[0, math.nan], [math.nan, 0]], PH3, workers=3), "nimp", "capacity"),
    ("non-finite", "a NaN capacity (place)", lambda: nimp_place(NJ, HOSTS, math.nan), "nimp", "pair_capacity_bytes"),
    ("non-finite", "a NaN pair capacity (place)",
     lambda: nimp_place(NJ, {"a": Machine(8, 2), "c": Machine(8, 3)}, {("a", "c"): math.nan}), "nimp",
     "pair_capacity_bytes[0][1]"),
    ("non-finite", "a NaN network bandwidth",
     lambda: Network(math.nan, NET.intra_bandwidth, NET.compute_speed, NET.xi1, NET.xi2, NET.degradation), "rar-ddls",
     "network.inter_bandwidth"),
    ("non-finite", "a NaN slot length", lambda: _batch(slot_seconds=math.nan), "rar-ddls", "instance.slot_seconds"),
    ("non-finite", "an infinite ddlwmp bandwidth (was taken)", lambda: DdlwmpCluster(2, 8, math.inf, 3e11), "ddlwmp",
     "cluster.inter_bandwidth"),
    ("non-finite", "a NaN edge weight (was taken)", lambda: heavy_edge_arrays(4, [0, 1], [1, 2], [math.nan, 1.0], [2, 2]),
     "gpu-mapping", "w[0]"),
    ("non-finite", "an infinite graph edge weight (was taken)",
     lambda: heavy_edge(nx.Graph([(0, 1, {"weight": math.inf}), (2, 3)]), [2, 2]), "gpu-mapping", "w[0]"),
    ("non-finite", "a NaN lambda", lambda: sjf_bco(RA, lam=math.nan), "rar-ddls", "lam"),
    ("non-finite", "a NaN release (was taken)", lambda: _arrive(JobSpec("x", math.nan, MODEL, 1, 5.0)), "ddlwmp",
     "job.release"),
    ("non-finite", "an infinite prediction", lambda: _arrive(JobSpec("x", 0.0, MODEL, 1, math.inf)), "ddlwmp",
     "job.predicted_iterations"),
    ("non-finite", "a NaN ratio", lambda: assert_within("nimp", "titan", NI, ratio=math.nan), "nimp", "ratio"),
    # ------------------------------------------------------------ out of range: negative, zero, above the hardware
    ("range", "a server of no free GPUs (heavy_edge)", lambda: heavy_edge(P4, [4, 0]), "gpu-mapping", "free_gpus[1]"),
    ("range", "free GPUs that do not add up", lambda: heavy_edge(P4, [2, 1]), "gpu-mapping", "free_gpus"),
    ("range", "negative free GPUs (place)", lambda: gpu_place(JOB, {"a": 5, "b": -1}), "gpu-mapping", "free['b']"),
    ("range", "a need of 0", lambda: choose_servers({"a": 2, "b": 2}, 0), "gpu-mapping", "need"),
    ("range", "negative free GPUs (choose_servers)", lambda: choose_servers({"a": -2, "b": 6}, 3), "gpu-mapping",
     "free['a']"),
    ("range", "servers of no GPUs (fewest_servers, was a ZeroDivisionError)", lambda: fewest_servers(4, 0),
     "gpu-mapping", "gpus_per_server"),
    ("range", "a negative GPU count (fewest_servers, was taken)", lambda: fewest_servers(-4, 2), "gpu-mapping", "n_gpus"),
    ("range", "negative idle GPUs (titan)", lambda: titan([4, 4], [-1, 4], 1e8, PH3, workers=3), "nimp",
     "idle_gpus[0]"),
    ("range", "a negative capacity (titan)", lambda: titan([4, 4], [2, 4], -1e8, PH3, workers=3), "nimp", "capacity"),
    ("range", "max_attempts=0 (titan, was taken)",
     lambda: titan([4, 4], [2, 4], 1e8, PH3, workers=3, max_attempts=0), "nimp", "max_attempts"),
    ("range", "a negative max_attempts (place, was taken)", lambda: nimp_place(NJ, HOSTS, 2e8, max_attempts=-1), "nimp",
     "max_attempts"),
    ("range", "a job of no workers (elasticflow, was taken)", lambda: elasticflow([2, 4], workers=0), "nimp", "workers"),
    ("range", "more idle GPUs than the machine has (hived, was taken)", lambda: hived([4, 4], [6, 4], workers=3),
     "nimp", "idle_gpus[0]"),
    ("range", "more idle GPUs than the machine has (elasticflow, was taken)",
     lambda: elasticflow([6, 4], workers=3, gpus=[4, 4]), "nimp", "idle_gpus[0]"),
    ("range", "negative idle GPUs (tiresias, was taken)", lambda: tiresias([-1, 4], workers=3, placement_sensitive=True),
     "nimp", "idle_gpus[0]"),
    ("range", "a horizon of 0", lambda: _batch(horizon=0), "rar-ddls", "horizon"),
    ("range", "kappa=0", lambda: _batch(kappa=0), "rar-ddls", "kappa"),
    ("range", "a negative lambda", lambda: sjf_bco(RA, lam=-1), "rar-ddls", "lam"),
    ("range", "a node claiming more free GPUs than the cluster's servers have (place, was placed on)",
     lambda: gpu_place(JOB, {"a": 12, "b": 2}, cluster=CL), "gpu-mapping", "free['a']"),
    ("range", "a ddlwmp state claiming 6 free GPUs on 4-GPU servers (was placed on)",
     lambda: ASRPT(DDI.cluster, DDI.models).decide(0.0, ClusterState(np.array([6] + [4] * (DDI.cluster.servers - 1)),
                                                                     4)), "ddlwmp", "state.free"),
    ("range", "negative free GPUs (ClusterState)",
     lambda: FIFO(DDI.cluster, DDI.models).decide(0.0, ClusterState(np.array([-1] * DDI.cluster.servers), 4)),
     "ddlwmp", "state.free"),
    ("range", "negative counts (stage_times, was NaN)", lambda: stage_times(JOB, CL, np.array([[2, -1], [0, 2]])),
     "gpu-mapping", "counts"),
    ("range", "a negative edge weight (was dropped)", lambda: heavy_edge_arrays(4, [0, 1], [1, 2], [-1.0, 1.0], [2, 2]),
     "gpu-mapping", "w[0]"),
    ("range", "a negative graph edge weight (was dropped)",
     lambda: heavy_edge(nx.Graph([(0, 1, {"weight": -5.0}), (2, 3)]), [2, 2]), "gpu-mapping", "w[0]"),
    ("range", "a job of no GPUs (JobSpec)", lambda: _arrive(JobSpec("x", 0.0, MODEL, 0, 5.0)), "ddlwmp", "job.gpus"),
    ("range", "a negative ratio", lambda: assert_within("nimp", "titan", NI, ratio=-1), "nimp", "ratio"),
    ("range", "no default instances", lambda: default_instances("nimp", 0), "nimp", "n"),
    # ------------------------------------------------------------ sizes that disagree, ids that do not exist
    ("size", "a count matrix of the wrong shape (was a numpy broadcast error)",
     lambda: alpha_from_counts(JOB, CL, np.zeros((3, 3))), "gpu-mapping", "counts"),
    ("size", "edge arrays of different lengths (was taken)", lambda: heavy_edge_arrays(4, [0, 1], [1], [1.0, 1.0], [2, 2]),
     "gpu-mapping", "u"),
    ("size", "an edge to a vertex that does not exist (was an IndexError)",
     lambda: heavy_edge_arrays(4, [0, 1], [1, 7], [1.0, 1.0], [2, 2]), "gpu-mapping", "v[1]"),
    ("size", "more idle lists than machines (hived, was a numpy error)", lambda: hived([4, 4, 4], [2, 4], workers=3),
     "nimp", "idle_gpus"),
    ("size", "gpus for fewer machines than idle_gpus (elasticflow, was taken)",
     lambda: elasticflow([2, 4], workers=3, gpus=[4]), "nimp", "idle_gpus"),
    ("size", "a 2 x 2 capacity for 3 machines", lambda: titan([4, 4, 4], [1, 4, 2], [[1e8, 1e8], [1e8, 1e8]], PH3,
                                                               workers=3), "nimp", "capacity"),
    ("size", "no machines", lambda: titan([], [], 1e8, PH3, workers=2), "nimp", "gpus"),
    ("size", "a pair of a node not among the machines", lambda: nimp_place(NJ, {"a": Machine(8, 2), "c": Machine(8, 3)},
                                                                             {("a", "z"): 1e8}), "nimp",
     "pair_capacity_bytes[('a', 'z')]"),
    ("size", "a busy GPU of an unknown node", lambda: _batch(busy_until={("nope", 0): 4}), "rar-ddls",
     "busy_until[('nope', 0)]"),
    ("size", "duplicate job ids (schedule_batch)", lambda: schedule_batch([RAR.jobs[0], RAR.jobs[0]], SERVERS, NET),
     "rar-ddls", "jobs[1].id"),
    ("size", "a job arriving twice (A-SRPT)", lambda: [
        p.on_arrival(JobSpec("x", 0.0, MODEL, DDI.models[MODEL].n_replicas, 5.0), 0.0) for p in
        [ASRPT(DDI.cluster, DDI.models)] * 2], "ddlwmp", "job.id"),
    ("size", "an unknown model", lambda: _arrive(JobSpec("x", 0.0, "nope", 1, 5.0)), "ddlwmp", "job.model"),
    ("size", "a 2-d ClusterState", lambda: FIFO(DDI.cluster, DDI.models).decide(0.0, ClusterState(np.ones((2, 2),
                                                                                                         int), 4)),
     "ddlwmp", "state.free"),
    # ------------------------------------------------------------ the wrong type of object
    ("type", "a list for the graph (was an AttributeError)", lambda: heavy_edge([1, 2], [1, 1]), "gpu-mapping", "graph"),
    ("type", "free GPUs as a string (was read as digits)", lambda: heavy_edge(P4, "22"), "gpu-mapping", "free_gpus"),
    ("type", "a dict for the job (heavy_edge_job, was an AttributeError)", lambda: heavy_edge_job(JOB.to_dict(), [2, 2]),
     "gpu-mapping", "job"),
    ("type", "a dict for the job (place)", lambda: gpu_place(JOB.to_dict(), {"a": 2, "b": 2}), "gpu-mapping", "job"),
    ("type", "a list for free (place)", lambda: gpu_place(JOB, [2, 2]), "gpu-mapping", "free"),
    ("type", "a dict for the cluster (place, was an AttributeError)",
     lambda: gpu_place(JOB, {"a": 2, "b": 2}, cluster={"gpus_per_server": 8}), "gpu-mapping", "cluster"),
    ("type", "a dict for the cluster (alpha_min_estimate)", lambda: alpha_min_estimate(JOB, CL.to_dict()),
     "gpu-mapping", "cluster"),
    ("type", "a dict for the job (nimp place)", lambda: nimp_place(NJ.to_dict(), HOSTS, 2e8), "nimp", "job"),
    ("type", "a string capacity (nimp place)", lambda: nimp_place(NJ, HOSTS, "2e8"), "nimp", "pair_capacity_bytes"),
    ("type", "numbers for the phases (titan, was an AttributeError)", lambda: titan([4, 4], [2, 4], 1e8, [1, 2],
                                                                                    workers=3), "nimp", "phases"),
    ("type", "a string for idle GPUs (tiresias)", lambda: tiresias("24", workers=3, placement_sensitive=True), "nimp",
     "idle_gpus"),
    ("type", "a dict for the network (schedule_batch)", lambda: schedule_batch(RAR.jobs, {"a": 4, "b": 4}, NET.to_dict()),
     "rar-ddls", "network"),
    ("type", "a list for the servers (schedule_batch)", lambda: schedule_batch(RAR.jobs, [4, 4], NET), "rar-ddls",
     "servers"),
    ("type", "a list for the instance (sjf_bco)", lambda: sjf_bco([1, 2]), "rar-ddls", "instance"),
    ("type", "a list for the instance (solve, was an AttributeError)", lambda: solve("nimp", [1, 2], "titan"), "nimp",
     "instance"),
    ("type", "another problem's instance (solve, was an AttributeError)",
     lambda: solve("nimp", RAR, "titan"), "nimp", "instance"),
    ("type", "another problem's instance (optimum)", lambda: optimum("nimp", RAR), "nimp", "instance"),
    ("type", "an unknown algorithm", lambda: solve("nimp", NI, "nope"), "nimp", "algorithm"),
    ("type", "an unknown objective", lambda: solve("nimp", NI, "titan", objective="nope"), "nimp", "objective"),
    ("type", "a string for the replicas", lambda: Stage("2", .1, .2, 0, 0, 1), "gpu-mapping", "stage.replicas"),
    ("type", "a boolean for the GPUs", lambda: Machine(True, 1), "nimp", "machine.gpus"),
    ("type", "a string job size (JobSpec)", lambda: _arrive(JobSpec("x", 0.0, MODEL, "2", 5.0)), "ddlwmp", "job.gpus"),
    ("type", "a list of models (A-SRPT, failed later)", lambda: ASRPT(DDI.cluster, list(DDI.models.values())), "ddlwmp",
     "models"),
    ("type", "a dict for a model (A-SRPT)", lambda: ASRPT(DDI.cluster, {m: j.to_dict() for m, j in DDI.models.items()}),
     "ddlwmp", f"models[{MODEL!r}]"),
    ("type", "a dict for the cluster (A-SRPT, was an AttributeError)", lambda: ASRPT(DDI.cluster.to_dict(), DDI.models),
     "ddlwmp", "cluster"),
    ("type", "a list for the free view (ClusterState)",
     lambda: FIFO(DDI.cluster, DDI.models).decide(0.0, ClusterState([4] * DDI.cluster.servers, 4)), "ddlwmp",
     "state.free"),
    # ------------------------------------------------------------ the engine
    ("engine", "an unknown problem", lambda: solve("nope", NI, "titan"), None, "problem"),
    ("engine", "a problem that is not a name", lambda: solve(3, NI, "titan"), None, "problem"),
    ("engine", "an unknown formulation", lambda: optkit.get_formulation("nope"), None, "problem"),
    ("engine", "a file that does not exist", lambda: load_instance("/nonexistent/instance.json"), None,
     "/nonexistent/instance.json"),
    ("engine", "data JSON cannot hold (instance_hash, was a TypeError)", lambda: instance_hash({"a": object()}), None,
     "instance"),
    ("engine", "NaN in an instance dict (instance_hash)", lambda: instance_hash({"a": math.nan}), None, "instance"),
    ("engine", "an unknown check", lambda: check_algorithm("nimp", "titan", checks=["nope"]), "nimp", "checks"),
    ("engine", "an unknown algorithm (check_algorithm)", lambda: check_algorithm("nimp", "nope"), "nimp", "algorithm"),
    ("engine", "an unknown objective (check_algorithm)", lambda: check_algorithm("nimp", "titan", objectives=["nope"]),
     "nimp", "objective"),
    ("engine", "no seeds", lambda: check_algorithm("nimp", "titan", seeds=()), "nimp", "seeds"),
    ("engine", "a bad instance (check_algorithm)", lambda: check_algorithm("nimp", "titan", instances=[{"x": 1}]),
     "nimp", "instances[0].machines"),
    ("engine", "another problem's instance (check_algorithm)", lambda: check_algorithm("nimp", "titan", instances=[RAR]),
     "nimp", "instances[0]"),
    ("engine", "a string n (default_instances, was a TypeError)", lambda: default_instances("nimp", "3"), "nimp", "n"),
    ("engine", "an unknown solver name (optimum, fell back to a bound)", lambda: optimum("nimp", NI, solvers=["nope"]),
     "nimp", "solvers"),
    ("engine", "solvers as one string (optimum)", lambda: optimum("nimp", NI, solvers="cpsat"), "nimp", "solvers"),
    ("engine", "an unknown objective (optimum)", lambda: optimum("nimp", NI, objective="nope"), "nimp", "objective"),
    ("engine", "a string ratio", lambda: assert_within("nimp", "titan", NI, ratio="2"), "nimp", "ratio"),
    ("engine", "an unknown algorithm (assert_within)", lambda: assert_within("nimp", "nope", NI), "nimp", "algorithm"),
    ("engine", "a string objective (relative_gap, was a TypeError)", lambda: optkit.relative_gap("a", 1.0), None,
     "objective"),
    ("engine", "a string bound (relative_gap)", lambda: optkit.relative_gap(1.0, "0"), None, "bound"),
]

CLASSES = ("seed", "time_limit", "keyword", "reading", "fraction", "non-finite", "range", "size", "type", "engine")


@pytest.mark.parametrize("kind,what,call,problem,field", ROWS, ids=[f"{r[0]}: {r[1]}" for r in ROWS])
def test_bad_input_is_an_input_error_naming_the_field(kind: str, what: str, call: Callable[[], Any],
                                                      problem: str | None, field: str) -> None:
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field == field, f"{what}: {err.value}"
    if problem is not None:
        assert err.value.problem == problem and str(err.value).startswith(f"{problem}: "), f"{what}: {err.value}"


def test_every_case_class_is_covered() -> None:
    """At least 120 rows, each class of the issue populated, no row twice."""
    counts = Counter(kind for kind, *_ in ROWS)
    assert len(ROWS) >= 120 and set(counts) == set(CLASSES) and min(counts.values()) >= 5, counts
    assert len({r[1] for r in ROWS}) == len(ROWS)


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "x"])
def test_time_limit_words_are_the_clis(value: str) -> None:
    """``--time-limit`` and ``time_limit=`` refuse the same values with the same words."""
    with pytest.raises(argparse.ArgumentTypeError) as cli:
        time_limit_arg(value)
    with pytest.raises(InputError) as api:
        check_time_limit(float(value) if value != "x" else value)
    assert str(cli.value).startswith(TIME_LIMIT_MESSAGE) and api.value.message.startswith(TIME_LIMIT_MESSAGE)
    assert api.value.field == "time_limit"


@pytest.mark.parametrize("value", ["-1", "1.5", "x"])
def test_seed_words_are_the_clis(value: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as cli:
        seed_arg(value)
    py_value = float(value) if value == "1.5" else (int(value) if value == "-1" else value)
    with pytest.raises(InputError) as api:
        check_seed(py_value)
    assert str(cli.value).startswith(SEED_MESSAGE) and api.value.message.startswith(SEED_MESSAGE)


def test_good_seeds_and_limits_pass_unchanged() -> None:
    """What the checks accept: None, integers >= 0 (numpy's too), finite limits > 0 (ints become
    floats); a generator only where the entry documents one."""
    assert check_seed(None) is None and check_seed(np.int64(3)) == 3 and type(check_seed(np.int64(3))) is int
    assert check_time_limit(None) is None and check_time_limit(2) == 2.0 and check_time_limit(1e-3) == 1e-3
    rng = np.random.default_rng(0)
    assert check_seed(rng, generator=True) is rng
    with pytest.raises(InputError):
        check_seed(rng)
    assert rand(RA, seed=np.random.default_rng(1))[1] is not None


def test_free_gpus_are_never_truncated() -> None:
    """The issue's wrong answer: [2.5, 2.5] was read as [2, 2] and a 4-replica job placed; a
    whole-valued float (2.0) is still a count."""
    assert heavy_edge_job(JOB, [2.0, 2.0]) == heavy_edge_job(JOB, [2, 2])
    with pytest.raises(InputError, match=r"free_gpus\[0\] must be an integer, got float 2.5"):
        heavy_edge_job(JOB, [2.5, 2.5])


def test_a_misspelt_keyword_names_the_closest_one() -> None:
    with pytest.raises(InputError, match="did you mean 'server_choice'"):
        gpu_place(JOB, {"a": 2, "b": 2}, server_chioce="most-free")


def test_a_type_error_inside_a_checked_function_is_not_renamed() -> None:
    """:func:`optkit.validation.checked_arguments` renames only argument mistakes: a
    ``TypeError`` raised by the function's own body, with arguments that fit, propagates."""
    from optkit.validation import checked_arguments

    @checked_arguments("nimp")
    def body(a: int, *, b: int = 0) -> int:
        return a + "x"  # type: ignore[operator, no-any-return]

    with pytest.raises(TypeError, match="unsupported operand"):
        body(1, b=2)
    with pytest.raises(InputError) as err:
        body(1, c=2)
    assert err.value.field == "c" and err.value.problem == "nimp"
