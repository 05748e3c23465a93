"""A real plug-in package, ``greedyalgos``, written into a folder as if pip had installed it.

:func:`write_package` writes ``greedyalgos/__init__.py`` and ``greedyalgos-0.1.dist-info/``
(``METADATA`` and ``entry_points.txt`` with the group ``optkit.algorithms``) into ``root``;
with ``root`` on ``PYTHONPATH``, :func:`importlib.metadata.entry_points` finds it exactly as it
finds an installed distribution. The package registers:

* ``longest-first`` for rar-ddls: an Algorithm of its own (List Scheduling's plan, with the jobs
  ordered by the most iterations first, then SJF-BCO's schedule): a user's heuristic;
* ``largest-first`` for ddlwmp: an online policy (:class:`optkit.formulation.OnlinePolicyPlugin`)
  that starts waiting jobs, most GPUs first, wherever Heavy-Edge places them
  (:func:`optkit.formulations.gpu_mapping.place`), never delaying a start;
* ``most-free-first`` for nimp: an online placement policy that starts jobs in arrival order
  while they fit, each on the machines with the most free GPUs (fewest machines, ignoring P).

``docs/howto/plug-in-your-algorithm.rst`` shows the same package.
"""

from __future__ import annotations

from pathlib import Path

SOURCE = '''\
"""greedyalgos: two algorithms for optkit's problems, registered as plug-ins."""

from optkit import Algorithm, Result, Status
from optkit.formulation import OnlinePolicyPlugin
from optkit.online import Decision


def longest_first(instance, *, objective, time_limit, seed, reverse: bool = True):
    """rar-ddls: SJF-BCO's machinery on the jobs ordered by iterations (most first)."""
    from optkit.formulations.rar_ddls.baselines import run_ls
    from optkit.formulations.rar_ddls.model import RarInstance

    order = sorted(range(len(instance.jobs)), key=lambda j: instance.jobs[j].iterations, reverse=reverse)
    data = instance.to_dict()
    data["jobs"] = [data["jobs"][j] for j in order]
    res = run_ls(RarInstance.from_dict(data), objective=objective, time_limit=time_limit, seed=seed)
    if res.solution is None:
        return res
    back = {j: k for k, j in enumerate(order)}
    res.solution = dict(res.solution, jobs=[res.solution["jobs"][back[j]] for j in range(len(order))])
    return res


class Waiting:
    """The protocol's bookkeeping of both policies: a list of waiting jobs, never a wake-up."""

    def __init__(self):
        self.waiting = []

    def on_arrival(self, job, now):
        self.waiting.append(job)

    def on_completion(self, job_id, now):
        pass

    def next_wakeup(self, now):
        return None


class LargestFirst(Waiting):
    """Start waiting jobs, most GPUs first, wherever Heavy-Edge places them."""

    def __init__(self, instance, seed=None):
        super().__init__()
        self.models = instance.models
        self.cluster = instance.cluster.mapping_cluster
        self.seed = seed

    def decide(self, now, cluster):
        from optkit.formulations.gpu_mapping import place

        started = []
        free = sum(cluster.free.values())
        for job in sorted(self.waiting, key=lambda j: (-j.gpus, j.seq)):
            if job.gpus > free:
                continue
            p = place(self.models[job.model], dict(cluster.free), cluster=self.cluster, seed=self.seed)
            if p.ok:
                decision = Decision(job.id, p.gpus, p.assignment, p.alpha)
                cluster.reserve(decision)
                started.append(decision)
                free -= job.gpus
        ids = {d.job_id for d in started}
        self.waiting = [j for j in self.waiting if j.id not in ids]
        return started


def make_largest_first(instance, *, seed=None):
    return LargestFirst(instance, seed=seed)


class MostFreeFirst(Waiting):
    """nimp: jobs in arrival order while they fit, each on the machines with the most free GPUs."""

    def decide(self, now, cluster):
        started = []
        while self.waiting and self.waiting[0].gpus <= sum(cluster.free.values()):
            job = self.waiting.pop(0)
            machines, need = [], job.gpus
            for node in sorted(cluster.free, key=lambda n: (-cluster.free[n], n)):
                take = min(cluster.free[node], need)
                machines += [node] * take
                need -= take
                if need == 0:
                    break
            gpus = {n: machines.count(n) for n in dict.fromkeys(machines)}
            decision = Decision(job.id, gpus, [machines])
            cluster.reserve(decision)
            started.append(decision)
        return started


def make_most_free_first(instance, *, seed=None):
    return MostFreeFirst()


LONGEST_FIRST = Algorithm("longest-first", longest_first, "heuristic",
                          "List Scheduling with the longest jobs first (greedyalgos)", ("makespan",),
                          problem="rar-ddls")
LARGEST_FIRST = OnlinePolicyPlugin("ddlwmp", "largest-first", make_largest_first,
                                   "most GPUs first, Heavy-Edge placement, no delay (greedyalgos)")
MOST_FREE_FIRST = OnlinePolicyPlugin("nimp", "most-free-first", make_most_free_first,
                                     "arrival order, machines with the most free GPUs first (greedyalgos)")
'''

ENTRY_POINTS = '''\
[optkit.algorithms]
longest-first = greedyalgos:LONGEST_FIRST
largest-first = greedyalgos:LARGEST_FIRST
most-free-first = greedyalgos:MOST_FREE_FIRST
'''


def write_package(root: Path) -> Path:
    """Write the package and its ``.dist-info`` into ``root``; return ``root``."""
    pkg = root / "greedyalgos"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text(SOURCE)
    info = root / "greedyalgos-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: greedyalgos\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return root
