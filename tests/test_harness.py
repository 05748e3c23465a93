"""The comparison harness: worker outcomes, hard limits, resumption, Dask, gaps, bad input.

The test-only formulation ``sleepy`` (tests/plugins/sleepy.py) provides algorithms that sleep,
hang, crash, die and lie. Worker processes find it through ``OPTKIT_FORMULATIONS``; the repo
root goes on ``PYTHONPATH`` for subprocesses.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # so that `tests.plugins.sleepy` imports here and in the forkserver
    sys.path.insert(0, str(REPO))

from optkit import registry  # noqa: E402
from optkit.errors import InputError  # noqa: E402
from optkit.harness import (  # noqa: E402
    LocalExecutor, ResultStore, Task, build_tasks, compare, hard_limit, run_task, task_key,
)
from optkit import cli  # noqa: E402
from optkit.harness.compare import compare, resolve_algorithms  # noqa: E402
from optkit.harness.processes import HARD_LIMIT_FACTOR, live_children  # noqa: E402
from optkit.instances import instance_hash  # noqa: E402
from tests.plugins import sleepy  # noqa: E402
from tests.needs import needs_modules  # noqa: E402

SLEEPY_TARGET = "tests.plugins.sleepy:FORMULATION"
GRACE = 0.5  # seconds of start-up grace in these tests (the forkserver makes start-up ~30 ms)


@pytest.fixture(autouse=True)
def _sleepy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register ``sleepy`` here and, through the environment, in worker processes."""
    targets = [t for t in os.environ.get("OPTKIT_FORMULATIONS", "").split(",") if t]
    monkeypatch.setenv("OPTKIT_FORMULATIONS", ",".join(dict.fromkeys(targets + [SLEEPY_TARGET])))
    monkeypatch.setenv("OPTKIT_HARNESS_PRELOAD", "")  # no solver preload: these tests run none
    registry.all_formulations()
    monkeypatch.setitem(registry._registered, "sleepy", sleepy.FORMULATION)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def sleepy_instance(size: int, sleep: float = 0.0, log: Path | None = None, gate: Path | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"problem": "sleepy", "size": size, "sleep": sleep}
    if log is not None:
        d["log"] = str(log)
    if gate is not None:
        d["gate"] = str(gate)
    return d


def gpu_instance(n_stages: int, replicas: int, servers: list[int], allreduce: str = "ring") -> dict[str, Any]:
    """A small gpu-mapping instance: replicas*out_bytes == next replicas*in_bytes holds (equal replicas)."""
    stages = [{"replicas": replicas, "fwd_time": 0.01 * (s + 1), "bwd_time": 0.02 * (s + 1),
               "in_bytes": 0 if s == 0 else 1e6, "out_bytes": 0 if s == n_stages - 1 else 1e6,
               "param_bytes": 1e7 * (s + 1)} for s in range(n_stages)]
    assert sum(servers) == n_stages * replicas
    return {"problem": "gpu-mapping",
            "cluster": {"gpus_per_server": 8, "inter_bandwidth": 1.25e9, "intra_bandwidth": 3e11},
            "job": {"allreduce": allreduce, "stages": stages}, "servers": servers}


def one_task(algorithm: str, *, size: int = 3, time_limit: float = 0.3, params: dict | None = None) -> Task:
    data = sleepy_instance(size)
    return Task("sleepy", "one", data, instance_hash(data), algorithm, "cost", params or {}, 0, time_limit)


def log_lines(path: Path) -> list[str]:
    """The runs sleepy logged, ``"<algorithm> <size> <seed>"`` each."""
    return [" ".join(line.split()[:3]) for line in _log_fields(path)]


