"""Release lists (upstream order, head, refresh prefix vs. pagination) and extraction records."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

import pytest

from patchula.cache import Cache, ReleaseItem

pytestmark = pytest.mark.anyio


def items(*versions: str) -> list[ReleaseItem]:
    """Return newest-first items dated by their position (for readable assertions)."""
    return [ReleaseItem(v, float(100 - i), f"sha-{v}") for i, v in enumerate(versions)]


def versions(found: list[ReleaseItem]) -> list[str]:
    """Return the versions in stored order."""
    return [item.version for item in found]


@pytest.fixture
async def cache(tmp_path: Path) -> AsyncIterator[Cache]:
    """An open file-backed cache."""
    async with Cache.open(tmp_path / "cache.sqlite3") as opened:
        yield opened


async def test_first_merge_stores_everything_and_the_head(cache: Cache) -> None:
    """With nothing stored, every item is new: False is returned, order and head are kept."""
    assert await cache.merge_releases("npm", "p", items("3.0.0", "2.0.0", "1.0.0")) is False
    assert versions(await cache.releases("npm", "p")) == ["3.0.0", "2.0.0", "1.0.0"]
    assert await cache.release_heads("npm", "p") == items("3.0.0")[0]


async def test_merge_stops_at_the_first_known_item_and_refreshes_it(cache: Cache) -> None:
    """A refresh returns True at the first stored item, refreshes it and ignores the rest."""
    await cache.merge_releases("npm", "p", items("3.0.0", "2.0.0", "1.0.0"))
    refreshed = ReleaseItem("3.0.0", 42.0, "sha-new")
    later = [*items("5.0.0", "4.0.0"), refreshed, ReleaseItem("0.1.0", 1.0, None)]
    assert await cache.merge_releases("npm", "p", later) is True
    stored = await cache.releases("npm", "p")
    assert versions(stored) == ["5.0.0", "4.0.0", "3.0.0", "2.0.0", "1.0.0"]
    assert stored[2] == refreshed
    assert stored[3] == items("3.0.0", "2.0.0")[1]  # not processed: unchanged
    assert await cache.release_heads("npm", "p") == items("5.0.0")[0]


async def test_merge_of_the_same_head_only_refreshes_it(cache: Cache) -> None:
    """When the head is already stored the merge returns True at once and adds nothing."""
    await cache.merge_releases("npm", "p", items("2.0.0", "1.0.0"))
    assert await cache.merge_releases("npm", "p", [ReleaseItem("2.0.0", 7.0, None)]) is True
    assert await cache.releases("npm", "p") == [
        ReleaseItem("2.0.0", 7.0, None),
        items("2.0.0", "1.0.0")[1],
    ]
    assert await cache.release_heads("npm", "p") == ReleaseItem("2.0.0", 7.0, None)


async def test_history_pagination_appends_after_the_anchor(cache: Cache) -> None:
    """Initial pagination: each later page goes after the previous page's last version."""
    assert await cache.merge_releases("gh", "o/r", items("v10", "v9", "v8")) is False
    assert await cache.merge_release_page("gh", "o/r", items("v7", "v6"), after="v8") is False
    assert await cache.merge_release_page("gh", "o/r", items("v5"), after="v6") is False
    assert versions(await cache.releases("gh", "o/r")) == ["v10", "v9", "v8", "v7", "v6", "v5"]
    assert (await cache.release_heads("gh", "o/r")) == items("v10")[0]


async def test_disjoint_refresh_prefix_is_placed_before_known_history(cache: Cache) -> None:
    """A refresh whose first page is all new continues after its anchor, ahead of old history."""
    await cache.merge_releases("gh", "o/r", items("v3", "v2", "v1"))
    assert await cache.merge_releases("gh", "o/r", items("v8", "v7", "v6")) is False
    assert await cache.merge_release_page("gh", "o/r", items("v5", "v4", "v3"), after="v6")
    assert versions(await cache.releases("gh", "o/r")) == [
        *["v8", "v7", "v6", "v5", "v4", "v3", "v2", "v1"]
    ]
    assert (await cache.release_heads("gh", "o/r")) == items("v8")[0]


async def test_order_is_upstream_order_not_semver_or_dates(cache: Cache) -> None:
    """Stored order is exactly the order upstream listed, whatever versions and dates say."""
    odd = [ReleaseItem("1.0.0", 5.0, None), ReleaseItem("9.0.0", None, None)]
    odd.append(ReleaseItem("2.0.0-rc.1", 50.0, None))
    await cache.merge_releases("npm", "p", odd)
    assert await cache.releases("npm", "p") == odd


async def test_page_with_an_unknown_anchor_goes_at_the_end(cache: Cache) -> None:
    """A page whose anchor is not stored (e.g. lost in a rebuild) is appended at the end."""
    await cache.merge_releases("npm", "p", items("3", "2"))
    assert await cache.merge_release_page("npm", "p", items("1"), after="missing") is False
    assert versions(await cache.releases("npm", "p")) == ["3", "2", "1"]


async def test_sources_and_packages_are_separate(cache: Cache) -> None:
    """Release rows and heads are keyed by source and package."""
    await cache.merge_releases("npm", "p", items("1"))
    await cache.merge_releases("pypi", "p", items("2"))
    await cache.merge_releases("npm", "q", items("3"))
    assert versions(await cache.releases("npm", "p")) == ["1"]
    assert versions(await cache.releases("pypi", "p")) == ["2"]
    assert await cache.release_heads("crates", "p") is None
    assert await cache.releases("crates", "p") == []


async def test_a_failing_merge_changes_nothing(cache: Cache) -> None:
    """Merges are transactional: an error part-way leaves rows and head as they were.

    The failed merge is counted and reported ``False`` (nothing known was met), not raised.
    """
    await cache.merge_releases("npm", "p", items("1.0.0"))
    broken = [*items("3.0.0"), ReleaseItem(cast("str", object()), None, None)]
    assert await cache.merge_releases("npm", "p", broken) is False
    assert cache.stats.write_failures == 1
    assert await cache.releases("npm", "p") == items("1.0.0")
    assert await cache.release_heads("npm", "p") == items("1.0.0")[0]


async def test_extraction_records_round_trip_by_repo_commit_and_config(cache: Cache) -> None:
    """Extraction bytes are stored and replaced per (repo, commit, config hash)."""
    await cache.put_extraction("acme/api", "c1", "h1", b"one")
    await cache.put_extraction("acme/api", "c2", "h1", b"two")
    await cache.put_extraction("acme/api", "c1", "h2", b"three")
    await cache.put_extraction("acme/api", "c1", "h1", b"one again")
    assert await cache.get_extraction("acme/api", "c1", "h1") == b"one again"
    assert await cache.get_extraction("acme/api", "c2", "h1") == b"two"
    assert await cache.get_extraction("acme/api", "c1", "h2") == b"three"
    assert await cache.get_extraction("acme/web", "c1", "h1") is None
