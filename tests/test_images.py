"""Container images in the scan: digests, mutable tags, unknown tag ages, the tag-list floor.

Run end to end through ``patchula.scan.scan`` with a real ``Fetcher`` against respx routes and
the stub image plugins (``tests/images_stub.py``); each test named ``…_with_stub_images`` can be
switched to the real plugins and the fake registry once they are merged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import respx
from typer.testing import CliRunner

from patchula.cache import Cache
from patchula.cli import app
from patchula.clock import FixedClock
from patchula.http.fetcher import Fetcher, Timer
from patchula.http.lazy import LazyFetcher
from patchula.scan import Row, scan
from patchula.settings import Settings
from tests.images_stub import DIGEST_A, DIGEST_B, DIGEST_C, register

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
BASE = "https://registry.test"
PYTHON = f"{BASE}/v2/library/python"


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        """Return the time the test set."""
        return self.now


@pytest.fixture
def images(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stub docker datasource, versioning and Dockerfile manager."""
    register(monkeypatch)


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    """The respx routes of a test; each must be matched, and unmatched requests fail."""
    with respx.mock(assert_all_called=False) as mock:
        yield mock


def _tags(
    router: respx.MockRouter, *tags: str, headers: dict[str, str] | None = None
) -> respx.Route:
    return router.get(f"{PYTHON}/tags/list").respond(
        200, json={"name": "library/python", "tags": list(tags)}, headers=headers or {}
    )


def _digest(router: respx.MockRouter, tag: str, digest: str | None) -> respx.Route:
    headers = {"Docker-Content-Digest": digest} if digest else {}
    return router.head(f"{PYTHON}/manifests/{tag}").respond(200, headers=headers)


async def _scan(
    checkout: Path,
    cache: Cache | None = None,
    clock: Clock | None = None,
    **settings: object,
) -> list[Row]:
    chosen = Settings.model_validate({"registries": {"docker": BASE}, **settings})
    timer = Timer(wall=clock) if clock is not None else None
    fetcher = Fetcher(httpx.AsyncClient(), cache=cache, timer=timer)
    try:
        result = await scan([str(checkout)], chosen, fetcher, FixedClock(NOW))
    finally:
        await fetcher.aclose()
    return sorted(result.repos[0].rows, key=lambda r: (r.dependency.file, r.dependency.line or 0))


def _dockerfile(root: Path, *images: str, name: str = "Dockerfile") -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"FROM {image}\n" for image in images))
    return root


@pytest.mark.anyio
async def test_a_version_tag_without_digest_sends_no_digest_request_with_stub_images(
    images: None, router: respx.MockRouter, tmp_path: Path
) -> None:
    """``python:3.12``: the tag list alone decides; no manifest HEAD spends the pull quota."""
    tags = _tags(router, "3.11", "3.12", "3.13", "latest")
    head = router.head(url__startswith=f"{PYTHON}/manifests/")
    [row] = await _scan(_dockerfile(tmp_path, "python:3.12"))
    f = row.finding
    assert (f.status, f.current, f.latest, f.eligible, f.update_type) == (
        "outdated",
        "3.12",
        "3.13",
        "3.13",
        "minor",
    )
    assert (f.digest, f.current_digest, f.new_digest) == (None, None, None)
    assert (tags.call_count, head.call_count) == (1, 0)
    assert row.dependency.declared == "python:3.12"


@pytest.mark.anyio
async def test_a_pinned_digest_that_still_matches_is_up_to_date_with_stub_images(
    images: None, router: respx.MockRouter, tmp_path: Path
) -> None:
    """``python:3.13@sha256:a…`` while 3.13 still points at it: up to date, both digests named."""
    _tags(router, "3.12", "3.13")
    _digest(router, "3.13", DIGEST_A)
    [row] = await _scan(_dockerfile(tmp_path, f"python:3.13@{DIGEST_A}"))
    f = row.finding
    assert (f.status, f.update_type, f.reason) == ("up-to-date", None, None)
    assert (f.digest, f.current_digest, f.new_digest) == (DIGEST_A, DIGEST_A, None)


