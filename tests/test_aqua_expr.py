"""aqua ``version_filter`` expressions: the expr-lang subset the shipped mapping's entries use."""

from __future__ import annotations

import pytest

from patchula import tools
from patchula.aqua_expr import FilterError, compile_filter, keeps, semver_satisfies


@pytest.mark.parametrize(
    ("source", "tags", "expected"),
    [
        # crate-ci/typos: the repository also tags its varcon crates.
        ('not (Version startsWith "varcon-")', ["varcon-v1.0.0", "v1.28.4"], [False, True]),
        # hashicorp/vault (YAML plain scalar: the expr string holds \\d, the regex \d).
        (
            r'Version matches "^v\\d+\\.\\d+\\.\\d+"',
            ["v1.18.1", "1.99.0", "v1.18"],
            [True, False, False],
        ),
        # koalaman/shellcheck: `and` short-circuits before semver() meets "latest".
        (
            '(not (Version in ["latest", "stable"])) and semver("> 0.4.5")',
            ["latest", "stable", "v0.4.5", "v0.4.6", "v0.10.0"],
            [False, False, False, True, True],
        ),
        # biomejs/biome: a program with a let binding and a closure.
        (
            'let words = ["lsp", "js-api", "nightly"];\nnot any(words, {Version matches #})\n',
            ["cli/v1.9.4", "lsp/v0.1.0", "@biomejs/js-api@1.0.0", "@biomejs/biome@2.0.0"],
            [True, False, False, True],
        ),
        (
            'not (Version contains "beta" or Version contains "rc")',
            ["1.0-beta", "1.0"],
            [False, True],
        ),
        ('Version not startsWith "a" && Version != "b"', ["a1", "b", "c"], [False, False, True]),
        (
            'Version startsWith "go" and not (Version endsWith "rc1")',
            ["go1.2rc1", "go1.2"],
            [False, True],
        ),
        (
            'all(["x", "y"], {Version contains #}) || none(["z"], {# == Version})',
            ["xy", "z"],
            [True, False],
        ),
        ('trimPrefix(Version, "cli-") == "1.0"', ["cli-1.0", "1.0"], [True, True]),
        (
            'semverWithVersion(">= 2.0.0", trimPrefix(Version, "cli-"))',
            ["cli-2.1.0", "cli-1.9"],
            [True, False],
        ),
    ],
)
def test_filters_keep_the_tags_aqua_keeps(
    source: str, tags: list[str], expected: list[bool]
) -> None:
    """Each expression is evaluated on the whole tag, `Version`, as aqua does."""
    assert keeps(source, tags) == expected


def test_not_binds_tighter_than_a_comparison_as_in_expr_lang() -> None:
    """`not Version startsWith "x"` is `(not Version) startsWith …`: an error for every tag.

    expr-lang rejects it when compiling against a string `Version`; the tag is never kept.
    """
    compiled = compile_filter('not Version startsWith "x"')
    with pytest.raises(FilterError, match="needs a boolean"):
        compiled.accepts("x1")
    assert keeps('not Version startsWith "x"', ["x1", "y1"]) == [False, False]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ('Version | lower == "x"', "unexpected '|"),
        ('upper(Version) == "X"', "function 'upper' is not read"),
        ('Version startsWith "a" and', "ends too early"),
        ('(Version == "a"', "expected ')'"),
        ('semver(">= 1", "2")', "semver takes 1 arguments, got 2"),
        ('Version == "a" "b"', "unexpected '\"b\"'"),
    ],
)
def test_what_is_outside_the_subset_does_not_compile(source: str, message: str) -> None:
    """An expression patchula cannot read is an error naming it, never a guess."""
    with pytest.raises(FilterError, match="version_filter") as caught:
        compile_filter(source)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("constraints", "version", "expected"),
    [
        ("> 0.4.5", "v0.4.6", True),
        ("> 0.4.5", "0.4.5", False),
        (">= 1.2, < 2", "1.10.0", True),
        (">= 1.2, < 2", "2.0.0", False),
        ("< 1.0.0", "1.0.0-rc.1", True),  # a prerelease comes before its release
        ("!= 1.0", "1.0.0", False),  # missing segments are 0
        ("= 1.0.0-rc.2", "1.0.0-rc.10", False),
        ("> 1.0.0-rc.2", "1.0.0-rc.10", True),  # numeric prerelease parts compare as numbers
        ("> 0.0.0", "0123456789abcdef0123456789abcdef01234567", False),  # a commit: never
    ],
)
def test_semver_orders_as_hashicorp_go_version(
    constraints: str,
    version: str,
    expected: bool,  # noqa: FBT001 - a parametrized value
) -> None:
    """The semver(): comma-joined comparisons, go-version order."""
    assert semver_satisfies(constraints, version) is expected


def test_semver_of_a_tag_that_is_no_version_fails_and_drops_the_tag() -> None:
    """`semver` on `latest` is an error in aqua: that tag is dropped, the others judged."""
    with pytest.raises(FilterError, match="'latest' is not a version"):
        semver_satisfies("> 1.0", "latest")
    with pytest.raises(FilterError, match="has no operator"):
        semver_satisfies("1.0", "1.0")
    assert keeps('semver(">= 1.0")', ["latest", "v1.2.0", "v0.9"]) == [False, True, False]


def test_every_shipped_version_filter_compiles() -> None:
    """The mapping's filters are all in the subset: no shipped tool is skipped for one."""
    filtered = {
        name: p.version_filter for name, p in tools.shipped().aqua.items() if p.version_filter
    }
    assert {"crate-ci/typos", "biomejs/biome", "koalaman/shellcheck", "hashicorp/vault"} <= set(
        filtered
    )
    for name, source in filtered.items():
        assert isinstance(compile_filter(source).accepts("v1.0.0"), bool), name
