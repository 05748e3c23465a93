"""The cost of ``on_arrival`` for a "k GPUs for d seconds" job against a job with a model (issue 35,
item 5: a duration job's arrival must cost no more than a model job's).

    python benchmarks/online_arrival.py [--jobs 2000] [--repeats 5] [--out PAGE]

A stream of ``--jobs`` arrivals, one a second, into a fresh ``ddlwmp.OnlineScheduler`` (20
servers of 8 GPUs, every call checked against the protocol) per policy and repeat: the jobs of a
generated ddlwmp workload (``generate(jobs, servers=20, seed=0, predictor="mean")``: their
models and predicted iterations), and the same GPU counts as duration jobs (durations lognormal
around 30 min, each with a predicted duration off by up to a factor of 2, seeded). Printed: the
CPU time (``process_time``) per arrival, the minimum (the run least disturbed by other work on
the machine) and the median over the repeats, the three streams interleaved, and the ratio
duration/model.
The first arrival of a model, or of a GPU count, computes its gpu-mapping estimates (Heavy-Edge's
alpha_min, alpha_max); both streams pay that once per model or count. For comparison, the third
stream gives each duration job a model of its own (one stage, one iteration of d seconds, built
beforehand: what a duration job cost before optkit shared one model per GPU count, less the model's
construction, which the old path also paid at each arrival). Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _page import run_line  # noqa: E402

from optkit.formulations.ddlwmp import DdlwmpInstance, OnlineScheduler  # noqa: E402
from optkit.formulations.ddlwmp.generate import generate  # noqa: E402
from optkit.formulations.gpu_mapping.model import PipelineJob  # noqa: E402
from optkit.online import Job  # noqa: E402

POLICIES = ("a-srpt", "spjf", "wcs-duration", "fifo")


def streams(n: int) -> tuple[DdlwmpInstance, list[Job], list[Job], dict[str, PipelineJob], list[Job]]:
    inst = DdlwmpInstance.from_dict(generate(jobs=n, servers=20, seed=0, predictor="mean"))
    rng = np.random.default_rng(0)
    durations = rng.lognormal(np.log(1800.0), 1.0, size=n)
    noise = rng.uniform(0.5, 2.0, size=n)
    model_jobs = [Job(j.id, float(i), inst.gpus(j), seq=i, model=j.model, predicted_iterations=j.predicted_iterations)
                  for i, j in enumerate(inst.jobs)]
    duration_jobs = [Job(j.id, float(i), inst.gpus(j), seq=i, duration=float(d), predicted_duration=float(d * e))
                     for i, (j, d, e) in enumerate(zip(inst.jobs, durations, noise))]
    own = {f"d{i}": PipelineJob.from_dict({"allreduce": "ring", "stages": [{
        "replicas": inst.gpus(j), "fwd_time": 0.0, "bwd_time": float(d), "in_bytes": 0.0, "out_bytes": 0.0,
        "param_bytes": 0.0}]}) for i, (j, d) in enumerate(zip(inst.jobs, durations))}
    own_jobs = [Job(j.id, float(i), inst.gpus(j), seq=i, model=f"d{i}", predicted_iterations=float(e))
                for i, (j, e) in enumerate(zip(inst.jobs, noise))]
    return inst, model_jobs, duration_jobs, own, own_jobs


def per_arrival(policy: str, inst: DdlwmpInstance, jobs: list[Job], models: dict[str, PipelineJob] | None) -> float:
    nodes = {m: inst.cluster.gpus_per_server for m in range(inst.cluster.servers)}
    s = OnlineScheduler(policy, nodes=nodes, models=models, seed=0)
    c0 = time.process_time()
    for j in jobs:
        s.on_arrival(j, j.release)
    return (time.process_time() - c0) / len(jobs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=None, help="write the lines to this Markdown page")
    args = ap.parse_args()
    inst, model_jobs, duration_jobs, own, own_jobs = streams(args.jobs)
    lines: list[str] = []
    for policy in POLICIES:
        runs: dict[str, list[float]] = {"model": [], "duration": [], "own": []}
        for _ in range(args.repeats):  # interleaved, so a change of load hits the three alike
            runs["model"].append(per_arrival(policy, inst, model_jobs, dict(inst.models)))
            runs["duration"].append(per_arrival(policy, inst, duration_jobs, None))
            runs["own"].append(per_arrival(policy, inst, own_jobs, own))
        m, d, o = (min(runs[k]) for k in ("model", "duration", "own"))
        md, dd = statistics.median(runs["model"]), statistics.median(runs["duration"])
        line = (f"{policy:13s} on_arrival per job, min (median) of {args.repeats}: model {m * 1e6:5.1f} "
                f"({md * 1e6:5.1f}) us, duration {d * 1e6:5.1f} ({dd * 1e6:5.1f}) us, duration/model {d / m:.2f} "
                f"({dd / md:.2f}); a model per duration job {o * 1e6:6.1f} us ({args.jobs} arrivals)")
        print(line, flush=True)
        lines.append(line)
    if args.out:
        Path(args.out).write_text(
            "# on_arrival of duration jobs and model jobs, benchmarks/online_arrival.py\n\n" + run_line()
            + " CPU time (`process_time`) per arrival; every call checked against the protocol.\n\n```\n"
            + "\n".join(lines) + "\n```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
