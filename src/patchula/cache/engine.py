"""The ``Cache``: one writer thread, a pool of reader threads, and the async API over them.

The writer thread owns the only read-write connection and does every write, migration,
budget eviction and corruption recovery; readers each own a read-only connection. See
https://www.sqlite.org/wal.html for why WAL readers never block the writer.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import queue
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
from patchula.cache.base import (
    CacheError,
    CacheStats,
    CacheUnavailable,
    CatalogView,
    HttpEntry,
    ReleaseItem,
    ViewSummary,
)
from patchula.cache.recovery import DatabaseCorrupt, ForeignWal, is_busy, is_corruption
from patchula.cache.schema import transaction
from patchula.cache.workers import Job, Reader, ReaderBroken, Worker, call, call_sync
from patchula.clock import Clock, SystemClock

__all__ = ["DEFAULT_BUDGET_BYTES", "Cache"]

logger = logging.getLogger("patchula.cache")
T = TypeVar("T")
DEFAULT_BUDGET_BYTES = 256 * 1024 * 1024
# A store re-reads the file's stored total once this run stored 1/32 of the budget since the
# last read, or its own tally is over the budget (``_Writer.budget_check_due``).
BUDGET_CHECK_FRACTION = 32
WRITER_QUEUE = 128
# Unreadable rows in one run before the file itself is distrusted, quarantined and rebuilt
# (one more on a later run, after earlier runs dropped some, does it at once).
DAMAGE_LIMIT = 3


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
        self.record_format = 0  # written into each extraction row (``Cache.open``)
        self.held: Path | None = None  # the file registered as open here (recovery.hold)
        self.fallback: str | None = None  # why the run uses memory instead of the file
        self.damaged = 0  # unreadable rows met in this file during this run
        self.prior_damage = 0  # unreadable rows earlier runs dropped from this file
        self.warned: set[str] = set()
        # Set by the first busy/locked error: from then on no connection waits for a lock.
        self.fail_fast = threading.Event()

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

    def record_accesses(self, keys: Sequence[str]) -> None:
        """``record_access`` of each of ``keys`` in order, under one lock."""
        with self.lock:
            pending = self.pending
            clock = self.access_clock
            for key in keys:
                clock += 1
                pending[key] = clock
            self.access_clock = clock

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

    def warn_once(self, kind: str, message: str) -> None:
        """Record ``message`` unless a warning of ``kind`` was already recorded this run."""
        with self.lock:
            if kind in self.warned:
                return
            self.warned.add(kind)
        self.warn(message)

    def restore_pending(self, pending: dict[str, int]) -> None:
        """Put back access times a failed flush could not write (the newest clock wins)."""
        with self.lock:
            for key, clock in pending.items():
                self.pending[key] = max(clock, self.pending.get(key, 0))

    def write_failed(self, exc: CacheError, *, count: bool = True) -> None:
        """Count a refused write and say once that this run's answers are not all stored."""
        if count:
            self.count(write_failures=1)
        wait = (
            "; later writes in this run do not wait for the lock" if self.fail_fast.is_set() else ""
        )
        self.warn_once(
            "write",
            f"could not write to the cache ({exc}); answers from this run are used but not "
            f"all stored{wait}",
        )

    def read_failed(self, exc: CacheError) -> None:
        """Count a failed read and say once that its keys were fetched from the network."""
        self.count(read_failures=1)
        wait = (
            "; later reads in this run do not wait for the lock" if self.fail_fast.is_set() else ""
        )
        self.warn_once(
            "read",
            f"could not read from the cache ({exc}); those lookups went to the network{wait}",
        )

    def use_memory(self, reason: str) -> None:
        """Record that the run continues on an in-memory database, and why."""
        self.path = None
        self.fallback = reason
        self.generation += 1


