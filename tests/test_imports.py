"""No import circle and no private name imported across modules (issue 36 §1).

The graph is read from the source (``ast``), not from what Python happens to have imported:
every ``import`` and ``from ... import`` counts, at the top of a module or inside a function. A
deferred import inside a function still closes a circle (for a reader, and for Python when the
function runs while a module of the circle is half imported). Imports that code computes
(``importlib.import_module(name)``) are not read.

The graph spans the whole distribution, the engine ``optkit/`` and ``formulations/`` (installed
as ``optkit.formulations``), so a circle through the engine and a formulation is found too. Each
package of :data:`PACKAGES` is one parameter of the three checks:

* **circle**: no module of the package lies on an import circle;
* **private**: no module of the package takes a private name (``_name``, not ``__dunder__``) of
  another module, by ``from m import _name`` or ``m._name`` on an imported module ``m``; a
  private *module* (``pkg/_impl.py``) is its package's: the package's own modules may import it,
  no other may;
* **docstring**: no docstring example (``>>>``) imports a private name either.

A (package, check) pair in :data:`NOT_YET` is a known failure, marked ``xfail(strict=True)``:
the day it is cleaned its test passes, which fails the run and says to strike the pair.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterator, Mapping

import pytest

import optkit
import optkit.formulations

ENGINE = Path(optkit.__file__).resolve().parent
FORMULATIONS = Path(optkit.formulations.__file__).resolve().parent

PACKAGES = {
    "optkit": ENGINE,  # the engine with its subpackages (harness, solvers, testing)
    "optkit.formulations": FORMULATIONS,  # the package's own modules, not a problem's
    "optkit.formulations.gpu_mapping": FORMULATIONS / "gpu_mapping",
    "optkit.formulations.ddlwmp": FORMULATIONS / "ddlwmp",
    "optkit.formulations.rar_ddls": FORMULATIONS / "rar_ddls",
    "optkit.formulations.nimp": FORMULATIONS / "nimp",
}
"""Each package checked, by its folder. A module belongs to the longest package name that holds it."""

NOT_YET: dict[tuple[str, str], str] = {}
"""(package, check) pairs not yet clean (issue 36 §1, other branches): strike a pair once it passes."""

CHECKS = ("circle", "private", "docstring")


# ----------------------------------------------------------------------------- reading the graph
@dataclass(frozen=True)
class Import:
    """``importer`` takes ``name`` of the module ``target`` ("": the module itself) at ``line``."""

    importer: str
    target: str
    name: str
    line: int


def module_files(packages: Mapping[str, Path]) -> dict[str, Path]:
    """Every module of ``packages`` (name -> file); a package is its ``__init__.py``."""
    out: dict[str, Path] = {}
    for package, folder in packages.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out.setdefault(".".join((package, *parts)), path)
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` of a chain of names and attributes, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body``, nested ones (in functions, classes, ifs, trys) included: an
    import is a statement, so the expressions need no walk."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def imports_of(module: str, modules: Mapping[str, Path]) -> list[Import]:
    """Every import of ``module`` that loads a module of ``modules``, wherever it stands, and
    every ``m._name`` read from such a module ``m``."""
    path = modules[module]
    text = path.read_text()
    tree = ast.parse(text, str(path))
    here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    out: list[Import] = []
    bound: dict[str, str] = {}  # a local name or dotted chain -> the module it is
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    out.append(Import(module, alias.name, "", node.lineno))
                    bound[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                stem = here[:len(here) - (node.level - 1)]
                base = ".".join(stem + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules:
                    out.append(Import(module, sub, "", node.lineno))
                    bound[alias.asname or alias.name] = sub
                elif base in modules:
                    out.append(Import(module, base, alias.name, node.lineno))
    if any(re.search(rf"\b{re.escape(name)}\._", text) for name in bound):  # else no m._name to look for
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                target = bound.get(_dotted(node.value) or "")
                if target is not None:
                    out.append(Import(module, target, node.attr, node.lineno))
    return out


@lru_cache(maxsize=None)
def _all_imports(packages: tuple[tuple[str, Path], ...]) -> tuple[dict[str, Path], list[Import]]:
    modules = module_files(dict(packages))
    return modules, [imp for m in modules for imp in imports_of(m, modules)]


def distribution() -> tuple[dict[str, Path], list[Import]]:
    """The modules of :data:`PACKAGES` and all their imports (read once per test session)."""
    return _all_imports(tuple(PACKAGES.items()))


def owner(module: str, packages: Mapping[str, Path]) -> str:
    """The package of ``packages`` that ``module`` belongs to: the longest name that holds it."""
    return max((p for p in packages if module == p or module.startswith(p + ".")), key=len)


# ----------------------------------------------------------------------------- the three checks
def circles(imports: list[Import]) -> list[list[str]]:
    """The import circles: each a strongly connected set of two or more modules, sorted."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        if imp.target != imp.importer:
            graph.setdefault(imp.importer, set()).add(imp.target)
            graph.setdefault(imp.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def describe(circle: list[str], imports: list[Import]) -> list[str]:
    """``a -> b: names (line)`` for each import inside ``circle``."""
    inside = set(circle)
    ties: dict[tuple[str, str], list[str]] = {}
    for imp in imports:
        if imp.importer in inside and imp.target in inside and imp.importer != imp.target:
            ties.setdefault((imp.importer, imp.target), []).append(f"{imp.name or 'module'} (line {imp.line})")
    return [f"{a} -> {b}: {', '.join(names)}" for (a, b), names in sorted(ties.items())]


def private_imports(imports: list[Import]) -> list[str]:
    """Each import of a private name of another module, or of a private module from outside its
    package, as ``importer line: target.name``."""
    out = []
    for imp in sorted(imports, key=lambda i: (i.importer, i.line, i.target, i.name)):
        if imp.target == imp.importer:
            continue
        parts = imp.target.split(".")
        outside = [i for i, part in enumerate(parts) if _private(part)
                   and not (imp.importer + ".").startswith(".".join(parts[:i]) + ".")]
        if (imp.name and _private(imp.name)) or outside:
            out.append(f"{imp.importer} line {imp.line}: {imp.target}{'.' + imp.name if imp.name else ''}")
    return out


_DOCTEST_PRIVATE = re.compile(r"\s*>>> (from \S+ )?import .*(\b_[A-Za-z]|\._)")


def docstring_private_imports(path: Path) -> list[str]:
    """The lines of ``path`` where a docstring example imports a private name."""
    return [f"{path.name}:{n}: {ln.strip()}" for n, ln in enumerate(path.read_text().splitlines(), 1)
            if _DOCTEST_PRIVATE.match(ln)]


def findings(package: str, check: str) -> list[str]:
    """What ``check`` finds in ``package`` ([] when it is clean)."""
    modules, imports = distribution()
    mine = {m for m in modules if owner(m, PACKAGES) == package}
    if check == "circle":
        return [line for c in circles(imports) if mine & set(c) for line in ["circle:", *describe(c, imports)]]
    if check == "private":
        return private_imports([imp for imp in imports if imp.importer in mine])
    return [line for m in sorted(mine) for line in docstring_private_imports(modules[m])]


def _cases() -> Iterator[object]:
    for package in PACKAGES:
        for check in CHECKS:
            why = NOT_YET.get((package, check))
            marks = [pytest.mark.xfail(strict=True, reason=f"not clean yet: {why}")] if why else []
            yield pytest.param(package, check, marks=marks, id=f"{package}-{check}")


@pytest.mark.parametrize(("package", "check"), list(_cases()))
def test_package_imports_cleanly(package: str, check: str) -> None:
    found = findings(package, check)
    assert found == [], "\n".join(found)


def test_every_problem_package_is_checked() -> None:
    """A new problem folder under formulations/ must join :data:`PACKAGES` (its modules would
    otherwise count as the formulations package's own)."""
    folders = {p.parent.name for p in FORMULATIONS.glob("*/__init__.py")}
    assert {f"optkit.formulations.{f}" for f in folders} <= set(PACKAGES)
    assert set(NOT_YET) <= {(p, c) for p in PACKAGES for c in CHECKS}


# ----------------------------------------------------------------------------- the reader itself
def test_the_reader_sees_every_kind_of_import(tmp_path: Path) -> None:
    """A made-up package with one import of each kind: the graph, the circle and the private
    names the checks must see."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg._impl import thing\n")
    (pkg / "_impl.py").write_text("thing = 1\n")
    (pkg / "a.py").write_text("def f():\n    from pkg.b import g  # deferred: still an arrow\n    return g\n")
    (pkg / "b.py").write_text("from . import c\n\ndef g():\n    return c._hidden\n")
    (pkg / "c.py").write_text("import pkg.a as aa\nfrom pkg.sub import _impl\n_hidden = aa\n")
    (pkg / "sub" / "__init__.py").write_text("from ._impl import x\nfrom .. import _impl as up\n")
    (pkg / "sub" / "_impl.py").write_text('"""\n>>> from pkg.b import _y\n"""\nx = 1\n')
    modules = module_files({"pkg": pkg})
    imports = [imp for m in modules for imp in imports_of(m, modules)]
    assert {(i.importer, i.target, i.name) for i in imports} == {
        ("pkg", "pkg._impl", "thing"), ("pkg.a", "pkg.b", "g"), ("pkg.b", "pkg.c", ""),
        ("pkg.b", "pkg.c", "_hidden"), ("pkg.c", "pkg.a", ""), ("pkg.c", "pkg.sub._impl", ""),
        ("pkg.sub", "pkg.sub._impl", "x"), ("pkg.sub", "pkg._impl", ""),
    }
    assert circles(imports) == [["pkg.a", "pkg.b", "pkg.c"]]
    assert describe(["pkg.a", "pkg.b", "pkg.c"], imports)[0] == "pkg.a -> pkg.b: g (line 2)"
    assert private_imports(imports) == ["pkg.b line 4: pkg.c._hidden", "pkg.c line 2: pkg.sub._impl"]
    assert docstring_private_imports(modules["pkg.sub._impl"]) == ["_impl.py:2: >>> from pkg.b import _y"]
    assert owner("pkg.sub._impl", {"pkg": pkg, "pkg.sub": pkg / "sub"}) == "pkg.sub"


def test_the_reader_sees_the_engines_deferred_imports() -> None:
    """The real tree: worker.run_task imports the task server inside the function only, and the
    server's own process imports worker: an arrow each way would be a circle."""
    _, imports = distribution()
    arrows = {(i.importer, i.target) for i in imports}
    assert ("optkit.harness.worker", "optkit.harness.server") in arrows
    assert ("optkit.harness.server_main", "optkit.harness.worker") in arrows
    assert ("optkit.harness.server", "optkit.harness.worker") not in arrows
