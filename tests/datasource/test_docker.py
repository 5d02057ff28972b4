"""The ``docker`` datasource (OCI distribution v2, Docker Hub tag API), on the fake registry."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from patchula.cache import Cache
from patchula.datasource import docker
from patchula.datasource.base import Unavailable, next_link
from patchula.errors import PackageNotFound, RegistryError
from patchula.http.fetcher import Fetcher, Timer, make_client
from patchula.http.governor import RateLimited
from patchula.http.lazy import LazyFetcher
from patchula.models import FetchResponse
from tests.fake_registry import FakeRegistry

START = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
PUSHED = datetime(2026, 10, 3, 8, 30, tzinfo=UTC)
IMAGE = "acme/app"
TAGS = [f"1.{minor}.{patch}" for minor in range(4) for patch in range(3)]  # 12 tags
TAGS_ROUTE = f"GET /v2/{IMAGE}/tags/list"
MANIFEST = f"/v2/{IMAGE}/manifests/1.0.0"


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        """Return the time the test set."""
        return self.now


def _package(registry: FakeRegistry, image: str = IMAGE) -> str:
    """The canonical ``<host:port>/<repository>`` of ``image`` on the fake OCI host."""
    return f"{registry.url('oci').removeprefix('http://')}/{image}"


@pytest.fixture
def oci(fake_registry: FakeRegistry) -> FakeRegistry:
    """The fake registry with anonymous ``/v2/`` access and ``acme/app`` (12 tags)."""
    fake_registry.oci.anonymous = True
    fake_registry.oci.add(IMAGE, dict.fromkeys(TAGS))
    return fake_registry


@asynccontextmanager
async def _fetcher(
    cache: Cache | None = None, clock: Clock | None = None
) -> AsyncIterator[Fetcher]:
    async with make_client() as client:
        yield Fetcher(client, cache=cache, timer=Timer(wall=clock or Clock()))


def _stored(path: Path, representation: str) -> int:
    """How many entries of ``representation`` the closed cache file holds."""
    with sqlite3.connect(path) as conn:
        (count,) = conn.execute(
            "SELECT count(*) FROM http_entries WHERE representation = ?", (representation,)
        ).fetchone()
    return int(count)


# --- tags -----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_three_page_tag_list_is_read_whole(oci: FakeRegistry) -> None:
    """With at most 5 tags a page, the 12 tags come from three pages linked by ``Link``."""
    oci.oci.max_page_size = 5
    async with _fetcher() as fetch:
        catalog = await docker.get_catalog(fetch, oci.url("oci"), _package(oci))
    assert [r.version for r in catalog.releases] == sorted(TAGS)
    assert all(r.released_at is None for r in catalog.releases)
    assert catalog.latest is None
    assert catalog.time_source == docker.TIME_SOURCE
    assert catalog.source_url == f"{oci.url('oci')}/v2/{IMAGE}/tags/list?n=1000"
    assert oci.host("oci").requests_by_route[TAGS_ROUTE] == 3
    assert [entry.path.partition("?")[2] for entry in oci.host("oci").log] == [
        "n=1000",
        "last=1.1.1&n=5",
        "last=1.3.0&n=5",
    ]


@pytest.mark.anyio
async def test_absolute_same_origin_links_are_followed(oci: FakeRegistry) -> None:
    """A ``Link`` with an absolute URL on the registry's own origin is followed."""
    oci.oci.max_page_size = 5
    oci.oci.link_base = oci.url("oci")
    async with _fetcher() as fetch:
        catalog = await docker.get_catalog(fetch, oci.url("oci"), _package(oci))
    assert len(catalog.releases) == len(TAGS)
    assert oci.host("oci").requests_by_route[TAGS_ROUTE] == 3


