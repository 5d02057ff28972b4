"""Lookup decisions: current, latest, eligible, held back, update type, libyears."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from msgspec.structs import replace

from patchula.models import Catalog, Dependency, Release
from patchula.policy import ReleaseAgePolicy, evaluate
from patchula.versioning import cargo, npm, pep440

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def _npm_dep(constraint: str | None, name: str = "pkg") -> Dependency:
    return Dependency(
        manager="package_json",
        file="package.json",
        line=3,
        name=name,
        package_name=name,
        datasource="npm",
        versioning="npm",
        dep_type="dependencies",
        declared=constraint,
        constraint=constraint,
    )


def _py_dep(constraint: str | None) -> Dependency:
    return Dependency(
        manager="requirements_txt",
        file="requirements.txt",
        line=1,
        name="pkg",
        package_name="pkg",
        datasource="pypi",
        versioning="pep440",
        dep_type="requirements",
        declared=constraint,
        constraint=constraint,
    )


def _rel(version: str, days_ago: float | None, **kw: object) -> Release:
    when = None if days_ago is None else NOW - timedelta(days=days_ago)
    return Release(version, when, **kw)  # type: ignore[arg-type]


def _npm_catalog(*releases: Release, latest: str, tags: dict[str, str] | None = None) -> Catalog:
    tags = {"latest": latest, **(tags or {})}
    return Catalog(
        datasource="npm",
        package_name="pkg",
        releases=releases,
        latest=latest,
        fetched_at=NOW,
        dist_tags=tuple(sorted(tags.items())),
    )


def _py_catalog(*releases: Release, latest: str | None) -> Catalog:
    return Catalog(
        datasource="pypi", package_name="pkg", releases=releases, latest=latest, fetched_at=NOW
    )


NO_WAIT = ReleaseAgePolicy()
THREE_DAYS = ReleaseAgePolicy(major=3 * DAY, minor=3 * DAY, patch=3 * DAY)


def test_locked_version_is_current_and_newest_is_outdated() -> None:
    """A lockfile's version is current; a newer stable release makes the dependency outdated."""
    cat = _npm_catalog(_rel("1.0.0", 400), _rel("1.1.0", 200), _rel("2.0.0", 30), latest="2.0.0")
    f = evaluate(_npm_dep("^1.0.0"), cat, npm, NO_WAIT, NOW, locked="1.0.0")
    assert (f.status, f.current, f.current_source) == ("outdated", "1.0.0", "lockfile")
    assert (f.latest, f.eligible, f.update_type, f.versions_behind) == (
        "2.0.0",
        "2.0.0",
        "major",
        2,
    )
    assert f.libyears == round(370 / 365.25, 4)
    assert f.held_back == ()


def test_range_resolves_to_newest_admitted_release() -> None:
    """Without a lock or pin, current is what a fresh install of the range resolves to."""
    cat = _py_catalog(_rel("1.0", 400), _rel("1.4", 200), _rel("2.0", 30), latest="2.0")
    f = evaluate(_py_dep(">=1.0,<2"), cat, pep440, NO_WAIT, NOW)
    assert (f.current, f.current_source, f.eligible, f.update_type) == (
        "1.4",
        "range",
        "2.0",
        "major",
    )


def test_exact_pin_is_current() -> None:
    """An exact pin (==) is current even when the range logic would pick something else."""
    cat = _py_catalog(_rel("1.0", 400), _rel("1.4", 200), latest="1.4")
    f = evaluate(_py_dep("==1.0"), cat, pep440, NO_WAIT, NOW)
    assert (f.current, f.current_source, f.status, f.update_type) == (
        "1.0",
        "pin",
        "outdated",
        "minor",
    )


@pytest.mark.parametrize(
    ("releases", "constraint", "current", "reason"),
    [
        # Spelled so on the index (case aside): that release is current.
        (("2013b0", "2013.7"), "===2013b0", "2013b0", None),
        (("2013B0", "2013.7"), "===2013b0", "2013B0", None),
        (("foobar", "2013.7"), "===foobar", "foobar", None),
        # The same version normalised is not that string: the row cannot tell.
        (
            ("2013b", "2013.7"),
            "===2013b0",
            None,
            (
                "cannot tell the installed version: ===2013b0 is arbitrary equality, a string"
                " comparison without normalisation (PEP 440), and no release is spelled '2013b0'"
                " ('2013b' is the same version normalised)"
            ),
        ),
        (
            ("1.0.0", "2.0"),
            "===1.0",
            None,
            (
                "cannot tell the installed version: ===1.0 is arbitrary equality, a string"
                " comparison without normalisation (PEP 440), and no release is spelled '1.0'"
                " ('1.0.0' is the same version normalised)"
            ),
        ),
        (
            ("1.0", "2.0"),
            "===nope",
            None,
            (
                "cannot tell the installed version: ===nope is arbitrary equality, a string"
                " comparison without normalisation (PEP 440), and no release is spelled 'nope'"
            ),
        ),
    ],
)
def test_arbitrary_equality_is_the_release_spelled_so(
    releases: tuple[str, ...], constraint: str, current: str | None, reason: str | None
) -> None:
    """``===V`` is a string match (PEP 440): never a pin on the normalised version."""
    cat = _py_catalog(
        *(_rel(v, 400 - 100 * i) for i, v in enumerate(releases)), latest=releases[-1]
    )
    f = evaluate(_py_dep(constraint), cat, pep440, NO_WAIT, NOW)
    assert (f.current, f.reason if current is None else None) == (current, reason)
    if current is None:
        assert f.status == "unknown"
    elif pep440.is_valid(current):  # ``foobar`` is current, but no version to compare
        assert (f.current_source, f.current_released_at) == ("pin", NOW - timedelta(days=400))
        assert (f.status, f.latest) == ("outdated", "2013.7")


def test_npm_range_prefers_latest_dist_tag() -> None:
    """Npm installs dist-tags.latest when the range admits it, even if a higher version exists."""
    cat = _npm_catalog(_rel("1.0.0", 100), _rel("1.2.0", 50), _rel("1.3.0", 10), latest="1.2.0")
    f = evaluate(_npm_dep("^1.0.0"), cat, npm, NO_WAIT, NOW)
    assert (f.current, f.status) == ("1.2.0", "up-to-date")


