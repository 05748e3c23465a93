"""Alibaba's PAI GPU-cluster simulator drives optkit's A-SRPT and ddlwmp baselines (issue 22 item 6).

The peer is ``cluster-trace-gpu-v2020/simulator`` of https://github.com/alibaba/clusterdata,
checked out at a pinned commit OUTSIDE this repository; nothing of it is copied here and nothing
is fetched at run time: every command takes the checkout's path (``--pai``: the repository root
or the simulator folder). PAI's code runs unmodified. Its loop calls, once per simulated second
(``Simulator.tic``), ``Scheduler.alloc_job(cluster)``; :func:`optkit_scheduler` returns a
subclass of PAI's ``Scheduler`` whose ``alloc_job`` drives an optkit policy through the online
protocol (:mod:`optkit.online`) instead of PAI's sort, and :func:`run_pai` installs it by
rebinding the name ``Scheduler`` in PAI's ``simulator`` module at run time.

How the adapter keeps the protocol's rules (``optkit.online``, rules 1-6):

* **Instants (rule 1).** PAI returns the GPUs of jobs that end at second t (``Cluster.tic_job``)
  and fetches the jobs submitted by t before it calls ``alloc_job`` at t. The adapter then reports
  the new entries of ``job_history.job_done_list`` (``on_completion``, in start order, as
  ``optkit simulate`` frees them), then the new tail of ``cluster.job_list`` (``on_arrival``), then
  calls ``decide`` once and ``next_wakeup`` once. It calls ``decide`` only at instants where a job
  ended, arrived or a wake-up is due (the instants ``optkit simulate`` visits), not at every
  second PAI ticks through.
* **Tie order (rule 2).** Jobs that arrive together are delivered in ``Job.seq`` order, ``seq`` =
  PAI's integer ``job_id`` (the position in the trace file). PAI's own order for them is the
  reverse file order (``Cluster.job_full_list`` is sorted by submit time and popped from its end);
  ``--tie-order pai`` delivers them that way instead, the control run on the benchmark page,
  with ``seq`` = 0 for every job (the scheduler checks rule 2: ``seq`` may not decrease among the
  arrivals of one instant; equal values leave the call order as the tie key).
* **Slots (rule 3).** PAI's clock moves in whole seconds (``delta`` = 1): the policy's slot is
  1 s. A job that ends at t frees its GPUs at t in both simulators.
* **Wake-ups (rule 4).** Each ``next_wakeup`` w is rounded up to a whole second (a w at or before
  now becomes now + 1 s) and kept in a heap. While a job runs or waits, PAI ticks every second, so
  ``alloc_job`` is called at w; PAI jumps over idle time only when no job runs or waits, and a
  wake-up it jumped over is delivered at its own time before the next instant (nothing can start
  then: no job waits).
* **Decisions (rules 5, 6).** Each started job goes on the node its decision names
  (``Node.alloc_job``, as PAI's own allocator does) and leaves ``cluster.job_list``; PAI runs it
  for its ``duration``. The view the policy gets names PAI's nodes by their ids with their idle
  GPUs (PAI counts GPUs in hundredths).

The job a policy sees: ``Job(id=str(job_id), release=submit_time, gpus=num_gpu/100,
seq=job_id, duration=duration)`` ("k GPUs for d seconds", :mod:`optkit.online`): the policy knows
each job's length, as PAI's own SJF does (its "oracle"). A job of PAI runs on one node
(``num_inst`` = 1); a decision that splits a job over several nodes, or a PAI job of several
instances or of fractional GPUs, is refused with an error naming the job. PAI's CPUs are not
part of optkit's model: a start that PAI refuses for lack of CPUs is an error too.

Commands::

    python benchmarks/pai_adapter.py compare --pai /work/peers/clusterdata [--jobs 5000] [--loads 0.8,1.2]
        [--policies a-srpt,wcs-duration,...] [--out benchmarks/perf/pai_adapter.md]
    python benchmarks/pai_adapter.py run --pai PATH --csv TRACE.csv --policy a-srpt --out completions.csv

``compare`` writes one workload per load (:mod:`_pai_workload`: the same jobs as PAI's CSV and
as optkit's instance), runs each policy in PAI with this adapter and in ``optkit simulate`` (both
in child processes) and compares every job's completion time; its page lists every difference.
"""

