"""The harness on a real Dask cluster, and the task server that makes its workers fast.

The cluster is started as a user starts one (Dask's documentation): ``dask scheduler`` and two
``dask worker ADDRESS --nthreads 1`` processes on localhost, each in its own session (process
group), on free ports, from this interpreter's environment; it is killed whatever happens. Its
workers run under their nanny, so they are daemonic and every run goes through their task
server (:mod:`optkit.harness.server`). The test-only formulations ``sleepy`` and the real
experiment ``titan-approximation`` (nimp, ``--scale ci``: 10 measurements) run on it.

No clock is asserted anywhere: waits poll for a fact (a file, a worker count, a process gone)
and pytest-timeout ends them if the fact never comes.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from optkit import registry  # noqa: E402
from optkit.errors import InputError  # noqa: E402
from optkit.harness import ResultStore, Task, compare, hard_limit, run_task  # noqa: E402
from optkit.harness import server as server_mod  # noqa: E402
from optkit.instances import instance_hash  # noqa: E402
from tests.needs import needs_modules  # noqa: E402
from tests.plugins import sleepy  # noqa: E402

SLEEPY_TARGET = "tests.plugins.sleepy:FORMULATION"
GRACE = 0.5
POLL_S = 0.05


@pytest.fixture(autouse=True, scope="module")
def _one_task_server() -> Iterator[None]:
    """This process's task server, once a test of this module started it, serves the module's
    later tests too (every test sets the same environment, :func:`_sleepy_registered`, which the
    server carries); a test that kills or stops it gets a new one (:func:`server_mod.task_server`).
    It is closed after the module's last test, so no other module meets a server carrying this
    module's environment."""
    yield
    if server_mod._server is not None:
        server_mod._server.close()
        server_mod._server = None


@pytest.fixture(autouse=True)
def _sleepy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPTKIT_FORMULATIONS", SLEEPY_TARGET)
    monkeypatch.setenv("OPTKIT_HARNESS_PRELOAD", "")
    registry.all_formulations()
    monkeypatch.setitem(registry._registered, "sleepy", sleepy.FORMULATION)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _instance(size: int, log: Path | None = None, gate: Path | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"problem": "sleepy", "size": size, "sleep": 0.0}
    if log is not None:
        d["log"] = str(log)
    if gate is not None:
        d["gate"] = str(gate)
    return d


def _task(algorithm: str, time_limit: float = 0.3, log: Path | None = None) -> Task:
    data = _instance(3, log)
    return Task("sleepy", "one", data, instance_hash(data), algorithm, "cost", {}, 0, time_limit)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie of ours counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def _wait_until(fact: Any) -> None:
    while not fact():
        time.sleep(POLL_S)


# ----------------------------------------------------------------------------- the task server
def test_task_server_is_reused_and_gives_the_local_rows() -> None:
    """Two runs through the server: the same server process, the local pool's rows."""
    first = run_task(_task("exact"), method="server", grace_s=GRACE)
    second = run_task(_task("random"), method="server", grace_s=GRACE)
    local = run_task(_task("exact"), grace_s=GRACE)
    assert (first["status"], first["objective"]) == (local["status"], local["objective"]) == ("optimal", 3.0)
    pid = first["info"]["harness"]["server"]
    assert pid == second["info"]["harness"]["server"] == server_mod.task_server().pid != os.getpid()
    assert first["info"]["harness"]["method"] == "forkserver"  # the server starts runs as the local pool does
    assert first["info"]["harness"]["pid"] != second["info"]["harness"]["pid"]  # but each in its own child


def test_task_server_keeps_the_isolation_guarantees(tmp_path: Path) -> None:
    """A crash, an exit and a hang each give their row; the server survives all three."""
    crash = run_task(_task("crash"), method="server", grace_s=GRACE)
    died = run_task(_task("die"), method="server", grace_s=GRACE)
    hung = run_task(_task("hang", time_limit=0.2), method="server", grace_s=GRACE)
    assert crash["status"] == "error" and crash["message"] == "RuntimeError: boom"
    assert died["status"] == "error" and "code 7" in died["message"]
    assert hung["status"] == "time_limit" and f"hard limit of {hard_limit(0.2, GRACE):.3g} s" in hung["message"]
    assert len({r["info"]["harness"]["server"] for r in (crash, died, hung)}) == 1
    assert run_task(_task("exact"), method="server", grace_s=GRACE)["status"] == "optimal"


