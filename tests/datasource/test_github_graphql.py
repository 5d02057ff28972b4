"""GitHub GraphQL (token only): bounded ref resolution and error mapping, on the fake GitHub."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest

from patchula.cache import Cache
from patchula.credentials import RegistryAccess, github_credential
from patchula.datasource import github_releases, github_tags
from patchula.datasource.base import CredentialProbe, Dated, credential_source_of
from patchula.errors import PackageNotFound, RegistryError
from patchula.http.auth import StaticCredentials
from patchula.http.fetcher import Fetcher, Timer, make_client
from patchula.http.governor import RateLimited
from patchula.http.lazy import LazyFetcher
from patchula.lookup import Lookups
from patchula.settings import Settings
from tests.fake_registry import FakeRegistry

OWNER, REPO = "acme", "widget"
PACKAGE = f"{OWNER}/{REPO}"
TOKEN = "gh-STANDIN-not-a-token"  # noqa: S105 - a stand-in, never a real secret
START = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
GRAPHQL = "POST /graphql"


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        """Return the time the test set."""
        return self.now


@asynccontextmanager
async def _fetcher(
    base: str, cache: Cache | None = None, *, token: bool = True, clock: Clock | None = None
) -> AsyncIterator[Fetcher]:
    """A fetcher sending ``GH_TOKEN`` to ``base`` and its GraphQL endpoint (or no token)."""
    credentials = []
    if token:
        for url in {base, github_releases.graphql_url(base)}:
            credential = github_credential({"GH_TOKEN": TOKEN}, url)
            assert credential is not None
            credentials.append(credential)
    async with make_client() as client:
        yield Fetcher(
            client,
            cache=cache,
            credentials=StaticCredentials(credentials),
            timer=Timer(wall=clock or Clock()),
        )


async def _digests(fetch: Fetcher, base: str, refs: list[str]) -> dict[str, str | None]:
    """``get_digest`` of every ref, all at once (as a scan asks a row's refs)."""
    found: dict[str, str | None] = {}

    async def one(ref: str) -> None:
        found[ref] = await github_tags.get_digest(fetch, base, PACKAGE, ref)

    async with anyio.create_task_group() as tg:
        for ref in refs:
            tg.start_soon(one, ref)
    return found


def _repo(fake_registry: FakeRegistry) -> None:
    fake_registry.github.add_repo(
        OWNER,
        REPO,
        tags=["v4.1.0", "v4.2.2", "v4"],
        annotated={"v4.2.2"},
        branches={"main": "c" * 40},
    )


# --- ref resolution -----------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_rows_refs_resolve_in_one_graphql_query(fake_registry: FakeRegistry) -> None:
    """The refs asked at once cost ONE query: lightweight, annotated (followed), a branch."""
    base = fake_registry.url("github")
    _repo(fake_registry)
    async with _fetcher(base) as fetch:
        found = await _digests(fetch, base, ["v4.1.0", "v4.2.2", "main", "v9"])
    commit = fake_registry.github.commit_of
    assert found["v4.1.0"] == commit(OWNER, REPO, "v4.1.0")
    assert found["v4.2.2"] == commit(OWNER, REPO, "v4.2.2")  # the commit, not the tag object
    assert found["main"] == "c" * 40
    assert found["v9"] is None  # no such ref: REST says so too
    routes = fake_registry.host("github").requests_by_route
    assert routes["POST /graphql"] == 1
    assert routes[f"GET /repos/{PACKAGE}/git/matching-refs/tags/v9"] == 1  # the fallback
    assert not any("v4.1.0" in r or "v4.2.2" in r or "main" in r for r in routes)
    assert fake_registry.host("github").authorized_requests == fake_registry.host("github").requests


@pytest.mark.anyio
async def test_without_a_token_no_graphql_is_sent(fake_registry: FakeRegistry) -> None:
    """Anonymous: the REST lookups of before, and not a single POST."""
    base = fake_registry.url("github")
    _repo(fake_registry)
    async with _fetcher(base, token=False) as fetch:
        found = await _digests(fetch, base, ["v4.2.2", "main"])
    assert found["v4.2.2"] == fake_registry.github.commit_of(OWNER, REPO, "v4.2.2")
    assert found["main"] == "c" * 40
    routes = fake_registry.host("github").requests_by_route
    assert not any(route.startswith("POST") for route in routes)
    assert routes[f"GET /repos/{PACKAGE}/git/matching-refs/tags/v4.2.2"] == 1


@pytest.mark.anyio
async def test_a_ref_graphql_does_not_name_falls_back_to_rest(fake_registry: FakeRegistry) -> None:
    """A missing object in the GraphQL answer is asked per ref on REST; the others are not."""
    base = fake_registry.url("github")
    _repo(fake_registry)
    fake_registry.github.graphql_hidden = {"refs/tags/v4.2.2"}
    async with _fetcher(base) as fetch:
        found = await _digests(fetch, base, ["v4.1.0", "v4.2.2"])
    assert found["v4.2.2"] == fake_registry.github.commit_of(OWNER, REPO, "v4.2.2")
    routes = fake_registry.host("github").requests_by_route
    assert routes["POST /graphql"] == 1
    tag_object = fake_registry.github.tag_object_of(OWNER, REPO, "v4.2.2")
    assert routes[f"GET /repos/{PACKAGE}/git/matching-refs/tags/v4.2.2"] == 1
    assert routes[f"GET /repos/{PACKAGE}/git/tags/{tag_object}"] == 1
    assert f"GET /repos/{PACKAGE}/git/matching-refs/tags/v4.1.0" not in routes


@pytest.mark.anyio
async def test_a_moved_tag_is_seen_while_the_tag_catalog_is_reused(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A fresh, reused tag list still names the old commit; the ref read names the new one."""
    base = fake_registry.url("github")
    _repo(fake_registry)
    fake_registry.host("github").cache_control = "max-age=3600"
    moved = "d" * 40
    with Cache.open(tmp_path / "cache.sqlite3") as cache:
        async with _fetcher(base, cache) as fetch:
            before = await github_tags.get_catalog(fetch, base, PACKAGE)
            old = await github_tags.get_digest(fetch, base, PACKAGE, "v4")
            fake_registry.github.move_tag(OWNER, REPO, "v4", moved)
            # The same row asks again with another ref beside it (a new batch, a new query).
            again = await github_tags.get_catalog(fetch, base, PACKAGE)
            new = (await _digests(fetch, base, ["v4", "v4.1.0"]))["v4"]
    v4 = before.release("v4")
    assert v4 is not None
    assert old == v4.digest == fake_registry.github.commit_of(OWNER, REPO, "v4")
    assert again.reused
    reused = again.release("v4")
    assert reused is not None
    assert reused.digest == old  # the reused catalog is not revalidated …
    assert new == moved  # … and does not freeze the tag's commit


@pytest.mark.anyio
async def test_refs_over_the_query_bound_take_more_queries(fake_registry: FakeRegistry) -> None:
    """Each query names at most MAX_REFS_PER_QUERY refs; a larger batch is split."""
    base = fake_registry.url("github")
    count = github_tags.MAX_REFS_PER_QUERY + 5
    tags = [f"v1.0.{n}" for n in range(count)]
    fake_registry.github.add_repo(OWNER, REPO, tags=tags)
    async with _fetcher(base) as fetch:
        found = await _digests(fetch, base, tags)
    assert found == {tag: fake_registry.github.commit_of(OWNER, REPO, tag) for tag in tags}
    assert fake_registry.host("github").requests_by_route == {"POST /graphql": 2}
    sizes = [query.count("ref(qualifiedName") for query in fake_registry.github.graphql_queries]
    assert sizes == [2 * github_tags.MAX_REFS_PER_QUERY, 2 * 5]


def test_ref_names_travel_as_variables_never_in_the_query() -> None:
    """A ref with quotes or braces cannot change the query: the text names only variables."""
    query = github_tags.refs_query(2)
    assert "$t0" in query
    assert "$h1" in query
    assert '"' not in query


@pytest.mark.anyio
async def test_ghes_graphql_is_under_api_graphql(fake_registry: FakeRegistry) -> None:
    """A GitHub Enterprise Server base ``…/api/v3`` sends GraphQL to ``…/api/graphql``."""
    base = f"{fake_registry.url('github')}/api/v3"
    _repo(fake_registry)
    async with _fetcher(base) as fetch:
        found = await _digests(fetch, base, ["v4.2.2", "v4"])
    assert found["v4.2.2"] == fake_registry.github.commit_of(OWNER, REPO, "v4.2.2")
    assert fake_registry.host("github").requests_by_route == {"POST /api/graphql": 1}


# --- errors -------------------------------------------------------------------------------


def _error(kind: str | None, message: str, path: list[str] | None = None) -> dict[str, object]:
    error: dict[str, object] = {"message": message}
    if kind is not None:
        error["type"] = kind
    if path is not None:
        error["path"] = path
    return error


@pytest.mark.anyio
async def test_a_rate_limited_answer_with_200_is_a_rate_limit(fake_registry: FakeRegistry) -> None:
    """GitHub's spent GraphQL budget (HTTP 200, ``RATE_LIMITED``) fails as ``RateLimited``.

    The governor reads the refusal (it is never returned nor cached), retries it on the short
    back-off (no real sleeps here) and fails the lookup when the retries are spent.
    """
    base = fake_registry.url("github")
    _repo(fake_registry)
    message = "API rate limit exceeded for user ID 1."
    refusal = {"data": None, "errors": [_error("RATE_LIMITED", message)]}
    fake_registry.github.graphql_replies = [refusal] * 4  # the request and its three retries
    slept: list[float] = []

    async def sleep(seconds: float) -> None:  # a clock that moves only when slept on
        slept.append(seconds)

    async with _fetcher(base) as fetch:
        timer = Timer(monotonic=lambda: sum(slept), wall=Clock(), sleep=sleep)
        fetch.governor.timer = fetch._timer = timer
        with pytest.raises(RateLimited) as failed:
            await github_tags.get_digest(fetch, base, PACKAGE, "v4")
    assert fake_registry.github.graphql_replies == []  # all four answers were asked for
    assert len(slept) == 3
    assert TOKEN not in failed.value.reason


@pytest.mark.anyio
async def test_an_unknown_repository_is_not_found(fake_registry: FakeRegistry) -> None:
    """``NOT_FOUND`` at ``repository`` is ``PackageNotFound``, as a REST 404 would be."""
    base = fake_registry.url("github")
    async with _fetcher(base) as fetch:
        with pytest.raises(PackageNotFound) as failed:
            await github_tags.get_digest(fetch, base, PACKAGE, "v4")
    assert "Could not resolve to a Repository" in failed.value.reason


@pytest.mark.anyio
async def test_other_errors_are_registry_errors_and_never_stored(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """An error answer names GitHub's message (one line, bounded) and is not cached."""
    base = fake_registry.url("github")
    _repo(fake_registry)
    fake_registry.host("github").cache_control = "max-age=3600"
    long = "Something went wrong\nwhile executing your query. " + "x" * 500
    fake_registry.github.graphql_replies = [{"errors": [_error("INTERNAL", long)]}]
    with Cache.open(tmp_path / "cache.sqlite3") as cache:
        async with _fetcher(base, cache) as fetch:
            with pytest.raises(RegistryError) as failed:
                await github_tags.get_digest(fetch, base, PACKAGE, "v4")
            found = await github_tags.get_digest(fetch, base, PACKAGE, "v4")
    reason = failed.value.reason
    assert "GitHub GraphQL refused the query (INTERNAL): Something went wrong while" in reason
    assert "\n" not in reason
    assert len(reason) < 300
    assert found == fake_registry.github.commit_of(OWNER, REPO, "v4")
    assert fake_registry.host("github").requests_by_route == {"POST /graphql": 2}


@pytest.mark.anyio
async def test_a_partial_answer_uses_its_data_and_asks_rest_for_the_rest(
    fake_registry: FakeRegistry,
) -> None:
    """Data with errors at some aliases: those refs fall back to REST, the others are used."""
    base = fake_registry.url("github")
    _repo(fake_registry)
    sha = fake_registry.github.commit_of(OWNER, REPO, "v4.1.0")
    data = {
        "repository": {
            "t0": {"target": {"__typename": "Commit", "oid": sha}},
            "h0": None,
            "t1": None,
            "h1": None,
        }
    }
    error = _error("FORBIDDEN", "Resource not accessible", ["repository", "t1"])
    fake_registry.github.graphql_replies = [{"data": data, "errors": [error]}]
    async with _fetcher(base) as fetch:
        found = await github_tags.resolve_refs(fetch, base, PACKAGE, ["v4.1.0", "v4.2.2"])
        rest = await github_tags.get_digest(fetch, base, PACKAGE, "v4.2.2")
    assert found == {"v4.1.0": sha, "v4.2.2": None}
    assert rest == fake_registry.github.commit_of(OWNER, REPO, "v4.2.2")


@pytest.mark.anyio
async def test_a_refused_token_names_its_variable_only(fake_registry: FakeRegistry) -> None:
    """A 401 on GraphQL names ``GH_TOKEN``, never the token."""
    base = fake_registry.url("github")
    _repo(fake_registry)
    fake_registry.host("github").required_authorization = "Bearer the-right-one"
    async with _fetcher(base) as fetch:
        with pytest.raises(RegistryError) as failed:
            await github_tags.get_digest(fetch, base, PACKAGE, "v4")
    assert "HTTP 401" in failed.value.reason
    assert "the credential from GH_TOKEN was refused" in failed.value.reason
    assert TOKEN not in failed.value.reason


@pytest.mark.anyio
async def test_an_oversized_query_is_refused_before_it_is_sent(
    fake_registry: FakeRegistry,
) -> None:
    """A query body over MAX_QUERY_BYTES is a RegistryError and no request."""
    base = fake_registry.url("github")
    variables = {"x": "y" * github_releases.MAX_QUERY_BYTES}
    async with _fetcher(base) as fetch:
        with pytest.raises(RegistryError, match="GraphQL query would be"):
            await github_releases.graphql(fetch, base, "query { x }", variables, what="w")
    assert fake_registry.host("github").requests == 0


def test_an_answer_that_is_no_graphql_response_is_refused() -> None:
    """Not JSON, or no data and no errors: a RegistryError saying so."""
    with pytest.raises(RegistryError, match="unusable answer"):
        github_releases.derive_graphql(b"<html>")
    with pytest.raises(RegistryError, match="no data and no errors"):
        github_releases.derive_graphql(b"{}")


# --- histories ------------------------------------------------------------------------------


def _history(count: int, *, start: int = 0) -> dict[str, datetime]:
    """``count`` releases newest first: ``v1.0.<start+count-1>`` … ``v1.0.<start>``."""
    numbers = range(start + count - 1, start - 1, -1)
    return {f"v1.0.{n}": START - timedelta(days=1000 - n) for n in numbers}


def _rows(path: Path, source: str) -> list[tuple[str, str | None]]:
    """The stored release rows ``(version, digest)`` of ``source``, newest first."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT version, digest FROM releases WHERE source = ? ORDER BY position", (source,)
        ).fetchall()
    return [(row[0], row[1]) for row in rows]


@pytest.mark.anyio
async def test_a_release_history_in_three_pages_then_a_refresh_of_one(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """250 releases are three GraphQL pages in rows; two new ones later cost one page."""
    base = fake_registry.url("github")
    host = fake_registry.host("github")
    history = _history(250)
    fake_registry.github.add_repo(OWNER, REPO, history, prerelease={"v1.0.3"}, draft={"v1.0.7"})
    path = tmp_path / "cache.sqlite3"
    clock = Clock()
    with Cache.open(path) as cache:
        async with _fetcher(base, cache, clock=clock) as fetch:
            first = await github_releases.get_catalog(fetch, base, PACKAGE)
            assert host.requests_by_route == {GRAPHQL: 3}
            newer = {"v1.0.251": START - timedelta(hours=1), "v1.0.250": START - timedelta(hours=2)}
            fake_registry.github.add_repo(OWNER, REPO, newer | history)
            host.reset_stats()
            clock.now += timedelta(hours=1)  # past the answers' max-age
            second = await github_releases.get_catalog(fetch, base, PACKAGE)
    expected = [v for v in history if v != "v1.0.7"]  # the draft is no release
    assert [r.version for r in first.releases] == expected
    pre = first.release("v1.0.3")
    assert pre is not None
    assert pre.prerelease
    assert first.release("v1.0.249") is not None
    assert first.source_url == f"{base}/graphql"
    assert host.requests_by_route == {GRAPHQL: 1}  # page 1 held a known release
    assert [r.version for r in second.releases] == [*newer, *expected]
    assert second.releases[0].released_at == newer["v1.0.251"]
    assert [v for v, _ in _rows(path, github_releases.GRAPHQL_SOURCE)] == [*newer, *expected]
    cursors = [q for q in fake_registry.github.graphql_queries if "after: $after" in q]
    assert len(cursors) == 4


@pytest.mark.anyio
async def test_a_disjoint_graphql_refresh_prefix_follows_its_after_anchor(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """150 new releases: page 1 all new, page 2 ends in a known one; upstream's order kept."""
    base = fake_registry.url("github")
    host = fake_registry.host("github")
    old = _history(120)
    fake_registry.github.add_repo(OWNER, REPO, old)
    path = tmp_path / "cache.sqlite3"
    clock = Clock()
    with Cache.open(path) as cache:
        async with _fetcher(base, cache, clock=clock) as fetch:
            await github_releases.get_catalog(fetch, base, PACKAGE)
            new = _history(150, start=120)
            fake_registry.github.add_repo(OWNER, REPO, new | old)
            host.reset_stats()
            clock.now += timedelta(hours=1)
            catalog = await github_releases.get_catalog(fetch, base, PACKAGE)
    assert host.requests_by_route == {GRAPHQL: 2}
    assert [r.version for r in catalog.releases] == [*new, *old]
    assert [v for v, _ in _rows(path, github_releases.GRAPHQL_SOURCE)] == [*new, *old]


@pytest.mark.anyio
async def test_a_fresh_unchanged_head_reads_nothing_more(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Within the answers' freshness the first page is reused and the rows answer."""
    base = fake_registry.url("github")
    fake_registry.github.add_repo(OWNER, REPO, _history(150))
    with Cache.open(tmp_path / "cache.sqlite3") as cache:
        async with _fetcher(base, cache) as fetch:
            await github_releases.get_catalog(fetch, base, PACKAGE)
            fake_registry.host("github").reset_stats()
            again = await github_releases.get_catalog(fetch, base, PACKAGE)
    assert fake_registry.host("github").requests == 0
    assert len(again.releases) == 150
    assert again.reused


@pytest.mark.anyio
async def test_graphql_costs_fewer_requests_than_rest_for_the_same_history(
    fake_registry: FakeRegistry,
) -> None:
    """Tags and the dates of tags without a release: GraphQL needs no commit lookups."""
    base = fake_registry.url("github")
    releases = _history(150)
    plain = {f"v0.9.{n}": START - timedelta(days=2000 - n) for n in range(5)}
    fake_registry.github.add_repo(OWNER, REPO, releases, tags=plain)
    wanted = [*plain, "v1.0.149"]
    host = fake_registry.host("github")
    answers = {}
    for token in (False, True):
        host.reset_stats()
        async with _fetcher(base, token=token) as fetch:
            catalog = await github_tags.get_catalog(fetch, base, PACKAGE)
            times = await github_tags.release_times(fetch, {"github": base}, PACKAGE, wanted)
        answers[token] = (host.requests, {r.version: r.digest for r in catalog.releases}, times)
    rest, graph = answers[False], answers[True]
    assert graph[1] == rest[1]  # the same tags and commits
    dated = {tag: Dated(moment, "commit") for tag, moment in plain.items()}
    assert graph[2] == rest[2] == {**dated, "v1.0.149": Dated(releases["v1.0.149"], "release")}
    # Without a cache the dates read the tag pages again: tags, releases, tags, then REST
    # asks a commit per plain tag, where the GraphQL tag history carries every commit date.
    assert rest[0] == 2 + 2 + 2 + 5
    assert graph[0] == 2 + 2 + 2
    assert graph[0] < rest[0]


@pytest.mark.anyio
async def test_a_moved_floating_tag_never_hides_the_new_tag_beside_it(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``v4`` moved to the new release's commit is listed first: refreshed, and no stop there."""
    base = fake_registry.url("github")
    host = fake_registry.host("github")
    day = timedelta(days=1)
    old = {"v4.2.2": START - 2 * day, "v4": START - 2 * day, "v4.2.1": START - 3 * day}
    fake_registry.github.add_repo(OWNER, REPO, tags=old, annotated={"v4.2.2"})
    path = tmp_path / "cache.sqlite3"
    clock = Clock()
    moved = "e" * 40
    with Cache.open(path) as cache:
        async with _fetcher(base, cache, clock=clock) as fetch:
            before = await github_tags.get_catalog(fetch, base, PACKAGE)
            # v4 now comes first (listed before v4.3.0 on the same date).
            new = {"v4": START - day, "v4.3.0": START - day, "v4.2.2": old["v4.2.2"]}
            fake_registry.github.add_repo(OWNER, REPO, tags={**old, **new}, annotated={"v4.2.2"})
            fake_registry.github.move_tag(OWNER, REPO, "v4", moved)
            host.reset_stats()
            clock.now += timedelta(hours=1)
            after = await github_tags.get_catalog(fetch, base, PACKAGE)
    commit = fake_registry.github.commit_of
    assert {r.version: r.digest for r in before.releases} == {
        tag: commit(OWNER, REPO, tag) for tag in old
    }
    assert {r.version: r.digest for r in after.releases} == {
        "v4": moved,
        "v4.3.0": commit(OWNER, REPO, "v4.3.0"),
        "v4.2.2": commit(OWNER, REPO, "v4.2.2"),  # the annotated tag's commit
        "v4.2.1": commit(OWNER, REPO, "v4.2.1"),
    }
    assert host.requests_by_route == {GRAPHQL: 1}
    stored = dict(_rows(path, github_tags.GRAPHQL_SOURCE))
    assert stored["v4"] == moved
    assert "v4.3.0" in stored


@pytest.mark.anyio
async def test_history_cursors_that_loop_are_an_error(fake_registry: FakeRegistry) -> None:
    """A next page whose cursor was read already fails the lookup instead of reading forever."""
    base = fake_registry.url("github")
    page = {
        "releases": {
            "nodes": [{"tagName": "v1", "publishedAt": None}],
            "pageInfo": {"hasNextPage": True, "endCursor": "Y3Vyc29yOjA="},
        }
    }
    fake_registry.github.graphql_replies = [{"data": {"repository": page}}] * 3
    async with _fetcher(base) as fetch:
        with pytest.raises(RegistryError, match="next-page cursors loop"):
            await github_releases.get_catalog(fetch, base, PACKAGE)
    assert fake_registry.host("github").requests == 2


@pytest.mark.anyio
async def test_a_history_with_errors_stores_nothing(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A partial page is no history: the lookup fails and no release row is stored."""
    base = fake_registry.url("github")
    fake_registry.github.add_repo(OWNER, REPO, _history(150))
    partial = {
        "data": {"repository": {"releases": None}},
        "errors": [_error("TIMEOUT", "timed out", ["repository", "releases"])],
    }
    path = tmp_path / "cache.sqlite3"
    with Cache.open(path) as cache:
        async with _fetcher(base, cache) as fetch:
            fake_registry.github.graphql_replies = [partial]
            with pytest.raises(RegistryError, match="timed out"):
                await github_releases.get_catalog(fetch, base, PACKAGE)
    assert _rows(path, github_releases.GRAPHQL_SOURCE) == []


# --- the run's facade -------------------------------------------------------------------------


def test_the_run_facades_name_the_token_source_never_the_token(tmp_path: Path) -> None:
    """``Fetcher`` and ``LazyFetcher`` are ``CredentialProbe``s: the source, for its scope only."""
    settings = Settings()
    access = RegistryAccess(settings, env={"GITHUB_TOKEN": TOKEN}, home=tmp_path)
    fetcher = Fetcher(credentials=access)
    lazy = LazyFetcher(lambda: fetcher)
    for facade in (fetcher, lazy):
        assert isinstance(facade, CredentialProbe)
        assert credential_source_of(facade, "https://api.github.com/graphql") == "GITHUB_TOKEN"
        assert credential_source_of(facade, "https://registry.npmjs.org/x") is None
    assert credential_source_of(Fetcher(), "https://api.github.com/graphql") is None


@pytest.mark.anyio
async def test_a_runs_digest_reads_of_one_repository_share_one_query(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Through the run's lookups (``GH_TOKEN`` from the environment): two refs, one query."""
    base = fake_registry.url("github")
    _repo(fake_registry)
    fake_registry.host("github").required_authorization = f"Bearer {TOKEN}"
    settings = Settings.model_validate({"registries": {"github": base}})
    access = RegistryAccess(settings, env={"GH_TOKEN": TOKEN}, home=tmp_path)
    async with make_client() as client:
        fetch = Fetcher(client, timer=Timer(wall=Clock()), credentials=access)
        async with anyio.create_task_group() as tg:
            lookups = Lookups(tg, fetch, settings, access)
            key = lookups.key("github-tags", PACKAGE, access.for_checkout(None))
            lookups.request_digest(key, "v4.2.2")
            lookups.request_digest(key, "v4")
            pinned = await lookups.digest(key, "v4.2.2")
            floating = await lookups.digest(key, "v4")
    assert pinned == fake_registry.github.commit_of(OWNER, REPO, "v4.2.2")
    assert floating == fake_registry.github.commit_of(OWNER, REPO, "v4")
    assert fake_registry.host("github").requests_by_route == {GRAPHQL: 1}


def test_the_largest_ref_batch_fits_the_query_bound() -> None:
    """MAX_REFS_PER_QUERY refs of the longest allowed name still make a query under the bound."""
    count = github_tags.MAX_REFS_PER_QUERY
    name = "v" * 255
    variables = {"owner": "o" * 39, "name": "r" * 100}
    for i in range(count):
        variables |= {f"t{i}": f"refs/tags/{name}", f"h{i}": f"refs/heads/{name}"}
    body = json.dumps({"query": github_tags.refs_query(count), "variables": variables})
    assert len(body.encode()) < github_releases.MAX_QUERY_BYTES


def test_history_pages_of_another_shape_are_registry_errors() -> None:
    """A ``refs`` connection that is not one (or nests without end) is an unusable answer."""
    with pytest.raises(RegistryError, match="unusable GraphQL answer"):
        github_tags.graphql_tag_rows({"repository": {"refs": {"nodes": 3}}})
    with pytest.raises(RegistryError, match="answered no repository"):
        github_releases.graphql_release_rows({"repository": None})
    deep: dict[str, object] = {"__typename": "Tag", "oid": "a" * 40}
    for _ in range(5000):
        deep = {"__typename": "Tag", "oid": "a" * 40, "target": deep}
    page = {"nodes": [{"name": "v1", "target": deep}], "pageInfo": {"hasNextPage": False}}
    with pytest.raises(RegistryError, match="recursion limit exceeded"):
        github_tags.graphql_tag_rows({"repository": {"refs": page}})
