"""A scheduler's own script: every public algorithm of the four problems, imported from the
installed optkit and called on the scheduler's data. ``tests/test_typing.py`` type-checks it
with ``mypy --strict`` against the installed wheel and runs it (argument: the ``instances/``
folder of a checkout). Node ids are the scheduler's own ``str``, held in variables typed
``dict[str, int]`` (not literals, which mypy would type from the parameter): every API taking
node ids accepts them and answers with ``str`` ids."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from optkit import Result, Status
from optkit.formulations import ddlwmp, gpu_mapping, nimp, rar_ddls
from optkit.formulations.ddlwmp import exact as ddlwmp_exact
from optkit.formulations.ddlwmp.a_srpt import ASRPT
from optkit.formulations.ddlwmp.baselines import FIFO, SPJF, SPWF, WCSDuration, WCSSubTime, WCSWorkload
from optkit.formulations.ddlwmp.policies import ClusterState, JobSpec, Policy, StartDecision
from optkit.formulations.ddlwmp.simulate import simulate
from optkit.formulations.gpu_mapping import (
    Cluster, GpuMappingInstance, JobPlacement, PipelineJob, Stage, alpha_max, choose_servers, heavy_edge,
    heavy_edge_job, place,
)
from optkit.formulations.gpu_mapping import exact as gpu_mapping_exact
from optkit.formulations.gpu_mapping.baselines import kahip_mapping, metis_mapping, random_mapping
from optkit.formulations.gpu_mapping.refine import heavy_edge_refine
from optkit.formulations.nimp import exact as nimp_exact
from optkit.formulations.nimp.baselines import elasticflow, hived, tiresias
from optkit.formulations.nimp.titan import titan
from optkit.formulations.nimp import Job, Machine, WorkerPlacement, place as nimp_place
from optkit.formulations.rar_ddls import exact as rar_ddls_exact
from optkit.formulations.rar_ddls.baselines import ff, ls, rand
from optkit.formulations.rar_ddls.plan import PlanResult
from optkit.formulations.rar_ddls.sjf_bco import sjf_bco

INSTANCES = Path(sys.argv[1])


def read(path: str) -> Any:
    return json.loads((INSTANCES / path).read_text())


def check_optimal(result: Result) -> None:
    assert result.status is Status.OPTIMAL, result.message


# gpu-mapping: Heavy-Edge on a networkx graph and on the paper's pipeline job, the exact
# solvers, the partitioner baselines and the local search.
g: nx.Graph[str] = nx.Graph()
g.add_weighted_edges_from([("a", "b", 20.0), ("b", "c", 1.0), ("c", "d", 0.5)])
mapping: dict[str, int] = heavy_edge(g, [3, 1], seed=0)
job = PipelineJob((Stage(2, 0.1, 0.2, 0.0, 1e6, 2e7), Stage(2, 0.1, 0.2, 1e6, 0.0, 2e7)), "ring")
gm = GpuMappingInstance(Cluster(8, 1.25e9, 3e11), job, (2, 1, 1))
assignment: list[list[int]] = heavy_edge_job(job, gm.servers, seed=0)
worst: float = alpha_max(job, gm.cluster)
free_gpus: dict[str, int] = {"host-a": 1, "host-b": 3}
placed: JobPlacement[str] = place(job, free_gpus, cluster=gm.cluster, seed=0)
assert placed.ok and placed.alpha is not None and placed.assignment[0][0] in ("host-a", "host-b")
placed_on: str = placed.assignment[0][0]
servers_taken: dict[str, int] | None = choose_servers(free_gpus, 4)
cut: float = gpu_mapping.evaluate(gm, {"assignment": assignment}).objectives["cut"]
check_optimal(gpu_mapping_exact.run_cpsat(gm, objective="cut", time_limit=30.0, seed=0))
check_optimal(gpu_mapping_exact.run_highs(gm, objective="alpha", time_limit=30.0))
check_optimal(gpu_mapping_exact.run_brute_force(gm))
by_metis: list[list[int]] = metis_mapping(job, gm.servers, seed=0)[0]
by_kahip: list[list[int]] = kahip_mapping(job, gm.servers, seed=0)[0]
by_chance: list[list[int]] | None = random_mapping(job, gm.servers, seed=0)  # None: no draw keeps TP slices whole
assert by_chance is not None
refined: list[list[int]] = heavy_edge_refine(gm, objective="alpha", seed=0)
print("gpu-mapping", mapping, assignment, worst, cut, by_metis, by_kahip, by_chance, refined)

# ddlwmp: the A-SRPT policy and the baselines, driven by hand and by optkit's simulator.
dd = ddlwmp.DdlwmpInstance.from_dict(read("ddlwmp/tiny/tiny_n3_m2_s0.json"))
policies: list[Policy] = [ASRPT(dd.cluster, dd.models, tau=1.0)]
policies += [cls(dd.cluster, dd.models) for cls in (SPJF, SPWF, WCSDuration, WCSWorkload, WCSSubTime, FIFO)]
first = dd.jobs[0]
for policy in policies:
    policy.on_arrival(JobSpec(first.id, first.release, first.model, dd.gpus(first), float(first.iterations)), 0.0)
    state = ClusterState(np.full(dd.cluster.servers, dd.cluster.gpus_per_server), dd.cluster.gpus_per_server)
    starts: list[StartDecision] = policy.decide(0.0, state)
    wake: float | None = policy.next_wakeup(0.0)
    print("ddlwmp", [d.job_id for d in starts], wake)
schedule: dict[str, Any] = simulate(dd, ASRPT(dd.cluster, dd.models))
total: float = ddlwmp.evaluate(dd, schedule).objectives["total_completion"]
check_optimal(ddlwmp_exact.run_cpsat(dd, time_limit=60.0, seed=0))
check_optimal(ddlwmp_exact.run_highs(dd, time_limit=60.0))
check_optimal(ddlwmp_exact.run_brute_force(dd))
print("ddlwmp", total)

# rar-ddls: SJF-BCO and the paper's baselines, then the exact solvers.
rar = rar_ddls.RarInstance.from_dict(read("rar-ddls/tiny/tiny-00.json"))
plans: list[tuple[np.ndarray, PlanResult]] = [sjf_bco(rar), ff(rar), ls(rar), rand(rar, seed=0)]
print("rar-ddls", [plan.plan_makespan for _, plan in plans])
check_optimal(rar_ddls_exact.run_cpsat(rar, time_limit=60.0, seed=0))
check_optimal(rar_ddls_exact.run_highs(rar, time_limit=60.0))
check_optimal(rar_ddls_exact.run_brute_force(rar))
# rar-ddls by node id: a batch with GPUs still busy, then the next batch 3 slots later.
rar_servers: dict[str, int] = {"n1": rar.servers[0], "n2": rar.servers[1]}
rar_busy: dict[tuple[str, int], int] = {("n1", 0): 4}
batch: rar_ddls.BatchSchedule[str] = rar_ddls.schedule_batch(list(rar.jobs), rar_servers, rar.network,
                                                             busy_until=rar_busy)
assert batch.ok and batch.makespan_slots is not None
later: dict[tuple[str, int], int] = batch.busy_at(3)
assert rar_ddls.schedule_batch(list(rar.jobs), {"n1": rar.servers[0], "n2": rar.servers[1]}, rar.network,
                               busy_until=later).ok

# nimp: Titan and the paper's baselines on plain lists, then the exact solvers.
ni = nimp.NimpInstance.from_dict(read("nimp/tiny/tiny-00.json"))
gpus = [m.gpus for m in ni.machines]
idle = [m.idle_gpus for m in ni.machines]
placements: list[list[int] | None] = [
    titan(gpus, idle, ni.capacity, ni.phases(), workers=ni.job.workers),
    elasticflow(idle, workers=ni.job.workers),
    hived(gpus, idle, workers=ni.job.workers),
    tiresias(idle, workers=ni.job.workers, placement_sensitive=True),
]
print("nimp", placements)
check_optimal(nimp_exact.run_cpsat(ni, time_limit=60.0, seed=0))
check_optimal(nimp_exact.run_highs(ni, time_limit=60.0))
check_optimal(nimp_exact.run_brute_force(ni))
print("ok")

# nimp by node id: Titan from a placement hook.
hosts: dict[str, Machine] = {"n1": Machine(8, 2), "n2": Machine(8, 3)}
links: dict[tuple[str, str], float] = {("n1", "n2"): 200e6}
hook: WorkerPlacement[str] = nimp_place(Job(4, "ring", 100e6), hosts, links)
assert hook.ok and set(hook.machine_of_worker) <= {"n1", "n2"}
first_host: str = hook.machine_of_worker[0]

# ddlwmp through the engine's online protocol, nodes by name.
from optkit.formulations.ddlwmp import OnlineScheduler  # noqa: E402
from optkit.online import ClusterView, Decision, Job as OnlineJob  # noqa: E402

nodes: dict[str, int] = {"n1": 4, "n2": 4}
online: OnlineScheduler[str] = OnlineScheduler("a-srpt", nodes=nodes)
online.on_arrival(OnlineJob("j", 0.0, 2, duration=5.0), 0.0)
view: ClusterView[str] = ClusterView(dict(nodes), nodes)
online_starts: list[Decision[str]] = online.decide(0.0, view)
started_on: list[str] = [node for d in online_starts for node in d.gpus]
online_wake: float | None = online.next_wakeup(0.0)
assert online_starts or online_wake is not None

# nimp through the same protocol: Titan behind a FIFO queue, machines of two sizes, P per pair.
from optkit.formulations.nimp import OnlineScheduler as NimpOnline  # noqa: E402

sizes: dict[str, int] = {"n1": 8, "n2": 4}
placer = NimpOnline("titan", nodes=sizes)
placer.on_arrival(OnlineJob("w", 0.0, 6, param_bytes=100e6), 0.0)
pair_capacity: dict[tuple[str, str], float] = {("n1", "n2"): 1e9}
titan_starts: list[Decision[str]] = placer.decide(0.0, ClusterView(dict(sizes), sizes, pair_capacity=pair_capacity))
assert [sum(d.gpus.values()) for d in titan_starts] == [6]
