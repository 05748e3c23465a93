"""Rewrite ``benchmarks/results/index.md`` from the CSVs beside it.

The papers' pages are measured at different times (A-SRPT's paper-scale run takes hours, Titan's
and SJF-BCO's minutes) and each ``optkit reproduce PAPER`` run writes an ``index.md`` of its own
papers only. This script reads every paper's CSV in the folder (``optkit.reproduce.
measurements_from_csv``: the values, readings and seeds the pages were written from) and writes
the one index of all of them with ``optkit.reproduce.write_pages``; the pages themselves are left
as their runs wrote them. A page written from part of its run (``optkit reproduce --stored-only``)
opens with a sentence marked ``PARTIAL_MARK``, which the CSV does not keep: the index repeats it under the
paper's name, so the index never presents a partial run as a whole one.

Usage: ``PYTHONPATH=. python benchmarks/results_index.py [FOLDER]`` (default
``benchmarks/results``).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from optkit.reproduce import measurements_from_csv, write_pages
from optkit.reproduce_measurements import slug
from optkit.reproduce_pages import PARTIAL_MARK


def main(folder: str = "benchmarks/results") -> None:
    out = Path(folder)
    m = measurements_from_csv(out)
    with tempfile.TemporaryDirectory() as tmp:
        write_pages(m, tmp)
        shutil.copyfile(Path(tmp) / "index.md", out / "index.md")
    papers = sorted({exp.paper for _, exp, _ in m.selection})
    notes = [f"{paper}: {line}" for paper in papers
             for line in (out / f"{slug(paper)}.md").read_text().splitlines() if line.startswith(PARTIAL_MARK)]
    if notes:  # before the index's table, after its opening paragraph
        lines = (out / "index.md").read_text().splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("|"))
        (out / "index.md").write_text("\n".join(lines[:at] + [*notes, ""] + lines[at:]) + "\n")
    print(f"{out / 'index.md'}: {len(m.rows)} measurements of {', '.join(papers)}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
