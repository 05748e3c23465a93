"""Unstated operating points as curves (issue 34 §4): an experiment declares a swept reading
(:attr:`optkit.claims.Experiment.curves`), ``optkit reproduce`` measures it over its range, and the
page draws every claim against it with the paper's value as a line and names the band where it
reproduces.

A hand-built paper ``toyc``: reading ``x`` (rule ``swept``, default 0.5) and ``w`` (the only value
the experiment can be measured at is ``w=t``: the experiment's own, like A-SRPT's trace workloads),
reading ``k`` (stated, 0/1). Claim ``c`` (``approx 1.0``, tolerance 0.1) reproduces where the value
is 1.0; the measured value is a function of x below.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from optkit.claims import Claim, Experiment
from optkit.readings import Reading
from optkit.reproduce import Measurements, claim_verdicts, curves_of, reading_settings, reproducing_band, write_pages
from tests.plugins import coin

X = Reading("x", "toy load", (0.2, 0.4, 0.5, 0.6, 0.8), 0.5, passage="Toy paper, Sec. 1", reason="unstated",
            open=True, minimum=0.0, maximum=2.0, rule="swept", post_hoc=False)
K = Reading("k", "toy switch", (0, 1), 0, passage="Toy paper, Sec. 1", reason="stated", rule="stated", post_hoc=False)
W = Reading("w", "toy workload", ("s", "t"), "s", passage="Toy paper, Sec. 1", reason="literal", rule="literal",
            post_hoc=False)
C = Claim("c", "toy claim c", 1.0, "ratio", "a toy value", precision=0.05)
D = Claim("d", "toy claim d", 1.0, "ratio", "a toy value", precision=0.05, scales=("paper",))
E = Experiment("toyc-e", "toyc", "toyc", "toy experiment", measure="toy:measure", claims=(C, D), readings=("x", "k"),
               curves={"x": {"paper": (0.2, 0.4, 0.5, 0.6, 0.8), "ci": (0.2, 0.5, 0.8)}})
EW = Experiment("toyc-w", "toyc", "toyc", "toy experiment on w", measure="toy:measure", claims=(C,),
                readings=("x", "w"), sweep={"w": ("t",)}, curves={"x": {"ci": (0.2, 0.5, 0.8)}})
TOYC = dataclasses.replace(coin.FORMULATION, name="toyc", readings=(X, K, W), experiments={E.id: E, EW.id: EW})


def value(setting: dict[str, Any]) -> float:
    """c = 1.0 (reproduces) for x in [0.4, 0.5] and at 0.8; 0.0 elsewhere; k=1 breaks it."""
    return 1.0 if setting.get("k", 0) == 0 and setting["x"] in (0.4, 0.5, 0.8) else 0.0


def measurements(exp: Experiment, scale: str, seeds: tuple[int, ...] = (0, 1)) -> Measurements:
    rows = []
    for setting in reading_settings(TOYC, exp, "each", scale):
        for seed in seeds:
            v = value(setting)
            rows.append({"instance_name": exp.id, "status": "feasible", "seed": seed,
                         "params": {"readings": dict(setting)}, "metrics": {"c": v, "d": v,
                                                                            "_diagnostics": {"inflation": 1 + setting["x"]}},
                         "wall_time_s": 0.0})
    return Measurements([(TOYC, exp, [c.id for c in exp.claims])], rows, scale, list(seeds))


def test_a_curve_is_measured_at_its_scale_values_around_the_defaults() -> None:
    paper = reading_settings(TOYC, E, "each", "paper")
    assert [s["x"] for s in paper if s["k"] == 0] == [0.5, 0.2, 0.4, 0.6, 0.8]
    assert {"x": 0.5, "k": 1} in paper and len(paper) == 6
    ci = reading_settings(TOYC, E, "each", "ci")
    assert sorted(s["x"] for s in ci if s["k"] == 0) == [0.2, 0.5, 0.8]
    # no scale, or a scale without curve values: the reading's declared options
    assert sorted(s["x"] for s in reading_settings(TOYC, E, "each") if s["k"] == 0) == [0.2, 0.4, 0.5, 0.6, 0.8]
    # a reading the experiment cannot be measured at the default of is crossed with the curve
    own = reading_settings(TOYC, EW, "each", "ci")
    assert sorted(s["x"] for s in own if s["w"] == "t") == [0.2, 0.5, 0.8]


def test_an_experiment_rejects_a_curve_it_cannot_draw() -> None:
    with pytest.raises(ValueError, match="curves names 'k', not one of its readings"):
        dataclasses.replace(E, readings=("x",), curves={"k": {"ci": (0, 1)}})
    with pytest.raises(ValueError, match="at least two numbers"):
        dataclasses.replace(E, curves={"x": {"ci": (0.5,)}})
    with pytest.raises(ValueError, match="at least two numbers"):
        dataclasses.replace(E, curves={"x": {"ci": ("low", "high")}})
    with pytest.raises(ValueError, match="values per scale"):
        dataclasses.replace(E, curves={"x": {"huge": (0.1, 0.2)}})


def test_the_band_names_the_runs_of_measured_values_that_reproduce() -> None:
    pts = [(0.2, False), (0.4, True), (0.5, True), (0.6, False), (0.8, True)]
    assert reproducing_band("x", pts) == "reproduces for x in [0.4, 0.5] and {0.8} (measured over [0.2, 0.8])"
    assert reproducing_band("x", [(0.2, False), (0.8, False)]) == "nowhere in [0.2, 0.8]"
    assert reproducing_band("x", [(0.8, True), (0.2, True)]) == "reproduces for x in [0.2, 0.8] (every value measured)"
    assert reproducing_band("x", [(0.2, None), (0.8, None)]) == ""
    # a value without a verdict breaks a run
    assert reproducing_band("x", [(0.2, True), (0.4, None), (0.6, True)]).startswith("reproduces for x in {0.2} and {0.6}")


def test_curves_group_the_points_with_every_other_reading_at_its_default() -> None:
    m = measurements(E, "paper")
    (cv,) = curves_of(m, TOYC, E)
    assert (cv.name, cv.group, cv.default) == ("x", "default", 0.5)
    assert list(cv.points) == [0.2, 0.4, 0.5, 0.6, 0.8]  # k=1 is not a point of the curve
    assert cv.values("c")[0.4] == [1.0, 1.0] and cv.diagnostics()["inflation"][0.2] == [1.2, 1.2]
    assert cv.labels_away == {"x=0.2", "x=0.4", "x=0.6", "x=0.8"}
    (own,) = curves_of(measurements(EW, "ci"), TOYC, EW)
    assert own.group == "w=t" and list(own.points) == [0.2, 0.5, 0.8]


def test_the_verdict_opens_with_the_band_and_leaves_the_curve_points_to_it() -> None:
    v = claim_verdicts(measurements(E, "paper"), TOYC, E)
    per, overall = v["c"]
    assert overall.startswith("over `x`: reproduces for x in [0.4, 0.5] and {0.8} (measured over [0.2, 0.8]) — at the "
                              "other readings: reproduces under default — not under k=1")
    assert "x=0.2" in per and "x=0.2" not in overall
    # at a scale without a verdict the band says where the mean lies within the tolerance, marked as such
    ci = claim_verdicts(measurements(E, "ci"), TOYC, E)["d"][1]
    assert ci.startswith("over `x`: no verdict at scale ci (comparable at paper only); at this scale the mean is "
                         "within the tolerance for x in [0.5, 0.8] (measured over [0.2, 0.8])")


def test_the_page_draws_each_curve_with_its_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from optkit import reproduce_pages

    # the experiment's other figures are tested elsewhere; here only the curve's is drawn
    monkeypatch.setattr(reproduce_pages, "plot_experiment", lambda *a, **k: False)
    monkeypatch.setattr(reproduce_pages, "plot_paper_axes", lambda *a, **k: "")
    written = write_pages(measurements(E, "paper"), tmp_path)
    page = (tmp_path / "toyc.md").read_text()
    assert "### Curve over `x`" in page
    assert "- `c`: over `x`: reproduces for x in [0.4, 0.5] and {0.8} (measured over [0.2, 0.8])." in page
    assert "| `x` | `c` | `d` | inflation |" in page
    assert "| 0.5 * | 1 [1, 1] ✓ | 1 [1, 1] ✓ | 1.5 [1.5, 1.5] |" in page
    # beside each result, every reading's diagnostics
    assert "#### Beside each result" in page and "| k=1 | 1.5 [1.5, 1.5] |" in page
    png = tmp_path / "toyc_toyc-e_curve-x.png"
    assert png in written and png.stat().st_size > 0
    index = (tmp_path / "index.md").read_text()
    assert "over `x`: reproduces for x in [0.4, 0.5] and {0.8}" in index


def test_a_curve_point_whose_mean_rounds_past_its_seeds_is_drawn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mean of three seeds' 0.1 is 0.1 + 1.4e-17 (float rounding): the error bar below it is
    clipped at zero, not passed to matplotlib as a negative length (which refuses the page)."""
    from optkit import reproduce_pages

    monkeypatch.setattr(reproduce_pages, "plot_experiment", lambda *a, **k: False)
    monkeypatch.setattr(reproduce_pages, "plot_paper_axes", lambda *a, **k: "")
    m = measurements(E, "paper", seeds=(0, 1, 2))
    for r in m.rows:
        r["metrics"]["_diagnostics"] = {"inflation": 0.1}
    assert sum([0.1] * 3) / 3 != 0.1
    written = write_pages(m, tmp_path)
    assert tmp_path / "toyc_toyc-e_curve-x.png" in written
    assert "| 0.5 * | 1 [1, 1] ✓ | 1 [1, 1] ✓ | 0.1 [0.1, 0.1] |" in (tmp_path / "toyc.md").read_text()


def test_a_claim_its_defaults_cannot_measure_is_judged_where_it_is_measured() -> None:
    """EW cannot be measured at w's default (its sweep is w=t only, as A-SRPT's prediction is
    measured on traces only): its default row holds no value, so the results text judges its
    claim under the readings it is measured at, never "not measured under today's defaults"."""
    from optkit.reproduce import results_text

    m = measurements(EW, "ci")
    for r in m.rows:
        if r["params"]["readings"]["w"] == "s":
            r["metrics"] = {"c": None, "d": None}
    text = results_text(m, "toyc")
    assert "1 reproduce only under another reading" in text and "not measured" not in text
    row = next(ln for ln in text.splitlines() if ln.startswith("| `c` |"))
    assert "| - (not measurable at the defaults; measured at w=t only) |" in row
    for r in m.rows:  # where it is measured, it never reproduces: counted as such
        if r["params"]["readings"]["w"] == "t":
            r["metrics"] = {"c": 0.0, "d": 0.0}
    assert "1 do not reproduce under any reading measured" in results_text(m, "toyc")
