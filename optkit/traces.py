"""Loaders of public GPU-cluster job traces into plain job records.

Every loader returns a list of dicts with at least ``job_id`` (str), ``submission_time`` (s),
``duration`` (s) and ``num_gpu`` (int), sorted by (submission_time, file order); traces that have
them add ``user``, ``group`` and ``workload``. Malformed input raises
:class:`optkit.errors.InputError` whose field is ``<file>:<line>:<column>`` (line numbers are
1-based and count the header line when the file has one).

* :func:`load_itp`: one Microsoft ITP CSV (``clusterNN.csv`` of microsoft/elasticflow-traces):
  header ``job_id,submission_time,duration,num_gpu``.
* :func:`load_pai`: the Alibaba PAI 2020 tables (Weng et al., NSDI '22), which have **no header
  row**: ``pai_job_table.csv``, ``pai_task_table.csv`` and, optionally,
  ``pai_group_tag_table.csv`` in one folder. Column names come from the ``*.header`` files when
  present beside them, else from :data:`PAI_COLUMNS` (the published ones). The mapping is the
  one of ``shared/data/README.md``: submission = ``job.start_time``; duration = ``end_time -
  start_time``; GPUs = ``ceil(sum over the job's tasks of plan_gpu/100 * inst_num)``; ``user`` from
  the job table; ``group`` and ``workload`` from the group-tag table joined on ``inst_id``.
* :func:`trace_root` finds ``../shared/data/traces`` beside the repository (``None`` when absent),
  :func:`itp_files` lists the ITP CSVs there.

No trace file is shipped with optkit: users point the loaders at their own copy.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any, Iterator, Sequence

from optkit.errors import InputError

__all__ = ["ITP_COLUMNS", "PAI_COLUMNS", "load_itp", "load_pai", "trace_root", "itp_files", "read_header"]

ITP_COLUMNS = ("job_id", "submission_time", "duration", "num_gpu")
PAI_COLUMNS = {
    "pai_job_table": ("job_name", "inst_id", "user", "status", "start_time", "end_time"),
    "pai_task_table": ("job_name", "task_name", "inst_num", "status", "start_time", "end_time", "plan_cpu",
                       "plan_mem", "plan_gpu", "gpu_type"),
    "pai_group_tag_table": ("inst_id", "user", "gpu_type_spec", "group", "workload"),
}


def trace_root() -> Path | None:
    """``<repository>/../shared/data/traces`` if it exists, else ``None``."""
    p = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "traces"
    return p if p.is_dir() else None


def itp_files(root: str | Path | None = None) -> list[Path]:
    """The ``clusterNN.csv`` files under ``root/microsoft-itp`` (default :func:`trace_root`)."""
    base = Path(root) if root is not None else trace_root()
    if base is None or not (base / "microsoft-itp").is_dir():
        return []
    return sorted((base / "microsoft-itp").glob("cluster*.csv"))


def _where(path: Path, line: int, column: str) -> str:
    return f"{path}:{line}:{column}"


def _float(text: str, path: Path, line: int, column: str, *, low: float | None = None,
           strict_low: bool = False) -> float:
    try:
        v = float(text)
    except ValueError:
        raise InputError(_where(path, line, column), f"must be a number, got {text!r}") from None
    if not math.isfinite(v):
        raise InputError(_where(path, line, column), f"must be finite, got {text!r}")
    if low is not None and (v <= low if strict_low else v < low):
        raise InputError(_where(path, line, column), f"must be {'>' if strict_low else '>='} {low:g}, got {text!r}")
    return v


def _int(text: str, path: Path, line: int, column: str, *, low: int) -> int:
    try:
        v = int(text)
    except ValueError:
        raise InputError(_where(path, line, column), f"must be an integer, got {text!r}") from None
    if v < low:
        raise InputError(_where(path, line, column), f"must be >= {low}, got {text!r}")
    return v


def _rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(1-based line number, fields) of each non-blank line."""
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        for fields in reader:
            if not fields or all(not f.strip() for f in fields):
                continue
            yield reader.line_num, fields


def _sorted(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for _, r in sorted(enumerate(records), key=lambda ir: (ir[1]["submission_time"], ir[0]))]