@pytest.mark.anyio
async def test_a_moved_digest_of_a_current_tag_is_a_digest_update_with_stub_images(
    images: None, router: respx.MockRouter, tmp_path: Path
) -> None:
    """The tag is the newest, but it was pushed again: ``outdated`` with update type digest."""
    _tags(router, "3.12", "3.13")
    _digest(router, "3.13", DIGEST_B)
    [row] = await _scan(_dockerfile(tmp_path, f"python:3.13@{DIGEST_A}"))
    f = row.finding
    assert (f.status, f.update_type, f.current, f.eligible) == ("outdated", "digest", "3.13", None)
    assert (f.digest, f.current_digest) == (DIGEST_A, DIGEST_B)
    assert f.reason == f"the digest of tag 3.13 moved: pinned {DIGEST_A}, now {DIGEST_B}"


@pytest.mark.anyio
async def test_a_newer_tag_of_a_pinned_reference_comes_with_its_digest_with_stub_images(
    images: None, router: respx.MockRouter, tmp_path: Path
) -> None:
    """A tag update takes precedence as the update type; the row still says the digest moved."""
    _tags(router, "3.12", "3.13")
    current = _digest(router, "3.12", DIGEST_B)
    proposed = _digest(router, "3.13", DIGEST_C)
    [row] = await _scan(_dockerfile(tmp_path, f"python:3.12@{DIGEST_A}"))
    f = row.finding
    assert (f.status, f.update_type, f.eligible) == ("outdated", "minor", "3.13")
    assert (f.digest, f.current_digest, f.new_digest) == (DIGEST_A, DIGEST_B, DIGEST_C)
    assert f.reason == f"the digest of tag 3.12 moved: pinned {DIGEST_A}, now {DIGEST_B}"
    assert (current.call_count, proposed.call_count) == (1, 1)


@pytest.mark.anyio
async def test_a_mutable_tag_tracks_its_digest_instead_of_versions_with_stub_images(
    images: None, router: respx.MockRouter, tmp_path: Path
) -> None:
    """``python`` (latest) and ``python:stable``: up to date, tracking what the tag points at.

    Neither asks for the tag list: a tag that is no version has no versions to move to.
    """
    tags = _tags(router, "3.13")
    _digest(router, "latest", DIGEST_A)
    _digest(router, "stable", DIGEST_B)
    rows = await _scan(_dockerfile(tmp_path, "python", "python:stable"))
    assert [(r.finding.status, r.finding.current, r.finding.reason) for r in rows] == [
        ("up-to-date", "latest", f"tracks the mutable tag latest (now {DIGEST_A})"),
        ("up-to-date", "stable", f"tracks the mutable tag stable (now {DIGEST_B})"),
    ]
    assert [r.finding.current_digest for r in rows] == [DIGEST_A, DIGEST_B]
    assert [r.catalog for r in rows] == [None, None]
    assert tags.call_count == 0


@pytest.mark.anyio
async def test_a_pinned_mutable_tag_that_moved_is_a_digest_update_with_stub_images(
    images: None, router: respx.MockRouter, tmp_path: Path
) -> None:
    """``python:latest@sha256:a…`` after latest moved to b: outdated, update type digest."""
    _digest(router, "latest", DIGEST_B)
    [row] = await _scan(_dockerfile(tmp_path, f"python:latest@{DIGEST_A}"))
    f = row.finding
    assert (f.status, f.update_type, f.digest, f.current_digest) == (
        "outdated",
        "digest",
        DIGEST_A,
        DIGEST_B,
    )
    assert f.reason == f"the mutable tag latest moved: pinned {DIGEST_A}, now {DIGEST_B}"


