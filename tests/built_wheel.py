"""The checkout's wheel, built as ``pip install .`` builds it, for the tests that read or install it.

``pip wheel`` of a source folder builds in place: setuptools writes ``build/`` and
``optkit.egg-info/`` into that folder and packs what ``build/lib`` then holds. Built from the
checkout itself, two builds at once (``tests/test_packaging.py`` and ``tests/test_typing.py`` on
two pytest-xdist workers) write the same ``build/`` folder, and a module deleted from the checkout
but left in an old ``build/lib`` would still be packed. So each build copies what the build reads
(``pyproject.toml``, ``README.md``, ``optkit/``, ``formulations/``; no ``__pycache__``) into its own
scratch folder and builds there, without build isolation (setuptools and wheel come from the test
extra: nothing is fetched). :func:`shared_wheel` builds it once per test run, the pytest-xdist
workers sharing it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


def shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder every pytest-xdist worker of this run sees (the parent of the workers' temporary
    folders; the run's own temporary folder without xdist). pytest removes it with its old runs."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's wheel (:func:`build_wheel`), built once per test run: the first worker to
    ask builds it under a lock, the others wait for it and read the same file
    (``tests/test_packaging.py`` and ``tests/test_typing.py`` each built one)."""
    shared = shared_folder(tmp_path_factory)
    work = shared / "optkit-wheel"
    with open(shared / "optkit-wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = work / "built"
        if not done.is_file():
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            whl = build_wheel(work)
            done.write_text(str(whl))
        return Path(done.read_text())
