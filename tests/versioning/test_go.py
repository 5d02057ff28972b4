"""Table tests for Go module versions; rows follow the Go modules reference (go.dev/ref/mod).

Sources: "Versions", "Pseudo-versions", "``+incompatible`` versions", and
``golang.org/x/mod/module/pseudo_test.go`` / ``semver_test.go`` orderings.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import pytest

from patchula.versioning import go

VALID = [
    "v0.0.0",
    "v1.2.3",
    "v1.2.3-pre",
    "v1.2.3-rc.1",
    "v1.2.3-0.20170915032832-14c0d48ead0c",
    "v0.0.0-20191109021931-daa7c04131f5",
    "v1.2.4-pre.0.20191109021931-daa7c04131f5",
    "v2.0.0+incompatible",
    "v29.6.1+incompatible",
    "v2.0.0-20190101000000-abcdefabcdef+incompatible",
    "v0.1.1-deprecated",
    "v1.2.3-x-y-z.1",
]

INVALID = [
    "",
    "1.2.3",
    "v1.2",
    "v1",
    "v1.2.3.4",
    "V1.2.3",
    "v01.2.3",
    "v1.02.3",
    "v1.2.03",
    "v1.2.3-01",
    "v1.2.3-",
    "v1.2.3-pre..1",
    "v1.2.3+build",
    "v1.2.3+incompatible",
    "v0.1.0+incompatible",
    "v2.0.0+incompatible+incompatible",
    " v1.2.3",
    "v1.2.3 ",
    "latest",
    "master",
]


@pytest.mark.parametrize("version", VALID)
def test_valid_versions(version: str) -> None:
    """Canonical versions, pseudo-versions and v2+ ``+incompatible`` versions are valid."""
    assert go.is_valid(version)
    assert go.is_valid_constraint(version)
    assert go.exact_pin(version) == version


@pytest.mark.parametrize("version", INVALID)
def test_invalid_versions(version: str) -> None:
    """Non-canonical forms, other build metadata and v0/v1 ``+incompatible`` are invalid."""
    assert not go.is_valid(version)
    assert not go.is_valid_constraint(version)
    assert go.exact_pin(version) is None
    assert not go.is_stable(version)
    assert not go.is_pseudo(version)
    assert not go.matches(version, "v1.0.0")
    assert not go.matches("v1.0.0", version)
    assert go.update_type(version, "v9.0.0") is None


# Each list is in strictly ascending precedence.
ASCENDING = [
    "v0.0.0-20170915032832-14c0d48ead0c",
    "v0.0.0-20191109021931-daa7c04131f5",
    "v0.0.0",
    "v0.1.0",
    "v0.1.1-deprecated",
    "v0.1.1",
    "v1.0.0-20170915032832-14c0d48ead0c",
    "v1.0.0-alpha",
    "v1.0.0-alpha.1",
    "v1.0.0-alpha.beta",
    "v1.0.0-beta",
    "v1.0.0-beta.2",
    "v1.0.0-beta.11",
    "v1.0.0-rc.1",
    "v1.0.0",
    "v1.2.3-pre",
    "v1.2.3",
    "v1.2.4-0.20170915032832-14c0d48ead0c",
    "v1.2.4-0.20191109021931-daa7c04131f5",
    "v1.2.4-pre",
    "v1.2.4-pre.0.20191109021931-daa7c04131f5",
    "v1.2.4-pre.1",
    "v1.2.4",
    "v2.0.0-20190101000000-abcdefabcdef+incompatible",
    "v2.0.0+incompatible",
    "v2.1.0",
    "v10.0.0",
]


@pytest.mark.parametrize(("low", "high"), list(itertools.pairwise(ASCENDING)))
def test_ordering(low: str, high: str) -> None:
    """Semver precedence: pseudo-versions sit above their base and below the next tag."""
    assert go.compare(low, high) == -1
    assert go.compare(high, low) == 1
    assert go.sort_key(low) < go.sort_key(high)


def test_sort_puts_invalid_first() -> None:
    """Sorting a mixed list puts invalid strings first and valid ones in precedence order."""
    mixed = ["v1.2.3", "bogus", "v1.2.3-pre", "v1.2.4-0.20191109021931-daa7c04131f5"]
    assert sorted(mixed, key=go.sort_key) == [
        "bogus",
        "v1.2.3-pre",
        "v1.2.3",
        "v1.2.4-0.20191109021931-daa7c04131f5",
    ]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("v2.0.0+incompatible", "v2.0.0"),
        ("v29.6.1+incompatible", "v29.6.1"),
        ("v1.2.3", "v1.2.3"),
    ],
)
def test_incompatible_is_ignored_for_precedence(a: str, b: str) -> None:
    """``+incompatible`` orders as its base version."""
    assert go.compare(a, b) == 0


@pytest.mark.parametrize(
    ("version", "stable"),
    [
        ("v1.2.3", True),
        ("v0.5.1", True),
        ("v2.0.0+incompatible", True),
        ("v1.2.3-pre", False),
        ("v0.1.1-deprecated", False),
        ("v0.0.0-20191109021931-daa7c04131f5", False),
        ("v1.4.1-0.20240526193622-a339e1f7089c", False),
        ("v2.0.0-20190101000000-abcdefabcdef+incompatible", False),
    ],
)
def test_is_stable(version: str, stable: bool) -> None:  # noqa: FBT001
    """Stable means no prerelease part and not a pseudo-version."""
    assert go.is_stable(version) is stable


PSEUDO = [
    # (version, commit time, base)
    ("v0.0.0-20191109021931-daa7c04131f5", datetime(2019, 11, 9, 2, 19, 31, tzinfo=UTC), None),
    (
        "v1.4.1-0.20240526193622-a339e1f7089c",
        datetime(2024, 5, 26, 19, 36, 22, tzinfo=UTC),
        "v1.4.0",
    ),
    (
        "v1.2.4-pre.0.20191109021931-daa7c04131f5",
        datetime(2019, 11, 9, 2, 19, 31, tzinfo=UTC),
        "v1.2.4-pre",
    ),
    (
        "v1.2.4-rc.1.0.20191109021931-daa7c04131f5",
        datetime(2019, 11, 9, 2, 19, 31, tzinfo=UTC),
        "v1.2.4-rc.1",
    ),
    (
        "v2.0.0-20190101000000-abcdefabcdef+incompatible",
        datetime(2019, 1, 1, tzinfo=UTC),
        None,
    ),
    (
        "v2.3.1-0.20190101000000-abcdefabcdef+incompatible",
        datetime(2019, 1, 1, tzinfo=UTC),
        "v2.3.0+incompatible",
    ),
    ("v1.0.0-0.20190101000000-abcdefabcdef", datetime(2019, 1, 1, tzinfo=UTC), None),
    ("v0.0.0-20191399000000-abcdefabcdef", None, None),
]


@pytest.mark.parametrize(("version", "time", "base"), PSEUDO)
def test_pseudo_versions(version: str, time: datetime | None, base: str | None) -> None:
    """Pseudo-versions in all three forms give their commit time (UTC) and base tag."""
    assert go.is_pseudo(version)
    assert go.pseudo_time(version) == time
    assert go.pseudo_base(version) == base


@pytest.mark.parametrize(
    "version",
    [
        "v1.2.3",
        "v1.2.3-pre",
        "v0.1.1-deprecated",
        "v1.2.0-20191109021931-daa7c04131f5",
        "v1.2.4-0.2019110902193-daa7c04131f5",
        "0.0.0-20191109021931-daa7c04131f5",
        "v0.0.0-20191109021931-daa7c04131f5+build",
    ],
)
def test_not_pseudo_versions(version: str) -> None:
    """Tags and near-misses of the pseudo-version grammar are not pseudo-versions."""
    assert not go.is_pseudo(version)
    assert go.pseudo_time(version) is None
    assert go.pseudo_base(version) is None


MATCHES = [
    ("v1.2.3", "v1.2.3", True),
    ("v1.2.4", "v1.2.3", True),
    ("v1.9.0", "v1.2.3", True),
    ("v1.2.4-0.20191109021931-daa7c04131f5", "v1.2.3", True),
    ("v1.2.3-pre", "v1.2.3", False),
    ("v1.2.2", "v1.2.3", False),
    ("v2.0.0", "v1.2.3", False),
    ("v0.9.0", "v0.1.0", True),
    ("v1.0.0", "v0.1.0", False),
    ("v1.0.0", "v0.0.0-20191109021931-daa7c04131f5", False),
    ("v0.0.1", "v0.0.0-20191109021931-daa7c04131f5", True),
    ("v2.1.0+incompatible", "v2.0.0+incompatible", True),
    ("v2.1.0", "v2.0.0+incompatible", False),
    ("v3.0.0+incompatible", "v2.0.0+incompatible", False),
    ("v2.1.0+incompatible", "v2.0.0", False),
]


@pytest.mark.parametrize(("version", "constraint", "expected"), MATCHES)
def test_matches_is_minimum_in_same_major(version: str, constraint: str, expected: bool) -> None:  # noqa: FBT001
    """A go.mod requirement accepts versions at or above it with the same major and suffix."""
    assert go.matches(version, constraint) is expected


CATALOG = [
    "v1.2.3",
    "v1.3.0-rc.1",
    "v1.2.5",
    "v2.0.0+incompatible",
    "v0.9.0",
    "bogus",
    "v1.3.1-0.20240101000000-abcdefabcdef",
]


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [
        ("v1.2.3", "v1.3.1-0.20240101000000-abcdefabcdef"),
        ("v0.1.0", "v0.9.0"),
        ("v2.0.0+incompatible", "v2.0.0+incompatible"),
        ("v3.0.0", None),
        ("1.2.3", None),
    ],
)
def test_max_satisfying(constraint: str, expected: str | None) -> None:
    """The highest catalog version at or above the minimum in the same major is chosen."""
    assert go.max_satisfying(CATALOG, constraint) == expected


def test_max_satisfying_empty() -> None:
    """No versions means no answer."""
    assert go.max_satisfying([], "v1.0.0") is None


@pytest.mark.parametrize(
    ("current", "new", "expected"),
    [
        ("v1.2.3", "v2.0.0", "major"),
        ("v1.2.3", "v1.3.0", "minor"),
        ("v1.2.3", "v1.2.4", "patch"),
        ("v1.2.3-pre", "v1.2.3", "patch"),
        ("v0.0.0-20191109021931-daa7c04131f5", "v0.1.0", "minor"),
        ("v1.2.4-0.20191109021931-daa7c04131f5", "v1.2.4", "patch"),
        ("v2.0.0+incompatible", "v3.1.0+incompatible", "major"),
        ("v1.2.3", "v1.2.3", None),
        ("v1.2.4", "v1.2.3", None),
        ("v2.0.0+incompatible", "v2.0.0", None),
        ("v1.2.3", "1.2.4", None),
    ],
)
def test_update_type(current: str, new: str, expected: str | None) -> None:
    """The first differing component names the update; no update when not newer or invalid."""
    assert go.update_type(current, new) == expected


def test_module_satisfies_protocol() -> None:
    """The module has the id ``go`` and every function of the ``Versioning`` protocol."""
    from patchula.versioning.base import Versioning  # noqa: PLC0415 - protocol only used here

    module: Versioning = go
    assert module.ID == "go"