def test_a_dead_server_fails_its_runs_and_is_replaced(tmp_path: Path) -> None:
    """SIGKILL the server while a run hangs in it: that run is an ``error`` row naming the
    server, and the next run starts a new server."""
    log = tmp_path / "runs.log"
    old = server_mod.task_server()
    rows: list[dict[str, Any]] = []
    t = threading.Thread(target=lambda: rows.append(run_task(_task("hang", time_limit=None, log=log),
                                                             method="server", grace_s=GRACE)))
    t.start()
    _wait_until(lambda: _lines(log))  # the hang runs in the server's child
    run_pid = int(_lines(log)[0].split()[3])
    os.kill(old.pid, signal.SIGKILL)
    t.join()
    assert rows[0]["status"] == "error" and f"task server (pid {old.pid}) was killed by SIGKILL" in rows[0]["message"]
    _wait_until(lambda: _gone(run_pid))  # the run died with its server's forkserver
    again = run_task(_task("exact"), method="server", grace_s=GRACE)
    assert again["status"] == "optimal" and again["info"]["harness"]["server"] not in (old.pid, None)


def test_a_stuck_server_is_killed_at_the_hard_limit_plus_its_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that answers nothing (stopped) is killed once the run's hard limit plus
    SERVER_STARTUP_S has passed; the run is a ``time_limit`` row saying so."""
    monkeypatch.setattr(server_mod, "SERVER_STARTUP_S", 0.3)
    stuck = server_mod.task_server()
    os.kill(stuck.pid, signal.SIGSTOP)
    row = run_task(_task("exact", time_limit=0.1), method="server", grace_s=GRACE)
    assert row["status"] == "time_limit"
    assert f"within the hard limit of {hard_limit(0.1, GRACE):.3g} s plus 0.3 s" in row["message"]
    _wait_until(lambda: _gone(stuck.pid))
    assert run_task(_task("exact"), method="server", grace_s=GRACE)["info"]["harness"]["server"] != stuck.pid


# ----------------------------------------------------------------------------- a real cluster
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """``dask scheduler`` and named ``dask worker`` processes, each in its own session."""

    def __init__(self, folder: Path) -> None:
        from optkit.harness.executors import _probe_scheduler

        self.folder = folder
        self.env = _env()
        self.env["OPTKIT_FORMULATIONS"] = SLEEPY_TARGET
        self.env["OPTKIT_HARNESS_PRELOAD"] = ""
        self.address = f"tcp://127.0.0.1:{_free_port()}"
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self._start("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", self.address.rsplit(":", 1)[1],
                                  "--no-dashboard"])
        while True:
            try:
                _probe_scheduler(self.address, 2.0)
                break
            except InputError:
                assert self.procs["scheduler"].poll() is None, (folder / "scheduler.log").read_text()
                time.sleep(POLL_S)
        import distributed

        self.client = distributed.Client(self.address, timeout="30s")

    def _start(self, name: str, args: list[str]) -> None:
        log = open(self.folder / f"{name}.log", "ab")
        self.procs[name] = subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=log, stderr=log,
                                            env=self.env, cwd=self.folder, start_new_session=True)
        log.close()

    def workers(self) -> dict[str, str]:
        """``{worker name: worker address}`` of the workers the scheduler knows."""
        return {str(w["name"]): addr for addr, w in self.client.scheduler_info(n_workers=-1)["workers"].items()}

    def ensure_workers(self, *names: str) -> None:
        """Start the named workers that are not running (as Dask's docs start one: under a
        nanny, one thread each) and wait until the scheduler knows all of them."""
        for name in names:
            if name not in self.procs or self.procs[name].poll() is not None:
                self._start(name, ["worker", self.address, "--nthreads", "1", "--name", name, "--no-dashboard"])
        _wait_until(lambda: set(names) <= set(self.workers()))

    def servers(self) -> dict[str, int]:
        """``{worker name: its task server's pid}`` (starting the servers if need be)."""
        by_addr = self.client.run(server_mod.warm_up)
        return {name: by_addr[addr] for name, addr in self.workers().items()}

    def kill(self, name: str) -> None:
        """SIGKILL the worker's whole process group: the nanny and the worker process."""
        os.killpg(self.procs[name].pid, signal.SIGKILL)
        self.procs[name].wait()

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            for p in self.procs.values():
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    needs_modules("distributed", extra="distributed")
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.ensure_workers("w0", "w1")
        yield c
    finally:
        c.close()


@pytest.mark.slow
def test_cluster_workers_run_crashes_and_hangs_as_the_local_pool(cluster: Cluster, tmp_path: Path) -> None:
    """Through real nanny workers: a crash, an exit and a hang become their rows, every run goes
    through its worker's task server, and no server is replaced on the way."""
    from optkit.harness import DaskExecutor

    cluster.ensure_workers("w0", "w1")
    servers = set(cluster.servers().values())
    instances = [("a", _instance(2)), ("b", _instance(3))]
    ex = DaskExecutor(cluster.address, grace_s=GRACE)
    try:
        rep = compare("sleepy", instances, ["crash", "die", "hang", "exact"], "cost", [0], 0.5, tmp_path / "r.sqlite",
                      ex, progress=False)
    finally:
        ex.close()
    got = collections.Counter((r["algorithm"], r["status"]) for r in rep.rows)
    assert got == {("crash", "error"): 2, ("die", "error"): 2, ("hang", "time_limit"): 2, ("exact", "optimal"): 2}
    assert {r["message"] for r in rep.rows if r["algorithm"] == "crash"} == {"RuntimeError: boom"}
    assert all("code 7" in r["message"] for r in rep.rows if r["algorithm"] == "die")
    assert {r["info"]["harness"]["server"] for r in rep.rows} <= servers
    assert set(cluster.servers().values()) == servers
    with pytest.raises(InputError, match=r"is not a Dask scheduler \(it answers as Worker\)"):
        DaskExecutor(cluster.workers()["w0"])


@pytest.mark.slow
def test_cluster_sweeps_survive_a_killed_worker_and_resume(cluster: Cluster, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """``compare`` and ``reproduce`` through two workers; one worker is SIGKILLed half-way each
    time. Every run's row arrives exactly once, none is an error, and a re-run (the command line,
    as a user resumes: :func:`optkit.cli.main` in this process, the path ``optkit`` takes; the
    command line as a process of its own with ``--scheduler``:
    :func:`test_unreachable_scheduler_is_one_line_for_compare_and_reproduce`) adds nothing.
    ``reproduce`` measures one seed of ``titan-approximation`` (5 readings): the kill after the
    first row leaves four measurements to finish elsewhere, as the ten of two seeds did."""
    from optkit.cli import main
    from optkit.harness import DaskExecutor
    from optkit.reproduce import reproduce

    # --- compare: every nap waits for the gate, so the kill lands while both workers run one
    cluster.ensure_workers("w0", "w1")
    log, gate = tmp_path / "runs.log", tmp_path / "gate"
    instances = [(f"s{n}", _instance(n, log, gate)) for n in range(2, 10)]
    db = tmp_path / "compare.sqlite"
    server_of_w1 = cluster.servers()["w1"]
    arrived: collections.Counter[str] = collections.Counter()

    def kill_half_way() -> None:
        _wait_until(lambda: len(_lines(log)) >= 2)  # a run started on each worker; both wait at the gate
        cluster.kill("w1")
        gate.touch()

    killer = threading.Thread(target=kill_half_way)
    killer.start()
    ex = DaskExecutor(cluster.address, grace_s=GRACE)
    try:
        compare("sleepy", instances, ["nap"], "cost", [0], 30.0, db, ex, progress=False,
                on_row=lambda row: arrived.update([row["key"]]))
    finally:
        ex.close()
        killer.join()
    keys = {t.key for t in _plan(instances)}
    assert set(arrived) == keys and set(arrived.values()) == {1}
    with ResultStore(db) as store:
        stored = store.rows()
    assert len(stored) == 8 and {r["status"] for r in stored} == {"feasible"}
    assert len(_lines(log)) == 8 + 1  # the killed worker's run started once more elsewhere
    _wait_until(lambda: _gone(server_of_w1))  # the dead worker's server went with it
    folder = tmp_path / "inst"
    folder.mkdir()
    for name, data in instances:
        (folder / f"{name}.json").write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["compare", str(folder), "--algorithms", "nap", "--time-limit", "30", "--db", str(db),
                 "--scheduler", cluster.address, "--no-progress"]) == 0
    again = capsys.readouterr().err
    assert "8 runs, 8 already in" in again and "0 to run" in again, again
    with ResultStore(db) as store:
        assert store.rows() == stored  # not a row added or rewritten

    # --- reproduce at ci scale: a real experiment, one worker killed after the first row
    cluster.ensure_workers("w0", "w1")
    rdb = tmp_path / "reproduce.sqlite"
    seen: collections.Counter[str] = collections.Counter()

    def on_row(row: dict[str, Any]) -> None:
        seen[row["key"]] += 1
        if len(seen) == 1:
            cluster.kill("w0")

    m = reproduce(["titan-approximation"], scale="ci", seeds=[0], db=rdb, scheduler=cluster.address,
                  progress=False, on_row=on_row)
    assert len(m.rows) == len(seen) >= 5 and set(seen.values()) == {1}  # 5 readings x 1 seed, + any series
    assert {r["status"] for r in m.rows} == {"feasible"}, m.failures
    capsys.readouterr()
    assert main(["reproduce", "titan-approximation", "--seeds", "1", "--out", str(tmp_path / "pages"), "--db",
                 str(rdb), "--scheduler", cluster.address, "--no-progress"]) == 0
    out = capsys.readouterr().err
    n = len(m.rows)
    assert f"reproduce: {n} measurements (1 experiments x readings x seeds), {n} already in" in out, out
    assert "0 to run" in out
    with ResultStore(rdb) as store:
        assert store.rows() == m.rows


def _plan(instances: list[tuple[str, dict[str, Any]]]) -> list[Task]:
    from optkit.harness import plan

    return plan("sleepy", instances, ["nap"], "cost", [0], 30.0)


def test_unreachable_scheduler_is_one_line_for_compare_and_reproduce(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing listens on the port: exit 2 with one line naming --scheduler, for both commands;
    the store is not even created. ``compare`` runs as a process of its own (its exit status and
    stderr as a shell sees them, the timeout read from its environment); ``reproduce`` through
    :func:`optkit.cli.main` in this process, the same path to the same executor."""
    needs_modules("distributed", extra="distributed")
    from optkit.cli import main

    address = f"tcp://127.0.0.1:{_free_port()}"
    inst = tmp_path / "a.json"
    inst.write_text(json.dumps(_instance(2)))
    env = {**_env(), "OPTKIT_FORMULATIONS": SLEEPY_TARGET, "OPTKIT_SCHEDULER_TIMEOUT": "1.5"}
    line = f"optkit: error: --scheduler cannot connect to '{address}': no scheduler answered within 1.5 s\n"
    p = subprocess.run([sys.executable, "-m", "optkit", "compare", str(inst), "--db", str(tmp_path / "c.sqlite"),
                        "--scheduler", address], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == line
    monkeypatch.setenv("OPTKIT_SCHEDULER_TIMEOUT", "1.5")
    capsys.readouterr()
    assert main(["reproduce", "titan-fig1", "--out", str(tmp_path / "pages"), "--db", str(tmp_path / "r.sqlite"),
                 "--scheduler", address]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err == line
    assert not (tmp_path / "c.sqlite").exists() and not (tmp_path / "r.sqlite").exists()


def _lost(*args: Any, **kwargs: Any) -> dict[str, Any]:
    raise RuntimeError("the worker went away")


def test_a_task_dask_itself_fails_is_an_error_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """What Dask reports as a failed task (here the task function raises, as a KilledWorker
    would be raised) becomes one ``error`` row per task naming it; nothing is lost or repeated."""
    needs_modules("distributed", extra="distributed")
    import distributed

    from optkit.harness import DaskExecutor, executors

    monkeypatch.setattr(executors, "run_task", _lost)
    tasks = [_task("exact"), _task("random")]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as lc:
        ex = DaskExecutor(lc.scheduler_address)
        try:
            rows = list(ex.run(tasks))
        finally:
            ex.close()
    assert sorted(r["key"] for r in rows) == sorted(t.key for t in tasks)
    assert {(r["status"], r["message"]) for r in rows} == {("error", "dask: RuntimeError: the worker went away")}
