"""Every public algorithm and policy documents its paper, its guarantee, its units and an example.

A public algorithm is (1) every name in ``PUBLIC`` below: each problem's paper algorithm, its
exact solvers' entries, its baselines and local search; and (2) every function, and every class
with a ``decide`` method (an online policy), that a problem's ``__init__`` re-exports in
``__all__`` from one of its algorithm modules (any module but the model, readings, claims,
generators, bounds, workloads and simulators), so a newly re-exported algorithm is checked
without a line here.

Its numpydoc docstring must have a ``References`` section (paper, section, equation or algorithm
line), a ``Notes`` section with a line ``Guarantee: ...`` (``Guarantee: none proven`` where the
paper proves none) and a line ``Units: ...``, and an ``Examples`` section with a ``>>>`` example.
``tests/test_docs.py`` runs the examples. A failure names the algorithm and the missing parts.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import pytest

PROBLEMS = ("gpu_mapping", "ddlwmp", "rar_ddls", "nimp")
EXACT = ("run_cpsat", "run_highs", "run_brute_force", "brute_force")
PUBLIC: dict[str, dict[str, tuple[str, ...]]] = {
    "gpu_mapping": {"heavy_edge": ("heavy_edge", "heavy_edge_job"), "exact": EXACT,
                    "baselines": ("metis_mapping", "kahip_mapping", "random_mapping"),
                    "refine": ("heavy_edge_refine", "refine_mapping"), "stage_dp": ("stage_dfs_alpha",)},
    "ddlwmp": {"a_srpt": ("ASRPT",), "exact": EXACT,
               "baselines": ("SPJF", "SPWF", "WCSDuration", "WCSWorkload", "WCSSubTime", "FIFO")},
    "rar_ddls": {"sjf_bco": ("sjf_bco",), "exact": EXACT, "baselines": ("ff", "ls", "rand")},
    "nimp": {"titan": ("titan",), "exact": EXACT, "baselines": ("elasticflow", "hived", "tiresias")},
}
# Modules that hold no algorithm: a re-export from them is not checked here.
NOT_ALGORITHMS = {"model", "readings", "claims", "generate", "bounds", "profiles", "workloads", "sec5",
                  "simulate", "replay", "policies"}


def _is_algorithm(obj: Any) -> bool:
    if inspect.isclass(obj):
        return callable(getattr(obj, "decide", None))
    return inspect.isfunction(obj)


def public_algorithms() -> dict[str, Any]:
    """``{"problem.module.name": object}`` of every public algorithm and policy."""
    found: dict[str, Any] = {}
    for problem in PROBLEMS:
        base = f"optkit.formulations.{problem}"
        for module, names in PUBLIC[problem].items():
            mod = importlib.import_module(f"{base}.{module}")
            for name in names:
                found[f"{problem}.{module}.{name}"] = getattr(mod, name)
        package = importlib.import_module(base)
        for name in getattr(package, "__all__", ()):
            obj = getattr(package, name)
            home = getattr(obj, "__module__", "") or ""
            if not home.startswith(base + ".") or home.rsplit(".", 1)[1] in NOT_ALGORITHMS:
                continue
            if _is_algorithm(obj):
                found.setdefault(f"{problem}.{home.rsplit('.', 1)[1]}.{obj.__name__}", obj)
    return found


def _section(doc: str, title: str) -> str | None:
    """The body of numpydoc section ``title`` (up to the next section header), or None."""
    m = re.search(rf"^{title}\n-{{{len(title)}}}-*\n(.*?)(?=^\w[\w ]*\n-{{3,}}\n|\Z)", doc, flags=re.M | re.S)
    return m.group(1) if m else None


def missing_parts(obj: Any) -> list[str]:
    """What the docstring of ``obj`` lacks, in words (empty when complete)."""
    doc = inspect.getdoc(obj) or ""
    missing = []
    refs = _section(doc, "References")
    if not refs or not refs.strip():
        missing.append("a References section")
    notes = _section(doc, "Notes") or ""
    if not re.search(r"^Guarantee: \S", notes, flags=re.M):
        missing.append("a 'Guarantee: ...' line in Notes")
    if not re.search(r"^Units: \S", notes, flags=re.M):
        missing.append("a 'Units: ...' line in Notes")
    examples = _section(doc, "Examples")
    if not examples or ">>>" not in examples:
        missing.append("an Examples section with a >>> example")
    return missing


ALGORITHMS = public_algorithms()


def test_the_list_covers_every_problem_and_kind() -> None:
    for name in ("gpu_mapping.heavy_edge.heavy_edge", "ddlwmp.a_srpt.ASRPT", "rar_ddls.sjf_bco.sjf_bco",
                 "nimp.titan.titan", "nimp.exact.run_cpsat", "ddlwmp.baselines.FIFO"):
        assert name in ALGORITHMS
    assert len(ALGORITHMS) >= 40


def test_the_checker_names_what_is_missing() -> None:
    def bare() -> None:
        """Only a summary.

        Notes
        -----
        Units: seconds.
        """

    assert missing_parts(bare) == ["a References section", "a 'Guarantee: ...' line in Notes",
                                   "an Examples section with a >>> example"]


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_public_algorithm_docstring_has_reference_guarantee_units_example(name: str) -> None:
    missing = missing_parts(ALGORITHMS[name])
    assert not missing, f"{name}: its docstring lacks {', '.join(missing)}"

