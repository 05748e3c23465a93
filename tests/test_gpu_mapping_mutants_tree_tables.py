"""The command that regenerates gpu-mapping's shipped tree tables (formulations/gpu_mapping/tree_tables.py,
``main``, named by each file's ``regenerate``) and CP-SAT's table generator, on a table small enough
to make in a test (k = 6, parts of at most 3: seven partitions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optkit.formulations.gpu_mapping import tree_tables

PROG = "python -m optkit.formulations.gpu_mapping.tree_tables"


def test_the_regeneration_command_names_itself_as_the_shipped_files_do(capsys: pytest.CaptureFixture[str]) -> None:
    """Each shipped file's ``regenerate`` is this command's usage: its program name, then K
    LARGEST [--cpsat] PATH; ``--help`` says what ``--cpsat`` does."""
    with pytest.raises(SystemExit) as stop:
        tree_tables.main(["--help"])
    assert stop.value.code == 0
    usage = " ".join(capsys.readouterr().out.split())
    assert usage.startswith(f"usage: {PROG} ")
    assert "--cpsat CP-SAT per partition (the k = 16 table)" in usage
    for (k, largest), name in tree_tables.TABLE_FILES.items():
        head = json.loads(Path(tree_tables.__file__).with_name(name).read_text(encoding="utf-8"))
        assert head["regenerate"].startswith(f"{PROG} {k} {largest} "), name


def test_the_regeneration_command_prints_or_writes_its_generators_table(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``K LARGEST``: the dynamic programme's table, printed in :func:`tree_tables.encode_table`'s
    format. ``K LARGEST --cpsat PATH``: CP-SAT's (:func:`tree_tables.partition_costs_by_cpsat`),
    written to PATH and nothing printed: the partitions in decreasing order, each least cut the
    dynamic programme's (both are exact), each arrangement with its partition's block sizes."""
    dp = tree_tables.partition_costs_by_dp(6, 3)
    tree_tables.main(["6", "3"])
    assert capsys.readouterr().out == tree_tables.encode_table(6, 3, dp, method="dp")
    path = tmp_path / "k6.json"
    tree_tables.main(["6", "3", "--cpsat", str(path)])
    assert capsys.readouterr().out == ""
    text = path.read_text(encoding="utf-8")
    head = json.loads(text)
    assert (head["k"], head["largest"], head["method"]) == (6, 3, "exact_partition_cost")
    assert head["regenerate"] == f"{PROG} 6 3 --cpsat formulations/gpu_mapping/tree_table_k6.json"
    cpsat = tree_tables.decode_table(text)
    assert list(cpsat) == sorted(dp, reverse=True) == [(3, 3), (3, 2, 1), (3, 1, 1, 1), (2, 2, 2), (2, 2, 1, 1),
                                                       (2, 1, 1, 1, 1), (1, 1, 1, 1, 1, 1)]
    assert {q: cost for q, (cost, _) in cpsat.items()} == {q: cost for q, (cost, _) in dp.items()}
    assert all([arrangement.count(j) for j in range(len(q))] == list(q) for q, (_, arrangement) in cpsat.items())
