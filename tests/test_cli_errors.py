"""Every bad input or argument exits 2 with one line naming the field or argument, no traceback.

One table, one line per case: the command line (placeholders ``{name}`` are files the fixture
writes into ``tmp_path``, see :func:`files`) and a text the single stderr line must contain.
Runs in-process through :func:`optkit.cli.main` (argparse's own errors arrive as ``SystemExit(2)``).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from optkit.cli import main
from tests.test_gpu_mapping_model import FIG2

REPO = Path(__file__).resolve().parents[1]


def _tiny_bandwidth() -> dict[str, Any]:
    """Bandwidths of 1e-300 B/s: 1e10 parameter bytes take 1e310 s, beyond double precision."""
    d = copy.deepcopy(FIG2)
    d["cluster"].update(inter_bandwidth=1e-300, intra_bandwidth=1e-300)
    d["job"]["stages"][0]["param_bytes"] = 1e10
    return d


def _slow_stages() -> dict[str, Any]:
    d = copy.deepcopy(FIG2)
    for st in d["job"]["stages"]:
        st["fwd_time"] = st["bwd_time"] = 1e308
    return d


def _huge_replicas() -> dict[str, Any]:
    d = copy.deepcopy(FIG2)
    d["job"]["stages"] = [{"replicas": 1e30, "fwd_time": 0.01, "bwd_time": 0.02, "in_bytes": 0, "out_bytes": 0,
                           "param_bytes": 1e7}]
    return d


def _nimp(machines: int) -> dict[str, Any]:
    return {"problem": "nimp", "machines": [{"gpus": 8, "idle_gpus": 8}] * machines, "pair_capacity_bytes": 1e8,
            "job": {"workers": 2, "collective": "ring", "param_bytes": 1e8}}


def _shipped(folder: str, edit: Any) -> dict[str, Any]:
    """The first shipped instance of ``instances/<folder>``, after ``edit(d)``."""
    d = json.loads(sorted((REPO / "instances" / folder).glob("*.json"))[0].read_text())
    edit(d)
    return d


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every input file a case names, by placeholder; written once per module (the 100,000-machine
    nimp instance alone is a few megabytes of JSON), read by the cases, never written by them."""
    tmp_path = tmp_path_factory.mktemp("cli_inputs")
    out: dict[str, str] = {"readme": str(REPO / "README.md")}
    for name, data in {
        "fig2": FIG2, "bw": _tiny_bandwidth(), "slow": _slow_stages(),
        "replicas": _huge_replicas(), "nimp_big": _nimp(100_000), "ddl_empty": _shipped("ddlwmp/tiny", lambda d: d.update(jobs=[])),
        "ddl_servers": _shipped("ddlwmp/tiny", lambda d: d["cluster"].update(servers=10**12)),
        "rar_servers": _shipped("rar-ddls/tiny", lambda d: d["servers"].__setitem__(0, 10**30)),
        "nimp_workers": _shipped("nimp/tiny", lambda d: d["job"].update(workers=2**40)),
        "ddl_model_list": _shipped("ddlwmp/tiny", lambda d: d["jobs"][0].update(model=[])),
        "ddl_slow": _shipped("ddlwmp/tiny", lambda d: [s.update(fwd_time=1e308) for m in d["models"].values()
                                                       for s in m["stages"]]),
        "ddl_intra": _shipped("ddlwmp/tiny", lambda d: d["cluster"].update(intra_bandwidth=1e-300)),
        "rar_slot": _shipped("rar-ddls/tiny", lambda d: d.update(slot_seconds=1e308)),
        "misspelt": {**FIG2, "cluster": {**FIG2["cluster"], "inter_bandwith": 1.0}},
    }.items():
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(data))
        out[name] = str(p)
    (tmp_path / "binary.json").write_bytes(bytes(range(256)) * 4)
    out["binary"] = str(tmp_path / "binary.json")
    (tmp_path / "unterminated.json").write_text('{"problem": "gpu-mapping", "name": "oops}')
    out["unterminated"] = str(tmp_path / "unterminated.json")
    return out


