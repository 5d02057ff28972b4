"""Table tests for Cargo versions and requirements.

Rows follow the examples of https://doc.rust-lang.org/cargo/reference/specifying-dependencies.html
(caret, tilde, wildcard and comparison requirements) and the ``semver`` crate's rules.
"""

from __future__ import annotations

import pytest

from patchula.versioning import cargo

# (requirement, version) pairs that match.
INCLUDE = [
    # Caret, bare versions are caret (Cargo docs table).
    ("1.2.3", "1.2.3"),
    ("1.2.3", "1.9.9"),
    ("^1.2.3", "1.2.3"),
    ("^1.2.3", "1.99.0"),
    ("1.2", "1.2.0"),
    ("1.2", "1.99.99"),
    ("1", "1.0.0"),
    ("1", "1.99.99"),
    ("0.2.3", "0.2.3"),
    ("0.2.3", "0.2.99"),
    ("0.2", "0.2.0"),
    ("0.2", "0.2.7"),
    ("0.0.3", "0.0.3"),
    ("^0.0", "0.0.0"),
    ("^0.0", "0.0.99"),
    ("0", "0.0.0"),
    ("0", "0.99.1"),
    ("^1.2.3+build", "1.3.0"),
    # Tilde.
    ("~1.2.3", "1.2.3"),
    ("~1.2.3", "1.2.99"),
    ("~1.2", "1.2.0"),
    ("~1.2", "1.2.9"),
    ("~1", "1.0.0"),
    ("~1", "1.99.0"),
    # Wildcards.
    ("*", "0.0.1"),
    ("*", "99.0.0"),
    ("1.*", "1.0.0"),
    ("1.*", "1.7.2"),
    ("1.2.*", "1.2.0"),
    ("1.2.*", "1.2.9"),
    ("1.x", "1.4.0"),
    ("1.*.*", "1.4.0"),
    # Comparisons.
    (">= 1.2.0", "1.2.0"),
    (">=1.2", "5.0.0"),
    (">1", "2.0.0"),
    (">1.2", "1.3.0"),
    (">1.2.3", "1.2.4"),
    ("< 2", "1.99.99"),
    ("<1.2", "1.1.99"),
    ("<=1.2", "1.2.99"),
    ("<=1", "1.99.0"),
    ("<=1.2.3", "1.2.3"),
    ("=1.2.3", "1.2.3"),
    ("=1.2.3", "1.2.3+build.7"),
    ("=1.2", "1.2.5"),
    ("=1", "1.9.0"),
    # Multiple requirements are ANDed.
    (">= 1.2, < 1.5", "1.4.9"),
    (">=1.2.0,<1.5.0", "1.2.0"),
    # Prereleases only through a comparator with a prerelease on the same release.
    ("^1.2.3-alpha.1", "1.2.3-alpha.1"),
    ("^1.2.3-alpha.1", "1.2.3-alpha.10"),
    ("^1.2.3-alpha.1", "1.2.3-beta"),
    ("^1.2.3-alpha.1", "1.2.3"),
    ("^1.2.3-alpha.1", "1.5.0"),
    ("=1.0.0-rc.1", "1.0.0-rc.1"),
    (">=1.0.0-rc.1, <2", "1.0.0-rc.2"),
    ("~0.3.0-beta", "0.3.0-beta.2"),
]

