from __future__ import annotations

from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import pipfile
from patchula.models import ExtractResult

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "pipfile"


def _no_read(path: str) -> str:
    raise ManifestError("Pipfile has no includes", file=path)


def _extract(case: str, path: str = "Pipfile") -> ExtractResult:
    text = (FIXTURES / case / "Pipfile").read_text(encoding="utf-8")
    return pipfile.extract(path, text, _no_read)


def _rows(result: ExtractResult) -> list[tuple[int | None, str, str, str | None]]:
    return [(d.line, d.dep_type, d.name, d.constraint) for d in result.dependencies]


def _problems(result: ExtractResult) -> list[tuple[int | None, str, str]]:
    return [(p.line, p.severity, p.message) for p in result.problems]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("Pipfile", True),
        ("examples/Pipfile", True),
        ("Pipfile.lock", False),
        ("pipfile", False),
        ("Pipfile.bak", False),
    ],
)
def test_matches_pipfile_by_basename(path: str, *, expected: bool) -> None:
    """Only files named exactly ``Pipfile`` match (pipenv's name)."""
    assert pipfile.matches(path) is expected


def test_real_pipenv_pipfile_reads_every_root_entry() -> None:
    """pypa/pipenv's own Pipfile: 26 dev-packages and 1 package, markers from marker keys."""
    result = _extract("pipenv-root")
    assert result.problems == ()
    assert len(result.dependencies) == 27
    deps = {d.name: d for d in result.dependencies}
    assert (deps["pytz"].line, deps["pytz"].dep_type, deps["pytz"].constraint) == (
        35,
        "packages",
        None,
    )
    click = deps["click"]
    assert (click.line, click.dep_type, click.declared, click.constraint) == (
        12,
        "dev-packages",
        "==8.0.3",
        "==8.0.3",
    )
    assert (deps["waitress"].declared, deps["waitress"].constraint) == ("3.*", "==3.*")
    assert deps["waitress"].markers == 'sys_platform == "win32"'
    assert deps["legacy-cgi"].markers == 'python_version >= "3.13"'
    assert all(d.skip_reason is None for d in result.dependencies)


def test_custom_categories_are_dep_types_and_non_package_tables_are_not_rows() -> None:
    """``[docs]`` is a category; ``[requires]``, ``[scripts]`` and ``[[source]]`` are not."""
    result = _extract("custom-categories")
    assert result.problems == ()
    assert _rows(result) == [
        (7, "packages", "requests", None),
        (8, "packages", "Django", "==4.2.*"),
        (9, "packages", "zope.interface", "<7,>=6.0"),
        (12, "dev-packages", "pytest", "==8.3.3"),
        (15, "docs", "sphinx", ">=7"),
        (16, "docs", "furo", "==2024.8.6"),
    ]
    assert {d.package_name for d in result.dependencies} >= {"django", "zope-interface"}
    assert result.dependencies[4].markers == 'python_version >= "3.9"'
    # Its [requires] python_version = "3.11": every row is judged for Python 3.11.
    assert {d.requires_python for d in result.dependencies} == {"==3.11.*"}


def test_vcs_path_file_and_editable_packages_are_skipped_with_the_reason() -> None:
    """git, path, file (URL or local) and editable tables are not looked up; versions are."""
    result = _extract("vcs-path-file-editable")
    skips = {d.name: (d.declared, d.skip_reason) for d in result.dependencies}
    assert skips == {
        "fake_package": (".", "local path"),
        "requests": ("https://github.com/psf/requests.git", "VCS requirement"),
        "wheel-pkg": (
            "https://example.com/packages/wheel_pkg-1.0-py3-none-any.whl",
            "direct URL reference",
        ),
        "local-sdist": ("./vendor/local_sdist-0.1.tar.gz", "local path"),
        "myst-parser": ("*", None),
        "stdeb": ("*", None),
    }


def test_wrong_types_are_problems_at_their_lines_and_the_rest_is_read() -> None:
    """Non-string values, invalid versions and names are problems; good packages stay rows."""
    result = _extract("wrong-types")
    assert _rows(result) == [(4, "packages", "good", ">=1"), (9, "packages", "also-good", None)]
    assert _problems(result) == [
        (1, "error", "`scripts_typo` must be a table"),
        (5, "error", "package 'number' in `packages` must be a string or a table"),
        (6, "error", "package 'listed' in `packages` must be a string or a table"),
        (7, "error", "invalid version '>>1' for 'bad-spec': not a valid PEP 440 specifier: '>>1'"),
        (8, "error", "invalid package name 'not a name!' in `packages`"),
    ]