@pytest.fixture
def files(inputs: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """Every file a case names, by placeholder: the module's inputs and ``{tmp}``, a fresh folder
    of this test's for what a command writes."""
    return {**inputs, "tmp": str(tmp_path)}


# (command line, text the one stderr line contains)
CASES = [
    ("validate {binary}", "is not a UTF-8 text (JSON) file"),
    ("validate {unterminated}", "Unterminated string starting at line 1"),
    ("solve gpu-mapping {replicas} -a heavy-edge", "job.stages[0].replicas must be <= 16384"),
    ("validate {nimp_big}", "machines lists 100000 machines"),
    ("validate {ddl_empty}", "jobs must be a non-empty list"),
    ("solve ddlwmp {ddl_servers} -a a-srpt", "cluster.servers must be <= 1000000"),
    ("solve rar-ddls {rar_servers} -a sjf-bco", "servers[0] must be <= 1000000"),
    ("solve nimp {nimp_workers} -a titan", "job.workers must be <= 4096"),
    ("solve ddlwmp {ddl_model_list} -a a-srpt", "jobs[0].model names no model"),
    ("solve ddlwmp {ddl_slow} -a a-srpt", "the numbers overflow"),
    ("solve ddlwmp {ddl_intra} -a a-srpt", "the numbers overflow"),
    ("solve rar-ddls {rar_slot} -a sjf-bco", "the numbers overflow"),
    ("validate {misspelt}", "cluster.inter_bandwith is not a field of cluster; did you mean 'inter_bandwidth'?"),
    ("solve gpu-mapping {bw} -a heavy-edge", "gives the non-finite"),
    ("solve gpu-mapping {slow} -a heavy-edge", "gives the non-finite"),
    ("solve gpu-mapping {fig2} -a random --seed -5", "argument --seed: must be an integer >= 0"),
    ("generate gpu-mapping --seed -1", "argument --seed: must be an integer >= 0"),
    ("report --db {readme}", "is not an optkit result store"),
    ("compare {fig2} -a x --db {readme}", "argument"),  # -a is not an option of compare
    ("compare {fig2} --algorithms heavy-edge --db {readme}", "is not an optkit result store"),
    ("solve gpu-mapping {fig2} -a heavy-edge --out {tmp}/missing/x.json", "--out"),
    ("simulate nimp {fig2} -p titan --out {tmp}/missing/s.json", "--out"),
    ("solve knapsack {fig2} -a heavy-edge", "known: ddlwmp, gpu-mapping, nimp, rar-ddls"),
    ("list knapsack", "known: ddlwmp, gpu-mapping, nimp, rar-ddls"),
    ("solve gpu-mapping {fig2} -a heavy-edge --time-limit inf", "argument --time-limit: must be a finite number"),
    ("simulate nimp {fig2} -p titan --time-limit inf", "argument --time-limit: must be a finite number"),
    ("compare {fig2} --time-limit inf --db {tmp}/r.sqlite", "argument --time-limit: must be a finite number"),
    ("solve gpu-mapping {fig2} -a heavy-edge --time-limit 0", "argument --time-limit: must be a finite number"),
    ("solve gpu-mapping {fig2}", "the following arguments are required: --algorithm"),
    ("solve gpu-mapping {fig2} -a heavy-edge-refine --param max_passes=x", "--param max_passes must be an integer"),
    ("solve gpu-mapping {fig2} -a heavy-edge-refine --param polish=3", "--param polish must be true or false"),
    ("solve gpu-mapping {fig2} -a heavy-edge-refine --param passes=3", "did you mean 'max_passes'?"),
    ("compare {fig2} --algorithms heavy-edge --seeds -5 --db {tmp}/r.sqlite", "--seeds must be integers"),
    ("generate nimp --param kind=replay --param job=3", "--param job is not a key of the nimp generator of kind replay; did you mean 'jobs'?"),
    ("generate gpu-mapping --param modle=bert-large", "did you mean 'model'?"),
]


@pytest.mark.parametrize("argv, needle", CASES, ids=[c[0] for c in CASES])
def test_bad_input_exits_2_with_one_line(files: dict[str, str], capsys: pytest.CaptureFixture[str],
                                         argv: str, needle: str) -> None:
    args = [a.format(**files) for a in argv.split()]
    try:
        code = main(args)
    except SystemExit as exc:  # argparse
        code = exc.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("optkit: error: "), err
    assert needle in lines[0] and "Traceback" not in err


def _parsers() -> list[tuple[str, Any]]:
    import argparse

    from optkit.cli import build_parser

    out, todo = [], [("optkit", build_parser())]
    while todo:
        name, parser = todo.pop()
        out.append((name, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += [(f"{name} {verb}", sub) for verb, sub in action.choices.items()]
    return out


def test_every_argument_of_every_verb_has_help_text() -> None:
    missing = [f"{name} {a.option_strings or a.dest}" for name, parser in _parsers() for a in parser._actions
               if a.help is None]
    assert missing == []


def test_validate_reports_every_violation_of_a_file_and_accepts_folders(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Three independent faults in one file (a misspelt key, a bandwidth of 0, a negative time):
    three lines, in the file's order; the valid file beside it in the folder is still checked."""
    bad = copy.deepcopy(FIG2)
    bad["cluster"]["inter_bandwith"] = 1.0
    bad["cluster"]["intra_bandwidth"] = 0
    bad["job"]["stages"][2]["fwd_time"] = -1
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bad.json").write_text(json.dumps(bad))
    (tmp_path / "good.json").write_text(json.dumps(FIG2))
    assert main(["validate", str(tmp_path)]) == 2
    cap = capsys.readouterr()
    assert cap.out.count(": valid gpu-mapping instance") == 1 and "good.json" in cap.out
    lines = cap.err.strip().splitlines()
    assert [ln.split("gpu-mapping: ")[1].split(" ")[0] for ln in lines] == [
        "cluster.inter_bandwith", "cluster.intra_bandwidth", "job.stages[2].fwd_time"]
    assert all("bad.json" in ln for ln in lines)
    assert main(["validate", str(tmp_path / "sub" / "bad.json"), "--max-errors", "2"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 3 and "stopped after 2 violations" in lines[2]
    assert main(["validate", str(tmp_path / "good.json")]) == 0


def test_list_and_generate_help_show_generator_keys(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "nimp"]) == 0
    out = capsys.readouterr().out
    assert "kind=replay: seed=0, jobs=200" in out
    assert main(["generate", "--help"]) == 0
    out = capsys.readouterr().out
    assert "gpu-mapping: model, config=None" in out and "rar-ddls: kind=tiny: seed=0, jobs=None" in out


def test_generate_replay_workload_then_simulate_writes_the_schedule_by_default(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``generate nimp --param kind=replay`` writes a workload of 12 jobs; ``simulate`` without
    ``--out`` writes ``w.titan.schedule.json`` in the working folder, one entry per job."""
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "nimp", "--param", "kind=replay", "--param", "jobs=12", "--seed", "3",
                 "--out", "w.json"]) == 0
    assert len(json.loads((tmp_path / "w.json").read_text())["jobs"]) == 12
    assert main(["simulate", "nimp", "w.json", "-p", "titan"]) == 0
    assert "schedule written to w.titan.schedule.json" in capsys.readouterr().out
    assert len(json.loads((tmp_path / "w.titan.schedule.json").read_text())["jobs"]) == 12
