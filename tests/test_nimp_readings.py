"""nimp readings (formulations/nimp/readings.py) under the rule for defaults (optkit/readings.py,
issue 34): each names its clause, says when its options arrived, and the functions users import
take the declared defaults."""

from __future__ import annotations

import inspect

import pytest

from optkit.formulations.nimp import FORMULATION
from optkit.formulations.nimp.readings import READINGS
from optkit.readings import NOT_MOVED, moved_defaults_markdown


def test_every_reading_says_when_its_options_arrived() -> None:
    """The history names the commits git dates each option by, and the replay's first committed
    results (ce8e352) they are measured against."""
    assert FORMULATION.readings == READINGS
    for r in READINGS:
        assert r.history and "ce8e352" in r.history, r.name


def _git(*args: str) -> str | None:
    """``git args`` in the repository, or ``None`` when it has no full history here."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    try:
        shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=root, capture_output=True,
                                 text=True, check=True).stdout.strip()
        if shallow != "false":
            return None
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def test_every_commit_a_history_cites_has_the_date_it_gives() -> None:
    """Each commit a reading's history names exists, and where the history dates it (``abc1234,
    2026-11-22 06:24`` or ``abc1234 (2026-11-22 ...``) git gives that date (and time): the histories
    are read from ``git log -S`` and must stay true to it."""
    import re

    if _git("rev-parse", "HEAD") is None:
        pytest.skip("not a git checkout with full history: the commits cannot be looked up")
    cited: dict[str, set[str]] = {}
    for r in READINGS:
        for commit, day, hour in re.findall(r"\b([0-9a-f]{7})\b(?:,| \()?\s*(\d{4}-\d{2}-\d{2})?(?: (\d{2}:\d{2}))?",
                                            r.history):
            cited.setdefault(commit, set()).add(f"{day} {hour}".strip())
    assert {"6f3a4b1", "ce8e352", "77f1967", "bd32538", "c856815"} <= set(cited)
    for commit, dates in cited.items():
        out = _git("log", "-1", "--format=%ad", "--date=format:%Y-%m-%d %H:%M", commit)
        assert out, f"{commit} is not a commit of this repository"
        for date in dates - {""}:
            assert out.strip().startswith(date), (commit, date, out)


def test_titan_algorithm_is_the_repaired_pseudo_code() -> None:
    r = FORMULATION.reading("titan_algorithm")
    assert (r.default, r.rule, r.literal, r.moved_from, r.post_hoc) == ("repaired", "repaired", "pseudo-code",
                                                                         "pseudo-code", True)
    assert set(r.options) == {"repaired", "pseudo-code", "pair-grouping"}
    assert "Fig. 1(c)" in r.reason and "line 18" in r.reason
    table = moved_defaults_markdown([FORMULATION])
    assert "| nimp | `titan_algorithm` | pseudo-code → repaired | repaired |" in table
    # no other nimp default moved
    assert [x.name for x in READINGS if x.moved_from is not NOT_MOVED] == ["titan_algorithm"]


@pytest.mark.parametrize("name,rule,post_hoc", [
    ("titan_step2", "example", True), ("titan_tie_break", "example", True), ("elasticflow_machines", "literal", True),
    ("tiresias_spread", "literal", True), ("hd_non_power_of_two", "literal", False), ("phase_budget_s", "swept", True),
])
def test_rule_and_post_hoc_of_each_reading(name: str, rule: str, post_hoc: bool) -> None:
    r = FORMULATION.reading(name)
    assert (r.rule, r.post_hoc) == (rule, post_hoc)


def test_elasticflow_idle_only_is_post_hoc() -> None:
    """idle-only arrived in 77f1967, after the replay's first results (ce8e352); the old claim that
    both options date from the first Elasticflow is gone from the reason."""
    r = FORMULATION.reading("elasticflow_machines")
    assert "77f1967" in r.history and "after the replay's first committed results" in r.history
    assert "Both options date" not in r.reason and "post hoc" in r.reason


def test_phase_budget_is_swept_over_its_plausible_range() -> None:
    """Options from 1 ms to 100 ms, the default among them; the replay experiment's sweep stays a
    subset of them."""
    r = FORMULATION.reading("phase_budget_s")
    assert r.open and min(r.options) == 0.001 and max(r.options) == 0.1 and r.default in r.options
    assert set(FORMULATION.experiments["titan-replay"].sweep["phase_budget_s"]) <= set(r.options)


def test_titan_functions_take_the_declared_defaults() -> None:
    """Every entry point of Titan (the plain function, the engine's run function, the placement
    hook, the online policy, the unchecked one the replay calls) defaults to the declared readings."""
    from optkit.formulations.nimp.online import TitanPolicy
    from optkit.formulations.nimp.place import place
    from optkit.formulations.nimp.titan import place_unchecked, run_titan, titan

    for fn in (titan, run_titan, place, TitanPolicy.__init__, place_unchecked):
        params = inspect.signature(fn).parameters
        for name in ("titan_algorithm", "titan_step2", "titan_tie_break"):
            assert params[name].default == FORMULATION.reading(name).default, (fn, name)