@pytest.mark.anyio
async def test_a_link_to_another_host_is_refused(oci: FakeRegistry) -> None:
    """A next-page ``Link`` to another origin fails the lookup, and nothing is sent there."""
    oci.oci.max_page_size = 5
    oci.oci.link_base = oci.url("npm")
    async with _fetcher() as fetch:
        with pytest.raises(RegistryError, match="next page is on another host"):
            await docker.get_catalog(fetch, oci.url("oci"), _package(oci))
    assert oci.host("npm").requests == 0
    assert oci.host("oci").requests_by_route[TAGS_ROUTE] == 1


@pytest.mark.anyio
async def test_a_429_on_page_two_stores_nothing(oci: FakeRegistry, tmp_path: Path) -> None:
    """Page 1 arrived, page 2 was rate limited: the lookup fails and no page is cached."""
    oci.oci.max_page_size = 5
    oci.oci.rate_limit_tag_page(2, n=1, retry_after="120")  # over the 60 s bound: no retry
    path = tmp_path / "cache.sqlite3"
    cache = Cache.open(path)
    async with _fetcher(cache) as fetch:
        with pytest.raises(RateLimited, match="rate limited"):
            await docker.get_catalog(fetch, oci.url("oci"), _package(oci))
    cache.close()
    assert oci.host("oci").requests_by_route[TAGS_ROUTE] == 2
    assert _stored(path, docker.TAGS_REPRESENTATION) == 0


@pytest.mark.anyio
async def test_a_complete_list_is_stored_and_reused(oci: FakeRegistry, tmp_path: Path) -> None:
    """All three pages are stored (Link kept): a second lookup while fresh sends nothing."""
    oci.oci.max_page_size = 5
    path = tmp_path / "cache.sqlite3"
    cache = Cache.open(path)
    async with _fetcher(cache) as fetch:
        cold = await docker.get_catalog(fetch, oci.url("oci"), _package(oci))
        warm = await docker.get_catalog(fetch, oci.url("oci"), _package(oci))
    cache.close()
    assert [r.version for r in warm.releases] == [r.version for r in cold.releases]
    assert (cold.reused, warm.reused) == (False, True)
    assert oci.host("oci").requests_by_route[TAGS_ROUTE] == 3
    assert _stored(path, docker.TAGS_REPRESENTATION) == 3


@pytest.mark.anyio
@pytest.mark.parametrize("validators", [False, True])
async def test_the_freshness_floor_keeps_validator_free_pages(
    oci: FakeRegistry,
    tmp_path: Path,
    validators: bool,  # noqa: FBT001 - parametrized
) -> None:
    """Floored ``oci-tags-v1`` pages without validators are reused whole (their Link kept)."""
    host = oci.host("oci")
    oci.oci.max_page_size = 5
    host.validators = validators
    host.cache_control = None  # no upstream freshness: only the floor can keep a page
    clock = Clock()
    cache = Cache.open(tmp_path / "cache.sqlite3")
    async with _fetcher(cache, clock) as fetch:
        fetch.keep_fresh(docker.FRESHNESS_FLOOR_REPRESENTATIONS, 3600, unvalidated_only=True)
        await docker.get_catalog(fetch, oci.url("oci"), _package(oci))
        clock.now = START + timedelta(seconds=1800)
        warm = await docker.get_catalog(fetch, oci.url("oci"), _package(oci))
    cache.close()
    assert len(warm.releases) == len(TAGS)
    # Without validators the floor answers all three pages; with them each is revalidated.
    assert host.requests_by_route[TAGS_ROUTE] == (6 if validators else 3)
    assert warm.reused is not validators
    assert host.not_modified == (3 if validators else 0)


