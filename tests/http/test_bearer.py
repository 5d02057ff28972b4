"""Bearer token challenges: parsing, token responses and expiry (``http.bearer``, pure parts)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from patchula.errors import RegistryError
from patchula.http.bearer import (
    DEFAULT_EXPIRES_IN,
    EXPIRY_MARGIN,
    Challenge,
    bearer_challenge,
    disk_key,
    parse_challenges,
    read_token,
    token_url,
    unusable_bearer,
)
from patchula.models import FetchResponse

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
T0 = NOW.timestamp()


def _response(
    content: bytes,
    headers: tuple[tuple[str, str], ...] = (),
    *,
    credential: str | None = None,
    url: str = "https://auth.example/token?service=s",
) -> FetchResponse:
    return FetchResponse(200, url, headers, content, NOW, credential=credential)


def test_a_docker_hub_challenge_is_read_generically() -> None:
    """Realm, service and scope come from the header's auth-params, whatever the realm."""
    header = (
        'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",'
        'scope="repository:library/alpine:pull"'
    )
    assert parse_challenges([header]) == [
        Challenge(
            "bearer",
            {
                "realm": "https://auth.docker.io/token",
                "service": "registry.docker.io",
                "scope": "repository:library/alpine:pull",
            },
        )
    ]


def test_several_challenges_in_one_header_and_odd_spacing() -> None:
    """RFC 7235: one header lists challenges; BWS around '=', tokens unquoted, case-free names."""
    header = (
        'Basic realm="a, b", BEARER  Realm = https://r.example/t , Service=reg ,'
        ' scope="repository:x/y:pull,push", Negotiate abc123=='
    )
    found = parse_challenges([header])
    assert [c.scheme for c in found] == ["basic", "bearer", "negotiate"]
    assert found[0].params == {"realm": "a, b"}
    assert found[1].params == {
        "realm": "https://r.example/t",
        "service": "reg",
        "scope": "repository:x/y:pull,push",
    }
    assert found[2].token68 == "abc123=="


def test_quoted_pairs_and_damage_do_not_raise() -> None:
    """Escapes are undone; an unterminated quote or junk yields what can be read."""
    assert parse_challenges(['Bearer realm="a\\"b"'])[0].params == {"realm": 'a"b'}
    assert parse_challenges(['Bearer realm="https://x/t'])[0].params == {"realm": "https://x/t"}
    assert parse_challenges(['=junk, Bearer realm="r"']) == [Challenge("bearer", {"realm": "r"})]
    assert parse_challenges([""]) == []


def test_bearer_challenge_needs_an_http_realm() -> None:
    """A Bearer challenge naming no http(s) URL is not a token service (the 401 stays)."""

    def with_header(value: str) -> FetchResponse:
        return FetchResponse(401, "https://r.example/v2/", (("www-authenticate", value),), b"", NOW)

    assert bearer_challenge(with_header('Bearer realm="GitHub Package Registry"')) is None
    assert bearer_challenge(with_header('Bearer realm="file:///etc/passwd"')) is None
    assert bearer_challenge(with_header('Basic realm="https://r.example/"')) is None
    found = bearer_challenge(with_header('Basic realm="x", Bearer realm="https://a.example/t"'))
    assert found is not None
    assert (found.realm, found.service, found.scope) == ("https://a.example/t", None, None)


def test_unusable_bearer_says_why_no_token_was_asked() -> None:
    """Only Bearer challenges without an http(s) realm get a reason; the realm is not repeated."""

    def why(*values: str) -> str | None:
        headers = tuple(("www-authenticate", value) for value in values)
        return unusable_bearer(FetchResponse(401, "https://r.example/v2/", headers, b"", NOW))

    suffix = "; no token was asked"
    assert why('Bearer realm="file:///etc/passwd"') == (
        f"its Bearer challenge names no http(s) token realm (a file: URL){suffix}"
    )
    assert why('Bearer realm="GitHub Package Registry"') == (
        f"its Bearer challenge names no http(s) token realm{suffix}"
    )
    assert why('Bearer realm="x' + "y" * 40 + ':/z"') == (
        f"its Bearer challenge names no http(s) token realm{suffix}"
    )
    assert why('Bearer realm="file:///a"', 'Bearer realm="https://a.example/t"') is None
    assert why('Basic realm="x"') is None
    assert why() is None


