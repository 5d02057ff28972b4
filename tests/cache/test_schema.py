"""Schema: PRAGMA user_version migrations, future-schema refusal, connection PRAGMAs."""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

import pytest

from patchula.cache import Cache, FutureSchema, default_cache_path
from patchula.cache.schema import MIGRATIONS, SCHEMA_VERSION, Migration, migrate, user_version
from patchula.cache.workers import Job, call_sync
from tests.cache.base import quarantined, raw

SYNTHETIC = (
    Migration(1, ("CREATE TABLE t (a INTEGER NOT NULL)",)),
    Migration(2, ("ALTER TABLE t ADD COLUMN b INTEGER", "UPDATE t SET b = a * 2")),
)


def test_schema_is_version_6_with_the_domains_meta_catalog_views_and_tasks(tmp_path: Path) -> None:
    """A new database is at user_version 6: HTTP, release, extraction, meta, views, tasks."""
    path = tmp_path / "cache.sqlite3"
    Cache.open(path).close()
    with raw(path) as conn:
        assert user_version(conn) == SCHEMA_VERSION == 6
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert {"http_entries", "http_entries_access", "releases", "release_heads"} <= names
    assert {"extractions", "meta", "catalog_views", "catalog_views_access"} <= names
    assert {"lookup_tasks", "lookup_tasks_status_retry", "lookup_tasks_parent"} <= names


def test_all_tables_live_in_one_file_and_sidecars_are_transient(tmp_path: Path) -> None:
    """After close only the database file remains: the -wal and -shm sidecars are gone."""
    path = tmp_path / "cache.sqlite3"
    with Cache.open(path):
        assert path.with_name("cache.sqlite3-wal").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.sqlite3"]


def test_migration_runner_upgrades_and_keeps_data(tmp_path: Path) -> None:
    """The generic runner applies only the missing steps and keeps existing rows."""
    with raw(tmp_path / "db.sqlite3") as conn:
        assert migrate(conn, None, SYNTHETIC[:1]) == 0
        conn.executemany("INSERT INTO t (a) VALUES (?)", [(1,), (2,)])
        assert migrate(conn, None, SYNTHETIC) == 1
        assert user_version(conn) == 2
        assert conn.execute("SELECT a, b FROM t ORDER BY a").fetchall() == [(1, 2), (2, 4)]
        assert migrate(conn, None, SYNTHETIC) == 2  # nothing left to do


def test_a_failing_step_rolls_back_whole(tmp_path: Path) -> None:
    """A step that fails leaves neither its tables nor its version behind."""
    broken = (*SYNTHETIC[:1], Migration(2, ("CREATE TABLE u (x)", "NOT SQL AT ALL")))
    with raw(tmp_path / "db.sqlite3") as conn:
        with pytest.raises(sqlite3.OperationalError):
            migrate(conn, None, broken)
        assert user_version(conn) == 1
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        assert tables == {"t"}


def test_version_0_database_is_migrated_keeping_its_data(tmp_path: Path) -> None:
    """Opening a populated user_version-0 database migrates it to the current version."""
    path = tmp_path / "cache.sqlite3"
    with raw(path) as conn:
        conn.execute("CREATE TABLE legacy_notes (name TEXT, status TEXT)")
        conn.execute("INSERT INTO legacy_notes VALUES ('left-pad', 'completed')")
    with Cache.open(path) as cache:
        assert cache.warnings == []
    with raw(path) as conn:
        assert user_version(conn) == SCHEMA_VERSION
        assert conn.execute("SELECT * FROM legacy_notes").fetchall() == [("left-pad", "completed")]
        assert conn.execute("SELECT count(*) FROM http_entries").fetchone() == (0,)