# (requirement, version) pairs that do not match.
EXCLUDE = [
    ("1.2.3", "1.2.2"),
    ("1.2.3", "2.0.0"),
    ("1.2", "1.1.9"),
    ("1.2", "2.0.0"),
    ("1", "2.0.0"),
    ("1", "0.9.9"),
    ("0.2.3", "0.2.2"),
    ("0.2.3", "0.3.0"),
    ("0.2", "0.3.0"),
    ("0.0.3", "0.0.4"),
    ("0.0.3", "0.0.2"),
    ("^0.0", "0.1.0"),
    ("0", "1.0.0"),
    ("~1.2.3", "1.3.0"),
    ("~1.2.3", "1.2.2"),
    ("~1.2", "1.3.0"),
    ("~1", "2.0.0"),
    ("1.*", "2.0.0"),
    ("1.*", "0.9.0"),
    ("1.2.*", "1.3.0"),
    (">=1.2", "1.1.99"),
    (">1", "1.99.0"),
    (">1.2", "1.2.99"),
    (">1.2.3", "1.2.3"),
    ("<2", "2.0.0"),
    ("<1.2", "1.2.0"),
    ("<=1.2", "1.3.0"),
    ("<=1.2.3", "1.2.4"),
    ("=1.2.3", "1.2.4"),
    ("=1.2", "1.3.0"),
    (">= 1.2, < 1.5", "1.5.0"),
    (">= 1.2, < 1.5", "1.1.0"),
    # Prereleases excluded without a matching prerelease comparator.
    ("1.2.3", "1.3.0-alpha"),
    ("*", "1.0.0-rc.1"),
    ("<2", "2.0.0-alpha"),
    (">=1", "1.5.0-beta"),
    ("^1.2.3-alpha.2", "1.2.3-alpha.1"),
    ("^1.2.3-alpha.1", "1.2.4-alpha.1"),
    ("^1.2.3-alpha.1", "2.0.0-alpha.1"),
    ("=1.0.0-rc.1", "1.0.0-rc.2"),
    # Invalid versions never match.
    ("*", "1.2"),
    ("*", "v1.2.3"),
    ("*", "01.2.3"),
    ("*", ""),
]

INVALID_REQUIREMENTS = [
    "",
    "v1.2.3",
    "1.2.3.4",
    "01.2",
    ">=1.*",
    "1.*.3",
    "*, <2",
    "1.2-alpha",
    "^^1",
    "1.2.3 || 2",
    ">=1.2 <1.5",
    "latest",
    "1.2,",
]

VALID_REQUIREMENTS = [
    "1",
    "1.2",
    "1.2.3",
    "^1.2.3-rc.1+build",
    "~1",
    "=1.2.3",
    "*",
    "1.x",
    "1.2.*",
    ">= 1.2, < 1.5",
    " 0.9 ",
    "<=2",
]


@pytest.mark.parametrize(("constraint", "version"), INCLUDE)
def test_requirement_includes_version(constraint: str, version: str) -> None:
    """Cargo accepts ``version`` for ``constraint``."""
    assert cargo.matches(version, constraint) is True


@pytest.mark.parametrize(("constraint", "version"), EXCLUDE)
def test_requirement_excludes_version(constraint: str, version: str) -> None:
    """Cargo rejects ``version`` for ``constraint``."""
    assert cargo.matches(version, constraint) is False


@pytest.mark.parametrize("constraint", INVALID_REQUIREMENTS)
def test_invalid_requirements_are_rejected_without_raising(constraint: str) -> None:
    """Malformed requirements are invalid, match nothing and resolve to nothing."""
    assert cargo.is_valid_constraint(constraint) is False
    assert cargo.matches("1.2.3", constraint) is False
    assert cargo.max_satisfying(["1.2.3"], constraint) is None


@pytest.mark.parametrize("constraint", VALID_REQUIREMENTS)
def test_valid_requirements_are_accepted(constraint: str) -> None:
    """Cargo requirement forms from the Cargo book parse."""
    assert cargo.is_valid_constraint(constraint) is True


@pytest.mark.parametrize(
    ("version", "valid", "stable"),
    [
        ("1.2.3", True, True),
        ("0.0.0", True, True),
        ("1.2.3+build.5", True, True),
        ("1.2.3-alpha.1", True, False),
        ("1.0.0-0.3.7", True, False),
        ("1.0.0-x-y-z.--", True, False),
        ("1.2", False, False),
        ("1", False, False),
        ("v1.2.3", False, False),
        ("=1.2.3", False, False),
        ("01.2.3", False, False),
        ("1.2.3-01", False, False),
        ("1.2.3-", False, False),
        ("1.2.3+", False, False),
        ("1.2.3.4", False, False),
        ("", False, False),
    ],
)
def test_versions_are_strict_semver(version: str, *, valid: bool, stable: bool) -> None:
    """Only strict ``MAJOR.MINOR.PATCH[-pre][+build]`` versions are valid; pre means unstable."""
    assert cargo.is_valid(version) is valid
    assert cargo.is_stable(version) is stable


