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
import json
import math
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

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
from optkit.formulations.ddlwmp.online import OnlineScheduler as DdlwmpScheduler
from optkit.formulations.ddlwmp.placement import Placer
from optkit.formulations.ddlwmp.policies import ClusterState, JobSpec
from optkit.formulations.ddlwmp.simulate import simulate as simulate_ddlwmp
from optkit.formulations.gpu_mapping import (Cluster, PipelineJob, Stage, alpha_from_counts, alpha_min_estimate,
                                             choose_servers, fewest_servers, heavy_edge, heavy_edge_arrays,
                                             heavy_edge_job, place as gpu_place, stage_times)
from optkit.formulations.gpu_mapping.generate import random_small
from optkit.formulations.gpu_mapping.refine import heavy_edge_refine, refine_mapping
from optkit.formulations.nimp import place as nimp_place, titan
from optkit.formulations.nimp.baselines import elasticflow, hived, tiresias
from optkit.formulations.nimp.generate import tiny as nimp_tiny
from optkit.formulations.nimp.model import Job as NimpJob, Machine, ring_phases
from optkit.formulations.nimp.online import POLICIES, OnlineScheduler as NimpScheduler
from optkit.formulations.nimp.replay import ReplayJob, replay
from optkit.formulations.rar_ddls import schedule_batch
from optkit.formulations.rar_ddls.baselines import ff, ls, rand
from optkit.formulations.rar_ddls.generate import tiny as rar_tiny
from optkit.formulations.rar_ddls.model import Job as RarJob, Network, RarInstance, simulate as rar_simulate
from optkit.formulations.rar_ddls.sjf_bco import sjf_bco
from optkit.harness.compare import compare
from optkit.instances import instance_hash, load_instance
from optkit.online import ClusterView, Job as OnlineJob
from optkit.readings import check_params, parse_param_values, readings_for, resolve_params
from optkit.testing import assert_within, check_algorithm, default_instances, optimum
from optkit.validation import SEED_MESSAGE, TIME_LIMIT_MESSAGE, check_seed, check_time_limit
from optkit.worst_case import worst_case

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
NIF = optkit.get_formulation("nimp")


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



class Pairs(Mapping[Any, Any]):
    """A user's own mapping over a list of ``(node, value)`` pairs: its iteration lists a node as
    often as the list does (the issue's "a nimp mapping listing a node twice")."""

    def __init__(self, pairs: list[tuple[Any, Any]]) -> None:
        self.pairs = pairs

    def __getitem__(self, key: Any) -> Any:
        for k, v in self.pairs:
            if k == key:
                return v
        raise KeyError(key)

    def __iter__(self) -> Iterator[Any]:
        return (k for k, _ in self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)


_TMP = Path(tempfile.mkdtemp(prefix="optkit-bad-inputs-"))  # nothing is written there: every row is refused first


def _compare(**kw: Any) -> Any:
    return compare("nimp", [("a", NI)], ["titan"], db=str(_TMP / "r.sqlite"), progress=False, **kw)


def _worst(**kw: Any) -> Any:
    return worst_case("rar-ddls", "ls", _TMP / "wc", progress=False, max_evals=1, **kw)


def _ddlwmp_decide(free: dict[str, int], size: dict[str, int]) -> Any:
    s = DdlwmpScheduler(nodes={"a": 4, "b": 4})
    s.on_arrival(OnlineJob("j", 0.0, 2, duration=1.0), 0.0)
    return s.decide(0.0, ClusterView(free, size))


def _nimp_decide(free: dict[str, int], size: dict[str, int]) -> Any:
    s = NimpScheduler(nodes={"a": 4, "b": 4})
    s.on_arrival(OnlineJob("j", 0.0, 2, param_bytes=1e8), 0.0)
    return s.decide(0.0, ClusterView(free, size, pair_capacity=1e9))


GMF = optkit.get_formulation("gpu-mapping")

