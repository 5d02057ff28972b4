"""The run's HTTP transport: per-origin connections over asyncio streams, HTTP/2 by ALPN.

httpcore speaks the protocols (h11 for HTTP/1.1, h2 for HTTP/2) and owns each connection's
state; this module decides which connection a request uses and how bytes move. A scan sends
thousands of small requests, and measured per request the generic layers cost more CPU than
the protocol itself: httpx's request/response models, httpcore's connection pool (it scans
every connection for every queued request) and the anyio stream adapter (a cancel scope per
read and write). So:

- ``PerHostPoolTransport`` keeps, per origin (scheme, host, port), its HTTP/2 connections
  (each carrying many streams) and a stack of idle HTTP/1.1 ``httpcore.AsyncHTTPConnection``
  objects (each used by one request at a time), and opens connections as requests need them
  (see its docstring); the fetcher's host limiter bounds how many requests run at once, and
  up to ``IDLE_CONNECTIONS_PER_HOST`` idle HTTP/1.1 connections are kept. ``get`` is the
  fetcher's lean path (raw headers in, status/headers/decoded body out);
  ``handle_async_request`` serves the same connections to an ``httpx.AsyncClient``.
- ``Resolver`` looks each host name up once per run (single-flight ``getaddrinfo``).
- ``AsyncioBackend`` is an httpcore network backend (httpcore's documented extension point,
  ``network_backend=``) on asyncio streams, with ``asyncio.timeout`` for the connect/read/write
  timeouts. patchula always runs on asyncio (``anyio.run``'s default).

Errors surface as httpx's exception classes (``httpx.ConnectError``, ``httpx.ReadTimeout`` …),
as from any httpx transport. Bodies are read incrementally and bounded (``read_body``): a
``Content-Length`` over the bound, more bytes than the bound on the wire, or content codings
(gzip, deflate, zstd; RFC 9110 §8.4) that decode to more than the bound raise ``BodyTooLarge``
as soon as it is known; an HTTP/1.1 connection is then closed, never reused, an HTTP/2 stream
reset. The status line and headers are bounded by httpcore itself: on HTTP/1.1 h11's
``max_incomplete_event_size``, which httpcore sets to 100 KiB, refuses a larger head; on
HTTP/2 hpack refuses a decoded header list over the 64 KiB that httpcore announces as
``SETTINGS_MAX_HEADER_LIST_SIZE`` (both ``httpx.RemoteProtocolError``), so their count is
bounded too. Redirects are not followed here: the fetcher follows them, each hop through its
own host's limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import socket
import ssl
import zlib
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Sequence
from typing import IO, Any, Protocol, cast

import anyio
import h2.settings
import httpcore
import httpx
import msgspec
import zstandard

from patchula.http import DEFAULT_MAX_BODY_BYTES
from patchula.http.bodies import BodyPool

__all__ = [
    "ACCEPT_ENCODING",
    "DEFAULT_MAX_BODY_BYTES",
    "IDLE_CONNECTIONS_PER_HOST",
    "KEEPALIVE_EXPIRY",
    "AsyncioBackend",
    "BodyTooLarge",
    "ConnectionListener",
    "HeadTooLarge",
    "PerHostPoolTransport",
    "RawResponse",
    "Resolver",
    "read_body",
]

IDLE_CONNECTIONS_PER_HOST = 32
# Seconds an idle connection is kept (httpx's default); older ones are closed, not reused.
KEEPALIVE_EXPIRY = 5.0
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


class _AsHttpxErrors:
    """Re-raise httpcore's exceptions as the matching httpx ``TransportError``.

    A class, not a ``contextlib.contextmanager`` generator: it wraps every request twice, and
    entering a generator-based one costs a generator and its frame each time.
    """

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, _tb: object
    ) -> None:
        if exc is None or not isinstance(exc, Exception):
            return  # success, or a cancellation (``BaseException``): passed on as it is
        cause = exc.args[0] if exc.args else None
        if isinstance(exc, httpcore.LocalProtocolError) and type(cause).__module__.startswith(
            "h2."
        ):
            # httpcore calls every h2 protocol error local; the h2 state machine raises them
            # on what the server sent (an oversized header list, a bad frame).
            raise httpx.RemoteProtocolError(str(exc)) from exc
        if _head_too_large(exc):
            raise HeadTooLarge(64 * 1024 if "Oversized" in str(exc) else 100 * 1024) from exc
        for source, target in _ERRORS:
            if isinstance(exc, source):
                raise target(str(exc)) from exc


def _head_too_large(exc: Exception) -> bool:
    """Whether ``exc`` is h11's or h2's refusal of a response head over its bound."""
    text = str(exc)
    return isinstance(exc, httpcore.ProtocolError) and (
        "Receive buffer too long" in text  # h11: max_incomplete_event_size (100 KiB)
        or "Oversized header block" in text  # h2/hpack: the 64 KiB header list
    )


# Stateless, so one instance serves every ``with``.
_as_httpx_errors = _AsHttpxErrors()


class RawResponse(msgspec.Struct, frozen=True):
    """A response read in full: final URL, lower-case header names, decoded body."""

    status: int
    url: str
    headers: tuple[tuple[str, str], ...]
    content: bytes


class PerHostPoolTransport(httpx.AsyncBaseTransport):
    """Connections per origin, opened as demand grows; HTTP/2 streams where ALPN offers ``h2``.

    Per origin (scheme, host, port):

    - The first request to an ``https`` origin whose protocol is not known yet opens one
      connection; requests arriving meanwhile wait for its TLS handshake (the ALPN answer,
      RFC 7301) instead of each opening a connection of their own.
    - When the server chose ``h2`` (RFC 9113), every request becomes a stream on that one
      connection, up to the server's ``SETTINGS_MAX_CONCURRENT_STREAMS`` (capped at httpcore's
      own 100); a second connection is opened only when those streams are all taken, or the
      connection goes away (GOAWAY, an error). The fetcher's host limiter then bounds streams.
    - When it chose ``http/1.1`` (or offered no ALPN), and always for plain ``http://`` (no
      h2c), each request takes the newest idle connection that the server has not closed and
      that is younger than ``KEEPALIVE_EXPIRY``, or opens a new one: one request per
      connection; up to ``IDLE_CONNECTIONS_PER_HOST`` idle ones are kept.

    A connection an HTTP/1.1 request failed on is closed, never reused. An HTTP/2 stream that
    fails (a reset, a body over the bound, a cancelled request) is reset (``RST_STREAM``,
    CANCEL) and its connection retired: it takes no new streams and is closed when its last
    stream ends. A request the server did not process, by RFC 9113 §8.7 (a stream above a
    GOAWAY's last stream id, or refused with ``REFUSED_STREAM``), is sent again at once — after
    a GOAWAY on another connection — and sent at most ``REPLAYS`` times in all (then
    ``httpx.RemoteProtocolError``, which the fetcher retries with back-off). Host names are
    resolved once per transport (the run) by ``Resolver``. TLS verification and the CA
    variables of the environment apply (``httpx.create_ssl_context(trust_env=True)``), on the
    host name (SNI and certificate).

    On HTTP/2, bytes that arrive for streams whose readers have not taken them yet wait in
    httpcore's buffers; flow control bounds them (httpcore opens 16 MiB windows per connection
    and per stream, and acknowledges bytes only as they are read), so a connection holds at
    most about 16 MiB that nobody asked for yet, besides each body's own ``read_body`` bound.

    ``listener`` (optional) hears of each connection: ``connection_opened(host)`` when TCP is
    up, ``protocol_negotiated(host, protocol, tls)`` when its protocol is known (``"h2"`` or
    ``"http/1.1"``; ``tls`` says whether a TLS handshake completed); ``host`` is a host key
    (lower-case host, ``:port`` when not the scheme's default).
    """

    def __init__(self, resolver: Resolver | None = None) -> None:
        self._pools: dict[tuple[bytes, bytes, int], _Pool] = {}
        self._open: set[_Link] = set()
        self.resolver = resolver if resolver is not None else Resolver()
        # Connects every connection of the run, and those of the client's proxy mounts.
        self.backend = AsyncioBackend(self.resolver)
        self.listener: ConnectionListener | None = None
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
        pool: BodyPool | None = None,
    ) -> RawResponse:
        """GET ``url`` with ``headers`` (sent as given, plus ``Host``); redirects are returned.

        ``method`` ``HEAD`` reads no body (``content`` is empty, whatever ``Content-Length``
        announces: RFC 9110 §9.3.2); ``body`` is sent as the request content with its
        ``Content-Length`` (a ``POST``).

        ``timeouts`` maps ``connect``/``read``/``write``/``pool`` to seconds (httpx's
        ``Timeout.as_dict()``). ``on_head`` is called with the status code as soon as the
        status line and headers have arrived, before the body is read (httpx's ``response``
        event hook does the same): the server has answered then, even when the body never
        completes. The body is read incrementally, bounded by ``max_body_bytes`` and counted
        in ``pool`` (see ``read_body``). Raises httpx's ``TransportError`` subclasses on
        network and protocol failures, ``httpx.DecodingError`` on a body that does not decode
        and ``BodyTooLarge`` over the bound (an HTTP/1.1 connection is then closed, an HTTP/2
        stream reset).
        """
        scheme, host, port, netloc, target = _parts(url)
        sized = (
            [(b"Content-Length", str(len(body)).encode("ascii"))]
            if body is not None and not any(k.lower() == "content-length" for k, _ in headers)
            else []
        )
        request = httpcore.Request(
            method.encode("ascii"),
            httpcore.URL(scheme=scheme, host=host, port=port, target=target),
            headers=[
                (b"Host", netloc),
                *[(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers],
                *sized,
            ],
            content=body,
            extensions={"timeout": timeouts},
        )
        link, response = await self._send(request)
        try:
            with _as_httpx_errors:
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
                        raise TypeError(msg)  # noqa: TRY301 - reset like any failure
                    content = (
                        b""
                        if method == "HEAD"
                        else await read_body(stream, names, max_body_bytes, pool)
                    )
                except BaseException:
                    await _reset_stream(link, response, request)
                    raise
                finally:
                    await response.aclose()
        except BaseException as exc:
            await self._release(link, failed=True, error=exc)
            raise
        await self._release(link)
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
        link, response = await self._send(core)
        stream = response.stream
        if not isinstance(stream, AsyncIterable):  # pragma: no cover - httpcore contract
            await self._release(link)
            msg = "httpcore returned a synchronous stream to an async request"
            raise TypeError(msg)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ReleasingStream(stream, self, link, response, core),
            extensions=response.extensions,
        )

    async def _send(self, request: httpcore.Request) -> tuple[_Link, httpcore.Response]:
        """Send ``request`` on a connection of its origin; return it with the response head.

        A request the server did not process (see the class docstring) is sent again on
        another connection; other failures release the connection as failed and raise.
        """
        origin = request.url.origin
        for _ in range(REPLAYS):
            link = await self._checkout(origin)
            try:
                with _as_httpx_errors:
                    try:
                        response = await link.core.handle_async_request(request)
                        if not link.tuned:
                            if link.protocol == H2:
                                await _tune(link, request)
                            else:  # HTTP/1.1: its state lock exists once it has sent
                                link.tuned = True
                                _fast_lock(getattr(link.core, "_connection", None), "_state_lock")
                        return link, response  # noqa: TRY300 - the except clauses replay
                    except httpcore.ConnectionNotAvailable:
                        # Above a GOAWAY's last stream id, or the connection closed first.
                        pass
                    except httpcore.RemoteProtocolError as exc:
                        if not _refused(exc):
                            raise
                        # REFUSED_STREAM: the server is at its limit; this connection stays.
                        await self._release(link)
                        continue
            except BaseException as exc:
                await self._release(link, failed=True, error=exc)
                raise
            await self._release(link, failed=True)
        msg = f"{origin} did not process the request on {REPLAYS} connections in a row"
        raise httpx.RemoteProtocolError(msg)

    def _pool(self, origin: httpcore.Origin) -> _Pool:
        key = (origin.scheme, origin.host, origin.port)
        pool = self._pools.get(key)
        if pool is None:
            default = {b"http": 80, b"https": 443}.get(origin.scheme)
            host = origin.host.decode("ascii").lower()
            name = host + (f":{origin.port}" if origin.port != default else "")
            pool = self._pools[key] = _Pool(origin, name, https=origin.scheme == b"https")
        return pool

    async def _checkout(self, origin: httpcore.Origin) -> _Link:
        pool = self._pool(origin)
        while True:
            if not pool.https or pool.protocol == HTTP11:
                while pool.idle:
                    link = pool.idle.pop()
                    if not link.core.is_closed() and not link.core.has_expired():
                        link.streams = 1
                        return link
                    await self._drop(link)
                return self._new_link(pool)
            # HTTP/2, or not known yet: a stream on an open connection with room for one.
            for link in list(pool.h2):
                if link.retired or not link.core.is_available():
                    if link.streams == 0:
                        await self._drop(link)
                    continue
                if link.streams == 0 and link.core.has_expired():
                    await self._drop(link)
                    continue
                if link.streams < _stream_capacity(link):
                    link.streams += 1
                    return link
            if pool.handshake is not None:
                await pool.handshake.wait()
                continue
            link = self._new_link(pool)
            pool.handshake = _Handshake(link)
            return link

    def _new_link(self, pool: _Pool) -> _Link:
        ssl_context = None
        if pool.https:
            if self._ssl is None:
                self._ssl = httpx.create_ssl_context(trust_env=True)
            ssl_context = self._ssl
        link = _Link(pool)
        link.core = httpcore.AsyncHTTPConnection(
            pool.origin,
            ssl_context=ssl_context,
            keepalive_expiry=KEEPALIVE_EXPIRY,
            http2=pool.https,
            network_backend=_LinkBackend(self.backend, self, link),
        )
        _fast_lock(link.core, "_request_lock")
        self._open.add(link)
        return link

    def _opened(self, link: _Link) -> None:
        """TCP is up for ``link`` (called by its backend)."""
        if self.listener is not None:
            self.listener.connection_opened(link.pool.name)
        if not link.pool.https:
            self._negotiated(link, HTTP11, tls=False)

    def _negotiated(self, link: _Link, protocol: str, *, tls: bool) -> None:
        """``link`` speaks ``protocol``: waiters for its handshake may go on."""
        pool = link.pool
        link.protocol = pool.protocol = protocol
        if protocol == H2:
            pool.h2.append(link)
        if self.listener is not None:
            self.listener.protocol_negotiated(pool.name, protocol, tls=tls)
        self._end_handshake(link, None)

    def _end_handshake(self, link: _Link, error: BaseException | None) -> None:
        handshake = link.pool.handshake
        if handshake is not None and handshake.link is link:
            link.pool.handshake = None
            handshake.finish(error)

    async def _release(
        self, link: _Link, *, failed: bool = False, error: BaseException | None = None
    ) -> None:
        """Hand ``link`` back after a request; ``failed`` closes or retires it (class doc).

        ``error`` is what the request failed with, shared with the requests waiting for the
        handshake of ``link`` when it was a failure to connect.
        """
        pool = link.pool
        if pool.handshake is not None and pool.handshake.link is link:
            # The request ended before a handshake was seen (it failed to connect, or a test
            # double answered it): its waiters learn of the failure, or go on as HTTP/1.1.
            if not failed and pool.protocol is None:
                pool.protocol = HTTP11
            self._end_handshake(link, error)
        link.streams = max(0, link.streams - 1)
        if link.protocol == H2:
            if failed:
                link.retired = True
            if link.streams == 0 and (link.retired or not link.core.is_available()):
                await self._drop(link)
            return
        if failed:
            await self._drop(link)
            return
        pool.returned = True
        if len(pool.idle) < IDLE_CONNECTIONS_PER_HOST and not link.core.is_closed():
            pool.idle.append(link)
            return
        await self._drop(link)

    async def _drop(self, link: _Link) -> None:
        with contextlib.suppress(ValueError):
            link.pool.h2.remove(link)
        self._open.discard(link)
        await _discard(link.core)

    def idle_connections(self) -> dict[str, int]:
        """Return the number of idle keep-alive connections per origin (``scheme://host:port``).

        The port is left out when it is the scheme's default. HTTP/2 connections with no
        stream open count as idle. Origins no connection was handed back to are left out.
        """
        counts: dict[str, int] = {}
        for (scheme, host, port), pool in self._pools.items():
            if not pool.returned and not pool.h2:
                continue
            default = {b"http": 80, b"https": 443}.get(scheme)
            name = f"{scheme.decode()}://{host.decode()}" + (f":{port}" if port != default else "")
            h2_idle = sum(1 for link in pool.h2 if link.streams == 0 and not link.core.is_closed())
            counts[name] = len(pool.idle) + h2_idle
        return counts

    async def aclose(self) -> None:
        """Close every connection."""
        for link in list(self._open):
            await _discard(link.core)
        self._open.clear()
        self._pools.clear()


# Characters httpx leaves as they are in a path and a query (RFC 3986 ``pchar``, "/" and
# "?"): no "%" (httpx re-encodes a malformed escape), "#", spaces or non-ASCII.
_PLAIN_TARGET = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?]*")


def _parts(url: str) -> tuple[bytes, bytes, int | None, bytes, bytes]:
    """``(scheme, host, port, netloc, target)`` of ``url``, exactly as ``httpx.URL`` gives them.

    A scan sends thousands of requests to a handful of origins: the origin is parsed once
    (``_origin_parts``) and a plain target (``_PLAIN_TARGET``, no dot segment to remove) is
    taken as it is, instead of parsing every URL in full (measured: 5 % of the event loop's
    CPU). Anything else (user info, escapes, dot segments, no path) goes through ``httpx.URL``.
    """
    start = url.find("://") + 3
    slash = url.find("/", start) if start > 2 else -1  # noqa: PLR2004 - "://" was found
    if slash > start:
        origin, target = url[:slash], url[slash:]
        if "@" not in origin and "/." not in target and _PLAIN_TARGET.fullmatch(target):
            scheme, host, port, netloc = _origin_parts(origin)
            return scheme, host, port, netloc, target.encode("ascii")
    parsed = httpx.URL(url)
    return parsed.raw_scheme, parsed.raw_host, parsed.port, parsed.netloc, parsed.raw_path


@functools.lru_cache(maxsize=256)
def _origin_parts(origin: str) -> tuple[bytes, bytes, int | None, bytes]:
    """``(scheme, host, port, netloc)`` of ``scheme://authority`` (``httpx.URL``'s forms)."""
    parsed = httpx.URL(origin + "/")
    return parsed.raw_scheme, parsed.raw_host, parsed.port, parsed.netloc


HTTP11 = "http/1.1"
H2 = "h2"
# Sends of one request on fresh connections when the server did not process it (RFC 9113
# §8.7): a server that keeps refusing is failing, and the fetcher's retries take over.
REPLAYS = 3
# httpcore's own SETTINGS_MAX_CONCURRENT_STREAMS: streams beyond it would wait inside httpcore.
_MAX_STREAMS = 100
# Largest HTTP/2 DATA frame the server may send (RFC 9113 allows 16 KiB to 16 MiB), and the
# bytes read from the socket at once (httpcore reads 64 KiB).
_H2_MAX_FRAME = 1 << 20
_H2_READ_BYTES = 1 << 20
# RFC 9113 §7 error codes.
_REFUSED_STREAM = 0x7
_CANCEL = 0x8


class ConnectionListener(Protocol):
    """Hears of the connections a ``PerHostPoolTransport`` opens (see its docstring)."""

    def connection_opened(self, host: str) -> None:
        """A TCP connection to ``host`` is up."""

    def protocol_negotiated(self, host: str, protocol: str, *, tls: bool) -> None:
        """A connection to ``host`` speaks ``protocol``; ``tls``: after a TLS handshake."""


class _Handshake:
    """The first connection of an origin being opened; requests that arrive meanwhile wait.

    A failure to connect is shared by those waiting (each raises a copy); the next request
    after it tries again.
    """

    __slots__ = ("_error", "_event", "link")

    def __init__(self, link: _Link) -> None:
        self.link = link
        self._event = anyio.Event()
        self._error: BaseException | None = None

    def finish(self, error: BaseException | None) -> None:
        self._error = error
        self._event.set()

    async def wait(self) -> None:
        await self._event.wait()
        error = self._error
        if isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout)):
            raise type(error)(str(error))
        # No error, or the opener was cancelled or failed otherwise: look again.


