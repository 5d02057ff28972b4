"""The least HTTP client: what the fake registry allows a scan, measured (``scan.server-floor``).

``python -m benchmarks.floor_client LIMIT HOST:PORT=PATH[,PATH…] …`` sends every path's GET to
its host over ``LIMIT`` keep-alive HTTP/1.1 connections per host (each connection one request at
a time, as a per-host limit allows), reads each response whole (``Content-Length`` or chunked),
and prints the wall seconds from the first connection to the last body. It decodes nothing,
stores nothing and evaluates nothing: the time a scan of the same requests would take if its
own work cost nothing, with the same server sharing the same cores. Standard library only.
"""

from __future__ import annotations

import asyncio
import sys
import time


async def _read_response(reader: asyncio.StreamReader) -> int:
    """Read one response; return its status. Raises ``ConnectionError`` on a short read."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    if headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    else:
        await reader.readexactly(int(headers.get("content-length", "0")))
    return status


async def _worker(host: str, port: int, queue: list[str], statuses: list[int]) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while queue:
            path = queue.pop()
            writer.write(
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: application/json, "
                "application/vnd.pypi.simple.v1+json\r\nAccept-Encoding: identity\r\n\r\n".encode()
            )
            statuses.append(await _read_response(reader))
    finally:
        writer.close()


async def _main(limit: int, jobs: list[tuple[str, int, list[str]]]) -> tuple[float, list[int]]:
    statuses: list[int] = []
    start = time.perf_counter()
    async with asyncio.TaskGroup() as group:
        for host, port, paths in jobs:
            queue = list(reversed(paths))
            for _ in range(min(limit, len(paths))):
                group.create_task(_worker(host, port, queue, statuses))
    return time.perf_counter() - start, statuses


def main(argv: list[str]) -> None:
    """Parse ``LIMIT HOST:PORT=PATH,…`` arguments, run, print ``wall requests errors``."""
    limit = int(argv[0])
    jobs = []
    for spec in argv[1:]:
        where, _, paths = spec.partition("=")
        host, _, port = where.rpartition(":")
        jobs.append((host, int(port), paths.split(",")))
    wall, statuses = asyncio.run(_main(limit, jobs))
    print(f"{wall:.6f} {len(statuses)} {sum(1 for s in statuses if s != 200)}")


if __name__ == "__main__":
    main(sys.argv[1:])
