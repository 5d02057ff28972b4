"""Extraction records: unreachable formats deleted on open; pre-v6 records purged from the file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from patchula.cache import Cache
from patchula.cache.schema import MIGRATIONS, migrate

pytestmark = pytest.mark.anyio

SECRET = b"hunter2-planted-secret"


def raw(path: Path) -> bytes:
    """The bytes of the file and its -wal (absent: empty)."""
    wal = path.with_name(path.name + "-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def test_v5_records_and_task_errors_are_purged_from_file_and_wal(tmp_path: Path) -> None:
    """A v5 cache's records and task errors (written before redaction) leave no bytes."""
    path = tmp_path / "cache.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    migrate(conn, path, MIGRATIONS[:5])
    record = b"https://u:" + SECRET + b"@host/pkg" + b"x" * 5000
    conn.execute("INSERT INTO extractions VALUES ('acme/api', 'c1', 'h', ?)", (record,))
    conn.execute(
        "INSERT INTO lookup_tasks (datasource, package, status, error_message, created_at)"
        " VALUES ('npm', 'left-pad', 'failed', ?, 0)",
        ("GET https://u:" + SECRET.decode() + "@host failed",),
    )
    conn.close()
    assert SECRET in raw(path)
    with Cache.open(path, record_format=9):
        pass
    check = sqlite3.connect(path)
    assert check.execute("SELECT count(*) FROM extractions").fetchone() == (0,)
    (message,) = check.execute("SELECT error_message FROM lookup_tasks").fetchone()
    check.close()
    assert "hunter2" not in message
    assert SECRET not in raw(path)


async def test_records_of_lower_formats_are_deleted_on_open(tmp_path: Path) -> None:
    """Format 8 rows go when a format 9 binary opens the file; 9 and 10 are kept."""
    path = tmp_path / "cache.sqlite3"
    for fmt in (8, 9, 10):
        async with Cache.open(path, record_format=fmt) as cache:
            await cache.put_extraction("acme/api", f"c{fmt}", "h", b"rec%d" % fmt)
    # The format 10 opening already deleted 8 and 9; store 8 again through a format-8 binary.
    async with Cache.open(path, record_format=8) as cache:
        await cache.put_extraction("acme/api", "c8", "h", b"rec8")
        await cache.put_extraction("acme/api", "c9", "h", b"rec9")
    async with Cache.open(path, record_format=9) as cache:
        assert await cache.get_extraction("acme/api", "c8", "h") is None
        assert await cache.get_extraction("acme/api", "c10", "h") == b"rec10"
        await cache.put_extraction("acme/api", "c9", "h", b"rec9")
    async with Cache.open(path, record_format=9) as cache:
        assert await cache.get_extraction("acme/api", "c9", "h") == b"rec9"


async def test_a_reader_during_the_purge_does_not_fail(tmp_path: Path) -> None:
    """Another process reading the v5 file while it is migrated keeps reading."""
    path = tmp_path / "cache.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    migrate(conn, path, MIGRATIONS[:5])
    conn.execute("INSERT INTO extractions VALUES ('acme/api', 'c1', 'h', x'00')")
    reader = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM extractions").fetchone() == (1,)
    with Cache.open(path, record_format=9):
        assert reader.execute("SELECT count(*) FROM extractions").fetchone() == (1,)
    reader.execute("COMMIT")
    assert reader.execute("SELECT count(*) FROM extractions").fetchone() == (0,)
    reader.close()
    conn.close()
