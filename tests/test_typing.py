"""A user's script and every example of the docs type-check with ``mypy --strict`` against the
installed wheel; an editable install in the README's mode is visible to mypy.

``tests/user_scripts/user_scheduler.py`` imports and calls every public algorithm of the four
problems (Heavy-Edge, the exact solvers, A-SRPT and the ddlwmp baselines, SJF-BCO and its
baselines, Titan and its baselines, the gpu-mapping partitioners and local search) the way a
scheduler would, with its node ids in variables typed ``dict[str, int]``. Beside it, the code of
every page of ``docs/`` (the ``testcode``, ``testsetup`` and ``doctest`` blocks of a page, in
order, one module per page: the namespace Sphinx's doctest builder runs them in) is checked in
the same mypy run. The wheel is built from the checkout (``pip wheel --no-deps
--no-build-isolation`` of a scratch copy, :mod:`tests.built_wheel`), installed with ``pip install --no-deps --target`` into a scratch folder,
and mypy runs from a folder outside the checkout with that folder on ``PYTHONPATH`` and the test
environment's interpreter (``--python-executable``, for numpy, networkx and their stubs), so it
reads optkit exactly as a user's installed copy: through ``py.typed``, with the errors inside the
library silenced and every public signature the code touches checked. The script then runs, so
it cannot type-check by calling things that do not exist (the pages' code runs in
``tests/test_docs.py``).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.built_wheel import build_wheel, copy_sources
from tests.needs import needs_modules

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tests" / "user_scripts" / "user_scheduler.py"
DOCS = ROOT / "docs"
# what the README tells a user who installs editable and type-checks against optkit
EDITABLE_MODE = "editable_mode=strict"

_DIRECTIVE = re.compile(r"^(\s*)\.\. (testsetup|testcode|doctest)::")


def page_code(text: str) -> str:
    """The Python code of a page: its ``testsetup``, ``testcode`` and ``doctest`` blocks in
    order (options such as ``:hide:`` dropped; of a ``doctest`` block, the ``>>>`` and ``...``
    lines), dedented, joined by blank lines; ``""`` when it has none."""
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        m = _DIRECTIVE.match(lines[i])
        i += 1
        if not m:
            continue
        indent, body = len(m.group(1)), []
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
            body.append(lines[i])
            i += 1
        while body and re.match(r"\s*:[\w-]+:", body[0]):
            body.pop(0)
        code = [ln for ln in body if ln.strip()]
        if not code:
            continue
        cut = min(len(ln) - len(ln.lstrip()) for ln in code)
        body = [ln[cut:] for ln in body]
        if m.group(2) == "doctest":
            body = [ln[4:] for ln in body if ln[:4] in (">>> ", "... ") or ln in (">>>", "...")]
        blocks.append("\n".join(body).strip("\n"))
    return "\n\n\n".join(blocks) + "\n" if blocks else ""


def _page_module(page: Path) -> str:
    return "docs_" + re.sub(r"\W", "_", str(page.relative_to(DOCS).with_suffix(""))) + ".py"


PAGES = {_page_module(p): p for p in sorted(DOCS.rglob("*.rst")) if page_code(p.read_text(encoding="utf-8"))}


def test_page_code_takes_every_example_block_in_order() -> None:
    text = ("Title\n\n.. testsetup::\n\n   x = 1\n\n.. testcode::\n   :hide:\n\n   def f(a: int) -> int:\n\n"
            "       return a\n\n.. testoutput::\n\n   1\n\n.. doctest::\n\n   >>> f(x)\n   1\n   >>> if x:\n"
            "   ...     y = 2\n\n.. code-block:: toml\n\n   a = 1\n")
    assert page_code(text) == ("x = 1\n\n\ndef f(a: int) -> int:\n\n    return a\n\n\nf(x)\nif x:\n"
                               "    y = 2\n")
    assert page_code("No code here.\n\n.. testoutput::\n\n   1\n") == ""
    # every how-to with code is among the pages checked, and the front page
    howtos = {p for p in (DOCS / "howto").glob("*.rst") if ".. testcode::" in p.read_text(encoding="utf-8")}
    assert len(howtos) >= 6 and howtos <= set(PAGES.values())
    assert DOCS / "index.rst" in PAGES.values()


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of the checkout, installed alone into a scratch folder (its ``site``): built
    once per run, the test workers of pytest-xdist sharing it (their temporary folders have one
    parent; a lock makes the first build it and the others wait)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    site = shared / "optkit-installed"
    with open(shared / "optkit-installed.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (site / "optkit" / "py.typed").is_file():
            work = shared / "optkit-build"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            whl = build_wheel(work)
            subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
                            str(whl)], check=True, cwd=work, timeout=240)
    return site


def _user_env(site: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    env["PYTHONPATH"] = str(site)
    return env


@pytest.fixture(scope="module")
def strict_run(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """One ``mypy --strict`` run over the user's script and every page's code, from a folder
    outside the checkout. A page importing the test suite's plug-in package
    (``tests/plugins/package.py``) finds a copy of it there."""
    needs_modules("mypy", "networkx-stubs")
    user = tmp_path_factory.mktemp("user")
    shutil.copy(SCRIPT, user / SCRIPT.name)
    for name, page in PAGES.items():
        (user / name).write_text(page_code(page.read_text(encoding="utf-8")), encoding="utf-8")
    (user / "tests" / "plugins").mkdir(parents=True)
    for part in ("__init__.py", "plugins/__init__.py", "plugins/package.py"):
        shutil.copy(ROOT / "tests" / part, user / "tests" / part)
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--verbose",
                           "--cache-dir", os.devnull, "--python-executable", sys.executable, SCRIPT.name, *PAGES],
                          cwd=user, env=_user_env(installed), capture_output=True, text=True, timeout=600)


def test_user_script_passes_mypy_strict_against_the_installed_wheel(
        installed: Path, strict_run: subprocess.CompletedProcess[str]) -> None:
    assert strict_run.returncode == 0, strict_run.stdout
    assert f"Success: no issues found in {1 + len(PAGES)} source files" in strict_run.stdout
    # mypy read the installed copy (through its py.typed), not the checkout or another install.
    assert f"Parsing {installed / 'optkit' / '__init__.py'} (optkit)" in strict_run.stderr
    assert f"Parsing {installed / 'optkit' / 'formulations' / 'nimp' / 'titan.py'}" in strict_run.stderr


def test_every_docs_example_passes_mypy_strict(strict_run: subprocess.CompletedProcess[str]) -> None:
    for name in PAGES:
        assert f"Parsing {name} (" in strict_run.stderr, name
    assert strict_run.returncode == 0, strict_run.stdout


def test_user_script_runs_against_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    needs_modules("pymetis", "kahip")
    shutil.copy(SCRIPT, tmp_path / SCRIPT.name)
    out = subprocess.run([sys.executable, SCRIPT.name, str(ROOT / "instances")], cwd=tmp_path,
                         env=_user_env(installed), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.rstrip().endswith("ok")
    assert "nimp [[0, 1], [0, 1], [0, 1], [0, 1]]" in out.stdout


def test_editable_install_in_the_readmes_mode_is_visible_to_mypy(tmp_path: Path) -> None:
    """setuptools' default editable install maps ``optkit.formulations`` (``package-dir``) with an
    import hook in its ``.pth``, which mypy never runs: mypy reads only the folders a ``.pth``
    names. ``editable_mode=strict`` (the README's command) lays out a tree of links instead, which
    mypy finds. The install goes into a scratch venv from a copy of the sources (strict mode
    writes its tree into ``build/`` of the source folder); setuptools comes from this
    environment, through a folder of links that holds nothing else (no other optkit)."""
    needs_modules("mypy")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"pip install -e . --config-settings {EDITABLE_MODE}" in readme
    src = copy_sources(tmp_path / "src")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    tools = tmp_path / "build-tools"
    tools.mkdir()
    here = Path(sysconfig.get_paths()["purelib"])
    for entry in here.iterdir():  # the packages and their .dist-info (setuptools' commands are entry points)
        if re.match(r"(setuptools|pkg_resources|_distutils_hack|wheel)\b", entry.name):
            (tools / entry.name).symlink_to(entry)
    (purelib / "build-tools.pth").write_text(f"{tools}\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                    "--no-build-isolation", "-e", str(src), "--config-settings", EDITABLE_MODE],
                   check=True, cwd=tmp_path, timeout=240)
    user = tmp_path / "user"
    user.mkdir()
    (user / "uses.py").write_text("import optkit.online\nimport optkit.formulations.gpu_mapping\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    # --follow-imports=skip: mypy must find each module (else "Cannot find implementation"), but
    # need not analyse it and numpy's stubs behind it (a third of the time)
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
                          "--follow-imports=skip", "--python-executable", str(python), "uses.py"],
                         cwd=user, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout
    assert "Success: no issues found in 1 source file" in out.stdout
