"""The ``Cache``: one writer thread, a pool of reader threads, and the async API over them.

The writer thread owns the only read-write connection and does every write, migration,
budget eviction and corruption recovery; readers each own a read-only connection. See
https://www.sqlite.org/wal.html for why WAL readers never block the writer.
"""

from __future__ import annotations

import itertools
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

import anyio.to_thread

from patchula.cache import recovery, store
from patchula.cache.base import CacheError, CacheStats, HttpEntry, ReleaseItem
from patchula.cache.recovery import DatabaseCorrupt, is_corruption
from patchula.cache.schema import transaction
from patchula.cache.workers import Job, Reader, ReaderBroken, Worker, call, call_sync
from patchula.clock import Clock, SystemClock

__all__ = ["DEFAULT_BUDGET_BYTES", "Cache"]

logger = logging.getLogger("patchula.cache")
T = TypeVar("T")
DEFAULT_BUDGET_BYTES = 256 * 1024 * 1024
WRITER_QUEUE = 128


class _Shared:
    """State shared by every handle of one cache: counters, warnings, pending access times."""

    def __init__(self, path: Path | None, budget_bytes: int, clock: Clock) -> None:
        self.path = path
        self.budget_bytes = budget_bytes
        self.clock = clock
        self.stats = CacheStats()
        self.warnings: list[str] = []
        self.lock = threading.Lock()
        self.access_clock = 0  # monotonic; continues from the highest stored value
        self.pending: dict[str, int] = {}  # key -> access clock not yet written
        self.generation = 0  # bumped by every rebuild or fallback
        self.refs = 1

    def tick(self) -> int:
        """Return the next access clock value."""
        with self.lock:
            self.access_clock += 1
            return self.access_clock

    def record_access(self, key: str) -> None:
        """Remember that ``key`` was read; the writer stores it with its next job."""
        clock = self.tick()
        with self.lock:
            self.pending[key] = clock

    def take_pending(self) -> dict[str, int]:
        """Return and forget the access times recorded since the last flush."""
        with self.lock:
            pending, self.pending = self.pending, {}
        return pending

    def count(self, **deltas: int) -> None:
        """Add to the named ``CacheStats`` counters."""
        with self.lock:
            for name, delta in deltas.items():
                setattr(self.stats, name, getattr(self.stats, name) + delta)

    def warn(self, message: str) -> None:
        """Record a warning for the caller and log it (messages never hold bodies or tokens)."""
        logger.warning("%s", message)
        with self.lock:
            self.warnings.append(message)


