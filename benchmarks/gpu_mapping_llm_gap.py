"""The exact model on the shipped LLM jobs (issue 37 item 4): CP-SAT's value, proven bound and gap,
beside Heavy-Edge's mapping, on the GPT-3-175B-like and Mixtral-8x7B-like instances of
``instances/gpu-mapping/llm/`` (:mod:`optkit.formulations.gpu_mapping.llm_models`): at their
published sizes (1,024 and 64 GPUs, ``LLM_INSTANCES``) and on 16,384 GPUs (``LLM_SCALE_INSTANCES``:
the data-parallel degree scaled).

For each instance and objective (``cut``, ``alpha``): ``cpsat`` (one worker, seed 0, the time limit
given; the count model for the tensor-parallel GPT-3 job, the vertex model for the MoE jobs) and
``heavy-edge`` (through ``colocation.heavy_edge_mapping``: each tensor-parallel replica's slices a
``colocate`` group). Every value is ``evaluate``'s (a mapping it finds infeasible is reported as
such); gap = (value - bound) / value against CP-SAT's proven bound, for both algorithms, so
Heavy-Edge's gap is at least CP-SAT's and never negative (column ``>= bound``: the check that
Heavy-Edge is never better than what CP-SAT proves no mapping beats); times are ``solve``'s wall
time, measured inside the run.

**The time limit is kept**, model construction included: every run is a child process (``--one``),
killed when it has not answered within the limit plus :data:`optkit.deadline.GRACE_S` plus
:data:`STARTUP_S` for starting Python and importing the solvers, and limited to :data:`MEMORY_GIB`
of address space. A CP-SAT run stopped by the limit while it was still building its model says so
in its message (:mod:`optkit.deadline` names the stage); a killed run is reported as killed, with
what it had printed (the stage it had reached: ``--one`` prints one line when the instance is
loaded and one when ``solve`` returns). Those rows are the measured finding where the exact model
cannot be built within the limit.

Run: ``python benchmarks/gpu_mapping_llm_gap.py [--time-limit 60] [--only NAME,...]``. Writes
``benchmarks/perf/gpu_mapping_llm_gap.md``, headed by the command, date, commit, machine and load.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _page import run_line

STARTUP_S = 20.0
"""Seconds a child may take, beyond the solve's limit and grace, to start Python, import optkit and
the solver, and build the instance from its dict (a loaded shared machine slows imports)."""
MEMORY_GIB = 6
"""Address-space limit of each child (``RLIMIT_AS``): a run that lists a 16,384-GPU job's pipeline
edges one by one (O(n^2)) stops with a MemoryError rather than crowd a shared machine."""


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.6g}"


def builders() -> dict[str, Any]:
    from optkit.formulations.gpu_mapping.llm_models import LLM_INSTANCES, LLM_SCALE_INSTANCES

    return {**LLM_INSTANCES, **LLM_SCALE_INSTANCES}


def one(name: str, objective: str, algorithm: str, time_limit: float) -> None:
    """The child: one solve, printing a JSON line when the instance is built and one with the
    outcome (``evaluate``'s verdict and value, CP-SAT's bound, status, message and model size)."""
    from optkit.errors import InputError
    from optkit.formulations.gpu_mapping import FORMULATION, evaluate
    from optkit.solve import solve

    inst = FORMULATION.instance_from_dict(builders()[name]())
    print(json.dumps({"stage": "instance built"}), flush=True)
    from optkit.deadline import GRACE_S

    # past the limit and grace, the Python stack goes to stderr: where a killed run was (run_child)
    faulthandler.dump_traceback_later((time_limit if algorithm == "cpsat" else 0.0) + GRACE_S + 1.0, exit=False)
    params = {"workers": 1} if algorithm == "cpsat" else {}
    # the one-time import of the algorithm's module and solver libraries, which solve does before
    # its clock starts (optkit.deadline: what a limit guarantees), timed on its own
    t_import = time.perf_counter()
    run = FORMULATION.algorithms[algorithm].run
    for step in (getattr(run, "target", None), getattr(run, "preload", None)):
        if callable(step):
            step()
    import_s = time.perf_counter() - t_import
    t0 = time.perf_counter()
    try:
        res = solve(FORMULATION, inst, algorithm, objective=objective, seed=0, params=params,
                    time_limit=time_limit if algorithm == "cpsat" else None)
    except InputError as exc:
        print(json.dumps({"stage": "done", "refused": exc.message}), flush=True)
        return
    wall = time.perf_counter() - t0
    ev = evaluate(inst, res.solution) if res.solution is not None else None
    info = res.info or {}
    print(json.dumps({
        "stage": "done", "status": res.status.value, "wall_s": wall, "import_s": import_s, "bound": res.bound,
        "feasible": None if ev is None else ev.feasible,
        "value": ev.objectives[objective] if ev is not None and ev.feasible else None,
        "message": (res.message or "")[:160], "model": info.get("model"), "incumbent": info.get("incumbent"),
        "variables": info.get("variables"), "constraints": info.get("constraints"),
    }), flush=True)


def _limit_memory() -> None:
    cap = MEMORY_GIB * 2 ** 30
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _where(stack: str) -> str:
    """The innermost optkit frames of the stack the child dumped past its limit (``one``), as
    ``; at the limit: f (file:line) < g (file:line)``, or nothing."""
    frames = re.findall(r'File "([^"]+)", line (\d+) in (\w+)', stack)
    ours = [(Path(f).name, ln, fn) for f, ln, fn in frames if "/formulations/" in f or "/optkit/" in f]
    return "" if not ours else "; at the limit: " + " < ".join(f"{fn} ({f}:{ln})" for f, ln, fn in ours[:3])


def run_child(name: str, objective: str, algorithm: str, time_limit: float) -> dict[str, Any]:
    """One run in a child process with a hard deadline (module docstring); its last JSON line, or
    what it reached when it was killed or crashed."""
    from optkit.deadline import GRACE_S

    hard = (time_limit if algorithm == "cpsat" else 0.0) + GRACE_S + STARTUP_S
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", name, objective, algorithm, str(time_limit)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=hard, preexec_fn=_limit_memory,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                  [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")])})
        out, err, code = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        lines = [json.loads(ln) for ln in out.splitlines() if ln.startswith("{")]
        reached = lines[-1]["stage"] if lines else "starting"
        if reached == "done":  # it answered (its own wall time says when), then did not exit in time
            return {**lines[-1], "child_s": time.perf_counter() - t0}
        return {"status": "killed", "child_s": time.perf_counter() - t0,
                "message": f"no answer within {hard:g} s (limit + {GRACE_S:g} s grace + {STARTUP_S:g} s start-up); "
                           f"last stage printed: {reached}" + _where(err)}
    lines = [json.loads(ln) for ln in out.splitlines() if ln.startswith("{")]
    if code != 0 or not lines or lines[-1].get("stage") != "done":
        tail = (err.strip().splitlines() or [""])[-1][:160]
        return {"status": "crash", "child_s": time.perf_counter() - t0,
                "message": f"exit {code}; last stage printed: {lines[-1]['stage'] if lines else 'starting'}; {tail}"}
    return {**lines[-1], "child_s": time.perf_counter() - t0}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        name, objective, algorithm, limit = sys.argv[2:6]
        one(name, objective, algorithm, float(limit))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per CP-SAT run")
    ap.add_argument("--only", default=None, help="comma-separated instance names (default: all)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "perf" / "gpu_mapping_llm_gap.md"))
    args = ap.parse_args()
    head = run_line(load_when="at start")
    from optkit.formulations.gpu_mapping import FORMULATION

    names = list(builders()) if args.only is None else [n.strip() for n in args.only.split(",") if n.strip()]
    rows = ["| instance | GPUs | servers | objective | algorithm | status | feasible | value | bound | gap | >= bound "
            "| time [s] | import [s] | CP-SAT model, message |",
            "|---|---:|---:|---|---|---|---|---:|---:|---:|---|---:|---:|---|"]
    for name in names:
        inst = FORMULATION.instance_from_dict(builders()[name]())
        size = f"| {name} | {inst.job.n_replicas} | {len(inst.servers)}"
        for objective in ("cut", "alpha"):
            bound = None
            for algorithm in ("cpsat", "heavy-edge"):
                r = run_child(name, objective, algorithm, args.time_limit)
                if "refused" in r:
                    rows.append(f"{size} | {objective} | {algorithm} | refused: {r['refused'][:90]} "
                                "| - | - | - | - | - | - | - | - |")
                    print(rows[-1], flush=True)
                    continue
                if r["status"] in ("killed", "crash"):
                    rows.append(f"{size} | {objective} | {algorithm} | {r['status']} | - | - | - | - | - "
                                f"| {r['child_s']:.0f} (child) | - | {r['message']} |")
                    print(rows[-1], flush=True)
                    continue
                value = r["value"]
                if algorithm == "cpsat":
                    bound = r["bound"]
                gap = (value - bound) / value if value and bound is not None else None
                above = "-" if value is None or bound is None else ("yes" if value >= bound * (1 - 1e-9) else "NO")
                model = "" if algorithm != "cpsat" else (
                    f"{r['model']}, {r['variables'] or '-'} variables, incumbent: {r['incumbent'] or '-'}; "
                    f"{r['message']}")
                rows.append(f"{size} | {objective} | {algorithm} | {r['status']} | "
                            f"{'-' if r['feasible'] is None else ('yes' if r['feasible'] else 'NO')} | "
                            f"{_fmt(value)} | {_fmt(bound)} | {'-' if gap is None else f'{100 * gap:.3f}%'} | "
                            f"{above} | {r['wall_s']:.2f} | {r['import_s']:.2f} | {model} |")
                print(rows[-1], flush=True)
    page = ["# gpu-mapping: the exact model on the shipped LLM jobs", "", head, "",
            f"CP-SAT: one worker, seed 0, time limit {args.time_limit:g} s per run, kept with model construction "
            "included: each run is a child process killed when it has not answered within the limit plus "
            "`optkit.deadline.GRACE_S` plus the start-up allowance (`STARTUP_S`), with an address-space limit "
            f"of {MEMORY_GIB} GiB (`MEMORY_GIB`); `killed` and `crash` rows are such runs, with the last stage "
            "they printed. Values: `evaluate`'s objective (cut in bytes per iteration, alpha in seconds per "
            "iteration); gap = (value - the CP-SAT run's proven bound) / value, for CP-SAT and Heavy-Edge alike "
            "(`>= bound`: Heavy-Edge's value is at least the bound; where CP-SAT is optimal, the bound is the "
            "optimum). The CP-SAT run's bound is the larger of the solver's and `bounds.lower_bound` (on these "
            "jobs' cut: the unit degree bound of `unit_bound.py`), computed before any model is built; a "
            "Heavy-Edge start that meets it is `optimal` with no model built (message `the start mapping meets "
            "bounds.lower_bound`). `time`: `solve`'s wall time; `import`: the one-time import of the algorithm's "
            "module and solver libraries before it, which `solve` does before its clock starts and a time limit "
            "does not cover (`optkit.deadline`). `feasible`: `evaluate`'s verdict (Heavy-Edge keeps each tensor-parallel replica's "
            "slices on one server through its `colocate` keyword). The 16,384-GPU instances are the published "
            "layouts with the data-parallel degree scaled (`llm_models.py`, \"Scale\").", "", *rows, ""]
    Path(args.out).write_text("\n".join(page))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
