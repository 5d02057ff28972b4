from __future__ import annotations

from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import uv_lock
from patchula.models import ExtractResult, LockedPackage, Lockfile, ManifestProblem

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "uv_lock"


def _no_read(path: str) -> str:
    raise ManifestError("lockfiles have no includes", file=path)


def _extract(case: str, path: str = "uv.lock") -> ExtractResult:
    text = (FIXTURES / case / "uv.lock").read_text(encoding="utf-8")
    return uv_lock.extract(path, text, _no_read)


def _lockfile(result: ExtractResult) -> Lockfile:
    assert result.lockfile is not None
    return result.lockfile


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("uv.lock", True),
        ("pydantic-core/uv.lock", True),
        ("uv.lock.bak", False),
        ("poetry.lock", False),
    ],
)
def test_matches_uv_lock_by_basename(path: str, *, expected: bool) -> None:
    """Only files named uv.lock match."""
    assert uv_lock.matches(path) is expected


def test_real_workspace_lock_lists_manifest_members_and_registry_packages() -> None:
    """The trimmed pydantic lock keeps registry packages and takes members from [manifest]."""
    result = _extract("workspace", "pydantic/uv.lock")
    lockfile = _lockfile(result)
    assert lockfile.packages == (
        LockedPackage("annotated-types", "0.7.0", 19),
        LockedPackage("typing-extensions", "4.15.0", 367),
    )
    assert lockfile.members == frozenset({"pydantic", "pydantic-core"})
    assert (lockfile.file, lockfile.manager, lockfile.ecosystem) == (
        "pydantic/uv.lock",
        "uv_lock",
        "pypi",
    )
    assert result.problems == ()
    assert result.dependencies == ()


def test_real_git_source_is_dropped_and_the_virtual_root_is_the_member() -> None:
    """The trimmed djangoproject lock drops its git package and names the virtual root."""
    lockfile = _lockfile(_extract("git-sourced"))
    assert [(p.name, p.version, p.line) for p in lockfile.packages] == [
        ("alabaster", "1.0.0", 6),
        ("asgiref", "3.12.1", 15),
    ]
    assert lockfile.members == frozenset({"djangoproject-com"})


def test_real_tiny_virtual_project_lock() -> None:
    """The 124-byte ty completion-eval lock has no packages and its project as member."""
    lockfile = _lockfile(_extract("virtual-root"))
    assert lockfile.packages == ()
    assert lockfile.members == frozenset({"test"})


def test_non_registry_sources_and_versionless_packages_are_dropped() -> None:
    """Directory, path, URL and versionless entries drop out; names are PEP 503 normalised."""
    lockfile = _lockfile(_extract("no-version"))
    assert lockfile.packages == (LockedPackage("typing-extensions", "4.15.0", 29),)
    assert lockfile.members == frozenset({"dynamic-project"})


def test_unknown_lock_version_is_a_warning_and_still_read() -> None:
    """A lock version other than 1 is a warning at its line, and packages are still read."""
    result = _extract("unknown-version")
    assert result.problems == (
        ManifestProblem(
            "uv.lock", 1, "unknown uv.lock version 2; reading it as far as possible", "warning"
        ),
    )
    assert _lockfile(result).packages == (LockedPackage("idna", "3.10", 6),)
    assert _lockfile(result).members is None


def test_invalid_toml_is_a_problem_with_the_parser_line() -> None:
    """An unclosed inline table is reported at tomllib's line, with no lockfile."""
    result = _extract("invalid-toml")
    assert result.problems == (
        ManifestProblem("uv.lock", 7, "invalid TOML: Unclosed inline table"),
    )
    assert result.lockfile is None


def test_package_that_is_not_an_array_is_a_problem() -> None:
    """A `package` string is a problem at its line and gives an empty lockfile."""
    result = _extract("wrong-types")
    assert [(p.line, p.message) for p in result.problems] == [
        (2, "`package` must be an array of tables")
    ]
    assert _lockfile(result).packages == ()


def test_empty_and_nul_files() -> None:
    """A 0-byte lock is an empty lockfile; NUL characters are a problem at their line."""
    empty = _extract("empty")
    assert empty.problems == ()
    assert _lockfile(empty).packages == ()
    assert _lockfile(empty).members is None
    assert [(p.line, p.message) for p in _extract("nul-bytes").problems] == [
        (4, "file contains NUL characters; not a text manifest")
    ]
