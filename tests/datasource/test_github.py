"""The ``github-releases`` and ``github-tags`` datasources (GitHub REST), on the fake GitHub."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest

from patchula.cache import Cache
from patchula.credentials import RegistryAccess, github_credential
from patchula.datasource import github_releases, github_tags
from patchula.datasource.base import Dated, ReleaseRow, Unavailable, release_rows_of
from patchula.errors import PackageNotFound, RegistryError
from patchula.http.auth import StaticCredentials
from patchula.http.fetcher import Fetcher, Timer, make_client
from patchula.http.flight import run_memo
from patchula.http.lazy import LazyFetcher
from patchula.lookup import Lookups
from patchula.models import Catalog, Dependency, Derive, FetchResponse, Release
from patchula.policy.evaluate import evaluate
from patchula.policy.memo import CatalogView
from patchula.policy.release_age import ReleaseAgePolicy
from patchula.settings import Settings
from patchula.versioning import VERSIONINGS
from tests.fake_registry import FakeRegistry

START = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
OWNER, REPO = "acme", "widget"
PACKAGE = f"{OWNER}/{REPO}"
RELEASES_ROUTE = f"GET /repos/{PACKAGE}/releases"
TAGS_ROUTE = f"GET /repos/{PACKAGE}/tags"
TOKEN = "gh-STANDIN-not-a-token"  # noqa: S105 - a stand-in, never a real secret


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        """Return the time the test set."""
        return self.now


def _history(count: int, *, prefix: str = "v1.0.", start: int = 0) -> dict[str, datetime]:
    """``count`` releases newest first: ``v1.0.<start+count-1>`` … ``v1.0.<start>``."""
    numbers = range(start + count - 1, start - 1, -1)
    return {f"{prefix}{n}": START - timedelta(days=1000 - n) for n in numbers}


@asynccontextmanager
async def _fetcher(
    cache: Cache | None = None,
    clock: Clock | None = None,
    credentials: StaticCredentials | None = None,
) -> AsyncIterator[Fetcher]:
    async with make_client() as client:
        yield Fetcher(
            client, cache=cache, timer=Timer(wall=clock or Clock()), credentials=credentials
        )


def _newest(catalog: Catalog) -> str | None:
    """The latest a GitHub Actions row is measured against: newest stable by version order."""
    return CatalogView(catalog, VERSIONINGS["docker"]).newest_stable


def _rows(path: Path, source: str = github_releases.REPRESENTATION) -> list[str]:
    """The versions of the stored release rows, in upstream order (newest first)."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT version FROM releases WHERE source = ? ORDER BY position", (source,)
        ).fetchall()
    return [row[0] for row in rows]


def _head(path: Path) -> str | None:
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT version FROM release_heads").fetchone()
    return None if row is None else str(row[0])


# --- releases: pages, merges, heads -----------------------------------------------------------


