"""The results text of ``optkit reproduce text``: the committed pages' CSVs read back
(:func:`measurements_from_csv`), the claims' verdicts as Markdown (:func:`results_text`), and the
generated blocks of README.md and the problems' READMEs rewritten (:func:`update_results_blocks`).

Built on :mod:`optkit.reproduce_measurements` and :mod:`optkit.reproduce_verdicts`.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from optkit.claims import Experiment, Verdict
from optkit.errors import InputError
from optkit.formulation import Formulation
from optkit.readings import show_value
from optkit.reproduce_measurements import Measurements, experiments, format_value, is_own_reading, same_value, slug
from optkit.reproduce_verdicts import claim_verdicts

__all__ = ["RESULTS_BEGIN", "RESULTS_END", "measurements_from_csv", "results_text", "update_results_blocks"]


RESULTS_BEGIN = "<!-- results:begin {key} -->"
RESULTS_END = "<!-- results:end {key} -->"
_PAPER_TITLES = {"a-srpt": "A-SRPT", "titan": "Titan", "sjf-bco": "SJF-BCO",
                 "llm": "LLM-era jobs (A-SRPT paper, Sec. VI)"}


def measurements_from_csv(folder: str | Path, papers: Sequence[str] | None = None) -> Measurements:
    """The stored measurements of the committed pages: every ``PAPER.csv`` in ``folder`` read back
    into :class:`Measurements` (one row per experiment, reading setting and seed), with every
    registered experiment of those papers selected (an experiment without rows, such as the
    testbed's, has no measurement). Labels are recomputed against today's defaults from each row's
    full setting (column ``readings``), so a changed default shows; ``stored_defaults`` keeps the
    setting each experiment's pages called "default" when they were generated."""
    base = Path(folder)
    known = experiments()
    wanted = list(papers) if papers is not None else sorted(
        {e.paper for _, e in known.values() if (base / f"{slug(e.paper)}.csv").exists()})
    rows: dict[tuple[str, str, int], dict[str, Any]] = {}
    stored: dict[str, dict[str, Any]] = {}
    seeds: set[int] = set()
    for paper in wanted:
        path = base / f"{slug(paper)}.csv"
        if not path.exists():
            raise InputError("--out", f"{path} is missing: run optkit reproduce {paper} first")
        with path.open(newline="") as fh:
            for r in csv.DictReader(fh):
                if "readings" not in r:
                    raise InputError(str(path), "has no 'readings' column (a page older than the column)")
                setting = json.loads(r["readings"])
                seed = int(r["seed"])
                seeds.add(seed)
                key = (r["experiment"], r["readings"], seed)
                row = rows.setdefault(key, {"instance_name": r["experiment"], "status": "feasible", "seed": seed,
                                            "params": {"readings": setting}, "metrics": {}, "wall_time_s": None})
                row["metrics"][r["claim"]] = float(r["value"]) if r["value"] != "" else None
                if r["reading"] == "default":
                    stored[r["experiment"]] = setting
    selection = [(f, e, [c.id for c in e.claims]) for _, (f, e) in sorted(known.items()) if e.paper in wanted]
    order = {p: i for i, p in enumerate(wanted)}
    selection.sort(key=lambda x: (order[x[1].paper], x[1].id))
    return Measurements(selection, list(rows.values()), "paper", sorted(seeds), stored_defaults=stored)


def _changed_defaults(m: Measurements, f: Formulation, exp: Experiment) -> list[str]:
    """``name: stored -> today`` for each reading whose default differs from the one the stored
    pages were generated under."""
    stored = m.stored_defaults.get(exp.id)
    if stored is None:
        return []
    out = []
    for name in exp.readings:
        now = f.reading(name).default
        if name in stored and not same_value(stored[name], now):
            out.append(f"`{name}` {show_value(stored[name])} → {show_value(now)}")
        elif name not in stored:
            out.append(f"`{name}` (declared since) → {show_value(now)}")
    return out


def results_text(m: Measurements, key: str = "all", *, pages: str = "benchmarks/results") -> str:
    """The generated results text for ``key``: ``"all"`` (README's Results section: every paper)
    or a problem name (that formulation's claims), from the stored measurements ``m`` and the
    registered claims. ``pages`` is the path from the text's file to the result pages."""
    items = [(f, e, ids) for f, e, ids in m.selection if key == "all" or f.name == key]
    if not items:
        raise InputError("results", f"no claims of {key!r} among the stored measurements")
    out: list[str] = []
    for paper in dict.fromkeys(e.paper for _, e, _ in items):
        rows: list[str] = []
        counts = {"reproduce under today's defaults": 0, "reproduce only under another reading": 0,
                  "do not reproduce under any reading measured": 0, "not comparable": 0,
                  "reported without a paper value (the paper states none)": 0,
                  "not measured under today's defaults": 0}
        changed: list[str] = []
        unmeasured_default: list[str] = []
        for f, exp, ids in items:
            if exp.paper != paper:
                continue
            verdicts = claim_verdicts(m, f, exp)
            has_rows = any(r["instance_name"] == exp.id for r in m.rows)
            own = _own_readings(f, exp)
            moved = _changed_defaults(m, f, exp)
            if moved:
                changed.append(f"`{exp.id}`: {', '.join(moved)}")
            for c in exp.claims:
                per, overall = verdicts[c.id]
                d = per.get("default")
                if c.states_no_value:
                    counts["reported without a paper value (the paper states none)"] += 1
                elif c.incomparable:
                    counts["not comparable"] += 1
                elif (d is None or d.reproduces is None) and own and any(v.reproduces is not None for v in per.values()):
                    # its defaults cannot be measured (the prediction on traces only): judged where it can be
                    counts["reproduce only under another reading" if any(v.reproduces for v in per.values())
                           else "do not reproduce under any reading measured"] += 1
                elif d is None or d.reproduces is None:
                    counts["not measured under today's defaults"] += 1
                    if has_rows and exp.id not in unmeasured_default and not own:
                        unmeasured_default.append(exp.id)
                elif d.reproduces:
                    counts["reproduce under today's defaults"] += 1
                elif any(v.reproduces for v in per.values()):
                    counts["reproduce only under another reading"] += 1
                else:
                    counts["do not reproduce under any reading measured"] += 1
                ours = "-" if d is None or d.mean is None else format_value(d.mean, c.unit) + (
                    f" [{format_value(d.low)}, {format_value(d.high)}]" if d.seeds > 1 else "")
                if own and (d is None or d.mean is None) and not (c.incomparable or c.states_no_value):
                    ours = f"- (not measurable at the defaults; measured at {own} only)"
                elif d is None and has_rows:
                    ours = "not measured under today's defaults"
                tolerance = "-" if c.states_no_value else f"±{c.tolerance:.3g}"
                said = _measured_range(per, c.unit) if c.states_no_value else overall
                rows.append(f"| `{c.id}` | {c.where} | {format_value(c.paper_value, c.unit)} | {tolerance} | {ours} | "
                            f"{said.replace('|', '/')} |")
        total = sum(counts.values())
        title = _PAPER_TITLES.get(paper, paper)
        out += [f"**{title}** ([page]({pages}/{slug(paper)}.md), [CSV]({pages}/{slug(paper)}.csv)): "
                f"{total} claims registered; " + "; ".join(f"{n} {k}" for k, n in counts.items() if n) + ".", ""]
        if changed:
            out += [f"Defaults changed since these measurements were made (each reading's reason and history say "
                    f"why; the stored rows keep the values they were measured under): {'; '.join(changed)}. "
                    + (f"Not measured under today's defaults, to re-run at paper scale: "
                       f"{', '.join(f'`{x}`' for x in unmeasured_default)}." if unmeasured_default else ""), ""]
        out += ["| claim | where | paper | tolerance | ours, today's defaults: mean [min, max] | verdict over the "
                "readings measured |", "|---|---|---:|---:|---:|---|", *rows, ""]
    marks = "† marks a reading label that sets a post-hoc reading (introduced after results were seen) away from " \
            "its default."
    return "\n".join([*out, marks]).rstrip() + "\n"


def _own_readings(f: Formulation, exp: Experiment) -> str:
    """``"workload=itp, philly"``: the readings ``exp`` cannot be measured at the default of
    (:func:`~optkit.reproduce_measurements.is_own_reading`, e.g. a prediction measured on traces
    only) with the values it is measured at; ``""`` when it has none. Such an experiment's default
    row holds no value by design, so its claims are judged under the readings it is measured at."""
    return "; ".join(f"{n}={', '.join(show_value(v) for v in exp.sweep[n])}"
                     for n in exp.readings if is_own_reading(f, exp, n))


def _measured_range(per: Mapping[str, Verdict], unit: str) -> str:
    """The verdict column of a claim the paper states no number for: what was measured instead
    of a verdict, the lowest and the highest mean over seeds among the readings measured, each
    with its reading label (the page has every reading's value)."""
    means = {label: v.mean for label, v in per.items() if v.mean is not None}
    if not means:
        return "no paper value; not measured"
    if len(means) == 1:
        return "no paper value; one reading measured"
    # ties: the default, then the label with the fewest readings away from their defaults, then text order
    order = sorted(means, key=lambda k: (k != "default", k.count(", "), k))
    low = min(order, key=lambda k: means[k])
    high = max(order, key=lambda k: means[k])
    return (f"no paper value; over the {len(means)} readings measured, means from {format_value(means[low], unit)} "
            f"({low}) to {format_value(means[high], unit)} ({high})")


def update_results_blocks(path: str | Path, texts: Callable[[str], str], *, check: bool = False) -> bool:
    """Replace every ``<!-- results:begin KEY -->`` ... ``<!-- results:end KEY -->`` block of
    ``path`` with ``texts(KEY)``; with ``check``, write nothing. Returns whether the file differs
    from the generated text (the blocks' contents only)."""
    p = Path(path)
    text = p.read_text()
    pattern = re.compile(r"(<!-- results:begin (?P<key>[\w-]+) -->\n)(?P<body>.*?)(<!-- results:end (?P=key) -->)",
                         re.S)
    if not pattern.search(text):
        raise InputError(str(p), "has no <!-- results:begin KEY --> ... <!-- results:end KEY --> block")
    new = pattern.sub(lambda mo: mo.group(1) + texts(mo.group("key")) + mo.group(4), text)
    if new != text and not check:
        p.write_text(new)
    return new != text
