"""The shared cool-down governor: signals read from responses, and host-wide cool-downs."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import anyio
import httpx
import pytest
import respx

from patchula.cache import Cache
from patchula.credentials import github_graphql_url
from patchula.http.auth import Credential, StaticCredentials
from patchula.http.fetcher import Fetcher, host_key
from patchula.http.governor import Governor, RateLimited, read_signal, seconds_text, used_up
from tests.faketime import FakeTime

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("status", "headers", "body", "attempt", "wait", "fatal"),
    [
        (429, {"retry-after": "2"}, b"", 0, 2.0, False),
        (429, {"retry-after": "Mon, 30 Nov 2026 12:00:05 GMT"}, b"", 0, 5.0, False),
        (429, {}, b"", 0, 1.0, False),
        (429, {}, b"", 1, 2.0, False),
        (429, {}, b"", 2, 4.0, False),
        (429, {"retry-after": "later please"}, b"", 0, 1.0, False),
        # Invalid delta-seconds (RFC 9110 §10.2.3: 1*DIGIT) fall back to the 1, 2, 4 s back-off.
        (429, {"retry-after": "-3"}, b"", 0, 1.0, False),
        (429, {"retry-after": "-5"}, b"", 2, 4.0, False),
        (429, {"retry-after": "1.5"}, b"", 0, 1.0, False),
        (429, {"retry-after": "1e9"}, b"", 1, 2.0, False),
        (429, {"retry-after": "+7"}, b"", 0, 1.0, False),
        (429, {"retry-after": "\u0661\u0662"}, b"", 0, 1.0, False),  # Arabic-Indic digits
        (429, {"retry-after": "Mon, 30 Nov 2026 11:00:00 GMT"}, b"", 0, 0.0, False),  # past
        (
            403,
            {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(NOW.timestamp() + 30)},
            b"",
            0,
            30.0,
            False,
        ),
        (
            429,
            {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(NOW.timestamp() - 5)},
            b"",
            1,
            2.0,
            False,
        ),
        (
            403,
            {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW.timestamp()))},
            b"",
            0,
            1.0,
            False,
        ),
        (
            200,
            {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(NOW.timestamp() - 5)},
            b"",
            0,
            None,
            False,
        ),
        (403, {}, b'{"message": "You have exceeded a secondary rate limit"}', 0, 60.0, False),
        (403, {}, b'{"message": "Resource not accessible by integration"}', 0, None, False),
        (
            200,
            {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(NOW.timestamp() + 600)},
            b"",
            0,
            600.0,
            False,
        ),
        (200, {"x-ratelimit-remaining": "12"}, b"", 0, None, False),
        (429, {"ratelimit-remaining": "0;w=21600"}, b"", 0, 21600.0, True),
        (
            429,
            {},
            (
                b'{"errors":[{"code":"TOOMANYREQUESTS",'
                b'"message":"You have reached your pull rate limit."}]}'
            ),
            0,
            3600.0,
            True,
        ),
        (404, {"retry-after": "5"}, b"", 0, None, False),
        (429, {"x-retry-after": str(int(NOW.timestamp()) + 45)}, b"", 0, 45.0, False),
        (429, {"x-retry-after": str(int(NOW.timestamp()) - 45)}, b"", 1, 2.0, False),
        (429, {"retry-after": "3", "x-retry-after": str(NOW.timestamp() + 45)}, b"", 0, 3.0, False),
        # GitHub asks for exponentially longer waits while a secondary limit persists.
        (403, {}, b'{"message": "You have exceeded a secondary rate limit"}', 1, 120.0, False),
        (
            403,
            {},
            b'{"message": "You have triggered an abuse detection mechanism"}',
            0,
            60.0,
            False,
        ),
    ],
)
def test_read_signal(
    status: int,
    headers: dict[str, str],
    body: bytes,
    attempt: int,
    wait: float | None,
    fatal: bool,  # noqa: FBT001 - a parametrized expectation
) -> None:
    """Each rate-limit signal maps to the documented wait (and quota answers are fatal)."""
    signal = read_signal(status, headers, body, attempt, NOW)
    assert signal.wait == pytest.approx(wait) if wait is not None else signal.wait is None
    assert signal.fatal is fatal


RATE_LIMITED = (
    b'{"errors":[{"type":"RATE_LIMITED","code":"graphql_rate_limit",'
    b'"message":"API rate limit already exceeded for user ID 1."}]}'
)
GRAPHQL_SECONDARY = (
    b'{"errors":[{"message":"You have exceeded a secondary rate limit. Please wait a few '
    b'minutes before you try again."}]}'
)


@pytest.mark.parametrize(
    ("headers", "body", "wait", "refused"),
    [
        # GraphQL's primary limit: HTTP 200, RATE_LIMITED, remaining 0 → wait for the reset.
        (
            {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(NOW.timestamp() + 30)},
            RATE_LIMITED,
            30.0,
            True,
        ),
        ({"x-ratelimit-remaining": "17"}, GRAPHQL_SECONDARY, 60.0, True),
        # Data that merely mentions a limit is data: a commit message, a release name.
        (
            {"x-ratelimit-remaining": "17"},
            b'{"sha":"abc","commit":{"message":"handle the secondary rate limit"}}',
            None,
            False,
        ),
        (
            {"x-ratelimit-remaining": "17"},
            (
                b'{"data":{"repository":{"releases":{"nodes":[{"name":"secondary rate limit"}]}}},'
                b'"errors":[{"message":"secondary rate limit"}]}'
            ),
            None,
            False,
        ),
        (
            {"x-ratelimit-remaining": "17"},
            b"[" + b'{"name":"RATE_LIMITED"},' * 2000 + b"{}]",
            None,
            False,
        ),
    ],
)
def test_graphql_refusals_with_200_are_read_as_limits(
    headers: dict[str, str],
    body: bytes,
    wait: float | None,
    refused: bool,  # noqa: FBT001 - a parametrized expectation
) -> None:
    """A 2xx is a limit refusal only when it is a small GraphQL error document without data."""
    signal = read_signal(200, headers, body, 0, NOW)
    assert signal.wait == pytest.approx(wait) if wait is not None else signal.wait is None
    assert signal.refused is refused


@pytest.mark.anyio
async def test_a_graphql_rate_limited_200_is_retried_never_returned_nor_cached(
    tmp_path: Path,
) -> None:
    """A 200 RATE_LIMITED answer resetting in 5 s is waited out; the data after it is returned."""
    time = FakeTime()
    reset = str(int(NOW.timestamp()) + 5)
    limited = httpx.Response(
        200,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset},
        content=RATE_LIMITED,
    )
    data = httpx.Response(200, content=b'{"data":{"repository":null}}')
    with Cache.open(tmp_path / "c.sqlite3") as cache, respx.mock() as router:
        route = router.post("https://api.github.test/graphql").mock(side_effect=[limited, data])
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer(), cache=cache)
            async with time.driving():
                answer = await fetcher(
                    "https://api.github.test/graphql", method="POST", body=b'{"query":"{}"}'
                )
    assert answer.content == b'{"data":{"repository":null}}'
    assert route.call_count == 2
    assert time.sleeps == [5.0]
    assert fetcher.stats["api.github.test"].rate_limited == 1


@pytest.mark.anyio
async def test_a_graphql_rate_limited_200_past_the_bound_fails_with_the_reset_time() -> None:
    """RATE_LIMITED resetting in two hours: this request and every later one fail at once."""
    time = FakeTime()
    reset = str(int(NOW.timestamp()) + 7200)
    with respx.mock() as router:
        route = router.route(host="api.github.test").mock(
            return_value=httpx.Response(
                200,
                headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset},
                content=RATE_LIMITED,
            )
        )
        credentials = StaticCredentials(
            [
                Credential(
                    "Authorization", "Bearer gh-STANDIN", "GH_TOKEN", "https://api.github.test/"
                )
            ]
        )
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer(), credentials=credentials)
            with pytest.raises(RateLimited) as first:
                await fetcher("https://api.github.test/graphql", method="POST", body=b"{}")
            with pytest.raises(RateLimited) as later:
                await fetcher("https://api.github.test/repos/a/b/tags")
    expected = (
        "api.github.test: the rate limit for this token (GH_TOKEN) is used up until 14:00Z "
        "(x-ratelimit-reset, in 120 min); its requests fail until then without being sent"
    )
    assert str(first.value) == str(later.value) == expected
    assert "STANDIN" not in expected
    assert route.call_count == 1
    assert time.sleeps == []


@pytest.mark.anyio
async def test_cool_down_is_host_wide_and_other_hosts_proceed() -> None:
    """After a 429 with Retry-After: 2 no request reaches that host for 2 s; others keep going."""
    time = FakeTime()
    seen: list[tuple[str, float]] = []
    first = True

    def answer(request: httpx.Request) -> httpx.Response:
        nonlocal first
        seen.append((request.url.host, time.t))
        if request.url.host == "a.test" and first:
            first = False
            return httpx.Response(429, headers={"Retry-After": "2"})
        return httpx.Response(200)

    with respx.mock(assert_all_called=True) as router:
        router.get(url__regex=r"https://[ab]\.test/\d+").mock(side_effect=answer)
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer(), host_limits={"a.test": 2})

            async def get(url: str) -> None:
                assert (await fetcher(url)).status == 200

            async with time.driving(), anyio.create_task_group() as tg:
                for i in range(10):
                    tg.start_soon(get, f"https://a.test/{i}")
                    tg.start_soon(get, f"https://b.test/{i}")
    a_times = [t for host, t in seen if host == "a.test"]
    b_times = [t for host, t in seen if host == "b.test"]
    assert a_times[0] == 0.0
    assert all(t >= 2.0 for t in a_times[1:])  # nothing during the cool-down
    assert len(a_times) == 11  # ten requests plus the one retry
    assert b_times == [0.0] * 10
    assert fetcher.stats["a.test"].rate_limited == 1
    assert fetcher.stats["a.test"].cooldown_seconds == 2.0
    assert fetcher.stats["b.test"].rate_limited == 0


@pytest.mark.anyio
async def test_long_cool_down_fails_queued_requests_fast() -> None:
    """A 120 s Retry-After fails that lookup at once and every later request to the host too."""
    time = FakeTime()
    with respx.mock(assert_all_called=True) as router:
        route = router.get(url__regex=r"https://a\.test/\d+").mock(
            return_value=httpx.Response(429, headers={"Retry-After": "120"})
        )
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer())
            with pytest.raises(
                RateLimited,
                match=r"a\.test is rate limited .*: the server asked to wait 120 s, more than the "
                r"60 s patchula waits, so the lookup failed without waiting$",
            ):
                await fetcher("https://a.test/1")
            with pytest.raises(
                RateLimited,
                match=r": 120 s of its cool-down left, more than the 60 s patchula waits, so the "
                r"lookup failed without waiting$",
            ):
                await fetcher("https://a.test/2")
    assert route.call_count == 1
    assert time.sleeps == []


@pytest.mark.anyio
async def test_retries_are_bounded() -> None:
    """A host that keeps answering 429 costs four requests, waits 1, 2 and 4 s, then fails."""
    time = FakeTime()
    with respx.mock(assert_all_called=True) as router:
        route = router.get("https://a.test/x").mock(return_value=httpx.Response(429))
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer())
            async with time.driving():
                with pytest.raises(RateLimited, match="still rate limited after 3 retries"):
                    await fetcher("https://a.test/x")
    assert route.call_count == 4
    assert time.sleeps == [1.0, 2.0, 4.0]


@pytest.mark.anyio
async def test_reset_in_the_past_falls_back_to_the_back_off() -> None:
    """A 429 whose ``x-ratelimit-reset`` has already passed waits 1, 2 and 4 s, not 0 s."""
    time = FakeTime()
    reset = str(int(NOW.timestamp()) - 30)
    with respx.mock(assert_all_called=True) as router:
        route = router.get("https://api.github.test/x").mock(
            return_value=httpx.Response(
                429, headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset}
            )
        )
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer())
            async with time.driving():
                with pytest.raises(RateLimited, match="still rate limited after 3 retries"):
                    await fetcher("https://api.github.test/x")
    assert route.call_count == 4
    assert time.sleeps == [1.0, 2.0, 4.0]
    assert time.t == 7.0


@pytest.mark.anyio
async def test_primary_limit_exhausted_fails_fast_for_later_work() -> None:
    """``x-ratelimit-remaining: 0`` with a reset 10 minutes away stops later requests at once."""
    time = FakeTime()
    reset = str(int(NOW.timestamp()) + 600)
    with respx.mock(assert_all_called=True) as router:
        route = router.get(url__regex=r"https://api\.github\.test/.*").mock(
            return_value=httpx.Response(
                200, headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset}
            )
        )
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer())
            assert (await fetcher("https://api.github.test/repos/a/b/tags")).status == 200
            with pytest.raises(RateLimited) as failed:
                await fetcher("https://api.github.test/repos/a/b/releases")
    assert route.call_count == 1
    assert str(failed.value) == (
        "api.github.test: the rate limit for unauthenticated requests is used up until 12:10Z "
        "(x-ratelimit-reset, in 10 min); its requests fail until then without being sent"
    )
    assert failed.value.reset_at == datetime(2026, 11, 30, 12, 10, tzinfo=UTC)


@pytest.mark.anyio
async def test_docker_pull_quota_is_not_retried() -> None:
    """A Docker Hub pull-quota 429 fails at once, naming the quota."""
    time = FakeTime()
    with respx.mock(assert_all_called=True) as router:
        route = router.get("https://registry.test/v2/library/nginx/manifests/latest").mock(
            return_value=httpx.Response(429, headers={"ratelimit-remaining": "0;w=21600"})
        )
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer())
            with pytest.raises(RateLimited, match="Docker Hub pull quota exhausted; not retried"):
                await fetcher("https://registry.test/v2/library/nginx/manifests/latest")
    assert route.call_count == 1
    assert time.sleeps == []


@pytest.mark.anyio
async def test_governor_extends_but_never_shortens() -> None:
    """A shorter cool-down announced during a longer one does not cut it short."""
    time = FakeTime()
    governor = Governor(time.timer())
    governor.cool_down("a.test", 10, "first")
    governor.cool_down("a.test", 3, "second")
    assert governor.remaining("a.test") == 10
    assert governor.remaining("b.test") == 0
    async with time.driving():
        assert await governor.wait_turn("a.test") == 10
    assert governor.cooldown_seconds == {"a.test": 10}


PULL_QUOTA_BODY = (
    b'{"errors":[{"code":"TOOMANYREQUESTS","message":"You have reached your unauthenticated '
    b'pull rate limit. https://www.docker.com/increase-rate-limit"}]}'
)


@pytest.mark.anyio
async def test_a_toomanyrequests_pull_quota_body_fails_at_once_and_for_later_requests() -> None:
    """Docker Hub's quota body (even with a short Retry-After) is not retried; the host waits."""
    time = FakeTime()
    with respx.mock(assert_all_called=True) as router:
        route = router.get(url__startswith="https://registry.test/v2/").mock(
            return_value=httpx.Response(429, headers={"Retry-After": "1"}, content=PULL_QUOTA_BODY)
        )
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer())
            with pytest.raises(RateLimited, match="Docker Hub pull quota exhausted; not retried"):
                await fetcher("https://registry.test/v2/library/nginx/manifests/latest")
            with pytest.raises(RateLimited, match="Docker Hub pull quota exhausted"):
                await fetcher("https://registry.test/v2/library/redis/manifests/latest")
    assert route.call_count == 1
    assert time.sleeps == []