class _Pool:
    """The connections of one origin, and what its server speaks."""

    __slots__ = ("h2", "handshake", "https", "idle", "name", "origin", "protocol", "returned")

    def __init__(self, origin: httpcore.Origin, name: str, *, https: bool) -> None:
        self.origin = origin
        self.name = name
        self.https = https
        # The protocol of the last connection negotiated; None before the first one.
        self.protocol: str | None = None
        self.idle: list[_Link] = []
        self.h2: list[_Link] = []
        self.handshake: _Handshake | None = None
        self.returned = False  # an HTTP/1.1 connection was handed back once


class _Link:
    """One connection with its origin's pool, its protocol and the requests on it."""

    __slots__ = ("core", "pool", "protocol", "retired", "streams", "tuned")

    def __init__(self, pool: _Pool) -> None:
        self.pool = pool
        self.core: httpcore.AsyncHTTPConnection
        self.protocol: str | None = None
        self.streams = 1
        self.retired = False
        self.tuned = False  # HTTP/2: larger frames and reads asked for (``_tune``)


def _stream_capacity(link: _Link) -> int:
    """Streams ``link`` may carry at once: the server's ``SETTINGS_MAX_CONCURRENT_STREAMS``.

    Read from httpcore's h2 state (not public); 100 (httpcore's own bound) until it is known.
    """
    connection = getattr(link.core, "_connection", None)
    state = getattr(connection, "_h2_state", None)
    remote = getattr(getattr(state, "remote_settings", None), "max_concurrent_streams", None)
    if not isinstance(remote, int):
        return _MAX_STREAMS
    return max(1, min(remote, _MAX_STREAMS))


