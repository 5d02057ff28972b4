"""Schema v1 to v6 and the transactional ``PRAGMA user_version`` migration runner."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import msgspec

from patchula.cache.base import FutureSchema

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration", "migrate", "transaction", "user_version"]


class Migration(msgspec.Struct, frozen=True):
    """One schema step: the statements that take ``user_version`` from ``version - 1``."""

    version: int
    statements: tuple[str, ...]


# v1 holds the three cache domains. HTTP rows carry a monotonic access clock (indexed, for
# eviction by least recent access) and the compressed size counted against the budget.
# Release rows keep upstream order in an explicit ordinal (position ascending = newest first).
V1 = Migration(
    1,
    (
        """CREATE TABLE http_entries (
            key TEXT PRIMARY KEY,
            status INTEGER NOT NULL,
            etag TEXT,
            last_modified TEXT,
            headers BLOB NOT NULL,
            body BLOB NOT NULL,
            body_size INTEGER NOT NULL,
            raw_size INTEGER NOT NULL,
            fetched_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            cache_control TEXT,
            representation TEXT NOT NULL,
            access_clock INTEGER NOT NULL
        )""",
        "CREATE INDEX http_entries_access ON http_entries (access_clock)",
        """CREATE TABLE releases (
            source TEXT NOT NULL,
            package TEXT NOT NULL,
            version TEXT NOT NULL,
            position INTEGER NOT NULL,
            published_at REAL,
            digest TEXT,
            PRIMARY KEY (source, package, version)
        )""",
        "CREATE INDEX releases_order ON releases (source, package, position)",
        """CREATE TABLE release_heads (
            source TEXT NOT NULL,
            package TEXT NOT NULL,
            version TEXT NOT NULL,
            published_at REAL,
            digest TEXT,
            PRIMARY KEY (source, package)
        )""",
        """CREATE TABLE extractions (
            repo TEXT NOT NULL,
            commit_sha TEXT NOT NULL,
            config_hash TEXT NOT NULL,
            data BLOB NOT NULL,
            PRIMARY KEY (repo, commit_sha, config_hash)
        )""",
    ),
)

# v2 adds a small name/value table for facts about the file itself; ``damaged_rows`` counts
# the unreadable HTTP rows earlier runs dropped, so damage met again quarantines the file.
V2 = Migration(
    2,
    ("CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",),
)

# v3 adds catalog views (seed 003, "Catalog views and release-age policy"): the parsed release
# list a datasource produced, stored apart from HTTP bodies, one row per lookup identity.
# ``key`` names datasource, base URL (source mode), package, a digest of the credential
# identity and the mise registry mapping; ``fetched_at`` (epoch seconds) is when the catalog
# was retrieved or validated upstream, the age that decides reuse; ``body`` is the versioned
# ``representation``, Zstandard-compressed, ``body_size`` its stored bytes (counted in the
# budget and evicted by ``access_clock`` together with HTTP rows), ``raw_size`` its size
# uncompressed (checked against the frame before decoding, as for HTTP bodies).
V3 = Migration(
    3,
    (
        """CREATE TABLE catalog_views (
            key TEXT PRIMARY KEY,
            datasource TEXT NOT NULL,
            package TEXT NOT NULL,
            representation TEXT NOT NULL,
            body BLOB NOT NULL,
            body_size INTEGER NOT NULL,
            raw_size INTEGER NOT NULL,
            fetched_at REAL NOT NULL,
            stored_at REAL NOT NULL,
            access_clock INTEGER NOT NULL
        )""",
        "CREATE INDEX catalog_views_access ON catalog_views (access_clock)",
        "CREATE INDEX catalog_views_package ON catalog_views (datasource, package)",
    ),
)

# v4 adds lookup tasks (seed 000, adapted in design.md §7): one row per (datasource, package),
# the record of its last lookup and the queue ``cache warm`` works through. Times are epoch
# seconds. ``attempts`` counts the claims of the current task (a claim counts before the work,
# so a task that kills its process still reaches ``max_attempts``); ``lease_owner`` and
# ``lease_until`` are the claim of the process working on an ``in_progress`` task, taken over
# once it lapses or its process is gone. ``origin`` says who opened the task: ``warm`` follows
# the dependencies of the version it finds, ``run`` records a lookup of ``patchula run``.
# ``parent_id`` becomes NULL when its parent row goes (the trigger: foreign keys are off).
V4 = Migration(
    4,
    (
        """CREATE TABLE lookup_tasks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            datasource TEXT NOT NULL,
            package TEXT NOT NULL,
            version_constraint TEXT,
            parent_id INTEGER REFERENCES lookup_tasks (id) ON DELETE SET NULL,
            depth INTEGER NOT NULL DEFAULT 0,
            triggered_by TEXT,
            origin TEXT NOT NULL DEFAULT 'warm' CHECK (origin IN ('run', 'warm')),
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'in_progress', 'completed', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            max_attempts INTEGER NOT NULL DEFAULT 3,
            result TEXT,
            error_message TEXT,
            created_at REAL NOT NULL,
            started_at REAL,
            completed_at REAL,
            next_retry_at REAL,
            lease_owner TEXT,
            lease_until REAL
        )""",
        "CREATE INDEX lookup_tasks_status_retry ON lookup_tasks (status, next_retry_at)",
        "CREATE INDEX lookup_tasks_package_status ON lookup_tasks (package, status)",
        "CREATE INDEX lookup_tasks_parent ON lookup_tasks (parent_id)",
        # One task per package of a datasource: the de-duplication the seed checks by query.
        "CREATE UNIQUE INDEX lookup_tasks_identity ON lookup_tasks (datasource, package)",
        """CREATE TRIGGER lookup_tasks_orphans AFTER DELETE ON lookup_tasks BEGIN
            UPDATE lookup_tasks SET parent_id = NULL WHERE parent_id = OLD.id;
        END""",
    ),
)

# v5: a task is a lookup on one registry with one credential (cache warm through a mirror,
# or with another token, is another task); ``base_url`` is where it is looked up (its
# retries too), ``credential`` the credential identity digest (``http.caching.
# credential_digest``: ``-`` for none, never a secret) and ``checkout_root`` the checkout
# whose ``.npmrc`` applies to it (NULL: the run-wide registries). Rows of v4 keep ``''``.
# ``followed`` is JSON ``{"constraints": [...], "versions": [...]}``: the constraints a warm
# task resolved and the versions whose dependencies it enqueued; ``wanted`` a JSON list of
# other constraints it was reached with while open (handled before it completes).
V5 = Migration(
    5,
    (
        "ALTER TABLE lookup_tasks ADD COLUMN base_url TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE lookup_tasks ADD COLUMN credential TEXT NOT NULL DEFAULT '-'",
        "ALTER TABLE lookup_tasks ADD COLUMN checkout_root TEXT",
        "ALTER TABLE lookup_tasks ADD COLUMN followed TEXT",
        "ALTER TABLE lookup_tasks ADD COLUMN wanted TEXT",
        "DROP INDEX lookup_tasks_identity",
        (
            "CREATE UNIQUE INDEX lookup_tasks_identity"
            " ON lookup_tasks (datasource, package, base_url, credential)"
        ),
    ),
)

# v6: extraction records carry the record format that wrote them (``format``; set by the
# caller's ``Cache.open(record_format=...)``), so records no binary of this format or later can
# read again are deleted on open. Rows written before v6 have no known format and may hold a
# manifest secret as written (records before the redaction of RECORD_FORMAT 9): they are
# deleted, and lookup-task errors written before redaction are cleared, with
# ``secure_delete`` on so the freed pages are zeroed (the writer checkpoints the log after).
V6 = Migration(
    6,
    (
        "PRAGMA secure_delete = ON",
        "DELETE FROM extractions",
        "ALTER TABLE extractions ADD COLUMN format INTEGER NOT NULL DEFAULT 0",
        (
            "UPDATE lookup_tasks SET error_message ="
            " 'error text removed: written before patchula redacted secrets'"
            " WHERE error_message IS NOT NULL"
        ),
        "PRAGMA secure_delete = OFF",
    ),
)

MIGRATIONS: tuple[Migration, ...] = (V1, V2, V3, V4, V5, V6)
SCHEMA_VERSION = MIGRATIONS[-1].version


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """Run the block in one ``BEGIN IMMEDIATE`` transaction; roll back if it raises.

    The connection must be in autocommit mode (``isolation_level=None``). IMMEDIATE takes the
    write lock up front, so a busy database fails at BEGIN (after ``busy_timeout``) rather than
    mid-way (https://www.sqlite.org/lang_transaction.html).
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        identity = getattr(conn, "identity", 0)
        if identity:
            # Rewriting the header's application_id puts page 1 into every transaction's WAL
            # frames, so a write-ahead log left beside the file can be tied to it (see ``wal``).
            conn.execute(f"PRAGMA application_id = {int(identity)}")
        conn.execute("COMMIT")
    except BaseException:
        # SQLite may already have rolled back by itself (e.g. on SQLITE_FULL or corruption);
        # a failed COMMIT (busy) leaves the transaction open, so the next BEGIN needs this.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def user_version(conn: sqlite3.Connection) -> int:
    """Return the database's ``PRAGMA user_version`` (0 for a new file)."""
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def migrate(
    conn: sqlite3.Connection,
    path: Path | None,
    migrations: Sequence[Migration] = MIGRATIONS,
) -> int:
    """Bring the database up to the last of ``migrations``, one transaction per step.

    Each step's statements and its ``PRAGMA user_version`` bump commit together, so a crash
    leaves the database at a whole version (https://www.sqlite.org/pragma.html#pragma_user_version).
    Tables the steps do not name are kept. Returns the version found before migrating. Raises
    ``FutureSchema`` before writing anything when the database is newer than the last step.
    """
    found = user_version(conn)
    latest = migrations[-1].version if migrations else 0
    if found > latest:
        raise FutureSchema(path or Path(":memory:"), found, latest)
    for step in migrations:
        if step.version <= found:
            continue
        with transaction(conn):
            for statement in step.statements:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {int(step.version)}")
    return found
