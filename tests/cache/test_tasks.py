"""Lookup tasks (schema v4): migration, de-duplication, claims, back-off, leases, the record."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing
from functools import partial
from pathlib import Path

import pytest

from patchula.cache import Cache
from patchula.cache import tasks as t
from patchula.cache.schema import MIGRATIONS, SCHEMA_VERSION, migrate, transaction, user_version
from tests.cache.base import raw


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    """A migrated in-memory database in autocommit mode."""
    with closing(sqlite3.connect(":memory:", isolation_level=None)) as db:
        migrate(db, None)
        yield db


def status(conn: sqlite3.Connection, package: str) -> tuple[str, int, float | None, str | None]:
    """(status, attempts, next_retry_at, error) of ``package``'s task."""
    row = conn.execute(
        "SELECT status, attempts, next_retry_at, error_message FROM lookup_tasks WHERE package = ?",
        (package,),
    ).fetchone()
    return row[0], row[1], row[2], row[3]


def _populate_v2(conn: sqlite3.Connection) -> None:
    conn.execute(
        "INSERT INTO http_entries VALUES ('k', 200, '\"e\"', NULL, x'', x'01', 1, 1,"
        " 10.0, 20.0, NULL, 'raw', 7)"
    )
    conn.execute("INSERT INTO releases VALUES ('github', 'o/r', 'v1', 0, 5.0, NULL)")
    conn.execute("INSERT INTO release_heads VALUES ('github', 'o/r', 'v1', 5.0, NULL)")
    conn.execute("INSERT INTO extractions VALUES ('repo', 'abc', 'h', x'02')")
    conn.execute("INSERT INTO meta VALUES ('damaged_rows', 2)")


@pytest.mark.parametrize("start", [2, 3, 4])
def test_a_populated_cache_migrates_to_v6_keeping_all_but_records(
    tmp_path: Path, start: int
) -> None:
    """A v2, v3 or v4 file keeps HTTP, release, meta, view (task) rows; v6 drops its records."""
    path = tmp_path / "cache.sqlite3"
    with raw(path) as db:
        migrate(db, None, MIGRATIONS[:start])
        _populate_v2(db)
        if start == 4:
            db.execute(
                "INSERT INTO lookup_tasks (datasource, package, status, created_at)"
                " VALUES ('npm', 'kept', 'failed', 1.0)"
            )
        if start >= 3:
            db.execute(
                "INSERT INTO catalog_views (key, datasource, package, representation, body,"
                " body_size, raw_size, fetched_at, stored_at, access_clock)"
                " VALUES ('v', 'npm', 'left-pad', 'npm-view-v1', x'03', 1, 1, 30.0, 31.0, 9)"
            )
    Cache.open(path).close()
    with raw(path) as db:
        assert user_version(db) == SCHEMA_VERSION == 6
        assert db.execute("SELECT key, etag, access_clock FROM http_entries").fetchall() == [
            ("k", '"e"', 7)
        ]
        assert db.execute("SELECT version FROM releases").fetchall() == [("v1",)]
        assert db.execute("SELECT version FROM release_heads").fetchall() == [("v1",)]
        # Records from before v6 have no known format: the v6 step deletes them.
        assert db.execute("SELECT data FROM extractions").fetchall() == []
        assert db.execute("SELECT value FROM meta").fetchall() == [(2,)]
        views = db.execute("SELECT key, body, fetched_at FROM catalog_views").fetchall()
        assert views == ([("v", b"\x03", 30.0)] if start >= 3 else [])
        found = db.execute(
            "SELECT package, status, base_url, credential, checkout_root FROM lookup_tasks"
        ).fetchall()
        assert found == ([("kept", "failed", "", "-", None)] if start == 4 else [])


def test_status_outside_the_check_is_refused(conn: sqlite3.Connection) -> None:
    """The CHECK constraint admits only pending, in_progress, completed and failed."""
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        conn.execute(
            "INSERT INTO lookup_tasks (datasource, package, status, created_at)"
            " VALUES ('npm', 'a', 'done', 0)"
        )


def test_a_deleted_parent_leaves_its_children_with_no_parent(conn: sqlite3.Connection) -> None:
    """parent_id is set to NULL when the parent row goes (ON DELETE SET NULL, by trigger)."""
    (parent,) = t.enqueue(conn, [t.NewTask("npm", "a", None)], now=0, fresh_after=0, max_attempts=3)
    t.enqueue(conn, [t.NewTask("npm", "b", "^1", 1, parent)], now=0, fresh_after=0, max_attempts=3)
    conn.execute("DELETE FROM lookup_tasks WHERE id = ?", (parent,))
    assert conn.execute("SELECT package, parent_id, depth FROM lookup_tasks").fetchall() == [
        ("b", None, 1)
    ]


