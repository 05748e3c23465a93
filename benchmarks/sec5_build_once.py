"""Does the Sec. V path build the same instances since it builds each once? (issue 36 item 3)

    PYTHONPATH=. python benchmarks/sec5_build_once.py [--seeds 0 1] [--out benchmarks/perf/sec5_build_once.md]

The Sec. V claims (:mod:`...ddlwmp.claims`) get their workloads from ``sec5_workload(...,
check=False)`` and build each instance once, by :func:`...ddlwmp.sec5.instance_of`; before, the
generator built the instance to check the dict, returned its ``to_dict``, and ``instance_of`` built
it again. The simulation reads nothing but the instance, so equal instances give equal schedules.
For every ci-scale workload of the Sec. V experiments at the default readings (Fig. 6's four job
counts of the synthetic, ITP and Philly workloads, Fig. 7's five single-GPU shares; the ``--seeds``
given), this builds the instance both ways (``check=True`` then ``instance_of``, as before; and
``check=False`` then ``instance_of``, as now) and prints the jobs, a SHA-256 of the ``repr`` of each
instance's ``to_dict`` (values and their types, key order included) and whether the two instances
are equal as dataclasses with equal extras.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))

from _page import run_line  # noqa: E402


def digest(inst: Any) -> str:
    return hashlib.sha256(repr(inst.to_dict()).encode()).hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    from optkit.formulations.ddlwmp.claims import SHARES, fig6_jobs, scale_setting
    from optkit.formulations.ddlwmp.readings import READINGS
    from optkit.formulations.ddlwmp.sec5 import instance_of
    from optkit.formulations.ddlwmp.workloads import sec5_workload, trace_records

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    r = {x.name: x.default for x in READINGS}  # the default readings, as the claims' _r({})
    servers = scale_setting("ci")
    fig7_jobs = int(round(75_000 * servers / scale_setting("paper")))  # Fig. 7's 75,000 jobs at ci scale
    cases: list[tuple[str, dict[str, Any]]] = []
    for seed in args.seeds:
        for workload in ("synthetic", "itp", "philly"):
            records = None if workload == "synthetic" else trace_records(workload)
            for n in fig6_jobs(workload, "ci", None if records is None else len(records)):
                cases.append((f"fig6 {workload} {n} jobs seed {seed}",
                              dict(workload=workload, jobs=n, seed=seed, records=records)))
        for share in SHARES:
            cases.append((f"fig7 share {share:g} seed {seed}",
                          dict(workload="synthetic", jobs=fig7_jobs, seed=seed, single_gpu_share=share,
                               single_gpu_draw=r["single_gpu_draw"])))
    lines = ["| workload | jobs | checked, then instance_of | unchecked, then instance_of | same |",
             "|---|---:|---|---|---|"]
    same_all = 0
    for label, kw in cases:
        wl = kw.pop("workload")
        common = dict(servers=servers, load=r["load"], unstated_batch_factor=r["unstated_batch_factor"], **kw)
        before = instance_of(sec5_workload(wl, check=True, **common))
        now = instance_of(sec5_workload(wl, check=False, **common))
        same = (before == now and [j.extras for j in before.jobs] == [j.extras for j in now.jobs]
                and before.extras == now.extras and digest(before) == digest(now))
        same_all += same
        lines.append(f"| {label} | {len(now.jobs)} | {digest(before)} | {digest(now)} | {'yes' if same else 'NO'} |")
        print(lines[-1], flush=True)
    lines.append("")
    lines.append(f"**{same_all} of {len(cases)} instances the same.**")
    print(lines[-1])
    if args.out:
        args.out.write_text("\n".join(["# The Sec. V instances, built once (issue 36 item 3)", "",
                                       run_line() + "", "", __doc__.split("\n\n", 2)[2].strip(), "", *lines, ""]))
    return 0 if same_all == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
