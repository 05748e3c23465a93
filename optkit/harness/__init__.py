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

from optkit.harness.compare import compare, plan, validate_instances
from optkit.harness.gaps import BoundConflict, annotate_gaps, best_bounds
from optkit.harness.executors import DaskExecutor, Executor, LocalExecutor, make_executor
from optkit.harness.store import ResultStore
from optkit.harness.tasks import Task, build_tasks, task_key
from optkit.harness.processes import hard_limit
from optkit.harness.worker import execute_task, run_task

__all__ = [
    "BoundConflict", "DaskExecutor", "Executor", "LocalExecutor", "ResultStore", "Task",
    "annotate_gaps", "best_bounds", "build_tasks", "compare", "execute_task",
    "hard_limit", "make_executor", "plan", "run_task", "task_key", "validate_instances",
]