def test_versions_above_latest_are_not_offered() -> None:
    """A version above dist-tags.latest (a --tag publish) is never proposed below latest."""
    cat = _npm_catalog(
        _rel("1.0.0", 100),
        _rel("1.2.0", 50),
        _rel("3.0.0", 10),
        latest="1.2.0",
        tags={"next": "3.0.0"},
    )
    f = evaluate(_npm_dep("1.0.0"), cat, npm, NO_WAIT, NOW)
    assert (f.eligible, f.versions_behind, f.latest) == ("1.2.0", 1, "1.2.0")


def test_dist_tag_value_resolves_through_the_tag() -> None:
    """A dist-tag as the declared value (``next``) resolves to that tag's version."""
    cat = _npm_catalog(
        _rel("1.0.0", 100), _rel("2.0.0-rc.1", 10), latest="1.0.0", tags={"next": "2.0.0-rc.1"}
    )
    f = evaluate(_npm_dep("next"), cat, npm, NO_WAIT, NOW)
    assert (f.current, f.current_source, f.status) == ("2.0.0-rc.1", "dist-tag", "up-to-date")


def test_unknown_dist_tag_is_unknown_with_reason() -> None:
    """A value that is neither a range nor a dist-tag gives status unknown and says why."""
    cat = _npm_catalog(_rel("1.0.0", 100), latest="1.0.0")
    f = evaluate(_npm_dep("canary"), cat, npm, NO_WAIT, NOW)
    assert f.status == "unknown"
    assert f.reason is not None
    assert "neither a valid range nor a dist-tag" in f.reason


def test_range_matching_nothing_is_unknown() -> None:
    """A range no release satisfies cannot give a current version."""
    cat = _py_catalog(_rel("1.0", 100), latest="1.0")
    f = evaluate(_py_dep(">=5"), cat, pep440, NO_WAIT, NOW)
    assert f.status == "unknown"
    assert f.reason == "no published release satisfies the range '>=5'"


def test_release_age_picks_newest_eligible_not_newest() -> None:
    """With a 3-day wait the newest old-enough release is eligible; younger ones are held."""
    cat = _npm_catalog(_rel("1.0.0", 100), _rel("1.1.0", 10), _rel("1.2.0", 1), latest="1.2.0")
    f = evaluate(_npm_dep("1.0.0"), cat, npm, THREE_DAYS, NOW)
    assert (f.status, f.eligible, f.update_type) == ("outdated", "1.1.0", "minor")
    assert [h.version for h in f.held_back] == ["1.2.0"]
    held = f.held_back[0]
    assert held.released_at == NOW - DAY
    assert held.eligible_at == NOW + 2 * DAY
    assert held.reason == "released 24h ago; minor updates wait 72h"


def test_a_hold_names_what_its_date_is() -> None:
    """``judge(dated=…)``: a last push is said to be one; the verdict and times are the same."""
    from patchula.datasource.docker import HUB_AGE  # noqa: PLC0415 - the docker wording
    from patchula.policy.release_age import judge  # noqa: PLC0415

    pushed = judge(NOW - 30 * timedelta(hours=1), "major", THREE_DAYS, NOW, dated=HUB_AGE)
    released = judge(NOW - 30 * timedelta(hours=1), "major", THREE_DAYS, NOW)
    assert (pushed.admitted, pushed.eligible_at) == (False, NOW + 42 * timedelta(hours=1))
    assert (released.admitted, released.eligible_at) == (pushed.admitted, pushed.eligible_at)
    assert released.reason == "released 30h ago; major updates wait 72h"
    assert pushed.reason == (
        "last pushed 30h ago (Docker Hub's tag_last_pushed: a re-push restarts the wait);"
        " major updates wait 72h"
    )
    assert judge(NOW - 4 * DAY, "major", THREE_DAYS, NOW, dated=HUB_AGE).reason is None


def test_all_newer_releases_young_is_held_back() -> None:
    """When no newer release is old enough, the status is held-back and eligible is empty."""
    cat = _npm_catalog(_rel("1.0.0", 100), _rel("1.0.1", 1), latest="1.0.1")
    f = evaluate(_npm_dep("1.0.0"), cat, npm, THREE_DAYS, NOW)
    assert (f.status, f.eligible, f.update_type) == ("held-back", None, "patch")
    assert f.held_back[0].eligible_at == NOW + 2 * DAY


def test_per_update_type_waits() -> None:
    """Each candidate waits for its own update type: a patch may pass while a major waits."""
    policy = ReleaseAgePolicy(major=30 * DAY, minor=7 * DAY, patch=timedelta(0))
    cat = _npm_catalog(_rel("1.0.0", 100), _rel("1.0.1", 0.1), _rel("2.0.0", 10), latest="2.0.0")
    f = evaluate(_npm_dep("1.0.0"), cat, npm, policy, NOW)
    assert (f.eligible, f.update_type) == ("1.0.1", "patch")
    assert [(h.version, h.update_type) for h in f.held_back] == [("2.0.0", "major")]


def test_unknown_publish_time_is_held_back_not_invented() -> None:
    """A release without a publish time is held back with unknown dates under a positive wait."""
    cat = _npm_catalog(_rel("1.0.0", 100), _rel("1.1.0", None), latest="1.1.0")
    f = evaluate(_npm_dep("1.0.0"), cat, npm, THREE_DAYS, NOW)
    assert f.status == "held-back"
    assert (f.held_back[0].released_at, f.held_back[0].eligible_at) == (None, None)
    assert f.held_back[0].reason.startswith("age unknown")
    assert f.libyears is None


def test_unknown_publish_time_admitted_when_policy_says_so() -> None:
    """``unknown_age = admit`` lets an undated release through, still without inventing a date."""
    policy = ReleaseAgePolicy(minor=3 * DAY, unknown_age="admit")
    cat = _npm_catalog(_rel("1.0.0", 100), _rel("1.1.0", None), latest="1.1.0")
    f = evaluate(_npm_dep("1.0.0"), cat, npm, policy, NOW)
    assert (f.status, f.eligible, f.eligible_released_at) == ("outdated", "1.1.0", None)
    assert f.reason == "1.1.0: age unknown, admitted by policy"


