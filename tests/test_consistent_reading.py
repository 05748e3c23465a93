"""``optkit reproduce``'s section "A consistent reading" (issue 23 §5) and ``--dry-run``.

A hand-built paper ``toy`` with five readings and four experiments, and a hand-built set of
measurements (``Measurements`` rows as the store holds them): which combination of readings
reproduces the most claims jointly, how ties are broken, which claims no combination reaches, and
how an experiment whose readings no other shares is chosen on its own.

Readings (defaults first): ``a`` 0/1, ``b`` 0/1 (experiments E1 and E2), ``c`` x/y/z and ``d`` 0/1
(E3), ``e`` 0/1 (E4, independent of the rest). Claims are ``approx 1.0`` with tolerance 0.1: a
value 1.0 reproduces, 0.0 does not.

* E1 (a, b): ``u`` reproduces where a = 1.
* E2 (a, b): ``v`` where b = 1; ``w`` at the defaults only.
  Alone, ``u``'s nearest reading is a=1 and ``v``'s b=1; jointly a=1, b=1 reproduces both (2)
  where each of them alone reproduces one.
* E3 (c, d): ``t`` under c=y, d=1 (2 away) and c=z, d=0 (1 away): the nearer wins though
  "c=y, d=1" comes first in text order; ``n`` never.
* E4 (e): ``i`` under e=1; ``x`` is not comparable (a testbed); ``sc`` is comparable at paper
  scale only (no verdict at ci).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import os
import sys
from pathlib import Path
from typing import Any, Callable, Mapping

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from optkit import cli, registry  # noqa: E402
from optkit.claims import Claim, Experiment  # noqa: E402
from optkit.readings import Reading  # noqa: E402
from optkit.reproduce import (  # noqa: E402
    Measurements, consistent_lines, consistent_reading, experiments, plan, write_pages)
from tests.plugins import coin  # noqa: E402


def _reading(name: str, options: tuple[Any, ...], post_hoc: bool = False) -> Reading:
    return Reading(name, f"toy reading {name}", options, options[0], passage="Toy paper, Sec. 1",
                   reason="the toy paper states it", rule="stated", post_hoc=post_hoc)


READINGS = (_reading("a", (0, 1)), _reading("b", (0, 1), post_hoc=True), _reading("c", ("x", "y", "z")),
            _reading("d", (0, 1)), _reading("e", (0, 1)))


def _claim(cid: str, **kw: Any) -> Claim:
    return Claim(cid, f"toy claim {cid}", 1.0, "ratio", "a toy value", precision=0.05, **kw)


def _exp(eid: str, readings: tuple[str, ...], *claims: Claim) -> Experiment:
    return Experiment(eid, "toy", "toy", f"toy experiment {eid}", measure="toy:measure", claims=claims,
                      readings=readings)


E1 = _exp("toy-e1", ("a", "b"), _claim("u"))
E2 = _exp("toy-e2", ("a", "b"), _claim("v"), _claim("w"))
E3 = _exp("toy-e3", ("c", "d"), _claim("t"), _claim("n"))
E4 = _exp("toy-e4", ("e",), _claim("i"), _claim("x", incomparable="testbed: the toy testbed"),
          _claim("sc", scales=("paper",)))
TOY = dataclasses.replace(coin.FORMULATION, name="toy", readings=READINGS,
                          experiments={e.id: e for e in (E1, E2, E3, E4)})

RULES: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    "u": lambda s: s["a"] == 1,
    "v": lambda s: s["b"] == 1,
    "w": lambda s: s["a"] == 0 and s["b"] == 0,
    "t": lambda s: (s["c"], s["d"]) in (("y", 1), ("z", 0)),
    "n": lambda s: False,
    "i": lambda s: s["e"] == 1,
    "x": lambda s: True,
    "sc": lambda s: True,
}


def _settings(exp: Experiment, mode: str) -> list[dict[str, Any]]:
    """Every combination of the experiment's readings ("all"), or the defaults and each reading
    varied alone ("each")."""
    options = {r.name: r.options for r in READINGS if r.name in exp.readings}
    if mode == "all":
        return [dict(zip(options, combo)) for combo in itertools.product(*options.values())]
    default = {k: v[0] for k, v in options.items()}
    return [default] + [{**default, k: v} for k, vals in options.items() for v in vals[1:]]


def _measurements(mode: str = "all", drop: Callable[[Experiment, Mapping[str, Any]], bool] = lambda e, s: False,
                  exps: tuple[Experiment, ...] = (E1, E2, E3, E4)) -> Measurements:
    rows = []
    for exp in exps:
        for setting in _settings(exp, mode):
            if drop(exp, setting):
                continue
            for seed in (0, 1):
                metrics = {c.id: 1.0 if RULES[c.id](setting) else 0.0 for c in exp.claims}
                rows.append({"instance_name": exp.id, "status": "feasible", "seed": seed,
                             "params": {"readings": dict(setting)}, "metrics": metrics, "wall_time_s": 0.0})
    return Measurements([(TOY, e, [c.id for c in e.claims]) for e in exps], rows, "ci", [0, 1], mode)


def test_the_best_joint_combination_is_not_any_claims_own_best() -> None:
    cr = consistent_reading(_measurements("all", exps=(E1, E2)), "toy")
    assert cr.label == "a=1, b=1" and cr.distance == 2
    assert cr.readings == {"a": 1, "b": 1}
    assert (cr.reproduced, cr.counted) == (["u", "v"], ["u", "v", "w"])
    assert cr.lost == ["w"] and cr.unreached == [] and cr.partial == []
    assert cr.combinations == 4 and cr.ties == 1
    # under one reading varied at a time the joint setting is not measured: three combinations
    # reproduce one claim each and the defaults win on distance; the section says it is partial
    each = consistent_reading(_measurements("each", exps=(E1, E2)), "toy")
    assert (each.label, each.reproduced, each.combinations, each.ties) == ("default", ["w"], 3, 1)
    assert each.partial == ["toy-e1", "toy-e2"]
    text = "\n".join(consistent_lines(_measurements("each", exps=(E1, E2)), "toy"))
    assert "were not all crossed" in text and "covers only the combinations measured" in text


def test_ties_go_to_the_fewest_readings_away_from_the_defaults_then_the_first_label() -> None:
    cr = consistent_reading(_measurements("all", exps=(E3,)), "toy")
    # c=y, d=1 comes first in text order but is 2 readings away; c=z is 1 away
    assert (cr.label, cr.distance, cr.reproduced, cr.ties) == ("c=z", 1, ["t"], 1)
    # with c=z unmeasured, the two combinations at distance 2 that reproduce t (c=y, d=1 only) win
    no_z = consistent_reading(_measurements("all", drop=lambda e, s: s["c"] == "z", exps=(E3,)), "toy")
    assert (no_z.label, no_z.distance, no_z.ties) == ("c=y, d=1", 2, 1)


def test_a_tie_at_equal_distance_goes_to_the_first_label() -> None:
    both = dict(RULES)
    try:
        RULES["t"] = lambda s: (s["c"], s["d"]) in (("y", 0), ("z", 0))
        cr = consistent_reading(_measurements("all", exps=(E3,)), "toy")
    finally:
        RULES.clear()
        RULES.update(both)
    assert (cr.label, cr.distance, cr.ties) == ("c=y", 1, 2)


def test_a_claim_no_combination_reaches_and_one_measured_alone() -> None:
    cr = consistent_reading(_measurements("all"), "toy")
    assert cr.unreached == ["n"] and cr.alone == []
    # u reproduces only where a=1; E2 measured only a=0: no combination joins E1's a=1 to E2
    alone = consistent_reading(_measurements("all", drop=lambda e, s: e is E2 and s["a"] == 1, exps=(E1, E2)), "toy")
    assert alone.unreached == ["u"] and alone.alone == ["u"]
    assert (alone.label, alone.reproduced, alone.ties) == ("default", ["w"], 1)  # b=1 (v) ties on count, not distance
    text = "\n".join(consistent_lines(_measurements("all"), "toy"))
    assert "No combination reaches: `n`." in text


def test_an_experiment_with_its_own_readings_is_chosen_independently() -> None:
    cr = consistent_reading(_measurements("all"), "toy")
    # E4's e is shared with no other experiment: e=1 whatever the rest chooses, and the
    # combinations multiply: 4 (a, b) x 6 (c, d) x 2 (e)
    assert cr.label == "a=1, b=1, c=z, e=1" and cr.readings["e"] == 1
    assert cr.combinations == 48 and cr.distance == 4
    assert cr.reproduced == ["u", "v", "t", "i"] and len(cr.counted) == 6
    assert cr.per_claim["i"][0] == "e=1" and cr.per_claim["u"][0] == "a=1, b=1"
    assert cr.not_comparable == [("x", "testbed: the toy testbed")]
    assert [c for c, _ in cr.no_verdict] == ["sc"]


def test_the_page_has_the_section_with_the_count_and_the_left_out_claims(tmp_path: Path) -> None:
    m = _measurements("all")
    write_pages(m, tmp_path)
    page = (tmp_path / "toy.md").read_text()
    section = page[page.index("## A consistent reading"):page.index("## toy-e1")]
    # b is post hoc and set away from its default: the label is marked
    assert "**4 of 6 comparable claims reproduce jointly** under `a=1, b=1, c=z, e=1` †" in section
    assert "48 combinations measured" in section
    assert "| `w` | a=1, b=1 | differs by -1 (tolerance ±0.1) | yes |" in section
    assert "Left out of the count, not comparable: `x` (testbed)." in section
    assert "`sc` (no verdict at scale ci (comparable at paper only))" in section
    assert "Reproduce under another combination but not this one: `w`." in section


def test_a_failed_measurement_is_not_a_measured_combination() -> None:
    m = _measurements("all", exps=(E1, E2))
    for r in m.rows:
        if r["instance_name"] == "toy-e2" and r["params"]["readings"] == {"a": 1, "b": 1}:
            r["status"] = "time_limit"
    cr = consistent_reading(m, "toy")
    assert cr.combinations == 3 and cr.label == "default" and cr.reproduced == ["w"]


# ----------------------------------------------------------------------------- --dry-run
@pytest.fixture()
def _coin_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    targets = [t for t in os.environ.get("OPTKIT_FORMULATIONS", "").split(",") if t]
    monkeypatch.setenv("OPTKIT_FORMULATIONS", ",".join(dict.fromkeys(targets + ["tests.plugins.coin:FORMULATION"])))
    monkeypatch.setenv("OPTKIT_HARNESS_PRELOAD", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    registry.all_formulations()
    monkeypatch.setitem(registry._registered, "coin", coin.FORMULATION)


@pytest.mark.usefixtures("_coin_registered")
def test_dry_run_counts_planned_stored_and_missing_without_measuring(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "m.sqlite"
    argv = ["reproduce", "coin-half", "--readings", "all", "--seeds", "2", "--db", str(db), "--dry-run"]
    assert cli.main(argv) == 0
    assert "| coin-half | 8 | 0 | 0 | 8 |" in capsys.readouterr().out
    assert not db.exists()
    assert cli.main(["reproduce", "coin-half", "--readings", "default", "--seeds", "2", "--db", str(db), "--out",
                     str(tmp_path / "pages"), "--jobs", "1", "--no-progress"]) == 0
    capsys.readouterr()
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "| coin-half | 8 | 2 | 0 | 6 |" in out
    assert "8 measurements at scale ci (readings all); 2 stored in" in out and "6 would be measured" in out
    assert [(x.planned, x.stored, x.missing) for x in plan(["coin-half"], seeds=[0, 1, 2], readings="each", db=db)] \
        == [(9, 2, 7)]


def _benchmark(name: str) -> Any:
    """The script benchmarks/NAME.py as a module (benchmarks/ on the path for its helper _page.py)."""
    if str(REPO / "benchmarks") not in sys.path:
        sys.path.insert(0, str(REPO / "benchmarks"))
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_paper_run_timing_plans_what_the_dry_run_plans() -> None:
    """``benchmarks/reproduce_time.py paper`` estimates the run ``optkit reproduce --dry-run``
    plans: the same measurements per experiment at paper scale, curve points and plug-in series
    included (it once left out the paper scale's curve points: 85 of a-srpt-sec5-prediction's 140)."""
    rt = _benchmark("reproduce_time")
    ours = {eid: len(rt.planned_tasks(f, e, "each", 5)) for eid, (f, e) in experiments().items()}
    theirs = {x.experiment: x.planned for x in plan(["all"], seeds=list(range(5)), readings="each", scale="paper")}
    assert ours == theirs and theirs["a-srpt-sec5-prediction"] == 140


@pytest.mark.usefixtures("_coin_registered")
def test_the_paper_run_timing_counts_only_the_planned_measurements_of_the_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A store an ``--readings all`` run filled holds more than the ``default`` run: the timing of
    the ``default`` run counts its own 2 measurements, in the table and in the measured wall clock."""
    db = tmp_path / "m.sqlite"
    assert cli.main(["reproduce", "coin-half", "--scale", "paper", "--readings", "all", "--seeds", "2", "--db",
                     str(db), "--out", str(tmp_path / "pages"), "--jobs", "1", "--no-progress"]) == 0
    capsys.readouterr()
    assert _benchmark("reproduce_time").main(["paper", "--db", str(db), "--seeds", "2", "--basis", "mean",
                                   "--readings", "default", "--only", "coin-half"]) == 0
    out = capsys.readouterr().out
    assert "| coin-half | 2 | 2 | 0 |" in out and "stored 2 of the 2 planned measurements" in out
    assert f"measured in {db}: 2 measurements from" in out


