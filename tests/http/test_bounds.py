"""Every request is bounded: an overall deadline and a body-size bound, against loopback servers.

Deadlines are real but tiny (fractions of a second) against the fake registry; back-off pauses
run on a fake timer. Nothing here asserts how fast anything is.
"""

from __future__ import annotations

import gzip
import zlib
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import anyio
import anyio.lowlevel
import httpx
import pytest
import respx
import zstandard

from patchula.errors import LookupFailed, RegistryError, RegistryUnreachable
from patchula.http.fetcher import Fetcher, Timer, host_key, make_client
from patchula.http.transport import BodyTooLarge, PerHostPoolTransport, read_body
from tests.fake_registry import FakeRegistry

OLD = datetime(2025, 1, 1, tzinfo=UTC)
MIB = 1024 * 1024


class _InstantSleeps:
    """A fake timer whose sleeps return at once and advance its clock by what was asked."""

    def __init__(self) -> None:
        self.calls: list[float] = []
        self.clock = 0.0

    async def sleep(self, seconds: float) -> None:
        self.calls.append(seconds)
        self.clock += seconds
        await anyio.lowlevel.checkpoint()

    def timer(self) -> Timer:
        return Timer(monotonic=lambda: self.clock, sleep=self.sleep)


@pytest.fixture
def registry() -> Iterator[FakeRegistry]:
    """The fake registry with two npm packages, ``slow`` and ``fine``."""
    with FakeRegistry() as fake:
        fake.npm.add("slow", {"1.0.0": OLD})
        fake.npm.add("fine", {"1.0.0": OLD})
        yield fake
        assert fake.errors == []


def _idle(client: httpx.AsyncClient) -> dict[str, int]:
    transport = client._transport
    assert isinstance(transport, PerHostPoolTransport)
    return {k: v for k, v in transport.idle_connections().items() if v}


@pytest.mark.anyio
async def test_dripping_body_fails_at_the_deadline_not_per_read(registry: FakeRegistry) -> None:
    """A body dripping 1 byte per 50 ms never trips the 30 s read timeout; the deadline ends it.

    Its headers arrived, so the host answered: a RegistryError, not RegistryUnreachable.
    """
    npm = registry.host("npm")
    npm.drip_next(1, 20.0, route="GET /slow")
    async with make_client() as client:
        fetcher = Fetcher(client, request_deadline=0.3)
        with pytest.raises(RegistryError, match=r"within 0\.3 s \(deadline\)") as caught:
            await fetcher(f"{npm.url}/slow")
        assert (await fetcher(f"{npm.url}/fine")).status == 200
    assert not isinstance(caught.value, RegistryUnreachable)
    assert f"no complete answer from {host_key(npm.url)}" in str(caught.value)
    assert npm.requests_by_route["GET /slow"] == 1  # the deadline is not retried


@pytest.mark.anyio
async def test_slow_headers_from_a_host_that_answered_are_a_registry_error(
    registry: FakeRegistry,
) -> None:
    """Headers sent a byte per 50 ms hit the deadline; the host had answered: RegistryError."""
    npm = registry.host("npm")
    npm.slow_headers_next(1, 0.05, route="GET /slow")
    async with make_client() as client:
        fetcher = Fetcher(client, request_deadline=0.3)
        assert (await fetcher(f"{npm.url}/fine")).status == 200
        with pytest.raises(RegistryError, match=r"within 0\.3 s \(deadline\)") as caught:
            await fetcher(f"{npm.url}/slow")
        assert _idle(client) == {}  # the stalled connection was dropped, not kept
    assert not isinstance(caught.value, RegistryUnreachable)
    assert fetcher.stats[host_key(npm.url)].errors == 1


