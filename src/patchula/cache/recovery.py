"""Opening cache databases: PRAGMAs, quick_check, corruption tests and quarantine."""

from __future__ import annotations

import secrets
import sqlite3
import threading
from collections import Counter
from datetime import UTC, datetime
from itertools import count
from pathlib import Path

from patchula.cache import wal
from patchula.cache.base import CacheUnavailable, FutureSchema
from patchula.cache.schema import SCHEMA_VERSION, migrate, user_version

__all__ = [
    "BUSY_TIMEOUT_MS",
    "CacheConnection",
    "DatabaseCorrupt",
    "ForeignWal",
    "classify",
    "connect_memory",
    "connect_reader",
    "connect_writer",
    "is_busy",
    "is_corruption",
    "quarantine",
    "quarantine_wal",
    "unavailable",
]

# Wait up to five seconds for another connection's lock (https://www.sqlite.org/c3ref/busy_timeout.html).
BUSY_TIMEOUT_MS = 5000
# The schema step that purges records and task errors written before redaction (schema V6).
PURGE_VERSION = 6
# Primary result codes that mean "this file is damaged" (https://www.sqlite.org/rescode.html).
# Busy/locked (5, 6), read-only (8), cannot-open (14) and permission (3) are not among them.
CORRUPTION_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
SIDECARS = ("-wal", "-shm")

# Database files this process has open through a Cache: their -wal is live and ours, and
# probing their -shm lock would drop this process's own locks on it (see ``wal.in_use``).
_open_here: Counter[str] = Counter()
_open_lock = threading.Lock()


class CacheConnection(sqlite3.Connection):
    """The writer's connection, with what ``connect_writer`` learnt about its file.

    ``identity`` is the database's application_id (0: none), restamped by every
    ``schema.transaction``; ``replayed`` counts the frames of a leftover write-ahead log
    SQLite replayed on open; ``locked`` says another process held the write lock at open
    (the file is read, writes are best effort and do not wait).
    """

    identity: int = 0
    replayed: int = 0
    locked: bool = False


class DatabaseCorrupt(Exception):  # noqa: N818 - a state, like the SQLite code it stands for
    """The database file is damaged: SQLITE_CORRUPT/NOTADB or a failed ``quick_check``."""


class ForeignWal(Exception):  # noqa: N818 - a state of the file beside the database
    """The ``-wal`` beside the database was not written for it; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def hold(path: Path) -> None:
    """Note that a Cache of this process has ``path`` open (until ``release``)."""
    with _open_lock:
        _open_here[str(path.resolve())] += 1


def release(path: Path) -> None:
    """Undo one ``hold``."""
    with _open_lock:
        key = str(path.resolve())
        _open_here[key] -= 1
        if _open_here[key] <= 0:
            del _open_here[key]


def _held(path: Path) -> bool:
    with _open_lock:
        return _open_here[str(path.resolve())] > 0


def is_open_here(path: Path) -> bool:
    """Tell whether a Cache of this process has ``path`` open (between ``hold`` and ``release``)."""
    return _held(path)


def is_busy(exc: BaseException) -> bool:
    """Tell whether ``exc`` is an SQLite error whose primary code is BUSY or LOCKED."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in BUSY_CODES


def is_corruption(exc: BaseException) -> bool:
    """Tell whether ``exc`` is an SQLite error whose primary code is CORRUPT or NOTADB."""
    code = getattr(exc, "sqlite_errorcode", None)
    # Extended codes (e.g. SQLITE_CORRUPT_INDEX = 779) keep the primary code in the low byte.
    return isinstance(code, int) and code & 0xFF in CORRUPTION_CODES


def unavailable(exc: sqlite3.Error, path: Path | None) -> CacheUnavailable:
    """Return ``CacheUnavailable`` naming the file, SQLite's message and its error code name."""
    name = getattr(exc, "sqlite_errorname", type(exc).__name__)
    where = path if path is not None else ":memory:"
    message = str(exc)
    if message.startswith("Could not decode"):
        # Python's message quotes the stored text, which may be part of a cached body.
        message = "a stored value is not valid UTF-8"
    return CacheUnavailable(f"cache database {where} is unavailable: {message} ({name})")


def classify(exc: sqlite3.Error, path: Path | None) -> DatabaseCorrupt | CacheUnavailable:
    """Map an SQLite error to ``DatabaseCorrupt`` or, for anything else, ``CacheUnavailable``."""
    return DatabaseCorrupt(str(exc)) if is_corruption(exc) else unavailable(exc, path)


