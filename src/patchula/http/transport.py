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
as from any httpx transport. Bodies are read incrementally and bounded (``read_body``): a
``Content-Length`` over the bound, more bytes than the bound on the wire, or content codings
(gzip, deflate, zstd; RFC 9110 §8.4) that decode to more than the bound raise ``BodyTooLarge``
as soon as it is known, and the connection is closed, never reused. The status line and
headers are bounded by httpcore itself: h11's ``max_incomplete_event_size``, which httpcore sets
to 100 KiB, refuses a larger head (``httpx.RemoteProtocolError``), so their count is bounded
too. Redirects are not followed here: the fetcher follows them, each hop through its own
host's limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import zlib
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any, Protocol, cast

import anyio
import httpcore
import httpx
import zstandard

__all__ = [
    "ACCEPT_ENCODING",
    "DEFAULT_MAX_BODY_BYTES",
    "IDLE_CONNECTIONS_PER_HOST",
    "KEEPALIVE_EXPIRY",
    "AsyncioBackend",
    "BodyTooLarge",
    "PerHostPoolTransport",
    "RawResponse",
    "read_body",
]

IDLE_CONNECTIONS_PER_HOST = 32
# Seconds an idle connection is kept (httpx's default); older ones are closed, not reused.
KEEPALIVE_EXPIRY = 5.0
# The default bound on a response body, on the wire and decoded: the largest real npm
# packuments are tens of MB.
DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024
# Exactly the content codings ``read_body`` decodes with a bound (httpx would also offer br
# when brotli is installed, which has no bounded decoder here).
ACCEPT_ENCODING = "gzip, deflate, zstd"
# Output bytes per step of the zstd decoder: a bomb stops within one step past the bound.
_ZSTD_STEP = 64 * 1024
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
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        on_head: Callable[[int], None] | None = None,
        *,
        method: str = "GET",
        body: bytes | None = None,
    ) -> RawResponse:
        """GET ``url`` with ``headers`` (sent as given, plus ``Host``); redirects are returned.

        ``method`` ``HEAD`` reads no body (``content`` is empty, whatever ``Content-Length``
        announces: RFC 9110 §9.3.2); ``body`` is sent as the request content with its
        ``Content-Length`` (a ``POST``).

        ``timeouts`` maps ``connect``/``read``/``write``/``pool`` to seconds (httpx's
        ``Timeout.as_dict()``). ``on_head`` is called with the status code as soon as the
        status line and headers have arrived, before the body is read (httpx's ``response``
        event hook does the same): the server has answered then, even when the body never
        completes. The body is read incrementally and bounded by
        ``max_body_bytes`` (see ``read_body``). Raises httpx's ``TransportError`` subclasses on
        network and protocol failures, ``httpx.DecodingError`` on a body that does not decode
        and ``BodyTooLarge`` over the bound (the connection is then closed, not reused).
        """
        parsed = httpx.URL(url)
        sized = (
            [(b"Content-Length", str(len(body)).encode("ascii"))]
            if body is not None and not any(k.lower() == "content-length" for k, _ in headers)
            else []
        )
        request = httpcore.Request(
            method.encode("ascii"),
            httpcore.URL(
                scheme=parsed.raw_scheme,
                host=parsed.raw_host,
                port=parsed.port,
                target=parsed.raw_path,
            ),
            headers=[
                (b"Host", parsed.netloc),
                *[(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers],
                *sized,
            ],
            content=body,
            extensions={"timeout": timeouts},
        )
        origin, connection = await self._checkout(request.url.origin)
        try:
            with _as_httpx_errors():
                response = await connection.handle_async_request(request)
                try:
                    if on_head is not None:
                        on_head(response.status)
                    names = tuple(
                        (k.decode("latin-1").lower(), v.decode("latin-1"))
                        for k, v in response.headers
                    )
                    stream = response.stream
                    if not isinstance(stream, AsyncIterable):  # pragma: no cover - httpcore
                        msg = "httpcore returned a synchronous stream to an async request"
                        raise TypeError(msg)
                    content = (
                        b"" if method == "HEAD" else await read_body(stream, names, max_body_bytes)
                    )
                finally:
                    await response.aclose()
        except BaseException:
            await _discard(connection)
            self._open.discard(connection)
            raise
        await self._checkin(origin, connection)
        return RawResponse(status=response.status, url=url, headers=names, content=content)

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


class BodyTooLarge(Exception):  # noqa: N818 - names the outcome, like RateLimited
    """A response body over the size bound; ``what`` says which measure passed ``limit`` bytes."""

    def __init__(self, limit: int, what: str) -> None:
        super().__init__(f"{what} over the {_size(limit)} limit")
        self.limit = limit
        self.what = what


def _size(n: int) -> str:
    """``268435456`` → ``"256 MiB"``; other values in bytes (``"1000 bytes"``)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} bytes"


class _Writer(Protocol):
    def write(self, data: bytes) -> int: ...

    def flush(self) -> None: ...


class _Decoder(Protocol):
    def decode(self, data: bytes) -> bytes: ...

    def flush(self) -> bytes: ...


class _ZlibDecoder:
    """gzip or deflate, never producing more than ``limit`` bytes (``decompress``'s max_length).

    ``deflate`` is tried with the zlib wrapper first and raw on failure, as browsers and httpx
    do (servers send both). Raises ``BodyTooLarge`` past ``limit`` and ``httpx.DecodingError``
    on corrupt data.
    """

    def __init__(self, coding: str, limit: int) -> None:
        self._coding = coding
        self._limit = limit
        self._produced = 0
        self._first = coding == "deflate"
        wbits = zlib.MAX_WBITS | 16 if coding == "gzip" else zlib.MAX_WBITS
        self._zlib = zlib.decompressobj(wbits)

    def decode(self, data: bytes) -> bytes:
        parts: list[bytes] = []
        while data and not self._zlib.eof:
            try:
                # One byte past the room left: producing it proves the bound is passed.
                piece = self._zlib.decompress(data, self._limit - self._produced + 1)
            except zlib.error as exc:
                if self._first and not parts:
                    self._first = False
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise httpx.DecodingError(str(exc)) from exc
            self._first = False
            self._produced += len(piece)
            if self._produced > self._limit:
                raise BodyTooLarge(self._limit, f"{self._coding}-decoded body")
            parts.append(piece)
            data = self._zlib.unconsumed_tail
        return b"".join(parts)

    def flush(self) -> bytes:
        try:
            rest = self._zlib.flush()
        except zlib.error as exc:  # pragma: no cover - decompress raised first
            raise httpx.DecodingError(str(exc)) from exc
        self._produced += len(rest)
        if self._produced > self._limit:
            raise BodyTooLarge(self._limit, f"{self._coding}-decoded body")
        return rest


class _Sink:
    """Collects decoder output, raising ``BodyTooLarge`` once more than ``limit`` arrived."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._produced = 0
        self._parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self._produced += len(data)
        if self._produced > self._limit:
            raise BodyTooLarge(self._limit, "zstd-decoded body")
        self._parts.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        out, self._parts = b"".join(self._parts), []
        return out


class _ZstdDecoder:
    """zstd (RFC 8878) through a stream writer whose output arrives in ``_ZSTD_STEP`` steps.

    ``decompressobj`` would inflate a whole input chunk at once (a few KiB of zstd can stand for
    gigabytes); the writer hands output over step by step, so the bound stops it early.
    """

    def __init__(self, limit: int) -> None:
        self._sink = _Sink(limit)
        writer = zstandard.ZstdDecompressor().stream_writer(
            cast("IO[bytes]", self._sink), write_size=_ZSTD_STEP, closefd=False
        )
        self._writer = cast("_Writer", writer)  # zstandard's stubs leave flush untyped

    def decode(self, data: bytes) -> bytes:
        try:
            self._writer.write(data)
        except zstandard.ZstdError as exc:
            raise httpx.DecodingError(str(exc)) from exc
        return self._sink.take()

    def flush(self) -> bytes:
        try:
            self._writer.flush()
        except zstandard.ZstdError as exc:  # pragma: no cover - write raised first
            raise httpx.DecodingError(str(exc)) from exc
        return self._sink.take()


def _decoders(headers: Iterable[tuple[str, str]], limit: int) -> list[_Decoder]:
    """Decoders for ``Content-Encoding`` in decoding order (the last coding applied first).

    Unknown codings (and ``identity``) are left alone, as httpx does.
    """
    decoders: list[_Decoder] = []
    for name, value in headers:
        if name != "content-encoding":
            continue
        for coding in (c.strip().lower() for c in value.split(",")):
            if coding in {"gzip", "x-gzip"}:
                decoders.append(_ZlibDecoder("gzip", limit))
            elif coding == "deflate":
                decoders.append(_ZlibDecoder("deflate", limit))
            elif coding == "zstd":
                decoders.append(_ZstdDecoder(limit))
    decoders.reverse()
    return decoders


async def read_body(
    chunks: AsyncIterable[bytes], headers: Sequence[tuple[str, str]], limit: int
) -> bytes:
    """Read a response body from ``chunks`` and decode its content codings, within ``limit``.

    ``headers`` are the response's (lower-case names). ``limit`` bounds, in bytes, the
    announced ``Content-Length`` (refused before any body is read), the bytes read from the
    wire and the output of every decoding stage (checked per step, so a compression bomb stops
    at the bound plus one step). Raises ``BodyTooLarge`` past the bound and
    ``httpx.DecodingError`` on a body that does not decode (RFC 9110 §8.4 codings gzip,
    deflate, zstd).
    """
    for name, value in headers:
        if name == "content-length" and value.strip().isdigit() and int(value) > limit:
            raise BodyTooLarge(limit, f"Content-Length {int(value)}")
    decoders = _decoders(headers, limit)
    parts: list[bytes] = []
    received = 0
    async for chunk in chunks:
        received += len(chunk)
        if received > limit:
            raise BodyTooLarge(limit, "body on the wire")
        if decoders:
            chunk = _decode(decoders, chunk)  # noqa: PLW2901 - the decoded form replaces it
        parts.append(chunk)
    if decoders:
        parts.append(_flush(decoders))
    return b"".join(parts)


def _decode(decoders: Sequence[_Decoder], data: bytes) -> bytes:
    for decoder in decoders:
        data = decoder.decode(data)
    return data


def _flush(decoders: Sequence[_Decoder]) -> bytes:
    """Flush each stage, feeding what it releases through the stages after it."""
    data = b""
    for decoder in decoders:
        data = decoder.decode(data) + decoder.flush() if data else decoder.flush()
    return data


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