# ----------------------------------------------------------------------------- Microsoft ITP
def load_itp(path: str | Path, *, limit: int | None = None) -> list[dict[str, Any]]:
    """Records of one Microsoft ITP CSV (``job_id,submission_time,duration,num_gpu``), sorted by
    submission time; ``limit`` keeps the first ``limit`` rows of the file. Each record also gets
    ``cluster`` (the file's stem)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(str(path), "is not a file")
    out: list[dict[str, Any]] = []
    rows = _rows(path)
    try:
        line, header = next(rows)
    except StopIteration:
        raise InputError(_where(path, 1, "header"), "file is empty") from None
    if tuple(h.strip() for h in header) != ITP_COLUMNS:
        raise InputError(_where(path, line, "header"), f"must be {','.join(ITP_COLUMNS)}, got {','.join(header)}")
    for line, f in rows:
        if limit is not None and len(out) >= limit:
            break
        if len(f) != len(ITP_COLUMNS):
            raise InputError(_where(path, line, ITP_COLUMNS[min(len(f), len(ITP_COLUMNS) - 1)]),
                             f"row has {len(f)} fields, expected {len(ITP_COLUMNS)}")
        if not f[0].strip():
            raise InputError(_where(path, line, "job_id"), "must be non-empty")
        out.append({
            "job_id": f[0].strip(),
            "submission_time": _float(f[1], path, line, "submission_time", low=0.0),
            "duration": _float(f[2], path, line, "duration", low=0.0, strict_low=True),
            "num_gpu": _int(f[3].strip(), path, line, "num_gpu", low=1),
            "cluster": path.stem,
        })
    return _sorted(out)


# ----------------------------------------------------------------------------- Alibaba PAI
def read_header(path: str | Path) -> tuple[str, ...]:
    """Column names of a ``*.header`` file (one comma-separated line)."""
    text = Path(path).read_text(encoding="utf-8").strip()
    cols = tuple(c.strip() for c in text.split(","))
    if not text or any(not c for c in cols):
        raise InputError(str(path), f"must hold one line of comma-separated column names, got {text!r}")
    return cols


def _table(folder: Path, name: str, required: Sequence[str]) -> list[tuple[int, dict[str, str]]] | None:
    path = folder / f"{name}.csv"
    if not path.is_file():
        return None
    header = folder / f"{name}.header"
    cols = read_header(header) if header.is_file() else PAI_COLUMNS[name]
    missing = [c for c in required if c not in cols]
    if missing:
        raise InputError(str(header), f"lacks the column(s) {', '.join(missing)}")
    out = []
    for line, f in _rows(path):
        if len(f) != len(cols):
            raise InputError(_where(path, line, cols[min(len(f), len(cols) - 1)]),
                             f"row has {len(f)} fields, expected {len(cols)} ({','.join(cols)})")
        out.append((line, dict(zip(cols, (x.strip() for x in f)))))
    return out


def load_pai(folder: str | Path, *, statuses: Sequence[str] | None = ("Terminated",),
             keep_cpu_jobs: bool = False) -> list[dict[str, Any]]:
    """Job records of the Alibaba PAI 2020 tables in ``folder`` (see the module docstring).

    Jobs whose status is not in ``statuses`` (``None``: keep all) or that lack a start or end
    time are skipped; so are jobs that request no GPU unless ``keep_cpu_jobs``. ``group`` and
    ``workload`` are ``None`` when the group-tag table is absent or has no row for the job's
    ``inst_id`` (the empty string upstream also reads as ``None``)."""
    folder = Path(folder)
    jobs = _table(folder, "pai_job_table", ("job_name", "inst_id", "user", "status", "start_time", "end_time"))
    if jobs is None:
        raise InputError(str(folder / "pai_job_table.csv"), "is required")
    tasks = _table(folder, "pai_task_table", ("job_name", "inst_num", "plan_gpu"))
    if tasks is None:
        raise InputError(str(folder / "pai_task_table.csv"), "is required")
    tags = _table(folder, "pai_group_tag_table", ("inst_id", "group", "workload")) or []
    task_path = folder / "pai_task_table.csv"
    gpus: dict[str, float] = {}
    for line, t in tasks:
        plan = _float(t["plan_gpu"], task_path, line, "plan_gpu", low=0.0) if t["plan_gpu"] else 0.0
        inst = _float(t["inst_num"], task_path, line, "inst_num", low=0.0) if t["inst_num"] else 0.0
        gpus[t["job_name"]] = gpus.get(t["job_name"], 0.0) + plan / 100.0 * inst
    tag_of = {t["inst_id"]: t for _, t in tags}
    job_path = folder / "pai_job_table.csv"
    out = []
    for line, j in jobs:
        if statuses is not None and j["status"] not in statuses:
            continue
        if not j["start_time"] or not j["end_time"]:
            continue
        start = _float(j["start_time"], job_path, line, "start_time", low=0.0)
        end = _float(j["end_time"], job_path, line, "end_time")
        if end < start:
            raise InputError(_where(job_path, line, "end_time"), f"{j['end_time']} is before start_time {j['start_time']}")
        g = gpus.get(j["job_name"], 0.0)
        n = int(math.ceil(g - 1e-9)) if g > 0 else 0
        if n == 0 and not keep_cpu_jobs:
            continue
        tag = tag_of.get(j["inst_id"], {})
        out.append({
            "job_id": j["job_name"],
            "submission_time": start,
            "duration": end - start,
            "num_gpu": n,
            "user": j["user"] or None,
            "group": tag.get("group") or None,
            "workload": tag.get("workload") or None,
        })
    return _sorted(out)
