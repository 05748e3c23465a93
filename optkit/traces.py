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
  present beside them, else from :data:`PAI_COLUMNS` (the published ones). The mapping:
  submission = ``job.start_time``; duration = ``end_time -
  start_time``; GPUs = ``ceil(sum over the job's tasks of plan_gpu/100 * inst_num)``; ``user`` from
  the job table; ``group`` and ``workload`` from the group-tag table joined on ``inst_id``.
* :func:`load_philly`: the per-job table derived from the Microsoft Philly trace (Jeon et al.,
  ATC '19) as published in the Sia artifact (``sia-simulator/traces/philly.csv``): header
  ``timestamp,duration,num_gpus,gpu_time,cluster``, submit times ``YYYY-MM-DD HH:MM:SS``, rows
  **not** sorted, a trailing blank line. ``submission_time`` = seconds from the earliest kept
  submission; no job id upstream, so ``job_id`` = ``L<line>`` (the row's line in the file);
  ``cluster`` = the Philly virtual cluster.
* :func:`load_trace` picks the loader of a CSV from its header (ITP or Philly).
* :func:`trace_root` finds ``$OPTKIT_TRACES`` or ``../shared/data/traces`` beside the repository
  (``None`` when absent),
  :func:`itp_files` lists the ITP CSVs there.

No trace file is shipped with optkit: users point the loaders at their own copy.
"""

from __future__ import annotations

import csv
import math
import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator, Sequence

from optkit.errors import InputError

__all__ = ["ITP_COLUMNS", "PAI_COLUMNS", "PHILLY_COLUMNS", "load_itp", "load_pai", "load_philly", "load_trace",
           "trace_root", "itp_files", "philly_file", "read_header"]

ITP_COLUMNS = ("job_id", "submission_time", "duration", "num_gpu")
PHILLY_COLUMNS = ("timestamp", "duration", "num_gpus", "gpu_time", "cluster")
PHILLY_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
PAI_COLUMNS = {
    "pai_job_table": ("job_name", "inst_id", "user", "status", "start_time", "end_time"),
    "pai_task_table": ("job_name", "task_name", "inst_num", "status", "start_time", "end_time", "plan_cpu",
                       "plan_mem", "plan_gpu", "gpu_type"),
    "pai_group_tag_table": ("inst_id", "user", "gpu_type_spec", "group", "workload"),
}


TRACES_ENV = "OPTKIT_TRACES"
"""Environment variable naming the folder that holds the traces (``microsoft-itp/``,
``philly-derived/``, ``alibaba-pai-2020/``), for a checkout that does not sit beside ``shared``
(a git worktree, a CI runner)."""


def trace_root() -> Path | None:
    """The traces folder: ``$OPTKIT_TRACES`` if set, else the first ``<dir>/shared/data/traces``
    that exists, ``<dir>`` walking up from the repository's parent (``../shared/data/traces``
    beside a checkout, ``../../shared/data/traces`` beside a worktree under ``wt/``); ``None`` if none."""
    env = os.environ.get(TRACES_ENV)
    if env:
        return Path(env) if Path(env).is_dir() else None
    for d in Path(__file__).resolve().parents[1].parents:
        p = d / "shared" / "data" / "traces"
        if p.is_dir():
            return p
    return None


def itp_files(root: str | Path | None = None) -> list[Path]:
    """The ``clusterNN.csv`` files under ``root/microsoft-itp`` (default :func:`trace_root`)."""
    base = Path(root) if root is not None else trace_root()
    if base is None or not (base / "microsoft-itp").is_dir():
        return []
    return sorted((base / "microsoft-itp").glob("cluster*.csv"))


def philly_file(root: str | Path | None = None) -> Path | None:
    """``root/philly-derived/philly.csv`` (default root :func:`trace_root`) if it exists, else ``None``."""
    base = Path(root) if root is not None else trace_root()
    if base is None:
        return None
    p = base / "philly-derived" / "philly.csv"
    return p if p.is_file() else None


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


def _headed_rows(path: Path, columns: tuple[str, ...]) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each data row of a headed CSV file: the file must exist, its header
    must be ``columns`` and every row must have ``len(columns)`` fields (errors name file:line)."""
    if not path.is_file():
        raise InputError(str(path), "is not a file")
    rows = _rows(path)
    try:
        line, header = next(rows)
    except StopIteration:
        raise InputError(_where(path, 1, "header"), "file is empty") from None
    if tuple(h.strip() for h in header) != columns:
        raise InputError(_where(path, line, "header"), f"must be {','.join(columns)}, got {','.join(header)}")
    for line, f in rows:
        _check_width(path, line, f, columns)
        yield line, f


def _check_width(path: Path, line: int, fields: list[str], columns: Sequence[str]) -> None:
    """A row must have one field per column (the error names the first missing or extra one)."""
    if len(fields) != len(columns):
        raise InputError(_where(path, line, columns[min(len(fields), len(columns) - 1)]),
                         f"row has {len(fields)} fields, expected {len(columns)} ({','.join(columns)})")


def _sorted(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for _, r in sorted(enumerate(records), key=lambda ir: (ir[1]["submission_time"], ir[0]))]


# ----------------------------------------------------------------------------- Microsoft ITP
def load_itp(path: str | Path, *, limit: int | None = None) -> list[dict[str, Any]]:
    """Records of one Microsoft ITP CSV (``job_id,submission_time,duration,num_gpu``), sorted by
    submission time; ``limit`` keeps the first ``limit`` rows of the file. Each record also gets
    ``cluster`` (the file's stem)."""
    path = Path(path)
    out: list[dict[str, Any]] = []
    for line, f in _headed_rows(path, ITP_COLUMNS):
        if limit is not None and len(out) >= limit:
            break
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


# ----------------------------------------------------------------------------- Philly (derived)
_PHILLY_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}")
"""The zero-padded form of :data:`PHILLY_TIME_FORMAT`, every timestamp of the published file."""


def _philly_time(text: str) -> datetime:
    """``datetime.strptime(text, PHILLY_TIME_FORMAT)``, the same value or the same ``ValueError``:
    a zero-padded ``YYYY-MM-DD HH:MM:SS`` is read by slicing (a third of strptime's time, which
    dominated reading the 82,247 rows), anything else (or an impossible date) goes to strptime."""
    if _PHILLY_TIME.fullmatch(text):
        try:
            return datetime(int(text[:4]), int(text[5:7]), int(text[8:10]),
                            int(text[11:13]), int(text[14:16]), int(text[17:19]))
        except ValueError:
            pass
    return datetime.strptime(text, PHILLY_TIME_FORMAT)


def load_philly(path: str | Path, *, clusters: Sequence[str] | None = None, limit: int | None = None,
                gpu_time_rtol: float = 1e-6) -> list[dict[str, Any]]:
    """Records of the Philly-derived per-job table (``timestamp,duration,num_gpus,gpu_time,cluster``;
    the Sia artifact's ``traces/philly.csv``), sorted by submission time (ties in file order).

    The rows are not sorted upstream: every row is read and checked, then sorted. ``timestamp`` is
    a naive ``YYYY-MM-DD HH:MM:SS`` (no time zone; only differences are used), and
    ``submission_time`` is the number of seconds since the earliest submission among the records
    returned (so the first record is at 0). ``duration`` (s) must be > 0, ``num_gpus`` an integer
    >= 1, and ``gpu_time`` must equal ``duration * num_gpus`` to within the relative tolerance
    ``gpu_time_rtol`` (it is derived upstream; a mismatch means a damaged row). ``clusters`` keeps
    only those virtual clusters; ``limit`` keeps the first ``limit`` records after sorting. Blank
    lines (the file ends with one) are skipped. Each record: ``job_id`` (``L<line>``, the file has
    no job id), ``submission_time``, ``duration``, ``num_gpu``, ``cluster``."""
    path = Path(path)
    if limit is not None and limit < 0:
        raise InputError("limit", f"must be >= 0, got {limit}")
    keep = set(clusters) if clusters is not None else None
    stamped: list[tuple[datetime, dict[str, Any]]] = []
    for line, f in _headed_rows(path, PHILLY_COLUMNS):
        text = f[0].strip()
        try:
            when = _philly_time(text)
        except ValueError:
            raise InputError(_where(path, line, "timestamp"), f"must be YYYY-MM-DD HH:MM:SS, got {f[0]!r}") from None
        duration = _float(f[1], path, line, "duration", low=0.0, strict_low=True)
        gpus = _int(f[2].strip(), path, line, "num_gpus", low=1)
        gpu_time = _float(f[3], path, line, "gpu_time", low=0.0)
        if abs(gpu_time - duration * gpus) > gpu_time_rtol * max(1.0, duration * gpus):
            raise InputError(_where(path, line, "gpu_time"),
                             f"must equal duration * num_gpus = {duration * gpus:g}, got {f[3]!r}")
        cluster = f[4].strip()
        if not cluster:
            raise InputError(_where(path, line, "cluster"), "must be non-empty")
        if keep is not None and cluster not in keep:
            continue
        stamped.append((when, {"job_id": f"L{line}", "submission_time": 0.0, "duration": duration,
                               "num_gpu": gpus, "cluster": cluster}))
    order = sorted(range(len(stamped)), key=lambda i: (stamped[i][0], i))
    if limit is not None:
        order = order[:limit]
    if not order:
        return []
    t0 = stamped[order[0]][0]
    out = []
    for i in order:
        when, rec = stamped[i]
        rec["submission_time"] = (when - t0).total_seconds()
        out.append(rec)
    return out


def load_trace(path: str | Path, *, fmt: str = "auto", limit: int | None = None) -> list[dict[str, Any]]:
    """Records of one trace CSV: ``fmt`` ``"itp"`` (:func:`load_itp`), ``"philly"``
    (:func:`load_philly`) or ``"auto"`` (by the header line: :data:`ITP_COLUMNS` or
    :data:`PHILLY_COLUMNS`). ``limit`` is passed on (ITP: first rows of the file, which is sorted;
    Philly: first records after sorting)."""
    if fmt not in ("auto", "itp", "philly"):
        raise InputError("trace_format", f"must be one of auto, itp, philly, got {fmt!r}")
    path = Path(path)
    if fmt == "auto":
        if not path.is_file():
            raise InputError(str(path), "is not a file")
        header: tuple[str, ...] = ()
        for _, fields in _rows(path):
            header = tuple(h.strip() for h in fields)
            break
        if header == ITP_COLUMNS:
            fmt = "itp"
        elif header == PHILLY_COLUMNS:
            fmt = "philly"
        else:
            raise InputError(_where(path, 1, "header"), f"is neither the ITP header ({','.join(ITP_COLUMNS)}) nor the "
                             f"Philly one ({','.join(PHILLY_COLUMNS)}), got {','.join(header) or 'an empty file'}")
    return load_itp(path, limit=limit) if fmt == "itp" else load_philly(path, limit=limit)


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
        _check_width(path, line, f, cols)
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
