"""Table tests for PEP 440 versions and specifiers.

Rows come from the version-specifiers specification (PEP 440) examples and from
``pypa/packaging:tests/test_specifiers.py``; prerelease rows pin patchula's own rule (a
prerelease matches only a specifier set that mentions one).
"""

from __future__ import annotations

import itertools

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from patchula.versioning import pep440

MATCHING = [
    ("2.0", "==2"),
    ("2.0", "==2.0"),
    ("2.0", "==2.0.0"),
    ("2.0+deadbeef", "==2"),
    ("2.0+deadbeef", "==2.0+deadbeef"),
    ("2.0", "==2.*"),
    ("2.0.0", "==2.0.*"),
    ("2.1+local.version", "==2.1.*"),
    ("1.1.post1", "==1.1.*"),
    ("1.1.post1", "==1.1.post1"),
    ("1.1.post1", "!=1.1"),
    ("2.1", "!=2"),
    ("2.0.1", "!=2.0"),
    ("2.0", "!=2.0+deadbeef"),
    ("2.1", "!=2.0.*"),
    ("2.0", ">=2"),
    ("2.0.post1", ">=2"),
    ("3", ">=2"),
    ("2.0", "<=2.0.0"),
    ("1", "<2"),
    ("2.0", "<2.1"),
    ("2.1", ">2"),
    ("2.1.post1", ">2"),
    ("2.1+local.version", ">2"),
    ("2.0.post2", ">2.0.post1"),
    ("1", "~=1.0"),
    ("1.0.1", "~=1.0"),
    ("1.9999999", "~=1.0"),
    ("2.3", "~=2.2"),
    ("1.4.9", "~=1.4.5"),
    ("2.9", "~=2.2.post3"),
    ("1.4.5", "~=1.4.5a4"),
    ("2.2.9", "~=2.2.0"),
    ("2022.01.01", "~=2022.01.01"),
    ("1!1.0", "==1!1.0"),
    ("1!1.0", ">2.0"),
    ("2.0", "<1!1.0"),
    ("1.5", ">=1.0,<2.0,!=1.4"),
    ("2.0b1", ">=2.0b1"),
    ("2.0b2", ">=1.0,>=2.0b1"),
    ("2.0rc1", ">=2.0.dev1"),
    ("1.0a2", "~=1.0a1"),
    ("1.0", ""),
    ("1.0.post1", ""),
    ("foobar", "===foobar"),
    ("1.0a", "===1.0a"),
]

NOT_MATCHING = [
    ("2.1", "==2"),
    ("2.1", "==2.0.0"),
    ("2.0", "==2.0+deadbeef"),
    ("2.0", "==3.*"),
    ("2.1", "==2.0.*"),
    ("1.1.1", "==1.1"),
    ("1.1.post1", "==1.1"),
    ("1.1.post1", "!=1.1.post1"),
    ("1.1.post1", "!=1.1.*"),
    ("2.0", "!=2"),
    ("2.0+deadbeef", "!=2.0"),
    ("2.0.0", "!=2.*"),
    ("1.0", ">=2"),
    ("2.0.post1", "<=2"),
    ("2.0", "<2"),
    ("2.0a1", "<2"),
    ("2.0.post1", "<2"),
    ("2.0", ">2"),
    ("2.0.post1", ">2"),
    ("2.0+local.version", ">2"),
    ("1.0", "~=1.1"),
    ("2.0", "~=1.0"),
    ("3.0", "~=2.2"),
    ("1.5.0", "~=1.4.5"),
    ("2.3", "~=2.2.0"),
    ("1!1.0", "<2.0"),
    ("1.4", ">=1.0,<2.0,!=1.4"),
    ("2.0b1", ">=1.0"),
    ("2.0.dev1", ">=1.0"),
    ("1.1a1", "==1.1.*"),
    ("2.0b1", ""),
    ("1.0.post1.dev1", ">=1.0"),
    ("foobar", ">=1.0"),
    ("foobar", "==foobar"),
    ("1.0", "~=1"),
    ("1.0", "not a specifier"),
]


