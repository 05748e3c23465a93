"""Does a change to A-SRPT keep its schedules? Both variants on four ci-scale Sec. V workloads.

    PYTHONPATH=. python benchmarks/asrpt_same_schedules.py --workloads DIR --json OUT.json
        [--before BEFORE.json] [--out PAGE.md] [--baselines] [--only-defaults] [--title TITLE] [--label LABEL]
        [--from-json EARLIER.json] [--resume] [--scale ci|paper]

Run it once on the code before a change and once after, on the same workload files: ``--workloads``
names a folder of instance JSON files, written on the first run (so the second run reads the very
instances the first simulated, even if the generator changed meanwhile) and read after. ``--json``
keeps every run's outcome; ``--before`` compares with an earlier run's ``--json`` file, run by run.

The four workloads are the ci-scale Sec. V settings (6 servers x 8 GPUs, :mod:`...ddlwmp.claims`),
synthetic, random-forest predictions, seeds 0-3: Fig. 6's largest (3,600 jobs, load 0.8), Fig. 7's
0% single-GPU job set (1,800 jobs), the same at 1 Gbps (Fig. 8's far end) and Fig. 9's 1,800 jobs
at load 1.0 with the unstated mini-batches x4 (reading ``unstated_batch_factor``). On each, A-SRPT
(``a-srpt``: the forest's predictions) and A-SRPT-Perfect (``a-srpt-perfect``: ñ_i = n_i), each
under four settings: the defaults (tau held out, strict head of line, a delayed job blocks the
queue), ``tau=0`` (the testbed's), ``head_of_line=skip`` (the per-demand queues) and
``delay_blocks_queue=False`` (the delayed job's wake-ups). ``--scale paper`` writes instead two
workloads on the paper's cluster (250 servers x 8 GPUs) with Figs. 7-9's 75,000 jobs: the synthetic
Sec. V workload at load 0.8, random-forest predictions, seed 0 (``sec5_workload``), and the same
jobs at 1 Gbps between servers (Fig. 8's far end). Per run it prints ``evaluate``'s total
completion time, the delayed starts and a SHA-256 of every job's (id, start, completion,
placement): equal hashes are equal schedules. ``--baselines`` adds the paper's five baselines and
FIFO, each under reading ``consolidate`` False (the default) and True, run as ``optkit solve`` runs
them: through the formulation's registered algorithm (``FORMULATION.algorithms[name].run``, seed 0;
a baseline delays no start, its column shows "-"). ``--only-defaults`` keeps each variant's default
setting only (A-SRPT's defaults, a baseline's ``consolidate=False``), for large workloads. The
``--json`` file is rewritten after every run (``--from-json`` reads the runs from such a file instead
of simulating, to compare two runs made side by side) and also records the commit of the
code simulated (the checkout holding the imported ``optkit``, so ``PYTHONPATH=OTHER_CHECKOUT`` runs this
script on another commit's code).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: the checkout named there is the code simulated

from _page import compared_row, finish_comparison  # noqa: E402

SERVERS = 6
SETTINGS: dict[str, dict[str, Any]] = {"defaults": {}, "tau=0": {"tau": 0.0}, "head_of_line=skip": {"head_of_line": "skip"},
                                       "delay_blocks_queue=False": {"delay_blocks_queue": False}}
VARIANTS = ("a-srpt", "a-srpt-perfect")
BASELINES = ("spjf", "spwf", "wcs-duration", "wcs-workload", "wcs-subtime", "fifo")
BASELINE_SETTINGS: dict[str, dict[str, Any]] = {"consolidate=False": {"consolidate": False},
                                                "consolidate=True": {"consolidate": True}}


def workloads() -> dict[str, dict[str, Any]]:
    """The four ci-scale workloads (module docstring), as instance dicts."""
    from optkit.formulations.ddlwmp.claims import fig7_job_set
    from optkit.formulations.ddlwmp.readings import READINGS
    from optkit.formulations.ddlwmp.workloads import sec5_workload

    r = {x.name: x.default for x in READINGS}
    f7 = fig7_job_set(r, jobs=1800, scale="ci", seed=1, share=0.0)
    f8 = fig7_job_set(r, jobs=1800, scale="ci", seed=2, share=0.0)
    f8 = dict(f8, cluster=dict(f8["cluster"], inter_bandwidth=1.25e8))
    return {"fig6-3600-load0.8-seed0": sec5_workload("synthetic", jobs=3600, servers=SERVERS, load=0.8, seed=0),
            "fig7-share0-seed1": f7, "fig8-1gbps-seed2": f8,
            "fig9-load1.0-batchx4-seed3": sec5_workload("synthetic", jobs=1800, servers=SERVERS, load=1.0, seed=3,
                                                        unstated_batch_factor=4.0)}


def paper_workloads() -> dict[str, dict[str, Any]]:
    """The two paper-cluster workloads of ``--scale paper`` (module docstring), as instance dicts."""
    from optkit.formulations.ddlwmp.workloads import sec5_workload

    d = sec5_workload("synthetic", jobs=75000, servers=250, load=0.8, seed=0)
    d = {k: v for k, v in d.items() if k not in ("meta", "name")}
    return {"paper-75000-load0.8-seed0": d,
            "paper-75000-load0.8-1gbps-seed0": dict(d, cluster=dict(d["cluster"], inter_bandwidth=1.25e8))}


def load_or_write(folder: Path, scale: str = "ci") -> dict[str, dict[str, Any]]:
    """The workloads in ``folder`` (``NAME.json``), written there first if the folder has none
    (``scale``: ``ci``, :func:`workloads`; ``paper``, :func:`paper_workloads`)."""
    files = sorted(folder.glob("*.json"))
    if not files:
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in (paper_workloads() if scale == "paper" else workloads()).items():
            data = {k: v for k, v in data.items() if k not in ("meta", "name")}
            (folder / f"{name}.json").write_text(json.dumps(data))
        files = sorted(folder.glob("*.json"))
    return {f.stem: json.loads(f.read_text()) for f in files}


def code_commit() -> str:
    """The commit of the checkout holding the imported ``optkit`` (``+``: with uncommitted changes to
    ``optkit/`` or ``formulations/``, the code simulated)."""
    import optkit

    where = Path(optkit.__file__).resolve().parent
    git = ["git", "-C", str(where)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no", "--",
                            str(where), str(where.parent / "formulations")], capture_output=True,
                           text=True).stdout.strip()
    return (head or "unknown") + ("+" if dirty else "")


def run(data: dict[str, Any], variant: str, setting: dict[str, Any]) -> dict[str, Any]:
    """One simulation: ``evaluate``'s total completion time, delayed starts, the schedule's hash.
    ``variant``: A-SRPT's (:data:`VARIANTS`, driven here) or a baseline (:data:`BASELINES`, run by
    the formulation's registered algorithm; delayed starts None)."""
    from optkit.formulations.ddlwmp.model import DdlwmpInstance, evaluate

    inst = DdlwmpInstance.from_dict(data)
    if variant in VARIANTS:
        from optkit.formulations.ddlwmp.a_srpt import ASRPT
        from optkit.formulations.ddlwmp.simulate import simulate

        policy = ASRPT(inst.cluster, inst.models, seed=0, **setting)
        schedule = simulate(inst, policy, perfect=variant == "a-srpt-perfect")
        delayed: int | None = policy.delayed
    else:
        from optkit.formulations.ddlwmp import FORMULATION

        result = FORMULATION.algorithms[variant].run(inst, seed=0, **setting)
        schedule, delayed = result.solution, None
    ev = evaluate(inst, schedule)
    iters = {j.id: j.iterations for j in inst.jobs}
    rows = sorted((e["id"], repr(e["start"]), repr(e["start"] + iters[e["id"]] * e["alpha_s"]), repr(e["assignment"]))
                  for e in schedule["jobs"])
    return {"jobs": len(rows), "total_completion": ev.objectives["total_completion"], "delayed": delayed,
            "sha256": hashlib.sha256(repr(rows).encode()).hexdigest()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", type=Path, required=True, help="folder of the workload JSON files")
    ap.add_argument("--json", type=Path, required=True, help="write every run's outcome here")
    ap.add_argument("--before", type=Path, help="an earlier run's --json file to compare with")
    ap.add_argument("--out", type=Path, help="write the table as a page here")
    ap.add_argument("--baselines", action="store_true", help="also the six baselines (module docstring)")
    ap.add_argument("--title", default="A-SRPT's schedules before and after a change", help="the page's title")
    ap.add_argument("--from-json", type=Path, help="take the runs from this earlier --json file instead of "
                                                     "simulating them (to compare two runs made side by side)")
    ap.add_argument("--scale", choices=("ci", "paper"), default="ci",
                    help="the workloads written to an empty --workloads folder (module docstring)")
    ap.add_argument("--resume", action="store_true", help="keep the runs the --json file already holds (the same "
                                                            "code's) and simulate the others")
    ap.add_argument("--only-defaults", action="store_true",
                    help="each variant under its default setting only (A-SRPT: defaults; a baseline: consolidate=False)")
    ap.add_argument("--label", help="the code simulated, as the --json file and the page name it (default: the "
                                    "commit of its checkout; a tree exported by git archive has none)")
    args = ap.parse_args(argv)
    before = json.loads(args.before.read_text()) if args.before else None
    got: dict[str, Any] = {}
    done = json.loads(args.from_json.read_text()) if args.from_json else None
    kept = json.loads(args.json.read_text())["runs"] if args.resume and args.json.exists() else {}
    commit = args.label or (done["commit"] if done else code_commit())
    lines = ["| workload | variant | setting | jobs | total completion (s) | delayed starts | schedule SHA-256 |"
             + (" same as before |" if before else ""),
             "|---|---|---|---:|---:|---:|---|" + ("---|" if before else "")]
    same = 0
    for name, data in load_or_write(args.workloads, args.scale).items():
        runs = [(v, SETTINGS) for v in VARIANTS] + ([(b, BASELINE_SETTINGS) for b in BASELINES] if args.baselines else [])
        for variant, settings in runs:
            for label, setting in settings.items():
                if args.only_defaults and label not in ("defaults", "consolidate=False"):
                    continue
                key = f"{name} {variant} {label}"
                if done is not None:
                    if key not in done["runs"] or before is not None and key not in before["runs"]:
                        continue  # (two runs made side by side: the runs both finished)
                    out = got[key] = done["runs"][key]
                else:
                    out = got[key] = kept[key] if key in kept else run(data, variant, setting)
                args.json.write_text(json.dumps({"commit": commit, "runs": got}, indent=1, sort_keys=True))
                row = (f"| {name} | {variant} | {label} | {out['jobs']} | {out['total_completion']:.6e} | "
                       f"{'-' if out['delayed'] is None else out['delayed']} | {out['sha256'][:16]} |")
                row, ok = compared_row(row, before, key, out)
                same += ok
                lines.append(row)
    return finish_comparison(args.json, got, commit, before, lines, same, out=args.out, title=args.title,
                             script="asrpt_same_schedules.py", noun="runs",
                             equal="total completion time, delayed starts and the schedule's hash all equal")


if __name__ == "__main__":
    raise SystemExit(main())