def test_enqueue_reuses_an_open_task_and_skips_a_fresh_completed_one(
    conn: sqlite3.Connection,
) -> None:
    """One task per package: an open one is reused, a fresh warm one needs none, a stale reopens."""
    enqueue = partial(t.enqueue, conn, now=100.0, fresh_after=50.0, max_attempts=3)
    first = enqueue([t.NewTask("npm", "a", "^1"), t.NewTask("npm", "a", "^2")])
    assert first[0] is not None
    assert first == [first[0], first[0]]
    assert enqueue([t.NewTask("pypi", "a", None)])[0] != first[0]  # another datasource
    (task,) = t.claim(conn, now=100.0, owner="me", lease_until=200.0, limit=1)
    assert t.complete(conn, task.id, owner="me", result="{}", now=60.0, handled=["^2"])
    assert enqueue([t.NewTask("npm", "a", "^1")]) == [None]  # completed at 60 >= 50
    assert enqueue([t.NewTask("npm", "a", "^2")]) == [None]  # that range was resolved too
    stale = partial(t.enqueue, conn, now=100.0, fresh_after=70.0, max_attempts=3)
    assert stale([t.NewTask("npm", "a", "^1")]) == [task.id]
    assert status(conn, "a")[:2] == ("pending", 0)


def test_a_range_reached_while_open_or_after_is_followed_too(conn: sqlite3.Connection) -> None:
    """``^2`` reached while ``^1`` is worked on: pending again for it; a new range reopens."""
    enqueue = partial(t.enqueue, conn, now=10.0, fresh_after=5.0, max_attempts=3)
    (ident,) = enqueue([t.NewTask("npm", "a", "^1")])
    assert ident is not None
    assert len(t.claim(conn, now=10.0, owner="me", lease_until=99.0, limit=1)) == 1
    assert enqueue([t.NewTask("npm", "a", "^2")]) == [ident]  # in progress: ^2 is wanted
    done = t.complete(conn, ident, owner="me", result="{}", now=11.0, versions=["1.0.0"])
    assert done == "pending"
    (again,) = t.claim(conn, now=12.0, owner="me", lease_until=99.0, limit=1)
    assert (again.constraint, again.wanted, again.followed_versions) == ("^2", (), ("1.0.0",))
    assert t.complete(conn, ident, owner="me", result="{}", now=13.0, versions=["2.0.0"])
    assert enqueue([t.NewTask("npm", "a", "^1")]) == [None]
    assert enqueue([t.NewTask("npm", "a", "~2.1")]) == [ident]  # completed, a new range
    (third,) = t.claim(conn, now=14.0, owner="me", lease_until=99.0, limit=1)
    assert third.followed_versions == ("1.0.0", "2.0.0")


def test_claim_takes_ready_tasks_shallow_first_then_fifo_and_marks_them(
    conn: sqlite3.Connection,
) -> None:
    """A claim takes due pending tasks ordered by depth then age, all in_progress, leased."""
    enqueue = partial(t.enqueue, conn, now=0.0, fresh_after=0.0, max_attempts=3)
    enqueue([t.NewTask("npm", f"deep{i}", None, depth=2) for i in range(3)])
    enqueue([t.NewTask("npm", f"top{i}", None) for i in range(12)])
    claimed = t.claim(conn, now=1.0, owner="me", lease_until=99.0, limit=10)
    assert [c.package for c in claimed] == [f"top{i}" for i in range(10)]
    assert all(c.attempts == 1 for c in claimed)
    rest = t.claim(conn, now=1.0, owner="other", lease_until=99.0, limit=10)
    assert [c.package for c in rest] == ["top10", "top11", "deep0", "deep1", "deep2"]
    assert t.claim(conn, now=1.0, owner="me", lease_until=99.0, limit=10) == []
    owners = conn.execute(
        "SELECT lease_owner, count(*) FROM lookup_tasks WHERE status = 'in_progress'"
        " GROUP BY lease_owner ORDER BY lease_owner"
    ).fetchall()
    assert owners == [("me", 10), ("other", 5)]


