"""The result store: one SQLite file (stdlib :mod:`sqlite3`, WAL journal) per set of sweeps.

Table ``rows`` holds one row per finished task, keyed by :attr:`optkit.harness.tasks.Task.key`;
table ``instances`` maps each instance content hash to its problem, name and JSON, so a report
can rebuild the instance (for the formulation's lower bound) without the original files;
table ``lower_bounds`` caches each formulation lower bound's outcome per instance and objective
(:mod:`optkit.harness.bounds`), so no report computes a slow bound twice; table ``sweeps`` holds
what each sweep was measured with (:func:`optkit.harness.environment.environment`: the machine,
its cores, ``--jobs``, the time limit and the package versions), and each row the sweep that ran
it (``rows.sweep``; ``NULL`` in rows stored before schema 3: "not recorded").

Rows are written (and committed) the moment each task finishes, so a killed sweep loses only the
tasks that were running. Only the process driving a sweep writes; WAL lets ``optkit report`` read
the file while a sweep is still writing it.

Opening a file that exists reads it first through a read-only connection and checks that it is an
optkit store (:func:`check_store`): a file that is not SQLite, another program's database, an
empty database (for a reader) or a store of a newer schema is an
:class:`~optkit.errors.InputError` naming ``db``, and the file is left byte for byte as it was
(no table added, no switch to WAL). Only a verified store is opened for writing (and an older
schema migrated in place).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from optkit.errors import InputError
from optkit.harness.bounds import StoredInstances
from optkit.harness.worker import ROW_FIELDS

__all__ = ["ResultStore", "SCHEMA_VERSION", "FAILED_STATUSES", "check_store"]

SCHEMA_VERSION = 3
"""1: the first schema; 2: ``rows.anytime`` (a JSON trajectory, :mod:`optkit.anytime`); 3: table
``sweeps`` and ``rows.sweep`` (what each run was measured with). An older store is migrated in
place when opened for writing (the columns are added, ``NULL`` in its old rows: "not recorded",
which the report names)."""
_ROW_COLUMNS_REQUIRED = frozenset(("key", "instance_hash", "problem", "instance_name", "algorithm", "objective_name",
                                   "params", "seed", "time_limit", "status", "objective", "bound", "wall_time_s",
                                   "finished_at"))
"""The columns of ``rows`` every schema has: a file whose ``rows`` table lacks one is no optkit store."""
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
    anytime        TEXT,
    sweep          INTEGER
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
CREATE TABLE IF NOT EXISTS sweeps (
    id          INTEGER PRIMARY KEY,
    started_at  TEXT NOT NULL,
    machine     TEXT NOT NULL,
    cores       INTEGER,
    jobs        INTEGER,
    executor    TEXT NOT NULL DEFAULT '',
    time_limit  REAL,
    versions    TEXT NOT NULL DEFAULT '{}'
);
"""
_SWEEP_FIELDS = ("started_at", "machine", "cores", "jobs", "executor", "time_limit", "versions")