@pytest.mark.anyio
async def test_too_many_pages_is_an_error(
    oci: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A list longer than the page bound fails (never a short catalog) and stores nothing."""
    monkeypatch.setattr(docker, "MAX_PAGES", 2)
    oci.oci.max_page_size = 5
    path = tmp_path / "cache.sqlite3"
    cache = Cache.open(path)
    async with _fetcher(cache) as fetch:
        with pytest.raises(RegistryError, match=r"too long \(more than 2 pages\)"):
            await docker.get_catalog(fetch, oci.url("oci"), _package(oci))
    cache.close()
    assert oci.host("oci").requests_by_route[TAGS_ROUTE] == 2
    assert _stored(path, docker.TAGS_REPRESENTATION) == 0


@pytest.mark.anyio
async def test_too_many_tags_is_an_error(
    oci: FakeRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More tags than the tag bound fail the lookup with the reason."""
    monkeypatch.setattr(docker, "MAX_TAGS", 10)
    async with _fetcher() as fetch:
        with pytest.raises(RegistryError, match=r"more than 10 tags"):
            await docker.get_catalog(fetch, oci.url("oci"), _package(oci))


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"<html>gateway</html>", "unusable tag list page (HTML, not JSON)"),
        (b"{<html>", "unusable tag list page (Invalid JSON"),
        (b'{"name": "acme/app", "tags": [1, 2]}', "Expected `str`, got `int`"),
        (b'["1.0"]', "unusable tag list page (Expected `object`"),
        (b'{"name": "other/img", "tags": ["1.0"]}', "for another repository ('other/img')"),
    ],
)
async def test_a_malformed_page_is_a_registry_error(
    oci: FakeRegistry, body: bytes, reason: str
) -> None:
    """A page that is not the documented object (or names another repository) is refused."""
    oci.host("oci").fail_next(1, 200, {}, body, route=TAGS_ROUTE)
    async with _fetcher() as fetch:
        with pytest.raises(RegistryError) as caught:
            await docker.get_catalog(fetch, oci.url("oci"), _package(oci))
    assert reason.replace("`", "") in str(caught.value).replace("`", "")


@pytest.mark.anyio
async def test_unknown_image_is_not_found(oci: FakeRegistry) -> None:
    """``NAME_UNKNOWN`` (404) is ``PackageNotFound``."""
    async with _fetcher() as fetch:
        with pytest.raises(PackageNotFound, match="not found"):
            await docker.get_catalog(fetch, oci.url("oci"), _package(oci, "acme/missing"))


@pytest.mark.anyio
async def test_unauthorized_names_the_docker_config(oci: FakeRegistry) -> None:
    """A 401 says no credential is configured and where one goes (``~/.docker/config.json``).

    The registry's token service wants a login (a private image): the anonymous token request
    is refused, so the registry's 401 is the answer.
    """
    oci.oci.anonymous = False
    oci.oci.token_credential = "Basic dGVzdDp0ZXN0"  # noqa: S105 - a test stand-in login
    async with _fetcher() as fetch:
        with pytest.raises(RegistryError, match=r"HTTP 401 .*~/\.docker/config\.json"):
            await docker.get_catalog(fetch, oci.url("oci"), _package(oci))


@pytest.mark.anyio
async def test_a_public_image_is_read_through_an_anonymous_pull_token(oci: FakeRegistry) -> None:
    """Tags and a HEAD digest of an image whose registry wants a bearer token for every call."""
    oci.oci.anonymous = False
    async with _fetcher() as fetch:
        catalog = await docker.get_catalog(fetch, oci.url("oci"), _package(oci))
        digest = await docker.get_digest(
            fetch, oci.url("oci"), _package(oci), catalog.releases[0].version
        )
    assert catalog.releases
    assert digest is not None
    assert digest.startswith("sha256:")
    assert oci.oci.token_requests == 1


@pytest.mark.anyio
async def test_every_v2_request_names_its_token_scope(oci: FakeRegistry) -> None:
    """Tag pages and manifest requests carry ``scope=repository:<name>:pull``."""
    oci.oci.max_page_size = 5
    scopes: list[tuple[str, str | None]] = []
    async with _fetcher() as fetcher:

        async def fetch(url: str, **kwargs: object) -> FetchResponse:
            scopes.append((str(kwargs.get("method", "GET")), kwargs.get("scope")))  # type: ignore[arg-type]
            return await fetcher(url, **kwargs)  # type: ignore[arg-type]

        fetch.all_or_nothing = fetcher.all_or_nothing  # type: ignore[attr-defined]
        await docker.get_catalog(fetch, oci.url("oci"), _package(oci))
        oci.oci.omit_digest_header = True
        await docker.get_digest(fetch, oci.url("oci"), _package(oci), "1.0.0")
    assert scopes == [("GET", f"repository:{IMAGE}:pull")] * 3 + [
        ("HEAD", f"repository:{IMAGE}:pull"),
        ("GET", f"repository:{IMAGE}:pull"),
    ]


