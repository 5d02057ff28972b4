"""The fetch facade: single-flight, per-host limits, retries, Retry-After parsing, statistics."""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta

import anyio
import anyio.lowlevel
import httpx
import pytest
import respx

from patchula.errors import RegistryError, RegistryUnreachable
from patchula.http.fetcher import (
    Fetcher,
    PerHostPoolTransport,
    Timer,
    host_key,
    make_client,
    retry_after_seconds,
)
from tests.fake_registry import FakeRegistry
from tests.faketime import FakeTime

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class _Sleeps:
    """A fake clock: sleeping advances it at once and is recorded."""

    def __init__(self) -> None:
        self.calls: list[float] = []
        self.clock = 1000.0

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
        self.clock += seconds
        await anyio.lowlevel.checkpoint()

    def timer(self) -> Timer:
        return Timer(
            monotonic=lambda: self.clock,
            wall=lambda: NOW + timedelta(seconds=self.clock - 1000.0),
            sleep=self,
        )


def _fetcher(client: httpx.AsyncClient, sleeps: _Sleeps, **kw: object) -> Fetcher:
    return Fetcher(client, timer=sleeps.timer(), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("2", 2.0),
        ("0", 0.0),
        ("-5", None),  # invalid delta-seconds (RFC 9110 §10.2.3), not 0 s
        ("1.5", None),
        ("1e9", None),
        ("99999999999999999999", 1e12),
        ("Mon, 30 Nov 2026 12:00:30 GMT", 30.0),
        ("Mon, 30 Nov 2026 11:00:00 GMT", 0.0),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after(header: str | None, expected: float | None) -> None:
    """Retry-After is delta-seconds or an HTTP-date; garbage, a sign and absence give None."""
    assert retry_after_seconds(header, NOW) == expected


async def _gather(fetcher: Fetcher, urls: list[str]) -> list[int]:
    statuses: list[int] = []

    async def one(url: str) -> None:
        statuses.append((await fetcher(url)).status)

    async with anyio.create_task_group() as tg:
        for url in urls:
            tg.start_soon(one, url)
    return statuses


@pytest.mark.anyio
async def test_single_flight_shares_one_request() -> None:
    """Concurrent identical GETs send one request and all callers get its response."""
    with respx.mock(assert_all_called=True) as router:
        route = router.get("https://registry.test/pkg").mock(
            return_value=httpx.Response(200, json={})
        )
        async with httpx.AsyncClient() as client:
            statuses = await _gather(
                _fetcher(client, _Sleeps()), ["https://registry.test/pkg"] * 20
            )
    assert statuses == [200] * 20
    assert route.call_count == 1


@pytest.mark.anyio
async def test_host_limit_bounds_concurrency() -> None:
    """No more requests are in flight to a host than its limit."""
    in_flight = 0
    peak = 0

    async def slow(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await anyio.sleep(0.01)
        in_flight -= 1
        return httpx.Response(200)

    with respx.mock(assert_all_called=True) as router:
        router.get(url__regex=r"https://a\.test/\d+").mock(side_effect=slow)
        async with httpx.AsyncClient() as client:
            fetcher = _fetcher(client, _Sleeps(), host_limits={"a.test": 3})
            await _gather(fetcher, [f"https://a.test/{i}" for i in range(12)])
    assert peak == 3
    assert fetcher.stats["a.test"].max_concurrency == 3
    assert fetcher.stats["a.test"].requests == 12


@pytest.mark.anyio
async def test_429_retries_after_the_header_wait() -> None:
    """A 429 with Retry-After: 2 waits 2 s (on the injected sleep) and then succeeds."""
    sleeps = _Sleeps()
    with respx.mock(assert_all_called=True) as router:
        router.get("https://a.test/x").mock(
            side_effect=[httpx.Response(429, headers={"Retry-After": "2"}), httpx.Response(200)]
        )
        async with httpx.AsyncClient() as client:
            fetcher = _fetcher(client, sleeps)
            response = await fetcher("https://a.test/x")
    assert response.status == 200
    assert sleeps.calls == [2.0]
    assert (fetcher.stats["a.test"].rate_limited, fetcher.stats["a.test"].retries) == (1, 1)


@pytest.mark.anyio
async def test_429_with_long_wait_fails_at_once() -> None:
    """A Retry-After above 60 s fails the lookup immediately with the host and wait named."""
    sleeps = _Sleeps()
    with respx.mock(assert_all_called=True) as router:
        router.get("https://a.test/x").mock(
            return_value=httpx.Response(429, headers={"Retry-After": "120"})
        )
        async with httpx.AsyncClient() as client:
            fetcher = _fetcher(client, sleeps)
            with pytest.raises(RegistryError) as caught:
                await fetcher("https://a.test/x")
    assert str(caught.value) == (
        "a.test is rate limited (HTTP 429 with Retry-After): the server asked to wait 120 s, "
        "more than the 60 s patchula waits, so the lookup failed without waiting"
    )
    assert sleeps.calls == []
    stats = fetcher.stats["a.test"]
    # Nothing was waited: the 120 s asked for is counted apart from the cool-down waited out.
    assert (stats.cooldown_seconds, stats.cooldown_refused_seconds) == (0.0, 120.0)


@pytest.mark.anyio
async def test_5xx_is_retried_then_reported() -> None:
    """Server errors are retried a bounded number of times, then fail with the status named."""
    sleeps = _Sleeps()
    with respx.mock(assert_all_called=True) as router:
        route = router.get("https://a.test/x").mock(return_value=httpx.Response(503))
        async with httpx.AsyncClient() as client:
            with pytest.raises(
                RegistryError, match=r"HTTP 503 from a\.test; gave up after 3 retries"
            ):
                await _fetcher(client, sleeps)("https://a.test/x")
    assert route.call_count == 4
    assert len(sleeps.calls) == 3


@pytest.mark.anyio
@pytest.mark.parametrize("status", [501, 505])
async def test_a_permanent_server_error_is_returned_without_retries(status: int) -> None:
    """501 and 505 say what the server cannot do: one request, the answer returned as it is."""
    sleeps = _Sleeps()
    with respx.mock(assert_all_called=True) as router:
        route = router.head("https://a.test/x").mock(return_value=httpx.Response(status))
        async with httpx.AsyncClient() as client:
            response = await _fetcher(client, sleeps)("https://a.test/x", method="HEAD")
    assert response.status == status
    assert route.call_count == 1
    assert sleeps.calls == []


@pytest.mark.anyio
async def test_network_error_is_unreachable() -> None:
    """A connection failure on every attempt raises RegistryUnreachable."""
    with respx.mock(assert_all_called=True) as router:
        router.get("https://a.test/x").mock(side_effect=httpx.ConnectError("refused"))
        async with httpx.AsyncClient() as client:
            with pytest.raises(
                RegistryUnreachable, match=r"a\.test is unreachable \(ConnectError\)"
            ):
                await _fetcher(client, _Sleeps())("https://a.test/x")


@pytest.mark.anyio
async def test_404_is_returned_not_raised() -> None:
    """Client errors are answers: the datasource decides what a 404 means."""
    with respx.mock(assert_all_called=True) as router:
        router.get("https://a.test/x").mock(return_value=httpx.Response(404))
        async with httpx.AsyncClient() as client:
            fetcher = _fetcher(client, _Sleeps())
            response = await fetcher("https://a.test/x")
    assert response.status == 404
    assert fetcher.stats["a.test"].responses == {"4xx": 1}


@pytest.mark.anyio
async def test_each_origin_keeps_at_most_32_idle_connections() -> None:
    """Connections are pooled per origin; at most 32 idle ones are kept for each."""
    transport = PerHostPoolTransport()

    async def slow(request: httpx.Request) -> httpx.Response:
        await anyio.sleep(0.01)
        return httpx.Response(200, text=request.url.path)

    with respx.mock(assert_all_called=True) as router:
        router.get(url__regex=r"https://[ab]\.test/\d+").mock(side_effect=slow)
        async with httpx.AsyncClient(transport=transport) as client:
            fetcher = Fetcher(client, default_limit=40)
            async with anyio.create_task_group() as tg:
                for i in range(40):
                    tg.start_soon(fetcher, f"https://a.test/{i}")
                tg.start_soon(fetcher, "https://b.test/1")
            assert transport.idle_connections() == {"https://a.test": 32, "https://b.test": 1}
            assert (await fetcher("https://a.test/99")).content == b"/99"
            assert transport.idle_connections() == {"https://a.test": 32, "https://b.test": 1}


def test_host_key_includes_non_default_ports() -> None:
    """Limits apply per host; a non-default port makes a different host (loopback fakes)."""
    assert host_key("https://Registry.NPMJS.org/left-pad") == "registry.npmjs.org"
    assert host_key("https://pypi.org:443/simple/x/") == "pypi.org"
    assert host_key("http://127.0.0.1:8081/x") == "127.0.0.1:8081"


@pytest.mark.anyio
async def test_caller_headers_replace_client_defaults_case_insensitively() -> None:
    """A caller's ``Accept`` replaces the client's default ``accept``: one header is sent."""
    with respx.mock(assert_all_called=True) as router:
        route = router.get("https://pypi.test/simple/x/").mock(return_value=httpx.Response(200))
        async with make_client() as client:
            await Fetcher(client)(
                "https://pypi.test/simple/x/",
                headers={"Accept": "application/vnd.pypi.simple.v1+json"},
            )
    sent = route.calls.last.request.headers
    assert sent.get_list("accept") == ["application/vnd.pypi.simple.v1+json"]
    assert sent["user-agent"].startswith("patchula/")


@pytest.mark.anyio
async def test_large_bodies_are_derived_off_the_event_loop_four_at_a_time() -> None:
    """Big documents are derived in worker threads, never more than four at once."""
    import threading  # noqa: PLC0415 - only this test inspects threads
    import time  # noqa: PLC0415

    loop_thread = threading.get_ident()
    lock = threading.Lock()
    running = 0
    peak = 0
    threads: set[int] = set()

    def derive(content: bytes) -> bytes:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
            threads.add(threading.get_ident())
        time.sleep(0.02)
        with lock:
            running -= 1
        return content[:10]

    body = b"x" * (70 * 1024)
    with respx.mock(assert_all_called=True) as router:
        router.get(url__regex=r"https://a\.test/\d+").mock(
            return_value=httpx.Response(200, content=body)
        )
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client)
            results: list[bytes] = []

            async def one(i: int) -> None:
                results.append((await fetcher(f"https://a.test/{i}", derive=derive)).content)

            async with anyio.create_task_group() as tg:
                for i in range(10):
                    tg.start_soon(one, i)
    assert results == [b"x" * 10] * 10
    assert peak == 4
    assert loop_thread not in threads


@pytest.mark.anyio
async def test_the_next_request_is_sent_before_a_body_is_derived() -> None:
    """A freed host slot goes to the waiting request before the answer it held is derived.

    With one slot, the second request is sent as soon as the first answer is read, so its
    network wait overlaps the first answer's CPU work instead of following it.
    """
    events: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        events.append(f"sent {request.url.path}")
        return httpx.Response(200, content=request.url.path.encode())

    def derive(content: bytes) -> bytes:
        events.append(f"derived {content.decode()}")
        return content

    with respx.mock(assert_all_called=True) as router:
        router.get(url__regex=r"https://a\.test/\w").mock(side_effect=answer)
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, host_limits={"a.test": 1})
            async with anyio.create_task_group() as tg:
                for path in ("a", "b"):
                    fetch = functools.partial(fetcher, f"https://a.test/{path}", derive=derive)
                    tg.start_soon(fetch)
    assert events == ["sent /a", "sent /b", "derived /a", "derived /b"]


