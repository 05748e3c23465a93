"""The PAI benchmark (``benchmarks/pai_adapter.py``, ``benchmarks/pai_side_by_side.py``) and the
pipeline changes it measured.

The peer (alibaba/clusterdata) is never part of the repository: the tests that run it need a
checkout named by ``OPTKIT_PAI_CHECKOUT`` (its root, at the commit ``benchmarks/perf/pai_adapter.md``
names) and skip without one; the committed pages are the evidence on machines without it. The
other tests need nothing outside the repository.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import _pai_workload as W  # noqa: E402

PAI = os.environ.get("OPTKIT_PAI_CHECKOUT")
needs_pai = pytest.mark.skipif(not PAI, reason="needs a checkout of alibaba/clusterdata named by OPTKIT_PAI_CHECKOUT "
                                               "(never fetched by the tests; see benchmarks/perf/pai_adapter.md)")


def test_workload_is_the_same_jobs_in_both_formats(tmp_path: Path) -> None:
    from optkit.formulations.ddlwmp.model import DdlwmpInstance

    w = W.jobs(500, 1.2, 3)
    W.write(w, tmp_path / "w.json", tmp_path / "w.csv")
    inst = DdlwmpInstance.from_dict(json.loads((tmp_path / "w.json").read_text()))
    with open(tmp_path / "w.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert inst.cluster.servers * inst.cluster.gpus_per_server == W.TOTAL_GPUS == 6496
    assert [j.id for j in inst.jobs] == [r["job_id"] for r in rows] == [str(i) for i in range(500)]
    for j, r in zip(inst.jobs, rows):
        assert j.release == float(r["submit_time"]) and j.release.is_integer()
        assert inst.gpus(j) == int(r["num_gpu"]) == int(r["num_cpu"]) and 1 <= inst.gpus(j) <= 8
        assert j.iterations == int(r["duration"]) == j.predicted_iterations  # 1-s iterations, perfect prediction
        stage, = inst.models[j.model].stages
        assert stage.fwd_time + stage.bwd_time == 1.0 and stage.param_bytes == stage.in_bytes == stage.out_bytes == 0
    assert [j.release for j in inst.jobs] == sorted(j.release for j in inst.jobs)  # file order = release order
    assert W.offered_load(w) == pytest.approx(1.2, rel=0.01)
    assert W.jobs(500, 1.2, 3)["duration"].tolist() == w["duration"].tolist()  # seeded


def test_write_schedule_one_job_per_line_same_values(tmp_path: Path) -> None:
    from optkit.cli_args import write_schedule

    sched = {"jobs": [{"id": f"j{i}", "start": float(i), "completion": i + 0.1, "alpha_s": 1 / 3,
                       "assignment": [[i, i], [i + 1]]} for i in range(10_000)]}
    write_schedule(tmp_path / "s.json", sched, chunk=4096)
    text = (tmp_path / "s.json").read_text()
    assert json.loads(text) == json.loads(json.dumps(sched, indent=1)) == sched
    lines = text.splitlines()
    assert lines[0] == '{"jobs": [' and lines[-1] == "]}" and len(lines) == 10_002
    assert json.loads(lines[4097].rstrip(",")) == sched["jobs"][4096]  # across a chunk boundary
    write_schedule(tmp_path / "e.json", {"jobs": []})
    assert json.loads((tmp_path / "e.json").read_text()) == {"jobs": []}
    write_schedule(tmp_path / "o.json", {"x": 3, "jobs": []})  # not a bare schedule: indented as before
    assert (tmp_path / "o.json").read_text() == json.dumps({"x": 3, "jobs": []}, indent=1) + "\n"


def test_simulating_imports_no_networkx() -> None:
    """The measured saving (20 MB and 0.1-0.2 s): the simulation builds no graph."""
    code = ("import sys; from optkit import registry; f = registry.get('ddlwmp'); "
            "import optkit.formulations.ddlwmp.simulate, optkit.formulations.ddlwmp.baselines, "
            "optkit.formulations.ddlwmp.a_srpt; print('networkx' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


@needs_pai
@pytest.mark.parametrize("policy", ["a-srpt", "wcs-duration", "spjf"])
def test_pai_drives_optkit_with_the_same_completion_times(tmp_path: Path, policy: str) -> None:
    """PAI's unmodified simulator, its scheduler hook replaced by the adapter, gives every job the
    completion time ``optkit simulate`` gives (8 x 8 GPUs at load 1.5: jobs queue, ties occur)."""
    import pai_adapter as A

    from optkit.formulations.ddlwmp import baselines
    from optkit.formulations.ddlwmp.a_srpt import ASRPT
    from optkit.formulations.ddlwmp.model import DdlwmpInstance
    from optkit.formulations.ddlwmp.simulate import simulate

    w = W.jobs(400, 1.5, 5, servers=8)  # 64 GPUs: jobs queue
    W.write(w, tmp_path / "w.json", tmp_path / "w.csv")
    times = A.run_pai(PAI, tmp_path / "w.csv", policy, tmp_path / "pai.csv", gpus=64)
    inst = DdlwmpInstance.from_dict(json.loads((tmp_path / "w.json").read_text()))
    cls = ASRPT if policy == "a-srpt" else baselines.BASELINES[policy]
    ours = {j["id"]: j["completion"] for j in simulate(inst, cls(inst.cluster, inst.models, seed=0))["jobs"]}
    theirs = W.read_completions(tmp_path / "pai.csv")
    assert times["jobs"] == 400 and times["avg_wait_s"] > 0  # jobs did wait: the order mattered
    assert A.differences(theirs, ours) == []


@needs_pai
def test_pai_sjf_is_wcs_duration_with_perfect_predictions(tmp_path: Path) -> None:
    import pai_adapter as A

    w = W.jobs(400, 1.5, 6, servers=8)
    W.write(w, tmp_path / "w.json", tmp_path / "w.csv")
    for pol, out in (("SJF", "sjf.csv"), ("wcs-duration", "ours.csv")):
        assert A.run_pai(PAI, tmp_path / "w.csv", pol, tmp_path / out, gpus=64)["avg_wait_s"] > 0
    assert A.differences(W.read_completions(tmp_path / "sjf.csv"), W.read_completions(tmp_path / "ours.csv")) == []
