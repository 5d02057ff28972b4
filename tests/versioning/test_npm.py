"""Table tests for npm semver; most rows come from npm's node-semver test fixtures.

Sources: ``npm/node-semver:test/fixtures/range-include.js``, ``range-exclude.js``,
``comparisons.js``, ``equality.js``, ``invalid-versions.js`` (default options, not loose).
"""

from __future__ import annotations

import pytest

from patchula.versioning import npm

RANGE_INCLUDE = [
    ("1.0.0 - 2.0.0", "1.2.3"),
    ("^1.2.3+build", "1.2.3"),
    ("^1.2.3+build", "1.3.0"),
    ("1.2.3-pre+asdf - 2.4.3-pre+asdf", "1.2.3"),
    ("1.2.3-pre+asdf - 2.4.3-pre+asdf", "1.2.3-pre.2"),
    ("1.2.3-pre+asdf - 2.4.3-pre+asdf", "2.4.3-alpha"),
    ("1.2.3+asdf - 2.4.3+asdf", "1.2.3"),
    ("1.0.0", "1.0.0"),
    (">=*", "0.2.4"),
    ("", "1.0.0"),
    ("*", "1.2.3"),
    ("*", "v1.2.3"),
    (">=1.0.0", "1.0.0"),
    (">=1.0.0", "1.0.1"),
    (">=1.0.0", "1.1.0"),
    (">1.0.0", "1.0.1"),
    (">1.0.0", "1.1.0"),
    ("<=2.0.0", "2.0.0"),
    ("<=2.0.0", "1.9999.9999"),
    ("<=2.0.0", "0.2.9"),
    ("<2.0.0", "1.9999.9999"),
    ("<2.0.0", "0.2.9"),
    (">= 1.0.0", "1.0.0"),
    (">=  1.0.0", "1.0.1"),
    ("> 1.0.0", "1.0.1"),
    ("<=   2.0.0", "2.0.0"),
    ("<\t2.0.0", "0.2.9"),
    (">=0.1.97", "v0.1.97"),
    (">=0.1.97", "0.1.97"),
    ("0.1.20 || 1.2.4", "1.2.4"),
    (">=0.2.3 || <0.0.1", "0.0.0"),
    (">=0.2.3 || <0.0.1", "0.2.3"),
    (">=0.2.3 || <0.0.1", "0.2.4"),
    ("||", "1.3.4"),
    ("2.x.x", "2.1.3"),
    ("1.2.x", "1.2.3"),
    ("1.2.x || 2.x", "2.1.3"),
    ("1.2.x || 2.x", "1.2.3"),
    ("x", "1.2.3"),
    ("2.*.*", "2.1.3"),
    ("1.2.*", "1.2.3"),
    ("1.2.* || 2.*", "2.1.3"),
    ("2", "2.1.2"),
    ("2.3", "2.3.1"),
    ("~0.0.1", "0.0.1"),
    ("~0.0.1", "0.0.2"),
    ("~x", "0.0.9"),
    ("~2", "2.0.9"),
    ("~2.4", "2.4.0"),
    ("~2.4", "2.4.5"),
    ("~>3.2.1", "3.2.2"),
    ("~1", "1.2.3"),
    ("~>1", "1.2.3"),
    ("~> 1", "1.2.3"),
    ("~1.0", "1.0.2"),
    ("~ 1.0", "1.0.2"),
    ("~ 1.0.3", "1.0.12"),
    ("~1.2", "1.2.9"),
    (">=1", "1.0.0"),
    (">= 1", "1.0.0"),
    ("<1.2", "1.1.1"),
    ("< 1.2", "1.1.1"),
    ("~v0.5.4-pre", "0.5.5"),
    ("~v0.5.4-pre", "0.5.4"),
    ("=0.7.x", "0.7.2"),
    ("<=0.7.x", "0.7.2"),
    (">=0.7.x", "0.7.2"),
    ("<=0.7.x", "0.6.2"),
    ("~1.2.1 >=1.2.3", "1.2.3"),
    ("~1.2.1 =1.2.3", "1.2.3"),
    ("~1.2.1 1.2.3", "1.2.3"),
    ("~1.2.1 >=1.2.3 1.2.3", "1.2.3"),
    (">=1.2.1 1.2.3", "1.2.3"),
    ("1.2.3 >=1.2.1", "1.2.3"),
    (">=1.2", "1.2.8"),
    ("^1.2.3", "1.8.1"),
    ("^0.1.2", "0.1.2"),
    ("^0.1", "0.1.2"),
    ("^0.0.1", "0.0.1"),
    ("^1.2", "1.4.2"),
    ("^1.2 ^1", "1.4.2"),
    ("^1.2.3-alpha", "1.2.3-pre"),
    ("^1.2.0-alpha", "1.2.0-pre"),
    ("^0.0.1-alpha", "0.0.1-beta"),
    ("^0.0.1-alpha", "0.0.1"),
    ("^0.1.1-alpha", "0.1.1-beta"),
    ("^1.2.3-beta.1", "1.2.3-beta.2"),
    ("^x", "1.2.3"),
    ("x - 1.0.0", "0.9.7"),
    ("x - 1.x", "0.9.7"),
    ("1.0.0 - x", "1.9.7"),
    ("1.x - x", "1.9.7"),
    ("<=7.x", "7.9.9"),
    ("1.2.3 - 2.3", "2.3.9"),
    (">=1.2.3 <1.3.0-beta || 2.x", "1.2.9"),
    (">=1.2.3 <1.3.0-beta || 2.x", "2.5.0"),
    (">=1 <2", "1.99.0"),
]