async def _tune(link: _Link, request: httpcore.Request) -> None:
    """Let the server send HTTP/2 DATA frames of up to ``_H2_MAX_FRAME`` bytes; read 1 MiB at once.

    httpcore announces the default 16 KiB frames, and h2 costs Python time per frame (parse,
    flow-control acknowledgement, a lock per write): measured on the npm registry, 22 MB of
    packuments arrive in 1,387 frames and HTTP/2 took 3x the CPU of HTTP/1.1. The registries
    send larger frames when allowed (RFC 9113 §6.5.2 SETTINGS_MAX_FRAME_SIZE; h2 accepts them
    once the server has acknowledged). Asked once per connection, after its first request
    (httpcore sends its own SETTINGS with it).
    """
    link.tuned = True
    connection = getattr(link.core, "_connection", None)
    state = getattr(connection, "_h2_state", None)
    if connection is None or state is None:
        return
    connection.READ_NUM_BYTES = _H2_READ_BYTES
    with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
        state.update_settings({h2.settings.SettingCodes.MAX_FRAME_SIZE: _H2_MAX_FRAME})
        # Accepted from now on, not only from the server's acknowledgement: h2 applies the new
        # limit between reads, so a large frame read together with the ACK would be refused.
        state.max_inbound_frame_size = _H2_MAX_FRAME
        await connection._write_outgoing_data(request)  # noqa: SLF001