ROWS += [
    # ------------------------------------------------------------ seed and time_limit at the other entries
    ("seed", "a string seed into compare", lambda: _compare(seeds=["1"]), "nimp", "seeds[0]"),
    ("seed", "a negative seed into compare", lambda: _compare(seeds=[0, -1]), "nimp", "seeds[1]"),
    ("seed", "a boolean seed into compare", lambda: _compare(seeds=[True]), "nimp", "seeds[0]"),
    ("seed", "seeds given as one number (compare)", lambda: _compare(seeds=3), "nimp", "seeds"),
    ("seed", "a string seed into worst_case (was a numpy TypeError)", lambda: _worst(seed="1"), "rar-ddls", "--seed"),
    ("seed", "a negative seed into worst_case (was a numpy ValueError)", lambda: _worst(seed=-1), "rar-ddls",
     "--seed"),
    ("seed", "a fractional seed into worst_case", lambda: _worst(seed=0.5), "rar-ddls", "--seed"),
    ("seed", "a string seed into the ddlwmp OnlineScheduler", lambda: DdlwmpScheduler(nodes={"a": 4}, seed="1"),
     "ddlwmp", "seed"),
    ("seed", "a boolean seed into the ddlwmp OnlineScheduler", lambda: DdlwmpScheduler(nodes={"a": 4}, seed=False),
     "ddlwmp", "seed"),
    ("seed", "a float seed into a check_algorithm hash seed", lambda: check_algorithm("nimp", "titan",
                                                                                      hash_seeds=[1.0]), "nimp",
     "hash_seeds[0]"),
    ("seed", "a boolean seed into solve(cpsat), a bound shortcut's path",
     lambda: solve("nimp", NI, "cpsat", seed=True), "nimp", "seed"),
    ("time_limit", "time_limit=0 into compare", lambda: _compare(time_limit=0), "nimp", "time_limit"),
    ("time_limit", "a NaN limit into compare", lambda: _compare(time_limit=math.nan), "nimp", "time_limit"),
    ("time_limit", "a string limit into compare (was a message of its own)", lambda: _compare(time_limit="5"),
     "nimp", "time_limit"),
    ("time_limit", "no limit into compare (the harness always kills at one)", lambda: _compare(time_limit=None),
     "nimp", "time_limit"),
    ("time_limit", "a budget of 0 into worst_case", lambda: _worst(budget=0), "rar-ddls", "--budget"),
    ("time_limit", "an infinite oracle limit into worst_case", lambda: _worst(oracle_time_limit=math.inf), "rar-ddls",
     "--oracle-time-limit"),
    ("time_limit", "time_limit=0 into the registered heavy-edge run (was taken)",
     lambda: GMF.algorithms["heavy-edge"].run(GMF.instance_from_dict(GM), objective="cut", time_limit=0, seed=None),
     "gpu-mapping", "time_limit"),
    ("time_limit", "time_limit=0 into heavy_edge_refine (was taken)",
     lambda: heavy_edge_refine(GMF.instance_from_dict(GM), time_limit=0), "gpu-mapping", "time_limit"),
    ("seed", "a string seed into refine_mapping", lambda: refine_mapping(GMF.instance_from_dict(GM), seed="1"),
     "gpu-mapping", "seed"),
    ("type", "an unknown objective to heavy_edge_refine (was a plain ValueError)",
     lambda: heavy_edge_refine(GMF.instance_from_dict(GM), objective="makespan"), "gpu-mapping", "objective"),
    ("time_limit", "a negative limit into the nimp replay", lambda: replay([], POLICIES["titan"](), time_limit=-1),
     "nimp", "time_limit"),
    ("time_limit", "time_limit=0 into rar-ddls cpsat with its bound shortcut on",
     lambda: solve("rar-ddls", RA, "cpsat", time_limit=0, params={"shortcut": True}), "rar-ddls", "time_limit"),
    # ------------------------------------------------------------ unknown keywords at the other entries
    ("keyword", "a misspelt keyword to compare", lambda: _compare(seed=1), None, "seed"),
    ("keyword", "a misspelt keyword to worst_case", lambda: worst_case("rar-ddls", "ls", _TMP, sed=1), None, "sed"),
    ("keyword", "a misspelt reading to the ddlwmp OnlineScheduler (was 'params')",
     lambda: DdlwmpScheduler(nodes={"a": 4}, tua=1.0), "ddlwmp", "tua"),
    ("keyword", "a ddlwmp keyword to the nimp OnlineScheduler (was 'readings')",
     lambda: NimpScheduler(nodes={"a": 4}, inter_bandwidth=1e9), "nimp", "inter_bandwidth"),
    ("keyword", "another policy's reading to the nimp OnlineScheduler",
     lambda: NimpScheduler("hived", nodes={"a": 4}, titan_step2="pool-prefix"), "nimp", "titan_step2"),
    ("keyword", "params that are not a mapping (check_params, was a TypeError)",
     lambda: check_params(NIF, "titan", [("titan_step2", "x")]), "nimp", "params"),
    # ------------------------------------------------------------ readings at the other entries
    ("reading", "tau below 0 to the ddlwmp OnlineScheduler (was 'params')",
     lambda: DdlwmpScheduler(nodes={"a": 4}, tau=-1), "ddlwmp", "tau"),
    ("reading", "comm_heavy below the reading's range (was taken by Python, refused by --param)",
     lambda: DdlwmpScheduler(nodes={"a": 4}, comm_heavy=0.5), "ddlwmp", "comm_heavy"),
    ("reading", "a bad consolidate (was taken)", lambda: DdlwmpScheduler("fifo", nodes={"a": 4}, consolidate="x"),
     "ddlwmp", "consolidate"),
    ("reading", "a bad work_conserving (was taken)", lambda: FIFO(DDI.cluster, DDI.models, work_conserving="yes"),
     "ddlwmp", "work_conserving"),
    ("reading", "a bad tiresias_spread to the nimp OnlineScheduler",
     lambda: NimpScheduler("tiresias", nodes={"a": 4}, tiresias_spread="x"), "nimp", "tiresias_spread"),
    ("reading", "a bad elasticflow_machines to the nimp OnlineScheduler (had no problem)",
     lambda: NimpScheduler("elasticflow", nodes={"a": 4}, elasticflow_machines="x"), "nimp", "elasticflow_machines"),
    ("reading", "readings of an algorithm the problem lacks (was an empty list)",
     lambda: readings_for(NIF, "nope"), "nimp", "algorithm"),
    ("reading", "params of an algorithm the problem lacks (was a KeyError)",
     lambda: resolve_params(NIF, "nope", {}), "nimp", "algorithm"),
    ("reading", "a sweep value with no key", lambda: parse_param_values(["tau"]), None, "--param"),
    # ------------------------------------------------------------ the online schedulers and their views
    ("online", "OnlineScheduler(inter_bandwidth=-1.25e9) (was a shorter iteration)",
     lambda: DdlwmpScheduler(nodes={"a": 4}, inter_bandwidth=-1.25e9), "ddlwmp", "inter_bandwidth"),
    ("online", "OnlineScheduler(inter_bandwidth=0) (was a NaN wake-up)",
     lambda: DdlwmpScheduler(nodes={"a": 4}, inter_bandwidth=0), "ddlwmp", "inter_bandwidth"),
    ("online", "a NaN intra bandwidth", lambda: DdlwmpScheduler(nodes={"a": 4}, intra_bandwidth=math.nan), "ddlwmp",
     "intra_bandwidth"),
    ("online", "a slot of 0 s", lambda: DdlwmpScheduler(nodes={"a": 4}, slot_seconds=0), "ddlwmp", "slot_seconds"),
    ("online", "nodes of two sizes (ddlwmp's servers have one)", lambda: DdlwmpScheduler(nodes={"a": 4, "b": 8}),
     "ddlwmp", "nodes"),
    ("online", "a node of no GPUs", lambda: NimpScheduler(nodes={"a": 4, "b": 0}), "nimp", "nodes['b']"),
    ("online", "a ddlwmp view claiming 6 free GPUs on a 4-GPU node (was placed on)",
     lambda: _ddlwmp_decide({"a": 6, "b": 4}, {"a": 4, "b": 4}), "ddlwmp", "cluster.free['a']"),
    ("online", "a nimp view claiming 6 free GPUs on a 4-GPU node",
     lambda: _nimp_decide({"a": 6, "b": 4}, {"a": 4, "b": 4}), "nimp", "cluster.free['a']"),
    ("online", "a ddlwmp view whose sizes differ from the scheduler's nodes",
     lambda: _ddlwmp_decide({"a": 4, "b": 4}, {"a": 8, "b": 4}), "ddlwmp", "cluster.size['a']"),
    ("online", "an unknown ddlwmp policy", lambda: DdlwmpScheduler("nope", nodes={"a": 4}), "ddlwmp", "policy"),
    ("online", "a list for the nodes", lambda: NimpScheduler(nodes=[4, 4]), "nimp", "nodes"),
    # ------------------------------------------------------------ a node listed twice
    ("duplicate", "a nimp mapping listing a node twice (place, was collapsed)",
     lambda: nimp_place(NJ, Pairs([("a", Machine(8, 8)), ("b", Machine(8, 2)), ("a", Machine(8, 8))]), 1e9), "nimp",
     "machines['a']"),
    ("duplicate", "nimp OnlineScheduler nodes listing a node twice (was collapsed)",
     lambda: NimpScheduler(nodes=Pairs([("a", 4), ("b", 4), ("a", 4)])), "nimp", "nodes['a']"),
    ("duplicate", "ddlwmp OnlineScheduler nodes listing a node twice (was collapsed)",
     lambda: DdlwmpScheduler(nodes=Pairs([("a", 4), ("a", 4)])), "ddlwmp", "nodes['a']"),
    ("duplicate", "gpu-mapping place's free listing a node twice (was collapsed)",
     lambda: gpu_place(JOB, Pairs([("a", 2), ("b", 2), ("a", 2)])), "gpu-mapping", "free['a']"),
    ("duplicate", "choose_servers' free listing a node twice",
     lambda: choose_servers(Pairs([("a", 2), ("a", 2)]), 3), "gpu-mapping", "free['a']"),
    ("duplicate", "schedule_batch's servers listing a node twice",
     lambda: schedule_batch(RAR.jobs, Pairs([("a", 4), ("b", 4), ("a", 4)]), NET), "rar-ddls", "servers['a']"),
    # ------------------------------------------------------------ simulate, replay, the rar-ddls contention model
    ("size", "placements of the wrong shape (rar-ddls simulate, was a numpy error)",
     lambda: rar_simulate(RAR, np.zeros((1, 1)), starts=[0] * len(RAR.jobs)), "rar-ddls", "y"),
    ("size", "starts for fewer jobs (rar-ddls simulate)",
     lambda: rar_simulate(RAR, np.zeros((len(RAR.jobs), len(RAR.servers))), starts=[0]), "rar-ddls", "starts"),
    ("size", "both starts and predecessors (rar-ddls simulate, was a ValueError)",
     lambda: rar_simulate(RAR, np.zeros((len(RAR.jobs), len(RAR.servers))), starts=[0] * len(RAR.jobs),
                          predecessors=[[]] * len(RAR.jobs)), "rar-ddls", "starts"),
    ("size", "a replay job larger than the cluster (had no problem)",
     lambda: replay([ReplayJob("x", 0.0, 10.0, 10**6, "m", 1e8, "ring")], POLICIES["titan"]()), "nimp",
     "jobs[0].workers"),
]

