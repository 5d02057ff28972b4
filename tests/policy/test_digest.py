"""Digest verdicts: pinned digests against a tag's current one, mutable tags, unread digests."""

from __future__ import annotations

import pytest

from patchula.errors import LookupFailed
from patchula.models import Finding
from patchula.policy.digest import pinned_digest, track_tag

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
