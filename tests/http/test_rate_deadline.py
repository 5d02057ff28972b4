"""The request deadline bounds a request's own rate-limit waits (429 cool-downs), on a fake clock.

A wait a 429 asks of the request that got it is that request's time, like the 5xx back-off:
one that would outlast what is left of ``request_deadline`` fails at once. Requests only
queued behind the host-wide cool-down still wait for it (queueing does not count).
"""

from __future__ import annotations

import anyio
import httpx
import pytest
import respx

from patchula.http.fetcher import Fetcher
from patchula.http.governor import RateLimited, read_signal
from tests.faketime import EPOCH, FakeTime

REGISTRY = "https://registry.example"
REALM = "https://auth.example/token"
SCOPE = "repository:a/b:pull"
CHALLENGE = {
    "WWW-Authenticate": f'Bearer realm="{REALM}",service="registry.example",scope="{SCOPE}"'
}


@pytest.mark.anyio
async def test_a_retry_after_longer_than_the_deadline_fails_at_once() -> None:
    """Retry-After: 10 with a 5 s deadline: one request, no wait, a reason naming both."""
    time = FakeTime()
    with respx.mock() as router:
        route = router.get("https://a.test/foo").mock(
            return_value=httpx.Response(429, headers={"Retry-After": "10"})
        )
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer(), request_deadline=5)
            async with time.driving():
                with pytest.raises(RateLimited) as caught:
                    await fetcher("https://a.test/foo")
    assert str(caught.value) == (
        "a.test is rate limited (HTTP 429 with Retry-After): a wait of 10 s, more than the 5 s "
        "left of the 5 s request deadline; not retried"
    )
    assert caught.value.host == "a.test"
    assert route.call_count == 1
    assert time.sleeps == []
    stats = fetcher.stats["a.test"]
    assert (stats.rate_limited, stats.retries, stats.errors) == (1, 0, 1)


@pytest.mark.anyio
async def test_a_45_s_retry_after_fails_within_the_default_30_s_deadline() -> None:
    """Retry-After: 45 (under the 60 s bound) is still over the default 30 s deadline."""
    time = FakeTime()
    with respx.mock() as router:
        route = router.get("https://a.test/foo").mock(
            return_value=httpx.Response(429, headers={"Retry-After": "45"})
        )
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer())
            async with time.driving():
                with pytest.raises(RateLimited, match=r"a wait of 45 s, more than the 30 s left"):
                    await fetcher("https://a.test/foo")
    assert route.call_count == 1
    assert time.sleeps == []


@pytest.mark.anyio
async def test_the_default_back_off_stops_at_the_deadline() -> None:
    """429 without Retry-After and a 2 s deadline: waits 1 s, then the 2 s wait is refused."""
    time = FakeTime()
    with respx.mock() as router:
        route = router.get("https://a.test/foo").mock(return_value=httpx.Response(429))
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer(), request_deadline=2)
            async with time.driving():
                with pytest.raises(RateLimited) as caught:
                    await fetcher("https://a.test/foo")
    assert route.call_count == 2
    assert time.sleeps == [1.0]
    assert time.t == 1.0
    assert str(caught.value) == (
        "a.test is rate limited (HTTP 429 without Retry-After): a wait of 2 s, more than the "
        "1 s left of the 2 s request deadline; not retried"
    )
    assert fetcher.stats["a.test"].retries == 1


@pytest.mark.anyio
async def test_waits_within_the_deadline_are_still_waited() -> None:
    """Retry-After: 2 twice, then 200, with a 5 s deadline: 2 + 2 s waited, the answer returned."""
    time = FakeTime()
    limited = httpx.Response(429, headers={"Retry-After": "2"})
    with respx.mock() as router:
        route = router.get("https://a.test/foo").mock(
            side_effect=[limited, limited, httpx.Response(200, content=b"ok")]
        )
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer(), request_deadline=5)
            async with time.driving():
                answer = await fetcher("https://a.test/foo")
    assert answer.content == b"ok"
    assert route.call_count == 3
    assert time.sleeps == [2.0, 2.0]