def _log_fields(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


# ----------------------------------------------------------------------------- tasks
def test_task_key_is_canonical_and_includes_time_limit() -> None:
    a = task_key("h", "p", "alg", "cut", {"a": 1, "b": [1, 2]}, 0)
    assert a == task_key("h", "p", "alg", "cut", {"b": [1, 2], "a": 1}, 0)
    assert len({a, task_key("h", "p", "alg", "cut", {"a": 1, "b": [1, 2]}, 1),
                task_key("h", "p", "alg", "alpha", {"a": 1, "b": [1, 2]}, 0),
                task_key("h2", "p", "alg", "cut", {"a": 1, "b": [1, 2]}, 0)}) == 4
    t1, t2 = one_task("nap", time_limit=1.0), one_task("nap", time_limit=9.0)
    assert t1.key != t2.key  # another --time-limit is another run (an exact solver may end otherwise)
    assert t1.key == one_task("nap", time_limit=1.0).key
    assert Task.from_dict(json.loads(json.dumps(t1.to_dict()))).key == t1.key


def test_build_tasks_seeds_and_dedup() -> None:
    f = sleepy.FORMULATION
    same = sleepy_instance(2)
    tasks = build_tasks(f, [("a", same), ("copy-of-a", dict(same)), ("b", sleepy_instance(3))],
                        ["nap", "random", "wrong-bound"], ["cost", "x"], seeds=[0, 1, 2], time_limit=1)
    per_instance = {t.instance_name for t in tasks}
    assert per_instance == {"a", "b"}  # identical content is one instance
    nap = [t for t in tasks if t.algorithm == "nap"]
    rnd = [t for t in tasks if t.algorithm == "random"]
    wb = [t for t in tasks if t.algorithm == "wrong-bound"]
    assert {t.seed for t in nap} == {0} and len(nap) == 2 * 2  # deterministic: first seed only
    assert {t.seed for t in rnd} == {0, 1, 2} and len(rnd) == 2 * 2 * 3
    assert {t.objective for t in wb} == {"cost"}  # unsupported (algorithm, objective) skipped
    with pytest.raises(InputError, match="seeds"):
        build_tasks(f, [("a", same)], ["nap"], ["cost"], seeds=[-1])
    with pytest.raises(InputError, match="time_limit"):
        build_tasks(f, [("a", same)], ["nap"], ["cost"], time_limit=0)


# ----------------------------------------------------------------------------- worker
def _spy(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, position: int) -> list[Any]:
    """Record argument ``position`` of every call of ``module.name`` (which still runs)."""
    seen: list[Any] = []
    real = getattr(module, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(args[position])
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return seen


def test_worker_turns_every_failure_into_a_row(monkeypatch: pytest.MonkeyPatch) -> None:
    from optkit.harness import worker

    ok = run_task(one_task("exact"), grace_s=GRACE)
    assert (ok["status"], ok["objective"], ok["bound"]) == ("optimal", 3.0, 3.0)
    assert ok["solution"] == {"x": 3} and ok["metrics"]["x"] == 3
    json.dumps(ok)  # rows are plain JSON

    # The worker waits for the hung child exactly the hard limit, then kills it: the limit it
    # waited (recorded by a spy, not a clock) and the row say so.
    waits = _spy(monkeypatch, worker, "_wait_cancellable", 1)
    hung = run_task(one_task("hang", time_limit=0.3), grace_s=GRACE)
    limit = hard_limit(0.3, GRACE)
    assert waits == [limit] and limit == 0.3 * HARD_LIMIT_FACTOR + GRACE
    assert hung["status"] == "time_limit" and hung["objective"] is None
    assert f"hard limit of {limit:.3g} s" in hung["message"] and hung["info"]["harness"]["killed"] is True

    crashed = run_task(one_task("crash"), grace_s=GRACE)
    assert crashed["status"] == "error" and crashed["message"] == "RuntimeError: boom"
    assert "traceback" in crashed["info"]

    rejected = run_task(one_task("bad"), grace_s=GRACE)
    assert rejected["status"] == "error" and "evaluate rejected" in rejected["message"]

    died = run_task(one_task("die"), grace_s=GRACE)
    assert died["status"] == "error" and "code 7" in died["message"]

    picky = run_task(one_task("picky"), grace_s=GRACE)
    assert picky["status"] == "error" and picky["message"].startswith("InputError: sleepy: params.k")
    assert run_task(one_task("picky", params={"k": 2}), grace_s=GRACE)["objective"] == 4.0


def test_subprocess_worker_for_daemonic_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    from optkit.harness import worker

    """The fresh-interpreter path (``method="subprocess"``): same rows, same limit. (Daemonic
    processes such as Dask nanny workers use the task server: tests/test_harness_dask.py.)"""
    row = run_task(one_task("exact"), method="subprocess", grace_s=GRACE)
    assert (row["status"], row["objective"]) == ("optimal", 3.0)
    assert row["info"]["harness"]["method"] == "subprocess"
    monkeypatch.setattr(worker, "SUBPROCESS_STARTUP_S", 1.0)
    limits = _spy(monkeypatch, worker, "_run_subprocess", 1)
    hung = run_task(one_task("hang", time_limit=0.2), method="subprocess", grace_s=GRACE)
    limit = hard_limit(0.2, GRACE) + 1.0
    assert limits == [limit]
    assert hung["status"] == "time_limit" and f"hard limit of {limit:.3g} s" in hung["message"]


def test_interrupted_local_executor_kills_its_children(tmp_path: Path) -> None:
    """Closing the row stream (what a KeyboardInterrupt in the consuming loop does) kills the
    running children. The hangs have no time limit at all, so nothing but that kill can end
    them: without it ``close`` blocks and pytest-timeout fails the test (no clock involved)."""
    log = tmp_path / "runs.log"
    hangs = []
    for size in (4, 5):
        data = sleepy_instance(size, log=log)
        hangs.append(Task("sleepy", f"h{size}", data, instance_hash(data), "hang", "cost", {}, 0, None))
    rows = LocalExecutor(3, grace_s=GRACE).run([one_task("exact"), *hangs])
    first = next(rows)
    assert first["algorithm"] == "exact"
    while len(log_lines(log)) < 2:  # both hangs have started (each logs before it hangs)
        time.sleep(0.02)
    rows.close()
    assert live_children() == []


# ----------------------------------------------------------------------------- sweeps
def test_sweep_goes_on_after_hangs_crashes_and_bad_solutions(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    instances = [("s2", sleepy_instance(2)), ("s4", sleepy_instance(4))]
    summary = compare("sleepy", instances, ["exact", "hang", "crash", "bad", "nap"], "cost", [0], 0.3, db,
                      LocalExecutor(2, grace_s=GRACE), progress=False).summary
    by_algo = {s["algorithm"]: s for s in summary}
    assert by_algo["exact"]["optimal"] == 2 and by_algo["exact"]["gap_max"] == 0.0
    assert by_algo["hang"]["time_limit"] == 2
    assert by_algo["crash"]["error"] == 2 and by_algo["bad"]["error"] == 2
    assert by_algo["nap"]["feasible"] == 2 and by_algo["nap"]["gap_median"] == pytest.approx(0.5)
    with ResultStore(db) as store:
        assert store.count() == 10
        msgs = {r["algorithm"]: r["message"] for r in store.rows()}
    assert "boom" in msgs["crash"] and "evaluate rejected" in msgs["bad"] and "hard limit" in msgs["hang"]


def _rows_in(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as c:
            return c.execute("SELECT COUNT(*) FROM rows").fetchone()[0]
    except sqlite3.OperationalError:
        return 0  # table not created yet


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def test_killed_sweep_resumes_without_recomputing(tmp_path: Path) -> None:
    """Kill a sweep's driver while its third task runs; the re-run recomputes exactly that task.
    The stop is placed without a clock: instances 3.. wait for a gate file that only appears
    after the kill, so the kill lands with exactly two rows stored and the third task in flight."""
    folder = tmp_path / "instances"
    folder.mkdir()
    log, gate = tmp_path / "runs.log", tmp_path / "gate"
    n = 8
    for i in range(n):
        data = sleepy_instance(i + 1, log=log, gate=gate if i >= 2 else None)
        (folder / f"s{i}.json").write_text(json.dumps(data))
    db = tmp_path / "r.sqlite"
    cmd = [sys.executable, "-m", "optkit", "compare", str(folder), "--algorithms", "nap",
           "--time-limit", "30", "--jobs", "1", "--db", str(db), "--no-progress"]
    proc = subprocess.Popen(cmd, env=_env(), cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        while _rows_in(db) < 2 or len(log_lines(log)) < 3:  # pytest-timeout ends a stuck wait
            time.sleep(0.02)
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # the sweep's driver only: its children must die with it
        proc.wait()
    with ResultStore(db) as store:
        before = {r["key"]: r for r in store.rows()}
    assert len(before) == 2, f"kill landed at {len(before)} rows"
    in_flight = int(_log_fields(log)[2].split()[3])  # the process id of the third run
    while _alive(in_flight):  # the orphaned worker dies with its driver (or the test times out)
        time.sleep(0.02)
    gate.write_text("open")

    out = subprocess.run(cmd, env=_env(), cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert f"{len(before)} already in" in out.stderr
    with ResultStore(db) as store:
        after = {r["key"]: r for r in store.rows()}
    assert len(after) == n and set(before) <= set(after)
    for key, row in before.items():  # finished rows untouched
        assert after[key]["finished_at"] == row["finished_at"]
        assert after[key]["wall_time_s"] == row["wall_time_s"]
    runs = log_lines(log)
    finished_sizes = {Path(r["instance_name"]).stem[1:] for r in before.values()}
    for i in range(n):
        count = sum(1 for line in runs if line.split()[1] == str(i + 1))
        if str(i) in finished_sizes:
            assert count == 1, f"instance s{i} finished before the kill but ran {count} times"
        else:  # the third (in flight at the kill) ran twice, the others once
            assert count == (2 if i == 2 else 1), f"instance s{i} ran {count} times"
    assert "nap" in out.stdout and "feas" in out.stdout  # the summary table


def test_failed_rows_are_kept_unless_retry_failed(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    log = tmp_path / "runs.log"
    inst = [("a", sleepy_instance(2, log=log))]
    ex = LocalExecutor(1, grace_s=GRACE)
    compare("sleepy", inst, ["crash", "exact"], "cost", [0], 1.0, db, ex, progress=False)
    with ResultStore(db) as store:
        first = {r["algorithm"]: r for r in store.rows()}
    compare("sleepy", inst, ["crash", "exact"], "cost", [0], 1.0, db, ex, progress=False)
    assert log_lines(log) == ["crash 2 0", "exact 2 0"]  # nothing re-ran
    compare("sleepy", inst, ["crash", "exact"], "cost", [0], 1.0, db, ex, progress=False, retry_failed=True)
    assert log_lines(log) == ["crash 2 0", "exact 2 0", "crash 2 0"]  # only the error re-ran
    with ResultStore(db) as store:
        again = {r["algorithm"]: r for r in store.rows()}
    assert again["crash"]["finished_at"] > first["crash"]["finished_at"]
    assert again["exact"]["finished_at"] == first["exact"]["finished_at"]


def test_gaps_use_the_best_bound_of_all_rows_and_improve_later(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    inst = [("s4", sleepy_instance(4))]
    ex = LocalExecutor(2, grace_s=GRACE)
    # nap: cost 8. partial: cost 6, proven bound 3. lower_bound: 2. Best so far: 3.
    rep = compare("sleepy", inst, ["nap", "partial"], "cost", [0], 1.0, db, ex, progress=False)
    gaps = {r["algorithm"]: r["gap"] for r in rep.rows}
    assert gaps == {"nap": pytest.approx((8 - 3) / 8), "partial": pytest.approx((6 - 3) / 6)}
    # the exact optimum (4) arrives later: the stored nap and partial rows' gaps tighten
    rep = compare("sleepy", inst, ["nap", "partial", "exact"], "cost", [0], 1.0, db, ex, progress=False)
    gaps = {r["algorithm"]: r["gap"] for r in rep.rows}
    assert gaps == {"nap": pytest.approx(0.5), "partial": pytest.approx(2 / 6), "exact": 0.0}
    assert not rep.conflicts
    # a wrong "proven" bound (9 > optimum 4) is flagged, not hidden
    rep = compare("sleepy", inst, ["nap", "exact", "wrong-bound"], "cost", [0], 1.0, db, ex, progress=False)
    assert len(rep.conflicts) == 1
    c = rep.conflicts[0]
    assert c.bound == 9.0 and c.objective == 4.0 and "wrong-bound" in c.bound_source and "exact" in c.objective_source
    assert min(r["gap"] for r in rep.rows) < 0


def test_dask_executor_gives_the_local_rows(tmp_path: Path) -> None:
    needs_modules("distributed", extra="distributed")
    import distributed
    instances = [("g1", gpu_instance(2, 2, [3, 1])), ("g2", gpu_instance(3, 2, [4, 2])),
                 ("g3", gpu_instance(4, 3, [5, 4, 3], "tree"))]
    local = compare("gpu-mapping", instances, ["heavy-edge"], "all", [0], 10.0, tmp_path / "local.sqlite",
                           LocalExecutor(2), progress=False)
    from optkit.harness import DaskExecutor

    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        ex = DaskExecutor(cluster.scheduler_address)
        try:
            dask = compare("gpu-mapping", instances, ["heavy-edge"], "all", [0], 10.0,
                                  tmp_path / "dask.sqlite", ex, progress=False)
        finally:
            ex.close()

    def view(rep: Any) -> dict[str, tuple[str, float]]:
        return {r["key"]: (r["status"], r["objective"], r["solution"] is not None) for r in rep.rows}

    assert len(local.rows) == 6
    assert view(local) == view(dask)
    assert {r["status"] for r in dask.rows} == {"feasible"}


# ----------------------------------------------------------------------------- input
def test_bad_instance_is_named_and_nothing_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "inst"
    folder.mkdir()
    good = gpu_instance(2, 2, [3, 1])
    (folder / "a.json").write_text(json.dumps(good))
    bad = json.loads(json.dumps(good))
    bad["job"]["stages"][1]["replicas"] = 0
    (folder / "b.json").write_text(json.dumps(bad))
    db = tmp_path / "r.sqlite"
    code = cli.main(["compare", str(folder), "--db", str(db), "--algorithms", "heavy-edge", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert "b.json" in err and "job.stages[1].replicas" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not db.exists()

    with pytest.raises(InputError, match=r"x\.json: size must be an integer"):
        compare("sleepy", [("ok", sleepy_instance(2)), ("x.json", {"problem": "sleepy", "size": 0})],
                ["nap"], db=db, progress=False)
    assert not db.exists()
    with pytest.raises(InputError, match="unknown"):
        compare("sleepy", [("ok", sleepy_instance(2))], ["nope"], db=db, progress=False)
    with pytest.raises(InputError, match="optional packages"):
        compare("sleepy", [("ok", sleepy_instance(2))], ["missing-dep"], db=db, progress=False)
    (folder / "c.json").write_text(json.dumps(sleepy_instance(2)))
    assert cli.main(["compare", str(folder), "--db", str(db)]) == 2
    assert "one problem per sweep" in capsys.readouterr().err
    assert cli.main(["compare", str(folder / "a.json"), "--db", str(db), "--seeds", "x"]) == 2
    assert cli.main(["compare", str(folder / "a.json"), "--db", str(db), "--time-limit", "-1"]) == 2
    assert cli.main(["compare", str(tmp_path / "missing.json"), "--db", str(db)]) == 2
    assert not db.exists()


def test_cli_suite_defaults_and_report_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, out = tmp_path / "r.sqlite", tmp_path / "rep"
    default = resolve_algorithms(sleepy.FORMULATION, None)
    assert "missing-dep" not in default and {"exact", "random", "hang"} <= set(default)
    assert resolve_algorithms(sleepy.FORMULATION, "all") == default
    code = cli.main(["compare", "--problem", "sleepy", "--suite", "tiny", "--objective", "all",
                              "--algorithms", "exact,random,wrong-bound,nap", "--seeds", "0-1",
                              "--time-limit", "2", "--jobs", "2", "--db", str(db), "--report", str(out),
                              "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    with ResultStore(db) as store:
        rows = store.rows()
    assert {r["source"] for r in rows} == {"tiny"} and {r["instance_name"] for r in rows} >= {"tiny/tiny-2"}
    assert len([r for r in rows if r["algorithm"] == "random"]) == 3 * 2 * 2  # instances x objectives x seeds
    assert "BOUND CONFLICTS" in captured.out  # wrong-bound's bound is above the optimum: flagged
    assert {p.name for p in out.iterdir()} >= {"summary.md", "summary.csv", "rows.csv", "gap_sleepy_cost.png",
                                               "time_sleepy_x.png"}
