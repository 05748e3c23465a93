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


def test_module_counts_name_formulations_by_their_repository_path(tmp_path: Path) -> None:
    """A package of formulations/ is mutated at its installed place, optkit/formulations/ (so that
    mutmut's path-derived names match the modules the tests import); counts and lines name it by
    its path in the repository."""
    meta = tmp_path / "mutants" / "optkit" / "formulations" / "x" / "a.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"exit_code_by_key": {"optkit.formulations.x.a.x_f__mutmut_1": 0,
                                                     "optkit.formulations.x.a.x_f__mutmut_2": 1}}))
    assert mutate.module_counts(tmp_path) == {
        "formulations/x/a.py": {"mutants": 2, "tested": 2, "killed": 1, "survived": 1, "no_tests": 0}}
    assert mutate.survivors(tmp_path) == ["optkit.formulations.x.a.x_f__mutmut_1"]


@pytest.mark.parametrize("module, source, only", [
    ("formulations/nimp/bounds.py", "optkit/", "optkit/formulations/nimp/bounds.py"),
    ("formulations/nimp/", "optkit/", "optkit/formulations/nimp/*.py"),
    ("optkit/worst_case.py", "optkit/", "optkit/worst_case.py"),
])
def test_the_scratch_copy_has_the_installed_layout(tmp_path: Path, module: str, source: str, only: str) -> None:
    """mutmut links a test to a mutant by ``orig.__module__`` against a name derived from the
    mutated file's path: tests import ``optkit.formulations.nimp.bounds``, so that file must be
    mutated at ``optkit/formulations/nimp/bounds.py`` (mutated at ``formulations/``, every mutant
    was 'reached by no test' and mutmut stopped)."""
    mutate.prepare(tmp_path, module, ["tests/test_nimp_bounds.py"])
    config = (tmp_path / "pyproject.toml").read_text().split("[tool.mutmut]", 1)[1]
    assert f'source_paths = ["{source}"]' in config
    assert f'only_mutate = ["{only}"]' in config
    assert '"formulations/"' in config.split("also_copy", 1)[1].split("\n", 1)[0]
    assert (tmp_path / "optkit" / "formulations" / "nimp" / "bounds.py").read_text() == \
        (mutate.REPO / "formulations" / "nimp" / "bounds.py").read_text()
    assert mutate.repository_path(mutate.scratch_path(module)) == module


def test_the_scratch_copy_holds_what_the_tests_read(tmp_path: Path) -> None:
    """Tests read the shipped instances, the docs' examples (test_online imports them, so
    test_nimp_online fails at collection without docs/) and benchmark files: each is copied and
    named in mutmut's also_copy, so that mutmut's own copy holds them too."""
    mutate.prepare(tmp_path, "formulations/nimp/", ["tests/test_nimp_online.py"])
    also = (tmp_path / "pyproject.toml").read_text().split("also_copy = ", 1)[1].split("\n", 1)[0]
    for folder in ("instances", "docs", "benchmarks", ".ci"):
        assert (tmp_path / folder).is_dir(), folder
        assert f'"{folder}/"' in also, folder
    assert (tmp_path / "docs" / "howto" / "drive-a-srpt.rst").is_file()


def test_mutmut_runs_with_the_checkouts_trace_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """From the scratch folder ../shared/data/traces does not exist: mutmut gets the folder the
    checkout finds as $OPTKIT_TRACES, and an explicitly set folder is kept."""
    from optkit.traces import TRACES_ENV

    monkeypatch.setenv(TRACES_ENV, str(tmp_path))
    assert mutate.mutmut_env()[TRACES_ENV] == str(tmp_path)
    monkeypatch.delenv(TRACES_ENV)
    monkeypatch.setattr("optkit.traces.trace_root", lambda: tmp_path / "found")
    assert mutate.mutmut_env()[TRACES_ENV] == str(tmp_path / "found")
    monkeypatch.setattr("optkit.traces.trace_root", lambda: None)
    assert TRACES_ENV not in mutate.mutmut_env()


def test_mutmuts_tests_start_each_test_with_the_module_caches_empty() -> None:
    """mutmut runs with ``$OPTKIT_FRESH_CACHES`` set (tests/conftest.py then empties the caches
    before each test); the emptying reaches an ``lru_cache`` found by type (nimp's
    ``model._hd_phases``) and the named dictionaries (Titan's collectives, rar-ddls' rate caches),
    and every named dictionary exists under its name."""
    import importlib

    from tests import fresh_caches

    assert mutate.mutmut_env()[fresh_caches.ENV] == "1"
    model = importlib.import_module("optkit.formulations.nimp.model")
    titan = importlib.import_module("optkit.formulations.nimp.titan")
    for name, attrs in fresh_caches.CACHE_DICTS.items():
        mod = importlib.import_module(name)
        assert all(isinstance(getattr(mod, a), dict) for a in attrs), name
    model.halving_doubling_phases(8, 1e6)
    titan._COLLECTIVES_BY_PHASES[(0, ())] = None  # type: ignore[assignment]
    assert model._hd_phases.cache_info().currsize > 0
    assert fresh_caches.empty_module_caches() >= 1 + sum(map(len, fresh_caches.CACHE_DICTS.values()))
    assert model._hd_phases.cache_info().currsize == 0 and titan._COLLECTIVES_BY_PHASES == {}


def test_a_mutants_edit_is_its_changed_lines() -> None:
    """``mutmut show``'s diff without headers and context: the edit, wherever it sits in the file."""
    shown = ("# m.x_f__mutmut_3: survived\n--- optkit/a.py\n+++ optkit/a.py\n@@ -2,7 +2,7 @@\n"
             "     units = []\n-    cin = 3\n+    cin = 4\n     for b in blocks:\n")
    assert mutate.changed_lines(shown) == "-    cin = 3\n+    cin = 4"