@pytest.mark.anyio
async def test_the_lazy_fetcher_forwards_scope_and_groups(oci: FakeRegistry) -> None:
    """Through the run's ``LazyFetcher`` (scope and ``all_or_nothing`` forwarded) it works too."""
    async with make_client() as client:
        lazy = LazyFetcher(lambda: Fetcher(client))
        catalog = await docker.get_catalog(lazy, oci.url("oci"), _package(oci))
        digest = await docker.get_digest(lazy, oci.url("oci"), _package(oci), "1.0.0")
    assert len(catalog.releases) == len(TAGS)
    assert digest is not None
    assert digest.startswith("sha256:")


def test_invalid_repository_is_never_requested() -> None:
    """A package name without a repository, or breaking the name grammar, is refused."""
    for name in ("docker.io", "docker.io/Library/Python", "ghcr.io/a//b", "h/../etc"):
        with pytest.raises(RegistryError, match="refusing to request"):
            docker.repository_of(name)
    assert docker.repository_of("localhost:5000/a/b") == "a/b"
    assert docker.repository_of("docker.io/library/python") == "library/python"


# --- the compact document --------------------------------------------------------------------


def _python_like_tags() -> list[str]:
    variants = ["", "-slim", "-slim-bookworm", "-slim-bullseye", "-alpine", "-alpine3.20"]
    versions = [f"3.{minor}.{patch}" for minor in range(8, 14) for patch in range(12)]
    return sorted(f"{v}{suffix}" for v in versions for suffix in variants)


def test_compact_tags_are_much_smaller_and_decode_to_the_same_tags() -> None:
    """``oci-tags-v1`` keeps only the tags, front-coded: under half the raw page, same tags."""
    tags = _python_like_tags()
    raw = json.dumps({"name": "library/python", "tags": tags}).encode()
    compact = docker.derive_tags(raw, repository="library/python")
    assert len(compact) < len(raw) / 2
    assert docker.parse_tags_compact(compact, repository="library/python") == tags


def test_compact_tags_keep_order_and_drop_invalid_tags() -> None:
    """Registry order is kept; tags no reference could name are dropped; ``null`` is empty."""
    raw = b'{"name":"a/b","tags":["latest","1.0","-bad","has space","1.0-rc1",".x"]}'
    compact = docker.derive_tags(raw, repository="a/b")
    assert docker.parse_tags_compact(compact, repository="a/b") == ["latest", "1.0", "1.0-rc1"]
    assert docker.derive_tags(b'{"name":"a/b","tags":null}', repository="a/b") == b""
    assert docker.parse_tags_compact(b"", repository="a/b") == []


@pytest.mark.parametrize("damaged", [b"x 1.0", b"5 1.0", b"0 1.0\n9 x"])
def test_a_damaged_compact_document_is_a_registry_error(damaged: bytes) -> None:
    """A stored document that does not decode is refused, not read in part."""
    with pytest.raises(RegistryError, match="unusable oci-tags-v1"):
        docker.parse_tags_compact(damaged, repository="a/b")


# --- Link headers ----------------------------------------------------------------------------


def _page(url: str, *links: str) -> FetchResponse:
    return FetchResponse(200, url, tuple(("link", link) for link in links), b"", START)


