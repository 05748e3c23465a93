"""Algorithm plug-ins (issue 24 item 1): a real plug-in package, end to end.

``tests/plugins/package.py`` writes the package ``greedyalgos`` with a ``.dist-info`` whose
``entry_points.txt`` declares the group ``optkit.algorithms`` into a temporary folder; with that
folder on ``PYTHONPATH`` :mod:`importlib.metadata` finds it like an installed distribution.

What is about the process runs the CLI as one (``python -m optkit``): a new process finds the
package's entry points on its ``PYTHONPATH`` (``list``), reads ``OPTKIT_ALGORITHMS`` and hands it to
the harness's worker processes (``compare``, the titan replay's ``reproduce``), and a bad plug-in
ends it with exit status 2 and one line. The other commands go through :func:`optkit.cli.main`
in this process (fixture :func:`cli`), its registry loaded afresh from the same path and
environment; the worker processes they start are real processes all the same.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from optkit import registry
from optkit.errors import InputError
from optkit.formulation import Algorithm, OnlinePolicyPlugin
from optkit.result import Result, Status
from optkit.testing import check_algorithm, default_instances
from tests.plugins.package import write_package

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_package(tmp_path_factory.mktemp("site"))


def _run(args: list[str], cwd: Path, site: Path | None, **env: str) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ)
    e.pop("OPTKIT_ALGORITHMS", None)
    e["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([str(site)] if site else []))
    e.update(env)
    return subprocess.run([sys.executable, "-m", "optkit", *args], cwd=cwd, env=e, capture_output=True, text=True,
                          timeout=600)


def _generate(args: list[str], out: Path) -> None:
    """``optkit generate ARGS --out OUT`` in this process (exit 0): the instances a test feeds
    to the CLI's subprocesses; generating needs no plug-in, and a process start each time cost
    more than the generation itself."""
    from optkit.cli import main

    assert main(["generate", *args, "--out", str(out)]) == 0


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[Any]:
    """``cli(args, cwd, site, **env)``: ``optkit ARGS`` through :func:`optkit.cli.main` in this
    process, as :func:`_run` runs it in a new one: in ``cwd``, with ``site`` and the folders of an
    ``env`` ``PYTHONPATH`` on the path, ``env`` in the environment (``OPTKIT_ALGORITHMS`` only if
    given) and the registry loaded afresh from them (entry points, then ``OPTKIT_ALGORITHMS``).
    Returns the exit status and what it printed as a :class:`subprocess.CompletedProcess`;
    everything is restored after the test, and the modules imported from those folders are
    forgotten (another test's folder may hold a module of the same name)."""
    from optkit.cli import main

    added: list[str] = []

    def run(args: list[str], cwd: Path, site: Path | None, **env: str) -> subprocess.CompletedProcess[str]:
        monkeypatch.chdir(cwd)
        monkeypatch.delenv("OPTKIT_ALGORITHMS", raising=False)
        folders = ([str(site)] if site else []) + [
            p for p in env.pop("PYTHONPATH", "").split(os.pathsep) if p and Path(p) != REPO]
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        for folder in folders:
            monkeypatch.syspath_prepend(folder)
            added.append(str(Path(folder).resolve()))
        for attr, value in (("_registered", {}), ("_plugins", {}), ("_loaded", False), ("_load_error", None)):
            monkeypatch.setattr(registry, attr, value)
        capsys.readouterr()
        code = main(args)
        out = capsys.readouterr()
        return subprocess.CompletedProcess(["optkit", *args], code, out.out, out.err)

    yield run
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None) or ""
        if any(where.startswith(folder + os.sep) for folder in added):
            del sys.modules[name]