def test_a_failed_attempt_backs_off_30_then_60_seconds_then_fails_for_good(
    conn: sqlite3.Connection,
) -> None:
    """Attempt 1 fails → due at +30 s, attempt 2 → +60 s, attempt 3 → failed, 3 attempts."""
    t.enqueue(conn, [t.NewTask("npm", "flaky", None)], now=0, fresh_after=0, max_attempts=3)
    now = 1000.0
    for expected in (30.0, 60.0):
        (task,) = t.claim(conn, now=now, owner="me", lease_until=now + 60, limit=10)
        assert t.fail(conn, task.id, owner="me", error="HTTP 500", now=now) == "pending"
        _, _, due, _ = status(conn, "flaky")
        assert due == now + expected
        assert t.claim(conn, now=now + expected - 1, owner="me", lease_until=0, limit=10) == []
        now += expected
    (task,) = t.claim(conn, now=now, owner="me", lease_until=now + 60, limit=10)
    assert t.fail(conn, task.id, owner="me", error="HTTP 500", now=now) == "failed"
    assert status(conn, "flaky") == ("failed", 3, None, "HTTP 500")
    assert t.failed(conn) == [t.FailedTask("flaky", "npm", "HTTP 500", 3, now)]


def test_a_lapsed_or_orphaned_lease_is_taken_back_and_the_late_owner_cannot_finish(
    conn: sqlite3.Connection,
) -> None:
    """Another owner's lapsed lease, or a gone owner's, is pending again; its writes are refused."""
    enqueue = partial(t.enqueue, conn, now=0, fresh_after=0, max_attempts=3)
    enqueue([t.NewTask("npm", "a", None), t.NewTask("npm", "b", None)])
    first = t.claim(conn, now=0, owner="dead", lease_until=1000, limit=1)
    second = t.claim(conn, now=0, owner="slow", lease_until=10, limit=1)
    assert t.reclaim(conn, now=5, owner="me", gone=[]) == 0
    assert t.reclaim(conn, now=20, owner="me", gone=["dead"]) == 2
    assert [status(conn, p)[0] for p in ("a", "b")] == ["pending", "pending"]
    assert not t.complete(conn, second[0].id, owner="slow", result="{}", now=21)
    assert t.fail(conn, first[0].id, owner="dead", error="x", now=21) is None
    # One's own leases are never taken back from oneself.
    t.claim(conn, now=30, owner="me", lease_until=31, limit=10)
    assert t.reclaim(conn, now=40, owner="me", gone=[]) == 0


def test_an_interrupted_last_attempt_fails_for_good(conn: sqlite3.Connection) -> None:
    """A task whose last allowed attempt was interrupted is failed, saying so."""
    t.enqueue(conn, [t.NewTask("npm", "a", None)], now=0, fresh_after=0, max_attempts=1)
    t.claim(conn, now=0, owner="dead", lease_until=1000, limit=1)
    assert t.reclaim(conn, now=1, owner="me", gone=["dead"]) == 1
    assert status(conn, "a")[0] == "failed"
    assert "interrupted" in (status(conn, "a")[3] or "")


def test_retry_resets_failed_tasks_of_one_package_or_all(conn: sqlite3.Connection) -> None:
    """Retry NAME puts that package's failed task back to pending with attempts reset."""
    enqueue = partial(t.enqueue, conn, now=0, fresh_after=0, max_attempts=1)
    enqueue([t.NewTask("npm", "a", None), t.NewTask("npm", "b", None)])
    for task in t.claim(conn, now=0, owner="me", lease_until=10, limit=10):
        t.fail(conn, task.id, owner="me", error="boom", now=1)
    assert t.retry(conn, package="a", max_attempts=3) != []
    assert status(conn, "a")[:3] == ("pending", 0, None)
    assert status(conn, "b")[0] == "failed"
    assert len(t.retry(conn, package=None, max_attempts=3)) == 1
    assert t.summary(conn).counts == {"pending": 2, "in_progress": 0, "completed": 0, "failed": 0}


