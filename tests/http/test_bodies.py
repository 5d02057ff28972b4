"""The run-wide pool bounding the bytes held by response bodies being read (``BodyPool``)."""

from __future__ import annotations

import gzip
from collections.abc import AsyncIterator

import anyio
import pytest

from patchula.errors import RegistryError
from patchula.http.bodies import BodyPool
from patchula.http.fetcher import Fetcher, make_client
from patchula.http.transport import BodyTooLarge, read_body
from tests.fake_registry import FakeRegistry

KIB = 1024
MIB = 1024 * KIB


@pytest.mark.anyio
async def test_a_body_past_the_shared_bytes_waits_for_an_earlier_one() -> None:
    """The oldest body may pass ``shared``; a later one waits until room is released."""
    pool = BodyPool(shared=10)
    first, second = pool.claim(), pool.claim()
    await first.take(100)  # the oldest: never waits, up to its own bound
    await second.take(10)
    progressed: list[str] = []

    async def more() -> None:
        await second.take(1)
        progressed.append("second")

    async with anyio.create_task_group() as tg:
        tg.start_soon(more)
        await anyio.wait_all_tasks_blocked()
        assert progressed == []  # 10 + 1 bytes beside the oldest: over 10, so it waits
        first.release()  # the second is the oldest now
    assert progressed == ["second"]
    assert (pool.held, pool.peak) == (11, 110)
    second.release()
    assert pool.held == 0


@pytest.mark.anyio
async def test_bodies_larger_than_the_pool_are_all_read_one_after_another() -> None:
    """Eight 64 KiB bodies against 16 KiB shared: every one is read, the peak stays bounded."""
    pool = BodyPool(shared=16 * KIB)
    body = bytes(range(256)) * 256  # 64 KiB

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 4 * KIB):
            await anyio.lowlevel.checkpoint()
            yield body[start : start + 4 * KIB]

    results: list[bytes] = []

    async def read() -> None:
        results.append(await read_body(chunks(), [], 64 * KIB, pool))

    async with anyio.create_task_group() as tg:
        for _ in range(8):
            tg.start_soon(read)
    assert results == [body] * 8
    assert pool.held == 0
    assert 64 * KIB < pool.peak <= 16 * KIB + 64 * KIB


@pytest.mark.anyio
async def test_decoded_bytes_are_counted_in_small_steps() -> None:
    """A gzip body is counted as decoded, a step of 4 KiB of wire at a time, and released."""
    pool = BodyPool(shared=0)
    body = bytes(4 * MIB)
    data = gzip.compress(body)
    holder = pool.claim()
    await holder.take(1)  # an older body: this one may hold nothing beside it

    async def chunks() -> AsyncIterator[bytes]:
        yield data

    async def release_soon() -> None:
        await anyio.wait_all_tasks_blocked()
        assert pool.held == 1  # not one decoded step was taken while the older body reads
        holder.release()

    async with anyio.create_task_group() as tg:
        tg.start_soon(release_soon)
        out = await read_body(chunks(), [("content-encoding", "gzip")], 8 * MIB, pool)
    assert out == body
    assert pool.held == 0
    assert pool.peak == 4 * MIB


@pytest.mark.anyio
async def test_a_failed_body_releases_its_bytes() -> None:
    """A body refused over its bound leaves the pool, so the bodies after it go on."""
    pool = BodyPool(shared=KIB)

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(8):
            yield bytes(KIB)

    with pytest.raises(Exception, match="over the 4 KiB limit"):
        await read_body(chunks(), [], 4 * KIB, pool)
    assert pool.held == 0


@pytest.mark.anyio
async def test_one_host_cannot_make_the_fetcher_hold_every_body_at_once() -> None:
    """Eight endless 3 MiB bodies (bound 2 MiB) in flight: at most 1 + 2 MiB held at once.

    Without the pool the eight would hold up to 8 x 2 MiB together; with it every row still
    fails with the body bound, and bodies within the bound are all read in full.
    """
    with FakeRegistry() as fake:
        npm = fake.host("npm")
        npm.huge_next(8, 3 * MIB, announce=False, route="GET /big")
        async with make_client() as client:
            fetcher = Fetcher(client, max_body_bytes=2 * MIB, body_pool_bytes=MIB)
            failures: list[str] = []

            async def get(i: int) -> None:
                try:
                    await fetcher(f"{npm.url}/big?n={i}")
                except RegistryError as exc:
                    failures.append(str(exc))

            async with anyio.create_task_group() as tg:
                for i in range(8):
                    tg.start_soon(get, i)
            npm.huge_next(4, MIB + 7, route="GET /fine")
            sizes: list[int] = []

            async def fine(i: int) -> None:
                sizes.append(len((await fetcher(f"{npm.url}/fine?n={i}")).content))

            async with anyio.create_task_group() as tg:
                for i in range(4):
                    tg.start_soon(fine, i)
        assert fake.errors == []
    assert len(failures) == 8
    assert all("body on the wire over the 2 MiB limit" in f for f in failures)
    assert sizes == [MIB + 7] * 4
    assert fetcher.bodies.held == 0
    # The oldest body up to its 2 MiB bound, the others 1 MiB together (plus a chunk or so).
    assert 2 * MIB < fetcher.bodies.peak <= 3 * MIB + 64 * KIB


@pytest.mark.anyio
async def test_a_refused_body_is_not_kept_alive_by_its_traceback() -> None:
    """The parts read before ``BodyTooLarge`` are dropped: the error's frames hold none of them.

    The lookup's error chains this one (``__context__``) for the rest of the run; holding the
    parts there kept every refused body of the run in memory (4 GB RSS for 16).
    """

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(8):
            yield bytes(KIB)

    with pytest.raises(BodyTooLarge) as caught:
        await read_body(chunks(), [], 4 * KIB)
    tb = caught.value.__traceback__
    held: list[object] = []
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "read_body":
            held.append(tb.tb_frame.f_locals["parts"])
        tb = tb.tb_next
    assert held == [[]]
