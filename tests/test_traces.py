"""Trace loaders (optkit/traces.py): Microsoft ITP CSVs and the Alibaba PAI 2020 tables.

The real traces live in ``../shared/data/traces`` beside the repository and are never copied into
it; the tests that read them skip when the folder is absent. Everything else runs on fixture files
written here in the published formats.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from optkit.errors import InputError
from optkit.traces import ITP_COLUMNS, PAI_COLUMNS, itp_files, load_itp, load_pai, read_header, trace_root

ITP_FIXTURE = (
    "job_id,submission_time,duration,num_gpu\n"
    "a1,100,604,16\n"
    "b2,50,767,1\n"
    "c3,100,1200,8"  # no trailing newline, as upstream
)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_itp_fixture(tmp_path: Path) -> None:
    recs = load_itp(write(tmp_path / "cluster99.csv", ITP_FIXTURE))
    assert [r["job_id"] for r in recs] == ["b2", "a1", "c3"]  # by submission time, ties in file order
    assert recs[0] == {"job_id": "b2", "submission_time": 50.0, "duration": 767.0, "num_gpu": 1, "cluster": "cluster99"}
    assert len(load_itp(tmp_path / "cluster99.csv", limit=2)) == 2


@pytest.mark.parametrize("row, line, column", [
    ("x,10,abc,1", 3, "duration"),
    ("x,10,600,0", 3, "num_gpu"),
    ("x,10,600,1.5", 3, "num_gpu"),
    ("x,-1,600,1", 3, "submission_time"),
    (",10,600,1", 3, "job_id"),
    ("x,10,600", 3, "num_gpu"),
])
def test_itp_malformed_row_names_file_line_column(tmp_path: Path, row: str, line: int, column: str) -> None:
    p = write(tmp_path / "bad.csv", "job_id,submission_time,duration,num_gpu\na,1,600,1\n" + row + "\n")
    with pytest.raises(InputError) as err:
        load_itp(p)
    assert err.value.field == f"{p}:{line}:{column}"
    assert str(p) in str(err.value) and f":{line}:{column}" in str(err.value)


def test_itp_bad_header_and_empty(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r":1:header"):
        load_itp(write(tmp_path / "h.csv", "id,time,duration,gpus\na,1,2,3\n"))
    with pytest.raises(InputError, match="empty"):
        load_itp(write(tmp_path / "e.csv", ""))
    with pytest.raises(InputError, match="not a file"):
        load_itp(tmp_path / "missing.csv")


def test_itp_real_file_if_present() -> None:
    files = itp_files()
    if not files:
        pytest.skip("../shared/data/traces/microsoft-itp is absent")
    small = [f for f in files if f.stem == "cluster10"] or files[:1]
    recs = load_itp(small[0])
    assert len(recs) > 100
    times = [r["submission_time"] for r in recs]
    assert times == sorted(times)
    assert all(r["duration"] > 0 and r["num_gpu"] >= 1 for r in recs)
    assert {r["num_gpu"] for r in recs} <= {1, 2, 4, 8, 16, 32, 64}


# ----------------------------------------------------------------------------- Alibaba PAI
def pai_fixture(folder: Path, *, headers: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if headers:
        root = trace_root()
        for name, cols in PAI_COLUMNS.items():
            src = root / "alibaba-pai-2020" / f"{name}.header" if root is not None else None
            text = src.read_text() if src is not None and src.is_file() else ",".join(cols) + "\n"
            write(folder / f"{name}.header", text)
    write(folder / "pai_job_table.csv",
          "job1,inst1,alice,Terminated,1000,1600\n"
          "job2,inst2,bob,Terminated,900,1000\n"
          "job3,inst3,alice,Failed,950,990\n"
          "job4,inst4,carol,Terminated,980,1500\n"
          "job5,inst5,bob,Terminated,,\n")
    write(folder / "pai_task_table.csv",
          "job1,worker,2,Terminated,1000,1600,600,29.3,100,V100\n"
          "job1,ps,1,Terminated,1000,1600,600,29.3,,\n"
          "job2,tensorflow,1,Terminated,900,1000,600,29.3,50,T4\n"
          "job3,tensorflow,1,Failed,950,990,600,29.3,100,T4\n"
          "job4,tensorflow,1,Terminated,980,1500,600,29.3,,\n")
    write(folder / "pai_group_tag_table.csv",
          "inst1,alice,V100,grpA,bert\n"
          "inst2,bob,,grpB,\n")
    return folder


@pytest.mark.parametrize("headers", [True, False])
def test_pai_fixture(tmp_path: Path, headers: bool) -> None:
    recs = load_pai(pai_fixture(tmp_path / "pai", headers=headers))
    # job3 failed, job4 has no GPU, job5 has no times: skipped; sorted by start time
    assert recs == [
        {"job_id": "job2", "submission_time": 900.0, "duration": 100.0, "num_gpu": 1, "user": "bob",
         "group": "grpB", "workload": None},
        {"job_id": "job1", "submission_time": 1000.0, "duration": 600.0, "num_gpu": 2, "user": "alice",
         "group": "grpA", "workload": "bert"},
    ]
    every = load_pai(tmp_path / "pai", statuses=None, keep_cpu_jobs=True)
    assert [r["job_id"] for r in every] == ["job2", "job3", "job4", "job1"]
    assert every[2]["num_gpu"] == 0 and every[2]["group"] is None


def test_pai_header_files_match_published() -> None:
    root = trace_root()
    if root is None:
        pytest.skip("../shared/data/traces is absent")
    for name, cols in PAI_COLUMNS.items():
        assert read_header(root / "alibaba-pai-2020" / f"{name}.header") == cols


def test_pai_malformed(tmp_path: Path) -> None:
    folder = pai_fixture(tmp_path / "pai")
    write(folder / "pai_task_table.csv", "job1,worker,2,Terminated,1000,1600,600,29.3,lots,V100\n")
    with pytest.raises(InputError) as err:
        load_pai(folder)
    assert err.value.field == f"{folder / 'pai_task_table.csv'}:1:plan_gpu"
    write(folder / "pai_task_table.csv", "job1,worker,2\n")
    with pytest.raises(InputError, match=r"pai_task_table.csv:1:.*fields"):
        load_pai(folder)
    pai_fixture(folder)
    write(folder / "pai_job_table.csv", "job1,inst1,alice,Terminated,1000,900\n")
    with pytest.raises(InputError, match=r"pai_job_table.csv:1:end_time"):
        load_pai(folder)
    (folder / "pai_job_table.csv").unlink()
    with pytest.raises(InputError, match="pai_job_table.csv is required"):
        load_pai(folder)


def test_columns_constant() -> None:
    assert ITP_COLUMNS == ("job_id", "submission_time", "duration", "num_gpu")
