"""Every file the documentation points to is in the repository.

Scanned: the docstrings of every module, class and function of ``optkit/`` and
``formulations/`` (read as text, so nothing is imported), the pages of ``docs/``, and
each problem's ``README.md`` (but for its generated results table, which quotes the claims). A reference is a path whose first part is a top-level name of the
repository (``optkit/...``, ``formulations/...``, ``benchmarks/...``, ``README.md``, ...) or
that leaves it (``../...``, ``shared/...``), and a bare ``NAME.md``; each must exist, from the
repository's root or from the folder of the file that names it (``optkit/formulations/...``, the
installed layout, is ``formulations/...`` here). Placeholders (``<name>``, ``{problem}``, ``*``,
capitalised parts such as ``NAME``) are not paths. The only places outside the repository a
docstring may name are in :data:`OUTSIDE`, each with its reason.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
TOP = ("optkit", "formulations", "benchmarks", "instances", "tests", "docs", "tools", "README.md",
       "pyproject.toml")
OUTSIDE = {
    "shared/data/traces": "the trace folder optkit looks for beside a checkout ($OPTKIT_TRACES "
                          "overrides it); traces are not redistributed, so never in the repository",
    "docs/_build": "Sphinx's output folder (docs/conf.py's build commands)",
}
_PATH = re.compile(r"(?<![\w/.-])(?:\.\./)*[\w.$<>{}*~-]+(?:/[\w.$<>{}*~-]+)+|(?<![\w/.-])[A-Z][A-Z_]*\.md\b")
_DOC_NAMES = ("README", "DESIGN", "NOTES", "LICENSE", "CHANGELOG", "CONTRIBUTING")


def references(text: str) -> Iterator[str]:
    """The repository paths ``text`` names (module docstring: what counts)."""
    for m in _PATH.finditer(text):
        path = m.group(0).rstrip(".-")
        parts = path.split("/")
        first = next((p for p in parts if p != ".."), "")
        if "/" in path and first not in TOP and first != "shared" and not path.startswith("../"):
            continue
        if re.search(r"[$<>{}*~]", path) or any(re.fullmatch(r"[A-Z][A-Z0-9_]+|\w*NN\w*", p.split(".")[0])
                                                and p.split(".")[0] not in _DOC_NAMES for p in parts):
            continue
        yield path


def exists(path: str, where: Path) -> bool:
    """Whether ``path``, named in the file ``where``, is in the repository."""
    if "/" not in path:  # a bare README.md: beside the file, or anywhere in the repository
        return (where.parent / path).exists() or path in _markdown()
    if path.startswith("optkit/formulations/") or path == "optkit/formulations":
        path = "formulations" + path[len("optkit/formulations"):]
    for base in (ROOT, where.parent):
        full = (base / path).resolve()
        if full.is_relative_to(ROOT) and full.exists():
            return True
    return False


_MARKDOWN: set[str] = set()


def _markdown() -> set[str]:
    """The names of the repository's Markdown files."""
    if not _MARKDOWN:
        for folder in (ROOT, *(ROOT / top for top in TOP if (ROOT / top).is_dir())):
            pattern = "*.md" if folder == ROOT else "**/*.md"
            _MARKDOWN.update(p.name for p in folder.glob(pattern))
    return _MARKDOWN


def docstrings(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of each triple-quoted string of a Python file: its docstrings (and any other
    such string, a superset that costs a regular expression instead of parsing every module)."""
    text = path.read_text(encoding="utf-8")
    for m in re.finditer(r'(?s)("""|\'\'\')(.*?)\1', text):
        yield text.count("\n", 0, m.start()) + 1, m.group(2)


def documents() -> Iterator[tuple[Path, int, str]]:
    for folder in ("optkit", "formulations"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for line, doc in docstrings(path):
                yield path, line, doc
    for path in sorted((ROOT / "docs").rglob("*.rst")) + sorted((ROOT / "formulations").glob("*/README.md")):
        # a README's generated results table quotes the claims' own texts (data, not prose)
        text = re.sub(r"<!-- results:begin .*?<!-- results:end [^>]*-->", "", path.read_text(encoding="utf-8"),
                      flags=re.S)
        yield path, 1, text


def dangling() -> list[str]:
    found = []
    for where, line, text in documents():
        for path in references(text):
            if any(path.lstrip("./").startswith(place) for place in OUTSIDE):
                continue
            if not exists(path, where):
                found.append(f"{where.relative_to(ROOT)}:{line + text.count(chr(10), 0, text.find(path))}: {path}")
    return found


def test_every_path_the_docs_name_is_in_the_repository() -> None:
    found = dangling()
    assert not found, "\n".join(found)


def test_what_counts_as_a_path() -> None:
    text = ("see ``formulations/nimp/README.md``, `benchmarks/gone.py`, ../shared/papers/NOTES.md, "
            "DESIGN.md, bytes/s, 1/e, plato.asu.edu/bench.html, instances/<problem>/tiny, "
            "benchmarks/results/NAME.md, sklearn/ensemble/_forest.py, optkit/formulations/nimp/titan.py.")
    assert list(references(text)) == ["formulations/nimp/README.md", "benchmarks/gone.py",
                                      "../shared/papers/NOTES.md", "DESIGN.md", "optkit/formulations/nimp/titan.py"]
    here = ROOT / "optkit" / "online.py"
    assert exists("formulations/nimp/README.md", here) and exists("optkit/formulations/nimp/titan.py", here)
    assert exists("README.md", here)
    assert not exists("benchmarks/gone.py", here) and not exists("../shared/papers/NOTES.md", here)
    assert not exists("DESIGN.md", here)