@pytest.fixture
def restore_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process registrations are undone after the test."""
    registry.all_formulations()
    monkeypatch.setattr(registry, "_registered", dict(registry._registered))
    monkeypatch.setattr(registry, "_plugins", {p: dict(a) for p, a in registry._plugins.items()})


def test_list_shows_the_plug_ins_with_their_source(package: Path, tmp_path: Path) -> None:
    out = _run(["list"], tmp_path, package)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    rar = next(ln for ln in lines if ln.strip().startswith("longest-first"))
    assert "heuristic" in rar and "[plug-in: entry point longest-first = greedyalgos:LONGEST_FIRST]" in rar
    ddl = next(ln for ln in lines if ln.strip().startswith("largest-first"))
    assert "[plug-in: entry point largest-first = greedyalgos:LARGEST_FIRST]" in ddl
    # each under its own problem
    assert lines.index(rar) > lines.index(next(ln for ln in lines if ln.startswith("rar-ddls:")))
    assert lines.index(ddl) < lines.index(next(ln for ln in lines if ln.startswith("gpu-mapping:")))
    assert "longest-first" not in _run(["list"], tmp_path, None).stdout  # without the package: gone


def _solve_and_evaluate(cli: Any, problem: str, path: Path, algorithm: str, cwd: Path,
                        site: Path) -> tuple[Any, Any, Any]:
    """``optkit solve PROBLEM PATH -a ALGORITHM --json`` (exit 0; ``cli``: the fixture), the
    instance, and ``evaluate`` of the solution it printed."""
    out = cli(["solve", problem, str(path), "-a", algorithm, "--json"], cwd, site)
    assert out.returncode == 0, out.stderr
    solved = json.loads(out.stdout)
    f = registry.get(problem)
    inst = f.instance_from_dict(json.loads(path.read_text()))
    return solved, inst, f.evaluate(inst, solved["solution"])


def test_solve_compare_and_simulate_run_the_plug_ins(package: Path, tmp_path: Path, cli: Any) -> None:
    """solve and compare (worker processes) run the rar-ddls plug-in; simulate drives the ddlwmp
    online policy; every objective is evaluate's; the stored rows carry the plug-in's name."""
    _generate(["rar-ddls", "--suite", "tiny"], tmp_path / "rar")
    _generate(["ddlwmp", "--suite", "tiny"], tmp_path / "ddl")
    rar = sorted((tmp_path / "rar").glob("*.json"))[:3]
    solved, _, ev = _solve_and_evaluate(cli, "rar-ddls", rar[1], "longest-first", tmp_path, package)
    assert solved["status"] == "feasible" and ev.feasible and solved["objective"] == ev.objectives["makespan"]

    out = cli(["compare", *map(str, rar), "--algorithms", "sjf-bco,longest-first,cpsat", "--db", "r.sqlite",
                "--no-progress", "--jobs", "2", "--time-limit", "60", "--report", "rep"], tmp_path, package)
    assert out.returncode == 0, out.stderr
    row = next(ln for ln in out.stdout.splitlines() if " longest-first " in ln)
    assert row.split()[:5] == ["rar-ddls", "makespan", "longest-first", "-", "3"]
    with sqlite3.connect(tmp_path / "r.sqlite") as db:
        rows = db.execute("select algorithm, status from rows").fetchall()
    assert sorted(s for a, s in rows if a == "longest-first") == ["feasible"] * 3
    assert any("longest-first" in p.read_text() for p in (tmp_path / "rep").rglob("*.md"))

    ddl = sorted((tmp_path / "ddl").glob("*.json"))[0]
    out = cli(["simulate", "ddlwmp", str(ddl), "-p", "largest-first", "--json", "--out", "s.json"], tmp_path, package)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    from optkit.formulations.ddlwmp.model import DdlwmpInstance, evaluate as ddl_evaluate
    dinst = DdlwmpInstance.from_dict(json.loads(ddl.read_text()))
    schedule = json.loads((tmp_path / "s.json").read_text())
    dev = ddl_evaluate(dinst, schedule)
    assert summary["status"] == "feasible" and dev.feasible
    assert summary["objective"] == pytest.approx(dev.objectives["total_completion"])


def test_the_environment_variable_registers_unpackaged_code(tmp_path: Path) -> None:
    """``OPTKIT_ALGORITHMS=module:attr``: the module need not be a distribution; a list of
    algorithms is accepted; compare's worker processes find them too. (Three instances of the
    tiny suite: whether a worker process finds the plug-in does not depend on the instance, and
    the whole suite, 36 instances, made 72 runs where 6 show it.)"""
    (tmp_path / "mine.py").write_text(
        "from optkit import Algorithm\n"
        "from optkit.formulations.rar_ddls.baselines import run_ls\n"
        "def again(instance, *, objective, time_limit, seed):\n"
        "    return run_ls(instance, objective=objective, time_limit=time_limit, seed=seed)\n"
        "ALGORITHMS = [Algorithm('ls-again', again, 'heuristic', 'LS again', ('makespan',), problem='rar-ddls')]\n")
    env = {"OPTKIT_ALGORITHMS": "mine:ALGORITHMS", "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path)])}
    _generate(["rar-ddls", "--suite", "tiny"], tmp_path / "rar")
    rar = [str(p) for p in sorted((tmp_path / "rar").glob("*.json"))[:3]]
    out = _run(["compare", *rar, "--algorithms", "ls,ls-again", "--db", "r.sqlite", "--no-progress", "--jobs", "2"],
               tmp_path, None, **env)
    assert out.returncode == 0, out.stderr
    with sqlite3.connect(tmp_path / "r.sqlite") as db:
        got = dict(db.execute("select algorithm, count(*) from rows where status = 'feasible' group by algorithm"))
    assert got["ls-again"] == got["ls"] == 3


BAD_PLUG_INS = [
    ("ALGORITHM = Algorithm('ls', run, 'heuristic', 'clash', ('makespan',), problem='rar-ddls')",
     "rar-ddls: algorithm 'ls' of the plug-in OPTKIT_ALGORITHMS bad:ALGORITHM clashes with an algorithm of "
     "rar-ddls of the same name; rename the plug-in"),
    ("ALGORITHM = Algorithm('x', run, 'heuristic', 'no problem', ('makespan',))",
     "algorithm 'x' of OPTKIT_ALGORITHMS bad:ALGORITHM does not say its problem"),
    ("ALGORITHM = Algorithm('x', run, 'heuristic', 'unknown', ('makespan',), problem='tsp')",
     "is for the unknown problem 'tsp'"),
    ("ALGORITHM = 42", "OPTKIT_ALGORITHMS bad:ALGORITHM is of type int, not an optkit Algorithm"),
    ("OTHER = 1", "OPTKIT_ALGORITHMS names 'bad:ALGORITHM', which cannot be loaded: AttributeError"),
]


def _write_bad(folder: Path, source: str) -> None:
    (folder / "bad.py").write_text("from optkit import Algorithm\n"
                                   "def run(instance, *, objective, time_limit, seed): pass\n" + source + "\n")


def test_a_bad_plug_in_is_one_line_exit_2_from_the_command_line(tmp_path: Path) -> None:
    """The process's exit status and its one line on stderr, as a user's shell sees them (the
    other bad plug-ins: :func:`test_bad_plug_ins_are_one_line_exit_2`, through the same
    ``optkit.cli.main`` in this process)."""
    source, needle = BAD_PLUG_INS[0]
    _write_bad(tmp_path, source)
    out = _run(["list"], tmp_path, None, OPTKIT_ALGORITHMS="bad:ALGORITHM",
               PYTHONPATH=os.pathsep.join([str(REPO), str(tmp_path)]))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and needle in out.stderr, out.stderr


@pytest.mark.parametrize("source,needle", BAD_PLUG_INS)
def test_bad_plug_ins_are_one_line_exit_2(tmp_path: Path, source: str, needle: str, cli: Any) -> None:
    """``optkit list`` with ``OPTKIT_ALGORITHMS=bad:ALGORITHM`` (fixture :func:`cli`)."""
    _write_bad(tmp_path, source)
    assert "bad" not in sys.modules  # each case imports its own bad.py
    out = cli(["list"], tmp_path, None, OPTKIT_ALGORITHMS="bad:ALGORITHM", PYTHONPATH=str(tmp_path))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and needle in out.stderr, out.stderr


def test_register_algorithm_in_process(restore_registry: None) -> None:
    """A plug-in registered at run time is an algorithm of its problem for solve and for
    check_algorithm; registering another of the same name is an InputError."""
    from optkit.formulations.rar_ddls.baselines import run_ls
    from optkit.solve import solve

    def mine(instance: Any, *, objective: str, time_limit: float | None, seed: int | None) -> Result:
        return run_ls(instance, objective=objective, time_limit=time_limit, seed=seed)

    algo = Algorithm("mine", mine, "heuristic", "mine", (), problem="rar-ddls")
    registry.register_algorithm(algo)
    f = registry.get("rar-ddls")
    assert f.algorithms["mine"].objectives == f.objectives and f.algorithms["mine"].plugin == "register_algorithm"
    inst = default_instances("rar-ddls", 1)[0]
    assert solve("rar-ddls", inst, "mine").status is Status.FEASIBLE
    assert check_algorithm("rar-ddls", "mine", instances=[inst], seeds=(0,), objectives=["makespan"]).passed
    registry.register_algorithm(algo)  # the same plug-in again: no error
    with pytest.raises(InputError, match="'mine' is registered twice for rar-ddls"):
        registry.register_algorithm(Algorithm("mine", run_ls, "heuristic", "other", (), problem="rar-ddls"))
    with pytest.raises(InputError, match="clashes with an algorithm of rar-ddls"):
        registry.register_algorithm(Algorithm("sjf-bco", mine, "heuristic", "clash", (), problem="rar-ddls"))


def test_an_online_policy_plug_in_needs_a_driver(restore_registry: None) -> None:
    """A policy for a problem without a policy driver (rar-ddls) is refused, naming the way out."""
    p = OnlinePolicyPlugin("rar-ddls", "pol", lambda instance, *, seed=None: None, "a policy")
    with pytest.raises(InputError, match="no policy driver"):
        registry.register_algorithm(p)


def test_reproduce_adds_the_plug_in_as_an_extra_series(package: Path, tmp_path: Path, cli: Any) -> None:
    """``optkit reproduce sjf-bco-fig4`` measures the rar-ddls plug-in in Fig. 4's setting beside
    the paper's algorithms: a separate measurement (task ``sjf-bco-fig4:longest-first``) and an
    "Extra series" table on the page; the claims' verdicts are the paper's algorithms' alone."""
    out = cli(["reproduce", "sjf-bco-fig4", "--seeds", "1", "--readings", "default", "--out", "rep",
                "--no-progress"], tmp_path, package)
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "rep" / "sjf-bco.md").read_text()
    table = page.split("#### Extra series: plug-in algorithms", 1)[1]
    rows = {ln.split("|")[3].strip(): ln for ln in table.splitlines() if ln.startswith("| longest-first |")}
    assert set(rows) == {"makespan_slots", "mean_jct_slots", "sjf_bco_makespan_over_it", "sjf_bco_jct_over_it"}
    with sqlite3.connect(tmp_path / "rep" / "measurements.sqlite") as db:
        names = sorted(n for (n,) in db.execute("select instance_name from rows where status = 'feasible'"))
    assert names == ["sjf-bco-fig4", "sjf-bco-fig4:longest-first"]


