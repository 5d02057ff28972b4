"""One virtual host of the fake registry: a threaded loopback HTTP/1.1 server with knobs and stats.

Every request runs in its own thread, so per-request latency never serialises other requests.
"""

from __future__ import annotations

import functools
import hashlib
import json
import select
import threading
import time
import traceback
import zlib
from collections import Counter, deque
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import formatdate, parsedate_to_datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, NamedTuple, cast
from urllib.parse import parse_qs, unquote

EPOCH = datetime(2020, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Request:
    """What a protocol handler sees: ``path`` keeps its percent-encoding, headers are lower-case."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def arg(self, name: str) -> str | None:
        """The first value of query parameter ``name``, or None."""
        values = self.query.get(name)
        return values[0] if values else None


@dataclass
class Reply:
    """A response; ``etag`` overrides the body-hash ETag (OCI uses the digest)."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    etag: str | None = None


Handler = Callable[[Request], Reply]


class LogEntry(NamedTuple):
    """One handled request; ``status`` is 0 for a reset connection."""

    time: float
    host: str
    method: str
    path: str
    status: int


FaultKind = Literal[
    "fail", "reset", "truncate", "drip", "slow_headers", "huge", "gzip_bomb", "silent", "redirect"
]
# Bytes per write of a streamed huge body, and the longest a misbehaving answer sleeps at once
# before looking at the stop flag (so server threads end soon after the test).
_HUGE_CHUNK = 64 * 1024
_STOP_POLL = 0.05


@dataclass(frozen=True)
class _Fault:
    kind: FaultKind
    status: int = 0
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    rate: float = 0.0  # drip: body bytes per second
    delay: float = 0.0  # slow_headers: seconds before each byte of the head
    size: int = 0  # huge: body bytes; gzip_bomb: inflated bytes
    announce: bool = True  # huge: send Content-Length (else a close-delimited body)
    route: str | None = None  # only requests to this route ("GET /path") meet the fault


def json_reply(obj: object, status: int = 200, content_type: str = "application/json") -> Reply:
    """A compact JSON reply."""
    return Reply(status, json.dumps(obj, separators=(",", ":")).encode(), content_type)


def text_reply(text: str, status: int = 200, content_type: str = "text/plain") -> Reply:
    """A plain-text reply."""
    return Reply(status, text.encode(), content_type)


def redirect(location: str) -> Reply:
    """A 301 to ``location``."""
    return Reply(301, b"", "text/plain", {"Location": location})


def iso(moment: datetime, timespec: str = "seconds") -> str:
    """UTC ISO-8601 with a ``Z`` suffix; naive datetimes are taken as UTC."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec=timespec).replace("+00:00", "Z")


def http_date(moment: datetime) -> str:
    """An RFC 9110 HTTP-date, e.g. for a ``Retry-After`` header."""
    return formatdate(moment.timestamp(), usegmt=True)


def digest(text: str, algorithm: str = "sha256") -> str:
    """A stable fake checksum derived from ``text``."""
    return hashlib.new(algorithm, text.encode()).hexdigest()


def reasons(given: Mapping[str, str | None] | Collection[str] | None) -> dict[str, str | None]:
    """Normalise a yank/retract/deprecate argument: a set of versions or version → reason."""
    if given is None:
        return {}
    if isinstance(given, Mapping):
        return dict(given)
    return dict.fromkeys(given)


def semver_key(version: str) -> tuple[tuple[int, ...], int, tuple[tuple[int, int, str], ...]]:
    """Semver 2.0 precedence (a leading ``v`` and ``+build`` ignored) for sorting.

    A number of more than 100 digits counts as 0 (hostile fixtures; ``int()`` refuses 4,300).
    """
    core, _, pre = version.removeprefix("v").split("+")[0].partition("-")
    numbers = [int(p) if p.isdigit() and len(p) <= 100 else 0 for p in core.split(".")]
    triple = tuple([*numbers, 0, 0, 0][:3])
    if not pre:
        return triple, 1, ()
    ids = tuple(
        (0, int(p), "") if p.isdigit() and len(p) <= 100 else (1, 0, p) for p in pre.split(".")
    )
    return triple, 0, ids


def is_prerelease(version: str) -> bool:
    """Whether a semver version has a pre-release part."""
    return "-" in version.split("+", maxsplit=1)[0]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # bursts of 64+ connects must not overflow the listen backlog

    def __init__(self, vhost: VirtualHost, port: int) -> None:
        self.vhost = vhost
        super().__init__(("127.0.0.1", port), _RequestHandler)

    def handle_error(self, request: object, client_address: object) -> None:
        """Stay quiet on connection-level errors (a client gone mid-read)."""


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, keep-alive clients would wait for
    # a delayed ACK (about 40 ms on Linux) on every response.
    disable_nagle_algorithm = True
    server_version = "fake-registry/1"
    sys_version = ""
    timeout = 60

    def do_GET(self) -> None:
        cast("_Server", self.server).vhost.serve(self)

    do_HEAD = do_POST = do_PUT = do_DELETE = do_GET  # noqa: N815 - http.server names

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Stay quiet: the host keeps its own log."""


def _unrouted(_request: Request) -> Reply:
    return text_reply("no handler", 404)


class VirtualHost:
    """One protocol on its own 127.0.0.1 port, with fault knobs and request statistics.

    Knobs (plain attributes, safe to change while serving): ``latency`` seconds slept before each
    answer; ``cache_control`` header value on 200/304 (None omits it), overridable per route in
    ``cache_control_overrides``; ``validators`` toggles ETag/Last-Modified and 304 handling;
    ``redirects`` maps a route (``"GET /path"``) to a ``Location`` answered with 302 every time
    (two routes pointing at each other make a loop).

    Fault knobs, each for the next ``n`` requests — or, with ``route="GET /path"``, the next
    ``n`` requests to that route: ``fail_next`` / ``server_error_next`` (a status),
    ``reset_next`` (close without an answer), ``truncate_next`` (a body shorter than its
    Content-Length), ``drip_next(n, bytes_per_second)`` (the real answer, its body sent that
    slowly), ``slow_headers_next(n, delay)`` (the status line and headers a byte every
    ``delay`` seconds), ``huge_next(n, size, announce=True)`` (a body of ``size`` zero bytes
    streamed without building it; ``announce=False`` leaves out Content-Length and closes),
    ``gzip_bomb_next(n, inflated_size)`` (a small ``Content-Encoding: gzip`` body inflating to
    ``inflated_size`` bytes), ``silent_next(n)`` (read the request, never answer until the
    client hangs up) and ``redirect_next(n, location, status=302)``. Slow answers check a stop
    flag at least every 50 ms, so ``stop()`` ends them.

    Statistics (updated under ``lock``; copy them under it while traffic is still running):
    ``requests``, ``requests_by_route`` (Counter of ``"<METHOD> <percent-decoded path>"`` without
    the query, e.g. ``"GET /@types/node"``), ``peak_concurrency`` (most requests in the server at
    once; ``peak_by_route`` per route; ``in_flight`` now), ``log`` (:class:`LogEntry` list;
    ``path`` keeps the query), ``not_modified`` (304s),
    ``injected_failures`` (fail/reset/truncate knobs used) and ``authorized_requests`` (requests
    carrying ``Authorization``, whose value is never kept; ``authorized_routes`` counts them
    per route). ``errors`` holds handler tracebacks. ``required_authorization`` (a test
    stand-in, never a real secret): requests without exactly that ``Authorization`` get a 401.
    """

    def __init__(self, name: str, port: int = 0, handler: Handler = _unrouted) -> None:
        self.name = name
        self.handler = handler
        self.latency = 0.0
        self.cache_control: str | None = "max-age=300"
        self.cache_control_overrides: dict[str, str | None] = {}
        self.validators = True
        self.required_authorization: str | None = None
        self.redirects: dict[str, str] = {}
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self._stopping = threading.Event()
        self._in_flight = 0
        self._in_flight_by_route: Counter[str] = Counter()
        self._faults: deque[_Fault] = deque()
        self._last_modified: dict[tuple[str, str], tuple[str, datetime]] = {}
        self._thread: threading.Thread | None = None
        self.reset_stats()
        self._server = _Server(self, port)

    @property
    def in_flight(self) -> int:
        """Requests being answered right now."""
        with self.lock:
            return self._in_flight

    @property
    def url(self) -> str:
        """Base URL without a trailing slash."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> None:
        """Serve on a daemon thread."""
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name=f"fake-{self.name}", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving (slow answers end at their next poll) and close the listening socket."""
        self._stopping.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def fail_next(
        self,
        n: int = 1,
        status: int = 429,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
        *,
        route: str | None = None,
    ) -> None:
        """Answer the next ``n`` requests with ``status``; ``headers`` default to Retry-After: 2."""
        given = {"Retry-After": "2"} if headers is None else dict(headers)
        self._add_faults(n, _Fault("fail", status, given, body, route=route))

    def server_error_next(self, n: int = 1, status: int = 503, *, route: str | None = None) -> None:
        """Answer the next ``n`` requests with a bare server error."""
        self.fail_next(n, status, {}, route=route)

    def reset_next(self, n: int = 1, *, route: str | None = None) -> None:
        """Close the connection of the next ``n`` requests without a response."""
        self._add_faults(n, _Fault("reset", route=route))

    def truncate_next(self, n: int = 1, *, route: str | None = None) -> None:
        """Send the next ``n`` responses with a Content-Length larger than the body, then close."""
        self._add_faults(n, _Fault("truncate", route=route))

    def drip_next(self, n: int, bytes_per_second: float, *, route: str | None = None) -> None:
        """Send the next ``n`` answers' bodies at ``bytes_per_second`` (headers at once)."""
        self._add_faults(n, _Fault("drip", rate=bytes_per_second, route=route))

    def slow_headers_next(self, n: int, delay: float, *, route: str | None = None) -> None:
        """Send the next ``n`` answers' status line and headers one byte every ``delay`` s."""
        self._add_faults(n, _Fault("slow_headers", delay=delay, route=route))

    def huge_next(
        self, n: int, size: int, *, announce: bool = True, route: str | None = None
    ) -> None:
        """Answer the next ``n`` requests with ``size`` zero bytes, streamed (never built)."""
        self._add_faults(n, _Fault("huge", size=size, announce=announce, route=route))

    def gzip_bomb_next(self, n: int, inflated_size: int, *, route: str | None = None) -> None:
        """Answer the next ``n`` requests with gzip that inflates to ``inflated_size`` bytes."""
        self._add_faults(n, _Fault("gzip_bomb", size=inflated_size, route=route))

    def silent_next(self, n: int = 1, *, route: str | None = None) -> None:
        """Read the next ``n`` requests and never answer them until the client hangs up."""
        self._add_faults(n, _Fault("silent", route=route))

    def redirect_next(
        self, n: int, location: str, status: int = 302, *, route: str | None = None
    ) -> None:
        """Answer the next ``n`` requests with ``status`` and ``Location: location``."""
        fault = _Fault("redirect", status, {"Location": location}, route=route)
        self._add_faults(n, fault)

    def _add_faults(self, n: int, fault: _Fault) -> None:
        with self.lock:
            self._faults.extend([fault] * n)

    def _take_fault(self, route: str) -> _Fault | None:
        """The first queued fault for ``route`` (or for any route); called under ``lock``."""
        for index, fault in enumerate(self._faults):
            if fault.route is None or fault.route == route:
                del self._faults[index]
                return fault
        return None

    def reset_stats(self) -> None:
        """Zero every counter and clear the log (faults and validators are kept)."""
        with self.lock:
            self.requests = 0
            self.requests_by_route: Counter[str] = Counter()
            self.peak_concurrency = 0
            # Most requests to one route in the server at once, per route.
            self.peak_by_route: Counter[str] = Counter()
            self.log: list[LogEntry] = []
            self.not_modified = 0
            self.injected_failures = 0
            self.authorized_requests = 0
            self.authorized_routes: Counter[str] = Counter()

    def serve(self, h: BaseHTTPRequestHandler) -> None:
        """Handle one request on the connection owned by ``h`` (called on its thread)."""
        path, _, query = h.path.partition("?")
        headers = {k.lower(): v for k, v in h.headers.items()}
        route = f"{h.command} {unquote(path)}"
        with self.lock:
            self._in_flight += 1
            self.peak_concurrency = max(self.peak_concurrency, self._in_flight)
            self._in_flight_by_route[route] += 1
            self.peak_by_route[route] = max(
                self.peak_by_route[route], self._in_flight_by_route[route]
            )
            fault = self._take_fault(route) if self._faults else None
        recorded = False

        def record(status: int) -> None:
            # Counted before the answer leaves, so a client that has its answer (or its reset)
            # always finds the request in the statistics.
            nonlocal recorded
            if recorded:
                return
            recorded = True
            with self.lock:
                self.requests += 1
                self.requests_by_route[route] += 1
                self.log.append(LogEntry(time.monotonic(), self.name, h.command, h.path, status))
                self.not_modified += status == 304
                self.injected_failures += fault is not None
                self.authorized_requests += "authorization" in headers
                if "authorization" in headers:
                    self.authorized_routes[route] += 1

        try:
            length = int(headers.get("content-length") or 0)
            body = h.rfile.read(length) if length else b""
            latency = self.latency
            if latency > 0:
                time.sleep(latency)
            request = Request(h.command, path, parse_qs(query), headers, body)
            self._respond(h, request, route, fault, record)
        except OSError:  # the client went away
            h.close_connection = True
        finally:
            record(0)
            with self.lock:
                self._in_flight -= 1
                self._in_flight_by_route[route] -= 1

    def _respond(
        self,
        h: BaseHTTPRequestHandler,
        request: Request,
        route: str,
        fault: _Fault | None,
        record: Callable[[int], None],
    ) -> None:
        kind = fault.kind if fault is not None else None
        if fault is not None and kind in {"reset", "silent", "huge", "gzip_bomb"}:
            self._misbehave(h, fault, record)
            return
        required = self.required_authorization
        if fault is not None and kind in {"fail", "redirect"}:
            reply = Reply(fault.status, fault.body, headers=dict(fault.headers))
        elif route in self.redirects:
            reply = Reply(302, b"", "text/plain", {"Location": self.redirects[route]})
        elif required is not None and request.headers.get("authorization") != required:
            reply = json_reply({"error": "authentication required"}, 401)
        else:
            reply = self._call(request)
        status, headers, body = self._finish(request, route, reply)
        if kind == "truncate":  # promise more than we send, hang up
            headers["Content-Length"] = str(len(body) + 64)
            h.close_connection = True
        record(status)
        if request.method == "HEAD":
            body = b""
        if fault is not None and kind == "slow_headers":
            self._send_slow_head(h, status, headers, fault.delay)
            h.wfile.write(body)
            return
        h.send_response(status)
        for key, value in headers.items():
            h.send_header(key, value)
        h.end_headers()
        if fault is not None and kind == "drip":
            self._drip(h, body, fault.rate)
            return
        h.wfile.write(body)

    def _misbehave(
        self, h: BaseHTTPRequestHandler, fault: _Fault, record: Callable[[int], None]
    ) -> None:
        """Answers that are not built from a reply: reset, silence, a huge body, a gzip bomb."""
        h.close_connection = True
        if fault.kind == "reset":
            record(0)
            return
        if fault.kind == "silent":
            record(0)
            self._wait_for_hangup(h)
            return
        record(200)
        if fault.kind == "gzip_bomb":
            body = _gzip_zeros(fault.size)
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Encoding", "gzip")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
            return
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        if fault.announce:
            h.send_header("Content-Length", str(fault.size))
        else:
            h.send_header("Connection", "close")
        h.end_headers()
        chunk = bytes(_HUGE_CHUNK)
        left = fault.size
        while left > 0 and not self._stopping.is_set():
            h.wfile.write(chunk[: min(left, _HUGE_CHUNK)])
            left -= _HUGE_CHUNK

    def _drip(self, h: BaseHTTPRequestHandler, body: bytes, rate: float) -> None:
        """Write ``body`` at ``rate`` bytes per second (one byte per write)."""
        pause = 1.0 / rate
        for index in range(len(body)):
            if self._pause(pause):
                h.close_connection = True
                return
            h.wfile.write(body[index : index + 1])

    def _pause(self, seconds: float) -> bool:
        """Sleep ``seconds`` in polls of the stop flag; True when the host is stopping."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self._stopping.wait(min(left, _STOP_POLL)):
                return True
        return False

    def _send_slow_head(
        self, h: BaseHTTPRequestHandler, status: int, headers: Mapping[str, str], delay: float
    ) -> None:
        """Write the status line and headers one byte per ``delay`` seconds."""
        phrase = HTTPStatus(status).phrase
        lines = [f"HTTP/1.1 {status} {phrase}", *(f"{k}: {v}" for k, v in headers.items())]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        for index in range(len(head)):
            if self._pause(delay):
                h.close_connection = True
                return
            h.wfile.write(head[index : index + 1])

    def _wait_for_hangup(self, h: BaseHTTPRequestHandler) -> None:
        """Block until the client closes the connection (or the host stops)."""
        connection = h.connection
        while not self._stopping.is_set():
            readable, _, _ = select.select([connection], [], [], _STOP_POLL)
            if readable and not connection.recv(4096):
                return

    def _call(self, request: Request) -> Reply:
        try:
            return self.handler(request)
        except Exception:  # noqa: BLE001 - a handler bug becomes a 500 the test can see
            text = traceback.format_exc()
            with self.lock:
                self.errors.append(text)
            return text_reply(text, 500)

    def _finish(
        self, request: Request, route: str, reply: Reply
    ) -> tuple[int, dict[str, str], bytes]:
        headers = {"Content-Type": reply.content_type, **reply.headers}
        if reply.status != 200:
            headers["Content-Length"] = str(len(reply.body))
            return reply.status, headers, reply.body
        cache_control = self.cache_control_overrides.get(route, self.cache_control)
        if cache_control is not None:
            # A handler's own Cache-Control (the OCI token knob) wins over the host's default.
            headers.setdefault("Cache-Control", cache_control)
        if self.validators and request.method in {"GET", "HEAD"}:
            etag = reply.etag or f'"{hashlib.sha256(reply.body).hexdigest()[:32]}"'
            modified = self._modified_at(request, etag)
            headers["ETag"] = etag
            headers["Last-Modified"] = formatdate(modified.timestamp(), usegmt=True)
            if _not_modified(request.headers, etag, modified):
                del headers["Content-Type"]
                return 304, headers, b""
        headers["Content-Length"] = str(len(reply.body))
        return 200, headers, reply.body

    def _modified_at(self, request: Request, etag: str) -> datetime:
        """Last-Modified per URL and Accept: kept while the body is unchanged, else bumped."""
        key = (f"{request.path}?{sorted(request.query.items())}", request.headers.get("accept", ""))
        with self.lock:
            previous = self._last_modified.get(key)
            if previous is not None and previous[0] == etag:
                return previous[1]
            now = datetime.now(UTC).replace(microsecond=0)
            if previous is not None and now <= previous[1]:
                now = previous[1] + timedelta(seconds=1)
            self._last_modified[key] = (etag, now)
            return now


def _not_modified(headers: Mapping[str, str], etag: str, modified: datetime) -> bool:
    """RFC 9110 §13.1: If-None-Match (weak comparison) wins over If-Modified-Since."""
    if_none_match = headers.get("if-none-match")
    if if_none_match is not None:
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return "*" in tags or etag.removeprefix("W/") in tags
    since = headers.get("if-modified-since")
    if not since:
        return False
    try:
        moment = parsedate_to_datetime(since)
    except (TypeError, ValueError):
        return False
    return modified <= (moment if moment.tzinfo else moment.replace(tzinfo=UTC))


@functools.lru_cache(maxsize=8)
def _gzip_zeros(size: int) -> bytes:
    """A gzip member of ``size`` zero bytes, compressed piecewise (never built inflated)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    piece = bytes(1024 * 1024)
    parts: list[bytes] = []
    left = size
    while left > 0:
        parts.append(compressor.compress(piece[: min(left, len(piece))]))
        left -= len(piece)
    parts.append(compressor.flush())
    return b"".join(parts)
