"""The run's HTTP transport: keep-alive HTTP/1.1 connections per origin, over asyncio streams.

httpcore speaks the protocol (h11) and owns each connection's state; this module decides which
connection a request uses and how bytes move. A scan sends thousands of small requests, and
measured per request the generic layers cost more CPU than the protocol itself: httpx's
request/response models, httpcore's connection pool (it scans every connection for every queued
request) and the anyio stream adapter (a cancel scope per read and write). So:

- ``PerHostPoolTransport`` keeps, per origin (scheme, host, port), a stack of idle
  ``httpcore.AsyncHTTPConnection`` objects, each used by one request at a time; the fetcher's
  host limiter bounds how many run at once, and up to ``IDLE_CONNECTIONS_PER_HOST`` idle ones
  are kept. ``get`` is the fetcher's lean path (raw headers in, status/headers/decoded body
  out); ``handle_async_request`` serves the same connections to an ``httpx.AsyncClient``.
- ``AsyncioBackend`` is an httpcore network backend (httpcore's documented extension point,
  ``network_backend=``) on ``asyncio.open_connection`` streams, with ``asyncio.timeout`` for
  the connect/read/write timeouts. patchula always runs on asyncio (``anyio.run``'s default).

Errors surface as httpx's exception classes (``httpx.ConnectError``, ``httpx.ReadTimeout`` …),
as from any httpx transport. Content codings (gzip, deflate, zstd; RFC 9110 §8.4) are decoded
by httpx's decoders.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import anyio
import httpcore
import httpx

__all__ = [
    "IDLE_CONNECTIONS_PER_HOST",
    "KEEPALIVE_EXPIRY",
    "MAX_REDIRECTS",
    "AsyncioBackend",
    "PerHostPoolTransport",
    "RawResponse",
]

IDLE_CONNECTIONS_PER_HOST = 32
# Seconds an idle connection is kept (httpx's default); older ones are closed, not reused.
KEEPALIVE_EXPIRY = 5.0
MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
# The drain threshold for writes: requests are small, so a write normally never waits.
_WRITE_BUFFER_LIMIT = 64 * 1024

_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    # Most specific first: the first match wins.
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.ProxyError, httpx.ProxyError),
)


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    """Re-raise httpcore's exceptions as the matching httpx ``TransportError``."""
    try:
        yield
    except Exception as exc:
        for source, target in _ERRORS:
            if isinstance(exc, source):
                raise target(str(exc)) from exc
        raise


@dataclass(frozen=True, slots=True)
class RawResponse:
    """A response read in full: final URL, lower-case header names, decoded body."""

    status: int
    url: str
    headers: tuple[tuple[str, str], ...]
    content: bytes


