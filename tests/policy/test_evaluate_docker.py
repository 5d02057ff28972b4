"""Lookup decisions for image tags: compatible candidates, derived latest, unknown ages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from patchula.models import Catalog, Dependency, Release
from patchula.policy import ReleaseAgePolicy, evaluate
from patchula.policy.memo import EvaluationMemo
from patchula.versioning import docker

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
NO_WAIT = ReleaseAgePolicy()
THREE_DAYS = ReleaseAgePolicy(major=3 * DAY, minor=3 * DAY, patch=3 * DAY)
SHA = "0a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d"


def _image(tag: str | None, digest: str | None = None) -> Dependency:
    return Dependency(
        manager="dockerfile",
        file="Dockerfile",
        line=1,
        name="python",
        package_name="docker.io/library/python",
        datasource="docker",
        versioning="docker",
        dep_type="final",
        declared=f"python:{tag}" if tag else f"python@{digest}",
        constraint=tag,
        digest=digest,
    )


def _tags(*tags: str, latest: str | None = None) -> Catalog:
    """A tag list as the OCI datasource gives it: lexical order, no dates, no latest."""
    return Catalog(
        datasource="docker",
        package_name="docker.io/library/python",
        releases=tuple(Release(tag, None) for tag in sorted(tags)),
        latest=latest,
        fetched_at=NOW,
    )


PYTHON = _tags(
    "3.11-slim",
    "3.12-slim",
    "3.12.7-slim",
    "3.13-slim",
    "3.13.1-slim",
    "3.13",
    "3.13-slim-bookworm",
    "3.14-rc-slim",
    "latest",
    "slim",
)


def test_3_12_slim_moves_to_3_13_slim_not_3_13_1_slim_or_3_13() -> None:
    """Only the same variant with as many components is a candidate, and it is latest too."""
    f = evaluate(_image("3.12-slim"), PYTHON, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert (f.status, f.current, f.current_source) == ("outdated", "3.12-slim", "pin")
    assert (f.latest, f.eligible, f.update_type, f.versions_behind) == (
        "3.13-slim",
        "3.13-slim",
        "minor",
        1,
    )
    assert f.held_back == ()
    assert f.reason is None


def test_node_alpine_variant_moves_major_within_its_variant() -> None:
    """``20.11.1-alpine3.19`` → ``22.1.0-alpine3.19``; other Alpine releases and bare tags wait."""
    node = _tags(
        "20.11.1-alpine3.19",
        "20.11.2-alpine3.19",
        "22.1.0-alpine3.19",
        "22.1.0-alpine3.20",
        "22.1.0",
        "22-alpine3.19",
        "23.0.0-rc.1-alpine3.19",
    )
    f = evaluate(_image("20.11.1-alpine3.19"), node, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert (f.status, f.latest, f.eligible, f.update_type, f.versions_behind) == (
        "outdated",
        "22.1.0-alpine3.19",
        "22.1.0-alpine3.19",
        "major",
        2,
    )


def test_rc_tags_are_skipped_for_a_stable_current() -> None:
    """A stable tag is up to date while only release candidates of the next version exist."""
    cat = _tags("3.12", "3.13-rc1", "3.13-rc2", "3.13.0rc1")
    f = evaluate(_image("3.12"), cat, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert (f.status, f.latest, f.eligible, f.versions_behind) == ("up-to-date", "3.12", None, 0)


def test_a_prerelease_current_sees_prereleases_of_its_variant() -> None:
    """On ``3.13-rc1-slim`` the next rc of that variant is proposed, then the release."""
    cat = _tags("3.13-rc1-slim", "3.13-rc2-slim", "3.13-rc3", "3.12-slim")
    f = evaluate(_image("3.13-rc1-slim"), cat, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert (f.status, f.latest, f.eligible, f.update_type) == (
        "outdated",
        "3.13-rc2-slim",
        "3.13-rc2-slim",
        "patch",
    )
    released = _tags("3.13-rc1-slim", "3.13-rc2-slim", "3.13-slim")
    f = evaluate(_image("3.13-rc1-slim"), released, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert (f.latest, f.eligible, f.versions_behind) == ("3.13-slim", "3.13-slim", 2)


def test_a_prerelease_current_moves_to_its_own_release_not_the_next_prerelease() -> None:
    """``postgres:18beta1``: 18rc1 (its release's) or 18 (stable), never 19beta1.

    Renovate's ``ignoreUnstable``: an unstable candidate must share current's major, minor
    and patch; a stable one is always admitted.
    """
    cat = _tags("16", "17", "18", "18beta1", "18rc1", "19beta1")
    f = evaluate(_image("18beta1"), cat, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert (f.status, f.latest, f.eligible, f.update_type, f.versions_behind) == (
        "outdated",
        "18",
        "18",
        "patch",
        2,
    )
    before = _tags("16", "17", "18beta1", "18rc1", "19beta1")
    f = evaluate(_image("18beta1"), before, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert (f.latest, f.eligible, f.versions_behind) == ("18rc1", "18rc1", 1)
    # Stable current: never an unstable tag.
    f = evaluate(_image("17"), cat, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert (f.latest, f.eligible, f.update_type) == ("18", "18", "major")
    assert docker.admits_prerelease("3.13.0rc1", "3.13.0rc2")
    assert not docker.admits_prerelease("3.13.0rc1", "3.14.0a1")


def test_a_date_stamped_snapshot_moves_to_the_newest_snapshot_of_its_name() -> None:
    """``ubuntu:jammy-20240227``: not a mutable tag; ``jammy-20251001`` is latest."""
    cat = _tags("22.04", "24.04", "jammy", "jammy-20240227", "jammy-20251001", "noble-20251101")
    f = evaluate(_image("jammy-20240227"), cat, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert (f.status, f.latest, f.eligible, f.update_type, f.versions_behind) == (
        "outdated",
        "jammy-20251001",
        "jammy-20251001",
        "patch",
        1,
    )
    f = evaluate(_image("jammy-20251001"), cat, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert (f.status, f.latest, f.eligible) == ("up-to-date", "jammy-20251001", None)


def test_date_tags_are_compared_only_with_dates_of_their_form() -> None:
    """A date moves to a later date of its form; a version never moves to a date."""
    cat = _tags("3", "4", "20240101", "20240329", "2024.05.01", SHA)
    memo = EvaluationMemo()
    on_date = evaluate(_image("20240101"), cat, docker, NO_WAIT, NOW, memo=memo)
    assert (on_date.latest, on_date.eligible, on_date.update_type, on_date.versions_behind) == (
        "20240329",
        "20240329",
        "minor",
        1,
    )
    on_version = evaluate(_image("3"), cat, docker, NO_WAIT, NOW, memo=memo)
    assert (on_version.latest, on_version.eligible, on_version.versions_behind) == ("4", "4", 1)


def test_a_commit_sha_tag_is_no_version_and_never_called_up_to_date() -> None:
    """A SHA tag compares with nothing: the row is unknown, with no version proposed."""
    cat = _tags("3", "4", SHA, "1a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d")
    f = evaluate(_image(SHA), cat, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert (f.status, f.current, f.latest, f.eligible) == ("unknown", SHA, None, None)
    assert f.reason == f"{SHA!r} is not a docker version: no release compares to it"


def test_the_latest_tag_is_unknown_as_a_version() -> None:
    """``latest`` is no version: unknown (its digest tells), or missing when not listed."""
    f = evaluate(_image("latest"), PYTHON, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert (f.status, f.current, f.current_source, f.latest) == ("unknown", "latest", "pin", None)
    assert f.reason == "'latest' is not a docker version: no release compares to it"
    missing = evaluate(_image("edge"), PYTHON, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert missing.status == "unknown"
    assert missing.reason == "pinned version edge is not in the docker release list"


def test_a_digest_without_a_tag_has_no_version_to_compare() -> None:
    """``python@sha256:…`` has no tag: unknown as a version, never "the newest tag"."""
    f = evaluate(
        _image(None, "sha256:" + "a" * 64), PYTHON, docker, NO_WAIT, NOW, memo=EvaluationMemo()
    )
    assert (f.status, f.current, f.latest) == ("unknown", None, None)
    assert f.reason == "no tag is declared (pinned by digest only): there is no version to compare"


def test_an_incompatible_registry_latest_is_replaced_by_the_compatible_newest() -> None:
    """Should a registry name ``3.13`` as latest, a ``-slim`` user is measured on ``3.13-slim``."""
    cat = _tags("3.12-slim", "3.13-slim", "3.13", latest="3.13")
    f = evaluate(_image("3.12-slim"), cat, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert (f.latest, f.eligible) == ("3.13-slim", "3.13-slim")


def test_undated_tags_are_proposed_when_no_wait_is_configured() -> None:
    """Without a wait, unknown ages hold nothing back and libyears stay unknown."""
    f = evaluate(_image("3.12-slim"), PYTHON, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert (f.status, f.eligible, f.eligible_released_at, f.libyears) == (
        "outdated",
        "3.13-slim",
        None,
        None,
    )


def test_undated_tags_are_held_back_under_a_wait_saying_the_age_is_unknown() -> None:
    """With a wait and ``unknown_age = hold``, an OCI tag is held back as "age unknown"."""
    f = evaluate(_image("3.12-slim"), PYTHON, docker, THREE_DAYS, NOW, memo=EvaluationMemo())
    assert (f.status, f.eligible, f.update_type) == ("held-back", None, "minor")
    [held] = f.held_back
    assert (held.version, held.released_at, held.eligible_at, held.update_type) == (
        "3.13-slim",
        None,
        None,
        "minor",
    )
    assert held.reason == (
        "age unknown: an OCI image tag has no publish time in the registry; minor updates wait 72h"
    )


def test_undated_tags_are_admitted_under_a_wait_when_the_setting_admits_them() -> None:
    """``unknown_age = admit`` proposes the tag and the row says its age is unknown."""
    policy = ReleaseAgePolicy(minor=3 * DAY, unknown_age="admit")
    f = evaluate(_image("3.12-slim"), PYTHON, docker, policy, NOW, memo=EvaluationMemo())
    assert (f.status, f.eligible, f.eligible_released_at, f.held_back) == (
        "outdated",
        "3.13-slim",
        None,
        (),
    )
    assert f.reason == "3.13-slim: age unknown, admitted by policy"


def test_rows_of_one_tag_list_share_a_view_but_not_their_latest() -> None:
    """Compatibility depends on current: each variant's latest and candidates are its own."""
    memo = EvaluationMemo()
    slim = evaluate(_image("3.12-slim"), PYTHON, docker, NO_WAIT, NOW, memo=memo)
    bare = evaluate(_image("3.13"), PYTHON, docker, NO_WAIT, NOW, memo=memo)
    patch = evaluate(_image("3.12.7-slim"), PYTHON, docker, NO_WAIT, NOW, memo=memo)
    again = evaluate(_image("3.12-slim"), PYTHON, docker, NO_WAIT, NOW, memo=memo)
    assert memo.views_built == 1
    assert (slim.latest, bare.latest, patch.latest) == ("3.13-slim", "3.13", "3.13.1-slim")
    assert (slim.versions_behind, bare.versions_behind, patch.versions_behind) == (1, 0, 1)
    assert again is slim


def test_a_version_published_with_and_without_v_is_proposed_in_the_form_in_use() -> None:
    """``3.12`` moves to ``3.13`` and ``v3.12`` to ``v3.13``, each counting one version behind."""
    cat = _tags("3.12", "3.13", "v3.12", "v3.13")
    memo = EvaluationMemo()
    bare = evaluate(_image("3.12"), cat, docker, NO_WAIT, NOW, memo=memo)
    with_v = evaluate(_image("v3.12"), cat, docker, NO_WAIT, NOW, memo=memo)
    assert (bare.latest, bare.eligible, bare.versions_behind) == ("3.13", "3.13", 1)
    assert (with_v.latest, with_v.eligible, with_v.versions_behind) == ("v3.13", "v3.13", 1)


def test_a_missing_tag_is_not_found_through_an_equal_version() -> None:
    """``18.4`` is not listed although ``18.04`` is: the pinned tag is missing, not up to date."""
    cat = _tags("18.04", "20.04")
    f = evaluate(_image("18.4"), cat, docker, NO_WAIT, NOW, memo=EvaluationMemo())
    assert (f.status, f.reason) == (
        "unknown",
        "pinned version 18.4 is not in the docker release list",
    )


def test_an_undated_github_tag_is_held_in_githubs_words_not_an_oci_images() -> None:
    """Same versioning, another datasource: the reason names what GitHub lacks."""
    action = Dependency(
        manager="github_actions",
        file=".github/workflows/ci.yml",
        line=7,
        name="actions/checkout",
        package_name="actions/checkout",
        datasource="github-tags",
        versioning="docker",
        dep_type="action",
        declared="actions/checkout@v6",
        constraint="v6",
    )
    tags = Catalog(
        datasource="github-tags",
        package_name="actions/checkout",
        releases=(Release("v7", None, digest=SHA), Release("v6", None)),
        latest=None,
        fetched_at=NOW,
    )
    f = evaluate(action, tags, docker, THREE_DAYS, NOW, memo=EvaluationMemo())
    [held] = f.held_back
    assert held.reason == (
        "age unknown: a GitHub tag has no date of its own, and no release or commit date was"
        " found; major updates wait 72h"
    )


def test_a_floating_tag_moves_to_the_precise_tags_of_a_line_without_a_floating_tag() -> None:
    """``1-alpine`` beside ``2.0.1-alpine`` and no ``2-alpine``: pinned in full, said so.

    Other variants (``2.1.0``) and prereleases (``3.0.0-rc1-alpine``) never stand in.
    """
    cat = _tags(
        "1-alpine", "1.4.0-alpine", "2.0.0-alpine", "2.0.1-alpine", "2.1.0", "3.0.0-rc1-alpine"
    )
    f = evaluate(_image("1-alpine"), cat, docker, NO_WAIT, NOW)
    assert (f.status, f.latest, f.eligible, f.update_type, f.versions_behind) == (
        "outdated",
        "2.0.1-alpine",
        "2.0.1-alpine",
        "major",
        2,
    )
    assert f.reason == "no floating 2-alpine tag; pinning 2.0.1-alpine"


def test_a_floating_tag_with_its_newer_line_floating_moves_to_that_tag() -> None:
    """``3.12`` beside ``3.13`` and ``3.13.1``: ``3.13``, as before; no note."""
    f = evaluate(_image("3.12"), _tags("3.12", "3.12.7", "3.13", "3.13.1"), docker, NO_WAIT, NOW)
    assert (f.status, f.eligible, f.versions_behind, f.reason) == ("outdated", "3.13", 1, None)


def test_a_precise_tag_held_back_by_age_stands_in_as_a_held_back_release() -> None:
    """The stand-in is judged by the release-age policy like any candidate."""
    cat = Catalog(
        datasource="docker",
        package_name="docker.io/library/python",
        releases=(
            Release("1", NOW - 90 * DAY),
            Release("1.4.0", NOW - 90 * DAY),
            Release("2.0.0", NOW - DAY),
        ),
        latest=None,
        fetched_at=NOW,
    )
    f = evaluate(_image("1"), cat, docker, THREE_DAYS, NOW)
    assert (f.status, f.latest, f.eligible) == ("held-back", "2.0.0", None)
    assert [(h.version, h.update_type, h.eligible_at) for h in f.held_back] == [
        ("2.0.0", "major", NOW + 2 * DAY)
    ]