def test_a_private_source_is_a_warning_naming_it_without_its_url() -> None:
    """A non-PyPI ``[[source]]`` is noted once, by name; its URL (credentials) never appears."""
    result = _extract("private-source")
    assert _rows(result) == [
        (12, "packages", "requests", None),
        (13, "packages", "corp-utils", "==2.1.0"),
    ]
    assert _problems(result) == [
        (
            6,
            "warning",
            (
                "package source 'corp' is not used for lookups: packages are looked up on the "
                "configured PyPI base (--registry pypi=URL or PIP_INDEX_URL)"
            ),
        )
    ]
    assert "ARTIFACTORY" not in repr(result)


def test_empty_and_invalid_toml() -> None:
    """An empty Pipfile gives nothing; invalid TOML is one problem with the parser's line."""
    assert _extract("empty") == ExtractResult()
    assert _problems(_extract("invalid-toml")) == [(3, "error", "invalid TOML: Invalid value")]


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("*", None),
        ("", None),
        (">=2.7.0", ">=2.7.0"),
        ("==4.*", "==4.*"),
        ("3.*", "==3.*"),
        ("1.2.3", "==1.2.3"),
        ("~=1.4", "~=1.4"),
    ],
)
def test_pipenv_specifier_to_pep440(version: str, expected: str | None) -> None:
    """``*`` is any version, operators are kept, a bare version is ``==`` as pipenv reads it."""
    assert pipfile.pipenv_specifier(version) == expected


@pytest.mark.parametrize(
    ("setting", "expected"), [("true", True), ("false", False), ('"yes"', False)]
)
def test_allow_prereleases_opts_every_package_in(setting: str, *, expected: bool) -> None:
    """``[pipenv] allow_prereleases = true`` (pipenv installs with --pre) opts every row in."""
    text = (
        '[packages]\nhttpx = "*"\n[dev-packages]\npytest = ">=8"\n'
        f"[pipenv]\nallow_prereleases = {setting}\n"
    )
    result = pipfile.extract("Pipfile", text, _no_read)
    assert [(d.name, d.prereleases) for d in result.dependencies] == [
        ("httpx", expected),
        ("pytest", expected),
    ]


def test_a_key_with_extras_is_the_package_with_those_extras() -> None:
    """``"splinter[django]"`` is splinter with extra django (pipenv passes the key to pip).

    A table's ``extras`` list joins them; a key pip cannot read stays a problem at its line.
    """
    text = (
        "[packages]\n"
        '"splinter[django]" = "==3.43.1"\n'
        '"requests[ socks , security ]" = "*"\n'
        'pytest-benchmark = {version = "==1.0.0", extras = ["histogram"]}\n'
        '"both[a]" = {version = ">=1", extras = ["b", "a"]}\n'
        '"requests[django][security]" = "==1.1.1"\n'
        '"bad[not an extra!]" = "*"\n'
    )
    result = pipfile.extract("Pipfile", text, _no_read)
    assert [
        (d.line, d.name, d.package_name, d.extras, d.constraint) for d in result.dependencies
    ] == [
        (2, "splinter", "splinter", ("django",), "==3.43.1"),
        (3, "requests", "requests", ("security", "socks"), None),
        (4, "pytest-benchmark", "pytest-benchmark", ("histogram",), "==1.0.0"),
        (5, "both", "both", ("a", "b"), ">=1"),
    ]
    assert _problems(result) == [
        (6, "error", "invalid package name 'requests[django][security]' in `packages`"),
        (7, "error", "invalid package name 'bad[not an extra!]' in `packages`"),
    ]


@pytest.mark.parametrize(
    ("requires", "expected", "problems"),
    [
        ('python_version = "3.8"', "==3.8.*", []),
        ('python_full_version = "3.8.10"', "==3.8.10", []),
        # pipenv takes the full version first (Project.required_python_version).
        ('python_version = "3.8"\npython_full_version = "3.9.1"', "==3.9.1", []),
        ('python_version = ">=3.9"', ">=3.9", []),
        ('python_version = "*"', None, []),
        (
            'python_version = "three"',
            None,
            [(4, "error", "invalid `requires.python_version` 'three'")],
        ),
        ("python_version = 3.8", None, [(4, "error", "invalid `requires.python_version` 3.8")]),
        ("", None, []),
    ],
)
def test_requires_python_bounds_every_row(
    requires: str, expected: str | None, problems: list[tuple[int, str, str]]
) -> None:
    """``[requires]`` names the Python pipenv deploys on: every row's ``requires_python``."""
    text = f'[packages]\nzipp = ">=3"\n[requires]\n{requires}\n[dev-packages]\npytest = "*"\n'
    result = pipfile.extract("Pipfile", text, _no_read)
    assert [(d.name, d.requires_python) for d in result.dependencies] == [
        ("zipp", expected),
        ("pytest", expected),
    ]
    assert _problems(result) == problems
