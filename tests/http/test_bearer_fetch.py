"""The fetcher's side of bearer challenges, with respx: retries, expiry, keys, failures."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import respx

from patchula.cache import Cache
from patchula.errors import RegistryError
from patchula.http.auth import StaticCredentials, basic_credential
from patchula.http.fetcher import Fetcher, Timer
from tests.faketime import FakeTime

START = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
REGISTRY = "https://registry.example"
REALM = "https://auth.example/token"
SCOPE = "repository:a/b:pull"
CHALLENGE = {
    "WWW-Authenticate": f'Bearer realm="{REALM}",service="registry.example",scope="{SCOPE}"'
}


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        """Return the time the test set."""
        return self.now


def _token(value: str, expires_in: int = 300) -> httpx.Response:
    return httpx.Response(200, json={"token": value, "expires_in": expires_in})


@pytest.mark.anyio
async def test_a_second_401_is_the_answer() -> None:
    """One token request and one retry; a registry refusing the token again is answered 401."""
    with respx.mock() as mock:
        registry = mock.get(f"{REGISTRY}/v2/a/b/tags/list").respond(401, headers=CHALLENGE)
        token = mock.get(url__startswith=REALM).mock(return_value=_token("t1"))
        async with httpx.AsyncClient() as client:
            response = await Fetcher(client)(f"{REGISTRY}/v2/a/b/tags/list", scope=SCOPE)
    assert response.status == 401
    assert (registry.call_count, token.call_count) == (2, 1)
    assert registry.calls[1].request.headers["authorization"] == "Bearer t1"
    assert "authorization" not in registry.calls[0].request.headers
    sent = token.calls[0].request.url
    assert sent.params.get_list("scope") == [SCOPE]
    assert sent.params["service"] == "registry.example"


@pytest.mark.anyio
async def test_an_expired_token_is_not_sent(tmp_path: Path) -> None:
    """Past ``expires_in`` less the margin, the next request goes without the old token."""
    clock = Clock()
    with respx.mock() as mock:
        seen: list[str | None] = []

        def registry(request: httpx.Request) -> httpx.Response:
            auth = request.headers.get("authorization")
            seen.append(auth)
            if auth in {"Bearer t1", "Bearer t2"}:
                return httpx.Response(200, json={"tags": []})
            return httpx.Response(401, headers=CHALLENGE)

        mock.get(url__startswith=f"{REGISTRY}/v2/").mock(side_effect=registry)
        mock.get(url__startswith=REALM).mock(side_effect=[_token("t1", 60), _token("t2", 60)])
        cache = Cache.open(tmp_path / "c.sqlite3")
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, cache=cache, timer=Timer(wall=clock))
            await fetcher(f"{REGISTRY}/v2/a/b/tags/list?n=1", scope=SCOPE)
            clock.now = START + timedelta(seconds=49)
            await fetcher(f"{REGISTRY}/v2/a/b/tags/list?n=2", scope=SCOPE)
            clock.now = START + timedelta(seconds=51)  # 60 s less the 10 s margin: expired
            await fetcher(f"{REGISTRY}/v2/a/b/tags/list?n=3", scope=SCOPE)
        cache.close()
    assert seen == [None, "Bearer t1", "Bearer t1", None, "Bearer t2"]


@pytest.mark.anyio
async def test_the_token_never_enters_the_cache_key(tmp_path: Path) -> None:
    """The registry answer is keyed as the anonymous request: a token-less fetcher finds it."""
    with respx.mock() as mock:

        def registry(request: httpx.Request) -> httpx.Response:
            if request.headers.get("authorization") == "Bearer t1":
                return httpx.Response(
                    200, json={"tags": ["1"]}, headers={"Cache-Control": "max-age=600"}
                )
            return httpx.Response(401, headers=CHALLENGE)

        route = mock.get(f"{REGISTRY}/v2/a/b/tags/list").mock(side_effect=registry)
        mock.get(url__startswith=REALM).mock(return_value=_token("t1"))
        cache = Cache.open(tmp_path / "c.sqlite3")
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, cache=cache)
            await fetcher(f"{REGISTRY}/v2/a/b/tags/list", scope=SCOPE)
            key = fetcher._key(f"{REGISTRY}/v2/a/b/tags/list", None, "raw")
            again = await Fetcher(client, cache=cache)(f"{REGISTRY}/v2/a/b/tags/list")
        entry = await cache.get_http(key)
        cache.close()
    assert "t1" not in key
    assert entry is not None
    assert entry.body == b'{"tags":["1"]}'
    assert again.cache == "fresh"
    assert route.call_count == 2


@pytest.mark.anyio
async def test_a_failing_token_service_is_a_registry_error() -> None:
    """A token service answering 404 fails the request, naming both hosts, not retried blindly."""
    with respx.mock() as mock:
        mock.get(f"{REGISTRY}/v2/a/b/tags/list").respond(401, headers=CHALLENGE)
        token = mock.get(url__startswith=REALM).respond(404)
        async with httpx.AsyncClient() as client:
            with pytest.raises(
                RegistryError,
                match=r"registry\.example asked for a bearer token; the token service at "
                r"auth\.example answered HTTP 404",
            ):
                await Fetcher(client)(f"{REGISTRY}/v2/a/b/tags/list", scope=SCOPE)
    assert token.call_count == 1


@pytest.mark.anyio
async def test_a_non_http_realm_is_not_followed() -> None:
    """``Bearer realm="file:…"``: no token request; the 401 is the answer."""
    with respx.mock() as mock:
        route = mock.get(f"{REGISTRY}/v2/a/b/tags/list").respond(
            401, headers={"WWW-Authenticate": 'Bearer realm="file:///etc/passwd"'}
        )
        async with httpx.AsyncClient() as client:
            response = await Fetcher(client)(f"{REGISTRY}/v2/a/b/tags/list", scope=SCOPE)
    assert response.status == 401
    assert route.call_count == 1


@pytest.mark.anyio
async def test_a_cached_token_replaces_a_configured_credential() -> None:
    """On the registry's origin the bearer is the one Authorization sent, not beside Basic."""
    login = basic_credential("me", "stand-in", f"{REGISTRY}/", "~/.docker/config.json")
    with respx.mock() as mock:
        registry = mock.get(url__startswith=f"{REGISTRY}/").mock(
            side_effect=[httpx.Response(401, headers=CHALLENGE), httpx.Response(200)]
        )
        token = mock.get(url__startswith=REALM).mock(return_value=_token("t1"))
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, credentials=StaticCredentials([login]))
            response = await fetcher(f"{REGISTRY}/v2/a/b/tags/list", scope=SCOPE)
    assert response.status == 200
    assert registry.calls[0].request.headers["authorization"] == login.value
    assert registry.calls[1].request.headers.get_list("authorization") == ["Bearer t1"]
    # The realm is on another host with no credential of its own: anonymous.
    assert "authorization" not in token.calls[0].request.headers


@pytest.mark.anyio
async def test_the_token_request_goes_through_the_governor() -> None:
    """A 429 from the token service is waited out like any host's (Retry-After), then retried."""
    time = FakeTime()
    with respx.mock() as mock:
        mock.get(f"{REGISTRY}/v2/a/b/tags/list").mock(
            side_effect=[httpx.Response(401, headers=CHALLENGE), httpx.Response(200)]
        )
        token = mock.get(url__startswith=REALM).mock(
            side_effect=[httpx.Response(429, headers={"Retry-After": "3"}), _token("t1")]
        )
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, timer=time.timer())
            async with time.driving():
                response = await fetcher(f"{REGISTRY}/v2/a/b/tags/list", scope=SCOPE)
    assert response.status == 200
    assert token.call_count == 2
    assert time.sleeps == [3.0]
    assert fetcher.stats["auth.example"].rate_limited == 1