@pytest.mark.parametrize(
    ("links", "expected"),
    [
        ((), None),
        (
            ('</v2/a/tags/list?last=x&n=5>; rel="next"',),
            "https://r.example/v2/a/tags/list?last=x&n=5",
        ),
        (("<?last=y>; rel=next",), "https://r.example/v2/a/tags/list?last=y"),
        (('</p>; rel="prev", </n>; rel="last next"',), "https://r.example/n"),
        (('</p>; rel="prev"', '</n>; title="a, b"; REL="Next"'), "https://r.example/n"),
        (('<https://r.example:443/n>; rel="next"',), "https://r.example:443/n"),
        (('</p>; rel="prev"',), None),
    ],
)
def test_next_page_links(links: tuple[str, ...], expected: str | None) -> None:
    """``rel="next"`` is found among links and parameters (RFC 8288) and resolved."""
    url = "https://r.example/v2/a/tags/list?n=5"
    assert next_link(_page(url, *links), url, url, "image", "tag list") == expected


@pytest.mark.parametrize(
    "target",
    [
        "https://evil.example/n",
        "http://r.example/n",
        "https://r.example:8443/n",
        "https://user:pw@r.example/n",
        "//evil.example/n",
    ],
)
def test_next_page_on_another_origin_is_refused(target: str) -> None:
    """Another host, scheme or port is another origin: refused."""
    url = "https://r.example/v2/a/tags/list?n=5"
    with pytest.raises(RegistryError, match="another host"):
        next_link(_page(url, f'<{target}>; rel="next"'), url, url, "image", "tag list")


# --- digests ---------------------------------------------------------------------------------


def _methods(registry: FakeRegistry) -> dict[str, int]:
    counts = registry.host("oci").requests_by_route
    return {method: counts[f"{method} {MANIFEST}"] for method in ("HEAD", "GET")}


@pytest.mark.anyio
async def test_the_digest_comes_from_a_head_alone(oci: FakeRegistry) -> None:
    """``Docker-Content-Digest`` of a HEAD is the digest; no manifest GET is sent."""
    async with _fetcher() as fetch:
        digest = await docker.get_digest(fetch, oci.url("oci"), _package(oci), "1.0.0")
    assert digest == oci.oci._tags[IMAGE]["1.0.0"]
    assert _methods(oci) == {"HEAD": 1, "GET": 0}
    accept = [e for e in oci.host("oci").log if e.method == "HEAD"]
    assert len(accept) == 1


