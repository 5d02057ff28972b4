"""Docker tag versioning against the vectors of Renovate's docker versioning.

The tables are a representative set of ``renovatebot/renovate``'s
``lib/modules/versioning/docker/index.spec.ts`` (isValid, isGreaterThan, equals, satisfying,
sortVersions, isStable, isCompatible), with patchula's own expected values. Each row records
Renovate's answer beside ours; the rows where they differ are the documented differences
(README, "Docker tags"): ``-rc``/``-beta``/``-alpha`` after the dash are prereleases rather
than variants, and a leading ``v`` is part of a tag's form.
"""

from __future__ import annotations

import functools

import pytest

from patchula.versioning import docker

# (tag, renovate isValid, patchula is_valid)
VALID = [
    ("1.2.3", True, True),
    ("18.04", True, True),
    ("10.1", True, True),
    ("3", True, True),
    ("foo", False, False),
    ("0a1b2c3", False, False),
    ("0a1b2c3d", False, False),
    ("0a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d", False, False),
    ("0a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0", True, True),  # 41 digits: no commit
    ("0a1b2C3", True, True),  # upper case: no commit hash
    ("0z1b2c3", True, True),
    ("0A1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d", True, True),
    ("123098140293", True, True),
    ("01aecc#v2.1.0", False, False),
]


@pytest.mark.parametrize(("tag", "renovate", "ours"), VALID)
def test_is_valid(tag: str, *, renovate: bool, ours: bool) -> None:
    """``is_valid`` answers as Renovate's ``isValid`` on its table."""
    assert ours == renovate
    assert docker.is_valid(tag) is ours


# (a, b, renovate isGreaterThan(a, b))
GREATER = [
    ("1.2.3", "1.2", False),
    ("18.04", "18.1", True),
    ("10.1", "10.1.2", True),
    ("3", "2", True),
    ("1.2.3", "1.2.3", False),
]


@pytest.mark.parametrize(("a", "b", "expected"), GREATER)
def test_greater_than(a: str, b: str, *, expected: bool) -> None:
    """``compare`` orders as Renovate's ``isGreaterThan`` (a shorter tag above its longer ones)."""
    assert (docker.compare(a, b) > 0) is expected


# (a, b, renovate equals(a, b))
EQUALS = [
    ("1.2.3", "1.2.3", True),
    ("18.04", "18.4", True),
    ("10.0", "10.0.4", False),
    ("3", "4.0", False),
    ("1.2", "1.2.3", False),
]


@pytest.mark.parametrize(("a", "b", "expected"), EQUALS)
def test_equals(a: str, b: str, *, expected: bool) -> None:
    """``compare`` is 0 where Renovate's ``equals`` holds; ``matches`` still wants the same tag."""
    assert (docker.compare(a, b) == 0) is expected
    assert docker.matches(a, b) is (a == b)


SATISFYING_VERSIONS = ["0.9.8", "1.1.1", "1.1", "1.2.3", "1.2", "1", "2.2.2", "2.2", "2"]


@pytest.mark.parametrize(
    ("tag", "expected"),
    [("1.2.3", "1.2.3"), ("1.2", "1.2"), ("1", "1"), ("1.3", None), ("0.9", None)],
)
def test_satisfying_version_is_the_tag_itself(tag: str, expected: str | None) -> None:
    """``max_satisfying`` gives the tag when listed, as Renovate's ``getSatisfyingVersion``."""
    assert docker.max_satisfying(SATISFYING_VERSIONS, tag) == expected


@pytest.mark.parametrize(
    ("a", "b"), [("1.1.1", "1.2.3"), ("1.2.3", "1.3.4"), ("2.0.1", "1.2.3"), ("1.2.3", "0.9.5")]
)
def test_plain_versions_sort_as_semver(a: str, b: str) -> None:
    """Three-number tags sort as semver would (Renovate compares with its semver versioning)."""
    key_a, key_b = (tuple(int(n) for n in v.split(".")) for v in (a, b))
    assert docker.compare(a, b) == (key_a > key_b) - (key_a < key_b)


def test_sorts_unstable_as_renovate() -> None:
    """Renovate's "sorts unstable" vector: prereleases below releases, variants below bare tags."""
    tags = [
        "3.7.0",
        "3.7-alpine",
        "3.7.0b1",
        "3.7.0b5",
        "3.8.0b1-alpine",
        "3.8.0-alpine",
        "3.8.2",
        "3.8.0",
    ]
    by_compare = sorted(tags, key=functools.cmp_to_key(docker.compare))
    expected = [
        "3.7.0b1",
        "3.7.0b5",
        "3.7.0",
        "3.7-alpine",
        "3.8.0b1-alpine",
        "3.8.0-alpine",
        "3.8.0",
        "3.8.2",
    ]
    assert by_compare == expected
    assert sorted(tags, key=docker.sort_key) == expected


# (tag, renovate isStable, patchula is_stable)
STABLE = [
    ("3.7.0", True, True),
    ("3.7.0b1", False, False),
    ("3.7-alpine", True, True),
    ("3.8.0-alpine", True, True),
    ("3.8.0b1-alpine", False, False),
    ("3.8.2", True, True),
    ("3.8.0-rc1", True, False),  # differs: a dash prerelease is a prerelease, not a variant
]


@pytest.mark.parametrize(("tag", "renovate", "ours"), STABLE)
def test_is_stable(tag: str, *, renovate: bool, ours: bool) -> None:
    """``is_stable`` answers as Renovate's ``isStable``, except for ``-rc`` after the dash."""
    assert docker.is_stable(tag) is ours
    assert renovate == ours or "-rc" in tag


# (other, current, renovate isCompatible(other, current), patchula is_compatible(current, other))
COMPATIBLE = [
    ("3.7.0", "3.7.0", True, True),
    ("3.7.0b1", "3.7.0", True, True),
    ("3.7-alpine", "3.7.0", False, False),
    ("3.8.0-alpine", "3.7.0", False, False),
    ("3.8.0b1-alpine", "3.7.0", False, False),
    ("3.8.2", "3.7.0", True, True),
    ("3.7.0", "3.7.0-alpine", False, False),
    ("3.7.0b1", "3.7.0-alpine", False, False),
    ("3.7-alpine", "3.7.0-alpine", False, False),
    ("3.8.0-alpine", "3.7.0-alpine", True, True),
    ("3.8.0b1-alpine", "3.7.0-alpine", True, True),
    ("3.8.2", "3.7.0-alpine", False, False),
    ("v3.8.2", "3.7.0", True, False),  # differs: the ``v`` is part of the form in use
]


@pytest.mark.parametrize(("other", "current", "renovate", "ours"), COMPATIBLE)
def test_is_compatible(other: str, current: str, *, renovate: bool, ours: bool) -> None:
    """``is_compatible(current, other)`` answers as Renovate's ``isCompatible(other, current)``."""
    assert docker.is_compatible(current, other) is ours
    assert renovate == ours or other.startswith("v")
