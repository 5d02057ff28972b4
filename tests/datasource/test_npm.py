"""The npm datasource: packument URL, full-document request, parsing and HTTP outcomes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
import respx

from patchula.datasource import npm
from patchula.errors import PackageNotFound, RegistryError
from patchula.models import Catalog, FetchResponse, Release

if TYPE_CHECKING:
    from collections.abc import Iterator

    from patchula.datasource.base import Fetch
from tests.datasource.base import httpx_fetch

FIXTURES = Path(__file__).parent.parent / "fixtures" / "registry" / "npm"
FETCHED_AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
BASE = npm.DEFAULT_BASE_URL


def _fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _parse(content: bytes, package_name: str = "express") -> Catalog:
    return npm.parse(content, package_name=package_name, fetched_at=FETCHED_AT)


def _httpx_fetch(client: httpx.AsyncClient) -> Fetch:
    return httpx_fetch(client, FETCHED_AT)


@pytest.fixture
def registry() -> Iterator[respx.MockRouter]:
    """Mock the registry; unmatched requests and unused routes fail the test."""
    with respx.mock(base_url=BASE, assert_all_mocked=True, assert_all_called=True) as router:
        yield router


@pytest.mark.anyio
async def test_scoped_name_is_requested_with_encoded_slash(registry: respx.MockRouter) -> None:
    """A scoped package is fetched at ``/@scope%2fname`` with ``Accept: application/json``."""
    route = registry.get("/@isaacs%2fstring-locale-compare").respond(
        200,
        content=_fixture("isaacs-string-locale-compare.json"),
        headers={"content-type": "application/json"},
    )
    async with httpx.AsyncClient() as client:
        catalog = await npm.get_catalog(_httpx_fetch(client), BASE, "@isaacs/string-locale-compare")
    request = route.calls.last.request
    assert request.url.raw_path == b"/@isaacs%2fstring-locale-compare"
    assert request.headers["accept"] == "application/json"
    assert catalog.source_url == "https://registry.npmjs.org/@isaacs%2fstring-locale-compare"
    assert catalog.fetched_at == FETCHED_AT
    assert catalog.package_name == "@isaacs/string-locale-compare"
    assert [r.version for r in catalog.releases] == ["1.0.0", "1.0.1", "1.1.0"]
    assert catalog.latest == "1.1.0"
    assert catalog.release("1.1.0") == Release(
        version="1.1.0", released_at=datetime(2024, 4, 23, 7, 51, 22, tzinfo=UTC)
    )


@pytest.mark.parametrize(
    ("base_url", "name", "url"),
    [
        (BASE, "@types/node", "https://registry.npmjs.org/@types%2fnode"),
        (BASE + "/", "left-pad", "https://registry.npmjs.org/left-pad"),
        ("https://npm.example/repo/npm/", "@a/b", "https://npm.example/repo/npm/@a%2fb"),
        (BASE, "JSONStream", "https://registry.npmjs.org/JSONStream"),
    ],
)
def test_package_url(base_url: str, name: str, url: str) -> None:
    """Only a scoped name's slash is encoded (lower-case ``%2f``); a base's trailing slash goes."""
    assert npm.package_url(base_url, name) == url


@pytest.mark.anyio
@pytest.mark.parametrize("status", [404, 410])
async def test_missing_package(registry: respx.MockRouter, status: int) -> None:
    """A 404 or 410 answer means the package does not exist."""
    registry.get("/left-pad").respond(status, json={"error": "Not found"})
    async with httpx.AsyncClient() as client:
        with pytest.raises(PackageNotFound, match="npm package 'left-pad' not found"):
            await npm.get_catalog(_httpx_fetch(client), BASE, "left-pad")


@pytest.mark.anyio
async def test_server_error(registry: respx.MockRouter) -> None:
    """A 5xx answer is a registry error naming the status."""
    registry.get("/left-pad").respond(500, text="oops")
    async with httpx.AsyncClient() as client:
        with pytest.raises(RegistryError, match="HTTP 500"):
            await npm.get_catalog(_httpx_fetch(client), BASE, "left-pad")


def test_real_packument() -> None:
    """A trimmed real packument gives semver-sorted releases with their publish times."""
    catalog = _parse(_fixture("express.json"))
    assert catalog.datasource == "npm"
    assert [r.version for r in catalog.releases] == [
        "0.14.0",
        "4.21.2",
        "5.0.0-beta.3",
        "5.0.0",
        "5.3.0",
    ]
    assert catalog.release("5.3.0") == Release(
        version="5.3.0", released_at=datetime(2026, 10, 9, 12, 56, 54, tzinfo=UTC)
    )
    assert catalog.latest == "5.3.0"
    assert catalog.dist_tags == (("latest", "5.3.0"),)
    assert catalog.time_source == "npm packument time"


def test_invalid_semver_version_is_dropped() -> None:
    """A registry version that is not strict semver (express ``1.0.0beta``) is left out."""
    catalog = _parse(_fixture("express.json"))
    assert catalog.release("1.0.0beta") is None


def test_time_keys_that_are_not_versions_are_ignored() -> None:
    """``time.created`` and ``time.modified`` do not become releases."""
    catalog = _parse(_fixture("express.json"))
    assert {"created", "modified"}.isdisjoint(r.version for r in catalog.releases)


def test_deprecation_messages() -> None:
    """A message deprecates, ``""`` or absence means not deprecated, ``true`` says "deprecated"."""
    catalog = _parse(_fixture("deprecated.json"), "@acme/widget")
    assert {r.version: r.deprecated for r in catalog.releases} == {
        "1.0.0": "deprecated",
        "2.0.0": "security fix in 2.1.0",
        "2.1.0": None,
        "3.0.0-beta.2": None,
    }


def test_latest_is_the_dist_tag_not_the_highest_version() -> None:
    """``latest`` is ``dist-tags.latest`` even when a backport made it lower than other releases."""
    catalog = _parse(_fixture("backport-latest.json"), "@acme/http")
    assert catalog.latest == "1.4.1"
    assert [r.version for r in catalog.releases] == [
        "1.4.0",
        "1.4.1",
        "2.0.0",
        "2.1.0",
        "3.0.0-beta.1",
    ]
    assert catalog.dist_tags == (("beta", "3.0.0-beta.1"), ("latest", "1.4.1"), ("v2", "2.1.0"))
    assert catalog.dist_tag("v2") == "2.1.0"


def test_missing_time_entry_is_unknown() -> None:
    """A version without a ``time`` entry has an unknown publish time, not an invented one."""
    catalog = _parse(_fixture("backport-latest.json"), "@acme/http")
    assert catalog.release("2.1.0") == Release(version="2.1.0", released_at=None)
    assert catalog.release("1.4.1") == Release(
        version="1.4.1", released_at=datetime(2025, 5, 2, 8, 30, 0, tzinfo=UTC)
    )


def test_unpublished_package_has_no_releases() -> None:
    """A packument left by an unpublish (no versions, no dist-tags) gives an empty catalog."""
    catalog = _parse(_fixture("unpublished.json"), "acme-gone")
    assert catalog.releases == ()
    assert catalog.latest is None
    assert catalog.dist_tags == ()


@pytest.mark.parametrize(
    ("stamp", "expected"),
    [
        ('"2011-03-26T17:37:10.227Z"', datetime(2011, 3, 26, 17, 37, 10, tzinfo=UTC)),
        (
            '"2024-12-04T23:03:58.786000+00:00"',
            datetime(2024, 12, 4, 23, 3, 58, tzinfo=UTC),
        ),
        ('"2016-01-01T02:00:00+02:00"', datetime(2016, 1, 1, 0, 0, tzinfo=UTC)),
        ('"2016-01-01T00:00:00"', datetime(2016, 1, 1, 0, 0, tzinfo=UTC)),
        ('"yesterday"', None),
        ("12345", None),
        ("null", None),
    ],
)
def test_publish_time_parsing(stamp: str, expected: datetime | None) -> None:
    """Publish times are read tolerantly into aware UTC datetimes (whole seconds kept)."""
    body = f'{{"versions": {{"1.0.0": {{}}}}, "time": {{"1.0.0": {stamp}}}}}'.encode()
    (release,) = _parse(body).releases
    assert release.released_at == expected
    assert release.released_at is None or release.released_at.tzinfo is UTC


@pytest.mark.parametrize(
    ("fixture", "reason"),
    [
        ("truncated.json", "Invalid JSON"),
        ("wrong-shape.json", "at versions"),
    ],
)
def test_unusable_body(fixture: str, reason: str) -> None:
    """A body that is not a packument is a registry error with a short reason."""
    with pytest.raises(RegistryError, match=reason) as caught:
        _parse(_fixture(fixture))
    assert len(caught.value.reason) < 300
    assert "npm package 'express': unusable packument" in caught.value.reason


@pytest.mark.anyio
async def test_malformed_body_from_registry(registry: respx.MockRouter) -> None:
    """A 200 answer whose body is not JSON becomes a registry error, not a crash.

    An HTML page (a mirror's login or error page) is named as such.
    """
    registry.get("/express").respond(200, content=b"<html>" + b"x" * 100_000)
    async with httpx.AsyncClient() as client:
        with pytest.raises(RegistryError, match=r"unusable packument \(HTML, not JSON\)") as caught:
            await npm.get_catalog(_httpx_fetch(client), BASE, "express")
    assert len(caught.value.reason) < 300


UNUSED = "the credential in ./.npmrc line 2 was not used: environment variable X is not set"


def _answer(status: int, credential: str | None, unused: str | None = None) -> FetchResponse:
    return FetchResponse(
        status=status,
        url="https://me:pw@npm.example.com/@acme%2fx?token=t",
        headers=(),
        content=b"",
        fetched_at=FETCHED_AT,
        credential=credential,
        credential_unused=unused,
    )


@pytest.mark.parametrize("status", [401, 403])
def test_refused_credential_names_its_source(status: int) -> None:
    """A 401/403 to a credentialed request names the credential's source, never its value."""
    with pytest.raises(RegistryError) as caught:
        npm.catalog_from(_answer(status, "./.npmrc"), "@acme/x", "https://npm.example.com/x")
    assert str(caught.value) == (
        f"npm package '@acme/x': HTTP {status} from npm.example.com: "
        "the credential from ./.npmrc was refused"
    )


def test_anonymous_401_says_where_a_credential_goes() -> None:
    """A 401 to an anonymous request says none is configured and where to add one."""
    with pytest.raises(RegistryError) as caught:
        npm.catalog_from(_answer(401, None), "@acme/x", "https://npm.example.com/x")
    assert str(caught.value) == (
        "npm package '@acme/x': HTTP 401 from npm.example.com: "
        "no credential configured for it (add one to .npmrc or ~/.netrc)"
    )


@pytest.mark.parametrize(
    ("credential", "why"),
    [
        (None, UNUSED),
        ("~/.netrc", f"the credential from ~/.netrc was refused; {UNUSED}"),
    ],
)
def test_401_says_why_a_configured_credential_was_not_sent(
    credential: str | None, why: str
) -> None:
    """A credential line that could not be used is named instead of "none configured"."""
    with pytest.raises(RegistryError) as caught:
        npm.catalog_from(_answer(401, credential, UNUSED), "@acme/x", "https://npm.example.com/x")
    assert str(caught.value) == f"npm package '@acme/x': HTTP 401 from npm.example.com: {why}"


def test_error_reasons_redact_the_url() -> None:
    """Other failures show the URL without userinfo or token-like query values."""
    with pytest.raises(PackageNotFound) as caught:
        npm.catalog_from(_answer(404, None), "@acme/x", "https://npm.example.com/x")
    assert "pw" not in str(caught.value)
    assert "https://***@npm.example.com/@acme%2fx?token=***" in str(caught.value)


HUGE = "9" * 5000


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"versions": {"1.0.0": {"x": ' + b"[" * 50_000 + b"]" * 50_000 + b"}}}", "recursion"),
        (b'{"versions": {"1.0.0": {"description": "a\\ud800"}}}', "Invalid JSON"),
        (b'{"dist-tags": {"latest": 1}}', "Expected str, got int at dist-tags.*"),
        (b'{"versions": {"1.0.0": []}}', "Expected object, got array at versions.*"),
        (b'{"name": 5}', "Expected str | null, got int at name"),
        (b"", "Invalid JSON: input data was truncated"),
        (b"\n  <!DOCTYPE html><title>Sign in</title>", "(HTML, not JSON)"),
    ],
    ids=[
        *("deep-nesting", "lone-surrogate", "tag-not-string", "manifest-array", "name", "empty"),
        "html",
    ],
)
def test_hostile_packuments_are_registry_errors(body: bytes, reason: str) -> None:
    """Deep nesting, a lone surrogate and wrong types are short registry errors, never crashes."""
    with pytest.raises(RegistryError) as caught:
        _parse(body)
    assert reason in caught.value.reason
    assert caught.value.reason.startswith("npm package 'express': unusable packument (")
    assert len(caught.value.reason) < 300


def test_values_the_scan_does_not_read_are_skipped_unbuilt() -> None:
    """A 5,000-digit number in an unread field, in ``deprecated`` or in ``time`` is no error."""
    body = (
        f'{{"versions": {{"1.0.0": {{"size": {HUGE}}}, "2.0.0": {{"deprecated": {HUGE}}},'
        f' "3.0.0": {{"deprecated": 1e999}}}},'
        f' "time": {{"1.0.0": "2020-01-01T00:00:00Z", "2.0.0": {HUGE}, "unpublished": {{}}}}}}'
    ).encode()
    assert _parse(body).releases == (
        Release("1.0.0", datetime(2020, 1, 1, tzinfo=UTC)),
        Release("2.0.0", None, deprecated="deprecated"),
        Release("3.0.0", None, deprecated="deprecated"),
    )


def test_escaped_deprecation_message_and_time_are_decoded() -> None:
    """JSON escapes in a deprecation message and a publish time are decoded, not kept raw."""
    body = (
        b'{"versions": {"1.0.0": {"deprecated": "use \\"b\\" \\u00e9"}},'
        b' "time": {"1.0.0": "2020-01-01T00:00:0\\u0030Z"}}'
    )
    assert _parse(body).releases == (
        Release("1.0.0", datetime(2020, 1, 1, tzinfo=UTC), deprecated='use "b" \u00e9'),
    )