def test_deprecated_and_yanked_are_never_offered() -> None:
    """Deprecated npm versions and yanked PyPI releases are skipped as candidates."""
    cat = _npm_catalog(
        _rel("1.0.0", 100),
        _rel("1.1.0", 50, deprecated="broken"),
        _rel("1.2.0", 40),
        latest="1.2.0",
    )
    f = evaluate(_npm_dep("1.0.0"), cat, npm, NO_WAIT, NOW)
    assert (f.eligible, f.versions_behind) == ("1.2.0", 1)
    pcat = _py_catalog(_rel("1.0", 100), _rel("1.1", 50, yanked=True), latest="1.0")
    pf = evaluate(_py_dep("==1.0"), pcat, pep440, NO_WAIT, NOW)
    assert (pf.status, pf.versions_behind) == ("up-to-date", 0)


def test_yanked_release_skipped_when_resolving_range() -> None:
    """A fresh install never resolves to a yanked release (PEP 592)."""
    cat = _py_catalog(_rel("1.0", 100), _rel("1.1", 50, yanked=True), latest="1.0")
    f = evaluate(_py_dep(">=1.0"), cat, pep440, NO_WAIT, NOW)
    assert f.current == "1.0"


def test_prereleases_only_when_current_is_one() -> None:
    """A stable current is never offered prereleases; a prerelease current is."""
    cat = _py_catalog(_rel("1.0", 100), _rel("2.0b1", 10), _rel("2.0b2", 5), latest="1.0")
    stable = evaluate(_py_dep("==1.0"), cat, pep440, NO_WAIT, NOW)
    assert (stable.status, stable.versions_behind) == ("up-to-date", 0)
    pre = evaluate(_py_dep("==2.0b1"), cat, pep440, NO_WAIT, NOW)
    assert (pre.status, pre.eligible) == ("outdated", "2.0b2")


def test_yanked_current_is_flagged() -> None:
    """A pin to a yanked release is reported with that fact in the reason."""
    cat = _py_catalog(_rel("1.0", 100, yanked=True), _rel("1.1", 50), latest="1.1")
    f = evaluate(_py_dep("==1.0"), cat, pep440, NO_WAIT, NOW)
    assert f.reason == "current 1.0 is yanked"
    assert f.eligible == "1.1"


@pytest.mark.parametrize(
    ("current", "new", "expected"),
    [("1.0.0", "2.0.0", "major"), ("1.0.0", "1.1.0", "minor"), ("1.0.0", "1.0.1", "patch")],
)
def test_update_type_of_eligible(current: str, new: str, expected: str) -> None:
    """The update type is computed from current to eligible."""
    cat = _npm_catalog(_rel(current, 100), _rel(new, 10), latest=new)
    assert evaluate(_npm_dep(current), cat, npm, NO_WAIT, NOW).update_type == expected


def test_pep440_equal_versions_match_catalog_dates() -> None:
    """A locked ``1.0`` finds the catalog's ``1.0.0`` release date (PEP 440 equality)."""
    cat = _py_catalog(_rel("1.0.0", 365.25), _rel("2.0.0", 0), latest="2.0.0")
    f = evaluate(_py_dep(None), cat, pep440, NO_WAIT, NOW, locked="1.0")
    assert f.current_released_at == NOW - timedelta(days=365.25)
    assert f.libyears == 1.0


def test_pin_not_published_is_unknown() -> None:
    """A pin the registry never published is unknown, not up to date."""
    cat = _npm_catalog(_rel("1.0.0", 100), _rel("1.2.0", 50), latest="1.2.0")
    f = evaluate(_npm_dep("99.0.0"), cat, npm, NO_WAIT, NOW)
    assert (f.status, f.current, f.latest) == ("unknown", "99.0.0", "1.2.0")
    assert f.reason == "pinned version 99.0.0 is not in the npm release list"


def test_held_back_lists_only_releases_above_eligible() -> None:
    """A young release below the proposed one is not listed as held back."""
    policy = ReleaseAgePolicy(major=7 * DAY, minor=7 * DAY, patch=7 * DAY)
    cat = _npm_catalog(
        _rel("1.0.0", 400), _rel("1.5.0", 2), _rel("2.0.0", 100), _rel("2.1.0", 1), latest="2.1.0"
    )
    f = evaluate(_npm_dep("1.0.0"), cat, npm, policy, NOW)
    assert f.eligible == "2.0.0"
    assert [h.version for h in f.held_back] == ["2.1.0"]


def test_deprecated_latest_is_explained() -> None:
    """When latest is deprecated and therefore not proposed, the reason says so."""
    cat = _npm_catalog(
        _rel("2.0.3", 100),
        _rel("2.0.4", 50),
        _rel("3.0.0", 10, deprecated="stub types"),
        latest="3.0.0",
    )
    f = evaluate(_npm_dep("2.0.3"), cat, npm, NO_WAIT, NOW)
    assert (f.eligible, f.latest) == ("2.0.4", "3.0.0")
    assert f.reason == "latest 3.0.0 is deprecated (stub types); not proposed"


def test_unlisted_current_is_fine_when_the_list_omits_versions() -> None:
    """A Go pseudo-version is not in @v/list by protocol: it is compared, not called unknown."""
    from patchula.versioning import go  # noqa: PLC0415 - only this test needs Go versions

    cat = Catalog(
        datasource="goproxy",
        package_name="example.com/m",
        releases=(_rel("v1.2.0", 100), _rel("v1.3.0", 10)),
        latest="v1.3.0",
        fetched_at=NOW,
        lists_every_version=False,
    )
    dep = Dependency(
        manager="go_mod",
        file="go.mod",
        line=5,
        name="example.com/m",
        package_name="example.com/m",
        datasource="goproxy",
        versioning="go",
        dep_type="require",
        declared="v1.2.1-0.20250101000000-abcdefabcdef",
        constraint="v1.2.1-0.20250101000000-abcdefabcdef",
    )
    f = evaluate(dep, cat, go, NO_WAIT, NOW)
    assert (f.status, f.current, f.eligible) == (
        "outdated",
        "v1.2.1-0.20250101000000-abcdefabcdef",
        "v1.3.0",
    )


