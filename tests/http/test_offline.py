"""The fetch facade offline (``--offline``): stored entries answer whatever their age; no network.

Each test warms an on-disk cache through a normal fetcher against the loopback fake registry,
then asks an offline fetcher that is given no client and whose ``make_client`` raises: any
attempt to build one (or send anything) fails the test.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NoReturn

import pytest

from patchula.cache import Cache
from patchula.credentials import RegistryAccess
from patchula.datasource import docker, npm
from patchula.errors import NOT_CACHED, NotCached
from patchula.http.fetcher import Fetcher, Timer, make_client
from patchula.settings import Settings
from tests.fake_registry import FakeRegistry

ACCEPT = {"Accept": "application/json"}
# A test stand-in for a GitHub token, never a real secret.
TOKEN = "STANDIN-gh-token-offline"  # noqa: S105 - a test stand-in


def _no_client(*_: object, **__: object) -> NoReturn:
    msg = "an offline fetcher made an HTTP client"
    raise AssertionError(msg)


@pytest.fixture
def no_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make building the run's HTTP client fail the test."""
    monkeypatch.setattr("patchula.http.fetcher.make_client", _no_client)


def _image(base: str, repository: str) -> str:
    """The canonical ``<host:port>/<repository>`` of ``repository`` on the fake OCI host."""
    return f"{base.removeprefix('http://')}/{repository}"


def _later(days: float) -> Timer:
    """A timer whose wall clock is ``days`` ahead of the real one."""
    return Timer(wall=lambda: datetime.now(UTC) + timedelta(days=days))


async def _warm_npm(registry: FakeRegistry, path: Path) -> bytes:
    cache = Cache.open(path)
    async with make_client() as client:
        response = await Fetcher(client, cache=cache)(
            f"{registry.url('npm')}/left-pad",
            headers=ACCEPT,
            representation=npm.REPRESENTATION,
            derive=lambda body: npm.derive(body, package_name="left-pad"),
        )
    await cache.aclose()
    assert response.cache == "miss"
    return response.content


