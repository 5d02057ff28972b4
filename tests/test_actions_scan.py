"""GitHub Actions references in the scan: SHA pins found back, moved tags, refs of unknown kind.

Through ``patchula.scan.scan`` with a real ``Fetcher``, the real ``github_actions`` manager,
``docker`` versioning and ``github-tags`` datasource against the fake GitHub; where a case needs
a tag that moved between the tag list and the ref read (a catalog read earlier), the
datasource's ``get_digest`` ability is replaced for the test.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from patchula.clock import FixedClock
from patchula.datasource import DATASOURCES
from patchula.datasource.base import Fetch
from patchula.http.fetcher import Fetcher
from patchula.scan import Row, scan
from patchula.settings import Settings
from tests.fake_registry import FakeRegistry
from tests.fake_registry.github import GitHub

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
MOVED = "d" * 40


def _sha(tag: str) -> str:
    return GitHub.commit_of("actions", "checkout", tag)


async def _scan(registry: FakeRegistry, root: Path, *uses: str) -> list[Row]:
    (root / ".github" / "workflows").mkdir(parents=True)
    steps = "".join(f"      - uses: {value}\n" for value in uses)
    workflow = f"on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n{steps}"
    (root / ".github" / "workflows" / "ci.yml").write_text(workflow)
    settings = Settings.model_validate(
        {"registries": {"github": registry.url("github"), "docker": registry.url("oci")}}
    )
    fetcher = Fetcher()
    try:
        result = await scan([str(root)], settings, fetcher, FixedClock(NOW))
    finally:
        await fetcher.aclose()
    return sorted(result.repos[0].rows, key=lambda r: r.dependency.line or 0)


def _checkout(registry: FakeRegistry) -> None:
    releases = {"v4.2.2": NOW - timedelta(days=100), "v4.3.0": NOW - timedelta(days=40)}
    registry.github.add_repo("actions", "checkout", releases, tags=("nightly",))


@pytest.mark.anyio
async def test_a_found_tag_that_moved_since_the_tag_list_is_a_digest_update(
    fake_registry: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tag list said v4.3.0 is at the pin; asked now, it is elsewhere: a ``digest`` update."""
    _checkout(fake_registry)
    datasource = DATASOURCES["github-tags"]
    real = datasource.get_digest
    assert real is not None

    async def moved(fetch: Fetch, base: str, package: str, ref: str) -> str | None:
        return MOVED if ref == "v4.3.0" else await real(fetch, base, package, ref)

    monkeypatch.setattr(datasource, "get_digest", moved)
    [row] = await _scan(fake_registry, tmp_path, f"actions/checkout@{_sha('v4.3.0')}")
    f = row.finding
    assert (f.status, f.current, f.update_type) == ("outdated", "v4.3.0", "digest")
    assert (f.digest, f.current_digest) == (_sha("v4.3.0"), MOVED)
    assert f.reason == (
        "v4.3.0, the tag at the pinned commit; v4.3.0 no longer points at the pinned commit "
        f"{_sha('v4.3.0')} (now {MOVED})"
    )