class _Writer(Worker):
    """The writer thread: writes, access flushes, budget eviction, recovery (128-job queue)."""

    def __init__(self, shared: _Shared) -> None:
        super().__init__("patchula-cache-writer", WRITER_QUEUE)
        self.shared = shared
        self.ready: Future[None] = Future()
        self.fast = False  # busy_timeout is 0 on this connection
        # Body bytes this writer stored since the stored total was last read from the file.
        self.unchecked = 0

    def open(self) -> None:
        """Open the database (rebuilding a corrupt one) and enforce the budget."""
        try:
            self.conn = self.connect()
            self.sync_totals(self.conn)
            try:
                self.guarded(self.enforce_budget)
                if self.shared.record_format:
                    fmt = self.shared.record_format
                    self.guarded(lambda conn: store.purge_extractions(conn, fmt))
            except CacheUnavailable as exc:
                self.shared.write_failed(exc, count=False)
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
            conn = self.connect_file(path)
        except DatabaseCorrupt as exc:
            return self.rebuild(path, str(exc))
        if getattr(conn, "locked", False):
            self.conn = conn
            self.go_fast()
            self.shared.warned.add("write")  # this warning already says writes may be lost
            self.shared.warn(
                f"cache database {path}: another process holds its write lock; this run reads "
                "it, and stores answers only while the lock is free (no write waits for it)"
            )
        replayed = getattr(conn, "replayed", 0)
        if replayed:
            self.shared.warn(
                f"cache database {path}: replayed {replayed} frames of a write-ahead log left "
                "by an unfinished run"
            )
        return conn

    def connect_file(self, path: Path) -> sqlite3.Connection:
        """``connect_writer``, first moving a foreign ``-wal`` aside (never deleting it).

        Raises ``CacheUnavailable`` when the foreign log cannot be moved: opening the file
        would replay it.
        """
        try:
            return recovery.connect_writer(path)
        except ForeignWal as exc:
            try:
                target = recovery.quarantine_wal(path, self.shared.clock.now())
            except OSError as move:
                msg = (
                    f"cache database {path} has a write-ahead log beside it that does not "
                    f"belong to it ({exc.reason}) and it could not be moved aside "
                    f"({move.strerror or move})"
                )
                raise CacheUnavailable(msg) from move
            self.shared.warn(
                f"cache database {path}: the write-ahead log beside it was not replayed "
                f"({exc.reason}); moved to {target}"
            )
        try:
            return recovery.connect_writer(path)
        except ForeignWal as exc:  # another one appeared meanwhile: leave the file alone
            msg = f"cache database {path} keeps getting a foreign write-ahead log ({exc.reason})"
            raise CacheUnavailable(msg) from exc

    def rebuild(self, path: Path, reason: str) -> sqlite3.Connection:
        """Quarantine ``path`` and open a fresh database there; fall back to memory on failure."""
        shared = self.shared
        shared.generation += 1
        try:
            target = recovery.quarantine(path, shared.clock.now())
        except OSError as exc:
            why = (
                f"cache database {path} is corrupt ({reason}) and could not be moved aside "
                f"({exc.strerror or exc})"
            )
            shared.use_memory(why)
            shared.warn(f"{why}; using an in-memory cache for this run")
            return recovery.connect_memory()
        shared.count(rebuilds=1)
        shared.warn(f"cache database {path} was corrupt ({reason}); moved to {target} and rebuilt")
        try:
            return recovery.connect_writer(path)
        except (CacheError, DatabaseCorrupt, ForeignWal, OSError) as exc:
            why = f"cache database {path} could not be rebuilt ({exc})"
            shared.use_memory(why)
            shared.warn(f"{why}; using an in-memory cache for this run")
            return recovery.connect_memory()

    def recover(self, reason: str) -> None:
        """Replace the corrupt database met during operation (readers stay off afterwards)."""
        self.close()
        self.fast = False
        path = self.shared.path
        self.conn = recovery.connect_memory() if path is None else self.rebuild(path, reason)
        if self.shared.fail_fast.is_set():
            self.go_fast()
        self.sync_totals(self.conn)

    def sync_totals(self, conn: sqlite3.Connection) -> None:
        """Read the stored body bytes, earlier damage, and continue the access clock."""
        stored, highest = store.stored_bytes(conn)
        prior = store.damaged_rows(conn)
        shared = self.shared
        with shared.lock:
            shared.stats.bytes_stored = stored
            shared.access_clock = max(shared.access_clock, highest)
            shared.prior_damage = prior
            shared.damaged = 0

    def go_fast(self) -> None:
        """Stop waiting for locks on this connection (after the run's first busy error).

        Later writes are still tried, and succeed once the other process lets go; they just
        do not wait 5 s each, serially, in this one thread.
        """
        self.shared.fail_fast.set()
        if self.conn is not None and not self.fast:
            self.fast = True
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("PRAGMA busy_timeout = 0")

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
                if is_busy(exc):
                    self.go_fast()
                raise recovery.unavailable(exc, self.shared.path) from exc
        raise AssertionError  # pragma: no cover - the loop returns or raises

    def execute(self, job: Job[Any]) -> object:
        """Run ``job`` guarded, first rebuilding when a reader met corruption in this database."""
        if job.recover_from is not None and job.recover_from == self.shared.generation:
            self.recover("a reader met a damaged page")
        return self.guarded(job.run)

    def before_job(self) -> None:
        """Write the coalesced access times in one transaction before the job (best effort)."""
        if self.shared.fail_fast.is_set():
            self.go_fast()
        try:
            self.guarded(self.flush)
        except CacheUnavailable as exc:
            self.shared.write_failed(exc, count=False)  # the times wait for the next job

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
        if not pending:
            return
        try:
            with transaction(conn):
                store.flush_access(conn, pending)
        except BaseException:
            self.shared.restore_pending(pending)
            raise

    def budget_check_due(self, written: int) -> bool:
        """Whether storing ``written`` more body bytes makes a budget check (a table scan) due.

        The check reads the stored total from the file, which scans every HTTP row: once per
        store it made a cold run of N lookups O(N²) (5,000 lookups: 12.5 M row visits). It is
        due when this run's tally is over the budget, or when the bytes stored since the last
        check reach 1/``BUDGET_CHECK_FRACTION`` of the budget (what other runs sharing the file
        stored meanwhile is then caught, so the file exceeds its budget by at most that much
        per run between checks). Opening and pruning always check.
        """
        self.unchecked += max(written, 0)
        shared = self.shared
        with shared.lock:
            tally = shared.stats.bytes_stored
        return (
            tally > shared.budget_bytes
            or self.unchecked * BUDGET_CHECK_FRACTION >= shared.budget_bytes
        )

    def enforce_budget(self, conn: sqlite3.Connection) -> int:
        """Evict least recently accessed rows (HTTP and views) until they fit; rows evicted.

        The stored total is read from the database inside the transaction, not from this
        process's tally: other runs may share the file.
        """
        shared = self.shared
        self.unchecked = 0
        with transaction(conn):
            stored, _ = store.stored_bytes(conn)
            rows, freed = (0, 0)
            if stored > shared.budget_bytes:
                rows, freed = store.evict(conn, stored, shared.budget_bytes)
        with shared.lock:
            shared.stats.bytes_stored = stored - freed
        shared.count(evictions=rows)
        return rows


