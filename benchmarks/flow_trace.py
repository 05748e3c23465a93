"""Which rooms does a simulation walk through, and does it ever walk back? A call-graph trace of one
ci-scale ddlwmp Sec. V comparison and of one nimp Titan replay (issue 36 item 3).

    PYTHONPATH=. python benchmarks/flow_trace.py [--problem ddlwmp|nimp|both] [--jobs 900]
        [--out benchmarks/perf/flow_trace.md] [--title TITLE] [--label LABEL]

``benchmarks/perf/flow_trace.md`` is this script on this branch's code;
``benchmarks/perf/flow_trace_before.md`` the same script on 1ab4764's (exported by ``git archive`` and
put first on ``PYTHONPATH``), the code before issue 36 item 3's changes.

**Rooms.** A room is a stage of the simulation path, given by the code that runs in it (module, and
for the modules that hold two stages, the function); its position is its place in the pipeline.

ddlwmp (:data:`DDLWMP_ROOMS`): 1 workload (``workloads``, ``generate``, ``catalog``, ``sample``),
2 instance (``model``: the cluster, the jobs, the instance, ``from_dict``), 3 driver (``simulate``,
``online``, ``algorithms``), 4 policy (``a_srpt``, ``baselines``, ``policies``), 5 placement
(``placement``), 6 schedule (no code: the schedule dict the driver returns), 7 evaluate
(``model.evaluate`` and the time rule it uses, ``free_time``). ``sec5`` and ``claims`` are the
orchestrator (position 0, not a room); everything else (numpy, the standard library, :mod:`optkit`'s
shared modules such as :mod:`optkit.online`, gpu-mapping's Heavy-Edge and eq. 7, ``readings``) is
*transparent*: it runs in the room of its caller.

nimp's replay (:data:`NIMP_ROOMS`): 1 workload (``replay.load_workload``, ``jobs_from_trace``,
``workload_from_dict``, ``generate_workload`` and their helpers), 2 instance (the fat tree, the
replay config, the jobs: ``replay.FatTree``, ``ReplayConfig``, ``ReplayJob``; ``model``'s
``Job``, ``Machine``, ``NimpInstance``), 3 driver (the rest of ``replay``: ``replay.replay`` and its
event handlers, ``online_jobs``, the jobs as it delivers them), 4 policy (``online``), 5 placement
(``titan``, ``place``, ``baselines``), 6 schedule (``replay.ReplayResult``), 7 evaluate
(``replay.summarize``). ``claims`` is the orchestrator. The model's equations are transparent
(:data:`_NIMP_EQUATIONS`: ``model``'s collective phases, as gpu-mapping's eqs. 4-7 are for ddlwmp:
stateless functions any room evaluates), and so is ``network`` (from commit 32d0e80 on), the state behind
the policy's view (free GPUs, residual bandwidth, the pair capacity: what
:class:`optkit.online.ClusterView`, itself transparent, asks when the policy reads P or reserves a
start). Before that commit the same state and its reservation hook lived in ``replay`` (the driver's
``ClusterState`` and its ``start`` closure), and the trace counts them there.

**What the trace counts** (``sys.setprofile``: every Python call and return):

* An *entry* into room R: a call into R's code from code of another room (or from the
  orchestrator). Consecutive entries from one caller into the same room are merged (the driver
  calls the policy at every instant: one entry), and so are their own entries, so one run is a tree
  of rooms.
* A *read* is not an entry: a call into R that returns without running any Python function of its
  own (a property or a cached value: ``cluster.total_gpus``, a cache hit), i.e. a value R already
  holds, handed over. A helper called for a value that *computes* it (runs Python code: a cache
  miss, a conversion, a recomputation) is an entry.
* A *re-entry*: a room entered a second time in the pre-order walk of a run's room tree (with the
  rooms entered before the runs, the workload's and the instance's, counted as entered): the path
  went on to another room and came back.
* A *climb back up*: an entry into a room earlier in the pipeline than its caller's (a policy
  asking the instance, the evaluation asking the instance, the policy calling the driver).

Code run at import (a module's or a class body's) is no room's work and is transparent.

One-way means: no re-entry and no climb, in any run. A comparison runs the pipeline once per policy
on the same instance; a *run* is one call of :func:`...ddlwmp.sec5.run_policy_readout` (ddlwmp) or
of ``claims.replay_summary`` (nimp; ``_replay_summary`` at 1ab4764), and each is checked on its own;
the workload and the instance are built once before the runs and no run may enter them again.

The ddlwmp comparison is :func:`...ddlwmp.sec5.compare` (A-SRPT and the paper's five baselines, every
reading at its default, seed 0) on the ci-scale Fig. 6 workload of ``--jobs`` jobs (6 x 8 GPUs, load
0.8, random-forest predictions, seed 0; ``sec5_workload``, the generation traced too). The nimp replay
is ``claims.replay_summary`` of Titan (readings at their defaults) on the ci window of seed 0 of the
Microsoft ITP trace (``../shared/data/traces/microsoft-itp``), parsing included. The page prints, per
run, the room tree (with the number of calls merged into each node and the functions entered), the
pre-order walk, the re-entries and climbs with the functions that made them, and the reads.
"""

