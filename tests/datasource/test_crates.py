"""The crates.io sparse index datasource, against the loopback fake registry."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from patchula.datasource import crates
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
