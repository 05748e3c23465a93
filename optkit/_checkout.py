"""Import ``optkit.formulations`` from a source checkout.

The repository keeps ``formulations/`` beside ``optkit/`` (the layout the project's docs and
paths name); ``pyproject.toml`` installs that folder as the subpackage ``optkit.formulations``
(``package-dir``), so an installed optkit has ``optkit/formulations/`` and needs nothing here.
When ``optkit`` is imported from a checkout instead (``python -m pytest`` or a benchmark run
from the repository root puts the root first on ``sys.path``), the name
``optkit.formulations`` would not resolve: :func:`install_finder` adds a meta-path finder that
maps exactly that name to the sibling folder. Submodules then resolve through the package's
``__path__`` as usual. The finder is added only when the sibling folder exists and belongs to
this project (a ``pyproject.toml`` beside it), so an unrelated top-level ``formulations``
package installed next to optkit is never picked up.

The finder goes first on :data:`sys.meta_path`. An editable install (``pip install -e``) of
another checkout adds setuptools' own finder, which maps ``optkit.formulations`` to *that*
checkout's folder; behind it, this checkout's ``optkit`` would run with the other checkout's
formulations: tests run in a second git worktree (or in a scratch copy of the repository, as
``tools/mutate.py`` made before it laid its copy out as installed) silently exercised the
formulations of the checkout installed in editable mode.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Sequence

NAME = "optkit.formulations"


class _CheckoutFinder(importlib.abc.MetaPathFinder):
    """Finds ``optkit.formulations`` in ``folder`` (the checkout's ``formulations/``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != NAME:
            return None
        return importlib.util.spec_from_file_location(
            NAME, self.folder / "__init__.py", submodule_search_locations=[str(self.folder)])


def install_finder() -> None:
    """Add the checkout finder to :data:`sys.meta_path` if ``optkit`` runs from a checkout
    whose ``optkit/formulations`` does not exist (idempotent)."""
    here = Path(__file__).resolve().parent
    folder = here.parent / "formulations"
    if (here / "formulations").is_dir() or not (folder / "__init__.py").is_file() \
            or not (here.parent / "pyproject.toml").is_file():
        return
    if any(isinstance(f, _CheckoutFinder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _CheckoutFinder(folder))  # before an editable install's finder (docstring)
