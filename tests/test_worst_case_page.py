"""``benchmarks/worst_case.py``: the worst-case page's run goes on across sessions, and its page
says which budget each row had.

Issue 24 asks 10 minutes per algorithm (21 algorithms: 3.5 hours on 2 cores), longer than one
working session, and a search's resume state stays out of git. The script therefore keeps an
algorithm whose committed ``summary.json`` records a finished search at the run's settings, and
searches any other from an empty folder; ``--page-only`` writes a page from rows of several
budgets. These tests pin both: the keep/restart rule with a recording stand-in for the search (the
search itself is tested in ``tests/test_worst_case.py``), and the page on copies of the committed
summaries.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import worst_case as page  # noqa: E402

from optkit import worst_case as wc  # noqa: E402

SETTINGS = ["--budget", "600", "--seed", "0", "--oracle-time-limit", "20"]


def _summary(problem: str, algorithm: str, budget: float, **changes: Any) -> dict[str, Any]:
    s = {"problem": problem, "algorithm": algorithm, "budget_s": budget, "seed": 0, "max_evals": None,
         "oracle_time_limit_s": 20.0, "max_size": wc.size_limits(problem), "target": "ratio", "elapsed_s": budget,
         "evaluations": 7}
    s.update(changes)
    return s


def _write(folder: Path, summary: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "summary.json").write_text(json.dumps(summary))


def _args(runs: Path) -> Any:
    import argparse

    return argparse.Namespace(budget=600.0, seed=0, oracle_time_limit=20.0, runs=str(runs))


@pytest.mark.parametrize("change, kept", [
    ({}, True),
    ({"budget_s": 25.0}, False),            # the earlier, shorter run
    ({"seed": 1}, False),
    ({"max_evals": 224}, False),            # a replay, not a budgeted search
    ({"oracle_time_limit_s": 5.0}, False),
    ({"max_size": {"workers": 4, "machines": 6, "gpus": 4}}, False),
    ({"target": "margin"}, False),
])
def test_a_folder_is_kept_only_when_searched_at_the_runs_settings(tmp_path: Path, change: dict[str, Any],
                                                                  kept: bool) -> None:
    _write(tmp_path / "titan", _summary("nimp", "titan", 600.0, **change))
    found = page.finished_search(tmp_path / "titan", "nimp", _args(tmp_path))
    assert (found is not None) is kept
    assert page.finished_search(tmp_path / "absent", "nimp", _args(tmp_path)) is None


def test_the_run_keeps_finished_searches_and_restarts_the_others_from_an_empty_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """nimp's four algorithms: titan finished at 600 s (kept untouched), elasticflow at 25 s and
    hived cut off with only its resume state (both emptied and searched again), tiresias never
    started; the suites are measured once and kept by the next invocation."""
    runs = tmp_path / "runs"
    algos = page.algorithms("nimp")
    assert algos[:4] == ["titan", "elasticflow", "hived", "tiresias"]
    _write(runs / "nimp" / "titan", _summary("nimp", "titan", 600.0, code_commit="abc"))
    (runs / "nimp" / "titan" / "instance.json").write_text("{}")
    _write(runs / "nimp" / "elasticflow", _summary("nimp", "elasticflow", 25.0))
    (runs / "nimp" / "elasticflow" / "violation.json").write_text("{}")
    (runs / "nimp" / "hived").mkdir(parents=True)
    (runs / "nimp" / "hived" / "state.json").write_text("{}")
    searched: list[tuple[str, list[str], float]] = []
    measured: list[str] = []

    def fake_search(problem: str, algorithm: str, out: Path, **kw: Any) -> dict[str, Any]:
        searched.append((algorithm, sorted(p.name for p in Path(out).iterdir()) if Path(out).exists() else [],
                         kw["budget"]))
        assert kw["seed"] == 0 and kw["oracle_time_limit"] == 20.0
        s = _summary(problem, algorithm, kw["budget"])
        _write(Path(out), s)
        return s

    def fake_suites(problem: str, algos: list[str], *a: Any) -> dict[str, Any]:
        measured.append(problem)
        return {"_instances": 0, "_skipped": 0}

    written: list[list[dict[str, Any]]] = []
    monkeypatch.setattr(wc, "worst_case", fake_search)
    monkeypatch.setattr(wc, "format_summary", lambda s: s["algorithm"])
    monkeypatch.setattr(page, "measure_suites", fake_suites)
    monkeypatch.setattr(page, "write_page", lambda path, rows, *a: written.append(rows))
    argv = [*SETTINGS, "--jobs", "1", "--problems", "nimp", "--runs", str(runs), "--out", str(tmp_path / "p.md")]
    assert page.main(argv) == 0
    assert searched == [("elasticflow", [], 600.0), ("hived", [], 600.0), ("tiresias", [], 600.0)]  # emptied first
    assert sorted(p.name for p in (runs / "nimp" / "titan").iterdir()) == ["instance.json", "summary.json"]
    assert [r["summary"]["algorithm"] for r in written[0]] == algos
    assert all(r["summary"].get("code_commit") for r in written[0])  # every row says which code searched
    assert measured == ["nimp"]
    saved = json.loads((runs / "suites.json").read_text())
    assert saved["settings"]["nimp"] == {"seed": 0, "oracle_time_limit": 20.0, "budget": 600.0}

    searched.clear()
    assert page.main(argv) == 0  # a later session: everything kept, nothing measured again
    assert searched == [] and measured == ["nimp"]
    assert page.main([*argv[:1], "25", *argv[2:]]) == 0  # another budget: every algorithm and the suites again
    assert searched == [(a, [], 25.0) for a in algos] and measured == ["nimp", "nimp"]


def _committed_runs(tmp_path: Path, budgets: dict[tuple[str, str], float]) -> Path:
    """A copy of the committed runs, every summary's budget set to 25 s except those named."""
    runs = tmp_path / "runs"
    shutil.copytree(ROOT / "benchmarks/results/worst-case", runs)
    for path in runs.glob("*/*/summary.json"):
        s = json.loads(path.read_text())
        s["budget_s"] = budgets.get((s["problem"], s["algorithm"]), 25.0)
        path.write_text(json.dumps(s, allow_nan=True))
    return runs