from __future__ import annotations

import argparse
import inspect
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: the checkout named there is the code traced

PIPELINE = ("workload", "instance", "driver", "policy", "placement", "schedule", "evaluate")
POS = {r: i + 1 for i, r in enumerate(PIPELINE)} | {"orchestrator": 0}

DDLWMP_ROOMS: dict[str, Any] = {
    "workloads": "workload", "generate": "workload", "catalog": "workload", "sample": "workload",
    "model": ("instance", {"evaluate": "evaluate", "_capacity_violation": "evaluate", "free_time": "evaluate",
                           "_on_slot": "evaluate"}),
    "simulate": "driver", "online": "driver", "algorithms": "driver",
    "a_srpt": "policy", "baselines": "policy", "policies": "policy",
    "placement": "placement",
    "sec5": "orchestrator", "claims": "orchestrator",
}
"""ddlwmp's module -> room (a pair: the module's room and its functions of another room)."""

_NIMP_WORKLOAD = {f: "workload" for f in ("load_workload", "jobs_from_trace", "workload_from_dict", "generate_workload",
                                           "_collective", "_model_names", "_num", "_int")}
_NIMP_INSTANCE = {f: "instance" for f in ("FatTree", "ReplayConfig", "ReplayJob", "cluster_instance")}
_NIMP_EQUATIONS: dict[str, str | None] = {f: None for f in (
    "_hd_block", "_hd_phases", "binary_blocks", "halving_doubling_phases", "ring_phases", "phases", "pair_limit",
    "is_placement_sensitive", "placement_sensitive")}
NIMP_ROOMS: dict[str, Any] = {
    "replay": ("driver", {**_NIMP_WORKLOAD, **_NIMP_INSTANCE, "ReplayResult": "schedule", "summarize": "evaluate",
                          "_p": "evaluate"}),
    "model": ("instance", _NIMP_EQUATIONS),
    "online": "policy",
    "titan": "placement", "place": "placement", "baselines": "placement",
    "claims": "orchestrator",
}
"""nimp's module -> room, as :data:`DDLWMP_ROOMS`."""


def room_of_code(rooms: dict[str, Any], package: str) -> Callable[[Any], str | None]:
    """A function from a code object to its room (None: transparent), cached per code object."""
    marker = f"/formulations/{package}/"
    cache: dict[Any, str | None] = {}

    def room(code: Any) -> str | None:
        try:
            return cache[code]
        except KeyError:
            pass
        fn = code.co_filename.replace("\\", "/")
        r: str | None = None
        # a module's or a class body's code runs at import: no room's work
        body = code.co_name == "<module>" or "__qualname__" in code.co_names and "__module__" in code.co_names
        if marker in fn and not body:
            spec = rooms.get(fn.rsplit("/", 1)[-1][:-3])
            if isinstance(spec, tuple):
                head = code.co_qualname.split(".")[0]
                r = spec[1].get(head, spec[0])
            else:
                r = spec
        cache[code] = r
        return r

    return room


class Node:
    """A room in a run's room tree: the calls merged into it, its functions, its children."""

    __slots__ = ("room", "calls", "functions", "children", "parent")

    def __init__(self, room: str, parent: "Node | None") -> None:
        self.room = room
        self.calls = 0
        self.functions: Counter[str] = Counter()
        self.children: list[Node] = []
        self.parent = parent


