"""gpu-mapping's modules import one another without a circle and without a private name (issue 36).

Read from the source (``ast``), so lazy imports inside functions count as much as the ones at the
top: a circle held together by a function-level import is still a circle for a reader. A
docstring example (``>>>``) must not import a private name either.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import optkit.formulations.gpu_mapping as package

PACKAGE = "optkit.formulations.gpu_mapping"
ROOT = Path(package.__file__).resolve().parent
MODULES = sorted(p.stem for p in ROOT.glob("*.py"))


def _imports(module: str) -> list[tuple[str, str]]:
    """``(imported module of the package, name)`` for every import of ``module`` (``name`` is ""
    for ``import x`` / ``from . import x``, the module itself)."""
    tree = ast.parse((ROOT / f"{module}.py").read_text())
    out: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level == 1:
                target = base
            elif base.startswith(PACKAGE + "."):
                target = base[len(PACKAGE) + 1:]
            elif base == PACKAGE:
                target = ""
            else:
                continue
            for alias in node.names:
                if target:
                    out.append((target.split(".")[0], alias.name))
                elif alias.name in MODULES:  # from . import x
                    out.append((alias.name, ""))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    out.append((alias.name[len(PACKAGE) + 1:].split(".")[0], ""))
    return out


def _graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (``__init__`` left out: it is the public face
    that imports the rest, and no module imports it)."""
    return {m: {t for t, _ in _imports(m) if t != m and t in MODULES and t != "__init__"}
            for m in MODULES if m != "__init__"}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (a list of modules, first = last), or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                return path[path.index(t):] + [t]
            if t not in state:
                found = visit(t)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_the_graph_reader_sees_lazy_imports() -> None:
    """The reader must see function-level imports, or it would miss the circles they close:
    exact.py imports columns inside ``run_cpsat`` only."""
    assert "columns" in _graph()["exact"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_circle() -> None:
    assert _cycle(_graph()) is None


@pytest.mark.parametrize("module", [m for m in MODULES if m != "__init__"])
def test_no_private_name_imported_from_another_module(module: str) -> None:
    private = [f"{t}.{name}" for t, name in _imports(module) if name.startswith("_") and t != module]
    assert private == []


@pytest.mark.parametrize("module", MODULES)
def test_no_docstring_example_imports_a_private_name(module: str) -> None:
    lines = [ln for ln in (ROOT / f"{module}.py").read_text().splitlines()
             if re.match(r"\s*>>> (from \S+ )?import .*(\b_[A-Za-z]|\.\_)", ln)]
    assert lines == []
