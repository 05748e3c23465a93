"""The scripts outside the package (``benchmarks/``, ``tools/``) import only what optkit offers.

No test runs most benchmark scripts (they print measurements, some for hours), so a rename in the
package broke three of them silently: ``nimp.titan._capacity_arg`` became the public
``capacity_argument`` (issue 36 §1) while ``benchmarks/nimp_exact.py``, ``nimp_perf.py`` and
``performance.py`` still imported the old name. This test reads every ``from optkit... import
name`` of the scripts (``ast``, wherever it stands, in a function too) and checks that the module
imports and has the name, and that the name is public: a script is a user of the package and
takes what a user can.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted([*ROOT.glob("benchmarks/*.py"), *ROOT.glob("tools/*.py")])


def optkit_imports(path: Path) -> list[tuple[str, str, int]]:
    """(module, name, line) of every ``from optkit[...] import name`` in ``path``."""
    tree = ast.parse(path.read_text(), str(path))
    return [(node.module, alias.name, node.lineno)
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
            and (node.module == "optkit" or node.module.startswith("optkit."))
            for alias in node.names if alias.name != "*"]


def test_the_scripts_are_found() -> None:
    names = {p.name for p in SCRIPTS}
    assert {"performance.py", "nimp_exact.py", "mutation.py", "mutate.py"} <= names
    assert sum(len(optkit_imports(p)) for p in SCRIPTS) > 100


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_script_imports_exist_and_are_public(path: Path) -> None:
    problems = []
    for module, name, line in optkit_imports(path):
        where = f"{path.parent.name}/{path.name}:{line}"
        if name.startswith("_") and not name.startswith("__"):
            problems.append(f"{where}: private name {module}.{name}")
        mod = importlib.import_module(module)
        if not hasattr(mod, name):
            try:
                importlib.import_module(f"{module}.{name}")  # a submodule
            except ModuleNotFoundError:
                problems.append(f"{where}: {module} has no {name}")
    assert not problems, "\n".join(problems)


def test_a_missing_name_is_found(tmp_path: Path) -> None:
    """The check itself fails on the breakage it exists for."""
    script = tmp_path / "old.py"
    script.write_text("def f():\n    from optkit.formulations.nimp.titan import _capacity_arg, titan\n")
    assert optkit_imports(script) == [("optkit.formulations.nimp.titan", "_capacity_arg", 2),
                                      ("optkit.formulations.nimp.titan", "titan", 2)]
    mod = importlib.import_module("optkit.formulations.nimp.titan")
    assert not hasattr(mod, "_capacity_arg") and hasattr(mod, "titan")