@pytest.mark.parametrize(("version", "constraint"), MATCHING)
def test_matching(version: str, constraint: str) -> None:
    """A version inside a specifier set matches it (PEP 440 examples and packaging's table)."""
    assert pep440.matches(version, constraint)


@pytest.mark.parametrize(("version", "constraint"), NOT_MATCHING)
def test_not_matching(version: str, constraint: str) -> None:
    """A version outside a specifier set, an unmentioned prerelease or bad input never matches."""
    assert not pep440.matches(version, constraint)


# The ordering example of PEP 440 ("Summary of permitted suffixes and relative ordering").
PEP440_ORDER = [
    "1.dev0",
    "1.0.dev456",
    "1.0a1",
    "1.0a2.dev456",
    "1.0a12.dev456",
    "1.0a12",
    "1.0b1.dev456",
    "1.0b2",
    "1.0b2.post345.dev456",
    "1.0b2.post345",
    "1.0rc1.dev456",
    "1.0rc1",
    "1.0",
    "1.0+abc.5",
    "1.0+abc.7",
    "1.0+5",
    "1.0.post456.dev34",
    "1.0.post456",
    "1.0.15",
    "1.1.dev1",
]


@pytest.mark.parametrize(("lesser", "greater"), list(itertools.pairwise(PEP440_ORDER)))
def test_pep440_ordering(lesser: str, greater: str) -> None:
    """Each version in PEP 440's ordering example sorts below the next one."""
    assert pep440.compare(lesser, greater) == -1
    assert pep440.compare(greater, lesser) == 1


@pytest.mark.parametrize(
    ("lesser", "greater"),
    [
        ("1.0.dev1", "1.0a1"),
        ("1.0a1", "1.0b1"),
        ("1.0b1", "1.0rc1"),
        ("1.0rc1", "1.0"),
        ("1.0", "1.0.post1"),
        ("2.0", "1!1.0"),
        ("1.9", "1.10"),
        ("not-a-version", "0.0.0.dev0"),
    ],
)
def test_precedence(lesser: str, greater: str) -> None:
    """Pre < final < post, epochs first, numeric components; invalid versions sort lowest."""
    assert pep440.sort_key(lesser) < pep440.sort_key(greater)


def test_sorting_a_mixed_list() -> None:
    """Sorting by ``sort_key`` orders by PEP 440 with invalid strings first."""
    versions = ["1.0.post1", "2005k", "1!0.1", "1.0", "1.0rc1", "1.10", "1.9"]
    assert sorted(versions, key=pep440.sort_key) == [
        "2005k",
        "1.0rc1",
        "1.0",
        "1.0.post1",
        "1.9",
        "1.10",
        "1!0.1",
    ]


@pytest.mark.parametrize(("a", "b"), [("1.0", "1.0.0"), ("1.0a1", "1.0.alpha.1"), ("v1.0", "1.0")])
def test_equal_versions(a: str, b: str) -> None:
    """Spellings of one version normalise to the same precedence."""
    assert pep440.compare(a, b) == 0


@pytest.mark.parametrize(
    ("version", "stable"),
    [
        ("1.0", True),
        ("1.0.post1", True),
        ("1.0+local", True),
        ("1!2.0", True),
        ("1.0.dev1", False),
        ("1.0a1", False),
        ("1.0b2", False),
        ("1.0rc1", False),
        ("1.0.post1.dev1", False),
        ("2005k", False),
    ],
)
def test_is_stable(version: str, *, stable: bool) -> None:
    """Final and post releases are stable; pre and dev releases and invalid strings are not."""
    assert pep440.is_stable(version) is stable


@pytest.mark.parametrize(
    ("version", "valid"),
    [("1.0", True), ("2004b", True), ("1.0.0.0.1", True), ("2005k", False), ("1.0-beta-x", False)],
)
def test_is_valid(version: str, *, valid: bool) -> None:
    """PEP 440 accepts its normalisable spellings and rejects legacy strings."""
    assert pep440.is_valid(version) is valid


