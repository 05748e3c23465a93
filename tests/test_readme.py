"""The README's Python examples run and print what the README says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def test_readme_has_the_examples() -> None:
    assert len(BLOCKS) >= 2


def test_readme_examples_run_and_print_what_they_claim() -> None:
    for block in BLOCKS:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README.md", "exec"), {})
        for expected in re.findall(r"^# (\{.*\})$", block, flags=re.M):
            assert expected in out.getvalue()
        # a print whose line ends in "# <output>": that output, as printed
        for expected in re.findall(r"^print\(.*\)\s+# (.+)$", block, flags=re.M):
            assert expected.strip() in out.getvalue().splitlines(), expected


def test_ci_runs_the_readme_test_command() -> None:
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    assert "<!-- test-command -->" in ci
    command = README.split("<!-- test-command -->", 1)[1].split("```")[1].strip()
    assert command.startswith("python3 -m venv .venv") and "pytest" in command
