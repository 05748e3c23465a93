"""tools/mutate.py, the mutation-testing helper (README, "Testing"): the parts that compute what it
reports. mutmut itself is not run here (too slow for the suite)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import mutate  # noqa: E402


def test_wilson_interval_matches_the_textbook_values() -> None:
    """Wilson's 95% interval: 50 of 100 -> [0.4038, 0.5962]; 0 of 10 -> [0, 0.2775]; 10 of 10 ->
    [0.7225, 1] (Newcombe 1998, Table I method 3, to 4 places)."""
    assert mutate.wilson(50, 100) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    assert mutate.wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert mutate.wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)


def test_module_lines_and_names_read_mutmuts_meta_files(tmp_path: Path) -> None:
    """One line per module from mutmut's exit codes: 1 and 36 (timeout) killed, 0 survived,
    33 no tests, None not tested; the names are every key, sorted."""
    meta = tmp_path / "mutants" / "formulations" / "x" / "a.py.meta"
    meta.parent.mkdir(parents=True)
    codes = {"m.x__f__mutmut_2": 1, "m.x__f__mutmut_1": 0, "m.x__g__mutmut_1": 36,
             "m.x__g__mutmut_2": 33, "m.x__g__mutmut_3": None}
    meta.write_text(json.dumps({"exit_code_by_key": codes}))
    assert mutate.mutant_names(tmp_path) == sorted(codes)
    assert mutate.module_lines(tmp_path) == [
        "mutate.py: formulations/x/a.py: 5 mutants, 4 tested, 2 killed, 1 survived, "
        "1 reached by no selected test, score 66.7%"]
