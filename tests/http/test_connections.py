"""Connections: one lookup per host, connections opened as demand grows, HTTP/2 by ALPN.

Real sockets on loopback: plain HTTP/1.1 servers and a TLS server (``tls_server``) that
speaks HTTP/2 or HTTP/1.1 as ALPN decides, with a throwaway CA.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path

import anyio
import httpx
import pytest
import trustme
from typer.testing import CliRunner

from patchula.cli import app
from patchula.http.fetcher import Fetcher, HostStats, make_client
from patchula.http.transport import BodyTooLarge, PerHostPoolTransport
from patchula.report.model import build_report
from patchula.report.render import render_json
from patchula.scan import ScanResult
from patchula.settings import Settings
from tests.http.tls_server import (
    HOST,
    Answer,
    TlsServer,
    resolve_to_loopback,
    serving_in_thread,
    trust,
)

TIMEOUTS: dict[str, float | None] = {"connect": 2.0, "read": 2.0, "write": 2.0, "pool": 2.0}


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    """A throwaway certificate authority for the module's TLS servers."""
    return trustme.CA()


@pytest.fixture
def lookups(
    ca: trustme.CA, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, int]]:
    """Trust the CA and resolve ``*.test`` to loopback; yields the lookups per name."""
    trust(ca, tmp_path, monkeypatch)
    return (yield resolve_to_loopback(monkeypatch))


async def _gather(transport: PerHostPoolTransport, urls: list[str]) -> list[bytes]:
    out: dict[int, bytes] = {}

    async def one(i: int, url: str) -> None:
        out[i] = (await transport.get(url, [], TIMEOUTS)).content

    async with anyio.create_task_group() as tg:
        for i, url in enumerate(urls):
            tg.start_soon(one, i, url)
    return [out[i] for i in range(len(urls))]


class _Plain:
    """A loopback HTTP/1.1 server that counts connections and answers after ``delay``."""

    def __init__(self, delay: float = 0.1) -> None:
        self.delay = delay
        self.connections = 0
        self.port = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                await asyncio.sleep(self.delay)
                path = head.split(b" ")[1]
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(path), path))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest.fixture
async def plain() -> AsyncIterator[_Plain]:
    """A started ``_Plain`` server on 127.0.0.1."""
    server = _Plain()
    listener = await asyncio.start_server(server.serve, "127.0.0.1", 0)
    server.port = listener.sockets[0].getsockname()[1]
    yield server
    listener.close()
    await listener.wait_closed()


