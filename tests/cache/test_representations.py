"""Versioned compact representations: a row of an older format is a miss, never an error."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from patchula.cache import Cache
from patchula.datasource import npm
from patchula.http.fetcher import Fetcher, make_client
from tests.fake_registry import FakeRegistry

# What npm-packument-v1 stored (JSON), here with a time that is not the registry's.
V1_DOCUMENT = orjson.dumps(
    {
        "name": "left-pad",
        "distTags": {"latest": "0.0.1"},
        "modified": None,
        "versions": ["0.0.1"],
        "times": [0],
        "deprecated": {},
    }
)


@pytest.mark.anyio
async def test_a_fresh_v1_row_is_a_miss_for_the_v2_lookup(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A fresh ``npm-packument-v1`` row is not read as v2: the packument is fetched again."""
    base = fake_registry.url("npm")
    cache = Cache.open(tmp_path / "c.sqlite3")
    async with make_client() as client:
        fetcher = Fetcher(client, cache=cache)
        old = await fetcher(
            f"{base}/left-pad",
            headers={"Accept": "application/json"},
            representation="npm-packument-v1",
            derive=lambda _: V1_DOCUMENT,
        )
        catalog = await npm.get_catalog(fetcher, base, "left-pad")
        again = await npm.get_catalog(fetcher, base, "left-pad")
    await cache.aclose()
    assert old.content == V1_DOCUMENT
    assert npm.REPRESENTATION == "npm-packument-v2"
    assert fake_registry.host("npm").requests == 2  # v1 stored, then v2 fetched; then fresh
    assert (fetcher.cache_stats.hits, fetcher.cache_stats.misses) == (1, 2)
    assert (catalog.reused, again.reused) == (False, True)
    assert catalog.latest == "1.3.0"
    assert [(r.version, r.released_at) for r in catalog.releases] == [
        ("1.1.3", datetime(2016, 9, 21, 19, 43, 6, tzinfo=UTC)),
        ("1.2.0", datetime(2017, 11, 14, 4, 54, 45, tzinfo=UTC)),
        ("1.3.0", datetime(2018, 4, 9, 1, 6, 43, tzinfo=UTC)),
    ]
    assert again.releases == catalog.releases