@pytest.mark.parametrize(
    ("constraint", "valid"),
    [
        ("", True),
        (">=1.0,<2", True),
        ("==1.0.*", True),
        ("!=1.0.*", True),
        ("===anything", True),
        ("~=1.0", True),
        ("~=1", False),
        ("1.0", False),
        ("==1.0a1.*", False),
        ("^1.2", False),
    ],
)
def test_is_valid_constraint(constraint: str, *, valid: bool) -> None:
    """Comma-separated PEP 440 specifiers are valid; bare versions and other syntaxes are not."""
    assert pep440.is_valid_constraint(constraint) is valid


@pytest.mark.parametrize(
    ("constraint", "pin"),
    [
        ("==1.2.3", "1.2.3"),
        ("== 1.2.3", "1.2.3"),
        ("==1.2.3+local", "1.2.3+local"),
        ("===foo", "foo"),
        ("==1.2.*", None),
        (">=1.2.3", None),
        ("~=1.2", None),
        ("==1.2.3,!=1.2.4", None),
        ("", None),
        ("garbage", None),
    ],
)
def test_exact_pin(constraint: str, pin: str | None) -> None:
    """A lone ``==V`` without wildcard or ``===V`` pins ``V``; anything else is a range."""
    assert pep440.exact_pin(constraint) == pin


@pytest.mark.parametrize(
    ("constraint", "spelled"),
    [("===2013b0", "2013b0"), ("=== foo", "foo"), ("==2013b0", None), ("===1,===2", None)],
)
def test_spelled_pin(constraint: str, spelled: str | None) -> None:
    """Only a lone ``===V`` is a pin on the string ``V`` (arbitrary equality)."""
    assert pep440.spelled_pin(constraint) == spelled


@pytest.mark.parametrize(
    ("versions", "constraint", "expected"),
    [
        (["1.0", "2.0", "2.1b1"], ">=1.0", "2.0"),
        (["1.0", "2.0b1"], ">=1.5", "2.0b1"),
        (["2.0", "2.2", "2.3b1"], ">=1.0b1", "2.3b1"),
        (["1.0", "1.0.post1"], "==1.0", "1.0"),
        (["1.0", "1.0.post1", "1.1.dev1"], "", "1.0.post1"),
        (["1.4.5", "1.4.9", "1.5.0"], "~=1.4.5", "1.4.9"),
        (["1!1.0", "2.0"], ">=1.0", "1!1.0"),
        (["1.9", "2.0rc1"], "<2.0", "1.9"),
        (["2.0rc1"], "<2.0", None),
        (["1.0", "junk"], "", "1.0"),
        (["foobar", "1.0"], "===foobar", "foobar"),
        (["1.0"], ">=3", None),
        (["1.0"], "not a specifier", None),
        ([], "", None),
    ],
)
def test_max_satisfying(versions: list[str], constraint: str, expected: str | None) -> None:
    """What pip installs: the highest matching final, or a prerelease when mentioned or alone."""
    assert pep440.max_satisfying(versions, constraint) == expected


@pytest.mark.parametrize(
    ("version", "constraint", "expected"),
    [
        ("1.5", ">=1.0,<2.0 || >=3.0", True),
        ("2.5", ">=1.0,<2.0 || >=3.0", False),
        ("3.1", ">=1.0,<2.0 || >=3.0", True),
        ("3.1b1", ">=1.0,<2.0 || >=3.0", False),
        ("3.1b1", ">=1.0,<2.0 || >=3.0b1", True),
        ("1.5b1", ">=1.0,<2.0 || >=3.0b1", False),
        ("1.0", "==1.0 || ==2.0", True),
    ],
)
def test_unions_match_when_one_alternative_does(
    version: str, constraint: str, *, expected: bool
) -> None:
    """A Poetry OR (``A || B``) admits what one alternative admits, by its prerelease rule."""
    assert pep440.matches(version, constraint) is expected


