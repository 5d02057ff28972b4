"""Redirects are followed by the fetcher, hop by hop: each hop through its own host's limits.

Against the fake registry: ``npm`` and ``pypi`` are two hosts (two loopback ports), so a redirect
from one to the other crosses origins.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import anyio
import httpx
import pytest
import respx

from patchula.errors import RegistryError
from patchula.http.auth import Credential, StaticCredentials, scope_of
from patchula.http.fetcher import MAX_REDIRECTS, Fetcher, host_key, make_client
from tests.fake_registry import FakeRegistry
from tests.fake_registry.base import Reply, Request

OLD = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.fixture
def registry() -> Iterator[FakeRegistry]:
    """The fake registry with an npm package ``pkg`` and a PyPI project ``proj``."""
    with FakeRegistry() as fake:
        fake.npm.add("pkg", {"1.0.0": OLD})
        fake.pypi.add("proj", {"1.0": OLD})
        yield fake
        assert fake.errors == []


@pytest.mark.anyio
async def test_redirect_target_obeys_its_own_host_limit_and_appears_in_stats(
    registry: FakeRegistry,
) -> None:
    """16 requests redirected to a host limited to 2: never more than 2 there; it is counted."""
    npm, pypi = registry.host("npm"), registry.host("pypi")
    npm.redirect_next(16, f"{pypi.url}/pypi/proj/json")
    pypi.latency = 0.05
    target = host_key(pypi.url)
    async with make_client() as client:
        fetcher = Fetcher(client, host_limits={target: 2})
        answers: list[tuple[int, str]] = []

        async def one(i: int) -> None:
            response = await fetcher(f"{npm.url}/pkg?i={i}")
            answers.append((response.status, response.url))

        async with anyio.create_task_group() as tg:
            for i in range(16):
                tg.start_soon(one, i)
    assert answers == [(200, f"{pypi.url}/pypi/proj/json")] * 16
    assert pypi.peak_concurrency == 2
    stats = fetcher.stats[target]
    assert (stats.requests, stats.max_concurrency, stats.responses) == (16, 2, {"2xx": 16})
    assert fetcher.stats[host_key(npm.url)].responses == {"3xx": 16}


@pytest.mark.anyio
async def test_redirect_loop_is_too_many_redirects(registry: FakeRegistry) -> None:
    """Two routes redirecting to each other end as "too many redirects (6)", not "HTTP 302"."""
    npm = registry.host("npm")
    npm.redirects = {"GET /a": "/b", "GET /b": f"{npm.url}/a"}
    async with make_client() as client:
        fetcher = Fetcher(client)
        with pytest.raises(RegistryError, match=r"too many redirects \(6\) starting at "):
            await fetcher(f"{npm.url}/a")
    assert npm.requests == MAX_REDIRECTS + 1


@pytest.mark.anyio
@pytest.mark.parametrize("location", ["file:///etc/passwd", "ftp://mirror.test/pkg", "data:,x"])
async def test_redirect_off_http_is_refused(registry: FakeRegistry, location: str) -> None:
    """A Location that is not http(s) is not followed; the reason names only its scheme."""
    npm = registry.host("npm")
    npm.redirect_next(1, location)
    async with make_client() as client:
        with pytest.raises(RegistryError, match="non-HTTP") as caught:
            await Fetcher(client)(f"{npm.url}/pkg")
    assert location.partition(":")[2] not in str(caught.value)


@pytest.mark.anyio
async def test_credential_and_caller_secrets_stay_on_their_own_origin(
    registry: FakeRegistry,
) -> None:
    """A's credential and a caller's Cookie go to A only; B gets its own credential per hop."""
    npm, pypi = registry.host("npm"), registry.host("pypi")
    npm.redirects = {"GET /private": f"{pypi.url}/pypi/proj/json"}
    cookies: list[str | None] = []
    serve_pypi = pypi.handler

    def spy(request: Request) -> Reply:
        cookies.append(request.headers.get("cookie"))
        return serve_pypi(request)

    pypi.handler = spy
    only_a = StaticCredentials(
        [Credential("Authorization", "Bearer a-secret", "~/.npmrc", scope_of(npm.url))]
    )
    async with make_client() as client:
        response = await Fetcher(client, credentials=only_a)(
            f"{npm.url}/private", headers={"Cookie": "session=s3cret"}
        )
    assert response.status == 200
    assert response.credential is None  # the final hop carried none
    assert (npm.authorized_requests, pypi.authorized_requests) == (1, 0)
    assert cookies == [None]

    both = StaticCredentials(
        [
            Credential("Authorization", "Bearer a-secret", "~/.npmrc", scope_of(npm.url)),
            Credential("Authorization", "Basic Yjpi", "~/.netrc", scope_of(pypi.url)),
        ]
    )
    registry.reset_stats()
    async with make_client() as client:
        response = await Fetcher(client, credentials=both)(f"{npm.url}/private")
    assert response.credential == "~/.netrc"
    assert (npm.authorized_requests, pypi.authorized_requests) == (1, 1)


@pytest.mark.anyio
async def test_client_path_redirects_go_through_the_fetcher() -> None:
    """Through an httpx client (the proxied path) the fetcher follows, strips and counts hops."""
    seen: dict[str, str | None] = {}

    def record(request: httpx.Request) -> httpx.Response:
        seen[request.url.host] = request.headers.get("authorization")
        if request.url.host == "a.test":
            return httpx.Response(302, headers={"Location": "https://b.test/final"})
        return httpx.Response(200, text="done")

    with respx.mock(assert_all_called=True) as router:
        router.get(url__regex=r"https://(a|b)\.test/.*").mock(side_effect=record)
        async with httpx.AsyncClient(follow_redirects=True) as client:
            fetcher = Fetcher(client)
            response = await fetcher(
                "https://a.test/start", headers={"Authorization": "Bearer caller"}
            )
    assert (response.status, response.content, response.url) == (
        200,
        b"done",
        "https://b.test/final",
    )
    assert seen == {"a.test": "Bearer caller", "b.test": None}
    assert (fetcher.stats["a.test"].requests, fetcher.stats["b.test"].requests) == (1, 1)
