"""The comparison harness: tasks, worker processes with hard time limits, the SQLite result
store, local and Dask executors, and sweeps with gaps against the best proven bound.

Typical use::

    from optkit.harness import compare, LocalExecutor
    report = compare("gpu-mapping", [("a", instance_dict)], algorithms="all",
                     time_limit=10, db="results.sqlite", executor=LocalExecutor(jobs=4))
    print(report.summary)

Reports (tables and plots) live in :mod:`optkit.report`; the command line in
:mod:`optkit.harness.cli_commands`.
"""

import importlib
from typing import Any

_EXPORTS = {
    "BoundConflict": "gaps", "annotate_gaps": "gaps", "best_bounds": "gaps",
    "compare": "compare", "plan": "compare", "validate_instances": "compare",
    "DaskExecutor": "executors", "Executor": "executors", "LocalExecutor": "executors", "make_executor": "executors",
    "ResultStore": "store",
    "Task": "tasks", "build_tasks": "tasks", "task_key": "tasks",
    "execute_task": "worker", "hard_limit": "worker", "run_task": "worker",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Load the exported names on first use, so that importing one submodule (the report
    imports ``optkit.harness.gaps``) does not import the sweep machinery."""
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"optkit.harness.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'optkit.harness' has no attribute {name!r}")