RANGE_EXCLUDE = [
    ("1.0.0 - 2.0.0", "2.2.3"),
    ("1.2.3+asdf - 2.4.3+asdf", "1.2.3-pre.2"),
    ("1.2.3+asdf - 2.4.3+asdf", "2.4.3-alpha"),
    ("^1.2.3+build", "2.0.0"),
    ("^1.2.3+build", "1.2.0"),
    ("^1.2.3", "1.2.3-pre"),
    ("^1.2", "1.2.0-pre"),
    (">1.2", "1.3.0-beta"),
    ("<=1.2.3", "1.2.3-beta"),
    ("^1.2.3", "1.2.3-beta"),
    ("=0.7.x", "0.7.0-asdf"),
    (">=0.7.x", "0.7.0-asdf"),
    ("<=0.7.x", "0.7.0-asdf"),
    ("1.0.0", "1.0.1"),
    (">=1.0.0", "0.0.0"),
    (">=1.0.0", "0.0.1"),
    (">=1.0.0", "0.1.0"),
    (">1.0.0", "0.0.1"),
    (">1.0.0", "0.1.0"),
    ("<=2.0.0", "3.0.0"),
    ("<=2.0.0", "2.9999.9999"),
    ("<=2.0.0", "2.2.9"),
    ("<2.0.0", "2.9999.9999"),
    ("<2.0.0", "2.2.9"),
    (">=0.1.97", "v0.1.93"),
    (">=0.1.97", "0.1.93"),
    ("0.1.20 || 1.2.4", "1.2.3"),
    (">=0.2.3 || <0.0.1", "0.0.3"),
    (">=0.2.3 || <0.0.1", "0.2.2"),
    ("2.x.x", "1.1.3"),
    ("2.x.x", "3.1.3"),
    ("1.2.x", "1.3.3"),
    ("1.2.x || 2.x", "3.1.3"),
    ("1.2.x || 2.x", "1.1.3"),
    ("2.*.*", "1.1.3"),
    ("2.*.*", "3.1.3"),
    ("1.2.*", "1.3.3"),
    ("1.2.* || 2.*", "3.1.3"),
    ("1.2.* || 2.*", "1.1.3"),
    ("2", "1.1.2"),
    ("2.3", "2.4.1"),
    ("~0.0.1", "0.1.0-alpha"),
    ("~0.0.1", "0.1.0"),
    ("~2.4", "2.5.0"),
    ("~2.4", "2.3.9"),
    ("~>3.2.1", "3.3.2"),
    ("~>3.2.1", "3.2.0"),
    ("~1", "0.2.3"),
    ("~>1", "2.2.3"),
    ("~1.0", "1.1.0"),
    ("<1", "1.0.0"),
    (">=1.2", "1.1.1"),
    ("~v0.5.4-beta", "0.5.4-alpha"),
    ("=0.7.x", "0.8.2"),
    (">=0.7.x", "0.6.2"),
    ("<0.7.x", "0.7.2"),
    ("<1.2.3", "1.2.3-beta"),
    ("=1.2.3", "1.2.3-beta"),
    (">1.2", "1.2.8"),
    ("^0.0.1", "0.0.2-alpha"),
    ("^0.0.1", "0.0.2"),
    ("^1.2.3", "2.0.0-alpha"),
    ("^1.2.3", "1.2.2"),
    ("^1.2", "1.1.9"),
    ("*", "v1.2.3-foo"),
    ("^1.0.0", "2.0.0-rc1"),
    ("^1.2.3-rc2", "2.0.0"),
    ("1 - 2", "3.0.0-pre"),
    ("1.1.x", "1.0.0-a"),
    ("1.1.x", "1.1.0-a"),
    ("1.1.x", "1.2.0-a"),
    ("1.x", "1.0.0-a"),
    ("1.x", "1.1.0-a"),
    ("1.x", "1.2.0-a"),
    (">=1.0.0 <1.1.0", "1.1.0"),
    (">=1.0.0 <1.1.0", "1.1.0-pre"),
    (">=1.0.0 <1.1.0-pre", "1.1.0-pre"),
    ("^1.2.3", "2.0.0"),
    ("^0.1.2", "0.2.0"),
    ("^3.4.4", "3.4.5-alpha"),
    ("1.2.3 - 2.3", "2.4.0"),
    (">=1.2.3 <1.3.0-beta || 2.x", "1.3.0"),
    (">=1.2.3 <1.3.0-beta || 2.x", "2.0.0-rc.1"),
    ("*", "not a version"),
    (">=2", "glorp"),
    ("blerg", "1.2.3"),
]


