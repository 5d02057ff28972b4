"""The crates.io sparse index datasource, against the loopback fake registry."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from patchula.datasource import crates
from patchula.datasource.base import Unavailable
from patchula.errors import PackageNotFound, RegistryError
from patchula.http.fetcher import Fetcher, make_client
from tests.fake_registry import FakeRegistry

T = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
FETCHED = datetime(2026, 11, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("a", "1/a"),
        ("cc", "2/cc"),
        ("syn", "3/s/syn"),
        ("Serde", "se/rd/serde"),
        ("tokio-util", "to/ki/tokio-util"),
    ],
)
def test_index_path(name: str, path: str) -> None:
    """The index path follows Cargo's length classes, lower-cased."""
    assert crates.index_path(name) == path


@pytest.mark.anyio
async def test_versions_yanks_and_pubtime(fake_registry: FakeRegistry) -> None:
    """Yanked versions are marked and never latest; pubtime gives release dates."""
    fake_registry.crates.add(
        "acme-widget", {"0.9.3": T, "1.0.0": T, "1.1.0": T, "1.2.0-rc.1": T}, yanked={"1.1.0"}
    )
    async with make_client() as client:
        catalog = await crates.get_catalog(
            Fetcher(client), fake_registry.url("crates-index"), "acme-widget"
        )
    assert [(r.version, r.yanked) for r in catalog.releases] == [
        ("0.9.3", False),
        ("1.0.0", False),
        ("1.1.0", True),
        ("1.2.0-rc.1", False),
    ]
    assert catalog.latest == "1.0.0"
    assert catalog.release("1.0.0") is not None
    assert catalog.release("1.0.0").released_at == T  # type: ignore[union-attr]
    assert fake_registry.host("crates-index").requests == 1


@pytest.mark.anyio
async def test_missing_pubtime_is_unknown(fake_registry: FakeRegistry) -> None:
    """Index lines without pubtime leave the publish time unknown, not invented."""
    fake_registry.crates.add("oldcrate", {"1.0.0": T}, pubtime=False)
    async with make_client() as client:
        catalog = await crates.get_catalog(
            Fetcher(client), fake_registry.url("crates-index"), "oldcrate"
        )
    assert [(r.version, r.released_at) for r in catalog.releases] == [("1.0.0", None)]


@pytest.mark.anyio
async def test_unknown_crate_is_not_found(fake_registry: FakeRegistry) -> None:
    """A crate missing from the index is PackageNotFound."""
    async with make_client() as client:
        with pytest.raises(PackageNotFound):
            await crates.get_catalog(Fetcher(client), fake_registry.url("crates-index"), "nope-zz")


def test_garbage_index_file_is_a_registry_error() -> None:
    """An index file with no version line is refused."""
    with pytest.raises(RegistryError, match="no usable version line"):
        crates.derive(b"<html>oops</html>\n", package_name="x")


def test_compact_document_roundtrip() -> None:
    """Derive keeps version, time and yank only; parse rebuilds the releases in semver order."""
    raw = (
        b'{"name":"x","vers":"1.10.0","deps":[],"cksum":"a","features":{},"yanked":false,'
        b'"pubtime":"2025-03-01T12:00:00Z"}\n'
        b'{"name":"x","vers":"1.9.0","deps":[],"cksum":"b","features":{},"yanked":true}\n'
    )
    catalog = crates.parse_compact(
        crates.derive(raw, package_name="x"), package_name="x", fetched_at=FETCHED
    )
    assert [(r.version, r.released_at, r.yanked) for r in catalog.releases] == [
        ("1.9.0", None, True),
        ("1.10.0", T, False),
    ]
    assert catalog.latest == "1.10.0"


def _line(**fields: object) -> bytes:
    entry = {"name": "serde", "vers": "1.0.0", "deps": [], "cksum": "c", "features": {}} | fields
    return json.dumps(entry).encode() + b"\n"