class PerHostPoolTransport(httpx.AsyncBaseTransport):
    """Keep-alive connections per origin, each used by one request at a time.

    A request takes the newest idle connection of its origin that the server has not closed
    and that is younger than ``KEEPALIVE_EXPIRY``, or opens a new one; it gives it back when
    the response is read (``get``) or closed (``handle_async_request``). A connection a request
    failed on is closed, never reused. TLS verification and the CA variables of the
    environment apply (``httpx.create_ssl_context(trust_env=True)``).
    """

    def __init__(self) -> None:
        self._idle: dict[tuple[bytes, bytes, int], list[httpcore.AsyncHTTPConnection]] = {}
        self._open: set[httpcore.AsyncHTTPConnection] = set()
        self._backend = AsyncioBackend()
        # One TLS context for every connection, made on first use: building one reads the CA
        # bundle (tens of milliseconds, megabytes), which plain-HTTP mirrors never need.
        self._ssl: ssl.SSLContext | None = None

    async def get(
        self,
        url: str,
        headers: Sequence[tuple[str, str]],
        timeouts: dict[str, float | None],
    ) -> RawResponse:
        """GET ``url`` with ``headers`` (sent as given, plus ``Host``); follow ≤5 redirects.

        ``timeouts`` maps ``connect``/``read``/``write``/``pool`` to seconds (httpx's
        ``Timeout.as_dict()``). Raises httpx's ``TransportError`` subclasses on network and
        protocol failures and ``httpx.DecodingError`` on a body that does not decode.
        """
        encoded = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
        extensions: dict[str, Any] = {"timeout": timeouts}
        target = url
        for _ in range(MAX_REDIRECTS + 1):
            parsed = httpx.URL(target)
            response = await self._round_trip(parsed, encoded, extensions)
            status = response.status
            raw = response.headers
            location = next((v for k, v in raw if k.lower() == b"location"), None)
            if status not in _REDIRECTS or location is None:
                break
            target = urljoin(str(parsed), location.decode("latin-1"))
        content = response.content
        names = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in raw]
        if any(k == "content-encoding" and v.strip().lower() != "identity" for k, v in names):
            # httpx's decoders (gzip, deflate, zstd, br when installed), as httpx.Response
            # would apply them; raises httpx.DecodingError on a corrupt body.
            content = httpx.Response(status, headers=raw, content=content).read()
        return RawResponse(status=status, url=str(parsed), headers=tuple(names), content=content)

    async def _round_trip(
        self,
        url: httpx.URL,
        headers: list[tuple[bytes, bytes]],
        extensions: dict[str, Any],
    ) -> httpcore.Response:
        """One request on a pooled connection, body read, connection handed back."""
        request = httpcore.Request(
            b"GET",
            httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=[(b"Host", url.netloc), *headers],
            extensions=extensions,
        )
        origin, connection = await self._checkout(request.url.origin)
        try:
            with _as_httpx_errors():
                response = await connection.handle_async_request(request)
                try:
                    await response.aread()
                finally:
                    await response.aclose()
        except BaseException:
            await _discard(connection)
            self._open.discard(connection)
            raise
        await self._checkin(origin, connection)
        return response

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` (httpx's transport interface) on a pooled connection."""
        url = request.url
        core = httpcore.Request(
            method=request.method.encode("ascii"),
            url=httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        origin, connection = await self._checkout(core.url.origin)
        try:
            with _as_httpx_errors():
                response = await connection.handle_async_request(core)
        except BaseException:
            await _discard(connection)
            self._open.discard(connection)
            raise
        stream = response.stream
        if not isinstance(stream, AsyncIterable):  # pragma: no cover - httpcore contract
            await self._checkin(origin, connection)
            msg = "httpcore returned a synchronous stream to an async request"
            raise TypeError(msg)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ReleasingStream(stream, self, origin, connection),
            extensions=response.extensions,
        )

    async def _checkout(
        self, origin: httpcore.Origin
    ) -> tuple[tuple[bytes, bytes, int], httpcore.AsyncHTTPConnection]:
        key = (origin.scheme, origin.host, origin.port)
        idle = self._idle.get(key)
        while idle:
            connection = idle.pop()
            if not connection.is_closed() and not connection.has_expired():
                return key, connection
            await _discard(connection)
            self._open.discard(connection)
        ssl_context = None
        if origin.scheme == b"https":
            if self._ssl is None:
                self._ssl = httpx.create_ssl_context(trust_env=True)
            ssl_context = self._ssl
        connection = httpcore.AsyncHTTPConnection(
            origin,
            ssl_context=ssl_context,
            keepalive_expiry=KEEPALIVE_EXPIRY,
            network_backend=self._backend,
        )
        self._open.add(connection)
        return key, connection

    async def _checkin(
        self, key: tuple[bytes, bytes, int], connection: httpcore.AsyncHTTPConnection
    ) -> None:
        idle = self._idle.setdefault(key, [])
        if len(idle) < IDLE_CONNECTIONS_PER_HOST and not connection.is_closed():
            idle.append(connection)
            return
        self._open.discard(connection)
        await _discard(connection)

    def idle_connections(self) -> dict[str, int]:
        """Return the number of idle keep-alive connections per origin (``scheme://host:port``).

        The port is left out when it is the scheme's default.
        """
        counts: dict[str, int] = {}
        for (scheme, host, port), idle in self._idle.items():
            default = {b"http": 80, b"https": 443}.get(scheme)
            name = f"{scheme.decode()}://{host.decode()}" + (f":{port}" if port != default else "")
            counts[name] = len(idle)
        return counts

    async def aclose(self) -> None:
        """Close every connection."""
        for connection in list(self._open):
            await _discard(connection)
        self._open.clear()
        self._idle.clear()


async def _discard(connection: httpcore.AsyncHTTPConnection) -> None:
    """Close ``connection``, also from a cancelled task (closing never waits on the network)."""
    with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
        await connection.aclose()


class _ReleasingStream(httpx.AsyncByteStream):
    """A response body for httpx that hands its connection back when closed."""

    def __init__(
        self,
        stream: AsyncIterable[bytes],
        transport: PerHostPoolTransport,
        origin: tuple[bytes, bytes, int],
        connection: httpcore.AsyncHTTPConnection,
    ) -> None:
        self._stream = stream
        self._transport = transport
        self._origin = origin
        self._connection: httpcore.AsyncHTTPConnection | None = connection

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors():
            async for chunk in self._stream:
                yield chunk

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            with _as_httpx_errors():
                await close()
        if self._connection is not None:
            connection, self._connection = self._connection, None
            await self._transport._checkin(self._origin, connection)  # noqa: SLF001


class _AsyncioStream(httpcore.AsyncNetworkStream):
    """One TCP (optionally TLS) connection as asyncio streams, in httpcore's stream interface."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        """Return up to ``max_bytes`` bytes; ``b""`` at end of stream."""
        try:
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout(str(exc) or "read timed out") from exc
        except OSError as exc:
            raise httpcore.ReadError(str(exc) or type(exc).__name__) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Queue ``buffer``; wait for the socket only when the send buffer is large."""
        if not buffer:
            return
        try:
            self._writer.write(buffer)
            if self._writer.transport.get_write_buffer_size() > _WRITE_BUFFER_LIMIT:
                async with asyncio.timeout(timeout):
                    await self._writer.drain()
        except TimeoutError as exc:
            raise httpcore.WriteTimeout(str(exc) or "write timed out") from exc
        except (OSError, RuntimeError) as exc:
            raise httpcore.WriteError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        """Close the connection without waiting for the peer."""
        self._writer.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
    ) -> httpcore.AsyncNetworkStream:
        """Upgrade this connection to TLS in place (``StreamWriter.start_tls``, Python 3.11)."""
        try:
            async with asyncio.timeout(timeout):
                await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        except TimeoutError as exc:
            self._writer.close()
            raise httpcore.ConnectTimeout(str(exc) or "TLS handshake timed out") from exc
        except (OSError, ssl.SSLError) as exc:
            self._writer.close()
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        return self

    def get_extra_info(self, info: str) -> Any:  # noqa: ANN401 - httpcore's interface
        """Answer httpcore's questions: ``ssl_object``, ``is_readable``, addresses, socket."""
        if info == "is_readable":
            # An idle keep-alive connection with something to read (or at EOF) was closed or
            # broken by the server and must not be reused.
            return self._reader.at_eof() or self._writer.transport.is_closing()
        if info == "client_addr":
            return self._writer.get_extra_info("sockname")
        if info == "server_addr":
            return self._writer.get_extra_info("peername")
        if info in {"ssl_object", "socket"}:
            return self._writer.get_extra_info(info)
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """httpcore network backend on asyncio streams (TCP only; no Unix sockets)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Open a TCP connection (Happy Eyeballs is asyncio's) within ``timeout`` seconds."""
        local = (local_address, 0) if local_address else None
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, port, local_addr=local)
        except TimeoutError as exc:
            msg = str(exc) or f"connect to {host}:{port} timed out"
            raise httpcore.ConnectTimeout(msg) from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        sock = writer.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return _AsyncioStream(reader, writer)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109, ARG002 - httpcore's interface
        socket_options: Iterable[Any] | None = None,  # noqa: ARG002
    ) -> httpcore.AsyncNetworkStream:
        """Not used by patchula: registries are reached over TCP."""
        msg = f"Unix sockets are not supported ({path})"
        raise httpcore.ConnectError(msg)

    async def sleep(self, seconds: float) -> None:
        """Sleep ``seconds`` on the running loop."""
        await asyncio.sleep(seconds)
