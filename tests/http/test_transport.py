"""The pooled transport: real sockets on loopback, keep-alive reuse, closes, errors, codings."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import importlib.util
import random
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
import respx

from patchula.errors import ConfigError, RegistryUnreachable
from patchula.http.fetcher import Fetcher, _proxied, make_client
from patchula.http.transport import HeadTooLarge, PerHostPoolTransport

TIMEOUTS: dict[str, float | None] = {"connect": 2.0, "read": 2.0, "write": 2.0, "pool": 2.0}

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Server:
    """A loopback HTTP/1.1 server whose handler decides what each connection gets."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.requests: list[bytes] = []
        self.port = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handler(reader, writer)
        finally:
            writer.close()

    async def read_request(self, reader: asyncio.StreamReader) -> bytes | None:
        """Read one request head; ``None`` when the client closed the connection."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        self.requests.append(head)
        return head

    @property
    def url(self) -> str:
        """The server's base URL."""
        return f"http://127.0.0.1:{self.port}"


def _answer(body: bytes, *extra: str) -> bytes:
    head = ["HTTP/1.1 200 OK", f"Content-Length: {len(body)}", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Handler], Awaitable[Server]]]:
    """Start loopback servers for a test; all are closed at its end."""
    started: list[asyncio.Server] = []

    async def start(handler: Handler) -> Server:
        server = Server(handler)
        listener = await asyncio.start_server(server._serve, "127.0.0.1", 0)
        server.port = listener.sockets[0].getsockname()[1]
        started.append(listener)
        return server

    yield start
    for listener in started:
        listener.close()
        await listener.wait_closed()


@pytest.mark.anyio
async def test_keep_alive_connection_is_reused(
    serve: Callable[[Handler], Awaitable[Server]],
) -> None:
    """Three sequential requests travel on one connection; the host header names the port."""
    server: Server

    async def keep_alive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await server.read_request(reader) is not None:
            writer.write(_answer(b"ok"))
            await writer.drain()

    server = await serve(keep_alive)
    transport = PerHostPoolTransport()
    try:
        for i in range(3):
            response = await transport.get(f"{server.url}/{i}", [("user-agent", "t")], TIMEOUTS)
            assert (response.status, response.content) == (200, b"ok")
    finally:
        await transport.aclose()
    assert server.connections == 1
    assert f"Host: 127.0.0.1:{server.port}".encode() in server.requests[0]
    assert transport.idle_connections() == {}


@pytest.mark.anyio
async def test_connection_closed_by_the_server_while_idle_is_not_reused(
    serve: Callable[[Handler], Awaitable[Server]],
) -> None:
    """A keep-alive connection the server closed while idle is replaced, not failed on."""
    server: Server

    async def one_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        writer.write(_answer(b"ok"))  # announces keep-alive, then closes while idle
        await writer.drain()

    server = await serve(one_then_close)
    async with make_client() as client:
        fetcher = Fetcher(client)
        first = await fetcher(f"{server.url}/a")
        await asyncio.sleep(0.05)  # the close reaches the client while the connection is idle
        second = await fetcher(f"{server.url}/b")
    assert (first.content, second.content) == (b"ok", b"ok")
    assert server.connections == 2
    stats = fetcher.stats[f"127.0.0.1:{server.port}"]
    assert (stats.requests, stats.retries, stats.errors) == (2, 0, 0)