def test_sort_key_follows_semver_precedence() -> None:
    """The semver §11 example chain sorts in order, with invalid versions first."""
    chain = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.0.1",
        "1.10.0",
        "2.0.0",
    ]
    shuffled = [*reversed(chain[5:]), "junk", *reversed(chain[:5])]
    assert sorted(shuffled, key=cargo.sort_key) == ["junk", *chain]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("1.2.3", "1.2.4", -1),
        ("1.10.0", "1.9.0", 1),
        ("1.2.3+a", "1.2.3+b", 0),
        ("1.2.3-rc.1", "1.2.3", -1),
        ("1.2.3-2", "1.2.3-10", -1),
        ("1.2.3-10", "1.2.3-a", -1),
        ("bad", "0.0.0", -1),
    ],
)
def test_compare(a: str, b: str, expected: int) -> None:
    """Comparison follows precedence and ignores build metadata."""
    assert cargo.compare(a, b) == expected


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [
        ("=1.2.3", "1.2.3"),
        ("= 1.2.3", "1.2.3"),
        ("=1.2.3-rc.1", "1.2.3-rc.1"),
        ("=1.2.3+build", "1.2.3+build"),
        ("=0.11.0+wasi-snapshot-preview1", "0.11.0+wasi-snapshot-preview1"),
        ("=1.2.3-rc.1+b.7", "1.2.3-rc.1+b.7"),
        ("=1.2.3+", None),
        ("1.2.3", None),
        ("^1.2.3", None),
        ("=1.2", None),
        ("=1.2.3, <2", None),
        (">=1.2.3", None),
        ("*", None),
        ("=garbage", None),
    ],
)
def test_exact_pin_only_for_equals_full_version(constraint: str, expected: str | None) -> None:
    """Only ``=MAJOR.MINOR.PATCH`` pins, as written; a bare version is a caret range in Cargo."""
    assert cargo.exact_pin(constraint) == expected


VERSIONS = ["0.1.0", "0.1.5", "0.2.0", "0.2.4", "1.0.0", "1.4.2", "1.5.0-rc.1", "2.0.0-alpha"]


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [
        ("0.1", "0.1.5"),
        ("0.2.1", "0.2.4"),
        ("^0", "0.2.4"),
        ("1", "1.4.2"),
        ("~1.4", "1.4.2"),
        ("*", "1.4.2"),
        ("=1.0.0", "1.0.0"),
        (">=1.5.0-rc.1", "1.5.0-rc.1"),
        ("^2.0.0-alpha", "2.0.0-alpha"),
        ("3", None),
        (">=1.2, <1.4", None),
    ],
)
def test_max_satisfying(constraint: str, expected: str | None) -> None:
    """The highest matching version is chosen, prereleases only when asked for."""
    assert cargo.max_satisfying(VERSIONS, constraint) == expected


def test_max_satisfying_skips_invalid_versions() -> None:
    """Invalid entries in the catalog are ignored."""
    assert cargo.max_satisfying(["1.9", "1.2.0", "v1.8.0"], "1") == "1.2.0"


@pytest.mark.parametrize(
    ("current", "new", "expected"),
    [
        ("1.2.3", "2.0.0", "major"),
        ("1.2.3", "1.3.0", "minor"),
        ("1.2.3", "1.2.4", "patch"),
        ("0.2.3", "0.3.0", "minor"),
        ("0.0.3", "0.0.4", "patch"),
        ("1.2.3-beta.1", "1.2.3", "patch"),
        ("1.2.3", "1.2.3", None),
        ("1.2.3", "1.2.2", None),
        ("1.2.3", "bad", None),
        ("bad", "1.2.3", None),
    ],
)
def test_update_type(current: str, new: str, expected: str | None) -> None:
    """The first differing component names the update; no update when not newer or invalid."""
    assert cargo.update_type(current, new) == expected
