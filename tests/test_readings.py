"""Readings as declared parameters, sweeps in compare, and ``optkit reproduce``.

The engine is tested on the test-only formulation ``coin`` (tests/plugins/coin.py), whose
readings and claim are worked by hand in its docstring; the last tests check the four real
formulations' declarations (every reading documented and reachable through ``--param``).
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # so that `tests.plugins.coin` imports here and in the forkserver
    sys.path.insert(0, str(REPO))

from optkit import cli, registry  # noqa: E402
from optkit.claims import Claim, overall_verdict, verdict  # noqa: E402
from optkit.errors import InputError  # noqa: E402
from optkit.harness import LocalExecutor, ResultStore, compare  # noqa: E402
from optkit.readings import (  # noqa: E402
    Reading, accepted_params, check_params, expand_sweep, format_params, parse_param_values, reading_table,
    resolve_params,
)
from optkit.solve import solve  # noqa: E402
from tests.plugins import coin  # noqa: E402

COIN_TARGET = "tests.plugins.coin:FORMULATION"


@pytest.fixture(autouse=True)
def _coin_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    targets = [t for t in os.environ.get("OPTKIT_FORMULATIONS", "").split(",") if t]
    monkeypatch.setenv("OPTKIT_FORMULATIONS", ",".join(dict.fromkeys(targets + [COIN_TARGET])))
    monkeypatch.setenv("OPTKIT_HARNESS_PRELOAD", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    registry.all_formulations()
    monkeypatch.setitem(registry._registered, "coin", coin.FORMULATION)


# ----------------------------------------------------------------------------- declarations
def test_reading_rejects_an_invalid_default_and_missing_documentation() -> None:
    with pytest.raises(InputError, match="must be one of a, b"):
        Reading("x", "s", ("a", "b"), "c", passage="p", reason="r", rule="literal", post_hoc=False)
    with pytest.raises(ValueError, match="needs a summary, a passage and a reason"):
        Reading("x", "s", ("a",), "a", passage="", reason="r", rule="literal", post_hoc=False)
    with pytest.raises(ValueError, match="identifier"):
        Reading("tie-break", "s", ("a",), "a", passage="p", reason="r", rule="literal", post_hoc=False)


def test_open_reading_accepts_numbers_in_range_and_canonicalises_strings() -> None:
    r = coin.FORMULATION.reading("bias")
    assert r.validate("3") == 3 and isinstance(r.validate("3"), int)
    assert r.validate(2.5) == 2.5
    with pytest.raises(InputError, match=r"must lie in \[0, 10\], got 11"):
        r.validate(11)
    with pytest.raises(InputError, match="must be a number"):
        r.validate("lots")


def test_check_params_names_the_closest_key_and_lists_the_options() -> None:
    f = coin.FORMULATION
    with pytest.raises(InputError, match=r"--param roundng is not a parameter of coin/half \(did you mean 'rounding'\?\); valid: bias, rounding"):
        check_params(f, "half", {"roundng": "up"})
    with pytest.raises(InputError, match="--param rounding must be one of down, up; got sideways"):
        check_params(f, "half", {"rounding": "sideways"})
    # shy does not take rounding: its valid keys are its own
    with pytest.raises(InputError, match="valid: bias"):
        check_params(f, "shy", {"rounding": "up"})
    assert set(accepted_params(f, "exact")) == set()


def test_a_function_taking_params_accepts_only_the_names_it_declares() -> None:
    """``loose`` takes ``**params`` and declares ``take``: take=2 reaches it (cost 3 - 2), an
    undeclared key is rejected although the function would swallow it."""
    assert solve("coin", {"problem": "coin", "n": 3}, "loose", params={"take": 2}).objective == 1.0
    with pytest.raises(InputError, match="--param give is not a parameter of coin/loose; valid: take"):
        solve("coin", {"problem": "coin", "n": 3}, "loose", params={"give": 2})


def test_resolve_params_fills_every_reading_default_so_the_run_key_names_it() -> None:
    f = coin.FORMULATION
    assert resolve_params(f, "half", {}) == {"bias": 0, "rounding": "down"}
    assert resolve_params(f, "half", {"rounding": "up"}) == {"bias": 0, "rounding": "up"}
    assert resolve_params(f, "exact", None) == {}


def test_parse_param_values_splits_sweeps_but_not_json_lists() -> None:
    got = parse_param_values(["layout=[4,4,4,4],[8,4,2,1,1]", "tie_break=best-fit,worst-fit", "tau=3"])
    assert got == {"layout": [[4, 4, 4, 4], [8, 4, 2, 1, 1]], "tie_break": ["best-fit", "worst-fit"], "tau": [3]}
    assert expand_sweep({"a": [1, 2], "b": ["x", "y"]}) == [
        {"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "x"}, {"a": 2, "b": "y"}]
    with pytest.raises(InputError, match="must look like key=value"):
        parse_param_values(["tau"])


def test_solve_applies_the_reading_and_reports_it() -> None:
    """n = 5: floor(5/2) = 2 coins (cost 3); ceil = 3 (cost 2); bias 1 adds one."""
    down = solve("coin", {"problem": "coin", "n": 5}, "half")
    up = solve("coin", {"problem": "coin", "n": 5}, "half", params={"rounding": "up", "bias": 1})
    assert (down.objective, down.params) == (3.0, {"bias": 0, "rounding": "down"})
    assert (up.objective, up.params) == (1.0, {"bias": 1, "rounding": "up"})


def test_no_solution_is_its_own_status_with_a_message(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"problem": "coin", "n": 3}))
    assert cli.main(["solve", "coin", str(path), "--algorithm", "nothing", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "no_solution" and out["message"] == "nothing found (by design)"


# ----------------------------------------------------------------------------- CLI
def test_cli_readings_lists_name_options_default_passage_reason(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["readings", "coin"]) == 0
    out = capsys.readouterr().out
    for text in ("rounding: how half of an odd n rounds", "options:  down, up", "default:  down",
                 "Coin paper, Sec. 1, line 2", "the paper's example has an even n", "any number in [0, 10]"):
        assert text in out
    assert cli.main(["readings", "coin", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == ["rounding", "bias"]


@pytest.mark.parametrize("argv, message", [
    (["solve", "coin", "{f}", "-a", "half", "--param", "rounding=up,down"], "--param rounding takes one value here"),
    (["solve", "coin", "{f}", "-a", "half", "--param", "bogus=1"], "--param bogus is not a parameter of coin/half"),
    (["solve", "coin", "{f}", "-a", "half", "--param", "rounding=sideways"], "must be one of down, up"),
    (["compare", "{f}", "--algorithms", "half,exact", "--param", "tie=1", "--db", "{db}"],
     "--param tie is not taken by any of half, exact"),
    (["compare", "{f}", "--algorithms", "half", "--param", "bias=1,99", "--db", "{db}"], "must lie in [0, 10]"),
    (["simulate", "coin", "{f}", "--policy", "half", "--param", "rounding=up,diagonal"], "must be one of down, up"),
    (["readings", "no-such-problem"], "no-such-problem"),
])
def test_cli_bad_params_exit_2_with_one_line(argv: list[str], message: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"problem": "coin", "n": 3}))
    argv = [a.format(f=path, db=tmp_path / "r.sqlite") for a in argv]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.sqlite").exists() or ResultStore(tmp_path / "r.sqlite").count() == 0


def test_simulate_sweep_writes_one_schedule_per_setting(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.json").write_text(json.dumps({"problem": "coin", "n": 5}))
    assert cli.main(["simulate", "coin", "c.json", "--policy", "half", "--param", "rounding=down,up", "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(x["params"]["rounding"], x["objective"]) for x in lines] == [("down", 3.0), ("up", 2.0)]
    assert json.loads(Path(lines[1]["schedule_file"]).read_text()) == {"x": 3}
    assert lines[0]["schedule_file"] != lines[1]["schedule_file"]


# ----------------------------------------------------------------------------- compare sweeps
def test_compare_sweep_stores_each_reading_side_by_side_and_rerun_skips(tmp_path: Path) -> None:
    """Sweep rounding over {down, up} and bias over {0, 1}: half runs 4 times, shy (bias only)
    twice, exact (no readings) once. n = 3: half costs 2/1 (down/up) minus the bias."""
    db = tmp_path / "r.sqlite"
    inst = [("c3", {"problem": "coin", "n": 3})]
    kw = dict(algorithms="half,shy,exact", time_limit=10, db=db, executor=LocalExecutor(1), progress=False,
              sweep={"rounding": ["down", "up"], "bias": [0, 1]})
    rep = compare("coin", inst, **kw)
    got = {(s["algorithm"], s["reading"]): s["runs"] for s in rep.summary}
    assert got == {("half", "bias=0, rounding=down"): 1, ("half", "bias=0, rounding=up"): 1,
                   ("half", "bias=1, rounding=down"): 1, ("half", "bias=1, rounding=up"): 1,
                   ("shy", "bias=0"): 1, ("shy", "bias=1"): 1, ("exact", "-"): 1}
    costs = {(r["algorithm"], json.dumps(r["params"], sort_keys=True)): r["objective"] for r in rep.rows}
    assert costs[("half", '{"bias": 1, "rounding": "up"}')] == 0.0
    assert costs[("half", '{"bias": 0, "rounding": "down"}')] == 2.0
    with ResultStore(db) as store:
        n = store.count()
    compare("coin", inst, **kw)  # nothing new to run
    with ResultStore(db) as store:
        assert store.count() == n == 7


def test_report_counts_no_solution_in_its_own_column(tmp_path: Path) -> None:
    rep = compare("coin", [("c3", {"problem": "coin", "n": 3})], algorithms="nothing", time_limit=10,
                  db=tmp_path / "r.sqlite", executor=LocalExecutor(1), progress=False)
    (row,) = rep.summary
    assert (row["no_solution"], row["error"], row["infeasible"]) == (1, 0, 0)


# ----------------------------------------------------------------------------- verdicts
def test_verdicts_compare_like_with_like() -> None:
    c = Claim("c", "w", 10.0, "%", "mean", precision=0.05)  # tolerance: 10% of 10 = 1
    assert c.tolerance == 1.0
    assert verdict(c, [10.5, 10.9]).reproduces is True
    v = verdict(c, [12.0, 13.0])
    assert (v.reproduces, v.mean, v.low, v.high, v.text) == (False, 12.5, 12.0, 13.0, "differs by +2.5 % (tolerance ±1)")
    bound = Claim("b", "w", 1.0, "ratio", "max", comparison="at_most")
    assert verdict(bound, [0.5, 1.0]).reproduces is True and verdict(bound, [0.5, 1.01]).reproduces is False
    assert verdict(c, [None]).text == "not measured"
    yes, no = verdict(c, [10.0]), verdict(c, [20.0])
    assert overall_verdict({"a=1": yes, "a=2": no}) == "reproduces under a=1 — not under a=2"
    assert overall_verdict({"a=1": no, "a=2": no}) == \
        "does not reproduce under any of the 2 readings measured (a=1; a=2)"
    assert overall_verdict({"a=1": yes, "a=2": yes}) == "reproduces under every reading measured (a=1; a=2)"
    assert overall_verdict({"a=1": no, "a=2": yes}, {"a=1": " †"}) == "reproduces under a=2 — not under a=1 †"


def test_reproduce_measures_every_reading_and_writes_verdict_pages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """coin-half, each reading varied alone around the default (bias=0, rounding=down): x/n = 1/3
    (default), 2/3 (rounding=up), 2/3 (bias=1, one more coin): the paper's 2/3 reproduces under the
    two variations, not the default. With --readings all, (bias=1, rounding=up) adds x/n = 1."""
    out = tmp_path / "pages"
    argv = ["reproduce", "coin-half-ratio", "--out", str(out), "--seeds", "2", "--jobs", "1", "--no-progress"]
    assert cli.main(argv) == 0
    stdout = capsys.readouterr().out
    assert "coin-half-ratio: reproduces under bias=1; rounding=up — not under default" in stdout
    page = (out / "coin-paper.md").read_text()
    assert "| default * | 0.3333 [0.3333, 0.3333] | 2 | differs by -0.3333 (tolerance ±0.06667) |" in page
    assert "measured at scale ci" in page
    assert (out / "coin-paper_coin-half.png").stat().st_size > 0
    rows = (out / "coin-paper.csv").read_text().splitlines()
    assert len(rows) == 1 + 3 * 2  # header + 3 readings x 2 seeds (the bound claim was not asked for)
    assert "coin-half-ratio" in (out / "index.md").read_text()
    # a re-run reuses every stored measurement
    assert cli.main(argv) == 0
    assert "6 already in" in capsys.readouterr().err
    assert cli.main(argv + ["--readings", "all"]) == 0
    captured = capsys.readouterr()
    assert "6 already in" in captured.err and "2 to run" in captured.err
    assert ("coin-half-ratio: reproduces under bias=1; rounding=up — not under default; bias=1, rounding=up"
            in captured.out)


def test_page_lists_swept_values_in_numeric_order() -> None:
    """The readings table of a page: numbers in numeric order with a whole float shown as an
    integer (tau 10.0 and 10 are one value), anything else by its text, a missing key as null."""
    from optkit.reproduce_pages import swept_values

    assert swept_values("tau", [{"tau": 10.0}, {"tau": 0}, {"tau": 1}, {"tau": 3}, {"tau": 5}, {"tau": 10}]) == \
        ["0", "1", "3", "5", "10"]
    assert swept_values("tau", [{"tau": 0.5}, {"tau": 2}]) == ["0.5", "2"]
    assert swept_values("x", [{"x": "worst-fit"}, {"x": "best-fit"}, {}]) == ["best-fit", "null", "worst-fit"]


def test_a_whole_float_reads_as_an_integer_everywhere_a_reading_is_shown() -> None:
    """ddlwmp declares tau's default as 1000.0 and its options as integers: `optkit readings`, labels
    and pages show both as integers (the table's default with the value it moved from, issue 34); fractions, huge floats, booleans and lists keep their own text."""
    from optkit.readings import show_value

    assert [show_value(v) for v in (10.0, 10, 0.5, 1e20, True, None, [4, 4], "best-fit")] == \
        ["10", "10", "0.5", "1e+20", "true", "null", "[4,4]", "best-fit"]
    assert format_params({"tau": 10.0, "load": 0.8}) == "load=0.8, tau=10"
    tau = next(r for r in reading_table(registry.get("ddlwmp")) if r["name"] == "tau")
    assert tau["default"] == "1000 (was 0)" and tau["options"].startswith("any number in [0, 1000]; swept: 0 (")


def test_plot_tolerates_float_rounding_in_the_spread(tmp_path: Path) -> None:
    """fmean of three equal floats can land a rounding error above or below them; the error bars
    must not go negative (matplotlib rejects them)."""
    from optkit.reproduce_pages import plot_experiment

    exp = coin.EXPERIMENTS["coin-half"]
    vals = {"default": {"coin-half-ratio": [(0, 0.1), (1, 0.1), (2, 0.1)]}}
    assert plot_experiment(exp, exp.claims[:1], vals, "default", tmp_path / "p.png")


def test_reproduce_readings_subset_and_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["reproduce", "list"]) == 0
    assert "coin-half-ratio" in capsys.readouterr().out
    from optkit.reproduce import select

    assert [e.id for _, e, _ in select(["coin-half"])] == ["coin-half"]
    # a dash-separated prefix names every experiment under it
    assert sorted(e.id for _, e, _ in select(["a-srpt-table2"])) == ["a-srpt-table2-gpt175b", "a-srpt-table2-vgg19"]
    with pytest.raises(InputError):
        select(["a-srpt-table"])  # not a whole dash-separated part
    assert cli.main(["reproduce", "coin-half", "--readings", "rounding=up", "--out", str(tmp_path), "--seeds", "1",
                     "--jobs", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "coin-half-ratio: reproduces (rounding=up; the only reading measured)" in out
    assert "coin-half-bound: reproduces (rounding=up; the only reading measured)" in out
    assert cli.main(["reproduce", "coin-half", "--readings", "tau=1", "--out", str(tmp_path)]) == 2
    assert cli.main(["reproduce", "coin-hlaf", "--out", str(tmp_path)]) == 2
    assert "did you mean 'coin-half'" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the real formulations
REAL = ("gpu-mapping", "ddlwmp", "rar-ddls", "nimp")


@pytest.mark.parametrize("problem", REAL)
def test_every_reading_is_declared_documented_and_reachable(problem: str) -> None:
    """Each reading names real algorithms (or a scope), and each algorithm taking it accepts it
    as an explicit keyword of its run function with the reading's default as the default."""
    f = registry.get(problem)
    names = [r.name for r in f.readings]
    assert len(names) == len(set(names)), f"duplicate reading names in {problem}"
    for r in f.readings:
        assert r.passage and r.reason and r.summary
        users = [a for a in f.algorithms if r.takes(a)]
        assert users or r.scope, f"{problem}: reading {r.name} is taken by no algorithm and names no scope"
        for a in r.algorithms:
            assert a == "*" or a in f.algorithms, f"{problem}: reading {r.name} names unknown algorithm {a}"
        for a in users:
            assert accepted_params(f, a)[r.name] is r
            run = getattr(f.algorithms[a].run, "target", None)
            fn = run() if run else f.algorithms[a].run
            param = inspect.signature(fn).parameters.get(r.name)
            assert param is not None, f"{problem}/{a} does not take reading {r.name} as a keyword"
            assert param.default == r.default, f"{problem}/{a}: {r.name} defaults to {param.default!r}, declared {r.default!r}"


@pytest.mark.parametrize("problem", REAL)
def test_every_experiment_names_declared_readings(problem: str) -> None:
    from optkit.reproduce import experiments

    known = experiments()  # raises on an experiment naming an undeclared reading
    for exp_id, (f, e) in known.items():
        assert e.claims and all(c.statistic for c in e.claims)


def test_a_claim_gets_no_verdict_at_a_scale_it_is_not_comparable_at() -> None:
    """An absolute count over a whole trace says nothing on a ci-scale window: reported, no verdict."""
    c = Claim("c", "w", 174.0, "machines", "mean", scales=("paper",))
    v = verdict(c, [80.0, 90.0], "ci")
    assert (v.reproduces, v.mean, v.text) == (None, 85.0, "no verdict at scale ci (comparable at paper only)")
    assert verdict(c, [180.0], "paper").reproduces is True
    assert overall_verdict({"default": v}) == "no verdict at scale ci (comparable at paper only)"
    with pytest.raises(ValueError, match="scales"):
        Claim("c", "w", 1.0, "ratio", "mean", scales=("huge",))


def test_paper_axes_draw_the_papers_figure_from_the_details(tmp_path: Path) -> None:
    """Fig. 6's axes (total completion time per policy against the number of jobs) and SJF-BCO's
    (makespan against kappa; per policy against servers; per policy) come from the measurements'
    details, averaged over seeds; details of another shape draw nothing."""
    from optkit.reproduce import paper_axes_series, plot_paper_axes

    def fig6(seed_shift: float) -> dict:
        return {"cases": [{"jobs": n, "runs": {"a-srpt": {"total_completion": n + seed_shift},
                                                "spjf": {"total_completion": 3 * n}}} for n in (900, 1800)]}

    title, x, y, series = paper_axes_series([fig6(0.0), fig6(10.0)])
    assert (title, x) == ("total job completion time vs number of jobs", "number of jobs")
    assert series == {"a-srpt": [(900.0, 905.0), (1800.0, 1805.0)], "spjf": [(900.0, 2700.0), (1800.0, 5400.0)]}
    share = paper_axes_series([{"cases": [{"single_gpu_share": 0.8, "runs": {"a": {"total_completion": 1.0}}}]}])
    assert share is not None and share[3] == {"a": [(80.0, 1.0)]}
    kappa = paper_axes_series([{"kappa": [1, 2], "makespan": [10.0, 8.0]}, {"kappa": [1, 2], "makespan": [12.0, 6.0]}])
    assert kappa is not None and kappa[3] == {"sjf-bco": [(1.0, 11.0), (2.0, 7.0)]}
    servers = paper_axes_series([{"servers": [10, 20], "makespan": {"ff": [9.0, 5.0], "ls": [8.0, 4.0]}}])
    assert servers is not None and servers[0] == "makespan vs number of servers" and servers[3]["ls"] == [(10.0, 8.0),
                                                                                                   (20.0, 4.0)]
    assert paper_axes_series([{"lemma2_gap": 0, "servers": [1, 2], "makespan": 3.0}]) is None
    assert paper_axes_series([]) is None
    exp = coin.EXPERIMENTS["coin-half"]
    assert plot_paper_axes(exp, [fig6(0.0)], tmp_path / "f.png") and (tmp_path / "f.png").stat().st_size > 0
    assert plot_paper_axes(exp, [{"n": 3}], tmp_path / "g.png") == "" and not (tmp_path / "g.png").exists()


def test_every_spelling_of_a_float_reading_gives_the_default_measurement_its_run_key() -> None:
    """``--readings unstated_batch_factor=1`` is the default 1.0: the same canonical float and the
    same measurement keys as ``--readings default``, so a stored measurement is found again rather
    than measured twice under an int-spelt key (a float default canonicalises ints and strings)."""
    from optkit.reproduce import measurement_tasks, reading_settings, select

    f = registry.get("ddlwmp")
    r = f.reading("unstated_batch_factor")
    for spelling in (1, "1", 1.0, "1.0"):
        assert r.validate(spelling) == 1.0 and isinstance(r.validate(spelling), float)
    assert isinstance(f.reading("tau").validate(10), float)
    assert isinstance(f.reading("fig8_jobs").validate(75000.0), int)
    [(_, exp, _)] = select(["a-srpt-sec5-fig6"])

    def keys(spec: object) -> list[str]:
        return [t.key for t in measurement_tasks(f, exp, reading_settings(f, exp, spec, "paper"), [0, 1], "paper")]

    assert keys({"unstated_batch_factor": [1]}) == keys({"unstated_batch_factor": ["1.0"]}) == keys("default")
    assert keys({"tau": [10]}) == keys({"tau": [10.0]}) != keys("default")