@pytest.mark.parametrize(("constraint", "version"), RANGE_INCLUDE)
def test_range_includes(constraint: str, version: str) -> None:
    """A version inside a range (node-semver's range-include table) matches it."""
    assert npm.matches(version, constraint)


@pytest.mark.parametrize(("constraint", "version"), RANGE_EXCLUDE)
def test_range_excludes(constraint: str, version: str) -> None:
    """A version outside a range, or an unparsable one, never matches (range-exclude table)."""
    assert not npm.matches(version, constraint)


# (greater, lesser) pairs from node-semver's comparisons.js
COMPARISONS = [
    ("0.0.0", "0.0.0-foo"),
    ("0.0.1", "0.0.0"),
    ("1.0.0", "0.9.9"),
    ("0.10.0", "0.9.0"),
    ("0.99.0", "0.10.0"),
    ("2.0.0", "1.2.3"),
    ("v0.0.0", "0.0.0-foo"),
    ("v0.0.1", "0.0.0"),
    ("v1.0.0", "0.9.9"),
    ("0.10.0", "v0.9.0"),
    ("1.2.3", "1.2.3-asdf"),
    ("1.2.3", "1.2.3-4"),
    ("1.2.3", "1.2.3-4-foo"),
    ("1.2.3-5-foo", "1.2.3-5"),
    ("1.2.3-5", "1.2.3-4"),
    ("1.2.3-5-foo", "1.2.3-5-Foo"),
    ("3.0.0", "2.7.2+asdf"),
    ("1.2.3-a.10", "1.2.3-a.5"),
    ("1.2.3-a.b", "1.2.3-a.5"),
    ("1.2.3-a.b", "1.2.3-a"),
    ("1.2.3-a.b.c.10.d.5", "1.2.3-a.b.c.5.d.100"),
    ("1.2.3-r2", "1.2.3-r100"),
    ("1.2.3-r100", "1.2.3-R2"),
    ("1.0.0", "1.0.0-rc.1"),
    ("1.0.0-rc.1", "1.0.0-beta.11"),
    ("1.0.0-beta.11", "1.0.0-beta.2"),
    ("1.0.0-beta.2", "1.0.0-beta"),
    ("1.0.0-beta", "1.0.0-alpha.beta"),
    ("1.0.0-alpha.beta", "1.0.0-alpha.1"),
    ("1.0.0-alpha.1", "1.0.0-alpha"),
    ("1.2.3", "not-a-version"),
]