class _Writer(Worker):
    """The writer thread: writes, access flushes, budget eviction, recovery (128-job queue)."""

    def __init__(self, shared: _Shared) -> None:
        super().__init__("patchula-cache-writer", WRITER_QUEUE)
        self.shared = shared
        self.ready: Future[None] = Future()

    def open(self) -> None:
        """Open the database (rebuilding a corrupt one) and enforce the budget."""
        try:
            self.conn = self.connect()
            self.sync_totals(self.conn)
            self.guarded(self.enforce_budget)
        except BaseException as exc:  # noqa: BLE001 - handed to Cache.open, which raises it
            self.ready.set_exception(exc)
        else:
            self.ready.set_result(None)

    def connect(self) -> sqlite3.Connection:
        """Open the file, or quarantine it and rebuild when it is corrupt."""
        path = self.shared.path
        if path is None:
            return recovery.connect_memory()
        try:
            return recovery.connect_writer(path)
        except DatabaseCorrupt as exc:
            return self.rebuild(path, str(exc))

    def rebuild(self, path: Path, reason: str) -> sqlite3.Connection:
        """Quarantine ``path`` and open a fresh database there; fall back to memory on failure."""
        shared = self.shared
        shared.generation += 1
        try:
            target = recovery.quarantine(path, shared.clock.now())
        except OSError as exc:
            shared.path = None
            shared.warn(
                f"cache database {path} is corrupt ({reason}) and could not be moved aside "
                f"({exc.strerror or exc}); using an in-memory cache for this run"
            )
            return recovery.connect_memory()
        shared.count(rebuilds=1)
        shared.warn(f"cache database {path} was corrupt ({reason}); moved to {target} and rebuilt")
        try:
            return recovery.connect_writer(path)
        except (CacheError, DatabaseCorrupt, OSError) as exc:
            shared.path = None
            shared.warn(
                f"cache database {path} could not be rebuilt ({exc}); "
                "using an in-memory cache for this run"
            )
            return recovery.connect_memory()

    def recover(self, reason: str) -> None:
        """Replace the corrupt database met during operation (readers stay off afterwards)."""
        self.close()
        path = self.shared.path
        self.conn = recovery.connect_memory() if path is None else self.rebuild(path, reason)
        self.sync_totals(self.conn)

    def sync_totals(self, conn: sqlite3.Connection) -> None:
        """Read the stored body bytes and continue the access clock after the highest value."""
        stored, highest = store.stored_bytes(conn)
        shared = self.shared
        with shared.lock:
            shared.stats.bytes_stored = stored
            shared.access_clock = max(shared.access_clock, highest)

    def guarded(self, run: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``run``; on corruption rebuild and retry it once.

        Other SQLite errors (and corruption again) become ``CacheUnavailable``.
        """
        for attempt in (1, 2):
            if self.conn is None:
                raise CacheError("the cache is closed")
            try:
                return run(self.conn)
            except sqlite3.Error as exc:
                if attempt == 1 and is_corruption(exc):
                    self.recover(str(exc))
                    continue
                raise recovery.unavailable(exc, self.shared.path) from exc
        raise AssertionError  # pragma: no cover - the loop returns or raises

    def execute(self, job: Job[Any]) -> object:
        """Run ``job`` guarded, first rebuilding when a reader met corruption in this database."""
        if job.recover_from is not None and job.recover_from == self.shared.generation:
            self.recover("a reader met a damaged page")
        return self.guarded(job.run)

    def before_job(self) -> None:
        """Write the coalesced access times in one transaction before the job."""
        self.guarded(self.flush)

    def on_shutdown(self) -> None:
        """Write the last coalesced access times (nothing when the database never opened)."""
        if self.conn is None:
            return
        try:
            self.guarded(self.flush)
        except CacheError as exc:
            logger.warning("could not save cache access times at shutdown: %s", exc)

    def flush(self, conn: sqlite3.Connection) -> None:
        """Store pending access clocks in one transaction (none when nothing is pending)."""
        pending = self.shared.take_pending()
        if pending:
            with transaction(conn):
                store.flush_access(conn, pending)

    def enforce_budget(self, conn: sqlite3.Connection) -> int:
        """Evict least recently accessed HTTP rows until the bodies fit the budget; rows evicted.

        The stored total is read from the database inside the transaction, not from this
        process's tally: other runs may share the file.
        """
        shared = self.shared
        with transaction(conn):
            stored, _ = store.stored_bytes(conn)
            rows, freed = (0, 0)
            if stored > shared.budget_bytes:
                rows, freed = store.evict(conn, stored, shared.budget_bytes)
        with shared.lock:
            shared.stats.bytes_stored = stored - freed
        shared.count(evictions=rows)
        return rows


class Cache:
    """The SQLite cache of one run: HTTP entries, release lists and extraction records.

    Open one with ``Cache.open`` and pass clones from ``handle()``; the last handle closed
    stops the threads. Counters are in ``stats``; ``warnings`` lists quarantines and fallbacks.
    """

    def __init__(self, shared: _Shared, writer: _Writer, readers: list[Reader]) -> None:
        self._shared = shared
        self._writer = writer
        self._readers = readers
        self._readers_enabled = bool(readers)
        self._reader_generation = shared.generation
        self._turn = itertools.count()
        self._closed = False

    @classmethod
    def open(
        cls,
        path: Path | None,
        *,
        budget_bytes: int = DEFAULT_BUDGET_BYTES,
        readers: int = 4,
        clock: Clock | None = None,
    ) -> Cache:
        """Open (creating, migrating or rebuilding) the cache at ``path``; ``None`` is in memory.

        ``budget_bytes`` caps compressed HTTP body bytes (evicted on open when exceeded).
        ``readers`` is the number of reader threads (0, or an in-memory database, reads
        through the writer). ``clock`` names quarantined files. Blocks until the database is
        ready. A corrupt file is quarantined and rebuilt (see ``warnings``). Raises
        ``FutureSchema`` for a newer schema and ``CacheUnavailable`` for an unwritable, busy or
        locked file; neither is moved.
        """
        if budget_bytes < 0 or readers < 0:
            raise ValueError("budget_bytes and readers must not be negative")
        shared = _Shared(path, budget_bytes, clock or SystemClock())
        writer = _Writer(shared)
        writer.start()
        try:
            writer.ready.result()
        except BaseException:
            writer.queue.put(None)
            writer.join()
            raise
        pool = [Reader(shared.path, i) for i in range(readers)] if shared.path else []
        for reader in pool:
            reader.start()
        return cls(shared, writer, pool)

    def handle(self) -> Cache:
        """Return another handle on the same threads; each handle must be closed once."""
        self._check_open()
        with self._shared.lock:
            self._shared.refs += 1
        clone = Cache(self._shared, self._writer, self._readers)
        clone._readers_enabled = self._readers_enabled
        clone._reader_generation = self._reader_generation
        return clone

    @property
    def path(self) -> Path | None:
        """The database file in use; ``None`` in memory (asked for, or after a fallback)."""
        return self._shared.path

    @property
    def warnings(self) -> list[str]:
        """Warnings for the user (quarantine, fallback); never bodies or tokens."""
        return self._shared.warnings

    @property
    def stats(self) -> CacheStats:
        """Counters shared by every handle."""
        return self._shared.stats

    def close(self) -> None:
        """Close this handle; the last one flushes access times, drains queues, joins threads."""
        if self._release():
            self._stop()

    async def aclose(self) -> None:
        """Close this handle like ``close``, joining the threads off the event loop."""
        if self._release():
            await anyio.to_thread.run_sync(self._stop)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def get_http(self, key: str) -> HttpEntry | None:
        """Return the stored entry for ``key`` (fresh or not), or ``None``.

        Decoded in a reader thread after its read transaction ended. A body that fails to
        decode is a miss: the row, with its validators, is deleted so they are never sent.
        The access is remembered and written later by the writer, so reads take no write lock.
        """
        found = await self._read(partial(store.read_http, key=key))
        if isinstance(found, store.CorruptBody):
            self._shared.count(misses=1, corrupt_bodies=1)
            logger.warning("a cached HTTP body failed to decompress; it was dropped")
            await self._write(partial(self._delete_http, key=key, blob=found.body))
            return None
        if found is None:
            self._shared.count(misses=1)
            return None
        self._shared.record_access(key)
        self._shared.count(hits=1)
        return found

    async def get_http_many(self, keys: Sequence[str]) -> dict[str, HttpEntry | None]:
        """Return ``get_http`` for many keys in one reader job (a run's first lookups at once)."""
        found = await self._read(partial(store.read_http_many, keys=list(keys)))
        result: dict[str, HttpEntry | None] = {}
        for key, value in found.items():
            if isinstance(value, store.CorruptBody):
                self._shared.count(misses=1, corrupt_bodies=1)
                logger.warning("a cached HTTP body failed to decompress; it was dropped")
                await self._write(partial(self._delete_http, key=key, blob=value.body))
                result[key] = None
            elif value is None:
                self._shared.count(misses=1)
                result[key] = None
            else:
                self._shared.record_access(key)
                self._shared.count(hits=1)
                result[key] = value
        return result

    async def put_http(self, entry: HttpEntry) -> None:
        """Store ``entry`` compressed (Zstandard level 3) in one transaction; enforce the budget.

        Raises ``ValueError`` unless the status is 2xx.
        """
        if not 200 <= entry.status < 300:  # noqa: PLR2004 - only successes are stored
            raise ValueError(f"only 2xx responses are cached, not {entry.status}")
        await self._write(partial(self._put_http, entry=entry))

    async def touch_http(
        self,
        key: str,
        *,
        fetched_at: float,
        expires_at: float,
        etag: str | None,
        last_modified: str | None,
        cache_control: str | None,
    ) -> None:
        """Record a 304 for ``key``: new times and header values; the body is not touched.

        Times are epoch seconds. A ``None`` value keeps the stored one (RFC 9111 §4.3.4); a
        missing row stays missing.
        """
        touch = partial(
            store.touch_http,
            key=key,
            fetched_at=fetched_at,
            expires_at=expires_at,
            etag=etag,
            last_modified=last_modified,
            cache_control=cache_control,
        )
        if await self._write(lambda conn: self._in_transaction(conn, touch, clock=self._tick())):
            self._shared.count(revalidated=1)

    async def delete_http(self, key: str) -> None:
        """Remove the entry for ``key``, body and validators (no-store or uncacheable)."""
        await self._write(partial(self._delete_http, key=key, blob=None))

    async def merge_releases(self, source: str, package: str, items: Sequence[ReleaseItem]) -> bool:
        """Merge the first page of upstream newest-first ``items`` (see ``store.merge_releases``).

        Stops at the first stored item (refreshing its date and digest) and returns ``True``
        then; ``items[0]`` becomes the release head. One transaction.
        """
        merge = partial(store.merge_releases, source=source, package=package, items=items)
        return await self._write(lambda conn: self._in_transaction(conn, merge, after=None))

    async def merge_release_page(
        self, source: str, package: str, items: Sequence[ReleaseItem], *, after: str
    ) -> bool:
        """Merge a later page of the same scan right after the version ``after``.

        ``after`` is the previous page's last inserted version; this explicit anchor tells
        history pagination from a refresh prefix. Returns ``True`` at the first stored item.
        One transaction.
        """
        merge = partial(store.merge_releases, source=source, package=package, items=items)
        return await self._write(lambda conn: self._in_transaction(conn, merge, after=after))

    async def release_heads(self, source: str, package: str) -> ReleaseItem | None:
        """Return the newest release stored for the package, or ``None``."""
        return await self._read(partial(store.release_head, source=source, package=package))

    async def releases(self, source: str, package: str) -> list[ReleaseItem]:
        """Return the stored releases of the package in upstream order, newest first."""
        return await self._read(partial(store.releases, source=source, package=package))

    async def put_extraction(self, repo: str, commit: str, config_hash: str, data: bytes) -> None:
        """Store the caller's extraction record bytes for (repo, commit, config hash)."""
        put = partial(store.put_extraction, repo=repo, commit=commit, config_hash=config_hash)
        await self._write(lambda conn: self._in_transaction(conn, put, data=data))

    async def get_extraction(self, repo: str, commit: str, config_hash: str) -> bytes | None:
        """Return the extraction record bytes for (repo, commit, config hash), or ``None``."""
        get = partial(store.get_extraction, repo=repo, commit=commit, config_hash=config_hash)
        return await self._read(get)

    def prune(self) -> int:
        """Evict to the budget, ``VACUUM`` and truncate the WAL; return bytes the file shrank.

        Blocks the calling thread (for the CLI). SQLite reuses freed pages but only VACUUM
        returns them to the filesystem (https://www.sqlite.org/lang_vacuum.html).
        """
        self._check_open()
        return call_sync(self._writer, Job(self._prune))

    # Jobs run by the writer thread.

    @staticmethod
    def _in_transaction(conn: sqlite3.Connection, run: Callable[..., T], **kwargs: Any) -> T:  # noqa: ANN401 - forwarded to ``run``
        with transaction(conn):
            return run(conn, **kwargs)

    def _tick(self) -> int:
        return self._shared.tick()

    def _put_http(self, conn: sqlite3.Connection, entry: HttpEntry) -> None:
        blob = store.compress(entry.body)  # before BEGIN: the write lock is held briefly
        with transaction(conn):
            delta = store.write_http(conn, entry, blob, self._tick())
        self._shared.count(stores=1, bytes_stored=delta)
        self._writer.enforce_budget(conn)

    def _delete_http(self, conn: sqlite3.Connection, key: str, blob: bytes | None) -> None:
        with transaction(conn):
            freed = store.delete_http(conn, key, blob)
        self._shared.count(bytes_stored=-freed)

    def _prune(self, conn: sqlite3.Connection) -> int:
        before = store.page_bytes(conn)
        self._writer.enforce_budget(conn)
        conn.execute("VACUUM")
        if self._shared.path is not None:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        return max(0, before - store.page_bytes(conn))

    # Dispatch.

    async def _write(self, run: Callable[[sqlite3.Connection], T]) -> T:
        self._check_open()
        return await call(self._writer, Job(run))

    async def _read(self, run: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``run`` on the next reader (round robin), or on the writer when readers are off.

        A reader meeting corruption turns the pool off for this handle and retries through the
        writer, which rebuilds the database first.
        """
        self._check_open()
        if self._readers_enabled and self._shared.generation != self._reader_generation:
            self._disable_readers("the database was rebuilt")  # readers see the old file
        if not self._readers_enabled:
            return await call(self._writer, Job(run))
        reader = self._readers[next(self._turn) % len(self._readers)]
        try:
            return await call(reader, Job(run))
        except sqlite3.Error as exc:
            if not is_corruption(exc):
                raise recovery.unavailable(exc, self._shared.path) from exc
            self._disable_readers(str(exc))
            return await call(self._writer, Job(run, recover_from=self._reader_generation))
        except ReaderBroken as exc:
            self._disable_readers(str(exc))
            return await call(self._writer, Job(run))

    def _disable_readers(self, reason: str) -> None:
        if self._readers_enabled:
            logger.info("cache reads go through the writer from now on: %s", reason)
        self._readers_enabled = False

    def _check_open(self) -> None:
        if self._closed:
            raise CacheError("this cache handle is closed")

    def _release(self) -> bool:
        """Mark this handle closed; return whether it was the last one open."""
        if self._closed:
            return False
        self._closed = True
        with self._shared.lock:
            self._shared.refs -= 1
            return self._shared.refs == 0

    def _stop(self) -> None:
        # Readers first, so the writer's final flush sees every recorded access.
        for reader in self._readers:
            reader.queue.put(None)
        for reader in self._readers:
            reader.join()
        self._writer.queue.put(None)
        self._writer.join()
