"""Credential scopes and the fetcher's use of them: sent only inside their scope, keyed apart."""

from __future__ import annotations

import httpx
import pytest
import respx

from patchula.cache import Cache
from patchula.http.auth import Credential, StaticCredentials, scope_of
from patchula.http.fetcher import Fetcher

TOKEN = "tok-not-real-0123456789"  # noqa: S105 - a stand-in, never a real credential


def _bearer(scope: str, source: str = "./.npmrc") -> Credential:
    return Credential("Authorization", f"Bearer {TOKEN}", source, scope_of(scope))


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://User:pw@Registry.Example.com:443/npm", "https://registry.example.com/npm/"),
        ("https://registry.example.com", "https://registry.example.com/"),
        ("http://127.0.0.1:8080/a/b/", "http://127.0.0.1:8080/a/b/"),
    ],
)
def test_scope_is_normalised_without_userinfo(url: str, expected: str) -> None:
    """A scope keeps scheme, lower-case host, a non-default port and the path; never userinfo."""
    assert scope_of(url) == expected


@pytest.mark.parametrize(
    ("url", "applies"),
    [
        ("https://registry.example.com/npm/left-pad", True),
        ("https://registry.example.com/npm", True),
        ("https://REGISTRY.example.com:443/npm/@a%2fb", True),
        ("https://registry.example.com/npmx/left-pad", False),
        ("https://registry.example.com/left-pad", False),
        ("http://registry.example.com/npm/left-pad", False),
        ("https://registry.example.com:8443/npm/left-pad", False),
        ("https://evil.example.com/npm/left-pad", False),
    ],
)
def test_credential_applies_only_inside_its_scope(url: str, *, applies: bool) -> None:
    """Origin must match exactly and the path must start with the scope's path prefix."""
    assert _bearer("https://registry.example.com/npm/").applies_to(url) is applies


def test_longest_scope_wins_and_repr_hides_the_secret() -> None:
    """The most specific credential is chosen; neither it nor the store shows the token."""
    wide = _bearer("https://r.example.com/", "~/.npmrc")
    narrow = _bearer("https://r.example.com/team/", "./.npmrc")
    store = StaticCredentials([wide, narrow])
    assert store.for_url("https://r.example.com/team/pkg") is narrow
    assert store.for_url("https://r.example.com/other") is wide
    assert store.for_url("https://elsewhere.example.com/team/pkg") is None
    assert TOKEN not in repr(store)
    assert TOKEN not in repr(narrow)


@pytest.mark.anyio
@respx.mock(assert_all_mocked=True, assert_all_called=True)
async def test_fetcher_sends_the_credential_only_in_scope_and_keys_it_apart(
    respx_mock: respx.MockRouter,
) -> None:
    """The header goes to the scoped URL only; the response names its source; keys differ."""
    private = respx_mock.get("https://r.example.com/npm/a").respond(200, json={})
    public = respx_mock.get("https://public.example.com/a").respond(200, json={})
    store = StaticCredentials([_bearer("https://r.example.com/npm/")])
    cache = Cache.open(None)
    try:
        async with httpx.AsyncClient() as client:
            fetch = Fetcher(client, credentials=store, cache=cache)
            answer = await fetch("https://r.example.com/npm/a")
            other = await fetch("https://public.example.com/a")
            keys = (fetch._key("https://r.example.com/npm/a", None, "raw"),)
    finally:
        cache.close()
    assert private.calls.last.request.headers["authorization"] == f"Bearer {TOKEN}"
    assert "authorization" not in public.calls.last.request.headers
    assert answer.credential == "./.npmrc"
    assert other.credential is None
    assert TOKEN not in keys[0]
    assert not keys[0].endswith("|-")