@pytest.mark.parametrize(("greater", "lesser"), COMPARISONS)
def test_precedence(greater: str, lesser: str) -> None:
    """Versions order by semver precedence (comparisons table); invalid ones sort lowest."""
    assert npm.compare(greater, lesser) == 1
    assert npm.compare(lesser, greater) == -1
    assert npm.sort_key(greater) > npm.sort_key(lesser)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("1.2.3", "v1.2.3"),
        ("1.2.3", "=1.2.3"),
        ("1.2.3", "v 1.2.3"),
        ("1.2.3", "= 1.2.3"),
        ("1.2.3-beta", "v1.2.3-beta"),
        ("1.2.3+build", "1.2.3+otherbuild"),
        ("1.2.3-beta+build", "1.2.3-beta+otherbuild"),
        ("1.2.3", "1.2.3+build"),
    ],
)
def test_equality(a: str, b: str) -> None:
    """Leading ``v``/``=`` and build metadata do not change precedence (equality table)."""
    assert npm.compare(a, b) == 0


@pytest.mark.parametrize(
    "version",
    ["1.2.3.4", "NOT VALID", "1.2", "01.2.3", "1.02.3", "1.2.3-01", "", "latest", "1.2.3beta"],
)
def test_invalid_versions(version: str) -> None:
    """Strings that are not strict semver are invalid and never stable."""
    assert not npm.is_valid(version)
    assert not npm.is_stable(version)


def test_sorting_a_mixed_list() -> None:
    """Sorting by ``sort_key`` puts invalid versions first and prereleases below their release."""
    versions = ["2.0.0", "1.0.0", "junk", "1.0.0-rc.1", "1.0.0-alpha", "1.10.0", "1.9.0"]
    assert sorted(versions, key=npm.sort_key) == [
        "junk",
        "1.0.0-alpha",
        "1.0.0-rc.1",
        "1.0.0",
        "1.9.0",
        "1.10.0",
        "2.0.0",
    ]


@pytest.mark.parametrize(
    ("version", "stable"),
    [
        ("1.2.3", True),
        ("1.2.3+build.5", True),
        ("v1.2.3", True),
        ("1.2.3-beta.1", False),
        ("0.0.0-0", False),
        ("3.0.0-rc.1+build", False),
    ],
)
def test_is_stable(version: str, *, stable: bool) -> None:
    """A version is stable when it has no prerelease part; build metadata does not count."""
    assert npm.is_stable(version) is stable


@pytest.mark.parametrize(
    ("constraint", "valid"),
    [
        ("", True),
        ("*", True),
        ("^1.2.3", True),
        ("~1.2", True),
        ("1.2.3 - 2.3", True),
        (">=1 <2", True),
        ("1.2.x || >=3.0.0-beta.1", True),
        ("latest", False),
        ("blerg", False),
        (">=1.2.3 <", False),
        ("git+https://github.com/a/b.git", False),
    ],
)
def test_is_valid_constraint(constraint: str, *, valid: bool) -> None:
    """Ranges are valid constraints; dist-tags, URLs and garbage are not."""
    assert npm.is_valid_constraint(constraint) is valid