@pytest.mark.anyio
async def test_an_unread_digest_is_never_unchanged_with_stub_images(
    images: None, router: respx.MockRouter, tmp_path: Path
) -> None:
    """A failed digest lookup is an error row, a missing digest ``unknown``; neither up to date."""
    _tags(router, "3.12", "3.13")
    router.head(f"{PYTHON}/manifests/3.13").respond(404)
    _digest(router, "latest", None)
    rows = await _scan(_dockerfile(tmp_path, f"python:3.13@{DIGEST_A}", "python"))
    pinned, mutable = (r.finding for r in rows)
    assert pinned.status == "error"
    assert pinned.reason is not None
    assert pinned.reason.startswith("image docker.io/library/python:3.13 not found")
    assert pinned.reason.endswith("; the digest of tag 3.13 could not be read")
    assert "not found (404 from" in pinned.reason
    assert (pinned.digest, pinned.current_digest) == (DIGEST_A, None)
    assert (mutable.status, mutable.reason, mutable.current_digest) == (
        "unknown",
        "the digest of tag latest could not be read: the registry gave none",
        None,
    )


@pytest.mark.anyio
async def test_each_tag_digest_is_read_once_per_run_with_stub_images(
    images: None, router: respx.MockRouter, tmp_path: Path
) -> None:
    """Three files pinning ``python:3.13`` and two naming ``latest``: one HEAD per tag."""
    _tags(router, "3.13")
    pinned = _digest(router, "3.13", DIGEST_A)
    latest = _digest(router, "latest", DIGEST_B)
    for sub in ("a", "b", "c"):
        _dockerfile(tmp_path, f"python:3.13@{DIGEST_A}", "python:latest", name=f"{sub}/Dockerfile")
    rows = await _scan(tmp_path)
    assert len(rows) == 6
    assert {r.finding.status for r in rows} == {"up-to-date"}
    assert (pinned.call_count, latest.call_count) == (1, 1)


@pytest.mark.anyio
async def test_tag_ages_are_unknown_and_follow_the_unknown_age_setting_with_stub_images(
    images: None, router: respx.MockRouter, tmp_path: Path
) -> None:
    """OCI tags have no dates: held back under ``hold``, admitted under ``admit``, said so."""
    _tags(router, "3.12", "3.13")
    checkout = _dockerfile(tmp_path, "python:3.12")
    [held] = await _scan(checkout, min_release_age="3d")
    assert (held.finding.status, held.finding.eligible) == ("held-back", None)
    [(version, released, eligible, reason)] = [
        (h.version, h.released_at, h.eligible_at, h.reason) for h in held.finding.held_back
    ]
    assert (version, released, eligible) == ("3.13", None, None)
    assert reason.startswith("age unknown: the registry gives no publish time")
    [admitted] = await _scan(checkout, min_release_age="3d", unknown_age="admit")
    assert (admitted.finding.status, admitted.finding.eligible) == ("outdated", "3.13")
    assert admitted.finding.reason == "3.13: age unknown, admitted by policy"


@pytest.mark.anyio
async def test_registry_freshness_secs_keeps_unvalidated_tag_lists_with_stub_images(
    images: None, router: respx.MockRouter, tmp_path: Path
) -> None:
    """A tag list with no ETag nor Last-Modified is kept ``registry_freshness_secs`` from its fetch.

    The default 3600 s: no request 10 minutes later; 0 restores upstream freshness at once,
    on the same cache; the floor was never extended by the reads in between.
    """
    tags = _tags(router, "3.12", "3.13")
    checkout = _dockerfile(tmp_path / "app", "python:3.12")
    cache = Cache.open(tmp_path / "c.sqlite3")
    clock = Clock()
    try:
        await _scan(checkout, cache, clock)
        clock.now = NOW + timedelta(seconds=600)
        [row] = await _scan(checkout, cache, clock)
        assert (row.finding.latest, tags.call_count) == ("3.13", 1)
        await _scan(checkout, cache, clock, registry_freshness_secs=0)
        assert tags.call_count == 2
        clock.now = NOW + timedelta(seconds=3000)  # 2400 s after the last fetch
        await _scan(checkout, cache, clock)
        assert tags.call_count == 2
        clock.now = NOW + timedelta(seconds=600 + 3601)
        await _scan(checkout, cache, clock)
        assert tags.call_count == 3
    finally:
        await cache.aclose()


