"""Threads that own SQLite connections, their bounded job queues, and how callers submit jobs.

Each worker runs jobs one at a time on its own connection. Async callers never block the event
loop: a job goes into the bounded queue directly or, when the queue is full, from a thread
(back-pressure), and the caller awaits an event the worker sets through
``loop.call_soon_threadsafe``. A cancelled caller stops waiting; its job still runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Generic, TypeVar

import anyio
import anyio.to_thread
import msgspec

from patchula.cache.base import CacheError
from patchula.cache.recovery import connect_reader

__all__ = ["Job", "Reader", "ReaderBroken", "Worker", "call", "call_sync"]

T = TypeVar("T")
READER_QUEUE = 32


class Job(msgspec.Struct, Generic[T], eq=False):
    """One unit of work for a worker: ``run`` gets the worker's connection.

    ``recover_from`` (writer only) is the database generation in which a reader met
    corruption: the writer rebuilds first unless that generation was already replaced.
    """

    run: Callable[[sqlite3.Connection], T]
    recover_from: int | None = None
    future: Future[T] = msgspec.field(default_factory=Future)


class ReaderBroken(Exception):  # noqa: N818 - a state of the reader, not a failure of the job
    """A reader thread could not open its connection; the caller reads through the writer."""


class Worker(threading.Thread):
    """A thread owning one connection and a bounded queue; ``None`` in the queue stops it.

    Subclasses give ``connect`` and may hook ``before_job`` and ``on_shutdown``. ``jobs_done``
    counts completed jobs (for tests and diagnostics).
    """

    def __init__(self, name: str, maxsize: int) -> None:
        super().__init__(name=name, daemon=True)
        self.queue: queue.Queue[Job[Any] | None] = queue.Queue(maxsize)
        self.conn: sqlite3.Connection | None = None
        self.jobs_done = 0

    def connect(self) -> sqlite3.Connection:
        """Open this worker's connection (called in the worker thread)."""
        raise NotImplementedError

    def before_job(self) -> None:
        """Run before each job (the writer flushes coalesced access times here)."""

    def on_shutdown(self) -> None:
        """Run once after the last job, before the connection closes."""

    def execute(self, job: Job[Any]) -> object:
        """Run one job on this worker's connection."""
        if self.conn is None:
            raise CacheError("the cache connection is not open")
        return job.run(self.conn)

    def run(self) -> None:
        """Open the connection, run jobs until ``None`` arrives, then drain and close."""
        self.open()
        while (job := self.queue.get()) is not None:
            if not job.future.set_running_or_notify_cancel():
                continue
            try:
                self.before_job()
                result = self.execute(job)
            except BaseException as exc:  # noqa: BLE001 - delivered to the waiting caller
                self.jobs_done += 1
                job.future.set_exception(exc)
            else:
                self.jobs_done += 1
                job.future.set_result(result)
        try:
            self.on_shutdown()
        finally:
            self.close()
        # Jobs queued after the stop marker have no worker any more: fail them, never hang.
        while True:
            try:
                late = self.queue.get_nowait()
            except queue.Empty:
                break
            if late is not None and late.future.set_running_or_notify_cancel():
                late.future.set_exception(CacheError("the cache is closed"))

    def open(self) -> None:
        """Open the connection; a failure is kept and raised by every job (see ``Reader``)."""
        self.conn = self.connect()

    def close(self) -> None:
        """Close the connection, ignoring errors from a damaged database."""
        if self.conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self.conn.close()
            self.conn = None


class Reader(Worker):
    """A read-only connection to the database file with a 32-job queue."""

    def __init__(self, path: Path, index: int, *, fail_fast: threading.Event | None = None) -> None:
        super().__init__(f"patchula-cache-reader-{index}", READER_QUEUE)
        self.path = path
        self.broken: sqlite3.Error | None = None
        # Once set (the run met a busy lock), this reader stops waiting for locks too.
        self.fail_fast = fail_fast if fail_fast is not None else threading.Event()
        self.fast = False

    def connect(self) -> sqlite3.Connection:
        """Open ``path`` with ``mode=ro``."""
        return connect_reader(self.path)

    def open(self) -> None:
        """Open the connection or remember why it failed."""
        try:
            super().open()
        except sqlite3.Error as exc:
            self.broken = exc

    def execute(self, job: Job[Any]) -> object:
        """Run ``job``, or raise ``ReaderBroken`` when the connection never opened."""
        if self.broken is not None:
            raise ReaderBroken(str(self.broken))
        if self.fail_fast.is_set() and not self.fast and self.conn is not None:
            self.fast = True
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("PRAGMA busy_timeout = 0")
        return super().execute(job)


async def call(worker: Worker, job: Job[T], done: anyio.Event | None = None) -> T:
    """Queue ``job`` on ``worker`` and await its result without blocking the event loop.

    ``done`` (optional) is the event set when the job has run, for others to wait on too.

    A full queue is waited on in a worker thread (anyio's default limiter bounds how many such
    threads wait), so memory stays bounded. Cancelling the caller does not cancel the job once
    it is queued: ``anyio.to_thread.run_sync`` finishes the ``put`` before the cancellation
    is delivered, and the worker runs every queued job.
    """
    loop = asyncio.get_running_loop()
    event = done if done is not None else anyio.Event()

    def wake(_: Future[T]) -> None:
        # The loop may have closed if the caller went away; then nobody waits any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(event.set)

    job.future.add_done_callback(wake)
    try:
        worker.queue.put_nowait(job)
    except queue.Full:
        await anyio.to_thread.run_sync(worker.queue.put, job)
    await event.wait()
    return job.future.result()


def call_sync(worker: Worker, job: Job[T]) -> T:
    """Queue ``job`` (blocking while the queue is full) and wait for its result."""
    worker.queue.put(job)
    return job.future.result()