@pytest.mark.anyio
async def test_silent_server_costs_one_deadline_not_four_read_timeouts(
    registry: FakeRegistry,
) -> None:
    """A server that never answers costs one attempt bounded by the deadline, then the row."""
    npm = registry.host("npm")
    npm.silent_next(4, route="GET /slow")
    async with make_client(timeout=30.0) as client:
        fetcher = Fetcher(client, request_deadline=0.3)
        with pytest.raises(RegistryUnreachable, match="deadline"):
            await fetcher(f"{npm.url}/slow")
    assert npm.requests_by_route["GET /slow"] == 1


@pytest.mark.anyio
async def test_back_off_pauses_count_against_the_deadline() -> None:
    """Retries stop when the next back-off pause would outlast the deadline, naming the failure."""
    sleeps = _InstantSleeps()
    answers = iter([httpx.Response(200, text="ok")])

    def flaky(request: httpx.Request) -> httpx.Response:
        answer = next(answers, None)
        if answer is None:
            raise httpx.ConnectError("reset", request=request)
        return answer

    with respx.mock(assert_all_called=True) as router:
        route = router.get(url__regex=r"https://flaky\.test/\d+").mock(side_effect=flaky)
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=sleeps.timer(), request_deadline=2.0)
            assert (await fetcher("https://flaky.test/1")).content == b"ok"
            with pytest.raises(
                RegistryError, match=r"within 2 s \(deadline\); last attempt: ConnectError"
            ):
                await fetcher("https://flaky.test/2")
    # 0.5 s and 1 s pauses (plus jitter) fit in 2 s; the 2 s one does not: 3 attempts, no 4th.
    assert len(sleeps.calls) == 2
    assert route.call_count == 4


@pytest.mark.anyio
async def test_waiting_for_a_host_slot_does_not_use_up_the_deadline(
    registry: FakeRegistry,
) -> None:
    """Eight requests through one slot each get the whole deadline once they hold the slot."""
    npm = registry.host("npm")
    npm.latency = 0.1
    async with make_client() as client:
        fetcher = Fetcher(client, host_limits={host_key(npm.url): 1}, request_deadline=0.6)
        statuses: list[int] = []

        async def one(i: int) -> None:
            statuses.append((await fetcher(f"{npm.url}/fine?i={i}")).status)

        async with anyio.create_task_group() as tg:
            for i in range(8):
                tg.start_soon(one, i)
    assert statuses == [200] * 8
    assert npm.peak_concurrency == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("announce", "reason"),
    [(True, r"Content-Length 8388608 over the 1 MiB limit"), (False, r"body on the wire over")],
)
async def test_huge_body_is_refused_at_the_bound_and_not_retried(
    registry: FakeRegistry, *, announce: bool, reason: str
) -> None:
    """A body over --max-body-bytes fails that lookup (host, limit, what); the socket is closed."""
    npm = registry.host("npm")
    npm.huge_next(1, 8 * MIB, announce=announce, route="GET /slow")
    async with make_client() as client:
        fetcher = Fetcher(client, max_body_bytes=MIB)
        with pytest.raises(RegistryError, match=reason) as caught:
            await fetcher(f"{npm.url}/slow")
        assert _idle(client) == {}
        assert (await fetcher(f"{npm.url}/fine")).status == 200
    assert str(caught.value).startswith(f"{host_key(npm.url)} sent a response ")
    assert str(caught.value).endswith("; not retried")
    assert npm.requests_by_route["GET /slow"] == 1


@pytest.mark.anyio
async def test_gzip_bomb_stops_at_the_decoded_bound(registry: FakeRegistry) -> None:
    """A small gzip body inflating to 64 MiB is refused once its decoded size passes 1 MiB."""
    npm = registry.host("npm")
    npm.gzip_bomb_next(1, 64 * MIB, route="GET /slow")
    async with make_client() as client:
        fetcher = Fetcher(client, max_body_bytes=MIB)
        with pytest.raises(RegistryError, match=r"gzip-decoded body over the 1 MiB limit"):
            await fetcher(f"{npm.url}/slow")
    assert npm.requests_by_route["GET /slow"] == 1