def test_unpublished_go_tag_is_unknown_but_pseudo_versions_are_dated() -> None:
    """A Go tag missing from @v/list is unknown; a pseudo-version is dated by its own timestamp."""
    from patchula.versioning import go  # noqa: PLC0415 - only this test needs Go versions

    cat = Catalog(
        datasource="goproxy",
        package_name="example.com/m",
        releases=(_rel("v0.70.1", 400), _rel("v0.70.2", 35.25)),
        latest="v0.70.2",
        fetched_at=NOW,
        lists_every_version=False,
    )

    def dep(version: str) -> Dependency:
        return Dependency(
            manager="go_mod",
            file="go.mod",
            line=3,
            name="example.com/m",
            package_name="example.com/m",
            datasource="goproxy",
            versioning="go",
            dep_type="require",
            declared=version,
            constraint=version,
        )

    tag = evaluate(dep("v0.60.0"), cat, go, NO_WAIT, NOW)
    assert (tag.status, tag.reason) == (
        "unknown",
        "pinned version v0.60.0 is not in the goproxy release list",
    )
    newer = evaluate(dep("v0.70.3-0.20261130120000-abcdefabcdef"), cat, go, NO_WAIT, NOW)
    assert (newer.status, newer.current_released_at) == (
        "up-to-date",
        datetime(2026, 11, 30, 12, 0, tzinfo=UTC),
    )
    older = evaluate(dep("v0.70.2-0.20241030120000-abcdefabcdef"), cat, go, NO_WAIT, NOW)
    assert (older.status, older.eligible) == ("outdated", "v0.70.2")
    commit = datetime(2024, 10, 30, 12, 0, tzinfo=UTC)
    seconds = ((NOW - timedelta(days=35.25)) - commit).total_seconds()
    assert older.libyears == round(seconds / 86400 / 365.25, 4)


def test_catalog_caveat_is_reported_on_the_row() -> None:
    """A catalog's caveat (e.g. a failed new-major check) is part of the row's reason."""
    cat = Catalog(
        datasource="pypi",
        package_name="pkg",
        releases=(_rel("1.0", 100), _rel("1.1", 50)),
        latest="1.1",
        fetched_at=NOW,
        caveat="could not check for a newer major (pkg/v2): timed out",
    )
    f = evaluate(_py_dep("==1.0"), cat, pep440, NO_WAIT, NOW)
    assert (f.status, f.eligible) == ("outdated", "1.1")
    assert f.reason == "could not check for a newer major (pkg/v2): timed out"


def test_prerelease_dist_tag_latest_gives_way_to_the_newest_stable() -> None:
    """``dist-tags.latest`` on a prerelease: a stable current's latest is the newest stable.

    Shaped like the real case: ``latest`` tags ``1.0.0-pre1`` while ``0.0.10`` is the newest
    stable; the row is up to date against 0.0.10, with 0 libyears, and names the dist-tag.
    """
    cat = _npm_catalog(
        _rel("0.0.9", 400), _rel("0.0.10", 300), _rel("1.0.0-pre1", 10), latest="1.0.0-pre1"
    )
    f = evaluate(_npm_dep("0.0.10"), cat, npm, NO_WAIT, NOW)
    assert (f.status, f.current, f.latest, f.libyears) == ("up-to-date", "0.0.10", "0.0.10", 0.0)
    assert f.latest_released_at == NOW - timedelta(days=300)
    assert f.reason == (
        "dist-tags.latest is 1.0.0-pre1, a prerelease; latest shown is the newest stable release"
    )
    behind = evaluate(_npm_dep("0.0.9"), cat, npm, NO_WAIT, NOW)
    assert (behind.status, behind.latest, behind.eligible) == ("outdated", "0.0.10", "0.0.10")
    assert behind.libyears == round(100 / 365.25, 4)


def test_prerelease_dist_tag_latest_stands_for_a_prerelease_current() -> None:
    """A prerelease current keeps the registry's prerelease latest (design §1)."""
    cat = _npm_catalog(
        _rel("0.0.10", 300), _rel("1.0.0-pre0", 50), _rel("1.0.0-pre1", 10), latest="1.0.0-pre1"
    )
    f = evaluate(_npm_dep("1.0.0-pre0"), cat, npm, NO_WAIT, NOW)
    assert (f.status, f.latest, f.eligible) == ("outdated", "1.0.0-pre1", "1.0.0-pre1")
    assert f.reason is None


def test_prerelease_dist_tag_latest_without_any_stable_is_labelled() -> None:
    """With no stable release at all, the prerelease latest stands and the row says so."""
    cat = _npm_catalog(_rel("1.0.0-pre0", 50), _rel("1.0.0-pre1", 10), latest="1.0.0-pre1")
    f = evaluate(_npm_dep("1.0.0-pre1"), cat, npm, NO_WAIT, NOW)
    assert (f.status, f.latest) == ("up-to-date", "1.0.0-pre1")
    assert f.reason == "latest 1.0.0-pre1 is a prerelease: npm has no stable release"


def test_prerelease_dist_tag_latest_on_an_unknown_row() -> None:
    """A row whose current cannot be found still shows the newest stable as latest."""
    cat = _npm_catalog(_rel("0.0.10", 300), _rel("1.0.0-pre1", 10), latest="1.0.0-pre1")
    f = evaluate(_npm_dep("^5.0.0"), cat, npm, NO_WAIT, NOW)
    assert (f.status, f.latest, f.latest_released_at) == (
        "unknown",
        "0.0.10",
        NOW - timedelta(days=300),
    )


def test_range_admitting_only_deprecated_versions_resolves_and_flags_current() -> None:
    """``left-pad ~1.2.0`` where every 1.2.x is deprecated installs 1.2.0, and the row says so.

    npm-pick-manifest avoids deprecated versions only while the range admits another one; it
    falls back to a deprecated version rather than failing the install.
    """
    cat = _npm_catalog(
        _rel("1.1.3", 900),
        _rel("1.2.0", 800, deprecated="use String.prototype.padStart()"),
        _rel("1.3.0", 700),
        latest="1.3.0",
    )
    f = evaluate(_npm_dep("~1.2.0", name="left-pad"), cat, npm, NO_WAIT, NOW)
    assert (f.status, f.current, f.current_source, f.eligible) == (
        "outdated",
        "1.2.0",
        "range",
        "1.3.0",
    )
    assert f.reason == "current version is deprecated: use String.prototype.padStart()"


def test_range_prefers_a_non_deprecated_version_it_admits() -> None:
    """A range admitting a deprecated and a non-deprecated version resolves to the latter."""
    cat = _npm_catalog(
        _rel("1.2.0", 800),
        _rel("1.2.1", 700, deprecated="broken"),
        _rel("1.3.0", 600),
        latest="1.3.0",
    )
    f = evaluate(_npm_dep("~1.2.0"), cat, npm, NO_WAIT, NOW)
    assert (f.current, f.reason) == ("1.2.0", None)