@pytest.mark.anyio
async def test_each_host_is_resolved_once_for_40_concurrent_requests(
    plain: _Plain, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 requests at once to 2 names: 2 lookups in all, however many connections open."""
    counts = resolve_to_loopback(monkeypatch)
    async with make_client() as client:
        fetcher = Fetcher(client)
        async with anyio.create_task_group() as tg:
            for i in range(20):
                for name in ("a.test", "b.test"):
                    tg.start_soon(fetcher, f"http://{name}:{plain.port}/{i}")
        transport = client._transport
        assert isinstance(transport, PerHostPoolTransport)
        assert transport.resolver.lookups == {"a.test": 1, "b.test": 1}
    assert counts == {"a.test": 1, "b.test": 1}
    assert plain.connections == 32  # HTTP/1.1: 16 per host at once, one lookup each host
    stats = fetcher.stats[f"a.test:{plain.port}"]
    assert (stats.requests, stats.connections, stats.tls_handshakes) == (20, 16, 0)
    assert stats.protocols == {"http/1.1": 16}


@pytest.mark.anyio
async def test_a_failed_lookup_is_shared_by_its_waiters_but_asked_again_later(
    plain: _Plain, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five connects wait on one failing lookup and all fail; the next request asks again."""
    calls: list[str] = []

    async def flaky(_loop: object, host: str, port: int, **_kw: object) -> object:
        calls.append(host)
        await asyncio.sleep(0.01)
        if len(calls) == 1:
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", flaky)
    transport = PerHostPoolTransport()
    url = f"http://flaky.test:{plain.port}/x"
    try:
        results = await asyncio.gather(
            *(transport.get(url, [], TIMEOUTS) for _ in range(5)), return_exceptions=True
        )
        assert all(isinstance(r, httpx.ConnectError) for r in results), results
        assert "name resolution" in str(results[0])
        assert calls == ["flaky.test"]
        assert (await transport.get(url, [], TIMEOUTS)).content == b"/x"
        assert calls == ["flaky.test", "flaky.test"]
        assert (await transport.get(url, [], TIMEOUTS)).content == b"/x"
        assert len(calls) == 2  # a success is kept for the run
    finally:
        await transport.aclose()


@pytest.mark.anyio
async def test_addresses_are_tried_in_order_and_tls_verifies_the_name(
    ca: trustme.CA, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refusing first address is skipped; SNI and the certificate check use the host name."""
    trust(ca, tmp_path, monkeypatch)
    closed = socket.socket()
    closed.bind(("127.0.0.2", 0))
    dead = closed.getsockname()
    closed.close()
    async with TlsServer(ca) as server:

        async def two(_loop: object, host: str, port: int, **_kw: object) -> object:
            return [
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", (dead[0], port)),
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
            ]

        monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", two)
        transport = PerHostPoolTransport()
        try:
            response = await transport.get(f"{server.url}/ok", [], TIMEOUTS)
            assert (response.status, response.content) == (200, b"/ok")
            # The same address under a name the certificate does not carry is refused.
            with pytest.raises(httpx.ConnectError, match="certificate"):
                await transport.get(f"https://other.test:{server.port}/", [], TIMEOUTS)
        finally:
            await transport.aclose()


@pytest.mark.anyio
async def test_alpn_picks_h2_and_20_concurrent_requests_share_one_connection(
    ca: trustme.CA, lookups: dict[str, int]
) -> None:
    """ALPN h2: 20 concurrent requests are streams on one connection, one handshake, one lookup.

    The first request opens the connection; the others wait for its handshake.
    """
    async with TlsServer(ca, delay=0.2) as server:
        transport = PerHostPoolTransport()
        try:
            bodies = await _gather(transport, [f"{server.url}/{i}" for i in range(20)])
        finally:
            await transport.aclose()
    assert bodies == [f"/{i}".encode() for i in range(20)]
    assert (server.seen.connections, server.seen.protocols) == (1, ["h2"])
    assert server.seen.peak_streams_per_connection == 20
    assert lookups == {HOST: 1}


@pytest.mark.anyio
async def test_fetcher_reports_connections_handshakes_and_protocol(
    ca: trustme.CA, lookups: dict[str, int]
) -> None:
    """Host statistics count the connections, TLS handshakes and protocols they spoke."""
    async with TlsServer(ca, delay=0.2) as server, make_client() as client:
        fetcher = Fetcher(client)
        async with anyio.create_task_group() as tg:
            for i in range(16):
                tg.start_soon(fetcher, f"{server.url}/{i}")
    stats = fetcher.stats[f"{HOST}:{server.port}"]
    assert (stats.requests, stats.connections, stats.tls_handshakes) == (16, 1, 1)
    assert stats.protocols == {"h2": 1}
    assert stats.max_concurrency == 16  # 16 streams, one socket
    assert server.seen.peak_streams_per_connection == 16


@pytest.mark.anyio
async def test_tls_server_offering_only_http11_stays_http11(
    ca: trustme.CA, lookups: dict[str, int]
) -> None:
    """Without h2 in ALPN: HTTP/1.1, one request per connection, opened as requests queue."""
    async with TlsServer(ca, alpn=("http/1.1",), delay=0.2) as server, make_client() as client:
        fetcher = Fetcher(client)
        async with anyio.create_task_group() as tg:
            for i in range(6):
                tg.start_soon(fetcher, f"{server.url}/{i}")
        # Later requests reuse the idle connections: no new handshakes.
        for i in range(3):
            await fetcher(f"{server.url}/again{i}")
    assert set(server.seen.protocols) == {"http/1.1"}
    assert server.seen.connections == 6
    stats = fetcher.stats[f"{HOST}:{server.port}"]
    assert (stats.connections, stats.tls_handshakes, stats.protocols) == (6, 6, {"http/1.1": 6})
    assert lookups == {HOST: 1}


@pytest.mark.anyio
async def test_a_second_h2_connection_opens_only_when_streams_run_out(
    ca: trustme.CA, lookups: dict[str, int]
) -> None:
    """SETTINGS_MAX_CONCURRENT_STREAMS 2: at most 2 streams per connection; then a second one.

    The second connection is opened only when both streams of the first are taken.
    """
    async with TlsServer(ca, max_streams=2, delay=0.2) as server:
        transport = PerHostPoolTransport()
        try:
            assert (await transport.get(f"{server.url}/first", [], TIMEOUTS)).content == b"/first"
            assert server.seen.connections == 1
            bodies = await _gather(transport, [f"{server.url}/{i}" for i in range(5)])
        finally:
            await transport.aclose()
    assert bodies == [f"/{i}".encode() for i in range(5)]
    assert server.seen.connections == 2
    assert server.seen.peak_streams_per_connection == 2


@pytest.mark.anyio
async def test_gzip_body_over_h2_is_decoded(ca: trustme.CA, lookups: dict[str, int]) -> None:
    """Content codings are decoded the same way on HTTP/2 streams."""
    document = b'{"name": "left-pad"}' * 500

    async def gzipped(_path: str, _headers: dict[str, str]) -> Answer:
        return 200, [("content-encoding", "gzip")], gzip.compress(document)

    async with TlsServer(ca, gzipped) as server, make_client() as client:
        response = await Fetcher(client)(f"{server.url}/left-pad")
    assert response.content == document
    assert server.seen.protocols == ["h2"]


@pytest.mark.anyio
async def test_too_large_h2_body_resets_the_stream_and_closes_the_connection_cleanly(
    ca: trustme.CA, lookups: dict[str, int]
) -> None:
    """Over the bound: BodyTooLarge, the stream reset (CANCEL), its connection closed.

    The next request is answered on a new connection.
    """

    async def big(path: str, _headers: dict[str, str]) -> Answer:
        return 200, [], b"x" * 200_000 if path == "/big" else path.encode()

    async with TlsServer(ca, big, drip=0.01) as server:
        transport = PerHostPoolTransport()
        try:
            with pytest.raises(BodyTooLarge, match="body on the wire over the 1000 bytes limit"):
                await transport.get(f"{server.url}/big", [], TIMEOUTS, max_body_bytes=1000)
            for _ in range(100):
                if server.seen.resets and server.seen.closed:
                    break
                await asyncio.sleep(0.01)
            assert server.seen.resets == [1]
            assert server.seen.closed == 1
            assert (await transport.get(f"{server.url}/small", [], TIMEOUTS)).content == b"/small"
        finally:
            await transport.aclose()
    assert server.seen.connections == 2


@pytest.mark.anyio
async def test_goaway_mid_run_moves_the_remaining_requests_to_a_new_connection(
    ca: trustme.CA, lookups: dict[str, int]
) -> None:
    """GOAWAY after 5 answers: the requests it did not process succeed on a new connection."""
    async with TlsServer(ca, goaway_after=5) as server, make_client() as client:
        fetcher = Fetcher(client)
        results: dict[int, bytes] = {}

        async def one(i: int) -> None:
            results[i] = (await fetcher(f"{server.url}/{i}")).content

        async with anyio.create_task_group() as tg:
            for i in range(20):
                tg.start_soon(one, i)
    assert results == {i: f"/{i}".encode() for i in range(20)}
    assert server.seen.goaways == 1
    assert server.seen.connections == 2
    stats = fetcher.stats[f"{HOST}:{server.port}"]
    assert (stats.errors, stats.connections, stats.protocols) == (0, 2, {"h2": 2})


@pytest.mark.anyio
async def test_refused_stream_is_sent_again(ca: trustme.CA, lookups: dict[str, int]) -> None:
    """RST_STREAM REFUSED_STREAM (RFC 9113 §8.7: not processed) is retried at once."""
    async with TlsServer(ca, refuse=1) as server, make_client() as client:
        fetcher = Fetcher(client)
        response = await fetcher(f"{server.url}/x")
    assert (response.status, response.content) == (200, b"/x")
    assert server.seen.requests == ["/x", "/x"]
    stats = fetcher.stats[f"{HOST}:{server.port}"]
    assert (stats.requests, stats.retries, stats.errors) == (1, 0, 0)


@pytest.mark.anyio
async def test_oversized_h2_header_list_is_a_remote_protocol_error(
    ca: trustme.CA, lookups: dict[str, int]
) -> None:
    """A header list over the 64 KiB SETTINGS_MAX_HEADER_LIST_SIZE is refused (hpack bound)."""

    async def fat(_path: str, _headers: dict[str, str]) -> Answer:
        return 200, [(f"x-h{i}", "v" * 8000) for i in range(10)], b"body"

    async with TlsServer(ca, fat) as server:
        transport = PerHostPoolTransport()
        try:
            with pytest.raises(httpx.RemoteProtocolError):
                await transport.get(f"{server.url}/", [], TIMEOUTS)
        finally:
            await transport.aclose()


@pytest.mark.anyio
async def test_httpx_client_path_speaks_h2_and_resets_an_unread_stream(
    ca: trustme.CA, lookups: dict[str, int]
) -> None:
    """``handle_async_request`` uses the same h2 connections; a body closed unread is reset."""

    async def big(path: str, _headers: dict[str, str]) -> Answer:
        return 200, [], b"y" * 100_000 if path == "/big" else path.encode()

    async with TlsServer(ca, big, drip=0.01) as server, make_client() as client:
        response = await client.get(f"{server.url}/a")
        assert (response.text, response.http_version) == ("/a", "HTTP/2")
        async with client.stream("GET", f"{server.url}/big") as streamed:
            assert streamed.status_code == 200
        for _ in range(100):
            if server.seen.resets:
                break
            await asyncio.sleep(0.01)
        assert server.seen.resets == [3]
        assert (await client.get(f"{server.url}/b")).text == "/b"


def test_run_reports_connections_handshakes_and_protocol_per_host(
    ca: trustme.CA, lookups: dict[str, int], tmp_path: Path
) -> None:
    """``-v`` host lines and the JSON ``hosts`` say connections, TLS handshakes and protocol."""
    packument = {
        "name": "left-pad",
        "dist-tags": {"latest": "1.3.0"},
        "versions": {v: {"name": "left-pad", "version": v} for v in ("1.0.0", "1.3.0")},
        "time": {"1.0.0": "2015-01-01T00:00:00.000Z", "1.3.0": "2018-04-09T00:00:00.000Z"},
    }

    async def npm(path: str, _headers: dict[str, str]) -> Answer:
        if path == "/left-pad":
            return 200, [("content-type", "application/json")], json.dumps(packument).encode()
        return 404, [("content-type", "application/json")], b'{"error": "Not found"}'

    repo = tmp_path / "repo"
    repo.mkdir()
    deps = {"left-pad": "^1.0.0", "nope-a": "^1.0.0", "nope-b": "^2.0.0"}
    (repo / "package.json").write_text(json.dumps({"name": "demo", "dependencies": deps}))
    report = tmp_path / "report.json"
    with serving_in_thread(TlsServer(ca, npm, delay=0.02)) as server:
        result = CliRunner().invoke(
            app,
            [
                *("run", str(repo), "--no-cache", "-v", "--registry", f"npm={server.url}"),
                "--report",
                str(report),
            ],
            catch_exceptions=False,
        )
    host = f"{HOST}:{server.port}"
    line = next(x for x in result.output.splitlines() if x.startswith(f"{host}: "))
    assert line.startswith(f"{host}: 3 requests (2xx: 1, 4xx: 2)")
    assert line.endswith("; connections 1 (h2), TLS handshakes 1")
    hosts = json.loads(report.read_text())["hosts"]
    assert {k: hosts[host][k] for k in ("connections", "tlsHandshakes", "protocol")} == {
        "connections": 1,
        "tlsHandshakes": 1,
        "protocol": "h2",
    }
    assert hosts[host]["connectionsByProtocol"] == {"h2": 1}
    assert server.seen.connections == 1


def test_json_host_statistics_name_mixed_protocols_and_hosts_without_connections() -> None:
    """``protocol`` is ``mixed`` when connections spoke both; null when none was opened."""
    stats = {
        "a.test": HostStats(requests=3, connections=3, tls_handshakes=3, protocols={"h2": 1}),
        "b.test": HostStats(requests=2),
    }
    stats["a.test"].protocols["http/1.1"] = 2
    result = ScanResult(evaluated_at=datetime.now(UTC), repos=[], host_stats={})
    hosts = json.loads(render_json(build_report(result, Settings(), stats)))["hosts"]
    assert hosts["a.test"]["protocol"] == "mixed"
    assert hosts["a.test"]["connectionsByProtocol"] == {"h2": 1, "http/1.1": 2}
    assert (hosts["b.test"]["protocol"], hosts["b.test"]["connections"]) == (None, 0)
    assert hosts["b.test"]["tlsHandshakes"] == 0


@pytest.mark.anyio
async def test_through_a_proxy_only_the_proxy_host_is_resolved_once(
    plain: _Plain, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``HTTP_PROXY=http://proxy.test:PORT``: one lookup of proxy.test, none of the registries."""
    counts = resolve_to_loopback(monkeypatch)
    for name in ("HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://proxy.test:{plain.port}")
    monkeypatch.setenv("http_proxy", f"http://proxy.test:{plain.port}")
    async with make_client() as client:
        fetcher = Fetcher(client)
        async with anyio.create_task_group() as tg:
            for i in range(10):
                for name in ("a.test", "b.test"):
                    tg.start_soon(fetcher, f"http://{name}/{i}")
    assert counts == {"proxy.test": 1}
    assert plain.connections >= 2


@pytest.mark.anyio
async def test_h2_server_may_send_1_mib_frames_after_the_first_request(
    ca: trustme.CA, lookups: dict[str, int]
) -> None:
    """SETTINGS_MAX_FRAME_SIZE 1 MiB is asked after the first request; large frames are read."""
    document = bytes(range(256)) * 8192  # 2 MiB

    async def big(path: str, _headers: dict[str, str]) -> Answer:
        return 200, [], document if path == "/big" else b"small"

    async with TlsServer(ca, big) as server:
        transport = PerHostPoolTransport()
        try:
            assert (await transport.get(f"{server.url}/first", [], TIMEOUTS)).content == b"small"
            assert server.seen.largest_frame == 5
            for _ in range(3):
                assert (await transport.get(f"{server.url}/big", [], TIMEOUTS)).content == document
        finally:
            await transport.aclose()
    assert server.seen.largest_frame == 1 << 20
    assert server.seen.connections == 1


@pytest.mark.anyio
async def test_https_through_a_connect_tunnel_stays_http11_and_resolves_only_the_proxy(
    ca: trustme.CA, lookups: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTPS_PROXY: a CONNECT tunnel (TLS on the registry's name inside it), HTTP/1.1 only."""
    tunnels: list[bytes] = []

    async def connect_proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        tunnels.append(head.split(b"\r\n")[0])
        port = int(head.split(b" ")[1].rsplit(b":", 1)[1])
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except ConnectionError:
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    listener = await asyncio.start_server(connect_proxy, "127.0.0.1", 0)
    proxy_port = listener.sockets[0].getsockname()[1]
    for name in ("HTTP_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv("HTTPS_PROXY", f"http://proxy.test:{proxy_port}")
    monkeypatch.setenv("https_proxy", f"http://proxy.test:{proxy_port}")
    try:
        async with TlsServer(ca) as server, make_client() as client:
            fetcher = Fetcher(client)
            for i in range(3):
                assert (await fetcher(f"{server.url}/{i}")).content == f"/{i}".encode()
    finally:
        listener.close()
        await listener.wait_closed()
    assert tunnels[0] == f"CONNECT {HOST}:{server.port} HTTP/1.1".encode()
    assert lookups == {"proxy.test": 1}
    assert set(server.seen.protocols) == {"http/1.1"}
    assert fetcher.stats[f"{HOST}:{server.port}"].connections == 0  # the proxy's, not counted


@pytest.mark.anyio
async def test_a_request_cancelled_at_its_deadline_resets_only_its_own_stream(
    ca: trustme.CA, lookups: dict[str, int]
) -> None:
    """A deadline that cancels one stream mid-body leaves the others on the connection alone."""

    async def answers(path: str, _headers: dict[str, str]) -> Answer:
        # /quick drips for about 0.14 s from 0.05 s: still in flight when /slow is cancelled.
        return 200, [], (b"z" * 400_000 if path == "/slow" else b"q" * 100_000)

    async with TlsServer(ca, answers, drip=0.02) as server:
        transport = PerHostPoolTransport()
        try:
            assert len((await transport.get(f"{server.url}/warm", [], TIMEOUTS)).content) == 100_000
            done: dict[str, bytes] = {}

            async def slow() -> None:
                with anyio.move_on_after(0.1):
                    await transport.get(f"{server.url}/slow", [], TIMEOUTS)
                    done["slow"] = b"finished"

            async def quick() -> None:
                await anyio.sleep(0.05)
                done["quick"] = (await transport.get(f"{server.url}/quick", [], TIMEOUTS)).content

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                tg.start_soon(quick)
            assert done == {"quick": b"q" * 100_000}
            for _ in range(100):
                if server.seen.resets:
                    break
                await asyncio.sleep(0.01)
            assert server.seen.resets == [3]
        finally:
            await transport.aclose()
    assert server.seen.connections == 1


def test_schema_describes_the_connection_statistics() -> None:
    """``patchula schema``: hosts carry connections, tlsHandshakes, protocol (an enum or null)."""
    result = CliRunner().invoke(app, ["schema"])
    host = json.loads(result.stdout)["$defs"]["HostReport"]["properties"]
    assert host["connections"]["type"] == host["tlsHandshakes"]["type"] == "integer"
    assert {"enum": ["h2", "http/1.1", "mixed"], "type": "string"} in host["protocol"]["anyOf"]
    assert host["connectionsByProtocol"]["additionalProperties"] == {"type": "integer"}
