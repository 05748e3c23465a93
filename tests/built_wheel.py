"""The checkout's wheel, built as ``pip install .`` builds it, for the tests that read or install it.

``pip wheel`` of a source folder builds in place: setuptools writes ``build/`` and
``optkit.egg-info/`` into that folder and packs what ``build/lib`` then holds. Built from the
checkout itself, two builds at once (``tests/test_packaging.py`` and ``tests/test_typing.py`` on
two pytest-xdist workers) write the same ``build/`` folder, and a module deleted from the checkout
but left in an old ``build/lib`` would still be packed. So each build copies what the build reads
(``pyproject.toml``, ``README.md``, ``optkit/``, ``formulations/``; no ``__pycache__``) into its own
scratch folder and builds there, without build isolation (setuptools and wheel come from the test
extra: nothing is fetched).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "optkit", "formulations")
"""What setuptools reads to build the wheel (``pyproject.toml``'s packages, package data, readme)."""


def copy_sources(dest: Path) -> Path:
    """Copy what a build reads (:data:`SOURCES`, no ``__pycache__``) into ``dest``; ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, dest / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, dest / name)
    return dest


def build_wheel(scratch: Path) -> Path:
    """Build the checkout's wheel from a copy in ``scratch`` (an empty folder); its path."""
    src = copy_sources(scratch / "src")
    out = scratch / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(out), str(src)], check=True, cwd=scratch, timeout=240)
    (whl,) = out.glob("optkit-*.whl")
    return whl