@pytest.mark.anyio
async def test_a_pin_at_a_non_version_tag_tracks_that_tag(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A bare pin whose commit only ``nightly`` names tracks it, and is current while it stays."""
    _checkout(fake_registry)
    [row] = await _scan(fake_registry, tmp_path, f"actions/checkout@{_sha('nightly')}")
    f = row.finding
    assert (f.status, f.current, f.digest, f.current_digest) == (
        "up-to-date",
        "nightly",
        _sha("nightly"),
        _sha("nightly"),
    )
    assert f.reason == f"tracks the tag nightly (now {_sha('nightly')})"


@pytest.mark.anyio
async def test_a_ref_whose_tag_list_failed_is_called_a_ref(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Without the tag list a branch cannot be told from a tag: the row says "ref"."""
    _checkout(fake_registry)
    github = fake_registry.host("github")
    github.server_error_next(1, status=401, route="GET /repos/actions/checkout/tags")
    fake_registry.github.add_repo("actions", "checkout", tags=("v1",), branches={"main": MOVED})
    [row] = await _scan(fake_registry, tmp_path, "actions/checkout@main")
    assert (row.finding.status, row.finding.reason) == (
        "up-to-date",
        f"tracks the ref main (now {MOVED})",
    )


@pytest.mark.anyio
async def test_a_bare_pin_costs_the_tag_list_and_the_ref_reads_only(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """One tag list page, the found tag's and the proposed tag's commit; no release list."""
    _checkout(fake_registry)
    [row] = await _scan(fake_registry, tmp_path, f"actions/checkout@{_sha('v4.2.2')}")
    f = row.finding
    assert (f.status, f.current, f.eligible, f.new_digest) == (
        "outdated",
        "v4.2.2",
        "v4.3.0",
        _sha("v4.3.0"),
    )
    github = fake_registry.host("github")
    with github.lock:
        routes = dict(github.requests_by_route)
    assert routes == {
        "GET /repos/actions/checkout/tags": 1,
        "GET /repos/actions/checkout/git/matching-refs/tags/v4.2.2": 1,
        "GET /repos/actions/checkout/git/matching-refs/tags/v4.3.0": 1,
    }


@pytest.mark.anyio
async def test_an_image_digest_without_a_tag_is_still_skipped_without_a_request(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Image tag lists carry no digests: a ``docker://image@sha256:…`` step is not looked up."""
    [row] = await _scan(fake_registry, tmp_path, "docker://alpine@sha256:" + "c" * 64)
    assert (row.finding.status, row.finding.reason) == (
        "skipped",
        "a digest without a tag: no tag to compare it with; not looked up",
    )
    assert fake_registry.host("oci").log == []


@pytest.mark.anyio
async def test_floating_refs_keep_their_precision(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``@v4`` proposes ``v5``, ``@v4.2`` ``v5.0`` (same precision), without a commit read."""
    fake_registry.github.add_repo(
        "actions",
        "checkout",
        {"v5.0.0": NOW - timedelta(days=10), "v4.3.0": NOW - timedelta(days=40)},
        tags=("v5", "v5.0", "v4", "v4.3", "v4.2"),
    )
    rows = await _scan(fake_registry, tmp_path, "actions/checkout@v4", "actions/checkout@v4.2")
    assert [
        (r.finding.current, r.finding.eligible, r.finding.update_type, r.finding.status)
        for r in rows
    ] == [("v4", "v5", "major", "outdated"), ("v4.2", "v5.0", "major", "outdated")]
    github = fake_registry.host("github")
    with github.lock:
        assert not [route for route in github.requests_by_route if "/git/" in route]


@pytest.mark.anyio
async def test_a_ref_github_does_not_have_is_unknown_in_githubs_words(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """No such branch (nor tag): ``unknown``, saying so, never up to date."""
    _checkout(fake_registry)
    [row] = await _scan(fake_registry, tmp_path, "actions/checkout@gone")
    assert (row.finding.status, row.finding.reason) == (
        "unknown",
        "the commit of branch gone could not be read: GitHub has no tag or branch of that name",
    )


def _repo(registry: FakeRegistry, tags: dict[str, int], same: dict[str, str]) -> None:
    """``actions/checkout`` with ``tags`` (tag → age in days); ``same``: tag → tag whose commit."""
    dated = {tag: NOW - timedelta(days=days) for tag, days in tags.items()}
    registry.github.add_repo("actions", "checkout", tags=dated)
    for tag, other in same.items():
        registry.github.point_tag("actions", "checkout", tag, _sha(other))


@pytest.mark.anyio
async def test_a_floating_major_whose_new_major_has_no_floating_tag_is_pinned_in_full(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``@v1`` beside ``v2.0.0`` and no ``v2``: outdated (major) to ``v2.0.0``, saying why."""
    _repo(fake_registry, {"v1": 90, "v1.2.3": 90, "v2.0.0": 30}, {"v1": "v1.2.3"})
    [row] = await _scan(fake_registry, tmp_path, "actions/checkout@v1")
    f = row.finding
    assert (f.status, f.current, f.latest, f.eligible, f.update_type, f.versions_behind) == (
        "outdated",
        "v1",
        "v2.0.0",
        "v2.0.0",
        "major",
        1,
    )
    assert f.reason == "no floating v2 tag; pinning v2.0.0"


@pytest.mark.anyio
async def test_a_floating_major_moves_to_the_newest_major_floating_or_not(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``v2`` exists but the newest major has only ``v3.0.0``/``v3.1.0``: ``v3.1.0`` is proposed.

    A floating ``v4.2`` reads its own precision the same way: ``v4.3`` is no tag, ``v4.3.1`` is.
    """
    tags = {"v1": 99, "v2": 60, "v2.0.0": 60, "v3.0.0": 20, "v3.1.0": 10, "v3.1": 10}
    _repo(fake_registry, tags, {"v2": "v2.0.0", "v3.1": "v3.1.0"})
    rows = await _scan(fake_registry, tmp_path, "actions/checkout@v1", "actions/checkout@v3.1")
    assert [
        (r.finding.status, r.finding.eligible, r.finding.update_type, r.finding.reason)
        for r in rows
    ] == [
        ("outdated", "v3.1.0", "major", "no floating v3 tag; pinning v3.1.0"),
        ("up-to-date", None, None, None),
    ]
    # v2 and the most precise tags of the v3 line; v3.1 is not counted beside v3.1.0.
    assert rows[0].finding.versions_behind == 3


@pytest.mark.anyio
async def test_a_floating_tag_behind_its_newest_release_is_said_on_its_row(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``v2`` at ``v2.0.0``'s commit while ``v2.1.0`` exists: up to date, and a user is told."""
    tags = {"v2": 60, "v2.0.0": 60, "v2.1.0": 5, "v1": 99, "v1.0.0": 99}
    _repo(fake_registry, tags, {"v2": "v2.0.0", "v1": "v1.0.0"})
    rows = await _scan(
        fake_registry,
        tmp_path,
        "actions/checkout@v2",
        "actions/checkout@v1",
        f"actions/checkout@{_sha('v2.0.0')} # v2",
    )
    lag = (
        "tag v2 points at v2.0.0's commit, not the newest v2.1.0's"
        " (a user on v2 does not get v2.1.0)"
    )
    assert [(r.finding.status, r.finding.eligible, r.finding.reason) for r in rows] == [
        ("up-to-date", None, lag),
        ("outdated", "v2", lag),
        ("up-to-date", None, lag),
    ]


@pytest.mark.anyio
async def test_a_floating_tag_at_its_newest_release_or_at_no_release_says_nothing(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``v2`` at ``v2.1.0``'s commit: nothing to say; ``v3`` at a commit no release has: unknown.

    A floating tag whose commit no release of its line has (moved to a branch head, say) is
    not called behind: nothing says which release it is.
    """
    tags = {"v2": 60, "v2.0.0": 60, "v2.1.0": 5, "v3": 1, "v3.0.0": 2}
    _repo(fake_registry, tags, {"v2": "v2.1.0"})
    rows = await _scan(fake_registry, tmp_path, "actions/checkout@v2", "actions/checkout@v3")
    assert [(r.finding.status, r.finding.eligible, r.finding.reason) for r in rows] == [
        ("outdated", "v3", None),
        ("up-to-date", None, None),
    ]