@pytest.mark.anyio
async def test_initial_history_of_three_pages_then_a_refresh_stops_at_the_first_known(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """250 releases are three pages merged into rows; two new ones later cost one page."""
    host = fake_registry.host("github")
    base = fake_registry.url("github")
    history = _history(250)
    fake_registry.github.add_repo(OWNER, REPO, history)
    path = tmp_path / "cache.sqlite3"
    clock = Clock()
    with Cache.open(path) as cache:
        async with _fetcher(cache, clock) as fetch:
            first = await github_releases.get_catalog(fetch, base, PACKAGE)
            assert [r.version for r in first.releases] == list(history)
            assert host.requests_by_route[RELEASES_ROUTE] == 3
            newer = {"v1.0.251": START - timedelta(hours=1), "v1.0.250": START - timedelta(hours=2)}
            fake_registry.github.add_repo(OWNER, REPO, newer | history)
            host.reset_stats()
            clock.now += timedelta(hours=1)  # past the pages' max-age: revalidated
            second = await github_releases.get_catalog(fetch, base, PACKAGE)
    assert host.requests_by_route[RELEASES_ROUTE] == 1  # page 1 held a known release
    assert [r.version for r in second.releases] == [*newer, *history]
    assert second.releases[0].released_at == newer["v1.0.251"]
    assert (second.latest, _newest(second)) == (None, "v1.0.251")
    assert _rows(path) == [*newer, *history]
    assert _head(path) == "v1.0.251"


@pytest.mark.anyio
async def test_a_disjoint_refresh_prefix_is_placed_by_the_after_anchor(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """150 new releases: page 1 is all new, page 2 ends in a known one; the order is upstream's.

    Without the ``after`` anchor, page 2's new releases would go before page 1's (above the
    new head); with it they follow page 1's last one.
    """
    host = fake_registry.host("github")
    base = fake_registry.url("github")
    old = _history(120)
    fake_registry.github.add_repo(OWNER, REPO, old)
    path = tmp_path / "cache.sqlite3"
    clock = Clock()
    with Cache.open(path) as cache:
        async with _fetcher(cache, clock) as fetch:
            await github_releases.get_catalog(fetch, base, PACKAGE)
            new = _history(150, start=120)
            fake_registry.github.add_repo(OWNER, REPO, new | old)
            host.reset_stats()
            clock.now += timedelta(hours=1)
            catalog = await github_releases.get_catalog(fetch, base, PACKAGE)
    assert host.requests_by_route[RELEASES_ROUTE] == 2
    assert [r.version for r in catalog.releases] == [*new, *old]
    assert _rows(path) == [*new, *old]
    assert _head(path) == "v1.0.269"


@pytest.mark.anyio
async def test_a_warm_run_with_an_unchanged_head_sends_one_conditional_request(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A 304 on page 1 whose first release is the stored head: the rest comes from the rows."""
    host = fake_registry.host("github")
    base = fake_registry.url("github")
    history = _history(250)
    fake_registry.github.add_repo(OWNER, REPO, history, prerelease={"v1.0.249"})
    path = tmp_path / "cache.sqlite3"
    with Cache.open(path) as cache:
        async with _fetcher(cache) as fetch:
            await github_releases.get_catalog(fetch, base, PACKAGE)
    host.reset_stats()
    clock = Clock()
    clock.now += timedelta(hours=2)
    with Cache.open(path) as cache:
        async with _fetcher(cache, clock) as fetch:
            warm = await github_releases.get_catalog(fetch, base, PACKAGE)
    assert (host.requests, host.not_modified) == (1, 1)
    assert host.requests_by_route == {RELEASES_ROUTE: 1}
    assert [r.version for r in warm.releases] == list(history)
    assert warm.release("v1.0.249") == Release("v1.0.249", history["v1.0.249"], prerelease=True)
    assert _newest(warm) == "v1.0.248"  # the prerelease flag survives the rows
    assert warm.fetched_at == clock.now
    assert not warm.reused


@pytest.mark.anyio
async def test_a_fresh_first_page_is_reused_without_a_request(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Within the pages' max-age the catalog comes from the cache with no request at all."""
    host = fake_registry.host("github")
    base = fake_registry.url("github")
    fake_registry.github.add_repo(OWNER, REPO, _history(150))
    with Cache.open(tmp_path / "cache.sqlite3") as cache:
        async with _fetcher(cache) as fetch:
            await github_releases.get_catalog(fetch, base, PACKAGE)
            host.reset_stats()
            again = await github_releases.get_catalog(fetch, base, PACKAGE)
    assert host.requests == 0
    assert again.reused
    assert len(again.releases) == 150


class _FailingPage:
    """A facade that fails the request for ``page=<n>``; everything else goes to ``inner``."""

    def __init__(self, inner: Fetcher, page: int) -> None:
        self.inner = inner
        self.page = page

    async def __call__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        representation: str = "raw",
        derive: Derive | None = None,
        method: str = "GET",
        body: bytes | None = None,
        scope: str | None = None,
    ) -> FetchResponse:
        if f"page={self.page}" in url:
            raise RegistryError("page refused by the test")
        return await self.inner(
            url,
            headers=headers,
            representation=representation,
            derive=derive,
            method=method,
            body=body,
            scope=scope,
        )

    def all_or_nothing(self) -> contextlib.AbstractAsyncContextManager[None]:
        return self.inner.all_or_nothing()

    async def release_rows(
        self, source: str, package: str
    ) -> tuple[ReleaseRow | None, list[ReleaseRow]] | None:
        return await self.inner.release_rows(source, package)

    async def merge_release_rows(
        self, source: str, package: str, items: Sequence[ReleaseRow], *, after: str | None
    ) -> None:
        await self.inner.merge_release_rows(source, package, items, after=after)


@pytest.mark.anyio
async def test_a_failed_page_stores_no_release_rows(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Page 3 fails: neither pages nor rows are kept, so the next run reads the whole history.

    Were page 1's rows kept, the next run would meet them on page 1 and stop, missing 2 and 3.
    """
    host = fake_registry.host("github")
    base = fake_registry.url("github")
    history = _history(250)
    fake_registry.github.add_repo(OWNER, REPO, history)
    path = tmp_path / "cache.sqlite3"
    with Cache.open(path) as cache:
        async with _fetcher(cache) as fetch:
            with pytest.raises(RegistryError, match="page refused"):
                await github_releases.get_catalog(_FailingPage(fetch, 3), base, PACKAGE)
            assert _rows(path) == []
            host.reset_stats()
            catalog = await github_releases.get_catalog(fetch, base, PACKAGE)
    assert host.requests_by_route[RELEASES_ROUTE] == 3
    assert [r.version for r in catalog.releases] == list(history)
    assert _rows(path) == list(history)


@pytest.mark.anyio
async def test_without_a_cache_every_page_is_read(fake_registry: FakeRegistry) -> None:
    """No cache, no release rows: the facade is no ``ReleaseRows`` store and pages are read."""
    base = fake_registry.url("github")
    fake_registry.github.add_repo(OWNER, REPO, _history(201))
    async with _fetcher() as fetch:
        assert await fetch.release_rows("s", "p") is None
        catalog = await github_releases.get_catalog(fetch, base, PACKAGE)
    assert len(catalog.releases) == 201
    assert fake_registry.host("github").requests_by_route[RELEASES_ROUTE] == 3


def test_the_lazy_facade_offers_release_rows() -> None:
    """The run's ``LazyFetcher`` is a ``ReleaseRows`` (forwarding to its fetcher)."""
    lazy = LazyFetcher(Fetcher)
    assert release_rows_of(lazy) is lazy
    assert lazy.made is None  # asking made nothing


@pytest.mark.anyio
async def test_drafts_are_ignored_and_prerelease_flags_kept(fake_registry: FakeRegistry) -> None:
    """A draft is no release; ``prerelease: true`` makes ``v2.1.0`` a prerelease, not latest."""
    base = fake_registry.url("github")
    releases = {
        "v3.0.0": START - timedelta(days=1),
        "v2.1.0": START - timedelta(days=2),
        "v2.0.0": START - timedelta(days=3),
    }
    fake_registry.github.add_repo(OWNER, REPO, releases, draft={"v3.0.0"}, prerelease={"v2.1.0"})
    async with _fetcher() as fetch:
        catalog = await github_releases.get_catalog(fetch, base, PACKAGE)
    assert catalog.releases == (
        Release("v2.1.0", releases["v2.1.0"], prerelease=True),
        Release("v2.0.0", releases["v2.0.0"]),
    )
    assert (catalog.latest, _newest(catalog)) == (None, "v2.0.0")
    assert catalog.time_source == "GitHub release published_at"
    view = CatalogView(catalog, VERSIONINGS["docker"])
    assert view.newest_stable == "v2.0.0"
    assert view.newest_compatible("v2.0.0") == "v2.0.0"  # the flagged one is not offered


def test_derive_keeps_only_tag_date_and_flag() -> None:
    """The compact document drops assets, bodies and counters (and drafts)."""
    raw = (
        b'[{"tag_name":"v1","draft":false,"prerelease":false,"published_at":"2026-01-02T03:04:05Z",'
        b'"body":"long notes","assets":[{"download_count":7}]},'
        b'{"tag_name":"v2","draft":true,"published_at":null}]'
    )
    assert github_releases.derive_releases(raw) == b'[["v1",1767323045.0,false]]'


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"[not json", "Invalid JSON"),
        (b'{"message":"x"}', "Expected array, got object"),
        (b'[{"draft":false}]', "Field required at 0.tag_name"),
    ],
)
def test_malformed_release_pages_are_registry_errors(body: bytes, reason: str) -> None:
    """An unusable page is a ``RegistryError`` naming what was wrong, never a crash."""
    with pytest.raises(RegistryError, match="unusable answer from GitHub") as caught:
        github_releases.derive_releases(body)
    assert reason.replace("`", "") in str(caught.value).replace("`", "")


