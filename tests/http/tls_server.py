"""A loopback TLS server speaking HTTP/2 (the h2 library's server state machine) or HTTP/1.1.

ALPN decides, as on the real registries: ``alpn=("h2", "http/1.1")`` lets the client pick
``h2``; ``alpn=("http/1.1",)`` keeps it on HTTP/1.1. The certificate is issued by a throwaway
``trustme`` CA for ``registry.test`` (and ``127.0.0.1``); ``trust`` points ``SSL_CERT_FILE``
at that CA, and ``resolve_to_loopback`` makes ``*.test`` names resolve to 127.0.0.1 while
counting the lookups. Everything it saw is counted for the assertions: connections, requests,
concurrent streams, client resets, GOAWAYs sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings
import pytest
import trustme

HOST = "registry.test"

# (path, request headers) → (status, response headers, body).
Answer = tuple[int, list[tuple[str, str]], bytes]
Handler = Callable[[str, dict[str, str]], Awaitable[Answer]]


async def ok(path: str, _headers: dict[str, str]) -> Answer:
    """Answer every path with its own name."""
    return 200, [("content-type", "text/plain")], path.encode()


@dataclass
class Seen:
    """What the server saw."""

    connections: int = 0
    closed: int = 0
    protocols: list[str | None] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    streams_in_flight: int = 0
    peak_streams_per_connection: int = 0
    resets: list[int] = field(default_factory=list)  # stream ids the client reset
    goaways: int = 0
    largest_frame: int = 0  # the largest DATA frame sent (the client's SETTINGS_MAX_FRAME_SIZE)


class TlsServer:
    """Serves ``handler`` over TLS on 127.0.0.1; see the module docstring for the knobs.

    ``max_streams`` is announced as ``SETTINGS_MAX_CONCURRENT_STREAMS``; ``goaway_after``
    sends GOAWAY (last stream id: the last one answered) on the first connection once it
    has answered that many requests, then closes it; ``refuse`` resets that many of the first
    streams with ``REFUSED_STREAM``; ``delay`` holds each answer that many seconds (so the
    requests are in flight together); ``drip`` sends bodies in 16 KiB DATA frames that many
    seconds apart (so a client can reset a stream before its end).
    """

    def __init__(
        self,
        ca: trustme.CA,
        handler: Handler = ok,
        *,
        alpn: tuple[str, ...] = ("h2", "http/1.1"),
        max_streams: int = 100,
        goaway_after: int | None = None,
        refuse: int = 0,
        delay: float = 0.0,
        drip: float = 0.0,
    ) -> None:
        self.handler = handler
        self.seen = Seen()
        self.max_streams = max_streams
        self.goaway_after = goaway_after
        self.refuse = refuse
        self.delay = delay
        self.drip = drip
        self._context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert(HOST, "127.0.0.1").configure_cert(self._context)
        self._context.set_alpn_protocols(list(alpn))
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def url(self) -> str:
        """The server's base URL, by name."""
        return f"https://{HOST}:{self.port}"

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self._context)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 1)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.seen.connections += 1
        index = self.seen.connections
        ssl_object = writer.get_extra_info("ssl_object")
        protocol = ssl_object.selected_alpn_protocol() if ssl_object is not None else None
        self.seen.protocols.append(protocol)
        try:
            if protocol == "h2":
                await _H2Session(self, reader, writer, first=index == 1).run()
            else:
                await self._serve_http11(reader, writer)
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError):
            pass
        finally:
            self.seen.closed += 1
            writer.close()

    async def _serve_http11(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                return
            lines = head.decode("latin-1").split("\r\n")
            path = lines[0].split(" ")[1]
            headers = {
                k.strip().lower(): v.strip()
                for k, _, v in (line.partition(":") for line in lines[1:] if line)
            }
            self.seen.requests.append(path)
            if self.delay:
                await asyncio.sleep(self.delay)
            status, extra, body = await self.handler(path, headers)
            out = [f"HTTP/1.1 {status} X", f"content-length: {len(body)}"]
            out += [f"{k}: {v}" for k, v in extra]
            writer.write(("\r\n".join(out) + "\r\n\r\n").encode() + body)
            await writer.drain()


class _H2Session:
    """One HTTP/2 connection on the server side."""

    def __init__(
        self,
        server: TlsServer,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        first: bool,
    ) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        self.first = first
        self.conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        )
        self.windows: dict[int, asyncio.Event] = {}
        self.in_flight = 0
        self.answered = 0
        self.gone = False

    def flush(self) -> None:
        data = self.conn.data_to_send()
        if data:
            self.writer.write(data)

    async def run(self) -> None:
        # In the first SETTINGS frame, as real servers announce it.
        self.conn.local_settings = h2.settings.Settings(
            client=False,
            initial_values={
                h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: self.server.max_streams
            },
        )
        self.conn.initiate_connection()
        self.flush()
        while not self.gone:
            data = await self.reader.read(65536)
            if not data:
                return
            try:
                events = self.conn.receive_data(data)
            except h2.exceptions.ProtocolError:
                self.flush()
                return
            for event in events:
                await self._on(event)
            self.flush()
            await self.writer.drain()

    async def _on(self, event: h2.events.Event) -> None:
        seen = self.server.seen
        if isinstance(event, h2.events.RequestReceived):
            headers = {str(k): str(v) for k, v in event.headers or []}
            stream_id = event.stream_id
            assert stream_id is not None
            if self.gone:
                return
            seen.requests.append(headers[":path"])
            if self.server.refuse > 0:
                self.server.refuse -= 1
                self.conn.reset_stream(stream_id, h2.errors.ErrorCodes.REFUSED_STREAM)
                return
            self.in_flight += 1
            seen.peak_streams_per_connection = max(seen.peak_streams_per_connection, self.in_flight)
            if self.server.delay or self.server.drip:
                task = asyncio.create_task(self._answer(stream_id, headers))
                self.server._tasks.add(task)
                task.add_done_callback(self.server._tasks.discard)
            else:
                await self._answer(stream_id, headers)
        elif isinstance(event, h2.events.StreamReset) and event.stream_id is not None:
            seen.resets.append(event.stream_id)
            self._wake(event.stream_id)
        elif isinstance(event, h2.events.WindowUpdated):
            for stream_id in list(self.windows):
                self._wake(stream_id)
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.gone = True

    def _wake(self, stream_id: int) -> None:
        waiter = self.windows.pop(stream_id, None)
        if waiter is not None:
            waiter.set()

    async def _answer(self, stream_id: int, headers: dict[str, str]) -> None:
        if self.server.delay:
            await asyncio.sleep(self.server.delay)
        status, extra, body = await self.server.handler(headers[":path"], headers)
        try:
            self.conn.send_headers(stream_id, [(":status", str(status)), *extra])
            await self._send_body(stream_id, body)
        except h2.exceptions.StreamClosedError:
            pass  # the client reset it
        finally:
            self.in_flight -= 1
        self.answered += 1
        self.flush()
        goaway = self.server.goaway_after
        if self.first and goaway is not None and self.answered == goaway:
            self.conn.close_connection(last_stream_id=stream_id)
            self.server.seen.goaways += 1
            self.gone = True
            self.flush()
            await self.writer.drain()
            self.writer.close()

    async def _send_body(self, stream_id: int, body: bytes) -> None:
        while True:
            room = min(
                self.conn.local_flow_control_window(stream_id), self.conn.max_outbound_frame_size
            )
            if room <= 0 and body:
                waiter = self.windows[stream_id] = asyncio.Event()
                self.flush()
                await waiter.wait()
                continue
            if self.server.drip:
                room = min(room, 16384)
            chunk, body = body[:room], body[room:]
            self.server.seen.largest_frame = max(self.server.seen.largest_frame, len(chunk))
            self.conn.send_data(stream_id, chunk, end_stream=not body)
            self.flush()
            await self.writer.drain()
            if not body:
                return
            if self.server.drip:
                await asyncio.sleep(self.server.drip)


def trust(ca: trustme.CA, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the client trust ``ca`` (``SSL_CERT_FILE``, read by httpx's TLS context)."""
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))


def resolve_to_loopback(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Resolve every ``*.test`` name to 127.0.0.1; return the lookups counted per host name.

    Patches the running loop's class ``getaddrinfo``, the call the transport's resolver makes
    (asyncio's own ``open_connection`` with a name would make it too).
    """
    counts: dict[str, int] = {}
    original = asyncio.BaseEventLoop.getaddrinfo

    async def getaddrinfo(self: asyncio.AbstractEventLoop, host: Any, port: Any, **kw: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        counts[name] = counts.get(name, 0) + 1
        if name.endswith(".test"):
            await asyncio.sleep(0.01)  # a real lookup takes a while: concurrent ones overlap
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", int(port)))]
        return await original(self, host, port, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", getaddrinfo)
    return counts


@contextlib.contextmanager
def serving_in_thread(server: TlsServer) -> Iterator[TlsServer]:
    """Run ``server`` on an event loop of its own thread (for a synchronous CLI run)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(server.__aenter__(), loop).result(5)
        try:
            yield server
        finally:
            asyncio.run_coroutine_threadsafe(server.__aexit__(), loop).result(5)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