@pytest.mark.parametrize(
    ("constraint", "pin"),
    [
        ("1.2.3", "1.2.3"),
        ("=1.2.3", "1.2.3"),
        ("v1.2.3", "1.2.3"),
        (" =v1.2.3 ", "1.2.3"),
        ("1.2.3-beta.2", "1.2.3-beta.2"),
        ("1.2.3+build", "1.2.3"),
        ("1.2", None),
        ("1.2.x", None),
        ("^1.2.3", None),
        ("~1.2.3", None),
        (">=1.2.3", None),
        ("1.2.3 || 1.2.4", None),
        ("*", None),
        ("", None),
    ],
)
def test_exact_pin(constraint: str, pin: str | None) -> None:
    """Only a single exact version pins; it comes back without ``=``, ``v`` or build metadata."""
    assert npm.exact_pin(constraint) == pin


@pytest.mark.parametrize(
    ("versions", "constraint", "expected"),
    [
        (["1.2.3", "1.2.4"], "1.2", "1.2.4"),
        (["1.2.4", "1.2.3"], "1.2", "1.2.4"),
        (["1.2.3", "1.2.4", "1.2.5", "1.2.6"], "~1.2.3", "1.2.6"),
        (["1.1.0", "1.2.0", "1.2.1", "1.3.0", "2.0.0-b1", "2.0.0", "2.1.0"], "~2.0.0", "2.0.0"),
        (["1.8.1", "2.0.0", "1.9.0-beta.1"], "^1.2.3", "1.8.1"),
        (["1.2.3-beta.1", "1.2.3-beta.2", "1.2.4-beta.1"], "^1.2.3-beta.1", "1.2.3-beta.2"),
        (["0.1.2", "0.1.9", "0.2.0"], "^0.1.2", "0.1.9"),
        (["3.0.0-rc.1", "2.9.0"], "", "2.9.0"),
        (["3.0.0-rc.1", "2.9.0", "junk"], "*", "2.9.0"),
        (["1.0.0", "1.1.0"], ">=2", None),
        (["1.0.0"], "blerg", None),
        ([], "*", None),
    ],
)
def test_max_satisfying(versions: list[str], constraint: str, expected: str | None) -> None:
    """The highest satisfying version wins, prereleases only through npm's prerelease rule."""
    assert npm.max_satisfying(versions, constraint) == expected


@pytest.mark.parametrize(
    ("current", "new", "expected"),
    [
        ("1.2.3", "2.0.0", "major"),
        ("1.2.3", "1.3.0", "minor"),
        ("1.2.3", "1.2.4", "patch"),
        ("0.1.2", "0.2.0", "minor"),
        ("1.2.3-beta.1", "1.2.3", "patch"),
        ("1.2.3", "2.0.0-rc.1", "major"),
        ("v1.2.3", "1.10.0", "minor"),
        ("1.2.3", "1.2.3", None),
        ("1.2.3", "1.2.3+build", None),
        ("2.0.0", "1.9.9", None),
        ("junk", "1.0.0", None),
    ],
)
def test_update_type(current: str, new: str, expected: str | None) -> None:
    """The update type is the first of major/minor/patch that changes; no move up gives None."""
    assert npm.update_type(current, new) == expected


def test_versions_and_exact_pins_never_compile_the_range_regexes() -> None:
    """A scan of exact pins parses versions only: the range regexes wait for the first range."""
    for cached in (npm._ranges, npm._parse, npm._keyed, npm._parse_range):
        cached.cache_clear()  # what earlier tests parsed would answer without a regex
    assert npm.exact_pin("1.3.0") == "1.3.0"
    assert npm.compare("1.3.0", "1.10.0") < 0
    assert npm.update_type("1.3.0", "2.0.0") == "major"
    assert npm.is_valid("1.3.0-rc.1")
    assert npm._ranges.cache_info().currsize == 0
    assert npm.matches("1.3.5", "^1.3.0")
    assert npm._ranges.cache_info().currsize == 1