@pytest.mark.anyio
async def test_throttled_host_gets_one_request_per_interval() -> None:
    """A throttled host (crates.io's API: 1 request/second) is never asked faster than that."""
    sleeps = _Sleeps()
    with respx.mock(assert_all_called=True) as router:
        router.get(url__regex=r"https://api\.test/\d+").mock(return_value=httpx.Response(200))
        async with httpx.AsyncClient() as client:
            fetcher = _fetcher(client, sleeps)
            fetcher.throttle("https://api.test", 1.0)
            for i in range(3):
                await fetcher(f"https://api.test/{i}")
    assert sleeps.calls == [1.0, 1.0]


@pytest.mark.anyio
async def test_throttle_paces_its_base_url_not_the_whole_host() -> None:
    """Pacing ``https://mirror.test/api/``: its API pages wait 1 s each, index files never do."""
    sleeps = _Sleeps()
    with respx.mock(assert_all_called=True) as router:
        index = router.get(url__regex=r"https://mirror\.test/index/.*").mock(
            return_value=httpx.Response(200)
        )
        api = router.get(url__regex=r"https://mirror\.test/api/v1/.*").mock(
            return_value=httpx.Response(200)
        )
        async with httpx.AsyncClient() as client:
            fetcher = _fetcher(client, sleeps)
            fetcher.throttle("https://mirror.test/api", 1.0)
            for name in ("se/rd/serde", "sy/n/syn", "3/l/log", "2/cc"):
                await fetcher(f"https://mirror.test/index/{name}")
            assert sleeps.calls == []
            for name in ("serde", "syn", "log"):
                await fetcher(f"https://mirror.test/api/v1/crates/{name}/versions?per_page=100")
            await fetcher("https://mirror.test/index/1/a")
    assert sleeps.calls == [1.0, 1.0]
    assert (index.call_count, api.call_count) == (5, 3)