@pytest.mark.anyio
async def test_a_malformed_page_on_the_wire_fails_the_lookup(fake_registry: FakeRegistry) -> None:
    """A 200 with a body that is not a release list: ``RegistryError``, nothing stored."""
    base = fake_registry.url("github")
    fake_registry.github.add_repo(OWNER, REPO, _history(3))
    fake_registry.host("github").fail_next(1, 200, {}, b"<html>", route=RELEASES_ROUTE)
    async with _fetcher() as fetch:
        with pytest.raises(RegistryError, match=r"unusable answer from GitHub \(Invalid JSON"):
            await github_releases.get_catalog(fetch, base, PACKAGE)


@pytest.mark.anyio
async def test_a_link_to_another_host_is_refused(fake_registry: FakeRegistry) -> None:
    """Pagination never leaves the API's origin (the token would follow)."""
    base = fake_registry.url("github")
    fake_registry.github.add_repo(OWNER, REPO, _history(3))
    link = {"Link": '<https://evil.example/repos/acme/widget/releases?page=2>; rel="next"'}
    fake_registry.host("github").fail_next(1, 200, link, b"[]", route=RELEASES_ROUTE)
    async with _fetcher() as fetch:
        with pytest.raises(RegistryError, match=r"next page is on another host \(evil\.example\)"):
            await github_releases.get_catalog(fetch, base, PACKAGE)


