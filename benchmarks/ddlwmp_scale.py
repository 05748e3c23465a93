"""Scale benchmark of ddlwmp: A-SRPT on the A-SRPT paper's largest simulation setting.

Issue target: 150,000 jobs on 250 servers x 8 GPUs (NIC 10 Gbps = 1.25e9 B/s, 300 GB/s inside a
server), A-SRPT with Heavy-Edge on every placement, simulated in <= 60 s on this machine and
under 2 GiB of memory. The workload is the ``paper-sim`` generator
(:func:`optkit.formulations.ddlwmp.generate.generate`, synthetic, 80% single-GPU jobs as the paper's
trace, random-forest predictions, seed 0).

Measured, each separately:

* generation (``generate``, including the random-forest predictions) -- not part of the target;
* the simulation alone (``simulate(instance, ASRPT(...), stats=...)``): wall time, decision
  instants visited, per-instant and per-started-job overhead, A-SRPT's delayed starts, and the
  number of distinct Heavy-Edge mappings computed (the placer caches them per (model, GPU counts)
  and relabels the cached mapping for each placement);
* ``evaluate`` of the schedule -- not part of the target.

Memory: the simulation runs in a fresh child process that loads the instance from a JSON file;
its peak resident set (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) covers the interpreter,
numpy, the loaded instance and the simulation, so it is an upper bound on the simulation's own
memory. The high-water mark just before the simulation starts (set by ``json.load``) and the
current resident set (``VmRSS``) just before and after the simulation are reported too; if the
high-water mark does not move during the simulation, the simulation's peak is at most that mark.

Run: ``python benchmarks/ddlwmp_scale.py [--jobs 150000] [--servers 250]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _page import run_line

TARGET_S = 60.0
TARGET_MIB = 2048.0


def _maxrss_mib() -> float:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return kb / 1024.0


def _rss_now_mib() -> float:
    """Current resident set (VmRSS of /proc/self/status), NaN where unavailable."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def child(path: str, out: str) -> None:
    """Load the instance, simulate A-SRPT, evaluate; write the measurements to ``out``."""
    from optkit.formulations.ddlwmp.a_srpt import ASRPT
    from optkit.formulations.ddlwmp.model import DdlwmpInstance, evaluate
    from optkit.formulations.ddlwmp.simulate import simulate

    t0 = time.perf_counter()
    with open(path) as f:
        data = json.load(f)
    inst = DdlwmpInstance.from_dict(data)
    del data
    import gc
    gc.collect()
    load_s = time.perf_counter() - t0
    rss_before = _maxrss_mib()
    rss_now_before = _rss_now_mib()
    policy = ASRPT(inst.cluster, inst.models, seed=0)
    stats: dict = {}
    schedule = simulate(inst, policy, stats=stats)
    rss_sim = _maxrss_mib()
    rss_now_after = _rss_now_mib()
    t1 = time.perf_counter()
    ev = evaluate(inst, schedule)
    eval_s = time.perf_counter() - t1
    res = {"load_s": load_s, "sim_s": stats["wall_time_s"], "instants": stats["instants"],
           "jobs": len(inst.jobs), "started": len(schedule["jobs"]), "delayed": policy.delayed,
           "improved": policy.improved, "heavy_edge_maps": len(policy.placer._maps),
           "tau": policy.tau, "comm_heavy": policy.comm_heavy,
           "rss_before_mib": rss_before, "rss_sim_mib": rss_sim,
           "rss_now_before_mib": rss_now_before, "rss_now_after_mib": rss_now_after, "rss_end_mib": _maxrss_mib(),
           "eval_s": eval_s, "feasible": ev.feasible, "objectives": ev.objectives, "metrics": ev.metrics,
           "violations": ev.violations[:3]}
    with open(out, "w") as f:
        json.dump(res, f)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=150_000)
    ap.add_argument("--servers", type=int, default=250)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "perf" / "ddlwmp_scale.md"))
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return

    from optkit.formulations.ddlwmp.generate import generate

    t0 = time.perf_counter()
    data = generate(jobs=args.jobs, servers=args.servers, single_gpu_share=0.8, seed=args.seed,
                    name=f"paper-sim_n{args.jobs}")
    gen_s = time.perf_counter() - t0
    meta = data["meta"]
    print(f"generated {args.jobs} jobs on {args.servers} servers in {gen_s:.1f} s "
          f"(single-GPU share {meta['single_gpu_job_share']:.3f}, RF MAE {meta['prediction']['mae']:.1f})", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        inst_path, res_path = os.path.join(tmp, "inst.json"), os.path.join(tmp, "res.json")
        with open(inst_path, "w") as f:
            json.dump({k: v for k, v in data.items() if k != "meta"}, f)
        del data
        subprocess.run([sys.executable, __file__, "--child", inst_path, res_path], check=True)
        with open(res_path) as f:
            r = json.load(f)

    n = r["jobs"]
    sim_s, inst_n = r["sim_s"], r["instants"]
    mem = r["rss_sim_mib"]
    ok_t, ok_m = sim_s <= TARGET_S, mem <= TARGET_MIB
    obj = r["objectives"]
    lines = [
        "# ddlwmp scale: A-SRPT on the paper's largest simulation setting",
        "",
        run_line() + " "
        f"Instance: `generate(jobs={n}, servers={args.servers}, single_gpu_share=0.8, seed={args.seed})` "
        "(the `paper-sim` generator: synthetic workload, 80% single-GPU jobs as in the paper's trace, "
        "8 GPUs per server, NIC 10 Gbps = 1.25e9 B/s, intra-server 300 GB/s, random-forest predictions "
        f"trained on the first 80% of jobs, held-out MAE {meta['prediction']['mae']:.1f} iterations; measured "
        f"single-GPU job share {meta['single_gpu_job_share']:.3f}). A-SRPT defaults (comm_heavy {r['comm_heavy']:g}, tau {r['tau']:g}), "
        "Heavy-Edge on every placement.",
        "",
        "| target (issue) | measured | met |",
        "|---|---|---|",
        f"| simulation of {n:,} jobs on {args.servers} x 8 GPUs <= {TARGET_S:.0f} s | {sim_s:.1f} s | {'yes' if ok_t else 'NO'} |",
        f"| memory < 2 GiB | {mem:.0f} MiB peak RSS of the simulating process (ru_maxrss; interpreter + instance + simulation) | {'yes' if ok_m else 'NO'} |",
        "",
        "| quantity | measured |",
        "|---|---|",
        f"| decision instants visited | {inst_n:,} |",
        f"| simulation time per decision instant | {sim_s / inst_n * 1e6:.1f} us |",
        f"| simulation time per started job | {sim_s / r['started'] * 1e6:.1f} us |",
        f"| jobs started | {r['started']:,} |",
        f"| A-SRPT delayed starts (lines 14-20) / of which found a better alpha | {r['delayed']:,} / {r['improved']:,} |",
        f"| distinct Heavy-Edge mappings computed (cached per model and GPU counts) | {r['heavy_edge_maps']:,} |",
        f"| peak RSS before the simulation (high-water mark of loading the JSON) | {r['rss_before_mib']:.0f} MiB |",
        f"| current RSS just before / just after the simulation (VmRSS; after = with the 150k-job schedule held) | "
        f"{r['rss_now_before_mib']:.0f} / {r['rss_now_after_mib']:.0f} MiB |",
        f"| peak RSS after the simulation | {r['rss_sim_mib']:.0f} MiB |",
        f"| peak RSS after `evaluate` | {r['rss_end_mib']:.0f} MiB |",
        "",
        "Not part of the target:",
        "",
        "| step | wall time |",
        "|---|---|",
        f"| generation (`generate`, incl. random-forest predictions) | {gen_s:.1f} s |",
        f"| loading the instance from JSON (`DdlwmpInstance.from_dict`) | {r['load_s']:.1f} s |",
        f"| `evaluate` of the schedule | {r['eval_s']:.1f} s |",
        "",
        f"`evaluate`: feasible = {r['feasible']}{'' if r['feasible'] else ' ' + str(r['violations'])}; "
        f"total completion {obj.get('total_completion', float('nan')):.6g} s, total flow {obj.get('total_flow', float('nan')):.6g} s, "
        f"makespan {obj.get('makespan', float('nan')):.6g} s, mean JCT {r['metrics'].get('mean_jct_s', float('nan')):.1f} s.",
    ]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
