"""The documentation builds without a warning and every example in it runs.

Three kinds of example, each run once:

* the pages' ``.. testcode::`` / ``.. doctest::`` blocks (the how-to guides): Sphinx's doctest
  builder (``-b doctest``), as ``docs/conf.py`` configures it; a Python example a page shows any
  other way (a bare ``>>>`` block, a Python ``code-block``) would never run, and fails a test;
* the ``>>>`` examples in docstrings: Python's :mod:`doctest`, module by module, in each
  module's own namespace (so an example may use the module's names without importing them), over
  every module of ``optkit`` and ``optkit.formulations``, whether or not the API reference
  renders it. The doctest builder leaves docstrings alone (``doctest_test_doctest_blocks = ""``),
  so no example runs twice.
* the HTML build (``-W --keep-going``): autodoc imports every documented module and renders every
  docstring; a docutils error, a broken cross-reference target, an unknown directive or a
  missing page is a warning, and a warning fails.
"""

from __future__ import annotations

import doctest
import importlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.needs import needs_modules

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


_BUILDS = """
import contextlib, io, json, sys
from pathlib import Path
from sphinx.cmd.build import build_main

docs, out = sys.argv[1], Path(sys.argv[2])
result = {}
for builder in ("html", "doctest"):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = build_main(["-W", "--keep-going", "-q", "-b", builder, "-d", str(out / "doctrees"), docs,
                           str(out / builder)])
    result[builder] = [code, err.getvalue()]
(out / "result.json").write_text(json.dumps(result))
"""


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, tuple[int, str]]]:
    """``(folder, {builder: (exit status, stderr)})`` of both builds of this module, the HTML
    one then the doctest one, as ``python -m sphinx -W --keep-going -q -b BUILDER -d DOCTREES
    docs folder/BUILDER`` runs each (Sphinx's ``build_main`` with those arguments, what ``python -m
    sphinx`` calls), in one Python process of their own: one interpreter start and one import of
    Sphinx for both. They share one doctree folder (Sphinx's pickled environment): the second
    build reuses the sources the first one read (and autodoc imported) instead of reading them
    again. Each build still fails on any warning (``-W``): a warning met while reading the
    sources fails the first build (the HTML one); cross-references are resolved, and their
    warnings raised, by each builder as it writes."""
    needs_modules("sphinx")
    out = tmp_path_factory.mktemp("sphinx")
    done = subprocess.run([sys.executable, "-c", _BUILDS, str(DOCS), str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0 and (out / "result.json").is_file(), done.stderr
    result = json.loads((out / "result.json").read_text())
    return out, {builder: (int(code), str(err)) for builder, (code, err) in result.items()}


def test_html_builds_without_a_warning(builds: tuple[Path, dict[str, tuple[int, str]]]) -> None:
    folder, result = builds
    code, stderr = result["html"]
    assert code == 0, stderr
    assert stderr == ""
    html = folder / "html"
    for page in ("index", "howto/index", "api/index", "api/gpu_mapping", "api/ddlwmp", "api/rar_ddls",
                 "api/nimp", "api/result", "api/harness"):
        assert (html / f"{page}.html").is_file(), page
    # autodoc rendered the docstrings (not an empty page per module)
    gm = (html / "api" / "gpu_mapping.html").read_text()
    assert 'id="optkit.formulations.gpu_mapping.heavy_edge"' in gm
    assert 'id="optkit.formulations.gpu_mapping.exact.run_cpsat"' in gm
    # each problem's page states its instance and solution format (its example runs as a page
    # example: the solution printed is the one the paper's algorithm returns)
    for problem in ("gpu_mapping", "ddlwmp", "rar_ddls", "nimp"):
        page = (html / "api" / f"{problem}.html").read_text()
        assert 'id="instance-and-solution-format"' in page, problem


def test_every_page_example_runs(builds: tuple[Path, dict[str, tuple[int, str]]]) -> None:
    folder, result = builds
    code, stderr = result["doctest"]
    report = (folder / "doctest" / "output.txt").read_text() if (folder / "doctest" / "output.txt").exists() else ""
    assert code == 0, stderr + report
    totals = re.search(r"^Doctest summary\n=+\n\s*(\d+) tests?\n\s*0 failures in tests\n"
                       r"\s*0 failures in setup code\n\s*0 failures in cleanup code", report, flags=re.M)
    assert totals is not None, report
    assert int(totals.group(1)) >= 1


def _unexecuted_examples(text: str) -> list[str]:
    """The Python examples of a page that no builder runs: a ``>>>`` line outside a
    ``.. doctest::`` directive, or a ``code-block`` (``code``, ``sourcecode``) in Python."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        if re.match(r"\s*\.\. (code-block|code|sourcecode):: *(python|python3|py|pycon)\s*$", line):
            found.append(f"line {i + 1}: {line.strip()}")
        if not line.lstrip().startswith(">>>"):
            continue
        indent = len(line) - len(line.lstrip())
        owner = next((lines[j] for j in range(i - 1, -1, -1)
                      if lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) < indent), "")
        if not re.match(r"\s*\.\. doctest::", owner):
            found.append(f"line {i + 1}: {line.strip()}")
    return found


def test_every_python_example_of_the_pages_is_executed() -> None:
    pages = sorted(DOCS.rglob("*.rst"))
    assert DOCS / "howto" / "index.rst" in pages
    bad = {str(p.relative_to(ROOT)): _unexecuted_examples(p.read_text(encoding="utf-8")) for p in pages}
    assert not {p: b for p, b in bad.items() if b}, "use .. testcode:: or .. doctest:: for: " + repr(bad)
    assert _unexecuted_examples(".. code-block:: python\n\n   x = 1\n\n>>> 1\n1\n") == [
        "line 1: .. code-block:: python", "line 5: >>> 1"]
    assert _unexecuted_examples(".. doctest::\n   :hide:\n\n   >>> 1\n   1\n") == []


def _modules_with_examples() -> list[str]:
    names = []
    for package, folder in (("optkit", ROOT / "optkit"), ("optkit.formulations", ROOT / "formulations")):
        for path in sorted(folder.rglob("*.py")):
            if ">>>" not in path.read_text(encoding="utf-8") or path.name == "__main__.py":
                continue
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.append(".".join((package, *parts)))
    return names


MODULES = _modules_with_examples()


def test_the_docstring_examples_are_found() -> None:
    for name in ("optkit.simulation", "optkit.formulations.gpu_mapping.heavy_edge",
                 "optkit.formulations.gpu_mapping.exact", "optkit.formulations.nimp.baselines"):
        assert name in MODULES


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module: str) -> None:
    mod = importlib.import_module(module)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(mod, module) if t.examples]
    # only the module's own docstrings (not those of names it imports)
    tests = [t for t in tests if t.filename is not None and Path(t.filename).resolve() == Path(mod.__file__ or "").resolve()]
    assert tests, f"{module}: no docstring example found"
    report = io.StringIO()
    for test in tests:
        runner.run(test, out=report.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, report.getvalue()
    assert result.attempted >= 1