def _fast_lock(owner: object, name: str) -> None:
    """Give ``owner``'s httpcore lock ``name`` an anyio lock that does not yield when free.

    httpcore takes a connection's locks three times per HTTP/1.1 request, and anyio's default
    lock yields to the event loop on every uncontended acquire (a loop turn each, 2 % of a
    scan's CPU). A connection here carries one HTTP/1.1 request at a time, so its locks are
    never contended; ``fast_acquire`` keeps the lock's semantics, cancellation checks
    included, without the extra turn. A lock of another shape (another httpcore) is left alone.
    """
    lock = getattr(owner, name, None)
    if lock is None or getattr(lock, "_backend", None) not in {"", "asyncio"}:
        return
    lock._backend = "asyncio"  # noqa: SLF001 - httpcore's lock; patchula runs on asyncio
    lock._anyio_lock = anyio.Lock(fast_acquire=True)  # noqa: SLF001


def _refused(exc: httpcore.RemoteProtocolError) -> bool:
    """Whether ``exc`` is an HTTP/2 stream reset with ``REFUSED_STREAM`` (not processed)."""
    event = exc.args[0] if exc.args else None
    return getattr(event, "error_code", None) == _REFUSED_STREAM and hasattr(event, "stream_id")


async def _reset_stream(
    link: _Link, response: httpcore.Response, request: httpcore.Request
) -> None:
    """Reset the HTTP/2 stream of ``response`` (CANCEL), so the server stops sending it.

    httpcore closes a stream without telling the server; the server would go on sending a
    body nobody reads. Does nothing on HTTP/1.1 (closing the connection stops it there) or
    when the stream has already ended.
    """
    stream_id = response.extensions.get("stream_id")
    connection = getattr(link.core, "_connection", None)
    state = getattr(connection, "_h2_state", None)
    if link.protocol != H2 or not isinstance(stream_id, int) or state is None:
        return
    link.retired = True
    with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
        state.reset_stream(stream_id, error_code=_CANCEL)
        await connection._write_outgoing_data(request)  # type: ignore[union-attr]  # noqa: SLF001