@pytest.mark.anyio
@pytest.mark.usefixtures("no_client")
async def test_a_stale_entry_with_validators_is_served_as_it_is(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Max-age long passed, ETag and Last-Modified stored: offline serves it, asking nothing."""
    host = fake_registry.host("npm")
    host.cache_control = "max-age=60"
    stored = await _warm_npm(fake_registry, tmp_path / "c.sqlite3")
    host.reset_stats()
    cache = Cache.open(tmp_path / "c.sqlite3")
    fetcher = Fetcher(cache=cache, offline=True, timer=_later(30))
    response = await fetcher(
        f"{fake_registry.url('npm')}/left-pad", headers=ACCEPT, representation=npm.REPRESENTATION
    )
    await cache.aclose()
    assert (response.status, response.cache, response.content) == (200, "fresh", stored)
    assert (fetcher.cache_stats.hits, fetcher.cache_stats.misses) == (1, 0)
    assert host.requests == 0
    assert fetcher.stats == {}
    assert fetcher.not_cached == []


@pytest.mark.anyio
@pytest.mark.usefixtures("no_client")
async def test_a_request_with_no_entry_is_not_cached_and_named_redacted(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """No stored entry: ``NotCached`` with the offline reason; the URL is kept without secrets."""
    await _warm_npm(fake_registry, tmp_path / "c.sqlite3")
    cache = Cache.open(tmp_path / "c.sqlite3")
    fetcher = Fetcher(cache=cache, offline=True)
    url = f"{fake_registry.url('npm')}/is-odd?token=STANDIN-offline-secret"
    with pytest.raises(NotCached) as caught:
        await fetcher(url, headers=ACCEPT, representation=npm.REPRESENTATION)
    # Another Accept header is another key: the stored left-pad answer does not serve it.
    with pytest.raises(NotCached):
        await fetcher(f"{fake_registry.url('npm')}/left-pad", representation=npm.REPRESENTATION)
    await cache.aclose()
    assert caught.value.reason == NOT_CACHED == "not in cache (offline)"
    assert fetcher.not_cached == [
        f"GET {fake_registry.url('npm')}/is-odd?token=***",
        f"GET {fake_registry.url('npm')}/left-pad",
    ]
    assert "STANDIN-offline-secret" not in repr(fetcher.not_cached)
    assert fake_registry.host("npm").requests == 1  # the warm-up's only


@pytest.mark.anyio
@pytest.mark.usefixtures("no_client")
async def test_without_a_cache_every_request_is_not_cached() -> None:
    """An offline fetcher with no cache answers nothing, and still sends nothing."""
    fetcher = Fetcher(offline=True)
    with pytest.raises(NotCached):
        await fetcher("http://127.0.0.1:9/left-pad")
    assert fetcher.not_cached == ["GET http://127.0.0.1:9/left-pad"]


@pytest.mark.anyio
async def test_head_and_post_answers_keep_their_own_keys(
    fake_registry: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored HEAD and a stored POST (GraphQL) answer offline; GET or another body do not.

    The GraphQL answer is keyed by its token's identity (never the token) online and offline
    alike; the token itself is not sent offline.
    """
    cache = Cache.open(tmp_path / "c.sqlite3")
    github = fake_registry.url("github")
    settings = Settings.model_validate({"registries": {"github": github}})
    access = RegistryAccess(settings, env={"GH_TOKEN": TOKEN}, home=tmp_path)
    query = b'{"query":"{ viewer { login } }"}'
    async with make_client() as client:
        online = Fetcher(client, cache=cache, credentials=access)
        head = await online(f"{github}/repos/actions/checkout/tags", method="HEAD")
        post = await online(f"{github}/graphql", method="POST", body=query)
    await cache.aclose()
    assert (head.status, post.status) == (200, 200)
    monkeypatch.setattr("patchula.http.fetcher.make_client", _no_client)
    fake_registry.host("github").reset_stats()
    cache = Cache.open(tmp_path / "c.sqlite3")
    fetcher = Fetcher(cache=cache, offline=True, credentials=access)
    served_head = await fetcher(f"{github}/repos/actions/checkout/tags", method="HEAD")
    served_post = await fetcher(f"{github}/graphql", method="POST", body=query)
    with pytest.raises(NotCached):
        await fetcher(f"{github}/repos/actions/checkout/tags")
    with pytest.raises(NotCached):
        await fetcher(f"{github}/graphql", method="POST", body=b'{"query":"{ other }"}')
    await cache.aclose()
    assert (served_head.cache, served_head.content) == ("fresh", b"")
    assert (served_post.cache, served_post.content) == ("fresh", post.content)
    assert fetcher.not_cached == [
        f"GET {github}/repos/actions/checkout/tags",
        f"POST {github}/graphql",
    ]
    assert fake_registry.host("github").requests == 0


@pytest.mark.anyio
@pytest.mark.usefixtures("no_client")
async def test_fresh_many_answers_stale_entries_and_leaves_missing_ones(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Batched answers offline: the stale entry answers; the missing one is then ``NotCached``."""
    fake_registry.host("npm").cache_control = "max-age=0"
    stored = await _warm_npm(fake_registry, tmp_path / "c.sqlite3")
    cache = Cache.open(tmp_path / "c.sqlite3")
    fetcher = Fetcher(cache=cache, offline=True, timer=_later(2))
    base = fake_registry.url("npm")
    answers = await fetcher.fresh_many(
        [(f"{base}/left-pad", ACCEPT, npm.REPRESENTATION), (f"{base}/nope", ACCEPT, "raw")]
    )
    with pytest.raises(NotCached):
        await fetcher(f"{base}/nope", headers=ACCEPT)
    await cache.aclose()
    assert answers[0] is not None
    assert (answers[0].cache, answers[0].content) == ("fresh", stored)
    assert answers[1] is None
    assert fake_registry.host("npm").requests == 1


@pytest.mark.anyio
async def test_a_token_protected_answer_is_served_without_a_token(
    fake_registry: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OCI answers stored after a Bearer token flow are served offline; no token is asked for."""
    cache = Cache.open(tmp_path / "c.sqlite3")
    base = fake_registry.url("oci")
    async with make_client() as client:
        online = await docker.get_catalog(
            Fetcher(client, cache=cache), base, _image(base, "library/nginx")
        )
    await cache.aclose()
    tokens = fake_registry.oci.token_requests
    assert tokens >= 1
    monkeypatch.setattr("patchula.http.fetcher.make_client", _no_client)
    fake_registry.host("oci").reset_stats()
    cache = Cache.open(tmp_path / "c.sqlite3")
    fetcher = Fetcher(cache=cache, offline=True, timer=_later(1))
    offline = await docker.get_catalog(fetcher, base, _image(base, "library/nginx"))
    await cache.aclose()
    assert [r.version for r in offline.releases] == [r.version for r in online.releases]
    assert offline.reused is True
    assert fake_registry.oci.token_requests == tokens
    assert fake_registry.host("oci").requests == 0


@pytest.mark.anyio
async def test_a_paged_tag_list_missing_a_middle_page_is_not_cached_not_partial(
    fake_registry: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Page 2 of 3 gone from the cache: the whole lookup is ``NotCached``, no partial tag list."""
    fake_registry.oci.add("acme/paged", dict.fromkeys(("1.0", "1.1", "1.2", "1.3", "1.4")))
    fake_registry.oci.max_page_size = 2
    path = tmp_path / "c.sqlite3"
    cache = Cache.open(path)
    base = fake_registry.url("oci")
    async with make_client() as client:
        online = await docker.get_catalog(
            Fetcher(client, cache=cache), base, _image(base, "acme/paged")
        )
    await cache.aclose()
    assert len(online.releases) == 5
    with sqlite3.connect(path) as db:
        pages = [
            key
            for (key,) in db.execute("SELECT key FROM http_entries ORDER BY key")
            if "acme/paged/tags/list" in key
        ]
        assert len(pages) == 3
        second = next(key for key in pages if "last=1.1" in key)
        db.execute("DELETE FROM http_entries WHERE key = ?", (second,))
    db.close()
    monkeypatch.setattr("patchula.http.fetcher.make_client", _no_client)
    cache = Cache.open(path)
    fetcher = Fetcher(cache=cache, offline=True)
    with pytest.raises(NotCached):
        await docker.get_catalog(fetcher, base, _image(base, "acme/paged"))
    await cache.aclose()
    assert fetcher.cache_stats.hits == 1  # page 1 was there; page 2 was not
    assert len(fetcher.not_cached) == 1
    assert "last=1.1" in fetcher.not_cached[0]