@pytest.mark.parametrize(
    ("constraint", "locked", "current"),
    [
        (None, None, "0.1b1"),
        ("<1", None, "0.1b1"),
        ("==0.1a1", None, "0.1a1"),
        (None, "0.1a1", "0.1a1"),
    ],
)
def test_pypi_project_with_only_prereleases(
    constraint: str | None, locked: str | None, current: str
) -> None:
    """Only prereleases: latest is the newest one, labelled, and libyears are computed.

    pip installs a prerelease when no final release satisfies (PEP 440, "Handling of
    pre-releases"), so an unconstrained requirement resolves to the newest prerelease too.
    """
    cat = _py_catalog(
        _rel("0.1.dev3", 730.5), _rel("0.1a1", 365.25), _rel("0.1b1", 0), latest="0.1b1"
    )
    f = evaluate(_py_dep(constraint), cat, pep440, NO_WAIT, NOW, locked=locked)
    assert (f.current, f.latest) == (current, "0.1b1")
    assert f.reason == "latest 0.1b1 is a prerelease: pypi has no stable release"
    if current == "0.1b1":
        assert (f.status, f.libyears) == ("up-to-date", 0.0)
    else:
        assert (f.status, f.eligible, f.libyears) == ("outdated", "0.1b1", 1.0)


def test_go_incompatible_current_against_incompatible_latest() -> None:
    """A ``+incompatible`` current is judged against a ``+incompatible`` latest (docker)."""
    from patchula.versioning import go  # noqa: PLC0415 - only these tests need Go versions

    cat = Catalog(
        datasource="goproxy",
        package_name="github.com/docker/docker",
        releases=(
            _rel("v24.0.7+incompatible", 365.25 * 2),
            _rel("v28.5.2+incompatible", 0),
        ),
        latest="v28.5.2+incompatible",
        fetched_at=NOW,
        lists_every_version=False,
    )
    dep = Dependency(
        manager="go_mod",
        file="go.mod",
        line=5,
        name="github.com/docker/docker",
        package_name="github.com/docker/docker",
        datasource="goproxy",
        versioning="go",
        dep_type="require",
        declared="v24.0.7+incompatible",
        constraint="v24.0.7+incompatible",
    )
    f = evaluate(dep, cat, go, NO_WAIT, NOW)
    assert (f.status, f.latest, f.eligible, f.update_type, f.libyears) == (
        "outdated",
        "v28.5.2+incompatible",
        "v28.5.2+incompatible",
        "major",
        2.0,
    )


@pytest.mark.parametrize(
    "policy",
    [
        ReleaseAgePolicy(),
        ReleaseAgePolicy(unknown_age="admit"),
        ReleaseAgePolicy(minor=timedelta(days=3)),
        ReleaseAgePolicy(major=timedelta(days=30), patch=timedelta(hours=1), unknown_age="admit"),
    ],
)
def test_admission_equals_judging_each_candidate(policy: ReleaseAgePolicy) -> None:
    """``_admit`` (no judging under a policy without waits) splits as judging each one does.

    Generated candidates: publish times in the past, unknown, just now, and after ``now``.
    """
    from patchula.policy.evaluate import _admit, _admit_each  # noqa: PLC0415 - the paths

    rng = random.Random(9)  # noqa: S311 - reproducible test input, not a secret
    ages = [None, 0.0, 0.5, 2.0, 40.0, -0.25, -3.0]  # days ago; negative: after now
    for versioning, versions in (
        (npm, ["1.0.1", "1.1.0", "2.0.0", "2.0.1-rc.1", "3.0.0"]),
        (pep440, ["1.0.1", "1.1", "2.0", "2.0.1rc1", "3.0"]),
    ):
        for _ in range(300):
            candidates = [_rel(v, rng.choice(ages)) for v in versions if rng.random() < 0.8]
            assert _admit(candidates, "1.0.0", versioning, policy, NOW) == _admit_each(
                candidates, "1.0.0", versioning, policy, NOW
            )


HTTPX = _py_catalog(
    _rel("0.27.0", 700),
    _rel("0.28.1", 500),
    _rel("1.0.dev3", 200),
    _rel("1.0.dev6", 90),
    _rel("1.0.dev7", 10, yanked=True),
    latest="0.28.1",
)


@pytest.mark.parametrize(
    ("constraint", "opted", "expected"),
    [
        (None, False, "0.28.1"),
        (None, True, "1.0.dev6"),
        (">=0.27", False, "0.28.1"),
        (">=0.27", True, "1.0.dev6"),
        ("<1", True, "0.28.1"),
        ("<1 || >=2", True, "0.28.1"),
        ("==0.27.0", True, "0.27.0"),
    ],
)
def test_prerelease_opt_in_lets_an_unlocked_range_resolve_to_a_prerelease(
    constraint: str | None, *, opted: bool, expected: str
) -> None:
    """With pip's ``--pre`` (or Poetry/pipenv/uv opt-ins): the newest admitted, not yanked."""
    dep = replace(_py_dep(constraint), prereleases=opted)
    f = evaluate(dep, HTTPX, pep440, NO_WAIT, NOW)
    assert f.current == expected
    assert f.current_source == ("pin" if constraint == "==0.27.0" else "range")


def test_prerelease_opt_in_does_not_change_a_locked_current_and_is_memoised_apart() -> None:
    """A lock wins over the opt-in; opted and plain rows of one range get their own verdicts."""
    opted = replace(_py_dep(">=0.27"), prereleases=True)
    assert evaluate(opted, HTTPX, pep440, NO_WAIT, NOW, locked="0.27.0").current == "0.27.0"
    assert evaluate(_py_dep(">=0.27"), HTTPX, pep440, NO_WAIT, NOW).current == "0.28.1"
    assert evaluate(opted, HTTPX, pep440, NO_WAIT, NOW).current == "1.0.dev6"
    assert evaluate(_py_dep(">=0.27"), HTTPX, pep440, NO_WAIT, NOW).current == "0.28.1"


