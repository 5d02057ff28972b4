"""Bearer tokens through the fetcher against the fake OCI registry (issue 13, seed 003).

"Anonymous registry pull tokens …": one token request across runs (disk cache), one shared
refresh after a 401, ``no-store`` and credentialed tokens in memory only, and token values in
no key, ``repr``, error or log.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import anyio
import pytest

from patchula.cache import Cache
from patchula.errors import RegistryError
from patchula.http.auth import StaticCredentials, basic_credential
from patchula.http.bearer import REPRESENTATION
from patchula.http.fetcher import Fetcher
from tests.fake_registry.registry import FakeRegistry

SCOPE = "repository:library/nginx:pull"
IMAGE = "/v2/library/nginx"


def _keys(path: Path) -> list[tuple[str, str]]:
    """(key, representation) of every stored HTTP entry."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT key, representation FROM http_entries").fetchall()
    return [(str(k), str(r)) for k, r in rows]


def _statuses(registry: FakeRegistry) -> list[int]:
    return [entry.status for entry in registry.host("oci").log]


def _on_disk(path: Path, tokens: list[str]) -> list[str]:
    """The token values found anywhere in the database files (main file, WAL)."""
    data = b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
    return [t for t in tokens if t.encode() in data]


@pytest.mark.anyio
async def test_the_token_is_requested_once_across_two_runs(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Run 2 sends the disk-cached token up front: no token request and no initial 401."""
    oci = fake_registry.url("oci")
    fake_registry.host("oci").cache_control = None  # every run revalidates: requests are sent
    path = tmp_path / "cache.sqlite3"
    for run in (1, 2):
        fake_registry.reset_stats()
        cache = Cache.open(path)
        fetcher = Fetcher(cache=cache)
        response = await fetcher(f"{oci}{IMAGE}/tags/list", scope=SCOPE)
        await fetcher.aclose()
        cache.close()
        assert response.status == 200
        routes = fake_registry.host("oci").requests_by_route
        if run == 1:
            assert routes["GET /token"] == 1
            assert _statuses(fake_registry) == [401, 200, 200]
        else:
            assert routes["GET /token"] == 0
            assert _statuses(fake_registry) == [304]
    assert fake_registry.oci.token_requests == 1
    token_rows = [key for key, rep in _keys(path) if rep == REPRESENTATION]
    assert token_rows == [f"{REPRESENTATION}|{oci.removeprefix('http://')}|library/nginx"]
    # Counted in the HTTP body budget like any entry, and only the bearer is kept.
    with sqlite3.connect(path) as conn:
        size, raw, headers = conn.execute(
            "SELECT body_size, raw_size, headers FROM http_entries WHERE representation = ?",
            (REPRESENTATION,),
        ).fetchone()
    assert size > 0
    assert raw == len(fake_registry.oci.issued[0])
    assert headers in {"[]", b"[]"}


@pytest.mark.anyio
async def test_a_revoked_token_is_refreshed_once_for_sixteen_concurrent_requests(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """16 requests carrying a revoked token get 401s; one token request serves all of them."""
    oci = fake_registry.url("oci")
    cache = Cache.open(tmp_path / "cache.sqlite3")
    fetcher = Fetcher(cache=cache)
    assert (await fetcher(f"{oci}{IMAGE}/tags/list?n=1", scope=SCOPE)).status == 200
    first = fake_registry.oci.issued[-1]
    fake_registry.oci.revoke_tokens()
    fake_registry.reset_stats()
    statuses: dict[int, int] = {}

    async def one(n: int) -> None:
        statuses[n] = (await fetcher(f"{oci}{IMAGE}/tags/list?n={n + 2}", scope=SCOPE)).status

    async with anyio.create_task_group() as tg:
        for n in range(16):
            tg.start_soon(one, n)
    await fetcher.aclose()
    assert statuses == dict.fromkeys(range(16), 200)
    assert fake_registry.host("oci").requests_by_route["GET /token"] == 1
    assert sorted(_statuses(fake_registry)).count(401) == 16
    # The replacement took the revoked token's place on disk.
    entry = await cache.get_http(f"{REPRESENTATION}|{oci.removeprefix('http://')}|library/nginx")
    assert entry is not None
    assert entry.body.decode() == fake_registry.oci.issued[-1] != first
    cache.close()


@pytest.mark.anyio
async def test_a_no_store_token_is_never_on_disk(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``Cache-Control: no-store`` on the token: used, kept in memory, never written."""
    oci = fake_registry.url("oci")
    fake_registry.oci.token_cache_control = "no-store"  # noqa: S105 - a header value
    path = tmp_path / "cache.sqlite3"
    cache = Cache.open(path)
    fetcher = Fetcher(cache=cache)
    assert (await fetcher(f"{oci}{IMAGE}/tags/list", scope=SCOPE)).status == 200
    assert (await fetcher(f"{oci}{IMAGE}/manifests/1.27", scope=SCOPE)).status == 200
    await fetcher.aclose()
    cache.close()
    assert fake_registry.oci.token_requests == 1  # the memory copy served the second request
    assert [rep for _, rep in _keys(path) if rep == REPRESENTATION] == []
    assert _on_disk(path, fake_registry.oci.issued) == []


@pytest.mark.anyio
async def test_a_credentialed_token_is_never_on_disk(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A token obtained with a Basic credential on the token request stays in memory."""
    oci = fake_registry.url("oci")
    login = basic_credential("me", "stand-in", f"{oci}/token", "~/.docker/config.json")
    fake_registry.oci.token_credential = login.value
    path = tmp_path / "cache.sqlite3"
    cache = Cache.open(path)
    # Scoped to the token path only: the registry requests themselves stay anonymous.
    fetcher = Fetcher(cache=cache, credentials=StaticCredentials([login]))
    response = await fetcher(f"{oci}{IMAGE}/tags/list", scope=SCOPE)
    await fetcher.aclose()
    cache.close()
    assert response.status == 200
    assert response.credential == "~/.docker/config.json"
    assert fake_registry.oci.token_requests == 1
    assert [rep for _, rep in _keys(path) if rep == REPRESENTATION] == []
    assert _on_disk(path, fake_registry.oci.issued) == []


@pytest.mark.anyio
async def test_a_refused_credential_names_its_source(fake_registry: FakeRegistry) -> None:
    """The token service refusing the credential is the answer, naming where it came from."""
    oci = fake_registry.url("oci")
    fake_registry.oci.token_credential = "Basic b3RoZXI6b3RoZXI="  # noqa: S105 - a stand-in
    wrong = basic_credential("me", "wrong", f"{oci}/token", "~/.docker/config.json")
    fetcher = Fetcher(credentials=StaticCredentials([wrong]))
    response = await fetcher(f"{oci}{IMAGE}/tags/list", scope=SCOPE)
    await fetcher.aclose()
    assert response.status == 401
    assert response.credential == "~/.docker/config.json"
    assert "/token" in response.url


@pytest.mark.anyio
async def test_tokens_stay_out_of_keys_reprs_errors_and_logs(
    fake_registry: FakeRegistry, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """No key names a token; the fetcher's repr, responses and log records show none."""
    caplog.set_level(logging.DEBUG)
    oci = fake_registry.url("oci")
    path = tmp_path / "cache.sqlite3"
    cache = Cache.open(path)
    fetcher = Fetcher(cache=cache, max_body_bytes=64 * 1024)
    responses = [
        await fetcher(f"{oci}{IMAGE}/tags/list", scope=SCOPE),
        await fetcher(f"{oci}{IMAGE}/manifests/1.27", method="HEAD", scope=SCOPE),
        await fetcher(f"{oci}{IMAGE}/manifests/nope", scope=SCOPE),
    ]
    # A request that carried the token and failed: its error names no token either.
    fake_registry.host("oci").huge_next(1, 1024 * 1024, route=f"GET {IMAGE}/manifests/1.26")
    with pytest.raises(RegistryError) as failed:
        await fetcher(f"{oci}{IMAGE}/manifests/1.26", scope=SCOPE)
    await fetcher.aclose()
    cache.close()
    assert [r.status for r in responses] == [200, 200, 404]
    issued = fake_registry.oci.issued
    assert len(issued) == 1
    shown = " ".join(
        [
            *(k for k, _ in _keys(path)),
            repr(fetcher),
            repr(fetcher._bearer),
            *(repr(r) for r in responses),
            caplog.text,
            str(failed.value),
        ]
    )
    assert issued[0] not in shown
    # The registry entries are keyed as anonymous requests (credential digest "-").
    registry_keys = [k for k, rep in _keys(path) if rep != REPRESENTATION]
    assert registry_keys
    assert all(k.endswith("|-") for k in registry_keys)


@pytest.mark.anyio
async def test_without_scope_a_challenge_is_still_answered(fake_registry: FakeRegistry) -> None:
    """No scope given: nothing goes up front, the challenge's own scope is asked for."""
    oci = fake_registry.url("oci")
    fetcher = Fetcher()
    first = await fetcher(f"{oci}{IMAGE}/tags/list")
    second = await fetcher(f"{oci}{IMAGE}/manifests/1.27")
    await fetcher.aclose()
    assert (first.status, second.status) == (200, 200)
    # The second request met a 401 too (no scope: no token up front), but the token the
    # first one obtained for the challenge's scope answered it without a new token request.
    assert _statuses(fake_registry).count(401) == 2
    assert fake_registry.oci.token_requests == 1


@pytest.mark.anyio
async def test_a_realm_on_another_host_gets_only_its_own_credential(
    fake_registry: FakeRegistry,
) -> None:
    """The registry's credential never goes to a token service on another host; its own does."""
    oci = fake_registry.url("oci")
    auth = fake_registry.url("npm")  # a second origin, serving the token endpoint
    fake_registry.host("npm").handler = fake_registry.oci.handle
    fake_registry.oci.base_url = auth  # challenges now name {auth}/token as the realm
    registry = basic_credential("reg", "stand-in", f"{oci}/", "~/.docker/config.json")
    fetcher = Fetcher(credentials=StaticCredentials([registry]))
    assert (await fetcher(f"{oci}{IMAGE}/tags/list", scope=SCOPE)).status == 200
    await fetcher.aclose()
    assert fake_registry.host("npm").requests_by_route["GET /token"] == 1
    assert fake_registry.host("npm").authorized_routes["GET /token"] == 0
    login = basic_credential("auth", "stand-in", f"{auth}/", "~/.docker/config.json")
    fake_registry.oci.token_credential = login.value
    fetcher = Fetcher(credentials=StaticCredentials([registry, login]))
    assert (await fetcher(f"{oci}{IMAGE}/tags/list", scope=SCOPE)).status == 200
    await fetcher.aclose()
    assert fake_registry.host("npm").authorized_routes["GET /token"] == 1


@pytest.mark.anyio
async def test_after_a_reopen_sixteen_concurrent_requests_meet_no_401(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Concurrent first requests of a warm run share the one disk read of the token."""
    oci = fake_registry.url("oci")
    path = tmp_path / "cache.sqlite3"
    cache = Cache.open(path)
    fetcher = Fetcher(cache=cache)
    assert (await fetcher(f"{oci}{IMAGE}/tags/list", scope=SCOPE)).status == 200
    await fetcher.aclose()
    cache.close()
    fake_registry.reset_stats()
    cache = Cache.open(path)
    fetcher = Fetcher(cache=cache)
    statuses: list[int] = []

    async def one(n: int) -> None:
        statuses.append((await fetcher(f"{oci}{IMAGE}/tags/list?n={n + 1}", scope=SCOPE)).status)

    async with anyio.create_task_group() as tg:
        for n in range(16):
            tg.start_soon(one, n)
    await fetcher.aclose()
    cache.close()
    assert statuses == [200] * 16
    assert _statuses(fake_registry) == [200] * 16
    assert fake_registry.oci.token_requests == 1


@pytest.mark.anyio
async def test_an_answer_to_a_realm_login_is_not_cached_as_anonymous(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A token got with the realm host's login, none for the registry: nothing is stored."""
    oci = fake_registry.url("oci")
    auth = fake_registry.url("npm")
    fake_registry.host("npm").handler = fake_registry.oci.handle
    fake_registry.oci.base_url = auth
    login = basic_credential("auth", "stand-in", f"{auth}/", "~/.docker/config.json")
    fake_registry.oci.token_credential = login.value
    path = tmp_path / "cache.sqlite3"
    cache = Cache.open(path)
    fetcher = Fetcher(cache=cache, credentials=StaticCredentials([login]))
    response = await fetcher(f"{oci}{IMAGE}/tags/list", scope=SCOPE)
    again = await fetcher(f"{oci}{IMAGE}/tags/list?n=2", scope=SCOPE)
    await fetcher.aclose()
    cache.close()
    assert (response.status, again.status) == (200, 200)
    assert response.credential == again.credential == "~/.docker/config.json"
    assert _keys(path) == []