@pytest.mark.parametrize(
    ("versions", "constraint", "expected"),
    [
        (["1.0", "1.9", "2.0", "2.5", "3.0"], ">=1.0,<2.0 || >=2.0,<3.0", "2.5"),
        (["1.0", "1.9", "2.5", "3.0"], ">=1.0,<2.0 || >=3.0", "3.0"),
        (["1.0", "1.9", "2.5"], ">=1.0,<2.0 || >=3.0", "1.9"),
        (["1.9", "3.1b1"], ">=1.0,<2.0 || >=3.0", "1.9"),
        (["1.9", "3.1b1"], ">=1.0,<2.0 || >=3.0b1", "3.1b1"),
        (["2.5", "3.1b1"], ">=1.0,<2.0 || >=3.0", "3.1b1"),
        (["2.5"], ">=1.0,<2.0 || >=3.0", None),
    ],
)
def test_max_satisfying_of_a_union(
    versions: list[str], constraint: str, expected: str | None
) -> None:
    """The newest version the union admits; a prerelease only as the fallback, as for one set."""
    assert pep440.max_satisfying(versions, constraint) == expected


@pytest.mark.parametrize("constraint", [">=1 ||", "|| >=1", ">=1 || junk", ">=1 |", ">=1 || ||"])
def test_invalid_unions_are_invalid_constraints(constraint: str) -> None:
    """An empty or invalid alternative makes the union invalid; a union pins nothing."""
    assert not pep440.is_valid_constraint(constraint)
    assert not pep440.matches("1.0", constraint)
    assert pep440.max_satisfying(["1.0"], constraint) is None
    assert pep440.is_valid_constraint("==1.0 || ==2.0")
    assert pep440.exact_pin("==1.0 || ==2.0") is None


@pytest.mark.parametrize(
    ("current", "new", "expected"),
    [
        ("1.0", "2.0", "major"),
        ("1.0", "1.1", "minor"),
        ("1.0", "1.0.1", "patch"),
        ("1", "1.0.0.1", "patch"),
        ("1.0", "1.0.post1", "patch"),
        ("1.0rc1", "1.0", "patch"),
        ("2.2", "2.2.1", "patch"),
        ("1.9", "1.10", "minor"),
        ("3.0", "1!0.5", "major"),
        ("2.0", "1.0", None),
        ("1.0", "1.0.0", None),
        ("1.0+local", "1.0", None),
        ("junk", "1.0", None),
    ],
)
def test_update_type(current: str, new: str, expected: str | None) -> None:
    """The first differing release component (padded to three) names the update; epoch is major."""
    assert pep440.update_type(current, new) == expected


def test_specifiers_are_given_parsed_versions_not_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Matching hands packaging the parsed ``Version`` (no second parse); ``===`` gets the text."""
    seen: list[object] = []
    contains = SpecifierSet.contains

    def spy(self: SpecifierSet, item: object, prereleases: bool | None = None) -> bool:  # noqa: FBT001 - packaging's signature
        seen.append(item)
        return contains(self, item, prereleases=prereleases)  # type: ignore[arg-type]

    monkeypatch.setattr(SpecifierSet, "contains", spy)
    pep440._parse_constraint.cache_clear()
    assert pep440.max_satisfying(["1.0", "1.4", "2.0"], ">=1.0,<2") == "1.4"
    assert seen
    assert all(isinstance(item, Version) for item in seen)
    seen.clear()
    assert pep440.matches("1.0a", "===1.0a")
    assert seen == ["1.0a"]


@pytest.mark.parametrize(
    ("versions", "constraint", "expected"),
    [
        (["1.0", "2.0.dev1", "junk"], "", "2.0.dev1"),
        (["1.0", "2.0.dev1"], ">=1", "2.0.dev1"),
        (["1.0", "2.0.dev1"], "<2", "1.0"),
        (["1.0", "2.0b1", "3.0a1"], "<2 || >=2.5", "3.0a1"),
        (["1.0", "1.1.post1", "1.2rc1"], "==1.1.post1", "1.1.post1"),
        (["foobar", "1.0"], "===foobar", "foobar"),
        (["1.0"], ">=2", None),
        (["1.0"], "not a specifier", None),
        ([], "", None),
    ],
)
def test_max_satisfying_prereleases(
    versions: list[str], constraint: str, expected: str | None
) -> None:
    """What pip ``--pre`` installs: the highest admitted version of any stability."""
    assert pep440.max_satisfying_prereleases(versions, constraint) == expected
