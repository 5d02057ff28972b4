"""Container images in the scan: digests, mutable tags, unknown tag ages, the tag-list floor.

Run end to end through ``patchula.scan.scan`` with a real ``Fetcher``, the real ``dockerfile``
manager, ``docker`` versioning and ``docker`` datasource, against the loopback fake registry:
its OCI host stands for Docker Hub (``--registry docker=…``) and wants a pull token for every
``/v2/`` call, as Docker Hub does; its Docker Hub API host answers the tag API.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from patchula.cache import Cache
from patchula.cli import app
from patchula.clock import FixedClock
from patchula.http.fetcher import Fetcher, Timer
from patchula.http.lazy import LazyFetcher
from patchula.scan import Row, scan
from patchula.settings import Settings
from tests.fake_registry import FakeRegistry

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
DIGEST_A = "sha256:" + "a" * 64
DIGEST_B = "sha256:" + "b" * 64
DIGEST_C = "sha256:" + "c" * 64
PYTHON = "library/python"
TAGS_ROUTE = f"GET /v2/{PYTHON}/tags/list"


def _head(tag: str) -> str:
    return f"HEAD /v2/{PYTHON}/manifests/{tag}"


class Clock:
    """A wall clock the test moves by hand, starting now (the fake dates its tokens by now)."""

    def __init__(self) -> None:
        self.start = self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        """Return the time the test set."""
        return self.now


def _settings(registry: FakeRegistry, **settings: object) -> Settings:
    registries = {"docker": registry.url("oci"), "docker-hub": registry.url("docker-hub")}
    return Settings.model_validate({"registries": registries, **settings})


async def _scan(
    registry: FakeRegistry,
    checkout: Path,
    cache: Cache | None = None,
    clock: Clock | None = None,
    **settings: object,
) -> list[Row]:
    timer = Timer(wall=clock) if clock is not None else None
    fetcher = Fetcher(cache=cache, timer=timer)
    try:
        result = await scan(
            [str(checkout)], _settings(registry, **settings), fetcher, FixedClock(NOW)
        )
    finally:
        await fetcher.aclose()
    return sorted(result.repos[0].rows, key=lambda r: (r.dependency.file, r.dependency.line or 0))


def _dockerfile(root: Path, *images: str, name: str = "Dockerfile") -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"FROM {image}\n" for image in images))
    return root


def _routes(registry: FakeRegistry) -> dict[str, int]:
    with registry.host("oci").lock:
        return dict(registry.host("oci").requests_by_route)


@pytest.mark.anyio
async def test_a_version_tag_without_digest_sends_no_digest_request(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``python:3.12``: the tag list alone decides; no manifest HEAD spends the pull quota."""
    fake_registry.oci.add(PYTHON, dict.fromkeys(("3.11", "3.12", "3.13", "latest")))
    [row] = await _scan(fake_registry, _dockerfile(tmp_path, "python:3.12"))
    f = row.finding
    assert (f.status, f.current, f.latest, f.eligible, f.update_type) == (
        "outdated",
        "3.12",
        "3.13",
        "3.13",
        "minor",
    )
    assert (f.digest, f.current_digest, f.new_digest) == (None, None, None)
    routes = _routes(fake_registry)
    assert routes[TAGS_ROUTE] == 2  # the anonymous 401, then with the pull token
    assert routes["GET /token"] == 1
    assert not any(route.startswith(("HEAD", "GET")) and "/manifests/" in route for route in routes)
    assert row.dependency.declared == "python:3.12"
    assert row.dependency.package_name == "docker.io/library/python"