@pytest.mark.parametrize("constraint", ["*", None])
def test_star_range_installs_a_prerelease_latest_dist_tag(constraint: str | None) -> None:
    """``*`` (and ``""``, which npm reads as ``*``) installs ``dist-tags.latest`` when a prerelease.

    npm-pick-manifest takes the default tag when ``range === '*'`` before it looks for the
    newest satisfying version, so a prerelease ``latest`` wins over the newest stable one.
    """
    cat = _npm_catalog(_rel("1.5.0", 100), _rel("2.0.0-beta.1", 10), latest="2.0.0-beta.1")
    f = evaluate(_npm_dep(constraint), cat, npm, NO_WAIT, NOW)
    assert (f.status, f.current, f.current_source, f.latest) == (
        "up-to-date",
        "2.0.0-beta.1",
        "range",
        "2.0.0-beta.1",
    )
    only = _npm_catalog(_rel("0.18.0-a", 50), _rel("0.18.0-ffcb67b", 10), latest="0.18.0-ffcb67b")
    assert evaluate(_npm_dep(constraint), only, npm, NO_WAIT, NOW).current == "0.18.0-ffcb67b"


def test_x_range_and_deprecated_or_missing_latest_do_not_take_the_tag() -> None:
    """``x`` is a range that admits no prerelease; a deprecated or unlisted latest is skipped.

    npm-pick-manifest compares the range to ``'*'`` as a string (``x`` is satisfied by no
    prerelease), and takes the default tag only when ``versions[defaultVer]`` exists and is not
    deprecated; otherwise the newest satisfying version wins.
    """
    cat = _npm_catalog(_rel("1.5.0", 100), _rel("2.0.0-beta.1", 10), latest="2.0.0-beta.1")
    assert evaluate(_npm_dep("x"), cat, npm, NO_WAIT, NOW).current == "1.5.0"
    deprecated = _npm_catalog(
        _rel("1.5.0", 100), _rel("2.0.0-beta.1", 10, deprecated="oops"), latest="2.0.0-beta.1"
    )
    assert evaluate(_npm_dep("*"), deprecated, npm, NO_WAIT, NOW).current == "1.5.0"
    missing = _npm_catalog(_rel("1.5.0", 100), latest="2.0.0-beta.1")
    assert evaluate(_npm_dep("*"), missing, npm, NO_WAIT, NOW).current == "1.5.0"


def test_latest_dist_tag_naming_an_unlisted_version_is_ignored() -> None:
    """A ``dist-tags.latest`` of a version the packument lacks is no latest, as npm ignores it.

    npm-pick-manifest finds no ``versions[defaultVer]`` and installs the newest satisfying
    version; latest is then the newest stable release and the row says why.
    """
    cat = _npm_catalog(_rel("1.0.0", 300), _rel("1.2.0", 100), latest="9.9.9")
    f = evaluate(_npm_dep("^1.0.0"), cat, npm, NO_WAIT, NOW, locked="1.0.0")
    assert (f.status, f.latest, f.eligible, f.versions_behind) == ("outdated", "1.2.0", "1.2.0", 1)
    assert f.latest_released_at == NOW - timedelta(days=100)
    assert f.libyears == round(200 / 365.25, 4)
    assert f.reason == (
        "dist-tags.latest names 9.9.9, which is not in the npm release list: ignored, as npm"
        " does; latest shown is the newest stable release"
    )
    star = evaluate(_npm_dep("*"), cat, npm, NO_WAIT, NOW)
    assert (star.status, star.current, star.latest) == ("up-to-date", "1.2.0", "1.2.0")
    tag = evaluate(_npm_dep("latest"), cat, npm, NO_WAIT, NOW)
    assert (tag.status, tag.current, tag.latest) == ("unknown", "9.9.9", "1.2.0")
    assert tag.reason == "dist-tag 'latest' names 9.9.9, which is not in the npm release list"


def test_prerelease_current_above_the_stable_latest_counts_libyears_to_its_upgrade() -> None:
    """``httpx==1.0.dev3`` with 0.28.1 the newest final: latest stays, libyears follow eligible.

    Latest is the registry's newest stable (design §1) even when older than current; the row is
    outdated against 1.0.dev6, so its libyears are measured to it (Renovate compares an
    unstable current with the newer unstable releases), never 0.00 on an outdated row.
    """
    cat = _py_catalog(
        _rel("0.28.1", 700), _rel("1.0.dev3", 400), _rel("1.0.dev6", 35), latest="0.28.1"
    )
    f = evaluate(_py_dep("==1.0.dev3"), cat, pep440, NO_WAIT, NOW)
    assert (f.status, f.latest, f.eligible, f.versions_behind) == (
        "outdated",
        "0.28.1",
        "1.0.dev6",
        1,
    )
    assert f.libyears == round(365 / 365.25, 4)
    top = evaluate(_py_dep(">=1.0.dev1"), cat, pep440, NO_WAIT, NOW)
    assert (top.status, top.current, top.libyears) == ("up-to-date", "1.0.dev6", 0.0)


def test_npm_release_candidate_current_counts_libyears_to_the_newest_candidate() -> None:
    """``vue 3.6.0-rc.3`` with ``latest`` on 3.5.45: libyears to rc.9, or to the held rc.9."""
    cat = _npm_catalog(
        _rel("3.5.45", 20),
        _rel("3.6.0-rc.3", 200),
        _rel("3.6.0-rc.9", 2),
        latest="3.5.45",
    )
    f = evaluate(_npm_dep("3.6.0-rc.3"), cat, npm, NO_WAIT, NOW)
    assert (f.status, f.latest, f.eligible) == ("outdated", "3.5.45", "3.6.0-rc.9")
    assert f.libyears == round(198 / 365.25, 4)
    held = evaluate(_npm_dep("3.6.0-rc.3"), cat, npm, THREE_DAYS, NOW)
    assert (held.status, held.eligible, held.libyears) == (
        "held-back",
        None,
        round(198 / 365.25, 4),
    )


def test_libyears_never_count_a_deprecated_latest_that_is_not_proposed() -> None:
    """``@types/pako "^2 || ^3"`` on 2.0.4 with 3.0.0 deprecated: up to date, 0 libyears.

    Behind an older release, the libyears go to the newest release proposed, not to 3.0.0.
    """
    cat = _npm_catalog(
        _rel("2.0.3", 400),
        _rel("2.0.4", 360),
        _rel("3.0.0", 10, deprecated="stub types"),
        latest="3.0.0",
    )
    f = evaluate(_npm_dep("^2 || ^3", name="@types/pako"), cat, npm, NO_WAIT, NOW)
    assert (f.status, f.current, f.latest, f.versions_behind, f.libyears) == (
        "up-to-date",
        "2.0.4",
        "3.0.0",
        0,
        0.0,
    )
    behind = evaluate(_npm_dep("2.0.3"), cat, npm, NO_WAIT, NOW)
    assert (behind.status, behind.eligible, behind.libyears) == (
        "outdated",
        "2.0.4",
        round(40 / 365.25, 4),
    )


