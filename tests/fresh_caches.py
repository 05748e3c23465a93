"""Module-level caches of the formulations, emptied before each test when mutation testing runs.

mutmut forks each mutant's test process from its own process after its clean pass
(``benchmarks/mutation.py``'s docstring): a cache that pass filled would answer a mutated
function's caller with the unmutated result, and hide the mutant. ``tools/mutate.py`` sets
:data:`ENV` in mutmut's environment; ``tests/conftest.py`` then calls :func:`empty_module_caches`
before every test, so each test computes what it asks as it would in a fresh process. Ordinary runs
leave the caches alone (they are there for speed, and their answers are the same).

Two kinds are emptied: every ``functools.lru_cache`` found at module level in a loaded module of
``optkit.formulations`` (found, so a new one is covered without a list), and the dictionaries named
in :data:`CACHE_DICTS` (a dictionary cannot be told from a constant table by its type, so these are
named: a new one belongs here).
"""

from __future__ import annotations

import functools
import sys

ENV = "OPTKIT_FRESH_CACHES"
"""Set (to any non-empty value) by ``tools/mutate.py`` in mutmut's environment."""

CACHE_DICTS: dict[str, tuple[str, ...]] = {
    "optkit.formulations.nimp.titan": ("_COLLECTIVES", "_COLLECTIVES_BY_PHASES"),
    "optkit.formulations.nimp.online": ("_PHASES",),
    "optkit.formulations.nimp.network": ("_PATTERNS",),
    "optkit.formulations.nimp.claims": ("_CACHE", "_WORKLOADS"),
    "optkit.formulations.ddlwmp.online": ("_DURATION_MODELS",),
    "optkit.formulations.rar_ddls.plan": ("_RATE_CACHES",),
}
"""Module -> its module-level dictionaries that cache computed answers."""


def empty_module_caches() -> int:
    """Empty the caches of every loaded formulation module; the number of caches emptied."""
    n = 0
    for name, mod in list(sys.modules.items()):
        if not name.startswith("optkit.formulations.") or mod is None:
            continue
        for value in list(vars(mod).values()):
            if isinstance(value, functools._lru_cache_wrapper) and value.__module__ == name:
                value.cache_clear()
                n += 1
        for attr in CACHE_DICTS.get(name, ()):
            getattr(mod, attr).clear()
            n += 1
    return n
