"""Fake time for async tests: sleeping never takes real time, and time jumps only when idle.

``FakeTime.sleep`` parks the caller until the fake clock reaches its wake time. A driver task
(``run_driver``) advances the clock to the earliest wake time only when every task is blocked
and ``busy()`` says no real I/O is pending (e.g. no HTTP request in flight), so work that could
still run at the current instant always runs before time moves — like trio's autojump clock.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta

import anyio
import anyio.lowlevel
from anyio import wait_all_tasks_blocked
from anyio.abc import TaskStatus

from patchula.http.governor import Timer

EPOCH = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class FakeTime:
    """A fake monotonic clock (seconds from 0) with a matching wall clock from ``EPOCH``.

    ``on_advance(old, new)`` is called just before time moves forward, when nothing is running.
    """

    def __init__(self, busy: Callable[[], bool] = lambda: False) -> None:
        self.t = 0.0
        self.sleeps: list[float] = []
        self.busy = busy
        self.on_advance: Callable[[float, float], None] | None = None
        self._sleepers: list[tuple[float, int, anyio.Event]] = []
        self._seq = itertools.count()

    def wall(self) -> datetime:
        """Return the wall-clock time matching the fake monotonic time."""
        return EPOCH + timedelta(seconds=self.t)

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of fake time."""
        self.sleeps.append(seconds)
        if seconds <= 0:
            await anyio.lowlevel.checkpoint()
            return
        event = anyio.Event()
        heapq.heappush(self._sleepers, (self.t + seconds, next(self._seq), event))
        await event.wait()

    def timer(self) -> Timer:
        """Return a governor ``Timer`` reading this fake time."""
        return Timer(monotonic=lambda: self.t, wall=self.wall, sleep=self.sleep)

    @contextlib.asynccontextmanager
    async def driving(self) -> AsyncIterator[None]:
        """Run the time driver for the duration of the ``async with`` block."""
        async with anyio.create_task_group() as tg:
            await tg.start(self.run_driver)
            yield
            tg.cancel_scope.cancel()

    async def run_driver(
        self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Advance time whenever everyone is idle; run it in a task group and cancel it after."""
        task_status.started()
        while True:
            await wait_all_tasks_blocked()
            if not self._sleepers or self.busy():
                await anyio.sleep(0.001)  # real I/O is pending: let it finish first
                continue
            wake, _, event = heapq.heappop(self._sleepers)
            if wake > self.t and self.on_advance is not None:
                self.on_advance(self.t, wake)
            self.t = max(self.t, wake)
            event.set()
