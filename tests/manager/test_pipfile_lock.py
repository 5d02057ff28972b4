from __future__ import annotations

from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import pipfile_lock
from patchula.models import ExtractResult, LockedPackage, Lockfile

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "pipfile_lock"


def _no_read(path: str) -> str:
    raise ManifestError("lockfiles have no includes", file=path)


def _extract(case: str, path: str = "Pipfile.lock") -> ExtractResult:
    text = (FIXTURES / case / "Pipfile.lock").read_text(encoding="utf-8")
    return pipfile_lock.extract(path, text, _no_read)


def _lockfile(result: ExtractResult) -> Lockfile:
    assert result.lockfile is not None
    return result.lockfile


def _problems(result: ExtractResult) -> list[tuple[int | None, str, str]]:
    return [(p.line, p.severity, p.message) for p in result.problems]


@pytest.mark.parametrize(
    ("path", "expected"),
    [("Pipfile.lock", True), ("examples/Pipfile.lock", True), ("Pipfile", False)],
)
def test_matches_pipfile_lock_by_basename(path: str, *, expected: bool) -> None:
    """Only files named ``Pipfile.lock`` match."""
    assert pipfile_lock.matches(path) is expected


def test_real_pipenv_lock_reads_default_and_develop_pins() -> None:
    """pypa/pipenv's lock (trimmed): every ``==`` pin of both categories, with its line."""
    lock = _lockfile(_extract("pipenv-root"))
    assert (lock.manager, lock.ecosystem, lock.members) == ("pipfile_lock", "pypi", None)
    versions = {(p.name, p.version) for p in lock.packages}
    assert ("pytz", "2026.1.post1") in versions
    assert ("click", "8.0.3") in versions
    # default and develop may pin one package differently; both are kept.
    assert {v for n, v in versions if n == "exceptiongroup"} == {"1.3.1", "1.1.0"}
    assert lock.packages[0] == LockedPackage("exceptiongroup", "1.3.1", 17, group="packages")
    assert {p.group for p in lock.packages} == {"packages", "dev-packages"}
    assert len(lock.packages) == 21


def test_vcs_path_file_and_editable_entries_are_left_out() -> None:
    """Entries installed from git, a path or a file are not registry pins; custom categories are."""
    result = _extract("vcs-and-editable")
    assert result.problems == ()
    assert _lockfile(result).packages == (
        LockedPackage("certifi", "2024.8.30", 30, group="packages"),
        LockedPackage("charset-normalizer", "3.4.0", 38, group="packages"),
        LockedPackage("sphinx", "8.1.3", 48, group="docs"),
    )
    # `_meta.requires` (pipenv's copy of the Pipfile's [requires]): locked for Python 3.11.
    assert _lockfile(result).requires_python == "==3.11.*"


def test_meta_requires_names_the_python_of_the_lock() -> None:
    """``_meta.requires`` gives the lock's Python; an invalid one is a problem at its line."""
    text = (
        '{\n  "_meta": {\n    "requires": {\n      "python_full_version": "3.8.10"\n    }\n  },\n'
        '  "default": {}\n}\n'
    )
    assert _lockfile(pipfile_lock.extract("Pipfile.lock", text, _no_read)).requires_python == (
        "==3.8.10"
    )
    bad = text.replace('"3.8.10"', '"3.8.x"')
    result = pipfile_lock.extract("Pipfile.lock", bad, _no_read)
    assert _lockfile(result).requires_python is None
    assert _problems(result) == [(4, "error", "invalid `requires.python_full_version` '3.8.x'")]
    empty = _extract("pipenv-root")  # "requires": {}
    assert _lockfile(empty).requires_python is None


def test_unknown_pipfile_spec_is_a_warning_and_the_file_is_read() -> None:
    """A ``pipfile-spec`` other than 6 warns at its line; the pins are still used."""
    result = _extract("unknown-spec")
    assert _problems(result) == [
        (3, "warning", "unknown pipfile-spec 7; reading it as far as possible")
    ]
    assert _lockfile(result).packages == (LockedPackage("six", "1.16.0", 7, group="packages"),)


def test_wrong_types_are_problems_and_the_rest_is_read() -> None:
    """A category or entry that is not an object is a problem at its line."""
    result = _extract("wrong-types")
    assert _problems(result) == [
        (5, "error", "`default` must be an object, got an array"),
        (9, "error", "`develop.attrs` must be an object, got a string"),
    ]
    assert _lockfile(result).packages == (
        LockedPackage("pluggy", "1.5.0", 10, group="dev-packages"),
    )


def test_invalid_json_is_a_problem_without_a_lockfile() -> None:
    """A truncated lock gives the decoder's line and no lockfile (current comes from ranges)."""
    result = _extract("not-json")
    assert result.lockfile is None
    assert [p.line for p in result.problems] == [7]
