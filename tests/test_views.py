"""Catalog views: the ``catalog-view-v1`` document, the view identity and the reuse window."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson
import pytest

from patchula.models import Catalog, Release
from patchula.views import REPRESENTATION, decode, encode, reusable, reuse_window, view_key

T = datetime(2026, 11, 30, 12, 0, 0, 123456, tzinfo=UTC)

CATALOG = Catalog(
    datasource="crates",
    package_name="serde",
    releases=(
        Release(
            "1.0.2",
            None,
            yanked=True,
            deprecated="use 1.0.3",
            prerelease=True,
            digest="ab",
            yanked_reason="broken build",
        ),
        Release("1.0.1", T - timedelta(days=3), installable=False),
    ),
    latest="1.0.1",
    fetched_at=T,
    dist_tags=(("latest", "1.0.1"), ("next", "1.0.2")),
    time_source="crates.io index pubtime",
    source_url="https://index.crates.io/se/rd/serde",
    reused=False,
    lists_every_version=False,
    successor="serde2 2.0.0",
    caveat="the check for a successor failed",
    note="newer majors probed up to a bound",
    path_latest="1.0.0",
)


def test_every_catalog_and_release_field_and_the_lazy_times_survive_a_round_trip() -> None:
    """A view gives back the catalog exactly, with the lazily found times and their sources."""
    times = {"1.0.2": T - timedelta(hours=5), "0.9.0": None}
    sources = {"1.0.2": "crates.io API created_at"}
    document = decode(encode(CATALOG, times, sources))
    assert document is not None
    assert document.catalog == CATALOG
    assert (document.times, document.sources) == (times, sources)
    # Every field but ``reused`` differs from its default, so none can be silently dropped.
    defaults = Catalog("x", "x", (), None, T - timedelta(days=1))
    changed = {
        name
        for name in Catalog.__struct_fields__
        if getattr(CATALOG, name) != getattr(defaults, name)
    }
    # ``published_later`` is made at evaluation (a past ``--now``), from a catalog a view gave.
    assert changed == set(Catalog.__struct_fields__) - {"reused", "published_later"}


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        orjson.dumps({"representation": "catalog-view-v0"}),
        # One release row too short; a version that is a number; a time that is text.
        encode(CATALOG, {}, {}).replace(b'["1.0.1",', b'["1.0.1"],["x",', 1),
        encode(CATALOG, {}, {}).replace(b'"1.0.1",', b"101,", 1),
        encode(CATALOG, {"1.0.0": T}, {}).replace(b'"1.0.0":', b'"1.0.0":"x","y":', 1),
        encode(CATALOG, {}, {})[:-5],
    ],
)
def test_a_damaged_or_foreign_document_is_a_miss(body: bytes) -> None:
    """Anything but an intact ``catalog-view-v1`` document decodes to ``None``, never raises."""
    assert decode(body) is None


def test_the_view_key_separates_credentials_sources_and_mappings_and_holds_no_secret() -> None:
    """Anonymous and authenticated views, mirrors and mise mappings never share a key."""
    anonymous = view_key("npm", "https://registry.npmjs.org", "left-pad", None)
    token = "STANDIN-npm-token"  # noqa: S105 - a test stand-in
    authenticated = view_key("npm", "https://registry.npmjs.org", "left-pad", f"Bearer\0{token}")
    mirror = view_key("npm", "https://mirror.example/npm", "left-pad", None)
    mapped = view_key("npm", "https://registry.npmjs.org", "left-pad", None, "aqua:x/y")
    assert len({anonymous, authenticated, mirror, mapped}) == 4
    assert token not in authenticated
    assert orjson.loads(anonymous) == [
        REPRESENTATION,
        "npm",
        "https://registry.npmjs.org",
        "left-pad",
        "-",
        "",
    ]
    with_userinfo = view_key("npm", "http://user:STANDIN-pass@127.0.0.1:8080", "a", None)
    assert "STANDIN-pass" not in with_userinfo
    assert "user" not in with_userinfo
    assert orjson.loads(with_userinfo)[2] == "http://127.0.0.1:8080"


@pytest.mark.parametrize(
    ("wait", "window"),
    [
        (timedelta(hours=24), timedelta(hours=23)),
        (timedelta(days=3), timedelta(hours=24)),
        (timedelta(hours=2), timedelta(hours=1)),
        (timedelta(minutes=30), timedelta(hours=1)),
        (timedelta(hours=12, minutes=30), timedelta(hours=11, minutes=30)),
    ],
)
def test_the_reuse_window_is_the_wait_less_an_hour_between_one_and_24_hours(
    wait: timedelta, window: timedelta
) -> None:
    """``clamp(waitHours - 1, 1, 24)`` hours."""
    assert reuse_window(wait) == window


def test_reuse_is_strict_never_for_the_future_or_a_zero_wait_and_any_age_offline() -> None:
    """Inside ``[0, window)`` only; a future stamp is revalidated; offline takes any age."""
    wait = timedelta(days=3)
    assert reusable(T, T, wait, offline=False)
    assert reusable(T, T + timedelta(hours=23, minutes=59, seconds=59), wait, offline=False)
    assert not reusable(T, T + timedelta(hours=24), wait, offline=False)
    assert not reusable(T, T - timedelta(seconds=1), wait, offline=False)
    assert not reusable(T, T, timedelta(0), offline=False)
    assert reusable(T, T + timedelta(days=400), timedelta(0), offline=True)