@pytest.mark.anyio
async def test_a_head_429_with_no_pulls_remaining_is_the_quota() -> None:
    """A HEAD has no body: ``ratelimit-remaining: 0`` alone marks the quota, never retried."""
    time = FakeTime()
    with respx.mock(assert_all_called=True) as router:
        route = router.head("https://registry.test/v2/library/nginx/manifests/1").mock(
            return_value=httpx.Response(
                429, headers={"ratelimit-limit": "100;w=21600", "ratelimit-remaining": "0;w=21600"}
            )
        )
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer())
            with pytest.raises(RateLimited, match="pull quota"):
                await fetcher("https://registry.test/v2/library/nginx/manifests/1", method="HEAD")
    assert route.call_count == 1
    assert time.sleeps == []


@pytest.mark.anyio
async def test_a_generic_toomanyrequests_is_retried_on_the_short_back_off() -> None:
    """The spec's TOOMANYREQUESTS without the pull-quota wording (GHCR's) is a short limit."""
    time = FakeTime()
    body = b'{"errors":[{"code":"TOOMANYREQUESTS","message":"retry-after: 1.2ms"}]}'
    with respx.mock(assert_all_called=True) as router:
        route = router.get("https://ghcr.test/v2/o/i/tags/list").mock(
            side_effect=[httpx.Response(429, content=body), httpx.Response(200)]
        )
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer())
            async with time.driving():
                assert (await fetcher("https://ghcr.test/v2/o/i/tags/list")).status == 200
    assert route.call_count == 2
    assert time.sleeps == [1.0]