def test_a_reading_an_experiment_cannot_measure_at_its_default_is_its_own() -> None:
    # E5 sweeps e over 1 only (say, a measurement on traces only): its e is its own, not E4's, so
    # E4 still chooses e=1 (claim i) or e=0 on its own, and the combinations are E4's two
    e5 = Experiment("toy-e5", "toy", "toy", "toy experiment E5", measure="toy:measure", claims=(_claim("p"),),
                    readings=("e",), sweep={"e": (1,)})
    RULES["p"] = lambda s: True
    try:
        m = _measurements("all", drop=lambda e, s: e is e5 and s["e"] != 1, exps=(E4, e5))
        cr = consistent_reading(m, "toy")
    finally:
        del RULES["p"]
    assert cr.unmeasured == [] and cr.combinations == 2
    assert cr.readings == {"e": 1, "e@toy-e5": 1} and cr.label == "e=1, e@toy-e5=1" and cr.distance == 1
    assert cr.reproduced == ["i", "p"]


def test_each_tables_search_the_combinations_the_store_holds() -> None:
    """A page of ``--readings each`` whose store also holds an ``--readings all`` run: its tables
    show the each-settings, its consistent reading searches every stored combination."""
    each, every = _measurements("each"), _measurements("all")
    alone = consistent_reading(each, "toy")
    both = consistent_reading(dataclasses.replace(each, combination_rows=every.rows), "toy")
    assert both == consistent_reading(every, "toy") and both.combinations == 48
    assert alone.combinations < 48 and len(alone.reproduced) < len(both.reproduced)