@pytest.mark.anyio
async def test_the_head_asks_for_the_index_types_first(oci: FakeRegistry) -> None:
    """The HEAD's ``Accept`` is the registries.md §5 list, multi-architecture types first."""
    seen: list[dict[str, str] | None] = []
    async with _fetcher() as fetcher:

        async def fetch(url: str, **kwargs: object) -> FetchResponse:
            seen.append(kwargs.get("headers"))  # type: ignore[arg-type]
            return await fetcher(url, **kwargs)  # type: ignore[arg-type]

        await docker.get_digest(fetch, oci.url("oci"), _package(oci), "1.0.0")
    assert seen == [{"Accept": docker.MANIFEST_ACCEPT}]
    assert docker.MANIFEST_ACCEPT.split(", ") == [
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.v2+json",
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("status", [405, 501])
async def test_a_refused_head_falls_back_to_get(oci: FakeRegistry, status: int) -> None:
    """HEAD answered 405/501: one GET, whose digest header is used."""
    oci.oci.head_status = status
    async with _fetcher() as fetch:
        digest = await docker.get_digest(fetch, oci.url("oci"), _package(oci), "1.0.0")
    assert digest == oci.oci._tags[IMAGE]["1.0.0"]
    assert _methods(oci) == {"HEAD": 1, "GET": 1}


@pytest.mark.anyio
async def test_no_digest_header_hashes_the_get_body(oci: FakeRegistry) -> None:
    """No ``Docker-Content-Digest`` on HEAD or GET: the sha256 of the manifest body."""
    oci.oci.omit_digest_header = True
    key = oci.oci._tags[IMAGE]["1.0.0"]
    body = oci.oci._manifests[IMAGE][key][1]
    async with _fetcher() as fetch:
        digest = await docker.get_digest(fetch, oci.url("oci"), _package(oci), "1.0.0")
    assert digest == "sha256:" + hashlib.sha256(body).hexdigest() == key
    assert _methods(oci) == {"HEAD": 1, "GET": 1}


@pytest.mark.anyio
async def test_a_revalidated_head_keeps_the_stored_digest(
    oci: FakeRegistry, tmp_path: Path
) -> None:
    """After expiry the HEAD is revalidated (304): the stored digest is returned, no GET."""
    clock = Clock()
    cache = Cache.open(tmp_path / "cache.sqlite3")
    package = _package(oci)
    async with _fetcher(cache, clock) as fetch:
        first = await docker.get_digest(fetch, oci.url("oci"), package, "1.0.0")
        fresh = await docker.get_digest(fetch, oci.url("oci"), package, "1.0.0")
        clock.now = START + timedelta(seconds=301)  # past the fake's max-age=300
        revalidated = await docker.get_digest(fetch, oci.url("oci"), package, "1.0.0")
    cache.close()
    assert first == fresh == revalidated == oci.oci._tags[IMAGE]["1.0.0"]
    assert _methods(oci) == {"HEAD": 2, "GET": 0}
    assert oci.host("oci").not_modified == 1


@pytest.mark.anyio
async def test_a_pull_quota_429_fails_at_once(oci: FakeRegistry) -> None:
    """Docker Hub's pull-quota 429 on the manifest GET: one request, not retried, a clear reason."""
    oci.oci.head_status = 405
    oci.oci.pull_quota_exhausted = True
    async with _fetcher() as fetch:
        with pytest.raises(RateLimited, match="pull quota exhausted; not retried"):
            await docker.get_digest(fetch, oci.url("oci"), _package(oci), "1.0.0")
    assert _methods(oci) == {"HEAD": 1, "GET": 1}


@pytest.mark.anyio
async def test_an_unknown_tag_is_not_found(oci: FakeRegistry) -> None:
    """A HEAD answered 404 (``MANIFEST_UNKNOWN``) is ``PackageNotFound``, without a GET."""
    async with _fetcher() as fetch:
        with pytest.raises(PackageNotFound):
            await docker.get_digest(fetch, oci.url("oci"), _package(oci), "9.9.9")
    assert oci.host("oci").requests_by_route["GET /v2/acme/app/manifests/9.9.9"] == 0


@pytest.mark.anyio
async def test_a_digest_reference_is_asked_as_is(oci: FakeRegistry) -> None:
    """A pinned digest can be asked for too (the registry answers it by digest)."""
    pinned = oci.oci._tags[IMAGE]["1.2.1"]
    async with _fetcher() as fetch:
        assert await docker.get_digest(fetch, oci.url("oci"), _package(oci), pinned) == pinned
    with pytest.raises(RegistryError, match="not a tag or digest"):
        await docker.get_digest(_never, "https://r.example", "r.example/a/b", "../x")


async def _never(url: str, **_: object) -> FetchResponse:
    raise AssertionError(url)


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("sha256:" + "a" * 64, True),
        ("sha512:" + "0" * 128, True),
        ("sha256:" + "A" * 64, False),
        ("sha256:" + "a" * 63, False),
        ("sha256:", False),
        ("md5+b64:ZGVm", True),
        ("not a digest", False),
        (None, False),
    ],
)
def test_valid_digest(value: str | None, valid: bool) -> None:  # noqa: FBT001 - parametrized
    """Digests follow the image-spec grammar; sha256/sha512 are lower-case hex of their length."""
    assert (docker.valid_digest(value) is not None) is valid


def test_body_digest_of_nothing_is_unknown() -> None:
    """An empty manifest body gives no digest (``None`` later), never the hash of nothing."""
    assert docker.body_digest(b"") == b""
    assert docker.valid_digest(docker.body_digest(b"").decode()) is None


# --- Docker Hub tag dates --------------------------------------------------------------------