@pytest.mark.anyio
async def test_paced_requests_hold_at_most_one_host_slot() -> None:
    """Ten API requests queued on their pace leave the host's other slot to index lookups."""
    time = FakeTime()
    seen: list[tuple[str, float]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append((request.url.path.split("/")[1], time.t))
        return httpx.Response(200)

    with respx.mock(assert_all_called=True) as router:
        router.get(url__regex=r"https://mirror\.test/.*").mock(side_effect=answer)
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer(), host_limits={"mirror.test": 2})
            fetcher.throttle("https://mirror.test/api/", 1.0)
            async with time.driving(), anyio.create_task_group() as tg:
                for i in range(10):
                    tg.start_soon(fetcher, f"https://mirror.test/api/v1/crates/c{i}/versions")
                for i in range(10):
                    tg.start_soon(fetcher, f"https://mirror.test/index/3/c/c{i}")
    assert [t for tree, t in seen if tree == "index"] == [0.0] * 10
    assert [t for tree, t in seen if tree == "api"] == [float(i) for i in range(10)]


@pytest.mark.anyio
async def test_host_that_never_answered_is_unreachable_after_one_failed_retry() -> None:
    """No HTTP answer this run and a retry also failed: the host is down, later lookups fail."""
    sleeps = _Sleeps()
    with respx.mock(assert_all_called=True) as router:
        route = router.get(url__regex=r"https://down\.test/\d+").mock(
            side_effect=httpx.ConnectError("refused")
        )
        async with httpx.AsyncClient() as client:
            fetcher = _fetcher(client, sleeps)
            with pytest.raises(
                RegistryUnreachable,
                match=r"down\.test is unreachable \(ConnectError\): no answer this run; its",
            ):
                await fetcher("https://down.test/1")
            with pytest.raises(
                RegistryUnreachable,
                match=r"down\.test is unreachable \(ConnectError\): no answer this run; its",
            ):
                await fetcher("https://down.test/2")
    assert route.call_count == 2
    assert len(sleeps.calls) == 1
    assert fetcher.stats["down.test"].errors == 2