@pytest.mark.anyio
async def test_connection_close_answer_is_not_kept_idle(
    serve: Callable[[Handler], Awaitable[Server]],
) -> None:
    """``Connection: close`` (RFC 9112 §9.6): the connection is not returned to the pool."""
    server: Server

    async def closing(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        writer.write(_answer(b"bye", "Connection: close"))
        await writer.drain()

    server = await serve(closing)
    transport = PerHostPoolTransport()
    try:
        for _ in range(2):
            assert (await transport.get(f"{server.url}/", [], TIMEOUTS)).content == b"bye"
        assert transport.idle_connections() == {server.url: 0}
    finally:
        await transport.aclose()
    assert server.connections == 2


@pytest.mark.anyio
async def test_transport_returns_redirects_and_the_fetcher_follows_relative_ones(
    serve: Callable[[Handler], Awaitable[Server]],
) -> None:
    """The transport hands a 301 back; the fetcher resolves its relative Location (RFC 9110)."""
    server: Server

    async def redirecting(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (head := await server.read_request(reader)) is not None:
            if head.startswith(b"GET /simple/Six/ "):
                writer.write(b"HTTP/1.1 301 Moved\r\nLocation: ../six/\r\n")
                writer.write(b"Content-Length: 0\r\n\r\n")
            else:
                writer.write(_answer(b"six"))
            await writer.drain()

    server = await serve(redirecting)
    transport = PerHostPoolTransport()
    try:
        raw = await transport.get(f"{server.url}/simple/Six/", [], TIMEOUTS)
    finally:
        await transport.aclose()
    assert (raw.status, dict(raw.headers)["location"]) == (301, "../six/")
    async with make_client() as client:
        response = await Fetcher(client)(f"{server.url}/simple/Six/")
    assert (response.status, response.content) == (200, b"six")
    assert response.url == f"{server.url}/simple/six/"
    assert server.requests[-1].startswith(b"GET /simple/six/ ")


@pytest.mark.anyio
async def test_silent_server_is_a_read_timeout(
    serve: Callable[[Handler], Awaitable[Server]],
) -> None:
    """No answer within the read timeout raises httpx.ReadTimeout; the connection is dropped."""
    server: Server

    async def silent(reader: asyncio.StreamReader, _writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        await asyncio.sleep(1)

    server = await serve(silent)
    transport = PerHostPoolTransport()
    try:
        with pytest.raises(httpx.ReadTimeout):
            await transport.get(f"{server.url}/", [], {**TIMEOUTS, "read": 0.1})
        assert transport.idle_connections() == {}
    finally:
        await transport.aclose()


@pytest.mark.anyio
async def test_truncated_body_is_a_remote_protocol_error(
    serve: Callable[[Handler], Awaitable[Server]],
) -> None:
    """A body shorter than its Content-Length is an httpx.RemoteProtocolError."""
    server: Server

    async def truncated(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
        await writer.drain()

    server = await serve(truncated)
    transport = PerHostPoolTransport()
    try:
        with pytest.raises(httpx.RemoteProtocolError):
            await transport.get(f"{server.url}/", [], TIMEOUTS)
    finally:
        await transport.aclose()


@pytest.mark.anyio
async def test_refused_connection_is_a_connect_error() -> None:
    """Nothing listening: httpx.ConnectError, as from httpx's own transport."""
    listener = await asyncio.start_server(lambda _r, w: w.close(), "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    listener.close()
    await listener.wait_closed()
    transport = PerHostPoolTransport()
    try:
        with pytest.raises(httpx.ConnectError):
            await transport.get(f"http://127.0.0.1:{port}/", [], TIMEOUTS)
    finally:
        await transport.aclose()


@pytest.mark.anyio
async def test_gzip_body_is_decoded() -> None:
    """Registries answer with ``Content-Encoding: gzip``; the fetcher returns the plain body."""
    body = b'{"name": "left-pad"}' * 50
    with respx.mock(assert_all_called=True) as router:
        router.get("https://registry.test/left-pad").mock(
            return_value=httpx.Response(
                200, headers={"Content-Encoding": "gzip"}, content=gzip.compress(body)
            )
        )
        async with make_client() as client:
            response = await Fetcher(client)("https://registry.test/left-pad")
    assert response.content == body


@pytest.mark.anyio
async def test_corrupt_gzip_body_is_retried_then_reported() -> None:
    """A body that does not decode is a transport failure: retried, then an explicit error."""
    with respx.mock(assert_all_called=True) as router:
        route = router.get("https://registry.test/x").mock(
            return_value=httpx.Response(
                200, headers={"Content-Encoding": "gzip"}, stream=httpx.ByteStream(b"not gzip")
            )
        )
        async with make_client() as client:
            fetcher = Fetcher(client)
            with pytest.raises(
                RegistryUnreachable, match=r"registry\.test is unreachable \(DecodingError\)"
            ):
                await fetcher("https://registry.test/x")
    assert route.call_count == 2  # the host never answered usefully: one retry, then down


@pytest.mark.anyio
async def test_httpx_client_requests_use_the_same_pool(
    serve: Callable[[Handler], Awaitable[Server]],
) -> None:
    """The transport also serves an httpx.AsyncClient (streamed bodies, connection returned)."""
    server: Server

    async def keep_alive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await server.read_request(reader) is not None:
            writer.write(_answer(b"hello"))
            await writer.drain()

    server = await serve(keep_alive)
    async with make_client() as client:
        for _ in range(2):
            response = await client.get(f"{server.url}/")
            assert response.text == "hello"
    assert server.connections == 1


@pytest.mark.anyio
async def test_proxy_variables_route_requests_through_the_proxy(
    serve: Callable[[Handler], Awaitable[Server]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``HTTP_PROXY`` set: the request goes to the proxy in absolute form; ``NO_PROXY`` exempts."""
    server: Server

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await server.read_request(reader) is not None:
            writer.write(_answer(b"via proxy"))
            await writer.drain()

    server = await serve(proxy)
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", server.url)
    monkeypatch.setenv("http_proxy", server.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    async with make_client() as client:
        fetcher = Fetcher(client)
        response = await fetcher("http://registry.invalid/left-pad")
        direct = await fetcher(f"{server.url}/direct")
    assert response.content == b"via proxy"
    assert server.requests[0].startswith(b"GET http://registry.invalid/left-pad HTTP/1.1")
    assert direct.content == b"via proxy"  # the same server, reached directly
    assert server.requests[1].startswith(b"GET /direct HTTP/1.1")


def _only_proxy(monkeypatch: pytest.MonkeyPatch, **variables: str) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)


@pytest.mark.anyio
async def test_unreachable_proxy_is_named_without_its_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A dead proxy: the error names the proxy (password redacted), not only the registry."""
    listener = await asyncio.start_server(lambda _r, w: w.close(), "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    listener.close()
    await listener.wait_closed()
    _only_proxy(monkeypatch, HTTP_PROXY=f"http://user:s3cret@127.0.0.1:{port}")
    async with make_client() as client:
        fetcher = Fetcher(client)
        with pytest.raises(RegistryUnreachable) as caught:
            await fetcher("http://registry.invalid/left-pad")
    message = str(caught.value)
    assert f"through proxy http://***@127.0.0.1:{port}" in message
    assert "registry.invalid is unreachable" in message
    assert "s3cret" not in message


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"HTTPS_PROXY": "ftp://proxy.test:21"}, "HTTPS_PROXY names an unusable proxy"),
        ({"ALL_PROXY": "ftp://u:pw@proxy.test:21"}, r"ALL_PROXY .*ftp://\*\*\*@proxy\.test:21"),
        ({"HTTPS_PROXY": "http://proxy.test:80a"}, "HTTPS_PROXY names an unusable proxy"),
        ({"HTTP_PROXY": "http://[::1"}, "HTTP_PROXY names an unusable proxy"),
    ],
)
def test_unusable_proxy_variable_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], expected: str
) -> None:
    """An unsupported proxy scheme is a clear configuration error, not a traceback."""
    _only_proxy(monkeypatch, **variables)
    with pytest.raises(ConfigError, match=expected):
        make_client()


def test_socks_proxy_without_socksio_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SOCKS needs httpx's optional socksio; without it the message says what to install."""
    if importlib.util.find_spec("socksio") is not None:
        pytest.skip("socksio is installed here: SOCKS proxies work")
    _only_proxy(monkeypatch, HTTPS_PROXY="socks5://127.0.0.1:1080")
    with pytest.raises(ConfigError, match=r"SOCKS proxy .*httpx\[socks\]"):
        make_client()


@pytest.mark.anyio
async def test_no_proxy_entry_with_a_port_bypasses_the_proxy(
    serve: Callable[[Handler], Awaitable[Server]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``NO_PROXY=127.0.0.1:<port>`` exempts that origin from a (dead) proxy."""
    server: Server

    async def direct(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await server.read_request(reader) is not None:
            writer.write(_answer(b"direct"))
            await writer.drain()

    server = await serve(direct)
    _only_proxy(monkeypatch, HTTP_PROXY="http://127.0.0.1:9", NO_PROXY=f"127.0.0.1:{server.port}")
    async with make_client() as client:
        response = await Fetcher(client)(f"{server.url}/x")
    assert response.content == b"direct"


@pytest.mark.anyio
async def test_no_proxy_cidr_range_bypasses_the_proxy(
    serve: Callable[[Handler], Awaitable[Server]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``NO_PROXY=10.0.0.0/8,127.0.0.0/8`` exempts 127.0.0.1 from a (dead) proxy, as in curl."""
    server: Server

    async def direct(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await server.read_request(reader) is not None:
            writer.write(_answer(b"direct"))
            await writer.drain()

    server = await serve(direct)
    _only_proxy(monkeypatch, HTTP_PROXY="http://127.0.0.1:9", NO_PROXY="10.0.0.0/8,127.0.0.0/8")
    async with make_client() as client:
        response = await Fetcher(client)(f"{server.url}/x")
    assert response.content == b"direct"


@pytest.mark.parametrize(
    ("url", "proxied"),
    [
        ("http://10.1.2.3:8080/x", False),
        ("http://11.0.0.1/x", True),
        ("http://[fd00::1]/x", False),
        ("http://[fe80::1]/x", True),
        ("http://192.168.200.1/x", False),  # 192.168.1.7/16 means 192.168.0.0/16, as in curl
        ("http://10.example.test/x", True),  # a name is never resolved to match a range
        ("http://localhost/x", False),
    ],
)
def test_no_proxy_ranges_decide_which_urls_are_proxied(
    monkeypatch: pytest.MonkeyPatch,
    url: str,
    proxied: bool,  # noqa: FBT001 - parametrized
) -> None:
    """CIDR entries of ``NO_PROXY`` (IPv4, IPv6, non-strict) exempt IP literals inside them."""
    _only_proxy(
        monkeypatch,
        HTTP_PROXY="http://proxy.test:3128",
        NO_PROXY="localhost, 10.0.0.0/8 [fd00::]/8,192.168.1.7/16,not/a-range",
    )
    assert _proxied(url, urllib.request.getproxies()) is proxied


@pytest.mark.anyio
async def test_oversized_response_head_is_refused(
    serve: Callable[[Handler], Awaitable[Server]],
) -> None:
    """Headers past httpcore's 100 KiB head bound are refused by name, not read without end."""
    server: Server

    async def endless_headers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\n")
        for i in range(20_000):  # 20,000 headers, about 600 KiB
            writer.write(f"X-Filler-{i}: {'a' * 16}\r\n".encode())
        with contextlib.suppress(ConnectionError):
            await writer.drain()

    server = await serve(endless_headers)
    transport = PerHostPoolTransport()
    try:
        with pytest.raises(HeadTooLarge, match=r"^header over the 100 KiB limit$"):
            await transport.get(f"{server.url}/", [], TIMEOUTS)
        assert transport.idle_connections() == {}
    finally:
        await transport.aclose()


def test_request_parts_match_httpx_url_parsing() -> None:
    """The per-origin fast path gives exactly what ``httpx.URL`` gives, on random URLs."""
    from patchula.http.transport import _parts  # noqa: PLC0415 - the private fast path

    rng = random.Random(12)  # noqa: S311 - reproducible test input, not a secret
    origins = ["http://h", "https://Reg.npmjs.org:8443", "http://127.0.0.1:80", "https://u:p@h"]
    alphabet = "aZ09-._~!$&'()*+,;=:@/?%# \u00e9[]"
    urls = [
        "http://h/a/./b",
        "http://h/a/../b?x",
        "http://h/a%zz",
        "http://h/@scope%2fname",
        "http://h/a#frag",
        "http://h",
        "HTTP://H:8080/x?q=1&b=2",
        "http://[::1]:9/x",
    ]
    urls += [
        rng.choice(origins) + "/" + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        for _ in range(5000)
    ]
    for url in urls:
        parsed = httpx.URL(url)
        expected = (parsed.raw_scheme, parsed.raw_host, parsed.port, parsed.netloc, parsed.raw_path)
        assert _parts(url) == expected, url


@pytest.mark.anyio
async def test_http11_connection_locks_do_not_yield_when_free(
    serve: Callable[[Handler], Awaitable[Server]],
) -> None:
    """An HTTP/1.1 connection's httpcore locks take the fast path (no loop turn when free)."""
    server: Server

    async def keep_alive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await server.read_request(reader) is not None:
            writer.write(_answer(b"ok"))
            await writer.drain()

    server = await serve(keep_alive)
    transport = PerHostPoolTransport()
    try:
        for i in range(2):
            response = await transport.get(f"{server.url}/{i}", [], TIMEOUTS)
            assert (response.status, response.content) == (200, b"ok")
        (link,) = transport._open
        connection: Any = link.core._connection  # httpcore's HTTP/1.1 connection
        locks = [link.core._request_lock, connection._state_lock]
        assert [lock._anyio_lock._fast_acquire for lock in locks] == [True, True]
    finally:
        await transport.aclose()
    assert server.connections == 1