CLASSES = ("seed", "time_limit", "keyword", "reading", "fraction", "non-finite", "range", "size", "type", "engine",
           "online", "duplicate")


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


def _words(message: str) -> str:
    """A message up to the value it quotes: ``must be ... > 0, got`` (the CLI quotes the text it
    was given, ``'0'``, Python the value, ``0``)."""
    return message[:message.index(", got ") + len(", got ")]


TIME_LIMIT_TEXTS = ["0", "-0", "-1", "1e-400", "nan", "inf", "-inf", "x", "", "True", "1e-3", "0.5", "2", "1e300"]
SEED_TEXTS = ["0", "7", "-1", "1.5", "1e3", "x", "", "True", str(2**64), "00"]


def _read(text: str, kinds: tuple[type, ...]) -> Any:
    """``text`` as the first of ``kinds`` that reads it, else the text itself."""
    for kind in kinds:
        try:
            return kind(text)
        except ValueError:
            continue
    return text


CLI_AND_PYTHON = ([("time_limit", t) for t in TIME_LIMIT_TEXTS] + [("seed", t) for t in SEED_TEXTS])


@pytest.mark.parametrize("field,text", CLI_AND_PYTHON)
def test_the_cli_and_python_take_and_refuse_the_same_values(field: str, text: str) -> None:
    """``--time-limit TEXT`` / ``--seed TEXT`` and ``time_limit=`` / ``seed=`` the value the text
    reads as (a float for a limit; an int, else a float for a seed; else the text itself) are
    both taken, as the same value, or both refused with the same words: one validator
    (:func:`optkit.validation.check_time_limit`, :func:`~optkit.validation.check_seed`) behind
    both."""
    cli_check, api_check, kinds, words, want = {
        "time_limit": (time_limit_arg, check_time_limit, (float,), TIME_LIMIT_MESSAGE, float),
        "seed": (seed_arg, check_seed, (int, float), SEED_MESSAGE, int)}[field]
    try:
        cli: Any = cli_check(text)
    except argparse.ArgumentTypeError as exc:
        cli = exc
    try:
        api: Any = api_check(_read(text, kinds))
    except InputError as exc:
        api = exc
    assert isinstance(cli, Exception) == isinstance(api, Exception), (cli, api)
    if isinstance(api, InputError):
        assert api.field == field and _words(str(cli)) == _words(api.message) == f"{words}, got "
    else:
        assert cli == api == want(text)