def test_token_url_repeats_scopes_and_keeps_the_realms_query() -> None:
    """``realm?service=…&scope=…``, one ``scope`` per resource, the realm's own query kept."""
    assert (
        token_url("https://auth.example/token?x=1#f", "reg", ["repository:a/b:pull", "r:c:pull"])
        == "https://auth.example/token?x=1&service=reg&scope=repository%3Aa%2Fb%3Apull"
        "&scope=r%3Ac%3Apull"
    )
    assert token_url("ftp://auth.example/token", "reg", []) is None


def test_token_or_access_token_and_the_default_lifetime() -> None:
    """``token`` (else ``access_token``); without ``expires_in`` the token lives 60 s less 10."""
    token = read_token(_response(b'{"access_token":"abc.def"}'))
    assert token.value == "abc.def"
    assert token.expires_at == T0 + DEFAULT_EXPIRES_IN - EXPIRY_MARGIN
    assert token.persist
    assert "abc.def" not in repr(token)


def test_expiry_counts_from_issued_at_less_age_and_margin() -> None:
    """issued_at 100 s ago + 300 s, Age 20: 300 - 100 - 20 - 10 = 170 s from now."""
    body = b'{"token":"t1","expires_in":300,"issued_at":"2026-12-01T11:58:20.123456789Z"}'
    token = read_token(_response(body, (("age", "20"),)))
    assert token.expires_at == pytest.approx(T0 + 170 + 0.123456, abs=1e-3)


def test_a_future_issued_at_never_extends_the_lifetime_and_an_hour_caps_it() -> None:
    """A token issued "in the future" (skew) counts from now; a day-long one is kept an hour."""
    future = b'{"token":"t","expires_in":300,"issued_at":"2026-12-01T13:00:00Z"}'
    assert read_token(_response(future)).expires_at == T0 + 300 - EXPIRY_MARGIN
    day = b'{"token":"t","expires_in":86400}'
    assert read_token(_response(day)).expires_at == T0 + 3600


def test_no_store_and_credentialed_tokens_are_memory_only() -> None:
    """``Cache-Control: no-store`` or a credential on the token request: never persisted."""
    body = b'{"token":"t","expires_in":300}'
    assert not read_token(_response(body, (("cache-control", "no-store"),))).persist
    credentialed = read_token(_response(body, credential="~/.docker/config.json"))
    assert not credentialed.persist
    assert credentialed.source == "~/.docker/config.json"


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        b'{"token": 5}',
        b'{"token": "two words"}',
        b'{"token": ""}',
        b"{}",
        b'{"token": "' + b"x" * (64 * 1024 + 1) + b'"}',
        b"[" * 100_000,
    ],
)
def test_an_unusable_token_response_is_an_error_without_its_body(body: bytes) -> None:
    """No usable token: ``RegistryError`` naming the token service's host, not the body."""
    with pytest.raises(RegistryError, match=r"token service at auth\.example") as caught:
        read_token(_response(body))
    assert "words" not in str(caught.value)


def test_disk_keys_name_host_and_image_for_pull_scopes_only() -> None:
    """``anonymous-registry-pull-token-v1|<host>|<image>``; other scopes are not persisted."""
    assert (
        disk_key("registry-1.docker.io", "repository:library/nginx:pull")
        == "anonymous-registry-pull-token-v1|registry-1.docker.io|library/nginx"
    )
    assert disk_key("h", "repository:a/b:pull,push") is None
    assert disk_key("h", "repository:a/b:pull repository:c:pull") is None
    assert disk_key("h", "repository:A/b:pull") is None


def test_a_huge_or_hostile_header_is_parsed_in_one_pass() -> None:
    """A megabyte of params, commas or quotes ends (one challenge, first of a name kept)."""
    many = parse_challenges(['Bearer realm="r",' + "a=b," * 250_000])
    assert [c.scheme for c in many] == ["bearer"]
    assert many[0].params == {"realm": "r", "a": "b"}
    assert parse_challenges(["," * 1_000_000]) == []
    assert [c.scheme for c in parse_challenges(['Bearer x="' + '\\"' * 300_000])] == ["bearer"]