def test_a_yanked_current_with_nothing_newer_is_outdated_toward_the_newest_usable() -> None:
    """A yanked pin with no newer release is not up to date: latest is the newest usable one."""
    cat = _py_catalog(_rel("1.1", 100), _rel("1.2", 50, yanked=True), latest="1.1")
    f = evaluate(_py_dep("==1.2"), cat, pep440, NO_WAIT, NOW)
    assert (f.status, f.current, f.latest, f.eligible, f.versions_behind) == (
        "outdated",
        "1.2",
        "1.1",
        "1.1",
        0,
    )
    assert f.reason == "current 1.2 is yanked; latest usable is 1.1"


def test_a_retracted_go_current_is_named_retracted_with_its_rationale() -> None:
    """Go: "retracted" (not "yanked") and the retract comment; the newest usable is proposed."""
    from patchula.versioning import go  # noqa: PLC0415 - the one Go test here

    dep = Dependency(
        manager="go_mod",
        file="go.mod",
        line=3,
        name="example.com/m",
        package_name="example.com/m",
        datasource="goproxy",
        versioning="go",
        dep_type="require",
        declared="v1.2.0",
        constraint="v1.2.0",
    )
    cat = Catalog(
        datasource="goproxy",
        package_name="example.com/m",
        releases=(
            _rel("v1.1.0", 100),
            _rel("v1.2.0", 50, yanked=True, yanked_reason="published from the wrong branch"),
        ),
        latest="v1.1.0",
        fetched_at=NOW,
        lists_every_version=False,
    )
    f = evaluate(dep, cat, go, NO_WAIT, NOW)
    assert (f.status, f.latest, f.eligible) == ("outdated", "v1.1.0", "v1.1.0")
    assert f.reason == (
        "current v1.2.0 is retracted: published from the wrong branch; latest usable is v1.1.0"
    )


def test_a_withdrawn_current_with_no_usable_release_is_unknown_not_up_to_date() -> None:
    """Every release yanked: nothing to move to, and the row says so instead of up to date."""
    cat = _py_catalog(_rel("1.1", 100, yanked=True), _rel("1.2", 50, yanked=True), latest=None)
    f = evaluate(_py_dep("==1.2"), cat, pep440, NO_WAIT, NOW)
    assert f.status == "unknown"
    assert f.reason == "current 1.2 is yanked; pypi names no usable release to move to"


def _cargo_dep(constraint: str) -> Dependency:
    return Dependency(
        manager="cargo",
        file="Cargo.toml",
        line=5,
        name="wasi",
        package_name="wasi",
        datasource="crates",
        versioning="cargo",
        dep_type="dependencies",
        declared=constraint,
        constraint=constraint,
    )


def _cargo_catalog(*releases: Release) -> Catalog:
    return Catalog(
        datasource="crates", package_name="wasi", releases=releases, latest=None, fetched_at=NOW
    )


def test_a_cargo_pin_with_build_metadata_is_current_as_written() -> None:
    """``=0.11.0+wasi-snapshot-preview1`` is current as the manifest writes it, and dated."""
    meta = "0.11.0+wasi-snapshot-preview1"
    cat = _cargo_catalog(_rel("0.10.0+wasi-snapshot-preview1", 900), _rel(meta, 400))
    f = evaluate(_cargo_dep(f"={meta}"), cat, cargo, NO_WAIT, NOW)
    assert (f.status, f.current, f.current_source, f.latest) == ("up-to-date", meta, "pin", meta)
    assert (f.versions_behind, f.current_released_at, f.reason) == (0, NOW - 400 * DAY, None)
    newer = _cargo_catalog(*cat.releases, _rel("0.12.0+wasi-0.2.0", 30))
    f = evaluate(_cargo_dep(f"={meta}"), newer, cargo, NO_WAIT, NOW)
    assert (f.status, f.current, f.eligible, f.update_type, f.versions_behind) == (
        "outdated",
        meta,
        "0.12.0+wasi-0.2.0",
        "minor",
        1,
    )


@pytest.mark.parametrize(
    ("pin", "published"),
    [
        ("=0.11.0+meta", "0.11.0"),  # the registry's release has no metadata
        ("=0.11.0", "0.11.0+meta"),  # the manifest's pin has none
        ("=0.11.0+old", "0.11.0+new"),  # other metadata
    ],
)
def test_build_metadata_alone_never_makes_a_cargo_pin_outdated(pin: str, published: str) -> None:
    """Only build metadata differs: the same release (SemVer 2.0.0 §10), up to date, said so."""
    cat = _cargo_catalog(_rel("0.10.0", 900), _rel(published, 400))
    f = evaluate(_cargo_dep(pin), cat, cargo, THREE_DAYS, NOW)
    current = pin.removeprefix("=")
    assert (f.status, f.current, f.eligible, f.versions_behind, f.held_back) == (
        "up-to-date",
        current,
        None,
        0,
        (),
    )
    assert (f.latest, f.current_released_at, f.libyears) == (published, NOW - 400 * DAY, 0.0)
    assert f.reason == (
        f"{current} is published as {published}: build metadata does not count"
        " (SemVer 2.0.0 §10; Cargo ignores it in requirements)"
    )


def test_a_prerelease_current_is_behind_its_own_line_and_the_stable_releases() -> None:
    """A react 19.0.0-rc.1 → 19.1.0 pin is behind rc.2, 19.0.0 and 19.1.0, not the later canaries.

    A prerelease target (nothing stable newer) still counts every prerelease it passes.
    """
    cat = _npm_catalog(
        _rel("18.3.1", 300),
        _rel("19.0.0-rc.1", 200),
        _rel("19.0.0-rc.2", 190),
        _rel("19.0.0", 180),
        _rel("19.1.0-canary-aaa-20250101", 170),
        _rel("19.1.0-canary-bbb-20250102", 169),
        _rel("19.1.0", 160),
        _rel("19.2.0-canary-ccc-20250201", 150),
        latest="19.1.0",
    )
    f = evaluate(_npm_dep("19.0.0-rc.1"), cat, npm, NO_WAIT, NOW)
    assert (f.status, f.eligible, f.versions_behind) == ("outdated", "19.1.0", 3)
    stable = evaluate(_npm_dep("19.0.0"), cat, npm, NO_WAIT, NOW)
    assert (stable.eligible, stable.versions_behind) == ("19.1.0", 1)
    pre_only = _npm_catalog(
        _rel("2.0.0-beta.1", 30),
        _rel("2.0.0-beta.2", 20),
        _rel("2.0.0-beta.3", 10),
        latest="2.0.0-beta.3",
    )
    p = evaluate(_npm_dep("2.0.0-beta.1"), pre_only, npm, NO_WAIT, NOW)
    assert (p.eligible, p.versions_behind) == ("2.0.0-beta.3", 2)


