"""One synthetic, seeded workload written in two formats: optkit's ddlwmp instance and the CSV
that Alibaba's PAI simulator reads (issue 26 item 4, issue 22 item 6).

The jobs (the same in both files, in release order, ids ``0..N-1``):

* GPU demand k in 1..8 with probabilities ``GPU_WEIGHTS`` (mostly single-GPU jobs, as in
  production GPU clusters; this benchmark's choice);
* run time d: log-normal, median 30 min, sigma 1.5, rounded to whole seconds in [1 s, 1 day]
  (mean about 5,300 s; the sample of PAI's own trace in its README has a mean of 5,039 s:
  avg_jct minus wait_time there);
* releases: N points drawn uniformly over [0, T) and floored to whole seconds, sorted (a Poisson
  process conditioned on its count), with T = sum(k·d) / (load · G): the offered load
  (GPU-seconds asked per GPU-second of the cluster over the arrival span) is ``load``.

Both simulators then see the same problem:

* optkit: 812 servers x 8 GPUs (G = 6,496), one model per GPU count, ``k{k}``: one stage of k
  replicas that exchange nothing (zero bytes everywhere), whose iteration takes 1 s, so a job of
  d iterations runs d seconds on any placement, split across servers or not; the prediction is
  perfect (``predicted_iterations`` = d).
* PAI: one node of 6,496 GPUs (``num_nodes=1``, the simulator's "one big node formulation"),
  ``num_gpu`` = k, ``duration`` = d, ``submit_time`` = the release; ``num_cpu`` = k on a node of
  6,496 CPUs, so the CPU constraint is the GPU constraint again (with ``num_cpu`` = 0 PAI's
  shortcut "the smallest job does not fit" never fires and PAI runs slower: this choice is the
  one that favours PAI). ``job_id`` = the position, the tie key of PAI's FIFO and SJF sorts, as
  ``Job.seq`` is optkit's.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np

SERVERS, GPUS_PER_SERVER = 812, 8
TOTAL_GPUS = SERVERS * GPUS_PER_SERVER  # 6,496: PAI's single pool
GPU_WEIGHTS = (0.50, 0.15, 0.05, 0.12, 0.03, 0.03, 0.02, 0.10)  # P(k GPUs), k = 1..8
MEDIAN_S, SIGMA, MAX_S = 1800.0, 1.5, 24 * 3600


def jobs(n: int, load: float, seed: int, servers: int = SERVERS) -> dict[str, np.ndarray]:
    """``{"release", "gpus", "duration", "servers"}`` (int64 arrays, release order; the number of
    8-GPU servers whose GPUs the load is measured against) of the workload."""
    if n < 1 or not load > 0:
        raise ValueError(f"need n >= 1 jobs and a load > 0, got {n}, {load}")
    rng = np.random.default_rng(seed)
    gpus = rng.choice(np.arange(1, 9), size=n, p=GPU_WEIGHTS).astype(np.int64)
    dur = np.clip(np.rint(MEDIAN_S * np.exp(SIGMA * rng.standard_normal(n))), 1, MAX_S).astype(np.int64)
    span = float((gpus * dur).sum()) / (load * servers * GPUS_PER_SERVER)
    release = np.sort(np.floor(rng.uniform(0.0, span, size=n))).astype(np.int64)
    return {"release": release, "gpus": gpus, "duration": dur, "servers": np.int64(servers)}


def total_gpus(w: dict[str, np.ndarray]) -> int:
    """The GPUs of the workload's cluster (PAI's single pool)."""
    return int(w["servers"]) * GPUS_PER_SERVER


def offered_load(w: dict[str, np.ndarray]) -> float:
    """sum(k·d) / (G · arrival span), the span being the last release (+1 s)."""
    return float((w["gpus"] * w["duration"]).sum()) / (total_gpus(w) * float(w["release"][-1] + 1))


def optkit_instance(w: dict[str, np.ndarray]) -> dict[str, Any]:
    """The ddlwmp instance dict of the workload (812 x 8 GPUs, zero communication)."""
    models = {f"k{k}": {"allreduce": "ring", "stages": [
        {"replicas": k, "fwd_time": 0.0, "bwd_time": 1.0, "in_bytes": 0.0, "out_bytes": 0.0, "param_bytes": 0.0}]}
        for k in range(1, 9)}
    job_list = [{"id": str(i), "release": r, "model": f"k{k}", "iterations": d, "predicted_iterations": d}
                for i, (r, k, d) in enumerate(zip(w["release"].tolist(), w["gpus"].tolist(), w["duration"].tolist()))]
    return {"problem": "ddlwmp",
            "cluster": {"servers": int(w["servers"]), "gpus_per_server": GPUS_PER_SERVER, "inter_bandwidth": 1.25e9,
                        "intra_bandwidth": 3e11},
            "models": models, "jobs": job_list}


PAI_COLUMNS = ("job_id", "user", "submit_time", "duration", "num_gpu", "num_cpu", "num_inst")


def write(w: dict[str, np.ndarray], json_path: str | Path, csv_path: str | Path) -> None:
    """Write the workload as optkit's instance (``json_path``) and PAI's trace CSV (``csv_path``)."""
    Path(json_path).write_text(json.dumps(optkit_instance(w), separators=(",", ":")) + "\n")
    with open(csv_path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(PAI_COLUMNS)
        for i, (r, k, d) in enumerate(zip(w["release"].tolist(), w["gpus"].tolist(), w["duration"].tolist())):
            out.writerow((i, "u0", r, d, k, k, 1))


def read_completions(path: str | Path) -> dict[str, float]:
    """``{job id: completion time}`` of a schedule file (optkit's JSON, or this benchmark's
    ``job_id,completion`` CSV of a PAI run)."""
    p = Path(path)
    if p.suffix == ".json":
        return {j["id"]: float(j["completion"]) for j in json.loads(p.read_text())["jobs"]}
    with open(p, newline="") as f:
        return {row["job_id"]: float(row["completion"]) for row in csv.DictReader(f)}