def test_reproduce_series_tasks_follow_the_plug_ins(restore_registry: None) -> None:
    """Every experiment declaring ``series`` gets one task per plug-in, reading setting and seed;
    ``plugins=False`` (``--no-plugins``) and an experiment without ``series`` get none."""
    from optkit import reproduce as rep

    registry.register_algorithm(Algorithm("mine", lambda *a, **k: None, "heuristic", "mine", (), problem="rar-ddls"))
    f = registry.get("rar-ddls")
    exps = dict(f.experiments)
    fig4, fig5 = exps["sjf-bco-fig4"], exps["sjf-bco-fig5"]
    assert rep.plugin_series(f, fig4) == ["mine"] and rep.plugin_series(f, fig5) == []
    tasks = rep.measurement_tasks(f, fig4, [{}], [0, 1], "ci", rep.plugin_series(f, fig4))
    extra = [t for t in tasks if t.instance_name == "sjf-bco-fig4:mine"]
    assert len(tasks) == 4 and len(extra) == 2 and {t.params["algorithm"] for t in extra} == {"mine"}
    assert extra[0].algorithm == fig4.series and len({t.key for t in tasks}) == 4
    assert len(rep.measurement_tasks(f, fig4, [{}], [0, 1], "ci")) == 2
    series = {e.id for e in rep.experiments().values() for e in [e[1]] if e.series}
    assert series == {"a-srpt-sec5-fig6", "a-srpt-sec5-tau", "a-srpt-sec5-fig7", "a-srpt-sec5-fig8", "sjf-bco-fig4",
                      "sjf-bco-fig6", "a-srpt-table2-vgg19", "a-srpt-table2-gpt175b", "titan-fig1",
                      "titan-approximation", "titan-replay", "llm-gpu-mapping-gap", "llm-ddlwmp-shares"}