@pytest.mark.usefixtures("_coin_registered")
def test_reproduce_each_on_a_store_of_all_reads_every_stored_combination(tmp_path: Path) -> None:
    from optkit.reproduce import reproduce

    db = tmp_path / "m.sqlite"
    kw: dict[str, Any] = {"seeds": [0, 1], "db": db, "jobs": 1, "progress": False}
    each_first = reproduce(["coin-half"], readings="each", **kw)
    assert len(each_first.combination_rows or []) == len(each_first.rows)  # nothing else stored yet
    every = reproduce(["coin-half"], readings="all", **kw)
    each = reproduce(["coin-half"], readings="each", **kw)
    assert len(each.rows) < len(every.rows) == len(each.combination_rows or [])
    assert consistent_reading(each, "coin-paper").combinations == consistent_reading(every, "coin-paper").combinations > 1
    other_seed = reproduce(["coin-half"], readings="each", **dict(kw, seeds=[2]))
    assert {r["seed"] for r in other_seed.combination_rows or []} == {2}


@pytest.mark.usefixtures("_coin_registered")
def test_the_cli_keeps_a_memo_beside_the_store_unless_no_memo(tmp_path: Path) -> None:
    base = ["reproduce", "coin-half", "--readings", "default", "--seeds", "1", "--jobs", "1", "--no-progress"]
    assert cli.main([*base, "--db", str(tmp_path / "a.sqlite"), "--out", str(tmp_path / "a")]) == 0
    assert (tmp_path / "a.sqlite.memo").is_dir()
    assert cli.main([*base, "--db", str(tmp_path / "b.sqlite"), "--out", str(tmp_path / "b"), "--no-memo"]) == 0
    assert (tmp_path / "b.sqlite").is_file() and not (tmp_path / "b.sqlite.memo").exists()


