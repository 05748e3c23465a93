"""The result store: one SQLite file (stdlib :mod:`sqlite3`, WAL journal) per set of sweeps.

Table ``rows`` holds one row per finished task, keyed by :attr:`optkit.harness.tasks.Task.key`;
table ``instances`` maps each instance content hash to its problem, name and JSON, so a report
can rebuild the instance (for the formulation's lower bound) without the original files;
table ``lower_bounds`` caches each formulation lower bound's outcome per instance and objective
(:mod:`optkit.harness.bounds`), so no report computes a slow bound twice.

Rows are written (and committed) the moment each task finishes, so a killed sweep loses only the
tasks that were running. Only the process driving a sweep writes; WAL lets ``optkit report`` read
the file while a sweep is still writing it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from optkit.errors import InputError
from optkit.harness.bounds import StoredInstances
from optkit.harness.worker import ROW_FIELDS

__all__ = ["ResultStore", "SCHEMA_VERSION", "FAILED_STATUSES"]

SCHEMA_VERSION = 2
"""1: the first schema; 2: ``rows.anytime`` (a JSON trajectory, :mod:`optkit.anytime`). A
version-1 store is migrated in place when opened (the column is added, ``NULL`` in its old rows:
"not recorded", which the report names)."""
FAILED_STATUSES = ("time_limit", "error")
"""Statuses a ``--retry-failed`` run redoes (a plain re-run skips them like any finished row)."""

_JSON_COLUMNS = ("params", "solution", "metrics", "info", "anytime")
_NULLABLE_JSON = ("solution", "anytime")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS instances (
    instance_hash TEXT PRIMARY KEY,
    problem       TEXT NOT NULL,
    name          TEXT NOT NULL,
    data          TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rows (
    key            TEXT PRIMARY KEY,
    instance_hash  TEXT NOT NULL,
    problem        TEXT NOT NULL,
    instance_name  TEXT NOT NULL,
    source         TEXT NOT NULL DEFAULT '',
    algorithm      TEXT NOT NULL,
    objective_name TEXT NOT NULL,
    params         TEXT NOT NULL DEFAULT '{}',
    seed           INTEGER,
    time_limit     REAL,
    status         TEXT NOT NULL,
    objective      REAL,
    bound          REAL,
    wall_time_s    REAL,
    solution       TEXT,
    metrics        TEXT NOT NULL DEFAULT '{}',
    info           TEXT NOT NULL DEFAULT '{}',
    message        TEXT NOT NULL DEFAULT '',
    finished_at    TEXT NOT NULL,
    anytime        TEXT
);
CREATE INDEX IF NOT EXISTS rows_problem ON rows (problem, objective_name, algorithm);
CREATE INDEX IF NOT EXISTS rows_instance ON rows (instance_hash, objective_name);
CREATE TABLE IF NOT EXISTS lower_bounds (
    instance_hash  TEXT NOT NULL,
    objective_name TEXT NOT NULL,
    status         TEXT NOT NULL,
    value          REAL,
    message        TEXT NOT NULL DEFAULT '',
    time_limit     REAL NOT NULL,
    code           TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (instance_hash, objective_name)
);
"""


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, allow_nan=True)


def _encode_number(value: Any) -> Any:
    """A scalar objective/bound as REAL; a lexicographic one (a list) as its JSON text."""
    if isinstance(value, (list, tuple)):
        return _dump(list(value))
    return value


