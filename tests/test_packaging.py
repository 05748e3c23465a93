"""The distribution's layout: one top-level name, ``formulations/`` installed as
``optkit.formulations``, ``py.typed`` covering both, every module of the checkout in the wheel.

Built once per module (:func:`tests.built_wheel.build_wheel`: ``pip wheel --no-deps
--no-build-isolation`` of a scratch copy, nothing fetched); the wheel's file list is compared with
the checkout's."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.built_wheel import build_wheel

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    whl = build_wheel(tmp_path_factory.mktemp("wheel"))
    with zipfile.ZipFile(whl) as z:
        return set(z.namelist())


def test_wheel_has_one_top_level_name(wheel_names: set[str]) -> None:
    tops = {n.split("/")[0] for n in wheel_names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"optkit"}


def test_every_module_of_the_checkout_is_in_the_wheel(wheel_names: set[str]) -> None:
    """Every file of the checkout's two package folders, modules and package data alike (the
    READMEs, ``py.typed``, gpu-mapping's tree tables ``tree_table_k*.json``), is in the wheel."""
    def files(folder: Path) -> list[Path]:
        return [p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts]

    want = {f"optkit/{p.relative_to(ROOT / 'optkit').as_posix()}" for p in files(ROOT / "optkit")}
    want |= {f"optkit/formulations/{p.relative_to(ROOT / 'formulations').as_posix()}"
             for p in files(ROOT / "formulations")}
    assert want - wheel_names == set()
    assert {"optkit/py.typed", "optkit/formulations/py.typed", "optkit/formulations/gpu_mapping/README.md",
            "optkit/formulations/gpu_mapping/tree_table_k16.json",
            "optkit/formulations/gpu_mapping/tree_table_k32.json"} <= wheel_names


def test_entry_points_name_the_installed_packages(wheel_names: set[str], tmp_path: Path) -> None:
    text = (ROOT / "pyproject.toml").read_text()
    for problem in ("gpu_mapping", "ddlwmp", "rar_ddls", "nimp"):
        assert f'"optkit.formulations.{problem}:FORMULATION"' in text
        assert f"optkit/formulations/{problem}/__init__.py" in wheel_names


def test_a_checkout_imports_its_own_formulations_before_an_editable_installs(tmp_path: Path) -> None:
    """optkit imported from this checkout takes ``optkit.formulations`` from this checkout's
    ``formulations/``, even when another finder on the meta path maps that name elsewhere, as
    setuptools' finder of an editable install of another checkout does (here a stand-in mapping
    it to a folder whose package would say so). With the checkout's finder behind it, mutation
    testing in a scratch copy ran every test on the unmutated code (optkit/_checkout.py)."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "__init__.py").write_text("OTHER = True\n")
    script = f"""
import importlib.abc, importlib.util, sys
class Editable(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "optkit.formulations":
            return None
        return importlib.util.spec_from_file_location(fullname, {str(other / '__init__.py')!r},
                                                      submodule_search_locations=[{str(other)!r}])
sys.meta_path.insert(0, Editable())  # ahead of every finder optkit finds on import
sys.path.insert(0, {str(ROOT)!r})
import optkit.formulations as f
import optkit.formulations.nimp.bounds as b
print(f.__file__)
print(b.__file__)
print(hasattr(f, "OTHER"))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path,
                         timeout=120).stdout.split()
    assert out == [str(ROOT / "formulations" / "__init__.py"), str(ROOT / "formulations" / "nimp" / "bounds.py"),
                   "False"]
