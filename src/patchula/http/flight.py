"""Single-flight: concurrent callers of one key wait on the one piece of work that serves them.

``Flight`` is one such piece of work; ``once_per_run`` keeps its answer for the rest of a run
(``run_memo``), for the documents several lookups of one run read.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Generic, TypeVar, cast

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


# The documents datasources read once per run (``once_per_run``), while ``run_memo`` is open.
_RUN_MEMO: contextvars.ContextVar[dict[tuple[object, ...], Flight[Any]] | None] = (
    contextvars.ContextVar("patchula_run_memo", default=None)
)


@contextlib.contextmanager
def run_memo() -> Iterator[None]:
    """Within the block (this task and the tasks it starts), ``once_per_run`` keeps answers.

    ``scan.scan`` and ``warm.Warmer.run`` open one per run, so nothing is kept past a run: the
    next run asks the registry (and the HTTP cache's freshness rules) again.
    """
    token = _RUN_MEMO.set({})
    try:
        yield
    finally:
        _RUN_MEMO.reset(token)


async def once_per_run(owner: object, key: tuple[str, ...], make: Callable[[], Awaitable[T]]) -> T:
    """``make()``'s answer for ``key``, made once per run (``run_memo``) and then reused.

    For the documents several lookups of one run read (a GitHub repository's release and tag
    lists: its catalog, then each round of its lazy publish times): HTTP freshness alone would
    ask again whenever the registry sends no ``max-age`` (a 200 or a 304 each time), while a
    run promises one fetch per document. ``owner`` is the fetch facade the answer came
    through; ``key`` must name everything else it depends on: the datasource and document,
    the base URL, the package and the credential identity
    (``datasource.base.credential_identity_of``). Concurrent callers share the one call;
    a failure is shared by those waiting on it but not kept (the next caller asks again: a
    ``cache warm`` retry). Outside a ``run_memo`` block every call makes its own answer.
    """
    memo = _RUN_MEMO.get()
    if memo is None:
        return await make()
    full = (id(owner), *key)
    shared = memo.get(full)
    if shared is not None:
        return cast("T", await shared.wait())
    flight: Flight[Any] = Flight()
    memo[full] = flight
    try:
        value = await make()
    except BaseException as exc:
        if memo.get(full) is flight:
            del memo[full]
        flight.fail(exc)
        raise
    flight.succeed(value)
    return value