def _hub(registry: FakeRegistry, tags: int = 12) -> dict[str, str]:
    registry.docker_hub.add(
        "library/nginx", {f"1.{n}": PUSHED + timedelta(days=n) for n in range(tags)}
    )
    return {"docker-hub": registry.url("docker-hub")}


@pytest.mark.anyio
async def test_hub_dates_for_the_asked_tags_only(fake_registry: FakeRegistry) -> None:
    """Two asked tags: two tag requests, exactly those tags in the answer.

    A tag the Hub answers 404 for is ``Unavailable`` (the registry listed it: the date lookup
    failed), naming the status and the URL, never a tag without a date.
    """
    registries = _hub(fake_registry)
    async with _fetcher() as fetch:
        times = await docker.release_times(
            fetch, registries, "docker.io/library/nginx", ["1.2", "9.9"]
        )
    url = f"{fake_registry.url('docker-hub')}/v2/namespaces/library/repositories/nginx/tags/9.9"
    assert times == {
        "1.2": PUSHED + timedelta(days=2),
        "9.9": Unavailable(
            "image 'docker.io/library/nginx' (Docker Hub API): tag '9.9', which the registry"
            f" lists, is not known there (HTTP 404 from {url})"
        ),
    }
    routes = fake_registry.host("docker-hub").requests_by_route
    assert sum(routes.values()) == 2
    assert routes["GET /v2/namespaces/library/repositories/nginx/tags/1.2"] == 1


@pytest.mark.anyio
async def test_many_asked_tags_read_the_hub_tag_list(fake_registry: FakeRegistry) -> None:
    """More tags than ``HUB_PER_TAG_MAX``: tag-list pages until all are found, not one each."""
    registries = _hub(fake_registry, tags=150)
    wanted = [f"1.{n}" for n in (149, 120, 100, 60, 40, 30)]  # pages 1 and 2, newest first
    async with _fetcher() as fetch:
        times = await docker.release_times(fetch, registries, "docker.io/library/nginx", wanted)
    assert times == {tag: PUSHED + timedelta(days=int(tag[2:])) for tag in wanted}
    log = fake_registry.host("docker-hub").log
    assert len(log) == 2
    assert "page_size=100" in log[0].path


@pytest.mark.anyio
async def test_tags_missing_from_the_hub_tag_list_are_unavailable(
    fake_registry: FakeRegistry,
) -> None:
    """Read through the tag list, a tag the Hub does not list is ``Unavailable`` too."""
    registries = _hub(fake_registry, tags=8)
    wanted = ["1.7", "1.6", "1.5", "1.4", "1.3", "9.9"]  # more than HUB_PER_TAG_MAX
    async with _fetcher() as fetch:
        times = await docker.release_times(fetch, registries, "docker.io/library/nginx", wanted)
    assert {tag: times[tag] for tag in wanted[:-1]} == {
        tag: PUSHED + timedelta(days=int(tag[2:])) for tag in wanted[:-1]
    }
    missing = times["9.9"]
    assert isinstance(missing, Unavailable)
    assert missing.reason.startswith(
        "image 'docker.io/library/nginx' (Docker Hub API): tag '9.9', which the registry lists,"
        " is not in its tag list ("
    )
    assert len(fake_registry.host("docker-hub").log) == 1


@pytest.mark.anyio
async def test_no_hub_dates_for_other_registries(fake_registry: FakeRegistry) -> None:
    """An image on another registry gets unknown dates and no request at all."""
    registries = _hub(fake_registry)
    times = await docker.release_times(_never, registries, "ghcr.io/o/img", ["1.0"])
    assert times == {"1.0": None}
    assert fake_registry.host("docker-hub").requests == 0


@pytest.mark.anyio
async def test_hub_dates_on_a_docker_io_catalog(oci: FakeRegistry) -> None:
    """A ``docker.io`` catalog says its times are Hub ``tag_last_pushed`` (tag freshness)."""
    oci.oci.add("library/nginx", {"1.0": None})
    async with _fetcher() as fetch:
        catalog = await docker.get_catalog(fetch, oci.url("oci"), "docker.io/library/nginx")
    assert catalog.time_source == docker.HUB_TIME_SOURCE
    assert "not its first release" in catalog.time_source