class BodyTooLarge(Exception):  # noqa: N818 - names the outcome, like RateLimited
    """A response body over the size bound; ``what`` says which measure passed ``limit`` bytes."""

    def __init__(self, limit: int, what: str) -> None:
        super().__init__(f"{what} over the {_size(limit)} limit")
        self.limit = limit
        self.what = what


class HeadTooLarge(BodyTooLarge):
    """A response's status line and headers over httpcore's bound: an answer not to read.

    ``limit`` is 100 KiB on HTTP/1.1 (h11's ``max_incomplete_event_size``), 64 KiB of decoded
    header list on HTTP/2; the message says "header over the 100 KiB limit", not
    "unreachable": the server did answer. Not retried, as a body over its bound is not.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(limit, "header")


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
    chunks: AsyncIterable[bytes],
    headers: Sequence[tuple[str, str]],
    limit: int,
    pool: BodyPool | None = None,
) -> bytes:
    """Read a response body from ``chunks`` and decode its content codings, within ``limit``.

    ``headers`` are the response's (lower-case names). ``limit`` bounds, in bytes, the
    announced ``Content-Length`` (refused before any body is read), the bytes read from the
    wire and the output of every decoding stage (checked per step, so a compression bomb stops
    at the bound plus one step). Raises ``BodyTooLarge`` past the bound and
    ``httpx.DecodingError`` on a body that does not decode (RFC 9110 §8.4 codings gzip,
    deflate, zstd). With ``pool``, the decoded bytes held count in the run-wide pool while the
    body is read (waiting for room there: ``bodies.BodyPool``); a coded body is decoded
    ``_DECODE_SLICE`` bytes of wire at a time, so what one step holds before it is counted
    stays small (about 4 MiB of gzip).
    """
    for name, value in headers:
        if name == "content-length" and value.strip().isdigit() and int(value) > limit:
            raise BodyTooLarge(limit, f"Content-Length {int(value)}")
    decoders = _decoders(headers, limit)
    claim = pool.claim() if pool is not None else None
    parts: list[bytes] = []
    received = 0
    try:
        async for chunk in chunks:
            received += len(chunk)
            if received > limit:
                raise BodyTooLarge(limit, "body on the wire")
            if not decoders:
                if claim is not None:
                    await claim.take(len(chunk))
                parts.append(chunk)
                continue
            for start in range(0, len(chunk), _DECODE_SLICE):
                piece = _decode(decoders, chunk[start : start + _DECODE_SLICE])
                if claim is not None:
                    await claim.take(len(piece))
                parts.append(piece)
        if decoders:
            parts.append(_flush(decoders))
        return b"".join(parts)
    finally:
        # Dropped now, not with this frame: a ``BodyTooLarge`` (or a cancellation) keeps the
        # frame alive in its traceback, chained into the lookup's error for the rest of the
        # run, and with it every part read (16 refused bodies held 4 GiB that way).
        parts.clear()
        if claim is not None:
            claim.release()


# Wire bytes per decoding step of a coded body: deflate expands at most about 1032:1, so one
# step of a gzip bomb holds about 4 MiB before the pool counts it.
_DECODE_SLICE = 4096


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
    """A response body for httpx that hands its connection back when closed.

    A body closed before its end resets an HTTP/2 stream (``_reset_stream``); an HTTP/1.1
    connection left mid-body is closed by httpcore.
    """

    def __init__(
        self,
        stream: AsyncIterable[bytes],
        transport: PerHostPoolTransport,
        link: _Link,
        response: httpcore.Response,
        request: httpcore.Request,
    ) -> None:
        self._stream = stream
        self._transport = transport
        self._link: _Link | None = link
        self._response = response
        self._request = request
        self._complete = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors:
            async for chunk in self._stream:
                yield chunk
        self._complete = True

    async def aclose(self) -> None:
        link, self._link = self._link, None
        try:
            if link is not None and not self._complete:
                await _reset_stream(link, self._response, self._request)
            close = getattr(self._stream, "aclose", None)
            if close is not None:
                with _as_httpx_errors:
                    await close()
        finally:
            if link is not None:
                failed = not self._complete and link.protocol == H2
                await self._transport._release(link, failed=failed)  # noqa: SLF001


# One resolved address, as ``getaddrinfo`` gives it: (family, type, proto, canonname, sockaddr).
Address = tuple[int, int, int, str, tuple[Any, ...]]


class Resolver:
    """Resolve each (host, port) once per run; concurrent lookups share one ``getaddrinfo``.

    A run talks to a handful of hosts through dozens of connections; a lookup per connection
    (asyncio's ``open_connection`` does one each time) sends dozens of identical queries at
    once, and a resolver that answers a burst of about 25 stalls the rest for seconds. Here
    the first connect to a host asks ``loop.getaddrinfo`` (the system resolver, in asyncio's
    thread pool) and every other connect to it, concurrent or later, gets the same answer:
    the addresses in the order the system gives them (its RFC 6724 preference, IPv6 and IPv4
    alike). Answers are kept for the transport's life (one run: minutes, not a record's TTL).
    A failed lookup is shared by the connects waiting for it, and not kept: the next connect
    asks again. ``lookups`` counts the ``getaddrinfo`` calls per host.
    """

    def __init__(self) -> None:
        self._answers: dict[tuple[str, int], list[Address]] = {}
        self._pending: dict[tuple[str, int], asyncio.Task[list[Address]]] = {}
        self.lookups: dict[str, int] = {}

    async def resolve(self, host: str, port: int) -> list[Address]:
        """Return the addresses of ``host`` for TCP ``port``; raises ``OSError`` (gaierror)."""
        key = (host, port)
        answer = self._answers.get(key)
        if answer is not None:
            return answer
        task = self._pending.get(key)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._lookup(key))
            # Retrieved here too, so a lookup whose waiters were all cancelled never logs
            # "exception was never retrieved".
            task.add_done_callback(_retrieve)
            self._pending[key] = task
        # Shielded: one waiter's cancellation (its deadline) must not cancel the others' lookup.
        return await asyncio.shield(task)

    async def _lookup(self, key: tuple[str, int]) -> list[Address]:
        host, port = key
        self.lookups[host] = self.lookups.get(host, 0) + 1
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM
            )
        finally:
            del self._pending[key]
        if not infos:
            msg = f"no address for {host}"
            raise OSError(msg)
        answer: list[Address] = [
            (family, type_, proto, canonname, tuple(sockaddr))
            for family, type_, proto, canonname, sockaddr in infos
        ]
        self._answers[key] = answer
        return answer


def _retrieve(task: asyncio.Task[list[Address]]) -> None:
    if not task.cancelled():
        task.exception()


async def _connect_first(
    addresses: Sequence[Address], local_address: str | None
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect to the first of ``addresses`` that accepts, in order; raise the last ``OSError``.

    Like asyncio's own ``create_connection`` without Happy Eyeballs: one address at a time.
    """
    loop = asyncio.get_running_loop()
    errors: list[OSError] = []
    for family, type_, proto, _, address in addresses:
        sock = socket.socket(family, type_, proto)
        try:
            sock.setblocking(False)  # noqa: FBT003 - the socket API
            if local_address:
                sock.bind((local_address, 0))
            await loop.sock_connect(sock, address)
        except OSError as exc:
            sock.close()
            errors.append(exc)
            continue
        except BaseException:
            sock.close()
            raise
        try:
            return await asyncio.open_connection(sock=sock)
        except BaseException:  # cancelled or timed out while the stream was being made
            sock.close()
            raise
    if len({str(e) for e in errors}) == 1:
        raise errors[0]
    msg = "; ".join(str(e) for e in errors)
    raise OSError(msg)


