"""Trace loaders (optkit/traces.py): Microsoft ITP CSVs, the Philly-derived table and the Alibaba PAI 2020 tables.

The real traces live in ``../shared/data/traces`` beside the repository and are never copied into
it; the tests that read them skip when the folder is absent. Everything else runs on fixture files
written here in the published formats.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from optkit.errors import InputError
from optkit.traces import (ITP_COLUMNS, PAI_COLUMNS, PHILLY_COLUMNS, itp_files, load_itp, load_pai, load_philly,
                           load_trace, philly_file, read_header, trace_root)
from tests.needs import needs_trace

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
    needs_trace(files, "microsoft-itp")
    small = [f for f in files if f.stem == "cluster10"] or files[:1]
    recs = load_itp(small[0])
    assert len(recs) > 100
    times = [r["submission_time"] for r in recs]
    assert times == sorted(times)
    assert all(r["duration"] > 0 and r["num_gpu"] >= 1 for r in recs)
    assert {r["num_gpu"] for r in recs} <= {1, 2, 4, 8, 16, 32, 64}


# ----------------------------------------------------------------------------- Philly (derived)
PHILLY_FIXTURE = (
    "timestamp,duration,num_gpus,gpu_time,cluster\n"
    "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
    "2017-10-09 06:13:03,2951.0,4,11804.0,6214e9\n"
    "2017-10-08 23:59:58,860662.0,1,860662.0,6c71a0\n"
    "2017-10-09 06:13:03,10.5,2,21.0,6214e9\n"
    "\n"  # the published file ends with one blank line
)


def test_philly_fixture_sorted_from_first_submission(tmp_path: Path) -> None:
    p = write(tmp_path / "philly.csv", PHILLY_FIXTURE)
    recs = load_philly(p)
    # rows unsorted in the file: sorted by timestamp, ties (06:13:03) in file order; job_id = L<line>
    assert [r["job_id"] for r in recs] == ["L4", "L3", "L5", "L2"]
    assert recs[0] == {"job_id": "L4", "submission_time": 0.0, "duration": 860662.0, "num_gpu": 1, "cluster": "6c71a0"}
    # 2017-10-08 23:59:58 -> 2017-10-09 06:13:03 crosses midnight: 6 h 13 min 5 s
    assert [r["submission_time"] for r in recs] == [0.0, 22385.0, 22385.0, 25317.0]
    assert [r["num_gpu"] for r in recs] == [1, 4, 2, 1]
    assert [r["job_id"] for r in load_philly(p, limit=2)] == ["L4", "L3"]
    only = load_philly(p, clusters=["6214e9"])  # times restart at the first kept submission
    assert [(r["job_id"], r["submission_time"]) for r in only] == [("L3", 0.0), ("L5", 0.0)]
    assert load_philly(p, clusters=["none"]) == []
    assert load_trace(p) == recs and load_trace(p, fmt="philly", limit=1) == recs[:1]


@pytest.mark.parametrize("row, column, message", [
    ("2017-10-09,66.0,1,66.0,11cb48", "timestamp", "YYYY-MM-DD HH:MM:SS"),
    ("2017-13-09 07:01:55,66.0,1,66.0,11cb48", "timestamp", "YYYY-MM-DD HH:MM:SS"),
    ("2017-10-09 07:01:55,0,1,0,11cb48", "duration", "> 0"),
    ("2017-10-09 07:01:55,abc,1,66.0,11cb48", "duration", "number"),
    ("2017-10-09 07:01:55,66.0,0,0,11cb48", "num_gpus", ">= 1"),
    ("2017-10-09 07:01:55,66.0,1.5,99.0,11cb48", "num_gpus", "integer"),
    ("2017-10-09 07:01:55,66.0,2,66.0,11cb48", "gpu_time", "duration * num_gpus"),
    ("2017-10-09 07:01:55,66.0,1,66.0,", "cluster", "non-empty"),
    ("2017-10-09 07:01:55,66.0,1,66.0", "cluster", "fields"),
])
def test_philly_bad_row_names_file_line_column(tmp_path: Path, row: str, column: str, message: str) -> None:
    good = PHILLY_FIXTURE.rstrip("\n") + "\n"
    p = write(tmp_path / "philly.csv", good + row + "\n\n")
    with pytest.raises(InputError) as err:
        load_philly(p)
    assert err.value.field == f"{p}:6:{column}"  # header = line 1, the bad row is line 6
    assert message in str(err.value) and f"philly.csv:6:{column}" in str(err.value)


def test_philly_bad_header_empty_missing(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r":1:header must be timestamp,duration,num_gpus,gpu_time,cluster"):
        load_philly(write(tmp_path / "h.csv", "time,duration,gpus,gpu_time,cluster\n"))
    with pytest.raises(InputError, match="empty"):
        load_philly(write(tmp_path / "e.csv", "\n"))
    with pytest.raises(InputError, match="not a file"):
        load_philly(tmp_path / "missing.csv")
    assert load_philly(write(tmp_path / "only_header.csv", "timestamp,duration,num_gpus,gpu_time,cluster\n\n")) == []


def test_load_trace_detects_format(tmp_path: Path) -> None:
    itp = write(tmp_path / "cluster99.csv", ITP_FIXTURE)
    assert load_trace(itp) == load_itp(itp)
    with pytest.raises(InputError, match="neither the ITP header"):
        load_trace(write(tmp_path / "x.csv", "a,b\n1,2\n"))
    with pytest.raises(InputError, match="trace_format"):
        load_trace(itp, fmt="pai")
    with pytest.raises(InputError, match=":1:header"):
        load_trace(itp, fmt="philly")


def test_philly_real_file_if_present() -> None:
    path = philly_file()
    needs_trace(path, "philly-derived/philly.csv")
    recs = load_philly(path)
    assert len(recs) == 82_247  # shared/data/README.md
    assert sum(r["num_gpu"] == 1 for r in recs) == 76_627
    assert max(r["num_gpu"] for r in recs) == 128
    assert len({r["cluster"] for r in recs}) == 15
    times = [r["submission_time"] for r in recs]
    assert times[0] == 0.0 and times == sorted(times)
    # 2017-09-04 to 2017-12-22: between 108 and 109 days from first to last submission
    assert 108 * 86400 < times[-1] < 109 * 86400
    assert all(r["duration"] > 0 for r in recs)
    assert load_trace(path, limit=5) == recs[:5]


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
    needs_trace(root, "folder (alibaba-pai-2020 headers)")
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
    assert PHILLY_COLUMNS == ("timestamp", "duration", "num_gpus", "gpu_time", "cluster")


# ----------------------------------------------------------------------------- wiring into ddlwmp
def test_ddlwmp_from_trace_reads_philly(tmp_path: Path) -> None:
    """formulations/ddlwmp/generate.py from_trace picks the Philly loader from the header."""
    from optkit.formulations.ddlwmp.generate import from_trace
    from optkit.formulations.ddlwmp.model import DdlwmpInstance

    p = write(tmp_path / "philly.csv", PHILLY_FIXTURE)
    d = from_trace(p, servers=1, seed=0, predictor=None)
    inst = DdlwmpInstance.from_dict({k: v for k, v in d.items() if k not in ("meta", "name")})
    assert [j.id for j in inst.jobs] == ["L4", "L3", "L5", "L2"]
    assert [j.release for j in inst.jobs] == [0.0, 22385.0, 22385.0, 25317.0]
    assert [inst.gpus(j) for j in inst.jobs] == [1, 4, 2, 1]
    assert d["meta"]["trace"] == str(p) and d["name"].startswith("trace_philly_n4_m1_s0")
    assert from_trace(p, servers=1, seed=0, predictor=None, trace_format="philly") == d
    with pytest.raises(InputError, match=":1:header"):
        from_trace(p, servers=1, seed=0, predictor=None, trace_format="itp")


def test_ddlwmp_from_trace_real_philly_if_present() -> None:
    from optkit.formulations.ddlwmp.generate import from_trace

    path = philly_file()
    needs_trace(path, "philly-derived/philly.csv")
    d = from_trace(path, servers=20, jobs=300, seed=0, predictor=None)
    assert len(d["jobs"]) == 300 and d["jobs"][0]["release"] == 0.0
    assert all(1 <= j["trace_gpus"] <= 160 for j in d["jobs"])