@pytest.mark.anyio
async def test_an_unknown_repository_is_not_found(fake_registry: FakeRegistry) -> None:
    """A 404 is ``PackageNotFound``; a name that is not owner/repo is never requested."""
    base = fake_registry.url("github")
    async with _fetcher() as fetch:
        with pytest.raises(PackageNotFound):
            await github_releases.get_catalog(fetch, base, "acme/nothing")
        with pytest.raises(RegistryError, match="unsafe in a URL"):
            await github_tags.get_catalog(fetch, base, "acme/../x")
        with pytest.raises(RegistryError, match="not owner/repo"):
            await github_tags.get_catalog(fetch, base, "acme/widget/extra")
    assert fake_registry.host("github").requests == 1


# --- tokens and hosts -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_401_names_the_token_source(fake_registry: FakeRegistry) -> None:
    """Anonymous: where a token goes; with a refused token: which variable it came from."""
    base = fake_registry.url("github")
    fake_registry.github.add_repo(OWNER, REPO, _history(3))
    fake_registry.host("github").required_authorization = "Bearer the-right-one"
    async with _fetcher() as fetch:
        with pytest.raises(RegistryError) as anonymous:
            await github_tags.get_catalog(fetch, base, PACKAGE)
    assert "HTTP 401" in str(anonymous.value)
    assert "GH_TOKEN or GITHUB_TOKEN" in str(anonymous.value)
    credential = github_credential({"GITHUB_TOKEN": TOKEN}, base)
    assert credential is not None
    async with _fetcher(credentials=StaticCredentials([credential])) as fetch:
        with pytest.raises(RegistryError) as refused:
            await github_releases.get_catalog(fetch, base, PACKAGE)
    assert "the credential from GITHUB_TOKEN was refused" in str(refused.value)
    assert TOKEN not in str(refused.value)


