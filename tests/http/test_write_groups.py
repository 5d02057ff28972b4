"""``Fetcher.all_or_nothing`` and validator-free freshness floors (issue 13, seed 003)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import respx

from patchula.cache import Cache
from patchula.errors import RegistryError
from patchula.http.fetcher import Fetcher, Timer

START = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
BASE = "https://registry.example"


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        """Return the time the test set."""
        return self.now


def _fetcher(cache: Cache, clock: Clock) -> Fetcher:
    return Fetcher(httpx.AsyncClient(), cache=cache, timer=Timer(wall=clock))


@pytest.mark.anyio
async def test_a_failed_block_stores_none_of_its_responses(tmp_path: Path) -> None:
    """Page 1 succeeded, page 2 failed: neither is stored; a clean block stores both."""
    cache = Cache.open(tmp_path / "c.sqlite3")
    fetcher = _fetcher(cache, Clock())
    ok = {"Cache-Control": "max-age=600"}
    with respx.mock(assert_all_called=False) as mock:
        mock.get(f"{BASE}/p1").respond(200, content=b"one", headers=ok)
        page2 = mock.get(f"{BASE}/p2")
        page2.respond(404)

        async def both_pages() -> None:
            async with fetcher.all_or_nothing():
                assert (await fetcher(f"{BASE}/p1")).content == b"one"
                if (await fetcher(f"{BASE}/p2")).status != 200:
                    raise RegistryError("page 2 failed")

        with pytest.raises(RegistryError, match="page 2"):
            await both_pages()
        assert await cache.get_http(fetcher._key(f"{BASE}/p1", None, "raw")) is None
        page2.respond(200, content=b"two", headers=ok)
        async with fetcher.all_or_nothing():
            await fetcher(f"{BASE}/p1")
            await fetcher(f"{BASE}/p2")
        stored = [
            await cache.get_http(fetcher._key(f"{BASE}/{p}", None, "raw")) for p in ("p1", "p2")
        ]
        assert [e.body if e else None for e in stored] == [b"one", b"two"]
    await fetcher.aclose()
    cache.close()


@pytest.mark.anyio
async def test_an_unvalidated_only_floor_skips_entries_with_validators(tmp_path: Path) -> None:
    """Within the floor: the validator-free entry is fresh, the one with an ETag revalidates."""
    cache = Cache.open(tmp_path / "c.sqlite3")
    clock = Clock()
    fetcher = _fetcher(cache, clock)
    fetcher.keep_fresh(["raw"], 3600, unvalidated_only=True)
    with respx.mock() as mock:
        bare = mock.get(f"{BASE}/bare").respond(200, content=b"b")
        tagged = mock.get(f"{BASE}/tagged").respond(200, content=b"t", headers={"ETag": '"x"'})
        await fetcher(f"{BASE}/bare")
        await fetcher(f"{BASE}/tagged")
        clock.now = START + timedelta(seconds=600)
        assert (await fetcher(f"{BASE}/bare")).cache == "fresh"
        tagged.respond(304)
        assert (await fetcher(f"{BASE}/tagged")).cache == "revalidated"
        assert (bare.call_count, tagged.call_count) == (1, 2)
        clock.now = START + timedelta(seconds=3601)  # from the first fetch, never extended
        await fetcher(f"{BASE}/bare")
        assert bare.call_count == 2
    await fetcher.aclose()
    cache.close()