def _write_hived_again(folder: Path) -> None:
    """``folder/nimpplug.py``: HiveD's placement as an unpackaged nimp plug-in Algorithm,
    ``OPTKIT_ALGORITHMS=nimpplug:ALGORITHM``."""
    (folder / "nimpplug.py").write_text(
        "from optkit import Algorithm\n"
        "from optkit.formulations.nimp.baselines import run_hived\n"
        "def again(instance, *, objective, time_limit, seed):\n"
        "    return run_hived(instance, objective=objective, time_limit=time_limit, seed=seed)\n"
        "ALGORITHM = Algorithm('hived-again', again, 'heuristic', 'HiveD again', (), problem='nimp')\n")


def test_reproduce_adds_the_plug_in_to_the_titan_replay(tmp_path: Path) -> None:
    """``optkit reproduce titan-replay`` at ci scale replays the ITP window (here a small trace of
    the same format) under a plug-in Algorithm too (HiveD's placement again, through
    AlgorithmPolicy: one validated placement per job): a separate measurement
    (``titan-replay:hived-again``), an "Extra series" table on the page, and numbers that are the
    replay's own ``summarize`` of the same placements as HiveD's replay in the claims' measurement."""
    from tests.test_nimp_claims import _write_trace

    _write_trace(tmp_path / "traces")
    _write_hived_again(tmp_path)
    env = {"OPTKIT_ALGORITHMS": "nimpplug:ALGORITHM", "OPTKIT_TRACE_ROOT": str(tmp_path / "traces"),
           "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path)])}
    out = _run(["reproduce", "titan-replay", "--seeds", "1", "--readings", "default", "--out", "rep",
                "--no-progress"], tmp_path, None, **env)
    assert out.returncode == 0, out.stderr
    keys = {"used_machines_avg", "fragmentation_rate_pct", "cross_bytes_avg", "profit_rate_at_arrivals",
            "total_profit_at_arrivals", "queueing_delay_mean_s"}
    page = (tmp_path / "rep" / "titan.md").read_text()
    table = page.split("#### Extra series: plug-in algorithms", 1)[1]
    assert {ln.split("|")[3].strip() for ln in table.splitlines() if ln.startswith("| hived-again |")} == keys
    with sqlite3.connect(tmp_path / "rep" / "measurements.sqlite") as db:
        got = {n: (s, json.loads(m)) for n, s, m in db.execute("select instance_name, status, metrics from rows")}
    assert sorted(got) == ["titan-replay", "titan-replay:hived-again"]
    assert {s for s, _ in got.values()} == {"feasible"}
    series, hived = got["titan-replay:hived-again"][1], got["titan-replay"][1]["_details"]["policies"]["hived"]
    assert series["_details"]["summary"]["policy"] == "hived-again" and series["_details"]["summary"]["jobs"] == 40
    assert series["used_machines_avg"] == hived["used_machines_avg"] > 0
    assert series["fragmentation_rate_pct"] == pytest.approx(hived["fragmentation_rate_avg"] * 100, rel=1e-12)
    for k in ("cross_bytes_avg", "profit_rate_at_arrivals", "total_profit_at_arrivals", "queueing_delay_mean_s"):
        assert series[k] == hived[k], k


def test_a_series_run_on_the_papers_algorithm_gives_the_claims_values() -> None:
    """The series functions run an algorithm through ``solve``; run on the paper's own algorithm
    they measure what the claim's function measures by calling it directly."""
    from optkit.formulations.nimp import claims as nimp_claims
    from optkit.formulations.rar_ddls import claims as rar_claims

    series = nimp_claims.series_approximation("titan", readings={}, seed=0, scale="ci")
    claim = nimp_claims.measure_approximation(readings={}, seed=0, scale="ci")
    assert series["worst_ratio_theorem4"] == claim["titan-theorem4-ratio"]
    assert series["worst_ratio_theorem5"] == claim["titan-theorem5-ratio"]
    assert series["_details"]["compared"] == claim["_details"]["compared"]
    fig1 = nimp_claims.series_fig1("hived", readings={}, seed=0, scale="ci")
    assert fig1["cross_K"] == nimp_claims.measure_fig1(readings={}, seed=0, scale="ci")["titan-fig1-hived-cross"]
    fig4 = rar_claims.series_fig4("ls", readings={}, seed=0, scale="ci")
    assert fig4["makespan_slots"] == rar_claims.measure_fig4(readings={}, seed=0, scale="ci")[
        "_details"]["policies"]["ls"]["makespan"]


def test_simulate_nimp_replays_a_plug_in_algorithm(tmp_path: Path, cli: Any) -> None:
    """``optkit simulate nimp`` (the cluster replay) places each job with a plug-in algorithm
    (:class:`optkit.formulations.nimp.online.AlgorithmPolicy`): HiveD's placement as a plug-in
    gives HiveD's replay; a keyword the plug-in does not take is one line, exit 2."""
    _write_hived_again(tmp_path)
    env = {"OPTKIT_ALGORITHMS": "nimpplug:ALGORITHM", "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path)])}
    _generate(["nimp", "--param", "kind=replay", "--param", "jobs=60", "--param", "racks=2",
               "--param", "machines_per_rack=2", "--seed", "1"], tmp_path / "wl.json")
    got = {}
    for policy in ("hived", "hived-again"):
        out = cli(["simulate", "nimp", "wl.json", "-p", policy, "--json", "--out", f"{policy}.json"], tmp_path, None,
                  **env)
        assert out.returncode == 0, out.stderr
        got[policy] = json.loads(out.stdout)
    keys = ("jobs", "used_machines_avg", "machine_hours", "fragmentation_rate_avg", "total_cross_bytes")
    assert got["hived-again"]["policy"] == "hived-again"
    assert [got["hived-again"][k] for k in keys] == [got["hived"][k] for k in keys]
    assert json.loads((tmp_path / "hived-again.json").read_text()) == json.loads((tmp_path / "hived.json").read_text())
    out = cli(["simulate", "nimp", "wl.json", "-p", "hived-again", "--param", "foo=1"], tmp_path, None, **env)
    assert out.returncode == 2 and "--param foo is not a parameter of nimp/hived-again" in out.stderr


def test_a_nimp_online_policy_plug_in_runs_end_to_end(package: Path, tmp_path: Path, cli: Any) -> None:
    """The package's nimp online policy (``most-free-first``): ``solve`` and ``compare`` drive it
    over one instance (its job arrives at time 0; the decision is the placement, scored by
    ``evaluate``), and ``simulate`` replays a workload with it, as the in-process replay of the
    same policy does."""
    from optkit.formulations.nimp.model import NimpInstance, evaluate

    _generate(["nimp", "--suite", "tiny"], tmp_path / "nimp")
    files = sorted((tmp_path / "nimp").glob("*.json"))[:3]
    solved, inst, ev = _solve_and_evaluate(cli, "nimp", files[0], "most-free-first", tmp_path, package)
    assert solved["status"] == "feasible" and ev.feasible and solved["objective"] == ev.objectives["lex"]
    assert solved["solution"]["machine_of_worker"] == _most_free_first(inst)

    out = cli(["compare", *map(str, files), "--algorithms", "titan,most-free-first", "--db", "n.sqlite",
                "--no-progress", "--jobs", "1", "--time-limit", "60"], tmp_path, package)
    assert out.returncode == 0, out.stderr
    with sqlite3.connect(tmp_path / "n.sqlite") as db:
        got = dict(db.execute("select instance_name, status from rows where algorithm = 'most-free-first'"))
    # evaluate's verdict on the policy's placement (it ignores P, so a binding P rejects it: error)
    want = {str(f): "feasible" if evaluate(i, {"machine_of_worker": _most_free_first(i)}).feasible else "error"
            for f in files for i in [NimpInstance.from_dict(json.loads(f.read_text()))]}
    assert got == want and "feasible" in got.values()

    _generate(["nimp", "--param", "kind=replay", "--param", "jobs=40", "--param", "racks=2",
               "--param", "machines_per_rack=2", "--seed", "3"], tmp_path / "wl.json")
    out = cli(["simulate", "nimp", "wl.json", "-p", "most-free-first", "--json"], tmp_path, package)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    sys.path.insert(0, str(package))
    try:
        import greedyalgos  # the package's own code, made the way the registry makes it
    finally:
        sys.path.remove(str(package))
    from optkit.formulations.nimp.replay import cluster_instance, load_workload, replay, summarize

    jobs, topo, cfg = load_workload(tmp_path / "wl.json")
    direct = summarize(replay(jobs, greedyalgos.make_most_free_first(cluster_instance(jobs, topo, cfg)), topo=topo,
                              config=cfg))
    assert summary["policy"] == "most-free-first" and summary["jobs"] == direct["jobs"] == 40
    for key in ("used_machines_avg", "machine_hours", "fragmentation_rate_avg", "total_cross_bytes"):
        assert summary[key] == pytest.approx(direct[key], rel=1e-12), key


def _most_free_first(inst: Any) -> list[int]:
    """The package's policy by hand: machines by most idle GPUs (then index), filled in turn."""
    want: list[int] = []
    for s in sorted(range(inst.M), key=lambda s: (-inst.machines[s].idle_gpus, s)):
        want += [s] * min(inst.machines[s].idle_gpus, inst.N - len(want))
    return want


class _BadPolicy:
    """Starts the job on one machine for two of its workers only."""

    def __init__(self) -> None:
        self.job: Any = None

    def on_arrival(self, job: Any, now: float) -> None:
        self.job = job

    def on_completion(self, job_id: str, now: float) -> None:
        pass

    def decide(self, now: float, cluster: Any) -> list[Any]:
        from optkit.online import Decision

        return [Decision(self.job.id, {0: 2}, [[0, 0]])]

    def next_wakeup(self, now: float) -> None:
        return None


def test_a_bad_nimp_online_policy_is_refused_naming_the_field(restore_registry: None) -> None:
    """A plug-in whose ``make`` is not callable is refused at registration (``make``); a policy
    whose decision is not one machine per worker is refused when it runs (``decision.replicas``)."""
    from optkit.solve import solve

    with pytest.raises(InputError, match=r"^nimp: make of the online policy 'x' of register_algorithm must be a callable"):
        registry.register_algorithm(OnlinePolicyPlugin("nimp", "x", 42, "not callable"))  # type: ignore[arg-type]
    registry.register_algorithm(OnlinePolicyPlugin("nimp", "two-only", lambda instance, *, seed=None: _BadPolicy(),
                                                   "places two workers"))
    inst = {"problem": "nimp", "machines": [{"gpus": 4, "idle_gpus": 4}], "pair_capacity_bytes": 1e9,
            "job": {"workers": 3, "collective": "ring", "param_bytes": 1e8}}
    with pytest.raises(InputError, match=r"^nimp: decision\.replicas must be one row of 3 machines, one per worker "
                                         r"\(policy _BadPolicy, job job\), got rows of \[2\]$"):
        solve("nimp", inst, "two-only")