def test_run_outcomes_are_recorded_completed_or_failed_with_the_next_retry(
    conn: sqlite3.Connection,
) -> None:
    """A run's success is completed; a failure is an attempt with its error and next retry."""
    ok = t.LookupOutcome("npm", "a", '{"latest":"1.0.0"}', None)
    bad = t.LookupOutcome("npm", "b", None, "HTTP 500 from registry")
    t.record(conn, [ok, bad], now=100.0, max_attempts=3)
    assert status(conn, "a") == ("completed", 1, None, None)
    assert status(conn, "b") == ("pending", 1, 130.0, "HTTP 500 from registry")
    t.record(conn, [bad], now=200.0, max_attempts=3)
    assert status(conn, "b")[:3] == ("pending", 2, 260.0)
    t.record(conn, [bad], now=300.0, max_attempts=3)
    assert status(conn, "b")[:2] == ("failed", 3)
    t.record(conn, [t.LookupOutcome("npm", "b", "{}", None)], now=400.0, max_attempts=3)
    assert status(conn, "b") == ("completed", 1, None, None)
    summary = t.summary(conn)
    assert summary.counts["completed"] == 2
    assert (summary.oldest_pending, summary.next_retry) == (None, None)


def test_repeats_of_one_package_in_a_batch_are_one_record(conn: sqlite3.Connection) -> None:
    """A package looked up twice in one run (two registries) is one task, its last outcome."""
    outcomes = [
        t.LookupOutcome("npm", "a", None, "HTTP 500"),
        t.LookupOutcome("npm", "a", "{}", None),
    ]
    t.record(conn, outcomes, now=1, max_attempts=3)
    assert status(conn, "a") == ("completed", 1, None, None)


def test_a_run_leaves_an_open_warm_task_to_cache_warm(conn: sqlite3.Connection) -> None:
    """A run's success does not complete a pending warm task (its dependencies wait)."""
    t.enqueue(conn, [t.NewTask("npm", "a", None)], now=0, fresh_after=0, max_attempts=3)
    t.record(conn, [t.LookupOutcome("npm", "a", "{}", None)], now=1, max_attempts=3)
    assert status(conn, "a")[0] == "pending"


def test_task_jobs_run_in_one_writer_transaction(tmp_path: Path) -> None:
    """Cache.task_job_sync runs a tasks function through the writer and returns its result."""
    with Cache.open(tmp_path / "c.sqlite3") as cache:
        ids = cache.task_job_sync(
            partial(
                t.enqueue,
                tasks=[t.NewTask("npm", "a", None)],
                now=0,
                fresh_after=0,
                max_attempts=3,
            )
        )
        assert cache.task_job_sync(t.summary).counts["pending"] == 1
    assert ids == [1]


def test_claims_run_inside_a_transaction(tmp_path: Path) -> None:
    """The claim helper needs no transaction of its own: the caller's commits it whole."""
    with raw(tmp_path / "db.sqlite3") as db:
        migrate(db, None)
        with transaction(db):
            t.enqueue(db, [t.NewTask("npm", "a", None)], now=0, fresh_after=0, max_attempts=3)
            assert len(t.claim(db, now=0, owner="me", lease_until=1, limit=10)) == 1
        assert status(db, "a")[0] == "in_progress"


def test_a_claim_taken_over_is_no_longer_the_first_owners(conn: sqlite3.Connection) -> None:
    """still_claimed: true for the holder; false once another process took the task back."""
    t.enqueue(conn, [t.NewTask("npm", "a", None)], now=0, fresh_after=0, max_attempts=3)
    assert t.open_count(conn) == 1
    (task,) = t.claim(conn, now=0, owner="slow", lease_until=10, limit=1)
    assert t.still_claimed(conn, task.id, owner="slow")
    t.reclaim(conn, now=20, owner="me", gone=[])
    t.claim(conn, now=20, owner="me", lease_until=30, limit=1)
    assert not t.still_claimed(conn, task.id, owner="slow")
    assert t.still_claimed(conn, task.id, owner="me")
    assert t.open_count(conn) == 1


def test_task_jobs_wait_for_another_process_write_lock(tmp_path: Path) -> None:
    """A cache opened while the lock was held stops waiting for it; task jobs still wait."""
    path = tmp_path / "c.sqlite3"
    Cache.open(path).close()
    holder = sqlite3.connect(path, isolation_level=None, timeout=0, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with Cache.open(path) as cache:
            assert cache._writer.fast  # the run's other writes no longer wait
            threading.Timer(0.3, lambda: holder.execute("COMMIT")).start()
            ids = cache.task_job_sync(
                partial(
                    t.enqueue,
                    tasks=[t.NewTask("npm", "a", None)],
                    now=0,
                    fresh_after=0,
                    max_attempts=3,
                )
            )
    finally:
        holder.close()
    assert ids == [1]