@pytest.mark.anyio
async def test_a_primary_limit_resetting_within_the_bound_is_waited_out() -> None:
    """``x-ratelimit-remaining: 0`` resetting in 20 s: the next request waits 20 s, then goes."""
    time = FakeTime()
    sent: list[float] = []
    reset = str(int(NOW.timestamp()) + 20)

    def answer(_request: httpx.Request) -> httpx.Response:
        sent.append(time.t)
        headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset} if not sent[1:] else {}
        return httpx.Response(200, headers=headers)

    with respx.mock() as router:
        router.get(url__startswith="https://api.github.test/").mock(side_effect=answer)
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer())
            async with time.driving():
                await fetcher("https://api.github.test/repos/a/b/tags")
                await fetcher("https://api.github.test/repos/a/b/releases")
    assert sent == [0.0, 20.0]
    assert fetcher.stats["api.github.test"].cooldown_seconds == 20.0
    assert fetcher.stats["api.github.test"].rate_limited == 0  # an answer, not a refusal


def test_a_reset_on_another_day_names_the_date() -> None:
    """The reason names the reset as HH:MMZ today, with the date when it is another day."""
    late = datetime(2026, 11, 30, 23, 50, tzinfo=UTC)
    reset = datetime(2026, 12, 1, 0, 40, tzinfo=UTC)
    assert used_up("api.github.com", reset, "this token (GITHUB_TOKEN)", late) == (
        "api.github.com: the rate limit for this token (GITHUB_TOKEN) is used up until "
        "2026-12-01 00:40Z (x-ratelimit-reset, in 50 min); its requests fail until then without "
        "being sent"
    )


@pytest.mark.parametrize(
    "base",
    ["https://api.github.com", "https://ghe.example/api/v3", "https://ghe.example:8443/api/v3/"],
)
def test_graphql_is_always_on_the_rest_host(base: str) -> None:
    """GraphQL is derived from the REST base, never configured apart: one host, one limiter.

    (A redirect to another host would go through that host's own limit and cool-down.)
    """
    graphql = github_graphql_url(base)
    assert host_key(graphql) == host_key(base)
    assert graphql.endswith(("/api/graphql", "api.github.com/graphql"))


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(3600.0, "3600"), (120.0, "120"), (59.6, "60"), (2.0, "2"), (2.5, "2.5"), (0.0, "0")],
)
def test_seconds_are_written_without_a_useless_decimal(seconds: float, text: str) -> None:
    """Whole seconds from 10 on, one decimal below, never a trailing ``.0``."""
    assert seconds_text(seconds) == text