from __future__ import annotations

import argparse
import csv
import heapq
import importlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SIM_SUBDIR = Path("cluster-trace-gpu-v2020") / "simulator"
PAI_POLICIES = {"FIFO": 8, "SJF": 0}  # PAI's own allocation policies (utils.ALLOC_POLICY_DICT)


# ----------------------------------------------------------------------------- the peer
def simulator_dir(checkout: str | Path) -> Path:
    """PAI's simulator folder inside ``checkout`` (the clusterdata root, or the folder itself)."""
    p = Path(checkout).resolve()
    for cand in (p, p / SIM_SUBDIR):
        if (cand / "simulator.py").is_file() and (cand / "scheduler.py").is_file():
            return cand
    raise SystemExit(f"--pai {checkout}: no PAI simulator there (expected {SIM_SUBDIR}/simulator.py); check out "
                     "alibaba/clusterdata at the pinned commit outside the repository and pass its path")


def checkout_commit(checkout: str | Path) -> str:
    """The pinned commit of the checkout: ``git rev-parse HEAD`` there, else a ``COMMIT`` file at
    its root (an exported tree), else ``unknown``."""
    root = Path(checkout).resolve()
    for cand in (root, *root.parents):
        if (cand / "COMMIT").is_file():
            return (cand / "COMMIT").read_text().strip()
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def import_pai(checkout: str | Path) -> SimpleNamespace:
    """PAI's modules ``simulator``, ``scheduler`` and ``utils``, imported from the checkout."""
    d = str(simulator_dir(checkout))
    if d not in sys.path:
        sys.path.insert(0, d)
    return SimpleNamespace(**{m: importlib.import_module(m) for m in ("utils", "scheduler", "simulator")})