@pytest.mark.anyio
async def test_a_hub_429_goes_through_the_governor(fake_registry: FakeRegistry) -> None:
    """A Hub 429 with ``X-Retry-After`` cools the Hub host down, then the retry answers."""
    registries = _hub(fake_registry)
    waits: list[float] = []
    moment = [0.0]

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        moment[0] += seconds

    def wall() -> datetime:
        return START + timedelta(seconds=moment[0])

    retry_at = str(int(START.timestamp()) + 7)
    fake_registry.host("docker-hub").fail_next(1, 429, {"X-Retry-After": retry_at})
    async with make_client() as client:
        fetch = Fetcher(client, timer=Timer(monotonic=lambda: moment[0], wall=wall, sleep=sleep))
        times = await docker.release_times(fetch, registries, "docker.io/library/nginx", ["1.1"])
    assert times == {"1.1": PUSHED + timedelta(days=1)}
    assert waits == [pytest.approx(7.0)]
    assert fetch.stats[fetch_host(fake_registry)].rate_limited == 1


def fetch_host(registry: FakeRegistry) -> str:
    """The fetcher's statistics key of the fake Hub host."""
    return registry.url("docker-hub").removeprefix("http://")


@pytest.mark.anyio
async def test_a_malformed_hub_answer_is_a_registry_error(fake_registry: FakeRegistry) -> None:
    """A Hub answer that is not a tag object is refused with the reason."""
    registries = _hub(fake_registry)
    fake_registry.host("docker-hub").fail_next(1, 200, {}, b"[1]")
    async with _fetcher() as fetch:
        with pytest.raises(RegistryError, match=r"Docker Hub API.*unusable answer"):
            await docker.release_times(fetch, registries, "docker.io/library/nginx", ["1.1"])


def test_the_datasource_declares_its_abilities() -> None:
    """Lazy Hub dates (not for libyears), digests, and the tag list's freshness floor."""
    ds = docker.DATASOURCE
    assert (ds.id, ds.default_base_url, ds.default_versioning) == (
        "docker",
        "https://registry-1.docker.io",
        "docker",
    )
    assert ds.release_times is not None
    assert ds.release_times.for_libyears is False
    assert ds.get_digest is docker.get_digest
    assert ds.freshness_floor_representations == ("oci-tags-v1",)
    assert ds.single_document is None


def test_derive_platforms_keeps_each_entry_with_a_digest_and_a_platform() -> None:
    """An index's ``manifests[]``: ``os/architecture[/variant]`` per digest, nothing else."""
    amd64, arm, attestation = ("sha256:" + c * 64 for c in "abc")
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [
            {"digest": amd64, "platform": {"os": "linux", "architecture": "amd64"}},
            {"digest": arm, "platform": {"os": "linux", "architecture": "arm", "variant": "v7"}},
            {"digest": attestation, "platform": {"os": "unknown", "architecture": "unknown"}},
            {"digest": "sha256:short", "platform": {"os": "linux", "architecture": "386"}},
            {"digest": "sha256:" + "d" * 64},
        ],
    }
    stored = docker.derive_platforms(json.dumps(index).encode())
    assert docker.parse_platforms(stored) == {
        amd64: "linux/amd64",
        arm: "linux/arm/v7",
        attestation: "unknown/unknown",
    }
    single = {"schemaVersion": 2, "config": {"digest": amd64}, "layers": []}
    assert docker.parse_platforms(docker.derive_platforms(json.dumps(single).encode())) == {}
    with pytest.raises(RegistryError, match="unusable manifest"):
        docker.derive_platforms(b"<html>")
    with pytest.raises(RegistryError, match="oci-index-platforms-v1"):
        docker.parse_platforms(b"garbage")