@pytest.mark.anyio
async def test_client_path_is_bounded_too() -> None:
    """Through the httpx client (the proxied path) the same size bound and decoders apply."""
    bomb = gzip.compress(bytes(8 * MIB))
    with respx.mock(assert_all_called=True) as router:
        router.get("https://proxied.test/bomb").respond(
            200, headers={"Content-Encoding": "gzip"}, content=bomb
        )
        router.get("https://proxied.test/big").respond(200, content=bytes(2 * MIB))
        router.get("https://proxied.test/ok").respond(
            200, headers={"Content-Encoding": "gzip"}, content=gzip.compress(b'{"ok":1}')
        )
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, max_body_bytes=MIB)
            with pytest.raises(RegistryError, match="gzip-decoded body over the 1 MiB limit"):
                await fetcher("https://proxied.test/bomb")
            with pytest.raises(RegistryError, match="over the 1 MiB limit"):
                await fetcher("https://proxied.test/big")
            assert (await fetcher("https://proxied.test/ok")).content == b'{"ok":1}'


async def _chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("coding", "encode"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate, as some servers send
        ("zstd", zstandard.compress),
        ("gzip, zstd", lambda data: zstandard.compress(gzip.compress(data))),
    ],
)
async def test_codings_decode_across_chunks_up_to_exactly_the_bound(
    coding: str, encode: object
) -> None:
    """Each coding decodes chunk by chunk; a body of exactly the bound passes, one more fails."""
    body = b'{"versions": {}}' * 4096
    assert callable(encode)
    data = encode(body)
    headers = [("content-encoding", coding)]
    out = await read_body(_chunks(data[:7], data[7:]), headers, len(body))
    assert out == body
    with pytest.raises(BodyTooLarge, match=r"-decoded body over the 65535 bytes limit"):
        await read_body(_chunks(data[:7], data[7:]), headers, len(body) - 1)


@pytest.mark.anyio
async def test_zstd_bomb_stops_early() -> None:
    """A 2 KiB zstd frame standing for 64 MiB is refused at the bound, not after inflating."""
    bomb = zstandard.compress(bytes(64 * MIB))
    assert len(bomb) < 4096
    with pytest.raises(BodyTooLarge, match="zstd-decoded body over the 1 MiB limit"):
        await read_body(_chunks(bomb), [("content-encoding", "zstd")], MIB)


@pytest.mark.anyio
async def test_silent_host_that_never_answered_is_given_up_after_a_second_wave(
    registry: FakeRegistry,
) -> None:
    """With a limit of 1, two deadlines pass on a never-answering host; the third fails at once."""
    npm = registry.host("npm")
    npm.silent_next(10)
    async with make_client() as client:
        fetcher = Fetcher(client, host_limits={host_key(npm.url): 1}, request_deadline=0.2)
        reasons: list[str] = []

        async def one(i: int) -> None:
            with pytest.raises(RegistryUnreachable) as caught:
                await fetcher(f"{npm.url}/fine?i={i}")
            reasons.append(str(caught.value))

        async with anyio.create_task_group() as tg:
            for i in range(3):
                tg.start_soon(one, i)
    assert sum("(deadline)" in reason for reason in reasons) == 2
    assert [r for r in reasons if "(deadline)" not in r] == [
        (
            f"{host_key(npm.url)} is unreachable (no answer within 0.2 s): no answer this run; "
            "its lookups were not tried again"
        )
    ]
    assert npm.requests == 2


