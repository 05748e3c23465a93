"""optkit: exact and approximate solvers for GPU-cluster scheduling problems.

The engine: results, errors, instance files, the formulation registry, solver adapters, the
comparison harness, reports and the command line. It knows no paper; the problems live in the
``optkit.formulations`` package and register themselves through entry points.

In the repository that package is the folder ``formulations/`` beside ``optkit/``; an install
(``pip install .``) puts it at ``optkit/formulations``. :mod:`optkit._checkout` lets a source
checkout import it under the same name without installing.
"""

from optkit import _checkout

_checkout.install_finder()

from optkit.errors import InputError, OptkitError
from optkit.formulation import Algorithm, Evaluation, Formulation, Suite
from optkit.instances import instance_hash, load_instance, save_instance
from optkit.registry import all_formulations, get as get_formulation, register
from optkit.result import Result, Status, relative_gap
from optkit.solve import solve

__version__ = "0.1.0"

__all__ = [
    "Algorithm", "Evaluation", "Formulation", "InputError", "OptkitError", "Result", "Status",
    "Suite", "all_formulations", "get_formulation", "instance_hash", "load_instance",
    "register", "relative_gap", "save_instance", "solve", "__version__",
]
