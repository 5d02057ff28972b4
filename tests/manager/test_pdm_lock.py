from __future__ import annotations

from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import pdm_lock
from patchula.models import ExtractResult, LockedPackage, Lockfile

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "pdm_lock"


def _no_read(path: str) -> str:
    raise ManifestError("lockfiles have no includes", file=path)


def _extract(case: str, path: str = "pdm.lock") -> ExtractResult:
    text = (FIXTURES / case / "pdm.lock").read_text(encoding="utf-8")
    return pdm_lock.extract(path, text, _no_read)


def _lockfile(result: ExtractResult) -> Lockfile:
    assert result.lockfile is not None
    return result.lockfile


@pytest.mark.parametrize(
    ("path", "expected"),
    [("pdm.lock", True), ("app/pdm.lock", True), ("pdm.lock.bak", False), ("uv.lock", False)],
)
def test_matches_pdm_lock_by_basename(path: str, *, expected: bool) -> None:
    """Only files named pdm.lock match."""
    assert pdm_lock.matches(path) is expected


def test_registry_packages_are_locked_once_and_local_vcs_editable_are_left_out() -> None:
    """A PDM 2 lock: index packages by normalised name, local, VCS and editable ones left out.

    The extras entry of httpx is httpx itself (one locked version).
    """
    result = _extract("real-pdm")
    assert result.problems == ()
    lockfile = _lockfile(result)
    assert (lockfile.manager, lockfile.ecosystem, lockfile.members) == ("pdm_lock", "pypi", None)
    assert lockfile.packages == (
        LockedPackage("certifi", "2024.2.2", 14),
        LockedPackage("httpx", "0.27.0", 24),
        LockedPackage("pytest-cov", "4.1.0", 52),
    )
    assert lockfile.groups == frozenset({"default", "dev", "socks"})


def test_invalid_toml_is_a_problem_with_its_line() -> None:
    """A broken lock is one error naming its line; no lockfile."""
    result = _extract("invalid-toml")
    assert result.lockfile is None
    [problem] = result.problems
    assert (problem.file, problem.line, problem.severity) == ("pdm.lock", 6, "error")


def test_an_unknown_lock_version_is_a_warning_and_the_rest_is_read() -> None:
    """lock_version 7.0 (a future PDM): warned at its line, packages still read."""
    result = _extract("future-lock")
    assert [(p.line, p.severity, p.message) for p in result.problems] == [
        (2, "warning", "unknown pdm.lock lock_version '7.0'; reading it as far as possible")
    ]
    assert _lockfile(result).packages == (LockedPackage("certifi", "2024.2.2", 5),)


def test_wrong_types_are_skipped_and_groups_unknown() -> None:
    """A non-string name or a missing version is no package; a groups string is no list."""
    result = _extract("wrong-types")
    lockfile = _lockfile(result)
    assert lockfile.packages == (LockedPackage("ok", "1.0", 10),)
    assert lockfile.groups is None