@pytest.mark.anyio
async def test_dripping_host_is_never_unreachable_but_given_up_as_too_slow(
    registry: FakeRegistry,
) -> None:
    """Five dripping lookups through a limit of 2: never unreachable; too slow after 3 in a row.

    The host sent every status line and headers at once; only the bodies were slow. So the
    lookups that ran out of the deadline are "no complete answer … (deadline)" (a
    RegistryError), each response counts, and once three in a row did (the floor above a
    wave of 2), the others fail at once as too slow, counted in the host's errors.
    """
    npm = registry.host("npm")
    npm.drip_next(5, 20.0)
    host = host_key(npm.url)
    async with make_client() as client:
        fetcher = Fetcher(client, host_limits={host: 2}, request_deadline=0.3)
        errors: list[LookupFailed] = []

        async def one(i: int) -> None:
            with pytest.raises(LookupFailed) as caught:
                await fetcher(f"{npm.url}/fine?i={i}")
            errors.append(caught.value)

        async with anyio.create_task_group() as tg:
            for i in range(5):
                tg.start_soon(one, i)
    too_slow = (
        f"{host} is too slow: 3 requests in a row ran out of the 0.3 s deadline; "
        "its other lookups were given up"
    )
    assert Counter(str(e) for e in errors) == {
        f"no complete answer from {host} within 0.3 s (deadline)": 3,
        too_slow: 2,
    }
    assert not any(isinstance(e, RegistryUnreachable) for e in errors)
    assert fetcher.unreachable == {}
    assert fetcher.too_slow == {host: too_slow}
    stats = fetcher.stats[host]
    assert stats.errors == 5
    assert stats.requests == stats.responses["2xx"] <= 4  # the fifth was never sent


@pytest.mark.anyio
async def test_head_arrival_is_signalled_before_the_body(registry: FakeRegistry) -> None:
    """``on_head`` gets the status as soon as the headers arrive, though the body never does."""
    npm = registry.host("npm")
    npm.drip_next(1, 20.0)
    heads: list[int] = []
    transport = PerHostPoolTransport()
    try:
        with anyio.move_on_after(0.3) as scope:
            timeouts: dict[str, float | None] = {
                "connect": 5.0,
                "read": 5.0,
                "write": 5.0,
                "pool": 5.0,
            }
            await transport.get(f"{npm.url}/fine", [], timeouts, on_head=heads.append)
    finally:
        await transport.aclose()
    assert scope.cancelled_caught
    assert heads == [200]


@pytest.mark.anyio
@pytest.mark.parametrize("announce", [True, False])
async def test_oversized_answer_counts_its_class_in_host_statistics(
    registry: FakeRegistry, *, announce: bool
) -> None:
    """A 200 whose body passes --max-body-bytes is an answer: 2xx in the host's statistics."""
    npm = registry.host("npm")
    npm.huge_next(1, 2 * MIB, announce=announce, route="GET /slow")
    host = host_key(npm.url)
    async with make_client() as client:
        fetcher = Fetcher(client, max_body_bytes=MIB)
        with pytest.raises(RegistryError, match="over the 1 MiB limit"):
            await fetcher(f"{npm.url}/slow")
    stats = fetcher.stats[host]
    assert (stats.requests, stats.responses, stats.errors) == (1, {"2xx": 1}, 1)


@pytest.mark.anyio
async def test_oversized_answer_counts_on_the_client_path_too() -> None:
    """Through the httpx client (the proxied path) the oversized 200 is counted as well."""
    with respx.mock(assert_all_called=True) as router:
        router.get("https://proxied.test/big").respond(200, content=bytes(2 * MIB))
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, max_body_bytes=MIB)
            with pytest.raises(RegistryError, match="over the 1 MiB limit"):
                await fetcher("https://proxied.test/big")
    assert fetcher.stats["proxied.test"].responses == {"2xx": 1}


def test_slow_answers_end_when_the_host_stops() -> None:
    """A silent or dripping answer in progress ends within a poll once the host is stopped."""
    import socket  # noqa: PLC0415 - only this test talks raw sockets
    import threading  # noqa: PLC0415

    with FakeRegistry() as fake:
        fake.npm.add("fine", {"1.0.0": OLD})
        npm = fake.host("npm")
        npm.silent_next(1)
        npm.drip_next(1, 0.5)
        before = set(threading.enumerate())
        port = int(npm.url.rsplit(":", 1)[1])
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
        for sock in clients:
            sock.sendall(b"GET /fine HTTP/1.1\r\nHost: x\r\n\r\n")
        while npm.requests < 2:
            threading.Event().wait(0.01)
        handlers = set(threading.enumerate()) - before
        assert len(handlers) == 2
    for thread in handlers:
        thread.join(timeout=1.0)  # a poll is 50 ms; the client sockets are still open
    alive = [thread for thread in handlers if thread.is_alive()]
    for sock in clients:
        sock.close()
    assert alive == []