class Tracer:
    """The room tree of every run, the entries by (caller room, caller function, room, function)
    and the reads, from ``sys.setprofile``'s call and return events (module docstring)."""

    def __init__(self, room: Callable[[Any], str | None], run_marker: Callable[[Any, Any], str | None]) -> None:
        self.room = room
        self.run_marker = run_marker
        self.top = Node("orchestrator", None)
        self.runs: list[tuple[str, Node]] = []
        # per live frame: [node, is an entry, node created by it, ran Python code, caller's function, its room's
        # function (a transparent frame: its caller's), run node]
        self.stack: list[list[Any]] = []
        self.entries: Counter[tuple[str, str, str, str, str]] = Counter()  # (run, caller room, caller fn, room, fn)
        self.reads: Counter[tuple[str, str, str, str, str]] = Counter()
        self.run_name = "before the runs"

    def hook(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            stack = self.stack
            code = frame.f_code
            if stack:
                top = stack[-1]
                top[3] = True
                node = top[0]
            else:
                node = self.top
            run = self.run_marker(code, frame)
            if run is not None:  # a run starts: a fresh tree under the orchestrator
                self.run_name = run
                rn = Node("orchestrator", None)
                self.runs.append((run, rn))
                stack.append([rn, False, False, True, "", code.co_qualname, rn])
                return
            r = self.room(code)
            if r is None or r == node.room:  # runs in its caller's room (transparent code: as its caller)
                up = stack[-1][5] if stack else ""
                stack.append([node, False, False, False, "", up if r is None else code.co_qualname, None])
                return
            kids = node.children
            if kids and kids[-1].room == r:
                target, new = kids[-1], False
            else:
                target, new = Node(r, node), True
                kids.append(target)
            label = code.co_qualname
            target.calls += 1
            target.functions[label] += 1
            caller = stack[-1] if stack else None
            caller_label = "" if caller is None else caller[5] or "(orchestrator)"
            stack.append([target, True, new, False, caller_label, label, None])
        elif event == "return":
            if not self.stack:
                return
            rec = self.stack.pop()
            if rec[6] is not None:  # the run ends
                self.run_name = "after the runs"
                return
            if not rec[1]:
                # a transparent frame or one of the same room: its label is its caller's entry's
                return
            entered: Node = rec[0]
            key = (self.run_name, entered.parent.room if entered.parent else "?", rec[4], entered.room, rec[5])
            if not rec[3]:  # ran no Python code: a read
                self.reads[key] += 1
                entered.calls -= 1
                entered.functions[rec[5]] -= 1
                if not entered.functions[rec[5]]:
                    del entered.functions[rec[5]]
                if rec[2] and entered.calls == 0 and not entered.children and entered.parent is not None:
                    entered.parent.children.remove(entered)
            else:
                self.entries[key] += 1

    def run(self, fn: Callable[[], Any]) -> Any:
        """Call ``fn`` under the trace."""
        hook = self.hook

        def profile(frame: Any, event: str, arg: Any) -> None:
            if event == "call" or event == "return":
                hook(frame, event, arg)

        before = sys.getprofile()
        sys.setprofile(profile)
        try:
            return fn()
        finally:
            sys.setprofile(before)


WALK_SHOWN, TREE_SHOWN, GROUPS_SHOWN = 24, 40, 12
"""How much of a long walk, room tree and list of re-entries the page shows (the counts are of all)."""


def walk(node: Node) -> list[Node]:
    """The pre-order walk of a room tree (the root excluded)."""
    out: list[Node] = []
    for c in node.children:
        out.append(c)
        out.extend(walk(c))
    return out


def path_of(node: Node) -> str:
    parts = []
    n: Node | None = node
    while n is not None and n.room != "orchestrator":
        parts.append(n.room)
        n = n.parent
    return " > ".join(reversed(parts))


def render(node: Node, depth: int = 0) -> list[str]:
    lines = []
    for c in node.children:
        fns = ", ".join(f"`{f}`" + (f" x{n}" if n > 1 else "") for f, n in c.functions.most_common(4))
        more = len(c.functions) - 4
        lines.append(f"{'  ' * depth}- **{c.room}** ({c.calls} call{'s' if c.calls != 1 else ''}: {fns}"
                     + (f", {more} more functions" if more > 0 else "") + ")")
        lines.extend(render(c, depth + 1))
    return lines


def check(tr: Tracer) -> dict[str, dict[str, Any]]:
    """Per run (and ``"before the runs"``): its walk (the rooms in pre-order), its re-entries (the
    nodes of rooms entered before in the walk, the rooms entered before the runs counted) and its
    climbs back up (``{(run, caller room, caller function, room, function): calls}``)."""
    shared = walk(tr.top)
    seen0 = [n.room for n in shared]
    out: dict[str, dict[str, Any]] = {"before the runs": {
        "walk": shared, "re_entries": [n for i, n in enumerate(shared) if n.room in seen0[:i]],
        "climbs": {k: v for k, v in tr.entries.items() if k[0] == "before the runs" and POS[k[3]] < POS[k[1]]}}}
    for name, rn in tr.runs:
        order = walk(rn)
        seen = list(seen0)
        re_entries = []
        for n in order:
            if n.room in seen:
                re_entries.append(n)
            seen.append(n.room)
        out[name] = {"walk": order, "re_entries": re_entries,
                     "climbs": {k: v for k, v in tr.entries.items() if k[0] == name and POS[k[3]] < POS[k[1]]}}
    return out


def report(tr: Tracer, title: str, what: str, wall: float) -> tuple[list[str], dict[str, int]]:
    """The page's section for one traced comparison, and its counts."""
    lines = [f"## {title}", "", what, "", f"Traced in {wall:.0f} s of wall time.", ""]
    lines += ["### Before the runs (the orchestrator's own entries)", ""] + (render(tr.top) or ["- none"]) + [""]
    checked = check(tr)
    rows = ["| run | walk (pre-order, rooms merged as the docstring says) | rooms | re-entries | climbs back up "
            "(caller and callee function pairs) |", "|---|---|---:|---:|---:|"]
    details: list[str] = []
    runs = dict(tr.runs)
    for name, c in checked.items():
        order, re_entries, climbs = c["walk"], c["re_entries"], c["climbs"]
        shown = " -> ".join(n.room for n in order[:WALK_SHOWN]) + (
            f" -> ... ({len(order)} rooms in all)" if len(order) > WALK_SHOWN else "")
        rows.append(f"| {name} | {shown} | {len(order)} | {len(re_entries)} | {len(climbs)} |")
        if name in runs:
            tree = render(runs[name])
            details += [f"### Run {name}", "", "Room tree" + (f" (its first {TREE_SHOWN} of {len(tree)} lines)"
                                                              if len(tree) > TREE_SHOWN else "") + ":", ""]
            details += tree[:TREE_SHOWN] + [""]
        elif re_entries or climbs:
            details += [f"### {name[0].upper()}{name[1:]}", ""]
        if re_entries:
            groups = Counter((n.room, path_of(n), ", ".join(f"`{f}`" for f in sorted(n.functions))) for n in re_entries)
            details += ["Re-entries (room, where, the functions that entered it: times):", ""] + [
                f"- **{room}** again at {where} (by {fns}): {k}" for (room, where, fns), k in groups.most_common(GROUPS_SHOWN)]
            if len(groups) > GROUPS_SHOWN:
                details.append(f"- ... {len(groups) - GROUPS_SHOWN} more kinds, "
                               f"{sum(k for _, k in groups.most_common()[GROUPS_SHOWN:])} re-entries")
            details.append("")
        if climbs:
            details += ["Climbs back up (caller room, caller function -> room, function: calls):", ""] + [
                f"- {k[1]} `{k[2]}` -> **{k[3]}** `{k[4]}`: {v}" for k, v in sorted(climbs.items())] + [""]
        reads = {k: v for k, v in tr.reads.items() if k[0] == name}
        if reads and name in runs:
            details += ["Reads (not entries: no Python code ran in the callee):", ""] + [
                f"- {k[1]} `{k[2]}` -> {k[3]} `{k[4]}`: {v}" for k, v in sorted(reads.items())] + [""]
    total_re = sum(len(c["re_entries"]) for c in checked.values())
    total_climb = sum(len(c["climbs"]) for c in checked.values())
    after = [k for k in tr.entries if k[0] == "after the runs"]
    lines += rows + [""]
    lines.append(f"**Runs: {len(tr.runs)}; re-entries: {total_re}; climbs back up: {total_climb}** (the runs and "
                 "the orchestrator's entries before them)"
                 + (f"; {len(after)} entries after the last run" if after else "") + ".")
    lines += [""] + details
    return lines, {"runs": len(tr.runs), "re_entries": total_re, "climbs": total_climb}


def ddlwmp_tracer(run: Callable[..., Any] | None = None) -> Tracer:
    """A tracer of ddlwmp's rooms whose runs are the calls of ``run`` (a function whose argument
    ``name`` names the run; default :func:`...ddlwmp.sec5.run_policy_readout`)."""
    if run is None:
        from optkit.formulations.ddlwmp.sec5 import run_policy_readout
        run = run_policy_readout
    run_code = run.__code__

    def marker(code: Any, frame: Any) -> str | None:
        return frame.f_locals.get("name") if code is run_code else None

    return Tracer(room_of_code(DDLWMP_ROOMS, "ddlwmp"), marker)


def trace_ddlwmp(jobs: int) -> tuple[list[str], dict[str, int]]:
    from optkit.formulations.ddlwmp import sec5
    from optkit.formulations.ddlwmp.readings import READINGS
    from optkit.formulations.ddlwmp.workloads import sec5_workload

    readings = {x.name: x.default for x in READINGS}
    tr = ddlwmp_tracer()
    # as the Sec. V claims call it (claims._workload): unchecked, the instance built once by
    # instance_of (issue 36 item 3; before that change sec5_workload had no ``check`` and always checked)
    unchecked = {"check": False} if "check" in inspect.signature(sec5_workload).parameters else {}

    def go() -> Any:
        data = sec5_workload("synthetic", jobs=jobs, servers=6, load=0.8, seed=0, **unchecked)
        inst = sec5.instance_of(data)
        return sec5.compare(inst, readings, 0)

    t0 = time.perf_counter()
    runs = tr.run(go)
    what = (f"`sec5.compare` (A-SRPT and the five baselines, readings at their defaults, seed 0) on "
            f"`sec5_workload(\"synthetic\", jobs={jobs}, servers=6, load=0.8, seed=0"
            + "".join(f", {k}={v}" for k, v in unchecked.items()) + ")` (ci-scale Fig. 6's smallest "
            f"point), generated and read by `sec5.instance_of` under the trace. Total completion times: "
            + ", ".join(f"{p} {r['total_completion']:.6e}" for p, r in runs.items()) + ".")
    return report(tr, "ddlwmp: one ci-scale Sec. V comparison", what, time.perf_counter() - t0)


def nimp_tracer(run: Callable[..., Any] | None = None) -> Tracer:
    """A tracer of nimp's rooms whose runs are the calls of ``run`` (a function whose argument
    ``policy`` names the run; default ``claims.replay_summary``, which replays through
    ``replay.replay_policy`` from commit 32d0e80 on and ``replay.replay(POLICIES[...](...))`` before)."""
    if run is None:
        from optkit.formulations.nimp import claims
        run = getattr(claims, "replay_summary", None) or getattr(claims, "_replay_summary")  # (its name at 1ab4764)
    run_code = run.__code__

    def marker(code: Any, frame: Any) -> str | None:
        return frame.f_locals.get("policy") if code is run_code else None

    return Tracer(room_of_code(NIMP_ROOMS, "nimp"), marker)


def trace_nimp() -> tuple[list[str], dict[str, int]] | None:
    from optkit.formulations.nimp import claims

    find = getattr(claims, "trace_dir", None) or getattr(claims, "_trace_dir")  # (its name at 1ab4764)
    d = find()
    if d is None:
        return None
    tr = nimp_tracer()
    summary = getattr(claims, "replay_summary", None) or getattr(claims, "_replay_summary")
    t0 = time.perf_counter()
    s = tr.run(lambda: summary(d, "titan", claims.titan_readings({}), 0, "ci", 0.05))
    what = ("`claims.replay_summary` of Titan (readings at their defaults, phase budget 0.05 s) on the ci window "
            f"of seed 0 of the ITP trace: {s['jobs']} jobs, mean used machines {s['used_machines_avg']!r}, mean "
            f"fragmentation {s['fragmentation_rate_avg']!r}.")
    return report(tr, "nimp: one ci-scale Titan replay", what, time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", choices=("ddlwmp", "nimp", "both"), default="both")
    ap.add_argument("--jobs", type=int, default=900, help="jobs of the ddlwmp workload (ci Fig. 6: 900)")
    ap.add_argument("--out", type=Path, help="write the page here")
    ap.add_argument("--title", default="The simulation paths, room by room (issue 36 item 3)")
    ap.add_argument("--label", help="the code traced, as the page names it (default: its checkout's commit)")
    args = ap.parse_args(argv)
    import optkit

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _page import run_line

    where = Path(optkit.__file__).resolve().parent
    head = subprocess.run(["git", "-C", str(where), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    sections: list[str] = []
    counts: dict[str, dict[str, int]] = {}
    if args.problem in ("ddlwmp", "both"):
        lines, counts["ddlwmp"] = trace_ddlwmp(args.jobs)
        sections += lines
    if args.problem in ("nimp", "both"):
        got = trace_nimp()
        if got is None:
            sections += ["## nimp", "", "The ITP trace is absent: nothing replayed.", ""]
        else:
            sections += got[0]
            counts["nimp"] = got[1]
    text = "\n".join(sections)
    print(text)
    for p, c in counts.items():
        print(f"{p}: {c['runs']} runs, {c['re_entries']} re-entries, {c['climbs']} climbs back up")
    if args.out:
        doc = __doc__.split("\n\n", 2)[2].split("\n\n**What the trace counts**")[0]
        rules = __doc__.split("**What the trace counts**", 1)[1].split("\n\nThe ddlwmp comparison is")[0]
        args.out.write_text(f"# {args.title}\n\n" + run_line() + f"\n\nCode traced: {args.label or head}.\n\n" + doc.strip()
                            + "\n\n**What the trace counts**" + rules + "\n\n" + text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