@pytest.mark.anyio
async def test_a_queued_request_still_waits_the_host_wide_cool_down() -> None:
    """The request that got the 429 fails; one queued behind it waits the 10 s and succeeds.

    The cool-down stays host-wide: the queued request is not sent during it, and its wait is
    queueing, not its own time, so its 5 s deadline does not end it.
    """
    time = FakeTime()
    sent: list[tuple[str, float]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append((request.url.path, time.t))
        if request.url.path == "/first":
            return httpx.Response(429, headers={"Retry-After": "10"})
        return httpx.Response(200, content=b"ok")

    outcomes: dict[str, str] = {}
    with respx.mock() as router:
        router.get(url__regex=r"https://a\.test/.*").mock(side_effect=answer)
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(
                client, timer=time.timer(), request_deadline=5, host_limits={"a.test": 1}
            )

            async def get(path: str) -> None:
                try:
                    outcomes[path] = (await fetcher(f"https://a.test{path}")).content.decode()
                except RateLimited as exc:
                    outcomes[path] = str(exc)

            async with time.driving(), anyio.create_task_group() as tg:
                tg.start_soon(get, "/first")
                await anyio.wait_all_tasks_blocked()
                tg.start_soon(get, "/second")
    assert outcomes["/second"] == "ok"
    assert "a wait of 10 s, more than the 5 s left" in outcomes["/first"]
    assert sent == [("/first", 0.0), ("/second", 10.0)]


@pytest.mark.anyio
async def test_a_rate_limited_token_service_is_bounded_by_the_deadline() -> None:
    """An OCI token service answering 429 Retry-After: 30 fails a 10 s request at once."""
    time = FakeTime()
    with respx.mock() as router:
        registry = router.get(f"{REGISTRY}/v2/a/b/tags/list").respond(401, headers=CHALLENGE)
        token = router.get(url__startswith=REALM).respond(429, headers={"Retry-After": "30"})
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer(), request_deadline=10)
            async with time.driving():
                with pytest.raises(RateLimited) as caught:
                    await fetcher(f"{REGISTRY}/v2/a/b/tags/list", scope=SCOPE)
    assert str(caught.value).startswith(
        "auth.example is rate limited (HTTP 429 with Retry-After): a wait of 30 s, more than "
    )
    assert str(caught.value).endswith("left of the 10 s request deadline; not retried")
    assert (registry.call_count, token.call_count) == (1, 1)
    assert time.sleeps == []


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("garbage", "HTTP 429 with an invalid Retry-After ('garbage')"),
        ("1.5", "HTTP 429 with an invalid Retry-After ('1.5')"),
        (" -5 ", "HTTP 429 with an invalid Retry-After ('-5')"),
        ("x" * 500, f"HTTP 429 with an invalid Retry-After ('{'x' * 32}…')"),
        ("\x1b[2J", "HTTP 429 with an invalid Retry-After ('\\x1b[2J')"),
    ],
)
def test_an_invalid_retry_after_is_named_not_called_absent(value: str, why: str) -> None:
    """An invalid Retry-After is quoted (trimmed to 32 characters, controls escaped), not absent."""
    signal = read_signal(429, {"retry-after": value}, b"", 1, EPOCH)
    assert (signal.wait, signal.why) == (2.0, why)
    assert read_signal(429, {}, b"", 0, EPOCH).why == "HTTP 429 without Retry-After"


@pytest.mark.anyio
async def test_a_negative_retry_after_backs_off_1_2_4_s() -> None:
    """``Retry-After: -5`` is invalid: the retries wait 1, 2 and 4 s, not 0 s each."""
    time = FakeTime()
    with respx.mock() as router:
        route = router.get("https://a.test/foo").mock(
            return_value=httpx.Response(429, headers={"Retry-After": "-5"})
        )
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer())
            async with time.driving():
                with pytest.raises(RateLimited) as caught:
                    await fetcher("https://a.test/foo")
    assert route.call_count == 4
    assert time.sleeps == [1.0, 2.0, 4.0]
    assert str(caught.value) == (
        "a.test still rate limited after 3 retries (HTTP 429 with an invalid Retry-After ('-5'))"
    )
