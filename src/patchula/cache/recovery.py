"""Opening cache databases: PRAGMAs, quick_check, corruption tests and quarantine."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from itertools import count
from pathlib import Path

from patchula.cache.base import CacheUnavailable, FutureSchema
from patchula.cache.schema import SCHEMA_VERSION, migrate, user_version

__all__ = [
    "BUSY_TIMEOUT_MS",
    "DatabaseCorrupt",
    "classify",
    "connect_memory",
    "connect_reader",
    "connect_writer",
    "is_corruption",
    "quarantine",
    "unavailable",
]

# Wait up to five seconds for another connection's lock (https://www.sqlite.org/c3ref/busy_timeout.html).
BUSY_TIMEOUT_MS = 5000
# Primary result codes that mean "this file is damaged" (https://www.sqlite.org/rescode.html).
# Busy/locked (5, 6), read-only (8), cannot-open (14) and permission (3) are not among them.
CORRUPTION_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
SIDECARS = ("-wal", "-shm")


class DatabaseCorrupt(Exception):  # noqa: N818 - a state, like the SQLite code it stands for
    """The database file is damaged: SQLITE_CORRUPT/NOTADB or a failed ``quick_check``."""


def is_corruption(exc: BaseException) -> bool:
    """Tell whether ``exc`` is an SQLite error whose primary code is CORRUPT or NOTADB."""
    code = getattr(exc, "sqlite_errorcode", None)
    # Extended codes (e.g. SQLITE_CORRUPT_INDEX = 779) keep the primary code in the low byte.
    return isinstance(code, int) and code & 0xFF in CORRUPTION_CODES


def unavailable(exc: sqlite3.Error, path: Path | None) -> CacheUnavailable:
    """Return ``CacheUnavailable`` naming the file, SQLite's message and its error code name."""
    name = getattr(exc, "sqlite_errorname", type(exc).__name__)
    where = path if path is not None else ":memory:"
    return CacheUnavailable(f"cache database {where} is unavailable: {exc} ({name})")


def classify(exc: sqlite3.Error, path: Path | None) -> DatabaseCorrupt | CacheUnavailable:
    """Map an SQLite error to ``DatabaseCorrupt`` or, for anything else, ``CacheUnavailable``."""
    return DatabaseCorrupt(str(exc)) if is_corruption(exc) else unavailable(exc, path)


def connect_memory() -> sqlite3.Connection:
    """Open a migrated in-memory database (the fallback; only the writer can see it)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    migrate(conn, None)
    return conn


def connect_writer(path: Path) -> sqlite3.Connection:
    """Open ``path`` read-write, check it and migrate it to the current schema.

    Order matters: the schema version is read before anything is written, so a future schema
    is refused without touching the file; ``PRAGMA quick_check`` then verifies b-tree pages
    (https://www.sqlite.org/pragma.html#pragma_quick_check) before WAL mode
    (https://www.sqlite.org/wal.html) and ``synchronous=NORMAL`` are set.

    Raises ``FutureSchema``, ``DatabaseCorrupt`` or ``CacheUnavailable`` (directory cannot be
    created, file not writable, busy or locked).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        msg = f"cannot create the cache directory {path.parent}: {exc.strerror or exc}"
        raise CacheUnavailable(msg) from exc
    try:
        conn = sqlite3.connect(path, isolation_level=None)
    except sqlite3.Error as exc:
        raise classify(exc, path) from exc
    try:
        _prepare(conn, path)
    except sqlite3.Error as exc:
        conn.close()
        raise classify(exc, path) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _prepare(conn: sqlite3.Connection, path: Path) -> None:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    found = user_version(conn)
    if found > SCHEMA_VERSION:
        raise FutureSchema(path, found, SCHEMA_VERSION)
    problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check").fetchall()]
    if problems != ["ok"]:
        first = " ".join(problems[0].split())[:200]
        raise DatabaseCorrupt(f"quick_check: {first}")
    # SQLite silently opens an unwritable file read-only. A write that is rolled back surfaces
    # SQLITE_READONLY now, while the caller can still fall back to memory.
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"PRAGMA user_version = {found}")
    finally:
        conn.execute("ROLLBACK")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise CacheUnavailable(f"cache database {path} cannot use WAL mode (got {mode})")
    conn.execute("PRAGMA synchronous = NORMAL")
    migrate(conn, path)


def connect_reader(path: Path) -> sqlite3.Connection:
    """Open a read-only connection (``mode=ro`` URI) to the writer's WAL database."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return conn


def quarantine(path: Path, now: datetime) -> Path:
    """Move ``path`` and its ``-wal``/``-shm`` sidecars aside; return the new database path.

    The name is ``<name>.corrupt-<UTC timestamp>`` with ``-1``, ``-2`` … appended when taken, so
    earlier quarantined files are never overwritten. Files are kept for inspection, never
    deleted. Raises ``OSError`` when a file cannot be moved.
    """
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    base = f"{path.name}.corrupt-{stamp}"
    for n in count():
        name = base if n == 0 else f"{base}-{n}"
        taken = (path.with_name(name + suffix) for suffix in ("", *SIDECARS))
        if not any(candidate.exists() for candidate in taken):
            break
    for suffix in ("", *SIDECARS):
        source = path.with_name(path.name + suffix)
        if source.exists():
            source.rename(path.with_name(name + suffix))
    return path.with_name(name)