@pytest.mark.anyio
async def test_host_that_answered_before_gets_every_retry() -> None:
    """A host that answered this run is never marked unreachable: every lookup gets its retries."""
    sleeps = _Sleeps()
    answers = iter([httpx.Response(200, text="ok")])

    def flaky(request: httpx.Request) -> httpx.Response:
        answer = next(answers, None)
        if answer is None:
            raise httpx.ConnectError("reset", request=request)
        return answer

    with respx.mock(assert_all_called=True) as router:
        route = router.get(url__regex=r"https://flaky\.test/\d+").mock(side_effect=flaky)
        async with httpx.AsyncClient() as client:
            fetcher = _fetcher(client, sleeps)
            assert (await fetcher("https://flaky.test/1")).content == b"ok"
            with pytest.raises(RegistryUnreachable, match="gave up after 3 retries"):
                await fetcher("https://flaky.test/2")
            with pytest.raises(RegistryUnreachable, match="gave up after 3 retries"):
                await fetcher("https://flaky.test/3")
    assert route.call_count == 9
    assert len(sleeps.calls) == 6


@pytest.mark.anyio
async def test_lookups_queued_for_an_unreachable_host_fail_without_requests() -> None:
    """40 lookups queued behind a limit of 4 on a dead host: the queue fails fast, no storm."""
    sleeps = _Sleeps()
    failures: list[str] = []

    async def one(fetcher: Fetcher, i: int) -> None:
        try:
            await fetcher(f"https://down.test/{i}")
        except RegistryUnreachable as exc:
            failures.append(str(exc))

    with respx.mock(assert_all_called=True) as router:
        route = router.get(url__regex=r"https://down\.test/\d+").mock(
            side_effect=httpx.ConnectError("no such host")
        )
        async with httpx.AsyncClient() as client:
            fetcher = _fetcher(client, sleeps, default_limit=4)
            async with anyio.create_task_group() as tg:
                for i in range(40):
                    tg.start_soon(one, fetcher, i)
    assert len(failures) == 40
    # A host that never answered is down once a second wave of requests fails too: at most
    # two waves of 4 plus the one that trips it, instead of 40 lookups x 4 attempts.
    assert route.call_count <= 9
    assert sum("is unreachable" in f for f in failures) >= 31


