"""The section "A consistent reading" of every paper page of ``optkit reproduce``: the ONE
combination of readings under which the most of a paper's claims reproduce jointly
(:func:`consistent_reading`, :class:`ConsistentReading`) and its text (:func:`consistent_lines`).

Built on :mod:`optkit.reproduce_measurements` and :mod:`optkit.reproduce_verdicts`; the pages
(:mod:`optkit.reproduce_pages`) open with it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from optkit.claims import Experiment, Verdict
from optkit.formulation import Formulation
from optkit.readings import format_params, show_value
from optkit.reproduce_measurements import Measurements, is_own_reading, reading_label
from optkit.reproduce_verdicts import POST_HOC_MARK, claim_verdicts

__all__ = ["ConsistentReading", "consistent_reading", "consistent_lines"]


_TIE_CAP = 100_000
"""Most tied best combinations compared by name; beyond it each independent group of experiments
takes its own first label (:func:`consistent_reading`)."""


@dataclass(frozen=True)
class ConsistentReading:
    """The one reading combination of a paper under which the most claims reproduce jointly
    (:func:`consistent_reading`).

    Attributes
    ----------
    paper
        The paper.
    readings
        The combination: a value for every reading the counted claims' experiments depend
        on (``{}`` when there is none, e.g. no reading matters or no combination was measured). A
        reading an experiment cannot be measured at the default of (its ``sweep`` leaves the
        default out) is that experiment's own: ``NAME@EXPERIMENT``.
    label
        Its readings away from their defaults and the experiments' own readings
        (``format_params``), ``"default"`` if none.
    distance
        How many (shared) readings are away from their defaults.
    counted
        The comparable claims with a verdict in the measurements, in page order.
    reproduced
        Those that reproduce under the combination.
    unreached
        Counted claims that reproduce under no combination measured.
    alone
        Of ``unreached``, those that reproduce under a reading of their own experiment that no
        combination measured for the paper's other experiments extends (``--readings each``).
    lost
        Counted claims some combination reproduces but this one does not.
    not_comparable
        ``(claim id, reason)`` of the incomparable claims (left out of the count).
    no_verdict
        ``(claim id, why)`` of the claims without any verdict here (a scale at which they
        are not comparable, nothing measured; left out of the count).
    combinations
        How many combinations were measured (searched).
    ties
        How many combinations reproduce as many claims at the same distance (the chosen one
        included).
    partial
        Experiments whose readings were not all crossed in the measurements.
    per_claim
        ``{claim id: (its experiment's reading label under the combination, Verdict)}``
        for the counted claims.
    unmeasured
        Experiments (with counted claims) that share readings but have no combination
        measured jointly; non-empty means no combination exists (``readings`` is ``{}``).
    """

    paper: str
    readings: dict[str, Any]
    label: str
    distance: int
    counted: list[str]
    reproduced: list[str]
    unreached: list[str]
    alone: list[str]
    lost: list[str]
    not_comparable: list[tuple[str, str]]
    no_verdict: list[tuple[str, str]]
    combinations: int
    ties: int
    partial: list[str]
    per_claim: dict[str, tuple[str, Verdict]]
    unmeasured: list[str] = field(default_factory=list)


@dataclass
class _Relation:
    """The measured reading settings of one experiment, as canonical value tuples."""

    exp: Experiment
    f: Formulation
    names: tuple[str, ...]
    rows: dict[tuple[str, ...], tuple[str, dict[str, Any], frozenset[str]]]
    """``{canonical values: (label, setting, ids of the counted claims reproducing under it)}``."""


def _relations(m: Measurements, paper: str) -> tuple[list[_Relation], list[str], list[tuple[str, str]],
                                                     list[tuple[str, str]], dict[str, dict[str, Verdict]]]:
    """The experiments of ``paper`` with counted claims, as relations; the counted claim ids; the
    incomparable and verdict-less ones; and every counted claim's verdict per reading label."""
    relations: list[_Relation] = []
    counted: list[str] = []
    not_comparable: list[tuple[str, str]] = []
    no_verdict: list[tuple[str, str]] = []
    per_label: dict[str, dict[str, Verdict]] = {}
    for f, exp, claim_ids in m.selection:
        if exp.paper != paper:
            continue
        verdicts = claim_verdicts(m, f, exp)
        mine: list[str] = []
        for c in exp.claims:
            if c.id not in claim_ids:
                continue
            per, overall = verdicts[c.id]
            if c.incomparable:
                not_comparable.append((c.id, c.incomparable))
            elif not any(v.reproduces is not None for v in per.values()):
                no_verdict.append((c.id, overall))
            else:
                mine.append(c.id)
                per_label[c.id] = per
        if not mine:
            continue
        counted += mine
        base = tuple(exp.readings)
        names = tuple(_local_name(n, exp) if is_own_reading(f, exp, n) else n for n in base)
        rows: dict[tuple[str, ...], tuple[str, dict[str, Any], frozenset[str]]] = {}
        for r in m.rows:
            if r["instance_name"] != exp.id or r["status"] != "feasible":
                continue
            stored = r["params"].get("readings") or {}
            if set(stored) - set(base):
                continue  # measured under readings this experiment no longer declares
            setting = {n: stored.get(b, f.reading(b).default) for n, b in zip(names, base)}
            key = tuple(show_value(setting[n]) for n in names)
            if key not in rows:
                label = reading_label(f, exp, stored)
                rows[key] = (label, setting, frozenset(c for c in mine if per_label[c].get(label) is not None
                                                       and per_label[c][label].reproduces))
        relations.append(_Relation(exp, f, names, rows))
    return relations, counted, not_comparable, no_verdict, per_label


def _local_name(name: str, exp: Experiment) -> str:
    return f"{name}@{exp.id}"


def _base_name(name: str) -> str:
    return name.partition("@")[0]


def _components(relations: Sequence[_Relation]) -> list[list[_Relation]]:
    """Groups of experiments linked by shared readings (independent of each other)."""
    groups: list[list[_Relation]] = []
    for rel in relations:
        linked = [g for g in groups if any(set(rel.names) & set(o.names) for o in g)]
        merged = [rel] + [o for g in linked for o in g]
        groups = [g for g in groups if all(g is not x for x in linked)] + [merged]
    return [sorted(g, key=lambda r: r.exp.id) for g in groups]


class _Join:
    """The combinations measured for one group of experiments: the join of their measured
    settings on shared readings, searched by dynamic programming over the experiments in a fixed
    order (the state: the values of the readings that earlier and later experiments share)."""

    def __init__(self, rels: Sequence[_Relation], defaults: Mapping[str, str], first: _Relation | None = None):
        todo = list(range(len(rels)))
        order: list[_Relation] = []
        start = next(i for i, r in enumerate(rels) if r is first) if first is not None else max(
            todo, key=lambda i: (len(rels[i].names), -i))
        while todo:
            seen = {n for o in order for n in o.names}
            nxt = start if not order else max(todo, key=lambda i: (len(seen & set(rels[i].names)), len(rels[i].names),
                                                                   -i))
            order.append(rels[nxt])
            todo.remove(nxt)
        self.order = order
        self.defaults = defaults
        self.before: list[set[str]] = []
        self.frontier: list[tuple[str, ...]] = []
        self.index: list[dict[tuple[str, ...], list[tuple[str, ...]]]] = []
        seen: set[str] = set()
        for i, rel in enumerate(order):
            later = {n for o in order[i:] for n in o.names}
            self.frontier.append(tuple(sorted(seen & later)))
            shared = tuple(n for n in rel.names if n in seen)
            idx: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
            for key in sorted(rel.rows, key=lambda k: rel.rows[k][0]):
                idx.setdefault(tuple(key[rel.names.index(n)] for n in shared), []).append(key)
            self.before.append(set(seen))
            self.index.append(idx)
            seen |= set(rel.names)
        self.frontier.append(())
        self._best: dict[tuple[int, tuple[str, ...]], tuple[int, int] | None] = {}
        self._count: dict[tuple[int, tuple[str, ...]], int] = {}

    def _step(self, i: int, state: Mapping[str, str], key: tuple[str, ...]) -> tuple[dict[str, str], int, int]:
        rel = self.order[i]
        values = dict(zip(rel.names, key))
        new = {n: v for n, v in values.items() if n not in self.before[i]}
        full = {**state, **values}
        nxt = {n: full[n] for n in self.frontier[i + 1]}
        return nxt, len(rel.rows[key][2]), sum(v != self.defaults[n] for n, v in new.items() if "@" not in n)

    def _candidates(self, i: int, state: Mapping[str, str]) -> list[tuple[str, ...]]:
        rel = self.order[i]
        return self.index[i].get(tuple(state[n] for n in rel.names if n in self.before[i]), [])

    def best(self, i: int = 0, state: Mapping[str, str] | None = None) -> tuple[int, int] | None:
        """``(claims reproduced, -distance)`` of the best completion from experiment ``i`` on."""
        state = state or {}
        if i == len(self.order):
            return (0, 0)
        memo = (i, tuple(state[n] for n in self.frontier[i]))
        if memo not in self._best:
            out = None
            for key in self._candidates(i, state):
                nxt, score, dist = self._step(i, state, key)
                rest = self.best(i + 1, nxt)
                if rest is not None:
                    value = (score + rest[0], rest[1] - dist)
                    out = value if out is None or value > out else out
            self._best[memo] = out
        return self._best[memo]

    def count(self, i: int = 0, state: Mapping[str, str] | None = None) -> int:
        """How many combinations complete ``state`` from experiment ``i`` on."""
        state = state or {}
        if i == len(self.order):
            return 1
        memo = (i, tuple(state[n] for n in self.frontier[i]))
        if memo not in self._count:
            self._count[memo] = sum(self.count(i + 1, self._step(i, state, key)[0])
                                    for key in self._candidates(i, state))
        return self._count[memo]

    def optima(self, cap: int) -> list[dict[str, str]]:
        """The best combinations (all tied ones, at most ``cap``), as ``{reading: canonical value}``."""
        target = self.best()
        found: list[dict[str, str]] = []
        if target is None:
            return found

        def walk(i: int, state: dict[str, str], acc: tuple[int, int], chosen: dict[str, str]) -> None:
            if len(found) >= cap:
                return
            if i == len(self.order):
                found.append(dict(chosen))
                return
            rel = self.order[i]
            for key in self._candidates(i, state):
                nxt, score, dist = self._step(i, state, key)
                rest = self.best(i + 1, nxt)
                if rest is not None and (acc[0] + score + rest[0], acc[1] - dist + rest[1]) == target:
                    walk(i + 1, nxt, (acc[0] + score, acc[1] - dist), {**chosen, **dict(zip(rel.names, key))})

        walk(0, {}, (0, 0), {})
        return found

    def extendable(self) -> set[tuple[str, ...]]:
        """The settings of the first experiment that some combination of the group contains."""
        return {key for key in self.index[0].get((), []) if self.best(1, self._step(0, {}, key)[0]) is not None}


def consistent_reading(m: Measurements, paper: str) -> ConsistentReading:
    """The one combination of readings under which the most of ``paper``'s claims reproduce jointly.

    A combination gives every reading the paper's counted claims depend on a value; it is
    *measured* when, for every experiment, its values of that experiment's readings
    (:attr:`~optkit.claims.Experiment.readings`) are a setting stored in ``m`` (in
    :attr:`Measurements.combination_rows` when it is set: every setting the store holds, so a
    page of ``--readings each`` searches what an earlier ``--readings all`` run measured). A claim counts
    for a combination when its verdict under that setting reproduces (:func:`claim_verdicts`:
    the page's verdict over the seeds stored). Counted are the comparable claims with a verdict
    in ``m``; incomparable ones and those without any verdict (another scale, nothing measured)
    are left out and listed. The best combination reproduces the most claims; ties go to the
    fewest readings away from their defaults, then to the first label (``format_params`` of
    those readings) in text order.

    Decisions: a stored setting that failed (time limit, error) is not measured, so a
    combination that needs it is not searched; a claim whose value is missing under a measured
    setting does not reproduce there. Experiments that share no reading are independent: each
    group of linked experiments is searched alone (dynamic programming over its experiments,
    exact), and the best combination is the union of each group's best; when more than
    ``_TIE_CAP`` tied combinations would have to be compared by label, each group takes its own
    first label. A reading's values are compared as :func:`optkit.readings.show_value` shows
    them (10 and 10.0 are one value). A reading whose values an experiment's ``sweep`` restricts
    to ones without the reading's default (A-SRPT's prediction, measured on traces only, never on
    the synthetic ``workload`` the others use) is that experiment's own (``workload@EXPERIMENT``):
    chosen for it alone, not counted in the distance; otherwise no combination could hold both.
    """
    if m.combination_rows is not None:
        m = dataclasses.replace(m, rows=m.combination_rows, combination_rows=None)
    relations, counted, not_comparable, no_verdict, per_label = _relations(m, paper)
    defaults = {n: "" if "@" in n else show_value(rel.f.reading(n).default) for rel in relations for n in rel.names}
    joins = [_Join(g, defaults) for g in _components(relations)]
    unmeasured = [rel.exp.id for j in joins if j.best() is None for rel in j.order]
    partial = []
    for rel in relations:
        distinct = [len({k[i] for k in rel.rows}) for i in range(len(rel.names))]
        if math.prod(distinct) > len(rel.rows):
            partial.append(rel.exp.id)
    reached: set[str] = set()
    alone: set[str] = set()
    for j in joins:
        for rel in j.order:
            solo = _Join(j.order, defaults, first=rel)
            ok = solo.extendable()
            for key, (_, _, yes) in rel.rows.items():
                (reached if key in ok else alone).update(yes)
    alone -= reached
    chosen: dict[str, str] = {}
    ties = 1
    combinations = math.prod(j.count() for j in joins) if not unmeasured else 0
    if not unmeasured:
        options = [j.optima(_TIE_CAP) for j in joins]
        ties = math.prod(len(o) for o in options)
        values = _original_values(relations)

        def label_of(canon: Mapping[str, str]) -> str:
            return format_params({n: values[n, v] for n, v in canon.items() if "@" in n or v != defaults[n]})

        if ties <= _TIE_CAP:
            import itertools

            best = min(itertools.product(*options), key=lambda combo: label_of({k: v for c in combo
                                                                               for k, v in c.items()}))
            chosen = {k: v for c in best for k, v in c.items()}
        else:
            chosen = {k: v for o in options for k, v in min(o, key=label_of).items()}
    values = _original_values(relations)
    readings = {n: values[n, v] for n, v in sorted(chosen.items())}
    away = {n: v for n, v in readings.items() if "@" not in n and chosen[n] != defaults[n]}
    own = {n: v for n, v in readings.items() if "@" in n}
    per_claim: dict[str, tuple[str, Verdict]] = {}
    reproduced: list[str] = []
    if not unmeasured:
        for rel in relations:
            label, _, yes = rel.rows[tuple(chosen[n] for n in rel.names)]
            for c in rel.exp.claims:
                if c.id in per_label and label in per_label[c.id]:
                    per_claim[c.id] = (label, per_label[c.id][label])
                    if c.id in yes:
                        reproduced.append(c.id)
    unreached = [c for c in counted if c not in reached]
    return ConsistentReading(
        paper=paper, readings=readings, label=format_params({**away, **own}) if away or own else "default",
        distance=len(away),
        counted=counted, reproduced=reproduced, unreached=unreached, alone=[c for c in unreached if c in alone],
        lost=[c for c in counted if c in reached and c not in reproduced], not_comparable=not_comparable,
        no_verdict=no_verdict, combinations=combinations, ties=0 if unmeasured else ties,
        partial=partial, per_claim=per_claim, unmeasured=unmeasured)


def _original_values(relations: Sequence[_Relation]) -> dict[tuple[str, str], Any]:
    """``{(reading, canonical value): a stored value}``: to show a canonical value as measured."""
    out: dict[tuple[str, str], Any] = {}
    for rel in relations:
        for key, (_, setting, _) in rel.rows.items():
            for n, v in zip(rel.names, key):
                out.setdefault((n, v), setting[n])
    return out


def _ids(ids: Iterable[str]) -> str:
    return ", ".join(f"`{i}`" for i in ids)


def consistent_lines(m: Measurements, paper: str) -> list[str]:
    """The page's section "A consistent reading" (:func:`consistent_reading`) for ``paper``."""
    cr = consistent_reading(m, paper)
    lines = ["## A consistent reading", "",
             "Different claims may reproduce under different readings. This section takes the one combination of "
             "readings (a value for every reading the paper's comparable claims depend on) under which the most "
             "claims reproduce jointly: a claim counts when its verdict under the combination's values of its own "
             "experiment's readings reproduces (the verdict rule of this page, over the seeds measured). Ties go to "
             "the combination with the fewest readings away from their defaults, then to the first label in text "
             "order. Searched: every combination measured, i.e. whose values of each experiment's readings were "
             "measured for that experiment.", ""]
    if not cr.counted:
        return lines + ["No comparable claim has a verdict in these measurements: nothing to combine.", "",
                        *_left_out(cr)]
    n, k = len(cr.counted), len(cr.reproduced)
    if cr.unmeasured:
        lines += [f"No combination was measured: experiments {_ids(cr.unmeasured)} share readings, and no setting of "
                  "those readings was measured for all of them (`--readings all` measures every combination).", ""]
        return lines + _left_out(cr)
    by_name = {r.name: r for f, e, _ in m.selection if e.paper == paper for r in f.readings}
    changed = {name for name, value in cr.readings.items()
               if show_value(value) != show_value(by_name[_base_name(name)].default)}
    mark = POST_HOC_MARK if any(by_name[_base_name(name)].post_hoc for name in changed) else ""
    away = "no reading" if cr.distance == 0 else ("1 reading" if cr.distance == 1 else f"{cr.distance} readings")
    others = cr.ties - 1
    lines += [f"**{k} of {n} comparable claims reproduce jointly** under `{cr.label}`{mark} ({away} away from the "
              f"defaults; {cr.combinations} combination{'s' if cr.combinations != 1 else ''} measured"
              + (f"; {others} other combination{'s' if others != 1 else ''} reproduce{'s' if others == 1 else ''} "
                 f"as many claims at the same distance" if others > 0 else "") + ").", ""]
    if cr.readings:
        lines += ["| reading | value | default | post hoc |", "|---|---|---|---|"]
        for name, value in cr.readings.items():
            r = by_name[_base_name(name)]
            shown = show_value(value)
            where = f"`{r.name}` ({name.partition('@')[2]} only: not measurable at the default)" if "@" in name \
                else f"`{name}`"
            lines.append(f"| {where} | {'**' + shown + '**' if name in changed else shown} | {show_value(r.default)} | "
                         f"{'yes' if r.post_hoc else 'no'} |")
        lines.append("")
    lines += ["| claim | its experiment's reading | verdict under this combination | reproduces under some "
              "combination |", "|---|---|---|---|"]
    for cid in cr.counted:
        label, v = cr.per_claim.get(cid, ("-", None))
        some = "no" if cid in cr.unreached else "yes"
        lines.append(f"| `{cid}` | {label} | {v.text if v is not None else 'not measured'} | {some} |")
    lines.append("")
    if cr.unreached:
        lines += [f"No combination reaches: {_ids(cr.unreached)}."
                  + (f" Of these, {_ids(cr.alone)} reproduce under a reading of their own experiment that no "
                     "combination measured extends to the other experiments." if cr.alone else ""), ""]
    else:
        lines += ["Every counted claim reproduces under some combination.", ""]
    if cr.lost:
        lines += [f"Reproduce under another combination but not this one: {_ids(cr.lost)}.", ""]
    if cr.partial:
        lines += [f"The readings of {_ids(cr.partial)} were not all crossed (`--readings each` varies one reading at "
                  "a time): this section covers only the combinations measured; `optkit reproduce "
                  f"{paper} --readings all` crosses them.", ""]
    return lines + _left_out(cr)


def _left_out(cr: ConsistentReading) -> list[str]:
    out = []
    if cr.not_comparable:
        out += [f"Left out of the count, not comparable: "
                + "; ".join(f"`{c}` ({why.split(':')[0]})" for c, why in cr.not_comparable) + ".", ""]
    if cr.no_verdict:
        out += [f"Left out of the count, no verdict in these measurements: "
                + "; ".join(f"`{c}` ({why})" for c, why in cr.no_verdict) + ".", ""]
    return out