def _decode_number(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("["):
        return json.loads(value)
    return value


class ResultStore:
    """Rows and instances of comparison sweeps in one SQLite file.

    Use as a context manager, or call :meth:`close`. ``path`` ``":memory:"`` keeps everything in
    memory (tests).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        if Path(self.path).is_dir():
            raise InputError("db", f"{self.path} is a folder, not a result store (an SQLite file)")
        self._conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        try:
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:  # e.g. "file is not a database"
            self._conn.close()
            raise InputError("db", f"{self.path} is not an optkit result store (SQLite): {exc}") from None
        if version not in (0, 1, SCHEMA_VERSION):
            self._conn.close()
            raise RuntimeError(f"{self.path} has result-store schema {version}; this optkit writes {SCHEMA_VERSION}")
        self._conn.executescript(_SCHEMA)
        if "anytime" not in {r[1] for r in self._conn.execute("PRAGMA table_info(rows)")}:  # schema 1
            self._conn.execute("ALTER TABLE rows ADD COLUMN anytime TEXT")
        columns = {r[1] for r in self._conn.execute("PRAGMA table_info(lower_bounds)")}
        if "code" not in columns:  # a cache written before outcomes were tagged: start it afresh
            self._conn.execute("DROP TABLE lower_bounds")
            self._conn.executescript(_SCHEMA)
        self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    # -- life cycle
    def close(self) -> None:
        """Close the connection (idempotent)."""
        try:
            self._conn.close()
        except sqlite3.ProgrammingError:
            pass

    def __enter__(self) -> "ResultStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- instances
    def add_instances(self, instances: Iterable[tuple[str, str, str, Mapping[str, Any]]]) -> None:
        """Record ``(instance_hash, problem, name, data)`` tuples; known hashes keep their first name."""
        with self._conn:
            self._conn.execute("BEGIN")
            self._conn.executemany(
                "INSERT OR IGNORE INTO instances (instance_hash, problem, name, data) VALUES (?, ?, ?, ?)",
                [(h, p, n, _dump(dict(d))) for h, p, n, d in instances],
            )

    def instances(self, problem: str | None = None) -> dict[str, dict[str, Any]]:
        """``{instance_hash: {"problem", "name", "data"}}`` of every stored instance (a
        :class:`~optkit.harness.bounds.StoredInstances` whose ``store`` is this store)."""
        sql = "SELECT instance_hash, problem, name, data FROM instances"
        args: tuple[Any, ...] = ()
        if problem is not None:
            sql += " WHERE problem = ?"
            args = (problem,)
        out = StoredInstances(
            (r["instance_hash"], {"problem": r["problem"], "name": r["name"], "data": json.loads(r["data"])})
            for r in self._conn.execute(sql, args))
        out.store = self
        return out

    # -- cached lower bounds
    def cached_bounds(self, hashes: Iterable[str], code: str = "") -> dict[tuple[str, str], tuple[str, float | None, str, float]]:
        """``{(instance_hash, objective): (status, value, message, time_limit)}`` cached for ``hashes``
        by the bound code ``code`` (outcomes of other code are ignored)."""
        wanted = set(hashes)
        rows = self._conn.execute(
            "SELECT instance_hash, objective_name, status, value, message, time_limit FROM lower_bounds WHERE code = ?",
            (code,))
        return {(r[0], r[1]): (r[2], r[3], r[4], r[5]) for r in rows if r[0] in wanted}

    def put_bounds(self, entries: Iterable[tuple[str, str, str, float | None, str, float]], code: str = "") -> None:
        """Cache ``(instance_hash, objective, status, value, message, time_limit)`` outcomes of the
        bound code ``code`` (replacing)."""
        with self._conn:
            self._conn.execute("BEGIN")
            self._conn.executemany(
                "INSERT OR REPLACE INTO lower_bounds (instance_hash, objective_name, status, value, message, "
                "time_limit, code) VALUES (?, ?, ?, ?, ?, ?, ?)", [(*e, code) for e in entries])

    # -- rows
    def put_row(self, row: Mapping[str, Any], *, replace: bool = True) -> None:
        """Write one finished task's row and commit at once.

        ``replace=False`` keeps an existing row of the same key (first finish wins).
        """
        values = []
        for f in ROW_FIELDS:
            v = row.get(f)
            if f in _JSON_COLUMNS:
                v = None if (v is None and f in _NULLABLE_JSON) else _dump(v if v is not None else {})
            elif f in ("objective", "bound"):
                v = _encode_number(v)
            elif f in ("source", "message"):
                v = v or ""
            values.append(v)
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        cols = ", ".join(ROW_FIELDS)
        marks = ", ".join("?" for _ in ROW_FIELDS)
        with self._conn:
            self._conn.execute(f"{verb} INTO rows ({cols}) VALUES ({marks})", values)

    def done_keys(self, *, include_failed: bool = True) -> set[str]:
        """Keys of finished tasks a re-run skips.

        With ``include_failed`` false (``--retry-failed``), rows that ended ``time_limit`` or
        ``error`` are not counted as done, so they run again (and their rows are replaced).
        """
        sql = "SELECT key FROM rows"
        if not include_failed:
            sql += f" WHERE status NOT IN ({', '.join('?' for _ in FAILED_STATUSES)})"
            return {r[0] for r in self._conn.execute(sql, FAILED_STATUSES)}
        return {r[0] for r in self._conn.execute(sql)}

    def _decode(self, r: sqlite3.Row) -> dict[str, Any]:
        d = dict(r)
        for f in _JSON_COLUMNS:
            if d.get(f) is not None:
                d[f] = json.loads(d[f])
        d["objective"] = _decode_number(d["objective"])
        d["bound"] = _decode_number(d["bound"])
        return d

    def iter_rows(self, *, problem: str | None = None, keys: Iterable[str] | None = None) -> Iterator[dict[str, Any]]:
        """Stored rows as dicts (JSON columns decoded), ordered by problem, objective, algorithm, instance."""
        sql = "SELECT * FROM rows"
        args: list[Any] = []
        if problem is not None:
            sql += " WHERE problem = ?"
            args.append(problem)
        sql += " ORDER BY problem, objective_name, algorithm, instance_name, seed, key"
        wanted = set(keys) if keys is not None else None
        for r in self._conn.execute(sql, args).fetchall():
            if wanted is None or r["key"] in wanted:
                yield self._decode(r)

    def rows(self, *, problem: str | None = None, keys: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """:meth:`iter_rows` as a list."""
        return list(self.iter_rows(problem=problem, keys=keys))

    def problems(self) -> list[str]:
        """Problems with at least one stored row."""
        return [r[0] for r in self._conn.execute("SELECT DISTINCT problem FROM rows ORDER BY problem")]

    def count(self) -> int:
        """Number of stored rows."""
        return int(self._conn.execute("SELECT COUNT(*) FROM rows").fetchone()[0])
