"""Refusals say what happened: a non-HTTP next page, a refused token, an oversized header."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
import respx

from patchula.datasource.base import check_status, next_link
from patchula.errors import RegistryError, RegistryUnreachable
from patchula.http.bearer import read_token
from patchula.http.fetcher import Fetcher, host_key, make_client
from patchula.models import FetchResponse
from tests.fake_registry import FakeRegistry

START = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
REGISTRY = "https://registry.example"
REALM = "https://auth.example:8443/token"
SCOPE = "repository:a/b:pull"
CHALLENGE = {
    "WWW-Authenticate": f'Bearer realm="{REALM}",service="registry.example",scope="{SCOPE}"'
}


@pytest.mark.parametrize(
    ("target", "scheme"),
    [("file:///etc/passwd", "file"), ("gopher://r.example/n", "gopher"), ("data:,x", "data")],
)
def test_a_next_page_that_is_not_http_names_its_scheme(target: str, scheme: str) -> None:
    """A ``file:`` next page is refused by its scheme, not as "another host (?)"."""
    url = "https://r.example/v2/a/tags/list?n=5"
    page = FetchResponse(200, url, (("link", f'<{target}>; rel="next"'),), b"", START)
    with pytest.raises(RegistryError) as caught:
        next_link(page, url, url, "image", "tag list")
    assert str(caught.value) == (
        f"image: the tag list's next page is a non-HTTP(S) location ('{scheme}'); not followed"
    )
    assert "passwd" not in str(caught.value)


@pytest.mark.anyio
async def test_a_refused_bearer_token_is_said_to_be_refused() -> None:
    """The registry refuses the token its token service gave: not "no credential configured"."""
    with respx.mock() as router:
        router.get(f"{REGISTRY}/v2/a/b/tags/list").respond(401, headers=CHALLENGE)
        router.get(url__startswith=REALM).respond(200, json={"token": "tok-OTHER"})
        async with httpx.AsyncClient() as client:
            response = await Fetcher(client)(f"{REGISTRY}/v2/a/b/tags/list", scope=SCOPE)
    assert response.status == 401
    with pytest.raises(RegistryError) as caught:
        check_status(response, "image 'a/b'")
    assert str(caught.value) == (
        "image 'a/b': HTTP 401 from registry.example: the bearer token from the token service "
        "at auth.example:8443 was refused"
    )
    assert "tok-OTHER" not in str(caught.value)


def test_a_token_service_is_named_with_its_port() -> None:
    """A token answer without a token names the service as host:port."""
    answer = FetchResponse(200, "http://127.0.0.1:18802/token", (), b"{}", START)
    with pytest.raises(RegistryError, match=r"token service at 127\.0\.0\.1:18802 answered"):
        read_token(answer)


@pytest.mark.anyio
async def test_an_oversized_response_header_is_named_not_unreachable() -> None:
    """A 200 kB response header fails that lookup as "header over the 100 KiB limit", once."""
    with FakeRegistry() as fake:
        npm = fake.host("npm")
        npm.fail_next(1, 200, {"X-Padding": "a" * 200_000}, route="GET /big")
        async with make_client() as client:
            fetcher = Fetcher(client)
            with pytest.raises(RegistryError) as caught:
                await fetcher(f"{npm.url}/big")
            assert fetcher.unreachable == {}
        assert npm.requests_by_route["GET /big"] == 1
    assert not isinstance(caught.value, RegistryUnreachable)
    assert str(caught.value) == (
        f"{host_key(npm.url)} sent a response header over the 100 KiB limit; not retried"
    )
