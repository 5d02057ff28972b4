"""The compact ``npm-packument-v2`` document: round trips, damage and size (issue 12 item 9)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest
import zstandard

from patchula.cache.store import compress as cache_compress
from patchula.datasource import npm, pypi
from patchula.errors import RegistryError
from tests.datasource.oracle import oracle_npm_catalog
from tests.datasource.real import NPM_DOCUMENTS, PYPI_DOCUMENTS, npm_packument, pypi_page

FETCHED_AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
EPOCH = datetime(2020, 1, 1, tzinfo=UTC)


def _packument(versions: dict[str, Any], tags: dict[str, str] | None = None) -> bytes:
    """Return a packument: ``versions`` maps a version to its time (or ``None``) and manifest."""
    document: dict[str, Any] = {
        "name": "acme",
        "dist-tags": tags if tags is not None else {},
        "versions": {version: manifest for version, (_, manifest) in versions.items()},
        "time": {
            "created": "2019-01-01T00:00:00.000Z",
            "modified": "2026-01-01T00:00:00.000Z",
            **{version: when for version, (when, _) in versions.items() if when is not None},
        },
    }
    return json.dumps(document).encode()


def _at(hours: float) -> str:
    return (EPOCH + timedelta(hours=hours)).isoformat().replace("+00:00", "Z")


def _round_trip(content: bytes) -> None:
    assert npm.parse(content, package_name="acme", fetched_at=FETCHED_AT) == oracle_npm_catalog(
        content, "acme", FETCHED_AT
    )


SHAPES: dict[str, dict[str, Any]] = {
    "releases": {f"1.{i}.0": (_at(i), {}) for i in range(5)},
    "labels-and-rests": {
        "19.0.0-rc-206df66e-20240912": (_at(3), {}),
        "0.0.0-experimental-206df66e-20240912": (_at(3), {}),
        "18.3.0-canary-0066e0b68-20240306": (_at(1), {}),
        "19.0.0-rc.1": (_at(2), {}),
        "1.0.0-a-": (_at(4), {}),
        "1.0.0-a--b": (_at(5), {}),
        "1.0.0+build.7": (_at(6), {}),
        "1.0.0-beta+exp.sha.5114f85": (_at(7), {}),
        "5.4.0-dev.20240101": (_at(8), {}),
        "0.0.0-0c756fb-697f004": (_at(9), {}),
    },
    "loose-and-unknown-times": {
        "v1.2.3": (_at(1), {}),
        "=1.2.4": (None, {}),
        "1.2.5": (None, {"deprecated": "use 2"}),
        "1.0.0": ("1900-01-01T00:00:00Z", {}),
        "2.0.0": ("2200-01-01T00:00:00Z", {"deprecated": True}),
        "9999999999999999.0.0": (_at(2), {}),
    },
    "same-time": {f"2.0.{i}": (_at(1), {}) for i in range(4)},
}


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_round_trip_keeps_every_version_time_and_deprecation(shape: dict[str, Any]) -> None:
    """Labels, rests, builds, loose spellings, unknown and far times come back as the oracle's."""
    _round_trip(_packument(shape, {"latest": next(iter(shape)), "next": "3.0.0-not-listed"}))


@pytest.mark.parametrize("count", [1, 64, 65, 700])
def test_round_trip_on_both_sides_of_the_short_column_limit(count: int) -> None:
    """Catalogs of up to 64 versions (LEB128 columns) and longer (msgpack lists) round-trip."""
    shape = {
        f"{i // 50}.{i % 7}.{i}" + (f"-canary-{i * 7919:x}-2024{i:04d}" if i % 3 else ""): (
            _at(i * 5 % 97) if i % 11 else None,
            {"deprecated": f"gone {i}"} if i % 13 == 0 else {},
        )
        for i in range(count)
    }
    _round_trip(_packument(shape, {"latest": next(iter(shape)), "beta": list(shape)[-1]}))


def test_tags_and_deprecations_survive_by_position() -> None:
    """dist-tags naming stored versions, naming unlisted ones, and deprecations come back."""
    content = _packument(
        {"1.0.0": (_at(2), {"deprecated": "old"}), "2.0.0": (_at(1), {})},
        {"latest": "1.0.0", "next": "9.9.9", "legacy": "2.0.0"},
    )
    catalog = npm.parse(content, package_name="acme", fetched_at=FETCHED_AT)
    assert catalog.dist_tags == (("latest", "1.0.0"), ("legacy", "2.0.0"), ("next", "9.9.9"))
    assert [(r.version, r.deprecated) for r in catalog.releases] == [
        ("1.0.0", "old"),
        ("2.0.0", None),
    ]


def test_a_release_only_packument_stores_two_columns() -> None:
    """Trailing empty columns are left out: left-pad's document is about a hundred bytes."""
    compact = npm.derive(npm_packument("left-pad"), package_name="left-pad")
    latest, columns = msgspec.msgpack.decode(compact)
    assert latest == 0  # 1.3.0 by its position: the first of the 15 in publish order here
    assert len(columns) == 2  # times and core deltas
    assert len(compact) < 120
    catalog = npm.parse_compact(compact, package_name="left-pad", fetched_at=FETCHED_AT)
    assert catalog.latest == "1.3.0"


DAMAGED = {
    "v1-json": b'{"name":"x","distTags":{},"versions":["1.0.0"],"times":[null],"deprecated":{}}',
    "truncated": msgspec.msgpack.encode([0, [b"\x00\x00\x00\x00", b"\x00\x00"]])[:-1],
    "lengths": msgspec.msgpack.encode([None, [b"\x00\x00\x00\x00\x00\x00\x00\x00", b"\x00\x00"]]),
    "negative-tag": msgspec.msgpack.encode([-1, [b"\x00\x00\x00\x00", b"\x00\x00\x00"]]),
    "bad-frame": msgspec.msgpack.encode([None, None, b"\x28\xb5\x2f\xfd garbage"]),
    "rest-missing": msgspec.msgpack.encode(
        [None, [b"\x00\x00\x00\x00", b"\x00\x00\x00", b"\x07", "-a", b"", "", ""]]
    ),
    "times-width": msgspec.msgpack.encode([None, [b"\x00\x00\x00", b"\x00\x00\x00"]]),
}


@pytest.mark.parametrize("content", DAMAGED.values(), ids=DAMAGED.keys())
def test_a_damaged_document_is_a_registry_error(content: bytes) -> None:
    """A v1 JSON body or a damaged v2 document is a registry error naming the package."""
    with pytest.raises(RegistryError, match=r"npm package 'acme': unusable npm-packument-v2"):
        npm.parse_compact(content, package_name="acme", fetched_at=FETCHED_AT)


def _compressed(data: bytes) -> int:
    return len(zstandard.ZstdCompressor(level=3).compress(data))


@pytest.mark.parametrize("name", NPM_DOCUMENTS)
def test_real_packuments_are_at_least_20_times_smaller(name: str) -> None:
    """Compact/raw on every real packument, both compressed alike (zstd 3) and as the cache does."""
    raw = npm_packument(name)
    compact = npm.derive(raw, package_name=name)
    assert _compressed(raw) / _compressed(compact) >= 20
    assert len(cache_compress(raw)) / len(cache_compress(compact)) >= 20


@pytest.mark.parametrize("name", PYPI_DOCUMENTS)
def test_real_pypi_pages_are_at_least_20_times_smaller(name: str) -> None:
    """The PyPI compact document on the real projects' pages, both compressed alike (zstd 3)."""
    raw = pypi_page(name)
    assert _compressed(raw) / _compressed(pypi.derive(raw, package_name=name)) >= 20
