"""Credential scopes and the fetcher's use of them: sent only inside their scope, keyed apart."""

from __future__ import annotations

import httpx
import pytest
import respx

from patchula.cache import Cache
from patchula.http.auth import (
    Credential,
    StaticCredentials,
    basic_credential,
    redact_text,
    redact_url,
    scope_of,
    split_userinfo,
)
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


def test_unused_for_explains_a_scope_only_when_nothing_more_specific_was_sent() -> None:
    """The most specific explanation answers, unless a more specific credential is sent."""
    why = "the credential in ./.npmrc line 2 was not used: environment variable X is not set"
    store = StaticCredentials(
        [_bearer("https://r.example.com/team/"), _bearer("https://s.example.com/")],
        {"https://r.example.com/": why, "https://s.example.com/npm/": why},
    )
    assert store.unused_for("https://r.example.com/other") == why
    assert store.unused_for("https://r.example.com/team/pkg") is None
    assert store.unused_for("https://s.example.com/npm/pkg") == why
    assert store.unused_for("https://s.example.com/pkg") is None
    assert store.unused_for("https://t.example.com/x") is None
    assert StaticCredentials().unused_for("https://r.example.com/x") is None


@pytest.mark.anyio
@respx.mock(assert_all_mocked=True, assert_all_called=True)
async def test_fetcher_puts_the_explanation_on_a_refusal_only(
    respx_mock: respx.MockRouter,
) -> None:
    """A 401/403 carries the store's ``unused_for`` text for its URL; a success does not."""
    why = "the credential in ./.npmrc line 2 was not used: environment variable X is not set"
    respx_mock.get("https://r.example.com/npm/a").respond(401)
    respx_mock.get("https://r.example.com/npm/b").respond(403)
    respx_mock.get("https://r.example.com/npm/c").respond(200, json={})
    store = StaticCredentials([], {"https://r.example.com/npm/": why})
    async with httpx.AsyncClient() as client:
        fetch = Fetcher(client, credentials=store)
        answers = [await fetch(f"https://r.example.com/npm/{n}") for n in "abc"]
    assert [(a.status, a.credential, a.credential_unused) for a in answers] == [
        (401, None, why),
        (403, None, why),
        (200, None, None),
    ]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://me:secret@r.example.com/npm/x", "https://***@r.example.com/npm/x"),
        ("https://tok@r.example.com", "https://***@r.example.com"),
        ("https://r.example.com/@types%2fnode", "https://r.example.com/@types%2fnode"),
        (
            "https://s3.example.com/f?X-Amz-Signature=abc&X-Amz-Date=1&Token=t&apikey=k",
            "https://s3.example.com/f?X-Amz-Signature=***&X-Amz-Date=1&Token=***&apikey=***",
        ),
        (
            "https://h/?access_token=a&private_token=b&page=2#sig=x",
            "https://h/?access_token=***&private_token=***&page=2#sig=x",
        ),
        ("https://h/x?key=&sig=s", "https://h/x?key=&sig=***"),
        ("not a url @ all", "not a url @ all"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    """Userinfo becomes ``***@`` and token-like query values ``***``; the rest is kept."""
    assert redact_url(url) == shown


def test_redact_text_redacts_every_url_in_a_message() -> None:
    """URLs inside a sentence are redacted where they stand."""
    text = "failed (https://u:pw@a.example.com/x) then http://b.example.com/?token=t."
    assert (
        redact_text(text)
        == "failed (https://***@a.example.com/x) then http://b.example.com/?token=***."
    )


DIGEST = "sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "invalid image reference 'user:tok-SECRET-123@127.0.0.1:18801/acme/app:1.0': bad",
            "invalid image reference '***@127.0.0.1:18801/acme/app:1.0': bad",
        ),
        ("FROM user:tok@registry.example.com/app:1.0", "FROM ***@registry.example.com/app:1.0"),
        ("user:tok@registry.example.com", "***@registry.example.com"),
        ("user:p@ss@host.example/x", "***@host.example/x"),
        ("proxy=me:pa%40ss@proxy.local:3128", "proxy=***@proxy.local:3128"),
        ("user:tok@[::1]:5000/img", "***@[::1]:5000/img"),
        (
            "https://u:pw@a.example/x and u:pw@b.example:5000/y",
            "https://***@a.example/x and ***@b.example:5000/y",
        ),
        # Not userinfo: a name:tag@digest image reference, npm aliases, scp-like git, pkg@version.
        (f"node:20@{DIGEST}", f"node:20@{DIGEST}"),
        (
            f"docker.io/library/node:20-alpine@{DIGEST}",
            f"docker.io/library/node:20-alpine@{DIGEST}",
        ),
        ("node:20@sha256:0123456789", "node:20@sha256:0123456789"),
        ("npm:@scope/pkg@1.0.0", "npm:@scope/pkg@1.0.0"),
        ("git@github.com:org/repo.git", "git@github.com:org/repo.git"),
        ("left-pad@1.3.0", "left-pad@1.3.0"),
    ],
)
def test_redact_text_masks_userinfo_without_a_scheme(text: str, shown: str) -> None:
    """``user:password@host`` without a scheme is ``***@host``; digests and aliases are kept."""
    assert redact_text(text) == shown


