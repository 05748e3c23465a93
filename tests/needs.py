"""What a test needs from outside the repository, and what happens when it is missing.

Locally a missing trace folder or optional package is a skip whose reason says what is missing
(``pytest -rs`` prints it). In CI (``CI=true``, as GitHub Actions and most runners set it) or with
``OPTKIT_REQUIRE_DATA=1`` it is a failure with the same message, so CI never goes green by
skipping the tests on real traces or on the peer partitioners.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from optkit.traces import TRACES_ENV


def strict() -> bool:
    """Whether missing data or packages fail (CI, ``OPTKIT_REQUIRE_DATA=1``) instead of skip."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1") or os.environ.get("OPTKIT_REQUIRE_DATA") == "1"


def missing(reason: str) -> None:
    """Skip with ``reason``, or fail with it when :func:`strict`."""
    __tracebackhide__ = True  # report the test's line, not this one
    if strict():
        pytest.fail(f"{reason} (CI=true / OPTKIT_REQUIRE_DATA=1: required here)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def needs_trace(found: object, what: str) -> None:
    """``found`` (a path, a non-empty list) or :func:`missing` naming the trace ``what``."""
    __tracebackhide__ = True  # report the test's line, not this one
    if not found:
        missing(f"real trace {what} is absent: put the traces in ../shared/data/traces beside the "
                f"repository or name their folder in ${TRACES_ENV}")


def needs_modules(*modules: str, extra: str = "test") -> None:
    """Every module importable, or :func:`missing` naming the absent ones and the extra to install."""
    __tracebackhide__ = True  # report the test's line, not this one
    absent = [m for m in modules if importlib.util.find_spec(m) is None]
    if absent:
        missing(f"optional package(s) {', '.join(absent)} not installed: pip install '.[{extra}]'")

