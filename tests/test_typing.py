"""A user's script type-checks with ``mypy --strict`` against the installed wheel.

``tests/user_scripts/user_scheduler.py`` imports and calls every public algorithm of the four
problems (Heavy-Edge, the exact solvers, A-SRPT and the ddlwmp baselines, SJF-BCO and its
baselines, Titan and its baselines, the gpu-mapping partitioners and local search) the way a
scheduler would. The wheel is built from the checkout (``pip wheel --no-deps
--no-build-isolation`` of a scratch copy, :mod:`tests.built_wheel`), installed with ``pip install
--no-deps --target`` into a scratch folder, and mypy runs from a folder outside the checkout with that folder on ``PYTHONPATH`` and the test
environment's interpreter (``--python-executable``, for numpy, networkx and their stubs), so it
reads optkit exactly as a user's installed copy: through ``py.typed``, with the errors inside the
library silenced and every public signature the script touches checked. The script then runs,
so it cannot type-check by calling things that do not exist.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.built_wheel import build_wheel
from tests.needs import needs_modules

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tests" / "user_scripts" / "user_scheduler.py"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of the checkout, installed alone into a scratch folder (its ``site``)."""
    whl = build_wheel(tmp_path_factory.mktemp("wheel"))
    site = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(whl)],
                   check=True, cwd=site, timeout=240)
    return site


def _user_env(site: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    env["PYTHONPATH"] = str(site)
    return env


def test_user_script_passes_mypy_strict_against_the_installed_wheel(installed: Path,
                                                                    tmp_path: Path) -> None:
    needs_modules("mypy", "networkx-stubs")
    user = tmp_path / "user"
    user.mkdir()
    shutil.copy(SCRIPT, user / SCRIPT.name)
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--verbose",
                          "--cache-dir", os.devnull, "--python-executable", sys.executable, SCRIPT.name],
                         cwd=user, env=_user_env(installed), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout
    assert "Success: no issues found in 1 source file" in out.stdout
    # mypy read the installed copy (through its py.typed), not the checkout or another install.
    assert f"Parsing {installed / 'optkit' / '__init__.py'} (optkit)" in out.stderr
    assert f"Parsing {installed / 'optkit' / 'formulations' / 'nimp' / 'titan.py'}" in out.stderr


def test_user_script_runs_against_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    needs_modules("pymetis", "kahip")
    shutil.copy(SCRIPT, tmp_path / SCRIPT.name)
    out = subprocess.run([sys.executable, SCRIPT.name, str(ROOT / "instances")], cwd=tmp_path,
                         env=_user_env(installed), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.rstrip().endswith("ok")
    assert "nimp [[0, 1], [0, 1], [0, 1], [0, 1]]" in out.stdout
