"""Digest verdicts: pinned digests against a tag's current one, mutable tags, unread digests."""

from __future__ import annotations

import pytest

from patchula.datasource.github_tags import DIGEST_TERMS as GITHUB
from patchula.errors import LookupFailed, NotCached
from patchula.models import Finding
from patchula.policy.digest import pinned_digest, track_tag, unknown_pin

A = "sha256:" + "a" * 64
B = "sha256:" + "b" * 64
C = "sha256:" + "c" * 64
CURRENT = Finding(status="up-to-date", current="3.13", current_source="pin", latest="3.13")
BEHIND = Finding(
    status="outdated",
    current="3.12",
    current_source="pin",
    latest="3.13",
    eligible="3.13",
    update_type="minor",
)


def test_an_unpinned_mutable_tag_is_up_to_date_naming_its_digest() -> None:
    """``latest`` without a pin: nothing to move to; the row says what it points at now."""
    f = track_tag("latest", None, A)
    assert (f.status, f.current, f.current_source, f.current_digest, f.digest) == (
        "up-to-date",
        "latest",
        "dist-tag",
        A,
        None,
    )
    assert f.reason == f"tracks the mutable tag latest (now {A})"


def test_a_pinned_mutable_tag_is_outdated_once_it_moves() -> None:
    """Same digest: up to date; another: a ``digest`` update."""
    assert track_tag("stable", A, A).status == "up-to-date"
    moved = track_tag("stable", A, B)
    assert (moved.status, moved.update_type, moved.current_digest) == ("outdated", "digest", B)
    assert (moved.eligible, moved.new_digest) == ("stable", B)  # the same tag, its new digest


@pytest.mark.parametrize(
    ("read", "status", "why"),
    [
        (None, "unknown", "the digest of tag {tag} could not be read: the registry gave none"),
        (
            LookupFailed("toomanyrequests: pull quota"),
            "error",
            # The failure first, so rows of an unreachable host group with its other rows.
            "toomanyrequests: pull quota; the digest of tag {tag} could not be read",
        ),
        (
            # --offline and nothing stored: nothing failed upstream, the digest is unknown.
            NotCached(),
            "unknown",
            "not in cache (offline); the digest of tag {tag} could not be read",
        ),
    ],
)
def test_an_unread_digest_is_never_up_to_date(
    read: LookupFailed | None, status: str, why: str
) -> None:
    """A mutable tag or a current version tag whose digest is unknown is never "unchanged"."""
    tracked = track_tag("latest", A, read)
    pinned = pinned_digest(CURRENT, "3.13", A, read)
    for f, tag in ((tracked, "latest"), (pinned, "3.13")):
        assert (f.status, f.current_digest) == (status, None)
        assert f.reason == why.format(tag=tag)
    assert pinned.digest == A


def test_a_pinned_digest_that_matches_keeps_the_tag_verdict() -> None:
    """Same digest: the tag's verdict stands, with both digests named."""
    f = pinned_digest(CURRENT, "3.13", A, A)
    assert (f.status, f.update_type, f.reason, f.digest, f.current_digest) == (
        "up-to-date",
        None,
        None,
        A,
        A,
    )


def test_a_moved_digest_of_a_held_back_tag_is_a_digest_update_now() -> None:
    """The newer tag waits for the policy, but the pushed-again current tag can be taken now."""
    held = Finding(status="held-back", current="3.12", latest="3.13", update_type="minor")
    f = pinned_digest(held, "3.12", A, B)
    assert (f.status, f.update_type) == ("outdated", "digest")
    assert (f.eligible, f.new_digest) == ("3.12", B)  # the pushed-again tag is the proposal


def test_a_tag_update_takes_precedence_and_carries_the_new_digest() -> None:
    """Tag and digest move together: the update type stays minor; the row says the digest moved."""
    f = pinned_digest(BEHIND, "3.12", A, B, C)
    assert (f.status, f.update_type, f.current_digest, f.new_digest) == (
        "outdated",
        "minor",
        B,
        C,
    )
    assert f.reason == f"the digest of tag 3.12 moved: pinned {A}, now {B}"
    unread = pinned_digest(BEHIND, "3.12", A, A, None)
    assert (unread.status, unread.new_digest) == ("outdated", None)
    assert unread.reason == "the digest of tag 3.13 could not be read: the registry gave none"


# --- GitHub commits: the datasource's words --------------------------------------------------

SHA_A = "a" * 40
SHA_B = "b" * 40
SHA_C = "c" * 40
ACTION = Finding(status="up-to-date", current="v4.2.2", current_source="pin", latest="v4.2.2")


def test_a_branch_is_tracked_by_its_commit_in_githubs_words() -> None:
    """A branch "tracks the branch main (now …)", never "mutable tag"; a moved pin says so."""
    f = track_tag("main", None, SHA_A, terms=GITHUB, kind="branch")
    assert (f.status, f.current, f.current_digest) == ("up-to-date", "main", SHA_A)
    assert f.reason == f"tracks the branch main (now {SHA_A})"
    moved = track_tag("release", SHA_A, SHA_B, terms=GITHUB, kind="tag")
    assert (moved.status, moved.update_type) == ("outdated", "digest")
    assert moved.reason == f"the tag release moved: pinned {SHA_A}, now {SHA_B}"
    unread = track_tag("main", None, LookupFailed("HTTP 503"), terms=GITHUB, kind="branch")
    assert (unread.status, unread.reason) == (
        "error",
        "HTTP 503; the commit of branch main could not be read",
    )


def test_a_comment_that_disagrees_with_the_pin_is_a_digest_update() -> None:
    """The comment's tag points at another commit: outdated, update type digest, GitHub's words."""
    f = pinned_digest(ACTION, "v4.2.2", SHA_A, SHA_B, terms=GITHUB)
    assert (f.status, f.update_type, f.digest, f.current_digest) == (
        "outdated",
        "digest",
        SHA_A,
        SHA_B,
    )
    assert f.reason == (
        f"the comment says v4.2.2, but the pinned commit {SHA_A} is not v4.2.2's ({SHA_B})"
    )
    assert pinned_digest(ACTION, "v4.2.2", SHA_A, SHA_A, terms=GITHUB).status == "up-to-date"


def test_a_found_tag_has_its_own_mismatch_words_and_the_sha_to_pin() -> None:
    """``mismatch`` replaces the template; a proposed tag's commit is ``new_digest``."""
    behind = Finding(
        status="outdated",
        current="v4.2.2",
        current_source="pin",
        latest="v5.0.0",
        eligible="v5.0.0",
        update_type="major",
    )
    f = pinned_digest(
        behind, "v4.2.2", SHA_A, SHA_B, SHA_C, terms=GITHUB, mismatch="{tag}: {pinned} → {now}"
    )
    assert (f.update_type, f.new_digest, f.reason) == ("major", SHA_C, f"v4.2.2: {SHA_A} → {SHA_B}")
    unread = pinned_digest(behind, "v4.2.2", SHA_A, SHA_A, None, terms=GITHUB)
    assert unread.reason == (
        "the commit of tag v5.0.0 could not be read: GitHub has no tag or branch of that name"
    )


def test_a_pin_no_tag_points_at_is_unknown() -> None:
    """Never "up to date": the pin may be any commit."""
    f = unknown_pin(SHA_A, GITHUB)
    assert (f.status, f.digest, f.current) == ("unknown", SHA_A, None)
    assert f.reason == f"no tag points at the pinned commit {SHA_A}"