def _table(text: str) -> list[list[str]]:
    """The table's body rows, split on the pipes Markdown reads as cell borders (not ``\\|``)."""
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))] for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("| problem")]


def test_page_only_writes_a_budget_column_while_the_run_is_in_progress(tmp_path: Path) -> None:
    runs = _committed_runs(tmp_path, {("nimp", "titan"): 600.0, ("rar-ddls", "sjf-bco"): 600.0})
    out = tmp_path / "page.md"
    assert page.main(["--page-only", "--runs", str(runs), "--out", str(out)]) == 0
    text = out.read_text()
    rows = {(r[0], r[1]): r for r in _table(text)}
    assert len(rows) == 21
    assert rows[("nimp", "titan")][2] == "600 s" and rows[("rar-ddls", "sjf-bco")][2] == "600 s"
    assert rows[("gpu-mapping", "heavy-edge")][2] == "25 s"
    assert "600 s of wall time for 2 of the 21 algorithms, 25 s of wall time for 19 of the 21" in text
    assert "rows below that budget are still to do (`--budget 600`)" in text
    assert "`python benchmarks/worst_case.py --page-only`" in text


def test_page_only_at_one_budget_has_no_budget_column_and_nothing_still_to_do(tmp_path: Path) -> None:
    runs = _committed_runs(tmp_path, {})
    for path in runs.glob("*/*/summary.json"):
        s = json.loads(path.read_text())
        s["budget_s"] = 600.0
        path.write_text(json.dumps(s, allow_nan=True))
    out = tmp_path / "page.md"
    assert page.main(["--page-only", "--runs", str(runs), "--out", str(out)]) == 0
    text = out.read_text()
    assert "**Budget: 600 s of wall time per algorithm**" in text
    assert "still to do" not in text
    assert all(len(r) == 8 for r in _table(text))  # problem, algorithm, ratio, ..., verdict: no budget column


def test_one_algorithms_crash_does_not_stop_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A search that raises (the 600-s run met two such bugs, each fixed with a test in
    tests/test_worst_case.py) is reported with its traceback; the run goes on with the next
    algorithm, writes the page without that row and exits 1."""
    runs = tmp_path / "runs"

    def fake_search(problem: str, algorithm: str, out: Path, **kw: Any) -> dict[str, Any]:
        if algorithm == "hived":
            raise ValueError("high <= 0")
        s = _summary(problem, algorithm, kw["budget"])
        _write(Path(out), s)
        return s

    written: list[list[dict[str, Any]]] = []
    monkeypatch.setattr(wc, "worst_case", fake_search)
    monkeypatch.setattr(wc, "format_summary", lambda s: s["algorithm"])
    monkeypatch.setattr(page, "measure_suites", lambda *a: {"_instances": 0, "_skipped": 0})
    monkeypatch.setattr(page, "write_page", lambda path, rows, *a: written.append(rows))
    argv = [*SETTINGS, "--jobs", "1", "--problems", "nimp", "--runs", str(runs), "--out", str(tmp_path / "p.md")]
    assert page.main(argv) == 1
    err = capsys.readouterr()
    assert "ValueError: high <= 0" in err.err and "nimp / hived: FAILED" in err.out
    assert [r["summary"]["algorithm"] for r in written[0]] == [a for a in page.algorithms("nimp") if a != "hived"]
    assert not (runs / "nimp" / "hived" / "summary.json").exists()