def test_version_2_database_gains_catalog_views_keeping_every_row(tmp_path: Path) -> None:
    """A populated v2 file (the schema before catalog views) migrates to v3, losing nothing."""
    path = tmp_path / "cache.sqlite3"
    with raw(path) as conn:
        assert migrate(conn, None, MIGRATIONS[:2]) == 0
        conn.execute(
            "INSERT INTO http_entries VALUES ('k', 200, '\"e\"', NULL, x'', x'01', 1, 1,"
            " 10.0, 20.0, NULL, 'raw', 7)"
        )
        conn.execute("INSERT INTO releases VALUES ('github', 'o/r', 'v1', 0, 5.0, NULL)")
        conn.execute("INSERT INTO release_heads VALUES ('github', 'o/r', 'v1', 5.0, NULL)")
        conn.execute("INSERT INTO extractions VALUES ('repo', 'abc', 'h', x'02')")
        conn.execute("INSERT INTO meta VALUES ('damaged_rows', 0)")
    with Cache.open(path) as cache:
        assert cache.warnings == []
    with raw(path) as conn:
        assert user_version(conn) == SCHEMA_VERSION
        assert conn.execute("SELECT key, etag, access_clock FROM http_entries").fetchall() == [
            ("k", '"e"', 7)
        ]
        assert conn.execute("SELECT version FROM releases").fetchall() == [("v1",)]
        assert conn.execute("SELECT version FROM release_heads").fetchall() == [("v1",)]
        # Records from before v6 have no known format: the v6 step deletes them.
        assert conn.execute("SELECT data FROM extractions").fetchall() == []
        assert conn.execute("SELECT count(*) FROM catalog_views").fetchone() == (0,)


def test_future_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    """A newer schema raises FutureSchema naming file and versions; the file stays untouched."""
    path = tmp_path / "cache.sqlite3"
    with raw(path) as conn:
        conn.execute("CREATE TABLE future (x)")
        conn.execute("INSERT INTO future VALUES ('kept')")
        conn.execute("PRAGMA user_version = 99")
    before = (path.read_bytes(), path.stat().st_mtime_ns, sorted(tmp_path.iterdir()))
    with pytest.raises(FutureSchema) as raised:
        Cache.open(path)
    message = str(raised.value)
    assert str(path) in message
    assert "99" in message
    assert f"({SCHEMA_VERSION})" in message
    assert (raised.value.found, raised.value.supported) == (99, SCHEMA_VERSION)
    assert (path.read_bytes(), path.stat().st_mtime_ns, sorted(tmp_path.iterdir())) == before
    assert quarantined(tmp_path) == []


def test_migrate_refuses_a_future_version_before_writing(tmp_path: Path) -> None:
    """The runner itself raises FutureSchema when the file is newer than its last step."""
    with raw(tmp_path / "db.sqlite3") as conn:
        conn.execute("PRAGMA user_version = 3")
        with pytest.raises(FutureSchema):
            migrate(conn, tmp_path / "db.sqlite3", SYNTHETIC)
        assert user_version(conn) == 3


def test_connections_use_wal_normal_sync_and_a_5_second_busy_timeout(tmp_path: Path) -> None:
    """The writer runs WAL, synchronous=NORMAL and busy_timeout=5000; readers are read-only."""
    path = tmp_path / "cache.sqlite3"
    with Cache.open(path) as cache:

        def pragmas(conn: sqlite3.Connection) -> tuple[str, int, int]:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            sync = conn.execute("PRAGMA synchronous").fetchone()[0]
            busy = conn.execute("PRAGMA busy_timeout").fetchone()[0]
            return mode, sync, busy

        assert call_sync(cache._writer, Job(pragmas)) == ("wal", 1, 5000)
        reader = cache._readers[0]
        assert call_sync(reader, Job(pragmas))[2] == 5000

        def write(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM extractions")

        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            call_sync(reader, Job(write))


def test_threads_are_one_writer_and_four_readers(tmp_path: Path) -> None:
    """One writer with a 128-job queue and four readers with 32-job queues; all stop at close."""
    cache = Cache.open(tmp_path / "cache.sqlite3")
    threads = [cache._writer, *cache._readers]
    assert [t.queue.maxsize for t in threads] == [128, 32, 32, 32, 32]
    assert all(t.is_alive() for t in threads)
    cache.close()
    assert not any(t.is_alive() for t in threads)


def test_default_cache_path_is_the_user_cache_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default file is cache.sqlite3 in platformdirs' user cache dir for patchula."""
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere/cache")
    assert default_cache_path() == Path("/somewhere/cache/patchula/cache.sqlite3")


def test_cache_imports_only_allowed_modules() -> None:
    """patchula.cache imports only errors, models, clock and itself from patchula (never http)."""
    allowed = {"patchula.errors", "patchula.models", "patchula.clock"}
    package = Path(__file__).parents[2] / "src" / "patchula" / "cache"
    found: set[str] = set()
    for module in package.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
    ours = {name for name in found if name.startswith("patchula")}
    assert ours - allowed - {n for n in ours if n.startswith("patchula.cache")} == set()
    assert "patchula.cache.engine" in ours  # the walk did see our own imports
