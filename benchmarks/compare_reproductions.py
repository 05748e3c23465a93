"""Compare two `optkit reproduce` runs value by value: what a change of code changed.

Reads the per-paper CSVs (experiment, claim, reading, seed, value) that `optkit reproduce ...
--out DIR` writes in each of two folders and prints, for the (experiment, claim, reading, seed)
rows both hold, how many are identical and every one that is not, with its relative change;
the readings only one run measured; and, with ``--same-as NEW_READING=OLD_READING`` (repeatable),
whether the rows of a reading in the new run equal those of another reading in the old one (a
behaviour kept as a declared reading: ``titan_algorithm=pair-grouping=default``). Claims whose
id matches ``--timing`` (a regular expression; default: Table II's computation-time claims,
``-pct$``) are wall times and listed apart.

``--by-settings`` reads each folder's measurement store (``measurements.sqlite``) instead of its
CSVs and keys the rows by the complete reading setting instead of the page's reading label: when
the defaults changed between the two runs, a label such as ``default`` names different settings,
and only rows measured under the very same setting can show whether a change of code changed a
value. ``--declared-at-defaults`` (with ``--by-settings``) also matches a new row to an old one
when the new setting adds readings the old run did not record (declared since) at their
defaults and agrees on every other: the old run measured what those defaults still are, if
declaring them changed nothing, which the comparison then shows; ``--old-default KEY=VALUE``
(repeatable, VALUE as JSON) says which value the old run used for a reading whose default has
changed since (``consolidate=true``).

Run: ``python benchmarks/compare_reproductions.py OLD_DIR NEW_DIR [--same-as ...] [--by-settings]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

Key = tuple[str, str, str, str]


def load_settings(folder: Path) -> dict[Key, str]:
    """``{(experiment, claim, complete setting as canonical JSON, seed): value}`` of the claims'
    measurements in ``folder/measurements.sqlite`` (plug-in series left out)."""
    import sqlite3

    db = folder / "measurements.sqlite"
    if not db.is_file():
        raise SystemExit(f"compare_reproductions: {db} does not exist (--by-settings reads the store)")
    con = sqlite3.connect(f"file:{db.resolve()}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT instance_name, params, seed, metrics FROM rows "
                           "WHERE objective_name = 'claims' AND status = 'feasible'").fetchall()
    finally:
        con.close()
    out: dict[Key, str] = {}
    for exp, params, seed, metrics in rows:
        setting = json.dumps(json.loads(params).get("readings") or {}, sort_keys=True)
        for claim, value in json.loads(metrics).items():
            if not claim.startswith("_"):
                out[(exp, claim, setting, str(seed))] = repr(value)
    return out


def _defaults() -> dict[str, str]:
    """Every reading's default of every installed problem, as canonical JSON."""
    from optkit import registry

    return {r.name: _canon(r.default) for f in registry.all_formulations().values() for r in f.readings}


def _canon(v: object) -> str:
    """A reading's value as JSON, numbers as floats (10 and 10.0 are one value)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        v = float(v)
    return json.dumps(v)


def _as_old_settings(old: dict[Key, str], new: dict[Key, str], given: dict[str, str]) -> dict[Key, str]:
    """``new`` with each row re-keyed to an old row's setting where the new setting equals it on
    the old setting's readings and holds every other reading at the value the old run used:
    ``given`` (``--old-default``), else today's default (``--declared-at-defaults``)."""
    defaults = {**_defaults(), **given}
    old_settings: dict[str, list[dict[str, object]]] = {}
    for exp, _, setting, _ in old:
        old_settings.setdefault(exp, [])
        d = json.loads(setting)
        if d not in old_settings[exp]:
            old_settings[exp].append(d)
    out: dict[Key, str] = {}
    for (exp, claim, setting, seed), value in new.items():
        d = json.loads(setting)
        key = setting
        for o in old_settings.get(exp, []):
            if all(k in d and _canon(d[k]) == _canon(v) for k, v in o.items()) and all(
                    _canon(v) == defaults.get(k) for k, v in d.items() if k not in o):
                key = json.dumps(o, sort_keys=True)
                break
        out[(exp, claim, key, seed)] = value
    return out


