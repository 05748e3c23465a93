"""Cut quality and time of Heavy-Edge, Heavy-Edge-refine, METIS, KaHIP and the exact solvers,
side by side on the ``medium`` and ``large`` gpu-mapping suites, in one harness run.

Every run goes through ``optkit.harness`` (its own process, hard time limit, solution checked by
``evaluate``, rows in SQLite so an interrupted benchmark resumes). Gaps are against the best
proven bound of each instance (the exact solvers' bounds and ``bounds.lower_bound``). The script
also counts how often METIS and KaHIP missed the exact part sizes and had to be repaired.

Run: ``python benchmarks/gpu_mapping_peers.py [--time-limit 30] [--jobs 2] [--objective cut]``.
Writes ``benchmarks/perf/gpu_mapping_peers_<objective>.md``, headed by the command, date, commit,
machine and load (``_page.run_line``). ``--db`` resumes an interrupted run; its rows are keyed by
instance, algorithm and settings, not by the code, so measure changed code into a new ``--db``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections import Counter
from pathlib import Path

from _page import run_line

from optkit.formulations.gpu_mapping import FORMULATION
from optkit.harness.compare import compare
from optkit.harness.executors import LocalExecutor
from optkit.report import format_table, summarize

ALGORITHMS = ["heavy-edge", "heavy-edge-refine", "metis", "kahip", "cpsat", "highs"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suites", default="medium,large")
    ap.add_argument("--objective", default="cut", choices=["cut", "alpha"])
    ap.add_argument("--time-limit", type=float, default=30.0, help="seconds per run (exact solvers stop there)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--db", default=os.path.join(tempfile.gettempdir(), "optkit-bench-peers.sqlite"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    out = Path(args.out or Path(__file__).parent / "perf" / f"gpu_mapping_peers_{args.objective}.md")

    settings = (
        f"{args.jobs} runs at a time, time limit {args.time_limit:g} s per run. Gap = (objective - best proven "
        "bound) / objective over the instance's best bound (exact solvers' bounds and `bounds.lower_bound`). "
        "Wall time is the algorithm's own, from the harness.")
    lines: list[str] = []
    for suite in args.suites.split(","):
        items = FORMULATION.suites[suite].build()
        sizes = sorted(sum(st["replicas"] for st in d["job"]["stages"]) for _, d in items)
        print(f"{suite}: {len(items)} instances, {sizes[0]}..{sizes[-1]} replicas", flush=True)
        rep = compare("gpu-mapping", items, ALGORITHMS, [args.objective], seeds=[0],
                             time_limit=args.time_limit, db=args.db, executor=LocalExecutor(args.jobs),
                             progress=True, source=suite, log=print)
        table = format_table(summarize(rep.rows))
        print(table)
        repairs = Counter()
        for r in rep.rows:
            if r["algorithm"] in ("metis", "kahip"):
                info = r.get("info") or {}
                repairs[(r["algorithm"], bool(info.get("repaired")))] += 1
        lines += ["", f"## {suite}: {len(items)} instances, {sizes[0]}..{sizes[-1]} replicas", "", "```", table, "```", ""]
        for algo in ("metis", "kahip"):
            n = repairs[(algo, True)] + repairs[(algo, False)]
            if n:
                lines.append(f"- {algo}: part sizes repaired on {repairs[(algo, True)]} of {n} instances")
        for c in rep.conflicts:
            lines.append(f"- BOUND CONFLICT: {c.describe()}")
        for note in rep.notes:
            lines.append(f"- note: {note}")
    header = [f"# gpu-mapping peers: objective `{args.objective}` on {args.suites}", "", run_line() + " " + settings]
    text = "\n".join(header + lines) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