@pytest.mark.anyio
async def test_a_pinned_digest_that_still_matches_is_up_to_date(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``python:3.13@sha256:a…`` while 3.13 still points at it: up to date, both digests named."""
    fake_registry.oci.add(PYTHON, {"3.12": None, "3.13": DIGEST_A})
    [row] = await _scan(fake_registry, _dockerfile(tmp_path, f"python:3.13@{DIGEST_A}"))
    f = row.finding
    assert (f.status, f.update_type, f.reason) == ("up-to-date", None, None)
    assert (f.digest, f.current_digest, f.new_digest) == (DIGEST_A, DIGEST_A, None)
    assert _routes(fake_registry).get(f"GET /v2/{PYTHON}/manifests/3.13", 0) == 0


@pytest.mark.anyio
async def test_a_moved_digest_of_a_current_tag_is_a_digest_update(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """The tag is the newest, but it was pushed again: ``outdated`` with update type digest."""
    fake_registry.oci.add(PYTHON, {"3.12": None, "3.13": DIGEST_A})
    checkout = _dockerfile(tmp_path, f"python:3.13@{DIGEST_A}")
    [before] = await _scan(fake_registry, checkout)
    assert before.finding.status == "up-to-date"
    fake_registry.oci.add(PYTHON, {"3.13": DIGEST_B})  # re-pushed
    [row] = await _scan(fake_registry, checkout)
    f = row.finding
    # Renovate's digest update: the same tag, at what it points at now.
    assert (f.status, f.update_type, f.current, f.eligible) == (
        "outdated",
        "digest",
        "3.13",
        "3.13",
    )
    assert (f.digest, f.current_digest, f.new_digest) == (DIGEST_A, DIGEST_B, DIGEST_B)
    assert f.reason == f"the digest of tag 3.13 moved: pinned {DIGEST_A}, now {DIGEST_B}"


@pytest.mark.anyio
async def test_a_newer_tag_of_a_pinned_reference_comes_with_its_digest(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A tag update takes precedence as the update type; the row still says the digest moved."""
    fake_registry.oci.add(PYTHON, {"3.12": DIGEST_B, "3.13": DIGEST_C})
    [row] = await _scan(fake_registry, _dockerfile(tmp_path, f"python:3.12@{DIGEST_A}"))
    f = row.finding
    assert (f.status, f.update_type, f.eligible) == ("outdated", "minor", "3.13")
    assert (f.digest, f.current_digest, f.new_digest) == (DIGEST_A, DIGEST_B, DIGEST_C)
    assert f.reason == f"the digest of tag 3.12 moved: pinned {DIGEST_A}, now {DIGEST_B}"
    routes = _routes(fake_registry)
    # Each HEAD once with the token (a 401 first only while no token was at hand).
    assert (routes[_head("3.12")], routes[_head("3.13")]) in {(1, 1), (1, 2), (2, 1)}
    assert routes["GET /token"] == 1


@pytest.mark.anyio
async def test_a_mutable_tag_tracks_its_digest_instead_of_versions(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``python`` (latest) and ``python:stable``: up to date, tracking what the tag points at.

    Neither asks for the tag list: a tag that is no version has no versions to move to.
    """
    fake_registry.oci.add(PYTHON, {"3.13": None, "latest": DIGEST_A, "stable": DIGEST_B})
    rows = await _scan(fake_registry, _dockerfile(tmp_path, "python", "python:stable"))
    assert [(r.finding.status, r.finding.current, r.finding.reason) for r in rows] == [
        ("up-to-date", "latest", f"tracks the mutable tag latest (now {DIGEST_A})"),
        ("up-to-date", "stable", f"tracks the mutable tag stable (now {DIGEST_B})"),
    ]
    assert [r.finding.current_digest for r in rows] == [DIGEST_A, DIGEST_B]
    assert [r.catalog for r in rows] == [None, None]
    assert TAGS_ROUTE not in _routes(fake_registry)


@pytest.mark.anyio
async def test_a_pinned_mutable_tag_that_moved_is_a_digest_update(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``python:latest@sha256:a…`` after latest moved to b: outdated, update type digest."""
    fake_registry.oci.add(PYTHON, {"latest": DIGEST_B})
    [row] = await _scan(fake_registry, _dockerfile(tmp_path, f"python:latest@{DIGEST_A}"))
    f = row.finding
    assert (f.status, f.update_type, f.digest, f.current_digest) == (
        "outdated",
        "digest",
        DIGEST_A,
        DIGEST_B,
    )
    assert f.reason == f"the mutable tag latest moved: pinned {DIGEST_A}, now {DIGEST_B}"


@pytest.mark.anyio
async def test_an_unread_digest_is_never_unchanged(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A failed digest lookup is an error row, a missing digest ``unknown``; neither up to date.

    3.13 is listed but its HEAD answers 404; latest's manifest has neither a digest header nor
    a body to hash.
    """
    fake_registry.oci.add(PYTHON, {"3.12": None, "3.13": None, "latest": b""})
    fake_registry.oci.omit_digest_header = True
    fake_registry.host("oci").fail_next(9, 404, {}, route=_head("3.13"))
    rows = await _scan(fake_registry, _dockerfile(tmp_path, f"python:3.13@{DIGEST_A}", "python"))
    pinned, mutable = (r.finding for r in rows)
    assert pinned.status == "error"
    assert pinned.reason is not None
    assert pinned.reason.startswith("image 'docker.io/library/python' at '3.13' not found")
    assert pinned.reason.endswith("; the digest of tag 3.13 could not be read")
    assert "not found (404 from" in pinned.reason
    assert (pinned.digest, pinned.current_digest) == (DIGEST_A, None)
    assert (mutable.status, mutable.reason, mutable.current_digest) == (
        "unknown",
        "the digest of tag latest could not be read: the registry gave none",
        None,
    )
    # No digest in the HEAD: the GET was asked, and hashed nothing.
    assert _routes(fake_registry)[f"GET /v2/{PYTHON}/manifests/latest"] >= 1


@pytest.mark.anyio
async def test_each_tag_digest_is_read_once_per_run(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Three files pinning ``python:3.13`` and two naming ``latest``: one HEAD per tag."""
    fake_registry.oci.add(PYTHON, {"3.13": DIGEST_A, "latest": DIGEST_B})
    for sub in ("a", "b", "c"):
        _dockerfile(tmp_path, f"python:3.13@{DIGEST_A}", "python:latest", name=f"{sub}/Dockerfile")
    rows = await _scan(fake_registry, tmp_path)
    assert len(rows) == 6
    assert {r.finding.status for r in rows} == {"up-to-date"}
    statuses = [
        (entry.method, entry.path.rsplit("/", 1)[-1], entry.status)
        for entry in fake_registry.host("oci").log
        if "/manifests/" in entry.path
    ]
    assert sorted(s for s in statuses if s[2] == 200) == [
        ("HEAD", "3.13", 200),
        ("HEAD", "latest", 200),
    ]


@pytest.mark.anyio
async def test_tag_ages_are_unknown_and_follow_the_unknown_age_setting(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """OCI tags have no dates: held back under ``hold``, admitted under ``admit``, said so.

    An image of another registry (the fake OCI host by its address): no Docker Hub API to ask.
    """
    host = fake_registry.url("oci").removeprefix("http://")
    fake_registry.oci.add("acme/python", dict.fromkeys(("3.12", "3.13")))
    checkout = _dockerfile(tmp_path, f"{host}/acme/python:3.12")
    [held] = await _scan(fake_registry, checkout, min_release_age="3d")
    assert (held.finding.status, held.finding.eligible) == ("held-back", None)
    [(version, released, eligible, reason)] = [
        (h.version, h.released_at, h.eligible_at, h.reason) for h in held.finding.held_back
    ]
    assert (version, released, eligible) == ("3.13", None, None)
    assert reason == (
        "age unknown: an OCI image tag has no publish time in the registry; minor updates wait 72h"
    )
    [admitted] = await _scan(fake_registry, checkout, min_release_age="3d", unknown_age="admit")
    assert (admitted.finding.status, admitted.finding.eligible) == ("outdated", "3.13")
    assert admitted.finding.reason == "3.13: age unknown, admitted by policy"
    assert fake_registry.host("docker-hub").requests == 0


@pytest.mark.anyio
async def test_registry_freshness_secs_keeps_unvalidated_tag_lists(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A tag list with no ETag nor Last-Modified is kept ``registry_freshness_secs`` from its fetch.

    The default 3600 s: no request 10 minutes later; 0 restores upstream freshness at once,
    on the same cache; the floor was never extended by the reads in between.
    """
    fake_registry.oci.add(PYTHON, dict.fromkeys(("3.12", "3.13")))
    oci = fake_registry.host("oci")
    oci.validators = False
    oci.cache_control = None  # no upstream freshness either: only the floor keeps the list

    def fetched() -> int:
        return sum(e.status == 200 and "/tags/list" in e.path for e in oci.log)

    checkout = _dockerfile(tmp_path / "app", "python:3.12")
    cache = Cache.open(tmp_path / "c.sqlite3")
    clock = Clock()
    try:
        await _scan(fake_registry, checkout, cache, clock)
        clock.now = clock.start + timedelta(seconds=600)
        [row] = await _scan(fake_registry, checkout, cache, clock)
        assert (row.finding.latest, fetched()) == ("3.13", 1)
        await _scan(fake_registry, checkout, cache, clock, registry_freshness_secs=0)
        assert fetched() == 2
        clock.now = clock.start + timedelta(seconds=3000)  # 2400 s after the last fetch
        await _scan(fake_registry, checkout, cache, clock)
        assert fetched() == 2
        clock.now = clock.start + timedelta(seconds=600 + 3601)
        await _scan(fake_registry, checkout, cache, clock)
        assert fetched() == 3
    finally:
        await cache.aclose()


@pytest.mark.anyio
async def test_registry_freshness_secs_spares_tag_lists_with_validators(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A tag list sent with an ETag keeps its upstream policy: the next run revalidates it."""
    fake_registry.oci.add(PYTHON, dict.fromkeys(("3.12",)))
    oci = fake_registry.host("oci")
    oci.cache_control = None  # fresh for no time: the next run asks again
    checkout = _dockerfile(tmp_path / "app", "python:3.12")
    cache = Cache.open(tmp_path / "c.sqlite3")
    clock = Clock()
    try:
        await _scan(fake_registry, checkout, cache, clock)
        clock.now = clock.start + timedelta(seconds=60)
        oci.reset_stats()
        [row] = await _scan(fake_registry, checkout, cache, clock)
        assert row.finding.status == "up-to-date"
        assert [(e.method, e.status) for e in oci.log if "/tags/list" in e.path] == [("GET", 304)]
    finally:
        await cache.aclose()


def test_patchula_run_reports_image_rows_in_json(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``patchula run --format json``: the image rows with their files, lines and digests."""
    fake_registry.oci.add(PYTHON, {"3.12": DIGEST_B, "3.13": DIGEST_C, "latest": DIGEST_A})
    checkout = _dockerfile(tmp_path / "app", f"python:3.12@{DIGEST_A}", "python")
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(checkout),
            "--format",
            "json",
            "--no-cache",
            "--registry",
            f"docker={fake_registry.url('oci')}",
            "--registry",
            f"docker-hub={fake_registry.url('docker-hub')}",
        ],
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
async def test_the_tag_list_floor_is_set_at_the_first_image_lookup(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A run of mutable tags only sets it too; a run without images never sets it."""
    fake_registry.oci.add(PYTHON, {"latest": DIGEST_A})
    chosen = _settings(fake_registry)
    for checkout, floors in (
        (tmp_path / "none", {}),
        (_dockerfile(tmp_path / "latest", "python"), {"oci-tags-v1": 3600.0}),
    ):
        checkout.mkdir(exist_ok=True)
        fetcher = Fetcher()
        await scan([str(checkout)], chosen, fetcher, FixedClock(NOW))
        await fetcher.aclose()
        assert fetcher.freshness_floors == floors
    lazy = LazyFetcher(Fetcher)
    lazy.keep_fresh(["oci-tags-v1"], 60.0, unvalidated_only=True)
    assert lazy.fetcher()._floors["oci-tags-v1"].unvalidated_only


@pytest.mark.anyio
async def test_a_temurin_build_tag_is_a_version_with_newer_builds(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``eclipse-temurin:17.0.10_7-jdk`` → ``17.0.11_9-jdk``; ``17-jdk`` keeps its precision.

    A build tag's digest never moves, so tracking it would say "up to date" for good.
    """
    tags = ("17-jdk", "17.0.10_7-jdk", "17.0.11_9-jdk", "21-jdk", "21.0.3_9-jdk", "latest")
    fake_registry.oci.add("library/eclipse-temurin", dict.fromkeys(tags))
    checkout = _dockerfile(tmp_path, "eclipse-temurin:17.0.10_7-jdk", "eclipse-temurin:17-jdk")
    build, major = await _scan(fake_registry, checkout)
    assert (build.finding.status, build.finding.latest, build.finding.eligible) == (
        "outdated",
        "21.0.3_9-jdk",
        "21.0.3_9-jdk",
    )
    assert build.finding.update_type == "major"
    assert (major.finding.status, major.finding.latest, major.finding.update_type) == (
        "outdated",
        "21-jdk",
        "major",
    )
    # Within one line: the newer build of 17 (the trial's case without a 21 tag).
    fake_registry.oci.add("library/amazoncorretto", dict.fromkeys(tags[:3]))
    [line] = await _scan(fake_registry, _dockerfile(tmp_path, "amazoncorretto:17.0.10_7-jdk"))
    assert (line.finding.status, line.finding.eligible, line.finding.update_type) == (
        "outdated",
        "17.0.11_9-jdk",
        "patch",
    )


@pytest.mark.anyio
async def test_a_version_shaped_tag_no_scheme_reads_is_unknown_not_up_to_date(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``wildfly:26.1.3.Final`` names one release: its digest is tracked, but never "up to date"."""
    fake_registry.oci.add(PYTHON, {"26.1.3.Final": DIGEST_A, "27.0.0.Final": DIGEST_B})
    [row] = await _scan(fake_registry, _dockerfile(tmp_path, "python:26.1.3.Final"))
    f = row.finding
    assert (f.status, f.current_digest) == ("unknown", DIGEST_A)
    assert f.reason == (
        "26.1.3.Final looks like a version but is none the docker versioning reads: newer tags "
        f"are not compared; tracks the mutable tag 26.1.3.Final (now {DIGEST_A})"
    )


@pytest.mark.anyio
async def test_java_8_update_tags_move_to_newer_updates_of_their_variant(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``8u402-b06-jdk`` → ``8u412-b08-jdk`` (patch), in its own variant; never ``8-jdk``.

    Eclipse Temurin's ``-bNN`` build tags, openjdk's ``8u342-jdk`` and amazoncorretto's bare
    ``8u402`` are versions (8.0.NNN), not prereleases of ``8`` that never move.
    """
    temurin = (
        "8-jdk",
        "8-jre-jammy",
        "8u402-b06-jdk",
        "8u402-b06-jre-jammy",
        "8u412-b08-jdk",
        "8u412-b08-jdk-jammy",
        "8u412-b08-jre-jammy",
        "11.0.22_7-jdk",
        "latest",
    )
    fake_registry.oci.add("library/eclipse-temurin", dict.fromkeys(temurin))
    fake_registry.oci.add("library/openjdk", dict.fromkeys(("8-jdk", "8u342-jdk", "8u352-jdk")))
    fake_registry.oci.add("library/amazoncorretto", dict.fromkeys(("8", "8u402", "8u412-al2")))
    checkout = _dockerfile(
        tmp_path,
        "eclipse-temurin:8u402-b06-jdk",
        "eclipse-temurin:8u402-b06-jre-jammy",
        "openjdk:8u342-jdk",
        "amazoncorretto:8u402",
    )
    rows = await _scan(fake_registry, checkout)
    found = [
        (r.finding.status, r.finding.current, r.finding.eligible, r.finding.update_type)
        for r in rows
    ]
    assert found == [
        ("outdated", "8u402-b06-jdk", "8u412-b08-jdk", "patch"),
        ("outdated", "8u402-b06-jre-jammy", "8u412-b08-jre-jammy", "patch"),
        ("outdated", "8u342-jdk", "8u352-jdk", "patch"),
        ("up-to-date", "8u402", None, None),  # only ``8u412-al2``: another variant
    ]
    assert [r.finding.latest for r in rows] == [
        "8u412-b08-jdk",
        "8u412-b08-jre-jammy",
        "8u352-jdk",
        "8u402",
    ]


@pytest.mark.anyio
async def test_a_bitnami_revision_moves_to_newer_revisions_and_releases(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``7.2.4-debian-12-r9`` → ``7.2.4-debian-12-r10``, then ``7.2.5-debian-12-r0``.

    ``-rN`` is the revision (numeric: ``r10`` above ``r9``), ``debian-12`` the variant; the
    ``debian-11`` and revision-less tags are not candidates.
    """
    tags = ["7.2", "7.2-debian-12", "7.2.4-debian-12-r2", "7.2.4-debian-12-r9"]
    tags += ["7.2.4-debian-12-r10", "7.2.4-debian-11-r40", "latest"]
    fake_registry.oci.add("bitnami/redis", dict.fromkeys(tags))
    checkout = _dockerfile(tmp_path, "bitnami/redis:7.2.4-debian-12-r9")
    [row] = await _scan(fake_registry, checkout)
    f = row.finding
    assert (f.status, f.latest, f.eligible, f.update_type, f.versions_behind) == (
        "outdated",
        "7.2.4-debian-12-r10",
        "7.2.4-debian-12-r10",
        "patch",
        1,
    )
    fake_registry.oci.add("bitnami/redis", dict.fromkeys(("7.2.5-debian-12-r0", "7.2.5")))
    [row] = await _scan(fake_registry, checkout)
    f = row.finding
    assert (f.status, f.latest, f.eligible, f.versions_behind) == (
        "outdated",
        "7.2.5-debian-12-r0",
        "7.2.5-debian-12-r0",
        2,
    )


@pytest.mark.anyio
async def test_newer_releases_only_in_another_variant_are_named_not_silent(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Bitnami moved to ``debian-12``: a ``debian-11`` row is not silently up to date.

    It never moves across variants (status and eligible stay within ``debian-11``), but the
    row names the newer release tagged only elsewhere; a variant that keeps up says nothing.
    """
    tags = ["7.2.4-debian-11-r40", "7.2.4-debian-11-r41", "7.2.4-debian-12-r9"]
    tags += ["7.4.1-debian-12-r3", "7.4.1-debian-12", "7.4", "latest"]
    fake_registry.oci.add("bitnami/redis", dict.fromkeys(tags))
    checkout = _dockerfile(
        tmp_path,
        "bitnami/redis:7.2.4-debian-11-r41",
        "bitnami/redis:7.2.4-debian-11-r40",
        "bitnami/redis:7.2.4-debian-12-r9",
    )
    last, older, kept = await _scan(fake_registry, checkout)
    note = (
        "7.4.1-debian-12-r3 is newer, in another variant (tags move only within their own;"
        " the newest in this one is 7.2.4-debian-11-r41)"
    )
    assert (last.finding.status, last.finding.latest, last.finding.eligible) == (
        "up-to-date",
        "7.2.4-debian-11-r41",
        None,
    )
    assert last.finding.reason == note
    assert (older.finding.status, older.finding.eligible) == ("outdated", "7.2.4-debian-11-r41")
    assert older.finding.reason == note
    assert (kept.finding.status, kept.finding.eligible) == ("outdated", "7.4.1-debian-12-r3")
    assert kept.finding.reason is None
