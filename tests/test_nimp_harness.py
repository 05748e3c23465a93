"""A nimp comparison sweep through the harness: list objectives are stored as lists and gaps are
measured on the scalar key ``objective_key.<objective>`` (idle·(M+1) + used)."""

from __future__ import annotations

from pathlib import Path

from optkit.formulations.nimp import FORMULATION
from optkit.harness.compare import compare
from optkit.harness.executors import LocalExecutor


def test_compare_sweep_with_list_objectives(tmp_path: Path) -> None:
    instances = [(n, d) for n, d in FORMULATION.suites["tiny"].build() if n in ("tiny-01", "tiny-02", "tiny-04")]
    rep = compare("nimp", instances, algorithms=["cpsat", "titan", "elasticflow"], time_limit=30,
                  db=tmp_path / "r.sqlite", executor=LocalExecutor(1), progress=False,
                  params={"cpsat": {"workers": 1}})
    rows = {(r["instance_name"], r["algorithm"]): r for r in rep.rows}
    opt = rows["tiny-01", "cpsat"]
    assert opt["status"] == "optimal" and opt["objective"] == [0, 2] and opt["gap"] == 0.0
    ef = rows["tiny-01", "elasticflow"]
    assert ef["objective"] == [2, 2]
    m = 6  # machines of tiny-01: key = idle*(M+1) + used
    assert ef["gap"] == (2 * (m + 1) + 2 - 2) / (2 * (m + 1) + 2)
    assert rows["tiny-04", "cpsat"]["status"] == "infeasible" and rows["tiny-04", "cpsat"]["gap"] is None
    assert not rep.conflicts
    assert {s["algorithm"] for s in rep.summary} == {"cpsat", "titan", "elasticflow"}