def _versions(content: bytes, name: str = "serde") -> list[str]:
    catalog = crates.parse_compact(
        crates.derive(content, package_name=name), package_name=name, fetched_at=FETCHED
    )
    return [release.version for release in catalog.releases]


@pytest.mark.parametrize(
    "extra",
    [
        {"name": "other", "vers": "1.8.0"},
        {"vers": "1.6.0", "v": 99},
        {"vers": "1.6.0", "v": 3},
        {"vers": "1.6.0", "v": "2"},
        {"vers": "1.6.0", "v": -1},
        {"vers": "1.6.0", "v": True},
        {"vers": "1.5.0", "yanked": "yes"},
        {"vers": "1.5.0", "yanked": 0},
        {"vers": "1.5.0", "name": None},
    ],
    ids=[
        "other-crate",
        "v99",
        "v3",
        "v-string",
        "v-negative",
        "v-bool",
        "yanked-string",
        "yanked-int",
        "no-name",
    ],
)
def test_lines_cargo_would_not_offer_are_dropped(extra: dict[str, object]) -> None:
    """Another crate's line, a schema ``v`` above 2 and a non-boolean ``yanked`` are no release."""
    content = _line(yanked=False) + _line(**extra)
    assert _versions(content) == ["1.0.0"]


def test_usable_lines_of_every_schema_and_spelling_are_kept() -> None:
    """``v`` absent, 1 or 2, ``yanked`` absent or null, the name in another case or with ``_``."""
    content = (
        _line(vers="1.0.0")
        + _line(vers="1.1.0", v=1, yanked=None)
        + _line(vers="1.2.0", v=2, yanked=True)
        + _line(vers="1.3.0", name="Serde_Json")
    )
    assert _versions(content, "serde-json") == ["1.3.0"]  # "serde" lines are another crate's
    assert _versions(content.replace(b'"serde"', b'"serde-json"'), "serde_json") == [
        "1.0.0",
        "1.1.0",
        "1.2.0",
        "1.3.0",
    ]


def test_a_file_of_only_dropped_lines_says_why() -> None:
    """When every line is dropped, the error counts the lines per reason, in file order."""
    content = (
        _line(name="other")
        + _line(name="other", vers="2.0.0")
        + _line(v=99)
        + _line(yanked="yes")
        + b"not json\n[1, 2]\n"
    )
    with pytest.raises(RegistryError) as caught:
        crates.derive(content, package_name="serde")
    assert caught.value.reason == (
        "crate 'serde': the index file has no usable version line (2 lines name another crate;"
        " 1 line has index schema v 99, above the 2 cargo reads; 1 line has a yanked value that"
        " is not true or false; 1 line is not JSON; 1 line is not an index entry)"
    )


def test_dependencies_come_only_from_lines_cargo_offers() -> None:
    """Another crate's line for the same version does not replace the crate's own deps."""
    own = _line(deps=[{"name": "a", "req": "^1"}])
    other = _line(name="other", deps=[{"name": "evil", "req": "^1"}])
    derived = crates.derive_dependencies(own + other, package_name="serde")
    assert json.loads(derived) == {"1.0.0": [["a", "^1"]]}


@pytest.mark.anyio
async def test_api_dates_and_a_version_the_api_does_not_list(fake_registry: FakeRegistry) -> None:
    """The web API dates what it lists; a version it does not list is ``Unavailable``.

    The index named that version, so its missing date is a failed lookup of it (naming the
    API's URL), never a version without a date.
    """
    fake_registry.crates.add("lazycrate", {"1.0.0": T}, pubtime=False)
    api = fake_registry.url("crates-api")
    async with make_client() as client:
        times = await crates.release_times(
            Fetcher(client), {"crates-api": api}, "lazycrate", ["1.0.0", "1.1.0"]
        )
    assert times == {
        "1.0.0": T,
        "1.1.0": Unavailable(
            "crate 'lazycrate' (crates.io API): version 1.1.0, which the index lists, is not"
            f" in its version list ({api}/api/v1/crates/lazycrate/versions?per_page=100)"
        ),
    }