def test_a_release_the_registry_flags_unstable_moves_along_every_release() -> None:
    """A pin on a Node Current release (26.1.0, flagged) follows 26.2.0, also flagged.

    It was "up to date" beside latest 26.2.0; an LTS pin still moves within LTS releases.
    """
    from patchula.versioning import mise  # noqa: PLC0415 - this test's scheme

    cat = Catalog(
        datasource="node",
        package_name="node",
        releases=(
            _rel("24.20.1", 30),
            _rel("25.0.0", 200, prerelease=True),
            _rel("26.1.0", 20, prerelease=True),
            _rel("26.2.0", 5, prerelease=True),
        ),
        latest="26.2.0",
        fetched_at=NOW,
    )

    def tool(pin: str) -> Dependency:
        return Dependency(
            manager="tool_versions",
            file=".tool-versions",
            line=1,
            name="nodejs",
            package_name="node",
            datasource="node",
            versioning="mise",
            dep_type="tool-versions",
            declared=pin,
            constraint=pin,
        )

    current = evaluate(tool("26.1.0"), cat, mise, NO_WAIT, NOW)
    assert (current.status, current.latest, current.eligible) == ("outdated", "26.2.0", "26.2.0")
    lts = evaluate(tool("24.20.1"), cat, mise, NO_WAIT, NOW)
    assert (lts.status, lts.latest, lts.eligible) == ("up-to-date", "24.20.1", None)


BACKPORT = (_rel("2.9.0", 300), _rel("3.0.0", 200), _rel("3.1.0", 100), _rel("2.9.5", 10))


def test_a_latest_dist_tag_below_current_is_named_and_no_downgrade_is_proposed() -> None:
    """A backport 2.9.5 took ``latest`` after 3.1.0: up to date on 3.1.0, the row says why."""
    cat = _npm_catalog(*BACKPORT, latest="2.9.5")
    f = evaluate(_npm_dep("^3.0.0"), cat, npm, NO_WAIT, NOW, locked="3.1.0")
    assert (f.status, f.current, f.latest, f.eligible, f.versions_behind, f.libyears) == (
        "up-to-date",
        "3.1.0",
        "2.9.5",
        None,
        0,
        0.0,
    )
    assert f.reason == (
        "the registry's latest dist-tag is 2.9.5, below the current 3.1.0 (no downgrade is"
        " proposed); newest stable is 3.1.0"
    )


def test_a_current_above_a_lower_latest_still_moves_to_newer_releases() -> None:
    """3.2.0 after 3.1.0 and a 2.9.5 latest: 3.1.0 moves on to 3.2.0, the note names both."""
    cat = _npm_catalog(*BACKPORT, _rel("3.2.0", 5), latest="2.9.5")
    f = evaluate(_npm_dep("^3.0.0"), cat, npm, NO_WAIT, NOW, locked="3.1.0")
    assert (f.status, f.latest, f.eligible, f.update_type) == (
        "outdated",
        "2.9.5",
        "3.2.0",
        "minor",
    )
    assert f.reason == (
        "the registry's latest dist-tag is 2.9.5, below the current 3.1.0 (no downgrade is"
        " proposed); newest stable is 3.2.0"
    )


@pytest.mark.parametrize(
    ("locked", "status", "eligible"),
    [("2.9.0", "outdated", "2.9.5"), ("2.9.5", "up-to-date", None)],
)
def test_a_stable_release_above_the_latest_dist_tag_is_named_not_proposed(
    locked: str, status: str, eligible: str | None
) -> None:
    """3.1.0 is out but ``latest`` stays on 2.9.5: the row stops there too, and names 3.1.0.

    ``npm outdated`` (Latest: the dist-tag), npm-check-updates' default target and Renovate
    (no proposal above latest) stop at 2.9.5; the row names 3.1.0 and the dist-tag naming it.
    """
    cat = _npm_catalog(*BACKPORT, latest="2.9.5", tags={"next": "3.1.0"})
    f = evaluate(_npm_dep("^2.9.0"), cat, npm, NO_WAIT, NOW, locked=locked)
    assert (f.status, f.latest, f.eligible) == (status, "2.9.5", eligible)
    assert f.reason == (
        "newest stable is 3.1.0 (dist-tag next), above the registry's latest dist-tag 2.9.5:"
        " not proposed (npm follows dist-tags.latest)"
    )


def test_a_latest_that_is_the_newest_stable_or_below_a_prerelease_current_says_nothing() -> None:
    """``latest`` on the newest stable: no note; a prerelease current above it: no note either."""
    newest = _npm_catalog(*BACKPORT[:3], latest="3.1.0")
    assert evaluate(_npm_dep("^3.0.0"), newest, npm, NO_WAIT, NOW, locked="3.0.0").reason is None
    rc = _npm_catalog(*BACKPORT, _rel("4.0.0-rc.1", 3), latest="3.1.0")
    f = evaluate(_npm_dep("^4.0.0-rc.1"), rc, npm, NO_WAIT, NOW, locked="4.0.0-rc.1")
    assert (f.status, f.reason) == ("up-to-date", None)


def test_a_registry_latest_below_current_is_no_dist_tag_note_outside_npm() -> None:
    """Only npm's ``latest`` dist-tag gets the note; a Go proxy latest below current does not.

    (A Go proxy's ``@latest`` skips a newer ``+incompatible`` major; its own rows say so.)
    """
    cat = replace(_npm_catalog(*BACKPORT, latest="2.9.5"), datasource="goproxy", dist_tags=())
    f = evaluate(_npm_dep("^3.0.0"), cat, npm, NO_WAIT, NOW, locked="3.1.0")
    assert (f.status, f.latest, f.reason) == ("up-to-date", "2.9.5", None)