@pytest.mark.anyio
async def test_the_token_is_sent_to_the_api_only(fake_registry: FakeRegistry) -> None:
    """Every request of a lookup carries the GitHub token for its base, and it never shows."""
    base = fake_registry.url("github")
    fake_registry.github.add_repo(OWNER, REPO, _history(3))
    fake_registry.host("github").required_authorization = f"Bearer {TOKEN}"
    credential = github_credential({"GH_TOKEN": TOKEN}, base)
    assert credential is not None
    async with _fetcher(credentials=StaticCredentials([credential])) as fetch:
        catalog = await github_tags.get_catalog(fetch, base, PACKAGE)
        digest = await github_tags.get_digest(fetch, base, PACKAGE, "v1.0.2")
    assert len(catalog.releases) == 3
    assert digest == fake_registry.github.commit_of(OWNER, REPO, "v1.0.2")
    host = fake_registry.host("github")
    assert host.authorized_requests == host.requests == 2


@pytest.mark.anyio
async def test_ghes_paths_under_api_v3(fake_registry: FakeRegistry, tmp_path: Path) -> None:
    """A GitHub Enterprise Server base ``…/api/v3`` is used as given, pages and refs under it."""
    base = f"{fake_registry.url('github')}/api/v3"
    history = _history(150)
    fake_registry.github.add_repo(OWNER, REPO, history, annotated={"v1.0.149"})
    with Cache.open(tmp_path / "cache.sqlite3") as cache:
        async with _fetcher(cache) as fetch:
            releases = await github_releases.get_catalog(fetch, base, PACKAGE)
            tags = await github_tags.get_catalog(fetch, base, PACKAGE)
            digest = await github_tags.get_digest(fetch, base, PACKAGE, "v1.0.149")
    assert len(releases.releases) == len(tags.releases) == 150
    assert releases.source_url == f"{base}/repos/{PACKAGE}/releases?per_page=100"
    assert digest == fake_registry.github.commit_of(OWNER, REPO, "v1.0.149")
    routes = fake_registry.host("github").requests_by_route
    assert routes == {
        f"GET /api/v3/repos/{PACKAGE}/releases": 2,
        f"GET /api/v3/repos/{PACKAGE}/tags": 2,
        f"GET /api/v3/repos/{PACKAGE}/git/matching-refs/tags/v1.0.149": 1,
        f"GET /api/v3/repos/{PACKAGE}/git/tags/"
        f"{fake_registry.github.tag_object_of(OWNER, REPO, 'v1.0.149')}": 1,
    }


# --- tags, commits, dates ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_tags_carry_their_commits(fake_registry: FakeRegistry) -> None:
    """Each tag's ``digest`` is its commit; ``version_of_digest`` finds the tag of a pin."""
    base = fake_registry.url("github")
    fake_registry.github.add_repo(OWNER, REPO, tags=["v2", "v2.1.0", "v1"])
    async with _fetcher() as fetch:
        catalog = await github_tags.get_catalog(fetch, base, PACKAGE)
    commit = fake_registry.github.commit_of
    assert [(r.version, r.digest) for r in catalog.releases] == [
        (tag, commit(OWNER, REPO, tag)) for tag in ("v2", "v2.1.0", "v1")
    ]
    assert catalog.latest is None
    assert all(r.released_at is None for r in catalog.releases)
    assert catalog.version_of_digest(commit(OWNER, REPO, "v2.1.0").upper()) == "v2.1.0"
    assert catalog.version_of_digest("0" * 40) is None


def test_version_of_digest_prefers_the_most_precise_tag() -> None:
    """``v4``, ``v4.2`` and ``v4.2.2`` on one commit: the pin is ``v4.2.2``."""
    sha = "a" * 40
    releases = tuple(
        Release(v, None, digest=d)
        for v, d in [("v4", sha), ("v4.2", sha), ("v4.2.2", sha), ("v4.2.3", "b" * 40)]
    )
    catalog = Catalog("github-tags", PACKAGE, releases, None, START)
    assert catalog.version_of_digest(sha) == "v4.2.2"