class _NeverEnding(httpx.AsyncByteStream):
    """A body that sends one byte and then nothing, until the reader gives up."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b"{"
        await anyio.sleep_forever()


class _Whole(httpx.AsyncByteStream):
    """A body sent at once (a ``content=`` response counts as read already: not streamable)."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b"{}"


def _dripping_transport(requests: list[str]) -> httpx.MockTransport:
    """Headers at once from ``slow.test``, then a body that never ends; ``fine.test`` answers."""

    async def handler(request: httpx.Request) -> httpx.Response:
        requests.append(str(request.url))
        if request.url.host == "fine.test" or request.url.path.startswith("/fine"):
            return httpx.Response(200, stream=_Whole())
        return httpx.Response(200, stream=_NeverEnding())

    return httpx.MockTransport(handler)


@pytest.mark.anyio
async def test_a_dripping_host_fails_its_queue_at_once_after_one_wave_of_deadlines() -> None:
    """40 dripping lookups through a limit of 4: one wave runs out, 36 fail as too slow.

    The requests that took a freed slot before the fourth deadline passed are cancelled, so
    no second wave runs to the deadline; another host is not affected.
    """
    sent: list[str] = []
    async with httpx.AsyncClient(transport=_dripping_transport(sent)) as client:
        fetcher = Fetcher(client, default_limit=4, request_deadline=0.05)
        failures: list[LookupFailed] = []

        async def one(i: int) -> None:
            with pytest.raises(LookupFailed) as caught:
                await fetcher(f"https://slow.test/p{i}")
            failures.append(caught.value)

        async with anyio.create_task_group() as tg:
            for i in range(40):
                tg.start_soon(one, i)
        assert (await fetcher("https://fine.test/p")).status == 200
    too_slow = (
        "slow.test is too slow: 4 requests in a row ran out of the 0.05 s deadline; "
        "its other lookups were given up"
    )
    assert Counter(str(f) for f in failures) == {
        "no complete answer from slow.test within 0.05 s (deadline)": 4,
        too_slow: 36,
    }
    assert not any(isinstance(f, RegistryUnreachable) for f in failures)
    assert fetcher.too_slow == {"slow.test": too_slow}
    stats = fetcher.stats["slow.test"]
    assert stats.errors == 40
    assert 4 <= stats.requests <= 7  # the wave, and at most three that took its freed slots
    assert len([u for u in sent if "slow.test" in u]) == stats.requests
    assert fetcher.stats["fine.test"].errors == 0


@pytest.mark.anyio
async def test_a_complete_answer_between_deadlines_keeps_the_host() -> None:
    """Two deadlines, an answer, two deadlines …: never three in a row, never given up."""
    sent: list[str] = []
    async with httpx.AsyncClient(transport=_dripping_transport(sent)) as client:
        fetcher = Fetcher(client, default_limit=1, request_deadline=0.05)
        outcomes: list[str] = []
        for i in range(3):
            for path in (f"slow-{i}-a", f"slow-{i}-b", f"fine-{i}"):
                try:
                    outcomes.append(str((await fetcher(f"https://slow.test/{path}")).status))
                except RegistryError as exc:
                    outcomes.append(str(exc))
    deadline = "no complete answer from slow.test within 0.05 s (deadline)"
    assert outcomes == [deadline, deadline, "200"] * 3
    assert fetcher.too_slow == {}
    assert len(sent) == 9