class _AsyncioStream(httpcore.AsyncNetworkStream):
    """One TCP (optionally TLS) connection as asyncio streams, in httpcore's stream interface."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        # Told the ALPN answer (None: none) when a TLS handshake completes.
        self.on_tls: Callable[[str | None], None] | None = None

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
        """Close the connection without waiting for the peer.

        ``abort``, not ``close``: a TLS transport's ``close`` waits for the peer's close_notify
        (up to 30 s) before it closes the socket, so connections closed as a run ends would
        outlive its event loop, unclosed. HTTP needs no close_notify (RFC 9110 §9.6).
        """
        self._writer.transport.abort()

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
            self._writer.transport.abort()
            raise httpcore.ConnectTimeout(str(exc) or "TLS handshake timed out") from exc
        except (OSError, ssl.SSLError) as exc:
            self._writer.transport.abort()
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        except BaseException:  # cancelled mid-handshake: httpcore never sees this stream again
            self._writer.transport.abort()
            raise
        if self.on_tls is not None:
            ssl_object = self._writer.get_extra_info("ssl_object")
            self.on_tls(ssl_object.selected_alpn_protocol() if ssl_object is not None else None)
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
    """httpcore network backend on asyncio streams (TCP only; no Unix sockets).

    Host names are resolved by ``resolver`` (once per run; a fresh ``Resolver`` by default).
    """

    def __init__(self, resolver: Resolver | None = None) -> None:
        self.resolver = resolver if resolver is not None else Resolver()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> _AsyncioStream:
        """Open a TCP connection within ``timeout`` seconds (the lookup included).

        The addresses of ``host`` are tried in the resolver's order; TLS, if any, is started
        later on the host name (``start_tls``), never on an address.
        """
        try:
            async with asyncio.timeout(timeout):
                addresses = await self.resolver.resolve(host, port)
                reader, writer = await _connect_first(addresses, local_address)
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


class _LinkBackend(httpcore.AsyncNetworkBackend):
    """The shared backend as one connection sees it: tells the pool it is up, and its protocol."""

    def __init__(
        self, backend: AsyncioBackend, transport: PerHostPoolTransport, link: _Link
    ) -> None:
        self._backend = backend
        self._transport = transport
        self._link = link

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Connect through the shared backend; report the connection and its handshake."""
        stream = await self._backend.connect_tcp(host, port, timeout, local_address, socket_options)
        transport, link = self._transport, self._link
        stream.on_tls = lambda alpn: transport._negotiated(  # noqa: SLF001 - its pool
            link, H2 if alpn == H2 else HTTP11, tls=True
        )
        transport._opened(link)  # noqa: SLF001
        return stream

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Not used by patchula (see ``AsyncioBackend``)."""
        return await self._backend.connect_unix_socket(path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        """Sleep ``seconds`` on the running loop."""
        await asyncio.sleep(seconds)
