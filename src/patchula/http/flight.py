"""Single-flight: concurrent callers of one key wait on the one piece of work that serves them."""

from __future__ import annotations

from typing import Generic, TypeVar, cast

import anyio

from patchula.errors import RegistryError

T = TypeVar("T")


class Flight(Generic[T]):
    """One in-flight piece of work that concurrent callers of the same key wait on.

    The leader calls ``succeed`` or ``fail`` once; waiters get its value or its exception (a
    cancelled leader's waiters get a ``RegistryError``, never the cancellation). The wake-up
    event is made only when someone actually waits (most flights have no waiter).
    """

    __slots__ = ("_done", "_error", "_event", "_value")

    def __init__(self) -> None:
        self._done = False
        self._event: anyio.Event | None = None
        self._value: T | None = None
        self._error: BaseException | None = None

    def succeed(self, value: T) -> None:
        """Finish with ``value``."""
        self._value = value
        self._finish()

    def fail(self, error: BaseException) -> None:
        """Finish with ``error`` (waiters raise it; a cancellation becomes a ``RegistryError``)."""
        self._error = error
        self._finish()

    def _finish(self) -> None:
        self._done = True
        if self._event is not None:
            self._event.set()

    async def wait(self) -> T:
        """The leader's value, once it has one; raises what the leader failed with."""
        if not self._done:
            if self._event is None:
                self._event = anyio.Event()
            await self._event.wait()
        if isinstance(self._error, Exception):
            raise self._error
        if self._error is not None:
            # The leader was cancelled; its waiters are not, and must not inherit that.
            msg = "the shared request was cancelled before it finished"
            raise RegistryError(msg)
        return cast("T", self._value)  # set before the flight finished
