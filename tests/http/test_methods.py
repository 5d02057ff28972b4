"""The fetch facade's methods: GET (default), HEAD and POST with a body (issue 11 item 2).

Against a loopback host of the fake registry that echoes what it received: the method, the body
and its Content-Length. Both send paths are covered: the run's pooled transport (``make_client``)
and httpx's own (a plain client, the path proxied requests take).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import anyio
import httpx
import pytest

from patchula.cache import Cache
from patchula.datasource.base import MethodFetch
from patchula.http.caching import cache_key
from patchula.http.fetcher import Fetcher, make_client
from tests.fake_registry.base import Reply, Request, VirtualHost


def _echo(request: Request) -> Reply:
    if request.path == "/big":
        return Reply(200, b"x" * 4096, "text/plain")
    answer = {
        "method": request.method,
        "body": request.body.decode(),
        "length": request.headers.get("content-length"),
        "type": request.headers.get("content-type"),
    }
    return Reply(200, json.dumps(answer).encode())


@pytest.fixture
def echo() -> Iterator[VirtualHost]:
    """A host answering every method with what it received (HEAD: the headers only)."""
    host = VirtualHost("echo", handler=_echo)
    host.start()
    try:
        yield host
        assert host.errors == []
    finally:
        host.stop()


CLIENTS: dict[str, Callable[[], httpx.AsyncClient]] = {
    "pooled transport": make_client,
    "httpx": httpx.AsyncClient,
}


def _methods(host: VirtualHost) -> list[str]:
    with host.lock:
        return [f"{entry.method} {entry.path}" for entry in host.log]


@pytest.mark.anyio
@pytest.mark.parametrize("client", CLIENTS.values(), ids=CLIENTS.keys())
async def test_post_sends_its_body_and_head_reads_no_body(
    echo: VirtualHost, client: Callable[[], httpx.AsyncClient]
) -> None:
    """POST carries the body with its Content-Length; HEAD answers headers and empty content."""
    async with client() as http:
        fetch: MethodFetch = Fetcher(http)
        posted = await fetch(
            f"{echo.url}/graphql",
            method="POST",
            body=b'{"query": "{ viewer { login } }"}',
            headers={"Content-Type": "application/json"},
        )
        head = await fetch(f"{echo.url}/v2/lib/manifests/1", method="HEAD")
        got = await fetch(f"{echo.url}/doc")
    assert json.loads(posted.content) == {
        "method": "POST",
        "body": '{"query": "{ viewer { login } }"}',
        "length": "33",
        "type": "application/json",
    }
    assert (head.status, head.content) == (200, b"")
    # The size its GET would have (the echo names "HEAD", one letter more), announced, not read.
    assert head.header("content-length") == str(len(got.content) + 1)
    assert json.loads(got.content)["method"] == "GET"
    assert _methods(echo) == ["POST /graphql", "HEAD /v2/lib/manifests/1", "GET /doc"]


@pytest.mark.anyio
@pytest.mark.parametrize("client", CLIENTS.values(), ids=CLIENTS.keys())
async def test_head_is_not_refused_for_the_size_its_get_would_have(
    echo: VirtualHost, client: Callable[[], httpx.AsyncClient]
) -> None:
    """A HEAD announcing 4096 bytes passes a 1 KiB body bound; the GET of it is refused."""
    async with client() as http:
        fetcher = Fetcher(http, max_body_bytes=1024)
        head = await fetcher(f"{echo.url}/big", method="HEAD")
        with pytest.raises(Exception, match="Content-Length 4096 over the 1 KiB limit"):
            await fetcher(f"{echo.url}/big")
    assert (head.status, head.header("content-length"), head.content) == (200, "4096", b"")


@pytest.mark.anyio
async def test_head_and_post_bodies_have_cache_entries_of_their_own(echo: VirtualHost) -> None:
    """GET, HEAD and two POST bodies to one URL: four requests; asked again, four fresh answers."""
    url = f"{echo.url}/graphql"
    async with Cache.open(None) as cache, make_client() as http:
        fetcher = Fetcher(http, cache=cache)
        calls = [
            {"method": "GET"},
            {"method": "HEAD"},
            {"method": "POST", "body": b"query A"},
            {"method": "POST", "body": b"query B"},
        ]
        first = [await fetcher(url, **call) for call in calls]  # type: ignore[arg-type]
        again = [await fetcher(url, **call) for call in calls]  # type: ignore[arg-type]
    assert [r.cache for r in first] == ["miss"] * 4
    assert [r.cache for r in again] == ["fresh"] * 4
    assert [r.content for r in again] == [r.content for r in first]
    assert [json.loads(r.content)["body"] for r in again[2:]] == ["query A", "query B"]
    assert again[1].content == b""
    assert _methods(echo) == ["GET /graphql", "HEAD /graphql", "POST /graphql", "POST /graphql"]


@pytest.mark.anyio
async def test_an_expired_post_is_sent_again_without_validators(echo: VirtualHost) -> None:
    """RFC 9110 §13.1.2: If-None-Match on a POST is a precondition, so none is sent."""
    echo.cache_control = "no-cache"  # stored with validators, revalidated on every use
    seen: list[dict[str, str]] = []

    def spy(request: Request) -> Reply:
        seen.append(request.headers)
        return Reply(200, b"{}", etag='"same"')

    echo.handler = spy
    url = f"{echo.url}/graphql"
    async with Cache.open(None) as cache, make_client() as http:
        fetcher = Fetcher(http, cache=cache)
        for _ in range(2):
            await fetcher(url, method="POST", body=b"q")
        for _ in range(2):
            await fetcher(url)
    assert ["if-none-match" in headers for headers in seen] == [False, False, False, True]


@pytest.mark.anyio
async def test_single_flight_is_keyed_by_method_and_body(echo: VirtualHost) -> None:
    """Eight concurrent calls, two of each kind: one request per kind, four in all."""
    echo.latency = 0.1
    url = f"{echo.url}/q"
    calls = [
        {"method": "GET"},
        {"method": "HEAD"},
        {"method": "POST", "body": b"A"},
        {"method": "POST", "body": b"B"},
    ] * 2
    answers: dict[int, bytes] = {}
    async with make_client() as http:
        fetcher = Fetcher(http)

        async def one(i: int) -> None:
            answers[i] = (await fetcher(url, **calls[i])).content  # type: ignore[arg-type]

        async with anyio.create_task_group() as tg:
            for i in range(len(calls)):
                tg.start_soon(one, i)
    assert sorted(_methods(echo)) == ["GET /q", "HEAD /q", "POST /q", "POST /q"]
    assert [answers[i] == answers[i + 4] for i in range(4)] == [True] * 4
    assert [json.loads(answers[i])["body"] for i in (2, 3)] == ["A", "B"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "method", "then"),
    [
        (303, "POST", ("GET", "", None)),
        (302, "POST", ("GET", "", None)),
        (301, "POST", ("GET", "", None)),
        (307, "POST", ("POST", "q", "application/json")),
        (308, "POST", ("POST", "q", "application/json")),
        (303, "HEAD", ("HEAD", None, None)),
        (307, "HEAD", ("HEAD", None, None)),
    ],
)
async def test_redirects_keep_or_change_the_method_per_rfc_9110(
    echo: VirtualHost, status: int, method: str, then: tuple[str, str | None, str | None]
) -> None:
    """RFC 9110 §15.4: 307/308 keep method and body; 303 (and 301/302 for POST) make a GET."""
    echo.redirect_next(1, f"{echo.url}/target", status)
    body = b"q" if method == "POST" else None
    async with make_client() as http:
        response = await Fetcher(http)(
            f"{echo.url}/start",
            method=method,
            body=body,
            headers={"Content-Type": "application/json"} if body else None,
        )
    assert _methods(echo) == [f"{method} /start", f"{then[0]} /target"]
    if then[0] == "HEAD":
        assert response.content == b""
    else:
        answer = json.loads(response.content)
        assert (answer["method"], answer["body"], answer["type"]) == then


@pytest.mark.anyio
async def test_other_methods_and_bodies_without_post_are_refused(echo: VirtualHost) -> None:
    """The facade sends GET, HEAD and POST; a body goes only with POST. Nothing is sent."""
    async with make_client() as http:
        fetcher = Fetcher(http)
        with pytest.raises(ValueError, match="not PUT"):
            await fetcher(f"{echo.url}/x", method="PUT")
        with pytest.raises(ValueError, match="a GET request has no body"):
            await fetcher(f"{echo.url}/x", body=b"q")
    assert _methods(echo) == []


def test_cache_keys_name_the_method_and_a_digest_of_a_post_body() -> None:
    """GET keys keep their form; a POST body adds its SHA-256, never the body itself."""
    url = "https://api.example.test/graphql"
    assert cache_key("GET", url) == "raw|GET|https://api.example.test/graphql||-"
    assert cache_key("HEAD", url) == "raw|HEAD|https://api.example.test/graphql||-"
    a, b = (cache_key("POST", url, body=q) for q in (b"query secret-A", b"query B"))
    assert a != b
    assert a.startswith("raw|POST|https://api.example.test/graphql||-|body-sha256:")
    assert "secret-A" not in a
    assert len(a.rsplit(":", 1)[1]) == 64