@pytest.mark.parametrize("option,value,field", [("--time-limit", "0", "time_limit"),
                                                ("--time-limit", "nan", "time_limit"),
                                                ("--seed", "-1", "seed"), ("--seed", "1.5", "seed")])
def test_optkit_solve_and_solve_refuse_with_the_same_words(option: str, value: str, field: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The whole CLI (``optkit solve``) and the whole Python call (``optkit.solve``) on the same
    instance: exit 2 with the option named, an InputError with the keyword named, the same words."""
    from optkit.cli import main

    path = tmp_path / "x.json"
    path.write_text(json.dumps(NI))
    try:
        code = main(["solve", "nimp", str(path), "-a", "titan", option, value])
    except SystemExit as exc:  # argparse
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and f"argument {option}: " in err, err
    py = float(value) if field == "time_limit" or "." in value else int(value)
    with pytest.raises(InputError) as api:
        solve("nimp", NI, "titan", **{field: py})
    assert api.value.field == field and api.value.problem == "nimp"
    assert _words(err.split(f"argument {option}: ")[1]) == _words(api.value.message)


_ALGORITHMS = [(p, a) for p in sorted(optkit.all_formulations()) for a in optkit.get_formulation(p).algorithms]
_INSTANCES = {"gpu-mapping": GM, "nimp": NI, "rar-ddls": RA, "ddlwmp": DD}
BAD_TIME_LIMITS = [0, 0.0, -1, math.nan, math.inf, "5", True, [5]]
BAD_SEEDS = ["1", -1, 1.5, True, np.float64(2.0), [1]]


@pytest.mark.parametrize("problem,algorithm", _ALGORITHMS, ids=[f"{p}/{a}" for p, a in _ALGORITHMS])
def test_every_algorithm_refuses_a_bad_time_limit_or_seed_on_every_path(problem: str, algorithm: str) -> None:
    """Each registered algorithm of each problem, through ``solve`` and through its registered
    ``run`` called directly: a bad ``time_limit`` (0 included: no bound shortcut answers
    ``optimal`` in no time) or ``seed`` is an InputError naming it, before the algorithm runs."""
    f = optkit.get_formulation(problem)
    inst = f.instance_from_dict(_INSTANCES[problem])
    run = f.algorithms[algorithm].run
    objective = f.algorithms[algorithm].objectives[0]
    for field, bad in [("time_limit", v) for v in BAD_TIME_LIMITS] + [("seed", v) for v in BAD_SEEDS]:
        with pytest.raises(InputError) as err:
            solve(problem, inst, algorithm, **{field: bad})
        assert err.value.field == field and err.value.problem == problem, (field, bad, err.value)
        with pytest.raises(InputError) as err:
            run(inst, objective=objective, **{"time_limit": None, "seed": None, field: bad})
        assert err.value.field == field, (field, bad, err.value)


def test_a_huge_seed_is_taken_on_every_path_and_reduced_for_the_solvers() -> None:
    """Seeds have no upper bound (numpy's generators take any size); the CP-SAT and HiGHS
    adapters reduce theirs modulo 2**31 - 1 (their seeds are 32-bit), so 2**64 runs as
    2**64 mod (2**31 - 1), and the CLI takes it too."""
    huge = 2**64
    assert seed_arg(str(huge)) == check_seed(huge) == huge
    small = huge % (2**31 - 1)
    a = solve("nimp", NI, "cpsat", seed=huge, params={"workers": 1, "bound_shortcut": False})
    b = solve("nimp", NI, "cpsat", seed=small, params={"workers": 1, "bound_shortcut": False})
    assert a.status is b.status and a.solution == b.solution and a.seed == huge
    assert heavy_edge(P4, [2, 2], seed=huge) == heavy_edge(P4, [2, 2], seed=huge)
    assert solve("rar-ddls", RA, "rand", seed=huge).solution == solve("rar-ddls", RA, "rand", seed=huge).solution


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
