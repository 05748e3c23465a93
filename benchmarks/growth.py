"""How every algorithm's cost grows with its input: time and peak memory over a geometric range of
sizes, and the fitted exponent b of ``cost = a * size**b`` (issue 26, item 5).

    python benchmarks/growth.py [--problems ddlwmp,gpu-mapping,nimp,rar-ddls,gpu-mapping-llm-tp,...] [--quick]
                                [--algorithms heavy-edge,...] [--exact-limit 60] [--out benchmarks/perf]

Every point runs in its own child process (``--point``), so its peak memory (``ru_maxrss``) is
its own and a point that overruns its cap (``--cap``, default 900 s) ends its series instead of
the benchmark. A point is one ``optkit.solve`` of one algorithm on one generated instance
(seed 0): the time is the engine's ``wall_time_s``, the algorithm alone (neither the instance's
generation nor ``evaluate``). The memory is the child's peak RSS minus the peak RSS of a child
that builds the same instance and runs nothing (so it is what the algorithm adds to holding its
input; the whole peak is printed beside it).

Sizes (the issue's ranges; ``--quick`` keeps the three smallest of each):

* ddlwmp, every non-exact algorithm: ``generate(jobs=n, servers=250)`` (G = 2,000 GPUs at the
  generator's offered load 0.8, so the queue does not grow with n), n = 10k, 31.6k, 100k,
  316k, 1M jobs.
* gpu-mapping, Heavy-Edge, heavy-edge-refine, the peers and the random baseline: GPT-175B's
  Table II pipeline (``pipe8x1``'s 8 stages) with every stage widened to ``n / 8`` replicas, on
  ``n / 8`` fully free 8-GPU servers; n = 8, 16, ..., 4,096 replicas, and for Heavy-Edge on to
  16,384 (issue 37: a job on a 16,384-GPU cluster). Heavy-Edge's points time the algorithm's
  entry directly (the ``heavy-edge`` callable that ``optkit.solve`` times), not through
  ``optkit.solve``, whose ``evaluate`` computes the cut from the job's edge list (7 (n/8)^2
  edges: 29 million at 16,384, gigabytes in Python) up to the model's ``EDGE_LIST_MAX``; the
  mapping is checked by its server loads instead (Heavy-Edge itself never lists those edges).
  These points also record the CPU time of the call (``time.process_time``: the process's own CPU
  seconds, which a shared machine's load does not inflate as it does the wall time) and the table
  gives its exponent beside the wall time's.
* LLM jobs (issue 37 item 4; Sec. VI's tensor-parallel and MoE stages), the shipped layouts of
  :mod:`optkit.formulations.gpu_mapping.llm_models` with the data-parallel degree as the scale
  knob, on idle 8-GPU servers unless said: ``gpu-mapping-llm-tp``, GPT-3-175B's TP 8 x PP 16 at
  DP 1, 2, ..., 128 (128 to 16,384 GPUs; every replica's 8 slices a ``colocate`` group);
  ``gpu-mapping-llm-moe``, Mixtral-8x7B's EP 8 x PP 4 at 4, 8, ..., 512 replicas of the 8 expert
  groups (128 to 16,384 GPUs); ``gpu-mapping-llm-moe-mixed``, the same on a shared cluster's free
  GPUs (pattern ``mixed``, seed 0: one-GPU servers among them, Heavy-Edge's case 2). The
  16,384-GPU points are the shipped instances ``instances/gpu-mapping/llm/*dp128*`` and
  ``*dp4096*``. Heavy-Edge is timed directly as above, through
  ``colocation.heavy_edge_mapping`` (the formulation's ``heavy-edge``); the mapping is checked by
  ``evaluate`` (feasibility: server loads and each replica's slices on one server) after the
  peak memory is read, and the point's objective is its alpha. heavy-edge-refine goes through
  ``optkit.solve`` (objective ``alpha``), until a point overruns the cap or 4,096 GPUs (it holds
  the job's dense n x n matrix).
* nimp, Titan and its baselines: ``generate.cluster(0, workers=n)`` with enough racks of eight
  8-GPU machines for n workers at the generator's occupancy (at least its 64 racks);
  n = 8, 16, ..., 4,096 workers.
* rar-ddls, SJF-BCO and its baselines: ``paper_sec7(0, servers=max(4, n // 8), mix=...)`` with
  the Sec. 7 GPU mix scaled to n jobs; n = 20, 63, 200, 632, 2,000 jobs.
* every exact solver: the problem's small generator at growing sizes until a size is not proven
  optimal within ``--exact-limit`` seconds (the series stops there).

The exponent is a least-squares fit of log(cost) on log(size) over the points whose time is at
least 5 ms (below that a Python call's fixed cost dominates); the papers' stated complexities
are printed beside it (Titan, Theorem 7: O(2 |S|^2 |N| T); SJF-BCO, Theorem 6:
O(n_g |J| N log N log T); the A-SRPT paper states none for its online algorithm).
Output: ``growth.md`` (the table), ``growth.json`` (every point) and ``growth.png`` (log-log).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DDLWMP_JOBS = [10_000, 31_623, 100_000, 316_228, 1_000_000]
POW2 = [8 * 2 ** k for k in range(10)]  # 8 .. 4096
GPU_SIZES = [8 * 2 ** k for k in range(12)]  # 8 .. 16384: heavy-edge's series (issue 37)
SCALE_ALGORITHMS = ("heavy-edge",)  # gpu-mapping algorithms timed directly, to 16,384 (module docstring)
RAR_JOBS = [20, 63, 200, 632, 2000]
STATED = {
    "titan": "O(2 |S|^2 |N| T) (Theorem 7)",
    "sjf-bco": "O(n_g |J| N log N log T) (Theorem 6)",
    "a-srpt": "none stated", "a-srpt-perfect": "none stated", "heavy-edge": "none stated",
}
FLOOR_S = 0.005
# What each exponent means against the input's own growth (written once, from the series'
# construction above; the numbers themselves are in the table).
NOTES = [
    "**Input sizes.** The gpu-mapping job of n replicas has 8 stages of n/8 replicas; consecutive "
    "stages exchange activations replica to replica, so its graph has 7 (n/8)^2 + n edges: the edge "
    "list grows as n^2. Heavy-Edge runs on the stage structure instead (each complete bipartite set "
    "of edges between two stages is one block; heavy_edge.py, \"Cost\"), so its time is measured "
    "against n, the GPUs, up to 16,384 (its entry timed directly, wall and CPU time: see the script's "
    "docstring); the other gpu-mapping algorithms build the n x n adjacency and stop at 4,096. The nimp cluster keeps 512 machines up to 512 workers and "
    "grows with n after that; halving-doubling has about 2 log2 n phases (T). The rar-ddls workload "
    "scales servers (N grows with n) and horizon with the jobs.",
    "**LLM jobs (issue 37).** The TP and MoE series' graphs have the same shape as the pipeline "
    "job's: every slice or expert group of a stage joined to every one of the next stage (the edge "
    "list grows as n^2), the data-parallel, tensor-parallel and all-to-all edges within stages O(n) "
    "(8 slices or groups a replica). Heavy-Edge keeps each stage pair's pipeline edges as one block "
    "there too, with each tensor-parallel replica's slices placed as one unit (heavy_edge.py, "
    "\"Cost\" and \"Co-location\"), so its time is measured against the GPUs up to 16,384, where "
    "the points are the shipped instances (issue 37's goals: within 1 s there, an exponent of at "
    "most 1.3). heavy-edge-refine holds the job's dense n x n matrix and stops at 4,096 GPUs or the cap.",
    "**Against the papers' complexities.** Titan, Theorem 7, O(2 |S|^2 |N| T): with |S| fixed at 512 "
    "up to 512 workers this is n log n there and n^3 log n beyond; the fitted exponent is below both. "
    "SJF-BCO, Theorem 6, O(n_g |J| N log N log T): with |J| and N both proportional to n here, n^2 "
    "up to logarithms; the fitted exponent is below it. A-SRPT and its baselines: no complexity "
    "stated; the fit is close to linear in the jobs at a fixed cluster.",
    "**Above linear in the input, no stated complexity.** heavy-edge-refine (optkit's local search "
    "after Heavy-Edge: each move scores every swap of replicas between servers) and KaHIP (an external "
    "graph partitioner, a peer) grow fastest (KaHIP reaches the point cap first); neither is a paper's "
    "algorithm.",
    "**Exact solvers.** A series stops at the first size not proven optimal within the limit. The "
    "limit bounds the solver's search, not the building of its model: a point proven after the limit "
    "(the table says where) counts as not proven within it, and is a finding: model construction "
    "runs unbounded. Since these points were measured, the rar-ddls solvers stop their greedy warm "
    "start at half the limit and their MILP build at the limit (tests/test_rar_ddls_exact.py); "
    "HiGHS through Pyomo can still overrun on large models.",
]


# ----------------------------------------------------------------------------- instances
def ddlwmp_instance(n: int) -> dict[str, Any]:
    from optkit.formulations.ddlwmp.generate import generate

    return generate(jobs=n, servers=250, seed=0)


def llm_tp_instance(n: int) -> dict[str, Any]:
    """GPT-3-175B's TP 8 x PP 16 at DP n / 128 (:func:`.llm_models.gpt3_175b`)."""
    from optkit.formulations.gpu_mapping.llm_models import gpt3_175b

    return gpt3_175b(dp=n // 128)


def llm_moe_instance(n: int, free: str = "packed") -> dict[str, Any]:
    """Mixtral-8x7B's EP 8 x PP 4 at n / 32 replicas (:func:`.llm_models.mixtral_8x7b`)."""
    from optkit.formulations.gpu_mapping.llm_models import mixtral_8x7b

    return mixtral_8x7b(free, replicas=n // 32)


def gpu_mapping_instance(n: int) -> dict[str, Any]:
    from optkit.formulations.gpu_mapping.generate import generate

    d = generate(model="gpt-175b", config="pipe8x1", servers=1, seed=0)
    width = max(1, n // len(d["job"]["stages"]))
    for st in d["job"]["stages"]:
        st["replicas"] = width
    total = width * len(d["job"]["stages"])
    d["servers"] = [8] * (total // 8) + ([total % 8] if total % 8 else [])
    d.pop("meta", None)
    d["name"] = f"growth-gpt175b-{total}"
    return d


def nimp_instance(n: int) -> dict[str, Any]:
    from optkit.formulations.nimp.generate import cluster

    return cluster(0, workers=n, racks=max(64, math.ceil(n / 8)))


def rar_instance(n: int) -> dict[str, Any]:
    from optkit.formulations.rar_ddls.generate import paper_sec7

    share = {1: 0.4, 2: 0.2, 4: 0.2, 8: 0.2}
    mix = {g: max(1, round(n * s)) for g, s in share.items()}
    mix[1] += n - sum(mix.values())
    return paper_sec7(0, servers=max(4, n // 8), mix=mix, horizon=100 * n)


def exact_instance(problem: str, n: int) -> dict[str, Any]:
    """The exact solvers' series: the problem's small generator at size n."""
    if problem == "ddlwmp":
        from optkit.formulations.ddlwmp.generate import tiny

        return tiny(0, jobs=n, servers=max(2, n // 2))
    if problem == "gpu-mapping":
        return gpu_mapping_instance(n)
    if problem == "nimp":
        from optkit.formulations.nimp.generate import medium

        return medium(0, workers=n, machines=n)
    from optkit.formulations.rar_ddls.generate import tiny as rtiny

    return rtiny(0, jobs=n, servers=max(2, n // 2), max_horizon=40 * n)


LLM_SIZES = [128 * 2 ** k for k in range(8)]  # 128 .. 16384 GPUs (module docstring, "LLM jobs")
HEURISTIC_SIZES: dict[str, tuple[list[int], Callable[[int], dict[str, Any]], str]] = {
    "ddlwmp": (DDLWMP_JOBS, ddlwmp_instance, "jobs"),
    "gpu-mapping": (GPU_SIZES, gpu_mapping_instance, "replicas"),
    "nimp": (POW2, nimp_instance, "workers"),
    "rar-ddls": (RAR_JOBS, rar_instance, "jobs"),
    "gpu-mapping-llm-tp": (LLM_SIZES, llm_tp_instance, "GPUs (TP 8 x PP 16 x DP)"),
    "gpu-mapping-llm-moe": (LLM_SIZES, llm_moe_instance, "GPUs (EP 8 x PP 4 x DP)"),
    "gpu-mapping-llm-moe-mixed": (LLM_SIZES, lambda n: llm_moe_instance(n, "mixed"), "GPUs (EP 8 x PP 4 x DP)"),
}
LLM_SERIES = ("gpu-mapping-llm-tp", "gpu-mapping-llm-moe", "gpu-mapping-llm-moe-mixed")
"""Series of gpu-mapping instances named apart from the problem (module docstring, "LLM jobs")."""


def formulation_of(series: str) -> str:
    """The problem a series' instances belong to (an LLM series is gpu-mapping)."""
    return "gpu-mapping" if series in LLM_SERIES else series
EXACT_UNIT = {"ddlwmp": "jobs", "gpu-mapping": "replicas", "nimp": "workers (= machines)", "rar-ddls": "jobs"}
# Each exact series runs until a size is not proven optimal within --exact-limit, or to its end.
EXACT_SIZES: dict[str, list[int]] = {
    "ddlwmp": [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64],
    "gpu-mapping": POW2,
    "nimp": [4, 8, 16, 32, 64, 128, 256, 512],
    "rar-ddls": [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256],
}


CACHE = Path(os.environ.get("OPTKIT_GROWTH_CACHE", "/tmp/optkit-growth"))


def make(problem: str, n: int, exact: bool) -> dict[str, Any]:
    """The instance dict of one point, generated once per (problem, size, series) and then read
    from ``$OPTKIT_GROWTH_CACHE`` (default ``/tmp/optkit-growth``): a million-job ddlwmp
    instance takes longer to generate (its predictor is fitted) than most algorithms take to run."""
    path = CACHE / f"{problem}-{'exact' if exact else 'heuristic'}-{n}.json"
    if path.is_file():
        return json.loads(path.read_text())
    data = exact_instance(problem, n) if exact else HEURISTIC_SIZES[problem][1](n)
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)
    return data


# ----------------------------------------------------------------------------- one point (child)
def _maxrss_mib() -> float:
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / 1024.0 if sys.platform != "darwin" else kib / 2 ** 20


REPEAT_BUDGET_S = 10.0


def point(problem: str, algorithm: str, n: int, exact: bool, limit: float, repeat: int = 1) -> dict[str, Any]:
    """Build the instance and (unless ``algorithm`` is ``-``) solve it; print a JSON line. With
    ``repeat`` > 1 (``--repeat``), solve up to that many times, each on an instance built afresh
    from its dict (no cache carried over), while building, solving and evaluating have taken
    under ``REPEAT_BUDGET_S`` in all, and keep the least solve time: a shared machine's load only
    ever adds time."""
    import gc

    import optkit
    from optkit.registry import get

    if problem in ("gpu-mapping", *LLM_SERIES) and not exact and algorithm in SCALE_ALGORITHMS:
        return _direct_point(algorithm, n, repeat, problem)
    data = make(problem, n, exact)
    inst = get(formulation_of(problem)).instance_from_dict(data)
    if repeat <= 1:
        del data
    gc.collect()
    if algorithm == "-":
        return {"peak_rss_mib": _maxrss_mib()}
    best, spent = None, 0.0
    for i in range(max(1, repeat)):
        t0 = time.perf_counter()
        if i:
            inst = get(formulation_of(problem)).instance_from_dict(data)
        try:
            res = optkit.solve(formulation_of(problem), inst, algorithm, time_limit=limit if exact else None, seed=0,
                               **({"objective": "alpha"} if problem in LLM_SERIES else {}))
        except optkit.InputError as exc:  # e.g. brute force refusing a size it cannot enumerate
            return {"status": "crash", "message": [str(exc)[:200]], "peak_rss_mib": _maxrss_mib()}
        best = res if best is None or res.wall_time_s < best.wall_time_s else best
        spent += time.perf_counter() - t0  # the budget counts building and evaluate too
        if spent >= REPEAT_BUDGET_S:
            break
    assert best is not None
    return {"status": best.status.value, "wall_s": best.wall_time_s, "peak_rss_mib": _maxrss_mib(),
            "objective": best.objective, "message": (best.message or "")[:200], "runs": i + 1}


def _direct_point(algorithm: str, n: int, repeat: int = 1, problem: str = "gpu-mapping") -> dict[str, Any]:
    """A gpu-mapping point of :data:`SCALE_ALGORITHMS` (module docstring): the algorithm's entry
    timed directly (wall and CPU time); the paper's pipeline job's mapping checked by its server
    loads (every server exactly its free GPUs), alpha (eq. 7) from the stage counts; an LLM
    series' mapping checked by ``evaluate`` after the peak memory is read, alpha its objective."""
    import gc

    import numpy as np

    from optkit.formulations.gpu_mapping import FORMULATION, evaluate, model

    data = make(problem, n, False)
    inst = FORMULATION.instance_from_dict(data)
    gc.collect()
    if algorithm == "-":
        return {"peak_rss_mib": _maxrss_mib()}
    run = FORMULATION.algorithms[algorithm].run
    wall, cpu, spent = math.inf, math.inf, 0.0
    for i in range(max(1, repeat)):  # as point(): each run on an instance built afresh, the least time kept
        t_all = time.perf_counter()
        if i:
            inst = FORMULATION.instance_from_dict(data)
        t0, c0 = time.perf_counter(), time.process_time()
        res = run(inst, objective="alpha", time_limit=None, seed=0)
        took, took_cpu = time.perf_counter() - t0, time.process_time() - c0
        wall, cpu = min(wall, took), min(cpu, took_cpu)
        spent += time.perf_counter() - t_all
        if spent >= REPEAT_BUDGET_S:
            break
    timed = {"wall_s": wall, "cpu_s": cpu, "peak_rss_mib": _maxrss_mib(), "direct": True, "runs": i + 1}
    if problem in LLM_SERIES:
        ev = evaluate(inst, res.solution)
        return {**timed, "status": res.status.value if ev.feasible else "error",
                "objective": ev.objectives["alpha"] if ev.feasible else None,
                "message": "entry timed directly; evaluate: " + ("feasible" if ev.feasible else
                                                                 "; ".join(ev.violations)[:150]),
                "instance": data.get("name")}
    x = model.stage_counts(inst.job, res.solution["assignment"], len(inst.servers))
    ok = [int(c) for c in x.sum(axis=0)] == list(inst.servers) and all(
        len(row) == st.replicas for row, st in zip(res.solution["assignment"], inst.job.stages))
    return {**timed, "status": res.status.value if ok else "error",
            "objective": model.alpha_from_counts(inst.job, inst.cluster, x) if ok else None,
            "message": "entry timed directly; loads checked" + ("" if ok else ": loads wrong"),
            "replicas_per_stage": int(np.max(inst.job.replicas))}


def run_point(problem: str, algorithm: str, n: int, exact: bool, limit: float, cap: float,
              repeat: int = 1) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--point", problem, algorithm, str(n),
           "exact" if exact else "heuristic", str(limit), str(repeat)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=cap, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"status": "cap", "wall_s": None, "child_s": cap}
    if proc.returncode != 0:
        return {"status": "crash", "message": proc.stderr.strip().splitlines()[-1:] or [""], "child_s": time.perf_counter() - t0}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["child_s"] = time.perf_counter() - t0
    return out


# ----------------------------------------------------------------------------- fitting and output
def fit(points: list[tuple[int, float]]) -> tuple[float, float, int] | None:
    """Least-squares exponent b of log y = log a + b log n, its R^2, and the points used."""
    pts = [(math.log(n), math.log(y)) for n, y in points if y is not None and y > 0]
    if len(pts) < 3:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    sxy = sum((x - mx) * (y - my) for x, y in pts)
    b = sxy / sxx
    ss_res = sum((y - (my + b * (x - mx))) ** 2 for x, y in pts)
    ss_tot = sum((y - my) ** 2 for _, y in pts)
    return b, (1 - ss_res / ss_tot) if ss_tot > 0 else 1.0, len(pts)


def algorithms(problem: str, exact: bool) -> list[str]:
    from optkit.registry import get

    f = get(formulation_of(problem))
    return [a.name for a in f.algorithms.values() if (a.kind == "exact") == exact and a.available()]


def sweep(problems: list[str], quick: bool, exact_limit: float, cap: float,
          series: tuple[bool, ...] = (False, True), save: Path | None = None,
          only: set[str] | None = None, repeat: int = 1) -> list[dict[str, Any]]:
    """Every point of the series; each row is appended to ``save`` (JSON lines) as it is
    measured, so a killed run keeps what it measured (``--from-json`` reads such a file)."""
    rows: list[dict[str, Any]] = []
    for problem in problems:
        for exact in series:
            if exact and problem not in EXACT_SIZES:
                continue  # an LLM series: the exact solvers' growth is gpu-mapping's
            sizes = EXACT_SIZES[problem] if exact else HEURISTIC_SIZES[problem][0]
            sizes = sizes[:3] if quick else sizes
            for n in sizes:  # generate and cache every instance first, so the baseline below only loads
                run_point(problem, "-", n, exact, exact_limit, cap)
            base = {n: run_point(problem, "-", n, exact, exact_limit, cap).get("peak_rss_mib") for n in sizes}
            for algorithm in algorithms(problem, exact):
                if only is not None and algorithm not in only:
                    continue
                for n in sizes:
                    if problem in ("gpu-mapping", *LLM_SERIES) and not exact and n > POW2[-1] \
                            and algorithm not in SCALE_ALGORITHMS:
                        break  # the dense-adjacency algorithms' series ends at the model's cap
                    r = run_point(problem, algorithm, n, exact, exact_limit, cap, repeat)
                    r.update(problem=problem, algorithm=algorithm, size=n, exact=exact,
                             input_rss_mib=base.get(n))
                    rows.append(r)
                    if save is not None:
                        with save.open("a") as fh:
                            fh.write(json.dumps(r, default=str) + "\n")
                    print(f"{problem:11s} {algorithm:16s} n={n:>9,} {r.get('status'):>10s} "
                          f"{(r.get('wall_s') or float('nan')):10.4f} s  {r.get('peak_rss_mib') or 0:8.0f} MiB",
                          flush=True)
                    over = exact and (r.get("wall_s") or 0.0) > exact_limit
                    if r.get("status") in ("cap", "crash") or (exact and r.get("status") != "optimal") or over:
                        break
    return rows


LIMIT: dict[str, float] = {}


def _mib(v: float | None) -> str:
    return "not measured" if v is None else f"{v:.0f}"


def _why(r: dict[str, Any]) -> str:
    if r.get("status") == "optimal" and r.get("exact") and r.get("wall_s", 0) > LIMIT.get("exact", math.inf):
        return f"proven in {r['wall_s']:.0f} s, over the {LIMIT['exact']:g} s limit: the limit bounds the search, not the model's construction"
    msg = r.get("message")
    msg = msg[0] if isinstance(msg, list) and msg else msg
    return f"{r.get('status')}: {msg}" if msg and r.get("status") == "crash" else str(r.get("status"))


def table(rows: list[dict[str, Any]]) -> list[str]:
    unit = {p: HEURISTIC_SIZES[p][2] for p in HEURISTIC_SIZES}
    lines = ["| problem | algorithm | size | sizes measured | time at largest | exponent of time (R², points) "
             "| peak RSS at largest (input) | exponent of memory above input | paper's complexity |",
             "|---|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["problem"], r["exact"], r["algorithm"]) for r in rows})
    for problem, exact, algorithm in keys:
        rs = [r for r in rows if (r["problem"], r["exact"], r["algorithm"]) == (problem, exact, algorithm)]
        limit = LIMIT.get("exact", math.inf)
        ok = [r for r in rs if r.get("wall_s") is not None and r.get("status") not in ("cap", "crash", "error")
              and (not exact or (r.get("status") == "optimal" and r["wall_s"] <= limit))]
        if not ok:
            lines.append(f"| {problem} | {algorithm} | | none | {rs[0].get('status')} | | | | |")
            continue
        last = ok[-1]
        ft = fit([(r["size"], r["wall_s"]) for r in ok if r["wall_s"] >= FLOOR_S])
        fc = fit([(r["size"], r["cpu_s"]) for r in ok if r.get("cpu_s") is not None and r["cpu_s"] >= FLOOR_S])
        fm = fit([(r["size"], r["peak_rss_mib"] - r["input_rss_mib"]) for r in ok
                  if r.get("input_rss_mib") is not None and r["peak_rss_mib"] - r["input_rss_mib"] >= 1.0])
        stop = "" if len(ok) == len(rs) else f"; stops at {rs[len(ok)]['size']:,} ({_why(rs[len(ok)])})"
        places = sum(r.get("status") in ("optimal", "feasible") for r in ok)
        if places < len(ok):
            stop += f"; finds a solution at {places} of {len(ok)} sizes"
        size_word = EXACT_UNIT[problem] if exact else unit[problem]
        lines.append(
            f"| {problem} | {algorithm}{' (exact)' if exact else ''} | {size_word} | {ok[0]['size']:,}–{last['size']:,}{stop} "
            f"| {last['wall_s']:.4g} s | " + (f"{ft[0]:.2f} ({ft[1]:.2f}, {ft[2]})" if ft else "too few points ≥ 5 ms")
            + (f"; of CPU time {fc[0]:.2f} ({fc[1]:.2f}, {fc[2]}), {last['cpu_s']:.4g} s at largest" if fc else "")
            + f" | {last['peak_rss_mib']:.0f} MiB ({_mib(last.get('input_rss_mib'))}) | "
            + (f"{fm[0]:.2f} ({fm[1]:.2f}, {fm[2]})" if fm else "below 1 MiB") + f" | {STATED.get(algorithm, '')} |")
    return lines


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    problems = sorted({r["problem"] for r in rows})
    fig, axes = plt.subplots(2, len(problems), figsize=(4.2 * len(problems), 7.5), squeeze=False)
    for j, problem in enumerate(problems):
        for i, exact in enumerate((False, True)):
            ax = axes[i][j]
            for algorithm in sorted({r["algorithm"] for r in rows if r["problem"] == problem and r["exact"] == exact}):
                pts = [(r["size"], r["wall_s"]) for r in rows if (r["problem"], r["algorithm"], r["exact"]) == (problem, algorithm, exact)
                       and r.get("wall_s") and (not exact or r.get("status") == "optimal")]
                if pts:
                    ax.loglog(*zip(*pts), marker="o", label=algorithm)
            ax.set_title(f"{problem} ({'exact' if exact else 'algorithms'})", fontsize=9)
            ax.set_xlabel(HEURISTIC_SIZES[problem][2] if not exact else EXACT_UNIT.get(problem, "(no exact series)"))
            ax.set_ylabel("wall time (s)")
            ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--point":
        problem, algorithm, n, kind, limit, *repeat = sys.argv[2:]
        print(json.dumps(point(problem, algorithm, int(n), kind == "exact", float(limit), int((repeat or [1])[0]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", default="ddlwmp,gpu-mapping,nimp,rar-ddls")
    ap.add_argument("--quick", action="store_true", help="the three smallest sizes of each series")
    ap.add_argument("--repeat", type=int, default=1,
                    help="solve each point up to this many times (fresh instances, while under "
                         f"{REPEAT_BUDGET_S:g} s in all) and keep the least time")
    ap.add_argument("--algorithms", default=None,
                    help="comma-separated algorithm names: measure only these (others' rows: --from-json)")
    ap.add_argument("--exact-limit", type=float, default=60.0, help="seconds an exact solve may take to prove")
    ap.add_argument("--cap", type=float, default=900.0, help="seconds a point's child may take in all")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "perf")
    ap.add_argument("--series", choices=("all", "algorithms", "exact"), default="all",
                    help="the non-exact algorithms' series, the exact solvers' or both")
    ap.add_argument("--from-json", type=Path, nargs="+", metavar="FILE",
                    help="measure nothing: write the page from the points of earlier runs' growth.json "
                         "(their header lines are kept)")
    ap.add_argument("--remeasure-input", type=Path, metavar="FILE",
                    help="re-measure the load-only peak RSS of every (problem, series, size) in FILE "
                         "(a growth.json whose instances are cached) and rewrite FILE")
    args = ap.parse_args()
    if args.remeasure_input:
        rows = json.loads(args.remeasure_input.read_text())
        base = {k: run_point(k[0], "-", k[2], k[1], args.exact_limit, args.cap).get("peak_rss_mib")
                for k in sorted({(r["problem"], r["exact"], r["size"]) for r in rows})}
        for r in rows:
            r["input_rss_mib"] = base[(r["problem"], r["exact"], r["size"])]
        args.remeasure_input.write_text(json.dumps(rows, indent=1, default=str) + "\n")
        return
    if args.from_json:
        rows, notes = [], []
        LIMIT["exact"] = args.exact_limit
        for f in args.from_json:  # a later file's series replaces an earlier file's whole series
            text = f.read_text()
            new = json.loads(text) if text.lstrip().startswith("[") else [json.loads(ln) for ln in text.splitlines() if ln.strip()]
            redone = {(r["problem"], r["algorithm"], r["exact"]) for r in new}
            rows = [r for r in rows if (r["problem"], r["algorithm"], r["exact"]) not in redone] + new
            md = f.with_suffix(".md")
            # a run's own page has its "Run ..." line; a merged page lists its parts' as "- Run ..."
            notes += [ln.removeprefix("- ") for ln in md.read_text().splitlines()
                      if ln.startswith(("Run ", "- Run "))] if md.is_file() else []
        write(args.out, "growth", rows, [f"# How cost grows with size (`benchmarks/growth.py`)", "",
                                         "Measured in parts, one line per part:", ""] + [f"- {n}" for n in notes] + [""])
        return
    problems = [p.strip() for p in args.problems.split(",") if p.strip()]
    unknown = [p for p in problems if p not in HEURISTIC_SIZES]
    if unknown:
        ap.error(f"--problems: unknown {', '.join(unknown)} (known: {', '.join(HEURISTIC_SIZES)})")
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    series = {"all": (False, True), "algorithms": (False,), "exact": (True,)}[args.series]
    LIMIT["exact"] = args.exact_limit
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "growth-quick" if args.quick else "growth"
    only = None if args.algorithms is None else {a.strip() for a in args.algorithms.split(",") if a.strip()}
    rows = sweep(problems, args.quick, args.exact_limit, args.cap, series, save=args.out / f"{stem}.points.jsonl",
                 only=only, repeat=args.repeat)
    head = [f"# How cost grows with size (`benchmarks/growth.py{' --quick' if args.quick else ''}`)", "",
            f"Run {started} on {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
            f"load average {load0:.1f} at start, {os.getloadavg()[0]:.1f} at the end; "
            f"{time.perf_counter() - t0:.0f} s in all. Seed 0 everywhere; exact solves limited to "
            f"{args.exact_limit:g} s. The machine may be shared: absolute times can be inflated, the "
            "exponents much less so."
            + (f" Measured here: {', '.join(sorted(only))} only." if only else "")
            + (f" Each point's time is the least of up to {args.repeat} solves on freshly built instances "
               f"(while under {REPEAT_BUDGET_S:g} s in all)." if args.repeat > 1 else ""), ""]
    write(args.out, "growth-quick" if args.quick else "growth", rows, head)


def write(out: Path, stem: str, rows: list[dict[str, Any]], head: list[str]) -> None:
    """``stem``.json (every point), ``stem``.png (log-log) and ``stem``.md (the table)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(rows, indent=1, default=str) + "\n")
    text = "\n".join(head + table(rows) + ["", f"Plot: `{stem}.png`; every point: `{stem}.json`.", ""]
                     + [n + "\n" for n in NOTES])
    (out / f"{stem}.md").write_text(text)  # before the plot: a plot that fails leaves the page and its run line
    plot(rows, out / f"{stem}.png")
    print(text)


if __name__ == "__main__":
    main()
