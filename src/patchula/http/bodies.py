"""The run-wide bound on the memory held by response bodies being read (``BodyPool``)."""

from __future__ import annotations

import anyio

__all__ = ["BodyPool", "Claim"]


class BodyPool:
    """The bytes the response bodies being read may hold together, across the whole run.

    Each body is bounded by itself (``max_body_bytes``, ``transport.read_body``); without a
    pool a hostile host could make every request it holds buffer that much at once (16 x 256
    MiB per host). Here the bodies being read hold at most ``shared`` bytes together, besides
    the one that started first: that one may always take more, up to its own bound, so one
    body is always read on to its end and no two bodies ever wait for each other. A body that
    would take the others past ``shared`` waits (its request's deadline runs; TCP flow control
    holds the server back) until a body read before it ends; when the first ends, the next
    oldest takes its place. Peak: ``shared + max_body_bytes`` bytes of bodies (512 MiB with
    the defaults), plus one decoded step per body being read, whatever the number of hosts.
    A body is counted while it is read, until ``read_body`` returns it or fails.

    ``held`` is the bytes held now, ``peak`` the most held at once this run.
    """

    def __init__(self, shared: int) -> None:
        self.shared = shared
        self.held = 0
        self.peak = 0
        # Bytes per body being read, in the order they started: the first is the oldest.
        self._claims: dict[Claim, int] = {}
        self._released: anyio.Event | None = None

    def claim(self) -> Claim:
        """Start counting one body; ``Claim.release`` it when the body is returned or dropped."""
        claim = Claim(self)
        self._claims[claim] = 0
        return claim

    async def _take(self, claim: Claim, n: int) -> None:
        while True:
            oldest = next(iter(self._claims))
            others = self.held - self._claims[oldest]
            if claim is oldest or others + n <= self.shared:
                self._claims[claim] += n
                self.held += n
                self.peak = max(self.peak, self.held)
                return
            if self._released is None:
                self._released = anyio.Event()
            await self._released.wait()

    def _release(self, claim: Claim) -> None:
        self.held -= self._claims.pop(claim, 0)
        released, self._released = self._released, None
        if released is not None:
            released.set()


class Claim:
    """One body's share of a ``BodyPool``."""

    __slots__ = ("_pool",)

    def __init__(self, pool: BodyPool) -> None:
        self._pool = pool

    async def take(self, n: int) -> None:
        """Count ``n`` more bytes held by this body, first waiting for room (see ``BodyPool``)."""
        if n:
            await self._pool._take(self, n)  # noqa: SLF001 - the pool's own claim

    def release(self) -> None:
        """This body is no longer read: its bytes leave the pool and waiting bodies retry."""
        self._pool._release(self)  # noqa: SLF001 - the pool's own claim