def test_split_userinfo_and_basic_credential() -> None:
    """Userinfo is percent-decoded and leaves the URL; the Basic credential covers its scope."""
    bare, user, password = split_userinfo("https://me:p%40ss@Host.example.com/npm")
    assert (bare, user, password) == ("https://Host.example.com/npm", "me", "p@ss")
    assert split_userinfo("https://host/@scope%2fx") == ("https://host/@scope%2fx", None, None)
    credential = basic_credential("me", "p@ss", bare, "registry URL")
    assert credential.value == "Basic bWU6cEBzcw=="
    assert credential.scope == "https://host.example.com/npm/"
    assert "p@ss" not in repr(credential)


TOKEN36 = "STANDIN0123456789abcdefghijklmnopqrs"  # 36 letters and digits, as GitHub's


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"token ghp_{TOKEN36} here", "token ghp_*** here"),
        (f"gho_{TOKEN36}", "gho_***"),
        (f"ghs_{TOKEN36}x", "ghs_***"),
        ("github_pat_11STANDIN0123456789_abcdefXYZ", "github_pat_***"),
        (f"npm_{TOKEN36}", "npm_***"),
        (f"github:o/r#ghp_{TOKEN36}", "github:o/r#ghp_***"),
        ("//registry.example/:_authToken=STANDIN-npmrc", "//registry.example/:_authToken=***"),
        ("_auth = dXNlcjpwYXNz", "_auth = ***"),
        ("//r.example/:_password=cGFzcw==", "//r.example/:_password=***"),
        ("Authorization: Bearer STANDIN-bearer", "Authorization: Bearer ***"),
        ("authorization=Basic dXNlcjpw", "authorization=Basic ***"),
        ("Proxy-Authorization: STANDIN", "Proxy-Authorization: ***"),
        # Not tokens: names that merely start like one, an npm alias of a version or dist-tag.
        ("npm_config_registry is set", "npm_config_registry is set"),
        ("ghs_short", "ghs_short"),
        ("npm:foo@1.2.3", "npm:foo@1.2.3"),
        ("npm:foo@latest", "npm:foo@latest"),
        ("workspace:pkg@1.0.0-beta.1", "workspace:pkg@1.0.0-beta.1"),
        # ... but a protocol-named user before a real host is userinfo.
        ("npm:tok@registry.example.com/x", "***@registry.example.com/x"),
        ("file:tok@10.0.0.1:8080", "***@10.0.0.1:8080"),
    ],
)
def test_redact_text_masks_tokens_and_assigned_credentials(text: str, shown: str) -> None:
    """Tokens by their form, .npmrc credential values and Authorization values become ``***``."""
    assert redact_text(text) == shown
    assert redact_text(shown) == shown  # redacting again changes nothing