def connect_memory() -> sqlite3.Connection:
    """Open a migrated in-memory database (the fallback; only the writer can see it)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    migrate(conn, None)
    return conn


def connect_writer(path: Path) -> CacheConnection:
    """Open ``path`` read-write, check it and migrate it to the current schema.

    Order matters: a ``-wal`` left beside the file is judged before SQLite can replay it
    (``wal.inspect``; a foreign one raises ``ForeignWal`` untouched), and one that cannot be
    tied to the file is replayed first on a read-only connection with a full
    ``integrity_check`` (``ForeignWal`` when it fails, the file and log untouched); the schema
    version is read before anything is written, so a future schema is refused without
    touching the file; ``PRAGMA quick_check`` then verifies b-tree pages
    (https://www.sqlite.org/pragma.html#pragma_quick_check) before WAL mode
    (https://www.sqlite.org/wal.html) and ``synchronous=NORMAL`` are set. A database without
    an identity gets a random one in its application_id. A current WAL database whose write
    lock another process holds opens with ``locked`` set instead of failing.

    Raises ``ForeignWal``, ``FutureSchema``, ``DatabaseCorrupt`` or ``CacheUnavailable``
    (directory cannot be created, file not writable, busy or locked).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        msg = f"cannot create the cache directory {path.parent}: {exc.strerror or exc}"
        raise CacheUnavailable(msg) from exc
    verdict = _leftover_wal(path)
    if verdict is not None and verdict.foreign is not None:
        raise ForeignWal(verdict.foreign)
    checked = False
    if verdict is not None and not verdict.decided:
        problem = _trial_replay(path)
        if problem is not None:
            raise ForeignWal(
                f"it could not be tied to the database, and the database with it fails "
                f"integrity_check ({problem})"
            )
        checked = True
    try:
        conn = sqlite3.connect(path, isolation_level=None, factory=CacheConnection)
    except sqlite3.Error as exc:
        raise classify(exc, path) from exc
    try:
        _prepare(conn, path, verdict, checked=checked)
    except sqlite3.Error as exc:
        conn.close()
        raise classify(exc, path) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _leftover_wal(path: Path) -> wal.WalVerdict | None:
    """Judge a ``-wal`` no connection has open (a live one belongs to whoever has it open)."""
    if _held(path) or wal.in_use(path):
        return None
    try:
        return wal.inspect(path)
    except OSError:
        return None  # unreadable: SQLite will report what it finds


def _trial_replay(path: Path) -> str | None:
    """Replay an undecided ``-wal`` on a read-only connection and check the result in full.

    Returns the first problem (``integrity_check`` row or corruption error), or ``None`` when
    the database with its log is whole, or when the trial cannot run (busy, cannot open: the
    writer then meets and reports the same). A read-only connection never checkpoints
    (https://www.sqlite.org/wal.html, "Read-Only Databases"), so the file is untouched and the log
    kept whatever the outcome; a read-write one would copy a foreign log into the file when
    closed after a failed check, then delete it.
    """
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        problems = [str(row[0]) for row in conn.execute("PRAGMA integrity_check").fetchall()]
    except sqlite3.Error as exc:
        return str(exc) if is_corruption(exc) else None
    finally:
        conn.close()
    return None if problems == ["ok"] else " ".join(problems[0].split())[:200]


def _prepare(
    conn: CacheConnection, path: Path, verdict: wal.WalVerdict | None, *, checked: bool
) -> None:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    found = user_version(conn)
    if found > SCHEMA_VERSION:
        raise FutureSchema(path, found, SCHEMA_VERSION)
    if not checked:  # the read-only trial of an undecided log already ran integrity_check
        problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:
            first = " ".join(problems[0].split())[:200]
            raise DatabaseCorrupt(f"quick_check: {first}")
    if verdict is not None:
        # The second column is the number of frames SQLite recovered from the log.
        conn.replayed = max(0, int(conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]))
    # SQLite silently opens an unwritable file read-only. A write that is rolled back surfaces
    # SQLITE_READONLY now, while the caller can still fall back to memory.
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if not _readable_while_locked(conn, exc, found):
            raise
        # Another process holds the write lock of a current WAL database: its readers do not
        # need that lock, so the run reads this file and its writes are best effort.
        conn.identity = int(conn.execute("PRAGMA application_id").fetchone()[0])
        conn.locked = True
        conn.execute("PRAGMA synchronous = NORMAL")
        return
    try:
        conn.execute(f"PRAGMA user_version = {found}")
    finally:
        conn.execute("ROLLBACK")
    identity = int(conn.execute("PRAGMA application_id").fetchone()[0])
    if identity == 0:
        # Before WAL mode on a new file, so the identity is in the file itself from the start.
        identity = secrets.randbits(31) or 1
        conn.execute(f"PRAGMA application_id = {identity}")
        if str(conn.execute("PRAGMA journal_mode").fetchall()[0][0]).lower() == "wal":
            # A file already in WAL mode (an older cache) got its stamp in the log: copy it
            # into the header now, so a file without an identity never has a log of its own
            # that carries one, and ``wal.inspect`` can call such a log another cache's.
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    conn.identity = identity
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise CacheUnavailable(f"cache database {path} cannot use WAL mode (got {mode})")
    conn.execute("PRAGMA synchronous = NORMAL")
    migrate(conn, path)
    if 0 < found < PURGE_VERSION:
        # The purge step zeroed the freed pages in the log; copy them into the file and
        # empty the log, so neither keeps the old bytes (best effort: a reader may hold it).
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


def _readable_while_locked(conn: sqlite3.Connection, exc: sqlite3.Error, found: int) -> bool:
    """Whether a busy write probe still leaves a usable file: WAL, current schema, identity."""
    if not is_busy(exc) or found != SCHEMA_VERSION:
        return False
    mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
    return mode == "wal" and int(conn.execute("PRAGMA application_id").fetchone()[0]) != 0


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
    return _move_aside(path, now, ("", *SIDECARS))


def quarantine_wal(path: Path, now: datetime) -> Path:
    """Move only the ``-wal`` and ``-shm`` of ``path`` aside; return the new log's path.

    Named like ``quarantine`` (``<name>.corrupt-<UTC timestamp>-wal``); never deleted. Raises
    ``OSError`` when a file cannot be moved.
    """
    base = _move_aside(path, now, SIDECARS)
    return base.with_name(base.name + "-wal")


def _move_aside(path: Path, now: datetime, suffixes: tuple[str, ...]) -> Path:
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    base = f"{path.name}.corrupt-{stamp}"
    for n in count():
        name = base if n == 0 else f"{base}-{n}"
        taken = (path.with_name(name + suffix) for suffix in ("", *SIDECARS))
        if not any(candidate.exists() for candidate in taken):
            break
    for suffix in suffixes:
        source = path.with_name(path.name + suffix)
        if source.exists():
            source.rename(path.with_name(name + suffix))
    return path.with_name(name)