def load(folder: Path, by_settings: bool = False) -> dict[Key, str]:
    """``{(experiment, claim, reading, seed): value}`` of every CSV in ``folder``, or of its store
    by complete setting when ``by_settings`` (:func:`load_settings`)."""
    if by_settings:
        return load_settings(folder)
    files = sorted(folder.glob("*.csv"))
    if not files:
        raise SystemExit(f"compare_reproductions: {folder} holds no reproduce CSV")
    out: dict[Key, str] = {}
    for f in files:
        with f.open(newline="") as fh:
            for r in csv.DictReader(fh):
                out[(r["experiment"], r["claim"], r["reading"], r["seed"])] = r["value"]
    return out


def _rel(a: str, b: str) -> str:
    try:
        x, y = float(a), float(b)
    except ValueError:
        return "not numbers"
    return f"{abs(x - y) / max(abs(x), 1e-300):.2e}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--same-as", action="append", default=[], metavar="NEW_READING=OLD_READING")
    ap.add_argument("--timing", default=r"-pct$", help="claims that are wall times (regular expression)")
    ap.add_argument("--by-settings", action="store_true",
                    help="match rows by the complete reading setting, not by the page's reading label")
    ap.add_argument("--declared-at-defaults", action="store_true",
                    help="with --by-settings: readings only the new run records match the old run at their defaults")
    ap.add_argument("--old-default", action="append", default=[], metavar="KEY=VALUE",
                    help="with --declared-at-defaults: the value the old run used for an unrecorded reading")
    args = ap.parse_args(argv)
    old, new = load(args.old, args.by_settings), load(args.new, args.by_settings)
    if args.declared_at_defaults:
        given = {}
        for spec in args.old_default:
            k, sep, v = spec.partition("=")
            if not sep:
                raise SystemExit(f"compare_reproductions: --old-default wants KEY=VALUE, got {spec!r}")
            given[k] = _canon(json.loads(v))
        new = _as_old_settings(old, new, given)
    timing = re.compile(args.timing)
    common = sorted(set(old) & set(new))
    changed = [k for k in common if old[k] != new[k]]
    values = [k for k in changed if not timing.search(k[1])]
    print(f"rows: old {len(old)}, new {len(new)}, in both {len(common)}, identical "
          f"{len(common) - len(changed)}, changed {len(values)} (+ {len(changed) - len(values)} wall-time rows)")
    by_reading: dict[tuple[str, str], int] = {}
    for k in values:
        by_reading[(k[0], k[2])] = by_reading.get((k[0], k[2]), 0) + 1
    for (exp, reading), n in sorted(by_reading.items()):
        print(f"  changed: {exp} [{reading}]: {n} rows")
    for k in values:
        print(f"    {k[0]} {k[1]} [{k[2]}] seed {k[3]}: {old[k]} -> {new[k]} (relative {_rel(old[k], new[k])})")
    only_new = sorted({(k[0], k[2]) for k in set(new) - set(old)})
    only_old = sorted({(k[0], k[2]) for k in set(old) - set(new)})
    print("readings only in the new run:", ", ".join(f"{e} [{r}]" for e, r in only_new) or "none")
    print("readings only in the old run:", ", ".join(f"{e} [{r}]" for e, r in only_old) or "none")
    for spec in args.same_as:
        if spec.count("=") < 2:
            raise SystemExit(f"compare_reproductions: --same-as wants NEW_READING=OLD_READING, got {spec!r}")
        cut = spec.index("=", spec.index("=") + 1)
        nr, orr = spec[:cut], spec[cut + 1:]
        rows = [k for k in new if k[2] == nr]
        same = sum(1 for k in rows if old.get((k[0], k[1], orr, k[3])) == new[k])
        print(f"new [{nr}] against old [{orr}]: {same} of {len(rows)} rows identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