@pytest.mark.anyio
async def test_digests_of_tags_annotated_tags_and_branches(fake_registry: FakeRegistry) -> None:
    """Lightweight and annotated tags resolve to their commit; a branch to its head; else None."""
    base = fake_registry.url("github")
    main = "c" * 40
    fake_registry.github.add_repo(
        OWNER,
        REPO,
        tags=["v1.0.0", "v1.1.0", "v1.1.0-rc.1"],
        annotated={"v1.1.0"},
        branches={"main": main},
    )
    commit = fake_registry.github.commit_of
    async with _fetcher() as fetch:
        light = await github_tags.get_digest(fetch, base, PACKAGE, "v1.0.0")
        annotated = await github_tags.get_digest(fetch, base, PACKAGE, "v1.1.0")
        branch = await github_tags.get_digest(fetch, base, PACKAGE, "main")
        prefix_only = await github_tags.get_digest(fetch, base, PACKAGE, "v1")
        invalid = await github_tags.get_digest(fetch, base, PACKAGE, "v1..2")
    assert light == commit(OWNER, REPO, "v1.0.0")
    assert annotated == commit(OWNER, REPO, "v1.1.0")  # not the tag object's SHA
    assert branch == main
    assert prefix_only is None  # v1.0.0 starts with "v1" but is another tag
    assert invalid is None
    routes = fake_registry.host("github").requests_by_route
    assert routes[f"GET /repos/{PACKAGE}/git/ref/heads/main"] == 1
    assert routes[f"GET /repos/{PACKAGE}/git/ref/heads/v1"] == 1
    assert sum(n for r, n in routes.items() if "/git/tags/" in r) == 1
    assert not any("v1..2" in route for route in routes)


@pytest.mark.anyio
async def test_tag_dates_from_releases_else_commits(fake_registry: FakeRegistry) -> None:
    """A tag with a release gets its ``published_at``, one without its commit date; each says so."""
    base = fake_registry.url("github")
    released = START - timedelta(days=3)
    committed = START - timedelta(days=30)
    fake_registry.github.add_repo(
        OWNER, REPO, {"v1.1.0": released}, tags={"v1.0.0": committed, "v0.9.0": committed}
    )
    registries = {"github": base}
    async with _fetcher() as fetch:
        times = await github_tags.release_times(fetch, registries, PACKAGE, ["v1.1.0", "v1.0.0"])
        nothing = await github_tags.release_times(fetch, registries, PACKAGE, ["v9"])
    assert times == {"v1.1.0": Dated(released, "release"), "v1.0.0": Dated(committed, "commit")}
    assert nothing == {"v9": None}
    routes = fake_registry.host("github").requests_by_route
    commits = {r: n for r, n in routes.items() if "/commits/" in r}
    assert commits == {
        f"GET /repos/{PACKAGE}/commits/{fake_registry.github.commit_of(OWNER, REPO, 'v1.0.0')}": 1
    }
    assert "commit date" in github_tags.TIME_SOURCE


@pytest.mark.anyio
async def test_a_tag_at_a_releases_commit_takes_the_earliest_such_release_date(
    fake_registry: FakeRegistry,
) -> None:
    """``v1`` on the commit of v1.1.0 and of v1.1.0-rc.1: the earlier ``published_at``, no request.

    Its code was public from the first release at that commit on.
    """
    base = fake_registry.url("github")
    rc, final = START - timedelta(days=9), START - timedelta(days=3)
    fake_registry.github.add_repo(
        OWNER, REPO, {"v1.1.0": final, "v1.1.0-rc.1": rc}, tags=("v1",), prerelease=("v1.1.0-rc.1",)
    )
    sha = fake_registry.github.commit_of(OWNER, REPO, "v1.1.0")
    fake_registry.github.point_tag(OWNER, REPO, "v1", sha)
    fake_registry.github.point_tag(OWNER, REPO, "v1.1.0-rc.1", sha)
    async with _fetcher() as fetch:
        times = await github_tags.release_times(fetch, {"github": base}, PACKAGE, ["v1"])
    assert times == {"v1": Dated(rc, github_tags.SAME_COMMIT_RELEASE)}
    assert not any("/commits/" in r for r in fake_registry.host("github").requests_by_route)