# ----------------------------------------------------------------------------- the adapter
def optkit_scheduler(pai: SimpleNamespace) -> type:
    """A subclass of PAI's ``Scheduler`` whose ``alloc_job`` drives an optkit online policy."""
    from optkit.online import ClusterView, Job, slot_ceil

    print_fn = pai.utils.print_fn

    class OptkitScheduler(pai.scheduler.Scheduler):  # type: ignore[name-defined,misc]
        """PAI's scheduler hook, deciding with ``policy`` (an :class:`optkit.online.OnlinePolicy`)."""

        def __init__(self, policy: Any, *, tie_order: str = "seq", **kw: Any) -> None:
            super().__init__(**kw)
            self.policy = policy
            self.tie_order = tie_order
            self.waiting: dict[str, dict[str, Any]] = {}  # delivered, not started: id -> PAI job
            self.started_seq: dict[str, int] = {}        # id -> start order (frees are reported in it)
            self.n_known = 0                             # cluster.job_list[:n_known] delivered
            self.n_done = 0                              # job_done_list[:n_done] reported
            self.wakes: list[float] = []
            self.wake_set: set[float] = set()
            self.decisions = 0

        # one call of PAI's loop per simulated second
        def alloc_job(self, cluster: Any = None) -> int:
            cluster = cluster if cluster is not None else self.cluster
            now = float(cluster.cur_time)
            while self.wakes and self.wakes[0] < now:  # wake-ups PAI jumped over (nothing waited)
                w = heapq.heappop(self.wakes)
                self.wake_set.discard(w)
                if self._decide(w, cluster):
                    raise RuntimeError(f"policy started a job at a wake-up ({w}) PAI skipped: no job was waiting")
            done = cluster.job_history.job_done_list
            ended = [str(j["job_id"]) for j in done[self.n_done:]]
            self.n_done = len(done)
            ended.sort(key=self.started_seq.__getitem__)
            for jid in ended:
                self.policy.on_completion(jid, now)
            fresh = cluster.job_list[self.n_known:]
            if self.tie_order == "seq":
                fresh = sorted(fresh, key=lambda j: (j["submit_time"], self._seq(j)))
            for j in fresh:
                jid = str(j["job_id"])
                gpus, rest = divmod(int(j["num_gpu"]), 100)
                if rest or gpus < 1 or j.get("num_inst", 1) != 1:
                    raise RuntimeError(f"PAI job {jid}: {j['num_gpu'] / 100} GPUs x {j.get('num_inst')} instances; "
                                       "the adapter takes jobs of one instance on whole GPUs")
                self.waiting[jid] = j
                # PAI's order (the control run) carries no tie key: the call order breaks the ties
                seq = self._seq(j) if self.tie_order == "seq" else 0
                self.policy.on_arrival(Job(jid, float(j["submit_time"]), gpus, seq=seq,
                                           duration=float(j["duration"])), now)
            woken = False
            while self.wakes and self.wakes[0] == now:
                self.wake_set.discard(heapq.heappop(self.wakes))
                woken = True
            if ended or fresh or woken:
                self._decide(now, cluster)
            self.n_known = len(cluster.job_list)
            return 0

        @staticmethod
        def _seq(j: dict[str, Any]) -> int:
            return j["job_id"] if type(j["job_id"]) is int else -1

        def _decide(self, now: float, cluster: Any) -> int:
            nodes = cluster.node_list
            view = ClusterView({n.id: n.idl_gpus // 100 for n in nodes}, {n.id: n.num_gpus // 100 for n in nodes})
            decisions = self.policy.decide(now, view)
            self.decisions += 1
            if decisions:
                started = set()
                for d in decisions:
                    j = self.waiting.pop(d.job_id)
                    if len(d.gpus) != 1:
                        raise RuntimeError(f"job {d.job_id}: the policy splits it over nodes {list(d.gpus)}; a PAI job "
                                           "of one instance runs on one node")
                    (nid, k), = d.gpus.items()
                    node = cluster.node_dict[nid]
                    if k * 100 != j["num_gpu"] or not node.alloc_job(j):
                        raise RuntimeError(f"job {d.job_id}: PAI refuses {k} GPUs on node {nid} (CPUs or GPUs short)")
                    j["node"] = nid
                    self.started_seq[d.job_id] = len(self.started_seq)
                    started.add(id(j))
                    print_fn("%sON  : N[%d] %s" % (cluster.log_prefix, nid, j))
                cluster.job_list[:] = [j for j in cluster.job_list if id(j) not in started]
            w = self.policy.next_wakeup(now)
            if w is not None:
                w = slot_ceil(w, 1.0)  # the first whole second at or after w (PAI's delta is 1 s)
                if w <= now:
                    w = now + 1.0
                if w not in self.wake_set:
                    self.wake_set.add(w)
                    heapq.heappush(self.wakes, w)
            return len(decisions)

    return OptkitScheduler


def make_policy(name: str, nodes: dict[Any, int], seed: int | None = 0) -> Any:
    """optkit's ``name`` (``a-srpt`` or a ddlwmp baseline) behind the protocol, on PAI's nodes, 1-s slots."""
    from optkit.formulations.ddlwmp import OnlineScheduler

    return OnlineScheduler(name, nodes=nodes, slot_seconds=1.0, seed=seed)


def run_pai(checkout: str | Path, trace: str | Path, policy: str, out: str | Path, *, gpus: int,
            tie_order: str = "seq", log: str | None = None) -> dict[str, Any]:
    """Run PAI's simulator on ``trace`` (its CSV format) with its own ``FIFO``/``SJF`` or with optkit's
    ``policy`` through the adapter, one node of ``gpus`` GPUs (and as many CPUs); write every job's
    completion time (``job_id,completion``: submit_time + jct) to ``out``. Returns the phase times:
    import (PAI's modules), load (``Simulator``: reading the CSV), simulate (``simulator_go`` up to
    its summary), evaluate (``exp_summary``: PAI's per-job summary), write."""
    t0 = time.perf_counter()
    pai = import_pai(checkout)
    logging.basicConfig(level=logging.WARNING, format="%(message)s", filename=log or os.devnull, filemode="a")
    times: dict[str, Any] = {"import_s": time.perf_counter() - t0}
    try:
        return _run_pai(pai, trace, policy, out, gpus, tie_order, times, t0)
    finally:
        pai.simulator.Scheduler = pai.scheduler.Scheduler  # PAI's own, for a later run in this process


def _run_pai(pai: SimpleNamespace, trace: str | Path, policy: str, out: str | Path, gpus: int, tie_order: str,
             times: dict[str, Any], t0: float) -> dict[str, Any]:
    if policy not in PAI_POLICIES:
        cls = optkit_scheduler(pai)

        def factory(**kw: Any) -> Any:
            nodes = {n.id: n.num_gpus // 100 for n in kw["cluster"].node_list}
            return cls(make_policy(policy, nodes), tie_order=tie_order, **kw)

        pai.simulator.Scheduler = factory  # the scheduler PAI's Simulator.init_go builds
    t = time.perf_counter()
    sim = pai.simulator.Simulator(
        csv_file=str(trace), alloc_policy=PAI_POLICIES.get(policy, 8), preempt_policy=2, sort_node_policy=0,
        oracle=False, random_seed=42, max_time=int(1e10), num_gpus=gpus, num_cpus=gpus, num_nodes=1, pattern=0,
        delta=1, num_spare_node=0, hetero=False, describe_file=None, export_job_stats=False,
        export_cluster_util=False, log_file=None, arrival_rate=-1, num_jobs_limit=10 ** 9, gpu_type_matching=0,
        verbose=0)
    times["load_s"] = time.perf_counter() - t
    summary = sim.exp_summary
    spent: list[float] = []

    def timed_summary(*a: Any, **kw: Any) -> Any:
        s = time.perf_counter()
        try:
            return summary(*a, **kw)
        finally:
            spent.append(time.perf_counter() - s)

    sim.exp_summary = timed_summary
    t = time.perf_counter()
    result = sim.simulator_go(repeat=1)
    times["evaluate_s"] = sum(spent)
    times["simulate_s"] = time.perf_counter() - t - times["evaluate_s"]
    t = time.perf_counter()
    done = sim.cluster.job_history.job_done_list
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("job_id", "completion"))
        w.writerows((j["job_id"], j["submit_time"] + j["jct"]) for j in done)
    times["write_s"] = time.perf_counter() - t
    n_jobs, avg_jct, avg_wait, makespan = result[0]
    times.update(jobs=n_jobs, avg_jct_s=avg_jct, avg_wait_s=avg_wait, makespan_s=makespan,
                 total_s=time.perf_counter() - t0)
    if hasattr(sim.scheduler, "decisions"):  # the adapter's count of decide calls
        times["decide_calls"] = sim.scheduler.decisions
    return times


# ----------------------------------------------------------------------------- children
def child_run(cmd: list[str], stdout: str | Path, env: dict[str, str] | None = None,
              cwd: str | Path = ROOT) -> dict[str, float]:
    """Run ``cmd`` in a child process; its wall time (s), CPU time (user + system, s) and peak
    resident set (MiB, ``ru_maxrss`` of that child alone, from ``os.wait4``). Raises on a non-zero exit."""
    with open(stdout, "w") as out:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{Path(stdout).read_text()[-3000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mib": usage.ru_maxrss / 1024.0}


def optkit_env(root: str | Path = ROOT) -> dict[str, str]:
    """The environment of a child that imports optkit from the checkout ``root`` (this one by default)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root)
    return env


def run_pai_child(checkout: str, trace: Path, policy: str, out: Path, log: Path, gpus: int,
                  tie_order: str = "seq") -> dict[str, Any]:
    """:func:`run_pai` in a child process: wall time and peak memory of the whole run, and its phases."""
    meta = out.with_suffix(".times.json")
    cmd = [sys.executable, str(HERE / "pai_adapter.py"), "run", "--pai", checkout, "--csv", str(trace), "--policy",
           policy, "--out", str(out), "--gpus", str(gpus), "--tie-order", tie_order, "--times", str(meta)]
    res = child_run(cmd, log, optkit_env())
    res.update(json.loads(meta.read_text()))
    return res


def run_optkit_child(instance: Path, policy: str, out: Path, log: Path, root: str | Path = ROOT) -> dict[str, Any]:
    """``optkit simulate ddlwmp INSTANCE --policy POLICY --out OUT --json`` in a child process, optkit
    imported from the checkout ``root`` (this one by default)."""
    cmd = [sys.executable, "-m", "optkit", "simulate", "ddlwmp", str(Path(instance).resolve()), "--policy", policy,
           "--seed", "0", "--out", str(Path(out).resolve()), "--json"]
    res = child_run(cmd, log, optkit_env(root), cwd=root)
    res["summary"] = json.loads(Path(log).read_text().strip().splitlines()[-1])
    return res


def differences(a: dict[str, float], b: dict[str, float]) -> list[tuple[str, float | None, float | None]]:
    """Every job whose completion differs (or is missing on one side): (id, a, b), by id."""
    ids = sorted(set(a) | set(b), key=lambda s: (len(s), s))
    return [(i, a.get(i), b.get(i)) for i in ids if a.get(i) != b.get(i)]


# ----------------------------------------------------------------------------- compare
def compare(args: argparse.Namespace) -> None:
    import _pai_workload as W
    from _page import run_line

    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    loads = [float(x) for x in args.loads.split(",")]
    checkout = str(Path(args.pai).resolve())
    simulator_dir(checkout)
    rows, notes = [], []
    with tempfile.TemporaryDirectory(prefix="pai-adapter-") as tmp:
        d = Path(tmp)
        for load in loads:
            w = W.jobs(args.jobs, load, args.seed, args.servers)
            js, cs = d / f"w{load}.json", d / f"w{load}.csv"
            W.write(w, js, cs)
            for pol in policies:
                for tie in (["seq", "pai"] if pol in args.control.split(",") else ["seq"]):
                    pai_out = d / f"pai.{pol}.{load}.{tie}.csv"
                    r = run_pai_child(checkout, cs, pol, pai_out, d / f"pai.{pol}.{load}.{tie}.log", W.total_gpus(w), tie)
                    ok_out = d / f"optkit.{pol}.{load}.json"
                    if tie == "seq":
                        o = run_optkit_child(js, pol, ok_out, d / f"optkit.{pol}.{load}.log")
                    diff = differences(W.read_completions(pai_out), W.read_completions(ok_out))
                    rows.append((load, pol, tie, len(w["release"]), r, o, diff))
                    print(f"load {load} {pol:13s} arrivals in {tie} order: {len(diff)} of {len(w['release'])} jobs "
                          f"differ; PAI+adapter {r['wall_s']:.1f} s, optkit simulate {o['wall_s']:.1f} s "
                          f"(load average {os.getloadavg()[0]:.1f})", flush=True)
                    if diff:  # the earliest-released job that differs, and the jobs released in its second
                        first = int(diff[0][0])
                        same = [i for i in range(len(w["release"])) if w["release"][i] == w["release"][first]]
                        notes.append((load, pol, tie, diff[:10], first, int(w["release"][first]), same))
    lines = [
        "# PAI's simulator drives optkit's policies: per-job completion times against `optkit simulate`", "",
        run_line(), "",
        f"Peer: alibaba/clusterdata at commit `{checkout_commit(checkout)}`, `{SIM_SUBDIR}` (unmodified; its "
        f"`Scheduler.alloc_job` replaced at run time by `benchmarks/pai_adapter.py`), checkout `{checkout}`.", "",
        f"Workload (`benchmarks/_pai_workload.py`, seed {args.seed}): {args.jobs:,} jobs of 1-8 GPUs, log-normal run "
        "times (median 30 min, sigma 1.5, 1 s to 1 day), releases in whole seconds at offered load "
        f"{', '.join(map(str, loads))}; PAI: one node of {args.servers * W.GPUS_PER_SERVER:,} GPUs; optkit: {args.servers} x "
        f"{W.GPUS_PER_SERVER} GPUs, zero communication, perfect predictions. The policy inside PAI sees each job as "
        "\"k GPUs for d seconds\" (`optkit.online.Job.duration`).", "",
        "| load | policy | simultaneous arrivals delivered in | jobs | completion times that differ | PAI + adapter (s) "
        "| decide calls | `optkit simulate` (s) |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for load, pol, tie, n, r, o, diff in rows:
        lines.append(f"| {load} | {pol} | {'Job.seq (rule 2)' if tie == 'seq' else 'PAI order (control)'} | {n:,} | "
                     f"{len(diff)} | {r['wall_s']:.1f} | {r.get('decide_calls', '')} | {o['wall_s']:.1f} |")
    lines += ["", "## Every difference", ""]
    if not notes:
        lines.append("None: every job completes at the same second in both simulators.")
    for load, pol, tie, diff, first, rel, same in notes:
        lines.append(f"* load {load}, {pol}, arrivals in {tie} order (first {len(diff)}): " + "; ".join(
            f"job {i}: PAI {a}, optkit {b}" for i, a, b in diff) + f". The earliest released of them, job {first}, "
            f"was released at {rel} s together with jobs {same}: delivered in the other order, they start in the "
            "other order, and every later difference follows from the cluster being in another state from then on.")
    lines += ["", EXPLAIN]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


EXPLAIN = """## Why the times agree, and what would make them differ

* **Time steps.** PAI advances in whole seconds and returns a job's GPUs at start + duration;
  optkit's slot is 1 s and its time rule frees GPUs at the first slot boundary at or after the
  completion. With whole-second releases and run times the two clocks meet at every event, so no
  difference comes from time. (A release or run time with a fraction of a second would be rounded
  by PAI's `int()` when it reads the CSV and by optkit only at the slot boundary: such workloads
  are not comparable job by job.)
* **Instants.** Both free GPUs, then admit arrivals, then decide, at each second: PAI by its loop
  (`tic_job` then `alloc_job`), optkit by rule 1. The adapter calls `decide` only at the instants
  `optkit simulate` visits (a job ended, arrived, or a wake-up is due), so A-SRPT's virtual machine
  is advanced at the same instants.
* **Tie-breaks.** Jobs released in the same second are delivered in `Job.seq` order (the trace
  position). The control rows deliver them in PAI's own order instead (the reverse of the file, as
  `Cluster.job_full_list` is sorted by submit time and popped from its end): the policies break
  ties by arrival order, so jobs with equal keys swap starts there, and every later start may move
  with them. Where simultaneous arrivals find GPUs for all of them (the rows at load 0.8), their order
  does not matter and the control rows agree too. That is why rule 2 makes the tie key part of the
  input.
* **Wake-ups.** A-SRPT asks to be woken; PAI ticks every second while a job runs or waits, so every
  wake-up falls on a tick.
"""


# ----------------------------------------------------------------------------- command line
def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="one PAI run (its FIFO/SJF, or an optkit policy through the adapter)")
    r.add_argument("--pai", required=True, help="checkout of alibaba/clusterdata (root or simulator folder)")
    r.add_argument("--csv", required=True, help="trace in PAI's CSV format")
    r.add_argument("--policy", required=True, help="FIFO, SJF (PAI's own) or an optkit ddlwmp policy")
    r.add_argument("--out", required=True, help="job_id,completion CSV")
    r.add_argument("--gpus", type=int, default=6496)
    r.add_argument("--tie-order", choices=("seq", "pai"), default="seq")
    r.add_argument("--times", help="write the phase times here (JSON)")
    c = sub.add_parser("compare", help="PAI + adapter against optkit simulate, job by job; writes the page")
    c.add_argument("--pai", required=True, help="checkout of alibaba/clusterdata (root or simulator folder)")
    c.add_argument("--jobs", type=int, default=3000)
    c.add_argument("--servers", type=int, default=100, help="8-GPU servers (PAI: one pool of 8 x SERVERS GPUs)")
    c.add_argument("--loads", default="0.8,1.5")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--policies", default="a-srpt,spjf,spwf,wcs-duration,wcs-workload,wcs-subtime,fifo")
    c.add_argument("--control", default="wcs-subtime,fifo",
                   help="policies also run with arrivals in PAI's own order (the tie-order control)")
    c.add_argument("--out", default=str(HERE / "perf" / "pai_adapter.md"))
    args = p.parse_args(argv)
    if args.cmd == "run":
        times = run_pai(args.pai, args.csv, args.policy, args.out, gpus=args.gpus, tie_order=args.tie_order)
        if args.times:
            Path(args.times).write_text(json.dumps(times))
        print(json.dumps(times))
    else:
        compare(args)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
