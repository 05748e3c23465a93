"""Checks anyone can run on an algorithm: the project's battery, strategies and ratio checks.

* :func:`check_algorithm` runs the battery's checks (``tests/test_battery.py`` is built on it)
  on any algorithm of an existing problem, registered or not, and names each check that fails
  (scikit-learn's ``check_estimator`` is the model).
* :func:`assert_within` solves an instance exactly (:mod:`optkit.testing.oracle`), runs an
  algorithm on it, and asserts its ratio to the optimum: the paper's proven guarantee
  (:mod:`optkit.testing.guarantees`) or a ratio the caller states.
* :mod:`optkit.testing.hash_seeds` runs an algorithm in fresh worker processes under chosen
  ``PYTHONHASHSEED`` values (``check_algorithm``'s check ``hash_seed_independent``).
* :mod:`optkit.testing.strategies` draws valid instances of each problem for Hypothesis
  (``pip install 'optkit[testing]'``); only that module imports Hypothesis.

Example (a property test of a user's own)::

    from hypothesis import given, settings
    from optkit.testing import assert_within, strategies

    @settings(max_examples=25, deadline=None)
    @given(strategies.instances("nimp", max_workers=6, max_machines=5))
    def test_titan_keeps_its_guarantee(instance):
        assert_within("nimp", "titan", instance)
"""

from __future__ import annotations

from ._checks import (CHECKS, DEFAULT_HASH_SEEDS, DEFAULT_SEEDS, AlgorithmCheckError, CheckReport, CheckResult,
                      RunCache, check_algorithm, default_cases, default_instances)
from ._within import Within, assert_within
from .guarantees import Guarantee, all_guarantees, guarantee_for
from .oracle import Optimum, optimum

__all__ = [
    "CHECKS", "DEFAULT_HASH_SEEDS", "DEFAULT_SEEDS", "AlgorithmCheckError", "CheckReport", "CheckResult", "Guarantee",
    "Optimum", "RunCache", "Within", "all_guarantees", "assert_within", "check_algorithm", "default_cases",
    "default_instances", "guarantee_for", "optimum",
]