@pytest.mark.anyio
@pytest.mark.parametrize("status", [404, 422])
async def test_a_commit_github_does_not_know_is_unavailable_not_undated(
    fake_registry: FakeRegistry, status: int
) -> None:
    """The tag list names the commit, GitHub answers 404 (or 422): a failed date of that tag.

    The reason names the tag, the commit, the status and the URL; the other tags are still
    dated.
    """
    base = fake_registry.url("github")
    committed = START - timedelta(days=30)
    fake_registry.github.add_repo(OWNER, REPO, tags={"v1.0.0": committed, "v0.9.0": committed})
    sha = fake_registry.github.commit_of(OWNER, REPO, "v1.0.0")
    route = f"GET /repos/{PACKAGE}/commits/{sha}"
    fake_registry.host("github").fail_next(1, status, {}, b'{"message":"Not Found"}', route=route)
    async with _fetcher() as fetch:
        times = await github_tags.release_times(
            fetch, {"github": base}, PACKAGE, ["v1.0.0", "v0.9.0"]
        )
    assert times == {
        "v1.0.0": Unavailable(
            f"GitHub repository {PACKAGE!r} (commit dates): tag v1.0.0 names commit {sha[:12]}…,"
            f" which GitHub does not know (HTTP {status} from {base}/repos/{PACKAGE}/commits/{sha})"
        ),
        "v0.9.0": Dated(committed, "commit"),
    }


@pytest.mark.anyio
async def test_within_a_run_the_release_and_tag_lists_are_read_once(
    fake_registry: FakeRegistry,
) -> None:
    """Inside ``run_memo``, the catalog and three date rounds read each list once; outside, again.

    The fake sends no ``max-age``, so without the run's memo each call would ask again.
    """
    base = fake_registry.url("github")
    committed = START - timedelta(days=30)
    fake_registry.github.add_repo(
        OWNER, REPO, {"v1.1.0": START}, tags={"v1.0.0": committed, "v0.9.0": committed}
    )
    host = fake_registry.host("github")
    host.cache_control = None
    lists = (f"GET /repos/{PACKAGE}/tags", f"GET /repos/{PACKAGE}/releases")
    async with _fetcher() as fetch:
        with run_memo():
            await github_tags.get_catalog(fetch, base, PACKAGE)
            for version in ("v1.1.0", "v1.0.0", "v0.9.0"):
                await github_tags.release_times(fetch, {"github": base}, PACKAGE, [version])
            await github_releases.get_catalog(fetch, base, PACKAGE)
        assert [host.requests_by_route[route] for route in lists] == [1, 1]
        await github_tags.get_catalog(fetch, base, PACKAGE)  # another run: asked again
    assert [host.requests_by_route[route] for route in lists] == [2, 1]


# --- through the run's lookups ----------------------------------------------------------------