def test_the_index_times_stored_measurements_and_says_when_rows_carry_no_times(tmp_path: Path) -> None:
    """A run's index sums its measurements' wall times; an index rewritten from the papers' CSVs
    (benchmarks/results_index.py, rows without times) says so instead of claiming 0 s."""
    timed = _measurements("each", exps=(E1,))
    for r in timed.rows:
        r["wall_time_s"] = 1.5
    write_pages(timed, tmp_path / "run")
    head = (tmp_path / "run" / "index.md").read_text().splitlines()[2]
    assert f"({len(timed.rows)} measurements, {1.5 * len(timed.rows):.0f} s of measurement time in all" in head
    untimed = _measurements("each", exps=(E1,))
    for r in untimed.rows:
        r["wall_time_s"] = None
    write_pages(untimed, tmp_path / "csv")
    head = (tmp_path / "csv" / "index.md").read_text().splitlines()[2]
    assert "read from the papers' CSVs, which keep no measurement times" in head
    assert "measurement time in all" not in head


@pytest.mark.usefixtures("_coin_registered")
def test_stored_only_writes_partial_pages_from_the_store_and_measures_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--stored-only``: the pages of a run under way hold what the store has of the planned
    measurements and say how many; nothing is measured, a missing store or --rerun is refused."""
    db, pages = tmp_path / "m.sqlite", tmp_path / "pages"
    base = ["reproduce", "coin-half", "--seeds", "2", "--db", str(db), "--out", str(pages), "--jobs", "1",
            "--no-progress"]
    assert cli.main([*base, "--stored-only"]) == 2
    assert "--db" in capsys.readouterr().err and not db.exists() and not pages.exists()
    assert cli.main([*base, "--readings", "default"]) == 0  # 2 of the 'all' run's 8 settings x seeds
    capsys.readouterr()
    assert cli.main([*base, "--readings", "all", "--stored-only"]) == 0
    assert "the pages hold 2 of the 8 planned measurements" in capsys.readouterr().err
    partial = "**Partial:** these pages hold 2 of the 8 measurements planned"
    assert partial in (pages / "index.md").read_text() and partial in (pages / "coin-paper.md").read_text()
    (pages / "index.md").unlink()  # the index rewritten from the CSVs (which do not keep it) repeats it
    _benchmark("results_index").main(str(pages))
    assert f"coin-paper: {partial}" in (pages / "index.md").read_text()
    assert [x.stored for x in plan(["coin-half"], seeds=[0, 1], readings="all", db=db)] == [2]  # none measured
    assert cli.main([*base, "--readings", "all", "--stored-only", "--rerun"]) == 2
    assert "--stored-only" in capsys.readouterr().err
    assert cli.main([*base, "--readings", "default", "--stored-only"]) == 0  # complete: no partial note
    assert "Partial" not in (pages / "index.md").read_text()