# Entries per batch of puts: enough that a cold run's stores share the writer's hand-offs
# and commits, few enough that one transaction stays short.
PUT_BATCH_ENTRIES = 64


class _PutBatch:
    """Puts that travel to the writer as one job and are stored in one transaction.

    A cold run stores thousands of small documents; one job each cost the event loop a queue
    hand-off and a wake-up, and the writer a commit, per entry. Puts join the newest batch
    until the writer starts it (``seal``, under ``lock``: the writer thread seals, the event
    loop joins) or it holds ``PUT_BATCH_ENTRIES``; every joiner waits for the same job.
    """

    __slots__ = ("done", "entries", "job", "lock", "loop", "sealed", "write")

    def __init__(
        self, entry: HttpEntry, write: Callable[[sqlite3.Connection, Sequence[HttpEntry]], None]
    ) -> None:
        self.entries = [entry]
        self.write = write
        self.lock = threading.Lock()
        self.sealed = False
        self.done = anyio.Event()
        # Only puts on the same event loop join: the job wakes this loop when it has run.
        self.loop = asyncio.get_running_loop()
        self.job: Job[None] = Job(self.run)

    def run(self, conn: sqlite3.Connection) -> None:
        """The writer's job: seal, then store the entries (run again after a rebuild)."""
        self.write(conn, self.seal())

    def join(self, entry: HttpEntry) -> bool:
        """Add ``entry`` unless the writer started the batch or it is full; say whether."""
        with self.lock:
            full = len(self.entries) >= PUT_BATCH_ENTRIES
            if self.sealed or full or asyncio.get_running_loop() is not self.loop:
                return False
            self.entries.append(entry)
            return True

    def seal(self) -> list[HttpEntry]:
        """Close the batch to new entries (in the writer); return its entries in put order."""
        with self.lock:
            self.sealed = True
            return self.entries