@pytest.mark.anyio
async def test_lookups_use_the_github_registry_token_and_lazy_dates(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A ``github-tags`` lookup goes to ``--registry github=URL`` with the token; dates lazily.

    The held-back verdict needs the date of ``v1.1.0`` (its release) only; the commit of
    ``v1.1.0`` comes from its ref, and every request carried the token.
    """
    base = fake_registry.url("github")
    fake_registry.github.add_repo(
        OWNER,
        REPO,
        {"v1.1.0": START - timedelta(hours=5)},
        tags={"v1.0.0": START - timedelta(days=40)},
    )
    fake_registry.host("github").required_authorization = f"Bearer {TOKEN}"
    settings = Settings.model_validate({"registries": {"github": base}, "min_release_age": "3d"})
    access = RegistryAccess(settings, env={"GH_TOKEN": TOKEN}, home=tmp_path)
    dep = Dependency(
        manager="github_actions",
        file=".github/workflows/ci.yml",
        line=3,
        name=PACKAGE,
        package_name=PACKAGE,
        datasource="github-tags",
        versioning="docker",
        dep_type="action",
        declared=f"{PACKAGE}@v1.0.0",
        constraint="v1.0.0",
    )
    async with make_client() as client:
        fetch = Fetcher(client, timer=Timer(wall=Clock()), credentials=access)
        async with anyio.create_task_group() as tg:
            lookups = Lookups(tg, fetch, settings, access)
            key = lookups.key(dep.datasource, dep.package_name, access.for_checkout(None))
            lookups.request(key)
            catalog = await lookups.get(key)
            assert isinstance(catalog, Catalog)
            policy = settings.release_age_policy()
            dated, finding = await lookups.evaluate(dep, catalog, policy, START, None, key)
            lookups.request_digest(key, "v1.1.0")
            digest = await lookups.digest(key, "v1.1.0")
    assert key[2] == base
    assert (finding.status, finding.current, finding.latest) == ("held-back", "v1.0.0", "v1.1.0")
    assert finding.eligible is None  # nothing newer is old enough yet
    assert [h.version for h in finding.held_back] == ["v1.1.0"]
    assert dated.release("v1.1.0") == Release(
        "v1.1.0",
        START - timedelta(hours=5),
        digest=fake_registry.github.commit_of(OWNER, REPO, "v1.1.0"),
    )
    assert digest == fake_registry.github.commit_of(OWNER, REPO, "v1.1.0")
    host = fake_registry.host("github")
    assert host.authorized_requests == host.requests
    assert not any("/commits/" in route for route in host.requests_by_route)


@pytest.mark.anyio
async def test_a_history_over_the_page_bound_is_refused_whole(
    fake_registry: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More pages than ``MAX_PAGES``: an error, never a short catalog, and no rows stored."""
    monkeypatch.setattr(github_releases, "MAX_PAGES", 2)
    monkeypatch.setattr(github_tags, "MAX_PAGES", 2)
    base = fake_registry.url("github")
    fake_registry.github.add_repo(OWNER, REPO, _history(250))
    path = tmp_path / "cache.sqlite3"
    with Cache.open(path) as cache:
        async with _fetcher(cache) as fetch:
            with pytest.raises(RegistryError, match=r"release list is too long \(more than 2"):
                await github_releases.get_catalog(fetch, base, PACKAGE)
            with pytest.raises(RegistryError, match=r"tag list is too long \(more than 2"):
                await github_tags.get_catalog(fetch, base, PACKAGE)
    assert _rows(path) == []
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM http_entries").fetchone() == (0,)


@pytest.mark.anyio
async def test_next_links_that_loop_are_an_error(fake_registry: FakeRegistry) -> None:
    """A page whose ``next`` is itself: the lookup fails instead of reading forever."""
    base = fake_registry.url("github")
    fake_registry.github.add_repo(OWNER, REPO, tags=["v1"])
    first = f"{base}/repos/{PACKAGE}/tags?per_page=100"
    link = {"Link": f'<{first}>; rel="next"'}
    fake_registry.host("github").fail_next(1, 200, link, b"[]", route=TAGS_ROUTE)
    async with _fetcher() as fetch:
        with pytest.raises(RegistryError, match="next-page links loop"):
            await github_tags.get_catalog(fetch, base, PACKAGE)


@pytest.mark.anyio
async def test_latest_is_the_newest_version_not_the_first_listed(
    fake_registry: FakeRegistry,
) -> None:
    """A backport published after a newer line (v1.13.5 after v1.14.0) is not latest.

    GitHub lists releases by creation time; an Actions row on ``github-releases`` (docker
    versioning) is measured against v1.14.0 and moves to it.
    """
    served = {
        "v1.13.5": START - timedelta(days=10),
        "v1.14.0": START - timedelta(days=20),
        "v1.13.4": START - timedelta(days=40),
    }
    fake_registry.github.add_repo(OWNER, REPO, served)
    async with _fetcher() as fetch:
        catalog = await github_releases.get_catalog(fetch, fake_registry.url("github"), PACKAGE)
    assert [r.version for r in catalog.releases] == list(served)  # creation order, kept
    dep = Dependency(
        manager="github_actions",
        file=".github/workflows/ci.yml",
        line=3,
        name=PACKAGE,
        package_name=PACKAGE,
        datasource=github_releases.ID,
        versioning="docker",
        dep_type="action",
        declared=f"{PACKAGE}@v1.13.4",
        constraint="v1.13.4",
    )
    finding = evaluate(dep, catalog, VERSIONINGS["docker"], ReleaseAgePolicy(), START)
    assert (finding.status, finding.latest, finding.eligible) == ("outdated", "v1.14.0", "v1.14.0")
    assert finding.update_type == "minor"