def check_store(path: str | Path, *, reader: bool = False) -> int:
    """The schema version of the optkit store at ``path``, read through a read-only connection
    (nothing is written, the journal mode is left alone, and a WAL file that has no write-ahead
    log gets none: it is read as immutable); 0 for a database without any table (a new store for
    a writer; a ``reader`` refuses it: there is nothing to read).

    Raises :class:`~optkit.errors.InputError` (field ``db``) for a file that is not SQLite, a
    database with tables of its own and no optkit ``rows`` table (or one lacking optkit's
    columns), and a store of a schema newer than :data:`SCHEMA_VERSION`.
    """
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    with open(path, "rb") as fh:
        header = fh.read(100)
    if header[:16] == b"SQLite format 3\x00" and header[18:20] == b"\x02\x02" and not Path(f"{path}-wal").exists():
        # a WAL database with no write-ahead log: all of it is in the file, which a read-only
        # connection would still give -wal and -shm files; read it as immutable instead
        uri += "&immutable=1"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=30.0)
    except sqlite3.Error as exc:
        raise InputError("db", f"{path} cannot be opened: {exc}") from None
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        columns = {r[1] for r in conn.execute("PRAGMA table_info(rows)")} if "rows" in tables else set()
    except sqlite3.DatabaseError as exc:  # e.g. "file is not a database"
        raise InputError("db", f"{path} is not an optkit result store (SQLite): {exc}") from None
    finally:
        conn.close()
    if not tables:
        if reader:
            raise InputError("db", f"{path} is not an optkit result store: an empty database "
                                   f"(run `optkit compare --db {path}` first)")
        return 0
    if version > SCHEMA_VERSION:
        raise InputError("db", f"{path} has result-store schema {version}; this optkit reads schemas 1 to "
                               f"{SCHEMA_VERSION}: upgrade optkit")
    if version < 1 or not _ROW_COLUMNS_REQUIRED <= columns:
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise InputError("db", f"{path} is not an optkit result store: an SQLite database with the tables {shown} "
                               "(left as it was)")
    return int(version)


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
    memory (tests). A file that exists is checked read-only first (:func:`check_store`;
    ``reader``: also refuse a database without tables); only then is it opened for writing.
    """

    def __init__(self, path: str | Path, *, reader: bool = False) -> None:
        self.path = str(path)
        if Path(self.path).is_dir():
            raise InputError("db", f"{self.path} is a folder, not a result store (an SQLite file)")
        if self.path != ":memory:":
            if Path(self.path).is_file() and Path(self.path).stat().st_size > 0:
                check_store(self.path, reader=reader)
            elif reader:
                raise InputError("db", f"{self.path} is not an optkit result store: "
                                       + ("an empty file" if Path(self.path).exists() else "it does not exist"))
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
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
        if not 0 <= version <= SCHEMA_VERSION:  # (a file checked above; ":memory:" is new)
            self._conn.close()
            raise InputError("db", f"{self.path} has result-store schema {version}; this optkit reads schemas 1 to "
                                   f"{SCHEMA_VERSION}: upgrade optkit")
        self._conn.executescript(_SCHEMA)
        row_columns = {r[1] for r in self._conn.execute("PRAGMA table_info(rows)")}
        if "anytime" not in row_columns:  # schema 1
            self._conn.execute("ALTER TABLE rows ADD COLUMN anytime TEXT")
        if "sweep" not in row_columns:  # schemas 1 and 2
            self._conn.execute("ALTER TABLE rows ADD COLUMN sweep INTEGER")
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

    # -- sweeps
    def add_sweep(self, environment: Mapping[str, Any]) -> int:
        """Record what a sweep is measured with (:func:`optkit.harness.environment.environment`);
        return its id, to store with its rows (:meth:`put_row`)."""
        values = [_dump(environment.get(f) or {}) if f == "versions" else environment.get(f) for f in _SWEEP_FIELDS]
        with self._conn:
            cur = self._conn.execute(f"INSERT INTO sweeps ({', '.join(_SWEEP_FIELDS)}) VALUES "
                                     f"({', '.join('?' for _ in _SWEEP_FIELDS)})", values)
        return int(cur.lastrowid or 0)

    def sweeps(self) -> dict[int, dict[str, Any]]:
        """``{id: environment}`` of every recorded sweep (``versions`` decoded)."""
        out = {}
        for r in self._conn.execute(f"SELECT id, {', '.join(_SWEEP_FIELDS)} FROM sweeps ORDER BY id"):
            d = dict(r)
            d["versions"] = json.loads(d["versions"] or "{}")
            out[int(d.pop("id"))] = d
        return out

    # -- rows
    def put_row(self, row: Mapping[str, Any], *, replace: bool = True, sweep: int | None = None) -> None:
        """Write one finished task's row and commit at once.

        ``replace=False`` keeps an existing row of the same key (first finish wins); ``sweep``:
        the id :meth:`add_sweep` gave the sweep that ran it (``None``: not recorded).
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
        values.append(sweep)
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        cols = ", ".join((*ROW_FIELDS, "sweep"))
        marks = ", ".join("?" for _ in range(len(ROW_FIELDS) + 1))
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