@pytest.mark.anyio
async def test_registry_freshness_secs_spares_tag_lists_with_validators_with_stub_images(
    images: None, router: respx.MockRouter, tmp_path: Path
) -> None:
    """A tag list sent with an ETag keeps its upstream policy: the next run revalidates it."""
    tags = _tags(router, "3.12", headers={"ETag": '"v1"'})
    checkout = _dockerfile(tmp_path / "app", "python:3.12")
    cache = Cache.open(tmp_path / "c.sqlite3")
    clock = Clock()
    try:
        await _scan(checkout, cache, clock)
        clock.now = NOW + timedelta(seconds=60)
        tags.respond(304, headers={"ETag": '"v1"'})
        [row] = await _scan(checkout, cache, clock)
        assert (row.finding.status, tags.call_count) == ("up-to-date", 2)
        assert tags.calls.last.request.headers["if-none-match"] == '"v1"'
    finally:
        await cache.aclose()


def test_patchula_run_reports_image_rows_in_json_with_stub_images(
    images: None, router: respx.MockRouter, tmp_path: Path
) -> None:
    """``patchula run --format json``: the image rows with their files, lines and digests."""
    _tags(router, "3.12", "3.13")
    _digest(router, "3.12", DIGEST_B)
    _digest(router, "3.13", DIGEST_C)
    _digest(router, "latest", DIGEST_A)
    checkout = _dockerfile(tmp_path / "app", f"python:3.12@{DIGEST_A}", "python")
    result = CliRunner().invoke(
        app,
        ["run", str(checkout), "--format", "json", "--no-cache", "--registry", f"docker={BASE}"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0
    rows = json.loads(result.stdout)["repositories"][0]["dependencies"]
    assert [
        (
            r["file"],
            r["line"],
            r["ecosystem"],
            r["declared"],
            r["current"],
            r["eligible"],
            r["updateType"],
            r["currentDigest"],
            r["newDigest"],
            r["status"],
        )
        for r in rows
    ] == [
        (
            "Dockerfile",
            1,
            "docker",
            f"python:3.12@{DIGEST_A}",
            "3.12",
            "3.13",
            "minor",
            DIGEST_B,
            DIGEST_C,
            "outdated",
        ),
        ("Dockerfile", 2, "docker", "python", "latest", None, None, DIGEST_A, None, "up-to-date"),
    ]


@pytest.mark.anyio
async def test_the_tag_list_floor_is_set_at_the_first_image_lookup_with_stub_images(
    images: None, router: respx.MockRouter, tmp_path: Path
) -> None:
    """A run of mutable tags only sets it too; a run without images never sets it."""
    _digest(router, "latest", DIGEST_A)
    chosen = Settings.model_validate({"registries": {"docker": BASE}})
    for checkout, floors in (
        (tmp_path / "none", {}),
        (_dockerfile(tmp_path / "latest", "python"), {"oci-tags-v1": 3600.0}),
    ):
        checkout.mkdir(exist_ok=True)
        fetcher = Fetcher(httpx.AsyncClient())
        await scan([str(checkout)], chosen, fetcher, FixedClock(NOW))
        await fetcher.aclose()
        assert fetcher.freshness_floors == floors
    lazy = LazyFetcher(Fetcher)
    lazy.keep_fresh(["oci-tags-v1"], 60.0, unvalidated_only=True)
    assert lazy.fetcher()._floors["oci-tags-v1"].unvalidated_only