@pytest.mark.anyio
async def test_bare_host_limit_covers_every_port_unless_one_has_its_own() -> None:
    """``127.0.0.1=2`` bounds ports 8080 and 9090 together; ``127.0.0.1:7070=3`` stands alone."""
    in_flight: dict[str, int] = {"shared": 0, "7070": 0}
    peak: dict[str, int] = {"shared": 0, "7070": 0}

    async def slow(request: httpx.Request) -> httpx.Response:
        group = "7070" if request.url.port == 7070 else "shared"
        in_flight[group] += 1
        peak[group] = max(peak[group], in_flight[group])
        await anyio.sleep(0.01)
        in_flight[group] -= 1
        return httpx.Response(200)

    with respx.mock(assert_all_called=True) as router:
        router.get(url__regex=r"http://127\.0\.0\.1:\d+/\d+").mock(side_effect=slow)
        async with httpx.AsyncClient() as client:
            fetcher = _fetcher(client, _Sleeps(), host_limits={"127.0.0.1": 2, "127.0.0.1:7070": 3})
            await _gather(
                fetcher,
                [f"http://127.0.0.1:{port}/{i}" for port in (8080, 9090, 7070) for i in range(9)],
            )
    assert peak == {"shared": 2, "7070": 3}
    assert fetcher.limit_for("127.0.0.1:8080") == 2
    assert fetcher.limit_for("127.0.0.1:7070") == 3
    assert fetcher.limit_for("127.0.0.2:8080") == 16
    assert fetcher.limits_used() == {"127.0.0.1", "127.0.0.1:7070"}


def test_the_fetcher_names_the_transport_body_bound() -> None:
    """``fetcher.DEFAULT_MAX_BODY_BYTES`` (named there: no transport import) is the transport's."""
    from patchula.http import fetcher, transport  # noqa: PLC0415 - the two modules compared

    assert fetcher.DEFAULT_MAX_BODY_BYTES == transport.DEFAULT_MAX_BODY_BYTES == 256 * 1024**2


@pytest.mark.anyio
async def test_a_fetcher_without_a_client_makes_one_at_its_first_request(
    fake_registry: FakeRegistry,
) -> None:
    """``Fetcher()`` makes the run's client (``make_client``) at its first request; closes it."""
    fake_registry.npm.add("lazy", {"1.0.0": datetime(2025, 1, 1, tzinfo=UTC)})
    fetcher = Fetcher(request_deadline=7.0)
    assert fetcher._own_client is None
    response = await fetcher(f"{fake_registry.url('npm')}/lazy")
    assert response.status == 200
    client = fetcher._own_client
    assert client is not None
    assert client.timeout.read == 7.0
    await fetcher.aclose()
    assert client.is_closed
    assert fetcher._own_client is None