class Cache:
    """The SQLite cache of one run: HTTP entries, catalog views, release lists, extractions.

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
        # The newest batch of puts, joined by puts made before the writer starts it.
        self._puts: _PutBatch | None = None

    @classmethod
    def open(
        cls,
        path: Path | None,
        *,
        budget_bytes: int = DEFAULT_BUDGET_BYTES,
        readers: int = 4,
        clock: Clock | None = None,
        fallback: str | None = None,
        record_format: int = 0,
    ) -> Cache:
        """Open (creating, migrating or rebuilding) the cache at ``path``; ``None`` is in memory.

        ``budget_bytes`` caps compressed HTTP body and catalog view bytes (evicted on open
        when exceeded).
        ``readers`` is the number of reader threads (0, or an in-memory database, reads
        through the writer). ``clock`` names quarantined files. ``fallback`` (with ``path``
        ``None``) is why the caller could not use its file: kept in ``fallback`` and
        ``warnings``. ``record_format`` (the caller's ``RECORD_FORMAT``; 0: none) is stored
        with each extraction record, and records of lower formats are deleted on open.
        Blocks until the database is ready. A corrupt file is quarantined and
        rebuilt, a write-ahead log written for another database is moved aside and one left
        by an unfinished run is replayed, and a file whose write lock another process holds is
        read with best-effort writes (see ``warnings``). Raises ``FutureSchema`` for a newer
        schema and ``CacheUnavailable`` for an unwritable file or one locked whole (busy to
        readers too); neither is moved.
        """
        if budget_bytes < 0 or readers < 0:
            raise ValueError("budget_bytes and readers must not be negative")
        shared = _Shared(path, budget_bytes, clock or SystemClock())
        shared.record_format = record_format
        if path is None and fallback is not None:
            shared.fallback = fallback
            shared.warn(f"{fallback}; using an in-memory cache for this run")
        writer = _Writer(shared)
        writer.start()
        try:
            writer.ready.result()
        except BaseException:
            writer.queue.put(None)
            writer.join()
            raise
        shared.held = shared.path  # None after a fallback to memory at open
        if shared.held is not None:
            recovery.hold(shared.held)
        pool = (
            [Reader(shared.path, i, fail_fast=shared.fail_fast) for i in range(readers)]
            if shared.path
            else []
        )
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
    def fallback(self) -> str | None:
        """Why this run uses an in-memory cache instead of its file; ``None`` when it does not."""
        return self._shared.fallback

    @property
    def warnings(self) -> list[str]:
        """Warnings for the user, each kind once per run; never bodies or tokens.

        Quarantine and rebuild, a replayed or foreign write-ahead log, damaged rows, refused
        reads and writes, the in-memory fallback.
        """
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

        Decoded in a reader thread after its read transaction ended. A row that cannot be
        read (a body that fails to decode, a damaged value) is a miss: the row, with its
        validators, is deleted so they are never sent (see ``_drop_damaged``). A read the
        database refuses (busy, I/O) is a miss too, with a warning: never an error. The access
        is remembered and written later by the writer, so reads take no write lock. Raises
        ``CacheError`` only for a closed handle.
        """
        found = await self._lookup(partial(store.read_http, key=key), None)
        if isinstance(found, store.CorruptBody):
            await self._drop_damaged(key, found)
            return None
        if found is None:
            self._shared.count(misses=1)
            return None
        self._shared.record_access(key)
        self._shared.count(hits=1)
        return found

    async def get_http_many(self, keys: Sequence[str]) -> dict[str, HttpEntry | None]:
        """Return ``get_http`` for many keys in one reader job (a run's first lookups at once).

        A damaged row is a miss for its own key only; a refused read is a miss for all.
        """
        found = await self._lookup(partial(store.read_http_many, keys=list(keys)), None)
        if found is None:
            found = dict.fromkeys(keys)
        result: dict[str, HttpEntry | None] = {}
        hits: list[str] = []
        misses = 0
        for key, value in found.items():
            if isinstance(value, store.CorruptBody):
                await self._drop_damaged(key, value)
                result[key] = None
            elif value is None:
                misses += 1
                result[key] = None
            else:
                hits.append(key)
                result[key] = value
        # Counted and remembered once for the whole read (one lock each), in the keys' order.
        shared = self._shared
        if hits:
            shared.record_accesses(hits)
        shared.count(hits=len(hits), misses=misses)
        return result

    async def get_views(self, keys: Sequence[str]) -> dict[str, CatalogView | None]:
        """Return the stored catalog view of each key (whatever its age), or ``None``.

        One reader job for all keys (a warm run asks hundreds at once). A row that cannot be
        read (a damaged value, a frame that does not decode) is a miss for its own key: it is
        counted in ``corrupt_bodies``, warned about once and deleted; a read the database
        refuses is a miss for all. Whether a view may be used (its representation, its age)
        is the caller's decision. Raises ``CacheError`` only for a closed handle.
        """
        found = await self._lookup(partial(store.read_views, keys=list(keys)), None)
        if found is None:
            return dict.fromkeys(keys)
        result: dict[str, CatalogView | None] = {}
        for key, value in found.items():
            if isinstance(value, store.CorruptBody):
                shared = self._shared
                shared.count(corrupt_bodies=1)
                shared.warn_once(
                    "damaged-view",
                    f"cache database {shared.path or ':memory:'}: a stored catalog view could "
                    "not be read (damaged row); it was dropped and looked up again",
                )
                await self._store(partial(self._drop_view, key=key, blob=value.body), None)
                result[key] = None
                continue
            if value is not None:
                self._shared.record_access(store.VIEW_ACCESS + key)
            result[key] = value
        return result

    async def put_views(self, views: Sequence[CatalogView]) -> int:
        """Store ``views`` compressed in one writer job and transaction; return how many.

        A view replaces the stored one of its key only when it was fetched at the same time or
        later (``fetched_at``): older data never resets a view's age. Counted in the budget
        with HTTP bodies (evicted least recently used first). Best effort like every write: a
        refused write stores nothing and returns 0.
        """
        if not views:
            return 0
        return await self._store(partial(self._put_views, views=list(views)), 0)

    def view_summary(self) -> ViewSummary:
        """Return the stored views per datasource (counts, oldest/newest fetch time, bytes).

        Blocks the calling thread (for the CLI's ``cache status``); an unreadable database
        gives an empty summary.
        """
        self._check_open()
        try:
            return call_sync(self._writer, Job(store.view_summary))
        except CacheUnavailable as exc:
            self._shared.read_failed(exc)
            return ViewSummary({})

    async def _drop_damaged(self, key: str, found: store.CorruptBody) -> None:
        """Count and warn (once) about an unreadable row, and have the writer drop it."""
        shared = self._shared
        shared.count(misses=1, corrupt_bodies=1)
        shared.warn_once(
            "damaged",
            f"cache database {shared.path or ':memory:'}: a stored HTTP entry could not be read "
            "(damaged row); it was dropped and fetched again",
        )
        await self._store(partial(self._drop_row, key=key, blob=found.body), None)

    async def put_http(self, entry: HttpEntry) -> None:
        """Store ``entry`` compressed (Zstandard level 3) in one transaction; enforce the budget.

        Best effort, like every write: when the database refuses it (busy past the timeout,
        full, I/O) the entry is not stored, ``stats.write_failures`` counts it, a warning says
        so once, and this returns normally. Raises ``ValueError`` unless the status is 2xx.
        """
        if not 200 <= entry.status < 300:  # noqa: PLR2004 - only successes are stored
            raise ValueError(f"only 2xx responses are cached, not {entry.status}")
        self._check_open()
        batch = self._puts
        if batch is not None and batch.join(entry):
            # The writer has not started that batch yet: this entry rides along with it.
            try:
                await batch.done.wait()
                batch.job.future.result()
            except CacheUnavailable as exc:
                self._shared.write_failed(exc)
            return
        batch = self._puts = _PutBatch(entry, self._put_http)
        try:
            await call(self._writer, batch.job, batch.done)
        except CacheUnavailable as exc:
            self._shared.write_failed(exc)

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
        touched = await self._store(
            lambda conn: self._in_transaction(conn, touch, clock=self._tick()), default=False
        )
        if touched:
            self._shared.count(revalidated=1)

    async def delete_http(self, key: str) -> None:
        """Remove the entry for ``key``, body and validators (no-store or uncacheable)."""
        await self._store(partial(self._delete_http, key=key, blob=None), None)

    async def merge_releases(self, source: str, package: str, items: Sequence[ReleaseItem]) -> bool:
        """Merge the first page of upstream newest-first ``items`` (see ``store.merge_releases``).

        Stops at the first stored item (refreshing its date and digest) and returns ``True``
        then; ``items[0]`` becomes the release head. One transaction. A refused write returns
        ``False`` (keep paginating: nothing was stored).
        """
        merge = partial(store.merge_releases, source=source, package=package, items=items)
        return await self._store(
            lambda conn: self._in_transaction(conn, merge, after=None), default=False
        )

    async def merge_release_page(
        self, source: str, package: str, items: Sequence[ReleaseItem], *, after: str
    ) -> bool:
        """Merge a later page of the same scan right after the version ``after``.

        ``after`` is the previous page's last inserted version; this explicit anchor tells
        history pagination from a refresh prefix. Returns ``True`` at the first stored item.
        One transaction.
        """
        merge = partial(store.merge_releases, source=source, package=package, items=items)
        return await self._store(
            lambda conn: self._in_transaction(conn, merge, after=after), default=False
        )

    async def release_heads(self, source: str, package: str) -> ReleaseItem | None:
        """Return the newest release stored for the package, or ``None`` (also when unreadable)."""
        return await self._lookup(partial(store.release_head, source=source, package=package), None)

    async def releases(self, source: str, package: str) -> list[ReleaseItem]:
        """Return the stored releases of the package in upstream order, newest first."""
        stored: list[ReleaseItem] = await self._lookup(
            partial(store.releases, source=source, package=package), []
        )
        return stored

    async def put_extraction(self, repo: str, commit: str, config_hash: str, data: bytes) -> None:
        """Store the caller's extraction record bytes for (repo, commit, config hash)."""
        put = partial(
            store.put_extraction,
            repo=repo,
            commit=commit,
            config_hash=config_hash,
            record_format=self._shared.record_format,
        )
        await self._store(lambda conn: self._in_transaction(conn, put, data=data), None)

    async def get_extraction(self, repo: str, commit: str, config_hash: str) -> bytes | None:
        """Return the extraction record bytes for (repo, commit, config hash), or ``None``."""
        get = partial(store.get_extraction, repo=repo, commit=commit, config_hash=config_hash)
        return await self._lookup(get, None)

    async def task_job(self, run: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``run`` (a ``cache.tasks`` function) in one writer transaction; its result.

        Unlike the cache's other writes this one raises: ``CacheUnavailable`` when the
        database refuses it (a task queue that cannot be written cannot be worked through).
        It waits for another process's write lock (the busy timeout) even after the run's
        other writes stopped waiting: processes sharing one queue take turns at it.
        """
        return await self._write(partial(self._task_transaction, run=run))

    def submit_task_job(self, run: Callable[[sqlite3.Connection], T]) -> Future[T] | None:
        """Queue ``task_job``'s work without waiting for it; ``None`` when the queue is full.

        For a caller that must not await (a hook called from inside a lookup); the writer runs
        jobs in order, so awaiting a later ``task_job`` waits for this one too.
        """
        self._check_open()
        job = Job(partial(self._task_transaction, run=run))
        try:
            self._writer.queue.put_nowait(job)
        except queue.Full:
            return None
        return job.future

    def task_job_sync(self, run: Callable[[sqlite3.Connection], T]) -> T:
        """``task_job`` for a caller outside an event loop (the CLI); blocks the thread."""
        self._check_open()
        return call_sync(self._writer, Job(partial(self._task_transaction, run=run)))

    def prune(self) -> int:
        """Evict to the budget, ``VACUUM`` and truncate the WAL; return bytes the file shrank.

        Blocks the calling thread (for the CLI). SQLite reuses freed pages but only VACUUM
        returns them to the filesystem (https://www.sqlite.org/lang_vacuum.html).
        """
        self._check_open()
        return call_sync(self._writer, Job(self._prune))

    # Jobs run by the writer thread.

    def _task_transaction(
        self, conn: sqlite3.Connection, run: Callable[[sqlite3.Connection], T]
    ) -> T:
        """``run`` in one transaction, waiting for the write lock even on a fast connection."""
        fast = self._writer.fast
        if fast:
            conn.execute(f"PRAGMA busy_timeout = {recovery.BUSY_TIMEOUT_MS}")
        try:
            return self._in_transaction(conn, run)
        finally:
            if fast:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("PRAGMA busy_timeout = 0")

    @staticmethod
    def _in_transaction(conn: sqlite3.Connection, run: Callable[..., T], **kwargs: Any) -> T:  # noqa: ANN401 - forwarded to ``run``
        with transaction(conn):
            return run(conn, **kwargs)

    def _tick(self) -> int:
        return self._shared.tick()

    def _put_http(self, conn: sqlite3.Connection, entries: Sequence[HttpEntry]) -> None:
        """Store ``entries`` in order, in one transaction (a later one replaces an earlier one)."""
        # Compressed before BEGIN: the write lock is held briefly.
        blobs = [store.compress(entry.body) for entry in entries]
        with transaction(conn):
            delta = sum(
                store.write_http(conn, entry, blob, self._tick())
                for entry, blob in zip(entries, blobs, strict=True)
            )
        self._shared.count(stores=len(entries), bytes_stored=delta)
        if not self._writer.budget_check_due(delta):
            return
        try:
            self._writer.enforce_budget(conn)
        except sqlite3.Error as exc:
            if is_corruption(exc):
                raise
            # The entry is stored; only this eviction is skipped (the next put retries it).
            if is_busy(exc):
                self._writer.go_fast()
            self._shared.write_failed(recovery.unavailable(exc, self._shared.path), count=False)

    def _delete_http(self, conn: sqlite3.Connection, key: str, blob: bytes | None) -> None:
        with transaction(conn):
            freed = store.delete_http(conn, key, blob)
        self._shared.count(bytes_stored=-freed)

    def _drop_row(self, conn: sqlite3.Connection, key: str, blob: bytes | None) -> None:
        """Delete one unreadable row, or rebuild the file when damage repeats.

        ``DAMAGE_LIMIT`` unreadable rows in one run, or one after earlier runs already dropped
        some, mean the file is not to be trusted: it is quarantined and rebuilt as on open.
        """
        shared = self._shared
        with shared.lock:
            shared.damaged += 1
            damaged, prior = shared.damaged, shared.prior_damage
        if shared.path is not None and (prior or damaged >= DAMAGE_LIMIT):
            if prior:
                reason = f"an unreadable row again, after {prior} dropped by earlier runs"
            else:
                reason = f"{damaged} unreadable rows in this run"
            self._writer.recover(reason)
            return
        with transaction(conn):
            freed = store.delete_damaged(conn, key, blob)
        self._shared.count(bytes_stored=-freed)

    def _put_views(self, conn: sqlite3.Connection, views: Sequence[CatalogView]) -> int:
        """Store ``views`` in one transaction (compressed first); enforce the budget after."""
        blobs = [store.compress(view.body) for view in views]
        stored_at = self._shared.clock.now().timestamp()
        written = delta = 0
        with transaction(conn):
            for view, blob in zip(views, blobs, strict=True):
                change = store.write_view(conn, view, blob, stored_at, self._tick())
                if change is not None:
                    written += 1
                    delta += change
        self._shared.count(view_stores=written, bytes_stored=delta)
        if self._writer.budget_check_due(delta):
            try:
                self._writer.enforce_budget(conn)
            except sqlite3.Error as exc:
                if is_corruption(exc):
                    raise
                self._shared.write_failed(recovery.unavailable(exc, self._shared.path), count=False)
        return written

    def _drop_view(self, conn: sqlite3.Connection, key: str, blob: bytes | None) -> None:
        with transaction(conn):
            freed = store.delete_view(conn, key, blob)
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

    async def _store(self, run: Callable[[sqlite3.Connection], T], default: T) -> T:
        """Run a write job; a write the database refuses returns ``default``, never raises.

        A cache failure must never cost an answer the network already gave.
        """
        try:
            return await self._write(run)
        except CacheUnavailable as exc:
            self._shared.write_failed(exc)
            return default

    async def _lookup(self, run: Callable[[sqlite3.Connection], T], default: T) -> T:
        """Run a read job; a read the database refuses returns ``default`` (a miss)."""
        try:
            return await self._read(run)
        except CacheUnavailable as exc:
            self._shared.read_failed(exc)
            return default

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
                if is_busy(exc):
                    self._shared.fail_fast.set()
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
        if self._shared.held is not None:
            recovery.release(self._shared.held)
            self._shared.held = None
