"""Seeded small rar-ddls instances for the exact-solver and bound tests (dicts in the issue's
instance format).

* :func:`tiny_case` -- :func:`optkit.formulations.rar_ddls.generate.tiny` (2-5 jobs of 1-4 GPUs on 2-3
  servers of 2-4 GPUs, horizon = sum of fastest solo times <= 40) when that generator exists,
  else :func:`contention_case`.
* :func:`contention_case` -- instances built so that split jobs meet: small servers (2-3
  GPUs) and jobs of 2-4 (or ``min_gpus``-4) GPUs, many of which cannot fit on one server, so
  that two of them running at once share a server, with a communication-heavy
  ring (the lone inter-server exchange is 35-60% of the compute time, xi1 = 1, so two split jobs
  on a server slow each other by about 40-70%). Jobs take 2-10 slots alone; the horizon is the
  sum of the fastest solo times (a feasible sequential schedule), at most ``max_horizon``.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from optkit.formulations.rar_ddls.model import RarInstance, fastest_servers, solo_slots

B_INTER, B_INTRA, COMPUTE = 1.25e9, 3.0e11, 5.0e10


def _job(jid: str, gpus: int, iterations: int, tau0: float, comm_share: float, batch: int) -> dict[str, Any]:
    """Contention-free compute time ``tau0`` (s), lone ring exchange ``comm_share·tau0`` (eq. 8)."""
    grad = comm_share * tau0 * B_INTER * gpus / (2.0 * (gpus - 1)) if gpus > 1 else 1.0e7
    return {"id": jid, "gpus": gpus, "iterations": int(iterations), "grad_bytes": float(grad), "batch": batch,
            "fwd_time_per_sample": 0.4 * tau0 / batch, "bwd_time": 0.6 * tau0}


def contention_case(seed: int, *, jobs: int = 3, servers: int = 3, max_horizon: int = 40,
                    min_gpus: int = 2) -> dict[str, Any]:
    """A seeded instance in which split jobs feel contention (module docstring); job sizes are
    drawn from ``min_gpus``..4."""
    rng = np.random.default_rng(70_000 + seed)
    caps = [int(c) for c in rng.integers(2, 4, size=servers)]
    net = {"inter_bandwidth": B_INTER, "intra_bandwidth": B_INTRA, "compute_speed": COMPUTE,
           "xi1": 1.0, "xi2": 0.005, "degradation": 0.2}
    for _ in range(200):
        out = []
        for k in range(jobs):
            gpus = int(rng.integers(min(min_gpus, sum(caps)), min(4, sum(caps)) + 1))
            tau0 = float(rng.uniform(0.1, 0.2))
            out.append(_job(f"j{k}", gpus, int(rng.integers(6, 30)), tau0, float(rng.uniform(0.35, 0.6)),
                            int(rng.choice([16, 32]))))
        d = {"problem": "rar-ddls", "servers": caps, "network": net, "slot_seconds": 1.0,
             "horizon": max_horizon, "jobs": out}
        inst = RarInstance.from_dict(d)
        h = sum(solo_slots(inst, j, fastest_servers(inst.servers, j.gpus, j, inst.network)) for j in inst.jobs)
        if h <= max_horizon:
            d["horizon"] = int(h)
            return d
    raise ValueError(f"no contention case with {jobs} jobs within {max_horizon} slots")


def tiny_case(seed: int, **kw: Any) -> dict[str, Any]:
    """The package generator's tiny instance, or :func:`contention_case` without it."""
    try:
        from optkit.formulations.rar_ddls.generate import tiny
    except ImportError:  # pragma: no cover - the generator ships with the package
        return contention_case(seed, **kw)
    return tiny(seed, **kw)


def pair_case(degradation: float = 0.2) -> dict[str, Any]:
    """Two 4-GPU jobs on three 3-GPU servers: each must split, and running both at once puts
    both on a shared server (8 of 9 GPUs, pigeonhole), so p = 2 (eq. 6). Alone each makes 4
    iterations per slot (8 slots for 30 iterations). With ``degradation`` 0.2 contention costs
    4 -> 3 iterations per slot, so overlapping (10 slots) beats running them in turn (16); with
    3.0, f(2) = 5 and contention costs 4 -> 1, so running them in turn is optimal."""
    net = {"inter_bandwidth": B_INTER, "intra_bandwidth": B_INTRA, "compute_speed": COMPUTE,
           "xi1": 1.0, "xi2": 0.005, "degradation": degradation}
    return {"problem": "rar-ddls", "servers": [3, 3, 3], "network": net, "slot_seconds": 1.0, "horizon": 20,
            "jobs": [_job("a", 4, 30, 0.15, 0.5, 16), _job("b", 4, 30, 0.15, 0.5, 16)]}


def exact_cases() -> list[tuple[str, dict[str, Any]]]:
    """32 seeded instances for CP-SAT = MILP: 24 generator tiny ones (2-5 jobs, 2-3 servers)
    and 8 contention cases (3 jobs of 2-4 GPUs on 3 servers of 2-3 GPUs)."""
    return ([(f"tiny-{s:02d}", tiny_case(s)) for s in range(24)]
            + [(f"contention-{s}", contention_case(s, jobs=3, servers=3)) for s in range(8)])


def brute_cases() -> list[tuple[str, dict[str, Any]]]:
    """12 instances small enough for brute force: the 2-job generator tiny ones, 2-job
    contention cases on 3 servers, and both pair cases."""
    return ([(f"tiny-{s:02d}", tiny_case(s)) for s in (0, 4, 8, 12, 16, 20)]
            + [(f"contention2-{s}", contention_case(s, jobs=2, servers=3)) for s in range(4)]
            + [("pair-overlap", pair_case(0.2)), ("pair-in-turn", pair_case(3.0))])


_OPT: dict[str, Any] = {}
_SHARED: list[Path] = []


def share_cpsat_results(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Let :func:`cpsat_result` keep its results in a folder every pytest-xdist worker of this run
    reads (the parent of the workers' temporary folders; the run's own folder without xdist):
    the three test modules that need the same 32 optima (exact, bounds, bound checks) often run
    on different workers, and each solved them all (about 7 CPU seconds) before. Called by an
    autouse module fixture of each; pytest removes the folder with its old runs."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "rar-ddls-cpsat-results"
    folder.mkdir(exist_ok=True)
    _SHARED[:] = [folder]


def cpsat_result(name: str, data: dict[str, Any]) -> Any:
    """CP-SAT's result on a named case (one worker, seed 0, the model always solved: no
    incumbent-meets-bound shortcut, no time limit: no clock decides whether it is proven),
    computed once per test process, or once per run where :func:`share_cpsat_results` named a
    shared folder (a file per case and instance, written whole by a rename; a worker that finds
    none solves the case itself, so two workers may both solve one: the same deterministic run)."""
    if name not in _OPT:
        path = None
        if _SHARED:
            digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
            path = _SHARED[0] / f"{name}-{digest}.pickle"
            if path.is_file():
                _OPT[name] = pickle.loads(path.read_bytes())
                return _OPT[name]
        from optkit.formulations.rar_ddls.exact import run_cpsat

        _OPT[name] = run_cpsat(RarInstance.from_dict(data), workers=1, seed=0, time_limit=None, shortcut=False)
        if path is not None:
            part = path.with_name(f"{path.name}.{os.getpid()}")
            part.write_bytes(pickle.dumps(_OPT[name]))
            os.replace(part, path)
    return _OPT[name]
